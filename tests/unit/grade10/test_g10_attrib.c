/* test_g10_attrib.c: Grade10's attribution end to end (model + OperationLog +
 * monitoring CSV -> usage per phase and bottlenecks): the paper's Fig. 2 constructed in
 * full (R2: 15 % and 65 %, P3 = 50 % and P2 = 15 % in slice 3; R3 saturated in slice 3:
 * a global bottleneck of P2 and P3; P2 at its Exact 80 % in slice 2: a local one), in
 * both modes; blocking; and the invariants on random runs (each window's total
 * preserved, 0 <= x <= u <= K, attributed + background = consumed, identity when the
 * monitoring is as fine as the slices, slice and event modes equal on aligned input,
 * also when the sampler's grid is shifted off the multiples of the slice);
 * effective capacity from a run-queue delay series. */
#include "g10test.h"

#include <math.h>

#define S 1000000000LL

typedef struct run {
    lp_diags ds;
    lp_g10_data d;
    lp_g10_model *m;
    lp_g10_exec *x;
    lp_g10_attr *a;
} run;

static int run_text(run *r, const char *model, const char *oplog, const char *mon, const char *blk, int mode)
{
    memset(r, 0, sizeof *r);
    lp_diags_init(&r->ds, 100);
    lp_error err;
    if (lp_g10_model_parse(&r->m, model, strlen(model), "m.g10", &r->ds, &err) || lp_g10_data_init(&r->d, &err)) {
        fprintf(stderr, "model: %s\n", err.msg);
        return 0;
    }
    const char *texts[3] = {oplog, mon, blk};
    for (int i = 0; i < 3; i++)
        if (texts[i] && g10t_load(&r->d, texts[i], i, &r->ds, &err))
            return 0;
    if (lp_g10_exec_from_events(r->m, &r->d, &r->ds, &r->x, &err)) {
        fprintf(stderr, "exec: %s\n", err.msg);
        return 0;
    }
    lp_g10_opts o = {mode, 0, 2};
    if (lp_g10_attribute(r->m, r->x, &r->d, &o, &r->ds, &r->a, &err)) {
        fprintf(stderr, "attribute: %s\n", err.msg);
        return 0;
    }
    return 1;
}

static void run_free(run *r)
{
    lp_g10_attr_free(r->a);
    lp_g10_exec_free(r->x);
    lp_g10_model_free(r->m);
    lp_g10_data_release(&r->d);
    lp_diags_release(&r->ds);
}

static uint32_t phase_named(const lp_g10_exec *x, const char *name)
{
    char buf[256];
    for (uint32_t i = 0; i < x->n; i++)
        if (strcmp(lp_g10_exec_name(x, i, buf, sizeof buf), name) == 0)
            return i;
    return LP_G10_NONE;
}

static uint32_t tl_of(const lp_g10_attr *a, uint32_t r)
{
    for (uint32_t k = 0; k < a->ntl; k++)
        if (a->tl[k].res == r)
            return k;
    return LP_G10_NONE;
}

static const char *fig2_model =
    "grade10-model 1\n"
    "slice 1s\n"
    "phase /P1\nphase /P2\nphase /P3\nphase /P4\n"
    "resource R1 consumable metric=r1 sample=mean capacity=1\n"
    "resource R2 consumable metric=r2 sample=mean capacity=1\n"
    "resource R3 consumable metric=r3 sample=mean capacity=1\n"
    "default consumable none\n"
    "rule /P1 R1 variable 1\n"
    "rule /P2 R1 variable 2\n"
    "rule /P2 R2 variable 1\n"
    "rule /P2 R3 exact 80%\n"
    "rule /P3 R2 exact 50%\n"
    "rule /P3 R3 variable 1\n"
    "rule /P4 R1 variable 1\n";

/* slices of 1 s numbered 0-5; monitoring every 2 slices */
static const char *fig2_ops = "time=0, event=start, phase=P1\ntime=2000000000, event=end, phase=P1\n"
                              "time=2000000000, event=start, phase=P2\ntime=4000000000, event=end, phase=P2\n"
                              "time=3000000000, event=start, phase=P3\ntime=4000000000, event=end, phase=P3\n"
                              "time=4000000000, event=start, phase=P4\ntime=6000000000, event=end, phase=P4\n";
