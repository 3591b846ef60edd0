/* kctfw.c: the CTF packet writer of kgen (kctfw.h). */
#include "kctfw.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PKT (64 * 1024)
#define HDR 84 /* packet header 32 + context 52 bytes */

enum {
    K_SWITCH = 0, K_WAKING, K_WAKEUP, K_WAKEUP_NEW, K_FORK, K_EXEC, K_EXIT, K_FREE, K_STATEDUMP, K_IRQ_ENTRY,
    K_IRQ_EXIT, K_SOFTIRQ_RAISE, K_SOFTIRQ_ENTRY, K_SOFTIRQ_EXIT, K_HRT_ENTRY, K_HRT_EXIT, K_TIMER_ENTRY,
    K_TIMER_EXIT, K_IPI_ENTRY, K_IPI_EXIT, K_NET_OUT, K_NET_IN, K_DEV_QUEUE, K_DEV_RECV, K_CONNECT,
    K_BLOCK_ISSUE, K_BLOCK_COMPLETE, K_NFIXED
};

#define COMM "integer { size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; }"
static const char *const fixed[K_NFIXED][2] = {
    {"sched_switch", COMM " _prev_comm[16]; int32_t _prev_tid; int32_t _prev_prio; int64_t _prev_state; " COMM
                     " _next_comm[16]; int32_t _next_tid; int32_t _next_prio;"},
    {"sched_waking", COMM " _comm[16]; int32_t _tid; int32_t _prio; int32_t _target_cpu;"},
    {"sched_wakeup", COMM " _comm[16]; int32_t _tid; int32_t _prio; int32_t _target_cpu;"},
    {"sched_wakeup_new", COMM " _comm[16]; int32_t _tid; int32_t _prio; int32_t _target_cpu;"},
    {"sched_process_fork", COMM " _parent_comm[16]; int32_t _parent_tid; int32_t _parent_pid; " COMM
                           " _child_comm[16]; int32_t _child_tid; int32_t _child_pid;"},
    {"sched_process_exec", "string _filename; int32_t _tid; int32_t _old_tid;"},
    {"sched_process_exit", COMM " _comm[16]; int32_t _tid; int32_t _prio;"},
    {"sched_process_free", COMM " _comm[16]; int32_t _tid; int32_t _prio;"},
    {"lttng_statedump_process_state", "int32_t _tid; int32_t _pid; " COMM " _name[16]; int32_t _status; int32_t _cpu;"},
    {"irq_handler_entry", "int32_t _irq; string _name;"},
    {"irq_handler_exit", "int32_t _irq; int32_t _ret;"},
    {"irq_softirq_raise", "uint32_t _vec;"},
    {"irq_softirq_entry", "uint32_t _vec;"},
    {"irq_softirq_exit", "uint32_t _vec;"},
    {"timer_hrtimer_expire_entry", "hex64_t _hrtimer; int64_t _now; hex64_t _function;"},
    {"timer_hrtimer_expire_exit", "hex64_t _hrtimer;"},
    {"timer_expire_entry", "hex64_t _timer; int64_t _now; hex64_t _function;"},
    {"timer_expire_exit", "hex64_t _timer;"},
    {"x86_irq_vectors_reschedule_entry", "int32_t _vector;"},
    {"x86_irq_vectors_reschedule_exit", "int32_t _vector;"},
    {"inet_sock_local_out", "hex64_t _sk; uint32_t _seq; uint32_t _ack_seq; uint16_t _check; uint16_t _window; uint16_t _flags;"},
    {"inet_sock_local_in", "hex64_t _sk; uint32_t _seq; uint32_t _ack_seq; uint16_t _check; uint16_t _window; uint16_t _flags;"},
    {"net_dev_queue", "hex64_t _skbaddr; uint32_t _len; string _name;"},
    {"netif_receive_skb", "hex64_t _skbaddr; uint32_t _len; string _name;"},
    {"inet_connect", "hex64_t _sk; be32_t _saddr; be32_t _daddr; be16_t _sport; be16_t _dport;"},
    {"block_rq_issue", "uint32_t _dev; uint64_t _sector; uint32_t _nr_sector; uint32_t _bytes; uint32_t _rwbs; " COMM " _comm[16];"},
    {"block_rq_complete", "uint32_t _dev; uint64_t _sector; uint32_t _nr_sector; int32_t _errors; uint32_t _rwbs;"},
};

typedef struct dyn { /* syscall and other event classes, by (kind, name) */
    int kind;        /* 0 other, 1 syscall entry, 2 syscall exit */
    lp_str name;
} dyn;

typedef struct cpu {
    FILE *f;
    unsigned char buf[PKT];
    size_t used;
    int64_t tbeg, tend;
    uint64_t seq;
} cpu;

