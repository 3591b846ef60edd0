/* pathcount.h: the number of paths through every vertex of a chain graph (graph.h),
 * from a set of start vertices to a set of end vertices (SnailTrail §3.2 Definition 8,
 * §5 Algorithm 2: the counts behind critical participation, cpmetric.h).
 *
 * Paths use usable edges only (as in lpath.h: the chain edge into v when v is not
 * first in its chain and clive[v], clive NULL: all; links not ignored by the walk).
 * fwd[v] is the number of paths from a start vertex to v (a start vertex counts its
 * empty path), bwd[v] the number from v to an end vertex; the paths through an edge
 * u -> v are fwd[u] * bwd[v], and sum of fwd over the ends = sum of bwd over the starts
 * = the number of start-to-end paths. Counts are lp_xnum (xnum.h: never overflow, a
 * bounded relative error, exact below 2^53).
 *
 * fwd is computed in dependency order (topo.h), bwd in its reverse: a vertex's bwd is
 * what its links' targets pushed to it, plus one if it is an end, plus its chain
 * successor's bwd, and is then pushed to the sources of its own links (so no outgoing
 * lists are needed). The steps are inline for callers that fuse them with their own
 * per-edge work (cpmetric.c); lp_pathcount_run does both passes over a whole graph.
 */
#ifndef LONGPOLE_GRAPH_PATHCOUNT_H
#define LONGPOLE_GRAPH_PATHCOUNT_H

#include <stdint.h>
#include "longpole/graph/topo.h"
#include "longpole/graph/xnum.h"

/* The counts of one vertex (side by side: both passes touch one cache line). */
typedef struct lp_pathcount {
    lp_xnum fwd;             /* paths from a start vertex to the vertex */
    lp_xnum bwd;             /* paths from the vertex to an end vertex */
} lp_pathcount;

/* fwd of a vertex without link slots. */
static inline lp_xnum lp_pathcount_fwd_chain(const lp_pathcount *cnt, uint64_t v, int start, int chain_live)
{
    lp_xnum x = start ? lp_xnum_one() : lp_xnum_zero();
    if (chain_live)
        x = x.m == 0 ? cnt[v - 1].fwd : lp_xnum_add(x, cnt[v - 1].fwd);
    return x;
}

/* fwd of any vertex, its predecessors counted. */
static inline lp_xnum lp_pathcount_fwd_at(const lp_graph *g, const lp_pathcount *cnt, uint64_t v, int start,
                                          int chain_live, const uint8_t *ign)
{
    lp_xnum x = lp_pathcount_fwd_chain(cnt, v, start, chain_live);
    for (uint64_t k = g->ein[v]; k < g->ein[v + 1]; k++) {
        uint32_t e = lp_graph_link(g, k);
        if (!(ign && ign[e]))
            x = lp_xnum_add(x, cnt[lp_graph_src(g, e)].fwd);
    }
    return x;
}

/* bwd of v once its successors are counted: what they pushed (cnt[v].bwd, zero at
 * first), one if v is an end, and its chain successor's when that edge is usable. */
static inline lp_xnum lp_pathcount_bwd_at(const lp_pathcount *cnt, uint64_t v, int end, int next_live)
{
    lp_xnum b = cnt[v].bwd;
    if (end)
        b = lp_xnum_add(b, lp_xnum_one());
    if (next_live)
        b = b.m == 0 ? cnt[v + 1].bwd : lp_xnum_add(b, cnt[v + 1].bwd);
    return b;
}

/* Push b (a link's target's bwd) to the link's source u. */
static inline void lp_pathcount_push(lp_pathcount *cnt, uint32_t u, lp_xnum b)
{
    cnt[u].bwd = cnt[u].bwd.m == 0 ? b : lp_xnum_add(cnt[u].bwd, b);
}

/* Both passes over g: starts and ends are flags per vertex; cnt and order hold nv
 * entries (order gets the dependency order). Cycles are broken as topo.h says
 * (tp->ncycles, tp->ignored). LP_ERR_NOMEM. */
lp_status lp_pathcount_run(lp_topo *tp, const lp_graph *g, const uint8_t *clive, const uint8_t *starts,
                           const uint8_t *ends, lp_pathcount *cnt, uint32_t *order, lp_error *err);

#endif
