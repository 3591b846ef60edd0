/* kev_map.c: which kernel event becomes which lp_kev, and which field fills which
 * member: one table for both LTTng generations (CTF) and ftrace's text, so the readers
 * agree by construction (docs/formats/ctf.md and ftrace.md print it as tables).
 *
 * Invariants: names are exact (syscall prefixes excepted, tried after the exact names);
 * a role (member) with no field name for a source stays -1 / LP_STR_NONE for that
 * source; a required field that is missing makes the reader skip the event and count
 * it (lp_khost.nbad), an optional one leaves the member unknown.
 */
#include "import/kernel/kint.h"

#include <string.h>

#define F(c, t, k) {c, t, k, 0}
#define O(c, t, k) {c, t, k, 1}

#define WAKE(nm, ty)                                                                          \
    {nm, ty, KS_NONE, 0,                                                                    \
     {[KR_TID] = F("tid", "pid", KF_INT), [KR_A] = O("target_cpu", "target_cpu", KF_INT),     \
      [KR_NAME] = O("comm", "comm", KF_STR)}}
#define ONE(nm, ty, role, cf, ff, kind) {nm, ty, KS_NONE, 0, {[role] = F(cf, ff, kind)}}
#define NETP(nm, ty)                                                                          \
    {nm, ty, KS_NONE, 0,                                                                    \
     {[KR_KEY] = F("sk", NULL, KF_HEX), [KR_A] = F("seq", NULL, KF_INT),                     \
      [KR_B] = F("ack_seq", NULL, KF_INT), [KR_FLAGS] = F("flags", NULL, KF_INT)}}
#define NETD(nm, ty)                                                                          \
    {nm, ty, KS_NET_DEV, 0, {[KR_KEY] = F("skbaddr", "skbaddr", KF_HEX), [KR_A] = O("len", "len", KF_INT)}}
#define ADDR(nm)                                                                              \
    {nm, LP_KEV_SOCK_ADDR, KS_SOCK_ADDR, 0,                                                  \
     {[KR_KEY] = F("sk", NULL, KF_HEX), [KR_A] = F("saddr", NULL, KF_ADDR4),                 \
      [KR_B] = F("daddr", NULL, KF_ADDR4), [KR_FLAGS] = F("sport", NULL, KF_PORT),           \
      [KR_X] = F("dport", NULL, KF_PORT)}}
#define BLK(nm, ty)                                                                           \
    {nm, ty, KS_BLOCK, 0,                                                                   \
     {[KR_A] = F("dev", NULL, KF_INT), [KR_B] = F("sector", NULL, KF_INT),                   \
      [KR_FLAGS] = F("nr_sector", NULL, KF_INT)}}
#define IPI(nm, ty) {nm, ty, KS_IPI, 0, {[KR_A] = O("vector", "vector", KF_INT)}}
#define SYS(nm, ty) {nm, ty, ty == LP_KEV_SYSCALL_ENTRY ? KS_SYSCALL_ENTRY : KS_SYSCALL_EXIT, 1, \
                     {[KR_A] = O(ty == LP_KEV_SYSCALL_EXIT ? "ret" : NULL, NULL, KF_INT)}}

