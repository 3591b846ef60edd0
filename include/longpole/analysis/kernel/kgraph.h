/* kgraph.h: the execution graph of kernel traces (docs/analyses/kernel-critical-path.md):
 * per thread, the states it went through, and the wake-ups, forks and network packets
 * that joined threads (Giraldeau & Dagenais; Trace Compass's OS execution graph, which
 * the distributed critical path paper, papers/distributed-critical-path-eci.txt §III,
 * builds on).
 *
 * Workers are threads (tid > 0), the idle thread of each CPU (tid 0) and the kernel
 * context of each CPU that receives packets in softirqs (tid -1), of every host. A
 * worker's vertices are instants of its timeline in time order; the horizontal edge from
 * vertex v to v+1 (same worker) carries the thread's state over that interval, and for a
 * blocked interval the reason it ended (what woke the thread). Links join a vertex of
 * one worker to a vertex of another (or the same) worker: a wake-up from the waker's
 * context, a fork, or a TCP packet from its send to the receiving side (times mapped to
 * the reference clock by lp_kclock). A link never runs backwards in time.
 *
 * Storage is columnar, like lp_trace: worker w owns vertices [voff[w], voff[w+1]);
 * 18 bytes per vertex, 9 per link. Invariants (checked by lp_kgraph_validate, which
 * the index reader runs on every file it maps):
 *  - vt is non-decreasing within a worker; vstate of a worker's last vertex is NONE;
 *  - vstate[v] == BLOCKED iff vreason[v] != NONE; states and reasons are valid enums;
 *  - every vertex has at most one incoming link (vin) and one outgoing link (vout), and
 *    vin/vout agree with lfrom/lto; vt[lfrom[l]] <= vt[lto[l]];
 *  - the graph has no cycle (every link goes forward in time; the builders guarantee
 *    that zero-time links cannot close a cycle, and the path algorithms stop with an
 *    error rather than loop if a damaged graph had one).
 *
 * The graph also keeps, for the External Communication Index of the distributed issue,
 * the keys of the TCP send/receive events no matched packet explained (lp_kpktkey).
 */
#ifndef LONGPOLE_KGRAPH_H
#define LONGPOLE_KGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/base/strtab.h"
#include "longpole/base/diag.h"
#include "longpole/import/kernel.h"
#include "longpole/model/trace.h"

/* The state of a thread over a horizontal edge. */
typedef enum lp_kstate {
    LP_KS_NONE = 0,   /* no edge: a hole in the worker's timeline (or its last vertex) */
    LP_KS_RUNNING,    /* on a CPU (in user or kernel mode, interrupts included) */
    LP_KS_PREEMPTED,  /* runnable but switched out (sched_switch with prev_state & 3 == 0) */
    LP_KS_WAIT_CPU,   /* runnable after its wake-up (or fork), waiting for a CPU */
    LP_KS_BLOCKED,    /* asleep until its wake-up; vreason says what woke it */
    LP_KS_UNKNOWN,    /* no event told the state */
    LP_KS_COUNT
} lp_kstate;

/* What ended a blocked interval (the context of the wake-up). */
typedef enum lp_kreason {
    LP_KR_NONE = 0,     /* not blocked */
    LP_KR_TIMER,        /* hrtimer context, or the timer/hrtimer softirq */
    LP_KR_BLOCK_DEV,    /* block softirq: a disk request completed */
    LP_KR_NETWORK,      /* network softirq or packet reception: a packet arrived */
    LP_KR_IPI,          /* inter-processor interrupt */
    LP_KR_INTERRUPTED,  /* the timer interrupt (irq 0) or the scheduler softirq */
    LP_KR_THREAD,       /* another thread woke it (task context): a link names the waker */
    LP_KR_IRQ,          /* a device interrupt not otherwise classified */
    LP_KR_SOFTIRQ,      /* a softirq vector not otherwise classified (hi, tasklet, rcu) */
    LP_KR_UNKNOWN,      /* no wake-up was seen, or one without context */
    LP_KR_COUNT
} lp_kreason;

/* What a link is. */
typedef enum lp_klink {
    LP_KL_WAKEUP = 0,   /* sched_wakeup/sched_waking in the waker's task context */
    LP_KL_FORK,         /* sched_wakeup_new: the parent starts its child */
    LP_KL_NETWORK,      /* a TCP packet, from its send to what it woke (or its receive) */
    LP_KL_TIMER,        /* a timer set at the link's source (hand-built graphs only) */
    LP_KL_COUNT
} lp_klink;

/* Does the critical path replace this state by what ended it? Trace Compass's BLOCKED
 * and NETWORK edges; timer, block device, IPI and interrupted waits are the thread's
 * own time on the path (nothing else ran on its behalf). */
static inline int lp_kstate_resolvable(unsigned state, unsigned reason)
{
    return state == LP_KS_BLOCKED &&
           (reason == LP_KR_THREAD || reason == LP_KR_NETWORK || reason == LP_KR_IRQ ||
            reason == LP_KR_SOFTIRQ || reason == LP_KR_UNKNOWN);
}

