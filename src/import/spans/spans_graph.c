/* spans_graph.c: spans as an activity graph (docs/formats/spans.md), so that
 * `longpole cp`, `check`, `info` and `convert` work on Jaeger, Zipkin and OTLP traces;
 * and the glue that makes each span format an importer of import.h.
 *
 * The mapping, per span s running [S, E] (MODEL.md's model; SnailTrail §2):
 *  - s is a worker named "<trace id>/<span id>" with attributes service, operation
 *    and kind; its timeline is exactly [S, E];
 *  - a child c that s waits for (CHILD_OF, not a CONSUMER under a PRODUCER) and that
 *    falls inside [S, E] (lp_spans_within) is a call and a return: a message from s at
 *    max(c.start, S) to c at c.start ("edge=call"; received before it was sent, i.e.
 *    flagged as clock skew, when c started before s) and a message from c at
 *    min(c.end, E) to s at the same instant ("edge=return");
 *  - any other child (FOLLOWS_FROM, PRODUCER -> CONSUMER, or outside [S, E]) gets only
 *    the call ("edge=async"): nothing waits for it;
 *  - a reference or link from s to a span t (Jaeger's other references, OTLP links)
 *    is a message from t at s.start (clamped into t's run) to s at s.start
 *    ("edge=link"/"follows-from"/"child-of"), also not waited on;
 *  - s's own timeline is cut at its instants (start, end, calls sent, returns
 *    received): the piece just before a return is `waiting` (s was blocked on that
 *    child), every other piece is `processing` (s's own work), with operator
 *    "<service> <operation>".
 * With this, the whole-trace critical path of a single trace walks exactly like the
 * span-tree critical path (spancp.h) wherever the children fall inside their parents:
 * from a return, back through the child to its call, then along the parent's own work
 * to the latest return before that call. docs/formats/spans.md lists where they differ
 * (clock skew).
 */
#include "longpole/model/span.h"
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/spanfmt.h"
#include "longpole/model/trace.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "import/spans/spanjson.h"

#include <stdlib.h>
#include <string.h>

typedef struct instant {
    int64_t t;
    int ret;   /* a return is received here */
} instant;

static int cmp_instant(const void *a, const void *b)
{
    const instant *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return y->ret - x->ret; /* returns first (so the flag survives deduplication) */
}

typedef struct mapper {
    const lp_spans *sp;
    lp_builder *b;
    lp_error *err;
    lp_str *names;      /* span-table string -> builder string (LP_STR_NONE: not yet) */
    uint32_t *worker;   /* span -> worker */
    instant *ins;       /* instants of one span */
    size_t nins, capins;
    lp_str k_service, k_operation, k_kind;
    lp_str kinds[6];    /* kind names in the builder */
    uint32_t a_edge[6]; /* attribute lists edge=call, return, async, link, follows-from, child-of */
    uint16_t t_proc, t_wait;
    /* the names of each (service, operation, kind) in span-table strings: the operator
     * string and the worker attribute list, so names are built once, not per span;
     * found through `opmap` (hashed keys: a hash of the triple -> index in opnames) */
    struct opname {
        uint64_t key;   /* service << 32 | operation */
        uint8_t kind;
        lp_str op;      /* "<service> <operation>" in the builder */
        uint32_t attrs; /* service=, operation=, kind= */
    } *opnames;
    size_t nopnames, capopnames;
    lp_hmap32 opmap;
} mapper;

enum { E_CALL = 0, E_RETURN, E_ASYNC, E_LINK, E_FOLLOWS, E_CHILDOF };

static lp_status bname(mapper *m, lp_str s, lp_str *out)
{
    if (m->names[s] == LP_STR_NONE) {
        const char *p = lp_strtab_get(&m->sp->strs, s);
        if (lp_strtab_intern(lp_builder_strtab(m->b), p, lp_strtab_len(&m->sp->strs, s), &m->names[s]))
            return lp_error_set(m->err, LP_ERR_NOMEM, "out of memory");
    }
    *out = m->names[s];
    return LP_OK;
}

