/* sqlite_export_g10.c: the tables of a Grade10 analysis (lp_sqlite_grade10,
 * docs/formats/sqlite.md "Grade10 runs"): the model's phase types and resources, every
 * phase instance, the (leaf, resource) usage and bottleneck time, the resource
 * timelines and optionally their segments, per-type totals and the replayed issues.
 * Rows are written in primary-key order.
 */
#include "export/sqlite_export_int.h"
#include "longpole/analysis/grade10/g10json.h"
#include "longpole/base/alloc.h"

#include <string.h>

#define TICK 65536

static lp_status info(lp_sqlite *db, const lp_g10_attr *a, const lp_g10_issues *is, lp_error *err)
{
    const lp_g10_exec *x = a->x;
    const lp_g10_model *m = a->m;
    sq_ins q;
    lp_status st = sq_prep(db, &q, "INSERT INTO g10_info VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    if (st)
        return st;
    sq_row(&q);
    sq_txt(&q, lp_g10_model_str(m, m->file));
    sq_txt(&q, lp_g10_mode_name(a->mode));
    sq_i64(&q, a->slice_ns);
    sq_dbl(&q, m->bottleneck);
    sq_u64(&q, x->n);
    sq_u64(&q, x->nleaves);
    sq_i64(&q, x->start[0]);
    sq_i64(&q, x->end[0]);
    if (is)
        sq_i64(&q, is->baseline);
    else
        sq_null(&q);
    sq_dbl(&q, is ? is->threshold : m->issue_min);
    sq_u64(&q, x->records);
    sq_u64(&q, x->dropped);
    sq_u64(&q, x->unmatched);
    sq_u64(&q, a->widened);
    sq_u64(&q, a->no_host);
    sq_u64(&q, a->unmonitored);
    sq_u64(&q, a->unknown_blocking);
    st = sq_step(&q, err);
    return sq_end(&q, st, err);
}

static lp_status model(lp_sqlite *db, const lp_g10_model *m, lp_error *err)
{
    sq_ins q;
    lp_status st = sq_prep(db, &q, "INSERT INTO g10_types VALUES(?,?,?,?,?,?)", err);
    for (uint32_t t = 0; t < m->ntypes && !st; t++) {
        const lp_g10_ptype *pt = &m->type[t];
        sq_row(&q);
        sq_u64(&q, t);
        sq_txt(&q, lp_g10_model_str(m, pt->path));
        sq_opt32(&q, pt->parent);
        sq_txt(&q, lp_g10_repeat_name(pt->repeat));
        sq_txt(&q, pt->key != LP_STR_NONE ? lp_g10_model_str(m, pt->key) : NULL);
        st = sq_step(&q, err);
    }
    st = sq_end(&q, st, err);
    if (st || (st = sq_prep(db, &q, "INSERT INTO g10_resources VALUES(?,?,?,?,?,?,?,?,?)", err)))
        return st;
    for (uint32_t r = 0; r < m->nres && !st; r++) {
        const lp_g10_res *res = &m->res[r];
        int cons = res->kind == LP_G10_CONSUMABLE;
        sq_row(&q);
        sq_u64(&q, r);
        sq_txt(&q, lp_g10_model_str(m, res->name));
        sq_txt(&q, cons ? "consumable" : "blocking");
        sq_txt(&q, lp_g10_model_str(m, res->metric));
        sq_txt(&q, cons ? (res->sample == LP_G10_COUNTER ? "counter" : "mean") : NULL);
        if (cons)
            sq_dbl(&q, res->scale), sq_dbl(&q, res->capacity);
        else
            sq_null(&q), sq_null(&q);
        sq_txt(&q, res->unit != LP_STR_NONE ? lp_g10_model_str(m, res->unit) : NULL);
        st = sq_step(&q, err);
    }
    return sq_end(&q, st, err);
}

static lp_status phases(lp_sqlite *db, const lp_g10_attr *a, lp_error *err)
{
    const lp_g10_exec *x = a->x;
    sq_ins q;
    lp_status st = sq_prep(db, &q, "INSERT INTO g10_phases VALUES(?,?,?,?,?,?,?,?,?,?,?)", err);
    for (uint32_t i = 0; i < x->n && !st; i++) {
        sq_row(&q);
        sq_u64(&q, i);
        sq_u64(&q, x->type[i]);
        sq_opt32(&q, x->parent[i]);
        sq_txt(&q, x->key[i] != LP_STR_NONE ? lp_g10_exec_str(x, x->key[i]) : NULL);
        sq_txt(&q, x->host[i] != LP_G10_NONE ? lp_g10_exec_str(x, x->hosts[x->host[i]]) : NULL);
        sq_i64(&q, x->start[i]);
        sq_i64(&q, x->end[i]);
        sq_i64(&q, x->derived[i]);
        sq_i64(&q, x->size[i] == 1);
        sq_i64(&q, a->active_ns[i]);
        st = sq_step(&q, err);
        if (!st && (i + 1) % TICK == 0 && sq_progress(db, "grade10 phases", i + 1, x->n))
            st = lp_error_set(err, LP_ERR_ARG, "cancelled");
    }
    st = sq_end(&q, st, err);
    if (st || (st = sq_prep(db, &q, "INSERT INTO g10_usage VALUES(?,?,?,?,?,?)", err)))
        return st;
    for (uint32_t r = 0; r < a->m->nres && !st; r++)
        for (size_t i = 0; i < a->nuse[r] && !st; i++) {
            const lp_g10_use *u = &a->use[r][i];
            sq_row(&q);
            sq_u64(&q, r);
            sq_u64(&q, u->phase);
            sq_opt32(&q, u->tl);
            if (a->m->res[r].kind == LP_G10_CONSUMABLE)
                sq_dbl(&q, u->used);
            else
                sq_null(&q);
            sq_i64(&q, u->bn_ns);
            st = sq_step(&q, err);
        }
    return sq_end(&q, st, err);
}

static lp_status timelines(lp_sqlite *db, const lp_g10_attr *a, int segments, lp_error *err)
{
    sq_ins q;
    lp_status st = sq_prep(db, &q, "INSERT INTO g10_timelines VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    for (uint32_t k = 0; k < a->ntl && !st; k++) {
        const lp_g10_tl *tl = &a->tl[k];
        sq_row(&q);
        sq_u64(&q, k);
        sq_u64(&q, tl->res);
        sq_txt(&q, lp_strtab_get(&a->strs, tl->host));
        sq_dbl(&q, tl->capacity);
        sq_u64(&q, tl->nseg);
        sq_u64(&q, tl->nwin);
        sq_dbl(&q, tl->consumed);
        sq_dbl(&q, tl->attributed);
        sq_dbl(&q, tl->background);
        sq_dbl(&q, tl->clipped);
        sq_u64(&q, tl->merged);
        sq_u64(&q, tl->dropped);
        sq_u64(&q, tl->gaps);
        sq_u64(&q, tl->nphases);
        st = sq_step(&q, err);
    }
    st = sq_end(&q, st, err);
    if (st || !segments || (st = sq_prep(db, &q, "INSERT INTO g10_segments VALUES(?,?,?,?,?,?,?,?,?,?)", err)))
        return st;
    double th = a->m->bottleneck * (1 - 1e-12);
    for (uint32_t k = 0; k < a->ntl && !st; k++) {
        const lp_g10_tl *tl = &a->tl[k];
        for (uint32_t s = 0; s < tl->nseg && !st; s++) {
            sq_row(&q);
            sq_u64(&q, k);
            sq_u64(&q, s);
            sq_i64(&q, tl->bound[s]);
            sq_i64(&q, tl->bound[s + 1]);
            sq_dbl(&q, tl->E[s]);
            sq_dbl(&q, tl->V[s]);
            sq_dbl(&q, tl->u[s]);
            sq_dbl(&q, tl->x[s]);
            sq_i64(&q, tl->u[s] >= th * tl->capacity);
            st = sq_step(&q, err);
            if (!st && (s + 1) % TICK == 0 && sq_progress(db, "grade10 segments", s + 1, tl->nseg))
                st = lp_error_set(err, LP_ERR_ARG, "cancelled");
        }
    }
    return sq_end(&q, st, err);
}

static lp_status stats(lp_sqlite *db, const lp_g10_attr *a, const lp_g10_issues *is, lp_error *err)
{
    const lp_g10_model *m = a->m;
    sq_ins q;
    lp_status st = sq_prep(db, &q, "INSERT INTO g10_type_stats VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", err);
    for (uint32_t t = 0; t < m->ntypes && !st; t++)
        for (uint32_t r = 0; r < m->nres && !st; r++) {
            size_t i = (size_t)t * m->nres + r;
            const lp_g10_tstat *ts = &a->tstat[i];
            if (!ts->phases)
                continue;
            sq_row(&q);
            sq_u64(&q, t);
            sq_u64(&q, r);
            sq_txt(&q, lp_g10_rule_name(m->rkind[i]));
            sq_dbl(&q, m->rval[i]);
            sq_i64(&q, m->rpct[i]);
            sq_u64(&q, ts->phases);
            sq_i64(&q, ts->active_ns);
            sq_dbl(&q, ts->used);
            sq_i64(&q, ts->bn_ns);
            sq_i64(&q, ts->bn_global_ns);
            sq_i64(&q, ts->bn_local_ns);
            st = sq_step(&q, err);
        }
    st = sq_end(&q, st, err);
    if (st || !is || (st = sq_prep(db, &q, "INSERT INTO g10_issues VALUES(?,?,?,?,?,?,?,?,?,?,?)", err)))
        return st;
    for (size_t i = 0; i < is->n && !st; i++) {
        const lp_g10_issue *v = &is->v[i];
        sq_row(&q);
        sq_u64(&q, i + 1);
        sq_txt(&q, lp_g10_issue_name(v->kind));
        sq_opt32(&q, v->kind == LP_G10_ISSUE_BOTTLENECK ? v->res : UINT32_MAX);
        sq_opt32(&q, v->kind != LP_G10_ISSUE_BOTTLENECK ? v->type : UINT32_MAX);
        sq_u64(&q, v->phases);
        sq_i64(&q, v->saved_ns);
        sq_i64(&q, v->makespan);
        sq_i64(&q, v->gain_ns);
        sq_dbl(&q, v->gain);
        sq_i64(&q, v->reported);
        st = sq_step(&q, err);
    }
    return sq_end(&q, st, err);
}

lp_status lp_sqlite_grade10(lp_sqlite *db, const lp_g10_attr *a, const lp_g10_issues *is, int segments,
                            lp_error *err)
{
    lp_status st = info(db, a, is, err);
    if (!st)
        st = model(db, a->m, err);
    if (!st)
        st = phases(db, a, err);
    if (!st)
        st = timelines(db, a, segments, err);
    if (!st)
        st = stats(db, a, is, err);
    return st;
}
