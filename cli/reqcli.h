/* reqcli.h: what the request-log commands (`skew`, `infer`, `requests`) share: the log
 * options (columns, format, time unit, per-host files, attributes, threads, skew),
 * loading with diagnostics printed, and clock-skew correction. */
#ifndef LP_REQCLI_H
#define LP_REQCLI_H

#include "cli.h"
#include "longpole/import/reqlog.h"
#include "longpole/analysis/mystery/skew.h"

typedef struct reqcli {
    lp_reqlog_opts log;        /* parsed log options */
    const char *attrs;         /* --attrs FILE */
    int no_skew;               /* --no-skew */
    const char *reference;     /* --reference HOST */
    unsigned threads;          /* --threads N */
    int quiet, strict;         /* -q, --strict */
    size_t max_diags;          /* --max-errors N */
    char **paths;              /* the logs */
    int npaths;
    int timing;                /* --timing: phase times on stderr */
    double t0, tlast;          /* clock at start and at the last mark */
    char tbuf[512];            /* "load 1.2 s, skew 0.3 s, ..." */
    size_t tlen;
} reqcli;

/* The option text every request-log command prints in its help. */
#define REQCLI_HELP                                                                                   \
    "log options (docs/formats/request-log.md):\n"                                                    \
    "  --columns SPEC     role=column,... roles request, host, time, event, task, seq,\n"             \
    "                     attr.NAME; a column is a header name or a 1-based number\n"                 \
    "                     (default names: request|request_id|req, host, time|timestamp|\n"            \
    "                     ts|time_ns|time_us|time_ms|time_s, event, task, seq)\n"                     \
    "  --format F         csv, tsv or jsonl (default: by content)\n"                                  \
    "  --delimiter C      field separator of CSV (default ',' or tab)\n"                              \
    "  --time-unit U      ns, us, ms, s or iso (default: the time column's suffix, else ns)\n"        \
    "  --header / --no-header   whether the first line names the columns\n"                          \
    "  --host-from-name   one file per host: the host is the file name up to its first '.'\n"        \
    "  --attrs FILE       request attributes: a table with a request column (CSV/TSV/JSONL)\n"       \
    "  --no-skew          do not correct clock skew (default: corrected from RPC patterns)\n"         \
    "  --reference HOST   host whose clock the others are corrected to\n"                             \
    "  --threads N        threads (default: one per CPU)\n"                                           \
    "  --timing           print the time of each phase (load, skew, ...) on stderr\n"                 \
    "  --strict           stop if the input has errors (default: report, skip, go on, exit 4)\n"      \
    "  --max-errors N     diagnostics printed in full (default 20); -q prints only counts\n"

/* If argv[*i] is a log option, consume it (and its value) and return 1; on a bad value
 * print the usage error and set *rc. */
int reqcli_opt(reqcli *o, const char *cmd, int argc, char **argv, int *i, int *rc);
void reqcli_init(reqcli *o);
/* Load the logs (and attributes), print diagnostics; returns 0 or an exit status.
 * *data_errors is set when records were reported. */
int reqcli_load(reqcli *o, const char *cmd, lp_reqlog **rl, int *data_errors);
/* Estimate and apply clock-skew correction unless --no-skew; the estimate is returned
 * in *sk (released by the caller) when sk is not NULL. */
int reqcli_skew(reqcli *o, const char *cmd, lp_reqlog *rl, lp_skew *sk);

/* Mark the end of a phase (for --timing); print the phases and the total. */
void reqcli_mark(reqcli *o, const char *phase);
void reqcli_timing(reqcli *o, const char *cmd);

#endif