static const char *fig2_mon = "time,host,metric,value\n"
                              "0,h,r1,0\n0,h,r2,0\n0,h,r3,0\n"
                              "2000000000,h,r1,0.5\n2000000000,h,r2,0\n2000000000,h,r3,0\n"
                              "4000000000,h,r1,0.6\n4000000000,h,r2,0.4\n4000000000,h,r3,0.9\n"
                              "6000000000,h,r1,0.2\n6000000000,h,r2,0\n6000000000,h,r3,0\n";

static void test_fig2(int mode)
{
    run r;
    CHECK(run_text(&r, fig2_model, fig2_ops, fig2_mon, NULL, mode));
    if (!r.a) {
        run_free(&r);
        return;
    }
    lp_g10_attr *a = r.a;
    uint32_t R1 = 0, R2 = 1, R3 = 2;
    uint32_t P2 = phase_named(r.x, "/P2"), P3 = phase_named(r.x, "/P3");
    CHECK(P2 != LP_G10_NONE && P3 != LP_G10_NONE);
    uint32_t k2 = tl_of(a, R2), k3 = tl_of(a, R3);
    CHECK(k2 != LP_G10_NONE && k3 != LP_G10_NONE);
    if (k2 == LP_G10_NONE || k3 == LP_G10_NONE)
        return;
    /* R2 in slices 2 and 3: 15 % and 65 % */
    const lp_g10_tl *t2 = &a->tl[k2];
    int64_t tt[8];
    double rate[8];
    for (uint32_t s = 0; s < t2->nseg; s++) {
        if (t2->bound[s] == 2 * S)
            CHECK(fabs(t2->u[s] - 0.15) < 1e-12);
        if (t2->bound[s] == 3 * S)
            CHECK(fabs(t2->u[s] - 0.65) < 1e-12);
    }
    /* in slice 3: P3 50 % (exact), P2 15 % (variable) */
    size_t n = lp_g10_phase_usage(a, k2, P3, tt, rate, 8);
    CHECK(n == 1 && tt[0] == 3 * S && fabs(rate[0] - 0.5) < 1e-12);
    n = lp_g10_phase_usage(a, k2, P2, tt, rate, 8);
    CHECK(n == 2 && fabs(rate[0] - 0.15) < 1e-12 && tt[1] == 3 * S && fabs(rate[1] - 0.15) < 1e-12);
    CHECK(fabs(lp_g10_use_of(a, R2, P3)->used - 0.5) < 1e-12);
    CHECK(fabs(lp_g10_use_of(a, R2, P2)->used - 0.3) < 1e-12);
    /* R3 saturated in slice 3 (global bottleneck of P2 and P3); P2 at its 80 % in slice 2 (local) */
    const lp_g10_tl *t3 = &a->tl[k3];
    for (uint32_t s = 0; s < t3->nseg; s++) {
        if (t3->bound[s] == 2 * S)
            CHECK(fabs(t3->u[s] - 0.8) < 1e-12);
        if (t3->bound[s] == 3 * S)
            CHECK(fabs(t3->u[s] - 1.0) < 1e-12);
    }
    CHECK_EQ_I(lp_g10_use_of(a, R3, P2)->bn_ns, 2 * S);
    CHECK_EQ_I(lp_g10_use_of(a, R3, P3)->bn_ns, 1 * S);
    const lp_g10_tstat *ts = &a->tstat[(size_t)r.x->type[P2] * r.m->nres + R3];
    CHECK_EQ_I(ts->bn_global_ns, 1 * S);
    CHECK_EQ_I(ts->bn_local_ns, 2 * S);
    ts = &a->tstat[(size_t)r.x->type[P3] * r.m->nres + R3];
    CHECK_EQ_I(ts->bn_global_ns, 1 * S);
    CHECK_EQ_I(ts->bn_local_ns, 0);
    /* R1 is nowhere near its capacity: no bottleneck */
    CHECK_EQ_I(lp_g10_use_of(a, R1, P2)->bn_ns, 0);
    CHECK(fabs(lp_g10_use_of(a, R1, P2)->used - 1.2) < 1e-12);
    /* totals: each timeline's consumption is attributed or background */
    for (uint32_t k = 0; k < a->ntl; k++) {
        const lp_g10_tl *t = &a->tl[k];
        CHECK(fabs(t->attributed + t->background + t->clipped - t->consumed) < 1e-12);
    }
    CHECK_EQ_I(r.ds.nerrors, 0);
    run_free(&r);
}

