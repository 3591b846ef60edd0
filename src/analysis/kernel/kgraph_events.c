/* kgraph_events.c: one host's kernel events into a part of the execution graph, with
 * the semantics of Trace Compass's OS execution graph (TraceEventHandlerStatedump,
 * TraceEventHandlerSched, EventContextHandler, TraceEventHandlerExecutionGraph, run in
 * that order for every event), reimplemented from their documented behaviour; the
 * differences are listed in docs/analyses/kernel-critical-path.md ("Building").
 *
 * State kept while reading, per host: every thread's scheduling status (and the one
 * before it), the thread running on each CPU, each CPU's stack of interrupt contexts
 * (irq with its number, softirq with its vector, hrtimer, IPI, whole-interrupt and
 * packet-reception contexts), per-thread the matched packet it received last and has
 * not yet passed on, and each socket's addresses. A thread's vertex is added when its
 * state changes (sched_switch), when it is woken, and at its network events; the edge
 * into it carries the state the thread was in. Wake-ups in task context link the
 * waker's vertex to the wakee's; in a network softirq or packet-reception context the
 * packet that was received there links straight to the wakee (the packet, not the
 * kernel, is the cause). Events are processed once, in order: O(events) time; the
 * tables cost 8 bytes per CPU context level and one hash entry per thread and socket.
 *
 * Lost switches: an event that names the thread running on its CPU (the tracer's own
 * context, LP_KEVF_CTX, or a switch's prev_tid) and names another than the switches put
 * there proves a sched_switch is missing; it is inferred (resync) and counted
 * (nswitch_inferred), never left to attribute the thread's work to another.
 */
#include "analysis/kernel/kgraph_int.h"
#include "longpole/base/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Scheduling status of a thread (Trace Compass's ProcessStatus, with preempted and
 * woken-up kept apart). */
enum { S_UNKNOWN = 0, S_RUN, S_PREEMPTED, S_WAIT_CPU, S_BLOCKED, S_WAIT_FORK, S_WAIT_UNKNOWN, S_EXIT, S_DEAD };

/* Interrupt contexts. */
enum { C_NONE = 0, C_IRQ, C_SOFTIRQ, C_HRTIMER, C_IPI, C_IRQ_CTX, C_NET_RX };
#define CTX_DEPTH 16

/* Linux softirq vectors. */
enum { SI_HI = 0, SI_TIMER, SI_NET_TX, SI_NET_RX, SI_BLOCK, SI_IRQ_POLL, SI_TASKLET, SI_SCHED, SI_HRTIMER, SI_RCU };

typedef struct kw {
    uint8_t status, old;
    uint32_t pending;   /* matched packet received and not yet passed on, LP_NONE32 */
} kw;

typedef struct kctx {
    uint8_t kind;
    int32_t val;        /* irq number or softirq vector */
} kctx;

typedef struct kcpu {
    int64_t last;       /* time of the CPU's latest event, INT64_MIN before the first */
    uint32_t cur;       /* the worker running, LP_NONE32 if unknown */
    uint32_t idle;      /* this CPU's idle worker (tid 0) */
    uint32_t kernel;    /* this CPU's kernel (softirq) worker */
    uint32_t depth;
    kctx stack[CTX_DEPTH];
} kcpu;

typedef struct sockaddr4 {
    uint32_t saddr, daddr;
    uint16_t sport, dport;
} sockaddr4;

typedef struct khost {
    const khost_in *in;
    khost_out *out;
    const lp_khost *h;
    kpart *p;
    kw *ws;             /* parallel to the part's workers */
    size_t capws;
    lp_hmap tids;       /* tid -> worker (threads, tid > 0) */
    kcpu *cpu;
    uint32_t ncpus;
    lp_hmap socks;      /* sk -> index into addrs */
    sockaddr4 *addrs;
    size_t naddrs, capaddrs;
    int use_waking;     /* the host has sched_waking: use it (and wakeup_new), not sched_wakeup */
    uint64_t ev;        /* index of the event being processed */
    lp_error *err;
    lp_status st;       /* first resource failure */
} khost;

