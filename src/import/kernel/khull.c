/* khull.c: the feasible clock lines of two hosts from their packets (khull.h).
 *
 * With g(a) = min_above(y - a x) - max_below(y - a x), a slope a is feasible iff
 * g(a) >= 0, and g is concave and piecewise linear: min_above(y - a x) is attained on
 * the lower hull of the "above" points (vertex i between its edges' slopes), and
 * max_below on the upper hull of the "below" points. Between consecutive edge slopes
 * of the two hulls one vertex of each is active and g(a) = c - a d is linear, so the
 * feasible slopes of each such interval come from one division; their union is
 * [a_lo, a_hi]. Points are shifted to the first one so differences fit in 64 bits and
 * cross products in 128.
 */
#include "import/kernel/khull.h"
#include "longpole/base/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef __int128 i128;

static int pt_cmp(const void *x, const void *y)
{
    const khpt *a = x, *b = y;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    return (a->y > b->y) - (a->y < b->y);
}

static i128 cross(khpt o, khpt a, khpt b)
{
    return (i128)(a.x - o.x) * (b.y - o.y) - (i128)(a.y - o.y) * (b.x - o.x);
}

/* The lower (upper = 0: upper) hull of p[0..n) (sorted by x, then y) into h; returns its
 * size. Of several points with one x only the lowest (highest) counts. */
static size_t hull(const khpt *p, size_t n, int lower, khpt *h)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        khpt q = p[i];
        if (k && h[k - 1].x == q.x) {
            if (lower)
                continue; /* sorted by y ascending: the first of an x is the lowest */
            h[k - 1] = q;   /* ... and the last the highest */
            while (k >= 3 && cross(h[k - 3], h[k - 2], h[k - 1]) >= 0) {
                h[k - 2] = h[k - 1];
                k--;
            }
            continue;
        }
        while (k >= 2 && (lower ? cross(h[k - 2], h[k - 1], q) <= 0 : cross(h[k - 2], h[k - 1], q) >= 0))
            k--;
        h[k++] = q;
    }
    return k;
}

static long double slope(khpt a, khpt b) { return (long double)(b.y - a.y) / (long double)(b.x - a.x); }

/* Index of the vertex of the lower hull h[0..n) minimising y - a x: the number of edges
 * whose slope is below a. (Upper hull, maximising: edges have decreasing slopes, the
 * vertex is the number of edges whose slope is above a.) */
static size_t active(const khpt *h, size_t n, int lower, long double a)
{
    size_t lo = 0, hi = n - 1; /* answer in [lo, hi] */
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2; /* edge m: h[m] -> h[m + 1] */
        long double s = slope(h[m], h[m + 1]);
        if (lower ? s < a : s > a)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

static long double env(const khpt *h, size_t n, int lower, long double a)
{
    khpt v = h[active(h, n, lower, a)];
    return (long double)v.y - a * (long double)v.x;
}

static int ld_cmp(const void *x, const void *y)
{
    long double a = *(const long double *)x, b = *(const long double *)y;
    return (a > b) - (a < b);
}

/* [a_lo, a_hi] of the slopes with g(a) >= 0; 0 if none. */
static int slope_range(const khpt *A, size_t na, const khpt *B, size_t nb, long double *bp, long double *lo,
                       long double *hi)
{
    size_t np = 0;
    for (size_t i = 0; i + 1 < na; i++)
        bp[np++] = slope(A[i], A[i + 1]);
    for (size_t i = 0; i + 1 < nb; i++)
        bp[np++] = slope(B[i], B[i + 1]);
    qsort(bp, np, sizeof *bp, ld_cmp);
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i <= np; i++) { /* interval i: [bp[i-1], bp[i]] */
        long double l = i ? bp[i - 1] : -INFINITY, h = i < np ? bp[i] : INFINITY;
        if (i && i < np && l == h)
            continue;
        long double mid = !i ? (np ? h - 1 - fabsl(h) : 1) : i == np ? l + 1 + fabsl(l) : l + (h - l) / 2;
        khpt v = A[active(A, na, 1, mid)], w = B[active(B, nb, 0, mid)];
        i128 c = (i128)v.y - w.y, d = (i128)v.x - w.x; /* g(a) = c - a d */
        long double fl = l, fh = h;
        if (d > 0)
            fh = fminl(fh, (long double)c / (long double)d);
        else if (d < 0)
            fl = fmaxl(fl, (long double)c / (long double)d);
        else if (c < 0)
            continue;
        if (fl > fh)
            continue;
        *lo = fminl(*lo, fl);
        *hi = fmaxl(*hi, fh);
    }
    return *lo <= *hi;
}

lp_status lp_khull_fit(khpt *above, size_t na, khpt *below, size_t nb, khres *r, lp_error *err)
{
    memset(r, 0, sizeof *r);
    r->a = 1;
    r->a_lo = r->b_lo = -INFINITY;
    r->a_hi = r->b_hi = INFINITY;
    if (!na && !nb)
        return LP_OK;
    khpt o = na ? above[0] : below[0];
    khpt *A = lp_malloc((na + nb + 1) * sizeof *A);
    long double *bp = lp_malloc((na + nb + 1) * sizeof *bp);
    if (!A || !bp) {
        lp_free(A);
        lp_free(bp);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory (clock hull of %zu packets)", na + nb);
    }
    for (size_t i = 0; i < na; i++)
        above[i] = (khpt){above[i].x - o.x, above[i].y - o.y};
    for (size_t i = 0; i < nb; i++)
        below[i] = (khpt){below[i].x - o.x, below[i].y - o.y};
    qsort(above, na, sizeof *above, pt_cmp);
    qsort(below, nb, sizeof *below, pt_cmp);
    size_t ha = hull(above, na, 1, A);
    khpt *B = A + ha;
    size_t hb = hull(below, nb, 0, B);
    r->nhull = ha + hb;
    long double a = 1, b = 0, alo = -INFINITY, ahi = INFINITY;
    if (ha && hb && !slope_range(A, ha, B, hb, bp, &alo, &ahi)) {
        r->q = KH_FAIL;
        r->b = 0;
    } else {
        if (ha && hb && isfinite(alo) && isfinite(ahi)) {
            r->q = KH_ACCURATE; /* the middle of the two extreme lines */
            a = (alo + ahi) / 2;
            b = (env(A, ha, 1, alo) + env(A, ha, 1, ahi)) / 2;
        } else {
            r->q = KH_APPROX;
            a = 1 < alo ? alo : 1 > ahi ? ahi : 1;
        }
        long double blo = hb ? env(B, hb, 0, a) : -INFINITY, bhi = ha ? env(A, ha, 1, a) : INFINITY;
        if (r->q == KH_APPROX)
            b = ha && hb ? (blo + bhi) / 2 : ha ? bhi : blo;
        /* back to raw coordinates: y - o.y = a (x - o.x) + b */
        long double shift = (long double)o.y - a * (long double)o.x;
        r->b_lo = blo + shift;
        r->b_hi = bhi + shift;
        r->b = b + shift;
        r->a = a;
        r->a_lo = alo;
        r->a_hi = ahi;
    }
    for (size_t i = 0; i < na; i++)
        above[i] = (khpt){above[i].x + o.x, above[i].y + o.y};
    for (size_t i = 0; i < nb; i++)
        below[i] = (khpt){below[i].x + o.x, below[i].y + o.y};
    lp_free(A);
    lp_free(bp);
    return LP_OK;
}
