/* psreplay.c: the imbalance and outlier issues (issues.c, papers/grade10.txt §III-F)
 * estimated under fluid processor sharing, for a run whose CPU-like resource was
 * contended (psreplay.h; docs/analyses/grade10.md, "Processor sharing").
 *
 * The paper replays the phase DAG with fixed durations. When a host's threads outnumber
 * its cores (4 compute threads on 2 cores each run at half speed), a straggler's
 * removal also speeds up the others, which fixed durations cannot show. So, when some
 * timeline of a resource with Exact rules was contended (its exact demand E above its
 * capacity K in some segment, or other load: S < 1 below),
 * every leaf with an Exact rule d > 0 on that timeline becomes a job: an amount of work
 * (its attributed usage over its span, `used`, i.e. q = used / d ns at full speed), and
 * the jobs of one timeline active at an instant, of total demand D, each progress at
 * S min(1, K / D) of full speed: K the capacity, S the share of each unit of it the
 * run's threads got beside other load, from the resource's delay= series: per segment
 * with exact demand, the share f_s they got of what they were ready to use over the
 * share their own number explains, min(1, K / E_s), capped at 1, averaged by time (1
 * without a delay series or when no window was contended). Linux schedules a session's
 * threads as a group with a share of each core they run on, hence a share per unit of
 * capacity rather than competing thread by thread. Every other leaf keeps its recorded
 * duration. A fix (imbalance: every set at its mean; outlier: the outliers brought down
 * to the longest typical instance) is applied to the jobs' work (q), to the other
 * instances' replayed spans as before, and the run replayed again: the gain is the
 * replay of the recorded work minus the replay of the fixed one (both under the same
 * assumption). Without contention nothing is changed (the results stay those of the
 * fixed-duration replay, byte for byte).
 *
 * The replay (g10_ps_run) is event-driven: fixed leaves finish at start + q; the jobs of
 * a group share one virtual clock V (dV/dt = the group's speed factor), so a job
 * started at V0 finishes when V reaches V0 + q: one heap per group keyed by that, and
 * one for fixed finishes; between two events every rate is constant. Invariants: a node
 * starts when its last predecessor finishes; without jobs the times are those of the
 * fixed-duration replay (lp_g10_replay_run) from 0. tests/unit/grade10/test_g10_psreplay.c
 * has the naive twin (a time-stepped simulation) and known answers.
 */
#include "analysis/grade10/psreplay.h"
#include "analysis/grade10/g10_int.h"
#include "longpole/base/alloc.h"
#include "base/heap.h"

#include <math.h>
#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

typedef struct hent {
    double k;
    uint32_t v;
} hent;

static inline int hless(hent a, hent b) { return a.k < b.k || (a.k == b.k && a.v < b.v); }
LP_HEAP_DEFINE(hq, hent, hless)

static void hpush(hent *h, uint32_t *n, double k, uint32_t v) { hq_push(h, n, (hent){k, v}); }

/* One group's state: its virtual clock V at real time tr, active demand D, its heap. */
typedef struct grp {
    double V, tr, D;
    hent *h;
    uint32_t nh;
} grp;

typedef struct sim {
    const g10_ps_dag *g;
    const g10_ps_jobs *j;
    uint32_t *pend, *stack;
    hent *fix;
    uint32_t nfix;
    grp *gr;
    double *tstart, *tend, last;
    uint32_t ndone;          /* nodes finished */
} sim;

/* The jobs of each group (cnt[ngroups], zeroed here): its heap's room. */
static size_t group_jobs(const g10_ps_dag *g, const g10_ps_jobs *j, uint32_t *cnt)
{
    size_t all = 0;
    for (uint32_t k = 0; cnt && k < j->ngroups; k++)
        cnt[k] = 0;
    for (uint32_t v = 0; v < g->n; v++) {
        uint32_t l = g->leaf[v];
        if (l != UINT32_MAX && j->grp[l] != UINT32_MAX) {
            all++;
            if (cnt)
                cnt[j->grp[l]]++;
        }
    }
    return all;
}

size_t g10_ps_scratch_size(const g10_ps_dag *g, const g10_ps_jobs *j)
{
    size_t n = (size_t)g->n + 1;
    return n * 2 * sizeof(uint32_t) + (n + group_jobs(g, j, NULL) + j->ngroups) * sizeof(hent) +
           ((size_t)j->ngroups + 1) * sizeof(grp) + (size_t)j->ngroups * sizeof(uint32_t) + 16;
}

static inline double speed(const g10_ps_jobs *j, uint32_t g, double D)
{
    return D > j->K[g] ? j->S[g] * j->K[g] / D : j->S[g];
}

static void advance(sim *s, uint32_t g, double T)
{
    grp *p = &s->gr[g];
    if (p->nh)
        p->V += (T - p->tr) * speed(s->j, g, p->D);
    p->tr = T;
}

