/* headline.c: the sentences that head `cp` and the report (headline.h): the grouping
 * chosen, the path's three largest keys, the profile's three largest, the bound on what
 * fixing the first could save; then the text. O(rows + path elements); one array per
 * worker while finding the top operator's worker. */
#include "longpole/analysis/critical-path/headline.h"
#include "longpole/base/alloc.h"
#include "base/util.h"
#include "longpole/model/span.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void lp_headline_release(lp_headline *h)
{
    lp_free(h->text);
    memset(h, 0, sizeof *h);
}

static lp_headline_key key_of(const lp_trace *t, const lp_breakdown *b, const lp_brow *r)
{
    lp_headline_key k;
    k.label = r->key == LP_KEY_NONE ? "(no operator)" : lp_breakdown_label(t, b, r);
    k.key = r->key;
    k.path_ns = r->path_ns;
    k.prof_ns = r->prof_ns;
    k.path_share = b->path_total ? (double)r->path_ns / (double)b->path_total : 0;
    k.prof_share = b->prof_total ? (double)r->prof_ns / (double)b->prof_total : 0;
    return k;
}

/* Operators when they name at least half of the path's activity time. */
static lp_group choose(const lp_breakdown *ops)
{
    int64_t named = 0, acts = 0;
    for (size_t i = 0; i < ops->n; i++) {
        if (ops->rows[i].key == LP_KEY_COMM)
            continue;
        acts += ops->rows[i].path_ns;
        if (ops->rows[i].key != LP_KEY_NONE)
            named += ops->rows[i].path_ns;
    }
    return acts > 0 && 2 * named >= acts ? LP_BY_OPERATOR : LP_BY_WORKER;
}

/* The profile's largest rows (ties: the breakdown's order). */
static void pick_blamed(const lp_trace *t, const lp_breakdown *b, lp_headline *h)
{
    size_t best[LP_HEADLINE_TOP], n = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (b->rows[i].prof_ns <= 0)
            continue;
        size_t k = n;
        while (k > 0 && b->rows[best[k - 1]].prof_ns < b->rows[i].prof_ns)
            k--;
        if (k >= LP_HEADLINE_TOP)
            continue;
        size_t last = n < LP_HEADLINE_TOP ? n : LP_HEADLINE_TOP - 1;
        for (size_t q = last; q > k; q--)
            best[q] = best[q - 1];
        best[k] = i;
        if (n < LP_HEADLINE_TOP)
            n++;
    }
    for (size_t k = 0; k < n; k++)
        h->blamed[h->nblamed++] = key_of(t, b, &b->rows[best[k]]);
}

/* The worker that ran most of operator op's path time. */
static lp_status top_worker(const lp_trace *t, const lp_cpath *cp, uint32_t op, lp_headline *h, lp_error *err)
{
    if (op == LP_KEY_COMM || !t->nworkers)
        return LP_OK;
    int64_t *per = lp_calloc(t->nworkers, sizeof *per);
    if (!per)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < cp->n; k++) {
        const lp_cp_elem *e = &cp->e[k];
        lp_str o = e->kind == LP_CP_ACTIVITY ? t->aop[e->index] : LP_STR_NONE;
        if (e->kind == LP_CP_ACTIVITY && (op == LP_KEY_NONE ? o == LP_STR_NONE : o == op))
            per[e->worker] += e->end - e->start;
    }
    uint32_t best = 0;
    for (uint32_t w = 1; w < t->nworkers; w++)
        if (per[w] > per[best])
            best = w;
    if (per[best] > 0) {
        h->top_worker = lp_trace_worker_name(t, best);
        h->top_worker_ns = per[best];
    }
    lp_free(per);
    return LP_OK;
}

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int failed;
} sbuf;

static void put(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(s->p + s->n, s->cap - s->n, fmt, ap);
    va_end(ap);
    if (k < 0) {
        s->failed = 1;
        return;
    }
    if ((size_t)k >= s->cap - s->n) {
        size_t cap = s->cap;
        while (cap - s->n <= (size_t)k)
            cap *= 2;
        char *p = lp_realloc(s->p, cap);
        if (!p) {
            s->failed = 1;
            return;
        }
        s->p = p;
        s->cap = cap;
        va_start(ap, fmt);
        vsnprintf(s->p + s->n, s->cap - s->n, fmt, ap);
        va_end(ap);
    }
    s->n += (size_t)k;
}

