/* record.h: `longpole record -- CMD`: one recorder for everything longpole captures from
 * a run it starts (or a process it attaches to): kernel events through tracefs, resource
 * samples from /proc (Grade10's monitoring), call-stack samples (CrystalPerf). A user
 * records once and gets every analysis.
 *
 * A recording is a directory: one or more files per source, named after the source,
 * and `manifest.json` (what ran, when, on which host, with which sources and options,
 * the clocks, how the command ended, and what each source wrote or failed to write;
 * docs/record.md). Each source's files are in a format an importer of longpole reads,
 * so a recording is analysed like any other input.
 *
 * Sources plug in through lp_rec_source (one file each in src/record/, one line in the
 * table of src/record/record.c). The recorder starts the command stopped (it waits on
 * a pipe before exec), starts every source on its process id, releases the command,
 * waits for it to exit (without reaping it, so sources can take a last look at the
 * finished process), stops every source (in reverse order), reaps the command and
 * writes the manifest. A source runs its own thread if it samples.
 *
 * Signals: while a command runs, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to the
 * recorder with kill(2) are forwarded to the command; the same signals typed at the
 * terminal already reach the command (same process group) and are not sent twice; the
 * recorder itself keeps running until the command ends, then writes the manifest. The
 * previous handlers are restored afterwards. One recording at a time per process.
 */
#ifndef LONGPOLE_RECORD_RECORD_H
#define LONGPOLE_RECORD_RECORD_H

#include <signal.h>
#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/base/jsonw.h"

typedef struct lp_rec_opts {
    const char *dir;          /* output directory (created; must be empty or absent) */
    int64_t period_ns;        /* sampling period of sampling sources (0: each source's default) */
    const char *const *sources; /* names of the sources to run, NULL-terminated; NULL: the defaults */
    const char *host;         /* the host name sources write (NULL: this machine's node name) */
    volatile sig_atomic_t *stop; /* optional: set non-zero (e.g. by the caller's signal handler) to end an
                                    attached recording (lp_record_attach); a started command ends by itself */
    /* Set by the recorder for the sources (whatever the caller put there is ignored): */
    int64_t mono_to_real_ns;  /* CLOCK_REALTIME = CLOCK_MONOTONIC + this, measured once at the start */
    const char *hostname;     /* the host name in effect (o->host or the node name) */
} lp_rec_opts;

typedef struct lp_rec_source {
    const char *name;         /* "kernel", "monitor", "stacks", ... */
    const char *description;  /* one line for `longpole help record` */
    int by_default;           /* run when the user names no sources */
    /* Can this source run here (permissions, kernel features, tools)? 0 if so, else an
     * error saying why (the recorder reports it and goes on without the source, unless
     * the user named it: then the recording is refused before the command runs). */
    lp_status (*probe)(lp_error *err);
    /* Start capturing for process `pid` and its threads and children, writing under
     * o->dir. *state is the source's own. The process exists but has not run its
     * command yet (or, attached, is running). */
    lp_status (*start)(void **state, const lp_rec_opts *o, int pid, lp_error *err);
    /* Stop, flush and close; add what was written to the source's object in the manifest
     * (`m` is inside that object: write members, e.g. lp_jsonw_key(m, "files"), ...;
     * the recorder has written "name" and "status"). Frees the state, also on error.
     * Called after the process exited but before it is reaped (a command the recorder
     * started), so /proc still shows its final counters. */
    lp_status (*stop)(void *state, lp_jsonw *m, lp_error *err);
} lp_rec_source;

/* How a recording went. */
typedef struct lp_rec_result {
    int pid;                  /* the recorded process */
    int exit_code;            /* the command's exit status, 128 + the signal if a signal ended it; -1 attached */
    int signal;               /* the signal that ended it, or 0 */
    double user_s, sys_s;     /* CPU time of the command and the descendants it waited for (getrusage) */
    int64_t start_ns, end_ns; /* CLOCK_REALTIME, from releasing the command to its end */
    unsigned sources_ok;      /* sources that ran and stopped cleanly */
    unsigned sources_failed;  /* sources skipped (probe), or that failed to start or stop (see the manifest) */
} lp_rec_result;

/* The sources of this build, NULL-terminated; by name (NULL if unknown). */
const lp_rec_source *const *lp_rec_sources(void);
const lp_rec_source *lp_rec_source_find(const char *name);

/* Run argv (argv[0] searched in PATH) under recording into o->dir. LP_OK when the
 * recording was made, whatever the command's exit status (in res); an error when the
 * directory cannot be made, a named source cannot run, or the command cannot be started
 * (then no manifest is claimed complete: it says why). */
lp_status lp_record_run(const lp_rec_opts *o, char *const argv[], lp_rec_result *res, lp_error *err);
/* Record a running process until it exits or *o->stop becomes non-zero (or SIGINT or
 * SIGTERM reaches the recorder when o->stop is NULL). */
lp_status lp_record_attach(const lp_rec_opts *o, int pid, lp_rec_result *res, lp_error *err);

#endif
