/* report_grade10.c: the Grade10 section of the report (docs/analyses/grade10.md): the
 * issues with their replayed gains, the attributed usage against the demand over time
 * on every resource timeline with the saturated stretches shaded (paper Fig. 3), the
 * bottleneck share per phase type and resource (Fig. 4) and the imbalance of every
 * concurrently repeated type (Fig. 5). Applies when lp_report_data.g10 is set (an
 * attribution, with its issues in g10_issues or none). Everything is drawn from the
 * attribution as it is; nothing is computed but per-pixel means of the timelines. */
#include "report_int.h"
#include "longpole/base/alloc.h"
#include "longpole/analysis/grade10/g10json.h"
#include "base/util.h"

#include <string.h>

#define G10_W 900
#define G10_H 180
#define G10_BINS 450

static int g10_applies(const lp_report_data *d) { return d->g10 != NULL; }

static lp_status g10_prepare(lp_report *r, void **state, lp_error *err)
{
    (void)r, (void)err;
    *state = NULL;
    return LP_OK;
}

static void g10_release(void *state) { (void)state; }

static void issues(lp_html *h, const lp_g10_attr *a, const lp_g10_issues *is)
{
    const lp_g10_model *m = a->m;
    char d1[32], d2[32];
    lp_html_printf(h, "<h3>Issues</h3>\n<p>The run replayed with each issue fixed (§III-F): recorded makespan %s, "
                      "replayed %s; issues gaining at least %.1f%% are reported.</p>\n",
                   lp_fmt_dur(is->recorded, d1, sizeof d1), lp_fmt_dur(is->baseline, d2, sizeof d2), 100 * is->threshold);
    if (is->ps_groups && is->ps_rejected)
        lp_html_printf(h, "<p>The cores were contended, but processor sharing was <b>not used</b>: its replay of the "
                          "recorded work is not within %.0f%% of the recorded durations' replay, so the imbalance and "
                          "outlier gains are the fixed-duration ones.</p>\n",
                       100 * LP_G10_PS_TOL);
    else if (is->ps_groups) /* only when contended: other reports are unchanged */
        lp_html_printf(h, "<p>Imbalance and outlier issues marked <i>processor sharing</i> were replayed with the "
                          "work of %llu Exact phases sharing the cores (capacity %g at a share of %.3f): that replay "
                          "of the recorded work takes %s, and their gains are against it.</p>\n",
                       (unsigned long long)is->ps_leaves, is->ps_capacity, is->ps_share,
                       lp_fmt_dur(is->ps_baseline, d1, sizeof d1));
    lp_html_raw(h, "<table class=\"lp-tab\"><thead><tr><th>issue</th><th>of</th><th class=\"n\">gain</th>"
                   "<th class=\"n\">share</th><th class=\"n\">makespan fixed</th><th class=\"n\">phases</th>"
                   "<th class=\"n\">reported</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < is->n; i++) {
        const lp_g10_issue *v = &is->v[i];
        lp_html_printf(h, "<tr><td>%s%s</td><td>", lp_g10_issue_name(v->kind), v->ps ? " (processor sharing)" : "");
        lp_html_text(h, v->kind == LP_G10_ISSUE_BOTTLENECK ? lp_g10_model_str(m, m->res[v->res].name)
                                                           : lp_g10_model_str(m, m->type[v->type].path));
        lp_html_printf(h, "</td><td class=\"n\">%s</td><td class=\"n\">", lp_fmt_dur(v->gain_ns, d1, sizeof d1));
        rp_share_bar(h, v->gain < 0 ? 0 : v->gain > 1 ? 1 : v->gain, RP_CP_COLOR);
        lp_html_printf(h, "%.1f%%</td><td class=\"n\">%s</td><td class=\"n\">%llu</td><td class=\"n\">%s</td></tr>\n",
                       100 * v->gain, lp_fmt_dur(v->makespan, d2, sizeof d2), (unsigned long long)v->phases,
                       v->reported ? "yes" : "no");
    }
    lp_html_raw(h, "</tbody></table>\n");
}

/* One timeline as an SVG: per pixel bin, the mean usage (filled), the mean exact + variable
 * demand capped at capacity (line), the capacity (dashed), bins mostly saturated shaded. */
