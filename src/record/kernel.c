/* kernel.c: the recorder source "kernel" (lp_rec_source_kernel): kernel events through
 * tracefs while the recorded command runs, into <dir>/kernel.ftrace.
 *
 * start: a private tracefs instance, instances/longpole-<recorder pid> (so other users
 * of tracefs are not disturbed; stale ones of dead recorders are removed first), its
 * clock set to `mono` (CLOCK_MONOTONIC, the clock of longpole's other sources), a
 * ring buffer of 4 MiB per CPU, the events below enabled (those this kernel lacks are
 * skipped and listed in the manifest), then a thread streams the instance's
 * `trace_pipe` (the kernel merges the CPUs in time order; it prints "CPU:N [LOST M
 * EVENTS]" where its buffer overflowed, which the reader counts) into the file while
 * the command runs. The file starts with "# longpole-kernel: hostname=... clock=mono
 * root_pid=..." and "#P:<cpus>".
 * stop: tracing off, the pipe drained, the instance removed (also when start fails
 * half-way), the file closed; the manifest says what was written and how much.
 *
 * Scope: the whole system, not only the command's process tree: the thread that wakes
 * one of the command's threads is often not one of them (a kworker finishing its disk
 * I/O, the interrupt taken while another task ran, ksoftirqd), and the critical path
 * needs it. root_pid names the command for the analysis.
 * Precision: ftrace text prints microseconds (the kernel's own clock is in ns; equal
 * printed stamps keep the kernel's order in the file).
 */
#include "longpole/record/kernel.h"
#include "longpole/base/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

static const char *const events[] = {
    "sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup", "sched/sched_wakeup_new",
    "sched/sched_process_fork", "sched/sched_process_exec", "sched/sched_process_exit", "sched/sched_process_free",
    "irq/irq_handler_entry", "irq/irq_handler_exit", "irq/softirq_raise", "irq/softirq_entry", "irq/softirq_exit",
    "timer/hrtimer_expire_entry", "timer/hrtimer_expire_exit", "timer/timer_expire_entry", "timer/timer_expire_exit",
    "block/block_rq_issue", "block/block_rq_complete", "net/net_dev_queue", "net/netif_receive_skb",
    "irq_vectors/reschedule_entry", "irq_vectors/reschedule_exit", "irq_vectors/call_function_entry",
    "irq_vectors/call_function_exit", "irq_vectors/call_function_single_entry",
    "irq_vectors/call_function_single_exit", "ipi/ipi_entry", "ipi/ipi_exit",
};
#define NEVENTS (sizeof events / sizeof events[0])

typedef struct krec {
    char inst[256];     /* the instance's directory */
    char path[4096];    /* the output file */
    int fd;             /* the instance's trace_pipe */
    FILE *out;
    pthread_t th;
    int running;
    atomic_int stop;
    uint64_t bytes, lines;
    int werr;           /* errno of a failed write or read, 0 */
    char enabled[NEVENTS];
    char buf[1 << 16];
} krec;

static const char *tracefs_root(void)
{
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        char p[128];
        struct stat sb;
        snprintf(p, sizeof p, "%s/instances", roots[i]);
        if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
            return roots[i];
    }
    return NULL;
}

static int put(const char *dir, const char *file, const char *val)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    int fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = strlen(val);
    int ok = write(fd, val, n) == (ssize_t)n;
    int e = errno;
    close(fd);
    errno = e;
    return ok ? 0 : -1;
}

static lp_status probe(lp_error *err)
{
    const char *root = tracefs_root();
    if (!root)
        return lp_error_set(err, LP_ERR_UNSUPPORTED,
                            "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
    char p[256];
    snprintf(p, sizeof p, "%s/instances", root);
    if (access(p, W_OK) != 0 || geteuid() != 0)
        return lp_error_set(err, LP_ERR_UNSUPPORTED, "tracefs at %s is not writable (run as root)", root);
    snprintf(p, sizeof p, "%s/events/sched/sched_switch", root);
    if (access(p, F_OK) != 0)
        return lp_error_set(err, LP_ERR_UNSUPPORTED, "this kernel has no sched_switch trace event");
    return LP_OK;
}

/* Instances named longpole-<pid> whose recorder died are removed. */
static void remove_stale(const char *root)
{
    char p[256];
    snprintf(p, sizeof p, "%s/instances", root);
    DIR *d = opendir(p);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, "longpole-", 9) != 0)
            continue;
        long pid = strtol(e->d_name + 9, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char q[512];
        snprintf(q, sizeof q, "%s/%s", p, e->d_name);
        rmdir(q);
    }
    closedir(d);
}

static void *pump(void *arg)
{
    krec *k = arg;
    for (;;) {
        int stopping = atomic_load(&k->stop);
        struct pollfd pf = {.fd = k->fd, .events = POLLIN};
        if (!stopping) { /* the timeout only bounds how late a stop is noticed */
            int r = poll(&pf, 1, 100);
            if (r == 0 || (r < 0 && errno == EINTR))
                continue;
            if (r < 0) {
                k->werr = errno;
                break;
            }
        }
        ssize_t n = read(k->fd, k->buf, sizeof k->buf);
        if (n > 0) {
            if (!k->werr && fwrite(k->buf, 1, (size_t)n, k->out) != (size_t)n)
                k->werr = errno ? errno : EIO;
            k->bytes += (uint64_t)n;
            for (ssize_t i = 0; i < n; i++)
                k->lines += k->buf[i] == '\n';
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN) {
            k->werr = errno;
            break;
        }
        if (stopping) /* drained: EAGAIN, or end of file once tracing is off */
            break;
        if (n == 0) /* end of file while tracing: do not spin on a readable pipe */
            poll(NULL, 0, 10);
    }
    return NULL;
}

