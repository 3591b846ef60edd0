/* cpfcli.c: loading a trace with its call-stack samples and execution profile for the
 * CrystalPerf commands (cpfcli.h). */
#include "cpfcli.h"

#include <string.h>

static int parse_offset(void *dst, const char *v, char *msg, size_t n)
{
    int neg = v[0] == '-';
    int64_t d;
    if (cli_parse_dur(v + neg, &d))
        return -1;
    *(int64_t *)dst = neg ? -d : d;
    return 0;
}

const cli_opt cli_cpf_opts[] = {
    {"--samples", .kind = CLI_STR, .arg = "FILE", CLI_AT(cli_cpf, samples), .err = "--samples needs a file",
     .example = "stacks.perf.txt",
     .help = "call-stack samples of the run: `perf script` output or timestamped\n"
             "collapsed stacks (docs/formats/perf-script.md, collapsed-stacks.md);\n"
             "joined to the trace's workers by their tid= attribute and by time"},
    {"--samples-offset", .kind = CLI_FN, .arg = "D", CLI_AT(cli_cpf, offset), .fn = parse_offset,
     .err = "--samples-offset needs a duration (ns, or with a unit; may be negative)", .example = "-2ms",
     .help = "added to every sample time (when the samples' clock is not the trace's)"},
    {"--model", .kind = CLI_STR, .arg = "FILE", CLI_AT(cli_cpf, model), .err = "--model needs a file",
     .example = "model.txt", .help = "classifier model (default: the built-in one; `longpole classify`)"},
    {"--no-classifier", .kind = CLI_FLAG, CLI_AT(cli_cpf, no_classifier),
     .help = "only measured evidence (thread state, kernel stacks): the rest is unknown"},
    CLI_END,
};

void cpf_release(cpf_input *in)
{
    if (in->have_p)
        lp_cpf_profile_release(&in->p);
    if (in->have_s)
        lp_stacks_release(&in->s);
    if (in->have_m)
        lp_cls_model_release(&in->m);
    lp_trace_free(in->t);
    memset(in, 0, sizeof *in);
}

int cpf_load(const char *cmd, const cli_load *lo, const cli_cpf *co, char **paths, int npaths, int64_t bin_ns,
             cpf_input *in)
{
    memset(in, 0, sizeof *in);
    if (!npaths)
        return cli_usage(cmd, "no trace given");
    int rc = cli_load_trace(lo, paths, npaths, &in->t, &in->data_errors);
    if (rc)
        return rc;
    lp_error err;
    lp_error_clear(&err);
    if (co->samples) {
        lp_stacks_init(&in->s);
        in->have_s = 1;
        lp_diags ds;
        size_t max = lo->quiet ? 0 : (lo->max_diags ? lo->max_diags : 20);
        lp_diags_init(&ds, max);
        lp_status st = lp_stacks_load(&in->s, co->samples, &ds, &err);
        cli_print_diags(&ds, max);
        lp_diags_release(&ds);
        if (st) {
            lp_error_push(&err, "reading samples '%s'", co->samples);
            rc = cli_fail(cmd, &err);
            cpf_release(in);
            return rc;
        }
        if (!co->no_classifier) {
            lp_cls_model_init(&in->m);
            in->have_m = 1;
            if (co->model ? lp_cls_model_read(&in->m, co->model, &err) : lp_cls_model_default(&in->m, &err)) {
                rc = cli_fail(cmd, &err);
                cpf_release(in);
                return rc;
            }
        }
    }
    lp_cpf_opts o = {bin_ns, co->offset};
    if (lp_cpf_profile_build(in->t, in->have_s ? &in->s : NULL, in->have_m ? &in->m : NULL, &o, &in->p, &err)) {
        rc = cli_fail(cmd, &err);
        cpf_release(in);
        return rc;
    }
    in->have_p = 1;
    return 0;
}

void cpf_print_evidence(const cpf_input *in)
{
    const lp_cpf_profile *p = &in->p;
    if (p->acts_metrics)
        printf("evidence: task metrics for %llu activities (Spark: CPU time, GC, fetch wait, write time, bytes)\n",
               (unsigned long long)p->acts_metrics);
    if (!in->have_s) {
        if (!p->acts_metrics)
            printf("evidence: none but the activity types (no --samples, no task metrics): the resources are "
                   "unknown\n");
        return;
    }
    printf("samples: %llu; joined %llu; outside every activity of their worker %llu (%.3f s); of threads no worker "
           "names (tid=) %llu; %u worker(s) name a thread\n",
           (unsigned long long)p->samples, (unsigned long long)p->samples_used, (unsigned long long)p->samples_outside,
           (double)p->ns_outside / 1e9, (unsigned long long)p->samples_no_worker, p->workers_with_tid);
    printf("resource decided by: thread state %llu, kernel stack %llu, classifier %llu, nothing (unknown) %llu\n",
           (unsigned long long)p->by_how[LP_HOW_STATE], (unsigned long long)p->by_how[LP_HOW_KERNEL],
           (unsigned long long)p->by_how[LP_HOW_CLASSIFIER], (unsigned long long)p->by_how[LP_HOW_NONE]);
    if (in->s.nbad || in->s.nopen || in->s.nunordered)
        printf("sample input: %llu malformed record(s), %llu interval(s) open at the end (dropped), %llu out of order "
               "(dropped)\n",
               (unsigned long long)in->s.nbad, (unsigned long long)in->s.nopen, (unsigned long long)in->s.nunordered);
}

void cpf_json_evidence(lp_jsonw *j, const cpf_input *in)
{
    const lp_cpf_profile *p = &in->p;
    lp_jsonw_key(j, "evidence");
    lp_jsonw_obj(j);
    lp_jsonw_ku64(j, "activities_with_metrics", p->acts_metrics);
    lp_jsonw_kbool(j, "samples_given", in->have_s);
    lp_jsonw_ku64(j, "samples", p->samples);
    lp_jsonw_ku64(j, "samples_joined", p->samples_used);
    lp_jsonw_ku64(j, "samples_outside", p->samples_outside);
    lp_jsonw_ki64(j, "samples_outside_ns", p->ns_outside);
    lp_jsonw_ku64(j, "samples_no_worker", p->samples_no_worker);
    lp_jsonw_ku64(j, "by_thread_state", p->by_how[LP_HOW_STATE]);
    lp_jsonw_ku64(j, "by_kernel_stack", p->by_how[LP_HOW_KERNEL]);
    lp_jsonw_ku64(j, "by_classifier", p->by_how[LP_HOW_CLASSIFIER]);
    lp_jsonw_ku64(j, "undecided", p->by_how[LP_HOW_NONE]);
    if (in->have_s) {
        lp_jsonw_ku64(j, "malformed_records", in->s.nbad);
        lp_jsonw_ku64(j, "open_at_end", in->s.nopen);
        lp_jsonw_ku64(j, "frames_without_symbol", in->s.nnosym);
    }
    lp_jsonw_obj_end(j);
}
