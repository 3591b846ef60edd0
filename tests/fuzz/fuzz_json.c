/* fuzz_json.c: libFuzzer target for the JSON reader (src/codec/): the streaming reader,
 * the pull reader and the head scanner over the one tokenizer. Any input, read in
 * every mode (array streaming, stream keys, JSON lines) and with a tiny buffer (so
 * every record crosses refills), must give events without a crash, a leak or undefined
 * behaviour, and:
 *  - every tree is well formed (strings valid UTF-8 and NUL-terminated, child counts
 *    matching the sibling links), and the reader ends;
 *  - every BAD event carries a reason code, and only a cut input or a limit is fatal
 *    where the reader could go on (the codes the importers decide on);
 *  - every record, written back as canonical JSON, reads through the pull reader to the
 *    same canonical text (the two grammars over one tokenizer agree);
 *  - the head scanner walks the input to its end, each token inside it.
 * The first byte picks the mode, so the corpus covers all of them. The checks are
 * FUZZ_CHECKs (fuzz_check.h), kept in every build type. */
#include "longpole/longpole.h"
#include "longpole/codec/json.h"
#include "fuzz_check.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static int utf8_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t k = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!k || i + k > n)
            return 0;
        for (size_t j = 1; j < k; j++)
            if (((unsigned char)s[i + j] & 0xC0) != 0x80)
                return 0;
        i += k;
    }
    return 1;
}

static size_t walk(const lp_json *v, int depth)
{
    FUZZ_CHECK(depth <= LP_JSON_READ_MAXDEPTH + 1);
    size_t nodes = 1;
    if (v->key) {
        FUZZ_CHECK(v->key[v->klen] == '\0');
        FUZZ_CHECK(utf8_ok(v->key, v->klen));
    }
    int64_t i;
    double d;
    char ex[64];
    lp_json_excerpt(v, ex, sizeof ex);
    FUZZ_CHECK(strlen(ex) < sizeof ex);
    switch (v->type) {
    case LP_JSON_STRING:
        FUZZ_CHECK(v->s[v->len] == '\0');
        FUZZ_CHECK(utf8_ok(v->s, v->len));
        (void)lp_json_i64_lenient(v, &i);
        break;
    case LP_JSON_NUMBER:
        FUZZ_CHECK(v->len > 0);
        (void)lp_json_i64(v, &i);
        (void)lp_json_double(v, &d);
        (void)lp_json_i64_lenient(v, &i);
        break;
    case LP_JSON_ARRAY:
    case LP_JSON_OBJECT: {
        uint32_t k = 0;
        for (const lp_json *c = lp_json_first(v); c; c = lp_json_next_sibling(c)) {
            FUZZ_CHECK((v->type == LP_JSON_OBJECT) == (c->key != NULL));
            nodes += walk(c, depth + 1);
            k++;
        }
        FUZZ_CHECK(k == v->len);
        if (v->type == LP_JSON_OBJECT)
            (void)lp_json_get(v, "spans");
        break;
    }
    default: break;
    }
    return nodes;
}

/* ---- canonical text, from a tree and through the pull reader ---- */
typedef struct cbuf {
    char *p;
    size_t n, cap;
} cbuf;

static void cput(cbuf *b, const char *s, size_t k)
{
    if (b->n + k + 1 > b->cap) {
        size_t nc = (b->n + k + 1) * 2;
        char *np = realloc(b->p, nc);
        FUZZ_CHECK(np != NULL);
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, k);
    b->n += k;
}

static void cstr(cbuf *b, const char *s, size_t n)
{
    cput(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char t[8];
        if (c == '"' || c == '\\') {
            t[0] = '\\', t[1] = (char)c;
            cput(b, t, 2);
        } else if (c < 0x20) {
            snprintf(t, sizeof t, "\\u%04x", c);
            cput(b, t, 6);
        } else {
            cput(b, (const char *)&c, 1);
        }
    }
    cput(b, "\"", 1);
}

