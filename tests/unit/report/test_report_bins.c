/* test_report_bins.c: the timeline's binning (report_bins.c, lp_tlbin_row) against a
 * naive twin that reads the definition literally: for every bin, the overlap of every
 * activity of the worker and of every critical-path interval, summed per type, with the
 * bin edges computed in 128-bit arithmetic. Random traces (user types, zero-length
 * activities, gaps, huge and tiny spans, windows that start before or end after the
 * trace), random bin counts; plus the edge formula (nesting of levels), small fixed
 * cases with known answers, and argument errors. */
#include "t.h"
#include "tutil.h"
#include "longpole/report/report.h"

#include <math.h>
#include <stdint.h>

static uint64_t rng = 12345;
static uint64_t rnd(void) { return t_splitmix(&rng); }
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }

__extension__ typedef unsigned __int128 u128;

static int64_t naive_edge(int64_t t0, int64_t t1, uint64_t n, uint64_t i)
{
    u128 T = (u128)((uint64_t)t1 - (uint64_t)t0);
    return (int64_t)((uint64_t)t0 + (uint64_t)((u128)i * T / n));
}

static uint8_t naive_q(int64_t x, int64_t w)
{
    if (x <= 0)
        return 0;
    double v = floor(15.0 * (double)x / (double)w + 0.5);
    return (uint8_t)(v < 1 ? 1 : v > 15 ? 15 : v);
}

static void naive_row(const lp_trace *t, uint32_t w, const int64_t *cps, const int64_t *cpe, size_t ncp, int64_t t0,
                      int64_t t1, uint32_t n, lp_tlbin *out)
{
    int64_t *tt = calloc(t->ntypes, sizeof *tt);
    for (uint32_t i = 0; i < n; i++) {
        int64_t bs = naive_edge(t0, t1, n, i), be = naive_edge(t0, t1, n, i + 1), busy = 0, cov = 0;
        memset(tt, 0, t->ntypes * sizeof *tt);
        for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1]; a++) {
            int64_t s = t->astart[a] > bs ? t->astart[a] : bs, e = t->aend[a] < be ? t->aend[a] : be;
            if (e > s) {
                tt[t->atype[a]] += e - s;
                if (t->atype[a] != LP_TYPE_WAITING)
                    busy += e - s;
            }
        }
        for (size_t k = 0; k < ncp; k++) {
            int64_t s = cps[k] > bs ? cps[k] : bs, e = cpe[k] < be ? cpe[k] : be;
            if (e > s)
                cov += e - s;
        }
        uint32_t dom = 0;
        int64_t best = 0;
        for (uint32_t ty = 0; ty < t->ntypes; ty++)
            if (ty != LP_TYPE_WAITING && tt[ty] > best) {
                best = tt[ty];
                dom = ty + 1;
            }
        if (!dom && tt[LP_TYPE_WAITING] > 0)
            dom = LP_TYPE_WAITING + 1;
        out[i].dom = dom;
        out[i].busy = naive_q(busy, be - bs);
        out[i].cp = naive_q(cov, be - bs);
    }
    free(tt);
}

/* A random trace: W workers, activities of random types (some user-defined), random
 * lengths (some zero), random gaps (filled by the builder), times scaled by `scale`. */
static lp_trace *random_trace(uint32_t W, uint32_t per, int64_t scale, int64_t base)
{
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_builder *b;
    lp_error err;
    if (lp_builder_new(&b, &ds, NULL, &err))
        return NULL;
    uint16_t types[12];
    int ntypes = 0;
    for (int k = 0; k < LP_TYPE_NBUILTIN; k++)
        types[ntypes++] = (uint16_t)k;
    const char *extra[] = {"gc", "rpc", "<script>"};
    for (int k = 0; k < 3; k++)
        lp_builder_type(b, extra[k], strlen(extra[k]), &types[ntypes++], &err);
    uint64_t line = 0;
    for (uint32_t w = 0; w < W; w++) {
        char name[16];
        snprintf(name, sizeof name, "w%u", w);
        uint32_t wid;
        lp_builder_worker(b, name, strlen(name), &wid, &err);
        int64_t x = base + (int64_t)below(5) * scale;
        uint32_t k = per ? 1 + (uint32_t)below(per) : 0;
        for (uint32_t i = 0; i < k; i++) {
            int64_t d = below(6) == 0 ? 0 : (int64_t)(1 + below(20)) * scale / (1 + (int64_t)below(3));
            uint16_t ty = types[below((uint64_t)ntypes)];
            lp_builder_activity(b, wid, x, x + d, ty, LP_STR_NONE, 0, ++line, &err);
            x += d + (below(4) == 0 ? (int64_t)below(10) * scale : 0);
        }
    }
    lp_trace *t = NULL;
    if (lp_builder_finish(b, &t, &err))
        t = NULL;
    lp_diags_release(&ds);
    return t;
}

