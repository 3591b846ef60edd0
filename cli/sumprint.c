/* sumprint.c: one window's result of SnailTrail's summaries as `summary` and `stream`
 * print it (summary.h): a text block, a compact line or a JSON line
 * (docs/formats/summary-json.md), and the time and share formats they use. */
#include "summary.h"

#include <math.h>
#include <string.h>

/* A time or duration in the largest unit (s, ms, us, ns) it reaches, exactly (as many
 * decimals as needed), e.g. "2.25s", "250ms", "45ns", "-1.5us". */
const char *cli_fmt_s(int64_t ns, char *buf, size_t n)
{
    static const struct {
        uint64_t div;
        int digits;
        const char *unit;
    } units[] = {{1000000000u, 9, "s"}, {1000000u, 6, "ms"}, {1000u, 3, "us"}, {1u, 0, "ns"}};
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    size_t u = 0;
    while (u + 1 < sizeof units / sizeof units[0] && a < units[u].div)
        u++;
    if (a == 0)
        u = 0;
    uint64_t whole = a / units[u].div, frac = a % units[u].div;
    char f[16] = "";
    if (frac) {
        snprintf(f, sizeof f, ".%0*llu", units[u].digits, (unsigned long long)frac);
        size_t k = strlen(f);
        while (k > 1 && f[k - 1] == '0')
            f[--k] = '\0';
    }
    snprintf(buf, n, "%s%llu%s%s", ns < 0 ? "-" : "", (unsigned long long)whole, f, units[u].unit);
    return buf;
}

/* s in at most `width` bytes: as it is when it fits, else its start, "..." and its end
 * (cut at UTF-8 character bounds), so two long names that differ only at the end stay
 * apart in a table (issue 12 item 9). */
const char *cli_fmt_elide(const char *s, int width, char *buf, size_t n)
{
    size_t len = strlen(s), w = width > 5 ? (size_t)width : 5;
    if (len <= w || n < w + 1)
        return s;
    size_t head = (w - 3 + 1) / 2, tail = w - 3 - head;
    while (head && ((unsigned char)s[head] & 0xC0) == 0x80)
        head--;
    size_t from = len - tail;
    while (from < len && ((unsigned char)s[from] & 0xC0) == 0x80)
        from++;
    memcpy(buf, s, head);
    memcpy(buf + head, "...", 3);
    memcpy(buf + head + 3, s + from, len - from);
    buf[head + 3 + len - from] = '\0';
    return buf;
}

const char *cli_fmt_pct(double x, char *buf, size_t n)
{
    if (x == 0)
        snprintf(buf, n, "0");
    else if (x * 100 < 0.05)
        snprintf(buf, n, "<0.1%%");
    else
        snprintf(buf, n, "%.1f%%", x * 100);
    return buf;
}

static void print_checks(FILE *f, const lp_winres *r, int64_t base)
{
    const lp_snapcheck *c = &r->check;
    char b1[40], b2[40];
    if (!r->checked) {
        fprintf(f, "checks: skipped");
        return;
    }
    if (!c->np1 && !c->np2) {
        fprintf(f, "checks: ok");
        return;
    }
    fprintf(f, "checks:");
    if (c->np1)
        fprintf(f, " property 1 broken at %llu event%s out of the blue (first: %s at %s)", (unsigned long long)c->np1,
                c->np1 == 1 ? "" : "s", lp_trace_worker_name(r->t, c->p1_worker[0]),
                cli_fmt_s(c->p1_time[0] - base, b1, sizeof b1));
    if (c->np2) {
        char d[32];
        fprintf(f, "%s property 2 broken for %s in %llu interval%s with every worker waiting and nothing in flight"
                   " (first: %s to %s)",
                c->np1 ? ";" : "", cli_fmt_s(c->p2_ns, d, sizeof d), (unsigned long long)c->np2, c->np2 == 1 ? "" : "s",
                cli_fmt_s(c->p2_from[0] - base, b1, sizeof b1), cli_fmt_s(c->p2_to[0] - base, b2, sizeof b2));
    }
}

