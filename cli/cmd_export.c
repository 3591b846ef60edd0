/* cmd_export.c: `longpole export`: write a loaded trace (any readable format) to other
 * tools' formats. The kinds are a table: a new kind is one entry (its option, what it
 * writes, whether it needs the critical path, and a function that writes one output)
 * plus a line in cli_help_export; the loading, windowing and critical-path steps are
 * shared. Kinds: --chrome (Chrome Trace Event Format, chrome_export.h).
 */
#include "cli.h"
#include "longpole/export/chrome_export.h"

#include <errno.h>
#include <string.h>

const char cli_help_export[] =
    "usage: longpole export KIND OUT [KIND OUT ...] [OPTIONS] TRACE...\n"
    "\n"
    "Write the trace (any readable format; several files are merged) for other tools.\n"
    "kinds:\n"
    "  --chrome FILE     Chrome Trace Event Format JSON for Perfetto UI (ui.perfetto.dev) and\n"
    "                    chrome://tracing: workers as threads (one process per host or pid\n"
    "                    attribute), activities as slices, messages as flow arrows, and the\n"
    "                    critical path as its own track plus flow arrows (search \"critical\");\n"
    "                    exact ns timestamps; \"-\" writes to stdout (docs/export.md)\n"
    "  --sqlite FILE     a SQLite database (docs/formats/sqlite.md) of everything loaded and\n"
    "                    every analysis: workers, activities, messages, attributes, critical\n"
    "                    path, breakdowns, checks, windows with N, sum of CP and summaries;\n"
    "                    request logs: hosts and skew, requests, events, segments, model\n"
    "                    relationships, per-request paths and slack, aggregates; spans: traces,\n"
    "                    spans, critical-path sections, percentile tables (and their activity\n"
    "                    graph). One run per input set: exporting the same inputs again replaces\n"
    "                    their run. Alone (not with other kinds); its own options:\n"
    "    --input K         trace, requests or spans (default: by content)\n"
    "    --window D --slide D --by LIST --seed N --no-path --no-checks   windows, as\n"
    "                      `summary` (default: the whole trace as one window); --no-windows;\n"
    "                      --edge-cp: also every activity's and message's CP per window\n"
    "    --threads N       analysis threads\n"
    "    requests: the log options of `longpole help requests`, --model FILE, --categories\n"
    "      FILE, --filter RE, --outliers P, --buckets N, --no-request-paths, --no-events\n"
    "    spans: --percentile LIST (default 50,95,99,all)\n"
    "options:\n"
    "  --from T --to T   export the window [T, T'] only (SnailTrail Def. 5-6 projection:\n"
    "                    activities cut at its edges); its critical path is the window's.\n"
    "                    T is ns or a number with ns/us/ms/s; \"+T\" is after the trace start\n"
    "  --no-cp           do not compute or mark the critical path\n"
    "  --no-gaps         leave out the gaps (waiting/unknown time filled by the reader)\n"
    "  --format F        force the input format (see `longpole help formats`)\n"
    "  --strict          refuse input with errors;  -q  only the diagnostics summary\n"
    "  --max-errors N    diagnostics printed in full (default 20)\n"
    "Exit status 4 when the input had errors (the export is still written).\n";

/* What every export kind gets. */
typedef struct export_ctx {
    const lp_trace *t;        /* the trace (or its window) */
    const lp_cpath *cp;       /* its critical path, NULL with --no-cp */
    const char *source;       /* the first input's name */
    int no_gaps;              /* --no-gaps */
} export_ctx;

typedef struct export_kind {
    const char *option;       /* "--chrome" */
    const char *what;         /* for messages */
    int needs_cp;             /* the critical path is computed for it (unless --no-cp) */
    /* Write the export to `out` (a path, "-" = stdout); fills err on failure. */
    lp_status (*write)(const export_ctx *x, FILE *out, lp_error *err);
} export_kind;

static lp_status write_chrome(const export_ctx *x, FILE *out, lp_error *err)
{
    lp_chrome_export_opts o;
    memset(&o, 0, sizeof o);
    o.cp = x->cp;
    o.no_gaps = x->no_gaps;
    o.source = x->source;
    return lp_chrome_export(x->t, out, &o, err);
}

static const export_kind kinds[] = {
    {"--chrome", "Chrome trace", 1, write_chrome},
    {NULL, NULL, 0, NULL},
};

#define MAX_OUTPUTS 16

typedef struct request {
    const export_kind *kind;
    const char *out;
} request;

