/* test_stream_net.c: `stream` over real TCP connections (lp_stream_serve on loopback,
 * an ephemeral port): client threads send a generated job's records in stream order,
 * split by worker over several connections (mixed: several workers per connection; and
 * one connection per worker), in random chunks with random pauses, so the server sees
 * them interleaved arbitrarily. Every window must equal `summary`'s offline result on
 * the same records (streamtest.h). One more client sends malformed lines among valid
 * ones (counted, not fatal) and one resets its connection in the middle of a line
 * (counted as dropped). An alarm fails the test instead of hanging. */
#include "streamtest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct client {
    unsigned port;
    char *buf;               /* what to send */
    size_t n, cap;
    int reset;               /* end with a reset instead of an orderly close */
    uint64_t seed;
    int ok;
} client;

static void cl_add(client *c, const char *p, size_t n)
{
    if (c->n + n > c->cap) {
        c->cap = (c->n + n) * 2 + 64;
        c->buf = realloc(c->buf, c->cap);
    }
    memcpy(c->buf + c->n, p, n);
    c->n += n;
}

static void *client_main(void *arg)
{
    client *c = arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)c->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    uint64_t r = c->seed;
    size_t pos = 0;
    while (pos < c->n) {
        size_t m = 1 + tlcg(&r) % (tlcg(&r) % 8 == 0 ? 20000 : 700);
        if (m > c->n - pos)
            m = c->n - pos;
        ssize_t k = send(fd, c->buf + pos, m, MSG_NOSIGNAL);
        if (k <= 0)
            break;
        pos += (size_t)k;
        if (tlcg(&r) % 16 == 0) {
            struct timespec ts = {0, (long)(tlcg(&r) % 300000)};
            nanosleep(&ts, NULL);
        }
    }
    if (c->reset) {
        struct linger lg = {1, 0}; /* close sends a reset */
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    close(fd);
    c->ok = pos == c->n;
    return NULL;
}

typedef struct server {
    lp_stream *s;
    lp_serve_opts o;
    int pipefd[2];
    lp_status st;
    lp_error err;
} server;

static void on_listen(void *ctx, const char *host, unsigned port)
{
    server *sv = ctx;
    (void)host;
    if (write(sv->pipefd[1], &port, sizeof port) != (ssize_t)sizeof port)
        abort();
}

static void *server_main(void *arg)
{
    server *sv = arg;
    sv->st = lp_stream_serve(sv->s, &sv->o, &sv->err);
    if (sv->st) { /* unblock the test */
        unsigned zero = 0;
        if (write(sv->pipefd[1], &zero, sizeof zero) < 0)
            abort();
    }
    return NULL;
}

static uint64_t fnv(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    return h;
}

