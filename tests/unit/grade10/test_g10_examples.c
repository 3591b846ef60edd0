/* test_g10_examples.c: the example models of docs/examples/grade10 against what each
 * claims to model (docs/examples/grade10/README.md):
 *  - giraph.g10 and powergraph.g10 read OperationLog lines in the syntax of the
 *    authors' parsers (Giraph: org.apache.giraph.metrics.OperationLog, epoch ms;
 *    PowerGraph: OperationLog, epoch ns, workers mapped to hosts by single records)
 *    without an unknown phase or a missing key, and attribute a run;
 *  - spark.g10 maps every task activity of a real Spark event log (../shared/data,
 *    skipped when absent) to a phase, tasks under their stages;
 *  - dataflow.g10 maps every non-waiting activity of a generated dataflow job, and with
 *    monitoring that is the exact count of busy workers per slice, gives every worker
 *    exactly its busy time in core-seconds. */
#include "t.h"
#include "tutil.h"
#include "longpole/longpole.h"
#include "longpole/import/grade10.h"
#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/exec.h"
#include "longpole/analysis/grade10/attrib.h"
#include "longpole/analysis/grade10/issues.h"

#include <math.h>
#include <unistd.h>

static lp_g10_model *example(const char *name, lp_diags *ds)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/examples/grade10/%s", LP_SOURCE_DIR, name);
    lp_input *in;
    lp_error err;
    lp_g10_model *m = NULL;
    lp_diags_init(ds, 50);
    if (lp_input_open(&in, path, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return NULL;
    }
    if (lp_g10_model_read(&m, in, ds, &err))
        fprintf(stderr, "%s: %s\n", name, err.msg);
    lp_input_close(in);
    CHECK(m != NULL);
    CHECK_EQ_I(ds->nwarnings, 0);
    return m;
}

static int read_text(lp_g10_data *d, int which, const char *text, int64_t unit, lp_diags *ds)
{
    lp_input *in;
    lp_error err;
    lp_g10_read_opts o = {unit};
    if (lp_input_open_mem(&in, text, strlen(text), which ? "mon.csv" : "job.log", &err))
        return 0;
    lp_status st = which ? lp_g10_read_monitor(d, in, &o, ds, &err) : lp_g10_read_oplog(d, in, &o, ds, &err);
    lp_input_close(in);
    return st == LP_OK;
}

typedef struct sbuf {
    char *p;
    size_t n;
    FILE *f;
} sbuf;