static void timeline(lp_html *h, const lp_g10_attr *a, const lp_g10_tl *tl)
{
    const lp_g10_model *m = a->m;
    if (!tl->nseg)
        return;
    int64_t t0 = tl->bound[0], t1 = tl->bound[tl->nseg];
    if (t1 <= t0)
        return;
    double use[G10_BINS], dem[G10_BINS], sat[G10_BINS];
    memset(use, 0, sizeof use), memset(dem, 0, sizeof dem), memset(sat, 0, sizeof sat);
    double K = tl->capacity, th = m->bottleneck * K * (1 - 1e-12), span = (double)(t1 - t0), bw = span / G10_BINS;
    for (uint32_t s = 0; s < tl->nseg; s++) {
        double a0 = (double)(tl->bound[s] - t0), a1 = (double)(tl->bound[s + 1] - t0);
        size_t b0 = (size_t)(a0 / bw), b1 = (size_t)(a1 / bw);
        double d = tl->E[s] + tl->V[s];
        if (d > K)
            d = K;
        for (size_t b = b0; b <= b1 && b < G10_BINS; b++) {
            double lo = a0 > (double)b * bw ? a0 : (double)b * bw, hi = a1 < (double)(b + 1) * bw ? a1 : (double)(b + 1) * bw;
            if (hi <= lo)
                continue;
            double f = (hi - lo) / bw;
            use[b] += f * tl->u[s];
            dem[b] += f * d;
            if (tl->u[s] >= th)
                sat[b] += f;
        }
    }
    double top = K > 0 ? K * 1.1 : 1;
    for (size_t b = 0; b < G10_BINS; b++)
        if (use[b] > top / 1.1)
            top = use[b] * 1.1;
    char d1[32];
    lp_html_raw(h, "<figure><svg viewBox=\"0 0 900 200\" width=\"100%\" role=\"img\">");
    double xs = (double)G10_W / G10_BINS;
    for (size_t b = 0; b < G10_BINS; b++)
        if (sat[b] >= 0.5)
            lp_html_printf(h, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%d\" fill=\"#f4c7c3\"/>", (double)b * xs,
                           xs, G10_H);
    lp_html_printf(h, "<polygon fill=\"#6baed6\" fill-opacity=\"0.8\" points=\"0,%d", G10_H);
    for (size_t b = 0; b < G10_BINS; b++)
        lp_html_printf(h, " %.1f,%.1f %.1f,%.1f", (double)b * xs, G10_H - G10_H * use[b] / top, (double)(b + 1) * xs,
                       G10_H - G10_H * use[b] / top);
    lp_html_printf(h, " %d,%d\"/>", G10_W, G10_H);
    lp_html_raw(h, "<polyline fill=\"none\" stroke=\"#333\" stroke-width=\"1\" points=\"");
    for (size_t b = 0; b < G10_BINS; b++)
        lp_html_printf(h, " %.1f,%.1f %.1f,%.1f", (double)b * xs, G10_H - G10_H * dem[b] / top, (double)(b + 1) * xs,
                       G10_H - G10_H * dem[b] / top);
    lp_html_raw(h, "\"/>");
    lp_html_printf(h, "<line x1=\"0\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#d7191c\" stroke-dasharray=\"4 3\"/>",
                   G10_W, G10_H - G10_H * K / top, G10_H - G10_H * K / top);
    lp_html_printf(h, "<text x=\"2\" y=\"%d\" font-size=\"11\">0</text><text x=\"%d\" y=\"%d\" font-size=\"11\" "
                      "text-anchor=\"end\">%s</text>",
                   G10_H + 14, G10_W - 2, G10_H + 14, lp_fmt_dur(t1 - t0, d1, sizeof d1));
    lp_html_raw(h, "</svg><figcaption>");
    lp_html_text(h, lp_g10_model_str(m, m->res[tl->res].name));
    lp_html_raw(h, " on ");
    lp_html_text(h, lp_strtab_get(&a->strs, tl->host));
    lp_html_printf(h, ": attributed usage (blue) and demand capped at capacity (line), capacity %g", K);
    if (m->res[tl->res].unit != LP_STR_NONE) {
        lp_html_raw(h, " ");
        lp_html_text(h, lp_g10_model_str(m, m->res[tl->res].unit));
    }
    lp_html_printf(h, " (dashed); shaded: at or above %.0f%% of capacity. Consumed %.4g, attributed %.4g, background "
                      "%.4g, clipped %.4g; %u windows, %llu gaps, %llu dropped.",
                   100 * m->bottleneck, tl->consumed, tl->attributed, tl->background, tl->clipped, tl->nwin,
                   (unsigned long long)tl->gaps, (unsigned long long)tl->dropped);
    if (m->res[tl->res].delay != LP_STR_NONE) {
        double on = lp_g10_tl_on_share(tl);
        lp_html_printf(h, " Effective capacity: the threads got %.1f%% of what they were ready to use in %u windows "
                          "(%llu without a usable delay: capacity assumed free there); contended %.3g s, counted "
                          "as bottlenecked.",
                       100 * on, tl->nwin_delay, (unsigned long long)tl->delay_bad, tl->contended_s);
    }
    lp_html_raw(h, "</figcaption></figure>\n");
}

