/* report_spans.c: span traces (spancp.h; docs/analyses/span-critical-path.md): per
 * latency percentile (CRISP: the fastest P% of the traces), the exclusive critical-path
 * time by service/operation and by call path, and an icicle flame graph of the call
 * paths: a frame's width is its inclusive time (its own exclusive critical-path time plus
 * that of every call below it), as mean per trace of the set; clicking a frame zooms on it.
 *
 * Invariants: the numbers are `longpole spans --json`'s (same aggregation); percentiles
 * whose set of traces equals an earlier one are not repeated; frames narrower than
 * FLAME_MIN of the width are not drawn one by one but summed into one grey frame per
 * parent saying how many and how much (never dropped). State: the aggregation, its
 * percentile tables and one laid-out flame tree per percentile.
 */
#include "report_int.h"
#include "longpole/base/alloc.h"
#include "longpole/analysis/spans/spancp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FLAME_W 1000.0
#define FLAME_MIN 0.4        /* viewBox units (of 1000) */

typedef struct fnode {
    uint32_t parent;         /* UINT32_MAX for the root frames' virtual parent (node 0) */
    uint32_t op;             /* operation index of the aggregation */
    uint32_t depth;          /* 0 = the virtual root "all" */
    int64_t self, incl;      /* totals over the set, ns */
    uint32_t first, next;    /* first child, next sibling (UINT32_MAX: none) */
    double x, w;             /* layout, viewBox units */
    uint32_t tiny;           /* children too narrow to draw */
    int64_t tiny_ns;
} fnode;

typedef struct flame {
    fnode *n;
    size_t nn, cap;
    uint32_t maxdepth;
} flame;

typedef struct sp_state {
    lp_spancp_agg *agg;
    lp_spancp_pct *pct;
    size_t npct;
    uint8_t *dup;            /* [npct] the set equals an earlier percentile's */
    flame *fl;               /* [npct] */
    uint64_t ntraces;
} sp_state;

static int sp_applies(const lp_report_data *d) { return d->spans != NULL && d->spans->ntraces > 0; }

static void sp_release(void *state)
{
    sp_state *s = state;
    if (!s)
        return;
    if (s->pct)
        lp_spancp_pct_free(s->pct, s->npct);
    lp_spancp_agg_free(s->agg);
    for (size_t i = 0; s->fl && i < s->npct; i++)
        lp_free(s->fl[i].n);
    lp_free(s->fl);
    lp_free(s->dup);
    lp_free(s);
}

/* The child of node p with operation op (created if absent). */
static uint32_t child(flame *f, uint32_t p, uint32_t op)
{
    for (uint32_t c = f->n[p].first; c != UINT32_MAX; c = f->n[c].next)
        if (f->n[c].op == op)
            return c;
    if (lp_grow((void **)&f->n, &f->cap, f->nn + 1, sizeof(fnode)))
        return UINT32_MAX;
    uint32_t c = (uint32_t)f->nn++;
    f->n[c] = (fnode){p, op, f->n[p].depth + 1, 0, 0, UINT32_MAX, f->n[p].first, 0, 0, 0, 0};
    f->n[p].first = c;
    f->maxdepth = f->n[c].depth > f->maxdepth ? f->n[c].depth : f->maxdepth;
    return c;
}

/* Children are laid out largest inclusive time first (ties: operation index). */
typedef struct kid {
    int64_t incl;
    uint32_t op, idx;
} kid;

static int cmp_kid(const void *pa, const void *pb)
{
    const kid *a = pa, *b = pb;
    if (a->incl != b->incl)
        return a->incl > b->incl ? -1 : 1;
    return a->op < b->op ? -1 : a->op > b->op;
}

