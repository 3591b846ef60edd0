/* test_pool.c: base/pool.h against a sequential twin (every job and delivery run one
 * after the other on one thread) over thousands of jobs of random sizes, thread counts
 * 1..8 and random slot counts: results delivered in submission order and equal to the
 * twin's, the bound on jobs in flight never exceeded, the first error (of a job, of a
 * delivery, of a task) winning and stopping the rest, cancellation (from a job, a
 * delivery, a task and another thread), pools whose threads cannot be started, the
 * sequential order of jobs on one worker, a run while a queue is busy, and allocation
 * failure. Nothing here waits on a clock: threads meet through the pool's own calls, a
 * flag and sched_yield. */
#include "t.h"
#include "tutil.h"
#include "base/pool.h"
#include "longpole/base/alloc.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

/* Work of a random size: the job's value, and time spent so jobs end out of order. */
static uint64_t work(uint64_t seed, uint32_t size)
{
    uint64_t s = seed, v = 0;
    for (uint32_t i = 0; i < size; i++)
        v ^= t_splitmix(&s);
    return v;
}

/* ---- the queue ------------------------------------------------------------------------ */

#define MAXJOBS 4096

typedef struct job {
    uint64_t seq;            /* filled at reserve */
    uint32_t size;
    uint64_t value;          /* result */
    unsigned thread;
} job;

typedef struct qtest {
    lp_pool *pool;
    lp_poolq *q;
    job *slots;
    size_t nslots;
    unsigned nthreads;       /* lp_poolq_threads */
    uint64_t seed;
    uint32_t size[MAXJOBS];
    uint64_t fail_job;       /* this job fails (UINT64_MAX: none) */
    uint64_t fail_job2;      /* and this one (a later failure that must not win) */
    uint64_t fail_deliver;   /* this delivery fails */
    uint64_t cancel_job;     /* this job cancels the pool */
    uint64_t cancel_deliver; /* this delivery cancels the pool */
    uint64_t block_job;      /* this job waits until the pool is cancelled from outside */
    atomic_int reached;      /* block_job started */
    atomic_int started[MAXJOBS];
    atomic_long live;        /* started and not yet delivered */
    atomic_long live_max;
    atomic_int bad_thread;
    uint64_t delivered[MAXJOBS];
    size_t ndelivered;
    uint64_t submitted;
    int order_bad;           /* a delivery out of order, or a wrong value */
    /* one worker: jobs run one at a time, in order */
    int check_serial;
    uint64_t serial_next;
    int serial_bad;
} qtest;

static lp_status q_job(void *ctx, size_t slot, unsigned thread, lp_error *err)
{
    qtest *x = ctx;
    job *j = &x->slots[slot];
    long live = atomic_fetch_add(&x->live, 1) + 1, m = atomic_load(&x->live_max);
    while (live > m && !atomic_compare_exchange_weak(&x->live_max, &m, live))
        ;
    atomic_fetch_add(&x->started[j->seq], 1);
    if (thread >= x->nthreads)
        atomic_store(&x->bad_thread, 1);
    if (x->check_serial) {
        x->serial_bad |= j->seq != x->serial_next;
        x->serial_next = j->seq + 1;
    }
    if (j->seq == x->block_job) {
        atomic_store(&x->reached, 1);
        while (!lp_pool_cancelled(x->pool))
            sched_yield();
    }
    j->thread = thread;
    j->value = work(x->seed + j->seq, j->size);
    if (j->seq == x->cancel_job)
        lp_pool_cancel(x->pool);
    if (j->seq == x->fail_job || j->seq == x->fail_job2)
        return lp_error_set(err, LP_ERR_DATA, "job %llu failed", (unsigned long long)j->seq);
    return LP_OK;
}

static lp_status q_deliver(void *ctx, size_t slot, lp_error *err)
{
    qtest *x = ctx;
    job *j = &x->slots[slot];
    atomic_fetch_sub(&x->live, 1);
    if (j->seq != x->ndelivered || j->value != work(x->seed + j->seq, x->size[j->seq]))
        x->order_bad = 1;
    x->delivered[x->ndelivered++] = j->seq;
    if (j->seq == x->cancel_deliver)
        lp_pool_cancel(x->pool);
    if (j->seq == x->fail_deliver)
        return lp_error_set(err, LP_ERR_IO, "delivery %llu failed", (unsigned long long)j->seq);
    return LP_OK;
}

