/* test_spancp.c: the span table's tree rules (span.c) and the span-tree critical path
 * and its aggregation (spancp.c): the scenarios of Jaeger UI's critical-path suite
 * rebuilt as fixtures with their expected sections, tie rules, the coverage invariant,
 * and differential tests against naive twins on random span trees (the walk) and on
 * random sets of traces (the percentile tables). */
#include "longpole/longpole.h"
#include "longpole/model/span.h"
#include "longpole/analysis/spans/spancp.h"
#include "t.h"

#include <math.h>
#include <stdint.h>

/* ---- building tables ---- */

static lp_diags DS;

static void sp_new(lp_spans *sp)
{
    lp_diags_init(&DS, 100);
    lp_spans_init(sp, &DS);
    lp_error err;
    lp_spans_source(sp, "t.json", &err);
}

static void sp_free(lp_spans *sp)
{
    lp_spans_release(sp);
    lp_diags_release(&DS);
}

/* add a span: ids are small numbers (0 = no parent); kind 0..5; flags extra */
static uint32_t add(lp_spans *sp, const char *trace, uint64_t id, uint64_t parent, int64_t start, int64_t dur, int kind,
                    unsigned flags, const char *svc, const char *op)
{
    lp_span_rec r;
    memset(&r, 0, sizeof r);
    lp_error err;
    lp_spans_trace(sp, trace, strlen(trace), &r.trace, &err);
    r.id = id;
    r.pid = parent;
    r.idtext = LP_STR_NONE;
    r.flags = (uint16_t)(flags | (parent ? LP_SPAN_HAS_PARENT : 0));
    r.start = start;
    r.dur = dur;
    r.kind = (uint8_t)kind;
    r.service = lp_spans_name(sp, svc, strlen(svc));
    r.op = lp_spans_name(sp, op, strlen(op));
    r.line = sp->n + 1;
    r.off = sp->n * 100;
    CHECK(lp_spans_add(sp, &r, &err) == LP_OK);
    return (uint32_t)sp->n - 1;
}

/* "id:start-end id:start-end ..." of the critical path of trace 0 (ids as given) */
static char *cp_string(lp_spans *sp, uint32_t t)
{
    lp_error err;
    lp_spancp cp;
    lp_spancp_init(&cp);
    static char buf[16384];
    buf[0] = '\0';
    if (lp_spancp_trace(&cp, sp, t, &err) == LP_OK) {
        size_t o = 0;
        int64_t sum = 0;
        for (size_t k = 0; k < cp.nsec; k++) {
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%llu:%lld-%lld", k ? " " : "",
                                  (unsigned long long)sp->id[cp.sec[k].span], (long long)cp.sec[k].start,
                                  (long long)cp.sec[k].end);
            sum += cp.sec[k].end - cp.sec[k].start;
            if (k)
                CHECK(cp.sec[k].start == cp.sec[k - 1].end);
            CHECK(cp.sec[k].start < cp.sec[k].end);
        }
        if (cp.root != LP_SPAN_NONE) {
            CHECK_EQ_I(sum, cp.latency);
            if (cp.nsec)
                CHECK(cp.sec[0].start == cp.start && cp.sec[cp.nsec - 1].end == cp.start + cp.latency);
        }
    }
    lp_spancp_release(&cp);
    return buf;
}

static void finish(lp_spans *sp)
{
    lp_error err;
    CHECK(lp_spans_finish(sp, &err) == LP_OK);
}

#define EXPECT_CP(sp, want)                                                                    \
    do {                                                                                       \
        finish(&sp);                                                                           \
        CHECK_STR(cp_string(&sp, 0), want);                                                    \
        sp_free(&sp);                                                                          \
    } while (0)

/* The scenarios of Jaeger UI's suite (packages/jaeger-ui/src/components/TracePage/
 * CriticalPath/testCases), with our own numbers. */
