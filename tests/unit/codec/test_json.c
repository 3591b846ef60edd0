/* test_json.c: the streaming JSON reader (src/codec/json.c): events and trees for every
 * shape the importers use, exact error positions, recovery, and a differential test
 * against a naive whole-document parser (the twin below) on random documents, valid
 * and mutated, read with buffers from 1 byte to 4 MiB so records cross refills. */
#include "longpole/longpole.h"
#include "longpole/codec/json.h"
#include "t.h"

#include <stdint.h>
#include <zlib.h>

/* ---- a growable string ---- */
typedef struct sb {
    char *p;
    size_t n, cap;
} sb;
static void sb_putn(sb *b, const char *s, size_t k)
{
    if (b->n + k + 1 > b->cap) {
        b->cap = (b->n + k + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, k);
    b->n += k;
    b->p[b->n] = '\0';
}
static void sb_puts(sb *b, const char *s) { sb_putn(b, s, strlen(s)); }
static void sb_putc(sb *b, char c) { sb_putn(b, &c, 1); }

/* canonical form of a decoded string */
static void canon_str(sb *b, const char *s, size_t n)
{
    sb_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            sb_putc(b, '\\');
            sb_putc(b, (char)c);
        } else if (c < 0x20) {
            char t[8];
            snprintf(t, sizeof t, "\\u%04x", c);
            sb_puts(b, t);
        } else {
            sb_putc(b, (char)c);
        }
    }
    sb_putc(b, '"');
}

static void canon_tree(sb *b, const lp_json *n)
{
    switch (n->type) {
    case LP_JSON_NULL: sb_puts(b, "null"); break;
    case LP_JSON_TRUE: sb_puts(b, "true"); break;
    case LP_JSON_FALSE: sb_puts(b, "false"); break;
    case LP_JSON_NUMBER: sb_putn(b, n->s, n->len); break;
    case LP_JSON_STRING: canon_str(b, n->s, n->len); break;
    default: {
        int obj = n->type == LP_JSON_OBJECT;
        sb_putc(b, obj ? '{' : '[');
        int first = 1;
        for (const lp_json *c = lp_json_first(n); c; c = lp_json_next_sibling(c)) {
            if (!first)
                sb_putc(b, ',');
            first = 0;
            if (obj) {
                canon_str(b, c->key, c->klen);
                sb_putc(b, ':');
            }
            canon_tree(b, c);
        }
        sb_putc(b, obj ? '}' : ']');
    }
    }
}

/* Read a document; the log lists events ("B[", "E:<tree>", "M:<tree>", "V:<tree>",
 * "]", "}", "!<msg>@off:line") separated by spaces. Returns the number of BAD events. */
static int run_values; /* top-level values (BEGIN or VALUE events) of the last run */

static int run(const char *doc, size_t n, const char *const *keys, int lines, size_t bufsize, sb *log)
{
    run_values = 0;
    lp_input *in;
    lp_error err;
    int nbad = 0;
    if (lp_input_open_mem(&in, doc, n, "doc", &err))
        return -1;
    lp_json_opts o = {.stream_keys = keys, .lines = lines, .bufsize = bufsize};
    lp_json_reader *r;
    if (lp_json_reader_new(&r, in, &o, &err)) {
        lp_input_close(in);
        return -1;
    }
    lp_json_ev ev;
    lp_status st;
    while ((st = lp_json_next(r, &ev, &err)) == LP_OK) {
        if (log->n)
            sb_putc(log, ' ');
        char t[300];
        switch (ev.kind) {
        case LP_JSON_EV_BEGIN:
            run_values++;
            sb_puts(log, ev.type == LP_JSON_ARRAY ? "B[" : "B{");
            break;
        case LP_JSON_EV_END: sb_puts(log, ev.type == LP_JSON_ARRAY ? "]" : "}"); break;
        case LP_JSON_EV_ELEMENT:
            sb_puts(log, "E");
            if (ev.key) {
                sb_puts(log, "(");
                sb_puts(log, ev.key);
                sb_puts(log, ")");
            }
            sb_puts(log, ":");
            canon_tree(log, ev.tree);
            break;
        case LP_JSON_EV_MEMBER:
            sb_puts(log, "M(");
            sb_puts(log, ev.key);
            sb_puts(log, "):");
            canon_tree(log, ev.tree);
            break;
        case LP_JSON_EV_VALUE:
            run_values++;
            sb_puts(log, "V:");
            canon_tree(log, ev.tree);
            break;
        case LP_JSON_EV_BAD:
            nbad++;
            snprintf(t, sizeof t, "!%s@%llu:%llu%s", ev.msg, (unsigned long long)ev.off, (unsigned long long)ev.line,
                     ev.fatal ? "F" : "");
            sb_puts(log, t);
            break;
        }
    }
    if (st != LP_END)
        nbad = -1;
    lp_json_reader_free(r);
    lp_input_close(in);
    return nbad;
}