static void qtest_init(qtest *x, uint64_t seed)
{
    memset(x, 0, sizeof *x);
    x->seed = seed;
    x->fail_job = x->fail_job2 = x->fail_deliver = UINT64_MAX;
    x->cancel_job = x->cancel_deliver = x->block_job = UINT64_MAX;
}

/* Open a queue with `nslots` on a pool of `nworkers`; 0 on success. */
static int qtest_open(qtest *x, unsigned nworkers, size_t nslots)
{
    lp_error err;
    if (lp_pool_new(&x->pool, nworkers, &err))
        return -1;
    if (lp_poolq_new(&x->q, x->pool, nslots, q_job, q_deliver, x, &err)) {
        lp_pool_free(x->pool);
        return -1;
    }
    x->nslots = lp_poolq_slots(x->q);
    x->nthreads = lp_poolq_threads(x->q);
    x->slots = calloc(x->nslots, sizeof *x->slots);
    return x->slots ? 0 : -1;
}

static void qtest_close(qtest *x)
{
    lp_poolq_free(x->q);
    lp_pool_free(x->pool);
    free(x->slots);
}

/* Submit jobs 0..n-1, polling now and then; the status of the first failing call. */
static lp_status qtest_feed(qtest *x, uint64_t n, uint64_t *rng, lp_error *err)
{
    for (uint64_t i = 0; i < n; i++) {
        size_t s;
        lp_status st = lp_poolq_reserve(x->q, &s, err);
        if (st)
            return st;
        /* the bound: a slot is handed out only while fewer than nslots are in flight */
        CHECK(x->submitted - x->ndelivered < x->nslots);
        x->slots[s].seq = i;
        x->slots[s].size = x->size[i];
        if ((st = lp_poolq_submit(x->q, err)))
            return st;
        x->submitted++;
        if (t_splitmix(rng) % 8 == 0 && (st = lp_poolq_poll(x->q, err)))
            return st;
    }
    return lp_poolq_finish(x->q, err);
}

static void random_sizes(qtest *x, uint64_t n, uint64_t *rng)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = t_splitmix(rng);
        x->size[i] = r % 4 == 0 ? (uint32_t)(r >> 8) % 20000 : (uint32_t)(r >> 8) % 200;
    }
}

static void test_queue_ordered(void)
{
    uint64_t rng = 1;
    uint64_t total = 0;
    for (int round = 0; round < 64; round++) {
        unsigned threads = 1 + (unsigned)(t_splitmix(&rng) % 8);
        size_t nslots = 1 + (size_t)(t_splitmix(&rng) % (2 * threads + 3));
        uint64_t n = t_splitmix(&rng) % 300;
        qtest *x = malloc(sizeof *x);
        qtest_init(x, t_splitmix(&rng));
        random_sizes(x, n, &rng);
        /* threads - 1 workers or threads workers: both are used by the library */
        unsigned nworkers = threads == 1 ? 0 : threads - (unsigned)(round & 1);
        CHECK(qtest_open(x, nworkers, nslots) == 0);
        CHECK_EQ_I(lp_pool_workers(x->pool), nworkers);
        CHECK_EQ_I(x->nslots, nworkers ? nslots : 1);
        lp_error err;
        CHECK_EQ_I(qtest_feed(x, n, &rng, &err), LP_OK);
        CHECK_EQ_I(x->ndelivered, n);
        CHECK(!x->order_bad);
        CHECK(!atomic_load(&x->bad_thread));
        CHECK(atomic_load(&x->live_max) <= (long)x->nslots);
        for (uint64_t i = 0; i < n; i++)
            CHECK_EQ_I(atomic_load(&x->started[i]), 1);
        CHECK_EQ_I(lp_poolq_status(x->q, &err), LP_OK);
        total += n;
        qtest_close(x);
        free(x);
    }
    CHECK(total > 5000);
}

/* One pool, many queues and runs in turn: the workers are reused. */
static lp_status sum_task(void *ctx, size_t t, size_t n, lp_error *err)
{
    uint64_t *out = ctx;
    out[t] = work(t * 7919 + n, (uint32_t)(t % 13) * 100);
    return LP_OK;
}

