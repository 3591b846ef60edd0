/* cmd_infer.c: `longpole infer`: the causal model of request logs by hypothesis
 * rejection (Mystery Machine, OSDI'14 §4.1-4.2; docs/analyses/mystery-inference.md),
 * written to a model file (docs/formats/mystery-model.md) and refined incrementally. */
#include "reqcli.h"
#include "longpole/analysis/mystery/causal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

const char cli_help_infer[] =
    "usage: longpole infer [OPTIONS] (-o MODEL | --model MODEL) LOG...\n"
    "\n"
    "Infers which segments <task, start event, end event> of the requests depend on each\n"
    "other (OSDI'14 §4.1): every pair starts hypothesized as happens-before (both ways)\n"
    "and mutually exclusive, and each hypothesis is rejected by the first request that\n"
    "contradicts it (B started before A ended; the two overlapped). Pairs never seen in\n"
    "one request stay unobserved. Pipelines (FIFO hand-offs between two tasks at several\n"
    "points) are derived from the surviving happens-before edges and rejected by the\n"
    "first request that reorders them. Clock skew is corrected first (see `skew`).\n"
    "\n"
    "options:\n"
    "  -o FILE            write the model here ('-' = stdout)\n"
    "  --model FILE       refine this model with the logs (created if missing) and write it\n"
    "                     back (or to -o): relationships only ever lose hypotheses, so\n"
    "                     refining in several runs gives the model of the whole corpus\n"
    "  --filter REGEX     drop segments whose 'task:start->end' matches (POSIX ERE), e.g.\n"
    "                     debugging or test segments; kept in the model file\n"
    "  --convergence[=N]  per block of N requests (default 10000): hypotheses tested,\n"
    "                     remaining, rejected in the block, relationships (Figure 3)\n"
    "  --diff MODEL       compare with another model (e.g. a generator's ground truth):\n"
    "                     list relationships missed or spurious; exit 1 if any\n"
    "  --max-diff N       differences listed (default 50)\n"
    "  --json             summary (and convergence) as JSON on stdout\n"
    "\n" REQCLI_HELP;

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