static void note(khost *k, lp_severity sev, lp_rule rule, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void note(khost *k, lp_severity sev, lp_rule rule, const char *fmt, ...)
{
    khost_out *o = k->out;
    if (o->nnotes >= KHOST_NOTES)
        return;
    khost_note *n = &o->notes[o->nnotes++];
    n->sev = sev;
    n->rule = rule;
    n->ev = k->ev;
    n->ts = k->ev < k->h->nev ? k->h->ev[k->ev].ts : INT64_MIN;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->msg, sizeof n->msg, fmt, ap);
    va_end(ap);
}

static void fail(khost *k)
{
    if (!k->st)
        k->st = lp_error_set(k->err, LP_ERR_NOMEM, "out of memory building the execution graph");
}

/* ---- workers ------------------------------------------------------------------------ */

static uint32_t new_worker(khost *k, int32_t tid, int32_t cpu, lp_str comm, uint8_t status)
{
    uint32_t w = kpart_worker(k->p, k->in->host, tid, cpu, comm);
    if (w == LP_NONE32 || lp_grow((void **)&k->ws, &k->capws, (size_t)w + 1, sizeof *k->ws)) {
        fail(k);
        return LP_NONE32;
    }
    k->ws[w].status = status;
    k->ws[w].old = S_UNKNOWN;
    k->ws[w].pending = LP_NONE32;
    if (tid > 0 && lp_hmap_put(&k->tids, (uint64_t)(uint32_t)tid, w, NULL)) {
        fail(k);
        return LP_NONE32;
    }
    return w;
}

/* The worker of tid (tid 0: the CPU's idle thread), LP_NONE32 if not seen yet. */
static uint32_t find(const khost *k, int32_t tid, uint32_t cpu)
{
    uint64_t w;
    if (tid == 0)
        return k->cpu[cpu].idle;
    if (tid > 0 && lp_hmap_get(&k->tids, (uint64_t)(uint32_t)tid, &w))
        return (uint32_t)w;
    return LP_NONE32;
}

static uint32_t find_or_new(khost *k, int32_t tid, uint32_t cpu, lp_str comm, uint8_t status)
{
    if (tid < 0)
        return LP_NONE32;
    uint32_t w = find(k, tid, cpu);
    if (w != LP_NONE32)
        return w;
    w = new_worker(k, tid, tid == 0 ? (int32_t)cpu : -1, comm, status);
    if (tid == 0)
        k->cpu[cpu].idle = w;
    return w;
}

/* The CPU's kernel context worker (created running, as Trace Compass's "kernel/N"). */
static uint32_t kernel_worker(khost *k, uint32_t cpu)
{
    if (k->cpu[cpu].kernel == LP_NONE32)
        k->cpu[cpu].kernel = new_worker(k, -1, (int32_t)cpu, LP_STR_NONE, S_RUN);
    return k->cpu[cpu].kernel;
}

static uint32_t current(const khost *k, const lp_kev *e)
{
    uint32_t w = k->cpu[e->cpu].cur;
    if (w == LP_NONE32 && e->ctx_tid >= 0) /* before the CPU's first sched_switch */
        w = find(k, e->ctx_tid, e->cpu);
    return w;
}

static void set_status(khost *k, uint32_t w, uint8_t s)
{
    k->ws[w].old = k->ws[w].status;
    k->ws[w].status = s;
}

/* ---- vertices ----------------------------------------------------------------------- */

static uint8_t status_state(uint8_t s, uint8_t *reason)
{
    *reason = LP_KR_NONE;
    switch (s) {
    case S_RUN:
    case S_EXIT:
        return LP_KS_RUNNING;
    case S_PREEMPTED:
        return LP_KS_PREEMPTED;
    case S_WAIT_CPU:
    case S_WAIT_FORK:
        return LP_KS_WAIT_CPU;
    case S_BLOCKED:
    case S_WAIT_UNKNOWN:
        *reason = LP_KR_UNKNOWN; /* reached without a wake-up: nothing says what ended it */
        return LP_KS_BLOCKED;
    default:
        return LP_KS_UNKNOWN;
    }
}

/* The packet w received last (matched) gets its link to the receive vertex itself. */
static void flush(khost *k, uint32_t w)
{
    uint32_t p = k->ws[w].pending;
    if (p != LP_NONE32) {
        k->in->pk_target[p] = k->in->pk_recv[p];
        k->ws[w].pending = LP_NONE32;
    }
}