static const kevdef defs[] = {
    {"sched_switch", LP_KEV_SCHED_SWITCH, KS_NONE, 0,
     {[KR_TID] = F("prev_tid", "prev_pid", KF_INT), [KR_TID2] = F("next_tid", "next_pid", KF_INT),
      [KR_A] = F("prev_state", "prev_state", KF_STATE), [KR_NAME] = O("next_comm", "next_comm", KF_STR),
      [KR_NAME2] = O("prev_comm", "prev_comm", KF_STR)}},
    WAKE("sched_waking", LP_KEV_SCHED_WAKING),
    WAKE("sched_wakeup", LP_KEV_SCHED_WAKEUP),
    WAKE("sched_ttwu", LP_KEV_SCHED_WAKEUP), /* LTTng 2.0's name */
    WAKE("sched_wakeup_new", LP_KEV_SCHED_WAKEUP_NEW),
    {"sched_process_fork", LP_KEV_PROCESS_FORK, KS_NONE, 0,
     {[KR_TID] = F("parent_tid", "pid", KF_INT), [KR_TID2] = F("child_tid", "child_pid", KF_INT),
      [KR_A] = O("child_pid", NULL, KF_INT), [KR_NAME] = O("child_comm", "child_comm", KF_STR)}},
    {"sched_process_exec", LP_KEV_PROCESS_EXEC, KS_NONE, 0,
     {[KR_TID] = F("tid|pid", "pid", KF_INT), [KR_NAME] = O("filename", "filename", KF_BASENAME)}},
    {"sched_process_exit", LP_KEV_PROCESS_EXIT, KS_NONE, 0,
     {[KR_TID] = F("tid", "pid", KF_INT), [KR_NAME] = O("comm", "comm", KF_STR)}},
    {"sched_process_free", LP_KEV_PROCESS_FREE, KS_NONE, 0,
     {[KR_TID] = F("tid", "pid", KF_INT), [KR_NAME] = O("comm", "comm", KF_STR)}},
    {"lttng_statedump_process_state", LP_KEV_STATEDUMP_PROCESS, KS_NONE, 0,
     {[KR_TID] = F("tid", NULL, KF_INT), [KR_TID2] = F("pid", NULL, KF_INT), [KR_A] = O("status", NULL, KF_INT),
      [KR_B] = O("cpu", NULL, KF_INT), [KR_NAME] = O("name", NULL, KF_STR)}},
    {"irq_handler_entry", LP_KEV_IRQ_ENTRY, KS_NONE, 0,
     {[KR_A] = F("irq", "irq", KF_INT), [KR_NAME] = O("name", "name", KF_STR)}},
    {"irq_handler_exit", LP_KEV_IRQ_EXIT, KS_NONE, 0,
     {[KR_A] = F("irq", "irq", KF_INT), [KR_B] = O("ret", "ret", KF_IRQRET)}},
    ONE("softirq_raise", LP_KEV_SOFTIRQ_RAISE, KR_A, "vec", "vec", KF_INT),
    ONE("softirq_entry", LP_KEV_SOFTIRQ_ENTRY, KR_A, "vec", "vec", KF_INT),
    ONE("softirq_exit", LP_KEV_SOFTIRQ_EXIT, KR_A, "vec", "vec", KF_INT),
    ONE("irq_softirq_raise", LP_KEV_SOFTIRQ_RAISE, KR_A, "vec", "vec", KF_INT),
    ONE("irq_softirq_entry", LP_KEV_SOFTIRQ_ENTRY, KR_A, "vec", "vec", KF_INT),
    ONE("irq_softirq_exit", LP_KEV_SOFTIRQ_EXIT, KR_A, "vec", "vec", KF_INT),
    ONE("hrtimer_expire_entry", LP_KEV_HRTIMER_ENTRY, KR_KEY, "hrtimer", "hrtimer", KF_HEX),
    ONE("hrtimer_expire_exit", LP_KEV_HRTIMER_EXIT, KR_KEY, "hrtimer", "hrtimer", KF_HEX),
    ONE("timer_hrtimer_expire_entry", LP_KEV_HRTIMER_ENTRY, KR_KEY, "hrtimer", "hrtimer", KF_HEX),
    ONE("timer_hrtimer_expire_exit", LP_KEV_HRTIMER_EXIT, KR_KEY, "hrtimer", "hrtimer", KF_HEX),
    ONE("timer_expire_entry", LP_KEV_TIMER_ENTRY, KR_KEY, "timer", "timer", KF_HEX),
    ONE("timer_expire_exit", LP_KEV_TIMER_EXIT, KR_KEY, "timer", "timer", KF_HEX),
    ONE("timer_timer_expire_entry", LP_KEV_TIMER_ENTRY, KR_KEY, "timer", "timer", KF_HEX),
    ONE("timer_timer_expire_exit", LP_KEV_TIMER_EXIT, KR_KEY, "timer", "timer", KF_HEX),
    /* IPIs: LTTng's x86_irq_vectors_* (prefix below), ftrace's irq_vectors and ipi */
    IPI("reschedule_entry", LP_KEV_IPI_ENTRY), IPI("reschedule_exit", LP_KEV_IPI_EXIT),
    IPI("call_function_entry", LP_KEV_IPI_ENTRY), IPI("call_function_exit", LP_KEV_IPI_EXIT),
    IPI("call_function_single_entry", LP_KEV_IPI_ENTRY), IPI("call_function_single_exit", LP_KEV_IPI_EXIT),
    IPI("local_timer_entry", LP_KEV_IPI_ENTRY), IPI("local_timer_exit", LP_KEV_IPI_EXIT),
    IPI("irq_work_entry", LP_KEV_IPI_ENTRY), IPI("irq_work_exit", LP_KEV_IPI_EXIT),
    IPI("x86_platform_ipi_entry", LP_KEV_IPI_ENTRY), IPI("x86_platform_ipi_exit", LP_KEV_IPI_EXIT),
    IPI("ipi_entry", LP_KEV_IPI_ENTRY), IPI("ipi_exit", LP_KEV_IPI_EXIT),
    NETP("inet_sock_local_out", LP_KEV_NET_SEND),
    NETP("inet_sock_local_in", LP_KEV_NET_RECV),
    NETD("net_dev_queue", LP_KEV_NET_SEND),
    NETD("netif_receive_skb", LP_KEV_NET_RECV),
    NETD("net_if_receive_skb", LP_KEV_NET_RECV), /* LTTng 2.7's name */
    ADDR("inet_connect"),
    ADDR("inet_accept"),
    {"inet_sock_clone", LP_KEV_SOCK_ADDR, KS_SOCK_CLONE, 0,
     {[KR_KEY] = F("nsk", NULL, KF_HEX), [KR_A] = F("osk", NULL, KF_HEX)}},
    BLK("block_rq_issue", LP_KEV_BLOCK_ISSUE),
    BLK("block_rq_complete", LP_KEV_BLOCK_COMPLETE),
    {"exit_syscall", LP_KEV_SYSCALL_EXIT, KS_NONE, 0, {[KR_A] = O("ret", NULL, KF_INT)}}, /* LTTng 2.0-2.5 */
    {"sys_enter", LP_KEV_SYSCALL_ENTRY, KS_NONE, 0, {[KR_A] = O(NULL, NULL, KF_INT)}}, /* ftrace raw_syscalls */
    {"sys_exit", LP_KEV_SYSCALL_EXIT, KS_NONE, 0, {[KR_A] = O(NULL, NULL, KF_INT)}},
};

