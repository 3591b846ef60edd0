/* window.c: one window's critical-participation analysis, the window grid, and the
 * pool of threads that analyses windows in parallel and hands results back in order
 * (window.h; SnailTrail §5).
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

/* ---- grid ---------------------------------------------------------------------------- */

lp_status lp_wingrid_make(lp_wingrid *g, int64_t from, int64_t to, int64_t size, int64_t step, lp_error *err)
{
    memset(g, 0, sizeof *g);
    if (size <= 0 || step <= 0)
        return lp_error_set(err, LP_ERR_ARG, "window size and step must be positive");
    if (to < from)
        return lp_error_set(err, LP_ERR_ARG, "window range ends (%lld) before it starts (%lld)", (long long)to,
                            (long long)from);
    __int128 len = (__int128)to - from;
    uint64_t n = 1;
    if (len > size) {
        __int128 k = (len - size + step - 1) / step + 1;
        if (k > (__int128)UINT32_MAX)
            return lp_error_set(err, LP_ERR_LIMIT, "more than 2^32 windows (a step of %lld ns over %lld ns)",
                                (long long)step, (long long)(to - from));
        n = (uint64_t)k;
    }
    __int128 last = (__int128)from + (__int128)(n - 1) * step + size;
    if (last > INT64_MAX)
        return lp_error_set(err, LP_ERR_LIMIT, "the last window would end past the largest time");
    g->origin = from;
    g->size = size;
    g->step = step;
    g->n = n;
    return LP_OK;
}

lp_status lp_wingrid_plan(const lp_wingrid *g, lp_snapsrc *src, lp_error *err)
{
    size_t n = (size_t)g->n * 2;
    int64_t *q = lp_malloc((n ? n : 1) * sizeof *q);
    if (!q)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory planning windows");
    for (uint64_t k = 0; k < g->n; k++) {
        q[2 * k] = lp_wingrid_ts(g, k);
        q[2 * k + 1] = lp_wingrid_te(g, k);
    }
    lp_status st = lp_snapsrc_plan(src, q, n, err);
    lp_free(q);
    return st;
}

/* ---- one window ---------------------------------------------------------------------- */

void lp_winres_init(lp_winres *r)
{
    memset(r, 0, sizeof *r);
    for (int k = 0; k < LP_SUM_NKINDS; k++)
        lp_summary_init(&r->sum[k]);
}

void lp_winres_release(lp_winres *r)
{
    for (int k = 0; k < LP_SUM_NKINDS; k++)
        lp_summary_release(&r->sum[k]);
    memset(r, 0, sizeof *r);
}

void lp_winws_init(lp_winws *ws)
{
    memset(ws, 0, sizeof *ws);
    lp_snapshot_init(&ws->snap);
    lp_cpm_init(&ws->cpm);
}

void lp_winws_release(lp_winws *ws)
{
    lp_snapshot_release(&ws->snap);
    lp_cpm_release(&ws->cpm);
    lp_cppath_release(&ws->path);
    lp_sumbuf_release(&ws->sbuf);
    lp_snapcheck_buf_release(&ws->cbuf);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

lp_status lp_window_analyze(lp_winws *ws, const lp_snapsrc *src, const lp_sumkeys *keys, uint64_t index, int64_t ts,
                            int64_t te, const lp_winopts *o, lp_winres *r, lp_error *err)
{
    double t_start = now_s();
    lp_status st;
    r->index = index;
    r->ts = ts;
    r->te = te;
    r->t = src->t;
    r->keys = keys;
    r->src = src;
    r->kinds = 0;
    r->checked = 0;
    r->path_edges = 0;
    if ((st = lp_snapshot_build(&ws->snap, src, ts, te, err)))
        return st;
    const lp_snapshot *s = &ws->snap;
    if ((st = lp_cpm_compute(&ws->cpm, s, err)))
        return st;
    const lp_cpm *c = &ws->cpm;
    r->t0 = s->t0;
    r->t1 = s->t1;
    r->nworkers = s->nworkers;
    r->nactive = s->nactive;
    r->nevents = s->nevents;
    r->nacts = s->nacts;
    r->nmsgs = s->nmsgs;
    r->nv = s->nv;
    r->nwedges = s->nwedges;
    r->nin = s->nin;
    r->n = c->n;
    r->log10n = c->log10n;
    r->has_paths = c->has_paths;
    r->cp_sum = c->sum;
    r->err_bound = c->err_bound;
    r->sum_ok = c->has_paths && fabs(c->sum - 1.0) <= LP_WIN_SUM_TOL;
    r->n_agree = c->n.m != 0 ? fabs(lp_xnum_ratio(c->n_s, c->n) - 1.0) : 0;
    r->ncycles = c->ncycles;
    r->nvs = c->nvs;
    r->nve = c->nve;
    ws->path.n = 0;
    if (!o->no_path && c->has_paths) {
        uint64_t rng = lp_rng_seed(o->seed, index);
        if ((st = lp_cpm_sample(c, &rng, &ws->path, err)))
            return st;
        r->path_edges = ws->path.n;
    }
    unsigned kinds = o->kinds & ((1u << LP_SUM_NKINDS) - 1);
    if (kinds) {
        if ((st = lp_summary_compute(r->sum, kinds, &ws->sbuf, keys, s, c, o->no_path ? NULL : &ws->path, err)))
            return st;
        r->kinds = kinds;
    }
    if (!o->no_checks) {
        if ((st = lp_snapshot_check(s, &ws->cbuf, &r->check, err)))
            return st;
        r->checked = 1;
    } else {
        memset(&r->check, 0, sizeof r->check);
    }
    r->seconds = now_s() - t_start;
    return LP_OK;
}

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
