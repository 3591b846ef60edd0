/* report_bins.c: pixel-level binning of one worker's timeline (report.h, lp_tlbin_row;
 * docs/report.md "Aggregation"). What the timeline draws when a view holds more
 * activities than it can draw one by one: per bin, the dominant type, the busy fraction
 * and the critical-path coverage, so nothing is dropped, only summarised.
 *
 * Invariants: bin i of n over [t0, t1) is [edge(i), edge(i+1)) with edge(i) = t0 +
 * floor(i (t1 - t0) / n), computed exactly (q = T / n, r = T % n: edge = t0 + i q +
 * floor(i r / n), and i r < n^2 fits 64 bits for n < 2^32); so a level of 4n bins nests
 * in a level of n. Activities of a worker are sorted and never overlap (trace.h), so the
 * bins they touch are visited in order: one sweep, O(activities in range + n), with a
 * per-type accumulator reset through a touched list (types may be many: Chrome traces
 * have one per event name). The naive twin is in tests/unit/test_report_bins.c.
 */
#include "longpole/report/report.h"
#include "longpole/base/alloc.h"

#include <math.h>
#include <string.h>

int64_t lp_tlbin_edge(int64_t t0, int64_t t1, uint64_t n, uint64_t i)
{
    uint64_t T = (uint64_t)t1 - (uint64_t)t0;
    uint64_t q = T / n, r = T % n;
    return (int64_t)((uint64_t)t0 + i * q + (i * r) / n);
}

/* Walking the bins in order without dividing: bin b is [lo, hi); the remainder of
 * b * r / n is kept in frac, so the next edge is hi + q (+1 when frac wraps). */
typedef struct bin_cursor {
    uint64_t b, n, q, r, frac; /* frac = (b + 1) * r mod n: the remainder at hi */
    int64_t lo, hi;
} bin_cursor;

static void cursor_init(bin_cursor *c, int64_t t0, int64_t t1, uint64_t n)
{
    uint64_t T = (uint64_t)t1 - (uint64_t)t0;
    c->n = n, c->q = T / n, c->r = T % n, c->b = 0;
    c->lo = t0;
    c->frac = c->r; /* r < n */
    c->hi = (int64_t)((uint64_t)t0 + c->q);
}

static inline void cursor_step(bin_cursor *c)
{
    c->b++;
    c->lo = c->hi;
    c->hi = (int64_t)((uint64_t)c->hi + c->q);
    c->frac += c->r;
    if (c->frac >= c->n) {
        c->frac -= c->n;
        c->hi++;
    }
}

/* Jump to the bin holding x (x >= the current bin's start, x < t1): one division when
 * the jump is long, steps when it is short. */
static void cursor_seek(bin_cursor *c, int64_t t0, int64_t t1, int64_t x)
{
    if (x < c->hi)
        return;
    uint64_t dist = (uint64_t)x - (uint64_t)c->hi;
    if (dist / (c->q + 1) > 16) { /* far: compute the bin directly */
        double f = (double)((uint64_t)x - (uint64_t)t0) / (double)((uint64_t)t1 - (uint64_t)t0);
        uint64_t b = (uint64_t)(f * (double)c->n);
        if (b >= c->n)
            b = c->n - 1;
        while (b > c->b + 1 && lp_tlbin_edge(t0, t1, c->n, b) > x)
            b--;
        if (b > c->b + 1) { /* position the cursor at bin b - 1, then step */
            uint64_t p = b - 1;
            c->b = p;
            c->lo = lp_tlbin_edge(t0, t1, c->n, p);
            c->hi = lp_tlbin_edge(t0, t1, c->n, p + 1);
            /* (p + 1) * r mod n without overflow: r < n < 2^32 */
            c->frac = (uint64_t)(((p + 1) % c->n) * c->r % c->n);
        }
    }
    while (c->hi <= x)
        cursor_step(c);
}

/* A time in 15ths of a bin width, rounded; any positive time gives at least 1. */
static uint8_t q15(int64_t x, int64_t width)
{
    if (x <= 0 || width <= 0)
        return 0;
    double v = floor(15.0 * (double)x / (double)width + 0.5);
    if (v < 1)
        v = 1;
    if (v > 15)
        v = 15;
    return (uint8_t)v;
}

void lp_tlscratch_release(lp_tlscratch *s)
{
    lp_free(s->tt);
    lp_free(s->touched);
    memset(s, 0, sizeof *s);
}

