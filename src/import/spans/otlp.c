/* otlp.c: OpenTelemetry traces in the OTLP JSON encoding (opentelemetry-proto's
 * ExportTraceServiceRequest with the OTLP/JSON rules of docs/specification.md:
 * lowerCamelCase keys, hex trace and span ids, int64 as decimal strings or numbers,
 * enums as integers) into the span table, and the "otlp" importer.
 *
 * Shapes read: {"resourceSpans": [...]}, and several of them one after another (the
 * collector's file exporter writes one per line). The resourceSpans array is streamed:
 * memory holds one resource's spans at a time.
 *
 * resourceSpans[].resource.attributes["service.name"] names the service;
 * scopeSpans[] (or instrumentationLibrarySpans[] of OTLP before 0.15) hold spans:
 * traceId, spanId, parentSpanId ("" for a root), name, kind (0 unspecified,
 * 1 internal, 2 server, 3 client, 4 producer, 5 consumer; enum names are accepted
 * too), startTimeUnixNano, endTimeUnixNano, links [{traceId, spanId, attributes}].
 * A link to the parent span whose attribute opentracing.ref_type is "follows_from"
 * (how Jaeger's and the OpenTracing shim's FOLLOWS_FROM arrive in OTLP) makes the
 * parent reference asynchronous; other links are kept as references. Attributes,
 * events and status are not kept.
 */
#include "longpole/model/span.h"
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/import.h"
#include "longpole/import/spanfmt.h"
#include "longpole/base/alloc.h"
#include "import/spans/spanjson.h"

#include <string.h>

static const char *const KEYS[] = {"resourceSpans", NULL};

typedef struct octx {
    lp_span_import im;
    lp_error *err;
} octx;


/* The string value of attribute `key` in an OTLP attribute list, or NULL. */
static const lp_json *attr_string(const lp_json *attrs, const char *key)
{
    if (!attrs || attrs->type != LP_JSON_ARRAY)
        return NULL;
    for (const lp_json *a = lp_json_first(attrs); a; a = lp_json_next_sibling(a))
        if (lp_json_str_is(lp_json_get(a, "key"), key)) {
            const lp_json *v = lp_json_get(lp_json_get(a, "value"), "stringValue");
            return v && v->type == LP_JSON_STRING ? v : NULL;
        }
    return NULL;
}

static int kind_of(const lp_json *k)
{
    int64_t v;
    if (k && k->type == LP_JSON_NUMBER && lp_json_i64(k, &v) == 0 && v >= 0 && v <= 5)
        return (int)v;
    static const char *const names[] = {"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER",
                                        "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"};
    for (int i = 0; i < 6; i++)
        if (lp_json_str_is(k, names[i]))
            return i;
    return -1;
}

/* The members of a span that matter. */
typedef struct ofields {
    const lp_json *tr, *id, *pid, *kind, *name, *st, *en, *links;
} ofields;

static void fields(const lp_json *n, ofields *f)
{
    memset(f, 0, sizeof *f);
    for (const lp_json *m = lp_json_first(n); m; m = lp_json_next_sibling(m)) {
        if (LP_JSON_KEY(m, "traceId"))
            f->tr = m;
        else if (LP_JSON_KEY(m, "spanId"))
            f->id = m;
        else if (LP_JSON_KEY(m, "parentSpanId"))
            f->pid = m;
        else if (LP_JSON_KEY(m, "kind"))
            f->kind = m;
        else if (LP_JSON_KEY(m, "name"))
            f->name = m;
        else if (LP_JSON_KEY(m, "startTimeUnixNano"))
            f->st = m;
        else if (LP_JSON_KEY(m, "endTimeUnixNano"))
            f->en = m;
        else if (LP_JSON_KEY(m, "links"))
            f->links = m;
    }
}

