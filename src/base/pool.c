/* pool.c: the thread pool with ordered delivery (pool.h).
 *
 * One mutex guards everything the threads share: the current run, the attached queue's
 * counters and slot states; two condition variables wake the workers (`work`: a task
 * or a job to take, or stop) and the owner (`done`: a task or job ended, or cancel).
 * Workers sleep only when there is nothing to take, so nothing queued waits while a
 * worker idles; each new job or run signals as many workers as it can use.
 *
 * Run: tasks are claimed in order (next++) by the workers and the owner alike (the owner
 * claims task 0 before it lets go of the mutex it published the run under); a task
 * runs unlocked with a thread-local error; the lowest-numbered failure is kept. Once a
 * task has failed, or the pool is cancelled, nothing more is claimed. As claims go in
 * order, every task below the lowest failing one has run, so which error is returned
 * does not depend on timing.
 *
 * Queue: sequence numbers, with seq % nslots the slot: [head, claimed) have started
 * (done says which have ended), [claimed, tail) are queued, head is the next to deliver
 * and tail - head <= nslots. stop_at is the first failed job (or delivery): jobs after
 * it are skipped when claimed (never run) and delivery stops there, so the outcome is
 * that of running jobs and deliveries one after the other. Deliveries run unlocked on
 * the owner thread.
 */
#include "base/pool.h"
#include "longpole/base/alloc.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

typedef struct run {
    lp_pool_fn fn;
    void *ctx;
    size_t ntasks;
    size_t next;             /* next task to claim */
    size_t active;           /* tasks claimed and not ended */
    size_t fail_task;        /* lowest failing task; SIZE_MAX: none */
    lp_status fail_st;
    lp_error fail_err;
} run;

typedef struct qslot {
    int done;                /* its job ended (or was skipped) */
} qslot;

struct lp_poolq {
    lp_pool *p;
    lp_poolq_job_fn job;
    lp_poolq_deliver_fn deliver;
    void *ctx;
    qslot *slots;
    size_t nslots;
    uint64_t head;           /* next to deliver */
    uint64_t claimed;        /* next to start */
    uint64_t tail;           /* submitted */
    uint64_t running;        /* started and not ended */
    int reserved;            /* reserve was called, submit not yet */
    uint64_t stop_at;        /* the first failed job or delivery; UINT64_MAX: none */
    lp_status job_st;        /* the failed job's status and error (until delivered) */
    lp_error job_err;
    int failed;              /* the queue stopped: fail_st, fail_err are returned */
    lp_status fail_st;
    lp_error fail_err;
};

typedef struct worker {
    lp_pool *p;
    unsigned id;
} worker;

struct lp_pool {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    atomic_int cancelled;
    int stop;                /* workers exit */
    unsigned nworkers;       /* started */
    run *run;                /* the active run, or NULL */
    lp_poolq *q;             /* the attached queue, or NULL */
    pthread_t *th;           /* [nworkers asked] */
    worker *wk;
};

static long fail_start = -1;

void lp_pool_fail_start_after(long n) { fail_start = n; }

static int start_fails(void)
{
    if (fail_start < 0)
        return 0;
    if (fail_start == 0)
        return 1;
    fail_start--;
    return 0;
}

unsigned lp_pool_threads(unsigned want, unsigned max)
{
    if (want == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        want = c > 0 ? (unsigned)c : 1;
    }
    if (max < 1)
        max = 1;
    return want > max ? max : want;
}

static lp_status cancelled_error(lp_error *err) { return lp_error_set(err, LP_ERR_ARG, "cancelled"); }

int lp_pool_cancelled(const lp_pool *p) { return p && atomic_load_explicit(&p->cancelled, memory_order_relaxed); }

void lp_pool_cancel(lp_pool *p)
{
    atomic_store(&p->cancelled, 1);
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->work);
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->mu);
}

unsigned lp_pool_workers(const lp_pool *p) { return p->nworkers; }

/* ---- run ------------------------------------------------------------------------------ */

static int can_claim(const lp_pool *p, const run *r)
{
    return r->next < r->ntasks && r->fail_task == SIZE_MAX && !lp_pool_cancelled(p);
}

/* Claim and run the next task (mutex held; released while the task runs). */
static void run_task(lp_pool *p, run *r, lp_error *e)
{
    size_t t = r->next++;
    r->active++;
    pthread_mutex_unlock(&p->mu);
    lp_status st = r->fn(r->ctx, t, r->ntasks, e);
    pthread_mutex_lock(&p->mu);
    if (st && t < r->fail_task) {
        r->fail_task = t;
        r->fail_st = st;
        r->fail_err = *e;
    }
    if (--r->active == 0)
        pthread_cond_signal(&p->done);
}

