/* test_stream.c: the streaming engine (stream.h) against its naive twin, `summary`'s
 * offline analysis of the same records (streamtest.h):
 *  - random generated jobs written in stream order (whole messages or S/R halves), cut
 *    into random chunks over several connections that interleave arbitrarily, tumbling
 *    and sliding windows, 1 to 3 analysis threads: every window equal to the offline one;
 *  - out-of-order and late records, malformed lines, a dropped connection, --max-delay,
 *    a silent worker, the memory bound on a long stream, out-of-memory at every point;
 *  - SnailTrail input: the enum mapping on hand-made bytes, nested activities, the
 *    writer/importer round trip, the stream on the same bytes, bad input with offsets. */
#include "streamtest.h"
#include "longpole/import/snailtrail.h"
#include "longpole/codec/io.h"
#include "longpole/import/import.h"
#include "longpole/load/load.h"
#include "longpole/base/alloc.h"
#include "tutil.h"

/* ---- feeding text over connections ------------------------------------------------------ */

typedef struct feedq {
    char *buf;
    size_t n, cap, pos;
} feedq;

static void fq_add(feedq *q, const char *p, size_t n)
{
    if (q->n + n > q->cap) {
        q->cap = (q->n + n) * 2;
        q->buf = realloc(q->buf, q->cap);
    }
    memcpy(q->buf + q->n, p, n);
    q->n += n;
}

/* Route the lines of `text` to connections (W lines and the header to 0, records by
 * worker over 1..k), then feed them in random chunks, interleaved. Returns 0 or the
 * first failure's status. */
static lp_status feed_text(lp_stream *s, const char *text, unsigned k, uint64_t seed, int keep_decl_open,
                           lp_error *err)
{
    feedq q[9];
    uint32_t id[9];
    memset(q, 0, sizeof q);
    lp_status st;
    for (unsigned i = 0; i <= k; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "c%u", i);
        if ((st = lp_stream_open(s, nm, LP_STREAM_LPT, &id[i], err)))
            return st;
    }
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
        unsigned c = 0;
        if (p[0] != 'W' && p[0] != 'l' && p[0] != '#') {
            const char *w;
            size_t wl = line_worker(p, n, &w);
            uint64_t h = 1469598103934665603ULL;
            for (size_t i = 0; i < wl; i++)
                h = (h ^ (unsigned char)w[i]) * 1099511628211ULL;
            c = 1 + (unsigned)(h % k);
        }
        fq_add(&q[c], p, n);
        p += n;
    }
    uint64_t r = seed;
    /* the declarations first, whole */
    if ((st = lp_stream_feed(s, id[0], q[0].buf ? q[0].buf : "", q[0].n, err)))
        goto out;
    for (;;) {
        unsigned left = 0;
        for (unsigned i = 1; i <= k; i++)
            left += q[i].pos < q[i].n;
        if (!left)
            break;
        unsigned c = 1 + (unsigned)(tlcg(&r) % k);
        if (q[c].pos >= q[c].n)
            continue;
        size_t n = 1 + tlcg(&r) % (tlcg(&r) % 4 == 0 ? 4000 : 200);
        if (n > q[c].n - q[c].pos)
            n = q[c].n - q[c].pos;
        if ((st = lp_stream_feed(s, id[c], q[c].buf + q[c].pos, n, err)))
            goto out;
        q[c].pos += n;
        if (q[c].pos == q[c].n && (st = lp_stream_close(s, id[c], 0, err)))
            goto out;
    }
    if (!keep_decl_open)
        st = lp_stream_close(s, id[0], 0, err);
out:
    for (unsigned i = 0; i <= k; i++)
        free(q[i].buf);
    return st;
}

static lp_stream *new_stream(int64_t size, int64_t step, unsigned threads, lp_diags *ds, wsnaps *out)
{
    lp_stream_opts o;
    lp_stream_opts_init(&o);
    o.size = size;
    o.step = step;
    o.threads = threads;
    lp_stream *s = NULL;
    lp_error err;
    if (lp_stream_new(&s, &o, ds, collect, NULL, out, &err)) {
        fprintf(stderr, "lp_stream_new: %s\n", err.msg);
        return NULL;
    }
    return s;
}

static void test_differential(void)
{
    static const int64_t sizes[] = {3000000, 10000000, 25000000, 70000000};
    uint64_t r = 42, nseeds = getenv("LP_TEST_STREAM_SEEDS") ? strtoull(getenv("LP_TEST_STREAM_SEEDS"), NULL, 10) : 14;
    for (uint64_t seed = 1; seed <= nseeds; seed++) {
        int halves = (int)(seed % 2);
        int64_t size = sizes[tlcg(&r) % 4];
        int64_t step = tlcg(&r) % 3 == 0 ? size / 3 + 1 : size;
        unsigned k = 1 + (unsigned)(tlcg(&r) % 4);
        unsigned threads = 1 + (unsigned)(tlcg(&r) % 3);
        char *text = stream_text(seed, 60000000 + (int64_t)(seed * 7000000), halves,
                                 seed % 3 ? "source:2,flatmap:3,count:2" : "source:1,flatmap:2:3000,count:3",
                                 seed % 4 ? 0.3 : 0);
        CHECK(text != NULL);
        if (!text)
            continue;
        lp_trace *t = text_trace(text);
        CHECK(t != NULL);
        wsnaps off = {0}, on = {0};
        lp_winopts wo = {(1u << LP_SUM_NKINDS) - 1, 1, 0, 0};
        CHECK(offline_windows(t, 0, size, step, &wo, &off) == 0);
        lp_diags ds;
        lp_diags_init(&ds, 4);
        lp_stream *s = new_stream(size, step, threads, &ds, &on);
        lp_error err;
        CHECK(s && feed_text(s, text, k, seed, 0, &err) == LP_OK);
        CHECK(lp_stream_finish(s, &err) == LP_OK);
        char what[96];
        snprintf(what, sizeof what, "seed %llu halves %d size %lld step %lld conns %u threads %u",
                 (unsigned long long)seed, halves, (long long)size, (long long)step, k, threads);
        CHECK(compare_all(&off, &on, what) == 0);
        const lp_stream_stats *st = lp_stream_get_stats(s);
        CHECK_EQ_I(st->malformed, 0);
        CHECK_EQ_I(st->late, 0);
        CHECK_EQ_I(st->unmatched_sends + st->unmatched_recvs, 0);
        CHECK_EQ_I(ds.nerrors, 0);
        CHECK_EQ_I(st->windows, off.n);
        /* events: SnailTrail's unit, 2 per activity and message (1 per half) */
        CHECK_EQ_I(st->events, 2 * (t->nacts - t->ngaps) + 2 * t->nmsgs);
        lp_stream_free(s);
        lp_diags_release(&ds);
        wsnaps_free(&off);
        wsnaps_free(&on);
        lp_trace_free(t);
        free(text);
    }
}

