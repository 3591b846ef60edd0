/* pathcount.c: path counts over a whole chain graph (pathcount.h): fwd as the visitor
 * of one dependency-order walk (topo.h), bwd over that order reversed. The steps are
 * inline in pathcount.h; SnailTrail's critical participation (cpmetric.c) fuses them
 * with its own per-edge work instead of calling this. */
#include "longpole/graph/pathcount.h"
#include "longpole/base/alloc.h"

typedef struct pc_ctx {
    const uint8_t *clive, *starts;
    lp_pathcount *cnt;
} pc_ctx;

static inline void fwd_visit(void *ctx, const lp_graph *g, uint64_t v, uint64_t pos, const uint8_t *ign)
{
    pc_ctx *x = ctx;
    int live = pos && (!x->clive || x->clive[v]);
    x->cnt[v].fwd = lp_pathcount_fwd_at(g, x->cnt, v, x->starts[v], live, ign);
    x->cnt[v].bwd = lp_xnum_zero();
}

lp_status lp_pathcount_run(lp_topo *tp, const lp_graph *g, const uint8_t *clive, const uint8_t *starts,
                           const uint8_t *ends, lp_pathcount *cnt, uint32_t *order, lp_error *err)
{
    lp_status st = lp_topo_begin(tp, g, err);
    if (st)
        return st;
    pc_ctx x = {clive, starts, cnt};
    if ((st = lp_topo_advance_all(tp, g, order, fwd_visit, fwd_visit, &x, err)))
        return st;
    /* first[v]: v begins its chain (so no chain edge runs into it from v-1) */
    uint64_t *first = lp_calloc(g->nv / 64 + 1, sizeof *first);
    if (!first)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory counting paths");
    for (uint32_t c = 0; c < g->nchains; c++)
        if (g->coff[c] < g->coff[c + 1])
            first[g->coff[c] >> 6] |= UINT64_C(1) << (g->coff[c] & 63);
    const uint8_t *ign = tp->ncycles ? tp->ignored : NULL;
    for (uint64_t i = g->nv; i-- > 0;) {
        uint64_t v = order[i], n = v + 1;
        int next_live = n < g->nv && !((first[n >> 6] >> (n & 63)) & 1) && (!clive || clive[n]);
        lp_xnum b = lp_pathcount_bwd_at(cnt, v, ends[v], next_live);
        cnt[v].bwd = b;
        if (b.m == 0)
            continue;
        for (uint64_t k = g->ein[v]; k < g->ein[v + 1]; k++) {
            uint32_t e = lp_graph_link(g, k);
            if (!(ign && ign[e]))
                lp_pathcount_push(cnt, lp_graph_src(g, e), b);
        }
    }
    lp_free(first);
    return LP_OK;
}
