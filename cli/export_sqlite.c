/* export_sqlite.c: `longpole export --sqlite OUT.db INPUT...` (called by cmd_export.c):
 * load an input set (an activity trace, request logs or span traces, by content or
 * --input), run its analyses and write everything as SQLite tables
 * (sqlite_export.h, docs/formats/sqlite.md). Re-exporting the same inputs replaces
 * their run. Loading prints diagnostics as the other commands do; exit 4 when the
 * input had errors (the export is still written). */
#include "reqcli.h"
#include "summary.h"
#include "longpole/export/sqlite_export.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/analysis/mystery/reqstats.h"
#include "longpole/model/span.h"
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/load/load.h"
#include "longpole/load/inputs.h"
#include "longpole/report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef enum kind { K_AUTO = 0, K_TRACE, K_REQUESTS, K_SPANS } kind;
static const char *const kind_names[] = {"auto", "trace", "requests", "spans"};

static int is_span_format(const char *name)
{
    return name && (strcmp(name, "jaeger") == 0 || strcmp(name, "zipkin") == 0 || strcmp(name, "otlp") == 0);
}

/* The kind of the first input, by content, as `report` and `serve` tell them apart
 * (lp_report_detect; a directory: its first file). */
static kind detect(const char *path)
{
    lp_input_item *items = NULL;
    size_t nitems = 0;
    lp_error err;
    lp_report_kind rk = LP_RK_TRACE;
    if (strcmp(path, "-") == 0)
        return K_TRACE; /* standard input cannot be peeked and re-read: a trace */
    if (lp_inputs_expand(&path, 1, &items, &nitems, &err) == LP_OK && nitems && items[0].kind == LP_INPUT_FILE)
        lp_report_detect(items[0].path, &rk, &err);
    lp_inputs_free(items, nitems);
    return rk == LP_RK_REQLOG ? K_REQUESTS : rk == LP_RK_SPANS ? K_SPANS : K_TRACE;
}

/* The options as given (everything but the inputs and the output), as a JSON array. */
static char *options_json(int argc, char **argv, char **paths, int npaths)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    lp_jsonw j;
    lp_jsonw_init(&j, f, 0);
    lp_jsonw_arr(&j);
    for (int i = 1; i < argc; i++) {
        int is_path = 0;
        for (int k = 0; k < npaths && !is_path; k++)
            is_path = argv[i] == paths[k];
        if (strcmp(argv[i], "--sqlite") == 0) {
            i++;
            continue;
        }
        if (!is_path && strncmp(argv[i], "--sqlite=", 9) != 0)
            lp_jsonw_str(&j, argv[i]);
    }
    lp_jsonw_arr_end(&j);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

typedef struct sqlite_args {
    cli_load lo;              /* --format (trace importer, span format, or csv/tsv/jsonl), --strict, -q, --max-errors */
    reqcli ro;                /* the log options */
    reqcli_model mo;          /* --model, --categories, --filter, --outliers, --buckets */
    const char *out;          /* --sqlite */
    int input;                /* --input: -1 by content, else the kind - 1 */
    const char *from_s, *to_s;
    double pct[32];
    size_t npct;
    lp_sqlite_opts so;
    int request_only;         /* request-log options given */
} sqlite_args;

static void sqlite_init(void *p)
{
    sqlite_args *a = p;
    reqcli_init(&a->ro);
    reqcli_model_init(&a->mo);
    lp_sqlite_opts_init(&a->so);
    a->input = -1;
}

/* --sqlite OUT, once */
static int set_out(void *dst, const char *v, char *msg, size_t n)
{
    const char **out = dst;
    if (*out) {
        snprintf(msg, n, "--sqlite given twice");
        return -1;
    }
    *out = v;
    return 0;
}

static int set_kinds(void *dst, const char *v, char *msg, size_t n) { return cli_parse_kinds(v, dst); }

