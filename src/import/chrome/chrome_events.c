/* chrome_events.c: one trace event into the importer's columns (chrome_int.h): its
 * members, its args kept as attributes, then by phase: X and B/E slices, flow points
 * (s/t/f and bind_id), metadata (M), async events (chrome_async.c); counters, instants
 * and the like are counted, not modelled; and the top-level object's other members.
 *
 * Invariants: an event is either stored, counted as not modelled, or skipped (counted
 * by reason and reported with its line and byte offset); nothing is resolved here.
 */
#include "import/chrome/chrome_int.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one event ------------------------------------------------------------------------ */

static void fields(const lp_json *ev, evf *f)
{
    memset(f, 0, sizeof *f);
    for (const lp_json *m = lp_json_first(ev); m; m = lp_json_next_sibling(m)) {
        switch (m->klen) {
        case 1:
            if (m->key[0] == 's')
                f->s = m;
            break;
        case 2:
            if (LP_JSON_KEY(m, "ph"))
                f->ph = m;
            else if (LP_JSON_KEY(m, "ts"))
                f->ts = m;
            else if (LP_JSON_KEY(m, "id"))
                f->id = m;
            else if (LP_JSON_KEY(m, "bp"))
                f->bp = m;
            break;
        case 3:
            if (LP_JSON_KEY(m, "dur"))
                f->dur = m;
            else if (LP_JSON_KEY(m, "pid"))
                f->pid = m;
            else if (LP_JSON_KEY(m, "tid"))
                f->tid = m;
            else if (LP_JSON_KEY(m, "cat"))
                f->cat = m;
            else if (LP_JSON_KEY(m, "id2"))
                f->id2 = m;
            break;
        case 4:
            if (LP_JSON_KEY(m, "name"))
                f->name = m;
            else if (LP_JSON_KEY(m, "args"))
                f->args = m;
            break;
        case 7:
            if (LP_JSON_KEY(m, "bind_id"))
                f->bind_id = m;
            else if (LP_JSON_KEY(m, "flow_in"))
                f->flow_in = m;
            break;
        case 8:
            if (LP_JSON_KEY(m, "flow_out"))
                f->flow_out = m;
            break;
        default:
            break;
        }
    }
}

/* Kineto's per-event bookkeeping ids: unique on every event, they would make every
 * attribute list distinct (and cost a third of the import time) for no analysis value;
 * the correlation id becomes the id of the launch message instead. */
static int is_bookkeeping(const lp_json *m)
{
    switch (m->klen) {
    case 6: return LP_JSON_KEY(m, "Ev Idx");
    case 11: return LP_JSON_KEY(m, "External id") || LP_JSON_KEY(m, "correlation");
    case 15: return LP_JSON_KEY(m, "Sequence number");
    case 17: return LP_JSON_KEY(m, "Record function id");
    default: return 0;
    }
}

/* Scalar args kept for the attributes (at most MAX_ARGS; long strings, arrays, objects
 * and nulls are not kept) into ctx.kvp: *list is their offset (0: none). The builder's
 * attribute list is made once per slice when it is emitted (attrs_plus), since most
 * events' args are unique and deduplicating them twice would cost twice. Also picks
 * out the Kineto args and longpole's own marks. */