/* A vertex on w at t; the edge into it gets (state, reason). */
static uint32_t vertex(khost *k, uint32_t w, int64_t t, uint8_t state, uint8_t reason)
{
    flush(k, w);
    uint32_t v = kpart_append(k->p, w, t, state, reason);
    if (v == LP_NONE32)
        fail(k);
    return v;
}

/* Trace Compass's stateExtend (the edge in the current status) and stateChange (in the
 * status the thread just left). */
static uint32_t extend(khost *k, uint32_t w, int64_t t)
{
    uint8_t r, s = status_state(k->ws[w].status, &r);
    return vertex(k, w, t, s, r);
}

static uint32_t change(khost *k, uint32_t w, int64_t t)
{
    uint8_t r, s = status_state(k->ws[w].old, &r);
    return vertex(k, w, t, s, r);
}

static void link(khost *k, uint32_t from, uint32_t to, uint8_t kind)
{
    if (from == LP_NONE32 || to == LP_NONE32)
        return;
    if (kpart_link(k->p, from, to, kind))
        fail(k);
}

/* The packet src received (if any) links to v, the vertex it woke. */
static void redirect(khost *k, uint32_t src, uint32_t v)
{
    if (src == LP_NONE32 || v == LP_NONE32)
        return;
    uint32_t p = k->ws[src].pending;
    if (p != LP_NONE32) {
        k->in->pk_target[p] = v;
        k->ws[src].pending = LP_NONE32;
    }
}

/* ---- interrupt contexts -------------------------------------------------------------- */

static void push(khost *k, uint32_t cpu, uint8_t kind, int32_t val)
{
    kcpu *c = &k->cpu[cpu];
    if (c->depth == CTX_DEPTH) {
        if (!k->out->st.nctx_overflow++)
            note(k, LP_SEV_WARNING, LP_RULE_IMPORT, "CPU %u: interrupt contexts nested deeper than %d (ignored)", cpu,
                 CTX_DEPTH);
        return;
    }
    c->stack[c->depth].kind = kind;
    c->stack[c->depth].val = val;
    c->depth++;
}

/* Trace Compass pops only when the innermost context is of the exiting kind. */
static void pop(khost *k, uint32_t cpu, uint8_t kind)
{
    kcpu *c = &k->cpu[cpu];
    if (c->depth && c->stack[c->depth - 1].kind == kind)
        c->depth--;
    else
        k->out->st.nctx_mismatch++;
}

static kctx top(const khost *k, uint32_t cpu, uint32_t below)
{
    const kcpu *c = &k->cpu[cpu];
    kctx none = {C_NONE, -1};
    return c->depth > below ? c->stack[c->depth - 1 - below] : none;
}

/* The context a packet event belongs to: the one around the packet-reception context. */
static uint8_t packet_ctx(const khost *k, uint32_t cpu)
{
    kctx c = top(k, cpu, 0);
    return c.kind == C_NET_RX ? top(k, cpu, 1).kind : c.kind;
}

/* ---- wake-ups -------------------------------------------------------------------------- */

static uint8_t softirq_reason(int32_t vec)
{
    switch (vec) {
    case SI_TIMER:
    case SI_HRTIMER:
        return LP_KR_TIMER;
    case SI_BLOCK:
    case SI_IRQ_POLL:
        return LP_KR_BLOCK_DEV;
    case SI_NET_RX:
    case SI_NET_TX:
        return LP_KR_NETWORK;
    case SI_SCHED:
        return LP_KR_INTERRUPTED;
    default:
        return LP_KR_SOFTIRQ;
    }
}

