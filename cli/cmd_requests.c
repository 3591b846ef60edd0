/* cmd_requests.c: `longpole requests`: per-request critical path and slack over a causal
 * model, aggregated (Mystery Machine, OSDI'14 §4.2-4.4 and §5; docs/analyses/
 * mystery-critical-path.md, mystery-aggregates.md, docs/formats/mystery-requests-json.md),
 * and `longpole generate requests` (genreq.h). */
#include "reqcli.h"
#include "base/util.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/gen/genreq.h"
#include "longpole/analysis/mystery/reqpath.h"
#include "longpole/analysis/mystery/reqstats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char cli_help_requests[] =
    "usage: longpole requests [OPTIONS] [--model MODEL] LOG...\n"
    "\n"
    "Per request (OSDI'14 §4.2-4.3): the segments form a graph with the model's\n"
    "relationships made concrete (happens-before edges that this request respects,\n"
    "mutual exclusion ordered as it ran, plus each task's order), transitively reduced;\n"
    "the critical path is the longest path (sum of durations), equal lengths broken\n"
    "deterministically; every segment's slack is CP - CPstart - duration - CPend.\n"
    "Aggregated (§4.4, §5): critical path versus summed delay per category and segment\n"
    "(Figure 5), per-request share of the critical path (Figure 6), strata (Figure 7),\n"
    "slack (Figure 8), outliers (top latency) against the rest, and the natural-\n"
    "variation what-if: correlation of a category's time with latency per slack bucket\n"
    "(Figure 10). Without --model, the model is inferred from the same logs first.\n"
    "\n"
    "options:\n"
    "  --model FILE       causal model from `longpole infer`\n"
    "  --categories FILE  segment categories: lines 'CATEGORY task|segment|network PATTERN',\n"
    "                     first match wins (docs/formats/mystery-categories.md); default:\n"
    "                     'network' for segments crossing hosts, else the task's name\n"
    "  --stratify SPEC    strata by a request attribute (ATTR), by quantiles of a numeric\n"
    "                     one (ATTR:K), of latency (latency:K) or of a category's time\n"
    "                     (cat.NAME:K); repeatable\n"
    "  --outliers P       share of slowest requests taken as outliers (default 0.05)\n"
    "  --buckets N        what-if slack buckets (default 20)\n"
    "  --top N            rows of the segment tables (default 15, 0 = all)\n"
    "  --json             one JSON document (docs/formats/mystery-requests-json.md)\n"
    "  --per-request      also every request: latency, critical path, its segments\n"
    "                     (text: one line each; JSON: a \"requests\" array)\n"
    "  --request ID       details of one request: every segment, its slack, the path\n"
    "  --filter REGEX     (without --model) drop matching segments while inferring\n"
    "\n" REQCLI_HELP
    "\n"
    "Test logs: `longpole generate requests [OPTIONS] -o PREFIX` writes PREFIX.csv (or\n"
    "PREFIX.jsonl, or PREFIX.hosts/HOST.csv with --per-host), PREFIX.attrs.csv,\n"
    "PREFIX.categories, PREFIX.truth.json (the ground-truth model) and PREFIX.skew.csv\n"
    "(true clock offsets). Options: --requests N (10000), --segments N (60, >= 14),\n"
    "--clients N (1000), --webs N (8), --backends N (16), --skew D (50ms), --jitter D\n"
    "(50us), --net D (20ms), --dc-net D (300us), --server D (2ms), --client D (5ms),\n"
    "--miss-rate P (0.1: the optional db call), --rate R (requests/s, 100), --seed N,\n"
    "--per-host, --jsonl, --gzip, --threads N.\n";

/* ---- generator ----------------------------------------------------------------------- */