struct kctfw {
    char dir[4096], host[256];
    unsigned char uuid[16];
    uint32_t ncpus;
    cpu *c;
    dyn *d;
    size_t nd, capd;
    const lp_ktrace *kt;
    uint64_t bytes;
    int err;
};

static void le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static int flush(kctfw *w, uint32_t i)
{
    cpu *c = &w->c[i];
    if (c->used == 0)
        return 0;
    unsigned char *p = c->buf;
    le(p, 0xC1FC1FC1u, 4);
    memcpy(p + 4, w->uuid, 16);
    le(p + 20, 0, 4);            /* stream_id */
    le(p + 24, i, 8);            /* stream_instance_id */
    le(p + 32, (uint64_t)c->tbeg, 8);
    le(p + 40, (uint64_t)c->tend, 8);
    le(p + 48, (uint64_t)(HDR + c->used) * 8, 8); /* content_size, bits */
    le(p + 56, (uint64_t)PKT * 8, 8);             /* packet_size */
    le(p + 64, c->seq++, 8);
    le(p + 72, 0, 8);                             /* events_discarded */
    le(p + 80, i, 4);                             /* cpu_id */
    memset(p + HDR + c->used, 0, PKT - HDR - c->used);
    if (fwrite(p, 1, PKT, c->f) != PKT)
        return -1;
    w->bytes += PKT;
    c->used = 0;
    return 0;
}

kctfw *kctfw_open(const char *dir, const char *hostname, uint32_t ncpus)
{
    kctfw *w = calloc(1, sizeof *w);
    if (!w || (mkdir(dir, 0755) != 0 && errno != EEXIST)) {
        free(w);
        return NULL;
    }
    snprintf(w->dir, sizeof w->dir, "%s", dir);
    snprintf(w->host, sizeof w->host, "%s", hostname);
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *s = hostname; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    for (int i = 0; i < 16; i++)
        w->uuid[i] = (unsigned char)(h >> (8 * (i % 8))) ^ (unsigned char)(i * 37);
    w->ncpus = ncpus ? ncpus : 1;
    w->c = calloc(w->ncpus, sizeof *w->c);
    if (!w->c) {
        free(w);
        return NULL;
    }
    for (uint32_t i = 0; i < w->ncpus; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/channel0_%u", dir, i);
        w->c[i].f = fopen(p, "wb");
        if (!w->c[i].f)
            w->err = 1;
    }
    return w;
}

static int dyn_id(kctfw *w, int kind, lp_str name)
{
    for (size_t i = 0; i < w->nd; i++)
        if (w->d[i].kind == kind && w->d[i].name == name)
            return K_NFIXED + (int)i;
    if (w->nd == w->capd) {
        w->capd = w->capd ? 2 * w->capd : 64;
        dyn *n = realloc(w->d, w->capd * sizeof *n);
        if (!n)
            return -1;
        w->d = n;
    }
    w->d[w->nd] = (dyn){kind, name};
    return K_NFIXED + (int)w->nd++;
}

typedef struct enc {
    unsigned char b[512];
    size_t n;
} enc;

static void u(enc *x, uint64_t v, int bytes)
{
    le(x->b + x->n, v, bytes);
    x->n += (size_t)bytes;
}

