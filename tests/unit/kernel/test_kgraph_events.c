/* test_kgraph_events.c: the execution graph built from kernel events, beyond Trace
 * Compass's scenarios: prev_state masked (2048 = preempted), the wake-up reason of every
 * interrupt context, spurious wake-ups, unmatched interrupt exits and events on unknown
 * CPUs counted, sched_waking preferred to sched_wakeup, forks, exec and statedump names,
 * matched packets that cannot become links (counted, never kept), thread lookup, the
 * lp_trace it feeds (and the model's critical path on it), context switches the trace
 * lost inferred from each event's own thread, identical graphs on one or
 * several threads, and random event streams (every graph valid and acyclic, every path
 * computed). */
#include "kscen.h"
#include "tutil.h"
#include "analysis/kernel/kgraph_int.h"

static lp_kgraph *build_opts(const lp_ktrace *kt, const lp_kmatch *m, unsigned threads, lp_diags *ds)
{
    lp_kgraph *g = NULL;
    lp_error err;
    lp_kgraph_opts o = {.threads = threads};
    lp_status st = lp_kgraph_build(kt, m, &o, ds, &g, &err);
    CHECK(st == LP_OK);
    if (st)
        fprintf(stderr, "build: %s\n", err.msg);
    else
        CHECK(lp_kgraph_validate(g, &err) == LP_OK);
    return g;
}

/* Block A (101) with prev_state 1, then wake it in the given context at t+1. */
static void block_and_wake(lp_ktrace *kt, uint32_t h, int64_t t, lp_kev_type entry, lp_kev_type exit, int64_t a)
{
    kt_switch(kt, h, t - 15, 0, "swapper/0", 0, 0, "a", 101);
    kt_switch(kt, h, t - 10, 0, "a", 101, 1, "swapper/0", 0);
    if (entry != LP_KEV_OTHER)
        kt_ev(kt, h, t, 0, entry, -1, 0, a, 0, 0, "dev", NULL);
    kt_wakeup(kt, h, t + 1, 0, "a", 101);
    if (exit != LP_KEV_OTHER)
        kt_ev(kt, h, t + 2, 0, exit, -1, 0, a, 0, 0, NULL, NULL);
}

