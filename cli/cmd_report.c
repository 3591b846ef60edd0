/* cmd_report.c: `longpole report`: one self-contained HTML file with every view of the
 * inputs that applies (report.h; docs/report.md): timeline, critical path vs profile,
 * critical participation over time, request-log figures, span critical paths. The CLI
 * only parses options, loads (lp_report_load), and writes the file atomically. */
#include "cli.h"
#include "viewcli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct report_args {
    viewcli vc;
    const char *out, *sections;
} report_args;

static void report_init(void *p)
{
    report_args *a = p;
    viewcli_init(&a->vc);
    a->out = "report.html";
}

/* --exact-max N: activities, messages and path elements alike */
static int set_exact(void *dst, const char *v, char *msg, size_t n)
{
    lp_report_opts *ro = dst;
    uint64_t k;
    if (cli_parse_count(v, &k))
        return -1;
    ro->exact_acts = ro->exact_msgs = ro->exact_cp = k;
    return 0;
}

/* --max-mb N: the timeline's budget in MiB */
static int set_max_mb(void *dst, const char *v, char *msg, size_t n)
{
    double x;
    if (cli_parse_double(v, &x) || !(x > 0) || x > 65536)
        return -1;
    *(uint64_t *)dst = (uint64_t)(x * 1048576.0);
    return 0;
}

static const cli_opt report_opts[] = {
    {"-o", "--output", .kind = CLI_STR, .arg = "FILE", CLI_AT(report_args, out), .err = "-o needs a file name",
     .example = "-", .help = "output (default report.html; - for stdout)"},
    {"--sections", .kind = CLI_STR, .arg = "LIST", CLI_AT(report_args, sections), .err = "--sections needs a list",
     .example = "overview", .help = "only these sections (comma-separated names above)"},
    {"--exact-max", .kind = CLI_FN, .arg = "N", CLI_AT(report_args, vc.ro), .fn = set_exact,
     .err = "--exact-max needs a count (e.g. 5M)", .example = "5M",
     .help = "embed activities, messages and path elements one by one when\n"
             "there are at most N of each (default 2M); above, bins only"},
    {"--max-mb", .kind = CLI_FN, .arg = "N", CLI_AT(report_args, vc.ro.max_bytes), .fn = set_max_mb,
     .err = "--max-mb takes a positive size in MB", .example = "1.5",
     .help = "size budget of the timeline's data in MB (default 12): exact\n"
             "blocks (path, messages, activities) and bin levels within it"},
    CLI_END,
};

const cli_spec cli_spec_report = {
    .cmd = "report",
    .usage = "usage: longpole report [OPTIONS] INPUT... [-o report.html]\n",
    .about = "One self-contained HTML file (inline SVG, CSS and a little JavaScript; no network\n"
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
             "longpole reads. Definitions and how big traces are aggregated: docs/report.md.\n",
    .groups = {CLI_OWN("options:", report_opts), VIEWCLI_GROUPS(report_args, vc)},
    .size = sizeof(report_args),
    .init = report_init,
};

/* --sections LIST into names (pointing into buf). */
static int parse_sections(const char *secs, char *buf, size_t bufn, const char **names, size_t *nsec)
{
    *nsec = 0;
    if (!secs)
        return 0;
    snprintf(buf, bufn, "%s", secs);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!lp_report_section_find(tok) || *nsec == 16)
            return cli_usage("report", "no section '%s' (overview, timeline, breakdown, summaries, requests, spans)",
                             tok);
        names[(*nsec)++] = tok;
    }
    return 0;
}

/* Write the report to out: through a temporary file renamed into place, so a failure
 * leaves no half report; *size is the file's size. */
static lp_status write_report(lp_report *r, const char *out, const char *const *names, size_t nsec, long *size,
                              lp_error *err)
{
    if (strcmp(out, "-") == 0) {
        lp_status st = nsec ? lp_report_write_page(r, names, nsec, stdout, err) : lp_report_write(r, stdout, err);
        if (fflush(stdout) != 0 && !st)
            st = lp_error_set(err, LP_ERR_IO, "writing to stdout failed");
        return st;
    }
    size_t len = strlen(out) + 16;
    char *tmp = lp_malloc(len);
    if (!tmp)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    snprintf(tmp, len, "%s.tmp", out);
    FILE *f = fopen(tmp, "w");
    lp_status st = f ? LP_OK : lp_error_set(err, LP_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
    if (!st) {
        st = nsec ? lp_report_write_page(r, names, nsec, f, err) : lp_report_write(r, f, err);
        *size = ftell(f);
        if (fclose(f) != 0 && !st)
            st = lp_error_set(err, LP_ERR_IO, "writing '%s': %s", tmp, strerror(errno));
        if (!st && rename(tmp, out) != 0)
            st = lp_error_set(err, LP_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, out, strerror(errno));
        if (st)
            remove(tmp);
    }
    lp_free(tmp);
    return st;
}

static void print_written(const lp_report *r, const char *out, long size, const char *const *names, size_t nsec)
{
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

int cmd_report(int argc, char **argv)
{
    report_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_report, argc, argv, &a, &rest);
    if (rc)
        return rc;
    const char *names[16];
    size_t nsec = 0;
    char secbuf[256];
    lp_report_inputs in;
    lp_report *r = NULL;
    int data_errors = 0;
    if (!rest.n)
        rc = cli_usage("report", "no input given");
    else if (!(rc = parse_sections(a.sections, secbuf, sizeof secbuf, names, &nsec))) {
        viewcli_apply(&a.vc);
        rc = viewcli_load(&a.vc, "report", rest.operands, rest.n, nsec ? names : NULL, nsec, &in, &r, &data_errors);
    }
    if (!rc) { /* a report of nothing is no report (docs/trust.md) */
        const lp_report_data *d = lp_report_data_of(r);
        if (d->trace && !d->spans && !d->reqstats && !d->samples && (rc = cli_refuse_empty("report", d->trace))) {
            lp_report_free(r);
            lp_report_inputs_release(&in);
        }
    }
    if (rc) {
        cli_args_release(&cli_spec_report, &a, &rest);
        return rc;
    }
    lp_error err;
    lp_error_clear(&err);
    long size = 0;
    lp_status st = write_report(r, a.out, names, nsec, &size, &err);
    reqcli_mark(&a.vc.rq, "write");
    if (!st && strcmp(a.out, "-") != 0 && !a.vc.rq.quiet)
        print_written(r, a.out, size, names, nsec);
    reqcli_timing(&a.vc.rq, "report");
    lp_report_free(r);
    lp_report_inputs_release(&in);
    cli_args_release(&cli_spec_report, &a, &rest);
    if (st)
        return cli_fail("report", &err);
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
