/* cmd_requests.c: `longpole requests` (and, given a shard, `dist requests`: the paths
 * split over the ranks, reqdist.h): per-request critical path and slack over a causal
 * model, aggregated (Mystery Machine, OSDI'14 §4.2-4.4 and §5; docs/analyses/
 * mystery-critical-path.md, mystery-aggregates.md, docs/formats/mystery-requests-json.md).
 * Stages: options; the model (loaded, or inferred from the same logs) and categories;
 * the logs, skew-corrected; one request (--request) or the statistics of all; the
 * output (requests_text.c, requests_json.c). */
#include "reqout.h"
#include "infdist.h"
#include "reqdist.h"
#include "dshard.h"

#include <string.h>

typedef struct requests_args {
    reqcli rq;
    reqcli_model mo;
    cli_list strat;
    uint64_t top;
    const char *request;
    const char *save_model;
    int json, per_request;
    dshard_opt dist;           /* `dist requests`: --stats */
} requests_args;

static void requests_init(void *p)
{
    requests_args *a = p;
    reqcli_init(&a->rq);
    reqcli_model_init(&a->mo);
    a->top = 15;
}

#define A(m) CLI_AT(requests_args, m)

static const cli_opt requests_opts[] = {
    {"--stratify", .kind = CLI_LIST, .arg = "SPEC", A(strat), .err = "--stratify needs an attribute",
     .example = "latency:4",
     .help = "strata by a request attribute (ATTR), by quantiles of a numeric\n"
             "one (ATTR:K), of latency (latency:K) or of a category's time\n"
             "(cat.NAME:K); repeatable"},
    {"--top", .kind = CLI_COUNT, .arg = "N", A(top), .err = "--top needs a count", .example = "5",
     .help = "rows of the segment tables (default 15, 0 = all)"},
    {"--json", .kind = CLI_FLAG, A(json), .help = "one JSON document (docs/formats/mystery-requests-json.md)"},
    {"--per-request", .kind = CLI_FLAG, A(per_request),
     .help = "also every request: latency, critical path, its segments\n"
             "(text: one line each; JSON: a \"requests\" array)"},
    {"--request", .kind = CLI_STR, .arg = "ID", A(request), .err = "--request needs a request id", .example = "r7",
     .help = "details of one request: every segment, its slack, the path"},
    {"--save-model", .kind = CLI_STR, .arg = "FILE", A(save_model), .err = "--save-model needs a file name",
     .example = "m.json",
     .help = "(without --model) also write the model inferred from the logs,\n"
             "as `longpole infer -o FILE` would: model and analysis from one\n"
             "reading of the logs"},
    CLI_END,
};

#undef A

const cli_spec cli_spec_requests = {
    .cmd = "requests",
    .usage = "usage: longpole requests [OPTIONS] [--model MODEL] LOG...\n",
    .about = "Per request (OSDI'14 §4.2-4.3): the segments form a graph with the model's\n"
             "relationships made concrete (happens-before edges that this request respects,\n"
             "mutual exclusion ordered as it ran, plus each task's order), transitively reduced;\n"
             "the critical path is the longest path (sum of durations), equal lengths broken\n"
             "deterministically; every segment's slack is CP - CPstart - duration - CPend.\n"
             "Aggregated (§4.4, §5): critical path versus summed delay per category and segment\n"
             "(Figure 5), per-request share of the critical path (Figure 6), strata (Figure 7),\n"
             "slack (Figure 8), outliers (top latency) against the rest, and the natural-\n"
             "variation what-if: correlation of a category's time with latency per slack bucket\n"
             "(Figure 10). Without --model, the model is inferred from the same logs, read\n"
             "once: `requests --save-model m.json LOG` gives the model of `infer -o m.json LOG`\n"
             "and the analysis in one pass (docs/analyses/mystery-critical-path.md).\n",
    .groups = {CLI_GROUP("options:", reqcli_model_opts, requests_args, mo), CLI_OWN(NULL, requests_opts),
               REQCLI_GROUPS(requests_args, rq)},
    .notes = "Test logs with a known model: `longpole generate requests` (`longpole help generate`).\n",
    .size = sizeof(requests_args),
    .init = requests_init,
};