static void states_and_reasons(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    uint32_t h = kt_host(&kt, "h", 2);
    kt_simple(&kt, h, 5, 1, LP_KEV_SOFTIRQ_EXIT, 3); /* its entry was before the trace */
    kt_switch(&kt, h, 10, 0, "swapper/0", 0, 0, "a", 101);
    kt_switch(&kt, h, 20, 0, "a", 101, 2048, "b", 102); /* preempted: 2048 masked */
    kt_switch(&kt, h, 30, 0, "b", 102, 1, "a", 101);
    kt_switch(&kt, h, 40, 0, "a", 101, 2049, "swapper/0", 0); /* blocked */
    kt_ev(&kt, h, 50, 0, LP_KEV_HRTIMER_ENTRY, -1, 0, 0, 0, 0, NULL, NULL);
    kt_wakeup(&kt, h, 51, 0, "a", 101);
    kt_ev(&kt, h, 52, 0, LP_KEV_HRTIMER_EXIT, -1, 0, 0, 0, 0, NULL, NULL);
    kt_ev(&kt, h, 55, 7, LP_KEV_SCHED_WAKEUP, 101, 0, 0, 0, 0, "a", NULL); /* CPU 7 of 2 */
    kt_switch(&kt, h, 60, 0, "swapper/0", 0, 0, "a", 101);
    kt_wakeup(&kt, h, 62, 1, "a", 101); /* a is running: spurious */
    kt_switch(&kt, h, 70, 0, "a", 101, 2, "swapper/0", 0);
    /* then one block per context: irq 0, block softirq, IPI, a device irq, a tasklet, the timer softirq */
    static const struct {
        lp_kev_type in, out;
        int64_t a;
    } ctx[] = {{LP_KEV_IRQ_ENTRY, LP_KEV_IRQ_EXIT, 0},         {LP_KEV_SOFTIRQ_ENTRY, LP_KEV_SOFTIRQ_EXIT, 4},
               {LP_KEV_IPI_ENTRY, LP_KEV_IPI_EXIT, 251},       {LP_KEV_IRQ_ENTRY, LP_KEV_IRQ_EXIT, 15},
               {LP_KEV_SOFTIRQ_ENTRY, LP_KEV_SOFTIRQ_EXIT, 6}, {LP_KEV_SOFTIRQ_ENTRY, LP_KEV_SOFTIRQ_EXIT, 1}};
    for (int i = 0; i < 6; i++)
        block_and_wake(&kt, h, 100 + 30 * i, ctx[i].in, ctx[i].out, ctx[i].a);
    kt_wakeup(&kt, h, 282, 1, "a", 101); /* a is already woken: spurious */
    /* a wakes b from task context */
    kt_switch(&kt, h, 285, 0, "swapper/0", 0, 0, "a", 101);
    kt_wakeup(&kt, h, 290, 0, "b", 102);
    kt_switch(&kt, h, 295, 0, "a", 101, 0, "b", 102);
    kt_switch(&kt, h, 300, 0, "b", 102, 1, "a", 101);
    lp_diags ds;
    lp_diags_init(&ds, 20);
    lp_kgraph *g = build_opts(&kt, NULL, 1, &ds);
    if (g) {
        /* at 85 a runs again with no wake-up seen since 70: blocked, reason unknown */
        CHECK_TIMELINE(g, "h/a-101", "10 R 20 P 30 R 40 B/timer 51 W 60 R 70 B/unknown 85 R 90 B/interrupted 101 W 115 R 120 "
                                     "B/block-device 131 W 145 R 150 B/ipi 161 W 175 R 180 B/irq 191 W 205 R 210 "
                                     "B/softirq 221 W 235 R 240 B/timer 251 W 285 R 290 R 295 P 300");
        CHECK_TIMELINE(g, "h/b-102", "20 R 30 B/thread 290 W 295 R 300");
        CHECK(kg_has_link(g, "h/a-101", 290, "h/b-102", 290, LP_KL_WAKEUP));
        CHECK_EQ_I(g->st.nspurious, 2);
        CHECK_EQ_I(g->st.nctx_mismatch, 1);
        CHECK_EQ_I(g->st.nbadcpu, 1);
        CHECK(ds.count[LP_RULE_IMPORT] >= 2);
        CHECK(kg_worker(g, "h/swapper/0-0") != LP_NONE32);
        /* b's path: b ran, then a's history back to 30 (its unknown, irq and tasklet
         * waits unexplained: nothing woke them from a thread), the wake-up, b again */
        uint32_t b = kg_worker(g, "h/b-102"), a = kg_worker(g, "h/a-101");
        lp_kcp cp;
        lp_error err;
        CHECK(lp_kcp_compute(g, b, LP_KCP_LIFETIME_START, LP_KCP_LIFETIME_END, LP_KCP_BOUNDED, &cp, &err) == LP_OK);
        CHECK(kcp_contiguous(&cp));
        CHECK_EQ_I(cp.nunexplained, 3);
        CHECK_EQ_I(cp.unexplained_ns, 15 + 11 + 11);
        int linked = 0;
        for (size_t i = 0; i < cp.n; i++)
            linked += cp.e[i].kind == LP_KCP_LINK && cp.e[i].from == a && cp.e[i].start == 290;
        CHECK_EQ_I(linked, 1);
        CHECK(cp.e[0].worker == b && cp.e[0].start == 20 && cp.e[1].worker == a && cp.e[1].start == 30);
        lp_kcp_release(&cp);
    }
    lp_kgraph_free(g);
    lp_diags_release(&ds);
    kt_release(&kt);
}

/* sched_waking is used when present (sched_wakeup then ignored), else sched_wakeup. */
static void waking_preferred(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    for (int with = 0; with < 2; with++) {
        uint32_t h = kt_host(&kt, with ? "new" : "old", 1);
        kt_switch(&kt, h, 10, 0, "swapper/0", 0, 0, "a", 101);
        kt_switch(&kt, h, 20, 0, "a", 101, 1, "swapper/0", 0);
        kt_ev(&kt, h, 29, 0, LP_KEV_HRTIMER_ENTRY, -1, 0, 0, 0, 0, NULL, NULL);
        if (with)
            kt_ev(&kt, h, 30, 0, LP_KEV_SCHED_WAKING, 101, 0, 0, 0, 0, "a", NULL);
        kt_ev(&kt, h, 31, 0, LP_KEV_HRTIMER_EXIT, -1, 0, 0, 0, 0, NULL, NULL);
        kt_wakeup(&kt, h, 32, 0, "a", 101); /* outside the timer: task context */
        kt_switch(&kt, h, 40, 0, "swapper/0", 0, 0, "a", 101);
    }
    lp_kgraph *g = build_opts(&kt, NULL, 2, NULL);
    if (g) {
        CHECK_TIMELINE(g, "new/a-101", "10 R 20 B/timer 30 W 40");
        CHECK_TIMELINE(g, "old/a-101", "10 R 20 B/thread 32 W 40");
        CHECK(kg_has_link(g, "old/swapper/0-0", 32, "old/a-101", 32, LP_KL_WAKEUP));
    }
    lp_kgraph_free(g);
    kt_release(&kt);
}