static void print_table(FILE *f, const lp_winres *r, const lp_summary *s, size_t top)
{
    char lab[160], p1[24], p2[24], p3[24], p4[24];
    size_t shown = top && top < s->n ? top : s->n;
    int width = 10;
    for (size_t i = 0; i < shown; i++) {
        int l = (int)strlen(lp_sumkeys_label(r->keys, s->kind, s->rows[i].key, lab, sizeof lab));
        width = l > width ? l : width;
    }
    width = width > 48 ? 48 : width;
    const char *title = s->kind == LP_SUM_WORKER ? "worker (straggler)" : lp_sumkind_name(s->kind);
    if (s->kind == LP_SUM_OPERATOR)
        fprintf(f, "  %-*s %8s %7s %9s %8s %8s\n", width, title, "CP", "workers", "CP/worker", "profile", "1 path");
    else
        fprintf(f, "  %-*s %8s %8s %8s\n", width, title, "CP", "profile", "1 path");
    for (size_t i = 0; i < shown; i++) {
        const lp_sumrow *w = &s->rows[i];
        char el[64];
        const char *l = cli_fmt_elide(lp_sumkeys_label(r->keys, s->kind, w->key, lab, sizeof lab), width, el, sizeof el);
        if (s->kind == LP_SUM_OPERATOR)
            fprintf(f, "  %-*s %8s %7u %9s %8s %8s\n", width, l, cli_fmt_pct(w->cp, p1, sizeof p1), w->par,
                    cli_fmt_pct(w->rank, p2, sizeof p2), cli_fmt_pct(w->prof_share, p3, sizeof p3),
                    cli_fmt_pct(w->path_share, p4, sizeof p4));
        else
            fprintf(f, "  %-*s %8s %8s %8s\n", width, l, cli_fmt_pct(w->cp, p1, sizeof p1),
                    cli_fmt_pct(w->prof_share, p3, sizeof p3), cli_fmt_pct(w->path_share, p4, sizeof p4));
    }
    if (shown < s->n)
        fprintf(f, "  ... %zu more row%s (--top 0 shows all)\n", s->n - shown, s->n - shown == 1 ? "" : "s");
    if (s->kind == LP_SUM_COMM && s->n)
        fprintf(f, "  (messages carry %s of the critical participation)\n", cli_fmt_pct(s->cp_total, p1, sizeof p1));
}

static void json_rows(lp_jsonw *j, const lp_winres *r, const lp_summary *s, size_t top)
{
    char lab[160];
    lp_jsonw_key(j, lp_sumkind_name(s->kind));
    lp_jsonw_obj(j);
    lp_jsonw_kdbl(j, "cp_total", s->cp_total);
    lp_jsonw_ki64(j, "profile_total_ns", s->prof_total);
    lp_jsonw_ki64(j, "waiting_ns", s->waiting_ns);
    lp_jsonw_ki64(j, "path_total_ns", s->path_total);
    lp_jsonw_ku64(j, "nrows", s->n);
    lp_jsonw_key(j, "rows");
    lp_jsonw_arr(j);
    size_t shown = top && top < s->n ? top : s->n;
    for (size_t i = 0; i < shown; i++) {
        const lp_sumrow *w = &s->rows[i];
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "key", lp_sumkeys_label(r->keys, s->kind, w->key, lab, sizeof lab));
        if (s->kind == LP_SUM_COMM) {
            lp_jsonw_kstr(j, "from", lp_trace_worker_name(r->t, (uint32_t)(w->key >> 32)));
            lp_jsonw_kstr(j, "to", lp_trace_worker_name(r->t, (uint32_t)w->key));
        }
        lp_jsonw_kdbl(j, "cp", w->cp);
        if (s->kind == LP_SUM_OPERATOR) {
            lp_jsonw_ku64(j, "parallelism", w->par);
            lp_jsonw_kdbl(j, "cp_per_worker", w->rank);
        }
        lp_jsonw_ki64(j, "profile_ns", w->prof_ns);
        lp_jsonw_kdbl(j, "profile_share", w->prof_share);
        lp_jsonw_ki64(j, "path_ns", w->path_ns);
        lp_jsonw_kdbl(j, "path_share", w->path_share);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_jsonw_obj_end(j);
}

/* The instrumentation checks of a window (null when skipped), with the first violations. */
static void json_checks(lp_jsonw *j, const lp_winres *r)
{
    if (!r->checked) {
        lp_jsonw_null(j);
    } else {
        const lp_snapcheck *c = &r->check;
        lp_jsonw_obj(j);
        lp_jsonw_key(j, "property1");
        lp_jsonw_obj(j);
        lp_jsonw_ku64(j, "violations", c->np1);
        lp_jsonw_key(j, "first");
        lp_jsonw_arr(j);
        for (uint64_t i = 0; i < c->np1 && i < LP_SNAPCHECK_KEEP; i++) {
            lp_jsonw_obj(j);
            lp_jsonw_kstr(j, "worker", lp_trace_worker_name(r->t, c->p1_worker[i]));
            lp_jsonw_ki64(j, "time", c->p1_time[i]);
            lp_jsonw_obj_end(j);
        }
        lp_jsonw_arr_end(j);
        lp_jsonw_obj_end(j);
        lp_jsonw_key(j, "property2");
        lp_jsonw_obj(j);
        lp_jsonw_ku64(j, "violations", c->np2);
        lp_jsonw_ki64(j, "total_ns", c->p2_ns);
        lp_jsonw_key(j, "first");
        lp_jsonw_arr(j);
        for (uint64_t i = 0; i < c->np2 && i < LP_SNAPCHECK_KEEP; i++) {
            lp_jsonw_obj(j);
            lp_jsonw_ki64(j, "from", c->p2_from[i]);
            lp_jsonw_ki64(j, "to", c->p2_to[i]);
            lp_jsonw_ku64(j, "active_workers", c->p2_active[i]);
            lp_jsonw_obj_end(j);
        }
        lp_jsonw_arr_end(j);
        lp_jsonw_obj_end(j);
        lp_jsonw_obj_end(j);
    }
}

