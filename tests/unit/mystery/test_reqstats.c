/* test_reqstats.c: aggregates and case-study analyses (reqstats.h) against naive
 * recomputation from every request's critical path (reqpath.h): per segment and per
 * category sums, quantiles, outliers (count, per-segment outlier sums), what-if
 * correlations per slack bucket, strata; categories from a rules file; every number
 * identical with one thread and two, and split over parts (`dist requests`) with the
 * parts' packs gathered in one process. Also: on generated requests the critical path
 * equals the latency (the generator leaves no gaps), and slack is never negative. */
#include "t.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/gen/genreq.h"
#include "longpole/import/reqlog.h"
#include "longpole/analysis/mystery/reqpath.h"
#include "longpole/analysis/mystery/reqstats.h"
#include "longpole/analysis/mystery/skew.h"
#include "longpole/base/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/lp-reqstats-XXXXXX";

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct fix {
    lp_reqlog *rl;
    lp_causal m;
    uint32_t *map;
    lp_reqcat cat;
} fix;

static int setup(fix *F, const char *prefix, uint32_t segs, uint64_t reqs)
{
    lp_genreq g;
    lp_genreq_defaults(&g);
    g.requests = reqs;
    g.segments = segs;
    g.clients = 200;
    lp_genreq_out out;
    lp_error err;
    if (lp_genreq_write(&g, prefix, &out, &err))
        return -1;
    char p[400], a[400], c[400];
    snprintf(p, sizeof p, "%s.csv", prefix);
    snprintf(a, sizeof a, "%s.attrs.csv", prefix);
    snprintf(c, sizeof c, "%s.categories", prefix);
    const char *paths[] = {p};
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    lp_diags ds;
    lp_diags_init(&ds, 10);
    if (lp_reqlog_load(paths, 1, &o, &ds, &F->rl, &err))
        return -1;
    uint64_t unknown;
    if (lp_reqlog_load_attrs(F->rl, a, &o, &ds, &unknown, &err))
        return -1;
    lp_diags_release(&ds);
    lp_skew sk;
    lp_skew_opts so = {0, NULL};
    lp_skew_estimate(F->rl, &so, &sk, &err);
    lp_skew_apply(&sk, F->rl);
    lp_skew_release(&sk);
    lp_causal_init(&F->m, &err);
    lp_causal_map(&F->m, F->rl, &F->map, &err);
    lp_causal_refine(&F->m, F->rl, F->map, NULL, &err);
    lp_causal_finish(&F->m, F->rl, F->map, &err);
    lp_reqcat_init(&F->cat);
    if (lp_reqcat_load(&F->cat, c, &err) || lp_reqcat_assign(&F->cat, &F->m, &err))
        return -1;
    return 0;
}

static void teardown(fix *F)
{
    lp_reqcat_release(&F->cat);
    lp_free(F->map);
    lp_causal_release(&F->m);
    lp_reqlog_free(F->rl);
}

