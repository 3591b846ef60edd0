/* cmd_whatif.c: `longpole whatif`: CrystalPerf's what-if (§5): the runtime of a recorded
 * job with other cores, CPU speed, disk or network bandwidth, or memory, by replaying its
 * DAG (whatif.h), with the model's own error at the recorded configuration and the
 * baselines beside it. */
#include "cpfcli.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct wi_args {
    cli_load load;
    cli_cpf cpf;
    uint64_t cores;
    double cpu_speed, disk_bw, net_bw, at_disk_bw, at_net_bw, disk_x, net_x;
    double memory, at_memory, data_size, buf_bytes, buf_ns;
    int no_warmup, no_sharing, json;
} wi_args;

/* "20MB", "20MiB", "100Mbit", "1.5G" (per second; bytes unless "bit"), or "xR" (a ratio:
 * stored negated). */
static int parse_bw(void *dst, const char *v, char *msg, size_t n)
{
    char *end;
    if (v[0] == 'x') {
        double r = strtod(v + 1, &end);
        if (end == v + 1 || *end || !(r > 0) || !isfinite(r))
            return -1;
        *(double *)dst = -r;
        return 0;
    }
    double x = strtod(v, &end);
    if (end == v || !(x > 0) || !isfinite(x))
        return -1;
    double mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1e3, end++;
    else if (*end == 'M')
        mul = 1e6, end++;
    else if (*end == 'G')
        mul = 1e9, end++;
    if (*end == 'i' && mul > 1)
        mul = mul == 1e3 ? 1024.0 : mul == 1e6 ? 1048576.0 : 1073741824.0, end++;
    if (!strcmp(end, "bit") || !strcmp(end, "bit/s") || !strcmp(end, "b"))
        mul /= 8;
    else if (*end && strcmp(end, "B") && strcmp(end, "B/s") && strcmp(end, "/s"))
        return -1;
    *(double *)dst = x * mul;
    return 0;
}

static int parse_bytes(void *dst, const char *v, char *msg, size_t n)
{
    if (parse_bw(dst, v, msg, n) || *(double *)dst < 0)
        return -1;
    return 0;
}

static const cli_opt wi_opts[] = {
    {"--cores", .kind = CLI_COUNT, .arg = "N", CLI_AT(wi_args, cores), .range = "[1,1000000]",
     .err = "--cores needs a number >= 1", .example = "4",
     .help = "slots of every pool (thread pool, Spark executor) instead of the recorded"},
    {"--cpu-speed", .kind = CLI_DOUBLE, .arg = "X", CLI_AT(wi_args, cpu_speed), .range = "(0,)",
     .err = "--cpu-speed needs a number > 0", .example = "0.5",
     .help = "CPU speed (or CPU share) relative to the recording: 2 = twice as fast"},
    {"--disk-bw", .kind = CLI_FN, .arg = "B", CLI_AT(wi_args, disk_bw), .fn = parse_bw,
     .err = "--disk-bw needs a bandwidth (20MB, 20MiB, 160Mbit) or a ratio (x2)", .example = "20MiB", .help = ""},
    {"--net-bw", .kind = CLI_FN, .arg = "B", CLI_AT(wi_args, net_bw), .fn = parse_bw,
     .err = "--net-bw needs a bandwidth (100Mbit, 12MB) or a ratio (x2)", .example = "100Mbit",
     .help = "disk or network bandwidth to predict for (per second), or xR: R times the\nrecorded one"},
    {"--at-disk-bw", .kind = CLI_FN, .arg = "B", CLI_AT(wi_args, at_disk_bw), .fn = parse_bytes,
     .err = "--at-disk-bw needs a bandwidth", .example = "40MB", .help = ""},
    {"--at-net-bw", .kind = CLI_FN, .arg = "B", CLI_AT(wi_args, at_net_bw), .fn = parse_bytes,
     .err = "--at-net-bw needs a bandwidth", .example = "1Gbit",
     .help = "the bandwidth the recording had (needed with an absolute --disk-bw/--net-bw)"},
    {"--memory", .kind = CLI_FN, .arg = "M", CLI_AT(wi_args, memory), .fn = parse_bytes,
     .err = "--memory needs a size (8G, 512Mi)", .example = "8G", .help = ""},
    {"--at-memory", .kind = CLI_FN, .arg = "M", CLI_AT(wi_args, at_memory), .fn = parse_bytes,
     .err = "--at-memory needs a size", .example = "4G", .help = ""},
    {"--data-size", .kind = CLI_FN, .arg = "D", CLI_AT(wi_args, data_size), .fn = parse_bytes,
     .err = "--data-size needs a size", .example = "6G",
     .help = "memory to predict for, the recording's, and the job's data size (the\nreversed roofline's turning point; "
             "spill at --at-disk-bw, default 100MB)"},
    {"--buffer-size", .kind = CLI_FN, .arg = "S", CLI_AT(wi_args, buf_bytes), .fn = parse_bytes,
     .err = "--buffer-size needs a size", .example = "64Ki", .help = ""},
    {"--buffer-overhead", .kind = CLI_DUR, .arg = "O", CLI_AT(wi_args, buf_ns), .err = "--buffer-overhead needs a duration",
     .example = "2us", .help = "Alg. 2's buffer size and cost per buffer (default 64 KiB, 2 us)"},
    {"--no-warmup", .kind = CLI_FLAG, CLI_AT(wi_args, no_warmup), .help = "no warm-up factor (w = 1)"},
    {"--no-sharing", .kind = CLI_FLAG, CLI_AT(wi_args, no_sharing),
     .help = "the paper's Alg. 1 and 2 only: no shared devices (docs/analyses/crystalperf.md)"},
    {"--json", .kind = CLI_FLAG, CLI_AT(wi_args, json), .help = "one JSON document"},
    CLI_END,
};

