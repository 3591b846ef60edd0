/* test_g10_savings.c: Grade10's bottleneck removal (issues.h, lp_g10_without_bottleneck)
 * against a naive twin on random runs: the twin walks every leaf bottlenecked on R
 * segment by segment with a binary search for each instant (no cursors, no shared
 * slice grid), cuts each stretch at every boundary of the leaf's other timelines (event
 * mode; in slice mode a stretch is one slice), takes the least headroom there, and
 * shortens the leaf by the saved share. Runs mix monitoring cut alike (one slice grid
 * for every resource: the fast walk) and cut differently (other periods, late starts,
 * jittered samples: the general walk), blocking, and effective capacity; both modes. The
 * leaf durations must be equal to the nanosecond. */
#include "g10test.h"
#include "longpole/analysis/grade10/issues.h"
#include "analysis/grade10/g10_int.h"

#include <math.h>

/* ---- the twin ------------------------------------------------------------------------- */

/* The segment holding t (bound[0] <= t < bound[nseg]), by binary search. */
static uint32_t seg_search(const lp_g10_tl *tl, int64_t t)
{
    uint32_t l = 0, h = tl->nseg - 1;
    while (l < h) {
        uint32_t m = l + (h - l + 1) / 2;
        if (tl->bound[m] <= t)
            l = m;
        else
            h = m - 1;
    }
    return l;
}

typedef struct res_of_leaf {
    const lp_g10_tl *tl;
    uint8_t kind;
    double val;
} res_of_leaf;

/* The headroom of one of the leaf's other resources at instant t (issues.c's rule). */
static double twin_headroom(const res_of_leaf *o, int64_t t, double th)
{
    const lp_g10_tl *tl = o->tl;
    if (!tl->nseg || t < tl->bound[0] || t >= tl->bound[tl->nseg])
        return INFINITY;
    uint32_t s = seg_search(tl, t);
    double K = tl->capacity, u = tl->u[s], x = tl->x[s];
    if (u >= th * K)
        return 1;
    if (o->kind == LP_G10_RULE_EXACT) {
        if (tl->E[s] > 0 && x >= th * tl->E[s])
            return 1;
        return x > 0 ? tl->E[s] / x : INFINITY;
    }
    double share = tl->V[s] > 0 ? o->val * (u - x) / tl->V[s] : 0;
    return share > 0 ? (share + K - u) / share : INFINITY;
}

/* The time leaf p saves without resource r's bottleneck, in segment time. */
static double twin_saved(const lp_g10_attr *a, uint32_t r, uint32_t p)
{
    const lp_g10_model *m = a->m;
    const lp_g10_use *u = lp_g10_use_of(a, r, p);
    if (!u || u->bn_ns <= 0)
        return 0;
    if (m->res[r].kind == LP_G10_BLOCKING)
        return (double)u->bn_ns;
    if (u->tl == LP_G10_NONE)
        return 0;
    const lp_g10_tl *tl = &a->tl[u->tl];
    uint8_t kind;
    lp_g10_rule_of(m, a->x->type[p], r, tl->capacity, &kind);
    res_of_leaf rest[16];
    size_t nr = 0;
    for (uint32_t q = 0; q < m->nres && nr < 16; q++) {
        const lp_g10_use *v = lp_g10_use_of(a, q, p);
        if (q == r || !v || m->res[q].kind != LP_G10_CONSUMABLE || v->tl == LP_G10_NONE)
            continue;
        rest[nr].tl = &a->tl[v->tl];
        rest[nr].val = lp_g10_rule_of(m, a->x->type[p], q, a->tl[v->tl].capacity, &rest[nr].kind);
        nr++;
    }
    double th = m->bottleneck * (1 - 1e-12), saved = 0;
    int64_t ps[64], pe[64];
    size_t np = lp_g10_active(a, p, ps, pe, 64);
    for (size_t k = 0; k < np && k < 64; k++) {
        int64_t lo = ps[k] > tl->bound[0] ? ps[k] : tl->bound[0];
        int64_t hi = pe[k] < tl->bound[tl->nseg] ? pe[k] : tl->bound[tl->nseg];
        for (uint32_t s = 0; s < tl->nseg; s++) {
            int64_t a0 = tl->bound[s] > lo ? tl->bound[s] : lo, a1 = tl->bound[s + 1] < hi ? tl->bound[s + 1] : hi;
            if (a0 >= a1)
                continue;
            int bn = tl->u[s] >= th * tl->capacity ||
                     (kind == LP_G10_RULE_EXACT && tl->E[s] > 0 && tl->x[s] >= th * tl->E[s]);
            int cont = !bn && tl->f && tl->f[s] < th;
            if (!bn && !cont)
                continue;
            double hmax = cont ? 1 / (tl->f[s] > 0 ? tl->f[s] : 1e-9) : INFINITY, here = 0;
            for (int64_t c0 = a0; c0 < a1;) {
                int64_t c1 = a1; /* the next boundary of another timeline (event mode) */
                for (size_t i = 0; i < nr && a->mode == LP_G10_EVENTS; i++)
                    for (uint32_t b = 0; b <= rest[i].tl->nseg; b++)
                        if (rest[i].tl->bound[b] > c0 && rest[i].tl->bound[b] < c1)
                            c1 = rest[i].tl->bound[b];
                double h = hmax;
                for (size_t i = 0; i < nr; i++) {
                    double hr = twin_headroom(&rest[i], c0, th);
                    if (hr < h)
                        h = hr;
                }
                here += (double)(c1 - c0) * (isinf(h) ? 1.0 : 1.0 - 1.0 / h);
                c0 = c1;
            }
            saved += here;
        }
    }
    return saved;
}

