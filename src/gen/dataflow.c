/* dataflow.c: the `dataflow` trace generator (gen.h): a discrete-event simulation of a
 * Flink-like streaming job, deterministic for a given seed (same options, same trace,
 * byte for byte).
 *
 * Model
 *  - A chain of operators op[0] -> ... -> op[n-1]; operator k runs on workers
 *    "<name>.<i>", i < parallelism, plus a worker "jobmanager" when checkpoint_ns > 0.
 *    Every worker of op[k] has a channel to every worker of op[k+1]. The exchange into
 *    op[k+1] is rebalance (round-robin per record, each worker continuing where its
 *    previous batch stopped) or keyed: each record goes to worker 0 (the hot key) with
 *    probability `skew`, else to a uniformly drawn worker, so worker 0 gets
 *    skew + (1-skew)/p of the records. For small jobs (p <= 16, tables of at most 2^20
 *    entries) a buffer's counts are drawn at once: Bin(n, pi0) for worker 0, then the
 *    rest over the others by conditional binomials (alias tables: p - 1 random numbers
 *    a buffer, the same multinomial distribution); otherwise one draw per record, 16
 *    bits through a 65536-slot table when every worker gets >= 64 slots, else exact
 *    32-bit draws.
 *    Operators forward every record they receive (no filtering or expansion).
 *  - Sources (op[0]) read external input: batches of `batch` records become available
 *    to source i every batch * p0 / rate seconds (jittered), the first after
 *    (i+1)/p0 of that interval. A source that is ready before its next batch waits for
 *    the external system: an `io` activity until the batch (or a barrier) arrives. A
 *    source that is behind (backpressure) reads the next batch at once. Reading a
 *    batch is `processing` (cost_ns of op[0] per record).
 *  - Every other worker handles its network input one item at a time, FIFO by
 *    arrival, from max(arrival, end of its previous work): a data buffer of n records
 *    is `deserialization` (n * deser_ns), at whose end one credit goes back to the
 *    buffer's sender (control message kind=credit, 16 bytes), then `processing`
 *    (n * cost_ns, times slow_factor on slow_worker).
 *  - Output (every operator but the last): each record goes into the output buffer
 *    of its channel. A buffer is sent when it holds `batch` records; at the end of
 *    handling an input item, buffers open for FLUSH_NS (5 ms, a buffer timeout like
 *    Flink's) are sent too, and a barrier flushes every open buffer. (An idle worker
 *    has no timer: its open buffers wait for its next input or barrier.) Sending a
 *    buffer of n records takes a credit of its channel, then `serialization`
 *    (n * ser_ns) and `buffer` (buffer_ns); the data message (kind=data,
 *    bytes = n * record_bytes) is sent at the end of the buffer activity. Each
 *    channel starts with `credits` credits; a sender without credit stops, recording
 *    nothing, until the credit arrives: that gap ends at the credit's receive and the
 *    trace model makes it `waiting`. Idle time for lack of input likewise ends at the
 *    receive of the next data (or barrier).
 *  - Network: a message of b bytes arrives net_latency_ns + b * net_ns_per_byte
 *    (jittered) after it is sent, but no earlier than b * net_ns_per_byte (>= 1 ns)
 *    after the previous message of the same sender arrived: each worker has one FIFO
 *    link. So every channel is FIFO (barriers stay behind the data sent before them).
 *  - Checkpoints: every checkpoint_ns the job manager, unless the previous checkpoint
 *    is still running (one at a time, as Flink's default; that tick is skipped), does
 *    a `scheduling` activity and sends a barrier (kind=barrier, 64 bytes) to every
 *    source. A worker handles each barrier in its input FIFO as a `barrier` activity;
 *    when it has had the barrier from all its inputs (the job manager, for a source),
 *    it flushes its open output buffers and sends the barrier to every downstream
 *    worker on the data channels (no credit needed), or, on the last operator, an ack
 *    (kind=ack) to the job manager, which does a `scheduling` activity once all acks
 *    are in. The job manager's time between checkpoints ends at its timer: a message
 *    (kind=timer, 0 bytes) it sends itself at the end of its previous activity and
 *    receives at the tick (SnailTrail Assumption 2 allows a waiting activity to end at
 *    a message from the same worker), so that idle time is `waiting`.
 *  - Every duration (activities, network delays, source inter-arrival times) is
 *    multiplied by 1 + jitter * u, u uniform in [-1, 1] in steps of 2^-15 (splitmix64
 *    seeded with `seed`), rounded to integer ns, at least 1 ns, at most MAX_DUR.
 *  - The simulation stops at the first event after duration_ns, or once it has made
 *    max_records records (activities + messages, halves counted apiece: what
 *    lp_builder_records() would say). Messages are emitted when they arrive, so those
 *    in flight at the stop are not in the trace. No worker starts anything at or
 *    after duration_ns, but what it started before is kept whole; sources still
 *    waiting for input get an `io` activity up to the stop.
 *
 * Invariants (the builder checks them when the trace is built, dataflow_build.c; any
 * diagnostic is a bug here and makes the run fail with LP_ERR_DATA): every activity
 * lasts >= 1 ns; a worker's activities never overlap and are logged per worker, in
 * start order; every message is received after it is sent, is sent at the end of its
 * sender's latest activity (checked as it is sent: sent_ok), and messages are logged in receive order with send times in order per
 * sender (so neither end needs sorting); message ids (the event sequence numbers) are
 * unique.
 *
 * Implementation: events (message arrivals, source wake-ups, checkpoint ticks) sit in
 * a 4-ary heap ordered by (time, sequence number), so ties go in creation order. A
 * worker's timeline is decided ahead of the current time as far as is certain:
 * queued input arrived before now, so before anything still to come, and credits of a
 * channel only grow while its sender is busy; a worker goes on until it must send on
 * a channel without credit (it resumes when a credit arrives, from the later of the
 * two times) or has no known input. Sources read ahead up to the earliest time a
 * barrier could reach them. Records go to the log (dataflow_int.h): activities per
 * worker (8 bytes each), messages in receive order (32 bytes each); the outputs
 * (dataflow_build.c, dataflow_text.c) read it. No allocation per record or event beyond
 * amortised growth.
 */
#include "dataflow_int.h"
#include "longpole/base/alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLUSH_NS 5000000       /* output buffer timeout */
#define BARRIER_NS 2000.0      /* a barrier activity */
#define SCHED_NS 10000.0       /* a job-manager scheduling activity */
#define MAX_CHANNELS (UINT64_C(1) << 24)
#define MAX_COST 1e12          /* ns per record, per buffer or per message */
#define MAX_DUR (INT64_C(1) << 40) /* longest activity or network delay (18 minutes) */
#define MAX_TIME (INT64_C(1) << 62) /* longest simulated time: no sum of times overflows */

enum { EV_DATA = 0, EV_BARRIER, EV_CREDIT, EV_READY, EV_ACK, EV_TICK };
/* Worker states. In every state the worker's timeline is decided up to `free`, which
 * may lie ahead of the current time. */
enum {
    ST_IDLE = 0, /* nothing queued: the next input is handled from max(arrival, free) */
    ST_BLOCKED,  /* must send on blk_ch, which has no credit */
    ST_IOWAIT,   /* source waiting for its next batch (EV_READY pending) since iosince */
    ST_DONE      /* reached the end of the simulated time */
};

#define ITEM_BARRIER UINT32_MAX   /* item.n of a barrier */
#define SEND_BARRIER UINT32_MAX   /* sendent.j: send barriers to every downstream worker */
#define NO_TIME INT64_MIN

/* An event: the heap holds (time, sequence << SLOT_BITS | slot) pairs; the rest lives in
 * a pool slot. */
#define SLOT_BITS 26
typedef struct hent {
    int64_t t;
    uint64_t k;
} hent;

typedef struct evdata {
    int64_t sent;      /* send time of the message this event delivers */
    uint32_t from, to; /* simulation worker indices (the job manager is nw) */
    uint32_t ch;       /* EV_DATA/EV_BARRIER: sender's index in its operator */
    uint32_t n;        /* records of a data buffer */
    uint32_t kind;
} evdata;

typedef struct ev {
    int64_t t;
    uint64_t seq;      /* unique, increasing: ties in time go in creation order; message id */
    evdata d;
} ev;

typedef struct item { uint32_t from, n; } item;     /* an input buffer or barrier */
typedef struct sendent { uint32_t j, n; } sendent;  /* a buffer to send on channel j */
typedef struct openent { int64_t t; uint32_t j; } openent;