/* A blocked thread woken at t: the innermost context of the waking CPU says why. */
static void wake_blocked(khost *k, uint32_t target, uint32_t cur, int64_t t, uint32_t cpu)
{
    kctx c = top(k, cpu, 0);
    uint32_t v;
    switch (c.kind) {
    case C_HRTIMER:
        vertex(k, target, t, LP_KS_BLOCKED, LP_KR_TIMER);
        break;
    case C_IPI:
        vertex(k, target, t, LP_KS_BLOCKED, LP_KR_IPI);
        break;
    case C_IRQ:
    case C_IRQ_CTX:
        vertex(k, target, t, LP_KS_BLOCKED, c.val == 0 ? LP_KR_INTERRUPTED : c.val < 0 ? LP_KR_UNKNOWN : LP_KR_IRQ);
        break;
    case C_SOFTIRQ:
        v = vertex(k, target, t, LP_KS_BLOCKED, softirq_reason(c.val));
        if (c.val == SI_NET_RX || c.val == SI_NET_TX)
            redirect(k, kernel_worker(k, cpu), v);
        break;
    case C_NET_RX: {
        uint8_t inner = top(k, cpu, 1).kind;
        uint32_t src = inner == C_SOFTIRQ || inner == C_IRQ ? kernel_worker(k, cpu) : cur;
        v = vertex(k, target, t, LP_KS_BLOCKED, LP_KR_NETWORK);
        redirect(k, src, v);
        break;
    }
    default: /* task context: the running thread woke it */
        if (cur == LP_NONE32) {
            vertex(k, target, t, LP_KS_BLOCKED, LP_KR_UNKNOWN);
        } else {
            uint32_t wv = extend(k, cur, t); /* the waker's vertex first: links go from older to newer vertices */
            v = vertex(k, target, t, LP_KS_BLOCKED, LP_KR_THREAD);
            link(k, wv, v, LP_KL_WAKEUP);
        }
        break;
    }
}

static void wakeup(khost *k, const lp_kev *e, int64_t t)
{
    uint32_t cpu = e->cpu;
    uint32_t target = find(k, e->tid, cpu);
    if (target == LP_NONE32 && (target = find_or_new(k, e->tid, cpu, e->name, S_BLOCKED)) == LP_NONE32)
        return;
    uint32_t cur = current(k, e);
    if (target == cur) {
        k->out->st.nspurious++;
        return;
    }
    switch (k->ws[target].status) {
    case S_BLOCKED:
    case S_WAIT_UNKNOWN:
        set_status(k, target, S_WAIT_CPU);
        k->out->st.nwakeups++;
        wake_blocked(k, target, cur, t, cpu);
        break;
    case S_WAIT_FORK:
        set_status(k, target, S_WAIT_CPU);
        k->out->st.nwakeups++;
        if (cur != LP_NONE32) {
            uint32_t pv = extend(k, cur, t);
            link(k, pv, change(k, target, t), LP_KL_FORK);
        } else {
            change(k, target, t);
        }
        break;
    case S_UNKNOWN: /* nothing said it slept: it is runnable from now on */
        set_status(k, target, S_WAIT_CPU);
        break;
    default:
        k->out->st.nspurious++;
        break;
    }
}

/* ---- scheduling ------------------------------------------------------------------------ */

static void sched_switch(khost *k, const lp_kev *e, int64_t t)
{
    uint32_t cpu = e->cpu;
    uint32_t next = find_or_new(k, e->tid2, cpu, e->name, S_UNKNOWN);
    if (next != LP_NONE32) {
        k->cpu[cpu].cur = next;
        set_status(k, next, S_RUN);
    }
    uint32_t prev = find(k, e->tid, cpu);
    if (prev == LP_NONE32)
        prev = find_or_new(k, e->tid, cpu, e->name2, S_UNKNOWN);
    else if (e->tid > 0 && e->name2 != LP_STR_NONE)
        k->p->wcomm[prev] = e->name2; /* the name may have changed at run time */
    if (prev != LP_NONE32)
        set_status(k, prev, (e->a & 3) == 0 ? S_PREEMPTED : S_BLOCKED); /* higher bits (2048: preempted) masked */
    if (prev != LP_NONE32)
        change(k, prev, t);
    if (next != LP_NONE32)
        change(k, next, t);
}

static uint8_t statedump_status(int64_t s)
{
    static const uint8_t map[8] = {S_UNKNOWN, S_WAIT_FORK, S_WAIT_CPU, S_EXIT, S_DEAD, S_WAIT_UNKNOWN, S_RUN, S_DEAD};
    return s >= 0 && s < 8 ? map[s] : S_UNKNOWN;
}

/* ---- context switches the trace lost -------------------------------------------------- */