lp_status lp_pool_run(lp_pool *p, size_t ntasks, lp_pool_fn fn, void *ctx, lp_error *err)
{
    lp_error e;
    if (!p || !p->nworkers || ntasks <= 1) {
        for (size_t t = 0; t < ntasks; t++) {
            if (lp_pool_cancelled(p))
                return cancelled_error(err);
            lp_status st = fn(ctx, t, ntasks, &e);
            if (st) {
                if (err)
                    *err = e;
                return st;
            }
        }
        return lp_pool_cancelled(p) ? cancelled_error(err) : LP_OK;
    }
    run r = {.fn = fn, .ctx = ctx, .ntasks = ntasks, .fail_task = SIZE_MAX};
    pthread_mutex_lock(&p->mu);
    assert(!p->run);
    p->run = &r;
    for (size_t i = 0; i + 1 < ntasks && i < p->nworkers; i++)
        pthread_cond_signal(&p->work);
    while (can_claim(p, &r)) /* the first claim is task 0: the mutex was held since p->run was set */
        run_task(p, &r, &e);
    while (r.active)
        pthread_cond_wait(&p->done, &p->mu);
    p->run = NULL;
    pthread_mutex_unlock(&p->mu);
    if (r.fail_task != SIZE_MAX) {
        if (err)
            *err = r.fail_err;
        return r.fail_st;
    }
    return lp_pool_cancelled(p) ? cancelled_error(err) : LP_OK;
}

/* ---- queue ------------------------------------------------------------------------------ */

/* Claim the next queued job and run it on thread `thread` (mutex held; released while the
 * job runs). Jobs after a failure, or after cancelling, are skipped. */
static void run_job(lp_poolq *q, unsigned thread, lp_error *e)
{
    lp_pool *p = q->p;
    uint64_t seq = q->claimed++;
    size_t slot = (size_t)(seq % q->nslots);
    if (seq > q->stop_at || lp_pool_cancelled(p)) {
        q->slots[slot].done = 1;
        return;
    }
    q->running++;
    pthread_mutex_unlock(&p->mu);
    lp_status st = q->job(q->ctx, slot, thread, e);
    pthread_mutex_lock(&p->mu);
    q->running--;
    if (st && seq < q->stop_at) {
        q->stop_at = seq;
        q->job_st = st;
        q->job_err = *e;
    }
    q->slots[slot].done = 1;
    pthread_cond_signal(&p->done);
}

static void fail(lp_poolq *q, lp_status st, const lp_error *e)
{
    q->failed = 1;
    q->fail_st = st;
    if (e != &q->fail_err)
        q->fail_err = *e;
}

/* Deliver the ended jobs at the head, in order (mutex held; released while delivering). */
static void deliver_ready(lp_poolq *q)
{
    lp_pool *p = q->p;
    while (!q->failed) {
        if (lp_pool_cancelled(p)) {
            cancelled_error(&q->fail_err);
            fail(q, LP_ERR_ARG, &q->fail_err);
            break;
        }
        if (q->head == q->tail || !q->slots[q->head % q->nslots].done)
            break;
        if (q->head == q->stop_at) {
            fail(q, q->job_st, &q->job_err);
            break;
        }
        size_t slot = (size_t)(q->head % q->nslots);
        pthread_mutex_unlock(&p->mu);
        lp_error_clear(&q->fail_err);
        lp_status st = q->deliver(q->ctx, slot, &q->fail_err);
        pthread_mutex_lock(&p->mu);
        q->slots[slot].done = 0;
        if (st) {
            if (q->head < q->stop_at)
                q->stop_at = q->head;
            fail(q, st, &q->fail_err);
            break;
        }
        q->head++;
    }
}

/* The queue's outcome for the owner (mutex held). */
static lp_status outcome(const lp_poolq *q, lp_error *err)
{
    if (!q->failed)
        return LP_OK;
    if (err)
        *err = q->fail_err;
    return q->fail_st;
}

