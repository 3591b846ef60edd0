/* load.c: loading a trace as every trace command does: the loading options (declared
 * once here, shared by the commands through CLI_LOAD_GROUPS), the diagnostics printed
 * (the first --max-errors in full, then counts by rule), --strict. */
#include "cli.h"

#include <limits.h>
#include <string.h>

const cli_opt cli_format_opts[] = {
    {"--format", .kind = CLI_STR, .arg = "F", CLI_AT(cli_load, format), .err = "--format needs a value",
     .example = "lpt", .help = "force the input format (lpt, lptb, or an importer's name:\n`longpole help formats`)"},
    {"--merge", .kind = CLI_FLAG, CLI_AT(cli_load, merge),
     .help = "make several inputs one trace even when their times do not overlap\n(default: separate runs are refused, or "
             "analysed one by one by cp;\ndocs/trust.md)"},
    CLI_END,
};

const cli_opt cli_diag_opts[] = {
    {"--strict", .kind = CLI_FLAG, CLI_AT(cli_load, strict),
     .help = "stop if the input has errors (default: skip bad records, analyse\nthe rest, exit 4)"},
    {"-q", "--quiet", .kind = CLI_FLAG, CLI_AT(cli_load, quiet), .help = "print only the counts of the input's diagnostics"},
    {"--max-errors", .kind = CLI_COUNT, .arg = "N", CLI_AT(cli_load, max_diags), .err = "--max-errors needs a number",
     .example = "5", .help = "diagnostics printed in full (default 20)"},
    CLI_END,
};

void cli_print_diags(const lp_diags *ds, size_t max) { cli_print_diags_as(ds, max, "input"); }

void cli_print_diags_as(const lp_diags *ds, size_t max, const char *label)
{
    char buf[1024];
    size_t shown = 0;
    for (size_t i = 0; i < ds->nkept && shown < max; i++, shown++) {
        lp_diag_format(buf, sizeof buf, &ds->kept[i]);
        fprintf(stderr, "%s\n", buf);
    }
    uint64_t total = ds->nerrors + ds->nwarnings + ds->nnotes;
    if (total > shown && max) /* -q (max 0): only the counts below */
        fprintf(stderr, "... and %llu more\n", (unsigned long long)(total - shown));
    if (total) {
        fprintf(stderr, "%s: %llu error%s, %llu warning%s (", label, (unsigned long long)ds->nerrors,
                ds->nerrors == 1 ? "" : "s", (unsigned long long)ds->nwarnings, ds->nwarnings == 1 ? "" : "s");
        int first = 1;
        for (int r = 0; r < LP_RULE_COUNT; r++)
            if (ds->count[r]) {
                fprintf(stderr, "%s%s: %llu", first ? "" : ", ", lp_rule_name((lp_rule)r),
                        (unsigned long long)ds->count[r]);
                first = 0;
            }
        fprintf(stderr, ")\n");
    }
}

int cli_find_runs(const cli_load *o, char **paths, int npaths, lp_runs *runs)
{
    lp_diags ds;
    size_t max = o->max_diags ? o->max_diags : 20;
    lp_diags_init(&ds, o->quiet ? 0 : max);
    lp_load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.format = o->format;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_load_runs((const char *const *)paths, (size_t)npaths, &lo, &ds, runs, &err);
    if (!st && runs->n > 1)
        cli_print_diags(&ds, o->quiet ? 0 : max);
    lp_diags_release(&ds);
    if (st) {
        fprintf(stderr, "longpole: %s\n", err.msg[0] ? err.msg : lp_status_str(st));
        return cli_exit_for(st);
    }
    return 0;
}

/* Several runs given to a command that analyses one trace: refused, with the remedy. */
static int refuse_runs(char **paths, int npaths, const cli_load *o)
{
    lp_runs r;
    int rc = cli_find_runs(o, paths, npaths, &r);
    if (rc || r.n < 2) {
        if (!rc)
            lp_runs_release(&r);
        return rc;
    }
    fprintf(stderr, "longpole: these inputs are %zu separate runs (their times do not overlap, so they are not one "
                    "trace):\n", r.n);
    for (size_t k = 0; k < r.n; k++)
        fprintf(stderr, "  run %zu: %s%s (%zu file%s)\n", k + 1, r.paths[r.first[k]],
                r.first[k + 1] - r.first[k] > 1 ? " ..." : "", r.first[k + 1] - r.first[k],
                r.first[k + 1] - r.first[k] == 1 ? "" : "s");
    fprintf(stderr, "analyse each on its own (`longpole cp` does it run by run), or give --merge to make them one "
                    "trace\n");
    lp_runs_release(&r);
    return LP_EXIT_USAGE;
}

int cli_load_trace(const cli_load *o, char **paths, int npaths, lp_trace **out, int *data_errors)
{
    *out = NULL;
    *data_errors = 0;
    int rc0 = o->merge ? 0 : refuse_runs(paths, npaths, o);
    if (rc0)
        return rc0;
    lp_diags ds;
    size_t max = o->max_diags ? o->max_diags : 20;
    lp_diags_init(&ds, o->quiet ? 0 : max);
    lp_load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.format = o->format;
    if (!o->no_progress && cli_progress_enabled()) {
        lo.progress = cli_progress;
    }
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_trace_load((const char *const *)paths, (size_t)npaths, &lo, &ds, out, &err);
    cli_progress_done();
    cli_print_diags(&ds, o->quiet ? 0 : max);
    *data_errors = ds.nerrors > INT_MAX ? INT_MAX : (int)ds.nerrors; /* a count: callers test it, export stores it */
    lp_diags_release(&ds);
    if (st) {
        fprintf(stderr, "longpole: %s\n", err.msg[0] ? err.msg : lp_status_str(st));
        return cli_exit_for(st);
    }
    if (*data_errors && o->strict) {
        fprintf(stderr, "longpole: the input has errors and --strict was given; stopping\n");
        lp_trace_free(*out);
        *out = NULL;
        return LP_EXIT_DATA;
    }
    return 0;
}