static void canon_tree(cbuf *b, const lp_json *v)
{
    switch (v->type) {
    case LP_JSON_NULL: cput(b, "null", 4); break;
    case LP_JSON_TRUE: cput(b, "true", 4); break;
    case LP_JSON_FALSE: cput(b, "false", 5); break;
    case LP_JSON_NUMBER: cput(b, v->s, v->len); break;
    case LP_JSON_STRING: cstr(b, v->s, v->len); break;
    default: {
        int obj = v->type == LP_JSON_OBJECT;
        cput(b, obj ? "{" : "[", 1);
        for (const lp_json *c = lp_json_first(v); c; c = lp_json_next_sibling(c)) {
            if (c != lp_json_first(v))
                cput(b, ",", 1);
            if (obj) {
                cstr(b, c->key, c->klen);
                cput(b, ":", 1);
            }
            canon_tree(b, c);
        }
        cput(b, obj ? "}" : "]", 1);
    }
    }
}

/* One value through the pull reader, written canonically; 0, or -1 if it fails. */
static int canon_pull(cbuf *b, lp_json_pull *j, char *sbuf, size_t cap)
{
    int c = lp_json_pull_peek(j);
    if (c == '{' || c == '[') {
        int obj = c == '{';
        int more = obj ? lp_json_pull_obj(j) : lp_json_pull_arr(j);
        if (more < 0)
            return -1;
        cput(b, obj ? "{" : "[", 1);
        for (int first = 1; more > 0; first = 0) {
            if (!first)
                cput(b, ",", 1);
            if (obj) {
                const char *k;
                size_t kn;
                if (lp_json_pull_key(j, &k, &kn, sbuf, cap))
                    return -1;
                cstr(b, k, kn);
                cput(b, ":", 1);
            }
            if (canon_pull(b, j, sbuf, cap))
                return -1;
            more = lp_json_pull_next(j, obj ? '}' : ']');
            if (more < 0)
                return -1;
        }
        cput(b, obj ? "}" : "]", 1);
        return 0;
    }
    const char *s;
    size_t n;
    int kind;
    if (lp_json_pull_scalar(j, &s, &n, sbuf, cap, &kind))
        return -1;
    if (kind == 's')
        cstr(b, s, n);
    else
        cput(b, s, n);
    return 0;
}

/* A record written canonically reads back through the pull reader to the same text. */
static void pull_agrees(const lp_json *tree)
{
    cbuf a = {0}, b = {0};
    canon_tree(&a, tree);
    size_t cap = a.n + 1;
    char *sbuf = malloc(cap);
    FUZZ_CHECK(sbuf != NULL);
    lp_json_pull j;
    lp_json_pull_init(&j, a.p, a.n);
    FUZZ_CHECK(canon_pull(&b, &j, sbuf, cap) == 0);
    FUZZ_CHECK(lp_json_pull_at_end(&j));
    FUZZ_CHECK(a.n == b.n && memcmp(a.p, b.p, a.n) == 0);
    free(sbuf);
    free(a.p);
    free(b.p);
}