lp_status lp_poolq_new(lp_poolq **out, lp_pool *p, size_t nslots, lp_poolq_job_fn job, lp_poolq_deliver_fn deliver,
                       void *ctx, lp_error *err)
{
    *out = NULL;
    assert(!p->q);
    lp_poolq *q = lp_calloc(1, sizeof *q);
    if (!q)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    q->nslots = p->nworkers && nslots ? nslots : 1;
    q->slots = lp_calloc(q->nslots, sizeof *q->slots);
    if (!q->slots) {
        lp_free(q);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    q->p = p;
    q->job = job;
    q->deliver = deliver;
    q->ctx = ctx;
    q->stop_at = UINT64_MAX;
    pthread_mutex_lock(&p->mu);
    p->q = q;
    pthread_mutex_unlock(&p->mu);
    *out = q;
    return LP_OK;
}

void lp_poolq_free(lp_poolq *q)
{
    if (!q)
        return;
    lp_pool *p = q->p;
    pthread_mutex_lock(&p->mu);
    q->tail = q->claimed; /* what has not started never will */
    while (q->running)
        pthread_cond_wait(&p->done, &p->mu);
    p->q = NULL;
    pthread_mutex_unlock(&p->mu);
    lp_free(q->slots);
    lp_free(q);
}

size_t lp_poolq_slots(const lp_poolq *q) { return q->nslots; }

unsigned lp_poolq_threads(const lp_poolq *q) { return q->p->nworkers ? q->p->nworkers : 1; }

lp_status lp_poolq_reserve(lp_poolq *q, size_t *slot, lp_error *err)
{
    lp_pool *p = q->p;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        deliver_ready(q);
        if (q->failed || q->tail - q->head < q->nslots)
            break;
        pthread_cond_wait(&p->done, &p->mu);
    }
    lp_status st = outcome(q, err);
    if (!st) { /* reserving again without submitting gives the same slot */
        *slot = (size_t)(q->tail % q->nslots);
        q->reserved = 1;
    }
    pthread_mutex_unlock(&p->mu);
    return st;
}

lp_status lp_poolq_submit(lp_poolq *q, lp_error *err)
{
    lp_pool *p = q->p;
    assert(q->reserved);
    q->reserved = 0;
    pthread_mutex_lock(&p->mu);
    if (!q->failed) {
        q->tail++;
        if (p->nworkers) {
            pthread_cond_signal(&p->work);
        } else { /* no workers: run and deliver it now */
            lp_error e;
            run_job(q, 0, &e);
            deliver_ready(q);
        }
    }
    lp_status st = outcome(q, err);
    pthread_mutex_unlock(&p->mu);
    return st;
}

lp_status lp_poolq_poll(lp_poolq *q, lp_error *err)
{
    pthread_mutex_lock(&q->p->mu);
    deliver_ready(q);
    lp_status st = outcome(q, err);
    pthread_mutex_unlock(&q->p->mu);
    return st;
}

lp_status lp_poolq_finish(lp_poolq *q, lp_error *err)
{
    lp_pool *p = q->p;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        deliver_ready(q);
        if (q->failed || q->head == q->tail)
            break;
        pthread_cond_wait(&p->done, &p->mu);
    }
    lp_status st = outcome(q, err);
    pthread_mutex_unlock(&p->mu);
    return st;
}

lp_status lp_poolq_status(lp_poolq *q, lp_error *err)
{
    pthread_mutex_lock(&q->p->mu);
    lp_status st = outcome(q, err);
    pthread_mutex_unlock(&q->p->mu);
    return st;
}

/* ---- the pool ------------------------------------------------------------------------- */

static void *worker_main(void *arg)
{
    worker *w = arg;
    lp_pool *p = w->p;
    lp_error e;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->run && can_claim(p, p->run)) {
            run_task(p, p->run, &e);
        } else if (p->q && p->q->claimed < p->q->tail) {
            run_job(p->q, w->id, &e);
        } else if (p->stop) {
            break;
        } else {
            pthread_cond_wait(&p->work, &p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

lp_status lp_pool_new(lp_pool **out, unsigned nworkers, lp_error *err)
{
    *out = NULL;
    lp_pool *p = lp_calloc(1, sizeof *p);
    if (!p)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (nworkers) {
        p->th = lp_calloc(nworkers, sizeof *p->th);
        p->wk = lp_calloc(nworkers, sizeof *p->wk);
        if (!p->th || !p->wk) {
            lp_free(p->th);
            lp_free(p->wk);
            lp_free(p);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        }
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->cancelled, 0);
    /* threads that cannot be started are done without: their work runs elsewhere */
    for (unsigned i = 0; i < nworkers; i++) {
        p->wk[i] = (worker){p, i};
        if (start_fails() || pthread_create(&p->th[i], NULL, worker_main, &p->wk[i]) != 0)
            break;
        p->nworkers = i + 1;
    }
    *out = p;
    return LP_OK;
}

void lp_pool_free(lp_pool *p)
{
    if (!p)
        return;
    assert(!p->run && !p->q);
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nworkers; i++)
        pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    lp_free(p->th);
    lp_free(p->wk);
    lp_free(p);
}
