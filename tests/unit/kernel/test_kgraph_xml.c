/* test_kgraph_xml.c: the four kernel scenarios of Trace Compass's
 * DistributedCriticalPathTest (lttng2.kernel.core.tests testfiles/graph/
 * simple_network_server.xml, simple_network_client.xml, network_exchange_eth.xml,
 * network_exchange_wifi.xml), their events translated by hand into the normalised
 * events the readers produce, the packets matched by message id as the test's trace
 * stub matches them. Expected: the execution graph (every worker's timeline and the
 * links) and the client's critical path, as the test states them.
 *
 * Translation: sched_switch, sched_wakeup, irq_handler_*, softirq_* map one to one;
 * packet_sent / packet_received (the stub's network events, msgid) are NET_SEND /
 * NET_RECV with key = seq = msgid; do_IRQ_entry/return (Trace Compass's "complete IRQ"
 * context) are IRQ_CTX_ENTRY/EXIT with no irq number; netif_receive_skb_internal
 * entry/return (the packet-reception context) are NET_RX_ENTRY/EXIT; statedump_interrupt
 * and the read syscalls are not used by the graph. Hosts are named after the traces.
 * Trace Compass's PREEMPTED covers two states here: preempted (switched out runnable)
 * and wait-cpu (woken, not yet running), written P and W below. */
#include "kscen.h"

enum { R = LP_KS_RUNNING, P = LP_KS_PREEMPTED, W = LP_KS_WAIT_CPU };

static lp_kgraph *build(const lp_ktrace *kt, const lp_kmatch *m, lp_diags *ds)
{
    lp_kgraph *g = NULL;
    lp_error err;
    lp_diags_init(ds, 50);
    lp_status st = lp_kgraph_build(kt, m, NULL, ds, &g, &err);
    CHECK(st == LP_OK);
    if (st) {
        fprintf(stderr, "build: %s\n", err.msg);
        return NULL;
    }
    CHECK(lp_kgraph_validate(g, &err) == LP_OK);
    return g;
}

static uint32_t thread(const lp_kgraph *g, const char *name, const char *host)
{
    uint32_t w = LP_NONE32;
    lp_error err;
    CHECK(lp_kgraph_find_thread(g, name, host, &w, &err) == LP_OK);
    return w;
}

/* testNetworkExchange: both softirq traces. */
static void network_exchange(void)
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
    lp_diags ds;
    lp_kgraph *g = build(&kt, &m, &ds);
    if (g) {
        CHECK_EQ_I(g->nworkers, 7);
        CHECK_TIMELINE(g, "server/other-101", "5 R 40 P 55");
        CHECK_TIMELINE(g, "server/server-100", "5 B/network 35 W 40 R 45 R 55");
        CHECK_TIMELINE(g, "server/kernel/1", "30 R 33");
        CHECK_TIMELINE(g, "client/other-201", "7 R 10 P 15 R 75");
        CHECK_TIMELINE(g, "client/client-200", "10 R 13 R 15 B/network 70 W 75 R 90 R 95");
        CHECK_TIMELINE(g, "client/kernel/0", "60 R 65");
        CHECK_TIMELINE(g, "client/depClient-202", "7 B/thread 90 W 95");
        CHECK_EQ_I(g->nlinks, 3);
        CHECK(kg_has_link(g, "client/client-200", 13, "server/server-100", 35, LP_KL_NETWORK));
        CHECK(kg_has_link(g, "server/server-100", 45, "client/client-200", 70, LP_KL_NETWORK));
        CHECK(kg_has_link(g, "client/client-200", 90, "client/depClient-202", 90, LP_KL_WAKEUP));
        CHECK_EQ_I(g->st.npk_linked, 2);
        CHECK_EQ_I(g->npk, 0);
        uint32_t cw = thread(g, "200", NULL), sw = kg_worker(g, "server/server-100");
        CHECK_PATH("client", g, cw, LP_KCP_BOUNDED, XS(cw, 10, 13, R), XS(cw, 13, 15, R),
                   XLC(cw, sw, 15, 35, LP_KL_NETWORK), XS(sw, 35, 40, W), XS(sw, 40, 45, R),
                   XL(sw, cw, 45, 70, LP_KL_NETWORK), XS(cw, 70, 75, W), XS(cw, 75, 90, R), XS(cw, 90, 95, R));
    }
    lp_kgraph_free(g);
    lp_diags_release(&ds);
    kt_release(&kt);
}

