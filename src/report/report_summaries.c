/* report_summaries.c: critical participation over time (SnailTrail §3.2, §6, §7.4-7.5;
 * window.h, docs/analyses/critical-participation.md): for each window size, the trace is
 * cut into tumbling windows and each window's four summaries (activity, worker/straggler,
 * operator, communication) are drawn as stacked bars, one bar per window, next to the
 * conventional profile of the same window and to one transient critical path drawn at
 * random (Figures 5, 7-11: CP-based vs conventional vs single-path summaries).
 *
 * Invariants: the windows are analysed by lp_winpool exactly as `longpole summary
 * --window SIZE` does (same seeds, so a report's numbers equal the command's); per kind
 * the `top` keys with the largest mean CP (window-span weighted; operators by CP per
 * worker, as their summary ranks them) get a colour each, `communication` and `-` keep
 * theirs, and every other key is summed into "other" (never dropped); the totals table
 * lists every key. State: per size, per kind, a dense matrix window x series for each
 * of the three columns, and the totals.
 */
#include "report_int.h"
#include "longpole/base/alloc.h"
#include "longpole/analysis/snailtrail/window.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUM_MAX_WINDOWS 1000  /* bars per chart; more would not be readable */

/* one row of one window, as collected */
typedef struct col_row {
    uint32_t win;
    uint64_t key;
    double cp, rank, prof, path;
} col_row;

typedef struct tot_key {
    uint64_t key;
    char *label;
    double cp, rank, prof, path;  /* span-weighted sums over windows with paths */
    uint64_t first;               /* windows where it ranked first */
    int32_t series;               /* its series in the charts, -1 = "other" */
} tot_key;

typedef struct kind_view {
    uint32_t nseries;             /* top keys + specials + other */
    char **series;                /* labels (owned) */
    const char **color;
    double *cp, *prof, *path;     /* [nwin * nseries] */
    tot_key *tot;                 /* every key, ranked */
    size_t ntot;
    double cp_total_mean;         /* comm: mean share of the message edges */
} kind_view;

typedef struct size_view {
    int64_t size;
    uint64_t nwin, with_paths, p1, p2;
    int64_t *ts, *te;             /* [nwin] */
    uint8_t *has_paths;           /* [nwin] bit 0: transient paths; bit 1: a partial window */
    char **bar;                   /* [nwin] labels "+1.5 s" */
    char **tip;                   /* [nwin] "window 3: +600 ms to +800 ms" */
    kind_view k[LP_SUM_NKINDS];
    double wsum;
    uint64_t skipped;             /* > 0: not drawn, this size gives that many windows */
} size_view;

typedef struct sum_state {
    size_view *sz;
    size_t nsz;
    int64_t base;                 /* trace start */
} sum_state;

/* collector of one size */
typedef struct collect {
    size_view *v;
    col_row *rows[LP_SUM_NKINDS];
    size_t nrows[LP_SUM_NKINDS], caprows[LP_SUM_NKINDS];
    tot_key *keys[LP_SUM_NKINDS];
    size_t nkeys[LP_SUM_NKINDS], capkeys[LP_SUM_NKINDS];
    const lp_sumkeys *sk;
    int oom;
} collect;

static int sum_applies(const lp_report_data *d) { return d->trace != NULL && d->trace->nacts > 0; }

static void kind_release(kind_view *k)
{
    for (uint32_t i = 0; i < k->nseries; i++)
        lp_free(k->series ? k->series[i] : NULL);
    lp_free(k->series);
    lp_free(k->color);
    lp_free(k->cp);
    lp_free(k->prof);
    lp_free(k->path);
    for (size_t i = 0; i < k->ntot; i++)
        lp_free(k->tot[i].label);
    lp_free(k->tot);
}

static void sum_release(void *state)
{
    sum_state *s = state;
    if (!s)
        return;
    for (size_t j = 0; j < s->nsz; j++) {
        size_view *v = &s->sz[j];
        for (int k = 0; k < LP_SUM_NKINDS; k++)
            kind_release(&v->k[k]);
        for (uint64_t w = 0; w < v->nwin; w++) {
            lp_free(v->bar ? v->bar[w] : NULL);
            lp_free(v->tip ? v->tip[w] : NULL);
        }
        lp_free(v->bar);
        lp_free(v->tip);
        lp_free(v->ts);
        lp_free(v->te);
        lp_free(v->has_paths);
    }
    lp_free(s->sz);
    lp_free(s);
}