/* Feed one connection's text whole, then finish; windows into out. */
static const lp_stream_stats *run_text(lp_stream *s, const char *text, lp_error *err)
{
    uint32_t id;
    if (lp_stream_open(s, "t", LP_STREAM_LPT, &id, err) || lp_stream_feed(s, id, text, strlen(text), err) ||
        lp_stream_finish(s, err))
        return NULL;
    return lp_stream_get_stats(s);
}

static char *grid_text(int64_t to, int64_t step, const char *const *workers, size_t nw)
{
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    for (size_t i = 0; i < nw; i++)
        n += (size_t)snprintf(b + n, cap - n, "W %s\n", workers[i]);
    for (int64_t t = 0; t < to; t += step)
        for (size_t i = 0; i < nw; i++) {
            n += (size_t)snprintf(b + n, cap - n, "A %s %lld %lld %s op%zu\n", workers[i], (long long)t,
                                  (long long)(t + step - 1 - (int64_t)i), i % 2 ? "io" : "processing", i);
            if (i + 1 < nw && t % (3 * step) == 0)
                n += (size_t)snprintf(b + n, cap - n, "M %s %lld %s %lld\n", workers[i], (long long)(t + 1),
                                      workers[i + 1], (long long)(t + step / 2));
        }
    return b;
}

typedef struct late_rec {
    uint64_t index, total, calls;
} late_rec;

static void on_late(void *ctx, uint64_t index, int64_t ts, int64_t te, uint64_t total)
{
    late_rec *l = ctx;
    (void)ts;
    (void)te;
    l->index = index;
    l->total = total;
    l->calls++;
}

typedef struct both {
    wsnaps w;
    late_rec late;
    size_t before_finish;
} both;

static int collect_both(void *ctx, const lp_winres *r, const lp_stream_winfo *wi)
{
    both *b = ctx;
    wsnaps_push(&b->w, r, wi);
    return 0;
}

static void late_cb(void *ctx, uint64_t index, int64_t ts, int64_t te, uint64_t total)
{
    both *b = ctx;
    on_late(&b->late, index, ts, te, total);
}

static void test_late_and_out_of_order(void)
{
    /* worker a runs ahead; b lags and sends two records swapped inside an open window;
     * then, after the windows closed, a record of a for window 1 arrives */
    const char *text = "W a\nW b\n"
                       "A a 0 9 processing\nA a 10 19 processing\nA a 20 29 processing\nA a 30 39 processing\n"
                       "A a 40 49 processing\nA a 50 59 processing\nA a 60 69 processing\nA a 70 79 processing\n"
                       "A b 0 9 io\nA b 10 19 io\nA b 20 29 io\nA b 30 39 io\nA b 50 59 io\nA b 40 49 io\n"
                       "A b 60 69 io\nA b 70 79 io\nA b 80 89 io\nA a 80 89 processing\n";
    lp_diags ds;
    lp_diags_init(&ds, 8);
    both b;
    memset(&b, 0, sizeof b);
    lp_stream_opts o;
    lp_stream_opts_init(&o);
    o.size = 10;
    lp_stream *s = NULL;
    lp_error err;
    CHECK(lp_stream_new(&s, &o, &ds, collect_both, late_cb, &b, &err) == LP_OK);
    uint32_t id;
    CHECK(lp_stream_open(s, "t", LP_STREAM_LPT, &id, &err) == LP_OK);
    CHECK(lp_stream_feed(s, id, text, strlen(text), &err) == LP_OK);
    size_t emitted = b.w.n;
    CHECK(emitted >= 6); /* windows up to [50, 60] at least closed */
    const char *late = "A a 15 16 waiting\n"; /* window 1 [10, 20] is gone */
    CHECK(lp_stream_feed(s, id, late, strlen(late), &err) == LP_OK);
    CHECK(lp_stream_finish(s, &err) == LP_OK);
    const lp_stream_stats *st = lp_stream_get_stats(s);
    CHECK_EQ_I(st->out_of_order, 2); /* b's 40-49 and a's late 15-16 */
    CHECK_EQ_I(st->late, 1);
    CHECK_EQ_I(b.late.calls, 1);
    CHECK_EQ_I(b.late.index, 1);
    CHECK_EQ_I(b.late.total, 1);
    /* the windows are the offline ones without the late record */
    lp_trace *t = text_trace(text);
    wsnaps off = {0};
    lp_winopts wo = {(1u << LP_SUM_NKINDS) - 1, 1, 0, 0};
    CHECK(t && offline_windows(t, 0, 10, 10, &wo, &off) == 0);
    CHECK(compare_all(&off, &b.w, "late/out of order") == 0);
    wsnaps_free(&off);
    lp_trace_free(t);
    wsnaps_free(&b.w);
    lp_stream_free(s);
    lp_diags_release(&ds);
}

