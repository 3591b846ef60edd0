/* zipkin.c: Zipkin v2 JSON (zipkin2-api.yaml: what POST /api/v2/spans takes and GET
 * /api/v2/trace/{id} returns) into the span table, and the "zipkin" importer.
 *
 * Shapes read: a top-level array of spans, an array of traces (arrays of spans, as GET
 * /api/v2/traces returns), and spans as top-level objects one after another (JSON
 * lines). Large arrays are streamed element by element.
 *
 * A span: traceId, id, parentId (16 or 32 hex digits; other text is accepted),
 * kind (CLIENT, SERVER, PRODUCER, CONSUMER; absent for local spans), name,
 * timestamp and duration in microseconds (both may be absent: the span is then
 * placed from its children, see span.h), localEndpoint.serviceName, shared. The
 * server half of an RPC may reuse its client's id (shared: true, or just kind SERVER
 * beside a CLIENT with the same id): lp_spans_finish makes it the client's child.
 * Zipkin v1 spans (binaryAnnotations, annotations with endpoints) are reported and
 * skipped. Tags, annotations and remoteEndpoint are not kept.
 */
#include "longpole/model/span.h"
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/import.h"
#include "longpole/import/spanfmt.h"
#include "longpole/base/alloc.h"
#include "import/spans/spanjson.h"

#include <string.h>

typedef struct zctx {
    lp_span_import im;
    lp_error *err;
    int v1_reported;
} zctx;