/* A "nice" duration (1, 2 or 5 x 10^k ns) at least x. */
static int64_t nice_dur(double x)
{
    if (x < 1)
        return 1;
    double p = pow(10, floor(log10(x)));
    double m = x / p;
    double n = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
    return (int64_t)(n * p);
}

static tot_key *key_get(collect *c, int kind, uint64_t key)
{
    /* keys per kind are few (types, workers, operators, pairs): a linear scan from the
     * end would be slow for pairs, so keep them sorted and bisect */
    tot_key *a = c->keys[kind];
    size_t lo = 0, hi = c->nkeys[kind];
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (a[m].key < key)
            lo = m + 1;
        else
            hi = m;
    }
    if (lo < c->nkeys[kind] && a[lo].key == key)
        return &a[lo];
    if (lp_grow((void **)&c->keys[kind], &c->capkeys[kind], c->nkeys[kind] + 1, sizeof(tot_key)))
        return NULL;
    a = c->keys[kind];
    memmove(&a[lo + 1], &a[lo], (c->nkeys[kind] - lo) * sizeof *a);
    memset(&a[lo], 0, sizeof *a);
    a[lo].key = key;
    c->nkeys[kind]++;
    return &a[lo];
}

static int on_window(void *ctx, const lp_winres *r)
{
    collect *c = ctx;
    size_view *v = c->v;
    uint64_t w = r->index;
    v->ts[w] = r->ts;
    v->te[w] = r->te;
    /* bit 0: transient paths; bit 1: partial, the data covers less than half of the
     * window (a tail past the trace's end; as `summary` marks it, docs/trust.md) */
    v->has_paths[w] = (uint8_t)((r->has_paths ? 1 : 0) | (r->nv && 2 * (r->t1 - r->t0) < r->te - r->ts ? 2 : 0));
    if (r->checked) {
        v->p1 += r->check.np1 > 0;
        v->p2 += r->check.np2 > 0;
    }
    c->sk = r->keys;
    if (!r->has_paths)
        return 0;
    v->with_paths++;
    double wt = (double)(r->t1 - r->t0);
    v->wsum += wt;
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        const lp_summary *s = &r->sum[k];
        if (lp_grow((void **)&c->rows[k], &c->caprows[k], c->nrows[k] + s->n, sizeof(col_row))) {
            c->oom = 1;
            return -1;
        }
        v->k[k].cp_total_mean += wt * s->cp_total;
        for (size_t i = 0; i < s->n; i++) {
            const lp_sumrow *q = &s->rows[i];
            c->rows[k][c->nrows[k]++] = (col_row){(uint32_t)w, q->key, q->cp, q->rank, q->prof_share, q->path_share};
            tot_key *t = key_get(c, k, q->key);
            if (!t) {
                c->oom = 1;
                return -1;
            }
            t->cp += wt * q->cp;
            t->rank += wt * q->rank;
            t->prof += wt * q->prof_share;
            t->path += wt * q->path_share;
            t->first += i == 0 && q->cp > 0;
        }
    }
    return 0;
}