static int set_pcts(void *dst, const char *v, char *msg, size_t n)
{
    sqlite_args *a = dst;
    return cli_parse_pcts(v, a->pct, 32, &a->npct);
}

static const char *const input_kinds[] = {"trace", "requests", "spans", NULL};

#define A(m) CLI_AT(sqlite_args, m)

static const cli_opt sqlite_opts[] = {
    {"--sqlite", .kind = CLI_FN, .arg = "FILE", A(out), .fn = set_out, .err = "--sqlite needs an output file",
     .example = "x.db",
     .help = "a SQLite database (docs/formats/sqlite.md) of everything loaded and\n"
             "every analysis: workers, activities, messages, attributes, critical\n"
             "path, breakdowns, checks, windows with N, sum of CP and summaries;\n"
             "request logs: hosts and skew, requests, events, segments, model\n"
             "relationships, per-request paths and slack, aggregates; spans: traces,\n"
             "spans, critical-path sections, percentile tables (and their activity\n"
             "graph). One run per input set: exporting the same inputs again replaces\n"
             "their run. Not with other kinds."},
    {"--input", .kind = CLI_CHOICE, .arg = "K", A(input), .choices = input_kinds,
     .err = "--input takes trace, requests or spans", .example = "trace",
     .help = "trace, requests or spans (default: by content)"},
    {"--from", .kind = CLI_TIME, .arg = "T", A(from_s), .err = "--from needs a time", .example = "0", .help = ""},
    {"--to", .kind = CLI_TIME, .arg = "T", A(to_s), .err = "--to needs a time", .example = "+1s",
     .help = "traces and spans: export the window [T, T'] only (T is ns or has a\n"
             "unit; +T is after the trace start)"},
    {"--window", .kind = CLI_DUR, .arg = "D", A(so.window), .range = "(0,)",
     .err = "--window needs a positive duration (e.g. 1s)", .example = "1s", .help = ""},
    {"--slide", .kind = CLI_DUR, .arg = "D", A(so.slide), .range = "(0,)", .err = "--slide needs a positive duration",
     .example = "500ms", .help = ""},
    {"--by", .kind = CLI_FN, .arg = "LIST", A(so.kinds), .fn = set_kinds,
     .err = "--by takes activity, worker, operator, comm (comma-separated) or all", .example = "all", .help = ""},
    {"--seed", .kind = CLI_COUNT, .arg = "N", A(so.seed), .err = "--seed needs a number", .example = "3", .help = ""},
    {"--no-path", .kind = CLI_FLAG, A(so.no_path), .help = ""},
    {"--no-checks", .kind = CLI_FLAG, A(so.no_checks),
     .help = "windows, as `summary` (default: the whole trace as one window)"},
    {"--no-windows", .kind = CLI_FLAG, A(so.no_windows), .help = "no window tables"},
    {"--edge-cp", .kind = CLI_FLAG, A(so.edge_cp), .help = "also every activity's and message's CP per window"},
    {"--threads", .kind = CLI_COUNT, .arg = "N", A(so.threads), .range = "[0,64]",
     .err = "--threads takes 0..64 (0 = one per CPU)", .example = "2", .help = "analysis threads (0 = one per CPU)"},
    {"--percentile", "--percentiles", .kind = CLI_FN, .arg = "LIST", CLI_WHOLE(sqlite_args), .fn = set_pcts,
     .err = "--percentile takes a list like 50,95,99,all (each in (0, 100])", .example = "50,all",
     .help = "spans: percentiles of the span tables (default 50,95,99,all)"},
    {"--no-request-paths", .kind = CLI_FLAG, A(so.no_request_paths),
     .help = "requests: no request_segments (one row per segment per request)"},
    {"--no-events", .kind = CLI_FLAG, A(so.no_events), .help = "requests: no log_events (one row per log line)"},
    {"--timing", .kind = CLI_FLAG, A(ro.timing), CLI_SEEN(sqlite_args, request_only),
     .help = "requests: print the time of each phase (load, skew, ...) on stderr"},
    CLI_END,
};

