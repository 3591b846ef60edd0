/* export_sqlite.c: `longpole export --sqlite OUT.db INPUT...` (called by cmd_export.c):
 * load an input set (an activity trace, request logs or span traces, by content or
 * --input), run its analyses and write everything as SQLite tables
 * (sqlite_export.h, docs/formats/sqlite.md). Re-exporting the same inputs replaces
 * their run. Loading prints diagnostics as the other commands do; exit 4 when the
 * input had errors (the export is still written). */
#include "reqcli.h"
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

static int parse_percentiles(const char *s, double *p, size_t *np)
{
    *np = 0;
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double v;
        if (strcmp(tok, "all") == 0)
            v = 100;
        else if (cli_parse_double(tok[0] == 'p' || tok[0] == 'P' ? tok + 1 : tok, &v) || !(v > 0) || v > 100)
            return -1;
        if (*np == 32)
            return -1;
        p[(*np)++] = v;
    }
    return *np ? 0 : -1;
}

typedef struct xopts {
    const char *out;          /* --sqlite */
    kind k;                   /* --input */
    const char *format;       /* --format (trace importer, span format, or csv/tsv/jsonl) */
    const char *from_s, *to_s;
    const char *model, *cats, *filter;
    int request_only;         /* a request-log option was given */
    double pct[32];
    size_t npct;
    lp_sqlite_opts so;
} xopts;

/* ---- the three input kinds --------------------------------------------------------------- */