static lp_status intern(mapper *m, const char *s, lp_str *out)
{
    if (lp_strtab_intern(lp_builder_strtab(m->b), s, strlen(s), out))
        return lp_error_set(m->err, LP_ERR_NOMEM, "out of memory");
    return LP_OK;
}

static lp_status add_instant(mapper *m, int64_t t, int ret)
{
    if (m->nins == m->capins) {
        void *p = m->ins;
        if (lp_grow(&p, &m->capins, m->nins + 1, sizeof(instant)))
            return lp_error_set(m->err, LP_ERR_NOMEM, "out of memory");
        m->ins = p;
    }
    m->ins[m->nins++] = (instant){t, ret};
    return LP_OK;
}

static int64_t clamp(int64_t t, int64_t lo, int64_t hi) { return t < lo ? lo : t > hi ? hi : t; }

/* A (service << 32 | operation, kind) being looked up, for the table's equality. */
typedef struct opkey {
    const struct opname *names;
    uint64_t key;
    uint8_t kind;
} opkey;

static inline int same_opname(const void *ctx, uint64_t i)
{
    const opkey *k = ctx;
    return k->names[i].key == k->key && k->names[i].kind == k->kind;
}

/* The operator and attribute list of span i (built on first use of its names). */
static lp_status names_of(mapper *m, uint32_t i, lp_str *op, uint32_t *attrs)
{
    const lp_spans *sp = m->sp;
    uint64_t key = (uint64_t)sp->service[i] << 32 | sp->op[i];
    uint8_t kind = sp->kind[i] <= LP_SPAN_CONSUMER ? sp->kind[i] : 0;
    uint32_t h = (uint32_t)lp_hash_mix(key, kind);
    opkey k = {m->opnames, key, kind};
    uint32_t found = lp_hmap32_find(&m->opmap, h, same_opname, &k, NULL);
    if (found != LP_HMAP32_EMPTY) {
        *op = m->opnames[found].op;
        *attrs = m->opnames[found].attrs;
        return LP_OK;
    }
    lp_status st;
    lp_str kv[6];
    kv[0] = m->k_service;
    kv[2] = m->k_operation;
    kv[4] = m->k_kind;
    kv[5] = m->kinds[kind];
    if ((st = bname(m, sp->service[i], &kv[1])) || (st = bname(m, sp->op[i], &kv[3])) ||
        (st = lp_builder_attrs(m->b, kv, 3, attrs, m->err)))
        return st;
    char buf[512];
    const char *svc = lp_strtab_get(&sp->strs, sp->service[i]), *o = lp_strtab_get(&sp->strs, sp->op[i]);
    snprintf(buf, sizeof buf, "%s%s%s", svc, *svc && *o ? " " : "", o);
    if ((st = intern(m, buf, op)))
        return st;
    void *p = m->opnames;
    if (lp_grow(&p, &m->capopnames, m->nopnames + 1, sizeof *m->opnames))
        return lp_error_set(m->err, LP_ERR_NOMEM, "out of memory");
    m->opnames = p;
    if (lp_hmap32_add(&m->opmap, h, (uint32_t)m->nopnames, NULL))
        return lp_error_set(m->err, LP_ERR_NOMEM, "out of memory");
    m->opnames[m->nopnames++] = (struct opname){key, kind, *op, *attrs};
    return LP_OK;
}

/* Append the 16 lower-case hex digits of v. */
static char *hex16(char *p, uint64_t v)
{
    static const char hx[] = "0123456789abcdef";
    for (int k = 15; k >= 0; k--, v >>= 4)
        p[k] = hx[v & 15];
    return p + 16;
}