/* nconn 0: one connection per worker. */
static void run(uint64_t seed, int halves, unsigned nconn, unsigned threads, int64_t size, int64_t step)
{
    char *text = stream_text(seed, 250000000, halves, "source:2,flatmap:2,count:3", 0.4);
    CHECK(text != NULL);
    if (!text)
        return;
    lp_trace *t = text_trace(text);
    CHECK(t != NULL);
    wsnaps off = {0}, on = {0};
    lp_winopts wo = {(1u << LP_SUM_NKINDS) - 1, seed, 0, 0};
    CHECK(t && offline_windows(t, 0, size, step, &wo, &off) == 0);
    unsigned k = nconn ? nconn : t->nworkers;
    client *cl = calloc(k + 2, sizeof *cl);
    /* route the records; W records (and the header) are declared before serving */
    char *decl = NULL;
    size_t ndecl = 0, capdecl = 0;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
        if (p[0] == 'W' || p[0] == 'l') {
            if (ndecl + n > capdecl) {
                capdecl = (ndecl + n) * 2;
                decl = realloc(decl, capdecl);
            }
            memcpy(decl + ndecl, p, n);
            ndecl += n;
        } else {
            const char *w;
            size_t wl = line_worker(p, n, &w);
            unsigned c;
            if (nconn) {
                c = (unsigned)(fnv(w, wl) % k);
            } else { /* the worker's id */
                char nm[64];
                snprintf(nm, sizeof nm, "%.*s", (int)wl, w);
                c = lp_trace_find_worker(t, nm) % k;
            }
            cl_add(&cl[c], p, n);
        }
        p += n;
    }
    /* the malformed lines' client: three bad lines */
    const char *bad = "Q not a record\nA count.0 12x 13 io\n\xff\xfe garbage\n";
    cl_add(&cl[k], bad, strlen(bad));
    /* the client that resets in the middle of a line */
    const char *cut = "# a comment\nA sour";
    cl_add(&cl[k + 1], cut, strlen(cut));
    cl[k + 1].reset = 1;

    lp_diags ds;
    lp_diags_init(&ds, 16);
    lp_stream_opts o;
    lp_stream_opts_init(&o);
    o.size = size;
    o.step = step;
    o.threads = threads;
    o.win.seed = seed;
    server sv;
    memset(&sv, 0, sizeof sv);
    lp_error err;
    CHECK(lp_stream_new(&sv.s, &o, &ds, collect, NULL, &on, &err) == LP_OK);
    uint32_t did;
    CHECK(lp_stream_open(sv.s, "declarations", LP_STREAM_LPT, &did, &err) == LP_OK);
    CHECK(lp_stream_feed(sv.s, did, decl, ndecl, &err) == LP_OK);
    CHECK(pipe(sv.pipefd) == 0);
    sv.o.listen = "127.0.0.1:0";
    sv.o.max_conns = k + 2;
    sv.o.on_listen = on_listen;
    sv.o.ctx = &sv;
    pthread_t sth;
    CHECK(pthread_create(&sth, NULL, server_main, &sv) == 0);
    unsigned port = 0;
    CHECK(read(sv.pipefd[0], &port, sizeof port) == (ssize_t)sizeof port);
    CHECK(port != 0);
    pthread_t *th = calloc(k + 2, sizeof *th);
    for (unsigned i = 0; i < k + 2; i++) {
        cl[i].port = port;
        cl[i].seed = seed * 1000 + i;
        CHECK(pthread_create(&th[i], NULL, client_main, &cl[i]) == 0);
    }
    for (unsigned i = 0; i < k + 2; i++) {
        pthread_join(th[i], NULL);
        if (i < k + 1)
            CHECK(cl[i].ok);
    }
    pthread_join(sth, NULL);
    CHECK(sv.st == LP_OK);
    CHECK(lp_stream_finish(sv.s, &err) == LP_OK);
    char what[96];
    snprintf(what, sizeof what, "tcp seed %llu halves %d conns %u threads %u", (unsigned long long)seed, halves, k,
             threads);
    CHECK(compare_all(&off, &on, what) == 0);
    const lp_stream_stats *st = lp_stream_get_stats(sv.s);
    CHECK_EQ_I(st->connections, k + 3);
    CHECK_EQ_I(st->disconnects, k + 2);
    CHECK_EQ_I(st->dropped, 1);
    CHECK(st->malformed >= 3 && st->malformed <= 4); /* 3 bad lines; the cut line if it was read */
    CHECK_EQ_I(st->late, 0);
    CHECK_EQ_I(st->unmatched_sends + st->unmatched_recvs, 0);
    CHECK_EQ_I(st->events, 2 * (t->nacts - t->ngaps) + 2 * t->nmsgs);
    lp_stream_free(sv.s);
    lp_diags_release(&ds);
    close(sv.pipefd[0]);
    close(sv.pipefd[1]);
    for (unsigned i = 0; i < k + 2; i++)
        free(cl[i].buf);
    free(cl);
    free(th);
    free(decl);
    wsnaps_free(&off);
    wsnaps_free(&on);
    lp_trace_free(t);
    free(text);
}

int main(void)
{
    alarm(240); /* a hang fails the test */
    signal(SIGPIPE, SIG_IGN);
    run(1, 0, 3, 1, 5000000, 0);
    run(2, 1, 3, 2, 5000000, 2000000);
    run(3, 0, 0, 2, 11000000, 0); /* one connection per worker */
    run(4, 1, 0, 1, 7000000, 0);
    run(5, 1, 1, 3, 20000000, 0);
    return t_done("test_stream_net");
}
