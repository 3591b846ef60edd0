/* test_profile.c: CrystalPerf's resource vectors and bottleneck
 * (src/analysis/crystalperf/profile.c, bottleneck.c, resource.c).
 *  - the golden perf recordings of the validation workload (tests/data/crystalperf: a
 *    CPU-bound, an fsync-bound and a TCP-bound run recorded here): their critical paths
 *    are >= 85 % cpu, disk and net, decided by measurement (thread state, kernel stacks);
 *  - the Spark 3.0 log's stage-2 task (29.0 s, Executor CPU Time 12.6 s, 2.5 GB read
 *    RACK_LOCAL): 12.6 s cpu and its off-CPU rest on the network, not "processing"
 *    (skipped without ../shared/data);
 *  - samples of threads no worker names and samples outside every activity are counted;
 *  - the kernel rules. */
#include "t.h"
#include "tutil.h"
#include "longpole/analysis/crystalperf/bottleneck.h"

#include <math.h>

#define DATA_DIR LP_SOURCE_DIR "/tests/data/crystalperf/"

static lp_trace *load_file(const char *path)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_trace *t = NULL;
    lp_error err;
    const char *paths[1] = {path};
    if (lp_trace_load(paths, 1, NULL, &ds, &t, &err))
        t = NULL;
    lp_diags_release(&ds);
    return t;
}

static void golden(const char *name, int want)
{
    char tp[1024], sp[1024];
    snprintf(tp, sizeof tp, DATA_DIR "%s.lpt", name);
    snprintf(sp, sizeof sp, DATA_DIR "%s.perf.txt.gz", name);
    lp_trace *t = load_file(tp);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_stacks s;
    lp_stacks_init(&s);
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    CHECK(lp_stacks_load(&s, sp, &ds, &err) == LP_OK);
    lp_cpf_profile p;
    CHECK(lp_cpf_profile_build(t, &s, NULL, NULL, &p, &err) == LP_OK); /* measured evidence only */
    CHECK(p.samples_used > 0);
    CHECK_EQ_I(p.by_how[LP_HOW_CLASSIFIER], 0);
    lp_pag g;
    lp_cpath cp;
    lp_cpf_bottleneck b;
    CHECK(lp_pag_build(t, &g, &err) == LP_OK);
    CHECK(lp_cpath_compute(&g, &cp, &err) == LP_OK);
    CHECK(lp_cpf_bottleneck_compute(&p, &cp, &b, &err) == LP_OK);
    CHECK_EQ_I(b.bottleneck, want);
    CHECK(b.path[want] >= 0.85 * (double)b.path_total);
    CHECK(b.coverage > 0.95);
    double sum = 0;
    for (int r = 0; r < LP_RES_N; r++)
        sum += b.path[r];
    CHECK(fabs(sum - (double)b.path_total) < 1e-6 * (double)b.path_total + 1);
    if (b.bottleneck != want || b.path[want] < 0.85 * (double)b.path_total)
        fprintf(stderr, "%s: bottleneck %d, cpu %.3f disk %.3f net %.3f wait %.3f\n", name, b.bottleneck,
                b.path[0] / b.path_total, b.path[1] / b.path_total, b.path[2] / b.path_total, b.path[3] / b.path_total);
    lp_cpf_bottleneck_release(&b);
    lp_cpath_release(&cp);
    lp_pag_release(&g);
    lp_cpf_profile_release(&p);
    lp_stacks_release(&s);
    lp_diags_release(&ds);
    lp_trace_free(t);
}

static void spark_kat(void)
{
    lp_trace *t = load_file(LP_SOURCE_DIR "/../shared/data/spark/application_1553914137147_0018");
    if (!t) {
        fprintf(stderr, "test_profile: ../shared/data absent: Spark known answer skipped\n");
        return;
    }
    lp_cpf_profile p;
    lp_error err;
    CHECK(lp_cpf_profile_build(t, NULL, NULL, NULL, &p, &err) == LP_OK);
    /* task 4 of stage 2 (Spark 3.0): run 29.084 s minus GC 0.121 s computing, of which
     * its thread's CPU time 12.644117227 s is "processing" and the rest "off-cpu" (reading
     * 2.5 GB RACK_LOCAL input: network) */
    int found = 0;
    for (uint64_t a = 0; a < t->nacts; a++) {
        lp_str task = lp_trace_attr(t, t->aattr[a], "task"), stage = lp_trace_attr(t, t->aattr[a], "stage");
        if (task == LP_STR_NONE || strcmp(lp_trace_str(t, task), "4") || strcmp(lp_trace_str(t, stage), "2"))
            continue;
        int proc = t->atype[a] == LP_TYPE_PROCESSING, off = !strcmp(lp_trace_type_name(t, t->atype[a]), "off-cpu");
        if (!proc && !off)
            continue;
        found |= proc ? 1 : 2;
        double v[LP_RES_N];
        double cov = lp_cpf_act_vector(&p, a, v);
        double len = (double)(t->aend[a] - t->astart[a]);
        if (proc) {
            CHECK(fabs(len - 12.644117227e9) < 1e3);
            CHECK(fabs(v[LP_RES_CPU] - 1) < 1e-9);
        } else {
            CHECK(fabs(len - (28.963e9 - 12.644117227e9)) < 1e3);
            CHECK(fabs(v[LP_RES_NET] - 1) < 1e-9);
        }
        CHECK(v[LP_RES_UNKNOWN] < 1e-9);
        CHECK(cov > 0.999);
        CHECK_EQ_I(p.ev[a], LP_EV_METRICS);
    }
    CHECK_EQ_I(found, 3);
    lp_cpf_profile_release(&p);
    lp_trace_free(t);
}

