/* cmd_generate.c: `longpole generate dataflow` (see gen.h) and `longpole demo`;
 * `longpole generate requests` is cmd_genreq.c. */
#include "cli.h"
#include "base/util.h"
#include "longpole/gen/scenario.h"

#include <string.h>

typedef struct gen_text {
    const lp_gen_dataflow *o;
    unsigned threads;
} gen_text;

static lp_status write_text(void *ctx, FILE *out, lp_error *err)
{
    const gen_text *g = ctx;
    return lp_gen_dataflow_write(g->o, out, g->threads, err);
}

static lp_status write_bin(void *ctx, FILE *out, lp_error *err)
{
    const gen_text *g = ctx;
    return lp_gen_dataflow_write_lptb(g->o, out, g->threads, err);
}

/* The embedded demo job: 4-4-4 WordCount-like, one slow flatmap worker, some key skew. */
static void demo_params(lp_gen_dataflow *o)
{
    lp_gen_dataflow_defaults(o);
    o->duration_ns = 2000000000LL;
    o->rate = 800000;
    o->skew = 0.3;
    strcpy(o->slow_worker, "flatmap.1");
    o->slow_factor = 3.0;
    o->seed = 42;
}

typedef struct gen_args {
    lp_gen_dataflow o;
    const char *out;
    int to;                /* --to: -1 by the output's name, 0 lpt, 1 lptb */
    unsigned threads;
} gen_args;

static void gen_init(void *p)
{
    gen_args *a = p;
    lp_gen_dataflow_defaults(&a->o);
    a->to = -1;
}

static int set_demo(void *dst, const char *v, char *msg, size_t n)
{
    demo_params(dst);
    return 0;
}

static int set_scenario(void *dst, const char *v, char *msg, size_t n)
{
    lp_error err;
    if (!lp_gen_scenario_apply(dst, v, &err))
        return 0;
    snprintf(msg, n, "--scenario: %s", err.msg);
    return -1;
}

static int set_ops(void *dst, const char *v, char *msg, size_t n)
{
    lp_error err;
    if (!lp_gen_parse_ops(dst, v, &err))
        return 0;
    snprintf(msg, n, "--ops: %s", err.msg);
    return -1;
}

/* --rate: a positive count of records per second, kept as a double */
static int set_rate(void *dst, const char *v, char *msg, size_t n)
{
    uint64_t r;
    if (cli_parse_count(v, &r) || r == 0)
        return -1;
    *(double *)dst = (double)r;
    return 0;
}

/* --records N: stop at N records (then the duration no longer limits) */
static int set_records(void *dst, const char *v, char *msg, size_t n)
{
    lp_gen_dataflow *o = dst;
    uint64_t r;
    if (cli_parse_count(v, &r))
        return -1;
    o->max_records = r;
    if (r)
        o->duration_ns = INT64_MAX / 4; /* until the count is reached */
    return 0;
}

/* --slow WORKER:FACTOR */
static int set_slow(void *dst, const char *v, char *msg, size_t n)
{
    lp_gen_dataflow *o = dst;
    const char *c = strrchr(v, ':');
    double x;
    if (!c || c == v || (size_t)(c - v) >= sizeof o->slow_worker || cli_parse_double(c + 1, &x) || x < 1)
        return -1;
    memcpy(o->slow_worker, v, (size_t)(c - v));
    o->slow_worker[c - v] = '\0';
    o->slow_factor = x;
    return 0;
}

static const char *const out_kinds[] = {"lpt", "lptb", NULL};

