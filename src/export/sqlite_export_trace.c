/* sqlite_export_trace.c: the tables of an activity trace (lp_sqlite_trace): the model
 * (types, workers, operators, activities, messages, attribute lists), the whole-trace
 * critical path with its breakdowns and App. A.2 checks (cpath.h, breakdown.h,
 * check.h, as `longpole cp` and `check` compute them), and SnailTrail's windows (§5:
 * N, the sum of CP, the four summaries of §6; window.h, as `longpole summary`).
 *
 * Rows are streamed from the trace's columns in id order (the tables' key order, so
 * every insert appends); the only memory besides the trace is the PAG and path while
 * they are computed (released before the windows), one bit per string for the
 * operator set, and, with edge_cp, one double per activity and message.
 */
#include "export/sqlite_export_int.h"
#include "longpole/base/alloc.h"
#include "longpole/analysis/critical-path/breakdown.h"
#include "longpole/analysis/critical-path/check.h"
#include "longpole/analysis/critical-path/cpath.h"
#include "longpole/model/pag.h"
#include "longpole/analysis/snailtrail/window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TICK 65536 /* rows between progress calls */

/* The types, by id. */
static lp_status model_types(lp_sqlite *db, const lp_trace *t, lp_error *err)
{
    sq_ins x;
    lp_status st;
    if ((st = sq_prep(db, &x, "INSERT INTO types VALUES(?,?,?)", err)))
        return st;
    for (uint32_t ty = 0; ty < t->ntypes && !st; ty++) {
        sq_row(&x);
        sq_i64(&x, ty);
        sq_txt(&x, lp_trace_type_name(t, ty));
        st = sq_step(&x, err);
    }
    return sq_end(&x, st, err);
}

/* The workers, with their activity range and extent. */
static lp_status model_workers(lp_sqlite *db, const lp_trace *t, lp_error *err)
{
    sq_ins x;
    lp_status st;
    if ((st = sq_prep(db, &x, "INSERT INTO workers VALUES(?,?,?,?,?,?,?,?)", err)))
        return st;
    for (uint32_t w = 0; w < t->nworkers && !st; w++) {
        uint64_t a0 = t->wfirst[w], a1 = t->wfirst[w + 1];
        sq_row(&x);
        sq_i64(&x, w);
        sq_txt(&x, lp_trace_worker_name(t, w));
        if (t->wattr[w])
            sq_i64(&x, t->wattr[w]);
        else
            sq_null(&x);
        sq_u64(&x, a1 - a0);
        if (a1 > a0) {
            sq_u64(&x, a0);
            sq_i64(&x, t->astart[a0]);
            sq_i64(&x, t->aend[a1 - 1]);
        } else {
            sq_null(&x), sq_null(&x), sq_null(&x);
        }
        st = sq_step(&x, err);
    }
    return sq_end(&x, st, err);
}

/* The operators: the strings used as one, in id order. */
static lp_status model_operators(lp_sqlite *db, const lp_trace *t, lp_error *err)
{
    sq_ins x;
    lp_status st = LP_OK;
    uint64_t *used = lp_calloc((t->strs.n + 63) / 64 + 1, sizeof *used);
    if (!used)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint64_t a = 0; a < t->nacts; a++)
        if (t->aop[a] != LP_STR_NONE)
            used[t->aop[a] >> 6] |= UINT64_C(1) << (t->aop[a] & 63);
    if (!(st = sq_prep(db, &x, "INSERT INTO operators VALUES(?,?,?)", err))) {
        for (uint32_t s = 0; s < t->strs.n && !st; s++)
            if (used[s >> 6] >> (s & 63) & 1) {
                sq_row(&x);
                sq_i64(&x, s);
                sq_txt(&x, lp_trace_str(t, s));
                st = sq_step(&x, err);
            }
        st = sq_end(&x, st, err);
    }
    lp_free(used);
    return st;
}

