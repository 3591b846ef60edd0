/* cmd_report.c: `longpole report`: one self-contained HTML file with every view of the
 * inputs that applies (report.h; docs/report.md): timeline, critical path vs profile,
 * critical participation over time, request-log figures, span critical paths. The CLI
 * only parses options, loads (lp_report_load), and writes the file atomically. */
#include "cli.h"
#include "viewcli.h"

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
    "  --sections LIST    only these sections (comma-separated names above)\n"
    "  --exact-max N      embed activities, messages and path elements one by one when\n"
    "                     there are at most N of each (default 2M); above, bins only\n"
    "  --max-mb N         size budget of the timeline's data in MB (default 12): exact\n"
    "                     blocks (path, messages, activities) and bin levels within it\n"
    VIEWCLI_HELP
    "  --strict, -q, --max-errors N, --threads N   as for every command\n"
    "\n" REQCLI_HELP;

int cmd_report(int argc, char **argv)
{
    viewcli vc;
    const char *out = "report.html", *secs = NULL, *v;
    char **paths = lp_calloc((size_t)argc + 1, sizeof *paths);
    int npaths = 0, rc = 0;
    if (viewcli_init(&vc, argc) || !paths) {
        viewcli_free(&vc), lp_free(paths);
        return LP_EXIT_NOMEM;
    }
    lp_report_opts *ro = &vc.ro;
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
        } else if (cli_opt(argc, argv, &i, "--sections", &secs)) {
            if (!secs)
                USAGE("--sections needs a list");
        } else if (cli_opt(argc, argv, &i, "--exact-max", &v)) {
            if (!v || cli_parse_count(v, &n))
                USAGE("--exact-max needs a count (e.g. 5M)");
            ro->exact_acts = ro->exact_msgs = ro->exact_cp = n;
        } else if (cli_opt(argc, argv, &i, "--max-mb", &v)) {
            if (!v || cli_parse_double(v, &x) || !(x > 0) || x > 65536)
                USAGE("--max-mb takes a positive size in MB");
            ro->max_bytes = (uint64_t)(x * 1048576.0);
        } else if (viewcli_opt(&vc, "report", argc, argv, &i, &rc) || reqcli_opt(&vc.rq, "report", argc, argv, &i, &rc)) {
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
    viewcli_apply(&vc);
    lp_report_inputs in;
    lp_report *r = NULL;
    int data_errors = 0;
    if ((rc = viewcli_load(&vc, "report", paths, npaths, nsec ? names : NULL, nsec, &in, &r, &data_errors)))
        goto end;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = LP_OK;
    /* write: to a temporary file renamed into place, so a failure leaves no half report */
    char *tmp = NULL;
    FILE *f = stdout;
    int to_stdout = strcmp(out, "-") == 0;
    if (!to_stdout) {
        size_t len = strlen(out) + 16;
        tmp = lp_malloc(len);
        if (!tmp) {
            st = lp_error_set(&err, LP_ERR_NOMEM, "out of memory");
        } else {
            snprintf(tmp, len, "%s.tmp", out);
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
    reqcli_mark(&vc.rq, "write");
    if (!st && !to_stdout && !vc.rq.quiet) {
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
    reqcli_timing(&vc.rq, "report");
    lp_free(tmp);
    lp_report_free(r);
    lp_report_inputs_release(&in);
    if (st)
        rc = cli_fail("report", &err);
    else
        rc = data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
end:
    viewcli_free(&vc);
    lp_free(paths);
    return rc;
}