static void fork_exec_statedump(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    uint32_t h = kt_host(&kt, "h", 1);
    kt_ev(&kt, h, 1, 0, LP_KEV_STATEDUMP_PROCESS, 400, 400, 5, -1, 0, "sd", NULL);
    kt_switch(&kt, h, 10, 0, "swapper/0", 0, 0, "parent", 300);
    kt_ev(&kt, h, 20, 0, LP_KEV_PROCESS_FORK, 300, 301, 301, 0, 0, "parent", NULL);
    kt_ev(&kt, h, 21, 0, LP_KEV_SCHED_WAKEUP_NEW, 301, 0, 0, 0, 0, "parent", NULL);
    kt_wakeup(&kt, h, 25, 0, "sd", 400);
    kt_switch(&kt, h, 30, 0, "parent", 300, 0, "parent", 301);
    kt_ev(&kt, h, 35, 0, LP_KEV_PROCESS_EXEC, 301, 0, 0, 0, 0, "child", NULL);
    kt_ev(&kt, h, 38, 0, LP_KEV_PROCESS_EXIT, 301, 0, 0, 0, 0, NULL, NULL);
    kt_switch(&kt, h, 40, 0, "child", 301, 64, "sd", 400);
    kt_switch(&kt, h, 50, 0, "sd", 400, 1, "parent", 300);
    lp_kgraph *g = build_opts(&kt, NULL, 1, NULL);
    if (g) {
        CHECK_TIMELINE(g, "h/parent-300", "10 R 21 R 25 R 30 P 50");
        CHECK_TIMELINE(g, "h/child-301", "21 W 30 R 40");
        CHECK_TIMELINE(g, "h/sd-400", "25 W 40 R 50");
        CHECK(kg_has_link(g, "h/parent-300", 21, "h/child-301", 21, LP_KL_FORK));
        CHECK(kg_has_link(g, "h/parent-300", 25, "h/sd-400", 25, LP_KL_WAKEUP));
        uint32_t c = kg_worker(g, "h/child-301"), p = kg_worker(g, "h/parent-300");
        CHECK_PATH("child unbounded", g, c, LP_KCP_UNBOUNDED, XS(c, 21, 30, LP_KS_WAIT_CPU), XS(c, 30, 40, LP_KS_RUNNING));
        /* the parent's path over [21, 30] is its own running */
        const xel x[] = {XS(p, 21, 25, LP_KS_RUNNING), XS(p, 25, 30, LP_KS_RUNNING)};
        check_path("parent", g, p, 21, 30, LP_KCP_BOUNDED, x, 2);
    }
    lp_kgraph_free(g);
    kt_release(&kt);
}

/* Matched packets that cannot be links: an end without context, events that are not
 * a send and a receive, an event matched twice. */