lp_status ch_args_attrs(cctx *c, const lp_json *args, uint32_t *list, kargs *k, lp_str *extra, int nextra)
{
    lp_str kv[2 * (MAX_ARGS + 4)];
    uint32_t np = 0;
    k->corr = k->stream = k->wait_stream = -1;
    k->sync_kind = NULL;
    k->derived = 0;
    k->no_op = 0;
    k->msgid = NULL;
    k->step = NULL;
    for (int i = 0; i < nextra; i++)
        kv[np * 2] = extra[2 * i], kv[np * 2 + 1] = extra[2 * i + 1], np++;
    if (args && args->type == LP_JSON_OBJECT) {
        for (const lp_json *m = lp_json_first(args); m; m = lp_json_next_sibling(m)) {
            if (m->type == LP_JSON_NUMBER) {
                if (LP_JSON_KEY(m, "correlation"))
                    lp_json_i64(m, &k->corr);
                else if (LP_JSON_KEY(m, "stream"))
                    lp_json_i64(m, &k->stream);
                else if (LP_JSON_KEY(m, "wait_on_stream"))
                    lp_json_i64(m, &k->wait_stream);
            } else if (m->type == LP_JSON_STRING) {
                if (LP_JSON_KEY(m, "cuda_sync_kind"))
                    k->sync_kind = m;
                else if (LP_JSON_KEY(m, "step"))
                    k->step = m;
            }
            if (m->klen > 9 && memcmp(m->key, "longpole.", 9) == 0) { /* longpole's own marks: not attributes */
                if (LP_JSON_KEY(m, "longpole.derived"))
                    k->derived = 1;
                else if (LP_JSON_KEY(m, "longpole.msg_id"))
                    k->msgid = m;
                else if (LP_JSON_KEY(m, "longpole.no_op"))
                    k->no_op = 1;
                continue;
            }
            if (np >= MAX_ARGS + (uint32_t)nextra)
                continue;
            const char *vs;
            size_t vn;
            switch (m->type) {
            case LP_JSON_NUMBER:
            case LP_JSON_STRING:
                vs = m->s;
                vn = m->len;
                if (vn > MAX_ARG_LEN)
                    continue;
                break;
            case LP_JSON_TRUE: vs = "true", vn = 4; break;
            case LP_JSON_FALSE: vs = "false", vn = 5; break;
            default: continue;
            }
            if (m->klen == 0 || memchr(m->key, '\0', m->klen))
                continue; /* keys are C strings in the outputs */
            if (is_bookkeeping(m))
                continue;
            if (intern(c, m->key, m->klen, &kv[np * 2]) || intern(c, vs, vn, &kv[np * 2 + 1]))
                return nomem(c);
            np++;
        }
    }
    if (!np) {
        *list = 0;
        return LP_OK;
    }
    if (c->nkvp + 1 + 2 * (size_t)np >= UINT32_MAX)
        return lp_error_set(c->err, LP_ERR_LIMIT, "too many event args in one file");
    if (lp_grow_at(&c->kvp, &c->capkvp, c->nkvp + 1 + 2 * (size_t)np, sizeof *c->kvp))
        return nomem(c);
    *list = (uint32_t)c->nkvp;
    c->kvp[c->nkvp++] = np;
    memcpy(c->kvp + c->nkvp, kv, 2 * (size_t)np * sizeof *kv);
    c->nkvp += 2 * (size_t)np;
    return LP_OK;
}

/* Which of the meaningful categories an interned category is (K_NCATS: none). */
static int kcat(const cctx *c, lp_str cat)
{
    if (cat == LP_STR_NONE)
        return K_NCATS;
    for (int i = 0; i < K_NCATS; i++)
        if (c->k_cat[i] == cat)
            return i;
    return K_NCATS;
}

static int ends_with(const lp_json *v, const char *suf)
{
    size_t k = strlen(suf);
    return v && v->type == LP_JSON_STRING && v->len >= k && memcmp(v->s + v->len - k, suf, k) == 0;
}

static void see_time(cctx *c, int64_t t)
{
    if (!c->have_t || t > c->tmax)
        c->tmax = t;
    c->have_t = 1;
}

lp_status ch_push_slice(cctx *c, const lp_json *ev, uint32_t thread, int64_t start, int64_t end, lp_str name,
                        lp_str cat, uint32_t attrs, uint16_t flags, int64_t corr, uint32_t *idx)
{
    if (c->nsl >= NONE - 1)
        return lp_error_set(c->err, LP_ERR_LIMIT, "more than %u slices in one file", NONE - 2);
    if (lp_grow_at(&c->sl, &c->capsl, c->nsl + 1, sizeof *c->sl))
        return nomem(c);
    cslice *s = &c->sl[c->nsl];
    s->start = start;
    s->end = end;
    s->off = ev->off;
    s->line = lp_line32(ev->line);
    s->thread = thread;
    s->name = name;
    s->cat = cat;
    s->attrs = attrs;
    s->seq = c->seq++;
    s->flags = flags;
    s->corr = corr;
    *idx = (uint32_t)c->nsl++;
    c->th[thread].used = 1;
    return LP_OK;
}

