/* test_kcp_factory.c: the twelve execution graphs of Trace Compass's GraphFactory
 * (analysis.graph.core.tests/stubs/.../GraphFactory.java) with the bounded critical
 * paths TmfCriticalPathAlgoBoundedTest expects, and the unbounded ones GraphFactory
 * states for the six scenarios that have them, re-expressed as lp_kcp elements.
 *
 * Re-expression (docs/analyses/kernel-critical-path.md "Trace Compass's tests"): actor i
 * is worker i (tid i+1 on host "h"); RUNNING edges are running; BLOCKED edges are
 * blocked (reason thread when a wake-up ends them, network when a packet does, unknown
 * in WAKEUP_MISSING and for WAKEUP_SELF's timer-ended block, which must stay resolvable
 * for its timer link to be followed); vertical edges are links (network when Trace
 * Compass says NETWORK, timer for WAKEUP_SELF's, fork where GraphFactory says an actor
 * was created, wakeup otherwise). In Trace Compass's path graphs the zero-length
 * vertical edges that only splice the path onto another actor at the start of a
 * blocked interval are not graph links; here the element that follows simply has
 * another worker. Link qualifiers are not kept. */
#include "ktest.h"

enum { R = LP_KS_RUNNING };

typedef struct fx {
    lp_kgraph_builder *b;
    uint32_t w[4];
    lp_error err;
} fx;

static void fx_init(fx *f, int nactors)
{
    CHECK(lp_kgraph_builder_new(&f->b, &f->err) == LP_OK);
    uint32_t h;
    CHECK(lp_kgraph_builder_host(f->b, "h", &h, &f->err) == LP_OK);
    for (int i = 0; i < nactors; i++) {
        char comm[16];
        snprintf(comm, sizeof comm, "a%d", i);
        CHECK(lp_kgraph_builder_worker(f->b, h, i + 1, -1, comm, &f->w[i], &f->err) == LP_OK);
    }
}

/* Append a vertex to actor a at t, the edge into it in (st, rs). */
static uint32_t V(fx *f, int a, int64_t t, lp_kstate st, lp_kreason rs)
{
    uint32_t v = 0;
    if (lp_kgraph_builder_append(f->b, f->w[a], t, st, rs, &v, &f->err) != LP_OK) {
        fprintf(stderr, "append: %s\n", f->err.msg);
        CHECK(0);
    }
    return v;
}
#define VR(f, a, t) V((f), (a), (t), LP_KS_RUNNING, LP_KR_NONE)
#define V0(f, a, t) V((f), (a), (t), LP_KS_NONE, LP_KR_NONE)
#define VB(f, a, t, r) V((f), (a), (t), LP_KS_BLOCKED, (r))

static void L(fx *f, uint32_t from, uint32_t to, lp_klink k)
{
    if (lp_kgraph_builder_link(f->b, from, to, k, &f->err) != LP_OK) {
        fprintf(stderr, "link: %s\n", f->err.msg);
        CHECK(0);
    }
}

static lp_kgraph *fx_done(fx *f)
{
    lp_kgraph *g = NULL;
    CHECK(lp_kgraph_builder_finish(f->b, &g, &f->err) == LP_OK);
    if (g)
        CHECK(lp_kgraph_validate(g, &f->err) == LP_OK);
    return g;
}

static void basic(void)
{
    fx f;
    fx_init(&f, 1);
    V0(&f, 0, 0);
    VR(&f, 0, 1);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    CHECK_PATH("basic", g, 0, LP_KCP_BOUNDED, XS(0, 0, 1, R));
    CHECK_PATH("basic", g, 0, LP_KCP_UNBOUNDED, XS(0, 0, 1, R));
    lp_kgraph_free(g);
}

static void wakeup_self(void)
{
    fx f;
    fx_init(&f, 1);
    V0(&f, 0, 0);
    uint32_t start = VR(&f, 0, 1);
    VR(&f, 0, 2);
    uint32_t end = VB(&f, 0, 3, LP_KR_UNKNOWN);
    VR(&f, 0, 4);
    L(&f, start, end, LP_KL_TIMER);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    /* Trace Compass: 0 -R- 1 -R- 2 -TIMER- 3 -R- 4 (bounded); 0 -R- 1 -TIMER- 3 -R- 4 (unbounded) */
    CHECK_PATH("wakeup_self", g, 0, LP_KCP_BOUNDED, XS(0, 0, 1, R), XS(0, 1, 2, R), XLC(0, 0, 2, 3, LP_KL_TIMER),
               XS(0, 3, 4, R));
    CHECK_PATH("wakeup_self", g, 0, LP_KCP_UNBOUNDED, XS(0, 0, 1, R), XL(0, 0, 1, 3, LP_KL_TIMER), XS(0, 3, 4, R));
    lp_kgraph_free(g);
}

