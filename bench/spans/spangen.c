/* spangen.c: write generated span traces (gentree.h) as Jaeger, Zipkin v2 or OTLP
 * JSON, for the import benchmarks and the Python baseline.
 *
 * usage: spangen FORMAT [--traces N] [--spans K] [--bytes B] [--seed S] > out.json
 *   FORMAT  jaeger (query API: {"data":[trace,...]}), zipkin ([span,...]) or otlp
 *           ({"resourceSpans":[...]}, one resourceSpans per trace and service)
 *   --traces N  number of traces (default 1000), or --bytes B: traces until the output
 *               reaches B bytes (k/M/G suffixes)
 *   --spans K   spans per trace (default 50)
 * Output is minified like the APIs write it, with the usual tags (span.kind,
 * http.method, http.status_code, component), a log on one span in ten, and the
 * processes/resources of each trace. Prints "traces spans bytes" on stderr.
 */
#include "gentree.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct out {
    char *b;
    size_t n, cap;
    uint64_t total;
} out;

static void flush(out *o)
{
    if (o->n && fwrite(o->b, 1, o->n, stdout) != o->n) {
        perror("spangen: write");
        exit(1);
    }
    o->total += o->n;
    o->n = 0;
}
static void put(out *o, const char *s, size_t k)
{
    if (o->n + k > o->cap)
        flush(o);
    memcpy(o->b + o->n, s, k);
    o->n += k;
}
static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }
static void putu(out *o, uint64_t v)
{
    char t[24];
    int k = 0;
    do {
        t[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char r[24];
    for (int i = 0; i < k; i++)
        r[i] = t[k - 1 - i];
    put(o, r, (size_t)k);
}
static void puti(out *o, int64_t v)
{
    if (v < 0) {
        put(o, "-", 1);
        putu(o, (uint64_t)(-(v + 1)) + 1);
    } else
        putu(o, (uint64_t)v);
}
static void puthex(out *o, uint64_t v)
{
    static const char hx[] = "0123456789abcdef";
    char t[16];
    for (int i = 15; i >= 0; i--, v >>= 4)
        t[i] = hx[v & 15];
    put(o, t, 16);
}
static void quoted_hex(out *o, uint64_t v)
{
    put(o, "\"", 1);
    puthex(o, v);
    put(o, "\"", 1);
}
static void trace_id(out *o, const gt_trace *t)
{
    put(o, "\"", 1);
    puthex(o, t->hi);
    puthex(o, t->lo);
    put(o, "\"", 1);
}
static void opname(out *o, const gt_span *s)
{
    char b[64];
    int k = snprintf(b, sizeof b, "%s /api/v%d/svc%02d/res%d", gt_verbs[s->op], 1 + s->op % 2, s->service, s->op);
    put(o, b, (size_t)k);
}
static void svcname(out *o, int svc)
{
    char b[32];
    int k = snprintf(b, sizeof b, "service-%02d", svc);
    put(o, b, (size_t)k);
}
static int status_of(const gt_span *s) { return (s->id % 50) == 0 ? 503 : 200; }

static void jaeger_tag_s(out *o, const char *k, const char *v, int *first)
{
    puts_(o, *first ? "{\"key\":\"" : ",{\"key\":\"");
    *first = 0;
    puts_(o, k);
    puts_(o, "\",\"type\":\"string\",\"value\":\"");
    puts_(o, v);
    puts_(o, "\"}");
}

static void jaeger_trace(out *o, const gt_trace *t)
{
    int used[GT_NSERVICES] = {0};
    puts_(o, "{\"traceID\":");
    trace_id(o, t);
    puts_(o, ",\"spans\":[");
    for (int i = 0; i < t->n; i++) {
        const gt_span *s = &t->s[i];
        used[s->service] = 1;
        if (i)
            put(o, ",", 1);
        puts_(o, "{\"traceID\":");
        trace_id(o, t);
        puts_(o, ",\"spanID\":");
        quoted_hex(o, s->id);
        puts_(o, ",\"flags\":1,\"operationName\":\"");
        opname(o, s);
        puts_(o, "\",\"references\":[");
        if (s->parent >= 0) {
            puts_(o, s->follows ? "{\"refType\":\"FOLLOWS_FROM\",\"traceID\":" : "{\"refType\":\"CHILD_OF\",\"traceID\":");
            trace_id(o, t);
            puts_(o, ",\"spanID\":");
            quoted_hex(o, t->s[s->parent].id);
            puts_(o, "}");
        }
        puts_(o, "],\"startTime\":");
        puti(o, s->start);
        puts_(o, ",\"duration\":");
        puti(o, s->dur);
        puts_(o, ",\"tags\":[");
        int first = 1;
        if (s->kind != GT_INTERNAL)
            jaeger_tag_s(o, "span.kind", gt_kind_lower[s->kind], &first);
        jaeger_tag_s(o, "http.method", gt_verbs[s->op], &first);
        puts_(o, ",{\"key\":\"http.status_code\",\"type\":\"int64\",\"value\":");
        puti(o, status_of(s));
        puts_(o, "}");
        jaeger_tag_s(o, "component", "net/http", &first);
        if (status_of(s) != 200)
            puts_(o, ",{\"key\":\"error\",\"type\":\"bool\",\"value\":true}");
        puts_(o, "],\"logs\":[");
        if (s->id % 10 == 0) {
            puts_(o, "{\"timestamp\":");
            puti(o, s->start + s->dur / 2);
            puts_(o, ",\"fields\":[{\"key\":\"event\",\"type\":\"string\",\"value\":\"cache miss\"},"
                     "{\"key\":\"message\",\"type\":\"string\",\"value\":\"falling back to the \\\"slow\\\" path\"}]}");
        }
        puts_(o, "],\"processID\":\"p");
        putu(o, (uint64_t)s->service + 1);
        puts_(o, "\",\"warnings\":null}");
    }
    puts_(o, "],\"processes\":{");
    int first = 1;
    for (int k = 0; k < GT_NSERVICES; k++) {
        if (!used[k])
            continue;
        puts_(o, first ? "\"p" : ",\"p");
        first = 0;
        putu(o, (uint64_t)k + 1);
        puts_(o, "\":{\"serviceName\":\"");
        svcname(o, k);
        puts_(o, "\",\"tags\":[{\"key\":\"hostname\",\"type\":\"string\",\"value\":\"host-");
        putu(o, (uint64_t)k * 7 % 31);
        puts_(o, "\"},{\"key\":\"jaeger.version\",\"type\":\"string\",\"value\":\"Go-2.30.0\"}]}");
    }
    puts_(o, "},\"warnings\":null}");
}

static void zipkin_span(out *o, const gt_trace *t, const gt_span *s)
{
    puts_(o, "{\"traceId\":");
    trace_id(o, t);
    if (s->parent >= 0) {
        puts_(o, ",\"parentId\":");
        quoted_hex(o, t->s[s->parent].id);
    }
    puts_(o, ",\"id\":");
    quoted_hex(o, s->id);
    if (s->kind != GT_INTERNAL) {
        puts_(o, ",\"kind\":\"");
        puts_(o, gt_kind_upper[s->kind]);
        puts_(o, "\"");
    }
    puts_(o, ",\"name\":\"");
    opname(o, s);
    puts_(o, "\",\"timestamp\":");
    puti(o, s->start);
    puts_(o, ",\"duration\":");
    puti(o, s->dur);
    puts_(o, ",\"localEndpoint\":{\"serviceName\":\"");
    svcname(o, s->service);
    puts_(o, "\",\"ipv4\":\"10.0.");
    putu(o, (uint64_t)s->service);
    puts_(o, ".7\"}");
    if (s->kind == GT_CLIENT) {
        puts_(o, ",\"remoteEndpoint\":{\"serviceName\":\"");
        svcname(o, (s->service + 1) % GT_NSERVICES);
        puts_(o, "\"}");
    }
    if (s->id % 10 == 0) {
        puts_(o, ",\"annotations\":[{\"timestamp\":");
        puti(o, s->start + s->dur / 2);
        puts_(o, ",\"value\":\"cache miss\"}]");
    }
    puts_(o, ",\"tags\":{\"http.method\":\"");
    puts_(o, gt_verbs[s->op]);
    puts_(o, "\",\"http.status_code\":\"");
    puti(o, status_of(s));
    puts_(o, "\",\"component\":\"net/http\"}}");
}

static void otlp_trace(out *o, const gt_trace *t, int *first_rs)
{
    for (int k = 0; k < GT_NSERVICES; k++) {
        int any = 0;
        for (int i = 0; i < t->n; i++)
            if (t->s[i].service == k) {
                const gt_span *s = &t->s[i];
                if (!any) {
                    puts_(o, *first_rs ? "{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\""
                                       : ",{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"");
                    *first_rs = 0;
                    svcname(o, k);
                    puts_(o, "\"}},{\"key\":\"host.name\",\"value\":{\"stringValue\":\"host-");
                    putu(o, (uint64_t)k * 7 % 31);
                    puts_(o, "\"}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"io.opentelemetry.http\",\"version\":\"1.2.0\"},\"spans\":[");
                    any = 1;
                } else {
                    put(o, ",", 1);
                }
                puts_(o, "{\"traceId\":");
                trace_id(o, t);
                puts_(o, ",\"spanId\":");
                quoted_hex(o, s->id);
                if (s->parent >= 0) {
                    puts_(o, ",\"parentSpanId\":");
                    quoted_hex(o, t->s[s->parent].id);
                }
                puts_(o, ",\"name\":\"");
                opname(o, s);
                puts_(o, "\",\"kind\":");
                static const int kinds[] = {1, 2, 3, 4, 5};
                putu(o, (uint64_t)kinds[s->kind]);
                puts_(o, ",\"startTimeUnixNano\":\"");
                puti(o, s->start * 1000);
                puts_(o, "\",\"endTimeUnixNano\":\"");
                puti(o, (s->start + s->dur) * 1000);
                puts_(o, "\",\"attributes\":[{\"key\":\"http.method\",\"value\":{\"stringValue\":\"");
                puts_(o, gt_verbs[s->op]);
                puts_(o, "\"}},{\"key\":\"http.status_code\",\"value\":{\"intValue\":\"");
                puti(o, status_of(s));
                puts_(o, "\"}}]");
                if (s->parent >= 0 && s->follows) {
                    puts_(o, ",\"links\":[{\"traceId\":");
                    trace_id(o, t);
                    puts_(o, ",\"spanId\":");
                    quoted_hex(o, t->s[s->parent].id);
                    puts_(o, ",\"attributes\":[{\"key\":\"opentracing.ref_type\",\"value\":{\"stringValue\":\"follows_from\"}}]}]");
                }
                puts_(o, ",\"status\":{");
                if (status_of(s) != 200)
                    puts_(o, "\"code\":2");
                puts_(o, "}}");
            }
        if (any)
            puts_(o, "]}]}");
    }
}

static int parse_size(const char *s, uint64_t *v)
{
    char *e;
    double d = strtod(s, &e);
    if (e == s || d < 0)
        return -1;
    if (*e == 'k' || *e == 'K')
        d *= 1e3, e++;
    else if (*e == 'M')
        d *= 1e6, e++;
    else if (*e == 'G')
        d *= 1e9, e++;
    if (*e)
        return -1;
    *v = (uint64_t)d;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: spangen jaeger|zipkin|otlp [--traces N] [--spans K] [--bytes B] [--seed S]\n");
        return 2;
    }
    const char *fmt = argv[1];
    uint64_t ntraces = 1000, nbytes = 0, seed = 42, nspans = 50;
    for (int i = 2; i + 1 < argc; i += 2) {
        uint64_t v;
        if (parse_size(argv[i + 1], &v)) {
            fprintf(stderr, "spangen: bad number '%s'\n", argv[i + 1]);
            return 2;
        }
        if (!strcmp(argv[i], "--traces"))
            ntraces = v;
        else if (!strcmp(argv[i], "--spans"))
            nspans = v;
        else if (!strcmp(argv[i], "--bytes"))
            nbytes = v, ntraces = UINT64_MAX;
        else if (!strcmp(argv[i], "--seed"))
            seed = v;
        else {
            fprintf(stderr, "spangen: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    int f = !strcmp(fmt, "jaeger") ? 0 : !strcmp(fmt, "zipkin") ? 1 : !strcmp(fmt, "otlp") ? 2 : -1;
    if (f < 0 || nspans < 1) {
        fprintf(stderr, "spangen: unknown format '%s'\n", fmt);
        return 2;
    }
    out o = {malloc(1 << 22), 0, 1 << 22, 0};
    gt_trace t;
    t.s = malloc(sizeof(gt_span) * nspans);
    uint64_t st = seed;
    puts_(&o, f == 0 ? "{\"data\":[" : f == 1 ? "[" : "{\"resourceSpans\":[");
    uint64_t k = 0, spans = 0;
    int first_rs = 1;
    int64_t t0 = INT64_C(1700000000000000);
    for (; k < ntraces && (!nbytes || o.total + o.n < nbytes); k++) {
        gt_make(&st, &t, (int)nspans, t0);
        t0 += gt_range(&st, 100, 5000);
        spans += (uint64_t)t.n;
        if (f == 0) {
            if (k)
                put(&o, ",", 1);
            jaeger_trace(&o, &t);
        } else if (f == 1) {
            for (int i = 0; i < t.n; i++) {
                if (k || i)
                    put(&o, ",", 1);
                zipkin_span(&o, &t, &t.s[i]);
            }
        } else {
            otlp_trace(&o, &t, &first_rs);
        }
    }
    puts_(&o, f == 0 ? "],\"total\":0,\"limit\":0,\"offset\":0,\"errors\":null}\n" : f == 1 ? "]\n" : "]}\n");
    flush(&o);
    fprintf(stderr, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", k, spans, o.total);
    free(o.b);
    free(t.s);
    return 0;
}
