/* xnum.c: the out-of-line operations on lp_xnum (xnum.h): conversion, ratio, log10,
 * comparison and decimal formatting. */
#include "longpole/graph/xnum.h"

#include <stdio.h>

lp_xnum lp_xnum_from_double(double v)
{
    lp_xnum r = {0.0, 0, 0};
    if (!(v > 0) || !isfinite(v))
        return r;
    r.m = v;
    while (r.m >= LP_XNUM_BIG_) {
        r.m *= LP_XNUM_SMALL_;
        r.e++;
    }
    while (r.m < 1.0) {
        r.m *= LP_XNUM_BIG_;
        r.e--;
    }
    r.rd = (v == floor(v) && v <= LP_XNUM_EXACT_) ? 0 : 1;
    return r;
}

double lp_xnum_ratio(lp_xnum a, lp_xnum b)
{
    if (a.m == 0)
        return 0.0;
    return lp_xnum_scale(a.m / b.m, (int64_t)a.e - b.e);
}

double lp_xnum_log10(lp_xnum x)
{
    if (x.m == 0)
        return -HUGE_VAL;
    return (double)(log10l((long double)x.m) + (long double)x.e * LP_XNUM_STEP * 0.30102999566398119521373889472449302677L);
}

int lp_xnum_cmp(lp_xnum a, lp_xnum b)
{
    if (a.m == 0 || b.m == 0)
        return (a.m > 0) - (b.m > 0);
    if (a.e != b.e)
        return a.e < b.e ? -1 : 1;
    return a.m < b.m ? -1 : a.m > b.m;
}

const char *lp_xnum_fmt(lp_xnum x, int digits, char *buf, size_t n)
{
    if (digits < 1)
        digits = 1;
    if (digits > 17)
        digits = 17;
    if (x.m == 0) {
        snprintf(buf, n, "0");
        return buf;
    }
    if (x.e == 0 && x.m <= LP_XNUM_EXACT_ && x.m == floor(x.m)) {
        snprintf(buf, n, "%.0f", x.m);
        return buf;
    }
    long double l = log10l((long double)x.m) + (long double)x.e * LP_XNUM_STEP * 0.30102999566398119521373889472449302677L;
    long double ex = floorl(l);
    long double mant = powl(10.0L, l - ex);
    /* rounding the mantissa to `digits` may carry into the next power of ten */
    long double unit = powl(10.0L, (long double)(digits - 1));
    mant = roundl(mant * unit) / unit;
    if (mant >= 10.0L) {
        mant /= 10.0L;
        ex += 1.0L;
    }
    snprintf(buf, n, "%.*Lfe%+lld", digits - 1, mant, (long long)ex);
    return buf;
}
