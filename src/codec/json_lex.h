/* json_lex.h: the JSON tokenizer of longpole, the one implementation of RFC 8259's
 * lexical grammar (whitespace, strings with their escapes and UTF-8, numbers, the
 * literals). Internal to codec: the readers of include/longpole/codec/json.h are built
 * on it, each with its own grammar walk:
 *   json.c       the streaming reader (records as trees, over a padded buffer);
 *   json_pull.c  the pull reader over a buffer in memory (one JSON line, a small file);
 *   json_head.c  the head scanner (the first bytes of a file, for format detection).
 *
 * Every function works on a byte range [p, end). `padded` (a constant at each call, so
 * the compiler keeps one specialised copy) says the caller's buffer has JL_PAD zero
 * bytes after end: scans then run 16 bytes at a time without bounds checks and a zero
 * byte stops them; without it every read is bounded by end.
 *
 * Strings are lexed in one of four modes (flags, also constants at each call):
 *   JL_STRICT  the streaming reader: escapes checked, UTF-8 validated (overlong forms and
 *              surrogates rejected), \u surrogates paired, raw control bytes rejected; the
 *              scan goes on after a problem (the first is kept: the reader can mend the
 *              string or skip its record) except at a line break, which ends the string
 *              as a syntax error (JL_BREAK);
 *   JL_PULL    the pull reader: escapes checked, control bytes rejected, bytes >= 0x80
 *              passed through (names are bytes), a lone surrogate decodes to U+FFFD; the
 *              scan stops at the first problem (JL_STOP);
 *   JL_SKIP    skipping a string: control bytes rejected, an escape is any two bytes;
 *   JL_HEAD    detection: nothing checked, an escape is any two bytes.
 * Invariant: on JL_OK, the bytes between the quotes can be decoded by jl_escape one
 * escape at a time (every escape was checked, in the modes that check them), and the
 * decoded form is never longer than the raw one.
 */
#ifndef LP_CODEC_JSON_LEX_H
#define LP_CODEC_JSON_LEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define JL_PAD 64 /* zero bytes after the data of a padded buffer */

/* string lexing modes (flags) */
#define JL_F_ESCAPES 0x1u /* check escapes */
#define JL_F_UNICODE 0x2u /* validate UTF-8 and surrogates */
#define JL_F_CTRL 0x4u    /* raw control bytes are problems */
#define JL_F_GO_ON 0x8u   /* scan on after a problem; a line break is structural */
#define JL_STRICT (JL_F_ESCAPES | JL_F_UNICODE | JL_F_CTRL | JL_F_GO_ON)
#define JL_PULL (JL_F_ESCAPES | JL_F_CTRL)
#define JL_SKIP JL_F_CTRL
#define JL_HEAD 0u

/* outcomes of jl_string */
enum { JL_OK = 0, JL_MORE, JL_BREAK, JL_STOP };

/* problems inside a string (the first one is kept) */
enum {
    JL_P_NONE = 0,
    JL_P_CTRL,   /* a raw control byte (val) */
    JL_P_ESC,    /* '\' followed by a byte that starts no escape (val) */
    JL_P_UHEX,   /* \u not followed by four hex digits */
    JL_P_HIGH,   /* a high surrogate \u (val) without a low one after it */
    JL_P_LOW,    /* a lone low surrogate (val) */
    JL_P_UTF8    /* a byte (val) that is not part of valid UTF-8 */
};

typedef struct jl_str {
    const unsigned char *q;  /* JL_OK: the closing quote; JL_STOP: the problem; JL_MORE: where data ran out */
    const unsigned char *at; /* the first problem (an escape's backslash, the byte), or the line break (JL_BREAK) */
    const unsigned char *esc;/* the first backslash, or NULL */
    int prob;                /* JL_P_* of the first problem */
    unsigned val;            /* its byte, escape letter or code unit */
} jl_str;

