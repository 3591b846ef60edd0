/* rlbench.c: times loading one request log (lp_reqlog_load: the chunked CSV/TSV/JSONL
 * reader, the merge of its shards, grouping by request and the per-request checks),
 * in wall and CPU seconds (getrusage: the fair figure on a shared machine), and prints
 * one tab-separated line:
 *   file bytes records threads wall_s cpu_s mb_per_cpu_s peak_rss_bytes bytes_per_record parse_cpu_s
 *   parse_mb_per_cpu_s
 * cpu_s is the whole load's; parse_cpu_s the line parsers' alone (the shards' thread
 * CPU clocks: the CSV reader), so parse_mb_per_cpu_s is the reader's MB/s per core.
 * `rlbench FILE [THREADS [SHARD_MB]]`: THREADS 0 = one per CPU (the default), SHARD_MB
 * the shard size (0 = the reader's default). MB are 10^6 bytes. */
#include "longpole/longpole.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: rlbench LOG [THREADS [SHARD_MB]]\n");
        return 2;
    }
    struct stat sb;
    if (stat(argv[1], &sb)) {
        perror(argv[1]);
        return 1;
    }
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    o.threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    o.shard_bytes = argc > 3 ? (size_t)strtoull(argv[3], NULL, 10) << 20 : 0;
    lp_diags ds;
    lp_diags_init(&ds, 5);
    lp_error err;
    lp_error_clear(&err);
    lp_reqlog *rl;
    const char *paths[] = {argv[1]};
    double c0 = cpu(), t0 = now();
    if (lp_reqlog_load(paths, 1, &o, &ds, &rl, &err)) {
        fprintf(stderr, "rlbench: %s\n", err.msg);
        return 1;
    }
    double wall = now() - t0, c = cpu() - c0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long long peak = (long long)ru.ru_maxrss * 1024;
    double pc = (double)rl->parse_cpu_ns / 1e9;
    printf("%s\t%lld\t%llu\t%u\t%.3f\t%.3f\t%.0f\t%lld\t%.1f\t%.3f\t%.0f\n", argv[1], (long long)sb.st_size,
           (unsigned long long)rl->nrows, o.threads, wall, c, (double)sb.st_size / 1e6 / (c > 0 ? c : 1e-9), peak,
           rl->nrows ? (double)peak / (double)rl->nrows : 0.0, pc, (double)sb.st_size / 1e6 / (pc > 0 ? pc : 1e-9));
    lp_reqlog_free(rl);
    lp_diags_release(&ds);
    return 0;
}