static char *logof(const char *doc, const char *const *keys, int lines, size_t bufsize)
{
    sb log = {0};
    sb_puts(&log, "");
    run(doc, strlen(doc), keys, lines, bufsize, &log);
    return log.p;
}

/* Checks the log (with every buffer size), or that it contains a fragment. */
static void expect_log(const char *doc, const char *const *keys, int lines, const char *want, int line)
{
    static const size_t sizes[] = {0, 1, 2, 3, 5, 8, 13, 64};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *got = logof(doc, keys, lines, sizes[i]);
        t_checks++;
        if (strcmp(got, want) != 0) {
            t_failures++;
            fprintf(stderr, "test_json.c:%d: bufsize %zu: log\n  %s\nexpected\n  %s\n", line, sizes[i], got, want);
        }
        free(got);
    }
}
#define EXPECT(doc, keys, lines, want) expect_log(doc, keys, lines, want, __LINE__)

static void expect_has(const char *doc, const char *const *keys, int lines, const char *frag, int line)
{
    char *got = logof(doc, keys, lines, 3);
    t_checks++;
    if (!strstr(got, frag)) {
        t_failures++;
        fprintf(stderr, "test_json.c:%d: log\n  %s\ndoes not contain\n  %s\n", line, got, frag);
    }
    free(got);
}
#define HAS(doc, keys, lines, frag) expect_has(doc, keys, lines, frag, __LINE__)

static const char *const K_DATA[] = {"data", "spans", NULL};

static void test_shapes(void)
{
    EXPECT("[1, 2 ,\"x\",{\"a\":[true,false,null]}]", NULL, 0, "B[ E:1 E:2 E:\"x\" E:{\"a\":[true,false,null]} ]");
    EXPECT("[]", NULL, 0, "B[ ]");
    EXPECT("  [ ]  \n", NULL, 0, "B[ ]");
    EXPECT("", NULL, 0, "");
    EXPECT("   \n\n ", NULL, 0, "");
    /* objects whole when no stream keys */
    EXPECT("{\"data\":[1,2],\"n\":2}", NULL, 0, "V:{\"data\":[1,2],\"n\":2}");
    /* member by member with stream keys */
    EXPECT("{\"data\":[{\"a\":1},{\"b\":2}],\"total\":2,\"errors\":null}", K_DATA, 0,
           "B{ E(data):{\"a\":1} E(data):{\"b\":2} M(total):2 M(errors):null }");
    EXPECT("{\"traceID\":\"t\",\"spans\":[],\"processes\":{\"p1\":{}}}", K_DATA, 0,
           "B{ M(traceID):\"t\" M(processes):{\"p1\":{}} }");
    /* a stream key whose value is not an array is an ordinary member */
    EXPECT("{\"data\":5}", K_DATA, 0, "B{ M(data):5 }");
    EXPECT("{}", K_DATA, 0, "B{ }");
    /* concatenated values and JSON lines */
    EXPECT("{\"a\":1}\n{\"a\":2}\n", NULL, 1, "V:{\"a\":1} V:{\"a\":2}");
    EXPECT("1 2 \"three\" null", NULL, 0, "V:1 V:2 V:\"three\" V:null");
    EXPECT("[1][2]", NULL, 0, "B[ E:1 ] B[ E:2 ]");
    /* nested arrays (Zipkin's [[span],[span]]) */
    EXPECT("[[{\"id\":\"a\"}],[{\"id\":\"b\"},{\"id\":\"c\"}]]", NULL, 0,
           "B[ E:[{\"id\":\"a\"}] E:[{\"id\":\"b\"},{\"id\":\"c\"}] ]");
    /* a byte order mark */
    EXPECT("\xEF\xBB\xBF[1]", NULL, 0, "B[ E:1 ]");
}

static void test_strings(void)
{
    EXPECT("[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"]", NULL, 0, "B[ E:\"a\\\"b\\\\c/d\\u0008\\u000c\\u000a\\u000d\\u0009\" ]");
    EXPECT("[\"\\u00e9\\u20AC\\ud83d\\ude00\"]", NULL, 0, "B[ E:\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\" ]");
    EXPECT("[\"caf\xC3\xA9 \xF0\x9F\x98\x80\"]", NULL, 0, "B[ E:\"caf\xC3\xA9 \xF0\x9F\x98\x80\" ]");
    EXPECT("{\"k\\u0041y\":[\"v\"]}", NULL, 0, "V:{\"kAy\":[\"v\"]}");
    /* decoded strings are NUL-terminated and keep their length */
    lp_input *in;
    lp_error err;
    const char *doc = "[{\"key\":\"va\\u0000lue\",\"k2\":\"plain\"}]";
    CHECK(lp_input_open_mem(&in, doc, strlen(doc), "doc", &err) == LP_OK);
    lp_json_reader *r;
    CHECK(lp_json_reader_new(&r, in, NULL, &err) == LP_OK);
    lp_json_ev ev;
    CHECK(lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_BEGIN);
    CHECK(lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_ELEMENT);
    const lp_json *v = lp_json_get(ev.tree, "key");
    CHECK(v && v->len == 6 && memcmp(v->s, "va\0lue", 7) == 0);
    const lp_json *v2 = lp_json_get(ev.tree, "k2");
    CHECK(v2 && strcmp(v2->s, "plain") == 0 && lp_json_str_is(v2, "plain") && !lp_json_str_is(v2, "plai"));
    CHECK(strcmp(v2->key, "k2") == 0 && lp_json_key_is(v2, "k2"));
    CHECK(lp_json_get(ev.tree, "nope") == NULL);
    CHECK(v->line == 1 && v->off == 8);
    lp_json_reader_free(r);
    lp_input_close(in);
}