/* The activities, worker by worker (ids are grouped by worker). */
static lp_status model_activities(lp_sqlite *db, const lp_trace *t, lp_error *err)
{
    sq_ins x;
    lp_status st;
    if ((st = sq_prep(db, &x, "INSERT INTO activities VALUES(?,?,?,?,?,?,?,?,?)", err)))
        return st;
    for (uint32_t w = 0; w < t->nworkers && !st; w++)
        for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1]; a++) {
            sq_row(&x);
            sq_u64(&x, a);
            sq_i64(&x, w);
            sq_i64(&x, t->atype[a]);
            sq_opt32(&x, t->aop[a]);
            sq_i64(&x, t->astart[a]);
            sq_i64(&x, t->aend[a]);
            if (t->aattr[a])
                sq_i64(&x, t->aattr[a]);
            else
                sq_null(&x);
            sq_i64(&x, (t->aflags[a] & LP_ACT_GAP) != 0);
            if ((st = sq_step(&x, err)))
                break;
            if ((a + 1) % TICK == 0 && sq_progress(db, "activities", a + 1, t->nacts)) {
                st = lp_error_set(err, LP_ERR_ARG, "cancelled");
                break;
            }
        }
    return sq_end(&x, st, err);
}

/* The messages. */
static lp_status model_messages(lp_sqlite *db, const lp_trace *t, lp_error *err)
{
    sq_ins x;
    lp_status st;
    if ((st = sq_prep(db, &x, "INSERT INTO messages VALUES(?,?,?,?,?,?,?,?,?,?)", err)))
        return st;
    for (uint64_t m = 0; m < t->nmsgs && !st; m++) {
        sq_row(&x);
        sq_u64(&x, m);
        sq_i64(&x, t->msrc[m]);
        sq_i64(&x, t->mdst[m]);
        sq_i64(&x, t->msend[m]);
        sq_i64(&x, t->mrecv[m]);
        uint64_t id = t->mid[m];
        if (id == LP_MSGID_NONE)
            sq_null(&x);
        else if (id & LP_MSGID_STR)
            sq_txt(&x, lp_trace_str(t, (lp_str)(id & ~LP_MSGID_STR)));
        else
            sq_i64(&x, (int64_t)id);
        if (t->mattr[m])
            sq_i64(&x, t->mattr[m]);
        else
            sq_null(&x);
        sq_i64(&x, (t->mflags[m] & LP_MSG_SKEW) != 0);
        sq_i64(&x, (t->mflags[m] & LP_MSG_HALVES) != 0);
        st = sq_step(&x, err);
        if (!st && (m + 1) % TICK == 0 && sq_progress(db, "messages", m + 1, t->nmsgs))
            st = lp_error_set(err, LP_ERR_ARG, "cancelled");
    }
    return sq_end(&x, st, err);
}

/* The attribute lists: apool[l] = npairs, then the pairs; list 0 is empty. */
static lp_status model_attrs(lp_sqlite *db, const lp_trace *t, lp_error *err)
{
    sq_ins x;
    lp_status st;
    if ((st = sq_prep(db, &x, "INSERT INTO attrs VALUES(?,?,?,?,?)", err)))
        return st;
    for (uint64_t l = 1; l < t->napool && !st;) {
        uint32_t np = t->apool[l];
        for (uint32_t k = 0; k < np && !st; k++) {
            sq_row(&x);
            sq_u64(&x, l);
            sq_i64(&x, k);
            sq_txt(&x, lp_trace_str(t, t->apool[l + 1 + 2 * k]));
            sq_txt(&x, lp_trace_str(t, t->apool[l + 2 + 2 * k]));
            st = sq_step(&x, err);
        }
        l += 1 + 2 * (uint64_t)np;
    }
    return sq_end(&x, st, err);
}

static lp_status model(lp_sqlite *db, const lp_trace *t, lp_error *err)
{
    lp_status st;
    if ((st = model_types(db, t, err)) || (st = model_workers(db, t, err)) || (st = model_operators(db, t, err)) ||
        (st = model_activities(db, t, err)) || (st = model_messages(db, t, err)))
        return st;
    return model_attrs(db, t, err);
}

/* ---- critical path, breakdowns, checks --------------------------------------------------- */

