/* test_gen_direct.c: the dataflow generator's direct outputs, text
 * (lp_gen_dataflow_write) and binary (lp_gen_dataflow_write_lptb), are byte for byte
 * what lp_lpt_write and lp_lptb_write write for the trace lp_gen_dataflow_run builds,
 * for random option sets and any number of threads; write errors, cancelling and
 * allocation failures end them cleanly. */
#define _GNU_SOURCE
#include "t.h"
#include "tutil.h"
#include "gen/dataflow_int.h"

#include <stdio.h>

static uint64_t rng = 0x5eed;
static uint64_t next(void) { return t_splitmix(&rng); }
static uint32_t below(uint32_t n) { return (uint32_t)(next() % n); }
static double unit(void) { return (double)(next() >> 11) / 9007199254740992.0; }

/* The two outputs: 0 text, 1 binary. */
typedef lp_status (*direct_fn)(const lp_gen_dataflow *, FILE *, unsigned, lp_error *);
static const direct_fn writers[2] = {lp_gen_dataflow_write, lp_gen_dataflow_write_lptb};
static const char *const kinds[2] = {"text", "binary"};

/* The direct output of kind `bin`, NULL on failure (st says why). */
static char *direct(int bin, const lp_gen_dataflow *o, unsigned threads, size_t *len, lp_status *st)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    lp_error err;
    *st = writers[bin](o, f, threads, &err);
    fclose(f);
    if (*st) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The built trace written as text or binary. */
