/* test_g10_replay.c: Grade10's replay and issues (papers/grade10.txt §III-F, §IV-D):
 * a brute-force twin (constraints relaxed to a fixpoint) against the DAG replay on
 * random runs; the replay of a run without gaps reproduces the recorded times and
 * makespan; the paper's imbalance example (Gather 20.5 s -> 48.7 s, 2.38x) built and
 * recovered; bottleneck removal on a constructed case (saturated CPU with and without
 * network headroom, a GC pause). */
#include "g10test.h"
#include "longpole/analysis/grade10/issues.h"
#include "analysis/grade10/g10_int.h"

#include <math.h>

#define S 1000000000LL

/* ---- the twin: every constraint relaxed until nothing moves --------------------------- */

static int64_t naive_replay(const lp_g10_exec *x, const int64_t *dur, int64_t *st, int64_t *en)
{
    const lp_g10_model *m = x->m;
    for (uint32_t i = 0; i < x->n; i++)
        st[i] = en[i] = INT64_MIN;
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t i = 0; i < x->n; i++) {
            int64_t s = i ? st[x->parent[i]] : x->start[0];
            if (i) {
                uint32_t p = x->parent[i];
                int64_t prev_seq = INT64_MIN, prev_any = INT64_MIN;
                for (uint32_t j = p + 1; j < i; j++) { /* earlier siblings (children are in start order) */
                    if (x->parent[j] != p)
                        continue;
                    if (x->type[j] == x->type[i] && m->type[x->type[i]].repeat == LP_G10_SEQUENTIAL)
                        prev_seq = en[j];
                    prev_any = en[j];
                }
                if (prev_seq > s)
                    s = prev_seq;
                if (m->type[x->type[p]].serial && prev_any > s)
                    s = prev_any;
                for (uint32_t j = p + 1; j < p + x->size[p]; j++) {
                    if (x->parent[j] != p)
                        continue;
                    for (uint32_t k = 0; k < m->nafter; k++)
                        if (m->after[k].before == x->type[j] && m->after[k].after == x->type[i] && en[j] > s)
                            s = en[j];
                }
            }
            int64_t e = s;
            if (x->size[i] == 1 && s != INT64_MIN)
                e = s + dur[i];
            for (uint32_t c = i + 1; c < i + x->size[i]; c++)
                if (x->parent[c] == i && en[c] > e)
                    e = en[c];
            if (s != st[i] || e != en[i])
                st[i] = s, en[i] = e, changed = 1;
        }
    }
    return en[0] - st[0];
}

static const char *rmodel = "grade10-model 1\n"
                            "phase /Init\n"
                            "phase /Stage sequential stage after Init\n"
                            "phase /Stage/Task concurrent task serial\n"
                            "phase /Stage/Task/Prep\n"
                            "phase /Stage/Task/Step sequential step\n"
                            "phase /Stage/Shuffle after Task\n"
                            "phase /Stage/Merge after Shuffle,Task\n"
                            "phase /Report concurrent part after Stage\n";