static lp_status build_flame(flame *f, const lp_spancp_agg *a, const lp_spancp_pct *p, lp_error *err)
{
    memset(f, 0, sizeof *f);
    if (lp_grow((void **)&f->n, &f->cap, 1, sizeof(fnode)))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    f->n[0] = (fnode){UINT32_MAX, UINT32_MAX, 0, 0, 0, UINT32_MAX, UINT32_MAX, 0, FLAME_W, 0, 0};
    f->nn = 1;
    uint32_t few[64];
    for (size_t i = 0; i < p->npaths; i++) {
        const lp_spancp_row *r = &p->paths[i];
        size_t depth = lp_spancp_path_ops(a, r->id, few, 64);
        uint32_t *ops = few;
        if (depth > 64) {
            ops = lp_malloc(depth * sizeof *ops);
            if (!ops)
                return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            lp_spancp_path_ops(a, r->id, ops, depth);
        }
        uint32_t cur = 0;
        for (size_t k = 0; k < depth && cur != UINT32_MAX; k++)
            cur = child(f, cur, ops[k]);
        if (ops != few)
            lp_free(ops);
        if (cur == UINT32_MAX)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        f->n[cur].self += r->total;
    }
    /* inclusive times: children come after their parents in f->n, so sum backwards */
    for (size_t i = f->nn; i-- > 0;) {
        f->n[i].incl += f->n[i].self;
        if (f->n[i].parent != UINT32_MAX)
            f->n[f->n[i].parent].incl += f->n[i].incl;
    }
    /* layout, parents first (creation order) */
    kid *kids = lp_malloc((f->nn ? f->nn : 1) * sizeof *kids);
    if (!kids)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    double total = (double)(f->n[0].incl > 0 ? f->n[0].incl : 1);
    for (size_t i = 0; i < f->nn; i++) {
        fnode *pn = &f->n[i];
        size_t k = 0;
        for (uint32_t c = pn->first; c != UINT32_MAX; c = f->n[c].next)
            kids[k++] = (kid){f->n[c].incl, f->n[c].op, c};
        qsort(kids, k, sizeof *kids, cmp_kid);
        double x = pn->x;
        pn->first = k ? kids[0].idx : UINT32_MAX;
        for (size_t q = 0; q < k; q++) {
            fnode *c = &f->n[kids[q].idx];
            c->next = q + 1 < k ? kids[q + 1].idx : UINT32_MAX;
            c->x = x;
            c->w = FLAME_W * (double)c->incl / total;
            x += c->w;
            if (c->w < FLAME_MIN) {
                pn->tiny++;
                pn->tiny_ns += c->incl;
            }
        }
    }
    lp_free(kids);
    return LP_OK;
}

static lp_status sp_prepare(lp_report *r, void **state, lp_error *err)
{
    const lp_spans *sp = lp_report_data_of(r)->spans;
    const lp_report_opts *o = lp_report_opts_of(r);
    sp_state *s = lp_calloc(1, sizeof *s);
    *state = s;
    if (!s)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_status st = lp_spancp_agg_new(&s->agg, sp, err);
    if (st)
        return st;
    lp_spancp cp;
    lp_spancp_init(&cp);
    for (uint32_t t = 0; t < sp->ntraces && !st; t++)
        if (!(st = lp_spancp_trace(&cp, sp, t, err)))
            st = lp_spancp_agg_add(s->agg, &cp, err);
    lp_spancp_release(&cp);
    if (st)
        return st;
    s->ntraces = lp_spancp_agg_traces(s->agg);
    static const double all = 100;
    const double *p = o->npercentiles ? o->percentiles : &all;
    size_t np = o->npercentiles ? o->npercentiles : 1;
    if ((st = lp_spancp_agg_percentiles(s->agg, p, np, &s->pct, err)))
        return st;
    s->npct = np;
    s->dup = lp_calloc(np, 1);
    s->fl = lp_calloc(np, sizeof *s->fl);
    if (!s->dup || !s->fl)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < np; i++) {
        for (size_t k = 0; k < i; k++)
            if (s->pct[k].ntraces == s->pct[i].ntraces)
                s->dup[i] = 1;
        if (s->dup[i])
            continue;
        if ((st = build_flame(&s->fl[i], s->agg, &s->pct[i], err)))
            return st;
    }
    return LP_OK;
}

/* ---- writing ---------------------------------------------------------------------- */

static void pname(lp_html *h, const lp_spancp_pct *p, uint64_t all)
{
    if (p->ntraces == all)
        lp_html_raw(h, "all traces");
    else
        lp_html_printf(h, "P%g", p->p);
}

static void frame_label(lp_html *h, const lp_spancp_agg *a, uint32_t op)
{
    const char *svc, *opn;
    lp_spancp_op_names(a, op, &svc, &opn);
    lp_html_raw(h, "[");
    lp_html_text(h, svc);
    lp_html_raw(h, "] ");
    lp_html_text(h, opn);
}

/* The label shown inside a frame: as many characters as fit (about 6.5 units each). */
static void frame_text(lp_html *h, const lp_spancp_agg *a, uint32_t op, double w)
{
    const char *svc, *opn;
    lp_spancp_op_names(a, op, &svc, &opn);
    size_t fit = (size_t)((w - 6) / 6.5);
    char buf[256];
    snprintf(buf, sizeof buf, "[%s] %s", svc, opn);
    size_t n = strlen(buf), cps = 0, cut = n;
    for (size_t i = 0; i < n; i++) { /* count code points, cut at a boundary */
        if (((unsigned char)buf[i] & 0xC0) == 0x80)
            continue;
        if (cps == fit) {
            cut = i;
            break;
        }
        cps++;
    }
    if (cut < n && cut > 2) {
        lp_html_textn(h, buf, cut);
        lp_html_raw(h, "&hellip;");
    } else if (cut == n) {
        lp_html_textn(h, buf, n);
    }
}

