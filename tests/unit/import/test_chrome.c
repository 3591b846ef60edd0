/* test_chrome.c: the Chrome Trace Event Format importer (src/import/chrome/) and the
 * Chrome exporter (src/export/chrome_export.c): exact timestamps, slice nesting (a
 * differential test against a naive twin on random nested slices), B/E matching and
 * its diagnostics with positions, flows (s/t/f bindings, bind_id), async events, worker
 * naming, the Kineto layer (launch messages with the stream-queue rule, synchronisation
 * waits), format detection, and export -> import round trips. */
#include "longpole/longpole.h"
#include "longpole/export/chrome_export.h"
#include "longpole/codec/json.h"
#include "t.h"

#include <stdint.h>
#include <stdlib.h>

static lp_diags DS;

/* Import a document with the chrome importer into a finished trace (DS holds the
 * diagnostics until the next call). */
static lp_trace *imp(const char *doc, size_t n)
{
    static int init;
    if (init)
        lp_diags_release(&DS);
    init = 1;
    lp_diags_init(&DS, 500);
    lp_error err;
    lp_builder *b;
    if (lp_builder_new(&b, &DS, NULL, &err))
        return NULL;
    lp_input *in;
    if (lp_input_open_mem(&in, doc, n, "t.json", &err)) {
        lp_builder_free(b);
        return NULL;
    }
    lp_status st = lp_builder_source(b, "t.json", &err);
    if (!st)
        st = lp_importer_find("chrome")->read(b, in, NULL, &err);
    lp_input_close(in);
    if (st) {
        lp_builder_free(b);
        return NULL;
    }
    lp_trace *t;
    if (lp_builder_finish(b, &t, &err))
        return NULL;
    return t;
}
static lp_trace *imps(const char *doc) { return imp(doc, strlen(doc)); }

static char *diags_text(void)
{
    static char buf[32768];
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < DS.nkept && o < sizeof buf; i++) {
        char line[1024];
        lp_diag_format(line, sizeof line, &DS.kept[i]);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\n", line);
    }
    return buf;
}

#define HAS_DIAG(frag)                                                                                     \
    do {                                                                                                   \
        t_checks++;                                                                                        \
        if (!strstr(diags_text(), frag)) {                                                                 \
            t_failures++;                                                                                  \
            fprintf(stderr, "%s:%d: diagnostics lack \"%s\":\n%s", __FILE__, __LINE__, frag, diags_text()); \
        }                                                                                                  \
    } while (0)

/* The non-gap activity of worker `w` number k. */
static uint64_t act(const lp_trace *t, const char *w, int k)
{
    uint32_t wi = lp_trace_find_worker(t, w);
    if (wi == LP_NONE32)
        return UINT64_MAX;
    for (uint64_t i = t->wfirst[wi]; i < t->wfirst[wi + 1]; i++)
        if (!(t->aflags[i] & LP_ACT_GAP) && k-- == 0)
            return i;
    return UINT64_MAX;
}

static const char *attr(const lp_trace *t, uint32_t list, const char *key)
{
    lp_str s = lp_trace_attr(t, list, key);
    return s == LP_STR_NONE ? NULL : lp_trace_str(t, s);
}

/* ---- timestamps ---------------------------------------------------------------------- */

static void test_timestamps(void)
{
    static const struct {
        const char *ts;
        int64_t ns;
    } c[] = {
        {"1.5", 1500}, {"0.0005", 0}, {"0.0015", 2}, {"0.0025", 2}, {"0.00250001", 3}, {"1e3", 1000000},
        {"\"2.25\"", 2250}, {"1623142623460111.123", INT64_C(1623142623460111123)}, {"-1.5", -1500},
        {"12.345678", 12346}, {"7E-3", 7}, {"0", 0}, {"123456789012345678901234e-10", INT64_C(12345678901234568)},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char doc[256];
        snprintf(doc, sizeof doc, "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":%s,\"dur\":1}]", c[i].ts);
        lp_trace *t = imps(doc);
        CHECK(t != NULL);
        if (!t)
            continue;
        uint64_t a = act(t, "1/1", 0);
        CHECK(a != UINT64_MAX);
        if (a != UINT64_MAX) {
            CHECK_EQ_I(t->astart[a], c[i].ns);
            CHECK_EQ_I(t->aend[a] - t->astart[a], 1000);
        }
        lp_trace_free(t);
    }
    /* out of range and malformed */
    lp_trace *t = imps("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1e30,\"dur\":1},{\"ph\":\"X\",\"ts\":\"1.2.3\",\"dur\":1},"
                       "{\"ph\":\"X\",\"ts\":1,\"dur\":\"abc\"}]");
    CHECK(t && t->nacts == 0);
    CHECK_EQ_I(DS.nerrors, 3);
    HAS_DIAG("t.json:1: error: byte 27: X event: \"ts\" must be a number of microseconds, found a number 1e30");
    HAS_DIAG("\"dur\" must be a number of microseconds, found a string \"abc\"");
    lp_trace_free(t);
}

