/* test_pathcount.c: path counts of the graph layer (graph/pathcount.h) against
 * enumeration (every path walked, one at a time) on thousands of small random chain
 * graphs in every form lp_graph takes, acyclic and with zero-time cycles (then over
 * the graph without the links the walk ignored):
 *  - fwd[v] is the number of paths from a start vertex to v, bwd[v] from v to an end
 *    vertex, both exact (small integers);
 *  - the number of start-to-end paths from the ends' fwd equals that from the starts'
 *    bwd. */
#include "t.h"
#include "graphtest.h"

#include <stdio.h>

/* ---- naive twins: walk every path -------------------------------------------------- */

/* Paths from a start vertex to x: walk back along every path from x, counting one at
 * each start vertex met. */
static uint64_t paths_to(const tg *g, uint32_t x, const uint8_t *starts, const uint8_t *skip)
{
    uint64_t n = starts[x];
    if (tg_chain_usable(g, x))
        n += paths_to(g, x - 1, starts, skip);
    for (uint32_t e = 0; e < g->nl; e++)
        if (g->ldst[e] == x && !skip[e])
            n += paths_to(g, g->lsrc[e], starts, skip);
    return n;
}

/* Paths from x to an end vertex. */
static uint64_t paths_from(const tg *g, uint32_t x, const uint8_t *ends, const uint8_t *skip)
{
    uint64_t n = ends[x];
    if (x + 1 < g->nv && tg_chain_usable(g, x + 1))
        n += paths_from(g, x + 1, ends, skip);
    for (uint32_t e = 0; e < g->nl; e++)
        if (g->lsrc[e] == x && !skip[e])
            n += paths_from(g, g->ldst[e], ends, skip);
    return n;
}

static int exact(lp_xnum x, uint64_t n)
{
    return n == 0 ? x.m == 0 : x.e == 0 && x.rd == 0 && x.m == (double)n;
}

static void test_random(int cyclic)
{
    int bad = 0;
    lp_topo tp;
    lp_topo_init(&tp);
    lp_error err;
    for (int iter = 0; iter < 4000; iter++) {
        tg g;
        tg_make(&g, cyclic);
        int form = iter % 4;
        lp_graph gr = tg_graph(&g, form);
        uint8_t starts[TG_MAXV], ends[TG_MAXV], skip[TG_MAXL] = {0};
        for (uint32_t v = 0; v < g.nv; v++)
            starts[v] = tg_rnd(3) == 0, ends[v] = tg_rnd(3) == 0;
        lp_pathcount cnt[TG_MAXV];
        uint32_t order[TG_MAXV];
        const uint8_t *clive = iter & 4 ? g.clive : NULL;
        uint8_t all[TG_MAXV];
        memset(all, 1, sizeof all);
        tg g2 = g; /* the naive twins read usability from clive */
        if (!clive)
            memcpy(g2.clive, all, sizeof all);
        int ok = lp_pathcount_run(&tp, &gr, clive, starts, ends, cnt, order, &err) == LP_OK;
        for (uint32_t k = 0; ok && k < g.ein[g.nv]; k++) {
            uint32_t e = form == 1 || form == 2 ? k : g.eid[k];
            skip[g.eid[k]] = (uint8_t)lp_topo_ignored(&tp, e);
        }
        ok &= cyclic || tp.ncycles == 0;
        lp_xnum nf = lp_xnum_zero(), nb = lp_xnum_zero();
        for (uint32_t v = 0; ok && v < g.nv; v++) {
            ok &= exact(cnt[v].fwd, paths_to(&g2, v, starts, skip));
            ok &= exact(cnt[v].bwd, paths_from(&g2, v, ends, skip));
            if (ends[v])
                nf = lp_xnum_add(nf, cnt[v].fwd);
            if (starts[v])
                nb = lp_xnum_add(nb, cnt[v].bwd);
        }
        ok &= lp_xnum_cmp(nf, nb) == 0;
        if (!ok && bad++ < 3)
            fprintf(stderr, "path count mismatch (cyclic %d, iteration %d, form %d)\n", cyclic, iter, form);
    }
    CHECK_EQ_I(bad, 0);
    lp_topo_release(&tp);
}

/* The inline steps on a diamond: 0 -> 1 (chain), 0 -> 2 (link), 1 -> 3 (chain), 2 -> 3
 * (link): two paths from 0 to 3. */
static void test_steps(void)
{
    const uint64_t coff[3] = {0, 2, 4};
    /* chain 0: 0, 1; chain 1: 2, 3; links: 0 -> 2, 1 -> 3 (so 0->1->3 and 0->2->3) */
    const uint32_t ein[5] = {0, 0, 0, 1, 2};
    const uint32_t esrc[2] = {0, 1};
    lp_graph g = {4, 2, coff, 2, ein, NULL, esrc, 1, NULL};
    lp_pathcount cnt[4];
    memset(cnt, 0, sizeof cnt);
    cnt[0].fwd = lp_pathcount_fwd_chain(cnt, 0, 1, 0);
    cnt[1].fwd = lp_pathcount_fwd_chain(cnt, 1, 0, 1);
    cnt[2].fwd = lp_pathcount_fwd_at(&g, cnt, 2, 0, 0, NULL);
    cnt[3].fwd = lp_pathcount_fwd_at(&g, cnt, 3, 0, 1, NULL);
    CHECK(exact(cnt[3].fwd, 2));
    cnt[3].bwd = lp_pathcount_bwd_at(cnt, 3, 1, 0);
    lp_pathcount_push(cnt, 1, cnt[3].bwd);
    cnt[2].bwd = lp_pathcount_bwd_at(cnt, 2, 0, 1);
    lp_pathcount_push(cnt, 0, cnt[2].bwd);
    cnt[1].bwd = lp_pathcount_bwd_at(cnt, 1, 0, 0);
    cnt[0].bwd = lp_pathcount_bwd_at(cnt, 0, 0, 1);
    CHECK(exact(cnt[0].bwd, 2) && exact(cnt[1].bwd, 1) && exact(cnt[2].bwd, 1));
}

int main(void)
{
    test_random(0);
    test_random(1);
    test_steps();
    return t_done("test_pathcount");
}
