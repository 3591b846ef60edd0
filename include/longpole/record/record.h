/* record.h: `longpole record -- CMD`: one recorder for everything longpole captures from
 * a run it starts (or a process it attaches to): kernel events through tracefs, resource
 * samples from /proc (Grade10's monitoring), call-stack samples (CrystalPerf). A user
 * records once and gets every analysis.
 *
 * A recording is a directory: one or more files per source, named after the source,
 * and `manifest.json` (what ran, when, on which host, with which sources and options,
 * and what each source wrote or failed to write). Each source's files are in a format
 * an importer of longpole reads, so a recording is analysed like any other input.
 *
 * Sources plug in through lp_rec_source (one file each in src/record/, one line in the
 * table of src/record/record.c). The recorder starts the command stopped, starts every
 * source on its process id, releases the command, waits for it, stops every source (in
 * reverse order) and writes the manifest. A source runs its own thread if it samples.
 */
#ifndef LONGPOLE_RECORD_RECORD_H
#define LONGPOLE_RECORD_RECORD_H

#include <stdint.h>
#include "longpole/base/status.h"

typedef struct lp_rec_opts {
    const char *dir;          /* output directory (created; must be empty or absent) */
    int64_t period_ns;        /* sampling period of sampling sources (0: each source's default) */
    const char *const *sources; /* names of the sources to run, NULL-terminated; NULL: the defaults */
} lp_rec_opts;

typedef struct lp_rec_source {
    const char *name;         /* "kernel", "monitor", "stacks", ... */
    const char *description;  /* one line for `longpole help record` */
    int by_default;           /* run when the user names no sources */
    /* Can this source run here (permissions, kernel features, tools)? 0 if so, else an
     * error saying why (the recorder reports it and goes on without the source). */
    lp_status (*probe)(lp_error *err);
    /* Start capturing for process `pid` and its threads and children, writing under
     * o->dir. *state is the source's own. */
    lp_status (*start)(void **state, const lp_rec_opts *o, int pid, lp_error *err);
    /* Stop, flush and close; add what was written to the manifest object (a JSON object
     * body, e.g. "\"files\": [\"monitor.csv\"], \"samples\": 1234"; at most `cap` bytes).
     * Frees the state. */
    lp_status (*stop)(void *state, char *manifest, size_t cap, lp_error *err);
} lp_rec_source;

#endif