/* ---- nesting: differential test against a naive twin ----------------------------------- */

typedef struct rs {
    int64_t s, e;
    int name;
} rs;

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng % n;
}

/* random properly nested slices inside [s, e] */
static void gen_tree(rs *v, int *n, int cap, int64_t s, int64_t e, int depth)
{
    int64_t cur = s;
    while (*n < cap && cur < e && rnd(4) != 0) {
        int64_t a = cur + (int64_t)rnd((uint64_t)(e - cur) / 2 + 1);
        int64_t b = a + (int64_t)rnd((uint64_t)(e - a) + 1);
        if (rnd(6) == 0)
            b = a; /* zero length */
        v[*n].s = a;
        v[*n].e = b;
        v[*n].name = *n;
        (*n)++;
        if (depth < 5 && b > a)
            gen_tree(v, n, cap, a, b, depth + 1);
        cur = b + (b == a);
    }
}

typedef struct piece {
    int64_t s, e;
    int name;
} piece;

static int cmp_piece(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    if (x->e != y->e)
        return x->e < y->e ? -1 : 1;
    return x->name - y->name;
}

/* The naive twin: at every elementary interval the innermost covering slice (the one
 * starting last; on equal starts the shorter; then the later in input order); a slice's
 * time is cut wherever a slice nested in it begins or ends; zero-length slices are
 * pieces of their own. */
static int naive(const rs *v, int n, piece *out)
{
    int64_t *t = malloc(sizeof *t * (size_t)(2 * n + 1));
    int nt = 0, np = 0;
    for (int i = 0; i < n; i++)
        t[nt++] = v[i].s, t[nt++] = v[i].e;
    for (int i = 1; i < nt; i++) /* insertion sort + unique */
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
            int64_t x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    int u = 0;
    for (int i = 0; i < nt; i++)
        if (!u || t[u - 1] != t[i])
            t[u++] = t[i];
    for (int k = 0; k + 1 < u; k++) {
        int best = -1;
        for (int i = 0; i < n; i++) {
            if (!(v[i].s <= t[k] && v[i].e >= t[k + 1]))
                continue;
            if (best < 0 || v[i].s > v[best].s || (v[i].s == v[best].s && v[i].e < v[best].e) ||
                (v[i].s == v[best].s && v[i].e == v[best].e && i > best))
                best = i;
        }
        if (best < 0)
            continue;
        /* merge with the previous piece unless a slice nested in `best` bounds here */
        int cut = 1;
        if (np && out[np - 1].name == v[best].name && out[np - 1].e == t[k]) {
            cut = 0;
            for (int i = 0; i < n && !cut; i++)
                if (i != best && v[i].s >= v[best].s && v[i].e <= v[best].e && (v[i].s == t[k] || v[i].e == t[k]))
                    cut = 1;
        }
        if (!cut)
            out[np - 1].e = t[k + 1];
        else
            out[np++] = (piece){t[k], t[k + 1], v[best].name};
    }
    for (int i = 0; i < n; i++)
        if (v[i].s == v[i].e)
            out[np++] = (piece){v[i].s, v[i].e, v[i].name};
    free(t);
    qsort(out, (size_t)np, sizeof *out, cmp_piece);
    return np;
}

