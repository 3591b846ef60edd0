/* test_json_pull.c: the pull reader (lp_json_pull_*, src/codec/json_pull.c): known
 * answers (values, error messages, reason codes and places), and a differential test
 * against its naive twin (pulltwin.h, the request log's former reader) on hundreds of
 * thousands of random documents, valid and mutated (escapes, surrogates, control bytes,
 * bytes >= 0x80, truncation, random bytes), walked the way the request-log reader and
 * the causal-model reader walk them, with string buffers from 0 bytes up: every call
 * must return the same, stop at the same byte with the same message, and hand out the
 * same bytes. */
#include "longpole/codec/json.h"
#include "t.h"
#include "pulltwin.h"

#include <stdint.h>

/* ---- one interface over both readers ---- */
typedef struct rdops {
    void (*init)(void *, const char *, size_t);
    int (*peek)(void *);
    int (*expect)(void *, char);
    int (*next)(void *, char);
    int (*string)(void *, const char **, size_t *, char *, size_t);
    int (*number)(void *, const char **, size_t *);
    int (*scalar)(void *, const char **, size_t *, char *, size_t, int *);
    int (*skip)(void *);
    int (*obj)(void *);
    int (*arr)(void *);
    int (*key)(void *, const char **, size_t *, char *, size_t);
    int (*i64)(void *, int64_t *);
    int (*at_end)(void *);
    const char *(*where)(void *, const char **why);
} rdops;

#define WRAP(P, T)                                                                                                 \
    static void P##_w_init(void *j, const char *s, size_t n) { P##_init((T *)j, s, n); }                           \
    static int P##_w_peek(void *j) { return P##_peek((T *)j); }                                                    \
    static int P##_w_expect(void *j, char c) { return P##_expect((T *)j, c); }                                     \
    static int P##_w_next(void *j, char c) { return P##_next((T *)j, c); }                                         \
    static int P##_w_string(void *j, const char **s, size_t *n, char *b, size_t c)                                 \
    {                                                                                                              \
        return P##_string((T *)j, s, n, b, c);                                                                     \
    }                                                                                                              \
    static int P##_w_number(void *j, const char **s, size_t *n) { return P##_number((T *)j, s, n); }               \
    static int P##_w_scalar(void *j, const char **s, size_t *n, char *b, size_t c, int *k)                         \
    {                                                                                                              \
        return P##_scalar((T *)j, s, n, b, c, k);                                                                  \
    }                                                                                                              \
    static int P##_w_skip(void *j) { return P##_skip((T *)j); }                                                    \
    static int P##_w_obj(void *j) { return P##_obj((T *)j); }                                                      \
    static int P##_w_arr(void *j) { return P##_arr((T *)j); }                                                      \
    static int P##_w_key(void *j, const char **s, size_t *n, char *b, size_t c)                                    \
    {                                                                                                              \
        return P##_key((T *)j, s, n, b, c);                                                                        \
    }                                                                                                              \
    static int P##_w_i64(void *j, int64_t *v) { return P##_i64((T *)j, v); }                                       \
    static int P##_w_at_end(void *j) { return P##_at_end((T *)j); }                                                \
    static const char *P##_w_where(void *j, const char **why)                                                      \
    {                                                                                                              \
        *why = ((T *)j)->why;                                                                                      \
        return ((T *)j)->p;                                                                                        \
    }                                                                                                              \
    static const rdops P##_ops = {P##_w_init, P##_w_peek,  P##_w_expect, P##_w_next, P##_w_string,                 \
                                  P##_w_number, P##_w_scalar, P##_w_skip, P##_w_obj, P##_w_arr,                    \
                                  P##_w_key,  P##_w_i64,    P##_w_at_end, P##_w_where};

WRAP(tw, tw)
WRAP(lp_json_pull, lp_json_pull)

/* ---- a log of what a walk did ---- */
typedef struct wlog {
    char b[1 << 16];
    size_t n;
} wlog;

static void lput(wlog *l, const void *s, size_t k)
{
    if (l->n + k > sizeof l->b)
        k = sizeof l->b - l->n;
    memcpy(l->b + l->n, s, k);
    l->n += k;
}

