/* cmd_spans.c: `longpole spans`: the critical path of span trees (Jaeger, Zipkin,
 * OTLP) per trace, and exclusive critical-path time per service operation and per
 * call path at trace-latency percentiles (CRISP), as tables, JSON or folded stacks. */
#include "cli.h"
#include "base/util.h"
#include "longpole/model/span.h"
#include "longpole/formats/lpt.h"
#include "longpole/load/load.h"
#include "longpole/analysis/spans/spancp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char cli_help_spans[] =
    "usage: longpole spans [OPTIONS] FILE|DIR...\n"
    "\n"
    "Critical paths of span trees: Jaeger JSON, Zipkin v2 JSON or OTLP JSON (detected per\n"
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
    "in one trace, and in how many traces it is on the path.\n"
    "\n"
    "options:\n"
    "  --percentile LIST  percentiles, e.g. 50,95,99,all (the default); 'all' = 100\n"
    "  --top N            rows per table (default 10, 0 = all)\n"
    "  --sections         print every trace's critical path (default: only for one trace)\n"
    "  --trace ID         only this trace (and its critical path)\n"
    "  --json             one JSON document (docs/analyses/span-critical-path.md)\n"
    "  --folded[=P]       folded stacks for flamegraph.pl of percentile P (default all):\n"
    "                     '[service] operation' frames, value = mean exclusive ns per trace\n"
    "  --format F         jaeger, zipkin or otlp for every file (default: detected)\n"
    "  --strict           stop if the input has errors (default: skip bad records, go on,\n"
    "                     exit 4)\n"
    "  --max-errors N     diagnostics printed in full (default 20); -q prints only counts\n"
    "\n"
    "The same files also load as activity graphs (`longpole cp|info|convert FILE`),\n"
    "mapped as docs/formats/spans.md says.\n";

typedef struct opts {
    double pct[32];
    size_t npct;
    uint64_t top;
    int sections, json, folded;
    double folded_p;
    const char *trace;
    const char *format;
    int strict, quiet;
    size_t max_diags;
} opts;

static int parse_percentiles(const char *s, opts *o)
{
    o->npct = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        double v;
        if (strcmp(tok, "all") == 0)
            v = 100;
        else if ((tok[0] == 'p' || tok[0] == 'P') && !cli_parse_double(tok + 1, &v))
            ;
        else if (cli_parse_double(tok, &v))
            return -1;
        if (!(v > 0 && v <= 100) || o->npct == 32)
            return -1;
        o->pct[o->npct++] = v;
    }
    return o->npct ? 0 : -1;
}