static inline int jl_is_ws(unsigned c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static inline int jl_is_digit(unsigned c) { return c - '0' < 10u; }

/* Skip whitespace; line breaks are counted into *line when line is not NULL. */
static inline const unsigned char *jl_ws(const unsigned char *p, const unsigned char *end, uint64_t *line,
                                         const int padded)
{
    for (;;) {
        if (!padded && p >= end)
            return p;
        unsigned ch = *p;
        if (ch > ' ')
            return p;
        if (ch == ' ' || ch == '\t' || ch == '\r')
            p++;
        else if (ch == '\n') {
            if (line)
                (*line)++;
            p++;
        } else
            return p; /* a control byte or the padding */
    }
}

static inline int jl_hexval(unsigned c)
{
    if (c >= '0' && c <= '9')
        return (int)(c - '0');
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return (int)(c - 'a' + 10);
    return -1;
}

/* Four hex digits at p (readable): the value, or -1. */
static inline int jl_hex4(const unsigned char *p)
{
    int a = jl_hexval(p[0]), b = jl_hexval(p[1]), x = jl_hexval(p[2]), d = jl_hexval(p[3]);
    if ((a | b | x | d) < 0)
        return -1;
    return a << 12 | b << 8 | x << 4 | d;
}

/* Length of the UTF-8 sequence at p (2..4), 0 if invalid, -1 if it runs past end. */
static inline int jl_utf8_seq(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    int n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (end - p < n)
        return -1;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* The UTF-8 form of code point cp at o (1..4 bytes); returns its length. */
static inline size_t jl_put_utf8(unsigned char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The first byte at or after p that is '"', '\\', < 0x20 or >= 0x80 (end if none).
 * Unpadded, the last bytes before end are looked at in one block too when the buffer
 * starts at least 16 bytes before end (lo: its start, or NULL if unknown). */
static inline const unsigned char *jl_scan_plain(const unsigned char *p, const unsigned char *end,
                                                 const unsigned char *lo, const int padded)
{
#if defined(__SSE2__)
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), sp = _mm_set1_epi8(0x20);
#define JL_MASK16(at)                                                                                              \
    ((unsigned)_mm_movemask_epi8(_mm_or_si128(                                                                     \
        _mm_or_si128(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(at)), q),                    \
                     _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(at)), bs)),                  \
        _mm_cmplt_epi8(_mm_loadu_si128((const __m128i *)(const void *)(at)), sp))))
    while (padded || end - p >= 16) {
        unsigned mask = JL_MASK16(p);
        if (mask)
            return p + __builtin_ctz(mask);
        p += 16;
    }
    if (!padded && p < end && lo && end - lo >= 16) {
        /* the block that ends at end, without the bytes before p */
        unsigned mask = JL_MASK16(end - 16) >> (16 - (end - p));
        return mask ? p + __builtin_ctz(mask) : end;
    }
#undef JL_MASK16
#else
    (void)lo;
    while (padded || end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
        uint64_t xq = w ^ (ones * '"'), xb = w ^ (ones * '\\');
        uint64_t t = ((xq - ones) & ~xq) | ((xb - ones) & ~xb) | (w - ones * 0x20) | w;
        t &= high;
        if (t) {
            for (int i = 0; i < 8; i++)
                if (p[i] == '"' || p[i] == '\\' || p[i] < 0x20 || p[i] >= 0x80)
                    return p + i;
        }
        p += 8;
    }
#endif
    for (; p < end; p++)
        if (*p == '"' || *p == '\\' || *p < 0x20 || *p >= 0x80)
            return p;
    return end;
}

#define JL_PROB(r, code, where, v)                                                                                 \
    do {                                                                                                           \
        if (!(r)->prob) {                                                                                          \
            (r)->prob = (code);                                                                                    \
            (r)->at = (where);                                                                                     \
            (r)->val = (v);                                                                                        \
        }                                                                                                          \
    } while (0)

