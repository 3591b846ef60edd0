/* lpath.h: longest paths in a chain graph (graph.h), in dependency order (topo.h).
 *
 * Two forms, each a step (inline, for callers that fuse it into their own walk) and a
 * whole-graph function:
 *
 *  - Timed graphs (MODEL.md "Critical paths"): every vertex has a time, non-decreasing
 *    along edges, and an edge weighs the time between its ends, so the weight of a path
 *    is the time between its ends and the longest path into v is the one reaching back
 *    to the earliest instant. org[v] is the vertex where it starts: v itself when no
 *    edge into v is usable, else the origin of the predecessor whose origin is earliest
 *    (the chain edge beats a link of equal reach; among links the first slot wins).
 *    The path is followed back by re-evaluating the same choice (lp_lpath_origin_at's
 *    pick). No arithmetic on times, so no overflow; 4 bytes per vertex.
 *  - Weighted graphs (replays, what-if: weights that are not time differences):
 *    dist[v] = max(base[v], dist[u] + w(u, v) over usable edges u -> v), the heaviest
 *    path into v starting anywhere with its start's base. pred[v] is the edge taken:
 *    the first strictly heaviest in the order chain edge, then slots; base wins only
 *    when strictly heavier than every edge (or none is usable). Sums must fit in int64.
 *
 * Usable edges: the chain edge into v when v is not first in its chain and clive[v]
 * (clive NULL: all), and every link not ignored by the walk (topo.h).
 */
#ifndef LONGPOLE_GRAPH_LPATH_H
#define LONGPOLE_GRAPH_LPATH_H

#include <stdint.h>
#include "longpole/graph/topo.h"

#define LP_LPATH_CHAIN UINT64_MAX       /* pick: the chain edge into v */
#define LP_LPATH_NONE (UINT64_MAX - 1)  /* pick: no edge (v starts the path); else a link id */

/* Timed step: the origin of the longest path into v, given the origins of its
 * predecessors; *pick is set to LP_LPATH_CHAIN, LP_LPATH_NONE or the link taken. */
static inline uint32_t lp_lpath_origin_at(const lp_graph *g, uint64_t v, int chain_live, const uint32_t *org,
                                          const int64_t *vtime, const uint8_t *ign, uint64_t *pick)
{
    uint32_t best = (uint32_t)v;
    int64_t bt = INT64_MAX;
    *pick = LP_LPATH_NONE;
    if (chain_live) {
        best = org[v - 1];
        bt = vtime[best];
        *pick = LP_LPATH_CHAIN;
    }
    for (uint64_t k = g->ein[v]; k < g->ein[v + 1]; k++) {
        uint32_t e = lp_graph_link(g, k);
        if (ign && ign[e])
            continue;
        uint32_t o = org[lp_graph_src(g, e)];
        if (vtime[o] < bt) {
            bt = vtime[o];
            best = o;
            *pick = e;
        }
    }
    return best;
}

/* Timed, whole graph: lp_topo_begin, then org[v] for every vertex (org holds nv). */
lp_status lp_lpath_origins(lp_topo *tp, const lp_graph *g, const int64_t *vtime, const uint8_t *clive, uint32_t *org,
                           lp_error *err);

/* Weighted step: dist[v] from its predecessors' (cw[v]: weight of the chain edge into
 * v, ew[e]: of link e; NULL: 0; base NULL: 0); *pred as *pick above. */
static inline int64_t lp_lpath_weighted_at(const lp_graph *g, uint64_t v, int chain_live, const int64_t *dist,
                                           const int64_t *cw, const int64_t *ew, const int64_t *base,
                                           const uint8_t *ign, uint64_t *pred)
{
    int64_t best = 0;
    int any = 0;
    *pred = LP_LPATH_NONE;
    if (chain_live) {
        best = dist[v - 1] + (cw ? cw[v] : 0);
        any = 1;
        *pred = LP_LPATH_CHAIN;
    }
    for (uint64_t k = g->ein[v]; k < g->ein[v + 1]; k++) {
        uint32_t e = lp_graph_link(g, k);
        if (ign && ign[e])
            continue;
        int64_t d = dist[lp_graph_src(g, e)] + (ew ? ew[e] : 0);
        if (!any || d > best) {
            best = d;
            any = 1;
            *pred = e;
        }
    }
    int64_t b = base ? base[v] : 0;
    if (!any || b > best) {
        best = b;
        *pred = LP_LPATH_NONE;
    }
    return best;
}

/* Weighted, whole graph: lp_topo_begin, then dist[v] (and pred[v] unless pred is
 * NULL) for every vertex. */
lp_status lp_lpath_weighted(lp_topo *tp, const lp_graph *g, const int64_t *cw, const int64_t *ew, const int64_t *base,
                            const uint8_t *clive, int64_t *dist, uint64_t *pred, lp_error *err);

#endif