static void test_edges(void)
{
    /* exact, and levels nest: edge(i) of n == edge(4i) of 4n */
    for (int it = 0; it < 2000; it++) {
        int64_t t0 = (int64_t)(rnd() >> 2) - (INT64_C(1) << 61);
        int64_t T = (int64_t)(rnd() >> (2 + below(61))); /* t0 + T stays below 2^63 */
        if (T < 1)
            T = 1;
        int64_t t1 = t0 + T;
        uint64_t n = 1 + below((uint64_t)T < (1u << 20) ? (uint64_t)T : (1u << 20));
        uint64_t i = below(n + 1);
        CHECK_EQ_I(lp_tlbin_edge(t0, t1, n, i), naive_edge(t0, t1, n, i));
        if (4 * n <= (uint64_t)T)
            CHECK_EQ_I(lp_tlbin_edge(t0, t1, 4 * n, 4 * i), lp_tlbin_edge(t0, t1, n, i));
    }
    CHECK_EQ_I(lp_tlbin_edge(0, 10, 3, 0), 0);
    CHECK_EQ_I(lp_tlbin_edge(0, 10, 3, 1), 3);
    CHECK_EQ_I(lp_tlbin_edge(0, 10, 3, 2), 6);
    CHECK_EQ_I(lp_tlbin_edge(0, 10, 3, 3), 10);
}

