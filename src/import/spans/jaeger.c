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
/* nested streaming: a huge trace of "data" (or of a top-level array) is read span by
 * span, like a bare trace */
static const char *const NEST_KEYS[] = {"data", "", NULL};
static const char *const NEST_STREAM[] = {"spans", NULL};

typedef struct proc {
    lp_str pid;      /* processID */
    lp_str service;  /* its serviceName */
} proc;

typedef struct pend {
    uint32_t span;   /* span waiting for its process */
    lp_str pid;
    uint64_t off, line; /* where its processID is (a streamed trace of "data") */
    size_t sid;         /* and its spanID as written: at sids + sid, NUL-terminated */
} pend;

typedef struct jctx {
    lp_span_import im;
    lp_error *err;
    proc *procs;            /* processes of the current trace */
    size_t nprocs, capprocs;
    int have_procs;         /* the current trace's processes are known */
    pend *pending;          /* bare trace: spans seen before "processes" */
    size_t npend, cappend;
    char *sids;             /* spanIDs of the pending spans of a streamed trace of "data" */
    size_t nsids, capsids;
    uint32_t doc_trace;     /* traceID of the enclosing trace (LP_SPAN_NONE if none) */
    unsigned nested;        /* depth of the trace of "data" being streamed (0: none) */
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
        } else if (c->nested) {
            /* the message of a trace read whole (service_of), later */
            lp_spans_report(sp, LP_SEV_WARNING, c->pending[i].off, c->pending[i].line,
                            "span %s: processID '%s' is not in the trace's processes; the service is unknown",
                            c->sids + c->pending[i].sid, lp_spans_str(sp, c->pending[i].pid));
        } else {
            lp_spans_report(sp, LP_SEV_WARNING, sp->off[x], sp->line[x],
                            "processID '%s' is not in the trace's processes; the service is unknown",
                            lp_spans_str(sp, c->pending[i].pid));
        }
    }
    c->npend = 0;
    c->nsids = 0;
}

/* The members of a span that matter. */
typedef struct jfields {
    const lp_json *tr, *sid, *op, *refs, *st, *du, *pidn, *procn, *tags, *pspan;
} jfields;

static void fields(const lp_json *n, jfields *f)
{
    memset(f, 0, sizeof *f);
    for (const lp_json *m = lp_json_first(n); m; m = lp_json_next_sibling(m)) {
        switch (m->key[0]) {
        case 't':
            if (LP_JSON_KEY(m, "traceID"))
                f->tr = m;
            else if (LP_JSON_KEY(m, "tags"))
                f->tags = m;
            break;
        case 's':
            if (LP_JSON_KEY(m, "spanID"))
                f->sid = m;
            else if (LP_JSON_KEY(m, "startTime"))
                f->st = m;
            break;
        case 'o':
            if (LP_JSON_KEY(m, "operationName"))
                f->op = m;
            break;
        case 'r':
            if (LP_JSON_KEY(m, "references"))
                f->refs = m;
            break;
        case 'd':
            if (LP_JSON_KEY(m, "duration"))
                f->du = m;
            break;
        case 'p':
            if (LP_JSON_KEY(m, "processID"))
                f->pidn = m;
            else if (LP_JSON_KEY(m, "process"))
                f->procn = m;
            else if (LP_JSON_KEY(m, "parentSpanID"))
                f->pspan = m;
            break;
        default: break;
        }
    }
}

/* The parent of span r: the first CHILD_OF reference in its trace, else the first
 * FOLLOWS_FROM (then not waited on), else parentSpanID. *parent is its spanID node. */
static lp_status parent_of(jctx *c, const jfields *f, lp_span_rec *r, const lp_json **parent)
{
    lp_span_import *im = &c->im;
    lp_spans *sp = im->sp;
    const lp_json *refs = f->refs, *pspan = f->pspan;
    int parent_follows = 0, ok;
    lp_status s;
    *parent = NULL;
    if (refs && refs->type == LP_JSON_ARRAY) {
        for (int pass = 0; pass < 2 && !*parent; pass++)
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
                    if (t2 != r->trace)
                        continue;
                }
                *parent = rs;
                parent_follows = follows;
                break;
            }
    } else if (refs && refs->type != LP_JSON_NULL) {
        char w[80];
        lp_spans_report(sp, LP_SEV_WARNING, refs->off, refs->line, "span %s: references should be an array, found %s",
                        f->sid->s, lp_json_what(refs, w, sizeof w));
    }
    if (!*parent && pspan && pspan->type == LP_JSON_STRING && pspan->len) {
        uint64_t v;
        lp_str t;
        if (lp_spans_id(sp, pspan->s, pspan->len, &v, &t) == 0 && v != 0)
            *parent = pspan;
    }
    if (*parent) {
        lp_str t;
        lp_spans_id(sp, (*parent)->s, (*parent)->len, &r->pid, &t);
        r->flags |= LP_SPAN_HAS_PARENT | (parent_follows ? LP_SPAN_FOLLOWS : 0);
    }
    return LP_OK;
}

