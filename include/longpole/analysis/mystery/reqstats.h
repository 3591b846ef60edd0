/* reqstats.h: critical path and slack aggregated over many requests, and the case-study
 * analyses of the Mystery Machine (OSDI'14 §4.3-4.4 and §5; docs/analyses/
 * mystery-aggregates.md):
 *  - per segment and per category: mean critical-path time versus mean summed delay
 *    (Figure 5), how often on the critical path, mean slack and a slack histogram;
 *  - per category, the distribution over requests of its share of the critical path
 *    (Figure 6) and of its slack (Figure 8; a category's slack in a request is the
 *    slack of its last-ending segment there, as §5.2 takes the server's slack from
 *    the last data item it sends: how late its final output may come);
 *  - stratification by a request attribute, or by quantiles of a numeric attribute,
 *    of latency or of a category's time (Figure 7);
 *  - outliers: the requests in the top share of latency (5% by default) against the
 *    rest, per segment: presence, critical-path frequency and critical-path share in
 *    each set, ranked by over-representation on the outliers' critical paths (§4.4);
 *  - natural-variation what-if (Figure 10): requests sorted by a category's slack into
 *    equal buckets; in each, the correlation between the category's summed time and
 *    end-to-end latency.
 * Categories come from a rules file (docs/formats/mystery-categories.md) or, by
 * default, segments crossing hosts are "network" and the others take their task's name.
 * Every analysis is deterministic: integer sums, rank-based quantiles and buckets.
 */
#ifndef LONGPOLE_REQSTATS_H
#define LONGPOLE_REQSTATS_H

#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/import/reqlog.h"
#include "longpole/base/progress.h"

/* ---- categories -------------------------------------------------------------------- */

#define LP_REQCAT_MAX 64

typedef struct lp_reqcat_rule {
    uint32_t cat;       /* category index */
    int field;          /* 0 task, 1 segment label, 2 network (crosses hosts) */
    char *pattern;      /* regex (task, segment) or "yes"/"no" (network) */
} lp_reqcat_rule;

typedef struct lp_reqcat {
    uint32_t ncat;
    char *name[LP_REQCAT_MAX + 1];   /* + "other" */
    lp_reqcat_rule *rules;
    uint32_t nrules;
    int by_task;        /* default mapping: network, else the task's name */
    uint32_t nseg;
    uint32_t *of_seg;   /* model segment -> category (after lp_reqcat_assign) */
} lp_reqcat;

void lp_reqcat_init(lp_reqcat *c);
void lp_reqcat_release(lp_reqcat *c);
/* Rules file: "CATEGORY FIELD PATTERN" per line (FIELD task, segment or network). */
lp_status lp_reqcat_load(lp_reqcat *c, const char *path, lp_error *err);
/* Map every segment of a finished model; the default mapping if no rules were loaded. */
lp_status lp_reqcat_assign(lp_reqcat *c, const lp_causal *m, lp_error *err);

/* ---- aggregates ---------------------------------------------------------------------- */

#define LP_REQSTATS_Q 101       /* quantiles 0, 1, ..., 100 % */
#define LP_REQSTATS_HIST 65     /* slack histogram: [0] zero, [k] in [2^(k-1), 2^k) ns */

typedef struct lp_reqstats_seg {
    uint64_t present;           /* requests containing it */
    uint64_t oncp;              /* ... with it on the critical path */
    int64_t dur_sum, cp_sum, slack_sum; /* ns summed over requests */
    uint64_t slack_hist[LP_REQSTATS_HIST];
    uint64_t present_out, oncp_out; /* the same over the outliers */
    int64_t dur_out, cp_out;
} lp_reqstats_seg;

typedef struct lp_reqstats_bucket {
    int64_t slack_lo, slack_hi; /* slack range of the bucket */
    uint64_t n;
    double r;                   /* Pearson correlation: category time vs latency (NaN if undefined) */
    double x_mean, latency_mean;/* ns */
} lp_reqstats_bucket;

typedef struct lp_reqstats_cat {
    uint64_t present;           /* requests with a segment of the category */
    int64_t dur_sum, cp_sum;    /* summed delay and critical-path time, ns over all requests */
    double share_q[LP_REQSTATS_Q]; /* quantiles of its share of the critical path (0..1) */
    double slack_q[LP_REQSTATS_Q]; /* quantiles of its slack (ns), over requests where present */
    uint32_t nbuckets;
    lp_reqstats_bucket *buckets;/* what-if, by increasing slack */
} lp_reqstats_cat;

typedef struct lp_reqstats_stratum {
    char *label;                /* the value, or "q3 [lo, hi]" for a quantile bucket */
    uint64_t n;
    double latency_mean, cp_mean;
    double *cat_cp_mean;        /* [ncat] mean critical-path time per category, ns */
} lp_reqstats_stratum;