static void bottlenecks(lp_html *h, const lp_g10_attr *a)
{
    const lp_g10_model *m = a->m;
    char d1[32], d2[32];
    lp_html_raw(h, "<h3>Bottlenecks per phase type and resource</h3>\n<table class=\"lp-tab\"><thead><tr><th>type</th>"
                   "<th>resource</th><th>rule</th><th class=\"n\">phases</th><th class=\"n\">active</th>"
                   "<th class=\"n\">bottlenecked</th><th class=\"n\">share</th></tr></thead><tbody>\n");
    for (uint32_t t = 0; t < m->ntypes; t++)
        for (uint32_t r = 0; r < m->nres; r++) {
            const lp_g10_tstat *ts = &a->tstat[(size_t)t * m->nres + r];
            if (!ts->phases)
                continue;
            double share = ts->active_ns ? (double)ts->bn_ns / (double)ts->active_ns : 0;
            lp_html_raw(h, "<tr><td>");
            lp_html_text(h, lp_g10_model_str(m, m->type[t].path));
            lp_html_raw(h, "</td><td>");
            lp_html_text(h, lp_g10_model_str(m, m->res[r].name));
            lp_html_printf(h, "</td><td>%s</td><td class=\"n\">%llu</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                              "<td class=\"n\">",
                           lp_g10_rule_name(m->rkind[(size_t)t * m->nres + r]), (unsigned long long)ts->phases,
                           lp_fmt_dur(ts->active_ns, d1, sizeof d1), lp_fmt_dur(ts->bn_ns, d2, sizeof d2));
            rp_share_bar(h, share > 1 ? 1 : share, RP_CP_COLOR);
            lp_html_printf(h, "%.1f%%</td></tr>\n", 100 * share);
        }
    lp_html_raw(h, "</tbody></table>\n");
}

/* Per concurrent type: the sets of its instances under one parent, worst longest/mean. */
static lp_status imbalance(lp_html *h, const lp_g10_attr *a, lp_error *err)
{
    const lp_g10_exec *x = a->x;
    const lp_g10_model *m = a->m;
    double *mx = lp_calloc(m->ntypes, sizeof *mx), *sum = lp_calloc(m->ntypes, sizeof *sum);
    double *worst = lp_calloc(m->ntypes, sizeof *worst);
    uint64_t *cnt = lp_calloc(m->ntypes, sizeof *cnt), *sets = lp_calloc(m->ntypes, sizeof *sets);
    if (!mx || !sum || !worst || !cnt || !sets) {
        lp_free(mx), lp_free(sum), lp_free(worst), lp_free(cnt), lp_free(sets);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    for (uint32_t p = 0; p < x->n; p++) {
        if (x->size[p] == 1)
            continue;
        for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
            uint32_t t = x->type[c];
            double d = (double)(x->end[c] - x->start[c]);
            mx[t] = cnt[t] && mx[t] > d ? mx[t] : d;
            sum[t] += d;
            cnt[t]++;
        }
        for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
            uint32_t t = x->type[c];
            if (cnt[t] > 1 && m->type[t].repeat == LP_G10_CONCURRENT && sum[t] > 0) {
                double r = mx[t] / (sum[t] / (double)cnt[t]);
                worst[t] = r > worst[t] ? r : worst[t];
                sets[t]++;
            }
            mx[t] = sum[t] = 0;
            cnt[t] = 0;
        }
    }
    lp_html_raw(h, "<h3>Imbalance of concurrent phase types</h3>\n<table class=\"lp-tab\"><thead><tr><th>type</th>"
                   "<th class=\"n\">sets</th><th class=\"n\">worst longest / mean</th></tr></thead><tbody>\n");
    for (uint32_t t = 0; t < m->ntypes; t++)
        if (sets[t]) {
            lp_html_raw(h, "<tr><td>");
            lp_html_text(h, lp_g10_model_str(m, m->type[t].path));
            lp_html_printf(h, "</td><td class=\"n\">%llu</td><td class=\"n\">%.2f</td></tr>\n",
                           (unsigned long long)sets[t], worst[t]);
        }
    lp_html_raw(h, "</tbody></table>\n");
    lp_free(mx), lp_free(sum), lp_free(worst), lp_free(cnt), lp_free(sets);
    return LP_OK;
}

