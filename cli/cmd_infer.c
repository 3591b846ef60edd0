/* cmd_infer.c: `longpole infer`: the causal model of request logs by hypothesis
 * rejection (Mystery Machine, OSDI'14 §4.1-4.2; docs/analyses/mystery-inference.md),
 * written to a model file (docs/formats/mystery-model.md) and refined incrementally. */
#include "reqcli.h"
#include "infdist.h"
#include "dshard.h"
#include "longpole/analysis/mystery/causal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

typedef struct infer_args {
    reqcli rq;
    const char *out, *model, *filter, *diff;
    uint64_t block, maxdiff;
    int json;
    dshard_opt dist;           /* `dist infer`: --stats */
} infer_args;

static void infer_init(void *p)
{
    infer_args *a = p;
    reqcli_init(&a->rq);
    a->maxdiff = 50;
}

#define I(m) CLI_AT(infer_args, m)

static const cli_opt infer_opts[] = {
    {"-o", "--output", .kind = CLI_STR, .arg = "FILE", I(out), .err = "-o needs a file name", .example = "-",
     .help = "write the model here ('-' = stdout)"},
    {"--model", .kind = CLI_STR, .arg = "FILE", I(model), .err = "--model needs a file name", .example = "m.json",
     .help = "refine this model with the logs (created if missing) and write it\n"
             "back (or to -o): relationships only ever lose hypotheses, so\n"
             "refining in several runs gives the model of the whole corpus"},
    {"--filter", .kind = CLI_STR, .arg = "REGEX", I(filter), .err = "--filter needs a regular expression",
     .example = "^debug:",
     .help = "drop segments whose 'task:start->end' matches (POSIX ERE), e.g.\n"
             "debugging or test segments; kept in the model file"},
    {"--convergence", .kind = CLI_COUNT, .arg = "N", I(block), .range = "[1,)", .optval = "10000",
     .err = "--convergence=N needs a positive block size", .example = "25",
     .help = "per block of N requests (default 10000): hypotheses tested,\n"
             "remaining, rejected in the block, relationships (Figure 3)"},
    {"--diff", .kind = CLI_STR, .arg = "MODEL", I(diff), .err = "--diff needs a model file", .example = "t.json",
     .help = "compare with another model (e.g. a generator's ground truth):\n"
             "list relationships missed or spurious; exit 1 if any"},
    {"--max-diff", .kind = CLI_COUNT, .arg = "N", I(maxdiff), .err = "--max-diff needs a count", .example = "5",
     .help = "differences listed (default 50)"},
    {"--json", .kind = CLI_FLAG, I(json), .help = "summary (and convergence) as JSON on stdout"},
    CLI_END,
};

#undef I

const cli_spec cli_spec_infer = {
    .cmd = "infer",
    .usage = "usage: longpole infer [OPTIONS] (-o MODEL | --model MODEL) LOG...\n",
    .about = "Infers which segments <task, start event, end event> of the requests depend on each\n"
             "other (OSDI'14 §4.1): every pair starts hypothesized as happens-before (both ways)\n"
             "and mutually exclusive, and each hypothesis is rejected by the first request that\n"
             "contradicts it (B started before A ended; the two overlapped). Pairs never seen in\n"
             "one request stay unobserved. Pipelines (FIFO hand-offs between two tasks at several\n"
             "points) are derived from the surviving happens-before edges and rejected by the\n"
             "first request that reorders them. Clock skew is corrected first (see `skew`).\n",
    .groups = {CLI_OWN("options:", infer_opts), REQCLI_GROUPS(infer_args, rq)},
    .size = sizeof(infer_args),
    .init = infer_init,
};

/* `dist infer`: the same tables and --stats (cmd_dist_infer.c). */
const cli_spec cli_spec_dist_infer = {
    .cmd = "dist infer",
    .usage = "usage: longpole dist infer [--stats] [OPTIONS] (-o MODEL | --model MODEL) LOG...   (mpirun -n K)\n",
    .about = "`infer` with the requests split over the ranks of an MPI job: every rank reads every\n"
             "log, rejects hypotheses on its share of the requests, and the surviving relations\n"
             "are ANDed (MPI_BAND): rank 0 writes the model and prints exactly what `infer` does\n"
             "(docs/distributed.md). The options are infer's (not --convergence), plus --stats.\n",
    .groups = {CLI_OWN("options:", infer_opts), REQCLI_GROUPS(infer_args, rq), DSHARD_GROUP(infer_args, dist)},
    .size = sizeof(infer_args),
    .init = infer_init,
};

