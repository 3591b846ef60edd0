/* fuzz_json.c: libFuzzer target for the streaming JSON reader (src/codec/json.c). Any
 * input, read in every mode (array streaming, stream keys, JSON lines) and with a
 * tiny buffer (so every record crosses refills), must give events without a crash,
 * a leak or undefined behaviour; every tree must be well formed (strings valid UTF-8
 * and NUL-terminated, child counts matching the sibling links), and the reader must
 * end. The first byte picks the mode, so the corpus covers all of them.
 * The checks are assert()s, kept in every build type (NDEBUG is undone). */
#undef NDEBUG
#include "longpole/longpole.h"
#include "longpole/codec/json.h"

#include <assert.h>
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
    assert(depth <= LP_JSON_READ_MAXDEPTH + 1);
    size_t nodes = 1;
    if (v->key) {
        assert(v->key[v->klen] == '\0');
        assert(utf8_ok(v->key, v->klen));
    }
    int64_t i;
    double d;
    char ex[64];
    lp_json_excerpt(v, ex, sizeof ex);
    assert(strlen(ex) < sizeof ex);
    switch (v->type) {
    case LP_JSON_STRING:
        assert(v->s[v->len] == '\0');
        assert(utf8_ok(v->s, v->len));
        (void)lp_json_i64_lenient(v, &i);
        break;
    case LP_JSON_NUMBER:
        assert(v->len > 0);
        (void)lp_json_i64(v, &i);
        (void)lp_json_double(v, &d);
        (void)lp_json_i64_lenient(v, &i);
        break;
    case LP_JSON_ARRAY:
    case LP_JSON_OBJECT: {
        uint32_t k = 0;
        for (const lp_json *c = lp_json_first(v); c; c = lp_json_next_sibling(c)) {
            assert((v->type == LP_JSON_OBJECT) == (c->key != NULL));
            nodes += walk(c, depth + 1);
            k++;
        }
        assert(k == v->len);
        if (v->type == LP_JSON_OBJECT)
            (void)lp_json_get(v, "spans");
        break;
    }
    default: break;
    }
    return nodes;
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
            assert(!plain || events <= 2 * n + 4);
            assert(!plain || ev.off <= n + 3);
            if (ev.tree) {
                assert(ev.kind == LP_JSON_EV_ELEMENT || ev.kind == LP_JSON_EV_MEMBER || ev.kind == LP_JSON_EV_VALUE);
                walk(ev.tree, 1);
            }
            if (ev.kind == LP_JSON_EV_BAD)
                assert(ev.msg[0] && strlen(ev.msg) < sizeof ev.msg);
        }
        assert(st == LP_END || st == LP_ERR_NOMEM);
        lp_json_reader_free(r);
    }
    lp_input_close(in);
    return 0;
}
