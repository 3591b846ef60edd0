/* serve.c: the HTTP side of the local web server (serve.h; docs/serve.md): GNU
 * libmicrohttpd in thread-per-connection mode, the request checks of the security model
 * (method, body, request target, Host, rate), the route table, responses with their
 * security headers, and event streams.
 *
 * Invariants: routes are fixed once the server starts (read without locks afterwards);
 * every request gets a context from the URI callback (before its headers are parsed)
 * holding a copy of the raw request target, which is what the checks look at: the path
 * is never decoded (percent signs are refused), so no two spellings reach one route and
 * nothing from the URL is ever interpreted as a file name. Exactly one response is
 * queued per request, on the first call of the access handler. Counters and the
 * rate-limit table are under the server's mutex.
 */
#define _GNU_SOURCE
#include "serve/serve_int.h"
#include "longpole/base/alloc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#define DEFAULT_CSP "default-src 'none'; frame-ancestors 'none'"
#define RATE_SLOTS 1024

/* ---- buffers -------------------------------------------------------------------------- */

lp_server_buf *lp_server_buf_take(char *data, size_t n)
{
    lp_server_buf *b = lp_malloc(sizeof *b);
    if (!b || (!data && !(data = lp_malloc(1)))) {
        lp_free(b);
        lp_free(data);
        return NULL;
    }
    b->data = data;
    b->len = n;
    b->refs = 1;
    return b;
}

lp_server_buf *lp_server_buf_copy(const void *data, size_t n)
{
    char *p = lp_malloc(n + 1);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, data, n);
    p[n] = '\0';
    return lp_server_buf_take(p, n);
}

lp_server_buf *lp_server_buf_ref(lp_server_buf *b)
{
    if (b)
        __atomic_fetch_add(&b->refs, 1, __ATOMIC_RELAXED);
    return b;
}

void lp_server_buf_unref(lp_server_buf *b)
{
    if (b && __atomic_fetch_sub(&b->refs, 1, __ATOMIC_ACQ_REL) == 1) {
        lp_free(b->data);
        lp_free(b);
    }
}

/* ---- the server ------------------------------------------------------------------------- */

typedef struct route {
    char *path;
    size_t len;
    int prefix;
    lp_server_handler fn;
    void *ctx;
    lp_server_hub *hub;      /* an events route */
} route;

typedef struct rate_slot {
    unsigned char key[17];   /* family byte + address; key[0] == 0: free */
    double tokens, last;
} rate_slot;

struct lp_server {
    lp_server_opts o;
    char *listen;            /* owned copy of o.listen */
    struct MHD_Daemon *d;
    struct sockaddr_storage addr;
    int v6, loopback;
    char host[INET6_ADDRSTRLEN];
    unsigned port;
    route *routes;
    size_t nroutes;
    lp_cmdcache **caches;
    size_t ncaches;
    pthread_mutex_t mu;
    rate_slot *rate;         /* [RATE_SLOTS] */
    uint64_t nreq, nlimited, nrefused;
};

struct lp_server_req {
    lp_server *s;
    struct MHD_Connection *c;
    const char *method;
    const char *path;
};

/* Per request, from the URI callback to the completion callback. */
typedef struct reqctx {
    char *raw;               /* the request target as received (NULL if too long) */
    size_t rawlen;
    const char *at;          /* where libmicrohttpd keeps it (its request line, valid for the request) */
    int answered;
} reqctx;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void lp_server_opts_init(lp_server_opts *o)
{
    memset(o, 0, sizeof *o);
    o->listen = "127.0.0.1:8080";
    o->max_conns = 1000;
    o->max_header = 16384;
    o->max_url = 4096;
    o->rate = 200;
    o->burst = 1000;
    o->timeout_s = 30;
    o->keepalive_s = 15;
}

__attribute__((format(printf, 2, 3))) static void logf_(lp_server *s, const char *fmt, ...)
{
    if (!s->o.log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->o.log(s->o.log_ctx, line);
}

__attribute__((format(printf, 2, 0))) static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
    lp_server *s = cls;
    if (!s->o.log)
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "libmicrohttpd: ");
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    size_t l = strlen(line);
    while (l && (line[l - 1] == '\n' || line[l - 1] == '\r'))
        line[--l] = '\0';
    s->o.log(s->o.log_ctx, line);
}