const cli_spec cli_spec_whatif = {
    .cmd = "whatif",
    .usage = "usage: longpole whatif --cores N | --cpu-speed X | --disk-bw B | --net-bw B | --memory M\n"
             "                       [--samples FILE] [OPTIONS] TRACE...\n",
    .about = "The runtime of the recorded job under another configuration (CrystalPerf §5): its DAG\n"
             "(tasks of thread pools and Spark executors, sequential workers, messages as\n"
             "dependencies) replayed on the new slots, each task's time rescaled by its resource\n"
             "vector (Alg. 1: T' = T(1 - v + v s/s'); Alg. 2: the transfer part of disk and network\n"
             "time scaled by B/B'), tasks moving in or out of the first wave by the fitted warm-up\n"
             "factor. With the tasks' bytes and the recorded bandwidth (--at-disk-bw, --at-net-bw),\n"
             "a device the recording saturated is shared by the tasks running at once, and one it\n"
             "did not saturate keeps a task's time until the new bandwidth is the bound. Always\n"
             "printed: the model's own error at the recorded configuration (the replay against the\n"
             "recorded runtime), and the baselines: no change, linear scaling by the changed\n"
             "resource, a Sparklens-style replay without resource vectors, Amdahl, and the paper's\n"
             "Alg. 1 and 2 alone.\n",
    .groups = {CLI_OWN("configuration:", wi_opts), CLI_CPF_GROUP(wi_args, cpf), CLI_LOAD_GROUPS(wi_args, load)},
    .notes = "exit status: 0 a prediction; 1 a partial one (the resource vectors cover less than half\n"
             "of the task time a speed or bandwidth change needs: said so); >= 2 none.\n",
    .size = sizeof(wi_args),
};

typedef struct wi_out {
    lp_wi_config c;
    lp_wi_result self, pred, spark, paper;
    double linear, amdahl, coverage, memory_ns;
    int have_memory;
    uint32_t rec_slots;
} wi_out;

/* Ratio B'/B of a --*-bw pair; 0 when unchanged; -1 when the recorded one is missing. */
static double bw_ratio(double target, double at)
{
    if (target == 0)
        return 0;
    if (target < 0)
        return -target;
    return at > 0 ? target / at : -1;
}

