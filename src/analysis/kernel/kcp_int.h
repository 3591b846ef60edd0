/* kcp_int.h: what the two critical-path walks (kcp_bounded.c, kcp_unbounded.c) produce,
 * and the step that turns it into path elements (kcp.c). Internal.
 *
 * A walk produces items: graph edges and links it chose, blocked edges it kept
 * unexplained, and gaps, in time order (forward). Gluing lays them end to end from the
 * query start: an item that starts before the path's current end is clipped (a link
 * sent before the blocked interval began, a waker's edge that straddles it), one that
 * starts after it is preceded by a gap on its worker, and everything is clipped to the
 * query end.
 */
#ifndef LP_KCP_INT_H
#define LP_KCP_INT_H

#include "longpole/analysis/kernel/kcpath.h"

enum { KI_EDGE = 0, KI_LINK, KI_UNEXPL, KI_GAP };

typedef struct kitem {
    uint8_t kind;       /* KI_* */
    uint32_t ref;       /* EDGE, UNEXPL: the edge's start vertex; LINK: the link; GAP: its worker */
    int64_t t0, t1;     /* GAP only */
} kitem;

typedef struct kitems {
    kitem *it;
    size_t n, cap;
} kitems;

int kitems_push(kitems *l, uint8_t kind, uint32_t ref, int64_t t0, int64_t t1);
void kitems_reverse(kitems *l, size_t from);

/* Glue forward items into cp (its start, end and worker set), clipping to [cp->start, cp->end]. */
lp_status kcp_glue(const lp_kgraph *g, const kitems *items, lp_kcp *cp, lp_error *err);

/* The walks: forward items covering [s, e] for worker w. */
lp_status kcp_bounded(const lp_kgraph *g, uint32_t w, int64_t s, int64_t e, kitems *out, lp_error *err);
lp_status kcp_unbounded(const lp_kgraph *g, uint32_t w, int64_t s, int64_t e, kitems *out, lp_error *err);

/* Does vertex v have an incoming horizontal edge (v is not its worker's first vertex
 * and the edge from v-1 exists)? first = the worker's first vertex. */
static inline int kcp_has_in_edge(const lp_kgraph *g, uint32_t v, uint32_t first)
{
    return v > first && g->vstate[v - 1] != LP_KS_NONE;
}

#endif
