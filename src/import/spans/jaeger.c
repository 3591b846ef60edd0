/* jaeger.c: Jaeger JSON (the model of jaeger's model/json, which the query API and
 * the UI's "Download JSON" write) into the span table, and the "jaeger" importer.
 *
 * Shapes read: the query API's {"data": [trace, ...], "total": ..}, a bare trace
 * {"traceID": .., "spans": [span, ...], "processes": {..}}, and a top-level array of
 * traces or of spans. Large files are streamed: traces of "data" one at a time, and
 * the spans of a bare trace one at a time (their processID is resolved when
 * "processes" arrives, before or after the spans).
 *
 * A span: traceID, spanID (hex, or any text), operationName, references
 * [{refType CHILD_OF|FOLLOWS_FROM, traceID, spanID}] (the first CHILD_OF in the same
 * trace is the parent, else the first FOLLOWS_FROM, which is then not waited on;
 * the others are kept as references), the deprecated parentSpanID, startTime and
 * duration in microseconds (integers), processID (or an embedded process object)
 * naming the service, and the tag span.kind. Tags other than span.kind, logs and
 * warnings are not kept. Records that cannot be used are reported with their file,
 * line and byte offset and skipped; the reader goes on.
 */
#include "longpole/model/span.h"
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/import.h"
#include "longpole/import/spanfmt.h"
#include "longpole/base/alloc.h"
#include "import/spans/spanjson.h"

#include <string.h>
#include <strings.h>

static const char *const KEYS[] = {"data", "spans", NULL};

typedef struct proc {
    lp_str pid;      /* processID */
    lp_str service;  /* its serviceName */
} proc;

typedef struct pend {
    uint32_t span;   /* span waiting for its process */
    lp_str pid;
} pend;

typedef struct jctx {
    lp_span_import im;
    lp_error *err;
    proc *procs;            /* processes of the current trace */
    size_t nprocs, capprocs;
    int have_procs;         /* the current trace's processes are known */
    pend *pending;          /* bare trace: spans seen before "processes" */
    size_t npend, cappend;
    uint32_t doc_trace;     /* traceID of the enclosing trace (LP_SPAN_NONE if none) */
    lp_str k_kind;          /* "span.kind" */
} jctx;

static int kind_of(const lp_json *v)
{
    static const char *const names[] = {"", "internal", "server", "client", "producer", "consumer"};
    if (!v || v->type != LP_JSON_STRING)
        return LP_SPAN_UNSPECIFIED;
    for (int k = 1; k <= 5; k++)
        if (strlen(names[k]) == v->len && strncasecmp(v->s, names[k], v->len) == 0)
            return k;
    return LP_SPAN_UNSPECIFIED;
}

static int key_eq(const lp_json *m, const char *k, size_t n) { return m->klen == n && memcmp(m->key, k, n) == 0; }
#define KEY(m, lit) key_eq(m, lit, sizeof lit - 1)

/* microseconds (integer) to ns; -1 if not an integer or out of range */
static int us_to_ns(const lp_json *v, int64_t *ns)
{
    int64_t us;
    if (lp_json_i64(v, &us) && lp_json_i64_lenient(v, &us))
        return -1;
    if (us > INT64_MAX / 1000 || us < INT64_MIN / 1000)
        return -1;
    *ns = us * 1000;
    return 0;
}

static lp_str find_proc(const jctx *c, lp_str pid)
{
    for (size_t i = 0; i < c->nprocs; i++)
        if (c->procs[i].pid == pid)
            return c->procs[i].service;
    return LP_STR_NONE;
}

