/* cmd_summary.c: `longpole summary`: SnailTrail's CP-based summaries (activity,
 * straggler, operator, communication; §6) per time window over a trace, with the
 * conventional profile and one random transient critical path beside each, the path
 * count N, the sum-to-one check of CP and the App. A.2 checks per window; text blocks,
 * one compact line per window, or JSON lines (docs/formats/summary-json.md).
 * Stages: options, load and resolve the window grid, analyse the windows on a pool
 * (each printed as it completes, in order), the totals. The printing and the totals
 * are shared with `stream` (summary.h). */
#include "summary.h"
#include "dshard.h"

#include <string.h>

typedef struct summary_args {
    cli_load load;
    cli_sumopts sum;
    int64_t size, step;    /* --window, --slide (0: not given) */
    const char *from, *to;
    uint64_t threads;
    dshard_opt dist;       /* `dist summary`: --stats */
} summary_args;

static void summary_init(void *p) { cli_sumopts_init(&((summary_args *)p)->sum); }

static const cli_opt summary_opts[] = {
    {"--window", .kind = CLI_DUR, .arg = "D", CLI_AT(summary_args, size), .range = "(0,)",
     .err = "--window needs a duration (e.g. 1s)",
     .bad = "bad --window '%s' (a positive duration: ns, or a number with ns/us/ms/s/m/h)", .example = "1s",
     .help = "window size (ns, or with ns/us/ms/s/m/h); default: the whole\ntrace as one window"},
    {"--slide", .kind = CLI_DUR, .arg = "D", CLI_AT(summary_args, step), .range = "(0,)",
     .err = "--slide needs a duration (e.g. 250ms)", .bad = "bad --slide '%s' (a positive duration)",
     .example = "250ms", .help = "step between window starts (default: the size, tumbling windows)"},
    {"--from", .kind = CLI_TIME, .arg = "T", CLI_AT(summary_args, from), .err = "--from needs a time", .example = "0",
     .help = ""},
    {"--to", .kind = CLI_TIME, .arg = "T", CLI_AT(summary_args, to), .err = "--to needs a time", .example = "+1s",
     .help = "analyse [T, T'] only (windows start at --from); T is ns or has a\n"
             "unit; +T is T after the trace start"},
    {"--compact", .kind = CLI_FLAG, CLI_AT(summary_args, sum.fmt.compact), .help = "one line per window and summary"},
    {"--json", .kind = CLI_FLAG, CLI_AT(summary_args, sum.fmt.json),
     .help = "JSON lines: one object per window, then one with the totals\n(docs/formats/summary-json.md)"},
    {"--threads", .kind = CLI_COUNT, .arg = "N", CLI_AT(summary_args, threads), .range = "[1,256]",
     .err = "--threads takes 1..256", .example = "2", .help = "analyse windows on N threads (default: one per core)"},
    CLI_END,
};

const cli_spec cli_spec_summary = {
    .cmd = "summary",
    .usage = "usage: longpole summary [--window D [--slide D]] [OPTIONS] TRACE...\n",
    .about = "Critical participation (SnailTrail §3.2): the trace is cut into windows (snapshots,\n"
             "Def. 5-6: activities and messages straddling a bound are cut); in each, every path\n"
             "from the window's first instant to its last that avoids `waiting` is a transient\n"
             "critical path, and an activity's CP is its share of all of them (Eq. 3), computed by\n"
             "counting paths, never listing them. Per window: the number of paths N, the check\n"
             "that CP sums to 1 (within 1e-9), SnailTrail's four summaries, each beside the\n"
             "conventional profile (summed durations) and one transient path drawn at random\n"
             "(the single-path view of §7.4), and the instrumentation checks (App. A.2).\n"
             "Then the totals over all windows. Details: docs/analyses/critical-participation.md.\n",
    .groups = {CLI_OWN("options:", summary_opts), CLI_GROUP(NULL, cli_sum_opts, summary_args, sum),
               CLI_LOAD_GROUPS(summary_args, load)},
    .notes = "Operators are ranked by CP per worker (CP divided by the operator's parallelism):\n"
             "an under-provisioned stage stands out even when its workers are balanced. Times in\n"
             "text are after the trace start; JSON has absolute ns.\n",
    .size = sizeof(summary_args),
    .init = summary_init,
};

