/* test_skew.c: clock-skew estimation (skew.h).
 *  - exact cases: symmetric delays give the offset exactly; of several RPCs the one
 *    with the smallest round trip is kept; a negative round trip is ignored; nested
 *    RPCs; offsets add up along the path to the reference; --reference; unconnected
 *    groups; hosts in no RPC;
 *  - generated corpora: every estimate is within the injected network jitter of the
 *    true offset (relative to the reference), whatever the number of threads. */
#include "t.h"
#include "longpole/gen/genreq.h"
#include "longpole/import/reqlog.h"
#include "longpole/analysis/mystery/skew.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static lp_reqlog *load_text(const char *text)
{
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_error err;
    lp_reqlog *rl = NULL;
    if (lp_reqlog_load_mem(text, strlen(text), "s.csv", &o, &ds, &rl, &err))
        fprintf(stderr, "load: %s\n", err.msg);
    CHECK_EQ_I(ds.nerrors, 0);
    lp_diags_release(&ds);
    return rl;
}

static uint32_t host(const lp_reqlog *rl, const char *name)
{
    for (uint32_t h = 0; h < rl->nhosts; h++)
        if (strcmp(lp_reqlog_str(rl, rl->host_name[h]), name) == 0)
            return h;
    return UINT32_MAX;
}

static void test_exact(void)
{
    /* true clocks: c = 0, s = +1000, t = -500. One-way delays: c<->s 100 each way,
     * s<->t 40 each way. Request 1: c calls s (s works 300), s calls t inside. Request 2:
     * the same with asymmetric delays (c->s 150, s->c 50) and a larger rtt: not kept.
     * Request 3: a log point far from the communication gives a negative rtt. */
    const char *text = "request,host,time,event,task\n"
                       /* r1 (true times 0, 100, 200, 240, 260, 300, 400, 500): c 0 send; s 1100
                        * recv; s 1200 call; t -260 serve; t -240 done; s 1300 back; s 1400 reply;
                        * c 500 got */
                       "r1,c,0,send,main\n"
                       "r1,s,1100,recv,main\n"
                       "r1,s,1200,call,main\n"
                       "r1,t,-260,serve,main\n"
                       "r1,t,-240,done,main\n"
                       "r1,s,1300,back,main\n"
                       "r1,s,1400,reply,main\n"
                       "r1,c,500,got,main\n"
                       /* r2: c 0 send; s (150 + 1000) 1150 recv; s 1250 reply; c 300 got: rtt 200 */
                       "r2,c,0,send,main\n"
                       "r2,s,1150,recv,main\n"
                       "r2,s,1250,reply,main\n"
                       "r2,c,300,got,main\n"
                       /* r3: negative round trip */
                       "r3,c,0,send,main\n"
                       "r3,s,1000,recv,main\n"
                       "r3,s,5000,reply,main\n"
                       "r3,c,10,got,main\n"
                       /* r4: an unconnected pair x <-> y (y = x + 7, delays 10), and host z alone */
                       "r4,x,0,a,other\n"
                       "r4,y,17,b,other\n"
                       "r4,y,27,c,other\n"
                       "r4,x,30,d,other\n"
                       "r4,z,1,a,lone\n"
                       "r4,z,2,b,lone\n";
    lp_reqlog *rl = load_text(text);
    CHECK(rl != NULL);
    if (!rl)
        return;
    lp_skew sk;
    lp_error err;
    lp_skew_opts so = {1, "c"};
    CHECK(lp_skew_estimate(rl, &so, &sk, &err) == LP_OK);
    uint32_t c = host(rl, "c"), s = host(rl, "s"), t = host(rl, "t"), x = host(rl, "x"), y = host(rl, "y"),
             z = host(rl, "z");
    CHECK_EQ_I(sk.offset[c], 0);
    CHECK_EQ_I(sk.parent[c], LP_SKEW_ROOT);
    CHECK_EQ_I(sk.offset[s], 1000);
    CHECK_EQ_I(sk.offset[t], -500);
    CHECK_EQ_I(sk.parent[t], s);
    CHECK_EQ_I(sk.bound[t], 100 + 40); /* half the round trips c-s (200) and s-t (80) */
    CHECK_EQ_I(sk.nnegative, 1);
    CHECK_EQ_I(sk.nrpc, 4); /* r1: c-s and s-t, r2: c-s, r4: x-y; r3 ignored */
    CHECK_EQ_I(sk.ncomponents, 2);
    CHECK_EQ_I(sk.offset[y] - sk.offset[x], 7);
    CHECK(sk.parent[x] == LP_SKEW_ROOT || sk.parent[y] == LP_SKEW_ROOT);
    CHECK_EQ_I(sk.parent[z], LP_SKEW_NONE);
    CHECK_EQ_I(sk.offset[z], 0);
    /* the c-s pair kept the minimum round trip (r1: 500 - 300 = 200 vs r2: 300 - 100 = 200:
     * equal; the smaller theta wins) and counts both */
    for (uint32_t i = 0; i < sk.npairs; i++)
        if ((sk.pairs[i].a == c && sk.pairs[i].b == s) || (sk.pairs[i].a == s && sk.pairs[i].b == c))
            CHECK_EQ_I(sk.pairs[i].n, 2);
    /* another reference: offsets shift, differences stay */
    lp_skew sk2;
    lp_skew_opts so2 = {1, "t"};
    CHECK(lp_skew_estimate(rl, &so2, &sk2, &err) == LP_OK);
    CHECK_EQ_I(sk2.offset[t], 0);
    CHECK_EQ_I(sk2.offset[c], 500);
    CHECK_EQ_I(sk2.offset[s], 1500);
    lp_skew_release(&sk2);
    lp_skew_opts so3 = {1, "nosuch"};
    CHECK(lp_skew_estimate(rl, &so3, &sk2, &err) == LP_ERR_ARG);
    /* correction */
    lp_skew_apply(&sk, rl);
    uint64_t r1 = lp_reqlog_find(rl, "r1");
    for (uint64_t i = rl->rfirst[r1]; i < rl->rfirst[r1 + 1]; i++)
        if (rl->rows[i].host == t)
            CHECK(rl->rows[i].time == 240 || rl->rows[i].time == 260);
    lp_skew_release(&sk);
    lp_reqlog_free(rl);
}