static void test_reuse(void)
{
    lp_pool *p;
    lp_error err;
    CHECK_EQ_I(lp_pool_new(&p, 3, &err), LP_OK);
    uint64_t rng = 7;
    for (int round = 0; round < 20; round++) {
        qtest *x = malloc(sizeof *x);
        qtest_init(x, (uint64_t)round);
        x->pool = p;
        uint64_t n = 50 + t_splitmix(&rng) % 100;
        random_sizes(x, n, &rng);
        CHECK_EQ_I(lp_poolq_new(&x->q, p, 4, q_job, q_deliver, x, &err), LP_OK);
        x->nslots = lp_poolq_slots(x->q);
        x->nthreads = lp_poolq_threads(x->q);
        x->slots = calloc(x->nslots, sizeof *x->slots);
        CHECK_EQ_I(qtest_feed(x, n, &rng, &err), LP_OK);
        CHECK_EQ_I(x->ndelivered, n);
        CHECK(!x->order_bad);
        lp_poolq_free(x->q);
        free(x->slots);
        free(x);
        uint64_t out[40], want[40];
        size_t nt = (size_t)(t_splitmix(&rng) % 40);
        for (size_t t = 0; t < nt; t++)
            sum_task(want, t, nt, &err);
        CHECK_EQ_I(lp_pool_run(p, nt, sum_task, out, &err), LP_OK);
        CHECK(memcmp(out, want, nt * sizeof *out) == 0);
        memset(out, 0, sizeof out); /* no pool (it could not be made): the tasks run here */
        CHECK_EQ_I(lp_pool_run(NULL, nt, sum_task, out, &err), LP_OK);
        CHECK(memcmp(out, want, nt * sizeof *out) == 0);
    }
    CHECK(!lp_pool_cancelled(NULL));
    lp_pool_free(p);
}

/* Jobs on one worker run one at a time in submission order (the text reader relies on it). */
static void test_one_worker_serial(void)
{
    uint64_t rng = 3;
    qtest *x = malloc(sizeof *x);
    qtest_init(x, 5);
    x->check_serial = 1;
    random_sizes(x, 2000, &rng);
    CHECK(qtest_open(x, 1, 3) == 0);
    lp_error err;
    CHECK_EQ_I(qtest_feed(x, 2000, &rng, &err), LP_OK);
    CHECK_EQ_I(x->ndelivered, 2000);
    CHECK(!x->serial_bad);
    CHECK(!x->order_bad);
    qtest_close(x);
    free(x);
}

/* The first failure in submission order wins, whatever the timing: the jobs before it are
 * all delivered, none after it, and no job beyond the bound after it is started. */
static void test_queue_errors(void)
{
    uint64_t rng = 11;
    for (int round = 0; round < 200; round++) {
        unsigned threads = 1 + (unsigned)(t_splitmix(&rng) % 8);
        size_t nslots = 1 + (size_t)(t_splitmix(&rng) % (2 * threads + 2));
        uint64_t n = 20 + t_splitmix(&rng) % 200;
        qtest *x = malloc(sizeof *x);
        qtest_init(x, (uint64_t)round);
        random_sizes(x, n, &rng);
        int kind = round % 3; /* 0: a job fails; 1: a delivery fails; 2: both, the delivery first */
        uint64_t first = t_splitmix(&rng) % n;
        if (kind == 0) {
            x->fail_job = first;
            x->fail_job2 = first + 1 + t_splitmix(&rng) % 5; /* fails too, later: must not win */
        } else if (kind == 1) {
            x->fail_deliver = first;
        } else {
            x->fail_deliver = first;
            x->fail_job = first + 1 + t_splitmix(&rng) % 3;
        }
        CHECK(qtest_open(x, threads == 1 ? 0 : threads, nslots) == 0);
        lp_error err;
        lp_error_clear(&err);
        lp_status st = qtest_feed(x, n, &rng, &err);
        char want[64];
        if (kind == 0) {
            CHECK_EQ_I(st, LP_ERR_DATA);
            snprintf(want, sizeof want, "job %llu failed", (unsigned long long)first);
            CHECK_EQ_I(x->ndelivered, first);
        } else {
            CHECK_EQ_I(st, LP_ERR_IO);
            snprintf(want, sizeof want, "delivery %llu failed", (unsigned long long)first);
            CHECK_EQ_I(x->ndelivered, first + 1);
        }
        CHECK_STR(err.msg, want);
        CHECK(!x->order_bad);
        /* nothing beyond the bound was started */
        for (uint64_t i = first + x->nslots; i < n; i++)
            CHECK_EQ_I(atomic_load(&x->started[i]), 0);
        for (uint64_t i = 0; i < first; i++)
            CHECK_EQ_I(atomic_load(&x->started[i]), 1);
        /* the failure is sticky */
        lp_error e2;
        size_t s;
        CHECK_EQ_I(lp_poolq_reserve(x->q, &s, &e2), st);
        CHECK_STR(e2.msg, want);
        CHECK_EQ_I(lp_poolq_finish(x->q, &e2), st);
        CHECK_EQ_I(lp_poolq_poll(x->q, &e2), st);
        CHECK_EQ_I(lp_poolq_status(x->q, &e2), st);
        qtest_close(x);
        free(x);
    }
}

