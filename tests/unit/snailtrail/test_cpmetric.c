/* test_cpmetric.c: snapshots (snapshot.h) and critical participation (cpmetric.h)
 * against naive twins:
 *  - on thousands of random small traces and windows, the snapshot cut from the
 *    columns equals lp_pag_build(lp_trace_window()) vertex for vertex and edge for edge,
 *    and the per-window checks equal lp_check_run on the projected trace;
 *  - N, c(e) and CP from the counting passes equal a brute-force enumeration of every
 *    transient critical path on the reference graph (exact integers);
 *  - sampled paths are uniform (chi-square over the enumerated paths);
 *  - a window with more than 10^400 paths (10 workers, 400 all-to-all rounds): no
 *    overflow, N and every c(e) equal exact big-integer counts to 1e-12, sum of CP = 1;
 *  - a 2,000-worker barrier-synchronised window (> 10^308 paths) against its closed form;
 *  - edge projection: an activity spanning several windows appears cut in each;
 *  - zero-time message cycles are broken, and allocation failures are clean. */
#include "t.h"
#include "tutil.h"
#include "cptest.h"

#include <math.h>

/* ---- the differential test ---------------------------------------------------------- */

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

typedef struct pair { uint64_t a, b; } pair;
static int cmp_pair(const void *x, const void *y)
{
    const pair *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

static int windows_checked, paths_checked, nonzero_windows, with_msgs, with_p1, with_p2, with_skew, with_tail;

static void compare_window(const lp_trace *t, const lp_snapsrc *src, lp_snapshot *s, lp_cpm *c, int64_t ts,
                           int64_t te)
{
    lp_error err;
    CHECK(lp_snapshot_build(s, src, ts, te, &err) == LP_OK);
    lp_trace *wt;
    if (lp_trace_window(t, ts, te, &wt, &err) != LP_OK) {
        CHECK(0);
        return;
    }
    lp_pag g;
    CHECK(lp_pag_build(wt, &g, &err) == LP_OK);
    windows_checked++;
    /* vertices */
    int same = s->nv == g.nv;
    for (uint32_t w = 0; same && w <= t->nworkers; w++)
        same = s->voff[w] == g.voff[w];
    for (uint64_t v = 0; same && v < g.nv; v++) {
        same = s->vtime[v] == g.vtime[v] && (s->vact[v] == LP_NONE32) == (g.vact[v] == LP_NONE32);
        if (same && g.vact[v] != LP_NONE32) {
            uint32_t i = s->vact[v], j = g.vact[v];
            same = clampi(t->astart[i], ts, te) == wt->astart[j] && clampi(t->aend[i], ts, te) == wt->aend[j] &&
                   t->atype[i] == wt->atype[j];
        }
    }
    if (!same)
        fprintf(stderr, "snapshot differs from lp_trace_window for [%lld, %lld]\n", (long long)ts, (long long)te);
    CHECK(same);
    if (!same)
        goto out;
    /* message edges as (send vertex, receive vertex) pairs */
    CHECK_EQ_I(s->nin, g.ncedges);
    CHECK_EQ_I(s->nmsgs, wt->nmsgs);
    {
        pair *p1 = calloc(s->nin + 1, sizeof *p1), *p2 = calloc(g.ncedges + 1, sizeof *p2);
        size_t n1 = 0, n2 = 0;
        for (uint64_t v = 0; v < s->nv; v++)
            for (uint32_t k = s->vin[v]; k < s->vin[v + 1]; k++)
                p1[n1++] = (pair){s->in[k].sv, v};
        for (uint64_t m = 0; m < wt->nmsgs; m++)
            if (!(wt->mflags[m] & LP_MSG_SKEW))
                p2[n2++] = (pair){g.msv[m], g.mrv[m]};
        qsort(p1, n1, sizeof *p1, cmp_pair);
        qsort(p2, n2, sizeof *p2, cmp_pair);
        CHECK(n1 == n2 && memcmp(p1, p2, n1 * sizeof *p1) == 0);
        free(p1);
        free(p2);
    }
    /* checks */
    {
        lp_check ref;
        lp_snapcheck mine;
        lp_snapcheck_buf cb = {0};
        CHECK(lp_check_run(&g, &ref, &err) == LP_OK);
        CHECK(lp_snapshot_check(s, &cb, &mine, &err) == LP_OK);
        with_p1 += mine.np1 > 0;
        with_p2 += mine.np2 > 0;
        with_msgs += s->nin > 0;
        with_skew += wt->nskew > 0;
        for (uint32_t w = 0; w < t->nworkers; w++)
            if (s->w_flag[w]) {
                with_tail++;
                break;
            }
        CHECK_EQ_I(mine.np1, ref.np1);
        CHECK_EQ_I(mine.np2, ref.np2);
        CHECK_EQ_I(mine.p2_ns, ref.p2_ns);
        for (size_t i = 0; i < ref.np1 && i < LP_SNAPCHECK_KEEP && i < mine.np1; i++)
            CHECK(mine.p1_worker[i] == ref.p1[i].worker && mine.p1_time[i] == ref.p1[i].time);
        for (size_t i = 0; i < ref.np2 && i < LP_SNAPCHECK_KEEP && i < mine.np2; i++)
            CHECK(mine.p2_from[i] == ref.p2[i].from && mine.p2_to[i] == ref.p2[i].to);
        lp_check_release(&ref);
        lp_snapcheck_buf_release(&cb);
    }
    /* counts */
    CHECK(lp_cpm_compute(c, s, &err) == LP_OK);
    naive nv;
    if (naive_count(&nv, &g, 1e6)) {
        paths_checked++;
        if (nv.t1 > nv.t0) { /* (an instantaneous window's paths have no weight: not counted) */
            CHECK(c->n.e == 0 && c->n.m == nv.n); /* exact below 2^53 */
            CHECK(c->n_s.e == 0 && c->n_s.m == nv.n);
            CHECK(c->n.rd == 0);
        }
        int has = nv.n > 0 && nv.t1 > nv.t0;
        CHECK(c->has_paths == has);
        if (has) {
            nonzero_windows++;
            long double sum = 0;
            int ok = 1;
            for (uint64_t v = 1; v < s->nv; v++) {
                if (s->vact[v] == LP_NONE32)
                    continue;
                double cnt = lp_snapshot_live(s, v) ? c->cnt[v - 1].fwd.m * c->cnt[v].bwd.m : 0;
                if (!lp_snapshot_live(s, v) || c->cnt[v - 1].fwd.m == 0 || c->cnt[v].bwd.m == 0)
                    cnt = 0;
                ok &= cnt == nv.cw[v];
                double ref = nv.cw[v] * (double)(s->vtime[v] - s->vtime[v - 1]) / (nv.n * (double)(nv.t1 - nv.t0));
                ok &= fabs(c->cpw[v] - ref) <= 1e-12 * (ref > 1e-300 ? ref : 1e-300) + 1e-300;
                sum += ref;
            }
            for (uint64_t v = 0; v < s->nv; v++)
                for (uint32_t k = s->vin[v]; k < s->vin[v + 1]; k++) {
                    uint32_t sv = s->in[k].sv;
                    double cnt = c->cnt[sv].fwd.m * c->cnt[v].bwd.m;
                    /* the reference message: same pair of vertices; sum over duplicates */
                    double refc = 0;
                    int dups = 0;
                    for (uint64_t m = 0; m < wt->nmsgs; m++)
                        if (!(wt->mflags[m] & LP_MSG_SKEW) && g.msv[m] == sv && g.mrv[m] == v) {
                            refc = nv.cm[m];
                            dups++;
                        }
                    ok &= dups >= 1 && cnt == refc;
                    double ref = refc * (double)(s->vtime[v] - s->vtime[sv]) / (nv.n * (double)(nv.t1 - nv.t0));
                    ok &= fabs(c->cpin[k] - ref) <= 1e-12 * (ref > 1e-300 ? ref : 1e-300) + 1e-300;
                }
            for (uint64_t m = 0; m < wt->nmsgs; m++)
                if (!(wt->mflags[m] & LP_MSG_SKEW))
                    sum += nv.cm[m] * (double)(wt->mrecv[m] - wt->msend[m]) / (nv.n * (double)(nv.t1 - nv.t0));
            if (!ok)
                fprintf(stderr, "counts differ from enumeration for [%lld, %lld]\n", (long long)ts, (long long)te);
            CHECK(ok);
            CHECK(fabsl(sum - 1) < 1e-12);      /* Eq. 5 holds for the naive twin */
            CHECK(fabs(c->sum - 1) <= 1e-12);   /* and for the counting algorithm */
            CHECK(fabs(c->sum - 1) <= c->err_bound);
        } else {
            CHECK(c->sum == 0);
        }
    }
    naive_free(&nv);
out:
    lp_pag_release(&g);
    lp_trace_free(wt);
}

static void test_differential(void)
{
    lp_snapshot s;
    lp_cpm c;
    lp_snapshot_init(&s);
    lp_cpm_init(&c);
    for (int it = 0; it < 1500; it++) {
        lp_trace *t = random_trace(it % 3 == 0);
        if (!t)
            continue;
        lp_snapsrc src;
        lp_error err;
        CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
        int64_t ws[16], we[16];
        int nwin = 0;
        /* the whole trace, random windows, windows at event instants, degenerate ones */
        ws[nwin] = t->tmin;
        we[nwin++] = t->tmax;
        for (int k = 0; k < 6; k++) {
            int64_t a = (int64_t)rnd(50) - 5, b = a + (int64_t)rnd(30);
            ws[nwin] = a;
            we[nwin++] = b;
        }
        if (t->nmsgs) {
            uint32_t m = rnd((uint32_t)t->nmsgs);
            ws[nwin] = t->msend[m];
            we[nwin++] = t->mrecv[m] + (int64_t)rnd(5);
            ws[nwin] = t->mrecv[m] - 1;
            we[nwin++] = t->msend[m] + 1;
        }
        ws[nwin] = 7;
        we[nwin++] = 7;
        /* half the traces use a plan covering some of the bounds */
        if (it & 1) {
            int64_t q[32];
            for (int k = 0; k < nwin; k++) {
                q[2 * k] = ws[k];
                q[2 * k + 1] = we[k];
            }
            CHECK(lp_snapsrc_plan(&src, q, (size_t)(2 * nwin - 2), &err) == LP_OK);
        }
        for (int k = 0; k < nwin; k++)
            if (we[k] >= ws[k])
                compare_window(t, &src, &s, &c, ws[k], we[k]);
        /* tumbling windows share out the trace's logged events exactly */
        {
            int64_t size = 1 + (int64_t)rnd(12);
            uint64_t ev = 0;
            for (int64_t a = t->tmin; a <= t->tmax; a += size) {
                CHECK(lp_snapshot_build(&s, &src, a, a + size, &err) == LP_OK);
                ev += s.nevents;
            }
            CHECK_EQ_I(ev, 2 * (t->nacts - t->ngaps) + 2 * t->nmsgs);
        }
        lp_snapsrc_release(&src);
        lp_trace_free(t);
    }
    lp_snapshot_release(&s);
    lp_cpm_release(&c);
    fprintf(stderr,
            "differential: %d windows, %d enumerated, %d with paths, %d with message edges, %d with messages across "
            "a bound, %d with skewed messages, %d break property 1, %d property 2\n",
            windows_checked, paths_checked, nonzero_windows, with_msgs, with_tail, with_skew, with_p1, with_p2);
    CHECK(windows_checked > 5000);
    CHECK(nonzero_windows > 2000);
    CHECK(with_msgs > 1000 && with_tail > 500 && with_skew > 100 && with_p1 > 100 && with_p2 > 100);
}


/* ---- exact big integers (the high-precision reference) --------------------------------- */

#define BIG_LIMBS 96
typedef struct big {
    uint32_t n;                 /* limbs used */
    uint32_t d[BIG_LIMBS];      /* little endian */
} big;

static void big_set(big *a, uint32_t v)
{
    a->n = v != 0;
    a->d[0] = v;
}

static int big_add(big *a, const big *b)
{
    uint64_t carry = 0;
    uint32_t n = a->n > b->n ? a->n : b->n;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t x = (uint64_t)(i < a->n ? a->d[i] : 0) + (i < b->n ? b->d[i] : 0) + carry;
        a->d[i] = (uint32_t)x;
        carry = x >> 32;
    }
    a->n = n;
    if (carry) {
        if (n == BIG_LIMBS)
            return -1;
        a->d[a->n++] = (uint32_t)carry;
    }
    return 0;
}

