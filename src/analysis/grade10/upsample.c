/* upsample.c: Grade10's upsampling of one monitoring window (papers/grade10.txt
 * §III-D2, attrib.h): exact demand first (min(E_t, K), scaled down when the window
 * consumed less), then the rest in proportion to the variable demand V_t with every
 * segment capped at its remaining capacity (water-filling), then whatever is left
 * spread evenly, capped likewise.
 *
 * Water-filling finds the level lambda with sum_t l_t min(lambda w_t, room_t) = R. The
 * usual case (no segment reaches its cap) costs one pass; otherwise the segments are
 * sorted by room_t / w_t, the level at which each saturates, and saturated in that
 * order until the level of the others stays below the next one: O(n log n). The sums
 * are recomputed from the final split (never by running subtraction) so a window's
 * total holds to rounding. tests/unit/grade10/test_g10_upsample.c holds the paper's
 * Fig. 2 example and a naive twin that iterates the caps.
 */
#include "longpole/analysis/grade10/attrib.h"

/* The weight of segment t (1 everywhere when w is NULL: the even spread). */
static inline double wt_of(const double *w, uint32_t t) { return w ? w[t] : 1.0; }
/* room_t / w_t: the level at which segment t saturates */
static inline double level(const double *u, const double *w, double K, uint32_t t) { return (K - u[t]) / wt_of(w, t); }

/* Heapsort of idx[0, n) by level (no qsort_r in C11). The element sifted down moves
 * once to its final place and the children it passes move up one level each: the same
 * comparisons, so the same order (ties included), as swapping it down step by step; the
 * order of ties fixes the order of the sums below, so it must not change. Windows of up
 * to 512 segments sort (level, segment) pairs, each level computed once; longer ones
 * compute the levels at every comparison. */
typedef struct lvi {
    double l;
    uint32_t i;
} lvi;

static void sift_lv(lvi *h, size_t i, size_t n, lvi x)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1].l > h[c].l)
            c++;
        if (h[c].l <= x.l)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static void sift(uint32_t *idx, size_t i, size_t n, uint32_t x, const double *u, const double *w, double K)
{
    double xl = level(u, w, K, x);
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        double lc = level(u, w, K, idx[c]);
        if (c + 1 < n) {
            double l1 = level(u, w, K, idx[c + 1]);
            if (l1 > lc)
                c++, lc = l1;
        }
        if (lc <= xl)
            break;
        idx[i] = idx[c];
        i = c;
    }
    idx[i] = x;
}

static void sort_by_level(uint32_t *idx, size_t n, const double *u, const double *w, double K)
{
    if (n <= 512) {
        lvi h[512];
        for (size_t i = 0; i < n; i++)
            h[i] = (lvi){level(u, w, K, idx[i]), idx[i]};
        for (size_t i = n / 2; i-- > 0;)
            sift_lv(h, i, n, h[i]);
        for (size_t end = n; end-- > 1;) {
            lvi x = h[end];
            h[end] = h[0];
            sift_lv(h, 0, end, x);
        }
        for (size_t i = 0; i < n; i++)
            idx[i] = h[i].i;
        return;
    }
    for (size_t i = n / 2; i-- > 0;)
        sift(idx, i, n, idx[i], u, w, K);
    for (size_t end = n; end-- > 1;) {
        uint32_t x = idx[end];
        idx[end] = idx[0];
        sift(idx, 0, end, x, u, w, K);
    }
}

/* Place R among the segments with w_t > 0 (all segments when w is NULL: the even
 * spread), in proportion to w_t, each capped at K. Returns what did not fit. */
static double fill(size_t n, const double *len, const double *w, double K, double *u, double R, uint32_t *idx)
{
    size_t m = 0;
    double room = 0, W = 0;
    for (size_t t = 0; t < n; t++) {
        double wt = wt_of(w, (uint32_t)t);
        if (!(wt > 0) || !(len[t] > 0))
            continue;
        idx[m++] = (uint32_t)t;
        room += len[t] * (K - u[t]);
        W += len[t] * wt;
    }
    if (!m || !(R > 0))
        return R;
    if (R >= room) { /* everything saturates */
        for (size_t i = 0; i < m; i++)
            u[idx[i]] = K;
        return R - room;
    }
    double lam = R / W;
    int fits = 1;
    for (size_t i = 0; i < m && fits; i++)
        fits = lam * wt_of(w, idx[i]) <= K - u[idx[i]];
    size_t k = 0; /* segments idx[0, k) saturate */
    if (!fits) {
        sort_by_level(idx, m, u, w, K);
        double Rs = R, Ws = W;
        for (; k < m; k++) {
            uint32_t t = idx[k];
            if (level(u, w, K, t) * Ws >= Rs)
                break;
            Rs -= len[t] * (K - u[t]);
            Ws -= len[t] * wt_of(w, t);
        }
        double placed = 0, Wr = 0; /* recomputed from the split, not by running subtraction */
        for (size_t i = 0; i < k; i++)
            placed += len[idx[i]] * (K - u[idx[i]]);
        for (size_t i = k; i < m; i++)
            Wr += len[idx[i]] * wt_of(w, idx[i]);
        lam = Wr > 0 ? (R - placed) / Wr : 0;
        for (size_t i = 0; i < k; i++)
            u[idx[i]] = K;
    }
    for (size_t i = k; i < m; i++) {
        uint32_t t = idx[i];
        double v = u[t] + lam * wt_of(w, t);
        u[t] = v > K ? K : v;
    }
    return 0;
}

double lp_g10_upsample(size_t n, const double *len, const double *E, const double *V, double K, double C, double *u,
                       double *x, uint32_t *scratch)
{
    if (!(C > 0))
        C = 0;
    if (!(K > 0))
        K = 0;
    double A = 0;
    for (size_t t = 0; t < n; t++) {
        double e = E[t] > 0 ? E[t] : 0;
        x[t] = e < K ? e : K;
        A += len[t] * x[t];
    }
    if (C <= A) {
        double s = A > 0 ? C / A : 0;
        for (size_t t = 0; t < n; t++)
            u[t] = x[t] *= s;
        return 0;
    }
    for (size_t t = 0; t < n; t++)
        u[t] = x[t];
    double R = fill(n, len, V, K, u, C - A, scratch);
    if (R > 0)
        R = fill(n, len, NULL, K, u, R, scratch);
    return R > 0 ? R : 0;
}
