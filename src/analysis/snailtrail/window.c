/* window.c: the pool of threads that analyses windows in parallel and hands results back
 * in order (window.h; SnailTrail §5). One window's analysis is in winanalyze.c, the
 * window grid in wingrid.c.
 *
 * The pool is a ring of 2 * threads + 2 slots. The caller fills slots in order (submit)
 * and empties them in the same order (delivery, on the caller's thread); worker threads
 * take the oldest queued slot, analyse it with their own workspace and mark it done.
 * One mutex guards the slot states; two condition variables wake the workers (work
 * queued) and the caller (work done). A result stays in its slot until delivered, so
 * the buffers of a slot's lp_winres are reused by every window that passes through it.
 */
#include "longpole/analysis/snailtrail/window.h"
#include "longpole/base/alloc.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the pool --------------------------------------------------------------------------- */

enum { SLOT_FREE = 0, SLOT_QUEUED, SLOT_RUNNING, SLOT_DONE };

typedef struct slot {
    int state;
    const lp_snapsrc *src;
    const lp_sumkeys *keys;
    uint64_t index;
    int64_t ts, te;
    void *user;
    lp_status st;
    lp_error err;
    lp_winres res;
} slot;

struct lp_winpool {
    lp_winopts o;
    lp_winres_fn fn;
    void *ctx;
    unsigned nthreads;       /* 1: synchronous */
    slot *slots;
    size_t nslots;
    uint64_t head, tail;     /* slots [head, tail) are in use, in submission order */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    int stop;                /* workers exit */
    int failed;              /* a window or the callback failed: skip the rest */
    lp_status fail_st;
    lp_error fail_err;
    pthread_t *th;
    unsigned nstarted;
    lp_winws *ws;            /* [nthreads] */
    struct worker_arg *wa;   /* [nthreads] */
};

typedef struct worker_arg {
    lp_winpool *p;
    unsigned id;
} worker_arg;

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    lp_winpool *p = wa->p;
    lp_winws *ws = &p->ws[wa->id];
    pthread_mutex_lock(&p->mu);
    for (;;) {
        slot *sl = NULL;
        while (!p->stop) {
            for (uint64_t i = p->head; i < p->tail; i++) {
                slot *c = &p->slots[i % p->nslots];
                if (c->state == SLOT_QUEUED) {
                    sl = c;
                    break;
                }
            }
            if (sl)
                break;
            pthread_cond_wait(&p->work, &p->mu);
        }
        if (!sl)
            break;
        sl->state = SLOT_RUNNING;
        int skip = p->failed;
        pthread_mutex_unlock(&p->mu);
        lp_error_clear(&sl->err);
        sl->st = skip ? LP_ERR_ARG
                      : lp_window_analyze(ws, sl->src, sl->keys, sl->index, sl->ts, sl->te, &p->o, &sl->res, &sl->err);
        sl->res.user = sl->user;
        pthread_mutex_lock(&p->mu);
        sl->state = SLOT_DONE;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

unsigned lp_winpool_threads(const lp_winpool *p) { return p->nthreads; }

void lp_winpool_free(lp_winpool *p)
{
    if (!p)
        return;
    if (p->nstarted) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
        for (unsigned i = 0; i < p->nstarted; i++)
            pthread_join(p->th[i], NULL);
    }
    if (p->nthreads > 1) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->work);
        pthread_cond_destroy(&p->done);
    }
    if (p->slots)
        for (size_t i = 0; i < p->nslots; i++)
            lp_winres_release(&p->slots[i].res);
    if (p->ws)
        for (unsigned i = 0; i < p->nthreads; i++)
            lp_winws_release(&p->ws[i]);
    lp_free(p->slots);
    lp_free(p->ws);
    lp_free(p->wa);
    lp_free(p->th);
    lp_free(p);
}

