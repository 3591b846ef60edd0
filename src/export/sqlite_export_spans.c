/* sqlite_export_spans.c: the tables of span traces (lp_sqlite_spans): the traces, every
 * span as read (dropped ones included, flagged), each trace's critical path as
 * sections (Jaeger UI's walk, spancp.h), and exclusive critical-path time by
 * "service operation" and by call path over the traces up to each latency percentile
 * (CRISP, ATC'22), as `longpole spans --json` computes them.
 */
#include "export/sqlite_export_int.h"
#include "longpole/base/alloc.h"
#include "longpole/analysis/spans/spancp.h"

#include <string.h>

#define TICK 16384

static lp_status info(lp_sqlite *db, const lp_spans *sp, uint64_t analysed, lp_error *err)
{
    sq_ins x;
    lp_status st = sq_prep(db, &x, "INSERT INTO span_info VALUES(?,?,?,?,?,?,?,?,?,?,?)", err);
    if (st)
        return st;
    sq_row(&x);
    sq_u64(&x, sp->nfiles);
    sq_u64(&x, sp->n);
    sq_u64(&x, sp->nkept);
    sq_u64(&x, sp->ntraces);
    sq_u64(&x, sp->nmerged);
    sq_u64(&x, sp->nshared);
    sq_u64(&x, sp->ndup);
    sq_u64(&x, sp->norphan);
    sq_u64(&x, sp->ncycle);
    sq_u64(&x, analysed);
    st = sq_step(&x, err);
    st = sq_end(&x, st, err);
    return st;
}

static lp_status spans(lp_sqlite *db, const lp_spans *sp, lp_error *err)
{
    sq_ins x;
    char id[96];
    lp_status st = sq_prep(db, &x, "INSERT INTO spans VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    for (size_t i = 0; i < sp->n && !st; i++) {
        sq_row(&x);
        sq_u64(&x, i);
        sq_i64(&x, sp->trace[i]);
        sq_txt_copy(&x, lp_spans_idstr(sp, (uint32_t)i, id, sizeof id));
        sq_opt32(&x, sp->parent ? sp->parent[i] : UINT32_MAX);
        sq_txt(&x, lp_spans_str(sp, sp->service[i]));
        sq_txt(&x, lp_spans_str(sp, sp->op[i]));
        sq_txt(&x, lp_spans_kind_name((lp_span_kind)sp->kind[i]));
        sq_i64(&x, sp->start[i]);
        sq_i64(&x, sp->dur[i]);
        sq_i64(&x, sp->flags[i]);
        sq_i64(&x, (sp->flags[i] & LP_SPAN_DROPPED) != 0);
        sq_txt(&x, lp_spans_file(sp, (uint32_t)i));
        sq_u64(&x, sp->line[i]);
        st = sq_step(&x, err);
        if (!st && (i + 1) % TICK == 0 && sq_progress(db, "spans", i + 1, sp->n))
            st = lp_error_set(err, LP_ERR_ARG, "cancelled");
    }
    st = sq_end(&x, st, err);
    return st;
}