/* `dist requests`: the same tables and --stats (cmd_dist_requests.c). */
const cli_spec cli_spec_dist_requests = {
    .cmd = "dist requests",
    .usage = "usage: longpole dist requests [--stats] [OPTIONS] [--model MODEL] LOG...   (mpirun -n K)\n",
    .about = "`requests` with the requests split over the ranks of an MPI job: every rank reads every\n"
             "log; without --model the model is inferred as `dist infer` does; each rank computes the\n"
             "critical paths and slack of its share of the requests, rank 0 gathers them and prints\n"
             "exactly what `requests` does (docs/distributed.md). The options are requests', plus\n"
             "--stats.\n",
    .groups = {CLI_GROUP("options:", reqcli_model_opts, requests_args, mo), CLI_OWN(NULL, requests_opts),
               REQCLI_GROUPS(requests_args, rq), DSHARD_GROUP(requests_args, dist)},
    .size = sizeof(requests_args),
    .init = requests_init,
};

/* What a run holds, released by run_release. */
typedef struct req_run {
    lp_causal m;
    int have_m;
    lp_reqlog *rl;
    int data_errors;
    uint32_t *map;
    lp_reqcat cat;
    lp_reqstats S;
    lp_reqpath p;
} req_run;

static void run_release(req_run *r)
{
    lp_reqpath_release(&r->p);
    lp_reqstats_release(&r->S);
    lp_reqcat_release(&r->cat);
    if (r->have_m)
        lp_causal_release(&r->m);
    lp_free(r->map);
    lp_reqlog_free(r->rl);
}

/* The model (loaded, or empty with --filter) and the categories. */
static int open_model(const requests_args *a, req_run *r)
{
    const reqcli_model *mo = &a->mo;
    lp_error err;
    lp_error_clear(&err);
    if (mo->model ? lp_causal_load(&r->m, mo->model, &err) : lp_causal_init(&r->m, &err))
        return cli_fail("requests", &err);
    r->have_m = 1;
    if (!mo->model && mo->filter && lp_causal_set_filter(&r->m, mo->filter, &err))
        return cli_usage("requests", "%s", err.msg);
    if (mo->cats && lp_reqcat_load(&r->cat, mo->cats, &err))
        return cli_fail("requests", &err);
    return 0;
}

/* Without --model: the model inferred from the logs (over the ranks with a shard). */
static int infer(requests_args *a, req_run *r, dshard *sh)
{
    lp_error err;
    lp_error_clear(&err);
    lp_causal_refine_opts fo;
    memset(&fo, 0, sizeof fo);
    fo.threads = a->rq.threads;
    lp_status st = cli_infdist_refine(sh, LP_OK, &r->m, r->rl, r->map, &fo, &err);
    if (st)
        return cli_fail("requests", &err);
    if (!a->rq.quiet && (!sh || dshard_root(sh)))
        fprintf(stderr, "longpole requests: no --model: inferred from these logs (%llu requests)\n",
                (unsigned long long)r->m.nreq);
    reqcli_mark(&a->rq, "infer");
    if (sh ? cli_infdist_finish(sh, &r->m, r->rl, r->map, &err) : lp_causal_finish(&r->m, r->rl, r->map, &err))
        return cli_fail("requests", &err);
    return 0;
}

/* The logs, skew-corrected, mapped to the model (inferred from them without --model). */
static int load(requests_args *a, req_run *r, dshard *sh)
{
    int rc = reqcli_load(&a->rq, "requests", &r->rl, &r->data_errors);
    /* a rank that could not load, or loaded other logs, stops every rank */
    if (sh && ((rc = dshard_agree(sh, rc)) != 0 || (rc = cli_infdist_same(sh, r->rl)) != 0))
        return rc;
    if (rc)
        return rc;
    rc = reqcli_skew(&a->rq, "requests", r->rl, NULL);
    if (sh) /* the same on every rank (the same logs), unless memory ran out on one */
        rc = dshard_agree(sh, rc);
    if (rc)
        return rc;
    const char *model = a->mo.model;
    lp_error err;
    lp_error_clear(&err);
    rc = lp_causal_map(&r->m, r->rl, &r->map, &err) ? cli_fail("requests", &err) : 0;
    if (sh)
        rc = dshard_agree(sh, rc);
    if (rc)
        return rc;
    if (!model && (rc = infer(a, r, sh)) != 0)
        return rc;
    if ((model && lp_causal_finish(&r->m, NULL, r->map, &err)) || lp_reqcat_assign(&r->cat, &r->m, &err))
        rc = cli_fail("requests", &err);
    if (sh) /* the step after this is a collective */
        rc = dshard_agree(sh, rc);
    if (rc)
        return rc;
    if (a->save_model && (!sh || dshard_root(sh))) { /* rank 0 writes the model */
        rc = lp_causal_save(&r->m, a->save_model, &err) ? cli_fail("requests", &err) : 0;
        if (!rc)
            reqcli_mark(&a->rq, "write");
    }
    if (sh) /* the others wait for it: the paths after this are collective */
        rc = dshard_agree(sh, rc);
    return rc;
}

