/* g10bench.c: the speed of a Grade10 analysis (bench/grade10/run.sh, issue 15): a
 * synthetic run of SECONDS one-second steps, each of 16 concurrent tasks of 16 parts
 * (Compute, Read, Write, Send, in turn) on one host: 273 phase instances per second, so
 * an hour is 982,800 instances; 10 consumable metrics sampled every second (100 slices
 * of 10 ms per window) and GC pauses as a blocking resource. Timed: building the phase
 * instances from OperationLog events (in memory), attributing every metric, and
 * finding and replaying the issues (bottleneck per resource, imbalance per type).
 *
 * usage: g10bench SECONDS [--mode slices|events] [--threads N] [--reps N] [--python FILE] [--issues]
 * Prints one line of key=value: sizes, the best CPU and wall seconds of each stage over
 * --reps runs (CPU time of the process: with --threads 1 it is the work itself), peak
 * RSS, the fewest minor page faults of a run's attribution and issues (fresh memory touched),
 * and per metric the attributed total (a checksum the Python baseline must match).
 * --issues prints every issue candidate of the last run (kind, resource or type, leaves
 * changed, time saved, replayed makespan) and per resource the sums of the phases' usage
 * and bottlenecked time, on stderr: a checksum of the attribution and the replays.
 * --python FILE writes the leaf phases, rules, blocked slices and windows in the simple
 * text form bench/grade10/baseline.py reads.
 */
#include "longpole/import/grade10.h"
#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/exec.h"
#include "longpole/analysis/grade10/attrib.h"
#include "longpole/analysis/grade10/issues.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NMET 10
#define SLICE 10000000LL
#define SEC 1000000000LL

static const char *const metric[NMET] = {"cpu", "mem", "disk.r", "disk.w", "net.rx", "net.tx", "gpu", "pcie", "llc", "ib"};
static const double capacity[NMET] = {16, 2e10, 5e8, 5e8, 1.25e9, 1.25e9, 4, 1.6e10, 1e11, 1e10};

static const char model_text[] =
    "grade10-model 1\n"
    "slice 10ms\n"
    "phase /Step sequential step\n"
    "phase /Step/Task concurrent task serial\n"
    "phase /Step/Task/Compute concurrent part\n"
    "phase /Step/Task/Read concurrent part\n"
    "phase /Step/Task/Write concurrent part\n"
    "phase /Step/Task/Send concurrent part\n"
    "resource cpu consumable metric=cpu sample=counter capacity=16\n"
    "resource mem consumable metric=mem sample=counter capacity=2e10\n"
    "resource disk.r consumable metric=disk.r sample=counter capacity=5e8\n"
    "resource disk.w consumable metric=disk.w sample=counter capacity=5e8\n"
    "resource net.rx consumable metric=net.rx sample=counter capacity=1.25e9\n"
    "resource net.tx consumable metric=net.tx sample=counter capacity=1.25e9\n"
    "resource gpu consumable metric=gpu sample=mean capacity=4\n"
    "resource pcie consumable metric=pcie sample=counter capacity=1.6e10\n"
    "resource llc consumable metric=llc sample=counter capacity=1e11\n"
    "resource ib consumable metric=ib sample=counter capacity=1e10\n"
    "resource gc blocking\n"
    "default consumable none\n"
    "rule /**/Compute cpu exact 1\nrule /**/Compute mem variable 1\nrule /**/Compute gpu exact 0.25\n"
    "rule /**/Compute llc variable 1\nrule /**/Compute pcie variable 1\nrule /**/Compute gc full\n"
    "rule /**/Read disk.r variable 1\nrule /**/Read cpu variable 0.2\nrule /**/Read mem variable 0.5\n"
    "rule /**/Read net.rx variable 0.2\n"
    "rule /**/Write disk.w variable 1\nrule /**/Write cpu variable 0.2\nrule /**/Write mem variable 0.5\n"
    "rule /**/Send net.tx variable 1\nrule /**/Send ib variable 1\nrule /**/Send cpu variable 0.1\n"
    "rule /**/Send net.rx variable 1\n";
static const char *const leaf_names[4] = {"Compute", "Read", "Write", "Send"};