static const char *rel_name(lp_rel r)
{
    switch (r) {
    case LP_REL_BEFORE: return "happens-before ->";
    case LP_REL_AFTER: return "happens-before <-";
    case LP_REL_EXCLUSIVE: return "mutual exclusion";
    case LP_REL_CONCURRENT: return "concurrent";
    default: return "unobserved";
    }
}

typedef struct diffctx {
    uint64_t shown, max;
    FILE *out;
} diffctx;

static void show_diff(void *ctx, const char *a, const char *b, lp_rel want, lp_rel got)
{
    diffctx *d = ctx;
    if (d->shown++ >= d->max)
        return;
    fprintf(d->out, "  %s  %s: expected %s, inferred %s\n", a, b, rel_name(want), rel_name(got));
}

/* ---- the run ---------------------------------------------------------------------------- */

/* Everything a run holds, released by run_release. */
typedef struct infer_run {
    lp_causal m;
    int have_model;
    uint64_t before;           /* requests in the model before these logs */
    lp_reqlog *rl;
    int data_errors;
    lp_skew sk;
    uint32_t *map;
    lp_causal_conv *conv;
    size_t nconv;
    lp_causal ref;             /* --diff */
    int have_ref;
    lp_causal_diff d;
    diffctx dc;
    uint64_t hb, hbd, mx, un;
    uint32_t dropped;          /* segments dropped by the filter */
} infer_run;

static void run_release(infer_run *r)
{
    if (r->have_ref)
        lp_causal_release(&r->ref);
    if (r->have_model)
        lp_causal_release(&r->m);
    lp_free(r->map);
    lp_free(r->conv);
    lp_skew_release(&r->sk);
    lp_reqlog_free(r->rl);
}

/* The model to refine: --model's file if it exists, else an empty one; the filter. */
static int open_model(const infer_args *a, infer_run *r)
{
    lp_error err;
    lp_error_clear(&err);
    if (a->model && access(a->model, F_OK) == 0 ? lp_causal_load(&r->m, a->model, &err)
                                                 : lp_causal_init(&r->m, &err))
        return cli_fail("infer", &err);
    r->have_model = 1;
    r->before = r->m.nreq;
    if (a->filter && lp_causal_set_filter(&r->m, a->filter, &err))
        return cli_usage("infer", "%s", err.msg);
    return 0;
}

/* Load the logs, correct the skew, refine the model, derive pipelines, write it, and
 * compare with --diff. */
static int infer(infer_args *a, infer_run *r, const char *out, FILE *so, dshard *sh)
{
    int rc = reqcli_load(&a->rq, "infer", &r->rl, &r->data_errors);
    /* a rank that could not load, or loaded other logs, stops every rank */
    if (sh && ((rc = dshard_agree(sh, rc)) != 0 || (rc = cli_infdist_same(sh, r->rl)) != 0))
        return rc;
    if (rc)
        return rc;
    rc = reqcli_skew(&a->rq, "infer", r->rl, &r->sk);
    if (sh) /* the same on every rank (the same logs), unless memory ran out on one */
        rc = dshard_agree(sh, rc);
    if (rc)
        return rc;
    lp_error err;
    lp_error_clear(&err);
    lp_causal_refine_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.threads = a->rq.threads;
    ro.block = a->block;
    if (a->block) {
        ro.conv = &r->conv;
        ro.nconv = &r->nconv;
    }
    if (cli_progress_enabled())
        ro.progress = cli_progress;
    lp_status st = lp_causal_map(&r->m, r->rl, &r->map, &err);
    st = cli_infdist_refine(sh, st, &r->m, r->rl, r->map, &ro, &err);
    if (st)
        return cli_fail("infer", &err);
    cli_progress_done();
    reqcli_mark(&a->rq, "infer");
    if (sh ? cli_infdist_finish(sh, &r->m, r->rl, r->map, &err) : lp_causal_finish(&r->m, r->rl, r->map, &err))
        return cli_fail("infer", &err);
    reqcli_mark(&a->rq, "pipelines");
    if (sh && !dshard_root(sh))
        return 0; /* rank 0 writes and prints */
    if (lp_causal_save(&r->m, out, &err))
        return cli_fail("infer", &err);
    reqcli_mark(&a->rq, "write");
    if (a->diff) {
        if (lp_causal_load(&r->ref, a->diff, &err))
            return cli_fail("infer", &err);
        r->have_ref = 1;
    }
    lp_causal_counts(&r->m, &r->hb, &r->hbd, &r->mx, &r->un);
    r->dc = (diffctx){0, a->maxdiff, so};
    if (r->have_ref && lp_causal_compare(&r->m, &r->ref, &r->d, a->json ? NULL : show_diff, &r->dc, &err))
        return cli_fail("infer", &err);
    for (uint32_t s = 0; s < r->m.nseg; s++)
        r->dropped += r->m.seg_dropped[s];
    return 0;
}

