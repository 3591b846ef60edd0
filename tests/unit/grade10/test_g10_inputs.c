/* test_g10_inputs.c: the Grade10 inputs (OperationLog lines, monitoring CSV, blocking
 * CSV) and the phase-instance tree built from them or from a trace: known results, and
 * bad input (unknown phases, phases without ends, monitoring out of order) reported
 * with file and line. */
#include "t.h"
#include "tutil.h"
#include "longpole/import/grade10.h"
#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/exec.h"

static int diag_line(const lp_diags *ds, lp_rule rule, const char *file, unsigned long long line, const char *needle)
{
    for (size_t i = 0; i < ds->nkept; i++) {
        const lp_diag *d = &ds->kept[i];
        if (d->rule == rule && d->line == line && (!file || (d->file && strcmp(d->file, file) == 0)) &&
            (!needle || strstr(d->msg, needle)))
            return 1;
    }
    fprintf(stderr, "missing diagnostic [%s] %s:%llu '%s'; have:\n", lp_rule_name(rule), file ? file : "", line,
            needle ? needle : "");
    for (size_t i = 0; i < ds->nkept; i++)
        fprintf(stderr, "   [%s] %s:%llu %s\n", lp_rule_name(ds->kept[i].rule), ds->kept[i].file,
                (unsigned long long)ds->kept[i].line, ds->kept[i].msg);
    return 0;
}

typedef lp_status (*reader_fn)(lp_g10_data *, lp_input *, const lp_g10_read_opts *, lp_diags *, lp_error *);

static lp_status read_text(lp_g10_data *d, reader_fn fn, const char *text, const char *name, int64_t unit,
                           lp_diags *ds)
{
    lp_error err;
    lp_input *in;
    if (lp_input_open_mem(&in, text, strlen(text), name, &err))
        return LP_ERR_IO;
    lp_g10_read_opts o = {unit};
    lp_status st = fn(d, in, &o, ds, &err);
    lp_input_close(in);
    return st;
}

static void test_oplog(void)
{
    lp_g10_data d;
    lp_diags ds;
    lp_diags_init(&ds, 50);
    lp_error err;
    CHECK(lp_g10_data_init(&d, &err) == LP_OK);
    const char *giraph =
        "2020-05-13 12:00:00,123 INFO [main] org.apache.giraph.metrics.OperationLog: time=1589371843123, event=start, phase=Superstep, superstep=3\n"
        "some other line\n"
        "2020-05-13 12:00:01,000 INFO [main] org.apache.giraph.metrics.OperationLog - time=1589371844000 , event = end, phase=Superstep, superstep=3\n";
    CHECK(read_text(&d, lp_g10_read_oplog, giraph, "giraph.log", 0, &ds) == LP_OK);
    CHECK_EQ_I(d.nev, 2);
    CHECK_EQ_I(d.ignored_lines, 1);
    CHECK(d.ev[0].time == 1589371843123LL * 1000000 && d.ev[0].kind == LP_G10_EV_START);
    CHECK(d.ev[1].time == 1589371844000LL * 1000000 && d.ev[1].kind == LP_G10_EV_END && d.ev[1].line == 3);
    CHECK_STR(lp_strtab_get(&d.strs, d.ev[0].phase), "Superstep");
    lp_str ss = lp_strtab_find(&d.strs, "superstep", 9);
    CHECK(lp_g10_tag(&d, d.ev[1].tags, ss) == lp_strtab_find(&d.strs, "3", 1));
    const char *pg =
        "OperationLog: time=1589371843123456789, event=start, phase=GatherThread, worker=1, thread=2\n"
        "OperationLog: time=1589371843123456999, event=single, host=node7, worker=1\n"
        "OperationLog: event=start, phase=X\n"
        "OperationLog: time=12, event=start, phase=X\n"
        "OperationLog: time=1589371843123, event=start, phase=X\n"
        "OperationLog: time=1589371843123456999, event=begin, phase=X\n"
        "OperationLog: time=1589371843123456999, event=start\n"
        "OperationLog: time=1589371843123456999, event=start, phase=X, a=1, a=2\n"
        "OperationLog: time=1589371843123456999, event=start, phase=X, junk\n";
    size_t before = d.nev;
    CHECK(read_text(&d, lp_g10_read_oplog, pg, "pg.log", 0, &ds) == LP_OK);
    CHECK_EQ_I(d.nev - before, 2);
    CHECK(d.ev[before].time == 1589371843123456789LL);
    CHECK(d.ev[before + 1].kind == LP_G10_EV_SINGLE && d.ev[before + 1].phase == LP_STR_NONE);
    CHECK(diag_line(&ds, LP_RULE_FIELD, "pg.log", 3, "without time="));
    CHECK(diag_line(&ds, LP_RULE_FIELD, "pg.log", 4, "neither epoch"));
    CHECK(diag_line(&ds, LP_RULE_FIELD, "pg.log", 5, "milliseconds but earlier"));
    CHECK(diag_line(&ds, LP_RULE_FIELD, "pg.log", 6, "event must be"));
    CHECK(diag_line(&ds, LP_RULE_FIELD, "pg.log", 7, "without phase="));
    CHECK(diag_line(&ds, LP_RULE_FIELD, "pg.log", 8, "given twice"));
    CHECK(diag_line(&ds, LP_RULE_FIELD, "pg.log", 9, "not key=value"));
    /* an explicit unit */
    before = d.nev;
    CHECK(read_text(&d, lp_g10_read_oplog, "time=12.5, event=start, phase=X\n", "u.log", 1000000, &ds) == LP_OK);
    CHECK(d.nev == before + 1 && d.ev[before].time == 12500000);
    lp_g10_data_release(&d);
    lp_diags_release(&ds);
}

