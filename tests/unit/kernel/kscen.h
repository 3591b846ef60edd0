/* kscen.h: the four kernel scenarios of Trace Compass's DistributedCriticalPathTest
 * (testfiles/graph/, four .xml files) as normalised events, translated by hand (see
 * test_kgraph_xml.c for the translation and the expected answers); shared by the tests
 * that need a small real-looking multi-host graph. */
#ifndef LP_TEST_KSCEN_H
#define LP_TEST_KSCEN_H

#include "ktest.h"

/* simple_network_server.xml: the server blocks, is woken by packet 1 in a network
 * softirq on CPU 1, and sends packet 2. */
static inline void server_events(lp_ktrace *kt, uint32_t h)
{
    kt_switch(kt, h, 5, 1, "server", 100, 1, "other", 101);
    kt_ev(kt, h, 20, 1, LP_KEV_IRQ_ENTRY, -1, 0, 15, 0, 0, "eth0", NULL);
    kt_simple(kt, h, 22, 1, LP_KEV_SOFTIRQ_RAISE, 3);
    kt_ev(kt, h, 25, 1, LP_KEV_IRQ_EXIT, -1, 0, 15, 1, 0, NULL, NULL);
    kt_simple(kt, h, 30, 1, LP_KEV_SOFTIRQ_ENTRY, 3);
    kt_ev(kt, h, 33, 1, LP_KEV_NET_RECV, -1, 0, 1, 0, 1, NULL, NULL);
    kt_wakeup(kt, h, 35, 1, "server", 100);
    kt_simple(kt, h, 38, 1, LP_KEV_SOFTIRQ_EXIT, 3);
    kt_switch(kt, h, 40, 1, "other", 101, 0, "server", 100);
    kt_ev(kt, h, 45, 1, LP_KEV_NET_SEND, -1, 0, 2, 0, 2, NULL, NULL);
    kt_switch(kt, h, 55, 1, "server", 100, 1, "other", 101);
}

/* simple_network_client.xml: the client sends packet 1, blocks, is woken by packet 2 in
 * a network softirq on CPU 0, runs, and wakes depClient. */
static inline void client_events(lp_ktrace *kt, uint32_t h)
{
    kt_ev(kt, h, 5, 0, LP_KEV_OTHER, -1, 0, 5, 0, 0, "statedump_interrupt", NULL);
    kt_switch(kt, h, 7, 0, "depClient", 202, 1, "other", 201);
    kt_switch(kt, h, 10, 0, "other", 201, 0, "client", 200);
    kt_ev(kt, h, 13, 0, LP_KEV_NET_SEND, -1, 0, 1, 0, 1, NULL, NULL);
    kt_switch(kt, h, 15, 0, "client", 200, 1, "other", 201);
    kt_ev(kt, h, 50, 0, LP_KEV_IRQ_ENTRY, -1, 0, 5, 0, 0, "mywifi", NULL);
    kt_simple(kt, h, 52, 0, LP_KEV_SOFTIRQ_RAISE, 3);
    kt_ev(kt, h, 53, 0, LP_KEV_IRQ_EXIT, -1, 0, 5, 2, 0, NULL, NULL);
    kt_simple(kt, h, 60, 0, LP_KEV_SOFTIRQ_ENTRY, 3);
    kt_ev(kt, h, 65, 0, LP_KEV_NET_RECV, -1, 0, 2, 0, 2, NULL, NULL);
    kt_wakeup(kt, h, 70, 0, "client", 200);
    kt_simple(kt, h, 72, 0, LP_KEV_SOFTIRQ_EXIT, 3);
    kt_switch(kt, h, 75, 0, "other", 201, 0, "client", 200);
    kt_ev(kt, h, 80, 0, LP_KEV_SYSCALL_ENTRY, -1, 0, 0, 0, 0, "read", NULL);
    kt_ev(kt, h, 83, 0, LP_KEV_SYSCALL_EXIT, -1, 0, 10, 0, 0, "read", NULL);
    kt_wakeup(kt, h, 90, 0, "depClient", 202);
    kt_switch(kt, h, 95, 0, "client", 200, 0, "depClient", 202);
}

/* network_exchange_eth.xml: as the server above, with whole-interrupt and
 * packet-reception contexts around the handlers. */
