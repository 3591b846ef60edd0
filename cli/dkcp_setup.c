/* dkcp_setup.c: the set-up of `dist kcp` under AL2/AL3 (dkcp.h, docs/distributed.md
 * "What moves"): every rank reads its own hosts' traces; the ECIs (skeletons) are
 * gathered at rank 0, which matches the packets and synchronises the clocks over them
 * (lp_keci_match: the single-process answer); the match goes back to every rank, which
 * builds the graph of its own hosts (a partial build: each host's part exactly as in the
 * whole graph) and sends rank 0 its figures (workers, vertices, links, keys, counts),
 * the times of its packets' ends (the network links' fate is decided at rank 0 as the
 * single-process build decides it) and where the query's thread is.
 */
#include "dkcp.h"
#include "longpole/base/alloc.h"

#include <string.h>

int dk_host_is_mine(const dkcp *k, uint32_t h) { return lp_dist_owner(h, k->D->size) == k->D->rank; }

static int nomem(dkcp *k)
{
    cli_dist_err(k->D, "out of memory");
    return LP_EXIT_NOMEM;
}

/* Move host 0 of src into dst->host[index] (strings re-interned). */
static int move_host(dkcp *k, lp_ktrace *src, uint32_t index)
{
    lp_dbuf b = {0};
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_keci_pack_host(src, 0, index, 0, &b, &err);
    uint32_t got;
    if (!st) {
        lp_drd r = lp_drd_init(b.p, b.n);
        st = lp_keci_unpack_host(&r, k->own, &got, NULL, NULL, &err);
    }
    lp_dbuf_release(&b);
    return st ? cli_dist_fail(k->D, &err) : 0;
}

/* Read this rank's hosts, one trace each. */
static int read_own(dkcp *k)
{
    lp_error err;
    lp_error_clear(&err);
    for (uint32_t h = 0; h < k->nh; h++) {
        if (!dk_host_is_mine(k, h))
            continue;
        lp_diags ds;
        lp_diags_init(&ds, 0);
        lp_ktrace *kt = NULL;
        const char *p = k->paths[h];
        lp_status st = lp_ktrace_read((const char *const *)&p, 1, &ds, &kt, &err);
        k->read_errors += ds.nerrors, k->read_warnings += ds.nwarnings;
        lp_diags_release(&ds);
        int rc = 0;
        if (st) {
            cli_dist_err(k->D, "host trace %u '%s': %s", h, p, err.msg);
            rc = cli_exit_for(st);
        } else if (kt->nhosts != 1) {
            cli_dist_err(k->D, "host trace %u '%s' holds %u hosts: `dist kcp` takes one trace per host", h, p,
                         kt->nhosts);
            rc = LP_EXIT_USAGE;
        } else {
            rc = move_host(k, kt, h);
        }
        lp_ktrace_free(kt);
        if (rc)
            return rc;
    }
    return 0;
}

/* AL2's index: the key of every send of this rank's hosts (in kt: their events or their
 * ECIs, which hold every send). */
int dk_index_keys(dkcp *k, const lp_ktrace *kt)
{
    for (uint32_t h = 0; h < k->nh; h++)
        for (uint64_t i = 0; dk_host_is_mine(k, h) && i < kt->host[h].nev; i++) {
            const lp_kev *e = &kt->host[h].ev[i];
            uint64_t old;
            if (e->type != LP_KEV_NET_SEND || lp_hmap_get(&k->keys, lp_keci_key(e), &old))
                continue;
            if (lp_hmap_put(&k->keys, lp_keci_key(e), h, NULL))
                return nomem(k);
        }
    return 0;
}

/* This rank's hosts: their ECIs from its index (--index, when it has one that fits its
 * traces), or their traces read. */
static int own_input(dkcp *k)
{
    lp_error err;
    lp_error_clear(&err);
    if (lp_keci_ktrace_new(k->nh, &k->own, &err))
        return cli_dist_fail(k->D, &err);
    int rc = k->index_dir ? dk_idx_open(k) : -1;
    if (rc == 0)
        return dk_idx_own(k);
    if (rc > 0)
        return rc;
    if (!(rc = read_own(k)))
        rc = dk_index_keys(k, k->own);
    return rc;
}

