/* test_kftrace.c: the ftrace text reader (src/import/kernel/ftrace.c) and the host
 * builder behind it (khost.c): the line variants (tracefs trace / trace_pipe with and
 * without the flags column and the tgid, trace-cmd report with its sched plugin and ns
 * stamps) give the same events; every field mapping; headers (#P, cpus=, the
 * recorder's hostname); lost events; bad lines and missing fields reported with their
 * line numbers and counted; out-of-order stamps counted and put in place (ties keep
 * file order); the per-CPU context; the socket table lookup. */
#include "longpole/import/kernel.h"
#include "import/kernel/kint.h"
#include "longpole/base/alloc.h"
#include "t.h"

#include <string.h>

static lp_diags DS;
static lp_ktrace *KT;

static const lp_khost *rd(const char *text)
{
    if (KT)
        lp_ktrace_free(KT);
    lp_diags_release(&DS);
    lp_diags_init(&DS, 100);
    lp_error err;
    KT = NULL;
    if (lp_ktrace_read_ftrace_mem(text, strlen(text), "t.ftrace", &DS, &KT, &err)) {
        fprintf(stderr, "read failed: %s\n", err.msg);
        return NULL;
    }
    return &KT->host[0];
}

static const char *S(lp_str s) { return s == LP_STR_NONE ? "(none)" : lp_strtab_get(&KT->strs, s); }

/* a kept diagnostic mentioning `what` on line `line` */
static int has_diag(uint64_t line, const char *what)
{
    for (size_t i = 0; i < DS.nkept; i++)
        if (DS.kept[i].line == line && strstr(DS.kept[i].msg, what))
            return 1;
    return 0;
}

/* The same four events in every line layout. */
static const char *const variants[] = {
    /* tracefs trace, irq-info (flags column) */
    "# tracer: nop\n#\n# entries-in-buffer/entries-written: 4/4   #P:4\n"
    "            bash-8409    [001] d..2.  1095.631493: sched_switch: prev_comm=bash prev_pid=8409 prev_prio=120 prev_state=R+ ==> next_comm=rcu_preempt next_pid=15 next_prio=120\n"
    "     rcu_preempt-15      [001] d..2.  1095.631503: sched_switch: prev_comm=rcu_preempt prev_pid=15 prev_prio=120 prev_state=I ==> next_comm=bash next_pid=8409 next_prio=120\n"
    "             cc1-8390    [003] d.h2.  1095.634441: sched_waking: comm=memfd:sealed-91 pid=21174 prio=120 target_cpu=002\n"
    " memfd:sealed-91-21174   [002] d..2.  1095.634492: sched_switch: prev_comm=memfd:sealed-91 prev_pid=21174 prev_prio=120 prev_state=S ==> next_comm=cc1 next_pid=8390 next_prio=120\n",
    /* trace_pipe without irq-info */
    "            bash-8409    [001]  1095.631493: sched_switch: prev_comm=bash prev_pid=8409 prev_prio=120 prev_state=R+ ==> next_comm=rcu_preempt next_pid=15 next_prio=120\n"
    "     rcu_preempt-15      [001]  1095.631503: sched_switch: prev_comm=rcu_preempt prev_pid=15 prev_prio=120 prev_state=I ==> next_comm=bash next_pid=8409 next_prio=120\n"
    "             cc1-8390    [003]  1095.634441: sched_waking: comm=memfd:sealed-91 pid=21174 prio=120 target_cpu=002\n"
    " memfd:sealed-91-21174   [002]  1095.634492: sched_switch: prev_comm=memfd:sealed-91 prev_pid=21174 prev_prio=120 prev_state=S ==> next_comm=cc1 next_pid=8390 next_prio=120\n",
    /* record-tgid, with flags */
    "            bash-8409    (   8409) [001] d..2.  1095.631493: sched_switch: prev_comm=bash prev_pid=8409 prev_prio=120 prev_state=R+ ==> next_comm=rcu_preempt next_pid=15 next_prio=120\n"
    "     rcu_preempt-15      (-------) [001] d..2.  1095.631503: sched_switch: prev_comm=rcu_preempt prev_pid=15 prev_prio=120 prev_state=I ==> next_comm=bash next_pid=8409 next_prio=120\n"
    "             cc1-8390    (   8380) [003] d.h2.  1095.634441: sched_waking: comm=memfd:sealed-91 pid=21174 prio=120 target_cpu=002\n"
    " memfd:sealed-91-21174   (  21170) [002] d..2.  1095.634492: sched_switch: prev_comm=memfd:sealed-91 prev_pid=21174 prev_prio=120 prev_state=S ==> next_comm=cc1 next_pid=8390 next_prio=120\n",
    /* trace-cmd report: sched plugin layout, ns stamps (-t), padded event names */
    "cpus=4\n"
    "            bash-8409  [001]  1095.631493000: sched_switch:         bash:8409 [120] R+ ==> rcu_preempt:15 [120]\n"
    "     rcu_preempt-15    [001]  1095.631503000: sched_switch:         rcu_preempt:15 [120] I ==> bash:8409 [120]\n"
    "             cc1-8390  [003]  1095.634441000: sched_waking:         memfd:sealed-91:21174 [120] CPU:002\n"
    " memfd:sealed-91-21174 [002]  1095.634492000: sched_switch:         memfd:sealed-91:21174 [120] S ==> cc1:8390 [120]\n",
};