typedef struct lp_reqstats_strat {
    char *name;                 /* the attribute as asked */
    uint32_t nvals;
    lp_reqstats_stratum *vals;  /* by decreasing count (quantiles: in order) */
    uint64_t missing;           /* requests without the attribute */
} lp_reqstats_strat;

/* Pass 1 of a part (`dist requests`): every request's critical path computed over one
 * contiguous range of the analysed requests. Rows are indexes into the whole run's
 * columns (n rows; per-category columns are n x C, row-major); this part filled rows
 * [lo, hi), and `out` holds its sums: out->seg[s] (present, oncp, dur_sum, cp_sum,
 * slack_sum, slack_hist), out->cat[c] (present, dur_sum, cp_sum), out->violations and
 * out->unknown. */
typedef struct lp_reqstats_part {
    uint64_t part, nparts;
    uint64_t n, lo, hi;
    uint32_t C, S;
    int64_t *lat, *cp;          /* [n] latency, critical path (ns) */
    uint8_t *nonempty;          /* [n] the request has segments */
    float *ccp, *ctot, *cslack; /* [n x C] per category: critical-path time, summed time, slack (-1: absent) */
    struct lp_reqstats *out;
} lp_reqstats_part;

/* Rows [*lo, *hi) of n that part `part` of `nparts` computes. */
void lp_reqstats_part_range(uint64_t n, uint64_t part, uint64_t nparts, uint64_t *lo, uint64_t *hi);

/* The part's rows and sums as bytes, appended to *buf (reqstats_part.c). */
lp_status lp_reqstats_part_pack(const lp_reqstats_part *p, uint8_t **buf, size_t *len, size_t *cap, lp_error *err);
/* Into p (the receiving part, its columns sized for all n rows): the rows and sums that
 * part `from` packed (buf[0 .. n)): its rows copied in place, its sums added. */
lp_status lp_reqstats_part_add(lp_reqstats_part *p, const uint8_t *buf, size_t n, uint64_t from, lp_error *err);

/* Called by every part after its pass 1, even when that failed (st, with err set: the
 * parts can agree on failure; the columns may then be NULL): combine the parts and
 * return the status to go on with. On the part that goes on (*go_on = 1), it must fill
 * every row of the columns and make the sums those of every part (the analysis then
 * continues as over one part); the others set *go_on = 0 and lp_reqstats_run returns
 * LP_OK with out holding only their own sums. */
typedef lp_status (*lp_reqstats_gather_fn)(void *ctx, lp_reqstats_part *p, lp_status st, int *go_on, lp_error *err);

typedef struct lp_reqstats_opts {
    unsigned threads;           /* 0 = online CPUs */
    double outlier_share;       /* top share of latency (0.05) */
    uint32_t buckets;           /* what-if buckets (20) */
    const char *const *stratify;/* "ATTR", "ATTR:K" (numeric quantiles), "latency:K", "cat.NAME:K" */
    uint32_t nstratify;
    uint32_t max_values;        /* strata values kept per attribute (the rest: "(other)"), 0 = 50 */
    lp_progress_fn progress;
    void *progress_ctx;
    uint64_t part, nparts;      /* pass 1 over part `part` of `nparts` (0 = all), then gather */
    lp_reqstats_gather_fn gather;
    void *gather_ctx;
} lp_reqstats_opts;

typedef struct lp_reqstats {
    uint64_t analysed;          /* requests with at least one segment */
    uint64_t excluded;          /* requests excluded at import */
    uint64_t violations;        /* model relationships contradicted (edges dropped) */
    uint64_t unknown;           /* segment occurrences the model never observed */
    double latency_mean, cp_mean;
    double latency_q[LP_REQSTATS_Q], cp_q[LP_REQSTATS_Q];
    uint32_t nseg;
    lp_reqstats_seg *seg;       /* by model segment */
    uint32_t ncat;
    lp_reqstats_cat *cat;       /* by category (lp_reqcat order, "other" last if used) */
    uint64_t noutliers;
    int64_t outlier_latency;    /* smallest latency among the outliers */
    uint32_t *ranked;           /* segments by decreasing over-representation */
    uint32_t nranked;
    uint32_t nstrat;
    lp_reqstats_strat *strat;
} lp_reqstats;

lp_status lp_reqstats_run(const lp_causal *m, const lp_reqlog *rl, const uint32_t *map, const lp_reqcat *cat,
                          const lp_reqstats_opts *o, lp_reqstats *out, lp_error *err);
void lp_reqstats_release(lp_reqstats *s);

/* Over-representation of a segment on the outliers' critical paths: its share of the
 * outliers' total critical-path time minus its share of the others'. */
double lp_reqstats_overrep(const lp_reqstats *s, uint32_t seg);

#endif