static void test_malformed(void)
{
    const char *good = "W a\nW b\nA a 0 10 processing x\nA b 0 12 io\nM a 10 b 12 id=5 bytes=12\n"
                       "A a 10 30 processing x k=v\nA b 12 40 processing\nS a 30 b q1\nR b 41 a q1\n"
                       "A a 30 50 io\nA b 41 60 io\n";
    const char *bad = "W a\nW b\nA a 0 10 processing x\r\n"
                      "Q a 1 2\n"                          /* unknown record */
                      "A b 0 12 io\n"
                      "A a 1x 2 processing\n"              /* bad time */
                      "M a 10 b 12 id=5 bytes=12\n"
                      "A b 20\n"                           /* too few fields */
                      "A a 10 30 processing x k=v\n"
                      "A b 12 40 processing\n"
                      "M a 10 b 12 bytes=-3\n"             /* bad bytes */
                      "A a 9 5 io\n"                       /* end before start */
                      "longpole-trace 2\n"                 /* header after records: unknown record */
                      "A \xff\xfe 1 2 io\n"                /* not UTF-8 */
                      "S a 30 b q1\n"
                      "A a 31 32 io =v\n"                  /* bad key=value */
                      "R b 41 a q1\n"
                      "A a 30 50 io\n"
                      "A b 41 60 io\n"
                      "A b 60 61 io xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"; /* too long */
    lp_diags ds;
    lp_diags_init(&ds, 32);
    wsnaps on = {0};
    lp_stream_opts o;
    lp_stream_opts_init(&o);
    o.size = 20;
    o.max_line = 64;
    lp_stream *s = NULL;
    lp_error err;
    CHECK(lp_stream_new(&s, &o, &ds, collect, NULL, &on, &err) == LP_OK);
    const lp_stream_stats *st = run_text(s, bad, &err);
    CHECK(st != NULL);
    if (st) {
        CHECK_EQ_I(st->malformed, 9);
        CHECK_EQ_I(st->matched, 1);
    }
    CHECK(has_diag(&ds, LP_RULE_SYNTAX, 4));
    CHECK(has_diag(&ds, LP_RULE_FIELD, 6));
    CHECK(has_diag(&ds, LP_RULE_FIELD, 8));
    CHECK(has_diag(&ds, LP_RULE_FIELD, 11));
    CHECK(has_diag(&ds, LP_RULE_END_BEFORE_START, 12));
    CHECK(has_diag(&ds, LP_RULE_SYNTAX, 13));
    CHECK(has_diag(&ds, LP_RULE_ENCODING, 14));
    CHECK(has_diag(&ds, LP_RULE_FIELD, 16));
    CHECK(has_diag(&ds, LP_RULE_SYNTAX, 20));
    /* what remains is the good records' analysis */
    lp_trace *t = text_trace(good);
    wsnaps off = {0};
    lp_winopts wo = {(1u << LP_SUM_NKINDS) - 1, 1, 0, 0};
    CHECK(t && offline_windows(t, 0, 20, 20, &wo, &off) == 0);
    CHECK(compare_all(&off, &on, "malformed") == 0);
    wsnaps_free(&off);
    wsnaps_free(&on);
    lp_trace_free(t);
    lp_stream_free(s);
    lp_diags_release(&ds);
}

static void test_dropped_connection(void)
{
    const char *ta = "W a\nW b\nA a 0 10 processing\nA a 10 20 processing\nA a 20 30 processing\nA a 30 40 processing\n";
    const char *tb = "A b 0 15 io\nA b 15 30 io\nA b 30 4";
    const char *ta2 = "A a 40 50 processing\nA a 50 60 processing\nA a 60 70 processing\n";
    lp_diags ds;
    lp_diags_init(&ds, 8);
    both b;
    memset(&b, 0, sizeof b);
    lp_stream_opts o;
    lp_stream_opts_init(&o);
    o.size = 10;
    lp_stream *s = NULL;
    lp_error err;
    CHECK(lp_stream_new(&s, &o, &ds, collect_both, NULL, &b, &err) == LP_OK);
    uint32_t ca, cb;
    CHECK(lp_stream_open(s, "a", LP_STREAM_LPT, &ca, &err) == LP_OK);
    CHECK(lp_stream_open(s, "b", LP_STREAM_LPT, &cb, &err) == LP_OK);
    CHECK(lp_stream_feed(s, ca, ta, strlen(ta), &err) == LP_OK);
    CHECK(lp_stream_feed(s, cb, tb, strlen(tb), &err) == LP_OK);
    size_t before = b.w.n;
    CHECK(lp_stream_close(s, cb, 1, &err) == LP_OK);
    CHECK(b.w.n > before); /* b's stream ended: a alone moves the windows on */
    CHECK(lp_stream_feed(s, ca, ta2, strlen(ta2), &err) == LP_OK);
    size_t mid = b.w.n;
    CHECK(mid >= 4);
    CHECK(lp_stream_finish(s, &err) == LP_OK);
    const lp_stream_stats *st = lp_stream_get_stats(s);
    CHECK_EQ_I(st->dropped, 1);
    CHECK_EQ_I(st->disconnects, 1);
    CHECK_EQ_I(st->truncated, 1);
    CHECK_EQ_I(st->malformed, 1); /* "A b 30 4" */
    CHECK_EQ_I(st->windows, 7);
    lp_trace *t = text_trace("W a\nW b\nA a 0 10 processing\nA b 0 15 io\nA a 10 20 processing\nA b 15 30 io\n"
                             "A a 20 30 processing\nA a 30 40 processing\nA a 40 50 processing\n"
                             "A a 50 60 processing\nA a 60 70 processing\n");
    wsnaps off = {0};
    lp_winopts wo = {(1u << LP_SUM_NKINDS) - 1, 1, 0, 0};
    CHECK(t && offline_windows(t, 0, 10, 10, &wo, &off) == 0);
    CHECK(compare_all(&off, &b.w, "dropped connection") == 0);
    wsnaps_free(&off);
    lp_trace_free(t);
    wsnaps_free(&b.w);
    lp_stream_free(s);
    lp_diags_release(&ds);
}