static void check_cancelled(qtest *x, lp_status st, const lp_error *err, uint64_t k)
{
    CHECK_EQ_I(st, LP_ERR_ARG);
    CHECK_STR(err->msg, "cancelled");
    CHECK(!x->order_bad);
    CHECK(x->ndelivered <= k + 1);
    for (uint64_t i = k + x->nslots; i < MAXJOBS; i++)
        CHECK_EQ_I(atomic_load(&x->started[i]), 0);
    CHECK(lp_pool_cancelled(x->pool));
    lp_error e2;
    CHECK_EQ_I(lp_poolq_finish(x->q, &e2), LP_ERR_ARG);
    CHECK_EQ_I(lp_pool_run(x->pool, 4, sum_task, (uint64_t[4]){0}, &e2), LP_ERR_ARG);
}

typedef struct canceller {
    qtest *x;
} canceller;

static void *cancel_main(void *arg)
{
    qtest *x = ((canceller *)arg)->x;
    while (!atomic_load(&x->reached))
        sched_yield();
    lp_pool_cancel(x->pool);
    return NULL;
}

static void test_queue_cancel(void)
{
    uint64_t rng = 13;
    for (int round = 0; round < 120; round++) {
        unsigned threads = 1 + (unsigned)(t_splitmix(&rng) % 8);
        size_t nslots = 1 + (size_t)(t_splitmix(&rng) % (2 * threads + 2));
        uint64_t n = 20 + t_splitmix(&rng) % 200;
        uint64_t k = t_splitmix(&rng) % n;
        qtest *x = malloc(sizeof *x);
        qtest_init(x, (uint64_t)round);
        random_sizes(x, n, &rng);
        int how = round % 3; /* from a job, from a delivery, from another thread */
        if (how == 0)
            x->cancel_job = k;
        else if (how == 1)
            x->cancel_deliver = k;
        else
            x->block_job = k;
        CHECK(qtest_open(x, threads == 1 ? 0 : threads, nslots) == 0);
        pthread_t th;
        canceller c = {x};
        if (how == 2)
            CHECK(pthread_create(&th, NULL, cancel_main, &c) == 0);
        lp_error err;
        lp_status st = qtest_feed(x, n, &rng, &err);
        if (how == 2)
            pthread_join(th, NULL);
        check_cancelled(x, st, &err, k);
        if (how != 1)
            CHECK(x->ndelivered <= k); /* the cancelling job itself is never delivered */
        qtest_close(x);
        free(x);
    }
}

/* ---- runs -------------------------------------------------------------------------------- */

typedef struct rtest {
    lp_pool *pool;
    size_t n;
    uint32_t size[MAXJOBS];
    uint64_t out[MAXJOBS];
    atomic_int ran[MAXJOBS];
    size_t fail_a, fail_b;   /* tasks that fail */
    size_t cancel_at;        /* this task cancels the pool */
    int hold;                /* every other task waits for the cancel */
    pthread_t owner;         /* the thread that calls lp_pool_run */
    int task0_elsewhere;     /* task 0 ran on another thread */
} rtest;