/* log2 of a from its top 96 bits (long double: 64-bit mantissa) */
static long double big_log2(const big *a)
{
    if (!a->n)
        return -INFINITY;
    long double top = 0;
    uint32_t k = a->n < 3 ? a->n : 3;
    for (uint32_t i = 0; i < k; i++)
        top = top * 4294967296.0L + a->d[a->n - 1 - i];
    return log2l(top) + 32.0L * (long double)(a->n - k);
}

/* Exact fwd/bwd counts on a reference PAG in time order (the graphs used here have no
 * zero-length messages, so time order is a topological order). */
typedef struct bigcount {
    big *fwd, *bwd;
    big n;
    int64_t t0, t1;
    int overflow;
} bigcount;

static const lp_pag *sort_g;
static int cmp_vt_q(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    int64_t tx = sort_g->vtime[x], ty = sort_g->vtime[y];
    return tx < ty ? -1 : tx > ty ? 1 : (x < y ? -1 : x > y);
}

static void bigcount_run(bigcount *bc, const lp_pag *g)
{
    const lp_trace *t = g->t;
    memset(bc, 0, sizeof *bc);
    bc->fwd = calloc(g->nv, sizeof *bc->fwd);
    bc->bwd = calloc(g->nv, sizeof *bc->bwd);
    uint64_t *ord = malloc(g->nv * sizeof *ord);
    uint32_t *vw = malloc(g->nv * sizeof *vw);
    bc->t0 = INT64_MAX;
    bc->t1 = INT64_MIN;
    for (uint32_t w = 0; w < g->nworkers; w++)
        for (uint64_t v = g->voff[w]; v < g->voff[w + 1]; v++) {
            vw[v] = w;
            ord[v] = v;
            bc->t0 = g->vtime[v] < bc->t0 ? g->vtime[v] : bc->t0;
            bc->t1 = g->vtime[v] > bc->t1 ? g->vtime[v] : bc->t1;
        }
    /* out-message lists */
    uint64_t *ooff = calloc(g->nv + 1, sizeof *ooff);
    uint32_t *omsg = malloc((t->nmsgs + 1) * sizeof *omsg);
    for (uint64_t m = 0; m < t->nmsgs; m++)
        if (!(t->mflags[m] & LP_MSG_SKEW))
            ooff[g->msv[m] + 1]++;
    for (uint64_t v = 0; v < g->nv; v++)
        ooff[v + 1] += ooff[v];
    uint64_t *pos = malloc((g->nv + 1) * sizeof *pos);
    memcpy(pos, ooff, g->nv * sizeof *pos);
    for (uint64_t m = 0; m < t->nmsgs; m++)
        if (!(t->mflags[m] & LP_MSG_SKEW))
            omsg[pos[g->msv[m]]++] = (uint32_t)m;
    sort_g = g;
    qsort(ord, g->nv, sizeof *ord, cmp_vt_q);
    for (uint64_t i = 0; i < g->nv; i++) {
        uint64_t v = ord[i];
        big_set(&bc->fwd[v], g->vtime[v] == bc->t0);
        if (v > g->voff[vw[v]] && lp_pag_wedge_live(g, v))
            bc->overflow |= big_add(&bc->fwd[v], &bc->fwd[v - 1]);
        for (uint32_t k = g->vin[v]; k < g->vin[v + 1]; k++)
            bc->overflow |= big_add(&bc->fwd[v], &bc->fwd[g->msv[g->inmsg[k]]]);
    }
    for (uint64_t i = g->nv; i-- > 0;) {
        uint64_t v = ord[i];
        big_set(&bc->bwd[v], g->vtime[v] == bc->t1);
        if (v + 1 < g->voff[vw[v] + 1] && lp_pag_wedge_live(g, v + 1))
            bc->overflow |= big_add(&bc->bwd[v], &bc->bwd[v + 1]);
        for (uint64_t k = ooff[v]; k < ooff[v + 1]; k++)
            bc->overflow |= big_add(&bc->bwd[v], &bc->bwd[g->mrv[omsg[k]]]);
    }
    for (uint32_t w = 0; w < g->nworkers; w++)
        if (g->voff[w] < g->voff[w + 1] && g->vtime[g->voff[w + 1] - 1] == bc->t1)
            bc->overflow |= big_add(&bc->n, &bc->fwd[g->voff[w + 1] - 1]);
    free(ooff);
    free(omsg);
    free(pos);
    free(ord);
    free(vw);
}

