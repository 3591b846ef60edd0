/* test_topo.c: the dependency-order walk of the graph layer (graph/topo.h) against its
 * definition, on thousands of small random chain graphs in every form lp_graph takes:
 *  - the order is a permutation in which every chain edge and every link not ignored
 *    runs forward; acyclic graphs have no link ignored;
 *  - with zero-time cycles: every ignored link lies on a cycle of the graph, ncycles
 *    counts them, and a graph has a cycle exactly when one is broken;
 *  - the four forms (link ids or slots, source chains or the bitset, a strided source
 *    column) give the same order and the same ignored links;
 *  - walked in random slices (lp_topo_advance to random limits, chains in random
 *    order) every vertex is visited once, after everything it needs, at its position;
 *  - allocation failures are clean. */
#include "t.h"
#include "graphtest.h"
#include "longpole/base/alloc.h"

#include <stdio.h>

/* Is order (the walk's, nv entries) a dependency order of g minus the links tp
 * ignored? */
static int order_valid(const tg *g, int form, const uint32_t *order, const lp_topo *tp)
{
    int pos[TG_MAXV];
    for (uint32_t v = 0; v < g->nv; v++)
        pos[v] = -1;
    for (uint32_t i = 0; i < g->nv; i++) {
        if (order[i] >= g->nv || pos[order[i]] >= 0)
            return 0;
        pos[order[i]] = (int)i;
    }
    for (uint32_t v = 0; v < g->nv; v++)
        if (v > g->coff[g->chain[v]] && pos[v - 1] > pos[v])
            return 0;
    for (uint32_t k = 0; k < g->ein[g->nv]; k++) {
        uint32_t e = form == 1 || form == 2 ? k : g->eid[k];
        if (lp_topo_ignored(tp, e))
            continue;
        uint32_t id = g->eid[k];
        if (pos[g->lsrc[id]] > pos[g->ldst[id]])
            return 0;
    }
    return 1;
}

/* The ignored links of a walk by link id (creation order); returns how many. */
static uint32_t ignored_ids(const tg *g, int form, const lp_topo *tp, uint8_t *out)
{
    uint32_t n = 0;
    memset(out, 0, TG_MAXL);
    for (uint32_t k = 0; k < g->ein[g->nv]; k++) {
        uint32_t e = form == 1 || form == 2 ? k : g->eid[k];
        if (lp_topo_ignored(tp, e)) {
            out[tg_link(g, form, e)] = 1;
            n++;
        }
    }
    return n;
}

static void test_random(int cyclic)
{
    int bad = 0, ncyc_graphs = 0;
    lp_topo tp;
    lp_topo_init(&tp);
    lp_error err;
    for (int iter = 0; iter < 4000; iter++) {
        tg g;
        tg_make(&g, cyclic);
        uint32_t order0[TG_MAXV], order[TG_MAXV];
        uint8_t ign0[TG_MAXL], ign[TG_MAXL];
        uint64_t ncycles0 = 0;
        int ok = 1, has = tg_cyclic(&g);
        ncyc_graphs += has;
        for (int form = 0; form < 4; form++) {
            lp_graph gr = tg_graph(&g, form);
            uint32_t *o = form ? order : order0;
            if (lp_topo_run(&tp, &gr, o, &err) != LP_OK) {
                ok = 0;
                break;
            }
            ok &= tp.norder == g.nv;
            ok &= order_valid(&g, form, o, &tp);
            uint32_t n = ignored_ids(&g, form, &tp, form ? ign : ign0);
            ok &= n == tp.ncycles;
            ok &= (tp.ncycles > 0) == has;
            if (form == 0) {
                ncycles0 = tp.ncycles;
                for (uint32_t e = 0; e < g.nl; e++) /* each ignored link closes a cycle */
                    if (ign0[e])
                        ok &= tg_reaches(&g, g.ldst[e], g.lsrc[e], NULL);
            } else {
                ok &= tp.ncycles == ncycles0;
                ok &= memcmp(order, order0, g.nv * sizeof *order) == 0;
                ok &= memcmp(ign, ign0, TG_MAXL) == 0;
            }
        }
        if (!ok && bad++ < 3)
            fprintf(stderr, "topo mismatch (cyclic %d, iteration %d): %u vertices, %u links\n", cyclic, iter, g.nv, g.nl);
    }
    CHECK_EQ_I(bad, 0);
    if (cyclic)
        CHECK(ncyc_graphs > 400); /* the generator makes cycles often enough to test them */
    else
        CHECK_EQ_I(ncyc_graphs, 0);
    lp_topo_release(&tp);
}

/* ---- walking in slices, with a visitor that checks readiness itself ------------------ */

typedef struct vctx {
    const tg *g;
    uint8_t seen[TG_MAXV];
    uint32_t n;
    int bad;
} vctx;

static void visit(vctx *x, const lp_graph *gr, uint64_t v, uint64_t pos, const uint8_t *ign, int joined)
{
    const tg *g = x->g;
    x->bad |= x->seen[v];
    x->bad |= pos != v - g->coff[g->chain[v]];
    x->bad |= joined != (g->ein[v] != g->ein[v + 1]);
    if (pos)
        x->bad |= !x->seen[v - 1];
    for (uint64_t k = gr->ein[v]; k < gr->ein[v + 1]; k++) {
        uint32_t e = lp_graph_link(gr, k);
        if (!(ign && ign[e]))
            x->bad |= !x->seen[lp_graph_src(gr, e)];
    }
    x->seen[v] = 1;
    x->n++;
}