static int run_one(const request *r, const export_ctx *x)
{
    lp_error err;
    lp_error_clear(&err);
    int to_stdout = strcmp(r->out, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(r->out, "wb");
    if (!f) {
        fprintf(stderr, "longpole export: cannot create '%s': %s\n", r->out, strerror(errno));
        return LP_EXIT_IO;
    }
    cli_progress_items("writing", 0, 0); /* issue 6 */
    lp_status st = r->kind->write(x, f, &err);
    cli_progress_done(); /* issue 6 */
    int closed = to_stdout ? fflush(f) : fclose(f);
    if (!st && closed != 0)
        st = lp_error_set(&err, LP_ERR_IO, "writing '%s' failed: %s", r->out, strerror(errno));
    if (st) {
        lp_error_push(&err, "%s %s", r->kind->what, r->out);
        return cli_fail("export", &err);
    }
    return LP_EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* --sqlite loads and analyses on its own (cli/export_sqlite.c) */
        if (strcmp(argv[i], "--sqlite") == 0 || strncmp(argv[i], "--sqlite=", 9) == 0)
            return cli_export_sqlite(argc, argv);
    cli_load lo = {0};
    request req[MAX_OUTPUTS];
    int nreq = 0, no_cp = 0, no_gaps = 0;
    const char *from_s = NULL, *to_s = NULL, *v;
    char **paths = lp_malloc((size_t)argc * sizeof *paths);
    int npaths = 0;
    if (!paths)
        return LP_EXIT_NOMEM;
    for (int i = 1; i < argc; i++) {
        const export_kind *k = NULL;
        for (const export_kind *e = kinds; e->option && !k; e++)
            if (cli_opt(argc, argv, &i, e->option, &v))
                k = e;
        if (k) {
            if (!v)
                return lp_free(paths), cli_usage("export", "%s needs an output file (\"-\" for stdout)", k->option);
            if (nreq == MAX_OUTPUTS)
                return lp_free(paths), cli_usage("export", "at most %d outputs at once", MAX_OUTPUTS);
            req[nreq].kind = k;
            req[nreq].out = v;
            nreq++;
        } else if (cli_flag(argv, i, "--no-cp")) {
            no_cp = 1;
        } else if (cli_flag(argv, i, "--no-gaps")) {
            no_gaps = 1;
        } else if (cli_flag(argv, i, "--strict")) {
            lo.strict = 1;
        } else if (cli_flag(argv, i, "-q") || cli_flag(argv, i, "--quiet")) {
            lo.quiet = 1;
        } else if (cli_opt(argc, argv, &i, "--from", &from_s)) {
            if (!from_s)
                return lp_free(paths), cli_usage("export", "--from needs a time");
        } else if (cli_opt(argc, argv, &i, "--to", &to_s)) {
            if (!to_s)
                return lp_free(paths), cli_usage("export", "--to needs a time");
        } else if (cli_opt(argc, argv, &i, "--format", &lo.format)) {
            if (!lo.format)
                return lp_free(paths), cli_usage("export", "--format needs a value");
        } else if (cli_opt(argc, argv, &i, "--max-errors", &v)) {
            uint64_t n;
            if (!v || cli_parse_count(v, &n))
                return lp_free(paths), cli_usage("export", "--max-errors needs a number");
            lo.max_diags = (size_t)n;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return lp_free(paths), cli_usage("export", "unknown option '%s'", argv[i]);
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (!nreq)
        return lp_free(paths), cli_usage("export", "no export kind given (e.g. --chrome OUT.json)");
    if (!npaths)
        return lp_free(paths), cli_usage("export", "no trace given");
    int nstdout = 0;
    for (int i = 0; i < nreq; i++)
        nstdout += strcmp(req[i].out, "-") == 0;
    if (nstdout > 1)
        return lp_free(paths), cli_usage("export", "only one output can go to stdout");
    lp_trace *t0 = NULL;
    int data_errors = 0;
    int rc = cli_load_trace(&lo, paths, npaths, &t0, &data_errors);
    const char *source = npaths == 1 ? paths[0] : NULL;
    if (rc) {
        lp_free(paths);
        return rc;
    }
    /* the window */
    lp_trace *t = t0, *wt = NULL;
    lp_error err;
    lp_error_clear(&err);
    if (from_s || to_s) {
        int64_t from = t0->tmin, to = t0->tmax;
        if ((from_s && cli_parse_time(from_s, t0->tmin, &from)) || (to_s && cli_parse_time(to_s, t0->tmin, &to))) {
            lp_trace_free(t0);
            lp_free(paths);
            return cli_usage("export", "bad time '%s' (ns, or a number with ns/us/ms/s; '+' = after the trace start)",
                             from_s && cli_parse_time(from_s, 0, &from) ? from_s : to_s);
        }
        if (to < from) {
            lp_trace_free(t0);
            lp_free(paths);
            return cli_usage("export", "--to (%lld) is before --from (%lld)", (long long)to, (long long)from);
        }
        if (lp_trace_window(t0, from, to, &wt, &err)) {
            lp_trace_free(t0);
            lp_free(paths);
            return cli_fail("export", &err);
        }
        t = wt;
    }
    /* the critical path, when a kind wants it */
    int want_cp = 0;
    for (int i = 0; i < nreq; i++)
        want_cp |= req[i].kind->needs_cp;
    lp_pag g;
    lp_cpath cp;
    int have_cp = 0;
    rc = LP_EXIT_OK;
    if (want_cp && !no_cp && t->nacts) {
        if (lp_pag_build(t, &g, &err)) {
            rc = cli_fail("export", &err);
        } else {
            if (lp_cpath_compute(&g, &cp, &err))
                rc = cli_fail("export", &err);
            else
                have_cp = 1;
            lp_pag_release(&g);
        }
    }
    export_ctx x = {t, have_cp ? &cp : NULL, source, no_gaps};
    for (int i = 0; i < nreq && rc == LP_EXIT_OK; i++)
        rc = run_one(&req[i], &x);
    if (have_cp)
        lp_cpath_release(&cp);
    lp_trace_free(wt);
    lp_trace_free(t0);
    lp_free(paths);
    if (rc)
        return rc;
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