/* The id of a flow or async event as text: "id", or id2.global / id2.local. */
const char *ch_event_id(const evf *f, size_t *n, int *local)
{
    *local = 0;
    const char *s = ch_id_text(f->id, n);
    if (s)
        return s;
    if (f->id2 && f->id2->type == LP_JSON_OBJECT) {
        const lp_json *g = lp_json_get(f->id2, "global");
        if ((s = ch_id_text(g, n)))
            return s;
        const lp_json *l = lp_json_get(f->id2, "local");
        if ((s = ch_id_text(l, n))) {
            *local = 1;
            return s;
        }
    }
    return NULL;
}

static lp_status push_flow(cctx *c, const lp_json *ev, uint32_t key, uint32_t thread, int64_t ts, uint32_t slice,
                           char ph, int bind_here, lp_str cat, lp_str name, uint32_t attrs, const char *id, size_t idn)
{
    if (lp_grow_at(&c->fl, &c->capfl, c->nfl + 1, sizeof *c->fl))
        return nomem(c);
    cflow *f = &c->fl[c->nfl];
    f->ts = ts;
    f->off = ev->off;
    f->line = lp_line32(ev->line);
    f->key = key;
    f->thread = thread;
    f->slice = slice;
    f->seq = c->seq++;
    f->attrs = attrs;
    f->cat = cat;
    f->name = name;
    f->ph = ph;
    f->bind_here = (uint8_t)bind_here;
    f->lpexport = 0;
    if (!id)
        f->msgid = LP_MSGID_NONE;
    else if (lp_builder_msgid(c->b, id, idn, &f->msgid, c->err))
        return c->err ? c->err->status : LP_ERR_NOMEM;
    c->nfl++;
    c->th[thread].used = 1;
    return LP_OK;
}

/* v2 flow points on a slice event (X, B, b, n). */
static lp_status v2_flows(cctx *c, const lp_json *ev, const evf *f, uint32_t thread, uint32_t slice)
{
    if (!f->bind_id)
        return LP_OK;
    size_t n;
    const char *id = ch_id_text(f->bind_id, &n);
    if (!id) {
        char w[80];
        ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, f->bind_id->line, f->bind_id->off,
                  "bind_id must be a number or a string, found %s; the flow is ignored", lp_json_what(f->bind_id, w, sizeof w));
        c->skipped[SK_FIELD]++;
        return LP_OK;
    }
    int in = f->flow_in && f->flow_in->type == LP_JSON_TRUE;
    int out = f->flow_out && f->flow_out->type == LP_JSON_TRUE;
    if (!in && !out) {
        ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, f->bind_id->line, f->bind_id->off,
                  "bind_id without flow_in or flow_out: the flow has no direction and is ignored");
        c->skipped[SK_FIELD]++;
        return LP_OK;
    }
    char buf[128];
    const char *parts[2] = {"V", id};
    size_t lens[2] = {1, n};
    uint32_t key;
    if (ch_key_id(c, buf, ch_join_key(buf, sizeof buf, parts, lens, 2), &key))
        return nomem(c);
    return push_flow(c, ev, key, thread, 0, slice, in && out ? 'x' : in ? 'i' : 'o', 1, LP_STR_NONE, LP_STR_NONE, 0,
                     id, n);
}