static void test_jaeger_ui_cases(void)
{
    lp_spans sp;
    /* two children, one after the other: the parent's gaps are its own */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 100, 2, 0, "s", "parent");
    add(&sp, "t", 3, 1, 55, 15, 0, 0, "s", "second");
    add(&sp, "t", 2, 1, 20, 25, 0, 0, "s", "first");
    EXPECT_CP(sp, "1:0-20 2:20-45 1:45-55 3:55-70 1:70-100");

    /* overlapping children: the last to finish wins, the other one is not on the path */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 100, 2, 0, "s", "parent");
    add(&sp, "t", 2, 1, 10, 40, 0, 0, "s", "a");
    add(&sp, "t", 3, 1, 25, 40, 0, 0, "s", "b");
    EXPECT_CP(sp, "1:0-25 3:25-65 1:65-100");

    /* a child that starts after its parent ended is dropped, with its own children */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 30, 2, 0, "s", "parent");
    add(&sp, "t", 2, 1, 40, 40, 0, 0, "s", "late");
    add(&sp, "t", 3, 2, 50, 10, 0, 0, "s", "later");
    EXPECT_CP(sp, "1:0-30");

    /* a child that ended before its parent started is dropped */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 10, 20, 2, 0, "s", "parent");
    add(&sp, "t", 2, 1, 0, 5, 0, 0, "s", "early");
    EXPECT_CP(sp, "1:10-30");

    /* a child longer than its parent on both sides is clipped to it */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 10, 20, 2, 0, "s", "parent");
    add(&sp, "t", 2, 1, 5, 30, 0, 0, "s", "wide");
    EXPECT_CP(sp, "2:10-30");

    /* overhanging at the end, and a grandchild clipped to the clipped child */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 30, 2, 0, "s", "a");
    add(&sp, "t", 2, 1, 15, 20, 0, 0, "s", "b");
    add(&sp, "t", 3, 2, 20, 20, 0, 0, "s", "c");
    EXPECT_CP(sp, "1:0-15 2:15-20 3:20-30");

    /* overhanging at the start: the grandchild starts before its parent */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 30, 2, 0, "s", "a");
    add(&sp, "t", 2, 1, 15, 20, 0, 0, "s", "b");
    add(&sp, "t", 3, 2, 10, 15, 0, 0, "s", "c");
    EXPECT_CP(sp, "1:0-15 3:15-25 2:25-30");

    /* FOLLOWS_FROM: not waited on */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 30, 2, 0, "s", "a");
    add(&sp, "t", 2, 1, 10, 10, 0, LP_SPAN_FOLLOWS, "s", "follows");
    EXPECT_CP(sp, "1:0-30");

    /* producer -> consumer: not waited on; a client under the producer is */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 40, LP_SPAN_PRODUCER, 0, "s", "send");
    add(&sp, "t", 2, 1, 5, 100, LP_SPAN_CONSUMER, 0, "s", "consume");
    add(&sp, "t", 3, 1, 10, 10, LP_SPAN_CLIENT, 0, "s", "call");
    EXPECT_CP(sp, "1:0-10 3:10-20 1:20-40");

    /* children that touch: with "at or before", the earlier one is on the path too
     * (Jaeger UI's strict "before" would give the parent 0-20) */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 40, 2, 0, "s", "p");
    add(&sp, "t", 2, 1, 10, 10, 0, 0, "s", "x");
    add(&sp, "t", 3, 1, 20, 10, 0, 0, "s", "y");
    EXPECT_CP(sp, "1:0-10 2:10-20 3:20-30 1:30-40");

    /* ties: equal ends, the one that started first is taken; then the smaller id,
     * whatever the input order */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 40, 2, 0, "s", "p");
    add(&sp, "t", 2, 1, 15, 15, 0, 0, "s", "late-start");
    add(&sp, "t", 3, 1, 10, 20, 0, 0, "s", "early-start");
    EXPECT_CP(sp, "1:0-10 3:10-30 1:30-40");
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 40, 2, 0, "s", "p");
    add(&sp, "t", 9, 1, 10, 20, 0, 0, "s", "twin-9");
    add(&sp, "t", 4, 1, 10, 20, 0, 0, "s", "twin-4");
    EXPECT_CP(sp, "1:0-10 4:10-30 1:30-40");

    /* zero-length spans: never a section, the walk goes on past them */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 40, 2, 0, "s", "p");
    add(&sp, "t", 2, 1, 10, 0, 0, 0, "s", "instant");
    add(&sp, "t", 3, 1, 20, 0, 0, 0, "s", "instant2");
    add(&sp, "t", 4, 1, 5, 3, 0, 0, "s", "x");
    EXPECT_CP(sp, "1:0-5 4:5-8 1:8-40");

    /* a zero-length root */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 7, 0, 2, 0, "s", "p");
    add(&sp, "t", 2, 1, 7, 0, 0, 0, "s", "c");
    EXPECT_CP(sp, "");
}

