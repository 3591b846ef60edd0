/* reqpath.h: the critical path and slack of one request (Mystery Machine, OSDI'14 §4.2-4.3).
 *
 * The request's segments are the vertices, weighted by their durations. Edges (all
 * from an earlier to a later segment in the request's order, see below):
 *  - task order: each segment to the next segment of its task;
 *  - the model's relationships, made dynamic: A -> B happens-before gives A -> B if B
 *    started at or after A ended in this request; A | B mutual exclusion gives an edge
 *    from whichever ran first to the other; a relationship this request contradicts
 *    (B started before A ended) gives no edge and is counted as a model violation;
 *    concurrent and unobserved pairs give none.
 * The request's order sorts segments by (start, end, static topological position of
 * the model, segment id): every edge above goes forward in it, so the graph is a DAG.
 * Then the transitive reduction (A -> C removed when A -> B -> C exists), which keeps
 * every longest path (weights are durations, never negative) and fixes which paths
 * tie. The critical path is the longest path between a segment without predecessor
 * and one without successor; equal lengths are broken deterministically: the path's
 * last segment is the latest-ending one (then the earliest in the order), and walking
 * back each step takes, among the predecessors on a longest path, the latest-ending,
 * then one of another task (the dependency that released it, rather than the task's
 * own previous segment), then the earliest in the order. Equivalently: among the
 * longest paths, the one whose segments, compared from the end, are smallest in that
 * key (tests/unit/test_reqpath.c checks it against exhaustive enumeration).
 * Slack of a segment S: CP - CPstart(S) - D(S) - CPend(S), with CPstart the longest
 * path ending just before S and CPend the longest starting just after it: how much S
 * may grow, all else equal, before the request gets slower. Zero on the critical path.
 * Times: event times after skew correction, made non-decreasing along each task.
 */
#ifndef LONGPOLE_REQPATH_H
#define LONGPOLE_REQPATH_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/base/status.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/import/reqlog.h"

typedef struct lp_reqpath {
    /* result, indexed by the request's order (0 .. n-1) */
    uint32_t n;         /* segments (filtered segments excluded) */
    uint32_t *seg;      /* model segment */
    uint32_t *task;     /* task id (the log's) */
    int64_t *start, *end, *dur;
    int64_t *cpstart;   /* longest path ending just before the segment */
    int64_t *cpend;     /* longest path starting just after it */
    int64_t *slack;
    uint8_t *oncp;
    uint32_t *path;     /* the critical path, first to last (indices) */
    uint32_t npath;
    int64_t cp;         /* its length: sum of its durations */
    int64_t first, last;/* first and last event of the request */
    int64_t latency;    /* last - first */
    uint32_t edges;     /* edges after transitive reduction */
    uint32_t violations;/* model relationships this request contradicts */
    uint32_t unknown;   /* segments the model never observed */
    uint32_t words;     /* words per bit row of succ for this request: ceil(n / 64) */
    uint64_t *succ;     /* reduced edges: n rows of `words` words */
    /* scratch */
    uint32_t cap, capw;
    uint64_t *reach;
    uint32_t *order, *next, *pos;
    size_t *rowoff;
    void *keys;
    size_t caprows;
    int64_t *evt, *istart, *iend;
    uint32_t *iseg, *itask;
} lp_reqpath;

void lp_reqpath_init(lp_reqpath *p);
void lp_reqpath_release(lp_reqpath *p);

/* Compute request r of a log (map: log segment -> model segment, from lp_causal_map;
 * the model must be finished). */
lp_status lp_reqpath_compute(lp_reqpath *p, const lp_causal *m, const lp_reqlog *rl, const uint32_t *map, uint64_t r,
                             lp_error *err);

/* The same from explicit segments, listed task by task in task order: model segment
 * (or LP_CAUSAL_NONE), task, start, end (start <= end). For tests and other sources. */
lp_status lp_reqpath_solve(lp_reqpath *p, const lp_causal *m, size_t n, const uint32_t *seg, const uint32_t *task,
                           const int64_t *start, const int64_t *end, lp_error *err);

/* Is there an edge i -> j after reduction (indices in the request's order)? */
static inline int lp_reqpath_edge(const lp_reqpath *p, uint32_t i, uint32_t j)
{
    return (int)((p->succ[(size_t)i * p->words + (j >> 6)] >> (j & 63)) & 1u);
}

#endif