/* "HOST:PORT", "[V6]:PORT" or "PORT" into s->addr. */
static lp_status parse_listen(lp_server *s, const char *spec, lp_error *err)
{
    char host[256] = "127.0.0.1";
    const char *port = spec;
    if (spec[0] == '[') {
        const char *e = strchr(spec, ']');
        if (!e || e[1] != ':' || (size_t)(e - spec - 1) >= sizeof host)
            return lp_error_set(err, LP_ERR_ARG, "bad listen address '%s' (use [V6]:PORT)", spec);
        memcpy(host, spec + 1, (size_t)(e - spec - 1));
        host[e - spec - 1] = '\0';
        port = e + 2;
    } else if (strchr(spec, ':')) {
        const char *c = strrchr(spec, ':');
        if ((size_t)(c - spec) >= sizeof host || c == spec)
            return lp_error_set(err, LP_ERR_ARG, "bad listen address '%s' (use HOST:PORT)", spec);
        memcpy(host, spec, (size_t)(c - spec));
        host[c - spec] = '\0';
        port = c + 1;
    }
    char *end;
    errno = 0;
    long p = strtol(port, &end, 10);
    if (!*port || *end || errno || p < 0 || p > 65535)
        return lp_error_set(err, LP_ERR_ARG, "bad port in '%s' (0..65535)", spec);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0 || !res)
        return lp_error_set(err, LP_ERR_ARG, "cannot resolve '%s': %s", host, gai_strerror(rc));
    memcpy(&s->addr, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    s->v6 = s->addr.ss_family == AF_INET6;
    if (s->v6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&s->addr;
        s->loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
        inet_ntop(AF_INET6, &a->sin6_addr, s->host, sizeof s->host);
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&s->addr;
        s->loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
        inet_ntop(AF_INET, &a->sin_addr, s->host, sizeof s->host);
    }
    return LP_OK;
}

