/* kgraph_topo.c: is the execution graph acyclic? Kahn's algorithm over its edges
 * (consecutive vertices of a worker joined by an edge) and links: O(V + L) time, 8 bytes
 * per vertex. The hand builder runs it on every graph it finishes (the event builder is
 * acyclic by construction). One file, depending only on lp_kgraph's columns, so that it
 * can move to src/graph (the shared graph kernels) with a generic adjacency interface
 * when that layer lands.
 */
#include "analysis/kernel/kgraph_int.h"
#include "longpole/base/alloc.h"

int kgraph_has_cycle(const lp_kgraph *g, uint32_t *at)
{
    uint32_t nv = g->nv;
    uint32_t *indeg = lp_calloc(nv ? nv : 1, 4);
    uint32_t *queue = lp_malloc((nv ? nv : 1) * 4);
    if (!indeg || !queue) {
        lp_free(indeg);
        lp_free(queue);
        return -1;
    }
    /* a vertex's predecessors: the previous vertex of its worker (if an edge joins them)
     * and the source of its incoming link */
    for (uint32_t w = 0; w < g->nworkers; w++)
        for (uint32_t v = g->voff[w]; v + 1 < g->voff[w + 1]; v++)
            if (g->vstate[v] != LP_KS_NONE)
                indeg[v + 1]++;
    for (uint32_t l = 0; l < g->nlinks; l++)
        indeg[g->lto[l]]++;
    uint32_t qh = 0, qt = 0;
    for (uint32_t v = 0; v < nv; v++)
        if (!indeg[v])
            queue[qt++] = v;
    while (qh < qt) {
        uint32_t v = queue[qh++];
        uint32_t w = lp_kgraph_vworker(g, v);
        if (v + 1 < g->voff[w + 1] && g->vstate[v] != LP_KS_NONE && --indeg[v + 1] == 0)
            queue[qt++] = v + 1;
        if (g->vout[v] != LP_NONE32 && --indeg[g->lto[g->vout[v]]] == 0)
            queue[qt++] = g->lto[g->vout[v]];
    }
    int cyc = qt < nv;
    if (cyc && at)
        for (uint32_t v = 0; v < nv; v++)
            if (indeg[v]) {
                *at = v;
                break;
            }
    lp_free(indeg);
    lp_free(queue);
    return cyc;
}
