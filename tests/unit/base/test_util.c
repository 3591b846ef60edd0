/* test_util.c: strings, numbers, UTF-8 and the JSON writer. */
#include "t.h"
#include "tutil.h"
#include "base/util.h"

static void test_strtab(void)
{
    lp_strtab st;
    CHECK(lp_strtab_init(&st) == 0);
    CHECK_EQ_I(st.n, 1);
    lp_str a, b, c;
    CHECK(lp_strtab_intern(&st, "hello", 5, &a) == 0);
    CHECK(lp_strtab_intern(&st, "world", 5, &b) == 0);
    CHECK(lp_strtab_intern(&st, "hello", 5, &c) == 0);
    CHECK(a == c && a != b);
    CHECK_STR(lp_strtab_get(&st, b), "world");
    CHECK(lp_strtab_find(&st, "nope", 4) == LP_STR_NONE);
    char buf[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(buf, sizeof buf, "s%d", i);
        lp_str id;
        CHECK(lp_strtab_intern(&st, buf, (size_t)n, &id) == 0 && id == (lp_str)(3 + i)); /* new: the next id */
    }
    CHECK_EQ_I(st.n, 100003);
    CHECK(lp_strtab_find(&st, "s99999", 6) != LP_STR_NONE);
    CHECK_STR(lp_strtab_get(&st, a), "hello"); /* bytes never move */
    lp_strtab cp;
    CHECK(lp_strtab_copy(&cp, &st) == 0);
    CHECK_EQ_I(cp.n, st.n);
    CHECK(lp_strtab_find(&cp, "s77777", 6) == lp_strtab_find(&st, "s77777", 6));
    CHECK_STR(lp_strtab_get(&cp, b), "world");
    lp_str nid;
    CHECK(lp_strtab_intern(&cp, "brand new", 9, &nid) == 0 && nid == st.n);
    CHECK(lp_strtab_intern(&cp, "hello", 5, &nid) == 0 && nid == a);
    lp_strtab_release(&cp);
    lp_strtab_release(&st);
}

static void test_numbers(void)
{
    int64_t v;
    CHECK(lp_parse_i64("0", 1, &v) && v == 0);
    CHECK(lp_parse_i64("-9223372036854775808", 20, &v) && v == INT64_MIN);
    CHECK(lp_parse_i64("9223372036854775807", 19, &v) && v == INT64_MAX);
    CHECK(!lp_parse_i64("9223372036854775808", 19, &v));
    CHECK(!lp_parse_i64("", 0, &v));
    CHECK(!lp_parse_i64("-", 1, &v));
    CHECK(!lp_parse_i64("1e3", 3, &v));
    uint64_t u;
    CHECK(lp_parse_canonical_u63("42", 2, &u) && u == 42);
    CHECK(!lp_parse_canonical_u63("042", 3, &u));
    char b[32];
    b[lp_fmt_i64(b, INT64_MIN)] = 0;
    CHECK_STR(b, "-9223372036854775808");
    b[lp_fmt_u64(b, 1234567890123ULL)] = 0;
    CHECK_STR(b, "1234567890123");
    CHECK_STR(lp_fmt_dur(1500000, b, sizeof b), "1.50 ms");
    CHECK_STR(lp_fmt_dur(55, b, sizeof b), "55 ns");
    CHECK(lp_utf8_valid("h\xc3\xa9llo", 6));
    CHECK(!lp_utf8_valid("\xc0\xaf", 2));      /* overlong */
    CHECK(!lp_utf8_valid("\xed\xa0\x80", 3));  /* surrogate */
}

static void test_json(void)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    lp_jsonw j;
    lp_jsonw_init(&j, f, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "a", "x\"y\n\x01\xff");
    lp_jsonw_key(&j, "b");
    lp_jsonw_arr(&j);
    lp_jsonw_i64(&j, -5);
    lp_jsonw_dbl(&j, 0.5);
    lp_jsonw_dbl(&j, 1.0 / 0.0);
    lp_jsonw_arr_end(&j);
    lp_jsonw_key(&j, "e");
    lp_jsonw_obj(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_obj_end(&j);
    fclose(f);
    CHECK_STR(buf, "{\"a\":\"x\\\"y\\n\\u0001\xEF\xBF\xBD\",\"b\":[-5,0.5,null],\"e\":{}}");
    free(buf);
}

static void test_error_chain(void)
{
    lp_error e;
    lp_error_clear(&e);
    lp_error_set(&e, LP_ERR_DATA, "bad span id '%s'", "zz");
    lp_error_push(&e, "line %d", 12);
    lp_error_push(&e, "importing %s", "x.json");
    CHECK_STR(e.msg, "importing x.json: line 12: bad span id 'zz'");
    CHECK(e.status == LP_ERR_DATA);
}

int main(void)
{
    test_strtab();
    test_numbers();
    test_json();
    test_error_chain();
    return t_done("test_util");
}
