/* cmd_spans.c: `longpole spans`: the critical path of span trees (Jaeger, Zipkin,
 * OTLP) per trace, and exclusive critical-path time per service operation and per
 * call path at trace-latency percentiles (CRISP), as tables, JSON or folded stacks.
 * The output names its definition (the request's path) and points to `cp` (the
 * whole-trace path), and counts what the walk did to the data: spans clipped to their
 * parent (clock skew), children left out (docs/trust.md). */
#include "cli.h"
#include "spandist.h"
#include "dshard.h"
#include "base/util.h"
#include "longpole/model/span.h"
#include "longpole/formats/lpt.h"
#include "longpole/load/load.h"
#include "longpole/analysis/spans/spancp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct spans_args {
    cli_load load;           /* --strict, -q, --max-errors (the span format is --format here) */
    double pct[32];
    size_t npct;
    uint64_t top;
    int sections, json, folded;
    double folded_p;
    const char *trace;
    const char *format;
    dshard_opt dist;         /* `dist spans`: --stats */
} spans_args;

static int set_pcts(void *dst, const char *v, char *msg, size_t n)
{
    spans_args *a = dst;
    return cli_parse_pcts(v, a->pct, 32, &a->npct);
}

/* --folded[=P]: folded stacks of percentile P (all: 100) */
static int set_folded(void *dst, const char *v, char *msg, size_t n)
{
    spans_args *a = dst;
    a->folded = 1;
    if (strcmp(v, "all") == 0) {
        a->folded_p = 100;
        return 0;
    }
    if (cli_parse_double(v[0] == 'P' || v[0] == 'p' ? v + 1 : v, &a->folded_p) || !(a->folded_p > 0) ||
        a->folded_p > 100)
        return -1;
    return 0;
}

static void spans_init(void *p)
{
    spans_args *a = p;
    a->top = 10;
    a->folded_p = 100;
    set_pcts(a, "50,95,99,100", NULL, 0);
}

#define A(m) CLI_AT(spans_args, m)

static const cli_opt spans_opts[] = {
    {"--percentile", "--percentiles", .kind = CLI_FN, .arg = "LIST", CLI_WHOLE(spans_args), .fn = set_pcts,
     .err = "--percentile takes a list like 50,95,99,all (each in (0, 100])", .example = "50,p99,all",
     .help = "percentiles, e.g. 50,95,99,all (the default); 'all' = 100"},
    {"--top", .kind = CLI_COUNT, .arg = "N", A(top), .err = "--top needs a number", .example = "4",
     .help = "rows per table (default 10, 0 = all)"},
    {"--sections", .kind = CLI_FLAG, A(sections),
     .help = "print every trace's critical path (default: only for one trace)"},
    {"--trace", .kind = CLI_STR, .arg = "ID", A(trace), .err = "--trace needs a trace id", .example = "abc",
     .help = "only this trace (and its critical path)"},
    {"--json", .kind = CLI_FLAG, A(json), .help = "one JSON document (docs/analyses/span-critical-path.md)"},
    {"--folded", .kind = CLI_FN, .arg = "P", CLI_WHOLE(spans_args), .fn = set_folded, .optval = "all",
     .err = "--folded=P takes a percentile in (0, 100] or 'all'", .example = "99",
     .help = "folded stacks for flamegraph.pl of percentile P (default all):\n"
             "'[service] operation' frames, value = mean exclusive ns per trace"},
    {"--format", .kind = CLI_STR, .arg = "F", A(format), .err = "--format needs jaeger, zipkin or otlp",
     .example = "jaeger", .help = "jaeger, zipkin or otlp for every file (default: detected)"},
    CLI_END,
};

#undef A

