/* kbench.c: read kernel traces (lp_ktrace_read) and print what came out, with the CPU
 * time of the read: the driver of bench/kernel/run.sh and a tool to look at traces.
 *
 *   kbench --each PATH...   each path read on its own (freed before the next: memory is
 *     that of the largest), then one line: total hosts=H events=N bytes=B cpu_s=S
 *     wall_s=S peak_mb=M
 *   kbench [--dump N] [--match] PATH...   one line per host:
 *     host=NAME events=N cpus=N streams=N reordered=N lost=N bad=N other=N socks=N
 *     threads=N bytes=N cpu_s=S wall_s=S peak_mb=M
 *   then, with --match, the matched packets and the clock of every host, with
 *   --dump N the first N events of each host, and with --digest one line per host:
 *     digest host=NAME events=N hash=H
 *   a hash of the events ftrace text can carry, field by field as that text keeps them
 *   (the reader round-trip test compares CTF with kgen's ftrace of it).
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

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t fnv_i(uint64_t h, int64_t v) { return fnv(h, &v, sizeof v); }
static uint64_t fnv_s(uint64_t h, const lp_ktrace *kt, lp_str s) { const char *z = S(kt, s); return fnv(h, z, strlen(z) + 1); }

/* The events kgen writes as ftrace text, with what that text keeps of each. */
static void digest(const lp_ktrace *kt, const lp_khost *k)
{
    uint64_t h = 0xcbf29ce484222325ull, n = 0;
    for (uint64_t i = 0; i < k->nev; i++) {
        const lp_kev *e = &k->ev[i];
        uint64_t g = fnv_i(fnv_i(fnv_i(fnv_i(h, e->type), e->ts), e->cpu), e->ctx_tid);
        switch (e->type) {
        case LP_KEV_SCHED_SWITCH:
            g = fnv_s(fnv_s(fnv_i(fnv_i(fnv_i(fnv_i(g, e->tid), e->tid2), e->a & 3), e->a == 0), kt, e->name), kt, e->name2);
            break;
        case LP_KEV_SCHED_WAKING:
        case LP_KEV_SCHED_WAKEUP:
        case LP_KEV_SCHED_WAKEUP_NEW: g = fnv_s(fnv_i(fnv_i(g, e->tid), e->a), kt, e->name); break;
        case LP_KEV_PROCESS_FORK: g = fnv_s(fnv_i(fnv_i(g, e->tid), e->tid2), kt, e->name); break;
        case LP_KEV_PROCESS_EXEC:
        case LP_KEV_PROCESS_EXIT:
        case LP_KEV_PROCESS_FREE: g = fnv_s(fnv_i(g, e->tid), kt, e->name); break;
        case LP_KEV_IRQ_ENTRY: g = fnv_s(fnv_i(g, e->a), kt, e->name); break;
        case LP_KEV_IRQ_EXIT: g = fnv_i(fnv_i(g, e->a), e->b != 0); break;
        case LP_KEV_SOFTIRQ_RAISE:
        case LP_KEV_SOFTIRQ_ENTRY:
        case LP_KEV_SOFTIRQ_EXIT:
        case LP_KEV_IPI_ENTRY:
        case LP_KEV_IPI_EXIT: g = fnv_i(g, e->a); break;
        case LP_KEV_HRTIMER_ENTRY:
        case LP_KEV_HRTIMER_EXIT:
        case LP_KEV_TIMER_ENTRY:
        case LP_KEV_TIMER_EXIT: g = fnv_i(g, (int64_t)e->key); break;
        case LP_KEV_BLOCK_ISSUE:
        case LP_KEV_BLOCK_COMPLETE: g = fnv_i(fnv_i(fnv_i(g, e->a), e->b), e->flags); break;
        case LP_KEV_SYSCALL_ENTRY:
            if (e->name == LP_STR_NONE)
                continue;
            g = fnv_s(g, kt, e->name);
            break;
        case LP_KEV_SYSCALL_EXIT:
            if (e->name == LP_STR_NONE)
                continue;
            g = fnv_i(fnv_s(g, kt, e->name), e->a);
            break;
        default: continue;
        }
        h = g;
        n++;
    }
    printf("digest host=%s events=%llu hash=%016llx\n", S(kt, k->name), (unsigned long long)n, (unsigned long long)h);
}

int main(int argc, char **argv)
{
    long dump = 0;
    int match = 0, dig = 0, each = 0, quick = 0, a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--dump") && a + 1 < argc)
            dump = atol(argv[++a]);
        else if (!strcmp(argv[a], "--match"))
            match = 1;
        else if (!strcmp(argv[a], "--digest"))
            dig = 1;
        else if (!strcmp(argv[a], "--each"))
            each = 1;
        else if (!strcmp(argv[a], "--quick")) /* no thread count (threads=-1) */
            quick = 1;
        else {
            fprintf(stderr, "usage: kbench [--dump N] [--match] [--digest] [--each] [--quick] PATH...\n");
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
    if (each) {
        double cpu = 0, wall = 0;
        uint64_t ev = 0, bytes = 0, hosts = 0;
        for (int i = a; i < argc; i++) {
            double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
            if (lp_ktrace_read((const char *const *)argv + i, 1, &ds, &kt, &err)) {
                fprintf(stderr, "kbench: %s\n", err.msg);
                return 1;
            }
            cpu += now(CLOCK_PROCESS_CPUTIME_ID) - c0;
            wall += now(CLOCK_MONOTONIC) - w0;
            for (uint32_t h = 0; h < kt->nhosts; h++, hosts++) {
                ev += kt->host[h].nev + kt->host[h].ndropped;
                bytes += kt->host[h].bytes;
            }
            lp_ktrace_free(kt);
        }
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("total hosts=%llu events=%llu bytes=%llu cpu_s=%.3f wall_s=%.3f peak_mb=%.0f\n", (unsigned long long)hosts,
               (unsigned long long)ev, (unsigned long long)bytes, cpu, wall, (double)ru.ru_maxrss / 1024.0);
        lp_diags_release(&ds);
        return 0;
    }
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    /* --digest and --dump look at every event (unused ones included) */
    lp_status st = lp_ktrace_read_flags((const char *const *)argv + a, (size_t)(argc - a),
                                        dig || dump ? LP_KREAD_ALL : 0, &ds, &kt, &err);
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
               S(kt, k->name), (unsigned long long)(k->nev + k->ndropped), k->ncpus, k->nstreams, (unsigned long long)k->nreordered,
               (unsigned long long)k->nlost, (unsigned long long)k->nbad, (unsigned long long)k->nother,
               (unsigned long long)k->nsock, quick ? ~0ull : (unsigned long long)count_threads(k), (unsigned long long)k->bytes,
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
    for (uint32_t h = 0; h < kt->nhosts && dig; h++)
        digest(kt, &kt->host[h]);
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
