/* stream_int.h: the streaming engine's internal structures, shared by its files
 * (stream.c: records, watermarks, windows; stream_pool.c: building and analysing closed
 * windows on threads; stream_text.c / stream_st.c: the two input formats). Not public. */
#ifndef LP_STREAM_INT_H
#define LP_STREAM_INT_H

#include "longpole/stream/stream.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "base/pool.h"

#include <string.h>

/* A record held for the open windows: an activity or a whole message. */
enum { SREC_ACT = 1, SREC_MSG = 2 };
typedef struct srec {
    int64_t a, b;            /* ACT: start, end; MSG: send, receive */
    uint32_t w, peer;        /* ACT: worker, LP_NONE32; MSG: sender, receiver */
    uint32_t op;             /* ACT: global operator id or LP_NONE32; MSG: arrival number
                              * of the M record or of the receive (message order) */
    uint16_t type;           /* ACT: global type id */
    uint8_t kind;            /* SREC_* */
    uint8_t flags;           /* SREC_* below */
} srec;
#define SREC_FAKE 0x01u      /* completed at closing (in flight / open) */
#define SREC_HALVES 0x02u    /* a message made of a send and a receive */

/* The names known when a window closed: what its trace registers, in id order, so ids
 * agree across windows (and with `summary` on the same input). Immutable once made;
 * reference-counted on the feeding thread. Strings live in the stream's string table,
 * whose bytes never move. */
typedef struct snames {
    uint32_t refs;           /* windows using it, + 1 while it is the current one */
    uint32_t nw, nt, nops;   /* workers, types, operators */
    const char **wname;      /* [nw] */
    uint32_t *wlen;
    const char **tname;      /* [nt] (built-in types included) */
    uint32_t *tlen;
    const char **oname;      /* [nops] */
    uint32_t *olen;
    uint32_t *oppar;         /* [nops] workers seen running the operator so far */
} snames;

/* One window on its way through the pool (a slot of its queue). */
typedef struct sslot {
    uint64_t index;          /* window number */
    int64_t ts, te;
    srec *recs;              /* the window's records (buffer reused) */
    size_t nrecs, caprecs;
    snames *nm;              /* names to register */
    lp_stream_winfo wi;      /* filled at closing and after analysis */
    double t_close;          /* monotonic time at closing */
    /* results (owned until delivery) */
    lp_trace *t;
    lp_snapsrc *src;
    lp_sumkeys *keys;
    lp_winres res;
} sslot;

/* The sort key of a window's message (stream_pool.c). */
typedef struct mkey {
    uint64_t cls;            /* fake << 1 | made of halves */
    int64_t t;               /* send (whole) or receive (halves) */
    uint32_t w;              /* sender (whole) or receiver (halves) */
    uint32_t seq;            /* arrival number */
    uint32_t i;              /* index in the window's records */
} mkey;

struct tact;

/* A pool thread's buffers (grow-only, reused from window to window). */
typedef struct spool_ws {
    lp_winws ws;             /* analysis buffers */
    lp_str *opstr;           /* [cap] operator id -> string id in the window's trace */
    size_t capop;
    mkey *mk;                /* [capmk] message order scratch */
    size_t capmk;
    /* building the trace (stream_trace.c) */
    struct tact *ta, *ta2, *gp; /* activities, grouped by worker; gaps */
    size_t capta, capta2, capgp;
    uint64_t *wcur;          /* per-worker counters */
    int64_t *wmax;           /* per-worker latest start seen */
    uint8_t *wuns;           /* per-worker: activities out of order */
    size_t capwcur, capwmax, capwuns;
    const srec **mp;         /* messages in order */
    size_t capmp;
    uint64_t *soff, *roff;   /* per-worker send / receive instants */
    int64_t *stime, *rtime;
    size_t capsoff, caproff, capstime, caprtime;
} spool_ws;

/* A connection's reading state. */
typedef struct sconn {
    char *name;              /* for diagnostics */
    lp_stream_format fmt;
    int open;
    uint64_t line;           /* lines seen */
    uint64_t bytes;          /* bytes fed */
    uint64_t records;
    uint64_t bad;
    int seen_header, seen_record;
    int64_t last_t;          /* latest record time it brought (flow control) */
    /* .lpt: the unfinished last line */
    char *part;
    size_t npart, cappart;
    int skipping;            /* inside an over-long line */
    /* SnailTrail: the unfinished last record and decoding state */
    unsigned char stbuf[128];
    size_t nst;
    uint64_t stoff;          /* byte offset of stbuf[0] in the connection */
    int st_resync;           /* skipping bytes after a bad record */
    uint64_t st_bad_from;    /* offset where the bad run started */
} sconn;

