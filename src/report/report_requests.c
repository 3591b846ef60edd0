/* report_requests.c: the Mystery Machine's figures (OSDI'14 §5; reqstats.h,
 * docs/analyses/mystery-aggregates.md) from an analysed request log:
 *   Figure 5  mean summed delay vs mean critical path per category (absolute and %);
 *   Figure 6  per category, the distribution over requests of its share of the path;
 *   Figure 7  critical-path breakdowns stratified by an attribute or by quantiles;
 *   Figure 8  per category, the distribution of its slack;
 *   §4.4      the outlier differential: segments over-represented on the slowest
 *             requests' critical paths;
 *   Figure 10 natural-variation what-if: per slack bucket, the correlation of the
 *             category's time with end-to-end latency.
 * Every number is the one `longpole requests --json` prints (same analysis, same
 * formulas). No state: it reads lp_reqstats. */
#include "report_int.h"
#include "longpole/base/alloc.h"
#include "base/util.h"

#include <math.h>
#include <string.h>

static int rq_applies(const lp_report_data *d) { return d->reqlog && d->model && d->cats && d->reqstats; }

static lp_status rq_prepare(lp_report *r, void **state, lp_error *err)
{
    (void)r, (void)err;
    *state = NULL;
    return LP_OK;
}

static void rq_release(void *state) { (void)state; }

#define NOMEM() lp_error_set(err, LP_ERR_NOMEM, "out of memory")

static lp_status fig5(lp_html *h, const lp_reqstats *S, const char *const *names, const char *const *cols, lp_error *err)
{
    uint32_t C = S->ncat;
    double n = (double)(S->analysed ? S->analysed : 1), cpt = 0, dt = 0;
    double *v = lp_calloc(2 * (size_t)C + 1, sizeof *v), *p = lp_calloc(2 * (size_t)C + 1, sizeof *p);
    if (!v || !p) {
        lp_free(v), lp_free(p);
        return NOMEM();
    }
    for (uint32_t c = 0; c < C; c++) {
        v[c] = (double)S->cat[c].dur_sum / n;
        v[C + c] = (double)S->cat[c].cp_sum / n;
        dt += (double)S->cat[c].dur_sum;
        cpt += (double)S->cat[c].cp_sum;
    }
    for (uint32_t c = 0; c < C; c++) {
        p[c] = dt > 0 ? (double)S->cat[c].dur_sum / dt : 0;
        p[C + c] = cpt > 0 ? (double)S->cat[c].cp_sum / cpt : 0;
    }
    static const char *const bars[] = {"summed delay", "critical path"};
    lp_html_raw(h, "<h3>Summed delay vs critical path (Figure 5)</h3>\n<p class=\"lp-note\">Mean per request. "
                   "<em>Summed delay</em> adds every segment's duration, ignoring overlap (what profiling one component "
                   "measures); the <em>critical path</em> counts only the time that made the request last. A category "
                   "whose summed delay exceeds its critical-path time is overlapped by others.</p>\n<div class=\"lp-grid2\">");
    rp_stack a = {.nbars = 2, .nseries = C, .v = v, .bar_label = bars, .series = names, .color = cols, .unit = RP_NS,
                  .horizontal = 1, .caption = "absolute (mean per request)", .width = 600};
    rp_svg_stack(h, &a);
    rp_stack b = {.nbars = 2, .nseries = C, .v = p, .bar_label = bars, .series = names, .color = cols,
                  .unit = RP_SHARE, .ymax = 1, .horizontal = 1, .caption = "percent of total", .width = 600};
    rp_svg_stack(h, &b);
    lp_html_raw(h, "</div>\n");
    rp_legend(h, C, names, cols);
    lp_free(v), lp_free(p);
    return LP_OK;
}

