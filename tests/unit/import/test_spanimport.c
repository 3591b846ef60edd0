/* test_spanimport.c: the Jaeger, Zipkin and OTLP readers (what they read, what they
 * report with file, line and byte offset, what they skip), format detection, and the
 * mapping of spans into the activity graph: on random span trees whose children fall
 * inside their parents, the whole-trace critical path of the mapped graph (cpath.c)
 * must walk exactly the span-tree critical path (spancp.c) — a differential test of
 * the mapping documented in docs/formats/spans.md. */
#include "longpole/longpole.h"
#include "longpole/model/span.h"
#include "longpole/codec/io.h"
#include "longpole/import/import.h"
#include "longpole/import/spanfmt.h"
#include "longpole/load/load.h"
#include "longpole/analysis/spans/spancp.h"
#include "t.h"

#include <stdint.h>

static lp_diags DS;

/* Read a document with a format into a finished table (diagnostics in DS). */
static int load(lp_spans *sp, const char *fmt, const char *doc)
{
    lp_diags_init(&DS, 200);
    lp_spans_init(sp, &DS);
    lp_error err;
    lp_input *in;
    if (lp_input_open_mem(&in, doc, strlen(doc), "doc.json", &err))
        return -1;
    const lp_span_format *f = lp_span_format_find(fmt);
    int rc = f && lp_spans_source(sp, "doc.json", &err) == LP_OK && f->read(sp, in, NULL, &err) == LP_OK &&
                     lp_spans_finish(sp, &err) == LP_OK
                 ? 0
                 : -1;
    lp_input_close(in);
    return rc;
}

static void unload(lp_spans *sp)
{
    lp_spans_release(sp);
    lp_diags_release(&DS);
}

/* The formatted diagnostics, one per line. */
static char *diags_text(void)
{
    static char buf[16384];
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < DS.nkept && o < sizeof buf; i++) {
        char line[1024];
        lp_diag_format(line, sizeof line, &DS.kept[i]);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\n", line);
    }
    return buf;
}

#define HAS_DIAG(frag)                                                                          \
    do {                                                                                        \
        t_checks++;                                                                             \
        if (!strstr(diags_text(), frag)) {                                                      \
            t_failures++;                                                                       \
            fprintf(stderr, "%s:%d: diagnostics lack \"%s\":\n%s", __FILE__, __LINE__, frag, diags_text()); \
        }                                                                                       \
    } while (0)

static uint32_t span_by_id(const lp_spans *sp, const char *id)
{
    char b[96];
    for (uint32_t i = 0; i < sp->n; i++)
        if (strcmp(lp_spans_idstr(sp, i, b, sizeof b), id) == 0)
            return i;
    return LP_SPAN_NONE;
}

static const char *svc(const lp_spans *sp, uint32_t i) { return lp_spans_str(sp, sp->service[i]); }

/* ---- Jaeger ---- */

