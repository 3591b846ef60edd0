/* chrome_async.c: async events (b/e/n and S/T/p/F, chrome_int.h): each async id is a
 * timeline of its own ("async:<cat-or-name>:<id>"); its events are stored as read and,
 * at the end of the file, made into nested slices on that timeline, with a message from
 * the thread that began the outermost slice and one to the thread that ended it.
 *
 * Invariants: a begin without an end, or an end or step without a begin, is skipped and
 * reported, never guessed; slices on one timeline nest.
 */
#include "import/chrome/chrome_int.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lp_status ch_async_event(cctx *c, const lp_json *ev, const evf *f, char ph, int64_t ts, uint32_t thread,
                         lp_str name, lp_str cat)
{
    size_t idn;
    int local;
    const char *id = ch_event_id(f, &idn, &local);
    char w[80];
    if (!id) {
        ch_skip(c, SK_NO_ID, ev, "async event (ph %c) without an id (found %s)", ph, lp_json_what(f->id, w, sizeof w));
        return LP_OK;
    }
    int nestable = ph == 'b' || ph == 'e' || ph == 'n';
    if (ph == 'n') {
        c->unmodelled[UM_ASYNC_N]++;
        return LP_OK;
    }
    /* key: nestable by (cat, id [, pid if local]); legacy by (name, id) as catapult does */
    char buf[200];
    const char *parts[4];
    size_t lens[4];
    int np = 0;
    parts[np] = nestable ? "b" : "S", lens[np++] = 1;
    lp_str by = nestable ? cat : name;
    const char *bys = by == LP_STR_NONE ? "" : lp_strtab_get(c->st, by);
    parts[np] = bys, lens[np++] = strlen(bys);
    parts[np] = id, lens[np++] = idn;
    if (local) {
        parts[np] = lp_strtab_get(c->st, c->th[thread].pid);
        lens[np] = strlen(parts[np]);
        np++;
    }
    size_t kn = ch_join_key(buf, sizeof buf, parts, lens, np);
    uint32_t key;
    if (ch_key_id(c, buf, kn, &key))
        return nomem(c);
    if (c->keyval[key] == NONE) { /* the async timeline */
        uint32_t t;
        lp_status st = ch_new_thread(c, &t);
        if (st)
            return st;
        cthread *th = &c->th[t];
        th->async = 1;
        th->proc = c->th[thread].proc;
        th->pid = c->th[thread].pid;
        char nb[300];
        int k = snprintf(nb, sizeof nb, "async:%s:%.*s", bys, (int)(idn > 200 ? 200 : idn), id);
        if (intern(c, nb, (size_t)k < sizeof nb ? (size_t)k : sizeof nb - 1, &th->akey))
            return nomem(c);
        c->keyval[key] = t;
    }
    kargs ka;
    uint32_t attrs;
    lp_status st = ch_args_attrs(c, f->args, &attrs, &ka, NULL, 0);
    if (st)
        return st;
    if (lp_grow_at(&c->as, &c->capas, c->nas + 1, sizeof *c->as))
        return nomem(c);
    casync *a = &c->as[c->nas++];
    a->ts = ts;
    a->off = ev->off;
    a->line = lp_line32(ev->line);
    a->key = key;
    a->thread = thread;
    a->seq = c->seq++;
    a->attrs = attrs;
    a->name = name;
    a->cat = cat;
    a->step = LP_STR_NONE;
    a->ph = ph;
    if (ka.step) {
        int oom = 0;
        a->step = ch_node_str(c, ka.step, &oom);
        if (oom)
            return nomem(c);
    }
    return LP_OK;
}

/* The state of one async id's timeline while its events are walked in order. */
typedef struct awalk {
    uint32_t at;             /* the timeline (a thread of its own) */
    uint32_t *stack;         /* begins (b) open, innermost last */
    size_t depth, capstack;
    uint32_t sopen;          /* legacy S..F: the S, or NONE */
    uint32_t steps_from;     /* the last S/T/p of it, or NONE */
    uint32_t a_begin, a_end; /* attributes of the begin and end messages */
} awalk;