static void test_nesting_differential(void)
{
    enum { CAP = 60 };
    for (int round = 0; round < 300; round++) {
        rs v[CAP];
        int n = 0;
        gen_tree(v, &n, CAP, 0, 1000, 0);
        if (!n)
            continue;
        /* the input in a random order; X events, some as B/E pairs when top-level order allows */
        int perm[CAP];
        for (int i = 0; i < n; i++)
            perm[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)rnd((uint64_t)i + 1);
            int x = perm[i];
            perm[i] = perm[j];
            perm[j] = x;
        }
        char *doc = malloc(200 * (size_t)n + 16);
        size_t o = 0;
        o += (size_t)sprintf(doc + o, "[");
        for (int k = 0; k < n; k++) {
            const rs *s = &v[perm[k]];
            o += (size_t)sprintf(doc + o, "%s{\"ph\":\"X\",\"name\":\"s%d\",\"pid\":1,\"tid\":1,\"ts\":%lld.%03lld,\"dur\":%lld}",
                                 k ? "," : "", s->name, (long long)(s->s / 1000), (long long)(s->s % 1000),
                                 (long long)(s->e - s->s) / 1000);
            /* durations are whole microseconds here: ends in ns are s + dur*1000 */
        }
        o += (size_t)sprintf(doc + o, "]");
        /* the twin works on the same (ns) intervals */
        rs w[CAP];
        for (int i = 0; i < n; i++) {
            w[i] = v[i];
            w[i].e = v[i].s + (v[i].e - v[i].s) / 1000 * 1000;
        }
        /* input order among equal intervals is the permutation order */
        rs wp[CAP];
        for (int k = 0; k < n; k++)
            wp[k] = w[perm[k]];
        /* nesting must still hold after rounding durations down: re-generate otherwise */
        int ok = 1;
        for (int i = 0; i < n && ok; i++)
            for (int j = 0; j < n && ok; j++)
                if (wp[i].s < wp[j].s && wp[j].s < wp[i].e && wp[j].e > wp[i].e)
                    ok = 0;
        if (!ok) {
            free(doc);
            continue;
        }
        piece want[4 * CAP];
        int nw = naive(wp, n, want);
        lp_trace *t = imp(doc, o);
        CHECK(t != NULL);
        free(doc);
        if (!t)
            continue;
        piece got[4 * CAP];
        int ng = 0;
        uint32_t wi = lp_trace_find_worker(t, "1/1");
        for (uint64_t i = wi == LP_NONE32 ? 0 : t->wfirst[wi]; wi != LP_NONE32 && i < t->wfirst[wi + 1]; i++)
            if (!(t->aflags[i] & LP_ACT_GAP) && ng < 4 * CAP)
                got[ng++] = (piece){t->astart[i], t->aend[i], atoi(lp_trace_str(t, t->aop[i]) + 1)};
        qsort(got, (size_t)ng, sizeof *got, cmp_piece);
        int same = ng == nw;
        for (int i = 0; i < ng && same; i++)
            same = got[i].s == want[i].s && got[i].e == want[i].e && got[i].name == want[i].name;
        CHECK(same);
        if (!same) {
            fprintf(stderr, "round %d: %d pieces, naive %d\n", round, ng, nw);
            for (int i = 0; i < ng || i < nw; i++)
                fprintf(stderr, "  got %lld-%lld s%d | want %lld-%lld s%d\n", i < ng ? (long long)got[i].s : -1,
                        i < ng ? (long long)got[i].e : -1, i < ng ? got[i].name : -1, i < nw ? (long long)want[i].s : -1,
                        i < nw ? (long long)want[i].e : -1, i < nw ? want[i].name : -1);
            lp_trace_free(t);
            break;
        }
        lp_trace_free(t);
    }
}

static void test_nesting_attributes(void)
{
    lp_trace *t = imps("[{\"ph\":\"X\",\"name\":\"outer\",\"cat\":\"app\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,"
                       "\"args\":{\"n\":1,\"big\":{\"x\":1},\"ok\":true}},"
                       "{\"ph\":\"B\",\"name\":\"mid\",\"cat\":\"app\",\"pid\":1,\"tid\":1,\"ts\":10},"
                       "{\"ph\":\"X\",\"name\":\"leaf\",\"cat\":\"io\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":5},"
                       "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":30}]");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_I(t->nacts - t->ngaps, 5); /* outer mid leaf mid outer */
    uint64_t a = act(t, "1/1", 2);
    CHECK_STR(lp_trace_str(t, t->aop[a]), "leaf");
    CHECK_STR(lp_trace_type_name(t, t->atype[a]), "io"); /* a built-in type as category */
    CHECK_STR(attr(t, t->aattr[a], "stack"), "outer;mid");
    CHECK(attr(t, t->aattr[a], "cat") == NULL);
    a = act(t, "1/1", 0);
    CHECK_STR(attr(t, t->aattr[a], "n"), "1");
    CHECK_STR(attr(t, t->aattr[a], "ok"), "true");
    CHECK(attr(t, t->aattr[a], "big") == NULL);
    CHECK_STR(attr(t, t->aattr[a], "cat"), "app");
    CHECK(attr(t, t->aattr[a], "stack") == NULL);
    CHECK_EQ_I(t->astart[act(t, "1/1", 1)], 10000);
    CHECK_EQ_I(t->aend[act(t, "1/1", 3)], 30000);
    lp_trace_free(t);
}

/* ---- B/E and their diagnostics -------------------------------------------------------------- */

static void test_begin_end(void)
{
    lp_trace *t = imps("[\n{\"ph\":\"B\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1},\n"
                       "{\"ph\":\"E\",\"name\":\"a\",\"pid\":1,\"tid\":2,\"ts\":2},\n"
                       "{\"ph\":\"B\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":5},\n"
                       "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":4},\n"
                       "{\"ph\":\"X\",\"name\":\"late\",\"pid\":1,\"tid\":3,\"ts\":50,\"dur\":10}\n]");
    CHECK(t != NULL);
    if (!t)
        return;
    /* E on another thread has no B; E before its B drops the slice; a never ends */
    HAS_DIAG("t.json:3: error: byte 48: E event 'a' on thread 1/2 without an open B; event skipped [import]");
    HAS_DIAG("t.json:5: error: byte 140: E event at 4000 ns ends slice 'c' (B at byte 94) before it began (5000 ns)");
    HAS_DIAG("t.json:2: warning: byte 2: slice 'a' begun here (B) on thread 1/1 is never ended (no E); closed at the end "
             "of the trace (60000 ns)");
    HAS_DIAG("2 skipped (1 E without B, 1 E before its B)");
    uint64_t a = act(t, "1/1", 0);
    CHECK(a != UINT64_MAX && t->astart[a] == 1000 && t->aend[a] == 60000);
    CHECK_STR(attr(t, t->aattr[a], "unclosed"), "true");
    CHECK_EQ_I(t->nacts - t->ngaps, 2);
    lp_trace_free(t);
    /* a missing ']' is allowed; a cut event is an error with its position */
    t = imps("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1},\n");
    CHECK(t && t->nacts == 1 && DS.nerrors == 0);
    HAS_DIAG("the event array is not closed (allowed by the format)");
    lp_trace_free(t);
    t = imps("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1},\n{\"ph\":\"X\",\"na");
    CHECK(t && t->nacts == 1 && DS.nerrors == 1);
    HAS_DIAG("t.json:2: error: byte");
    HAS_DIAG("t.json:2: error: byte 52: unexpected end of input (truncated file?) in the value that starts at byte 39, "
             "line 2; the rest of the file is not read");
    lp_trace_free(t);
}

