/* record.c: the engine of `longpole record` (record.h): the table of sources, the
 * recording directory, starting the command stopped (the child blocks on a pipe before
 * exec; a second, close-on-exec pipe reports an exec failure), starting the sources on
 * its pid, releasing it, forwarding signals sent to the recorder, waiting for the end
 * without reaping (waitid WNOWAIT) so the sources' last look sees the finished
 * process, stopping the sources in reverse order, reaping, and the manifest.
 *
 * Invariants: every source that started is stopped exactly once; the signal handlers
 * of the process are restored on every path; a manifest is written whenever the
 * directory could be made, saying what failed if something did.
 */
#include "longpole/record/record.h"
#include "longpole/record/kernel.h"
#include "longpole/record/stacks.h"
#include "record/rec_int.h"
#include "longpole/base/alloc.h"
#include "longpole/base/version.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The sources of this build: one line each. */
static const lp_rec_source *const table[] = {
    &lp_rec_monitor,
    &lp_rec_source_kernel,
    &lp_rec_stacks,
    NULL,
};

const lp_rec_source *const *lp_rec_sources(void) { return table; }

const lp_rec_source *lp_rec_source_find(const char *name)
{
    for (size_t i = 0; table[i]; i++)
        if (strcmp(table[i]->name, name) == 0)
            return table[i];
    return NULL;
}

/* ---- clocks ------------------------------------------------------------------------- */

static int64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A (monotonic, realtime) pair read as close together as the clocks allow. */
static void clock_pair(int64_t *mono, int64_t *real)
{
    int64_t m0 = now_ns(CLOCK_MONOTONIC), r = now_ns(CLOCK_REALTIME), m1 = now_ns(CLOCK_MONOTONIC);
    *mono = m0 + (m1 - m0) / 2;
    *real = r;
}

/* ---- the recording directory and the sources ------------------------------------------ */

static lp_status make_dir(const char *dir, lp_error *err)
{
    if (!dir || !*dir)
        return lp_error_set(err, LP_ERR_ARG, "no output directory");
    if (mkdir(dir, 0777) == 0)
        return LP_OK;
    if (errno != EEXIST)
        return lp_error_set(err, LP_ERR_IO, "cannot create '%s': %s", dir, strerror(errno));
    DIR *d = opendir(dir);
    if (!d)
        return lp_error_set(err, LP_ERR_IO, "'%s' exists and is not a readable directory: %s", dir, strerror(errno));
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)))
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    if (!empty)
        return lp_error_set(err, LP_ERR_ARG, "'%s' is not empty: a recording needs a new or empty directory", dir);
    return LP_OK;
}

enum { S_RUN = 0, S_SKIPPED, S_FAILED };

typedef struct active {
    const lp_rec_source *s;
    void *state;
    int status;
    char why[LP_ERROR_MAX + 16];
    char *json;      /* the source's manifest object */
} active;

/* The sources to run: the named ones (each must pass its probe) or the defaults (those
 * that fail their probe are skipped, with the reason). */
static lp_status choose(const lp_rec_opts *o, active **out, size_t *n, lp_error *err)
{
    size_t k = 0, cap = 0;
    active *a = NULL;
    for (size_t i = 0; o->sources ? o->sources[i] != NULL : table[i] != NULL; i++) {
        const lp_rec_source *s = o->sources ? lp_rec_source_find(o->sources[i]) : table[i];
        if (!s) {
            lp_free(a);
            return lp_error_set(err, LP_ERR_ARG, "unknown source '%s'", o->sources[i]);
        }
        if (!o->sources && !s->by_default)
            continue;
        if (lp_grow_at(&a, &cap, k + 1, sizeof *a)) {
            lp_free(a);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        }
        memset(&a[k], 0, sizeof a[k]);
        a[k].s = s;
        lp_error pe;
        lp_error_clear(&pe);
        if (s->probe && s->probe(&pe)) {
            if (o->sources) {
                lp_status st = lp_error_set(err, LP_ERR_UNSUPPORTED, "source '%s' cannot run here: %s", s->name, pe.msg);
                lp_free(a);
                return st;
            }
            a[k].status = S_SKIPPED;
            snprintf(a[k].why, sizeof a[k].why, "%s", pe.msg);
        }
        k++;
    }
    *out = a;
    *n = k;
    return LP_OK;
}