/* The position of an async event, for the slices it makes. */
static lp_json pos_of(const casync *a)
{
    lp_json fake;
    memset(&fake, 0, sizeof fake);
    fake.off = a->off;
    fake.line = a->line;
    return fake;
}

/* An end (e): closes the innermost begin of the same name, and the begins left open
 * inside it (reported); the outermost is linked to the threads that began and ended it. */
static lp_status async_end(cctx *c, awalk *w, const casync *a)
{
    lp_json fake = pos_of(a);
    lp_status st;
    size_t d = w->depth;
    while (d > 0 && c->as[w->stack[d - 1]].name != a->name)
        d--;
    if (d == 0) {
        c->skipped[SK_ASYNC]++;
        ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, a->line, a->off,
                  "async end (ph e) '%s' without a matching begin; ignored",
                  a->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, a->name));
        return LP_OK;
    }
    /* inner begins left open are closed here too */
    while (w->depth >= d) {
        casync *bg = &c->as[w->stack[w->depth - 1]];
        uint32_t idx;
        if ((st = ch_push_slice(c, &fake, w->at, bg->ts, a->ts, bg->name, bg->cat, bg->attrs, SL_ASYNC, -1, &idx)))
            return st;
        if (w->depth - 1 == 0) { /* outermost: linked to the threads that began and ended it */
            if ((st = ch_add_msg(c, bg->thread, bg->ts, w->at, bg->ts, LP_MSGID_NONE, w->a_begin, bg->line)) ||
                (st = ch_add_msg(c, w->at, a->ts, a->thread, a->ts, LP_MSGID_NONE, w->a_end, a->line)))
                return st;
        }
        if (w->depth == d) {
            w->depth--;
            break;
        }
        c->skipped[SK_ASYNC]++;
        ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, bg->line, bg->off,
                  "async begin (ph b) '%s' is closed by the end of an enclosing begin",
                  bg->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, bg->name));
        w->depth--;
    }
    return LP_OK;
}

/* A step slice of the S..F span s, from `from` to `to`, named "<s's name>:<step>". */
static lp_status step_slice(cctx *c, const awalk *w, const casync *s, const casync *named, int64_t from, int64_t to,
                            const lp_json *pos)
{
    char nb[512];
    const char *nm = s->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, s->name);
    const char *sp = named->step == LP_STR_NONE ? "" : lp_strtab_get(c->st, named->step);
    int n = snprintf(nb, sizeof nb, "%s:%s", nm, sp);
    lp_str sn;
    uint32_t idx;
    if (intern(c, nb, (size_t)n < sizeof nb ? (size_t)n : sizeof nb - 1, &sn))
        return nomem(c);
    return ch_push_slice(c, pos, w->at, from, to, sn, s->cat, named->attrs, SL_ASYNC, -1, &idx);
}

/* A step (T, p) or the finish (F) of the open S: the step slice that ends here
 * ([previous step or S, this] for p; a T opens one), and at F the whole span with its
 * begin and end messages. */
static lp_status async_step(cctx *c, awalk *w, casync *a, uint32_t self)
{
    lp_json fake = pos_of(a);
    lp_status st;
    if (w->sopen == NONE) {
        c->skipped[SK_ASYNC]++;
        ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, a->line, a->off, "async %s (ph %c) without a start (ph S); ignored",
                  a->ph == 'F' ? "finish" : "step", a->ph);
        return LP_OK;
    }
    casync *s = &c->as[w->sopen];
    if (w->steps_from != NONE) {
        casync *from = &c->as[w->steps_from];
        casync *named = from->ph == 'T' ? from : a;
        if ((named->ph == 'T' || named->ph == 'p') && (st = step_slice(c, w, s, named, from->ts, a->ts, &fake)))
            return st;
    } else if (a->ph == 'p' && (st = step_slice(c, w, s, a, s->ts, a->ts, &fake))) {
        return st;
    }
    w->steps_from = self;
    if (a->ph == 'F') {
        uint32_t idx;
        if ((st = ch_push_slice(c, &fake, w->at, s->ts, a->ts, s->name, s->cat, s->attrs, SL_ASYNC, -1, &idx)) ||
            (st = ch_add_msg(c, s->thread, s->ts, w->at, s->ts, LP_MSGID_NONE, w->a_begin, s->line)) ||
            (st = ch_add_msg(c, w->at, a->ts, a->thread, a->ts, LP_MSGID_NONE, w->a_end, a->line)))
            return st;
        w->sopen = NONE;
        w->steps_from = NONE;
    }
    return LP_OK;
}