/* A share as text: one decimal, "<0.1%" for a tiny non-zero one. */
static const char *pct(double x, char *buf, size_t n)
{
    if (x > 0 && x < 0.0005)
        snprintf(buf, n, "<0.1%%");
    else
        snprintf(buf, n, "%.1f%%", 100 * x);
    return buf;
}

static void write_text(const lp_headline *h, sbuf *s)
{
    char d1[32], d2[32], p1[16], p2[16];
    const char *what = h->by == LP_BY_OPERATOR ? "operator" : "worker";
    lp_fmt_dur(h->total, d1, sizeof d1);
    if (!h->ntop) {
        put(s, "The critical path (%s) holds no activity or message time: there is nothing to blame.", d1);
        return;
    }
    const lp_headline_key *a = &h->top[0];
    if (a->key == LP_KEY_COMM)
        put(s, "The critical path (%s) waited mostly for messages in flight (communication): %s of it (%s of the "
               "profile)", d1, pct(a->path_share, p1, sizeof p1), pct(a->prof_share, p2, sizeof p2));
    else
        put(s, "The critical path (%s) waited mostly for %s %s: %s of it (%s of the profile)", d1, what, a->label,
            pct(a->path_share, p1, sizeof p1), pct(a->prof_share, p2, sizeof p2));
    size_t more = 1; /* the others worth naming: at least 0.1% of the path */
    while (more < h->ntop && h->top[more].path_share >= 0.0005)
        more++;
    for (size_t i = 1; i < more; i++)
        put(s, "%s%s %s (%s)", i == 1 ? ", then " : i + 1 == more ? " and " : ", ", h->top[i].label,
            pct(h->top[i].path_share, p1, sizeof p1), pct(h->top[i].prof_share, p2, sizeof p2));
    if (more == 1 && a->path_share < 1)
        put(s, "; nothing else reaches 0.1%%");
    put(s, ".\nA profiler would have blamed ");
    for (size_t i = 0; i < h->nblamed; i++)
        put(s, "%s%s (%s%s)", i == 0 ? "" : i + 1 == h->nblamed ? " and " : ", ", h->blamed[i].label,
            pct(h->blamed[i].prof_share, p1, sizeof p1), i == 0 ? " of the profile" : "");
    if (!h->nblamed)
        put(s, "nothing (the profile is empty)");
    lp_fmt_dur(h->save_max_ns, d2, sizeof d2);
    if (a->key == LP_KEY_COMM)
        put(s, ".\nMaking every message on the path instant could shorten it by at most %s (%s).", d2,
            pct(a->path_share, p1, sizeof p1));
    else
        put(s, ".\nMaking %s take no time could shorten the critical path by at most %s (%s)", a->label, d2,
            pct(a->path_share, p1, sizeof p1));
    if (a->key != LP_KEY_COMM && h->top_worker && h->by == LP_BY_OPERATOR) {
        lp_fmt_dur(h->top_worker_ns, d1, sizeof d1);
        put(s, "; %s of it (%s of the path) ran on %s", d1,
            pct(h->total ? (double)h->top_worker_ns / (double)h->total : 0, p1, sizeof p1), h->top_worker);
    }
    if (a->key != LP_KEY_COMM)
        put(s, ".");
}

lp_status lp_headline_make(const lp_trace *t, const lp_cpath *cp, const lp_breakdown bd[3], lp_headline *h,
                           lp_error *err)
{
    memset(h, 0, sizeof *h);
    h->by = choose(&bd[LP_BY_OPERATOR]);
    h->total = cp ? cp->total : 0;
    const lp_breakdown *b = &bd[h->by];
    for (size_t i = 0; i < b->n && h->ntop < LP_HEADLINE_TOP; i++)
        if (b->rows[i].path_ns > 0)
            h->top[h->ntop++] = key_of(t, b, &b->rows[i]);
    pick_blamed(t, b, h);
    h->save_max_ns = h->ntop ? h->top[0].path_ns : 0;
    lp_status st;
    /* (on a span trace every worker is one span: naming it says nothing the operator does not) */
    if (h->ntop && h->by == LP_BY_OPERATOR && cp && !lp_trace_is_spans(t) &&
        (st = top_worker(t, cp, h->top[0].key, h, err)))
        return st;
    sbuf s = {lp_malloc(256), 0, 256, 0};
    if (!s.p)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    s.p[0] = '\0';
    write_text(h, &s);
    if (s.failed) {
        lp_free(s.p);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    h->text = s.p;
    return LP_OK;
}
