/* serve_hub.c: event hubs for server-sent events (serve.h; the format is the HTML
 * Living Standard's "Server-sent events" §9.2: "id:", "event:" and "data:" lines, an
 * empty line ending each event, ":" comment lines as keepalives).
 *
 * Invariants: events get ids 1, 2, ... in publication order; the hub keeps the events
 * with ids [first, next) in a ring (at most keep_events, and their data at most
 * keep_bytes: the oldest are dropped first, never the newest); every subscriber has a
 * cursor (the next id it wants) and reads under the hub's mutex, waiting on its
 * condition variable, which publish and close broadcast. A subscriber whose cursor fell
 * behind `first` skips to `first` (and is told so by a comment line).
 */
#include "serve/serve_int.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct hub_event {
    uint64_t id;
    char *name;              /* lp_malloc'd */
    char *data;              /* lp_malloc'd, n bytes + NUL */
    size_t n;
} hub_event;

struct lp_server_hub {
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* broadcast on publish and close */
    hub_event *ring;         /* [cap] event id k lives at ring[(k - 1) % cap] */
    size_t cap;
    uint64_t first, next;    /* kept: [first, next) */
    size_t bytes, keep_bytes;/* data bytes kept, and the bound */
    int closed;
    unsigned nsubs;          /* subscribers alive */
};

struct lp_server_sub {
    lp_server_hub *h;
    uint64_t cursor;         /* next event id to send */
    double keepalive_s;
    char *pend;              /* formatted bytes not yet sent */
    size_t plen, poff, pcap;
    int ended;
};

/* ---- the hub -------------------------------------------------------------------------- */