static lp_status percentiles(lp_sqlite *db, lp_spancp_agg *agg, const lp_sqlite_opts *o, lp_error *err)
{
    static const double dflt[] = {50, 95, 99, 100};
    const double *p = o->percentiles && o->npercentiles ? o->percentiles : dflt;
    size_t np = o->percentiles && o->npercentiles ? o->npercentiles : 4;
    lp_spancp_pct *pct = NULL;
    lp_status st = lp_spancp_agg_percentiles(agg, p, np, &pct, err);
    if (st)
        return st;
    sq_ins x, y, z;
    int px = 0, py = 0, pz = 0;
    if (!(st = sq_prep(db, &x, "INSERT OR REPLACE INTO span_percentiles VALUES(?,?,?,?,?)", err)))
        px = 1;
    if (!st && !(st = sq_prep(db, &y, "INSERT OR REPLACE INTO span_cp_ops VALUES(?,?,?,?,?,?,?,?,?,?)", err)))
        py = 1;
    if (!st && !(st = sq_prep(db, &z, "INSERT OR REPLACE INTO span_cp_paths VALUES(?,?,?,?,?,?,?,?,?,?)", err)))
        pz = 1;
    size_t cap = 4096;
    char *buf = st ? NULL : lp_malloc(cap);
    if (!st && !buf)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < np && !st; k++) {
        const lp_spancp_pct *q = &pct[k];
        sq_row(&x);
        sq_dbl(&x, q->p);
        sq_u64(&x, q->ntraces);
        sq_i64(&x, q->latency);
        sq_i64(&x, q->latency_sum);
        if ((st = sq_step(&x, err)))
            break;
        for (size_t i = 0; i < q->nops && !st; i++) {
            const lp_spancp_row *r = &q->ops[i];
            const char *svc, *op;
            lp_spancp_op_names(agg, r->id, &svc, &op);
            sq_row(&y);
            sq_dbl(&y, q->p);
            sq_u64(&y, i);
            sq_txt(&y, svc);
            sq_txt(&y, op);
            sq_i64(&y, r->total);
            sq_dbl(&y, q->ntraces ? (double)r->total / (double)q->ntraces : 0);
            sq_dbl(&y, q->latency_sum ? (double)r->total / (double)q->latency_sum : 0);
            sq_i64(&y, r->max);
            sq_u64(&y, r->traces);
            st = sq_step(&y, err);
        }
        for (size_t i = 0; i < q->npaths && !st; i++) {
            const lp_spancp_row *r = &q->paths[i];
            size_t need = lp_spancp_path_format(agg, r->id, " > ", NULL, 0) + 1;
            if (need > cap) {
                char *nb = lp_realloc(buf, need);
                if (!nb) {
                    st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                    break;
                }
                buf = nb;
                cap = need;
            }
            lp_spancp_path_format(agg, r->id, " > ", buf, cap);
            sq_row(&z);
            sq_dbl(&z, q->p);
            sq_u64(&z, i);
            sq_txt_copy(&z, buf);
            sq_u64(&z, lp_spancp_path_depth(agg, r->id));
            sq_i64(&z, r->total);
            sq_dbl(&z, q->ntraces ? (double)r->total / (double)q->ntraces : 0);
            sq_dbl(&z, q->latency_sum ? (double)r->total / (double)q->latency_sum : 0);
            sq_i64(&z, r->max);
            sq_u64(&z, r->traces);
            st = sq_step(&z, err);
        }
    }
    lp_free(buf);
    if (px)
        st = sq_end(&x, st, err);
    if (py)
        st = sq_end(&y, st, err);
    if (pz)
        st = sq_end(&z, st, err);
    lp_spancp_pct_free(pct, np);
    return st;
}

lp_status lp_sqlite_spans(lp_sqlite *db, const lp_spans *sp, const lp_sqlite_opts *o, lp_error *err)
{
    lp_sqlite_opts dflt;
    if (!o) {
        lp_sqlite_opts_init(&dflt);
        o = &dflt;
    }
    db->progress = o->progress;
    db->progress_ctx = o->progress_ctx;
    if (!sp->finished)
        return lp_error_set(err, LP_ERR_ARG, "the span table is not finished");
    lp_status st = spans(db, sp, err);
    if (st)
        return st;
    lp_spancp cp;
    lp_spancp_init(&cp);
    lp_spancp_agg *agg = NULL;
    sq_ins x, y;
    int px = 0, py = 0;
    if (!(st = lp_spancp_agg_new(&agg, sp, err)) &&
        !(st = sq_prep(db, &x, "INSERT INTO span_traces VALUES(?,?,?,?,?,?,?,?)", err)))
        px = 1;
    if (!st && !(st = sq_prep(db, &y, "INSERT INTO span_cp VALUES(?,?,?,?,?,?)", err)))
        py = 1;
    for (uint32_t t = 0; t < sp->ntraces && !st; t++) {
        if ((st = lp_spancp_trace(&cp, sp, t, err)) || (st = lp_spancp_agg_add(agg, &cp, err)))
            break;
        sq_row(&x);
        sq_i64(&x, t);
        sq_txt(&x, lp_spans_trace_text(sp, t));
        sq_opt32(&x, cp.root);
        if (cp.root != LP_SPAN_NONE) {
            sq_i64(&x, cp.start);
            sq_i64(&x, cp.latency);
        } else {
            sq_null(&x), sq_null(&x);
        }
        sq_u64(&x, sp->tfirst[t + 1] - sp->tfirst[t]);
        sq_u64(&x, cp.nsec);
        if ((st = sq_step(&x, err)))
            break;
        for (size_t k = 0; k < cp.nsec && !st; k++) {
            sq_row(&y);
            sq_i64(&y, t);
            sq_u64(&y, k);
            sq_i64(&y, cp.sec[k].span);
            sq_i64(&y, cp.sec[k].start);
            sq_i64(&y, cp.sec[k].end);
            st = sq_step(&y, err);
        }
        if (!st && (t + 1) % TICK == 0 && sq_progress(db, "traces", t + 1, sp->ntraces))
            st = lp_error_set(err, LP_ERR_ARG, "cancelled");
    }
    if (px)
        st = sq_end(&x, st, err);
    if (py)
        st = sq_end(&y, st, err);
    if (!st)
        st = percentiles(db, agg, o, err);
    if (!st)
        st = info(db, sp, lp_spancp_agg_traces(agg), err);
    lp_spancp_agg_free(agg);
    lp_spancp_release(&cp);
    return st;
}
