/* cmd_generate.c: `longpole generate dataflow` (see gen.h) and `longpole demo`. */
#include "cli.h"
#include "base/util.h"
#include "longpole/gen/scenario.h"

#include <string.h>

const char cli_help_demo[] =
    "usage: longpole demo [--json]\n"
     "\n"
     "Generates the embedded demo job (4-4-4 source/flatmap/count, 2 s, one flatmap worker\n"
     "three times slower, 30% key skew), runs the critical path and the checks on it, and\n"
     "prints both. The same trace is `longpole generate dataflow --demo -o demo.lpt`.\n";

const char cli_help_generate[] =
    "usage: longpole generate dataflow [OPTIONS] -o OUTPUT\n"
    "       longpole generate requests [OPTIONS]   (request logs: see `longpole help requests`)\n"
     "\n"
     "A Flink-like streaming job (docs/generators.md): operators in a chain, each run by\n"
     "parallel workers; sources read records at a rate; buffers are deserialized,\n"
     "processed, serialized and sent; credit-based flow control; periodic checkpoint\n"
     "barriers from a job manager. Deterministic for a given --seed.\n"
     "  --scenario NAME     a preset of SnailTrail §7.5 (give it first; later options\n"
     "                      change it): skew30, skew50, skew80, flatmap-424,\n"
     "                      flatmap-124, flatmap-444 (include/longpole/gen/scenario.h)\n"
     "  --ops SPEC          name:parallelism[:cost_ns][:keyed|:rebalance],...\n"
     "                      (default source:4:200,flatmap:4:2000,count:4:600)\n"
     "  --rate R            records/s read by all sources (default 1M)\n"
     "  --duration D        job time to simulate (default 10s)\n"
     "  --records N         stop when the trace has N records (e.g. 10M)\n"
     "  --skew S            share of keyed records routed to one worker (0..1)\n"
     "  --slow W:F          make worker W (e.g. flatmap.1) F times slower\n"
     "  --batch B           records per network buffer (default 64)\n"
     "  --credits C         buffers in flight per channel (default 4)\n"
     "  --checkpoint D      barrier interval (default 1s, 0 = none)\n"
     "  --jitter J          relative duration jitter (default 0.2)\n"
     "  --halves            write messages as S/R halves\n"
     "  --seed N            (default 1)\n"
     "  --threads N         threads formatting the output (default: one per CPU, at\n"
     "                      most 8; the output is the same for any number)\n"
     "  -o FILE             output; *.lptb binary, else text; .gz/.zst compress\n"
     "  --to lpt|lptb       force the output kind (binary to stdout: -o - --to lptb)\n"
     "\n"
     "Both kinds are written straight from the simulation (the trace is never built in\n"
     "memory), exactly as `longpole convert` would write the same trace: the binary\n"
     "form's gap activities are filled as the trace model fills them.\n";

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

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

