/* test_whatif.c: CrystalPerf's what-if (src/analysis/crystalperf/whatif*.c).
 * Known answers: one task on one slot replays to T; a fully CPU-bound task at half the
 * speed takes 2T; the paper's Flink arithmetic (§7.3: 1583.63 ms, v = 0.1513, 25 % CPU
 * share -> 2302 ms; 2322.5 ms, v = 0.8505 -> 8248 ms, within 1 ms); Alg. 2's split of
 * I/O time; the memory roofline; the warm-up factor. The DAG of a small recorded job
 * (coordinator and a pool) replays to its recorded runtime, also Sparklens-style (no
 * vectors), and so do the Spark logs of ../shared/data (skipped without it). Shared
 * devices: a saturated one is shared by the tasks running at once (k'/k), one that was not
 * keeps its time until the new bandwidth shared by k' tasks is the bound. And a naive twin: a plain time-stepped event loop against the
 * heap-based replay on thousands of random DAGs, every start equal. */
#include "t.h"
#include "tutil.h"
#include "longpole/analysis/crystalperf/whatif.h"

#include <math.h>
#include <stdio.h>

static lp_wi_node task(int64_t start, int64_t dur, uint32_t pool, double vcpu, double vdisk, double vnet)
{
    lp_wi_node n;
    memset(&n, 0, sizeof n);
    n.start = start, n.dur = dur, n.pool = pool, n.kind = LP_WI_TASK;
    n.v[LP_RES_CPU] = vcpu, n.v[LP_RES_DISK] = vdisk, n.v[LP_RES_NET] = vnet;
    n.v[LP_RES_UNKNOWN] = 1 - vcpu - vdisk - vnet;
    return n;
}

static void test_formulas(void)
{
    lp_wi_config c;
    memset(&c, 0, sizeof c);
    /* Flink, 25 % CPU share: s/s' = 4 */
    lp_wi_node f1 = task(0, 1583630000, 0, 0.1513, 0, 0), f2 = task(0, 2322500000, 0, 0.8505, 0, 0);
    c.cpu_speed = 0.25;
    CHECK(fabs(lp_wi_task_time(&f1, &c) / 1e6 - 2302) <= 1);
    CHECK(fabs(lp_wi_task_time(&f2, &c) / 1e6 - 8248) <= 1);
    /* fully CPU-bound at half the speed: 2T */
    lp_wi_node cpu = task(0, 1000000000, 0, 1, 0, 0);
    c.cpu_speed = 0.5;
    CHECK(fabs(lp_wi_task_time(&cpu, &c) - 2e9) < 1);
    /* Alg. 2: 1 s, half of it disk at 100 MB/s, twice the bandwidth: the buffer
     * processing (50e6 / 65536 buffers x 2 us = 1.526 ms) stays, the transfer halves */
    memset(&c, 0, sizeof c);
    lp_wi_node io = task(0, 1000000000, 0, 0, 0.5, 0);
    c.disk_ratio = 2, c.disk_bw = 100e6, c.buf_bytes = 65536, c.buf_ns = 2000;
    double tp = 50e6 / 65536 * 2000, want = 0.5e9 + tp + (0.5e9 - tp) / 2;
    CHECK(fabs(lp_wi_task_time(&io, &c) - want) < 1);
    CHECK(fabs(want / 1e6 - 750.763) < 0.001);
    /* without the recorded bandwidth the whole I/O time scales */
    c.disk_bw = 0;
    CHECK(fabs(lp_wi_task_time(&io, &c) - 0.75e9) < 1);
    /* network ratio leaves disk time alone */
    memset(&c, 0, sizeof c);
    c.net_ratio = 4;
    CHECK(fabs(lp_wi_task_time(&io, &c) - 1e9) < 1);
    /* a Sparklens-style replay scales nothing */
    c.no_vectors = 1, c.cpu_speed = 0.1;
    CHECK(fabs(lp_wi_task_time(&cpu, &c) - 1e9) < 1);
    /* the reversed roofline: 100 s with 4 GB, data 6 GB, 10 ns per byte that does not fit */
    CHECK(fabs(lp_wi_memory(100e9, 4e9, 8e9, 6e9, 10) - 80e9) < 1);
    CHECK(fabs(lp_wi_memory(100e9, 4e9, 2e9, 6e9, 10) - 120e9) < 1);
    CHECK(fabs(lp_wi_memory(100e9, 4e9, 6e9, 6e9, 10) - 80e9) < 1);
}