/* ---- flows, async, metadata ---------------------------------------------------------------------- */

static void test_flows(void)
{
    lp_trace *t = imps(
        "{\"traceEvents\":["
        "{\"name\":\"send\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},"
        "{\"name\":\"F\",\"cat\":\"c\",\"ph\":\"s\",\"pid\":1,\"tid\":1,\"ts\":5,\"id\":\"0x1\",\"args\":{\"k\":\"v\"}},"
        "{\"name\":\"hop\",\"ph\":\"X\",\"pid\":2,\"tid\":2,\"ts\":20,\"dur\":10},"
        "{\"name\":\"F\",\"cat\":\"c\",\"ph\":\"t\",\"pid\":2,\"tid\":2,\"ts\":25,\"id\":\"0x1\"},"
        "{\"name\":\"F\",\"cat\":\"c\",\"ph\":\"f\",\"pid\":3,\"tid\":3,\"ts\":40,\"id\":\"0x1\"},"
        "{\"name\":\"recv\",\"ph\":\"X\",\"pid\":3,\"tid\":3,\"ts\":45,\"dur\":10},"
        "{\"name\":\"G\",\"cat\":\"c\",\"ph\":\"s\",\"pid\":1,\"tid\":1,\"ts\":6,\"id\":2},"
        "{\"name\":\"G\",\"cat\":\"c\",\"ph\":\"f\",\"bp\":\"e\",\"pid\":3,\"tid\":3,\"ts\":41,\"id\":2},"
        "{\"name\":\"out\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":60,\"dur\":5,\"bind_id\":7,\"flow_out\":true},"
        "{\"name\":\"in\",\"ph\":\"X\",\"pid\":2,\"tid\":2,\"ts\":70,\"dur\":5,\"bind_id\":7,\"flow_in\":true},"
        "{\"name\":\"H\",\"cat\":\"c\",\"ph\":\"f\",\"pid\":2,\"tid\":2,\"ts\":71,\"id\":9},"
        "{\"name\":\"H\",\"cat\":\"d\",\"ph\":\"s\",\"pid\":2,\"tid\":2,\"ts\":72,\"id\":9}"
        "]}");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_I(t->nmsgs, 4);
    int seen = 0;
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        const char *src = lp_trace_worker_name(t, t->msrc[m]), *dst = lp_trace_worker_name(t, t->mdst[m]);
        if (!strcmp(src, "1/1") && !strcmp(dst, "2/2") && t->msend[m] == 5000 && t->mrecv[m] == 25000) {
            seen |= 1; /* s -> t; args kept, the flow's name too */
            CHECK_STR(attr(t, t->mattr[m], "k"), "v");
            CHECK_STR(attr(t, t->mattr[m], "flow"), "F");
        }
        if (!strcmp(src, "2/2") && !strcmp(dst, "3/3") && t->msend[m] == 25000 && t->mrecv[m] == 45000)
            seen |= 2; /* t -> f, bound to the next slice (no bp) */
        if (!strcmp(src, "1/1") && !strcmp(dst, "3/3") && t->msend[m] == 6000 && t->mrecv[m] == 41000)
            seen |= 4; /* bp e: at its own time */
        if (!strcmp(src, "1/1") && !strcmp(dst, "2/2") && t->msend[m] == 65000 && t->mrecv[m] == 70000)
            seen |= 8; /* bind_id: from the end of the out slice to the start of the in slice */
    }
    CHECK_EQ_I(seen, 15);
    /* (cat, name, id) keys: H/c f has no start, H/d s no end */
    HAS_DIAG("flow event (ph f) without a start; ignored");
    HAS_DIAG("flow start (ph s) never ends; ignored");
    lp_trace_free(t);
}

