/* monitor_read.c: one sample of the `monitor` source (monitor.c): the recorded process
 * tree and its threads, and the machine's counters, read from /proc and written as
 * CSV rows `time_ns,host,metric,value` (docs/record.md lists the metrics).
 *
 * The process tree: /proc is listed every 5th sample; a pid not seen before is in the tree
 * when its parent is (its /proc/PID/stat is read once; pids outside the tree are
 * remembered and not read again). The tree's CPU time, a counter in seconds, is
 *   retired + sum over live tree processes of (own CPU + CPU of their reaped children):
 * own CPU from the process's CPU clock (nanoseconds, all its threads, live or not), the
 * reaped children's from /proc/PID/stat (clock ticks). A child's time moves into its
 * parent's at reaping, so nothing is counted twice; a process whose parent left the
 * tree (an orphan, reaped by init) adds its last value to `retired` when it goes. The
 * counter is kept monotonic (a tick-rounding step back is clamped and counted).
 * Threads: CPU and run-queue delay from /proc/PID/task/TID/schedstat (nanoseconds).
 */
#include "record/rec_int.h"
#include "longpole/base/alloc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A whole small file into buf (NUL-terminated); its length, or -1. */
static ssize_t slurp(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n == cap - 1)
            break;
    }
    close(fd);
    buf[n] = 0;
    return (ssize_t)n;
}

void mon_row(mon *m, const char *metric, const char *value)
{
    size_t need = 96 + strlen(metric) + strlen(m->o->hostname) + strlen(value);
    if (m->rowlen + need > sizeof m->rowbuf) {
        if (fwrite(m->rowbuf, 1, m->rowlen, m->out) != m->rowlen)
            m->failed = 1;
        m->rowlen = 0;
    }
    m->rowlen += (size_t)snprintf(m->rowbuf + m->rowlen, sizeof m->rowbuf - m->rowlen, "%lld,%s,%s,%s\n",
                                  (long long)m->now_real, m->o->hostname, metric, value);
    m->rows++;
}

static void row_f(mon *m, const char *metric, double v)
{
    char b[64];
    snprintf(b, sizeof b, "%.9f", v);
    mon_row(m, metric, b);
}

static void row_u(mon *m, const char *metric, unsigned long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", v);
    mon_row(m, metric, b);
}

/* ---- processes ---------------------------------------------------------------------- */

typedef struct pstat {
    int ppid;
    char state;
    uint64_t utime, stime, cutime, cstime, start;
} pstat;

static int read_pstat(int pid, pstat *ps)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if (slurp(path, buf, sizeof buf) <= 0)
        return -1;
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return -1;
    p += 2;
    /* fields from 3: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
     * utime stime cutime cstime priority nice threads itrealvalue starttime */
    unsigned long long f[20];
    ps->state = *p;
    p++;
    for (int i = 0; i < 19; i++) {
        char *e;
        long long v = strtoll(p, &e, 10);
        if (e == p)
            return -1;
        f[i] = (unsigned long long)v;
        p = e;
    }
    ps->ppid = (int)f[0];
    ps->utime = f[10], ps->stime = f[11], ps->cutime = f[12], ps->cstime = f[13];
    ps->start = f[18];
    return 0;
}

static mon_proc *tree_find(mon *m, int pid)
{
    for (size_t i = 0; i < m->np; i++)
        if (m->p[i].pid == pid)
            return &m->p[i];
    return NULL;
}

static int tree_add(mon *m, int pid, uint64_t start)
{
    if (lp_grow_at(&m->p, &m->capp, m->np + 1, sizeof *m->p))
        return -1;
    m->p[m->np++] = (mon_proc){pid, start, 0, 0, 1};
    m->procs_seen++;
    return 0;
}

typedef struct cand {
    int pid, ppid;
    uint64_t start;
} cand;

/* List /proc: mark tree processes seen, adopt new descendants, forget the dead. */
static void discover(mon *m)
{
    for (size_t i = 0; i < m->np; i++)
        m->p[i].seen = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return;
    cand c[256];
    size_t nc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        int pid = atoi(e->d_name);
        mon_proc *p = tree_find(m, pid);
        uint64_t v;
        if (p) {
            p->seen = 1;
            continue;
        }
        if (lp_hmap_get(&m->notree, (uint64_t)pid, &v) || nc == 256)
            continue;
        pstat ps;
        if (read_pstat(pid, &ps) == 0)
            c[nc++] = (cand){pid, ps.ppid, ps.start};
    }
    closedir(d);
    for (int added = 1; added;) { /* adopt descendants, parents first */
        added = 0;
        for (size_t i = 0; i < nc; i++)
            if (c[i].pid && tree_find(m, c[i].ppid)) {
                if (tree_add(m, c[i].pid, c[i].start) == 0)
                    added = 1;
                c[i].pid = 0;
            }
    }
    for (size_t i = 0; i < nc; i++)
        if (c[i].pid)
            lp_hmap_put(&m->notree, (uint64_t)c[i].pid, c[i].start + 1, NULL);
    size_t k = 0;
    for (size_t i = 0; i < m->np; i++) {
        if (m->p[i].seen || m->p[i].pid == m->root) {
            m->p[k++] = m->p[i];
            continue;
        }
        if (m->p[i].orphan) /* nobody in the tree will reap it */
            m->retired_cpu += m->p[i].last_cpu;
    }
    m->np = k;
}