static void test_jaeger(void)
{
    lp_spans sp;
    /* the query API: two traces, each with its processes */
    const char *api =
        "{\"data\":[{\"traceID\":\"00ab\",\"spans\":["
        "{\"traceID\":\"00ab\",\"spanID\":\"a1\",\"operationName\":\"GET /\",\"references\":[],\"startTime\":1000,"
        "\"duration\":50,\"tags\":[{\"key\":\"span.kind\",\"type\":\"string\",\"value\":\"server\"}],\"processID\":\"p1\"},"
        "{\"traceID\":\"00ab\",\"spanID\":\"a2\",\"operationName\":\"db\",\"references\":[{\"refType\":\"CHILD_OF\","
        "\"traceID\":\"00ab\",\"spanID\":\"a1\"}],\"startTime\":1010,\"duration\":20,\"processID\":\"p2\"},"
        "{\"traceID\":\"00ab\",\"spanID\":\"a3\",\"operationName\":\"later\",\"references\":[{\"refType\":\"FOLLOWS_FROM\","
        "\"traceID\":\"00ab\",\"spanID\":\"a1\"},{\"refType\":\"CHILD_OF\",\"traceID\":\"ff\",\"spanID\":\"b1\"}],"
        "\"startTime\":1040,\"duration\":30,\"processID\":\"p1\"}],"
        "\"processes\":{\"p1\":{\"serviceName\":\"front\",\"tags\":[]},\"p2\":{\"serviceName\":\"back\"}}},"
        "{\"traceID\":\"ff\",\"spans\":[{\"traceID\":\"ff\",\"spanID\":\"b1\",\"operationName\":\"x\",\"startTime\":1,"
        "\"duration\":2,\"processID\":\"p1\"}],\"processes\":{\"p1\":{\"serviceName\":\"other\"}}}],"
        "\"total\":0,\"limit\":0,\"offset\":0,\"errors\":null}";
    CHECK(load(&sp, "jaeger", api) == 0);
    CHECK_EQ_I(sp.n, 4);
    CHECK_EQ_I(sp.ntraces, 2);
    CHECK_EQ_I(DS.nerrors + DS.nwarnings, 0);
    uint32_t a1 = span_by_id(&sp, "00000000000000a1"), a2 = span_by_id(&sp, "00000000000000a2"),
             a3 = span_by_id(&sp, "00000000000000a3"), b1 = span_by_id(&sp, "00000000000000b1");
    CHECK(a1 != LP_SPAN_NONE && a2 != LP_SPAN_NONE && a3 != LP_SPAN_NONE && b1 != LP_SPAN_NONE);
    CHECK_STR(svc(&sp, a1), "front");
    CHECK_STR(svc(&sp, a2), "back");
    CHECK_STR(svc(&sp, b1), "other");
    CHECK(sp.kind[a1] == LP_SPAN_SERVER && sp.start[a1] == 1000000 && sp.dur[a1] == 50000);
    CHECK(sp.parent[a2] == a1 && sp.parent[a3] == a1 && (sp.flags[a3] & LP_SPAN_FOLLOWS));
    CHECK(sp.nrefs == 1 && sp.refs[0].target == b1 && sp.refs[0].type == LP_REF_CHILD_OF);
    CHECK_STR(lp_spans_trace_text(&sp, sp.trace[a1]), "00ab");
    unload(&sp);

    /* a bare trace whose processes come after the spans; an embedded process; the old
     * parentSpanID field */
    const char *bare = "{\n \"traceID\": \"t1\",\n \"spans\": [\n"
                       "  {\"spanID\":\"1\",\"operationName\":\"root\",\"startTime\":0,\"duration\":100,\"processID\":\"p9\"},\n"
                       "  {\"spanID\":\"2\",\"parentSpanID\":\"1\",\"operationName\":\"kid\",\"startTime\":10,\"duration\":5,"
                       "\"process\":{\"serviceName\":\"embedded\"}}\n ],\n"
                       " \"processes\": {\"p9\": {\"serviceName\": \"late\"}}\n}\n";
    CHECK(load(&sp, "jaeger", bare) == 0);
    CHECK_EQ_I(sp.n, 2);
    CHECK_STR(svc(&sp, 0), "late");
    CHECK_STR(svc(&sp, 1), "embedded");
    CHECK(sp.parent[1] == 0 && sp.line[1] == 5);
    unload(&sp);

    /* bad records: each reported at its position and skipped; the rest is read */
    const char *bad = "{\"data\":[{\"traceID\":\"t\",\"spans\":[\n"
                      "{\"traceID\":\"t\",\"operationName\":\"no id\",\"startTime\":1,\"duration\":1},\n"
                      "{\"traceID\":\"t\",\"spanID\":\"2\",\"startTime\":\"soon\",\"duration\":1},\n"
                      "{\"traceID\":\"t\",\"spanID\":\"3\",\"startTime\":5,\"duration\":-4,\"processID\":\"nope\"},\n"
                      "{\"traceID\":\"t\",\"spanID\":\"4\",\"startTime\":5,\"duration\":1,\"operationName\":\"x\xff\"},\n"
                      "{\"traceID\":\"t\",\"spanID\":\"5\",\"startTime\":5,\"duration\":\"7\",\"operationName\":17},\n"
                      "{\"traceID\":\"t\",\"spanID\":\"6\",\"startTime\":5,\"duration\":1}]}]}";
    CHECK(load(&sp, "jaeger", bad) == 0);
    CHECK_EQ_I(sp.n, 3); /* spans 3, 4 (its name mended) and 6 */
    CHECK_STR(lp_spans_str(&sp, sp.op[1]), "x?");
    HAS_DIAG("doc.json:2: error: byte 34: span without a spanID string (found nothing); record skipped [import]");
    HAS_DIAG("doc.json:3: error: byte 142: span 2: startTime must be an integer number of microseconds, found a string \"soon\"");
    HAS_DIAG("doc.json:4: error: byte 217: span 3: negative duration -4 us; its end is taken from its children");
    HAS_DIAG("doc.json:4: warning: byte 232: span 3: processID 'nope' is not in the trace's processes; the service is unknown");
    HAS_DIAG("doc.json:5: warning: byte 314: invalid UTF-8 byte 0xff in a string; the string was mended (bad bytes became '?') [encoding]");
    HAS_DIAG("doc.json:6: error: byte 392: span 5: operationName must be a string, found a number 17; record skipped");
    HAS_DIAG("note: jaeger: 3 span(s) read, 3 record(s) skipped (1 without a span id, 1 with a field of the wrong type, 1 without a usable start time)");
    unload(&sp);

    /* a truncated file: the spans before the cut are kept */
    const char *cut = "{\"data\":[{\"traceID\":\"t\",\"spans\":[{\"traceID\":\"t\",\"spanID\":\"1\",\"startTime\":1,"
                      "\"duration\":1}],\"processes\":{}},{\"traceID\":\"u\",\"spans\":[{\"traceID\":\"u\",\"spa";
    CHECK(load(&sp, "jaeger", cut) == 0);
    CHECK_EQ_I(sp.n, 1);
    HAS_DIAG("doc.json:1: error: byte 149: unexpected end of input (truncated file?) in the value that starts at byte 106, line 1; the rest of the file is not read");
    unload(&sp);

    /* not a trace at all */
    CHECK(load(&sp, "jaeger", "42") == 0);
    HAS_DIAG("not a Jaeger trace: a top-level a number 42; record skipped");
    unload(&sp);
    CHECK(load(&sp, "jaeger", "{\"data\": {\"x\":1}}") == 0);
    HAS_DIAG("\"data\" must be an array, found an object; record skipped");
    unload(&sp);
}