static lp_status write_cp(lp_sqlite *db, const lp_trace *t, const lp_cpath *cp, int64_t from, int64_t to,
                          lp_error *err)
{
    sq_ins x;
    lp_status st;
    if ((st = sq_prep(db, &x, "INSERT INTO cp_info VALUES(?,?,?,?,?,?,?,?,?)", err)))
        return st;
    sq_row(&x);
    if (from <= to) {
        sq_i64(&x, from);
        sq_i64(&x, to);
    } else {
        sq_null(&x), sq_null(&x);
    }
    sq_i64(&x, cp->start);
    sq_i64(&x, cp->end);
    sq_i64(&x, cp->total);
    sq_u64(&x, cp->n);
    sq_u64(&x, cp->ncycles);
    sq_u64(&x, cp->nskew);
    st = sq_step(&x, err);
    st = sq_end(&x, st, err);
    if (st)
        return st;
    if ((st = sq_prep(db, &x, "INSERT INTO cp VALUES(?,?,?,?,?,?,?,?,?)", err)))
        return st;
    for (size_t k = 0; k < cp->n && !st; k++) {
        const lp_cp_elem *e = &cp->e[k];
        sq_row(&x);
        sq_u64(&x, k);
        if (e->kind == LP_CP_MESSAGE) {
            sq_txt(&x, "message");
            sq_i64(&x, t->mdst[e->index]);
            sq_null(&x);
            sq_u64(&x, e->index);
        } else {
            sq_txt(&x, "activity");
            sq_i64(&x, e->worker);
            sq_u64(&x, e->index);
            sq_null(&x);
        }
        sq_i64(&x, e->start);
        sq_i64(&x, e->end);
        if (e->kind == LP_CP_MESSAGE)
            sq_i64(&x, 0);
        else
            sq_i64(&x, e->start != t->astart[e->index] || e->end != t->aend[e->index]);
        st = sq_step(&x, err);
    }
    st = sq_end(&x, st, err);
    return st;
}

static lp_status write_breakdowns(lp_sqlite *db, const lp_trace *t, const lp_cpath *cp, lp_error *err)
{
    sq_ins x, y;
    lp_status st;
    if ((st = sq_prep(db, &x, "INSERT INTO breakdown VALUES(?,?,?,?,?,?,?,?)", err)))
        return st;
    if ((st = sq_prep(db, &y, "INSERT INTO breakdown_totals VALUES(?,?,?,?,?)", err))) {
        st = sq_end(&x, st, err);
        return st;
    }
    for (int g = 0; g < 3 && !st; g++) {
        lp_breakdown b;
        if ((st = lp_breakdown_compute(t, cp, (lp_group)g, &b, err)))
            break;
        const char *gname = lp_group_name((lp_group)g);
        for (size_t i = 0; i < b.n && !st; i++) {
            const lp_brow *r = &b.rows[i];
            sq_row(&x);
            sq_txt(&x, gname);
            sq_u64(&x, i);
            sq_txt_copy(&x, lp_breakdown_label(t, &b, r));
            sq_i64(&x, r->path_ns);
            sq_u64(&x, r->path_n);
            sq_i64(&x, r->prof_ns);
            sq_u64(&x, r->prof_n);
            st = sq_step(&x, err);
        }
        if (!st) {
            sq_row(&y);
            sq_txt(&y, gname);
            sq_i64(&y, b.path_total);
            sq_i64(&y, b.prof_total);
            sq_i64(&y, b.waiting_ns);
            st = sq_step(&y, err);
        }
        lp_breakdown_release(&b);
    }
    st = sq_end(&x, st, err);
    st = sq_end(&y, st, err);
    return st;
}

