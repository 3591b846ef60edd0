/* requests.c: the `requests` generator (genreq.h): request logs in the UberTrace
 * schema with a known causal model, per-host clock skew and network jitter.
 *
 * The system is a template of tasks, each a list of events with a host role and a
 * rule for its (true) time: START (max of the events it depends on, or the request's
 * arrival), DUR (previous event + a random duration), NET (previous event + a network
 * delay), WAIT (max of the previous event and its dependencies) and ACQ (acquire the
 * lock group's resource: max of the previous event and the time the resource frees,
 * members served in order of readiness). The static event graph (task order plus
 * dependencies; ACQ adds none) gives the ground truth: segment A happens before B iff
 * A's end event reaches B's start event; execution segments (after ACQ) of different
 * members of one lock group are mutually exclusive.
 * Every request draws from its own splitmix64 stream (seed, request index), so output
 * does not depend on the batching or the threads. Requests are formatted in batches by
 * worker threads and written in order by the calling thread.
 */
#include "longpole/gen/genreq.h"
#include "longpole/base/alloc.h"
#include "base/pool.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

void lp_genreq_defaults(lp_genreq *g)
{
    memset(g, 0, sizeof *g);
    g->requests = 10000;
    g->segments = 60;
    g->clients = 1000;
    g->webs = 8;
    g->backends = 16;
    g->skew_ns = 50000000;      /* 50 ms */
    g->jitter_ns = 50000;       /* 50 us */
    g->net_ns = 20000000;       /* 20 ms */
    g->dc_net_ns = 300000;      /* 300 us */
    g->server_ns = 2000000;     /* 2 ms */
    g->client_ns = 5000000;     /* 5 ms */
    g->miss_rate = 0.1;
    g->rate = 100;
    g->start_ns = 1690000000LL * 1000000000LL;
    g->seed = 1;
}

lp_status lp_genreq_shape_of(uint32_t segments, lp_genreq_shape *s, lp_error *err)
{
    memset(s, 0, sizeof *s);
    if (segments < 14)
        return lp_error_set(err, LP_ERR_ARG, "a request needs at least 14 segments (got %u)", segments);
    if (segments > 20000)
        return lp_error_set(err, LP_ERR_ARG, "at most 20000 segments per request (got %u)", segments);
    uint32_t rem = segments - 14;
    s->chunks = 1;
    s->rpcs = 1;
    if (rem >= 26) {
        s->js = 3;
        rem -= 12;
    }
    if (rem >= 24) {
        s->lock = 1;
        rem -= 9;
    }
    for (;;) {
        if (rem >= 4 && s->chunks <= s->rpcs && s->chunks < 64) {
            s->chunks++;
            rem -= 4;
        } else if (rem >= 3 && s->rpcs < 256) {
            s->rpcs++;
            rem -= 3;
        } else if (rem >= 4 && s->js >= 3 && s->js < 64) {
            s->js++;
            rem -= 4;
        } else {
            break;
        }
    }
    s->xserver = rem / 2;
    s->xclient = rem - s->xserver;
    return LP_OK;
}

/* ---- the template ---------------------------------------------------------------------- */

enum { H_C, H_W, H_B, H_D };
enum { R_START, R_DUR, R_NET, R_WAIT, R_ACQ };
enum { D_CLIENT, D_SERVER, D_BACKEND, D_TIMER, D_STIMER, D_LOCKX, N_CW, N_WB, N_CHUNK };

#define MAXDEP 300

typedef struct gev {
    char name[24];
    uint16_t task;
    uint8_t host, rule, dist;
    uint8_t group;          /* ACQ: lock group */
    uint16_t slot;          /* H_B: RPC slot */
    uint16_t ndeps;
    uint32_t *deps;         /* event indices */
} gev;

typedef struct gtask {
    char name[24];
    uint32_t first, n;      /* events */
    int optional;           /* the db call */
    int group;              /* lock group member (-1 none) */
} gtask;

typedef struct tmpl {
    gev *ev;
    uint32_t nev, capev;
    gtask *task;
    uint32_t ntask, captask;
    uint32_t ngroups;
    uint32_t nsegs;
    uint32_t render, display;        /* task indices (pipeline) */
    uint32_t chunks;
} tmpl;

static void tmpl_free(tmpl *t)
{
    for (uint32_t i = 0; i < t->nev; i++)
        lp_free(t->ev[i].deps);
    lp_free(t->ev);
    lp_free(t->task);
    memset(t, 0, sizeof *t);
}

static int add_task(tmpl *t, const char *name, int optional, int group)
{
    if (t->ntask == t->captask) {
        void *p = t->task;
        size_t c = t->captask;
        if (lp_grow(&p, &c, t->ntask + 1, sizeof *t->task))
            return -1;
        t->task = p;
        t->captask = (uint32_t)c;
    }
    gtask *k = &t->task[t->ntask++];
    snprintf(k->name, sizeof k->name, "%s", name);
    k->first = t->nev;
    k->n = 0;
    k->optional = optional;
    k->group = group;
    return 0;
}

/* Add an event to the last task; returns its index or UINT32_MAX. */
static uint32_t add_ev(tmpl *t, const char *name, int host, int rule, int dist, uint16_t slot)
{
    if (t->nev == t->capev) {
        void *p = t->ev;
        size_t c = t->capev;
        if (lp_grow(&p, &c, t->nev + 1, sizeof *t->ev))
            return UINT32_MAX;
        t->ev = p;
        t->capev = (uint32_t)c;
    }
    gev *e = &t->ev[t->nev];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->task = (uint16_t)(t->ntask - 1);
    e->host = (uint8_t)host;
    e->rule = (uint8_t)rule;
    e->dist = (uint8_t)dist;
    e->slot = slot;
    t->task[t->ntask - 1].n++;
    return t->nev++;
}

