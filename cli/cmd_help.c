/* cmd_help.c: `longpole help [TOPIC]`: the overview (from the command table), each
 * command's help (its usage and prose with the option lines generated from its option
 * tables, kept in the command's own file: opt.h), the formats and the exit statuses.
 * Each analysis names the paper section it follows; the long form is in docs/. */
#include "cli.h"
#include "longpole/record/record.h"

#include <string.h>

static const char formats[] =
    "Trace formats (docs/formats/):\n"
     "  lpt    native text, MODEL.md version 1 (W, A, M, S, R records; %XX escapes)\n"
     "  lptb   native binary: the columns of a loaded trace, checksummed (lptb.md)\n"
     "Compressed input (gzip, zstd) is recognised by content and read transparently.\n";

static const char exit_codes[] =
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
     "  8   an index file (`longpole index`) is stale (its traces changed since) or foreign\n"
     "      (built from other traces, with another clock option, or not an index)\n"
     "  9   the input, or the window chosen with --from/--to, holds no activity: there\n"
     "      is nothing to analyse (never a critical path of 0)\n"
     "  70  internal error\n"
     "record, monitor: the recorded command's own status (128+N if signal N ended it), or\n"
     "  125 the recording failed (directory, a named source that cannot run or failed)\n"
     "  126 the command cannot be executed\n"
     "  127 the command was not found\n"
     "  (2 for a bad command line, before anything runs)\n";

int cli_help_topic(FILE *out, const char *name)
{
    if (!name) {
        fputs("longpole: find what actually made a distributed system slow (its critical path).\n\n"
              "usage: longpole COMMAND [OPTIONS] TRACE...\n\ncommands:\n", out);
        for (const cli_command *c = cli_commands; c->name; c++)
            fprintf(out, "  %-10s %s\n", c->name, c->summary);
        fputs("\nhelp topics: any command, formats, exit-codes (`longpole help TOPIC`)\n"
              "TRACE is a native text or binary trace or a supported foreign format, plain or\n"
              "gzip/zstd-compressed; several files are merged into one trace. Docs: docs/.\n", out);
        return 0;
    }
    if (strcmp(name, "formats") == 0) {
        fputs(formats, out);
        for (const lp_importer *const *imp = lp_importers(); *imp; imp++)
            fprintf(out, "  %-8s %s\n", (*imp)->name, (*imp)->description);
        return 0;
    }
    if (strcmp(name, "exit-codes") == 0) {
        fputs(exit_codes, out);
        return 0;
    }
    for (const cli_command *c = cli_commands; c->name; c++)
        if (strcmp(c->name, name) == 0) {
            cli_command_help(out, c);
            return 0;
        }
    return -1;
}

void cli_command_help(FILE *out, const cli_command *c)
{
    for (int k = 0; k < 4 && c->specs[k]; k++)
        cli_spec_print(out, c->specs[k]);
    if (c->run == cmd_dist)
        cli_dist_help(out);
    if (c->run == cmd_record) {
        fputs("\nsources of this build (* = run by default when it can run here):\n", out);
        for (const lp_rec_source *const *s = lp_rec_sources(); *s; s++) {
            /* the description wrapped at 88 columns, under the name */
            const char *d = (*s)->description;
            fprintf(out, "  %-8s %c", (*s)->name, (*s)->by_default ? '*' : ' ');
            while (*d) {
                size_t n = strlen(d), cut = n;
                if (n > 86) {
                    cut = 86;
                    while (cut > 0 && d[cut] != ' ')
                        cut--;
                    if (!cut)
                        cut = 86;
                }
                fprintf(out, " %.*s\n", (int)cut, d);
                d += cut;
                while (*d == ' ')
                    d++;
                if (*d)
                    fputs("            ", out);
            }
        }
    }
}

const cli_spec cli_spec_help = {
    .cmd = "help",
    .usage = "usage: longpole help [TOPIC]\n",
    .groups = {{NULL, NULL, 0, 0}},
};

int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        cli_help_topic(stdout, NULL);
        return LP_EXIT_OK;
    }
    if (cli_help_topic(stdout, argv[1])) {
        fprintf(stderr, "longpole help: no topic '%s'\n\n", argv[1]);
        cli_help_topic(stderr, NULL);
        return LP_EXIT_USAGE;
    }
    return LP_EXIT_OK;
}