/* Start and end of span r: 1 when the record is skipped (reported), else 0. */
static int times(lp_span_import *im, const lp_json *n, const ofields *f, lp_span_rec *r)
{
    char w[80];
    const lp_json *st = f->st, *en = f->en;
    if (!st || lp_json_i64_lenient(st, &r->start)) {
        lp_span_import_skip(im, LP_SKIP_TIME, st ? st : n,
                            "span %s: startTimeUnixNano must be an integer (a decimal string or a number), found %s",
                            f->id->s, lp_json_what(st, w, sizeof w));
        return 1;
    }
    int64_t end;
    if (!en || en->type == LP_JSON_NULL) {
        r->flags |= LP_SPAN_NO_DURATION;
    } else if (lp_json_i64_lenient(en, &end)) {
        lp_span_import_skip(im, LP_SKIP_FIELD, en,
                            "span %s: endTimeUnixNano must be an integer (a decimal string or a number), found %s",
                            f->id->s, lp_json_what(en, w, sizeof w));
        return 1;
    } else if (end < r->start) {
        lp_spans_report(im->sp, LP_SEV_ERROR, en->off, en->line,
                        "span %s: endTimeUnixNano is %lld ns before startTimeUnixNano (a negative duration); its end is "
                        "taken from its children",
                        f->id->s, (long long)(r->start - end));
        r->flags |= LP_SPAN_NO_DURATION;
    } else if (end == 0 && r->start > 0) {
        r->flags |= LP_SPAN_NO_DURATION; /* unset: 0 is the proto default */
    } else {
        r->dur = end - r->start;
    }
    return 0;
}

/* Parent, kind and name of span r: 1 when the record is skipped (reported), else 0. */
static int parent_kind_name(lp_span_import *im, const ofields *f, lp_span_rec *r)
{
    lp_spans *sp = im->sp;
    char w[80];
    const lp_json *pid = f->pid, *kind = f->kind, *name = f->name;
    if (pid && pid->type == LP_JSON_STRING && pid->len) {
        lp_str t;
        lp_spans_id(sp, pid->s, pid->len, &r->pid, &t);
        if (r->pid != 0 || t != LP_STR_NONE)
            r->flags |= LP_SPAN_HAS_PARENT;
    } else if (pid && pid->type != LP_JSON_STRING && pid->type != LP_JSON_NULL) {
        lp_span_import_skip(im, LP_SKIP_FIELD, pid, "span %s: parentSpanId must be a string, found %s", f->id->s,
                            lp_json_what(pid, w, sizeof w));
        return 1;
    }
    if (kind) {
        int k = kind_of(kind);
        if (k < 0)
            lp_spans_report(sp, LP_SEV_WARNING, kind->off, kind->line, "span %s: unknown kind %s (taken as unspecified)",
                            f->id->s, lp_json_what(kind, w, sizeof w));
        else
            r->kind = (uint8_t)k;
    }
    if (name && name->type != LP_JSON_STRING && name->type != LP_JSON_NULL) {
        lp_span_import_skip(im, LP_SKIP_FIELD, name, "span %s: name must be a string, found %s", f->id->s,
                            lp_json_what(name, w, sizeof w));
        return 1;
    }
    r->op = name && name->type == LP_JSON_STRING ? lp_spans_name(sp, name->s, name->len) : LP_STR_EMPTY;
    return 0;
}

/* A follows_from link to the parent of span r makes its parent reference asynchronous;
 * returns that link, or NULL. */
static const lp_json *parent_link(lp_spans *sp, const ofields *f, lp_span_rec *r)
{
    const lp_json *links = f->links, *tr = f->tr;
    if (!links || links->type != LP_JSON_ARRAY || !(r->flags & LP_SPAN_HAS_PARENT))
        return NULL;
    for (const lp_json *l = lp_json_first(links); l; l = lp_json_next_sibling(l)) {
        const lp_json *ls = lp_json_get(l, "spanId"), *lt = lp_json_get(l, "traceId");
        const lp_json *rt = attr_string(lp_json_get(l, "attributes"), "opentracing.ref_type");
        if (!ls || ls->type != LP_JSON_STRING || !lp_json_str_is(rt, "follows_from"))
            continue;
        uint64_t v;
        lp_str t;
        lp_spans_id(sp, ls->s, ls->len, &v, &t);
        if (v == r->pid &&
            (!lt || (lt->type == LP_JSON_STRING && tr->len == lt->len && memcmp(tr->s, lt->s, lt->len) == 0))) {
            r->flags |= LP_SPAN_FOLLOWS;
            return l;
        }
    }
    return NULL;
}

