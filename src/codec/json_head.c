/* json_head.c: the head scanner of json.h (lp_json_head_*): the tokens of the first
 * bytes of a file, for the detectors of the JSON formats (Chrome, Spark, the span
 * formats, request logs in JSON lines), and lp_json_head_tokens, the summary of a head's
 * first structural tokens that the span detectors compare.
 *
 * A head is cut anywhere, so nothing is validated beyond what finding a token's end
 * needs (json_lex.h in its JL_HEAD form: an escape is any two bytes); a string cut by
 * the end of the head is still a token (closed = 0), so a detector can look at a prefix.
 *
 * Invariant: every call consumes at least one byte until the end of the head, so a loop
 * over the tokens ends; nothing outside [p, p + n) is read.
 */
#include "longpole/codec/json.h"
#include "codec/json_lex.h"

#include <string.h>

void lp_json_head_init(lp_json_head *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    memset(h, 0, sizeof *h);
    if (n >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF) {
        b += 3;
        n -= 3;
    }
    h->p = b;
    h->end = b + n;
}

int lp_json_head_next(lp_json_head *h)
{
    uint64_t lines = 0;
    const unsigned char *p = jl_ws(h->p, h->end, &lines, 0), *end = h->end, *q;
    h->newline = lines > 0;
    h->esc = h->closed = 0;
    h->s = (const char *)p;
    if (p >= end) {
        h->p = p;
        h->n = 0;
        return h->tok = 0;
    }
    int tok = *p;
    switch (*p) {
    case '{':
    case '}':
    case '[':
    case ']':
    case ':':
    case ',': q = p + 1; break;
    case '"': {
        jl_str r;
        int rc = jl_string(p + 1, end, NULL, 1, JL_HEAD, 0, &r);
        h->s = (const char *)p + 1;
        h->n = (size_t)((rc == JL_OK ? r.q : end) - (p + 1));
        h->esc = r.esc != NULL;
        h->closed = rc == JL_OK;
        h->p = rc == JL_OK ? r.q + 1 : end;
        return h->tok = '"';
    }
    case 't': case 'f': case 'n': {
        const char *w = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
        size_t k = strlen(w);
        if (jl_literal(p, end, w, k) == 1) {
            q = p + k;
            tok = 'l';
        } else {
            q = p + 1;
            tok = '?';
        }
        break;
    }
    default:
        if (*p == '-' || jl_is_digit(*p)) {
            const unsigned char *bad;
            int isint;
            q = jl_number(p, end, 0, &bad, &isint);
            if (q == p)
                q = p + 1; /* a lone '-' */
            tok = '0';
        } else {
            q = p + 1;
            tok = '?';
        }
    }
    h->n = (size_t)(q - p);
    h->p = q;
    return h->tok = tok;
}

int lp_json_head_is(const lp_json_head *h, const char *s)
{
    size_t k = strlen(s);
    return h->tok == '"' && h->closed && !h->esc && h->n == k && memcmp(h->s, s, k) == 0;
}

int lp_json_head_tokens(const void *p, size_t n, char tok[][LP_JSON_HEAD_TOK], int max)
{
    lp_json_head h;
    lp_json_head_init(&h, p, n);
    int k = 0;
    while (k < max) {
        int t = lp_json_head_next(&h);
        if (t == '{' || t == '[') {
            tok[k][0] = (char)t;
            tok[k][1] = '\0';
            k++;
            continue;
        }
        if (t != '"' || !h.closed || h.esc || h.n >= LP_JSON_HEAD_TOK)
            break;
        memcpy(tok[k], h.s, h.n);
        tok[k][h.n] = '\0';
        if (lp_json_head_next(&h) != ':')
            break; /* a string value, not a key */
        k++;
    }
    return k;
}