static void test_fixed(void)
{
    /* w0: processing [0,10], waiting [10,20], serialization [20,25]; path [0, 5] */
    lp_diags ds;
    lp_trace *t = load_text("longpole-trace 1\nA w0 0 10 processing\nA w0 10 20 waiting\nA w0 20 25 serialization\n",
                            &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_tlscratch s;
    memset(&s, 0, sizeof s);
    lp_tlbin b[5];
    int64_t cps[] = {0}, cpe[] = {5};
    lp_error err;
    CHECK(lp_tlbin_row(t, 0, cps, cpe, 1, 0, 25, 5, b, &s, &err) == LP_OK);
    /* bins of 5: [0,5) proc+path, [5,10) proc, [10,15) wait, [15,20) wait, [20,25) ser */
    CHECK_EQ_I(b[0].dom, LP_TYPE_PROCESSING + 1);
    CHECK_EQ_I(b[0].busy, 15);
    CHECK_EQ_I(b[0].cp, 15);
    CHECK_EQ_I(b[1].cp, 0);
    CHECK_EQ_I(b[2].dom, LP_TYPE_WAITING + 1);
    CHECK_EQ_I(b[2].busy, 0);
    CHECK_EQ_I(b[4].dom, LP_TYPE_SERIALIZATION + 1);
    /* one bin: processing dominates (10 of 25 busy... 15 busy of 25 = 9/15) */
    CHECK(lp_tlbin_row(t, 0, cps, cpe, 1, 0, 25, 1, b, &s, &err) == LP_OK);
    CHECK_EQ_I(b[0].dom, LP_TYPE_PROCESSING + 1);
    CHECK_EQ_I(b[0].busy, 9);
    CHECK_EQ_I(b[0].cp, 3);
    /* a window past the trace: nothing */
    CHECK(lp_tlbin_row(t, 0, NULL, NULL, 0, 100, 200, 4, b, &s, &err) == LP_OK);
    CHECK_EQ_I(b[0].dom, 0);
    CHECK_EQ_I(b[3].busy, 0);
    /* bad arguments */
    CHECK(lp_tlbin_row(t, 1, NULL, NULL, 0, 0, 25, 5, b, &s, &err) == LP_ERR_ARG);
    CHECK(lp_tlbin_row(t, 0, NULL, NULL, 0, 0, 4, 5, b, &s, &err) == LP_ERR_ARG);
    CHECK(lp_tlbin_row(t, 0, NULL, NULL, 0, 5, 5, 1, b, &s, &err) == LP_ERR_ARG);
    /* tiny busy time still shows */
    lp_trace_free(t);
    lp_diags_release(&ds);
    t = load_text("longpole-trace 1\nA w0 0 1 processing\nA w0 1 1000 waiting\n", &ds);
    CHECK(lp_tlbin_row(t, 0, NULL, NULL, 0, 0, 1000, 1, b, &s, &err) == LP_OK);
    CHECK_EQ_I(b[0].dom, LP_TYPE_PROCESSING + 1);
    CHECK_EQ_I(b[0].busy, 1);
    lp_trace_free(t);
    lp_diags_release(&ds);
    lp_tlscratch_release(&s);
}

static void test_random(void)
{
    lp_tlscratch s;
    memset(&s, 0, sizeof s);
    int mismatches = 0;
    for (int it = 0; it < 400; it++) {
        int64_t scale = (int64_t)1 << below(40);
        int64_t base = (int64_t)below(3) == 0 ? -(int64_t)below(1000) * scale : (int64_t)below(1000);
        lp_trace *t = random_trace(1 + (uint32_t)below(4), (uint32_t)below(60), scale, base);
        CHECK(t != NULL);
        if (!t)
            continue;
        /* the window: the trace's span, or a part, or wider */
        int64_t t0 = t->tmin, t1 = t->tmax > t->tmin ? t->tmax : t->tmin + 1;
        int mode = (int)below(4);
        if (mode == 1)
            t0 -= (int64_t)below(10) * scale, t1 += (int64_t)below(10) * scale + 1;
        else if (mode == 2 && t1 - t0 > 4)
            t0 += (t1 - t0) / 3, t1 -= (t1 - t0) / 4;
        uint64_t T = (uint64_t)(t1 - t0);
        uint32_t n = (uint32_t)(1 + below(T < 3000 ? T : 3000));
        for (uint32_t w = 0; w < t->nworkers; w++) {
            /* random path intervals: disjoint, sorted, on the worker's own timeline */
            int64_t cps[40], cpe[40];
            size_t ncp = 0;
            for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1] && ncp < 40; a++)
                if (below(3) == 0 && t->aend[a] > t->astart[a]) {
                    int64_t len = t->aend[a] - t->astart[a];
                    cps[ncp] = t->astart[a] + (int64_t)below((uint64_t)len);
                    cpe[ncp] = cps[ncp] + 1 + (int64_t)below((uint64_t)(t->aend[a] - cps[ncp]));
                    if (cpe[ncp] > t->aend[a])
                        cpe[ncp] = t->aend[a];
                    ncp++;
                }
            lp_tlbin *fast = calloc(n, sizeof *fast), *slow = calloc(n, sizeof *slow);
            lp_error err;
            CHECK(lp_tlbin_row(t, w, cps, cpe, ncp, t0, t1, n, fast, &s, &err) == LP_OK);
            naive_row(t, w, cps, cpe, ncp, t0, t1, n, slow);
            for (uint32_t i = 0; i < n; i++)
                if (fast[i].dom != slow[i].dom || fast[i].busy != slow[i].busy || fast[i].cp != slow[i].cp) {
                    if (mismatches++ < 5)
                        fprintf(stderr,
                                "mismatch: trial %d worker %u bin %u of %u: fast (%u,%u,%u) naive (%u,%u,%u)\n", it,
                                w, i, n, fast[i].dom, fast[i].busy, fast[i].cp, slow[i].dom, slow[i].busy, slow[i].cp);
                    break;
                }
            free(fast);
            free(slow);
        }
        lp_trace_free(t);
    }
    CHECK_EQ_I(mismatches, 0);
    lp_tlscratch_release(&s);
}

int main(void)
{
    test_edges();
    test_fixed();
    test_random();
    return t_done("test_report_bins");
}