/* The links of span r other than the one to its parent, as references. */
static lp_status other_links(octx *c, const ofields *f, const lp_span_rec *r, const lp_json *plink)
{
    lp_span_import *im = &c->im;
    lp_spans *sp = im->sp;
    const lp_json *links = f->links;
    if (!links || links->type != LP_JSON_ARRAY)
        return LP_OK;
    lp_status s;
    int ok;
    for (const lp_json *l = lp_json_first(links); l; l = lp_json_next_sibling(l)) {
        if (l == plink)
            continue;
        const lp_json *ls = lp_json_get(l, "spanId"), *lt = lp_json_get(l, "traceId");
        if (!ls || ls->type != LP_JSON_STRING || !ls->len) {
            lp_spans_report(sp, LP_SEV_WARNING, l->off, l->line, "span %s: a link without spanId is ignored", f->id->s);
            continue;
        }
        uint32_t t2 = r->trace;
        if (lt && (s = lp_span_import_trace(im, lt, &t2, &ok, c->err)))
            return s;
        uint64_t v;
        lp_str t;
        lp_spans_id(sp, ls->s, ls->len, &v, &t);
        const lp_json *rt = attr_string(lp_json_get(l, "attributes"), "opentracing.ref_type");
        lp_span_ref_type type = lp_json_str_is(rt, "follows_from") ? LP_REF_FOLLOWS_FROM
                                : lp_json_str_is(rt, "child_of")    ? LP_REF_CHILD_OF
                                                                    : LP_REF_LINK;
        if ((s = lp_spans_add_ref(sp, t2, v, type, c->err)))
            return s;
    }
    return LP_OK;
}

/* One span: checked field by field (a record that cannot be used is reported and
 * skipped), then added with its links. */
static lp_status ospan(octx *c, const lp_json *n, lp_str service)
{
    lp_span_import *im = &c->im;
    lp_spans *sp = im->sp;
    char w[80];
    if (n->type != LP_JSON_OBJECT) {
        lp_span_import_skip(im, LP_SKIP_SHAPE, n, "an OTLP span must be an object, found %s", lp_json_what(n, w, sizeof w));
        return LP_OK;
    }
    ofields f;
    fields(n, &f);
    lp_span_rec r;
    memset(&r, 0, sizeof r);
    r.idtext = LP_STR_NONE;
    r.off = n->off;
    r.line = n->line;
    r.service = service;
    if (lp_span_import_id(im, n, f.id, "a spanId", &r))
        return LP_OK;
    int skipped;
    lp_status s = lp_span_import_trace_of(im, n, f.tr, "traceId", f.id->s, &r, &skipped, c->err);
    if (s || skipped)
        return s;
    if (times(im, n, &f, &r) || parent_kind_name(im, &f, &r))
        return LP_OK;
    if (r.op == LP_STR_NONE)
        return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
    const lp_json *plink = parent_link(sp, &f, &r);
    if ((s = lp_spans_add(sp, &r, c->err)))
        return s;
    im->nspans++;
    return other_links(c, &f, &r, plink);
}