#undef A

const cli_spec cli_spec_export_sqlite = {
    .cmd = "export",
    .groups = {CLI_OWN("--sqlite and its options:", sqlite_opts), CLI_LOAD_GROUPS(sqlite_args, lo),
               CLI_GROUP_SEEN("request logs (as `longpole requests`):", reqcli_model_opts, sqlite_args, mo,
                              request_only),
               CLI_GROUP_SEEN(NULL, reqcli_log_opts, sqlite_args, ro, request_only)},
    .size = sizeof(sqlite_args),
    .init = sqlite_init,
};

/* ---- the three input kinds --------------------------------------------------------------- */

static int export_trace(lp_sqlite *db, sqlite_args *x, const cli_load *lo, char **paths, int npaths, int *data_errors,
                        lp_diags *quiet_diags)
{
    lp_error err;
    lp_error_clear(&err);
    lp_trace *t = NULL;
    int rc;
    if (quiet_diags) { /* spans: the files were read (and their problems printed) once already */
        lp_load_opts lopt;
        memset(&lopt, 0, sizeof lopt);
        lopt.format = x->lo.format;
        if (cli_progress_enabled())
            lopt.progress = cli_progress;
        lp_status st = lp_trace_load((const char *const *)paths, (size_t)npaths, &lopt, quiet_diags, &t, &err);
        cli_progress_done();
        if (st)
            return cli_fail("export", &err);
    } else {
        if ((rc = cli_load_trace(lo, paths, npaths, &t, data_errors)))
            return rc;
    }
    int64_t from = 1, to = 0; /* from > to: the whole trace */
    lp_trace *wt = NULL;
    if (x->from_s || x->to_s) {
        from = t->tmin, to = t->tmax;
        if ((x->from_s && cli_parse_time(x->from_s, t->tmin, &from)) ||
            (x->to_s && cli_parse_time(x->to_s, t->tmin, &to)) || to < from) {
            lp_trace_free(t);
            return cli_usage("export", "bad --from/--to (ns, or a number with ns/us/ms/s; '+' = after the trace "
                                       "start; --to not before --from)");
        }
        if (lp_trace_window(t, from, to, &wt, &err)) {
            lp_trace_free(t);
            return cli_fail("export", &err);
        }
    }
    if (!quiet_diags && lp_sqlite_set_diags(db, *data_errors, 0, &err)) {
        lp_trace_free(wt);
        lp_trace_free(t);
        return cli_fail("export", &err);
    }
    lp_status st = lp_sqlite_trace(db, wt ? wt : t, from, to, &x->so, &err);
    cli_progress_done();
    lp_trace_free(wt);
    lp_trace_free(t);
    return st ? cli_fail("export", &err) : 0;
}

static int export_spans(lp_sqlite *db, sqlite_args *x, const cli_load *lo, char **paths, int npaths, int *data_errors)
{
    size_t maxd = lo->max_diags ? lo->max_diags : 20;
    lp_diags ds;
    lp_diags_init(&ds, lo->quiet ? 0 : maxd);
    lp_spans sp;
    lp_spans_init(&sp, &ds);
    lp_load_opts lopt;
    memset(&lopt, 0, sizeof lopt);
    if (cli_progress_enabled())
        lopt.progress = cli_progress;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_spans_load(&sp, (const char *const *)paths, (size_t)npaths, x->lo.format, &lopt, &err);
    cli_progress_done();
    cli_print_diags(&ds, lo->quiet ? 0 : maxd);
    *data_errors = ds.nerrors > 0;
    if (!st && *data_errors && lo->strict) {
        fprintf(stderr, "longpole: the input has errors and --strict was given; stopping\n");
        lp_spans_release(&sp);
        lp_diags_release(&ds);
        return LP_EXIT_DATA;
    }
    if (!st)
        st = lp_sqlite_set_diags(db, ds.nerrors, ds.nwarnings, &err);
    if (!st)
        st = lp_sqlite_spans(db, &sp, &x->so, &err);
    cli_progress_done();
    lp_spans_release(&sp);
    lp_diags_release(&ds);
    if (st)
        return cli_fail("export", &err);
    /* the activity graph the spans map to (docs/formats/spans.md), as `cp` loads it */
    lp_diags quiet;
    lp_diags_init(&quiet, 0);
    int rc = export_trace(db, x, lo, paths, npaths, data_errors, &quiet);
    lp_diags_release(&quiet);
    return rc;
}