static void test_variants(void)
{
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        const lp_khost *h = rd(variants[v]);
        CHECK(h != NULL);
        if (!h)
            continue;
        CHECK_EQ_I(h->nev, 4);
        CHECK_EQ_I(h->nbad, 0);
        CHECK_EQ_I(h->ncpus, 4);
        if (h->nev != 4)
            continue;
        const lp_kev *e = h->ev;
        CHECK_EQ_I(e[0].ts, 1095631493000LL);
        CHECK_EQ_I(e[0].type, LP_KEV_SCHED_SWITCH);
        CHECK_EQ_I(e[0].cpu, 1);
        CHECK_EQ_I(e[0].tid, 8409);
        CHECK_EQ_I(e[0].tid2, 15);
        CHECK_EQ_I(e[0].a, LP_KSTATE_PREEMPTED);
        CHECK_EQ_I(e[0].a & 3, 0);
        CHECK_STR(S(e[0].name), "rcu_preempt");
        CHECK_STR(S(e[0].name2), "bash");
        CHECK_EQ_I(e[0].ctx_tid, 8409);
        CHECK_EQ_I(e[1].a, LP_KSTATE_UNINTERRUPTIBLE | LP_KSTATE_NOLOAD); /* I: blocked */
        CHECK_EQ_I(e[2].type, LP_KEV_SCHED_WAKING);
        CHECK_EQ_I(e[2].tid, 21174);
        CHECK_EQ_I(e[2].a, 2);
        CHECK_STR(S(e[2].name), "memfd:sealed-91");
        CHECK_EQ_I(e[2].ctx_tid, 8390);
        CHECK_EQ_I(e[3].tid, 21174); /* comm with '-' and ':' */
        CHECK_EQ_I(e[3].ctx_tid, 21174);
        CHECK_EQ_I(e[3].a, LP_KSTATE_INTERRUPTIBLE);
        CHECK_STR(S(e[3].name2), "memfd:sealed-91");
    }
}

