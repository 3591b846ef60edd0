/* json_pull.c: the pull reader of json.h (lp_json_pull_*): one JSON text in memory,
 * walked by the caller token by token. It is the request-log reader's hot path (one flat
 * object per line, tens of millions of lines) and the causal-model file reader.
 *
 * The tokens come from the one tokenizer (json_lex.h) in its unpadded, JL_PULL form:
 * strings are scanned 16 bytes at a time up to the end of the input, escapes checked,
 * control bytes rejected, bytes >= 0x80 passed through. What this file adds is the walk
 * (expect, next, skip with an explicit stack) and the decoding of escaped strings into
 * the caller's buffer.
 *
 * Invariants: nothing is read outside [start, end); on an error j->p is where the
 * problem is (for an unterminated string or one too long for the buffer: its first byte;
 * when skipping, its opening quote) and j->code, j->why say what it is; a string handed
 * out points into the input or into the caller's buffer, never elsewhere.
 */
#include "longpole/codec/json.h"
#include "codec/json_lex.h"

#include <string.h>

#define U(x) ((const unsigned char *)(x))

static inline void ws(lp_json_pull *j)
{
    j->p = (const char *)jl_ws(U(j->p), U(j->end), NULL, 0);
}

static int fail(lp_json_pull *j, lp_json_err code, const char *why)
{
    j->code = code;
    j->why = why;
    return -1;
}

void lp_json_pull_init(lp_json_pull *j, const char *s, size_t n)
{
    j->p = j->start = s;
    j->end = s + n;
    j->why = NULL;
    j->code = LP_JSON_E_NONE;
}

int lp_json_pull_peek(lp_json_pull *j)
{
    ws(j);
    return j->p < j->end ? (unsigned char)*j->p : -1;
}

int lp_json_pull_at_end(lp_json_pull *j)
{
    ws(j);
    return j->p == j->end;
}

int lp_json_pull_expect(lp_json_pull *j, char c)
{
    ws(j);
    if (j->p >= j->end || *j->p != c) {
        const char *m = c == '{' ? "expected '{'" : c == '}' ? "expected '}'" : c == '[' ? "expected '['"
                      : c == ']' ? "expected ']'" : c == ':' ? "expected ':'" : c == ',' ? "expected ','"
                      : "unexpected character";
        return fail(j, LP_JSON_E_SYNTAX, m);
    }
    j->p++;
    return 0;
}