static void bad_packets(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    uint32_t a = kt_host(&kt, "a", 1), b = kt_host(&kt, "b", 1);
    kt_switch(&kt, a, 10, 0, "swapper/0", 0, 0, "snd", 100);
    kt_ev(&kt, a, 20, 0, LP_KEV_IRQ_ENTRY, -1, 0, 9, 0, 0, "x", NULL);
    uint64_t s_irq = kt_ev(&kt, a, 21, 0, LP_KEV_NET_SEND, -1, 0, 1, 0, 1, NULL, NULL); /* sent in an irq: no sender */
    kt_ev(&kt, a, 22, 0, LP_KEV_IRQ_EXIT, -1, 0, 9, 0, 0, NULL, NULL);
    uint64_t s_ok = kt_ev(&kt, a, 30, 0, LP_KEV_NET_SEND, -1, 0, 2, 0, 2, NULL, NULL);
    kt_switch(&kt, b, 10, 0, "swapper/0", 0, 0, "rcv", 200);
    uint64_t r1 = kt_ev(&kt, b, 40, 0, LP_KEV_NET_RECV, -1, 0, 1, 0, 1, NULL, NULL);
    uint64_t r2 = kt_ev(&kt, b, 50, 0, LP_KEV_NET_RECV, -1, 0, 2, 0, 2, NULL, NULL);
    lp_kpacket pk[4] = {{a, b, s_irq, r1}, {a, b, s_ok, r2}, {a, b, 0, r2}, {a, b, s_ok, r1}};
    lp_kmatch m;
    memset(&m, 0, sizeof m);
    m.pk = pk;
    m.npk = 4;
    lp_diags ds;
    lp_diags_init(&ds, 20);
    lp_kgraph *g = build_opts(&kt, &m, 1, &ds);
    if (g) {
        CHECK_EQ_I(g->st.npk_noendpoint, 1);
        CHECK_EQ_I(g->st.npk_bad, 1);
        CHECK_EQ_I(g->st.npk_dup, 1);
        CHECK_EQ_I(g->st.npk_linked, 1);
        CHECK_EQ_I(g->st.nnoctx, 1);
        CHECK(kg_has_link(g, "a/snd-100", 30, "b/rcv-200", 50, LP_KL_NETWORK));
        CHECK(ds.count[LP_RULE_IMPORT] >= 2);
    }
    lp_kgraph_free(g);
    lp_diags_release(&ds);
    kt_release(&kt);
}

static void lookups(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    for (int i = 0; i < 2; i++) {
        uint32_t h = kt_host(&kt, i ? "h2" : "h1", 1);
        kt_switch(&kt, h, 10, 0, "swapper/0", 0, 0, "x", 100);
        kt_switch(&kt, h, 20, 0, "x", 100, 0, "y", 100 + i + 1);
    }
    lp_kgraph *g = build_opts(&kt, NULL, 0, NULL);
    if (g) {
        uint32_t w;
        lp_error err;
        CHECK(lp_kgraph_find_thread(g, "100", NULL, &w, &err) == LP_ERR_ARG);
        CHECK(strstr(err.msg, "ambiguous") && strstr(err.msg, "h1/x-100") && strstr(err.msg, "h2/x-100"));
        CHECK(lp_kgraph_find_thread(g, "100", "h2", &w, &err) == LP_OK);
        CHECK_STR(lp_kgraph_worker_name(g, w), "h2/x-100");
        CHECK(lp_kgraph_find_thread(g, "h1/x-100", NULL, &w, &err) == LP_OK && g->w[w].host == 0);
        CHECK(lp_kgraph_find_thread(g, "y", "h1", &w, &err) == LP_OK && g->w[w].tid == 101);
        CHECK(lp_kgraph_find_thread(g, "y", NULL, &w, &err) == LP_ERR_ARG);
        CHECK(lp_kgraph_find_thread(g, "nosuch", NULL, &w, &err) == LP_ERR_ARG && strstr(err.msg, "no thread"));
        CHECK(lp_kgraph_find_thread(g, "100", "h3", &w, &err) == LP_ERR_ARG);
    }
    lp_kgraph_free(g);
    kt_release(&kt);
}

/* The lp_trace it feeds: workers, states as activity types, links as messages; the
 * model's whole-trace critical path runs on it. */
static void model_trace(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    uint32_t s = kt_host(&kt, "server", 2), c = kt_host(&kt, "client", 1);
    server_events(&kt, s);
    client_events(&kt, c);
    lp_kmatch m;
    lp_kpacket pk[2];
    lp_kclock clk[2];
    match(&kt, c, s, &m, pk, clk);
    lp_kgraph *g = build_opts(&kt, &m, 0, NULL);
    lp_diags ds;
    lp_diags_init(&ds, 20);
    lp_trace *t = NULL;
    lp_error err;
    if (g && lp_kgraph_to_trace(g, &ds, &t, &err) == LP_OK) {
        CHECK_EQ_I(t->nworkers, 7);
        CHECK_EQ_I(t->nmsgs, 3);
        CHECK_EQ_I(ds.nerrors, 0);
        uint32_t cw = lp_trace_find_worker(t, "client/client-200");
        CHECK(cw != LP_NONE32);
        int waiting = 0, running = 0;
        for (uint64_t i = t->wfirst[cw]; i < t->wfirst[cw + 1]; i++) {
            const char *ty = lp_trace_type_name(t, t->atype[i]);
            if (t->astart[i] == 15) {
                CHECK_STR(ty, "waiting");
                CHECK_STR(lp_trace_str(t, lp_trace_attr(t, t->aattr[i], "reason")), "network");
                waiting++;
            }
            running += strcmp(ty, "running") == 0;
        }
        CHECK_EQ_I(waiting, 1);
        CHECK_EQ_I(running, 4);
        CHECK_STR(lp_trace_str(t, lp_trace_attr(t, t->wattr[cw], "tid")), "200");
        CHECK_STR(lp_trace_str(t, lp_trace_attr(t, t->wattr[cw], "host")), "client");
        lp_pag pg;
        CHECK(lp_pag_build(t, &pg, &err) == LP_OK);
        lp_cpath cp;
        CHECK(lp_cpath_compute(&pg, &cp, &err) == LP_OK);
        CHECK(cp.total > 0 && cp.end == 95);
        lp_cpath_release(&cp);
        lp_pag_release(&pg);
    } else {
        CHECK(0);
    }
    lp_trace_free(t);
    lp_diags_release(&ds);
    lp_kgraph_free(g);
    kt_release(&kt);
}

