/* cmd_convert.c: `longpole convert`: any readable trace to native text or binary,
 * optionally compressed (by the output name: .gz, .zst). */
#include "cli.h"

#include <string.h>

const char cli_help_convert[] =
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
     "reader are not written (they are derived).\n";

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

int cmd_convert(int argc, char **argv)
{
    cli_load lo = {0};
    const char *out = NULL, *to = NULL;
    char **paths = lp_malloc((size_t)argc * sizeof *paths);
    int npaths = 0;
    if (!paths)
        return LP_EXIT_NOMEM;
    for (int i = 1; i < argc; i++) {
        int lrc = cli_load_option("convert", argc, argv, &i, &lo);
        if (lrc < 0)
            return lp_free(paths), LP_EXIT_USAGE;
        if (lrc)
            continue;
        if (cli_opt(argc, argv, &i, "-o", &out) || cli_opt(argc, argv, &i, "--output", &out)) {
            if (!out)
                return lp_free(paths), cli_usage("convert", "-o needs a file name");
        } else if (cli_opt(argc, argv, &i, "--to", &to)) {
            if (!to || (strcmp(to, "lpt") && strcmp(to, "lptb")))
                return lp_free(paths), cli_usage("convert", "--to takes lpt or lptb");
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return lp_free(paths), cli_usage("convert", "unknown option '%s'", argv[i]);
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (!npaths)
        return lp_free(paths), cli_usage("convert", "no input given");
    if (!out)
        return lp_free(paths), cli_usage("convert", "no output given (-o FILE, or -o - for stdout)");
    lp_compression comp = LP_COMP_NONE;
    const char *base = out;
    char stripped[4096];
    if (ends_with(out, ".gz") || ends_with(out, ".zst")) {
        comp = ends_with(out, ".gz") ? LP_COMP_GZIP : LP_COMP_ZSTD;
        size_t n = strlen(out) - (comp == LP_COMP_GZIP ? 3 : 4);
        if (n >= sizeof stripped)
            n = sizeof stripped - 1;
        memcpy(stripped, out, n);
        stripped[n] = '\0';
        base = stripped;
    }
    int binary = to ? strcmp(to, "lptb") == 0 : ends_with(base, ".lptb");
    lp_trace *t = NULL;
    int data_errors = 0;
    int rc = cli_load_trace(&lo, paths, npaths, &t, &data_errors);
    lp_free(paths);
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
