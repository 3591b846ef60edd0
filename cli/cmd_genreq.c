/* cmd_genreq.c: `longpole generate requests`: request logs with a known causal model,
 * the ground truth of `infer`, `skew` and `requests` (genreq.h, docs/generator-requests.md). */
#include "cli.h"
#include "longpole/gen/genreq.h"

#include <string.h>

typedef struct genreq_args {
    lp_genreq g;
    const char *out;
} genreq_args;

static void genreq_init(void *p) { lp_genreq_defaults(&((genreq_args *)p)->g); }

#define G(m) CLI_AT(genreq_args, g.m)

static const cli_opt genreq_opts[] = {
    {"--requests", .kind = CLI_COUNT, .arg = "N", G(requests), .range = "[1,)",
     .err = "--requests needs a positive count (e.g. 1.3M)", .example = "100", .help = "requests (default 10000)"},
    {"--segments", .kind = CLI_COUNT, .arg = "N", G(segments), .range = "[14,20000]", .err = "--segments takes 14..20000",
     .example = "20", .help = "segments of every request (default 60, >= 14)"},
    {"--clients", .kind = CLI_COUNT, .arg = "N", G(clients), .range = "[1,100000000]", .err = "--clients takes 1..100M",
     .example = "10", .help = "client hosts (default 1000)"},
    {"--webs", .kind = CLI_COUNT, .arg = "N", G(webs), .range = "[1,1000000]", .err = "--webs takes 1..1M",
     .example = "2", .help = "web servers (default 8)"},
    {"--backends", .kind = CLI_COUNT, .arg = "N", G(backends), .range = "[1,1000000]", .err = "--backends takes 1..1M",
     .example = "2", .help = "backend servers (default 16)"},
    {"--skew", .kind = CLI_DUR, .arg = "D", G(skew_ns), .err = "--skew needs a duration (e.g. 50ms)", .example = "1ms",
     .help = "host clocks are off by up to D either way (default 50ms)"},
    {"--jitter", .kind = CLI_DUR, .arg = "D", G(jitter_ns), .err = "--jitter needs a duration (e.g. 50us)",
     .example = "1us", .help = "one-way network delays vary by up to D (default 50us)"},
    {"--net", .kind = CLI_DUR, .arg = "D", G(net_ns), .err = "--net needs a duration", .example = "1ms",
     .help = "client <-> web one-way base delay (default 20ms)"},
    {"--dc-net", .kind = CLI_DUR, .arg = "D", G(dc_net_ns), .err = "--dc-net needs a duration", .example = "10us",
     .help = "web <-> backend one-way base delay (default 300us)"},
    {"--server", .kind = CLI_DUR, .arg = "D", G(server_ns), .range = "(0,)",
     .err = "--server needs a positive duration", .example = "1ms", .help = "mean server segment (default 2ms)"},
    {"--client", .kind = CLI_DUR, .arg = "D", G(client_ns), .range = "(0,)",
     .err = "--client needs a positive duration", .example = "1ms", .help = "mean client segment (default 5ms)"},
    {"--miss-rate", .kind = CLI_DOUBLE, .arg = "P", G(miss_rate), .range = "[0,1]", .err = "--miss-rate takes 0..1",
     .example = "0.5", .help = "share of requests making the optional db call (default 0.1)"},
    {"--rate", .kind = CLI_DOUBLE, .arg = "R", G(rate), .range = "(0,)",
     .err = "--rate takes a positive number of requests per second", .example = "50",
     .help = "requests per second (default 100)"},
    {"--seed", .kind = CLI_COUNT, .arg = "N", G(seed), .err = "--seed needs a number", .example = "3",
     .help = "(default 1)"},
    {"--threads", .kind = CLI_COUNT, .arg = "N", G(threads), .range = "[0,64]", .err = "--threads takes 0..64",
     .example = "2", .help = "threads (default 0: one per CPU)"},
    {"--per-host", .kind = CLI_FLAG, G(per_host), .help = "one CSV file per host: PREFIX.hosts/HOST.csv"},
    {"--jsonl", .kind = CLI_FLAG, G(jsonl), .help = "JSON lines (PREFIX.jsonl) instead of CSV"},
    {"--gzip", .kind = CLI_FLAG, G(gzip), .help = "compress the log with gzip"},
    {"-o", "--output", .kind = CLI_STR, .arg = "PREFIX", CLI_AT(genreq_args, out), .err = "-o needs a file prefix",
     .example = "x", .help = "the files' prefix (required)"},
    CLI_END,
};

#undef G

const cli_spec cli_spec_generate_requests = {
    .cmd = "generate",
    .about = "requests: request logs of a web service with a known causal model (docs/generator-\n"
             "requests.md): writes PREFIX.csv (or PREFIX.jsonl, or PREFIX.hosts/HOST.csv with\n"
             "--per-host), PREFIX.attrs.csv, PREFIX.categories, PREFIX.truth.json (the ground-truth\n"
             "model) and PREFIX.skew.csv (true clock offsets), for `skew`, `infer` and `requests`.\n",
    .groups = {CLI_OWN("requests options:", genreq_opts)},
    .operands = CLI_NO_OPERANDS,
    .size = sizeof(genreq_args),
    .init = genreq_init,
};

int cli_generate_requests(int argc, char **argv)
{
    genreq_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_generate_requests, argc, argv, &a, &rest);
    if (rc)
        return rc;
    cli_args_release(&cli_spec_generate_requests, &a, &rest);
    lp_genreq *g = &a.g;
    const char *out = a.out;
    if (!out)
        return cli_usage("generate", "-o PREFIX is required");
    if (g->per_host && (g->jsonl || g->gzip))
        return cli_usage("generate", "--per-host writes plain CSV (no --jsonl or --gzip)");
    lp_error err;
    lp_error_clear(&err);
    lp_genreq_out o;
    if (lp_genreq_write(g, out, &o, &err))
        return cli_fail("generate", &err);
    fprintf(stderr, "generated %llu requests of %u segments: %llu log lines (%.1f MB) with prefix %s\n",
            (unsigned long long)g->requests, g->segments, (unsigned long long)o.rows, (double)o.bytes / 1e6, out);
    return LP_EXIT_OK;
}