static void random_ops(uint64_t *seed, sbuf *b)
{
    b->n = 0;
    sb_printf(b, "# random\n");
    int64_t t = (int64_t)(t_splitmix(seed) % 100);
#define EV(name, keys, s, e)                                                                        \
    do {                                                                                            \
        sb_printf(b, "time=%lld, event=start, phase=%s%s\n", (long long)(s), name, keys);          \
        sb_printf(b, "time=%lld, event=end, phase=%s%s\n", (long long)(e), name, keys);            \
    } while (0)
    char keys[128];
    if (t_splitmix(seed) % 2)
        EV("Init", "", t, t + (int64_t)(t_splitmix(seed) % 50));
    int stages = (int)(t_splitmix(seed) % 4);
    for (int s = 0; s < stages; s++) {
        int tasks = (int)(t_splitmix(seed) % 4);
        for (int k = 0; k < tasks; k++) {
            if (t_splitmix(seed) % 2) {
                snprintf(keys, sizeof keys, ", stage=%d, task=%d", s, k);
                int64_t st = t + (int64_t)(t_splitmix(seed) % 1000);
                EV("Prep", keys, st, st + (int64_t)(t_splitmix(seed) % 300));
            }
            int steps = 1 + (int)(t_splitmix(seed) % 3);
            for (int q = 0; q < steps; q++) {
                snprintf(keys, sizeof keys, ", stage=%d, task=%d, step=%d", s, k, q);
                int64_t st = t + (int64_t)(t_splitmix(seed) % 1000);
                EV("Step", keys, st, st + (int64_t)(t_splitmix(seed) % 300));
            }
        }
        snprintf(keys, sizeof keys, ", stage=%d", s);
        if (t_splitmix(seed) % 3) {
            int64_t st = t + (int64_t)(t_splitmix(seed) % 1000);
            EV("Shuffle", keys, st, st + (int64_t)(t_splitmix(seed) % 200));
        }
        if (t_splitmix(seed) % 3) {
            int64_t st = t + (int64_t)(t_splitmix(seed) % 1000);
            EV("Merge", keys, st, st + (int64_t)(t_splitmix(seed) % 200));
        }
        t += 500;
    }
    int parts = (int)(t_splitmix(seed) % 3);
    for (int k = 0; k < parts; k++) {
        snprintf(keys, sizeof keys, ", part=%d", k);
        EV("Report", keys, t, t + (int64_t)(t_splitmix(seed) % 100));
    }
    EV("Init", ", x=1", 0, 1); /* a second Init record: reported as a duplicate or the only one */
#undef EV
}

static void test_twin(void)
{
    lp_g10_model *m = model_of(rmodel);
    CHECK(m != NULL);
    if (!m)
        return;
    uint64_t seed = 3;
    sbuf b = {0};
    int bad = 0, runs = 0;
    for (int c = 0; c < 2000; c++) {
        random_ops(&seed, &b);
        lp_g10_data d;
        lp_diags ds;
        lp_g10_exec *x = exec_of(m, b.p, &d, &ds);
        if (!x) {
            lp_g10_data_release(&d);
            lp_diags_release(&ds);
            continue;
        }
        lp_g10_replay rp;
        lp_error err;
        CHECK(lp_g10_replay_init(&rp, x, &err) == LP_OK);
        int64_t *dur = calloc(x->n, sizeof *dur), *s1 = calloc(x->n, 8), *e1 = calloc(x->n, 8);
        int64_t *s2 = calloc(x->n, 8), *e2 = calloc(x->n, 8);
        for (int rep = 0; rep < 3; rep++) {
            for (uint32_t i = 0; i < x->n; i++)
                dur[i] = x->size[i] == 1 ? (rep ? (int64_t)(t_splitmix(&seed) % 500) : x->end[i] - x->start[i]) : 0;
            int64_t m1 = lp_g10_replay_run(&rp, dur, s1, e1), m2 = naive_replay(x, dur, s2, e2);
            int ok = m1 == m2;
            for (uint32_t i = 0; i < x->n; i++)
                ok &= s1[i] == s2[i] && e1[i] == e2[i];
            if (!ok && bad++ < 3)
                fprintf(stderr, "case %d rep %d: replay %lld, twin %lld\n%s", c, rep, (long long)m1, (long long)m2, b.p);
            runs++;
        }
        free(dur), free(s1), free(e1), free(s2), free(e2);
        lp_g10_replay_release(&rp);
        lp_g10_exec_free(x);
        lp_g10_data_release(&d);
        lp_diags_release(&ds);
    }
    CHECK_EQ_I(bad, 0);
    CHECK(runs > 3000);
    free(b.p);
    lp_g10_model_free(m);
}

/* The incremental replay (respan.c) against the DAG's: random runs, random leaves
 * changed (some lengthened, some shortened, some several times), the makespans equal. */
