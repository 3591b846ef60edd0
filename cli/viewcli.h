/* viewcli.h: what the commands that draw the report's views (`report`, `serve`) share:
 * the views' options (windows, percentiles, rows, seed, title, request-log analysis
 * options), and loading the inputs into a prepared report with diagnostics printed.
 * Invariant: after viewcli_apply, ro and lo point into the viewcli (it must outlive
 * them); the --stratify list is the command's args' (cli_args_release frees it). */
#ifndef LP_VIEWCLI_H
#define LP_VIEWCLI_H

#include "cli.h"
#include "reqcli.h"
#include "longpole/report/report.h"

#define VIEWCLI_MAX 16 /* window sizes, percentiles */

typedef struct viewcli {
    reqcli rq;                    /* the request-log options (reqcli.h) */
    lp_report_opts ro;            /* the views */
    lp_report_load_opts lo;       /* loading and the request-log analyses */
    int64_t windows[VIEWCLI_MAX]; /* --window LIST */
    size_t nwin;
    double pcts[VIEWCLI_MAX];     /* --percentile LIST */
    size_t npct;
    cli_list strat;               /* --stratify SPEC, repeatable */
    const char *title;            /* --title TEXT */
    int model_given;              /* --model was given */
    int format_reqlog;            /* the last --format named a request-log format */
    const char *outliers_arg, *buckets_arg; /* --outliers, --buckets as given (the last one) */
} viewcli;

/* The views' options, on a viewcli (viewcli_opts), and the groups of a command whose
 * args T hold a viewcli at member m: those, then the log options but their --format
 * (the views' --format names trace formats too). */
extern const cli_opt viewcli_opts[];
#define VIEWCLI_GROUPS(T, m)                                                                                           \
    CLI_GROUP("view options:", viewcli_opts, T, m), CLI_GROUP(REQCLI_LOG_TITLE, reqcli_log_opts, T, m.rq),             \
        CLI_GROUP(NULL, reqcli_run_opts, T, m.rq), CLI_GROUP(NULL, reqcli_diag_opts, T, m.rq)

/* Defaults. */
void viewcli_init(viewcli *v);
/* Point ro and lo at the parsed lists, the log options and the progress bar. */
void viewcli_apply(viewcli *v);
/* Load paths (lp_report_load), print the diagnostics, stop under --strict when the
 * input has errors, and build the report with the given sections prepared (NULL: all).
 * On success *in and *r are the caller's; otherwise nothing is left to release.
 * Returns 0 or an exit status (the message printed); *data_errors says whether records
 * were reported. */
int viewcli_load(viewcli *v, const char *cmd, char **paths, int npaths, const char *const *sections,
                 size_t nsections, lp_report_inputs *in, lp_report **r, int *data_errors);

#endif