static void test_fields(void)
{
    const char *t =
        "# longpole-kernel: hostname=box1 clock=mono root_pid=7\n"
        "  Web Content-1234  [000] .....  10.000001: sched_switch: prev_comm=Web Content prev_pid=1234 prev_prio=120 prev_state=D|K ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
        "            bash-15717   [000] .....  10.000002: sched_process_fork: comm=bash pid=15717 child_comm=bash child_pid=15726\n"
        "         timeout-15724   [001] .....  10.000003: sched_process_exec: filename=/usr/bin/timeout pid=15724 old_pid=15724\n"
        "   longpole.base-15728   [001] .....  10.000004: sched_process_exit: comm=longpole.base pid=15728 prio=120 group_dead=true\n"
        "             cc1-15642   [001] d.h..  10.000005: irq_handler_entry: irq=36 name=virtio1-req.0\n"
        "             cc1-15642   [001] d.h..  10.000006: irq_handler_exit: irq=36 ret=handled\n"
        "             cc1-8390    [001] d.h..  10.000007: softirq_raise: vec=9 [action=RCU]\n"
        "   longpole.base-15728   [001] d.h..  10.000008: hrtimer_expire_entry: hrtimer=000000005c34ed6c function=tick_nohz_handler now=1927456006886\n"
        "    kworker/1:1H-54      [001] .....  10.000009: block_rq_issue: 254,0 DS 4096 () 351352712 + 8 be,0,4 [kworker/1:1H]\n"
        "             cc1-15642   [001] ..s..  10.000010: block_rq_complete: 254,0 DS () 351352712 + 8 be,0,4 [0]\n"
        "            curl-15745   [000] b....  10.000011: net_dev_queue: dev=lo skbaddr=00000000d66068f0 len=74\n"
        "            curl-15745   [000] ..s1.  10.000012: netif_receive_skb: dev=lo skbaddr=00000000d66068f0 len=60\n"
        "          <idle>-0       [000] d.h1.  10.000013: reschedule_entry: vector=253\n"
        "            bash-15717   [000] .....  10.000014: sys_enter_read: fd: 0x00000003, buf: 0x7ffd, count: 0x00000080\n"
        "            bash-15717   [000] .....  10.000015: sys_exit_read: 0x5\n"
        "            bash-15717   [000] .....  10.000016: mm_page_alloc: page=0000000012 pfn=0x1 order=0\n"
        "            bash-15717   [000] d..2.  10.000017: sched_wakeup_new: comm=bash pid=15726 prio=120 target_cpu=000\n";
    const lp_khost *h = rd(t);
    CHECK(h != NULL);
    if (!h)
        return;
    CHECK_EQ_I(h->nev, 17);
    CHECK_EQ_I(h->nbad, 0);
    CHECK_STR(S(h->name), "box1");
    if (h->nev != 17)
        return;
    const lp_kev *e = h->ev;
    CHECK_EQ_I(e[0].tid, 1234);
    CHECK_EQ_I(e[0].ctx_tid, 1234);
    CHECK_STR(S(e[0].name2), "Web Content");
    CHECK_EQ_I(e[0].a, LP_KSTATE_UNINTERRUPTIBLE | LP_KSTATE_WAKEKILL);
    CHECK_EQ_I(e[1].type, LP_KEV_PROCESS_FORK);
    CHECK_EQ_I(e[1].tid, 15717);
    CHECK_EQ_I(e[1].tid2, 15726);
    CHECK_EQ_I(e[1].a, -1); /* ftrace does not say the child's process */
    CHECK_STR(S(e[1].name), "bash");
    CHECK_EQ_I(e[2].type, LP_KEV_PROCESS_EXEC);
    CHECK_EQ_I(e[2].tid, 15724);
    CHECK_STR(S(e[2].name), "timeout");
    CHECK_EQ_I(e[3].type, LP_KEV_PROCESS_EXIT);
    CHECK_EQ_I(e[3].tid, 15728);
    CHECK_EQ_I(e[4].type, LP_KEV_IRQ_ENTRY);
    CHECK_EQ_I(e[4].a, 36);
    CHECK_STR(S(e[4].name), "virtio1-req.0");
    CHECK_EQ_I(e[5].type, LP_KEV_IRQ_EXIT);
    CHECK_EQ_I(e[5].b, 1);
    CHECK_EQ_I(e[6].type, LP_KEV_SOFTIRQ_RAISE);
    CHECK_EQ_I(e[6].a, 9);
    CHECK_EQ_I(e[7].type, LP_KEV_HRTIMER_ENTRY);
    CHECK(e[7].key == 0x5c34ed6cULL);
    CHECK_EQ_I(e[8].type, LP_KEV_BLOCK_ISSUE);
    CHECK_EQ_I(e[8].a, (254LL << 20) | 0);
    CHECK_EQ_I(e[8].b, 351352712);
    CHECK_EQ_I(e[8].flags, 8);
    CHECK_EQ_I(e[9].type, LP_KEV_BLOCK_COMPLETE);
    CHECK_EQ_I(e[9].b, 351352712);
    CHECK_EQ_I(e[10].type, LP_KEV_NET_SEND);
    CHECK(e[10].flags == LP_KNET_DEV);
    CHECK(e[10].key == 0xd66068f0ULL);
    CHECK_EQ_I(e[10].a, 74);
    CHECK_EQ_I(e[11].type, LP_KEV_NET_RECV);
    CHECK(e[11].key == e[10].key);
    CHECK_EQ_I(e[12].type, LP_KEV_IPI_ENTRY);
    CHECK_EQ_I(e[12].a, 253);
    CHECK_EQ_I(e[12].ctx_tid, 0);
    CHECK_EQ_I(e[13].type, LP_KEV_SYSCALL_ENTRY);
    CHECK_STR(S(e[13].name), "read");
    CHECK_EQ_I(e[14].type, LP_KEV_SYSCALL_EXIT);
    CHECK_EQ_I(e[14].a, 5);
    CHECK_EQ_I(e[15].type, LP_KEV_OTHER);
    CHECK_STR(S(e[15].name), "mm_page_alloc");
    CHECK_EQ_I(h->nother, 1);
    CHECK_EQ_I(e[16].type, LP_KEV_SCHED_WAKEUP_NEW);
    CHECK_EQ_I(e[16].tid, 15726);
    CHECK_EQ_I(e[16].a, 0);
}