static void test_respan(void)
{
    lp_g10_model *m = model_of(rmodel);
    CHECK(m != NULL);
    if (!m)
        return;
    uint64_t seed = 5;
    sbuf b = {0};
    int bad = 0, usable_runs = 0, unusable = 0, compared = 0;
    for (int c = 0; c < 2000; c++) {
        random_ops(&seed, &b);
        lp_g10_data d;
        lp_diags ds;
        lp_g10_exec *x = exec_of(m, b.p, &d, &ds);
        if (!x) {
            lp_g10_data_release(&d);
            lp_diags_release(&ds);
            continue;
        }
        lp_g10_replay rp;
        lp_error err;
        CHECK(lp_g10_replay_init(&rp, x, &err) == LP_OK);
        int64_t *base = calloc(x->n, 8), *dur = calloc(x->n, 8), *st = calloc(x->n, 8), *span = calloc(x->n, 8);
        uint32_t *changed = calloc(x->n + 1, 4);
        for (uint32_t i = 0; i < x->n; i++)
            base[i] = x->size[i] == 1 ? x->end[i] - x->start[i] : 0;
        lp_g10_replay_run(&rp, base, st, span);
        for (uint32_t i = 0; i < x->n; i++)
            span[i] -= st[i];
        g10_respan rs;
        int usable = 0;
        CHECK(g10_respan_init(&rs, x, span, &usable, &err) == LP_OK);
        usable_runs += usable, unusable += !usable;
        if (usable) { /* the baseline without the DAG: the same spans and makespan */
            int64_t *all = calloc(x->n, 8), mk = g10_respan_all(&rs, base, all);
            int same = mk == (x->size[0] == 1 ? base[0] : span[0]);
            for (uint32_t i = 0; i < x->n; i++)
                same &= all[i] == span[i];
            if (!same && bad++ < 3)
                fprintf(stderr, "case %d: the baseline's spans differ from the DAG replay's\n%s", c, b.p);
            free(all);
        }
        for (int rep = 0; usable && rep < 6; rep++) {
            memcpy(dur, base, x->n * sizeof *dur);
            size_t nch = 0;
            for (uint32_t i = 0; i < x->n; i++)
                if (x->size[i] == 1 && t_splitmix(&seed) % 4 == 0) {
                    dur[i] = (int64_t)(t_splitmix(&seed) % 600);
                    changed[nch++] = i;
                }
            if (nch && rep % 2)
                changed[nch++] = changed[0]; /* a repeat */
            rs.scan_above = rep % 3 == 0 ? 0 : rep % 3 == 1 ? SIZE_MAX : x->n / 64; /* both ways to order them */
            int64_t m1 = lp_g10_replay_run(&rp, dur, NULL, NULL), m2 = -1;
            CHECK(g10_respan_run(&rs, dur, changed, nch, &m2, &err) == LP_OK);
            if (m1 != m2 && bad++ < 3)
                fprintf(stderr, "case %d rep %d: DAG replay %lld, respan %lld\n%s", c, rep, (long long)m1,
                        (long long)m2, b.p);
            compared++;
        }
        g10_respan_release(&rs);
        free(base), free(dur), free(st), free(span), free(changed);
        lp_g10_replay_release(&rp);
        lp_g10_exec_free(x);
        lp_g10_data_release(&d);
        lp_diags_release(&ds);
    }
    CHECK_EQ_I(bad, 0);
    CHECK(compared > 3000);
    fprintf(stderr, "respan: %d usable runs, %d left to the DAG\n", usable_runs, unusable);
    CHECK(unusable > 0 && usable_runs > 500); /* runs against the model's order are left to the DAG */
    free(b.p);
    lp_g10_model_free(m);
}