static void test_monitor(void)
{
    lp_g10_data d;
    lp_diags ds;
    lp_diags_init(&ds, 50);
    lp_error err;
    CHECK(lp_g10_data_init(&d, &err) == LP_OK);
    const char *csv = "# monitor\n"
                      "time_ms,host,metric,value\n"
                      "0,h1,cpu,0\n"
                      "10,h1,cpu,0.5\n"
                      "10,h2,cpu,1e3\n"
                      "10,h1,cpu,0.7\n"  /* line 6: not after */
                      "5,h1,cpu,0.7\n"   /* line 7: before */
                      "20,h1,cpu,abc\n"  /* line 8 */
                      "20,h1\n"          /* line 9 */
                      "30,h1,cpu,1.5\n";
    CHECK(read_text(&d, lp_g10_read_monitor, csv, "mon.csv", 0, &ds) == LP_OK);
    const lp_g10_series *s = lp_g10_data_series(&d, "h1", "cpu");
    CHECK(s && s->n == 3);
    if (s) {
        CHECK(s->time[0] == 0 && s->time[1] == 10000000 && s->time[2] == 30000000);
        CHECK(s->value[2] == 1.5 && s->line[2] == 10);
    }
    s = lp_g10_data_series(&d, "h2", "cpu");
    CHECK(s && s->n == 1 && s->value[0] == 1000);
    CHECK(diag_line(&ds, LP_RULE_ORDER, "mon.csv", 6, "not after"));
    CHECK(diag_line(&ds, LP_RULE_ORDER, "mon.csv", 7, "not after"));
    CHECK(diag_line(&ds, LP_RULE_FIELD, "mon.csv", 8, "not a finite number"));
    CHECK(diag_line(&ds, LP_RULE_FIELD, "mon.csv", 9, "too few"));
    /* columns in another order, no unit: ns */
    CHECK(read_text(&d, lp_g10_read_monitor, "metric,value,time,host\nnet,5,100,h3\n", "m2.csv", 0, &ds) == LP_OK);
    s = lp_g10_data_series(&d, "h3", "net");
    CHECK(s && s->n == 1 && s->time[0] == 100 && s->value[0] == 5);
    /* a broken header is a format error */
    CHECK(read_text(&d, lp_g10_read_monitor, "when,host,metric,value\n1,h,m,2\n", "m3.csv", 0, &ds) == LP_ERR_FORMAT);
    lp_g10_data_release(&d);
    lp_diags_release(&ds);
}