static const cli_opt gen_opts[] = {
    {"--scenario", .kind = CLI_FN, .arg = "NAME", CLI_AT(gen_args, o), .fn = set_scenario,
     .err = "--scenario: needs a name", .example = "skew30",
     .help = "a preset of SnailTrail §7.5 (give it first; later options\n"
             "change it): skew30, skew50, skew80, flatmap-424,\n"
             "flatmap-124, flatmap-444 (include/longpole/gen/scenario.h)"},
    {"--demo", .kind = CLI_ACTION, CLI_AT(gen_args, o), .fn = set_demo,
     .help = "the job of `longpole demo` (give it first; later options change it)"},
    {"--ops", .kind = CLI_FN, .arg = "SPEC", CLI_AT(gen_args, o), .fn = set_ops, .err = "--ops: needs a value",
     .example = "source:2,count:2:500:keyed",
     .help = "name:parallelism[:cost_ns][:keyed|:rebalance],...\n"
             "(default source:4:200,flatmap:4:2000,count:4:600)"},
    {"--rate", .kind = CLI_FN, .arg = "R", CLI_AT(gen_args, o.rate), .fn = set_rate,
     .err = "--rate needs a positive number of records per second", .example = "10k",
     .help = "records/s read by all sources (default 1M)"},
    {"--duration", .kind = CLI_DUR, .arg = "D", CLI_AT(gen_args, o.duration_ns), .range = "(0,)",
     .err = "--duration needs a positive duration (e.g. 10s)", .example = "10ms",
     .help = "job time to simulate (default 10s)"},
    {"--records", .kind = CLI_FN, .arg = "N", CLI_AT(gen_args, o), .fn = set_records,
     .err = "--records needs a count (e.g. 10M)", .example = "1k",
     .help = "stop when the trace has N records (e.g. 10M)"},
    {"--skew", .kind = CLI_DOUBLE, .arg = "S", CLI_AT(gen_args, o.skew), .range = "[0,1]",
     .err = "--skew takes a share between 0 and 1", .example = "0.3",
     .help = "share of keyed records routed to one worker (0..1)"},
    {"--slow", .kind = CLI_FN, .arg = "W:F", CLI_AT(gen_args, o), .fn = set_slow,
     .err = "--slow takes WORKER:FACTOR with FACTOR >= 1 (e.g. flatmap.1:3)", .example = "flatmap.1:3",
     .help = "make worker W (e.g. flatmap.1) F times slower"},
    {"--batch", .kind = CLI_COUNT, .arg = "B", CLI_AT(gen_args, o.batch), .range = "[1,1000000]",
     .err = "--batch takes 1..1000000 records", .example = "16", .help = "records per network buffer (default 64)"},
    {"--credits", .kind = CLI_COUNT, .arg = "C", CLI_AT(gen_args, o.credits), .range = "[1,1024]",
     .err = "--credits takes 1..1024", .example = "2", .help = "buffers in flight per channel (default 4)"},
    {"--checkpoint", .kind = CLI_DUR, .arg = "D", CLI_AT(gen_args, o.checkpoint_ns),
     .err = "--checkpoint needs a duration (0 = none)", .example = "0", .help = "barrier interval (default 1s, 0 = none)"},
    {"--jitter", .kind = CLI_DOUBLE, .arg = "J", CLI_AT(gen_args, o.jitter), .range = "[0,1)",
     .err = "--jitter takes a value in [0, 1)", .example = "0.1", .help = "relative duration jitter (default 0.2)"},
    {"--halves", .kind = CLI_FLAG, CLI_AT(gen_args, o.halves), .help = "write messages as S/R halves"},
    {"--seed", .kind = CLI_COUNT, .arg = "N", CLI_AT(gen_args, o.seed), .err = "--seed needs a number", .example = "7",
     .help = "(default 1)"},
    {"--threads", .kind = CLI_COUNT, .arg = "N", CLI_AT(gen_args, threads), .range = "[1,8]",
     .err = "--threads takes 1..8", .example = "2",
     .help = "threads formatting the output (default: one per CPU, at\n"
             "most 8; the output is the same for any number)"},
    {"-o", "--output", .kind = CLI_STR, .arg = "FILE", CLI_AT(gen_args, out), .err = "-o needs a file name",
     .example = "-", .help = "output; *.lptb binary, else text; .gz/.zst compress"},
    {"--to", .kind = CLI_CHOICE, .arg = "lpt|lptb", CLI_AT(gen_args, to), .choices = out_kinds,
     .err = "--to takes lpt or lptb", .example = "lptb",
     .help = "force the output kind (binary to stdout: -o - --to lptb)"},
    CLI_END,
};

