/* util.c: number parsing/formatting and UTF-8 validation used by readers and writers.
 * The integer routines are on the hot path of the text reader and writer: no locale,
 * no errno, explicit overflow checks. */
#include "base/util.h"

#include <stdio.h>
#include <string.h>

int lp_parse_canonical_u63(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 19 || (n > 1 && s[0] == '0'))
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9)
            return 0;
        v = v * 10 + d;
    }
    if (v >= (UINT64_C(1) << 63))
        return 0;
    *out = v;
    return 1;
}

int lp_parse_i64(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (n && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n || n - i > 19)
        return 0;
    uint64_t v = 0;
    for (; i < n; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9)
            return 0;
        v = v * 10 + d; /* at most 19 digits: no uint64 overflow */
    }
    if (neg) {
        if (v > (UINT64_C(1) << 63))
            return 0;
        *out = v == (UINT64_C(1) << 63) ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX)
            return 0;
        *out = (int64_t)v;
    }
    return 1;
}

const char lp_digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

const char *lp_fmt_dur(int64_t ns, char *buf, size_t n)
{
    static const struct {
        double div;
        const char *unit;
    } units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}};
    double a = ns < 0 ? -(double)ns : (double)ns;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (a >= units[i].div || (i + 1 < sizeof units / sizeof units[0] && a >= units[i].div * 0.9995)) {
            /* (999.96 ms rounds to "1.00 s", not "1000 ms") */
            double v = (double)ns / units[i].div;
            double av = v < 0 ? -v : v;
            snprintf(buf, n, av >= 100 ? "%.0f %s" : av >= 10 ? "%.1f %s" : "%.2f %s", v, units[i].unit);
            return buf;
        }
    }
    snprintf(buf, n, "%lld ns", (long long)ns);
    return buf;
}

int lp_utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        unsigned min;
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            min = 0x80;
            c &= 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            min = 0x800;
            c &= 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            min = 0x10000;
            c &= 0x07;
        } else {
            return 0;
        }
        if (i + len > n)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            c = (c << 6) | (s[i + k] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}
