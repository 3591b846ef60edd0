/* topo.h: a dependency (topological) order of a chain graph (graph.h), built chain by
 * chain, that breaks zero-time cycles and counts them (MODEL.md "Critical paths",
 * SnailTrail §3.2: the order the critical path and the path counts are computed in).
 *
 * A vertex is ready once its chain predecessor and the sources of its links are
 * visited. Chains run as far as they can; a vertex whose link comes from a source not
 * yet visited suspends its chain and pushes the source's chain on a stack (target:
 * that source), so every vertex and slot is examined once and the walk stays on one
 * chain's arrays for long runs. A chain needed while it is already on the stack closes
 * a cycle (in a time graph only zero-time links can): that link is ignored (flag in
 * `ignored`, indexed by link id) and counted in ncycles, and the vertex is examined
 * again. The order is a function of the graph alone: the same arrays give the same
 * order, ignored links and count.
 *
 * Whether a source is visited: when the graph names the chain of every link's source
 * (echain), from the chains' positions (cur); otherwise from a bitset of visited
 * vertices, written in bulk (whole words) when a chain's run stops: the sources in the
 * running chain's current run are recognised by position. Either way the caller's
 * per-vertex arrays are never read before they are written.
 *
 * Use: lp_topo_begin once per graph, then lp_topo_advance(c, lim) brings chain c to
 * position lim (its first lim vertices visited, along with everything they need), in
 * any sequence of calls (time slices, or each chain to its end: lp_topo_advance_all).
 * The walk calls the caller's visitor at each vertex as it becomes ready; the walk is
 * inline so that the visitor (a static function of the caller) is compiled into it and
 * one pass both orders and computes. O(V + L) time. Memory: 25 bytes per chain and 1
 * bit per vertex, plus 1 byte per link once a cycle is broken; the buffers are
 * grow-only and reused from graph to graph.
 */
#ifndef LONGPOLE_GRAPH_TOPO_H
#define LONGPOLE_GRAPH_TOPO_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/graph/graph.h"

#if defined(__GNUC__)
#define LP_TOPO_INLINE static inline __attribute__((always_inline))
#else
#define LP_TOPO_INLINE static inline
#endif

typedef struct lp_topo {
    uint64_t ncycles;        /* links ignored to break cycles since lp_topo_begin */
    uint8_t *ignored;        /* [ne] 1: link ignored; NULL, or all 0, while ncycles is 0 */
    uint64_t norder;         /* vertices visited since lp_topo_begin */
    /* scratch (grow-only; capacities in elements) */
    size_t cap_c, cap_v, cap_e;
    uint64_t *cur;           /* [nchains] vertices of each chain visited */
    uint32_t *stk;           /* [nchains] chains waiting, the running one on top */
    uint64_t *target;        /* [nchains] position each waiting chain must reach */
    uint8_t *onstk;          /* [nchains] chain is on the stack */
    uint64_t *done;          /* [nv/64+1] bitset of visited vertices (graphs without echain) */
} lp_topo;

/* The visitor: vertex v of g is ready (its chain predecessor, if pos > 0, and the
 * sources of its links other than ignored ones are visited); pos is its position in its
 * chain. ign is NULL while no link is ignored, else the flags by link id (skip those
 * links). g is the walk's own copy of the graph: read the graph through it, so that
 * the compiler keeps its fields in registers. */
typedef void (*lp_topo_visit)(void *ctx, const lp_graph *g, uint64_t v, uint64_t pos, const uint8_t *ign);

void lp_topo_init(lp_topo *tp);
void lp_topo_release(lp_topo *tp);
lp_status lp_topo_begin_(lp_topo *tp, uint64_t nv, uint32_t nchains, lp_error *err);
/* Start a walk of g: grow the scratch, clear the marks, the ignored flags of an earlier
 * walk, ncycles and norder. LP_ERR_NOMEM. */
static inline lp_status lp_topo_begin(lp_topo *tp, const lp_graph *g, lp_error *err)
{
    return lp_topo_begin_(tp, g->nv, g->nchains, err);
}
/* Was link e ignored (to break a cycle)? */
static inline int lp_topo_ignored(const lp_topo *tp, uint32_t e)
{
    return tp->ncycles && tp->ignored[e];
}

/* ---- the walk (internal helpers first) ------------------------------------------------ */

/* Mark vertices [lo, hi) visited. */
static inline void lp_topo_mark_(uint64_t *done, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return;
    uint64_t a = lo >> 6, z = (hi - 1) >> 6;
    uint64_t ma = ~UINT64_C(0) << (lo & 63), mz = ~UINT64_C(0) >> (63 - ((hi - 1) & 63));
    if (a == z) {
        done[a] |= ma & mz;
        return;
    }
    done[a] |= ma;
    for (uint64_t i = a + 1; i < z; i++)
        done[i] = ~UINT64_C(0);
    done[z] |= mz;
}

/* Ignore link e of a graph of ne links (a cycle through it was found); returns the
 * flags, NULL if they could not be allocated. */
uint8_t *lp_topo_ignore_(lp_topo *tp, uint64_t ne, uint32_t e);

/* The walk of lp_topo_advance, given the graph by value (so that what the caller's
 * graph fixes, such as a NULL eid or an estride of 1, is folded into the code). */