static void test_async_and_names(void)
{
    lp_trace *t = imps("[{\"cat\":\"net\",\"name\":\"req\",\"ph\":\"b\",\"id\":\"0x10\",\"pid\":1,\"tid\":1,\"ts\":0},"
                       "{\"cat\":\"net\",\"name\":\"dns\",\"ph\":\"b\",\"id\":\"0x10\",\"pid\":1,\"tid\":1,\"ts\":1},"
                       "{\"cat\":\"net\",\"name\":\"dns\",\"ph\":\"e\",\"id\":\"0x10\",\"pid\":1,\"tid\":1,\"ts\":3},"
                       "{\"cat\":\"net\",\"name\":\"req\",\"ph\":\"e\",\"id\":\"0x10\",\"pid\":1,\"tid\":2,\"ts\":9},"
                       "{\"cat\":\"l\",\"name\":\"L\",\"ph\":\"S\",\"id\":5,\"pid\":1,\"tid\":1,\"ts\":10},"
                       "{\"cat\":\"l\",\"name\":\"L\",\"ph\":\"T\",\"id\":5,\"pid\":1,\"tid\":1,\"ts\":12,\"args\":{\"step\":\"a\"}},"
                       "{\"cat\":\"l\",\"name\":\"L\",\"ph\":\"F\",\"id\":5,\"pid\":1,\"tid\":2,\"ts\":20},"
                       "{\"name\":\"w\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":30},"
                       "{\"name\":\"w\",\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":0,\"dur\":30},"
                       "{\"name\":\"w\",\"ph\":\"X\",\"pid\":2,\"tid\":1,\"ts\":0,\"dur\":30},"
                       "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"main\"}},"
                       "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"pool \"}},"
                       "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":1,\"args\":{\"name\":\"pool\"}},"
                       "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"renderer\"}}]");
    CHECK(t != NULL);
    if (!t)
        return;
    /* unique names as they are (trimmed); shared ones with (pid/tid) */
    CHECK(lp_trace_find_worker(t, "main") != LP_NONE32);
    CHECK(lp_trace_find_worker(t, "pool (1/2)") != LP_NONE32);
    uint32_t w = lp_trace_find_worker(t, "pool (2/1)");
    CHECK(w != LP_NONE32);
    if (w != LP_NONE32) {
        CHECK_STR(attr(t, t->wattr[w], "process"), "renderer");
        CHECK_STR(attr(t, t->wattr[w], "kind"), "cpu");
    }
    /* async ids are timelines: req [0,9] with dns inside; L with its step */
    CHECK_EQ_I(t->astart[act(t, "async:net:0x10", 1)], 1000);
    CHECK_STR(lp_trace_str(t, t->aop[act(t, "async:net:0x10", 1)]), "dns");
    CHECK_STR(lp_trace_str(t, t->aop[act(t, "async:L:5", 1)]), "L:a");
    CHECK_EQ_I(t->aend[act(t, "async:L:5", 1)], 20000);
    /* begin and end messages of the outermost async slices */
    int n = 0;
    for (uint64_t m = 0; m < t->nmsgs; m++)
        n += !strcmp(attr(t, t->mattr[m], "edge"), "async-begin") || !strcmp(attr(t, t->mattr[m], "edge"), "async-end");
    CHECK_EQ_I(n, 4);
    lp_trace_free(t);
}

/* ---- Kineto -------------------------------------------------------------------------------- */

static const char *kineto =
    "{\"schemaVersion\":1,\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":10,\"tid\":10,\"ts\":100,\"dur\":50},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":10,\"ts\":110,\"dur\":10,"
    "\"args\":{\"correlation\":5}},"
    "{\"ph\":\"s\",\"id\":5,\"pid\":10,\"tid\":10,\"ts\":110,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":130,\"dur\":100,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":5}},"
    "{\"ph\":\"f\",\"id\":5,\"pid\":0,\"tid\":7,\"ts\":130,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":10,\"ts\":125,\"dur\":10,"
    "\"args\":{\"correlation\":6}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":232,\"dur\":50,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":6}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaStreamSynchronize\",\"pid\":10,\"tid\":10,\"ts\":170,"
    "\"dur\":130,\"args\":{\"correlation\":8}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Sync\",\"pid\":0,\"tid\":7,\"ts\":171,\"dur\":129,"
    "\"args\":{\"cuda_sync_kind\":\"Stream Sync\",\"stream\":7,\"correlation\":8,\"device\":0}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaDeviceSynchronize\",\"pid\":10,\"tid\":10,\"ts\":400,"
    "\"dur\":5,\"args\":{\"correlation\":9}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::item\",\"pid\":10,\"tid\":10,\"ts\":300,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\",\"tid\":\"P\",\"ts\":0,"
    "\"dur\":10000}]}";