/* Node v starts at T. */
static void start(sim *s, uint32_t v, double T, uint32_t *ns)
{
    if (s->tstart)
        s->tstart[v] = T;
    uint32_t l = s->g->leaf[v];
    if (l == UINT32_MAX) {
        s->stack[(*ns)++] = v; /* finishes at once */
        return;
    }
    uint32_t g = s->j->grp[l];
    if (g == UINT32_MAX) {
        hpush(s->fix, &s->nfix, T + s->j->q[l], v);
        return;
    }
    advance(s, g, T);
    grp *p = &s->gr[g];
    hpush(p->h, &p->nh, p->V + s->j->q[l], v);
    p->D += s->j->d[l];
}

/* Node v finishes at T: its successors whose last predecessor it was start (nodes that
 * take no time finish at once, through the stack). */
static void finish(sim *s, uint32_t v, double T)
{
    uint32_t ns = 0;
    s->stack[ns++] = v;
    while (ns) {
        uint32_t u = s->stack[--ns];
        if (s->tend)
            s->tend[u] = T;
        s->ndone++;
        if (T > s->last)
            s->last = T;
        for (uint32_t e = s->g->first[u]; e < s->g->first[u + 1]; e++)
            if (--s->pend[s->g->succ[e]] == 0)
                start(s, s->g->succ[e], T, &ns);
    }
}

double g10_ps_run(const g10_ps_dag *g, const g10_ps_jobs *j, void *scratch, double *tstart, double *tend)
{
    size_t n = (size_t)g->n + 1;
    char *b = scratch;
    sim s = {g, j, NULL, NULL, NULL, 0, NULL, tstart, tend, 0, 0};
    s.fix = (void *)b, b += n * sizeof(hent);
    s.gr = (void *)b, b += (j->ngroups + 1) * sizeof(grp);
    uint32_t *cnt = (void *)b;
    b += (size_t)j->ngroups * sizeof(uint32_t);
    b += (8 - (uintptr_t)b % 8) % 8; /* hent holds a double */
    group_jobs(g, j, cnt);
    for (uint32_t k = 0; k < j->ngroups; k++) /* each group's heap: room for its jobs */
        s.gr[k] = (grp){0, 0, 0, (void *)b, 0}, b += ((size_t)cnt[k] + 1) * sizeof(hent);
    s.pend = (void *)b, b += n * sizeof(uint32_t);
    s.stack = (void *)b;
    memset(s.pend, 0, n * sizeof *s.pend);
    for (uint32_t e = 0; e < g->first[g->n]; e++)
        s.pend[g->succ[e]]++;
    uint32_t ns = 0, nsrc = 0;
    for (uint32_t v = 0; v < g->n; v++) /* the sources, listed before any of them finishes */
        if (!s.pend[v])
            s.stack[g->n - 1 - nsrc++] = v; /* from the top of the stack down */
    for (uint32_t k = nsrc; k-- > 0;) { /* each starts at 0 (those taking no time finish at once); the
                                          sources left stay above the stack finish() uses */
        start(&s, s.stack[g->n - 1 - k], 0, &ns);
        if (ns) /* finish() uses the stack's bottom, below the sources left */
            finish(&s, s.stack[--ns], 0);
    }
    for (;;) {
        double T = s.nfix ? s.fix[0].k : INFINITY;
        uint32_t best = UINT32_MAX;
        for (uint32_t k = 0; k < j->ngroups; k++) {
            grp *p = &s.gr[k];
            if (!p->nh)
                continue;
            double t = p->tr + fmax(0, p->h[0].k - p->V) / speed(j, k, p->D);
            if (t < T)
                T = t, best = k;
        }
        if (T == INFINITY)
            break;
        if (best == UINT32_MAX) {
            finish(&s, hq_pop(s.fix, &s.nfix).v, T);
            continue;
        }
        for (uint32_t k = 0; k < j->ngroups; k++)
            advance(&s, k, T);
        grp *p = &s.gr[best];
        hent e = hq_pop(p->h, &p->nh);
        p->D -= j->d[g->leaf[e.v]];
        if (!p->nh)
            p->D = 0; /* no drift left over from sums of demands */
        finish(&s, e.v, T);
    }
    return s.ndone == g->n ? s.last : NAN; /* NAN: some node never finished (no progress) */
}

/* ---- the issues under processor sharing -------------------------------------------- */

typedef struct psplan {
    uint32_t ng;
    uint32_t *gof;           /* [ntl] group of each timeline, UINT32_MAX: not contended */
    double *K, *S;           /* [ng] */
    uint32_t *grp;           /* [x->n] */
    double *d, *q;
    int64_t *q0;             /* [x->n] leaves: work (jobs) or recorded duration, ns; composite: 0 */
    uint64_t jobs;
} psplan;

