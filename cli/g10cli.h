/* g10cli.h: what the parts of `longpole grade10` share: its inputs once read (the model,
 * the OperationLog / monitoring / blocking data, a trace, a recording's manifest) and
 * the printers of its answer (g10_print.c). */
#ifndef LP_CLI_G10CLI_H
#define LP_CLI_G10CLI_H

#include "cli.h"
#include "longpole/analysis/grade10/attrib.h"
#include "longpole/analysis/grade10/exec.h"
#include "longpole/analysis/grade10/fit.h"
#include "longpole/analysis/grade10/g10json.h"
#include "longpole/analysis/grade10/issues.h"
#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/path.h"
#include "longpole/import/grade10.h"

/* The adjustments made to the data, summed over the timelines (each also in the JSON). */
typedef struct g10_adjust {
    double clipped;          /* capacity units x s above capacity, not placed */
    uint64_t gaps, dropped, merged;
} g10_adjust;

void g10_adjust_sum(const lp_g10_attr *a, g10_adjust *out);

/* Contention over the run, from the monitor source's counters (docs/record.md), when the
 * monitoring has them: CPU seconds of the recorded tree (proc.cpu), the time its threads
 * waited on a run queue (proc.delay), the time some task waited for a CPU (psi.cpu.some). */
typedef struct g10_contention {
    int have_delay, have_psi;
    int effective;     /* the attribution used effective capacity (a resource's delay= series) */
    double cpu_s, delay_s, psi_s, wall_s;
} g10_contention;

void g10_contention_of(const lp_g10_data *d, int64_t t0, int64_t t1, g10_contention *c);
/* "runnable but waiting ..." lines when the run was contended (a share over 10 %). */
void g10_print_contention(FILE *out, const g10_contention *c);

/* The text answer: run, top issues, bottlenecks per phase type and resource, imbalance,
 * resources, adjustments. top: issues printed (0: all reported). c may be NULL. */
void g10_print_text(FILE *out, const lp_g10_attr *a, const lp_g10_issues *is, uint64_t top, const char *model_from,
                    const g10_contention *c, const lp_g10_path *path);
/* The critical path's resources (path.h) as text, or as the members of a JSON object. */
void g10_print_path(FILE *out, const lp_g10_attr *a, const lp_g10_path *p);
void g10_json_path(lp_jsonw *j, const lp_g10_attr *a, const lp_g10_path *p);

#endif