static void test_numbers(void)
{
    const char *doc = "[0, -0, 12, -9223372036854775808, 9223372036854775807, 9223372036854775808, 1.5, -2e3, "
                      "1E+2, 0.25e-1, 18446744073709551615, \"123\", \"-7\", \"x1\", 4.0, 1e400]";
    lp_input *in;
    lp_error err;
    CHECK(lp_input_open_mem(&in, doc, strlen(doc), "doc", &err) == LP_OK);
    lp_json_reader *r;
    CHECK(lp_json_reader_new(&r, in, NULL, &err) == LP_OK);
    lp_json_ev ev;
    int64_t iv[32];
    int iok[32], lok[32], uok[32];
    double dv[32];
    int k = 0;
    uint64_t u = 0;
    int64_t lv[32];
    while (lp_json_next(r, &ev, &err) == LP_OK && k < 32) {
        if (ev.kind != LP_JSON_EV_ELEMENT)
            continue;
        iok[k] = lp_json_i64(ev.tree, &iv[k]) == 0;
        lok[k] = lp_json_i64_lenient(ev.tree, &lv[k]) == 0;
        uok[k] = lp_json_u64(ev.tree, &u) == 0;
        if (lp_json_double(ev.tree, &dv[k]))
            dv[k] = -1234.5;
        if (k == 10)
            CHECK(uok[k] && u == UINT64_MAX);
        k++;
    }
    CHECK_EQ_I(k, 16);
    CHECK(iok[0] && iv[0] == 0 && iok[1] && iv[1] == 0 && iok[2] && iv[2] == 12);
    CHECK(iok[3] && iv[3] == INT64_MIN && iok[4] && iv[4] == INT64_MAX);
    CHECK(!iok[5] && uok[5]);
    CHECK(!iok[6] && dv[6] == 1.5 && !lok[6]);
    CHECK(!iok[7] && dv[7] == -2000.0 && lok[7] && lv[7] == -2000);
    CHECK(dv[8] == 100.0 && dv[9] == 0.025);
    CHECK(!iok[11] && lok[11] && lv[11] == 123 && lok[12] && lv[12] == -7 && !lok[13]);
    CHECK(lok[14] && lv[14] == 4 && !lok[15]);
    CHECK(!uok[1 + 2] && !uok[7]);
    lp_json_reader_free(r);
    lp_input_close(in);
    /* malformed numbers are bad records; the array goes on */
    EXPECT("[01,1.,-,2]", NULL, 0,
           "B[ !malformed number ('1' after '0')@1:1 !malformed number (',' after '1.')@4:1 "
           "!malformed number (',' after '-')@7:1 E:2 ]");
    EXPECT("[1e,3]", NULL, 0, "B[ !malformed number (',' after '1e')@1:1 E:3 ]");
    EXPECT("[3", NULL, 0, "B[ E:3 !unexpected end of input (truncated file?): the array that starts at byte 0, line 1 is not closed@2:1F");
    EXPECT("[3,", NULL, 0, "B[ E:3 !unexpected end of input (truncated file?): the array that starts at byte 0, line 1 is not closed@3:1F");
    EXPECT("[3,\n 4", NULL, 0, "B[ E:3 E:4 !unexpected end of input (truncated file?): the array that starts at byte 0, line 1 is not closed@6:2F");
    EXPECT("[3,\n \"4", NULL, 0, "B[ E:3 !unexpected end of input (truncated file?) in the value that starts at byte 5, line 2@7:2F");
}