/* A DAG of given nodes (in start order), pools and edges. */
static void dag_of(lp_wi_dag *d, lp_wi_node *nodes, size_t n, uint32_t npools, uint32_t *slots, uint8_t *seq,
                   double *warm, lp_wi_edge *e, size_t ne)
{
    memset(d, 0, sizeof *d);
    d->node = nodes, d->n = n, d->npools = npools, d->slots = slots, d->seq = seq, d->warmup = warm;
    d->edge = e, d->ne = ne;
    d->t0 = n ? nodes[0].start : 0;
    d->t1 = d->t0;
    for (size_t i = 0; i < n; i++)
        if (nodes[i].start + nodes[i].dur > d->t1)
            d->t1 = nodes[i].start + nodes[i].dur;
}

static void test_replay_kat(void)
{
    lp_error err;
    lp_wi_result r;
    uint32_t slots[1] = {1};
    uint8_t seq[1] = {0};
    double warm[1] = {1};
    /* one task on one slot replays to T */
    lp_wi_node one[1] = {task(100, 5000, 0, 1, 0, 0)};
    lp_wi_dag d;
    dag_of(&d, one, 1, 1, slots, seq, warm, NULL, 0);
    lp_wi_config c;
    memset(&c, 0, sizeof c);
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
    CHECK_EQ_I(r.makespan, 5000);
    CHECK_EQ_I(r.recorded, 5000);
    c.cpu_speed = 0.5; /* fully CPU-bound, half the speed: 2T */
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
    CHECK_EQ_I(r.makespan, 10000);
    /* warm-up: 2 slots, the first wave takes 200, the later tasks 100: w = 2 is what the
     * DAG builder fits; with 4 slots the later two join the first wave (x w): 200 */
    lp_wi_node four[4] = {task(0, 200, 0, 1, 0, 0), task(0, 200, 0, 1, 0, 0), task(0, 100, 0, 1, 0, 0),
                          task(0, 100, 0, 1, 0, 0)}; /* all queued at 0 */
    four[0].first_wave = four[1].first_wave = 1;
    uint32_t s2[1] = {2};
    double w2[1] = {2};
    dag_of(&d, four, 4, 1, s2, seq, w2, NULL, 0);
    d.t1 = 300;
    memset(&c, 0, sizeof c);
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
    CHECK_EQ_I(r.makespan, 300);
    c.slots = 4;
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
    CHECK_EQ_I(r.makespan, 200);
    c.slots = 1; /* one slot: the first task keeps its warm-up, the others are later tasks */
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
    CHECK_EQ_I(r.makespan, 200 + 100 + 100 + 100);
    c.no_warmup = 1;
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
    CHECK_EQ_I(r.makespan, 600);
    /* a dependency cycle is an error, not a number */
    lp_wi_node two[2] = {task(0, 10, 0, 1, 0, 0), task(0, 10, 0, 1, 0, 0)};
    lp_wi_edge cyc[2] = {{0, 1, 1, 0, 0}, {1, 0, 1, 0, 0}};
    dag_of(&d, two, 2, 1, s2, seq, warm, cyc, 2);
    memset(&c, 0, sizeof c);
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_ERR_DATA);
}

/* A shared device: two network tasks of 1 s on a pool of 2 slots, side by side (k = 2),
 * each sent 0.5 MB over a 1 MB/s link: the link was saturated, each had half of it. */