/* The thread the event itself says runs on its CPU, -1 when it does not say. */
static int32_t observed(const lp_kev *e)
{
    if (e->kfl & LP_KEVF_CTX)
        return e->ctx_tid;
    return e->type == LP_KEV_SCHED_SWITCH ? e->tid : -1;
}

static int64_t tail_time(const khost *k, uint32_t w)
{
    uint32_t v = k->p->wtail[w];
    return v == LP_NONE32 ? INT64_MIN : k->p->vt[v];
}

/* The event's own thread is not the one the switches put on its CPU: a sched_switch is
 * missing (seen in tracefs recordings where trace_pipe kept no switch out of one CPU's
 * idle task and reported nothing lost). It is inferred: out of the idle thread just after
 * the CPU's previous event (an idle CPU runs a woken thread at once), out of any other
 * thread at this event, the latest moment the trace allows; that thread is then waiting
 * for an unknown reason (blocked or preempted: nothing says). Never before either
 * thread's latest vertex. */
static void resync(khost *k, const lp_kev *e, int64_t t)
{
    uint32_t cpu = e->cpu;
    int32_t tid = observed(e);
    uint32_t cur = k->cpu[cpu].cur;
    if (tid < 0 || cur == LP_NONE32 || k->p->wtid[cur] == tid)
        return;
    uint32_t next = find_or_new(k, tid, cpu, LP_STR_NONE, S_UNKNOWN);
    if (next == LP_NONE32)
        return;
    int from_idle = k->p->wtid[cur] == 0;
    int64_t at = from_idle && k->cpu[cpu].last != INT64_MIN ? k->cpu[cpu].last : t;
    int64_t tc = tail_time(k, cur), tn = tail_time(k, next);
    at = at < tc ? tc : at;
    at = at < tn ? tn : at;
    at = at > t ? t : at;
    if (!k->out->st.nswitch_inferred++)
        note(k, LP_SEV_WARNING, LP_RULE_IMPORT,
             "CPU %u: thread %d runs, but the last sched_switch there put %d on it: the trace lost a context switch "
             "(inferred; every one counted in the graph's adjustments)",
             cpu, tid, (int)k->p->wtid[cur]);
    set_status(k, cur, from_idle ? S_PREEMPTED : S_WAIT_UNKNOWN);
    change(k, cur, at);
    k->cpu[cpu].cur = next;
    set_status(k, next, S_RUN);
    change(k, next, at);
}

static void statedump(khost *k, const lp_kev *e)
{
    uint32_t cpu = e->tid == 0 && e->b >= 0 && e->b < (int64_t)k->ncpus ? (uint32_t)e->b : e->cpu;
    uint32_t w = find_or_new(k, e->tid, cpu, e->name, S_UNKNOWN);
    if (w == LP_NONE32)
        return;
    if (e->name != LP_STR_NONE)
        k->p->wcomm[w] = e->name;
    set_status(k, w, statedump_status(e->a));
}

static void process(khost *k, const lp_kev *e)
{
    uint32_t w;
    switch (e->type) {
    case LP_KEV_PROCESS_FORK:
        w = find_or_new(k, e->tid2, e->cpu, e->name, S_UNKNOWN);
        if (w != LP_NONE32)
            set_status(k, w, S_WAIT_FORK);
        break;
    case LP_KEV_PROCESS_EXIT:
        if ((w = find(k, e->tid, e->cpu)) != LP_NONE32)
            set_status(k, w, S_EXIT);
        break;
    case LP_KEV_PROCESS_EXEC:
        if ((w = current(k, e)) != LP_NONE32 && e->name != LP_STR_NONE)
            k->p->wcomm[w] = e->name;
        break;
    case LP_KEV_STATEDUMP_PROCESS:
        statedump(k, e);
        break;
    default:
        break;
    }
}

/* ---- packets --------------------------------------------------------------------------- */

