/* test_cpath.c: the whole-trace critical path: the MODEL.md example, hand cases, and a
 * differential test against a naive implementation (exhaustive enumeration of every
 * backward path that avoids waiting edges, on a graph built independently of pag.c)
 * on 1,000 random small traces. */
#include "t.h"
#include "tutil.h"

/* ---- helpers ------------------------------------------------------------------- */

static int compute(const lp_trace *t, lp_cpath *cp)
{
    lp_pag g;
    lp_error err;
    if (lp_pag_build(t, &g, &err))
        return -1;
    int rc = lp_cpath_compute(&g, cp, &err) ? -1 : 0;
    lp_pag_release(&g);
    return rc;
}

static int64_t sum_weights(const lp_cpath *cp)
{
    int64_t s = 0;
    for (size_t i = 0; i < cp->n; i++)
        s += cp->e[i].end - cp->e[i].start;
    return s;
}

/* Elements are contiguous: each starts where the previous ended. */
static int contiguous(const lp_cpath *cp)
{
    for (size_t i = 1; i < cp->n; i++)
        if (cp->e[i].start != cp->e[i - 1].end)
            return 0;
    return cp->n == 0 || (cp->e[0].start == cp->start && cp->e[cp->n - 1].end == cp->end);
}

static void test_model_example(void)
{
    lp_diags ds;
    lp_trace *t = load_text("longpole-trace 1\n"
                            "A w1 0 40 processing map\n"
                            "M w1 40 w2 55 id=7 bytes=4096\n"
                            "A w1 40 100 serialization map\n"
                            "A w2 0 30 processing count\n"
                            "A w2 55 110 processing count\n",
                            &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_cpath cp;
    CHECK(compute(t, &cp) == 0);
    CHECK_EQ_I(cp.total, 110);
    CHECK_EQ_I(cp.n, 3);
    if (cp.n == 3) {
        uint32_t w1 = lp_trace_find_worker(t, "w1"), w2 = lp_trace_find_worker(t, "w2");
        CHECK(cp.e[0].kind == LP_CP_ACTIVITY && cp.e[0].worker == w1 && cp.e[0].start == 0 && cp.e[0].end == 40);
        CHECK(cp.e[1].kind == LP_CP_MESSAGE && cp.e[1].start == 40 && cp.e[1].end == 55 && t->mid[cp.e[1].index] == 7);
        CHECK(cp.e[2].kind == LP_CP_ACTIVITY && cp.e[2].worker == w2 && cp.e[2].start == 55 && cp.e[2].end == 110);
    }
    CHECK_EQ_I(sum_weights(&cp), cp.total);
    /* breakdown: processing 95 of 110 on the path; serialization only in the profile */
    lp_breakdown b;
    lp_error err;
    CHECK(lp_breakdown_compute(t, &cp, LP_BY_TYPE, &b, &err) == LP_OK);
    int seen_ser = 0;
    for (size_t i = 0; i < b.n; i++) {
        const char *k = lp_breakdown_label(t, &b, &b.rows[i]);
        if (strcmp(k, "processing") == 0) {
            CHECK_EQ_I(b.rows[i].path_ns, 95);
            CHECK_EQ_I(b.rows[i].prof_ns, 40 + 30 + 55);
        } else if (strcmp(k, "serialization") == 0) {
            seen_ser = 1;
            CHECK_EQ_I(b.rows[i].path_ns, 0);
            CHECK_EQ_I(b.rows[i].prof_ns, 60);
        } else if (strcmp(k, "communication") == 0) {
            CHECK_EQ_I(b.rows[i].path_ns, 15);
        } else if (strcmp(k, "waiting") == 0) {
            CHECK(0); /* waiting is not busy time: no row */
        }
    }
    CHECK(seen_ser);
    CHECK_EQ_I(b.path_total, 110);
    CHECK_EQ_I(b.waiting_ns, 25);
    CHECK_EQ_I(b.prof_total, 40 + 30 + 55 + 60 + 15);
    lp_breakdown_release(&b);
    lp_cpath_release(&cp);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* A message received in the middle of an activity cuts it; the path may take the
 * message if it reaches back further (Definition 4), and then covers only part of
 * the activity. */
static void test_message_mid_activity(void)
{
    lp_diags ds;
    lp_trace *t = load_text("A a 0 10 processing\n"
                            "M a 10 b 70 id=1\n"
                            "A b 50 100 processing\n",
                            &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_cpath cp;
    CHECK(compute(t, &cp) == 0);
    CHECK_EQ_I(cp.total, 100);
    CHECK_EQ_I(cp.n, 3);
    if (cp.n == 3) {
        CHECK(cp.e[2].kind == LP_CP_ACTIVITY && cp.e[2].start == 70 && cp.e[2].end == 100);
        CHECK(cp.e[1].kind == LP_CP_MESSAGE);
        CHECK(cp.e[0].start == 0 && cp.e[0].end == 10);
    }
    CHECK(contiguous(&cp));
    lp_cpath_release(&cp);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* Zero-time message cycle: must terminate, break the cycle and say so. */
static void test_cycle(void)
{
    lp_diags ds;
    lp_trace *t = load_text("A a 0 10 processing\nA b 0 10 processing\n"
                            "M a 10 b 10 id=1\nM b 10 a 10 id=2\n"
                            "A a 10 20 processing\nA b 10 30 processing\n",
                            &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_cpath cp;
    CHECK(compute(t, &cp) == 0);
    CHECK(cp.ncycles >= 1);
    CHECK_EQ_I(cp.total, 30);
    CHECK_EQ_I(sum_weights(&cp), cp.total);
    lp_cpath_release(&cp);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

static void test_empty_and_single(void)
{
    lp_diags ds;
    lp_trace *t = load_text("", &ds);
    CHECK(t != NULL);
    lp_cpath cp;
    if (t) {
        CHECK(compute(t, &cp) == 0);
        CHECK_EQ_I(cp.n, 0);
        CHECK_EQ_I(cp.total, 0);
        lp_cpath_release(&cp);
        lp_trace_free(t);
    }
    lp_diags_release(&ds);
    t = load_text("A a 5 5 processing\n", &ds);
    CHECK(t != NULL);
    if (t) {
        CHECK(compute(t, &cp) == 0);
        CHECK_EQ_I(cp.total, 0);
        lp_cpath_release(&cp);
        lp_trace_free(t);
    }
    lp_diags_release(&ds);
}

/* ---- the naive twin -------------------------------------------------------------- */

/* Vertices (worker, time) built by brute force; edges enumerated by scanning. */
typedef struct nv {
    uint32_t w;
    int64_t t;
} nv;

typedef struct naive {
    const lp_trace *t;
    nv v[512];
    int n;
    /* best found so far */
    int64_t best_w;
    int best_rank[256], best_len;
    int64_t best_elems[256][2]; /* (kind<<62 | index), start */
    int cur_rank[256];
    int64_t cur_elems[256][2];
    long visits;
} naive;

static int vid(naive *N, uint32_t w, int64_t t)
{
    for (int i = 0; i < N->n; i++)
        if (N->v[i].w == w && N->v[i].t == t)
            return i;
    return -1;
}

static void add_v(naive *N, uint32_t w, int64_t t)
{
    if (vid(N, w, t) < 0 && N->n < 512)
        N->v[N->n++] = (nv){w, t};
}

/* Previous instant of worker w before time t (or INT64_MIN). */
static int64_t prev_instant(naive *N, uint32_t w, int64_t t)
{
    int64_t p = INT64_MIN;
    for (int i = 0; i < N->n; i++)
        if (N->v[i].w == w && N->v[i].t < t && N->v[i].t > p)
            p = N->v[i].t;
    return p;
}

/* The activity covering [a, b] on worker w (positive length), or -1. */
static int64_t covering(naive *N, uint32_t w, int64_t a, int64_t b)
{
    const lp_trace *t = N->t;
    for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++)
        if (t->astart[i] <= a && t->aend[i] >= b && t->astart[i] < t->aend[i])
            return (int64_t)i;
    return -1;
}

/* Lexicographic comparison of rank sequences. */
static int lex_less(const int *a, int na, const int *b, int nb)
{
    for (int i = 0; i < na && i < nb; i++)
        if (a[i] != b[i])
            return a[i] < b[i];
    return na < nb;
}

static void dfs(naive *N, uint32_t w, int64_t tv, int depth, int64_t weight)
{
    const lp_trace *t = N->t;
    N->visits++;
    int moved = 0;
    /* rank 0: the worker edge, if live */
    int64_t p = prev_instant(N, w, tv);
    if (p != INT64_MIN) {
        int64_t a = covering(N, w, p, tv);
        if (a >= 0 && t->atype[a] != LP_TYPE_WAITING) {
            moved = 1;
            N->cur_rank[depth] = 0;
            N->cur_elems[depth][0] = a;
            N->cur_elems[depth][1] = p;
            dfs(N, w, p, depth + 1, weight + (tv - p));
        }
    }
    /* ranks 1..: messages received here, by message index */
    int r = 1;
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        if (t->mdst[m] != w || t->mrecv[m] != tv || (t->mflags[m] & LP_MSG_SKEW))
            continue;
        moved = 1;
        N->cur_rank[depth] = r++;
        N->cur_elems[depth][0] = (int64_t)((1ULL << 62) | m);
        N->cur_elems[depth][1] = t->msend[m];
        dfs(N, t->msrc[m], t->msend[m], depth + 1, weight + (t->mrecv[m] - t->msend[m]));
    }
    if (!moved) {
        if (weight > N->best_w ||
            (weight == N->best_w && lex_less(N->cur_rank, depth, N->best_rank, N->best_len))) {
            N->best_w = weight;
            N->best_len = depth;
            memcpy(N->best_rank, N->cur_rank, sizeof(int) * (size_t)depth);
            memcpy(N->best_elems, N->cur_elems, sizeof(int64_t) * 2 * (size_t)depth);
        }
    }
}

/* Returns the path weight; fills N->best_*. */
static int64_t naive_cp(naive *N, const lp_trace *t)
{
    memset(N, 0, sizeof *N);
    N->t = t;
    for (uint32_t w = 0; w < t->nworkers; w++)
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++) {
            add_v(N, w, t->astart[i]);
            add_v(N, w, t->aend[i]);
        }
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        add_v(N, t->msrc[m], t->msend[m]);
        add_v(N, t->mdst[m], t->mrecv[m]);
    }
    if (!N->n)
        return 0;
    /* candidate ends: each worker's last instant at the latest time */
    int64_t tmax = INT64_MIN;
    for (int i = 0; i < N->n; i++)
        tmax = N->v[i].t > tmax ? N->v[i].t : tmax;
    int64_t bestw = -1;
    int bestlen = 0, bestrank[256];
    int64_t bestel[256][2];
    for (uint32_t w = 0; w < t->nworkers; w++) {
        if (vid(N, w, tmax) < 0)
            continue;
        N->best_w = -1;
        N->best_len = 0;
        dfs(N, w, tmax, 0, 0);
        if (N->best_w > bestw) { /* ties: lowest worker (first found) */
            bestw = N->best_w;
            bestlen = N->best_len;
            memcpy(bestrank, N->best_rank, sizeof bestrank);
            memcpy(bestel, N->best_elems, sizeof bestel);
        }
    }
    N->best_w = bestw;
    N->best_len = bestlen;
    memcpy(N->best_rank, bestrank, sizeof bestrank);
    memcpy(N->best_elems, bestel, sizeof bestel);
    return bestw;
}

/* ---- random traces --------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static int64_t rint_(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static const char *types[] = {"processing", "serialization", "waiting", "io", "buffer"};

static char *random_trace(void)
{
    static char buf[8192];
    size_t n = 0;
    int nw = (int)rint_(1, 4);
    for (int w = 0; w < nw; w++) {
        int64_t tcur = rint_(0, 5);
        int na = (int)rint_(0, 5);
        for (int k = 0; k < na; k++) {
            if (rnd() % 3 == 0)
                tcur += rint_(1, 4); /* leave a gap */
            int64_t d = rnd() % 8 == 0 ? 0 : rint_(1, 6);
            n += (size_t)snprintf(buf + n, sizeof buf - n, "A w%d %lld %lld %s op%d\n", w, (long long)tcur,
                                  (long long)(tcur + d), types[rnd() % 5], (int)(rnd() % 3));
            tcur += d;
        }
    }
    int nm = (int)rint_(0, 6);
    for (int k = 0; k < nm; k++) {
        int a = (int)rint_(0, nw - 1), b = (int)rint_(0, nw - 1);
        int64_t s = rint_(0, 25), r = s + rint_(1, 8);
        if (rnd() % 6 == 0)
            r = s; /* zero latency (only between distinct workers, one direction per instant) */
        if (r == s && a == b)
            r++;
        if (r == s) {
            /* avoid zero-time cycles: only allow a -> b with a < b */
            if (a > b) {
                int x = a;
                a = b;
                b = x;
            }
        }
        n += (size_t)snprintf(buf + n, sizeof buf - n, "M w%d %lld w%d %lld id=%d\n", a, (long long)s, b,
                              (long long)r, k);
    }
    return buf;
}