int cmd_infer(int argc, char **argv)
{
    reqcli o;
    reqcli_init(&o);
    const char *out = NULL, *model = NULL, *filter = NULL, *diff = NULL, *v;
    int json = 0, rc;
    uint64_t block = 0, maxdiff = 50;
    char **paths = lp_malloc((size_t)argc * sizeof *paths);
    if (!paths)
        return LP_EXIT_NOMEM;
    for (int i = 1; i < argc; i++) {
        uint64_t n;
        if (reqcli_opt(&o, "infer", argc, argv, &i, &rc)) {
            if (rc)
                goto usage;
        } else if (cli_opt(argc, argv, &i, "-o", &out) || cli_opt(argc, argv, &i, "--output", &out)) {
            if (!out) {
                rc = cli_usage("infer", "-o needs a file name");
                goto usage;
            }
        } else if (cli_opt(argc, argv, &i, "--model", &model)) {
            if (!model) {
                rc = cli_usage("infer", "--model needs a file name");
                goto usage;
            }
        } else if (cli_opt(argc, argv, &i, "--filter", &filter)) {
            if (!filter) {
                rc = cli_usage("infer", "--filter needs a regular expression");
                goto usage;
            }
        } else if (cli_opt(argc, argv, &i, "--diff", &diff)) {
            if (!diff) {
                rc = cli_usage("infer", "--diff needs a model file");
                goto usage;
            }
        } else if (cli_opt(argc, argv, &i, "--max-diff", &v)) {
            if (!v || cli_parse_count(v, &maxdiff)) {
                rc = cli_usage("infer", "--max-diff needs a count");
                goto usage;
            }
        } else if (strcmp(argv[i], "--convergence") == 0) {
            block = 10000;
        } else if (strncmp(argv[i], "--convergence=", 14) == 0) {
            if (cli_parse_count(argv[i] + 14, &n) || n == 0) {
                rc = cli_usage("infer", "--convergence=N needs a positive block size");
                goto usage;
            }
            block = n;
        } else if (cli_flag(argv, i, "--json")) {
            json = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            rc = cli_usage("infer", "unknown option '%s'", argv[i]);
            goto usage;
        } else {
            paths[o.npaths++] = argv[i];
        }
    }
    if (!out && !model) {
        rc = cli_usage("infer", "where should the model go? (-o FILE or --model FILE)");
        goto usage;
    }
    if (!out)
        out = model;
    o.paths = paths;

    lp_error err;
    lp_error_clear(&err);
    lp_causal m;
    int have_model = 0;
    if (model && access(model, F_OK) == 0) {
        if (lp_causal_load(&m, model, &err)) {
            lp_free(paths);
            return cli_fail("infer", &err);
        }
    } else if (lp_causal_init(&m, &err)) {
        lp_free(paths);
        return cli_fail("infer", &err);
    }
    have_model = 1;
    uint64_t before = m.nreq;
    if (filter && lp_causal_set_filter(&m, filter, &err)) {
        lp_causal_release(&m);
        lp_free(paths);
        return cli_usage("infer", "%s", err.msg);
    }
    lp_reqlog *rl = NULL;
    int data_errors = 0;
    lp_skew sk;
    memset(&sk, 0, sizeof sk);
    uint32_t *map = NULL;
    lp_causal_conv *conv = NULL;
    size_t nconv = 0;
    lp_causal ref;
    int have_ref = 0, status = LP_EXIT_OK;
    if ((rc = reqcli_load(&o, "infer", &rl, &data_errors)) != 0)
        goto done;
    if ((rc = reqcli_skew(&o, "infer", rl, &sk)) != 0)
        goto done;
    if (lp_causal_map(&m, rl, &map, &err))
        goto fail;
    lp_causal_refine_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.threads = o.threads;
    ro.block = block;
    if (block) {
        ro.conv = &conv;
        ro.nconv = &nconv;
    }
    if (cli_progress_enabled()) {
        ro.progress = cli_progress;
    }
    if (lp_causal_refine(&m, rl, map, &ro, &err))
        goto fail;
    cli_progress_done();
    reqcli_mark(&o, "infer");
    if (lp_causal_finish(&m, rl, map, &err))
        goto fail;
    reqcli_mark(&o, "pipelines");
    if (lp_causal_save(&m, out, &err))
        goto fail;
    reqcli_mark(&o, "write");
    if (diff) {
        if (lp_causal_load(&ref, diff, &err))
            goto fail;
        have_ref = 1;
    }
    /* the summary goes to stdout unless the model did */
    FILE *so = strcmp(out, "-") == 0 ? stderr : stdout;
    uint64_t hb, hbd, mx, un;
    lp_causal_counts(&m, &hb, &hbd, &mx, &un);
    lp_causal_diff d;
    memset(&d, 0, sizeof d);
    diffctx dc = {0, maxdiff, so};
    if (have_ref && lp_causal_compare(&m, &ref, &d, json ? NULL : show_diff, &dc, &err))
        goto fail;
    uint32_t dropped = 0;
    for (uint32_t s = 0; s < m.nseg; s++)
        dropped += m.seg_dropped[s];
    uint64_t good = rl->nreqs - rl->nbad;
    if (json) {
        lp_jsonw j;
        lp_jsonw_init(&j, so, 0);
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
        lp_jsonw_kstr(&j, "command", "infer");
        lp_jsonw_kstr(&j, "model", out);
        lp_jsonw_ku64(&j, "requests_read", rl->nreqs);
        lp_jsonw_ku64(&j, "requests_excluded", rl->nbad);
        lp_jsonw_ku64(&j, "requests_model", m.nreq);
        lp_jsonw_ku64(&j, "requests_before", before);
        lp_jsonw_ku64(&j, "segments", m.nseg);
        lp_jsonw_ku64(&j, "segments_dropped", dropped);
        lp_jsonw_ku64(&j, "happens_before", hb);
        lp_jsonw_ku64(&j, "happens_before_direct", hbd);
        lp_jsonw_ku64(&j, "mutual_exclusion", mx);
        lp_jsonw_ku64(&j, "pipelines", m.npipes);
        lp_jsonw_ku64(&j, "unobserved_pairs", un);
        lp_jsonw_kbool(&j, "skew_corrected", !o.no_skew);
        lp_jsonw_ku64(&j, "skew_rpcs", sk.nrpc);
        if (block) {
            lp_jsonw_key(&j, "convergence");
            lp_jsonw_arr(&j);
            for (size_t i = 0; i < nconv; i++) {
                lp_jsonw_obj(&j);
                lp_jsonw_ku64(&j, "requests", conv[i].requests);
                lp_jsonw_ku64(&j, "segments", conv[i].segments);
                lp_jsonw_ku64(&j, "pairs", conv[i].pairs);
                lp_jsonw_ku64(&j, "hypotheses", conv[i].hypotheses);
                lp_jsonw_ku64(&j, "remaining", conv[i].remaining);
                lp_jsonw_ku64(&j, "rejected", conv[i].rejected);
                lp_jsonw_ku64(&j, "relationships", conv[i].relationships);
                lp_jsonw_obj_end(&j);
            }
            lp_jsonw_arr_end(&j);
        }
        if (have_ref) {
            lp_jsonw_key(&j, "diff");
            lp_jsonw_obj(&j);
            lp_jsonw_kstr(&j, "reference", diff);
            lp_jsonw_ku64(&j, "pairs_compared", d.compared);
            lp_jsonw_ku64(&j, "missed", d.missed);
            lp_jsonw_ku64(&j, "spurious", d.spurious);
            lp_jsonw_ku64(&j, "segments_only_reference", d.only_ref);
            lp_jsonw_ku64(&j, "segments_only_model", d.only_m);
            lp_jsonw_ku64(&j, "pipelines_missed", d.pipes_missed);
            lp_jsonw_ku64(&j, "pipelines_spurious", d.pipes_spurious);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_kbool(&j, "input_errors", data_errors);
        lp_jsonw_obj_end(&j);
        lp_jsonw_end(&j);
    } else {
        if (block) {
            fprintf(so, "convergence (per %llu requests; hypotheses: happens-before per ordered pair and mutual\n"
                        "exclusion per pair of segments seen together):\n",
                    (unsigned long long)block);
            fprintf(so, "%12s %9s %12s %12s %12s %10s %14s\n", "requests", "segments", "pairs", "hypotheses",
                    "remaining", "rejected", "relationships");
            for (size_t i = 0; i < nconv; i++)
                fprintf(so, "%12llu %9u %12llu %12llu %12llu %10llu %14llu\n", (unsigned long long)conv[i].requests,
                        conv[i].segments, (unsigned long long)conv[i].pairs, (unsigned long long)conv[i].hypotheses,
                        (unsigned long long)conv[i].remaining, (unsigned long long)conv[i].rejected,
                        (unsigned long long)conv[i].relationships);
            fputc('\n', so);
        }
        fprintf(so, "model %s: %llu requests (%llu from these logs%s), %u segments", out,
                (unsigned long long)m.nreq, (unsigned long long)(m.nreq - before), before ? ", refined" : "", m.nseg);
        if (dropped)
            fprintf(so, " (%u dropped by the filter)", dropped);
        fprintf(so, "\n  happens-before: %llu pairs (%llu direct edges)\n  mutual exclusion: %llu pairs\n"
                    "  pipelines: %u\n  pairs never seen together: %llu\n",
                (unsigned long long)hb, (unsigned long long)hbd, (unsigned long long)mx, m.npipes,
                (unsigned long long)un);
        for (uint32_t p = 0; p < m.npipes; p++) {
            char la[512], lb[512];
            fprintf(so, "    %s => %s:", lp_strtab_get(&m.names, m.pipes[p].t1), lp_strtab_get(&m.names, m.pipes[p].t2));
            for (uint32_t i = 0; i < m.pipes[p].npairs; i++)
                fprintf(so, " (%s, %s)", lp_causal_label(&m, m.pipes[p].a[i], la, sizeof la),
                        lp_causal_label(&m, m.pipes[p].b[i], lb, sizeof lb));
            fputc('\n', so);
        }
        if (o.no_skew)
            fprintf(so, "clock skew: not corrected (--no-skew)\n");
        else
            fprintf(so, "clock skew: corrected from %llu RPC patterns over %u host pairs\n",
                    (unsigned long long)sk.nrpc, sk.npairs);
        if (good < rl->nreqs)
            fprintf(so, "requests excluded for input errors: %llu of %llu\n", (unsigned long long)rl->nbad,
                    (unsigned long long)rl->nreqs);
        if (have_ref) {
            if (dc.shown > dc.max)
                fprintf(so, "  ... and %llu more\n", (unsigned long long)(dc.shown - dc.max));
            fprintf(so,
                    "compared with %s over %llu pairs seen by both: %llu relationships missed, %llu spurious, "
                    "%llu/%llu pipelines missed/spurious, %llu/%llu segments only there/here\n",
                    diff, (unsigned long long)d.compared, (unsigned long long)d.missed,
                    (unsigned long long)d.spurious, (unsigned long long)d.pipes_missed,
                    (unsigned long long)d.pipes_spurious, (unsigned long long)d.only_ref, (unsigned long long)d.only_m);
        }
    }
    reqcli_timing(&o, "infer");
    if (have_ref && (d.missed || d.spurious || d.pipes_missed || d.pipes_spurious || d.only_ref || d.only_m))
        status = LP_EXIT_FINDINGS;
    else if (data_errors)
        status = LP_EXIT_DATA;
    rc = status;
    goto done;
fail:
    cli_progress_done();
    rc = cli_fail("infer", &err);
done:
    if (have_ref)
        lp_causal_release(&ref);
    if (have_model)
        lp_causal_release(&m);
    lp_free(map);
    lp_free(conv);
    lp_skew_release(&sk);
    lp_reqlog_free(rl);
    lp_free(paths);
    return rc;
usage:
    lp_free(paths);
    return rc;
}
