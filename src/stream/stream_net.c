/* stream_net.c: the serving loop of stream.h (lp_stream_serve): standard input and/or
 * a TCP listening socket, any number of connections multiplexed with poll(2), each
 * read in large non-blocking chunks and fed to the stream in arrival order. A
 * connection's end (orderly or reset) closes it in the stream (its workers' streams
 * end); read errors on one connection never stop the others. The loop returns when
 * standard input ends (without a listening socket), when max_conns connections were
 * accepted and have all closed, or when *stop is set (checked at least every 200 ms
 * and after every interrupted poll, so a signal handler setting it ends the loop
 * promptly). Results are delivered by the stream (feed and poll) on this thread.
 * Flow control: connections whose data runs more than a window ahead of the oldest open
 * window are not polled while another lags (lp_stream_flow), and read one chunk per
 * round, so a fast sender is slowed by TCP instead of filling memory.
 */
#include "longpole/stream/stream.h"
#include "longpole/base/alloc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_CHUNK ((size_t)256 << 10)

typedef struct nconn {
    int fd;
    uint32_t id;             /* the stream's connection id */
    uint64_t bytes;
    char name[64];
} nconn;

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL, 0);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static lp_status open_listener(const char *spec, int *out, char *host, size_t hostn, unsigned *port, lp_error *err)
{
    char h[256];
    const char *colon, *hs = spec;
    size_t hl;
    if (spec[0] == '[') {
        const char *rb = strchr(spec, ']');
        if (!rb || rb[1] != ':')
            return lp_error_set(err, LP_ERR_ARG, "bad listen address '%s' (expected [HOST]:PORT)", spec);
        hs = spec + 1;
        hl = (size_t)(rb - hs);
        colon = rb + 1;
    } else {
        colon = strrchr(spec, ':');
        if (!colon)
            return lp_error_set(err, LP_ERR_ARG, "bad listen address '%s' (expected HOST:PORT)", spec);
        hl = (size_t)(colon - spec);
    }
    if (hl >= sizeof h)
        return lp_error_set(err, LP_ERR_ARG, "listen address '%s' too long", spec);
    memcpy(h, hs, hl);
    h[hl] = '\0';
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(hl ? h : NULL, colon + 1, &hints, &res);
    if (rc)
        return lp_error_set(err, LP_ERR_ARG, "cannot resolve listen address '%s': %s", spec, gai_strerror(rc));
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0 && set_nonblock(fd) == 0)
            break;
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return lp_error_set(err, LP_ERR_IO, "cannot listen on '%s': %s", spec, strerror(saved));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    *port = 0;
    snprintf(host, hostn, "%.*s", (int)(hostn > 1 ? hostn - 1 : 0), h);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)(void *)&ss;
            *port = ntohs(a->sin_port);
            inet_ntop(AF_INET, &a->sin_addr, host, (socklen_t)hostn);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)(void *)&ss;
            *port = ntohs(a->sin6_port);
            inet_ntop(AF_INET6, &a->sin6_addr, host, (socklen_t)hostn);
        }
    }
    *out = fd;
    return LP_OK;
}

static void peer_name(int fd, char *buf, size_t n)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char h[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)(void *)&ss;
            inet_ntop(AF_INET, &a->sin_addr, h, sizeof h);
            port = ntohs(a->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)(void *)&ss;
            inet_ntop(AF_INET6, &a->sin6_addr, h, sizeof h);
            port = ntohs(a->sin6_port);
        }
    }
    snprintf(buf, n, "%s:%u", h, port);
}

