/* test_g10_export.c: a Grade10 analysis as JSON (read back with codec/json) and as
 * SQLite tables (read back with the SQLite C API), compared with the structures they
 * were written from: usage per (phase, resource), timeline totals, segments, type
 * totals and issues; replacing the run keeps one copy. */
#include "t.h"
#include "tutil.h"
#include "longpole/import/grade10.h"
#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/exec.h"
#include "longpole/analysis/grade10/attrib.h"
#include "longpole/analysis/grade10/issues.h"
#include "longpole/analysis/grade10/g10json.h"
#include "longpole/codec/json.h"
#include "longpole/export/sqlite_export.h"

#include <math.h>
#include <sqlite3.h>
#include <unistd.h>

static const char *model = "grade10-model 1\nslice 1s\n"
                           "phase /Job\nphase /Job/Task concurrent task\nphase /Job/Merge after Task\n"
                           "resource cpu consumable metric=cpu sample=mean capacity=2 unit=cores\n"
                           "resource gc blocking\n"
                           "rule /**/Task cpu exact 1\nrule /**/Merge cpu variable 1\nrule /**/Task gc full\n";
static const char *ops = "time=0, event=start, phase=Task, task=1\ntime=4000000000, event=end, phase=Task, task=1\n"
                         "time=0, event=start, phase=Task, task=2\ntime=2000000000, event=end, phase=Task, task=2\n"
                         "time=4000000000, event=start, phase=Merge\ntime=6000000000, event=end, phase=Merge\n";
static const char *mon = "0,h,cpu,0\n2000000000,h,cpu,2\n4000000000,h,cpu,1\n6000000000,h,cpu,0.5\n";
static const char *blk = "1000000000,1500000000,h,gc\n";

static int64_t q1(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        fprintf(stderr, "sql: %s: %s\n", sql, sqlite3_errmsg(db));
        return -2;
    }
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

static double qd(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s;
    double v = NAN;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return NAN;
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    return v;
}

static lp_status read_into(lp_g10_data *d, int which, const char *text, lp_diags *ds)
{
    lp_input *in;
    lp_error err;
    lp_g10_read_opts o = {1};
    if (lp_input_open_mem(&in, text, strlen(text), "x", &err))
        return LP_ERR_IO;
    lp_status st = which == 0 ? lp_g10_read_oplog(d, in, &o, ds, &err)
                   : which == 1 ? lp_g10_read_monitor(d, in, &o, ds, &err)
                                : lp_g10_read_blocking(d, in, &o, ds, &err);
    lp_input_close(in);
    return st;
}

int main(void)
{
    lp_diags ds;
    lp_diags_init(&ds, 20);
    lp_error err;
    lp_g10_model *m = NULL;
    lp_g10_data d;
    CHECK(lp_g10_model_parse(&m, model, strlen(model), "job.g10", &ds, &err) == LP_OK);
    CHECK(lp_g10_data_init(&d, &err) == LP_OK);
    CHECK(read_into(&d, 0, ops, &ds) == LP_OK && read_into(&d, 1, mon, &ds) == LP_OK && read_into(&d, 2, blk, &ds) == LP_OK);
    lp_g10_exec *x = NULL;
    lp_g10_attr *a = NULL;
    lp_g10_issues is;
    CHECK(lp_g10_exec_from_events(m, &d, &ds, &x, &err) == LP_OK);
    lp_g10_opts o = {LP_G10_SLICES, 0, 1};
    CHECK(x && lp_g10_attribute(m, x, &d, &o, &ds, &a, &err) == LP_OK);
    CHECK(a && lp_g10_issues_find(a, -1, &is, &err) == LP_OK);
    if (!a)
        return t_done("test_g10_export");

    /* JSON */
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    lp_jsonw j;
    lp_jsonw_init(&j, f, 1);
    CHECK(lp_g10_json(&j, a, &is, 1, &err) == LP_OK);
    lp_jsonw_end(&j);
    fclose(f);
    lp_input *in;
    lp_json_reader *r;
    CHECK(lp_input_open_mem(&in, buf, n, "g10.json", &err) == LP_OK);
    CHECK(lp_json_reader_new(&r, in, NULL, &err) == LP_OK);
    lp_json_ev ev;
    CHECK(lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_VALUE);
    if (ev.kind == LP_JSON_EV_VALUE) {
        const lp_json *root = ev.tree;
        CHECK(lp_json_str_is(lp_json_get(root, "format"), "longpole-grade10"));
        const lp_json *ph = lp_json_get(root, "phases");
        CHECK(ph && ph->type == LP_JSON_ARRAY && ph->len == x->n);
        const lp_json *iss = lp_json_get(lp_json_get(root, "issues"), "list");
        CHECK(iss && iss->len == is.n);
        const lp_json *res = lp_json_get(root, "resources");
        CHECK(res && res->len == 2);
        const lp_json *tl0 = lp_json_first(lp_json_get(lp_json_first(res), "timelines"));
        double consumed;
        CHECK(tl0 && lp_json_double(lp_json_get(tl0, "consumed"), &consumed) == 0 && fabs(consumed - a->tl[0].consumed) < 1e-9);
        /* the root's usage is the sum of its leaves' */
        const lp_json *p0 = lp_json_first(ph);
        double used;
        CHECK(lp_json_double(lp_json_get(lp_json_get(lp_json_get(p0, "resources"), "cpu"), "used"), &used) == 0 &&
              fabs(used - a->tl[0].attributed) < 1e-9);
    }
    lp_json_reader_free(r);
    lp_input_close(in);
    free(buf);

    /* SQLite, twice for the same input: one run */
    char path[256];
    snprintf(path, sizeof path, "/tmp/lp_g10_export_%d.db", (int)getpid());
    unlink(path);
    const char *inputs[1] = {"/nonexistent/job.g10"};
    for (int k = 0; k < 2; k++) {
        lp_sqlite *db;
        CHECK(lp_sqlite_open(&db, path, inputs, 1, "grade10", NULL, &err) == LP_OK);
        CHECK(lp_sqlite_grade10(db, a, &is, 1, &err) == LP_OK);
        CHECK(lp_sqlite_commit(db, NULL, &err) == LP_OK);
        lp_sqlite_close(db);
    }
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM runs"), 1);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM g10_phases"), x->n);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM g10_types"), m->ntypes);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM g10_usage"), a->nuse[0] + a->nuse[1]);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM g10_segments"), a->tl[0].nseg);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM g10_issues"), is.n);
    CHECK(fabs(qd(db, "SELECT sum(used) FROM g10_usage WHERE resource = 0") - a->tl[0].attributed) < 1e-9);
    CHECK(fabs(qd(db, "SELECT sum(usage * (end_ns - start_ns)) / 1e9 FROM g10_segments") - a->tl[0].consumed) < 1e-9);
    /* the 0.5 s pause [1 s, 1.5 s) rounds to the slice [1 s, 2 s) */
    CHECK_EQ_I(q1(db, "SELECT bottleneck_ns FROM v_g10_usage WHERE resource = 'gc' AND key = '1'"), 1000000000);
    CHECK_EQ_I(q1(db, "SELECT replayed_ns FROM g10_info"), is.baseline);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM v_g10_issues WHERE kind = 'imbalance' AND type = '/Job/Task'"), 1);
    sqlite3_close(db);
    unlink(path);

    lp_g10_issues_release(&is);
    lp_g10_attr_free(a);
    lp_g10_exec_free(x);
    lp_g10_data_release(&d);
    lp_g10_model_free(m);
    lp_diags_release(&ds);
    return t_done("test_g10_export");
}
