/* genreq.h: synthetic request logs with a known causal model (`longpole generate
 * requests`), for testing and benchmarking the Mystery Machine analyses.
 *
 * A web-request pipeline in the spirit of OSDI'14 §2 and §5: a client clicks and sends
 * the request (task `page`) to a web server, which parses it, fans out RPCs to
 * backends (tasks `rpcN`, plus an optional `db` call on a cache miss) and to three
 * lock-protected bookkeeping tasks (`lockN`, mutually exclusive), flushes a header back
 * to the client (the client-side tail of `page`: CSS, DOM), then a producer task
 * (`render`) generates K chunks once all RPCs replied; each chunk crosses the network
 * (`xferN`) and is shown in FIFO order by the client's `display` task (a pipeline:
 * render => display); once everything is shown, JavaScript tasks (`jsN`) run on one
 * engine (mutually exclusive). Every duration is random (exponential tails, so every
 * ordering that is not causal shows up eventually), network delays are a per-request
 * base (by connection type) plus uniform jitter, and every host's clock has its own
 * offset. The generator knows the ground truth: happens-before is reachability in the
 * static event graph, mutual exclusion is between execution segments of one lock
 * group, and the skew of every host.
 * Deterministic for a seed, whatever the number of threads.
 */
#ifndef LONGPOLE_GENREQ_H
#define LONGPOLE_GENREQ_H

#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/import/reqlog.h"

typedef struct lp_genreq {
    uint64_t requests;      /* number of requests */
    uint32_t segments;      /* segments every request has (>= 14); the optional db call adds 3 */
    uint32_t clients;       /* distinct client hosts */
    uint32_t webs;          /* web servers */
    uint32_t backends;      /* backend servers */
    int64_t skew_ns;        /* host clock offsets are uniform in [-skew, +skew] */
    int64_t jitter_ns;      /* one-way network delays vary by up to this (uniform) */
    int64_t net_ns;         /* client <-> web one-way base delay (times the connection factor) */
    int64_t dc_net_ns;      /* web <-> backend one-way base delay */
    int64_t server_ns;      /* mean server segment */
    int64_t client_ns;      /* mean client segment (times the browser/platform factor) */
    double miss_rate;       /* probability of the optional db call */
    double rate;            /* requests per second (arrival times) */
    int64_t start_ns;       /* wall-clock time of the first request (ns since the epoch) */
    uint64_t seed;
    unsigned threads;       /* 0 = online CPUs */
    /* output */
    int per_host;           /* one file per host (no host column; a seq column) */
    int jsonl;              /* JSON lines instead of CSV */
    int gzip;               /* compress the log with gzip */
} lp_genreq;

void lp_genreq_defaults(lp_genreq *g);

/* The shape a segment count gives: chunks (pipeline length), RPCs, lock group, JS
 * tasks, extra server and client segments of `page`. */
typedef struct lp_genreq_shape {
    uint32_t chunks, rpcs, lock, js, xserver, xclient;
} lp_genreq_shape;
lp_status lp_genreq_shape_of(uint32_t segments, lp_genreq_shape *s, lp_error *err);

/* The ground truth model (every pair marked observed). */
lp_status lp_genreq_truth(const lp_genreq *g, lp_causal *truth, lp_error *err);

typedef struct lp_genreq_out {
    uint64_t rows;          /* log lines written */
    uint64_t bytes;         /* log bytes written (before compression) */
    uint32_t hosts;
} lp_genreq_out;

/* Write PREFIX.csv (or .jsonl, or the folder PREFIX.hosts/ with one HOST.csv per host),
 * PREFIX.attrs.csv (browser, platform, connection per request), PREFIX.truth.json
 * (the model) and PREFIX.skew.csv (host, true offset in ns). */
lp_status lp_genreq_write(const lp_genreq *g, const char *prefix, lp_genreq_out *out, lp_error *err);

#endif
