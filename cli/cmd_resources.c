/* cmd_resources.c: `longpole resources`: CrystalPerf's resource breakdown (§4): the
 * resource time of the critical path and its bottleneck resource, per operation, and per
 * interval, from call-stack samples and task metrics (text or JSON). */
#include "cpfcli.h"
#include "base/util.h"

#include <string.h>

typedef struct res_args {
    cli_load load;
    cli_cpf cpf;
    int json;
    uint64_t top;
    int64_t interval;
    const char *from, *to, *sqlite;
} res_args;

static void res_init(void *p) { ((res_args *)p)->top = 10; }

static const cli_opt res_opts[] = {
    {"--json", .kind = CLI_FLAG, CLI_AT(res_args, json), .help = "one JSON document (docs/analyses/crystalperf.md)"},
    {"--top", .kind = CLI_COUNT, .arg = "N", CLI_AT(res_args, top), .err = "--top needs a number", .example = "5",
     .help = "operations listed (default 10, 0 = all)"},
    {"--interval", .kind = CLI_DUR, .arg = "D", CLI_AT(res_args, interval), .range = "(0,)",
     .err = "--interval needs a duration", .example = "1s",
     .help = "also the resource time of all activities per interval of D"},
    {"--sqlite", .kind = CLI_STR, .arg = "DB", CLI_AT(res_args, sqlite), .err = "--sqlite needs a database file",
     .example = "out.db",
     .help = "also write the trace and the CrystalPerf tables (cpf_info, cpf_path,\ncpf_ops, cpf_activity) to "
             "DB as one run (docs/formats/sqlite.md)"},
    {"--from", .kind = CLI_TIME, .arg = "T", CLI_AT(res_args, from), .err = "--from needs a time", .example = "+0",
     .help = ""},
    {"--to", .kind = CLI_TIME, .arg = "T", CLI_AT(res_args, to), .err = "--to needs a time", .example = "+1s",
     .help = "restrict to [T, T'] (projection; +T is after the trace start)"},
    CLI_END,
};

const cli_spec cli_spec_resources = {
    .cmd = "resources",
    .usage = "usage: longpole resources [--samples FILE] [--json] [--top N] [--interval D]\n"
             "                          [--from T --to T] TRACE...\n",
    .about = "What the critical path spends its time on (CrystalPerf §4): every activity gets a\n"
             "resource vector (cpu, disk, net, wait, unknown) from the call-stack samples of its\n"
             "thread (thread state, kernel blocking stack, else the classifier at the first named\n"
             "frame) or from its own metrics (Spark: Executor CPU Time, GC, fetch wait, shuffle\n"
             "write, bytes read and written); the path's elements take their activities' vectors;\n"
             "the resource with the most path time among cpu, disk and net is the bottleneck.\n"
             "Printed with the evidence: how many samples joined, how each was decided, and the\n"
             "share of the path the evidence covers.\n",
    .groups = {CLI_OWN("options:", res_opts), CLI_CPF_GROUP(res_args, cpf), CLI_LOAD_GROUPS(res_args, load)},
    .notes = "exit status: 0 the evidence covers at least half of the path; 1 it covers less (the\n"
             "answer is partial and says so); >= 2 no answer (usage, unreadable input, no activity,\n"
             "samples that join no worker).\n",
    .size = sizeof(res_args),
    .init = res_init,
};

static void print_row(const char *label, const double ns[LP_RES_N], double tot)
{
    char d[32];
    printf("  %-22s", label);
    for (int r = 0; r < LP_RES_N; r++)
        printf(" %9s %5.1f%%", lp_fmt_dur((int64_t)(ns[r] + 0.5), d, sizeof d), tot > 0 ? 100 * ns[r] / tot : 0);
    printf("\n");
}

