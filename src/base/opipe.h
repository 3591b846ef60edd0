/* opipe.h: an ordered output pipeline. An output cut into numbered blocks is formatted
 * by several threads at once and handed to a sink strictly in block order, with memory
 * bounded by a few blocks. Used by the generators' direct writers (dataflow_text.c,
 * dataflow_bin.c). Internal to the library.
 *
 * Invariants: block b is formatted into slot b % nslots only once block b - nslots has
 * been handed to the sink, so at most nslots blocks exist at a time; the sink sees
 * blocks 0, 1, ... in order, each exactly once, from the calling thread; the bytes do
 * not depend on the number of threads. The first failure (memory, a sink's error) stops
 * every thread and is the status returned.
 */
#ifndef LP_CORE_OPIPE_H
#define LP_CORE_OPIPE_H

#include "longpole/base/status.h"

#include <stddef.h>

/* Bytes a format function may write beyond bound(b) (fixed-size copies of short strings). */
#define LP_OPIPE_SLACK 128
#define LP_OPIPE_MAX_THREADS 8

typedef struct lp_opipe {
    size_t nblocks;
    void *ctx;
    /* Most bytes block b takes (the buffer has LP_OPIPE_SLACK more, 16-byte aligned). */
    size_t (*bound)(void *ctx, size_t b);
    /* Format block b into buf; returns its length. Called from any thread, concurrently
     * for different blocks: it must only read shared state. */
    size_t (*format)(void *ctx, size_t b, char *buf);
    /* Consume block b (write it out); called in block order from the calling thread. */
    lp_status (*sink)(void *ctx, size_t b, const char *buf, size_t len, lp_error *err);
} lp_opipe;

/* Run the pipeline on `nthreads` formatting threads (0: one per online CPU, at most
 * LP_OPIPE_MAX_THREADS; 1 or very few blocks: everything on the calling thread). */
lp_status lp_opipe_run(const lp_opipe *p, unsigned nthreads, lp_error *err);

/* One per online CPU, at most LP_OPIPE_MAX_THREADS. */
unsigned lp_opipe_default_threads(void);

#endif