static void test_blocking(void)
{
    const char *model = "grade10-model 1\nslice 1s\nphase /A\nphase /B\n"
                        "resource cpu consumable metric=cpu sample=mean capacity=2\n"
                        "resource gc blocking\n"
                        "rule /A cpu exact 1\nrule /B cpu exact 1\nrule /A gc full\n";
    const char *ops = "time=0, event=start, phase=A\ntime=4000000000, event=end, phase=A\n"
                      "time=0, event=start, phase=B\ntime=4000000000, event=end, phase=B\n";
    const char *mon = "0,h,cpu,0\n4000000000,h,cpu,1.5\n";
    const char *blk = "1000000000,2000000000,h,gc\n";
    for (int mode = 0; mode < 2; mode++) {
        run r;
        CHECK(run_text(&r, model, ops, mon, blk, mode));
        if (!r.a)
            continue;
        uint32_t A = phase_named(r.x, "/A"), B = phase_named(r.x, "/B");
        /* A is blocked 1 s of 4: active 3 s; demand 1+1 in 3 slices, 1 in the blocked one */
        CHECK_EQ_I(r.a->active_ns[A], 3 * S);
        CHECK_EQ_I(r.a->active_ns[B], 4 * S);
        CHECK_EQ_I(lp_g10_use_of(r.a, 1, A)->bn_ns, 1 * S);
        /* C = 6 core-s over demand 7 core-s: scaled by 6/7; A gets 3/7 x 6, B 4/7 x 6 */
        CHECK(fabs(lp_g10_use_of(r.a, 0, A)->used - 18.0 / 7) < 1e-9);
        CHECK(fabs(lp_g10_use_of(r.a, 0, B)->used - 24.0 / 7) < 1e-9);
        run_free(&r);
    }
}

/* Monitoring with a gap, and a counter going backwards: reported with file and line,
 * the gap's window still used, the backwards one dropped. */
static void test_bad_monitoring(void)
{
    const char *model = "grade10-model 1\nphase /A\nresource cpu consumable metric=cpu sample=counter capacity=4\n";
    const char *ops = "time=0, event=start, phase=A\ntime=1000000000, event=end, phase=A\n";
    const char *mon = "time_ms,host,metric,value\n"
                      "0,h,cpu,0\n10,h,cpu,0.01\n20,h,cpu,0.02\n30,h,cpu,0.03\n40,h,cpu,0.04\n"
                      "600,h,cpu,0.6\n"  /* line 7: after a 560 ms gap */
                      "610,h,cpu,0.5\n"  /* line 8: backwards */
                      "620,h,cpu,0.62\n1000,h,cpu,1.0\n";
    run r;
    CHECK(run_text(&r, model, ops, mon, NULL, LP_G10_SLICES));
    int gap = 0, back = 0;
    for (size_t i = 0; i < r.ds.nkept; i++) {
        const lp_diag *d = &r.ds.kept[i];
        gap |= d->rule == LP_RULE_GAP && d->line == 7 && d->file && strcmp(d->file, "mon.csv") == 0;
        back |= d->rule == LP_RULE_FIELD && d->line == 8 && strstr(d->msg, "backwards") != NULL;
    }
    CHECK(gap && back);
    if (r.a) {
        CHECK_EQ_I(r.a->tl[0].gaps, 2); /* 560 ms and 380 ms against a 10 ms median */
        CHECK_EQ_I(r.a->tl[0].dropped, 1);
        CHECK_EQ_I(r.a->tl[0].nwin, 7);
    }
    run_free(&r);
}


