/* pulltwin.h: the naive twin of the pull reader (lp_json_pull_*, src/codec/json_pull.c):
 * the request log's former JSON reader, byte by byte with every check written out, kept
 * as the reference that test_json_pull.c compares the pull reader with (results, error
 * messages and error places) on random and mutated documents. Test code only.
 */
#ifndef LP_TEST_PULLTWIN_H
#define LP_TEST_PULLTWIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TW_MAXDEPTH 64

typedef struct tw {
    const char *p, *end, *start, *why;
} tw;

static inline void tw_ws(tw *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int tw_fail(tw *j, const char *why)
{
    j->why = why;
    return -1;
}

static void tw_init(tw *j, const char *s, size_t n)
{
    j->p = j->start = s;
    j->end = s + n;
    j->why = NULL;
}

static int tw_peek(tw *j)
{
    tw_ws(j);
    return j->p < j->end ? (unsigned char)*j->p : -1;
}

static int tw_at_end(tw *j)
{
    tw_ws(j);
    return j->p == j->end;
}

static int tw_expect(tw *j, char c)
{
    tw_ws(j);
    if (j->p >= j->end || *j->p != c) {
        static const char *const msgs[] = {"expected '{'", "expected '}'", "expected '['", "expected ']'",
                                           "expected ':'", "expected ','", "unexpected character"};
        const char *m = c == '{' ? msgs[0] : c == '}' ? msgs[1] : c == '[' ? msgs[2] : c == ']' ? msgs[3]
                      : c == ':' ? msgs[4] : c == ',' ? msgs[5] : msgs[6];
        return tw_fail(j, m);
    }
    j->p++;
    return 0;
}

static int tw_next(tw *j, char close)
{
    tw_ws(j);
    if (j->p < j->end && *j->p == ',') {
        j->p++;
        return 1;
    }
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return 0;
    }
    return tw_fail(j, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

static int tw_hex4(const char *p, unsigned *v)
{
    unsigned x = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = (unsigned char)p[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        x = x * 16 + d;
    }
    *v = x;
    return 0;
}

static size_t tw_put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static int tw_string(tw *j, const char **s, size_t *n, char *buf, size_t cap)
{
    tw_ws(j);
    if (j->p >= j->end || *j->p != '"')
        return tw_fail(j, "expected a string");
    const char *q = ++j->p;
    /* fast path: no escapes */
    while (q < j->end && *q != '"' && *q != '\\') {
        if ((unsigned char)*q < 0x20)
            return j->p = q, tw_fail(j, "control character in a string");
        q++;
    }
    if (q >= j->end)
        return tw_fail(j, "unterminated string");
    if (*q == '"') {
        *s = j->p;
        *n = (size_t)(q - j->p);
        j->p = q + 1;
        return 0;
    }
    /* slow path: unescape into buf */
    size_t o = (size_t)(q - j->p);
    if (o > cap)
        return tw_fail(j, "string too long");
    memcpy(buf, j->p, o);
    while (q < j->end && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20)
            return j->p = q, tw_fail(j, "control character in a string");
        if (o + 4 > cap)
            return tw_fail(j, "string too long");
        if (c != '\\') {
            buf[o++] = (char)c;
            q++;
            continue;
        }
        if (q + 1 >= j->end)
            return tw_fail(j, "unterminated string");
        char e = q[1];
        q += 2;
        switch (e) {
        case '"': buf[o++] = '"'; break;
        case '\\': buf[o++] = '\\'; break;
        case '/': buf[o++] = '/'; break;
        case 'b': buf[o++] = '\b'; break;
        case 'f': buf[o++] = '\f'; break;
        case 'n': buf[o++] = '\n'; break;
        case 'r': buf[o++] = '\r'; break;
        case 't': buf[o++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (j->end - q < 4 || tw_hex4(q, &cp))
                return j->p = q, tw_fail(j, "bad \\u escape");
            q += 4;
            if (cp >= 0xD800 && cp < 0xDC00) {
                unsigned lo;
                if (j->end - q >= 6 && q[0] == '\\' && q[1] == 'u' && tw_hex4(q + 2, &lo) == 0 && lo >= 0xDC00 &&
                    lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    q += 6;
                } else {
                    cp = 0xFFFD;
                }
            } else if (cp >= 0xDC00 && cp < 0xE000) {
                cp = 0xFFFD;
            }
            o += tw_put_utf8(buf + o, cp);
            break;
        }
        default: return j->p = q - 1, tw_fail(j, "bad escape");
        }
    }
    if (q >= j->end)
        return tw_fail(j, "unterminated string");
    j->p = q + 1;
    *s = buf;
    *n = o;
    return 0;
}

static int tw_number(tw *j, const char **s, size_t *n)
{
    tw_ws(j);
    const char *q = j->p, *b = q;
    if (q < j->end && *q == '-')
        q++;
    if (q >= j->end || *q < '0' || *q > '9')
        return tw_fail(j, "expected a number");
    if (*q == '0')
        q++;
    else
        while (q < j->end && *q >= '0' && *q <= '9')
            q++;
    if (q < j->end && *q == '.') {
        q++;
        if (q >= j->end || *q < '0' || *q > '9')
            return j->p = q, tw_fail(j, "bad number");
        while (q < j->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < j->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < j->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= j->end || *q < '0' || *q > '9')
            return j->p = q, tw_fail(j, "bad number");
        while (q < j->end && *q >= '0' && *q <= '9')
            q++;
    }
    *s = b;
    *n = (size_t)(q - b);
    j->p = q;
    return 0;
}

static int tw_word(tw *j, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
        return tw_fail(j, "unexpected character");
    j->p += n;
    return 0;
}

static int tw_scalar(tw *j, const char **s, size_t *n, char *buf, size_t cap, int *kind)
{
    int c = tw_peek(j);
    if (c == '"') {
        *kind = 's';
        return tw_string(j, s, n, buf, cap);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        *kind = 'n';
        return tw_number(j, s, n);
    }
    const char *b = j->p;
    if (c == 't') {
        *kind = 't';
        if (tw_word(j, "true"))
            return -1;
    } else if (c == 'f') {
        *kind = 'f';
        if (tw_word(j, "false"))
            return -1;
    } else if (c == 'n') {
        *kind = 'z';
        if (tw_word(j, "null"))
            return -1;
    } else {
        return tw_fail(j, c < 0 ? "unexpected end of input" : "expected a value");
    }
    *s = b;
    *n = (size_t)(j->p - b);
    return 0;
}

static int tw_obj(tw *j)
{
    if (tw_expect(j, '{'))
        return -1;
    if (tw_peek(j) == '}') {
        j->p++;
        return 0;
    }
    return 1;
}

static int tw_arr(tw *j)
{
    if (tw_expect(j, '['))
        return -1;
    if (tw_peek(j) == ']') {
        j->p++;
        return 0;
    }
    return 1;
}

static int tw_key(tw *j, const char **s, size_t *n, char *buf, size_t cap)
{
    if (tw_string(j, s, n, buf, cap))
        return -1;
    return tw_expect(j, ':');
}

/* Walk over a string without copying it. */
static int tw_skip_string(tw *j)
{
    tw_ws(j);
    if (j->p >= j->end || *j->p != '"')
        return tw_fail(j, "expected a string");
    const char *q = j->p + 1;
    while (q < j->end && *q != '"') {
        if ((unsigned char)*q < 0x20)
            return j->p = q, tw_fail(j, "control character in a string");
        q += (*q == '\\') ? 2 : 1;
    }
    if (q >= j->end)
        return tw_fail(j, "unterminated string");
    j->p = q + 1;
    return 0;
}

/* Skip with an explicit stack of open brackets (no recursion). */
static int tw_skip(tw *j)
{
    char stack[TW_MAXDEPTH];
    int depth = 0;
    char tmp[8];
    for (;;) {
        /* at the start of a value */
        int c = tw_peek(j);
        if (c == '{' || c == '[') {
            if (depth == TW_MAXDEPTH)
                return tw_fail(j, "nesting too deep");
            j->p++;
            char close = (char)(c == '{' ? '}' : ']');
            if (tw_peek(j) == close) {
                j->p++;
            } else {
                stack[depth++] = close;
                if (c == '{' && (tw_skip_string(j) || tw_expect(j, ':')))
                    return -1;
                continue;
            }
        } else if (c == '"') {
            if (tw_skip_string(j))
                return -1;
        } else {
            const char *s;
            size_t n;
            int kind;
            if (tw_scalar(j, &s, &n, tmp, sizeof tmp, &kind))
                return -1;
        }
        /* after a value: close brackets, or go to the next element */
        for (;;) {
            if (depth == 0)
                return 0;
            int r = tw_next(j, stack[depth - 1]);
            if (r < 0)
                return -1;
            if (r == 0) {
                depth--;
                continue;
            }
            if (stack[depth - 1] == '}' && (tw_skip_string(j) || tw_expect(j, ':')))
                return -1;
            break;
        }
    }
}

static int tw_i64(tw *j, int64_t *v)
{
    const char *s;
    size_t n;
    if (tw_number(j, &s, &n))
        return -1;
    size_t i = 0;
    int neg = 0;
    if (s[0] == '-')
        neg = 1, i = 1;
    uint64_t x = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return tw_fail(j, "expected an integer");
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return tw_fail(j, "integer out of range");
        x = x * 10 + d;
    }
    if ((!neg && x > (uint64_t)INT64_MAX) || (neg && x > (uint64_t)INT64_MAX + 1))
        return tw_fail(j, "integer out of range");
    *v = neg ? (int64_t)(0 - x) : (int64_t)x;
    return 0;
}

#endif