const cli_spec cli_spec_generate = {
    .cmd = "generate",
    .usage = "usage: longpole generate dataflow [OPTIONS] -o OUTPUT\n"
             "       longpole generate requests [OPTIONS] -o PREFIX\n",
    .about = "dataflow: a Flink-like streaming job (docs/generators.md): operators in a chain, each\n"
             "run by parallel workers; sources read records at a rate; buffers are deserialized,\n"
             "processed, serialized and sent; credit-based flow control; periodic checkpoint\n"
             "barriers from a job manager. Deterministic for a given --seed.\n",
    .groups = {CLI_OWN("dataflow options:", gen_opts)},
    .notes = "Both kinds are written straight from the simulation (the trace is never built in\n"
             "memory), exactly as `longpole convert` would write the same trace: the binary\n"
             "form's gap activities are filled as the trace model fills them.\n",
    .operands = CLI_NO_OPERANDS,
    .size = sizeof(gen_args),
    .init = gen_init,
};

int cmd_generate(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "requests") == 0)
        return cli_generate_requests(argc - 1, argv + 1);
    if (argc < 2 || strcmp(argv[1], "dataflow") != 0)
        return cli_usage("generate", "which generator? (dataflow)");
    gen_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_generate, argc - 1, argv + 1, &a, &rest);
    if (rc)
        return rc;
    cli_args_release(&cli_spec_generate, &a, &rest);
    if (!a.out)
        return cli_usage("generate", "no output given (-o FILE, or -o - for stdout)");
    lp_gen_dataflow *o = &a.o;
    const char *out = a.out;
    o->progress = cli_progress;
    lp_compression comp;
    int binary = cli_output_kind(out, a.to, &comp);
    gen_text g = {o, a.threads};
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_save_with(out, comp, binary ? write_bin : write_text, &g, &err);
    cli_progress_done();
    if (st)
        return cli_fail("generate", &err);
    return LP_EXIT_OK;
}

typedef struct demo_args {
    int json;
} demo_args;

static const cli_opt demo_opts[] = {
    {"--json", .kind = CLI_FLAG, CLI_AT(demo_args, json), .help = "the critical path as `cp --json` prints it"},
    CLI_END,
};

const cli_spec cli_spec_demo = {
    .cmd = "demo",
    .usage = "usage: longpole demo [--json]\n",
    .about = "Generates the embedded demo job (4-4-4 source/flatmap/count, 2 s, one flatmap worker\n"
             "three times slower, 30% key skew), runs the critical path and the checks on it, and\n"
             "prints both. The same trace is `longpole generate dataflow --demo -o demo.lpt`.\n",
    .groups = {CLI_OWN("options:", demo_opts)},
    .operands = CLI_NO_OPERANDS,
    .size = sizeof(demo_args),
};

int cmd_demo(int argc, char **argv)
{
    demo_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_demo, argc, argv, &a, &rest);
    if (rc)
        return rc;
    cli_args_release(&cli_spec_demo, &a, &rest);
    int json = a.json;
    lp_gen_dataflow o;
    demo_params(&o);
    lp_error err;
    lp_error_clear(&err);
    lp_trace *t;
    if (lp_gen_dataflow_run(&o, &t, &err))
        return cli_fail("demo", &err);
    if (!json) {
        printf("longpole demo: a generated Flink-like job (source:4 -> flatmap:4 -> count:4, 2 s,\n"
               "800k records/s, flatmap.1 three times slower, 30%% of keyed records to count.0).\n"
               "Same trace: longpole generate dataflow --demo -o demo.lpt\n\n");
    }
    cli_cp_opts co = {json, 40, 10, 0, 0, 0, NULL, 0};
    rc = cli_cp_print(t, &co, 0);
    if (!json && rc == 0) {
        lp_pag g;
        lp_check c;
        if (lp_pag_build(t, &g, &err) == LP_OK) {
            if (lp_check_run(&g, &c, &err) == LP_OK) {
                printf("\ninstrumentation checks (SnailTrail App. A.2): property 1 %s, property 2 %s\n",
                       c.np1 ? "violated" : "holds", c.np2 ? "violated" : "holds");
                lp_check_release(&c);
            }
            lp_pag_release(&g);
        }
    }
    lp_trace_free(t);
    return rc;
}
