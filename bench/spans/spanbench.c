/* spanbench.c: timings of the span pipeline for bench/spans/run.sh.
 *
 *   spanbench cp NTRACES NSPANS [SEED]
 *       generate NTRACES traces of NSPANS spans (gentree.h) straight into a span table,
 *       then time lp_spans_finish (trees), the per-trace critical path of every trace
 *       and its aggregation, and the percentile tables (P50, P95, P99, all).
 *   spanbench file FILE...
 *       time lp_spans_load (read + finish) of the files, then the critical paths and
 *       aggregation, as `longpole spans` does but without printing.
 * Output: one line of key=value pairs (CPU seconds of the process, counts, peak RSS in
 * MB) on stdout.
 */
#include "gentree.h"
#include "longpole/longpole.h"
#include "longpole/model/span.h"
#include "longpole/load/load.h"
#include "longpole/analysis/spans/spancp.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* CPU time of this process (one thread): what one core spent, whatever else runs on
 * the machine */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

static int die(const char *what, const lp_error *err)
{
    fprintf(stderr, "spanbench: %s: %s\n", what, err->msg);
    return 1;
}

/* critical paths and aggregation of a finished table; returns 0 */
static int analyse(const lp_spans *sp, double *tcp, double *tpct, int64_t *check)
{
    lp_error err;
    lp_spancp cp;
    lp_spancp_init(&cp);
    lp_spancp_agg *agg;
    if (lp_spancp_agg_new(&agg, sp, &err))
        return die("aggregation", &err);
    double t0 = now();
    *check = 0;
    for (uint32_t t = 0; t < sp->ntraces; t++) {
        if (lp_spancp_trace(&cp, sp, t, &err) || lp_spancp_agg_add(agg, &cp, &err))
            return die("critical path", &err);
        *check += cp.latency;
    }
    double t1 = now();
    double ps[] = {50, 95, 99, 100};
    lp_spancp_pct *pct;
    if (lp_spancp_agg_percentiles(agg, ps, 4, &pct, &err))
        return die("percentiles", &err);
    double t2 = now();
    *tcp = t1 - t0;
    *tpct = t2 - t1;
    *check += pct[3].npaths;
    lp_spancp_pct_free(pct, 4);
    lp_spancp_agg_free(agg);
    lp_spancp_release(&cp);
    return 0;
}

static int bench_cp(uint64_t ntraces, int nspans, uint64_t seed)
{
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_spans sp;
    lp_spans_init(&sp, &ds);
    lp_error err;
    lp_spans_source(&sp, "generated", &err);
    /* names: service x operation */
    lp_str svc[GT_NSERVICES], ops[GT_NSERVICES][GT_NOPS];
    for (int s = 0; s < GT_NSERVICES; s++) {
        char b[64];
        int k = snprintf(b, sizeof b, "service-%02d", s);
        svc[s] = lp_spans_name(&sp, b, (size_t)k);
        for (int o = 0; o < GT_NOPS; o++) {
            k = snprintf(b, sizeof b, "%s /api/v%d/svc%02d/res%d", gt_verbs[o], 1 + o % 2, s, o);
            ops[s][o] = lp_spans_name(&sp, b, (size_t)k);
        }
    }
    static const uint8_t kinds[] = {LP_SPAN_INTERNAL, LP_SPAN_SERVER, LP_SPAN_CLIENT, LP_SPAN_PRODUCER, LP_SPAN_CONSUMER};
    gt_trace t;
    t.s = malloc(sizeof(gt_span) * (size_t)nspans);
    uint64_t st = seed;
    int64_t t0us = INT64_C(1700000000000000);
    double g0 = now();
    for (uint64_t k = 0; k < ntraces; k++) {
        gt_make(&st, &t, nspans, t0us);
        t0us += gt_range(&st, 100, 5000);
        char tid[33];
        snprintf(tid, sizeof tid, "%016llx%016llx", (unsigned long long)t.hi, (unsigned long long)t.lo);
        lp_span_rec r;
        memset(&r, 0, sizeof r);
        r.idtext = LP_STR_NONE;
        if (lp_spans_trace(&sp, tid, 32, &r.trace, &err))
            return die("generating", &err);
        for (int i = 0; i < t.n; i++) {
            const gt_span *x = &t.s[i];
            r.id = x->id;
            r.pid = x->parent >= 0 ? t.s[x->parent].id : 0;
            r.flags = (uint16_t)((x->parent >= 0 ? LP_SPAN_HAS_PARENT : 0) | (x->follows ? LP_SPAN_FOLLOWS : 0));
            r.service = svc[x->service];
            r.op = ops[x->service][x->op];
            r.start = x->start * 1000;
            r.dur = x->dur * 1000;
            r.kind = kinds[x->kind];
            r.line = (uint64_t)i + 1;
            if (lp_spans_add(&sp, &r, &err))
                return die("generating", &err);
        }
    }
    double g1 = now();
    if (lp_spans_finish(&sp, &err))
        return die("finish", &err);
    double g2 = now();
    double tcp, tpct;
    int64_t check;
    if (analyse(&sp, &tcp, &tpct, &check))
        return 1;
    printf("traces=%llu spans=%zu generate_s=%.3f finish_s=%.3f cp_agg_s=%.3f percentiles_s=%.3f total_s=%.3f "
           "rss_mb=%ld check=%lld\n",
           (unsigned long long)ntraces, sp.n, g1 - g0, g2 - g1, tcp, tpct, (g2 - g1) + tcp + tpct, rss_mb(),
           (long long)check);
    free(t.s);
    lp_spans_release(&sp);
    lp_diags_release(&ds);
    return 0;
}

static int bench_file(const char *const *paths, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_spans sp;
    lp_spans_init(&sp, &ds);
    lp_error err;
    double t0 = now();
    if (lp_spans_load(&sp, paths, n, NULL, NULL, &err))
        return die("load", &err);
    double t1 = now();
    double tcp, tpct;
    int64_t check;
    if (analyse(&sp, &tcp, &tpct, &check))
        return 1;
    printf("files=%zu traces=%zu spans=%zu load_s=%.3f cp_agg_s=%.3f percentiles_s=%.3f errors=%llu rss_mb=%ld check=%lld\n",
           n, sp.ntraces, sp.n, t1 - t0, tcp, tpct, (unsigned long long)ds.nerrors, rss_mb(), (long long)check);
    lp_spans_release(&sp);
    lp_diags_release(&ds);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "cp") == 0)
        return bench_cp(strtoull(argv[2], NULL, 10), atoi(argv[3]), argc > 4 ? strtoull(argv[4], NULL, 10) : 1);
    if (argc >= 3 && strcmp(argv[1], "file") == 0)
        return bench_file((const char *const *)argv + 2, (size_t)argc - 2);
    fprintf(stderr, "usage: spanbench cp NTRACES NSPANS [SEED] | spanbench file FILE...\n");
    return 2;
}