/* Lex the string whose first byte (after the opening quote) is at p. JL_OK: r->q is the
 * closing quote; JL_MORE: the data ended first (`final`: no data follows end; when not
 * final, a step that needs bytes past end also asks for more); JL_BREAK (JL_F_GO_ON): a
 * line break inside the string, at r->at; JL_STOP (without JL_F_GO_ON): the first
 * problem, at r->q. r->prob, r->at, r->val describe the first problem and r->esc the
 * first backslash. lo: as for jl_scan_plain. */
static inline int jl_string(const unsigned char *p, const unsigned char *end, const unsigned char *lo, int final,
                            const unsigned mode, const int padded, jl_str *r)
{
    r->prob = JL_P_NONE;
    r->esc = r->at = NULL;
    r->val = 0;
    for (;;) {
        p = jl_scan_plain(p, end, lo, padded);
        if (p >= end) {
            r->q = p;
            return JL_MORE;
        }
        unsigned ch = *p;
        if (ch == '"') {
            r->q = p;
            return JL_OK;
        }
        if (ch == '\\') {
            if (!r->esc)
                r->esc = p;
            if (end - p < 2) {
                r->q = p;
                return JL_MORE;
            }
            unsigned x = p[1];
            if (!(mode & JL_F_ESCAPES)) {
                p += 2;
                continue;
            }
            if (x == 'u') {
                if (end - p < 6 && !final) {
                    r->q = p;
                    return JL_MORE;
                }
                int v = end - p >= 6 ? jl_hex4(p + 2) : -1;
                if (v < 0) {
                    JL_PROB(r, JL_P_UHEX, p, 0);
                    if (!(mode & JL_F_GO_ON)) {
                        r->q = p;
                        return JL_STOP;
                    }
                    p += 2;
                    continue;
                }
                if (v >= 0xD800 && v <= 0xDBFF) {
                    if (end - p < 12 && !final) {
                        r->q = p;
                        return JL_MORE;
                    }
                    int w = end - p >= 12 && p[6] == '\\' && p[7] == 'u' ? jl_hex4(p + 8) : -1;
                    if (w < 0xDC00 || w > 0xDFFF) {
                        if (mode & JL_F_UNICODE)
                            JL_PROB(r, JL_P_HIGH, p, (unsigned)v);
                        p += 6;
                        continue;
                    }
                    p += 12;
                    continue;
                }
                if (v >= 0xDC00 && v <= 0xDFFF && (mode & JL_F_UNICODE))
                    JL_PROB(r, JL_P_LOW, p, (unsigned)v);
                p += 6;
                continue;
            }
            if (x == 0 || !strchr("\"\\/bfnrt", (int)x)) {
                if ((mode & JL_F_GO_ON) && x == '\n') {
                    r->at = p + 1;
                    return JL_BREAK;
                }
                JL_PROB(r, JL_P_ESC, p, x);
                if (!(mode & JL_F_GO_ON)) {
                    r->q = p;
                    return JL_STOP;
                }
            }
            p += 2;
            continue;
        }
        if (ch < 0x20) {
            if (mode & JL_F_CTRL) {
                if ((mode & JL_F_GO_ON) && ch == '\n') {
                    r->at = p;
                    return JL_BREAK;
                }
                JL_PROB(r, JL_P_CTRL, p, ch);
                if (!(mode & JL_F_GO_ON)) {
                    r->q = p;
                    return JL_STOP;
                }
            }
            p++;
            continue;
        }
        /* ch >= 0x80 */
        if (!(mode & JL_F_UNICODE)) {
            p++;
            continue;
        }
        int k = jl_utf8_seq(p, end);
        if (k < 0) {
            r->q = p;
            return JL_MORE;
        }
        if (k == 0) {
            JL_PROB(r, JL_P_UTF8, p, ch);
            p++;
            continue;
        }
        p += k;
    }
}