static void test_differential(void)
{
    rng_state = 12345;
    int mismatches = 0;
    for (int iter = 0; iter < 1000; iter++) {
        char *txt = random_trace();
        lp_diags ds;
        lp_trace *t = load_text(txt, &ds);
        CHECK(t != NULL);
        if (!t) {
            lp_diags_release(&ds);
            continue;
        }
        lp_cpath cp;
        CHECK(compute(t, &cp) == 0);
        static naive N;
        int64_t w = naive_cp(&N, t);
        int ok = 1;
        if (w < 0)
            w = 0;
        ok &= cp.total == w;
        ok &= sum_weights(&cp) == cp.total;
        ok &= contiguous(&cp);
        ok &= cp.ncycles == 0;
        /* same elements: the naive path is stored backwards, as (edge, start) pairs, one per
         * PAG edge; the fast path merges consecutive parts of one activity */
        if (ok) {
            size_t k = cp.n;
            int64_t merged_start = 0;
            for (int i = 0; i < N.best_len && ok; i++) {
                int64_t el = N.best_elems[i][0];
                int is_msg = (uint64_t)el >> 62 == 1;
                uint64_t idx = (uint64_t)el & ((1ULL << 62) - 1);
                if (k == 0) {
                    ok = 0;
                    break;
                }
                const lp_cp_elem *e = &cp.e[k - 1];
                if (is_msg) {
                    ok &= e->kind == LP_CP_MESSAGE && e->index == idx;
                    k--;
                } else {
                    ok &= e->kind == LP_CP_ACTIVITY && e->index == idx;
                    merged_start = N.best_elems[i][1];
                    if (merged_start == e->start)
                        k--;
                }
            }
            ok &= k == 0;
        }
        if (!ok) {
            if (mismatches++ < 3) {
                fprintf(stderr, "differential mismatch (iteration %d): fast %lld (%zu elems), naive %lld (%d edges)\n%s",
                        iter, (long long)cp.total, cp.n, (long long)w, N.best_len, txt);
            }
        }
        lp_cpath_release(&cp);
        lp_trace_free(t);
        lp_diags_release(&ds);
    }
    CHECK_EQ_I(mismatches, 0);
}