static void test_bad_lines(void)
{
    const char *t = "cpus=2\n"                                                                      /* 1 */
                    "            bash-1  [000]  1.000001: sched_switch: prev_comm=bash prev_pid=1\n" /* 2: no next_pid */
                    "garbage line\n"                                                                 /* 3 */
                    "            bash-1  [000]  xx: sched_waking: comm=a pid=2\n"                    /* 4: bad ts */
                    "            bash  [000]  1.000002: sched_waking: comm=a pid=2\n"                /* 5: no pid */
                    "CPU:1 [LOST 42 EVENTS]\n"                                                       /* 6 */
                    "            bash-1  [001]  1.000003: sched_waking: comm=a pid=zz\n"             /* 7: unreadable */
                    "            bash-1  [001]  1.000004: sched_switch: prev_comm=a prev_pid=1 prev_state=Q ==> next_comm=b next_pid=2\n" /* 8: bad state */
                    "            bash-1  [001]  1.000005:\n"                                         /* 9: no event */
                    "            bash-1  [001]  1.000006: block_rq_issue: what\n"                    /* 10 */
                    "            bash-1  [001]  1.000007: sched_waking: comm=a pid=3 target_cpu=001\n"; /* 11: fine */
    const lp_khost *h = rd(t);
    CHECK(h != NULL);
    if (!h)
        return;
    CHECK_EQ_I(h->nev, 1);
    CHECK_EQ_I(h->nbad, 8);
    CHECK_EQ_I(h->nlost, 42);
    CHECK_EQ_I(h->ncpus, 2);
    CHECK(has_diag(2, "no field 'next_pid'"));
    CHECK(has_diag(3, "no [CPU]"));
    CHECK(has_diag(4, "timestamp"));
    CHECK(has_diag(5, "COMM-PID"));
    CHECK(has_diag(6, "lost 42 events"));
    CHECK(has_diag(7, "unreadable field 'pid'"));
    CHECK(has_diag(8, "unreadable field 'prev_state'"));
    CHECK(has_diag(9, "EVENT"));
    CHECK(has_diag(10, "block_rq_issue"));
    CHECK_EQ_I(DS.count[LP_RULE_SYNTAX], 4);
    CHECK_EQ_I(DS.count[LP_RULE_FIELD], 4);
    CHECK_STR(DS.kept[0].file, "t.ftrace");
    /* trace-cmd's other lost-events form, and a CPU that is empty */
    h = rd("CPU:0 [120 EVENTS DROPPED]\nCPU 1 is empty\n");
    CHECK(h && h->nlost == 120 && h->nbad == 0 && h->nev == 0);
}