static void write_flame(lp_html *h, const sp_state *s, size_t i)
{
    const flame *f = &s->fl[i];
    const lp_spancp_pct *p = &s->pct[i];
    const double rowh = 18;
    double H = rowh * (f->maxdepth + 1) + 4;
    double per = p->ntraces ? 1.0 / (double)p->ntraces : 0;
    double mean = (double)p->latency_sum * per;
    lp_html_printf(h, "<figure class=\"lp-fig lp-flamefig\"><figcaption>Flame graph (icicle) of exclusive "
                      "critical-path time, mean per trace; click a frame to zoom, the top bar to reset</figcaption>"
                      "<svg class=\"lp-chart lp-flame\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">",
                   FLAME_W, H);
    for (size_t k = 0; k < f->nn; k++) {
        const fnode *n = &f->n[k];
        if (n->w < FLAME_MIN && k)
            continue;
        double y = rowh * n->depth;
        lp_html_printf(h, "<g class=\"lp-fr\" data-x=\"%.3f\" data-w=\"%.3f\" data-d=\"%u\"><title>", n->x, n->w, n->depth);
        if (!k)
            lp_html_raw(h, "all: mean critical path per trace ");
        else
            frame_label(h, s->agg, n->op);
        if (k) {
            lp_html_raw(h, "\ninclusive ");
            lp_html_dur(h, (int64_t)llround((double)n->incl * per));
            lp_html_raw(h, " (");
            lp_html_pct(h, mean > 0 ? (double)n->incl * per / mean : 0);
            lp_html_raw(h, " of the mean latency), own ");
            lp_html_dur(h, (int64_t)llround((double)n->self * per));
        } else {
            lp_html_dur(h, (int64_t)llround(mean));
        }
        if (n->tiny) {
            lp_html_printf(h, "\n%u call%s below too narrow to draw: ", n->tiny, n->tiny == 1 ? "" : "s");
            lp_html_dur(h, (int64_t)llround((double)n->tiny_ns * per));
        }
        const char *fill = k ? rp_color((size_t)n->op) : "#bbbbbb";
        lp_html_printf(h, "</title><rect x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" height=\"%.1f\" fill=\"%s\"/>", n->x, y,
                       n->w, rowh - 1, fill);
        if (n->w > 30) {
            lp_html_printf(h, "<text x=\"%.3f\" y=\"%.1f\">", n->x + 3, y + 13);
            if (k)
                frame_text(h, s->agg, n->op, n->w);
            else
                lp_html_raw(h, "all");
            lp_html_raw(h, "</text>");
        }
        lp_html_raw(h, "</g>");
        if (n->tiny) { /* the narrow children, as one frame at the end of this one's children */
            double tw = FLAME_W * (double)n->tiny_ns / (double)(f->n[0].incl > 0 ? f->n[0].incl : 1);
            double used = 0; /* children are laid out largest first: the narrow ones come last */
            for (uint32_t c = n->first; c != UINT32_MAX; c = f->n[c].next)
                if (f->n[c].w >= FLAME_MIN)
                    used += f->n[c].w;
            double tx = n->x + used;
            lp_html_printf(h, "<g class=\"lp-fr lp-tiny\" data-x=\"%.3f\" data-w=\"%.3f\" data-d=\"%u\"><title>%u "
                              "call%s too narrow to draw: ",
                           tx, tw, n->depth + 1, n->tiny, n->tiny == 1 ? "" : "s");
            lp_html_dur(h, (int64_t)llround((double)n->tiny_ns * per));
            lp_html_printf(h, "</title><rect x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" height=\"%.1f\" fill=\"#999\"/></g>", tx,
                           rowh * (n->depth + 1), tw > 0.2 ? tw : 0.2, rowh - 1);
        }
    }
    lp_html_raw(h, "</svg></figure>\n");
}

