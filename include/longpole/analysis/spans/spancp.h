/* spancp.h: the critical path of a span tree (Jaeger UI's algorithm) and its
 * aggregation over many traces at trace-latency percentiles (CRISP, Zhang et al.,
 * ATC'22). Definitions: docs/analyses/span-critical-path.md.
 *
 * Per trace (lp_spancp_trace), from the root chosen by lp_spans_finish:
 *  - the tree: children the parent waits for (lp_spans_blocking) that fall inside it
 *    (lp_spans_within), clipped to it, recursively (children of clipped spans are
 *    clipped to the clipped span); asynchronous and outside children, and everything
 *    under them, are left out;
 *  - the walk: from the root's end, take the last-finishing child; inside it do the
 *    same; coming back up to a parent at a child's start, take the latest child that
 *    finished at or before that instant; a parent's time between the children so
 *    taken is its own. Ties: the child that started first, then the smaller span id
 *    (never the input order: a trace gives one path whatever order its spans come in).
 * The result is a list of sections (span, start, end), in time order, disjoint and
 * adjacent, covering the root's run exactly: their lengths sum to the trace latency.
 * What the walk did to the data is counted per trace (docs/trust.md: never silent):
 * children clipped to their parent and the time cut off them (a child that starts
 * before its parent or ends after it: usually clock skew between hosts), children the
 * parent waits for that fall outside it and were left out (with everything under them),
 * and asynchronous children left out by definition.
 * O(n log n) per trace (children sorted once), no recursion.
 *
 * Over traces (lp_spancp_agg): for every trace, each span's exclusive critical-path
 * time (the sum of its sections), keyed by "service operation" and by call path (the
 * chain of service/operation from the root). For a percentile P, the set is the
 * ceil(n*P/100) fastest traces (nearest rank; P=100 is all), as CRISP sets "P95" as the
 * traces up to the 95th percentile of latency; per key: total and mean time per trace
 * of the set, share of the set's summed latency, the largest time in one trace, and in
 * how many traces of the set the key is on the path.
 */
#ifndef LONGPOLE_SPANCP_H
#define LONGPOLE_SPANCP_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/model/span.h"

typedef struct lp_spancp_section {
    uint32_t span;        /* span index in the table */
    int64_t start, end;   /* ns, start < end */
} lp_spancp_section;

typedef struct lp_spancp_visit {
    uint32_t span;        /* a span the walk entered (parents before their children) */
    int64_t excl;         /* its exclusive critical-path time (sum of its sections; may be 0) */
} lp_spancp_visit;

/* The critical path of one trace, and the workspace reused from trace to trace. */
typedef struct lp_spancp {
    uint32_t trace, root; /* root: LP_SPAN_NONE if the trace had no root */
    int64_t start, latency; /* the root's run: [start, start + latency] */
    uint64_t nclipped;    /* spans clipped to their (clipped) parent */
    int64_t clipped_ns;   /* time cut off them */
    uint64_t noutside;    /* waited-on children outside their parent: left out */
    uint64_t nasync;      /* children not waited on (FOLLOWS_FROM, CONSUMER under PRODUCER): left out */
    lp_spancp_section *sec; /* in time order */
    size_t nsec, capsec;
    lp_spancp_visit *visit;
    size_t nvisit, capvisit;
    /* workspace (sized for the largest trace so far) */
    uint32_t *local;      /* [table size] span -> index in the trace (valid for the trace's spans) */
    int64_t *cs, *ce;     /* clipped run, by local index */
    uint32_t *koff, *kids, *cursor, *stack;
    size_t cap, captable;
    void *sortbuf;        /* children's sort keys (the largest family so far, twice) */
    size_t capsort;
} lp_spancp;

void lp_spancp_init(lp_spancp *cp);
void lp_spancp_release(lp_spancp *cp);
/* Compute the critical path of trace t of a finished table. */
lp_status lp_spancp_trace(lp_spancp *cp, const lp_spans *sp, uint32_t t, lp_error *err);

/* ---- aggregation ------------------------------------------------------------------ */

typedef struct lp_spancp_agg lp_spancp_agg;

lp_status lp_spancp_agg_new(lp_spancp_agg **out, const lp_spans *sp, lp_error *err);
void lp_spancp_agg_free(lp_spancp_agg *a);
/* Add the critical path of one trace (a trace without root is ignored). */
lp_status lp_spancp_agg_add(lp_spancp_agg *a, const lp_spancp *cp, lp_error *err);
uint64_t lp_spancp_agg_traces(const lp_spancp_agg *a);

typedef struct lp_spancp_row {
    uint32_t id;          /* operation index or call-path node */
    int64_t total;        /* exclusive critical-path time over the traces of the set, ns */
    int64_t max;          /* the largest in one trace */
    uint64_t traces;      /* traces of the set in which it is on the critical path */
} lp_spancp_row;

typedef struct lp_spancp_pct {
    double p;             /* the percentile (0 < p <= 100) */
    uint64_t ntraces;     /* traces in the set: the ceil(n*p/100) fastest */
    int64_t latency;      /* the largest latency in the set (the percentile's value) */
    int64_t latency_sum;  /* summed latency of the set */
    lp_spancp_row *ops;   /* by "service operation", largest total first */
    size_t nops;
    lp_spancp_row *paths; /* by call path, largest total first */
    size_t npaths;
} lp_spancp_pct;

/* Tables for each percentile of p[0..np) (any order). Free with lp_spancp_pct_free. */
lp_status lp_spancp_agg_percentiles(lp_spancp_agg *a, const double *p, size_t np, lp_spancp_pct **out, lp_error *err);
void lp_spancp_pct_free(lp_spancp_pct *pct, size_t np);

/* Names: an operation's service and operation; a call path as frames from the root,
 * each "[service] operation", joined by sep (";" in folded stacks, where ';' and line
 * breaks inside names become '_'). Returns the length needed (like snprintf). */
void lp_spancp_op_names(const lp_spancp_agg *a, uint32_t op, const char **service, const char **operation);
size_t lp_spancp_path_format(const lp_spancp_agg *a, uint32_t node, const char *sep, char *buf, size_t size);
/* The operations of a call path, root first, into ops[0..max); returns the depth. */
size_t lp_spancp_path_ops(const lp_spancp_agg *a, uint32_t node, uint32_t *ops, size_t max);
/* The operation of a call-path node's last frame, and the node's depth (1 = root). */
uint32_t lp_spancp_path_op(const lp_spancp_agg *a, uint32_t node);
uint32_t lp_spancp_path_depth(const lp_spancp_agg *a, uint32_t node);

/* ---- a trace's path as bytes (sharded runs: `longpole dist spans`, docs/distributed.md)
 * K processes load the same span files (so the same table and trace numbering); trace t
 * belongs to part t mod K, whose process computes its path and packs it; one process
 * unpacks every path and adds them to its aggregate in trace order, which gives the
 * aggregate (and percentiles) of one process adding them itself: every field is copied
 * exactly. Host byte order, a magic word: the processes share a build. */

/* Append cp's result (not its workspace) to buf[0..*len) (grown: *cap; lp_free). */
lp_status lp_spancp_pack(const lp_spancp *cp, uint8_t **buf, size_t *len, size_t *cap, lp_error *err);
/* Read the path at buf[*off..n) into cp (its workspace kept) and advance *off; spans
 * must be the table the path was computed on (indices are checked against nspans).
 * LP_ERR_FORMAT for a short or damaged buffer. */
lp_status lp_spancp_unpack(lp_spancp *cp, const uint8_t *buf, size_t n, size_t *off, uint64_t nspans, lp_error *err);

#endif