lp_status lp_server_hub_new(lp_server_hub **out, size_t keep_events, size_t keep_bytes, lp_error *err)
{
    *out = NULL;
    lp_server_hub *h = lp_calloc(1, sizeof *h);
    if (!h)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    h->cap = keep_events ? keep_events : 4096;
    h->keep_bytes = keep_bytes ? keep_bytes : (size_t)64 << 20;
    h->ring = lp_calloc(h->cap, sizeof *h->ring);
    if (!h->ring) {
        lp_free(h);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    h->first = h->next = 1;
    pthread_mutex_init(&h->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->cv, &ca);
    pthread_condattr_destroy(&ca);
    *out = h;
    return LP_OK;
}

static void drop_oldest(lp_server_hub *h)
{
    hub_event *e = &h->ring[(h->first - 1) % h->cap];
    h->bytes -= e->n;
    lp_free(e->name);
    lp_free(e->data);
    memset(e, 0, sizeof *e);
    h->first++;
}

lp_status lp_server_hub_publish(lp_server_hub *h, const char *event, const char *data, size_t n, lp_error *err)
{
    char *name = lp_strndup(event ? event : "message", strlen(event ? event : "message"));
    char *copy = lp_malloc(n + 1);
    if (!name || !copy) {
        lp_free(name);
        lp_free(copy);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    memcpy(copy, data, n);
    copy[n] = '\0';
    pthread_mutex_lock(&h->mu);
    if (h->closed) {
        pthread_mutex_unlock(&h->mu);
        lp_free(name);
        lp_free(copy);
        return lp_error_set(err, LP_ERR_ARG, "the event hub is closed");
    }
    while (h->next - h->first >= h->cap || (h->next > h->first && h->bytes + n > h->keep_bytes))
        drop_oldest(h);
    hub_event *e = &h->ring[(h->next - 1) % h->cap];
    e->id = h->next++;
    e->name = name;
    e->data = copy;
    e->n = n;
    h->bytes += n;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    return LP_OK;
}

void lp_server_hub_close(lp_server_hub *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->mu);
    h->closed = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

uint64_t lp_server_hub_count(lp_server_hub *h)
{
    pthread_mutex_lock(&h->mu);
    uint64_t n = h->next - 1;
    pthread_mutex_unlock(&h->mu);
    return n;
}

lp_status lp_server_hub_dump(lp_server_hub *h, const char *event, lp_server_buf **out, lp_error *err)
{
    *out = NULL;
    pthread_mutex_lock(&h->mu);
    size_t total = 0;
    for (uint64_t k = h->first; k < h->next; k++) {
        const hub_event *e = &h->ring[(k - 1) % h->cap];
        if (!event || strcmp(e->name, event) == 0)
            total += e->n + 1;
    }
    char *buf = lp_malloc(total + 1);
    if (!buf) {
        pthread_mutex_unlock(&h->mu);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    size_t len = 0;
    for (uint64_t k = h->first; k < h->next; k++) {
        const hub_event *e = &h->ring[(k - 1) % h->cap];
        if (event && strcmp(e->name, event) != 0)
            continue;
        memcpy(buf + len, e->data, e->n);
        len += e->n;
        buf[len++] = '\n';
    }
    pthread_mutex_unlock(&h->mu);
    *out = lp_server_buf_take(buf, len);
    return *out ? LP_OK : lp_error_set(err, LP_ERR_NOMEM, "out of memory");
}

void lp_server_hub_free(lp_server_hub *h)
{
    if (!h)
        return;
    while (h->first < h->next)
        drop_oldest(h);
    lp_free(h->ring);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    lp_free(h);
}

int lp_server_hub_drain(lp_server_hub *h, double timeout_s)
{
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += (time_t)timeout_s;
    pthread_mutex_lock(&h->mu);
    while (h->nsubs && pthread_cond_timedwait(&h->cv, &h->mu, &dl) != ETIMEDOUT)
        ;
    int left = (int)h->nsubs;
    pthread_mutex_unlock(&h->mu);
    return left;
}

/* ---- subscribers ------------------------------------------------------------------------ */

lp_server_sub *lp_server_sub_new(lp_server_hub *h, uint64_t after, double keepalive_s)
{
    lp_server_sub *s = lp_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->h = h;
    pthread_mutex_lock(&h->mu);
    h->nsubs++;
    pthread_mutex_unlock(&h->mu);
    s->cursor = after + 1;
    s->keepalive_s = keepalive_s > 0 ? keepalive_s : 15;
    return s;
}

void lp_server_sub_free(lp_server_sub *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->h->mu);
    s->h->nsubs--;
    pthread_cond_broadcast(&s->h->cv);
    pthread_mutex_unlock(&s->h->mu);
    lp_free(s->pend);
    lp_free(s);
}

static int pend_reserve(lp_server_sub *s, size_t n)
{
    if (s->plen + n + 1 <= s->pcap)
        return 0;
    size_t cap = s->pcap ? s->pcap : 1024;
    while (cap < s->plen + n + 1)
        cap *= 2;
    char *p = lp_realloc(s->pend, cap);
    if (!p)
        return -1;
    s->pend = p;
    s->pcap = cap;
    return 0;
}

static int pend_add(lp_server_sub *s, const char *p, size_t n)
{
    if (pend_reserve(s, n))
        return -1;
    memcpy(s->pend + s->plen, p, n);
    s->plen += n;
    s->pend[s->plen] = '\0';
    return 0;
}

/* Format event e: "id: N\nevent: NAME\n" then one "data: " line per line of the data. */
static int pend_event(lp_server_sub *s, const hub_event *e)
{
    char head[64];
    int k = snprintf(head, sizeof head, "id: %llu\nevent: ", (unsigned long long)e->id);
    if (pend_add(s, head, (size_t)k) || pend_add(s, e->name, strlen(e->name)) || pend_add(s, "\n", 1))
        return -1;
    const char *p = e->data, *end = e->data + e->n;
    do {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p && le[-1] == '\r')
            le--;
        if (pend_add(s, "data: ", 6) || pend_add(s, p, (size_t)(le - p)) || pend_add(s, "\n", 1))
            return -1;
        p = nl ? nl + 1 : end;
    } while (p < end);
    return pend_add(s, "\n", 1);
}

ssize_t lp_server_sub_read(lp_server_sub *s, char *buf, size_t max)
{
    if (s->poff < s->plen) {
        size_t n = s->plen - s->poff < max ? s->plen - s->poff : max;
        memcpy(buf, s->pend + s->poff, n);
        s->poff += n;
        return (ssize_t)n;
    }
    if (s->ended)
        return -1;
    s->plen = s->poff = 0;
    lp_server_hub *h = s->h;
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += (time_t)s->keepalive_s;
    dl.tv_nsec += (long)((s->keepalive_s - (double)(time_t)s->keepalive_s) * 1e9);
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        if (s->cursor < h->first) {
            char note[96];
            int k = snprintf(note, sizeof note, ": %llu earlier events were dropped\n",
                             (unsigned long long)(h->first - s->cursor));
            s->cursor = h->first;
            if (pend_add(s, note, (size_t)k))
                rc = -1;
        }
        if (s->cursor < h->next) {
            /* every event available now, in one go */
            while (rc == 0 && s->cursor < h->next && s->plen < 65536)
                rc = pend_event(s, &h->ring[(s->cursor++ - 1) % h->cap]);
            break;
        }
        if (h->closed) {
            s->ended = 1;
            break;
        }
        if (pthread_cond_timedwait(&h->cv, &h->mu, &dl) == ETIMEDOUT) {
            rc = pend_add(s, ":\n\n", 3); /* keepalive: also finds closed connections */
            break;
        }
    }
    pthread_mutex_unlock(&h->mu);
    if (rc)
        return -1;
    if (s->plen == 0)
        return -1; /* ended */
    return lp_server_sub_read(s, buf, max);
}
