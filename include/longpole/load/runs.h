/* runs.h: which of several inputs belong to one run (issue 12, docs/trust.md). Files
 * and folders given together are one trace only when they belong to one run; merging
 * four Spark applications recorded years apart gives a "critical path" of years.
 * Rule: each input file (directories expanded, inputs.h) is loaded on its own to find
 * its time span [tmin, tmax]; inputs whose spans overlap (or touch), directly or through
 * others, are one run; and when any input alone has message halves without their
 * other half (a native trace split by worker), all inputs are one run. (Files of one run — per-worker files, halves of messages, one
 * application's rolling log — overlap in time by construction; independent runs of
 * one application, or unrelated traces, almost never do.) An input that cannot be
 * read on its own or holds no activity joins no run: it is reported to the diagnostics
 * as skipped, unless nothing else is readable.
 * Standard input ("-") cannot be read twice: with it, all inputs are one run.
 * When everything is one run, the run is the paths as given (loading them is exactly
 * what lp_trace_load always did). Cost: every input is loaded twice when there are
 * several.
 */
#ifndef LONGPOLE_LOAD_RUNS_H
#define LONGPOLE_LOAD_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/load/load.h"

typedef struct lp_runs {
    size_t n;              /* runs, in order of start time */
    size_t *first;         /* run r is paths[first[r] .. first[r + 1]) (n + 1 entries) */
    char **paths;          /* owned */
    size_t npaths;         /* slots of paths (for release) */
    int64_t *tmin, *tmax;  /* each run's span (absolute ns; 0, 0 when n == 1 and not computed) */
    size_t skipped;        /* inputs that joined no run (reported to the diagnostics) */
} lp_runs;

/* Group `paths` into runs. With one input (after expansion) or when every input
 * overlaps, out->n == 1 and its paths are `paths`. Skipped inputs are reported to
 * diags (warning, rule import). */
lp_status lp_load_runs(const char *const *paths, size_t npaths, const lp_load_opts *opts, lp_diags *diags,
                       lp_runs *out, lp_error *err);
void lp_runs_release(lp_runs *r);

#endif
