/* reqlog_json.c: the small JSON pull reader (see reqlog_json.h). RFC 8259 grammar;
 * invalid UTF-8 inside strings is passed through (names are bytes to longpole). */
#include "codec/json_pull.h"

#include <string.h>

static inline void ws(lp_rj *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int fail(lp_rj *j, const char *why)
{
    j->why = why;
    return -1;
}

void lp_rj_init(lp_rj *j, const char *s, size_t n)
{
    j->p = j->start = s;
    j->end = s + n;
    j->why = NULL;
}

int lp_rj_peek(lp_rj *j)
{
    ws(j);
    return j->p < j->end ? (unsigned char)*j->p : -1;
}

int lp_rj_at_end(lp_rj *j)
{
    ws(j);
    return j->p == j->end;
}

int lp_rj_expect(lp_rj *j, char c)
{
    ws(j);
    if (j->p >= j->end || *j->p != c) {
        static const char *const msgs[] = {"expected '{'", "expected '}'", "expected '['", "expected ']'",
                                           "expected ':'", "expected ','", "unexpected character"};
        const char *m = c == '{' ? msgs[0] : c == '}' ? msgs[1] : c == '[' ? msgs[2] : c == ']' ? msgs[3]
                      : c == ':' ? msgs[4] : c == ',' ? msgs[5] : msgs[6];
        return fail(j, m);
    }
    j->p++;
    return 0;
}

int lp_rj_next(lp_rj *j, char close)
{
    ws(j);
    if (j->p < j->end && *j->p == ',') {
        j->p++;
        return 1;
    }
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return 0;
    }
    return fail(j, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

static int hex4(const char *p, unsigned *v)
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

static size_t put_utf8(char *o, unsigned cp)
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

int lp_rj_string(lp_rj *j, const char **s, size_t *n, char *buf, size_t cap)
{
    ws(j);
    if (j->p >= j->end || *j->p != '"')
        return fail(j, "expected a string");
    const char *q = ++j->p;
    /* fast path: no escapes */
    while (q < j->end && *q != '"' && *q != '\\') {
        if ((unsigned char)*q < 0x20)
            return j->p = q, fail(j, "control character in a string");
        q++;
    }
    if (q >= j->end)
        return fail(j, "unterminated string");
    if (*q == '"') {
        *s = j->p;
        *n = (size_t)(q - j->p);
        j->p = q + 1;
        return 0;
    }
    /* slow path: unescape into buf */
    size_t o = (size_t)(q - j->p);
    if (o > cap)
        return fail(j, "string too long");
    memcpy(buf, j->p, o);
    while (q < j->end && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20)
            return j->p = q, fail(j, "control character in a string");
        if (o + 4 > cap)
            return fail(j, "string too long");
        if (c != '\\') {
            buf[o++] = (char)c;
            q++;
            continue;
        }
        if (q + 1 >= j->end)
            return fail(j, "unterminated string");
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
            if (j->end - q < 4 || hex4(q, &cp))
                return j->p = q, fail(j, "bad \\u escape");
            q += 4;
            if (cp >= 0xD800 && cp < 0xDC00) {
                unsigned lo;
                if (j->end - q >= 6 && q[0] == '\\' && q[1] == 'u' && hex4(q + 2, &lo) == 0 && lo >= 0xDC00 &&
                    lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    q += 6;
                } else {
                    cp = 0xFFFD;
                }
            } else if (cp >= 0xDC00 && cp < 0xE000) {
                cp = 0xFFFD;
            }
            o += put_utf8(buf + o, cp);
            break;
        }
        default: return j->p = q - 1, fail(j, "bad escape");
        }
    }
    if (q >= j->end)
        return fail(j, "unterminated string");
    j->p = q + 1;
    *s = buf;
    *n = o;
    return 0;
}

int lp_rj_number(lp_rj *j, const char **s, size_t *n)
{
    ws(j);
    const char *q = j->p, *b = q;
    if (q < j->end && *q == '-')
        q++;
    if (q >= j->end || *q < '0' || *q > '9')
        return fail(j, "expected a number");
    if (*q == '0')
        q++;
    else
        while (q < j->end && *q >= '0' && *q <= '9')
            q++;
    if (q < j->end && *q == '.') {
        q++;
        if (q >= j->end || *q < '0' || *q > '9')
            return j->p = q, fail(j, "bad number");
        while (q < j->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < j->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < j->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= j->end || *q < '0' || *q > '9')
            return j->p = q, fail(j, "bad number");
        while (q < j->end && *q >= '0' && *q <= '9')
            q++;
    }
    *s = b;
    *n = (size_t)(q - b);
    j->p = q;
    return 0;
}