/* testNetworkExchangeOneTraceSoftirq: the client's trace alone; its packet 2 comes from a
 * host not traced, and depClient's path runs through the client. */
static void one_trace_softirq(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    uint32_t c = kt_host(&kt, "client", 1);
    client_events(&kt, c);
    lp_diags ds;
    lp_kgraph *g = build(&kt, NULL, &ds);
    if (g) {
        CHECK_EQ_I(g->nworkers, 4);
        CHECK_TIMELINE(g, "client/other-201", "7 R 10 P 15 R 75");
        CHECK_TIMELINE(g, "client/client-200", "10 R 13 R 15 B/network 70 W 75 R 90 R 95");
        CHECK_TIMELINE(g, "client/kernel/0", "60 R 65");
        CHECK_TIMELINE(g, "client/depClient-202", "7 B/thread 90 W 95");
        CHECK_EQ_I(g->nlinks, 1);
        CHECK(kg_has_link(g, "client/client-200", 90, "client/depClient-202", 90, LP_KL_WAKEUP));
        /* the two packet events had no match: their keys are kept for the ECI */
        CHECK_EQ_I(g->npk, 2);
        CHECK_EQ_I(g->st.nunmatched_send, 1);
        CHECK_EQ_I(g->st.nunmatched_recv, 1);
        uint32_t cw = thread(g, "client", NULL), dw = thread(g, "client/depClient-202", NULL);
        CHECK_PATH("client alone", g, cw, LP_KCP_BOUNDED, XS(cw, 10, 13, R), XS(cw, 13, 15, R),
                   XU(cw, 15, 70, LP_KR_NETWORK), XS(cw, 70, 75, W), XS(cw, 75, 90, R), XS(cw, 90, 95, R));
        CHECK_PATH("depClient", g, dw, LP_KCP_BOUNDED, XG(cw, 7, 10), XS(cw, 10, 13, R), XS(cw, 13, 15, R),
                   XU(cw, 15, 70, LP_KR_NETWORK), XS(cw, 70, 75, W), XS(cw, 75, 90, R),
                   XL(cw, dw, 90, 90, LP_KL_WAKEUP), XS(dw, 90, 95, W));
    }
    lp_kgraph_free(g);
    lp_diags_release(&ds);
    kt_release(&kt);
}

/* testNetworkExchangeWithWifi: the eth server receives in a softirq inside a packet
 * reception context; the wifi client's packet is received by a threaded handler. */
static void exchange_wifi(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    uint32_t e = kt_host(&kt, "eth", 2), wf = kt_host(&kt, "wifi", 1);
    eth_events(&kt, e);
    wifi_events(&kt, wf);
    lp_kmatch m;
    lp_kpacket pk[2];
    lp_kclock clk[2];
    match(&kt, wf, e, &m, pk, clk);
    lp_diags ds;
    lp_kgraph *g = build(&kt, &m, &ds);
    if (g) {
        CHECK_EQ_I(g->nworkers, 6);
        CHECK_TIMELINE(g, "wifi/other-201", "10 P 15 R 60");
        CHECK_TIMELINE(g, "wifi/client-200", "10 R 13 R 15 B/network 70 W 75");
        CHECK_TIMELINE(g, "wifi/irq/30-handler-50", "55 W 60 R 65 R 75");
        CHECK_TIMELINE(g, "eth/other-101", "5 R 40 P 55");
        CHECK_TIMELINE(g, "eth/server-100", "5 B/network 35 W 40 R 45 R 55");
        CHECK_TIMELINE(g, "eth/kernel/1", "30 R 33");
        CHECK_EQ_I(g->nlinks, 2);
        CHECK(kg_has_link(g, "wifi/client-200", 13, "eth/server-100", 35, LP_KL_NETWORK));
        CHECK(kg_has_link(g, "eth/server-100", 45, "wifi/client-200", 70, LP_KL_NETWORK));
        uint32_t cw = thread(g, "client", "wifi"), sw = thread(g, "server", NULL);
        CHECK_PATH("wifi client", g, cw, LP_KCP_BOUNDED, XS(cw, 10, 13, R), XS(cw, 13, 15, R),
                   XLC(cw, sw, 15, 35, LP_KL_NETWORK), XS(sw, 35, 40, W), XS(sw, 40, 45, R),
                   XL(sw, cw, 45, 70, LP_KL_NETWORK), XS(cw, 70, 75, W));
    }
    lp_kgraph_free(g);
    lp_diags_release(&ds);
    kt_release(&kt);
}