/* A run without gaps: the replay reproduces it. The times come from the twin itself. */
static void test_no_gaps(void)
{
    lp_g10_model *m = model_of(rmodel);
    if (!m)
        return;
    uint64_t seed = 11;
    sbuf b = {0}, g = {0};
    int bad = 0, runs = 0;
    char name[256];
    for (int c = 0; c < 300; c++) {
        random_ops(&seed, &b);
        lp_g10_data d;
        lp_diags ds;
        lp_g10_exec *x = exec_of(m, b.p, &d, &ds);
        if (!x) {
            lp_g10_data_release(&d);
            lp_diags_release(&ds);
            continue;
        }
        /* new durations, replayed by the twin from time 1000: a gapless schedule */
        int64_t *dur = calloc(x->n, 8), *st = calloc(x->n, 8), *en = calloc(x->n, 8);
        for (uint32_t i = 0; i < x->n; i++)
            dur[i] = x->size[i] == 1 ? 1 + (int64_t)(t_splitmix(&seed) % 400) : 0;
        naive_replay(x, dur, st, en);
        int64_t shift = 1000 - st[0];
        g.n = 0;
        sb_printf(&g, "# gapless\n");
        for (uint32_t i = 0; i < x->n; i++) {
            if (x->size[i] != 1)
                continue;
            /* the leaf's keys: every repetition key on its path */
            char keys[256] = "";
            size_t k = 0;
            for (uint32_t a = i; a; a = x->parent[a])
                if (x->key[a] != LP_STR_NONE)
                    k += (size_t)snprintf(keys + k, sizeof keys - k, ", %s=%s", lp_g10_exec_str(x, x->keyname[x->type[a]]),
                                          lp_g10_exec_str(x, x->key[a]));
            const char *nm = lp_g10_model_str(m, m->type[x->type[i]].name);
            sb_printf(&g, "time=%lld, event=start, phase=%s%s\ntime=%lld, event=end, phase=%s%s\n",
                      (long long)(st[i] + shift), nm, keys, (long long)(en[i] + shift), nm, keys);
        }
        lp_g10_data d2;
        lp_diags ds2;
        lp_g10_exec *y = exec_of(m, g.p, &d2, &ds2);
        CHECK(y != NULL && y->n == x->n);
        if (y) {
            lp_g10_replay rp;
            lp_error err;
            CHECK(lp_g10_replay_init(&rp, y, &err) == LP_OK);
            int64_t *base = calloc(y->n, 8), *rs = calloc(y->n, 8), *re = calloc(y->n, 8);
            for (uint32_t i = 0; i < y->n; i++)
                base[i] = y->size[i] == 1 ? y->end[i] - y->start[i] : 0;
            int64_t mk = lp_g10_replay_run(&rp, base, rs, re);
            int ok = mk == y->end[0] - y->start[0];
            for (uint32_t i = 0; i < y->n; i++)
                ok &= rs[i] == y->start[i] && re[i] == y->end[i];
            if (!ok && bad++ < 3) {
                fprintf(stderr, "gapless case %d: replay %lld, recorded %lld\n", c, (long long)mk,
                        (long long)(y->end[0] - y->start[0]));
                for (uint32_t i = 0; i < y->n; i++)
                    fprintf(stderr, "  %s rec [%lld, %lld] replay [%lld, %lld]\n", lp_g10_exec_name(y, i, name, sizeof name),
                            (long long)y->start[i], (long long)y->end[i], (long long)rs[i], (long long)re[i]);
            }
            runs++;
            free(base), free(rs), free(re);
            lp_g10_replay_release(&rp);
            lp_g10_exec_free(y);
        }
        lp_g10_data_release(&d2);
        lp_diags_release(&ds2);
        free(dur), free(st), free(en);
        lp_g10_exec_free(x);
        lp_g10_data_release(&d);
        lp_diags_release(&ds);
    }
    CHECK_EQ_I(bad, 0);
    CHECK(runs > 200);
    free(b.p);
    free(g.p);
    lp_g10_model_free(m);
}

/* PowerGraph's first Gather step of CDLP on Graph500-26 (§IV-D, Fig. 6): the slowest
 * worker without outliers (worker 4) takes 20.5 s; one thread on worker 6 takes 2.88x
 * its worker's mean thread, 48.7 s. Balancing every worker's threads leaves worker 4's
 * 20.5 s: the outlier costs 48.7 / 20.5 = 2.38x. */
