/* test_spanstream.c: the streaming span import against its naive twin, the tree import.
 *
 * A Jaeger trace of {"data":[...]} (or of a top-level array) larger than
 * lp_span_import_nest_min is read span by span (nested streaming, codec/json.h) instead
 * of as one tree. The twin is the tree path (nest_min 0: every trace read whole, the
 * import before nested streaming). Thousands of random documents (random field order,
 * unknown fields with nesting, escapes, bad UTF-8 mended, missing fields, values of
 * the wrong type, processes before or after the spans, unknown processIDs) are read
 * both ways, the streaming way with tiny buffers and nest_min 1 so that every trace
 * that can be streamed is, decided on partial data; the span tables (every column,
 * references) and the diagnostics (with the skip counts of the summary) must be equal.
 *
 * Diagnostics are compared as sorted lists: a streamed trace whose "processes" come
 * after its spans can only say that a processID is unknown once it has them, so those
 * warnings come later (same text, same position). Documents keep one known difference
 * out: a streamed trace's spans that have no traceID of their own need the trace's
 * traceID before them (docs/formats/spans.md), so the generator writes the trace's
 * traceID first when a span may lack its own.
 */
#include "longpole/model/span.h"
#include "longpole/codec/io.h"
#include "longpole/import/spanfmt.h"
#include "longpole/load/load.h"
#include "longpole/base/diag.h"
#include "import/spans/spanjson.h"
#include "t.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
static int rr(int lo, int hi) { return lo + (int)(rnd() % (uint64_t)(hi - lo + 1)); }