static void bigcount_free(bigcount *bc)
{
    free(bc->fwd);
    free(bc->bwd);
}

/* K workers, R rounds: each worker works [rT, rT + T] and, at a random instant inside,
 * sends to every other worker (each message dropped with probability `drop`),
 * received at a random later instant of the round. */
static lp_trace *all_to_all(uint32_t K, uint32_t R, int random_times, uint32_t drop_pct)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_builder *b;
    lp_error err;
    if (lp_builder_new(&b, &ds, NULL, &err))
        return NULL;
    uint32_t wid[64];
    for (uint32_t w = 0; w < K; w++) {
        char name[16];
        snprintf(name, sizeof name, "w%u", w);
        lp_builder_worker(b, name, strlen(name), &wid[w], &err);
    }
    const int64_t T = 10;
    uint64_t line = 0, id = 0;
    for (uint32_t r = 0; r < R; r++)
        for (uint32_t w = 0; w < K; w++) {
            int64_t base = (int64_t)r * T;
            lp_builder_activity(b, wid[w], base, base + T, LP_TYPE_PROCESSING, LP_STR_NONE, 0, ++line, &err);
            int64_t send = base + (random_times ? 1 + (int64_t)rnd(5) : 5);
            for (uint32_t x = 0; x < K; x++) {
                if (x == w || (drop_pct && rnd(100) < drop_pct))
                    continue;
                int64_t recv = random_times ? send + 1 + (int64_t)rnd((uint32_t)(base + T - send)) : base + T;
                lp_builder_message(b, wid[w], send, wid[x], recv, ++id, 0, ++line, &err);
            }
        }
    lp_trace *t = NULL;
    if (lp_builder_finish(b, &t, &err) || ds.nerrors) {
        lp_trace_free(t);
        t = NULL;
    }
    lp_diags_release(&ds);
    return t;
}

