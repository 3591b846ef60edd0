/* kernel.h: kernel trace events, normalised: what the kernel-trace readers produce
 * (LTTng CTF through libbabeltrace2, src/import/kernel/ctf*.c; ftrace/tracefs text
 * from `longpole record` or `trace-cmd report`, src/import/kernel/ftrace*.c) and what
 * the execution graph (src/analysis/kernel/) consumes. Both LTTng event-name
 * generations map here (sched_waking/sched_wakeup, softirq_*, hrtimer_*, net_dev_queue
 * / netif_receive_skb, inet_sock_local_in/out, ...); docs/formats/ctf.md and
 * docs/formats/ftrace.md say which event and field becomes which member.
 *
 * A set of kernel traces (one per host) becomes one lp_ktrace: per host, its name (from
 * the trace's hostname/env, else the directory name), its events in timestamp order
 * (the readers merge the per-CPU streams themselves and count what arrived out of order
 * instead of dropping it), and a string table for command names and event names.
 * Times are the host's own clock in ns; clock correction across hosts (from matched
 * packets) is a separate step that yields a per-host affine map (lp_kclock).
 *
 * Invariants: ev[] of a host is sorted by ts (stable: equal stamps keep stream order);
 * every event's cpu < ncpus of its host; tids are the kernel's (-1: unknown); `name`
 * members are string ids of `strs` or LP_STR_NONE.
 */
#ifndef LONGPOLE_IMPORT_KERNEL_H
#define LONGPOLE_IMPORT_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/base/strtab.h"
#include "longpole/base/diag.h"

typedef enum lp_kev_type {
    LP_KEV_SCHED_SWITCH = 0, /* tid = prev_tid, tid2 = next_tid, a = prev_state (raw), name = next_comm, name2 = prev_comm
                                (b: see LP_KEVF_PREV) */
    LP_KEV_SCHED_WAKING,     /* tid = target, a = target_cpu, name = comm (sched_waking: in the waker's context) */
    LP_KEV_SCHED_WAKEUP,     /* tid = target, a = target_cpu, name = comm */
    LP_KEV_SCHED_WAKEUP_NEW, /* tid = target, a = target_cpu, name = comm */
    LP_KEV_PROCESS_FORK,     /* tid = parent_tid, tid2 = child_tid, a = child_pid, name = child_comm */
    LP_KEV_PROCESS_EXEC,     /* tid = tid, name = new comm (filename's basename) */
    LP_KEV_PROCESS_EXIT,     /* tid = tid */
    LP_KEV_PROCESS_FREE,     /* tid = tid */
    LP_KEV_STATEDUMP_PROCESS,/* tid, tid2 = pid, a = state (LTTng statedump status), b = cpu (or -1), name = comm */
    LP_KEV_IRQ_ENTRY,        /* a = irq, name = handler name */
    LP_KEV_IRQ_EXIT,         /* a = irq, b = ret */
    LP_KEV_SOFTIRQ_RAISE,    /* a = vec */
    LP_KEV_SOFTIRQ_ENTRY,    /* a = vec */
    LP_KEV_SOFTIRQ_EXIT,     /* a = vec */
    LP_KEV_HRTIMER_ENTRY,    /* key = hrtimer address */
    LP_KEV_HRTIMER_EXIT,     /* key = hrtimer address */
    LP_KEV_TIMER_ENTRY,      /* key = timer address */
    LP_KEV_TIMER_EXIT,       /* key = timer address */
    LP_KEV_IPI_ENTRY,        /* a = vector */
    LP_KEV_IPI_EXIT,         /* a = vector */
    LP_KEV_NET_SEND,         /* inet_sock_local_out: key = sk, a = seq, b = ack_seq, flags = TCP flags; net_dev_queue: key = skbaddr, a = len, flags = LP_KNET_DEV */
    LP_KEV_NET_RECV,         /* inet_sock_local_in, netif_receive_skb (likewise) */
    LP_KEV_SOCK_ADDR,        /* inet_connect/accept/sock_clone, statedump: key = sk, a = saddr, b = daddr (IPv4 as integers), flags = sport << 16 | dport */
    LP_KEV_BLOCK_ISSUE,      /* a = dev, b = sector, flags = nr_sector */
    LP_KEV_BLOCK_COMPLETE,   /* a = dev, b = sector, flags = nr_sector */
    LP_KEV_SYSCALL_ENTRY,    /* name = syscall name */
    LP_KEV_SYSCALL_EXIT,     /* name = syscall name, a = ret */
    LP_KEV_OTHER,            /* read but not used by the graph; name = event name (counted by name) */
    /* Added for the execution graph (src/analysis/kernel/), after LP_KEV_OTHER so that no
     * earlier value moves. Interrupt and packet-reception contexts that some LTTng
     * set-ups record around the handlers (lttng-modules addons kprobes; Trace Compass's
     * "complete IRQ" and "packet reception" contexts): */
    LP_KEV_IRQ_CTX_ENTRY,    /* do_IRQ entry: the whole interrupt; a = irq, or -1 when the event does not say */
    LP_KEV_IRQ_CTX_EXIT,     /* do_IRQ return */
    LP_KEV_NET_RX_ENTRY,     /* netif_receive_skb_internal entry: a packet is being received on this CPU */
    LP_KEV_NET_RX_EXIT,      /* netif_receive_skb_internal return */
    LP_KEV_NTYPES
} lp_kev_type;