/* The job-wide shares of task time by resource and the task-time coverage. */
static void shares(const lp_wi_dag *d, double f[LP_RES_N], double *coverage, double *pool_work)
{
    double tot = 0;
    for (int r = 0; r < LP_RES_N; r++)
        f[r] = 0;
    *pool_work = 0;
    for (size_t i = 0; i < d->n; i++) {
        const lp_wi_node *nd = &d->node[i];
        if (nd->kind != LP_WI_TASK)
            continue;
        tot += (double)nd->dur;
        for (int r = 0; r < LP_RES_N; r++)
            f[r] += nd->v[r] * (double)nd->dur;
        if (!d->seq[nd->pool])
            *pool_work += (double)nd->dur / d->slots[nd->pool];
    }
    *coverage = tot > 0 ? 1 - f[LP_RES_UNKNOWN] / tot : 0;
    for (int r = 0; r < LP_RES_N; r++)
        f[r] = tot > 0 ? f[r] / tot : 0;
}

static int compute(const wi_args *a, const lp_wi_dag *d, wi_out *o, lp_error *err)
{
    memset(o, 0, sizeof *o);
    o->c.slots = (uint32_t)a->cores;
    o->c.cpu_speed = a->cpu_speed;
    o->c.disk_ratio = bw_ratio(a->disk_bw, a->at_disk_bw);
    o->c.net_ratio = bw_ratio(a->net_bw, a->at_net_bw);
    o->c.disk_bw = a->at_disk_bw, o->c.net_bw = a->at_net_bw;
    o->c.buf_bytes = a->buf_bytes, o->c.buf_ns = (double)a->buf_ns;
    o->c.no_warmup = a->no_warmup;
    o->c.no_sharing = a->no_sharing;
    if (o->c.disk_ratio < 0 || o->c.net_ratio < 0)
        return cli_usage("whatif", "an absolute --%s-bw needs the recorded bandwidth (--at-%s-bw), or give a ratio (x2)",
                         o->c.disk_ratio < 0 ? "disk" : "net", o->c.disk_ratio < 0 ? "disk" : "net");
    lp_wi_config same = {0};
    same.no_warmup = a->no_warmup;
    if (lp_wi_replay(d, &same, 0, &o->self, err) || lp_wi_replay(d, &o->c, 0, &o->pred, err))
        return cli_fail("whatif", err);
    lp_wi_config sp = o->c;
    sp.no_vectors = 1;
    lp_wi_config pp = o->c;
    pp.no_sharing = 1;
    if (lp_wi_replay(d, &sp, 0, &o->spark, err) || lp_wi_replay(d, &pp, 0, &o->paper, err))
        return cli_fail("whatif", err);
    /* baselines */
    double f[LP_RES_N], pool_work;
    shares(d, f, &o->coverage, &pool_work);
    double T = (double)o->self.recorded, lin = T, am = T;
    uint32_t rec = 0;
    for (uint32_t p = 0; p < d->npools; p++)
        if (!d->seq[p] && d->slots[p] > rec)
            rec = d->slots[p];
    o->rec_slots = rec;
    if (a->cores && rec) {
        double ratio = (double)rec / (double)a->cores, par = T > 0 ? pool_work / T : 0;
        if (par > 1)
            par = 1;
        lin *= ratio;
        am = am * (1 - par) + am * par * ratio;
    }
    if (a->cpu_speed > 0) {
        lin /= a->cpu_speed;
        am = am * (1 - f[LP_RES_CPU]) + am * f[LP_RES_CPU] / a->cpu_speed;
    }
    if (o->c.disk_ratio > 0) {
        lin /= o->c.disk_ratio;
        am = am * (1 - f[LP_RES_DISK]) + am * f[LP_RES_DISK] / o->c.disk_ratio;
    }
    if (o->c.net_ratio > 0) {
        lin /= o->c.net_ratio;
        am = am * (1 - f[LP_RES_NET]) + am * f[LP_RES_NET] / o->c.net_ratio;
    }
    o->linear = lin, o->amdahl = am;
    if (a->memory > 0) {
        if (!(a->at_memory > 0) || !(a->data_size > 0))
            return cli_usage("whatif", "--memory needs the recording's memory (--at-memory) and the data size "
                                       "(--data-size): the trace does not say them");
        double bw = a->at_disk_bw > 0 ? a->at_disk_bw : 100e6;
        o->memory_ns = lp_wi_memory((double)o->pred.makespan, a->at_memory, a->memory, a->data_size, 1e9 / bw);
        o->have_memory = 1;
    }
    return 0;
}