/* > 10^400 paths: the symmetric case against its closed form, a random one against
 * exact big-integer counts. */
static void test_huge(void)
{
    lp_error err;
    /* symmetric: N = K^(R+1); worker edges before the send have c = K^R, the others and
     * the messages K^(R-1); CP = 1/(2RK) and 1/(2RK^2) */
    {
        const uint32_t K = 10, R = 400;
        lp_trace *t = all_to_all(K, R, 0, 0);
        CHECK(t != NULL);
        lp_snapsrc src;
        lp_snapshot s;
        lp_cpm c;
        lp_snapshot_init(&s);
        lp_cpm_init(&c);
        CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
        CHECK(lp_snapshot_build(&s, &src, t->tmin, t->tmax, &err) == LP_OK);
        CHECK(lp_cpm_compute(&c, &s, &err) == LP_OK);
        CHECK(c.has_paths);
        CHECK(fabs(c.log10n - 401.0) < 1e-12);
        CHECK(c.log10n > 400);
        CHECK(fabs(c.sum - 1) <= 1e-9);
        CHECK(c.err_bound < 1e-9);
        double a = 1.0 / (2.0 * R * K), b = 1.0 / (2.0 * R * K * K);
        int ok = 1;
        for (uint64_t v = 1; v < s.nv; v++) {
            if (s.vact[v] == LP_NONE32)
                continue;
            int first_half = (s.vtime[v] % 10) == 5;
            double ref = first_half ? a : b;
            ok &= fabs(c.cpw[v] - ref) <= 1e-12 * ref;
        }
        for (uint64_t k = 0; k < s.nin; k++)
            ok &= fabs(c.cpin[k] - b) <= 1e-12 * b;
        CHECK(ok);
        char buf[64];
        CHECK_STR(lp_xnum_fmt(c.n, 4, buf, sizeof buf), "1.000e+401");
        lp_snapshot_release(&s);
        lp_cpm_release(&c);
        lp_snapsrc_release(&src);
        lp_trace_free(t);
    }
    /* random send and receive instants, 8% of the messages dropped: exact counts */
    {
        const uint32_t K = 10, R = 480;
        lp_trace *t = all_to_all(K, R, 1, 8);
        CHECK(t != NULL);
        lp_snapsrc src;
        lp_snapshot s;
        lp_cpm c;
        lp_snapshot_init(&s);
        lp_cpm_init(&c);
        CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
        int64_t ts = t->tmin + 3, te = t->tmax - 4; /* cut mid-round at both ends */
        CHECK(lp_snapshot_build(&s, &src, ts, te, &err) == LP_OK);
        CHECK(lp_cpm_compute(&c, &s, &err) == LP_OK);
        lp_trace *wt;
        CHECK(lp_trace_window(t, ts, te, &wt, &err) == LP_OK);
        lp_pag g;
        CHECK(lp_pag_build(wt, &g, &err) == LP_OK);
        bigcount bc;
        bigcount_run(&bc, &g);
        CHECK(!bc.overflow);
        long double l2n = big_log2(&bc.n);
        fprintf(stderr, "huge: N = 10^%.3f (exact), %.3f (counted), err bound %.2e, sum - 1 = %.2e\n",
                (double)(l2n * 0.30102999566398119521L), c.log10n, c.err_bound, c.sum - 1);
        CHECK(l2n * 0.30102999566398119521L > 400);
        CHECK(fabsl((long double)c.log10n - l2n * 0.30102999566398119521L) < 1e-12L * 400);
        /* N itself to 1e-12 relative: compare mantissas through log2 differences */
        CHECK(fabsl(exp2l(log2l((long double)c.n.m) + 256.0L * c.n.e - l2n) - 1) < 1e-12L);
        CHECK(fabs(c.sum - 1) <= 1e-9);
        CHECK(fabs(c.sum - 1) <= c.err_bound);
        CHECK(c.err_bound < 1e-9);
        long double span = (long double)(bc.t1 - bc.t0);
        int ok = 1;
        long double worst = 0;
        for (uint64_t v = 1; v < s.nv; v++) {
            if (s.vact[v] == LP_NONE32 || !lp_pag_wedge_live(&g, v) || v == g.voff[lp_pag_vworker(&g, v)])
                continue;
            /* c(e) = fwd[v-1] * bwd[v], compared through logs (no big multiply needed) */
            if (!bc.fwd[v - 1].n || !bc.bwd[v].n) {
                ok &= c.cpw[v] == 0;
                continue;
            }
            long double l = big_log2(&bc.fwd[v - 1]) + big_log2(&bc.bwd[v]) - l2n;
            long double ref = exp2l(l) * (long double)(s.vtime[v] - s.vtime[v - 1]) / span;
            long double rel = fabsl(c.cpw[v] - ref) / ref;
            worst = rel > worst ? rel : worst;
            ok &= rel < 1e-9L;
        }
        for (uint64_t v = 0; v < s.nv; v++)
            for (uint32_t k = s.vin[v]; k < s.vin[v + 1]; k++) {
                uint32_t sv = s.in[k].sv;
                if (!bc.fwd[sv].n || !bc.bwd[v].n) {
                    ok &= c.cpin[k] == 0;
                    continue;
                }
                long double l = big_log2(&bc.fwd[sv]) + big_log2(&bc.bwd[v]) - l2n;
                long double ref = exp2l(l) * (long double)(s.vtime[v] - s.vtime[sv]) / span;
                long double rel = fabsl(c.cpin[k] - ref) / ref;
                worst = rel > worst ? rel : worst;
                ok &= rel < 1e-9L;
            }
        fprintf(stderr, "huge: worst relative CP error against exact counts %.2Le\n", worst);
        CHECK(ok);
        bigcount_free(&bc);
        lp_pag_release(&g);
        lp_trace_free(wt);
        lp_snapshot_release(&s);
        lp_cpm_release(&c);
        lp_snapsrc_release(&src);
        lp_trace_free(t);
    }
}

