/* graph.h: a directed graph as plain arrays, the one form every kernel of the graph
 * layer reads (topo.h: dependency order with cycle breaking; lpath.h: longest paths;
 * pathcount.h: path counts).
 *
 * Vertices 0 .. nv-1 are grouped into chains: chain c holds [coff[c], coff[c+1]), and
 * inside a chain a chain edge runs from v-1 to v (a worker's or a thread's timeline;
 * a graph without such sequences has one vertex per chain, coff[i] = i). Every other
 * edge is a link (a message, a wake-up, a dependency). Links have ids 0 .. ne-1 so
 * that callers keep their own per-link columns (weights, the ignored flags of
 * topo.h); the links into v are the slots ein[v] .. ein[v+1]-1, in CSR form, and slot
 * k names link eid[k] (or link k when eid is NULL: the slots are the links). Link e
 * runs from vertex esrc[e * estride] (estride > 1 reads a field of an array of
 * structs) to the vertex whose slot names it; echain[e], when given, is the chain of
 * that source (else it is found by binary search over coff, O(log chains)).
 *
 * Nothing here owns memory: an lp_graph points into its caller's arrays, which must
 * outlive it. Vertex ids and link ids fit in 32 bits. Adapters: lp_graph_of_pag (the
 * program activity graph: worker edges are chain edges, messages are links, link id =
 * message index); snapshots build theirs beside them (analysis/snailtrail).
 */
#ifndef LONGPOLE_GRAPH_GRAPH_H
#define LONGPOLE_GRAPH_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/model/pag.h"

typedef struct lp_graph {
    uint64_t nv;             /* vertices */
    uint32_t nchains;        /* chains */
    const uint64_t *coff;    /* [nchains+1] chain c = [coff[c], coff[c+1]); coff[nchains] = nv */
    uint64_t ne;             /* link ids are 0 .. ne-1 */
    const uint32_t *ein;     /* [nv+1] slots of the links into v: ein[v] .. ein[v+1]-1 */
    const uint32_t *eid;     /* [ein[nv]] link named by each slot, or NULL: slot k is link k */
    const uint32_t *esrc;    /* source vertex of link e: esrc[e * estride] */
    uint32_t estride;        /* in uint32 units: 1 for a plain column */
    const uint32_t *echain;  /* [ne] chain of link e's source, or NULL (binary search) */
} lp_graph;

/* The link named by slot k. */
static inline uint32_t lp_graph_link(const lp_graph *g, uint64_t k)
{
    return g->eid ? g->eid[k] : (uint32_t)k;
}

/* The source vertex of link e. */
static inline uint32_t lp_graph_src(const lp_graph *g, uint32_t e)
{
    return g->esrc[(size_t)e * g->estride];
}

/* The chain of vertex v < coff[n] among the n chains of coff (binary search; empty
 * chains are skipped). */
uint32_t lp_chain_find(const uint64_t *coff, uint32_t n, uint64_t v);

/* The chain of vertex v < nv. (The inline functions of the graph layer never pass an
 * lp_graph's address to a function that is not inline: a graph built in the caller
 * then stays in registers, its constant fields folded into the kernels.) */
static inline uint32_t lp_graph_chain_of(const lp_graph *g, uint64_t v)
{
    return lp_chain_find(g->coff, g->nchains, v);
}

/* The chain of link e's source. */
static inline uint32_t lp_graph_src_chain(const lp_graph *g, uint32_t e)
{
    return g->echain ? g->echain[e] : lp_graph_chain_of(g, lp_graph_src(g, e));
}

/* The graph of a PAG: chains are workers (voff), links are messages (inmsg by receive
 * vertex, source msv, source chain msrc); skewed messages have no slot. Whether a
 * worker edge is on a possible path (not `waiting`) is the caller's business
 * (lp_pag_wedge_live). */
static inline lp_graph lp_graph_of_pag(const lp_pag *p)
{
    lp_graph g = {p->nv, p->nworkers, p->voff, p->t->nmsgs, p->vin, p->inmsg, p->msv, 1, p->t->msrc};
    return g;
}

#endif
