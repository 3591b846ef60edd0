/* rec_int.h: what the files of the recorder share (record.c: the engine and the table
 * of sources; monitor.c, monitor_read.c: the `monitor` source). Internal. */
#ifndef LP_RECORD_REC_INT_H
#define LP_RECORD_REC_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include "longpole/record/record.h"
#include "base/hashmap.h"

/* The sources (one per file). */
extern const lp_rec_source lp_rec_monitor;

/* ---- the monitor source -------------------------------------------------------------- */

/* A process of the recorded tree. */
typedef struct mon_proc {
    int pid;
    uint64_t start;      /* start time in clock ticks since boot: with the pid, the identity */
    int orphan;          /* its parent left the tree: its time will not reach a tree process's cutime */
    double last_cpu;     /* its own CPU + its reaped children's, seconds, at the last sample */
    int seen;            /* in the current sample's /proc listing */
} mon_proc;

/* A thread of a tree process. */
typedef struct mon_thr {
    int pid, tid;
    uint64_t run_ns, delay_ns; /* last schedstat */
    int64_t first_ns, last_ns; /* realtime of the first and last sample that saw it */
    char comm[32];
    int seen;
} mon_thr;

typedef struct mon {
    const lp_rec_opts *o;
    char path[4096];
    FILE *out;
    char *obuf;          /* the CSV's stdio buffer */
    int root;
    int64_t period, off; /* ns; realtime = monotonic + off */
    long tick;           /* clock ticks per second */
    pthread_t th;
    int running;
    atomic_int stop;
    mon_proc *p;
    size_t np, capp;
    lp_hmap notree;      /* pids seen that are not in the tree (pid -> start + 1) */
    mon_thr *t;
    size_t nt, capt;
    lp_hmap tidx;        /* tid -> index in t */
    double retired_cpu, retired_delay;
    double last_tree_cpu;
    uint64_t clamped;    /* samples where the tree's CPU counter would have gone back (tick rounding) */
    uint64_t samples, missed, rows, procs_seen;
    int64_t max_sample_ns, sum_sample_ns, sampler_cpu_ns;
    char disks[32][32];
    int ndisks;
    char rowbuf[1 << 16];
    char scratch[1 << 16];
    size_t rowlen;
    int64_t now_real;    /* the current sample's timestamp */
    int failed;          /* a write failed */
    int final;           /* the last sample (after the command ended) */
} mon;

/* One sample of everything into the CSV (monitor_read.c). */
void mon_sample(mon *m);
/* The whole disks of /sys/block (not loop or ram devices). */
void mon_find_disks(mon *m);
/* Add one CSV row. */
void mon_row(mon *m, const char *metric, const char *value);

#endif
