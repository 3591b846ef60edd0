/* chrome_emit.c: the end of a file (chrome_int.h): slices grouped and sorted per
 * thread, workers named from the metadata, then per thread the nesting walk that emits
 * activities (the innermost open slice owns each instant; its stack of enclosing
 * slices is an attribute), then the messages.
 *
 * Invariants: per worker, activities are emitted in time order and never overlap; a
 * slice that overlaps its parent's end is clipped to it and reported.
 */
#include "import/chrome/chrome_int.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- resolution: grouping and sorting slices ------------------------------------------- */

static int cmp_skey(const void *a, const void *b)
{
    const skey *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* longer first: the parent */
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Group the (not dropped) slices by thread and sort each group by start, longer first,
 * input order. Threads already in order are not sorted. */
lp_status ch_group_slices(cctx *c)
{
    for (size_t t = 0; t < c->nth; t++)
        c->th[t].count = 0;
    size_t n = 0;
    for (size_t i = 0; i < c->nsl; i++)
        if (!(c->sl[i].flags & SL_DROP)) {
            c->th[c->sl[i].thread].count++;
            n++;
        }
    c->order = lp_malloc((n ? n : 1) * sizeof *c->order);
    if (!c->order)
        return nomem(c);
    uint32_t acc = 0;
    for (size_t t = 0; t < c->nth; t++) {
        c->th[t].first = acc;
        acc += c->th[t].count;
        c->th[t].count = 0;
    }
    for (size_t i = 0; i < c->nsl; i++) {
        const cslice *s = &c->sl[i];
        if (s->flags & SL_DROP)
            continue;
        cthread *th = &c->th[s->thread];
        skey *k = &c->order[th->first + th->count++];
        k->start = s->start;
        k->end = s->end;
        k->seq = s->seq;
        k->idx = (uint32_t)i;
    }
    for (size_t t = 0; t < c->nth; t++) {
        skey *k = c->order + c->th[t].first;
        size_t m = c->th[t].count;
        int sorted = 1;
        for (size_t i = 1; i < m && sorted; i++)
            if (cmp_skey(&k[i - 1], &k[i]) > 0)
                sorted = 0;
        if (!sorted)
            qsort(k, m, sizeof *k, cmp_skey);
    }
    return LP_OK;
}

/* ---- emission -------------------------------------------------------------------------- */

static lp_status set_worker_names(cctx *c)
{
    /* thread names used more than once among the threads that become workers */
    lp_strtab *st = c->st;
    uint32_t *cnt = lp_calloc(st->n ? st->n : 1, sizeof *cnt);
    if (!cnt)
        return nomem(c);
    for (size_t t = 0; t < c->nth; t++)
        if (c->th[t].used && !c->th[t].async && c->th[t].tname != LP_STR_NONE && c->th[t].tname < st->n)
            cnt[c->th[t].tname]++;
    lp_status s = LP_OK;
    char buf[1024];
    for (size_t t = 0; t < c->nth && !s; t++) {
        cthread *th = &c->th[t];
        if (!th->used)
            continue;
        /* names are built with their lengths: they may hold any byte */
        size_t n = 0;
#define APPEND(p, k)                                                                                                   \
    do {                                                                                                               \
        size_t k_ = (k);                                                                                               \
        if (k_ > sizeof buf - n)                                                                                       \
            k_ = sizeof buf - n;                                                                                       \
        memcpy(buf + n, (p), k_);                                                                                      \
        n += k_;                                                                                                       \
    } while (0)
#define APPEND_STR(id) APPEND(lp_strtab_get(st, id), lp_strtab_len(st, id))
        if (c->has_rank) {
            APPEND("rank", 4);
            APPEND(c->rank, strlen(c->rank));
            APPEND("/", 1);
        }
        int named = th->tname != LP_STR_NONE && lp_strtab_len(st, th->tname);
        if (th->async) {
            APPEND_STR(th->akey);
        } else if (named) {
            APPEND_STR(th->tname);
            if (cnt[th->tname] > 1) {
                APPEND(" (", 2);
                APPEND_STR(th->pid);
                APPEND("/", 1);
                APPEND_STR(th->tid);
                APPEND(")", 1);
            }
        } else {
            APPEND_STR(th->pid);
            APPEND("/", 1);
            APPEND_STR(th->tid);
        }
#undef APPEND_STR
#undef APPEND
        if ((s = lp_builder_worker(c->b, buf, n, &th->worker, c->err)))
            break;
        /* attributes */
        lp_str kv[2 * 10];
        uint32_t np = 0;
        const cproc *p = th->proc != NONE ? &c->pr[th->proc] : NULL;
#define PAIR(k, v)                                                                                                     \
    do {                                                                                                               \
        kv[2 * np] = (k);                                                                                              \
        kv[2 * np + 1] = (v);                                                                                          \
        np++;                                                                                                          \
    } while (0)
        PAIR(c->s_kind, th->async ? c->s_async : th->gpu ? c->s_gpu : c->s_cpu);
        if (th->pid != LP_STR_NONE)
            PAIR(c->s_pid, th->pid);
        if (!th->async && th->tid != LP_STR_NONE)
            PAIR(c->s_tid, th->tid);
        if (p && p->name != LP_STR_NONE)
            PAIR(c->s_process, p->name);
        if (p && p->labels != LP_STR_NONE)
            PAIR(c->s_labels, p->labels);
        if (!th->async && th->tname != LP_STR_NONE)
            PAIR(c->s_thread, th->tname);
        if (!th->async && th->tsort != LP_STR_NONE)
            PAIR(c->s_sort, th->tsort);
        if (th->gpu && th->stream >= 0) {
            char sb[24];
            int k = snprintf(sb, sizeof sb, "%lld", (long long)th->stream);
            lp_str v;
            if (intern(c, sb, (size_t)k, &v)) {
                s = nomem(c);
                break;
            }
            PAIR(c->s_stream, v);
        }
        if (c->has_rank) {
            lp_str v;
            if (intern(c, c->rank, strlen(c->rank), &v)) {
                s = nomem(c);
                break;
            }
            PAIR(c->s_rank, v);
        }
#undef PAIR
        uint32_t list;
        if ((s = lp_builder_attrs(c->b, kv, np, &list, c->err)))
            break;
        s = lp_builder_worker_attrs(c->b, th->worker, list, 0, c->err);
    }
    lp_free(cnt);
    return s;
}

static uint16_t slice_type(cctx *c, const cslice *s, int *cat_is_type)
{
    *cat_is_type = 0;
    if (s->cat != LP_STR_NONE) {
        static const char *const names[LP_TYPE_NBUILTIN] = {"processing", "scheduling", "barrier", "buffer",
                                                            "serialization", "deserialization", "waiting", "io",
                                                            "unknown"};
        const char *cs = lp_strtab_get(c->st, s->cat);
        for (int i = 0; i < LP_TYPE_NBUILTIN; i++)
            if (!strcmp(cs, names[i])) {
                *cat_is_type = 1;
                return (uint16_t)i;
            }
    }
    if (s->flags & SL_SYNC)
        return (s->flags & SL_WAIT) ? LP_TYPE_WAITING : LP_TYPE_PROCESSING;
    if (s->flags & SL_IO)
        return LP_TYPE_IO;
    return LP_TYPE_PROCESSING;
}

/* The stack text of a child of (parent stack text, parent name): memoised. */
static lp_status stack_of(cctx *c, lp_str parent_stack, lp_str parent_name, lp_str *out)
{
    if (parent_name == LP_STR_NONE)
        parent_name = LP_STR_EMPTY;
    uint64_t key = ((uint64_t)parent_stack << 32) | parent_name, text;
    if (lp_hmap_get(&c->memo, key, &text)) {
        *out = (lp_str)text;
        return LP_OK;
    }
    /* text: parent stack + ";" + parent name */
    size_t o = 0;
    if (parent_stack != LP_STR_NONE) {
        size_t n = lp_strtab_len(c->st, parent_stack);
        memcpy(c->stackbuf, lp_strtab_get(c->st, parent_stack), n);
        o = n;
    }
    size_t nn = lp_strtab_len(c->st, parent_name);
    if (o + 1 + nn < MAX_STACK_TEXT) {
        if (o)
            c->stackbuf[o++] = ';';
        memcpy(c->stackbuf + o, lp_strtab_get(c->st, parent_name), nn);
        o += nn;
    }
    lp_str s;
    if (intern(c, c->stackbuf, o, &s))
        return nomem(c);
    if (lp_hmap_put(&c->memo, key, s, NULL))
        return nomem(c);
    *out = s;
    return LP_OK;
}

/* Per-slice emission info, computed when the slice is pushed. */
typedef struct open_s {
    uint32_t idx;
    lp_str op;            /* operator: the name, none when it only repeats a built-in type */
    int64_t end;
    lp_str stack;         /* stack text of this slice's children */
    uint16_t type;
    uint32_t attrs;
    int emitted;
} open_s;

static lp_status piece(cctx *c, const cthread *th, open_s *o, int64_t from, int64_t to)
{
    const cslice *s = &c->sl[o->idx];
    if (s->flags & SL_CONTAINER)
        return LP_OK;
    int whole_zero = s->start == s->end && !o->emitted && from == to;
    if (to <= from && !whole_zero)
        return LP_OK;
    o->emitted = 1;
    return lp_builder_activity(c->b, th->worker, from, to, o->type, o->op, o->attrs, s->line, c->err);
}

static lp_status open_slice(cctx *c, open_s *o, uint32_t idx, int64_t end, const open_s *parent)
{
    cslice *s = &c->sl[idx];
    o->idx = idx;
    o->end = end;
    o->emitted = 0;
    int cat_is_type;
    o->type = slice_type(c, s, &cat_is_type);
    o->op = (s->flags & SL_NO_OP) ? LP_STR_NONE : s->name;
    lp_str extra[8];
    uint32_t ne = 0;
    lp_str stack = parent ? parent->stack : LP_STR_NONE;
    if (parent && stack != LP_STR_NONE)
        extra[2 * ne] = c->s_stack, extra[2 * ne + 1] = stack, ne++;
    if (s->cat != LP_STR_NONE && !cat_is_type && lp_strtab_len(c->st, s->cat))
        extra[2 * ne] = c->s_cat, extra[2 * ne + 1] = s->cat, ne++;
    if (s->flags & SL_UNCLOSED)
        extra[2 * ne] = c->s_unclosed, extra[2 * ne + 1] = c->s_true, ne++;
    if (s->flags & SL_CLIPPED)
        extra[2 * ne] = c->s_clipped, extra[2 * ne + 1] = c->s_true, ne++;
    lp_status st = ch_attrs_plus(c, s->attrs, extra, ne, &o->attrs);
    if (st)
        return st;
    /* the stack text of this slice's children */
    return stack_of(c, stack, s->name, &o->stack);
}

/* Flatten one thread's sorted slices into activities: at every instant the innermost
 * open slice is the activity. */
static lp_status emit_thread(cctx *c, cthread *th, open_s **stk, size_t *capstk)
{
    const skey *k = c->order + th->first;
    size_t depth = 0;
    int64_t cursor = INT64_MIN;
    lp_status st = LP_OK;
    for (uint32_t i = 0; i < th->count && !st; i++) {
        cslice *s = &c->sl[k[i].idx];
        if (s->flags & SL_DROP)
            continue;
        int64_t start = s->start, end = s->end;
        while (depth && (*stk)[depth - 1].end <= start && !st) {
            open_s *o = &(*stk)[depth - 1];
            st = piece(c, th, o, cursor, o->end);
            cursor = o->end;
            depth--;
        }
        if (st)
            break;
        open_s *parent = depth ? &(*stk)[depth - 1] : NULL;
        if (parent) {
            if (end > parent->end) {
                const cslice *ps = &c->sl[parent->idx];
                ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, s->line, s->off,
                          "slice '%s' [%lld, %lld] on thread %s overlaps the end of its enclosing slice '%s' "
                          "(byte %llu, ends %lld): clipped to it",
                          s->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, s->name), (long long)start, (long long)end,
                          lp_trace_worker_name(lp_builder_trace(c->b), th->worker),
                          ps->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, ps->name), (unsigned long long)ps->off,
                          (long long)parent->end);
                end = parent->end;
                s->flags |= SL_CLIPPED;
            }
            if ((st = piece(c, th, parent, cursor, start)))
                break;
        }
        if (lp_grow_at(stk, capstk, depth + 1, sizeof **stk)) {
            st = nomem(c);
            break;
        }
        parent = depth ? &(*stk)[depth - 1] : NULL;
        if ((st = open_slice(c, &(*stk)[depth], k[i].idx, end, parent)))
            break;
        depth++;
        cursor = start;
    }
    while (depth && !st) {
        open_s *o = &(*stk)[depth - 1];
        st = piece(c, th, o, cursor, o->end);
        cursor = o->end;
        depth--;
    }
    return st;
}

lp_status ch_emit(cctx *c)
{
    lp_status st = set_worker_names(c);
    if (st)
        return st;
    open_s *stk = NULL;
    size_t capstk = 0;
    c->stackbuf = lp_malloc(MAX_STACK_TEXT + 8);
    if (!c->stackbuf)
        return nomem(c);
    for (size_t t = 0; t < c->nth && !st; t++)
        if (c->th[t].used && c->th[t].count)
            st = emit_thread(c, &c->th[t], &stk, &capstk);
    lp_free(stk);
    for (size_t i = 0; i < c->nms && !st; i++) {
        const cmsg *m = &c->ms[i];
        st = lp_builder_message(c->b, c->th[m->src].worker, m->send, c->th[m->dst].worker, m->recv, m->id, m->attrs,
                                m->line, c->err);
    }
    return st;
}