static void test_generated(void)
{
    char dir[] = "/tmp/lp-skew-XXXXXX";
    if (!mkdtemp(dir))
        return;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s/g", dir);
    lp_genreq g;
    lp_genreq_defaults(&g);
    g.requests = 12000;
    g.segments = 40;
    g.clients = 400;
    g.skew_ns = 80000000;
    g.jitter_ns = 100000;
    lp_genreq_out out;
    lp_error err;
    CHECK(lp_genreq_write(&g, prefix, &out, &err) == LP_OK);
    char p[128], q[128];
    snprintf(p, sizeof p, "%s.csv", prefix);
    snprintf(q, sizeof q, "%s.skew.csv", prefix);
    const char *paths[] = {p};
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_reqlog *rl = NULL;
    CHECK(lp_reqlog_load(paths, 1, &o, &ds, &rl, &err) == LP_OK);
    lp_diags_release(&ds);
    if (!rl)
        return;
    /* the true offsets */
    int64_t *truth = calloc(rl->nhosts, sizeof *truth);
    FILE *f = fopen(q, "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        char *comma = strchr(line, ',');
        if (!comma)
            continue;
        *comma = '\0';
        uint32_t h = host(rl, line);
        if (h != UINT32_MAX)
            truth[h] = strtoll(comma + 1, NULL, 10);
    }
    if (f)
        fclose(f);
    for (unsigned th = 1; th <= 2; th++) {
        lp_skew sk;
        lp_skew_opts so = {th, NULL};
        CHECK(lp_skew_estimate(rl, &so, &sk, &err) == LP_OK);
        CHECK_EQ_I(sk.ncomponents, 1);
        uint32_t root = UINT32_MAX;
        for (uint32_t h = 0; h < sk.nhosts; h++)
            if (sk.parent[h] == LP_SKEW_ROOT)
                root = h;
        int64_t worst = 0;
        int within = 1;
        for (uint32_t h = 0; h < sk.nhosts; h++) {
            int64_t e = sk.offset[h] - (truth[h] - truth[root]);
            if (e < 0)
                e = -e;
            if (e > worst)
                worst = e;
            /* timestamps are whole microseconds: allow their rounding too */
            within &= e <= g.jitter_ns + 2000;
            within &= e <= sk.bound[h] + 2000;
        }
        fprintf(stderr, "skew (%u thread%s): worst error %lld ns over %u hosts (jitter %lld ns)\n", th,
                th == 1 ? "" : "s", (long long)worst, sk.nhosts, (long long)g.jitter_ns);
        CHECK(within);
        lp_skew_release(&sk);
    }
    free(truth);
    lp_reqlog_free(rl);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
    test_exact();
    test_generated();
    return t_done("test_skew");
}