/* Name prefixes, tried in order after the exact names. */
static const kevdef pdefs[] = {
    IPI("x86_irq_vectors_", LP_KEV_IPI_ENTRY), /* _entry / _exit decided by the suffix */
    SYS("syscall_entry_", LP_KEV_SYSCALL_ENTRY),
    SYS("syscall_exit_", LP_KEV_SYSCALL_EXIT),
    SYS("compat_syscall_entry_", LP_KEV_SYSCALL_ENTRY),
    SYS("compat_syscall_exit_", LP_KEV_SYSCALL_EXIT),
    SYS("sys_enter_", LP_KEV_SYSCALL_ENTRY), /* ftrace syscalls:sys_enter_read */
    SYS("sys_exit_", LP_KEV_SYSCALL_EXIT),
    SYS("compat_sys_", LP_KEV_SYSCALL_ENTRY),
    SYS("sys_", LP_KEV_SYSCALL_ENTRY), /* LTTng 2.0-2.5: sys_read (exit: exit_syscall) */
};

static const kevdef ipi_exit = IPI("x86_irq_vectors_", LP_KEV_IPI_EXIT);

static int ends_with(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n >= k && memcmp(s + n - k, suf, k) == 0;
}

const kevdef *lp_kevdef_find(const char *name, size_t n, size_t *sysname)
{
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (strlen(defs[i].name) == n && memcmp(defs[i].name, name, n) == 0)
            return &defs[i];
    for (size_t i = 0; i < sizeof pdefs / sizeof pdefs[0]; i++) {
        size_t k = strlen(pdefs[i].name);
        if (n <= k || memcmp(pdefs[i].name, name, k) != 0)
            continue;
        if (pdefs[i].special == KS_IPI) {
            if (ends_with(name, n, "_entry"))
                return &pdefs[i];
            return ends_with(name, n, "_exit") ? &ipi_exit : NULL;
        }
        if (sysname)
            *sysname = k;
        return &pdefs[i];
    }
    return NULL;
}

