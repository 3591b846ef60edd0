/* reqcli.h: what the request-log commands (`skew`, `infer`, `requests`, and `report`,
 * `serve`, `export --sqlite` for request logs) share: the log options (columns, format,
 * time unit, per-host files, attributes, threads, skew), loading with diagnostics
 * printed, and clock-skew correction. */
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

/* The log options, declared once, on a reqcli (the groups of a command whose args T hold
 * one at member m): how the logs are read and skew corrected (reqcli_log_opts); their
 * --format (csv, tsv, jsonl: reqcli_format_opts, left out by commands whose --format
 * names more); --threads and --timing (reqcli_run_opts); --strict, -q and --max-errors
 * (reqcli_diag_opts). */
extern const cli_opt reqcli_log_opts[], reqcli_format_opts[], reqcli_run_opts[], reqcli_diag_opts[];
#define REQCLI_LOG_TITLE "log options (docs/formats/request-log.md):"
#define REQCLI_GROUPS(T, m)                                                                                            \
    CLI_GROUP(REQCLI_LOG_TITLE, reqcli_log_opts, T, m), CLI_GROUP(NULL, reqcli_format_opts, T, m),                      \
        CLI_GROUP(NULL, reqcli_run_opts, T, m), CLI_GROUP(NULL, reqcli_diag_opts, T, m)

/* The model options of the commands that analyse requests over a causal model
 * (`requests`, `export --sqlite`): the model file (else inferred from the logs, with
 * --filter), the categories, the outlier share and the what-if buckets. */
typedef struct reqcli_model {
    const char *model, *cats, *filter;
    double share;              /* --outliers (default 0.05) */
    uint64_t buckets;          /* --buckets (default 20) */
} reqcli_model;
extern const cli_opt reqcli_model_opts[];
void reqcli_model_init(reqcli_model *m);

/* Defaults (and the clock of --timing starts). */
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