static lp_status collapsed(lp_stacks *s, const char *text)
{
    lp_error err;
    lp_input *in;
    lp_stacks_init(s);
    if (lp_input_open_mem(&in, text, strlen(text), "c.txt", &err))
        return LP_ERR_NOMEM;
    lp_status st = lp_stacks_read_collapsed(s, in, "c.txt", NULL, &err);
    lp_input_close(in);
    return st;
}

/* Samples outside every activity, of unnamed threads, without symbols. */
static void outside(void)
{
    lp_diags ds;
    lp_trace *t = load_text("W w tid=7\nA w 100 200 processing a\nA w 300 400 processing b\n", &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_stacks s;
    CHECK(collapsed(&s, "120 7:D main;io_schedule_[k] 50\n"  /* inside a: disk */
                        "150 7 ;; 30\n"                     /* no symbol at all: unknown */
                        "190 7:R main 20\n"                 /* half in a, half in the gap */
                        "250 7:R main 20\n"                 /* in the gap between a and b (unknown gap) */
                        "500 7:R main 10\n"                 /* after everything: outside */
                        "120 8:R main 10\n") == LP_OK);     /* thread 8: no worker */
    lp_cpf_profile p;
    lp_error err;
    CHECK(lp_cpf_profile_build(t, &s, NULL, NULL, &p, &err) == LP_OK);
    CHECK_EQ_I(p.samples, 6);
    CHECK_EQ_I(p.samples_no_worker, 1);
    CHECK_EQ_I(p.samples_outside, 1);
    CHECK_EQ_I(p.ns_outside, 10);
    CHECK_EQ_I(p.samples_used, 4);
    CHECK_EQ_I(p.by_how[LP_HOW_NONE], 1);
    uint64_t a = t->wfirst[0]; /* activity a */
    CHECK(fabs(p.ns[a][LP_RES_DISK] - 50) < 1e-9);
    CHECK(fabs(p.ns[a][LP_RES_UNKNOWN] - 30) < 1e-9);
    CHECK(fabs(p.ns[a][LP_RES_CPU] - 10) < 1e-9);
    double v[LP_RES_N];
    CHECK(fabs(lp_cpf_act_vector(&p, a, v) - 0.9) < 1e-9); /* 90 of its 100 ns sampled */
    CHECK(fabs(v[LP_RES_UNKNOWN] - 0.4) < 1e-9);             /* 30 undecided + 10 unsampled */
    lp_cpf_profile_release(&p);
    lp_stacks_release(&s);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

static void rules(void)
{
    CHECK_EQ_I(lp_cpf_kernel_rule("io_schedule"), LP_RES_DISK);
    CHECK_EQ_I(lp_cpf_kernel_rule("submit_bio_wait"), LP_RES_DISK);
    CHECK_EQ_I(lp_cpf_kernel_rule("sk_stream_wait_memory"), LP_RES_NET);
    CHECK_EQ_I(lp_cpf_kernel_rule("tcp_recvmsg"), LP_RES_NET);
    CHECK_EQ_I(lp_cpf_kernel_rule("futex_wait_queue"), LP_RES_WAIT);
    CHECK_EQ_I(lp_cpf_kernel_rule("pipe_read"), LP_RES_WAIT);
    CHECK_EQ_I(lp_cpf_kernel_rule("ep_poll"), LP_RES_WAIT);
    CHECK_EQ_I(lp_cpf_kernel_rule("schedule"), -1);
    /* the leaf-most rule decides: a futex wait under a TCP call is still a wait */
    lp_stacks s;
    CHECK(collapsed(&s, "0 1:S tcp_sendmsg_[k];futex_wait_[k] 10\n0 2:S main;ep_poll_[k];schedule_[k] 10\n") == LP_OK);
    lp_cpf_attr at;
    lp_error err;
    CHECK(lp_cpf_attr_init(&at, &s, NULL, &err) == LP_OK);
    double v[LP_RES_N];
    uint32_t fr;
    CHECK_EQ_I(lp_cpf_sample(&at, 0, v, &fr), LP_HOW_KERNEL);
    CHECK(v[LP_RES_WAIT] == 1);
    CHECK_EQ_I(lp_cpf_sample(&at, 1, v, &fr), LP_HOW_KERNEL);
    CHECK(v[LP_RES_WAIT] == 1);
    lp_cpf_attr_release(&at);
    lp_stacks_release(&s);
}

int main(void)
{
    golden("cpu", LP_RES_CPU);
    golden("disk", LP_RES_DISK);
    golden("net", LP_RES_NET);
    spark_kat();
    outside();
    rules();
    return t_done("test_profile");
}