static char *built(int bin, const lp_gen_dataflow *o, size_t *len)
{
    lp_trace *t = NULL;
    lp_error err;
    if (lp_gen_dataflow_run(o, &t, &err)) {
        fprintf(stderr, "generator failed: %s\n", err.msg);
        return NULL;
    }
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    lp_status st = bin ? lp_lptb_write(t, f, &err) : lp_lpt_write(t, f, &err);
    fclose(f);
    lp_trace_free(t);
    if (st) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int same(const char *a, size_t alen, const char *b, size_t blen)
{
    return a && b && alen == blen && memcmp(a, b, alen) == 0;
}

static void random_options(lp_gen_dataflow *o)
{
    lp_gen_dataflow_defaults(o);
    o->nops = 1 + below(5);
    for (uint32_t k = 0; k < o->nops; k++) {
        snprintf(o->ops[k].name, sizeof o->ops[k].name, "op%u_%c", k, "abc"[below(3)]);
        o->ops[k].parallelism = 1 + below(k == 1 && below(4) == 0 ? 70 : 6);
        o->ops[k].cost_ns = below(3) ? 50 + below(3000) : 0;
        o->ops[k].keyed = k > 0 && below(2);
    }
    o->rate = 1e4 + below(2000000);
    o->batch = 1 + below(below(2) ? 8 : 200);
    o->credits = 1 + below(6);
    o->checkpoint_ns = below(3) ? (int64_t)(1 + below(50)) * 1000000 : 0;
    o->jitter = below(4) ? unit() * 0.6 : 0;
    o->skew = below(2) ? unit() : 0;
    o->halves = below(3) == 0;
    o->record_bytes = below(5000);
    o->net_latency_ns = below(100000);
    o->seed = next();
    if (below(3) == 0) {
        uint32_t k = below(o->nops);
        snprintf(o->slow_worker, sizeof o->slow_worker, "%s.%u", o->ops[k].name, below(o->ops[k].parallelism));
        o->slow_factor = 1 + unit() * 5;
    }
    o->max_records = 2000 + below(60000);
    o->duration_ns = below(4) ? INT64_MAX / 4 : (int64_t)(1 + below(200)) * 1000000;
}

static void test_equal_to_built(void)
{
    int compared[2] = {0, 0};
    for (int i = 0; i < 80; i++) {
        lp_gen_dataflow o;
        random_options(&o);
        for (int bin = 0; bin < 2; bin++) {
            size_t blen = 0, len = 0;
            char *b = built(bin, &o, &blen);
            lp_status st;
            char *d = direct(bin, &o, 1 + (unsigned)(i % 3), &len, &st);
            CHECK(b && d);
            if (b && d) {
                CHECK_EQ_I(len, blen);
                CHECK(same(b, blen, d, len));
                compared[bin] += same(b, blen, d, len);
                if (!same(b, blen, d, len)) {
                    size_t k = 0;
                    while (k < len && k < blen && b[k] == d[k])
                        k++;
                    printf("%s output %d differs from the built trace's at byte %zu (%zu and %zu bytes)\n",
                           kinds[bin], i, k, blen, len);
                }
            }
            free(b);
            free(d);
        }
    }
    CHECK(compared[0] == 80 && compared[1] == 80);
}

/* Tiny traces: workers with few or no activities, messages in flight at the stop. */
static void test_tiny(void)
{
    int compared = 0;
    for (uint64_t n = 0; n < 120; n += 1 + n / 8) {
        lp_gen_dataflow o;
        lp_gen_dataflow_defaults(&o);
        o.max_records = n;
        o.duration_ns = n ? INT64_MAX / 4 : 50000;
        o.checkpoint_ns = n % 2 ? 20000 : 0;
        o.halves = n % 3 == 0;
        o.batch = 1 + (uint32_t)(n % 5);
        for (int bin = 0; bin < 2; bin++) {
            size_t blen = 0, len = 0;
            char *b = built(bin, &o, &blen);
            lp_status st;
            char *d = direct(bin, &o, 2, &len, &st);
            CHECK(same(b, blen, d, len));
            compared += same(b, blen, d, len);
            free(b);
            free(d);
        }
    }
    CHECK(compared > 40);
}

/* Many blocks (activities and messages of several workers), several thread counts. */
static void test_threads_many_blocks(void)
{
    for (int bin = 0; bin < 2; bin++) {
        lp_gen_dataflow o;
        lp_gen_dataflow_defaults(&o);
        o.max_records = 400000;
        o.duration_ns = INT64_MAX / 4;
        o.ops[1].parallelism = 2; /* long per-worker runs: several activity blocks each */
        size_t blen = 0;
        char *b = built(bin, &o, &blen);
        CHECK(b != NULL);
        for (unsigned th = 1; th <= 8 && b; th *= 2) {
            size_t len;
            lp_status st;
            char *d = direct(bin, &o, th, &len, &st);
            CHECK(d != NULL);
            CHECK(same(b, blen, d, len));
            free(d);
        }
        /* halves: S/R pairs */
        free(b);
        o.halves = 1;
        o.max_records = 150000;
        b = built(bin, &o, &blen);
        size_t len;
        lp_status st;
        char *d = direct(bin, &o, 2, &len, &st);
        CHECK(same(b, blen, d, len));
        CHECK(bin || (d && strstr(d, "\nS ") && strstr(d, "\nR ")));
        free(b);
        free(d);
    }
}

/* The binary output loads as the trace the builder makes: same counts, gaps, extent. */
static void test_binary_loads(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.max_records = 100000;
    o.duration_ns = INT64_MAX / 4;
    o.slow_factor = 3;
    snprintf(o.slow_worker, sizeof o.slow_worker, "flatmap.1");
    size_t len;
    lp_status st;
    char *d = direct(1, &o, 2, &len, &st);
    CHECK(d != NULL);
    lp_trace *t = NULL, *b = NULL;
    lp_error err;
    CHECK_EQ_I(lp_gen_dataflow_run(&o, &b, &err), LP_OK);
    lp_input *in = NULL;
    if (d && b && lp_input_open_mem(&in, d, len, "gen.lptb", &err) == LP_OK) {
        lp_diags ds;
        lp_diags_init(&ds, 4);
        CHECK_EQ_I(lp_lptb_read(in, &t, &ds, NULL, &err), LP_OK);
        CHECK_EQ_I(ds.nerrors + ds.nwarnings, 0);
        lp_diags_release(&ds);
        lp_input_close(in);
    }
    if (t && b) {
        CHECK_EQ_I(t->nacts, b->nacts);
        CHECK_EQ_I(t->nmsgs, b->nmsgs);
        CHECK_EQ_I(t->ngaps, b->ngaps);
        CHECK(t->ngaps > 0);
        CHECK(t->tmin == b->tmin && t->tmax == b->tmax);
    }
    lp_trace_free(t);
    lp_trace_free(b);
    free(d);
}

/* The message log holds any values exactly, extremes included, read whole or field by
 * field, from the start or from any mark; dropping it restarts it from the last state. */
static void test_msg_codec(void)
{
    static const int64_t times[] = {0, 1, -1, 127, 128, INT64_MAX, INT64_MIN, 1234567890123LL};
    enum { N = 64 * 600 }; /* several marks */
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    df_log log;
    lp_error err;
    CHECK_EQ_I(df_log_init(&log, &o, &err), LP_OK);
    df_msg *in = malloc(N * sizeof *in);
    for (int n = 0; n < N; n++) {
        int a = n % 8, b = (n / 8) % 8;
        in[n] = (df_msg){times[a], times[b], (uint64_t)times[(a + b + n / 64) % 8], (uint32_t)times[a],
                         UINT32_MAX - (uint32_t)b, (uint32_t)(a % DF_NKINDS), (uint32_t)(1u << 20) >> b};
        CHECK_EQ_I(df_log_msg(&log, &in[n]), 0);
    }
    CHECK_EQ_I(log.nmsgs, N);
    CHECK_EQ_I(log.nmarks, (N + DF_MSG_MARK - 1) / DF_MSG_MARK);
    df_rd rd;
    df_rd_start(&rd, &log);
    int ok = 1;
    for (int i = 0; i < N; i++) {
        df_msg m;
        df_rd_msg(&rd, &m);
        ok &= m.recv == in[i].recv && m.sent == in[i].sent && m.id == in[i].id && m.from == in[i].from &&
              m.to == in[i].to && m.kind == in[i].kind && m.n == in[i].n;
    }
    CHECK(ok);
    for (int f = 0; f < DF_NF; f++)
        CHECK(rd.p[f] == log.ms[f] + log.mlen[f]);
    for (size_t k = 0; k < log.nmarks; k++) { /* from a mark, one field at a time */
        df_rd_mark(&rd, &log, k);
        df_rd r2 = rd;
        for (size_t i = k * DF_MSG_MARK; i < (size_t)N && i < (k + 1) * DF_MSG_MARK; i++) {
            ok &= df_rd_recv(&rd) == in[i].recv && df_rd_id(&rd) == in[i].id;
            ok &= df_rd_field(&rd, DF_F_FROM) == in[i].from && df_rd_field(&rd, DF_F_TO) == in[i].to;
            df_msg m;
            df_rd_msg(&r2, &m);
            ok &= m.sent == in[i].sent && m.kind == in[i].kind && m.n == in[i].n;
        }
    }
    CHECK(ok);
    /* dropped: the next message decodes from the state the last one left */
    df_log_drop(&log);
    CHECK_EQ_I(log.nmsgs, 0);
    df_msg last = {5, 3, 77, 1, 2, DF_CREDIT, 0};
    CHECK_EQ_I(df_log_msg(&log, &last), 0);
    df_rd_start(&rd, &log);
    df_msg m;
    df_rd_msg(&rd, &m);
    CHECK(m.recv == 5 && m.sent == 3 && m.id == 77 && m.from == 1 && m.to == 2 && m.kind == DF_CREDIT);
    free(in);
    df_log_release(&log);
}

static void test_invalid_options_and_errors(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.max_records = 300000;
    o.duration_ns = INT64_MAX / 4;
    lp_error err;
    /* a full disk: LP_ERR_IO, whatever the number of threads */
    for (unsigned th = 1; th <= 4; th++) {
        FILE *f = fopen("/dev/full", "w");
        if (!f) {
            printf("test_gen_direct: /dev/full missing, write-error case skipped\n");
            break;
        }
        CHECK_EQ_I(writers[th > 2](&o, f, th, &err), LP_ERR_IO);
        fclose(f);
    }
    /* invalid options are refused before anything is written */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (int bin = 0; bin < 2; bin++) {
        o.nops = 0;
        CHECK_EQ_I(writers[bin](&o, f, 1, &err), LP_ERR_ARG);
        lp_gen_dataflow_defaults(&o);
        snprintf(o.slow_worker, sizeof o.slow_worker, "flatmap.4");
        CHECK_EQ_I(writers[bin](&o, f, 1, &err), LP_ERR_ARG);
        CHECK(strstr(err.msg, "flatmap.4") != NULL);
        snprintf(o.slow_worker, sizeof o.slow_worker, "flatmap.03");
        CHECK_EQ_I(writers[bin](&o, f, 1, &err), LP_ERR_ARG);
    }
    fclose(f);
    CHECK_EQ_I(len, 0);
    free(buf);
}

/* Progress: "simulating" then "writing", counts that only grow up to their totals; a
 * non-zero return cancels (LP_ERR_ARG) in either phase. */
typedef struct prog {
    int sim, wr, cancel_in; /* calls per phase; cancel at the first call of phase 1 or 2 */
    uint64_t last, total;
    int bad;
} prog;

static int on_progress(void *ctx, const char *what, uint64_t done, uint64_t total)
{
    prog *p = ctx;
    int phase = strcmp(what, "simulating") == 0 ? 1 : strcmp(what, "writing") == 0 ? 2 : 0;
    if (!phase || (phase == 1 && p->wr) || done > total)
        p->bad = 1;
    if (phase == 2 && p->wr && done < p->last)
        p->bad = 1;
    p->last = done;
    p->total = total;
    phase == 1 ? p->sim++ : p->wr++;
    return p->cancel_in == phase;
}

static void test_progress(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.max_records = 1500000;
    o.duration_ns = INT64_MAX / 4;
    o.progress = on_progress;
    for (int run = 0; run < 6; run++) {
        int cancel = run % 3, bin = run / 3;
        prog p = {0, 0, cancel, 0, 0, 0};
        o.progress_ctx = &p;
        FILE *f = fopen("/dev/null", "w");
        lp_error err;
        lp_status st = writers[bin](&o, f, 2, &err);
        fclose(f);
        CHECK(!p.bad);
        if (cancel == 0) {
            CHECK_EQ_I(st, LP_OK);
            CHECK(p.sim > 0 && p.wr > 0);
            CHECK(p.last == p.total); /* the last report is the whole output */
        } else {
            CHECK_EQ_I(st, LP_ERR_ARG);
            CHECK_EQ_I(cancel == 1 ? p.sim : p.wr, 1);
            CHECK(cancel == 2 || p.wr == 0);
        }
    }
}

/* Every allocation failing in turn: a clean LP_ERR_NOMEM, no crash, no leak. */
static void test_out_of_memory(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.max_records = 20000;
    o.duration_ns = INT64_MAX / 4;
    for (int run = 0; run < 4; run++) {
        int bin = run / 2;
        unsigned threads = 1 + (unsigned)(run % 2) * 2;
        size_t wlen = 0;
        char *want = built(bin, &o, &wlen);
        int succeeded = 0, nomem = 0;
        for (long n = 0; n < 5000 && !succeeded; n++) {
            size_t len;
            lp_status st;
            lp_alloc_fail_after(n);
            char *d = direct(bin, &o, threads, &len, &st);
            lp_alloc_fail_after(-1);
            if (d) {
                succeeded = 1;
                CHECK(same(want, wlen, d, len));
            } else {
                nomem += st == LP_ERR_NOMEM;
                CHECK_EQ_I(st, LP_ERR_NOMEM);
            }
            free(d);
        }
        CHECK(succeeded);
        CHECK(nomem > 10);
        free(want);
    }
}

int main(void)
{
    test_equal_to_built();
    test_tiny();
    test_threads_many_blocks();
    test_binary_loads();
    test_msg_codec();
    test_invalid_options_and_errors();
    test_progress();
    test_out_of_memory();
    return t_done("test_gen_direct");
}