typedef struct gworker {
    uint32_t bw;            /* builder worker id */
    uint32_t op, idx;       /* operator, index within it */
    uint32_t state;         /* ST_* */
    uint32_t nbar;          /* barriers received in the current checkpoint */
    int64_t free;           /* end of the worker's decided timeline */
    double pcost;           /* processing ns per record */
    item *q;                /* input FIFO (ring, power-of-two capacity) */
    uint32_t qhead, qlen, qcap;
    uint64_t ochan;         /* first output channel */
    sendent *sl;            /* buffers decided to be sent */
    uint32_t slpos, sllen;
    uint64_t blk_ch;        /* ST_BLOCKED: the channel without credit */
    openent *oq;            /* output buffers by opening time (ring, lazy deletion) */
    uint32_t oqhead, oqlen, oqcap;
    uint32_t rr;            /* round-robin position */
    /* sources */
    double avail_d;         /* when the next batch is available */
    int64_t avail;
    int64_t iosince;        /* ST_IOWAIT: start of the io activity */
    int64_t ready_at;       /* time of the pending EV_READY, or NO_TIME */
} gworker;

/* Alias tables of binomial distributions Bin(m, theta_s) for stages s < nst and
 * m <= batch: table (s, m) has m + 1 entries from off[s * (batch + 1) + m]. */
typedef struct binom {
    uint32_t nst, batch;
    uint32_t *off;
    uint32_t *thr;          /* keep the drawn index when the low 32 random bits are below */
    uint32_t *alias;        /* else take this one */
} binom;

typedef struct sim {
    const lp_gen_dataflow *o;
    df_log *log;            /* where the records go */
    df_msg_fn on_msgs;      /* called when log->msgs holds `chunk` messages (or NULL) */
    void *ctx;
    size_t chunk;
    lp_error *err;
    lp_status st;
    uint64_t rng;
    uint64_t bits;          /* random bits left over for jitter */
    uint32_t nbits;         /* 16-bit draws left in bits */
    double j0, j1;          /* jitter factor = j0 + j1 * u16 */
    hent *heap;             /* 4-ary min-heap */
    size_t nheap;           /* the heap has room for cappool entries */
    evdata *pool;
    uint32_t *freeslot;
    size_t npool, nfree, cappool;
    uint64_t seq;
    gworker *w;
    uint32_t nw, nops;
    uint32_t opfirst[LP_GEN_MAXOPS + 1];
    uint32_t par[LP_GEN_MAXOPS];
    int keyed[LP_GEN_MAXOPS];
    uint32_t *pend, *credit;
    int64_t *opent;
    int64_t *lastarr;       /* per sending worker: arrival of its latest message */
    uint64_t nrec;          /* records made so far (activities, messages, halves) */
    uint64_t nch;
    uint32_t *cnt, *touched;
    int has_jm, ck_inflight;
    int64_t jm_free;
    int64_t next_tick;      /* time of the pending EV_TICK */
    uint32_t jm_bar_pending;/* barriers from the job manager not yet delivered */
    int64_t src_horizon;    /* no barrier can reach a source before this time */
    uint32_t acks;
    double deser, ser, bufns, lat, nspb, jit, rbytes, src_interval;
    uint64_t skew_thr;
    double skew_scale[LP_GEN_MAXOPS];
    uint16_t *ktab[LP_GEN_MAXOPS]; /* keyed routing: 16-bit draw -> worker, or NULL (exact draws) */
    binom *btab[LP_GEN_MAXOPS];    /* keyed routing by counts (build_btab), or NULL */
    uint32_t batch;
} sim;

/* ---- helpers ---------------------------------------------------------------------- */

static lp_status fail_nomem(sim *s)
{
    if (!s->st)
        s->st = lp_error_set(s->err, LP_ERR_NOMEM, "out of memory");
    return s->st;
}

static inline uint64_t rnd(sim *s)
{
    uint64_t z = (s->rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* 1 + jitter * u, u uniform in [-1, 1] (in steps of 2^-15: 16 random bits a draw). */
static inline double jitter(sim *s)
{
    if (!s->nbits) {
        s->bits = rnd(s);
        s->nbits = 4;
    }
    uint32_t u = (uint32_t)(s->bits & 0xffff);
    s->bits >>= 16;
    s->nbits--;
    return s->j0 + u * s->j1;
}

/* x ns rounded to an integer in [1, MAX_DUR]. */
static inline int64_t clamp_ns(double x)
{
    if (x < 1.0)
        return 1;
    return x < (double)MAX_DUR ? (int64_t)(x + 0.5) : MAX_DUR;
}

/* A duration of `base` ns with jitter, rounded, in [1, MAX_DUR]. */
static inline int64_t dur(sim *s, double base)
{
    return clamp_ns(s->jit > 0 ? base * jitter(s) : base);
}

/* Branch-free (time, sequence) order: the outcome of heap comparisons is unpredictable.
 * Times are >= 0, so (t, k) compares as one unsigned 128-bit number (a compare and a
 * subtract with borrow). */
__extension__ typedef unsigned __int128 u128;
static inline int h_less(const hent *a, const hent *b)
{
    return ((u128)(uint64_t)a->t << 64 | a->k) < ((u128)(uint64_t)b->t << 64 | b->k);
}

/* Is `sent` the end of worker `from`'s latest activity? Every message is sent so (the
 * invariant that keeps sends out of the gaps of the timeline; dataflow_bin.c relies on
 * it); a violation fails the run as a generator bug. */
static int sent_ok(sim *s, uint32_t from, int64_t sent)
{
    const df_acts *a = &s->log->acts[from];
    if (a->nacts && a->last == sent)
        return 1;
    if (!s->st)
        s->st = lp_error_set(s->err, LP_ERR_DATA, "dataflow generator bug: worker %u sends at %lld, not at the end of "
                             "its latest activity", from, (long long)sent);
    return 0;
}

static void push(sim *s, int kind, int64_t t, int64_t sent, uint32_t from, uint32_t to, uint32_t ch, uint32_t n)
{
    uint32_t slot;
    if (kind != EV_READY && kind != EV_TICK && !sent_ok(s, from, sent))
        return;
    if (s->seq >= (UINT64_C(1) << (64 - SLOT_BITS)) - 1) {
        if (!s->st)
            s->st = lp_error_set(s->err, LP_ERR_LIMIT, "dataflow: more than 2^%d events", 64 - SLOT_BITS);
        return;
    }
    if (s->nfree) {
        slot = s->freeslot[--s->nfree];
    } else {
        if (s->npool >= ((size_t)1 << SLOT_BITS)) {
            if (!s->st)
                s->st = lp_error_set(s->err, LP_ERR_LIMIT, "dataflow: more than %u events in flight",
                                     1u << SLOT_BITS);
            return;
        }
        if (s->npool == s->cappool) {
            size_t cap = s->cappool;
            void *p = s->pool;
            if (lp_grow(&p, &cap, s->npool + 1, sizeof(evdata))) {
                fail_nomem(s);
                return;
            }
            s->pool = p;
            uint32_t *f = lp_reallocarray(s->freeslot, cap, sizeof *f);
            if (!f) {
                fail_nomem(s);
                return;
            }
            s->freeslot = f;
            hent *h = lp_reallocarray(s->heap, cap, sizeof *h);
            if (!h) {
                fail_nomem(s);
                return;
            }
            s->heap = h;
            s->cappool = cap; /* only once all three have room */
        }
        slot = (uint32_t)s->npool++;
    }
    s->pool[slot] = (evdata){sent, from, to, ch, n, (uint32_t)kind};
    hent e = {t, (++s->seq) << SLOT_BITS | slot};
    size_t i = s->nheap++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!h_less(&e, &s->heap[parent]))
            break;
        s->heap[i] = s->heap[parent];
        i = parent;
    }
    s->heap[i] = e;
}

static void pop(sim *s, ev *out)
{
    hent top = s->heap[0];
    uint32_t slot = (uint32_t)(top.k & ((1u << SLOT_BITS) - 1));
    out->t = top.t;
    out->seq = top.k >> SLOT_BITS;
    out->d = s->pool[slot];
    s->freeslot[s->nfree++] = slot;
    hent last = s->heap[--s->nheap];
    size_t n = s->nheap, i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t best = c;
        if (c + 4 <= n) {
            size_t b1 = h_less(&s->heap[c + 1], &s->heap[c]) ? c + 1 : c;
            size_t b2 = h_less(&s->heap[c + 3], &s->heap[c + 2]) ? c + 3 : c + 2;
            best = h_less(&s->heap[b2], &s->heap[b1]) ? b2 : b1;
        } else {
            for (size_t x = c + 1; x < n; x++)
                best = h_less(&s->heap[x], &s->heap[best]) ? x : best;
        }
        if (!h_less(&s->heap[best], &last))
            break;
        s->heap[i] = s->heap[best];
        i = best;
    }
    if (n)
        s->heap[i] = last;
}

/* ---- the record log (dataflow_int.h) ------------------------------------------------- */

static int abuf_grow(sim *s, df_acts *a, size_t need)
{
    size_t ncap = a->cap < 256 ? 256 : a->cap + a->cap / 2;
    ncap = ncap < need ? need : ncap;
    uint64_t *wd = lp_reallocarray(a->wd, ncap, sizeof *wd);
    if (!wd)
        return fail_nomem(s);
    a->wd = wd;
    a->cap = ncap;
    return 0;
}