static void test_errors(void)
{
    /* structural errors end the input, with their position */
    EXPECT("[1,2,]", NULL, 0, "B[ E:1 E:2 !trailing comma before ']'@5:1F");
    EXPECT("[1 2]", NULL, 0, "B[ E:1 !expected ',' or ']' after an array element, found '2'@3:1F");
    EXPECT("[{\"a\" 1}]", NULL, 0, "B[ !expected ':' after a member name, found '1'@6:1F");
    EXPECT("[{\"a\":1,}]", NULL, 0, "B[ !trailing comma before '}'@8:1F");
    EXPECT("[{a:1}]", NULL, 0, "B[ !expected a member name (a string) in an object, found 'a'@2:1F");
    EXPECT("[tru]", NULL, 0, "B[ !expected a value, found 't'@1:1F");
    EXPECT("[nul", NULL, 0, "B[ !unexpected end of input (truncated file?) in the value that starts at byte 1, line 1@4:1F");
    EXPECT("[1]x", NULL, 0, "B[ E:1 ] !expected a value, found 'x'@3:1F");
    EXPECT("{\"data\":[1,2", K_DATA, 0,
           "B{ E(data):1 E(data):2 !unexpected end of input (truncated file?): the array that starts at byte 8, line 1 "
           "is not closed@12:1F");
    /* truncated inside a string, over several lines */
    EXPECT("[\n{\"a\":\n\"abc", NULL, 0,
           "B[ !unexpected end of input (truncated file?) in the value that starts at byte 2, line 2@12:3F");
    /* problems inside a record: the record is skipped, the reader goes on */
    EXPECT("[\"ok\",\n\"a\xff\",\n\"b\"]", NULL, 0, "B[ E:\"ok\" !invalid UTF-8 byte 0xff in a string@9:2 E:\"b\" ]");
    EXPECT("[\"\xC0\xAF\",1]", NULL, 0, "B[ !invalid UTF-8 byte 0xc0 in a string@2:1 E:1 ]");         /* overlong */
    EXPECT("[\"\xED\xA0\x80\",1]", NULL, 0, "B[ !invalid UTF-8 byte 0xed in a string@2:1 E:1 ]");     /* surrogate */
    EXPECT("[\"a\\qb\",1]", NULL, 0, "B[ !bad escape '\\' followed by 'q'@3:1 E:1 ]");
    EXPECT("[\"\\u12G4\",1]", NULL, 0, "B[ !bad escape: \\u must be followed by four hex digits@2:1 E:1 ]");
    EXPECT("[\"\\ud800x\",1]", NULL, 0,
           "B[ !bad escape: high surrogate \\uD800 without a low surrogate after it@2:1 E:1 ]");
    EXPECT("[\"\\udc00\",1]", NULL, 0, "B[ !bad escape: lone low surrogate \\uDC00@2:1 E:1 ]");
    EXPECT("[\"a\tb\",1]", NULL, 0, "B[ !control character 0x09 inside a string (must be escaped)@3:1 E:1 ]");
    EXPECT("[\"a\nb\",1]", NULL, 0, "B[ !line break inside a string (unterminated string?)@3:1F");
    {
        sb log = {0};
        sb_puts(&log, "");
        run("[1,\"a\0b\",2]", 11, NULL, 0, 4, &log);
        CHECK_STR(log.p, "B[ E:1 !control character 0x00 inside a string (must be escaped)@5:1 E:2 ]");
        free(log.p);
    }
    /* JSON lines: a broken line is skipped, the next ones are read */
    EXPECT("{\"a\":1}\n{\"a\":2,\n{\"a\":3}\n{\"a\":\"x\xfe\"}\n{\"a\":4}\n{\"a\"", NULL, 1,
           "V:{\"a\":1} !expected a member name (a string) in an object, found '{'@16:3 V:{\"a\":3} "
           "!invalid UTF-8 byte 0xfe in a string@31:4 V:{\"a\":4} "
           "!unexpected end of input (truncated file?) in the value that starts at byte 43, line 6@47:6");
    /* deep nesting */
    sb deep = {0};
    sb_puts(&deep, "[");
    for (int i = 0; i < LP_JSON_READ_MAXDEPTH + 1; i++)
        sb_puts(&deep, "[");
    HAS(deep.p, NULL, 0, "nesting deeper than 512 arrays/objects");
    free(deep.p);
    /* exactly the limit is fine */
    sb ok = {0};
    sb_puts(&ok, "[");
    for (int i = 0; i < LP_JSON_READ_MAXDEPTH; i++)
        sb_puts(&ok, "[");
    for (int i = 0; i < LP_JSON_READ_MAXDEPTH + 1; i++)
        sb_puts(&ok, "]");
    char *got = logof(ok.p, NULL, 0, 0);
    CHECK(strstr(got, "!") == NULL && strncmp(got, "B[ E:[[[", 8) == 0);
    free(got);
    free(ok.p);
}

/* The reason code of the first BAD event of a document (LP_JSON_E_NONE if none). */
static lp_json_err first_code(const char *doc, int lines)
{
    lp_input *in;
    lp_error err;
    lp_json_err code = LP_JSON_E_NONE;
    if (lp_input_open_mem(&in, doc, strlen(doc), "doc", &err))
        return (lp_json_err)-1;
    lp_json_opts o = {.lines = lines};
    lp_json_reader *r;
    if (lp_json_reader_new(&r, in, &o, &err) == LP_OK) {
        lp_json_ev ev;
        while (lp_json_next(r, &ev, &err) == LP_OK)
            if (ev.kind == LP_JSON_EV_BAD) {
                code = ev.code;
                break;
            }
        lp_json_reader_free(r);
    }
    lp_input_close(in);
    return code;
}

