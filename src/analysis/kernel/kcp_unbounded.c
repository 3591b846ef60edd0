/* kcp_unbounded.c: the unbounded critical path (docs/analyses/kernel-critical-path.md
 * "Unbounded"): the expected answers Trace Compass's GraphFactory states for its
 * unbounded algorithm, which Trace Compass itself no longer ships.
 *
 * One walk back from the end of the interval: at each vertex take the incoming
 * horizontal edge unless it is resolvable-blocked (or missing), else the incoming link
 * (wherever it comes from: a wake-up is followed back as far as its waker's history
 * goes, not only to the start of the blocked interval); a resolvable blocked edge with no
 * link into its end stays on the path, unexplained. At a dead end (a vertex with neither:
 * a worker's history starting with no recorded cause) on another worker, the walk
 * returns to the thread: the time between the thread's last vertex before the dead end
 * and the dead end is a gap on the thread. It stops at the query start. Every step goes
 * back along an edge or link, or strictly back on the thread, so it ends; a step count
 * beyond the graph's size can only come from a cycle in a damaged graph and is an error.
 * O(path length) plus a binary search per worker change.
 */
#include "analysis/kernel/kcp_int.h"
#include "longpole/base/alloc.h"

/* The thread's latest vertex before index `before` at or before time t, LP_NONE32 if none. */
static uint32_t back_on_thread(const lp_kgraph *g, uint32_t w, uint32_t before, int64_t t)
{
    uint32_t lo = g->voff[w], hi = before; /* answer in [lo, hi) */
    if (hi <= lo || g->vt[lo] > t)
        return LP_NONE32;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->vt[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

lp_status kcp_unbounded(const lp_kgraph *g, uint32_t w, int64_t s, int64_t e, kitems *out, lp_error *err)
{
    uint32_t first = g->voff[w], last = g->voff[w + 1] - 1;
    uint32_t z = first; /* the thread's first vertex at or after e */
    while (z < last && g->vt[z] < e)
        z++;
    uint32_t cw = w, cfirst = first, lastT = z;
    uint64_t limit = 2 * ((uint64_t)g->nv + g->nlinks) + 2, steps = 0;
    size_t mark = out->n;
    int bad = 0;
    while (g->vt[z] > s) {
        if (++steps > limit)
            return lp_error_set(err, LP_ERR_DATA, "the execution graph has a cycle (at vertex %u)", z);
        uint32_t l = g->vin[z];
        int horiz = kcp_has_in_edge(g, z, cfirst);
        if (horiz && !lp_kstate_resolvable(g->vstate[z - 1], g->vreason[z - 1])) {
            bad |= kitems_push(out, KI_EDGE, z - 1, 0, 0);
            z--;
        } else if (horiz && l == LP_NONE32) {
            bad |= kitems_push(out, KI_UNEXPL, z - 1, 0, 0);
            z--;
        } else if (l != LP_NONE32) {
            bad |= kitems_push(out, KI_LINK, l, 0, 0);
            z = g->lfrom[l];
            cw = lp_kgraph_vworker(g, z);
            cfirst = g->voff[cw];
        } else {
            uint32_t u = back_on_thread(g, w, cw == w ? z : lastT, g->vt[z]);
            if (u == LP_NONE32)
                break; /* the thread's own first vertex */
            bad |= kitems_push(out, KI_GAP, w, g->vt[u], g->vt[z]);
            z = u;
            cw = w;
            cfirst = first;
        }
        if (cw == w)
            lastT = z;
    }
    if (bad)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    kitems_reverse(out, mark);
    return LP_OK;
}