static void test_order(void)
{
    /* stamps step back; equal stamps keep file order (CPU 1's event printed first) */
    const char *t = "  a-1 [001] 5.000003: sched_waking: comm=x pid=10\n"
                    "  a-1 [000] 5.000001: sched_waking: comm=x pid=11\n"
                    "  a-1 [000] 5.000002: sched_waking: comm=x pid=12\n"
                    "  a-1 [001] 5.000002: sched_waking: comm=x pid=13\n"
                    "  a-1 [000] 5.000004: sched_waking: comm=x pid=14\n";
    const lp_khost *h = rd(t);
    CHECK(h != NULL);
    if (!h)
        return;
    CHECK_EQ_I(h->nev, 5);
    CHECK_EQ_I(h->nreordered, 3);
    int tids[] = {11, 12, 13, 10, 14};
    for (int i = 0; i < 5 && (uint64_t)i < h->nev; i++)
        CHECK_EQ_I(h->ev[i].tid, tids[i]);
    for (uint64_t i = 1; i < h->nev; i++)
        CHECK(h->ev[i - 1].ts <= h->ev[i].ts);
}

static void test_context(void)
{
    /* ctx_tid comes from the line; a host built from streams without it takes the CPU's
     * thread from sched_switch (before the first switch: its prev_tid) */
    lp_ktrace *kt;
    lp_error err;
    CHECK(lp_ktrace_new(&kt, &err) == LP_OK);
    khb b;
    khb_init(&b, kt, &DS, "mem");
    lp_kev e0 = {.ts = 5, .cpu = 1, .type = LP_KEV_IRQ_ENTRY, .tid = -1, .tid2 = -1, .ctx_tid = -1};
    lp_kev sw = {.ts = 10, .cpu = 1, .type = LP_KEV_SCHED_SWITCH, .tid = 7, .tid2 = 8, .ctx_tid = -1};
    lp_kev e1 = {.ts = 20, .cpu = 1, .type = LP_KEV_IRQ_ENTRY, .tid = -1, .tid2 = -1, .ctx_tid = -1};
    lp_kev e2 = {.ts = 15, .cpu = 0, .type = LP_KEV_IRQ_ENTRY, .tid = -1, .tid2 = -1, .ctx_tid = -1};
    lp_kev sd = {.ts = 1, .cpu = 0, .type = LP_KEV_STATEDUMP_PROCESS, .tid = 42, .tid2 = 42, .ctx_tid = -1, .a = 6, .b = 0};
    CHECK(khb_push(&b, 0, &e1, &err) == LP_OK); /* stream 0 out of order */
    CHECK(khb_push(&b, 0, &e0, &err) == LP_OK);
    CHECK(khb_push(&b, 0, &sw, &err) == LP_OK);
    CHECK(khb_push(&b, 1, &sd, &err) == LP_OK);
    CHECK(khb_push(&b, 1, &e2, &err) == LP_OK);
    CHECK(khb_finish(&b, &err) == LP_OK);
    const lp_khost *h = &kt->host[0];
    CHECK_EQ_I(h->nev, 5);
    CHECK_EQ_I(h->nreordered, 2);
    CHECK_EQ_I(h->ncpus, 2);
    CHECK_EQ_I(h->nstreams, 2);
    if (h->nev == 5) {
        CHECK_EQ_I(h->ev[0].ts, 1);
        CHECK_EQ_I(h->ev[1].ctx_tid, 7);  /* ts 5, cpu 1: before the switch from 7 */
        CHECK_EQ_I(h->ev[2].ctx_tid, 7);  /* the switch itself: prev */
        CHECK_EQ_I(h->ev[3].ctx_tid, 42); /* ts 15, cpu 0: the statedump said RUN on cpu 0 */
        CHECK_EQ_I(h->ev[4].ctx_tid, 8);  /* ts 20, cpu 1: after the switch to 8 */
    }
    lp_ktrace_free(kt);
}

