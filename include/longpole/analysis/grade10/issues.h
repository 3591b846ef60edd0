/* issues.h: Grade10's performance issues (papers/grade10.txt §III-F): the run replayed
 * with fixed phase durations and the model's precedence, and the makespan it would
 * have with an issue fixed: the bottleneck on one resource removed (every phase
 * bottlenecked on it shortened until another resource would bind), or the imbalance of
 * one phase type removed (every set of concurrent instances of the type under one
 * parent set to their mean duration, the set's total preserved). Each issue carries
 * the optimistic makespan reduction; those above the model's issue-threshold are
 * reported. docs/analyses/grade10.md has the definitions.
 *
 * The replay: every instance i is two events, its start and its end; a leaf's end is
 * its start plus its duration; an instance starts when its parent has started, when
 * the previous instance of its sequentially repeated type (same parent) has ended, and
 * when every instance of each sibling type it runs `after` has ended, and, under a
 * `serial` parent, when the previous child (in recorded order) has ended; a composite
 * phase ends when its last child ends; the root starts at its recorded start. That is
 * a longest path in a DAG (CSR + topological order, one relaxation pass per replay:
 * written so the shared kernels of src/graph can replace it). With the recorded
 * durations and a run without gaps (every phase started the moment its constraints
 * allowed), the replay reproduces the recorded times.
 */
#ifndef LONGPOLE_ANALYSIS_GRADE10_ISSUES_H
#define LONGPOLE_ANALYSIS_GRADE10_ISSUES_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/analysis/grade10/exec.h"
#include "longpole/analysis/grade10/attrib.h"

typedef struct lp_g10_replay {
    const lp_g10_exec *x;
    uint32_t nnodes;         /* one per instance (its start), one per composite instance (its end; a leaf's
                                end is its start plus its duration), one per (parent, type) joined by `after` */
    uint32_t *first;         /* [nnodes + 1] successors (CSR); nodes are numbered in a topological order */
    uint32_t *succ;
    uint32_t *leaf;          /* [nnodes] the leaf whose start this node is (its duration follows), or UINT32_MAX */
    uint32_t *pos;           /* [nnodes] the number of event v (instance i's start is event i, the end of the
                                k-th composite instance in instance order is event n + k) */
    int64_t *t;              /* [nnodes] scratch: earliest times */
} lp_g10_replay;

/* The precedence DAG of an exec. LP_ERR_DATA if it has a cycle (cannot happen for an
 * exec built from a valid model; checked anyway). */
lp_status lp_g10_replay_init(lp_g10_replay *rp, const lp_g10_exec *x, lp_error *err);
void lp_g10_replay_release(lp_g10_replay *rp);
/* Replay with leaf durations dur[i] (ns; entries of composite instances are ignored):
 * every instance's replayed start and end into start/end (either may be NULL); returns
 * the makespan (root end - root start). Not thread-safe on one replay (uses rp->t). */
int64_t lp_g10_replay_run(lp_g10_replay *rp, const int64_t *dur, int64_t *start, int64_t *end);

typedef enum lp_g10_issue_kind {
    LP_G10_ISSUE_BOTTLENECK = 0,
    LP_G10_ISSUE_IMBALANCE,  /* every set of concurrent instances at its mean span (the paper) */
    LP_G10_ISSUE_OUTLIER     /* only the outliers of each set (span over LP_G10_OUTLIER x the set's median)
                                brought down to the longest typical instance of the set: the run
                                without the straggler (beyond the paper) */
} lp_g10_issue_kind;

/* An instance is an outlier of its set (concurrent instances of one type under one
 * parent, three or more) when its span exceeds this factor times the set's median. */
#define LP_G10_OUTLIER 1.5

typedef struct lp_g10_issue {
    uint8_t kind;            /* lp_g10_issue_kind */
    uint32_t res;            /* bottleneck: the resource */
    uint32_t type;           /* imbalance, outlier: the phase type */
    uint64_t instances;      /* outlier: instances brought down */
    lp_str key;              /* outlier: the repetition-key value (exec strs) of most of them, LP_STR_NONE */
    uint64_t key_count;      /* outlier: how many of them have that key value */
    uint64_t phases;         /* leaves whose duration changed */
    int64_t saved_ns;        /* phase time removed (sum over the changed leaves) */
    int64_t makespan;        /* replayed makespan with the issue fixed */
    int64_t gain_ns;         /* baseline - makespan: the optimistic reduction */
    double gain;             /* gain_ns / baseline */
    int reported;            /* gain >= the threshold */
    uint8_t ps;              /* imbalance, outlier: estimated under processor sharing (psreplay.c): makespan
                                and gain against lp_g10_issues.ps_baseline, saved_ns in uncontended time */
} lp_g10_issue;

typedef struct lp_g10_issues {
    int64_t recorded;        /* the root's recorded duration */
    int64_t baseline;        /* the replay of the recorded durations */
    double threshold;
    lp_g10_issue *v;         /* every candidate, by gain (largest first) */
    size_t n;
    /* processor sharing (psreplay.c; all zero when no host's CPU-like resource was contended):
     * the imbalance and outlier candidates replayed with the Exact leaves on contended
     * timelines as work shared by fluid processor sharing */
    int64_t ps_baseline;     /* the replay of the recorded work under processor sharing */
    uint32_t ps_groups;      /* contended timelines */
    uint64_t ps_leaves;      /* leaves replayed as work */
    double ps_capacity;      /* K of the first group (capacity units) */
    double ps_share;         /* S of the first group: the share of each unit of K its jobs got beside
                                other load (1 without a delay series or contention from outside) */
    uint8_t ps_rejected;     /* 1: that replay of the recorded work was off the recorded durations'
                                replay (baseline) by more than LP_G10_PS_TOL, or did not complete:
                                not used, every candidate keeps its fixed-duration estimate */
} lp_g10_issues;

/* How far (relative) the processor-sharing replay of the recorded work may be from the
 * replay of the recorded durations for its estimates to be used. */
#define LP_G10_PS_TOL 0.05

/* Every bottleneck and imbalance candidate replayed. threshold < 0: the model's. */
lp_status lp_g10_issues_find(const lp_g10_attr *a, double threshold, lp_g10_issues *out, lp_error *err);
void lp_g10_issues_release(lp_g10_issues *is);

/* The leaf durations with resource r's bottleneck removed (dur[x->n]; leaves only;
 * composite entries 0): a leaf bottlenecked on r for a stretch of time runs that
 * stretch faster, by the least headroom of its other resources there (1 where it is
 * bottlenecked on one of them too; unbounded where it uses no other), and loses the
 * time r blocked it. *changed = leaves shortened. */
lp_status lp_g10_without_bottleneck(const lp_g10_attr *a, uint32_t r, int64_t *dur, uint64_t *changed, lp_error *err);
/* The leaf durations with phase type `type`'s imbalance removed, given the baseline
 * replay's instance spans (span[i] = end - start of the baseline replay). */
lp_status lp_g10_without_imbalance(const lp_g10_exec *x, uint32_t type, const int64_t *span, int64_t *dur,
                                   uint64_t *changed, lp_error *err);
/* The leaf durations with phase type `type`'s outliers removed: in every set of three or
 * more concurrent instances under one parent, each instance whose baseline span exceeds
 * LP_G10_OUTLIER x the set's median is scaled to the longest span of the set's other
 * (typical) instances. v->phases, v->instances, v->key, v->key_count are filled. */
lp_status lp_g10_without_outliers(const lp_g10_exec *x, uint32_t type, const int64_t *span, int64_t *dur,
                                  lp_g10_issue *v, lp_error *err);

#endif