/* The ECIs at rank 0, merged: skeletons unpacked, packets matched. */
static int merge_ecis(dkcp *k, const void *all, size_t total)
{
    lp_error err;
    lp_error_clear(&err);
    if (lp_keci_ktrace_new(k->nh, &k->skel, &err))
        return cli_dist_fail(k->D, &err);
    k->orig = lp_calloc(k->nh, sizeof *k->orig);
    k->nev_read = lp_calloc(k->nh, sizeof *k->nev_read);
    if (!k->orig || !k->nev_read)
        return nomem(k);
    lp_drd r = lp_drd_init(all, total);
    uint32_t got = 0;
    while (r.off < r.n) {
        uint32_t h;
        uint64_t *o, nev;
        if (lp_keci_unpack_host(&r, k->skel, &h, &o, &nev, &err))
            return cli_dist_fail(k->D, &err);
        k->orig[h] = o, k->nev_read[h] = nev;
        got++;
    }
    if (got != k->nh) {
        cli_dist_err(k->D, "%u ECIs gathered for %u hosts", got, k->nh);
        return LP_EXIT_INTERNAL;
    }
    if (lp_keci_match(k->skel, k->orig, &k->m, &err))
        return cli_dist_fail(k->D, &err);
    k->have_m = 1;
    return 0;
}

/* Step 1-2: read, ECIs to rank 0, merge, the match and host names to every rank. */
static int eci_step(dkcp *k)
{
    lp_error err;
    lp_error_clear(&err);
    int who, rc = own_input(k);
    if ((rc = cli_dist_agree(k->D, rc, &who))) {
        if (k->D->rank == 0 && who != 0)
            cli_dist_err(k->D, "rank %d could not read its host trace%s (its message above says which); no path", who,
                         k->index_dir ? " or its index" : "");
        return rc;
    }
    double c0 = lp_dist_cpu_seconds();
    lp_dbuf b = {0};
    if (k->idx == DK_IDX_OPEN)
        lp_dbuf_put(&b, k->side.eci, k->side.neci);
    for (uint32_t h = 0; k->idx != DK_IDX_OPEN && h < k->nh; h++)
        if (dk_host_is_mine(k, h) && lp_keci_pack_host(k->own, h, h, 1, &b, &err))
            break;
    void *all = NULL;
    size_t *lens = lp_calloc((size_t)k->D->size, sizeof *lens);
    if (b.fail || !lens || err.msg[0])
        rc = nomem(k);
    else if (lp_dist_gather(k->D->d, 0, b.p, b.n, &all, lens, &err))
        rc = cli_dist_fail(k->D, &err);
    if (k->index_dir && k->idx != DK_IDX_OPEN) { /* kept, to be written with the index */
        k->eci = b;
        memset(&b, 0, sizeof b);
    }
    lp_dbuf_release(&b);
    size_t total = 0;
    for (int r = 0; !rc && k->D->rank == 0 && r < k->D->size; r++)
        total += lens[r];
    lp_free(lens);
    if (!rc && k->D->rank == 0)
        rc = merge_ecis(k, all, total);
    lp_free(all);
    k->cpu_eci = lp_dist_cpu_seconds() - c0;
    if ((rc = cli_dist_agree(k->D, rc, NULL)))
        return rc;
    /* the match and the host names, to every rank */
    lp_dbuf mb = {0};
    if (k->D->rank == 0) {
        lp_keci_pack_match(&k->m, k->nh, &mb);
        for (uint32_t h = 0; h < k->nh; h++)
            lp_dbuf_str(&mb, lp_strtab_get(&k->skel->strs, k->skel->host[h].name));
        if (mb.fail)
            rc = nomem(k);
    }
    void *p = mb.p;
    size_t n = mb.n;
    if (!rc && lp_dist_bcast(k->D->d, 0, &p, &n, &err))
        rc = cli_dist_fail(k->D, &err);
    if (!rc)
        k->digest = lp_hash_mix(lp_hash_mix(lp_hash_bytes(p, n), k->nh),
                                (uint64_t)k->no_sync | (uint64_t)k->D->size << 8 | (uint64_t)k->D->rank << 32);
    if (!rc && k->D->rank != 0) {
        lp_drd r = lp_drd_init(p, n);
        if (lp_keci_unpack_match(&r, k->nh, &k->m, &err))
            rc = cli_dist_fail(k->D, &err);
        else
            k->have_m = 1;
        for (uint32_t h = 0; !rc && h < k->nh; h++) {
            uint32_t len;
            const char *s = lp_drd_str(&r, &len);
            if (!s)
                rc = LP_EXIT_INTERNAL;
            else if (!dk_host_is_mine(k, h) && lp_strtab_intern(&k->own->strs, s, len, &k->own->host[h].name))
                rc = nomem(k);
        }
        lp_free(p);
    } else if (!rc) {
        for (uint32_t h = 0; h < k->nh; h++) /* rank 0: names of the hosts it does not own */
            if (!dk_host_is_mine(k, h)) {
                const char *s = lp_strtab_get(&k->skel->strs, k->skel->host[h].name);
                if (lp_strtab_intern(&k->own->strs, s, strlen(s), &k->own->host[h].name))
                    rc = nomem(k);
            }
    }
    lp_dbuf_release(&mb);
    return cli_dist_agree(k->D, rc, NULL);
}