const char *lp_kstate_name(unsigned state);   /* "running", "preempted", "wait-cpu", "blocked", "unknown", "none" */
const char *lp_kreason_name(unsigned reason); /* "timer", "block-device", "network", "ipi", "interrupted", "thread", "irq", "softirq", "unknown", "" */
const char *lp_klink_name(unsigned kind);     /* "wakeup", "fork", "network", "timer" */

typedef struct lp_kworker {
    uint32_t host;  /* index into lp_kgraph.host */
    int32_t tid;    /* > 0 thread; 0 the CPU's idle thread; -1 the CPU's kernel (softirq) context */
    int32_t cpu;    /* the CPU for tid <= 0, else -1 */
    lp_str comm;    /* the latest command name seen */
    lp_str name;    /* unique: "host/comm-tid", "host/swapper/CPU-0", "host/kernel/CPU" */
} lp_kworker;

/* A TCP send or receive no matched packet explained (for the External Communication
 * Index: which remote hosts a trace talked to, and with which segment keys). */
typedef struct lp_kpktkey {
    int64_t ts;         /* reference-clock time */
    uint64_t sk;        /* the socket (lp_kev.key) */
    uint32_t host;      /* the host whose trace has the event */
    uint32_t vertex;    /* its endpoint vertex, LP_NONE32 if no thread context was known */
    uint32_t seq, ack_seq, flags;   /* TCP sequence, acknowledgement, flags */
    uint32_t saddr, daddr;          /* IPv4 from the socket's connect/accept, 0 if unknown */
    uint16_t sport, dport;
    uint8_t dir;        /* 0 send, 1 receive */
    uint8_t pad[7];
} lp_kpktkey;

/* What building the graph adjusted or could not use: every count is reported. */
typedef struct lp_kgraph_stats {
    uint64_t nevents;         /* events read */
    uint64_t nwakeups;        /* wake-ups that ended a blocked (or forked) state */
    uint64_t nspurious;       /* wake-ups of a thread that was running or already runnable (ignored) */
    uint64_t nctx_mismatch;   /* interrupt exits that did not match the CPU's innermost context (ignored) */
    uint64_t nctx_overflow;   /* interrupt entries beyond the nesting limit (ignored) */
    uint64_t nbadcpu;         /* events whose CPU is beyond the host's count (ignored) */
    uint64_t nnoctx;          /* packet events with no thread or kernel context to attach to */
    uint64_t npk_linked;      /* matched packets that became network links */
    uint64_t npk_skew;        /* matched packets received (reference clock) no later than sent: dropped */
    uint64_t npk_noendpoint;  /* matched packets whose send or receive had no context: dropped */
    uint64_t npk_dup;         /* matched packets naming an event already matched: dropped */
    uint64_t npk_bad;         /* matched packets naming events that are not a send and a receive: dropped */
    uint64_t nunmatched_send, nunmatched_recv; /* TCP events without a match (keys kept) */
    uint64_t nreordered, nlost;/* from the readers (lp_khost), summed over hosts */
    uint64_t nrenamed;        /* workers whose name collided and got a "#n" suffix */
    uint64_t nswitch_inferred;/* context switches the trace lost, inferred from an event's own thread */
} lp_kgraph_stats;

typedef struct lp_kgraph {
    lp_strtab strs;          /* host names, commands, worker names */
    uint32_t nhosts;
    lp_str *host;            /* [nhosts] host names */
    double *clock_slope, *clock_offset; /* [nhosts] the clock map applied (1, 0: none) */
    int synced;              /* host clocks were mapped through lp_kmatch's clocks */

    uint32_t nworkers;
    lp_kworker *w;           /* [nworkers] */
    uint32_t *voff;          /* [nworkers+1] */

    uint32_t nv;
    int64_t *vt;             /* [nv] reference-clock ns */
    uint8_t *vstate;         /* [nv] state of the edge v -> v+1 (LP_KS_*) */
    uint8_t *vreason;        /* [nv] its reason when blocked (LP_KR_*) */
    uint32_t *vin, *vout;    /* [nv] link ending / starting at v, LP_NONE32 if none */

    uint32_t nlinks;
    uint32_t *lfrom, *lto;   /* [nlinks] vertices */
    uint8_t *lkind;          /* [nlinks] LP_KL_* */

    uint64_t npk;
    lp_kpktkey *pk;          /* [npk] unmatched TCP endpoints, by host then time */

    lp_kgraph_stats st;

    void *map;               /* a mapped index file the columns point into, or NULL */
    size_t maplen;
} lp_kgraph;

void lp_kgraph_free(lp_kgraph *g);

/* The worker of vertex v (binary search over voff). */
uint32_t lp_kgraph_vworker(const lp_kgraph *g, uint32_t v);
static inline const char *lp_kgraph_str(const lp_kgraph *g, lp_str s) { return lp_strtab_get(&g->strs, s); }
static inline const char *lp_kgraph_worker_name(const lp_kgraph *g, uint32_t w) { return lp_strtab_get(&g->strs, g->w[w].name); }
/* Resident bytes of the graph's arrays (0 for columns in a mapped file). */
size_t lp_kgraph_footprint(const lp_kgraph *g);