/* The worker of span i ("<trace id>/<span id>"), with its attributes. */
static lp_status make_worker(mapper *m, uint32_t i)
{
    const lp_spans *sp = m->sp;
    char name[256];
    const char *tr = lp_spans_trace_text(sp, sp->trace[i]);
    size_t tn = strlen(tr), k;
    if (tn + 40 < sizeof name && !(sp->flags[i] & LP_SPAN_IDTEXT)) {
        memcpy(name, tr, tn);
        name[tn] = '/';
        char *e = hex16(name + tn + 1, sp->id[i]);
        if (sp->flags[i] & LP_SPAN_SHARED) {
            memcpy(e, ":server", 7);
            e += 7;
        }
        k = (size_t)(e - name);
    } else {
        char id[96];
        int w = snprintf(name, sizeof name, "%s/%s", tr, lp_spans_idstr(sp, i, id, sizeof id));
        k = w < 0 || (size_t)w >= sizeof name ? sizeof name - 1 : (size_t)w;
    }
    lp_status st = lp_builder_worker(m->b, name, k, &m->worker[i], m->err);
    if (st)
        return st;
    lp_str op;
    uint32_t list;
    if ((st = names_of(m, i, &op, &list)))
        return st;
    return lp_builder_worker_attrs(m->b, m->worker[i], list, sp->line[i], m->err);
}

/* Messages and activities of span i. */
static lp_status map_span(mapper *m, uint32_t i, lp_str op)
{
    const lp_spans *sp = m->sp;
    lp_builder *b = m->b;
    lp_status st;
    int64_t S = sp->start[i], E = lp_spans_end(sp, i);
    uint32_t w = m->worker[i];
    uint64_t line = sp->line[i];
    m->nins = 0;
    if ((st = add_instant(m, S, 0)) || (st = add_instant(m, E, 0)))
        return st;
    for (uint32_t k = sp->kfirst[i]; k < sp->kfirst[i + 1]; k++) {
        uint32_t c = sp->kids[k];
        int64_t cs = sp->start[c], ce = lp_spans_end(sp, c);
        int64_t send = clamp(cs, S, E);
        int sync = lp_spans_blocking(sp, c, i) && lp_spans_within(cs, ce, S, E);
        if ((st = lp_builder_message(b, w, send, m->worker[c], cs, LP_MSGID_NONE, m->a_edge[sync ? E_CALL : E_ASYNC],
                                     sp->line[c], m->err)) ||
            (st = add_instant(m, send, 0)))
            return st;
        if (sync) {
            int64_t back = ce < E ? ce : E;
            if ((st = lp_builder_message(b, m->worker[c], back, w, back, LP_MSGID_NONE, m->a_edge[E_RETURN], sp->line[c],
                                         m->err)) ||
                (st = add_instant(m, back, 1)))
                return st;
        }
    }
    if (m->nins < 16) { /* usually a handful */
        for (size_t k = 1; k < m->nins; k++) {
            instant x = m->ins[k];
            size_t j = k;
            for (; j > 0 && cmp_instant(&x, &m->ins[j - 1]) < 0; j--)
                m->ins[j] = m->ins[j - 1];
            m->ins[j] = x;
        }
    } else {
        qsort(m->ins, m->nins, sizeof *m->ins, cmp_instant);
    }
    size_t u = 0;
    for (size_t k = 0; k < m->nins; k++)
        if (!u || m->ins[k].t != m->ins[u - 1].t)
            m->ins[u++] = m->ins[k];
    m->nins = u;
    if (u == 1)
        return lp_builder_activity(b, w, S, S, m->t_proc, op, 0, line, m->err);
    /* pieces [ins[k], ins[k+1]]: waiting when a return ends them; merge equal neighbours */
    int64_t from = m->ins[0].t;
    int cur = m->ins[1].ret;
    for (size_t k = 1; k < u; k++) {
        int type = m->ins[k].ret;
        if (type != cur) {
            if ((st = lp_builder_activity(b, w, from, m->ins[k - 1].t, cur ? m->t_wait : m->t_proc, op, 0, line, m->err)))
                return st;
            from = m->ins[k - 1].t;
            cur = type;
        }
    }
    return lp_builder_activity(b, w, from, m->ins[u - 1].t, cur ? m->t_wait : m->t_proc, op, 0, line, m->err);
}