static void test_sharing(void)
{
    lp_wi_node nd = task(0, 1000000000, 0, 0, 0, 1);
    nd.net_bytes = 0.5e6, nd.conc = 2, nd.rec_slots = 2;
    nd.net_rate = 1e6; /* the pool's tasks together: 1 MB over 1 s */
    lp_wi_config c;
    memset(&c, 0, sizeof c);
    c.net_bw = 1e6;
    CHECK(fabs(lp_wi_task_time(&nd, &c) - 1e9) < 1); /* slots unchanged: as recorded */
    c.slots = 1; /* alone on the link: the transfer in half the time; buffer processing stays */
    double tp = (1e9 * 1e-9 * 1e6 / 65536) * 2000;
    CHECK(fabs(lp_wi_task_time(&nd, &c) - (tp + (1e9 - tp) * 0.5)) < 1);
    c.slots = 4; /* k' = 4: twice as long */
    CHECK(fabs(lp_wi_task_time(&nd, &c) - (tp + (1e9 - tp) * 2)) < 1);
    c.net_ratio = 2, c.slots = 1; /* twice the bandwidth and alone: a quarter */
    CHECK(fabs(lp_wi_task_time(&nd, &c) - (tp + (1e9 - tp) * 0.25)) < 1);
    c.net_ratio = 0;
    c.no_sharing = 1; /* the paper's Alg. 1 alone */
    CHECK(fabs(lp_wi_task_time(&nd, &c) - 1e9) < 1);
    c.no_sharing = 0;
    c.net_bw = 0; /* recorded bandwidth unknown: no sharing */
    CHECK(fabs(lp_wi_task_time(&nd, &c) - 1e9) < 1);
    c.net_bw = 1e6;
    nd.net_bytes = 0.3e6, nd.net_rate = 0.6e6; /* 0.6 MB/s together: below 80 %, not saturated, no sharing */
    CHECK(fabs(lp_wi_task_time(&nd, &c) - 1e9) < 1);
    c.slots = 0, c.net_ratio = 0.8; /* not saturated: 2 x 0.3 MB over 0.8 MB/s is 0.75 s < 1 s: unchanged */
    CHECK(fabs(lp_wi_task_time(&nd, &c) - 1e9) < 1);
    c.net_ratio = 0.5; /* over 0.5 MB/s the bandwidth is the bound: 2 x 0.3 / 0.5 = 1.2 s */
    CHECK(fabs(lp_wi_task_time(&nd, &c) - 1.2e9) < 1);
    c.slots = 1; /* alone at 0.5 MB/s: 0.6 s, under its recorded 1 s */
    CHECK(fabs(lp_wi_task_time(&nd, &c) - 1e9) < 1);
    c.slots = 4, c.net_ratio = 0; /* four at once at 1 MB/s: 1.2 s */
    CHECK(fabs(lp_wi_task_time(&nd, &c) - 1.2e9) < 1);
    c.no_sharing = 1, c.net_ratio = 0.5; /* the paper's Alg. 2: transfer x2 */
    CHECK(fabs(lp_wi_task_time(&nd, &c) - (tp + (1e9 - tp) * 2)) < 1);
    c.no_sharing = 0, c.net_ratio = 0, c.slots = 1;
    nd.net_bytes = 0; /* bytes unknown */
    CHECK(fabs(lp_wi_task_time(&nd, &c) - 1e9) < 1);
    /* saturated (1.5 x 0.6 MB/s); 4 slots -> 2: k' = clamp(1.5 x 2/4, 1, 2) = 1 */
    nd.net_bytes = 0.6e6, nd.net_rate = 0.9e6, nd.conc = 1.5, nd.rec_slots = 4, c.slots = 2;
    CHECK(fabs(lp_wi_task_time(&nd, &c) - (tp + (1e9 - tp) / 1.5)) < 1);
    nd.conc = 2, nd.rec_slots = 2, c.slots = 1;
    /* the disk alike */
    nd.v[LP_RES_NET] = 0, nd.v[LP_RES_DISK] = 1, nd.disk_bytes = 0.5e6, nd.disk_rate = 1e6, c.disk_bw = 1e6;
    CHECK(fabs(lp_wi_task_time(&nd, &c) - (tp + (1e9 - tp) * 0.5)) < 1);

    /* the replay: the two tasks in a row on one slot take as long as side by side */
    lp_wi_node two[2] = {task(0, 1000000000, 0, 0, 0, 1), task(0, 1000000000, 0, 0, 0, 1)};
    for (int i = 0; i < 2; i++)
        two[i].net_bytes = 0.5e6, two[i].net_rate = 1e6, two[i].conc = 2, two[i].rec_slots = 2, two[i].first_wave = 1;
    uint32_t s2[1] = {2};
    uint8_t seq[1] = {0};
    double warm[1] = {1};
    lp_wi_dag d;
    dag_of(&d, two, 2, 1, s2, seq, warm, NULL, 0);
    d.t1 = 1000000000;
    memset(&c, 0, sizeof c);
    c.net_bw = 1e6, c.slots = 1;
    lp_wi_result r;
    lp_error err;
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
    CHECK(llabs(r.makespan - 2 * llround(tp + (1e9 - tp) * 0.5)) <= 1);
    c.no_sharing = 1;
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
    CHECK_EQ_I(r.makespan, 2000000000);
}