lp_status lp_winpool_new(lp_winpool **out, unsigned nthreads, const lp_winopts *o, lp_winres_fn fn, void *ctx,
                         lp_error *err)
{
    *out = NULL;
    if (nthreads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (unsigned)n : 1;
    }
    if (nthreads > 256)
        nthreads = 256;
    lp_winpool *p = lp_calloc(1, sizeof *p);
    if (!p)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    p->o = *o;
    p->fn = fn;
    p->ctx = ctx;
    p->nthreads = nthreads;
    p->nslots = nthreads > 1 ? 2 * (size_t)nthreads + 2 : 1;
    p->slots = lp_calloc(p->nslots, sizeof *p->slots);
    p->ws = lp_calloc(nthreads, sizeof *p->ws);
    p->wa = lp_calloc(nthreads, sizeof *p->wa);
    if (!p->slots || !p->ws || !p->wa) {
        lp_winpool_free(p);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < p->nslots; i++)
        lp_winres_init(&p->slots[i].res);
    for (unsigned i = 0; i < nthreads; i++)
        lp_winws_init(&p->ws[i]);
    if (nthreads > 1) {
        pthread_mutex_init(&p->mu, NULL);
        pthread_cond_init(&p->work, NULL);
        pthread_cond_init(&p->done, NULL);
        p->th = lp_calloc(nthreads, sizeof *p->th);
        if (!p->th) {
            lp_winpool_free(p);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        }
        worker_arg *wa = p->wa;
        for (unsigned i = 0; i < nthreads; i++) {
            wa[i].p = p;
            wa[i].id = i;
            if (pthread_create(&p->th[i], NULL, worker_main, &wa[i]) != 0) {
                lp_winpool_free(p);
                return lp_error_set(err, LP_ERR_NOMEM, "cannot start analysis threads");
            }
            p->nstarted++;
        }
    }
    *out = p;
    return LP_OK;
}

static void record_failure(lp_winpool *p, lp_status st, const lp_error *e)
{
    if (p->failed)
        return;
    p->failed = 1;
    p->fail_st = st;
    p->fail_err = *e;
}

/* Deliver done slots at the head. Called with the mutex held (threaded) and returns
 * with it held; the callback runs unlocked. */
static void deliver_ready(lp_winpool *p)
{
    while (p->head < p->tail) {
        slot *sl = &p->slots[p->head % p->nslots];
        if (sl->state != SLOT_DONE)
            break;
        int stopped = 0;
        if (!sl->st && !p->failed && p->fn) {
            pthread_mutex_unlock(&p->mu);
            stopped = p->fn(p->ctx, &sl->res);
            pthread_mutex_lock(&p->mu);
        }
        if (sl->st) {
            record_failure(p, sl->st, &sl->err);
        } else if (stopped) {
            lp_error e;
            lp_error_set(&e, LP_ERR_ARG, "stopped by the result callback");
            record_failure(p, LP_ERR_ARG, &e);
        }
        sl->state = SLOT_FREE;
        p->head++;
    }
}

static lp_status failure(lp_winpool *p, lp_error *err)
{
    if (err)
        *err = p->fail_err;
    return p->fail_st;
}

lp_status lp_winpool_submit(lp_winpool *p, const lp_snapsrc *src, const lp_sumkeys *keys, uint64_t index,
                            int64_t ts, int64_t te, void *user, lp_error *err)
{
    if (p->nthreads <= 1) {
        if (p->failed)
            return failure(p, err);
        slot *sl = &p->slots[0];
        lp_status st = lp_window_analyze(&p->ws[0], src, keys, index, ts, te, &p->o, &sl->res, err);
        if (st) {
            record_failure(p, st, err);
            return st;
        }
        sl->res.user = user;
        if (p->fn && p->fn(p->ctx, &sl->res)) {
            lp_error e;
            lp_error_set(&e, LP_ERR_ARG, "stopped by the result callback");
            record_failure(p, LP_ERR_ARG, &e);
            return failure(p, err);
        }
        return LP_OK;
    }
    pthread_mutex_lock(&p->mu);
    for (;;) {
        deliver_ready(p);
        if (p->failed)
            break;
        if (p->tail - p->head < p->nslots)
            break;
        pthread_cond_wait(&p->done, &p->mu);
    }
    if (p->failed) {
        pthread_mutex_unlock(&p->mu);
        return failure(p, err);
    }
    slot *sl = &p->slots[p->tail % p->nslots];
    sl->src = src;
    sl->keys = keys;
    sl->index = index;
    sl->ts = ts;
    sl->te = te;
    sl->user = user;
    sl->state = SLOT_QUEUED;
    p->tail++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return LP_OK;
}

lp_status lp_winpool_poll(lp_winpool *p, lp_error *err)
{
    if (p->nthreads > 1) {
        pthread_mutex_lock(&p->mu);
        deliver_ready(p);
        pthread_mutex_unlock(&p->mu);
    }
    return p->failed ? failure(p, err) : LP_OK;
}

lp_status lp_winpool_finish(lp_winpool *p, lp_error *err)
{
    if (p->nthreads > 1) {
        pthread_mutex_lock(&p->mu);
        for (;;) {
            deliver_ready(p);
            if (p->head == p->tail)
                break;
            pthread_cond_wait(&p->done, &p->mu);
        }
        pthread_mutex_unlock(&p->mu);
    }
    return p->failed ? failure(p, err) : LP_OK;
}