static void test_against_naive(void)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s/g", dir);
    fix F;
    if (setup(&F, prefix, 40, 4000)) {
        CHECK(0);
        return;
    }
    CHECK_EQ_I(F.cat.ncat, 3);
    CHECK_STR(F.cat.name[0], "network");
    uint32_t C = F.cat.ncat, S = F.m.nseg;
    const char *strat[] = {"browser", "connection", "latency:4", "cat.network:5"};
    lp_reqstats_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.buckets = 10;
    o.stratify = strat;
    o.nstratify = 4;
    lp_reqstats A, B;
    lp_error err;
    CHECK(lp_reqstats_run(&F.m, F.rl, F.map, &F.cat, &o, &A, &err) == LP_OK);
    o.threads = 2;
    CHECK(lp_reqstats_run(&F.m, F.rl, F.map, &F.cat, &o, &B, &err) == LP_OK);
    /* naive */
    uint64_t n = 0;
    int64_t *segcp = calloc(S, sizeof *segcp), *segdur = calloc(S, sizeof *segdur), *segslack = calloc(S, sizeof *segslack);
    uint64_t *oncp = calloc(S, sizeof *oncp);
    int64_t *catcp = calloc(C, sizeof *catcp), *catdur = calloc(C, sizeof *catdur);
    double *lat = malloc(F.rl->nreqs * sizeof *lat), *share0 = malloc(F.rl->nreqs * sizeof *share0);
    double *x0 = malloc(F.rl->nreqs * sizeof *x0), *sl0 = malloc(F.rl->nreqs * sizeof *sl0);
    uint64_t *rid = malloc(F.rl->nreqs * sizeof *rid);
    int equal_cp = 1, nonneg = 1;
    lp_reqpath p;
    lp_reqpath_init(&p);
    for (uint64_t r = 0; r < F.rl->nreqs; r++) {
        if (F.rl->rbad[r])
            continue;
        lp_reqpath_compute(&p, &F.m, F.rl, F.map, r, &err);
        if (!p.n)
            continue;
        equal_cp &= p.cp == p.latency;
        int64_t ccp[8] = {0}, cdur[8] = {0}, cend[8], cslack[8];
        for (uint32_t c = 0; c < C; c++)
            cend[c] = INT64_MIN, cslack[c] = -1;
        for (uint32_t i = 0; i < p.n; i++) {
            uint32_t s = p.seg[i], c = F.cat.of_seg[s];
            nonneg &= p.slack[i] >= 0;
            segdur[s] += p.dur[i];
            segslack[s] += p.slack[i];
            cdur[c] += p.dur[i];
            if (p.end[i] >= cend[c]) {
                cend[c] = p.end[i];
                cslack[c] = p.slack[i];
            }
            if (p.oncp[i]) {
                segcp[s] += p.dur[i];
                oncp[s]++;
                ccp[c] += p.dur[i];
            }
        }
        for (uint32_t c = 0; c < C; c++) {
            catcp[c] += ccp[c];
            catdur[c] += cdur[c];
        }
        lat[n] = (double)p.latency;
        share0[n] = p.cp ? (double)ccp[0] / (double)p.cp : -1;
        x0[n] = (double)(float)cdur[1]; /* category 1 (server): time */
        sl0[n] = (double)(float)cslack[1];
        rid[n] = r;
        n++;
    }
    lp_reqpath_release(&p);
    CHECK(equal_cp);
    CHECK(nonneg);
    CHECK_EQ_I(A.analysed, n);
    for (uint32_t s = 0; s < S; s++) {
        CHECK_EQ_I(A.seg[s].cp_sum, segcp[s]);
        CHECK_EQ_I(A.seg[s].dur_sum, segdur[s]);
        CHECK_EQ_I(A.seg[s].slack_sum, segslack[s]);
        CHECK_EQ_I(A.seg[s].oncp, oncp[s]);
    }
    for (uint32_t c = 0; c < C; c++) {
        CHECK_EQ_I(A.cat[c].cp_sum, catcp[c]);
        CHECK_EQ_I(A.cat[c].dur_sum, catdur[c]);
    }
    /* quantiles: p0 the minimum, p100 the maximum, p50 the middle by rank */
    double *ls = malloc(n * sizeof *ls);
    memcpy(ls, lat, n * sizeof *ls);
    qsort(ls, n, sizeof *ls, cmp_d);
    CHECK(A.latency_q[0] == ls[0]);
    CHECK(A.latency_q[100] == ls[n - 1]);
    CHECK(A.latency_q[50] == ls[(50 * (n - 1) + 50) / 100]);
    size_t ns = 0;
    for (uint64_t k = 0; k < n; k++)
        if (share0[k] >= 0)
            ls[ns++] = share0[k];
    qsort(ls, ns, sizeof *ls, cmp_d);
    CHECK(fabs(A.cat[0].share_q[90] - ls[(90 * (ns - 1) + 50) / 100]) < 1e-6);
    /* outliers: the top 5% by latency */
    CHECK_EQ_I(A.noutliers, (uint64_t)ceil(0.05 * (double)n));
    uint64_t above = 0;
    for (uint64_t k = 0; k < n; k++)
        above += lat[k] > (double)A.outlier_latency;
    CHECK(above < A.noutliers);
    int64_t outcp = 0, allcp = 0;
    for (uint32_t s = 0; s < S; s++) {
        outcp += A.seg[s].cp_out;
        allcp += A.seg[s].cp_sum;
        CHECK(A.seg[s].cp_out <= A.seg[s].cp_sum);
    }
    CHECK(outcp > 0 && outcp < allcp);
    /* ranked by over-representation, decreasing */
    for (uint32_t k = 1; k < A.nranked; k++)
        CHECK(lp_reqstats_overrep(&A, A.ranked[k - 1]) >= lp_reqstats_overrep(&A, A.ranked[k]));
    /* what-if: server (category 1) buckets by slack, correlation recomputed */
    {
        typedef struct {
            double s;
            uint64_t k;
        } sk;
        sk *v = malloc(n * sizeof *v);
        size_t m2 = 0;
        for (uint64_t k = 0; k < n; k++)
            if (sl0[k] >= 0)
                v[m2].s = sl0[k], v[m2].k = k, m2++;
        /* stable sort by slack */
        for (size_t i = 1; i < m2; i++) {
            sk x = v[i];
            size_t j = i;
            while (j > 0 && v[j - 1].s > x.s) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        CHECK_EQ_I(A.cat[1].nbuckets, 10);
        for (uint32_t b = 0; b < A.cat[1].nbuckets; b++) {
            size_t lo = m2 * b / 10, hi = m2 * (b + 1) / 10;
            double mx = 0, my = 0;
            for (size_t i = lo; i < hi; i++)
                mx += x0[v[i].k], my += lat[v[i].k];
            mx /= (double)(hi - lo), my /= (double)(hi - lo);
            double sxy = 0, sxx = 0, syy = 0;
            for (size_t i = lo; i < hi; i++) {
                double a = x0[v[i].k] - mx, c = lat[v[i].k] - my;
                sxy += a * c, sxx += a * a, syy += c * c;
            }
            double r = sxy / sqrt(sxx * syy);
            CHECK_EQ_I(A.cat[1].buckets[b].n, hi - lo);
            CHECK(fabs(A.cat[1].buckets[b].r - r) < 1e-9);
            CHECK(A.cat[1].buckets[b].slack_lo == (int64_t)v[lo].s);
        }
        free(v);
    }
    /* strata: counts add up; the connection types are all there */
    CHECK_EQ_I(A.nstrat, 4);
    for (uint32_t i = 0; i < A.nstrat; i++) {
        uint64_t tot = A.strat[i].missing;
        for (uint32_t k = 0; k < A.strat[i].nvals; k++)
            tot += A.strat[i].vals[k].n;
        CHECK_EQ_I(tot, n);
    }
    CHECK_EQ_I(A.strat[1].nvals, 4);
    CHECK_EQ_I(A.strat[2].nvals, 4);
    CHECK(A.strat[2].vals[0].latency_mean < A.strat[2].vals[3].latency_mean);
    /* one thread or two: the same numbers */
    int same = A.analysed == B.analysed && A.noutliers == B.noutliers && A.violations == B.violations &&
               memcmp(A.latency_q, B.latency_q, sizeof A.latency_q) == 0;
    for (uint32_t s = 0; s < S && same; s++)
        same = memcmp(&A.seg[s], &B.seg[s], sizeof A.seg[s]) == 0;
    for (uint32_t c = 0; c < C && same; c++) {
        same = memcmp(A.cat[c].share_q, B.cat[c].share_q, sizeof A.cat[c].share_q) == 0 &&
               memcmp(A.cat[c].slack_q, B.cat[c].slack_q, sizeof A.cat[c].slack_q) == 0 &&
               A.cat[c].nbuckets == B.cat[c].nbuckets;
        for (uint32_t b = 0; b < A.cat[c].nbuckets && same; b++)
            same = A.cat[c].buckets[b].n == B.cat[c].buckets[b].n &&
                   (A.cat[c].buckets[b].r == B.cat[c].buckets[b].r || (isnan(A.cat[c].buckets[b].r) && isnan(B.cat[c].buckets[b].r)));
    }
    CHECK(same);
    /* bad stratification requests */
    const char *bad[] = {"nosuch"};
    o.stratify = bad;
    o.nstratify = 1;
    lp_reqstats C2;
    CHECK(lp_reqstats_run(&F.m, F.rl, F.map, &F.cat, &o, &C2, &err) == LP_ERR_ARG);
    const char *bad2[] = {"latency"};
    o.stratify = bad2;
    CHECK(lp_reqstats_run(&F.m, F.rl, F.map, &F.cat, &o, &C2, &err) == LP_ERR_ARG);
    lp_reqstats_release(&A);
    lp_reqstats_release(&B);
    free(segcp), free(segdur), free(segslack), free(oncp), free(catcp), free(catdur);
    free(lat), free(share0), free(x0), free(sl0), free(rid), free(ls);
    teardown(&F);
}