/* ---- random event streams ------------------------------------------------------------ */

/* An event naming its thread (ctx given by the tracer) marked as such. */
static void given(lp_ktrace *kt, uint32_t h, uint64_t i, int32_t tid)
{
    kt->host[h].ev[i].ctx_tid = tid;
    kt->host[h].ev[i].kfl |= LP_KEVF_CTX;
}

/* Switches the trace lost (tracefs recordings with no switch out of the idle task): the
 * event's own thread wins over the switches' state; the switch out of idle is inferred at
 * the CPU's previous event, one out of another thread at the event that proves it (that
 * thread then waits for an unknown reason); a switch whose prev_tid is not the CPU's
 * thread proves one too. Every one counted. */
static void lost_switches(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    uint32_t h = kt_host(&kt, "h", 1);
    kt_switch(&kt, h, 10, 0, "swapper/0", 0, 0, "a", 101);
    kt_switch(&kt, h, 20, 0, "a", 101, 1, "swapper/0", 0);
    given(&kt, h, kt_ev(&kt, h, 30, 0, LP_KEV_HRTIMER_ENTRY, -1, 0, 0, 0, 0, NULL, NULL), 0);
    given(&kt, h, kt_ev(&kt, h, 31, 0, LP_KEV_SCHED_WAKEUP, 101, 0, 0, 0, 0, "a", NULL), 0);
    given(&kt, h, kt_ev(&kt, h, 32, 0, LP_KEV_HRTIMER_EXIT, -1, 0, 0, 0, 0, NULL, NULL), 0);
    /* lost: swapper -> a at 32 or later; a wakes b from task context at 50 */
    given(&kt, h, kt_ev(&kt, h, 50, 0, LP_KEV_SCHED_WAKEUP, 102, 0, 0, 0, 0, "b", NULL), 101);
    kt_switch(&kt, h, 60, 0, "a", 101, 0, "b", 102);
    /* lost: b -> c; c's event at 70 proves it */
    given(&kt, h, kt_ev(&kt, h, 70, 0, LP_KEV_SOFTIRQ_RAISE, -1, 0, 3, 0, 0, NULL, NULL), 103);
    /* lost: c -> d; a switch out of d proves it */
    kt_switch(&kt, h, 80, 0, "d", 104, 1, "swapper/0", 0);
    kt_switch(&kt, h, 90, 0, "swapper/0", 0, 0, "b", 102); /* b's wait since 70: cause unknown */
    lp_diags ds;
    lp_diags_init(&ds, 20);
    lp_kgraph *g = build_opts(&kt, NULL, 1, &ds);
    if (g) {
        CHECK_EQ_I(g->st.nswitch_inferred, 3);
        CHECK_TIMELINE(g, "h/a-101", "10 R 20 B/timer 31 W 32 R 50 R 60");
        CHECK_TIMELINE(g, "h/b-102", "50 W 60 R 70 B/unknown 90");
        CHECK_TIMELINE(g, "h/d-104", "80 R 80"); /* c ran until the switch out of d proved otherwise */
        CHECK(kg_has_link(g, "h/a-101", 50, "h/b-102", 50, LP_KL_WAKEUP));
        CHECK_EQ_I(ds.nwarnings, 1); /* the first one, with its CPU and threads */
    }
    lp_kgraph_free(g);
    lp_diags_release(&ds);
    kt_release(&kt);
}

