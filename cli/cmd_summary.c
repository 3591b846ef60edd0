/* cmd_summary.c: `longpole summary`: SnailTrail's CP-based summaries (activity,
 * straggler, operator, communication; §6) per time window over a trace, with the
 * conventional profile and one random transient critical path beside each, the path
 * count N, the sum-to-one check of CP and the App. A.2 checks per window; text blocks,
 * one compact line per window, or JSON lines (docs/formats/summary-json.md).
 * The printing and the totals over windows are shared with `stream` (cli.h). */
#include "cli.h"
#include "longpole/analysis/snailtrail/window.h"
#include "base/hashmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char cli_help_summary[] =
    "usage: longpole summary [--window D [--slide D]] [OPTIONS] TRACE...\n"
     "\n"
     "Critical participation (SnailTrail §3.2): the trace is cut into windows (snapshots,\n"
     "Def. 5-6: activities and messages straddling a bound are cut); in each, every path\n"
     "from the window's first instant to its last that avoids `waiting` is a transient\n"
     "critical path, and an activity's CP is its share of all of them (Eq. 3), computed by\n"
     "counting paths, never listing them. Per window: the number of paths N, the check\n"
     "that CP sums to 1 (within 1e-9), SnailTrail's four summaries, each beside the\n"
     "conventional profile (summed durations) and one transient path drawn at random\n"
     "(the single-path view of §7.4), and the instrumentation checks (App. A.2).\n"
     "Then the totals over all windows. Details: docs/analyses/critical-participation.md.\n"
     "\n"
     "options:\n"
     "  --window D        window size (ns, or with ns/us/ms/s/m/h); default: the whole\n"
     "                    trace as one window\n"
     "  --slide D         step between window starts (default: the size, tumbling windows)\n"
     "  --by LIST         summaries, comma-separated: activity, worker (straggler),\n"
     "                    operator, comm (sender -> receiver), or all (default)\n"
     "  --top K           rows per summary (default 5; 0 = all; JSON: all unless given)\n"
     "  --compact         one line per window and summary\n"
     "  --json            JSON lines: one object per window, then one with the totals\n"
     "                    (docs/formats/summary-json.md)\n"
     "  --seed N          seed of the random paths (default 1); window k draws from its own\n"
     "                    stream, so results do not depend on --threads\n"
     "  --threads N       analyse windows on N threads (default: one per core)\n"
     "  --from T --to T   analyse [T, T'] only (windows start at --from); T is ns or has a\n"
     "                    unit; +T is T after the trace start\n"
     "  --no-path         do not draw random paths\n"
     "  --no-checks       skip the instrumentation checks\n"
     "  --timing          print each window's analysis time\n"
     "  --format F        force the input format; --strict: stop on input errors;\n"
     "  -q                diagnostics as counts only; --max-errors N: printed in full\n"
     "\n"
     "Operators are ranked by CP per worker (CP divided by the operator's parallelism):\n"
     "an under-provisioned stage stands out even when its workers are balanced. Times in\n"
     "text are after the trace start; JSON has absolute ns.\n";

/* ---- formatting --------------------------------------------------------------------------- */

/* A time or duration in the largest unit (s, ms, us, ns) it reaches, exactly (as many
 * decimals as needed), e.g. "2.25s", "250ms", "45ns", "-1.5us". */
static const char *fmt_s(int64_t ns, char *buf, size_t n)
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