lp_status lp_server_new(lp_server **out, const lp_server_opts *o, lp_error *err)
{
    *out = NULL;
    lp_server *s = lp_calloc(1, sizeof *s);
    if (!s)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_server_opts_init(&s->o);
    if (o)
        s->o = *o;
    lp_server_opts d;
    lp_server_opts_init(&d);
    if (!s->o.listen)
        s->o.listen = d.listen;
    if (!s->o.max_conns)
        s->o.max_conns = d.max_conns;
    if (!s->o.max_header)
        s->o.max_header = d.max_header;
    if (!s->o.max_url)
        s->o.max_url = d.max_url;
    if (!(s->o.rate > 0))
        s->o.rate = d.rate;
    if (!(s->o.burst >= 1))
        s->o.burst = d.burst;
    if (!s->o.timeout_s)
        s->o.timeout_s = d.timeout_s;
    if (!(s->o.keepalive_s > 0))
        s->o.keepalive_s = d.keepalive_s;
    s->listen = lp_strndup(s->o.listen, strlen(s->o.listen));
    s->rate = lp_calloc(RATE_SLOTS, sizeof *s->rate);
    if (!s->listen || !s->rate) {
        lp_free(s->listen);
        lp_free(s->rate);
        lp_free(s);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    s->o.listen = s->listen;
    lp_status st = parse_listen(s, s->listen, err);
    if (st) {
        lp_free(s->listen);
        lp_free(s->rate);
        lp_free(s);
        return st;
    }
    pthread_mutex_init(&s->mu, NULL);
    *out = s;
    return LP_OK;
}

static lp_status add_route(lp_server *s, const char *path, int prefix, lp_server_handler fn, void *ctx,
                           lp_server_hub *hub, lp_error *err)
{
    if (s->d)
        return lp_error_set(err, LP_ERR_ARG, "routes must be added before the server starts");
    if (!path || path[0] != '/')
        return lp_error_set(err, LP_ERR_ARG, "a route is an absolute path");
    route *r = lp_reallocarray(s->routes, s->nroutes + 1, sizeof *r);
    if (!r)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    s->routes = r;
    r = &s->routes[s->nroutes];
    memset(r, 0, sizeof *r);
    r->path = lp_strndup(path, strlen(path));
    if (!r->path)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    r->len = strlen(path);
    r->prefix = prefix;
    r->fn = fn;
    r->ctx = ctx;
    r->hub = hub;
    s->nroutes++;
    return LP_OK;
}

lp_status lp_server_route(lp_server *s, const char *path, int prefix, lp_server_handler fn, void *ctx, lp_error *err)
{
    return add_route(s, path, prefix, fn, ctx, NULL, err);
}

lp_status lp_server_route_events(lp_server *s, const char *path, lp_server_hub *h, lp_error *err)
{
    return add_route(s, path, 0, NULL, NULL, h, err);
}

void lp_server_attach_cache(lp_server *s, lp_cmdcache *c)
{
    lp_cmdcache **p = lp_reallocarray(s->caches, s->ncaches + 1, sizeof *p);
    if (!p)
        return;
    s->caches = p;
    s->caches[s->ncaches++] = c;
}

const char *lp_server_host(const lp_server *s) { return s->host; }
unsigned lp_server_port(const lp_server *s) { return s->port; }

void lp_server_counts(const lp_server *s, uint64_t *requests, uint64_t *limited, uint64_t *refused)
{
    lp_server *m = (lp_server *)s;
    pthread_mutex_lock(&m->mu);
    if (requests)
        *requests = s->nreq;
    if (limited)
        *limited = s->nlimited;
    if (refused)
        *refused = s->nrefused;
    pthread_mutex_unlock(&m->mu);
}

/* ---- requests ----------------------------------------------------------------------------- */

const char *lp_server_req_path(const lp_server_req *q) { return q->path; }
const char *lp_server_req_method(const lp_server_req *q) { return q->method; }
const char *lp_server_req_header(const lp_server_req *q, const char *name)
{
    return MHD_lookup_connection_value(q->c, MHD_HEADER_KIND, name);
}

typedef struct argit {
    const char **names, **values;
    size_t n, max;
} argit;

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    argit *a = cls;
    if (a->n < a->max) {
        a->names[a->n] = key;
        a->values[a->n] = value ? value : "";
    }
    a->n++;
    return MHD_YES;
}

size_t lp_server_req_args(const lp_server_req *q, const char **names, const char **values, size_t max)
{
    argit a = {names, values, 0, max};
    MHD_get_connection_values(q->c, MHD_GET_ARGUMENT_KIND, on_arg, &a);
    return a.n;
}

lp_status lp_server_resp_set(lp_server_resp *r, int status, const char *type, const void *body, size_t n)
{
    lp_server_buf_unref(r->body);
    r->body = lp_server_buf_copy(body, n);
    r->status = status;
    if (type)
        r->type = type;
    return r->body ? LP_OK : LP_ERR_NOMEM;
}

/* JSON-escape msg into out (ASCII printable kept, the rest \u-escaped). */
static size_t json_escape(const char *msg, char *out, size_t cap)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p && n + 8 < cap; p++) {
        if (*p == '"' || *p == '\\') {
            out[n++] = '\\';
            out[n++] = (char)*p;
        } else if (*p < 0x20 || *p >= 0x7f) {
            n += (size_t)snprintf(out + n, cap - n, "\\u%04x", *p < 0x7f ? *p : 0xfffd);
        } else {
            out[n++] = (char)*p;
        }
    }
    out[n] = '\0';
    return n;
}

void lp_server_resp_error(lp_server_resp *r, int status, const char *msg)
{
    char esc[1400], body[1500];
    json_escape(msg ? msg : "", esc, sizeof esc);
    int n = snprintf(body, sizeof body, "{\"error\":\"%s\",\"status\":%d}\n", esc, status);
    r->type = "application/json; charset=utf-8";
    r->events = NULL;
    if (lp_server_resp_set(r, status, NULL, body, (size_t)n))
        r->status = status;
}

/* ---- the checks ----------------------------------------------------------------------------- */