int lp_json_pull_next(lp_json_pull *j, char close)
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
    return fail(j, LP_JSON_E_SYNTAX, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

/* An escaped string b..: decode it into buf from its first escape up to where the lexer
 * stopped (r->q), checking room for 4 more bytes before each step (so the message and
 * place of an error are the same whatever the buffer size: a string too long for the
 * buffer is reported before a problem after the point where it stopped fitting). */
static int decode(lp_json_pull *j, const unsigned char *b, int rc, const jl_str *r, const char **s, size_t *n,
                  char *buf, size_t cap)
{
    const unsigned char *q = r->esc, *stop = r->q, *end = U(j->end);
    unsigned char *o = (unsigned char *)buf;
    size_t k = (size_t)(q - b);
    if (k > cap)
        goto too_long;
    memcpy(o, b, k);
    while (q < stop) {
        if (k + 4 > cap)
            goto too_long;
        if (*q != '\\') {
            o[k++] = *q++;
            continue;
        }
        size_t w;
        q += jl_escape(q, end, o + k, &w);
        k += w;
    }
    if (rc == JL_OK) {
        j->p = (const char *)stop + 1;
        *s = buf;
        *n = k;
        return 0;
    }
    if (rc == JL_STOP && r->prob == JL_P_CTRL) {
        j->p = (const char *)stop;
        return fail(j, LP_JSON_E_STRING, "control character in a string");
    }
    if (stop < end && k + 4 > cap) /* the step at a bad escape, or at a '\' that ends the input */
        goto too_long;
    if (rc == JL_STOP) {
        j->p = (const char *)stop + (r->prob == JL_P_UHEX ? 2 : 1);
        return fail(j, LP_JSON_E_STRING, r->prob == JL_P_UHEX ? "bad \\u escape" : "bad escape");
    }
    j->p = (const char *)b;
    return fail(j, LP_JSON_E_TRUNCATED, "unterminated string");
too_long:
    j->p = (const char *)b;
    return fail(j, LP_JSON_E_SIZE, "string too long");
}

/* The string that starts at b past its first byte that is not plain ASCII (q). */
static __attribute__((noinline)) int string_rest(lp_json_pull *j, const unsigned char *b, const unsigned char *q,
                                                 const char **s, size_t *n, char *buf, size_t cap)
{
    jl_str r;
    int rc = jl_string(q, U(j->end), U(j->start), 1, JL_PULL, 0, &r);
    if (r.esc)
        return decode(j, b, rc, &r, s, n, buf, cap);
    if (rc == JL_OK) { /* bytes >= 0x80, no escapes */
        *s = (const char *)b;
        *n = (size_t)(r.q - b);
        j->p = (const char *)r.q + 1;
        return 0;
    }
    if (rc == JL_STOP) { /* a control byte */
        j->p = (const char *)r.q;
        return fail(j, LP_JSON_E_STRING, "control character in a string");
    }
    j->p = (const char *)b;
    return fail(j, LP_JSON_E_TRUNCATED, "unterminated string");
}

int lp_json_pull_string(lp_json_pull *j, const char **s, size_t *n, char *buf, size_t cap)
{
    ws(j);
    if (j->p >= j->end || *j->p != '"')
        return fail(j, LP_JSON_E_SYNTAX, "expected a string");
    const unsigned char *b = U(j->p) + 1, *end = U(j->end);
    const unsigned char *q = jl_scan_plain(b, end, U(j->start), 0);
    if (q >= end || *q != '"')
        return string_rest(j, b, q, s, n, buf, cap);
    *s = (const char *)b;
    *n = (size_t)(q - b);
    j->p = (const char *)q + 1;
    return 0;
}

int lp_json_pull_number(lp_json_pull *j, const char **s, size_t *n)
{
    ws(j);
    const unsigned char *b = U(j->p), *bad;
    int isint;
    const unsigned char *q = jl_number(b, U(j->end), 0, &bad, &isint);
    if (bad) {
        if (bad == b || (bad == b + 1 && *b == '-')) /* no digit where the integer part starts */
            return fail(j, LP_JSON_E_NUMBER, "expected a number");
        j->p = (const char *)bad;
        return fail(j, LP_JSON_E_NUMBER, "bad number");
    }
    *s = (const char *)b;
    *n = (size_t)(q - b);
    j->p = (const char *)q;
    return 0;
}

static int word(lp_json_pull *j, const char *w, size_t n)
{
    if (jl_literal(U(j->p), U(j->end), w, n) != 1)
        return fail(j, LP_JSON_E_SYNTAX, "unexpected character");
    j->p += n;
    return 0;
}

int lp_json_pull_scalar(lp_json_pull *j, const char **s, size_t *n, char *buf, size_t cap, int *kind)
{
    int c = lp_json_pull_peek(j);
    if (c == '"') {
        *kind = 's';
        return lp_json_pull_string(j, s, n, buf, cap);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        *kind = 'n';
        return lp_json_pull_number(j, s, n);
    }
    const char *b = j->p;
    if (c == 't') {
        *kind = 't';
        if (word(j, "true", 4))
            return -1;
    } else if (c == 'f') {
        *kind = 'f';
        if (word(j, "false", 5))
            return -1;
    } else if (c == 'n') {
        *kind = 'z';
        if (word(j, "null", 4))
            return -1;
    } else {
        return c < 0 ? fail(j, LP_JSON_E_TRUNCATED, "unexpected end of input")
                     : fail(j, LP_JSON_E_SYNTAX, "expected a value");
    }
    *s = b;
    *n = (size_t)(j->p - b);
    return 0;
}

int lp_json_pull_obj(lp_json_pull *j)
{
    if (lp_json_pull_expect(j, '{'))
        return -1;
    if (lp_json_pull_peek(j) == '}') {
        j->p++;
        return 0;
    }
    return 1;
}

int lp_json_pull_arr(lp_json_pull *j)
{
    if (lp_json_pull_expect(j, '['))
        return -1;
    if (lp_json_pull_peek(j) == ']') {
        j->p++;
        return 0;
    }
    return 1;
}

int lp_json_pull_key(lp_json_pull *j, const char **s, size_t *n, char *buf, size_t cap)
{
    if (lp_json_pull_string(j, s, n, buf, cap))
        return -1;
    return lp_json_pull_expect(j, ':');
}

/* Walk over a string without decoding it (an escape is any two bytes). */
static int skip_string(lp_json_pull *j)
{
    ws(j);
    if (j->p >= j->end || *j->p != '"')
        return fail(j, LP_JSON_E_SYNTAX, "expected a string");
    jl_str r;
    switch (jl_string(U(j->p) + 1, U(j->end), U(j->start), 1, JL_SKIP, 0, &r)) {
    case JL_OK: j->p = (const char *)r.q + 1; return 0;
    case JL_STOP: j->p = (const char *)r.q; return fail(j, LP_JSON_E_STRING, "control character in a string");
    default: return fail(j, LP_JSON_E_TRUNCATED, "unterminated string");
    }
}

/* Skip with an explicit stack of open brackets (no recursion). */
int lp_json_pull_skip(lp_json_pull *j)
{
    char stack[LP_JSON_PULL_MAXDEPTH];
    int depth = 0;
    char tmp[8];
    for (;;) {
        /* at the start of a value */
        int c = lp_json_pull_peek(j);
        if (c == '{' || c == '[') {
            if (depth == LP_JSON_PULL_MAXDEPTH)
                return fail(j, LP_JSON_E_DEPTH, "nesting too deep");
            j->p++;
            char close = (char)(c == '{' ? '}' : ']');
            if (lp_json_pull_peek(j) == close) {
                j->p++;
            } else {
                stack[depth++] = close;
                if (c == '{' && (skip_string(j) || lp_json_pull_expect(j, ':')))
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
            if (lp_json_pull_scalar(j, &s, &n, tmp, sizeof tmp, &kind))
                return -1;
        }
        /* after a value: close brackets, or go to the next element */
        for (;;) {
            if (depth == 0)
                return 0;
            int r = lp_json_pull_next(j, stack[depth - 1]);
            if (r < 0)
                return -1;
            if (r == 0) {
                depth--;
                continue;
            }
            if (stack[depth - 1] == '}' && (skip_string(j) || lp_json_pull_expect(j, ':')))
                return -1;
            break;
        }
    }
}

int lp_json_pull_i64(lp_json_pull *j, int64_t *v)
{
    const char *s;
    size_t n;
    if (lp_json_pull_number(j, &s, &n))
        return -1;
    switch (jl_int_text(s, n, v)) {
    case 0: return 0;
    case -1: return fail(j, LP_JSON_E_NUMBER, "expected an integer");
    default: return fail(j, LP_JSON_E_NUMBER, "integer out of range");
    }
}