const cli_spec cli_spec_spans = {
    .cmd = "spans",
    .usage = "usage: longpole spans [OPTIONS] FILE|DIR...\n",
    .about = "Critical paths of span trees: Jaeger JSON, Zipkin v2 JSON or OTLP JSON (detected per\n"
             "file; directories are read recursively; gzip/zstd transparent). Per trace, the walk\n"
             "of Jaeger UI: from the root's end, the last-finishing child, inside it likewise,\n"
             "then the latest child that finished at or before that one started, and so on; a\n"
             "span's time between those children is its own (docs/analyses/span-critical-path.md).\n"
             "Children the parent does not wait for (FOLLOWS_FROM, a CONSUMER under a PRODUCER)\n"
             "and children outside their parent are left out; overhanging ones are clipped.\n"
             "\n"
             "Over many traces (CRISP, ATC'22): exclusive critical-path time by service and\n"
             "operation and by call path, over the traces up to each latency percentile (the\n"
             "fastest P%, P = 100 is all): mean per trace, share of the traces' latency, largest\n"
             "in one trace, and in how many traces it is on the path.\n",
    .groups = {CLI_OWN("options:", spans_opts), CLI_GROUP(NULL, cli_diag_opts, spans_args, load)},
    .notes = "The same files also load as activity graphs (`longpole cp|info|convert FILE`),\n"
             "mapped as docs/formats/spans.md says.\n",
    .size = sizeof(spans_args),
    .init = spans_init,
};

/* `dist spans`: the same tables and --stats (cmd_dist_spans.c). */
const cli_spec cli_spec_dist_spans = {
    .cmd = "dist spans",
    .usage = "usage: longpole dist spans [--stats] [OPTIONS] FILE|DIR...   (mpirun -n K)\n",
    .about = "`spans` with the traces split over the ranks of an MPI job: every rank reads every\n"
             "file, walks the traces t with t mod K = its rank, and rank 0 aggregates their paths\n"
             "in trace order and prints exactly what `spans` does (docs/distributed.md). The\n"
             "options are spans', plus --stats.\n",
    .groups = {CLI_OWN("options:", spans_opts), CLI_GROUP(NULL, cli_diag_opts, spans_args, load),
               DSHARD_GROUP(spans_args, dist)},
    .size = sizeof(spans_args),
    .init = spans_init,
};

static const char *pname(double p, char *buf, size_t n)
{
    if (p == 100)
        snprintf(buf, n, "all");
    else
        snprintf(buf, n, "P%g", p);
    return buf;
}

/* ---- definition and adjustments ---------------------------------------------- */

#define SPANS_DEF                                                                                                 \
    "request path: each trace's critical path from its root span (Jaeger UI's walk) over the spans the root "     \
    "waits for; asynchronous children and children outside their parent are left out, overhanging ones clipped. " \
    "The whole-trace path, over every span including asynchronous ones that outlive the root, is `longpole cp` "  \
    "(docs/trust.md)"

/* What the walks did to the data, over the traces analysed. */
typedef struct spans_adj {
    uint64_t traces;            /* traces with a clipped or left-out span */
    uint64_t clipped, outside, async;
    int64_t clipped_ns;
} spans_adj;

static void adj_add(spans_adj *x, const lp_spancp *cp)
{
    x->traces += cp->nclipped || cp->noutside;
    x->clipped += cp->nclipped;
    x->clipped_ns += cp->clipped_ns;
    x->outside += cp->noutside;
    x->async += cp->nasync;
}

static void json_adj(lp_jsonw *j, uint64_t clipped, int64_t clipped_ns, uint64_t outside, uint64_t async)
{
    lp_jsonw_key(j, "adjustments");
    lp_jsonw_obj(j);
    lp_jsonw_ku64(j, "spans_clipped", clipped);
    lp_jsonw_ki64(j, "clipped_ns", clipped_ns);
    lp_jsonw_ku64(j, "children_outside_parent_left_out", outside);
    lp_jsonw_ku64(j, "async_children_left_out", async);
    lp_jsonw_obj_end(j);
}

/* "1 span clipped to its parent (65.4 ms cut off: clock skew?), ..." */
static void text_adj(FILE *f, uint64_t clipped, int64_t clipped_ns, uint64_t outside)
{
    char d[32];
    if (clipped)
        fprintf(f, "%llu span%s clipped to %s parent (%s cut off; a child that starts before its parent or ends "
                   "after it usually means clock skew between hosts)",
                (unsigned long long)clipped, clipped == 1 ? "" : "s", clipped == 1 ? "its" : "their",
                lp_fmt_dur(clipped_ns, d, sizeof d));
    if (outside)
        fprintf(f, "%s%llu waited-on child%s outside %s parent left out, with everything under %s",
                clipped ? "; " : "", (unsigned long long)outside, outside == 1 ? "" : "ren",
                outside == 1 ? "its" : "their", outside == 1 ? "it" : "them");
}

