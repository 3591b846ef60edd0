/* lpath.c: longest paths over a whole chain graph (lpath.h): the timed and the weighted
 * step run as visitors of one dependency-order walk (topo.h), so each vertex and slot
 * is read once. The steps themselves are inline in lpath.h for callers that fuse them
 * into their own walk (the whole-trace critical path, cpath.c). */
#include "longpole/graph/lpath.h"

typedef struct lpath_ctx {
    const int64_t *vtime, *cw, *ew, *base;
    const uint8_t *clive;
    uint32_t *org;
    int64_t *dist;
    uint64_t *pred;
} lpath_ctx;

static inline int chain_live(const lpath_ctx *x, uint64_t v, uint64_t pos)
{
    return pos && (!x->clive || x->clive[v]);
}

static inline void origin_visit(void *ctx, const lp_graph *g, uint64_t v, uint64_t pos, const uint8_t *ign)
{
    lpath_ctx *x = ctx;
    uint64_t pick;
    x->org[v] = lp_lpath_origin_at(g, v, chain_live(x, v, pos), x->org, x->vtime, ign, &pick);
}

lp_status lp_lpath_origins(lp_topo *tp, const lp_graph *g, const int64_t *vtime, const uint8_t *clive, uint32_t *org,
                           lp_error *err)
{
    lp_status st = lp_topo_begin(tp, g, err);
    if (st)
        return st;
    lpath_ctx x = {vtime, NULL, NULL, NULL, clive, org, NULL, NULL};
    return lp_topo_advance_all(tp, g, NULL, origin_visit, origin_visit, &x, err);
}

static inline void weighted_visit(void *ctx, const lp_graph *g, uint64_t v, uint64_t pos, const uint8_t *ign)
{
    lpath_ctx *x = ctx;
    uint64_t pred;
    x->dist[v] = lp_lpath_weighted_at(g, v, chain_live(x, v, pos), x->dist, x->cw, x->ew, x->base, ign, &pred);
    if (x->pred)
        x->pred[v] = pred;
}

lp_status lp_lpath_weighted(lp_topo *tp, const lp_graph *g, const int64_t *cw, const int64_t *ew, const int64_t *base,
                            const uint8_t *clive, int64_t *dist, uint64_t *pred, lp_error *err)
{
    lp_status st = lp_topo_begin(tp, g, err);
    if (st)
        return st;
    lpath_ctx x = {NULL, cw, ew, base, clive, NULL, dist, pred};
    return lp_topo_advance_all(tp, g, NULL, weighted_visit, weighted_visit, &x, err);
}