/* The two-thread build (pag.c) gives the same graph as the one-thread build. */
static int same_pag(const lp_pag *a, const lp_pag *b, uint64_t nmsgs, uint32_t nw)
{
    if (a->nv != b->nv || a->nwedges != b->nwedges || a->ncedges != b->ncedges)
        return 0;
    return memcmp(a->voff, b->voff, (nw + 1) * sizeof *a->voff) == 0 &&
           memcmp(a->vtime, b->vtime, a->nv * sizeof *a->vtime) == 0 &&
           memcmp(a->vact, b->vact, a->nv * sizeof *a->vact) == 0 &&
           memcmp(a->vin, b->vin, (a->nv + 1) * sizeof *a->vin) == 0 &&
           memcmp(a->inmsg, b->inmsg, a->ncedges * sizeof *a->inmsg) == 0 &&
           memcmp(a->msv, b->msv, nmsgs * sizeof *a->msv) == 0 && memcmp(a->mrv, b->mrv, nmsgs * sizeof *a->mrv) == 0;
}

static void test_two_threads(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.max_records = 300000;
    lp_trace *t = NULL;
    lp_error err;
    CHECK(lp_gen_dataflow_run(&o, &t, &err) == LP_OK);
    if (!t)
        return;
    uint64_t keep = lp_pag_parallel_min;
    lp_pag one, two;
    lp_pag_parallel_min = UINT64_MAX;
    CHECK(lp_pag_build(t, &one, &err) == LP_OK);
    lp_pag_parallel_min = 0;
    CHECK(lp_pag_build(t, &two, &err) == LP_OK);
    CHECK(same_pag(&one, &two, t->nmsgs, t->nworkers));
    lp_pag_release(&one);
    lp_pag_release(&two);
    lp_trace_free(t);
    /* and every random trace of the differential test, built on two threads */
    test_differential();
    lp_pag_parallel_min = keep;
}

int main(void)
{
    test_model_example();
    test_message_mid_activity();
    test_cycle();
    test_empty_and_single();
    test_differential();
    test_two_threads();
    return t_done("test_cpath");
}