/* `dist summary`: the same tables and --stats (cmd_dist_summary.c). */
const cli_spec cli_spec_dist_summary = {
    .cmd = "dist summary",
    .usage = "usage: longpole dist summary [--stats] [--window D [--slide D]] [OPTIONS] TRACE...   (mpirun -n K)\n",
    .about = "`summary` with the windows split over the ranks of an MPI job: rank r analyses the\n"
             "windows k with k mod K = r, rank 0 prints them and the totals in order, exactly as\n"
             "`summary` (docs/distributed.md). The options are summary's, plus --stats.\n",
    .groups = {CLI_OWN("options:", summary_opts), CLI_GROUP(NULL, cli_sum_opts, summary_args, sum),
               CLI_LOAD_GROUPS(summary_args, load), DSHARD_GROUP(summary_args, dist)},
    .size = sizeof(summary_args),
    .init = summary_init,
};

/* ---- running the windows ----------------------------------------------------------------- */

typedef struct run_ctx {
    cli_sumfmt fmt;
    cli_sumtotal *tot;
    uint64_t nwindows;       /* to analyse: the progress bar (issue 6) */
    dshard *sd;              /* `dist summary`: the ranks (NULL: one process) */
    int merging;             /* dist: rank 0 printing the gathered windows */
} run_ctx;

static int on_window(void *ctx, const lp_winres *r)
{
    run_ctx *rc = ctx;
    if (rc->sd && !rc->merging)
        return cli_sumdist_keep(rc->sd, r);
    cli_winres_print(stdout, r, &rc->fmt);
    cli_progress_beside("windows", r->index + 1, rc->nwindows); /* issue 6 */
    cli_sumtotal_add(rc->tot, r);
    return ferror(stdout) ? -1 : 0;
}

static void print_head(const lp_trace *t, const lp_wingrid *g, int64_t from, int64_t size, int64_t step)
{
    char b1[40], b2[40], b3[40];
    printf("trace: %u workers, %llu activities (+%llu gaps), %llu messages, %s long\n", t->nworkers,
           (unsigned long long)(t->nacts - t->ngaps), (unsigned long long)t->ngaps, (unsigned long long)t->nmsgs,
           cli_fmt_s(t->tmax - t->tmin, b1, sizeof b1));
    printf("windows: %llu of %s", (unsigned long long)g->n, cli_fmt_s(size, b2, sizeof b2));
    if (step != size)
        printf(" sliding by %s", cli_fmt_s(step, b3, sizeof b3));
    printf(" from %s; times are after the trace start; CP = critical participation\n",
           cli_fmt_s(from - t->tmin, b1, sizeof b1));
}

/* Analyse the windows of [from, to] on a pool, printing each as it completes and
 * adding it to the totals, then print the totals. */
static lp_status run_windows(const summary_args *a, const lp_trace *t, int64_t from, int64_t to, run_ctx *ctx,
                             lp_error *err)
{
    int64_t size = a->size, step = a->step;
    if (!size)
        size = to - from > 0 ? to - from : 1;
    if (!step)
        step = size;
    lp_wingrid g;
    lp_snapsrc src;
    lp_sumkeys keys;
    lp_winpool *pool = NULL;
    int have_src = 0, have_keys = 0;
    lp_status st = lp_wingrid_make(&g, from, to, size, step, err);
    ctx->nwindows = st ? 0 : g.n; /* issue 6 */
    if (!st && !(st = lp_snapsrc_init(&src, t, err)))
        have_src = 1;
    if (!st)
        st = lp_wingrid_plan(&g, &src, err);
    if (!st && !(st = lp_sumkeys_init(&keys, t, err)))
        have_keys = 1;
    if (!st)
        st = lp_winpool_new(&pool, (unsigned)a->threads, &a->sum.win, on_window, ctx, err);
    int root = !ctx->sd || dshard_root(ctx->sd);
    if (!st && !ctx->fmt.json && root)
        print_head(t, &g, from, size, step);
    for (uint64_t k = 0; !st && k < g.n; k++)
        if (!ctx->sd || cli_sumdist_mine(ctx->sd, k))
            st = lp_winpool_submit(pool, &src, &keys, k, lp_wingrid_ts(&g, k), lp_wingrid_te(&g, k), NULL, err);
    if (!st)
        st = lp_winpool_finish(pool, err);
    if (ctx->sd) { /* every rank, even after a failure: no rank waits forever */
        ctx->merging = 1;
        st = cli_sumdist_merge(ctx->sd, st, g.n, &keys, &src, on_window, ctx, err);
    }
    cli_progress_done(); /* issue 6 */
    if (!st && root) /* the totals' labels are the keys' */
        cli_sumtotal_print(stdout, ctx->tot, &ctx->fmt);
    lp_winpool_free(pool);
    if (have_keys)
        lp_sumkeys_release(&keys);
    if (have_src)
        lp_snapsrc_release(&src);
    return st;
}

