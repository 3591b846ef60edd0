/* kquery.c: the thread critical-path query, stage by stage, for bench/kernel/run.sh
 * (issue 13's "first and subsequent query"):
 *
 *   kquery THREAD INDEX PATH...
 *     if INDEX does not exist (first query): read (lp_ktrace_read), match packets and
 *     synchronise clocks (lp_kmatch_run), build the graph (lp_kgraph_build), write the
 *     index, then the query; else (subsequent query): fingerprint the traces, map and
 *     check the index (lp_kindex_open_info: trusting its verification stamp, or every
 *     byte when KQUERY_VERIFY=1 is in the environment, as `cp --verify`), then the query. The query: find the thread,
 *     its bounded path, its breakdown. One line:
 *       stage=first|subsequent events=N read_s= match_s= build_s= write_s= fp_s= open_s=
 *       query_s= total_s= cpu_s= peak_mb= workers= vertices= links= elements= stamped=0|1
 *     (times are wall seconds of each stage; cpu_s the process's user + sys).
 */
#include "longpole/import/kernel.h"
#include "longpole/analysis/kernel/kgraph.h"
#include "longpole/analysis/kernel/kcpath.h"
#include "longpole/analysis/kernel/kindex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int die(const char *what, const lp_error *err)
{
    fprintf(stderr, "kquery: %s: %s\n", what, err->msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: kquery THREAD INDEX PATH...\n");
        return 2;
    }
    const char *thread = argv[1], *index = argv[2];
    const char *const *paths = (const char *const *)argv + 3;
    size_t npaths = (size_t)(argc - 3);
    lp_error err;
    lp_diags ds;
    lp_diags_init(&ds, 0);
    struct stat sb;
    int first = stat(index, &sb) != 0;
    double t0 = now(), t_read = 0, t_match = 0, t_build = 0, t_write = 0, t_fp = 0, t_open = 0;
    uint64_t nev = 0;
    lp_kgraph *g = NULL;
    lp_kindex_fp fp;
    lp_kindex_info info = {0, 0};
    double t = now();
    if (lp_kindex_fingerprint(paths, npaths, &fp, &err))
        return die("fingerprint", &err);
    t_fp = now() - t;
    if (first) {
        lp_ktrace *kt;
        lp_kmatch m;
        t = now();
        if (lp_ktrace_read(paths, npaths, &ds, &kt, &err))
            return die("read", &err);
        t_read = now() - t, t = now();
        for (uint32_t h = 0; h < kt->nhosts; h++)
            nev += kt->host[h].nev + kt->host[h].ndropped;
        if (lp_kmatch_run(kt, &m, &err))
            return die("match", &err);
        t_match = now() - t, t = now();
        if (lp_kgraph_build(kt, &m, NULL, &ds, &g, &err))
            return die("build", &err);
        t_build = now() - t;
        lp_kmatch_release(&m);
        lp_ktrace_free(kt);
        t = now();
        if (lp_kindex_write(g, &fp, index, &err))
            return die("write", &err);
        t_write = now() - t;
    } else {
        const char *vy = getenv("KQUERY_VERIFY");
        lp_kindex_expect ex = {&fp, -1, 0, vy && strcmp(vy, "1") == 0};
        lp_kindex_verdict v;
        t = now();
        if (lp_kindex_open_info(index, &ex, &g, &v, &info, &err))
            return die("open", &err);
        t_open = now() - t;
        nev = g->st.nevents;
    }
    lp_kindex_fp_release(&fp);
    t = now();
    uint32_t w;
    lp_kcp cp;
    lp_kcp_breakdown bd;
    if (lp_kgraph_find_thread(g, thread, NULL, &w, &err))
        return die("thread", &err);
    if (lp_kcp_compute(g, w, LP_KCP_LIFETIME_START, LP_KCP_LIFETIME_END, LP_KCP_BOUNDED, &cp, &err))
        return die("path", &err);
    if (lp_kcp_breakdown_compute(g, &cp, &bd, &err))
        return die("breakdown", &err);
    double t_query = now() - t, total = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec * 1e-6;
    printf("stage=%s events=%llu read_s=%.3f match_s=%.3f build_s=%.3f write_s=%.3f fp_s=%.4f open_s=%.4f "
           "query_s=%.4f total_s=%.4f cpu_s=%.3f peak_mb=%.0f workers=%u vertices=%u links=%u elements=%zu stamped=%d\n",
           first ? "first" : "subsequent", (unsigned long long)nev, t_read, t_match, t_build, t_write, t_fp, t_open,
           t_query, total, cpu, (double)ru.ru_maxrss / 1024.0, g->nworkers, g->nv, g->nlinks, cp.n, info.stamped);
    lp_kcp_breakdown_release(&bd);
    lp_kcp_release(&cp);
    lp_kgraph_free(g);
    lp_diags_release(&ds);
    return 0;
}
