/* test_lpath.c: longest paths of the graph layer (graph/lpath.h) against brute force
 * (every path into a vertex enumerated) on thousands of small random acyclic chain
 * graphs, in every form lp_graph takes:
 *  - timed: the origin's time is the earliest start of any path into the vertex, the
 *    origin starts a path (no usable edge into it), and the edge taken is the first of
 *    the earliest-reaching ones (chain edge, then slots in order);
 *  - weighted (negative weights too, with and without base values): dist is the
 *    heaviest path into the vertex, and pred the first heaviest edge, or none when the
 *    base is strictly heavier. */
#include "t.h"
#include "graphtest.h"

#include <stdio.h>

/* ---- naive twins --------------------------------------------------------------------- */

/* The earliest time at which a path ending at x (over usable edges) can start. */
static int64_t earliest(const tg *g, uint32_t x)
{
    int64_t best = g->time[x];
    if (tg_chain_usable(g, x)) {
        int64_t t = earliest(g, x - 1);
        best = t < best ? t : best;
    }
    for (uint32_t e = 0; e < g->nl; e++)
        if (g->ldst[e] == x) {
            int64_t t = earliest(g, g->lsrc[e]);
            best = t < best ? t : best;
        }
    return best;
}

/* The heaviest path ending at x: base[start] + its weights (ew by link id). */
static int64_t heaviest(const tg *g, uint32_t x, const int64_t *cw, const int64_t *ew, const int64_t *base)
{
    int64_t best = base ? base[x] : 0;
    if (tg_chain_usable(g, x)) {
        int64_t d = heaviest(g, x - 1, cw, ew, base) + cw[x];
        best = d > best ? d : best;
    }
    for (uint32_t e = 0; e < g->nl; e++)
        if (g->ldst[e] == x) {
            int64_t d = heaviest(g, g->lsrc[e], cw, ew, base) + ew[e];
            best = d > best ? d : best;
        }
    return best;
}

/* The kernel's link id of slot k in form `form`. */
static uint32_t kid(const tg *g, int form, uint32_t k)
{
    return form == 1 || form == 2 ? k : g->eid[k];
}

static void test_timed(void)
{
    int bad = 0;
    lp_topo tp;
    lp_topo_init(&tp);
    lp_error err;
    for (int iter = 0; iter < 4000; iter++) {
        tg g;
        tg_make(&g, 0);
        int form = iter % 4;
        lp_graph gr = tg_graph(&g, form);
        uint32_t org[TG_MAXV];
        int ok = lp_lpath_origins(&tp, &gr, g.time, g.clive, org, &err) == LP_OK && tp.ncycles == 0;
        for (uint32_t v = 0; ok && v < g.nv; v++) {
            ok &= g.time[org[v]] == earliest(&g, v);
            /* the origin starts a path: no usable edge into it */
            ok &= !tg_chain_usable(&g, org[v]) && g.ein[org[v]] == g.ein[org[v] + 1];
            /* the edge taken: the first of the earliest-reaching */
            int64_t bt = INT64_MAX;
            uint64_t want = LP_LPATH_NONE;
            uint32_t wo = v;
            if (tg_chain_usable(&g, v))
                bt = g.time[org[v - 1]], want = LP_LPATH_CHAIN, wo = org[v - 1];
            for (uint32_t k = g.ein[v]; k < g.ein[v + 1]; k++) {
                uint32_t o = org[g.lsrc[g.eid[k]]];
                if (g.time[o] < bt)
                    bt = g.time[o], want = kid(&g, form, k), wo = o;
            }
            uint64_t pick;
            uint32_t o = lp_lpath_origin_at(&gr, v, tg_chain_usable(&g, v), org, g.time, NULL, &pick);
            ok &= pick == want && o == wo && o == org[v];
        }
        if (!ok && bad++ < 3)
            fprintf(stderr, "timed longest path mismatch (iteration %d, form %d)\n", iter, form);
    }
    CHECK_EQ_I(bad, 0);
    lp_topo_release(&tp);
}