static void print_text(const cpf_input *in, const lp_cpath *cp, const lp_cpf_bottleneck *b, const res_args *a)
{
    const lp_trace *t = in->t;
    char d[32];
    cpf_print_evidence(in);
    printf("critical path: %s; evidence covers %.1f%% of it%s\n", lp_fmt_dur(b->path_total, d, sizeof d),
           100 * b->coverage, b->partial ? " (PARTIAL: less than half; the rest is unknown)" : "");
    if (b->bottleneck >= 0)
        printf("bottleneck resource: %s (%.1f%% of the path)\n", lp_res_name(b->bottleneck),
               b->path_total ? 100 * b->path[b->bottleneck] / (double)b->path_total : 0);
    else
        printf("bottleneck resource: none known (no cpu, disk or net time on the path)\n");
    printf("\n  %-22s", "");
    for (int r = 0; r < LP_RES_N; r++)
        printf(" %16s", lp_res_name(r));
    printf("\n");
    print_row("critical path", b->path, (double)b->path_total);
    double all = 0;
    for (int r = 0; r < LP_RES_N; r++)
        all += b->all[r];
    print_row("all activities", b->all, all);
    printf("\nper operation, on the path (share of the operation's path time):\n");
    size_t shown = 0;
    for (size_t i = 0; i < b->nops && (!a->top || shown < a->top); i++) {
        const lp_cpf_oprow *r = &b->ops[i];
        if (!r->path_ns)
            continue;
        char lab[64];
        snprintf(lab, sizeof lab, "%.60s",
                 r->message ? "communication" : r->op == LP_STR_NONE ? "-" : lp_trace_str(t, r->op));
        print_row(lab, r->path, (double)r->path_ns);
        shown++;
    }
    printf("\nper operation, all activities:\n");
    shown = 0;
    for (size_t i = 0; i < b->nops && (!a->top || shown < a->top); i++) {
        const lp_cpf_oprow *r = &b->ops[i];
        if (!r->all_ns)
            continue;
        char lab[64];
        snprintf(lab, sizeof lab, "%.60s", r->op == LP_STR_NONE ? "-" : lp_trace_str(t, r->op));
        print_row(lab, r->all, (double)r->all_ns);
        shown++;
    }
    if (in->p.nbins) {
        printf("\nper interval of %s (all activities):\n", lp_fmt_dur(in->p.bin_ns, d, sizeof d));
        for (size_t k = 0; k < in->p.nbins; k++) {
            char lab[40];
            snprintf(lab, sizeof lab, "+%s", lp_fmt_dur((int64_t)k * in->p.bin_ns, d, sizeof d));
            double tot = 0;
            for (int r = 0; r < LP_RES_N; r++)
                tot += in->p.bin[k][r];
            print_row(lab, in->p.bin[k], tot);
        }
    }
    (void)cp;
}

static void json_vec(lp_jsonw *j, const char *key, const double ns[LP_RES_N])
{
    lp_jsonw_key(j, key);
    lp_jsonw_obj(j);
    for (int r = 0; r < LP_RES_N; r++)
        lp_jsonw_ki64(j, lp_res_name(r), (int64_t)(ns[r] + 0.5));
    lp_jsonw_obj_end(j);
}