static lp_status metadata(cctx *c, const lp_json *ev, const evf *f)
{
    const lp_json *nm = f->name;
    const lp_json *args = f->args;
    const lp_json *v = NULL;
    int oom = 0;
    char w[80];
    if (!nm || nm->type != LP_JSON_STRING) {
        ch_skip(c, SK_FIELD, ev, "metadata event (ph M) without a name string (found %s)", lp_json_what(nm, w, sizeof w));
        return LP_OK;
    }
    int proc = 0;
    const char *argkey = NULL;
    lp_str *dst = NULL;
    uint32_t t = NONE, p = NONE;
    lp_status st;
    if (lp_json_str_is(nm, "process_name"))
        proc = 1, argkey = "name";
    else if (lp_json_str_is(nm, "process_labels"))
        proc = 2, argkey = "labels";
    else if (lp_json_str_is(nm, "process_sort_index"))
        proc = 3, argkey = "sort_index";
    else if (lp_json_str_is(nm, "thread_name"))
        argkey = "name";
    else if (lp_json_str_is(nm, "thread_sort_index"))
        argkey = "sort_index";
    else {
        c->unmodelled[UM_META]++;
        return LP_OK;
    }
    v = lp_json_get(args, argkey);
    if (!v || (v->type != LP_JSON_STRING && v->type != LP_JSON_NUMBER)) {
        ch_skip(c, SK_FIELD, ev, "metadata %s: args.%s should be a %s, found %s", nm->s, argkey,
                proc == 3 || !strcmp(argkey, "sort_index") ? "number" : "string", lp_json_what(v, w, sizeof w));
        return LP_OK;
    }
    if (proc) {
        size_t pn = 1;
        const char *ps = ch_id_text(f->pid, &pn);
        if (!ps)
            ps = "0", pn = 1;
        if ((st = ch_get_proc(c, ps, pn, &p)))
            return st;
        dst = proc == 1 ? &c->pr[p].name : proc == 2 ? &c->pr[p].labels : &c->pr[p].sort;
    } else {
        if ((st = ch_get_thread(c, f->pid, f->tid, &t)))
            return st;
        dst = strcmp(argkey, "name") == 0 ? &c->th[t].tname : &c->th[t].tsort;
    }
    /* names are trimmed (Kineto writes "stream 7 "), unless longpole's export gave the
     * exact name */
    const char *s = v->s;
    size_t n = v->len;
    const lp_json *exact = lp_json_get(args, "longpole.name");
    if (exact && exact->type == LP_JSON_STRING && v->type == LP_JSON_STRING) {
        s = exact->s;
        n = exact->len;
    } else {
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
            n--;
        while (n && (*s == ' ' || *s == '\t'))
            s++, n--;
    }
    if (intern(c, s, n, dst))
        oom = 1;
    return oom ? nomem(c) : LP_OK;
}

/* Kineto's GPU-side record of a synchronisation (an X of category cuda_sync): kept for
 * the sync resolution, not modelled itself. */
static lp_status sync_record(cctx *c, const kargs *k, uint32_t thread, int64_t ts, int64_t dur)
{
    if (lp_grow_at(&c->sy, &c->capsy, c->nsy + 1, sizeof *c->sy))
        return nomem(c);
    csync *y = &c->sy[c->nsy++];
    y->corr = k->corr;
    y->start = ts;
    y->end = ts + dur;
    y->stream = k->stream;
    y->wait_stream = k->wait_stream;
    y->thread = thread;
    y->kind = SY_OTHER;
    if (lp_json_str_is(k->sync_kind, "Stream Sync"))
        y->kind = SY_STREAM;
    else if (lp_json_str_is(k->sync_kind, "Context Sync") || lp_json_str_is(k->sync_kind, "Device Sync"))
        y->kind = SY_CONTEXT;
    else if (lp_json_str_is(k->sync_kind, "Event Sync"))
        y->kind = SY_EVENT;
    see_time(c, ts + dur);
    c->unmodelled[UM_SYNC_LINK]++;
    return LP_OK;
}