static lp_status cdfs(lp_html *h, const lp_reqstats *S, const char *const *names, const char *const *cols, lp_error *err)
{
    uint32_t C = S->ncat;
    double *q = lp_calloc((size_t)C * 101 + 1, sizeof *q);
    const char **nm = lp_calloc(C + 1, sizeof *nm), **cl = lp_calloc(C + 1, sizeof *cl);
    if (!q || !nm || !cl) {
        lp_free(q), lp_free(nm), lp_free(cl);
        return NOMEM();
    }
    for (uint32_t c = 0; c < C; c++)
        memcpy(&q[(size_t)c * 101], S->cat[c].share_q, 101 * sizeof(double));
    lp_html_raw(h, "<h3>Critical-path share per request (Figure 6)</h3>\n<p class=\"lp-note\">For each category, the "
                   "fraction of requests (y) in which it makes up at most x of the critical path. Wide curves: the path "
                   "shifts between components from request to request (§5.1).</p>\n");
    rp_cdf c6 = {C, q, names, cols, RP_SHARE, 1, "share of the critical path", "share of the request's critical path"};
    rp_svg_cdf(h, &c6);
    rp_legend(h, C, names, cols);
    /* Figure 8: slack, over the requests where the category occurs */
    uint32_t k = 0;
    double xmax = 0, top = 0;
    for (uint32_t c = 0; c < C; c++) {
        if (!S->cat[c].present)
            continue;
        memcpy(&q[(size_t)k * 101], S->cat[c].slack_q, 101 * sizeof(double));
        nm[k] = names[c];
        cl[k] = cols[c];
        xmax = S->cat[c].slack_q[99] > xmax ? S->cat[c].slack_q[99] : xmax;
        top = S->cat[c].slack_q[100] > top ? S->cat[c].slack_q[100] : top;
        k++;
    }
    lp_html_raw(h, "<h3>Slack (Figure 8)</h3>\n<p class=\"lp-note\">For each category, the distribution over the "
                   "requests where it occurs of its slack: how much its last-ending segment could be delayed, all else "
                   "equal, before the request gets slower (§4.3, §5.2). ");
    if (top > xmax && xmax > 0) {
        lp_html_raw(h, "The x axis ends at the largest 99th percentile (");
        lp_html_dur(h, (int64_t)xmax);
        lp_html_raw(h, "); larger slack (up to ");
        lp_html_dur(h, (int64_t)top);
        lp_html_raw(h, ") is drawn at the edge.");
    }
    lp_html_raw(h, "</p>\n");
    rp_cdf c8 = {k, q, nm, cl, RP_NS, xmax, "slack", "slack of the category's last-ending segment"};
    rp_svg_cdf(h, &c8);
    rp_legend(h, k, nm, cl);
    lp_free(q), lp_free(nm), lp_free(cl);
    return LP_OK;
}

static lp_status strata(lp_html *h, const lp_reqstats *S, const char *const *names, const char *const *cols,
                        lp_error *err)
{
    if (!S->nstrat)
        return LP_OK;
    uint32_t C = S->ncat;
    double n = (double)(S->analysed ? S->analysed : 1);
    lp_html_raw(h, "<h3>Critical path by stratum (Figure 7)</h3>\n<p class=\"lp-note\">Mean critical-path time per "
                   "category for each group of requests; labels give each group's share of the requests.</p>\n"
                   "<div class=\"lp-grid2\">");
    for (uint32_t i = 0; i < S->nstrat; i++) {
        const lp_reqstats_strat *st = &S->strat[i];
        if (!st->nvals)
            continue;
        double *v = lp_calloc((size_t)st->nvals * C + 1, sizeof *v);
        char **lab = lp_calloc(st->nvals, sizeof *lab);
        if (!v || !lab) {
            lp_free(v), lp_free(lab);
            return NOMEM();
        }
        lp_status rc = LP_OK;
        for (uint32_t k = 0; k < st->nvals; k++) {
            const lp_reqstats_stratum *sv = &st->vals[k];
            for (uint32_t c = 0; c < C; c++)
                v[(size_t)k * C + c] = sv->cat_cp_mean[c];
            size_t need = strlen(sv->label) + 32;
            lab[k] = lp_malloc(need);
            if (!lab[k]) {
                rc = NOMEM();
                break;
            }
            snprintf(lab[k], need, "%s (%.1f%%)", sv->label, 100.0 * (double)sv->n / n);
        }
        if (!rc) {
            char cap[300];
            snprintf(cap, sizeof cap, "by %s%s", st->name, st->missing ? " (some requests lack it)" : "");
            rp_stack c = {.nbars = st->nvals, .nseries = C, .v = v, .bar_label = (const char *const *)lab,
                          .series = names, .color = cols, .unit = RP_NS, .horizontal = 1, .caption = cap};
            rp_svg_stack(h, &c);
        }
        for (uint32_t k = 0; k < st->nvals; k++)
            lp_free(lab[k]);
        lp_free(lab), lp_free(v);
        if (rc)
            return rc;
    }
    lp_html_raw(h, "</div>\n");
    rp_legend(h, C, names, cols);
    return LP_OK;
}

