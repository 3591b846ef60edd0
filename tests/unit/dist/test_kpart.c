/* test_kpart.c: host graph parts (keci.h) against the whole graph: on the scp traces
 * (../shared/data/ctf scp_dest + scp_src; skipped when absent), each host's part built
 * alone (a partial build with the whole match, as each rank of `dist kcp` builds it),
 * packed, and all parts assembled give the graph lp_kgraph_build makes of both traces:
 * the same workers (names, order), vertices (times, states, reasons), links (as a set)
 * and unmatched keys; one part alone gives that host's slice with no network link; a
 * damaged part is refused. */
#include "t.h"
#include "longpole/dist/keci.h"
#include "longpole/base/alloc.h"

#include <sys/stat.h>

typedef struct trip {
    int64_t tf, tt;
    uint32_t kind;
} trip;

static int trip_cmp(const void *a, const void *b)
{
    const trip *x = a, *y = b;
    if (x->tf != y->tf)
        return x->tf < y->tf ? -1 : 1;
    if (x->tt != y->tt)
        return x->tt < y->tt ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

/* Links as (from time, to time, kind) sorted: link order is the builder's own. */
static trip *links_of(const lp_kgraph *g)
{
    trip *t = lp_calloc(g->nlinks ? g->nlinks : 1, sizeof *t);
    for (uint32_t l = 0; l < g->nlinks; l++)
        t[l].tf = g->vt[g->lfrom[l]], t[l].tt = g->vt[g->lto[l]], t[l].kind = g->lkind[l];
    qsort(t, g->nlinks, sizeof *t, trip_cmp);
    return t;
}

/* Host h of kt alone (the others named, without events), built partially. */
static lp_status part_of(const lp_ktrace *kt, const lp_kmatch *m, uint32_t h, lp_dbuf *out)
{
    lp_ktrace *one;
    lp_status st = lp_keci_ktrace_new(kt->nhosts, &one, NULL);
    lp_dbuf b = {0};
    st = st ? st : lp_keci_pack_host(kt, h, h, 0, &b, NULL);
    lp_drd r = lp_drd_init(b.p, b.n);
    uint32_t got;
    st = st ? st : lp_keci_unpack_host(&r, one, &got, NULL, NULL, NULL);
    for (uint32_t x = 0; !st && x < kt->nhosts; x++)
        if (x != h) {
            const char *nm = lp_strtab_get(&kt->strs, kt->host[x].name);
            lp_strtab_intern(&one->strs, nm, strlen(nm), &one->host[x].name);
        }
    uint32_t *sv = lp_malloc((m->npk + 1) * 4), *tv = lp_malloc((m->npk + 1) * 4);
    lp_kgraph_opts go = {.partial = 1, .pk_send_v = sv, .pk_target_v = tv};
    lp_kgraph *g = NULL;
    st = st ? st : lp_kgraph_build(one, m, &go, NULL, &g, NULL);
    st = st ? st : lp_keci_pack_part(g, h, m, sv, tv, out, NULL);
    lp_kgraph_free(g);
    lp_free(sv);
    lp_free(tv);
    lp_dbuf_release(&b);
    lp_ktrace_free(one);
    return st;
}

int main(void)
{
    const char *paths[] = {LP_SOURCE_DIR "/../shared/data/ctf/scp_dest", LP_SOURCE_DIR "/../shared/data/ctf/scp_src"};
    struct stat sb;
    if (stat(paths[1], &sb) != 0) {
        printf("skip: %s is absent\n", paths[1]);
        return 77;
    }
    lp_ktrace *kt;
    lp_error err;
    if (lp_ktrace_read(paths, 2, NULL, &kt, &err)) {
        printf("skip: %s\n", err.msg);
        return 77;
    }
    lp_kmatch m;
    CHECK_EQ_I(lp_kmatch_run(kt, &m, NULL), LP_OK);
    lp_kgraph *whole = NULL, *asm_g = NULL;
    CHECK_EQ_I(lp_kgraph_build(kt, &m, NULL, NULL, &whole, NULL), LP_OK);
    lp_dbuf parts[2] = {{0}, {0}};
    CHECK_EQ_I(part_of(kt, &m, 0, &parts[0]), LP_OK);
    CHECK_EQ_I(part_of(kt, &m, 1, &parts[1]), LP_OK);
    const char *names[2] = {lp_strtab_get(&kt->strs, kt->host[0].name), lp_strtab_get(&kt->strs, kt->host[1].name)};
    uint32_t *tv = lp_malloc((m.npk + 1) * 4);
    CHECK_EQ_I(lp_keci_assemble(2, names, parts, &m, 1, &asm_g, tv, &err), LP_OK);
    if (whole && asm_g) {
        CHECK_EQ_I(asm_g->nworkers, whole->nworkers);
        CHECK_EQ_I(asm_g->nv, whole->nv);
        CHECK_EQ_I(asm_g->nlinks, whole->nlinks);
        CHECK_EQ_I(asm_g->npk, whole->npk);
        CHECK(asm_g->nlinks > 500); /* scp: 591 links, 46 of them packets */
        int same_w = asm_g->nworkers == whole->nworkers, same_v = asm_g->nv == whole->nv;
        for (uint32_t w = 0; same_w && w < whole->nworkers; w++)
            same_w = strcmp(lp_kgraph_worker_name(asm_g, w), lp_kgraph_worker_name(whole, w)) == 0 &&
                     asm_g->voff[w + 1] == whole->voff[w + 1];
        CHECK(same_w);
        if (same_v)
            same_v = !memcmp(asm_g->vt, whole->vt, whole->nv * 8ull) && !memcmp(asm_g->vstate, whole->vstate, whole->nv) &&
                     !memcmp(asm_g->vreason, whole->vreason, whole->nv);
        CHECK(same_v);
        if (asm_g->nlinks == whole->nlinks) {
            trip *a = links_of(asm_g), *b = links_of(whole);
            uint32_t diff = 0;
            for (uint32_t l = 0; l < whole->nlinks; l++)
                diff += a[l].tf != b[l].tf || a[l].tt != b[l].tt || a[l].kind != b[l].kind;
            CHECK_EQ_I(diff, 0);
            lp_free(a);
            lp_free(b);
        }
    }
    lp_kgraph_free(asm_g);
    asm_g = NULL;
    /* one part alone: that host's slice, no network link */
    lp_dbuf only[2] = {{0}, parts[1]};
    CHECK_EQ_I(lp_keci_assemble(2, names, only, &m, 1, &asm_g, tv, NULL), LP_OK);
    if (asm_g) {
        uint32_t net = 0;
        for (uint32_t l = 0; l < asm_g->nlinks; l++)
            net += asm_g->lkind[l] == LP_KL_NETWORK;
        CHECK_EQ_I(net, 0);
        CHECK(asm_g->nworkers > 0 && asm_g->nworkers < whole->nworkers);
    }
    lp_kgraph_free(asm_g);
    /* a damaged part */
    if (parts[1].n > 64) {
        parts[1].n -= 5;
        lp_kgraph *g2 = NULL;
        CHECK_EQ_I(lp_keci_assemble(2, names, parts, &m, 1, &g2, NULL, NULL), LP_ERR_FORMAT);
        CHECK(g2 == NULL);
        parts[1].n += 5;
    }
    lp_free(tv);
    lp_dbuf_release(&parts[0]);
    lp_dbuf_release(&parts[1]);
    lp_kgraph_free(whole);
    lp_kmatch_release(&m);
    lp_ktrace_free(kt);
    return t_done("kpart");
}