static double pct(double p, double a) { return a > 0 ? 100 * fabs(p - a) / a : 0; }

static void print_text(const wi_args *a, const lp_wi_dag *d, const wi_out *o, const cpf_input *in)
{
    char b1[32];
    cpf_print_evidence(in);
    printf("DAG: %zu nodes, %zu dependencies, %u pool(s)", d->n, d->ne, d->npools);
    uint32_t seqs = 0;
    for (uint32_t p = 0; p < d->npools; p++)
        seqs += d->seq[p];
    printf(" (%u sequential worker(s))", seqs);
    if (d->msgs_unplaced)
        printf("; %llu message(s) left out (no segment at an end)", (unsigned long long)d->msgs_unplaced);
    printf("\n");
    for (uint32_t p = 0; p < d->npools; p++)
        if (!d->seq[p])
            printf("pool %u: %u slot(s) recorded, warm-up factor w = %.3f\n", p, d->slots[p], d->warmup[p]);
    printf("resource vectors cover %.1f%% of the task time\n\n", 100 * o->coverage);
    printf("configuration:");
    if (a->cores)
        printf(" cores %u -> %llu;", o->rec_slots, (unsigned long long)a->cores);
    if (a->cpu_speed > 0)
        printf(" CPU speed x%g;", a->cpu_speed);
    if (o->c.disk_ratio > 0)
        printf(" disk bandwidth x%g;", o->c.disk_ratio);
    if (o->c.net_ratio > 0)
        printf(" network bandwidth x%g;", o->c.net_ratio);
    if (a->memory > 0)
        printf(" memory %.3g -> %.3g bytes (data %.3g);", a->at_memory, a->memory, a->data_size);
    printf("\n");
    double T = (double)o->self.recorded;
    printf("recorded runtime            %12s\n", lp_fmt_dur(o->self.recorded, b1, sizeof b1));
    printf("replay, unchanged           %12s   model error at the recorded configuration: %.2f%%\n",
           lp_fmt_dur(o->self.makespan, b1, sizeof b1), pct((double)o->self.makespan, T));
    int64_t pred = o->have_memory ? (int64_t)o->memory_ns : o->pred.makespan;
    printf("PREDICTED                   %12s   (x%.3f of the recorded)\n", lp_fmt_dur(pred, b1, sizeof b1),
           T > 0 ? (double)pred / T : 0);
    printf("baselines:\n");
    printf("  no change                 %12s\n", lp_fmt_dur(o->self.recorded, b1, sizeof b1));
    printf("  linear in the resource    %12s\n", lp_fmt_dur((int64_t)o->linear, b1, sizeof b1));
    printf("  replay without vectors    %12s   (Sparklens-style: only the slots change)\n",
           lp_fmt_dur(o->spark.makespan, b1, sizeof b1));
    printf("  Amdahl                    %12s   (job-wide shares, no DAG)\n", lp_fmt_dur((int64_t)o->amdahl, b1, sizeof b1));
    printf("  Alg. 1 and 2 alone        %12s   (as published: no shared device)\n",
           lp_fmt_dur(o->paper.makespan, b1, sizeof b1));
}