/* Leaf durations without r's bottleneck, by the twin. */
static void twin_durations(const lp_g10_attr *a, uint32_t r, int64_t *dur)
{
    const lp_g10_exec *x = a->x;
    for (uint32_t p = 0; p < x->n; p++) {
        dur[p] = x->size[p] == 1 ? x->end[p] - x->start[p] : 0;
        if (x->size[p] != 1)
            continue;
        double saved = twin_saved(a, r, p);
        int64_t S, E;
        int wid;
        g10_bounds(a, p, &S, &E, &wid);
        if (!(saved > 0) || E <= S)
            continue;
        double keep = 1 - saved / (double)(E - S);
        int64_t d = x->end[p] - x->start[p];
        int64_t nd = keep > 0 ? (int64_t)llround((double)d * keep) : 0;
        if (nd < d)
            dur[p] = nd;
    }
}

/* ---- random runs ------------------------------------------------------------------------ */

static const char *smodel = "grade10-model 1\n"
                            "slice 10ms\n"
                            "phase /Step sequential step\n"
                            "phase /Step/Thread concurrent thread\n"
                            "phase /Step/Comm after Thread\n"
                            "resource cpu consumable metric=cpu sample=counter capacity=4 delay=cpu.delay\n"
                            "resource net consumable metric=net sample=counter capacity=1e8\n"
                            "resource disk consumable metric=disk sample=mean capacity=2e8\n"
                            "resource gc blocking\n"
                            "default consumable none\n"
                            "rule /**/Thread cpu exact 1\nrule /**/Thread net variable 0.2\n"
                            "rule /**/Thread disk variable 1\nrule /**/Thread gc full\n"
                            "rule /**/Comm cpu variable 0.5\nrule /**/Comm net variable 1\n";

/* One random run. `alike`: every metric sampled at the same instants on the slice grid
 * (the slice-mode fast walk); else each its own period, start and jitter. */
static void random_run(uint64_t *seed, int alike, sbuf *ops, sbuf *mon, sbuf *blk)
{
    ops->n = mon->n = blk->n = 0;
    sb_printf(ops, "%s", "");
    sb_printf(mon, "%s", "");
    sb_printf(blk, "%s", "");
    const int64_t slice = 10000000;
    int aligned = alike || t_splitmix(seed) % 2;
    int nsteps = 1 + (int)(t_splitmix(seed) % 3), nthreads = 1 + (int)(t_splitmix(seed) % 5);
    int64_t t = 0;
    for (int s = 0; s < nsteps; s++) {
        int64_t end = t;
        for (int th = 0; th < nthreads; th++) {
            int64_t st = t + (aligned ? slice * (int64_t)(t_splitmix(seed) % 4) : (int64_t)(rnd(seed) * 4e7));
            int64_t d = aligned ? slice * (1 + (int64_t)(t_splitmix(seed) % 12)) : 1 + (int64_t)(rnd(seed) * 1.2e8);
            sb_printf(ops, "time=%lld, event=start, phase=Thread, step=%d, thread=%d\n", (long long)st, s, th);
            sb_printf(ops, "time=%lld, event=end, phase=Thread, step=%d, thread=%d\n", (long long)(st + d), s, th);
            if (st + d > end)
                end = st + d;
        }
        int64_t cd = aligned ? slice * (1 + (int64_t)(t_splitmix(seed) % 6)) : 1 + (int64_t)(rnd(seed) * 6e7);
        sb_printf(ops, "time=%lld, event=start, phase=Comm, step=%d\n", (long long)end, s);
        sb_printf(ops, "time=%lld, event=end, phase=Comm, step=%d\n", (long long)(end + cd), s);
        t = end + cd;
    }
    static const char *const metric[4] = {"cpu", "net", "disk", "cpu.delay"};
    static const double cap[4] = {4, 1e8, 2e8, 4};
    int with_delay = t_splitmix(seed) % 2;
    int64_t every0 = slice * (1 + (int64_t)(t_splitmix(seed) % 4));
    for (int k = 0; k < 3 + with_delay; k++) {
        int64_t every = alike ? every0 : slice * (1 + (int64_t)(t_splitmix(seed) % 5));
        int64_t t0 = alike ? 0 : slice * (int64_t)(t_splitmix(seed) % 4) + (aligned ? 0 : (int64_t)(rnd(seed) * slice));
        double v = 0;
        for (int64_t tm = t0; tm < t + 2 * every; tm += every) {
            int64_t at = alike || aligned || tm == t0 ? tm : tm + (int64_t)(rnd(seed) * slice) - slice / 2;
            double rate = rnd(seed) * 1.15 * cap[k]; /* up to 115 % of capacity: saturated stretches */
            if (k == 2)
                v = rate; /* disk: a mean */
            else if (tm > t0)
                v += rate * (double)every / 1e9;
            sb_printf(mon, "%lld,h,%s,%.17g\n", (long long)at, metric[k], v);
        }
    }
    int nblk = (int)(t_splitmix(seed) % 3);
    for (int i = 0; i < nblk; i++) {
        int64_t s0 = (int64_t)(rnd(seed) * (double)t), len = 1 + (int64_t)(rnd(seed) * 3e7);
        if (aligned)
            s0 -= s0 % slice, len = slice * (1 + len % 3);
        sb_printf(blk, "%lld,%lld,h,gc\n", (long long)s0, (long long)(s0 + len));
    }
}