/* ---- split over parts (`dist requests`): the gather hook in one process ---------------- */

typedef struct parts {
    uint8_t *pack[4];           /* each part's pack (part 0: its own, unused) */
    size_t len[4], cap[4];
    int tamper;                 /* 1: truncate part 1's pack; 2: say it is part 2's */
    lp_status add_status;       /* what adding the first tampered pack returned */
} parts;

static lp_status gather(void *ctx, lp_reqstats_part *p, lp_status st, int *go_on, lp_error *err)
{
    parts *P = ctx;
    *go_on = p->part == 0;
    if (st)
        return st;
    if (p->part != 0)
        return lp_reqstats_part_pack(p, &P->pack[p->part], &P->len[p->part], &P->cap[p->part], err);
    for (uint64_t r = 1; r < p->nparts; r++) {
        size_t n = P->len[r];
        uint64_t from = r;
        if (P->tamper == 1 && r == 1)
            n -= 1 + n / 3;
        if (P->tamper == 2 && r == 1)
            from = 2;
        lp_status a = lp_reqstats_part_add(p, P->pack[r], n, from, err);
        if (a && !P->add_status)
            P->add_status = a;
        if (a)
            return a;
    }
    return LP_OK;
}

static int nan_eq(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* Every result of two runs alike, to the bit. */
static int same_stats(const lp_reqstats *A, const lp_reqstats *B)
{
    if (A->analysed != B->analysed || A->excluded != B->excluded || A->violations != B->violations ||
        A->unknown != B->unknown || !nan_eq(A->latency_mean, B->latency_mean) || !nan_eq(A->cp_mean, B->cp_mean) ||
        A->nseg != B->nseg || A->ncat != B->ncat || A->noutliers != B->noutliers ||
        A->outlier_latency != B->outlier_latency || A->nranked != B->nranked || A->nstrat != B->nstrat)
        return 0;
    if (memcmp(A->latency_q, B->latency_q, sizeof A->latency_q) || memcmp(A->cp_q, B->cp_q, sizeof A->cp_q))
        return 0;
    for (uint32_t s = 0; s < A->nseg; s++)
        if (memcmp(&A->seg[s], &B->seg[s], sizeof A->seg[s]))
            return 0;
    if (A->nranked && memcmp(A->ranked, B->ranked, A->nranked * sizeof *A->ranked))
        return 0;
    for (uint32_t c = 0; c < A->ncat; c++) {
        const lp_reqstats_cat *a = &A->cat[c], *b = &B->cat[c];
        if (a->present != b->present || a->dur_sum != b->dur_sum || a->cp_sum != b->cp_sum ||
            a->nbuckets != b->nbuckets || memcmp(a->share_q, b->share_q, sizeof a->share_q) ||
            memcmp(a->slack_q, b->slack_q, sizeof a->slack_q))
            return 0;
        for (uint32_t k = 0; k < a->nbuckets; k++) {
            const lp_reqstats_bucket *x = &a->buckets[k], *y = &b->buckets[k];
            if (x->slack_lo != y->slack_lo || x->slack_hi != y->slack_hi || x->n != y->n || !nan_eq(x->r, y->r) ||
                !nan_eq(x->x_mean, y->x_mean) || !nan_eq(x->latency_mean, y->latency_mean))
                return 0;
        }
    }
    for (uint32_t i = 0; i < A->nstrat; i++) {
        const lp_reqstats_strat *a = &A->strat[i], *b = &B->strat[i];
        if (strcmp(a->name, b->name) || a->nvals != b->nvals || a->missing != b->missing)
            return 0;
        for (uint32_t v = 0; v < a->nvals; v++)
            if (strcmp(a->vals[v].label, b->vals[v].label) || a->vals[v].n != b->vals[v].n ||
                !nan_eq(a->vals[v].latency_mean, b->vals[v].latency_mean) ||
                !nan_eq(a->vals[v].cp_mean, b->vals[v].cp_mean) ||
                (A->ncat && memcmp(a->vals[v].cat_cp_mean, b->vals[v].cat_cp_mean, A->ncat * sizeof(double))))
                return 0;
    }
    return 1;
}

/* Split into K = 1..4 parts (two threads per part, then one), the parts' passes handed
 * over as packs: every result identical to one run; a truncated pack or one sent as
 * another part's is refused (LP_ERR_FORMAT), never read past its end. */
static void test_parts(void)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s/p", dir);
    fix F;
    if (setup(&F, prefix, 30, 2500)) {
        CHECK(0);
        return;
    }
    const char *strat[] = {"browser", "latency:4", "cat.network:3"};
    lp_reqstats_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 2;
    o.stratify = strat;
    o.nstratify = 3;
    o.buckets = 7;
    lp_error err;
    lp_reqstats one;
    CHECK(lp_reqstats_run(&F.m, F.rl, F.map, &F.cat, &o, &one, &err) == LP_OK);
    for (int tamper = 0; tamper <= 2; tamper++)
        for (uint64_t K = 1; K <= 4; K++) {
            if (tamper && K < 2)
                continue;
            parts P;
            memset(&P, 0, sizeof P);
            P.tamper = tamper;
            lp_reqstats_opts po = o;
            po.threads = 1 + (unsigned)(K & 1);
            po.nparts = K;
            po.gather = gather;
            po.gather_ctx = &P;
            for (uint64_t part = K; part-- > 0;) { /* part 0 last: it gathers */
                po.part = part;
                lp_reqstats got;
                lp_status st = lp_reqstats_run(&F.m, F.rl, F.map, &F.cat, &po, &got, &err);
                if (part) {
                    CHECK(st == LP_OK);
                    lp_reqstats_release(&got);
                    continue;
                }
                if (tamper) {
                    CHECK(st == LP_ERR_FORMAT);
                    CHECK(P.add_status == LP_ERR_FORMAT);
                } else {
                    CHECK(st == LP_OK);
                    CHECK(same_stats(&one, &got));
                    lp_reqstats_release(&got);
                }
            }
            for (int i = 0; i < 4; i++)
                lp_free(P.pack[i]);
        }
    lp_reqstats_release(&one);
    teardown(&F);
}