/* The raw request target: a path of [A-Za-z0-9._~/-] without "..", "//" or percent
 * signs, then an optional query of printable ASCII without "%00". Returns a reason or
 * NULL when acceptable; *pathlen is the length of the path. */
static const char *check_target(const char *t, size_t n, size_t *pathlen)
{
    if (n == 0 || t[0] != '/')
        return "the request target must be an absolute path";
    size_t i = 0;
    for (; i < n && t[i] != '?'; i++) {
        unsigned char ch = (unsigned char)t[i];
        if (!(isalnum(ch) || ch == '.' || ch == '_' || ch == '~' || ch == '/' || ch == '-'))
            return ch == '%' ? "percent-encoded paths are not accepted" : "invalid character in the path";
        if (ch == '/' && i + 1 < n && t[i + 1] == '/')
            return "empty path segment";
        if (ch == '.' && i > 0 && t[i - 1] == '.')
            return "'..' in the path";
    }
    *pathlen = i;
    for (size_t k = i; k < n; k++) {
        unsigned char ch = (unsigned char)t[k];
        if (ch <= 0x20 || ch >= 0x7f)
            return "invalid character in the query";
        if (ch == '%' && k + 2 < n && t[k + 1] == '0' && t[k + 2] == '0')
            return "NUL byte in the query";
        if (ch == '%' && (k + 2 >= n || !isxdigit((unsigned char)t[k + 1]) || !isxdigit((unsigned char)t[k + 2])))
            return "bad percent-encoding in the query";
    }
    return NULL;
}

