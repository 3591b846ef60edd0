/* cmd_export.c: `longpole export`: write a loaded trace (any readable format) to other
 * tools' formats. The kinds are a table: a new kind is one entry (its option, what it
 * writes, whether it needs the critical path, and a function that writes one output)
 * plus its option in kind_opts (which adds a request for it); the loading, windowing
 * and critical-path steps are shared. Kinds: --chrome (Chrome Trace Event Format,
 * chrome_export.h). `--sqlite` is a form of its own (export_sqlite.c).
 */
#include "cli.h"
#include "longpole/export/chrome_export.h"

#include <errno.h>
#include <string.h>

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

/* ---- options ------------------------------------------------------------------------- */

typedef struct export_args {
    cli_load load;
    request req[MAX_OUTPUTS];
    int nreq;
    int no_cp, no_gaps;
    const char *from, *to;
} export_args;

static int add_request(export_args *a, const export_kind *k, const char *out, char *msg, size_t n)
{
    if (a->nreq == MAX_OUTPUTS) {
        snprintf(msg, n, "at most %d outputs at once", MAX_OUTPUTS);
        return -1;
    }
    a->req[a->nreq].kind = k;
    a->req[a->nreq].out = out;
    a->nreq++;
    return 0;
}

static int add_chrome(void *dst, const char *v, char *msg, size_t n) { return add_request(dst, &kinds[0], v, msg, n); }

#define A(m) CLI_AT(export_args, m)

static const cli_opt kind_opts[] = {
    {"--chrome", .kind = CLI_FN, .arg = "FILE", CLI_WHOLE(export_args), .fn = add_chrome,
     .err = "--chrome needs an output file (\"-\" for stdout)", .example = "-",
     .help = "Chrome Trace Event Format JSON for Perfetto UI (ui.perfetto.dev) and\n"
             "chrome://tracing: workers as threads (one process per host or pid\n"
             "attribute), activities as slices, messages as flow arrows, and the\n"
             "critical path as its own track plus flow arrows (search \"critical\");\n"
             "exact ns timestamps; \"-\" writes to stdout (docs/export.md)"},
    CLI_END,
};

static const cli_opt export_opts[] = {
    {"--from", .kind = CLI_TIME, .arg = "T", A(from), .err = "--from needs a time", .example = "0", .help = ""},
    {"--to", .kind = CLI_TIME, .arg = "T", A(to), .err = "--to needs a time", .example = "+1s",
     .help = "export the window [T, T'] only (SnailTrail Def. 5-6 projection:\n"
             "activities cut at its edges); its critical path is the window's.\n"
             "T is ns or a number with ns/us/ms/s; \"+T\" is after the trace start"},
    {"--no-cp", .kind = CLI_FLAG, A(no_cp), .help = "do not compute or mark the critical path"},
    {"--no-gaps", .kind = CLI_FLAG, A(no_gaps),
     .help = "leave out the gaps (waiting/unknown time filled by the reader)"},
    CLI_END,
};

#undef A

const cli_spec cli_spec_export = {
    .cmd = "export",
    .usage = "usage: longpole export KIND OUT [KIND OUT ...] [OPTIONS] TRACE...\n"
             "       longpole export --sqlite OUT.db [OPTIONS] INPUT...\n",
    .about = "Write the trace (any readable format; several files are merged) for other tools.\n",
    .groups = {CLI_OWN("kinds:", kind_opts), CLI_OWN("options:", export_opts), CLI_LOAD_GROUPS(export_args, load)},
    .notes = "Exit status 4 when the input had errors (the export is still written).\n",
    .size = sizeof(export_args),
};

/* ---- the command ------------------------------------------------------------------------ */

/* --from/--to: the window of t0 (*wt stays NULL without them). */
static int window(const export_args *a, const lp_trace *t0, lp_trace **wt)
{
    *wt = NULL;
    if (!a->from && !a->to)
        return 0;
    int64_t from = t0->tmin, to = t0->tmax;
    if ((a->from && cli_parse_time(a->from, t0->tmin, &from)) || (a->to && cli_parse_time(a->to, t0->tmin, &to)))
        return cli_usage("export", "bad time '%s' (ns, or a number with ns/us/ms/s; '+' = after the trace start)",
                         a->from && cli_parse_time(a->from, 0, &from) ? a->from : a->to);
    if (to < from)
        return cli_usage("export", "--to (%lld) is before --from (%lld)", (long long)to, (long long)from);
    lp_error err;
    lp_error_clear(&err);
    if (lp_trace_window(t0, from, to, wt, &err))
        return cli_fail("export", &err);
    return 0;
}

/* Write every output, with the critical path when a kind wants it (unless --no-cp). */
static int write_all(const export_args *a, const lp_trace *t, const char *source)
{
    int want_cp = 0;
    for (int i = 0; i < a->nreq; i++)
        want_cp |= a->req[i].kind->needs_cp;
    lp_cpath cp;
    int have_cp = 0, rc = LP_EXIT_OK;
    lp_error err;
    lp_error_clear(&err);
    if (want_cp && !a->no_cp && t->nacts) { /* the path alone: no PAG (cpath.h) */
        if (lp_cpath_trace(t, &cp, &err))
            rc = cli_fail("export", &err);
        else
            have_cp = 1;
    }
    export_ctx x = {t, have_cp ? &cp : NULL, source, a->no_gaps};
    for (int i = 0; i < a->nreq && rc == LP_EXIT_OK; i++)
        rc = run_one(&a->req[i], &x);
    if (have_cp)
        lp_cpath_release(&cp);
    return rc;
}

static int check_args(const export_args *a, const cli_args *rest)
{
    if (!a->nreq)
        return cli_usage("export", "no export kind given (e.g. --chrome OUT.json)");
    if (!rest->n)
        return cli_usage("export", "no trace given");
    int nstdout = 0;
    for (int i = 0; i < a->nreq; i++)
        nstdout += strcmp(a->req[i].out, "-") == 0;
    if (nstdout > 1)
        return cli_usage("export", "only one output can go to stdout");
    return 0;
}

int cmd_export(int argc, char **argv)
{
    if (cli_has(argc, argv, "--sqlite")) { /* loads and analyses on its own (export_sqlite.c) */
        if (cli_has(argc, argv, "--chrome"))
            return cli_usage("export", "--sqlite and --chrome cannot be combined: run `longpole export` once for each");
        return cli_export_sqlite(argc, argv);
    }
    export_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_export, argc, argv, &a, &rest);
    if (rc)
        return rc;
    lp_trace *t0 = NULL, *wt = NULL;
    int data_errors = 0;
    if (!(rc = check_args(&a, &rest)))
        rc = cli_load_trace(&a.load, rest.operands, rest.n, &t0, &data_errors);
    const char *source = rest.n == 1 ? rest.operands[0] : NULL;
    if (!rc && !(rc = window(&a, t0, &wt)))
        rc = write_all(&a, wt ? wt : t0, source);
    lp_trace_free(wt);
    lp_trace_free(t0);
    cli_args_release(&cli_spec_export, &a, &rest);
    if (rc)
        return rc;
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
