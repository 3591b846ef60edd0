/* whatif.h: CrystalPerf's performance-resource model (§5): the runtime of a recorded job
 * under another configuration, by replaying its DAG. src/analysis/crystalperf/whatif.c;
 * definitions and what differs from the paper in docs/analyses/crystalperf.md.
 *
 * The DAG (lp_wi_dag_build) comes from a trace: every activity of a worker in a pool
 * (attribute pool=, or a Spark task slot: executor=) is a task the replay may move to any
 * slot of its pool (consecutive activities with one task= value are one task, of the
 * operator of its longest part); every
 * other worker is sequential (one slot; all its segments, gaps included, stay in order:
 * a `waiting` gap takes no time of its own, the segment after it waits for the messages
 * that ended it; an `unknown` gap keeps its length). Messages are dependencies: the
 * segment starting at (or next after) the receive cannot start before the sender reached
 * the send's point in its segment plus the message's latency (a message inside one host into a pool task has none: queueing for a
 * slot is what the replay recomputes). Tasks without dependencies are released at their
 * recorded start.
 *
 * The replay is event-driven: when a slot of a pool is free, the released task of that
 * pool that started first in the recording runs on it (so with the recorded slots the
 * recorded order comes back). A task's time under the new configuration:
 *   Alg. 1 (cores N -> N', CPU speed s -> s'): T' = T (1 - v_cpu + v_cpu s/s'); a task that
 *     moves into the first wave of its operator on its pool is slowed by the warm-up
 *     factor w, one that moves out of it sped up by w (w fitted per pool: mean first-wave
 *     time over mean later time of the same operator, clamped to [1/3, 3], averaged over
 *     operators weighted by their time);
 *   Alg. 2 (bandwidth B -> B', disk and network separately): t_io = v T; D = t_io B; the
 *     buffer processing t_p = (D / S_B) o stays, the transfer t_io - t_p is scaled by B/B';
 *     network messages between hosts are scaled by B/B' too;
 *   shared devices (not in the paper, which assumes every task has the bandwidth to
 *     itself), when the task's bytes D (attributes disk_bytes / net_bytes, or Spark's byte
 *     metrics) and the recorded bandwidth B are known: k is the mean number of its pool's
 *     tasks running beside it, itself included; on N' slots instead of N it runs beside
 *     k' = clamp(k N'/N, 1, N') (k' = k with the slots unchanged). A task whose pool kept
 *     the device saturated (the rate of its pool's tasks of its operator together,
 *     sum D / sum (t_io / k), >= LP_WI_SATURATED B) had 1/k of it: Alg. 2 with the
 *     transfer also scaled by k'/k. On a device it did not saturate its time was not set by
 *     the bandwidth: it keeps t_io until the new bandwidth shared by k' tasks is the bound,
 *     t' = max(t_io, k' D / B');
 *   the rest (wait, unknown) is kept.
 * The model's own error is the replay at the recorded configuration against the recorded
 * runtime (as Sparklens reports it): lp_wi_result.self_error of a replay with an
 * unchanged lp_wi_config.
 */
#ifndef LONGPOLE_CRYSTALPERF_WHATIF_H
#define LONGPOLE_CRYSTALPERF_WHATIF_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/analysis/crystalperf/profile.h"

enum { LP_WI_TASK = 0, LP_WI_GAP, LP_WI_WAIT };

typedef struct lp_wi_node {
    int64_t start, dur;        /* recorded, ns */
    uint32_t pool, worker;
    lp_str op;                 /* operator (first-wave groups) */
    uint8_t kind;              /* LP_WI_* */
    uint8_t first_wave;        /* in its operator's first wave on its pool, recorded */
    double v[LP_RES_N];        /* resource vector (fractions of dur) */
    double disk_bytes, net_bytes; /* the task's data on each device (0: not known) */
    double conc;               /* k: mean number of its pool's tasks running beside it, itself
                                  included (>= 1; 0 counts as 1) */
    double disk_rate, net_rate; /* bytes/s its pool's tasks of its operator moved on the device together:
                                   sum D / sum (t_io / k) (0: not known) */
    uint32_t rec_slots;        /* N: the slots of its pool in the recording */
} lp_wi_node;

/* The share of the recorded bandwidth from which a device counts as saturated. */
#define LP_WI_SATURATED 0.8

typedef struct lp_wi_edge {
    uint32_t src, dst;
    double frac;               /* the point of src's time at which it fires */
    int64_t lat;               /* recorded latency after that point */
    uint8_t net;               /* the latency is network transfer (scaled by the net bandwidth) */
} lp_wi_edge;

typedef struct lp_wi_dag {
    lp_wi_node *node;          /* in order of recorded start (ties: worker, then time order) */
    size_t n;
    lp_wi_edge *edge;
    size_t ne;
    uint32_t npools;
    uint32_t *slots;           /* [npools] recorded slots */
    uint8_t *seq;              /* [npools] a sequential worker (not a pool) */
    double *warmup;            /* [npools] fitted w */
    int64_t t0, t1;            /* recorded start and end of the job */
    uint64_t msgs_unplaced;    /* messages without a segment at either end (left out) */
} lp_wi_dag;

lp_status lp_wi_dag_build(const lp_trace *t, const lp_cpf_profile *p, lp_wi_dag *d, lp_error *err);
void lp_wi_dag_release(lp_wi_dag *d);

typedef struct lp_wi_config {
    uint32_t slots;            /* N' slots per pool (0: as recorded) */
    double cpu_speed;          /* s'/s (0 or 1: unchanged) */
    double disk_ratio, net_ratio; /* B'/B (0 or 1: unchanged) */
    double disk_bw, net_bw;    /* B in bytes/s, for the buffer processing term (0: no such term) */
    double buf_bytes, buf_ns;  /* S_B and o (defaults 65536 bytes and 2000 ns) */
    int no_vectors;            /* a Sparklens-style replay: task times are not scaled */
    int no_warmup;
    int no_sharing;            /* the paper's Alg. 1 and 2 only: no shared devices */
} lp_wi_config;

typedef struct lp_wi_result {
    int64_t makespan;          /* predicted end - t0 */
    int64_t recorded;          /* t1 - t0 */
    int64_t *start;            /* [n] replayed starts (NULL unless asked) */
} lp_wi_result;

/* One task's time under a configuration (the formulas above; warm-up not applied). */
double lp_wi_task_time(const lp_wi_node *nd, const lp_wi_config *c);

/* The event-driven replay (heaps: O((n + edges) log n)). with_starts: fill r->start. */
lp_status lp_wi_replay(const lp_wi_dag *d, const lp_wi_config *c, int with_starts, lp_wi_result *r, lp_error *err);
void lp_wi_result_release(lp_wi_result *r);

/* The reversed roofline of memory (§5): runtime falls linearly as memory grows until
 * the data (data_bytes) fits, then stays flat; `per_byte_ns` is the time per byte that
 * does not fit (1e9 / the bandwidth of the spill device). From a run of `recorded_ns`
 * with `mem` bytes, the runtime with `mem2` bytes. */
double lp_wi_memory(double recorded_ns, double mem, double mem2, double data_bytes, double per_byte_ns);

#endif