/* Own CPU time of a process in seconds (its CPU clock; /proc ticks if that fails). */
static double own_cpu(mon *m, int pid, const pstat *ps)
{
    clockid_t cid;
    struct timespec ts;
    if (clock_getcpuclockid(pid, &cid) == 0 && clock_gettime(cid, &ts) == 0)
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    return (double)(ps->utime + ps->stime) / (double)m->tick;
}

/* ---- threads ------------------------------------------------------------------------- */

static mon_thr *thread_of(mon *m, int pid, int tid)
{
    uint64_t v;
    if (lp_hmap_get(&m->tidx, (uint64_t)tid, &v) && m->t[v].pid == pid)
        return &m->t[v];
    if (lp_grow_at(&m->t, &m->capt, m->nt + 1, sizeof *m->t) ||
        lp_hmap_put(&m->tidx, (uint64_t)tid, m->nt, NULL))
        return NULL;
    mon_thr *t = &m->t[m->nt++];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    t->first_ns = m->now_real;
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
    if (slurp(path, t->comm, sizeof t->comm) > 0)
        t->comm[strcspn(t->comm, "\n")] = 0;
    return t;
}

/* Every thread of process pid: CPU and run delay rows. Returns their delay sum (s). */
static double threads(mon *m, int pid)
{
    char path[96], buf[128], name[96];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    double delay = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        int tid = atoi(e->d_name);
        snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", pid, tid);
        unsigned long long run, del;
        if (slurp(path, buf, sizeof buf) <= 0 || sscanf(buf, "%llu %llu", &run, &del) != 2)
            continue;
        mon_thr *t = thread_of(m, pid, tid);
        if (!t)
            continue;
        t->run_ns = run, t->delay_ns = del, t->seen = 1, t->last_ns = m->now_real;
        delay += (double)del / 1e9;
        snprintf(name, sizeof name, "thread.%d.%d.cpu", pid, tid);
        row_f(m, name, (double)run / 1e9);
        snprintf(name, sizeof name, "thread.%d.%d.delay", pid, tid);
        row_f(m, name, (double)del / 1e9);
    }
    closedir(d);
    return delay;
}

/* The tree: per-process CPU, per-thread CPU and delay, totals. */
static void tree_sample(mon *m)
{
    for (size_t i = 0; i < m->nt; i++)
        m->t[i].seen = 0;
    double cpu = m->retired_cpu, delay = 0;
    for (size_t i = 0; i < m->np; i++) {
        mon_proc *p = &m->p[i];
        pstat ps;
        if (read_pstat(p->pid, &ps))
            continue;
        if (p->pid != m->root && !tree_find(m, ps.ppid))
            p->orphan = 1;
        p->last_cpu = own_cpu(m, p->pid, &ps) + (double)(ps.cutime + ps.cstime) / (double)m->tick;
        cpu += p->last_cpu;
        delay += threads(m, p->pid);
    }
    for (size_t i = 0; i < m->nt; i++) /* threads gone since the last sample */
        if (!m->t[i].seen && m->t[i].delay_ns != UINT64_MAX) {
            m->retired_delay += (double)m->t[i].delay_ns / 1e9;
            m->t[i].delay_ns = UINT64_MAX;
        }
    if (cpu < m->last_tree_cpu) {
        m->clamped++;
        cpu = m->last_tree_cpu;
    }
    m->last_tree_cpu = cpu;
    row_f(m, "proc.cpu", cpu);
    row_f(m, "proc.delay", m->retired_delay + delay);
    row_u(m, "proc.processes", m->np);
}

/* ---- the machine ---------------------------------------------------------------------- */

static void machine_cpu(mon *m)
{
    char buf[512];
    unsigned long long v[10] = {0};
    if (slurp("/proc/stat", buf, sizeof buf) <= 0 ||
        sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
               &v[7]) < 8)
        return;
    /* user nice system idle iowait irq softirq steal (guest time is inside user) */
    double busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)m->tick;
    row_f(m, "cpu.busy", busy);
    row_f(m, "cpu.iowait", (double)v[4] / (double)m->tick);
    row_u(m, "cpu.online", (unsigned long long)sysconf(_SC_NPROCESSORS_ONLN));
}