static void test_giraph(void)
{
    lp_diags ds;
    lp_g10_model *m = example("giraph.g10", &ds);
    if (!m)
        return;
    sbuf b = {0};
    b.f = open_memstream(&b.p, &b.n);
    const char *pre = "2020-05-13 12:00:00,000 INFO [compute-0] org.apache.giraph.metrics.OperationLog:";
    long long t = 1589371843000LL;
    for (int w = 0; w < 2; w++) {
        fprintf(b.f, "%s time=%lld, event=start, phase=WorkerSetup, worker=%d\n", pre, t, w);
        fprintf(b.f, "%s time=%lld, event=end, phase=WorkerSetup, worker=%d\n", pre, t + 100, w);
        fprintf(b.f, "%s time=%lld, event=start, phase=WorkerLoadGraph, worker=%d\n", pre, t + 100, w);
        fprintf(b.f, "%s time=%lld, event=end, phase=WorkerLoadGraph, worker=%d\n", pre, t + 1000, w);
    }
    long long s0 = t + 1000;
    for (int s = 0; s < 3; s++, s0 += 1000)
        for (int w = 0; w < 2; w++) {
            fprintf(b.f, "%s time=%lld, event=start, phase=Communicate, superstep=%d, worker=%d\n", pre, s0, s, w);
            fprintf(b.f, "%s time=%lld, event=end, phase=Communicate, superstep=%d, worker=%d\n", pre, s0 + 900, s, w);
            fprintf(b.f, "%s time=%lld, event=start, phase=PreCompute, superstep=%d, worker=%d\n", pre, s0, s, w);
            fprintf(b.f, "%s time=%lld, event=end, phase=PreCompute, superstep=%d, worker=%d\n", pre, s0 + 50, s, w);
            for (int th = 0; th < 4; th++) {
                fprintf(b.f, "%s time=%lld, event=start, phase=PreVertexCompute, superstep=%d, worker=%d, thread=%d\n",
                        pre, s0 + 50, s, w, th);
                fprintf(b.f, "%s time=%lld, event=end, phase=PreVertexCompute, superstep=%d, worker=%d, thread=%d\n",
                        pre, s0 + 60, s, w, th);
                for (int p = 0; p < 3; p++) {
                    fprintf(b.f,
                            "%s time=%lld, event=start, phase=ComputePartition, superstep=%d, worker=%d, thread=%d, partition=%d\n",
                            pre, s0 + 60 + p * 250, s, w, th, p);
                    fprintf(b.f,
                            "%s time=%lld, event=end, phase=ComputePartition, superstep=%d, worker=%d, thread=%d, partition=%d\n",
                            pre, s0 + 60 + (p + 1) * 250 - th * 10, s, w, th, p);
                }
                fprintf(b.f, "%s time=%lld, event=start, phase=PostVertexCompute, superstep=%d, worker=%d, thread=%d\n",
                        pre, s0 + 810, s, w, th);
                fprintf(b.f, "%s time=%lld, event=end, phase=PostVertexCompute, superstep=%d, worker=%d, thread=%d\n",
                        pre, s0 + 820, s, w, th);
            }
            fprintf(b.f, "%s time=%lld, event=start, phase=PostCompute, superstep=%d, worker=%d\n", pre, s0 + 820, s, w);
            fprintf(b.f, "%s time=%lld, event=end, phase=PostCompute, superstep=%d, worker=%d\n", pre, s0 + 1000, s, w);
        }
    fprintf(b.f, "%s time=%lld, event=start, phase=Cleanup\n%s time=%lld, event=end, phase=Cleanup\n", pre, s0, pre,
            s0 + 200);
    fclose(b.f);
    /* CPU: 8 threads at one core during compute, on one host of 32 cores */
    sbuf mon = {0};
    mon.f = open_memstream(&mon.p, &mon.n);
    double cpu = 0;
    for (long long ms = t; ms <= s0 + 300; ms += 100) {
        fprintf(mon.f, "%lld,node1,cpu.busy,%.6f\n%lld,node1,net.rx_bytes,%lld\n%lld,node1,net.tx_bytes,%lld\n", ms, cpu,
                ms, (ms - t) * 10000, ms, (ms - t) * 5000);
        cpu += 0.1 * 8.5;
    }
    fclose(mon.f);
    lp_g10_data d;
    lp_error err;
    CHECK(lp_g10_data_init(&d, &err) == LP_OK);
    CHECK(read_text(&d, 0, b.p, 0, &ds) && read_text(&d, 1, mon.p, 1000000, &ds));
    lp_g10_exec *x = NULL;
    CHECK(lp_g10_exec_from_events(m, &d, &ds, &x, &err) == LP_OK);
    CHECK_EQ_I(ds.nerrors, 0);
    if (x) {
        CHECK_EQ_I(x->dropped, 0);
        lp_g10_attr *a = NULL;
        lp_g10_opts o = {LP_G10_SLICES, 0, 1};
        CHECK(lp_g10_attribute(m, x, &d, &o, &ds, &a, &err) == LP_OK);
        lp_g10_issues is;
        CHECK(a && lp_g10_issues_find(a, -1, &is, &err) == LP_OK);
        if (a) {
            CHECK_EQ_I(a->ntl, 3);
            CHECK(is.baseline > 0);
            lp_g10_issues_release(&is);
        }
        lp_g10_attr_free(a);
        lp_g10_exec_free(x);
    }
    free(b.p);
    free(mon.p);
    lp_g10_data_release(&d);
    lp_g10_model_free(m);
    lp_diags_release(&ds);
}