/* The warnings lp_kgraph_build reports for packet counts (kgraph_build.c). */
static uint64_t packet_warnings(const lp_kgraph_stats *s)
{
    return (s->npk_bad > 0) + (s->npk_skew > 0) + (s->npk_skew > 1) + (s->npk_noendpoint > 0) + (s->npk_dup > 0);
}

/* The graph of this rank's hosts with the whole match, and the vertices of the packets'
 * ends in it (sv, tv: [m.npk]): its index's if it was built with this very match
 * (--index), else built from the traces (read again if the index was built with another
 * match), and then written when --index asks for it. */
static int own_graph(dkcp *k, lp_kgraph **g, uint32_t *sv, uint32_t *tv)
{
    lp_error err;
    lp_error_clear(&err);
    if (k->idx == DK_IDX_OPEN && k->side.digest == k->digest && k->side.npk == k->m.npk) {
        *g = k->idx_g;
        k->idx_g = NULL;
        memcpy(sv, k->side.sv, k->m.npk * 4);
        memcpy(tv, k->side.tv, k->m.npk * 4);
        k->build_errors = k->side.fig[2], k->build_warnings = k->side.fig[3];
        k->idx = DK_IDX_USED;
        return 0;
    }
    int rc = 0;
    if (k->idx == DK_IDX_OPEN) { /* built with another match: the traces again */
        cli_dist_err(k->D, "the index '%s' was built with another match of packets (another host's trace changed): "
                           "reading this rank's traces to rebuild it", k->idx_path);
        k->idx = DK_IDX_REBUILT;
        lp_kgraph_free(k->idx_g);
        k->idx_g = NULL;
        lp_dbuf_put(&k->eci, k->side.eci, k->side.neci);
        k->read_errors = k->read_warnings = 0;
        if ((rc = read_own(k)))
            return rc;
    }
    lp_kgraph_opts go = {.no_sync = k->no_sync, .partial = 1, .pk_send_v = sv, .pk_target_v = tv};
    lp_diags ds;
    lp_diags_init(&ds, 0);
    lp_status st = lp_kgraph_build(k->own, &k->m, &go, &ds, g, &err);
    k->build_errors = ds.nerrors, k->build_warnings = ds.nwarnings;
    lp_diags_release(&ds);
    if (st)
        return cli_dist_fail(k->D, &err);
    if (k->index_dir && k->idx_path) {
        if (k->idx != DK_IDX_REBUILT)
            k->idx = DK_IDX_WRITTEN;
        if (k->eci.fail)
            return nomem(k);
        rc = dk_idx_write(k, *g, sv, tv);
    }
    return rc;
}

