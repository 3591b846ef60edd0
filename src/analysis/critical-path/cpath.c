/* cpath.c: the whole-trace critical path (see cpath.h for the definition and ties).
 *
 * Pass 1 computes, for every vertex v, ov[v]: the vertex furthest back in time
 * reachable by walking back from v over non-waiting edges (so the longest path ending
 * at v has weight vtime[v] - vtime[ov[v]]; 4 bytes per vertex). It is the timed
 * longest-path step (graph/lpath.h) run as the visitor of the dependency-order walk of
 * graph/topo.h over the PAG's graph (workers are chains, messages links): workers run
 * as far as they can, a worker that needs another's vertex pushes that worker on a
 * stack, so the pass touches every vertex and edge once and stays on one worker's
 * arrays for long runs. A worker needing one that is already on the stack is a real
 * cycle (only zero-time message cycles can form one); the blocking message is then
 * ignored and counted.
 * Pass 2 picks the last vertex and walks back from it re-evaluating the same choice at
 * each vertex, collecting the path's elements.
 */
#include "longpole/analysis/critical-path/cpath.h"
#include "base/hugepage.h"
#include "longpole/base/alloc.h"
#include "longpole/graph/lpath.h"

#include <string.h>

void lp_cpath_release(lp_cpath *cp)
{
    lp_free(cp->e);
    memset(cp, 0, sizeof *cp);
}

/* What pass 1's visitor reads and writes. */
typedef struct dp {
    const uint16_t *atype;
    const uint32_t *vact;
    const int64_t *vtime;
    uint32_t *ov;        /* per vertex: the vertex its longest path reaches back to */
} dp;

/* Is the worker edge into v (not the first of its worker) on a possible path? */
static inline int live(const dp *d, uint64_t v)
{
    return d->vact[v] != UINT32_MAX && d->atype[d->vact[v]] != LP_TYPE_WAITING;
}

/* A vertex without messages in: its worker edge's origin, or itself. */
static inline void visit_plain(void *ctx, const lp_graph *g, uint64_t v, uint64_t c, const uint8_t *ign)
{
    dp *d = ctx;
    d->ov[v] = c && live(d, v) ? d->ov[v - 1] : (uint32_t)v;
}

static inline void visit_joined(void *ctx, const lp_graph *g, uint64_t v, uint64_t c, const uint8_t *ign)
{
    dp *d = ctx;
    uint64_t pick;
    d->ov[v] = lp_lpath_origin_at(g, v, c != 0 && live(d, v), d->ov, d->vtime, ign, &pick);
}

/* Pass 1: ov for every vertex; the messages ignored to break cycles are left in tp. */
static lp_status origins(const lp_pag *g, lp_topo *tp, uint32_t *ov, lp_error *err)
{
    const lp_graph gg = lp_graph_of_pag(g);
    lp_status st = lp_topo_begin(tp, &gg, err);
    if (st)
        return st;
    dp d = {g->t->atype, g->vact, g->vtime, ov};
    return lp_topo_advance_all(tp, &gg, NULL, visit_plain, visit_joined, &d, err);
}

/* The last vertex: latest, then furthest reach, then lowest worker. */
static uint64_t last_vertex(const lp_pag *g, const uint32_t *ov)
{
    uint64_t last = UINT64_MAX;
    for (uint32_t w = 0; w < g->nworkers; w++) {
        if (g->voff[w] == g->voff[w + 1])
            continue;
        uint64_t v = g->voff[w + 1] - 1;
        if (last == UINT64_MAX || g->vtime[v] > g->vtime[last] ||
            (g->vtime[v] == g->vtime[last] && g->vtime[ov[v]] < g->vtime[ov[last]]))
            last = v;
    }
    return last;
}

static int push(lp_cpath *out, size_t *cap, lp_cp_elem x)
{
    if (out->n == *cap) {
        void *p = out->e;
        if (lp_grow(&p, cap, out->n + 1, sizeof *out->e))
            return -1;
        out->e = p;
    }
    out->e[out->n++] = x;
    return 0;
}

/* Pass 2: from the last vertex back to the path's origin, then the elements reversed
 * into time order. */
static lp_status walk_back(const lp_pag *g, const lp_topo *tp, const uint32_t *ov, lp_cpath *out, lp_error *err)
{
    const lp_trace *t = g->t;
    const lp_graph gg = lp_graph_of_pag(g);
    const uint8_t *ign = tp->ncycles ? tp->ignored : NULL;
    dp d = {t->atype, g->vact, g->vtime, NULL}; /* for live() */
    size_t cap = 64;
    if (!(out->e = lp_malloc(cap * sizeof *out->e)))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    uint64_t v = last_vertex(g, ov);
    uint32_t w = lp_pag_vworker(g, v);
    out->end = g->vtime[v];
    for (;;) {
        uint64_t pick;
        lp_lpath_origin_at(&gg, v, v != g->voff[w] && live(&d, v), ov, g->vtime, ign, &pick);
        if (pick == LP_LPATH_NONE)
            break;
        if (pick == LP_LPATH_CHAIN) {
            uint32_t a = g->vact[v];
            lp_cp_elem *p = out->n ? &out->e[out->n - 1] : NULL;
            if (p && p->kind == LP_CP_ACTIVITY && p->index == a && p->start == g->vtime[v])
                p->start = g->vtime[v - 1];
            else if (push(out, &cap, (lp_cp_elem){LP_CP_ACTIVITY, w, a, g->vtime[v - 1], g->vtime[v]}))
                return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            v--;
        } else {
            if (push(out, &cap, (lp_cp_elem){LP_CP_MESSAGE, t->mdst[pick], pick, t->msend[pick], t->mrecv[pick]}))
                return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            v = g->msv[pick];
            w = t->msrc[pick];
        }
    }
    out->start = g->vtime[v];
    out->total = out->end - out->start;
    for (size_t i = 0, n = out->n; i < n / 2; i++) {
        lp_cp_elem x = out->e[i];
        out->e[i] = out->e[n - 1 - i];
        out->e[n - 1 - i] = x;
    }
    return LP_OK;
}

lp_status lp_cpath_compute(const lp_pag *g, lp_cpath *out, lp_error *err)
{
    memset(out, 0, sizeof *out);
    out->nskew = g->t->nskew;
    if (g->nv == 0)
        return LP_OK;
    lp_topo tp;
    lp_topo_init(&tp);
    uint32_t *ov = lp_malloc(g->nv * sizeof *ov);
    lp_status st;
    if (!ov) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto done;
    }
    lp_hint_huge(ov, g->nv * sizeof *ov);
    if ((st = origins(g, &tp, ov, err)) || (st = walk_back(g, &tp, ov, out, err)))
        goto done;
    out->ncycles = tp.ncycles;
done:
    if (st) {
        lp_free(out->e);
        out->e = NULL;
        out->n = 0;
    }
    lp_free(ov);
    lp_topo_release(&tp);
    return st;
}
