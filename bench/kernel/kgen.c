/* kgen.c: larger kernel traces made from real ones, for bench/kernel/run.sh and the
 * reader round-trip test (tests/scripts/test_kernel_roundtrip.sh).
 *
 *   kgen ftrace [--bytes N] TRACE...   ftrace text (tracefs `trace` layout, ns stamps)
 *       of the events of TRACE (read with lp_ktrace_read_flags, LP_KREAD_ALL), replicated until N bytes:
 *       copy r is shifted by r x (the trace's span + 1 s), its thread ids moved by
 *       r x 1,000,000 (0, the idle thread, stays), its timer / skb keys and TCP sequence
 *       numbers moved too. Only the events ftrace has a text form for are written (the
 *       count of the others goes to stderr); without --bytes, one copy.
 *
 *   kgen ctf [--bytes N] [--pairs P] OUTDIR TRACE...   a synthetic multi-host LTTng
 *       kernel trace in CTF (kctfw.c: LTTng's event and field names, 64 KiB packets per
 *       CPU): every TRACE becomes P hosts OUTDIR/<hostname>-<p> (pair p shifted by p
 *       seconds), each its events replicated as above until the whole is about N bytes
 *       (TCP sequence numbers moved per copy alike on every host, so the copies'
 *       packets still match across hosts). Without --bytes, one copy.
 *
 *   kgen ctf --fanout N | --alltoall N [--driver TID] OUTDIR CLIENT SERVER   the scp
 *       session of two real hosts re-hosted as issue 14's topologies. The session is the
 *       interval between the driver thread's fork of the child that talks TCP (scp_src:
 *       test_scp, tid 7417, forks scp) and its next fork, on the client; on the server,
 *       the same interval of the synchronised clock. --fanout N: host <client>-0 runs
 *       N - 1 sessions one after the other (slot r shifted by r x the session's length,
 *       its threads but the driver moved by r x 1,000,000), slot r with server
 *       <server>-(r+1), which holds that session's server events; so the driver's path
 *       crosses every server in turn. --alltoall N: hosts node-0..N-1 are each a client
 *       (its CPUs first) and a server (CPUs after, threads moved by 500,000 more): in slot
 *       r, node-c is the client of node-(c+1+r mod N) and the server of node-(c-1-r mod
 *       N). Both ends of a session get the same sequence-number offset (session id x
 *       65537) and the addresses of their generated hosts (10.0.0.g+1) in the socket
 *       events, so a session's packets match on those two hosts only. A server CPU starts
 *       each slot with the session's own first thread, so the readers infer one context
 *       switch per slot boundary there (counted, as any lost switch).
 *
 * stderr gets "events N bytes B skipped S" (ftrace) / "hosts H events N bytes B". The
 * text is what the kernel prints, field for field, so reading it back must give the
 * same normalised events for those types; likewise the CTF.
 */
#include "longpole/import/kernel.h"
#include "longpole/base/diag.h"
#include "kctfw.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const lp_ktrace *KT;

static const char *S(lp_str s) { return s == LP_STR_NONE ? "" : lp_strtab_get(&KT->strs, s); }

static const char *state_letters(int64_t a, char *buf)
{
    /* the raw prev_state of LTTng (or the reader's LP_KSTATE_*) back to letters */
    char *p = buf;
    if (a & LP_KSTATE_INTERRUPTIBLE)
        *p++ = 'S';
    if (a & LP_KSTATE_UNINTERRUPTIBLE)
        *p++ = 'D';
    if (a & LP_KSTATE_STOPPED)
        *p++ = 'T';
    if (a & LP_KSTATE_TRACED)
        *p++ = 't';
    if (a & LP_KSTATE_DEAD)
        *p++ = 'X';
    if (a & LP_KSTATE_ZOMBIE)
        *p++ = 'Z';
    if (p == buf) {
        *p++ = 'R';
        if (a != 0)
            *p++ = '+'; /* preempted: Linux 4.x's 2048, 5.x's 256, the reader's LP_KSTATE_PREEMPTED */
    }
    *p = '\0';
    return buf;
}

typedef struct shift {
    int64_t dt;
    int32_t dtid;
    uint64_t dkey;
} shift;

static int32_t T(int32_t tid, const shift *s) { return tid > 0 ? tid + s->dtid : tid; }