static int amark(sim *s, df_acts *a)
{
    if (a->nmarks == a->markcap) {
        size_t cap = a->markcap;
        void *p = a->marks;
        if (lp_grow(&p, &cap, a->nmarks + 1, sizeof(df_amark)))
            return fail_nomem(s);
        a->marks = p;
        a->markcap = cap;
    }
    a->marks[a->nmarks++] = (df_amark){a->n, a->last};
    return 0;
}

/* Record activity [start, end] of type `type` on simulation worker i. */
static inline void act_on(sim *s, uint32_t i, int64_t start, int64_t end, uint8_t type)
{
    df_acts *a = &s->log->acts[i];
    if (a->n + 3 > a->cap && abuf_grow(s, a, a->n + 3))
        return;
    if ((a->nacts & (DF_ACT_MARK - 1)) == 0 && a->nacts && amark(s, a))
        return;
    a->nacts++;
    uint64_t skip = (uint64_t)start - (uint64_t)a->last, len = (uint64_t)end - (uint64_t)start;
    if (skip < DF_FIT && len < DF_FIT) {
        a->wd[a->n++] = type | len << 4 | skip << 34;
    } else {
        a->wd[a->n++] = DF_ESCAPE | (uint64_t)type << 4;
        a->wd[a->n++] = (uint64_t)start;
        a->wd[a->n++] = (uint64_t)end;
    }
    a->last = end;
    s->nrec++;
}

static inline void act(sim *s, const gworker *w, int64_t start, int64_t end, uint8_t type)
{
    act_on(s, (uint32_t)(w - s->w), start, end, type);
}

/* Record the message event e delivers (kind DF_*, n records of data). */
static void emit_msg(sim *s, const ev *e, uint32_t kind, uint32_t n)
{
    if (s->st)
        return;
    df_log *l = s->log;
    df_msg m = {e->t, e->d.sent, e->seq, e->d.from, e->d.to, kind, n};
    if (df_log_msg(l, &m)) {
        fail_nomem(s);
        return;
    }
    s->nrec += s->o->halves ? 2 : 1;
    if (s->on_msgs && l->nmsgs >= s->chunk) {
        lp_status st = s->on_msgs(s->ctx, l, s->err);
        if (st)
            s->st = st;
    }
}

/* Arrival time of a message of `bytes` sent by simulation worker `from` at `sent`: the
 * network delay, but no earlier than its transfer time after the sender's previous
 * message (one FIFO link per worker). This also keeps every channel FIFO, and the
 * messages in time order per sender as well as per receiver (they are emitted in
 * arrival order), which spares the builder and the analyses a sort. */
static inline int64_t arrival(sim *s, uint32_t from, int64_t sent, double bytes)
{
    int64_t arr = sent + dur(s, s->lat + bytes * s->nspb);
    int64_t after = s->lastarr[from] + clamp_ns(bytes * s->nspb);
    if (arr < after)
        arr = after;
    s->lastarr[from] = arr;
    return arr;
}

static inline int is_last(const sim *s, const gworker *w) { return w->op + 1 == s->nops; }

/* ---- per-worker queues ---------------------------------------------------------------- */

static void q_push(sim *s, gworker *w, uint32_t from, uint32_t n)
{
    if (w->qlen == w->qcap) {
        uint32_t ncap = w->qcap ? w->qcap * 2 : 16;
        item *nq = lp_reallocarray(NULL, ncap, sizeof *nq);
        if (!nq) {
            fail_nomem(s);
            return;
        }
        for (uint32_t i = 0; i < w->qlen; i++)
            nq[i] = w->q[(w->qhead + i) & (w->qcap - 1)];
        lp_free(w->q);
        w->q = nq;
        w->qhead = 0;
        w->qcap = ncap;
    }
    w->q[(w->qhead + w->qlen++) & (w->qcap - 1)] = (item){from, n};
}

static void oq_push(sim *s, gworker *w, uint32_t j, int64_t t)
{
    if (w->oqlen == w->oqcap) {
        uint32_t ncap = w->oqcap ? w->oqcap * 2 : 16;
        openent *nq = lp_reallocarray(NULL, ncap, sizeof *nq);
        if (!nq) {
            fail_nomem(s);
            return;
        }
        for (uint32_t i = 0; i < w->oqlen; i++)
            nq[i] = w->oq[(w->oqhead + i) & (w->oqcap - 1)];
        lp_free(w->oq);
        w->oq = nq;
        w->oqhead = 0;
        w->oqcap = ncap;
    }
    w->oq[(w->oqhead + w->oqlen++) & (w->oqcap - 1)] = (openent){t, j};
}

/* The send list holds at most 2 * p + 1 entries (one full buffer and one timed-out
 * remainder per channel, or every channel and the barrier marker), allocated so. */
static inline void sl_push(gworker *w, uint32_t j, uint32_t n) { w->sl[w->sllen++] = (sendent){j, n}; }

/* ---- worker behaviour ------------------------------------------------------------------ */

/* Add k records to output channel j at time t. */
static inline void chan_add(sim *s, gworker *w, uint32_t j, uint32_t k, int64_t t)
{
    uint64_t ch = w->ochan + j;
    uint32_t p = s->pend[ch];
    if (p == 0) {
        s->opent[ch] = t;
        oq_push(s, w, j, t);
    }
    p += k;
    if (p >= s->batch) {
        sl_push(w, j, s->batch);
        p -= s->batch;
        if (p) {
            s->opent[ch] = t;
            oq_push(s, w, j, t);
        }
    }
    s->pend[ch] = p;
}

/* Unkeyed routing: round robin over the p channels, from w->rr. */
static void route_rr(sim *s, gworker *w, uint32_t n, int64_t t, uint32_t p)
{
    if (n >= p) {
        uint32_t base = n / p, rem = n % p;
        for (uint32_t i = 0, j = w->rr; i < p; i++) {
            chan_add(s, w, j, base + (i < rem), t);
            if (++j == p)
                j = 0;
        }
        w->rr = (uint32_t)(((uint64_t)w->rr + rem) % p);
    } else {
        uint32_t j = w->rr;
        for (uint32_t i = 0; i < n; i++) {
            chan_add(s, w, j, 1, t);
            if (++j == p)
                j = 0;
        }
        w->rr = j;
    }
}

/* Keyed routing with binomial tables (build_btab). */
static void route_binom(sim *s, gworker *w, uint32_t n, int64_t t, uint32_t dop, uint32_t p)
{
    /* counts drawn at once (build_btab): the hot worker's Bin(n, pi0), then the rest
     * spread uniformly over the cold workers by conditional binomials */
    const binom *bt = s->btab[dop];
    uint32_t m = n;
    for (uint32_t j = 0; j + 1 < p; j++) {
        uint64_t r = rnd(s);
        uint32_t o = bt->off[j * (bt->batch + 1) + m];
        uint32_t i = (uint32_t)(((r >> 32) * (m + 1)) >> 32);
        uint32_t c = (uint32_t)r < bt->thr[o + i] ? i : bt->alias[o + i];
        if (c)
            chan_add(s, w, j, c, t);
        m -= c;
    }
    if (m)
        chan_add(s, w, p - 1, m, t);
}

/* Keyed routing record by record: a channel drawn for each record (through the 16-bit
 * table, packed in the bytes of a word when p <= 8, else exactly), then the counts
 * added channel by channel. */
