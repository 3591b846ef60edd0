/* serve.h: a small local web server for longpole's views and JSON API (issue 6 item 3;
 * docs/serve.md), built on GNU libmicrohttpd, with server-sent events for live results
 * and a cache of command outputs. The library knows no analysis: the caller (cli/
 * cmd_serve.c, cli/stream_serve.c) registers routes and fills responses.
 *
 * Security model (every rule enforced here, whatever the routes do):
 *  - Binds 127.0.0.1 unless told otherwise. When bound to a loopback address, the Host
 *    header must name a loopback host (127.0.0.1, localhost, [::1]): a page of another
 *    site cannot reach the server through DNS rebinding. Responses never carry CORS
 *    headers, so other origins cannot read them.
 *  - No path from the URL ever reaches the file system: routes are a fixed table of
 *    exact paths (or a prefix plus a name matched by the handler against its own list).
 *    The raw request target is checked before anything else: only a path of
 *    [A-Za-z0-9._~/-] (no percent-encoding, no "..", no "//", no NUL or control bytes)
 *    and a query of printable ASCII are accepted (400 otherwise); nothing is served
 *    from disk.
 *  - GET and HEAD only (405 with Allow otherwise); a request body is refused (413);
 *    request line and headers are bounded by max_header (431 or 414 beyond, by
 *    libmicrohttpd), the URL by max_url (414), connections by max_conns (excess ones
 *    are closed at once) and per client address by per_ip_conns; requests per client
 *    address by a token bucket (rate per second, burst), 429 with Retry-After beyond;
 *    idle connections time out.
 *  - Every response: Cache-Control: no-store, X-Content-Type-Options: nosniff,
 *    Referrer-Policy: no-referrer, X-Frame-Options: DENY, and a Content-Security-
 *    Policy (default-src 'none' unless the route sets its own).
 * Threads: one per connection (libmicrohttpd's thread-per-connection mode), so a
 * handler may block (an analysis running, an event stream waiting); handlers must be
 * thread-safe. Shutdown (lp_server_free): event streams are ended, running commands of
 * caches registered with lp_server_attach_cache are killed, then every connection
 * thread is joined.
 */
#ifndef LONGPOLE_SERVE_H
#define LONGPOLE_SERVE_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/base/status.h"

/* ---- shared immutable buffers ----------------------------------------------------------- */

/* Bytes shared by reference (cache entries, pages, responses being sent). */
typedef struct lp_server_buf {
    char *data;              /* lp_malloc'd, NUL-terminated after len */
    size_t len;
    int refs;                /* atomic */
} lp_server_buf;

/* Take ownership of data (lp_malloc'd; NULL n=0 gives an empty buffer); NULL on out of
 * memory (data is then freed). One reference. */
lp_server_buf *lp_server_buf_take(char *data, size_t n);
lp_server_buf *lp_server_buf_copy(const void *data, size_t n);
lp_server_buf *lp_server_buf_ref(lp_server_buf *b);
void lp_server_buf_unref(lp_server_buf *b);

/* ---- event hubs (server-sent events) --------------------------------------------------- */

/* A hub keeps the latest events published (at most keep_events and keep_bytes of data,
 * the oldest dropped first) and hands them to every subscriber: a GET on an events
 * route streams `text/event-stream`: "id: N\nevent: NAME\ndata: LINE\n\n" per event, in
 * publication order, starting with the oldest event kept (or after the one named by a
 * Last-Event-ID header), then live; a comment line every keepalive_s while idle. The
 * stream ends when the hub is closed (after the last event) or the server stops. */
typedef struct lp_server_hub lp_server_hub;

lp_status lp_server_hub_new(lp_server_hub **out, size_t keep_events, size_t keep_bytes, lp_error *err);
/* Publish one event; data is copied (n bytes; line breaks inside are sent as several
 * data lines, as SSE allows). Thread-safe. */
lp_status lp_server_hub_publish(lp_server_hub *h, const char *event, const char *data, size_t n, lp_error *err);
/* No more events: subscribers get what is left, then their streams end. Idempotent. */
void lp_server_hub_close(lp_server_hub *h);
/* The data of the events kept, each followed by '\n' (JSON lines when every event is a
 * JSON line), only those named `event` if not NULL. */
lp_status lp_server_hub_dump(lp_server_hub *h, const char *event, lp_server_buf **out, lp_error *err);
/* Events published so far. */
uint64_t lp_server_hub_count(lp_server_hub *h);
/* Free; only once no server streams from it (after lp_server_free). */
void lp_server_hub_free(lp_server_hub *h);

/* ---- command outputs ---------------------------------------------------------------- */

/* Runs a program (for `longpole serve`'s JSON API the CLI passes its own executable:
 * the same writers as the CLI by construction; the library never assumes which program
 * it runs in) with an argument vector, captures its standard output, and keeps the
 * result keyed by the arguments: the inputs never change while serving, so each
 * distinct request runs once. Concurrent requests for the same arguments share one run;
 * at most max_running children run at once, max_waiting more requests wait for a slot
 * (more: LP_ERR_LIMIT, "busy"); a child running longer than timeout_s, or writing more
 * than max_output bytes, is killed; results beyond cache_bytes in all are evicted
 * oldest first. Children get stdin from /dev/null, default signal dispositions and
 * the extra environment entries given; their file descriptors are only 0, 1 and 2. */
typedef struct lp_cmdcache lp_cmdcache;

typedef struct lp_cmdcache_opts {
    const char *exe;         /* the program's path (required; run as given, no PATH search) */
    const char *name;        /* argv[0] of every run (default: exe) */
    unsigned max_running;    /* default 2 */
    unsigned max_waiting;    /* default 64 */
    double timeout_s;        /* default 600 */
    size_t max_output;       /* default 1 GiB */
    size_t cache_bytes;      /* default 512 MiB */
    const char *const *env;  /* NULL-terminated "NAME=value" entries added to the environment */
} lp_cmdcache_opts;