#define LP_KNET_DEV 0x80000000u /* flags bit: a device-level packet event (skb), not a TCP segment */
#define LP_KNET_TCP 0x40000000u /* with LP_KNET_DEV: the event carried the TCP header (LTTng >= 2.9
                                   net_dev_queue / netif_receive_skb): a = seq, b = ack_seq, the low
                                   16 bits of flags = the TCP flags, key = skbaddr (len is not kept) */

/* prev_state of LP_KEV_SCHED_SWITCH (member a): LTTng gives the kernel's number, kept as
 * it is (its meaning moved between kernel versions; 2048 in many-threads is the
 * "preempted" report bit of Linux 4.x). ftrace prints letters, which the ftrace reader
 * maps to these values (docs/formats/ftrace.md). The rule the graph uses on both
 * (Trace Compass's): (a & 3) == 0 -> the thread was preempted (still runnable), else it
 * blocked. */
#define LP_KSTATE_RUNNING     0x0    /* R */
#define LP_KSTATE_INTERRUPTIBLE 0x1  /* S */
#define LP_KSTATE_UNINTERRUPTIBLE 0x2 /* D */
#define LP_KSTATE_STOPPED     0x4    /* T */
#define LP_KSTATE_TRACED      0x8    /* t */
#define LP_KSTATE_DEAD        0x10   /* X */
#define LP_KSTATE_ZOMBIE      0x20   /* Z */
#define LP_KSTATE_PARKED      0x40   /* P */
#define LP_KSTATE_WAKEKILL    0x80   /* K */
#define LP_KSTATE_WAKING      0x100  /* W */
#define LP_KSTATE_NOLOAD      0x400  /* N; I (idle kernel thread) = UNINTERRUPTIBLE | NOLOAD */
#define LP_KSTATE_PREEMPTED   0x10000 /* "R+": runnable, preempted (ftrace only) */

/* lp_kev.kfl bits. LP_KEVF_CTX: ctx_tid was written by the tracer itself (ftrace's line
 * task, LTTng's tid context), not inferred from the CPU's sched_switch events: the graph
 * builder trusts it over its own state and infers a context switch the trace lost when
 * the two disagree. */
#define LP_KEVF_CTX 0x1u
/* LP_KEVF_PREV (on LP_KEV_SCHED_SWITCH only): the event just before it on its CPU was an
 * unused one the reader did not keep (lp_khost.ndropped); member b holds that event's
 * stamp (ns, host clock), which the graph needs when it infers a lost switch. */
#define LP_KEVF_PREV 0x2u