/* BAD events carry a reason code to decide on (not the message text). */
static void test_codes(void)
{
    CHECK_EQ_I(first_code("[1, 2]", 0), LP_JSON_E_NONE);
    CHECK_EQ_I(first_code("[3", 0), LP_JSON_E_UNCLOSED);
    CHECK_EQ_I(first_code("[3,", 0), LP_JSON_E_UNCLOSED);
    CHECK_EQ_I(first_code("[3, {\"a\":", 0), LP_JSON_E_TRUNCATED);
    CHECK_EQ_I(first_code("[1 2]", 0), LP_JSON_E_SYNTAX);
    CHECK_EQ_I(first_code("[\"a\\q\"]", 0), LP_JSON_E_STRING);
    CHECK_EQ_I(first_code("[\"a\x01\"]", 0), LP_JSON_E_STRING);
    CHECK_EQ_I(first_code("[\"a\xff\"]", 0), LP_JSON_E_UTF8);
    CHECK_EQ_I(first_code("[01]", 0), LP_JSON_E_NUMBER);
    CHECK_EQ_I(first_code("{\"a\":1}\n{\"a\":\n", 1), LP_JSON_E_TRUNCATED);
    char deep[1200];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    CHECK_EQ_I(first_code(deep, 0), LP_JSON_E_DEPTH);
}

static void test_repair(void)
{
    const char *doc = "[{\"a\":\"x\xffy\",\"b\":\"\\q\\ud800z\\u00e9\"},{\"k\\u00e9\\ud800\":\"\\u12G4\\udc00\tok\"},\"fine\"]";
    lp_input *in;
    lp_error err;
    CHECK(lp_input_open_mem(&in, doc, strlen(doc), "doc", &err) == LP_OK);
    lp_json_opts o = {.repair = 1, .bufsize = 5};
    lp_json_reader *r;
    CHECK(lp_json_reader_new(&r, in, &o, &err) == LP_OK);
    lp_json_ev ev;
    CHECK(lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_BEGIN);
    CHECK(lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_ELEMENT);
    CHECK(ev.repaired == 2 && ev.roff == 8 && ev.rline == 1 && strcmp(ev.rmsg, "invalid UTF-8 byte 0xff in a string") == 0);
    CHECK_STR(lp_json_get(ev.tree, "a")->s, "x?y");
    CHECK_STR(lp_json_get(ev.tree, "b")->s, "q?z\xC3\xA9");
    CHECK(lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_ELEMENT && ev.repaired == 2);
    const lp_json *m = lp_json_first(ev.tree);
    CHECK_STR(m->key, "k\xC3\xA9?");
    CHECK_STR(m->s, "?12G4?\tok");
    CHECK(lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_ELEMENT && ev.repaired == 0);
    CHECK(lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_END);
    lp_json_reader_free(r);
    lp_input_close(in);
}

static void test_record_limit_and_gzip(void)
{
    /* max_record */
    const char *doc = "[\"0123456789012345678901234567890123456789\",1]";
    lp_input *in;
    lp_error err;
    CHECK(lp_input_open_mem(&in, doc, strlen(doc), "doc", &err) == LP_OK);
    lp_json_opts o = {.max_record = 16, .bufsize = 8};
    lp_json_reader *r;
    CHECK(lp_json_reader_new(&r, in, &o, &err) == LP_OK);
    lp_json_ev ev;
    CHECK(lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_BEGIN);
    CHECK(lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_BAD && ev.fatal &&
          strstr(ev.msg, "larger than 16 bytes"));
    CHECK(lp_json_next(r, &ev, &err) == LP_END);
    lp_json_reader_free(r);
    lp_input_close(in);

    /* a truncated gzip stream: the records before the cut are delivered, then a fatal BAD */
    sb big = {0};
    sb_puts(&big, "[");
    for (int i = 0; i < 20000; i++) {
        char t[64];
        snprintf(t, sizeof t, "%s{\"i\":%d,\"s\":\"value %d\"}", i ? "," : "", i, i * 7);
        sb_puts(&big, t);
    }
    sb_puts(&big, "]");
    uLongf zn = compressBound((uLong)big.n) + 64;
    unsigned char *z = malloc(zn);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    CHECK(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    zs.next_in = (unsigned char *)big.p;
    zs.avail_in = (uInt)big.n;
    zs.next_out = z;
    zs.avail_out = (uInt)zn;
    CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    size_t zlen = zs.total_out;
    deflateEnd(&zs);
    for (int cut = 0; cut < 2; cut++) {
        size_t len = cut ? zlen / 2 : zlen;
        CHECK(lp_input_open_mem(&in, z, len, "doc.gz", &err) == LP_OK);
        CHECK(lp_json_reader_new(&r, in, NULL, &err) == LP_OK);
        int elems = 0, bad = 0;
        lp_status st;
        while ((st = lp_json_next(r, &ev, &err)) == LP_OK) {
            if (ev.kind == LP_JSON_EV_ELEMENT) {
                int64_t v;
                CHECK(lp_json_i64(lp_json_get(ev.tree, "i"), &v) == 0 && v == elems);
                elems++;
            }
            if (ev.kind == LP_JSON_EV_BAD) {
                bad++;
                CHECK(ev.fatal && strstr(ev.msg, "truncated"));
            }
        }
        CHECK(st == LP_END);
        if (cut) {
            CHECK(bad == 1 && elems > 1000 && elems < 20000);
        } else {
            CHECK(bad == 0 && elems == 20000);
        }
        lp_json_reader_free(r);
        lp_input_close(in);
    }
    free(z);
    free(big.p);
}

/* ---- the naive twin: a whole-document recursive parser --------------------------- */

typedef struct naive {
    const unsigned char *p, *end;
    int depth;
} naive;

static void nws(naive *z)
{
    while (z->p < z->end && (*z->p == ' ' || *z->p == '\t' || *z->p == '\n' || *z->p == '\r'))
        z->p++;
}

static int nhex(const unsigned char *p, const unsigned char *end, unsigned *v)
{
    if (end - p < 4)
        return -1;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        *v = *v * 16 + d;
    }
    return 0;
}

