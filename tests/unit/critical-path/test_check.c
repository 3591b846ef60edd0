/* test_check.c: SnailTrail App. A.2 Properties 1 and 2. */
#include "t.h"
#include "tutil.h"

static lp_check run(const char *txt)
{
    lp_diags ds;
    lp_trace *t = load_text(txt, &ds);
    lp_check c;
    memset(&c, 0, sizeof c);
    CHECK(t != NULL);
    if (t) {
        lp_pag g;
        lp_error err;
        CHECK(lp_pag_build(t, &g, &err) == LP_OK);
        CHECK(lp_check_run(&g, &c, &err) == LP_OK);
        lp_pag_release(&g);
        lp_trace_free(t);
    }
    lp_diags_release(&ds);
    return c;
}

int main(void)
{
    /* clean: MODEL.md example */
    lp_check c = run("A w1 0 40 processing\nM w1 40 w2 55\nA w1 40 100 serialization\n"
                     "A w2 0 30 processing\nA w2 55 110 processing\n");
    CHECK_EQ_I(c.np1, 0);
    CHECK_EQ_I(c.np2, 0);
    lp_check_release(&c);
    /* Property 1: w2 starts at 20 out of the blue */
    c = run("A w1 0 40 processing\nA w2 20 50 processing\n");
    CHECK_EQ_I(c.np1, 1);
    if (c.np1) {
        CHECK_EQ_I(c.p1[0].time, 20);
        CHECK_EQ_I(c.p1[0].worker, 1);
    }
    lp_check_release(&c);
    /* ... but not when a message starts it */
    c = run("A w1 0 40 processing\nM w1 10 w2 20\nA w2 20 50 processing\n");
    CHECK_EQ_I(c.np1, 0);
    lp_check_release(&c);
    /* Property 2: both workers wait in [40,50] with nothing in flight (the wake-up
     * messages are sent at 50 by a third worker only active later) */
    c = run("A a 0 40 processing\nA a 40 60 waiting\nA b 0 30 processing\nA b 30 60 waiting\n"
            "M a 60 b 60\nA a 60 70 processing\nA b 60 70 processing\n");
    CHECK_EQ_I(c.np2, 1);
    if (c.np2) {
        CHECK_EQ_I(c.p2[0].from, 40);
        CHECK_EQ_I(c.p2[0].to, 60);
        CHECK_EQ_I(c.p2[0].nactive, 2);
        CHECK_EQ_I(c.p2_ns, 20);
    }
    lp_check_release(&c);
    /* a message in flight during the wait: fine */
    c = run("A a 0 40 processing\nA b 0 30 processing\nM a 40 b 60\nA a 40 60 waiting\n"
            "A b 60 70 processing\nA a 60 70 processing\nM b 59 a 60\n");
    CHECK_EQ_I(c.np2, 0);
    lp_check_release(&c);
    return t_done("test_check");
}