typedef struct lp_kev {
    int64_t ts;      /* ns, host clock */
    uint32_t cpu;
    uint16_t type;   /* lp_kev_type */
    uint16_t kfl;    /* LP_KEVF_* */
    int32_t tid;     /* see lp_kev_type; -1 when unknown */
    int32_t tid2;
    int32_t ctx_tid; /* the thread running on `cpu` when the event happened (from the
                        readers' per-CPU state or the trace's context field), -1 unknown */
    uint32_t flags;
    int64_t a, b;
    uint64_t key;
    lp_str name, name2;
} lp_kev;

/* A socket's addresses, from inet_connect / inet_accept / inet_sock_clone (the new
 * socket takes the listening one's local address until its accept names the peer) and
 * LTTng's statedump when it carries them. IPv4 as host-order integers. */
typedef struct lp_ksock {
    uint64_t sk;        /* the kernel's struct sock address */
    int64_t ts;         /* when these addresses were learnt (a socket address is reused) */
    uint32_t saddr, daddr;
    uint16_t sport, dport;
} lp_ksock;

typedef struct lp_khost {
    lp_str name;        /* host name */
    lp_str source;      /* path of the trace directory or file */
    uint32_t ncpus;
    lp_kev *ev;         /* [nev], sorted by ts */
    uint64_t nev;
    uint64_t nreordered;/* events that arrived out of timestamp order and were put in place */
    uint64_t nlost;     /* events the tracer reported lost (discarded-event counters) */
    uint64_t nother;    /* LP_KEV_OTHER events */
    /* added by the readers (issue 13): */
    lp_ksock *sock;     /* [nsock], sorted by (sk, ts): the per-socket address table */
    uint64_t nsock;
    uint64_t nbad;      /* events skipped: a field the mapping needs was missing or unreadable
                           (each reported to the diagnostics with file and position) */
    uint32_t nstreams;  /* CTF data streams (ftrace: CPUs seen) */
    uint64_t bytes;     /* size of the input read (stream files or text) */
    uint32_t nchunks;   /* traces joined into this host (pieces of one run in time order), >= 1 */
    /* LP_KEV_OTHER events not kept in ev[] (counted in nother; nev + ndropped events were
     * read). A host whose events carry no tracer context keeps only the first and last
     * event of each stream among them: nothing in the graph reads them but their CPU's
     * latest stamp, which the next switch carries (LP_KEVF_PREV). 0 with LP_KREAD_ALL. */
    uint64_t ndropped;
} lp_khost;

/* The addresses of socket `sk` at time `ts` (the latest entry learnt at or before ts,
 * else the first one learnt later), or NULL if none is known. */
const lp_ksock *lp_khost_sock(const lp_khost *h, uint64_t sk, int64_t ts);

/* The stable name of an event type ("sched_switch", "net_send", ...). */
const char *lp_kev_type_name(lp_kev_type t);

typedef struct lp_ktrace {
    lp_strtab strs;
    lp_khost *host;
    uint32_t nhosts;
} lp_ktrace;

void lp_ktrace_free(lp_ktrace *kt);

/* Read kernel traces: each path is a CTF trace directory (LTTng kernel; several hosts:
 * several directories) or an ftrace text file; problems go to `diags` with the file
 * and the event's position. LP_ERR_UNSUPPORTED when CTF support was not built
 * (libbabeltrace2 missing). */
lp_status lp_ktrace_read(const char *const *paths, size_t npaths, lp_diags *diags, lp_ktrace **out,
                         lp_error *err);

/* lp_ktrace_read with flags: LP_KREAD_ALL keeps every event in ev[] (no unused event
 * dropped: tools that rewrite the events, such as the benchmark's trace generator). */
#define LP_KREAD_ALL 0x1u
lp_status lp_ktrace_read_flags(const char *const *paths, size_t npaths, unsigned flags, lp_diags *diags,
                               lp_ktrace **out, lp_error *err);

/* Read ftrace text from memory as one host named `name` (the fuzz target and tests). */
lp_status lp_ktrace_read_ftrace_mem(const void *data, size_t n, const char *name, lp_diags *diags,
                                    lp_ktrace **out, lp_error *err);

