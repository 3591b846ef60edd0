/* report_resources.c: the CrystalPerf section of the report (docs/analyses/crystalperf.md):
 * the bottleneck resource of the critical path, the path drawn as a bar coloured by each
 * element's main resource, the resource time of the path and of all activities, and per
 * operation. Applies when there is evidence: call-stack samples given with the trace
 * (lp_report_data.samples) or activities with task metrics (Spark). State: the profile
 * and the bottleneck. */
#include "report_int.h"
#include "longpole/base/alloc.h"
#include "longpole/analysis/crystalperf/bottleneck.h"
#include "base/util.h"

#include <string.h>

static const char *const res_color[LP_RES_N] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#bbbbbb", "#eeeeee"};

typedef struct rs_state {
    lp_cpf_profile p;
    lp_cpf_bottleneck b;
    int have_p, have_b;
} rs_state;

static int rs_applies(const lp_report_data *d)
{
    if (!d->trace)
        return 0;
    if (d->samples)
        return 1;
    const lp_trace *t = d->trace;
    for (uint64_t a = 0; a < t->nacts; a++)
        if (t->aattr[a] && lp_trace_attr(t, t->aattr[a], "cpu_ns") != LP_STR_NONE)
            return 1;
    return 0;
}

static lp_status rs_prepare(lp_report *r, void **state, lp_error *err)
{
    rs_state *s = lp_calloc(1, sizeof *s);
    *state = s;
    if (!s)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    const lp_report_data *d = lp_report_data_of(r);
    const lp_report_graph *g;
    lp_status st = lp_report_graph_get(r, &g, err);
    if (!st && !(st = lp_cpf_profile_build(d->trace, d->samples, d->cpf_model, NULL, &s->p, err)))
        s->have_p = 1;
    if (!st && !(st = lp_cpf_bottleneck_compute(&s->p, &g->cp, &s->b, err)))
        s->have_b = 1;
    return st;
}

static void rs_release(void *state)
{
    rs_state *s = state;
    if (!s)
        return;
    if (s->have_b)
        lp_cpf_bottleneck_release(&s->b);
    if (s->have_p)
        lp_cpf_profile_release(&s->p);
    lp_free(s);
}

static int main_res(const double v[LP_RES_N])
{
    int m = 0;
    for (int k = 1; k < LP_RES_N; k++)
        if (v[k] > v[m])
            m = k;
    return m;
}

/* The path as one bar: runs of consecutive elements with one main resource. */
static void path_bar(lp_html *h, const lp_report_graph *g, const lp_cpf_bottleneck *b)
{
    const lp_cpath *cp = &g->cp;
    char d1[32];
    lp_html_raw(h, "<div class=\"lp-cpfbar\" style=\"display:flex;height:22px;width:100%;border:1px solid #999\">");
    for (size_t i = 0; i < cp->n;) {
        int m = main_res(b->elem[i]);
        int64_t len = 0;
        size_t j = i;
        while (j < cp->n && main_res(b->elem[j]) == m)
            len += cp->e[j].end - cp->e[j].start, j++;
        double w = cp->total ? 100.0 * (double)len / (double)cp->total : 0;
        if (w > 0.05)
            lp_html_printf(h, "<span title=\"%s %s (%zu elements)\" style=\"width:%.3f%%;background:%s\"></span>",
                           lp_res_name(m), lp_fmt_dur(len, d1, sizeof d1), j - i, w, res_color[m]);
        i = j;
    }
    lp_html_raw(h, "</div><p>");
    for (int k = 0; k < LP_RES_N; k++)
        lp_html_printf(h, "<span class=\"lp-sw\" style=\"background:%s\"></span>%s &nbsp; ", res_color[k],
                       lp_res_name(k));
    lp_html_raw(h, "</p>\n");
}

