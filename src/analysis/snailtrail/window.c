/* window.c: the pool of threads that analyses windows in parallel and hands results back
 * in order (window.h; SnailTrail §5). One window's analysis is in winanalyze.c, the
 * window grid in wingrid.c.
 *
 * The pool is a queue of the thread pool (base/pool.h) with 2 * threads + 2 slots: the
 * caller fills slots in order (submit), the workers analyse them, each with its own
 * workspace, and results are delivered in the same order on the caller's thread. A
 * result stays in its slot until delivered, so the buffers of a slot's lp_winres are
 * reused by every window that passes through it.
 */
#include "longpole/analysis/snailtrail/window.h"
#include "longpole/base/alloc.h"
#include "base/pool.h"

#include <math.h>
#include <string.h>
#include <time.h>

/* ---- the pool --------------------------------------------------------------------------- */

/* A window in a slot of the pool's queue: what was submitted, and its result. */
typedef struct wjob {
    const lp_snapsrc *src;
    const lp_sumkeys *keys;
    uint64_t index;
    int64_t ts, te;
    void *user;
    lp_winres res;
} wjob;

struct lp_winpool {
    lp_winopts o;
    lp_winres_fn fn;
    void *ctx;
    unsigned nthreads;       /* as asked (1: no threads, each submit analyses at once) */
    lp_pool *pool;           /* nthreads workers (none for one) */
    lp_poolq *q;
    wjob *jobs;              /* [lp_poolq_slots] */
    lp_winws *ws;            /* [lp_poolq_threads]: a workspace per thread */
};

static lp_status analyze_job(void *ctx, size_t slot, unsigned thread, lp_error *err)
{
    lp_winpool *p = ctx;
    wjob *j = &p->jobs[slot];
    lp_status st = lp_window_analyze(&p->ws[thread], j->src, j->keys, j->index, j->ts, j->te, &p->o, &j->res, err);
    j->res.user = j->user;
    return st;
}

static lp_status deliver_job(void *ctx, size_t slot, lp_error *err)
{
    lp_winpool *p = ctx;
    if (p->fn && p->fn(p->ctx, &p->jobs[slot].res))
        return lp_error_set(err, LP_ERR_ARG, "stopped by the result callback");
    return LP_OK;
}

unsigned lp_winpool_threads(const lp_winpool *p) { return p->nthreads; }

void lp_winpool_free(lp_winpool *p)
{
    if (!p)
        return;
    size_t nslots = p->q ? lp_poolq_slots(p->q) : 0;
    unsigned nws = p->q ? lp_poolq_threads(p->q) : 0;
    lp_poolq_free(p->q);
    lp_pool_free(p->pool);
    if (p->jobs)
        for (size_t i = 0; i < nslots; i++)
            lp_winres_release(&p->jobs[i].res);
    if (p->ws)
        for (unsigned i = 0; i < nws; i++)
            lp_winws_release(&p->ws[i]);
    lp_free(p->jobs);
    lp_free(p->ws);
    lp_free(p);
}

lp_status lp_winpool_new(lp_winpool **out, unsigned nthreads, const lp_winopts *o, lp_winres_fn fn, void *ctx,
                         lp_error *err)
{
    *out = NULL;
    nthreads = lp_pool_threads(nthreads, 256);
    lp_winpool *p = lp_calloc(1, sizeof *p);
    if (!p)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    p->o = *o;
    p->fn = fn;
    p->ctx = ctx;
    p->nthreads = nthreads;
    lp_status st = lp_pool_new(&p->pool, nthreads > 1 ? nthreads : 0, err);
    if (!st)
        st = lp_poolq_new(&p->q, p->pool, 2 * (size_t)nthreads + 2, analyze_job, deliver_job, p, err);
    if (st) {
        lp_winpool_free(p);
        return st;
    }
    size_t nslots = lp_poolq_slots(p->q);
    unsigned nws = lp_poolq_threads(p->q);
    p->jobs = lp_calloc(nslots, sizeof *p->jobs);
    p->ws = lp_calloc(nws, sizeof *p->ws);
    if (!p->jobs || !p->ws) {
        lp_winpool_free(p);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < nslots; i++)
        lp_winres_init(&p->jobs[i].res);
    for (unsigned i = 0; i < nws; i++)
        lp_winws_init(&p->ws[i]);
    *out = p;
    return LP_OK;
}

lp_status lp_winpool_submit(lp_winpool *p, const lp_snapsrc *src, const lp_sumkeys *keys, uint64_t index,
                            int64_t ts, int64_t te, void *user, lp_error *err)
{
    size_t slot;
    lp_status st = lp_poolq_reserve(p->q, &slot, err);
    if (st)
        return st;
    wjob *j = &p->jobs[slot];
    j->src = src;
    j->keys = keys;
    j->index = index;
    j->ts = ts;
    j->te = te;
    j->user = user;
    return lp_poolq_submit(p->q, err);
}

lp_status lp_winpool_poll(lp_winpool *p, lp_error *err) { return lp_poolq_poll(p->q, err); }

lp_status lp_winpool_finish(lp_winpool *p, lp_error *err) { return lp_poolq_finish(p->q, err); }