/* One event as the kernel prints it; 0 if ftrace has no text form for it. */
static int line(FILE *f, const lp_kev *e, const shift *s, uint64_t *bytes)
{
    char st[16];
    int64_t ts = e->ts + s->dt;
    char pre[96];
    snprintf(pre, sizeof pre, "%16s-%-7d [%03u] d..2. %5" PRId64 ".%09" PRId64 ": ", "task", T(e->ctx_tid, s), e->cpu,
             ts / 1000000000, ts % 1000000000);
    int n = 0;
    uint64_t key = e->key ^ s->dkey;
    switch (e->type) {
    case LP_KEV_SCHED_SWITCH:
        n = fprintf(f, "%ssched_switch: prev_comm=%s prev_pid=%d prev_prio=120 prev_state=%s ==> next_comm=%s next_pid=%d next_prio=120\n",
                    pre, S(e->name2), T(e->tid, s), state_letters(e->a, st), S(e->name), T(e->tid2, s));
        break;
    case LP_KEV_SCHED_WAKING:
    case LP_KEV_SCHED_WAKEUP:
    case LP_KEV_SCHED_WAKEUP_NEW:
        n = fprintf(f, "%s%s: comm=%s pid=%d prio=120 target_cpu=%03d\n", pre,
                    e->type == LP_KEV_SCHED_WAKING ? "sched_waking" : e->type == LP_KEV_SCHED_WAKEUP ? "sched_wakeup" : "sched_wakeup_new",
                    S(e->name), T(e->tid, s), (int)e->a);
        break;
    case LP_KEV_PROCESS_FORK:
        n = fprintf(f, "%ssched_process_fork: comm=x pid=%d child_comm=%s child_pid=%d\n", pre, T(e->tid, s), S(e->name),
                    T(e->tid2, s));
        break;
    case LP_KEV_PROCESS_EXEC:
        n = fprintf(f, "%ssched_process_exec: filename=/bin/%s pid=%d old_pid=%d\n", pre, S(e->name), T(e->tid, s),
                    T(e->tid, s));
        break;
    case LP_KEV_PROCESS_EXIT:
    case LP_KEV_PROCESS_FREE:
        n = fprintf(f, "%s%s: comm=%s pid=%d prio=120\n", pre,
                    e->type == LP_KEV_PROCESS_EXIT ? "sched_process_exit" : "sched_process_free", S(e->name), T(e->tid, s));
        break;
    case LP_KEV_IRQ_ENTRY: n = fprintf(f, "%sirq_handler_entry: irq=%d name=%s\n", pre, (int)e->a, S(e->name)); break;
    case LP_KEV_IRQ_EXIT:
        n = fprintf(f, "%sirq_handler_exit: irq=%d ret=%s\n", pre, (int)e->a, e->b == 0 ? "unhandled" : "handled");
        break;
    case LP_KEV_SOFTIRQ_RAISE:
    case LP_KEV_SOFTIRQ_ENTRY:
    case LP_KEV_SOFTIRQ_EXIT:
        n = fprintf(f, "%s%s: vec=%d [action=X]\n", pre,
                    e->type == LP_KEV_SOFTIRQ_RAISE ? "softirq_raise" : e->type == LP_KEV_SOFTIRQ_ENTRY ? "softirq_entry" : "softirq_exit",
                    (int)e->a);
        break;
    case LP_KEV_HRTIMER_ENTRY:
        n = fprintf(f, "%shrtimer_expire_entry: hrtimer=%016" PRIx64 " function=tick_sched_timer now=%" PRId64 "\n", pre,
                    key, ts);
        break;
    case LP_KEV_HRTIMER_EXIT: n = fprintf(f, "%shrtimer_expire_exit: hrtimer=%016" PRIx64 "\n", pre, key); break;
    case LP_KEV_TIMER_ENTRY:
        n = fprintf(f, "%stimer_expire_entry: timer=%016" PRIx64 " function=process_timeout now=%" PRId64 " baseclk=0\n", pre,
                    key, ts);
        break;
    case LP_KEV_TIMER_EXIT: n = fprintf(f, "%stimer_expire_exit: timer=%016" PRIx64 "\n", pre, key); break;
    case LP_KEV_IPI_ENTRY: n = fprintf(f, "%sreschedule_entry: vector=%d\n", pre, (int)e->a); break;
    case LP_KEV_IPI_EXIT: n = fprintf(f, "%sreschedule_exit: vector=%d\n", pre, (int)e->a); break;
    case LP_KEV_BLOCK_ISSUE:
    case LP_KEV_BLOCK_COMPLETE: {
        unsigned maj = (unsigned)((uint64_t)e->a >> 20), mn = (unsigned)(e->a & 0xfffff);
        if (e->type == LP_KEV_BLOCK_ISSUE)
            n = fprintf(f, "%sblock_rq_issue: %u,%u W %u () %" PRIu64 " + %u [x]\n", pre, maj, mn, e->flags * 512u,
                        (uint64_t)e->b, e->flags);
        else
            n = fprintf(f, "%sblock_rq_complete: %u,%u W () %" PRIu64 " + %u [0]\n", pre, maj, mn, (uint64_t)e->b, e->flags);
        break;
    }
    case LP_KEV_SYSCALL_ENTRY:
        if (e->name == LP_STR_NONE)
            return 0;
        n = fprintf(f, "%ssys_enter_%s: fd: 0x00000003\n", pre, S(e->name));
        break;
    case LP_KEV_SYSCALL_EXIT:
        if (e->name == LP_STR_NONE)
            return 0;
        n = fprintf(f, "%ssys_exit_%s: 0x%" PRIx64 "\n", pre, S(e->name), (uint64_t)e->a);
        break;
    default: return 0;
    }
    *bytes += n > 0 ? (uint64_t)n : 0;
    return 1;
}

