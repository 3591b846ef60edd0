/* breakdown.h: where the critical path's time goes, next to the conventional profile.
 *
 * For a grouping key (activity type, worker, operator), the breakdown sums the time of
 * the path's elements by key, and, beside it, the conventional profile (SnailTrail
 * §3.3): the plain sum of the durations of all activities by the same key, which is
 * what a profiler would blame. `waiting` time is not busy time: it is left out of the
 * profile (so a worker's profile is its load) and reported as waiting_ns. Gaps that gap
 * filling made `unknown` (uncovered time with no message received at its end) were
 * never activities of the input, so no profiler would count them: they are left out of
 * the profile too and reported as gap_ns (on the path they count, as `unknown`).
 * Message time is its own row ("communication") in both columns. In the profile it is
 * the wall-clock time during which at least one message between two workers is in
 * flight (the union of their [send, receive] intervals), as a profiler would report
 * it: many overlapping asynchronous messages count once, never as if each kept a
 * worker busy (a message to oneself, such as a timer, overlaps that worker's waiting
 * and is left out; so is a skewed one). prof_n counts the messages between two
 * workers. Shares are of the path's total and of the profile's total respectively.
 * Rows are sorted by path time, then profile time, then key.
 */
#ifndef LONGPOLE_BREAKDOWN_H
#define LONGPOLE_BREAKDOWN_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/analysis/critical-path/cpath.h"

typedef enum lp_group { LP_BY_TYPE = 0, LP_BY_WORKER, LP_BY_OPERATOR } lp_group;

#define LP_KEY_COMM UINT32_MAX          /* the communication row */
#define LP_KEY_NONE (UINT32_MAX - 1)    /* activities without an operator */

typedef struct lp_brow {
    uint32_t key;          /* type id, worker id, operator string id, or LP_KEY_* */
    int64_t path_ns;       /* time of this key on the critical path */
    uint64_t path_n;       /* path elements with this key */
    int64_t prof_ns;       /* summed duration of the key's activities (communication: the
                              union of the messages' in-flight intervals) */
    uint64_t prof_n;
} lp_brow;

typedef struct lp_breakdown {
    lp_group by;
    lp_brow *rows;
    size_t n;
    int64_t path_total, prof_total;
    int64_t waiting_ns;    /* waiting time of all workers, not in the profile */
    int64_t gap_ns;        /* `unknown` time made by gap filling, not in the profile */
} lp_breakdown;

lp_status lp_breakdown_compute(const lp_trace *t, const lp_cpath *cp, lp_group by, lp_breakdown *out,
                               lp_error *err);
/* The groupings g with want[g] (indexed by lp_group) in one pass over the trace, into
 * out[g] (the others are left empty); the same rows as lp_breakdown_compute for each.
 * On failure every out[g] is empty. */
lp_status lp_breakdown_compute_set(const lp_trace *t, const lp_cpath *cp, const int want[3], lp_breakdown out[3],
                                   lp_error *err);

/* The same in two steps, so that the profile (which does not depend on the path) can be
 * computed while the path is: lp_bprofile_compute, then lp_breakdown_finish adds a
 * path's columns and makes the rows (it consumes the profile, whether or not it
 * succeeds). */
typedef struct lp_bprofile {
    lp_brow *acc[3];       /* per grouping asked for: one slot per key, + none + comm */
    size_t nk[3];          /* keys per grouping */
    int64_t waiting_ns, gap_ns;
} lp_bprofile;
lp_status lp_bprofile_compute(const lp_trace *t, const int want[3], lp_bprofile *p, lp_error *err);
lp_status lp_breakdown_finish(const lp_trace *t, const lp_cpath *cp, lp_bprofile *p, lp_breakdown out[3],
                              lp_error *err);
void lp_bprofile_release(lp_bprofile *p);

/* What `cp` computes: the whole-trace critical path of t straight from its columns
 * (lp_cpath_trace) and its three breakdowns, with the same results; on traces of at
 * least lp_cpath_parallel_min activities + messages on two threads (the send and
 * receive lists at once, then the path's walk beside the profile). On failure nothing
 * is left. (cptrace.c) */
lp_status lp_cpath_analyse(const lp_trace *t, lp_cpath *cp, lp_breakdown bd[3], lp_error *err);
extern uint64_t lp_cpath_parallel_min; /* default 200000; tests and benchmarks may change it */
void lp_breakdown_release(lp_breakdown *b);
/* The label of a row's key ("processing", "w3", "map", "communication", "-"). */
const char *lp_breakdown_label(const lp_trace *t, const lp_breakdown *b, const lp_brow *r);
const char *lp_group_name(lp_group g);

/* The profile's communication time (also SnailTrail's summaries', summary.h): the length
 * of the union of n intervals [s, e] (s <= e); sorts v in place by start. O(n log n). */
typedef struct lp_ival {
    int64_t s, e;
} lp_ival;
int64_t lp_ival_union(lp_ival *v, size_t n);

#endif
