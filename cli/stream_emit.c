/* stream_emit.c: `longpole stream --emit`: the records of a trace in stream order (W
 * records, then every record at its time) as .lpt text or SnailTrail's binary log: a
 * replay file whose windows, fed back to `stream`, are `summary`'s (streamcli.h). */
#include "streamcli.h"
#include "longpole/import/snailtrail.h"

#include <errno.h>
#include <string.h>

typedef struct emit_args {
    cli_load load;
    int emit;              /* --emit: selects this form */
    int halves;
    const char *out;
    int format;            /* --emit-format: 0 lpt, 1 snailtrail */
} emit_args;

static const char *const emit_formats[] = {"lpt", "snailtrail", NULL};

static const cli_opt emit_opts[] = {
    {"--emit", .kind = CLI_FLAG, CLI_AT(emit_args, emit), .help = "write a replay (this form)"},
    {"--halves", .kind = CLI_FLAG, CLI_AT(emit_args, halves), .help = ".lpt with messages as S/R pairs"},
    {"--emit-format", .kind = CLI_CHOICE, .arg = "F", CLI_AT(emit_args, format), .choices = emit_formats,
     .err = "--emit-format takes lpt or snailtrail", .example = "snailtrail",
     .help = "lpt (default) or snailtrail (SnailTrail's binary log)"},
    {"-o", .kind = CLI_STR, .arg = "FILE", CLI_AT(emit_args, out), .err = "-o needs a file name", .example = "-",
     .help = "output (default: standard output)"},
    CLI_END,
};

const cli_spec cli_spec_stream_emit = {
    .cmd = "stream",
    .about = "--emit writes the records of TRACE in stream order (W records, then every record at\n"
             "its time) to standard output or -o FILE: .lpt text (--halves: messages as S/R\n"
             "pairs), or with --emit-format snailtrail SnailTrail's binary log. Feeding it back\n"
             "gives `summary`'s windows. Exit: 0, or 4 if the input had errors.\n",
    .groups = {CLI_OWN("--emit options:", emit_opts), CLI_LOAD_GROUPS(emit_args, load)},
    .unknown = "unknown option '%s' with --emit",
    .size = sizeof(emit_args),
};

int cli_stream_emit(int argc, char **argv)
{
    emit_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_stream_emit, argc, argv, &a, &rest);
    if (rc)
        return rc;
    lp_trace *t = NULL;
    int data_errors = 0;
    if (!rest.n)
        rc = cli_usage("stream", "--emit needs a trace");
    else
        rc = cli_load_trace(&a.load, rest.operands, rest.n, &t, &data_errors);
    cli_args_release(&cli_spec_stream_emit, &a, &rest);
    if (rc)
        return rc;
    FILE *f = a.out && strcmp(a.out, "-") ? fopen(a.out, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "longpole stream: cannot create '%s': %s\n", a.out, strerror(errno));
        lp_trace_free(t);
        return LP_EXIT_IO;
    }
    lp_error err;
    lp_error_clear(&err);
    lp_status st = a.format == 1 ? lp_st_write(t, f, &err) : lp_stream_write_lpt(t, f, a.halves, &err);
    int cl = f != stdout ? fclose(f) : fflush(f);
    lp_trace_free(t);
    if (st)
        return cli_fail("stream", &err);
    if (cl) {
        fprintf(stderr, "longpole stream: write error\n");
        return LP_EXIT_IO;
    }
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