/* copy r of event e: shifted in time, tids, keys and TCP sequence numbers (by r, and
 * by the pair p so that pairs do not match each other's packets) */
static lp_kev replica(const lp_kev *e, const shift *s, uint64_t r, uint64_t p)
{
    lp_kev x = *e;
    x.ts += s->dt;
    x.tid = T(x.tid, s);
    x.tid2 = T(x.tid2, s);
    x.ctx_tid = T(x.ctx_tid, s);
    if (x.type == LP_KEV_PROCESS_FORK && x.a > 0)
        x.a += s->dtid;
    if (x.key)
        x.key ^= s->dkey;
    if ((x.type == LP_KEV_NET_SEND || x.type == LP_KEV_NET_RECV) && !(x.flags & LP_KNET_DEV)) {
        uint64_t d = (r + p * 1000003) * 65537;
        x.a = (int64_t)(((uint64_t)x.a + d) & 0xffffffffu);
        x.b = (int64_t)(((uint64_t)x.b + d) & 0xffffffffu);
    }
    return x;
}

static int gen_topo(const lp_ktrace *kt, const char *out, unsigned n, int all, int32_t driver);

static int gen_ctf(int argc, char **argv)
{
    uint64_t want = 0;
    unsigned pairs = 1, fanout = 0, alltoall = 0;
    int32_t driver = 7417;
    int a = 2;
    for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
        if (!strcmp(argv[a], "--bytes"))
            want = strtoull(argv[a + 1], NULL, 10);
        else if (!strcmp(argv[a], "--pairs"))
            pairs = (unsigned)atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "--fanout"))
            fanout = (unsigned)atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "--alltoall"))
            alltoall = (unsigned)atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "--driver"))
            driver = atoi(argv[a + 1]);
    }
    if (a + 1 >= argc || pairs < 1 || fanout == 1 || alltoall == 1 || (fanout && alltoall) || fanout > 1000 ||
        alltoall > 1000) {
        fprintf(stderr, "usage: kgen ctf [--bytes N] [--pairs P | --fanout N | --alltoall N [--driver TID]] OUTDIR TRACE...\n");
        return 2;
    }
    const char *out = argv[a++];
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_ktrace *kt;
    if (lp_ktrace_read_flags((const char *const *)argv + a, (size_t)(argc - a), LP_KREAD_ALL, &ds, &kt, &err)) {
        fprintf(stderr, "kgen: %s\n", err.msg);
        return 1;
    }
    KT = kt;
    if (fanout || alltoall) {
        int rc = gen_topo(kt, out, fanout ? fanout : alltoall, alltoall != 0, driver);
        lp_ktrace_free(kt);
        lp_diags_release(&ds);
        return rc;
    }
    mkdir(out, 0755);
    int64_t span = 0;
    for (uint32_t h = 0; h < kt->nhosts; h++)
        if (kt->host[h].nev && kt->host[h].ev[kt->host[h].nev - 1].ts - kt->host[h].ev[0].ts > span)
            span = kt->host[h].ev[kt->host[h].nev - 1].ts - kt->host[h].ev[0].ts;
    span += 1000000000;
    uint64_t per_host = want / (pairs * (kt->nhosts ? kt->nhosts : 1)), total = 0, events = 0;
    int rc = 0;
    for (unsigned p = 0; p < pairs && !rc; p++)
        for (uint32_t h = 0; h < kt->nhosts && !rc; h++) {
            const lp_khost *k = &kt->host[h];
            char dir[4096], name[300];
            snprintf(name, sizeof name, "%s-%u", S(k->name), p);
            snprintf(dir, sizeof dir, "%s/%s", out, name);
            kctfw *w = kctfw_open(dir, name, k->ncpus);
            if (!w) {
                fprintf(stderr, "kgen: cannot create %s\n", dir);
                rc = 1;
                break;
            }
            for (uint64_t r = 0;; r++) {
                shift s = {(int64_t)r * span + (int64_t)p * 1000000000, (int32_t)(r * 1000000), r << 48};
                for (uint64_t i = 0; i < k->nev && !rc; i++) {
                    lp_kev x = replica(&k->ev[i], &s, r, p);
                    rc = kctfw_event(w, kt, &x) ? 1 : 0;
                    events++;
                }
                if (rc || !want || kctfw_bytes(w) >= per_host)
                    break;
            }
            uint64_t b;
            if (kctfw_close(w, &b))
                rc = 1;
            total += b;
        }
    fprintf(stderr, "hosts %u events %" PRIu64 " bytes %" PRIu64 "\n", pairs * kt->nhosts, events, total);
    lp_ktrace_free(kt);
    lp_diags_release(&ds);
    return rc;
}

