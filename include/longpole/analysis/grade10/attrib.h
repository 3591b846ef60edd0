/* attrib.h: Grade10's resource attribution (papers/grade10.txt §III-D) and bottleneck
 * identification (§III-E): coarse monitoring of each consumable resource on each host
 * upsampled to fine segments through the demand the model's rules give the active
 * phases, attributed to those phases, and the time each phase spent bottlenecked.
 * docs/analyses/grade10.md has the definitions; in short, per resource, host and
 * monitoring window W (total consumption C, capacity K, segments t of length l_t with
 * exact demand E_t and variable demand V_t):
 *   1. exact first: x_t = min(E_t, K), all scaled by C / sum(l x) if that is less;
 *   2. the rest in proportion to V_t, each segment capped at K - u_t (water-filling);
 *   3. what is still left spread evenly over the window, capped at K ("background",
 *      attributed to no phase); what exceeds K everywhere is clipped and counted.
 * A phase then gets e_p / E_t of the exact part x_t and v_q / V_t of the rest u_t - x_t.
 *
 * Two ways to cut time into segments: LP_G10_SLICES (the paper: fixed slices, 10 ms by
 * default; phase, blocking and window bounds rounded to the nearest slice boundary; a
 * phase shorter than that is widened to the one slice holding its midpoint, and
 * counted; the parts of the first and last windows outside the run, where there is no
 * demand, are one segment each instead of many empty slices), and LP_G10_EVENTS (segments between the instants where demand or the
 * window changes: no rounding, and fewer segments when phases are long).
 *
 * Invariants (tests/unit/grade10): per window, sum_t l_t u_t = C - clipped to 1e-9
 * relative; 0 <= x_t <= u_t <= K; attributed + background = sum C - clipped; with one
 * segment per window the usage is the window's mean (identity).
 */
#ifndef LONGPOLE_ANALYSIS_GRADE10_ATTRIB_H
#define LONGPOLE_ANALYSIS_GRADE10_ATTRIB_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/exec.h"
#include "longpole/import/grade10.h"

typedef enum lp_g10_mode { LP_G10_SLICES = 0, LP_G10_EVENTS = 1 } lp_g10_mode;

typedef struct lp_g10_opts {
    int mode;            /* lp_g10_mode */
    int64_t slice_ns;    /* 0: the model's (10 ms) */
    unsigned threads;    /* 0: online CPUs (at most one per resource timeline) */
} lp_g10_opts;

/* ---- the kernel ------------------------------------------------------------------- */

/* Upsample one window of n segments (lengths len, exact demand E, variable demand V,
 * capacity K, total consumption C >= 0; C and len in the same time unit): usage rates
 * into u[], their exact part into x[]. `scratch` holds n uint32_t. Returns what could
 * not be placed under capacity (0 unless C > K * sum(len)). */
double lp_g10_upsample(size_t n, const double *len, const double *E, const double *V, double K, double C, double *u,
                       double *x, uint32_t *scratch);

/* ---- the analysis ------------------------------------------------------------------ */

/* One consumable resource on one host: its segments and their demand and usage. */
typedef struct lp_g10_tl {
    uint32_t res;            /* model resource */
    lp_str host;             /* in the attribution's string table (strs) */
    double capacity;
    uint32_t nseg;
    int64_t *bound;          /* [nseg + 1] segment boundaries (ns) */
    int bound_shared;        /* slice mode: bound is an earlier timeline's (the same grid and ends: one copy) */
    uint32_t lead;           /* slice mode: segments before the grid (0 or 1: the part of the first window
                                before the run, one segment, no demand) */
    int64_t grid0;           /* slice mode: bound[lead], where the slices over the run begin */
    double *E, *V, *u, *x;   /* per segment: exact and variable demand, usage, its exact part (capacity units) */
    double *f;               /* per segment: the share of what its threads were ready to use that they got
                                (effective capacity; 1 where unknown); NULL without a delay series */
    uint32_t nwin;           /* monitoring windows used */
    double consumed;         /* sum of the windows' C (capacity units x seconds) */
    double attributed;       /* to phases */
    double background;       /* to no phase */
    double clipped;          /* above capacity, not placed */
    uint64_t merged;         /* windows shorter than half a slice merged into the next (slices) */
    uint64_t dropped;        /* windows dropped (a counter going backwards, a negative mean) */
    uint64_t gaps;           /* sample intervals over gap-factor x the median */
    uint32_t nphases;        /* leaf phases with a rule on it */
    /* effective capacity (the resource's delay= metric; zero when it has none or the host
     * has no such series): windows whose delay is known, the usage and the delay in them
     * (capacity units x s), and the time in windows where the threads got less than the
     * bottleneck threshold of what they were ready to use (contended) */
    uint32_t nwin_delay;
    double delay_used, delay_waited;
    double contended_s;
    uint64_t delay_bad;      /* windows whose delay could not be used (counter backwards, outside the series) */
} lp_g10_tl;