static void start_all(active *a, size_t n, const lp_rec_opts *o, int pid)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].status != S_RUN)
            continue;
        lp_error e;
        lp_error_clear(&e);
        if (a[i].s->start(&a[i].state, o, pid, &e)) {
            a[i].status = S_FAILED;
            snprintf(a[i].why, sizeof a[i].why, "start: %s", e.msg);
        }
    }
}

/* Stop the running sources in reverse order; every source gets its manifest object. */
static void stop_all(active *a, size_t n, lp_rec_result *res)
{
    for (size_t i = n; i-- > 0;) {
        size_t len = 0;
        FILE *f = open_memstream(&a[i].json, &len);
        if (!f) {
            a[i].json = NULL;
            if (a[i].status == S_RUN)
                a[i].s->stop(a[i].state, NULL, NULL);
            continue;
        }
        lp_jsonw j;
        lp_jsonw_init(&j, f, 0);
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "name", a[i].s->name);
        if (a[i].status == S_RUN) {
            lp_error e;
            lp_error_clear(&e);
            if (a[i].s->stop(a[i].state, &j, &e)) {
                a[i].status = S_FAILED;
                lp_jsonw_kstr(&j, "status", "failed");
                lp_jsonw_kstr(&j, "reason", e.msg);
            } else {
                lp_jsonw_kstr(&j, "status", "ok");
            }
        } else {
            lp_jsonw_kstr(&j, "status", a[i].status == S_SKIPPED ? "skipped" : "failed");
            lp_jsonw_kstr(&j, "reason", a[i].why);
        }
        lp_jsonw_obj_end(&j);
        fclose(f);
        if (a[i].status == S_RUN)
            res->sources_ok++;
        else
            res->sources_failed++;
    }
}

static void free_active(active *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(a[i].json); /* open_memstream's buffer: the C library's allocation */
    lp_free(a);
}

/* ---- signals ------------------------------------------------------------------------- */

static const int fwd_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFWD (sizeof fwd_signals / sizeof fwd_signals[0])
static volatile sig_atomic_t g_pid;      /* the command to forward to */
static volatile sig_atomic_t g_stop;     /* attach: a signal asked to stop */
static volatile sig_atomic_t g_busy;     /* a recording is under way in this process */

/* Forward what kill(2) or sigqueue(3) sent (si_code <= 0); a signal the terminal sent
 * (SI_KERNEL) reached the command's process group already. */
static void on_forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (g_pid > 0 && si && si->si_code <= 0)
        kill((pid_t)g_pid, sig);
}

static void on_stop(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    g_stop = 1;
}

static void install(void (*fn)(int, siginfo_t *, void *), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NFWD; i++)
        sigaction(fwd_signals[i], &sa, &old[i]);
}

static void restore(const struct sigaction *old)
{
    for (size_t i = 0; i < NFWD; i++)
        sigaction(fwd_signals[i], &old[i], NULL);
}

/* ---- the command --------------------------------------------------------------------- */

static int cloexec(int fd) { return fcntl(fd, F_SETFD, FD_CLOEXEC); }

/* Fork a child that waits for a byte on *go before exec'ing argv; exec failures come
 * back as an errno on *ef. */
static lp_status spawn(char *const argv[], pid_t *pid, int *go, int *ef, lp_error *err)
{
    int gp[2], ep[2];
    if (pipe(gp))
        return lp_error_set(err, LP_ERR_IO, "pipe: %s", strerror(errno));
    if (pipe(ep)) {
        close(gp[0]), close(gp[1]);
        return lp_error_set(err, LP_ERR_IO, "pipe: %s", strerror(errno));
    }
    cloexec(gp[0]), cloexec(gp[1]), cloexec(ep[0]), cloexec(ep[1]);
    pid_t p = fork();
    if (p < 0) {
        int e = errno;
        close(gp[0]), close(gp[1]), close(ep[0]), close(ep[1]);
        return lp_error_set(err, LP_ERR_IO, "fork: %s", strerror(e));
    }
    if (p == 0) { /* the child: async-signal-safe calls only */
        char c;
        ssize_t r;
        close(gp[1]);
        close(ep[0]);
        do
            r = read(gp[0], &c, 1);
        while (r < 0 && errno == EINTR);
        if (r != 1)
            _exit(127);
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(ep[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(gp[0]);
    close(ep[1]);
    *pid = p;
    *go = gp[1];
    *ef = ep[0];
    return LP_OK;
}

/* Release the child; 0 if it exec'd, else the exec errno. */
static int release(int go, int ef)
{
    ssize_t w;
    do
        w = write(go, "g", 1);
    while (w < 0 && errno == EINTR);
    close(go);
    int e = 0;
    ssize_t r;
    do
        r = read(ef, &e, sizeof e);
    while (r < 0 && errno == EINTR);
    close(ef);
    return r == (ssize_t)sizeof e ? (e ? e : EIO) : 0;
}

/* Wait for the child to end without reaping it. */
static void wait_end(pid_t pid)
{
    siginfo_t si;
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
}

static void reap(pid_t pid, lp_rec_result *res)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status)) {
        res->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        res->signal = WTERMSIG(status);
        res->exit_code = 128 + res->signal;
    }
}

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

