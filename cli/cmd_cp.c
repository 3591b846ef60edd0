/* cmd_cp.c: `longpole cp`: the whole-trace critical path, its breakdown by type, worker
 * and operator, and the conventional profile beside it (text or JSON; cp_print.c). With
 * --thread, the critical path of one thread of kernel traces instead (cmd_kcp.c). */
#include "cli.h"

#include <string.h>

typedef struct cp_args {
    cli_load load;
    int json;
    const char *from, *to;
    uint64_t path_limit, top;
} cp_args;

static void cp_init(void *p)
{
    cp_args *a = p;
    a->path_limit = 40;
    a->top = 10;
}

/* --path N|all */
static int parse_path(void *dst, const char *v, char *msg, size_t n)
{
    if (strcmp(v, "all") == 0) {
        *(uint64_t *)dst = 0;
        return 0;
    }
    return cli_parse_count(v, dst);
}

static const cli_opt cp_opts[] = {
    {"--json", .kind = CLI_FLAG, CLI_AT(cp_args, json), .help = "one JSON document (schema: docs/formats/cp-json.md)"},
    {"--from", .kind = CLI_TIME, .arg = "T", CLI_AT(cp_args, from), .err = "--from needs a time", .example = "+1ns",
     .help = ""},
    {"--to", .kind = CLI_TIME, .arg = "T", CLI_AT(cp_args, to), .err = "--to needs a time", .example = "1s",
     .help = "restrict to an interval (projection, SnailTrail Def. 5-6); T is ns,\n"
             "or a number with ns/us/ms/s/m/h; +T means T after the trace start"},
    {"--path", .kind = CLI_FN, .arg = "N|all", CLI_AT(cp_args, path_limit), .fn = parse_path,
     .err = "--path needs a number or 'all'", .example = "all",
     .help = "path rows to print (default 40: the first and last 20)"},
    {"--top", .kind = CLI_COUNT, .arg = "N", CLI_AT(cp_args, top), .err = "--top needs a number", .example = "3",
     .help = "rows per breakdown (default 10, 0 = all)"},
    CLI_END,
};

const cli_spec cli_spec_cp = {
    .cmd = "cp",
    .usage = "usage: longpole cp [OPTIONS] TRACE...\n",
    .about = "The whole-trace critical path (classic CPA; SnailTrail §2, Definition 4; MODEL.md\n"
             "\"Critical paths\"): the longest path of the program activity graph that ends at the\n"
             "trace's last event and uses no `waiting` edge. Printed as activities (worker, type,\n"
             "operator, start, end, duration) and messages (sender -> receiver), with its total,\n"
             "then broken down by activity type, worker and operator next to the conventional\n"
             "profile (the plain sum of durations by the same keys, SnailTrail §3.3): what a\n"
             "profiler would have blamed instead. Times are printed in ns after the trace start.\n"
             "It opens with the answer (the headline). Inputs whose times do not overlap are\n"
             "separate runs, each analysed on its own (--merge makes them one trace); an input or\n"
             "window with no activity is refused (exit 9). docs/trust.md.\n",
    .groups = {CLI_OWN("options:", cp_opts), CLI_LOAD_GROUPS(cp_args, load)},
    .notes = "ties: the latest end vertex, then the path reaching back furthest, then the lowest\n"
             "worker; at a vertex the worker's own activity beats a message of equal reach, and the\n"
             "message listed first in the trace beats later ones (docs/analyses/critical-path.md).\n",
    .size = sizeof(cp_args),
    .init = cp_init,
};

/* --from/--to against the trace's start. */
static int resolve_window(const cp_args *a, const lp_trace *t, cli_cp_opts *o)
{
    o->windowed = a->from || a->to;
    o->from = t->tmin, o->to = t->tmax;
    if (a->from && cli_parse_time(a->from, t->tmin, &o->from))
        return cli_usage("cp", "bad --from time '%s' (ns, or a number with ns/us/ms/s; '+' = after the trace start)",
                         a->from);
    if (a->to && cli_parse_time(a->to, t->tmin, &o->to))
        return cli_usage("cp", "bad --to time '%s'", a->to);
    int rc;
    if (o->windowed && (rc = cli_refuse_window("cp", t, NULL, o->from, o->to))) /* before --to < --from: past the end */
        return rc;
    if (o->windowed && o->to < o->from)
        return cli_usage("cp", "--to (%lld) is before --from (%lld)", (long long)o->to, (long long)o->from);
    return 0;
}

/* Inputs that are several runs (runs.h; no --merge): each analysed on its own, one
 * section (or JSON document, one per line) per run; the exit status is the worst. */
static int cp_runs(const cp_args *a, const lp_runs *r)
{
    cli_load one = a->load;
    one.merge = 1;
    int worst = 0;
    if (!a->json)
        printf("%zu separate runs (their times do not overlap, so they are not one trace): each is analysed on its "
               "own; --merge makes them one trace\n", r->n);
    for (size_t k = 0; k < r->n; k++) {
        size_t n = r->first[k + 1] - r->first[k];
        if (!a->json) {
            printf("\n== run %zu of %zu: %s", k + 1, r->n, r->paths[r->first[k]]);
            if (n > 1)
                printf(" and %zu more file%s", n - 1, n == 2 ? "" : "s");
            printf("\n\n");
        }
        fflush(stdout);
        lp_trace *t = NULL;
        int data_errors = 0;
        int rc = cli_load_trace(&one, r->paths + r->first[k], (int)n, &t, &data_errors);
        cli_cp_opts o = {a->json, a->path_limit, a->top, 0, 0, 0, r, k};
        if (!rc && !(rc = resolve_window(a, t, &o)))
            rc = cli_cp_print(t, &o, data_errors);
        lp_trace_free(t);
        worst = rc > worst ? rc : worst;
    }
    return worst;
}

int cmd_cp(int argc, char **argv)
{
    if (cli_has(argc, argv, "--thread")) /* a thread of kernel traces (cmd_kcp.c) */
        return cli_cp_thread(argc, argv);
    cp_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_cp, argc, argv, &a, &rest);
    if (rc)
        return rc;
    lp_trace *t = NULL;
    int data_errors = 0;
    lp_runs runs;
    memset(&runs, 0, sizeof runs);
    int done = 0; /* analysed run by run */
    if (!rest.n)
        rc = cli_usage("cp", "no trace given");
    else if (!a.load.merge && !(rc = cli_find_runs(&a.load, rest.operands, rest.n, &runs)) && runs.n > 1) {
        rc = cp_runs(&a, &runs);
        done = 1;
    } else if (!rc) {
        a.load.merge = 1; /* one run: checked */
        rc = cli_load_trace(&a.load, rest.operands, rest.n, &t, &data_errors);
    }
    lp_runs_release(&runs);
    cli_args_release(&cli_spec_cp, &a, &rest);
    if (rc || done)
        return rc;
    cli_cp_opts o = {a.json, a.path_limit, a.top, 0, 0, 0, NULL, 0};
    if (!(rc = resolve_window(&a, t, &o)))
        rc = cli_cp_print(t, &o, data_errors);
    lp_trace_free(t);
    return rc;
}