/* ---- Zipkin ---- */

static void test_zipkin(void)
{
    lp_spans sp;
    const char *doc =
        "[[{\"traceId\":\"0000000000000000000000000000abcd\",\"id\":\"01\",\"kind\":\"SERVER\",\"name\":\"get\","
        "\"timestamp\":100,\"duration\":90,\"localEndpoint\":{\"serviceName\":\"front\"}},"
        "{\"traceId\":\"abcd\",\"parentId\":\"01\",\"id\":\"02\",\"kind\":\"CLIENT\",\"name\":\"call\","
        "\"timestamp\":110,\"duration\":50,\"localEndpoint\":{\"serviceName\":\"front\"}},"
        "{\"traceId\":\"abcd\",\"parentId\":\"01\",\"id\":\"02\",\"kind\":\"SERVER\",\"name\":\"serve\",\"shared\":true,"
        "\"timestamp\":115,\"duration\":40,\"localEndpoint\":{\"serviceName\":\"back\"}},"
        "{\"traceId\":\"abcd\",\"parentId\":\"02\",\"id\":\"03\",\"name\":\"query\",\"localEndpoint\":{\"serviceName\":\"back\"}},"
        "{\"traceId\":\"abcd\",\"parentId\":\"03\",\"id\":\"04\",\"name\":\"io\",\"timestamp\":120,\"duration\":10,"
        "\"localEndpoint\":{\"serviceName\":\"back\"}}]]";
    CHECK(load(&sp, "zipkin", doc) == 0);
    CHECK_EQ_I(sp.n, 5);
    CHECK_EQ_I(sp.ntraces, 1); /* 128-bit and 64-bit ids with zero high bits are one trace */
    CHECK_EQ_I(sp.nshared, 1);
    CHECK_EQ_I(DS.nerrors, 0);
    uint32_t server = span_by_id(&sp, "0000000000000002:server"), client = span_by_id(&sp, "0000000000000002");
    CHECK(server != LP_SPAN_NONE && client != LP_SPAN_NONE && sp.parent[server] == client);
    CHECK_STR(svc(&sp, server), "back");
    /* the span without timestamp was placed from its child, under the server half */
    uint32_t q = span_by_id(&sp, "0000000000000003");
    CHECK(sp.parent[q] == server && sp.start[q] == 120000 && sp.dur[q] == 10000);
    unload(&sp);

    const char *bad = "[{\"traceId\":\"a\",\"name\":\"no id\"},\n"
                      "{\"id\":\"1\",\"name\":\"no trace\"},\n"
                      "{\"traceId\":\"a\",\"id\":\"2\",\"timestamp\":\"yesterday\"},\n"
                      "{\"traceId\":\"a\",\"id\":\"3\",\"timestamp\":5,\"duration\":-2,\"kind\":\"SIDEWAYS\"},\n"
                      "{\"traceId\":\"a\",\"id\":\"4\",\"timestamp\":5,\"binaryAnnotations\":[]},\n"
                      "{\"traceId\":\"a\",\"id\":\"3\",\"timestamp\":6,\"duration\":1},\n"
                      "{\"traceId\":\"a\",\"id\":\"8\",\"timestamp\":6,\"duration\":1,\"kind\":\"CLIENT\",\"localEndpoint\":{\"serviceName\":\"x\"}},\n"
                      "{\"traceId\":\"a\",\"id\":\"8\",\"timestamp\":7,\"duration\":1,\"kind\":\"CLIENT\",\"localEndpoint\":{\"serviceName\":\"y\"}},\n"
                      "7]";
    CHECK(load(&sp, "zipkin", bad) == 0);
    HAS_DIAG("doc.json:1: error: byte 1: span without an id string (found nothing); record skipped");
    HAS_DIAG("doc.json:2: error: byte 33: span 1: traceId must be a non-empty string, found nothing; record skipped");
    HAS_DIAG("span 2: timestamp must be an integer number of microseconds, found a string \"yesterday\"; record skipped");
    HAS_DIAG("span 3: negative duration -2 us; its end is taken from its children");
    HAS_DIAG("span 3: unknown kind a string \"SIDEWAYS\" (taken as local)");
    HAS_DIAG("a Zipkin v1 span (binaryAnnotations): only Zipkin v2 JSON is read");
    HAS_DIAG("note: 1 span part(s) with the id of an earlier span were merged into it (Zipkin spans sent in parts)");
    HAS_DIAG("doc.json:8: error: byte 406: duplicate span id 0000000000000008 in trace a (first at line 7); span dropped");
    HAS_DIAG("a Zipkin span must be an object, found a number 7; record skipped");
    unload(&sp);
}