/* ---- the manifest -------------------------------------------------------------------- */

typedef struct rec_clock {
    int64_t mono0, real0, mono1, real1;
} rec_clock;

static lp_status manifest(const lp_rec_opts *o, char *const argv[], int attached, const lp_rec_result *res,
                          const rec_clock *ck, const active *a, size_t n, const char *failure, lp_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", o->dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return lp_error_set(err, LP_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    struct utsname u;
    uname(&u);
    lp_jsonw j;
    lp_jsonw_init(&j, f, 1);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "format", "longpole-recording");
    lp_jsonw_ki64(&j, "version", 1);
    lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(&j, "host", o->hostname);
    lp_jsonw_key(&j, "kernel");
    char kern[600];
    snprintf(kern, sizeof kern, "%s %s %s", u.sysname, u.release, u.machine);
    lp_jsonw_str(&j, kern);
    lp_jsonw_ki64(&j, "cpus", sysconf(_SC_NPROCESSORS_ONLN));
    lp_jsonw_key(&j, "command");
    if (argv) {
        lp_jsonw_arr(&j);
        for (size_t i = 0; argv[i]; i++)
            lp_jsonw_str(&j, argv[i]);
        lp_jsonw_arr_end(&j);
    } else {
        lp_jsonw_null(&j);
    }
    lp_jsonw_ki64(&j, "pid", res->pid);
    lp_jsonw_kbool(&j, "attached", attached);
    lp_jsonw_ki64(&j, "period_ns", o->period_ns);
    lp_jsonw_key(&j, "clock");
    lp_jsonw_obj(&j);
    lp_jsonw_ki64(&j, "monotonic_start_ns", ck->mono0);
    lp_jsonw_ki64(&j, "realtime_start_ns", ck->real0);
    lp_jsonw_ki64(&j, "monotonic_end_ns", ck->mono1);
    lp_jsonw_ki64(&j, "realtime_end_ns", ck->real1);
    lp_jsonw_ki64(&j, "realtime_minus_monotonic_ns", o->mono_to_real_ns);
    lp_jsonw_ki64(&j, "drift_ns", (ck->real1 - ck->mono1) - (ck->real0 - ck->mono0));
    lp_jsonw_obj_end(&j);
    lp_jsonw_ki64(&j, "start_ns", res->start_ns);
    lp_jsonw_ki64(&j, "end_ns", res->end_ns);
    lp_jsonw_key(&j, "exit");
    lp_jsonw_obj(&j);
    if (attached) {
        lp_jsonw_key(&j, "code");
        lp_jsonw_null(&j);
    } else {
        lp_jsonw_ki64(&j, "code", res->exit_code);
    }
    lp_jsonw_ki64(&j, "signal", res->signal);
    lp_jsonw_kdbl(&j, "user_s", res->user_s);
    lp_jsonw_kdbl(&j, "sys_s", res->sys_s);
    lp_jsonw_obj_end(&j);
    if (failure)
        lp_jsonw_kstr(&j, "failure", failure);
    lp_jsonw_key(&j, "sources");
    lp_jsonw_arr(&j);
    for (size_t i = 0; i < n; i++)
        if (a[i].json)
            lp_jsonw_raw(&j, a[i].json);
    lp_jsonw_arr_end(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
    if (ferror(f) | fclose(f))
        return lp_error_set(err, LP_ERR_IO, "writing '%s' failed", path);
    return LP_OK;
}

/* ---- the two ways to record ------------------------------------------------------------ */

typedef struct session {
    lp_rec_opts o;
    char host[256];
    active *a;
    size_t n;
    rec_clock ck;
} session;