LP_TOPO_INLINE lp_status lp_topo_walk_(lp_topo *tp, const lp_graph gl, uint32_t c0, uint64_t lim, uint32_t *order,
                                       lp_topo_visit plain, lp_topo_visit joined, void *ctx, lp_error *err)
{
    uint64_t *cur = tp->cur, *target = tp->target, *done = tp->done;
    uint32_t *stk = tp->stk;
    uint8_t *onstk = tp->onstk;
    uint8_t *ign = tp->ncycles ? tp->ignored : NULL;
    const uint64_t *coff = gl.coff;
    const uint32_t *ein = gl.ein;
    const int bypos = gl.echain != NULL; /* readiness from positions, else from marks */
    uint64_t no = tp->norder;
    size_t sp = 0;
    stk[sp] = c0;
    target[sp++] = lim;
    onstk[c0] = 1;
    while (sp) {
        uint32_t w = stk[sp - 1];
        uint64_t tgt = target[sp - 1], base = coff[w], c = cur[w], fl = c; /* [fl, c): this run, unmarked */
        int pushed = 0;
        while (c < tgt) {
            uint64_t v = base + c;
            if (ein[v] == ein[v + 1]) { /* no link in: the common, fast case */
                plain(ctx, &gl, v, c, ign);
                if (order)
                    order[no++] = (uint32_t)v;
                c++;
                continue;
            }
            if (bypos)
                cur[w] = c;
            /* wait for the sources of v's links */
            uint64_t blocked = UINT64_MAX;
            for (uint64_t k = ein[v]; k < ein[v + 1]; k++) {
                uint32_t e = lp_graph_link(&gl, k);
                if (ign && ign[e])
                    continue;
                uint32_t u = lp_graph_src(&gl, e);
                int ready;
                if (bypos) {
                    uint32_t x = gl.echain[e];
                    ready = u < coff[x] + cur[x];
                } else {
                    ready = ((done[u >> 6] >> (u & 63)) & 1) || (u >= base + fl && u < v);
                }
                if (!ready) {
                    blocked = k;
                    break;
                }
            }
            if (blocked != UINT64_MAX) {
                uint32_t e = lp_graph_link(&gl, blocked), u = lp_graph_src(&gl, e);
                uint32_t x = bypos ? gl.echain[e] : lp_chain_find(coff, gl.nchains, u);
                if (onstk[x]) { /* a cycle: ignore this link, look at v again */
                    if (!(ign = lp_topo_ignore_(tp, gl.ne, e))) {
                        tp->norder = no;
                        return lp_error_set(err, LP_ERR_NOMEM, "out of memory breaking a cycle");
                    }
                    continue;
                }
                stk[sp] = x;
                target[sp++] = u - coff[x] + 1;
                onstk[x] = 1;
                pushed = 1;
                break;
            }
            joined(ctx, &gl, v, c, ign);
            if (order)
                order[no++] = (uint32_t)v;
            c++;
        }
        if (!bypos)
            lp_topo_mark_(done, base + fl, base + c);
        cur[w] = c;
        if (!pushed) {
            onstk[w] = 0;
            sp--;
        }
    }
    tp->norder = no;
    return LP_OK;
}

/* Bring chain c0 to position lim (at most its length), visiting every vertex this needs
 * in dependency order: plain(ctx, g, v, pos, ign) for a vertex without link slots,
 * joined(...) for one with. When order is not NULL, each visited vertex is appended
 * at order[tp->norder++] (order holds nv entries). LP_ERR_NOMEM (only when a cycle
 * is broken for the first time) leaves the walk unusable. */
LP_TOPO_INLINE lp_status lp_topo_advance(lp_topo *tp, const lp_graph *g, uint32_t c0, uint64_t lim, uint32_t *order,
                                         lp_topo_visit plain, lp_topo_visit joined, void *ctx, lp_error *err)
{
    if (tp->cur[c0] >= lim)
        return LP_OK;
    const lp_graph gl = *g;
    /* one copy of the walk for the PAG's form (link ids and source chains), one for any
     * other; where the caller's graph has them as NULL constants only the second is
     * compiled, its tests folded away */
    if (gl.eid && gl.echain)
        return lp_topo_walk_(tp, gl, c0, lim, order, plain, joined, ctx, err);
    return lp_topo_walk_(tp, gl, c0, lim, order, plain, joined, ctx, err);
}

/* Visit every vertex of g (each chain brought to its end, lowest chain first), after
 * lp_topo_begin. */
LP_TOPO_INLINE lp_status lp_topo_advance_all(lp_topo *tp, const lp_graph *g, uint32_t *order, lp_topo_visit plain,
                                             lp_topo_visit joined, void *ctx, lp_error *err)
{
    for (uint32_t c = 0; c < g->nchains; c++) {
        lp_status st = lp_topo_advance(tp, g, c, g->coff[c + 1] - g->coff[c], order, plain, joined, ctx, err);
        if (st)
            return st;
    }
    return LP_OK;
}

/* The order alone: begin, then every vertex into order[0 .. nv) (order may be NULL to
 * get only the ignored links and ncycles). */
lp_status lp_topo_run(lp_topo *tp, const lp_graph *g, uint32_t *order, lp_error *err);

#endif