/* Is `path` a CTF trace directory (a `metadata` file beside its streams), an ftrace
 * text file, or neither? For detection (load layer) and error messages. */
typedef enum lp_kformat { LP_KFORMAT_NONE = 0, LP_KFORMAT_CTF, LP_KFORMAT_FTRACE } lp_kformat;
lp_kformat lp_ktrace_detect(const char *path);
/* 1: this build reads CTF (always: the direct decoder needs no library). */
int lp_ktrace_have_ctf(void);
/* 1 if libbabeltrace2 is built in (LONGPOLE_CTF=babeltrace, and the fallback for
 * metadata the direct decoder does not read), else 0. */
int lp_ktrace_have_babeltrace(void);

/* ---- packets matched across hosts, and the clocks they synchronise -------------- */

/* One TCP segment seen leaving one host and entering another: send on (shost, sev),
 * receive on (rhost, rev), indices into the hosts' ev[]. Keyed on (seq, ack_seq,
 * flags) and the connection's addresses when known (never on `check`, which differs
 * between the two ends). */
typedef struct lp_kpacket {
    uint32_t shost, rhost;
    uint64_t sev, rev;
} lp_kpacket;

/* A host's clock mapped onto the reference host's: t_ref = slope * t + offset, with
 * the bounds the matched packets allow (convex-hull method, as Trace Compass).
 * slope_lo/hi bound the slope over every line the packets allow; offset_lo/hi bound the
 * offset at the chosen slope (the chosen offset lies inside them). Hosts reached through
 * other hosts (a <-> b <-> c) compose the pairwise maps along a spanning tree from the
 * reference; their bounds are those of the last pair only. */
typedef enum lp_kclock_quality {
    LP_KCLOCK_REFERENCE = 0, /* the reference host: identity */
    LP_KCLOCK_ACCURATE,      /* packets in both directions: slope and offset bounded */
    LP_KCLOCK_APPROXIMATE,   /* packets in one direction only: a bound on one side (others +-inf) */
    LP_KCLOCK_FAIL,          /* the packets allow no line (clock jumps, wrong matches): identity kept */
    LP_KCLOCK_ABSENT         /* no packet links this host to the reference: identity kept */
} lp_kclock_quality;

typedef struct lp_kclock {
    double slope, offset;
    double slope_lo, slope_hi, offset_lo, offset_hi;
    uint64_t npackets;   /* packets that support it (both directions) */
    int accurate;        /* both directions had packets: bounds are finite */
    /* added (issue 13): */
    lp_kclock_quality quality;
    uint32_t via;        /* the host this one was synchronised against (itself for the reference) */
    uint64_t nhull;      /* packets on the hull (the ones that set the bounds) */
    int64_t t0, r0;      /* a time of this host near its packets and its image on the reference
                            clock: lp_kclock_apply works from there, because a double slope times
                            an epoch-ns stamp would be off by ~100 ns (0, 0 for the identity) */
} lp_kclock;

typedef struct lp_kmatch {
    lp_kpacket *pk;
    uint64_t npk;
    uint64_t nunmatched_send, nunmatched_recv;
    lp_kclock *clock;    /* [nhosts]; the reference host (0) is the identity */
} lp_kmatch;

/* Match packets across hosts and synchronise every host's clock to host 0. Packets
 * from a host to itself (loopback) are not matched. m is initialised here. */
lp_status lp_kmatch_run(const lp_ktrace *kt, lp_kmatch *m, lp_error *err);
void lp_kmatch_release(lp_kmatch *m);
/* Host time to reference time: r0 + slope * (t - t0), rounded to the ns (equal to
 * slope * t + offset up to rounding; relative to t0 so that the double slope's error
 * stays far below a ns over any trace's span). */
static inline int64_t lp_kclock_apply(const lp_kclock *c, int64_t t)
{
    long double d = (long double)c->slope * (long double)(t - c->t0);
    return c->r0 + (int64_t)(d < 0 ? d - 0.5L : d + 0.5L);
}

#endif