static void test_imbalance(void)
{
    lp_g10_model *m = model_of("grade10-model 1\n"
                               "phase /Gather\n"
                               "phase /Gather/WorkerGather concurrent worker\n"
                               "phase /Gather/WorkerGather/GatherThread concurrent thread\n"
                               "phase /Apply after Gather\n"
                               "resource cpu consumable metric=cpu sample=mean capacity=16\n");
    if (!m)
        return;
    sbuf b = {0};
    const int threads = 8;
    /* median thread durations per worker range over 6.4-20.5 s (Fig. 6) */
    const double wmean[8] = {6.4, 9.1, 12.3, 20.5, 14.8, 16.909722222222, 11.0, 8.2};
    for (int w = 0; w < 8; w++)
        for (int k = 0; k < threads; k++) {
            double d = wmean[w];
            if (w == 3)
                d = 20.5; /* worker 4: every thread 20.5 s */
            else if (w == 5)
                d = k == 0 ? 48.7 : (threads * wmean[5] - 48.7) / (threads - 1); /* worker 6: the outlier */
            else
                d = wmean[w] * (0.9 + 0.2 * k / (threads - 1)); /* mild spread, mean kept */
            sb_printf(&b, "time=0, event=start, phase=GatherThread, worker=%d, thread=%d\n", w + 1, k);
            sb_printf(&b, "time=%lld, event=end, phase=GatherThread, worker=%d, thread=%d\n", (long long)llround(d * 1e9),
                      w + 1, k);
        }
    sb_printf(&b, "time=48700000000, event=start, phase=Apply\ntime=50000000000, event=end, phase=Apply\n");
    lp_g10_data d;
    lp_diags ds;
    lp_g10_exec *x = exec_of(m, b.p, &d, &ds);
    CHECK(x != NULL);
    if (x) {
        lp_error err;
        lp_g10_attr *a = NULL;
        lp_g10_opts o = {LP_G10_SLICES, 0, 1};
        CHECK(lp_g10_attribute(m, x, &d, &o, &ds, &a, &err) == LP_OK);
        lp_g10_issues is;
        CHECK(a && lp_g10_issues_find(a, 0.0, &is, &err) == LP_OK);
        CHECK_EQ_I(is.baseline, 50 * S);
        CHECK_EQ_I(is.recorded, 50 * S);
        uint32_t gt = lp_g10_model_type(m, "/Gather/WorkerGather/GatherThread");
        const lp_g10_issue *th = NULL;
        for (size_t i = 0; i < is.n; i++)
            if (is.v[i].kind == LP_G10_ISSUE_IMBALANCE && is.v[i].type == gt)
                th = &is.v[i];
        CHECK(th != NULL);
        if (th) {
            /* Gather drops from 48.7 s to 20.5 s */
            CHECK(llabs(th->gain_ns - (int64_t)28200000000LL) <= 8);
            double slowdown = 48.7e9 / (48.7e9 - (double)th->gain_ns);
            CHECK(fabs(slowdown - 2.3756) < 1e-3);
            CHECK(th->reported);
            fprintf(stderr, "imbalance of GatherThread: Gather %.1f s -> %.1f s, %.2fx\n", 48.7,
                    (48.7e9 - (double)th->gain_ns) / 1e9, slowdown);
        }
        /* the outlier issue finds the same 28.2 s: worker 6's thread 0 brought down to its
         * siblings' 12.37 s leaves worker 4's 20.5 s; and names the thread */
        const lp_g10_issue *ol = NULL;
        for (size_t i = 0; i < is.n; i++)
            if (is.v[i].kind == LP_G10_ISSUE_OUTLIER && is.v[i].type == gt)
                ol = &is.v[i];
        CHECK(ol != NULL);
        if (ol) {
            CHECK(llabs(ol->gain_ns - (int64_t)28200000000LL) <= 8);
            CHECK_EQ_I(ol->instances, 1);
            CHECK_EQ_I(ol->key_count, 1);
            CHECK(ol->key != LP_STR_NONE && strcmp(lp_strtab_get(&x->strs, ol->key), "0") == 0);
        }
        lp_g10_issues_release(&is);
        lp_g10_attr_free(a);
        lp_g10_exec_free(x);
    }
    lp_g10_data_release(&d);
    lp_diags_release(&ds);
    free(b.p);
    lp_g10_model_free(m);
}

