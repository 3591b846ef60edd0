/* viewcli.c: the views' options shared by `report` and `serve` (declared once, with the
 * same limits for both commands), and loading inputs into a prepared report
 * (viewcli.h). */
#include "viewcli.h"

#include <stdio.h>
#include <string.h>

void viewcli_init(viewcli *v)
{
    reqcli_init(&v->rq);
    lp_report_opts_init(&v->ro);
}

/* ---- the options ---------------------------------------------------------------------- */

static int set_windows(void *dst, const char *s, char *msg, size_t n)
{
    viewcli *v = dst;
    return cli_parse_durs(s, v->windows, VIEWCLI_MAX, &v->nwin);
}

static int set_pcts(void *dst, const char *s, char *msg, size_t n)
{
    viewcli *v = dst;
    return cli_parse_pcts(s, v->pcts, VIEWCLI_MAX, &v->npct);
}

/* --format F: a trace format, or csv, tsv, jsonl: every input is a request log */
static int set_format(void *dst, const char *s, char *msg, size_t n)
{
    viewcli *v = dst;
    if (strcmp(s, "csv") == 0 || strcmp(s, "tsv") == 0 || strcmp(s, "jsonl") == 0) {
        v->rq.log.format = s[0] == 'c' ? LP_RL_CSV : s[0] == 't' ? LP_RL_TSV : LP_RL_JSONL;
        v->lo.requests = 1;
        v->format_reqlog = 1;
    } else {
        v->lo.format = s;
        v->format_reqlog = 0;
    }
    return 0;
}

#define V(m) CLI_AT(viewcli, m)

const cli_opt viewcli_opts[] = {
    {"--title", .kind = CLI_STR, .arg = "TEXT", V(title), .err = "--title needs a text", .example = "t",
     .help = "the report's title"},
    {"--window", .kind = CLI_FN, .arg = "LIST", CLI_WHOLE(viewcli), .fn = set_windows,
     .err = "--window takes positive durations, comma-separated (e.g. 1s,250ms; at most 16)", .example = "1s,250ms",
     .help = "window sizes of the summaries, e.g. 1s,250ms (default: two\n"
             "sizes giving about 20 and 100 windows)"},
    {"--top", .kind = CLI_COUNT, .arg = "N", V(ro.top), .range = "[1,1000]", .err = "--top takes 1..1000",
     .example = "5", .help = "keys per stacked-bar chart before \"other\" (default 10)"},
    {"--rows", .kind = CLI_COUNT, .arg = "N", V(ro.table_rows), .range = "[1,1000000]",
     .err = "--rows takes 1..1000000", .example = "10", .help = "table rows shown before the rest is folded (default 25)"},
    {"--seed", .kind = CLI_COUNT, .arg = "N", V(ro.seed), .err = "--seed needs a number", .example = "3",
     .help = "seed of the summaries' random paths (default 1)"},
    {"--percentile", .kind = CLI_FN, .arg = "LIST", CLI_WHOLE(viewcli), .fn = set_pcts,
     .err = "--percentile takes percentiles in (0, 100] or 'all', comma-separated (at most 16)",
     .example = "50,p99,all", .help = "span percentiles, e.g. 50,95,99,all (the default)"},
    {"--requests", .kind = CLI_FLAG, V(lo.requests), .help = "every input is a request log (no detection)"},
    {"--format", .kind = CLI_FN, .arg = "F", CLI_WHOLE(viewcli), .fn = set_format,
     .err = "--format needs a value", .example = "csv",
     .help = "trace format (lpt, lptb or an importer's name), or csv, tsv,\njsonl for request logs"},
    {"--model", .kind = CLI_STR, .arg = "FILE", V(lo.model), CLI_SEEN(viewcli, model_given),
     .err = "--model needs a file", .example = "m.json",
     .help = "causal model for request logs (default: inferred from them)"},
    {"--categories", .kind = CLI_STR, .arg = "FILE", V(lo.categories), .err = "--categories needs a file",
     .example = "c.txt", .help = "segment categories (docs/formats/mystery-categories.md)"},
    {"--stratify", .kind = CLI_LIST, .arg = "SPEC", V(strat), .err = "--stratify needs an attribute",
     .example = "browser", .help = "strata for Figure 7 (repeatable; default latency:5 and every\nrequest attribute)"},
    {"--outliers", .kind = CLI_DOUBLE, .arg = "P", V(lo.outliers), .range = "(0,1)", CLI_RAW(viewcli, outliers_arg),
     .err = "--outliers takes a share between 0 and 1", .example = "0.1",
     .help = "share of slowest requests taken as outliers (default 0.05)"},
    {"--buckets", .kind = CLI_COUNT, .arg = "N", V(lo.buckets), .range = "[1,1000]", CLI_RAW(viewcli, buckets_arg),
     .err = "--buckets takes 1..1000", .example = "4", .help = "what-if slack buckets (default 20)"},
    CLI_END,
};

#undef V

/* ---- loading ---------------------------------------------------------------------------- */

void viewcli_apply(viewcli *v)
{
    v->ro.windows = v->nwin ? v->windows : NULL;
    v->ro.nwindows = v->nwin;
    if (v->npct) {
        v->ro.percentiles = v->pcts;
        v->ro.npercentiles = v->npct;
    }
    v->ro.threads = v->rq.threads;
    v->lo.reqlog = &v->rq.log;
    v->lo.attrs = v->rq.attrs;
    v->lo.no_skew = v->rq.no_skew;
    v->lo.reference = v->rq.reference;
    v->lo.threads = v->rq.threads;
    if (v->strat.n) {
        v->lo.stratify = v->strat.v;
        v->lo.nstratify = v->strat.n;
    }
    if (cli_progress_enabled()) {
        v->lo.progress = cli_progress;
        v->ro.progress = cli_progress;
    }
}

int viewcli_load(viewcli *v, const char *cmd, char **paths, int npaths, const char *const *sections,
                 size_t nsections, lp_report_inputs *in, lp_report **r, int *data_errors)
{
    size_t maxd = v->rq.max_diags ? v->rq.max_diags : 20;
    lp_diags ds;
    lp_diags_init(&ds, v->rq.quiet ? 0 : maxd);
    lp_error err;
    lp_error_clear(&err);
    *r = NULL;
    lp_status st = lp_report_load(in, (const char *const *)paths, (size_t)npaths, &v->lo, &ds, &err);
    cli_progress_done();
    cli_print_diags(&ds, v->rq.quiet ? 0 : maxd);
    *data_errors = ds.nerrors > 0;
    lp_diags_release(&ds);
    if (st)
        return cli_fail(cmd, &err);
    reqcli_mark(&v->rq, "load+analyse inputs");
    if (*data_errors && v->rq.strict) {
        fprintf(stderr, "longpole %s: the input has errors and --strict was given; stopping\n", cmd);
        lp_report_inputs_release(in);
        return LP_EXIT_DATA;
    }
    in->data.title = v->title;
    if (!(st = lp_report_new(r, &in->data, &v->ro, &err)))
        st = lp_report_prepare(*r, sections, nsections, &err);
    cli_progress_done();
    reqcli_mark(&v->rq, "analyse");
    if (st) {
        lp_report_free(*r);
        *r = NULL;
        lp_report_inputs_release(in);
        return cli_fail(cmd, &err);
    }
    return 0;
}