static void pressure(mon *m)
{
    static const char *const what[] = {"cpu", "io", "memory"};
    char path[64], buf[512], name[64];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "/proc/pressure/%s", what[i]);
        if (slurp(path, buf, sizeof buf) <= 0)
            continue;
        for (char *line = buf; line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = 0;
            char *tot = strstr(line, "total=");
            if (tot && (strncmp(line, "some", 4) == 0 || strncmp(line, "full", 4) == 0)) {
                snprintf(name, sizeof name, "psi.%s.%.4s", what[i], line);
                row_f(m, name, strtod(tot + 6, NULL) / 1e6);
            }
            line = nl ? nl + 1 : NULL;
        }
    }
}

static void network(mon *m)
{
    char buf[8192], name[96];
    if (slurp("/proc/net/dev", buf, sizeof buf) <= 0)
        return;
    unsigned long long rx_all = 0, tx_all = 0;
    char *line = strchr(buf, '\n');
    line = line ? strchr(line + 1, '\n') : NULL; /* two header lines */
    while (line && *++line) {
        char *colon = strchr(line, ':'), *nl = strchr(line, '\n');
        if (!colon || (nl && colon > nl))
            break;
        char *s = line;
        while (*s == ' ')
            s++;
        char ifn[32];
        snprintf(ifn, sizeof ifn, "%.*s", (int)(colon - s), s);
        unsigned long long rx, f[8], tx;
        if (sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &rx, &f[0], &f[1], &f[2], &f[3], &f[4],
                   &f[5], &f[6], &tx) == 9) {
            snprintf(name, sizeof name, "net.%s.rx_bytes", ifn);
            row_u(m, name, rx);
            snprintf(name, sizeof name, "net.%s.tx_bytes", ifn);
            row_u(m, name, tx);
            if (strcmp(ifn, "lo") != 0)
                rx_all += rx, tx_all += tx;
        }
        line = nl;
    }
    row_u(m, "net.rx_bytes", rx_all);
    row_u(m, "net.tx_bytes", tx_all);
}

void mon_find_disks(mon *m)
{
    DIR *d = opendir("/sys/block");
    m->ndisks = 0;
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && m->ndisks < 32) {
        const char *n = e->d_name;
        if (n[0] == '.' || strncmp(n, "loop", 4) == 0 || strncmp(n, "ram", 3) == 0 || strlen(n) >= 32)
            continue;
        size_t len = strlen(n);
        memcpy(m->disks[m->ndisks], n, len + 1); /* len < 32: checked above */
        m->ndisks++;
    }
    closedir(d);
}

static void disks(mon *m)
{
    char *buf = m->scratch, name[96];
    if (!m->ndisks || slurp("/proc/diskstats", buf, sizeof m->scratch) <= 0)
        return;
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        unsigned maj, min;
        char dev[64];
        unsigned long long r, rm, rs, rt, w, wm, ws, wt, inflight, io;
        if (sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &maj, &min, dev, &r, &rm, &rs,
                   &rt, &w, &wm, &ws, &wt, &inflight, &io) == 13)
            for (int i = 0; i < m->ndisks; i++)
                if (strcmp(dev, m->disks[i]) == 0) {
                    snprintf(name, sizeof name, "disk.%s.read_bytes", dev);
                    row_u(m, name, rs * 512);
                    snprintf(name, sizeof name, "disk.%s.write_bytes", dev);
                    row_u(m, name, ws * 512);
                    snprintf(name, sizeof name, "disk.%s.busy", dev);
                    row_f(m, name, (double)io / 1e3);
                }
        line = nl ? nl + 1 : NULL;
    }
}

void mon_sample(mon *m)
{
    int64_t t0 = mono_ns();
    m->now_real = t0 + m->off;
    /* listing /proc is the costliest read: every 5th sample (and the first and last);
     * a child living shorter than that still counts through its parent's cutime */
    if (m->samples % 5 == 0 || m->final)
        discover(m);
    tree_sample(m);
    machine_cpu(m);
    pressure(m);
    network(m);
    disks(m);
    int64_t t1 = mono_ns();
    if (m->rowlen && fwrite(m->rowbuf, 1, m->rowlen, m->out) != m->rowlen)
        m->failed = 1;
    m->rowlen = 0;
    m->samples++;
    m->sum_sample_ns += t1 - t0;
    if (t1 - t0 > m->max_sample_ns)
        m->max_sample_ns = t1 - t0;
}
