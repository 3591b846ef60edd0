/* test_builder.c: the model rules enforced while building a trace (MODEL.md). */
#include "t.h"
#include "tutil.h"

static const char *model_example =
    "longpole-trace 1\n"
    "A w1 0 40 processing map\n"
    "M w1 40 w2 55 id=7 bytes=4096\n"
    "A w1 40 100 serialization map\n"
    "A w2 0 30 processing count\n"
    "A w2 55 110 processing count\n";

static void test_model_example(void)
{
    lp_diags ds;
    lp_trace *t = load_text(model_example, &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_I(ds.nerrors + ds.nwarnings, 0);
    CHECK_EQ_I(t->nworkers, 2);
    CHECK_EQ_I(t->nmsgs, 1);
    CHECK_EQ_I(t->nacts, 5); /* 4 + the waiting gap on w2 */
    CHECK_EQ_I(t->ngaps, 1);
    uint32_t w2 = lp_trace_find_worker(t, "w2");
    CHECK(w2 != LP_NONE32);
    uint64_t g = t->wfirst[w2] + 1;
    CHECK_EQ_I(t->astart[g], 30);
    CHECK_EQ_I(t->aend[g], 55);
    CHECK_EQ_I(t->atype[g], LP_TYPE_WAITING);
    CHECK(t->aflags[g] & LP_ACT_GAP);
    CHECK_EQ_I(t->mid[0], 7);
    CHECK_STR(lp_trace_str(t, lp_trace_attr(t, t->mattr[0], "bytes")), "4096");
    CHECK_EQ_I(t->tmin, 0);
    CHECK_EQ_I(t->tmax, 110);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

static void test_gap_types(void)
{
    /* gap [10,20] ends at a send: unknown; [20,30] ends at a receive: waiting; [30,40]
     * ends at nothing: unknown; a receive inside a gap splits it */
    lp_diags ds;
    lp_trace *t = load_text("A a 0 10 processing\n"
                            "A a 40 50 processing\n"
                            "M a 20 b 25\n"
                            "M b 26 a 30\n",
                            &ds);
    CHECK(t && ds.nerrors == 0);
    if (!t)
        return;
    uint32_t a = lp_trace_find_worker(t, "a");
    uint64_t i = t->wfirst[a];
    CHECK_EQ_I(t->wfirst[a + 1] - i, 5);
    CHECK_EQ_I(t->astart[i + 1], 10);
    CHECK_EQ_I(t->aend[i + 1], 20);
    CHECK_EQ_I(t->atype[i + 1], LP_TYPE_UNKNOWN);
    CHECK_EQ_I(t->aend[i + 2], 30);
    CHECK_EQ_I(t->atype[i + 2], LP_TYPE_WAITING);
    CHECK_EQ_I(t->aend[i + 3], 40);
    CHECK_EQ_I(t->atype[i + 3], LP_TYPE_UNKNOWN);
    /* b has no activities: its timeline is [25, 26], one unknown gap */
    uint32_t b = lp_trace_find_worker(t, "b");
    CHECK_EQ_I(t->wfirst[b + 1] - t->wfirst[b], 1);
    CHECK_EQ_I(t->atype[t->wfirst[b]], LP_TYPE_UNKNOWN);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

static void test_halves_and_multicast(void)
{
    lp_diags ds;
    lp_trace *t = load_text("S a 10 b m1 size=3\n"
                            "R b 15 a m1 queue=q\n"
                            "S a 20 c 9\n"
                            "R c 30 a 9\n"
                            "R c 31 a 9\n"
                            "R b 40 a zz\n"
                            "S a 50 c nope\n"
                            "S a 60 c 9\n",
                            &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_I(t->nmsgs, 3); /* m1, and 9 delivered twice (multicast) */
    CHECK(has_diag(&ds, LP_RULE_UNMATCHED_RECV, 6));
    CHECK(has_diag(&ds, LP_RULE_UNMATCHED_SEND, 7));
    CHECK(has_diag(&ds, LP_RULE_DUP_SEND, 8));
    CHECK_EQ_I(ds.nerrors, 3);
    /* attributes of both halves are kept */
    CHECK_STR(lp_trace_str(t, lp_trace_attr(t, t->mattr[0], "size")), "3");
    CHECK_STR(lp_trace_str(t, lp_trace_attr(t, t->mattr[0], "queue")), "q");
    char idb[32];
    CHECK_STR(lp_trace_msgid(t, t->mid[0], idb, sizeof idb), "m1");
    CHECK(t->mflags[0] & LP_MSG_HALVES);
    CHECK_EQ_I(t->msend[1], 20);
    CHECK_EQ_I(t->msend[2], 20);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

static void test_rules(void)
{
    lp_diags ds;
    lp_trace *t = load_text("A a 10 5 processing\n"        /* 1 end < start */
                            "A a 0 10 processing\n"
                            "A a 5 20 processing\n"        /* 3 overlap */
                            "X a 1 2\n"                    /* 4 unknown record */
                            "A a 30 4x processing\n"       /* 5 non-numeric */
                            "A a 40\n"                     /* 6 missing field */
                            "M a 50 b 45\n"                /* 7 recv before send: warning */
                            "A a 60 70 processing op k\n"  /* 8 attribute without = */
                            "A a 99999999999999999999 1 processing\n", /* 9 overflow */
                            &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(has_diag(&ds, LP_RULE_END_BEFORE_START, 1));
    CHECK(has_diag(&ds, LP_RULE_OVERLAP, 3));
    CHECK(has_diag(&ds, LP_RULE_SYNTAX, 4));
    CHECK(has_diag(&ds, LP_RULE_FIELD, 5));
    CHECK(has_diag(&ds, LP_RULE_FIELD, 6));
    CHECK(has_diag(&ds, LP_RULE_RECV_BEFORE_SEND, 7));
    CHECK(has_diag(&ds, LP_RULE_FIELD, 8));
    CHECK(has_diag(&ds, LP_RULE_FIELD, 9));
    CHECK_EQ_I(ds.nerrors, 7);
    CHECK_EQ_I(ds.nwarnings, 1);
    CHECK_EQ_I(t->nskew, 1);
    CHECK(t->mflags[0] & LP_MSG_SKEW);
    CHECK_EQ_I(lp_trace_msg_weight(t, 0), 0);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

static void test_out_of_order(void)
{
    lp_diags ds;
    lp_trace *t = load_text("A b 0 5 processing\n"
                            "A a 20 30 processing\n"
                            "A b 5 6 io\n"
                            "A a 0 10 processing\n"   /* 4: out of order for a */
                            "A a 10 20 buffer\n",
                            &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(has_diag(&ds, LP_RULE_ORDER, 4));
    CHECK_EQ_I(ds.nerrors, 0);
    uint32_t a = lp_trace_find_worker(t, "a");
    uint64_t i = t->wfirst[a];
    CHECK_EQ_I(t->astart[i], 0);
    CHECK_EQ_I(t->astart[i + 1], 10);
    CHECK_EQ_I(t->atype[i + 1], LP_TYPE_BUFFER);
    CHECK_EQ_I(t->astart[i + 2], 20);
    CHECK_EQ_I(lp_trace_act_worker(t, i + 2), a);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

static void test_names_and_escapes(void)
{
    lp_diags ds;
    lp_trace *t = load_text("# a comment\n\n   \t\n"
                            "longpole-trace 1\n"
                            "W w%20one host=h1 rack=r%3D2\n"
                            "A\tw%20one\t0  10  my%25type  -  k=v=w\r\n"
                            "A w%20one 10 20 processing op%3Dx\n",
                            &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_I(ds.nerrors, 0);
    CHECK(lp_trace_find_worker(t, "w one") != LP_NONE32);
    CHECK(lp_trace_find_type(t, "my%type") != LP_NONE32);
    CHECK_STR(lp_trace_str(t, lp_trace_attr(t, t->wattr[0], "rack")), "r=2");
    CHECK_STR(lp_trace_str(t, lp_trace_attr(t, t->aattr[0], "k")), "v=w");
    CHECK_EQ_I(t->aop[0], LP_STR_NONE);
    CHECK_STR(lp_trace_str(t, t->aop[1]), "op=x");
    /* the writer escapes so the text reads back equal */
    char *txt = write_text(t);
    CHECK(txt != NULL);
    lp_diags ds2;
    lp_trace *t2 = txt ? load_text(txt, &ds2) : NULL;
    CHECK(t2 != NULL);
    if (t2) {
        char *txt2 = write_text(t2);
        CHECK(txt2 && strcmp(txt, txt2) == 0);
        free(txt2);
        lp_trace_free(t2);
        lp_diags_release(&ds2);
    }
    free(txt);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

static void test_bad_header_and_utf8(void)
{
    lp_diags ds;
    lp_trace *t = load_text("longpole-trace 2\nA \xff\xfe 0 1 processing\nA ok 0 1 processing\n", &ds);
    CHECK(t != NULL);
    CHECK(has_diag(&ds, LP_RULE_SYNTAX, 1));
    CHECK(has_diag(&ds, LP_RULE_ENCODING, 2));
    if (t)
        CHECK(lp_trace_find_worker(t, "ok") != LP_NONE32);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

static void test_worker_redeclared(void)
{
    lp_diags ds;
    lp_trace *t = load_text("W a x=1\nW a x=1\nW a x=2\n", &ds);
    CHECK(t != NULL);
    CHECK(has_diag(&ds, LP_RULE_WORKER_ATTR, 3));
    CHECK_EQ_I(ds.nwarnings, 1);
    if (t)
        CHECK_STR(lp_trace_str(t, lp_trace_attr(t, t->wattr[0], "x")), "1");
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* Every allocation failing in turn: the load must fail cleanly, never crash or leak. */
static void test_out_of_memory(void)
{
    int succeeded = 0;
    for (long n = 0; n < 400 && !succeeded; n++) {
        lp_diags ds;
        lp_alloc_fail_after(n);
        lp_trace *t = load_text(model_example, &ds);
        lp_alloc_fail_after(-1);
        if (t) {
            succeeded = 1;
            CHECK_EQ_I(t->nacts, 5);
            lp_trace_free(t);
        }
        lp_diags_release(&ds);
    }
    CHECK(succeeded);
}

int main(void)
{
    test_model_example();
    test_gap_types();
    test_halves_and_multicast();
    test_rules();
    test_out_of_order();
    test_names_and_escapes();
    test_bad_header_and_utf8();
    test_worker_redeclared();
    test_out_of_memory();
    return t_done("test_builder");
}