/* The share of what its threads were ready to use that they got (effective capacity),
 * over the windows whose delay is known; 1 without any. */
static inline double lp_g10_tl_on_share(const lp_g10_tl *tl)
{
    double all = tl->delay_used + tl->delay_waited;
    return all > 0 ? tl->delay_used / all : 1;
}

/* One leaf phase on one resource (a pair whose rule is not None). */
typedef struct lp_g10_use {
    uint32_t phase;
    uint32_t tl;             /* consumable: its timeline, LP_G10_NONE if its host has no monitoring; blocking: LP_G10_NONE */
    double used;             /* consumable: attributed capacity units x seconds */
    int64_t bn_ns;           /* time bottlenecked: consumable, global or local; blocking, time blocked */
} lp_g10_use;

/* A blocking resource's intervals for one host and scope (merged, sorted). */
typedef struct lp_g10_blk {
    uint32_t res;
    lp_str host;             /* in the attribution's strs; LP_STR_EMPTY: every host */
    lp_str *scope;           /* key, value pairs (exec strings; LP_STR_NONE: matches no phase) */
    uint32_t nscope;
    size_t n, cap;
    int64_t *s, *e;
} lp_g10_blk;

/* Totals of one phase type on one resource. */
typedef struct lp_g10_tstat {
    uint64_t phases;         /* leaf instances with this rule */
    int64_t active_ns;       /* their active time (not blocked) */
    double used;             /* attributed */
    int64_t bn_ns;           /* bottlenecked (global or local, or blocked) */
    int64_t bn_global_ns, bn_local_ns;
} lp_g10_tstat;

typedef struct lp_g10_attr {
    const lp_g10_model *m;
    const lp_g10_exec *x;
    int mode;
    int64_t slice_ns;
    int64_t origin;          /* slice mode: the grid is origin + k x slice_ns; origin is the first
                                monitoring sample (so windows fall on slice bounds when the
                                sampler's period is a multiple of the slice), 0 without monitoring */
    lp_strtab strs;          /* host names of the timelines and blocking instances */
    lp_str only_host;        /* the one host all monitoring and blocking inputs name (phases without a
                                host are on it), or LP_STR_NONE */
    lp_g10_tl *tl;
    uint32_t ntl;
    lp_g10_blk *blk;
    uint32_t nblk;
    lp_g10_use **use;        /* [nres]: uses of each resource, by phase */
    size_t *nuse;            /* [nres] */
    uint32_t *pblk_first;    /* [x->n + 1]: blocking instances that stop each leaf (CSR) */
    uint32_t *pblk;
    int64_t *active_ns;      /* [x->n]: each leaf's time not blocked (0 for composite phases) */
    uint32_t *pfirst;        /* [x->n + 1]: each leaf's active pieces [ps[k], pe[k]) for k in
                                pfirst[i] .. pfirst[i+1] (rounded to slices in slice mode) */
    int64_t *ps, *pe;
    lp_g10_tstat *tstat;     /* [ntypes * nres] */
    /* adjustments, each also reported */
    uint64_t widened;        /* phases shorter than half a slice widened to one slice */
    uint64_t no_host;        /* leaf phases with a consumable rule but no monitored host */
    uint64_t unmonitored;    /* consumable (resource, host) pairs used by phases without monitoring */
    uint64_t unknown_blocking; /* blocking intervals of resources not in the model */
} lp_g10_attr;

lp_status lp_g10_attribute(const lp_g10_model *m, const lp_g10_exec *x, const lp_g10_data *d, const lp_g10_opts *o,
                           lp_diags *ds, lp_g10_attr **out, lp_error *err);
void lp_g10_attr_free(lp_g10_attr *a);

/* The use of (resource r, phase), or NULL (its rule is None, or it is not a leaf). */
const lp_g10_use *lp_g10_use_of(const lp_g10_attr *a, uint32_t r, uint32_t phase);
/* Rolled up the hierarchy: for every instance, the sums over its leaves of used and
 * bn_ns on resource r (arrays of x->n, either may be NULL). */
void lp_g10_rollup(const lp_g10_attr *a, uint32_t r, double *used, int64_t *bn_ns);
/* A leaf's active pieces [s[k], e[k]) (its bounds minus blocked time, rounded to slices
 * in slice mode): count, at most cap written. */
size_t lp_g10_active(const lp_g10_attr *a, uint32_t phase, int64_t *s, int64_t *e, size_t cap);
/* A phase's usage rate on timeline tl over time (paper Fig. 3): per segment it overlaps,
 * the segment's start and the rate attributed to it (leaves only); count, at most cap
 * written. */
size_t lp_g10_phase_usage(const lp_g10_attr *a, uint32_t tl, uint32_t phase, int64_t *t, double *rate, size_t cap);

#endif
