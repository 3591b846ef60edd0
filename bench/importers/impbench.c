/* impbench.c: time one import (lp_trace_load with a forced format, as `longpole
 * convert --format F` loads) for bench/importers/run.sh.
 *
 * usage: impbench FORMAT FILE
 * Prints one line of key=value: wall and CPU seconds of the load, input bytes (the
 * file's size; inputs are uncompressed), activities (gaps not counted), gaps, messages,
 * workers, the sum of the activities' durations (a checksum the Python baseline
 * reproduces), diagnostics (errors, warnings) and the peak resident set in MB.
 */
#include "longpole/longpole.h"

#include <stdio.h>
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
    if (argc != 3) {
        fprintf(stderr, "usage: impbench FORMAT FILE\n");
        return 2;
    }
    struct stat sb;
    if (stat(argv[2], &sb) != 0) {
        perror(argv[2]);
        return 1;
    }
    lp_diags ds;
    lp_diags_init(&ds, 0);
    lp_load_opts o = {0};
    o.format = argv[1];
    lp_error err;
    lp_trace *t;
    const char *paths[1] = {argv[2]};
    double c0 = cpu(), w0 = now();
    lp_status st = lp_trace_load(paths, 1, &o, &ds, &t, &err);
    double w1 = now(), c1 = cpu();
    if (st) {
        fprintf(stderr, "impbench: %s\n", err.msg);
        return 1;
    }
    int64_t sum = 0;
    for (uint64_t a = 0; a < t->nacts; a++)
        if (!(t->aflags[a] & LP_ACT_GAP))
            sum += t->aend[a] - t->astart[a];
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("wall=%.3f cpu=%.3f bytes=%lld activities=%llu gaps=%llu messages=%llu workers=%u duration_sum=%lld "
           "errors=%llu warnings=%llu peak_mb=%.0f\n",
           w1 - w0, c1 - c0, (long long)sb.st_size, (unsigned long long)(t->nacts - t->ngaps),
           (unsigned long long)t->ngaps, (unsigned long long)t->nmsgs, t->nworkers, (long long)sum,
           (unsigned long long)ds.nerrors, (unsigned long long)ds.nwarnings, (double)ru.ru_maxrss / 1024.0);
    lp_trace_free(t);
    lp_diags_release(&ds);
    return 0;
}
