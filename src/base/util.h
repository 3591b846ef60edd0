/* util.h: small internal helpers shared by the library: number parsing and formatting.
 * Not part of the public API. */
#ifndef LP_CORE_UTIL_H
#define LP_CORE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Parse a canonical decimal (no sign, no leading zeros except "0") below 2^63. */
int lp_parse_canonical_u63(const char *s, size_t n, uint64_t *out);
/* Parse a signed decimal 64-bit integer ("-12", "+5", "0"); 1 on success, 0 on bad syntax
 * or overflow. */
int lp_parse_i64(const char *s, size_t n, int64_t *out);
/* Write v in decimal at p (no NUL); returns the number of bytes (at most 20). Inline:
 * the text writer's hottest path. Digits go straight to p, in 8-digit groups so that
 * the arithmetic is 32-bit. */
extern const char lp_digits2[201]; /* "00" "01" ... "99" */

static inline void lp_fmt8_(char *p, uint32_t v) /* exactly 8 digits of v < 10^8 */
{
    uint32_t hi = v / 10000, lo = v % 10000;
    memcpy(p, lp_digits2 + 2 * (hi / 100), 2);
    memcpy(p + 2, lp_digits2 + 2 * (hi % 100), 2);
    memcpy(p + 4, lp_digits2 + 2 * (lo / 100), 2);
    memcpy(p + 6, lp_digits2 + 2 * (lo % 100), 2);
}

static inline size_t lp_fmt_small_(char *p, uint32_t v) /* v < 10^8, no leading zeros */
{
    size_t n = v >= 10000000 ? 8 : v >= 1000000 ? 7 : v >= 100000 ? 6 : v >= 10000 ? 5 : v >= 1000 ? 4 : v >= 100 ? 3
             : v >= 10       ? 2
                             : 1;
    char *q = p + n;
    while (v >= 100) {
        q -= 2;
        memcpy(q, lp_digits2 + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, lp_digits2 + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    return n;
}

static inline size_t lp_fmt_u64(char *p, uint64_t v)
{
    if (v < 100000000)
        return lp_fmt_small_(p, (uint32_t)v);
    uint64_t top = v / 100000000;
    uint32_t low = (uint32_t)(v % 100000000);
    size_t n;
    if (top < 100000000) {
        n = lp_fmt_small_(p, (uint32_t)top);
    } else {
        n = lp_fmt_small_(p, (uint32_t)(top / 100000000));
        lp_fmt8_(p + n, (uint32_t)(top % 100000000));
        n += 8;
    }
    lp_fmt8_(p + n, low);
    return n + 8;
}

static inline size_t lp_fmt_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p = '-';
        return 1 + lp_fmt_u64(p + 1, (uint64_t)0 - (uint64_t)v);
    }
    return lp_fmt_u64(p, (uint64_t)v);
}
/* Human duration: "1.23 s", "456 us", "78 ns" (3 significant digits). */
const char *lp_fmt_dur(int64_t ns, char *buf, size_t n);
/* A line number stored in 32 bits (saturating: lines past 2^32-1 all read as the last). */
static inline uint32_t lp_line32(uint64_t l) { return l > UINT32_MAX ? UINT32_MAX : (uint32_t)l; }
/* Check UTF-8 validity. */
int lp_utf8_valid(const char *s, size_t n);

#endif