static void test_blocking(void)
{
    lp_g10_data d;
    lp_diags ds;
    lp_diags_init(&ds, 50);
    lp_error err;
    CHECK(lp_g10_data_init(&d, &err) == LP_OK);
    const char *csv = "start_ms,end_ms,host,resource,scope\n"
                      "100,150,h1,gc,\n"
                      "200,210,*,queue,worker=3;thread=1\n"
                      "300,290,h1,gc,\n"
                      "400,410,h1,,\n"
                      "500,510,h1,gc,worker\n";
    CHECK(read_text(&d, lp_g10_read_blocking, csv, "blk.csv", 0, &ds) == LP_OK);
    CHECK_EQ_I(d.nblk, 2);
    CHECK(d.blk[0].start == 100000000 && d.blk[0].end == 150000000 && d.blk[0].scope == 0);
    CHECK(d.blk[1].host == LP_STR_EMPTY && d.pool[d.blk[1].scope] == 2);
    CHECK(diag_line(&ds, LP_RULE_END_BEFORE_START, "blk.csv", 4, "before it starts"));
    CHECK(diag_line(&ds, LP_RULE_FIELD, "blk.csv", 5, "empty resource"));
    CHECK(diag_line(&ds, LP_RULE_FIELD, "blk.csv", 6, "not key=value"));
    /* no header: start,end,host,resource */
    CHECK(read_text(&d, lp_g10_read_blocking, "1,2,h,gc\n", "b2.csv", 0, &ds) == LP_OK);
    CHECK(d.nblk == 3 && d.blk[2].start == 1 && d.blk[2].end == 2);
    lp_g10_data_release(&d);
    lp_diags_release(&ds);
}

static const char *model =
    "grade10-model 1\n"
    "phase /Load\n"
    "phase /Load/Worker concurrent worker\n"
    "phase /Superstep sequential superstep after Load\n"
    "phase /Superstep/Compute concurrent worker\n"
    "phase /Superstep/Compute/Thread concurrent thread\n"
    "phase /Superstep/Barrier after Compute\n"
    "resource cpu consumable metric=cpu sample=mean capacity=4\n";

static lp_g10_model *get_model(void)
{
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_error err;
    lp_g10_model *m = NULL;
    lp_status st = lp_g10_model_parse(&m, model, strlen(model), "m.g10", &ds, &err);
    CHECK(st == LP_OK);
    lp_diags_release(&ds);
    return m;
}