static void route_keyed(sim *s, gworker *w, uint32_t n, int64_t t, uint32_t dop, uint32_t p)
{
    uint32_t *cnt = s->cnt, *touched = s->touched, nt = 0;
    const uint16_t *tab = s->ktab[dop];
    const int packed = tab && p <= 8;
    const int track = !packed && p > 2 * n; /* few records over many channels: list the ones drawn */
#define BUMP(jj)                                                                                   \
do {                                                                                           \
    uint32_t j_ = (jj);                                                                        \
    if (track && !cnt[j_])                                                                     \
        touched[nt++] = j_;                                                                    \
    cnt[j_]++;                                                                                 \
} while (0)
    if (packed) { /* as below, counting in the bytes of one word */
        for (uint32_t i = 0; i < n;) {
            uint32_t m = n - i < 252 ? n - i : 252, k = 0;
            uint64_t acc = 0;
            for (; k + 4 <= m; k += 4) {
                uint64_t r = rnd(s);
                acc += UINT64_C(1) << (tab[r & 0xffff] << 3);
                acc += UINT64_C(1) << (tab[(r >> 16) & 0xffff] << 3);
                acc += UINT64_C(1) << (tab[(r >> 32) & 0xffff] << 3);
                acc += UINT64_C(1) << (tab[r >> 48] << 3);
            }
            if (k < m) {
                uint64_t r = rnd(s);
                for (; k < m; k++, r >>= 16)
                    acc += UINT64_C(1) << (tab[r & 0xffff] << 3);
            }
            for (uint32_t j = 0; j < p; j++, acc >>= 8)
                cnt[j] += (uint32_t)(acc & 0xff);
            i += m;
        }
    } else if (tab) { /* 16-bit draws through the table, four per random number */
        uint32_t i = 0;
        for (; i + 4 <= n; i += 4) {
            uint64_t r = rnd(s);
            BUMP(tab[r & 0xffff]);
            BUMP(tab[(r >> 16) & 0xffff]);
            BUMP(tab[(r >> 32) & 0xffff]);
            BUMP(tab[r >> 48]);
        }
        if (i < n) {
            uint64_t r = rnd(s);
            for (; i < n; i++, r >>= 16)
                BUMP(tab[r & 0xffff]);
        }
    } else { /* exact 32-bit draws, two per random number */
        uint64_t thr = s->skew_thr;
        double scale = s->skew_scale[dop];
        for (uint32_t i = 0; i < n; i += 2) {
            uint64_t r = rnd(s);
            for (uint32_t h = 0; h < 2 && i + h < n; h++, r >>= 32) {
                uint32_t u = (uint32_t)r, j = 0;
                if (u >= thr) {
                    j = (uint32_t)((double)(u - thr) * scale);
                    j = j < p ? j : p - 1;
                }
                BUMP(j);
            }
        }
    }
#undef BUMP
    if (!track) {
        for (uint32_t j = 0; j < p; j++)
            if (cnt[j]) {
                chan_add(s, w, j, cnt[j], t);
                cnt[j] = 0;
            }
    } else {
        for (uint32_t i = 0; i < nt; i++) {
            uint32_t j = touched[i];
            chan_add(s, w, j, cnt[j], t);
            cnt[j] = 0;
        }
    }
}

/* Buffer timeout: the buffers open for FLUSH_NS by t are sent as they are. */
static void flush_timeouts(sim *s, gworker *w, int64_t t)
{
    while (w->oqlen) {
        const openent *e = &w->oq[w->oqhead];
        uint64_t ch = w->ochan + e->j;
        if (s->pend[ch] && s->opent[ch] == e->t) {
            if (e->t + FLUSH_NS > t)
                break;
            sl_push(w, e->j, s->pend[ch]);
            s->pend[ch] = 0;
        }
        w->oqhead = (w->oqhead + 1) & (w->oqcap - 1);
        w->oqlen--;
    }
}

/* Route n output records of worker w (done at time t) and decide which buffers to send. */
static void route(sim *s, gworker *w, uint32_t n, int64_t t)
{
    uint32_t dop = w->op + 1, p = s->par[dop];
    if (!s->keyed[dop])
        route_rr(s, w, n, t, p);
    else if (s->btab[dop])
        route_binom(s, w, n, t, dop, p);
    else
        route_keyed(s, w, n, t, dop, p);
    flush_timeouts(s, w, t);
}

/* Send a buffer of n records on channel j: serialization, buffer, message. */
static int64_t send_data(sim *s, gworker *w, uint32_t j, uint32_t n, int64_t cur)
{
    uint64_t ch = w->ochan + j;
    s->credit[ch]--;
    int64_t d = dur(s, n * s->ser);
    act(s, w, cur, cur + d, LP_TYPE_SERIALIZATION);
    cur += d;
    d = dur(s, s->bufns);
    act(s, w, cur, cur + d, LP_TYPE_BUFFER);
    cur += d;
    uint32_t me = (uint32_t)(w - s->w), to = s->opfirst[w->op + 1] + j;
    push(s, EV_DATA, arrival(s, me, cur, (double)n * s->rbytes), cur, me, to, w->idx, n);
    return cur;
}

static void send_barriers(sim *s, gworker *w, int64_t cur)
{
    uint32_t dop = w->op + 1, p = s->par[dop];
    uint32_t me = (uint32_t)(w - s->w);
    for (uint32_t j = 0; j < p; j++)
        push(s, EV_BARRIER, arrival(s, me, cur, DF_CTRL_BYTES), cur, me, s->opfirst[dop] + j, w->idx, 0);
}

static int64_t do_data(sim *s, gworker *w, item it, int64_t cur)
{
    int64_t d = dur(s, it.n * s->deser);
    act(s, w, cur, cur + d, LP_TYPE_DESERIALIZATION);
    cur += d;
    /* return the credit to the sender */
    uint32_t me = (uint32_t)(w - s->w), from = s->opfirst[w->op - 1] + it.from;
    push(s, EV_CREDIT, arrival(s, me, cur, DF_CREDIT_BYTES), cur, me, from, 0, 0);
    d = dur(s, it.n * w->pcost);
    act(s, w, cur, cur + d, LP_TYPE_PROCESSING);
    cur += d;
    if (!is_last(s, w))
        route(s, w, it.n, cur);
    return cur;
}

static int64_t do_barrier(sim *s, gworker *w, int64_t cur)
{
    int64_t d = dur(s, BARRIER_NS);
    act(s, w, cur, cur + d, LP_TYPE_BARRIER);
    cur += d;
    uint32_t nup = w->op ? s->par[w->op - 1] : 1;
    if (++w->nbar < nup)
        return cur;
    w->nbar = 0;
    if (is_last(s, w)) {
        uint32_t me = (uint32_t)(w - s->w);
        push(s, EV_ACK, arrival(s, me, cur, DF_CTRL_BYTES), cur, me, s->nw, 0, 0);
        return cur;
    }
    uint32_t p = s->par[w->op + 1];
    for (uint32_t j = 0; j < p; j++) {
        uint64_t ch = w->ochan + j;
        if (s->pend[ch]) {
            sl_push(w, j, s->pend[ch]);
            s->pend[ch] = 0;
        }
    }
    sl_push(w, SEND_BARRIER, 0);
    return cur;
}

static int64_t do_read(sim *s, gworker *w, int64_t cur)
{
    int64_t d = dur(s, s->batch * w->pcost);
    act(s, w, cur, cur + d, LP_TYPE_PROCESSING);
    cur += d;
    w->avail_d += s->jit > 0 ? s->src_interval * jitter(s) : s->src_interval;
    w->avail = (int64_t)ceil(w->avail_d);
    if (!is_last(s, w))
        route(s, w, s->batch, cur);
    return cur;
}

/* Worker w is available at `now` (its decided timeline ends at or before now): carry
 * on as far as is certain. */
static void wk_run(sim *s, gworker *w, int64_t now)
{
    int64_t cur = w->free > now ? w->free : now;
    int source = w->op == 0;
    while (!s->st) {
        if (cur >= s->o->duration_ns) { /* decide nothing that starts after the end */
            w->free = cur;
            w->state = ST_DONE;
            return;
        }
        while (w->slpos < w->sllen) {
            sendent e = w->sl[w->slpos];
            if (e.j == SEND_BARRIER) {
                send_barriers(s, w, cur);
                w->slpos++;
                continue;
            }
            uint64_t ch = w->ochan + e.j;
            if (!s->credit[ch]) { /* go on when a credit arrives (at once if before cur) */
                w->free = cur;
                w->state = ST_BLOCKED;
                w->blk_ch = ch;
                return;
            }
            cur = send_data(s, w, e.j, e.n, cur);
            w->slpos++;
        }
        w->slpos = w->sllen = 0;
        if (w->qlen) { /* arrived before now, so before anything still to come */
            item it = w->q[w->qhead];
            w->qhead = (w->qhead + 1) & (w->qcap - 1);
            w->qlen--;
            cur = it.n == ITEM_BARRIER ? do_barrier(s, w, cur) : do_data(s, w, it, cur);
            continue;
        }
        w->free = cur;
        if (!source) {
            w->state = ST_IDLE;
            return;
        }
        /* A source reads its next batch once available, unless a barrier may arrive
         * before that: then it waits for the batch (or the barrier) to arrive. */
        if (w->avail < s->o->duration_ns && (w->avail <= now || w->avail < s->src_horizon) &&
            !(s->o->max_records && s->nrec >= s->o->max_records)) { /* (without a job manager the
                                                                       horizon is unbounded) */
            if (w->avail > cur) {
                act(s, w, cur, w->avail, LP_TYPE_IO);
                cur = w->avail;
            }
            cur = do_read(s, w, cur);
            continue;
        }
        w->state = ST_IOWAIT;
        w->iosince = cur;
        if (w->ready_at == NO_TIME) {
            w->ready_at = w->avail > cur ? w->avail : cur;
            push(s, EV_READY, w->ready_at, 0, (uint32_t)(w - s->w), 0, 0, 0);
        }
        return;
    }
}