static void test_flow(void)
{
    /* a runs 5 windows ahead of b: a's connection may wait, b's may not */
    const char *ta = "W a\nW b\nA a 0 10 io\nA a 10 20 io\nA a 20 30 io\nA a 30 40 io\nA a 40 50 io\nA a 50 60 io\n";
    const char *tb = "A b 0 10 io\nA b 10 20 io\nA b 20 30 io\nA b 30 40 io\n";
    lp_diags ds;
    lp_diags_init(&ds, 4);
    wsnaps on = {0};
    lp_stream *s = new_stream(10, 0, 1, &ds, &on);
    uint32_t id[2];
    uint8_t ahead[2];
    lp_error err;
    CHECK(s && lp_stream_open(s, "a", LP_STREAM_LPT, &id[0], &err) == LP_OK);
    CHECK(s && lp_stream_open(s, "b", LP_STREAM_LPT, &id[1], &err) == LP_OK);
    CHECK(s && lp_stream_feed(s, id[0], ta, strlen(ta), &err) == LP_OK);
    CHECK(s && lp_stream_feed(s, id[1], tb, strlen(tb), &err) == LP_OK);
    CHECK_EQ_I(on.n, 1); /* [0, 10] closed: b is past 20, its first event after 10 */
    CHECK_EQ_I(lp_stream_flow(s, id, 2, ahead), 1);
    CHECK(ahead[0] == 1 && ahead[1] == 0);
    const char *tb2 = "A b 40 50 io\nA b 50 60 io\n";
    CHECK(s && lp_stream_feed(s, id[1], tb2, strlen(tb2), &err) == LP_OK);
    CHECK_EQ_I(lp_stream_flow(s, id, 2, ahead), 0); /* caught up: both read */
    CHECK(ahead[0] == 0 && ahead[1] == 0);
    CHECK(s && lp_stream_finish(s, &err) == LP_OK);
    lp_stream_free(s);
    lp_diags_release(&ds);
    wsnaps_free(&on);
}

static void test_max_delay(void)
{
    const char *ws[] = {"a"};
    char *text = grid_text(100, 10, ws, 1);
    const char *decl = "W z\n"; /* z never logs anything */
    for (int with = 0; with < 2; with++) {
        lp_diags ds;
        lp_diags_init(&ds, 4);
        both b;
        memset(&b, 0, sizeof b);
        lp_stream_opts o;
        lp_stream_opts_init(&o);
        o.size = 10;
        o.max_delay = with ? 15 : -1;
        lp_stream *s = NULL;
        lp_error err;
        CHECK(lp_stream_new(&s, &o, &ds, collect_both, late_cb, &b, &err) == LP_OK);
        uint32_t cz, ca;
        CHECK(lp_stream_open(s, "z", LP_STREAM_LPT, &cz, &err) == LP_OK);
        CHECK(lp_stream_open(s, "a", LP_STREAM_LPT, &ca, &err) == LP_OK);
        CHECK(lp_stream_feed(s, cz, decl, strlen(decl), &err) == LP_OK);
        CHECK(lp_stream_feed(s, ca, text, strlen(text), &err) == LP_OK);
        /* a's last record starts at 90: windows with te + 15 < 90 (te <= 70) closed */
        CHECK_EQ_I(b.w.n, with ? 7 : 0);
        for (size_t i = 0; i < b.w.n; i++)
            CHECK(b.w.v[i].wi.closed_by == LP_CLOSE_DELAY);
        if (with) {
            const char *late = "A z 12 13 io\n";
            CHECK(lp_stream_feed(s, cz, late, strlen(late), &err) == LP_OK);
            CHECK_EQ_I(lp_stream_get_stats(s)->late, 1);
            CHECK_EQ_I(b.late.index, 1);
        }
        CHECK(lp_stream_finish(s, &err) == LP_OK);
        CHECK_EQ_I(b.w.n, 10);
        CHECK(b.w.v[9].wi.closed_by == LP_CLOSE_END);
        wsnaps_free(&b.w);
        lp_stream_free(s);
        lp_diags_release(&ds);
    }
    free(text);
}

static void test_memory_bound(void)
{
    /* checkpoints every 10 ms: the job manager's stream moves as fast as the windows */
    char *text = stream_text(7, 1500000000, 1, "source:2,flatmap:2,count:2", -1);
    CHECK(text != NULL);
    if (!text)
        return;
    lp_trace *t = text_trace(text);
    const int64_t size = 20000000;
    /* the naive count: records touching each window */
    uint64_t most = 0;
    for (int64_t ts = 0; ts < t->tmax; ts += size) {
        uint64_t n = 0;
        for (uint64_t i = 0; i < t->nacts; i++)
            n += !(t->aflags[i] & LP_ACT_GAP) && t->aend[i] >= ts && t->astart[i] <= ts + size;
        for (uint64_t m = 0; m < t->nmsgs; m++)
            n += t->mrecv[m] >= ts && t->msend[m] <= ts + size;
        most = n > most ? n : most;
    }
    lp_diags ds;
    lp_diags_init(&ds, 4);
    wsnaps on = {0};
    lp_stream *s = new_stream(size, 0, 2, &ds, &on);
    lp_error err;
    const lp_stream_stats *st = s ? run_text(s, text, &err) : NULL;
    CHECK(st != NULL);
    if (st) {
        CHECK(st->windows >= 70);
        CHECK(st->max_retained <= 3 * most + 4 * t->nworkers);
        CHECK(st->max_retained < (t->nacts + t->nmsgs) / 10);
        CHECK(st->retained <= 2 * (uint64_t)t->nworkers + most);
        fprintf(stderr, "memory bound: %llu windows, at most %llu records held (busiest window %llu, trace %llu)\n",
                (unsigned long long)st->windows, (unsigned long long)st->max_retained, (unsigned long long)most,
                (unsigned long long)(t->nacts + t->nmsgs));
    }
    lp_stream_free(s);
    lp_diags_release(&ds);
    wsnaps_free(&on);
    lp_trace_free(t);
    free(text);
}

static void test_out_of_memory(void)
{
    const char *ws[] = {"a", "b", "c"};
    char *text = grid_text(60, 10, ws, 3);
    int ok = 0;
    for (long n = 0; n < 5000 && !ok; n += 1) {
        lp_diags ds;
        lp_diags_init(&ds, 2);
        wsnaps on = {0};
        lp_stream_opts o;
        lp_stream_opts_init(&o);
        o.size = 10;
        lp_stream *s = NULL;
        lp_error err;
        lp_alloc_fail_after(n);
        lp_status st = lp_stream_new(&s, &o, &ds, collect, NULL, &on, &err);
        if (!st) {
            uint32_t id;
            st = lp_stream_open(s, "t", LP_STREAM_LPT, &id, &err);
            if (!st)
                st = lp_stream_feed(s, id, text, strlen(text), &err);
            if (!st)
                st = lp_stream_finish(s, &err);
        }
        lp_alloc_fail_after(-1);
        CHECK(st == LP_OK || st == LP_ERR_NOMEM);
        ok = st == LP_OK;
        if (ok)
            CHECK_EQ_I(on.n, 6);
        lp_stream_free(s);
        lp_diags_release(&ds);
        wsnaps_free(&on);
    }
    CHECK(ok);
    free(text);
}


