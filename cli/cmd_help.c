/* cmd_help.c: `longpole help [TOPIC]`: the reference of every command, the formats and
 * the exit statuses. Each analysis names the paper section it follows; the long form is
 * in docs/. */
#include "cli.h"

#include <string.h>

typedef struct topic {
    const char *name;
    const char *text;
} topic;

static const char overview[] =
    "longpole: find what actually made a distributed system slow (its critical path).\n"
    "\n"
    "usage: longpole COMMAND [OPTIONS] TRACE...\n"
    "\n"
    "commands:\n"
    "  cp        whole-trace critical path, its breakdown, and the conventional profile\n"
    "  check     instrumentation checks (SnailTrail App. A.2) and format rules\n"
    "  convert   convert any readable trace to native text (.lpt) or binary (.lptb)\n"
    "  info      what a trace holds\n"
    "  generate  synthetic traces (a Flink-like dataflow job)\n"
    "  demo      generate the embedded demo job and analyse it\n"
    "  help      this text; `longpole help TOPIC` for a command, `formats`, `exit-codes`\n"
    "\n"
    "TRACE is a native text or binary trace, plain or gzip/zstd-compressed; several files\n"
    "are merged into one trace (worker names are shared). Docs: docs/ in the source tree.\n";

static const topic topics[] = {
    {"cp",
     "usage: longpole cp [OPTIONS] TRACE...\n"
     "\n"
     "The whole-trace critical path (classic CPA; SnailTrail §2, Definition 4; MODEL.md\n"
     "\"Critical paths\"): the longest path of the program activity graph that ends at the\n"
     "trace's last event and uses no `waiting` edge. Printed as activities (worker, type,\n"
     "operator, start, end, duration) and messages (sender -> receiver), with its total,\n"
     "then broken down by activity type, worker and operator next to the conventional\n"
     "profile (the plain sum of durations by the same keys, SnailTrail §3.3): what a\n"
     "profiler would have blamed instead. Times are printed in ns after the trace start.\n"
     "\n"
     "options:\n"
     "  --json            one JSON document (schema: docs/formats/cp-json.md)\n"
     "  --from T --to T   restrict to an interval (projection, SnailTrail Def. 5-6); T is ns,\n"
     "                    or a number with ns/us/ms/s/m/h; +T means T after the trace start\n"
     "  --path N|all      path rows to print (default 40: the first and last 20)\n"
     "  --top N           rows per breakdown (default 10, 0 = all)\n"
     "  --format F        force the input format (lpt, lptb, or an importer's name)\n"
     "  --strict          stop if the input has errors (default: skip bad records, analyse\n"
     "                    the rest, exit 4)\n"
     "  --max-errors N    diagnostics printed in full (default 20); -q prints only counts\n"
     "\n"
     "ties: the latest end vertex, then the path reaching back furthest, then the lowest\n"
     "worker; at a vertex the worker's own activity beats a message of equal reach, and the\n"
     "message listed first in the trace beats later ones (docs/analyses/critical-path.md).\n"},
    {"check",
     "usage: longpole check [--json] [--from T --to T] [--top N] TRACE...\n"
     "\n"
     "Instrumentation requirements of SnailTrail App. A.2, without which critical paths are\n"
     "ill-defined:\n"
     "  Property 1: every event after the start has an incoming edge (a worker that starts\n"
     "              later with no message received at that instant is reported);\n"
     "  Property 2: never are all active workers waiting while no message is in flight\n"
     "              (reported as maximal intervals, with the waiting workers).\n"
     "Also reports every format-rule diagnostic of the input (MODEL.md rules).\n"
     "exit status: 0 clean, 1 not clean, >= 2 the trace could not be checked.\n"},
    {"convert",
     "usage: longpole convert [OPTIONS] INPUT... -o OUTPUT\n"
     "\n"
     "Read any supported trace (native text or binary, compressed or not, or a foreign\n"
     "format) and write it as native text or binary. The output kind follows the name:\n"
     "*.lptb is binary, anything else text; a trailing .gz or .zst compresses it.\n"
     "  -o FILE        output (\"-\" = stdout)\n"
     "  --to lpt|lptb  force the output kind\n"
     "  --format F     force the input format\n"
     "  --strict       refuse input with errors\n"
     "Text written by longpole reads back to the same trace; gap activities filled by the\n"
     "reader are not written (they are derived).\n"},
    {"info", "usage: longpole info [--json] TRACE...\n\nCounts (workers, activities, gaps, messages), time extent and activity types.\n"},
    {"generate",
     "usage: longpole generate dataflow [OPTIONS] -o OUTPUT\n"
     "\n"
     "A Flink-like streaming job (docs/generators.md): operators in a chain, each run by\n"
     "parallel workers; sources read records at a rate; buffers are deserialized,\n"
     "processed, serialized and sent; credit-based flow control; periodic checkpoint\n"
     "barriers from a job manager. Deterministic for a given --seed.\n"
     "  --ops SPEC          name:parallelism[:cost_ns][:keyed|:rebalance],...\n"
     "                      (default source:4:200,flatmap:4:1000,count:4:600)\n"
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
     "  -o FILE             output; *.lptb binary, else text; .gz/.zst compress\n"},
    {"demo",
     "usage: longpole demo [--json]\n"
     "\n"
     "Generates the embedded demo job (4-4-4 source/flatmap/count, 2 s, one flatmap worker\n"
     "three times slower, 30% key skew), runs the critical path and the checks on it, and\n"
     "prints both. The same trace is `longpole generate dataflow --demo -o demo.lpt`.\n"},
    {"formats",
     "Trace formats (docs/formats/):\n"
     "  lpt    native text, MODEL.md version 1 (W, A, M, S, R records; %XX escapes)\n"
     "  lptb   native binary: the columns of a loaded trace, checksummed (lptb.md)\n"
     "Compressed input (gzip, zstd) is recognised by content and read transparently.\n"},
    {"exit-codes",
     "exit statuses:\n"
     "  0   success (check: the trace is clean)\n"
     "  1   check: the trace is not clean\n"
     "  2   bad command line\n"
     "  3   a file could not be opened, read or written\n"
     "  4   the input broke format rules: bad records were reported and skipped, the rest\n"
     "      was analysed and printed\n"
     "  5   the input is not a readable trace (unknown format, corrupt, checksum mismatch)\n"
     "  6   out of memory\n"
     "  7   a capacity limit was exceeded (e.g. 2^32 activities)\n"
     "  70  internal error\n"},
};

int cli_help_topic(FILE *out, const char *name)
{
    if (!name) {
        fputs(overview, out);
        return 0;
    }
    for (size_t i = 0; i < sizeof topics / sizeof topics[0]; i++)
        if (strcmp(topics[i].name, name) == 0) {
            fputs(topics[i].text, out);
            return 0;
        }
    return -1;
}

int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        cli_help_topic(stdout, NULL);
        return LP_EXIT_OK;
    }
    if (cli_help_topic(stdout, argv[1])) {
        fprintf(stderr, "longpole help: no topic '%s'\n", argv[1]);
        cli_help_topic(stderr, NULL);
        return LP_EXIT_USAGE;
    }
    return LP_EXIT_OK;
}