/* --request ID: one request's segments and path. */
static int one_request(const requests_args *a, req_run *r)
{
    uint64_t q = lp_reqlog_find(r->rl, a->request);
    if (q == UINT64_MAX) {
        fprintf(stderr, "longpole requests: no request '%s' in the logs\n", a->request);
        return LP_EXIT_USAGE;
    }
    if (r->rl->rbad[q]) {
        fprintf(stderr, "longpole requests: request '%s' was excluded for input errors\n", a->request);
        return LP_EXIT_DATA;
    }
    lp_error err;
    lp_error_clear(&err);
    if (lp_reqpath_compute(&r->p, &r->m, r->rl, r->map, q, &err))
        return cli_fail("requests", &err);
    if (a->json) {
        lp_jsonw j;
        lp_jsonw_init(&j, stdout, 0);
        requests_json_request(&j, &r->p, &r->m, r->rl, q);
        lp_jsonw_end(&j);
    } else {
        requests_text_request(&r->p, &r->m, r->rl, q, &r->cat);
    }
    return r->data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}

/* Every request's path and slack (split over the ranks with a shard), and the
 * aggregates; then the output. */
static int all_requests(requests_args *a, req_run *r, dshard *sh)
{
    lp_reqstats_opts so;
    memset(&so, 0, sizeof so);
    so.threads = a->rq.threads;
    so.outlier_share = a->mo.share;
    so.buckets = (uint32_t)a->mo.buckets;
    so.stratify = a->strat.v;
    so.nstratify = a->strat.n;
    if (cli_progress_enabled())
        so.progress = cli_progress;
    if (sh) {
        so.part = (uint64_t)sh->rank;
        so.nparts = (uint64_t)sh->size;
        so.gather = cli_reqdist_gather;
        so.gather_ctx = sh;
    }
    lp_error err;
    lp_error_clear(&err);
    if (lp_reqstats_run(&r->m, r->rl, r->map, &r->cat, &so, &r->S, &err))
        return cli_fail("requests", &err);
    cli_progress_done();
    if (sh && !dshard_root(sh))
        return 0; /* rank 0 prints */
    reqcli_mark(&a->rq, "paths+stats");
    reqout x = {&r->m, r->rl, r->map, &r->cat, &r->S, &r->p, a->mo.model, a->mo.share, a->mo.buckets,
                a->top ? a->top : UINT64_MAX, a->rq.no_skew, a->per_request, r->data_errors,
                (double)(r->S.analysed ? r->S.analysed : 1), 0, 0};
    for (uint32_t c = 0; c < r->S.ncat; c++) {
        x.cp_total += r->S.cat[c].cp_sum;
        x.dur_total += r->S.cat[c].dur_sum;
    }
    if (a->json ? requests_json(&x, &err) : requests_text(&x, &err))
        return cli_fail("requests", &err);
    fflush(stdout);
    reqcli_mark(&a->rq, "output");
    reqcli_timing(&a->rq, "requests");
    if (!r->S.analysed && !r->data_errors) { /* an answer about nothing is not a result (docs/trust.md) */
        fprintf(stderr, "longpole requests: the logs hold no request with a segment: there is nothing to analyse\n");
        return LP_EXIT_EMPTY;
    }
    return r->data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}

int cmd_requests(int argc, char **argv) { return cli_requests_main(argc, argv, NULL); }

int cli_requests_main(int argc, char **argv, dshard *sh)
{
    requests_args a;
    cli_args rest;
    const cli_spec *spec = sh ? &cli_spec_dist_requests : &cli_spec_requests;
    int rc = dshard_parse(sh, &cli_spec_requests, &cli_spec_dist_requests, argc, argv, &a, &rest);
    if (rc)
        return rc;
    if (sh)
        sh->stats = a.dist.stats;
    a.rq.paths = rest.operands;
    a.rq.npaths = rest.n;
    if (a.save_model && a.mo.model) {
        cli_args_release(spec, &a, &rest);
        return cli_usage("requests", "--save-model writes the model inferred from the logs: not with --model");
    }
    req_run r;
    memset(&r, 0, sizeof r);
    lp_reqcat_init(&r.cat);
    lp_reqpath_init(&r.p);
    rc = open_model(&a, &r);
    if (sh) /* a rank that could not open the model or the categories stops every rank */
        rc = dshard_agree(sh, rc);
    if (!rc && !(rc = load(&a, &r, sh))) {
        if (!a.request)
            rc = all_requests(&a, &r, sh);
        else if (!sh || dshard_root(sh)) /* one request: rank 0 alone */
            rc = one_request(&a, &r);
    }
    run_release(&r);
    cli_args_release(spec, &a, &rest);
    return rc;
}
