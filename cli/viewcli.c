/* viewcli.c: the views' options shared by `report` and `serve`, and loading inputs into
 * a prepared report (viewcli.h). Option values are checked here, once, with the same
 * limits for both commands. */
#include "viewcli.h"

#include <stdio.h>
#include <string.h>

int viewcli_init(viewcli *v, int argc)
{
    memset(v, 0, sizeof *v);
    reqcli_init(&v->rq);
    lp_report_opts_init(&v->ro);
    v->strat = lp_calloc((size_t)argc + 1, sizeof *v->strat);
    return v->strat ? 0 : LP_EXIT_NOMEM;
}

void viewcli_free(viewcli *v)
{
    lp_free(v->strat);
    v->strat = NULL;
}

/* Split "a,b,c" into positive durations. */
static int parse_windows(const char *s, int64_t *out, size_t max, size_t *n)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int64_t d;
        if (*n == max || cli_parse_dur(tok, &d) || d <= 0)
            return -1;
        out[(*n)++] = d;
    }
    return *n ? 0 : -1;
}

/* Split "50,p99,all" into percentiles in (0, 100]. */
static int parse_pcts(const char *s, double *out, size_t max, size_t *n)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double p;
        if (strcmp(tok, "all") == 0)
            p = 100;
        else if (cli_parse_double(tok[0] == 'p' || tok[0] == 'P' ? tok + 1 : tok, &p))
            return -1;
        if (!(p > 0 && p <= 100) || *n == max)
            return -1;
        out[(*n)++] = p;
    }
    return *n ? 0 : -1;
}

int viewcli_opt(viewcli *v, const char *cmd, int argc, char **argv, int *i, int *rc)
{
    const char *s;
    uint64_t n;
    double x;
    const char *err = NULL;
    if (cli_opt(argc, argv, i, "--title", &v->title)) {
        if (!v->title)
            err = "--title needs a text";
    } else if (cli_opt(argc, argv, i, "--window", &s)) {
        if (!s || parse_windows(s, v->windows, VIEWCLI_MAX, &v->nwin))
            err = "--window takes positive durations, comma-separated (e.g. 1s,250ms; at most 16)";
    } else if (cli_opt(argc, argv, i, "--percentile", &s)) {
        if (!s || parse_pcts(s, v->pcts, VIEWCLI_MAX, &v->npct))
            err = "--percentile takes percentiles in (0, 100] or 'all', comma-separated (at most 16)";
    } else if (cli_opt(argc, argv, i, "--top", &s)) {
        if (!s || cli_parse_count(s, &n) || n == 0 || n > 1000)
            err = "--top takes 1..1000";
        else
            v->ro.top = (uint32_t)n;
    } else if (cli_opt(argc, argv, i, "--rows", &s)) {
        if (!s || cli_parse_count(s, &n) || n == 0 || n > 1000000)
            err = "--rows takes 1..1000000";
        else
            v->ro.table_rows = (uint32_t)n;
    } else if (cli_opt(argc, argv, i, "--seed", &s)) {
        if (!s || cli_parse_count(s, &n))
            err = "--seed needs a number";
        else
            v->ro.seed = n;
    } else if (cli_flag(argv, *i, "--requests")) {
        v->lo.requests = 1;
    } else if (cli_opt(argc, argv, i, "--format", &s)) {
        v->format_arg = s;
        if (!s) {
            err = "--format needs a value";
        } else if (strcmp(s, "csv") == 0 || strcmp(s, "tsv") == 0 || strcmp(s, "jsonl") == 0) {
            v->rq.log.format = s[0] == 'c' ? LP_RL_CSV : s[0] == 't' ? LP_RL_TSV : LP_RL_JSONL;
            v->lo.requests = 1;
            v->format_reqlog = 1;
        } else {
            v->lo.format = s;
            v->format_reqlog = 0;
        }
    } else if (cli_opt(argc, argv, i, "--model", &v->lo.model)) {
        if (!v->lo.model)
            err = "--model needs a file";
        v->model_given = 1;
    } else if (cli_opt(argc, argv, i, "--categories", &v->lo.categories)) {
        if (!v->lo.categories)
            err = "--categories needs a file";
    } else if (cli_opt(argc, argv, i, "--stratify", &s)) {
        if (!s)
            err = "--stratify needs an attribute";
        else
            v->strat[v->nstrat++] = s;
    } else if (cli_opt(argc, argv, i, "--outliers", &s)) {
        if (!s || cli_parse_double(s, &x) || !(x > 0 && x < 1))
            err = "--outliers takes a share between 0 and 1";
        else
            v->lo.outliers = x;
        v->outliers_arg = s;
    } else if (cli_opt(argc, argv, i, "--buckets", &s)) {
        if (!s || cli_parse_count(s, &n) || n < 1 || n > 1000)
            err = "--buckets takes 1..1000";
        else
            v->lo.buckets = (uint32_t)n;
        v->buckets_arg = s;
    } else {
        return 0;
    }
    if (err)
        *rc = cli_usage(cmd, "%s", err);
    return 1;
}

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
    if (v->nstrat) {
        v->lo.stratify = v->strat;
        v->lo.nstratify = v->nstrat;
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
