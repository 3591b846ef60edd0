/* breakdown.h: where the critical path's time goes, next to the conventional profile.
 *
 * For a grouping key (activity type, worker, operator), the breakdown sums the time of
 * the path's elements by key, and, beside it, the conventional profile (SnailTrail
 * §3.3): the plain sum of the durations of all activities by the same key, which is
 * what a profiler would blame. `waiting` time is not busy time: it is left out of the
 * profile (so a worker's profile is its load) and reported as waiting_ns. Message time
 * is its own row ("communication") in both columns; in the profile only messages
 * between two workers count (a message to oneself, such as a timer, overlaps that
 * worker's waiting). Shares are of the path's total and
 * of the profile's total respectively.
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
    int64_t prof_ns;       /* summed duration of all activities (or messages) with this key */
    uint64_t prof_n;
} lp_brow;

typedef struct lp_breakdown {
    lp_group by;
    lp_brow *rows;
    size_t n;
    int64_t path_total, prof_total;
    int64_t waiting_ns;    /* waiting time of all workers, not in the profile */
} lp_breakdown;

lp_status lp_breakdown_compute(const lp_trace *t, const lp_cpath *cp, lp_group by, lp_breakdown *out,
                               lp_error *err);
void lp_breakdown_release(lp_breakdown *b);
/* The label of a row's key ("processing", "w3", "map", "communication", "-"). */
const char *lp_breakdown_label(const lp_trace *t, const lp_breakdown *b, const lp_brow *r);
const char *lp_group_name(lp_group g);

#endif