/* The service of span r: an embedded process, or its processID in the trace's processes
 * (*pending: the processID, when a bare trace's processes are still to come). */
static lp_status service_of(jctx *c, const jfields *f, int bare, lp_span_rec *r, lp_str *pending)
{
    lp_spans *sp = c->im.sp;
    const lp_json *procn = f->procn, *pidn = f->pidn;
    *pending = LP_STR_NONE;
    if (procn && procn->type == LP_JSON_OBJECT) {
        const lp_json *sn = lp_json_get(procn, "serviceName");
        if (sn && sn->type == LP_JSON_STRING)
            r->service = lp_spans_name(sp, sn->s, sn->len);
    } else if (pidn && pidn->type == LP_JSON_STRING) {
        lp_str pid = lp_spans_name(sp, pidn->s, pidn->len);
        if (pid == LP_STR_NONE)
            return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
        lp_str svc = find_proc(c, pid);
        if (svc != LP_STR_NONE)
            r->service = svc;
        else if (bare && !c->have_procs)
            *pending = pid;
        else
            lp_spans_report(sp, LP_SEV_WARNING, pidn->off, pidn->line,
                            "span %s: processID '%s' is not in the trace's processes; the service is unknown",
                            f->sid->s, pidn->s);
    }
    if (r->service == LP_STR_NONE)
        return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
    return LP_OK;
}

