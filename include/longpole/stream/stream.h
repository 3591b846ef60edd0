/* stream.h: online critical-participation analysis of live record streams (SnailTrail §5,
 * Algorithm 1 run online; docs/analyses/stream.md).
 *
 * An lp_stream takes records as they arrive, from any number of connections (stdin,
 * TCP sockets, files), in the native text format (.lpt lines, MODEL.md) or in
 * SnailTrail's binary log format (snailtrail.h), and emits every time window's
 * analysis (window.h: snapshot, path counts and CP, the four summaries, the App. A.2
 * checks) as soon as the window can no longer change:
 *
 *  - Streams and watermarks. A worker that logs records of its own has a stream; its
 *    watermark is the time of its latest record, where a record's time is its first
 *    instant on its own worker (A: start; S, R: their time; M: the send, logged by the
 *    sender; SnailTrail: every event's timestamp). A record older than its worker's
 *    watermark is *out of order*: it is still used while every window it touches is
 *    open; a record touching a window already emitted is *late*: counted for that
 *    window (and reported), used only for the windows still open.
 *  - Closing. With M the lowest watermark of the live streams, the oldest open window
 *    [ts, te] closes once M > te (every known worker's stream has passed te) and M is
 *    past every stream's first event after te (so the events that decide how idle time
 *    at te is typed, MODEL.md "Gaps", have all arrived). With max_delay D >= 0, it also
 *    closes once the latest record time seen is more than D past te. A stream ends with
 *    its connection (it then holds no window back) or at lp_stream_finish(), which
 *    closes every window that has data. For streams in order, each window's result is
 *    exactly `longpole summary`'s on the same records (the tests check it).
 *  - A window's trace holds every retained record touching [ts, te], each worker's last
 *    event before ts and first after te (snapshot.h), every send still waiting for its
 *    receive (in flight: cut at te), and the open activities of SnailTrail streams (cut
 *    at te); it is built, cut, counted and summarised on a pool of threads; results are
 *    delivered in window order on the caller's thread.
 *  - Memory is bounded by the open windows: once a window closes, records that no open
 *    window needs are dropped, except each worker's last event before the oldest open
 *    window (its neighbour). Sends waiting for their receive are dropped, as unmatched,
 *    once they are flight_limit older than the oldest open window.
 *  - Bad input is never fatal: malformed lines, over-long lines, late and out-of-order
 *    records, overlapping activities, unmatched halves and dropped connections are
 *    counted (lp_stream_stats) and reported to the diagnostics sink.
 *
 * Thread use: the lp_stream itself is single-threaded (one caller feeds it); the pool
 * threads only analyse closed windows.
 */
#ifndef LONGPOLE_STREAM_H
#define LONGPOLE_STREAM_H

#include <stdint.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include "longpole/analysis/snailtrail/window.h"

typedef struct lp_stream lp_stream;

/* Input format of a connection. */
typedef enum lp_stream_format {
    LP_STREAM_LPT = 0,         /* .lpt text lines (W/A/M/S/R, MODEL.md) */
    LP_STREAM_SNAILTRAIL       /* SnailTrail's MessagePack records (docs/formats/snailtrail.md) */
} lp_stream_format;

typedef struct lp_stream_opts {
    int64_t size;              /* window size (ns, > 0) */
    int64_t step;              /* slide between window starts (0 = size: tumbling) */
    int64_t origin;            /* with has_origin: window k starts at origin + k * step */
    int has_origin;            /* 0: origin = the earliest time seen, rounded down to a
                                * multiple of step, fixed when the first window closes */
    int64_t max_delay;         /* < 0: none; else close a window once the latest record
                                * time is more than this past its end */
    int64_t flight_limit;      /* unmatched sends older than this before the oldest open
                                * window are dropped (0: 64 steps) */
    unsigned threads;          /* analysis threads: 0 = one per CPU, 1 = on the caller's thread */
    lp_winopts win;            /* summaries, seed, paths, checks */
    size_t max_line;           /* longest .lpt line accepted (0: 64 KiB) */
    uint64_t max_empty;        /* windows without any event emitted in a row before the
                                * stream skips to the next event (0: 256) */
    int naive_build;           /* tests: build windows' traces with lp_builder (the twin of
                                * the direct construction) */
} lp_stream_opts;

void lp_stream_opts_init(lp_stream_opts *o);

/* Why a window closed. */
typedef enum lp_stream_why {
    LP_CLOSE_WATERMARK = 0,    /* every live stream passed it */
    LP_CLOSE_DELAY,            /* max_delay of stream time elapsed */
    LP_CLOSE_ENDED,            /* no live stream holds it (connections closed) */
    LP_CLOSE_END               /* lp_stream_finish */
} lp_stream_why;
const char *lp_stream_close_name(lp_stream_why c); /* "watermarks", "max-delay", "ended", "end" */