/* ---- the summary ------------------------------------------------------------------------ */

static void json_convergence(lp_jsonw *j, const infer_run *r)
{
    lp_jsonw_key(j, "convergence");
    lp_jsonw_arr(j);
    for (size_t i = 0; i < r->nconv; i++) {
        const lp_causal_conv *c = &r->conv[i];
        lp_jsonw_obj(j);
        lp_jsonw_ku64(j, "requests", c->requests);
        lp_jsonw_ku64(j, "segments", c->segments);
        lp_jsonw_ku64(j, "pairs", c->pairs);
        lp_jsonw_ku64(j, "hypotheses", c->hypotheses);
        lp_jsonw_ku64(j, "remaining", c->remaining);
        lp_jsonw_ku64(j, "rejected", c->rejected);
        lp_jsonw_ku64(j, "relationships", c->relationships);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
}

static void print_json(const infer_args *a, const infer_run *r, const char *out, FILE *so)
{
    const lp_causal_diff *d = &r->d;
    lp_jsonw j;
    lp_jsonw_init(&j, so, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(&j, "command", "infer");
    lp_jsonw_kstr(&j, "model", out);
    lp_jsonw_ku64(&j, "requests_read", r->rl->nreqs);
    lp_jsonw_ku64(&j, "requests_excluded", r->rl->nbad);
    lp_jsonw_ku64(&j, "requests_model", r->m.nreq);
    lp_jsonw_ku64(&j, "requests_before", r->before);
    lp_jsonw_ku64(&j, "segments", r->m.nseg);
    lp_jsonw_ku64(&j, "segments_dropped", r->dropped);
    lp_jsonw_ku64(&j, "happens_before", r->hb);
    lp_jsonw_ku64(&j, "happens_before_direct", r->hbd);
    lp_jsonw_ku64(&j, "mutual_exclusion", r->mx);
    lp_jsonw_ku64(&j, "pipelines", r->m.npipes);
    lp_jsonw_ku64(&j, "unobserved_pairs", r->un);
    lp_jsonw_kbool(&j, "skew_corrected", !a->rq.no_skew);
    lp_jsonw_ku64(&j, "skew_rpcs", r->sk.nrpc);
    if (a->block)
        json_convergence(&j, r);
    if (r->have_ref) {
        lp_jsonw_key(&j, "diff");
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "reference", a->diff);
        lp_jsonw_ku64(&j, "pairs_compared", d->compared);
        lp_jsonw_ku64(&j, "missed", d->missed);
        lp_jsonw_ku64(&j, "spurious", d->spurious);
        lp_jsonw_ku64(&j, "segments_only_reference", d->only_ref);
        lp_jsonw_ku64(&j, "segments_only_model", d->only_m);
        lp_jsonw_ku64(&j, "pipelines_missed", d->pipes_missed);
        lp_jsonw_ku64(&j, "pipelines_spurious", d->pipes_spurious);
        lp_jsonw_obj_end(&j);
    }
    lp_jsonw_kbool(&j, "input_errors", r->data_errors);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

static void text_convergence(const infer_run *r, uint64_t block, FILE *so)
{
    fprintf(so, "convergence (per %llu requests; hypotheses: happens-before per ordered pair and mutual\n"
                "exclusion per pair of segments seen together):\n",
            (unsigned long long)block);
    fprintf(so, "%12s %9s %12s %12s %12s %10s %14s\n", "requests", "segments", "pairs", "hypotheses", "remaining",
            "rejected", "relationships");
    for (size_t i = 0; i < r->nconv; i++) {
        const lp_causal_conv *c = &r->conv[i];
        fprintf(so, "%12llu %9u %12llu %12llu %12llu %10llu %14llu\n", (unsigned long long)c->requests, c->segments,
                (unsigned long long)c->pairs, (unsigned long long)c->hypotheses, (unsigned long long)c->remaining,
                (unsigned long long)c->rejected, (unsigned long long)c->relationships);
    }
    fputc('\n', so);
}

static void print_text(const infer_args *a, const infer_run *r, const char *out, FILE *so)
{
    const lp_causal *m = &r->m;
    const lp_causal_diff *d = &r->d;
    if (a->block)
        text_convergence(r, a->block, so);
    fprintf(so, "model %s: %llu requests (%llu from these logs%s), %u segments", out, (unsigned long long)m->nreq,
            (unsigned long long)(m->nreq - r->before), r->before ? ", refined" : "", m->nseg);
    if (r->dropped)
        fprintf(so, " (%u dropped by the filter)", r->dropped);
    fprintf(so, "\n  happens-before: %llu pairs (%llu direct edges)\n  mutual exclusion: %llu pairs\n"
                "  pipelines: %u\n  pairs never seen together: %llu\n",
            (unsigned long long)r->hb, (unsigned long long)r->hbd, (unsigned long long)r->mx, m->npipes,
            (unsigned long long)r->un);
    for (uint32_t p = 0; p < m->npipes; p++) {
        char la[512], lb[512];
        fprintf(so, "    %s => %s:", lp_strtab_get(&m->names, m->pipes[p].t1), lp_strtab_get(&m->names, m->pipes[p].t2));
        for (uint32_t i = 0; i < m->pipes[p].npairs; i++)
            fprintf(so, " (%s, %s)", lp_causal_label(m, m->pipes[p].a[i], la, sizeof la),
                    lp_causal_label(m, m->pipes[p].b[i], lb, sizeof lb));
        fputc('\n', so);
    }
    if (a->rq.no_skew)
        fprintf(so, "clock skew: not corrected (--no-skew)\n");
    else
        fprintf(so, "clock skew: corrected from %llu RPC patterns over %u host pairs\n", (unsigned long long)r->sk.nrpc,
                r->sk.npairs);
    if (r->rl->nbad)
        fprintf(so, "requests excluded for input errors: %llu of %llu\n", (unsigned long long)r->rl->nbad,
                (unsigned long long)r->rl->nreqs);
    if (!r->have_ref)
        return;
    if (r->dc.shown > r->dc.max)
        fprintf(so, "  ... and %llu more\n", (unsigned long long)(r->dc.shown - r->dc.max));
    fprintf(so,
            "compared with %s over %llu pairs seen by both: %llu relationships missed, %llu spurious, "
            "%llu/%llu pipelines missed/spurious, %llu/%llu segments only there/here\n",
            a->diff, (unsigned long long)d->compared, (unsigned long long)d->missed, (unsigned long long)d->spurious,
            (unsigned long long)d->pipes_missed, (unsigned long long)d->pipes_spurious,
            (unsigned long long)d->only_ref, (unsigned long long)d->only_m);
}

/* ---- the command ------------------------------------------------------------------------- */

int cmd_infer(int argc, char **argv) { return cli_infer_main(argc, argv, NULL); }

int cli_infer_main(int argc, char **argv, dshard *sh)
{
    infer_args a;
    cli_args rest;
    const cli_spec *spec = sh ? &cli_spec_dist_infer : &cli_spec_infer;
    int rc = dshard_parse(sh, &cli_spec_infer, &cli_spec_dist_infer, argc, argv, &a, &rest);
    if (rc)
        return rc;
    if (sh)
        sh->stats = a.dist.stats;
    if (!a.out && !a.model) {
        cli_args_release(spec, &a, &rest);
        return cli_usage("infer", "where should the model go? (-o FILE or --model FILE)");
    }
    const char *out = a.out ? a.out : a.model;
    a.rq.paths = rest.operands;
    a.rq.npaths = rest.n;
    FILE *so = strcmp(out, "-") == 0 ? stderr : stdout; /* the summary goes to stdout unless the model did */
    infer_run r;
    memset(&r, 0, sizeof r);
    if (sh && a.block) {
        cli_args_release(spec, &a, &rest);
        return cli_usage("infer", "--convergence follows the requests in order: not available in `dist infer`");
    }
    rc = open_model(&a, &r);
    if (sh) /* a rank that could not open the model stops every rank */
        rc = dshard_agree(sh, rc);
    if (!rc && !(rc = infer(&a, &r, out, so, sh)) && (!sh || dshard_root(sh))) {
        if (a.json)
            print_json(&a, &r, out, so);
        else
            print_text(&a, &r, out, so);
        reqcli_timing(&a.rq, "infer");
        const lp_causal_diff *d = &r.d;
        if (r.have_ref && (d->missed || d->spurious || d->pipes_missed || d->pipes_spurious || d->only_ref || d->only_m))
            rc = LP_EXIT_FINDINGS;
        else if (r.data_errors)
            rc = LP_EXIT_DATA;
        else if (r.m.nreq == 0) { /* a model of nothing is not a result (docs/trust.md) */
            fprintf(stderr, "longpole infer: the logs hold no request: there is nothing to infer from\n");
            rc = LP_EXIT_EMPTY;
        }
    }
    run_release(&r);
    cli_args_release(spec, &a, &rest);
    return rc;
}