/* A complete slice (X). */
static lp_status x_event(cctx *c, const lp_json *ev, const evf *f, int64_t ts, uint32_t thread, lp_str name,
                         lp_str cat, int kc)
{
    char w[80];
    lp_status st;
    int64_t dur;
    if (ch_node_ns(f->dur, &dur)) {
        ch_skip(c, SK_DUR, f->dur ? f->dur : ev, "X event '%s': \"dur\" must be a number of microseconds, found %s",
                name == LP_STR_NONE ? "" : lp_strtab_get(c->st, name), lp_json_what(f->dur, w, sizeof w));
        return LP_OK;
    }
    if (dur < 0) {
        ch_skip(c, SK_DUR, f->dur, "X event '%s' has a negative duration (%lld ns)",
                name == LP_STR_NONE ? "" : lp_strtab_get(c->st, name), (long long)dur);
        return LP_OK;
    }
    if (ts > INT64_MAX - dur) {
        ch_skip(c, SK_DUR, f->dur, "X event ends beyond the 64-bit nanosecond range");
        return LP_OK;
    }
    kargs ka;
    uint32_t attrs;
    if ((st = ch_args_attrs(c, f->args, &attrs, &ka, NULL, 0)))
        return st;
    uint16_t flags = ka.no_op ? SL_NO_OP : 0;
    if (ka.derived) {
        c->unmodelled[UM_GAP]++;
        return LP_OK;
    }
    if (kc == KC_CUDA_SYNC) /* a GPU-side synchronisation record */
        return sync_record(c, &ka, thread, ts, dur);
    if (kc == KC_KERNEL || kc == KC_KERNEL2 || kc == KC_GPU_MEMCPY || kc == KC_MEMCPY || kc == KC_GPU_MEMSET ||
        kc == KC_MEMSET) {
        flags |= SL_GPU_OP;
        c->th[thread].gpu = 1;
        if (ka.stream >= 0)
            c->th[thread].stream = ka.stream;
        if (kc == KC_GPU_MEMCPY || kc == KC_MEMCPY)
            flags |= SL_IO;
    } else if (kc == KC_CUDA_RUNTIME || kc == KC_RUNTIME || kc == KC_CUDA_DRIVER) {
        flags |= SL_RUNTIME;
        if (ends_with(f->name, "Synchronize"))
            flags |= SL_SYNC;
    } else if (kc == KC_TRACE) {
        flags |= SL_MARK;
    } else if (kc == KC_GPU_USER_ANNOTATION) {
        flags |= SL_CONTAINER; /* its time between kernels is the stream's idle time, not work */
    }
    uint32_t idx;
    if ((st = ch_push_slice(c, ev, thread, ts, ts + dur, name, cat, attrs, flags, ka.corr, &idx)))
        return st;
    see_time(c, ts + dur);
    return v2_flows(c, ev, f, thread, idx);
}

/* A slice begins (B): pushed on its thread's stack of open slices. */
static lp_status b_event(cctx *c, const lp_json *ev, const evf *f, int64_t ts, uint32_t thread, lp_str name,
                         lp_str cat)
{
    lp_status st;
    kargs ka;
    uint32_t attrs, idx;
    if ((st = ch_args_attrs(c, f->args, &attrs, &ka, NULL, 0)))
        return st;
    if (ka.derived) {
        c->unmodelled[UM_GAP]++;
        return LP_OK;
    }
    if ((st = ch_push_slice(c, ev, thread, ts, OPEN_END, name, cat, attrs, SL_FROM_B, ka.corr, &idx)))
        return st;
    cthread *th = &c->th[thread];
    if (th->nopen == th->capopen) {
        size_t cap = th->capopen;
        if (lp_grow_at(&th->open, &cap, (size_t)th->nopen + 1, sizeof *th->open))
            return nomem(c);
        th->capopen = (uint32_t)cap;
    }
    th->open[th->nopen++] = idx;
    see_time(c, ts);
    return v2_flows(c, ev, f, thread, idx);
}

/* A slice ends (E): the innermost open slice of the thread. */
static lp_status e_event(cctx *c, const lp_json *ev, int64_t ts, uint32_t thread, lp_str name)
{
    cthread *th = &c->th[thread];
    see_time(c, ts);
    if (!th->nopen) {
        ch_skip(c, SK_E_NO_B, ev, "E event%s%s%s on thread %s/%s without an open B", name != LP_STR_NONE ? " '" : "",
                name != LP_STR_NONE ? lp_strtab_get(c->st, name) : "", name != LP_STR_NONE ? "'" : "",
                lp_strtab_get(c->st, th->pid), lp_strtab_get(c->st, th->tid));
        return LP_OK;
    }
    uint32_t idx = th->open[--th->nopen];
    cslice *s = &c->sl[idx];
    if (ts < s->start) {
        s->flags |= SL_DROP;
        ch_skip(c, SK_NEG, ev, "E event at %lld ns ends slice '%s' (B at byte %llu) before it began (%lld ns)",
                (long long)ts, s->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, s->name),
                (unsigned long long)s->off, (long long)s->start);
        s->end = s->start;
        return LP_OK;
    }
    s->end = ts;
    if (name != LP_STR_NONE && s->name != LP_STR_NONE && name != s->name && lp_strtab_len(c->st, name))
        ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, ev->line, ev->off,
                  "E event '%s' closes slice '%s' (B at byte %llu): names differ", lp_strtab_get(c->st, name),
                  lp_strtab_get(c->st, s->name), (unsigned long long)s->off);
    return LP_OK;
}

