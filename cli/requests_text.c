/* requests_text.c: the text output of `longpole requests` (reqout.h): what was analysed,
 * then the Mystery Machine's figures as tables, one function per section: critical path
 * vs summed delay (Figure 5), shares of each request's path (Figure 6) and slack
 * (Figure 8) per category, segments by critical-path time, outliers against the rest,
 * the what-if of natural variation (Figure 10), strata (Figure 7), and every request. */
#include "reqout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *reqout_dur(double ns, char *buf, size_t n)
{
    if (!isfinite(ns))
        return "-";
    return lp_fmt_dur((int64_t)llround(ns), buf, n);
}

/* --request ID: every segment of one request, its slack, the path. */
void requests_text_request(const lp_reqpath *p, const lp_causal *m, const lp_reqlog *rl, uint64_t r,
                           const lp_reqcat *cat)
{
    char lab[1024], b1[32], b2[32], b3[32], b4[32];
    printf("request %s: latency %s, critical path %s, %u segments, %u edges after reduction, %u model violation%s\n",
           lp_reqlog_str(rl, rl->req_name[r]), reqout_dur((double)p->latency, b1, sizeof b1), reqout_dur((double)p->cp, b2, sizeof b2),
           p->n, p->edges, p->violations, p->violations == 1 ? "" : "s");
    printf("  %-40s %-10s %12s %12s %12s %12s  %s\n", "segment", "category", "start", "duration", "slack",
           "cp start", "on path");
    for (uint32_t i = 0; i < p->n; i++) {
        const char *c = p->seg[i] != LP_CAUSAL_NONE ? cat->name[cat->of_seg[p->seg[i]]] : "?";
        printf("  %-40s %-10s %12s %12s %12s %12s  %s\n",
               p->seg[i] != LP_CAUSAL_NONE ? lp_causal_label(m, p->seg[i], lab, sizeof lab) : "?", c,
               reqout_dur((double)(p->start[i] - p->first), b1, sizeof b1), reqout_dur((double)p->dur[i], b2, sizeof b2),
               reqout_dur((double)p->slack[i], b3, sizeof b3), reqout_dur((double)p->cpstart[i], b4, sizeof b4),
               p->oncp[i] ? "*" : "");
    }
    printf("  critical path:");
    for (uint32_t k = 0; k < p->npath; k++)
        printf("%s%s", k ? " > " : " ", lp_causal_label(m, p->seg[p->path[k]], lab, sizeof lab));
    printf("\n");
}

/* What was analysed, latency and the mean critical path; 0 when nothing was. */
static int print_head(const reqout *rx)
{
    const lp_reqstats *S = rx->S;
    const lp_causal *m = rx->m;
    char b1[32], b2[32], b3[32], b4[32];
    printf("requests: %llu analysed, %llu excluded for input errors; model %s: %u segments from %llu requests\n",
           (unsigned long long)S->analysed, (unsigned long long)S->excluded, rx->model ? rx->model : "(inferred)", m->nseg,
           (unsigned long long)m->nreq);
    if (S->analysed == 0) {
        printf("no request to analyse\n");
        return 0;
    }
    printf("latency: mean %s, p50 %s, p90 %s, p99 %s\n", reqout_dur(S->latency_mean, b1, sizeof b1),
           reqout_dur(S->latency_q[50], b2, sizeof b2), reqout_dur(S->latency_q[90], b3, sizeof b3),
           reqout_dur(S->latency_q[99], b4, sizeof b4));
    printf("critical path: mean %s (%.1f%% of mean latency); model relationships contradicted: %llu; segment "
           "occurrences unknown to the model: %llu; clock skew %s\n",
           reqout_dur(S->cp_mean, b1, sizeof b1), S->latency_mean > 0 ? 100.0 * S->cp_mean / S->latency_mean : 0.0,
           (unsigned long long)S->violations, (unsigned long long)S->unknown,
           rx->no_skew ? "not corrected" : "corrected");
    return 1;
}

