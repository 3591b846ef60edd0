/* serve_cmd.c: the command cache of the server (serve.h, lp_cmdcache): run a program
 * (the caller's: its path and argv[0] are options; the library assumes nothing about
 * which binary it is linked into) with arguments, capture its output and keep it,
 * keyed by the arguments.
 *
 * Invariants: an entry is in the list from the moment its run starts; it is `running`
 * (res == NULL) until the run ends, then complete (res set, one reference held by the
 * cache) or removed (a run that timed out, was killed or could not start is not kept:
 * the next request runs it again). `running` counts children alive, at most
 * max_running; `waiting` counts callers blocked on the condition variable: those
 * waiting for a slot are at most max_waiting (those waiting for a run of the same
 * arguments already under way are not limited: they only need its result). A child's pid is published in its entry until it has exited (waitid
 * with WNOWAIT), and only then reaped, so shutdown never signals a recycled pid.
 * Children are spawned with posix_spawn (no fork of this multi-threaded process): a
 * process group of their own, default signal dispositions and an empty mask, stdin
 * /dev/null, stdout and stderr pipes; every other descriptor of the server is
 * close-on-exec (pipes here are made with O_CLOEXEC, libmicrohttpd's sockets too).
 */
#define _GNU_SOURCE
#include "serve/serve_int.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

typedef struct entry {
    char *key;               /* the arguments joined by '\x1f' */
    lp_cmdout *res;          /* NULL while running */
    pid_t pid;               /* > 0 while the child has not exited */
    size_t bytes;            /* bytes held once complete */
    struct entry *next;      /* list in start order (eviction: oldest first) */
} entry;