/* A flow point (s, t, f), keyed by cat + name + id. */
static lp_status flow_event(cctx *c, const lp_json *ev, const evf *f, char ph, int64_t ts, uint32_t thread,
                            lp_str name, lp_str cat)
{
    char w[80];
    lp_status st;
    size_t idn;
    int local;
    const char *id = ch_event_id(f, &idn, &local);
    if (!id) {
        ch_skip(c, SK_NO_ID, ev, "flow event (ph %c) without an id (found %s)", ph, lp_json_what(f->id, w, sizeof w));
        return LP_OK;
    }
    const char *cs = cat == LP_STR_NONE ? "" : lp_strtab_get(c->st, cat);
    const char *ns = name == LP_STR_NONE ? "" : lp_strtab_get(c->st, name);
    if (!strncmp(cs, "longpole.", 9)) { /* the critical-path flows of longpole's exports */
        c->unmodelled[UM_GAP]++;
        return LP_OK;
    }
    char buf[256];
    const char *parts[4] = {"F", cs, ns, id};
    size_t lens[4] = {1, strlen(cs), strlen(ns), idn};
    uint32_t key;
    if (ch_key_id(c, buf, ch_join_key(buf, sizeof buf, parts, lens, 4), &key))
        return nomem(c);
    int bind_here = ph != 'f' || lp_json_str_is(f->bp, "e") || strstr(cs, "input") || strstr(cs, "ipc.flow");
    uint32_t attrs = 0;
    const char *mid = id;
    size_t midn = idn;
    int lpexport = 0;
    if (ph == 's') {
        kargs ka;
        if ((st = ch_args_attrs(c, f->args, &attrs, &ka, NULL, 0)))
            return st;
        if (ka.msgid) { /* longpole's export: the original message id (null: none) */
            lpexport = 1;
            mid = ka.msgid->type == LP_JSON_STRING || ka.msgid->type == LP_JSON_NUMBER ? ka.msgid->s : NULL;
            midn = mid ? ka.msgid->len : 0;
        }
    }
    see_time(c, ts);
    if ((st = push_flow(c, ev, key, thread, ts, NONE, ph, bind_here, cat, name, attrs, mid, midn)))
        return st;
    c->fl[c->nfl - 1].lpexport = (uint8_t)lpexport;
    return LP_OK;
}

/* One trace event: checked (a record that cannot be used is skipped and reported),
 * counted if it is of a kind that is not modelled, else stored by phase. */