int cmd_generate(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "requests") == 0) return cmd_generate_requests(argc, argv);
    if (argc < 2 || strcmp(argv[1], "dataflow") != 0)
        return cli_usage("generate", "which generator? (dataflow)");
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    lp_error err;
    lp_error_clear(&err);
    const char *out = NULL, *v, *to = NULL;
    unsigned threads = 0;
    for (int i = 2; i < argc; i++) {
        int64_t d;
        double x;
        uint64_t n;
        if (cli_opt(argc, argv, &i, "-o", &out) || cli_opt(argc, argv, &i, "--output", &out)) {
            if (!out)
                return cli_usage("generate", "-o needs a file name");
        } else if (cli_opt(argc, argv, &i, "--to", &to)) {
            if (!to || (strcmp(to, "lpt") && strcmp(to, "lptb")))
                return cli_usage("generate", "--to takes lpt or lptb");
        } else if (cli_flag(argv, i, "--demo")) {
            demo_params(&o);
        } else if (cli_opt(argc, argv, &i, "--scenario", &v)) { /* SnailTrail §7.5 presets (scenario.h) */
            if (!v || lp_gen_scenario_apply(&o, v, &err))
                return cli_usage("generate", "--scenario: %s", v ? err.msg : "needs a name");
        } else if (cli_flag(argv, i, "--halves")) {
            o.halves = 1;
        } else if (cli_opt(argc, argv, &i, "--ops", &v)) {
            if (!v || lp_gen_parse_ops(&o, v, &err))
                return cli_usage("generate", "--ops: %s", v ? err.msg : "needs a value");
        } else if (cli_opt(argc, argv, &i, "--rate", &v)) {
            if (!v || cli_parse_count(v, &n) || n == 0)
                return cli_usage("generate", "--rate needs a positive number of records per second");
            o.rate = (double)n;
        } else if (cli_opt(argc, argv, &i, "--duration", &v)) {
            if (!v || cli_parse_dur(v, &d) || d <= 0)
                return cli_usage("generate", "--duration needs a positive duration (e.g. 10s)");
            o.duration_ns = d;
        } else if (cli_opt(argc, argv, &i, "--records", &v)) {
            if (!v || cli_parse_count(v, &n))
                return cli_usage("generate", "--records needs a count (e.g. 10M)");
            o.max_records = n;
            if (n)
                o.duration_ns = INT64_MAX / 4; /* until the count is reached */
        } else if (cli_opt(argc, argv, &i, "--skew", &v)) {
            if (!v || cli_parse_double(v, &x) || x < 0 || x > 1)
                return cli_usage("generate", "--skew takes a share between 0 and 1");
            o.skew = x;
        } else if (cli_opt(argc, argv, &i, "--slow", &v)) {
            const char *c = v ? strrchr(v, ':') : NULL;
            if (!c || c == v || (size_t)(c - v) >= sizeof o.slow_worker || cli_parse_double(c + 1, &x) || x < 1)
                return cli_usage("generate", "--slow takes WORKER:FACTOR with FACTOR >= 1 (e.g. flatmap.1:3)");
            memcpy(o.slow_worker, v, (size_t)(c - v));
            o.slow_worker[c - v] = '\0';
            o.slow_factor = x;
        } else if (cli_opt(argc, argv, &i, "--batch", &v)) {
            if (!v || cli_parse_count(v, &n) || n == 0 || n > 1000000)
                return cli_usage("generate", "--batch takes 1..1000000 records");
            o.batch = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--credits", &v)) {
            if (!v || cli_parse_count(v, &n) || n == 0 || n > 1024)
                return cli_usage("generate", "--credits takes 1..1024");
            o.credits = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--checkpoint", &v)) {
            if (!v || cli_parse_dur(v, &d))
                return cli_usage("generate", "--checkpoint needs a duration (0 = none)");
            o.checkpoint_ns = d;
        } else if (cli_opt(argc, argv, &i, "--jitter", &v)) {
            if (!v || cli_parse_double(v, &x) || x < 0 || x >= 1)
                return cli_usage("generate", "--jitter takes a value in [0, 1)");
            o.jitter = x;
        } else if (cli_opt(argc, argv, &i, "--threads", &v)) {
            if (!v || cli_parse_count(v, &n) || n == 0 || n > 8)
                return cli_usage("generate", "--threads takes 1..8");
            threads = (unsigned)n;
        } else if (cli_opt(argc, argv, &i, "--seed", &v)) {
            if (!v || cli_parse_count(v, &n))
                return cli_usage("generate", "--seed needs a number");
            o.seed = n;
        } else {
            return cli_usage("generate", "unknown option '%s'", argv[i]);
        }
    }
    if (!out)
        return cli_usage("generate", "no output given (-o FILE, or -o - for stdout)");
    o.progress = cli_progress;
    lp_compression comp = ends_with(out, ".gz") ? LP_COMP_GZIP : ends_with(out, ".zst") ? LP_COMP_ZSTD : LP_COMP_NONE;
    int binary = to ? strcmp(to, "lptb") == 0
                    : ends_with(out, ".lptb") || ends_with(out, ".lptb.gz") || ends_with(out, ".lptb.zst");
    gen_text g = {&o, threads};
    lp_status st = lp_save_with(out, comp, binary ? write_bin : write_text, &g, &err);
    cli_progress_done();
    if (st)
        return cli_fail("generate", &err);
    return LP_EXIT_OK;
}

int cmd_demo(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_flag(argv, i, "--json"))
            json = 1;
        else
            return cli_usage("demo", "unknown option '%s'", argv[i]);
    }
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
    cli_cp_opts co = {json, 40, 10, 0, 0, 0};
    int rc = cli_cp_print(t, &co, 0);
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