/* The resources of the critical path's phases (path.h). */
static void path(lp_html *h, const lp_g10_attr *a, const lp_g10_path *p)
{
    const lp_g10_model *m = a->m;
    char d1[32], d2[32], d3[32];
    double L = p->on_path_ns > 0 ? (double)p->on_path_ns : 1;
    lp_html_printf(h, "<h3>The critical path's resources</h3>\n<p>The trace's critical path, %s in %llu elements: "
                      "%s (%.1f%%) on %llu phases, %s on other activities and messages. Per resource: the path time "
                      "on phases using it, their usage on the path, and the path time they were bottlenecked on it "
                      "(what a faster resource would shorten first).</p>\n",
                   lp_fmt_dur(p->on_path_ns, d1, sizeof d1), (unsigned long long)p->elems,
                   lp_fmt_dur(p->phase_ns, d2, sizeof d2), 100 * (double)p->phase_ns / L,
                   (unsigned long long)p->phase_elems, lp_fmt_dur(p->other_ns, d3, sizeof d3));
    lp_html_raw(h, "<table class=\"lp-tab\"><thead><tr><th>resource</th><th class=\"n\">on phases using it</th>"
                   "<th class=\"n\">used on the path</th><th class=\"n\">bottlenecked</th><th class=\"n\">share of "
                   "the path</th></tr></thead><tbody>\n");
    for (uint32_t r = 0; r < m->nres; r++) {
        const lp_g10_pathres *pr = &p->res[r];
        double share = (double)pr->bn_ns / L;
        lp_html_raw(h, "<tr><td>");
        lp_html_text(h, lp_g10_model_str(m, m->res[r].name));
        lp_html_printf(h, "</td><td class=\"n\">%s</td><td class=\"n\">", lp_fmt_dur(pr->with_ns, d1, sizeof d1));
        if (m->res[r].kind == LP_G10_CONSUMABLE)
            lp_html_printf(h, "%.4g", pr->used);
        else
            lp_html_raw(h, "(blocking)");
        lp_html_printf(h, "</td><td class=\"n\">%s</td><td class=\"n\">", lp_fmt_dur(pr->bn_ns, d2, sizeof d2));
        rp_share_bar(h, share < 0 ? 0 : share > 1 ? 1 : share, RP_CP_COLOR);
        lp_html_printf(h, "%.1f%%</td></tr>\n", 100 * share);
    }
    lp_html_raw(h, "</tbody></table>\n");
}

static lp_status g10_write(const lp_report *r, const void *state, lp_html *h, lp_error *err)
{
    (void)state;
    const lp_report_data *d = lp_report_data_of(r);
    const lp_g10_attr *a = d->g10;
    rp_section_open(h, &lp_report_sec_grade10);
    lp_html_printf(h, "<p>Resource use attributed to %u phases (%u leaves) from the monitoring through the model "
                      "(Grade10, papers/grade10.txt; docs/analyses/grade10.md), %s mode.</p>\n",
                   a->x->n, a->x->nleaves, lp_g10_mode_name(a->mode));
    if (d->g10_issues)
        issues(h, a, d->g10_issues);
    if (d->g10_path)
        path(h, a, d->g10_path);
    lp_html_raw(h, "<h3>Usage and demand over time</h3>\n");
    if (!a->ntl)
        lp_html_raw(h, "<p>No monitoring of a consumable resource of the model.</p>\n");
    for (uint32_t k = 0; k < a->ntl; k++)
        timeline(h, a, &a->tl[k]);
    bottlenecks(h, a);
    lp_status st = imbalance(h, a, err);
    rp_section_close(h);
    return st;
}

const lp_report_section lp_report_sec_grade10 = {
    .name = "grade10",
    .title = "Grade10: resources, bottlenecks, issues",
    .applies = g10_applies,
    .prepare = g10_prepare,
    .release = g10_release,
    .write = g10_write,
};