static lp_status r_task(void *ctx, size_t t, size_t n, lp_error *err)
{
    rtest *x = ctx;
    atomic_fetch_add(&x->ran[t], 1);
    if (t == 0 && !pthread_equal(pthread_self(), x->owner))
        x->task0_elsewhere = 1;
    if (n != x->n)
        return lp_error_set(err, LP_ERR_ARG, "wrong count");
    if (x->hold && t != x->cancel_at) /* hold the thread until the pool is cancelled */
        while (!lp_pool_cancelled(x->pool))
            sched_yield();
    x->out[t] = work(t, x->size[t]);
    if (t == x->cancel_at)
        lp_pool_cancel(x->pool);
    if (t == x->fail_a || t == x->fail_b)
        return lp_error_set(err, LP_ERR_DATA, "task %zu failed", t);
    return LP_OK;
}

/* Tasks over thread counts 1..8 against their sequential values. The lowest failing task's
 * error is returned; every task below it has run, none twice. Stopping is shown by
 * cancelling: with every other task held until the cancel, each thread has taken one task
 * and no task beyond the first `threads` ever starts. */
static void test_run(void)
{
    uint64_t rng = 17;
    for (int round = 0; round < 300; round++) {
        unsigned threads = 1 + (unsigned)(t_splitmix(&rng) % 8);
        rtest *x = calloc(1, sizeof *x);
        x->n = (size_t)(t_splitmix(&rng) % (round < 20 ? 3000 : 200));
        for (size_t t = 0; t < x->n; t++)
            x->size[t] = (uint32_t)(t_splitmix(&rng) % 3000);
        x->fail_a = x->fail_b = x->cancel_at = SIZE_MAX;
        int kind = round % 4; /* 0, 1: all succeed; 2: two tasks fail; 3: a task cancels */
        if (kind == 3 && x->n < threads)
            x->n = threads;
        if (x->n && kind == 2) {
            x->fail_a = (size_t)(t_splitmix(&rng) % x->n);
            x->fail_b = x->fail_a + (size_t)(t_splitmix(&rng) % 4);
        } else if (kind == 3) {
            x->hold = threads > 1;
            x->cancel_at = (size_t)(t_splitmix(&rng) % (x->hold ? threads : x->n));
        }
        lp_error err;
        CHECK_EQ_I(lp_pool_new(&x->pool, threads - 1, &err), LP_OK);
        x->owner = pthread_self();
        lp_status st = lp_pool_run(x->pool, x->n, r_task, x, &err);
        CHECK(!x->task0_elsewhere);
        if (x->fail_a != SIZE_MAX) {
            char want[64];
            snprintf(want, sizeof want, "task %zu failed", x->fail_a);
            CHECK_EQ_I(st, LP_ERR_DATA);
            CHECK_STR(err.msg, want);
            for (size_t t = 0; t < x->n; t++) { /* later tasks: at most once (none on one thread) */
                int r = atomic_load(&x->ran[t]);
                if (t <= x->fail_a)
                    CHECK_EQ_I(r, 1);
                else
                    CHECK(threads > 1 ? r <= 1 : r == 0);
            }
        } else if (x->cancel_at != SIZE_MAX) {
            CHECK_EQ_I(st, LP_ERR_ARG);
            CHECK_STR(err.msg, "cancelled");
            for (size_t t = 0; t <= x->cancel_at; t++)
                CHECK_EQ_I(atomic_load(&x->ran[t]), 1);
            for (size_t t = x->hold ? threads : x->cancel_at + 1; t < x->n; t++)
                CHECK_EQ_I(atomic_load(&x->ran[t]), 0);
            CHECK_EQ_I(lp_pool_run(x->pool, 1, r_task, x, &err), LP_ERR_ARG);
        } else {
            CHECK_EQ_I(st, LP_OK);
            for (size_t t = 0; t < x->n; t++) {
                CHECK_EQ_I(atomic_load(&x->ran[t]), 1);
                CHECK(x->out[t] == work(t, x->size[t]));
            }
        }
        lp_pool_free(x->pool);
        free(x);
    }
}