/* The events k[i..j) of one async id, in order; what is left open at its last event is
 * closed there (b, as catapult does) or dropped (S without F), and reported. */
static lp_status async_id(cctx *c, awalk *w, const fkey *k, size_t i, size_t j)
{
    lp_status st = LP_OK;
    w->at = c->keyval[k[i].key];
    w->depth = 0;
    w->sopen = w->steps_from = NONE;
    int64_t last = c->as[k[j - 1].idx].ts;
    for (size_t x = i; x < j && !st; x++) {
        casync *a = &c->as[k[x].idx];
        if (a->ph == 'b') {
            if (lp_grow_at(&w->stack, &w->capstack, w->depth + 1, sizeof *w->stack))
                return nomem(c);
            w->stack[w->depth++] = k[x].idx;
        } else if (a->ph == 'e') {
            st = async_end(c, w, a);
        } else if (a->ph == 'S') {
            if (w->sopen != NONE) {
                c->skipped[SK_ASYNC]++;
                ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, a->line, a->off,
                          "async start (ph S) while the same id is open since byte %llu; ignored",
                          (unsigned long long)c->as[w->sopen].off);
                continue;
            }
            w->sopen = k[x].idx;
            w->steps_from = NONE;
        } else { /* T, p, F */
            st = async_step(c, w, a, k[x].idx);
        }
    }
    /* begins never ended: closed at the last event of this id (catapult) */
    while (w->depth > 0 && !st) {
        casync *bg = &c->as[w->stack[--w->depth]];
        c->skipped[SK_ASYNC]++;
        ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, bg->line, bg->off,
                  "async begin (ph b) '%s' is never ended; closed at the last event of its id",
                  bg->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, bg->name));
        lp_json fake = pos_of(bg);
        uint32_t idx;
        st = ch_push_slice(c, &fake, w->at, bg->ts, last, bg->name, bg->cat, bg->attrs, SL_UNCLOSED | SL_ASYNC, -1,
                           &idx);
    }
    if (w->sopen != NONE && !st) {
        casync *s = &c->as[w->sopen];
        c->skipped[SK_ASYNC]++;
        ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, s->line, s->off,
                  "async start (ph S) '%s' is never finished (no F); ignored",
                  s->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, s->name));
    }
    return st;
}

/* Async events into slices on their id's timeline, plus begin/end messages for the
 * outermost slices. */
lp_status ch_resolve_async(cctx *c)
{
    if (!c->nas)
        return LP_OK;
    fkey *k = lp_malloc(c->nas * sizeof *k);
    if (!k)
        return nomem(c);
    for (size_t i = 0; i < c->nas; i++) {
        k[i].key = c->as[i].key;
        k[i].seq = c->as[i].seq;
        k[i].ts = c->as[i].ts;
        k[i].idx = (uint32_t)i;
    }
    qsort(k, c->nas, sizeof *k, ch_cmp_fkey);
    awalk w;
    memset(&w, 0, sizeof w);
    lp_str kvb[2] = {c->s_edge, c->s_async_begin}, kve[2] = {c->s_edge, c->s_async_end};
    lp_status st;
    if ((st = lp_builder_attrs(c->b, kvb, 1, &w.a_begin, c->err)) ||
        (st = lp_builder_attrs(c->b, kve, 1, &w.a_end, c->err))) {
        lp_free(k);
        return st;
    }
    for (size_t i = 0; i < c->nas && !st;) {
        size_t j = i;
        while (j < c->nas && k[j].key == k[i].key)
            j++;
        st = async_id(c, &w, k, i, j);
        i = j;
    }
    lp_free(w.stack);
    lp_free(k);
    return st;
}