/* What the stream knows about a window when it is delivered. */
typedef struct lp_stream_winfo {
    lp_stream_why closed_by;
    uint64_t records;          /* records in the window's trace (neighbours and in-flight included) */
    uint64_t in_flight;        /* of them, sends still waiting for their receive and open
                                * activities, cut at te */
    uint64_t retained;         /* records held by the stream when the window closed */
    int64_t lag_ns;            /* latest record time seen at closing - te */
    double latency_s;          /* wall time from closing to delivery (queue + analysis) */
    uint64_t build_errors;     /* records the window's trace builder rejected (diagnostics) */
} lp_stream_winfo;

/* Every count of the stream so far. */
typedef struct lp_stream_stats {
    uint64_t bytes;            /* input bytes */
    uint64_t lines;            /* .lpt lines (comments and blank lines included) */
    uint64_t records;          /* records accepted (W, A, M, S, R; SnailTrail events) */
    uint64_t events;           /* SnailTrail events: 2 per activity and message, 1 per half */
    uint64_t malformed;        /* lines or binary records rejected (syntax, fields, encoding, length) */
    uint64_t out_of_order;     /* records older than their worker's watermark */
    uint64_t late;             /* records touching a window already emitted */
    uint64_t late_windows;     /* (window, late record) pairs */
    uint64_t overlaps;         /* activities dropped because they overlap the previous one */
    uint64_t skewed;           /* messages received before they were sent */
    uint64_t matched;          /* messages made of a send and a receive */
    uint64_t unmatched_sends;  /* sends never received (expired or at the end) */
    uint64_t unmatched_recvs;  /* receives whose send never came */
    uint64_t dup_sends;        /* second sends with the same (sender, receiver, id) */
    uint64_t open_dropped;     /* SnailTrail: starts never ended, ends never started */
    uint64_t connections;      /* connections opened */
    uint64_t disconnects;      /* connections closed before the end of input */
    uint64_t dropped;          /* of them, ended by an error (reset) rather than an orderly close */
    uint64_t truncated;        /* connections that ended inside a line or record */
    uint64_t workers;          /* workers known */
    uint64_t windows;          /* windows emitted */
    uint64_t skipped;          /* windows not emitted: after max_empty windows in a row with no
                                * event inside, the stream jumps to the next window with one */
    uint64_t closed_by[4];     /* by lp_stream_why */
    uint64_t retained;         /* records held now */
    uint64_t max_retained;     /* the most ever held at once */
    uint64_t pending;          /* halves and open activities waiting now */
    uint64_t max_pending;
} lp_stream_stats;

/* Called with each window's result, in window order, on the thread that feeds the
 * stream (inside feed, poll or finish). r->t, r->keys and r->src stay valid until
 * the next window is delivered (the last one until lp_stream_free). Return non-zero
 * to stop: the stream then fails with LP_ERR_ARG. */
typedef int (*lp_stream_fn)(void *ctx, const lp_winres *r, const lp_stream_winfo *wi);
/* Called (same thread) when late records have arrived for already emitted windows:
 * `total` late records so far for window `index` [ts, te]. Optional. */
typedef void (*lp_stream_late_fn)(void *ctx, uint64_t index, int64_t ts, int64_t te, uint64_t total);

/* diags receives every data problem (must outlive the stream). */
lp_status lp_stream_new(lp_stream **out, const lp_stream_opts *o, lp_diags *diags, lp_stream_fn fn,
                        lp_stream_late_fn late_fn, void *ctx, lp_error *err);
void lp_stream_free(lp_stream *s);

/* ---- connections ---------------------------------------------------------------------- */

/* Open a connection named `name` (for diagnostics) reading `fmt`; *id names it. */
lp_status lp_stream_open(lp_stream *s, const char *name, lp_stream_format fmt, uint32_t *id, lp_error *err);
/* Feed bytes of a connection, in order. Records are parsed and applied; windows that
 * can close are closed and queued, and finished results are delivered. */
lp_status lp_stream_feed(lp_stream *s, uint32_t conn, const void *buf, size_t n, lp_error *err);
/* The connection ended (abrupt: an error, not an orderly end of file). An unfinished
 * last line or record is reported; the workers whose latest record came through it
 * end their streams. */
lp_status lp_stream_close(lp_stream *s, uint32_t conn, int abrupt, lp_error *err);
/* Deliver finished results without waiting. */
lp_status lp_stream_poll(lp_stream *s, lp_error *err);
/* End of all input: close every remaining window with data (pending halves and open
 * activities count as unmatched), wait for the pool, deliver everything. */
lp_status lp_stream_finish(lp_stream *s, lp_error *err);

/* Flow control over the connections ids[0..n): ahead[i] is set to 1 when connection
 * ids[i] may wait: its latest record is more than a window past the oldest open window
 * while another of them is not (nothing to wait for otherwise). A server stops reading
 * those for a while (TCP then slows their senders), so memory stays bounded by the open
 * windows even when one sender runs far ahead of the others. Returns how many wait. */
size_t lp_stream_flow(const lp_stream *s, const uint32_t *ids, size_t n, uint8_t *ahead);

