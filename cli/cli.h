/* cli.h: what the longpole commands share: exit codes, the option tables (opt.h) and
 * the loading options, loading a trace with its diagnostics printed, time and duration
 * formats, progress display, and the table of commands.
 * The CLI is a thin layer: every analysis lives in liblongpole. */
#ifndef LP_CLI_H
#define LP_CLI_H

#include <stdint.h>
#include <stdio.h>
#include "longpole/longpole.h"
#include "opt.h"

/* Exit statuses (documented in `longpole help exit-codes`). */
enum {
    LP_EXIT_OK = 0,        /* success; for `check`: the trace is clean */
    LP_EXIT_FINDINGS = 1,  /* `check`: the trace breaks an instrumentation property or a rule */
    LP_EXIT_USAGE = 2,     /* bad command line */
    LP_EXIT_IO = 3,        /* a file could not be opened, read or written */
    LP_EXIT_DATA = 4,      /* the input broke rules of the format; bad records were skipped and reported */
    LP_EXIT_FORMAT = 5,    /* the input is not a readable trace (unknown format, corrupt, bad checksum) */
    LP_EXIT_NOMEM = 6,     /* out of memory */
    LP_EXIT_LIMIT = 7,     /* a capacity limit was exceeded */
    LP_EXIT_INDEX = 8,     /* an index file is stale or foreign to its traces (kcli.h) */
    LP_EXIT_EMPTY = 9,     /* the input or the chosen window holds no activity: nothing to analyse */
    LP_EXIT_INTERNAL = 70  /* a bug: please report */
};

/* The trace's counts and extent as JSON members (workers, activities, gaps, messages,
 * skewed_messages, start, end): `info` and `cp --json` write the same ones. */
void cli_json_trace_counts(lp_jsonw *j, const lp_trace *t);

/* Map a library status to an exit status. */
int cli_exit_for(lp_status st);

/* ---- refusing an analysis of nothing (empty.c, docs/trust.md) --------------------------- */

/* If t holds no activity of the input (filled gaps do not count), say so on stderr and
 * return LP_EXIT_EMPTY; else 0. */
int cli_refuse_empty(const char *cmd, const lp_trace *t);
/* If the window [from, to] (absolute ns) holds no activity of t (it lies outside the
 * trace, or only gaps or nothing fall in it; w is the window's projection, or NULL to
 * judge by the bounds only), say so and return LP_EXIT_EMPTY; else 0. */
int cli_refuse_window(const char *cmd, const lp_trace *t, const lp_trace *w, int64_t from, int64_t to);

/* ---- loading a trace (load.c) ---------------------------------------------------------- */

/* The loading options of the trace commands. */
typedef struct cli_load {
    const char *format;    /* --format */
    int strict;            /* --strict: stop if the input had errors */
    int quiet;             /* -q: do not print diagnostics, only the summary line */
    size_t max_diags;      /* --max-errors N: diagnostics printed in full (0: the default, 20) */
    int no_progress;
    int merge;             /* --merge: several inputs are one trace even when they are separate runs */
} cli_load;

/* Their tables, on a cli_load: --format F; --strict, -q/--quiet, --max-errors N. */
extern const cli_opt cli_format_opts[], cli_diag_opts[];
/* Both, as the groups of a command whose args T hold a cli_load at member m. */
#define CLI_LOAD_GROUPS(T, m)                                                                                          \
    CLI_GROUP("loading options:", cli_format_opts, T, m), CLI_GROUP(NULL, cli_diag_opts, T, m)

/* Load `paths` into a trace; prints diagnostics to stderr. Returns 0 and sets *out, or
 * an exit status. *data_errors is set when records were dropped (the caller exits
 * with LP_EXIT_DATA after producing its output). */
int cli_load_trace(const cli_load *o, char **paths, int npaths, lp_trace **out, int *data_errors);
/* The runs among `paths` (runs.h): 0 and *runs filled (release it), or an exit
 * status. Inputs left out are reported on stderr when there are several runs. */
int cli_find_runs(const cli_load *o, char **paths, int npaths, lp_runs *runs);
/* Print the diagnostics summary of a sink to stderr. */
void cli_print_diags(const lp_diags *ds, size_t max);

/* ---- values (values.c) ----------------------------------------------------------------- */

/* Parse a time: an integer number of ns, or a number with a unit (ns, us, ms, s, m, h);
 * "+X" means X after `base`. Returns 0 on success. */
int cli_parse_time(const char *s, int64_t base, int64_t *out);
/* Parse a duration (same units, no sign). */
int cli_parse_dur(const char *s, int64_t *out);
/* Parse an unsigned integer with optional k/M/G suffix. */
int cli_parse_count(const char *s, uint64_t *out);
int cli_parse_double(const char *s, double *out);
/* Comma-separated percentiles in (0, 100] ("all" = 100, a leading p allowed), at most
 * max; comma-separated positive durations. 0, or -1 if any is bad or none given. */