/* ---- rules of lp_spans_finish ---- */

static int has_msg(const char *frag)
{
    for (size_t i = 0; i < DS.nkept; i++)
        if (strstr(DS.kept[i].msg, frag))
            return 1;
    return 0;
}

static void test_finish_rules(void)
{
    lp_spans sp;
    /* duplicate span id: the later is dropped and reported at its position */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 10, 2, 0, "s", "a");
    add(&sp, "t", 2, 1, 1, 5, 0, 0, "s", "b");
    add(&sp, "t", 2, 1, 2, 5, 0, 0, "s", "b-again");
    finish(&sp);
    CHECK(sp.ndup == 1 && (sp.flags[2] & LP_SPAN_DROPPED) && !(sp.flags[1] & LP_SPAN_DROPPED));
    CHECK(has_msg("byte 200: duplicate span id 0000000000000002 in trace t (first at line 2); span dropped"));
    CHECK(DS.kept[0].line == 3);
    sp_free(&sp);

    /* a shared RPC span: the server half becomes the client's child; the id's children
     * hang under the server */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 100, LP_SPAN_SERVER, 0, "front", "get");
    add(&sp, "t", 2, 1, 10, 50, LP_SPAN_CLIENT, 0, "front", "call");
    add(&sp, "t", 2, 1, 15, 40, LP_SPAN_SERVER, LP_SPAN_SHARED, "back", "serve");
    add(&sp, "t", 3, 2, 20, 10, 0, 0, "back", "db");
    finish(&sp);
    CHECK(sp.nshared == 1 && sp.parent[2] == 1 && sp.parent[3] == 2 && sp.parent[1] == 0);
    CHECK(DS.nerrors == 0);
    CHECK_STR(cp_string(&sp, 0), "1:0-10 2:10-15 2:15-20 3:20-30 2:30-55 2:55-60 1:60-100");
    char b[64];
    CHECK_STR(lp_spans_idstr(&sp, 2, b, sizeof b), "0000000000000002:server");
    sp_free(&sp);

    /* Zipkin parts: merged; a name-only part goes to the part with the times */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 100, LP_SPAN_SERVER, LP_SPAN_PARTS, "front", "get");
    add(&sp, "t", 5, 1, 0, 0, 0, LP_SPAN_PARTS | LP_SPAN_NO_START | LP_SPAN_NO_DURATION, "back", "named-later");
    add(&sp, "t", 5, 1, 30, 20, LP_SPAN_SERVER, LP_SPAN_PARTS | LP_SPAN_SHARED, "back", "");
    add(&sp, "t", 5, 1, 25, 30, LP_SPAN_CLIENT, LP_SPAN_PARTS, "front", "call");
    finish(&sp);
    CHECK(sp.nmerged == 1 && sp.nshared == 1 && sp.ndup == 0);
    CHECK((sp.flags[1] & LP_SPAN_MERGED) && sp.parent[2] == 3 && sp.parent[3] == 0);
    CHECK_STR(lp_spans_str(&sp, sp.op[2]), "named-later");
    sp_free(&sp);

    /* orphans: a root of their own, reported; the true root is chosen */
    sp_new(&sp);
    add(&sp, "t", 7, 99, 0, 50, 0, 0, "s", "orphan");
    add(&sp, "t", 1, 0, 10, 100, 2, 0, "s", "root");
    finish(&sp);
    CHECK(sp.norphan == 1 && sp.root[0] == 1 && (sp.flags[0] & LP_SPAN_ORPHAN));
    CHECK(has_msg("its parent 0000000000000063 is not in trace t; the span is taken as a root"));
    sp_free(&sp);

    /* no root at all: the earliest orphan */
    sp_new(&sp);
    add(&sp, "t", 7, 99, 20, 50, 0, 0, "s", "o1");
    add(&sp, "t", 8, 98, 10, 50, 0, 0, "s", "o2");
    finish(&sp);
    CHECK(sp.root[0] == 1);
    sp_free(&sp);

    /* parent cycles: a self-parent, and a three-span loop */
    sp_new(&sp);
    add(&sp, "t", 1, 1, 0, 10, 0, 0, "s", "self");
    add(&sp, "u", 1, 3, 0, 30, 0, 0, "s", "a");
    add(&sp, "u", 2, 1, 5, 10, 0, 0, "s", "b");
    add(&sp, "u", 3, 2, 6, 5, 0, 0, "s", "c");
    finish(&sp);
    CHECK(sp.ncycle == 2 && sp.parent[0] == LP_SPAN_NONE);
    CHECK(has_msg("is its own parent"));
    CHECK(has_msg("parent cycle in trace u"));
    /* the loop is a tree again: one span lost its parent link */
    int roots = 0;
    for (uint32_t i = 1; i < 4; i++)
        roots += sp.parent[i] == LP_SPAN_NONE;
    CHECK_EQ_I(roots, 1);
    CHECK(sp.root[1] != LP_SPAN_NONE);
    char *s = cp_string(&sp, 1);
    CHECK(strlen(s) > 0);
    sp_free(&sp);

    /* missing times are taken from the children; a timeless leaf is dropped */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 0, 2, LP_SPAN_NO_START | LP_SPAN_NO_DURATION, "s", "root");
    add(&sp, "t", 2, 1, 10, 5, 0, 0, "s", "a");
    add(&sp, "t", 3, 1, 30, 0, 0, LP_SPAN_NO_DURATION, "s", "b");
    add(&sp, "t", 4, 3, 35, 10, 0, 0, "s", "bb");
    add(&sp, "t", 5, 1, 0, 0, 0, LP_SPAN_NO_START, "s", "timeless");
    finish(&sp);
    CHECK(sp.start[0] == 10 && sp.dur[0] == 35);
    CHECK(sp.start[2] == 30 && sp.dur[2] == 15);
    CHECK(sp.flags[4] & LP_SPAN_DROPPED);
    CHECK(has_msg("has no timestamp and no timed children; span dropped"));
    CHECK_STR(cp_string(&sp, 0), "2:10-15 1:15-30 3:30-35 4:35-45");
    sp_free(&sp);

    /* references resolve to their target, across traces too */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 10, 0, 0, "s", "a");
    add(&sp, "u", 1, 0, 20, 10, 0, 0, "s", "b");
    lp_error err;
    CHECK(lp_spans_add_ref(&sp, 0, 1, LP_REF_LINK, &err) == LP_OK);
    CHECK(lp_spans_add_ref(&sp, 0, 42, LP_REF_LINK, &err) == LP_OK);
    finish(&sp);
    CHECK(sp.refs[0].target == 0 && sp.refs[1].target == LP_SPAN_NONE);
    sp_free(&sp);

    /* hex ids and trace ids are normalised */
    sp_new(&sp);
    uint64_t v;
    lp_str txt;
    CHECK(lp_spans_id(&sp, "00Ab", 4, &v, &txt) == 0 && v == 0xab && txt == LP_STR_NONE);
    CHECK(lp_spans_id(&sp, "span-1", 6, &v, &txt) == 0 && txt != LP_STR_NONE);
    CHECK(lp_spans_id(&sp, "", 0, &v, &txt) == -1);
    uint32_t t1, t2;
    CHECK(lp_spans_trace(&sp, "00000000000000000abc", 20, &t1, &err) == LP_OK);
    CHECK(lp_spans_trace(&sp, "ABC", 3, &t2, &err) == LP_OK && t1 == t2);
    CHECK_STR(lp_spans_trace_text(&sp, t1), "00000000000000000abc");
    sp_free(&sp);
}

