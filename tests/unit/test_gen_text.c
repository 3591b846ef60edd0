/* test_gen_text.c: the dataflow generator's direct text output (lp_gen_dataflow_write)
 * is byte for byte what lp_lpt_write writes for the trace lp_gen_dataflow_run builds, for
 * random option sets and any number of threads; write errors and allocation failures
 * end it cleanly. */
#define _GNU_SOURCE
#include "t.h"
#include "tutil.h"
#include "gen/dataflow_int.h"

#include <stdio.h>

static uint64_t rng = 0x5eed;
static uint64_t next(void) { return t_splitmix(&rng); }
static uint32_t below(uint32_t n) { return (uint32_t)(next() % n); }
static double unit(void) { return (double)(next() >> 11) / 9007199254740992.0; }

/* The direct output, NULL on failure (st says why). */
static char *direct(const lp_gen_dataflow *o, unsigned threads, size_t *len, lp_status *st)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    lp_error err;
    *st = lp_gen_dataflow_write(o, f, threads, &err);
    fclose(f);
    if (*st) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The built trace's text. */
static char *built(const lp_gen_dataflow *o)
{
    lp_trace *t = NULL;
    lp_error err;
    if (lp_gen_dataflow_run(o, &t, &err)) {
        fprintf(stderr, "generator failed: %s\n", err.msg);
        return NULL;
    }
    char *s = write_text(t);
    lp_trace_free(t);
    return s;
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
    int compared = 0;
    for (int i = 0; i < 80; i++) {
        lp_gen_dataflow o;
        random_options(&o);
        char *b = built(&o);
        size_t len;
        lp_status st;
        char *d = direct(&o, 1 + (unsigned)(i % 3), &len, &st);
        CHECK(b && d);
        if (b && d) {
            CHECK_EQ_I(len, strlen(b));
            CHECK(strcmp(b, d) == 0);
            compared += strcmp(b, d) == 0;
        }
        free(b);
        free(d);
    }
    CHECK(compared == 80);
}

/* Many blocks (activities and messages of several workers), several thread counts. */
static void test_threads_many_blocks(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.max_records = 400000;
    o.duration_ns = INT64_MAX / 4;
    o.ops[1].parallelism = 2; /* long per-worker runs: several activity blocks each */
    char *b = built(&o);
    CHECK(b != NULL);
    for (unsigned th = 1; th <= 8 && b; th *= 2) {
        size_t len;
        lp_status st;
        char *d = direct(&o, th, &len, &st);
        CHECK(d != NULL);
        CHECK(d && strcmp(b, d) == 0);
        free(d);
    }
    /* halves: S/R pairs */
    free(b);
    o.halves = 1;
    o.max_records = 150000;
    b = built(&o);
    size_t len;
    lp_status st;
    char *d = direct(&o, 2, &len, &st);
    CHECK(b && d && strcmp(b, d) == 0);
    CHECK(d && strstr(d, "\nS ") && strstr(d, "\nR "));
    free(b);
    free(d);
}

/* The message stream's varints hold any values exactly, extremes included. */
static void test_msg_codec(void)
{
    static const int64_t times[] = {0, 1, -1, 127, 128, INT64_MAX, INT64_MIN, 1234567890123LL};
    uint8_t buf[64 * DF_MSG_MAXLEN];
    df_msg in[64];
    int n = 0;
    int64_t r = 0;
    uint64_t id = 0;
    uint8_t *p = buf;
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++, n++) {
            in[n] = (df_msg){times[a], times[b], (uint64_t)times[(a + b) % 8], (uint32_t)times[a],
                             UINT32_MAX - (uint32_t)b, (uint32_t)(a % DF_NKINDS), (uint32_t)(1u << 20) >> b};
            uint8_t *q = df_msg_put(p, &in[n], &r, &id);
            CHECK(q - p <= DF_MSG_MAXLEN);
            p = q;
        }
    const uint8_t *g = buf;
    r = 0;
    id = 0;
    for (int i = 0; i < n; i++) {
        df_msg m;
        g = df_msg_get(g, &m, &r, &id);
        CHECK(m.recv == in[i].recv && m.sent == in[i].sent && m.id == in[i].id && m.from == in[i].from &&
              m.to == in[i].to && m.kind == in[i].kind && m.n == in[i].n);
    }
    CHECK(g == p);
}

static void test_invalid_options_and_errors(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.max_records = 300000;
    o.duration_ns = INT64_MAX / 4;
    lp_error err;
    /* a full disk: LP_ERR_IO, whatever the number of threads */
    for (unsigned th = 1; th <= 2; th++) {
        FILE *f = fopen("/dev/full", "w");
        if (!f) {
            printf("test_gen_text: /dev/full missing, write-error case skipped\n");
            break;
        }
        CHECK_EQ_I(lp_gen_dataflow_write(&o, f, th, &err), LP_ERR_IO);
        fclose(f);
    }
    /* invalid options are refused before anything is written */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    o.nops = 0;
    CHECK_EQ_I(lp_gen_dataflow_write(&o, f, 1, &err), LP_ERR_ARG);
    lp_gen_dataflow_defaults(&o);
    snprintf(o.slow_worker, sizeof o.slow_worker, "flatmap.4");
    CHECK_EQ_I(lp_gen_dataflow_write(&o, f, 1, &err), LP_ERR_ARG);
    CHECK(strstr(err.msg, "flatmap.4") != NULL);
    snprintf(o.slow_worker, sizeof o.slow_worker, "flatmap.03");
    CHECK_EQ_I(lp_gen_dataflow_write(&o, f, 1, &err), LP_ERR_ARG);
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
    for (int cancel = 0; cancel <= 2; cancel++) {
        prog p = {0, 0, cancel, 0, 0, 0};
        o.progress_ctx = &p;
        FILE *f = fopen("/dev/null", "w");
        lp_error err;
        lp_status st = lp_gen_dataflow_write(&o, f, 2, &err);
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
    char *want = built(&o);
    int succeeded = 0, nomem = 0;
    for (long n = 0; n < 5000 && !succeeded; n++) {
        size_t len;
        lp_status st;
        lp_alloc_fail_after(n);
        char *d = direct(&o, 1, &len, &st);
        lp_alloc_fail_after(-1);
        if (d) {
            succeeded = 1;
            CHECK(want && strcmp(want, d) == 0);
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

int main(void)
{
    test_equal_to_built();
    test_threads_many_blocks();
    test_msg_codec();
    test_invalid_options_and_errors();
    test_progress();
    test_out_of_memory();
    return t_done("test_gen_text");
}
