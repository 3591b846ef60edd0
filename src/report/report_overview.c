/* report_overview.c: the report's first section, opening with the headline (the answer
 * first: headline.h, the same sentences as `cp`), then what was loaded (workers, activities,
 * messages, spans, requests), the whole-trace critical path's length (cpath.h) and the
 * instrumentation checks (SnailTrail App. A.2, check.h) that say how far the path can be
 * trusted. Its state is the headline and its breakdowns; the path is the shared graph's
 * (lp_report_graph). */
#include "report_int.h"
#include "longpole/analysis/critical-path/headline.h"
#include "longpole/base/alloc.h"

#include <string.h>

static int ov_applies(const lp_report_data *d) { return d->trace || d->spans || d->reqstats; }

/* The headline (headline.h) and the breakdowns it is made from. */
typedef struct ov_state {
    lp_breakdown bd[3];
    lp_headline head;
    int have;
} ov_state;

static void ov_release(void *state)
{
    ov_state *s = state;
    if (!s)
        return;
    if (s->have)
        lp_headline_release(&s->head);
    for (int k = 0; k < 3; k++)
        lp_breakdown_release(&s->bd[k]);
    lp_free(s);
}

static lp_status ov_prepare(lp_report *r, void **state, lp_error *err)
{
    *state = NULL;
    const lp_trace *t = lp_report_data_of(r)->trace;
    if (!t)
        return LP_OK;
    const lp_report_graph *g;
    lp_status st = lp_report_graph_get(r, &g, err);
    if (st)
        return st;
    ov_state *s = lp_calloc(1, sizeof *s);
    if (!s)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (int k = 0; k < 3 && !st; k++)
        st = lp_breakdown_compute(t, &g->cp, (lp_group)k, &s->bd[k], err);
    if (!st && !(st = lp_headline_make(t, &g->cp, s->bd, &s->head, err)))
        s->have = 1;
    if (st) {
        ov_release(s);
        return st;
    }
    *state = s;
    return LP_OK;
}

/* Severity of a property-1 violation (issue 12: a count and a severity, not a red
 * "broken"): high when more than 1% of the events (or more than 10) come out of the
 * blue; for property 2, when the intervals cover more than 1% of the span. */
static int severe(uint64_t n, uint64_t nevents) { return n > 10 || (double)n > 0.01 * (double)nevents; }

/* The answer first: the headline's sentences, one paragraph each. */
static void write_headline(lp_html *h, const ov_state *s)
{
    if (!s || !s->have)
        return;
    lp_html_raw(h, "<div class=\"lp-headline\" id=\"headline\">\n");
    const char *p = s->head.text;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        lp_html_raw(h, "<p>");
        lp_html_textn(h, p, n);
        lp_html_raw(h, "</p>\n");
        p += n + (e != NULL);
    }
    lp_html_raw(h, "</div>\n");
}

static void row_u(lp_html *h, const char *label, uint64_t v, const char *note)
{
    lp_html_printf(h, "<tr><th>%s</th><td>%llu", label, (unsigned long long)v);
    if (note)
        lp_html_raw(h, note);
    lp_html_raw(h, "</td></tr>\n");
}