/* ---- the naive twin of the walk ------------------------------------------------------- */

typedef struct nspan {
    int64_t s, e;      /* clipped */
    int in;            /* in the walk's tree */
} nspan;

/* Straight from the definition: from (span, bound), the candidates are the span's
 * kept children not yet entered that end at or before the bound; take the one that
 * ends last; with none, the span's
 * own time down to its start, then back to the parent at the span's start. Ties:
 * earlier start, then smaller span id. */
static void naive(const lp_spans *sp, uint32_t t, char *out, size_t size)
{
    out[0] = '\0';
    uint32_t root = sp->root[t];
    if (root == LP_SPAN_NONE)
        return;
    size_t n = sp->n;
    nspan *x = calloc(n, sizeof *x);
    int *entered = calloc(n, sizeof *entered);
    /* clip top-down: repeat until nothing changes (parents before children) */
    x[root].in = 1;
    x[root].s = sp->start[root];
    x[root].e = lp_spans_end(sp, root);
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t p = sp->parent[i];
            if (x[i].in || p == LP_SPAN_NONE || !x[p].in || (sp->flags[i] & LP_SPAN_DROPPED))
                continue;
            if (!lp_spans_blocking(sp, (uint32_t)i, p))
                continue;
            int64_t s = sp->start[i], e = lp_spans_end(sp, (uint32_t)i);
            int keep = s >= x[p].s ? s < x[p].e : e > x[p].s;
            if (!keep)
                continue;
            x[i].in = 1;
            x[i].s = s > x[p].s ? s : x[p].s;
            x[i].e = e < x[p].e ? e : x[p].e;
            changed = 1;
        }
    }
    /* sections, backwards */
    typedef struct sec {
        uint32_t span;
        int64_t a, b;
    } sec;
    sec *v = calloc(2 * n + 2, sizeof *v);
    size_t nv = 0;
    uint32_t cur = root;
    int64_t bound = x[root].e;
    entered[root] = 1;
    for (;;) {
        uint32_t best = LP_SPAN_NONE;
        for (size_t i = 0; i < n; i++) {
            if (!x[i].in || sp->parent[i] != cur || entered[i] || x[i].e > bound)
                continue;
            if (best == LP_SPAN_NONE || x[i].e > x[best].e || (x[i].e == x[best].e && x[i].s < x[best].s) ||
                (x[i].e == x[best].e && x[i].s == x[best].s && sp->id[i] < sp->id[best]) ||
                (x[i].e == x[best].e && x[i].s == x[best].s && sp->id[i] == sp->id[best] && i < best))
                best = (uint32_t)i;
        }
        if (best != LP_SPAN_NONE) {
            if (x[best].e < bound)
                v[nv++] = (sec){cur, x[best].e, bound};
            entered[best] = 1;
            cur = best;
            bound = x[best].e;
            continue;
        }
        if (x[cur].s < bound)
            v[nv++] = (sec){cur, x[cur].s, bound};
        if (cur == root)
            break;
        bound = x[cur].s;
        cur = sp->parent[cur];
    }
    /* merge adjacent sections of one span, print in time order */
    size_t o = 0;
    int first = 1;
    for (size_t k = nv; k-- > 0;) {
        sec s = v[k];
        while (k > 0 && v[k - 1].span == s.span && v[k - 1].a == s.b) {
            s.b = v[k - 1].b;
            k--;
        }
        o += (size_t)snprintf(out + o, size - o, "%s%llu:%lld-%lld", first ? "" : " ",
                              (unsigned long long)sp->id[s.span], (long long)s.a, (long long)s.b);
        first = 0;
    }
    free(x);
    free(entered);
    free(v);
}

