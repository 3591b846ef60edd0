/* kbench.c: read kernel traces (lp_ktrace_read) and print what came out, with the CPU
 * time of the read: the driver of bench/kernel/run.sh and a tool to look at traces.
 *
 *   kbench [--dump N] [--match] PATH...   one line per host:
 *     host=NAME events=N cpus=N streams=N reordered=N lost=N bad=N other=N socks=N
 *     threads=N bytes=N cpu_s=S wall_s=S peak_mb=M
 *   then, with --match, the matched packets and the clock of every host, and with
 *   --dump N the first N events of each host.
 */
#include "longpole/import/kernel.h"
#include "longpole/base/diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* distinct thread ids seen as tid, tid2 or ctx_tid (>= 0; the idle thread 0 counts once) */
static uint64_t count_threads(const lp_khost *h)
{
    int32_t *t = malloc((h->nev * 3 + 1) * sizeof *t);
    size_t n = 0;
    if (!t)
        return 0;
    for (uint64_t i = 0; i < h->nev; i++) {
        const lp_kev *e = &h->ev[i];
        int tid_is_thread = e->type <= LP_KEV_STATEDUMP_PROCESS;
        if (tid_is_thread && e->tid >= 0)
            t[n++] = e->tid;
        if ((e->type == LP_KEV_SCHED_SWITCH || e->type == LP_KEV_PROCESS_FORK) && e->tid2 >= 0)
            t[n++] = e->tid2;
        if (e->ctx_tid >= 0)
            t[n++] = e->ctx_tid;
    }
    qsort(t, n, sizeof *t, cmp_i32);
    uint64_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += i == 0 || t[i] != t[i - 1];
    free(t);
    return d;
}

static const char *S(const lp_ktrace *kt, lp_str s) { return s == LP_STR_NONE ? "-" : lp_strtab_get(&kt->strs, s); }

int main(int argc, char **argv)
{
    long dump = 0;
    int match = 0, a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--dump") && a + 1 < argc)
            dump = atol(argv[++a]);
        else if (!strcmp(argv[a], "--match"))
            match = 1;
        else {
            fprintf(stderr, "usage: kbench [--dump N] [--match] PATH...\n");
            return 2;
        }
    }
    if (a >= argc) {
        fprintf(stderr, "usage: kbench [--dump N] [--match] PATH...\n");
        return 2;
    }
    lp_diags ds;
    lp_diags_init(&ds, 20);
    lp_error err;
    lp_ktrace *kt;
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    lp_status st = lp_ktrace_read((const char *const *)argv + a, (size_t)(argc - a), &ds, &kt, &err);
    double w1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t i = 0; i < ds.nkept; i++) {
        char line[1200];
        lp_diag_format(line, sizeof line, &ds.kept[i]);
        fprintf(stderr, "%s\n", line);
    }
    if (st) {
        fprintf(stderr, "kbench: %s\n", err.msg);
        lp_diags_release(&ds);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    for (uint32_t h = 0; h < kt->nhosts; h++) {
        const lp_khost *k = &kt->host[h];
        printf("host=%s events=%llu cpus=%u streams=%u reordered=%llu lost=%llu bad=%llu other=%llu socks=%llu "
               "threads=%llu bytes=%llu cpu_s=%.3f wall_s=%.3f peak_mb=%.0f\n",
               S(kt, k->name), (unsigned long long)k->nev, k->ncpus, k->nstreams, (unsigned long long)k->nreordered,
               (unsigned long long)k->nlost, (unsigned long long)k->nbad, (unsigned long long)k->nother,
               (unsigned long long)k->nsock, (unsigned long long)count_threads(k), (unsigned long long)k->bytes,
               c1 - c0, w1 - w0, (double)ru.ru_maxrss / 1024.0);
    }
    if (match) {
        lp_kmatch m;
        if (lp_kmatch_run(kt, &m, &err)) {
            fprintf(stderr, "kbench: %s\n", err.msg);
        } else {
            printf("packets=%llu unmatched_send=%llu unmatched_recv=%llu\n", (unsigned long long)m.npk,
                   (unsigned long long)m.nunmatched_send, (unsigned long long)m.nunmatched_recv);
            for (uint32_t h = 0; h < kt->nhosts; h++) {
                const lp_kclock *c = &m.clock[h];
                printf("clock host=%s quality=%d via=%u slope=%.16g offset=%.6f slope=[%.16g,%.16g] "
                       "offset=[%.6f,%.6f] packets=%llu hull=%llu\n",
                       S(kt, kt->host[h].name), (int)c->quality, c->via, c->slope, c->offset, c->slope_lo,
                       c->slope_hi, c->offset_lo, c->offset_hi, (unsigned long long)c->npackets,
                       (unsigned long long)c->nhull);
            }
            lp_kmatch_release(&m);
        }
    }
    for (uint32_t h = 0; h < kt->nhosts && dump; h++)
        for (uint64_t i = 0; i < kt->host[h].nev && (long)i < dump; i++) {
            const lp_kev *e = &kt->host[h].ev[i];
            printf("%s %lld cpu=%u %s tid=%d tid2=%d ctx=%d a=%lld b=%lld key=%llx flags=%x name=%s name2=%s\n",
                   S(kt, kt->host[h].name), (long long)e->ts, e->cpu, lp_kev_type_name((lp_kev_type)e->type), e->tid,
                   e->tid2, e->ctx_tid, (long long)e->a, (long long)e->b, (unsigned long long)e->key, e->flags,
                   S(kt, e->name), S(kt, e->name2));
        }
    lp_ktrace_free(kt);
    lp_diags_release(&ds);
    return 0;
}