static void outliers(lp_html *h, const lp_reqstats *S, const lp_causal *m, const lp_reqcat *cat, size_t shown)
{
    uint64_t rest = S->analysed - S->noutliers;
    int64_t tout = 0, tall = 0;
    for (uint32_t s = 0; s < S->nseg; s++)
        tout += S->seg[s].cp_out, tall += S->seg[s].cp_sum;
    lp_html_printf(h, "<h3>Outliers vs the rest (§4.4)</h3>\n<p class=\"lp-note\">The %llu slowest requests (latency "
                      "at least ",
                   (unsigned long long)S->noutliers);
    lp_html_dur(h, S->outlier_latency);
    lp_html_printf(h, ") against the other %llu: segments ranked by over-representation, their share of the outliers' "
                      "critical-path time minus their share of the rest's. Red: more on the outliers' paths.</p>\n",
                   (unsigned long long)rest);
    const char *head = "<thead><tr><th>segment</th><th>category</th><th class=\"n\">over-representation</th><th></th>"
                       "<th class=\"n\">CP share outliers</th><th class=\"n\">rest</th><th class=\"n\">on CP "
                       "outliers</th><th class=\"n\">rest</th><th class=\"n\">present outliers</th><th class=\"n\">rest</th>"
                       "<th class=\"n\">mean CP outliers</th><th class=\"n\">rest</th></tr></thead>";
    lp_html_raw(h, "<table class=\"lp-tab\">");
    lp_html_raw(h, head);
    lp_html_raw(h, "<tbody>\n");
    int folded = 0;
    double maxo = 0;
    for (uint32_t k = 0; k < S->nranked; k++) {
        double o = fabs(lp_reqstats_overrep(S, S->ranked[k]));
        maxo = o > maxo ? o : maxo;
    }
    for (uint32_t k = 0; k < S->nranked; k++) {
        if (k == shown && S->nranked > shown + 1) {
            rp_fold_open(h, S->nranked - k, head);
            folded = 1;
        }
        uint32_t s = S->ranked[k];
        const lp_reqstats_seg *g = &S->seg[s];
        char lab[1024];
        double o = lp_reqstats_overrep(S, s);
        lp_html_raw(h, "<tr><td>");
        lp_html_text(h, lp_causal_label(m, s, lab, sizeof lab));
        lp_html_raw(h, "</td><td>");
        lp_html_text(h, cat->name[cat->of_seg[s]]);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_printf(h, "%+.2f pp", 100 * o);
        lp_html_raw(h, "</td><td>");
        rp_share_bar(h, maxo > 0 ? fabs(o) / maxo : 0, o > 0 ? RP_CP_COLOR : "#4e79a7");
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_pct(h, tout ? (double)g->cp_out / (double)tout : NAN);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_pct(h, tall - tout ? (double)(g->cp_sum - g->cp_out) / (double)(tall - tout) : NAN);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_pct(h, S->noutliers ? (double)g->oncp_out / (double)S->noutliers : NAN);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_pct(h, rest ? (double)(g->oncp - g->oncp_out) / (double)rest : NAN);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_pct(h, S->noutliers ? (double)g->present_out / (double)S->noutliers : NAN);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_pct(h, rest ? (double)(g->present - g->present_out) / (double)rest : NAN);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_dur(h, S->noutliers ? (int64_t)((double)g->cp_out / (double)S->noutliers) : 0);
        lp_html_raw(h, "</td><td class=\"n\">");
        lp_html_dur(h, rest ? (int64_t)((double)(g->cp_sum - g->cp_out) / (double)rest) : 0);
        lp_html_raw(h, "</td></tr>\n");
    }
    rp_fold_close(h, folded);
}

