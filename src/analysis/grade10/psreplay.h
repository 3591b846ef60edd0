/* psreplay.h: the replay of a run under fluid processor sharing (psreplay.c): what the
 * issues (issues.c) and the tests (tests/unit/grade10/test_g10_psreplay.c) share. */
#ifndef LP_ANALYSIS_G10_PSREPLAY_H
#define LP_ANALYSIS_G10_PSREPLAY_H

#include "longpole/analysis/grade10/issues.h"

/* A precedence DAG for the fluid replay: nodes 0..n-1 in a topological order (succ in
 * CSR: first[n + 1]); a node with leaf[v] != UINT32_MAX takes time (the leaf's), the
 * others none. lp_g10_replay's arrays have this shape. */
typedef struct g10_ps_dag {
    uint32_t n;
    const uint32_t *first, *succ, *leaf;
} g10_ps_dag;

/* The leaves: leaf l is either fixed (grp[l] == UINT32_MAX: it takes q[l] ns) or a job
 * of group grp[l] with demand d[l] > 0 and q[l] ns of work at full speed (work d x q);
 * the jobs of group g active at an instant, of total demand D, each progress at
 * S[g] x min(1, K[g] / D) of full speed (K: capacity, S in (0, 1]: the share of each
 * unit of capacity the group gets beside other load). */
typedef struct g10_ps_jobs {
    const double *q, *d;
    const uint32_t *grp;
    uint32_t ngroups;
    const double *K, *S;
} g10_ps_jobs;

/* Event-driven fluid replay from time 0: each node's start (its time once every
 * predecessor has finished) into tstart[n], each node's finish into tend[n] (either
 * may be NULL; scratch must hold g10_ps_scratch_size(g, j) bytes: a heap per group sized
 * by its jobs). Returns the latest finish, or NAN when some node never finished (a
 * group with no speed: S or K of 0). */
size_t g10_ps_scratch_size(const g10_ps_dag *g, const g10_ps_jobs *j);
double g10_ps_run(const g10_ps_dag *g, const g10_ps_jobs *j, void *scratch, double *tstart, double *tend);

/* The imbalance and outlier candidates of `is` (found by issues.c with fixed durations)
 * estimated again under processor sharing when some timeline of an Exact rule was
 * contended (its exact demand above its capacity, or other load measured by its
 * delay= series); nothing changes otherwise. */
lp_status g10_ps_issues(const lp_g10_attr *a, lp_g10_issues *is, lp_error *err);

#endif