int cmd_generate_requests(int argc, char **argv)
{
    lp_genreq g;
    lp_genreq_defaults(&g);
    const char *out = NULL, *v;
    for (int i = 2; i < argc; i++) {
        uint64_t n;
        int64_t d;
        double x;
        if (cli_opt(argc, argv, &i, "-o", &out) || cli_opt(argc, argv, &i, "--output", &out)) {
            if (!out)
                return cli_usage("generate", "-o needs a file prefix");
        } else if (cli_opt(argc, argv, &i, "--requests", &v)) {
            if (!v || cli_parse_count(v, &n) || n == 0)
                return cli_usage("generate", "--requests needs a positive count (e.g. 1.3M)");
            g.requests = n;
        } else if (cli_opt(argc, argv, &i, "--segments", &v)) {
            if (!v || cli_parse_count(v, &n) || n < 14 || n > 20000)
                return cli_usage("generate", "--segments takes 14..20000");
            g.segments = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--clients", &v)) {
            if (!v || cli_parse_count(v, &n) || n == 0 || n > 100000000)
                return cli_usage("generate", "--clients takes 1..100M");
            g.clients = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--webs", &v)) {
            if (!v || cli_parse_count(v, &n) || n == 0 || n > 1000000)
                return cli_usage("generate", "--webs takes 1..1M");
            g.webs = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--backends", &v)) {
            if (!v || cli_parse_count(v, &n) || n == 0 || n > 1000000)
                return cli_usage("generate", "--backends takes 1..1M");
            g.backends = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--skew", &v)) {
            if (!v || cli_parse_dur(v, &d))
                return cli_usage("generate", "--skew needs a duration (e.g. 50ms)");
            g.skew_ns = d;
        } else if (cli_opt(argc, argv, &i, "--jitter", &v)) {
            if (!v || cli_parse_dur(v, &d))
                return cli_usage("generate", "--jitter needs a duration (e.g. 50us)");
            g.jitter_ns = d;
        } else if (cli_opt(argc, argv, &i, "--net", &v)) {
            if (!v || cli_parse_dur(v, &d))
                return cli_usage("generate", "--net needs a duration");
            g.net_ns = d;
        } else if (cli_opt(argc, argv, &i, "--dc-net", &v)) {
            if (!v || cli_parse_dur(v, &d))
                return cli_usage("generate", "--dc-net needs a duration");
            g.dc_net_ns = d;
        } else if (cli_opt(argc, argv, &i, "--server", &v)) {
            if (!v || cli_parse_dur(v, &d) || d <= 0)
                return cli_usage("generate", "--server needs a positive duration");
            g.server_ns = d;
        } else if (cli_opt(argc, argv, &i, "--client", &v)) {
            if (!v || cli_parse_dur(v, &d) || d <= 0)
                return cli_usage("generate", "--client needs a positive duration");
            g.client_ns = d;
        } else if (cli_opt(argc, argv, &i, "--miss-rate", &v)) {
            if (!v || cli_parse_double(v, &x) || x < 0 || x > 1)
                return cli_usage("generate", "--miss-rate takes 0..1");
            g.miss_rate = x;
        } else if (cli_opt(argc, argv, &i, "--rate", &v)) {
            if (!v || cli_parse_double(v, &x) || !(x > 0))
                return cli_usage("generate", "--rate takes a positive number of requests per second");
            g.rate = x;
        } else if (cli_opt(argc, argv, &i, "--seed", &v)) {
            if (!v || cli_parse_count(v, &n))
                return cli_usage("generate", "--seed needs a number");
            g.seed = n;
        } else if (cli_opt(argc, argv, &i, "--threads", &v)) {
            if (!v || cli_parse_count(v, &n) || n > 64)
                return cli_usage("generate", "--threads takes 0..64");
            g.threads = (unsigned)n;
        } else if (cli_flag(argv, i, "--per-host")) {
            g.per_host = 1;
        } else if (cli_flag(argv, i, "--jsonl")) {
            g.jsonl = 1;
        } else if (cli_flag(argv, i, "--gzip")) {
            g.gzip = 1;
        } else {
            return cli_usage("generate", "unknown option '%s' (see `longpole help requests`)", argv[i]);
        }
    }
    if (!out)
        return cli_usage("generate", "-o PREFIX is required");
    if (g.per_host && (g.jsonl || g.gzip))
        return cli_usage("generate", "--per-host writes plain CSV (no --jsonl or --gzip)");
    lp_error err;
    lp_error_clear(&err);
    lp_genreq_out o;
    if (lp_genreq_write(&g, out, &o, &err))
        return cli_fail("generate", &err);
    fprintf(stderr, "generated %llu requests of %u segments: %llu log lines (%.1f MB) with prefix %s\n",
            (unsigned long long)g.requests, g.segments, (unsigned long long)o.rows, (double)o.bytes / 1e6, out);
    return LP_EXIT_OK;
}

/* ---- output helpers ---------------------------------------------------------------------- */

static const char *dur(double ns, char *buf, size_t n)
{
    if (!isfinite(ns))
        return "-";
    return lp_fmt_dur((int64_t)llround(ns), buf, n);
}

static void jq(lp_jsonw *j, const char *key, const double *q)
{
    lp_jsonw_key(j, key);
    lp_jsonw_arr(j);
    for (int p = 0; p < LP_REQSTATS_Q; p++)
        lp_jsonw_dbl(j, q[p]);
    lp_jsonw_arr_end(j);
}

typedef struct ropts {
    int json, per_request;
    const char *request;
    uint64_t top;
} ropts;