/* one call's outcome: return value, place, message, and the bytes handed out */
static void lcall(wlog *l, const rdops *o, void *j, const char *doc, char op, int rc, const char *s, size_t n)
{
    const char *why, *p = o->where(j, &why);
    char t[64];
    int k = snprintf(t, sizeof t, "%c%d@%ld", op, rc, (long)(p - doc));
    lput(l, t, (size_t)k);
    if (rc < 0 && why)
        lput(l, why, strlen(why));
    if (rc >= 0 && s) {
        lput(l, "=", 1);
        lput(l, s, n);
    }
    lput(l, ";", 1);
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static unsigned rn(unsigned n) { return (unsigned)(rnd() % n); }

/* The request-log walk (reqlog_parse.c json_line): keys, scalars or skipped values. */
static void walk_line(const rdops *o, void *j, const char *doc, size_t n, size_t cap, wlog *l)
{
    char buf[4096];
    size_t used = 0;
    o->init(j, doc, n);
    int has = o->obj(j);
    lcall(l, o, j, doc, 'o', has, NULL, 0);
    while (has > 0) {
        const char *k, *v;
        size_t kn, vn;
        int kind;
        int rc = o->key(j, &k, &kn, buf + used, cap - used);
        lcall(l, o, j, doc, 'k', rc, k, rc ? 0 : kn);
        if (rc)
            return;
        if (k == buf + used)
            used += kn;
        int c = o->peek(j);
        if (c == '{' || c == '[') {
            rc = o->skip(j);
            lcall(l, o, j, doc, 's', rc, NULL, 0);
        } else {
            rc = o->scalar(j, &v, &vn, buf + used, cap - used, &kind);
            lcall(l, o, j, doc, (char)(rc ? 'x' : kind), rc, v, rc ? 0 : vn);
            if (!rc && v == buf + used)
                used += vn;
        }
        if (rc)
            return;
        has = o->next(j, '}');
        lcall(l, o, j, doc, 'n', has, NULL, 0);
    }
    if (has == 0)
        lcall(l, o, j, doc, 'e', o->at_end(j), NULL, 0);
}

/* Other calls, chosen by a seed: the causal-model reader's i64, arrays, expect. */
static void walk_mixed(const rdops *o, void *j, const char *doc, size_t n, size_t cap, uint64_t seed, wlog *l)
{
    char buf[4096];
    o->init(j, doc, n);
    for (int step = 0; step < 24; step++) {
        const char *s = NULL;
        size_t sn = 0;
        int64_t v;
        int kind, rc;
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        switch ((seed >> 33) % 9) {
        case 0: rc = o->string(j, &s, &sn, buf, cap); lcall(l, o, j, doc, 'S', rc, s, rc ? 0 : sn); break;
        case 1: rc = o->number(j, &s, &sn); lcall(l, o, j, doc, 'N', rc, s, rc ? 0 : sn); break;
        case 2:
            rc = o->i64(j, &v);
            lcall(l, o, j, doc, 'I', rc, NULL, 0);
            if (!rc)
                lput(l, &v, sizeof v);
            break;
        case 3: rc = o->skip(j); lcall(l, o, j, doc, 'K', rc, NULL, 0); break;
        case 4: rc = o->arr(j); lcall(l, o, j, doc, 'A', rc, NULL, 0); break;
        case 5: rc = o->expect(j, ",:{}[]"[(seed >> 40) % 6]); lcall(l, o, j, doc, 'X', rc, NULL, 0); break;
        case 6: rc = o->next(j, (seed >> 41) & 1 ? '}' : ']'); lcall(l, o, j, doc, 'T', rc, NULL, 0); break;
        case 7:
            rc = o->scalar(j, &s, &sn, buf, cap, &kind);
            lcall(l, o, j, doc, 'C', rc, s, rc ? 0 : sn);
            break;
        default: rc = o->peek(j); lcall(l, o, j, doc, 'P', rc, NULL, 0); break;
        }
        if (o->at_end(j))
            break;
    }
}

/* ---- random documents ---- */
typedef struct tdoc {
    char b[2048];
    size_t n;
} tdoc;

static void dput(tdoc *d, const char *s, size_t k)
{
    for (size_t i = 0; i < k && d->n < sizeof d->b; i++)
        d->b[d->n++] = s[i];
}
static void dputs(tdoc *d, const char *s) { dput(d, s, strlen(s)); }

static void gen_string_body(tdoc *d)
{
    static const char *const pieces[] = {
        "a", "req", "web1", " ", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0041", "\\u00e9",
        "\\u20AC", "\\ud83d\\ude00", "\\uD800", "\\uDC00", "\\uD800\\u0041", "\\u12", "\\uZZZZ", "\\x", "\\",
        "\xc3\xa9", "\xff", "\x80", "\x01", "\t", "\n", "\x7f", "\\u0000", "abcdefghijklmnopqrstuvwxyz0123456789"};
    int k = (int)rn(8);
    for (int i = 0; i < k; i++) {
        const char *p = rn(3) ? pieces[rn(3)] : pieces[rn(sizeof pieces / sizeof *pieces)];
        dputs(d, p);
    }
}

static void gen_value(tdoc *d, int depth)
{
    switch (rn(depth > 3 ? 6 : 8)) {
    case 0:
    case 1:
        dputs(d, "\"");
        gen_string_body(d);
        dputs(d, "\"");
        break;
    case 2: {
        static const char *const nums[] = {"0", "-1", "12", "1689999999957227", "3.25", "-0.5e3", "1E+2", "01",
                                           "1.", "-", "1e", "9223372036854775807", "9223372036854775808",
                                           "-9223372036854775808", "99999999999999999999", "-x", ".5", "2.5e-1x"};
        dputs(d, nums[rn(sizeof nums / sizeof *nums)]);
        break;
    }
    case 3: dputs(d, rn(2) ? "true" : rn(2) ? "false" : "null"); break;
    case 4: dputs(d, rn(4) ? "tru" : "nul"); break;
    case 5: dputs(d, rn(2) ? "x" : ""); break;
    case 6: {
        dputs(d, "[");
        int k = (int)rn(4);
        for (int i = 0; i < k; i++) {
            if (i)
                dputs(d, rn(8) ? "," : " ");
            gen_value(d, depth + 1);
        }
        dputs(d, rn(10) ? "]" : "");
        break;
    }
    default: {
        dputs(d, "{");
        int k = (int)rn(4);
        for (int i = 0; i < k; i++) {
            if (i)
                dputs(d, rn(8) ? ", " : "");
            dputs(d, "\"");
            gen_string_body(d);
            dputs(d, rn(12) ? "\": " : "\" ");
            gen_value(d, depth + 1);
        }
        dputs(d, rn(10) ? "}" : "");
    }
    }
}

static void gen_doc(tdoc *d)
{
    d->n = 0;
    if (rn(4) == 0) {
        gen_value(d, 0);
    } else {
        /* a request-log line */
        static const char *const keys[] = {"request", "host", "time_us", "event", "task", "seq", "tier", "x"};
        dputs(d, rn(6) ? "{" : " \t{");
        int k = 1 + (int)rn(6);
        for (int i = 0; i < k; i++) {
            if (i)
                dputs(d, rn(20) ? "," : ";");
            dputs(d, "\"");
            if (rn(6))
                dputs(d, keys[rn(8)]);
            else
                gen_string_body(d);
            dputs(d, rn(30) ? "\":" : "\"");
            gen_value(d, 1);
        }
        dputs(d, rn(12) ? "}" : rn(2) ? "} x" : "");
    }
    /* mutations */
    int m = rn(3) == 0 ? (int)rn(4) : 0;
    for (int i = 0; i < m && d->n; i++) {
        size_t at = rn((unsigned)d->n);
        switch (rn(3)) {
        case 0: d->b[at] = (char)rn(256); break;
        case 1: memmove(d->b + at, d->b + at + 1, d->n - at - 1), d->n--; break;
        default: d->n = at; break;
        }
    }
}

/* ---- known answers ---- */
static void known(void)
{
    lp_json_pull j;
    const char *s, *v;
    size_t n, vn;
    char buf[64];
    int kind;
    const char *doc = "{\"request\":\"r\\u00e9\\ud83d\\ude00\",\"n\":-12.5e3, \"ok\":true}";
    lp_json_pull_init(&j, doc, strlen(doc));
    CHECK(lp_json_pull_obj(&j) == 1);
    CHECK(lp_json_pull_key(&j, &s, &n, buf, sizeof buf) == 0);
    CHECK(n == 7 && memcmp(s, "request", 7) == 0 && s == doc + 2); /* no escapes: into the input */
    CHECK(lp_json_pull_scalar(&j, &v, &vn, buf + n, sizeof buf - n, &kind) == 0 && kind == 's');
    CHECK(vn == 7 && memcmp(v, "r\xc3\xa9\xf0\x9f\x98\x80", 7) == 0 && v == buf + n);
    CHECK(lp_json_pull_next(&j, '}') == 1);
    CHECK(lp_json_pull_key(&j, &s, &n, buf, sizeof buf) == 0);
    CHECK(lp_json_pull_number(&j, &v, &vn) == 0 && vn == 7 && memcmp(v, "-12.5e3", 7) == 0);
    CHECK(lp_json_pull_next(&j, '}') == 1);
    CHECK(lp_json_pull_key(&j, &s, &n, buf, sizeof buf) == 0);
    CHECK(lp_json_pull_scalar(&j, &v, &vn, buf, sizeof buf, &kind) == 0 && kind == 't' && vn == 4);
    CHECK(lp_json_pull_next(&j, '}') == 0);
    CHECK(lp_json_pull_at_end(&j));

    /* errors: reason, message, place */
    static const struct {
        const char *doc;
        lp_json_err code;
        const char *why;
        long at;
    } bad[] = {
        {"\"ab\x01\"", LP_JSON_E_STRING, "control character in a string", 3},
        {"\"ab", LP_JSON_E_TRUNCATED, "unterminated string", 1},
        {"\"a\\qb\"", LP_JSON_E_STRING, "bad escape", 3},
        {"\"a\\u12\"", LP_JSON_E_STRING, "bad \\u escape", 4},
        {"\"a\\", LP_JSON_E_TRUNCATED, "unterminated string", 1},
        {"1.x", LP_JSON_E_NUMBER, "bad number", 2},
        {"-x", LP_JSON_E_NUMBER, "expected a number", 0},
        {"x", LP_JSON_E_SYNTAX, "expected a string", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        lp_json_pull_init(&j, bad[i].doc, strlen(bad[i].doc));
        int rc = bad[i].doc[0] == '"' || bad[i].doc[0] == 'x' ? lp_json_pull_string(&j, &s, &n, buf, sizeof buf)
                                                                : lp_json_pull_number(&j, &s, &n);
        CHECK(rc == -1);
        CHECK(j.code == bad[i].code);
        CHECK_STR(j.why, bad[i].why);
        CHECK_EQ_I(j.p - j.start, bad[i].at);
    }
    /* a buffer too small for the decoded string */
    lp_json_pull_init(&j, "\"abcdef\\n\"", 10);
    CHECK(lp_json_pull_string(&j, &s, &n, buf, 4) == -1 && j.code == LP_JSON_E_SIZE);
    int64_t x;
    lp_json_pull_init(&j, "9223372036854775808", 19);
    CHECK(lp_json_pull_i64(&j, &x) == -1 && j.code == LP_JSON_E_NUMBER);
    CHECK_STR(j.why, "integer out of range");
    lp_json_pull_init(&j, "-9223372036854775808", 20);
    CHECK(lp_json_pull_i64(&j, &x) == 0 && x == INT64_MIN);
    /* nesting of skipped values is bounded */
    char deep[200];
    memset(deep, '[', sizeof deep);
    lp_json_pull_init(&j, deep, sizeof deep);
    CHECK(lp_json_pull_skip(&j) == -1 && j.code == LP_JSON_E_DEPTH);
}

/* ---- the differential test ---- */
static int contains(const char *b, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(b + i, s, k) == 0)
            return 1;
    return 0;
}

static void differential(int rounds)
{
    static const char *const msgs[] = {"control character in a string", "unterminated string", "bad escape",
                                       "bad \\u escape", "string too long", "bad number", "expected a number",
                                       "expected an integer", "integer out of range", "unexpected character",
                                       "expected a value", "unexpected end of input", "expected ',' or '}'",
                                       "expected ':'", "expected a string"};
    int seen[sizeof msgs / sizeof *msgs] = {0};
    static wlog la, lb;
    tw a;
    lp_json_pull b;
    tdoc d;
    int same = 0;
    for (int r = 0; r < rounds; r++) {
        gen_doc(&d);
        /* an exact-size copy, so that reading past the end is caught by the sanitizers */
        char *copy = malloc(d.n ? d.n : 1);
        memcpy(copy, d.b, d.n);
        size_t cap = rn(4) == 0 ? rn(24) : d.n + 1 + rn(64);
        if (cap > 4096)
            cap = 4096;
        la.n = lb.n = 0;
        if (r & 1) {
            uint64_t seed = rnd();
            walk_mixed(&tw_ops, &a, copy, d.n, cap, seed, &la);
            walk_mixed(&lp_json_pull_ops, &b, copy, d.n, cap, seed, &lb);
        } else {
            walk_line(&tw_ops, &a, copy, d.n, cap, &la);
            walk_line(&lp_json_pull_ops, &b, copy, d.n, cap, &lb);
        }
        int eq = la.n == lb.n && memcmp(la.b, lb.b, la.n) == 0;
        if (!eq && t_failures < 5) {
            fprintf(stderr, "differ on %.*s (cap %zu)\n twin: %.*s\n pull: %.*s\n", (int)d.n, d.b, cap, (int)la.n,
                    la.b, (int)lb.n, lb.b);
        }
        CHECK(eq);
        same += eq;
        for (size_t m = 0; m < sizeof msgs / sizeof *msgs; m++)
            if (contains(la.b, la.n, msgs[m]))
                seen[m]++;
        free(copy);
    }
    fprintf(stderr, "differential: %d of %d walks identical\n", same, rounds);
    /* the documents reach every error of the reader */
    for (size_t m = 0; m < sizeof msgs / sizeof *msgs; m++) {
        if (!seen[m])
            fprintf(stderr, "never seen: %s\n", msgs[m]);
        CHECK(seen[m] > 0);
    }
}

int main(void)
{
    known();
    differential(100000);
    return t_done("test_json_pull");
}