static void wakeup_missing(void)
{
    fx f;
    fx_init(&f, 1);
    V0(&f, 0, 0);
    VR(&f, 0, 2);
    VB(&f, 0, 4, LP_KR_UNKNOWN);
    VR(&f, 0, 6);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    /* the blocked edge stays: nothing woke the thread */
    CHECK_PATH("wakeup_missing", g, 0, LP_KCP_BOUNDED, XS(0, 0, 2, R), XU(0, 2, 4, LP_KR_UNKNOWN), XS(0, 4, 6, R));
    lp_kgraph_free(g);
}

static void wakeup_unknown(void)
{
    fx f;
    fx_init(&f, 2);
    V0(&f, 0, 0);
    VR(&f, 0, 2);
    uint32_t in = VB(&f, 0, 4, LP_KR_NETWORK);
    VR(&f, 0, 6);
    uint32_t net = V0(&f, 1, 3);
    L(&f, net, in, LP_KL_NETWORK);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    /* Trace Compass bounded: a1 UNKNOWN 2..3 then NETWORK to a0 at 4 */
    CHECK_PATH("wakeup_unknown", g, 0, LP_KCP_BOUNDED, XS(0, 0, 2, R), XG(1, 2, 3), XL(1, 0, 3, 4, LP_KL_NETWORK),
               XS(0, 4, 6, R));
    /* Trace Compass unbounded: a0 UNKNOWN 2..3 and the NETWORK edge drawn from a0 at 3;
     * here the link keeps its real source, a1 (the gap is on the thread, as expected) */
    CHECK_PATH("wakeup_unknown", g, 0, LP_KCP_UNBOUNDED, XS(0, 0, 2, R), XG(0, 2, 3), XL(1, 0, 3, 4, LP_KL_NETWORK),
               XS(0, 4, 6, R));
    lp_kgraph_free(g);
}

static void wakeup_new(void)
{
    fx f;
    fx_init(&f, 2);
    V0(&f, 0, 0);
    uint32_t src = VR(&f, 0, 2);
    VR(&f, 0, 4);
    uint32_t bend = VB(&f, 0, 6, LP_KR_THREAD);
    VR(&f, 0, 8);
    uint32_t dst = V0(&f, 1, 3);
    uint32_t wup = VR(&f, 1, 6);
    L(&f, src, dst, LP_KL_FORK);
    L(&f, wup, bend, LP_KL_WAKEUP);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    CHECK_PATH("wakeup_new", g, 0, LP_KCP_BOUNDED, XS(0, 0, 2, R), XS(0, 2, 4, R), XSC(1, 4, 6, R),
               XL(1, 0, 6, 6, LP_KL_WAKEUP), XS(0, 6, 8, R));
    CHECK_PATH("wakeup_new", g, 0, LP_KCP_UNBOUNDED, XS(0, 0, 2, R), XL(0, 1, 2, 3, LP_KL_FORK), XS(1, 3, 6, R),
               XL(1, 0, 6, 6, LP_KL_WAKEUP), XS(0, 6, 8, R));
    lp_kgraph_free(g);
}

static void opened_delay(void)
{
    fx f;
    fx_init(&f, 2);
    V0(&f, 0, 0);
    VR(&f, 0, 3);
    uint32_t v1 = VB(&f, 0, 6, LP_KR_THREAD);
    VR(&f, 0, 9);
    V0(&f, 1, 0);
    uint32_t v2 = VR(&f, 1, 2);
    VR(&f, 1, 5);
    L(&f, v2, v1, LP_KL_WAKEUP);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    /* the wake-up was sent at 2, before the block began at 3: clipped to [3, 6] */
    CHECK_PATH("opened_delay", g, 0, LP_KCP_BOUNDED, XS(0, 0, 3, R), XLC(1, 0, 3, 6, LP_KL_WAKEUP), XS(0, 6, 9, R));
    lp_kgraph_free(g);
}

static void opened(void)
{
    fx f;
    fx_init(&f, 2);
    V0(&f, 0, 0);
    VR(&f, 0, 3);
    uint32_t v1 = VB(&f, 0, 6, LP_KR_THREAD);
    VR(&f, 0, 9);
    V0(&f, 1, 0);
    uint32_t v2 = VR(&f, 1, 6);
    VR(&f, 1, 9);
    L(&f, v2, v1, LP_KL_WAKEUP);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    CHECK_PATH("opened", g, 0, LP_KCP_BOUNDED, XS(0, 0, 3, R), XSC(1, 3, 6, R), XL(1, 0, 6, 6, LP_KL_WAKEUP),
               XS(0, 6, 9, R));
    lp_kgraph_free(g);
}