/* Close bin b: the dominant type from the accumulators, then reset them. */
static void close_bin(lp_tlscratch *s, size_t *ntouched, int64_t busy, int64_t width, lp_tlbin *out)
{
    uint32_t best = UINT32_MAX;
    int64_t bt = 0;
    int waiting = 0;
    for (size_t k = 0; k < *ntouched; k++) {
        uint32_t ty = s->touched[k];
        int64_t v = s->tt[ty];
        s->tt[ty] = 0;
        if (ty == LP_TYPE_WAITING) {
            waiting = v > 0;
            continue;
        }
        if (v > bt || (v == bt && v > 0 && ty < best)) {
            bt = v;
            best = ty;
        }
    }
    *ntouched = 0;
    if (best != UINT32_MAX)
        out->dom = best + 1;
    else if (waiting)
        out->dom = LP_TYPE_WAITING + 1;
    out->busy = q15(busy, width);
}

lp_status lp_tlbin_row(const lp_trace *t, uint32_t w, const int64_t *cps, const int64_t *cpe, size_t ncp,
                       int64_t t0, int64_t t1, uint32_t n, lp_tlbin *out, lp_tlscratch *s, lp_error *err)
{
    if (w >= t->nworkers || t1 <= t0 || n == 0 || (uint64_t)n > (uint64_t)t1 - (uint64_t)t0)
        return lp_error_set(err, LP_ERR_ARG, "bad binning request (worker %u, %u bins)", w, n);
    if (s->captypes < t->ntypes) {
        int64_t *tt = lp_calloc(t->ntypes, sizeof *tt);
        uint32_t *to = lp_malloc((size_t)t->ntypes * sizeof *to);
        if (!tt || !to) {
            lp_free(tt);
            lp_free(to);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory binning the timeline");
        }
        lp_free(s->tt);
        lp_free(s->touched);
        s->tt = tt;
        s->touched = to;
        s->captypes = t->ntypes;
    }
    memset(out, 0, (size_t)n * sizeof *out);
    /* activities: the first one that may reach t0 */
    uint64_t lo = t->wfirst[w], hi = t->wfirst[w + 1];
    {
        uint64_t a = lo, b = hi; /* first activity with end > t0 */
        while (a < b) {
            uint64_t m = a + (b - a) / 2;
            if (t->aend[m] > t0)
                b = m;
            else
                a = m + 1;
        }
        lo = a;
    }
    size_t ntouched = 0;
    bin_cursor c;
    cursor_init(&c, t0, t1, n);
    int open = 0;            /* the cursor's bin has contributions */
    int64_t busy = 0;
    for (uint64_t i = lo; i < hi; i++) {
        if (t->astart[i] >= t1)
            break;
        int64_t a = t->astart[i] > t0 ? t->astart[i] : t0;
        int64_t e = t->aend[i] < t1 ? t->aend[i] : t1;
        if (e <= a)
            continue;
        uint32_t ty = t->atype[i];
        if (a >= c.hi) {
            if (open)
                close_bin(s, &ntouched, busy, c.hi - c.lo, &out[c.b]);
            open = 0, busy = 0;
            cursor_seek(&c, t0, t1, a);
        }
        while (a < e) {
            int64_t x = e < c.hi ? e : c.hi;
            if (s->tt[ty] == 0)
                s->touched[ntouched++] = ty;
            s->tt[ty] += x - a;
            if (ty != LP_TYPE_WAITING)
                busy += x - a;
            open = 1;
            a = x;
            if (a == c.hi) {
                close_bin(s, &ntouched, busy, c.hi - c.lo, &out[c.b]);
                open = 0, busy = 0;
                if (c.b + 1 < n)
                    cursor_step(&c);
                else
                    break;
            }
        }
    }
    if (open)
        close_bin(s, &ntouched, busy, c.hi - c.lo, &out[c.b]);
    /* critical-path coverage: a second sweep over the worker's path intervals */
    cursor_init(&c, t0, t1, n);
    int64_t cov = 0;
    open = 0;
    for (size_t k = 0; k < ncp; k++) {
        int64_t a = cps[k] > t0 ? cps[k] : t0;
        int64_t e = cpe[k] < t1 ? cpe[k] : t1;
        if (e <= a)
            continue;
        if (a >= c.hi) {
            if (open)
                out[c.b].cp = q15(cov, c.hi - c.lo);
            open = 0, cov = 0;
            cursor_seek(&c, t0, t1, a);
        }
        while (a < e) {
            int64_t x = e < c.hi ? e : c.hi;
            cov += x - a;
            open = 1;
            a = x;
            if (a == c.hi) {
                out[c.b].cp = q15(cov, c.hi - c.lo);
                open = 0, cov = 0;
                if (c.b + 1 < n)
                    cursor_step(&c);
                else
                    break;
            }
        }
    }
    if (open)
        out[c.b].cp = q15(cov, c.hi - c.lo);
    return LP_OK;
}