static const char *fmt_pct(double x, char *buf, size_t n)
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
                fmt_s(c->p1_time[0] - base, b1, sizeof b1));
    if (c->np2) {
        char d[32];
        fprintf(f, "%s property 2 broken for %s in %llu interval%s with every worker waiting and nothing in flight"
                   " (first: %s to %s)",
                c->np1 ? ";" : "", fmt_s(c->p2_ns, d, sizeof d), (unsigned long long)c->np2, c->np2 == 1 ? "" : "s",
                fmt_s(c->p2_from[0] - base, b1, sizeof b1), fmt_s(c->p2_to[0] - base, b2, sizeof b2));
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
        const char *l = lp_sumkeys_label(r->keys, s->kind, w->key, lab, sizeof lab);
        if (s->kind == LP_SUM_OPERATOR)
            fprintf(f, "  %-*.*s %8s %7u %9s %8s %8s\n", width, width, l, fmt_pct(w->cp, p1, sizeof p1), w->par,
                    fmt_pct(w->rank, p2, sizeof p2), fmt_pct(w->prof_share, p3, sizeof p3),
                    fmt_pct(w->path_share, p4, sizeof p4));
        else
            fprintf(f, "  %-*.*s %8s %8s %8s\n", width, width, l, fmt_pct(w->cp, p1, sizeof p1),
                    fmt_pct(w->prof_share, p3, sizeof p3), fmt_pct(w->path_share, p4, sizeof p4));
    }
    if (shown < s->n)
        fprintf(f, "  ... %zu more row%s (--top 0 shows all)\n", s->n - shown, s->n - shown == 1 ? "" : "s");
    if (s->kind == LP_SUM_COMM && s->n)
        fprintf(f, "  (messages carry %s of the critical participation)\n", fmt_pct(s->cp_total, p1, sizeof p1));
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
    if (!r->checked) {
        lp_jsonw_null(&j);
    } else {
        const lp_snapcheck *c = &r->check;
        lp_jsonw_obj(&j);
        lp_jsonw_key(&j, "property1");
        lp_jsonw_obj(&j);
        lp_jsonw_ku64(&j, "violations", c->np1);
        lp_jsonw_key(&j, "first");
        lp_jsonw_arr(&j);
        for (uint64_t i = 0; i < c->np1 && i < LP_SNAPCHECK_KEEP; i++) {
            lp_jsonw_obj(&j);
            lp_jsonw_kstr(&j, "worker", lp_trace_worker_name(r->t, c->p1_worker[i]));
            lp_jsonw_ki64(&j, "time", c->p1_time[i]);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
        lp_jsonw_obj_end(&j);
        lp_jsonw_key(&j, "property2");
        lp_jsonw_obj(&j);
        lp_jsonw_ku64(&j, "violations", c->np2);
        lp_jsonw_ki64(&j, "total_ns", c->p2_ns);
        lp_jsonw_key(&j, "first");
        lp_jsonw_arr(&j);
        for (uint64_t i = 0; i < c->np2 && i < LP_SNAPCHECK_KEEP; i++) {
            lp_jsonw_obj(&j);
            lp_jsonw_ki64(&j, "from", c->p2_from[i]);
            lp_jsonw_ki64(&j, "to", c->p2_to[i]);
            lp_jsonw_ku64(&j, "active_workers", c->p2_active[i]);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
        lp_jsonw_obj_end(&j);
        lp_jsonw_obj_end(&j);
    }
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

void cli_winres_print(FILE *f, const lp_winres *r, const cli_sumfmt *fmt)
{
    if (fmt->json) {
        json_window(f, r, fmt);
        return;
    }
    char b1[40], b2[40], nb[64], p[24];
    const int64_t base = fmt->base;
    if (fmt->compact) {
        fprintf(f, "[%s, %s)", fmt_s(r->ts - base, b1, sizeof b1), fmt_s(r->te - base, b2, sizeof b2));
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
                            fmt_pct(s->kind == LP_SUM_OPERATOR ? s->rows[i].rank : s->rows[i].cp, p, sizeof p));
            }
        }
        if (r->checked && (r->check.np1 || r->check.np2))
            fprintf(f, " | checks: P1 %llu, P2 %llu", (unsigned long long)r->check.np1,
                    (unsigned long long)r->check.np2);
        if (r->has_paths && !r->sum_ok)
            fprintf(f, " | CP SUMS TO %.17g", r->cp_sum);
        fprintf(f, "\n");
        return;
    }
    fprintf(f, "\nwindow %llu [%s, %s): %llu events, %u/%u workers, %llu vertices, %llu message edges",
            (unsigned long long)r->index, fmt_s(r->ts - base, b1, sizeof b1), fmt_s(r->te - base, b2, sizeof b2),
            (unsigned long long)r->nevents, r->nactive, r->nworkers, (unsigned long long)r->nv,
            (unsigned long long)r->nin);
    if (fmt->timing)
        fprintf(f, ", analysed in %.3f ms", r->seconds * 1e3);
    fprintf(f, "\n  ");
    if (!r->nv) {
        fprintf(f, "empty window\n");
        return;
    }
    if (r->has_paths) {
        fprintf(f, "transient critical paths: N = %s", lp_xnum_fmt(r->n, 5, nb, sizeof nb));
        if (r->t0 != r->ts || r->t1 != r->te)
            fprintf(f, " (from %s to %s)", fmt_s(r->t0 - base, b1, sizeof b1), fmt_s(r->t1 - base, b2, sizeof b2));
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

/* ---- totals over windows ---------------------------------------------------------------- */

typedef struct tot_row {
    uint64_t key;
    double cp, rank, prof, path; /* sums over windows with paths, weighted by their span */
    uint64_t first;          /* windows where the key ranked first */
} tot_row;

typedef struct tot_map {
    tot_row *rows;           /* in order of first appearance */
    size_t n, cap;
    lp_hmap index;           /* key -> row (the library's hash table) */
} tot_map;

struct cli_sumtotal {
    tot_map map[LP_SUM_NKINDS];
    uint64_t windows, with_paths, sum_bad, p1, p2, events, empty;
    double worst_sum, worst_bound, seconds;
    double wsum;             /* total span of the windows with paths (the weights) */
    const lp_winres *last;   /* for labels: keys of the last window */
    const lp_sumkeys *keys;
    const lp_trace *t;
    unsigned kinds;
    int oom;
};

cli_sumtotal *cli_sumtotal_new(void) { return lp_calloc(1, sizeof(cli_sumtotal)); }

void cli_sumtotal_free(cli_sumtotal *st)
{
    if (!st)
        return;
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        lp_free(st->map[k].rows);
        lp_hmap_release(&st->map[k].index);
    }
    lp_free(st);
}

