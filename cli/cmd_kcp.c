/* cmd_kcp.c: `longpole cp --thread`: the critical path of one thread of kernel traces
 * (LTTng CTF directories, ftrace text; docs/analyses/kernel-critical-path.md): the
 * graph is got by kload.c (read, packets matched, clocks synchronised, built; or an
 * index mapped), the thread found, its bounded (or unbounded) path and breakdown
 * computed, then printed as text or JSON (kprint.c, kjson.c) and drawn as an HTML
 * report or a Chrome trace (kview.c). A mode of `cp` (chosen by --thread) because the
 * question is the same, a critical path, asked of another kind of input. */
#include "kcli.h"

#include <string.h>

typedef struct kcp_args {
    const char *thread, *host, *from, *to, *index, *html, *chrome;
    int unbounded, no_sync, json, quiet, verify;
    uint64_t path_limit, top, max_diags;
} kcp_args;

static void kcp_init(void *p)
{
    kcp_args *a = p;
    a->path_limit = 40;
    a->top = 10;
}

static int parse_path(void *dst, const char *v, char *msg, size_t n)
{
    (void)msg, (void)n;
    if (strcmp(v, "all") == 0) {
        *(uint64_t *)dst = 0;
        return 0;
    }
    return cli_parse_count(v, dst);
}

static const cli_opt kcp_opts[] = {
    {"--thread", .kind = CLI_STR, .arg = "TID|NAME", CLI_AT(kcp_args, thread), .err = "--thread needs a thread",
     .example = "7421",
     .help = "the thread: a tid, a command name, or host/comm-tid (ambiguity is an\n"
             "error listing the candidates)"},
    {"--host", .kind = CLI_STR, .arg = "H", CLI_AT(kcp_args, host), .err = "--host needs a host name",
     .example = "scp_src", .help = "look for the thread on host H only"},
    {"--from", .kind = CLI_TIME, .arg = "T", CLI_AT(kcp_args, from), .err = "--from needs a time", .example = "+1ms",
     .help = ""},
    {"--to", .kind = CLI_TIME, .arg = "T", CLI_AT(kcp_args, to), .err = "--to needs a time", .example = "+2s",
     .help = "the query interval (default: the thread's lifetime; clamped to it); T is\n"
             "ns on the reference clock, or a number with ns/us/ms/s/m/h; +T means T\n"
             "after the thread's first event"},
    {"--unbounded", .kind = CLI_FLAG, CLI_AT(kcp_args, unbounded),
     .help = "follow every wake-up as far back as it goes (default: bounded by the\n"
             "blocked interval, Trace Compass's algorithm)"},
    {"--no-sync", .kind = CLI_FLAG, CLI_AT(kcp_args, no_sync),
     .help = "keep every host's own clock (packets are still matched and the clock\n"
             "maps they allow are printed, not applied)"},
    {"--index", .kind = CLI_STR, .arg = "F.lpkx", CLI_AT(kcp_args, index), .err = "--index needs a file",
     .example = "t.lpkx",
     .help = "map the graph persisted in F (`longpole index`) instead of reading the\n"
             "traces, after checking it was built from them as they are now; F is\n"
             "written if it does not exist; a stale or foreign F is refused (exit 8)"},
    {"--verify", .kind = CLI_FLAG, CLI_AT(kcp_args, verify),
     .help = "with --index: check every byte of F (checksum and the graph's\n"
             "invariants) even when its verification stamp F.verified vouches for it"},
    {"--json", .kind = CLI_FLAG, CLI_AT(kcp_args, json), .help = "one JSON document (docs/formats/kcp-json.md)"},
    {"--path", .kind = CLI_FN, .arg = "N|all", CLI_AT(kcp_args, path_limit), .fn = parse_path,
     .err = "--path needs a number or 'all'", .example = "all",
     .help = "path rows to print (default 40: the first and last 20)"},
    {"--top", .kind = CLI_COUNT, .arg = "N", CLI_AT(kcp_args, top), .err = "--top needs a number", .example = "3",
     .help = "rows per breakdown (default 10, 0 = all)"},
    {"--html", .kind = CLI_STR, .arg = "F", CLI_AT(kcp_args, html), .err = "--html needs a file", .example = "r.html",
     .help = "also write the HTML report of the execution graph with this path\n"
             "highlighted (`longpole help report`)"},
    {"--chrome", .kind = CLI_STR, .arg = "F", CLI_AT(kcp_args, chrome), .err = "--chrome needs a file",
     .example = "t.json", .help = "also write it as Chrome/Perfetto JSON with the path as its own track"},
    {"-q", "--quiet", .kind = CLI_FLAG, CLI_AT(kcp_args, quiet), .help = "print only the counts of the input's diagnostics"},
    {"--max-errors", .kind = CLI_COUNT, .arg = "N", CLI_AT(kcp_args, max_diags), .err = "--max-errors needs a number",
     .example = "5", .help = "diagnostics printed in full (default 20)"},
    CLI_END,
};