static void test_powergraph(void)
{
    lp_diags ds;
    lp_g10_model *m = example("powergraph.g10", &ds);
    if (!m)
        return;
    sbuf b = {0};
    b.f = open_memstream(&b.p, &b.n);
    long long t = 1589371843000000000LL, S = 1000000000LL;
    static const char *const stages[] = {"ExchangeMessages", "ReceiveMessages", "Gather", "Apply", "Scatter"};
    for (int w = 0; w < 2; w++) {
        fprintf(b.f, "[node%d:123] MCW rank %d\nOperationLog: time=%lld, event=single, host=node%d, worker=%d\n", w, w, t, w,
                w);
        fprintf(b.f, "OperationLog: time=%lld, event=start, phase=WorkerLoadGraph, worker=%d\n", t, w);
        fprintf(b.f, "OperationLog: time=%lld, event=end, phase=WorkerLoadGraph, worker=%d\n", t + S, w);
        fprintf(b.f, "OperationLog: time=%lld, event=start, phase=WorkerInitializeEngine, worker=%d\n", t + S, w);
        fprintf(b.f, "OperationLog: time=%lld, event=end, phase=WorkerInitializeEngine, worker=%d\n", t + 2 * S, w);
    }
    long long c = t + 2 * S;
    for (int s = 0; s < 2; s++) {
        for (int st = 0; st < 5; st++) {
            if (st == 2) {
                fprintf(b.f, "OperationLog: time=%lld, event=start, phase=CountActiveVertices, superstep=%d\n", c, s);
                fprintf(b.f, "OperationLog: time=%lld, event=end, phase=CountActiveVertices, superstep=%d\n", c + S / 10,
                        s);
                c += S / 10;
            }
            for (int w = 0; w < 2; w++) {
                fprintf(b.f, "OperationLog: time=%lld, event=start, phase=%sCommunication, superstep=%d, worker=%d\n", c,
                        stages[st], s, w);
                fprintf(b.f, "OperationLog: time=%lld, event=end, phase=%sCommunication, superstep=%d, worker=%d\n",
                        c + S / 2, stages[st], s, w);
                for (int th = 0; th < 3; th++) {
                    fprintf(b.f, "OperationLog: time=%lld, event=start, phase=%sThread, superstep=%d, worker=%d, thread=%d\n",
                            c, stages[st], s, w, th);
                    fprintf(b.f, "OperationLog: time=%lld, event=end, phase=%sThread, superstep=%d, worker=%d, thread=%d\n",
                            c + S / 2 + (w + th) * S / 10, stages[st], s, w, th);
                }
            }
            c += S;
        }
    }
    for (int w = 0; w < 2; w++) {
        fprintf(b.f, "OperationLog: time=%lld, event=start, phase=WorkerWriteResult, worker=%d\n", c, w);
        fprintf(b.f, "OperationLog: time=%lld, event=end, phase=WorkerWriteResult, worker=%d\n", c + S, w);
    }
    fclose(b.f);
    lp_g10_data d;
    lp_error err;
    CHECK(lp_g10_data_init(&d, &err) == LP_OK);
    CHECK(read_text(&d, 0, b.p, 0, &ds));
    CHECK_EQ_I(d.ignored_lines, 2); /* the MCW rank lines */
    lp_g10_exec *x = NULL;
    CHECK(lp_g10_exec_from_events(m, &d, &ds, &x, &err) == LP_OK);
    CHECK_EQ_I(ds.nerrors, 0);
    if (x) {
        CHECK_EQ_I(x->nhosts, 2);
        lp_g10_attr *a = NULL;
        CHECK(lp_g10_attribute(m, x, &d, NULL, &ds, &a, &err) == LP_OK);
        lp_g10_issues is;
        CHECK(a && lp_g10_issues_find(a, 0, &is, &err) == LP_OK);
        if (a) {
            /* the threads of worker 1 are slower: GatherThread's imbalance is an issue */
            uint32_t gt = lp_g10_model_type(m, "/ComputeMain/Superstep/Gather/WorkerGather/GatherThread");
            int found = 0;
            for (size_t i = 0; i < is.n; i++)
                found |= is.v[i].kind == LP_G10_ISSUE_IMBALANCE && is.v[i].type == gt && is.v[i].gain_ns > 0;
            CHECK(found);
            lp_g10_issues_release(&is);
        }
        lp_g10_attr_free(a);
        lp_g10_exec_free(x);
    }
    free(b.p);
    lp_g10_data_release(&d);
    lp_g10_model_free(m);
    lp_diags_release(&ds);
}

static void test_spark(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/../shared/data/spark/app-20170324182509-0000", LP_SOURCE_DIR);
    if (access(path, R_OK)) {
        fprintf(stderr, "spark: %s absent: skipped\n", path);
        return;
    }
    lp_diags ds;
    lp_g10_model *m = example("spark.g10", &ds);
    if (!m)
        return;
    const char *paths[1] = {path};
    lp_trace *t = NULL;
    lp_error err;
    lp_diags tds;
    lp_diags_init(&tds, 10);
    CHECK(lp_trace_load(paths, 1, NULL, &tds, &t, &err) == LP_OK);
    if (t) {
        lp_g10_exec *x = NULL;
        CHECK(lp_g10_exec_from_trace(m, t, &ds, &x, &err) == LP_OK);
        if (x) {
            uint64_t tasks = 0, stages = 0, task_acts = 0, leaves = 0;
            uint32_t ty = lp_g10_model_type(m, "/Stage/Task"), st = lp_g10_model_type(m, "/Stage");
            for (uint32_t i = 0; i < x->n; i++)
                tasks += x->type[i] == ty, stages += x->type[i] == st, leaves += x->size[i] == 1;
            for (uint32_t w = 0; w < t->nworkers; w++)
                if (strncmp(lp_trace_worker_name(t, w), "executor.", 9) == 0)
                    for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1]; a++)
                        task_acts += !(t->aflags[a] & LP_ACT_GAP);
            CHECK_EQ_I(tasks, 18);  /* the log's 18 tasks */
            CHECK_EQ_I(stages, 3);
            CHECK_EQ_I(leaves, task_acts); /* every task activity is a phase */
            CHECK_EQ_I(ds.nerrors, 0);
            lp_g10_exec_free(x);
        }
        lp_trace_free(t);
    }
    lp_diags_release(&tds);
    lp_g10_model_free(m);
    lp_diags_release(&ds);
}

