/* opipe.c: the ordered output pipeline (opipe.h): formatter threads claim blocks in
 * order and format block b into slot b % nslots once block b - nslots has been
 * consumed; the calling thread hands the slots to the sink strictly in block order.
 *
 * Invariants: `next` (the next block to claim) only grows; a slot's `ready` is 1 + the
 * block formatted into it; `done` is the number of blocks the sink has consumed, so a
 * formatter may claim block b only while b < done + nslots. `failed` stops everything:
 * formatters stop claiming and the caller stops consuming.
 */
#include "base/opipe.h"
#include "longpole/base/alloc.h"

#include <pthread.h>
#include <unistd.h>

typedef struct slot {
    char *buf;
    size_t len, cap;
    size_t ready;
} slot;

typedef struct pipe_state {
    const lp_opipe *p;
    pthread_mutex_t mu;
    pthread_cond_t ready_cv, free_cv;
    size_t next, done;
    slot *slots;
    size_t nslots;
    int failed;
    int nomem;
} pipe_state;

unsigned lp_opipe_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > LP_OPIPE_MAX_THREADS ? LP_OPIPE_MAX_THREADS : (unsigned)n;
}

/* Format block b into sl, growing its buffer; -1 when out of memory. */
static int format_into(const lp_opipe *p, size_t b, slot *sl)
{
    size_t need = p->bound(p->ctx, b) + LP_OPIPE_SLACK;
    if (need > sl->cap) {
        lp_free(sl->buf);
        sl->buf = lp_malloc(need);
        sl->cap = sl->buf ? need : 0;
        if (!sl->buf)
            return -1;
    }
    sl->len = p->format(p->ctx, b, sl->buf);
    return 0;
}

static void *formatter(void *arg)
{
    pipe_state *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->failed && s->next < s->p->nblocks) {
        size_t b = s->next++;
        slot *sl = &s->slots[b % s->nslots];
        while (!s->failed && b >= s->done + s->nslots)
            pthread_cond_wait(&s->free_cv, &s->mu);
        if (s->failed)
            break;
        pthread_mutex_unlock(&s->mu);
        int rc = format_into(s->p, b, sl);
        pthread_mutex_lock(&s->mu);
        if (rc) {
            s->failed = s->nomem = 1;
            pthread_cond_broadcast(&s->free_cv);
        } else {
            sl->ready = b + 1;
        }
        pthread_cond_broadcast(&s->ready_cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static lp_status run_inline(const lp_opipe *p, lp_error *err)
{
    slot sl = {NULL, 0, 0, 0};
    lp_status st = LP_OK;
    for (size_t b = 0; b < p->nblocks && !st; b++) {
        if (format_into(p, b, &sl))
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        else
            st = p->sink(p->ctx, b, sl.buf, sl.len, err);
    }
    lp_free(sl.buf);
    return st;
}

lp_status lp_opipe_run(const lp_opipe *p, unsigned nthreads, lp_error *err)
{
    if (!nthreads)
        nthreads = lp_opipe_default_threads();
    if (nthreads > LP_OPIPE_MAX_THREADS)
        nthreads = LP_OPIPE_MAX_THREADS;
    if (nthreads <= 1 || p->nblocks < 4)
        return run_inline(p, err);
    pipe_state s = {.p = p, .nslots = 2 * (size_t)nthreads + 2};
    s.slots = lp_calloc(s.nslots, sizeof *s.slots);
    if (!s.slots)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.ready_cv, NULL);
    pthread_cond_init(&s.free_cv, NULL);
    pthread_t th[LP_OPIPE_MAX_THREADS];
    unsigned started = 0;
    lp_status st = LP_OK;
    for (; started < nthreads; started++)
        if (pthread_create(&th[started], NULL, formatter, &s) != 0)
            break;
    if (!started) {
        st = lp_error_set(err, LP_ERR_NOMEM, "cannot start a formatting thread");
    } else {
        for (size_t b = 0; b < p->nblocks && !st; b++) {
            slot *sl = &s.slots[b % s.nslots];
            pthread_mutex_lock(&s.mu);
            while (!s.failed && sl->ready != b + 1)
                pthread_cond_wait(&s.ready_cv, &s.mu);
            int failed = s.failed;
            pthread_mutex_unlock(&s.mu);
            if (failed)
                break;
            st = p->sink(p->ctx, b, sl->buf, sl->len, err);
            pthread_mutex_lock(&s.mu);
            s.done = b + 1;
            pthread_cond_broadcast(&s.free_cv);
            pthread_mutex_unlock(&s.mu);
        }
    }
    pthread_mutex_lock(&s.mu);
    if (st || s.done < p->nblocks)
        s.failed = 1;
    pthread_cond_broadcast(&s.free_cv);
    pthread_cond_broadcast(&s.ready_cv);
    pthread_mutex_unlock(&s.mu);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (!st && s.nomem)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < s.nslots; i++)
        lp_free(s.slots[i].buf);
    lp_free(s.slots);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.ready_cv);
    pthread_cond_destroy(&s.free_cv);
    return st;
}