static void test_twin(void)
{
    lp_diags ds;
    lp_diags_init(&ds, 20);
    lp_error err;
    lp_g10_model *m = NULL;
    CHECK(lp_g10_model_parse(&m, smodel, strlen(smodel), "s.g10", &ds, &err) == LP_OK);
    if (!m)
        return;
    uint64_t seed = 11;
    sbuf ops = {0}, mon = {0}, blk = {0};
    int bad = 0, runs = 0;
    uint64_t shortened[2][2] = {{0, 0}, {0, 0}}; /* [mode][consumable, blocking] */
    for (int c = 0; c < 1500; c++) {
        random_run(&seed, c % 3 == 0, &ops, &mon, &blk);
        lp_g10_data d;
        lp_g10_exec *x = NULL;
        lp_diags_release(&ds);
        lp_diags_init(&ds, 20);
        CHECK(lp_g10_data_init(&d, &err) == LP_OK);
        if (g10t_load(&d, ops.p, G10T_OPLOG, &ds, &err) || g10t_load(&d, mon.p, G10T_MONITOR, &ds, &err) ||
            (blk.n && g10t_load(&d, blk.p, G10T_BLOCKING, &ds, &err)) ||
            lp_g10_exec_from_events(m, &d, &ds, &x, &err)) {
            if (bad++ < 3)
                fprintf(stderr, "case %d: %s\n", c, err.msg);
            lp_g10_data_release(&d);
            continue;
        }
        for (int mode = 0; mode < 2; mode++) {
            lp_g10_attr *a = NULL;
            lp_g10_opts o = {mode, 0, 1};
            if (lp_g10_attribute(m, x, &d, &o, &ds, &a, &err)) {
                if (bad++ < 3)
                    fprintf(stderr, "case %d: %s\n", c, err.msg);
                continue;
            }
            int64_t *d1 = malloc(x->n * sizeof *d1), *d2 = malloc(x->n * sizeof *d2);
            for (uint32_t r = 0; r < m->nres; r++) {
                uint64_t changed = 0;
                for (uint32_t i = 0; i < x->n; i++)
                    d1[i] = x->size[i] == 1 ? x->end[i] - x->start[i] : 0;
                CHECK(lp_g10_without_bottleneck(a, r, d1, &changed, &err) == LP_OK);
                twin_durations(a, r, d2);
                shortened[mode][m->res[r].kind == LP_G10_BLOCKING] += changed;
                for (uint32_t i = 0; i < x->n; i++)
                    if (d1[i] != d2[i] && bad++ < 5)
                        fprintf(stderr, "case %d mode %d res %u leaf %u: %lld, twin %lld\n", c, mode, r, i,
                                (long long)d1[i], (long long)d2[i]);
            }
            runs++;
            free(d1), free(d2);
            lp_g10_attr_free(a);
        }
        lp_g10_exec_free(x);
        lp_g10_data_release(&d);
    }
    CHECK_EQ_I(bad, 0);
    CHECK(runs == 3000);
    /* the runs exercise the removal in both modes (not only leaves left as they were),
     * for consumable resources (from the monitoring: 15-16 k leaves) and blocking ones
     * (about 2 k) alike */
    for (int mode = 0; mode < 2; mode++) {
        if (shortened[mode][0] <= 5000 || shortened[mode][1] <= 500)
            fprintf(stderr, "mode %d: %llu leaves shortened by consumable bottlenecks, %llu by blocking ones\n", mode,
                    (unsigned long long)shortened[mode][0], (unsigned long long)shortened[mode][1]);
        CHECK(shortened[mode][0] > 5000 && shortened[mode][1] > 500);
    }
    free(ops.p), free(mon.p), free(blk.p);
    lp_diags_release(&ds);
    lp_g10_model_free(m);
}

int main(void)
{
    test_twin();
    return t_done("test_g10_savings");
}