/* A straggler: two rounds of four threads computing 60, 50, 70 ms and, thread 1, 180 ms
 * (3x), then exchanging for 10 ms after the barrier. Imbalance (every thread at the
 * mean, 90 ms) gains 90 ms a round; without the straggler (thread 1 at the longest of the
 * others, 70 ms) a round gains 110 ms, what a rerun without it would gain: 220 ms in
 * all, two instances brought down, both thread=1. A set of two (no median to speak of)
 * is left alone. */
static void test_outlier(void)
{
    lp_g10_model *m = model_of("grade10-model 1\n"
                               "phase /Round sequential round\n"
                               "phase /Round/Compute concurrent thread\n"
                               "phase /Round/Exchange after Compute\n"
                               "phase /Pair concurrent p after Round\n"
                               "resource cpu consumable metric=cpu sample=mean capacity=4\n");
    if (!m)
        return;
    sbuf b = {0};
    const int ms[4] = {60, 180, 70, 50};
    int64_t t = 0;
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 4; k++) {
            sb_printf(&b, "time=%lld, event=start, phase=Compute, round=%d, thread=%d\n", (long long)t, r, k);
            sb_printf(&b, "time=%lld, event=end, phase=Compute, round=%d, thread=%d\n",
                      (long long)(t + ms[k] * 1000000LL), r, k);
        }
        t += 180 * 1000000LL;
        sb_printf(&b, "time=%lld, event=start, phase=Exchange, round=%d\n", (long long)t, r);
        t += 10 * 1000000LL;
        sb_printf(&b, "time=%lld, event=end, phase=Exchange, round=%d\n", (long long)t, r);
    }
    for (int p = 0; p < 2; p++) { /* a set of two: 10 and 40 ms */
        sb_printf(&b, "time=%lld, event=start, phase=Pair, p=%d\n", (long long)t, p);
        sb_printf(&b, "time=%lld, event=end, phase=Pair, p=%d\n", (long long)(t + (p ? 40 : 10) * 1000000LL), p);
    }
    lp_g10_data d;
    lp_diags ds;
    lp_g10_exec *x = exec_of(m, b.p, &d, &ds);
    CHECK(x != NULL);
    if (x) {
        lp_error err;
        lp_g10_attr *a = NULL;
        lp_g10_opts o = {LP_G10_SLICES, 0, 1};
        CHECK(lp_g10_attribute(m, x, &d, &o, &ds, &a, &err) == LP_OK);
        lp_g10_issues is;
        CHECK(a && lp_g10_issues_find(a, 0.0, &is, &err) == LP_OK);
        uint32_t ct = lp_g10_model_type(m, "/Round/Compute"), pt = lp_g10_model_type(m, "/Pair");
        int seen = 0;
        for (size_t i = 0; a && i < is.n; i++) {
            const lp_g10_issue *v = &is.v[i];
            if (v->kind == LP_G10_ISSUE_IMBALANCE && v->type == ct) {
                CHECK_EQ_I(v->gain_ns, 2 * 90 * 1000000LL);
                seen |= 1;
            } else if (v->kind == LP_G10_ISSUE_OUTLIER && v->type == ct) {
                CHECK_EQ_I(v->gain_ns, 2 * 110 * 1000000LL);
                CHECK_EQ_I(v->instances, 2);
                CHECK_EQ_I(v->phases, 2);
                CHECK_EQ_I(v->key_count, 2);
                CHECK(v->key != LP_STR_NONE && strcmp(lp_strtab_get(&x->strs, v->key), "1") == 0);
                seen |= 2;
            } else if (v->kind == LP_G10_ISSUE_OUTLIER && v->type == pt) {
                seen |= 4; /* must not exist: a set of two */
            }
        }
        CHECK_EQ_I(seen, 3);
        if (a)
            lp_g10_issues_release(&is);
        lp_g10_attr_free(a);
        lp_g10_exec_free(x);
    }
    lp_g10_data_release(&d);
    lp_diags_release(&ds);
    free(b.p);
    lp_g10_model_free(m);
}