/* ---- the direct trace construction against lp_builder (its naive twin) ------------------- */

typedef struct tsnaps {
    char **dump;             /* each window's trace, every column printed */
    size_t n, cap;
    uint64_t build_errors;   /* records dropped by the construction (overlaps) */
} tsnaps;

static char *dump_trace(const lp_trace *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fprintf(f, "w%u a%llu m%llu g%llu k%llu [%lld %lld]\n", t->nworkers, (unsigned long long)t->nacts,
            (unsigned long long)t->nmsgs, (unsigned long long)t->ngaps, (unsigned long long)t->nskew,
            (long long)t->tmin, (long long)t->tmax);
    for (uint32_t w = 0; w < t->nworkers; w++) {
        fprintf(f, "W %s %llu\n", lp_trace_worker_name(t, w), (unsigned long long)t->wfirst[w]);
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++)
            fprintf(f, " %lld %lld %s %s %u\n", (long long)t->astart[i], (long long)t->aend[i],
                    lp_trace_type_name(t, t->atype[i]), t->aop[i] == LP_STR_NONE ? "-" : lp_trace_str(t, t->aop[i]),
                    t->aflags[i]);
    }
    for (uint64_t m = 0; m < t->nmsgs; m++)
        fprintf(f, "M %u %lld %u %lld %u %u\n", t->msrc[m], (long long)t->msend[m], t->mdst[m], (long long)t->mrecv[m],
                t->mflags[m], t->mattr[m]);
    fclose(f);
    return buf;
}

static int collect_trace(void *ctx, const lp_winres *r, const lp_stream_winfo *wi)
{
    tsnaps *a = ctx;
    a->build_errors += wi->build_errors;
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->dump = realloc(a->dump, a->cap * sizeof *a->dump);
    }
    a->dump[a->n++] = dump_trace(r->t);
    return 0;
}

static void test_build_twin(void)
{
    /* out-of-order and overlapping activities, zero-length ones, skew, halves in flight */
    const char *extra = "A source.0 1000 900000 processing x\nA count.1 5 5 io\nA count.1 5 7 io\n"
                        "M flatmap.0 3000000 count.0 2000000\nS count.0 4000000 flatmap.1 zz\n";
    uint64_t drops = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        char *text = stream_text(seed, 40000000, (int)(seed % 2), "source:2,flatmap:2,count:2", 0.2);
        CHECK(text != NULL);
        if (!text)
            continue;
        /* the extra records right after the declarations, so they reach open windows */
        size_t n = strlen(text), m = strlen(extra);
        char *at = text;
        while (at[0] == 'W' || at[0] == 'l')
            at = strchr(at, '\n') + 1;
        size_t pre = (size_t)(at - text);
        char *t2 = malloc(n + m + 1);
        memcpy(t2, text, pre);
        memcpy(t2 + pre, extra, m);
        memcpy(t2 + pre + m, text + pre, n - pre + 1);
        free(text);
        text = t2;
        tsnaps a = {0}, b = {0};
        for (int naive = 0; naive < 2; naive++) {
            lp_diags ds;
            lp_diags_init(&ds, 0);
            lp_stream_opts o;
            lp_stream_opts_init(&o);
            o.size = 1000000 + (int64_t)seed * 700000;
            o.step = seed % 3 ? 0 : o.size / 2;
            o.naive_build = naive;
            lp_stream *s = NULL;
            lp_error err;
            CHECK(lp_stream_new(&s, &o, &ds, collect_trace, NULL, naive ? &b : &a, &err) == LP_OK);
            CHECK(s && feed_text(s, text, 1 + (unsigned)(seed % 3), seed, 0, &err) == LP_OK);
            CHECK(s && lp_stream_finish(s, &err) == LP_OK);
            lp_stream_free(s);
            lp_diags_release(&ds);
        }
        drops += a.build_errors;
        CHECK_EQ_I(a.build_errors, b.build_errors);
        CHECK_EQ_I(a.n, b.n);
        for (size_t i = 0; i < a.n && i < b.n; i++)
            if (strcmp(a.dump[i], b.dump[i]) != 0) {
                fprintf(stderr, "seed %llu window %zu: the direct trace differs from lp_builder's\n",
                        (unsigned long long)seed, i);
                CHECK(0);
                break;
            }
        for (size_t i = 0; i < a.n; i++)
            free(a.dump[i]);
        for (size_t i = 0; i < b.n; i++)
            free(b.dump[i]);
        free(a.dump);
        free(b.dump);
        free(text);
    }
    CHECK(drops > 0); /* the overlapping activity was dropped: that path ran */
}

/* ---- SnailTrail ------------------------------------------------------------------------------ */

static lp_trace *import_st(const unsigned char *p, size_t n, lp_diags *ds)
{
    lp_diags_init(ds, 32);
    lp_error err;
    lp_builder *b;
    if (lp_builder_new(&b, ds, NULL, &err))
        return NULL;
    lp_input *in;
    if (lp_input_open_mem(&in, p, n, "st.msgpack", &err)) {
        lp_builder_free(b);
        return NULL;
    }
    const lp_importer *imp = lp_importer_find("snailtrail");
    lp_status st = imp ? imp->read(b, in, NULL, &err) : LP_ERR_ARG;
    lp_input_close(in);
    lp_trace *t = NULL;
    if (st || lp_builder_finish(b, &t, &err)) {
        if (st)
            lp_builder_free(b);
        return NULL;
    }
    return t;
}

static uint32_t wid(const lp_trace *t, const char *name) { return lp_trace_find_worker(t, name); }

