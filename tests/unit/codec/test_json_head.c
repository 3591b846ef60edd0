/* test_json_head.c: the head scanner (lp_json_head_*, src/codec/json_head.c): the
 * tokens of cut heads with their text, flags and the line-break mark, the structural
 * summary the span detectors compare (lp_json_head_tokens), and that any head, however
 * broken, is scanned to its end without reading past it. */
#include "longpole/codec/json.h"
#include "t.h"

#include <stdint.h>

/* the tokens of a head as text: "{ s:key : 0:12 , l:true ? ..." */
static void toks(const char *p, size_t n, char *out, size_t cap)
{
    lp_json_head h;
    lp_json_head_init(&h, p, n);
    size_t o = 0;
    out[0] = '\0';
    while (lp_json_head_next(&h) && o + 64 < cap) {
        if (o)
            out[o++] = ' ';
        if (h.newline)
            out[o++] = '^';
        if (h.tok == '"')
            o += (size_t)snprintf(out + o, cap - o, "s%s%s:%.*s", h.esc ? "e" : "", h.closed ? "" : "+", (int)h.n, h.s);
        else if (h.tok == '0' || h.tok == 'l')
            o += (size_t)snprintf(out + o, cap - o, "%c:%.*s", h.tok, (int)h.n, h.s);
        else
            out[o++] = (char)h.tok;
        out[o] = '\0';
    }
}

#define TOKS(in, want)                                                                                             \
    do {                                                                                                           \
        char got_[512];                                                                                            \
        toks(in, sizeof in - 1, got_, sizeof got_);                                                                \
        CHECK_STR(got_, want);                                                                                     \
    } while (0)

static void tokens(void)
{
    TOKS("{\"a\": 12, \"b\":[true,null,-1.5e3], \"c\":\"x\\\"y\"}", "{ s:a : 0:12 , s:b : [ l:true , l:null , 0:-1.5e3 ] , s:c : se:x\\\"y }");
    TOKS("\xEF\xBB\xBF[{\"ph\"", "[ { s:ph");              /* byte order mark skipped */
    TOKS("{\"Event\":\"SparkListenerLo", "{ s:Event : s+:SparkListenerLo"); /* cut string: a prefix */
    TOKS("{\n  \"k\"\n:1", "{ ^s:k ^: 0:1");               /* line breaks before tokens */
    TOKS("[x, tru, -]", "[ ? , ? ? ? , 0:- ]");            /* bytes that start no token, one at a time */
    TOKS("\"a\\", "se+:a\\");                               /* an escape cut by the end */
}

static void structure(void)
{
    char t[6][LP_JSON_HEAD_TOK];
    const char *h = "{\"data\":[{\"traceID\":\"abc\",\"spans\":[]}]}";
    int k = lp_json_head_tokens(h, strlen(h), t, 6);
    CHECK_EQ_I(k, 5); /* {, data, [, {, traceID; then a string value, not a key */
    CHECK_STR(t[0], "{");
    CHECK_STR(t[1], "data");
    CHECK_STR(t[2], "[");
    CHECK_STR(t[3], "{");
    CHECK_STR(t[4], "traceID");
    h = "[{\"traceId\":\"a\"";
    k = lp_json_head_tokens(h, strlen(h), t, 5);
    CHECK_EQ_I(k, 3);
    CHECK_STR(t[2], "traceId");
    /* keys of 23 bytes fit, 24 stop the summary; so do escapes and a cut key */
    h = "{\"abcdefghijklmnopqrstuvw\":1}";
    CHECK_EQ_I(lp_json_head_tokens(h, strlen(h), t, 5), 2);
    h = "{\"abcdefghijklmnopqrstuvwx\":1}";
    CHECK_EQ_I(lp_json_head_tokens(h, strlen(h), t, 5), 1);
    h = "{\"a\\u0041\":1}";
    CHECK_EQ_I(lp_json_head_tokens(h, strlen(h), t, 5), 1);
    h = "{\"resourceSp";
    CHECK_EQ_I(lp_json_head_tokens(h, strlen(h), t, 5), 1);
    h = "{\"resourceSpans\" x";
    CHECK_EQ_I(lp_json_head_tokens(h, strlen(h), t, 5), 1); /* no ':' after it */
    lp_json_head hh;
    lp_json_head_init(&hh, "\"event\"", 7);
    lp_json_head_next(&hh);
    CHECK(lp_json_head_is(&hh, "event") && !lp_json_head_is(&hh, "even"));
}

/* Random bytes: the scan ends, each token within the head, the text inside it. */
static void random_heads(void)
{
    uint64_t s = 0x9E3779B97F4A7C15ULL;
    for (int it = 0; it < 20000; it++) {
        unsigned char b[96];
        size_t n = (size_t)(it % 97);
        for (size_t i = 0; i < n; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            b[i] = (unsigned char)"{}[]:,\" \n\\tfn0-1.eax\x80\x01"[s % 22];
        }
        unsigned char *copy = malloc(n ? n : 1); /* exact size: the sanitizers see a read past it */
        memcpy(copy, b, n);
        lp_json_head h;
        lp_json_head_init(&h, copy, n);
        int count = 0, ok = 1;
        while (lp_json_head_next(&h)) {
            ok &= (const unsigned char *)h.s >= copy && (const unsigned char *)h.s + h.n <= copy + n;
            ok &= h.p <= copy + n;
            if (++count > 200)
                break;
        }
        CHECK(ok && count <= (int)n);
        free(copy);
    }
}

int main(void)
{
    tokens();
    structure();
    random_heads();
    return t_done("test_json_head");
}
