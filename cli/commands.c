/* commands.c: the table of the `longpole` commands: name, entry point, the one-line
 * summary of the overview and the option tables (with their help) of each form. A new
 * command is one file (cli/cmd_NAME.c with cmd_NAME() and cli_spec_NAME) and one line
 * here. */
#include "cli.h"

const cli_command cli_commands[] = {
    {"cp", cmd_cp, "whole-trace critical path, its breakdown, and the conventional profile", {&cli_spec_cp}},
    {"check", cmd_check, "instrumentation checks (SnailTrail App. A.2) and format rules", {&cli_spec_check}},
    {"convert", cmd_convert, "convert any readable trace to native text (.lpt) or binary (.lptb)", {&cli_spec_convert}},
    {"info", cmd_info, "what a trace holds", {&cli_spec_info}},
    {"summary", cmd_summary,
     "critical participation per time window: SnailTrail's four summaries (activity, straggler, operator, comm)",
     {&cli_spec_summary}},
    {"stream", cmd_stream,
     "SnailTrail's online mode: CP and the four summaries of every window of a live stream (stdin or TCP)",
     {&cli_spec_stream, &cli_spec_stream_emit}},
    {"spans", cmd_spans, "critical paths of span trees (Jaeger, Zipkin, OTLP), per trace and at latency percentiles",
     {&cli_spec_spans}},
    {"skew", cmd_skew, "clock offsets of request-log hosts from RPC patterns (Mystery Machine §3)", {&cli_spec_skew}},
    {"infer", cmd_infer, "causal model of request logs by hypothesis rejection (Mystery Machine §4)", {&cli_spec_infer}},
    {"requests", cmd_requests, "per-request critical path and slack, aggregates, outliers, what-if (Mystery Machine)",
     {&cli_spec_requests}},
    {"report", cmd_report,
     "one self-contained HTML report: timeline, path vs profile, CP summaries, request and span views",
     {&cli_spec_report}},
    {"serve", cmd_serve, "a local web server: the report's views live and a JSON API per analysis (docs/serve.md)",
     {&cli_spec_serve}},
    {"export", cmd_export,
     "write a trace for other tools: Chrome/Perfetto JSON with the critical path marked, or SQLite tables of every "
     "entity and result",
     {&cli_spec_export, &cli_spec_export_sqlite}},
    {"generate", cmd_generate, "synthetic traces: a Flink-like dataflow job, or request logs with a known causal model",
     {&cli_spec_generate, &cli_spec_generate_requests}},
    {"classify", cmd_classify, "CrystalPerf's resource classifier: train, cross-validate by library, explain, label by measurement",
     {&cli_spec_classify}},
    {"resources", cmd_resources,
     "CrystalPerf: what the critical path spends its time on (cpu, disk, net, wait) and its bottleneck resource",
     {&cli_spec_resources}},
    {"whatif", cmd_whatif, "CrystalPerf: the runtime with other cores, CPU speed, disk or network bandwidth, memory",
     {&cli_spec_whatif}},
    {"demo", cmd_demo, "generate the embedded demo job and analyse it", {&cli_spec_demo}},
    {"help", cmd_help, "this text; `longpole help TOPIC` for a command or topic", {&cli_spec_help}},
    {NULL, NULL, NULL, {NULL}},
};
