/* xnum.h: lp_xnum, the numbers path counts are kept in (pathcount.h; SnailTrail's
 * critical participation, cpmetric.h).
 *
 * Path counts overflow any fixed-size type (a barrier-synchronised window of 2,000
 * workers has far more than 10^308 paths). An lp_xnum is a double mantissa and an
 * int32 exponent of 2^256 (value = m * 2^(256 e), 1 <= m < 2^256 or m = 0), so the
 * range is 2^(256 * 2^31) and every operation rounds at most once, like a double:
 * relative error <= 2^-53 per operation, power-of-two rescaling is exact, and an
 * addend below 2^-256 of the sum is dropped (an error far below 2^-53). Integers below
 * 2^53 are exact, so small graphs are counted exactly. Every number carries its
 * rounding depth rd: the most roundings on any chain of operations that produced it
 * (additions of exact integers do not count), so a caller can bound the error of what
 * it derives. Addition and multiplication are inline (the counting passes' hot paths).
 */
#ifndef LONGPOLE_GRAPH_XNUM_H
#define LONGPOLE_GRAPH_XNUM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define LP_XNUM_STEP 256      /* exponent unit: value = m * 2^(LP_XNUM_STEP * e) */
#define LP_XNUM_BIG_ 0x1p256
#define LP_XNUM_SMALL_ 0x1p-256
#define LP_XNUM_EXACT_ 0x1p53 /* integers up to here are exact in a double */

typedef struct lp_xnum {
    double m;                 /* 0, or in [1, 2^LP_XNUM_STEP) */
    int32_t e;                /* 0 when m is 0 */
    uint32_t rd;              /* rounding depth (see above) */
} lp_xnum;

static inline lp_xnum lp_xnum_zero(void) { lp_xnum x = {0.0, 0, 0}; return x; }
static inline lp_xnum lp_xnum_one(void) { lp_xnum x = {1.0, 0, 0}; return x; }

static inline uint32_t lp_xnum_maxu_(uint32_t a, uint32_t b) { return a > b ? a : b; }

static inline lp_xnum lp_xnum_add(lp_xnum a, lp_xnum b)
{
    if (a.m == 0)
        return b;
    if (b.m == 0)
        return a;
    lp_xnum r;
    if (a.e == b.e) {
        r.m = a.m + b.m;
        r.e = a.e;
        r.rd = lp_xnum_maxu_(a.rd, b.rd);
        if (a.e != 0 || a.rd || b.rd || r.m > LP_XNUM_EXACT_) /* integers below 2^53 add exactly */
            r.rd++;
        if (r.m >= LP_XNUM_BIG_) {
            r.m *= LP_XNUM_SMALL_;
            r.e++;
        }
        return r;
    }
    if (a.e < b.e) {
        lp_xnum x = a;
        a = b;
        b = x;
    }
    r.e = a.e;
    r.rd = lp_xnum_maxu_(a.rd, b.rd) + 1;
    r.m = a.e - b.e == 1 ? a.m + b.m * LP_XNUM_SMALL_ : a.m; /* further apart: b < 2^-256 of a */
    if (r.m >= LP_XNUM_BIG_) {
        r.m *= LP_XNUM_SMALL_;
        r.e++;
    }
    return r;
}

static inline lp_xnum lp_xnum_mul(lp_xnum a, lp_xnum b)
{
    if (a.m == 0 || b.m == 0)
        return lp_xnum_zero();
    lp_xnum r;
    r.m = a.m * b.m;
    r.e = a.e + b.e;
    r.rd = a.rd + b.rd;
    if (r.e != 0 || a.rd || b.rd || r.m > LP_XNUM_EXACT_)
        r.rd++;
    if (r.m >= LP_XNUM_BIG_) {
        r.m *= LP_XNUM_SMALL_;
        r.e++;
    }
    return r;
}

/* m * 2^(256 d) for small d, exactly (as long as the result is a normal double). */
static inline double lp_xnum_scale(double m, int64_t d)
{
    switch (d) {
    case 0: return m;
    case -1: return m * LP_XNUM_SMALL_;
    case -2: return m * LP_XNUM_SMALL_ * LP_XNUM_SMALL_;
    case 1: return m * LP_XNUM_BIG_;
    default: return d < -5 ? 0.0 : d > 3 ? HUGE_VAL : ldexp(m, (int)(d * LP_XNUM_STEP));
    }
}

lp_xnum lp_xnum_from_double(double v);   /* v >= 0, finite */
/* a / b as a double (0 if a is 0; b must not be 0); exact to one rounding plus the
 * operands' errors; underflows to 0 below ~1e-308. */
double lp_xnum_ratio(lp_xnum a, lp_xnum b);
/* log10 of x (-inf for 0). */
double lp_xnum_log10(lp_xnum x);
/* Compare magnitudes: -1, 0, 1. */
int lp_xnum_cmp(lp_xnum a, lp_xnum b);
/* Decimal scientific notation with `digits` significant digits ("3.21e+4021"), or the
 * exact integer when below 2^53; returns buf. */
const char *lp_xnum_fmt(lp_xnum x, int digits, char *buf, size_t n);

#endif