/* ---- topologies: sequential sessions of one client/server pair, re-hosted ----------- */

/* The session to replicate: on the client host, the interval [ws, we) between the
 * driver's fork of the first child whose interval holds TCP sends and its next fork
 * (the driver is running at both ends, so copies placed end to end continue it); on
 * the server host, the same interval of the reference clock [ss, ss + we - ws). */
typedef struct topo {
    uint32_t ch, sh;         /* client and server host in kt */
    int32_t driver;
    int64_t ws, we, ss;
    uint32_t caddr, saddr;   /* their IPv4 addresses (0: no socket address events) */
} topo;

static int is_inet(const lp_kev *e)
{
    return (e->type == LP_KEV_NET_SEND || e->type == LP_KEV_NET_RECV) && !(e->flags & LP_KNET_DEV);
}

static int find_window(const lp_ktrace *kt, topo *t)
{
    for (uint32_t h = 0; h < kt->nhosts; h++) {
        const lp_khost *k = &kt->host[h];
        int64_t start = INT64_MIN;
        int sends = 0;
        for (uint64_t i = 0; i < k->nev; i++) {
            const lp_kev *e = &k->ev[i];
            if (e->type == LP_KEV_PROCESS_FORK && e->tid == t->driver) {
                if (start != INT64_MIN && sends) {
                    t->ch = h, t->ws = start, t->we = e->ts;
                    return 0;
                }
                start = e->ts, sends = 0;
            } else if (start != INT64_MIN && e->type == LP_KEV_NET_SEND && is_inet(e))
                sends++;
        }
        if (start != INT64_MIN && sends && k->nev) {
            t->ch = h, t->ws = start, t->we = k->ev[k->nev - 1].ts + 1;
            return 0;
        }
    }
    return -1;
}

/* The server host (the other one) and its interval, through the clocks the packets give;
 * the hosts' addresses from the client's socket events in the session. */
static int find_server(const lp_ktrace *kt, topo *t)
{
    if (kt->nhosts != 2)
        return -1;
    t->sh = 1 - t->ch;
    lp_kmatch m;
    lp_error err;
    if (lp_kmatch_run(kt, &m, &err))
        return -1;
    int64_t oc = lp_kclock_apply(&m.clock[t->ch], t->ws) - t->ws;
    int64_t os = lp_kclock_apply(&m.clock[t->sh], t->ws) - t->ws;
    t->ss = t->ws + oc - os;
    lp_kmatch_release(&m);
    const lp_khost *k = &kt->host[t->ch];
    for (uint64_t i = 0; i < k->nev && !t->caddr; i++) {
        const lp_kev *e = &k->ev[i];
        if (e->type == LP_KEV_SOCK_ADDR && e->ts >= t->ws && e->ts < t->we && e->a && e->b)
            t->caddr = (uint32_t)e->a, t->saddr = (uint32_t)e->b;
    }
    return 0;
}