static uint64_t rng = 12345;
static uint64_t next_u64(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double next_unit(void) { return (double)(next_u64() >> 11) / 9007199254740992.0; }

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static long minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}
static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const lp_error *err)
{
    fprintf(stderr, "g10bench: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

/* One event with tags step, task, part (part < 0: none). */
static void event(lp_g10_data *d, int64_t t, int kind, lp_str phase, const lp_str *keys, const lp_str *vals, int nk)
{
    lp_str kv[6];
    lp_error err;
    for (int i = 0; i < nk; i++)
        kv[2 * i] = keys[i], kv[2 * i + 1] = vals[i];
    lp_g10_event e = {t, (uint8_t)kind, phase, 0, 0, 0};
    if (lp_g10_data_tags(d, kv, (uint32_t)nk, &e.tags, &err) ||
        lp_grow_at(&d->ev, &d->capev, d->nev + 1, sizeof *d->ev))
        die("events", &err);
    d->ev[d->nev++] = e;
}

static lp_str num(lp_g10_data *d, long v)
{
    char b[24];
    lp_str s;
    snprintf(b, sizeof b, "%ld", v);
    lp_strtab_intern(&d->strs, b, strlen(b), &s);
    return s;
}

/* The synthetic run: leaf events, monitoring, GC pauses. */
static void generate(lp_g10_data *d, long seconds, FILE *py)
{
    lp_str keys[3], names[4], host;
    lp_strtab_intern(&d->strs, "step", 4, &keys[0]);
    lp_strtab_intern(&d->strs, "task", 4, &keys[1]);
    lp_strtab_intern(&d->strs, "part", 4, &keys[2]);
    lp_strtab_intern(&d->strs, "h", 1, &host);
    for (int i = 0; i < 4; i++)
        lp_strtab_intern(&d->strs, leaf_names[i], strlen(leaf_names[i]), &names[i]);
    lp_str tasknum[16], partnum[16];
    for (int i = 0; i < 16; i++)
        tasknum[i] = num(d, i), partnum[i] = num(d, i);
    for (long s = 0; s < seconds; s++) {
        lp_str vals[3] = {num(d, s), 0, 0};
        for (int k = 0; k < 16; k++) {
            vals[1] = tasknum[k];
            int64_t t = s * SEC + (int64_t)(next_u64() % 6) * SLICE;
            for (int p = 0; p < 16; p++) {
                int64_t dur = (1 + (int64_t)(next_u64() % 5)) * SLICE;
                vals[2] = partnum[p];
                event(d, t, LP_G10_EV_START, names[p % 4], keys, vals, 3);
                event(d, t + dur, LP_G10_EV_END, names[p % 4], keys, vals, 3);
                if (py)
                    fprintf(py, "phase %d %lld %lld\n", p % 4, (long long)(t / SLICE), (long long)((t + dur) / SLICE));
                t += dur;
            }
        }
    }
    /* monitoring: one sample per second per metric (gpu a mean, the rest counters) */
    lp_error err;
    for (int r = 0; r < NMET; r++) {
        double v = 0;
        for (long sec = 0; sec <= seconds; sec++) {
            double rate = capacity[r] * 1.05 * next_unit(); /* up to 5 % above capacity: some clipping */
            if (sec) {
                v = r == 6 ? rate : v + rate;
                if (py)
                    fprintf(py, "win %d %lld %lld %.17g\n", r, (long long)((sec - 1) * 100), (long long)(sec * 100), rate);
            }
            if (lp_g10_data_sample(d, "h", metric[r], sec * SEC, v, 0, &err))
                die("monitoring", &err);
        }
    }
    /* GC pauses: one every 4 s on average, 20-80 ms, slice-aligned */
    lp_str gc;
    lp_strtab_intern(&d->strs, "gc", 2, &gc);
    for (int64_t t = 0; t < seconds * SEC;) {
        t += (int64_t)(next_u64() % 800) * SLICE;
        int64_t len = (2 + (int64_t)(next_u64() % 7)) * SLICE;
        lp_g10_block b = {t, t + len, host, gc, 0, 0, 0};
        if (lp_grow_at(&d->blk, &d->capblk, d->nblk + 1, sizeof *d->blk))
            die("blocks", NULL);
        d->blk[d->nblk++] = b;
        if (py)
            fprintf(py, "blk %lld %lld\n", (long long)(t / SLICE), (long long)((t + len) / SLICE));
        t += len;
    }
}

typedef struct stage {
    double cpu, wall;
} stage;

static void best(stage *b, double c, double w)
{
    if (b->cpu == 0 || c < b->cpu)
        b->cpu = c;
    if (b->wall == 0 || w < b->wall)
        b->wall = w;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: g10bench SECONDS [--mode slices|events] [--threads N] [--reps N] [--python FILE] [--issues]\n");
        return 2;
    }
    long seconds = atol(argv[1]);
    int mode = LP_G10_SLICES, reps = 3;
    unsigned threads = 1;
    const char *pyfile = NULL;
    int show = 0;
    for (int i = 2; i < argc; i += 2) {
        if (!strcmp(argv[i], "--issues")) {
            show = 1, i--;
            continue;
        }
        if (i + 1 >= argc)
            break;
        if (!strcmp(argv[i], "--mode"))
            mode = strcmp(argv[i + 1], "events") == 0 ? LP_G10_EVENTS : LP_G10_SLICES;
        else if (!strcmp(argv[i], "--threads"))
            threads = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--python"))
            pyfile = argv[i + 1];
    }
    lp_error err;
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_g10_model *m = NULL;
    if (lp_g10_model_parse(&m, model_text, sizeof model_text - 1, "bench.g10", &ds, &err))
        die("model", &err);
    lp_g10_data d;
    if (lp_g10_data_init(&d, &err))
        die("data", &err);
    FILE *py = pyfile ? fopen(pyfile, "w") : NULL;
    if (py) {
        fprintf(py, "slices %ld metrics %d\n", seconds * 100, NMET);
        for (int r = 0; r < NMET; r++)
            fprintf(py, "cap %d %.17g\n", r, capacity[r]);
        for (uint32_t t = 0; t < m->ntypes; t++)
            for (int li = 0; li < 4; li++)
                if (strcmp(lp_g10_model_str(m, m->type[t].name), leaf_names[li]) == 0)
                    for (uint32_t r = 0; r < NMET; r++) {
                        uint8_t k;
                        double v = lp_g10_rule_of(m, t, r, capacity[r], &k);
                        if (k == LP_G10_RULE_EXACT || k == LP_G10_RULE_VARIABLE)
                            fprintf(py, "rule %d %u %s %.17g\n", li, r, k == LP_G10_RULE_EXACT ? "exact" : "variable", v);
                        if (m->rkind[(size_t)t * m->nres + NMET] == LP_G10_RULE_FULL && r == 0)
                            fprintf(py, "blocked %d\n", li);
                    }
    }
    generate(&d, seconds, py);
    if (py)
        fclose(py);
    stage sx = {0, 0}, sa = {0, 0}, si = {0, 0};
    long fa = -1, fi = -1; /* the fewest minor page faults of a rep's attribution, issues */
    double sums[NMET] = {0};
    uint64_t n = 0, leaves = 0, slices = 0, issues = 0;
    for (int rep = 0; rep < reps; rep++) {
        lp_g10_exec *x = NULL;
        lp_g10_attr *a = NULL;
        lp_g10_issues is;
        double c0 = cpu_s(), w0 = wall_s();
        if (lp_g10_exec_from_events(m, &d, &ds, &x, &err))
            die("phases", &err);
        double c1 = cpu_s(), w1 = wall_s();
        long f1 = minflt();
        lp_g10_opts o = {mode, 0, threads};
        if (lp_g10_attribute(m, x, &d, &o, &ds, &a, &err))
            die("attribution", &err);
        double c2 = cpu_s(), w2 = wall_s();
        long f2 = minflt();
        if (lp_g10_issues_find(a, -1, &is, &err))
            die("issues", &err);
        double c3 = cpu_s(), w3 = wall_s();
        long f3 = minflt();
        if (fa < 0 || f2 - f1 < fa)
            fa = f2 - f1;
        if (fi < 0 || f3 - f2 < fi)
            fi = f3 - f2;
        best(&sx, c1 - c0, w1 - w0);
        best(&sa, c2 - c1, w2 - w1);
        best(&si, c3 - c2, w3 - w2);
        n = x->n, leaves = x->nleaves, issues = is.n;
        slices = 0;
        for (uint32_t k = 0; k < a->ntl; k++) {
            sums[a->tl[k].res] = a->tl[k].attributed;
            if (a->tl[k].nseg > slices)
                slices = a->tl[k].nseg;
        }
        for (size_t i = 0; show && rep == reps - 1 && i < is.n; i++)
            fprintf(stderr, "issue kind=%d res=%d type=%d phases=%llu instances=%llu saved_ns=%lld makespan=%lld gain_ns=%lld\n",
                    is.v[i].kind, (int)is.v[i].res, (int)is.v[i].type, (unsigned long long)is.v[i].phases,
                    (unsigned long long)is.v[i].instances, (long long)is.v[i].saved_ns, (long long)is.v[i].makespan,
                    (long long)is.v[i].gain_ns);
        for (uint32_t r = 0; show && rep == reps - 1 && r < m->nres; r++) {
            double used = 0;
            long long bn = 0;
            for (size_t i = 0; i < a->nuse[r]; i++)
                used += a->use[r][i].used, bn += a->use[r][i].bn_ns;
            fprintf(stderr, "uses res=%u n=%zu used=%.17g bn_ns=%lld\n", r, a->nuse[r], used, bn);
        }
        lp_g10_issues_release(&is);
        lp_g10_attr_free(a);
        lp_g10_exec_free(x);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("seconds=%ld instances=%llu leaves=%llu events=%zu segments=%llu metrics=%d issues=%llu mode=%s threads=%u "
           "phases_cpu=%.3f phases_wall=%.3f attrib_cpu=%.3f attrib_wall=%.3f issues_cpu=%.3f issues_wall=%.3f "
           "target_cpu=%.3f target_wall=%.3f attrib_flt=%ld issues_flt=%ld rss_mb=%ld",
           seconds, (unsigned long long)n, (unsigned long long)leaves, d.nev, (unsigned long long)slices, NMET,
           (unsigned long long)issues, mode == LP_G10_EVENTS ? "events" : "slices", threads, sx.cpu, sx.wall, sa.cpu,
           sa.wall, si.cpu, si.wall, sa.cpu + si.cpu, sa.wall + si.wall, fa, fi, ru.ru_maxrss / 1024);
    for (int r = 0; r < NMET; r++)
        printf(" sum_%d=%.10g", r, sums[r]);
    printf("\n");
    lp_g10_data_release(&d);
    lp_g10_model_free(m);
    lp_diags_release(&ds);
    return 0;
}