static uint64_t rs = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
static int64_t rr(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* A random trace: coarse times (many ties, touching and zero-length spans), skew,
 * async children, out-of-order input. A flat one has every span under one of the first
 * three (families of more than 64 children: the walk's merge sort on packed keys). */
static void random_trace_shape(lp_spans *sp, const char *trace, int n, int flat)
{
    int64_t *s = malloc(sizeof(int64_t) * (size_t)n), *e = malloc(sizeof(int64_t) * (size_t)n);
    int *par = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        if (i == 0) {
            par[i] = -1;
            s[i] = 0;
            e[i] = rr(0, 40);
        } else {
            par[i] = (int)rr(0, flat && i > 3 ? 2 : i - 1);
            int p = par[i];
            int64_t a = rr(s[p] - 3, e[p] + 2), b = a + rr(0, 12);
            if (rr(0, 3) == 0 && e[p] > s[p]) { /* well inside */
                a = rr(s[p], e[p]);
                b = rr(a, e[p]);
            }
            s[i] = a;
            e[i] = b;
        }
    }
    /* insert in a shuffled order */
    int *perm = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rr(0, i), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int k = 0; k < n; k++) {
        int i = perm[k];
        int kind = (int)rr(0, 5);
        unsigned fl = rr(0, 9) == 0 ? LP_SPAN_FOLLOWS : 0;
        char op[8];
        snprintf(op, sizeof op, "op%d", (int)rr(0, 3));
        add(sp, trace, (uint64_t)i + 1, par[i] >= 0 ? (uint64_t)par[i] + 1 : 0, s[i], e[i] - s[i], kind, fl,
            rr(0, 1) ? "svcA" : "svcB", op);
    }
    free(s);
    free(e);
    free(par);
    free(perm);
}

static void random_trace(lp_spans *sp, const char *trace, int n) { random_trace_shape(sp, trace, n, 0); }