static void test_categories(void)
{
    lp_error err;
    lp_causal m;
    lp_causal_init(&m, &err);
    uint32_t id;
    lp_causal_segment(&m, "web", "a", "b", &id, &err);
    lp_causal_segment(&m, "web", "b", "c", &id, &err);
    m.seg_cross[id] = 1;
    lp_causal_segment(&m, "js", "x", "y", &id, &err);
    lp_causal_segment(&m, "odd", "x", "y", &id, &err);
    lp_reqcat c;
    lp_reqcat_init(&c);
    CHECK(lp_reqcat_assign(&c, &m, &err) == LP_OK); /* default: network, else the task */
    CHECK_EQ_I(c.ncat, 4);
    CHECK_STR(c.name[c.of_seg[1]], "network");
    CHECK_STR(c.name[c.of_seg[0]], "web");
    lp_reqcat_release(&c);
    char path[300];
    snprintf(path, sizeof path, "%s/cats", dir);
    FILE *f = fopen(path, "w");
    fputs("# comment\nnet network yes\nserver task ^web$\nclient segment ^js:x->y$\n", f);
    fclose(f);
    lp_reqcat_init(&c);
    CHECK(lp_reqcat_load(&c, path, &err) == LP_OK);
    CHECK(lp_reqcat_assign(&c, &m, &err) == LP_OK);
    CHECK_EQ_I(c.ncat, 4);
    CHECK_STR(c.name[c.of_seg[0]], "server");
    CHECK_STR(c.name[c.of_seg[1]], "net");
    CHECK_STR(c.name[c.of_seg[2]], "client");
    CHECK_STR(c.name[c.of_seg[3]], "other");
    lp_reqcat_release(&c);
    f = fopen(path, "w");
    fputs("a tsk x\n", f);
    fclose(f);
    lp_reqcat_init(&c);
    CHECK(lp_reqcat_load(&c, path, &err) == LP_ERR_ARG);
    lp_reqcat_release(&c);
    f = fopen(path, "w");
    fputs("a task (\n", f);
    fclose(f);
    lp_reqcat_init(&c);
    CHECK(lp_reqcat_load(&c, path, &err) == LP_ERR_ARG);
    lp_reqcat_release(&c);
    lp_causal_release(&m);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    test_against_naive();
    test_parts();
    test_categories();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return t_done("test_reqstats");
}