static int export_requests(lp_sqlite *db, sqlite_args *x, reqcli *o, int *data_errors)
{
    lp_error err;
    lp_error_clear(&err);
    lp_causal m;
    int have_m = 0, rc = 0;
    lp_reqlog *rl = NULL;
    uint32_t *map = NULL;
    lp_reqcat cat;
    lp_reqcat_init(&cat);
    lp_skew sk;
    memset(&sk, 0, sizeof sk);
    if (x->mo.model ? lp_causal_load(&m, x->mo.model, &err) : lp_causal_init(&m, &err))
        goto fail;
    have_m = 1;
    if (!x->mo.model && x->mo.filter && lp_causal_set_filter(&m, x->mo.filter, &err)) {
        rc = cli_usage("export", "%s", err.msg);
        goto end;
    }
    if (x->mo.cats && lp_reqcat_load(&cat, x->mo.cats, &err))
        goto fail;
    if ((rc = reqcli_load(o, "export", &rl, data_errors)) != 0)
        goto end;
    if ((rc = reqcli_skew(o, "export", rl, &sk)) != 0)
        goto end;
    if (lp_causal_map(&m, rl, &map, &err))
        goto fail;
    if (!x->mo.model) {
        lp_causal_refine_opts fo;
        memset(&fo, 0, sizeof fo);
        fo.threads = o->threads;
        if (cli_progress_enabled())
            fo.progress = cli_progress;
        if (lp_causal_refine(&m, rl, map, &fo, &err))
            goto fail;
        cli_progress_done();
    }
    if (lp_causal_finish(&m, x->mo.model ? NULL : rl, map, &err) || lp_reqcat_assign(&cat, &m, &err))
        goto fail;
    if (lp_sqlite_set_diags(db, *data_errors, 0, &err))
        goto fail;
    if (lp_sqlite_reqlog(db, rl, o->no_skew ? NULL : &sk, &m, map, &cat, x->mo.model, &x->so, &err))
        goto fail;
    cli_progress_done();
    goto end;
fail:
    rc = cli_fail("export", &err);
end:
    lp_skew_release(&sk);
    lp_reqcat_release(&cat);
    if (have_m)
        lp_causal_release(&m);
    lp_free(map);
    lp_reqlog_free(rl);
    return rc;
}

/* ---- the command ------------------------------------------------------------------------- */

/* The kind of the inputs: --input, else what --format or the options say, else the
 * first input's content; the log format of request logs. 0 or a usage error. */
static int choose_kind(sqlite_args *x, const cli_args *rest, kind *out)
{
    const char *format = x->lo.format;
    kind k = (kind)(x->input + 1);
    if (k == K_AUTO && format && (!strcmp(format, "csv") || !strcmp(format, "tsv") || !strcmp(format, "jsonl")))
        k = K_REQUESTS;
    if (k == K_AUTO && is_span_format(format))
        k = K_SPANS;
    if (k == K_AUTO && x->request_only)
        k = K_REQUESTS;
    if (k == K_AUTO && !format)
        k = detect(rest->operands[0]);
    if (k == K_AUTO)
        k = K_TRACE;
    if (k == K_REQUESTS && format) { /* the log's format */
        if (!strcmp(format, "csv"))
            x->ro.log.format = LP_RL_CSV;
        else if (!strcmp(format, "tsv"))
            x->ro.log.format = LP_RL_TSV;
        else if (!strcmp(format, "jsonl") || !strcmp(format, "json"))
            x->ro.log.format = LP_RL_JSONL;
        else if (strcmp(format, "auto") != 0)
            return cli_usage("export", "--format of request logs takes csv, tsv or jsonl");
    }
    if (k != K_TRACE && k != K_SPANS && (x->from_s || x->to_s))
        return cli_usage("export", "--from/--to apply to activity traces only");
    if (k != K_REQUESTS && x->request_only)
        return cli_usage("export", "request-log options (--model, --columns, ...) need request logs (--input requests)");
    *out = k;
    return 0;
}