static void keep_key(khost *k, const lp_kev *e, int64_t t, uint32_t v, uint8_t dir)
{
    if (e->flags & LP_KNET_DEV)
        return; /* device-level events carry no TCP key */
    khost_out *o = k->out;
    if (lp_grow((void **)&o->keys, &o->capkeys, (size_t)o->nkeys + 1, sizeof *o->keys)) {
        fail(k);
        return;
    }
    lp_kpktkey *key = &o->keys[o->nkeys++];
    memset(key, 0, sizeof *key);
    key->ts = t;
    key->sk = e->key;
    key->host = k->in->host;
    key->vertex = v;
    key->seq = (uint32_t)e->a;
    key->ack_seq = (uint32_t)e->b;
    key->flags = e->flags;
    key->dir = dir;
    uint64_t i;
    if (lp_hmap_get(&k->socks, e->key, &i)) {
        key->saddr = k->addrs[i].saddr;
        key->daddr = k->addrs[i].daddr;
        key->sport = k->addrs[i].sport;
        key->dport = k->addrs[i].dport;
    }
    if (dir)
        o->st.nunmatched_recv++;
    else
        o->st.nunmatched_send++;
}

/* A packet sent (dir 0) or received (dir 1). */
static void packet(khost *k, const lp_kev *e, int64_t t, uint8_t dir)
{
    uint8_t c = packet_ctx(k, e->cpu);
    uint32_t w = LP_NONE32;
    if (dir == 0)
        w = c == C_NONE ? current(k, e) : c == C_SOFTIRQ ? kernel_worker(k, e->cpu) : LP_NONE32;
    else
        w = c == C_SOFTIRQ || c == C_IRQ ? kernel_worker(k, e->cpu) : current(k, e);
    uint32_t v = LP_NONE32;
    if (w == LP_NONE32)
        k->out->st.nnoctx++;
    else
        v = extend(k, w, t);
    uint64_t p;
    if (!k->in->pkmap || !lp_hmap_get(k->in->pkmap, k->ev * 2 + dir, &p)) {
        keep_key(k, e, t, v, dir);
        return;
    }
    if (dir == 0) {
        k->in->pk_send[p] = v;
    } else {
        k->in->pk_recv[p] = v;
        if (v != LP_NONE32)
            k->ws[w].pending = (uint32_t)p;
    }
}

static void sockaddr(khost *k, const lp_kev *e)
{
    uint64_t i;
    if (!lp_hmap_get(&k->socks, e->key, &i)) {
        if (lp_grow((void **)&k->addrs, &k->capaddrs, k->naddrs + 1, sizeof *k->addrs) ||
            lp_hmap_put(&k->socks, e->key, k->naddrs, NULL)) {
            fail(k);
            return;
        }
        i = k->naddrs++;
    }
    k->addrs[i].saddr = (uint32_t)e->a;
    k->addrs[i].daddr = (uint32_t)e->b;
    k->addrs[i].sport = (uint16_t)(e->flags >> 16);
    k->addrs[i].dport = (uint16_t)e->flags;
}

/* ---- the event loop -------------------------------------------------------------------- */

static void contexts(khost *k, const lp_kev *e, int64_t t)
{
    uint32_t cpu = e->cpu;
    switch (e->type) {
    case LP_KEV_IRQ_ENTRY: push(k, cpu, C_IRQ, (int32_t)e->a); break;
    case LP_KEV_IRQ_EXIT: pop(k, cpu, C_IRQ); break;
    case LP_KEV_SOFTIRQ_ENTRY:
        push(k, cpu, C_SOFTIRQ, (int32_t)e->a);
        if (e->a == SI_NET_RX || e->a == SI_NET_TX) {
            uint32_t kern = kernel_worker(k, cpu);
            if (kern != LP_NONE32 && kpart_append(k->p, kern, t, LP_KS_NONE, LP_KR_NONE) == LP_NONE32)
                fail(k);
        }
        break;
    case LP_KEV_SOFTIRQ_EXIT: pop(k, cpu, C_SOFTIRQ); break;
    case LP_KEV_HRTIMER_ENTRY: push(k, cpu, C_HRTIMER, -1); break;
    case LP_KEV_HRTIMER_EXIT: pop(k, cpu, C_HRTIMER); break;
    case LP_KEV_IPI_ENTRY: push(k, cpu, C_IPI, (int32_t)e->a); break;
    case LP_KEV_IPI_EXIT: pop(k, cpu, C_IPI); break;
    case LP_KEV_IRQ_CTX_ENTRY: push(k, cpu, C_IRQ_CTX, (int32_t)e->a); break;
    case LP_KEV_IRQ_CTX_EXIT: pop(k, cpu, C_IRQ_CTX); break;
    case LP_KEV_NET_RX_ENTRY: push(k, cpu, C_NET_RX, -1); break;
    case LP_KEV_NET_RX_EXIT: pop(k, cpu, C_NET_RX); break;
    default: break;
    }
}