struct lp_cmdcache {
    lp_cmdcache_opts o;
    char *exe;
    char *name;              /* argv[0] of the children */
    char **envp;             /* environment of the children (owned strings) */
    size_t nenv;
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* broadcast when a run ends or a slot frees */
    entry *head;
    size_t bytes;            /* held by complete entries */
    unsigned running, waiting;
    unsigned slot_waiting;   /* of them, waiting for a slot (limited by max_waiting) */
    int down;                /* shut down */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- results ---------------------------------------------------------------------------- */

void lp_cmdout_unref(lp_cmdout *o)
{
    if (!o)
        return;
    if (__atomic_fetch_sub(&o->refs, 1, __ATOMIC_ACQ_REL) == 1) {
        lp_server_buf_unref(o->out);
        lp_free(o);
    }
}

static lp_cmdout *cmdout_ref(lp_cmdout *o)
{
    __atomic_fetch_add(&o->refs, 1, __ATOMIC_RELAXED);
    return o;
}

/* ---- the cache -------------------------------------------------------------------------- */

lp_status lp_cmdcache_new(lp_cmdcache **out, const lp_cmdcache_opts *o, lp_error *err)
{
    *out = NULL;
    lp_cmdcache *c = lp_calloc(1, sizeof *c);
    if (!c)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (o)
        c->o = *o;
    if (!c->o.max_running)
        c->o.max_running = 2;
    if (!c->o.max_waiting)
        c->o.max_waiting = 64;
    if (!(c->o.timeout_s > 0))
        c->o.timeout_s = 600;
    if (!c->o.max_output)
        c->o.max_output = (size_t)1 << 30;
    if (!c->o.cache_bytes)
        c->o.cache_bytes = (size_t)512 << 20;
    if (!c->o.exe || !*c->o.exe) {
        lp_free(c);
        return lp_error_set(err, LP_ERR_ARG, "the command cache needs the program to run");
    }
    const char *name = c->o.name ? c->o.name : c->o.exe;
    c->exe = lp_strndup(c->o.exe, strlen(c->o.exe));
    c->name = lp_strndup(name, strlen(name));
    /* the environment: ours, with the extra entries replacing same-named ones */
    size_t ne = 0, nx = 0;
    while (environ && environ[ne])
        ne++;
    while (c->o.env && c->o.env[nx])
        nx++;
    c->envp = lp_calloc(ne + nx + 1, sizeof *c->envp);
    if (!c->exe || !c->name || !c->envp)
        goto nomem;
    for (size_t i = 0; i < ne; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t nl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        int replaced = 0;
        for (size_t k = 0; k < nx && !replaced; k++)
            replaced = strncmp(c->o.env[k], environ[i], nl) == 0 && c->o.env[k][nl] == '=';
        if (!replaced && !(c->envp[c->nenv++] = lp_strndup(environ[i], strlen(environ[i]))))
            goto nomem;
    }
    for (size_t k = 0; k < nx; k++)
        if (!(c->envp[c->nenv++] = lp_strndup(c->o.env[k], strlen(c->o.env[k]))))
            goto nomem;
    c->o.env = NULL;
    c->o.exe = NULL;
    c->o.name = NULL;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    *out = c;
    return LP_OK;
nomem:
    for (size_t i = 0; c->envp && i < c->nenv; i++)
        lp_free(c->envp[i]);
    lp_free(c->envp);
    lp_free(c->exe);
    lp_free(c->name);
    lp_free(c);
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
}

static void entry_free(entry *e)
{
    if (!e)
        return;
    lp_cmdout_unref(e->res);
    lp_free(e->key);
    lp_free(e);
}

static void unlink_entry(lp_cmdcache *c, entry *e)
{
    for (entry **p = &c->head; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            return;
        }
}

static void evict(lp_cmdcache *c)
{
    while (c->bytes > c->o.cache_bytes) {
        entry *e = c->head;
        while (e && !e->res)
            e = e->next;
        if (!e)
            return;
        unlink_entry(c, e);
        c->bytes -= e->bytes;
        entry_free(e);
    }
}

void lp_cmdcache_shutdown(lp_cmdcache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->down = 1;
    for (entry *e = c->head; e; e = e->next)
        if (e->pid > 0)
            kill(-e->pid, SIGKILL); /* its process group */
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

void lp_cmdcache_free(lp_cmdcache *c)
{
    if (!c)
        return;
    lp_cmdcache_shutdown(c);
    pthread_mutex_lock(&c->mu);
    while (c->running || c->waiting) /* callers still inside get: they leave soon */
        pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    while (c->head) {
        entry *e = c->head;
        c->head = e->next;
        entry_free(e);
    }
    for (size_t i = 0; i < c->nenv; i++)
        lp_free(c->envp[i]);
    lp_free(c->envp);
    lp_free(c->exe);
    lp_free(c->name);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    lp_free(c);
}

/* ---- running one child ------------------------------------------------------------------- */

/* Append to a growing buffer. */
static int grow_add(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t nc = *cap ? *cap : 65536;
        while (nc < *len + n + 1)
            nc *= 2;
        char *b = lp_realloc(*buf, nc);
        if (!b)
            return -1;
        *buf = b;
        *cap = nc;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

/* Start the CLI on argv (av) with standard output and error into the pipes' write ends
 * and standard input from /dev/null, in its own process group with default signals;
 * posix_spawn's result. */
static int spawn_child(const lp_cmdcache *c, char **av, int out_fd, int err_fd, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    sigset_t none, dflt;
    sigemptyset(&none);
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGPIPE);
    sigaddset(&dflt, SIGINT);
    sigaddset(&dflt, SIGTERM);
    sigaddset(&dflt, SIGHUP);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dflt);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    int rc = posix_spawn(pid, c->exe, &fa, &at, av, c->envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return rc;
}

/* A child's output: all of standard output (up to max_output), the end of standard
 * error. */
typedef struct childout {
    char *out;
    size_t olen, ocap;
    char tail[sizeof(((lp_cmdout *)0)->err)];
    size_t tlen;
} childout;

/* Keep the end of standard error. */
static void keep_tail(childout *o, const char *buf, size_t g)
{
    if (g >= sizeof o->tail - 1) {
        memcpy(o->tail, buf + g - (sizeof o->tail - 1), sizeof o->tail - 1);
        o->tlen = sizeof o->tail - 1;
        return;
    }
    if (o->tlen + g > sizeof o->tail - 1) {
        size_t drop = o->tlen + g - (sizeof o->tail - 1);
        memmove(o->tail, o->tail + drop, o->tlen - drop);
        o->tlen -= drop;
    }
    memcpy(o->tail + o->tlen, buf, g);
    o->tlen += g;
}

/* Read both pipes until they close, or until the deadline (r->timed_out) or the output
 * limit (r->too_big). */
static void collect(const lp_cmdcache *c, int out_fd, int err_fd, double deadline, childout *o, lp_cmdout *r)
{
    char buf[65536];
    struct pollfd pf[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    int open_fds = 2;
    while (open_fds) {
        double left = deadline - now_s();
        if (left <= 0) {
            r->timed_out = 1;
            break;
        }
        int n = poll(pf, 2, left > 1 ? 1000 : (int)(left * 1000) + 1);
        if (n < 0 && errno != EINTR)
            break;
        for (int k = 0; k < 2; k++) {
            if (pf[k].fd < 0 || !(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t got = read(pf[k].fd, buf, sizeof buf);
            if (got < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (got <= 0) {
                pf[k].fd = -1;
                open_fds--;
                continue;
            }
            if (k == 1) {
                keep_tail(o, buf, (size_t)got);
            } else if (o->olen + (size_t)got > c->o.max_output || grow_add(&o->out, &o->olen, &o->ocap, buf, (size_t)got)) {
                r->too_big = 1;
                open_fds = 0;
                break;
            }
        }
    }
}

/* Wait for the child's exit without reaping, unpublish its pid (so no kill reaches a
 * reused pid), then reap; the exit status (128 + signal when killed). */
static int reap_child(lp_cmdcache *c, entry *e, pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0 && errno == EINTR)
        ;
    pthread_mutex_lock(&c->mu);
    e->pid = 0;
    pthread_mutex_unlock(&c->mu);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 255;
}

static lp_status run_child(lp_cmdcache *c, entry *e, const char *const *args, size_t nargs, lp_cmdout **res,
                           lp_error *err)
{
    *res = NULL;
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    char **av = lp_calloc(nargs + 2, sizeof *av);
    lp_cmdout *r = lp_calloc(1, sizeof *r);
    childout o;
    memset(&o, 0, sizeof o);
    lp_status st = LP_OK;
    if (!av || !r) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto done;
    }
    av[0] = c->name;
    for (size_t i = 0; i < nargs; i++)
        av[i + 1] = (char *)args[i];
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
        st = lp_error_set(err, LP_ERR_IO, "pipe: %s", strerror(errno));
        goto done;
    }
    double t0 = now_s();
    pid_t pid = -1;
    int rc = spawn_child(c, av, po[1], pe[1], &pid);
    close(po[1]);
    close(pe[1]);
    po[1] = pe[1] = -1;
    if (rc != 0) {
        st = lp_error_set(err, LP_ERR_IO, "cannot run %s: %s", c->exe, strerror(rc));
        goto done;
    }
    pthread_mutex_lock(&c->mu);
    e->pid = pid;
    if (c->down)
        kill(-pid, SIGKILL);
    pthread_mutex_unlock(&c->mu);
    collect(c, po[0], pe[0], t0 + c->o.timeout_s, &o, r);
    if (r->timed_out || r->too_big)
        kill(-pid, SIGKILL);
    r->status = reap_child(c, e, pid);
    r->seconds = now_s() - t0;
    memcpy(r->err, o.tail, o.tlen);
    r->err[o.tlen] = '\0';
    r->out = lp_server_buf_take(o.out, o.olen);
    o.out = NULL;
    if (!r->out) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto done;
    }
    r->refs = 1;
    *res = r;
    r = NULL;
done:
    for (int k = 0; k < 2; k++) {
        if (po[k] >= 0)
            close(po[k]);
        if (pe[k] >= 0)
            close(pe[k]);
    }
    lp_free(o.out);
    lp_free(r);
    lp_free(av);
    return st;
}

static char *make_key(const char *const *args, size_t nargs)
{
    size_t n = 1;
    for (size_t i = 0; i < nargs; i++)
        n += strlen(args[i]) + 1;
    char *k = lp_malloc(n);
    if (!k)
        return NULL;
    size_t len = 0;
    for (size_t i = 0; i < nargs; i++) {
        size_t l = strlen(args[i]);
        memcpy(k + len, args[i], l);
        len += l;
        k[len++] = '\x1f';
    }
    k[len] = '\0';
    return k;
}

lp_status lp_cmdcache_get(lp_cmdcache *c, const char *const *args, size_t nargs, lp_cmdout **res, lp_error *err)
{
    *res = NULL;
    char *key = make_key(args, nargs);
    if (!key)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_status st = LP_OK;
    entry *mine = NULL;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if (c->down) {
            st = lp_error_set(err, LP_ERR_IO, "the server is shutting down");
            break;
        }
        entry *e = c->head;
        while (e && strcmp(e->key, key) != 0)
            e = e->next;
        if (e && e->res) {
            *res = cmdout_ref(e->res);
            break;
        }
        if (!e && c->running < c->o.max_running) {
            mine = lp_calloc(1, sizeof *mine);
            if (!mine) {
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                break;
            }
            mine->key = key;
            key = NULL;
            mine->next = c->head; /* newest first is fine for lookups; eviction scans */
            c->head = mine;
            c->running++;
            break;
        }
        /* the same run is under way (wait for it: it costs nothing), or every slot is
         * busy (wait for one, if not too many do already) */
        if (!e && c->slot_waiting >= c->o.max_waiting) {
            st = lp_error_set(err, LP_ERR_LIMIT, "busy: %u analyses running and %u waiting", c->running,
                              c->slot_waiting);
            break;
        }
        c->waiting++;
        c->slot_waiting += !e;
        pthread_cond_wait(&c->cv, &c->mu);
        c->slot_waiting -= !e;
        c->waiting--;
    }
    pthread_mutex_unlock(&c->mu);
    lp_free(key);
    if (st || *res) {
        pthread_cond_broadcast(&c->cv); /* lp_cmdcache_free may be waiting for waiters */
        return st;
    }
    lp_cmdout *r = NULL;
    st = run_child(c, mine, args, nargs, &r, err);
    pthread_mutex_lock(&c->mu);
    c->running--;
    if (!st && !r->timed_out && !r->too_big && !c->down && r->status < 128) {
        mine->res = cmdout_ref(r);
        mine->bytes = r->out->len + sizeof *mine + strlen(mine->key);
        c->bytes += mine->bytes;
        /* eviction goes oldest first: move the entry to the list's end */
        unlink_entry(c, mine);
        entry **p = &c->head;
        while (*p)
            p = &(*p)->next;
        mine->next = NULL;
        *p = mine;
        evict(c);
    } else {
        unlink_entry(c, mine);
        entry_free(mine);
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (st)
        return st;
    *res = r;
    return LP_OK;
}