/* How a copy of the session is placed: time shift, tid shift (the driver and the idle
 * thread keep theirs), key bits, the CPU offset, the sequence-number offset of its
 * session, and the addresses of the generated hosts that play client and server. */
typedef struct place {
    int64_t dt;
    int32_t dtid, driver;
    uint64_t dkey;
    uint32_t dcpu;
    uint64_t dseq;
    uint32_t from_c, from_s, to_c, to_s;
} place;

static int32_t PT(int32_t tid, const place *p)
{
    return tid > 0 && tid != p->driver ? tid + p->dtid : tid;
}

static uint32_t paddr(uint32_t a, const place *p)
{
    return a && a == p->from_c ? p->to_c : a && a == p->from_s ? p->to_s : a;
}

static lp_kev placed(const lp_kev *e, const place *p)
{
    lp_kev x = *e;
    x.ts += p->dt;
    x.cpu += p->dcpu;
    x.tid = PT(x.tid, p);
    x.tid2 = PT(x.tid2, p);
    x.ctx_tid = PT(x.ctx_tid, p);
    if (x.type == LP_KEV_PROCESS_FORK && x.a > 0 && x.a != p->driver)
        x.a += p->dtid;
    if (x.key)
        x.key ^= p->dkey;
    if (is_inet(&x)) {
        x.a = (int64_t)(((uint64_t)x.a + p->dseq) & 0xffffffffu);
        x.b = (int64_t)(((uint64_t)x.b + p->dseq) & 0xffffffffu);
    }
    if (x.type == LP_KEV_SOCK_ADDR) {
        x.a = paddr((uint32_t)x.a, p);
        x.b = paddr((uint32_t)x.b, p);
    }
    return x;
}

/* Generated host g's IPv4 address: 10.0.0.0 + g + 1 */
static uint32_t gaddr(unsigned g) { return 0x0a000000u + g + 1; }

/* Write the events of host h in [from, from + len) placed by p. */
static int put_window(kctfw *w, const lp_ktrace *kt, uint32_t h, int64_t from, int64_t len, const place *p,
                      uint64_t *events)
{
    const lp_khost *k = &kt->host[h];
    for (uint64_t i = 0; i < k->nev; i++) {
        const lp_kev *e = &k->ev[i];
        if (e->ts < from || e->ts >= from + len)
            continue;
        lp_kev x = placed(e, p);
        if (kctfw_event(w, kt, &x))
            return -1;
        ++*events;
    }
    return 0;
}

/* Generated host g of n: fan-out (all = 0) or all-to-all (all = 1). In slot r (r = 0 ..
 * n - 2), all-to-all: host c is the client of host (c + 1 + r) mod n; fan-out: host 0 is
 * the client of host r + 1. Session id r * n + c moves the sequence numbers of both ends
 * alike. A host with both roles has the client's CPUs, then the server's, whose threads
 * move by 500,000 more. */
static int put_host(const lp_ktrace *kt, const topo *t, const char *out, unsigned g, unsigned n, int all,
                    uint64_t *events, uint64_t *bytes)
{
    const lp_khost *kc = &kt->host[t->ch], *ks = &kt->host[t->sh];
    int client = all || g == 0, server = all || g != 0;
    char dir[4096], name[300];
    if (all)
        snprintf(name, sizeof name, "node-%u", g);
    else
        snprintf(name, sizeof name, "%s-%u", S(g ? ks->name : kc->name), g);
    snprintf(dir, sizeof dir, "%s/%s", out, name);
    kctfw *w = kctfw_open(dir, name, (client ? kc->ncpus : 0) + (server ? ks->ncpus : 0));
    if (!w) {
        fprintf(stderr, "kgen: cannot create %s\n", dir);
        return -1;
    }
    int64_t len = t->we - t->ws;
    int rc = 0;
    for (unsigned r = 0; r + 1 < n && !rc; r++) {
        unsigned s = all ? (g + 1 + r) % n : r + 1, c = all ? (g + n - 1 - r) % n : 0;
        if (client) {
            place p = {(int64_t)r * len, (int32_t)(r * 1000000), t->driver, (uint64_t)r << 48, 0,
                       (uint64_t)(r * n + g) * 65537, t->caddr, t->saddr, gaddr(g), gaddr(s)};
            rc = put_window(w, kt, t->ch, t->ws, len, &p, events);
        }
        if (!rc && server && (all || g == r + 1)) {
            place p = {(int64_t)r * len + (t->ws - t->ss), (int32_t)(r * 1000000 + (client ? 500000 : 0)), -1,
                       (uint64_t)r << 48 | 1ull << 47, client ? kc->ncpus : 0, (uint64_t)(r * n + c) * 65537,
                       t->caddr, t->saddr, gaddr(c), gaddr(g)};
            rc = put_window(w, kt, t->sh, t->ss, len, &p, events);
        }
    }
    uint64_t b = 0;
    if (kctfw_close(w, &b))
        rc = -1;
    *bytes += b;
    return rc;
}