/* ---- per trace ---------------------------------------------------------------- */

static void text_trace(const lp_spans *sp, const lp_spancp *cp)
{
    char d[32], id[96];
    const char *tid = lp_spans_trace_text(sp, cp->trace);
    if (cp->root == LP_SPAN_NONE) {
        printf("\ntrace %s: no root span left; no critical path\n", tid);
        return;
    }
    printf("\ncritical path of trace %s: %s", tid, lp_fmt_dur(cp->latency, d, sizeof d));
    printf(" (root %s %s %s, %zu section%s)\n", lp_spans_idstr(sp, cp->root, id, sizeof id),
           lp_spans_str(sp, sp->service[cp->root]), lp_spans_str(sp, sp->op[cp->root]), cp->nsec,
           cp->nsec == 1 ? "" : "s");
    int width = 20; /* the span column: as wide as its longest id */
    for (size_t k = 0; k < cp->nsec; k++) {
        int l = (int)strlen(lp_spans_idstr(sp, cp->sec[k].span, id, sizeof id));
        width = l > width ? l : width;
    }
    printf("  %14s %14s %12s  %-*s %s\n", "start (ns)", "end (ns)", "duration", width, "span", "service operation");
    for (size_t k = 0; k < cp->nsec; k++) {
        const lp_spancp_section *s = &cp->sec[k];
        printf("  %14lld %14lld %12s  %-*s %s %s\n", (long long)(s->start - cp->start), (long long)(s->end - cp->start),
               lp_fmt_dur(s->end - s->start, d, sizeof d), width, lp_spans_idstr(sp, s->span, id, sizeof id),
               lp_spans_str(sp, sp->service[s->span]), lp_spans_str(sp, sp->op[s->span]));
    }
    if (cp->nclipped || cp->noutside) {
        printf("  adjusted: ");
        text_adj(stdout, cp->nclipped, cp->clipped_ns, cp->noutside);
        printf("\n");
    }
}

static void json_trace(lp_jsonw *j, const lp_spans *sp, const lp_spancp *cp)
{
    char id[96];
    lp_jsonw_obj(j);
    lp_jsonw_kstr(j, "trace", lp_spans_trace_text(sp, cp->trace));
    lp_jsonw_key(j, "root");
    if (cp->root == LP_SPAN_NONE) {
        lp_jsonw_null(j);
    } else {
        lp_jsonw_str(j, lp_spans_idstr(sp, cp->root, id, sizeof id));
        lp_jsonw_ki64(j, "start", cp->start);
        lp_jsonw_ki64(j, "latency_ns", cp->latency);
    }
    json_adj(j, cp->nclipped, cp->clipped_ns, cp->noutside, cp->nasync);
    lp_jsonw_key(j, "sections");
    lp_jsonw_arr(j);
    for (size_t k = 0; k < cp->nsec; k++) {
        const lp_spancp_section *s = &cp->sec[k];
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "span", lp_spans_idstr(sp, s->span, id, sizeof id));
        lp_jsonw_kstr(j, "service", lp_spans_str(sp, sp->service[s->span]));
        lp_jsonw_kstr(j, "operation", lp_spans_str(sp, sp->op[s->span]));
        lp_jsonw_ki64(j, "start", s->start);
        lp_jsonw_ki64(j, "end", s->end);
        lp_jsonw_ki64(j, "duration_ns", s->end - s->start);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_jsonw_obj_end(j);
}

/* ---- aggregates ------------------------------------------------------------------ */

static double mean_of(const lp_spancp_row *r, const lp_spancp_pct *p)
{
    return p->ntraces ? (double)r->total / (double)p->ntraces : 0;
}