/* ---- a growing text ---- */
typedef struct sb {
    char *b;
    size_t n, cap;
} sb;
static void put(sb *s, const char *t)
{
    size_t k = strlen(t);
    if (s->n + k + 1 > s->cap) {
        s->cap = (s->n + k + 1) * 2;
        s->b = realloc(s->b, s->cap);
    }
    memcpy(s->b + s->n, t, k + 1);
    s->n += k;
}
static void putf(sb *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(sb *s, const char *fmt, ...)
{
    char t[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    put(s, t);
}

/* ---- random documents ---- */

static const char *const STRS[] = {"GET /a", "op\\u00e9", "x\\\"y", "tab\\there", "bad\xff" "utf", "caf\xc3\xa9",
                                   "\\ud83d\\ude00", "\\ud800lone", "", "sp ace"};

static void rstr(sb *s) { putf(s, "\"%s\"", STRS[rr(0, 9)]); }

/* an unknown value: scalars, or small nested arrays and objects */
static void junk(sb *s, int depth)
{
    switch (rr(0, depth > 2 ? 3 : 5)) {
    case 0: rstr(s); break;
    case 1: putf(s, "%d", rr(-5, 100000)); break;
    case 2: put(s, rr(0, 1) ? "true" : "null"); break;
    case 3: put(s, "1.5e3"); break;
    case 4:
        put(s, "[");
        for (int i = 0, n = rr(0, 3); i < n; i++) {
            if (i)
                put(s, ",");
            junk(s, depth + 1);
        }
        put(s, "]");
        break;
    default:
        put(s, "{");
        for (int i = 0, n = rr(0, 3); i < n; i++) {
            putf(s, "%s\"k%d\":", i ? "," : "", i);
            junk(s, depth + 1);
        }
        put(s, "}");
        break;
    }
}

/* fields of one object in a random order: each writer appends "key":value */

typedef struct gspan {
    int trace, id, nspans, own_trace, nprocs;
} gspan;

static void f_traceid(sb *s, gspan *g)
{
    switch (rr(0, 12)) {
    case 0: put(s, "\"traceID\":17"); break;
    case 1: put(s, "\"traceID\":\"\""); break;
    default: putf(s, "\"traceID\":\"%x\"", 0xa0 + g->trace); break;
    }
}
static void f_spanid(sb *s, gspan *g)
{
    switch (rr(0, 20)) {
    case 0: put(s, "\"spanID\":5"); break;
    case 1: put(s, "\"spanID\":\"\""); break;
    case 2: putf(s, "\"spanID\":\"s-%d\"", g->id); break;
    default: putf(s, "\"spanID\":\"%x\"", 0x100 + g->id); break;
    }
}
static void f_op(sb *s, gspan *g)
{
    (void)g;
    put(s, "\"operationName\":");
    if (rr(0, 15) == 0)
        put(s, "42");
    else
        rstr(s);
}
static void f_refs(sb *s, gspan *g)
{
    put(s, "\"references\":");
    int k = rr(0, 12);
    if (k == 0) {
        put(s, "{}");
        return;
    }
    if (k == 1) {
        put(s, "null");
        return;
    }
    put(s, "[");
    for (int i = 0, n = rr(0, 3); i < n; i++) {
        if (i)
            put(s, ",");
        put(s, "{");
        int first = 1;
        if (rr(0, 5)) {
            putf(s, "\"refType\":\"%s\"", rr(0, 3) ? "CHILD_OF" : "FOLLOWS_FROM");
            first = 0;
        }
        if (rr(0, 3)) {
            putf(s, "%s\"traceID\":\"%x\"", first ? "" : ",", 0xa0 + (rr(0, 5) ? g->trace : g->trace + 1));
            first = 0;
        }
        if (rr(0, 8))
            putf(s, "%s\"spanID\":\"%x\"", first ? "" : ",", 0x100 + rr(0, g->nspans));
        put(s, "}");
    }
    put(s, "]");
}
static void f_parent(sb *s, gspan *g) { putf(s, "\"parentSpanID\":\"%x\"", rr(0, 3) ? 0x100 + rr(0, g->nspans) : 0); }
static void f_start(sb *s, gspan *g)
{
    (void)g;
    switch (rr(0, 14)) {
    case 0: put(s, "\"startTime\":\"1000\""); break;
    case 1: put(s, "\"startTime\":\"10us\""); break;
    case 2: put(s, "\"startTime\":1.5"); break;
    case 3: put(s, "\"startTime\":2000.0"); break;
    default: putf(s, "\"startTime\":%d", 1000 + rr(0, 500)); break;
    }
}
static void f_dur(sb *s, gspan *g)
{
    (void)g;
    switch (rr(0, 14)) {
    case 0: put(s, "\"duration\":null"); break;
    case 1: put(s, "\"duration\":-30"); break;
    case 2: put(s, "\"duration\":[1]"); break;
    default: putf(s, "\"duration\":%d", rr(0, 400)); break;
    }
}
static void f_pid(sb *s, gspan *g)
{
    if (rr(0, 10) == 0)
        put(s, "\"process\":{\"serviceName\":\"emb\",\"tags\":[]}");
    else if (rr(0, 12) == 0)
        put(s, "\"processID\":3");
    else
        putf(s, "\"processID\":\"p%d\"", rr(1, g->nprocs + 1));
}
static void f_tags(sb *s, gspan *g)
{
    (void)g;
    static const char *const kinds[] = {"server", "client", "producer", "consumer", "internal", "SERVER", "odd"};
    putf(s, "\"tags\":[{\"key\":\"http.method\",\"type\":\"string\",\"value\":\"GET\"},{\"key\":\"span.kind\","
            "\"type\":\"string\",\"value\":\"%s\"}]",
         kinds[rr(0, 6)]);
}
static void f_junk(sb *s, gspan *g)
{
    (void)g;
    putf(s, "\"x%d\":", rr(0, 99));
    junk(s, 0);
}

static void shuffle(void **a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = rr(0, i);
        void *t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

typedef void (*gfield)(sb *, gspan *);

static void span_obj(sb *s, gspan *g)
{
    gfield fs[12];
    int n = 0;
    if (g->own_trace || rr(0, 6))
        fs[n++] = f_traceid;
    if (rr(0, 25))
        fs[n++] = f_spanid;
    if (rr(0, 10))
        fs[n++] = f_op;
    if (rr(0, 2))
        fs[n++] = f_refs;
    if (rr(0, 4) == 0)
        fs[n++] = f_parent;
    if (rr(0, 25))
        fs[n++] = f_start;
    if (rr(0, 15))
        fs[n++] = f_dur;
    if (rr(0, 8))
        fs[n++] = f_pid;
    if (rr(0, 1))
        fs[n++] = f_tags;
    if (rr(0, 3) == 0)
        fs[n++] = f_junk;
    shuffle((void **)fs, n);
    put(s, rr(0, 3) ? "{" : " {\n ");
    for (int i = 0; i < n; i++) {
        if (i)
            put(s, ",");
        fs[i](s, g);
    }
    put(s, "}");
}

static void processes(sb *s, int nprocs)
{
    int k = rr(0, 14);
    if (k == 0) {
        put(s, "\"processes\":[]");
        return;
    }
    put(s, "\"processes\":{");
    for (int i = 1; i <= nprocs; i++)
        putf(s, "%s\"p%d\":{\"serviceName\":%s,\"tags\":[]}", i > 1 ? "," : "", i,
             rr(0, 12) ? (i % 2 ? "\"svc-a\"" : "\"svc\\u0062\"") : "7");
    put(s, "}");
}

/* A trace object: traceID, spans, processes and unknown members in a random order. */
static void trace_obj(sb *s, int t)
{
    gspan g = {.trace = t, .nspans = rr(0, 12), .nprocs = rr(0, 3)};
    int parts[4] = {0, 1, 2, 3}; /* traceID, spans, processes, junk */
    void *p[4] = {&parts[0], &parts[1], &parts[2], &parts[3]};
    shuffle(p, 4);
    int has_tid = rr(0, 5) != 0, has_procs = rr(0, 6) != 0, has_junk = rr(0, 2) == 0;
    /* a span without its own traceID needs the trace's before the spans when streamed */
    int tid_before = 1, seen_spans = 0;
    for (int i = 0; i < 4; i++) {
        int w = *(int *)p[i];
        if (w == 1)
            seen_spans = 1;
        if (w == 0 && seen_spans)
            tid_before = 0;
    }
    g.own_trace = !has_tid || !tid_before;
    put(s, "{");
    int first = 1;
    for (int i = 0; i < 4; i++) {
        int w = *(int *)p[i];
        if ((w == 0 && !has_tid) || (w == 2 && !has_procs) || (w == 3 && !has_junk))
            continue;
        if (!first)
            put(s, ",");
        first = 0;
        if (w == 0) {
            putf(s, "\"traceID\":\"%x\"", 0xa0 + t);
        } else if (w == 1) {
            put(s, "\"spans\":[");
            for (int k = 0; k < g.nspans; k++) {
                if (k)
                    put(s, ",");
                g.id = k + 1;
                span_obj(s, &g);
            }
            put(s, "]");
        } else if (w == 2) {
            processes(s, g.nprocs);
        } else {
            put(s, "\"warnings\":");
            junk(s, 0);
        }
    }
    put(s, "}");
}

static void document(sb *s)
{
    s->n = 0;
    put(s, "");
    int ntr = rr(0, 4), arr = rr(0, 3) == 0;
    if (arr) {
        put(s, "[");
    } else {
        put(s, "{");
        if (rr(0, 2) == 0)
            put(s, "\"total\":3,");
        put(s, "\"data\":[");
    }
    for (int t = 0; t < ntr; t++) {
        if (t)
            put(s, rr(0, 2) ? "," : ",\n");
        trace_obj(s, rr(0, 3) ? t : 0);
    }
    put(s, "]");
    if (!arr)
        put(s, rr(0, 1) ? ",\"limit\":0,\"errors\":null}" : "}");
    if (rr(0, 40) == 0)
        put(s, "\n");
}

/* ---- read and dump ---- */

static int cmp_lines(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Read doc with the Jaeger reader; the table (insertion order, every column, traces by
 * their normalised id) and the sorted diagnostics into out. */
static void read_dump(const char *doc, size_t n, sb *out)
{
    lp_diags ds;
    lp_diags_init(&ds, 1000);
    lp_spans sp;
    lp_spans_init(&sp, &ds);
    lp_error err;
    lp_input *in;
    out->n = 0;
    put(out, "");
    if (lp_input_open_mem(&in, doc, n, "doc.json", &err)) {
        put(out, "open failed");
        return;
    }
    const lp_span_format *f = lp_span_format_find("jaeger");
    lp_status st = lp_spans_source(&sp, "doc.json", &err);
    if (!st)
        st = f->read(&sp, in, NULL, &err);
    putf(out, "status %d\n", (int)st);
    lp_input_close(in);
    for (size_t i = 0; i < sp.n; i++) {
        char b[96];
        putf(out, "%s %s p%llx %lld+%lld op=%s svc=%s k%u f%u @%llu:%u\n",
             lp_spans_str(&sp, sp.trace_id[sp.trace[i]]), lp_spans_idstr(&sp, (uint32_t)i, b, sizeof b),
             (unsigned long long)sp.pid[i], (long long)sp.start[i], (long long)sp.dur[i], lp_spans_str(&sp, sp.op[i]),
             lp_spans_str(&sp, sp.service[i]), sp.kind[i], sp.flags[i], (unsigned long long)sp.off[i], sp.line[i]);
    }
    for (size_t i = 0; i < sp.nrefs; i++)
        putf(out, "ref %u %s %llx %d\n", sp.refs[i].span, lp_spans_str(&sp, sp.trace_id[sp.refs[i].trace]),
             (unsigned long long)sp.refs[i].id, (int)sp.refs[i].type);
    if (!st)
        st = lp_spans_finish(&sp, &err);
    putf(out, "finish %d kept %llu\n", (int)st, (unsigned long long)sp.nkept);
    char **lines = malloc(sizeof(char *) * (ds.nkept + 1));
    for (size_t i = 0; i < ds.nkept; i++) {
        lines[i] = malloc(1024);
        lp_diag_format(lines[i], 1024, &ds.kept[i]);
    }
    qsort(lines, ds.nkept, sizeof(char *), cmp_lines);
    for (size_t i = 0; i < ds.nkept; i++) {
        putf(out, "%.500s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
    putf(out, "diags %zu errors %llu warnings %llu\n", ds.nkept, (unsigned long long)ds.nerrors, (unsigned long long)ds.nwarnings);
    lp_spans_release(&sp);
    lp_diags_release(&ds);
}

/* How many traces the streaming read streamed (a BEGIN of depth 1): the reader over the
 * same options. */
static int streamed(const char *doc, size_t n)
{
    static const char *const keys[] = {"data", "spans", NULL}, *const nk[] = {"data", "", NULL},
                      *const ns[] = {"spans", NULL};
    lp_json_opts o = {.stream_keys = keys, .repair = 1, .bufsize = lp_span_import_bufsize,
                      .nest_min = lp_span_import_nest_min, .nest_keys = nk, .nest_stream = ns};
    lp_input *in;
    lp_error err;
    lp_json_reader *r;
    if (lp_input_open_mem(&in, doc, n, "d", &err))
        return 0;
    int k = 0;
    if (lp_json_reader_new(&r, in, &o, &err) == LP_OK) {
        lp_json_ev ev;
        while (lp_json_next(r, &ev, &err) == LP_OK)
            k += ev.kind == LP_JSON_EV_BEGIN && ev.depth == 1;
        lp_json_reader_free(r);
    }
    lp_input_close(in);
    return k;
}

static void test_differential(void)
{
    sb doc = {0}, tree = {0}, stream = {0};
    int nstreamed = 0, docs = 0, withdiags = 0;
    for (int it = 0; it < 4000; it++) {
        document(&doc);
        lp_span_import_nest_min = 0;
        lp_span_import_bufsize = LP_SPAN_BUFSIZE;
        read_dump(doc.b, doc.n, &tree);
        lp_span_import_nest_min = 1;
        lp_span_import_bufsize = (size_t)rr(1, 64);
        read_dump(doc.b, doc.n, &stream);
        nstreamed += streamed(doc.b, doc.n);
        docs++;
        withdiags += strstr(tree.b, "diags 0 ") == NULL;
        t_checks++;
        if (strcmp(tree.b, stream.b) != 0) {
            t_failures++;
            fprintf(stderr, "test_spanstream: iteration %d (bufsize %zu): tree and streaming imports differ\n"
                            "document:\n%s\n--- tree:\n%s--- streaming:\n%s",
                    it, lp_span_import_bufsize, doc.b, tree.b, stream.b);
            break;
        }
    }
    lp_span_import_nest_min = LP_SPAN_NEST_MIN;
    lp_span_import_bufsize = LP_SPAN_BUFSIZE;
    /* the comparison was not vacuous: traces were streamed, documents had problems */
    CHECK(nstreamed > 2000);
    CHECK(withdiags > 1000);
    CHECK(docs == 4000);
    free(doc.b);
    free(tree.b);
    free(stream.b);
}

/* A big trace in the default setting (more than 128 KiB, not within the reader's buffer)
 * is streamed, a small one is not; both give the table of the tree import. */
static void test_threshold(void)
{
    sb doc = {0}, a = {0}, b = {0};
    put(&doc, "{\"data\":[{\"traceID\":\"ab\",\"spans\":[");
    for (int i = 0; i < 30000; i++)
        putf(&doc, "%s{\"traceID\":\"ab\",\"spanID\":\"%x\",\"operationName\":\"op\",\"references\":[{\"refType\":"
                   "\"CHILD_OF\",\"traceID\":\"ab\",\"spanID\":\"%x\"}],\"startTime\":%d,\"duration\":%d,"
                   "\"processID\":\"p1\",\"tags\":[{\"key\":\"pad\",\"value\":\"0123456789012345678901234567890123456789\"}]}",
             i ? "," : "", i + 1, i / 2, 1000 + i, 100000 - i);
    put(&doc, "],\"processes\":{\"p1\":{\"serviceName\":\"s\"}}},{\"traceID\":\"cd\",\"spans\":[{\"spanID\":\"1\","
              "\"startTime\":5,\"duration\":1,\"processID\":\"p9\"}],\"processes\":{}}]}");
    CHECK(doc.n > (size_t)5 << 20); /* (more than the reader's first buffer) */
    CHECK(streamed(doc.b, doc.n) == 1);
    read_dump(doc.b, doc.n, &b);
    lp_span_import_nest_min = 0;
    CHECK(streamed(doc.b, doc.n) == 0);
    read_dump(doc.b, doc.n, &a);
    lp_span_import_nest_min = LP_SPAN_NEST_MIN;
    CHECK(strcmp(a.b, b.b) == 0);
    CHECK(strstr(a.b, "processID 'p9' is not in the trace's processes") != NULL);
    free(doc.b);
    free(a.b);
    free(b.b);
}

int main(void)
{
    test_threshold();
    test_differential();
    return t_done("test_spanstream");
}
