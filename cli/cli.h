/* cli.h: what the longpole commands share: exit codes, option parsing, loading a
 * trace with its diagnostics printed, time and duration formats, progress display.
 * The CLI is a thin layer: every analysis lives in liblongpole. */
#ifndef LP_CLI_H
#define LP_CLI_H

#include <stdint.h>
#include <stdio.h>
#include "longpole/longpole.h"

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
    LP_EXIT_INTERNAL = 70  /* a bug: please report */
};

/* Map a library status to an exit status. */
int cli_exit_for(lp_status st);

/* Options every loading command accepts. */
typedef struct cli_load {
    const char *format;    /* --format */
    int strict;            /* --strict: stop if the input had errors */
    int quiet;             /* -q: do not print diagnostics, only the summary line */
    size_t max_diags;      /* --max-errors N: diagnostics printed in full (default 20) */
    int no_progress;
} cli_load;

/* The loading options of every trace command: --format F, --strict, -q/--quiet,
 * --max-errors N. Returns 1 if argv[*i] is one (consumed with its value), 0 if not,
 * -1 after printing a usage error. */
int cli_load_option(const char *cmd, int argc, char **argv, int *i, cli_load *lo);

/* Load `paths` into a trace; prints diagnostics to stderr. Returns 0 and sets *out, or
 * an exit status. *data_errors is set when records were dropped (the caller exits
 * with LP_EXIT_DATA after producing its output). */
int cli_load_trace(const cli_load *o, char **paths, int npaths, lp_trace **out, int *data_errors);
/* Print the diagnostics summary of a sink to stderr. */
void cli_print_diags(const lp_diags *ds, size_t max);

/* Parse a time: an integer number of ns, or a number with a unit (ns, us, ms, s, m, h);
 * "+X" means X after `base`. Returns 0 on success. */
int cli_parse_time(const char *s, int64_t base, int64_t *out);
/* Parse a duration (same units, no sign). */
int cli_parse_dur(const char *s, int64_t *out);
/* Parse an unsigned integer with optional k/M/G suffix. */
int cli_parse_count(const char *s, uint64_t *out);
int cli_parse_double(const char *s, double *out);

/* "--name=value" or "--name value": if argv[*i] is option `name`, set *val and return 1. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);
/* A flag without value. */
int cli_flag(char **argv, int i, const char *name);

/* The running executable's path (for commands that run it again: serve's analyses):
 * /proc/self/exe where there is one (the very file that is running, even if replaced
 * since), else argv[0] as main() saw it (cli_self_init). */
void cli_self_init(const char *argv0);
const char *cli_self_path(void);

/* Usage error: prints "longpole CMD: msg" and a hint; returns LP_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Runtime error with an lp_error. */
int cli_fail(const char *cmd, const lp_error *err);

/* Progress on stderr when it is a terminal (and not disabled). */
int cli_progress(void *ctx, const char *what, uint64_t done, uint64_t total);
void cli_progress_done(void);
int cli_progress_enabled(void);
void cli_progress_disable(void);
/* Analysis phases (progress.c, issue 6): items done of total (total 0: the phase's name
 * only); _beside: only when standard output is not a terminal (results printed as they
 * come would be garbled by a bar between them). */
void cli_progress_items(const char *what, uint64_t done, uint64_t total);
void cli_progress_beside(const char *what, uint64_t done, uint64_t total);

/* The output of `cp` for a loaded trace (shared by cp and demo). */
typedef struct cli_cp_opts {
    int json;
    uint64_t path_limit, top;
    int windowed;
    int64_t from, to;
} cli_cp_opts;
int cli_cp_print(const lp_trace *t, const cli_cp_opts *o, int data_errors);

/* The command table (main.c): a new command is cli/cmd_NAME.c defining cmd_NAME() and
 * cli_help_NAME[], declared here, plus one line in the table. */
typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    const char *help;                   /* `longpole help NAME` */
    const char *summary;                /* one line for the overview */
} cli_command;
extern const cli_command cli_commands[]; /* ends with a NULL name */

int cmd_cp(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_spans(int argc, char **argv);
extern const char cli_help_spans[];
int cmd_summary(int argc, char **argv);
extern const char cli_help_summary[];
/* `summary` output, shared with `stream` (cmd_summary.c): one window's result as a text
 * block, a compact line or a JSON line, and the totals over windows. */
typedef struct cli_sumfmt {
    int json, compact, timing;
    size_t top;            /* rows per summary in text (0 = all) */
    size_t top_json;       /* rows per summary in JSON (0 = all) */
    int64_t base;          /* text times are printed relative to this instant */
    uint64_t seed;         /* reported in JSON */
} cli_sumfmt;
struct lp_winres;
typedef struct cli_sumtotal cli_sumtotal;
void cli_winres_print(FILE *f, const struct lp_winres *r, const cli_sumfmt *fmt);
cli_sumtotal *cli_sumtotal_new(void);
void cli_sumtotal_add(cli_sumtotal *st, const struct lp_winres *r);
void cli_sumtotal_print(FILE *f, cli_sumtotal *st, const cli_sumfmt *fmt);
void cli_sumtotal_free(cli_sumtotal *st);
int cli_parse_kinds(const char *s, unsigned *kinds); /* --by LIST into (1u << lp_sumkind) bits */
int cmd_stream(int argc, char **argv);
extern const char cli_help_stream[];
int cmd_skew(int argc, char **argv);
int cmd_infer(int argc, char **argv);
int cmd_requests(int argc, char **argv);
int cmd_generate_requests(int argc, char **argv);
extern const char cli_help_skew[], cli_help_infer[], cli_help_requests[];
int cmd_report(int argc, char **argv);
extern const char cli_help_report[];
int cmd_serve(int argc, char **argv); /* issue 6: `serve` and the `stream --serve` hook (cmd_serve.c) */
extern const char cli_help_serve[];
int cli_stream_serve_start(const char *listen, const cli_sumfmt *fmt);
void cli_stream_serve_window(const struct lp_winres *r, const lp_stream_winfo *wi);
void cli_stream_serve_stop(cli_sumtotal *tot);
void cli_stream_winfo_json(FILE *f, const struct lp_winres *r, const lp_stream_winfo *wi); /* cmd_stream.c */
int cmd_export(int argc, char **argv);
extern const char cli_help_export[];
int cli_export_sqlite(int argc, char **argv); /* `export --sqlite` (export_sqlite.c) */
extern const char cli_help_cp[], cli_help_check[], cli_help_convert[], cli_help_generate[], cli_help_info[],
    cli_help_demo[];

/* Print the help of one topic (or the overview if NULL); returns 0 if known. */
int cli_help_topic(FILE *out, const char *topic);

#endif