/* Letters of sched_switch's prev_state as ftrace prints them (kernel/sched: "R", "R+",
 * "S", "D", "T", "t", "X", "Z", "P", "I", and older "x", "K", "W", "N"; several joined by
 * '|'). */
int64_t lp_kstate_from_letters(const char *s, size_t n)
{
    int64_t v = 0;
    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case 'R': break;
        case '+': v |= LP_KSTATE_PREEMPTED; break;
        case 'S': v |= LP_KSTATE_INTERRUPTIBLE; break;
        case 'D': v |= LP_KSTATE_UNINTERRUPTIBLE; break;
        case 'T': v |= LP_KSTATE_STOPPED; break;
        case 't': v |= LP_KSTATE_TRACED; break;
        case 'X': v |= LP_KSTATE_DEAD; break;
        case 'x': v |= LP_KSTATE_DEAD; break;
        case 'Z': v |= LP_KSTATE_ZOMBIE; break;
        case 'P': v |= LP_KSTATE_PARKED; break;
        case 'I': v |= LP_KSTATE_UNINTERRUPTIBLE | LP_KSTATE_NOLOAD; break;
        case 'K': v |= LP_KSTATE_WAKEKILL; break;
        case 'W': v |= LP_KSTATE_WAKING; break;
        case 'N': v |= LP_KSTATE_NOLOAD; break;
        case '|': break;
        default: return -1;
        }
    }
    return v;
}

static const char *const type_names[LP_KEV_NTYPES] = {
    [LP_KEV_SCHED_SWITCH] = "sched_switch", [LP_KEV_SCHED_WAKING] = "sched_waking",
    [LP_KEV_SCHED_WAKEUP] = "sched_wakeup", [LP_KEV_SCHED_WAKEUP_NEW] = "sched_wakeup_new",
    [LP_KEV_PROCESS_FORK] = "process_fork", [LP_KEV_PROCESS_EXEC] = "process_exec",
    [LP_KEV_PROCESS_EXIT] = "process_exit", [LP_KEV_PROCESS_FREE] = "process_free",
    [LP_KEV_STATEDUMP_PROCESS] = "statedump_process", [LP_KEV_IRQ_ENTRY] = "irq_entry",
    [LP_KEV_IRQ_EXIT] = "irq_exit", [LP_KEV_SOFTIRQ_RAISE] = "softirq_raise",
    [LP_KEV_SOFTIRQ_ENTRY] = "softirq_entry", [LP_KEV_SOFTIRQ_EXIT] = "softirq_exit",
    [LP_KEV_HRTIMER_ENTRY] = "hrtimer_entry", [LP_KEV_HRTIMER_EXIT] = "hrtimer_exit",
    [LP_KEV_TIMER_ENTRY] = "timer_entry", [LP_KEV_TIMER_EXIT] = "timer_exit",
    [LP_KEV_IPI_ENTRY] = "ipi_entry", [LP_KEV_IPI_EXIT] = "ipi_exit",
    [LP_KEV_NET_SEND] = "net_send", [LP_KEV_NET_RECV] = "net_recv",
    [LP_KEV_SOCK_ADDR] = "sock_addr", [LP_KEV_BLOCK_ISSUE] = "block_issue",
    [LP_KEV_BLOCK_COMPLETE] = "block_complete", [LP_KEV_SYSCALL_ENTRY] = "syscall_entry",
    [LP_KEV_SYSCALL_EXIT] = "syscall_exit", [LP_KEV_OTHER] = "other",
};

const char *lp_kev_type_name(lp_kev_type t)
{
    return (unsigned)t < LP_KEV_NTYPES ? type_names[t] : "?";
}