/* Per category: Figure 5 (means), Figure 6 (shares of the path), Figure 8 (slack). */
static void print_categories(const reqout *rx)
{
    const lp_reqstats *S = rx->S;
    const lp_reqcat *cat = rx->cat;
    uint32_t C = S->ncat;
    double n = rx->n;
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    printf("\ncritical path vs summed delay, mean per request (Figure 5):\n");
    printf("  %-16s %12s %8s %12s %8s %10s\n", "category", "cp", "cp %", "summed", "summed %", "requests");
    for (uint32_t c = 0; c < C; c++) {
        const lp_reqstats_cat *pc = &S->cat[c];
        printf("  %-16s %12s %7.1f%% %12s %7.1f%% %10llu\n", cat->name[c], reqout_dur((double)pc->cp_sum / n, b1, sizeof b1),
               rx->cp_total ? 100.0 * (double)pc->cp_sum / (double)rx->cp_total : 0.0,
               reqout_dur((double)pc->dur_sum / n, b2, sizeof b2),
               rx->dur_total ? 100.0 * (double)pc->dur_sum / (double)rx->dur_total : 0.0, (unsigned long long)pc->present);
    }
    printf("\nshare of each request's critical path (Figure 6), quantiles over requests:\n");
    printf("  %-16s %7s %7s %7s %7s %7s %7s\n", "category", "p10", "p25", "p50", "p75", "p90", "p99");
    for (uint32_t c = 0; c < C; c++) {
        const double *q = S->cat[c].share_q;
        printf("  %-16s %6.1f%% %6.1f%% %6.1f%% %6.1f%% %6.1f%% %6.1f%%\n", cat->name[c], 100 * q[10], 100 * q[25],
               100 * q[50], 100 * q[75], 100 * q[90], 100 * q[99]);
    }
    printf("\nslack per request (Figure 8: the slack of the category's last-ending segment), quantiles:\n");
    printf("  %-16s %10s %10s %10s %10s %10s\n", "category", "p10", "p25", "p50", "p75", "p90");
    for (uint32_t c = 0; c < C; c++) {
        const double *q = S->cat[c].slack_q;
        printf("  %-16s %10s %10s %10s %10s %10s\n", cat->name[c], reqout_dur(q[10], b1, sizeof b1), reqout_dur(q[25], b2, sizeof b2),
               reqout_dur(q[50], b3, sizeof b3), reqout_dur(q[75], b4, sizeof b4), reqout_dur(q[90], b5, sizeof b5));
    }
}

/* Segments by critical-path time (mean per request). */
static lp_status print_segments(const reqout *rx, lp_error *err)
{
    const lp_reqstats *S = rx->S;
    const lp_causal *m = rx->m;
    const lp_reqcat *cat = rx->cat;
    double n = rx->n;
    char b1[32], b2[32], b3[32], lab[1024];
    /* segments by critical-path time */
    uint32_t *ord = lp_malloc((S->nseg ? S->nseg : 1) * sizeof *ord);
    if (!ord)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    uint32_t no = 0;
    for (uint32_t s = 0; s < S->nseg; s++)
        if (S->seg[s].present)
            ord[no++] = s;
    for (uint32_t i = 1; i < no; i++) {
        uint32_t y = ord[i], k = i;
        while (k > 0 && (S->seg[ord[k - 1]].cp_sum < S->seg[y].cp_sum ||
                         (S->seg[ord[k - 1]].cp_sum == S->seg[y].cp_sum && ord[k - 1] > y))) {
            ord[k] = ord[k - 1];
            k--;
        }
        ord[k] = y;
    }
    printf("\nsegments by critical-path time (mean per request):\n");
    printf("  %-40s %-10s %8s %12s %12s %12s\n", "segment", "category", "on cp", "cp", "summed", "slack mean");
    for (uint32_t k = 0; k < no && k < rx->top; k++) {
        const lp_reqstats_seg *g = &S->seg[ord[k]];
        printf("  %-40s %-10s %7.1f%% %12s %12s %12s\n", lp_causal_label(m, ord[k], lab, sizeof lab),
               cat->name[cat->of_seg[ord[k]]], g->present ? 100.0 * (double)g->oncp / (double)g->present : 0.0,
               reqout_dur((double)g->cp_sum / n, b1, sizeof b1), reqout_dur((double)g->dur_sum / n, b2, sizeof b2),
               reqout_dur(g->present ? (double)g->slack_sum / (double)g->present : NAN, b3, sizeof b3));
    }
    lp_free(ord);
    return LP_OK;
}

/* The slowest requests against the rest: segments by over-representation on their paths. */
static void print_outliers(const reqout *rx)
{
    const lp_reqstats *S = rx->S;
    const lp_causal *m = rx->m;
    char b1[32], lab[1024];
    uint64_t rest = S->analysed - S->noutliers;
    int64_t tout = 0, tall = 0;
    for (uint32_t s = 0; s < S->nseg; s++)
        tout += S->seg[s].cp_out, tall += S->seg[s].cp_sum;
    printf("\noutliers: the slowest %.3g%% (%llu requests, latency >= %s) against the rest; segments by\n"
           "over-representation on their critical paths (share of the outliers' cp time minus the rest's):\n",
           100 * rx->share, (unsigned long long)S->noutliers, reqout_dur((double)S->outlier_latency, b1, sizeof b1));
    printf("  %-40s %9s %9s %9s %9s %9s %9s\n", "segment", "cp% out", "cp% rest", "oncp out", "oncp rest",
           "seen out", "seen rest");
    for (uint32_t k = 0; k < S->nranked && k < (rx->top < 10 ? rx->top : 10); k++) {
        uint32_t s = S->ranked[k];
        const lp_reqstats_seg *g = &S->seg[s];
        printf("  %-40s %8.2f%% %8.2f%% %8.1f%% %8.1f%% %8.1f%% %8.1f%%\n", lp_causal_label(m, s, lab, sizeof lab),
               tout ? 100.0 * (double)g->cp_out / (double)tout : 0.0,
               tall - tout ? 100.0 * (double)(g->cp_sum - g->cp_out) / (double)(tall - tout) : 0.0,
               S->noutliers ? 100.0 * (double)g->oncp_out / (double)S->noutliers : 0.0,
               rest ? 100.0 * (double)(g->oncp - g->oncp_out) / (double)rest : 0.0,
               S->noutliers ? 100.0 * (double)g->present_out / (double)S->noutliers : 0.0,
               rest ? 100.0 * (double)(g->present - g->present_out) / (double)rest : 0.0);
    }
}