int cli_parse_pcts(const char *s, double *out, size_t max, size_t *n);
int cli_parse_durs(const char *s, int64_t *out, size_t max, size_t *n);

/* The kind of a trace written to `out`: binary if --to says so (to: 0 lpt, 1 lptb, -1
 * by the name), else if the name ends in .lptb before any .gz or .zst, which set the
 * compression. */
int cli_output_kind(const char *out, int to, lp_compression *comp);

/* ---- messages (common.c) ----------------------------------------------------------------- */

/* Usage error: prints "longpole CMD: msg" and a hint; returns LP_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Runtime error with an lp_error. */
int cli_fail(const char *cmd, const lp_error *err);

/* The running executable's path (for commands that run it again: serve's analyses):
 * /proc/self/exe where there is one (the very file that is running, even if replaced
 * since), else argv[0] as main() saw it (cli_self_init). */
void cli_self_init(const char *argv0);
const char *cli_self_path(void);

/* ---- progress (progress.c) ------------------------------------------------------------- */

/* Progress on stderr when it is a terminal (and not disabled). */
int cli_progress(void *ctx, const char *what, uint64_t done, uint64_t total);
void cli_progress_done(void);
int cli_progress_enabled(void);
void cli_progress_disable(void);
/* Analysis phases (issue 6): items done of total (total 0: the phase's name only);
 * _beside: only when standard output is not a terminal (results printed as they come
 * would be garbled by a bar between them). */
void cli_progress_items(const char *what, uint64_t done, uint64_t total);
void cli_progress_beside(const char *what, uint64_t done, uint64_t total);

/* ---- shared outputs ------------------------------------------------------------------------ */

/* The output of `cp` for a loaded trace (cp_print.c; shared by cp and demo). */
typedef struct cli_cp_opts {
    int json;
    uint64_t path_limit, top;
    int windowed;
    int64_t from, to;
    const lp_runs *runs;   /* several runs analysed one by one (runs.h): this is run `run` of them; or NULL */
    size_t run;
} cli_cp_opts;
int cli_cp_print(const lp_trace *t, const cli_cp_opts *o, int data_errors);

/* ---- the commands (commands.c) ------------------------------------------------------------ */

/* A new command is cli/cmd_NAME.c defining cmd_NAME() and its option table and help,
 * cli_spec_NAME (opt.h), declared here, plus one line in the table. */
typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    const char *summary;                /* one line for the overview */
    const cli_spec *specs[4];           /* its forms, NULL-terminated: [0] the command (its
                                         * help starts with the usage of every form), then
                                         * its modes (`stream --emit`) */
} cli_command;
extern const cli_command cli_commands[]; /* ends with a NULL name */

int cmd_cp(int argc, char **argv);
int cli_cp_thread(int argc, char **argv); /* `cp --thread` (cmd_kcp.c): kernel traces */
int cmd_index(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_spans(int argc, char **argv);
int cmd_skew(int argc, char **argv);
int cmd_infer(int argc, char **argv);
int cmd_requests(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cli_export_sqlite(int argc, char **argv); /* `export --sqlite` (export_sqlite.c) */
int cmd_generate(int argc, char **argv);
int cli_generate_requests(int argc, char **argv); /* `generate requests` (cmd_genreq.c) */
int cmd_demo(int argc, char **argv);
int cmd_classify(int argc, char **argv);
int cmd_resources(int argc, char **argv);
int cmd_whatif(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_grade10(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_dist(int argc, char **argv); /* `longpole dist` (cmd_dist.c, distcli.h) */
void cli_dist_help(FILE *out);        /* the options of every `dist` subcommand */

extern const cli_spec cli_spec_cp, cli_spec_check, cli_spec_convert, cli_spec_info, cli_spec_summary,
    cli_spec_stream, cli_spec_stream_emit, cli_spec_spans, cli_spec_skew, cli_spec_infer, cli_spec_requests,
    cli_spec_report, cli_spec_serve, cli_spec_export, cli_spec_export_sqlite, cli_spec_generate,
    cli_spec_generate_requests, cli_spec_demo, cli_spec_help, cli_spec_classify,
    cli_spec_resources, cli_spec_whatif, cli_spec_record, cli_spec_monitor, cli_spec_grade10, cli_spec_cp_thread,
    cli_spec_index, cli_spec_dist;

/* Print the help of one topic (or the overview if NULL); returns 0 if known. */
int cli_help_topic(FILE *out, const char *topic);
/* The help of a command: each of its forms (cli_spec_print). */
void cli_command_help(FILE *out, const cli_command *c);

#endif