/* What the options say together, and the copies the analyses read. */
static int check_args(sqlite_args *x, const cli_args *rest, kind *k)
{
    if (!x->out)
        return cli_usage("export", "--sqlite needs an output file");
    if (!rest->n)
        return cli_usage("export", "no input given");
    int rc = choose_kind(x, rest, k);
    if (rc)
        return rc;
    x->ro.strict = x->lo.strict;
    x->ro.quiet = x->lo.quiet;
    x->ro.max_diags = x->lo.max_diags;
    x->ro.threads = x->so.threads;
    x->so.outlier_share = x->mo.share;
    x->so.buckets = (uint32_t)x->mo.buckets;
    if (x->npct) {
        x->so.percentiles = x->pct;
        x->so.npercentiles = x->npct;
    }
    if (cli_progress_enabled())
        x->so.progress = cli_progress;
    x->ro.paths = rest->operands;
    x->ro.npaths = rest->n;
    return 0;
}

/* Open the database (the run of these inputs), export the kind, commit. */
static int export_run(sqlite_args *x, kind k, int argc, char **argv, const cli_args *rest, lp_sqlite_stats *stats,
                      int *data_errors)
{
    char *optj = options_json(argc, argv, rest->operands, rest->n);
    lp_error err;
    lp_error_clear(&err);
    lp_sqlite *db = NULL;
    lp_status st = lp_sqlite_open(&db, x->out, (const char *const *)rest->operands, (size_t)rest->n, kind_names[k],
                                  optj, &err);
    free(optj);
    if (st)
        return cli_fail("export", &err);
    int rc;
    if (k == K_REQUESTS)
        rc = export_requests(db, x, &x->ro, data_errors);
    else if (k == K_SPANS)
        rc = export_spans(db, x, &x->lo, rest->operands, rest->n, data_errors);
    else
        rc = export_trace(db, x, &x->lo, rest->operands, rest->n, data_errors, NULL);
    if (!rc && lp_sqlite_commit(db, stats, &err))
        rc = cli_fail("export", &err);
    lp_sqlite_close(db);
    return rc;
}

int cli_export_sqlite(int argc, char **argv)
{
    sqlite_args x;
    cli_args rest;
    int rc = cli_parse(&cli_spec_export_sqlite, argc, argv, &x, &rest);
    if (rc)
        return rc;
    kind k = K_AUTO;
    int data_errors = 0, npaths = rest.n;
    lp_sqlite_stats stats;
    if (!(rc = check_args(&x, &rest, &k)))
        rc = export_run(&x, k, argc, argv, &rest, &stats, &data_errors);
    cli_args_release(&cli_spec_export_sqlite, &x, &rest);
    if (rc)
        return rc;
    if (k == K_REQUESTS)
        reqcli_timing(&x.ro, "export");
    if (!x.lo.quiet)
        fprintf(stderr, "longpole export: %s: run %lld (%s input%s)%s: %llu rows in %.2f s (%.2f M rows/s)\n", x.out,
                (long long)stats.run, kind_names[k], npaths == 1 ? "" : "s",
                stats.replaced ? ", replacing the earlier run of these inputs" : "", (unsigned long long)stats.rows,
                stats.seconds, stats.seconds > 0 ? (double)stats.rows / stats.seconds / 1e6 : 0.0);
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