static void random_trace(lp_ktrace *kt, lp_kmatch *m, uint64_t *seed, int nhosts)
{
    kt_init(kt);
    static const lp_kev_type types[] = {
        LP_KEV_SCHED_SWITCH, LP_KEV_SCHED_SWITCH, LP_KEV_SCHED_SWITCH, LP_KEV_SCHED_WAKEUP, LP_KEV_SCHED_WAKEUP,
        LP_KEV_SCHED_WAKING, LP_KEV_SCHED_WAKEUP_NEW, LP_KEV_PROCESS_FORK, LP_KEV_PROCESS_EXIT, LP_KEV_PROCESS_EXEC,
        LP_KEV_STATEDUMP_PROCESS, LP_KEV_IRQ_ENTRY, LP_KEV_IRQ_EXIT, LP_KEV_SOFTIRQ_ENTRY, LP_KEV_SOFTIRQ_EXIT,
        LP_KEV_HRTIMER_ENTRY, LP_KEV_HRTIMER_EXIT, LP_KEV_IPI_ENTRY, LP_KEV_IPI_EXIT, LP_KEV_NET_SEND, LP_KEV_NET_RECV,
        LP_KEV_NET_SEND, LP_KEV_NET_RECV, LP_KEV_SOCK_ADDR, LP_KEV_IRQ_CTX_ENTRY, LP_KEV_IRQ_CTX_EXIT,
        LP_KEV_NET_RX_ENTRY, LP_KEV_NET_RX_EXIT, LP_KEV_OTHER};
    static const char *const comms[] = {"a", "b", "c", "d"};
    for (int h = 0; h < nhosts; h++) {
        char name[16];
        snprintf(name, sizeof name, "h%d", h);
        uint32_t ncpus = 1 + (uint32_t)(t_splitmix(seed) % 3);
        kt_host(kt, name, ncpus);
        int64_t t = (int64_t)(t_splitmix(seed) % 50);
        int n = 20 + (int)(t_splitmix(seed) % 120);
        for (int i = 0; i < n; i++) {
            t += (int64_t)(t_splitmix(seed) % 5);
            lp_kev_type ty = types[t_splitmix(seed) % (sizeof types / sizeof types[0])];
            uint32_t cpu = (uint32_t)(t_splitmix(seed) % (ncpus + (t_splitmix(seed) % 20 == 0)));
            int32_t tid = (int32_t)(t_splitmix(seed) % 7) - 1, tid2 = (int32_t)(t_splitmix(seed) % 7) - 1;
            int64_t a = (int64_t)(t_splitmix(seed) % 12) - 1;
            if (ty == LP_KEV_SCHED_SWITCH && t_splitmix(seed) % 4 == 0)
                a = 2048;
            kt_ev(kt, (uint32_t)h, t, cpu, ty, tid, tid2, a, (int64_t)(t_splitmix(seed) % 3) - 1,
                  t_splitmix(seed) % 4, comms[t_splitmix(seed) % 4], comms[t_splitmix(seed) % 4]);
            kt->host[h].ev[kt->host[h].nev - 1].ctx_tid = (int32_t)(t_splitmix(seed) % 8) - 2;
            if (ty == LP_KEV_NET_SEND || ty == LP_KEV_NET_RECV)
                kt->host[h].ev[kt->host[h].nev - 1].flags = t_splitmix(seed) % 3 ? 0 : LP_KNET_DEV;
        }
    }
    /* random packets: mostly real send -> receive pairs, some nonsense */
    memset(m, 0, sizeof *m);
    uint64_t npk = t_splitmix(seed) % 10;
    m->pk = calloc(npk + 1, sizeof *m->pk);
    m->clock = calloc((size_t)nhosts, sizeof *m->clock);
    for (uint64_t p = 0; p < npk; p++) {
        uint32_t sh = (uint32_t)(t_splitmix(seed) % (uint64_t)nhosts), rh = (uint32_t)(t_splitmix(seed) % (uint64_t)nhosts);
        m->pk[p] = (lp_kpacket){sh, rh, t_splitmix(seed) % (kt->host[sh].nev + 1), t_splitmix(seed) % (kt->host[rh].nev + 1)};
        if (t_splitmix(seed) % 4) { /* point at real sends and receives */
            for (uint64_t i = m->pk[p].sev; i < kt->host[sh].nev; i++)
                if (kt->host[sh].ev[i].type == LP_KEV_NET_SEND) {
                    m->pk[p].sev = i;
                    break;
                }
            for (uint64_t i = m->pk[p].rev; i < kt->host[rh].nev; i++)
                if (kt->host[rh].ev[i].type == LP_KEV_NET_RECV) {
                    m->pk[p].rev = i;
                    break;
                }
        }
    }
    m->npk = npk;
    for (int h = 0; h < nhosts; h++) {
        m->clock[h] = (lp_kclock){.slope = h ? 0.5 + (double)(t_splitmix(seed) % 100) / 66.0 : 1.0,
                                  .offset = h ? (double)(t_splitmix(seed) % 40) - 20.0 : 0.0, .accurate = 1};
        m->clock[h].r0 = (int64_t)m->clock[h].offset; /* lp_kclock_apply maps t0 = 0 to r0 */
    }
}