/* A recorded job: a coordinator launches 4 tasks on a pool of 2 threads, then reduces. */
static void test_trace_dag(void)
{
    const char *text = "W coord tid=1\n"
                       "W p.0 tid=2 pool=p\n"
                       "W p.1 tid=3 pool=p\n"
                       "M coord 0 p.0 0 id=L0\nM coord 0 p.1 0 id=L1\nM coord 0 p.0 100 id=L2\nM coord 0 p.1 100 id=L3\n"
                       "A p.0 0 100 processing map task=0\nA p.1 0 100 processing map task=1\n"
                       "A p.0 100 200 processing map task=2\nA p.1 100 200 processing map task=3\n"
                       "M p.0 100 coord 100 id=R0\nM p.1 100 coord 100 id=R1\n"
                       "M p.0 200 coord 200 id=R2\nM p.1 200 coord 201 id=R3\n"
                       "A coord 201 301 processing reduce\n";
    lp_diags ds;
    lp_trace *t = load_text(text, &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_cpf_profile p;
    lp_error err;
    CHECK(lp_cpf_profile_build(t, NULL, NULL, NULL, &p, &err) == LP_OK);
    lp_wi_dag d;
    CHECK(lp_wi_dag_build(t, &p, &d, &err) == LP_OK);
    CHECK_EQ_I(d.npools, 2);
    lp_wi_config c;
    memset(&c, 0, sizeof c);
    lp_wi_result r;
    lp_status st = lp_wi_replay(&d, &c, 0, &r, &err);
    CHECK(st == LP_OK);
    if (st)
        fprintf(stderr, "%s\n", err.msg);
    CHECK_EQ_I(r.recorded, 301);
    CHECK_EQ_I(r.makespan, 301);
    c.no_vectors = 1; /* Sparklens-style, at the recorded configuration: the recorded run */
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
    CHECK_EQ_I(r.makespan, 301);
    c.no_vectors = 0;
    for (size_t i = 0; i < d.n; i++) /* the pool's tasks ran two at a time: k = 2 */
        if (d.node[i].kind == LP_WI_TASK && !d.seq[d.node[i].pool]) {
            CHECK(fabs(d.node[i].conc - 2) < 1e-12);
            CHECK_EQ_I(d.node[i].rec_slots, 2);
        }
    c.slots = 1; /* four tasks of 100 in a row, then R3's latency (1) and the reduce */
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
    CHECK_EQ_I(r.makespan, 400 + 1 + 100);
    c.slots = 4;
    CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
    CHECK_EQ_I(r.makespan, 100 + 1 + 100);
    lp_wi_dag_release(&d);
    lp_cpf_profile_release(&p);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* The Spark logs of ../shared/data: the replay at the recorded configuration, with and
 * without resource vectors, is the recorded run (the model's own error is 0 there). */
static void test_spark_self(void)
{
    static const char *logs[] = {"app-20170324182509-0000", "application_1553914137147_0018",
                                 "local-1422981780767", "local-1430917381534"};
    for (size_t k = 0; k < sizeof logs / sizeof *logs; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/../shared/data/spark/%s", LP_SOURCE_DIR, logs[k]);
        lp_diags ds;
        lp_diags_init(&ds, 4);
        lp_trace *t = NULL;
        lp_error err;
        const char *paths[1] = {path};
        if (lp_trace_load(paths, 1, NULL, &ds, &t, &err)) {
            fprintf(stderr, "test_whatif: %s absent: Spark self-replay skipped\n", path);
            lp_diags_release(&ds);
            continue;
        }
        lp_cpf_profile p;
        lp_wi_dag d;
        CHECK(lp_cpf_profile_build(t, NULL, NULL, NULL, &p, &err) == LP_OK);
        CHECK(lp_wi_dag_build(t, &p, &d, &err) == LP_OK);
        lp_wi_config c;
        memset(&c, 0, sizeof c);
        lp_wi_result r;
        for (int nv = 0; nv < 2; nv++) {
            c.no_vectors = nv;
            CHECK(lp_wi_replay(&d, &c, 0, &r, &err) == LP_OK);
            CHECK(r.recorded > 0);
            CHECK_EQ_I(r.makespan, r.recorded);
        }
        lp_wi_dag_release(&d);
        lp_cpf_profile_release(&p);
        lp_trace_free(t);
        lp_diags_release(&ds);
    }
}

/* ---- the naive twin ---------------------------------------------------------------------- */

static int64_t naive_dur(const lp_wi_dag *d, const lp_wi_config *c, uint32_t i, uint64_t *cnt, const uint32_t *sl)
{
    const lp_wi_node *nd = &d->node[i];
    if (nd->kind == LP_WI_WAIT)
        return 0;
    if (nd->kind == LP_WI_GAP)
        return nd->dur;
    double t = lp_wi_task_time(nd, c);
    if (!d->seq[nd->pool]) {
        uint64_t k = cnt[nd->pool * 4 + nd->op]++; /* ops are 0..3 in these tests */
        double w = c->no_warmup ? 1 : d->warmup[nd->pool];
        int first = k < sl[nd->pool];
        if (nd->first_wave && !first)
            t /= w;
        else if (!nd->first_wave && first)
            t *= w;
    }
    return llround(t);
}

/* A plain event loop: find the next instant anything happens, apply everything at it,
 * start what can start (pools in order, tasks in recorded order), repeat. O(n^2). */
static int64_t naive(const lp_wi_dag *d, const lp_wi_config *c, int64_t *start)
{
    size_t n = d->n;
    int64_t *end = calloc(n, sizeof *end), *fire = malloc((d->ne + 1) * sizeof *fire);
    uint8_t *st = calloc(n, 1), *fired = calloc(d->ne + 1, 1), *ready = calloc(n, 1), *rel = calloc(n, 1);
    uint32_t *pend = calloc(n, sizeof *pend), *freeslots = calloc(d->npools, sizeof *freeslots);
    uint32_t *sl = calloc(d->npools, sizeof *sl);
    uint64_t *cnt = calloc(d->npools * 4, sizeof *cnt);
    for (size_t k = 0; k < d->ne; k++) {
        pend[d->edge[k].dst]++;
        fire[k] = INT64_MAX;
    }
    for (uint32_t p = 0; p < d->npools; p++)
        freeslots[p] = sl[p] = d->seq[p] ? 1 : (c->slots ? c->slots : d->slots[p]);
    int64_t last = d->t0;
    for (;;) {
        int64_t t = INT64_MAX;
        for (size_t i = 0; i < n; i++) {
            if (st[i] == 1 && end[i] < t)
                t = end[i];
            if (!pend[i] && !rel[i] && d->node[i].start < t)
                t = d->node[i].start;
        }
        for (size_t k = 0; k < d->ne; k++)
            if (!fired[k] && fire[k] < t)
                t = fire[k];
        if (t == INT64_MAX)
            break;
        for (size_t i = 0; i < n; i++) {
            if (st[i] == 1 && end[i] == t) {
                st[i] = 2;
                freeslots[d->node[i].pool]++;
                if (t > last)
                    last = t;
            }
            if (!pend[i] && !rel[i] && d->node[i].start == t && !st[i]) {
                rel[i] = 1;
                ready[i] = 1;
            }
        }
        for (size_t k = 0; k < d->ne; k++)
            if (!fired[k] && fire[k] == t) {
                fired[k] = 1;
                if (!--pend[d->edge[k].dst]) {
                    ready[d->edge[k].dst] = 1;
                    rel[d->edge[k].dst] = 1;
                }
            }
        for (uint32_t p = 0; p < d->npools; p++)
            while (freeslots[p]) {
                size_t pick = n;
                for (size_t i = 0; i < n; i++)
                    if (ready[i] && !st[i] && d->node[i].pool == p) {
                        pick = i;
                        break;
                    }
                if (pick == n)
                    break;
                freeslots[p]--;
                ready[pick] = 0;
                st[pick] = 1;
                start[pick] = t;
                int64_t du = naive_dur(d, c, (uint32_t)pick, cnt, sl);
                end[pick] = t + du;
                for (size_t k = 0; k < d->ne; k++)
                    if (d->edge[k].src == pick) {
                        double lat = (double)d->edge[k].lat;
                        if (d->edge[k].net && c->net_ratio > 0 && !c->no_vectors)
                            lat /= c->net_ratio;
                        fire[k] = t + llround(d->edge[k].frac * (double)du) + llround(lat);
                    }
            }
    }
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= st[i] == 2;
    free(end), free(fire), free(st), free(fired), free(ready), free(rel), free(pend), free(freeslots), free(sl);
    free(cnt);
    return ok ? last - d->t0 : -1;
}

static void test_twin(void)
{
    uint64_t seed = 16;
    int mismatches = 0;
    for (int round = 0; round < 3000; round++) {
        size_t n = 1 + t_splitmix(&seed) % 40;
        uint32_t np = 1 + (uint32_t)(t_splitmix(&seed) % 4);
        uint32_t slots[4];
        uint8_t seq[4];
        double warm[4];
        for (uint32_t p = 0; p < np; p++) {
            seq[p] = t_splitmix(&seed) % 3 == 0;
            slots[p] = seq[p] ? 1 : 1 + (uint32_t)(t_splitmix(&seed) % 4);
            warm[p] = 0.5 + (double)(t_splitmix(&seed) % 150) / 100;
        }
        lp_wi_node *nodes = calloc(n, sizeof *nodes);
        int64_t t = 0;
        for (size_t i = 0; i < n; i++) {
            t += (int64_t)(t_splitmix(&seed) % 5) * 10;
            double a = (double)(t_splitmix(&seed) % 100) / 100, b = (double)(t_splitmix(&seed) % 100) / 100 * (1 - a);
            nodes[i] = task(t, (int64_t)(t_splitmix(&seed) % 200), (uint32_t)(t_splitmix(&seed) % np), a, b, 0);
            nodes[i].v[LP_RES_NET] = (1 - a - b) / 2;
            nodes[i].v[LP_RES_UNKNOWN] = (1 - a - b) / 2;
            nodes[i].op = (lp_str)(t_splitmix(&seed) % 4);
            nodes[i].first_wave = t_splitmix(&seed) % 2;
            if (seq[nodes[i].pool] && t_splitmix(&seed) % 4 == 0)
                nodes[i].kind = t_splitmix(&seed) % 2 ? LP_WI_WAIT : LP_WI_GAP;
        }
        /* edges forward in start order (a DAG), plus the chains of sequential pools */
        size_t cap = n * 3 + 1, ne = 0;
        lp_wi_edge *e = calloc(cap, sizeof *e);
        for (uint32_t p = 0; p < np; p++) {
            if (!seq[p])
                continue;
            size_t prev = n;
            for (size_t i = 0; i < n; i++)
                if (nodes[i].pool == p) {
                    if (prev < n) {
                        lp_wi_edge x = {(uint32_t)prev, (uint32_t)i, 1, 0, 0};
                        e[ne++] = x;
                    }
                    prev = i;
                }
        }
        for (size_t k = 0; k < n * 2 && n > 1 && ne < cap; k++) {
            uint32_t a = (uint32_t)(t_splitmix(&seed) % (n - 1));
            uint32_t b = a + 1 + (uint32_t)(t_splitmix(&seed) % (n - 1 - a));
            static const double fr[4] = {0, 0.5, 1, 0.25};
            lp_wi_edge x = {a, b, fr[t_splitmix(&seed) % 4], (int64_t)(t_splitmix(&seed) % 3) * 7,
                            (uint8_t)(t_splitmix(&seed) % 2)};
            e[ne++] = x;
        }
        lp_wi_dag d;
        dag_of(&d, nodes, n, np, slots, seq, warm, e, ne);
        lp_wi_config c;
        memset(&c, 0, sizeof c);
        c.slots = (uint32_t)(t_splitmix(&seed) % 4);
        c.cpu_speed = (double)(1 + t_splitmix(&seed) % 4) / 2;
        c.disk_ratio = (double)(t_splitmix(&seed) % 3);
        c.net_ratio = (double)(t_splitmix(&seed) % 3);
        c.no_warmup = t_splitmix(&seed) % 5 == 0;
        lp_wi_result r;
        lp_error err;
        int64_t *ns = calloc(n, sizeof *ns);
        lp_status st = lp_wi_replay(&d, &c, 1, &r, &err);
        int64_t want = naive(&d, &c, ns);
        int same = st == LP_OK && want >= 0 && r.makespan == want;
        for (size_t i = 0; same && i < n; i++)
            same = r.start[i] == ns[i];
        if (!same && mismatches++ < 3)
            fprintf(stderr, "twin mismatch in round %d: fast %lld (st %d), naive %lld\n", round,
                    (long long)r.makespan, (int)st, (long long)want);
        CHECK(same);
        lp_wi_result_release(&r);
        free(ns);
        free(nodes);
        free(e);
    }
}

int main(void)
{
    test_formulas();
    test_replay_kat();
    test_sharing();
    test_trace_dag();
    test_spark_self();
    test_twin();
    return t_done("test_whatif");
}