static lp_status write_check(lp_sqlite *db, const lp_check *c, lp_error *err)
{
    sq_ins x;
    lp_status st;
    if ((st = sq_prep(db, &x, "INSERT INTO check_info VALUES(?,?,?,?)", err)))
        return st;
    sq_row(&x);
    sq_u64(&x, c->np1);
    sq_u64(&x, c->np2);
    sq_i64(&x, c->p2_ns);
    st = sq_step(&x, err);
    st = sq_end(&x, st, err);
    if (st || (st = sq_prep(db, &x, "INSERT INTO check_p1 VALUES(?,?,?,?)", err)))
        return st;
    for (size_t i = 0; i < c->np1 && !st; i++) {
        sq_row(&x);
        sq_u64(&x, i);
        sq_i64(&x, c->p1[i].worker);
        sq_i64(&x, c->p1[i].time);
        st = sq_step(&x, err);
    }
    st = sq_end(&x, st, err);
    if (st || (st = sq_prep(db, &x, "INSERT INTO check_p2 VALUES(?,?,?,?,?)", err)))
        return st;
    for (size_t i = 0; i < c->np2 && !st; i++) {
        sq_row(&x);
        sq_u64(&x, i);
        sq_i64(&x, c->p2[i].from);
        sq_i64(&x, c->p2[i].to);
        sq_i64(&x, c->p2[i].nactive);
        st = sq_step(&x, err);
    }
    st = sq_end(&x, st, err);
    return st;
}

/* ---- windows ---------------------------------------------------------------------------- */

typedef struct wctx {
    lp_sqlite *db;
    sq_ins win, sum, row;
    uint64_t nwin;           /* windows in the grid (progress) */
    lp_status st;            /* the first failure */
    lp_error *err;
} wctx;

static lp_status write_window(wctx *c, const lp_winres *r)
{
    sq_ins *x = &c->win;
    char buf[64];
    lp_status st;
    sq_row(x);
    sq_u64(x, r->index);
    sq_i64(x, r->ts);
    sq_i64(x, r->te);
    sq_i64(x, r->t0);
    sq_i64(x, r->t1);
    sq_u64(x, r->nevents);
    sq_u64(x, r->nacts);
    sq_u64(x, r->nmsgs);
    sq_u64(x, r->nworkers);
    sq_u64(x, r->nactive);
    sq_u64(x, r->nv);
    sq_u64(x, r->nwedges);
    sq_u64(x, r->nin);
    sq_dbl(x, r->n.m != 0 ? r->log10n : NAN);
    sq_txt_copy(x, lp_xnum_fmt(r->n, 6, buf, sizeof buf));
    /* as summary --json: exact when an exact integer below 2^53 */
    if (r->n.m == 0 || (r->n.e == 0 && r->n.rd == 0 && r->n.m <= 0x1p53))
        sq_txt_copy(x, lp_xnum_fmt(r->n, 17, buf, sizeof buf));
    else
        sq_null(x);
    sq_u64(x, r->nvs);
    sq_u64(x, r->nve);
    sq_i64(x, r->has_paths);
    sq_dbl(x, r->cp_sum);
    sq_i64(x, r->sum_ok);
    sq_dbl(x, r->err_bound);
    sq_u64(x, r->ncycles);
    if (r->checked) {
        sq_u64(x, r->check.np1);
        sq_u64(x, r->check.np2);
        sq_i64(x, r->check.p2_ns);
    } else {
        sq_null(x), sq_null(x), sq_null(x);
    }
    if (r->path_edges)
        sq_u64(x, r->path_edges);
    else
        sq_null(x);
    if ((st = sq_step(x, c->err)))
        return st;
    char lab[256];
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        if (!(r->kinds & (1u << k)))
            continue;
        const lp_summary *s = &r->sum[k];
        const char *kname = lp_sumkind_name((lp_sumkind)k);
        sq_row(&c->sum);
        sq_u64(&c->sum, r->index);
        sq_txt(&c->sum, kname);
        sq_dbl(&c->sum, s->cp_total);
        sq_i64(&c->sum, s->prof_total);
        sq_i64(&c->sum, s->waiting_ns);
        sq_i64(&c->sum, s->path_total);
        sq_u64(&c->sum, s->n);
        if ((st = sq_step(&c->sum, c->err)))
            return st;
        for (size_t i = 0; i < s->n; i++) {
            const lp_sumrow *w = &s->rows[i];
            sq_ins *y = &c->row;
            sq_row(y);
            sq_u64(y, r->index);
            sq_txt(y, kname);
            sq_u64(y, i);
            sq_txt_copy(y, lp_sumkeys_label(r->keys, (lp_sumkind)k, w->key, lab, sizeof lab));
            if (k == LP_SUM_COMM) {
                sq_txt(y, lp_trace_worker_name(r->t, (uint32_t)(w->key >> 32)));
                sq_txt(y, lp_trace_worker_name(r->t, (uint32_t)w->key));
            } else {
                sq_null(y), sq_null(y);
            }
            sq_dbl(y, w->cp);
            if (k == LP_SUM_OPERATOR) {
                sq_u64(y, w->par);
                sq_dbl(y, w->rank);
            } else {
                sq_null(y), sq_null(y);
            }
            sq_i64(y, w->prof_ns);
            sq_dbl(y, w->prof_share);
            sq_i64(y, w->path_ns);
            sq_dbl(y, w->path_share);
            if ((st = sq_step(y, c->err)))
                return st;
        }
    }
    return LP_OK;
}