static int add_dep(tmpl *t, uint32_t ev, uint32_t dep)
{
    gev *e = &t->ev[ev];
    uint32_t *d = lp_reallocarray(e->deps, e->ndeps + 1u, sizeof *d);
    if (!d)
        return -1;
    e->deps = d;
    d[e->ndeps++] = dep;
    return 0;
}

/* The template's builders: EV adds an event to the last task and DEP a dependency;
 * both set the builder's `bad` on failure (out of memory). */
#define EV(var, name, host, rule, dist, slot)                                                       \
    do {                                                                                           \
        var = add_ev(t, name, host, rule, dist, slot);                                             \
        if (var == UINT32_MAX)                                                                     \
            bad = 1;                                                                               \
    } while (0)
#define DEP(ev, dep)                                                                                \
    do {                                                                                           \
        if (add_dep(t, ev, dep))                                                                   \
            bad = 1;                                                                               \
    } while (0)

/* page: client -> web -> client; the events others depend on in *fanout, *head, *dom. */
static int tmpl_page(const lp_genreq_shape *s, tmpl *t, uint32_t *fanout, uint32_t *head, uint32_t *dom)
{
    char nm[32];
    uint32_t e;
    int bad = 0;
    if (add_task(t, "page", 0, -1))
        return -1;
    EV(e, "click", H_C, R_START, 0, 0);
    EV(e, "send", H_C, R_DUR, D_CLIENT, 0);
    EV(e, "recv", H_W, R_NET, N_CW, 0);
    EV(e, "parse", H_W, R_DUR, D_SERVER, 0);
    uint32_t half = s->xserver / 2;
    for (uint32_t i = 0; i < half; i++) {
        snprintf(nm, sizeof nm, "auth%u", i + 1);
        EV(e, nm, H_W, R_DUR, D_SERVER, 0);
    }
    EV(*fanout, "fanout", H_W, R_DUR, D_SERVER, 0);
    for (uint32_t i = half; i < s->xserver; i++) {
        snprintf(nm, sizeof nm, "prep%u", i - half + 1);
        EV(e, nm, H_W, R_DUR, D_SERVER, 0);
    }
    EV(*head, "head", H_W, R_DUR, D_SERVER, 0);
    EV(e, "first_byte", H_C, R_NET, N_CW, 0);
    EV(e, "css", H_C, R_DUR, D_CLIENT, 0);
    for (uint32_t i = 0; i < s->xclient; i++) {
        snprintf(nm, sizeof nm, "layout%u", i + 1);
        EV(e, nm, H_C, R_DUR, D_CLIENT, 0);
    }
    EV(*dom, "dom", H_C, R_DUR, D_CLIENT, 0);
    return bad ? -1 : 0;
}

/* RPC fan-out (and the optional db call); each call's reply event in replies[k]. Then
 * the lock group on the web server. */
static int tmpl_calls(const lp_genreq_shape *s, uint32_t ncalls, uint32_t fanout, tmpl *t, uint32_t *replies)
{
    char nm[32];
    uint32_t e;
    int bad = 0;
    for (uint32_t k = 0; k < ncalls; k++) {
        int opt = k == s->rpcs;
        if (opt)
            snprintf(nm, sizeof nm, "db");
        else
            snprintf(nm, sizeof nm, "rpc%u", k + 1);
        if (add_task(t, nm, opt, -1))
            return -1;
        EV(e, "call", H_W, R_START, 0, 0);
        DEP(e, fanout);
        EV(e, "serve", opt ? H_D : H_B, R_NET, N_WB, (uint16_t)k);
        EV(e, "served", opt ? H_D : H_B, R_DUR, D_BACKEND, (uint16_t)k);
        EV(replies[k], "reply", H_W, R_NET, N_WB, 0);
    }
    if (s->lock)
        for (uint32_t k = 0; k < 3; k++) {
            snprintf(nm, sizeof nm, "lock%u", k + 1);
            if (add_task(t, nm, 0, (int)t->ngroups))
                return -1;
            EV(e, "want", H_W, R_START, 0, 0);
            DEP(e, fanout);
            EV(e, "ready", H_W, R_DUR, D_STIMER, 0);
            EV(e, "acquired", H_W, R_ACQ, 0, 0);
            t->ev[e].group = (uint8_t)t->ngroups;
            EV(e, "released", H_W, R_DUR, D_LOCKX, 0);
        }
    if (s->lock)
        t->ngroups++;
    return bad ? -1 : 0;
}

/* render, the producer, after every reply and the head; its chunks (chunk[i]) and
 * their transfers (arrived[i]). */
static int tmpl_render(const lp_genreq_shape *s, uint32_t ncalls, const uint32_t *replies, uint32_t head, tmpl *t,
                       uint32_t *chunk, uint32_t *arrived)
{
    char nm[32];
    uint32_t e;
    int bad = 0;
    if (add_task(t, "render", 0, -1))
        return -1;
    t->render = t->ntask - 1;
    t->chunks = s->chunks;
    EV(e, "gather", H_W, R_START, 0, 0);
    for (uint32_t k = 0; k < ncalls; k++)
        DEP(e, replies[k]);
    DEP(e, head);
    for (uint32_t i = 0; i < s->chunks; i++) {
        snprintf(nm, sizeof nm, "chunk%u", i + 1);
        EV(chunk[i], nm, H_W, R_DUR, D_SERVER, 0);
    }
    for (uint32_t i = 0; i < s->chunks && !bad; i++) {
        snprintf(nm, sizeof nm, "xfer%u", i + 1);
        if (add_task(t, nm, 0, -1))
            return -1;
        EV(e, "sent", H_W, R_START, 0, 0);
        DEP(e, chunk[i]);
        EV(arrived[i], "arrived", H_C, R_NET, N_CHUNK, 0);
    }
    return bad ? -1 : 0;
}