/* Step 3: this rank's part of the graph, and what rank 0 needs of it. */
static int part_step(dkcp *k, lp_dbuf *out)
{
    lp_error err;
    lp_error_clear(&err);
    uint64_t npk = k->m.npk;
    uint32_t *sv = lp_malloc((npk ? npk : 1) * 4), *tv = lp_malloc((npk ? npk : 1) * 4);
    if (!sv || !tv) {
        lp_free(sv);
        lp_free(tv);
        return nomem(k);
    }
    lp_kgraph *g = NULL;
    int rc = own_graph(k, &g, sv, tv);
    if (!rc) {
        lp_kgraph_stats s = g->st;
        uint64_t warn = k->read_warnings + k->build_warnings - packet_warnings(&s);
        s.npk_linked = s.npk_skew = s.npk_noendpoint = s.npk_dup = s.npk_bad = 0;
        uint64_t fig[] = {g->nworkers, g->nv, g->nlinks - g->st.npk_linked, g->npk, k->read_errors + k->build_errors,
                          warn};
        lp_dbuf_put(out, fig, sizeof fig);
        lp_dbuf_put(out, &s, sizeof s);
        for (uint32_t h = 0; h < k->nh; h++) {
            if (!dk_host_is_mine(k, h))
                continue;
            uint32_t w, v = 1;
            lp_error e2;
            lp_error_clear(&e2);
            const char *hn = lp_kgraph_str(g, g->host[h]);
            if (k->host && strcmp(k->host, hn) != 0)
                v = 0;
            else if (lp_kgraph_find_thread(g, k->thread, hn, &w, &e2))
                v = strncmp(e2.msg, "no thread", 9) == 0 ? 0 : 2;
            lp_dbuf_u32(out, h);
            lp_dbuf_u32(out, v);
        }
        lp_dbuf_u32(out, UINT32_MAX);
        for (uint64_t p = 0; p < npk; p++) { /* the ends of packets on this rank's hosts */
            const lp_kpacket *pk = &k->m.pk[p];
            for (int end = 0; end < 2; end++) {
                uint32_t h = end ? pk->rhost : pk->shost, vx = end ? tv[p] : sv[p];
                if (h >= k->nh || !dk_host_is_mine(k, h))
                    continue;
                int64_t t = vx == LP_NONE32 ? INT64_MIN : g->vt[vx];
                lp_dbuf_u64(out, p * 2 + (uint64_t)end);
                lp_dbuf_put(out, &t, 8);
            }
        }
        if (out->fail)
            rc = nomem(k);
    }
    k->own_g = g, k->own_sv = sv, k->own_tv = tv; /* kept: the parts requests ask for */
    return rc;
}

static void add_stats(lp_kgraph_stats *a, const lp_kgraph_stats *b)
{
    uint64_t d[sizeof *a / 8], s[sizeof *a / 8];
    memcpy(d, a, sizeof *a);
    memcpy(s, b, sizeof *b);
    for (size_t i = 0; i < sizeof *a / 8; i++)
        d[i] += s[i];
    memcpy(a, d, sizeof *a);
}

/* Rank 0: the network links decided from the packets' end times as lp_kgraph_build
 * decides them (duplicates dropped, an end without context: no link, received no later
 * than sent: dropped), into the totals' packet counts and links. */
static int decide_links(dkcp *k, const int64_t *ts)
{
    lp_hmap seen = {0};
    lp_kgraph_stats *s = &k->tot.st;
    for (uint64_t p = 0; p < k->m.npk; p++) {
        const lp_kpacket *pk = &k->m.pk[p];
        uint64_t a = (uint64_t)pk->shost << 48 | pk->sev * 2, b = (uint64_t)pk->rhost << 48 | (pk->rev * 2 + 1), old;
        if (lp_hmap_get(&seen, a, &old) || lp_hmap_get(&seen, b, &old)) {
            s->npk_dup++;
            continue;
        }
        if (lp_hmap_put(&seen, a, p, NULL) || lp_hmap_put(&seen, b, p, NULL)) {
            lp_hmap_release(&seen);
            return nomem(k);
        }
        int64_t t0 = ts[p * 2], t1 = ts[p * 2 + 1];
        if (t0 == INT64_MIN || t1 == INT64_MIN)
            s->npk_noendpoint++;
        else if (t1 <= t0)
            s->npk_skew++;
        else
            s->npk_linked++;
    }
    lp_hmap_release(&seen);
    k->tot.nlinks += s->npk_linked;
    k->tot.diag_warnings += packet_warnings(s);
    return 0;
}

