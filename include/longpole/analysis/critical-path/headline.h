/* headline.h: the answer first (issue 12): the two or three sentences that head `cp`'s
 * output and the HTML report, made from the critical path and its breakdowns
 * (breakdown.h):
 *   1. what the path waited for: its three largest contributors, each with its share
 *      of the path and its share of the conventional profile;
 *   2. what a profiler would have blamed instead: the profile's three largest keys;
 *   3. the most that making the top contributor take no time could save: its time on
 *      the path. (The path stays a chain of dependencies with the other durations
 *      unchanged, so the run cannot become shorter than the path minus that time.)
 *      For an operator, the worker that ran most of its path time is named (not on a
 *      span trace, where every worker is one span).
 * Contributors are the keys of one grouping: operators when operators name at least
 * half of the path's activity time, else workers (communication is a key in both).
 * The same numbers are exposed one by one so `cp --json` and the report can show them.
 * Labels point into the trace (and literals): the headline must not outlive it.
 */
#ifndef LONGPOLE_HEADLINE_H
#define LONGPOLE_HEADLINE_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/analysis/critical-path/breakdown.h"

#define LP_HEADLINE_TOP 3

typedef struct lp_headline_key {
    const char *label;       /* the key's name ("communication" for messages) */
    uint32_t key;            /* as in lp_brow */
    int64_t path_ns, prof_ns;
    double path_share, prof_share;
} lp_headline_key;

typedef struct lp_headline {
    lp_group by;             /* LP_BY_OPERATOR or LP_BY_WORKER */
    int64_t total;           /* the path's length */
    size_t ntop, nblamed;
    lp_headline_key top[LP_HEADLINE_TOP];    /* largest on the path (path_ns > 0) */
    lp_headline_key blamed[LP_HEADLINE_TOP]; /* largest in the profile (prof_ns > 0) */
    int64_t save_max_ns;     /* top[0].path_ns (0 if the path is empty) */
    const char *top_worker;  /* by operator: the worker with most of top[0]'s path time, or NULL */
    int64_t top_worker_ns;
    char *text;              /* the sentences, one per line, no trailing newline */
} lp_headline;

/* From the path of t and its three breakdowns (indexed by lp_group). */
lp_status lp_headline_make(const lp_trace *t, const lp_cpath *cp, const lp_breakdown bd[3], lp_headline *h,
                           lp_error *err);
void lp_headline_release(lp_headline *h);

#endif