/* display, the consumer (FIFO, after the dom), then the JavaScript on one engine. */
static int tmpl_display(const lp_genreq_shape *s, uint32_t dom, const uint32_t *arrived, tmpl *t)
{
    char nm[32];
    uint32_t e, last = 0;
    int bad = 0;
    if (add_task(t, "display", 0, -1))
        return -1;
    t->display = t->ntask - 1;
    for (uint32_t i = 0; i < s->chunks && !bad; i++) {
        snprintf(nm, sizeof nm, "show%u", i + 1);
        if (i == 0) {
            EV(e, nm, H_C, R_START, 0, 0);
            DEP(e, dom);
        } else {
            EV(e, nm, H_C, R_WAIT, 0, 0);
        }
        DEP(e, arrived[i]);
        snprintf(nm, sizeof nm, "shown%u", i + 1);
        EV(last, nm, H_C, R_DUR, D_CLIENT, 0);
    }
    uint32_t g = t->ngroups;
    for (uint32_t k = 0; k < s->js && !bad; k++) {
        snprintf(nm, sizeof nm, "js%u", k + 1);
        if (add_task(t, nm, 0, (int)g))
            return -1;
        EV(e, "sched", H_C, R_START, 0, 0);
        DEP(e, last);
        EV(e, "ready", H_C, R_DUR, D_TIMER, 0);
        EV(e, "run", H_C, R_ACQ, 0, 0);
        t->ev[e].group = (uint8_t)g;
        EV(e, "mid", H_C, R_DUR, D_CLIENT, 0);
        EV(e, "done", H_C, R_DUR, D_CLIENT, 0);
    }
    if (s->js)
        t->ngroups++;
    return bad ? -1 : 0;
}

#undef EV
#undef DEP

static int build_tmpl(const lp_genreq_shape *s, int with_db, tmpl *t)
{
    memset(t, 0, sizeof *t);
    uint32_t fanout, head, dom, ncalls = s->rpcs + (with_db ? 1 : 0);
    if (tmpl_page(s, t, &fanout, &head, &dom))
        return -1;
    uint32_t *replies = lp_malloc((s->rpcs + 1) * sizeof *replies);
    uint32_t *chunk = lp_malloc(s->chunks * sizeof *chunk), *arrived = lp_malloc(s->chunks * sizeof *arrived);
    int rc = !replies || !chunk || !arrived || tmpl_calls(s, ncalls, fanout, t, replies) ||
                     tmpl_render(s, ncalls, replies, head, t, chunk, arrived) || tmpl_display(s, dom, arrived, t)
                 ? -1
                 : 0;
    lp_free(replies), lp_free(chunk), lp_free(arrived);
    t->nsegs = 0;
    for (uint32_t k = 0; k < t->ntask; k++)
        t->nsegs += t->task[k].n - 1;
    return rc;
}

/* ---- randomness ------------------------------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static inline uint64_t next64(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline double unif(rng *r) { return (double)(next64(r) >> 11) * (1.0 / 9007199254740992.0); }
static inline double expo(rng *r, double mean) { return -mean * log(1.0 - unif(r)); }
static inline uint64_t mix(uint64_t a, uint64_t b)
{
    rng r = {a * 0x9E3779B97F4A7C15ULL ^ b};
    next64(&r);
    return next64(&r);
}

/* Host clock offset: uniform in [-skew, skew], fixed per host name. */
static int64_t host_offset(const lp_genreq *g, int kind, uint32_t idx)
{
    if (g->skew_ns <= 0)
        return 0;
    rng r = {mix(g->seed ^ 0x5eed5eedULL, ((uint64_t)kind << 32) | idx)};
    return (int64_t)llround((unif(&r) * 2 - 1) * (double)g->skew_ns);
}

/* ---- attributes ----------------------------------------------------------------------------- */

static const char *const browsers[] = {"chrome", "firefox", "ie", "safari"};
static const double browser_p[] = {0.40, 0.25, 0.25, 0.10};
static const double browser_f[] = {0.8, 1.0, 1.3, 0.9};
static const char *const platforms[] = {"win7", "winxp", "win8", "macosx", "linux"};
static const double platform_p[] = {0.45, 0.25, 0.12, 0.10, 0.08};
static const double platform_f[] = {1.0, 1.4, 0.9, 0.8, 1.0};
static const char *const conns[] = {"broadband", "wifi", "mobile", "dialup"};
static const double conn_p[] = {0.50, 0.30, 0.17, 0.03};
static const double conn_f[] = {1.0, 1.6, 4.0, 10.0};

static int pick(rng *r, const double *p, int n)
{
    double u = unif(r), acc = 0;
    for (int i = 0; i < n - 1; i++) {
        acc += p[i];
        if (u < acc)
            return i;
    }
    return n - 1;
}

/* ---- one request ------------------------------------------------------------------------------ */

typedef struct gout {
    char *buf;
    size_t len, cap;
    uint64_t rows;
    int nomem;
} gout;