static void test_kineto(void)
{
    lp_trace *t = imps(kineto);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_I(t->nworkers, 2); /* the profiler's span is not a worker */
    uint32_t gpu = lp_trace_find_worker(t, "0/7"), cpu = lp_trace_find_worker(t, "10/10");
    CHECK(gpu != LP_NONE32 && cpu != LP_NONE32);
    if (gpu == LP_NONE32 || cpu == LP_NONE32) {
        lp_trace_free(t);
        return;
    }
    CHECK_STR(attr(t, t->wattr[gpu], "kind"), "gpu");
    CHECK_STR(attr(t, t->wattr[gpu], "stream"), "7");
    int launches = 0, syncs = 0;
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        const char *e = attr(t, t->mattr[m], "edge");
        if (!strcmp(e, "launch")) {
            launches++;
            CHECK(t->msrc[m] == cpu && t->mdst[m] == gpu);
            if (t->mid[m] == 5) { /* stream idle: sent when the call returned, delivered at the kernel's start */
                CHECK_EQ_I(t->msend[m], 120000);
                CHECK_EQ_I(t->mrecv[m], 130000);
            } else { /* queued behind k1: delivered when k1 ended */
                CHECK_EQ_I(t->mid[m], 6);
                CHECK_EQ_I(t->msend[m], 135000);
                CHECK_EQ_I(t->mrecv[m], 230000);
            }
        } else if (!strcmp(e, "sync")) {
            syncs++;
            CHECK(t->msrc[m] == gpu && t->mdst[m] == cpu);
            CHECK_EQ_I(t->msend[m], 282000);
            CHECK_EQ_I(t->mrecv[m], 300000);
        }
    }
    CHECK_EQ_I(launches, 2);
    CHECK_EQ_I(syncs, 1);
    /* the stream sync waited: `waiting`; the device sync at 400 found the GPU idle */
    for (uint64_t a = t->wfirst[cpu]; a < t->wfirst[cpu + 1]; a++) {
        if (t->aop[a] == LP_STR_NONE)
            continue;
        const char *op = lp_trace_str(t, t->aop[a]);
        if (!strcmp(op, "cudaStreamSynchronize"))
            CHECK_EQ_I(t->atype[a], LP_TYPE_WAITING);
        if (!strcmp(op, "cudaDeviceSynchronize"))
            CHECK_EQ_I(t->atype[a], LP_TYPE_PROCESSING);
    }
    /* the critical path crosses: CPU -> GPU -> CPU */
    lp_pag g;
    lp_cpath cp;
    lp_error err;
    CHECK(lp_pag_build(t, &g, &err) == LP_OK);
    CHECK(lp_cpath_compute(&g, &cp, &err) == LP_OK);
    int on_gpu = 0;
    for (size_t i = 0; i < cp.n; i++)
        on_gpu += cp.e[i].kind == LP_CP_ACTIVITY && cp.e[i].worker == gpu;
    CHECK(on_gpu >= 2);
    lp_cpath_release(&cp);
    lp_pag_release(&g);
    lp_trace_free(t);
}

/* ---- detection ------------------------------------------------------------------------------- */