lp_status ch_event(cctx *c, const lp_json *ev)
{
    char w[80];
    c->nevents++;
    if (ev->type != LP_JSON_OBJECT) {
        ch_skip(c, SK_SHAPE, ev, "a trace event must be an object, found %s", lp_json_what(ev, w, sizeof w));
        return LP_OK;
    }
    evf f;
    fields(ev, &f);
    if (!f.ph || f.ph->type != LP_JSON_STRING || f.ph->len == 0) {
        ch_skip(c, SK_PH, ev, "event without a phase (\"ph\" is %s)", lp_json_what(f.ph, w, sizeof w));
        return LP_OK;
    }
    char ph = f.ph->s[0];
    if (f.ph->len != 1) {
        c->skipped[SK_PHASE]++;
        ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, ev->line, ev->off, "unknown phase %s; event skipped",
                  lp_json_excerpt(f.ph, w, sizeof w));
        return LP_OK;
    }
    if (ph == 'M')
        return metadata(c, ev, &f);
    switch (ph) {
    case 'C': c->unmodelled[UM_COUNTER]++; return LP_OK;
    case 'i': case 'I': case 'R': c->unmodelled[UM_INSTANT]++; return LP_OK;
    case 'P': c->unmodelled[UM_SAMPLE]++; return LP_OK;
    case 'N': case 'O': case 'D': c->unmodelled[UM_OBJECT]++; return LP_OK;
    case 'v': case 'V': c->unmodelled[UM_MEMDUMP]++; return LP_OK;
    case 'c': case '(': case ')': case '=': c->unmodelled[UM_OTHER]++; return LP_OK;
    case 'X': case 'B': case 'E': case 's': case 't': case 'f': case 'b': case 'e': case 'n':
    case 'S': case 'T': case 'F': case 'p': break;
    default:
        c->skipped[SK_PHASE]++;
        ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, ev->line, ev->off, "unknown phase '%c'; event skipped", ph);
        return LP_OK;
    }
    int64_t ts;
    if (ch_node_ns(f.ts, &ts)) {
        ch_skip(c, SK_TS, f.ts ? f.ts : ev, "%c event: \"ts\" must be a number of microseconds, found %s", ph,
                lp_json_what(f.ts, w, sizeof w));
        return LP_OK;
    }
    if ((f.name && f.name->type != LP_JSON_STRING && f.name->type != LP_JSON_NULL) ||
        (f.cat && f.cat->type != LP_JSON_STRING && f.cat->type != LP_JSON_NULL)) {
        const lp_json *bad = f.name && f.name->type != LP_JSON_STRING && f.name->type != LP_JSON_NULL ? f.name : f.cat;
        ch_skip(c, SK_FIELD, bad, "%c event: \"%s\" must be a string, found %s", ph, bad->key, lp_json_what(bad, w, sizeof w));
        return LP_OK;
    }
    if ((f.pid && f.pid->type != LP_JSON_NUMBER && f.pid->type != LP_JSON_STRING) ||
        (f.tid && f.tid->type != LP_JSON_NUMBER && f.tid->type != LP_JSON_STRING)) {
        const lp_json *bad = f.pid && f.pid->type != LP_JSON_NUMBER && f.pid->type != LP_JSON_STRING ? f.pid : f.tid;
        ch_skip(c, SK_FIELD, bad, "%c event: \"%s\" must be a number or a string, found %s", ph, bad->key,
                lp_json_what(bad, w, sizeof w));
        return LP_OK;
    }
    uint32_t thread;
    lp_status st = ch_get_thread(c, f.pid, f.tid, &thread);
    if (st)
        return st;
    int oom = 0;
    lp_str name = ch_node_str(c, f.name, &oom), cat = ch_node_str(c, f.cat, &oom);
    if (oom)
        return nomem(c);
    int kc = kcat(c, cat);
    if (kc < KC_TRACE)
        c->kineto = 1;

    switch (ph) {
    case 'X': return x_event(c, ev, &f, ts, thread, name, cat, kc);
    case 'B': return b_event(c, ev, &f, ts, thread, name, cat);
    case 'E': return e_event(c, ev, ts, thread, name);
    case 's':
    case 't':
    case 'f': return flow_event(c, ev, &f, ph, ts, thread, name, cat);
    case 'b':
    case 'e':
    case 'n':
    case 'S':
    case 'T':
    case 'F':
    case 'p':
        see_time(c, ts);
        return ch_async_event(c, ev, &f, ph, ts, thread, name, cat);
    default:
        return LP_OK;
    }
}

/* A member of the top-level object other than traceEvents. */
lp_status ch_top_member(cctx *c, const lp_json_ev *ev)
{
    const lp_json *v = ev->tree;
    if (!strcmp(ev->key, "displayTimeUnit")) {
        int oom = 0;
        c->dtu = ch_node_str(c, v, &oom);
        if (oom)
            return nomem(c);
    } else if (!strcmp(ev->key, "schemaVersion") || !strcmp(ev->key, "deviceProperties") ||
               !strcmp(ev->key, "traceName")) {
        c->kineto = 1;
    } else if (!strcmp(ev->key, "distributedInfo")) {
        c->kineto = 1;
        const lp_json *r = lp_json_get(v, "rank");
        size_t n;
        const char *s = ch_id_text(r, &n);
        if (s && n < sizeof c->rank) {
            memcpy(c->rank, s, n);
            c->rank[n] = '\0';
            c->has_rank = 1;
        }
    }
    return LP_OK;
}