static int cmp_tot(const void *pa, const void *pb)
{
    const tot_key *a = pa, *b = pb;
    int sa = a->key >= LP_SUMKEY_NONE, sb = b->key >= LP_SUMKEY_NONE; /* specials last */
    if (sa != sb)
        return sa - sb;
    if (a->rank != b->rank)
        return a->rank > b->rank ? -1 : 1;
    if (a->prof != b->prof)
        return a->prof > b->prof ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int cmp_key(const void *pa, const void *pb)
{
    const tot_key *a = pa, *b = pb;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* Turn the collected rows of one kind into the chart matrices. */
static lp_status build_kind(collect *c, int kind, const lp_report_opts *o, const lp_trace *t, lp_error *err)
{
    size_view *v = c->v;
    kind_view *kv = &v->k[kind];
    size_t nk = c->nkeys[kind];
    tot_key *keys = c->keys[kind];
    c->keys[kind] = NULL;
    kv->tot = keys;
    kv->ntot = nk;
    double ws = v->wsum > 0 ? v->wsum : 1;
    for (size_t i = 0; i < nk; i++) {
        keys[i].cp /= ws, keys[i].rank /= ws, keys[i].prof /= ws, keys[i].path /= ws;
        keys[i].series = -1;
    }
    kv->cp_total_mean /= ws;
    if (nk)
        qsort(keys, nk, sizeof *keys, cmp_tot);
    /* series: the top keys, then communication and "-", then other */
    uint32_t top = o->top, ns = 0;
    size_t nreal = 0;
    for (size_t i = 0; i < nk; i++)
        nreal += keys[i].key < LP_SUMKEY_NONE;
    for (size_t i = 0; i < nk; i++) {
        if (keys[i].key < LP_SUMKEY_NONE && i >= top && nreal > (size_t)top + 1)
            continue; /* "other" (when only one key would be folded, it keeps its own colour) */
        keys[i].series = (int32_t)ns++;
    }
    int other = ns < nk;
    kv->nseries = ns + (uint32_t)other;
    kv->series = lp_calloc(kv->nseries, sizeof *kv->series);
    kv->color = lp_calloc(kv->nseries, sizeof *kv->color);
    size_t cells = (size_t)v->nwin * kv->nseries;
    kv->cp = lp_calloc(cells ? cells : 1, sizeof(double));
    kv->prof = lp_calloc(cells ? cells : 1, sizeof(double));
    kv->path = lp_calloc(cells ? cells : 1, sizeof(double));
    if (!kv->series || !kv->color || !kv->cp || !kv->prof || !kv->path)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    char buf[256];
    for (size_t i = 0; i < nk; i++) {
        const char *lab = lp_sumkeys_label(c->sk, (lp_sumkind)kind, keys[i].key, buf, sizeof buf);
        keys[i].label = lp_strndup(lab, strlen(lab));
        if (!keys[i].label)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        int32_t sidx = keys[i].series;
        if (sidx < 0)
            continue;
        kv->series[sidx] = lp_strndup(lab, strlen(lab));
        if (!kv->series[sidx])
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        if (keys[i].key == LP_SUMKEY_COMM)
            kv->color[sidx] = RP_COMM_COLOR;
        else if (keys[i].key == LP_SUMKEY_NONE)
            kv->color[sidx] = "#dddddd";
        else if (kind == LP_SUM_ACTIVITY)
            kv->color[sidx] = rp_type_color((uint32_t)keys[i].key);
        else
            kv->color[sidx] = rp_color((size_t)sidx);
    }
    (void)t;
    if (other) {
        snprintf(buf, sizeof buf, "other (%zu keys)", nk - ns);
        kv->series[ns] = lp_strndup(buf, strlen(buf));
        if (!kv->series[ns])
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        kv->color[ns] = RP_OTHER_COLOR;
    }
    /* key -> series: bisect a copy sorted by key */
    tot_key *byk = lp_malloc((nk ? nk : 1) * sizeof *byk);
    if (!byk)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (nk) {
        memcpy(byk, keys, nk * sizeof *byk);
        qsort(byk, nk, sizeof *byk, cmp_key);
    }
    for (size_t i = 0; i < c->nrows[kind]; i++) {
        const col_row *q = &c->rows[kind][i];
        size_t lo = 0, hi = nk;
        while (lo < hi) {
            size_t m = lo + (hi - lo) / 2;
            if (byk[m].key < q->key)
                lo = m + 1;
            else
                hi = m;
        }
        int32_t sidx = byk[lo].series >= 0 ? byk[lo].series : (int32_t)ns;
        size_t cell = (size_t)q->win * kv->nseries + (size_t)sidx;
        kv->cp[cell] += q->cp;
        kv->prof[cell] += q->prof;
        kv->path[cell] += q->path;
    }
    lp_free(byk);
    return LP_OK;
}

static lp_status run_size(lp_report *r, size_view *v, int64_t size, lp_snapsrc *src, const lp_sumkeys *keys,
                          lp_error *err)
{
    const lp_trace *t = lp_report_data_of(r)->trace;
    const lp_report_opts *o = lp_report_opts_of(r);
    lp_wingrid g;
    lp_status st = lp_wingrid_make(&g, t->tmin, t->tmax, size, size, err);
    if (st)
        return st;
    if (g.n > SUM_MAX_WINDOWS) { /* left out (and said so), the other sizes drawn */
        v->size = size;
        v->skipped = g.n;
        return LP_OK;
    }
    v->size = size;
    v->nwin = g.n;
    v->ts = lp_calloc(g.n, sizeof *v->ts);
    v->te = lp_calloc(g.n, sizeof *v->te);
    v->has_paths = lp_calloc(g.n, 1);
    v->bar = lp_calloc(g.n, sizeof *v->bar);
    v->tip = lp_calloc(g.n, sizeof *v->tip);
    if (!v->ts || !v->te || !v->has_paths || !v->bar || !v->tip)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if ((st = lp_wingrid_plan(&g, src, err)))
        return st;
    collect c;
    memset(&c, 0, sizeof c);
    c.v = v;
    lp_winopts wo;
    memset(&wo, 0, sizeof wo);
    wo.kinds = (1u << LP_SUM_NKINDS) - 1;
    wo.seed = o->seed;
    lp_winpool *pool = NULL;
    st = lp_winpool_new(&pool, o->threads, &wo, on_window, &c, err);
    for (uint64_t k = 0; !st && k < g.n; k++)
        st = lp_winpool_submit(pool, src, keys, k, lp_wingrid_ts(&g, k), lp_wingrid_te(&g, k), NULL, err);
    if (!st)
        st = lp_winpool_finish(pool, err);
    lp_winpool_free(pool);
    if (c.oom && (!st || st == LP_ERR_ARG))
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory collecting the summaries");
    c.sk = keys;
    for (int k = 0; !st && k < LP_SUM_NKINDS; k++)
        st = build_kind(&c, k, o, t, err);
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        lp_free(c.rows[k]);
        if (c.keys[k]) /* not handed over (failure) */
            lp_free(c.keys[k]);
    }
    if (st)
        return st;
    for (uint64_t w = 0; w < v->nwin; w++) {
        char lab[64], d[40], d2[40], tip[240];
        int part = (v->has_paths[w] & 2) != 0;
        snprintf(lab, sizeof lab, "+%s%s", lp_fmt_dur(v->ts[w] - t->tmin, d, sizeof d), part ? " (partial)" : "");
        snprintf(tip, sizeof tip, "window %llu: +%s to +%s%s%s", (unsigned long long)w, d,
                 lp_fmt_dur(v->te[w] - t->tmin, d2, sizeof d2), v->has_paths[w] & 1 ? "" : " (no transient path)",
                 part ? " PARTIAL: its data covers less than half of the window" : "");
        v->bar[w] = lp_strndup(lab, strlen(lab));
        v->tip[w] = lp_strndup(tip, strlen(tip));
        if (!v->bar[w] || !v->tip[w])
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    return LP_OK;
}

static lp_status sum_prepare(lp_report *r, void **state, lp_error *err)
{
    const lp_trace *t = lp_report_data_of(r)->trace;
    const lp_report_opts *o = lp_report_opts_of(r);
    sum_state *s = lp_calloc(1, sizeof *s);
    *state = s;
    if (!s)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    s->base = t->tmin;
    int64_t span = t->tmax - t->tmin;
    int64_t auto_sizes[2];
    const int64_t *sizes = o->windows;
    size_t nsizes = o->nwindows;
    if (!nsizes) {
        auto_sizes[0] = nice_dur((double)span / 20.0);
        auto_sizes[1] = nice_dur((double)span / 100.0);
        nsizes = auto_sizes[1] < auto_sizes[0] ? 2 : 1;
        sizes = auto_sizes;
    }
    s->sz = lp_calloc(nsizes, sizeof *s->sz);
    if (!s->sz)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_snapsrc src;
    lp_sumkeys keys;
    lp_status st = lp_snapsrc_init(&src, t, err);
    if (st)
        return st;
    if ((st = lp_sumkeys_init(&keys, t, err))) {
        lp_snapsrc_release(&src);
        return st;
    }
    for (size_t j = 0; j < nsizes && !st; j++) {
        if (sizes[j] <= 0) {
            st = lp_error_set(err, LP_ERR_ARG, "window sizes must be positive");
            break;
        }
        s->nsz = j + 1;
        st = run_size(r, &s->sz[j], sizes[j], &src, &keys, err);
    }
    lp_sumkeys_release(&keys);
    lp_snapsrc_release(&src);
    return st;
}

/* ---- writing ---------------------------------------------------------------------- */

static const char *const kind_title[LP_SUM_NKINDS] = {
    "Activity summary", "Straggler summary (per worker)", "Operator summary", "Communication summary"};
static const char *const kind_question[LP_SUM_NKINDS] = {
    "Which kind of work is on the critical path? (SnailTrail §6, Figures 5, 7-9)",
    ("Which worker holds the job back? Data skew shows as one worker's CP far above its share of the profile "
     "(Figure 10)."),
    "Which stage to re-scale? Operators are ranked by CP per worker (CP / parallelism) (Figure 11).",
    "Which channel (sender -> receiver) to shorten or co-locate? Bars add up to the message edges' share of CP."};

static void totals_table(lp_html *h, const kind_view *kv, int kind, uint64_t with_paths, size_t shown)
{
    char head[600];
    snprintf(head, sizeof head,
             "<thead><tr><th>key</th><th class=\"n\">mean CP</th>%s<th class=\"n\">first in</th>"
             "<th class=\"n\">mean profile</th><th class=\"n\">mean 1 path</th></tr></thead>",
             kind == LP_SUM_OPERATOR ? "<th class=\"n\">CP per worker</th>" : "");
    lp_html_raw(h, "<table class=\"lp-tab\">");
    lp_html_raw(h, head);
    lp_html_raw(h, "<tbody>\n");
    int folded = 0;
    for (size_t i = 0; i < kv->ntot; i++) {
        if (i == shown && kv->ntot > shown + 1) {
            rp_fold_open(h, kv->ntot - i, head);
            folded = 1;
        }
        const tot_key *k = &kv->tot[i];
        const char *col = k->series >= 0 ? kv->color[k->series] : RP_OTHER_COLOR;
        lp_html_printf(h, "<tr><td><span class=\"lp-sw\" style=\"background:%s\"></span>", col);
        lp_html_text(h, k->label);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_pct(h, k->cp);
        if (kind == LP_SUM_OPERATOR) {
            lp_html_raw(h, "</td><td class=\"n\">");
            lp_html_pct(h, k->rank);
        }
        lp_html_printf(h, "</td><td class=\"n\">%llu/%llu</td><td class=\"n\">", (unsigned long long)k->first,
                       (unsigned long long)with_paths);
        lp_html_pct(h, k->prof);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_pct(h, k->path);
        lp_html_raw(h, "</td></tr>\n");
    }
    rp_fold_close(h, folded);
}

static lp_status sum_write(const lp_report *r, const void *state, lp_html *h, lp_error *err)
{
    (void)err;
    const sum_state *s = state;
    const lp_report_opts *o = lp_report_opts_of(r);
    rp_section_open(h, &lp_report_sec_summaries);
    lp_html_raw(h, "<p class=\"lp-note\">A long-running job has no single critical path: the trace is cut into windows "
                   "and in each, an activity's <em>critical participation</em> (CP) is its share of all the window's "
                   "transient critical paths (SnailTrail §3.2, Eq. 3), counted without listing them. One bar per "
                   "window; left: CP, middle: the conventional profile (summed busy time), right: one transient path "
                   "drawn at random (what classic critical-path analysis of the window would show). Same numbers as "
                   "<code>longpole summary --window SIZE</code>. Hover a bar for its values.</p>\n");
    int any_skipped = 0;
    for (size_t j = 0; j < s->nsz; j++) {
        if (!s->sz[j].skipped)
            continue;
        lp_html_raw(h, any_skipped ? ", " : "<p class=\"lp-note\">Left out: ");
        lp_html_dur(h, s->sz[j].size);
        lp_html_printf(h, " windows (%llu of them", (unsigned long long)s->sz[j].skipped);
        lp_html_raw(h, ")");
        any_skipped = 1;
    }
    if (any_skipped)
        lp_html_printf(h, ": more than %d windows do not make readable charts (<code>--window</code> sets the "
                          "sizes).</p>\n",
                       SUM_MAX_WINDOWS);
    lp_html_raw(h, "<div class=\"lp-tabs\" role=\"tablist\">");
    int first = 1;
    for (size_t j = 0; j < s->nsz; j++) {
        if (s->sz[j].skipped)
            continue;
        lp_html_printf(h, "<button type=\"button\" data-pane=\"lp-sum-%zu\"%s>", j, first ? " class=\"lp-on\"" : "");
        first = 0;
        lp_html_dur(h, s->sz[j].size);
        lp_html_printf(h, " windows (%llu)</button>", (unsigned long long)s->sz[j].nwin);
    }
    lp_html_raw(h, "</div>\n");
    for (size_t j = 0; j < s->nsz; j++) {
        const size_view *v = &s->sz[j];
        if (v->skipped)
            continue;
        lp_html_printf(h, "<div class=\"lp-pane\" id=\"lp-sum-%zu\" data-size-ns=\"%lld\">\n", j, (long long)v->size);
        lp_html_printf(h, "<p class=\"lp-note\">%llu windows of ", (unsigned long long)v->nwin);
        lp_html_dur(h, v->size);
        lp_html_printf(h, "; %llu with transient critical paths", (unsigned long long)v->with_paths);
        if (v->p1 || v->p2)
            lp_html_printf(h, "; instrumentation checks broken in %llu (property 1) and %llu (property 2) windows: "
                              "read those with care",
                           (unsigned long long)v->p1, (unsigned long long)v->p2);
        lp_html_raw(h, ". Empty bars: no transient path in the window.</p>\n");
        for (int k = 0; k < LP_SUM_NKINDS; k++) {
            const kind_view *kv = &v->k[k];
            lp_html_printf(h, "<h3>%s</h3>\n<p class=\"lp-note\">", kind_title[k]);
            lp_html_text(h, kind_question[k]);
            if (k == LP_SUM_COMM)
                lp_html_raw(h, " Messages carry "), lp_html_pct(h, kv->cp_total_mean),
                    lp_html_raw(h, " of the critical participation on average.");
            lp_html_raw(h, "</p>\n<div class=\"lp-grid3\">\n");
            const double *mats[3] = {kv->cp, kv->prof, kv->path};
            static const char *const cap[3] = {"critical participation", "conventional profile",
                                               "one random transient path"};
            for (int m = 0; m < 3; m++) {
                rp_stack c = {.nbars = (uint32_t)v->nwin, .nseries = kv->nseries, .v = mats[m],
                              .bar_label = (const char *const *)v->bar, .bar_tip = (const char *const *)v->tip,
                              .series = (const char *const *)kv->series, .color = kv->color, .unit = RP_SHARE,
                              .ymax = k == LP_SUM_COMM ? 0 : 1, .caption = cap[m],
                              .empty_note = "no transient critical path", .width = 420, .height = 220};
                rp_svg_stack(h, &c);
            }
            lp_html_raw(h, "</div>\n");
            rp_legend(h, kv->nseries, (const char *const *)kv->series, kv->color);
            lp_html_raw(h, "<details class=\"lp-more\"><summary>Every key over all windows (means weighted by window "
                           "length)</summary>\n");
            totals_table(h, kv, k, v->with_paths, o->table_rows ? o->table_rows : 25);
            lp_html_raw(h, "</details>\n");
        }
        lp_html_raw(h, "</div>\n");
    }
    rp_section_close(h);
    return LP_OK;
}

const lp_report_section lp_report_sec_summaries = {
    "summaries", "Critical participation over time", sum_applies, sum_prepare, sum_release, sum_write,
};