static int on_window(void *ctx, const lp_winres *r)
{
    wctx *c = ctx;
    if (c->st)
        return -1;
    if ((c->st = write_window(c, r)))
        return -1;
    if (sq_progress(c->db, "windows", r->index + 1, c->nwin)) {
        c->st = lp_error_set(c->err, LP_ERR_ARG, "cancelled");
        return -1;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Per-edge CP of one analysed window (ws after lp_window_analyze): summed by activity
 * and by message, written in id order. acc has one slot per activity and message. */
static lp_status write_edge_cp(lp_sqlite *db, sq_ins *xa, sq_ins *xm, const lp_winws *ws, uint64_t index,
                               double *acc, uint64_t *touched, lp_error *err)
{
    const lp_snapshot *s = &ws->snap;
    const lp_cpm *c = &ws->cpm;
    const uint64_t na = s->t->nacts;
    size_t nt = 0;
    if (!c->has_paths)
        return LP_OK;
    for (uint64_t v = 0; v < s->nv; v++)
        if (s->vact[v] != LP_NONE32 && c->cpw[v] > 0) {
            uint64_t a = s->vact[v];
            if (acc[a] == 0)
                touched[nt++] = a;
            acc[a] += c->cpw[v];
        }
    for (uint64_t k = 0; k < s->nin; k++)
        if (c->cpin[k] > 0) {
            uint64_t m = na + s->in[k].msg;
            if (acc[m] == 0)
                touched[nt++] = m;
            acc[m] += c->cpin[k];
        }
    qsort(touched, nt, sizeof *touched, cmp_u64); /* key order: appends */
    lp_status st = LP_OK;
    for (size_t i = 0; i < nt; i++) {
        uint64_t id = touched[i];
        if (!st) {
            sq_ins *x = id < na ? xa : xm;
            sq_row(x);
            sq_u64(x, index);
            sq_u64(x, id < na ? id : id - na);
            sq_dbl(x, acc[id]);
            st = sq_step(x, err);
        }
        acc[id] = 0;
    }
    return st;
}

static lp_status windows(lp_sqlite *db, const lp_trace *t, int64_t from, int64_t to, const lp_sqlite_opts *o,
                         lp_error *err)
{
    if (!t->nacts && !t->nmsgs)
        return LP_OK;
    int64_t size = o->window, step = o->slide;
    if (size <= 0) {
        size = to - from > 0 ? to - from : 1;
        step = size;
    } else if (step <= 0) {
        step = size;
    }
    lp_winopts wo;
    memset(&wo, 0, sizeof wo);
    wo.kinds = o->kinds ? o->kinds : (1u << LP_SUM_NKINDS) - 1;
    wo.seed = o->seed;
    wo.no_path = o->no_path;
    wo.no_checks = o->no_checks;
    lp_wingrid g;
    lp_snapsrc src;
    lp_sumkeys keys;
    int have_src = 0, have_keys = 0;
    wctx c;
    memset(&c, 0, sizeof c);
    c.db = db;
    c.err = err;
    lp_status st = lp_wingrid_make(&g, from, to, size, step, err);
    c.nwin = g.n;
    if (!st && !(st = lp_snapsrc_init(&src, t, err)))
        have_src = 1;
    if (!st)
        st = lp_wingrid_plan(&g, &src, err);
    if (!st && !(st = lp_sumkeys_init(&keys, t, err)))
        have_keys = 1;
    if (!st)
        st = sq_prep(db, &c.win, "INSERT INTO windows VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                     err);
    if (!st)
        st = sq_prep(db, &c.sum, "INSERT INTO window_summary VALUES(?,?,?,?,?,?,?,?)", err);
    if (!st)
        st = sq_prep(db, &c.row, "INSERT INTO window_rows VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    if (!st && !o->edge_cp) {
        /* on the pool: results come back in order on this thread (the callback writes) */
        lp_winpool *pool = NULL;
        st = lp_winpool_new(&pool, o->threads, &wo, on_window, &c, err);
        for (uint64_t k = 0; !st && k < g.n; k++)
            st = lp_winpool_submit(pool, &src, &keys, k, lp_wingrid_ts(&g, k), lp_wingrid_te(&g, k), NULL, err);
        if (!st)
            st = lp_winpool_finish(pool, err);
        lp_winpool_free(pool);
        if (c.st) /* the callback's failure is the cause */
            st = c.st;
    } else if (!st) {
        /* one by one on this thread, reading each window's per-edge CP */
        lp_winws ws;
        lp_winres r;
        sq_ins xa, xm;
        lp_winws_init(&ws);
        lp_winres_init(&r);
        double *acc = lp_calloc(t->nacts + t->nmsgs + 1, sizeof *acc);
        uint64_t *touched = lp_malloc((t->nacts + t->nmsgs + 1) * sizeof *touched);
        if (!acc || !touched)
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        if (!st)
            st = sq_prep(db, &xa, "INSERT INTO activity_cp VALUES(?,?,?,?)", err);
        if (!st && (st = sq_prep(db, &xm, "INSERT INTO message_cp VALUES(?,?,?,?)", err)))
            st = sq_end(&xa, st, err);
        if (!st) {
            for (uint64_t k = 0; !st && k < g.n; k++) {
                st = lp_window_analyze(&ws, &src, &keys, k, lp_wingrid_ts(&g, k), lp_wingrid_te(&g, k), &wo, &r,
                                       err);
                if (!st && on_window(&c, &r))
                    st = c.st;
                if (!st)
                    st = write_edge_cp(db, &xa, &xm, &ws, k, acc, touched, err);
            }
            st = sq_end(&xa, st, err);
            st = sq_end(&xm, st, err);
        }
        lp_free(acc);
        lp_free(touched);
        lp_winres_release(&r);
        lp_winws_release(&ws);
    }
    st = sq_end(&c.win, st, err);
    st = sq_end(&c.sum, st, err);
    st = sq_end(&c.row, st, err);
    if (have_keys)
        lp_sumkeys_release(&keys);
    if (have_src)
        lp_snapsrc_release(&src);
    if (st)
        lp_error_push(err, "windows");
    return st;
}

lp_status lp_sqlite_trace(lp_sqlite *db, const lp_trace *t, int64_t from, int64_t to, const lp_sqlite_opts *o,
                          lp_error *err)
{
    lp_sqlite_opts dflt;
    if (!o) {
        lp_sqlite_opts_init(&dflt);
        o = &dflt;
    }
    db->progress = o->progress;
    db->progress_ctx = o->progress_ctx;
    lp_status st = model(db, t, err);
    if (st)
        return st;
    if (t->nacts) {
        /* the graph for the checks only, released before the path, which comes from the
         * trace's columns (lp_cpath_trace: the same path, no graph) */
        lp_pag g;
        lp_cpath cp;
        lp_check c;
        if ((st = lp_pag_build(t, &g, err)))
            return st;
        st = lp_check_run(&g, &c, err);
        lp_pag_release(&g);
        if (!st) {
            st = write_check(db, &c, err);
            lp_check_release(&c);
        }
        if (st || (st = lp_cpath_trace(t, &cp, err)))
            return st;
        st = write_cp(db, t, &cp, from, to, err);
        if (!st)
            st = write_breakdowns(db, t, &cp, err);
        lp_cpath_release(&cp);
        if (st)
            return st;
    }
    if (!o->no_windows) {
        int64_t wf = from <= to ? from : t->tmin, wt = from <= to ? to : t->tmax;
        st = windows(db, t, wf, wt, o, err);
    }
    return st;
}
