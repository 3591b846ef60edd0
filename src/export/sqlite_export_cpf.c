/* sqlite_export_cpf.c: the CrystalPerf tables of the SQLite export (sqlite_export.h;
 * docs/formats/sqlite.md "CrystalPerf"): cpf_info (the bottleneck, coverage and evidence),
 * cpf_path (path and whole-trace time by resource), cpf_ops (per operation and resource)
 * and cpf_activity (every activity's resource vector and its evidence). Rows of the
 * current run; activity ids are those of the `activities` table (lp_sqlite_trace). */
#include "sqlite_export_int.h"

static const char *const ev_names[] = {"none", "samples", "metrics", "type"};

static lp_status info(lp_sqlite *db, const lp_cpf_profile *p, const lp_cpf_bottleneck *b, lp_error *err)
{
    sq_ins x;
    lp_status st = sq_prep(db, &x, "INSERT INTO cpf_info VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    if (st)
        return st;
    sq_row(&x);
    sq_txt(&x, b->bottleneck >= 0 ? lp_res_name(b->bottleneck) : NULL);
    sq_dbl(&x, b->coverage);
    sq_i64(&x, b->partial);
    sq_i64(&x, b->path_total);
    sq_u64(&x, p->samples);
    sq_u64(&x, p->samples_used);
    sq_u64(&x, p->samples_outside);
    sq_u64(&x, p->samples_no_worker);
    sq_u64(&x, p->by_how[LP_HOW_STATE]);
    sq_u64(&x, p->by_how[LP_HOW_KERNEL]);
    sq_u64(&x, p->by_how[LP_HOW_CLASSIFIER]);
    sq_u64(&x, p->by_how[LP_HOW_NONE]);
    sq_u64(&x, p->acts_metrics);
    return sq_end(&x, sq_step(&x, err), err);
}

static lp_status path_ops(lp_sqlite *db, const lp_cpf_bottleneck *b, const lp_trace *t, lp_error *err)
{
    sq_ins x;
    lp_status st = sq_prep(db, &x, "INSERT INTO cpf_path VALUES(?,?,?,?)", err);
    for (int r = 0; r < LP_RES_N && !st; r++) {
        sq_row(&x);
        sq_txt(&x, lp_res_name(r));
        sq_dbl(&x, b->path[r]);
        sq_dbl(&x, b->all[r]);
        st = sq_step(&x, err);
    }
    if ((st = sq_end(&x, st, err)))
        return st;
    if ((st = sq_prep(db, &x, "INSERT INTO cpf_ops VALUES(?,?,?,?,?,?)", err)))
        return st;
    for (size_t i = 0; i < b->nops && !st; i++)
        for (int r = 0; r < LP_RES_N && !st; r++) {
            const lp_cpf_oprow *o = &b->ops[i];
            sq_row(&x);
            sq_u64(&x, i);
            sq_txt(&x, o->message ? "communication" : o->op == LP_STR_NONE ? NULL : lp_trace_str(t, o->op));
            sq_txt(&x, lp_res_name(r));
            sq_dbl(&x, o->path[r]);
            sq_dbl(&x, o->all[r]);
            st = sq_step(&x, err);
        }
    return sq_end(&x, st, err);
}

static lp_status acts(lp_sqlite *db, const lp_cpf_profile *p, lp_error *err)
{
    sq_ins x;
    lp_status st = sq_prep(db, &x, "INSERT INTO cpf_activity VALUES(?,?,?,?,?,?,?,?,?,?)", err);
    for (uint64_t a = 0; a < p->t->nacts && !st; a++) {
        double v[LP_RES_N];
        double cov = lp_cpf_act_vector(p, a, v);
        sq_row(&x);
        sq_u64(&x, a);
        sq_txt(&x, ev_names[p->ev[a] < 4 ? p->ev[a] : 0]);
        sq_u64(&x, p->nsamples[a]);
        for (int r = 0; r < LP_RES_N; r++)
            sq_dbl(&x, v[r]);
        sq_dbl(&x, cov);
        st = sq_step(&x, err);
    }
    return sq_end(&x, st, err);
}

lp_status lp_sqlite_crystalperf(lp_sqlite *db, const lp_cpf_profile *p, const lp_cpf_bottleneck *b, lp_error *err)
{
    lp_status st = info(db, p, b, err);
    if (!st)
        st = path_ops(db, b, p->t, err);
    if (!st)
        st = acts(db, p, err);
    return st ? lp_error_push(err, "CrystalPerf tables") : LP_OK;
}
