/* cpath.h: the whole-trace critical path (MODEL.md "Critical paths"; classic CPA,
 * SnailTrail §2 Definition 4).
 *
 * Definition used (docs/analyses/critical-path.md): the critical path is the longest
 * path in the PAG that ends at the trace's last vertex and uses no `waiting` edge.
 * Because every edge's weight is its end time minus its start time, a path's weight
 * is the time between its ends, so the longest path is the one reaching back to the
 * earliest instant. Walking back from the end, at each vertex it takes the incoming
 * worker edge unless that edge is `waiting` or missing, and otherwise the message that
 * ended the wait, exactly as MODEL.md describes; when a received message leads back
 * strictly further than the worker edge, the message is taken (Definition 4: longest).
 * Ties are broken deterministically: the last vertex is the latest, then the one whose
 * path reaches back furthest, then the lowest worker id; at a vertex the worker edge
 * beats a message of equal reach, and among messages the lowest message index wins.
 * Computed by one dynamic-programming pass over the PAG in dependency order (each
 * vertex and edge visited once) and one walk back along the path; or, with the same
 * result, over the trace's timelines without building the PAG (lp_cpath_trace).
 */
#ifndef LONGPOLE_CPATH_H
#define LONGPOLE_CPATH_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/model/pag.h"

typedef enum lp_cp_kind { LP_CP_ACTIVITY = 0, LP_CP_MESSAGE = 1 } lp_cp_kind;

/* One element of the path, in time order. An activity element may be a part of an
 * activity (when the path enters or leaves it at a message instant). */
typedef struct lp_cp_elem {
    lp_cp_kind kind;
    uint32_t worker;   /* activity: its worker; message: the receiver */
    uint64_t index;    /* activity or message index */
    int64_t start, end;/* the part on the path (message: send, receive) */
} lp_cp_elem;

typedef struct lp_cpath {
    lp_cp_elem *e;     /* elements in time order */
    size_t n;
    int64_t start, end;/* the path's first and last instants */
    int64_t total;     /* end - start == sum of element weights */
    uint64_t ncycles;  /* zero-time message cycles broken (each ignores one message) */
    uint64_t nskew;    /* skewed messages left out of the graph */
} lp_cpath;

lp_status lp_cpath_compute(const lp_pag *g, lp_cpath *out, lp_error *err);
/* The same path, element for element, computed straight from the trace's columns
 * without the PAG (cptrace.c: the same dependency-order walk over the workers'
 * timelines, keeping one origin time per message instead of arrays per vertex):
 * 16 bytes per message while it runs, then the elements. `cp` uses it; the PAG form
 * stays for callers that have the graph anyway, and as its differential twin
 * (tests/unit/critical-path/test_cptrace.c). */
lp_status lp_cpath_trace(const lp_trace *t, lp_cpath *out, lp_error *err);
void lp_cpath_release(lp_cpath *cp);

#endif
