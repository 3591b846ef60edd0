/* viewcli.h: what the commands that draw the report's views (`report`, `serve`) share:
 * the views' options (windows, percentiles, rows, seed, title, request-log analysis
 * options), and loading the inputs into a prepared report with diagnostics printed.
 * Invariant: after viewcli_apply, ro and lo point into the viewcli (it must outlive
 * them); viewcli_free releases only what viewcli_init allocated. */
#ifndef LP_VIEWCLI_H
#define LP_VIEWCLI_H

#include "cli.h"
#include "reqcli.h"
#include "longpole/report/report.h"

#define VIEWCLI_MAX 16 /* window sizes, percentiles */

typedef struct viewcli {
    reqcli rq;                    /* the request-log options (reqcli_opt) */
    lp_report_opts ro;            /* the views */
    lp_report_load_opts lo;       /* loading and the request-log analyses */
    int64_t windows[VIEWCLI_MAX]; /* --window LIST */
    size_t nwin;
    double pcts[VIEWCLI_MAX];     /* --percentile LIST */
    size_t npct;
    const char **strat;           /* --stratify SPEC, repeatable */
    uint32_t nstrat;
    const char *title;            /* --title TEXT */
    int model_given;              /* --model was given */
    int format_reqlog;            /* the last --format named a request-log format */
    const char *format_arg;       /* the value of the --format just parsed (its caller may clear it) */
    const char *outliers_arg, *buckets_arg; /* --outliers, --buckets as given (the last one) */
} viewcli;

/* The option text `report` and `serve` print for these options. */
#define VIEWCLI_HELP                                                                                    \
    "  --title TEXT       the report's title\n"                                                         \
    "  --window LIST      window sizes of the summaries, e.g. 1s,250ms (default: two\n"                 \
    "                     sizes giving about 20 and 100 windows)\n"                                     \
    "  --top N            keys per stacked-bar chart before \"other\" (default 10)\n"                   \
    "  --rows N           table rows shown before the rest is folded (default 25)\n"                    \
    "  --seed N           seed of the summaries' random paths (default 1)\n"                            \
    "  --percentile LIST  span percentiles, e.g. 50,95,99,all (the default)\n"                          \
    "  --requests         every input is a request log (no detection)\n"                                \
    "  --format F         trace format (lpt, lptb or an importer's name), or csv, tsv,\n"               \
    "                     jsonl for request logs\n"                                                     \
    "  --model FILE       causal model for request logs (default: inferred from them)\n"                \
    "  --categories FILE  segment categories (docs/formats/mystery-categories.md)\n"                    \
    "  --stratify SPEC    strata for Figure 7 (repeatable; default latency:5 and every\n"               \
    "                     request attribute)\n"                                                         \
    "  --outliers P       share of slowest requests taken as outliers (default 0.05)\n"                 \
    "  --buckets N        what-if slack buckets (default 20)\n"

/* Defaults; room for argc --stratify options. Returns 0 or LP_EXIT_NOMEM. */
int viewcli_init(viewcli *v, int argc);
void viewcli_free(viewcli *v);
/* If argv[*i] is one of the views' options (not the log options of reqcli_opt), consume
 * it and its value and return 1; on a bad value print the usage error of cmd and set
 * *rc. Returns 0 for any other argument. */
int viewcli_opt(viewcli *v, const char *cmd, int argc, char **argv, int *i, int *rc);
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
