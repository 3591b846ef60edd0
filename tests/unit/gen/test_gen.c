/* test_gen.c: the dataflow generator: deterministic, rule-abiding, and its knobs have
 * the effects the model promises (skew loads one worker, an under-provisioned operator
 * causes backpressure, a slow worker dominates the critical path). */
#include "t.h"
#include "tutil.h"

#include <math.h>
#include <stdlib.h>

static lp_trace *gen(lp_gen_dataflow *o)
{
    lp_trace *t = NULL;
    lp_error err;
    lp_status st = lp_gen_dataflow_run(o, &t, &err);
    if (st)
        fprintf(stderr, "generator failed: %s\n", err.msg);
    return st ? NULL : t;
}

/* Busy time (non-waiting, non-gap... all but waiting) of a worker, as a share of its span. */
static double busy(const lp_trace *t, const char *name)
{
    uint32_t w = lp_trace_find_worker(t, name);
    if (w == LP_NONE32 || t->wfirst[w] == t->wfirst[w + 1])
        return -1;
    int64_t b = 0;
    for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++)
        if (t->atype[i] != LP_TYPE_WAITING)
            b += t->aend[i] - t->astart[i];
    return (double)b / (double)(t->aend[t->wfirst[w + 1] - 1] - t->astart[t->wfirst[w]]);
}

static void test_deterministic_and_clean(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.duration_ns = 100000000;
    lp_trace *a = gen(&o), *b = gen(&o);
    CHECK(a && b);
    if (a && b) {
        char *ta = write_text(a), *tb = write_text(b);
        CHECK(ta && tb && strcmp(ta, tb) == 0);
        /* reading the text back reports nothing */
        lp_diags ds;
        lp_trace *c = load_text(ta, &ds);
        CHECK(c != NULL);
        CHECK_EQ_I(ds.nerrors + ds.nwarnings, 0);
        lp_trace_free(c);
        lp_diags_release(&ds);
        free(ta);
        free(tb);
    }
    lp_trace_free(a);
    lp_trace_free(b);
    o.seed = 2;
    lp_trace *d = gen(&o);
    CHECK(d != NULL);
    lp_trace_free(d);
}

static void test_records_limit(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.duration_ns = INT64_MAX / 4;
    o.max_records = 20000;
    lp_trace *t = gen(&o);
    CHECK(t != NULL);
    if (t) {
        uint64_t rec = t->nacts - t->ngaps + t->nmsgs;
        CHECK(rec >= 20000 && rec < 20100);
    }
    lp_trace_free(t);
    /* sources only, no job manager: nothing bounds a source's read-ahead but the limit
     * (it used to read ahead until memory ran out) */
    lp_error err;
    CHECK(lp_gen_parse_ops(&o, "a:4", &err) == LP_OK);
    o.checkpoint_ns = 0;
    t = gen(&o);
    CHECK(t != NULL);
    if (t) {
        uint64_t rec = t->nacts - t->ngaps + t->nmsgs;
        CHECK(rec >= 20000 && rec < 20100);
    }
    lp_trace_free(t);
}

static void test_skew(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.duration_ns = 200000000;
    o.skew = 0.8;
    lp_trace *t = gen(&o);
    CHECK(t != NULL);
    if (t) {
        double hot = busy(t, "count.0"), cold = busy(t, "count.1");
        CHECK(hot > 3 * cold);
    }
    lp_trace_free(t);
}

/* Records each worker of the last (keyed) operator received: the data messages' bytes. */
static void received(const lp_trace *t, const lp_gen_dataflow *o, uint64_t *cnt, uint32_t p)
{
    const char *last = o->ops[o->nops - 1].name;
    for (uint32_t j = 0; j < p; j++)
        cnt[j] = 0;
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        const char *to = lp_trace_worker_name(t, t->mdst[m]);
        size_t ln = strlen(last);
        if (strncmp(to, last, ln) != 0 || to[ln] != '.' || !t->mattr[m])
            continue;
        uint32_t list = t->mattr[m], np = t->apool[list], j = (uint32_t)atoi(to + ln + 1);
        uint64_t bytes = 0;
        int data = 0;
        for (uint32_t i = 0; i < np; i++) {
            const char *k = lp_strtab_get(&t->strs, t->apool[list + 1 + 2 * i]);
            const char *v = lp_strtab_get(&t->strs, t->apool[list + 2 + 2 * i]);
            if (strcmp(k, "bytes") == 0)
                bytes = strtoull(v, NULL, 10);
            if (strcmp(k, "kind") == 0)
                data = strcmp(v, "data") == 0;
        }
        if (data && j < p)
            cnt[j] += bytes / o->record_bytes;
    }
}