/* ---- the command ----------------------------------------------------------------------- */

/* What the options say together (each alone was checked by the parser). */
static int check_args(summary_args *a, const cli_args *rest)
{
    if (!rest->n)
        return cli_usage("summary", "no trace given");
    if (a->step && !a->size)
        return cli_usage("summary", "--slide needs --window");
    if (a->sum.fmt.json && a->sum.fmt.compact)
        return cli_usage("summary", "--json and --compact exclude each other");
    cli_sumopts_apply(&a->sum);
    return 0;
}

/* --from/--to against the trace's start. */
static int resolve_times(const summary_args *a, const lp_trace *t, int64_t *from, int64_t *to)
{
    *from = t->tmin, *to = t->tmax;
    if (a->from && cli_parse_time(a->from, t->tmin, from))
        return cli_usage("summary", "bad --from time '%s'", a->from);
    if (a->to && cli_parse_time(a->to, t->tmin, to))
        return cli_usage("summary", "bad --to time '%s'", a->to);
    if ((a->from || a->to) && (*from >= t->tmax || *to <= t->tmin)) /* past the end: not the user's --to */
        return cli_refuse_window("summary", t, NULL, *from, *to);
    if (*to < *from)
        return cli_usage("summary", "--to (%lld) is before --from (%lld)", (long long)*to, (long long)*from);
    return 0;
}

int cmd_summary(int argc, char **argv) { return cli_summary_main(argc, argv, NULL); }

int cli_summary_main(int argc, char **argv, dshard *sh)
{
    summary_args a;
    cli_args rest;
    int rc = dshard_parse(sh, &cli_spec_summary, &cli_spec_dist_summary, argc, argv, &a, &rest);
    if (rc)
        return rc;
    if (sh)
        sh->stats = a.dist.stats;
    lp_trace *t = NULL;
    int data_errors = 0;
    if (!(rc = check_args(&a, &rest)))
        rc = cli_load_trace(&a.load, rest.operands, rest.n, &t, &data_errors);
    cli_args_release(sh ? &cli_spec_dist_summary : &cli_spec_summary, &a, &rest);
    if (sh && ((rc = dshard_agree(sh, rc)) != 0 || (rc = cli_sumdist_same(sh, t)) != 0)) {
        /* a rank that could not load, or loaded another trace, stops every rank */
        lp_trace_free(t);
        return rc;
    }
    int64_t from, to;
    if (rc || (rc = cli_refuse_empty("summary", t)) || (rc = resolve_times(&a, t, &from, &to))) {
        lp_trace_free(t);
        return rc;
    }
    run_ctx ctx = {a.sum.fmt, cli_sumtotal_new(), 0, sh, 0};
    if (!ctx.tot) {
        lp_trace_free(t);
        return LP_EXIT_NOMEM;
    }
    ctx.fmt.base = t->tmin;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = run_windows(&a, t, from, to, &ctx, &err);
    double worst;
    uint64_t bad = cli_sumtotal_failed(ctx.tot, &worst);
    if (bad)
        fprintf(stderr, "longpole summary: warning: in %llu window(s) CP does not sum to 1 within 1e-9 "
                        "(worst error %.3g); please report\n",
                (unsigned long long)bad, worst);
    if (cli_sumtotal_oom(ctx.tot) && !st)
        st = lp_error_set(&err, LP_ERR_NOMEM, "out of memory adding up the windows");
    cli_sumtotal_free(ctx.tot);
    lp_trace_free(t);
    if (st)
        return cli_fail("summary", &err);
    if (fflush(stdout) != 0)
        return LP_EXIT_IO;
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