/* Effective capacity (delay=): four threads computing (Exact 1 core each) and one
 * communicating (Variable 1) on 2 cores, one 1 s window in which the tree used 0.6
 * core-s while its threads waited 5.4 s on run queues: they got f = 0.6 / 6 = 10 % of
 * what they were ready to use. The exact demand is 4 x 0.1 = 0.4 core-s, so each
 * computing thread gets 0.1 and Comm the remaining 0.2; the window is contended (f below
 * the 95 % threshold), so every phase is bottlenecked on cpu for the whole second.
 * Without delay= the exact pass takes all 0.6 (min(4, 2) cores of demand) and Comm gets
 * nothing; a delay series that does not cover a window leaves it as before, counted. */
static void test_effective(void)
{
#define EFF_MODEL(opt)                                                                                                 \
    "grade10-model 1\nslice 100ms\nphase /C concurrent t\nphase /M\n"                                                    \
    "resource cpu consumable metric=cpu sample=counter capacity=2" opt "\n"                                               \
    "rule /C cpu exact 1\nrule /M cpu variable 1\n"
    const char *ops = "time=0, event=start, phase=C, t=1\ntime=0, event=start, phase=C, t=2\n"
                      "time=0, event=start, phase=C, t=3\ntime=0, event=start, phase=C, t=4\n"
                      "time=0, event=start, phase=M\n"
                      "time=1000000000, event=end, phase=C, t=1\ntime=1000000000, event=end, phase=C, t=2\n"
                      "time=1000000000, event=end, phase=C, t=3\ntime=1000000000, event=end, phase=C, t=4\n"
                      "time=1000000000, event=end, phase=M\n";
    const char *mon[3] = {"0,h,cpu,0\n1000000000,h,cpu,0.6\n0,h,delay,10\n1000000000,h,delay,15.4\n",
                          "0,h,cpu,0\n1000000000,h,cpu,0.6\n",
                          "0,h,cpu,0\n1000000000,h,cpu,0.6\n0,h,delay,10\n500000000,h,delay,11\n"};
    for (int mode = 0; mode < 2; mode++)
        for (int v = 0; v < 3; v++) {
            const char *m = v == 1 ? EFF_MODEL("") : EFF_MODEL(" delay=delay");
            run r;
            CHECK(run_text(&r, m, ops, mon[v], NULL, mode));
            if (!r.a) {
                run_free(&r);
                continue;
            }
            uint32_t M = phase_named(r.x, "/M");
            double comm = lp_g10_use_of(r.a, 0, M)->used, comp = 0;
            for (uint32_t p = 0; p < r.x->n; p++)
                if (lp_g10_is_leaf(r.x, p) && p != M) {
                    comp += lp_g10_use_of(r.a, 0, p)->used;
                    CHECK(fabs(lp_g10_use_of(r.a, 0, p)->used - (v == 0 ? 0.1 : 0.15)) < 1e-9);
                    CHECK_EQ_I(lp_g10_use_of(r.a, 0, p)->bn_ns, v == 0 ? S : 0);
                }
            CHECK(fabs(comm - (v == 0 ? 0.2 : 0)) < 1e-9);
            CHECK(fabs(comm + comp - 0.6) < 1e-9);
            const lp_g10_tl *tl = &r.a->tl[0];
            CHECK_EQ_I(tl->nwin_delay, v == 0 ? 1 : 0);
            CHECK_EQ_I(tl->delay_bad, v == 2 ? 1 : 0);
            CHECK(fabs(tl->contended_s - (v == 0 ? 1.0 : 0)) < 1e-9);
            CHECK(fabs(tl->delay_waited - (v == 0 ? 5.4 : 0)) < 1e-9);
            CHECK_EQ_I(lp_g10_use_of(r.a, 0, M)->bn_ns, v == 0 ? S : 0);
            CHECK_EQ_I(r.ds.nerrors, 0);
            run_free(&r);
        }
}

/* ---- random runs: invariants ----------------------------------------------------------- */

/* A random run: threads with exact CPU demand, communication phases with variable
 * network demand, monitoring every `every` slices (ms slices of 10 ms). */
