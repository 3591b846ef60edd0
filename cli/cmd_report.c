/* cmd_report.c: `longpole report`: one self-contained HTML file with every view of the
 * inputs that applies (report.h; docs/report.md): timeline, critical path vs profile,
 * critical participation over time, request-log figures, span critical paths. The CLI
 * only parses options, loads (lp_report_load), and writes the file atomically. */
#include "cli.h"
#include "reqcli.h"
#include "longpole/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char cli_help_report[] =
    "usage: longpole report [OPTIONS] INPUT... [-o report.html]\n"
    "\n"
    "One self-contained HTML file (inline SVG, CSS and a little JavaScript; no network\n"
    "access; opens from disk) with every view that applies to the inputs:\n"
    "  overview    what was loaded, the critical path, the instrumentation checks\n"
    "  timeline    one row per worker, activities by type, messages as arrows, the\n"
    "              critical path in red; zoom, pan, hover; big traces drawn from\n"
    "              per-pixel bins (dominant type, busy share, critical-path share)\n"
    "  breakdown   the critical path by type, worker and operator vs the conventional\n"
    "              profile\n"
    "  summaries   critical participation per window: SnailTrail's activity, straggler,\n"
    "              operator and communication summaries as stacked bars, next to the\n"
    "              conventional profile and one random transient path (Figures 5, 7-11)\n"
    "  requests    request logs: summed delay vs critical path, per-category CDFs,\n"
    "              strata, slack, outliers, what-if (Mystery Machine Figures 5-8, 10)\n"
    "  spans       span traces: exclusive critical-path time by service/operation and\n"
    "              call path per latency percentile, and a flame graph\n"
    "Inputs are detected per file: request logs (CSV/TSV/JSON lines naming `event` and\n"
    "`task`), span traces (Jaeger, Zipkin, OTLP: also drawn as a graph), or any trace\n"
    "longpole reads. Definitions and how big traces are aggregated: docs/report.md.\n"
    "\n"
    "options:\n"
    "  -o FILE            output (default report.html; - for stdout)\n"
    "  --title TEXT       the report's title\n"
    "  --sections LIST    only these sections (comma-separated names above)\n"
    "  --window LIST      window sizes of the summaries, e.g. 1s,250ms (default: two\n"
    "                     sizes giving about 20 and 100 windows)\n"
    "  --top N            keys per stacked-bar chart before \"other\" (default 10)\n"
    "  --rows N           table rows shown before the rest is folded (default 25)\n"
    "  --seed N           seed of the summaries' random paths (default 1)\n"
    "  --exact-max N      embed activities, messages and path elements one by one when\n"
    "                     there are at most N of each (default 2M); above, bins only\n"
    "  --max-mb N         size budget of the timeline's bins in MB (default 12)\n"
    "  --percentile LIST  span percentiles, e.g. 50,95,99,all (the default)\n"
    "  --requests         every input is a request log (no detection)\n"
    "  --format F         trace format (lpt, lptb or an importer's name), or csv, tsv,\n"
    "                     jsonl for request logs\n"
    "  --model FILE       causal model for request logs (default: inferred from them)\n"
    "  --categories FILE  segment categories (docs/formats/mystery-categories.md)\n"
    "  --stratify SPEC    strata for Figure 7 (repeatable; default latency:5 and every\n"
    "                     request attribute)\n"
    "  --outliers P       share of slowest requests taken as outliers (default 0.05)\n"
    "  --buckets N        what-if slack buckets (default 20)\n"
    "  --strict, -q, --max-errors N, --threads N   as for every command\n"
    "\n" REQCLI_HELP;

/* Split "a,b,c" into durations. */
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

static int parse_pcts(const char *s, double *out, size_t max, size_t *n)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double v;
        if (strcmp(tok, "all") == 0)
            v = 100;
        else if (cli_parse_double(tok[0] == 'p' || tok[0] == 'P' ? tok + 1 : tok, &v))
            return -1;
        if (!(v > 0 && v <= 100) || *n == max)
            return -1;
        out[(*n)++] = v;
    }
    return *n ? 0 : -1;
}