static void test_st_enums(void)
{
    /* the enum names and values of logformat (lib.rs, ActivityType.java, EventType.java) */
    static const char *const acts[14] = {NULL, "Input", "Buffer", "Scheduling", "Processing", "BarrierProcessing",
                                         "Serialization", "Deserialization", "FaultTolerance", "ControlMessage",
                                         "DataMessage", "Unknown", "Waiting", "BusyWaiting"};
    static const char *const types[14] = {NULL, "io", "buffer", "scheduling", "processing", "barrier",
                                          "serialization", "deserialization", "fault_tolerance", "control_message",
                                          "data_message", "unknown", "waiting", "busy_waiting"};
    for (unsigned a = 1; a <= 13; a++) {
        CHECK_STR(lp_st_activity_name(a), acts[a]);
        CHECK_STR(lp_st_type_name(a), types[a]);
        CHECK_EQ_I(lp_st_activity_of(types[a]), a);
    }
    CHECK(lp_st_type_name(0) == NULL && lp_st_type_name(14) == NULL);
    CHECK_STR(lp_st_event_name(1), "Start");
    CHECK_STR(lp_st_event_name(2), "End");
    CHECK_STR(lp_st_event_name(3), "Sent");
    CHECK_STR(lp_st_event_name(4), "Received");
    CHECK_STR(lp_st_event_name(5), "Bogus");
    CHECK_EQ_I(LP_ST_PROCESSING, 4);
    CHECK_EQ_I(LP_ST_DATA_MESSAGE, 10);
    CHECK_EQ_I(LP_ST_RECEIVED, 4);

    /* hand-encoded records: timestamp, local, activity, event, correlator, remote, operator */
    static const unsigned char rec[] = {
        /* worker 2 processing [1000, 1500] operator 7: uint16 timestamp, fixints, -1 as fixneg */
        0xcd, 0x03, 0xe8, 0x02, 0x04, 0x01, 0xff, 0xff, 0x07,
        0xcd, 0x05, 0xdc, 0x02, 0x04, 0x02, 0xff, 0xff, 0x07,
        /* a DataMessage 2 -> 5, correlator 99, sent at 1500 (uint64 timestamp, int64 correlator) */
        0xcf, 0, 0, 0, 0, 0, 0, 0x05, 0xdc, 0x02, 0x0a, 0x03, 0xd3, 0, 0, 0, 0, 0, 0, 0, 0x63, 0x05, 0xff,
        /* received on 5 at 1700 (in a 7-element array, int8 remote, int16 -1) */
        0x97, 0xcd, 0x06, 0xa4, 0x05, 0x0a, 0x04, 0x63, 0xd0, 0x02, 0xd1, 0xff, 0xff,
        /* a Bogus event: skipped */
        0xcd, 0x06, 0xa5, 0x05, 0x0b, 0x05, 0xff, 0xff, 0xff,
        /* nested on worker 3: Processing [0, 10] with Serialization [4, 6] inside, operator 300 (uint16) */
        0x00, 0x03, 0x04, 0x01, 0xff, 0xff, 0xcd, 0x01, 0x2c,
        0x04, 0x03, 0x06, 0x01, 0xff, 0xff, 0xcd, 0x01, 0x2c,
        0x06, 0x03, 0x06, 0x02, 0xff, 0xff, 0xcd, 0x01, 0x2c,
        0x0a, 0x03, 0x04, 0x02, 0xff, 0xff, 0xcd, 0x01, 0x2c,
    };
    size_t n = sizeof rec;
    unsigned char buf[1024];
    memcpy(buf, rec, n);
    /* worker 9: one activity of each type, [8a, 8a + 5] */
    for (unsigned a = 1; a <= 13; a++)
        for (unsigned e = 1; e <= 2; e++) {
            unsigned t = 8 * a + (e == 2 ? 5 : 0);
            buf[n++] = (unsigned char)t;
            buf[n++] = 0x09;
            buf[n++] = (unsigned char)a;
            buf[n++] = (unsigned char)e;
            buf[n++] = 0xff;
            buf[n++] = 0xff;
            buf[n++] = 0xff;
        }
    lp_diags ds;
    lp_trace *t = import_st(buf, n, &ds);
    CHECK(t != NULL);
    if (t) {
        uint32_t w2 = wid(t, "2"), w3 = wid(t, "3"), w5 = wid(t, "5"), w9 = wid(t, "9");
        CHECK(w2 != LP_NONE32 && w3 != LP_NONE32 && w5 != LP_NONE32 && w9 != LP_NONE32);
        CHECK_EQ_I(t->nmsgs, 1);
        if (t->nmsgs == 1) {
            CHECK_EQ_I(t->msrc[0], w2);
            CHECK_EQ_I(t->mdst[0], w5);
            CHECK_EQ_I(t->msend[0], 1500);
            CHECK_EQ_I(t->mrecv[0], 1700);
            lp_str k = lp_trace_attr(t, t->mattr[0], "kind");
            CHECK(k != LP_STR_NONE && strcmp(lp_trace_str(t, k), "data") == 0);
        }
        uint64_t i = t->wfirst[w2];
        CHECK(t->wfirst[w2 + 1] - i == 1);
        CHECK_EQ_I(t->astart[i], 1000);
        CHECK_EQ_I(t->aend[i], 1500);
        CHECK_STR(lp_trace_type_name(t, t->atype[i]), "processing");
        CHECK(t->aop[i] != LP_STR_NONE && strcmp(lp_trace_str(t, t->aop[i]), "7") == 0);
        /* nested: processing [0,4], serialization [4,6], processing [6,10] */
        static const int64_t ns[3][2] = {{0, 4}, {4, 6}, {6, 10}};
        static const char *const nty[3] = {"processing", "serialization", "processing"};
        CHECK_EQ_I(t->wfirst[w3 + 1] - t->wfirst[w3], 3);
        for (int k = 0; k < 3 && t->wfirst[w3] + (uint64_t)k < t->wfirst[w3 + 1]; k++) {
            uint64_t a = t->wfirst[w3] + (uint64_t)k;
            CHECK_EQ_I(t->astart[a], ns[k][0]);
            CHECK_EQ_I(t->aend[a], ns[k][1]);
            CHECK_STR(lp_trace_type_name(t, t->atype[a]), nty[k]);
            CHECK_STR(lp_trace_str(t, t->aop[a]), "300");
        }
        /* worker 9: every type, in order, separated by gaps */
        unsigned seen = 0;
        for (uint64_t a = t->wfirst[w9]; a < t->wfirst[w9 + 1]; a++) {
            if (t->aflags[a] & LP_ACT_GAP)
                continue;
            seen++;
            CHECK_EQ_I(t->astart[a], 8 * seen);
            CHECK_EQ_I(t->aend[a], 8 * seen + 5);
            CHECK_STR(lp_trace_type_name(t, t->atype[a]), types[seen]);
            CHECK(t->aop[a] == LP_STR_NONE);
        }
        CHECK_EQ_I(seen, 13);
        CHECK_EQ_I(ds.nerrors, 0);
        CHECK_EQ_I(ds.nwarnings, 1); /* the Bogus event */
        lp_trace_free(t);
    }
    lp_diags_release(&ds);
    /* the encoder: logformat's smallest encodings */
    lp_st_record r = {1500, 2, 10, 3, 99, 5, -1};
    unsigned char e[64];
    size_t en = lp_st_encode(&r, e);
    static const unsigned char want[] = {0xcd, 0x05, 0xdc, 0x02, 0x0a, 0x03, 0x63, 0x05, 0xff};
    CHECK(en == sizeof want && memcmp(e, want, en) == 0);
    lp_st_record big = {UINT64_C(1700000000000000000), 4000000000u, 13, 5, -200, 70000, -1}, back;
    size_t used;
    char why[128];
    en = lp_st_encode(&big, e);
    CHECK(lp_st_decode(e, en, &back, &used, why, sizeof why) == 1 && used == en);
    CHECK(memcmp(&big, &back, sizeof big) == 0);
    for (size_t k = 0; k < en; k++) /* every prefix: incomplete, never an error */
        CHECK(lp_st_decode(e, k, &back, &used, why, sizeof why) == 0);
}