/* Read a "processes" object into the map (replacing it). */
static lp_status read_procs(jctx *c, const lp_json *obj)
{
    c->nprocs = 0;
    c->have_procs = 1;
    if (!obj || obj->type != LP_JSON_OBJECT) {
        char w[80];
        if (obj)
            lp_spans_report(c->im.sp, LP_SEV_WARNING, obj->off, obj->line,
                            "\"processes\" should be an object, found %s; services are unknown",
                            lp_json_what(obj, w, sizeof w));
        return LP_OK;
    }
    for (const lp_json *m = lp_json_first(obj); m; m = lp_json_next_sibling(m)) {
        const lp_json *sn = lp_json_get(m, "serviceName");
        if (!sn || sn->type != LP_JSON_STRING) {
            char w[80];
            lp_spans_report(c->im.sp, LP_SEV_WARNING, m->off, m->line,
                            "process '%s' has no serviceName string (found %s)", m->key, lp_json_what(sn, w, sizeof w));
            continue;
        }
        if (c->nprocs == c->capprocs) {
            void *p = c->procs;
            if (lp_grow(&p, &c->capprocs, c->nprocs + 1, sizeof(proc)))
                return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
            c->procs = p;
        }
        proc *pr = &c->procs[c->nprocs++];
        pr->pid = lp_spans_name(c->im.sp, m->key, m->klen);
        pr->service = lp_spans_name(c->im.sp, sn->s, sn->len);
        if (pr->pid == LP_STR_NONE || pr->service == LP_STR_NONE)
            return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
    }
    return LP_OK;
}

/* Resolve spans that were waiting for the processes of a bare trace. */
static void resolve_pending(jctx *c)
{
    lp_spans *sp = c->im.sp;
    for (size_t i = 0; i < c->npend; i++) {
        lp_str s = find_proc(c, c->pending[i].pid);
        uint32_t x = c->pending[i].span;
        if (s != LP_STR_NONE) {
            sp->service[x] = s;
        } else {
            lp_spans_report(sp, LP_SEV_WARNING, sp->off[x], sp->line[x],
                            "processID '%s' is not in the trace's processes; the service is unknown",
                            lp_spans_str(sp, c->pending[i].pid));
        }
    }
    c->npend = 0;
}

