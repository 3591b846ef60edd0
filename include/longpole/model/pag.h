/* pag.h: the program activity graph of a trace (MODEL.md "Model", SnailTrail Def. 3).
 *
 * Vertices are the distinct instants of each worker's timeline at which an activity
 * starts or ends or a message is sent or received; worker w's vertices are
 * [voff[w], voff[w+1]) in strictly increasing time. The worker edge into vertex v
 * (v not the first of its worker) runs from v-1 to v and is part of activity vact[v]
 * (an activity that spans a message instant is cut there, so one activity may be
 * several edges; zero-length activities are instants and make no edge). Communication
 * edges run from msv[m] to mrv[m]; the messages received at v are
 * inmsg[vin[v] .. vin[v+1]), in message order. Messages flagged LP_MSG_SKEW have
 * vertices but no edge (a received-before-sent edge would run backwards in time).
 *
 * Memory: 16 bytes per vertex and 12 per message, built in O(V + M) plus sorting any
 * messages that are out of time order.
 */
#ifndef LONGPOLE_PAG_H
#define LONGPOLE_PAG_H

#include <stdint.h>
#include "longpole/model/trace.h"

typedef struct lp_pag {
    const lp_trace *t;
    uint32_t nworkers;
    uint64_t nv;          /* vertices */
    uint64_t nwedges;     /* worker edges (vertices with vact != LP_NONE32) */
    uint64_t ncedges;     /* communication edges (non-skewed messages) */
    uint64_t *voff;       /* [nworkers+1] */
    int64_t *vtime;       /* [nv] */
    uint32_t *vact;       /* [nv] activity of the worker edge ending here, LP_NONE32 if none */
    uint32_t *vin;        /* [nv+1] offsets into inmsg */
    uint32_t *inmsg;      /* [ncedges] messages by receive vertex */
    uint32_t *msv, *mrv;  /* [nmsgs] send and receive vertex of every message */
} lp_pag;

lp_status lp_pag_build(const lp_trace *t, lp_pag *g, lp_error *err);
/* Traces with at least this many activities + messages are built on two threads (the
 * graph is the same); tests and benchmarks may change it. Default 200000. */
extern uint64_t lp_pag_parallel_min;
void lp_pag_release(lp_pag *g);

/* Worker of vertex v (binary search). */
uint32_t lp_pag_vworker(const lp_pag *g, uint64_t v);

/* Is the worker edge into v on a possible path (exists and is not `waiting`)? */
static inline int lp_pag_wedge_live(const lp_pag *g, uint64_t v)
{
    return g->vact[v] != UINT32_MAX && g->t->atype[g->vact[v]] != LP_TYPE_WAITING;
}

#endif