static void test_st_bad(void)
{
    lp_st_record r = {100, 1, 4, 1, -1, -1, -1};
    unsigned char b[512];
    size_t n = 0, start[8];
    for (int i = 0; i < 4; i++) { /* Start/End pairs on worker 1: [100,110], [120,130], ... */
        r.timestamp = (uint64_t)(100 + 20 * i);
        r.event = 1;
        start[2 * i] = n;
        n += lp_st_encode(&r, b + n);
        r.timestamp += 10;
        r.event = 2;
        start[2 * i + 1] = n;
        n += lp_st_encode(&r, b + n);
    }
    size_t good = n;
    size_t bad_at = start[2]; /* the third record: its activity type becomes 14 */
    unsigned char c1[512];
    memcpy(c1, b, n);
    c1[bad_at + 1 + 1] = 14; /* timestamp 120 is one byte */
    lp_diags ds;
    lp_trace *t = import_st(c1, n, &ds);
    CHECK(t != NULL);
    CHECK(ds.nerrors >= 1);
    CHECK(ds.nkept >= 1 && ds.kept[0].has_offset && ds.kept[0].offset == bad_at + 2);
    CHECK(ds.nkept >= 1 && strstr(ds.kept[0].msg, "ActivityType") != NULL);
    lp_trace_free(t);
    lp_diags_release(&ds);
    /* a nil where an integer belongs */
    memcpy(c1, b, n);
    c1[start[1] + 4] = 0xc0;
    t = import_st(c1, n, &ds);
    CHECK(t != NULL);
    CHECK(ds.nkept >= 1 && ds.kept[0].offset == start[1] + 4 && strstr(ds.kept[0].msg, "nil") != NULL);
    lp_trace_free(t);
    lp_diags_release(&ds);
    /* truncated in the last record */
    t = import_st(b, good - 3, &ds);
    CHECK(t != NULL);
    CHECK(ds.nkept >= 1 && ds.kept[0].offset == start[7] && strstr(ds.kept[0].msg, "ends inside a record") != NULL);
    if (t)
        CHECK_EQ_I(t->nacts - t->ngaps, 3); /* the last End is gone: its Start is dropped */
    lp_trace_free(t);
    lp_diags_release(&ds);
    /* the same inputs through a stream, byte by byte: reported, never fatal */
    lp_diags_init(&ds, 8);
    wsnaps on = {0};
    lp_stream *s = new_stream(15, 0, 1, &ds, &on);
    uint32_t id;
    lp_error err;
    memcpy(c1, b, n);
    c1[bad_at + 2] = 14;
    CHECK(s && lp_stream_open(s, "st", LP_STREAM_SNAILTRAIL, &id, &err) == LP_OK);
    for (size_t i = 0; s && i + 3 < n; i++)
        CHECK(lp_stream_feed(s, id, c1 + i, 1, &err) == LP_OK);
    CHECK(s && lp_stream_finish(s, &err) == LP_OK);
    if (s) {
        CHECK_EQ_I(lp_stream_get_stats(s)->malformed, 2); /* the bad record, the truncated one */
        CHECK_EQ_I(lp_stream_get_stats(s)->truncated, 1);
    }
    lp_stream_free(s);
    wsnaps_free(&on);
    lp_diags_release(&ds);
}

/* Route SnailTrail bytes by worker over k connections, fed in random chunks. */
static lp_status feed_st(lp_stream *s, const unsigned char *p, size_t n, unsigned k, uint64_t seed, lp_error *err)
{
    feedq q[8];
    uint32_t id[8];
    memset(q, 0, sizeof q);
    lp_status st;
    for (unsigned i = 0; i < k; i++)
        if ((st = lp_stream_open(s, "st", LP_STREAM_SNAILTRAIL, &id[i], err)))
            return st;
    for (size_t pos = 0; pos < n;) {
        lp_st_record r;
        size_t used;
        char why[64];
        if (lp_st_decode(p + pos, n - pos, &r, &used, why, sizeof why) != 1)
            return LP_ERR_ARG;
        fq_add(&q[r.local_worker % k], (const char *)p + pos, used);
        pos += used;
    }
    uint64_t rr = seed;
    for (;;) {
        unsigned left = 0;
        for (unsigned i = 0; i < k; i++)
            left += q[i].pos < q[i].n;
        if (!left)
            break;
        unsigned c = (unsigned)(tlcg(&rr) % k);
        if (q[c].pos >= q[c].n)
            continue;
        size_t m = 1 + tlcg(&rr) % 300;
        if (m > q[c].n - q[c].pos)
            m = q[c].n - q[c].pos;
        if ((st = lp_stream_feed(s, id[c], q[c].buf + q[c].pos, m, err)))
            break;
        q[c].pos += m;
    }
    for (unsigned i = 0; i < k; i++)
        free(q[i].buf);
    return st;
}

