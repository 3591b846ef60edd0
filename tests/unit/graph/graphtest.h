/* graphtest.h: small random chain graphs for the graph kernels' tests, in every form
 * lp_graph accepts (link ids or slots, source chains or not, a strided source column),
 * and the naive helpers the kernels are checked against (reachability by search, paths
 * by enumeration).
 *
 * Vertices get times, strictly increasing along each chain; a link never runs back in
 * time. In acyclic graphs a link u -> v also has time[u] < time[v], or equal times and
 * chain[u] < chain[v], so (time, chain) orders every edge; otherwise zero-time links
 * run either way between chains (and, rarely, from a vertex to itself), which makes
 * zero-time cycles. */
#ifndef LP_TEST_GRAPHTEST_H
#define LP_TEST_GRAPHTEST_H

#include "longpole/graph/graph.h"
#include "longpole/graph/lpath.h"
#include "longpole/graph/pathcount.h"
#include "longpole/graph/topo.h"
#include <stdint.h>
#include <string.h>

#define TG_MAXC 5
#define TG_MAXV 24
#define TG_MAXL 16

static uint64_t tg_rng = 0x9E3779B97F4A7C15ULL;
static inline uint32_t tg_rnd(uint32_t n)
{
    tg_rng ^= tg_rng << 13;
    tg_rng ^= tg_rng >> 7;
    tg_rng ^= tg_rng << 17;
    return (uint32_t)(tg_rng % n);
}

typedef struct tg {
    uint32_t nc, nv, nl;
    uint64_t coff[TG_MAXC + 1];
    int64_t time[TG_MAXV];
    uint32_t chain[TG_MAXV];
    uint32_t lsrc[TG_MAXL], ldst[TG_MAXL]; /* link by id */
    uint8_t clive[TG_MAXV];                /* chain edge into v usable */
    /* CSR of the links into each vertex */
    uint32_t ein[TG_MAXV + 1];
    uint32_t eid[TG_MAXL];                 /* slot -> link id */
    uint32_t ssrc[TG_MAXL];                /* source by slot (the form without eid) */
    uint32_t ssrc2[2 * TG_MAXL];           /* the same, strided: {source, junk} pairs */
    uint32_t schain[TG_MAXL];              /* chain of the source by slot */
    uint32_t echain[TG_MAXL];              /* chain of the source by link id */
} tg;

/* A random graph; cyclic: zero-time links in both directions allowed. */
static inline void tg_make(tg *g, int cyclic)
{
    memset(g, 0, sizeof *g);
    g->nc = 1 + tg_rnd(TG_MAXC);
    uint32_t v = 0;
    for (uint32_t c = 0; c < g->nc; c++) {
        g->coff[c] = v;
        uint32_t len = tg_rnd(6);
        int64_t t = tg_rnd(3);
        for (uint32_t i = 0; i < len && v < TG_MAXV; i++, v++) {
            g->time[v] = t;
            g->chain[v] = c;
            g->clive[v] = tg_rnd(5) != 0;
            t += 1 + tg_rnd(cyclic ? 2 : 3);
        }
    }
    g->coff[g->nc] = g->nv = v;
    uint32_t want = v ? tg_rnd(TG_MAXL + 1) : 0;
    for (uint32_t tries = 0; g->nl < want && tries < 200; tries++) {
        uint32_t a = tg_rnd(v), b = tg_rnd(v);
        int ok;
        if (cyclic)
            ok = g->time[a] < g->time[b] || (g->time[a] == g->time[b] && (a != b || tg_rnd(8) == 0));
        else
            ok = g->time[a] < g->time[b] || (g->time[a] == g->time[b] && g->chain[a] < g->chain[b]);
        if (!ok)
            continue;
        g->lsrc[g->nl] = a;
        g->ldst[g->nl++] = b;
    }
    /* slots by target vertex; link ids in creation order, so slots and ids differ */
    uint32_t k = 0;
    for (uint32_t x = 0; x < v; x++) {
        g->ein[x] = k;
        for (uint32_t e = 0; e < g->nl; e++)
            if (g->ldst[e] == x) {
                g->eid[k] = e;
                g->ssrc[k] = g->lsrc[e];
                g->ssrc2[2 * k] = g->lsrc[e];
                g->ssrc2[2 * k + 1] = 0xDEADBEEF;
                g->schain[k] = g->chain[g->lsrc[e]];
                k++;
            }
    }
    g->ein[v] = k;
    for (uint32_t e = 0; e < g->nl; e++)
        g->echain[e] = g->chain[g->lsrc[e]];
}

/* The lp_graph of g in one of four forms: 0 link ids + source chains (the PAG's form),
 * 1 slots as links, 2 slots as links with a strided source column, 3 link ids without
 * source chains. In forms 1 and 2 a kernel's link id is a slot: tg_link maps it back. */
static inline lp_graph tg_graph(const tg *g, int form)
{
    lp_graph x = {g->nv, g->nc, g->coff, g->nl, g->ein, NULL, NULL, 1, NULL};
    switch (form) {
    case 0: x.eid = g->eid, x.esrc = g->lsrc, x.echain = g->echain; break;
    case 1: x.esrc = g->ssrc; break;
    case 2: x.esrc = g->ssrc2, x.estride = 2; break;
    default: x.eid = g->eid, x.esrc = g->lsrc; break;
    }
    return x;
}

/* The link id (creation order) of a kernel's link id in form `form`. */
static inline uint32_t tg_link(const tg *g, int form, uint32_t e)
{
    return form == 1 || form == 2 ? g->eid[e] : e;
}

/* Does u reach v (u == v counts) over chain edges and the links not in skip (by link
 * id, NULL: none)? */
static inline int tg_reaches(const tg *g, uint32_t u, uint32_t v, const uint8_t *skip)
{
    uint8_t seen[TG_MAXV] = {0};
    uint32_t stk[TG_MAXV], sp = 0;
    stk[sp++] = u;
    seen[u] = 1;
    while (sp) {
        uint32_t x = stk[--sp];
        if (x == v)
            return 1;
        if (x + 1 < g->nv && g->chain[x + 1] == g->chain[x] && !seen[x + 1])
            seen[x + 1] = 1, stk[sp++] = x + 1;
        for (uint32_t e = 0; e < g->nl; e++)
            if (g->lsrc[e] == x && !(skip && skip[e]) && !seen[g->ldst[e]])
                seen[g->ldst[e]] = 1, stk[sp++] = g->ldst[e];
    }
    return 0;
}

/* Has the graph a cycle (a link u -> v with v reaching u)? */
static inline int tg_cyclic(const tg *g)
{
    for (uint32_t e = 0; e < g->nl; e++)
        if (tg_reaches(g, g->ldst[e], g->lsrc[e], NULL))
            return 1;
    return 0;
}

/* Is the chain edge into v usable (v not first in its chain, and clive)? */
static inline int tg_chain_usable(const tg *g, uint32_t v)
{
    return v > g->coff[g->chain[v]] && g->clive[v];
}

#endif