/* Decode the escape at q (q[0] == '\\', checked by jl_string: q + 2 <= end, and a \u has
 * its four hex digits) into o (at most 4 bytes); returns the input bytes it took and
 * sets *w to the bytes written. A \u surrogate pair becomes one code point, a lone
 * surrogate U+FFFD. */
static inline size_t jl_escape(const unsigned char *q, const unsigned char *end, unsigned char *o, size_t *w)
{
    switch (q[1]) {
    case 'b': *o = '\b'; break;
    case 'f': *o = '\f'; break;
    case 'n': *o = '\n'; break;
    case 'r': *o = '\r'; break;
    case 't': *o = '\t'; break;
    case 'u': {
        uint32_t cp = (uint32_t)jl_hex4(q + 2);
        size_t used = 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            int lo = end - q >= 12 && q[6] == '\\' && q[7] == 'u' ? jl_hex4(q + 8) : -1;
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
                used = 12;
            } else {
                cp = 0xFFFD;
            }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            cp = 0xFFFD;
        }
        *w = jl_put_utf8(o, cp);
        return used;
    }
    default: *o = q[1]; break; /* " \ / */
    }
    *w = 1;
    return 2;
}

/* The number at p by RFC 8259's grammar: returns the end of the longest prefix that
 * follows it; *bad is where the grammar failed (NULL if it did not: then the token may
 * still run on, and the caller checks what follows). *isint: no fraction, no exponent. */
static inline const unsigned char *jl_number(const unsigned char *p, const unsigned char *end, const int padded,
                                             const unsigned char **bad, int *isint)
{
#define JL_AT(c) ((padded || p < end) && (c))
    *bad = NULL;
    *isint = 1;
    if (JL_AT(*p == '-'))
        p++;
    if (JL_AT(*p == '0')) {
        p++;
    } else if (JL_AT(*p >= '1' && *p <= '9')) {
        while (JL_AT(jl_is_digit(*p)))
            p++;
    } else {
        *bad = p;
        return p;
    }
    if (JL_AT(*p == '.')) {
        *isint = 0;
        p++;
        if (!JL_AT(jl_is_digit(*p))) {
            *bad = p;
            return p;
        }
        while (JL_AT(jl_is_digit(*p)))
            p++;
    }
    if (JL_AT(*p == 'e' || *p == 'E')) {
        *isint = 0;
        p++;
        if (JL_AT(*p == '+' || *p == '-'))
            p++;
        if (!JL_AT(jl_is_digit(*p))) {
            *bad = p;
            return p;
        }
        while (JL_AT(jl_is_digit(*p)))
            p++;
    }
    return p;
#undef JL_AT
}

/* The integer in the text s[0..n) (an optional sign, then digits only): 0 with *v set;
 * -1 at the first byte that is not a digit, -2 when the value leaves uint64 before it
 * or int64 at the end. */
static inline int jl_int_text(const char *s, size_t n, int64_t *v)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    if (i == n)
        return -1;
    uint64_t acc = 0;
    for (; i < n; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9)
            return -1;
        if (acc > (UINT64_MAX - d) / 10)
            return -2;
        acc = acc * 10 + d;
    }
    if (neg) {
        if (acc > (uint64_t)INT64_MAX + 1)
            return -2;
        *v = acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc;
    } else {
        if (acc > (uint64_t)INT64_MAX)
            return -2;
        *v = (int64_t)acc;
    }
    return 0;
}

/* The literal `word` (n bytes) at p: 1 if it is there, -1 if the data ends inside a
 * prefix of it, 0 otherwise. */
static inline int jl_literal(const unsigned char *p, const unsigned char *end, const char *word, size_t n)
{
    if ((size_t)(end - p) < n)
        return memcmp(p, word, (size_t)(end - p)) == 0 ? -1 : 0;
    return memcmp(p, word, n) == 0;
}

#endif