static void test_st_roundtrip(void)
{
    for (uint64_t seed = 1; seed <= 4; seed++) {
        lp_gen_dataflow o;
        lp_gen_dataflow_defaults(&o);
        lp_error err;
        CHECK(lp_gen_parse_ops(&o, "source:2,flatmap:2,count:2", &err) == LP_OK);
        o.duration_ns = 40000000;
        o.rate = 300000;
        o.seed = seed;
        o.checkpoint_ns = 10000000;
        lp_trace *g;
        CHECK(lp_gen_dataflow_run(&o, &g, &err) == LP_OK);
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);
        CHECK(f && lp_st_write(g, f, &err) == LP_OK);
        fclose(f);
        lp_diags ds;
        lp_trace *t = import_st((const unsigned char *)buf, n, &ds);
        CHECK(t != NULL);
        CHECK_EQ_I(ds.nerrors + ds.nwarnings, 0);
        if (!t) {
            free(buf);
            lp_trace_free(g);
            lp_diags_release(&ds);
            continue;
        }
        /* worker i of g is "i" in t, with the same activities (types by name) */
        CHECK_EQ_I(t->nacts - t->ngaps, g->nacts - g->ngaps);
        CHECK_EQ_I(t->nmsgs, g->nmsgs);
        int same = 1;
        for (uint32_t w = 0; w < g->nworkers && same; w++) {
            char nm[16];
            snprintf(nm, sizeof nm, "%u", w);
            uint32_t tw = wid(t, nm);
            uint64_t i = g->wfirst[w], j = tw == LP_NONE32 ? 0 : t->wfirst[tw];
            uint64_t ie = g->wfirst[w + 1], je = tw == LP_NONE32 ? 0 : t->wfirst[tw + 1];
            for (;;) {
                while (i < ie && (g->aflags[i] & LP_ACT_GAP))
                    i++;
                while (j < je && (t->aflags[j] & LP_ACT_GAP))
                    j++;
                if (i == ie || j == je) {
                    same = i == ie && j == je;
                    break;
                }
                if (g->astart[i] != t->astart[j] || g->aend[i] != t->aend[j] ||
                    strcmp(lp_trace_type_name(g, g->atype[i]), lp_trace_type_name(t, t->atype[j])) != 0 ||
                    (g->aop[i] == LP_STR_NONE) != (t->aop[j] == LP_STR_NONE)) {
                    same = 0;
                    break;
                }
                i++, j++;
            }
        }
        CHECK(same);
        /* messages: (sender, send, receiver, receive) by name */
        uint64_t found = 0;
        for (uint64_t m = 0; m < t->nmsgs; m++) {
            uint64_t gm = t->mid[m]; /* the writer's correlator is g's message index */
            char a[16], b[16];
            if (gm >= g->nmsgs)
                continue;
            snprintf(a, sizeof a, "%u", g->msrc[gm]);
            snprintf(b, sizeof b, "%u", g->mdst[gm]);
            found += t->msend[m] == g->msend[gm] && t->mrecv[m] == g->mrecv[gm] &&
                     strcmp(lp_trace_worker_name(t, t->msrc[m]), a) == 0 &&
                     strcmp(lp_trace_worker_name(t, t->mdst[m]), b) == 0;
        }
        CHECK_EQ_I(found, g->nmsgs);
        /* the stream on the same bytes equals the import: on one connection (same worker
         * ids: both number workers by first appearance) exactly; over several the graph
         * is the same, ids differ */
        for (unsigned k = 1; k <= 3; k += 2) {
            wsnaps off = {0}, on = {0};
            lp_winopts wo = {(1u << LP_SUM_NKINDS) - 1, 1, 0, 0};
            const int64_t size = seed % 2 ? 4000000 : 9000000;
            CHECK(offline_windows(t, 0, size, size, &wo, &off) == 0);
            lp_diags ds2;
            lp_diags_init(&ds2, 4);
            lp_stream *s = new_stream(size, 0, (unsigned)(1 + seed % 2), &ds2, &on);
            CHECK(s && feed_st(s, (const unsigned char *)buf, n, k, seed, &err) == LP_OK);
            CHECK(s && lp_stream_finish(s, &err) == LP_OK);
            char what[64];
            snprintf(what, sizeof what, "snailtrail seed %llu", (unsigned long long)seed);
            if (k == 1) {
                CHECK(compare_all(&off, &on, what) == 0);
            } else {
                CHECK_EQ_I(on.n, off.n);
                for (size_t i = 0; i < on.n && i < off.n; i++) {
                    const wsnap *a = &off.v[i], *b = &on.v[i];
                    CHECK(a->nevents == b->nevents && a->nv == b->nv && a->nwedges == b->nwedges &&
                          a->nin == b->nin && a->nacts == b->nacts && a->nmsgs == b->nmsgs &&
                          a->has_paths == b->has_paths);
                    CHECK(fabs(lp_xnum_log10(a->n) - lp_xnum_log10(b->n)) <= 1e-9 * (1 + fabs(lp_xnum_log10(a->n))) ||
                          (a->n.m == 0 && b->n.m == 0));
                }
            }
            CHECK_EQ_I(ds2.nerrors, 0);
            lp_stream_free(s);
            lp_diags_release(&ds2);
            wsnaps_free(&off);
            wsnaps_free(&on);
        }
        lp_trace_free(t);
        lp_trace_free(g);
        lp_diags_release(&ds);
        free(buf);
    }
}

int main(void)
{
    test_differential();
    test_build_twin();
    test_late_and_out_of_order();
    test_malformed();
    test_dropped_connection();
    test_max_delay();
    test_flow();
    test_memory_bound();
    test_out_of_memory();
    test_st_enums();
    test_st_bad();
    test_st_roundtrip();
    return t_done("test_stream");
}
