/* report_breakdown.c: the whole-trace critical path broken down by activity type, worker
 * and operator, next to the conventional profile (breakdown.h; docs/analyses/
 * critical-path.md; SnailTrail §3.3): a table per grouping with both shares side by side,
 * and for types the two as stacked bars (what a profiler blames vs what the path is
 * made of). State: the three lp_breakdown. */
#include "report_int.h"
#include "longpole/base/alloc.h"
#include "longpole/analysis/critical-path/breakdown.h"

#include <string.h>

typedef struct bd_state {
    lp_breakdown bd[3];           /* by type, worker, operator */
    int n;                        /* computed */
} bd_state;

static int bd_applies(const lp_report_data *d) { return d->trace != NULL; }

static lp_status bd_prepare(lp_report *r, void **state, lp_error *err)
{
    bd_state *s = lp_calloc(1, sizeof *s);
    *state = s;
    if (!s)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    const lp_report_graph *g;
    lp_status st = lp_report_graph_get(r, &g, err);
    if (st)
        return st;
    for (int k = 0; k < 3; k++) {
        st = lp_breakdown_compute(lp_report_data_of(r)->trace, &g->cp, (lp_group)k, &s->bd[k], err);
        if (st)
            return st;
        s->n = k + 1;
    }
    return LP_OK;
}

static void bd_release(void *state)
{
    bd_state *s = state;
    if (!s)
        return;
    for (int k = 0; k < s->n; k++)
        lp_breakdown_release(&s->bd[k]);
    lp_free(s);
}

static const char *row_color(const lp_breakdown *b, const lp_brow *w, size_t rank)
{
    if (w->key == LP_KEY_COMM)
        return RP_COMM_COLOR;
    if (w->key == LP_KEY_NONE)
        return RP_OTHER_COLOR;
    return b->by == LP_BY_TYPE ? rp_type_color(w->key) : rp_color(rank);
}

static void table(lp_html *h, const lp_trace *t, const lp_breakdown *b, size_t shown)
{
    static const char *const titles[] = {"activity type", "worker", "operator"};
    char head[512];
    snprintf(head, sizeof head,
             "<thead><tr><th>%s</th><th class=\"n\">on the path</th><th class=\"n\">share</th><th></th>"
             "<th class=\"n\">profile</th><th class=\"n\">share</th><th></th><th class=\"n\">elements</th></tr></thead>",
             titles[b->by]);
    lp_html_raw(h, "<table class=\"lp-tab\">");
    lp_html_raw(h, head);
    lp_html_raw(h, "<tbody>\n");
    int folded = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (i == shown && b->n > shown + 1) {
            rp_fold_open(h, b->n - i, head);
            folded = 1;
        }
        const lp_brow *w = &b->rows[i];
        double s1 = b->path_total ? (double)w->path_ns / (double)b->path_total : 0;
        double s2 = b->prof_total ? (double)w->prof_ns / (double)b->prof_total : 0;
        const char *col = row_color(b, w, i);
        lp_html_printf(h, "<tr><td><span class=\"lp-sw\" style=\"background:%s\"></span>", col);
        lp_html_text(h, lp_breakdown_label(t, b, w));
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_dur(h, w->path_ns);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_pct(h, s1);
        lp_html_raw(h, "</td><td>");
        rp_share_bar(h, s1, RP_CP_COLOR);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_dur(h, w->prof_ns);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_pct(h, s2);
        lp_html_raw(h, "</td><td>");
        rp_share_bar(h, s2, "#7f7f7f");
        lp_html_printf(h, "</td><td class=\"n\">%llu</td></tr>\n", (unsigned long long)w->path_n);
    }
    rp_fold_close(h, folded);
}

static lp_status bd_write(const lp_report *r, const void *state, lp_html *h, lp_error *err)
{
    const bd_state *s = state;
    const lp_trace *t = lp_report_data_of(r)->trace;
    const lp_report_opts *o = lp_report_opts_of(r);
    rp_section_open(h, &lp_report_sec_breakdown);
    lp_html_raw(h, "<p class=\"lp-note\">Where the whole-trace critical path's time goes (left), next to the "
                   "<em>conventional profile</em>: the summed busy time of all activities with the same key, which is "
                   "what a profiler would blame (right; SnailTrail §3.3). <em>waiting</em> is never on the path and is "
                   "not busy time; message time is the <em>communication</em> row in both. A key far larger in the "
                   "profile than on the path is busy but overlapped by other work: speeding it up would not shorten "
                   "the job.</p>\n");
    /* types as two stacked bars */
    const lp_breakdown *b = &s->bd[LP_BY_TYPE];
    if (b->n) {
        size_t n = b->n;
        double *v = lp_calloc(2 * n, sizeof *v);
        const char **names = lp_calloc(n, sizeof *names), **cols = lp_calloc(n, sizeof *cols);
        if (!v || !names || !cols) {
            lp_free(v), lp_free(names), lp_free(cols);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
            v[i] = b->path_total ? (double)b->rows[i].path_ns / (double)b->path_total : 0;
            v[n + i] = b->prof_total ? (double)b->rows[i].prof_ns / (double)b->prof_total : 0;
            names[i] = lp_breakdown_label(t, b, &b->rows[i]);
            cols[i] = row_color(b, &b->rows[i], i);
        }
        static const char *const bars[] = {"critical path", "conventional profile"};
        rp_stack c = {.nbars = 2, .nseries = (uint32_t)n, .v = v, .bar_label = bars, .series = names, .color = cols,
                      .unit = RP_SHARE, .ymax = 1, .horizontal = 1,
                      .caption = "Activity types: critical path vs conventional profile (shares)"};
        rp_svg_stack(h, &c);
        rp_legend(h, n, names, cols);
        lp_free(v), lp_free(names), lp_free(cols);
    }
    for (int k = 0; k < 3; k++) {
        static const char *const heads[] = {"By activity type", "By worker", "By operator"};
        lp_html_printf(h, "<h3>%s</h3>\n", heads[k]);
        table(h, t, &s->bd[k], o->table_rows ? o->table_rows : 25);
        if (k == LP_BY_TYPE && s->bd[k].waiting_ns) {
            lp_html_raw(h, "<p class=\"lp-note\">Waiting time of all workers (never on the path, not in the profile): ");
            lp_html_dur(h, s->bd[k].waiting_ns);
            lp_html_raw(h, ".</p>\n");
        }
    }
    rp_section_close(h);
    return LP_OK;
}

const lp_report_section lp_report_sec_breakdown = {
    "breakdown", "Critical path vs conventional profile", bd_applies, bd_prepare, bd_release, bd_write,
};