const lp_stream_stats *lp_stream_get_stats(const lp_stream *s);
unsigned lp_stream_threads(const lp_stream *s);
/* The earliest record time seen (INT64_MAX before any) and the window origin in use. */
int64_t lp_stream_tmin(const lp_stream *s);
int64_t lp_stream_origin(const lp_stream *s);

/* ---- records, for programs that decode their own input ----------------------------------
 * Names are resolved to ids first (created on first use); `conn` is the connection the
 * record came through (its close ends the worker's stream); `line` is for diagnostics.
 * Data problems are reported and the record dropped; only resource errors fail. */
lp_status lp_stream_worker(lp_stream *s, const char *name, size_t n, uint32_t *w, lp_error *err);
lp_status lp_stream_type(lp_stream *s, const char *name, size_t n, uint16_t *type, lp_error *err);
lp_status lp_stream_op(lp_stream *s, const char *name, size_t n, uint32_t *op, lp_error *err);
/* message-id token -> 64-bit key (a canonical decimal below 2^63 is itself, anything
 * else a 63-bit hash with the top bit set) */
uint64_t lp_stream_msgid(const char *s, size_t n);

/* A worker's stream exists (a W record): windows wait for it from now on. */
lp_status lp_stream_declare(lp_stream *s, uint32_t conn, uint32_t w, lp_error *err);
lp_status lp_stream_activity(lp_stream *s, uint32_t conn, uint64_t line, uint32_t w, int64_t start, int64_t end,
                             uint16_t type, uint32_t op, lp_error *err);
lp_status lp_stream_message(lp_stream *s, uint32_t conn, uint64_t line, uint32_t src, int64_t send, uint32_t dst,
                            int64_t recv, lp_error *err);
lp_status lp_stream_send(lp_stream *s, uint32_t conn, uint64_t line, uint32_t w, int64_t t, uint32_t dst,
                         uint64_t id, lp_error *err);
lp_status lp_stream_recv(lp_stream *s, uint32_t conn, uint64_t line, uint32_t w, int64_t t, uint32_t src,
                         uint64_t id, lp_error *err);
/* SnailTrail events: activity start and end (nested activities are flattened as
 * SnailTrail does: a start inside another cuts it; an end closes the innermost open
 * activity of its type and those opened inside it). dst/src LP_NONE32 on a send: any
 * receiver. */
lp_status lp_stream_start(lp_stream *s, uint32_t conn, uint64_t line, uint32_t w, int64_t t, uint16_t type,
                          uint32_t op, lp_error *err);
lp_status lp_stream_end(lp_stream *s, uint32_t conn, uint64_t line, uint32_t w, int64_t t, uint16_t type,
                        uint32_t op, lp_error *err);

/* ---- a serving loop (src/stream/stream_net.c) ---------------------------------------------- */

typedef struct lp_serve_opts {
    const char *listen;        /* "HOST:PORT" to accept TCP connections (PORT 0: any free
                                * port), or NULL */
    int read_stdin;            /* also (or only) read standard input as one connection */
    lp_stream_format format;   /* of every connection */
    uint64_t max_conns;        /* > 0: accept this many connections, then end once they
                                * are all closed */
    const volatile sig_atomic_t *stop; /* end when *stop becomes non-zero (a signal handler sets it) */
    /* told the bound address once listening (e.g. to print the port); optional */
    void (*on_listen)(void *ctx, const char *host, unsigned port);
    void (*on_conn)(void *ctx, const char *name, int opened, uint64_t bytes); /* optional */
    void *ctx;
} lp_serve_opts;

/* Run the loop until stdin ends (when no listening socket), max_conns connections were
 * served, or *stop is set; then return (the caller calls lp_stream_finish). I/O errors
 * on a connection close it (reported, not fatal); failing to listen is. */
lp_status lp_stream_serve(lp_stream *s, const lp_serve_opts *o, lp_error *err);

/* ---- replay files --------------------------------------------------------------------- */

/* Write a trace's records as .lpt text in stream order: W records first, then every
 * record at its time (A at its start, M at its send, or S at the send and R at the
 * receive with `halves`), ties by worker; gap activities are left out. What a live
 * system would send, so `stream` reproduces `summary` on it. */
lp_status lp_stream_write_lpt(const lp_trace *t, FILE *out, int halves, lp_error *err);

/* The records of that order, one call each: kind 0 an activity (i its index, w its
 * worker), 1 a message at its send (halves: 2 its send on the sender w, 3 its receive on
 * the receiver w), t the record's time. Ordered by (t, w, kind, i). A merge of each
 * worker's timeline and messages: beside the trace, the per-worker message endpoints
 * (12 bytes per message and kind), nothing per activity; a non-zero status from fn stops
 * it and is returned. */
typedef struct lp_emit_rec {
    int64_t t;
    uint32_t w;
    uint8_t kind;
    uint64_t i;
} lp_emit_rec;
typedef lp_status (*lp_emit_fn)(void *ctx, const lp_emit_rec *r, lp_error *err);
lp_status lp_stream_emit_order(const lp_trace *t, int halves, lp_emit_fn fn, void *ctx, lp_error *err);

#endif
