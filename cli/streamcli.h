/* streamcli.h: the parts of `longpole stream` beside its command (cmd_stream.c), each in
 * a file of its own so that dependencies go one way (cmd_stream.c uses them, they use
 * summary.h and never the command): what it prints beside summary's windows
 * (stream_print.c), the live web view of `stream --serve` (stream_serve.c) and the
 * replay writer `stream --emit` (stream_emit.c). */
#ifndef LP_CLI_STREAMCLI_H
#define LP_CLI_STREAMCLI_H

#include "summary.h"
#include "longpole/stream/stream.h"

/* The stream-window object printed after each window's summaries (JSON line). */
void cli_stream_winfo_json(FILE *f, const lp_winres *r, const lp_stream_winfo *wi);
/* The stream's totals at the end: text, or the "stream" JSON line (with "complete" and
 * "missing_records"); in text, when records are missing from the windows (late,
 * dropped), a plain statement that the results are incomplete. Returns 1 if so. */
int cli_stream_stats_print(const lp_stream *s, int json, double wall);
/* The counts of the diagnostics by rule (they were printed as they came). */
void cli_stream_diag_counts(const lp_diags *ds);

/* `stream --serve HOST:PORT`: start the live view (0, or an exit status after the
 * message), publish each window as it closes, and stop at the end (with the totals
 * when tot is not NULL). Without a start, publishing and stopping do nothing. */
int cli_stream_serve_start(const char *listen, const cli_sumfmt *fmt);
void cli_stream_serve_window(const lp_winres *r, const lp_stream_winfo *wi);
void cli_stream_serve_stop(cli_sumtotal *tot);

/* `stream --emit ... TRACE...` (argv as cmd_stream got it). */
int cli_stream_emit(int argc, char **argv);

#endif