/* One element of resourceSpans. */
static lp_status resource_spans(octx *c, const lp_json *n)
{
    char w[80];
    if (n->type != LP_JSON_OBJECT) {
        lp_span_import_skip(&c->im, LP_SKIP_SHAPE, n, "an element of resourceSpans must be an object, found %s",
                            lp_json_what(n, w, sizeof w));
        return LP_OK;
    }
    lp_str service = LP_STR_EMPTY;
    const lp_json *sn = attr_string(lp_json_get(lp_json_get(n, "resource"), "attributes"), "service.name");
    if (sn && (service = lp_spans_name(c->im.sp, sn->s, sn->len)) == LP_STR_NONE)
        return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
    const lp_json *scopes = lp_json_get(n, "scopeSpans");
    if (!scopes)
        scopes = lp_json_get(n, "instrumentationLibrarySpans");
    if (!scopes)
        return LP_OK; /* an empty envelope */
    if (scopes->type != LP_JSON_ARRAY) {
        lp_span_import_skip(&c->im, LP_SKIP_SHAPE, scopes, "\"%s\" must be an array, found %s", scopes->key,
                            lp_json_what(scopes, w, sizeof w));
        return LP_OK;
    }
    lp_status s;
    for (const lp_json *sc = lp_json_first(scopes); sc; sc = lp_json_next_sibling(sc)) {
        const lp_json *spans = lp_json_get(sc, "spans");
        if (!spans)
            continue;
        if (spans->type != LP_JSON_ARRAY) {
            lp_span_import_skip(&c->im, LP_SKIP_SHAPE, spans, "\"spans\" must be an array, found %s",
                                lp_json_what(spans, w, sizeof w));
            continue;
        }
        for (const lp_json *e = lp_json_first(spans); e; e = lp_json_next_sibling(e))
            if ((s = ospan(c, e, service)))
                return s;
    }
    return LP_OK;
}

/* The events of an OTLP file: the elements of "resourceSpans". */
static lp_status otlp_event(void *ctx, const lp_json_ev *ev)
{
    octx *c = ctx;
    char w[80];
    if (!ev)
        return LP_OK;
    if (ev->kind == LP_JSON_EV_ELEMENT) {
        if (ev->key)
            return resource_spans(c, ev->tree);
        lp_span_import_skip(&c->im, LP_SKIP_SHAPE, ev->tree,
                            "not OTLP: a top-level array (expected {\"resourceSpans\": [...]})");
    } else if (ev->kind == LP_JSON_EV_MEMBER && strcmp(ev->key, "resourceSpans") == 0 &&
               ev->tree->type != LP_JSON_NULL) {
        lp_span_import_skip(&c->im, LP_SKIP_SHAPE, ev->tree, "\"resourceSpans\" must be an array, found %s",
                            lp_json_what(ev->tree, w, sizeof w));
    } else if (ev->kind == LP_JSON_EV_VALUE) {
        lp_span_import_skip(&c->im, LP_SKIP_SHAPE, ev->tree, "not OTLP: a top-level %s",
                            lp_json_what(ev->tree, w, sizeof w));
    }
    return LP_OK;
}

static lp_status otlp_read(lp_spans *sp, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    octx c;
    memset(&c, 0, sizeof c);
    lp_span_import_init(&c.im, sp, "otlp");
    c.err = err;
    return lp_span_import_run(&c.im, in, KEYS, opts, otlp_event, &c, err);
}

static int otlp_detect(const unsigned char *head, size_t n, const char *path)
{
    char t[3][LP_JSON_HEAD_TOK];
    int k = lp_json_head_tokens(head, n, t, 3);
    (void)path;
    if (k >= 2 && strcmp(t[0], "{") == 0 && strcmp(t[1], "resourceSpans") == 0)
        return 95;
    return 0;
}

const lp_span_format lp_spanfmt_otlp = {"otlp", otlp_detect, otlp_read};

static lp_status otlp_import(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    return lp_spans_import(b, in, &lp_spanfmt_otlp, opts, err);
}

const lp_importer lp_import_otlp = {
    "otlp",
    "OpenTelemetry OTLP JSON ({\"resourceSpans\":[...]}, also one per line): spans (docs/formats/spans.md)",
    otlp_detect,
    otlp_import,
};