/* Per worker. */
typedef struct stopen {
    int64_t t;               /* start */
    uint16_t type;
    uint32_t op;
} stopen;

typedef struct swk {
    int64_t wm;              /* watermark: time of the latest record (INT64_MIN: none) */
    int64_t last_a_start, last_a_end; /* latest activity accepted (overlap check) */
    uint32_t conn;           /* connection of the latest own record (LP_NONE32: declared) */
    uint32_t last_op;        /* operator of its latest activity (parallelism counted) */
    uint8_t own;             /* has a stream: records of its own, or declared */
    uint8_t ended;           /* its stream ended (connection closed) */
    /* SnailTrail: open activities (a stack) and the last activity boundary */
    stopen *stk;
    uint32_t nstk, capstk;
    int64_t stlast;
} swk;

/* Pending halves, keyed by (sender, receiver, id). */
enum { PEND_SEND = 1, PEND_RECV = 2, PEND_DONE = 3 };
typedef struct pend {
    uint64_t id;
    int64_t t;               /* send time (SEND, DONE) or receive time (RECV) */
    uint32_t src, dst;       /* dst LP_NONE32: a send to any receiver (SnailTrail) */
    uint32_t seq;            /* RECV: its arrival number */
    uint8_t kind;            /* 0 = removed (a hole until the array is compacted) */
} pend;

#define LATE_RING 4096       /* closed windows whose late records are counted one by one */

struct lp_stream {
    lp_stream_opts o;
    lp_diags *diags;
    lp_stream_fn fn;
    lp_stream_late_fn late_fn;
    void *ctx;
    lp_stream_stats st;

    /* names */
    lp_strtab names;
    uint32_t *s2w, *s2t, *s2o; /* string id -> worker, type, operator (LP_NONE32) */
    size_t caps2;
    lp_str *tstr;              /* [ntypes] type names */
    uint32_t ntypes, captypes;
    lp_str *ostr;              /* [nops] operator names */
    uint32_t *opar;            /* [nops] parallelism so far */
    uint32_t nops, capops;
    lp_hmap oppairs;           /* the set of (op+1) << 32 | worker seen */
    snames *cur_names;         /* current snapshot (NULL: to be made) */
    struct { const char *p; uint32_t n, id; } cache[3][1024]; /* worker, type, op name caches: 512
                                * sets of two, the most recent first */

    /* workers */
    swk *wk;
    lp_str *wstr;              /* [nworkers] worker names */
    uint32_t nworkers, capworkers;

    /* SnailTrail input: worker and operator numbers -> ids (small numbers), types */
    uint32_t *st_wid, *st_oid;
    size_t cap_st_wid, cap_st_oid;
    uint16_t st_type[14];
    uint8_t st_have_type[14];

    /* connections */
    char *lscratch;            /* [max_line + 1] decoding scratch of the .lpt reader */
    sconn *conns;
    uint32_t nconns, capconns;

    /* records held */
    srec *store;
    size_t nstore, capstore;
    uint8_t *mark;             /* [capstore] selection scratch */
    pend *pend;                /* pending halves in order of arrival, with holes */
    size_t endpend, cappend;   /* slots used (entries and holes), allocated */
    size_t npend, npending_live; /* entries; of them live = SEND + RECV */
    lp_hmap32 pendmap;         /* hash of (src, dst, id) -> index in pend (hashed keys) */
    /* per-worker scratch for selection */
    int64_t *predt, *succt, *npredt;
    size_t *predi, *npredi;    /* last event before ts (pred) and before the next window (npred) */
    size_t capscratch;

    /* windows */
    int started;               /* a record has arrived */
    int frozen;                /* the grid is fixed (a window closed) */
    int finishing;             /* lp_stream_finish: pending halves are unmatched */
    int64_t origin;
    uint64_t k_first;          /* first window of the grid */
    uint64_t k_open;           /* oldest open window */
    int phase;                 /* 0: waiting for M > te; 1: for M > need */
    int64_t thr;               /* the watermark every live stream must pass */
    int64_t te_open;           /* te of k_open (cached) */
    uint64_t n_live, n_below;  /* live streams; those with watermark <= thr */
    int64_t tmin;              /* earliest instant seen */
    int64_t tmax;              /* latest instant seen */
    int64_t maxtau;            /* latest record time seen */
    int64_t frontier;          /* te of the last closed window (INT64_MIN: none) */
    uint32_t seq;              /* records received (wraps): orders messages as they came */
    uint64_t empty_run;        /* windows without an event inside closed in a row */
    uint64_t sel_touch;        /* events inside the last selected window */
    uint64_t late_idx[LATE_RING], late_cnt[LATE_RING];
    uint64_t late_dirty[64];
    size_t nlate_dirty;