static int gen_topo(const lp_ktrace *kt, const char *out, unsigned n, int all, int32_t driver)
{
    topo t = {0};
    t.driver = driver;
    if (find_window(kt, &t) || find_server(kt, &t)) {
        fprintf(stderr, "kgen: --%s needs two hosts, one where thread %d forks a child that sends TCP "
                        "segments (scp_src + scp_dest: --driver 7417)\n", all ? "alltoall" : "fanout", driver);
        return 2;
    }
    mkdir(out, 0755);
    uint64_t events = 0, bytes = 0;
    int rc = 0;
    for (unsigned g = 0; g < n && !rc; g++)
        rc = put_host(kt, &t, out, g, n, all, &events, &bytes);
    fprintf(stderr, "hosts %u events %" PRIu64 " bytes %" PRIu64 " session %" PRId64 " ns (client %s, driver %d)\n",
            n, events, bytes, t.we - t.ws, S(kt->host[t.ch].name), driver);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "ctf"))
        return gen_ctf(argc, argv);
    if (argc < 3 || strcmp(argv[1], "ftrace") != 0) {
        fprintf(stderr, "usage: kgen ftrace [--bytes N] TRACE...\n       kgen ctf [--bytes N] [--pairs P | --fanout N | --alltoall N [--driver TID]] OUTDIR TRACE...\n");
        return 2;
    }
    uint64_t want = 0;
    int a = 2;
    if (a + 1 < argc && !strcmp(argv[a], "--bytes")) {
        want = strtoull(argv[a + 1], NULL, 10);
        a += 2;
    }
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_ktrace *kt;
    if (lp_ktrace_read_flags((const char *const *)argv + a, (size_t)(argc - a), LP_KREAD_ALL, &ds, &kt, &err)) {
        fprintf(stderr, "kgen: %s\n", err.msg);
        return 1;
    }
    KT = kt;
    if (kt->nhosts != 1) {
        fprintf(stderr, "kgen: ftrace text holds one host; give one trace\n");
        return 2;
    }
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    uint64_t bytes = 0, events = 0, skipped = 0;
    for (uint32_t h = 0; h < kt->nhosts; h++)
        bytes += (uint64_t)printf("# longpole-kernel: hostname=%s clock=mono root_pid=0\n#P:%u\n", S(kt->host[h].name),
                                  kt->host[h].ncpus);
    for (uint64_t r = 0;; r++) {
        uint64_t before = bytes;
        for (uint32_t h = 0; h < kt->nhosts; h++) {
            const lp_khost *k = &kt->host[h];
            if (!k->nev)
                continue;
            int64_t span = k->ev[k->nev - 1].ts - k->ev[0].ts + 1000000000;
            shift s = {(int64_t)r * span, (int32_t)(r * 1000000), r << 48};
            for (uint64_t i = 0; i < k->nev; i++) {
                if (line(stdout, &k->ev[i], &s, &bytes))
                    events++;
                else
                    skipped += r == 0;
            }
        }
        if (!want || bytes >= want || bytes == before)
            break;
    }
    fflush(stdout);
    fprintf(stderr, "events %" PRIu64 " bytes %" PRIu64 " skipped %" PRIu64 "\n", events, bytes, skipped);
    lp_ktrace_free(kt);
    lp_diags_release(&ds);
    return 0;
}