static void text_table(const lp_spancp_agg *a, const lp_spancp_pct *p, int paths, uint64_t top, uint64_t alltraces)
{
    char pn[16], d1[32], d2[32], d3[32];
    const lp_spancp_row *rows = paths ? p->paths : p->ops;
    size_t n = paths ? p->npaths : p->nops;
    printf("\nexclusive critical-path time by %s, %s (%llu of %llu traces, latency <= %s, mean %s)\n",
           paths ? "call path" : "service operation",
           p->ntraces == alltraces ? "all traces" : pname(p->p, pn, sizeof pn),
           (unsigned long long)p->ntraces, (unsigned long long)alltraces, lp_fmt_dur(p->latency, d1, sizeof d1),
           lp_fmt_dur(p->ntraces ? p->latency_sum / (int64_t)p->ntraces : 0, d2, sizeof d2));
    printf("  %12s %7s %12s %9s  %s\n", "mean/trace", "share", "max", "on path", paths ? "call path" : "service operation");
    char buf[4096];
    for (size_t i = 0; i < n; i++) {
        if (top && i >= top) {
            printf("  ... %zu more rows (--top 0 shows all)\n", n - i);
            break;
        }
        const lp_spancp_row *r = &rows[i];
        double share = p->latency_sum ? 100.0 * (double)r->total / (double)p->latency_sum : 0;
        if (paths) {
            lp_spancp_path_format(a, r->id, " > ", buf, sizeof buf);
        } else {
            const char *svc, *op;
            lp_spancp_op_names(a, r->id, &svc, &op);
            snprintf(buf, sizeof buf, "%s %s", svc, op);
        }
        char on[48];
        snprintf(on, sizeof on, "%llu/%llu", (unsigned long long)r->traces, (unsigned long long)p->ntraces);
        printf("  %12s %6.1f%% %12s %9s  %s\n", lp_fmt_dur((int64_t)llround(mean_of(r, p)), d1, sizeof d1), share,
               lp_fmt_dur(r->max, d3, sizeof d3), on, buf);
    }
}