/* A run while jobs of the pool's queue are in flight: both finish, nothing mixed up. */
static void test_run_beside_queue(void)
{
    uint64_t rng = 19;
    for (int round = 0; round < 20; round++) {
        qtest *x = malloc(sizeof *x);
        qtest_init(x, (uint64_t)round);
        uint64_t n = 200;
        random_sizes(x, n, &rng);
        CHECK(qtest_open(x, 1 + (unsigned)round % 4, 6) == 0);
        lp_error err;
        uint64_t i = 0;
        for (; i < n / 2; i++) {
            size_t s;
            CHECK_EQ_I(lp_poolq_reserve(x->q, &s, &err), LP_OK);
            x->slots[s].seq = i;
            x->slots[s].size = x->size[i];
            CHECK_EQ_I(lp_poolq_submit(x->q, &err), LP_OK);
            x->submitted++;
        }
        uint64_t out[64], want[64];
        for (size_t t = 0; t < 64; t++)
            sum_task(want, t, 64, &err);
        CHECK_EQ_I(lp_pool_run(x->pool, 64, sum_task, out, &err), LP_OK);
        CHECK(memcmp(out, want, sizeof out) == 0);
        for (; i < n; i++) {
            size_t s;
            CHECK_EQ_I(lp_poolq_reserve(x->q, &s, &err), LP_OK);
            x->slots[s].seq = i;
            x->slots[s].size = x->size[i];
            CHECK_EQ_I(lp_poolq_submit(x->q, &err), LP_OK);
        }
        CHECK_EQ_I(lp_poolq_finish(x->q, &err), LP_OK);
        CHECK_EQ_I(x->ndelivered, n);
        CHECK(!x->order_bad);
        qtest_close(x);
        free(x);
    }
}

/* ---- threads that cannot be started, memory that cannot be had ------------------------ */

static void test_start_failure(void)
{
    uint64_t rng = 23;
    for (long ok = 0; ok <= 4; ok++) {
        lp_pool_fail_start_after(ok);
        qtest *x = malloc(sizeof *x);
        qtest_init(x, (uint64_t)ok);
        random_sizes(x, 500, &rng);
        int rc = qtest_open(x, 6, 14);
        lp_pool_fail_start_after(-1);
        CHECK(rc == 0);
        CHECK_EQ_I(lp_pool_workers(x->pool), ok);
        CHECK_EQ_I(x->nslots, ok ? 14 : 1);
        lp_error err;
        CHECK_EQ_I(qtest_feed(x, 500, &rng, &err), LP_OK);
        CHECK_EQ_I(x->ndelivered, 500);
        CHECK(!x->order_bad);
        CHECK(atomic_load(&x->live_max) <= (long)x->nslots);
        uint64_t out[100], want[100];
        for (size_t t = 0; t < 100; t++)
            sum_task(want, t, 100, &err);
        CHECK_EQ_I(lp_pool_run(x->pool, 100, sum_task, out, &err), LP_OK);
        CHECK(memcmp(out, want, sizeof out) == 0);
        qtest_close(x);
        free(x);
    }
}

static void test_out_of_memory(void)
{
    int succeeded = 0, failed = 0;
    for (long n = 0; n < 20; n++) {
        lp_pool *p = NULL;
        lp_poolq *q = NULL;
        lp_error err;
        lp_alloc_fail_after(n);
        lp_status st = lp_pool_new(&p, 3, &err);
        if (!st) {
            st = lp_poolq_new(&q, p, 8, q_job, q_deliver, NULL, &err);
            CHECK((st == LP_OK) == (q != NULL));
        }
        lp_alloc_fail_after(-1);
        CHECK(st == LP_OK || st == LP_ERR_NOMEM);
        if (st) {
            failed++;
            CHECK_STR(err.msg, "out of memory");
        } else {
            succeeded++;
        }
        lp_poolq_free(q);
        lp_pool_free(p);
    }
    CHECK(failed >= 4);
    CHECK(succeeded > 0);
}

int main(void)
{
    CHECK(lp_pool_threads(3, 8) == 3);
    CHECK(lp_pool_threads(30, 8) == 8);
    CHECK(lp_pool_threads(0, 64) >= 1);
    CHECK(lp_pool_threads(5, 0) == 1);
    test_queue_ordered();
    test_reuse();
    test_one_worker_serial();
    test_queue_errors();
    test_queue_cancel();
    test_run();
    test_run_beside_queue();
    test_start_failure();
    test_out_of_memory();
    return t_done("test_pool");
}
