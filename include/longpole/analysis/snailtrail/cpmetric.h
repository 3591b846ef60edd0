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
 * fwd is computed in one topological pass (workers run as far as they can, a worker
 * needing another's vertex pushes it on a stack, as in cpath.c: each vertex and edge
 * once); N follows from the end vertices; bwd in the reverse of that order, pushing
 * each receive vertex's count to the message's send vertex, and the CP of the edges
 * into a vertex as soon as its bwd is final (fwd and bwd of a vertex share a cache
 * line, so a message costs one random access per pass). Zero-time message cycles (the
 * only possible ones) are broken by ignoring one message each, counted in ncycles.
 *
 * Numbers: path counts overflow any fixed-size type (a barrier-synchronised window of
 * 2,000 workers has far more than 10^308 paths). They are lp_xnum: a double mantissa
 * and an int32 exponent of 2^256 (value = m * 2^(256 e), 1 <= m < 2^256 or m = 0), so
 * the range is 2^(256 * 2^31) and every operation rounds at most once, like a double:
 * relative error <= 2^-53 per operation, power-of-two rescaling is exact, and an
 * addend below 2^-256 of the sum is dropped (an error far below 2^-53). Integers
 * below 2^53 are exact, so small windows are counted exactly. Every count carries its
 * rounding depth rd: the most roundings on any chain of operations that produced it
 * (additions of exact integers do not count). The relative error of a CP value is then
 * at most (rd(fwd) + rd(bwd) + rd(N) + 5) * 2^-53 (to first order); err_bound is the
 * largest such bound over the window's edges, and |sum of CP - 1| <= err_bound. The
 * sum itself is accumulated in long double.
 */
#ifndef LONGPOLE_CPMETRIC_H
#define LONGPOLE_CPMETRIC_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/analysis/snailtrail/snapshot.h"

#define LP_XNUM_STEP 256      /* exponent unit: value = m * 2^(LP_XNUM_STEP * e) */

typedef struct lp_xnum {
    double m;                 /* 0, or in [1, 2^LP_XNUM_STEP) */
    int32_t e;                /* 0 when m is 0 */
    uint32_t rd;              /* rounding depth (see above) */
} lp_xnum;

static inline lp_xnum lp_xnum_zero(void) { lp_xnum x = {0.0, 0, 0}; return x; }
static inline lp_xnum lp_xnum_one(void) { lp_xnum x = {1.0, 0, 0}; return x; }
lp_xnum lp_xnum_from_double(double v);   /* v >= 0, finite */
lp_xnum lp_xnum_add(lp_xnum a, lp_xnum b);
lp_xnum lp_xnum_mul(lp_xnum a, lp_xnum b);
/* a / b as a double (0 if a is 0; b must not be 0); exact to one rounding plus the
 * operands' errors; underflows to 0 below ~1e-308. */
double lp_xnum_ratio(lp_xnum a, lp_xnum b);
/* log10 of x (-inf for 0). */
double lp_xnum_log10(lp_xnum x);
/* Compare magnitudes: -1, 0, 1. */
int lp_xnum_cmp(lp_xnum a, lp_xnum b);
/* Decimal scientific notation with `digits` significant digits ("3.21e+4021"), or the
 * exact integer when below 2^53; returns buf. */
const char *lp_xnum_fmt(lp_xnum x, int digits, char *buf, size_t n);

/* The path counts of one vertex. */
typedef struct lp_cpcount {
    lp_xnum fwd;             /* paths from V_s to the vertex */
    lp_xnum bwd;             /* paths from the vertex to V_e */
} lp_cpcount;

/* Counts and CP of one snapshot. Buffers are grow-only and reused across windows. */
typedef struct lp_cpm {
    const lp_snapshot *s;    /* the snapshot computed */
    lp_cpcount *cnt;         /* [nv] */
    double *cpw;             /* [nv] CP of the worker edge into v (0: none, waiting, or on no path) */
    double *cpin;            /* [nin] CP of message edge in[k] */
    uint32_t *order;         /* [nv] the topological order used */
    uint8_t *ignored;        /* [nin] message edges dropped to break zero-time cycles */
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
    size_t cap_v, cap_in, cap_w;
    uint64_t *cur;           /* [nworkers] scratch of the topological pass */
    uint32_t *stk;
    uint64_t *target;
    uint8_t *onstk;
    uint64_t *done;          /* bitset: vertices counted by the forward pass */
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