static lp_status span(jctx *c, const lp_json *n, int bare)
{
    lp_span_import *im = &c->im;
    lp_spans *sp = im->sp;
    char w[80];
    if (n->type != LP_JSON_OBJECT) {
        lp_span_import_skip(im, LP_SKIP_SHAPE, n, "a Jaeger span must be an object, found %s", lp_json_what(n, w, sizeof w));
        return LP_OK;
    }
    const lp_json *tr = NULL, *sid = NULL, *op = NULL, *refs = NULL, *st = NULL, *du = NULL, *pidn = NULL,
                  *procn = NULL, *tags = NULL, *pspan = NULL;
    for (const lp_json *m = lp_json_first(n); m; m = lp_json_next_sibling(m)) {
        switch (m->key[0]) {
        case 't':
            if (KEY(m, "traceID"))
                tr = m;
            else if (KEY(m, "tags"))
                tags = m;
            break;
        case 's':
            if (KEY(m, "spanID"))
                sid = m;
            else if (KEY(m, "startTime"))
                st = m;
            break;
        case 'o':
            if (KEY(m, "operationName"))
                op = m;
            break;
        case 'r':
            if (KEY(m, "references"))
                refs = m;
            break;
        case 'd':
            if (KEY(m, "duration"))
                du = m;
            break;
        case 'p':
            if (KEY(m, "processID"))
                pidn = m;
            else if (KEY(m, "process"))
                procn = m;
            else if (KEY(m, "parentSpanID"))
                pspan = m;
            break;
        default: break;
        }
    }
    lp_span_rec r;
    memset(&r, 0, sizeof r);
    r.idtext = LP_STR_NONE;
    r.off = n->off;
    r.line = n->line;
    if (!sid || sid->type != LP_JSON_STRING || sid->len == 0) {
        lp_span_import_skip(im, LP_SKIP_NO_ID, sid ? sid : n, "span without a spanID string (found %s)",
                            lp_json_what(sid, w, sizeof w));
        return LP_OK;
    }
    lp_spans_id(sp, sid->s, sid->len, &r.id, &r.idtext);
    int ok;
    lp_status s;
    if (tr) {
        if ((s = lp_span_import_trace(im, tr, &r.trace, &ok, c->err)))
            return s;
        if (!ok) {
            lp_span_import_skip(im, LP_SKIP_NO_TRACE, tr, "span %s: traceID must be a non-empty string, found %s",
                                sid->s, lp_json_what(tr, w, sizeof w));
            return LP_OK;
        }
    } else if (c->doc_trace != LP_SPAN_NONE) {
        r.trace = c->doc_trace;
    } else {
        lp_span_import_skip(im, LP_SKIP_NO_TRACE, n, "span %s has no traceID", sid->s);
        return LP_OK;
    }
    if (!st || us_to_ns(st, &r.start)) {
        lp_span_import_skip(im, LP_SKIP_TIME, st ? st : n,
                            "span %s: startTime must be an integer number of microseconds, found %s", sid->s,
                            lp_json_what(st, w, sizeof w));
        return LP_OK;
    }
    if (!du || du->type == LP_JSON_NULL) {
        r.flags |= LP_SPAN_NO_DURATION;
    } else if (us_to_ns(du, &r.dur)) {
        lp_span_import_skip(im, LP_SKIP_FIELD, du, "span %s: duration must be an integer number of microseconds, found %s",
                            sid->s, lp_json_what(du, w, sizeof w));
        return LP_OK;
    } else if (r.dur < 0) {
        lp_spans_report(sp, LP_SEV_ERROR, du->off, du->line,
                        "span %s: negative duration %lld us; its end is taken from its children", sid->s,
                        (long long)(r.dur / 1000));
        r.dur = 0;
        r.flags |= LP_SPAN_NO_DURATION;
    }
    if (op && op->type != LP_JSON_STRING) {
        lp_span_import_skip(im, LP_SKIP_FIELD, op, "span %s: operationName must be a string, found %s", sid->s,
                            lp_json_what(op, w, sizeof w));
        return LP_OK;
    }
    r.op = op ? lp_spans_name(sp, op->s, op->len) : LP_STR_EMPTY;
    r.service = LP_STR_EMPTY;
    if (r.op == LP_STR_NONE)
        return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
    /* parent: the first CHILD_OF in this trace, else the first FOLLOWS_FROM */
    const lp_json *parent = NULL;
    int parent_follows = 0;
    if (refs && refs->type == LP_JSON_ARRAY) {
        for (int pass = 0; pass < 2 && !parent; pass++)
            for (const lp_json *e = lp_json_first(refs); e; e = lp_json_next_sibling(e)) {
                const lp_json *rt = lp_json_get(e, "refType"), *rs = lp_json_get(e, "spanID"),
                              *rtr = lp_json_get(e, "traceID");
                if (!rs || rs->type != LP_JSON_STRING || !rs->len)
                    continue;
                int follows = lp_json_str_is(rt, "FOLLOWS_FROM");
                if (follows != pass)
                    continue;
                if (rtr && rtr->type == LP_JSON_STRING && rtr->len) {
                    uint32_t t2;
                    if ((s = lp_span_import_trace(im, rtr, &t2, &ok, c->err)))
                        return s;
                    if (t2 != r.trace)
                        continue;
                }
                parent = rs;
                parent_follows = follows;
                break;
            }
    } else if (refs && refs->type != LP_JSON_NULL) {
        lp_spans_report(sp, LP_SEV_WARNING, refs->off, refs->line, "span %s: references should be an array, found %s",
                        sid->s, lp_json_what(refs, w, sizeof w));
    }
    if (!parent && pspan && pspan->type == LP_JSON_STRING && pspan->len) {
        uint64_t v;
        lp_str t;
        if (lp_spans_id(sp, pspan->s, pspan->len, &v, &t) == 0 && v != 0)
            parent = pspan;
    }
    if (parent) {
        lp_str t;
        lp_spans_id(sp, parent->s, parent->len, &r.pid, &t);
        r.flags |= LP_SPAN_HAS_PARENT | (parent_follows ? LP_SPAN_FOLLOWS : 0);
    }
    /* kind */
    if (tags && tags->type == LP_JSON_ARRAY)
        for (const lp_json *e = lp_json_first(tags); e; e = lp_json_next_sibling(e)) {
            const lp_json *k = lp_json_get(e, "key");
            if (k && lp_json_str_is(k, "span.kind")) {
                r.kind = (uint8_t)kind_of(lp_json_get(e, "value"));
                break;
            }
        }
    /* service */
    lp_str pending_pid = LP_STR_NONE;
    if (procn && procn->type == LP_JSON_OBJECT) {
        const lp_json *sn = lp_json_get(procn, "serviceName");
        if (sn && sn->type == LP_JSON_STRING)
            r.service = lp_spans_name(sp, sn->s, sn->len);
    } else if (pidn && pidn->type == LP_JSON_STRING) {
        lp_str pid = lp_spans_name(sp, pidn->s, pidn->len);
        if (pid == LP_STR_NONE)
            return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
        lp_str svc = find_proc(c, pid);
        if (svc != LP_STR_NONE)
            r.service = svc;
        else if (bare && !c->have_procs)
            pending_pid = pid;
        else
            lp_spans_report(sp, LP_SEV_WARNING, pidn->off, pidn->line,
                            "span %s: processID '%s' is not in the trace's processes; the service is unknown", sid->s,
                            pidn->s);
    }
    if (r.service == LP_STR_NONE)
        return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
    if ((s = lp_spans_add(sp, &r, c->err)))
        return s;
    im->nspans++;
    if (pending_pid != LP_STR_NONE) {
        if (c->npend == c->cappend) {
            void *p = c->pending;
            if (lp_grow(&p, &c->cappend, c->npend + 1, sizeof(pend)))
                return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
            c->pending = p;
        }
        c->pending[c->npend++] = (pend){(uint32_t)sp->n - 1, pending_pid};
    }
    /* the other references */
    if (refs && refs->type == LP_JSON_ARRAY)
        for (const lp_json *e = lp_json_first(refs); e; e = lp_json_next_sibling(e)) {
            const lp_json *rt = lp_json_get(e, "refType"), *rs = lp_json_get(e, "spanID"),
                          *rtr = lp_json_get(e, "traceID");
            if (!rs || rs->type != LP_JSON_STRING || !rs->len) {
                lp_spans_report(sp, LP_SEV_WARNING, e->off, e->line, "span %s: a reference without spanID is ignored",
                                sid->s);
                continue;
            }
            if (rs == parent)
                continue;
            uint32_t t2 = r.trace;
            if (rtr && rtr->type == LP_JSON_STRING && rtr->len && (s = lp_span_import_trace(im, rtr, &t2, &ok, c->err)))
                return s;
            uint64_t v;
            lp_str t;
            lp_spans_id(sp, rs->s, rs->len, &v, &t);
            if ((s = lp_spans_add_ref(sp, t2, v, lp_json_str_is(rt, "FOLLOWS_FROM") ? LP_REF_FOLLOWS_FROM : LP_REF_CHILD_OF,
                                      c->err)))
                return s;
        }
    return LP_OK;
}