static lp_status whatif(lp_html *h, const lp_reqstats *S, const char *const *names, lp_error *err)
{
    lp_html_raw(h, "<h3>Natural-variation what-if (Figure 10)</h3>\n<p class=\"lp-note\">Requests where the category "
                   "occurs, sorted by its slack and cut into equal buckets; each bar is the correlation between the "
                   "category's time and end-to-end latency in one bucket. With little slack its time should drive "
                   "latency (high correlation); with much slack, not (§5.2).</p>\n<div class=\"lp-grid2\">");
    for (uint32_t c = 0; c < S->ncat; c++) {
        const lp_reqstats_cat *pc = &S->cat[c];
        if (!pc->nbuckets)
            continue;
        double *v = lp_calloc(pc->nbuckets, sizeof *v);
        char **lab = lp_calloc(pc->nbuckets, sizeof *lab), **tip = lp_calloc(pc->nbuckets, sizeof *tip);
        if (!v || !lab || !tip) {
            lp_free(v), lp_free(lab), lp_free(tip);
            return NOMEM();
        }
        lp_status rc = LP_OK;
        for (uint32_t b = 0; b < pc->nbuckets; b++) {
            const lp_reqstats_bucket *bk = &pc->buckets[b];
            v[b] = isfinite(bk->r) && bk->r > 0 ? bk->r : 0;
            char d1[32], d2[32];
            lab[b] = lp_malloc(40);
            tip[b] = lp_malloc(160);
            if (!lab[b] || !tip[b]) {
                rc = NOMEM();
                break;
            }
            lp_fmt_dur(bk->slack_lo, lab[b], 40);
            if (isfinite(bk->r))
                snprintf(tip[b], 160, "slack %s to %s: r = %.3f (%llu requests)", lp_fmt_dur(bk->slack_lo, d1, sizeof d1),
                         lp_fmt_dur(bk->slack_hi, d2, sizeof d2), bk->r, (unsigned long long)bk->n);
            else
                snprintf(tip[b], 160, "slack %s to %s: r undefined (%llu requests)",
                         lp_fmt_dur(bk->slack_lo, d1, sizeof d1), lp_fmt_dur(bk->slack_hi, d2, sizeof d2),
                         (unsigned long long)bk->n);
        }
        if (!rc) {
            char cap[200];
            snprintf(cap, sizeof cap, "%s: correlation with latency per slack bucket (axis: the bucket's least slack)",
                     names[c]);
            static const char *const ser[] = {"correlation"};
            static const char *const col[] = {"#4e79a7"};
            rp_stack st = {.nbars = pc->nbuckets, .nseries = 1, .v = v, .bar_label = (const char *const *)lab,
                           .bar_tip = (const char *const *)tip, .series = ser, .color = col, .unit = RP_NUM, .ymax = 1,
                           .caption = cap, .empty_note = "negative or undefined correlation", .width = 560,
                           .height = 200};
            rp_svg_stack(h, &st);
        }
        for (uint32_t b = 0; b < pc->nbuckets; b++)
            lp_free(tip[b]);
        lp_free(tip);
        for (uint32_t b = 0; b < pc->nbuckets; b++)
            lp_free(lab[b]);
        lp_free(lab), lp_free(v);
        if (rc)
            return rc;
    }
    lp_html_raw(h, "</div>\n");
    return LP_OK;
}

static lp_status rq_write(const lp_report *r, const void *state, lp_html *h, lp_error *err)
{
    (void)state;
    const lp_report_data *d = lp_report_data_of(r);
    const lp_reqstats *S = d->reqstats;
    const lp_report_opts *o = lp_report_opts_of(r);
    uint32_t C = S->ncat;
    const char **names = lp_calloc(C + 1, sizeof *names), **cols = lp_calloc(C + 1, sizeof *cols);
    if (!names || !cols) {
        lp_free(names), lp_free(cols);
        return NOMEM();
    }
    for (uint32_t c = 0; c < C; c++) {
        names[c] = d->cats->name[c] ? d->cats->name[c] : "?";
        cols[c] = rp_color(c);
    }
    rp_section_open(h, &lp_report_sec_requests);
    lp_html_printf(h, "<p class=\"lp-note\">%llu requests analysed: each request's segments form a graph with the "
                      "causal model's relationships; its critical path is the longest path and each segment's slack how "
                      "much it may grow before the request gets slower (Mystery Machine, OSDI'14 §4). Mean latency ",
                   (unsigned long long)S->analysed);
    lp_html_dur(h, (int64_t)S->latency_mean);
    lp_html_raw(h, ", mean critical path ");
    lp_html_dur(h, (int64_t)S->cp_mean);
    lp_html_raw(h, ". Same numbers as <code>longpole requests --json</code>.</p>\n");
    lp_status st = fig5(h, S, names, cols, err);
    if (!st)
        st = cdfs(h, S, names, cols, err);
    if (!st)
        st = strata(h, S, names, cols, err);
    if (!st)
        outliers(h, S, d->model, d->cats, o->table_rows ? o->table_rows : 25);
    if (!st)
        st = whatif(h, S, names, err);
    rp_section_close(h);
    lp_free(names), lp_free(cols);
    return st;
}

const lp_report_section lp_report_sec_requests = {
    "requests", "Request logs: critical path and slack", rq_applies, rq_prepare, rq_release, rq_write,
};