int cmd_report(int argc, char **argv)
{
    reqcli rq;
    reqcli_init(&rq);
    lp_report_opts ro;
    lp_report_opts_init(&ro);
    lp_report_load_opts lo;
    memset(&lo, 0, sizeof lo);
    const char *out = "report.html", *title = NULL, *secs = NULL, *v;
    int64_t windows[16];
    double pcts[16];
    size_t nwin = 0, npct = 0;
    const char **strat = lp_calloc((size_t)argc + 1, sizeof *strat);
    char **paths = lp_calloc((size_t)argc + 1, sizeof *paths);
    uint32_t nstrat = 0;
    int npaths = 0, rc = 0;
    if (!strat || !paths) {
        lp_free(strat), lp_free(paths);
        return LP_EXIT_NOMEM;
    }
#define USAGE(...)                                                                                                     \
    do {                                                                                                               \
        rc = cli_usage("report", __VA_ARGS__);                                                                         \
        goto end;                                                                                                      \
    } while (0)
    for (int i = 1; i < argc; i++) {
        uint64_t n;
        double x;
        if (cli_opt(argc, argv, &i, "-o", &out) || cli_opt(argc, argv, &i, "--output", &out)) {
            if (!out)
                USAGE("-o needs a file name");
        } else if (cli_opt(argc, argv, &i, "--title", &title)) {
            if (!title)
                USAGE("--title needs a text");
        } else if (cli_opt(argc, argv, &i, "--sections", &secs)) {
            if (!secs)
                USAGE("--sections needs a list");
        } else if (cli_opt(argc, argv, &i, "--window", &v)) {
            if (!v || parse_windows(v, windows, 16, &nwin))
                USAGE("--window takes positive durations, comma-separated (e.g. 1s,250ms; at most 16)");
        } else if (cli_opt(argc, argv, &i, "--top", &v)) {
            if (!v || cli_parse_count(v, &n) || n == 0 || n > 1000)
                USAGE("--top takes 1..1000");
            ro.top = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--rows", &v)) {
            if (!v || cli_parse_count(v, &n) || n == 0 || n > 1000000)
                USAGE("--rows takes a positive count");
            ro.table_rows = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--seed", &v)) {
            if (!v || cli_parse_count(v, &n))
                USAGE("--seed needs a number");
            ro.seed = n;
        } else if (cli_opt(argc, argv, &i, "--exact-max", &v)) {
            if (!v || cli_parse_count(v, &n))
                USAGE("--exact-max needs a count (e.g. 5M)");
            ro.exact_acts = ro.exact_msgs = ro.exact_cp = n;
        } else if (cli_opt(argc, argv, &i, "--max-mb", &v)) {
            if (!v || cli_parse_double(v, &x) || !(x > 0) || x > 65536)
                USAGE("--max-mb takes a positive size in MB");
            ro.max_bytes = (uint64_t)(x * 1048576.0);
        } else if (cli_opt(argc, argv, &i, "--percentile", &v)) {
            if (!v || parse_pcts(v, pcts, 16, &npct))
                USAGE("--percentile takes percentiles in (0, 100] or 'all', comma-separated");
        } else if (cli_flag(argv, i, "--requests")) {
            lo.requests = 1;
        } else if (cli_opt(argc, argv, &i, "--format", &v)) {
            if (!v)
                USAGE("--format needs a value");
            if (strcmp(v, "csv") == 0 || strcmp(v, "tsv") == 0 || strcmp(v, "jsonl") == 0) {
                rq.log.format = v[0] == 'c' ? LP_RL_CSV : v[0] == 't' ? LP_RL_TSV : LP_RL_JSONL;
                lo.requests = 1;
            } else {
                lo.format = v;
            }
        } else if (cli_opt(argc, argv, &i, "--model", &lo.model)) {
            if (!lo.model)
                USAGE("--model needs a file");
        } else if (cli_opt(argc, argv, &i, "--categories", &lo.categories)) {
            if (!lo.categories)
                USAGE("--categories needs a file");
        } else if (cli_opt(argc, argv, &i, "--stratify", &v)) {
            if (!v)
                USAGE("--stratify needs an attribute");
            strat[nstrat++] = v;
        } else if (cli_opt(argc, argv, &i, "--outliers", &v)) {
            if (!v || cli_parse_double(v, &lo.outliers) || !(lo.outliers > 0 && lo.outliers < 1))
                USAGE("--outliers takes a share between 0 and 1");
        } else if (cli_opt(argc, argv, &i, "--buckets", &v)) {
            if (!v || cli_parse_count(v, &n) || n < 1 || n > 1000)
                USAGE("--buckets takes 1..1000");
            lo.buckets = (uint32_t)n;
        } else if (reqcli_opt(&rq, "report", argc, argv, &i, &rc)) {
            if (rc)
                goto end;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            USAGE("unknown option '%s'", argv[i]);
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (!npaths)
        USAGE("no input given");
#undef USAGE
    const char *names[16];
    size_t nsec = 0;
    char secbuf[256];
    if (secs) {
        snprintf(secbuf, sizeof secbuf, "%s", secs);
        for (char *save = NULL, *tok = strtok_r(secbuf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (!lp_report_section_find(tok) || nsec == 16) {
                rc = cli_usage("report", "no section '%s' (overview, timeline, breakdown, summaries, requests, spans)",
                               tok);
                goto end;
            }
            names[nsec++] = tok;
        }
    }
    ro.windows = nwin ? windows : NULL;
    ro.nwindows = nwin;
    if (npct) {
        ro.percentiles = pcts;
        ro.npercentiles = npct;
    }
    ro.threads = rq.threads;
    lo.reqlog = &rq.log;
    lo.attrs = rq.attrs;
    lo.no_skew = rq.no_skew;
    lo.reference = rq.reference;
    lo.threads = rq.threads;
    if (nstrat) {
        lo.stratify = strat;
        lo.nstratify = nstrat;
    }
    if (cli_progress_enabled()) {
        lo.progress = cli_progress;
        ro.progress = cli_progress;
    }
    /* load */
    size_t maxd = rq.max_diags ? rq.max_diags : 20;
    lp_diags ds;
    lp_diags_init(&ds, rq.quiet ? 0 : maxd);
    lp_error err;
    lp_error_clear(&err);
    lp_report_inputs in;
    lp_status st = lp_report_load(&in, (const char *const *)paths, (size_t)npaths, &lo, &ds, &err);
    cli_progress_done();
    cli_print_diags(&ds, rq.quiet ? 0 : maxd);
    int data_errors = ds.nerrors > 0;
    lp_diags_release(&ds);
    if (st) {
        rc = cli_fail("report", &err);
        goto end;
    }
    reqcli_mark(&rq, "load+analyse inputs");
    if (data_errors && rq.strict) {
        fprintf(stderr, "longpole report: the input has errors and --strict was given; stopping\n");
        lp_report_inputs_release(&in);
        rc = LP_EXIT_DATA;
        goto end;
    }
    in.data.title = title;
    lp_report *r = NULL;
    if ((st = lp_report_new(&r, &in.data, &ro, &err))) {
        lp_report_inputs_release(&in);
        rc = cli_fail("report", &err);
        goto end;
    }
    st = lp_report_prepare(r, nsec ? names : NULL, nsec, &err);
    cli_progress_done();
    reqcli_mark(&rq, "analyse");
    /* write: to a temporary file renamed into place, so a failure leaves no half report */
    char *tmp = NULL;
    FILE *f = stdout;
    int to_stdout = strcmp(out, "-") == 0;
    if (!st && !to_stdout) {
        size_t n = strlen(out) + 16;
        tmp = lp_malloc(n);
        if (!tmp) {
            st = lp_error_set(&err, LP_ERR_NOMEM, "out of memory");
        } else {
            snprintf(tmp, n, "%s.tmp", out);
            f = fopen(tmp, "w");
            if (!f)
                st = lp_error_set(&err, LP_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
        }
    }
    long size = 0;
    if (!st) {
        st = nsec ? lp_report_write_page(r, names, nsec, f, &err) : lp_report_write(r, f, &err);
        if (!to_stdout) {
            size = ftell(f);
            if (fclose(f) != 0 && !st)
                st = lp_error_set(&err, LP_ERR_IO, "writing '%s': %s", tmp, strerror(errno));
            if (!st && rename(tmp, out) != 0)
                st = lp_error_set(&err, LP_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, out, strerror(errno));
            if (st)
                remove(tmp);
        } else if (fflush(stdout) != 0 && !st) {
            st = lp_error_set(&err, LP_ERR_IO, "writing to stdout failed");
        }
    }
    reqcli_mark(&rq, "write");
    if (!st && !to_stdout && !rq.quiet) {
        fprintf(stderr, "longpole report: wrote %s (%.1f MB):", out, (double)size / 1048576.0);
        for (const lp_report_section *const *s = lp_report_sections(); *s; s++) {
            int want = !nsec;
            for (size_t k = 0; k < nsec; k++)
                want |= strcmp(names[k], (*s)->name) == 0;
            if (want && lp_report_applies(r, (*s)->name))
                fprintf(stderr, " %s", (*s)->name);
        }
        fprintf(stderr, "\n");
    }
    reqcli_timing(&rq, "report");
    lp_free(tmp);
    lp_report_free(r);
    lp_report_inputs_release(&in);
    if (st)
        rc = cli_fail("report", &err);
    else
        rc = data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
end:
    lp_free(strat);
    lp_free(paths);
    return rc;
}