static void plan_release(psplan *pl)
{
    lp_free(pl->gof), lp_free(pl->K), lp_free(pl->S), lp_free(pl->grp), lp_free(pl->d), lp_free(pl->q);
    lp_free(pl->q0);
}

/* Is timeline tl contended, and the share S of its capacity the run's threads got
 * beside other load (see the header comment). */
static int contended(const lp_g10_tl *tl, double *S)
{
    double K = tl->capacity, l_sum = 0, sh = 0;
    int over = 0;
    for (uint32_t s = 0; s < tl->nseg; s++) {
        if (tl->E[s] <= 0)
            continue;
        if (tl->E[s] > K * (1 + 1e-9))
            over = 1;
        double len = (double)(tl->bound[s + 1] - tl->bound[s]), f = tl->f ? tl->f[s] : 1;
        double self = tl->E[s] > K ? K / tl->E[s] : 1; /* what their own number explains */
        double x = f / self;
        l_sum += len, sh += len * (x < 1 ? x : 1);
    }
    *S = tl->f && tl->contended_s > 0 && l_sum > 0 ? sh / l_sum : 1;
    /* threads that got (almost) nothing of what they were ready to use: no rate to share */
    return K > 0 && *S > 1e-6 && (over || *S < 1);
}

static lp_status plan_build(const lp_g10_attr *a, psplan *pl, lp_error *err)
{
    const lp_g10_exec *x = a->x;
    const lp_g10_model *m = a->m;
    memset(pl, 0, sizeof *pl);
    pl->gof = lp_malloc(((size_t)a->ntl + 1) * sizeof *pl->gof);
    pl->K = lp_malloc(((size_t)a->ntl + 1) * sizeof *pl->K);
    pl->S = lp_malloc(((size_t)a->ntl + 1) * sizeof *pl->S);
    if (!pl->gof || !pl->K || !pl->S)
        return nomem(err);
    for (uint32_t k = 0; k < a->ntl; k++) {
        double S;
        pl->gof[k] = UINT32_MAX;
        if (contended(&a->tl[k], &S))
            pl->gof[k] = pl->ng, pl->K[pl->ng] = a->tl[k].capacity, pl->S[pl->ng++] = S;
    }
    if (!pl->ng) /* nothing contended: nothing else is needed */
        return LP_OK;
    pl->grp = lp_malloc(((size_t)x->n + 1) * sizeof *pl->grp);
    pl->d = lp_calloc((size_t)x->n + 1, sizeof *pl->d);
    pl->q = lp_calloc((size_t)x->n + 1, sizeof *pl->q);
    pl->q0 = lp_calloc((size_t)x->n + 1, sizeof *pl->q0);
    if (!pl->grp || !pl->d || !pl->q || !pl->q0)
        return nomem(err);
    for (uint32_t i = 0; i < x->n; i++) {
        pl->grp[i] = UINT32_MAX;
        pl->q0[i] = x->size[i] == 1 ? x->end[i] - x->start[i] : 0;
    }
    for (uint32_t r = 0; r < m->nres; r++)
        for (size_t k = 0; a->use[r] && k < a->nuse[r]; k++) {
            const lp_g10_use *u = &a->use[r][k];
            uint32_t p = u->phase;
            if (u->tl == LP_G10_NONE || pl->gof[u->tl] == UINT32_MAX || pl->grp[p] != UINT32_MAX)
                continue;
            uint8_t kind;
            double d = lp_g10_rule_of(m, x->type[p], r, a->tl[u->tl].capacity, &kind);
            if (kind != LP_G10_RULE_EXACT || !(d > 0))
                continue;
            pl->grp[p] = pl->gof[u->tl], pl->d[p] = d;
            pl->q0[p] = (int64_t)llround(u->used / d * 1e9);
            pl->jobs++;
        }
    return LP_OK;
}

/* One replay of leaf values v (q0's shape) under the plan: makespan; spans into sp
 * (jobs: their work, others: replayed) when sp is not NULL. */
static int64_t ps_replay(const lp_g10_replay *rp, psplan *pl, const int64_t *v, void *scr, double *ts, double *te,
                         int64_t *sp)
{
    const lp_g10_exec *x = rp->x;
    for (uint32_t i = 0; i < x->n; i++)
        pl->q[i] = (double)v[i];
    g10_ps_dag g = {rp->nnodes, rp->first, rp->succ, rp->leaf};
    g10_ps_jobs j = {pl->q, pl->d, pl->grp, pl->ng, pl->K, pl->S};
    double last = g10_ps_run(&g, &j, scr, ts, te);
    if (isnan(last))
        return -1;
    for (uint32_t i = 0, c = x->n; sp && i < x->n; i++) {
        double s0 = ts[rp->pos[i]], e0 = x->size[i] > 1 ? te[rp->pos[c]] : te[rp->pos[i]];
        sp[i] = pl->grp[i] != UINT32_MAX ? v[i] : (int64_t)llround(e0 - s0);
        c += x->size[i] > 1;
    }
    if (x->size[0] == 1)
        return (int64_t)llround(last);
    return (int64_t)llround(te[rp->pos[x->n]] - ts[rp->pos[0]]);
}