    /* the pool (stream_pool.c) */
    unsigned nthreads;         /* as asked (1: each window analysed at its closing) */
    lp_pool *pool;             /* nthreads workers (none for one) */
    lp_poolq *q;               /* the windows in flight, delivered in order */
    sslot *slots;              /* [nslots]: the queue's slots */
    size_t nslots;
    spool_ws *pws;             /* [npws]: a workspace per pool thread */
    unsigned npws;
    /* the last delivered window's trace, kept for labels */
    lp_trace *last_t;
    lp_snapsrc *last_src;
    lp_sumkeys *last_keys;
};

/* The name caches: a direct-mapped slot per hash of the name's bytes (caches in front
 * of the string table and the id arrays s2w/s2t/s2o, not tables: a hit is a load and a
 * compare of a few bytes, cheaper than the library's hash map on this per-record path). */
static inline uint32_t lp_stream_name_hash(const char *p, size_t n)
{
    uint64_t a = 0, z = 0;
    memcpy(&a, p, n < 8 ? n : 8);
    if (n > 8)
        memcpy(&z, p + n - 8, 8);
    uint64_t h = a * 0x9E3779B97F4A7C15ULL ^ z * 0xC2B2AE3D27D4EB4FULL ^ n;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    return (uint32_t)(h >> 55); /* the top bits depend on every input bit: 0..511 */
}

static inline int lp_stream_name_eq(const char *a, const char *b, size_t n)
{
    if (n <= 16 && n >= 8) { /* two overlapping 8-byte loads */
        uint64_t x0, x1, y0, y1;
        memcpy(&x0, a, 8);
        memcpy(&y0, b, 8);
        memcpy(&x1, a + n - 8, 8);
        memcpy(&y1, b + n - 8, 8);
        return x0 == y0 && x1 == y1;
    }
    return memcmp(a, b, n) == 0;
}

/* A worker (kind 0), type (1) or operator (2) seen before, by its bytes: 1 and *id. */
static inline int lp_stream_cached(const lp_stream *s, int kind, const char *p, size_t n, uint32_t *id)
{
    uint32_t h = 2 * lp_stream_name_hash(p, n);
    for (uint32_t k = h; k < h + 2; k++)
        if (s->cache[kind][k].p && s->cache[kind][k].n == n && lp_stream_name_eq(s->cache[kind][k].p, p, n)) {
            *id = s->cache[kind][k].id;
            return 1;
        }
    return 0;
}

/* stream.c */
void lp_stream_names_unref(lp_stream *s, snames *nm);
double lp_stream_now(void);

/* stream_trace.c: the trace of a window's records (messages in `order`) */
lp_status lp_stream_build_trace(spool_ws *pw, const sslot *sl, const mkey *order, size_t nmsg, lp_trace **out,
                                uint64_t *dropped, lp_error *err);

/* stream_pool.c */
lp_status lp_spool_init(lp_stream *s, lp_error *err);
void lp_spool_free(lp_stream *s);
/* A free slot to fill (waits, delivering results, while the pool is full). */
lp_status lp_spool_reserve(lp_stream *s, sslot **out, lp_error *err);
/* Queue the slot filled last (analysed at once with one thread). */
lp_status lp_spool_submit(lp_stream *s, sslot *sl, lp_error *err);
lp_status lp_spool_deliver(lp_stream *s, int wait_all, lp_error *err);
/* LP_OK, or the failure that stopped the pool (copied to err). */
lp_status lp_spool_status(lp_stream *s, lp_error *err);

/* stream_text.c, stream_st.c */
lp_status lp_stream_feed_lpt(lp_stream *s, uint32_t conn, const char *buf, size_t n, lp_error *err);
lp_status lp_stream_close_lpt(lp_stream *s, uint32_t conn, lp_error *err);
lp_status lp_stream_feed_st(lp_stream *s, uint32_t conn, const unsigned char *buf, size_t n, lp_error *err);
lp_status lp_stream_close_st(lp_stream *s, uint32_t conn, lp_error *err);

#endif