static void wakeup_mutual(void)
{
    fx f;
    fx_init(&f, 2);
    V0(&f, 0, 0);
    VR(&f, 0, 1);
    uint32_t w0 = VR(&f, 0, 2);
    VR(&f, 0, 3);
    uint32_t u0 = VB(&f, 0, 4, LP_KR_THREAD);
    VR(&f, 0, 5);
    V0(&f, 1, 0);
    VR(&f, 1, 1);
    uint32_t u1 = VB(&f, 1, 2, LP_KR_THREAD);
    VR(&f, 1, 3);
    uint32_t w1 = VR(&f, 1, 4);
    VR(&f, 1, 5);
    L(&f, w0, u1, LP_KL_WAKEUP);
    L(&f, w1, u0, LP_KL_WAKEUP);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    CHECK_PATH("wakeup_mutual", g, 0, LP_KCP_BOUNDED, XS(0, 0, 1, R), XS(0, 1, 2, R), XS(0, 2, 3, R), XS(1, 3, 4, R),
               XL(1, 0, 4, 4, LP_KL_WAKEUP), XS(0, 4, 5, R));
    CHECK_PATH("wakeup_mutual", g, 0, LP_KCP_UNBOUNDED, XS(0, 0, 1, R), XS(0, 1, 2, R), XL(0, 1, 2, 2, LP_KL_WAKEUP),
               XS(1, 2, 3, R), XS(1, 3, 4, R), XL(1, 0, 4, 4, LP_KL_WAKEUP), XS(0, 4, 5, R));
    lp_kgraph_free(g);
}

/* WAKEUP_EMBEDDED and WAKEUP_INTERLEAVE: a0 forks two workers and is woken by each. */
static void wakeup_two(const char *name, int64_t a1in, int64_t a2in)
{
    fx f;
    fx_init(&f, 3);
    V0(&f, 0, 0);
    uint32_t fork1 = VR(&f, 0, 2);
    uint32_t fork2 = VR(&f, 0, 4);
    VR(&f, 0, 6);
    uint32_t un1 = VB(&f, 0, 8, LP_KR_THREAD);
    uint32_t un2 = VB(&f, 0, 10, LP_KR_THREAD);
    VR(&f, 0, 12);
    uint32_t in1 = V0(&f, 1, a1in);
    uint32_t out1 = VR(&f, 1, 8);
    uint32_t in2 = V0(&f, 2, a2in);
    uint32_t out2 = VR(&f, 2, 10);
    /* embedded: a0 forks a2 at 2 and a1 at 4; interleave: a1 at 2 and a2 at 4 */
    L(&f, a1in == 2 ? fork1 : fork2, in1, LP_KL_FORK);
    L(&f, a2in == 2 ? fork1 : fork2, in2, LP_KL_FORK);
    L(&f, out1, un1, LP_KL_WAKEUP);
    L(&f, out2, un2, LP_KL_WAKEUP);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    CHECK_PATH(name, g, 0, LP_KCP_BOUNDED, XS(0, 0, 2, R), XS(0, 2, 4, R), XS(0, 4, 6, R), XSC(1, 6, 8, R),
               XL(1, 0, 8, 8, LP_KL_WAKEUP), XSC(2, 8, 10, R), XL(2, 0, 10, 10, LP_KL_WAKEUP), XS(0, 10, 12, R));
    lp_kgraph_free(g);
}