static void be(enc *x, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        x->b[x->n + (size_t)i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    x->n += (size_t)bytes;
}

static void comm(enc *x, const char *s)
{
    memset(x->b + x->n, 0, 16);
    strncpy((char *)x->b + x->n, s, 15);
    x->n += 16;
}

static void str(enc *x, const char *pre, const char *s)
{
    size_t a = strlen(pre), b = strlen(s);
    if (a + b > 200)
        b = 200 - a;
    memcpy(x->b + x->n, pre, a);
    memcpy(x->b + x->n + a, s, b);
    x->n += a + b;
    x->b[x->n++] = 0;
}

static const char *S(const kctfw *w, lp_str s) { return s == LP_STR_NONE ? "" : lp_strtab_get(&w->kt->strs, s); }

/* The payload of e into x; the class id, or -1. */
static int payload(kctfw *w, const lp_kev *e, enc *x)
{
    switch (e->type) {
    case LP_KEV_SCHED_SWITCH:
        comm(x, S(w, e->name2)), u(x, (uint32_t)e->tid, 4), u(x, 120, 4), u(x, (uint64_t)e->a, 8);
        comm(x, S(w, e->name)), u(x, (uint32_t)e->tid2, 4), u(x, 120, 4);
        return K_SWITCH;
    case LP_KEV_SCHED_WAKING:
    case LP_KEV_SCHED_WAKEUP:
    case LP_KEV_SCHED_WAKEUP_NEW:
        comm(x, S(w, e->name)), u(x, (uint32_t)e->tid, 4), u(x, 120, 4), u(x, (uint32_t)e->a, 4);
        return e->type == LP_KEV_SCHED_WAKING ? K_WAKING : e->type == LP_KEV_SCHED_WAKEUP ? K_WAKEUP : K_WAKEUP_NEW;
    case LP_KEV_PROCESS_FORK:
        comm(x, ""), u(x, (uint32_t)e->tid, 4), u(x, (uint32_t)e->tid, 4);
        comm(x, S(w, e->name)), u(x, (uint32_t)e->tid2, 4), u(x, (uint32_t)(e->a >= 0 ? e->a : e->tid2), 4);
        return K_FORK;
    case LP_KEV_PROCESS_EXEC: str(x, "/bin/", S(w, e->name)), u(x, (uint32_t)e->tid, 4), u(x, (uint32_t)e->tid, 4); return K_EXEC;
    case LP_KEV_PROCESS_EXIT:
    case LP_KEV_PROCESS_FREE:
        comm(x, S(w, e->name)), u(x, (uint32_t)e->tid, 4), u(x, 120, 4);
        return e->type == LP_KEV_PROCESS_EXIT ? K_EXIT : K_FREE;
    case LP_KEV_STATEDUMP_PROCESS:
        u(x, (uint32_t)e->tid, 4), u(x, (uint32_t)e->tid2, 4), comm(x, S(w, e->name)), u(x, (uint32_t)e->a, 4);
        u(x, (uint32_t)e->b, 4);
        return K_STATEDUMP;
    case LP_KEV_IRQ_ENTRY: u(x, (uint32_t)e->a, 4), str(x, "", S(w, e->name)); return K_IRQ_ENTRY;
    case LP_KEV_IRQ_EXIT: u(x, (uint32_t)e->a, 4), u(x, (uint32_t)e->b, 4); return K_IRQ_EXIT;
    case LP_KEV_SOFTIRQ_RAISE: u(x, (uint32_t)e->a, 4); return K_SOFTIRQ_RAISE;
    case LP_KEV_SOFTIRQ_ENTRY: u(x, (uint32_t)e->a, 4); return K_SOFTIRQ_ENTRY;
    case LP_KEV_SOFTIRQ_EXIT: u(x, (uint32_t)e->a, 4); return K_SOFTIRQ_EXIT;
    case LP_KEV_HRTIMER_ENTRY: u(x, e->key, 8), u(x, (uint64_t)e->ts, 8), u(x, 0, 8); return K_HRT_ENTRY;
    case LP_KEV_HRTIMER_EXIT: u(x, e->key, 8); return K_HRT_EXIT;
    case LP_KEV_TIMER_ENTRY: u(x, e->key, 8), u(x, (uint64_t)e->ts, 8), u(x, 0, 8); return K_TIMER_ENTRY;
    case LP_KEV_TIMER_EXIT: u(x, e->key, 8); return K_TIMER_EXIT;
    case LP_KEV_IPI_ENTRY: u(x, (uint32_t)e->a, 4); return K_IPI_ENTRY;
    case LP_KEV_IPI_EXIT: u(x, (uint32_t)e->a, 4); return K_IPI_EXIT;
    case LP_KEV_NET_SEND:
    case LP_KEV_NET_RECV:
        if (e->flags & LP_KNET_DEV) {
            u(x, e->key, 8), u(x, (uint32_t)e->a, 4), str(x, "", "eth0");
            return e->type == LP_KEV_NET_SEND ? K_DEV_QUEUE : K_DEV_RECV;
        }
        u(x, e->key, 8), u(x, (uint32_t)e->a, 4), u(x, (uint32_t)e->b, 4), u(x, 0, 2), u(x, 0, 2), u(x, e->flags & 0xffff, 2);
        return e->type == LP_KEV_NET_SEND ? K_NET_OUT : K_NET_IN;
    case LP_KEV_SOCK_ADDR:
        u(x, e->key, 8), be(x, (uint32_t)e->a, 4), be(x, (uint32_t)e->b, 4), be(x, e->flags >> 16, 2), be(x, e->flags & 0xffff, 2);
        return K_CONNECT;
    case LP_KEV_BLOCK_ISSUE:
        u(x, (uint32_t)e->a, 4), u(x, (uint64_t)e->b, 8), u(x, e->flags, 4), u(x, e->flags * 512u, 4), u(x, 0, 4), comm(x, "");
        return K_BLOCK_ISSUE;
    case LP_KEV_BLOCK_COMPLETE:
        u(x, (uint32_t)e->a, 4), u(x, (uint64_t)e->b, 8), u(x, e->flags, 4), u(x, 0, 4), u(x, 0, 4);
        return K_BLOCK_COMPLETE;
    case LP_KEV_SYSCALL_ENTRY: return e->name == LP_STR_NONE ? -1 : dyn_id(w, 1, e->name);
    case LP_KEV_SYSCALL_EXIT:
        if (e->name == LP_STR_NONE)
            return -1;
        u(x, (uint64_t)e->a, 8);
        return dyn_id(w, 2, e->name);
    default: return e->name == LP_STR_NONE ? -1 : dyn_id(w, 0, e->name);
    }
}

int kctfw_event(kctfw *w, const lp_ktrace *kt, const lp_kev *e)
{
    w->kt = kt;
    enc x = {.n = 10};
    int id = payload(w, e, &x);
    if (id < 0)
        return 0;
    le(x.b, (uint64_t)id, 2);
    le(x.b + 2, (uint64_t)e->ts, 8);
    cpu *c = &w->c[e->cpu < w->ncpus ? e->cpu : 0];
    if (HDR + c->used + x.n > PKT && flush(w, (uint32_t)(c - w->c)))
        return -1;
    if (c->used == 0)
        c->tbeg = e->ts;
    c->tend = e->ts;
    memcpy(c->buf + HDR + c->used, x.b, x.n);
    c->used += x.n;
    return 0;
}

uint64_t kctfw_bytes(const kctfw *w) { return w->bytes; }

static void decl(FILE *m, int id, const char *name, const char *fields)
{
    fprintf(m, "event {\n\tname = \"%s\";\n\tid = %d;\n\tstream_id = 0;\n\tfields := struct { %s };\n};\n\n", name, id, fields);
}

static void uuid_str(const unsigned char *u, char *s)
{
    snprintf(s, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
             u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

int kctfw_close(kctfw *w, uint64_t *bytes)
{
    int bad = w->err;
    for (uint32_t i = 0; i < w->ncpus; i++) {
        if (w->c[i].f && flush(w, i))
            bad = 1;
        if (w->c[i].f && fclose(w->c[i].f))
            bad = 1;
    }
    char p[4200], u[40];
    snprintf(p, sizeof p, "%s/metadata", w->dir);
    FILE *m = fopen(p, "w");
    if (!m)
        bad = 1;
    else {
        uuid_str(w->uuid, u);
        fprintf(m, "/* CTF 1.8 */\n\n"
                   "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
                   "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
                   "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
                   "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
                   "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
                   "typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"
                   "typealias integer { size = 64; align = 8; signed = false; base = 16; } := hex64_t;\n"
                   "typealias integer { size = 32; align = 8; signed = false; byte_order = be; base = 16; } := be32_t;\n"
                   "typealias integer { size = 16; align = 8; signed = false; byte_order = be; base = 16; } := be16_t;\n\n"
                   "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
                   "\tpacket.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id; uint64_t stream_instance_id; };\n};\n\n"
                   "env {\n\thostname = \"%s\";\n\tdomain = \"kernel\";\n\tsysname = \"Linux\";\n"
                   "\ttracer_name = \"lttng-modules\";\n\ttracer_major = 2;\n\ttracer_minor = 8;\n\ttracer_patchlevel = 0;\n};\n\n"
                   "clock {\n\tname = \"monotonic\";\n\tuuid = \"%s\";\n\tdescription = \"Monotonic Clock\";\n"
                   "\tfreq = 1000000000;\n\toffset = 0;\n};\n\n"
                   "typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;\n\n"
                   "struct packet_context {\n\tuint64_clock_monotonic_t timestamp_begin;\n\tuint64_clock_monotonic_t timestamp_end;\n"
                   "\tuint64_t content_size;\n\tuint64_t packet_size;\n\tuint64_t packet_seq_num;\n\tuint64_t events_discarded;\n\tuint32_t cpu_id;\n};\n\n"
                   "struct event_header_large {\n\tuint16_t id;\n\tuint64_clock_monotonic_t timestamp;\n} align(8);\n\n"
                   "stream {\n\tid = 0;\n\tevent.header := struct event_header_large;\n\tpacket.context := struct packet_context;\n};\n\n",
                u, w->host, u);
        for (int i = 0; i < K_NFIXED; i++)
            decl(m, i, fixed[i][0], fixed[i][1]);
        for (size_t i = 0; i < w->nd; i++) {
            char name[300];
            const char *n = w->kt ? S(w, w->d[i].name) : "?";
            snprintf(name, sizeof name, "%s%s", w->d[i].kind == 1 ? "syscall_entry_" : w->d[i].kind == 2 ? "syscall_exit_" : "", n);
            decl(m, K_NFIXED + (int)i, name, w->d[i].kind == 2 ? "int64_t _ret;" : "");
        }
        long sz = ftell(m);
        w->bytes += sz > 0 ? (uint64_t)sz : 0;
        if (fclose(m))
            bad = 1;
    }
    *bytes = w->bytes;
    free(w->c);
    free(w->d);
    free(w);
    return bad ? -1 : 0;
}
