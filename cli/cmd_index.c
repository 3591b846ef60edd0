/* cmd_index.c: `longpole index TRACE... -o F.lpkx`: the execution graph of kernel traces
 * (read, packets matched, clocks synchronised, built: kload.c) persisted as an index
 * (docs/formats/kindex.md) that `cp --thread --index F.lpkx` maps instead of reading the
 * traces again; with --check, an existing index is checked against the traces instead
 * (exit 0 if it would be used, 8 if stale or foreign, 5 if corrupt), every byte of it. */
#include "kcli.h"

typedef struct index_args {
    const char *out;
    int no_sync, quiet, check;
    uint64_t max_diags;
} index_args;

static const cli_opt index_opts[] = {
    {"-o", "--output", .kind = CLI_STR, .arg = "F.lpkx", CLI_AT(index_args, out), .err = "-o needs a file",
     .example = "t.lpkx", .help = "the index file to write (required)"},
    {"--no-sync", .kind = CLI_FLAG, CLI_AT(index_args, no_sync),
     .help = "keep every host's own clock (the index records it: queries must ask\nthe same)"},
    {"--check", .kind = CLI_FLAG, CLI_AT(index_args, check),
     .help = "do not write: check that F is the index of these traces as they are now\n"
             "(every byte, whatever its verification stamp F.verified says)"},
    {"-q", "--quiet", .kind = CLI_FLAG, CLI_AT(index_args, quiet), .help = "print only the counts of the input's diagnostics"},
    {"--max-errors", .kind = CLI_COUNT, .arg = "N", CLI_AT(index_args, max_diags), .err = "--max-errors needs a number",
     .example = "5", .help = "diagnostics printed in full (default 20)"},
    CLI_END,
};

const cli_spec cli_spec_index = {
    .cmd = "index",
    .usage = "usage: longpole index [OPTIONS] TRACE... -o F.lpkx\n",
    .about = "Persist the execution graph of kernel traces (LTTng CTF directories, ftrace text)\n"
             "in an index file: versioned, checksummed, with the identity of the trace files\n"
             "(paths, sizes, modification times) and the clock option it was built with\n"
             "(docs/formats/kindex.md; the precomputed graphs of the distributed critical\n"
             "path paper, §III-C). `longpole cp --thread T --index F.lpkx TRACE...` then maps\n"
             "it instead of reading the traces. An index whose traces changed since (stale),\n"
             "or that was built from other traces or with another clock option (foreign), is\n"
             "refused with exit status 8; a damaged one with 5.\n",
    .groups = {CLI_OWN("options:", index_opts)},
    .size = sizeof(index_args),
};

int cmd_index(int argc, char **argv)
{
    index_args a = {0};
    cli_args rest;
    int rc = cli_parse(&cli_spec_index, argc, argv, &a, &rest);
    if (rc)
        return rc;
    if (!rest.n || !a.out) {
        cli_args_release(&cli_spec_index, &a, &rest);
        return cli_usage("index", !rest.n ? "no kernel trace given" : "no index file given (-o F.lpkx)");
    }
    cli_kload lo = {a.no_sync, a.check ? a.out : NULL, a.quiet, (size_t)a.max_diags, 1}; /* --check: every byte */
    cli_kgraph k;
    if (a.check) {
        FILE *f = fopen(a.out, "rb");
        if (!f) {
            cli_args_release(&cli_spec_index, &a, &rest);
            fprintf(stderr, "longpole index: cannot open %s\n", a.out);
            return LP_EXIT_IO;
        }
        fclose(f);
    }
    rc = cli_kgraph_load("index", &lo, rest.operands, rest.n, &k);
    if (!rc && !a.check)
        rc = cli_kindex_write("index", &k, rest.operands, rest.n, a.out);
    cli_args_release(&cli_spec_index, &a, &rest);
    if (rc)
        return rc;
    const lp_kgraph *g = k.g;
    printf("%s: %s: %u hosts, %u workers, %u vertices, %u links, %llu unmatched packet keys%s\n", a.out,
           a.check ? "the index of these traces" : "written", g->nhosts, g->nworkers, g->nv, g->nlinks,
           (unsigned long long)g->npk, g->synced ? ", clocks synchronised" : ", each host's own clock");
    rc = k.diag_errors ? LP_EXIT_DATA : 0;
    cli_kgraph_release(&k);
    return rc;
}
