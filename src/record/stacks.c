/* stacks.c: the recorder's `stacks` source (record/stacks.h): `perf record` on the
 * recorded process, then `perf script` into stacks.perf.txt.
 *
 * start: perf is started disabled (-D -1) with a control pipe (--control fd:CTL,ACK); we
 * send "enable" and wait for perf's "ack", so sampling is on before the recorder
 * releases the command. Events: cpu-clock every period (default 10 ms) with call chains;
 * sched:sched_switch with call chains (the blocking stack and the state of every
 * switch-out) when the tracepoint exists; switch records (--switch-events: exact on/off-
 * CPU times); timestamps on CLOCK_MONOTONIC (-k mono), the clock traces written with
 * clock_gettime(CLOCK_MONOTONIC) use. perf follows the process's threads and children.
 * stop: SIGINT to perf, wait for it, run `perf script` into the text file, remove the
 * binary perf.data. perf's own messages go to stacks.perf.log.
 * Invariants: every process this source starts is waited for before stop returns; the
 * control pipes are closed on every path.
 */
#include "longpole/record/stacks.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct stk_rec {
    pid_t perf;
    char dir[4096];
    int64_t period;
    int tracepoint;
    int ctl;           /* our end of perf's control pipe: open until perf has ended (EOF there
                          makes perf stop without writing its data) */
} stk_rec;

static int find_perf(char *out, size_t n)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *e = strchr(path, ':');
        size_t len = e ? (size_t)(e - path) : strlen(path);
        if (len && (size_t)snprintf(out, n, "%.*s/perf", (int)len, path) < n && access(out, X_OK) == 0)
            return 0;
        path += len + (e != NULL);
    }
    return -1;
}

static int has_tracepoint(void)
{
    return access("/sys/kernel/tracing/events/sched/sched_switch", F_OK) == 0 ||
           access("/sys/kernel/debug/tracing/events/sched/sched_switch", F_OK) == 0;
}

static lp_status stacks_probe(lp_error *err)
{
    char perf[4096];
    if (find_perf(perf, sizeof perf))
        return lp_error_set(err, LP_ERR_UNSUPPORTED, "`perf` is not installed (Debian: linux-perf)");
    if (geteuid() != 0) {
        FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
        int level = 2;
        if (f) {
            if (fscanf(f, "%d", &level) != 1)
                level = 2;
            fclose(f);
        }
        if (level > 1)
            return lp_error_set(err, LP_ERR_UNSUPPORTED,
                                "perf may not sample other processes' kernel stacks here (perf_event_paranoid %d > 1; "
                                "run as root or lower it)",
                                level);
    }
    return LP_OK;
}

/* Run argv with stdin from /dev/null, stdout to `out` (or the log) and stderr to the log;
 * extra fds kept open: keep[0..nkeep). Returns the pid or -1. */
static pid_t spawn(char *const argv[], const char *out, const char *log, const int *keep, int nkeep)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int in = open("/dev/null", O_RDONLY);
    int lg = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    int o = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : lg;
    if (in < 0 || lg < 0 || o < 0)
        _exit(127);
    dup2(in, 0), dup2(o, 1), dup2(lg, 2);
    for (int fd = 3; fd < 1024; fd++) {
        int k = 0;
        for (int i = 0; i < nkeep; i++)
            k |= keep[i] == fd;
        if (!k)
            close(fd);
    }
    execvp(argv[0], argv);
    _exit(127);
}