/* A random run; `off` shifts every time (phases and monitoring) by that much: the slice
 * grid starts at the first monitoring sample, so a shifted aligned case stays aligned. */
static void random_case(uint64_t *seed, int every, int aligned, int64_t off, sbuf *ops, sbuf *mon)
{
    ops->n = mon->n = 0;
    sb_printf(ops, "%s", "");
    sb_printf(mon, "%s", "");
    int nsteps = 1 + (int)(t_splitmix(seed) % 4), nthreads = 1 + (int)(t_splitmix(seed) % 4);
    int64_t t = 0, slice = 10000000;
    for (int s = 0; s < nsteps; s++) {
        int64_t end = t;
        for (int th = 0; th < nthreads; th++) {
            int64_t d = aligned ? slice * (1 + (int64_t)(t_splitmix(seed) % 20)) : 1 + (int64_t)(rnd(seed) * 2e8);
            int64_t st = t + (aligned ? slice * (int64_t)(t_splitmix(seed) % 3) : (int64_t)(rnd(seed) * 3e7));
            sb_printf(ops, "time=%lld, event=start, phase=Thread, step=%d, thread=%d\n", (long long)(off + st), s, th);
            sb_printf(ops, "time=%lld, event=end, phase=Thread, step=%d, thread=%d\n", (long long)(off + st + d), s,
                      th);
            if (st + d > end)
                end = st + d;
        }
        int64_t cd = aligned ? slice * (1 + (int64_t)(t_splitmix(seed) % 10)) : 1 + (int64_t)(rnd(seed) * 1e8);
        sb_printf(ops, "time=%lld, event=start, phase=Comm, step=%d\n", (long long)(off + end), s);
        sb_printf(ops, "time=%lld, event=end, phase=Comm, step=%d\n", (long long)(off + end + cd), s);
        t = end + cd;
    }
    /* monitoring from 0 to past the end, every `every` slices (or jittered) */
    double cpu = 0, net = 0;
    int64_t step = slice * every;
    sb_printf(mon, "%lld,h,cpu,0\n%lld,h,net,0\n", (long long)off, (long long)off);
    for (int64_t m = step; m < t + 2 * step; m += step) {
        int64_t tm = aligned ? m : m + (int64_t)(rnd(seed) * slice) - slice / 2;
        cpu += rnd(seed) * 4.4 * (double)step / 1e9; /* up to 110 % of 4 cores: some clipping */
        net += rnd(seed) * 1e8 * (double)step / 1e9;
        sb_printf(mon, "%lld,h,cpu,%.17g\n%lld,h,net,%.17g\n", (long long)(off + tm), cpu, (long long)(off + tm),
                  net);
    }
}

static const char *rmodel = "grade10-model 1\n"
                            "phase /Step sequential step\n"
                            "phase /Step/Thread concurrent thread\n"
                            "phase /Step/Comm after Thread\n"
                            "resource cpu consumable metric=cpu sample=counter capacity=4\n"
                            "resource net consumable metric=net sample=counter capacity=1.25e8\n"
                            "rule /**/Thread cpu exact 1\nrule /**/Thread net none\n"
                            "rule /**/Comm cpu variable 0.5\nrule /**/Comm net variable 1\n";

static void check_invariants(const run *r, int *bad)
{
    const lp_g10_attr *a = r->a;
    for (uint32_t k = 0; k < a->ntl; k++) {
        const lp_g10_tl *t = &a->tl[k];
        double sum = 0, K = t->capacity, tol = 1e-9 * (t->consumed > 1 ? t->consumed : 1);
        int ok = 1;
        for (uint32_t s = 0; s < t->nseg; s++) {
            double l = (double)(t->bound[s + 1] - t->bound[s]) / 1e9;
            sum += l * t->u[s];
            ok &= t->x[s] >= 0 && t->x[s] <= t->u[s] * (1 + 1e-12) + 1e-15 && t->u[s] <= K * (1 + 1e-12);
        }
        ok &= fabs(sum + t->clipped - t->consumed) <= tol;
        ok &= fabs(t->attributed + t->background + t->clipped - t->consumed) <= tol;
        double uses = 0;
        for (size_t i = 0; i < a->nuse[t->res]; i++)
            if (a->use[t->res][i].tl == k)
                uses += a->use[t->res][i].used;
        ok &= fabs(uses - t->attributed) <= tol;
        if (!ok && (*bad)++ < 3)
            fprintf(stderr, "timeline %u: consumed %.12g, sum %.12g, clipped %.12g, attributed %.12g, background %.12g, uses %.12g\n",
                    k, t->consumed, sum, t->clipped, t->attributed, t->background, uses);
    }
}