/* A window whose data covers less than this share of it (a tail window past the end of
 * the trace, say) is partial: marked in text and JSON (docs/trust.md). */
#define PARTIAL_SHARE 0.5

static double coverage(const lp_winres *r)
{
    return r->te > r->ts ? (double)(r->t1 - r->t0) / (double)(r->te - r->ts) : 1.0;
}

static int partial(const lp_winres *r) { return r->nv && coverage(r) < PARTIAL_SHARE; }

static void json_window(FILE *f, const lp_winres *r, const cli_sumfmt *fmt)
{
    lp_jsonw j;
    char buf[64];
    lp_jsonw_init(&j, f, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "kind", "window");
    lp_jsonw_ku64(&j, "index", r->index);
    lp_jsonw_ki64(&j, "ts", r->ts);
    lp_jsonw_ki64(&j, "te", r->te);
    lp_jsonw_ki64(&j, "start", r->t0);
    lp_jsonw_ki64(&j, "end", r->t1);
    lp_jsonw_kbool(&j, "partial", partial(r));
    lp_jsonw_kdbl(&j, "coverage", coverage(r));
    lp_jsonw_ku64(&j, "events", r->nevents);
    lp_jsonw_ku64(&j, "activities", r->nacts);
    lp_jsonw_ku64(&j, "messages", r->nmsgs);
    lp_jsonw_ku64(&j, "workers", r->nworkers);
    lp_jsonw_ku64(&j, "active_workers", r->nactive);
    lp_jsonw_ku64(&j, "vertices", r->nv);
    lp_jsonw_ku64(&j, "worker_edges", r->nwedges);
    lp_jsonw_ku64(&j, "message_edges", r->nin);
    lp_jsonw_key(&j, "paths");
    lp_jsonw_obj(&j);
    lp_jsonw_kdbl(&j, "log10", r->n.m != 0 ? r->log10n : NAN);
    lp_jsonw_kstr(&j, "approx", lp_xnum_fmt(r->n, 6, buf, sizeof buf));
    lp_jsonw_key(&j, "exact");
    if (r->n.m == 0 || (r->n.e == 0 && r->n.rd == 0 && r->n.m <= 0x1p53))
        lp_jsonw_str(&j, lp_xnum_fmt(r->n, 17, buf, sizeof buf));
    else
        lp_jsonw_null(&j);
    lp_jsonw_ku64(&j, "start_vertices", r->nvs);
    lp_jsonw_ku64(&j, "end_vertices", r->nve);
    lp_jsonw_obj_end(&j);
    lp_jsonw_kbool(&j, "has_paths", r->has_paths);
    lp_jsonw_kdbl(&j, "cp_sum", r->cp_sum);
    lp_jsonw_kdbl(&j, "cp_sum_error", r->has_paths ? r->cp_sum - 1.0 : NAN);
    lp_jsonw_kbool(&j, "cp_sum_ok", r->sum_ok);
    lp_jsonw_kdbl(&j, "err_bound", r->err_bound);
    lp_jsonw_ku64(&j, "cycles_broken", r->ncycles);
    lp_jsonw_key(&j, "checks");
    json_checks(&j, r);
    lp_jsonw_key(&j, "path");
    if (r->path_edges) {
        lp_jsonw_obj(&j);
        lp_jsonw_ku64(&j, "edges", r->path_edges);
        lp_jsonw_ku64(&j, "seed", fmt->seed);
        lp_jsonw_obj_end(&j);
    } else {
        lp_jsonw_null(&j);
    }
    lp_jsonw_key(&j, "summaries");
    lp_jsonw_obj(&j);
    for (int k = 0; k < LP_SUM_NKINDS; k++)
        if (r->kinds & (1u << k))
            json_rows(&j, r, &r->sum[k], fmt->top_json);
    lp_jsonw_obj_end(&j);
    if (fmt->timing)
        lp_jsonw_kdbl(&j, "seconds", r->seconds);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

/* One line: the window, N and the top keys of each summary (operators by CP per worker). */
static void print_compact(FILE *f, const lp_winres *r, const cli_sumfmt *fmt)
{
    char b1[40], b2[40], nb[64], p[24];
    const int64_t base = fmt->base;
    fprintf(f, "[%s, %s)", cli_fmt_s(r->ts - base, b1, sizeof b1), cli_fmt_s(r->te - base, b2, sizeof b2));
    if (partial(r))
        fprintf(f, " PARTIAL (data covers %s of the window)", cli_fmt_pct(coverage(r), nb, sizeof nb));
    if (!r->has_paths) {
        fprintf(f, " no transient critical path");
    } else {
        fprintf(f, " N=%s", lp_xnum_fmt(r->n, 3, nb, sizeof nb));
        char lab[160];
        for (int k = 0; k < LP_SUM_NKINDS; k++) {
            if (!(r->kinds & (1u << k)))
                continue;
            const lp_summary *s = &r->sum[k];
            fprintf(f, " | %s:", lp_sumkind_name(s->kind));
            size_t shown = fmt->top && fmt->top < s->n ? fmt->top : s->n;
            if (!shown)
                fprintf(f, " -");
            for (size_t i = 0; i < shown; i++)
                fprintf(f, "%s %s %s", i ? "," : "", lp_sumkeys_label(r->keys, s->kind, s->rows[i].key, lab, sizeof lab),
                        cli_fmt_pct(s->kind == LP_SUM_OPERATOR ? s->rows[i].rank : s->rows[i].cp, p, sizeof p));
        }
    }
    if (r->checked && (r->check.np1 || r->check.np2))
        fprintf(f, " | checks: P1 %llu, P2 %llu", (unsigned long long)r->check.np1,
                (unsigned long long)r->check.np2);
    if (r->has_paths && !r->sum_ok)
        fprintf(f, " | CP SUMS TO %.17g", r->cp_sum);
    fprintf(f, "\n");
}

void cli_winres_print(FILE *f, const lp_winres *r, const cli_sumfmt *fmt)
{
    if (fmt->json) {
        json_window(f, r, fmt);
        return;
    }
    char b1[40], b2[40], nb[64];
    const int64_t base = fmt->base;
    if (fmt->compact) {
        print_compact(f, r, fmt);
        return;
    }
    fprintf(f, "\nwindow %llu [%s, %s): %llu events, %u/%u workers, %llu vertices, %llu message edges",
            (unsigned long long)r->index, cli_fmt_s(r->ts - base, b1, sizeof b1), cli_fmt_s(r->te - base, b2, sizeof b2),
            (unsigned long long)r->nevents, r->nactive, r->nworkers, (unsigned long long)r->nv,
            (unsigned long long)r->nin);
    if (fmt->timing)
        fprintf(f, ", analysed in %.3f ms", r->seconds * 1e3);
    if (partial(r))
        fprintf(f, "\n  PARTIAL window: its data covers only %s of it (less than %.0f%%): its shares describe %s, "
                   "not a full window",
                cli_fmt_pct(coverage(r), nb, sizeof nb), 100 * PARTIAL_SHARE,
                cli_fmt_s(r->t1 - r->t0, b1, sizeof b1));
    fprintf(f, "\n  ");
    if (!r->nv) {
        fprintf(f, "empty window\n");
        return;
    }
    if (r->has_paths) {
        fprintf(f, "transient critical paths: N = %s", lp_xnum_fmt(r->n, 5, nb, sizeof nb));
        if (r->t0 != r->ts || r->t1 != r->te)
            fprintf(f, " (from %s to %s)", cli_fmt_s(r->t0 - base, b1, sizeof b1), cli_fmt_s(r->t1 - base, b2, sizeof b2));
        fprintf(f, "; sum of CP - 1 = %.1e (bound %.1e)%s; ", r->cp_sum - 1.0, r->err_bound,
                r->sum_ok ? "" : " NOT WITHIN 1e-9");
    } else {
        fprintf(f, "no transient critical path (%s); ",
                r->t1 == r->t0 ? "the window holds a single instant"
                               : "no path from the first instant to the last avoids waiting");
    }
    print_checks(f, r, base);
    if (r->ncycles)
        fprintf(f, "; %llu zero-time message cycle(s) broken", (unsigned long long)r->ncycles);
    fprintf(f, "\n");
    if (!r->has_paths)
        return;
    for (int k = 0; k < LP_SUM_NKINDS; k++)
        if (r->kinds & (1u << k))
            print_table(f, r, &r->sum[k], fmt->top);
}