/* 2,000 workers synchronised by a coordinator every round: N = K^(R+1) > 10^400, and
 * every CP has a closed form (docs/analyses/critical-participation.md, "Tests"). */
static void test_barrier(void)
{
    const uint32_t K = 2000, R = 125;
    const int64_t T = 100;
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_builder *b;
    lp_error err;
    CHECK(lp_builder_new(&b, &ds, NULL, &err) == LP_OK);
    uint32_t *wid = malloc((K + 1) * sizeof *wid);
    for (uint32_t w = 0; w <= K; w++) {
        char name[16];
        snprintf(name, sizeof name, w < K ? "w%u" : "coordinator", w);
        lp_builder_worker(b, name, strlen(name), &wid[w], &err);
    }
    uint64_t line = 0, id = 0;
    for (uint32_t r = 0; r < R; r++) {
        int64_t base = (int64_t)r * T;
        for (uint32_t w = 0; w < K; w++) {
            int64_t aw = 10 + (int64_t)(w % 7);
            lp_builder_activity(b, wid[w], base, base + aw, LP_TYPE_PROCESSING, LP_STR_NONE, 0, ++line, &err);
            lp_builder_message(b, wid[w], base + aw, wid[K], base + aw + 1, ++id, 0, ++line, &err);
            lp_builder_message(b, wid[K], base + T - 2, wid[w], base + T, ++id, 0, ++line, &err);
        }
        lp_builder_activity(b, wid[K], base + 11, base + T - 2, LP_TYPE_BARRIER, LP_STR_NONE, 0, ++line, &err);
    }
    lp_trace *t = NULL;
    CHECK(lp_builder_finish(b, &t, &err) == LP_OK);
    CHECK(ds.nerrors == 0);
    lp_diags_release(&ds);
    if (!t) {
        free(wid);
        return;
    }
    lp_snapsrc src;
    lp_snapshot s;
    lp_cpm c;
    lp_snapshot_init(&s);
    lp_cpm_init(&c);
    CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
    CHECK(lp_snapshot_build(&s, &src, 0, (int64_t)R * T, &err) == LP_OK);
    CHECK(lp_cpm_compute(&c, &s, &err) == LP_OK);
    double expect = (R + 1) * log10((double)K);
    fprintf(stderr, "barrier: %u workers, %u rounds, N = 10^%.6f (expected 10^%.6f), sum - 1 = %.2e, bound %.2e\n", K,
            R, c.log10n, expect, c.sum - 1, c.err_bound);
    CHECK(c.log10n > 400);
    CHECK(fabs(c.log10n - expect) < 1e-10 * expect);
    CHECK(fabs(c.sum - 1) <= 1e-9 && c.err_bound <= 1e-9);
    /* closed forms: a worker's work edge a/(KRT), arrival 1/(KRT), release 2/(KRT) */
    const double unit = 1.0 / ((double)K * R * T);
    int ok = 1;
    for (uint32_t w = 0; w < K; w++)
        for (uint64_t v = s.voff[w] + 1; v < s.voff[w + 1]; v++) {
            if (!lp_snapshot_live(&s, v)) {
                ok &= c.cpw[v] == 0;
                continue;
            }
            double ref = (double)(s.vtime[v] - s.vtime[v - 1]) * unit;
            ok &= fabs(c.cpw[v] - ref) <= 1e-12 * ref;
        }
    for (uint64_t v = 0; v < s.nv; v++)
        for (uint32_t k = s.vin[v]; k < s.vin[v + 1]; k++) {
            double ref = (double)(s.vtime[v] - s.vtime[s.in[k].sv]) * unit;
            ok &= fabs(c.cpin[k] - ref) <= 1e-12 * ref;
        }
    /* the coordinator's edge ending at v carries (arrivals so far) * len * unit */
    for (uint64_t v = s.voff[K] + 1; v < s.voff[K + 1]; v++) {
        if (!lp_snapshot_live(&s, v))
            continue;
        int64_t base = (s.vtime[v - 1] / T) * T, off = s.vtime[v - 1] - base;
        double arrived = 0;
        for (uint32_t w = 0; w < K; w++)
            arrived += 10 + (int64_t)(w % 7) + 1 <= off;
        double ref = arrived * (double)(s.vtime[v] - s.vtime[v - 1]) * unit;
        ok &= fabs(c.cpw[v] - ref) <= 1e-12 * ref;
    }
    CHECK(ok);
    lp_snapshot_release(&s);
    lp_cpm_release(&c);
    lp_snapsrc_release(&src);
    lp_trace_free(t);
    free(wid);
}