static void random_streams(void)
{
    int graphs = 0, links = 0;
    for (uint64_t round = 1; round <= 400; round++) {
        uint64_t seed = round * 104729;
        int nhosts = 1 + (int)(t_splitmix(&seed) % 3);
        lp_ktrace kt;
        lp_kmatch m;
        random_trace(&kt, &m, &seed, nhosts);
        lp_kgraph *g1 = build_opts(&kt, &m, 1, NULL), *g2 = build_opts(&kt, &m, 3, NULL);
        if (g1 && g2) {
            graphs++;
            links += g1->nlinks > 0;
            CHECK(kg_same(g1, g2));
            uint32_t at;
            CHECK(kgraph_has_cycle(g1, &at) == 0);
            for (uint32_t w = 0; w < g1->nworkers; w++)
                for (int algo = 0; algo < 2; algo++) {
                    lp_kcp cp;
                    lp_error err;
                    lp_status st = lp_kcp_compute(g1, w, LP_KCP_LIFETIME_START, LP_KCP_LIFETIME_END,
                                                  (lp_kcp_algo)algo, &cp, &err);
                    CHECK(st == LP_OK);
                    if (!st) {
                        CHECK(kcp_contiguous(&cp));
                        lp_kcp_release(&cp);
                    }
                }
            lp_trace *t = NULL;
            lp_diags ds;
            lp_diags_init(&ds, 5);
            lp_error err;
            CHECK(lp_kgraph_to_trace(g1, &ds, &t, &err) == LP_OK);
            lp_trace_free(t);
            lp_diags_release(&ds);
        }
        lp_kgraph_free(g1);
        lp_kgraph_free(g2);
        free(m.pk);
        free(m.clock);
        kt_release(&kt);
    }
    fprintf(stderr, "random streams: %d graphs, %d with links\n", graphs, links);
    CHECK(graphs == 400);
    CHECK(links > 100);
}

/* Building fails cleanly (no leak, no crash) when any allocation fails. */
static void allocation_failures(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    uint32_t s = kt_host(&kt, "server", 2), c = kt_host(&kt, "client", 1);
    server_events(&kt, s);
    client_events(&kt, c);
    lp_kmatch m;
    lp_kpacket pk[2];
    lp_kclock clk[2];
    match(&kt, c, s, &m, pk, clk);
    int failed = 0, ok = 0;
    for (long n = 0; n < 400; n++) {
        lp_kgraph *g = NULL;
        lp_error err;
        lp_kgraph_opts o = {.threads = 1};
        lp_alloc_fail_after(n);
        lp_status st = lp_kgraph_build(&kt, &m, &o, NULL, &g, &err);
        lp_kcp cp;
        if (!st && lp_kcp_compute(g, 0, LP_KCP_LIFETIME_START, LP_KCP_LIFETIME_END, LP_KCP_BOUNDED, &cp, &err) == 0)
            lp_kcp_release(&cp);
        lp_alloc_fail_after(-1);
        if (st) {
            failed++;
            CHECK(g == NULL && st == LP_ERR_NOMEM);
        } else {
            ok++;
            lp_kgraph_free(g);
        }
    }
    CHECK(failed > 20 && ok > 0);
    kt_release(&kt);
}

int main(void)
{
    states_and_reasons();
    waking_preferred();
    fork_exec_statedump();
    bad_packets();
    lookups();
    model_trace();
    lost_switches();
    random_streams();
    allocation_failures();
    return t_done("test_kgraph_events");
}