const cli_spec cli_spec_cp_thread = {
    .cmd = "cp",
    .usage = NULL,
    .about = "\nusage: longpole cp --thread TID|NAME [OPTIONS] TRACE...\n"
             "The critical path of one thread of kernel traces (TRACE: LTTng CTF trace\n"
             "directories, one per host, or ftrace text from `longpole record` or\n"
             "`trace-cmd report`): for every instant of the interval, what the thread was\n"
             "waiting for, end to end and across hosts. Its blocked intervals are replaced by\n"
             "the work of the thread, interrupt or packet that ended them, recursively\n"
             "(docs/analyses/kernel-critical-path.md; the distributed critical path paper\n"
             "§III-A, Trace Compass's bounded algorithm). Packets are matched across hosts\n"
             "and the hosts' clocks synchronised from them (convex hull) before the analysis.\n"
             "Printed: the path's length, its share by state and reason next to the\n"
             "thread's own profile, the threads on it; then the path's elements with their\n"
             "reasons (times in ns after the interval start); then the clocks and every\n"
             "adjustment (reordered, lost or bad events, unmatched packets, unexplained\n"
             "waits, which stay on the path flagged).\n",
    .groups = {CLI_OWN("kernel trace options (with --thread):", kcp_opts)},
    .notes = "`longpole index TRACE... -o F.lpkx` persists the graph; later queries with\n"
             "--index F.lpkx map it instead of reading the traces.\n"
             "CTF is decoded by longpole's own decoder of LTTng's packets; the environment\n"
             "variable LONGPOLE_CTF=babeltrace reads it through libbabeltrace2 instead\n"
             "(LONGPOLE_CTF=direct: never fall back to it). Metadata outside the decoder's\n"
             "subset is read through libbabeltrace2, with a note (docs/formats/ctf.md).\n",
    .size = sizeof(kcp_args),
    .init = kcp_init,
};

static int resolve_window(const char *cmd, const char *from, const char *to, const lp_kgraph *g, uint32_t w,
                          cli_kquery *q)
{
    int64_t base = g->voff[w] < g->voff[w + 1] ? g->vt[g->voff[w]] : 0;
    q->from = LP_KCP_LIFETIME_START, q->to = LP_KCP_LIFETIME_END;
    if (from && cli_parse_time(from, base, &q->from))
        return cli_usage(cmd, "bad --from time '%s' (ns, or a number with ns/us/ms/s; '+' = after the thread's "
                              "first event)", from);
    if (to && cli_parse_time(to, base, &q->to))
        return cli_usage(cmd, "bad --to time '%s'", to);
    if (from && to && q->to < q->from)
        return cli_usage(cmd, "--to (%lld) is before --from (%lld)", (long long)q->to, (long long)q->from);
    return 0;
}

int cli_kcp_query(const char *cmd, const char *from, const char *to, const cli_kgraph *k, cli_kquery *q)
{
    lp_error err;
    lp_error_clear(&err);
    uint32_t w;
    lp_status st = lp_kgraph_find_thread(k->g, q->thread, q->host, &w, &err);
    if (st)
        return cli_fail(cmd, &err);
    int rc = resolve_window(cmd, from, to, k->g, w, q);
    if (rc)
        return rc;
    if ((st = lp_kcp_compute(k->g, w, q->from, q->to, q->algo, &q->cp, &err)))
        return cli_fail(cmd, &err);
    if ((st = lp_kcp_breakdown_compute(k->g, &q->cp, &q->bd, &err)))
        return cli_fail(cmd, &err);
    return 0;
}

int cli_cp_thread(int argc, char **argv)
{
    kcp_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_cp_thread, argc, argv, &a, &rest);
    if (rc)
        return rc;
    if (!rest.n) {
        cli_args_release(&cli_spec_cp_thread, &a, &rest);
        return cli_usage("cp", "no kernel trace given (CTF directories or ftrace files)");
    }
    if (a.html && a.chrome && strcmp(a.html, "-") == 0 && strcmp(a.chrome, "-") == 0) {
        cli_args_release(&cli_spec_cp_thread, &a, &rest);
        return cli_usage("cp", "--html and --chrome cannot both write to standard output");
    }
    cli_kload lo = {a.no_sync, a.index, a.quiet, (size_t)a.max_diags, a.verify};
    cli_kgraph k;
    rc = cli_kgraph_load("cp", &lo, rest.operands, rest.n, &k);
    cli_args_release(&cli_spec_cp_thread, &a, &rest);
    if (rc)
        return rc;
    cli_kquery q;
    memset(&q, 0, sizeof q);
    q.thread = a.thread, q.host = a.host;
    q.algo = a.unbounded ? LP_KCP_UNBOUNDED : LP_KCP_BOUNDED;
    cli_kout o = {a.json, a.path_limit, a.top, a.html, a.chrome};
    if (!(rc = cli_kcp_query("cp", a.from, a.to, &k, &q))) {
        int to_stdout = (a.html && !strcmp(a.html, "-")) || (a.chrome && !strcmp(a.chrome, "-"));
        if (!to_stdout) {
            if (a.json)
                cli_kcp_json(&k, &q, &o);
            else
                cli_kcp_text(&k, &q, &o);
        }
        if (a.html || a.chrome)
            rc = cli_kcp_views(&k, &q, &o);
        if (!rc && (ferror(stdout) || fflush(stdout))) {
            fprintf(stderr, "longpole cp: writing the output failed\n");
            rc = LP_EXIT_IO;
        }
    }
    if (!rc && k.diag_errors)
        rc = LP_EXIT_DATA; /* bad events were skipped and reported; the rest was analysed */
    lp_kcp_breakdown_release(&q.bd);
    lp_kcp_release(&q.cp);
    cli_kgraph_release(&k);
    return rc;
}