static void event(khost *k, const lp_kev *e)
{
    int64_t t = k->in->clock ? lp_kclock_apply(k->in->clock, e->ts) : e->ts;
    if (e->kfl & LP_KEVF_PREV) /* the reader dropped the unused event just before it */
        k->cpu[e->cpu].last = k->in->clock ? lp_kclock_apply(k->in->clock, e->b) : e->b;
    if (e->type != LP_KEV_STATEDUMP_PROCESS)
        resync(k, e, t);
    k->cpu[e->cpu].last = t;
    switch (e->type) {
    case LP_KEV_SCHED_SWITCH: sched_switch(k, e, t); break;
    case LP_KEV_SCHED_WAKING:
        if (k->use_waking)
            wakeup(k, e, t);
        break;
    case LP_KEV_SCHED_WAKEUP:
        if (!k->use_waking)
            wakeup(k, e, t);
        break;
    case LP_KEV_SCHED_WAKEUP_NEW: wakeup(k, e, t); break;
    case LP_KEV_NET_SEND: packet(k, e, t, 0); break;
    case LP_KEV_NET_RECV: packet(k, e, t, 1); break;
    case LP_KEV_SOCK_ADDR: sockaddr(k, e); break;
    case LP_KEV_PROCESS_FORK:
    case LP_KEV_PROCESS_EXIT:
    case LP_KEV_PROCESS_EXEC:
    case LP_KEV_STATEDUMP_PROCESS: process(k, e); break;
    default: contexts(k, e, t); break;
    }
}

static lp_status setup(khost *k, const khost_in *in, khost_out *out, lp_error *err)
{
    memset(k, 0, sizeof *k);
    k->in = in;
    k->out = out;
    k->h = &in->kt->host[in->host];
    k->p = &out->part;
    k->err = err;
    k->ncpus = k->h->ncpus ? k->h->ncpus : 1;
    k->cpu = lp_malloc(k->ncpus * sizeof *k->cpu);
    if (!k->cpu || lp_hmap_init(&k->tids, 64, err) || lp_hmap_init(&k->socks, 0, err))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint32_t c = 0; c < k->ncpus; c++) {
        k->cpu[c].cur = k->cpu[c].idle = k->cpu[c].kernel = LP_NONE32;
        k->cpu[c].last = INT64_MIN;
        k->cpu[c].depth = 0;
    }
    for (uint64_t i = 0; i < k->h->nev && !k->use_waking; i++)
        k->use_waking = k->h->ev[i].type == LP_KEV_SCHED_WAKING;
    return LP_OK;
}

lp_status khost_build(const khost_in *in, khost_out *out, lp_error *err)
{
    khost k;
    lp_status st = setup(&k, in, out, err);
    const lp_khost *h = k.h;
    for (uint64_t i = 0; !st && i < h->nev && !k.st; i++) {
        const lp_kev *e = &h->ev[i];
        k.ev = i;
        if (e->cpu >= k.ncpus) {
            if (!out->st.nbadcpu++)
                note(&k, LP_SEV_ERROR, LP_RULE_IMPORT, "event on CPU %u, but the host has %u CPUs (ignored)", e->cpu,
                     k.ncpus);
            continue;
        }
        event(&k, e);
    }
    if (!st)
        st = k.st;
    for (uint32_t w = 0; !st && w < k.p->nw; w++)
        flush(&k, w);
    out->st.nevents = h->nev + h->ndropped;
    out->st.nreordered = h->nreordered;
    out->st.nlost = h->nlost;
    lp_free(k.cpu);
    lp_free(k.ws);
    lp_free(k.addrs);
    lp_hmap_release(&k.tids);
    lp_hmap_release(&k.socks);
    return st;
}

void khost_out_release(khost_out *out)
{
    kpart_release(&out->part);
    lp_free(out->keys);
    out->keys = NULL;
    out->nkeys = out->capkeys = 0;
}