static void print_json(const cpf_input *in, const lp_cpath *cp, const lp_cpf_bottleneck *b)
{
    const lp_trace *t = in->t;
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(&j, "command", "resources");
    cpf_json_evidence(&j, in);
    lp_jsonw_ki64(&j, "path_ns", b->path_total);
    lp_jsonw_kdbl(&j, "coverage", b->coverage);
    lp_jsonw_kbool(&j, "partial", b->partial);
    if (b->bottleneck >= 0)
        lp_jsonw_kstr(&j, "bottleneck", lp_res_name(b->bottleneck));
    else {
        lp_jsonw_key(&j, "bottleneck");
        lp_jsonw_null(&j);
    }
    json_vec(&j, "path", b->path);
    json_vec(&j, "all", b->all);
    lp_jsonw_key(&j, "operations");
    lp_jsonw_arr(&j);
    for (size_t i = 0; i < b->nops; i++) {
        const lp_cpf_oprow *r = &b->ops[i];
        lp_jsonw_obj(&j);
        if (r->message)
            lp_jsonw_kstr(&j, "operation", "communication");
        else if (r->op == LP_STR_NONE) {
            lp_jsonw_key(&j, "operation");
            lp_jsonw_null(&j);
        } else
            lp_jsonw_kstr(&j, "operation", lp_trace_str(t, r->op));
        lp_jsonw_ki64(&j, "path_ns", r->path_ns);
        lp_jsonw_ki64(&j, "all_ns", r->all_ns);
        json_vec(&j, "path", r->path);
        json_vec(&j, "all", r->all);
        lp_jsonw_obj_end(&j);
    }
    lp_jsonw_arr_end(&j);
    lp_jsonw_key(&j, "path_elements");
    lp_jsonw_arr(&j);
    for (size_t i = 0; i < cp->n; i++) {
        const lp_cp_elem *e = &cp->e[i];
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "kind", e->kind == LP_CP_MESSAGE ? "message" : "activity");
        lp_jsonw_kstr(&j, "worker", lp_trace_worker_name(t, e->worker));
        lp_jsonw_ki64(&j, "start", e->start);
        lp_jsonw_ki64(&j, "end", e->end);
        lp_jsonw_key(&j, "vector");
        lp_jsonw_obj(&j);
        for (int r = 0; r < LP_RES_N; r++)
            lp_jsonw_kdbl(&j, lp_res_name(r), b->elem[i][r]);
        lp_jsonw_obj_end(&j);
        lp_jsonw_obj_end(&j);
    }
    lp_jsonw_arr_end(&j);
    if (in->p.nbins) {
        lp_jsonw_ki64(&j, "interval_ns", in->p.bin_ns);
        lp_jsonw_key(&j, "intervals");
        lp_jsonw_arr(&j);
        for (size_t k = 0; k < in->p.nbins; k++) {
            lp_jsonw_obj(&j);
            lp_jsonw_ki64(&j, "start", in->t->tmin + (int64_t)k * in->p.bin_ns);
            json_vec(&j, "ns", in->p.bin[k]);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
    }
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

/* --from/--to: the trace replaced by its projection; an empty window is an error. */
static int window(const char *cmd, const char *from, const char *to, lp_trace **t)
{
    if (!from && !to)
        return 0;
    int64_t f = (*t)->tmin, e = (*t)->tmax;
    if ((from && cli_parse_time(from, (*t)->tmin, &f)) || (to && cli_parse_time(to, (*t)->tmin, &e)) || e < f)
        return cli_usage(cmd, "bad --from/--to");
    int rc = cli_refuse_window(cmd, *t, NULL, f, e);
    if (rc)
        return rc;
    lp_trace *w;
    lp_error err;
    lp_error_clear(&err);
    if (lp_trace_window(*t, f, e, &w, &err))
        return cli_fail(cmd, &err);
    if ((rc = cli_refuse_window(cmd, *t, w, f, e))) {
        lp_trace_free(w);
        return rc;
    }
    lp_trace_free(*t);
    *t = w;
    return 0;
}

/* --sqlite: the trace (no windows) and the CrystalPerf tables, one run of these inputs. */
static int write_sqlite(const res_args *a, char **inputs, int ninputs, const cpf_input *in,
                        const lp_cpf_bottleneck *b)
{
    lp_sqlite *db;
    lp_error err;
    lp_error_clear(&err);
    lp_sqlite_opts so;
    lp_sqlite_opts_init(&so);
    so.no_windows = 1;
    lp_status st = lp_sqlite_open(&db, a->sqlite, (const char *const *)inputs, (size_t)ninputs, "trace",
                                  a->cpf.samples ? a->cpf.samples : NULL, &err);
    if (st)
        return cli_fail("resources", &err);
    if (!(st = lp_sqlite_trace(db, in->t, in->t->tmin, in->t->tmax, &so, &err)) &&
        !(st = lp_sqlite_crystalperf(db, &in->p, b, &err)))
        st = lp_sqlite_commit(db, NULL, &err);
    lp_sqlite_close(db);
    return st ? cli_fail("resources", &err) : 0;
}

int cpf_check_joined(const char *cmd, const cpf_input *in);
int cpf_check_joined(const char *cmd, const cpf_input *in)
{
    int rc = cli_refuse_empty(cmd, in->t);
    if (rc)
        return rc;
    if (in->have_s && !in->p.samples_used) {
        fprintf(stderr,
                "longpole %s: no sample of '%s' falls on an activity of the trace (%llu samples; %u worker(s) name a "
                "thread with tid=; %llu samples of unnamed threads, %llu outside every activity): are they of this "
                "run, on the trace's clock (--samples-offset)?\n",
                cmd, "--samples", (unsigned long long)in->p.samples, in->p.workers_with_tid,
                (unsigned long long)in->p.samples_no_worker, (unsigned long long)in->p.samples_outside);
        return LP_EXIT_DATA;
    }
    return 0;
}

int cmd_resources(int argc, char **argv)
{
    res_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_resources, argc, argv, &a, &rest);
    if (rc)
        return rc;
    cpf_input in;
    rc = cpf_load("resources", &a.load, &a.cpf, rest.operands, rest.n, 0, &in);
    if (rc) {
        cli_args_release(&cli_spec_resources, &a, &rest);
        return rc;
    }
    if ((rc = window("resources", a.from, a.to, &in.t))) {
        cpf_release(&in);
        cli_args_release(&cli_spec_resources, &a, &rest);
        return rc;
    }
    if (a.from || a.to || a.interval) { /* the profile of the window, with intervals */
        lp_cpf_profile_release(&in.p);
        in.have_p = 0;
        lp_error err;
        lp_error_clear(&err);
        lp_cpf_opts o = {a.interval, a.cpf.offset};
        if (lp_cpf_profile_build(in.t, in.have_s ? &in.s : NULL, in.have_m ? &in.m : NULL, &o, &in.p, &err)) {
            cpf_release(&in);
            cli_args_release(&cli_spec_resources, &a, &rest);
            return cli_fail("resources", &err);
        }
        in.have_p = 1;
    }
    if ((rc = cpf_check_joined("resources", &in))) {
        cpf_release(&in);
        cli_args_release(&cli_spec_resources, &a, &rest);
        return rc;
    }
    lp_cpath cp;
    lp_cpf_bottleneck b;
    lp_error err;
    lp_error_clear(&err);
    int have_cp = 0, have_b = 0; /* the path alone: no PAG (cpath.h) */
    if (!(have_cp = !lp_cpath_trace(in.t, &cp, &err)) || !(have_b = !lp_cpf_bottleneck_compute(&in.p, &cp, &b, &err)))
        rc = cli_fail("resources", &err);
    if (!rc) {
        if (a.json)
            print_json(&in, &cp, &b);
        else
            print_text(&in, &cp, &b, &a);
        rc = fflush(stdout) ? LP_EXIT_IO : b.partial ? LP_EXIT_FINDINGS : in.data_errors ? LP_EXIT_DATA : 0;
        if (a.sqlite) {
            int src = write_sqlite(&a, rest.operands, rest.n, &in, &b);
            if (src)
                rc = src;
        }
        if (b.partial)
            fprintf(stderr, "longpole resources: partial answer: the evidence covers %.1f%% of the critical path\n",
                    100 * b.coverage);
    }
    if (have_b)
        lp_cpf_bottleneck_release(&b);
    if (have_cp)
        lp_cpath_release(&cp);
    cpf_release(&in);
    cli_args_release(&cli_spec_resources, &a, &rest);
    return rc;
}