static void row(lp_html *h, const char *label, const double ns[LP_RES_N], double tot)
{
    char d1[32];
    lp_html_raw(h, "<tr><td>");
    lp_html_text(h, label);
    lp_html_raw(h, "</td>");
    for (int k = 0; k < LP_RES_N; k++)
        lp_html_printf(h, "<td class=\"n\">%s</td><td class=\"n\">%.1f%%</td>", lp_fmt_dur((int64_t)(ns[k] + 0.5), d1, sizeof d1),
                       tot > 0 ? 100 * ns[k] / tot : 0);
    lp_html_raw(h, "</tr>\n");
}

static void head(lp_html *h, const char *first)
{
    lp_html_raw(h, "<table class=\"lp-tab\"><thead><tr><th>");
    lp_html_text(h, first);
    lp_html_raw(h, "</th>");
    for (int k = 0; k < LP_RES_N; k++)
        lp_html_printf(h, "<th class=\"n\">%s</th><th class=\"n\">share</th>", lp_res_name(k));
    lp_html_raw(h, "</tr></thead><tbody>\n");
}

static lp_status rs_write(const lp_report *r, const void *state, lp_html *h, lp_error *err)
{
    const rs_state *s = state;
    const lp_report_data *d = lp_report_data_of(r);
    const lp_trace *t = d->trace;
    const lp_report_graph *g = lp_report_graph_peek(r);
    const lp_cpf_bottleneck *b = &s->b;
    rp_section_open(h, &lp_report_sec_resources);
    lp_html_printf(h, "<p>Bottleneck resource of the critical path: <b>%s</b>; the evidence covers %.1f%% of the "
                      "path%s. Evidence: ",
                   b->bottleneck >= 0 ? lp_res_name(b->bottleneck) : "none known", 100 * b->coverage,
                   b->partial ? " (<b>partial</b>: less than half; the rest is unknown)" : "");
    if (d->samples)
        lp_html_printf(h, "%llu call-stack samples (%llu joined to activities, %llu outside every activity, %llu of "
                          "threads no worker names; decided by thread state %llu, kernel stack %llu, classifier %llu, "
                          "undecided %llu)",
                       (unsigned long long)s->p.samples, (unsigned long long)s->p.samples_used,
                       (unsigned long long)s->p.samples_outside, (unsigned long long)s->p.samples_no_worker,
                       (unsigned long long)s->p.by_how[LP_HOW_STATE], (unsigned long long)s->p.by_how[LP_HOW_KERNEL],
                       (unsigned long long)s->p.by_how[LP_HOW_CLASSIFIER], (unsigned long long)s->p.by_how[LP_HOW_NONE]);
    else
        lp_html_printf(h, "task metrics of %llu activities", (unsigned long long)s->p.acts_metrics);
    lp_html_raw(h, " (CrystalPerf §4; docs/analyses/crystalperf.md).</p>\n<h3>The critical path by resource</h3>\n");
    if (g)
        path_bar(h, g, b);
    head(h, "");
    row(h, "critical path", b->path, (double)b->path_total);
    double all = 0;
    for (int k = 0; k < LP_RES_N; k++)
        all += b->all[k];
    row(h, "all activities", b->all, all);
    lp_html_raw(h, "</tbody></table>\n<h3>Per operation, on the critical path</h3>\n");
    head(h, "operation");
    size_t shown = 0, lim = lp_report_opts_of(r)->table_rows ? lp_report_opts_of(r)->table_rows : 25;
    for (size_t i = 0; i < b->nops && shown < lim; i++) {
        const lp_cpf_oprow *o = &b->ops[i];
        if (!o->path_ns)
            continue;
        row(h, o->message ? "communication" : o->op == LP_STR_NONE ? "-" : lp_trace_str(t, o->op), o->path,
            (double)o->path_ns);
        shown++;
    }
    lp_html_raw(h, "</tbody></table>\n");
    rp_section_close(h);
    return LP_OK;
}

const lp_report_section lp_report_sec_resources = {
    .name = "resources",
    .title = "Resources",
    .applies = rs_applies,
    .prepare = rs_prepare,
    .release = rs_release,
    .write = rs_write,
};
