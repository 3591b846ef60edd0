/* cpmetric.h: critical participation of the edges of a snapshot (SnailTrail §3.2
 * Eq. 3, Definition 8, §5 Algorithm 2; docs/analyses/critical-participation.md).
 *
 * The transient critical paths of a snapshot are its paths from a start vertex (V_s:
 * the vertices at the snapshot's earliest instant t0) to an end vertex (V_e: at its
 * latest instant t1) that use no `waiting` edge; each weighs t1 - t0 (weights are time
 * differences, so they telescope). With fwd[v] the number of such paths from V_s to v
 * and bwd[v] the number from v to V_e,
 *     N = sum of fwd over V_e = sum of bwd over V_s,
 *     c(e) = fwd[source of e] * bwd[target of e]   (paths through e, Definition 8),
 *     CP(e) = c(e) * w(e) / (N * (t1 - t0))          (Eq. 3), and sum of CP = 1 (Eq. 5).
 * fwd is computed in one dependency-order walk of the snapshot's graph (graph/topo.h:
 * workers are chains and message edges links; workers run as far as they can, a
 * worker needing another's vertex pushes it on a stack: each vertex and edge once),
 * with graph/pathcount.h's fwd step as its visitor; N follows from the end vertices;
 * bwd in the reverse of that order, pushing each receive vertex's count to the
 * message's send vertex, and the CP of the edges into a vertex as soon as its bwd is
 * final (fwd and bwd of a vertex share a cache line, so a message costs one random
 * access per pass). Zero-time message cycles (the only possible ones) are broken by
 * ignoring one message each, counted in ncycles.
 *
 * Numbers: path counts are lp_xnum (graph/xnum.h: a double mantissa and an int32
 * exponent of 2^256, every operation rounding at most once, exact below 2^53, each
 * count carrying its rounding depth rd). The relative error of a CP value is then
 * at most (rd(fwd) + rd(bwd) + rd(N) + 5) * 2^-53 (to first order); err_bound is the
 * largest such bound over the window's edges, and |sum of CP - 1| <= err_bound. The
 * sum itself is accumulated in long double.
 */
#ifndef LONGPOLE_CPMETRIC_H
#define LONGPOLE_CPMETRIC_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/analysis/snailtrail/snapshot.h"
#include "longpole/graph/pathcount.h"
#include "longpole/graph/topo.h"

/* The path counts of one vertex: fwd from V_s to it, bwd from it to V_e. */
typedef lp_pathcount lp_cpcount;

/* Counts and CP of one snapshot. Buffers are grow-only and reused across windows. */
typedef struct lp_cpm {
    const lp_snapshot *s;    /* the snapshot computed */
    lp_cpcount *cnt;         /* [nv] */
    double *cpw;             /* [nv] CP of the worker edge into v (0: none, waiting, or on no path) */
    double *cpin;            /* [nin] CP of message edge in[k] */
    uint32_t *order;         /* [nv] the topological order used */
    lp_xnum n;               /* N, the number of transient critical paths (from V_e) */
    lp_xnum n_s;             /* N again, from V_s (equal up to rounding) */
    double log10n;           /* log10 N (-inf when there is no path) */
    int64_t span;            /* t1 - t0, every path's weight */
    double sum;              /* sum of CP over all edges (1 within err_bound when N > 0) */
    double err_bound;        /* a priori bound on every CP's relative error and on |sum - 1| */
    uint64_t ncycles;        /* zero-time message cycles broken */
    uint32_t nvs, nve;       /* |V_s|, |V_e| */
    int has_paths;           /* N > 0 and span > 0 */
    /* buffers */
    size_t cap_v, cap_in;
    lp_topo topo;            /* the walk; topo.ignored[k]: message edge in[k] dropped to
                              * break a zero-time cycle (lp_topo_ignored) */
} lp_cpm;

void lp_cpm_init(lp_cpm *c);
void lp_cpm_release(lp_cpm *c);
/* Count paths and compute CP for every edge of s. When the snapshot has no transient
 * path (N = 0, e.g. every worker waits at some instant, or t0 = t1), every CP is 0,
 * has_paths is 0 and sum is 0. */
lp_status lp_cpm_compute(lp_cpm *c, const lp_snapshot *s, lp_error *err);

/* One transient critical path drawn uniformly among all N (each with probability 1/N):
 * an end vertex is drawn with probability fwd[v]/N, then, walking back, each
 * predecessor (worker edge or message edge; or stopping, at a start vertex) with
 * probability proportional to its count: fwd[pred]/fwd[v], 1/fwd[v] for stopping.
 * (The mirror of walking forward with bwd; it needs only the incoming lists.) */
typedef struct lp_cppath {
    uint64_t *e;             /* edges from the end back to the start: a vertex id v for
                              * the worker edge into v, or LP_CPPATH_MSG | k for in[k] */
    size_t n, cap;
} lp_cppath;
#define LP_CPPATH_MSG (UINT64_C(1) << 63)

/* Draw a path using *rng (splitmix64 state, advanced). LP_OK with n = 0 when there is
 * no path. */
lp_status lp_cpm_sample(const lp_cpm *c, uint64_t *rng, lp_cppath *out, lp_error *err);
void lp_cppath_release(lp_cppath *p);

/* splitmix64: the generator used for paths; the state of window k for seed s is
 * lp_rng_seed(s, k). */
uint64_t lp_rng_next(uint64_t *state);
uint64_t lp_rng_seed(uint64_t seed, uint64_t stream);

#endif
