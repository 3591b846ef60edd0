/* lpt_tok.h: the one .lpt line tokenizer, shared by the reader of files
 * (formats/lpt_text.c) and the streaming engine's text feeder (stream/stream_text.c).
 * Internal to the library.
 *
 * A line (without its newline; the caller strips a trailing '\r') is split at spaces and
 * tabs into tokens in place: a token is a pointer into the line and a length, nothing
 * is copied. Sixteen bytes at a time with SSE2 masks of the delimiters: the bits where
 * the mask changes between delimiter and token are the tokens' bounds; the same pass
 * notes whether the line holds a '%' (escapes to decode), so clean lines never scan
 * again. When the caller's buffer has 16 readable bytes after the line (the file
 * reader's chunks are padded) the last partial block is one more masked step; otherwise
 * (the stream's bytes as they came) it is done byte by byte. Without SSE2 a byte loop
 * does it all.
 */
#ifndef LP_FORMATS_LPT_TOK_H
#define LP_FORMATS_LPT_TOK_H

#include "base/util.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define LP_LPT_MAXTOK 256   /* tokens of one line at most */

typedef struct lp_lpt_tok {
    const char *p;   /* in the caller's line */
    size_t n;
    char *eq;        /* the caller's (the file reader keeps a token's first '=' here);
                      * the tokenizer does not set it */
} lp_lpt_tok;

/* Split p[0..n) into tk (room for LP_LPT_MAXTOK). `padded`: p[n .. n+16) may be read.
 * Returns the number of tokens, or LP_LPT_MAXTOK + 1 if there are more (the line is then
 * not wholly scanned and *pct is 1); *pct is 1 when the line has a '%', else 0.
 * Inline: each reader gets a copy specialised for its constant `padded` (a call per line
 * and the branch cost the file reader about 2% of a load under callgrind).
 *
 * Invariants: `in` is 1 while inside a token (start is where it began); a token is
 * emitted when the state goes back to delimiter or the line ends; bytes at and past n
 * count as delimiters and never as '%'. The result does not depend on `padded`, only
 * the speed of the last partial block does.
 */
static inline size_t lp_lpt_tokenize(const char *p, size_t n, int padded, lp_lpt_tok *tk, int *pct)
{
    size_t nt = 0, i = 0, start = 0;
    unsigned in = 0, haspct = 0;
#define EMIT(from, to)                          \
    do {                                        \
        if (nt == LP_LPT_MAXTOK) {              \
            *pct = 1;                           \
            return LP_LPT_MAXTOK + 1;           \
        }                                       \
        tk[nt].p = p + (from);                  \
        tk[nt].n = (to) - (from);               \
        nt++;                                   \
    } while (0)
#if defined(__SSE2__)
    const __m128i sp = _mm_set1_epi8(' '), tb = _mm_set1_epi8('\t'), pc = _mm_set1_epi8('%');
    size_t vend = padded ? n : n & ~(size_t)15; /* blocks read whole */
    for (; i < vend; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        unsigned delim = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, sp), _mm_cmpeq_epi8(x, tb)));
        unsigned pcts = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, pc));
        if (n - i < 16) { /* past the end: delimiters, and no '%' */
            delim |= 0xFFFFu << (n - i);
            pcts &= ~(0xFFFFu << (n - i));
        }
        haspct |= pcts;
        unsigned word = ~delim & 0xFFFFu;
        /* bits where the state changes between delimiter and token */
        unsigned change = (word ^ ((word << 1) | in)) & 0xFFFFu;
        while (change) {
            unsigned b = (unsigned)__builtin_ctz(change);
            change &= change - 1;
            if (!in)
                start = i + b;
            else
                EMIT(start, i + b);
            in ^= 1;
        }
        in = (word >> 15) & 1;
    }
#else
    (void)padded;
#endif
    for (; i < n; i++) {
        char c = p[i];
        unsigned d = c == ' ' || c == '\t';
        haspct |= c == '%';
        if (!in && !d) {
            start = i;
            in = 1;
        } else if (in && d) {
            EMIT(start, i);
            in = 0;
        }
    }
    if (in) /* a token running to the end */
        EMIT(start, n);
#undef EMIT
    *pct = haspct != 0;
    return nt;
}

/* Parse a time token: the common case (1..18 digits, no sign) eight digits at a time
 * (SWAR; only the token's own bytes are read), everything else through lp_parse_i64.
 * 1 on success. */
static inline int lp_lpt_parse_time(const char *s, size_t n, int64_t *out)
{
    if (n == 0 || n > 18 || (unsigned char)(s[0] - '0') > 9)
        return lp_parse_i64(s, n, out);
    uint64_t v = 0;
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        uint64_t c;
        memcpy(&c, s + i, 8);
        /* all eight bytes are '0'..'9': high nibble 3, and adding 6 keeps it 3 */
        if (((c & 0xF0F0F0F0F0F0F0F0ULL) | (((c + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) !=
            0x3333333333333333ULL)
            return 0;
        c &= 0x0F0F0F0F0F0F0F0FULL;              /* digit values, first digit in the low byte */
        c = (c * 10 + (c >> 8)) & 0x00FF00FF00FF00FFULL;  /* pairs: 2-digit values */
        c = (c * 100 + (c >> 16)) & 0x0000FFFF0000FFFFULL; /* quads: 4-digit values */
        c = (c * 10000 + (c >> 32)) & 0xFFFFFFFFULL;        /* the 8-digit value */
        v = v * 100000000ULL + c;
    }
    for (; i < n; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9)
            return 0;
        v = v * 10 + d;
    }
    *out = (int64_t)v;
    return 1;
}

#endif