/* Read standard input to its end, blocking (no listening socket: nothing else to wait for). */
static lp_status serve_stdin(lp_stream *s, const lp_serve_opts *o, unsigned char *buf, lp_error *err)
{
    uint32_t id;
    lp_status st = lp_stream_open(s, "-", o->format, &id, err);
    if (st)
        return st;
    uint64_t total = 0;
    if (o->on_conn)
        o->on_conn(o->ctx, "-", 1, 0);
    for (;;) {
        if (o->stop && *o->stop)
            break;
        ssize_t got = read(0, buf, READ_CHUNK);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            lp_stream_close(s, id, 1, NULL);
            return lp_error_set(err, LP_ERR_IO, "reading standard input: %s", strerror(e));
        }
        if (got == 0)
            break;
        total += (uint64_t)got;
        if ((st = lp_stream_feed(s, id, buf, (size_t)got, err)))
            return st;
    }
    if (o->on_conn)
        o->on_conn(o->ctx, "-", 0, total);
    return LP_OK; /* the end of all input: lp_stream_finish closes it */
}

/* The serving loop's state. */
typedef struct srv {
    lp_stream *s;
    const lp_serve_opts *o;
    unsigned char *buf;      /* READ_CHUNK bytes */
    int lfd;                 /* listening socket, -1 once closed */
    nconn *cs;               /* open connections */
    size_t ncs, capcs;
    struct pollfd *pf;       /* [0]: the listener, then one per connection */
    size_t cappf;
    uint8_t *ahead;          /* per connection: wait (flow control) */
    uint32_t *ids;           /* the connections' stream ids */
    size_t capahead;
    uint64_t accepted;
} srv;

/* Standard input as the first connection. */
static lp_status srv_stdin(srv *x, lp_error *err)
{
    uint32_t id;
    lp_status st = lp_stream_open(x->s, "-", x->o->format, &id, err);
    if (st)
        return st;
    void *q = x->cs;
    if (lp_grow(&q, &x->capcs, 1, sizeof(nconn)))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    x->cs = q;
    x->cs[0] = (nconn){0, id, 0, "-"};
    x->ncs = 1;
    set_nonblock(0);
    return LP_OK;
}

/* The poll set: the listener, and every connection not held back by flow control
 * (connections far ahead of the others wait, lp_stream_flow); *npaused of them are. */
static lp_status srv_pollset(srv *x, size_t *npaused, lp_error *err)
{
    size_t np = x->ncs + 1;
    if (np > x->cappf) {
        void *q = x->pf;
        if (lp_grow(&q, &x->cappf, np, sizeof *x->pf))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        x->pf = q;
    }
    if (x->ncs > x->capahead) {
        void *q = x->ahead, *q2 = x->ids;
        size_t c1 = x->capahead, c2 = x->capahead;
        if (lp_grow(&q, &c1, x->ncs, 1) || (x->ahead = q, lp_grow(&q2, &c2, x->ncs, sizeof *x->ids)))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        x->ids = q2;
        x->capahead = c1 < c2 ? c1 : c2;
    }
    for (size_t i = 0; i < x->ncs; i++)
        x->ids[i] = x->cs[i].id;
    *npaused = lp_stream_flow(x->s, x->ids, x->ncs, x->ahead);
    x->pf[0] = (struct pollfd){x->lfd, POLLIN, 0};
    for (size_t i = 0; i < x->ncs; i++)
        x->pf[i + 1] = (struct pollfd){x->cs[i].fd, (short)(*npaused && x->ahead[i] ? 0 : POLLIN), 0};
    return LP_OK;
}

/* Connection i is readable: a few reads (one when some connections are paused), then
 * let others in; at its end (orderly or reset) it is closed in the stream and its fd
 * set to -1. */
static lp_status srv_read(srv *x, size_t i, size_t npaused, lp_error *err)
{
    nconn *c = &x->cs[i];
    lp_status st = LP_OK;
    int closed = 0, abrupt = 0;
    int maxrounds = npaused ? 1 : 4;
    for (int rounds = 0; rounds < maxrounds; rounds++) {
        ssize_t got = read(c->fd, x->buf, READ_CHUNK);
        if (got > 0) {
            c->bytes += (uint64_t)got;
            if ((st = lp_stream_feed(x->s, c->id, x->buf, (size_t)got, err)))
                return st;
            if ((size_t)got < READ_CHUNK)
                break;
            continue;
        }
        if (got == 0) {
            closed = 1;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            closed = abrupt = 1;
        }
        break;
    }
    if (!closed)
        return LP_OK;
    if ((st = lp_stream_close(x->s, c->id, abrupt, err)))
        return st;
    if (x->o->on_conn)
        x->o->on_conn(x->o->ctx, c->name, 0, c->bytes);
    if (c->fd != 0)
        close(c->fd);
    c->fd = -1;
    return LP_OK;
}