static void print_json(const wi_args *a, const lp_wi_dag *d, const wi_out *o, const cpf_input *in)
{
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(&j, "command", "whatif");
    cpf_json_evidence(&j, in);
    lp_jsonw_ku64(&j, "nodes", d->n);
    lp_jsonw_ku64(&j, "dependencies", d->ne);
    lp_jsonw_ku64(&j, "messages_left_out", d->msgs_unplaced);
    lp_jsonw_kdbl(&j, "vector_coverage", o->coverage);
    lp_jsonw_key(&j, "config");
    lp_jsonw_obj(&j);
    lp_jsonw_ku64(&j, "cores", a->cores);
    lp_jsonw_ku64(&j, "recorded_cores", o->rec_slots);
    lp_jsonw_kdbl(&j, "cpu_speed", a->cpu_speed > 0 ? a->cpu_speed : 1);
    lp_jsonw_kdbl(&j, "disk_ratio", o->c.disk_ratio > 0 ? o->c.disk_ratio : 1);
    lp_jsonw_kdbl(&j, "net_ratio", o->c.net_ratio > 0 ? o->c.net_ratio : 1);
    lp_jsonw_obj_end(&j);
    lp_jsonw_ki64(&j, "recorded_ns", o->self.recorded);
    lp_jsonw_ki64(&j, "replay_unchanged_ns", o->self.makespan);
    lp_jsonw_kdbl(&j, "self_error", o->self.recorded ? fabs((double)o->self.makespan - (double)o->self.recorded) /
                                                          (double)o->self.recorded
                                                    : 0);
    lp_jsonw_ki64(&j, "predicted_ns", o->have_memory ? (int64_t)o->memory_ns : o->pred.makespan);
    lp_jsonw_key(&j, "baselines");
    lp_jsonw_obj(&j);
    lp_jsonw_ki64(&j, "no_change_ns", o->self.recorded);
    lp_jsonw_ki64(&j, "linear_ns", (int64_t)o->linear);
    lp_jsonw_ki64(&j, "replay_without_vectors_ns", o->spark.makespan);
    lp_jsonw_ki64(&j, "amdahl_ns", (int64_t)o->amdahl);
    lp_jsonw_ki64(&j, "paper_ns", o->paper.makespan);
    lp_jsonw_obj_end(&j);
    lp_jsonw_key(&j, "warmup");
    lp_jsonw_arr(&j);
    for (uint32_t p = 0; p < d->npools; p++)
        if (!d->seq[p])
            lp_jsonw_dbl(&j, d->warmup[p]);
    lp_jsonw_arr_end(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

int cpf_check_joined(const char *cmd, const cpf_input *in); /* cmd_resources.c */

int cmd_whatif(int argc, char **argv)
{
    wi_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_whatif, argc, argv, &a, &rest);
    if (rc)
        return rc;
    if (!a.cores && !(a.cpu_speed > 0) && !a.disk_bw && !a.net_bw && !(a.memory > 0)) {
        cli_args_release(&cli_spec_whatif, &a, &rest);
        return cli_usage("whatif", "say what changes: --cores, --cpu-speed, --disk-bw, --net-bw or --memory");
    }
    cpf_input in;
    rc = cpf_load("whatif", &a.load, &a.cpf, rest.operands, rest.n, 0, &in);
    cli_args_release(&cli_spec_whatif, &a, &rest);
    if (rc)
        return rc;
    if ((rc = cpf_check_joined("whatif", &in))) {
        cpf_release(&in);
        return rc;
    }
    lp_wi_dag d;
    lp_error err;
    lp_error_clear(&err);
    if (lp_wi_dag_build(in.t, &in.p, &d, &err)) {
        cpf_release(&in);
        return cli_fail("whatif", &err);
    }
    wi_out o;
    rc = compute(&a, &d, &o, &err);
    int needs_vectors = a.cpu_speed > 0 || a.disk_bw || a.net_bw;
    if (!rc) {
        if (a.json)
            print_json(&a, &d, &o, &in);
        else
            print_text(&a, &d, &o, &in);
        int partial = needs_vectors && o.coverage < 0.5;
        if (partial)
            fprintf(stderr,
                    "longpole whatif: partial answer: the resource vectors cover only %.1f%% of the task time; the "
                    "rest is kept as recorded (give --samples, or a trace with task metrics)\n",
                    100 * o.coverage);
        rc = fflush(stdout) ? LP_EXIT_IO : partial ? LP_EXIT_FINDINGS : in.data_errors ? LP_EXIT_DATA : 0;
    }
    lp_wi_dag_release(&d);
    cpf_release(&in);
    return rc;
}