lp_status lp_spans_to_builder(const lp_spans *sp, lp_builder *b, lp_error *err)
{
    if (!sp->finished)
        return lp_error_set(err, LP_ERR_ARG, "span table not finished");
    mapper m;
    memset(&m, 0, sizeof m);
    m.sp = sp;
    m.b = b;
    m.err = err;
    lp_status st = LP_OK;
    m.names = lp_malloc((sp->strs.n ? sp->strs.n : 1) * sizeof *m.names);
    m.worker = lp_malloc((sp->n ? sp->n : 1) * sizeof *m.worker);
    if (!m.names || !m.worker) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (uint32_t s = 0; s < sp->strs.n; s++)
        m.names[s] = LP_STR_NONE;
    static const char *const edges[] = {"call", "return", "async", "link", "follows-from", "child-of"};
    lp_str k_edge;
    if ((st = intern(&m, "service", &m.k_service)) || (st = intern(&m, "operation", &m.k_operation)) ||
        (st = intern(&m, "kind", &m.k_kind)) || (st = intern(&m, "edge", &k_edge)))
        goto out;
    for (int e = 0; e < 6; e++) {
        lp_str kv[2] = {k_edge, 0};
        if ((st = intern(&m, edges[e], &kv[1])) || (st = lp_builder_attrs(b, kv, 1, &m.a_edge[e], err)))
            goto out;
    }
    if ((st = lp_builder_type(b, "processing", 10, &m.t_proc, err)) || (st = lp_builder_type(b, "waiting", 7, &m.t_wait, err)))
        goto out;
    for (int k = 0; k <= LP_SPAN_CONSUMER; k++)
        if ((st = intern(&m, lp_spans_kind_name((lp_span_kind)k), &m.kinds[k])))
            goto out;
    for (uint32_t t = 0; t < sp->ntraces && !st; t++)
        for (uint64_t k = sp->tfirst[t]; k < sp->tfirst[t + 1] && !st; k++) {
            uint32_t i = sp->order[k];
            if (!(sp->flags[i] & LP_SPAN_DROPPED))
                st = make_worker(&m, i);
        }
    for (uint32_t t = 0; t < sp->ntraces && !st; t++)
        for (uint64_t k = sp->tfirst[t]; k < sp->tfirst[t + 1] && !st; k++) {
            uint32_t i = sp->order[k];
            if (sp->flags[i] & LP_SPAN_DROPPED)
                continue;
            lp_str op;
            uint32_t list;
            if ((st = names_of(&m, i, &op, &list)))
                break;
            st = map_span(&m, i, op);
        }
    for (size_t k = 0; k < sp->nrefs && !st; k++) {
        const lp_span_ref *r = &sp->refs[k];
        if (r->target == LP_SPAN_NONE || ((sp->flags[r->span] | sp->flags[r->target]) & LP_SPAN_DROPPED))
            continue;
        int e = r->type == LP_REF_LINK ? E_LINK : r->type == LP_REF_FOLLOWS_FROM ? E_FOLLOWS : E_CHILDOF;
        int64_t at = sp->start[r->span];
        int64_t send = clamp(at, sp->start[r->target], lp_spans_end(sp, r->target));
        st = lp_builder_message(b, m.worker[r->target], send, m.worker[r->span], at, LP_MSGID_NONE, m.a_edge[e],
                                sp->line[r->span], err);
    }
out:
    lp_free(m.names);
    lp_free(m.worker);
    lp_free(m.ins);
    lp_free(m.opnames);
    lp_hmap32_release(&m.opmap);
    return st;
}

lp_status lp_spans_import(lp_builder *b, lp_input *in, const lp_span_format *f, const lp_load_opts *opts, lp_error *err)
{
    lp_spans sp;
    lp_spans_init(&sp, lp_builder_diags(b));
    lp_status st = lp_spans_source(&sp, lp_input_name(in), err);
    if (!st)
        st = f->read(&sp, in, opts, err);
    if (!st)
        st = lp_spans_finish(&sp, err);
    if (!st)
        st = lp_spans_to_builder(&sp, b, err);
    lp_spans_release(&sp);
    return st;
}