static void test_detect(void)
{
    static const struct {
        const char *head, *want;
    } c[] = {
        {"[{\"cat\":\"cc\",\"pid\":14689,\"tid\":14751,\"ts\":172187584349,\"ph\":\"X\",\"name\":\"Sch", "chrome"},
        {"[ {\"name\": \"a\", \"args\": {},\"pid\": 52, \"ts\": 9524, \"cat\": \"foo\", \"tid\": 53,", "chrome"},
        {"{\n  \"traceEvents\": [\n    {\"cat\": \"PERF\", \"pid\": 22630", "chrome"},
        {"\n{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": \"Tesla", "chrome"},
        {"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[]}", "chrome"},
        {"[{\"id\":7,\"ph\":\"s\",\"ts\":1}]", "chrome"},
        {"{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"2.1.0\"}\n{\"Event\":", "spark"},
        {"{\"Event\":\"SparkListenerBlockManagerAdded\",\"Block Manager ID\":{\"Execu", "spark"},
        {"[\n  {\n    \"traceId\": \"ef86c83c0a05a6d6\",\n    \"parentId\": \"ef8", "zipkin"},
        {"{\n  \"traceID\": \"9ced30503c58dab894a2d7598b01a87a\",\n  \"spans\": [", "jaeger"},
        {"{\n  \"resourceSpans\": [\n    {\n      \"resource\": {", "otlp"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        size_t n = strlen(c[i].head);
        if (n > 64)
            n = 64; /* what lp_input_peek gives */
        const lp_importer *imp = lp_importer_detect((const unsigned char *)c[i].head, n, NULL);
        CHECK(imp != NULL);
        if (imp && strcmp(imp->name, c[i].want) != 0)
            fprintf(stderr, "head %zu detected as %s, expected %s\n", i, imp->name, c[i].want);
        CHECK(imp && !strcmp(imp->name, c[i].want));
    }
    CHECK(lp_importer_detect((const unsigned char *)"A w 0 1 processing\n", 19, NULL) == NULL ||
          lp_importer_find("chrome")->detect((const unsigned char *)"A w 0 1 processing\n", 19, NULL) == 0);
}

/* ---- export and round trips ---------------------------------------------------------------------- */

static char *export_text(const lp_trace *t, const lp_cpath *cp, size_t *n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, n);
    if (!f)
        return NULL;
    lp_chrome_export_opts o;
    memset(&o, 0, sizeof o);
    o.cp = cp;
    lp_error err;
    lp_status st = lp_chrome_export(t, f, &o, &err);
    fclose(f);
    if (st) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Same workers (by name), activities and messages, with attributes. */
static int same_trace(const lp_trace *a, const lp_trace *b)
{
    if (a->nacts - a->ngaps != b->nacts - b->ngaps || a->nmsgs != b->nmsgs)
        return 0;
    for (uint32_t w = 0; w < a->nworkers; w++) {
        uint32_t v = lp_trace_find_worker(b, lp_trace_worker_name(a, w));
        if (v == LP_NONE32) { /* a worker with nothing (in a window) has no events to export */
            for (uint64_t i = a->wfirst[w]; i < a->wfirst[w + 1]; i++)
                if (!(a->aflags[i] & LP_ACT_GAP))
                    return 0;
            continue;
        }
        uint64_t i = a->wfirst[w], k = b->wfirst[v];
        for (;; i++, k++) {
            while (i < a->wfirst[w + 1] && (a->aflags[i] & LP_ACT_GAP))
                i++;
            while (k < b->wfirst[v + 1] && (b->aflags[k] & LP_ACT_GAP))
                k++;
            if (i == a->wfirst[w + 1] || k == b->wfirst[v + 1]) {
                if (!(i == a->wfirst[w + 1] && k == b->wfirst[v + 1]))
                    return 0;
                break;
            }
            if (a->astart[i] != b->astart[k] || a->aend[i] != b->aend[k] ||
                strcmp(lp_trace_type_name(a, a->atype[i]), lp_trace_type_name(b, b->atype[k])) ||
                (a->aop[i] == LP_STR_NONE) != (b->aop[k] == LP_STR_NONE) ||
                (a->aop[i] != LP_STR_NONE && strcmp(lp_trace_str(a, a->aop[i]), lp_trace_str(b, b->aop[k]))))
                return 0;
            uint32_t la = a->aattr[i], lb = b->aattr[k];
            uint32_t na = la ? a->apool[la] : 0, nb = lb ? b->apool[lb] : 0;
            if (na != nb)
                return 0;
            for (uint32_t p = 0; p < na; p++) {
                const char *key = lp_trace_str(a, a->apool[la + 1 + 2 * p]);
                const char *va = lp_trace_str(a, a->apool[la + 2 + 2 * p]);
                const char *vb = attr(b, lb, key);
                if (!vb || strcmp(va, vb))
                    return 0;
            }
        }
    }
    /* messages: in order of sender, send, receiver, receive, they must pair up */
    for (uint64_t m = 0; m < a->nmsgs; m++) {
        int found = 0;
        char ia[64], ib[64];
        for (uint64_t k = 0; k < b->nmsgs && !found; k++)
            found = a->msend[m] == b->msend[k] && a->mrecv[m] == b->mrecv[k] &&
                    !strcmp(lp_trace_worker_name(a, a->msrc[m]), lp_trace_worker_name(b, b->msrc[k])) &&
                    !strcmp(lp_trace_worker_name(a, a->mdst[m]), lp_trace_worker_name(b, b->mdst[k])) &&
                    !strcmp(lp_trace_msgid(a, a->mid[m], ia, sizeof ia), lp_trace_msgid(b, b->mid[k], ib, sizeof ib));
        if (!found)
            return 0;
    }
    return 1;
}

static void test_export_round_trip(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.max_records = 4000;
    o.seed = 11;
    lp_trace *t;
    lp_error err;
    CHECK(lp_gen_dataflow_run(&o, &t, &err) == LP_OK);
    lp_pag g;
    lp_cpath cp;
    CHECK(lp_pag_build(t, &g, &err) == LP_OK);
    CHECK(lp_cpath_compute(&g, &cp, &err) == LP_OK);
    size_t n;
    char *doc = export_text(t, &cp, &n);
    CHECK(doc != NULL);
    /* valid JSON: every event reads, and the counts are what the mapping says */
    lp_input *in;
    lp_json_reader *r;
    static const char *const keys[] = {"traceEvents", NULL};
    lp_json_opts jo;
    memset(&jo, 0, sizeof jo);
    jo.stream_keys = keys;
    CHECK(lp_input_open_mem(&in, doc, n, "x.json", &err) == LP_OK);
    CHECK(lp_json_reader_new(&r, in, &jo, &err) == LP_OK);
    uint64_t nx = 0, ncp = 0, ns = 0, ncpflow = 0, bad = 0;
    lp_json_ev ev;
    while (lp_json_next(r, &ev, &err) == LP_OK) {
        if (ev.kind == LP_JSON_EV_BAD)
            bad++;
        if (ev.kind != LP_JSON_EV_ELEMENT)
            continue;
        const lp_json *ph = lp_json_get(ev.tree, "ph"), *cat = lp_json_get(ev.tree, "cat");
        if (lp_json_str_is(ph, "X") && lp_json_str_is(cat, "critical_path"))
            ncp++;
        else if (lp_json_str_is(ph, "X"))
            nx++;
        if (lp_json_str_is(ph, "s") && lp_json_str_is(cat, "message"))
            ns++;
        if (lp_json_str_is(ph, "s") && lp_json_str_is(cat, "longpole.critical_path"))
            ncpflow++;
    }
    lp_json_reader_free(r);
    lp_input_close(in);
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_I(nx, t->nacts); /* gaps included */
    CHECK_EQ_I(ns, t->nmsgs);
    CHECK_EQ_I(ncp, cp.n);
    uint64_t cpmsgs = 0;
    for (size_t i = 0; i < cp.n; i++)
        cpmsgs += cp.e[i].kind == LP_CP_MESSAGE;
    CHECK_EQ_I(ncpflow, cpmsgs);
    /* re-import: the same trace, and the same critical path */
    lp_trace *t2 = imp(doc, n);
    CHECK(t2 != NULL);
    CHECK_EQ_I(DS.nerrors, 0);
    if (t2) {
        CHECK(same_trace(t, t2));
        lp_pag g2;
        lp_cpath cp2;
        CHECK(lp_pag_build(t2, &g2, &err) == LP_OK);
        CHECK(lp_cpath_compute(&g2, &cp2, &err) == LP_OK);
        CHECK_EQ_I(cp2.total, cp.total);
        CHECK_EQ_I(cp2.n, cp.n);
        lp_cpath_release(&cp2);
        lp_pag_release(&g2);
        lp_trace_free(t2);
    }
    free(doc);
    /* a window: the projection exports and reads back too */
    lp_trace *wt;
    CHECK(lp_trace_window(t, t->tmin + (t->tmax - t->tmin) / 3, t->tmin + (t->tmax - t->tmin) / 2, &wt, &err) == LP_OK);
    doc = export_text(wt, NULL, &n);
    lp_trace *t3 = doc ? imp(doc, n) : NULL;
    CHECK(t3 && same_trace(wt, t3));
    lp_trace_free(t3);
    free(doc);
    lp_trace_free(wt);
    lp_cpath_release(&cp);
    lp_pag_release(&g);
    lp_trace_free(t);
    /* an imported trace (nesting, flows, async, Kineto) survives export -> import */
    t = imps(kineto);
    doc = t ? export_text(t, NULL, &n) : NULL;
    t2 = doc ? imp(doc, n) : NULL;
    CHECK(t2 && same_trace(t, t2));
    lp_trace_free(t2);
    free(doc);
    lp_trace_free(t);
}

static void test_export_exact_times(void)
{
    /* epoch nanoseconds beyond 2^53 and negative times keep every digit */
    const char *text = "A w -1500 7 processing op\nA w 1623142623460111123 1623142623460111124 io -\n";
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_builder *b;
    lp_error err;
    lp_input *in;
    lp_trace *t = NULL;
    CHECK(lp_builder_new(&b, &ds, NULL, &err) == LP_OK);
    CHECK(lp_input_open_mem(&in, text, strlen(text), "t.lpt", &err) == LP_OK);
    CHECK(lp_lpt_read(b, in, NULL, &err) == LP_OK);
    lp_input_close(in);
    CHECK(lp_builder_finish(b, &t, &err) == LP_OK);
    size_t n;
    char *doc = export_text(t, NULL, &n);
    CHECK(doc && strstr(doc, "\"ts\":-1.5,\"dur\":1.507"));
    CHECK(doc && strstr(doc, "\"ts\":1623142623460111.123,\"dur\":0.001"));
    lp_trace *t2 = doc ? imp(doc, n) : NULL;
    CHECK(t2 && same_trace(t, t2));
    if (t2) { /* the activity without an operator stays without one */
        uint64_t a = act(t2, "w", 1);
        CHECK(a != UINT64_MAX && t2->aop[a] == LP_STR_NONE && t2->atype[a] == LP_TYPE_IO);
    }
    lp_trace_free(t2);
    free(doc);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* Every allocation failing in turn: the import and the export fail cleanly (no crash, no
 * leak under the sanitizers) until there is memory enough, then give the full result. */
static void test_out_of_memory(void)
{
    lp_trace *ref = imps(kineto);
    CHECK(ref != NULL);
    int succeeded = 0;
    for (long n = 0; n < 3000 && !succeeded; n++) {
        lp_alloc_fail_after(n);
        lp_trace *t = imps(kineto);
        lp_alloc_fail_after(-1);
        if (t) {
            succeeded = 1;
            CHECK(ref && same_trace(ref, t));
            lp_trace_free(t);
        }
    }
    CHECK(succeeded);
    succeeded = 0;
    for (long n = 0; n < 200 && !succeeded && ref; n++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        lp_error err;
        lp_alloc_fail_after(n);
        lp_status st = lp_chrome_export(ref, f, NULL, &err);
        lp_alloc_fail_after(-1);
        fclose(f);
        CHECK(st == LP_OK || st == LP_ERR_NOMEM);
        succeeded = st == LP_OK;
        free(buf);
    }
    CHECK(succeeded);
    lp_trace_free(ref);
}

int main(void)
{
    test_timestamps();
    test_nesting_differential();
    test_nesting_attributes();
    test_begin_end();
    test_flows();
    test_async_and_names();
    test_kineto();
    test_detect();
    test_export_round_trip();
    test_export_exact_times();
    test_out_of_memory();
    lp_diags_release(&DS);
    return t_done("test_chrome");
}