static void test_dataflow(void)
{
    lp_diags ds;
    lp_g10_model *m = example("dataflow.g10", &ds);
    if (!m)
        return;
    lp_gen_dataflow g;
    lp_gen_dataflow_defaults(&g);
    g.max_records = 20000;
    g.seed = 3;
    lp_trace *t = NULL;
    lp_error err;
    CHECK(lp_gen_dataflow_run(&g, &t, &err) == LP_OK);
    if (!t)
        return;
    lp_g10_exec *x = NULL;
    CHECK(lp_g10_exec_from_trace(m, t, &ds, &x, &err) == LP_OK);
    if (!x)
        return;
    /* every activity of an operator's worker that is not waiting or a gap is a leaf */
    uint64_t acts = 0;
    for (uint32_t w = 0; w < t->nworkers; w++)
        for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1]; a++)
            acts += !(t->aflags[a] & LP_ACT_GAP) && t->aop[a] != LP_STR_NONE && t->atype[a] != LP_TYPE_WAITING;
    CHECK_EQ_I(x->nleaves, acts);
    /* monitoring: the exact number of busy (non-io) workers in every 1 ms slice, as a counter */
    int64_t T0 = x->start[0], T1 = x->end[0], sl = 1000000;
    int64_t n = (T1 - T0) / sl + 2;
    double *busy = calloc((size_t)n, sizeof *busy);
    double *want = calloc(t->nworkers, sizeof *want);
    for (uint32_t w = 0; w < t->nworkers; w++)
        for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1]; a++) {
            if ((t->aflags[a] & LP_ACT_GAP) || t->aop[a] == LP_STR_NONE || t->atype[a] == LP_TYPE_WAITING ||
                t->atype[a] == LP_TYPE_IO)
                continue;
            want[w] += (double)(t->aend[a] - t->astart[a]) / 1e9;
            for (int64_t k = (t->astart[a] - T0) / sl; k < n && T0 + k * sl < t->aend[a]; k++) {
                int64_t lo = T0 + k * sl > t->astart[a] ? T0 + k * sl : t->astart[a];
                int64_t hi = T0 + (k + 1) * sl < t->aend[a] ? T0 + (k + 1) * sl : t->aend[a];
                if (hi > lo)
                    busy[k] += (double)(hi - lo) / 1e9;
            }
        }
    sbuf mon = {0};
    mon.f = open_memstream(&mon.p, &mon.n);
    double c = 0;
    for (int64_t k = 0; k < n; k++) {
        fprintf(mon.f, "%lld,gen,proc.cpu,%.17g\n", (long long)(T0 + k * sl), c);
        c += busy[k];
    }
    fclose(mon.f);
    lp_g10_data d;
    CHECK(lp_g10_data_init(&d, &err) == LP_OK);
    CHECK(read_text(&d, 1, mon.p, 1, &ds));
    lp_g10_attr *a = NULL;
    lp_g10_opts o = {LP_G10_EVENTS, 0, 1};
    CHECK(lp_g10_attribute(m, x, &d, &o, &ds, &a, &err) == LP_OK);
    if (a) {
        /* each worker gets exactly its busy time: monitoring as fine as the demand changes */
        double *used = calloc(x->n, sizeof *used);
        lp_g10_rollup(a, 0, used, NULL);
        char name[256];
        int bad = 0;
        for (uint32_t i = 0; i < x->n; i++) {
            if (x->type[i] != lp_g10_model_type(m, "/Operator/Worker"))
                continue;
            lp_g10_exec_name(x, i, name, sizeof name);
            const char *wn = strrchr(name, '[') + 1;
            char wbuf[64];
            snprintf(wbuf, sizeof wbuf, "%.*s", (int)strcspn(wn, "]"), wn);
            uint32_t w = lp_trace_find_worker(t, wbuf);
            if (w == LP_NONE32 || fabs(used[i] - want[w]) > 1e-6 * (1 + want[w])) {
                if (bad++ < 3)
                    fprintf(stderr, "%s: attributed %.9f core-s, busy %.9f s\n", name, used[i],
                            w == LP_NONE32 ? -1.0 : want[w]);
            }
        }
        CHECK_EQ_I(bad, 0);
        free(used);
    }
    lp_g10_attr_free(a);
    free(busy);
    free(want);
    free(mon.p);
    lp_g10_data_release(&d);
    lp_g10_exec_free(x);
    lp_trace_free(t);
    lp_g10_model_free(m);
    lp_diags_release(&ds);
}

int main(void)
{
    test_giraph();
    test_powergraph();
    test_spark();
    test_dataflow();
    return t_done("test_g10_examples");
}