static void print_request_detail(const lp_reqpath *p, const lp_causal *m, const lp_reqlog *rl, uint64_t r,
                                 const lp_reqcat *cat)
{
    char lab[1024], b1[32], b2[32], b3[32], b4[32];
    printf("request %s: latency %s, critical path %s, %u segments, %u edges after reduction, %u model violation%s\n",
           lp_reqlog_str(rl, rl->req_name[r]), dur((double)p->latency, b1, sizeof b1), dur((double)p->cp, b2, sizeof b2),
           p->n, p->edges, p->violations, p->violations == 1 ? "" : "s");
    printf("  %-40s %-10s %12s %12s %12s %12s  %s\n", "segment", "category", "start", "duration", "slack",
           "cp start", "on path");
    for (uint32_t i = 0; i < p->n; i++) {
        const char *c = p->seg[i] != LP_CAUSAL_NONE ? cat->name[cat->of_seg[p->seg[i]]] : "?";
        printf("  %-40s %-10s %12s %12s %12s %12s  %s\n",
               p->seg[i] != LP_CAUSAL_NONE ? lp_causal_label(m, p->seg[i], lab, sizeof lab) : "?", c,
               dur((double)(p->start[i] - p->first), b1, sizeof b1), dur((double)p->dur[i], b2, sizeof b2),
               dur((double)p->slack[i], b3, sizeof b3), dur((double)p->cpstart[i], b4, sizeof b4),
               p->oncp[i] ? "*" : "");
    }
    printf("  critical path:");
    for (uint32_t k = 0; k < p->npath; k++)
        printf("%s%s", k ? " > " : " ", lp_causal_label(m, p->seg[p->path[k]], lab, sizeof lab));
    printf("\n");
}