/* A whole trace object {traceID, spans, processes}. */
static lp_status trace(jctx *c, const lp_json *n)
{
    char w[80];
    if (n->type != LP_JSON_OBJECT) {
        lp_span_import_skip(&c->im, LP_SKIP_SHAPE, n, "a Jaeger trace must be an object, found %s",
                            lp_json_what(n, w, sizeof w));
        return LP_OK;
    }
    const lp_json *spans = lp_json_get(n, "spans");
    if (!spans) {
        /* an array of spans rather than of traces */
        if (lp_json_get(n, "spanID"))
            return span(c, n, 0);
        lp_span_import_skip(&c->im, LP_SKIP_SHAPE, n, "a Jaeger trace without \"spans\"");
        return LP_OK;
    }
    if (spans->type != LP_JSON_ARRAY) {
        lp_span_import_skip(&c->im, LP_SKIP_SHAPE, spans, "\"spans\" must be an array, found %s",
                            lp_json_what(spans, w, sizeof w));
        return LP_OK;
    }
    lp_status s;
    c->doc_trace = LP_SPAN_NONE;
    const lp_json *tr = lp_json_get(n, "traceID");
    if (tr) {
        int ok;
        if ((s = lp_span_import_trace(&c->im, tr, &c->doc_trace, &ok, c->err)))
            return s;
        if (!ok)
            c->doc_trace = LP_SPAN_NONE;
    }
    if ((s = read_procs(c, lp_json_get(n, "processes"))))
        return s;
    for (const lp_json *e = lp_json_first(spans); e; e = lp_json_next_sibling(e))
        if ((s = span(c, e, 0)))
            return s;
    c->doc_trace = LP_SPAN_NONE;
    c->nprocs = 0;
    c->have_procs = 0;
    return LP_OK;
}

