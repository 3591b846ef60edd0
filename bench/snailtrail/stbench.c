/* stbench.c: SnailTrail Table 2 in process: load one trace (timed: the parse share),
 * cut it into tumbling snapshots of a given size and analyse each alone on one thread,
 * timing every phase (snapshot build, path counting and CP, the random path, the four
 * summaries, the checks). Prints one tab-separated line:
 *   size_s windows median_events median_analyse_s p90_analyse_s max_analyse_s
 *   build_s count_s sample_s summarise_s check_s load_s total_events index_s
 * (index_s: lp_snapsrc_init and lp_sumkeys_init, once per trace). Times are wall
 * clock, or the thread's CPU time with STBENCH_CPU=1 (the loader's second thread is
 * then not counted).
 * (phases are medians over windows; "events" are SnailTrail's: activity starts and
 * ends and message sends and receives, gap activities excluded). Windows are those
 * of [start, start + span) where span is the trace length rounded down to a multiple of
 * the size (partial windows at the end are left out, as SnailTrail's are). */
#include "longpole/longpole.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Wall time, or this thread's CPU time with STBENCH_CPU=1 (steadier on a busy machine). */
static clockid_t clk = CLOCK_MONOTONIC;
static double now(void)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_d);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: stbench TRACE SIZE_NS [SIZE_NS...]\n");
        return 2;
    }
    if (getenv("STBENCH_CPU"))
        clk = CLOCK_THREAD_CPUTIME_ID;
    lp_diags ds;
    lp_diags_init(&ds, 5);
    lp_error err;
    lp_trace *t;
    const char *paths[] = {argv[1]};
    double t0 = now();
    if (lp_trace_load(paths, 1, NULL, &ds, &t, &err)) {
        fprintf(stderr, "stbench: %s\n", err.msg);
        return 1;
    }
    double load_s = now() - t0;
    uint64_t total_events = 2 * (t->nacts - t->ngaps) + 2 * t->nmsgs;
    lp_snapsrc src;
    lp_sumkeys keys;
    double i0 = now();
    if (lp_snapsrc_init(&src, t, &err)) {
        fprintf(stderr, "stbench: %s\n", err.msg);
        return 1;
    }
    double i1 = now();
    if (lp_sumkeys_init(&keys, t, &err)) {
        fprintf(stderr, "stbench: %s\n", err.msg);
        return 1;
    }
    double index_s = now() - i0;
    if (getenv("STBENCH_VERBOSE"))
        fprintf(stderr, "index: sources %.4f s, keys %.4f s\n", i1 - i0, now() - i1);
    for (int a = 2; a < argc; a++) {
        int64_t size = strtoll(argv[a], NULL, 10);
        if (size <= 0)
            continue;
        int64_t span = (t->tmax - t->tmin) / size * size;
        if (span == 0)
            span = size;
        lp_wingrid g;
        if (lp_wingrid_make(&g, t->tmin, t->tmin + span, size, size, &err) ||
            lp_wingrid_plan(&g, &src, &err)) {
            fprintf(stderr, "stbench: %s\n", err.msg);
            return 1;
        }
        size_t n = (size_t)g.n;
        double *ph[6];
        for (int k = 0; k < 6; k++)
            ph[k] = calloc(n, sizeof(double));
        double *ev = calloc(n, sizeof(double));
        lp_winws ws;
        lp_winws_init(&ws);
        lp_winres r;
        lp_winres_init(&r);
        lp_winopts o = {(1u << LP_SUM_NKINDS) - 1, 1, 0, 0};
        for (size_t k = 0; k < n; k++) {
            int64_t ts = lp_wingrid_ts(&g, k), te = lp_wingrid_te(&g, k);
            double a0 = now();
            if (lp_snapshot_build(&ws.snap, &src, ts, te, &err))
                return 1;
            double a1 = now();
            if (lp_cpm_compute(&ws.cpm, &ws.snap, &err))
                return 1;
            double a2 = now();
            uint64_t rng = lp_rng_seed(1, k);
            if (lp_cpm_sample(&ws.cpm, &rng, &ws.path, &err))
                return 1;
            double a3 = now();
            if (lp_summary_compute(r.sum, o.kinds, &ws.sbuf, &keys, &ws.snap, &ws.cpm, &ws.path, &err))
                return 1;
            double a4 = now();
            if (lp_snapshot_check(&ws.snap, &ws.cbuf, &r.check, &err))
                return 1;
            double a5 = now();
            ph[0][k] = a5 - a0;
            ph[1][k] = a1 - a0;
            ph[2][k] = a2 - a1;
            ph[3][k] = a3 - a2;
            ph[4][k] = a4 - a3;
            ph[5][k] = a5 - a4;
            ev[k] = (double)ws.snap.nevents;
            if (ws.cpm.has_paths && (ws.cpm.sum < 1 - 1e-9 || ws.cpm.sum > 1 + 1e-9)) {
                fprintf(stderr, "stbench: window %zu: CP sums to %.17g\n", k, ws.cpm.sum);
                return 1;
            }
        }
        double med_total = pct(ph[0], n, 0.5), p90 = pct(ph[0], n, 0.9), mx = pct(ph[0], n, 1.0);
        printf("%.0f\t%zu\t%.0f\t%.6f\t%.6f\t%.6f", (double)size / 1e9, n, pct(ev, n, 0.5), med_total, p90, mx);
        for (int k = 1; k < 6; k++)
            printf("\t%.6f", pct(ph[k], n, 0.5));
        printf("\t%.6f\t%llu\t%.6f\n", load_s, (unsigned long long)total_events, index_s);
        fflush(stdout);
        if (getenv("STBENCH_VERBOSE")) {
            FILE *f = fopen("/proc/self/smaps_rollup", "r");
            char line[256];
            while (f && fgets(line, sizeof line, f))
                if (strncmp(line, "Rss:", 4) == 0 || strncmp(line, "AnonHugePages:", 14) == 0)
                    fprintf(stderr, "size %lld s: %s", (long long)(size / 1000000000), line);
            if (f)
                fclose(f);
        }
        for (int k = 0; k < 6; k++)
            free(ph[k]);
        free(ev);
        lp_winres_release(&r);
        lp_winws_release(&ws);
    }
    if (getenv("STBENCH_VERBOSE")) {
        FILE *f = fopen("/proc/self/smaps_rollup", "r");
        char line[256];
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "Rss:", 4) == 0 || strncmp(line, "AnonHugePages:", 14) == 0)
                fputs(line, stderr);
        if (f)
            fclose(f);
    }
    lp_sumkeys_release(&keys);
    lp_snapsrc_release(&src);
    lp_trace_free(t);
    lp_diags_release(&ds);
    return 0;
}