static int wait_exit(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static lp_status stacks_start(void **state, const lp_rec_opts *o, int pid, lp_error *err)
{
    stk_rec *r = lp_calloc(1, sizeof *r);
    if (!r)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    snprintf(r->dir, sizeof r->dir, "%s", o->dir);
    r->period = o->period_ns > 0 ? o->period_ns : 10000000;
    r->tracepoint = has_tracepoint();
    int ctl[2], ack[2];
    if (pipe(ctl))
        goto io;
    if (pipe(ack)) {
        close(ctl[0]), close(ctl[1]);
        goto io;
    }
    char data[4200], log[4200], ev[64], pidb[24], control[64];
    snprintf(data, sizeof data, "%s/stacks.perf.data", r->dir);
    snprintf(log, sizeof log, "%s/stacks.perf.log", r->dir);
    snprintf(ev, sizeof ev, "cpu-clock/period=%lld/", (long long)r->period);
    snprintf(pidb, sizeof pidb, "%d", pid);
    snprintf(control, sizeof control, "fd:%d,%d", ctl[0], ack[1]);
    char *argv[24];
    int k = 0;
    argv[k++] = "perf", argv[k++] = "record", argv[k++] = "-q", argv[k++] = "-o", argv[k++] = data;
    argv[k++] = "-k", argv[k++] = "mono", argv[k++] = "-g", argv[k++] = "-e", argv[k++] = ev;
    if (r->tracepoint)
        argv[k++] = "-e", argv[k++] = "sched:sched_switch";
    argv[k++] = "--switch-events", argv[k++] = "-D", argv[k++] = "-1", argv[k++] = "--control", argv[k++] = control;
    argv[k++] = "-p", argv[k++] = pidb, argv[k] = NULL;
    int keep[2] = {ctl[0], ack[1]};
    r->perf = spawn(argv, NULL, log, keep, 2);
    close(ctl[0]), close(ack[1]);
    if (r->perf < 0) {
        close(ctl[1]), close(ack[0]);
        goto io;
    }
    /* enable, and wait for perf to say it is on (or to die) */
    char buf[8] = {0};
    ssize_t n = write(ctl[1], "enable\n", 7) == 7 ? read(ack[0], buf, sizeof buf - 1) : -1;
    close(ack[0]);
    r->ctl = ctl[1];
    if (n < 3 || strncmp(buf, "ack", 3)) {
        close(r->ctl);
        kill(r->perf, SIGKILL);
        int rc = wait_exit(r->perf);
        lp_free(r);
        return lp_error_set(err, LP_ERR_IO, "perf record did not start (exit %d; see stacks.perf.log)", rc);
    }
    *state = r;
    return LP_OK;
io:
    lp_free(r);
    return lp_error_set(err, LP_ERR_IO, "cannot start perf: %s", strerror(errno));
}

/* What was written, as members of the source's manifest object. */
static void manifest(const stk_rec *r, int rec_rc, int script_rc, lp_jsonw *m)
{
    if (!m)
        return;
    lp_jsonw_key(m, "files");
    lp_jsonw_arr(m);
    lp_jsonw_str(m, "stacks.perf.txt");
    lp_jsonw_str(m, "stacks.perf.log");
    lp_jsonw_arr_end(m);
    lp_jsonw_kstr(m, "format", "perf-script");
    lp_jsonw_kstr(m, "events", r->tracepoint ? "cpu-clock, sched:sched_switch, switch records" : "cpu-clock, switch records");
    lp_jsonw_ki64(m, "period_ns", (int64_t)r->period);
    lp_jsonw_kstr(m, "clock", "CLOCK_MONOTONIC");
    lp_jsonw_ki64(m, "perf_record_exit", rec_rc);
    lp_jsonw_ki64(m, "perf_script_exit", script_rc);
}

static lp_status stacks_stop(void *state, lp_jsonw *m, lp_error *err)
{
    stk_rec *r = state;
    kill(r->perf, SIGINT);
    int rec_rc = wait_exit(r->perf);
    close(r->ctl);
    char data[4200], log[4200], txt[4200];
    snprintf(data, sizeof data, "%s/stacks.perf.data", r->dir);
    snprintf(log, sizeof log, "%s/stacks.perf.log", r->dir);
    snprintf(txt, sizeof txt, "%s/stacks.perf.txt", r->dir);
    char *argv[] = {"perf", "script", "-i", data, "--ns", "--show-switch-events", "-F",
                    LP_REC_STACKS_SCRIPT_FIELDS, NULL};
    pid_t p = spawn(argv, txt, log, NULL, 0);
    int script_rc = p < 0 ? -1 : wait_exit(p);
    unlink(data);
    manifest(r, rec_rc, script_rc, m);
    lp_status st = LP_OK;
    if (script_rc != 0)
        st = lp_error_set(err, LP_ERR_IO, "perf script failed (exit %d; see stacks.perf.log)", script_rc);
    lp_free(r);
    return st;
}

const lp_rec_source lp_rec_stacks = {
    .name = "stacks",
    .description = "call stacks on and off the CPU (perf: cpu-clock, sched_switch, switch records) for CrystalPerf",
    .by_default = 1,
    .probe = stacks_probe,
    .start = stacks_start,
    .stop = stacks_stop,
};