static lp_status begin(session *s, const lp_rec_opts *o, lp_rec_result *res, lp_error *err)
{
    memset(res, 0, sizeof *res);
    memset(s, 0, sizeof *s);
    if (g_busy)
        return lp_error_set(err, LP_ERR_ARG, "a recording is already under way in this process");
    s->o = *o;
    if (o->host) {
        snprintf(s->host, sizeof s->host, "%s", o->host);
    } else {
        struct utsname u;
        snprintf(s->host, sizeof s->host, "%s", uname(&u) == 0 ? u.nodename : "localhost");
    }
    s->o.hostname = s->host;
    lp_status st = make_dir(o->dir, err);
    if (!st)
        st = choose(o, &s->a, &s->n, err);
    if (st)
        return st;
    clock_pair(&s->ck.mono0, &s->ck.real0);
    s->o.mono_to_real_ns = s->ck.real0 - s->ck.mono0;
    g_busy = 1;
    return LP_OK;
}

static lp_status finish(session *s, char *const argv[], int attached, lp_rec_result *res, const char *failure,
                        lp_error *err)
{
    clock_pair(&s->ck.mono1, &s->ck.real1);
    lp_status st = manifest(&s->o, argv, attached, res, &s->ck, s->a, s->n, failure, err);
    free_active(s->a, s->n);
    g_busy = 0;
    return st;
}

lp_status lp_record_run(const lp_rec_opts *o, char *const argv[], lp_rec_result *res, lp_error *err)
{
    if (!argv || !argv[0])
        return lp_error_set(err, LP_ERR_ARG, "no command to record");
    session s;
    lp_status st = begin(&s, o, res, err);
    if (st)
        return st;
    struct rusage ru0, ru1;
    getrusage(RUSAGE_CHILDREN, &ru0);
    pid_t pid = 0;
    int go = -1, ef = -1;
    if ((st = spawn(argv, &pid, &go, &ef, err))) {
        finish(&s, argv, 0, res, err ? err->msg : "cannot start the command", NULL);
        return st;
    }
    res->pid = (int)pid;
    start_all(s.a, s.n, &s.o, (int)pid);
    struct sigaction old[NFWD];
    g_pid = (sig_atomic_t)pid;
    install(on_forward, old);
    res->start_ns = now_ns(CLOCK_MONOTONIC) + s.o.mono_to_real_ns;
    int e = release(go, ef);
    if (!e)
        wait_end(pid);
    res->end_ns = now_ns(CLOCK_MONOTONIC) + s.o.mono_to_real_ns;
    stop_all(s.a, s.n, res);
    reap(pid, res);
    g_pid = 0;
    restore(old);
    getrusage(RUSAGE_CHILDREN, &ru1);
    res->user_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
    res->sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
    char why[600];
    if (e) {
        snprintf(why, sizeof why, "cannot run '%s': %s", argv[0], strerror(e));
        finish(&s, argv, 0, res, why, NULL);
        return lp_error_set(err, LP_ERR_IO, "%s", why);
    }
    return finish(&s, argv, 0, res, NULL, err);
}

/* Is process pid still running (not gone, not a zombie)? */
static int alive(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return !(kill((pid_t)pid, 0) && errno == ESRCH);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

lp_status lp_record_attach(const lp_rec_opts *o, int pid, lp_rec_result *res, lp_error *err)
{
    if (pid <= 0 || (kill((pid_t)pid, 0) && errno == ESRCH))
        return lp_error_set(err, LP_ERR_ARG, "no process %d", pid);
    session s;
    lp_status st = begin(&s, o, res, err);
    if (st)
        return st;
    res->pid = pid;
    res->exit_code = -1;
    start_all(s.a, s.n, &s.o, pid);
    struct sigaction old[NFWD];
    g_stop = 0;
    if (!o->stop)
        install(on_stop, old);
    res->start_ns = now_ns(CLOCK_MONOTONIC) + s.o.mono_to_real_ns;
    struct timespec nap = {0, 5000000};
    while (!g_stop && !(o->stop && *o->stop) && alive(pid))
        nanosleep(&nap, NULL);
    res->end_ns = now_ns(CLOCK_MONOTONIC) + s.o.mono_to_real_ns;
    stop_all(s.a, s.n, res);
    if (!o->stop)
        restore(old);
    return finish(&s, NULL, 1, res, NULL, err);
}