static void visit_plain(void *ctx, const lp_graph *gr, uint64_t v, uint64_t pos, const uint8_t *ign)
{
    visit(ctx, gr, v, pos, ign, 0);
}

static void visit_joined(void *ctx, const lp_graph *gr, uint64_t v, uint64_t pos, const uint8_t *ign)
{
    visit(ctx, gr, v, pos, ign, 1);
}

static void test_slices(void)
{
    int bad = 0;
    lp_topo tp;
    lp_topo_init(&tp);
    lp_error err;
    for (int iter = 0; iter < 4000; iter++) {
        tg g;
        tg_make(&g, iter & 1);
        int form = iter / 2 % 4;
        lp_graph gr = tg_graph(&g, form);
        vctx x = {&g, {0}, 0, 0};
        uint32_t order[TG_MAXV];
        int ok = lp_topo_begin(&tp, &gr, &err) == LP_OK;
        for (int step = 0; ok && step < 12; step++) {
            uint32_t c = tg_rnd(g.nc);
            uint64_t len = g.coff[c + 1] - g.coff[c];
            ok &= lp_topo_advance(&tp, &gr, c, tg_rnd((uint32_t)len + 1), order, visit_plain, visit_joined, &x, &err) ==
                  LP_OK;
        }
        ok = ok && lp_topo_advance_all(&tp, &gr, order, visit_plain, visit_joined, &x, &err) == LP_OK;
        ok = ok && !x.bad && x.n == g.nv && tp.norder == g.nv && order_valid(&g, form, order, &tp);
        for (uint32_t c = 0; ok && c < g.nc; c++)
            ok &= tp.cur[c] == g.coff[c + 1] - g.coff[c];
        if (!ok && bad++ < 3)
            fprintf(stderr, "slice walk failed (iteration %d, form %d)\n", iter, form);
    }
    CHECK_EQ_I(bad, 0);
    lp_topo_release(&tp);
}

/* Two workers sending each other a message at the same instant (test_cpath's cycle):
 * one of the two links is ignored; the walk reuses its buffers for a second graph and
 * starts that one clean. */
static void test_known_cycle(void)
{
    /* a: 0 -> 1 (t 0, 10), b: 2 -> 3 (t 0, 10); links 1 -> 3 and 3 -> 1 (both at t 10) */
    const uint64_t coff[3] = {0, 2, 4};
    const uint32_t ein[5] = {0, 0, 1, 1, 2};
    const uint32_t eid[2] = {1, 0}, esrc[2] = {1, 3}, echain[2] = {0, 1};
    lp_graph g = {4, 2, coff, 2, ein, eid, esrc, 1, echain};
    lp_topo tp;
    lp_topo_init(&tp);
    lp_error err;
    uint32_t order[4];
    CHECK(lp_topo_run(&tp, &g, order, &err) == LP_OK);
    CHECK_EQ_I(tp.ncycles, 1);
    CHECK(lp_topo_ignored(&tp, 0) + lp_topo_ignored(&tp, 1) == 1);
    /* chain a first: vertex 1 needs 3 (link 1), b then needs 1 back: link 0 (3 <- 1) is
     * the one found closing the cycle */
    CHECK(lp_topo_ignored(&tp, 0));
    CHECK(order[0] == 0 && order[1] == 2 && order[2] == 3 && order[3] == 1);
    /* without the links: no cycle, the flags of the first walk are gone */
    const uint32_t ein0[5] = {0, 0, 0, 0, 0};
    lp_graph g0 = {4, 2, coff, 2, ein0, eid, esrc, 1, echain};
    CHECK(lp_topo_run(&tp, &g0, order, &err) == LP_OK);
    CHECK_EQ_I(tp.ncycles, 0);
    CHECK(!lp_topo_ignored(&tp, 0) && !lp_topo_ignored(&tp, 1));
    CHECK(tp.ignored && !tp.ignored[0] && !tp.ignored[1]);
    CHECK(order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3);
    lp_topo_release(&tp);
}

static void test_empty(void)
{
    const uint64_t coff[3] = {0, 0, 0};
    const uint32_t ein[1] = {0};
    lp_graph g = {0, 2, coff, 0, ein, NULL, NULL, 1, NULL};
    lp_topo tp;
    lp_topo_init(&tp);
    lp_error err;
    CHECK(lp_topo_run(&tp, &g, NULL, &err) == LP_OK);
    CHECK_EQ_I(tp.norder, 0);
    CHECK_EQ_I(tp.ncycles, 0);
    lp_topo_release(&tp);
}

static void test_alloc_failure(void)
{
    tg g;
    do
        tg_make(&g, 1);
    while (!tg_cyclic(&g));
    int ok_seen = 0, nomem_seen = 0;
    for (long n = 0; n < 20; n++) {
        lp_topo tp;
        lp_topo_init(&tp);
        lp_error err;
        uint32_t order[TG_MAXV];
        lp_graph gr = tg_graph(&g, n % 4);
        lp_alloc_fail_after(n);
        lp_status st = lp_topo_run(&tp, &gr, order, &err);
        lp_alloc_fail_after(-1);
        CHECK(st == LP_OK || st == LP_ERR_NOMEM);
        ok_seen |= st == LP_OK;
        nomem_seen |= st == LP_ERR_NOMEM;
        if (st == LP_OK)
            CHECK(tp.ncycles > 0 && order_valid(&g, n % 4, order, &tp));
        lp_topo_release(&tp);
    }
    CHECK(ok_seen && nomem_seen);
}

int main(void)
{
    test_random(0);
    test_random(1);
    test_slices();
    test_known_cycle();
    test_empty();
    test_alloc_failure();
    return t_done("test_topo");
}
