/* stacks.h: the `stacks` source of the recorder (record.h; src/record/stacks.c):
 * wall-clock call-stack samples of the recorded process for CrystalPerf. It runs
 * `perf record` on the process (cpu-clock samples with call chains for on-CPU time,
 * sched:sched_switch with call chains and switch records for off-CPU time with its
 * blocking stack: a CPU-time sampler alone is blind to blocked threads) and writes
 * `stacks.perf.txt`, the `perf script` text that lp_stacks_read_perf reads
 * (docs/formats/perf-script.md). Skipped, with the reason, where perf is missing or not
 * allowed.
 */
#ifndef LONGPOLE_RECORD_STACKS_H
#define LONGPOLE_RECORD_STACKS_H

#include "longpole/record/record.h"

extern const lp_rec_source lp_rec_stacks;

/* The `perf script` options that make the text the reader expects. */
#define LP_REC_STACKS_SCRIPT_FIELDS "comm,pid,tid,time,period,event,ip,sym,dso,trace"

#endif