/* Edge projection (Def. 5-6): an activity spanning several tumbling windows appears cut
 * in each, the windows' events add up to the trace's, and CP sums to 1 in each. */
static void test_projection(void)
{
    lp_diags ds;
    /* b works [5, 95] in one activity; a sends it work every 10 ns (so paths exist) */
    const char *text = "A a 0 100 processing\n"
                       "A b 5 95 processing\n"
                       "M a 10 b 12\nM a 30 b 33\nM a 50 b 52\nM a 70 b 75\nM b 80 a 85\n";
    lp_trace *t = load_text(text, &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_error err;
    lp_snapsrc src;
    CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
    lp_snapshot s;
    lp_cpm c;
    lp_snapshot_init(&s);
    lp_cpm_init(&c);
    uint32_t wb = lp_trace_find_worker(t, "b");
    uint64_t events = 0;
    for (int64_t ts = 0; ts < 100; ts += 20) {
        CHECK(lp_snapshot_build(&s, &src, ts, ts + 20, &err) == LP_OK);
        events += s.nevents;
        /* b's edges in this window cover exactly [max(5, ts), min(95, ts + 20)] of its
         * one activity */
        int64_t lo = ts > 5 ? ts : 5, hi = ts + 20 < 95 ? ts + 20 : 95;
        uint64_t a = s.voff[wb], z = s.voff[wb + 1];
        CHECK(z > a);
        if (z > a) {
            CHECK_EQ_I(s.vtime[a], lo);
            CHECK_EQ_I(s.vtime[z - 1], hi);
            int64_t covered = 0;
            for (uint64_t v = a + 1; v < z; v++) {
                CHECK(s.vact[v] != LP_NONE32 && t->astart[s.vact[v]] == 5 && t->aend[s.vact[v]] == 95);
                covered += s.vtime[v] - s.vtime[v - 1];
            }
            CHECK_EQ_I(covered, hi - lo);
        }
        CHECK(lp_cpm_compute(&c, &s, &err) == LP_OK);
        CHECK(c.has_paths);
        CHECK(fabs(c.sum - 1) <= 1e-12);
    }
    /* 2 events per activity and per message, in [0, 100): the end of a at 100 is not */
    CHECK_EQ_I(events, 2 * 2 + 2 * 5 - 1);
    lp_snapshot_release(&s);
    lp_cpm_release(&c);
    lp_snapsrc_release(&src);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* Sampled paths are uniform: on random windows with few paths, every path's frequency
 * over many draws passes a chi-square test, and each edge is drawn with frequency
 * c(e)/N. */
static void test_sampling(void)
{
    lp_snapshot s;
    lp_cpm c;
    lp_cppath p = {0};
    lp_snapshot_init(&s);
    lp_cpm_init(&c);
    int tested = 0, failed = 0;
    uint64_t rng = lp_rng_seed(99, 0);
    for (int it = 0; it < 400 && tested < 40; it++) {
        lp_trace *t = random_trace(0);
        if (!t)
            continue;
        lp_snapsrc src;
        lp_error err;
        CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
        CHECK(lp_snapshot_build(&s, &src, t->tmin, t->tmax, &err) == LP_OK);
        CHECK(lp_cpm_compute(&c, &s, &err) == LP_OK);
        if (c.has_paths && c.n.m >= 4 && c.n.m <= 40 && c.n.e == 0) {
            tested++;
            /* paths as hashes of their edge lists */
            enum { DRAWS = 20000 };
            uint64_t *hs = malloc(DRAWS * sizeof *hs);
            int valid = 1;
            for (int d = 0; d < DRAWS; d++) {
                CHECK(lp_cpm_sample(&c, &rng, &p, &err) == LP_OK);
                uint64_t h = 1469598103934665603ULL;
                int64_t len = 0;
                for (size_t i = 0; i < p.n; i++) {
                    h = (h ^ p.e[i]) * 1099511628211ULL;
                    if (p.e[i] & LP_CPPATH_MSG) {
                        uint64_t k = p.e[i] & ~LP_CPPATH_MSG;
                        uint64_t v = 0;
                        while (s.vin[v + 1] <= k)
                            v++;
                        len += s.vtime[v] - s.vtime[s.in[k].sv];
                    } else {
                        valid &= lp_snapshot_live(&s, p.e[i]);
                        len += s.vtime[p.e[i]] - s.vtime[p.e[i] - 1];
                    }
                }
                valid &= len == s.t1 - s.t0; /* a transient path spans the window */
                hs[d] = h;
            }
            CHECK(valid);
            /* count distinct paths */
            uint64_t keys[64];
            int cnt[64], nk = 0;
            for (int d = 0; d < DRAWS; d++) {
                int f = -1;
                for (int q = 0; q < nk; q++)
                    if (keys[q] == hs[d])
                        f = q;
                if (f < 0 && nk < 64) {
                    keys[nk] = hs[d];
                    cnt[nk++] = 0;
                    f = nk - 1;
                }
                if (f >= 0)
                    cnt[f]++;
            }
            CHECK(nk == (int)c.n.m); /* every path is drawn */
            double e = (double)DRAWS / c.n.m, chi = 0;
            for (int q = 0; q < nk; q++)
                chi += (cnt[q] - e) * (cnt[q] - e) / e;
            /* chi-square with N-1 <= 39 degrees of freedom: 99.9th percentile < 73.4 */
            if (chi > 73.4)
                failed++;
            free(hs);
        }
        lp_snapsrc_release(&src);
        lp_trace_free(t);
    }
    fprintf(stderr, "sampling: %d windows tested, %d chi-square failures\n", tested, failed);
    CHECK(tested >= 20);
    CHECK(failed <= 1);
    lp_cppath_release(&p);
    lp_snapshot_release(&s);
    lp_cpm_release(&c);
}

/* A zero-time message cycle is broken by ignoring one message; CP still sums to 1. */
static void test_cycle(void)
{
    lp_diags ds;
    const char *text = "A a 0 10 processing\nA a 10 20 processing\nA b 0 10 processing\nA b 10 20 processing\n"
                       "M a 10 b 10\nM b 10 a 10\n";
    lp_trace *t = load_text(text, &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_error err;
    lp_snapsrc src;
    lp_snapshot s;
    lp_cpm c;
    lp_snapshot_init(&s);
    lp_cpm_init(&c);
    CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
    CHECK(lp_snapshot_build(&s, &src, 0, 20, &err) == LP_OK);
    CHECK(lp_cpm_compute(&c, &s, &err) == LP_OK);
    CHECK_EQ_I(c.ncycles, 1);
    /* with one of the two messages ignored: the two straight paths and one crossing */
    CHECK(c.has_paths && c.n.m == 3);
    CHECK(fabs(c.sum - 1) <= 1e-12);
    lp_snapshot_release(&s);
    lp_cpm_release(&c);
    lp_snapsrc_release(&src);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* A window of almost the whole int64 range with a handful of vertices: the counting's
 * time slices must not overflow (found by fuzz_snailtrail: a loop over every ns). */
static void test_wide_window(void)
{
    lp_diags ds;
    const char *text = "A a -4611686018427387904 0 processing\nA a 0 4611686018427387904 processing\n"
                       "A b -4611686018427387904 4611686018427387904 processing\nM a 0 b 4611686018427387904\n";
    lp_trace *t = load_text(text, &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_error err;
    lp_snapsrc src;
    lp_snapshot s;
    lp_cpm c;
    lp_snapshot_init(&s);
    lp_cpm_init(&c);
    CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
    CHECK(lp_snapshot_build(&s, &src, INT64_MIN / 2, INT64_MAX / 2, &err) == LP_OK);
    CHECK(lp_cpm_compute(&c, &s, &err) == LP_OK);
    CHECK(c.has_paths && fabs(c.sum - 1) <= 1e-9);
    lp_snapshot_release(&s);
    lp_cpm_release(&c);
    lp_snapsrc_release(&src);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* Every allocation failing in turn: a clean error, no leak, no crash (ASan build). */
static void test_nomem(void)
{
    lp_diags ds;
    const char *text = "A a 0 10 processing op1\nA a 12 20 processing op1\nA b 0 20 io op2\n"
                       "M a 10 b 11\nM b 11 a 12\nM a 15 b 25\n";
    lp_trace *t = load_text(text, &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    int ok_seen = 0;
    for (long n = 0; n < 80; n++) {
        lp_error err;
        lp_snapsrc src;
        lp_snapshot s;
        lp_cpm c;
        lp_cppath p = {0};
        lp_snapshot_init(&s);
        lp_cpm_init(&c);
        lp_alloc_fail_after(n);
        lp_status st = lp_snapsrc_init(&src, t, &err);
        if (!st) {
            int64_t q[2] = {0, 20};
            st = lp_snapsrc_plan(&src, q, 2, &err);
            if (!st)
                st = lp_snapshot_build(&s, &src, 0, 20, &err);
            if (!st)
                st = lp_cpm_compute(&c, &s, &err);
            uint64_t rng = 1;
            if (!st)
                st = lp_cpm_sample(&c, &rng, &p, &err);
            lp_snapsrc_release(&src);
        }
        lp_alloc_fail_after(-1);
        CHECK(st == LP_OK || st == LP_ERR_NOMEM);
        ok_seen |= st == LP_OK;
        lp_cppath_release(&p);
        lp_snapshot_release(&s);
        lp_cpm_release(&c);
    }
    CHECK(ok_seen);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* lp_xnum: exactness below 2^53, normalisation, formatting. */
static void test_xnum(void)
{
    lp_xnum a = lp_xnum_from_double(3), b = lp_xnum_from_double(4);
    lp_xnum x = lp_xnum_add(a, b);
    CHECK(x.m == 7 && x.e == 0 && x.rd == 0);
    x = lp_xnum_mul(a, b);
    CHECK(x.m == 12 && x.rd == 0);
    /* 2^300 = 2^44 * 2^256 */
    lp_xnum p = lp_xnum_one();
    lp_xnum two = lp_xnum_from_double(2);
    for (int i = 0; i < 300; i++)
        p = lp_xnum_mul(p, two);
    CHECK(p.e == 1 && p.m == 0x1p44);
    CHECK(fabs(lp_xnum_log10(p) - 300 * log10(2.0)) < 1e-12);
    CHECK(lp_xnum_ratio(lp_xnum_one(), p) == 0x1p-300);
    CHECK(lp_xnum_cmp(p, a) > 0 && lp_xnum_cmp(a, p) < 0 && lp_xnum_cmp(a, a) == 0);
    char buf[64];
    CHECK_STR(lp_xnum_fmt(lp_xnum_from_double(123456), 3, buf, sizeof buf), "123456");
    CHECK_STR(lp_xnum_fmt(p, 4, buf, sizeof buf), "2.037e+90");
    CHECK_STR(lp_xnum_fmt(lp_xnum_zero(), 4, buf, sizeof buf), "0");
    /* 10^4000 by repeated multiplication: the mantissa stays exact to ~1e-13 */
    lp_xnum ten = lp_xnum_from_double(10), q = lp_xnum_one();
    for (int i = 0; i < 4000; i++)
        q = lp_xnum_mul(q, ten);
    CHECK(fabs(lp_xnum_log10(q) - 4000) < 1e-9);
    CHECK_STR(lp_xnum_fmt(q, 6, buf, sizeof buf), "1.00000e+4000");
    /* adding a much smaller number leaves the larger unchanged */
    CHECK(lp_xnum_add(q, a).m == q.m);
}

int main(void)
{
    test_xnum();
    test_differential();
    test_huge();
    test_barrier();
    test_projection();
    test_sampling();
    test_cycle();
    test_wide_window();
    test_nomem();
    return t_done("test_cpmetric");
}