static lp_status ov_write(const lp_report *r, const void *state, lp_html *h, lp_error *err)
{
    (void)err;
    const lp_report_data *d = lp_report_data_of(r);
    rp_section_open(h, &lp_report_sec_overview);
    write_headline(h, state);
    if (d->input_errors || d->input_warnings)
        lp_html_printf(h, "<p class=\"lp-warn\">Loading reported %llu error%s and %llu warning%s: records that break the "
                          "format's rules were skipped and the rest analysed (the command's diagnostics list them).</p>\n",
                       (unsigned long long)d->input_errors, d->input_errors == 1 ? "" : "s",
                       (unsigned long long)d->input_warnings, d->input_warnings == 1 ? "" : "s");
    if (d->nadjust) {
        lp_html_raw(h, "<p>What the analysis counted and adjusted in the data:</p>\n<ul class=\"lp-adjust\">\n");
        for (size_t i = 0; i < d->nadjust; i++) {
            lp_html_raw(h, "<li>");
            lp_html_text(h, d->adjust[i]);
            lp_html_raw(h, "</li>\n");
        }
        lp_html_raw(h, "</ul>\n");
    }
    lp_html_raw(h, "<div class=\"lp-cols\">\n");
    const lp_trace *t = d->trace;
    if (t) {
        const lp_report_graph *g = lp_report_graph_peek(r);
        lp_html_raw(h, "<table class=\"lp-kv\"><caption>Activity graph</caption><tbody>\n");
        row_u(h, "workers", t->nworkers, NULL);
        lp_html_printf(h, "<tr><th>activities</th><td>%llu (+%llu gaps filled: idle time as <em>waiting</em> or "
                          "<em>unknown</em>)</td></tr>\n",
                       (unsigned long long)(t->nacts - t->ngaps), (unsigned long long)t->ngaps);
        lp_html_printf(h, "<tr><th>messages</th><td>%llu", (unsigned long long)t->nmsgs);
        if (t->nskew)
            lp_html_printf(h, " (%llu received before sent: clock skew; left out of paths)", (unsigned long long)t->nskew);
        lp_html_raw(h, "</td></tr>\n<tr><th>time span</th><td>");
        lp_html_dur(h, t->tmax - t->tmin);
        lp_html_printf(h, " (%lld to %lld ns)</td></tr>\n", (long long)t->tmin, (long long)t->tmax);
        if (g) {
            lp_html_raw(h, "<tr><th>critical path</th><td><strong>");
            lp_html_dur(h, g->cp.total);
            lp_html_printf(h, "</strong>, %zu elements", g->cp.n);
            if (t->tmax > t->tmin)
                lp_html_printf(h, " (%.1f%% of the span)", 100.0 * (double)g->cp.total / (double)(t->tmax - t->tmin));
            if (g->cp.ncycles)
                lp_html_printf(h, "; %llu zero-time message cycle(s) broken", (unsigned long long)g->cp.ncycles);
            lp_html_raw(h, "</td></tr>\n");
            lp_html_printf(h, "<tr><th>graph</th><td>%llu vertices, %llu worker edges, %llu message edges</td></tr>\n",
                           (unsigned long long)g->nv, (unsigned long long)g->nwedges, (unsigned long long)g->ncedges);
        }
        lp_html_raw(h, "</tbody></table>\n");
        if (g) {
            lp_html_raw(h, "<table class=\"lp-kv\"><caption>Instrumentation checks (SnailTrail App.&nbsp;A.2)</caption>"
                           "<tbody>\n<tr><th>property 1</th><td>");
            if (!g->check.np1) {
                lp_html_raw(h, "holds: every event after the start has a cause (an incoming edge)");
            } else {
                lp_html_printf(h, "violated at <span class=\"%s\">%llu event%s</span> (severity: %s) out of the blue "
                                  "(first: ",
                               severe(g->check.np1, g->nv) ? "lp-bad" : "lp-note", (unsigned long long)g->check.np1,
                               g->check.np1 == 1 ? "" : "s", severe(g->check.np1, g->nv) ? "high" : "low");
                lp_html_text(h, lp_trace_worker_name(t, g->check.p1_worker[0]));
                lp_html_raw(h, " at +");
                lp_html_dur(h, g->check.p1_time[0] - t->tmin);
                lp_html_raw(h, "): instrumentation is missing there; the path may be wrong around it");
            }
            lp_html_raw(h, "</td></tr>\n<tr><th>property 2</th><td>");
            if (!g->check.np2) {
                lp_html_raw(h, "holds: never does every worker wait with no message in flight");
            } else {
                int hi = t->tmax > t->tmin && (double)g->check.p2_ns > 0.01 * (double)(t->tmax - t->tmin);
                lp_html_printf(h, "violated in <span class=\"%s\">%llu interval%s</span> (severity: %s), ",
                               hi ? "lp-bad" : "lp-note", (unsigned long long)g->check.np2,
                               g->check.np2 == 1 ? "" : "s", hi ? "high" : "low");
                lp_html_dur(h, g->check.p2_ns);
                lp_html_raw(h, " in all (first: +");
                lp_html_dur(h, g->check.p2_from[0] - t->tmin);
                lp_html_raw(h, " to +");
                lp_html_dur(h, g->check.p2_to[0] - t->tmin);
                lp_html_raw(h, "): every worker waits and nothing is in flight; a dependency is not traced");
            }
            lp_html_raw(h, "</td></tr>\n</tbody></table>\n");
        }
    }
    if (d->spans) {
        const lp_spans *sp = d->spans;
        lp_html_raw(h, "<table class=\"lp-kv\"><caption>Spans</caption><tbody>\n");
        row_u(h, "spans", sp->n, NULL);
        row_u(h, "kept", sp->nkept, NULL);
        row_u(h, "traces", sp->ntraces, NULL);
        row_u(h, "files", sp->nfiles, NULL);
        if (sp->nmerged || sp->ndup || sp->norphan || sp->ncycle)
            lp_html_printf(h, "<tr><th>repairs</th><td>%llu parts merged, %llu duplicates dropped, %llu orphans, %llu "
                              "cycles broken</td></tr>\n",
                           (unsigned long long)sp->nmerged, (unsigned long long)sp->ndup,
                           (unsigned long long)sp->norphan, (unsigned long long)sp->ncycle);
        lp_html_raw(h, "</tbody></table>\n");
    }
    if (d->reqstats && d->reqlog && d->model) {
        const lp_reqstats *S = d->reqstats;
        lp_html_raw(h, "<table class=\"lp-kv\"><caption>Request logs</caption><tbody>\n");
        row_u(h, "requests", d->reqlog->nreqs, NULL);
        row_u(h, "analysed", S->analysed, NULL);
        if (S->excluded)
            row_u(h, "excluded", S->excluded, " (input errors)");
        row_u(h, "log lines", d->reqlog->nlines, NULL);
        row_u(h, "hosts", d->reqlog->nhosts, NULL);
        lp_html_printf(h, "<tr><th>causal model</th><td>%u segments, ", d->model->nseg);
        if (d->model_file) {
            lp_html_raw(h, "from <code>");
            lp_html_text(h, d->model_file);
            lp_html_raw(h, "</code>");
        } else {
            lp_html_printf(h, "inferred from these logs (%llu requests)", (unsigned long long)d->model->nreq);
        }
        lp_html_raw(h, "</td></tr>\n");
        lp_html_printf(h, "<tr><th>clock skew</th><td>%s</td></tr>\n",
                       d->skew_corrected ? "corrected from RPC patterns (Mystery Machine §3)" : "not corrected");
        if (S->violations)
            row_u(h, "model violations", S->violations, " (relationships a request contradicted: edges dropped)");
        lp_html_raw(h, "</tbody></table>\n");
    }
    lp_html_raw(h, "</div>\n");
    rp_section_close(h);
    return LP_OK;
}

const lp_report_section lp_report_sec_overview = {
    "overview", "Overview", ov_applies, ov_prepare, ov_release, ov_write,
};