static void nested(void)
{
    fx f;
    fx_init(&f, 4);
    V0(&f, 0, 0);
    uint32_t f0 = VR(&f, 0, 1);
    uint32_t r0 = VB(&f, 0, 6, LP_KR_THREAD);
    VR(&f, 0, 7);
    uint32_t in1 = V0(&f, 1, 1);
    uint32_t f1 = VR(&f, 1, 2);
    uint32_t r1 = VB(&f, 1, 5, LP_KR_THREAD);
    uint32_t e1 = VR(&f, 1, 6);
    uint32_t in2 = V0(&f, 2, 2);
    uint32_t f2 = VR(&f, 2, 3);
    uint32_t r2 = VB(&f, 2, 4, LP_KR_THREAD);
    uint32_t e2 = VR(&f, 2, 5);
    uint32_t in3 = V0(&f, 3, 3);
    uint32_t e3 = VR(&f, 3, 4);
    L(&f, f0, in1, LP_KL_FORK);
    L(&f, f1, in2, LP_KL_FORK);
    L(&f, f2, in3, LP_KL_FORK);
    L(&f, e3, r2, LP_KL_WAKEUP);
    L(&f, e2, r1, LP_KL_WAKEUP);
    L(&f, e1, r0, LP_KL_WAKEUP);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    /* bounded: each block explained within itself; the forks are reached as bounds */
    CHECK_PATH("nested", g, 0, LP_KCP_BOUNDED, XS(0, 0, 1, R), XS(1, 1, 2, R), XS(2, 2, 3, R), XS(3, 3, 4, R),
               XL(3, 2, 4, 4, LP_KL_WAKEUP), XS(2, 4, 5, R), XL(2, 1, 5, 5, LP_KL_WAKEUP), XS(1, 5, 6, R),
               XL(1, 0, 6, 6, LP_KL_WAKEUP), XS(0, 6, 7, R));
    /* unbounded: the same vertices and times (Trace Compass: the same graph); the walk
     * follows the forks back, so they are elements */
    CHECK_PATH("nested", g, 0, LP_KCP_UNBOUNDED, XS(0, 0, 1, R), XL(0, 1, 1, 1, LP_KL_FORK), XS(1, 1, 2, R),
               XL(1, 2, 2, 2, LP_KL_FORK), XS(2, 2, 3, R), XL(2, 3, 3, 3, LP_KL_FORK), XS(3, 3, 4, R),
               XL(3, 2, 4, 4, LP_KL_WAKEUP), XS(2, 4, 5, R), XL(2, 1, 5, 5, LP_KL_WAKEUP), XS(1, 5, 6, R),
               XL(1, 0, 6, 6, LP_KL_WAKEUP), XS(0, 6, 7, R));
    lp_kgraph_free(g);
}

static void net1(void)
{
    fx f;
    fx_init(&f, 4);
    V0(&f, 0, 0);
    VR(&f, 0, 1);
    uint32_t un = VB(&f, 0, 11, LP_KR_THREAD);
    VR(&f, 0, 12);
    V0(&f, 1, 3);
    uint32_t s1 = VR(&f, 1, 4);
    VR(&f, 1, 5);
    V0(&f, 2, 6);
    uint32_t r2 = VR(&f, 2, 7);
    uint32_t s2 = VR(&f, 2, 8);
    V0(&f, 3, 9);
    uint32_t r3 = VR(&f, 3, 10);
    uint32_t e3 = VR(&f, 3, 11);
    L(&f, s1, r2, LP_KL_NETWORK);
    L(&f, s2, r3, LP_KL_NETWORK);
    L(&f, e3, un, LP_KL_WAKEUP);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    /* no walk reaches the block's start: the last one tried (through both packets) is
     * taken, and a1's unexplained start is a gap */
    CHECK_PATH("net1", g, 0, LP_KCP_BOUNDED, XS(0, 0, 1, R), XG(1, 1, 3), XS(1, 3, 4, R),
               XL(1, 2, 4, 7, LP_KL_NETWORK), XS(2, 7, 8, R), XL(2, 3, 8, 10, LP_KL_NETWORK), XS(3, 10, 11, R),
               XL(3, 0, 11, 11, LP_KL_WAKEUP), XS(0, 11, 12, R));
    lp_kgraph_free(g);
}