/* The head scanner: every token inside the input, each call moving on, to its end. */
static void head_walk(const unsigned char *data, size_t n)
{
    lp_json_head h;
    lp_json_head_init(&h, data, n);
    size_t count = 0;
    while (lp_json_head_next(&h)) {
        FUZZ_CHECK((const unsigned char *)h.s >= data && (const unsigned char *)h.s + h.n <= data + n);
        FUZZ_CHECK(h.p <= data + n);
        FUZZ_CHECK(++count <= n);
    }
    FUZZ_CHECK(h.p == data + n);
    char tok[8][LP_JSON_HEAD_TOK];
    int k = lp_json_head_tokens(data, n, tok, 8);
    FUZZ_CHECK(k >= 0 && k <= 8);
    for (int i = 0; i < k; i++)
        FUZZ_CHECK(strlen(tok[i]) < LP_JSON_HEAD_TOK);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    if (n < 1)
        return 0;
    static const char *const keys[] = {"data", "spans", "resourceSpans", "traceEvents", NULL};
    unsigned mode = data[0];
    data++;
    n--;
    lp_input *in;
    lp_error err;
    if (lp_input_open_mem(&in, data, n, "fuzz.json", &err))
        return 0;
    lp_json_opts o = {.stream_keys = (mode & 1) ? keys : NULL, .lines = (mode & 2) != 0,
                      .bufsize = (mode & 4) ? 1 + (mode >> 4) : 0, .max_record = (mode & 8) ? 4096 : 0};
    /* nested streaming: huge elements of "data", "resourceSpans" or a top-level array with
     * a "spans" or "scopeSpans" array are streamed (nest_min 1: every one that does not
     * fit in the buffered data) */
    static const char *const nkeys[] = {"data", "", "resourceSpans", "scopeSpans", NULL},
                             *const nstream[] = {"spans", "scopeSpans", NULL};
    if ((mode & 0x31) == 0x31) {
        o.nest_min = 1;
        o.nest_keys = nkeys;
        o.nest_stream = nstream;
    }
    unsigned nest = 0;
    int fatal = 0;
    lp_json_reader *r;
    if (lp_json_reader_new(&r, in, &o, &err) == LP_OK) {
        lp_json_ev ev;
        lp_status st;
        size_t events = 0;
        /* offsets and event counts are bounded by the input's size unless it was a gzip or
         * zstd stream (read transparently: offsets count decompressed bytes) */
        int plain = lp_input_compression(in) == LP_COMP_NONE;
        while ((st = lp_json_next(r, &ev, &err)) == LP_OK) {
            events++;
            FUZZ_CHECK(!plain || events <= 2 * n + 4);
            /* nested BEGIN and END pair up, one level at a time */
            if (ev.kind == LP_JSON_EV_BEGIN && ev.depth) {
                FUZZ_CHECK(o.nest_min && ev.depth == nest + 1 && ev.depth <= LP_JSON_NEST_MAX);
                nest = ev.depth;
            } else if (ev.kind == LP_JSON_EV_END && ev.depth) {
                FUZZ_CHECK(ev.depth == nest);
                nest--;
            } else if (ev.kind == LP_JSON_EV_BEGIN || ev.kind == LP_JSON_EV_END) {
                FUZZ_CHECK(nest == 0);
            } else if (ev.kind == LP_JSON_EV_ELEMENT || ev.kind == LP_JSON_EV_MEMBER) {
                FUZZ_CHECK(ev.depth == nest);
            }
            fatal |= ev.kind == LP_JSON_EV_BAD && ev.fatal;
            FUZZ_CHECK(!plain || ev.off <= n + 3);
            if (ev.tree) {
                FUZZ_CHECK(ev.kind == LP_JSON_EV_ELEMENT || ev.kind == LP_JSON_EV_MEMBER || ev.kind == LP_JSON_EV_VALUE);
                walk(ev.tree, 1);
                pull_agrees(ev.tree);
            }
            if (ev.kind == LP_JSON_EV_BAD) {
                FUZZ_CHECK(ev.msg[0] && strlen(ev.msg) < sizeof ev.msg);
                FUZZ_CHECK(ev.code != LP_JSON_E_NONE);
                /* what only stops the reader: the end of the input inside a value or a
                 * container, a record over the limit, a failing input; in lines mode a
                 * syntax error too is fatal only when the input ends */
                if (ev.code == LP_JSON_E_UNCLOSED || ev.code == LP_JSON_E_TRUNCATED || ev.code == LP_JSON_E_INPUT)
                    FUZZ_CHECK(ev.fatal == !o.lines);
                if (o.lines && ev.code != LP_JSON_E_SIZE)
                    FUZZ_CHECK(!ev.fatal);
            } else {
                FUZZ_CHECK(ev.code == LP_JSON_E_NONE);
            }
        }
        FUZZ_CHECK(st == LP_END || st == LP_ERR_NOMEM);
        FUZZ_CHECK(nest == 0 || fatal || st != LP_END);
        lp_json_reader_free(r);
    }
    lp_input_close(in);
    head_walk(data, n);
    return 0;
}