/* Input (data or barrier) arrived at worker w at time t. */
static void deliver(sim *s, gworker *w, uint32_t from, uint32_t n, int64_t t)
{
    q_push(s, w, from, n);
    if (w->state == ST_IDLE) {
        wk_run(s, w, t);
    } else if (w->state == ST_IOWAIT) {
        if (t > w->iosince) {
            act(s, w, w->iosince, t, LP_TYPE_IO);
            w->free = t;
        }
        wk_run(s, w, t);
    }
}

static void jm_act(sim *s, int64_t t)
{
    int64_t start = t > s->jm_free ? t : s->jm_free, d = dur(s, SCHED_NS);
    act_on(s, s->nw, start, start + d, LP_TYPE_SCHEDULING);
    s->jm_free = start + d;
}

static void handle(sim *s, const ev *e)
{
    int kind = (int)e->d.kind;
    switch (kind) {
    case EV_DATA:
        emit_msg(s, e, DF_DATA, e->d.n);
        deliver(s, &s->w[e->d.to], e->d.ch, e->d.n, e->t);
        break;
    case EV_BARRIER:
        emit_msg(s, e, DF_BARRIER, 0);
        if (e->d.from == s->nw && --s->jm_bar_pending == 0)
            s->src_horizon = s->next_tick;
        deliver(s, &s->w[e->d.to], e->d.ch, ITEM_BARRIER, e->t);
        break;
    case EV_CREDIT: {
        emit_msg(s, e, DF_CREDIT, 0);
        gworker *w = &s->w[e->d.to];
        uint64_t ch = w->ochan + s->w[e->d.from].idx;
        s->credit[ch]++;
        if (w->state == ST_BLOCKED && w->blk_ch == ch)
            wk_run(s, w, e->t);
        break;
    }
    case EV_READY: {
        gworker *w = &s->w[e->d.from];
        w->ready_at = NO_TIME;
        if (w->state != ST_IOWAIT)
            break;
        int64_t need = w->avail > w->iosince ? w->avail : w->iosince;
        if (e->t < need) {
            w->ready_at = need;
            push(s, EV_READY, need, 0, e->d.from, 0, 0, 0);
            break;
        }
        if (e->t > w->iosince) {
            act(s, w, w->iosince, e->t, LP_TYPE_IO);
            w->free = e->t;
        }
        wk_run(s, w, e->t);
        break;
    }
    case EV_ACK:
        emit_msg(s, e, DF_ACK, 0);
        if (s->ck_inflight && ++s->acks == s->par[s->nops - 1]) {
            jm_act(s, e->t);
            s->ck_inflight = 0;
        }
        break;
    case EV_TICK:
        s->next_tick = s->o->checkpoint_ns <= INT64_MAX - e->t ? e->t + s->o->checkpoint_ns : INT64_MAX;
        if (s->next_tick < s->o->duration_ns)
            push(s, EV_TICK, s->next_tick, 0, s->nw, s->nw, 0, 0);
        if (s->ck_inflight) { /* skip this one */
            if (!s->jm_bar_pending)
                s->src_horizon = s->next_tick;
        } else {
            s->jm_bar_pending = s->par[0];
            if (s->jm_free < e->t) {
                /* the job manager waited for its timer: a message to itself (SnailTrail
                 * Assumption 2), so that idle time is `waiting`, not unknown work */
                ev tm = *e;
                tm.d.sent = s->jm_free;
                tm.d.from = tm.d.to = s->nw;
                if (sent_ok(s, s->nw, tm.d.sent))
                    emit_msg(s, &tm, DF_TIMER, 0);
            }
            jm_act(s, e->t);
            for (uint32_t i = 0; i < s->par[0]; i++)
                push(s, EV_BARRIER, arrival(s, s->nw, s->jm_free, DF_CTRL_BYTES), s->jm_free, s->nw, i, 0, 0);
            s->ck_inflight = 1;
            s->acks = 0;
        }
        break;
    default:
        break;
    }
}

/* ---- setup and the run --------------------------------------------------------------- */

static int bad_num(double v, double lo, double hi) { return !isfinite(v) || v < lo || v > hi; }

static int valid_name(const char *s, size_t n)
{
    if (n == 0 || n > 31)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.'))
            return 0;
    }
    return 1;
}

lp_status df_validate(const lp_gen_dataflow *o, lp_error *err)
{
    if (o->nops < 1 || o->nops > LP_GEN_MAXOPS)
        return lp_error_set(err, LP_ERR_ARG, "dataflow: need 1 to %d operators, got %u", LP_GEN_MAXOPS, o->nops);
    uint64_t nch = 0;
    for (uint32_t k = 0; k < o->nops; k++) {
        const lp_gen_op *op = &o->ops[k];
        size_t len = strnlen(op->name, sizeof op->name);
        if (len == sizeof op->name || !valid_name(op->name, len))
            return lp_error_set(err, LP_ERR_ARG,
                                "dataflow: operator %u: name must be 1-31 characters of [A-Za-z0-9_.-]", k + 1);
        for (uint32_t m = 0; m < k; m++)
            if (strcmp(o->ops[m].name, op->name) == 0)
                return lp_error_set(err, LP_ERR_ARG, "dataflow: operator name '%s' used twice", op->name);
        if (op->parallelism < 1 || op->parallelism > 4096)
            return lp_error_set(err, LP_ERR_ARG, "dataflow: operator '%s': parallelism %u is not in 1..4096",
                                op->name, op->parallelism);
        if (bad_num(op->cost_ns, 0, MAX_COST))
            return lp_error_set(err, LP_ERR_ARG, "dataflow: operator '%s': cost %g ns per record is not in 0..%g",
                                op->name, op->cost_ns, MAX_COST);
        if (k)
            nch += (uint64_t)o->ops[k - 1].parallelism * op->parallelism;
    }
    if (nch > MAX_CHANNELS)
        return lp_error_set(err, LP_ERR_LIMIT, "dataflow: %llu channels between workers (at most %llu)",
                            (unsigned long long)nch, (unsigned long long)MAX_CHANNELS);
    if (bad_num(o->rate, 1e-6, 1e12))
        return lp_error_set(err, LP_ERR_ARG, "dataflow: rate %g records/s is not in 1e-6..1e12", o->rate);
    if (o->duration_ns <= 0 || o->duration_ns > MAX_TIME)
        return lp_error_set(err, LP_ERR_ARG, "dataflow: duration must be in 1..2^62 ns");
    if (o->batch < 1 || o->batch > (1u << 20))
        return lp_error_set(err, LP_ERR_ARG, "dataflow: batch %u is not in 1..%u records", o->batch, 1u << 20);
    if (o->credits < 1 || o->credits > (1u << 20))
        return lp_error_set(err, LP_ERR_ARG, "dataflow: credits %u is not in 1..%u", o->credits, 1u << 20);
    struct {
        const char *name;
        double v;
    } costs[] = {{"serialization cost", o->ser_ns},      {"deserialization cost", o->deser_ns},
                 {"buffer cost", o->buffer_ns},           {"network latency", o->net_latency_ns},
                 {"network ns per byte", o->net_ns_per_byte}};
    for (size_t i = 0; i < sizeof costs / sizeof costs[0]; i++)
        if (bad_num(costs[i].v, 0, MAX_COST))
            return lp_error_set(err, LP_ERR_ARG, "dataflow: %s %g is not in 0..%g", costs[i].name, costs[i].v,
                                MAX_COST);
    if ((double)o->batch * o->ops[0].parallelism / o->rate * 1e9 > 1e18)
        return lp_error_set(err, LP_ERR_ARG, "dataflow: rate %g records/s is too low (a source batch every 1e18 ns or more)",
                            o->rate);
    if (o->checkpoint_ns < 0)
        return lp_error_set(err, LP_ERR_ARG, "dataflow: checkpoint interval must not be negative");
    if (bad_num(o->jitter, 0, 1))
        return lp_error_set(err, LP_ERR_ARG, "dataflow: jitter %g is not in 0..1", o->jitter);
    if (bad_num(o->skew, 0, 1))
        return lp_error_set(err, LP_ERR_ARG, "dataflow: skew %g is not in 0..1", o->skew);
    if (bad_num(o->slow_factor, 1e-6, 1e6))
        return lp_error_set(err, LP_ERR_ARG, "dataflow: slow factor %g is not in 1e-6..1e6", o->slow_factor);
    if (strnlen(o->slow_worker, sizeof o->slow_worker) == sizeof o->slow_worker)
        return lp_error_set(err, LP_ERR_ARG, "dataflow: slow worker name is not terminated");
    if (o->slow_worker[0]) {
        int found = 0;
        for (uint32_t k = 0; k < o->nops && !found; k++) {
            size_t len = strlen(o->ops[k].name);
            const char *x = o->slow_worker + len;
            if (strncmp(o->slow_worker, o->ops[k].name, len) != 0 || *x != '.' || x[1] < '0' || x[1] > '9' ||
                (x[1] == '0' && x[2]))
                continue;
            char *e;
            unsigned long i = strtoul(x + 1, &e, 10);
            found = !*e && i < o->ops[k].parallelism;
        }
        if (!found)
            return lp_error_set(err, LP_ERR_ARG, "dataflow: slow worker '%s' is not a worker of this job",
                                o->slow_worker);
    }
    return LP_OK;
}

