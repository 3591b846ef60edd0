/* util.h: small internal helpers shared by the library: number parsing and formatting.
 * Not part of the public API. */
#ifndef LP_CORE_UTIL_H
#define LP_CORE_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Parse a canonical decimal (no sign, no leading zeros except "0") below 2^63. */
int lp_parse_canonical_u63(const char *s, size_t n, uint64_t *out);
/* Parse a signed decimal 64-bit integer ("-12", "+5", "0"); 1 on success, 0 on bad syntax
 * or overflow. */
int lp_parse_i64(const char *s, size_t n, int64_t *out);
/* Write v in decimal at p (no NUL); returns the number of bytes (at most 20). */
size_t lp_fmt_i64(char *p, int64_t v);
size_t lp_fmt_u64(char *p, uint64_t v);
/* Human duration: "1.23 s", "456 us", "78 ns" (3 significant digits). */
const char *lp_fmt_dur(int64_t ns, char *buf, size_t n);
/* Check UTF-8 validity. */
int lp_utf8_valid(const char *s, size_t n);

#endif