static void test_socks(void)
{
    lp_ktrace *kt;
    lp_error err;
    CHECK(lp_ktrace_new(&kt, &err) == LP_OK);
    khb b;
    khb_init(&b, kt, &DS, "mem");
    lp_kev ls = {.ts = 10, .type = LP_KEV_SOCK_ADDR, .key = 0x100, .a = 1, .b = 2, .flags = 22u << 16 | 0,
                 .tid = -1, .tid2 = -1, .ctx_tid = -1};
    lp_kev cl = {.ts = 20, .type = LP_KEV_SOCK_ADDR, .key = 0x200, .a = 0x100, .kfl = KPAD_CLONE,
                 .tid = -1, .tid2 = -1, .ctx_tid = -1};
    lp_kev ac = {.ts = 30, .type = LP_KEV_SOCK_ADDR, .key = 0x200, .a = 1, .b = 3, .flags = 22u << 16 | 5000,
                 .tid = -1, .tid2 = -1, .ctx_tid = -1};
    lp_kev cl2 = {.ts = 40, .type = LP_KEV_SOCK_ADDR, .key = 0x300, .a = 0x999, .kfl = KPAD_CLONE,
                  .tid = -1, .tid2 = -1, .ctx_tid = -1};
    CHECK(khb_push(&b, 0, &ls, &err) == LP_OK);
    CHECK(khb_push(&b, 0, &cl, &err) == LP_OK);
    CHECK(khb_push(&b, 0, &ac, &err) == LP_OK);
    CHECK(khb_push(&b, 0, &cl2, &err) == LP_OK);
    CHECK(khb_finish(&b, &err) == LP_OK);
    const lp_khost *h = &kt->host[0];
    CHECK_EQ_I(h->nsock, 3); /* the clone of an unknown socket adds nothing */
    const lp_ksock *s = lp_khost_sock(h, 0x200, 25);
    CHECK(s && s->saddr == 1 && s->daddr == 2 && s->sport == 22 && s->dport == 0); /* from the clone */
    s = lp_khost_sock(h, 0x200, 35);
    CHECK(s && s->daddr == 3 && s->dport == 5000); /* accept named the peer */
    s = lp_khost_sock(h, 0x200, 5);
    CHECK(s && s->ts == 20); /* before anything was learnt: the first entry */
    CHECK(lp_khost_sock(h, 0x300, 50) == NULL);
    CHECK(lp_khost_sock(h, 0x50, 50) == NULL);
    CHECK_EQ_I(h->ev[3].a, 0); /* the clone's addresses stay unknown */
    CHECK_EQ_I(h->ev[1].kfl & KPAD_CLONE, 0);
    lp_ktrace_free(kt);
}

/* One piece of a host: events at the given stamps on CPU 0, one socket entry at the first. */
static void piece(lp_ktrace *kt, const char *name, const int64_t *ts, size_t n)
{
    lp_error err;
    khb b;
    khb_init(&b, kt, &DS, name);
    for (size_t i = 0; i < n; i++) {
        lp_kev e = {.ts = ts[i], .type = LP_KEV_SCHED_WAKEUP, .tid = (int32_t)i + 1, .tid2 = -1, .ctx_tid = 7};
        CHECK(khb_push(&b, 0, &e, &err) == LP_OK);
    }
    lp_kev so = {.ts = ts[0], .type = LP_KEV_SOCK_ADDR, .key = (uint64_t)ts[0], .a = 1, .b = 2, .tid = -1, .tid2 = -1,
                 .ctx_tid = -1};
    CHECK(khb_push(&b, 1, &so, &err) == LP_OK);
    CHECK(khb_str(&b, name, strlen(name), &b.name, &err) == LP_OK);
    CHECK(khb_str(&b, name, strlen(name), &b.source, &err) == LP_OK);
    CHECK(khb_finish(&b, &err) == LP_OK);
}