/* Figure 10: per category and slack bucket, the correlation of its time with latency. */
static void print_whatif(const reqout *rx)
{
    const lp_reqstats *S = rx->S;
    const lp_reqcat *cat = rx->cat;
    uint32_t C = S->ncat;
    char b1[32], b2[32], b3[32], b4[32];
    printf("\nwhat-if from natural variation (Figure 10): per category, requests in %llu equal buckets by\n"
           "the category's slack; r = correlation of the category's summed time with latency:\n",
           (unsigned long long)rx->buckets);
    for (uint32_t c = 0; c < C; c++) {
        const lp_reqstats_cat *pc = &S->cat[c];
        if (!pc->nbuckets)
            continue;
        printf("  %s:", cat->name[c]);
        printf("\n    %-8s %-23s %9s %7s %12s %12s\n", "bucket", "slack", "requests", "r", "time", "latency");
        for (uint32_t b = 0; b < pc->nbuckets; b++) {
            const lp_reqstats_bucket *bk = &pc->buckets[b];
            char range[64], rb[16];
            snprintf(range, sizeof range, "%s..%s", reqout_dur((double)bk->slack_lo, b1, sizeof b1),
                     reqout_dur((double)bk->slack_hi, b2, sizeof b2));
            if (isnan(bk->r))
                snprintf(rb, sizeof rb, "-");
            else
                snprintf(rb, sizeof rb, "%.3f", bk->r);
            printf("    %-8u %-23s %9llu %7s %12s %12s\n", b + 1, range, (unsigned long long)bk->n, rb,
                   reqout_dur(bk->x_mean, b3, sizeof b3), reqout_dur(bk->latency_mean, b4, sizeof b4));
        }
    }
}

/* Figure 7: the mean critical path per category in each stratum. */
static void print_strata(const reqout *rx)
{
    const lp_reqstats *S = rx->S;
    const lp_reqcat *cat = rx->cat;
    uint32_t C = S->ncat;
    double n = rx->n;
    char b1[32], b2[32], b3[32];
    for (uint32_t i = 0; i < S->nstrat; i++) {
        const lp_reqstats_strat *st = &S->strat[i];
        printf("\nstrata by %s (Figure 7): mean critical path per category\n", st->name);
        printf("  %-24s %9s %7s %12s %12s", "value", "requests", "share", "latency", "cp");
        for (uint32_t c = 0; c < C; c++)
            printf(" %12.12s", cat->name[c]);
        printf("\n");
        for (uint32_t k = 0; k < st->nvals; k++) {
            const lp_reqstats_stratum *sv = &st->vals[k];
            printf("  %-24s %9llu %6.1f%% %12s %12s", sv->label, (unsigned long long)sv->n, 100.0 * (double)sv->n / n,
                   reqout_dur(sv->latency_mean, b1, sizeof b1), reqout_dur(sv->cp_mean, b2, sizeof b2));
            for (uint32_t c = 0; c < C; c++)
                printf(" %12s", reqout_dur(sv->cat_cp_mean[c], b3, sizeof b3));
            printf("\n");
        }
        if (st->missing)
            printf("  (%llu requests without a value)\n", (unsigned long long)st->missing);
    }
}

/* --per-request: every request's latency, critical path and path. */
static lp_status print_requests(const reqout *rx, lp_error *err)
{
    const lp_causal *m = rx->m;
    const lp_reqlog *rl = rx->rl;
    char lab[1024];
    printf("\nper request: id, latency, critical path, path\n");
    for (uint64_t r = 0; r < rl->nreqs; r++) {
        if (rl->rbad[r])
            continue;
        if (lp_reqpath_compute(rx->p, m, rl, rx->map, r, err))
            return err->status;
        printf("%s %lld %lld", lp_reqlog_str(rl, rl->req_name[r]), (long long)rx->p->latency, (long long)rx->p->cp);
        for (uint32_t k = 0; k < rx->p->npath; k++)
            printf("%s%s", k ? " > " : " ", lp_causal_label(m, rx->p->seg[rx->p->path[k]], lab, sizeof lab));
        printf("\n");
    }
    return LP_OK;
}

lp_status requests_text(const reqout *rx, lp_error *err)
{
    lp_status st;
    if (!print_head(rx))
        return LP_OK;
    print_categories(rx);
    if ((st = print_segments(rx, err)))
        return st;
    print_outliers(rx);
    print_whatif(rx);
    print_strata(rx);
    return rx->per_request ? print_requests(rx, err) : LP_OK;
}
