/* gen.h: synthetic trace generators (deterministic for a given seed).
 *
 * `dataflow`: a Flink-like streaming job (docs/generators.md). A chain of operators
 * (default source -> flatmap -> count), each run by `parallelism` workers; sources
 * read records at a configured rate, operators process them in network buffers of
 * `batch` records, exchanges between operators are round-robin (rebalance) or keyed
 * (hash-partitioned, where `skew` of the records go to one hot worker), with
 * credit-based flow control (a receiver returns a credit message per buffer it has
 * consumed; a sender without credit waits). Every buffer costs deserialization,
 * processing, serialization and buffer-management activities; a source ahead of its
 * input rate waits for it in an `io` activity; a job manager sends periodic checkpoint
 * barriers (control messages, one checkpoint at a time) that flow through the job and
 * are acknowledged back. Idle time ending at a receive is left as a gap, which the
 * trace model fills as `waiting`. One worker may be made slower by a factor. The model
 * in detail, its invariants and its limits: src/gen/dataflow.c.
 */
#ifndef LONGPOLE_GEN_H
#define LONGPOLE_GEN_H

#include <stdint.h>
#include "longpole/model/trace.h"
#include "longpole/base/progress.h"
#include <stdio.h>

#define LP_GEN_MAXOPS 16

typedef struct lp_gen_op {
    char name[32];
    uint32_t parallelism;
    double cost_ns;          /* processing time per record (ns) */
    int keyed;               /* the exchange INTO this operator is keyed (hash) rather than rebalance */
} lp_gen_op;

typedef struct lp_gen_dataflow {
    lp_gen_op ops[LP_GEN_MAXOPS];
    uint32_t nops;
    double rate;             /* records per second of job time read by all sources together */
    int64_t duration_ns;     /* job time to simulate (stops earlier if max_records is reached) */
    uint64_t max_records;    /* stop once this many records were made, gaps not counted (0 = no limit) */
    double skew;             /* share of keyed records routed to worker 0 of the receiving operator, 0..1 */
    char slow_worker[48];    /* e.g. "flatmap.1", "" for none */
    double slow_factor;      /* processing-time multiplier of slow_worker (>= 1) */
    uint32_t batch;          /* records per network buffer */
    uint32_t credits;        /* buffers in flight per channel */
    double ser_ns;           /* serialization cost per record */
    double deser_ns;         /* deserialization cost per record */
    double buffer_ns;        /* buffer-management cost per buffer */
    double net_latency_ns;   /* network latency per message */
    double net_ns_per_byte;  /* network transfer time per byte */
    uint32_t record_bytes;   /* bytes per record (message sizes) */
    int64_t checkpoint_ns;   /* checkpoint barrier interval (0 = none) */
    double jitter;           /* relative random jitter of every duration, 0..1 */
    uint64_t seed;
    int halves;              /* write messages as S/R pairs instead of M records */
    lp_progress_fn progress; /* optional: "simulating" (records made of max_records, or ms of
                                job time of duration_ns), then "writing" (records written);
                                non-zero cancels (LP_ERR_ARG) */
    void *progress_ctx;
} lp_gen_dataflow;

/* Defaults: source:4:200,flatmap:4:2000,count:4:600 (ns per record; count keyed), 1 M
 * records/s, 10 s, batch 64, 4 credits, ser/deser 100 ns per record, buffer 2000 ns,
 * latency 20 us + 0.1 ns/byte, 100-byte records, checkpoint every 1 s, jitter 0.2,
 * skew 0, no slow worker, seed 1. At that rate flatmap is about 55% busy; with
 * flatmap:2 it saturates and backpressures the sources. */
void lp_gen_dataflow_defaults(lp_gen_dataflow *o);
/* Parse "name:parallelism[:cost_ns][:keyed|:rebalance],..." into o->ops (replacing
 * them; o is unchanged on error). Names are 1-31 characters of [A-Za-z0-9_.-], unique;
 * parallelism 1..4096; at most LP_GEN_MAXOPS operators. A missing cost is the default
 * of that name (source 200, flatmap 2000, count 600) or 1000 ns. Unless given, the
 * last operator's input is keyed and the others' rebalance (ignored on the first). */
lp_status lp_gen_parse_ops(lp_gen_dataflow *o, const char *spec, lp_error *err);
/* Generate a trace in memory. LP_ERR_ARG for invalid options, LP_ERR_LIMIT beyond
 * 2^24 channels between workers, LP_ERR_DATA if the builder reports anything (a
 * generator bug). */
lp_status lp_gen_dataflow_run(const lp_gen_dataflow *o, lp_trace **out, lp_error *err);
/* Generate and write the trace as .lpt text to `out` without building it in memory:
 * byte for byte what lp_lpt_write writes for the trace lp_gen_dataflow_run makes from
 * the same options. Formatting runs on `threads` threads (0: one per online CPU, at
 * most 8); the output does not depend on their number. LP_ERR_IO if a write fails. */
lp_status lp_gen_dataflow_write(const lp_gen_dataflow *o, FILE *out, unsigned threads, lp_error *err);
/* The same as a .lptb binary file: byte for byte what lp_lptb_write writes for the trace
 * lp_gen_dataflow_run makes, computed from the simulation's log (gap filling included)
 * without building the trace. Memory: the log plus 16 bytes a message. */
lp_status lp_gen_dataflow_write_lptb(const lp_gen_dataflow *o, FILE *out, unsigned threads, lp_error *err);

#endif