static inline void eth_events(lp_ktrace *kt, uint32_t h)
{
    kt_switch(kt, h, 5, 1, "server", 100, 1, "other", 101);
    kt_simple(kt, h, 18, 1, LP_KEV_IRQ_CTX_ENTRY, -1);
    kt_ev(kt, h, 20, 1, LP_KEV_IRQ_ENTRY, -1, 0, 15, 0, 0, "eth0", NULL);
    kt_simple(kt, h, 22, 1, LP_KEV_SOFTIRQ_RAISE, 3);
    kt_ev(kt, h, 25, 1, LP_KEV_IRQ_EXIT, -1, 0, 15, 1, 0, NULL, NULL);
    kt_simple(kt, h, 30, 1, LP_KEV_SOFTIRQ_ENTRY, 3);
    kt_simple(kt, h, 31, 1, LP_KEV_NET_RX_ENTRY, -1);
    kt_ev(kt, h, 33, 1, LP_KEV_NET_RECV, -1, 0, 1, 0, 1, NULL, NULL);
    kt_wakeup(kt, h, 35, 1, "server", 100);
    kt_simple(kt, h, 36, 1, LP_KEV_NET_RX_EXIT, -1);
    kt_simple(kt, h, 38, 1, LP_KEV_SOFTIRQ_EXIT, 3);
    kt_simple(kt, h, 39, 1, LP_KEV_IRQ_CTX_EXIT, -1);
    kt_switch(kt, h, 40, 1, "other", 101, 0, "server", 100);
    kt_ev(kt, h, 45, 1, LP_KEV_NET_SEND, -1, 0, 2, 0, 2, NULL, NULL);
    kt_switch(kt, h, 55, 1, "server", 100, 1, "other", 101);
}

/* network_exchange_wifi.xml: the client's packet 2 is received by a threaded interrupt
 * handler (irq/30-handler, tid 50) in task context, which wakes the client. */
static inline void wifi_events(lp_ktrace *kt, uint32_t h)
{
    kt_ev(kt, h, 5, 0, LP_KEV_OTHER, -1, 0, 5, 0, 0, "statedump_interrupt", NULL);
    kt_switch(kt, h, 10, 0, "other", 201, 0, "client", 200);
    kt_ev(kt, h, 13, 0, LP_KEV_NET_SEND, -1, 0, 1, 0, 1, NULL, NULL);
    kt_switch(kt, h, 15, 0, "client", 200, 1, "other", 201);
    kt_simple(kt, h, 48, 0, LP_KEV_IRQ_CTX_ENTRY, -1);
    kt_ev(kt, h, 50, 0, LP_KEV_IRQ_ENTRY, -1, 0, 5, 0, 0, "mywifi", NULL);
    kt_ev(kt, h, 53, 0, LP_KEV_IRQ_EXIT, -1, 0, 5, 2, 0, NULL, NULL);
    kt_wakeup(kt, h, 55, 0, "irq/30-handler", 50);
    kt_simple(kt, h, 58, 0, LP_KEV_IRQ_CTX_EXIT, -1);
    kt_switch(kt, h, 60, 0, "other", 201, 0, "irq/30-handler", 50);
    kt_simple(kt, h, 62, 0, LP_KEV_NET_RX_ENTRY, -1);
    kt_ev(kt, h, 65, 0, LP_KEV_NET_RECV, -1, 0, 2, 0, 2, NULL, NULL);
    kt_wakeup(kt, h, 70, 0, "client", 200);
    kt_simple(kt, h, 72, 0, LP_KEV_NET_RX_EXIT, -1);
    kt_switch(kt, h, 75, 0, "irq/30-handler", 50, 1, "client", 200);
    kt_ev(kt, h, 80, 0, LP_KEV_SYSCALL_ENTRY, -1, 0, 0, 0, 0, "read", NULL);
}

/* Match packets 1 (sent by host a) and 2 (sent by host b) by message id, clocks the
 * identity (both traces share one clock). */
static inline void match(const lp_ktrace *kt, uint32_t a, uint32_t b, lp_kmatch *m, lp_kpacket pk[2], lp_kclock clk[2])
{
    memset(m, 0, sizeof *m);
    pk[0] = (lp_kpacket){a, b, kt_find(kt, a, LP_KEV_NET_SEND, 1), kt_find(kt, b, LP_KEV_NET_RECV, 1)};
    pk[1] = (lp_kpacket){b, a, kt_find(kt, b, LP_KEV_NET_SEND, 2), kt_find(kt, a, LP_KEV_NET_RECV, 2)};
    for (int i = 0; i < 2; i++)
        clk[i] = (lp_kclock){.slope = 1.0, .slope_lo = 1.0, .slope_hi = 1.0, .npackets = 2, .accurate = 1};
    m->pk = pk;
    m->npk = 2;
    m->clock = clk;
}

#endif