static lp_status jaeger_read(lp_spans *sp, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    jctx c;
    memset(&c, 0, sizeof c);
    lp_span_import_init(&c.im, sp, "jaeger");
    c.err = err;
    c.doc_trace = LP_SPAN_NONE;
    lp_json_opts o = {.stream_keys = KEYS, .repair = 1};
    lp_json_reader *r;
    lp_status st = lp_json_reader_new(&r, in, &o, err);
    if (st)
        return st;
    lp_json_ev ev;
    uint64_t tick = 0;
    char w[80];
    while ((st = lp_json_next(r, &ev, err)) == LP_OK) {
        lp_span_import_repaired(&c.im, &ev);
        switch (ev.kind) {
        case LP_JSON_EV_BEGIN:
            c.doc_trace = LP_SPAN_NONE;
            c.nprocs = 0;
            c.have_procs = 0;
            c.npend = 0;
            break;
        case LP_JSON_EV_ELEMENT:
            if (ev.key && strcmp(ev.key, "spans") == 0)
                st = span(&c, ev.tree, 1);
            else
                st = trace(&c, ev.tree);
            break;
        case LP_JSON_EV_MEMBER:
            if (strcmp(ev.key, "traceID") == 0) {
                int ok;
                st = lp_span_import_trace(&c.im, ev.tree, &c.doc_trace, &ok, err);
                if (!ok)
                    c.doc_trace = LP_SPAN_NONE;
            } else if (strcmp(ev.key, "processes") == 0) {
                if (!(st = read_procs(&c, ev.tree)))
                    resolve_pending(&c);
            } else if (strcmp(ev.key, "data") == 0 || strcmp(ev.key, "spans") == 0) {
                if (ev.tree->type != LP_JSON_NULL)
                    lp_span_import_skip(&c.im, LP_SKIP_SHAPE, ev.tree, "\"%s\" must be an array, found %s", ev.key,
                                        lp_json_what(ev.tree, w, sizeof w));
            }
            break;
        case LP_JSON_EV_VALUE:
            lp_span_import_skip(&c.im, LP_SKIP_SHAPE, ev.tree, "not a Jaeger trace: a top-level %s",
                                lp_json_what(ev.tree, w, sizeof w));
            break;
        case LP_JSON_EV_END:
            resolve_pending(&c);
            c.doc_trace = LP_SPAN_NONE;
            break;
        case LP_JSON_EV_BAD:
            lp_span_import_bad(&c.im, &ev);
            break;
        }
        if (st)
            break;
        if (lp_span_import_progress(opts, in, &tick)) {
            st = lp_error_set(err, LP_ERR_IO, "cancelled");
            break;
        }
    }
    if (st == LP_END) {
        st = LP_OK;
        resolve_pending(&c);
        lp_span_import_summary(&c.im);
    }
    lp_json_reader_free(r);
    lp_free(c.procs);
    lp_free(c.pending);
    return st;
}

static int jaeger_detect(const unsigned char *head, size_t n, const char *path)
{
    char t[6][LP_JSON_HEAD_TOK];
    int k = lp_json_head_tokens(head, n, t, 6);
#define T(i, s) (k > (i) && strcmp(t[i], s) == 0)
    if (T(0, "{") && T(1, "data") && T(2, "[")) {
        if (T(3, "{") && (T(4, "traceID") || T(4, "spans") || T(4, "processes")))
            return 95;
        return k <= 3 ? 40 : 0;
    }
    if (T(0, "{") && (T(1, "traceID") || T(1, "spans")))
        return 90;
    if (T(0, "[") && T(1, "{") && (T(2, "traceID") || T(2, "spans") || T(2, "spanID")))
        return 85;
#undef T
    (void)path;
    return 0;
}

static lp_status jaeger_import(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err);

const lp_span_format lp_spanfmt_jaeger = {"jaeger", jaeger_detect, jaeger_read};

const lp_importer lp_import_jaeger = {
    "jaeger",
    "Jaeger JSON (query API {\"data\":[...]}, a trace, or an array of traces): spans (docs/formats/spans.md)",
    jaeger_detect,
    jaeger_import,
};

static lp_status jaeger_import(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    return lp_spans_import(b, in, &lp_spanfmt_jaeger, opts, err);
}
