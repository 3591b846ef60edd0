/* cmd_convert.c: `longpole convert`: any readable trace to native text or binary,
 * optionally compressed (by the output name: .gz, .zst). */
#include "cli.h"

#include <string.h>

typedef struct convert_args {
    cli_load load;
    const char *out;
    int to;                /* --to: -1 by the output's name, 0 lpt, 1 lptb */
} convert_args;

static void convert_init(void *p) { ((convert_args *)p)->to = -1; }

static const char *const out_kinds[] = {"lpt", "lptb", NULL};

static const cli_opt convert_opts[] = {
    {"-o", "--output", .kind = CLI_STR, .arg = "FILE", CLI_AT(convert_args, out), .err = "-o needs a file name",
     .example = "-", .help = "output (\"-\" = stdout)"},
    {"--to", .kind = CLI_CHOICE, .arg = "lpt|lptb", CLI_AT(convert_args, to), .choices = out_kinds,
     .err = "--to takes lpt or lptb", .example = "lptb", .help = "force the output kind"},
    CLI_END,
};

const cli_spec cli_spec_convert = {
    .cmd = "convert",
    .usage = "usage: longpole convert [OPTIONS] INPUT... -o OUTPUT\n",
    .about = "Read any supported trace (native text or binary, compressed or not, or a foreign\n"
             "format) and write it as native text or binary. The output kind follows the name:\n"
             "*.lptb is binary, anything else text; a trailing .gz or .zst compresses it.\n",
    .groups = {CLI_OWN("options:", convert_opts), CLI_LOAD_GROUPS(convert_args, load)},
    .notes = "Text written by longpole reads back to the same trace; gap activities filled by the\n"
             "reader are not written (they are derived).\n",
    .size = sizeof(convert_args),
    .init = convert_init,
};

int cmd_convert(int argc, char **argv)
{
    convert_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_convert, argc, argv, &a, &rest);
    if (rc)
        return rc;
    if (!rest.n)
        rc = cli_usage("convert", "no input given");
    else if (!a.out)
        rc = cli_usage("convert", "no output given (-o FILE, or -o - for stdout)");
    if (rc) {
        cli_args_release(&cli_spec_convert, &a, &rest);
        return rc;
    }
    const char *out = a.out;
    lp_compression comp;
    int binary = cli_output_kind(out, a.to, &comp);
    lp_trace *t = NULL;
    int data_errors = 0;
    rc = cli_load_trace(&a.load, rest.operands, rest.n, &t, &data_errors);
    cli_args_release(&cli_spec_convert, &a, &rest);
    if (rc)
        return rc;
    lp_error err;
    lp_error_clear(&err);
    cli_progress_items("writing", 0, 0); /* issue 6 */
    lp_status st = lp_trace_save(t, out, binary, comp, &err);
    cli_progress_done(); /* issue 6 */
    lp_trace_free(t);
    if (st)
        return cli_fail("convert", &err);
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