/* Keyed routing sends each record to worker 0 with probability skew + (1 - skew) / p and
 * to each other worker with (1 - skew) / p, whichever way it is drawn (counts per buffer
 * for small jobs, a 16-bit table or exact 32-bit draws for large ones): every share is
 * within 5 standard errors (plus what the end leaves in open buffers) of the model. */
static void test_keyed_shares(void)
{
    static const struct {
        const char *ops;
        double skew;
        uint32_t batch;
    } cases[] = {{"source:4,flatmap:4,count:4:keyed", 0, 64},  {"source:4,flatmap:4,count:4:keyed", 0.3, 64},
                 {"source:2,flatmap:3,count:7:keyed", 0.9, 200}, {"source:2,flatmap:2,count:2:keyed", 0.5, 1},
                 {"source:4,flatmap:4,count:20:keyed", 0.2, 64}, {"source:4,flatmap:4,count:300:keyed", 0.5, 64},
                 {"source:3,count:5:keyed", 0.6, 1000}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        lp_gen_dataflow o;
        lp_gen_dataflow_defaults(&o);
        lp_error err;
        CHECK(lp_gen_parse_ops(&o, cases[c].ops, &err) == LP_OK);
        o.skew = cases[c].skew;
        o.batch = cases[c].batch;
        o.duration_ns = INT64_MAX / 4;
        o.max_records = 400000;
        o.checkpoint_ns = 0;
        o.seed = 7 + c;
        uint32_t p = o.ops[o.nops - 1].parallelism;
        lp_trace *t = gen(&o);
        CHECK(t != NULL);
        if (!t)
            continue;
        uint64_t cnt[300], n = 0;
        received(t, &o, cnt, p);
        for (uint32_t j = 0; j < p; j++)
            n += cnt[j];
        CHECK(n > 10000);
        uint64_t open = (uint64_t)o.ops[o.nops - 2].parallelism * p * o.batch; /* still in buffers at the end */
        for (uint32_t j = 0; j < p && n; j++) {
            double pi = (j == 0 ? o.skew : 0) + (1 - o.skew) / p;
            double share = (double)cnt[j] / (double)n, se = sqrt(pi * (1 - pi) / (double)n);
            double tol = 5 * se + (double)open / (double)n;
            if (fabs(share - pi) > tol)
                fprintf(stderr, "case %zu (%s skew %g): worker %u got %.5f of %llu records, expected %.5f +- %.5f\n", c,
                        cases[c].ops, o.skew, j, share, (unsigned long long)n, pi, tol);
            CHECK(fabs(share - pi) <= tol);
        }
        lp_trace_free(t);
    }
}

static void test_backpressure(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.duration_ns = 200000000;
    lp_error err;
    CHECK(lp_gen_parse_ops(&o, "source:4,flatmap:2,count:4", &err) == LP_OK);
    lp_trace *t = gen(&o);
    CHECK(t != NULL);
    if (t) {
        CHECK(busy(t, "flatmap.0") > 0.9);
        CHECK(busy(t, "source.0") < 0.3); /* sources wait for credits */
    }
    lp_trace_free(t);
}

static void test_slow_worker_on_path(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.duration_ns = 300000000;
    o.rate = 800000;
    strcpy(o.slow_worker, "flatmap.1");
    o.slow_factor = 3;
    lp_trace *t = gen(&o);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_pag g;
    lp_cpath cp;
    lp_error err;
    CHECK(lp_pag_build(t, &g, &err) == LP_OK);
    CHECK(lp_cpath_compute(&g, &cp, &err) == LP_OK);
    uint32_t slow = lp_trace_find_worker(t, "flatmap.1");
    int64_t on = 0;
    for (size_t i = 0; i < cp.n; i++)
        if (cp.e[i].kind == LP_CP_ACTIVITY && cp.e[i].worker == slow)
            on += cp.e[i].end - cp.e[i].start;
    CHECK(on > cp.total / 2);
    lp_cpath_release(&cp);
    lp_pag_release(&g);
    lp_trace_free(t);
}

static void test_bad_ops(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    lp_error err;
    CHECK(lp_gen_parse_ops(&o, "", &err) != LP_OK);
    CHECK(lp_gen_parse_ops(&o, "a:0", &err) != LP_OK);
    CHECK(lp_gen_parse_ops(&o, "a:2:x", &err) != LP_OK);
    CHECK(lp_gen_parse_ops(&o, "a:2,b:3:500:keyed", &err) == LP_OK);
    CHECK_EQ_I(o.nops, 2);
}

int main(void)
{
    test_deterministic_and_clean();
    test_records_limit();
    test_skew();
    test_keyed_shares();
    test_backpressure();
    test_slow_worker_on_path();
    test_bad_ops();
    return t_done("test_gen");
}
