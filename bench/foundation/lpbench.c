/* lpbench.c: measures liblongpole's phases on one trace file: load (text or binary),
 * PAG build, whole-trace critical path; prints one tab-separated line:
 *   file format records load_s records_per_s rss_bytes bytes_per_record pag_s cp_s edges edges_per_s peak_rss total
 * `records` are input records (activities not made by gap filling, plus messages).
 * RSS is read from /proc/self/status after loading (VmRSS) and at the end (VmHWM).
 *
 * `lpbench --touch MB` instead prints how fast this process can first touch MB of fresh
 * memory (GB/s): the PAG and the path write hundreds of MB of new arrays, and on a VM
 * the first touch of a page the host has taken back can be far slower than the
 * arithmetic, so the benchmark reports it beside the phases. */
#include "longpole/longpole.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--touch") == 0) {
        printf("%.2f\n", touch_rate((size_t)strtoul(argv[2], NULL, 10)));
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: lpbench TRACE\n");
        return 2;
    }
    const char *pm = getenv("LP_PAG_PARALLEL_MIN"); /* e.g. a huge number: the one-thread build */
    if (pm)
        lp_pag_parallel_min = strtoull(pm, NULL, 10);
    long rss0 = status_kb("VmRSS:");
    lp_diags ds;
    lp_diags_init(&ds, 5);
    lp_error err;
    lp_trace *t;
    const char *paths[] = {argv[1]};
    double t0 = now();
    if (lp_trace_load(paths, 1, NULL, &ds, &t, &err)) {
        fprintf(stderr, "lpbench: %s\n", err.msg);
        return 1;
    }
    double t1 = now();
    long rss1 = status_kb("VmRSS:");
    uint64_t records = t->nacts - t->ngaps + t->nmsgs;
    lp_pag g;
    if (lp_pag_build(t, &g, &err)) {
        fprintf(stderr, "lpbench: %s\n", err.msg);
        return 1;
    }
    double t2 = now();
    lp_cpath cp;
    if (lp_cpath_compute(&g, &cp, &err)) {
        fprintf(stderr, "lpbench: %s\n", err.msg);
        return 1;
    }
    double t3 = now();
    uint64_t edges = g.nwedges + g.ncedges;
    long hwm = status_kb("VmHWM:");
    FILE *f = fopen(argv[1], "rb");
    char magic[8] = {0};
    if (f) {
        if (fread(magic, 1, 8, f) != 8)
            magic[0] = 0;
        fclose(f);
    }
    const char *fmt = memcmp(magic, LP_LPTB_MAGIC, 8) == 0 ? "binary" : "text";
    printf("%s\t%s\t%llu\t%.3f\t%.0f\t%ld\t%.1f\t%.3f\t%.3f\t%llu\t%.0f\t%ld\t%lld\n", argv[1], fmt,
           (unsigned long long)records, t1 - t0, (double)records / (t1 - t0), (rss1 - rss0) * 1024L,
           (double)(rss1 - rss0) * 1024.0 / (double)records, t2 - t1, t3 - t2, (unsigned long long)edges,
           (double)edges / (t3 - t1), hwm * 1024L, (long long)cp.total);
    lp_cpath_release(&cp);
    lp_pag_release(&g);
    lp_trace_free(t);
    lp_diags_release(&ds);
    return 0;
}