static void teardown(krec *k)
{
    if (k->running) {
        atomic_store(&k->stop, 1);
        pthread_join(k->th, NULL);
        k->running = 0;
    }
    if (k->fd >= 0)
        close(k->fd);
    k->fd = -1;
    if (k->inst[0]) {
        put(k->inst, "tracing_on", "0");
        for (size_t i = 0; i < NEVENTS; i++)
            if (k->enabled[i]) {
                char f[128];
                snprintf(f, sizeof f, "events/%s/enable", events[i]);
                put(k->inst, f, "0");
            }
        rmdir(k->inst);
    }
}

static lp_status start(void **state, const lp_rec_opts *o, int pid, lp_error *err)
{
    const char *root = tracefs_root();
    if (!root)
        return lp_error_set(err, LP_ERR_UNSUPPORTED, "tracefs is not mounted");
    krec *k = lp_calloc(1, sizeof *k);
    if (!k)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    k->fd = -1;
    lp_status st = LP_OK;
    remove_stale(root);
    mkdir(o->dir, 0755);
    snprintf(k->path, sizeof k->path, "%s/kernel.ftrace", o->dir);
    k->out = fopen(k->path, "w");
    if (!k->out) {
        st = lp_error_set(err, LP_ERR_IO, "cannot create '%s': %s", k->path, strerror(errno));
        goto fail;
    }
    snprintf(k->inst, sizeof k->inst, "%s/instances/longpole-%ld", root, (long)getpid());
    if (mkdir(k->inst, 0755) != 0 && !(errno == EEXIST && rmdir(k->inst) == 0 && mkdir(k->inst, 0755) == 0)) {
        st = lp_error_set(err, LP_ERR_IO, "cannot create the tracefs instance '%s': %s", k->inst, strerror(errno));
        k->inst[0] = '\0';
        goto fail;
    }
    put(k->inst, "tracing_on", "0");
    if (put(k->inst, "trace_clock", "mono") || put(k->inst, "buffer_size_kb", "4096")) {
        st = lp_error_set(err, LP_ERR_IO, "cannot configure '%s': %s", k->inst, strerror(errno));
        goto fail;
    }
    int nen = 0;
    for (size_t i = 0; i < NEVENTS; i++) {
        char f[128];
        snprintf(f, sizeof f, "events/%s/enable", events[i]);
        k->enabled[i] = put(k->inst, f, "1") == 0;
        nen += k->enabled[i];
    }
    if (!k->enabled[0]) {
        st = lp_error_set(err, LP_ERR_IO, "cannot enable sched_switch in '%s': %s", k->inst, strerror(errno));
        goto fail;
    }
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    fprintf(k->out, "# longpole-kernel: hostname=%s clock=mono root_pid=%d events=%d\n#P:%ld\n", host, pid, nen,
            ncpu > 0 ? ncpu : 1);
    char p[512];
    snprintf(p, sizeof p, "%s/trace_pipe", k->inst);
    k->fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (k->fd < 0 || put(k->inst, "tracing_on", "1")) {
        st = lp_error_set(err, LP_ERR_IO, "cannot start tracing in '%s': %s", k->inst, strerror(errno));
        goto fail;
    }
    if (pthread_create(&k->th, NULL, pump, k) != 0) {
        st = lp_error_set(err, LP_ERR_IO, "cannot start the kernel-event reader thread");
        goto fail;
    }
    k->running = 1;
    *state = k;
    return LP_OK;
fail:
    teardown(k);
    if (k->out) {
        fclose(k->out);
        unlink(k->path);
    }
    lp_free(k);
    return st;
}

static lp_status stop(void *state, lp_jsonw *m, lp_error *err)
{
    krec *k = state;
    put(k->inst, "tracing_on", "0");
    teardown(k);
    lp_status st = LP_OK;
    if (fclose(k->out) != 0 && !k->werr)
        k->werr = errno;
    if (k->werr)
        st = lp_error_set(err, LP_ERR_IO, "writing '%s': %s", k->path, strerror(k->werr));
    if (m) {
        lp_jsonw_key(m, "files");
        lp_jsonw_arr(m);
        lp_jsonw_str(m, "kernel.ftrace");
        lp_jsonw_arr_end(m);
        lp_jsonw_kstr(m, "format", "ftrace");
        lp_jsonw_ku64(m, "bytes", k->bytes);
        lp_jsonw_ku64(m, "lines", k->lines);
        lp_jsonw_kstr(m, "clock", "mono");
        lp_jsonw_kstr(m, "scope", "system");
        lp_jsonw_key(m, "events");
        lp_jsonw_arr(m);
        for (size_t i = 0; i < NEVENTS; i++)
            if (k->enabled[i])
                lp_jsonw_str(m, events[i]);
        lp_jsonw_arr_end(m);
    }
    lp_free(k);
    return st;
}

const lp_rec_source lp_rec_source_kernel = {
    .name = "kernel",
    .description = "kernel scheduling, interrupt, timer, block and network events (tracefs; root)",
    .by_default = 1,
    .probe = probe,
    .start = start,
    .stop = stop,
};