static void json_rows(lp_jsonw *j, const lp_spancp_agg *a, const lp_spancp_pct *p, int paths)
{
    const lp_spancp_row *rows = paths ? p->paths : p->ops;
    size_t n = paths ? p->npaths : p->nops;
    lp_jsonw_key(j, paths ? "call_paths" : "operations");
    lp_jsonw_arr(j);
    for (size_t i = 0; i < n; i++) {
        const lp_spancp_row *r = &rows[i];
        lp_jsonw_obj(j);
        const char *svc, *op;
        if (paths) {
            lp_jsonw_key(j, "path");
            lp_jsonw_arr(j);
            uint32_t few[64], *ops = few;
            size_t depth = lp_spancp_path_ops(a, r->id, few, 64);
            if (depth > 64 && (ops = lp_malloc(depth * sizeof *ops)) != NULL)
                lp_spancp_path_ops(a, r->id, ops, depth);
            for (size_t q = 0; ops && q < depth; q++) {
                lp_spancp_op_names(a, ops[q], &svc, &op);
                lp_jsonw_obj(j);
                lp_jsonw_kstr(j, "service", svc);
                lp_jsonw_kstr(j, "operation", op);
                lp_jsonw_obj_end(j);
            }
            if (ops != few)
                lp_free(ops);
            lp_jsonw_arr_end(j);
        } else {
            lp_spancp_op_names(a, r->id, &svc, &op);
            lp_jsonw_kstr(j, "service", svc);
            lp_jsonw_kstr(j, "operation", op);
        }
        lp_jsonw_ki64(j, "total_ns", r->total);
        lp_jsonw_kdbl(j, "mean_ns", mean_of(r, p));
        lp_jsonw_kdbl(j, "share", p->latency_sum ? (double)r->total / (double)p->latency_sum : 0);
        lp_jsonw_ki64(j, "max_ns", r->max);
        lp_jsonw_ku64(j, "traces", r->traces);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
}

static int cmp_line(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

static int folded(const lp_spancp_agg *a, const lp_spancp_pct *p)
{
    char **lines = lp_malloc((p->npaths ? p->npaths : 1) * sizeof *lines);
    if (!lines)
        return LP_EXIT_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < p->npaths; i++) {
        const lp_spancp_row *r = &p->paths[i];
        int64_t v = p->ntraces ? r->total / (int64_t)p->ntraces : 0;
        if (v < 1)
            v = 1; /* present on the path: keep it visible (CRISP does the same) */
        size_t need = lp_spancp_path_format(a, r->id, ";", NULL, 0) + 24;
        char *s = lp_malloc(need);
        if (!s)
            break;
        size_t k = lp_spancp_path_format(a, r->id, ";", s, need);
        snprintf(s + k, need - k, " %lld", (long long)v);
        lines[n++] = s;
    }
    qsort(lines, n, sizeof *lines, cmp_line);
    for (size_t i = 0; i < n; i++) {
        puts(lines[i]);
        lp_free(lines[i]);
    }
    lp_free(lines);
    return 0;
}

/* ---- the command --------------------------------------------------------------------- */

/* The span files, with their diagnostics printed; --strict stops on errors. The sink
 * ds stays the spans' (sp->diags) until they are released. */
static int load(const spans_args *a, const cli_args *rest, lp_diags *ds, lp_spans *sp, int *data_errors)
{
    size_t maxd = a->load.max_diags ? a->load.max_diags : 20;
    lp_diags_init(ds, a->load.quiet ? 0 : maxd);
    lp_spans_init(sp, ds);
    lp_load_opts lo;
    memset(&lo, 0, sizeof lo);
    if (cli_progress_enabled())
        lo.progress = cli_progress;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_spans_load(sp, (const char *const *)rest->operands, (size_t)rest->n, a->format, &lo, &err);
    cli_progress_done();
    cli_print_diags(ds, a->load.quiet ? 0 : maxd);
    *data_errors = ds->nerrors > 0;
    if (st)
        return cli_fail("spans", &err);
    if (*data_errors && a->load.strict) {
        fprintf(stderr, "longpole: the input has errors and --strict was given; stopping\n");
        return LP_EXIT_DATA;
    }
    return 0;
}

/* --trace ID: its index (as printed, or in the normalised form), or a usage error. */
static int find_trace(const lp_spans *sp, const char *id, uint32_t *only)
{
    *only = LP_SPAN_NONE;
    if (!id)
        return 0;
    uint32_t t;
    for (t = 0; t < sp->ntraces; t++)
        if (strcmp(lp_spans_trace_text(sp, t), id) == 0)
            break;
    if (t == sp->ntraces) {
        lp_str sid = lp_strtab_find(&sp->strs, id, strlen(id));
        for (t = 0; sid != LP_STR_NONE && t < sp->ntraces; t++)
            if (sp->trace_id[t] == sid)
                break;
    }
    if (t >= sp->ntraces) {
        fprintf(stderr, "longpole spans: no trace '%s' in the input\n", id);
        return LP_EXIT_USAGE;
    }
    *only = t;
    return 0;
}

static void json_head(lp_jsonw *j, const lp_spans *sp)
{
    lp_jsonw_init(j, stdout, 0);
    lp_jsonw_obj(j);
    lp_jsonw_kstr(j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(j, "command", "spans");
    lp_jsonw_key(j, "definition");
    lp_jsonw_obj(j);
    lp_jsonw_kstr(j, "path", "request");
    lp_jsonw_kstr(j, "note", SPANS_DEF);
    lp_jsonw_obj_end(j);
    lp_jsonw_key(j, "input");
    lp_jsonw_obj(j);
    lp_jsonw_ku64(j, "files", sp->nfiles);
    lp_jsonw_ku64(j, "spans", sp->n);
    lp_jsonw_ku64(j, "spans_kept", sp->nkept);
    lp_jsonw_ku64(j, "traces", sp->ntraces);
    lp_jsonw_ku64(j, "merged_parts", sp->nmerged);
    lp_jsonw_ku64(j, "shared_rpc_spans", sp->nshared);
    lp_jsonw_ku64(j, "duplicates_dropped", sp->ndup);
    lp_jsonw_ku64(j, "orphans", sp->norphan);
    lp_jsonw_ku64(j, "cycles_broken", sp->ncycle);
    lp_jsonw_obj_end(j);
}

static void text_head(const lp_spans *sp)
{
    printf("spans: %llu in %llu trace%s from %u file%s", (unsigned long long)sp->n, (unsigned long long)sp->ntraces,
           sp->ntraces == 1 ? "" : "s", sp->nfiles, sp->nfiles == 1 ? "" : "s");
    if (sp->nmerged || sp->ndup || sp->norphan || sp->ncycle)
        printf(" (%llu parts merged, %llu duplicates dropped, %llu orphans, %llu cycles broken)",
               (unsigned long long)sp->nmerged, (unsigned long long)sp->ndup, (unsigned long long)sp->norphan,
               (unsigned long long)sp->ncycle);
    printf("\ndefinition: %s\n", SPANS_DEF);
}

/* The critical path of every trace (or --trace's), into the aggregate, printed when
 * shown (--sections, --trace, or a single trace). */
static lp_status per_trace(const spans_args *a, const lp_spans *sp, uint32_t only, int show, lp_spancp_agg *agg,
                           lp_jsonw *j, spans_adj *adj, dshard *sh, lp_error *err)
{
    lp_spancp cp;
    lp_spancp_init(&cp);
    lp_status st = LP_OK;
    if (a->json && show) {
        lp_jsonw_key(j, "traces");
        lp_jsonw_arr(j);
    }
    for (uint32_t t = 0; t < sp->ntraces && !st; t++) {
        if (only != LP_SPAN_NONE && t != only)
            continue;
        if ((st = sh ? cli_spandist_next(sh, sp, t, &cp, err) : lp_spancp_trace(&cp, sp, t, err)) ||
            (st = lp_spancp_agg_add(agg, &cp, err)))
            break;
        adj_add(adj, &cp);
        if (show && !a->folded) {
            if (a->json)
                json_trace(j, sp, &cp);
            else
                text_trace(sp, &cp);
        }
    }
    if (!st && a->json && show)
        lp_jsonw_arr_end(j);
    lp_spancp_release(&cp);
    return st;
}

static void json_percentiles(lp_jsonw *j, const lp_spancp_agg *agg, const lp_spancp_pct *pct, size_t np,
                             const spans_adj *adj, int data_errors)
{
    lp_jsonw_ku64(j, "traces_analysed", lp_spancp_agg_traces(agg));
    json_adj(j, adj->clipped, adj->clipped_ns, adj->outside, adj->async);
    lp_jsonw_ku64(j, "traces_adjusted", adj->traces);
    lp_jsonw_key(j, "percentiles");
    lp_jsonw_arr(j);
    for (size_t k = 0; k < np; k++) {
        lp_jsonw_obj(j);
        lp_jsonw_kdbl(j, "percentile", pct[k].p);
        lp_jsonw_ku64(j, "traces", pct[k].ntraces);
        lp_jsonw_ki64(j, "latency_ns", pct[k].latency);
        lp_jsonw_ki64(j, "latency_sum_ns", pct[k].latency_sum);
        json_rows(j, agg, &pct[k], 0);
        json_rows(j, agg, &pct[k], 1);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_jsonw_kbool(j, "input_errors", data_errors);
    lp_jsonw_obj_end(j);
    lp_jsonw_end(j);
}

static void text_percentiles(const lp_spancp_agg *agg, const lp_spancp_pct *pct, size_t np, uint64_t top,
                             const spans_adj *adj)
{
    uint64_t ntr = lp_spancp_agg_traces(agg);
    if (ntr == 0) {
        printf("no trace has a root span: nothing to analyse\n");
        return;
    }
    if ((adj->clipped || adj->outside) && ntr > 1) {
        printf("\nadjustments in %llu of %llu traces: ", (unsigned long long)adj->traces, (unsigned long long)ntr);
        text_adj(stdout, adj->clipped, adj->clipped_ns, adj->outside);
        printf("\n");
    }
    char d[32], pn[16];
    printf("\ntraces analysed: %llu; latency", (unsigned long long)ntr);
    for (size_t k = 0; k < np; k++)
        printf("%s %s %s", k ? "," : "", pname(pct[k].p, pn, sizeof pn), lp_fmt_dur(pct[k].latency, d, sizeof d));
    printf("\n");
    for (size_t k = 0; k < np; k++) {
        /* a percentile whose set is one already printed adds nothing */
        size_t q = 0;
        while (q < k && pct[q].ntraces != pct[k].ntraces)
            q++;
        if (q < k)
            continue;
        text_table(agg, &pct[k], 0, top, ntr);
        text_table(agg, &pct[k], 1, top, ntr);
    }
}

/* The traces' critical paths and the tables at the percentiles (or folded stacks). */
static int analyse(const spans_args *a, const lp_spans *sp, uint32_t only, int data_errors, dshard *sh)
{
    if (sh) { /* every rank walks its traces; rank 0 goes on with their paths */
        lp_error werr;
        lp_error_clear(&werr);
        if (cli_spandist_walk(sh, sp, only, &werr))
            return cli_fail("spans", &werr);
        if (!dshard_root(sh))
            return 0;
    }
    int show = a->sections || only != LP_SPAN_NONE || sp->ntraces == 1;
    lp_spancp_agg *agg = NULL;
    lp_spancp_pct *pct = NULL;
    size_t np = a->folded ? 1 : a->npct;
    lp_jsonw j;
    lp_error err;
    lp_error_clear(&err);
    if (lp_spancp_agg_new(&agg, sp, &err))
        return cli_fail("spans", &err);
    if (a->json)
        json_head(&j, sp);
    else if (!a->folded)
        text_head(sp);
    spans_adj adj = {0, 0, 0, 0, 0};
    if (per_trace(a, sp, only, show, agg, &j, &adj, sh, &err) ||
        lp_spancp_agg_percentiles(agg, a->folded ? &a->folded_p : a->pct, np, &pct, &err)) {
        lp_spancp_agg_free(agg);
        return cli_fail("spans", &err);
    }
    int rc = 0;
    if ((adj.clipped || adj.outside) && !a->load.quiet) {
        fprintf(stderr, "longpole spans: warning: ");
        text_adj(stderr, adj.clipped, adj.clipped_ns, adj.outside);
        fprintf(stderr, "; the paths use the adjusted times\n");
    }
    if (a->folded)
        rc = folded(agg, &pct[0]);
    else if (a->json)
        json_percentiles(&j, agg, pct, np, &adj, data_errors);
    else
        text_percentiles(agg, pct, np, a->top, &adj);
    lp_spancp_pct_free(pct, np);
    lp_spancp_agg_free(agg);
    if (rc)
        return rc;
    if (fflush(stdout) != 0)
        return LP_EXIT_IO;
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}

int cmd_spans(int argc, char **argv) { return cli_spans_main(argc, argv, NULL); }

int cli_spans_main(int argc, char **argv, dshard *sh)
{
    spans_args a;
    cli_args rest;
    const cli_spec *spec = sh ? &cli_spec_dist_spans : &cli_spec_spans;
    int rc = dshard_parse(sh, &cli_spec_spans, &cli_spec_dist_spans, argc, argv, &a, &rest);
    if (rc)
        return rc;
    if (sh)
        sh->stats = a.dist.stats;
    if (!rest.n)
        rc = cli_usage("spans", "no trace files given");
    else if (a.json && a.folded)
        rc = cli_usage("spans", "--json and --folded exclude each other");
    if (rc) {
        cli_args_release(spec, &a, &rest);
        return rc;
    }
    lp_diags ds;
    lp_spans sp;
    int data_errors = 0;
    uint32_t only;
    rc = load(&a, &rest, &ds, &sp, &data_errors);
    cli_args_release(spec, &a, &rest);
    if (sh && !(rc = dshard_agree(sh, rc))) /* a rank that could not load, or loaded */
        rc = cli_spandist_same(sh, &sp);    /* other spans, stops every rank */
    if (!rc && !(rc = find_trace(&sp, a.trace, &only)))
        rc = analyse(&a, &sp, only, data_errors, sh);
    lp_spans_release(&sp);
    lp_diags_release(&ds);
    return rc;
}