/* Check every invariant above (the index reader's validation pass). LP_ERR_FORMAT with
 * the offending worker, vertex or link in err. */
lp_status lp_kgraph_validate(const lp_kgraph *g, lp_error *err);

/* Find a thread: `thread` is a tid ("7421"), a worker name ("host/scp-7421"), or a
 * command name ("scp"); `host` (may be NULL) restricts the search to one host. No match
 * or several matches (a tid on two hosts, a command run by several threads) is
 * LP_ERR_ARG with the candidates in the message. */
lp_status lp_kgraph_find_thread(const lp_kgraph *g, const char *thread, const char *host, uint32_t *w,
                                lp_error *err);

/* ---- building from kernel events -------------------------------------------------- */

typedef struct lp_kgraph_opts {
    unsigned threads;   /* hosts built in parallel: 0 = as many as CPUs (at most one per host) */
    int no_sync;        /* keep every host's own clock even when lp_kmatch has clock maps */
    /* Added for the distributed critical path (issue 14, docs/distributed.md): a graph of
     * some hosts only, with the packets matched over all of them. With `partial`, a host
     * without events (nev == 0) is absent: a matched packet with an end on an absent host
     * is indexed on its present end only (so that end's part is built exactly as in the
     * whole graph: matched packets leave no key) and makes no link; the packet counts of
     * the graph's stats (npk_*) then cover only packets whose two ends are present.
     * pk_send_v / pk_target_v (may be NULL; [m->npk] each, written by the build): the
     * graph vertex of each packet's send and of what its receive woke (its target), or
     * LP_NONE32 when absent, without context, or the packet was dropped as a duplicate
     * or not a send and a receive. */
    int partial;
    uint32_t *pk_send_v, *pk_target_v;
} lp_kgraph_opts;

/* The execution graph of kernel traces (Trace Compass's semantics, docs/analyses/
 * kernel-critical-path.md "Building"). `m` (may be NULL) gives the matched packets, which
 * become network links, and the clock maps applied to every time unless opts->no_sync.
 * Adjustments are counted in the graph's stats and reported to `diags` (may be NULL).
 * Each host is built on its own thread; the result does not depend on the thread count. */
lp_status lp_kgraph_build(const lp_ktrace *kt, const lp_kmatch *m, const lp_kgraph_opts *opts, lp_diags *diags,
                          lp_kgraph **out, lp_error *err);

/* ---- building by hand (tests, generators, other front ends) ------------------------- */

typedef struct lp_kgraph_builder lp_kgraph_builder;

lp_status lp_kgraph_builder_new(lp_kgraph_builder **out, lp_error *err);
void lp_kgraph_builder_free(lp_kgraph_builder *b);
/* A host by name (created on first use). */
lp_status lp_kgraph_builder_host(lp_kgraph_builder *b, const char *name, uint32_t *host, lp_error *err);
/* A new worker; worker ids are given in order of creation and kept by finish, except
 * that workers left without any vertex are dropped (as in graphs built from events). */
lp_status lp_kgraph_builder_worker(lp_kgraph_builder *b, uint32_t host, int32_t tid, int32_t cpu, const char *comm,
                                   uint32_t *w, lp_error *err);
/* Append a vertex at time t to worker w; the edge from w's previous vertex gets `state`
 * and `reason` (LP_KS_NONE: no edge, a hole). *v (may be NULL) receives a builder vertex
 * id for lp_kgraph_builder_link. LP_ERR_DATA if t is before the previous vertex or the
 * state and reason do not agree. */
lp_status lp_kgraph_builder_append(lp_kgraph_builder *b, uint32_t w, int64_t t, lp_kstate state, lp_kreason reason,
                                   uint32_t *v, lp_error *err);
/* A link between two builder vertices. LP_ERR_DATA if it runs backwards in time or a
 * vertex already has a link in that direction. */
lp_status lp_kgraph_builder_link(lp_kgraph_builder *b, uint32_t from, uint32_t to, lp_klink kind, lp_error *err);
/* Lay the graph out; LP_ERR_DATA if the links form a cycle. Consumes the builder. */
lp_status lp_kgraph_builder_finish(lp_kgraph_builder *b, lp_kgraph **out, lp_error *err);

/* ---- the activity-graph model (MODEL.md) ------------------------------------------- */

/* Feed the graph to an lp_builder, so every analysis, report and export of lp_trace works
 * on it: each worker becomes a worker named as in the graph (attributes host, tid, cpu,
 * comm); each horizontal edge of positive length an activity whose type is its state
 * ("running", "preempted", "wait-cpu", "blocked", "unknown"), except that a blocked
 * interval ended by a link (a wake-up, fork or packet: a message) is `waiting`, so the
 * model's critical path follows the message as it does for any wait; blocked activities
 * carry reason=<reason>. Each link becomes a message (id = link index, kind=<link kind>).
 * Holes are left to the builder's gap filling. */
lp_status lp_kgraph_feed(const lp_kgraph *g, lp_builder *b, lp_error *err);
/* The same, building the lp_trace. */
lp_status lp_kgraph_to_trace(const lp_kgraph *g, lp_diags *diags, lp_trace **out, lp_error *err);

#endif
