/* topo.c: the dependency order of a chain graph (topo.h): its buffers, the cycle
 * breaking step and the plain order. The walk itself is inline in topo.h so that each
 * caller's visitor is compiled into it.
 *
 * Invariants between walks: done has at least nv/64+1 words, cleared by lp_topo_begin;
 * the ignored flags are all 0 outside a walk's own (lp_topo_begin clears them when the
 * walk before broke a cycle), so a first cycle needs no clearing, only (maybe) a larger
 * buffer.
 */
#include "longpole/graph/topo.h"
#include "longpole/base/alloc.h"
#include "base/hugepage.h"

#include <string.h>

void lp_topo_init(lp_topo *tp) { memset(tp, 0, sizeof *tp); }

void lp_topo_release(lp_topo *tp)
{
    lp_free(tp->ignored);
    lp_free(tp->cur);
    lp_free(tp->stk);
    lp_free(tp->target);
    lp_free(tp->onstk);
    lp_free(tp->done);
    memset(tp, 0, sizeof *tp);
}

/* Make *p an array of at least need elements (its contents are not kept: realloc, so a
 * large block grows in place). */
static int reserve(void **p, size_t need, size_t elem)
{
    void *q = lp_reallocarray(*p, need, elem);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

lp_status lp_topo_begin_(lp_topo *tp, uint64_t nv, uint32_t nchains, lp_error *err)
{
    size_t nc = (size_t)nchains + 1, nd = (size_t)(nv / 64 + 1);
    if (nc > tp->cap_c || !tp->cur) {
        size_t n = nc + 16;
        if (reserve((void **)&tp->cur, n, sizeof *tp->cur) || reserve((void **)&tp->stk, n, sizeof *tp->stk) ||
            reserve((void **)&tp->target, n, sizeof *tp->target) || reserve((void **)&tp->onstk, n, 1))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory ordering a graph");
        tp->cap_c = n;
    }
    if (nd > tp->cap_v || !tp->done) {
        size_t n = nd + nd / 4 + 1;
        if (reserve((void **)&tp->done, n, sizeof *tp->done))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory ordering a graph");
        tp->cap_v = n;
    }
    memset(tp->cur, 0, (size_t)nchains * sizeof *tp->cur);
    memset(tp->onstk, 0, nchains);
    memset(tp->done, 0, nd * sizeof *tp->done);
    if (tp->ncycles)
        memset(tp->ignored, 0, tp->cap_e);
    tp->ncycles = 0;
    tp->norder = 0;
    return LP_OK;
}

uint8_t *lp_topo_ignore_(lp_topo *tp, uint64_t ne, uint32_t e)
{
    if (!tp->ncycles && (!tp->ignored || tp->cap_e < ne)) {
        size_t n = (size_t)ne + (size_t)ne / 4 + 16;
        uint8_t *p = lp_calloc(n, 1);
        if (!p)
            return NULL;
        lp_free(tp->ignored);
        tp->ignored = p;
        tp->cap_e = n;
        lp_hint_huge(p, n);
    }
    tp->ignored[e] = 1;
    tp->ncycles++;
    return tp->ignored;
}

static inline void nothing(void *ctx, const lp_graph *g, uint64_t v, uint64_t pos, const uint8_t *ign)
{
    (void)ctx, (void)g, (void)v, (void)pos, (void)ign;
}

lp_status lp_topo_run(lp_topo *tp, const lp_graph *g, uint32_t *order, lp_error *err)
{
    lp_status st = lp_topo_begin(tp, g, err);
    if (st)
        return st;
    if (order)
        return lp_topo_advance_all(tp, g, order, nothing, nothing, NULL, err);
    return lp_topo_advance_all(tp, g, NULL, nothing, nothing, NULL, err);
}
