/* reqpar.h: run one function on N threads (the calling thread is thread 0), for the
 * request-log analyses (import, skew, inference, critical path). Internal.
 * Work is split by the callee, usually into contiguous ranges of requests, so that
 * results can be merged in a fixed order and never depend on the thread count. */
#ifndef LP_REQPAR_H
#define LP_REQPAR_H

#include <stdint.h>

typedef void (*lp_reqpar_fn)(void *ctx, unsigned tid, unsigned nthreads);

/* Threads to use for `want` (0 = online CPUs), at most 64. */
unsigned lp_reqpar_threads(unsigned want);
/* Run fn(ctx, t, n) for t in 0..n-1 concurrently; returns 0, or -1 if threads could not
 * be created (then every part ran on the calling thread, in order). */
int lp_reqpar_run(unsigned n, lp_reqpar_fn fn, void *ctx);
/* [*lo, *hi): part `t` of `n` of the range [0, total). */
static inline void lp_reqpar_range(uint64_t total, unsigned t, unsigned n, uint64_t *lo, uint64_t *hi)
{
    *lo = total * t / n;
    *hi = total * (t + 1) / n;
}

#endif