/* Rank 0: one rank's block of figures (part_step). */
static int sum_block(dkcp *k, lp_drd *r, int64_t *ts)
{
    uint64_t fig[6];
    lp_kgraph_stats s;
    const void *a = lp_drd_get(r, sizeof fig), *b = lp_drd_get(r, sizeof s);
    if (!a || !b)
        return -1;
    memcpy(fig, a, sizeof fig);
    memcpy(&s, b, sizeof s);
    dk_totals *t = &k->tot;
    t->nworkers += fig[0], t->nv += fig[1], t->nlinks += fig[2], t->npk += fig[3];
    t->diag_errors += fig[4], t->diag_warnings += fig[5];
    add_stats(&t->st, &s);
    for (uint32_t h; (h = lp_drd_u32(r)) != UINT32_MAX && !r->bad;) {
        uint32_t v = lp_drd_u32(r);
        if (h < k->nh)
            k->verdict[h] = (uint8_t)v;
    }
    while (!r->bad && r->off < r->n) {
        uint64_t e = lp_drd_u64(r);
        const void *tp = lp_drd_get(r, 8);
        if (!tp || e >= k->m.npk * 2)
            return -1;
        memcpy(&ts[e], tp, 8);
    }
    return r->bad ? -1 : 0;
}

static int sum_parts(dkcp *k, const uint8_t *all, const size_t *lens)
{
    uint64_t npk = k->m.npk;
    int64_t *ts = lp_malloc((npk ? npk : 1) * 2 * 8);
    k->verdict = lp_calloc(k->nh, 1);
    if (!ts || !k->verdict) {
        lp_free(ts);
        return nomem(k);
    }
    for (uint64_t i = 0; i < npk * 2; i++)
        ts[i] = INT64_MIN;
    int rc = 0;
    for (int q = 0, off = 0; q < k->D->size && !rc; off += (int)lens[q], q++) {
        lp_drd r = lp_drd_init(all + off, lens[q]);
        if (sum_block(k, &r, ts)) {
            cli_dist_err(k->D, "rank %d sent figures rank 0 cannot read", q);
            rc = LP_EXIT_INTERNAL;
        }
    }
    if (!rc)
        rc = decide_links(k, ts);
    lp_free(ts);
    return rc;
}

int dk_setup(dkcp *k)
{
    int rc = eci_step(k);
    if (rc)
        return rc;
    lp_dbuf b = {0};
    lp_error err;
    lp_error_clear(&err);
    rc = part_step(k, &b);
    void *all = NULL;
    size_t *lens = lp_calloc((size_t)k->D->size, sizeof *lens);
    if (!rc && !lens)
        rc = nomem(k);
    if ((rc = cli_dist_agree(k->D, rc, NULL))) {
        lp_dbuf_release(&b);
        lp_free(lens);
        return rc;
    }
    if (lp_dist_gather(k->D->d, 0, b.p, b.n, &all, lens, &err))
        rc = cli_dist_fail(k->D, &err);
    lp_dbuf_release(&b);
    if (!rc && k->D->rank == 0)
        rc = sum_parts(k, all, lens);
    if (!rc && k->D->rank == 0 && !k->tot.nworkers) { /* as `cp --thread`: never a path of nothing */
        cli_dist_err(k->D, "the kernel traces hold no thread (no scheduling events): there is nothing to analyse");
        rc = LP_EXIT_EMPTY;
    }
    lp_free(all);
    lp_free(lens);
    if (!rc && !(k->sent = lp_calloc(k->nh, 1)))
        rc = nomem(k);
    return cli_dist_agree(k->D, rc, NULL);
}

void dk_release(dkcp *k)
{
    lp_ktrace_free(k->own);
    lp_ktrace_free(k->skel);
    for (uint32_t h = 0; k->parts && h < k->nh; h++)
        lp_dbuf_release(&k->parts[h]);
    lp_free(k->parts);
    lp_kgraph_free(k->own_g);
    lp_free(k->own_sv);
    lp_free(k->own_tv);
    lp_hmap_release(&k->keys);
    if (k->have_m)
        lp_kmatch_release(&k->m);
    for (uint32_t h = 0; k->orig && h < k->nh; h++)
        lp_free(k->orig[h]);
    lp_free(k->orig);
    lp_free(k->nev_read);
    lp_free(k->verdict);
    lp_free(k->sent);
    lp_free(k->have);
    lp_free(k->req_to);
    lp_kgraph_free(k->idx_g);
    lp_free(k->idx_path);
    lp_dkidx_release(&k->side);
    lp_dbuf_release(&k->eci);
    memset(k, 0, sizeof *k);
}