static void test_random(void)
{
    uint64_t seed = 7;
    sbuf ops = {0}, mon = {0};
    int bad = 0, cases = 0;
    for (int c = 0; c < 600; c++) {
        int every = 1 + (int)(t_splitmix(&seed) % 8), aligned = c % 3 == 0;
        /* half the aligned cases on a grid shifted off the multiples of the slice (a
         * sampler started at any instant) */
        int64_t off = aligned && c % 2 ? 1000 + (int64_t)(t_splitmix(&seed) % 9998000) : 0;
        random_case(&seed, every, aligned, off, &ops, &mon);
        run r[2];
        for (int mode = 0; mode < 2; mode++) {
            if (!run_text(&r[mode], rmodel, ops.p, mon.p, NULL, mode)) {
                bad++;
                continue;
            }
            check_invariants(&r[mode], &bad);
            cases++;
        }
        /* aligned input: slice and event modes give the same usage to every phase */
        if (aligned && r[0].a && r[1].a) {
            for (uint32_t res = 0; res < 2; res++)
                for (size_t i = 0; i < r[0].a->nuse[res]; i++) {
                    const lp_g10_use *u0 = &r[0].a->use[res][i], *u1 = &r[1].a->use[res][i];
                    if ((u0->phase != u1->phase || fabs(u0->used - u1->used) > 1e-9 * (1 + fabs(u0->used)) ||
                         u0->bn_ns != u1->bn_ns) && bad++ < 3)
                        fprintf(stderr, "case %d: modes differ on res %u phase %u: %.12g/%lld vs %.12g/%lld\n", c, res,
                                u0->phase, u0->used, (long long)u0->bn_ns, u1->used, (long long)u1->bn_ns);
                }
        }
        /* identity: monitoring every slice, aligned: usage = the window's mean when below capacity */
        if (aligned && every == 1 && r[0].a) {
            const lp_g10_series *s = lp_g10_data_series(&r[0].d, "h", "cpu");
            const lp_g10_tl *t = &r[0].a->tl[tl_of(r[0].a, 0)];
            for (size_t i = 1; s && i < s->n; i++) {
                double mean = (s->value[i] - s->value[i - 1]) / 0.01;
                int found = 0; /* every window is one slice of the grid */
                for (uint32_t q = 0; q < t->nseg; q++) {
                    if (t->bound[q] != s->time[i - 1])
                        continue;
                    found = t->bound[q + 1] == s->time[i];
                    if (fabs(t->u[q] - (mean < 4 ? mean : 4)) > 1e-9 && bad++ < 3)
                        fprintf(stderr, "case %d: identity: slice at %lld has %.12g, window mean %.12g\n", c,
                                (long long)t->bound[q], t->u[q], mean);
                }
                int inside = s->time[i - 1] >= r[0].x->start[0] && s->time[i] <= r[0].x->end[0];
                if (!found && inside && bad++ < 3)
                    fprintf(stderr, "case %d: window [%lld, %lld) is not a slice\n", c, (long long)s->time[i - 1],
                            (long long)s->time[i]);
            }
        }
        run_free(&r[0]);
        run_free(&r[1]);
    }
    CHECK_EQ_I(bad, 0);
    CHECK(cases == 1200);
    free(ops.p);
    free(mon.p);
}

int main(void)
{
    test_fig2(LP_G10_SLICES);
    test_fig2(LP_G10_EVENTS);
    test_blocking();
    test_bad_monitoring();
    test_effective();
    test_random();
    return t_done("test_g10_attrib");
}