/* Vose's alias table of weights w[0..n) (not all zero) into thr/alias: index i is kept
 * when the low 32 random bits are below thr[i], else alias[i] is taken. Only IEEE
 * +, -, *, / (no libm), so the tables, and the traces, are the same on every machine. */
static void make_alias(const double *w, uint32_t n, double *scaled, uint32_t *small, uint32_t *large, uint32_t *thr,
                       uint32_t *alias)
{
    double sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += w[i];
    uint32_t ns = 0, nl = 0;
    for (uint32_t i = 0; i < n; i++) {
        scaled[i] = w[i] * n / sum;
        if (scaled[i] < 1.0)
            small[ns++] = i;
        else
            large[nl++] = i;
    }
    while (ns && nl) {
        uint32_t a = small[--ns], g = large[nl - 1];
        thr[a] = (uint32_t)(scaled[a] * 4294967296.0);
        alias[a] = g;
        scaled[g] = (scaled[g] + scaled[a]) - 1.0;
        if (scaled[g] < 1.0) {
            nl--;
            small[ns++] = g;
        }
    }
    while (nl) { /* left over: (close to) 1 */
        uint32_t g = large[--nl];
        thr[g] = UINT32_MAX;
        alias[g] = g;
    }
    while (ns) { /* rounding left these just below 1 */
        uint32_t a = small[--ns];
        thr[a] = UINT32_MAX;
        alias[a] = a;
    }
}

/* Binomial weights of Bin(m, theta), 0 < theta < 1, into w[0..m]: unnormalised, by the
 * ratio of neighbours, rescaled before they overflow. */
static void binom_weights(uint32_t m, double theta, double *w)
{
    double r = theta / (1.0 - theta);
    w[0] = 1.0;
    for (uint32_t k = 0; k < m; k++) {
        w[k + 1] = w[k] * ((double)(m - k) / (double)(k + 1)) * r;
        if (w[k + 1] > 1e280)
            for (uint32_t i = 0; i <= k + 1; i++)
                w[i] *= 1e-280;
    }
}

/* Keyed routing into operator k by counts: a buffer of n records sends Bin(n, pi0) to
 * the hot worker 0 (pi0 = skew + (1 - skew) / p) and spreads the rest uniformly over
 * the others (worker j of the cold ones gets Bin(rest, 1 / (p - j))), which is the
 * multinomial distribution of routing each record on its own, drawn with p - 1 random
 * numbers instead of one per record. Only for small jobs: at most 16 workers and
 * tables of at most 2^20 entries. */
#define BTAB_MAXP 16
#define BTAB_MAXENT (UINT32_C(1) << 20)
static lp_status build_btab(sim *s, uint32_t k)
{
    uint32_t p = s->par[k], batch = s->batch, nst = p - 1;
    uint64_t per = (uint64_t)(batch + 1) * (batch + 2) / 2, nent = per * nst;
    if (p > BTAB_MAXP || p < 2 || nent > BTAB_MAXENT)
        return LP_OK;
    binom *bt = lp_calloc(1, sizeof *bt);
    double *w = lp_malloc((size_t)(batch + 1) * sizeof *w), *sc = lp_malloc((size_t)(batch + 1) * sizeof *sc);
    uint32_t *sm = lp_malloc((size_t)(batch + 1) * sizeof *sm), *lg = lp_malloc((size_t)(batch + 1) * sizeof *lg);
    if (bt) {
        bt->off = lp_malloc((size_t)nst * (batch + 1) * sizeof *bt->off);
        bt->thr = lp_malloc((size_t)nent * sizeof *bt->thr);
        bt->alias = lp_malloc((size_t)nent * sizeof *bt->alias);
    }
    if (!bt || !w || !sc || !sm || !lg || !bt->off || !bt->thr || !bt->alias) {
        if (bt) {
            lp_free(bt->off);
            lp_free(bt->thr);
            lp_free(bt->alias);
        }
        lp_free(bt);
        lp_free(w);
        lp_free(sc);
        lp_free(sm);
        lp_free(lg);
        return fail_nomem(s);
    }
    bt->nst = nst;
    bt->batch = batch;
    double skew = s->o->skew, pi0 = skew + (1.0 - skew) / p;
    uint32_t pos = 0;
    for (uint32_t st = 0; st < nst; st++)
        for (uint32_t m = 0; m <= batch; m++) {
            double theta = st == 0 ? pi0 : 1.0 / (double)(p - st);
            bt->off[st * (batch + 1) + m] = pos;
            if (m == 0 || theta >= 1.0 || theta <= 0.0) { /* a sure outcome: all or none */
                uint32_t sure = m == 0 || theta <= 0.0 ? 0 : m;
                for (uint32_t i = 0; i <= m; i++) {
                    bt->thr[pos + i] = 0;
                    bt->alias[pos + i] = sure;
                }
            } else {
                binom_weights(m, theta, w);
                make_alias(w, m + 1, sc, sm, lg, bt->thr + pos, bt->alias + pos);
            }
            pos += m + 1;
        }
    lp_free(w);
    lp_free(sc);
    lp_free(sm);
    lp_free(lg);
    s->btab[k] = bt;
    return LP_OK;
}

/* The routing table of keyed operator k: 65536 slots shared out in proportion to each
 * worker's probability (largest remainders first). Only when every cold worker gets at
 * least 64 slots (a relative error below 1/128); otherwise routing uses exact draws. */
static lp_status build_ktab(sim *s, uint32_t k)
{
    uint32_t p = s->par[k];
    double skew = s->o->skew, cold = (1.0 - skew) / p;
    if (cold * 65536.0 < 64.0 || p > 65535)
        return LP_OK;
    uint32_t *slots = lp_calloc(p, sizeof *slots);
    uint16_t *tab = lp_malloc(65536 * sizeof *tab);
    if (!slots || !tab) {
        lp_free(slots);
        lp_free(tab);
        return fail_nomem(s);
    }
    uint32_t used = 0;
    for (uint32_t j = 0; j < p; j++) {
        slots[j] = (uint32_t)floor(((j == 0 ? skew : 0.0) + cold) * 65536.0);
        used += slots[j];
    }
    /* the leftover slots (fewer than p) go to the largest fractional parts: the hot
     * worker's first, then the cold ones (all equal) in order */
    if (used < 65536) {
        double f0 = (skew + cold) * 65536.0 - floor((skew + cold) * 65536.0);
        double fc = cold * 65536.0 - floor(cold * 65536.0);
        if (f0 >= fc) {
            slots[0]++;
            used++;
        }
        for (uint32_t j = 1; j < p && used < 65536; j++, used++)
            slots[j]++;
        if (used < 65536)
            slots[0] += 65536 - used;
    }
    uint32_t pos = 0;
    for (uint32_t j = 0; j < p; j++)
        for (uint32_t c = 0; c < slots[j] && pos < 65536; c++)
            tab[pos++] = (uint16_t)j;
    while (pos < 65536)
        tab[pos++] = 0;
    lp_free(slots);
    s->ktab[k] = tab;
    return LP_OK;
}