static void test_differential_walk(void)
{
    char want[16384];
    int compared = 0;
    for (int iter = 0; iter < 3000; iter++) {
        lp_spans sp;
        sp_new(&sp);
        int ntr = (int)rr(1, 3);
        for (int t = 0; t < ntr; t++) {
            char name[16];
            snprintf(name, sizeof name, "tr%d", t);
            if (iter % 10 == 9)
                random_trace_shape(&sp, name, (int)rr(64, 400), 1);
            else
                random_trace(&sp, name, (int)rr(1, 25));
        }
        finish(&sp);
        for (uint32_t t = 0; t < sp.ntraces; t++) {
            naive(&sp, t, want, sizeof want);
            char *got = cp_string(&sp, t);
            t_checks++;
            if (strcmp(got, want) != 0) {
                t_failures++;
                fprintf(stderr, "walk mismatch (iteration %d, trace %u):\n  fast  %s\n  naive %s\n", iter, t, got, want);
            }
            compared++;
        }
        sp_free(&sp);
    }
    CHECK(compared > 5000);
}

/* ---- aggregation against a naive twin ---- */

typedef struct krow {
    char key[512];
    int64_t total, max;
    uint64_t traces;
} krow;

static krow *find_row(krow *rows, size_t *n, const char *key)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(rows[i].key, key) == 0)
            return &rows[i];
    memset(&rows[*n], 0, sizeof rows[*n]);
    snprintf(rows[*n].key, sizeof rows[*n].key, "%s", key);
    return &rows[(*n)++];
}