static void put_utf8(sb *b, unsigned cp)
{
    char t[4];
    int k;
    if (cp < 0x80) {
        t[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        t[0] = (char)(0xC0 | cp >> 6);
        t[1] = (char)(0x80 | (cp & 63));
        k = 2;
    } else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | cp >> 12);
        t[1] = (char)(0x80 | ((cp >> 6) & 63));
        t[2] = (char)(0x80 | (cp & 63));
        k = 3;
    } else {
        t[0] = (char)(0xF0 | cp >> 18);
        t[1] = (char)(0x80 | ((cp >> 12) & 63));
        t[2] = (char)(0x80 | ((cp >> 6) & 63));
        t[3] = (char)(0x80 | (cp & 63));
        k = 4;
    }
    sb_putn(b, t, (size_t)k);
}

/* decode a string into raw (decoded) bytes; -1 if invalid */
static int nstring(naive *z, sb *raw)
{
    z->p++;
    for (;;) {
        if (z->p >= z->end)
            return -1;
        unsigned c = *z->p;
        if (c == '"') {
            z->p++;
            return 0;
        }
        if (c < 0x20)
            return -1;
        if (c == '\\') {
            if (z->end - z->p < 2)
                return -1;
            unsigned x = z->p[1];
            z->p += 2;
            const char *simple = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            const char *q = x ? strchr(simple, (int)x) : NULL;
            if (q) {
                sb_putc(raw, to[q - simple]);
                continue;
            }
            if (x != 'u')
                return -1;
            unsigned v;
            if (nhex(z->p, z->end, &v))
                return -1;
            z->p += 4;
            if (v >= 0xDC00 && v <= 0xDFFF)
                return -1;
            if (v >= 0xD800 && v <= 0xDBFF) {
                unsigned w;
                if (z->end - z->p < 6 || z->p[0] != '\\' || z->p[1] != 'u' || nhex(z->p + 2, z->end, &w) ||
                    w < 0xDC00 || w > 0xDFFF)
                    return -1;
                z->p += 6;
                v = 0x10000 + ((v - 0xD800) << 10) + (w - 0xDC00);
            }
            put_utf8(raw, v);
            continue;
        }
        if (c < 0x80) {
            sb_putc(raw, (char)c);
            z->p++;
            continue;
        }
        /* UTF-8 by code point arithmetic (independent of the reader's table) */
        int k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
        if (!k || z->end - z->p < k)
            return -1;
        unsigned cp = c & (k == 2 ? 0x1F : k == 3 ? 0x0F : 0x07);
        for (int i = 1; i < k; i++) {
            if ((z->p[i] & 0xC0) != 0x80)
                return -1;
            cp = cp << 6 | (z->p[i] & 0x3F);
        }
        unsigned minv = k == 2 ? 0x80 : k == 3 ? 0x800 : 0x10000;
        if (cp < minv || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return -1;
        sb_putn(raw, (const char *)z->p, (size_t)k);
        z->p += k;
    }
}

static int nvalue(naive *z, sb *out)
{
    nws(z);
    if (z->p >= z->end)
        return -1;
    unsigned c = *z->p;
    if (c == '"') {
        sb raw = {0};
        sb_puts(&raw, "");
        int rc = nstring(z, &raw);
        if (!rc)
            canon_str(out, raw.p, raw.n);
        free(raw.p);
        return rc;
    }
    if (c == '[' || c == '{') {
        int obj = c == '{';
        if (++z->depth > LP_JSON_READ_MAXDEPTH)
            return -1;
        z->p++;
        sb_putc(out, obj ? '{' : '[');
        nws(z);
        if (z->p < z->end && *z->p == (obj ? '}' : ']')) {
            z->p++;
        } else {
            for (int first = 1;; first = 0) {
                if (!first)
                    sb_putc(out, ',');
                if (obj) {
                    nws(z);
                    if (z->p >= z->end || *z->p != '"')
                        return -1;
                    sb raw = {0};
                    sb_puts(&raw, "");
                    if (nstring(z, &raw)) {
                        free(raw.p);
                        return -1;
                    }
                    canon_str(out, raw.p, raw.n);
                    free(raw.p);
                    nws(z);
                    if (z->p >= z->end || *z->p != ':')
                        return -1;
                    z->p++;
                    sb_putc(out, ':');
                }
                if (nvalue(z, out))
                    return -1;
                nws(z);
                if (z->p >= z->end)
                    return -1;
                if (*z->p == ',') {
                    z->p++;
                    continue;
                }
                if (*z->p == (obj ? '}' : ']')) {
                    z->p++;
                    break;
                }
                return -1;
            }
        }
        sb_putc(out, obj ? '}' : ']');
        z->depth--;
        return 0;
    }
    static const char *const lits[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t k = strlen(lits[i]);
        if ((size_t)(z->end - z->p) >= k && memcmp(z->p, lits[i], k) == 0) {
            z->p += k;
            sb_puts(out, lits[i]);
            return 0;
        }
    }
    /* number */
    const unsigned char *s = z->p;
    if (z->p < z->end && *z->p == '-')
        z->p++;
    if (z->p >= z->end)
        return -1;
    if (*z->p == '0')
        z->p++;
    else if (*z->p >= '1' && *z->p <= '9')
        while (z->p < z->end && *z->p >= '0' && *z->p <= '9')
            z->p++;
    else
        return -1;
    if (z->p < z->end && *z->p == '.') {
        z->p++;
        if (z->p >= z->end || *z->p < '0' || *z->p > '9')
            return -1;
        while (z->p < z->end && *z->p >= '0' && *z->p <= '9')
            z->p++;
    }
    if (z->p < z->end && (*z->p == 'e' || *z->p == 'E')) {
        z->p++;
        if (z->p < z->end && (*z->p == '+' || *z->p == '-'))
            z->p++;
        if (z->p >= z->end || *z->p < '0' || *z->p > '9')
            return -1;
        while (z->p < z->end && *z->p >= '0' && *z->p <= '9')
            z->p++;
    }
    if (z->p < z->end && !strchr(",]} \t\r\n", *z->p))
        return -1;
    sb_putn(out, (const char *)s, (size_t)(z->p - s));
    return 0;
}

/* The twin's log for a document that is one top-level array; -1 if invalid. */
static int naive_log(const char *doc, size_t n, sb *log)
{
    naive z = {(const unsigned char *)doc, (const unsigned char *)doc + n, 0};
    nws(&z);
    if (z.p >= z.end || *z.p != '[')
        return -1;
    z.p++;
    sb_puts(log, "B[");
    nws(&z);
    if (z.p < z.end && *z.p == ']') {
        z.p++;
    } else {
        for (;;) {
            sb_puts(log, " E:");
            z.depth = 0;
            if (nvalue(&z, log))
                return -1;
            nws(&z);
            if (z.p >= z.end)
                return -1;
            if (*z.p == ',') {
                z.p++;
                continue;
            }
            if (*z.p == ']') {
                z.p++;
                break;
            }
            return -1;
        }
    }
    sb_puts(log, " ]");
    nws(&z);
    return z.p == z.end ? 0 : -1;
}

/* ---- random documents ---- */
static uint64_t rs = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
static int rn(int n) { return (int)(rnd() % (uint64_t)n); }

static void ws(sb *b)
{
    static const char *const w[] = {"", "", "", " ", "\n", "\t", "\r\n", "  \n  "};
    sb_puts(b, w[rn(8)]);
}

static void gen_string(sb *b)
{
    sb_putc(b, '"');
    int n = rn(12);
    for (int i = 0; i < n; i++) {
        switch (rn(10)) {
        case 0: sb_puts(b, "\\n"); break;
        case 1: sb_puts(b, "\\\""); break;
        case 2: sb_puts(b, "\\u00e9"); break;
        case 3: sb_puts(b, "\\uD83D\\uDE80"); break;
        case 4: sb_puts(b, "\xE2\x82\xAC"); break;
        case 5: sb_puts(b, "\\\\"); break;
        case 6: sb_puts(b, "\xF0\x9F\x98\x80"); break;
        default: sb_putc(b, (char)('a' + rn(26))); break;
        }
    }
    sb_putc(b, '"');
}

static void gen_value(sb *b, int depth)
{
    static const char *const nums[] = {"0", "-1", "42", "3.25", "-0.5e-3", "1E+9", "123456789012345678", "7e2"};
    int k = depth > 4 ? rn(5) : rn(8);
    ws(b);
    switch (k) {
    case 0: sb_puts(b, nums[rn(8)]); break;
    case 1: gen_string(b); break;
    case 2: sb_puts(b, rn(2) ? "true" : "false"); break;
    case 3: sb_puts(b, "null"); break;
    case 4: sb_puts(b, nums[rn(8)]); break;
    case 5:
    case 6: {
        sb_putc(b, '{');
        int n = rn(5);
        for (int i = 0; i < n; i++) {
            if (i)
                sb_putc(b, ',');
            ws(b);
            gen_string(b);
            ws(b);
            sb_putc(b, ':');
            gen_value(b, depth + 1);
            ws(b);
        }
        sb_putc(b, '}');
        break;
    }
    default: {
        sb_putc(b, '[');
        int n = rn(5);
        for (int i = 0; i < n; i++) {
            if (i)
                sb_putc(b, ',');
            gen_value(b, depth + 1);
            ws(b);
        }
        sb_putc(b, ']');
    }
    }
    ws(b);
}

static void test_differential(void)
{
    static const size_t sizes[] = {0, 1, 3, 16, 100};
    int valid = 0, invalid = 0;
    for (int iter = 0; iter < 3000; iter++) {
        sb doc = {0};
        sb_puts(&doc, "");
        ws(&doc);
        sb_putc(&doc, '[');
        int n = rn(6);
        for (int i = 0; i < n; i++) {
            if (i)
                sb_putc(&doc, ',');
            gen_value(&doc, 0);
        }
        sb_putc(&doc, ']');
        ws(&doc);
        /* mutate a third of them: a byte changed, inserted, deleted, or a cut */
        if (rn(3) == 0 && doc.n > 1) {
            size_t at = (size_t)rn((int)doc.n);
            static const char bytes[] = {'"', '\\', ',', ']', '}', '[', '{', ':', '0', 'x', '\n', (char)0xff,
                                         (char)0xc3, '\0', 'e', '-'};
            switch (rn(4)) {
            case 0: doc.p[at] = bytes[rn(16)]; break;
            case 1: doc.n = at; break;
            case 2:
                memmove(doc.p + at, doc.p + at + 1, doc.n - at - 1);
                doc.n--;
                break;
            default: {
                char c = bytes[rn(16)];
                sb_putc(&doc, ' ');
                memmove(doc.p + at + 1, doc.p + at, doc.n - at - 1);
                doc.p[at] = c;
            }
            }
        }
        sb want = {0};
        sb_puts(&want, "");
        int nv = naive_log(doc.p, doc.n, &want);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            sb got = {0};
            sb_puts(&got, "");
            int bad = run(doc.p, doc.n, NULL, 0, sizes[s], &got);
            t_checks++;
            /* the reader accepts a stream of values; the document is valid for the twin
             * only when it is exactly one array */
            int ok = bad == 0 && run_values == 1 && strncmp(got.p, "B[", 2) == 0;
            int same = nv == 0 ? ok && strcmp(got.p, want.p) == 0 : !ok;
            if (!same) {
                t_failures++;
                fprintf(stderr, "differential mismatch (bufsize %zu), document:\n%.*s\nreader: %s\ntwin: %s\n",
                        sizes[s], (int)doc.n, doc.p, got.p, nv == 0 ? want.p : "(invalid)");
            }
            free(got.p);
        }
        if (nv == 0)
            valid++;
        else
            invalid++;
        free(want.p);
        free(doc.p);
    }
    CHECK(valid > 1000 && invalid > 300);
}

static void test_nomem(void)
{
    const char *doc = "{\"data\":[{\"a\":[1,2,3],\"b\":\"x\\ny\"},{\"c\":{\"d\":[true]}}],\"n\":1}";
    for (long k = 0; k < 40; k++) {
        lp_input *in;
        lp_error err;
        lp_alloc_fail_after(k);
        if (lp_input_open_mem(&in, doc, strlen(doc), "doc", &err)) {
            lp_alloc_fail_after(-1);
            continue;
        }
        lp_json_reader *r;
        lp_json_opts o = {.stream_keys = K_DATA, .bufsize = 4};
        if (lp_json_reader_new(&r, in, &o, &err) == LP_OK) {
            lp_json_ev ev;
            lp_status st;
            while ((st = lp_json_next(r, &ev, &err)) == LP_OK)
                ;
            CHECK(st == LP_END || st == LP_ERR_NOMEM);
            lp_json_reader_free(r);
        }
        lp_alloc_fail_after(-1);
        lp_input_close(in);
    }
}

int main(void)
{
    test_shapes();
    test_strings();
    test_numbers();
    test_errors();
    test_codes();
    test_record_limit_and_gzip();
    test_repair();
    test_differential();
    test_nomem();
    return t_done("test_json");
}