static lp_status setup(sim *s)
{
    const lp_gen_dataflow *o = s->o;
    s->nops = o->nops;
    uint32_t maxp = 1;
    s->nw = 0;
    for (uint32_t k = 0; k < o->nops; k++) {
        s->opfirst[k] = s->nw;
        s->par[k] = o->ops[k].parallelism;
        s->keyed[k] = k > 0 && o->ops[k].keyed;
        s->nw += s->par[k];
        maxp = s->par[k] > maxp ? s->par[k] : maxp;
    }
    s->opfirst[o->nops] = s->nw;
    s->has_jm = o->checkpoint_ns > 0;
    s->w = lp_calloc(s->nw, sizeof *s->w);
    s->cnt = lp_calloc(maxp, sizeof *s->cnt);
    s->touched = lp_calloc(maxp, sizeof *s->touched);
    if (!s->w || !s->cnt || !s->touched)
        return fail_nomem(s);
    /* channels */
    s->nch = 0;
    for (uint32_t k = 0; k + 1 < o->nops; k++)
        s->nch += (uint64_t)s->par[k] * s->par[k + 1];
    size_t nch = s->nch ? (size_t)s->nch : 1;
    s->pend = lp_calloc(nch, sizeof *s->pend);
    s->credit = lp_malloc(nch * sizeof *s->credit);
    s->opent = lp_calloc(nch, sizeof *s->opent);
    s->lastarr = lp_calloc((size_t)s->nw + 1, sizeof *s->lastarr);
    if (!s->pend || !s->credit || !s->opent || !s->lastarr)
        return fail_nomem(s);
    for (uint64_t c = 0; c < s->nch; c++)
        s->credit[c] = o->credits;
    /* workers */
    uint64_t ch = 0;
    for (uint32_t k = 0; k < o->nops; k++) {
        for (uint32_t i = 0; i < s->par[k]; i++) {
            gworker *w = &s->w[s->opfirst[k] + i];
            char name[64];
            df_worker_name(s->log, s->opfirst[k] + i, name);
            w->op = k;
            w->idx = i;
            w->pcost = o->ops[k].cost_ns;
            if (o->slow_worker[0] && strcmp(name, o->slow_worker) == 0)
                w->pcost *= o->slow_factor;
            w->ochan = ch;
            if (k + 1 < o->nops) {
                ch += s->par[k + 1];
                w->sl = lp_malloc(((size_t)2 * s->par[k + 1] + 2) * sizeof *w->sl);
                if (!w->sl)
                    return fail_nomem(s);
            }
            w->ready_at = NO_TIME;
            w->state = ST_IDLE;
        }
    }
    /* parameters */
    s->batch = o->batch;
    s->deser = o->deser_ns;
    s->ser = o->ser_ns;
    s->bufns = o->buffer_ns;
    s->lat = o->net_latency_ns;
    s->nspb = o->net_ns_per_byte;
    s->rbytes = o->record_bytes;
    s->jit = o->jitter;
    s->j1 = 2.0 * o->jitter / 65536.0;
    s->j0 = 1.0 - o->jitter + o->jitter / 65536.0;
    s->skew_thr = (uint64_t)(o->skew * 4294967296.0);
    if (s->skew_thr > (UINT64_C(1) << 32))
        s->skew_thr = UINT64_C(1) << 32;
    for (uint32_t k = 0; k < o->nops; k++)
        s->skew_scale[k] =
            s->skew_thr < (UINT64_C(1) << 32) ? (double)s->par[k] / (double)((UINT64_C(1) << 32) - s->skew_thr) : 0;
    for (uint32_t k = 1; k < o->nops; k++)
        if (s->keyed[k] && (build_btab(s, k) || (!s->btab[k] && build_ktab(s, k))))
            return s->st;
    s->rng = o->seed;
    s->src_interval = (double)o->batch * s->par[0] / o->rate * 1e9;
    /* sources wait for their first batch from time 0, staggered */
    for (uint32_t i = 0; i < s->par[0]; i++) {
        gworker *w = &s->w[i];
        w->avail_d = s->src_interval * (i + 1) / s->par[0];
        w->avail = (int64_t)ceil(w->avail_d);
        w->state = ST_IOWAIT;
        w->iosince = 0;
        w->ready_at = w->avail;
        push(s, EV_READY, w->avail, 0, i, 0, 0, 0);
    }
    s->src_horizon = INT64_MAX;
    if (s->has_jm) {
        jm_act(s, 0); /* the job manager deploys the job at time 0 */
        s->next_tick = s->src_horizon = o->checkpoint_ns;
        push(s, EV_TICK, o->checkpoint_ns, 0, s->nw, s->nw, 0, 0);
    }
    return s->st;
}

static void release(sim *s)
{
    if (s->w)
        for (uint32_t i = 0; i < s->nw; i++) {
            lp_free(s->w[i].q);
            lp_free(s->w[i].sl);
            lp_free(s->w[i].oq);
        }
    lp_free(s->w);
    lp_free(s->cnt);
    lp_free(s->touched);
    lp_free(s->pend);
    lp_free(s->credit);
    lp_free(s->opent);
    lp_free(s->lastarr);
    lp_free(s->heap);
    lp_free(s->pool);
    lp_free(s->freeslot);
    for (uint32_t k = 0; k < LP_GEN_MAXOPS; k++) {
        lp_free(s->ktab[k]);
        if (s->btab[k]) {
            lp_free(s->btab[k]->off);
            lp_free(s->btab[k]->thr);
            lp_free(s->btab[k]->alias);
            lp_free(s->btab[k]);
        }
    }
}

/* ---- the log and the run -------------------------------------------------------------- */