static tot_row *tot_get(tot_map *m, uint64_t key)
{
    int added;
    uint64_t i = lp_hmap_get_or_put(&m->index, key, m->n, &added);
    if (i == LP_HMAP_EMPTY)
        return NULL;
    if (added) {
        if (m->n == m->cap) {
            size_t cap = m->cap ? 2 * m->cap : 32;
            tot_row *nr = lp_reallocarray(m->rows, cap, sizeof *nr);
            if (!nr) {
                lp_hmap_del(&m->index, key);
                return NULL;
            }
            m->rows = nr;
            m->cap = cap;
        }
        m->rows[m->n++] = (tot_row){key, 0, 0, 0, 0, 0};
    }
    return &m->rows[i];
}

void cli_sumtotal_add(cli_sumtotal *st, const lp_winres *r)
{
    st->windows++;
    st->events += r->nevents;
    st->seconds += r->seconds;
    st->keys = r->keys;
    st->t = r->t;
    st->kinds |= r->kinds;
    if (!r->nv)
        st->empty++;
    if (r->checked) {
        st->p1 += r->check.np1 > 0;
        st->p2 += r->check.np2 > 0;
    }
    if (!r->has_paths)
        return;
    st->with_paths++;
    st->sum_bad += !r->sum_ok;
    double e = fabs(r->cp_sum - 1.0);
    st->worst_sum = e > st->worst_sum ? e : st->worst_sum;
    st->worst_bound = r->err_bound > st->worst_bound ? r->err_bound : st->worst_bound;
    double wt = (double)(r->t1 - r->t0);
    st->wsum += wt;
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        if (!(r->kinds & (1u << k)))
            continue;
        const lp_summary *s = &r->sum[k];
        for (size_t i = 0; i < s->n; i++) {
            tot_row *t = tot_get(&st->map[k], s->rows[i].key);
            if (!t) {
                st->oom = 1;
                return;
            }
            t->cp += wt * s->rows[i].cp;
            t->rank += wt * s->rows[i].rank;
            t->prof += wt * s->rows[i].prof_share;
            t->path += wt * s->rows[i].path_share;
            t->first += i == 0 && s->rows[i].cp > 0;
        }
    }
}