/* ---- OTLP ---- */

static void test_otlp(void)
{
    lp_spans sp;
    const char *doc =
        "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"api\"}}]},"
        "\"scopeSpans\":[{\"scope\":{\"name\":\"lib\"},\"spans\":["
        "{\"traceId\":\"5B8EFFF798038103D269B633813FC60C\",\"spanId\":\"EEE19B7EC3C1B174\",\"parentSpanId\":\"\","
        "\"name\":\"root\",\"kind\":2,\"startTimeUnixNano\":\"1000\",\"endTimeUnixNano\":\"2000\"},"
        "{\"traceId\":\"5b8efff798038103d269b633813fc60c\",\"spanId\":\"0000000000000002\",\"parentSpanId\":\"eee19b7ec3c1b174\","
        "\"name\":\"async\",\"kind\":\"SPAN_KIND_CONSUMER\",\"startTimeUnixNano\":1500,\"endTimeUnixNano\":2500,"
        "\"links\":[{\"traceId\":\"5b8efff798038103d269b633813fc60c\",\"spanId\":\"eee19b7ec3c1b174\",\"attributes\":"
        "[{\"key\":\"opentracing.ref_type\",\"value\":{\"stringValue\":\"follows_from\"}}]},"
        "{\"traceId\":\"0000000000000000000000000000beef\",\"spanId\":\"0000000000000009\"}]}]}]},"
        "{\"resource\":{\"attributes\":[]},\"instrumentationLibrarySpans\":[{\"spans\":["
        "{\"traceId\":\"beef\",\"spanId\":\"09\",\"name\":\"old\",\"startTimeUnixNano\":\"5\",\"endTimeUnixNano\":\"7\"}]}]}]}";
    CHECK(load(&sp, "otlp", doc) == 0);
    CHECK_EQ_I(sp.n, 3);
    CHECK_EQ_I(sp.ntraces, 2);
    CHECK_EQ_I(DS.nerrors + DS.nwarnings, 0);
    uint32_t r = span_by_id(&sp, "eee19b7ec3c1b174"), a = span_by_id(&sp, "0000000000000002"),
             o = span_by_id(&sp, "0000000000000009");
    CHECK(r != LP_SPAN_NONE && a != LP_SPAN_NONE && o != LP_SPAN_NONE);
    CHECK(sp.kind[r] == LP_SPAN_SERVER && sp.kind[a] == LP_SPAN_CONSUMER && sp.start[a] == 1500 && sp.dur[a] == 1000);
    CHECK(sp.parent[a] == r && (sp.flags[a] & LP_SPAN_FOLLOWS));
    CHECK_STR(svc(&sp, r), "api");
    CHECK(sp.nrefs == 1 && sp.refs[0].target == o && sp.refs[0].type == LP_REF_LINK);
    unload(&sp);

    const char *bad = "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[\n"
                      "{\"traceId\":\"aa\",\"name\":\"no id\",\"startTimeUnixNano\":\"1\"},\n"
                      "{\"traceId\":\"aa\",\"spanId\":\"01\",\"startTimeUnixNano\":\"1.5e\",\"endTimeUnixNano\":\"9\"},\n"
                      "{\"traceId\":\"aa\",\"spanId\":\"02\",\"startTimeUnixNano\":\"10\",\"endTimeUnixNano\":\"4\"},\n"
                      "{\"traceId\":\"aa\",\"spanId\":\"03\",\"parentSpanId\":7,\"startTimeUnixNano\":\"10\"},\n"
                      "{\"traceId\":\"aa\",\"spanId\":\"04\",\"kind\":9,\"startTimeUnixNano\":\"10\",\"endTimeUnixNano\":\"11\"}\n"
                      "]}]},{\"scopeSpans\":{}}]}";
    CHECK(load(&sp, "otlp", bad) == 0);
    HAS_DIAG("doc.json:2: error: byte 44: span without a spanId string (found nothing); record skipped");
    HAS_DIAG("span 01: startTimeUnixNano must be an integer (a decimal string or a number), found a string \"1.5e\"");
    HAS_DIAG("span 02: endTimeUnixNano is 6 ns before startTimeUnixNano (a negative duration); its end is taken from its children");
    HAS_DIAG("span 03: parentSpanId must be a string, found a number 7; record skipped");
    HAS_DIAG("span 04: unknown kind a number 9 (taken as unspecified)");
    HAS_DIAG("\"scopeSpans\" must be an array, found an object; record skipped");
    unload(&sp);
}