static lp_status zspan(zctx *c, const lp_json *n)
{
    lp_span_import *im = &c->im;
    lp_spans *sp = im->sp;
    char w[80];
    if (n->type != LP_JSON_OBJECT) {
        lp_span_import_skip(im, LP_SKIP_SHAPE, n, "a Zipkin span must be an object, found %s", lp_json_what(n, w, sizeof w));
        return LP_OK;
    }
    const lp_json *tr = NULL, *id = NULL, *pid = NULL, *kind = NULL, *name = NULL, *ts = NULL, *du = NULL, *le = NULL,
                  *shared = NULL, *v1 = NULL;
    for (const lp_json *m = lp_json_first(n); m; m = lp_json_next_sibling(m)) {
        if (LP_JSON_KEY(m, "traceId"))
            tr = m;
        else if (LP_JSON_KEY(m, "id"))
            id = m;
        else if (LP_JSON_KEY(m, "parentId"))
            pid = m;
        else if (LP_JSON_KEY(m, "kind"))
            kind = m;
        else if (LP_JSON_KEY(m, "name"))
            name = m;
        else if (LP_JSON_KEY(m, "timestamp"))
            ts = m;
        else if (LP_JSON_KEY(m, "duration"))
            du = m;
        else if (LP_JSON_KEY(m, "localEndpoint"))
            le = m;
        else if (LP_JSON_KEY(m, "shared"))
            shared = m;
        else if (LP_JSON_KEY(m, "binaryAnnotations"))
            v1 = m;
    }
    if (v1) {
        if (!c->v1_reported)
            lp_span_import_skip(im, LP_SKIP_UNSUPPORTED, n,
                                "a Zipkin v1 span (binaryAnnotations): only Zipkin v2 JSON is read (convert with zipkin's "
                                "v1 -> v2 tools); later v1 spans are skipped silently");
        else
            im->skipped[LP_SKIP_UNSUPPORTED]++;
        c->v1_reported = 1;
        return LP_OK;
    }
    lp_span_rec r;
    memset(&r, 0, sizeof r);
    r.idtext = LP_STR_NONE;
    r.off = n->off;
    r.line = n->line;
    if (lp_span_import_id(im, n, id, "an id", &r))
        return LP_OK;
    int skipped;
    lp_status s = lp_span_import_trace_of(im, n, tr, "traceId", id->s, &r, &skipped, c->err);
    if (s || skipped)
        return s;
    if (pid && pid->type == LP_JSON_STRING && pid->len) {
        lp_str t;
        lp_spans_id(sp, pid->s, pid->len, &r.pid, &t);
        r.flags |= LP_SPAN_HAS_PARENT;
    } else if (pid && pid->type != LP_JSON_NULL && pid->type != LP_JSON_STRING) {
        lp_span_import_skip(im, LP_SKIP_FIELD, pid, "span %s: parentId must be a string, found %s", id->s,
                            lp_json_what(pid, w, sizeof w));
        return LP_OK;
    }
    if (!ts || ts->type == LP_JSON_NULL) {
        r.flags |= LP_SPAN_NO_START | LP_SPAN_NO_DURATION;
    } else if (lp_span_import_us(ts, &r.start)) {
        lp_span_import_skip(im, LP_SKIP_TIME, ts, "span %s: timestamp must be an integer number of microseconds, found %s",
                            id->s, lp_json_what(ts, w, sizeof w));
        return LP_OK;
    }
    if (lp_span_import_duration(im, du, id->s, &r))
        return LP_OK;
    if (r.flags & LP_SPAN_NO_START)
        r.dur = 0;
    if (kind && kind->type == LP_JSON_STRING) {
        static const char *const kinds[] = {"", "", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"};
        for (int k = 2; k <= 5; k++)
            if (lp_json_str_is(kind, kinds[k]))
                r.kind = (uint8_t)k;
        if (!r.kind)
            lp_spans_report(sp, LP_SEV_WARNING, kind->off, kind->line, "span %s: unknown kind %s (taken as local)", id->s,
                            lp_json_what(kind, w, sizeof w));
    }
    if (name && name->type != LP_JSON_STRING && name->type != LP_JSON_NULL) {
        lp_span_import_skip(im, LP_SKIP_FIELD, name, "span %s: name must be a string, found %s", id->s,
                            lp_json_what(name, w, sizeof w));
        return LP_OK;
    }
    r.op = name && name->type == LP_JSON_STRING ? lp_spans_name(sp, name->s, name->len) : LP_STR_EMPTY;
    r.service = LP_STR_EMPTY;
    const lp_json *sn = lp_json_get(le, "serviceName");
    if (sn && sn->type == LP_JSON_STRING)
        r.service = lp_spans_name(sp, sn->s, sn->len);
    if (r.op == LP_STR_NONE || r.service == LP_STR_NONE)
        return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
    if (shared && shared->type == LP_JSON_TRUE)
        r.flags |= LP_SPAN_SHARED;
    r.flags |= LP_SPAN_PARTS;
    if ((s = lp_spans_add(sp, &r, c->err)))
        return s;
    im->nspans++;
    return LP_OK;
}

/* An element of the top-level array: a span, or a trace (an array of spans). */
static lp_status zelement(zctx *c, const lp_json *n)
{
    if (n->type != LP_JSON_ARRAY)
        return zspan(c, n);
    lp_status s;
    for (const lp_json *e = lp_json_first(n); e; e = lp_json_next_sibling(e))
        if ((s = zspan(c, e)))
            return s;
    return LP_OK;
}

/* The events of a Zipkin file: spans, or traces (arrays of spans). */
static lp_status zipkin_event(void *ctx, const lp_json_ev *ev)
{
    if (ev && (ev->kind == LP_JSON_EV_ELEMENT || ev->kind == LP_JSON_EV_VALUE))
        return zelement(ctx, ev->tree);
    return LP_OK;
}

static lp_status zipkin_read(lp_spans *sp, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    zctx c;
    memset(&c, 0, sizeof c);
    lp_span_import_init(&c.im, sp, "zipkin");
    c.err = err;
    return lp_span_import_run(&c.im, in, NULL, opts, zipkin_event, &c, err);
}

static int zipkin_detect(const unsigned char *head, size_t n, const char *path)
{
    char t[5][LP_JSON_HEAD_TOK];
    int k = lp_json_head_tokens(head, n, t, 5);
    int i = 0;
    (void)path;
    if (k > 0 && strcmp(t[0], "[") == 0)
        i = 1;
    if (i && k > 1 && strcmp(t[1], "[") == 0)
        i = 2; /* an array of traces */
    if (k <= i || strcmp(t[i], "{") != 0 || k <= i + 1)
        return 0;
    const char *key = t[i + 1];
    if (strcmp(key, "traceId") == 0)
        return i ? 88 : 70;
    if (strcmp(key, "parentId") == 0 || strcmp(key, "id") == 0)
        return i ? 60 : 30;
    return 0;
}

const lp_span_format lp_spanfmt_zipkin = {"zipkin", zipkin_detect, zipkin_read};

static lp_status zipkin_import(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    return lp_spans_import(b, in, &lp_spanfmt_zipkin, opts, err);
}

const lp_importer lp_import_zipkin = {
    "zipkin",
    "Zipkin v2 JSON (an array of spans, or of traces): spans (docs/formats/spans.md)",
    zipkin_detect,
    zipkin_import,
};
