/* winanalyze.c: one window's critical-participation analysis (window.h; SnailTrail
 * §5): its snapshot, path counts and CP, a path drawn uniformly, the summaries asked for
 * and the instrumentation checks, into an lp_winres, with a workspace (lp_winws) whose
 * buffers are reused from window to window. */
#include "longpole/analysis/snailtrail/window.h"
#include "longpole/base/alloc.h"

#include <math.h>
#include <string.h>
#include <time.h>

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