/* Is the Host header a loopback name (with or without a port)? */
static int loopback_host(const char *h)
{
    char name[256];
    size_t n;
    if (h[0] == '[') {
        const char *e = strchr(h, ']');
        if (!e)
            return 0;
        n = (size_t)(e - h - 1);
        if (n >= sizeof name)
            return 0;
        memcpy(name, h + 1, n);
        name[n] = '\0';
        if (e[1] && e[1] != ':')
            return 0;
        return strcmp(name, "::1") == 0;
    }
    const char *c = strchr(h, ':');
    n = c ? (size_t)(c - h) : strlen(h);
    if (n >= sizeof name)
        return 0;
    memcpy(name, h, n);
    name[n] = '\0';
    if (strcasecmp(name, "localhost") == 0)
        return 1;
    struct in_addr a;
    return inet_pton(AF_INET, name, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/* Token bucket per client address: 0 allowed, else the seconds to wait. */
static int rate_check(lp_server *s, const struct sockaddr *sa)
{
    unsigned char key[17] = {0};
    if (sa && sa->sa_family == AF_INET) {
        key[0] = 4;
        memcpy(key + 1, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
    } else if (sa && sa->sa_family == AF_INET6) {
        key[0] = 6;
        memcpy(key + 1, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
    } else {
        key[0] = 1;
    }
    uint32_t hsh = 2166136261u;
    for (int i = 0; i < 17; i++)
        hsh = (hsh ^ key[i]) * 16777619u;
    double t = now_s();
    int wait = 0;
    pthread_mutex_lock(&s->mu);
    rate_slot *slot = NULL, *stalest = NULL;
    for (int k = 0; k < 16 && !slot; k++) {
        rate_slot *r = &s->rate[(hsh + (uint32_t)k) % RATE_SLOTS];
        if (r->key[0] == 0 || memcmp(r->key, key, sizeof key) == 0)
            slot = r;
        else if (!stalest || r->last < stalest->last)
            stalest = r;
    }
    if (!slot)
        slot = stalest, slot->key[0] = 0;
    if (slot->key[0] == 0) {
        memcpy(slot->key, key, sizeof key);
        slot->tokens = s->o.burst;
        slot->last = t;
    }
    slot->tokens += (t - slot->last) * s->o.rate;
    if (slot->tokens > s->o.burst)
        slot->tokens = s->o.burst;
    slot->last = t;
    if (slot->tokens >= 1) {
        slot->tokens -= 1;
    } else {
        wait = (int)ceil((1 - slot->tokens) / s->o.rate);
        if (wait < 1)
            wait = 1;
        s->nlimited++;
    }
    pthread_mutex_unlock(&s->mu);
    return wait;
}

/* ---- responses ------------------------------------------------------------------------------ */

static void free_buf_cb(void *cls) { lp_server_buf_unref(cls); }

static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    ssize_t n = lp_server_sub_read(cls, buf, max);
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void sse_free(void *cls) { lp_server_sub_free(cls); }

static enum MHD_Result send_resp(lp_server *s, struct MHD_Connection *c, const char *method, const char *path,
                                 lp_server_resp *r)
{
    struct MHD_Response *resp = NULL;
    if (r->events && r->status == 200) {
        uint64_t after = 0;
        const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
        if (last) {
            char *end;
            unsigned long long v = strtoull(last, &end, 10);
            if (*last && !*end)
                after = v;
        }
        lp_server_sub *sub = lp_server_sub_new(r->events, after, s->o.keepalive_s);
        if (sub)
            resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_reader, sub, sse_free);
        if (!resp)
            lp_server_sub_free(sub);
        r->type = "text/event-stream; charset=utf-8";
    } else {
        lp_server_buf *b = r->body ? r->body : lp_server_buf_copy("", 0);
        r->body = NULL;
        if (b) {
            resp = MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data, free_buf_cb, b);
            if (!resp)
                lp_server_buf_unref(b);
        }
    }
    if (!resp) {
        logf_(s, "out of memory answering %s %s", method, path);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            r->type ? r->type : "application/json; charset=utf-8");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    MHD_add_response_header(resp, "Cross-Origin-Resource-Policy", "same-origin");
    if (!r->csp || r->csp[0])
        MHD_add_response_header(resp, "Content-Security-Policy", r->csp ? r->csp : DEFAULT_CSP);
    if (r->status == 405)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    if (r->events)
        MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    if (r->retry_after > 0) {
        char ra[24];
        snprintf(ra, sizeof ra, "%d", r->retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    pthread_mutex_lock(&s->mu);
    s->nreq++;
    if (r->status >= 400 && r->status < 500 && r->status != 404)
        s->nrefused++;
    pthread_mutex_unlock(&s->mu);
    logf_(s, "%s %s %d", method, path, r->status);
    return ok;
}

static enum MHD_Result refuse(lp_server *s, struct MHD_Connection *c, const char *method, int status,
                              const char *msg, int retry_after)
{
    lp_server_resp r;
    memset(&r, 0, sizeof r);
    lp_server_resp_error(&r, status, msg);
    r.retry_after = retry_after;
    return send_resp(s, c, method, "(refused)", &r);
}

static const route *find_route(const lp_server *s, const char *path, size_t n)
{
    const route *best = NULL;
    for (size_t i = 0; i < s->nroutes; i++) {
        const route *r = &s->routes[i];
        int match = r->prefix ? (n >= r->len && memcmp(path, r->path, r->len) == 0)
                              : (n == r->len && memcmp(path, r->path, n) == 0);
        if (match && (!best || r->len > best->len))
            best = r;
    }
    return best;
}

/* The bytes of the request's header fields ("Name: value\r\n" each). */
typedef struct hdrsum {
    size_t bytes, n;
} hdrsum;

static enum MHD_Result on_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    hdrsum *h = cls;
    h->bytes += strlen(key) + (value ? strlen(value) : 0) + 4;
    h->n++;
    return MHD_YES;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_data_size,
                                 void **req_cls)
{
    (void)url;
    (void)upload_data;
    lp_server *s = cls;
    reqctx *rc = *req_cls;
    if (!rc)
        return MHD_NO;
    if (rc->answered) { /* more of a body we already refused */
        *upload_data_size = 0;
        return MHD_YES;
    }
    rc->answered = 1;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return refuse(s, c, method, 405, "only GET and HEAD are served", 0);
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if ((cl && strcmp(cl, "0") != 0) || te || *upload_data_size)
        return refuse(s, c, method, 413, "requests with a body are not accepted", 0);
    if (!rc->raw || rc->rawlen > s->o.max_url)
        return refuse(s, c, method, 414, "request target too long", 0);
    /* a NUL byte inside the target ends the C string early: libmicrohttpd's version
     * string follows the whole target (request line "METHOD TARGET VERSION"), so a
     * target shorter than the gap before the version held one */
    if (version && rc->at && version > rc->at && (size_t)(version - rc->at) <= s->o.max_url + 2 &&
        (size_t)(version - rc->at) != rc->rawlen + 1)
        return refuse(s, c, method, 400, "NUL byte or stray blank in the request target", 0);
    size_t pathlen = 0;
    const char *why = check_target(rc->raw, rc->rawlen, &pathlen);
    if (why)
        return refuse(s, c, method, 400, why, 0);
    hdrsum hs = {0, 0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, on_header, &hs);
    if (rc->rawlen + hs.bytes > s->o.max_header)
        return refuse(s, c, method, 431, "request header fields too large", 0);
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (s->loopback && !s->o.any_host && (!host || !loopback_host(host)))
        return refuse(s, c, method, host ? 403 : 400,
                      host ? "the Host header must name this machine (127.0.0.1 or localhost)"
                           : "a Host header naming this machine (127.0.0.1 or localhost) is required",
                      0);
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    int wait = rate_check(s, ci ? ci->client_addr : NULL);
    if (wait)
        return refuse(s, c, method, 429, "too many requests: slow down", wait);
    char path[4096 + 1];
    if (pathlen >= sizeof path)
        return refuse(s, c, method, 414, "path too long", 0);
    memcpy(path, rc->raw, pathlen);
    path[pathlen] = '\0';
    const route *rt = find_route(s, path, pathlen);
    lp_server_resp r;
    memset(&r, 0, sizeof r);
    r.status = 200;
    if (!rt) {
        lp_server_resp_error(&r, 404, "no such page or API endpoint (see /api)");
    } else if (rt->hub) {
        r.events = rt->hub;
    } else {
        lp_server_req q = {s, c, method, path};
        rt->fn(rt->ctx, &q, &r);
        if (r.status < 100 || r.status > 599)
            r.status = 500;
    }
    return send_resp(s, c, method, path, &r);
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)c;
    lp_server *s = cls;
    reqctx *rc = lp_calloc(1, sizeof *rc);
    if (!rc)
        return NULL;
    size_t n = strlen(uri);
    rc->rawlen = n;
    rc->at = uri;
    if (n <= s->o.max_url)
        rc->raw = lp_strndup(uri, n);
    return rc;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    reqctx *rc = *req_cls;
    if (rc) {
        lp_free(rc->raw);
        lp_free(rc);
    }
    *req_cls = NULL;
}

lp_status lp_server_start(lp_server *s, lp_error *err)
{
    if (s->d)
        return lp_error_set(err, LP_ERR_ARG, "the server is already running");
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                     MHD_USE_ERROR_LOG | (s->v6 ? MHD_USE_IPv6 : 0);
    size_t pool = s->o.max_header * 2 > 32768 ? s->o.max_header * 2 : 32768;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_access, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, s,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&s->addr, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)s->o.max_conns, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                            (unsigned)(s->o.per_ip_conns ? s->o.per_ip_conns : 0), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            pool, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->o.timeout_s,
                            MHD_OPTION_THREAD_STACK_SIZE, (size_t)1 << 20, MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
    if (!s->d)
        return lp_error_set(err, LP_ERR_IO, "cannot listen on %s (port in use, or not allowed)", s->listen);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : 0;
    return LP_OK;
}

void lp_server_free(lp_server *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ncaches; i++)
        lp_cmdcache_shutdown(s->caches[i]);
    for (size_t i = 0; i < s->nroutes; i++)
        if (s->routes[i].hub)
            lp_server_hub_close(s->routes[i].hub);
    for (size_t i = 0; i < s->nroutes && s->d; i++) /* let the event streams send their last events */
        if (s->routes[i].hub)
            lp_server_hub_drain(s->routes[i].hub, 2.0);
    if (s->d)
        MHD_stop_daemon(s->d);
    for (size_t i = 0; i < s->nroutes; i++)
        lp_free(s->routes[i].path);
    lp_free(s->routes);
    lp_free(s->caches);
    lp_free(s->rate);
    lp_free(s->listen);
    pthread_mutex_destroy(&s->mu);
    lp_free(s);
}