static int cmp_tot(const void *pa, const void *pb)
{
    const tot_row *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank > b->rank ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

void cli_sumtotal_print(FILE *f, cli_sumtotal *st, const cli_sumfmt *fmt)
{
    char lab[160], p1[24], p2[24], p3[24];
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        tot_map *m = &st->map[k];
        size_t nreal = m->n;
        if (k == LP_SUM_WORKER || k == LP_SUM_OPERATOR) { /* as in the windows: comm and "-" last */
            nreal = 0;
            for (size_t i = 0; i < m->n; i++)
                if (m->rows[i].key < LP_SUMKEY_NONE) {
                    tot_row x = m->rows[nreal];
                    m->rows[nreal++] = m->rows[i];
                    m->rows[i] = x;
                }
        }
        if (nreal > 1)
            qsort(m->rows, nreal, sizeof(tot_row), cmp_tot);
        if (m->n - nreal > 1)
            qsort(m->rows + nreal, m->n - nreal, sizeof(tot_row), cmp_tot);
    }
    double nw = st->wsum > 0 ? st->wsum : 1; /* means are weighted by window span */
    if (fmt->json) {
        lp_jsonw j;
        lp_jsonw_init(&j, f, 0);
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "kind", "overall");
        lp_jsonw_ku64(&j, "windows", st->windows);
        lp_jsonw_ku64(&j, "windows_with_paths", st->with_paths);
        lp_jsonw_ku64(&j, "empty_windows", st->empty);
        lp_jsonw_ku64(&j, "cp_sum_failures", st->sum_bad);
        lp_jsonw_kdbl(&j, "worst_cp_sum_error", st->worst_sum);
        lp_jsonw_kdbl(&j, "worst_err_bound", st->worst_bound);
        lp_jsonw_ku64(&j, "property1_windows", st->p1);
        lp_jsonw_ku64(&j, "property2_windows", st->p2);
        lp_jsonw_ku64(&j, "events", st->events);
        if (fmt->timing)
            lp_jsonw_kdbl(&j, "seconds", st->seconds);
        lp_jsonw_key(&j, "summaries");
        lp_jsonw_obj(&j);
        for (int k = 0; k < LP_SUM_NKINDS; k++) {
            if (!(st->kinds & (1u << k)))
                continue;
            lp_jsonw_key(&j, lp_sumkind_name((lp_sumkind)k));
            lp_jsonw_arr(&j);
            size_t shown = fmt->top_json && fmt->top_json < st->map[k].n ? fmt->top_json : st->map[k].n;
            for (size_t i = 0; i < shown; i++) {
                const tot_row *t = &st->map[k].rows[i];
                lp_jsonw_obj(&j);
                lp_jsonw_kstr(&j, "key", lp_sumkeys_label(st->keys, (lp_sumkind)k, t->key, lab, sizeof lab));
                lp_jsonw_kdbl(&j, "mean_cp", t->cp / nw);
                if (k == LP_SUM_OPERATOR)
                    lp_jsonw_kdbl(&j, "mean_cp_per_worker", t->rank / nw);
                lp_jsonw_ku64(&j, "ranked_first", t->first);
                lp_jsonw_kdbl(&j, "mean_profile_share", t->prof / nw);
                lp_jsonw_kdbl(&j, "mean_path_share", t->path / nw);
                lp_jsonw_obj_end(&j);
            }
            lp_jsonw_arr_end(&j);
        }
        lp_jsonw_obj_end(&j);
        lp_jsonw_obj_end(&j);
        lp_jsonw_end(&j);
        return;
    }
    if (fmt->compact && st->windows <= 1)
        return;
    fprintf(f, "\noverall (means weighted by window span): %llu window%s, %llu with transient paths",
            (unsigned long long)st->windows,
            st->windows == 1 ? "" : "s", (unsigned long long)st->with_paths);
    if (st->with_paths)
        fprintf(f, "; CP sums to 1 within 1e-9 in %s (worst error %.1e, bound %.1e)",
                st->sum_bad ? "NOT ALL" : "all", st->worst_sum, st->worst_bound);
    fprintf(f, "; property 1 broken in %llu, property 2 in %llu", (unsigned long long)st->p1,
            (unsigned long long)st->p2);
    if (fmt->timing)
        fprintf(f, "; %llu events analysed in %.3f s (%.1f M events/s)", (unsigned long long)st->events, st->seconds,
                st->seconds > 0 ? (double)st->events / st->seconds / 1e6 : 0);
    fprintf(f, "\n");
    if (!st->with_paths || st->windows <= 1)
        return;
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        if (!(st->kinds & (1u << k)))
            continue;
        const tot_map *m = &st->map[k];
        size_t shown = fmt->top && fmt->top < m->n ? fmt->top : m->n;
        int width = 10;
        for (size_t i = 0; i < shown; i++) {
            int l = (int)strlen(lp_sumkeys_label(st->keys, (lp_sumkind)k, m->rows[i].key, lab, sizeof lab));
            width = l > width ? l : width;
        }
        width = width > 48 ? 48 : width;
        if (k == LP_SUM_OPERATOR)
            fprintf(f, "  %-*s %8s %10s %9s %13s %12s\n", width, "operator", "mean CP", "CP/worker", "1st in",
                    "mean profile", "mean 1 path");
        else
            fprintf(f, "  %-*s %8s %9s %13s %12s\n", width, lp_sumkind_name((lp_sumkind)k), "mean CP", "1st in",
                    "mean profile", "mean 1 path");
        for (size_t i = 0; i < shown; i++) {
            const tot_row *t = &m->rows[i];
            char firstb[48];
            snprintf(firstb, sizeof firstb, "%llu/%llu", (unsigned long long)t->first,
                     (unsigned long long)st->with_paths);
            const char *l = lp_sumkeys_label(st->keys, (lp_sumkind)k, t->key, lab, sizeof lab);
            if (k == LP_SUM_OPERATOR) {
                char p4[24];
                fprintf(f, "  %-*.*s %8s %10s %9s %13s %12s\n", width, width, l, fmt_pct(t->cp / nw, p1, sizeof p1),
                        fmt_pct(t->rank / nw, p4, sizeof p4), firstb, fmt_pct(t->prof / nw, p2, sizeof p2),
                        fmt_pct(t->path / nw, p3, sizeof p3));
            } else {
                fprintf(f, "  %-*.*s %8s %9s %13s %12s\n", width, width, l, fmt_pct(t->cp / nw, p1, sizeof p1), firstb,
                        fmt_pct(t->prof / nw, p2, sizeof p2), fmt_pct(t->path / nw, p3, sizeof p3));
            }
        }
        if (shown < m->n)
            fprintf(f, "  ... %zu more\n", m->n - shown);
    }
}

