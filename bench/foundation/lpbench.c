/* lpbench.c: measures liblongpole's phases on one trace file, as `longpole cp` runs
 * them: load (text or binary), the whole-trace critical path straight from the trace's
 * columns (lp_cpath_trace), the three breakdowns; prints one tab-separated line:
 *   file format records load_s records_per_s rss_bytes bytes_per_record path_s breakdown_s
 *   peak_rss total_ns cpu_s
 * `records` are input records (activities not made by gap filling, plus messages).
 * RSS is read from /proc/self/status after loading (VmRSS) and at the end (VmHWM);
 * cpu_s is the process's user + system time (getrusage), the fair figure on a shared
 * machine. With LPBENCH_PAG=1 the path is computed over the PAG instead (lp_pag_build +
 * lp_cpath_compute: the form `cp` used before issue 17), for comparison.
 *
 * `lpbench --touch MB` instead prints how fast this process can first touch MB of fresh
 * memory (GB/s): on a VM the first touch of a page the host has taken back can be far
 * slower than the arithmetic, so the benchmark reports it beside the phases.
 * `lpbench --scan MB` prints the warm scan rate (GB/s): MB of memory already touched,
 * read again (the best of 5 passes), the speed of memory this process can count on. */
#include "longpole/longpole.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0)
            v = strtol(line + n + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

/* First touch of mb MiB of fresh memory, in GB/s. */
static double touch_rate(size_t mb)
{
    size_t n = mb << 20;
    volatile char *p = malloc(n);
    if (!p)
        return 0;
    double t0 = now();
    for (size_t i = 0; i < n; i += 4096)
        p[i] = 1;
    double t = now() - t0;
    free((void *)p);
    return (double)n / 1e9 / (t > 0 ? t : 1e-9);
}

/* A warm scan of mb MiB (touched first, then read 5 times), in GB/s (the best pass). */
static double scan_rate(size_t mb)
{
    size_t n = (mb << 20) / sizeof(uint64_t);
    uint64_t *p = malloc(n * sizeof *p);
    if (!p)
        return 0;
    for (size_t i = 0; i < n; i++)
        p[i] = i;
    double best = 0;
    volatile uint64_t sink = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (size_t i = 0; i + 3 < n; i += 4)
            s0 += p[i], s1 += p[i + 1], s2 += p[i + 2], s3 += p[i + 3];
        double t = now() - t0;
        sink += s0 + s1 + s2 + s3;
        double rate = (double)(n * sizeof *p) / 1e9 / (t > 0 ? t : 1e-9);
        best = rate > best ? rate : best;
    }
    (void)sink;
    free(p);
    return best;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static int fail(const lp_error *err)
{
    fprintf(stderr, "lpbench: %s\n", err->msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--touch") == 0) {
        printf("%.2f\n", touch_rate((size_t)strtoul(argv[2], NULL, 10)));
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "--scan") == 0) {
        printf("%.1f\n", scan_rate((size_t)strtoul(argv[2], NULL, 10)));
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: lpbench TRACE | --touch MB | --scan MB\n");
        return 2;
    }
    const char *pag = getenv("LPBENCH_PAG");
    long rss0 = status_kb("VmRSS:");
    lp_diags ds;
    lp_diags_init(&ds, 5);
    lp_error err;
    lp_trace *t;
    const char *paths[] = {argv[1]};
    double t0 = now();
    if (lp_trace_load(paths, 1, NULL, &ds, &t, &err))
        return fail(&err);
    double t1 = now();
    long rss1 = status_kb("VmRSS:");
    uint64_t records = t->nacts - t->ngaps + t->nmsgs;
    lp_cpath cp;
    if (pag && strcmp(pag, "1") == 0) {
        lp_pag g;
        if (lp_pag_build(t, &g, &err))
            return fail(&err);
        lp_status st = lp_cpath_compute(&g, &cp, &err);
        lp_pag_release(&g);
        if (st)
            return fail(&err);
    } else if (lp_cpath_trace(t, &cp, &err)) {
        return fail(&err);
    }
    double t2 = now();
    static const int all[3] = {1, 1, 1};
    lp_breakdown bd[3];
    if (lp_breakdown_compute_set(t, &cp, all, bd, &err))
        return fail(&err);
    double t3 = now();
    long hwm = status_kb("VmHWM:");
    FILE *f = fopen(argv[1], "rb");
    char magic[8] = {0};
    if (f) {
        if (fread(magic, 1, 8, f) != 8)
            magic[0] = 0;
        fclose(f);
    }
    const char *fmt = memcmp(magic, LP_LPTB_MAGIC, 8) == 0 ? "binary" : "text";
    printf("%s\t%s\t%llu\t%.3f\t%.0f\t%ld\t%.1f\t%.3f\t%.3f\t%ld\t%lld\t%.3f\n", argv[1], fmt,
           (unsigned long long)records, t1 - t0, (double)records / (t1 - t0), (rss1 - rss0) * 1024L,
           (double)(rss1 - rss0) * 1024.0 / (double)records, t2 - t1, t3 - t2, hwm * 1024L, (long long)cp.total,
           cpu_s());
    for (int k = 0; k < 3; k++)
        lp_breakdown_release(&bd[k]);
    lp_cpath_release(&cp);
    lp_trace_free(t);
    lp_diags_release(&ds);
    return 0;
}
