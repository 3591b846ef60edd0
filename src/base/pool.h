/* pool.h: the one thread pool of liblongpole, with ordered delivery. Internal to the
 * library (every module that runs work on threads uses this one).
 *
 * A pool is a fixed set of worker threads, started once by lp_pool_new and reused by
 * every run and every queue until lp_pool_free. It serves two patterns:
 *
 *  - lp_pool_run: fn over tasks 0..n-1, the calling thread taking tasks too (the
 *    request-log analyses, the generators, the two-thread activity graph). A task is a
 *    contiguous range of the data (lp_pool_range) with its own scratch, merged by the
 *    caller in task order afterwards, so results depend on n but never on which thread
 *    ran which task, nor on how many threads there were.
 *
 *  - lp_poolq: jobs submitted in sequence (reserve a slot, fill it, submit), run on the
 *    workers, and delivered strictly in submission order on the thread that submits,
 *    with at most `slots` jobs in flight: reserve waits (delivering) while the queue is
 *    full, so a slow consumer slows the producer down (the window and stream analyses,
 *    the generators' ordered output, the text reader's chunk pipeline). The caller owns
 *    an array of `slots` job records; the queue only says which one to fill, and a slot
 *    is handed out again only once its job has been delivered.
 *
 * Invariants and guarantees:
 *  - one owner: lp_pool_run and the lp_poolq_* calls come from one thread at a time (the
 *    owner); tasks and jobs may call lp_pool_cancel / lp_pool_cancelled, nothing else of
 *    their own pool. At most one queue is attached to a pool at a time; a run may take
 *    place while it is attached (its tasks and the jobs share the workers).
 *  - jobs start in submission order; with one worker they run one at a time in that
 *    order (a sequential producer, such as the text reader's stage 1, relies on this).
 *  - a pool without workers (asked for none, or none could be started) runs everything
 *    on the calling thread: tasks in order, each job at its submission, delivered at once
 *    (its queue has one slot). Results are the same; only the speed differs.
 *  - errors: a failing task or job, or a failing delivery, stops what has not started
 *    (tasks and jobs already running finish) and is returned by this and every later
 *    call on the run or queue. The error returned is the first in task or submission
 *    order: for a queue, exactly what running the jobs and deliveries one after another
 *    would give (the jobs before it are all delivered, none after it); for a run, the
 *    lowest-numbered failing task.
 *  - cancellation (lp_pool_cancel, from any thread) is sticky: nothing more starts and
 *    every run or queue call returns LP_ERR_ARG "cancelled".
 *  - no thread outlives lp_pool_free; lp_poolq_free waits for the jobs that started.
 *  - thread ids: queue jobs get a thread number in [0, lp_poolq_threads(q)) (0 on the
 *    calling thread of a pool without workers), so per-thread workspaces can be indexed.
 */
#ifndef LP_BASE_POOL_H
#define LP_BASE_POOL_H

#include "longpole/base/status.h"

#include <stddef.h>
#include <stdint.h>

typedef struct lp_pool lp_pool;
typedef struct lp_poolq lp_poolq;

/* Threads for a request of `want` (0: one per online CPU), at most `max` (at least 1). */
unsigned lp_pool_threads(unsigned want, unsigned max);

/* A pool of `nworkers` threads (0: none, everything on the calling thread). Threads that
 * cannot be started are done without (see lp_pool_workers); LP_ERR_NOMEM only when the
 * pool's own memory cannot be had. */
lp_status lp_pool_new(lp_pool **out, unsigned nworkers, lp_error *err);
/* Stop and join every worker; NULL is allowed. No run may be active, no queue attached. */
void lp_pool_free(lp_pool *p);
/* Worker threads actually running (<= nworkers asked for). */
unsigned lp_pool_workers(const lp_pool *p);

/* Stop everything: nothing more is started and every later call fails with LP_ERR_ARG
 * "cancelled". Any thread, any time; tasks and jobs may poll lp_pool_cancelled. */
void lp_pool_cancel(lp_pool *p);
int lp_pool_cancelled(const lp_pool *p); /* 0 for NULL */

/* ---- run: fn over tasks 0..n-1 ------------------------------------------------------ */

/* One task; err is never NULL. Runs on any thread, concurrently with other tasks. */
typedef lp_status (*lp_pool_fn)(void *ctx, size_t task, size_t ntasks, lp_error *err);

/* Run fn(ctx, t, ntasks, .) for every t in 0..ntasks-1 on the workers and the calling
 * thread; task 0 always runs on the calling thread (so it may report progress). Returns
 * when every started task has ended. LP_OK, or the error of the
 * lowest-numbered failing task (tasks not started by then are not started). p may be
 * NULL (a pool that could not be made): the tasks then run here, in order. */
lp_status lp_pool_run(lp_pool *p, size_t ntasks, lp_pool_fn fn, void *ctx, lp_error *err);

/* [*lo, *hi): part t of n of the range [0, total). */
static inline void lp_pool_range(uint64_t total, size_t t, size_t n, uint64_t *lo, uint64_t *hi)
{
    *lo = total * t / n;
    *hi = total * (t + 1) / n;
}

/* ---- queue: ordered jobs with back-pressure ---------------------------------------- */

/* Run the job in `slot` on worker thread number `thread`; err is never NULL. Jobs of
 * different slots run concurrently: a job touches its slot, its thread's workspace and
 * shared state it only reads. */
typedef lp_status (*lp_poolq_job_fn)(void *ctx, size_t slot, unsigned thread, lp_error *err);
/* Consume the result of the job in `slot`, on the owner thread, in submission order;
 * a non-zero status stops the queue. err is never NULL. */
typedef lp_status (*lp_poolq_deliver_fn)(void *ctx, size_t slot, lp_error *err);

/* A queue on pool p with `nslots` slots (at least 1; one when the pool has no workers):
 * the caller sizes its job records by lp_poolq_slots afterwards. */
lp_status lp_poolq_new(lp_poolq **out, lp_pool *p, size_t nslots, lp_poolq_job_fn job, lp_poolq_deliver_fn deliver,
                       void *ctx, lp_error *err);
/* Wait for the jobs that started, drop the rest undelivered, detach from the pool.
 * NULL is allowed. The caller's job records are then no longer touched by any thread. */
void lp_poolq_free(lp_poolq *q);
size_t lp_poolq_slots(const lp_poolq *q);
/* Thread numbers the jobs see: 0 .. this - 1. */
unsigned lp_poolq_threads(const lp_poolq *q);

/* The slot to fill for the next job: waits, delivering results, while `slots` jobs are
 * in flight (submitted, not yet delivered). */
lp_status lp_poolq_reserve(lp_poolq *q, size_t *slot, lp_error *err);
/* Queue the slot reserved last. Without workers the job runs and is delivered now. */
lp_status lp_poolq_submit(lp_poolq *q, lp_error *err);
/* Deliver the results that are ready, without waiting. */
lp_status lp_poolq_poll(lp_poolq *q, lp_error *err);
/* Wait for every submitted job and deliver it. */
lp_status lp_poolq_finish(lp_poolq *q, lp_error *err);
/* LP_OK, or the failure that stopped the queue (copied to err). */
lp_status lp_poolq_status(lp_poolq *q, lp_error *err);

/* Test hook: after `n` more threads have been started, starting a thread fails (n < 0
 * disables it). Not thread-safe; tests only. */
void lp_pool_fail_start_after(long n);

#endif