/* testNetworkExchangeOneTrace: the wifi trace alone: the client stays blocked on the
 * network, flagged. */
static void one_trace_wifi(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    uint32_t wf = kt_host(&kt, "wifi", 1);
    wifi_events(&kt, wf);
    lp_diags ds;
    lp_kgraph *g = build(&kt, NULL, &ds);
    if (g) {
        CHECK_EQ_I(g->nworkers, 3);
        CHECK_TIMELINE(g, "wifi/other-201", "10 P 15 R 60");
        CHECK_TIMELINE(g, "wifi/client-200", "10 R 13 R 15 B/network 70 W 75");
        CHECK_TIMELINE(g, "wifi/irq/30-handler-50", "55 W 60 R 65 R 75");
        CHECK_EQ_I(g->nlinks, 0);
        uint32_t cw = thread(g, "client", NULL);
        CHECK_PATH("wifi alone", g, cw, LP_KCP_BOUNDED, XS(cw, 10, 13, R), XS(cw, 13, 15, R),
                   XU(cw, 15, 70, LP_KR_NETWORK), XS(cw, 70, 75, W));
        lp_kcp cp;
        lp_error err;
        CHECK(lp_kcp_compute(g, cw, LP_KCP_LIFETIME_START, LP_KCP_LIFETIME_END, LP_KCP_BOUNDED, &cp, &err) == LP_OK);
        CHECK_EQ_I(cp.nunexplained, 1);
        CHECK_EQ_I(cp.unexplained_ns, 55);
        lp_kcp_release(&cp);
    }
    lp_kgraph_free(g);
    lp_diags_release(&ds);
    kt_release(&kt);
}

/* The same exchange with the client's clock 1000 ns ahead: mapped back by the clock
 * map, the graph is the same; without the map (no_sync) the packets run backwards and
 * are dropped, counted and reported, never kept. */
static void skewed_clocks(void)
{
    lp_ktrace kt;
    kt_init(&kt);
    uint32_t e = kt_host(&kt, "eth", 2), wf = kt_host(&kt, "wifi", 1);
    eth_events(&kt, e);
    wifi_events(&kt, wf);
    for (uint64_t i = 0; i < kt.host[e].nev; i++)
        kt.host[e].ev[i].ts -= 1000;
    lp_kmatch m;
    lp_kpacket pk[2];
    lp_kclock clk[2];
    match(&kt, wf, e, &m, pk, clk);
    clk[e].offset = 1000;
    clk[e].r0 = 1000; /* lp_kclock_apply maps t0 = 0 to r0 */
    lp_diags ds;
    lp_kgraph *g = build(&kt, &m, &ds);
    if (g) {
        CHECK_TIMELINE(g, "eth/server-100", "5 B/network 35 W 40 R 45 R 55");
        CHECK_EQ_I(g->st.npk_linked, 2);
        CHECK(g->synced && g->clock_offset[e] == 1000);
    }
    lp_kgraph_free(g);
    lp_diags_release(&ds);
    lp_kgraph_opts o = {.no_sync = 1};
    lp_error err;
    lp_diags_init(&ds, 50);
    CHECK(lp_kgraph_build(&kt, &m, &o, &ds, &g, &err) == LP_OK);
    if (g) {
        CHECK_EQ_I(g->st.npk_skew, 1); /* packet 1 (wifi 13 -> eth -967) runs backwards; packet 2 is forward */
        CHECK_EQ_I(g->st.npk_linked, 1);
        CHECK(ds.count[LP_RULE_RECV_BEFORE_SEND] >= 1);
        CHECK(!g->synced);
    }
    lp_kgraph_free(g);
    lp_diags_release(&ds);
    kt_release(&kt);
}

int main(void)
{
    network_exchange();
    one_trace_softirq();
    exchange_wifi();
    one_trace_wifi();
    skewed_clocks();
    return t_done("test_kgraph_xml");
}