static void ops_table(lp_html *h, const sp_state *s, size_t i, size_t shown, int paths)
{
    const lp_spancp_pct *p = &s->pct[i];
    const lp_spancp_row *rows = paths ? p->paths : p->ops;
    size_t n = paths ? p->npaths : p->nops;
    char head[400];
    snprintf(head, sizeof head,
             "<thead><tr><th>%s</th><th class=\"n\">mean per trace</th><th class=\"n\">share</th><th></th>"
             "<th class=\"n\">max in one trace</th><th class=\"n\">on the path in</th></tr></thead>",
             paths ? "call path" : "service operation");
    lp_html_raw(h, "<table class=\"lp-tab\">");
    lp_html_raw(h, head);
    lp_html_raw(h, "<tbody>\n");
    int folded = 0;
    char buf[4096];
    for (size_t k = 0; k < n; k++) {
        if (k == shown && n > shown + 1) {
            rp_fold_open(h, n - k, head);
            folded = 1;
        }
        const lp_spancp_row *r = &rows[k];
        double share = p->latency_sum ? (double)r->total / (double)p->latency_sum : 0;
        lp_html_raw(h, "<tr><td>");
        if (paths) {
            size_t need = lp_spancp_path_format(s->agg, r->id, " > ", buf, sizeof buf);
            lp_html_textn(h, buf, need < sizeof buf ? need : sizeof buf - 1);
            if (need >= sizeof buf)
                lp_html_raw(h, "&hellip;");
        } else {
            const char *svc, *op;
            lp_spancp_op_names(s->agg, r->id, &svc, &op);
            lp_html_raw(h, "<span class=\"lp-svc\">");
            lp_html_text(h, svc);
            lp_html_raw(h, "</span> ");
            lp_html_text(h, op);
        }
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_dur(h, p->ntraces ? (int64_t)llround((double)r->total / (double)p->ntraces) : 0);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_pct(h, share);
        lp_html_raw(h, "</td><td>");
        rp_share_bar(h, share, RP_CP_COLOR);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_dur(h, r->max);
        lp_html_printf(h, "</td><td class=\"n\">%llu/%llu</td></tr>\n", (unsigned long long)r->traces,
                       (unsigned long long)p->ntraces);
    }
    rp_fold_close(h, folded);
}

static lp_status sp_write(const lp_report *r, const void *state, lp_html *h, lp_error *err)
{
    (void)err;
    const sp_state *s = state;
    const lp_report_opts *o = lp_report_opts_of(r);
    size_t shown = o->table_rows ? o->table_rows : 25;
    rp_section_open(h, &lp_report_sec_spans);
    lp_html_printf(h, "<p class=\"lp-note\">%llu traces. Each trace's critical path is Jaeger UI's walk from the root's "
                      "end through the last-finishing children; a span's <em>exclusive</em> critical-path time is the "
                      "part of the path spent in it and not in a child. Aggregated over the traces up to each latency "
                      "percentile (the fastest P%% of the traces, CRISP). Same numbers as <code>longpole spans "
                      "--json</code>.</p>\n",
                   (unsigned long long)s->ntraces);
    lp_html_raw(h, "<div class=\"lp-tabs\" role=\"tablist\">");
    int first = 1;
    for (size_t i = 0; i < s->npct; i++) {
        if (s->dup[i])
            continue;
        lp_html_printf(h, "<button type=\"button\" data-pane=\"lp-span-%zu\"%s>", i, first ? " class=\"lp-on\"" : "");
        pname(h, &s->pct[i], s->ntraces);
        lp_html_printf(h, " (%llu)</button>", (unsigned long long)s->pct[i].ntraces);
        first = 0;
    }
    lp_html_raw(h, "</div>\n");
    for (size_t i = 0; i < s->npct; i++) {
        if (s->dup[i])
            continue;
        const lp_spancp_pct *p = &s->pct[i];
        lp_html_printf(h, "<div class=\"lp-pane\" id=\"lp-span-%zu\">\n<p class=\"lp-note\">", i);
        pname(h, p, s->ntraces);
        lp_html_printf(h, ": %llu traces, latency up to ", (unsigned long long)p->ntraces);
        lp_html_dur(h, p->latency);
        lp_html_raw(h, ", mean ");
        lp_html_dur(h, p->ntraces ? p->latency_sum / (int64_t)p->ntraces : 0);
        lp_html_raw(h, ".</p>\n");
        write_flame(h, s, i);
        lp_html_raw(h, "<h3>By service and operation</h3>\n");
        ops_table(h, s, i, shown, 0);
        lp_html_raw(h, "<details class=\"lp-more\"><summary>By call path</summary>\n");
        ops_table(h, s, i, shown, 1);
        lp_html_raw(h, "</details>\n</div>\n");
    }
    rp_section_close(h);
    return LP_OK;
}

const lp_report_section lp_report_sec_spans = {
    "spans", "Span traces: critical path by service and call path", sp_applies, sp_prepare, sp_release, sp_write,
};
