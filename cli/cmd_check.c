/* cmd_check.c: `longpole check`: SnailTrail App. A.2 instrumentation properties and the
 * format rules; the exit status says whether the trace is clean. */
#include "cli.h"
#include "base/util.h"

#include <string.h>

const char cli_help_check[] =
    "usage: longpole check [--json] [--from T --to T] [--top N] TRACE...\n"
     "\n"
     "Instrumentation requirements of SnailTrail App. A.2, without which critical paths are\n"
     "ill-defined:\n"
     "  Property 1: every event after the start has an incoming edge (a worker that starts\n"
     "              later with no message received at that instant is reported);\n"
     "  Property 2: never are all active workers waiting while no message is in flight\n"
     "              (reported as maximal intervals, with the waiting workers).\n"
     "Also reports every format-rule diagnostic of the input (MODEL.md rules).\n"
     "exit status: 0 clean, 1 not clean, >= 2 the trace could not be checked.\n";

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

int cmd_check(int argc, char **argv)
{
    cli_load lo = {0};
    const char *v, *from_s = NULL, *to_s = NULL;
    int json = 0;
    uint64_t top = 20;
    char **paths = lp_malloc((size_t)argc * sizeof *paths);
    int npaths = 0;
    if (!paths)
        return LP_EXIT_NOMEM;
    for (int i = 1; i < argc; i++) {
        int lrc = cli_load_option("check", argc, argv, &i, &lo);
        if (lrc < 0)
            return lp_free(paths), LP_EXIT_USAGE;
        if (lrc)
            continue;
        if (cli_flag(argv, i, "--json")) {
            json = 1;
        } else if (cli_opt(argc, argv, &i, "--from", &from_s)) {
            if (!from_s)
                return lp_free(paths), cli_usage("check", "--from needs a time");
        } else if (cli_opt(argc, argv, &i, "--to", &to_s)) {
            if (!to_s)
                return lp_free(paths), cli_usage("check", "--to needs a time");
        } else if (cli_opt(argc, argv, &i, "--top", &v)) {
            if (!v || cli_parse_count(v, &top))
                return lp_free(paths), cli_usage("check", "--top needs a number");
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return lp_free(paths), cli_usage("check", "unknown option '%s'", argv[i]);
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (!npaths)
        return lp_free(paths), cli_usage("check", "no trace given");
    /* load, keeping the diagnostics counts for the verdict */
    lp_diags ds;
    lp_diags_init(&ds, lo.quiet ? 0 : (lo.max_diags ? lo.max_diags : 20));
    lp_load_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.format = lo.format;
    if (cli_progress_enabled())
        opts.progress = cli_progress;
    lp_error err;
    lp_error_clear(&err);
    lp_trace *t = NULL;
    lp_status st = lp_trace_load((const char *const *)paths, (size_t)npaths, &opts, &ds, &t, &err);
    lp_free(paths);
    cli_progress_done();
    cli_print_diags(&ds, lo.quiet ? 0 : (lo.max_diags ? lo.max_diags : 20));
    if (st) {
        lp_diags_release(&ds);
        return cli_fail("check", &err);
    }
    int64_t from = t->tmin, to = t->tmax;
    if ((from_s && cli_parse_time(from_s, t->tmin, &from)) || (to_s && cli_parse_time(to_s, t->tmin, &to)) ||
        to < from) {
        lp_trace_free(t);
        lp_diags_release(&ds);
        return cli_usage("check", "bad --from/--to");
    }
    if (from_s || to_s) {
        lp_trace *wt;
        if (lp_trace_window(t, from, to, &wt, &err)) {
            lp_trace_free(t);
            lp_diags_release(&ds);
            return cli_fail("check", &err);
        }
        lp_trace_free(t);
        t = wt;
    }
    lp_pag g;
    lp_check c;
    cli_progress_items("analysing", 0, 0); /* issue 6 */
    if (lp_pag_build(t, &g, &err) || lp_check_run(&g, &c, &err)) {
        lp_trace_free(t);
        lp_diags_release(&ds);
        return cli_fail("check", &err);
    }
    cli_progress_done(); /* issue 6 */
    int clean = c.np1 == 0 && c.np2 == 0 && ds.nerrors == 0 && ds.nwarnings == 0;
    if (json) {
        lp_jsonw j;
        lp_jsonw_init(&j, stdout, 0);
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
        lp_jsonw_kstr(&j, "command", "check");
        lp_jsonw_kbool(&j, "clean", clean);
        lp_jsonw_key(&j, "property1");
        lp_jsonw_arr(&j);
        for (size_t i = 0; i < c.np1; i++) {
            lp_jsonw_obj(&j);
            lp_jsonw_kstr(&j, "worker", lp_trace_worker_name(t, c.p1[i].worker));
            lp_jsonw_ki64(&j, "time", c.p1[i].time);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
        lp_jsonw_key(&j, "property2");
        lp_jsonw_arr(&j);
        for (size_t i = 0; i < c.np2; i++) {
            lp_jsonw_obj(&j);
            lp_jsonw_ki64(&j, "from", c.p2[i].from);
            lp_jsonw_ki64(&j, "to", c.p2[i].to);
            lp_jsonw_ku64(&j, "waiting_workers", c.p2[i].nactive);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
        lp_jsonw_ki64(&j, "property2_ns", c.p2_ns);
        lp_jsonw_key(&j, "input");
        lp_jsonw_obj(&j);
        lp_jsonw_ku64(&j, "errors", ds.nerrors);
        lp_jsonw_ku64(&j, "warnings", ds.nwarnings);
        lp_jsonw_key(&j, "by_rule");
        lp_jsonw_obj(&j);
        for (int r = 0; r < LP_RULE_COUNT; r++)
            if (ds.count[r])
                lp_jsonw_ku64(&j, lp_rule_name((lp_rule)r), ds.count[r]);
        lp_jsonw_obj_end(&j);
        lp_jsonw_key(&j, "messages");
        lp_jsonw_arr(&j);
        for (size_t i = 0; i < ds.nkept; i++) {
            char buf[1024];
            lp_diag_format(buf, sizeof buf, &ds.kept[i]);
            lp_jsonw_str(&j, buf);
        }
        lp_jsonw_arr_end(&j);
        lp_jsonw_obj_end(&j);
        lp_jsonw_obj_end(&j);
        lp_jsonw_end(&j);
    } else {
        char d[32];
        printf("Property 1 (every event after the start has a cause): %s\n",
               c.np1 ? "VIOLATED" : "holds");
        for (size_t i = 0; i < c.np1 && i < top; i++)
            printf("  worker %s starts at %lld with no incoming message or activity\n",
                   lp_trace_worker_name(t, c.p1[i].worker), (long long)c.p1[i].time);
        if (c.np1 > top)
            printf("  ... %zu more\n", c.np1 - (size_t)top);
        printf("Property 2 (never all workers waiting with nothing in flight): %s\n",
               c.np2 ? "VIOLATED" : "holds");
        if (c.np2)
            printf("  %zu interval(s), %s in all\n", c.np2, lp_fmt_dur(c.p2_ns, d, sizeof d));
        for (size_t i = 0; i < c.np2 && i < top; i++) {
            printf("  [%lld, %lld] (%s): all %u active workers wait: ", (long long)c.p2[i].from,
                   (long long)c.p2[i].to, lp_fmt_dur(c.p2[i].to - c.p2[i].from, d, sizeof d), c.p2[i].nactive);
            print_waiters(&g, t, c.p2[i].from, c.p2[i].to, 8);
            printf("\n");
        }
        if (c.np2 > top)
            printf("  ... %zu more\n", c.np2 - (size_t)top);
        printf("format rules: %llu error(s), %llu warning(s)\n", (unsigned long long)ds.nerrors,
               (unsigned long long)ds.nwarnings);
        printf("%s\n", clean ? "clean" : "NOT clean: the critical paths of this trace may be wrong (see above)");
    }
    lp_check_release(&c);
    lp_pag_release(&g);
    lp_trace_free(t);
    lp_diags_release(&ds);
    if (fflush(stdout) != 0)
        return LP_EXIT_IO;
    return clean ? LP_EXIT_OK : LP_EXIT_FINDINGS;
}