typedef struct lp_cmdout {
    lp_server_buf *out;      /* standard output */
    char err[2048];          /* the end of standard error (NUL-terminated) */
    int status;              /* exit status; 128 + N when killed by signal N */
    int timed_out;           /* killed for running too long */
    int too_big;             /* killed for writing more than max_output */
    double seconds;          /* run time */
    int refs;                /* internal */
} lp_cmdout;

/* LP_ERR_ARG without an exe. */
lp_status lp_cmdcache_new(lp_cmdcache **out, const lp_cmdcache_opts *o, lp_error *err);
/* The result of running the program with the arguments args[0..nargs) (its argv[0] is
 * the options' name), kept by those arguments; *res holds a reference
 * (lp_cmdout_unref). Thread-safe; blocks while the child runs. LP_ERR_LIMIT when too
 * many requests wait; LP_ERR_IO when the child could not start or the cache is
 * shutting down. */
lp_status lp_cmdcache_get(lp_cmdcache *c, const char *const *args, size_t nargs, lp_cmdout **res, lp_error *err);
void lp_cmdout_unref(lp_cmdout *o);
/* Kill running children and refuse new runs (waiters get LP_ERR_IO). Idempotent. */
void lp_cmdcache_shutdown(lp_cmdcache *c);
void lp_cmdcache_free(lp_cmdcache *c);

/* ---- the server ------------------------------------------------------------------------ */

typedef struct lp_server lp_server;
typedef struct lp_server_req lp_server_req;

typedef void (*lp_server_log_fn)(void *ctx, const char *line);

typedef struct lp_server_opts {
    const char *listen;      /* "HOST:PORT", "[V6]:PORT" or "PORT" (host 127.0.0.1); PORT 0 = any
                              * free port. Default "127.0.0.1:8080" */
    unsigned max_conns;      /* concurrent connections (default 1000) */
    unsigned per_ip_conns;   /* per client address (default 0 = max_conns) */
    size_t max_header;       /* bytes of request line + headers (default 16 KiB) */
    size_t max_url;          /* bytes of the request target (default 4 KiB) */
    double rate;             /* requests per second per client address (default 200) */
    double burst;            /* bucket size (default 1000) */
    unsigned timeout_s;      /* idle connection timeout (default 30) */
    double keepalive_s;      /* event-stream keepalive comment period (default 15) */
    int any_host;            /* accept any Host header even on loopback (tests) */
    lp_server_log_fn log;    /* one line per request and per error (optional) */
    void *log_ctx;
} lp_server_opts;

void lp_server_opts_init(lp_server_opts *o);

/* What a handler fills. Defaults: status 200, JSON content type, empty body. */
typedef struct lp_server_resp {
    int status;
    const char *type;        /* Content-Type (a literal or string that outlives the response) */
    lp_server_buf *body;     /* one reference, given to the server (NULL = empty) */
    const char *csp;         /* Content-Security-Policy (NULL: "default-src 'none';
                              * frame-ancestors 'none'"; "": none): a string that outlives
                              * the response, or csp_buf */
    char csp_buf[400];       /* room for a policy made per response (e.g. with a nonce) */
    int retry_after;         /* seconds, > 0: a Retry-After header */
    lp_server_hub *events;   /* stream this hub instead of a body (status 200) */
} lp_server_resp;

/* Handlers run on connection threads, concurrently. */
typedef void (*lp_server_handler)(void *ctx, const lp_server_req *q, lp_server_resp *r);

/* Request accessors (valid during the handler call). */
const char *lp_server_req_path(const lp_server_req *q);   /* "/api/cp" (already checked) */
const char *lp_server_req_method(const lp_server_req *q); /* "GET" or "HEAD" */
/* Query arguments in order (names and values decoded; a bare name has value ""):
 * returns how many there are, fills up to max. */
size_t lp_server_req_args(const lp_server_req *q, const char **names, const char **values, size_t max);
const char *lp_server_req_header(const lp_server_req *q, const char *name);

/* Response helpers: a copied body; a JSON error {"error": msg, "status": N}. */
lp_status lp_server_resp_set(lp_server_resp *r, int status, const char *type, const void *body, size_t n);
void lp_server_resp_error(lp_server_resp *r, int status, const char *msg);

lp_status lp_server_new(lp_server **out, const lp_server_opts *o, lp_error *err);
/* Register a route before lp_server_start: an exact path ("/api/cp"), or with prefix
 * set every path that starts with it ("/view/"). Longest match wins. */
lp_status lp_server_route(lp_server *s, const char *path, int prefix, lp_server_handler fn, void *ctx, lp_error *err);
/* An events route (GET streams the hub). The hub is closed when the server stops. */
lp_status lp_server_route_events(lp_server *s, const char *path, lp_server_hub *h, lp_error *err);
/* A cache whose children are killed when the server stops. */
void lp_server_attach_cache(lp_server *s, lp_cmdcache *c);
/* Listen and serve on libmicrohttpd's threads; returns at once. */
lp_status lp_server_start(lp_server *s, lp_error *err);
/* The bound address ("127.0.0.1") and port (after start). */
const char *lp_server_host(const lp_server *s);
unsigned lp_server_port(const lp_server *s);
/* Counters: requests answered, refused by the rate limit, and by checks (4xx). */
void lp_server_counts(const lp_server *s, uint64_t *requests, uint64_t *limited, uint64_t *refused);
/* Stop (see the top comment) and free. */
void lp_server_free(lp_server *s);

#endif
