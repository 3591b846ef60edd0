/* test_lpt_large.c: the text reader on inputs larger than one chunk (the two-stage,
 * threaded path): lines cut at chunk boundaries, CRLF, escapes, errors with the right
 * line numbers far into the file, an over-long line, and a read-back identical to the
 * input. */
#include "t.h"
#include "tutil.h"

static char *big_text(size_t nacts, size_t *len)
{
    size_t cap = nacts * 64 + 1024, n = 0;
    char *s = malloc(cap);
    n += (size_t)snprintf(s + n, cap - n, "longpole-trace 1\nW w0\nW w1\nW w%%20two\n");
    /* grouped by worker, as the writer writes them, so the read-back is byte-identical */
    for (int w = 0; w < 3; w++) {
        int64_t t = 0;
        const char *name = w == 2 ? "w%20two" : w ? "w1" : "w0";
        for (size_t i = (size_t)w; i < nacts; i += 3) {
            n += (size_t)snprintf(s + n, cap - n, "A %s %lld %lld processing op%d%s\n", name, (long long)t,
                                  (long long)(t + 7 + (int64_t)(i % 5)), (int)(i % 7), i % 1000 == 0 ? " k=v" : "");
            t += 7 + (int64_t)(i % 5);
        }
    }
    *len = n;
    return s;
}

static lp_trace *load_buf(const char *p, size_t n, lp_diags *ds)
{
    lp_diags_init(ds, 50);
    lp_error err;
    lp_builder *b;
    if (lp_builder_new(&b, ds, NULL, &err))
        return NULL;
    lp_input *in;
    if (lp_input_open_mem(&in, p, n, "big.lpt", &err)) {
        lp_builder_free(b);
        return NULL;
    }
    lp_status st = lp_lpt_read(b, in, NULL, &err);
    lp_input_close(in);
    if (st) {
        lp_builder_free(b);
        return NULL;
    }
    lp_trace *t;
    return lp_builder_finish(b, &t, &err) ? NULL : t;
}

static void test_roundtrip_big(void)
{
    size_t n;
    char *txt = big_text(400000, &n); /* ~16 MB: several chunks */
    CHECK(n > 3 * (4u << 20));
    lp_diags ds;
    lp_trace *t = load_buf(txt, n, &ds);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_I(ds.nerrors + ds.nwarnings, 0);
        CHECK_EQ_I(t->nacts, 400000);
        char *back = write_text(t);
        CHECK(back && strcmp(back, txt) == 0);
        free(back);
        lp_trace_free(t);
    }
    lp_diags_release(&ds);
    free(txt);
}

static void test_errors_far_in(void)
{
    size_t n;
    char *txt = big_text(300000, &n);
    /* corrupt the start time of the record on line 250001 (line 1 is the header, 2-4 W) */
    size_t line = 1, i = 0;
    while (line < 250001)
        line += txt[i++] == '\n';
    /* txt + i is the start of line 250001: "A w.. START ..." */
    char *sp = strchr(txt + i + 2, ' ') + 1;
    sp[0] = 'x';
    lp_diags ds;
    lp_trace *t = load_buf(txt, n, &ds);
    CHECK(t != NULL);
    CHECK_EQ_I(ds.nerrors, 1);
    CHECK(has_diag(&ds, LP_RULE_FIELD, 250001));
    if (t)
        CHECK_EQ_I(t->nacts - t->ngaps, 299999);
    lp_trace_free(t);
    lp_diags_release(&ds);
    free(txt);
}

static void test_long_line(void)
{
    size_t big = (17u << 20);
    size_t n = big + 200;
    char *txt = malloc(n);
    size_t k = (size_t)snprintf(txt, n, "A a 0 1 processing\nA a 1 2 processing ");
    memset(txt + k, 'x', big);
    k += big;
    k += (size_t)snprintf(txt + k, n - k, "\nA a 2 3 io\n");
    lp_diags ds;
    lp_trace *t = load_buf(txt, k, &ds);
    CHECK(t != NULL);
    CHECK(has_diag(&ds, LP_RULE_SYNTAX, 2));
    CHECK_EQ_I(ds.nerrors, 1);
    if (t)
        CHECK_EQ_I(t->nacts - t->ngaps, 2);
    lp_trace_free(t);
    lp_diags_release(&ds);
    free(txt);
}

int main(void)
{
    test_roundtrip_big();
    test_errors_far_in();
    test_long_line();
    return t_done("test_lpt_large");
}