/* ---- detection ---- */

static void test_detect(void)
{
    struct {
        const char *head, *want;
    } cases[] = {
        {"{\"data\":[{\"traceID\":\"abc\",\"spans\":[", "jaeger"},
        {"{\n  \"traceID\": \"9ced30503c58dab894a2d7598b01a87a\",\n  \"spans\": [", "jaeger"},
        {"[{\"traceID\":\"a\",\"spans\":[]}]", "jaeger"},
        {"[\n  {\n    \"traceId\": \"14b60fd9ae504820\",\n    \"parentId\": \"cf", "zipkin"},
        {"[[{\"traceId\":\"1\",\"id\":\"2\"}]]", "zipkin"},
        {"{\"resourceSpans\":[{\"resource\":{", "otlp"},
        {"\xEF\xBB\xBF{ \"resourceSpans\" : [", "otlp"},
        {"[{\"name\":\"x\",\"ph\":\"X\",\"ts\":1}]", NULL},   /* Chrome trace events */
        {"{\"traceEvents\":[{\"name\":\"x\"", NULL},
        {"A w1 0 10 processing\n", NULL},
        {"longpole-trace 1\n", NULL},
        {"{\"Event\":\"SparkListenerLogStart\"}", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *h = cases[i].head;
        size_t n = strlen(h) < 64 ? strlen(h) : 64;
        const lp_span_format *f = lp_span_format_detect((const unsigned char *)h, n, NULL);
        const lp_importer *imp = lp_importer_detect((const unsigned char *)h, n, NULL);
        if (cases[i].want) {
            CHECK(f && strcmp(f->name, cases[i].want) == 0);
            CHECK(imp && strcmp(imp->name, cases[i].want) == 0 && imp->detect((const unsigned char *)h, n, NULL) > 50);
        } else {
            CHECK(f == NULL);
            CHECK(imp == NULL || (strcmp(imp->name, "jaeger") && strcmp(imp->name, "zipkin") && strcmp(imp->name, "otlp")));
        }
    }
}

/* ---- the mapping into the activity graph ---- */

static uint64_t rs = 0x243F6A8885A308D3ULL;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
static int64_t rr(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static void add(lp_spans *sp, uint64_t id, uint64_t parent, int64_t s, int64_t e, int kind)
{
    lp_span_rec r;
    memset(&r, 0, sizeof r);
    lp_error err;
    lp_spans_trace(sp, "cafe", 4, &r.trace, &err);
    r.id = id;
    r.pid = parent;
    r.idtext = LP_STR_NONE;
    r.flags = parent ? LP_SPAN_HAS_PARENT : 0;
    r.start = s;
    r.dur = e - s;
    r.kind = (uint8_t)kind;
    r.service = lp_spans_name(sp, "svc", 3);
    r.op = lp_spans_name(sp, "op", 2);
    r.line = id;
    CHECK(lp_spans_add(sp, &r, &err) == LP_OK);
}

/* The sections of the whole-trace critical path of the mapped graph: its activity
 * elements, by span, merged when adjacent. */
static void graph_sections(const lp_spans *sp, char *out, size_t size)
{
    out[0] = '\0';
    lp_diags d;
    lp_diags_init(&d, 10);
    lp_error err;
    lp_builder *b;
    lp_trace *t = NULL;
    if (lp_builder_new(&b, &d, NULL, &err) || lp_spans_to_builder(sp, b, &err) || lp_builder_finish(b, &t, &err)) {
        snprintf(out, size, "(mapping failed: %s)", err.msg);
        lp_diags_release(&d);
        return;
    }
    CHECK_EQ_I(d.nerrors + d.nwarnings, 0);
    CHECK_EQ_I(t->ngaps, 0);
    lp_pag g;
    lp_cpath cp;
    if (lp_pag_build(t, &g, &err) || lp_cpath_compute(&g, &cp, &err)) {
        snprintf(out, size, "(cpath failed)");
        lp_trace_free(t);
        lp_diags_release(&d);
        return;
    }
    size_t o = 0;
    uint64_t last = UINT64_MAX;
    int64_t lastend = INT64_MIN;
    for (size_t k = 0; k < cp.n; k++) {
        const lp_cp_elem *e = &cp.e[k];
        if (e->kind != LP_CP_ACTIVITY || e->end == e->start)
            continue;
        /* the worker name is "<trace>/<span id>" */
        const char *name = lp_trace_worker_name(t, e->worker);
        const char *slash = strrchr(name, '/');
        uint64_t id = strtoull(slash + 1, NULL, 16);
        if (id == last && e->start == lastend) {
            /* extend the previous section: rewrite its end */
            char *dash = strrchr(out, '-');
            o = (size_t)(dash - out) + 1;
            o += (size_t)snprintf(out + o, size - o, "%lld", (long long)e->end);
        } else {
            o += (size_t)snprintf(out + o, size - o, "%s%llu:%lld-%lld", o ? " " : "", (unsigned long long)id,
                                  (long long)e->start, (long long)e->end);
        }
        last = id;
        lastend = e->end;
    }
    lp_cpath_release(&cp);
    lp_pag_release(&g);
    lp_trace_free(t);
    lp_diags_release(&d);
}

static void span_sections(const lp_spans *sp, char *out, size_t size)
{
    lp_spancp cp;
    lp_spancp_init(&cp);
    lp_error err;
    out[0] = '\0';
    if (lp_spancp_trace(&cp, sp, 0, &err) == LP_OK) {
        size_t o = 0;
        for (size_t k = 0; k < cp.nsec; k++)
            o += (size_t)snprintf(out + o, size - o, "%s%llu:%lld-%lld", k ? " " : "",
                                  (unsigned long long)sp->id[cp.sec[k].span], (long long)cp.sec[k].start,
                                  (long long)cp.sec[k].end);
    }
    lp_spancp_release(&cp);
}

static void test_mapping(void)
{
    /* a small case checked by hand: the parent waits for its child's return */
    lp_spans sp;
    lp_diags_init(&DS, 50);
    lp_spans_init(&sp, &DS);
    add(&sp, 1, 0, 0, 100, LP_SPAN_SERVER);
    add(&sp, 2, 1, 10, 40, LP_SPAN_CLIENT);
    add(&sp, 3, 1, 20, 90, LP_SPAN_PRODUCER);
    add(&sp, 4, 3, 50, 200, LP_SPAN_CONSUMER);
    lp_error err;
    CHECK(lp_spans_finish(&sp, &err) == LP_OK);
    lp_builder *b;
    lp_trace *t;
    CHECK(lp_builder_new(&b, &DS, NULL, &err) == LP_OK && lp_spans_to_builder(&sp, b, &err) == LP_OK &&
          lp_builder_finish(b, &t, &err) == LP_OK);
    CHECK_EQ_I(t->nworkers, 4);
    CHECK_EQ_I(t->nmsgs, 5); /* 3 calls, 2 returns (the consumer is not waited for) */
    uint32_t w1 = lp_trace_find_worker(t, "cafe/0000000000000001");
    CHECK(w1 != LP_NONE32);
    /* span 1: processing 0-20 (calls at 10 and 20), waiting 20-90 (returns at 40, 90), processing 90-100 */
    char acts[512] = "";
    size_t o = 0;
    for (uint64_t i = t->wfirst[w1]; i < t->wfirst[w1 + 1]; i++)
        o += (size_t)snprintf(acts + o, sizeof acts - o, "%s%s[%lld,%lld]", o ? " " : "", lp_trace_type_name(t, t->atype[i]),
                              (long long)t->astart[i], (long long)t->aend[i]);
    CHECK_STR(acts, "processing[0,20] waiting[20,90] processing[90,100]");
    CHECK_STR(lp_trace_str(t, lp_trace_attr(t, t->wattr[w1], "kind")), "server");
    CHECK_STR(lp_trace_str(t, t->aop[t->wfirst[w1]]), "svc op");
    lp_trace_free(t);
    lp_spans_release(&sp);
    lp_diags_release(&DS);

    /* random trees with children inside their parents and distinct instants: the
     * graph's critical path is the span-tree critical path */
    char g[8192], s[8192];
    for (int iter = 0; iter < 1500; iter++) {
        lp_diags_init(&DS, 50);
        lp_spans_init(&sp, &DS);
        int n = (int)rr(1, 30);
        int64_t *st = malloc(sizeof(int64_t) * (size_t)n), *en = malloc(sizeof(int64_t) * (size_t)n);
        for (int i = 0; i < n; i++) {
            int p = i ? (int)rr(0, i - 1) : -1;
            if (p >= 0 && en[p] - st[p] < 1000)
                p = 0; /* no room inside: hang it under the root */
            if (p < 0) {
                st[i] = 0;
                en[i] = 1000000000;
            } else {
                int64_t a = rr(st[p] + 1, en[p] - 2), z = rr(a + 1, en[p] - 1);
                st[i] = a;
                en[i] = z;
            }
            add(&sp, (uint64_t)i + 1, p >= 0 ? (uint64_t)p + 1 : 0, st[i], en[i], (int)rr(1, 3));
        }
        CHECK(lp_spans_finish(&sp, &err) == LP_OK);
        graph_sections(&sp, g, sizeof g);
        span_sections(&sp, s, sizeof s);
        t_checks++;
        if (strcmp(g, s) != 0) {
            t_failures++;
            fprintf(stderr, "mapping mismatch (iteration %d, %d spans):\n  graph %s\n  spans %s\n", iter, n, g, s);
        }
        free(st);
        free(en);
        lp_spans_release(&sp);
        lp_diags_release(&DS);
    }
}

/* the importer interface: a Jaeger file through lp_trace_load */
static void test_load(void)
{
    const char *path = "test_spanimport.tmp.json";
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("{\"traceID\":\"t\",\"spans\":[{\"spanID\":\"1\",\"operationName\":\"a\",\"startTime\":1,\"duration\":9,"
          "\"processID\":\"p\"},{\"spanID\":\"2\",\"operationName\":\"b\",\"startTime\":2,\"duration\":3,\"processID\":\"p\","
          "\"references\":[{\"refType\":\"CHILD_OF\",\"spanID\":\"1\"}]}],\"processes\":{\"p\":{\"serviceName\":\"s\"}}}",
          f);
    fclose(f);
    lp_diags d;
    lp_diags_init(&d, 10);
    lp_error err;
    lp_trace *t;
    const char *paths[] = {path};
    CHECK(lp_trace_load(paths, 1, NULL, &d, &t, &err) == LP_OK);
    if (t) {
        CHECK_EQ_I(t->nworkers, 2);
        CHECK_EQ_I(t->nmsgs, 2);
        CHECK(t->tmin == 1000 && t->tmax == 10000);
        lp_trace_free(t);
    }
    CHECK_EQ_I(d.nerrors, 0);
    lp_diags_release(&d);
    remove(path);
}

int main(void)
{
    test_jaeger();
    test_zipkin();
    test_otlp();
    test_detect();
    test_mapping();
    test_load();
    return t_done("test_spanimport");
}