/* Candidate v again under the plan (dur: scratch of q0's shape). */
static lp_status ps_candidate(const lp_g10_replay *rp, psplan *pl, lp_g10_issues *is, lp_g10_issue *v,
                              const int64_t *sp, int64_t *dur, void *scr, double *ts, double *te, lp_error *err)
{
    const lp_g10_exec *x = rp->x;
    memcpy(dur, pl->q0, x->n * sizeof *dur);
    lp_status st;
    lp_g10_issue c = *v; /* committed only if its replay completes */
    if (c.kind == LP_G10_ISSUE_IMBALANCE)
        st = lp_g10_without_imbalance(x, c.type, sp, dur, &c.phases, err);
    else
        st = lp_g10_without_outliers(x, c.type, sp, dur, &c, err);
    if (st)
        return st;
    c.saved_ns = 0;
    for (uint32_t i = 0; i < x->n; i++)
        c.saved_ns += x->size[i] == 1 ? pl->q0[i] - dur[i] : 0;
    if (c.saved_ns < 0) /* the imbalance fix keeps the total: only its rounding is left */
        c.saved_ns = 0;
    c.makespan = ps_replay(rp, pl, dur, scr, ts, te, NULL);
    if (c.makespan < 0)
        return LP_OK; /* no progress (cannot happen with S > 0): the fixed-duration estimate stays */
    c.gain_ns = is->ps_baseline - c.makespan;
    c.gain = is->ps_baseline > 0 ? (double)c.gain_ns / (double)is->ps_baseline : 0;
    c.reported = c.gain_ns > 0 && c.gain >= is->threshold;
    c.ps = 1;
    *v = c;
    return LP_OK;
}

lp_status g10_ps_issues(const lp_g10_attr *a, lp_g10_issues *is, lp_error *err)
{
    const lp_g10_exec *x = a->x;
    size_t todo = 0;
    for (size_t i = 0; i < is->n; i++)
        todo += is->v[i].kind != LP_G10_ISSUE_BOTTLENECK;
    if (!todo || !a->ntl)
        return LP_OK;
    psplan pl;
    lp_status st = plan_build(a, &pl, err);
    if (st || !pl.jobs) {
        plan_release(&pl);
        return st;
    }
    lp_g10_replay rp;
    memset(&rp, 0, sizeof rp);
    int64_t *sp = NULL, *dur = NULL;
    double *ts = NULL, *te = NULL;
    void *scr = NULL;
    if (!(st = lp_g10_replay_init(&rp, x, err))) {
        sp = lp_malloc(((size_t)x->n + 1) * sizeof *sp), dur = lp_malloc(((size_t)x->n + 1) * sizeof *dur);
        ts = lp_malloc(((size_t)rp.nnodes + 1) * sizeof *ts), te = lp_malloc(((size_t)rp.nnodes + 1) * sizeof *te);
        g10_ps_dag g = {rp.nnodes, rp.first, rp.succ, rp.leaf};
        g10_ps_jobs j = {pl.q, pl.d, pl.grp, pl.ng, pl.K, pl.S};
        scr = lp_malloc(g10_ps_scratch_size(&g, &j));
        if (!sp || !dur || !ts || !te || !scr)
            st = nomem(err);
    }
    if (!st) {
        is->ps_baseline = ps_replay(&rp, &pl, pl.q0, scr, ts, te, sp);
        is->ps_groups = pl.ng, is->ps_leaves = pl.jobs, is->ps_capacity = pl.K[0], is->ps_share = pl.S[0];
        /* the model must reproduce the run before it may say what a change would gain:
         * its replay of the recorded work within LP_G10_PS_TOL of the recorded
         * durations' replay, else the fixed-duration estimates stay (said so) */
        double off = is->baseline > 0 ? fabs((double)(is->ps_baseline - is->baseline)) / (double)is->baseline : 1;
        is->ps_rejected = is->ps_baseline < 0 || !(off <= LP_G10_PS_TOL);
    }
    for (size_t i = 0; !st && !is->ps_rejected && i < is->n; i++)
        if (is->v[i].kind != LP_G10_ISSUE_BOTTLENECK)
            st = ps_candidate(&rp, &pl, is, &is->v[i], sp, dur, scr, ts, te, err);
    lp_free(sp), lp_free(dur), lp_free(ts), lp_free(te), lp_free(scr);
    lp_g10_replay_release(&rp);
    plan_release(&pl);
    return st;
}