static int word(lp_rj *j, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
        return fail(j, "unexpected character");
    j->p += n;
    return 0;
}

int lp_rj_scalar(lp_rj *j, const char **s, size_t *n, char *buf, size_t cap, int *kind)
{
    int c = lp_rj_peek(j);
    if (c == '"') {
        *kind = 's';
        return lp_rj_string(j, s, n, buf, cap);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        *kind = 'n';
        return lp_rj_number(j, s, n);
    }
    const char *b = j->p;
    if (c == 't') {
        *kind = 't';
        if (word(j, "true"))
            return -1;
    } else if (c == 'f') {
        *kind = 'f';
        if (word(j, "false"))
            return -1;
    } else if (c == 'n') {
        *kind = 'z';
        if (word(j, "null"))
            return -1;
    } else {
        return fail(j, c < 0 ? "unexpected end of input" : "expected a value");
    }
    *s = b;
    *n = (size_t)(j->p - b);
    return 0;
}

int lp_rj_obj(lp_rj *j)
{
    if (lp_rj_expect(j, '{'))
        return -1;
    if (lp_rj_peek(j) == '}') {
        j->p++;
        return 0;
    }
    return 1;
}

int lp_rj_arr(lp_rj *j)
{
    if (lp_rj_expect(j, '['))
        return -1;
    if (lp_rj_peek(j) == ']') {
        j->p++;
        return 0;
    }
    return 1;
}

int lp_rj_key(lp_rj *j, const char **s, size_t *n, char *buf, size_t cap)
{
    if (lp_rj_string(j, s, n, buf, cap))
        return -1;
    return lp_rj_expect(j, ':');
}

/* Walk over a string without copying it. */
static int skip_string(lp_rj *j)
{
    ws(j);
    if (j->p >= j->end || *j->p != '"')
        return fail(j, "expected a string");
    const char *q = j->p + 1;
    while (q < j->end && *q != '"') {
        if ((unsigned char)*q < 0x20)
            return j->p = q, fail(j, "control character in a string");
        q += (*q == '\\') ? 2 : 1;
    }
    if (q >= j->end)
        return fail(j, "unterminated string");
    j->p = q + 1;
    return 0;
}

/* Skip with an explicit stack of open brackets (no recursion). */
int lp_rj_skip(lp_rj *j)
{
    char stack[LP_RJ_MAXDEPTH];
    int depth = 0;
    char tmp[8];
    for (;;) {
        /* at the start of a value */
        int c = lp_rj_peek(j);
        if (c == '{' || c == '[') {
            if (depth == LP_RJ_MAXDEPTH)
                return fail(j, "nesting too deep");
            j->p++;
            char close = (char)(c == '{' ? '}' : ']');
            if (lp_rj_peek(j) == close) {
                j->p++;
            } else {
                stack[depth++] = close;
                if (c == '{' && (skip_string(j) || lp_rj_expect(j, ':')))
                    return -1;
                continue;
            }
        } else if (c == '"') {
            if (skip_string(j))
                return -1;
        } else {
            const char *s;
            size_t n;
            int kind;
            if (lp_rj_scalar(j, &s, &n, tmp, sizeof tmp, &kind))
                return -1;
        }
        /* after a value: close brackets, or go to the next element */
        for (;;) {
            if (depth == 0)
                return 0;
            int r = lp_rj_next(j, stack[depth - 1]);
            if (r < 0)
                return -1;
            if (r == 0) {
                depth--;
                continue;
            }
            if (stack[depth - 1] == '}' && (skip_string(j) || lp_rj_expect(j, ':')))
                return -1;
            break;
        }
    }
}

int lp_rj_i64(lp_rj *j, int64_t *v)
{
    const char *s;
    size_t n;
    if (lp_rj_number(j, &s, &n))
        return -1;
    size_t i = 0;
    int neg = 0;
    if (s[0] == '-')
        neg = 1, i = 1;
    uint64_t x = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return fail(j, "expected an integer");
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return fail(j, "integer out of range");
        x = x * 10 + d;
    }
    if ((!neg && x > (uint64_t)INT64_MAX) || (neg && x > (uint64_t)INT64_MAX + 1))
        return fail(j, "integer out of range");
    *v = neg ? (int64_t)(0 - x) : (int64_t)x;
    return 0;
}