static const char *pname(double p, char *buf, size_t n)
{
    if (p == 100)
        snprintf(buf, n, "all");
    else
        snprintf(buf, n, "P%g", p);
    return buf;
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
    printf("  %14s %14s %12s  %-20s %s\n", "start (ns)", "end (ns)", "duration", "span", "service operation");
    for (size_t k = 0; k < cp->nsec; k++) {
        const lp_spancp_section *s = &cp->sec[k];
        printf("  %14lld %14lld %12s  %-20s %s %s\n", (long long)(s->start - cp->start), (long long)(s->end - cp->start),
               lp_fmt_dur(s->end - s->start, d, sizeof d), lp_spans_idstr(sp, s->span, id, sizeof id),
               lp_spans_str(sp, sp->service[s->span]), lp_spans_str(sp, sp->op[s->span]));
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

int cmd_spans(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    o.top = 10;
    o.folded_p = 100;
    parse_percentiles("50,95,99,100", &o);
    const char *v;
    char **paths = lp_malloc((size_t)argc * sizeof *paths);
    int npaths = 0;
    if (!paths)
        return LP_EXIT_NOMEM;
#define USAGE(...) (lp_free(paths), cli_usage("spans", __VA_ARGS__))
    for (int i = 1; i < argc; i++) {
        if (cli_flag(argv, i, "--json"))
            o.json = 1;
        else if (cli_flag(argv, i, "--sections"))
            o.sections = 1;
        else if (cli_flag(argv, i, "--strict"))
            o.strict = 1;
        else if (cli_flag(argv, i, "-q") || cli_flag(argv, i, "--quiet"))
            o.quiet = 1;
        else if (cli_flag(argv, i, "--folded"))
            o.folded = 1;
        else if (strncmp(argv[i], "--folded=", 9) == 0) {
            o.folded = 1;
            const char *pv = argv[i] + 9;
            if (strcmp(pv, "all") == 0)
                o.folded_p = 100;
            else if (cli_parse_double(pv[0] == 'P' || pv[0] == 'p' ? pv + 1 : pv, &o.folded_p) || !(o.folded_p > 0) ||
                     o.folded_p > 100)
                return USAGE("--folded=P takes a percentile in (0, 100] or 'all'");
        } else if (cli_opt(argc, argv, &i, "--percentile", &v) || cli_opt(argc, argv, &i, "--percentiles", &v)) {
            if (!v || parse_percentiles(v, &o))
                return USAGE("--percentile takes a list like 50,95,99,all (each in (0, 100])");
        } else if (cli_opt(argc, argv, &i, "--top", &v)) {
            if (!v || cli_parse_count(v, &o.top))
                return USAGE("--top needs a number");
        } else if (cli_opt(argc, argv, &i, "--trace", &o.trace)) {
            if (!o.trace)
                return USAGE("--trace needs a trace id");
        } else if (cli_opt(argc, argv, &i, "--format", &o.format)) {
            if (!o.format)
                return USAGE("--format needs jaeger, zipkin or otlp");
        } else if (cli_opt(argc, argv, &i, "--max-errors", &v)) {
            uint64_t k;
            if (!v || cli_parse_count(v, &k))
                return USAGE("--max-errors needs a number");
            o.max_diags = (size_t)k;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return USAGE("unknown option '%s'", argv[i]);
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (!npaths)
        return USAGE("no trace files given");
#undef USAGE
    if (o.json && o.folded) {
        lp_free(paths);
        return cli_usage("spans", "--json and --folded exclude each other");
    }
    /* load */
    lp_diags ds;
    size_t maxd = o.max_diags ? o.max_diags : 20;
    lp_diags_init(&ds, o.quiet ? 0 : maxd);
    lp_spans sp;
    lp_spans_init(&sp, &ds);
    lp_load_opts lo;
    memset(&lo, 0, sizeof lo);
    if (cli_progress_enabled())
        lo.progress = cli_progress;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_spans_load(&sp, (const char *const *)paths, (size_t)npaths, o.format, &lo, &err);
    lp_free(paths);
    cli_progress_done();
    cli_print_diags(&ds, o.quiet ? 0 : maxd);
    int data_errors = ds.nerrors > 0;
    lp_diags_release(&ds);
    if (st) {
        lp_spans_release(&sp);
        return cli_fail("spans", &err);
    }
    if (data_errors && o.strict) {
        fprintf(stderr, "longpole: the input has errors and --strict was given; stopping\n");
        lp_spans_release(&sp);
        return LP_EXIT_DATA;
    }
    uint32_t only = LP_SPAN_NONE;
    if (o.trace) {
        uint32_t t;
        for (t = 0; t < sp.ntraces; t++)
            if (strcmp(lp_spans_trace_text(&sp, t), o.trace) == 0)
                break;
        if (t == sp.ntraces) {
            /* also accept the normalised form */
            lp_str id = lp_strtab_find(&sp.strs, o.trace, strlen(o.trace));
            for (t = 0; id != LP_STR_NONE && t < sp.ntraces; t++)
                if (sp.trace_id[t] == id)
                    break;
        }
        if (t >= sp.ntraces) {
            fprintf(stderr, "longpole spans: no trace '%s' in the input\n", o.trace);
            lp_spans_release(&sp);
            return LP_EXIT_USAGE;
        }
        only = t;
    }
    int show = o.sections || only != LP_SPAN_NONE || sp.ntraces == 1;
    /* per trace */
    lp_spancp cp;
    lp_spancp_init(&cp);
    lp_spancp_agg *agg = NULL;
    lp_jsonw j;
    int rc = 0;
    if ((st = lp_spancp_agg_new(&agg, &sp, &err)))
        goto fail;
    if (o.json) {
        lp_jsonw_init(&j, stdout, 0);
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
        lp_jsonw_kstr(&j, "command", "spans");
        lp_jsonw_key(&j, "input");
        lp_jsonw_obj(&j);
        lp_jsonw_ku64(&j, "files", sp.nfiles);
        lp_jsonw_ku64(&j, "spans", sp.n);
        lp_jsonw_ku64(&j, "spans_kept", sp.nkept);
        lp_jsonw_ku64(&j, "traces", sp.ntraces);
        lp_jsonw_ku64(&j, "merged_parts", sp.nmerged);
        lp_jsonw_ku64(&j, "shared_rpc_spans", sp.nshared);
        lp_jsonw_ku64(&j, "duplicates_dropped", sp.ndup);
        lp_jsonw_ku64(&j, "orphans", sp.norphan);
        lp_jsonw_ku64(&j, "cycles_broken", sp.ncycle);
        lp_jsonw_obj_end(&j);
        if (show) {
            lp_jsonw_key(&j, "traces");
            lp_jsonw_arr(&j);
        }
    } else if (!o.folded) {
        printf("spans: %llu in %llu trace%s from %u file%s", (unsigned long long)sp.n, (unsigned long long)sp.ntraces,
               sp.ntraces == 1 ? "" : "s", sp.nfiles, sp.nfiles == 1 ? "" : "s");
        if (sp.nmerged || sp.ndup || sp.norphan || sp.ncycle)
            printf(" (%llu parts merged, %llu duplicates dropped, %llu orphans, %llu cycles broken)",
                   (unsigned long long)sp.nmerged, (unsigned long long)sp.ndup, (unsigned long long)sp.norphan,
                   (unsigned long long)sp.ncycle);
        printf("\n");
    }
    for (uint32_t t = 0; t < sp.ntraces; t++) {
        if (only != LP_SPAN_NONE && t != only)
            continue;
        if ((st = lp_spancp_trace(&cp, &sp, t, &err)) || (st = lp_spancp_agg_add(agg, &cp, &err)))
            goto fail;
        if (show && !o.folded) {
            if (o.json)
                json_trace(&j, &sp, &cp);
            else
                text_trace(&sp, &cp);
        }
    }
    if (o.json && show)
        lp_jsonw_arr_end(&j);
    lp_spancp_pct *pct = NULL;
    size_t np = o.folded ? 1 : o.npct;
    if ((st = lp_spancp_agg_percentiles(agg, o.folded ? &o.folded_p : o.pct, np, &pct, &err)))
        goto fail;
    uint64_t ntr = lp_spancp_agg_traces(agg);
    if (o.folded) {
        rc = folded(agg, &pct[0]);
    } else if (o.json) {
        lp_jsonw_ku64(&j, "traces_analysed", ntr);
        lp_jsonw_key(&j, "percentiles");
        lp_jsonw_arr(&j);
        for (size_t k = 0; k < np; k++) {
            lp_jsonw_obj(&j);
            lp_jsonw_kdbl(&j, "percentile", pct[k].p);
            lp_jsonw_ku64(&j, "traces", pct[k].ntraces);
            lp_jsonw_ki64(&j, "latency_ns", pct[k].latency);
            lp_jsonw_ki64(&j, "latency_sum_ns", pct[k].latency_sum);
            json_rows(&j, agg, &pct[k], 0);
            json_rows(&j, agg, &pct[k], 1);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
        lp_jsonw_kbool(&j, "input_errors", data_errors);
        lp_jsonw_obj_end(&j);
        lp_jsonw_end(&j);
    } else {
        if (ntr == 0) {
            printf("no trace has a root span: nothing to analyse\n");
        } else {
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
                text_table(agg, &pct[k], 0, o.top, ntr);
                text_table(agg, &pct[k], 1, o.top, ntr);
            }
        }
    }
    lp_spancp_pct_free(pct, np);
    lp_spancp_agg_free(agg);
    lp_spancp_release(&cp);
    lp_spans_release(&sp);
    if (rc)
        return rc;
    if (fflush(stdout) != 0)
        return LP_EXIT_IO;
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
fail:
    lp_spancp_agg_free(agg);
    lp_spancp_release(&cp);
    lp_spans_release(&sp);
    return cli_fail("spans", &err);
}