/* ---- the command --------------------------------------------------------------------------- */

static uint64_t progress_windows; /* windows to analyse: the progress bar (issue 6) */

typedef struct run_ctx {
    cli_sumfmt fmt;
    cli_sumtotal *tot;
} run_ctx;

static int on_window(void *ctx, const lp_winres *r)
{
    run_ctx *rc = ctx;
    cli_winres_print(stdout, r, &rc->fmt);
    cli_progress_beside("windows", r->index + 1, progress_windows); /* issue 6 */
    cli_sumtotal_add(rc->tot, r);
    return ferror(stdout) ? -1 : 0;
}

int cli_parse_kinds(const char *s, unsigned *kinds)
{
    *kinds = 0;
    if (!s || !*s)
        return -1;
    for (const char *p = s;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        lp_sumkind k;
        if (n == 3 && memcmp(p, "all", 3) == 0)
            *kinds |= (1u << LP_SUM_NKINDS) - 1;
        else if (lp_sumkind_parse(p, n, &k) == 0)
            *kinds |= 1u << k;
        else
            return -1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

int cmd_summary(int argc, char **argv)
{
    cli_load lo = {0};
    const char *v, *win_s = NULL, *slide_s = NULL, *from_s = NULL, *to_s = NULL;
    lp_winopts wo = {(1u << LP_SUM_NKINDS) - 1, 1, 0, 0};
    cli_sumfmt fmt;
    memset(&fmt, 0, sizeof fmt);
    fmt.top = 5;
    fmt.seed = 1;
    uint64_t threads = 0, n;
    int top_given = 0;
    char **paths = lp_malloc((size_t)argc * sizeof *paths);
    int npaths = 0;
    if (!paths)
        return LP_EXIT_NOMEM;
#define USAGE(...) return lp_free(paths), cli_usage("summary", __VA_ARGS__)
    for (int i = 1; i < argc; i++) {
        if (cli_flag(argv, i, "--json"))
            fmt.json = 1;
        else if (cli_flag(argv, i, "--compact"))
            fmt.compact = 1;
        else if (cli_flag(argv, i, "--timing"))
            fmt.timing = 1;
        else if (cli_flag(argv, i, "--no-path"))
            wo.no_path = 1;
        else if (cli_flag(argv, i, "--no-checks"))
            wo.no_checks = 1;
        else if (cli_flag(argv, i, "--strict"))
            lo.strict = 1;
        else if (cli_flag(argv, i, "-q") || cli_flag(argv, i, "--quiet"))
            lo.quiet = 1;
        else if (cli_opt(argc, argv, &i, "--window", &win_s)) {
            if (!win_s)
                USAGE("--window needs a duration (e.g. 1s)");
        } else if (cli_opt(argc, argv, &i, "--slide", &slide_s)) {
            if (!slide_s)
                USAGE("--slide needs a duration (e.g. 250ms)");
        } else if (cli_opt(argc, argv, &i, "--from", &from_s)) {
            if (!from_s)
                USAGE("--from needs a time");
        } else if (cli_opt(argc, argv, &i, "--to", &to_s)) {
            if (!to_s)
                USAGE("--to needs a time");
        } else if (cli_opt(argc, argv, &i, "--by", &v)) {
            if (!v || cli_parse_kinds(v, &wo.kinds))
                USAGE("--by takes activity, worker, operator, comm (comma-separated) or all");
        } else if (cli_opt(argc, argv, &i, "--top", &v)) {
            if (!v || cli_parse_count(v, &n))
                USAGE("--top needs a number");
            fmt.top = (size_t)n;
            top_given = 1;
        } else if (cli_opt(argc, argv, &i, "--seed", &v)) {
            if (!v || cli_parse_count(v, &n))
                USAGE("--seed needs a number");
            wo.seed = fmt.seed = n;
        } else if (cli_opt(argc, argv, &i, "--threads", &v)) {
            if (!v || cli_parse_count(v, &threads) || threads == 0 || threads > 256)
                USAGE("--threads takes 1..256");
        } else if (cli_opt(argc, argv, &i, "--format", &lo.format)) {
            if (!lo.format)
                USAGE("--format needs a value");
        } else if (cli_opt(argc, argv, &i, "--max-errors", &v)) {
            if (!v || cli_parse_count(v, &n))
                USAGE("--max-errors needs a number");
            lo.max_diags = (size_t)n;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            USAGE("unknown option '%s'", argv[i]);
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (!npaths)
        USAGE("no trace given");
    int64_t size = 0, step = 0;
    if (win_s && (cli_parse_dur(win_s, &size) || size <= 0))
        USAGE("bad --window '%s' (a positive duration: ns, or a number with ns/us/ms/s/m/h)", win_s);
    if (slide_s && (cli_parse_dur(slide_s, &step) || step <= 0))
        USAGE("bad --slide '%s' (a positive duration)", slide_s);
    if (slide_s && !win_s)
        USAGE("--slide needs --window");
    if (fmt.json && fmt.compact)
        USAGE("--json and --compact exclude each other");
    fmt.top_json = top_given ? fmt.top : 0;
#undef USAGE
    lp_trace *t = NULL;
    int data_errors = 0;
    int rc = cli_load_trace(&lo, paths, npaths, &t, &data_errors);
    lp_free(paths);
    if (rc)
        return rc;
    int64_t from = t->tmin, to = t->tmax;
    if (from_s && cli_parse_time(from_s, t->tmin, &from)) {
        lp_trace_free(t);
        return cli_usage("summary", "bad --from time '%s'", from_s);
    }
    if (to_s && cli_parse_time(to_s, t->tmin, &to)) {
        lp_trace_free(t);
        return cli_usage("summary", "bad --to time '%s'", to_s);
    }
    if (to < from) {
        lp_trace_free(t);
        return cli_usage("summary", "--to (%lld) is before --from (%lld)", (long long)to, (long long)from);
    }
    fmt.base = t->tmin;
    lp_error err;
    lp_error_clear(&err);
    lp_wingrid g;
    if (!win_s) {
        size = to - from > 0 ? to - from : 1;
        step = size;
    } else if (!slide_s) {
        step = size;
    }
    lp_snapsrc src;
    lp_sumkeys keys;
    lp_winpool *pool = NULL;
    run_ctx ctx = {fmt, cli_sumtotal_new()};
    int have_src = 0, have_keys = 0;
    if (!ctx.tot) {
        lp_trace_free(t);
        return LP_EXIT_NOMEM;
    }
    lp_status st = lp_wingrid_make(&g, from, to, size, step, &err);
    progress_windows = st ? 0 : g.n; /* issue 6 */
    if (!st && !(st = lp_snapsrc_init(&src, t, &err)))
        have_src = 1;
    if (!st)
        st = lp_wingrid_plan(&g, &src, &err);
    if (!st && !(st = lp_sumkeys_init(&keys, t, &err)))
        have_keys = 1;
    if (!st)
        st = lp_winpool_new(&pool, (unsigned)threads, &wo, on_window, &ctx, &err);
    if (!st && !fmt.json) {
        char b1[40], b2[40], b3[40];
        printf("trace: %u workers, %llu activities (+%llu gaps), %llu messages, %s long\n", t->nworkers,
               (unsigned long long)(t->nacts - t->ngaps), (unsigned long long)t->ngaps, (unsigned long long)t->nmsgs,
               fmt_s(t->tmax - t->tmin, b1, sizeof b1));
        printf("windows: %llu of %s", (unsigned long long)g.n, fmt_s(size, b2, sizeof b2));
        if (step != size)
            printf(" sliding by %s", fmt_s(step, b3, sizeof b3));
        printf(" from %s; times are after the trace start; CP = critical participation\n",
               fmt_s(from - t->tmin, b1, sizeof b1));
    }
    for (uint64_t k = 0; !st && k < g.n; k++)
        st = lp_winpool_submit(pool, &src, &keys, k, lp_wingrid_ts(&g, k), lp_wingrid_te(&g, k), NULL, &err);
    if (!st)
        st = lp_winpool_finish(pool, &err);
    cli_progress_done(); /* issue 6 */
    if (!st)
        cli_sumtotal_print(stdout, ctx.tot, &ctx.fmt);
    lp_winpool_free(pool);
    if (ctx.tot->sum_bad)
        fprintf(stderr, "longpole summary: warning: in %llu window(s) CP does not sum to 1 within 1e-9 "
                        "(worst error %.3g); please report\n",
                (unsigned long long)ctx.tot->sum_bad, ctx.tot->worst_sum);
    if (ctx.tot->oom && !st)
        st = lp_error_set(&err, LP_ERR_NOMEM, "out of memory adding up the windows");
    cli_sumtotal_free(ctx.tot);
    if (have_keys)
        lp_sumkeys_release(&keys);
    if (have_src)
        lp_snapsrc_release(&src);
    lp_trace_free(t);
    if (st)
        return cli_fail("summary", &err);
    if (fflush(stdout) != 0)
        return LP_EXIT_IO;
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