/* New connections, until none is waiting (the listener closes after max_conns). */
static lp_status srv_accept(srv *x, lp_error *err)
{
    const lp_serve_opts *o = x->o;
    for (;;) {
        int fd = accept(x->lfd, NULL, NULL);
        if (fd < 0)
            return LP_OK;
        if (set_nonblock(fd) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
            close(fd);
            continue;
        }
        void *q = x->cs;
        if (lp_grow(&q, &x->capcs, x->ncs + 1, sizeof(nconn))) {
            close(fd);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        }
        x->cs = q;
        nconn *c = &x->cs[x->ncs];
        c->fd = fd;
        c->bytes = 0;
        peer_name(fd, c->name, sizeof c->name);
        lp_status st = lp_stream_open(x->s, c->name, o->format, &c->id, err);
        if (st) {
            close(fd);
            return st;
        }
        x->ncs++;
        x->accepted++;
        if (o->on_conn)
            o->on_conn(o->ctx, c->name, 1, 0);
        if (o->max_conns && x->accepted >= o->max_conns) {
            close(x->lfd);
            x->lfd = -1;
            return LP_OK;
        }
    }
}

/* One round: poll (200 ms at most), then data first, closed connections removed, new
 * ones accepted, and the stream polled. */
static lp_status srv_round(srv *x, lp_error *err)
{
    size_t npaused = 0;
    lp_status st = srv_pollset(x, &npaused, err);
    if (st)
        return st;
    int rc = poll(x->pf, (nfds_t)(x->ncs + 1), 200);
    if (rc < 0)
        return errno == EINTR ? LP_OK : lp_error_set(err, LP_ERR_IO, "poll: %s", strerror(errno));
    if (rc == 0)
        return lp_stream_poll(x->s, err);
    for (size_t i = 0; i < x->ncs; i++)
        if (x->pf[i + 1].revents & (POLLIN | POLLHUP | POLLERR))
            if ((st = srv_read(x, i, npaused, err)))
                return st;
    size_t out = 0;
    for (size_t i = 0; i < x->ncs; i++)
        if (x->cs[i].fd >= 0)
            x->cs[out++] = x->cs[i];
    x->ncs = out;
    if (x->lfd >= 0 && (x->pf[0].revents & POLLIN) && (st = srv_accept(x, err)))
        return st;
    return lp_stream_poll(x->s, err);
}

lp_status lp_stream_serve(lp_stream *s, const lp_serve_opts *o, lp_error *err)
{
    unsigned char *buf = lp_malloc(READ_CHUNK);
    if (!buf)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_status st = LP_OK;
    if (!o->listen) {
        st = o->read_stdin ? serve_stdin(s, o, buf, err) : LP_OK;
        lp_free(buf);
        return st;
    }
    srv x;
    memset(&x, 0, sizeof x);
    x.s = s, x.o = o, x.buf = buf, x.lfd = -1;
    char host[300];
    unsigned port = 0;
    if ((st = open_listener(o->listen, &x.lfd, host, sizeof host, &port, err))) {
        lp_free(buf);
        return st;
    }
    if (o->on_listen)
        o->on_listen(o->ctx, host, port);
    if (o->read_stdin)
        st = srv_stdin(&x, err);
    while (!st && !(o->stop && *o->stop) && (x.lfd >= 0 || x.ncs > 0))
        st = srv_round(&x, err);
    for (size_t i = 0; i < x.ncs; i++)
        if (x.cs[i].fd > 0)
            close(x.cs[i].fd);
    if (x.lfd >= 0)
        close(x.lfd);
    lp_free(x.cs);
    lp_free(x.pf);
    lp_free(x.ahead);
    lp_free(x.ids);
    lp_free(buf);
    return st;
}