/* Pieces of one host name that follow each other in time are joined in time order
 * (given in any order), other hosts keep their place, overlapping pieces stay apart
 * with a warning. */
static void test_chunks(void)
{
    lp_ktrace *kt;
    lp_error err;
    CHECK(lp_ktrace_new(&kt, &err) == LP_OK);
    static const int64_t a2[] = {30, 35, 40}, b1[] = {5, 50}, a1[] = {10, 20, 30}, c1[] = {1, 9}, c2[] = {5, 6};
    piece(kt, "a", a2, 3);
    piece(kt, "b", b1, 2);
    piece(kt, "a", a1, 3);
    piece(kt, "c", c1, 2);
    piece(kt, "c", c2, 2);
    uint64_t w0 = DS.nwarnings;
    CHECK(khost_join_chunks(kt, &DS, &err) == LP_OK);
    CHECK_EQ_I(kt->nhosts, 4);
    CHECK_EQ_I(DS.nwarnings - w0, 1); /* c: overlapping */
    if (kt->nhosts == 4) {
        const lp_khost *a = &kt->host[0];
        CHECK_STR(lp_strtab_get(&kt->strs, a->name), "a");
        CHECK_EQ_I(a->nchunks, 2);
        CHECK_EQ_I(a->nev, 8);
        CHECK_EQ_I(a->nsock, 2);
        for (uint64_t i = 1; i < a->nev; i++)
            CHECK(a->ev[i - 1].ts <= a->ev[i].ts);
        CHECK_EQ_I(a->ev[0].ts, 10);
        CHECK_EQ_I(a->ev[a->nev - 1].ts, 40);
        CHECK(a->sock[0].sk < a->sock[1].sk);
        CHECK_STR(lp_strtab_get(&kt->strs, kt->host[1].name), "b");
        CHECK_EQ_I(kt->host[1].nchunks, 1);
        CHECK_STR(lp_strtab_get(&kt->strs, kt->host[2].name), "c");
        CHECK_STR(lp_strtab_get(&kt->strs, kt->host[3].name), "c");
        CHECK_EQ_I(kt->host[2].nev + kt->host[3].nev, 6); /* 2 events and a socket entry each */
    }
    lp_ktrace_free(kt);
}

static void test_alloc_failures(void)
{
    /* every allocation of a read may fail: an error, never a crash or a leak */
    const char *t = variants[0];
    int failed = 0, ok = 0;
    for (long n = 0; n < 200 && !ok; n++) {
        lp_diags d;
        lp_diags_init(&d, 4);
        lp_ktrace *kt = NULL;
        lp_error err;
        lp_alloc_fail_after(n);
        lp_status st = lp_ktrace_read_ftrace_mem(t, strlen(t), "t", &d, &kt, &err);
        lp_alloc_fail_after(-1);
        if (st) {
            failed++;
            CHECK(kt == NULL);
        } else {
            ok = 1;
            CHECK_EQ_I(kt->host[0].nev, 4);
        }
        lp_ktrace_free(kt);
        lp_diags_release(&d);
    }
    CHECK(ok);
    CHECK(failed > 5);
}

int main(void)
{
    lp_diags_init(&DS, 100);
    test_variants();
    test_fields();
    test_bad_lines();
    test_order();
    test_context();
    test_socks();
    test_chunks();
    test_alloc_failures();
    if (KT)
        lp_ktrace_free(KT);
    lp_diags_release(&DS);
    return t_done("test_kftrace");
}