static int export_trace(lp_sqlite *db, xopts *x, const cli_load *lo, char **paths, int npaths, int *data_errors,
                        lp_diags *quiet_diags)
{
    lp_error err;
    lp_error_clear(&err);
    lp_trace *t = NULL;
    int rc;
    if (quiet_diags) { /* spans: the files were read (and their problems printed) once already */
        lp_load_opts lopt;
        memset(&lopt, 0, sizeof lopt);
        lopt.format = x->format;
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

static int export_spans(lp_sqlite *db, xopts *x, const cli_load *lo, char **paths, int npaths, int *data_errors)
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
    lp_status st = lp_spans_load(&sp, (const char *const *)paths, (size_t)npaths, x->format, &lopt, &err);
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

static int export_requests(lp_sqlite *db, xopts *x, reqcli *o, int *data_errors)
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
    if (x->model ? lp_causal_load(&m, x->model, &err) : lp_causal_init(&m, &err))
        goto fail;
    have_m = 1;
    if (!x->model && x->filter && lp_causal_set_filter(&m, x->filter, &err)) {
        rc = cli_usage("export", "%s", err.msg);
        goto end;
    }
    if (x->cats && lp_reqcat_load(&cat, x->cats, &err))
        goto fail;
    if ((rc = reqcli_load(o, "export", &rl, data_errors)) != 0)
        goto end;
    if ((rc = reqcli_skew(o, "export", rl, &sk)) != 0)
        goto end;
    if (lp_causal_map(&m, rl, &map, &err))
        goto fail;
    if (!x->model) {
        lp_causal_refine_opts fo;
        memset(&fo, 0, sizeof fo);
        fo.threads = o->threads;
        if (cli_progress_enabled())
            fo.progress = cli_progress;
        if (lp_causal_refine(&m, rl, map, &fo, &err))
            goto fail;
        cli_progress_done();
    }
    if (lp_causal_finish(&m, x->model ? NULL : rl, map, &err) || lp_reqcat_assign(&cat, &m, &err))
        goto fail;
    if (lp_sqlite_set_diags(db, *data_errors, 0, &err))
        goto fail;
    if (lp_sqlite_reqlog(db, rl, o->no_skew ? NULL : &sk, &m, map, &cat, x->model, &x->so, &err))
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

int cli_export_sqlite(int argc, char **argv)
{
    xopts x;
    memset(&x, 0, sizeof x);
    lp_sqlite_opts_init(&x.so);
    cli_load lo = {0};
    reqcli ro;
    reqcli_init(&ro);
    char **paths = lp_malloc((size_t)argc * sizeof *paths);
    int npaths = 0, rc = 0;
    const char *v;
    uint64_t n;
    if (!paths)
        return LP_EXIT_NOMEM;
#define USAGE(...) return lp_free(paths), cli_usage("export", __VA_ARGS__)
    for (int i = 1; i < argc; i++) {
        if (cli_opt(argc, argv, &i, "--sqlite", &v)) {
            if (!v)
                USAGE("--sqlite needs an output file");
            if (x.out)
                USAGE("--sqlite given twice");
            x.out = v;
        } else if (cli_opt(argc, argv, &i, "--chrome", &v)) {
            USAGE("--sqlite and --chrome cannot be combined: run `longpole export` once for each");
        } else if (cli_opt(argc, argv, &i, "--input", &v)) {
            int k = 1;
            while (k < 4 && (!v || strcmp(v, kind_names[k]) != 0))
                k++;
            if (!v || k == 4)
                USAGE("--input takes trace, requests or spans");
            x.k = (kind)k;
        } else if (cli_opt(argc, argv, &i, "--format", &x.format)) {
            if (!x.format)
                USAGE("--format needs a value");
        } else if (cli_flag(argv, i, "--strict")) {
            lo.strict = ro.strict = 1;
        } else if (cli_flag(argv, i, "-q") || cli_flag(argv, i, "--quiet")) {
            lo.quiet = ro.quiet = 1;
        } else if (cli_opt(argc, argv, &i, "--max-errors", &v)) {
            if (!v || cli_parse_count(v, &n))
                USAGE("--max-errors needs a number");
            lo.max_diags = ro.max_diags = (size_t)n;
        } else if (cli_opt(argc, argv, &i, "--threads", &v)) {
            if (!v || cli_parse_count(v, &n) || n > 64)
                USAGE("--threads takes 0..64 (0 = one per CPU)");
            x.so.threads = ro.threads = (unsigned)n;
        } else if (cli_opt(argc, argv, &i, "--from", &x.from_s)) {
            if (!x.from_s)
                USAGE("--from needs a time");
        } else if (cli_opt(argc, argv, &i, "--to", &x.to_s)) {
            if (!x.to_s)
                USAGE("--to needs a time");
        } else if (cli_opt(argc, argv, &i, "--window", &v)) {
            if (!v || cli_parse_dur(v, &x.so.window) || x.so.window <= 0)
                USAGE("--window needs a positive duration (e.g. 1s)");
        } else if (cli_opt(argc, argv, &i, "--slide", &v)) {
            if (!v || cli_parse_dur(v, &x.so.slide) || x.so.slide <= 0)
                USAGE("--slide needs a positive duration");
        } else if (cli_opt(argc, argv, &i, "--by", &v)) {
            if (!v || cli_parse_kinds(v, &x.so.kinds))
                USAGE("--by takes activity, worker, operator, comm (comma-separated) or all");
        } else if (cli_opt(argc, argv, &i, "--seed", &v)) {
            if (!v || cli_parse_count(v, &x.so.seed))
                USAGE("--seed needs a number");
        } else if (cli_flag(argv, i, "--no-path")) {
            x.so.no_path = 1;
        } else if (cli_flag(argv, i, "--no-checks")) {
            x.so.no_checks = 1;
        } else if (cli_flag(argv, i, "--no-windows")) {
            x.so.no_windows = 1;
        } else if (cli_flag(argv, i, "--edge-cp")) {
            x.so.edge_cp = 1;
        } else if (cli_opt(argc, argv, &i, "--model", &x.model)) {
            if (!x.model)
                USAGE("--model needs a file");
            x.request_only = 1;
        } else if (cli_opt(argc, argv, &i, "--categories", &x.cats)) {
            if (!x.cats)
                USAGE("--categories needs a file");
            x.request_only = 1;
        } else if (cli_opt(argc, argv, &i, "--filter", &x.filter)) {
            if (!x.filter)
                USAGE("--filter needs a regular expression");
            x.request_only = 1;
        } else if (cli_opt(argc, argv, &i, "--outliers", &v)) {
            if (!v || cli_parse_double(v, &x.so.outlier_share) || !(x.so.outlier_share > 0 && x.so.outlier_share < 1))
                USAGE("--outliers takes a share between 0 and 1 (e.g. 0.05)");
            x.request_only = 1;
        } else if (cli_opt(argc, argv, &i, "--buckets", &v)) {
            if (!v || cli_parse_count(v, &n) || n < 1 || n > 1000)
                USAGE("--buckets takes 1..1000");
            x.so.buckets = (uint32_t)n;
            x.request_only = 1;
        } else if (cli_flag(argv, i, "--no-request-paths")) {
            x.so.no_request_paths = 1;
        } else if (cli_flag(argv, i, "--no-events")) {
            x.so.no_events = 1;
        } else if (cli_opt(argc, argv, &i, "--percentile", &v) || cli_opt(argc, argv, &i, "--percentiles", &v)) {
            if (!v || parse_percentiles(v, x.pct, &x.npct))
                USAGE("--percentile takes a list like 50,95,99,all (each in (0, 100])");
        } else if (reqcli_opt(&ro, "export", argc, argv, &i, &rc)) {
            if (rc)
                return lp_free(paths), rc;
            x.request_only = 1;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            USAGE("unknown option '%s'", argv[i]);
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (!x.out)
        USAGE("--sqlite needs an output file");
    if (!npaths)
        USAGE("no input given");
    /* the kind: --input, else the options, else the first input's content */
    kind k = x.k;
    if (k == K_AUTO && x.format && (!strcmp(x.format, "csv") || !strcmp(x.format, "tsv") || !strcmp(x.format, "jsonl")))
        k = K_REQUESTS;
    if (k == K_AUTO && is_span_format(x.format))
        k = K_SPANS;
    if (k == K_AUTO && x.request_only)
        k = K_REQUESTS;
    if (k == K_AUTO && !x.format)
        k = detect(paths[0]);
    if (k == K_AUTO)
        k = K_TRACE;
    if (k == K_REQUESTS && x.format) { /* the log's format */
        if (!strcmp(x.format, "csv"))
            ro.log.format = LP_RL_CSV;
        else if (!strcmp(x.format, "tsv"))
            ro.log.format = LP_RL_TSV;
        else if (!strcmp(x.format, "jsonl") || !strcmp(x.format, "json"))
            ro.log.format = LP_RL_JSONL;
        else if (strcmp(x.format, "auto") != 0)
            USAGE("--format of request logs takes csv, tsv or jsonl");
    }
    if (k != K_TRACE && k != K_SPANS && (x.from_s || x.to_s))
        USAGE("--from/--to apply to activity traces only");
    if (k != K_REQUESTS && x.request_only)
        USAGE("request-log options (--model, --columns, ...) need request logs (--input requests)");
    lo.format = x.format;
    if (x.npct) {
        x.so.percentiles = x.pct;
        x.so.npercentiles = x.npct;
    }
#undef USAGE
    if (cli_progress_enabled())
        x.so.progress = cli_progress;
    ro.paths = paths;
    ro.npaths = npaths;
    char *optj = options_json(argc, argv, paths, npaths);
    lp_error err;
    lp_error_clear(&err);
    lp_sqlite *db = NULL;
    lp_status st = lp_sqlite_open(&db, x.out, (const char *const *)paths, (size_t)npaths, kind_names[k], optj, &err);
    free(optj);
    if (st) {
        lp_free(paths);
        return cli_fail("export", &err);
    }
    int data_errors = 0;
    if (k == K_REQUESTS)
        rc = export_requests(db, &x, &ro, &data_errors);
    else if (k == K_SPANS)
        rc = export_spans(db, &x, &lo, paths, npaths, &data_errors);
    else
        rc = export_trace(db, &x, &lo, paths, npaths, &data_errors, NULL);
    lp_sqlite_stats stats;
    if (!rc && lp_sqlite_commit(db, &stats, &err))
        rc = cli_fail("export", &err);
    lp_sqlite_close(db);
    lp_free(paths);
    if (rc)
        return rc;
    if (!lo.quiet)
        fprintf(stderr, "longpole export: %s: run %lld (%s input%s)%s: %llu rows in %.2f s (%.2f M rows/s)\n", x.out,
                (long long)stats.run, kind_names[k], npaths == 1 ? "" : "s",
                stats.replaced ? ", replacing the earlier run of these inputs" : "", (unsigned long long)stats.rows,
                stats.seconds, stats.seconds > 0 ? (double)stats.rows / stats.seconds / 1e6 : 0.0);
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