static void test_aggregation(void)
{
    for (int iter = 0; iter < 60; iter++) {
        lp_spans sp;
        sp_new(&sp);
        int ntr = (int)rr(1, 30);
        for (int t = 0; t < ntr; t++) {
            char name[16];
            snprintf(name, sizeof name, "tr%d", t);
            random_trace(&sp, name, (int)rr(1, 15));
        }
        finish(&sp);
        lp_error err;
        lp_spancp_agg *agg;
        CHECK(lp_spancp_agg_new(&agg, &sp, &err) == LP_OK);
        lp_spancp cp;
        lp_spancp_init(&cp);
        /* per trace: latency and the naive keyed sums */
        int64_t *lat = calloc(sp.ntraces, sizeof *lat);
        int *has = calloc(sp.ntraces, sizeof *has);
        for (uint32_t t = 0; t < sp.ntraces; t++) {
            CHECK(lp_spancp_trace(&cp, &sp, t, &err) == LP_OK);
            CHECK(lp_spancp_agg_add(agg, &cp, &err) == LP_OK);
            lat[t] = cp.latency;
            has[t] = cp.root != LP_SPAN_NONE;
        }
        double ps[] = {100, 50, 95, 1};
        lp_spancp_pct *pct;
        CHECK(lp_spancp_agg_percentiles(agg, ps, 4, &pct, &err) == LP_OK);
        /* naive: traces by (latency, index); for each percentile, recompute */
        uint32_t *ord = malloc(sp.ntraces * sizeof *ord);
        size_t nord = 0;
        for (uint32_t t = 0; t < sp.ntraces; t++)
            if (has[t])
                ord[nord++] = t;
        for (size_t i = 1; i < nord; i++)
            for (size_t j = i; j > 0 && (lat[ord[j]] < lat[ord[j - 1]] ||
                                         (lat[ord[j]] == lat[ord[j - 1]] && ord[j] < ord[j - 1]));
                 j--) {
                uint32_t x = ord[j];
                ord[j] = ord[j - 1];
                ord[j - 1] = x;
            }
        for (int q = 0; q < 4; q++) {
            size_t upto = (size_t)ceil((double)nord * ps[q] / 100.0 - 1e-9);
            if (nord && upto < 1)
                upto = 1;
            CHECK_EQ_I(pct[q].ntraces, upto);
            krow *ops = calloc(4096, sizeof *ops), *paths = calloc(4096, sizeof *paths);
            size_t nops = 0, npaths = 0;
            int64_t latsum = 0;
            for (size_t k = 0; k < upto; k++) {
                uint32_t t = ord[k];
                latsum += lat[t];
                CHECK(lp_spancp_trace(&cp, &sp, t, &err) == LP_OK);
                /* this trace's sums by key, from the sections */
                krow *tops = calloc(512, sizeof *tops), *tpaths = calloc(512, sizeof *tpaths);
                size_t ntops = 0, ntpaths = 0;
                for (size_t s = 0; s < cp.nsec; s++) {
                    uint32_t x = cp.sec[s].span;
                    char key[512], path[512] = "";
                    snprintf(key, sizeof key, "%s %s", lp_spans_str(&sp, sp.service[x]), lp_spans_str(&sp, sp.op[x]));
                    /* call path: walk up */
                    uint32_t chain[64];
                    int d = 0;
                    for (uint32_t y = x; y != LP_SPAN_NONE && d < 64; y = y == cp.root ? LP_SPAN_NONE : sp.parent[y])
                        chain[d++] = y;
                    size_t o = 0;
                    for (int z = d - 1; z >= 0; z--)
                        o += (size_t)snprintf(path + o, sizeof path - o, "%s[%s] %s", z == d - 1 ? "" : ";",
                                              lp_spans_str(&sp, sp.service[chain[z]]), lp_spans_str(&sp, sp.op[chain[z]]));
                    find_row(tops, &ntops, key)->total += cp.sec[s].end - cp.sec[s].start;
                    find_row(tpaths, &ntpaths, path)->total += cp.sec[s].end - cp.sec[s].start;
                }
                for (size_t i = 0; i < ntops; i++) {
                    krow *r = find_row(ops, &nops, tops[i].key);
                    r->total += tops[i].total;
                    r->max = tops[i].total > r->max ? tops[i].total : r->max;
                    r->traces++;
                }
                for (size_t i = 0; i < ntpaths; i++) {
                    krow *r = find_row(paths, &npaths, tpaths[i].key);
                    r->total += tpaths[i].total;
                    r->max = tpaths[i].total > r->max ? tpaths[i].total : r->max;
                    r->traces++;
                }
                free(tops);
                free(tpaths);
            }
            CHECK_EQ_I(pct[q].latency_sum, latsum);
            CHECK_EQ_I(pct[q].nops, nops);
            CHECK_EQ_I(pct[q].npaths, npaths);
            int64_t sumops = 0;
            for (size_t i = 0; i < pct[q].nops; i++) {
                const char *svc, *op;
                lp_spancp_op_names(agg, pct[q].ops[i].id, &svc, &op);
                char key[512];
                snprintf(key, sizeof key, "%s %s", svc, op);
                krow *r = find_row(ops, &nops, key);
                CHECK_EQ_I(pct[q].ops[i].total, r->total);
                CHECK_EQ_I(pct[q].ops[i].max, r->max);
                CHECK_EQ_I(pct[q].ops[i].traces, r->traces);
                if (i)
                    CHECK(pct[q].ops[i].total <= pct[q].ops[i - 1].total);
                sumops += pct[q].ops[i].total;
            }
            CHECK_EQ_I(sumops, latsum); /* exclusive times add up to the latencies */
            for (size_t i = 0; i < pct[q].npaths; i++) {
                char key[512];
                lp_spancp_path_format(agg, pct[q].paths[i].id, ";", key, sizeof key);
                krow *r = find_row(paths, &npaths, key);
                CHECK_EQ_I(pct[q].paths[i].total, r->total);
                CHECK_EQ_I(pct[q].paths[i].max, r->max);
                CHECK_EQ_I(pct[q].paths[i].traces, r->traces);
            }
            free(ops);
            free(paths);
        }
        lp_spancp_pct_free(pct, 4);
        free(ord);
        free(lat);
        free(has);
        lp_spancp_release(&cp);
        lp_spancp_agg_free(agg);
        sp_free(&sp);
    }
}