static void json_request(lp_jsonw *j, const lp_reqpath *p, const lp_causal *m, const lp_reqlog *rl, uint64_t r)
{
    (void)m;
    lp_jsonw_obj(j);
    lp_jsonw_kstr(j, "request", lp_reqlog_str(rl, rl->req_name[r]));
    lp_jsonw_ki64(j, "start_ns", p->first);
    lp_jsonw_ki64(j, "latency_ns", p->latency);
    lp_jsonw_ki64(j, "cp_ns", p->cp);
    lp_jsonw_ku64(j, "violations", p->violations);
    lp_jsonw_key(j, "path");
    lp_jsonw_arr(j);
    for (uint32_t k = 0; k < p->npath; k++)
        lp_jsonw_u64(j, p->seg[p->path[k]]);
    lp_jsonw_arr_end(j);
    lp_jsonw_key(j, "segments");
    lp_jsonw_arr(j);
    for (uint32_t i = 0; i < p->n; i++) {
        lp_jsonw_arr(j);
        lp_jsonw_u64(j, p->seg[i]);
        lp_jsonw_i64(j, p->start[i] - p->first);
        lp_jsonw_i64(j, p->dur[i]);
        lp_jsonw_i64(j, p->slack[i]);
        lp_jsonw_arr_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_jsonw_obj_end(j);
}

/* ---- the command --------------------------------------------------------------------------- */

int cmd_requests(int argc, char **argv)
{
    reqcli o;
    reqcli_init(&o);
    ropts ro = {0, 0, NULL, 15};
    const char *model = NULL, *cats = NULL, *filter = NULL, *v;
    const char **strat = lp_malloc((size_t)argc * sizeof *strat);
    char **paths = lp_malloc((size_t)argc * sizeof *paths);
    uint32_t nstrat = 0;
    double share = 0.05;
    uint64_t buckets = 20;
    int rc = 0;
    if (!strat || !paths) {
        lp_free(strat), lp_free(paths);
        return LP_EXIT_NOMEM;
    }
    for (int i = 1; i < argc; i++) {
        uint64_t n;
        if (reqcli_opt(&o, "requests", argc, argv, &i, &rc)) {
            if (rc)
                goto end0;
        } else if (cli_opt(argc, argv, &i, "--model", &model)) {
            if (!model) {
                rc = cli_usage("requests", "--model needs a file");
                goto end0;
            }
        } else if (cli_opt(argc, argv, &i, "--categories", &cats)) {
            if (!cats) {
                rc = cli_usage("requests", "--categories needs a file");
                goto end0;
            }
        } else if (cli_opt(argc, argv, &i, "--filter", &filter)) {
            if (!filter) {
                rc = cli_usage("requests", "--filter needs a regular expression");
                goto end0;
            }
        } else if (cli_opt(argc, argv, &i, "--stratify", &v)) {
            if (!v) {
                rc = cli_usage("requests", "--stratify needs an attribute");
                goto end0;
            }
            strat[nstrat++] = v;
        } else if (cli_opt(argc, argv, &i, "--outliers", &v)) {
            if (!v || cli_parse_double(v, &share) || !(share > 0 && share < 1)) {
                rc = cli_usage("requests", "--outliers takes a share between 0 and 1 (e.g. 0.05)");
                goto end0;
            }
        } else if (cli_opt(argc, argv, &i, "--buckets", &v)) {
            if (!v || cli_parse_count(v, &buckets) || buckets < 1 || buckets > 1000) {
                rc = cli_usage("requests", "--buckets takes 1..1000");
                goto end0;
            }
        } else if (cli_opt(argc, argv, &i, "--top", &v)) {
            if (!v || cli_parse_count(v, &n)) {
                rc = cli_usage("requests", "--top needs a count");
                goto end0;
            }
            ro.top = n;
        } else if (cli_opt(argc, argv, &i, "--request", &ro.request)) {
            if (!ro.request) {
                rc = cli_usage("requests", "--request needs a request id");
                goto end0;
            }
        } else if (cli_flag(argv, i, "--json")) {
            ro.json = 1;
        } else if (cli_flag(argv, i, "--per-request")) {
            ro.per_request = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            rc = cli_usage("requests", "unknown option '%s'", argv[i]);
            goto end0;
        } else {
            paths[o.npaths++] = argv[i];
        }
    }
    o.paths = paths;
    lp_error err;
    lp_error_clear(&err);
    lp_causal m;
    int have_m = 0, data_errors = 0;
    lp_reqlog *rl = NULL;
    uint32_t *map = NULL;
    lp_reqcat cat;
    lp_reqcat_init(&cat);
    lp_reqstats S;
    memset(&S, 0, sizeof S);
    lp_reqpath p;
    lp_reqpath_init(&p);
    if (model) {
        if (lp_causal_load(&m, model, &err))
            goto fail;
    } else if (lp_causal_init(&m, &err)) {
        goto fail;
    }
    have_m = 1;
    if (!model && filter && lp_causal_set_filter(&m, filter, &err)) {
        rc = cli_usage("requests", "%s", err.msg);
        goto end;
    }
    if (cats && lp_reqcat_load(&cat, cats, &err)) {
        rc = cli_fail("requests", &err);
        goto end;
    }
    if ((rc = reqcli_load(&o, "requests", &rl, &data_errors)) != 0)
        goto end;
    if ((rc = reqcli_skew(&o, "requests", rl, NULL)) != 0)
        goto end;
    if (lp_causal_map(&m, rl, &map, &err))
        goto fail;
    if (!model) {
        lp_causal_refine_opts fo;
        memset(&fo, 0, sizeof fo);
        fo.threads = o.threads;
        if (lp_causal_refine(&m, rl, map, &fo, &err))
            goto fail;
        if (!o.quiet)
            fprintf(stderr, "longpole requests: no --model: inferred from these logs (%llu requests)\n",
                    (unsigned long long)m.nreq);
    }
    if (!model)
        reqcli_mark(&o, "infer");
    if (lp_causal_finish(&m, model ? NULL : rl, map, &err))
        goto fail;
    if (lp_reqcat_assign(&cat, &m, &err))
        goto fail;

    if (ro.request) {
        uint64_t r = lp_reqlog_find(rl, ro.request);
        if (r == UINT64_MAX) {
            fprintf(stderr, "longpole requests: no request '%s' in the logs\n", ro.request);
            rc = LP_EXIT_USAGE;
            goto end;
        }
        if (rl->rbad[r]) {
            fprintf(stderr, "longpole requests: request '%s' was excluded for input errors\n", ro.request);
            rc = LP_EXIT_DATA;
            goto end;
        }
        if (lp_reqpath_compute(&p, &m, rl, map, r, &err))
            goto fail;
        if (ro.json) {
            lp_jsonw j;
            lp_jsonw_init(&j, stdout, 0);
            json_request(&j, &p, &m, rl, r);
            lp_jsonw_end(&j);
        } else {
            print_request_detail(&p, &m, rl, r, &cat);
        }
        rc = data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
        goto end;
    }

    lp_reqstats_opts so;
    memset(&so, 0, sizeof so);
    so.threads = o.threads;
    so.outlier_share = share;
    so.buckets = (uint32_t)buckets;
    so.stratify = strat;
    so.nstratify = nstrat;
    if (cli_progress_enabled())
        so.progress = cli_progress;
    if (lp_reqstats_run(&m, rl, map, &cat, &so, &S, &err))
        goto fail;
    cli_progress_done();
    reqcli_mark(&o, "paths+stats");
    uint32_t C = S.ncat;
    char b1[32], b2[32], b3[32], b4[32], b5[32], lab[1024];
    double n = (double)(S.analysed ? S.analysed : 1);
    int64_t cp_total = 0, dur_total = 0;
    for (uint32_t c = 0; c < C; c++) {
        cp_total += S.cat[c].cp_sum;
        dur_total += S.cat[c].dur_sum;
    }
    uint64_t top = ro.top ? ro.top : UINT64_MAX;
    if (ro.json) {
        lp_jsonw j;
        lp_jsonw_init(&j, stdout, 0);
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
        lp_jsonw_kstr(&j, "command", "requests");
        lp_jsonw_key(&j, "input");
        lp_jsonw_obj(&j);
        lp_jsonw_ku64(&j, "requests", rl->nreqs);
        lp_jsonw_ku64(&j, "analysed", S.analysed);
        lp_jsonw_ku64(&j, "excluded", S.excluded);
        lp_jsonw_ku64(&j, "lines", rl->nlines);
        lp_jsonw_ku64(&j, "bad_lines", rl->nbadlines);
        lp_jsonw_kbool(&j, "skew_corrected", !o.no_skew);
        lp_jsonw_kbool(&j, "input_errors", data_errors);
        lp_jsonw_obj_end(&j);
        lp_jsonw_key(&j, "model");
        lp_jsonw_obj(&j);
        if (model)
            lp_jsonw_kstr(&j, "file", model);
        else
            lp_jsonw_kstr(&j, "file", "(inferred from the input)");
        lp_jsonw_ku64(&j, "segments", m.nseg);
        lp_jsonw_ku64(&j, "requests", m.nreq);
        lp_jsonw_ku64(&j, "violations", S.violations);
        lp_jsonw_ku64(&j, "unknown_segments", S.unknown);
        lp_jsonw_obj_end(&j);
        lp_jsonw_key(&j, "latency");
        lp_jsonw_obj(&j);
        lp_jsonw_kdbl(&j, "mean_ns", S.latency_mean);
        jq(&j, "quantiles_ns", S.latency_q);
        lp_jsonw_obj_end(&j);
        lp_jsonw_key(&j, "critical_path");
        lp_jsonw_obj(&j);
        lp_jsonw_kdbl(&j, "mean_ns", S.cp_mean);
        jq(&j, "quantiles_ns", S.cp_q);
        lp_jsonw_obj_end(&j);
        lp_jsonw_key(&j, "categories");
        lp_jsonw_arr(&j);
        for (uint32_t c = 0; c < C; c++) {
            const lp_reqstats_cat *pc = &S.cat[c];
            lp_jsonw_obj(&j);
            lp_jsonw_kstr(&j, "name", cat.name[c]);
            lp_jsonw_ku64(&j, "requests_present", pc->present);
            lp_jsonw_kdbl(&j, "cp_mean_ns", (double)pc->cp_sum / n);
            lp_jsonw_kdbl(&j, "summed_mean_ns", (double)pc->dur_sum / n);
            lp_jsonw_kdbl(&j, "cp_share", cp_total ? (double)pc->cp_sum / (double)cp_total : NAN);
            lp_jsonw_kdbl(&j, "summed_share", dur_total ? (double)pc->dur_sum / (double)dur_total : NAN);
            jq(&j, "cp_share_quantiles", pc->share_q);
            jq(&j, "slack_quantiles_ns", pc->slack_q);
            lp_jsonw_key(&j, "whatif");
            lp_jsonw_arr(&j);
            for (uint32_t b = 0; b < pc->nbuckets; b++) {
                const lp_reqstats_bucket *bk = &pc->buckets[b];
                lp_jsonw_obj(&j);
                lp_jsonw_ki64(&j, "slack_min_ns", bk->slack_lo);
                lp_jsonw_ki64(&j, "slack_max_ns", bk->slack_hi);
                lp_jsonw_ku64(&j, "requests", bk->n);
                lp_jsonw_kdbl(&j, "correlation", bk->r);
                lp_jsonw_kdbl(&j, "time_mean_ns", bk->x_mean);
                lp_jsonw_kdbl(&j, "latency_mean_ns", bk->latency_mean);
                lp_jsonw_obj_end(&j);
            }
            lp_jsonw_arr_end(&j);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
        lp_jsonw_key(&j, "segments");
        lp_jsonw_arr(&j);
        for (uint32_t s = 0; s < S.nseg; s++) {
            const lp_reqstats_seg *g = &S.seg[s];
            lp_jsonw_obj(&j);
            lp_jsonw_ku64(&j, "id", s);
            lp_jsonw_kstr(&j, "task", lp_strtab_get(&m.names, m.seg_task[s]));
            lp_jsonw_kstr(&j, "start", lp_strtab_get(&m.names, m.seg_from[s]));
            lp_jsonw_kstr(&j, "end", lp_strtab_get(&m.names, m.seg_to[s]));
            lp_jsonw_kstr(&j, "category", cat.name[cat.of_seg[s]]);
            lp_jsonw_ku64(&j, "requests", g->present);
            lp_jsonw_ku64(&j, "on_cp", g->oncp);
            lp_jsonw_kdbl(&j, "cp_mean_ns", (double)g->cp_sum / n);
            lp_jsonw_kdbl(&j, "summed_mean_ns", (double)g->dur_sum / n);
            lp_jsonw_kdbl(&j, "slack_mean_ns", g->present ? (double)g->slack_sum / (double)g->present : NAN);
            lp_jsonw_key(&j, "slack_histogram");
            lp_jsonw_arr(&j);
            for (int h = 0; h < LP_REQSTATS_HIST; h++)
                lp_jsonw_u64(&j, g->slack_hist[h]);
            lp_jsonw_arr_end(&j);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
        lp_jsonw_key(&j, "outliers");
        lp_jsonw_obj(&j);
        lp_jsonw_kdbl(&j, "share", share);
        lp_jsonw_ku64(&j, "requests", S.noutliers);
        lp_jsonw_ki64(&j, "latency_min_ns", S.outlier_latency);
        lp_jsonw_key(&j, "segments");
        lp_jsonw_arr(&j);
        uint64_t rest = S.analysed - S.noutliers;
        int64_t tout = 0, tall = 0;
        for (uint32_t s = 0; s < S.nseg; s++)
            tout += S.seg[s].cp_out, tall += S.seg[s].cp_sum;
        for (uint32_t k = 0; k < S.nranked && k < top; k++) {
            uint32_t s = S.ranked[k];
            const lp_reqstats_seg *g = &S.seg[s];
            lp_jsonw_obj(&j);
            lp_jsonw_ku64(&j, "id", s);
            lp_jsonw_kstr(&j, "segment", lp_causal_label(&m, s, lab, sizeof lab));
            lp_jsonw_kdbl(&j, "overrepresentation", lp_reqstats_overrep(&S, s));
            lp_jsonw_kdbl(&j, "cp_share_outliers", tout ? (double)g->cp_out / (double)tout : NAN);
            lp_jsonw_kdbl(&j, "cp_share_rest", tall - tout ? (double)(g->cp_sum - g->cp_out) / (double)(tall - tout) : NAN);
            lp_jsonw_kdbl(&j, "on_cp_outliers", S.noutliers ? (double)g->oncp_out / (double)S.noutliers : NAN);
            lp_jsonw_kdbl(&j, "on_cp_rest", rest ? (double)(g->oncp - g->oncp_out) / (double)rest : NAN);
            lp_jsonw_kdbl(&j, "present_outliers", S.noutliers ? (double)g->present_out / (double)S.noutliers : NAN);
            lp_jsonw_kdbl(&j, "present_rest", rest ? (double)(g->present - g->present_out) / (double)rest : NAN);
            lp_jsonw_kdbl(&j, "cp_mean_outliers_ns", S.noutliers ? (double)g->cp_out / (double)S.noutliers : NAN);
            lp_jsonw_kdbl(&j, "cp_mean_rest_ns", rest ? (double)(g->cp_sum - g->cp_out) / (double)rest : NAN);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
        lp_jsonw_obj_end(&j);
        lp_jsonw_key(&j, "strata");
        lp_jsonw_arr(&j);
        for (uint32_t i = 0; i < S.nstrat; i++) {
            const lp_reqstats_strat *st = &S.strat[i];
            lp_jsonw_obj(&j);
            lp_jsonw_kstr(&j, "by", st->name);
            lp_jsonw_ku64(&j, "missing", st->missing);
            lp_jsonw_key(&j, "values");
            lp_jsonw_arr(&j);
            for (uint32_t k = 0; k < st->nvals; k++) {
                const lp_reqstats_stratum *sv = &st->vals[k];
                lp_jsonw_obj(&j);
                lp_jsonw_kstr(&j, "value", sv->label);
                lp_jsonw_ku64(&j, "requests", sv->n);
                lp_jsonw_kdbl(&j, "fraction", (double)sv->n / n);
                lp_jsonw_kdbl(&j, "latency_mean_ns", sv->latency_mean);
                lp_jsonw_kdbl(&j, "cp_mean_ns", sv->cp_mean);
                lp_jsonw_key(&j, "cp_mean_ns_by_category");
                lp_jsonw_obj(&j);
                for (uint32_t c = 0; c < C; c++)
                    lp_jsonw_kdbl(&j, cat.name[c], sv->cat_cp_mean[c]);
                lp_jsonw_obj_end(&j);
                lp_jsonw_obj_end(&j);
            }
            lp_jsonw_arr_end(&j);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
        if (ro.per_request) {
            lp_jsonw_key(&j, "requests");
            lp_jsonw_arr(&j);
            for (uint64_t r = 0; r < rl->nreqs; r++) {
                if (rl->rbad[r])
                    continue;
                if (lp_reqpath_compute(&p, &m, rl, map, r, &err))
                    goto fail;
                json_request(&j, &p, &m, rl, r);
            }
            lp_jsonw_arr_end(&j);
        }
        lp_jsonw_obj_end(&j);
        lp_jsonw_end(&j);
    } else {
        printf("requests: %llu analysed, %llu excluded for input errors; model %s: %u segments from %llu requests\n",
               (unsigned long long)S.analysed, (unsigned long long)S.excluded, model ? model : "(inferred)", m.nseg,
               (unsigned long long)m.nreq);
        if (S.analysed == 0) {
            printf("no request to analyse\n");
            goto done_text;
        }
        printf("latency: mean %s, p50 %s, p90 %s, p99 %s\n", dur(S.latency_mean, b1, sizeof b1),
               dur(S.latency_q[50], b2, sizeof b2), dur(S.latency_q[90], b3, sizeof b3),
               dur(S.latency_q[99], b4, sizeof b4));
        printf("critical path: mean %s (%.1f%% of mean latency); model relationships contradicted: %llu; segment "
               "occurrences unknown to the model: %llu; clock skew %s\n",
               dur(S.cp_mean, b1, sizeof b1), S.latency_mean > 0 ? 100.0 * S.cp_mean / S.latency_mean : 0.0,
               (unsigned long long)S.violations, (unsigned long long)S.unknown,
               o.no_skew ? "not corrected" : "corrected");
        printf("\ncritical path vs summed delay, mean per request (Figure 5):\n");
        printf("  %-16s %12s %8s %12s %8s %10s\n", "category", "cp", "cp %", "summed", "summed %", "requests");
        for (uint32_t c = 0; c < C; c++) {
            const lp_reqstats_cat *pc = &S.cat[c];
            printf("  %-16s %12s %7.1f%% %12s %7.1f%% %10llu\n", cat.name[c], dur((double)pc->cp_sum / n, b1, sizeof b1),
                   cp_total ? 100.0 * (double)pc->cp_sum / (double)cp_total : 0.0,
                   dur((double)pc->dur_sum / n, b2, sizeof b2),
                   dur_total ? 100.0 * (double)pc->dur_sum / (double)dur_total : 0.0, (unsigned long long)pc->present);
        }
        printf("\nshare of each request's critical path (Figure 6), quantiles over requests:\n");
        printf("  %-16s %7s %7s %7s %7s %7s %7s\n", "category", "p10", "p25", "p50", "p75", "p90", "p99");
        for (uint32_t c = 0; c < C; c++) {
            const double *q = S.cat[c].share_q;
            printf("  %-16s %6.1f%% %6.1f%% %6.1f%% %6.1f%% %6.1f%% %6.1f%%\n", cat.name[c], 100 * q[10], 100 * q[25],
                   100 * q[50], 100 * q[75], 100 * q[90], 100 * q[99]);
        }
        printf("\nslack per request (Figure 8: the slack of the category's last-ending segment), quantiles:\n");
        printf("  %-16s %10s %10s %10s %10s %10s\n", "category", "p10", "p25", "p50", "p75", "p90");
        for (uint32_t c = 0; c < C; c++) {
            const double *q = S.cat[c].slack_q;
            printf("  %-16s %10s %10s %10s %10s %10s\n", cat.name[c], dur(q[10], b1, sizeof b1), dur(q[25], b2, sizeof b2),
                   dur(q[50], b3, sizeof b3), dur(q[75], b4, sizeof b4), dur(q[90], b5, sizeof b5));
        }
        /* segments by critical-path time */
        uint32_t *ord = lp_malloc((S.nseg ? S.nseg : 1) * sizeof *ord);
        if (!ord) {
            rc = LP_EXIT_NOMEM;
            goto end;
        }
        uint32_t no = 0;
        for (uint32_t s = 0; s < S.nseg; s++)
            if (S.seg[s].present)
                ord[no++] = s;
        for (uint32_t i = 1; i < no; i++) {
            uint32_t x = ord[i], k = i;
            while (k > 0 && (S.seg[ord[k - 1]].cp_sum < S.seg[x].cp_sum ||
                             (S.seg[ord[k - 1]].cp_sum == S.seg[x].cp_sum && ord[k - 1] > x))) {
                ord[k] = ord[k - 1];
                k--;
            }
            ord[k] = x;
        }
        printf("\nsegments by critical-path time (mean per request):\n");
        printf("  %-40s %-10s %8s %12s %12s %12s\n", "segment", "category", "on cp", "cp", "summed", "slack mean");
        for (uint32_t k = 0; k < no && k < top; k++) {
            const lp_reqstats_seg *g = &S.seg[ord[k]];
            printf("  %-40s %-10s %7.1f%% %12s %12s %12s\n", lp_causal_label(&m, ord[k], lab, sizeof lab),
                   cat.name[cat.of_seg[ord[k]]], g->present ? 100.0 * (double)g->oncp / (double)g->present : 0.0,
                   dur((double)g->cp_sum / n, b1, sizeof b1), dur((double)g->dur_sum / n, b2, sizeof b2),
                   dur(g->present ? (double)g->slack_sum / (double)g->present : NAN, b3, sizeof b3));
        }
        lp_free(ord);
        uint64_t rest = S.analysed - S.noutliers;
        int64_t tout = 0, tall = 0;
        for (uint32_t s = 0; s < S.nseg; s++)
            tout += S.seg[s].cp_out, tall += S.seg[s].cp_sum;
        printf("\noutliers: the slowest %.3g%% (%llu requests, latency >= %s) against the rest; segments by\n"
               "over-representation on their critical paths (share of the outliers' cp time minus the rest's):\n",
               100 * share, (unsigned long long)S.noutliers, dur((double)S.outlier_latency, b1, sizeof b1));
        printf("  %-40s %9s %9s %9s %9s %9s %9s\n", "segment", "cp% out", "cp% rest", "oncp out", "oncp rest",
               "seen out", "seen rest");
        for (uint32_t k = 0; k < S.nranked && k < (top < 10 ? top : 10); k++) {
            uint32_t s = S.ranked[k];
            const lp_reqstats_seg *g = &S.seg[s];
            printf("  %-40s %8.2f%% %8.2f%% %8.1f%% %8.1f%% %8.1f%% %8.1f%%\n", lp_causal_label(&m, s, lab, sizeof lab),
                   tout ? 100.0 * (double)g->cp_out / (double)tout : 0.0,
                   tall - tout ? 100.0 * (double)(g->cp_sum - g->cp_out) / (double)(tall - tout) : 0.0,
                   S.noutliers ? 100.0 * (double)g->oncp_out / (double)S.noutliers : 0.0,
                   rest ? 100.0 * (double)(g->oncp - g->oncp_out) / (double)rest : 0.0,
                   S.noutliers ? 100.0 * (double)g->present_out / (double)S.noutliers : 0.0,
                   rest ? 100.0 * (double)(g->present - g->present_out) / (double)rest : 0.0);
        }
        printf("\nwhat-if from natural variation (Figure 10): per category, requests in %llu equal buckets by\n"
               "the category's slack; r = correlation of the category's summed time with latency:\n",
               (unsigned long long)buckets);
        for (uint32_t c = 0; c < C; c++) {
            const lp_reqstats_cat *pc = &S.cat[c];
            if (!pc->nbuckets)
                continue;
            printf("  %s:", cat.name[c]);
            printf("\n    %-8s %-23s %9s %7s %12s %12s\n", "bucket", "slack", "requests", "r", "time", "latency");
            for (uint32_t b = 0; b < pc->nbuckets; b++) {
                const lp_reqstats_bucket *bk = &pc->buckets[b];
                char range[64], rb[16];
                snprintf(range, sizeof range, "%s..%s", dur((double)bk->slack_lo, b1, sizeof b1),
                         dur((double)bk->slack_hi, b2, sizeof b2));
                if (isnan(bk->r))
                    snprintf(rb, sizeof rb, "-");
                else
                    snprintf(rb, sizeof rb, "%.3f", bk->r);
                printf("    %-8u %-23s %9llu %7s %12s %12s\n", b + 1, range, (unsigned long long)bk->n, rb,
                       dur(bk->x_mean, b3, sizeof b3), dur(bk->latency_mean, b4, sizeof b4));
            }
        }
        for (uint32_t i = 0; i < S.nstrat; i++) {
            const lp_reqstats_strat *st = &S.strat[i];
            printf("\nstrata by %s (Figure 7): mean critical path per category\n", st->name);
            printf("  %-24s %9s %7s %12s %12s", "value", "requests", "share", "latency", "cp");
            for (uint32_t c = 0; c < C; c++)
                printf(" %12.12s", cat.name[c]);
            printf("\n");
            for (uint32_t k = 0; k < st->nvals; k++) {
                const lp_reqstats_stratum *sv = &st->vals[k];
                printf("  %-24s %9llu %6.1f%% %12s %12s", sv->label, (unsigned long long)sv->n, 100.0 * (double)sv->n / n,
                       dur(sv->latency_mean, b1, sizeof b1), dur(sv->cp_mean, b2, sizeof b2));
                for (uint32_t c = 0; c < C; c++)
                    printf(" %12s", dur(sv->cat_cp_mean[c], b3, sizeof b3));
                printf("\n");
            }
            if (st->missing)
                printf("  (%llu requests without a value)\n", (unsigned long long)st->missing);
        }
        if (ro.per_request) {
            printf("\nper request: id, latency, critical path, path\n");
            for (uint64_t r = 0; r < rl->nreqs; r++) {
                if (rl->rbad[r])
                    continue;
                if (lp_reqpath_compute(&p, &m, rl, map, r, &err))
                    goto fail;
                printf("%s %lld %lld", lp_reqlog_str(rl, rl->req_name[r]), (long long)p.latency, (long long)p.cp);
                for (uint32_t k = 0; k < p.npath; k++)
                    printf("%s%s", k ? " > " : " ", lp_causal_label(&m, p.seg[p.path[k]], lab, sizeof lab));
                printf("\n");
            }
        }
    }
done_text:
    fflush(stdout);
    reqcli_mark(&o, "output");
    reqcli_timing(&o, "requests");
    rc = data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
    goto end;
fail:
    cli_progress_done();
    rc = cli_fail("requests", &err);
end:
    lp_reqpath_release(&p);
    lp_reqstats_release(&S);
    lp_reqcat_release(&cat);
    if (have_m)
        lp_causal_release(&m);
    lp_free(map);
    lp_reqlog_free(rl);
end0:
    lp_free(strat);
    lp_free(paths);
    return rc;
}
