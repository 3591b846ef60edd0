/* cmd_check.c: `longpole check`: SnailTrail App. A.2 instrumentation properties and the
 * format rules; the exit status says whether the trace is clean. Stages: options, load
 * (keeping the diagnostics' counts for the verdict), window, check, print. */
#include "cli.h"
#include "base/util.h"

#include <string.h>

typedef struct check_args {
    cli_load load;
    int json;
    const char *from, *to;
    uint64_t top;
} check_args;

static void check_init(void *p) { ((check_args *)p)->top = 20; }

static const cli_opt check_opts[] = {
    {"--json", .kind = CLI_FLAG, CLI_AT(check_args, json), .help = "one JSON document"},
    {"--from", .kind = CLI_TIME, .arg = "T", CLI_AT(check_args, from), .err = "--from needs a time", .example = "0",
     .help = ""},
    {"--to", .kind = CLI_TIME, .arg = "T", CLI_AT(check_args, to), .err = "--to needs a time", .example = "+1s",
     .help = "check the window [T, T'] only (T is ns or has a unit; +T is after\nthe trace start)"},
    {"--top", .kind = CLI_COUNT, .arg = "N", CLI_AT(check_args, top), .err = "--top needs a number", .example = "3",
     .help = "violations listed per property (default 20)"},
    CLI_END,
};

const cli_spec cli_spec_check = {
    .cmd = "check",
    .usage = "usage: longpole check [--json] [--from T --to T] [--top N] TRACE...\n",
    .about = "Instrumentation requirements of SnailTrail App. A.2, without which critical paths are\n"
             "ill-defined:\n"
             "  Property 1: every event after the start has an incoming edge (a worker that starts\n"
             "              later with no message received at that instant is reported);\n"
             "  Property 2: never are all active workers waiting while no message is in flight\n"
             "              (reported as maximal intervals, with the waiting workers).\n"
             "Also reports every format-rule diagnostic of the input (MODEL.md rules).\n",
    .groups = {CLI_OWN("options:", check_opts), CLI_LOAD_GROUPS(check_args, load)},
    .notes = "exit status: 0 clean, 1 not clean, >= 2 the trace could not be checked.\n",
    .size = sizeof(check_args),
    .init = check_init,
};

/* Workers whose span covers the open interval (from, to): all of them are waiting. */
static void print_waiters(const lp_pag *g, const lp_trace *t, int64_t from, int64_t to, size_t max)
{
    size_t n = 0;
    for (uint32_t w = 0; w < g->nworkers; w++) {
        if (g->voff[w] == g->voff[w + 1])
            continue;
        if (g->vtime[g->voff[w]] <= from && g->vtime[g->voff[w + 1] - 1] >= to) {
            if (n < max)
                printf("%s%s", n ? ", " : "", lp_trace_worker_name(t, w));
            n++;
        }
    }
    if (n > max)
        printf(", ... (%zu in all)", n);
}