/* The references of span r other than its parent, into the table. */
static lp_status other_refs(jctx *c, const jfields *f, const lp_span_rec *r, const lp_json *parent)
{
    lp_span_import *im = &c->im;
    lp_spans *sp = im->sp;
    const lp_json *refs = f->refs;
    if (!refs || refs->type != LP_JSON_ARRAY)
        return LP_OK;
    lp_status s;
    int ok;
    for (const lp_json *e = lp_json_first(refs); e; e = lp_json_next_sibling(e)) {
        const lp_json *rt = lp_json_get(e, "refType"), *rs = lp_json_get(e, "spanID"), *rtr = lp_json_get(e, "traceID");
        if (!rs || rs->type != LP_JSON_STRING || !rs->len) {
            lp_spans_report(sp, LP_SEV_WARNING, e->off, e->line, "span %s: a reference without spanID is ignored",
                            f->sid->s);
            continue;
        }
        if (rs == parent)
            continue;
        uint32_t t2 = r->trace;
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

/* One span: checked field by field (a record that cannot be used is reported and
 * skipped), then its parent, kind and service, then added with its other references. */
static lp_status span(jctx *c, const lp_json *n, int bare)
{
    lp_span_import *im = &c->im;
    lp_spans *sp = im->sp;
    char w[80];
    if (n->type != LP_JSON_OBJECT) {
        lp_span_import_skip(im, LP_SKIP_SHAPE, n, "a Jaeger span must be an object, found %s", lp_json_what(n, w, sizeof w));
        return LP_OK;
    }
    jfields f;
    fields(n, &f);
    lp_span_rec r;
    memset(&r, 0, sizeof r);
    r.idtext = LP_STR_NONE;
    r.off = n->off;
    r.line = n->line;
    if (lp_span_import_id(im, n, f.sid, "a spanID", &r))
        return LP_OK;
    const char *sid = f.sid->s;
    int skipped;
    lp_status s;
    if (f.tr) {
        if ((s = lp_span_import_trace_of(im, n, f.tr, "traceID", sid, &r, &skipped, c->err)) || skipped)
            return s;
    } else if (c->doc_trace != LP_SPAN_NONE) {
        r.trace = c->doc_trace;
    } else {
        lp_span_import_skip(im, LP_SKIP_NO_TRACE, n, "span %s has no traceID", sid);
        return LP_OK;
    }
    if (!f.st || lp_span_import_us(f.st, &r.start)) {
        lp_span_import_skip(im, LP_SKIP_TIME, f.st ? f.st : n,
                            "span %s: startTime must be an integer number of microseconds, found %s", sid,
                            lp_json_what(f.st, w, sizeof w));
        return LP_OK;
    }
    if (lp_span_import_duration(im, f.du, sid, &r))
        return LP_OK;
    if (f.op && f.op->type != LP_JSON_STRING) {
        lp_span_import_skip(im, LP_SKIP_FIELD, f.op, "span %s: operationName must be a string, found %s", sid,
                            lp_json_what(f.op, w, sizeof w));
        return LP_OK;
    }
    r.op = f.op ? lp_spans_name(sp, f.op->s, f.op->len) : LP_STR_EMPTY;
    r.service = LP_STR_EMPTY;
    if (r.op == LP_STR_NONE)
        return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
    const lp_json *parent;
    if ((s = parent_of(c, &f, &r, &parent)))
        return s;
    if (f.tags && f.tags->type == LP_JSON_ARRAY)
        for (const lp_json *e = lp_json_first(f.tags); e; e = lp_json_next_sibling(e)) {
            const lp_json *k = lp_json_get(e, "key");
            if (k && lp_json_str_is(k, "span.kind")) {
                r.kind = (uint8_t)kind_of(lp_json_get(e, "value"));
                break;
            }
        }
    lp_str pending_pid;
    if ((s = service_of(c, &f, bare, &r, &pending_pid)))
        return s;
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
        size_t at = c->nsids;
        if (c->nested) {
            size_t k = strlen(sid) + 1;
            if (c->capsids - c->nsids < k) {
                void *p = c->sids;
                if (lp_grow(&p, &c->capsids, c->nsids + k, 1))
                    return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
                c->sids = p;
            }
            memcpy(c->sids + c->nsids, sid, k);
            c->nsids += k;
        }
        c->pending[c->npend++] = (pend){(uint32_t)sp->n - 1, pending_pid, f.pidn->off, f.pidn->line, at};
    }
    return other_refs(c, &f, &r, parent);
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

/* The events of a Jaeger file: a trace per element of "data" (or of a top-level
 * array), or a bare trace read member by member. */
static lp_status jaeger_event(void *ctx, const lp_json_ev *ev)
{
    jctx *c = ctx;
    char w[80];
    if (!ev) { /* the end of the file */
        resolve_pending(c);
        return LP_OK;
    }
    switch (ev->kind) {
    case LP_JSON_EV_BEGIN:
        /* the file, or a huge trace of "data" streamed like a bare trace */
        c->doc_trace = LP_SPAN_NONE;
        c->nprocs = 0;
        c->have_procs = 0;
        c->npend = 0;
        c->nsids = 0;
        c->nested = ev->depth;
        break;
    case LP_JSON_EV_ELEMENT:
        if (ev->key && strcmp(ev->key, "spans") == 0)
            return span(c, ev->tree, 1);
        return trace(c, ev->tree);
    case LP_JSON_EV_MEMBER:
        if (ev->depth && strcmp(ev->key, "traceID") != 0 && strcmp(ev->key, "processes") != 0 &&
            strcmp(ev->key, "spans") != 0)
            break; /* a member of a streamed trace that trace() does not read */
        if (strcmp(ev->key, "traceID") == 0) {
            int ok;
            lp_status st = lp_span_import_trace(&c->im, ev->tree, &c->doc_trace, &ok, c->err);
            if (!ok)
                c->doc_trace = LP_SPAN_NONE;
            return st;
        }
        if (strcmp(ev->key, "processes") == 0) {
            lp_status st = read_procs(c, ev->tree);
            if (!st)
                resolve_pending(c);
            return st;
        }
        if ((strcmp(ev->key, "data") == 0 || strcmp(ev->key, "spans") == 0) && ev->tree->type != LP_JSON_NULL)
            lp_span_import_skip(&c->im, LP_SKIP_SHAPE, ev->tree, "\"%s\" must be an array, found %s", ev->key,
                                lp_json_what(ev->tree, w, sizeof w));
        break;
    case LP_JSON_EV_VALUE:
        lp_span_import_skip(&c->im, LP_SKIP_SHAPE, ev->tree, "not a Jaeger trace: a top-level %s",
                            lp_json_what(ev->tree, w, sizeof w));
        break;
    case LP_JSON_EV_END:
        resolve_pending(c);
        c->doc_trace = LP_SPAN_NONE;
        c->nprocs = 0;
        c->have_procs = 0;
        c->nested = 0;
        break;
    default: break;
    }
    return LP_OK;
}

static lp_status jaeger_read(lp_spans *sp, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    jctx c;
    memset(&c, 0, sizeof c);
    lp_span_import_init(&c.im, sp, "jaeger");
    c.im.nest_keys = NEST_KEYS;
    c.im.nest_stream = NEST_STREAM;
    c.err = err;
    c.doc_trace = LP_SPAN_NONE;
    lp_status st = lp_span_import_run(&c.im, in, KEYS, opts, jaeger_event, &c, err);
    lp_free(c.procs);
    lp_free(c.pending);
    lp_free(c.sids);
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