lp_status df_log_init(df_log *log, const lp_gen_dataflow *o, lp_error *err)
{
    memset(log, 0, sizeof *log);
    log->o = o;
    for (uint32_t k = 0; k < o->nops; k++) {
        log->opfirst[k] = log->nw;
        log->nw += o->ops[k].parallelism;
    }
    log->opfirst[o->nops] = log->nw;
    log->has_jm = o->checkpoint_ns > 0;
    log->acts = lp_calloc((size_t)log->nw + 1, sizeof *log->acts);
    log->dseen = lp_calloc((size_t)o->batch + 1, 1);
    if (!log->acts || !log->dseen) {
        df_log_release(log);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    return LP_OK;
}

uint32_t df_worker_op(const df_log *log, uint32_t i)
{
    uint32_t k = 0;
    while (k < log->o->nops && i >= log->opfirst[k + 1])
        k++;
    return k;
}

size_t df_worker_name(const df_log *log, uint32_t i, char *buf)
{
    uint32_t k = df_worker_op(log, i);
    if (k == log->o->nops) {
        memcpy(buf, "jobmanager", 11);
        return 10;
    }
    return (size_t)snprintf(buf, 64, "%s.%u", log->o->ops[k].name, i - log->opfirst[k]);
}

void df_log_release(df_log *log)
{
    if (log->acts)
        for (uint32_t i = 0; i <= log->nw; i++) {
            lp_free(log->acts[i].wd);
            lp_free(log->acts[i].marks);
        }
    lp_free(log->acts);
    for (int f = 0; f < DF_NF; f++)
        lp_free(log->ms[f]);
    lp_free(log->marks);
    lp_free(log->dsizes);
    lp_free(log->dseen);
    memset(log, 0, sizeof *log);
}

int df_log_dsize(df_log *l, uint32_t n)
{
    if (n > l->o->batch) /* never made by the simulation; kept out of the table */
        return 0;
    void *p = l->dsizes;
    if (lp_grow(&p, &l->dsizecap, l->ndsizes + 1, sizeof(uint32_t)))
        return -1;
    l->dsizes = p;
    l->dsizes[l->ndsizes++] = n;
    l->dseen[n] = 1;
    return 0;
}

int df_log_reserve(df_log *l)
{
    if (!l->room) {
        size_t room = SIZE_MAX;
        for (int f = 0; f < DF_NF; f++) {
            if (l->mlen[f] + 64 * DF_VARINT_MAX > l->mcap[f]) {
                void *p = l->ms[f];
                if (lp_grow(&p, &l->mcap[f], l->mlen[f] + 64 * DF_VARINT_MAX, 1))
                    return -1;
                l->ms[f] = p;
            }
            size_t r = (l->mcap[f] - l->mlen[f]) / DF_VARINT_MAX;
            room = r < room ? r : room;
        }
        l->room = room;
    }
    if (l->nmsgs % DF_MSG_MARK == 0) {
        if (l->nmarks == l->markcap) {
            void *p = l->marks;
            if (lp_grow(&p, &l->markcap, l->nmarks + 1, sizeof(df_mark)))
                return -1;
            l->marks = p;
        }
        df_mark *mk = &l->marks[l->nmarks++];
        memcpy(mk->off, l->mlen, sizeof mk->off);
        mk->recv = l->cur_recv;
        mk->id = l->cur_id;
    }
    return 0;
}

void df_log_drop(df_log *log)
{
    memset(log->mlen, 0, sizeof log->mlen);
    log->nmsgs = log->nmarks = log->room = 0;
    log->base_recv = log->cur_recv;
    log->base_id = log->cur_id;
}

lp_status df_log_run(df_log *log, const lp_gen_dataflow *o, lp_error *err)
{
    memset(log, 0, sizeof *log);
    if (!o)
        return lp_error_set(err, LP_ERR_ARG, "dataflow: no options");
    lp_status st = df_validate(o, err);
    if (!st && (st = df_log_init(log, o, err)) == LP_OK && (st = df_simulate(log, NULL, NULL, 0, err)) != LP_OK)
        df_log_release(log);
    return st;
}

lp_status df_simulate(df_log *log, df_msg_fn on_msgs, void *ctx, size_t chunk, lp_error *err)
{
    const lp_gen_dataflow *o = log->o;
    sim s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.log = log;
    s.on_msgs = on_msgs;
    s.ctx = ctx;
    s.chunk = chunk ? chunk : 1;
    s.err = err;
    if (!setup(&s)) {
        ev e;
        e.t = 0;
        int64_t tend = o->duration_ns;
        uint64_t nev = 0;
        while (s.nheap && !s.st) {
            if (s.heap[0].t > o->duration_ns)
                break;
            if (o->max_records && s.nrec >= o->max_records) {
                tend = e.t;
                break;
            }
            pop(&s, &e);
            handle(&s, &e);
            if (o->progress && (++nev & 0xffff) == 0) {
                int stop = o->max_records ? o->progress(o->progress_ctx, "simulating", s.nrec, o->max_records)
                                          : o->progress(o->progress_ctx, "simulating", (uint64_t)(e.t / 1000000),
                                                        (uint64_t)(o->duration_ns / 1000000));
                if (stop && !s.st)
                    s.st = lp_error_set(err, LP_ERR_ARG, "cancelled");
            }
        }
        /* sources still waiting for input wait until the end */
        for (uint32_t i = 0; i < s.par[0] && !s.st; i++)
            if (s.w[i].state == ST_IOWAIT && tend > s.w[i].iosince)
                act(&s, &s.w[i], s.w[i].iosince, tend, LP_TYPE_IO);
    }
    release(&s);
    return s.st;
}

/* ---- options ----------------------------------------------------------------------- */

/* Default processing cost of an operator named `name` (ns per record). */
static double default_cost(const char *name, size_t n)
{
    if (n == 6 && memcmp(name, "source", 6) == 0)
        return 200;
    if (n == 7 && memcmp(name, "flatmap", 7) == 0)
        return 2000;
    if (n == 5 && memcmp(name, "count", 5) == 0)
        return 600;
    return 1000;
}

void lp_gen_dataflow_defaults(lp_gen_dataflow *o)
{
    memset(o, 0, sizeof *o);
    static const struct {
        const char *name;
        uint32_t par;
        int keyed;
    } ops[] = {{"source", 4, 0}, {"flatmap", 4, 0}, {"count", 4, 1}};
    for (uint32_t k = 0; k < 3; k++) {
        snprintf(o->ops[k].name, sizeof o->ops[k].name, "%s", ops[k].name);
        o->ops[k].parallelism = ops[k].par;
        o->ops[k].cost_ns = default_cost(ops[k].name, strlen(ops[k].name));
        o->ops[k].keyed = ops[k].keyed;
    }
    o->nops = 3;
    o->rate = 1e6;
    o->duration_ns = INT64_C(10000000000);
    o->max_records = 0;
    o->skew = 0;
    o->slow_worker[0] = '\0';
    o->slow_factor = 1;
    o->batch = 64;
    o->credits = 4;
    o->ser_ns = 100;
    o->deser_ns = 100;
    o->buffer_ns = 2000;
    o->net_latency_ns = 20000;
    o->net_ns_per_byte = 0.1;
    o->record_bytes = 100;
    o->checkpoint_ns = INT64_C(1000000000);
    o->jitter = 0.2;
    o->seed = 1;
    o->halves = 0;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int field_is(const char *f, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(f, word, n) == 0;
}

/* The ':'-separated fields of one operator's text it[0 .. len) (at most 4, trimmed). */
static lp_status op_fields(const char *it, size_t len, int ilen, const char **f, size_t *fl, uint32_t *nfp,
                           lp_error *err)
{
    uint32_t nf = 0;
    for (size_t a = 0;;) {
        size_t z = a;
        while (z < len && it[z] != ':')
            z++;
        if (nf == 4)
            return lp_error_set(err, LP_ERR_ARG,
                                "operator '%.*s': too many fields (expected name:parallelism[:cost_ns][:keyed|:rebalance])",
                                ilen, it);
        size_t fa = a, fz = z;
        while (fa < fz && is_space(it[fa]))
            fa++;
        while (fz > fa && is_space(it[fz - 1]))
            fz--;
        f[nf] = it + fa;
        fl[nf++] = fz - fa;
        if (z == len)
            break;
        a = z + 1;
    }
    *nfp = nf;
    return LP_OK;
}

/* A cost field as a number (NaN if it is not one). */
static double op_cost(const char *f, size_t fl)
{
    char buf[64];
    double v = NAN;
    if (fl > 0 && fl < sizeof buf) {
        memcpy(buf, f, fl);
        buf[fl] = '\0';
        int numeric = 1;
        for (size_t i = 0; i < fl; i++)
            if (!((buf[i] >= '0' && buf[i] <= '9') || buf[i] == '.' || buf[i] == 'e' || buf[i] == 'E' ||
                  buf[i] == '+' || buf[i] == '-'))
                numeric = 0;
        char *e = NULL;
        if (numeric) {
            v = strtod(buf, &e);
            if (e != buf + fl)
                v = NAN;
        }
    }
    return v;
}

/* Operator ops[nops] from its text it[0 .. len): name, parallelism, then an optional
 * cost and an optional exchange (*exch: -1 not given, 0 rebalance, 1 keyed). */
static lp_status parse_op(lp_gen_op *ops, uint32_t nops, const char *it, size_t len, int *exch, lp_error *err)
{
    int ilen = len > 200 ? 200 : (int)len;
    const char *f[5];
    size_t fl[5];
    uint32_t nf = 0;
    lp_status st = op_fields(it, len, ilen, f, fl, &nf, err);
    if (st)
        return st;
    lp_gen_op *op = &ops[nops];
    if (!valid_name(f[0], fl[0]))
        return lp_error_set(err, LP_ERR_ARG,
                            "operator '%.*s': the name must be 1 to 31 characters of [A-Za-z0-9_.-]", ilen, it);
    memcpy(op->name, f[0], fl[0]);
    op->name[fl[0]] = '\0';
    for (uint32_t m = 0; m < nops; m++)
        if (strcmp(ops[m].name, op->name) == 0)
            return lp_error_set(err, LP_ERR_ARG, "operator list: operator name '%s' used twice", op->name);
    if (nf < 2)
        return lp_error_set(err, LP_ERR_ARG, "operator '%.*s': missing parallelism (expected name:parallelism...)",
                            ilen, it);
    uint64_t par = 0;
    int ok = fl[1] > 0 && fl[1] <= 5;
    for (size_t i = 0; ok && i < fl[1]; i++) {
        if (f[1][i] < '0' || f[1][i] > '9')
            ok = 0;
        else
            par = par * 10 + (uint64_t)(f[1][i] - '0');
    }
    if (!ok || par < 1 || par > 4096)
        return lp_error_set(err, LP_ERR_ARG, "operator '%.*s': parallelism '%.*s' is not an integer in 1..4096",
                            ilen, it, (int)(fl[1] > 32 ? 32 : fl[1]), f[1]);
    op->parallelism = (uint32_t)par;
    op->cost_ns = default_cost(f[0], fl[0]);
    *exch = -1;
    int have_cost = 0;
    for (uint32_t k = 2; k < nf; k++) {
        int fk = fl[k] > 32 ? 32 : (int)fl[k];
        if (field_is(f[k], fl[k], "keyed") || field_is(f[k], fl[k], "rebalance")) {
            if (*exch >= 0)
                return lp_error_set(err, LP_ERR_ARG, "operator '%.*s': exchange given twice", ilen, it);
            *exch = f[k][0] == 'k';
            continue;
        }
        if (have_cost || *exch >= 0)
            return lp_error_set(err, LP_ERR_ARG,
                                "operator '%.*s': field '%.*s' is not 'keyed' or 'rebalance'", ilen, it, fk, f[k]);
        double v = op_cost(f[k], fl[k]);
        if (bad_num(v, 0, MAX_COST))
            return lp_error_set(err, LP_ERR_ARG,
                                "operator '%.*s': cost '%.*s' is not a number of ns per record in 0..%g "
                                "(nor 'keyed' or 'rebalance')",
                                ilen, it, fk, f[k], MAX_COST);
        op->cost_ns = v;
        have_cost = 1;
    }
    return LP_OK;
}

lp_status lp_gen_parse_ops(lp_gen_dataflow *o, const char *spec, lp_error *err)
{
    if (!o || !spec)
        return lp_error_set(err, LP_ERR_ARG, "operator list: no specification given");
    lp_gen_op ops[LP_GEN_MAXOPS];
    int exch[LP_GEN_MAXOPS]; /* -1 not given, 0 rebalance, 1 keyed */
    uint32_t nops = 0;
    memset(ops, 0, sizeof ops);
    const char *p = spec;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *it = p;
        while (len && is_space(*it))
            it++, len--;
        while (len && is_space(it[len - 1]))
            len--;
        if (len == 0)
            return lp_error_set(err, LP_ERR_ARG, "operator list '%s': empty operator (expected name:parallelism[:cost_ns][:keyed|:rebalance])", spec);
        if (nops == LP_GEN_MAXOPS)
            return lp_error_set(err, LP_ERR_ARG, "operator list: more than %d operators", LP_GEN_MAXOPS);
        lp_status st = parse_op(ops, nops, it, len, &exch[nops], err);
        if (st)
            return st;
        nops++;
        if (!end)
            break;
        p = end + 1;
    }
    for (uint32_t k = 0; k < nops; k++)
        ops[k].keyed = exch[k] >= 0 ? exch[k] : (k > 0 && k + 1 == nops);
    memcpy(o->ops, ops, sizeof ops);
    o->nops = nops;
    return LP_OK;
}