static void test_weighted(void)
{
    int bad = 0;
    lp_topo tp;
    lp_topo_init(&tp);
    lp_error err;
    for (int iter = 0; iter < 4000; iter++) {
        tg g;
        tg_make(&g, 0);
        int form = iter % 4;
        lp_graph gr = tg_graph(&g, form);
        int64_t cw[TG_MAXV], ew[TG_MAXL], ewk[TG_MAXL], base[TG_MAXV], dist[TG_MAXV];
        uint64_t pred[TG_MAXV];
        for (uint32_t v = 0; v < g.nv; v++)
            cw[v] = (int64_t)tg_rnd(13) - 3, base[v] = (int64_t)tg_rnd(20) - 5;
        for (uint32_t e = 0; e < g.nl; e++)
            ew[e] = (int64_t)tg_rnd(13) - 3;
        for (uint32_t k = 0; k < g.nl; k++) /* the weights by the kernel's link ids */
            ewk[kid(&g, form, k)] = ew[g.eid[k]];
        const int64_t *bp = iter & 4 ? base : NULL;
        int ok = lp_lpath_weighted(&tp, &gr, cw, ewk, bp, g.clive, dist, pred, &err) == LP_OK;
        for (uint32_t v = 0; ok && v < g.nv; v++) {
            ok &= dist[v] == heaviest(&g, v, cw, ew, bp);
            int64_t best = 0;
            int any = 0;
            uint64_t want = LP_LPATH_NONE;
            if (tg_chain_usable(&g, v))
                best = dist[v - 1] + cw[v], any = 1, want = LP_LPATH_CHAIN;
            for (uint32_t k = g.ein[v]; k < g.ein[v + 1]; k++) {
                int64_t d = dist[g.lsrc[g.eid[k]]] + ew[g.eid[k]];
                if (!any || d > best)
                    best = d, any = 1, want = kid(&g, form, k);
            }
            if (!any || (bp ? bp[v] : 0) > best)
                want = LP_LPATH_NONE;
            ok &= pred[v] == want;
        }
        if (!ok && bad++ < 3)
            fprintf(stderr, "weighted longest path mismatch (iteration %d, form %d)\n", iter, form);
    }
    CHECK_EQ_I(bad, 0);
    lp_topo_release(&tp);
}

/* A hand case: two chains, the message path beats the chain, then the chain ties it. */
static void test_known(void)
{
    /* chain 0: 0 (t 0) -> 1 (t 5) -> 2 (t 9); chain 1: 3 (t 1) -> 4 (t 2); link 3 -> 1 */
    const uint64_t coff[3] = {0, 3, 5};
    const uint32_t ein[6] = {0, 0, 1, 1, 1, 1};
    const uint32_t esrc[1] = {3};
    const int64_t time[5] = {0, 5, 9, 1, 2};
    const uint8_t clive[5] = {0, 0, 1, 0, 1}; /* the chain edge 0 -> 1 is not usable */
    lp_graph g = {5, 2, coff, 1, ein, NULL, esrc, 1, NULL};
    lp_topo tp;
    lp_topo_init(&tp);
    lp_error err;
    uint32_t org[5];
    CHECK(lp_lpath_origins(&tp, &g, time, clive, org, &err) == LP_OK);
    CHECK(org[0] == 0 && org[1] == 3 && org[2] == 3 && org[3] == 3 && org[4] == 3);
    uint64_t pick;
    lp_lpath_origin_at(&g, 1, 0, org, time, NULL, &pick);
    CHECK(pick == 0);
    lp_lpath_origin_at(&g, 2, 1, org, time, NULL, &pick);
    CHECK(pick == LP_LPATH_CHAIN);
    lp_lpath_origin_at(&g, 0, 0, org, time, NULL, &pick);
    CHECK(pick == LP_LPATH_NONE);
    lp_topo_release(&tp);
}

int main(void)
{
    test_timed();
    test_weighted();
    test_known();
    return t_done("test_lpath");
}
