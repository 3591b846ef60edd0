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
    int lfd = -1;
    char host[300];
    unsigned port = 0;
    if ((st = open_listener(o->listen, &lfd, host, sizeof host, &port, err))) {
        lp_free(buf);
        return st;
    }
    if (o->on_listen)
        o->on_listen(o->ctx, host, port);
    nconn *cs = NULL;
    size_t ncs = 0, capcs = 0;
    struct pollfd *pf = NULL;
    size_t cappf = 0;
    uint8_t *ahead = NULL;   /* per connection: wait (flow control) */
    uint32_t *ids = NULL;    /* the connections' stream ids */
    size_t capahead = 0;
    uint64_t accepted = 0;
    int stdin_open = 0;
    if (o->read_stdin) {
        uint32_t id;
        if ((st = lp_stream_open(s, "-", o->format, &id, err)))
            goto out;
        void *q = cs;
        if (lp_grow(&q, &capcs, 1, sizeof(nconn))) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            goto out;
        }
        cs = q;
        cs[0] = (nconn){0, id, 0, "-"};
        ncs = 1;
        stdin_open = 1;
        set_nonblock(0);
    }
    (void)stdin_open;
    for (;;) {
        if (o->stop && *o->stop)
            break;
        if (lfd < 0 && ncs == 0)
            break;
        size_t np = ncs + 1;
        if (np > cappf) {
            void *q = pf;
            if (lp_grow(&q, &cappf, np, sizeof *pf)) {
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                break;
            }
            pf = q;
        }
        /* flow control: connections far ahead of the others wait (lp_stream_flow) */
        if (ncs > capahead) {
            void *q = ahead, *q2 = ids;
            size_t c1 = capahead, c2 = capahead;
            if (lp_grow(&q, &c1, ncs, 1) || (ahead = q, lp_grow(&q2, &c2, ncs, sizeof *ids))) {
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                break;
            }
            ids = q2;
            capahead = c1 < c2 ? c1 : c2;
        }
        for (size_t i = 0; i < ncs; i++)
            ids[i] = cs[i].id;
        size_t npaused = lp_stream_flow(s, ids, ncs, ahead);
        pf[0] = (struct pollfd){lfd, POLLIN, 0};
        for (size_t i = 0; i < ncs; i++)
            pf[i + 1] = (struct pollfd){cs[i].fd, (short)(npaused && ahead[i] ? 0 : POLLIN), 0};
        int rc = poll(pf, (nfds_t)np, 200);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            st = lp_error_set(err, LP_ERR_IO, "poll: %s", strerror(errno));
            break;
        }
        if (rc == 0) {
            if ((st = lp_stream_poll(s, err)))
                break;
            continue;
        }
        /* data first, then new connections, then closed ones (removed from the back) */
        for (size_t i = 0; i < ncs && !st; i++) {
            short re = pf[i + 1].revents;
            if (!(re & (POLLIN | POLLHUP | POLLERR)))
                continue;
            int closed = 0, abrupt = 0;
            int maxrounds = npaused ? 1 : 4; /* a few reads, then let others in */
            for (int rounds = 0; rounds < maxrounds; rounds++) {
                ssize_t got = read(cs[i].fd, buf, READ_CHUNK);
                if (got > 0) {
                    cs[i].bytes += (uint64_t)got;
                    if ((st = lp_stream_feed(s, cs[i].id, buf, (size_t)got, err)))
                        break;
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
            if (st)
                break;
            if (closed) {
                if ((st = lp_stream_close(s, cs[i].id, abrupt, err)))
                    break;
                if (o->on_conn)
                    o->on_conn(o->ctx, cs[i].name, 0, cs[i].bytes);
                if (cs[i].fd != 0)
                    close(cs[i].fd);
                cs[i].fd = -1;
            }
        }
        if (st)
            break;
        size_t out = 0;
        for (size_t i = 0; i < ncs; i++)
            if (cs[i].fd >= 0)
                cs[out++] = cs[i];
        ncs = out;
        if (lfd >= 0 && (pf[0].revents & POLLIN)) {
            for (;;) {
                int fd = accept(lfd, NULL, NULL);
                if (fd < 0)
                    break;
                if (set_nonblock(fd) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
                    close(fd);
                    continue;
                }
                void *q = cs;
                if (lp_grow(&q, &capcs, ncs + 1, sizeof(nconn))) {
                    close(fd);
                    st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                    break;
                }
                cs = q;
                nconn *c = &cs[ncs];
                c->fd = fd;
                c->bytes = 0;
                peer_name(fd, c->name, sizeof c->name);
                if ((st = lp_stream_open(s, c->name, o->format, &c->id, err))) {
                    close(fd);
                    break;
                }
                ncs++;
                accepted++;
                if (o->on_conn)
                    o->on_conn(o->ctx, c->name, 1, 0);
                if (o->max_conns && accepted >= o->max_conns) {
                    close(lfd);
                    lfd = -1;
                    break;
                }
            }
            if (st)
                break;
        }
        if ((st = lp_stream_poll(s, err)))
            break;
    }
out:
    for (size_t i = 0; i < ncs; i++)
        if (cs[i].fd > 0)
            close(cs[i].fd);
    if (lfd >= 0)
        close(lfd);
    lp_free(cs);
    lp_free(pf);
    lp_free(ahead);
    lp_free(ids);
    lp_free(buf);
    return st;
}