/* Bottleneck removal: A (10 s) then B (10 s). A runs one thread at one core of a
 * one-core machine (CPU saturated, and A at its Exact demand) and uses the network at
 * 50 % with 50 % free: without the CPU bottleneck A could go 2x faster (then the
 * network binds): 10 s -> 5 s. A GC pause of 2 s in B: removing it saves 2 s. */
static void test_bottleneck(void)
{
    lp_g10_model *m = model_of("grade10-model 1\nslice 1s\n"
                               "phase /A\nphase /B after A\n"
                               "resource cpu consumable metric=cpu sample=mean capacity=1\n"
                               "resource net consumable metric=net sample=mean capacity=1\n"
                               "resource gc blocking\n"
                               "default consumable none\n"
                               "rule /A cpu exact 1\nrule /A net variable 1\nrule /B gc full\nrule /B cpu variable 1\n");
    if (!m)
        return;
    const char *ops = "time=0, event=start, phase=A\ntime=10000000000, event=end, phase=A\n"
                      "time=10000000000, event=start, phase=B\ntime=20000000000, event=end, phase=B\n";
    lp_g10_data d;
    lp_diags ds;
    lp_g10_exec *x = exec_of(m, ops, &d, &ds);
    CHECK(x != NULL);
    if (!x)
        return;
    lp_error err;
    const char *mon = "0,h,cpu,0\n0,h,net,0\n10000000000,h,cpu,1\n10000000000,h,net,0.5\n"
                      "20000000000,h,cpu,0.2\n20000000000,h,net,0\n";
    CHECK(g10t_load(&d, mon, G10T_MONITOR, &ds, &err) == LP_OK);
    CHECK(g10t_load(&d, "12000000000,14000000000,h,gc\n", G10T_BLOCKING, &ds, &err) == LP_OK);
    for (int mode = 0; mode < 2; mode++) {
        lp_g10_attr *a = NULL;
        lp_g10_opts o = {mode, 0, 1};
        CHECK(lp_g10_attribute(m, x, &d, &o, &ds, &a, &err) == LP_OK);
        lp_g10_issues is;
        CHECK(a && lp_g10_issues_find(a, -1, &is, &err) == LP_OK);
        CHECK_EQ_I(is.baseline, 20 * S);
        int found = 0;
        for (size_t i = 0; i < is.n; i++) {
            const lp_g10_issue *v = &is.v[i];
            if (v->kind != LP_G10_ISSUE_BOTTLENECK)
                continue;
            if (v->res == 0) { /* cpu: A 10 s -> 5 s (net headroom 2x) */
                CHECK_EQ_I(v->gain_ns, 5 * S);
                found++;
            } else if (v->res == 2) { /* gc */
                CHECK_EQ_I(v->gain_ns, 2 * S);
                found++;
            }
        }
        CHECK_EQ_I(found, 2);
        CHECK(is.n >= 2 && is.v[0].res == 0 && is.v[0].reported);
        lp_g10_issues_release(&is);
        lp_g10_attr_free(a);
    }
    lp_g10_exec_free(x);
    lp_g10_data_release(&d);
    lp_diags_release(&ds);
    lp_g10_model_free(m);
}

int main(void)
{
    test_twin();
    test_respan();
    test_no_gaps();
    test_imbalance();
    test_outlier();
    test_bottleneck();
    return t_done("test_g10_replay");
}