static void test_exec_events(void)
{
    lp_g10_model *m = get_model();
    lp_g10_data d;
    lp_diags ds;
    lp_diags_init(&ds, 50);
    lp_error err;
    CHECK(lp_g10_data_init(&d, &err) == LP_OK);
    const char *log =
        "time=10, event=start, phase=Worker, worker=a\n"
        "time=40, event=end, phase=Worker, worker=a\n"
        "time=12, event=start, phase=Worker, worker=b\n"
        "time=38, event=end, phase=Worker, worker=b\n"
        "time=50, event=start, phase=Thread, superstep=0, worker=a, thread=1\n"
        "time=90, event=end, phase=Thread, superstep=0, worker=a, thread=1\n"
        "time=50, event=start, phase=Thread, superstep=0, worker=a, thread=2\n"
        "time=70, event=end, phase=Thread, superstep=0, worker=a, thread=2\n"
        "time=95, event=single, phase=Barrier, superstep=0\n"
        "time=100, event=start, phase=Thread, superstep=1, worker=b, thread=1\n" /* line 10: never ends */
        "time=120, event=end, phase=Thread, superstep=1, worker=b, thread=9\n"   /* line 11: never started */
        "time=130, event=start, phase=Nope, superstep=1\n"                       /* line 12: unknown */
        "time=130, event=start, phase=Thread, worker=b, thread=1\n"              /* line 13: lacks superstep */
        "time=60, event=start, phase=Worker, worker=a\n"                         /* line 14: second start */
        "time=1, event=single, host=node1, worker=a\n"
        "time=1, event=single, host=node2, worker=b\n"
        "time=140, event=start, phase=Compute, superstep=1, worker=c, host=node3\n"
        "time=150, event=end, phase=Compute, superstep=1, worker=c\n";
    CHECK(read_text(&d, lp_g10_read_oplog, log, "job.log", 1, &ds) == LP_OK);
    lp_g10_exec *x = NULL;
    CHECK(lp_g10_exec_from_events(m, &d, &ds, &x, &err) == LP_OK);
    if (!x)
        return;
    CHECK(diag_line(&ds, LP_RULE_UNMATCHED, "job.log", 10, "never ended"));
    CHECK(diag_line(&ds, LP_RULE_UNMATCHED, "job.log", 11, "never started"));
    CHECK(diag_line(&ds, LP_RULE_IMPORT, "job.log", 12, "unknown phase 'Nope'"));
    CHECK(diag_line(&ds, LP_RULE_IMPORT, "job.log", 13, "lacks an instance key"));
    CHECK(diag_line(&ds, LP_RULE_IMPORT, "job.log", 14, "started again"));
    CHECK_EQ_I(x->unmatched, 2);
    /* root, Load, 2 workers, Superstep 0 (Compute a (2 threads), Barrier), Superstep 1 (Compute c) */
    CHECK_EQ_I(x->n, 11);
    CHECK(x->size[0] == x->n && x->parent[0] == LP_G10_NONE);
    CHECK(x->start[0] == 10 && x->end[0] == 150 && x->derived[0]);
    char buf[256];
    CHECK_STR(lp_g10_exec_name(x, 1, buf, sizeof buf), "/Load");
    CHECK_STR(lp_g10_exec_name(x, 2, buf, sizeof buf), "/Load/Worker[a]");
    CHECK_STR(lp_g10_exec_name(x, 3, buf, sizeof buf), "/Load/Worker[b]");
    CHECK(x->start[1] == 10 && x->end[1] == 40 && x->derived[1]);
    /* preorder and subtree sizes */
    for (uint32_t i = 1; i < x->n; i++) {
        uint32_t p = x->parent[i];
        CHECK(p < i && i < p + x->size[p]);
    }
    uint32_t s0 = 4;
    CHECK_STR(lp_g10_exec_name(x, s0, buf, sizeof buf), "/Superstep[0]");
    CHECK(x->start[s0] == 50 && x->end[s0] == 95 && x->size[s0] == 5);
    CHECK_STR(lp_g10_exec_name(x, s0 + 2, buf, sizeof buf), "/Superstep[0]/Compute[a]/Thread[1]");
    CHECK_STR(lp_g10_exec_name(x, s0 + 4, buf, sizeof buf), "/Superstep[0]/Barrier");
    CHECK(x->start[s0 + 4] == 95 && x->end[s0 + 4] == 95);
    /* hosts: mapped through the single records, inherited, or named */
    CHECK(x->host[2] != LP_G10_NONE && strcmp(lp_g10_exec_str(x, x->hosts[x->host[2]]), "node1") == 0);
    CHECK(strcmp(lp_g10_exec_str(x, x->hosts[x->host[3]]), "node2") == 0);
    CHECK(strcmp(lp_g10_exec_str(x, x->hosts[x->host[s0 + 2]]), "node1") == 0); /* thread of worker a */
    CHECK(x->host[s0] == LP_G10_NONE);
    uint32_t c = x->n - 1;
    CHECK_STR(lp_g10_exec_name(x, c, buf, sizeof buf), "/Superstep[1]/Compute[c]");
    CHECK(strcmp(lp_g10_exec_str(x, x->hosts[x->host[c]]), "node3") == 0);
    CHECK_EQ_I(x->nleaves, 6);
    lp_g10_exec_free(x);
    lp_g10_data_release(&d);
    lp_diags_release(&ds);
    lp_g10_model_free(m);
}

static void test_exec_trace(void)
{
    lp_g10_model *m = get_model();
    lp_diags ds;
    lp_trace *t = load_text("W w1 host=n1\n"
                            "A w1 0 100 processing Worker worker=x\n"
                            "A w1 100 200 processing Thread superstep=0 thread=1\n"
                            "A w1 200 250 barrier -\n"
                            "A w2 100 180 processing Thread superstep=0 thread=1\n",
                            &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_error err;
    lp_g10_exec *x = NULL;
    CHECK(lp_g10_exec_from_trace(m, t, &ds, &x, &err) == LP_OK);
    if (x) {
        /* root, Load, Worker[x], Superstep[0], Compute[w1], Thread[1], Compute[w2], Thread[1] */
        CHECK_EQ_I(x->n, 8);
        CHECK_EQ_I(x->ignored, 1); /* the barrier activity names no phase type */
        char buf[256];
        CHECK_STR(lp_g10_exec_name(x, 2, buf, sizeof buf), "/Load/Worker[x]");
        CHECK_STR(lp_g10_exec_name(x, 5, buf, sizeof buf), "/Superstep[0]/Compute[w1]/Thread[1]");
        CHECK(strcmp(lp_g10_exec_str(x, x->hosts[x->host[5]]), "n1") == 0);
        CHECK(x->start[3] == 100 && x->end[3] == 200);
        lp_g10_exec_free(x);
    }
    lp_trace_free(t);
    lp_diags_release(&ds);
    lp_g10_model_free(m);
}

int main(void)
{
    test_oplog();
    test_monitor();
    test_blocking();
    test_exec_events();
    test_exec_trace();
    return t_done("test_g10_inputs");
}