/* A query interval inside the lifetime clips the path; one outside it is refused. */
static void intervals(void)
{
    fx f;
    fx_init(&f, 2);
    V0(&f, 0, 0);
    VR(&f, 0, 3);
    uint32_t v1 = VB(&f, 0, 6, LP_KR_THREAD);
    VR(&f, 0, 9);
    V0(&f, 1, 0);
    uint32_t v2 = VR(&f, 1, 6);
    VR(&f, 1, 9);
    L(&f, v2, v1, LP_KL_WAKEUP);
    lp_kgraph *g = fx_done(&f);
    if (!g)
        return;
    const xel x[] = {XSC(0, 2, 3, R), XSC(1, 3, 6, R), XL(1, 0, 6, 6, LP_KL_WAKEUP), XSC(0, 6, 7, R)};
    check_path("interval", g, 0, 2, 7, LP_KCP_BOUNDED, x, 4);
    const xel y[] = {XSC(1, 4, 5, R)};
    check_path("inside block", g, 0, 4, 5, LP_KCP_BOUNDED, y, 1);
    lp_kcp cp;
    lp_error err;
    CHECK(lp_kcp_compute(g, 0, 20, 30, LP_KCP_BOUNDED, &cp, &err) == LP_ERR_ARG);
    CHECK(lp_kcp_compute(g, 7, 0, 30, LP_KCP_BOUNDED, &cp, &err) == LP_ERR_ARG);
    /* the breakdown: on the path a1 ran 3 of 9 ns while a0 was blocked */
    CHECK(lp_kcp_compute(g, 0, LP_KCP_LIFETIME_START, LP_KCP_LIFETIME_END, LP_KCP_BOUNDED, &cp, &err) == LP_OK);
    lp_kcp_breakdown b;
    CHECK(lp_kcp_breakdown_compute(g, &cp, &b, &err) == LP_OK);
    CHECK_EQ_I(b.total, 9);
    int seen = 0;
    for (size_t i = 0; i < b.nthread; i++)
        if (b.by_thread[i].worker == 1) {
            CHECK_EQ_I(b.by_thread[i].path_ns, 3);
            seen++;
        } else if (b.by_thread[i].worker == 0) {
            CHECK_EQ_I(b.by_thread[i].path_ns, 6);
            CHECK_EQ_I(b.by_thread[i].own_ns, 9);
            seen++;
        }
    CHECK_EQ_I(seen, 2);
    char lb[32];
    for (size_t i = 0; i < b.nstate; i++) {
        const lp_kcp_row *r = &b.by_state[i];
        lp_kcp_row_label(r, lb, sizeof lb);
        if (strcmp(lb, "running") == 0) {
            CHECK_EQ_I(r->path_ns, 9);
            CHECK_EQ_I(r->own_ns, 6);
        } else if (strcmp(lb, "blocked/thread") == 0) {
            CHECK_EQ_I(r->path_ns, 0);
            CHECK_EQ_I(r->own_ns, 3);
        }
    }
    CHECK(b.nstate >= 3);
    lp_kcp_breakdown_release(&b);
    lp_kcp_release(&cp);
    lp_kgraph_free(g);
}

/* The hand builder refuses what the graph's invariants forbid. */
static void builder_rules(void)
{
    fx f;
    fx_init(&f, 2);
    uint32_t a = V0(&f, 0, 5), b = V0(&f, 1, 5);
    CHECK(lp_kgraph_builder_append(f.b, f.w[0], 4, LP_KS_RUNNING, LP_KR_NONE, NULL, &f.err) == LP_ERR_DATA);
    CHECK(lp_kgraph_builder_append(f.b, f.w[0], 6, LP_KS_RUNNING, LP_KR_TIMER, NULL, &f.err) == LP_ERR_DATA);
    CHECK(lp_kgraph_builder_append(f.b, f.w[0], 6, LP_KS_BLOCKED, LP_KR_NONE, NULL, &f.err) == LP_ERR_DATA);
    uint32_t c = VR(&f, 0, 7);
    CHECK(lp_kgraph_builder_link(f.b, c, b, LP_KL_WAKEUP, &f.err) == LP_ERR_DATA); /* back in time */
    L(&f, a, b, LP_KL_WAKEUP);
    CHECK(lp_kgraph_builder_link(f.b, a, c, LP_KL_WAKEUP, &f.err) == LP_ERR_DATA); /* second out-link */
    /* a zero-time cycle: b (a1@5) -> a1@5' ... -> a0@5 which precedes a */
    uint32_t d = VR(&f, 1, 5);
    lp_kgraph *g = NULL;
    CHECK(lp_kgraph_builder_finish(f.b, &g, &f.err) == LP_OK);
    lp_kgraph_free(g);
    fx_init(&f, 2);
    a = V0(&f, 0, 5);
    c = VR(&f, 0, 5);
    b = V0(&f, 1, 5);
    d = VR(&f, 1, 5);
    L(&f, c, b, LP_KL_WAKEUP);
    L(&f, d, a, LP_KL_WAKEUP);
    CHECK(lp_kgraph_builder_finish(f.b, &g, &f.err) == LP_ERR_DATA);
    CHECK(strstr(f.err.msg, "cycle") != NULL);
    CHECK(g == NULL);
}

int main(void)
{
    basic();
    wakeup_self();
    wakeup_missing();
    wakeup_unknown();
    wakeup_new();
    opened_delay();
    opened();
    wakeup_mutual();
    wakeup_two("wakeup_embedded", 4, 2);
    wakeup_two("wakeup_interleave", 2, 4);
    nested();
    net1();
    intervals();
    builder_rules();
    return t_done("test_kcp_factory");
}