static void test_bad_args_and_nomem(void)
{
    lp_spans sp;
    sp_new(&sp);
    random_trace(&sp, "t", 12);
    finish(&sp);
    lp_error err;
    lp_spancp_agg *agg;
    CHECK(lp_spancp_agg_new(&agg, &sp, &err) == LP_OK);
    double bad = 0, bad2 = 101;
    lp_spancp_pct *pct;
    CHECK(lp_spancp_agg_percentiles(agg, &bad, 1, &pct, &err) == LP_ERR_ARG);
    CHECK(lp_spancp_agg_percentiles(agg, &bad2, 1, &pct, &err) == LP_ERR_ARG);
    lp_spancp_agg_free(agg);
    lp_spancp cp;
    lp_spancp_init(&cp);
    CHECK(lp_spancp_trace(&cp, &sp, 5, &err) == LP_ERR_ARG);
    lp_spancp_release(&cp);
    sp_free(&sp);
    /* allocation failures anywhere: an error, never a crash or a leak */
    for (long k = 0; k < 60; k++) {
        lp_spans s2;
        lp_diags d2;
        lp_diags_init(&d2, 4);
        lp_alloc_fail_after(k);
        lp_spans_init(&s2, &d2);
        lp_span_rec r;
        memset(&r, 0, sizeof r);
        r.idtext = LP_STR_NONE;
        int ok = 1;
        for (int i = 0; i < 5 && ok; i++) {
            ok = lp_spans_trace(&s2, "t", 1, &r.trace, &err) == LP_OK;
            r.id = (uint64_t)i + 1;
            r.pid = (uint64_t)i;
            r.flags = i ? LP_SPAN_HAS_PARENT : 0;
            r.start = i;
            r.dur = 10 - i;
            ok = ok && lp_spans_add(&s2, &r, &err) == LP_OK;
        }
        if (ok && lp_spans_finish(&s2, &err) == LP_OK) {
            lp_spancp c2;
            lp_spancp_init(&c2);
            lp_spancp_agg *a2;
            if (lp_spancp_trace(&c2, &s2, 0, &err) == LP_OK && lp_spancp_agg_new(&a2, &s2, &err) == LP_OK) {
                if (lp_spancp_agg_add(a2, &c2, &err) == LP_OK) {
                    double p = 50;
                    lp_spancp_pct *pp;
                    if (lp_spancp_agg_percentiles(a2, &p, 1, &pp, &err) == LP_OK)
                        lp_spancp_pct_free(pp, 1);
                }
                lp_spancp_agg_free(a2);
            }
            lp_spancp_release(&c2);
        }
        lp_alloc_fail_after(-1);
        lp_spans_release(&s2);
        lp_diags_release(&d2);
    }
}

/* What the walk did to the data is counted (docs/trust.md): the skew.json case of
 * Zipkin's test data (a server span that starts 65 ms before its client), a child that
 * falls outside its parent, an asynchronous child, children of a clipped child. */
static void test_adjustments(void)
{
    lp_spans sp;
    lp_error err;
    lp_spancp cp;
    lp_spancp_init(&cp);
    sp_new(&sp);
    add(&sp, "t", 1, 0, 100, 200, LP_SPAN_SERVER, 0, "a", "get");       /* root [100, 300] */
    add(&sp, "t", 2, 1, 40, 100, LP_SPAN_CLIENT, 0, "a", "post");       /* [40, 140]: 60 cut */
    add(&sp, "t", 3, 2, 30, 20, 0, 0, "b", "inner");                    /* [30, 50] in [100, 140]: outside */
    add(&sp, "t", 4, 2, 120, 40, 0, 0, "b", "tail");                    /* [120, 160] -> [120, 140]: 20 cut */
    add(&sp, "t", 5, 1, 310, 10, 0, 0, "a", "late");                    /* after the root: outside */
    add(&sp, "t", 6, 1, 150, 10, 0, LP_SPAN_FOLLOWS, "a", "async");     /* not waited on */
    finish(&sp);
    CHECK(lp_spancp_trace(&cp, &sp, 0, &err) == LP_OK);
    CHECK_EQ_I(cp.nclipped, 2);
    CHECK_EQ_I(cp.clipped_ns, 60 + 20);
    CHECK_EQ_I(cp.noutside, 2);
    CHECK_EQ_I(cp.nasync, 1);
    CHECK_EQ_I(cp.latency, 200);
    sp_free(&sp);
    /* nothing to adjust: all zero, and the counters restart per trace */
    sp_new(&sp);
    add(&sp, "t", 1, 0, 0, 100, 0, 0, "a", "get");
    add(&sp, "t", 2, 1, 10, 20, 0, 0, "a", "q");
    finish(&sp);
    CHECK(lp_spancp_trace(&cp, &sp, 0, &err) == LP_OK);
    CHECK(cp.nclipped == 0 && cp.clipped_ns == 0 && cp.noutside == 0 && cp.nasync == 0);
    sp_free(&sp);
    lp_spancp_release(&cp);
}

int main(void)
{
    test_adjustments();
    test_jaeger_ui_cases();
    test_finish_rules();
    test_differential_walk();
    test_aggregation();
    test_bad_args_and_nomem();
    return t_done("test_spancp");
}