static void print_json(const lp_trace *t, const lp_check *c, const lp_diags *ds, int clean)
{
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(&j, "command", "check");
    lp_jsonw_kbool(&j, "clean", clean);
    lp_jsonw_key(&j, "property1");
    lp_jsonw_arr(&j);
    for (size_t i = 0; i < c->np1; i++) {
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "worker", lp_trace_worker_name(t, c->p1[i].worker));
        lp_jsonw_ki64(&j, "time", c->p1[i].time);
        lp_jsonw_obj_end(&j);
    }
    lp_jsonw_arr_end(&j);
    lp_jsonw_key(&j, "property2");
    lp_jsonw_arr(&j);
    for (size_t i = 0; i < c->np2; i++) {
        lp_jsonw_obj(&j);
        lp_jsonw_ki64(&j, "from", c->p2[i].from);
        lp_jsonw_ki64(&j, "to", c->p2[i].to);
        lp_jsonw_ku64(&j, "waiting_workers", c->p2[i].nactive);
        lp_jsonw_obj_end(&j);
    }
    lp_jsonw_arr_end(&j);
    lp_jsonw_ki64(&j, "property2_ns", c->p2_ns);
    lp_jsonw_key(&j, "input");
    lp_jsonw_obj(&j);
    lp_jsonw_ku64(&j, "errors", ds->nerrors);
    lp_jsonw_ku64(&j, "warnings", ds->nwarnings);
    lp_jsonw_key(&j, "by_rule");
    lp_jsonw_obj(&j);
    for (int r = 0; r < LP_RULE_COUNT; r++)
        if (ds->count[r])
            lp_jsonw_ku64(&j, lp_rule_name((lp_rule)r), ds->count[r]);
    lp_jsonw_obj_end(&j);
    lp_jsonw_key(&j, "messages");
    lp_jsonw_arr(&j);
    for (size_t i = 0; i < ds->nkept; i++) {
        char buf[1024];
        lp_diag_format(buf, sizeof buf, &ds->kept[i]);
        lp_jsonw_str(&j, buf);
    }
    lp_jsonw_arr_end(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

static void print_text(const lp_pag *g, const lp_trace *t, const lp_check *c, const lp_diags *ds, int clean,
                       uint64_t top)
{
    char d[32];
    printf("Property 1 (every event after the start has a cause): %s\n", c->np1 ? "VIOLATED" : "holds");
    for (size_t i = 0; i < c->np1 && i < top; i++)
        printf("  worker %s starts at %lld with no incoming message or activity\n",
               lp_trace_worker_name(t, c->p1[i].worker), (long long)c->p1[i].time);
    if (c->np1 > top)
        printf("  ... %zu more\n", c->np1 - (size_t)top);
    printf("Property 2 (never all workers waiting with nothing in flight): %s\n", c->np2 ? "VIOLATED" : "holds");
    if (c->np2)
        printf("  %zu interval(s), %s in all\n", c->np2, lp_fmt_dur(c->p2_ns, d, sizeof d));
    for (size_t i = 0; i < c->np2 && i < top; i++) {
        printf("  [%lld, %lld] (%s): all %u active workers wait: ", (long long)c->p2[i].from, (long long)c->p2[i].to,
               lp_fmt_dur(c->p2[i].to - c->p2[i].from, d, sizeof d), c->p2[i].nactive);
        print_waiters(g, t, c->p2[i].from, c->p2[i].to, 8);
        printf("\n");
    }
    if (c->np2 > top)
        printf("  ... %zu more\n", c->np2 - (size_t)top);
    printf("format rules: %llu error(s), %llu warning(s)\n", (unsigned long long)ds->nerrors,
           (unsigned long long)ds->nwarnings);
    printf("%s\n", clean ? "clean" : "NOT clean: the critical paths of this trace may be wrong (see above)");
}

/* Load, keeping every diagnostic count in ds (the verdict needs them). */
static int load(const check_args *a, const cli_args *rest, lp_diags *ds, lp_trace **t)
{
    size_t max = a->load.quiet ? 0 : (a->load.max_diags ? a->load.max_diags : 20);
    lp_diags_init(ds, max);
    lp_load_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.format = a->load.format;
    if (cli_progress_enabled())
        opts.progress = cli_progress;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_trace_load((const char *const *)rest->operands, (size_t)rest->n, &opts, ds, t, &err);
    cli_progress_done();
    cli_print_diags(ds, max);
    return st ? cli_fail("check", &err) : 0;
}

/* The window of --from/--to, replacing *t. */
static int window(const check_args *a, lp_trace **t)
{
    int64_t from = (*t)->tmin, to = (*t)->tmax;
    if ((a->from && cli_parse_time(a->from, (*t)->tmin, &from)) || (a->to && cli_parse_time(a->to, (*t)->tmin, &to)) ||
        to < from)
        return cli_usage("check", "bad --from/--to");
    if (!a->from && !a->to)
        return 0;
    lp_trace *wt;
    lp_error err;
    lp_error_clear(&err);
    if (lp_trace_window(*t, from, to, &wt, &err))
        return cli_fail("check", &err);
    int rc = cli_refuse_window("check", *t, wt, from, to); /* nothing to check is no clean trace */
    if (rc) {
        lp_trace_free(wt);
        return rc;
    }
    lp_trace_free(*t);
    *t = wt;
    return 0;
}

int cmd_check(int argc, char **argv)
{
    check_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_check, argc, argv, &a, &rest);
    if (rc)
        return rc;
    lp_diags ds;
    lp_trace *t = NULL;
    if (!rest.n) {
        cli_args_release(&cli_spec_check, &a, &rest);
        return cli_usage("check", "no trace given");
    }
    rc = load(&a, &rest, &ds, &t);
    cli_args_release(&cli_spec_check, &a, &rest);
    if (!rc)
        rc = cli_refuse_empty("check", t);
    if (!rc)
        rc = window(&a, &t);
    lp_pag g;
    lp_check c;
    lp_error err;
    lp_error_clear(&err);
    int have_g = 0, have_c = 0;
    if (!rc) {
        cli_progress_items("analysing", 0, 0); /* issue 6 */
        if (!(have_g = !lp_pag_build(t, &g, &err)) || !(have_c = !lp_check_run(&g, &c, &err)))
            rc = cli_fail("check", &err);
        cli_progress_done(); /* issue 6 */
    }
    int clean = 0;
    if (!rc) {
        clean = c.np1 == 0 && c.np2 == 0 && ds.nerrors == 0 && ds.nwarnings == 0;
        if (a.json)
            print_json(t, &c, &ds, clean);
        else
            print_text(&g, t, &c, &ds, clean, a.top);
        rc = fflush(stdout) != 0 ? LP_EXIT_IO : clean ? LP_EXIT_OK : LP_EXIT_FINDINGS;
    }
    if (have_c)
        lp_check_release(&c);
    if (have_g)
        lp_pag_release(&g);
    lp_trace_free(t);
    lp_diags_release(&ds);
    return rc;
}