static void put(gout *o, const char *s, size_t n)
{
    if (o->len + n > o->cap) {
        size_t nc = (o->len + n) * 2 + 4096;
        char *b = lp_realloc(o->buf, nc);
        if (!b) {
            o->nomem = 1;
            return;
        }
        o->buf = b;
        o->cap = nc;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

typedef struct sim {
    const lp_genreq *g;
    const tmpl *t;
    int64_t *tt;        /* true time per event */
    uint8_t *on;        /* event present (optional task taken) */
    uint32_t *order;    /* event order for output */
    int64_t *okey;
    uint32_t *mem;      /* lock group members scratch */
} sim;

typedef struct reqinfo {
    uint32_t client, web, db;
    uint32_t slot[256];
    int browser, platform, conn;
    int miss;
} reqinfo;

static int64_t draw(rng *r, const lp_genreq *g, const reqinfo *ri, int dist)
{
    double cf = browser_f[ri->browser] * platform_f[ri->platform], nf = conn_f[ri->conn];
    double j = unif(r) * (double)g->jitter_ns;
    double v;
    /* heavy tails: one segment in twenty is twenty times slower (GC pauses, cache
     * misses, a busy client): every ordering that is not causal shows up */
    double slow = unif(r) < 0.05 ? 20.0 : 1.0;
    switch (dist) {
    case D_CLIENT: v = expo(r, (double)g->client_ns * cf * slow) + 1000; break;
    case D_SERVER: v = expo(r, (double)g->server_ns * slow) + 1000; break;
    case D_BACKEND: v = expo(r, (double)g->server_ns * 0.8 * slow) + 1000; break;
    case D_TIMER: v = expo(r, (double)g->client_ns * 2 * cf * slow) + 1000; break;
    case D_STIMER: v = expo(r, (double)g->server_ns * slow) + 1000; break;
    case D_LOCKX: v = expo(r, (double)g->server_ns * 0.5 * slow) + 1000; break;
    case N_CW: v = (double)g->net_ns * nf + j; break;
    case N_WB: /* data-center links: jitter, and now and then a retransmission */
        v = (double)g->dc_net_ns + j + (unif(r) < 0.02 ? expo(r, 30e6) : 0.0);
        break;
    case N_CHUNK: v = (double)g->net_ns * nf + expo(r, (double)g->net_ns * nf * 0.5) + j; break;
    default: v = 1000;
    }
    return (int64_t)v;
}

/* Simulate request `idx` (true times in s->tt, presence in s->on). */
static void simulate(sim *s, uint64_t idx, int64_t arrival, reqinfo *ri)
{
    const lp_genreq *g = s->g;
    const tmpl *t = s->t;
    rng r = {mix(g->seed, idx)};
    ri->browser = pick(&r, browser_p, 4);
    ri->platform = pick(&r, platform_p, 5);
    ri->conn = pick(&r, conn_p, 4);
    ri->client = (uint32_t)(next64(&r) % (g->clients ? g->clients : 1));
    ri->web = (uint32_t)(next64(&r) % (g->webs ? g->webs : 1));
    ri->db = 0;
    for (uint32_t k = 0; k < 256; k++)
        ri->slot[k] = (uint32_t)(next64(&r) % (g->backends ? g->backends : 1));
    ri->miss = unif(&r) < g->miss_rate;
    int64_t group_free[8];
    for (int k = 0; k < 8; k++)
        group_free[k] = INT64_MIN;
    for (uint32_t k = 0; k < t->ntask; k++) {
        const gtask *tk = &t->task[k];
        int present = !tk->optional || ri->miss;
        for (uint32_t e = tk->first; e < tk->first + tk->n; e++)
            s->on[e] = (uint8_t)present;
        if (!present)
            continue;
        /* events up to a lock acquisition (members of a group pause there) */
        for (uint32_t e = tk->first; e < tk->first + tk->n; e++) {
            const gev *v = &t->ev[e];
            int64_t x;
            if (v->rule == R_START) {
                x = v->ndeps ? INT64_MIN : arrival;
                for (uint16_t d = 0; d < v->ndeps; d++)
                    if (s->on[v->deps[d]] && s->tt[v->deps[d]] > x)
                        x = s->tt[v->deps[d]];
            } else if (v->rule == R_WAIT) {
                x = s->tt[e - 1];
                for (uint16_t d = 0; d < v->ndeps; d++)
                    if (s->on[v->deps[d]] && s->tt[v->deps[d]] > x)
                        x = s->tt[v->deps[d]];
            } else if (v->rule == R_ACQ) {
                s->tt[e] = INT64_MIN; /* resolved with the group */
                break;
            } else {
                x = s->tt[e - 1] + draw(&r, g, ri, v->dist);
            }
            s->tt[e] = x;
        }
        /* the group's last member: serve the members in order of readiness */
        if (tk->group >= 0 && (k + 1 == t->ntask || t->task[k + 1].group != tk->group)) {
            uint32_t nm = 0;
            for (uint32_t q = 0; q <= k; q++)
                if (t->task[q].group == tk->group)
                    s->mem[nm++] = q;
            /* acquisition event index per member, sorted by ready time (stable) */
            for (uint32_t i = 1; i < nm; i++) {
                uint32_t x = s->mem[i], j = i;
                uint32_t ax = t->task[x].first;
                while (t->ev[ax].rule != R_ACQ)
                    ax++;
                while (j > 0) {
                    uint32_t y = s->mem[j - 1], ay = t->task[y].first;
                    while (t->ev[ay].rule != R_ACQ)
                        ay++;
                    if (s->tt[ay - 1] <= s->tt[ax - 1])
                        break;
                    s->mem[j] = y;
                    j--;
                }
                s->mem[j] = x;
            }
            int64_t free_at = group_free[tk->group & 7];
            for (uint32_t i = 0; i < nm; i++) {
                const gtask *m = &t->task[s->mem[i]];
                uint32_t a = m->first;
                while (t->ev[a].rule != R_ACQ)
                    a++;
                int64_t ready = s->tt[a - 1];
                s->tt[a] = ready > free_at ? ready : free_at;
                for (uint32_t e = a + 1; e < m->first + m->n; e++)
                    s->tt[e] = s->tt[e - 1] + draw(&r, g, ri, t->ev[e].dist);
                free_at = s->tt[m->first + m->n - 1];
            }
            group_free[tk->group & 7] = free_at;
        }
    }
}

static const char *host_name(const lp_genreq *g, const reqinfo *ri, const gev *v, char *buf)
{
    (void)g;
    switch (v->host) {
    case H_C: snprintf(buf, 24, "client%u", ri->client + 1); break;
    case H_W: snprintf(buf, 24, "web%u", ri->web + 1); break;
    case H_B: snprintf(buf, 24, "be%u", ri->slot[v->slot & 255] + 1); break;
    default: snprintf(buf, 24, "db1"); break;
    }
    return buf;
}

static int64_t host_off(const lp_genreq *g, const reqinfo *ri, const gev *v)
{
    switch (v->host) {
    case H_C: return host_offset(g, 0, ri->client);
    case H_W: return host_offset(g, 1, ri->web);
    case H_B: return host_offset(g, 2, ri->slot[v->slot & 255]);
    default: return host_offset(g, 3, 0);
    }
}

static inline int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

/* Format one request's rows (sorted by true time, task order kept for ties). */
static void format_request(sim *s, uint64_t idx, const reqinfo *ri, gout *o, gout *attrs, gout *perhost)
{
    const tmpl *t = s->t;
    const lp_genreq *g = s->g;
    uint32_t n = 0;
    for (uint32_t e = 0; e < t->nev; e++)
        if (s->on[e])
            s->order[n++] = e;
    for (uint32_t i = 1; i < n; i++) {
        uint32_t x = s->order[i], j = i;
        while (j > 0 && s->tt[s->order[j - 1]] > s->tt[x]) {
            s->order[j] = s->order[j - 1];
            j--;
        }
        s->order[j] = x;
    }
    char line[256], hb[24];
    for (uint32_t i = 0; i < n; i++) {
        const gev *v = &t->ev[s->order[i]];
        const gtask *tk = &t->task[v->task];
        int64_t local = floor_div(s->tt[s->order[i]] + host_off(g, ri, v), 1000);
        host_name(g, ri, v, hb);
        size_t k = 0;
        if (g->jsonl) {
            k = (size_t)snprintf(line, sizeof line, "{\"request\":\"r%llu\",\"host\":\"%s\",\"time_us\":",
                                 (unsigned long long)idx + 1, hb);
            k += lp_fmt_i64(line + k, local);
            k += (size_t)snprintf(line + k, sizeof line - k, ",\"event\":\"%s\",\"task\":\"%s\"}\n", v->name,
                                  tk->name);
        } else if (perhost) {
            k = (size_t)snprintf(line, sizeof line, "r%llu,", (unsigned long long)idx + 1);
            k += lp_fmt_i64(line + k, local);
            k += (size_t)snprintf(line + k, sizeof line - k, ",%s,%s,%u\n", v->name, tk->name,
                                  s->order[i] - tk->first);
        } else {
            /* hand-formatted: the benchmark writes a hundred million of these */
            line[k++] = 'r';
            k += lp_fmt_u64(line + k, idx + 1);
            line[k++] = ',';
            size_t hl = strlen(hb);
            memcpy(line + k, hb, hl);
            k += hl;
            line[k++] = ',';
            k += lp_fmt_i64(line + k, local);
            line[k++] = ',';
            size_t el = strlen(v->name);
            memcpy(line + k, v->name, el);
            k += el;
            line[k++] = ',';
            size_t tl = strlen(tk->name);
            memcpy(line + k, tk->name, tl);
            k += tl;
            line[k++] = '\n';
        }
        if (perhost) {
            uint32_t h = v->host == H_C ? ri->client : v->host == H_W ? g->clients + ri->web
                       : v->host == H_B ? g->clients + g->webs + ri->slot[v->slot & 255]
                                        : g->clients + g->webs + g->backends;
            put(&perhost[h], line, k);
            perhost[h].rows++;
        } else {
            put(o, line, k);
            o->rows++;
        }
    }
    int k = snprintf(line, sizeof line, "r%llu,%s,%s,%s\n", (unsigned long long)idx + 1, browsers[ri->browser],
                     platforms[ri->platform], conns[ri->conn]);
    put(attrs, line, (size_t)k);
}

/* ---- truth ------------------------------------------------------------------------------------ */

lp_status lp_genreq_truth(const lp_genreq *g, lp_causal *m, lp_error *err)
{
    lp_genreq_shape sh;
    lp_status st = lp_genreq_shape_of(g->segments, &sh, err);
    if (st)
        return st;
    tmpl t;
    if (build_tmpl(&sh, g->miss_rate > 0, &t)) {
        tmpl_free(&t);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    uint32_t E = t.nev, W = (E + 63) / 64;
    uint64_t *reach = lp_calloc((size_t)E * W, sizeof *reach);
    uint32_t *segof = lp_malloc(E * sizeof *segof); /* segment starting at event e */
    if ((st = lp_causal_init(m, err)) != LP_OK || !reach || !segof) {
        lp_free(reach), lp_free(segof), tmpl_free(&t);
        if (st == LP_OK)
            lp_causal_release(m);
        return st ? st : lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    /* reach[e]: events reachable from e (reflexive). Edges go to later-declared events
     * except task order, which also goes forward: process in reverse declaration order. */
    for (uint32_t e = E; e-- > 0;) {
        reach[(size_t)e * W + (e >> 6)] |= 1ULL << (e & 63);
        /* successors: next event in the task, and every event depending on e */
        const gev *v = &t.ev[e];
        const gtask *tk = &t.task[v->task];
        if (e + 1 < tk->first + tk->n)
            for (uint32_t w = 0; w < W; w++)
                reach[(size_t)e * W + w] |= reach[(size_t)(e + 1) * W + w];
        for (uint32_t x = e + 1; x < E; x++)
            for (uint16_t d = 0; d < t.ev[x].ndeps; d++)
                if (t.ev[x].deps[d] == e)
                    for (uint32_t w = 0; w < W; w++)
                        reach[(size_t)e * W + w] |= reach[(size_t)x * W + w];
    }
    /* segments in task order */
    for (uint32_t k = 0; k < t.ntask && st == LP_OK; k++)
        for (uint32_t e = t.task[k].first; e + 1 < t.task[k].first + t.task[k].n && st == LP_OK; e++)
            st = lp_causal_segment(m, t.task[k].name, t.ev[e].name, t.ev[e + 1].name, &segof[e], err);
    if (st) {
        lp_free(reach), lp_free(segof), tmpl_free(&t);
        lp_causal_release(m);
        return st;
    }
    uint32_t MW = m->words;
    for (uint32_t k = 0; k < t.ntask; k++)
        for (uint32_t a = t.task[k].first; a + 1 < t.task[k].first + t.task[k].n; a++) {
            uint32_t A = segof[a];
            m->seg_count[A] = t.task[k].optional ? (uint64_t)llround((double)g->requests * g->miss_rate) : g->requests;
            m->seg_cross[A] = t.ev[a].host != t.ev[a + 1].host;
            /* post-acquire segments of a lock group member */
            int xa = 0;
            for (uint32_t q = t.task[k].first; q <= a; q++)
                xa |= t.ev[q].rule == R_ACQ;
            for (uint32_t k2 = 0; k2 < t.ntask; k2++)
                for (uint32_t b = t.task[k2].first; b + 1 < t.task[k2].first + t.task[k2].n; b++) {
                    uint32_t B = segof[b];
                    if (A == B)
                        continue;
                    m->seen[(size_t)A * MW + (B >> 6)] |= 1ULL << (B & 63);
                    int hb = (reach[(size_t)(a + 1) * W + (b >> 6)] >> (b & 63)) & 1; /* end(A) reaches start(B) */
                    int rev = (reach[(size_t)(b + 1) * W + (a >> 6)] >> (a & 63)) & 1;
                    if (!hb)
                        m->hb[(size_t)A * MW + (B >> 6)] &= ~(1ULL << (B & 63));
                    int xb = 0;
                    for (uint32_t q = t.task[k2].first; q <= b; q++)
                        xb |= t.ev[q].rule == R_ACQ;
                    int excl = k != k2 && t.task[k].group >= 0 && t.task[k].group == t.task[k2].group && xa && xb;
                    if (!hb && !rev && !excl)
                        m->mx[(size_t)A * MW + (B >> 6)] &= ~(1ULL << (B & 63));
                }
        }
    m->nreq = g->requests;
    lp_free(reach), lp_free(segof), tmpl_free(&t);
    return lp_causal_finish(m, NULL, NULL, err);
}

/* ---- writing ----------------------------------------------------------------------------------- */

typedef struct wjob {
    const lp_genreq *g;
    const tmpl *t;
    uint64_t lo, hi;        /* this round: requests [lo, hi) */
    int64_t *arrival;       /* arrival time per request of the round */
    gout *logs, *attrs;     /* per thread */
    gout **perhost;         /* per thread: nhosts buffers (per-host mode) */
    uint32_t nhosts;
} wjob;

static lp_status wjob_run(void *ctx, size_t tid, size_t n, lp_error *err)
{
    wjob *w = ctx;
    uint64_t lo, hi;
    lp_status st = LP_OK;
    lp_pool_range(w->hi - w->lo, tid, n, &lo, &hi);
    const tmpl *t = w->t;
    sim s = {w->g, t, NULL, NULL, NULL, NULL, NULL};
    s.tt = lp_malloc(t->nev * sizeof *s.tt);
    s.on = lp_malloc(t->nev);
    s.order = lp_malloc(t->nev * sizeof *s.order);
    s.mem = lp_malloc(t->ntask * sizeof *s.mem);
    reqinfo *ri = lp_malloc(sizeof *ri);
    if (!s.tt || !s.on || !s.order || !s.mem || !ri) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    } else {
        for (uint64_t i = lo; i < hi; i++) {
            simulate(&s, w->lo + i, w->arrival[i], ri);
            format_request(&s, w->lo + i, ri, &w->logs[tid], &w->attrs[tid], w->perhost ? w->perhost[tid] : NULL);
        }
    }
    lp_free(s.tt), lp_free(s.on), lp_free(s.order), lp_free(s.mem), lp_free(ri);
    return st;
}

static lp_status write_all(FILE *f, gzFile gz, const char *p, size_t n, const char *path, lp_error *err)
{
    if (!n)
        return LP_OK;
    if (gz) {
        while (n) {
            unsigned k = n > (1u << 30) ? (1u << 30) : (unsigned)n;
            if (gzwrite(gz, p, k) != (int)k)
                return lp_error_set(err, LP_ERR_IO, "writing '%s' failed", path);
            p += k;
            n -= k;
        }
        return LP_OK;
    }
    if (fwrite(p, 1, n, f) != n)
        return lp_error_set(err, LP_ERR_IO, "writing '%s': %s", path, strerror(errno));
    return LP_OK;
}

static void hostname_of(const lp_genreq *g, uint32_t h, char *buf)
{
    if (h < g->clients)
        snprintf(buf, 24, "client%u", h + 1);
    else if (h < g->clients + g->webs)
        snprintf(buf, 24, "web%u", h - g->clients + 1);
    else if (h < g->clients + g->webs + g->backends)
        snprintf(buf, 24, "be%u", h - g->clients - g->webs + 1);
    else
        snprintf(buf, 24, "db1");
}

static int64_t offset_of(const lp_genreq *g, uint32_t h)
{
    if (h < g->clients)
        return host_offset(g, 0, h);
    if (h < g->clients + g->webs)
        return host_offset(g, 1, h - g->clients);
    if (h < g->clients + g->webs + g->backends)
        return host_offset(g, 2, h - g->clients - g->webs);
    return host_offset(g, 3, 0);
}

/* The writer's state: the files and the per-thread buffers of the rounds. */
typedef struct gwrite {
    const lp_genreq *g;
    const char *prefix;
    size_t plen;
    char *path;             /* scratch for file names (plen + 64 bytes) */
    char *logpath;          /* the log's name, for messages */
    unsigned nthr;
    uint32_t nhosts;
    FILE *logf, *attrf;
    gzFile gz;
    wjob w;
    uint8_t *hostused;      /* per-host mode: host file started */
    lp_genreq_out *out;
} gwrite;

/* Per-host mode: the buffers and the folder, every host file removed (started on its
 * first rows). */
static lp_status gw_open_hosts(gwrite *x, lp_error *err)
{
    x->w.perhost = lp_calloc(x->nthr, sizeof *x->w.perhost);
    if (!x->w.perhost)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (unsigned i = 0; i < x->nthr; i++) {
        x->w.perhost[i] = lp_calloc(x->nhosts, sizeof **x->w.perhost);
        if (!x->w.perhost[i])
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    snprintf(x->path, x->plen + 64, "%s.hosts", x->prefix);
    if (mkdir(x->path, 0777) != 0 && errno != EEXIST)
        return lp_error_set(err, LP_ERR_IO, "cannot create '%s': %s", x->path, strerror(errno));
    for (uint32_t h = 0; h < x->nhosts; h++) {
        char hn[24];
        hostname_of(x->g, h, hn);
        snprintf(x->path, x->plen + 64, "%s.hosts/%s.csv", x->prefix, hn);
        remove(x->path);
    }
    return LP_OK;
}

/* The log (one file, or the per-host folder) and the attributes file, with headers. */
static lp_status gw_open(gwrite *x, lp_error *err)
{
    const lp_genreq *g = x->g;
    lp_status st;
    if (g->per_host) {
        if ((st = gw_open_hosts(x, err)))
            return st;
    } else {
        snprintf(x->path, x->plen + 64, "%s.%s%s", x->prefix, g->jsonl ? "jsonl" : "csv", g->gzip ? ".gz" : "");
        if (g->gzip)
            x->gz = gzopen(x->path, "wb6");
        else
            x->logf = fopen(x->path, "w");
        if (!x->logf && !x->gz)
            return lp_error_set(err, LP_ERR_IO, "cannot write '%s': %s", x->path, strerror(errno));
        if (!g->jsonl && (st = write_all(x->logf, x->gz, "request,host,time_us,event,task\n", 32, x->path, err)))
            return st;
    }
    x->logpath = lp_strndup(x->path, strlen(x->path));
    snprintf(x->path, x->plen + 64, "%s.attrs.csv", x->prefix);
    x->attrf = fopen(x->path, "w");
    if (!x->attrf || !x->logpath)
        return lp_error_set(err, LP_ERR_IO, "cannot write '%s': %s", x->path, strerror(errno));
    fputs("request,browser,platform,connection\n", x->attrf);
    return LP_OK;
}

/* A round's per-thread buffers, in thread order: log rows (one-file mode) and
 * attributes. */
static lp_status gw_flush_threads(gwrite *x, lp_error *err)
{
    lp_status st = LP_OK;
    for (unsigned i = 0; i < x->nthr && st == LP_OK; i++) {
        gout *lg = &x->w.logs[i], *at = &x->w.attrs[i];
        if (lg->nomem || at->nomem)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        if (!x->g->per_host) {
            st = write_all(x->logf, x->gz, lg->buf, lg->len, x->logpath, err);
            x->out->rows += lg->rows;
            x->out->bytes += lg->len;
        }
        if (st == LP_OK && fwrite(at->buf, 1, at->len, x->attrf) != at->len)
            st = lp_error_set(err, LP_ERR_IO, "writing attributes: %s", strerror(errno));
        lg->len = at->len = 0;
        lg->rows = 0;
    }
    return st;
}

/* Per-host mode: a round's rows appended to each host's file, in thread order. */
static lp_status gw_flush_hosts(gwrite *x, lp_error *err)
{
    lp_status st = LP_OK;
    for (uint32_t h = 0; h < x->nhosts && st == LP_OK; h++) {
        size_t tot = 0;
        for (unsigned i = 0; i < x->nthr; i++)
            tot += x->w.perhost[i][h].len;
        if (!tot)
            continue;
        char hn[24];
        hostname_of(x->g, h, hn);
        snprintf(x->path, x->plen + 64, "%s.hosts/%s.csv", x->prefix, hn);
        FILE *hf = fopen(x->path, "a");
        if (!hf)
            return lp_error_set(err, LP_ERR_IO, "cannot write '%s': %s", x->path, strerror(errno));
        if (!x->hostused[h]) {
            fputs("request,time_us,event,task,seq\n", hf);
            x->hostused[h] = 1;
            x->out->hosts++;
        }
        for (unsigned i = 0; i < x->nthr; i++) {
            gout *b = &x->w.perhost[i][h];
            if (b->nomem)
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            fwrite(b->buf, 1, b->len, hf);
            x->out->rows += b->rows;
            x->out->bytes += b->len;
            b->len = 0;
            b->rows = 0;
        }
        if (fclose(hf) && st == LP_OK)
            st = lp_error_set(err, LP_ERR_IO, "writing '%s': %s", x->path, strerror(errno));
    }
    return st;
}

/* The requests, in rounds of 4096 per thread: arrivals drawn from one stream for the
 * whole run, the round simulated on the threads, then written in order. */
static lp_status gw_rounds(gwrite *x, uint64_t round, lp_error *err)
{
    const lp_genreq *g = x->g;
    wjob *w = &x->w;
    lp_status st = LP_OK;
    rng ar = {mix(g->seed, 0xA881FA1ULL)};
    double now = (double)g->start_ns;
    lp_pool *pool = NULL;
    lp_pool_new(&pool, x->nthr - 1, NULL); /* for every round; without it, the parts run here */
    for (uint64_t lo = 0; lo < g->requests && st == LP_OK; lo += round) {
        w->lo = lo;
        w->hi = lo + round < g->requests ? lo + round : g->requests;
        for (uint64_t i = lo; i < w->hi; i++) {
            w->arrival[i - lo] = (int64_t)now;
            now += expo(&ar, 1e9 / g->rate);
        }
        if ((st = lp_pool_run(pool, x->nthr, wjob_run, w, err)))
            break;
        st = gw_flush_threads(x, err);
        if (g->per_host && st == LP_OK)
            st = gw_flush_hosts(x, err);
    }
    lp_pool_free(pool);
    return st;
}

/* The files beside the log: each host's clock offset, the categories of the system
 * (docs/formats/mystery-categories.md) and the true causal model. */
static lp_status gw_extras(gwrite *x, lp_error *err)
{
    const lp_genreq *g = x->g;
    char *path = x->path;
    snprintf(path, x->plen + 64, "%s.skew.csv", x->prefix);
    FILE *sf = fopen(path, "w");
    if (!sf)
        return lp_error_set(err, LP_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    fputs("host,offset_ns\n", sf);
    for (uint32_t h = 0; h < x->nhosts; h++) {
        char hn[24];
        hostname_of(g, h, hn);
        fprintf(sf, "%s,%lld\n", hn, (long long)offset_of(g, h));
    }
    if (fclose(sf))
        return lp_error_set(err, LP_ERR_IO, "writing '%s': %s", path, strerror(errno));
    snprintf(path, x->plen + 64, "%s.categories", x->prefix);
    FILE *cf = fopen(path, "w");
    if (!cf)
        return lp_error_set(err, LP_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    fputs("# categories of `longpole generate requests` (first match wins)\n"
          "network  network  yes\n"
          "server   task     ^(rpc[0-9]+|db|lock[0-9]+|render)$\n"
          "server   segment  ^page:(recv|parse|auth[0-9]+|fanout|prep[0-9]+)->\n"
          "client   task     ^(page|display|js[0-9]+)$\n",
          cf);
    if (fclose(cf))
        return lp_error_set(err, LP_ERR_IO, "writing '%s': %s", path, strerror(errno));
    lp_causal truth;
    lp_status st = lp_genreq_truth(g, &truth, err);
    if (st)
        return st;
    snprintf(path, x->plen + 64, "%s.truth.json", x->prefix);
    st = lp_causal_save(&truth, path, err);
    lp_causal_release(&truth);
    return st;
}

/* Close the files (a failure to close becomes the result unless st is already one)
 * and free the buffers. */
static lp_status gw_close(gwrite *x, lp_status st, lp_error *err)
{
    wjob *w = &x->w;
    if (x->logf && fclose(x->logf) && st == LP_OK)
        st = lp_error_set(err, LP_ERR_IO, "writing the log: %s", strerror(errno));
    if (x->gz && gzclose(x->gz) != Z_OK && st == LP_OK)
        st = lp_error_set(err, LP_ERR_IO, "writing the compressed log failed");
    if (x->attrf && fclose(x->attrf) && st == LP_OK)
        st = lp_error_set(err, LP_ERR_IO, "writing the attributes: %s", strerror(errno));
    if (w->logs)
        for (unsigned i = 0; i < x->nthr; i++)
            lp_free(w->logs[i].buf);
    if (w->attrs)
        for (unsigned i = 0; i < x->nthr; i++)
            lp_free(w->attrs[i].buf);
    if (w->perhost)
        for (unsigned i = 0; i < x->nthr; i++) {
            if (w->perhost[i])
                for (uint32_t h = 0; h < x->nhosts; h++)
                    lp_free(w->perhost[i][h].buf);
            lp_free(w->perhost[i]);
        }
    lp_free(w->perhost), lp_free(w->logs), lp_free(w->attrs), lp_free(w->arrival);
    lp_free(x->hostused), lp_free(x->path), lp_free(x->logpath);
    return st;
}

lp_status lp_genreq_write(const lp_genreq *g, const char *prefix, lp_genreq_out *out, lp_error *err)
{
    memset(out, 0, sizeof *out);
    lp_genreq_shape sh;
    lp_status st = lp_genreq_shape_of(g->segments, &sh, err);
    if (st)
        return st;
    if (g->requests == 0 || g->clients == 0 || g->webs == 0 || g->backends == 0 || !(g->rate > 0))
        return lp_error_set(err, LP_ERR_ARG, "requests, hosts and rate must be positive");
    tmpl t;
    if (build_tmpl(&sh, g->miss_rate > 0, &t)) {
        tmpl_free(&t);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    gwrite x;
    memset(&x, 0, sizeof x);
    x.g = g, x.prefix = prefix, x.out = out;
    x.plen = strlen(prefix);
    x.path = lp_malloc(x.plen + 64);
    x.nthr = lp_pool_threads(g->threads, 64);
    x.nhosts = g->clients + g->webs + g->backends + 1;
    x.w.g = g;
    x.w.t = &t;
    x.w.nhosts = x.nhosts;
    uint64_t round = 4096 * (uint64_t)x.nthr;
    x.w.arrival = lp_malloc(round * sizeof *x.w.arrival);
    x.w.logs = lp_calloc(x.nthr, sizeof *x.w.logs);
    x.w.attrs = lp_calloc(x.nthr, sizeof *x.w.attrs);
    x.hostused = lp_calloc(x.nhosts, 1);
    if (!x.path || !x.w.arrival || !x.w.logs || !x.w.attrs || !x.hostused)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (!st)
        st = gw_open(&x, err);
    if (!st)
        st = gw_rounds(&x, round, err);
    if (!st && !g->per_host)
        out->hosts = x.nhosts; /* upper bound; every host is likely used */
    if (!st)
        st = gw_extras(&x, err);
    st = gw_close(&x, st, err);
    tmpl_free(&t);
    return st;
}
