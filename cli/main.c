/* main.c: the `longpole` command: the table of commands and the dispatch. A new
 * command is one file (cli/cmd_NAME.c with cmd_NAME() and cli_help_NAME[]) and one
 * line in this table. */
#include "cli.h"

#include <string.h>

const cli_command cli_commands[] = {
    {"cp", cmd_cp, cli_help_cp, "whole-trace critical path, its breakdown, and the conventional profile"},
    {"check", cmd_check, cli_help_check, "instrumentation checks (SnailTrail App. A.2) and format rules"},
    {"convert", cmd_convert, cli_help_convert, "convert any readable trace to native text (.lpt) or binary (.lptb)"},
    {"info", cmd_info, cli_help_info, "what a trace holds"},
    {"summary", cmd_summary, cli_help_summary, "critical participation per time window: SnailTrail's four summaries (activity, straggler, operator, comm)"},
    {"stream", cmd_stream, cli_help_stream, "SnailTrail's online mode: CP and the four summaries of every window of a live stream (stdin or TCP)"},
    {"spans", cmd_spans, cli_help_spans, "critical paths of span trees (Jaeger, Zipkin, OTLP), per trace and at latency percentiles"},
    {"skew", cmd_skew, cli_help_skew, "clock offsets of request-log hosts from RPC patterns (Mystery Machine §3)"},
    {"infer", cmd_infer, cli_help_infer, "causal model of request logs by hypothesis rejection (Mystery Machine §4)"},
    {"requests", cmd_requests, cli_help_requests, "per-request critical path and slack, aggregates, outliers, what-if (Mystery Machine)"},
    {"report", cmd_report, cli_help_report, "one self-contained HTML report: timeline, path vs profile, CP summaries, request and span views"},
    {"serve", cmd_serve, cli_help_serve, "a local web server: the report's views live and a JSON API per analysis (docs/serve.md)"},
    {"export", cmd_export, cli_help_export, "write a trace for other tools: Chrome/Perfetto JSON with the critical path marked, or SQLite tables of every entity and result"},
    {"generate", cmd_generate, cli_help_generate, "synthetic traces: a Flink-like dataflow job, or request logs with a known causal model"},
    {"demo", cmd_demo, cli_help_demo, "generate the embedded demo job and analyse it"},
    {"help", cmd_help, "usage: longpole help [TOPIC]\n", "this text; `longpole help TOPIC` for a command or topic"},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    cli_self_init(argv[0]);
    if (argc < 2) {
        cli_help_topic(stderr, NULL);
        return LP_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        return cmd_help(argc - 1, argv + 1);
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("longpole %s\n", LONGPOLE_VERSION);
        return LP_EXIT_OK;
    }
    for (const cli_command *c = cli_commands; c->name; c++) {
        if (strcmp(c->name, name) != 0)
            continue;
        for (int k = 2; k < argc; k++)
            if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
                fputs(c->help, stdout);
                return LP_EXIT_OK;
            }
        return c->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "longpole: unknown command '%s' (see `longpole help`)\n", name);
    return LP_EXIT_USAGE;
}
