/* cmd_dist.c: `mpirun -n K longpole dist [--stats] ANALYSIS ...`: an analysis spread
 * over the ranks of an MPI job (docs/distributed.md; issue 14). Rank 0 prints exactly
 * what the single-process command prints; --stats adds, on stderr, the messages, bytes
 * and CPU seconds of every rank. Run alone (not under mpirun), it is one rank.
 * The subcommands are one table here; each is a file cli/cmd_dist_NAME.c.
 * NOTE for the merge: the transport's branch (`dist`) owns this file's final form;
 * the sharded analyses need only their lines in `subs`. */
#include "dshard.h"

#include <string.h>

static const struct {
    const char *name;
    int (*run)(lp_dist *d, int argc, char **argv); /* argv[0] is the analysis' name; --stats first if given */
} subs[] = {
    {"summary", cmd_dist_summary},
    {"infer", cmd_dist_infer},
    {"spans", cmd_dist_spans},
};

typedef struct dist_args {
    int stats;
} dist_args;

static const cli_opt dist_opts[] = {
    {"--stats", .kind = CLI_FLAG, CLI_AT(dist_args, stats),
     .help = "print on stderr what each rank sent and received (messages,\nbytes) and its CPU seconds"},
    CLI_END,
};

const cli_spec cli_spec_dist = {
    .cmd = "dist",
    .usage = "usage: longpole dist [--stats] summary|infer|spans ARGS...   (under mpirun -n K)\n",
    .about = "Runs an analysis over the K ranks of an MPI job (Open MPI's mpirun; alone, one rank):\n"
             "ARGS are the analysis' own options and inputs, and rank 0 prints exactly what\n"
             "`longpole summary`, `infer` or `spans` would. summary: each rank analyses the windows\n"
             "k with k mod K = its rank, rank 0 merges them in order; infer: each rank rejects\n"
             "hypotheses on its share of the requests, the surviving relations are ANDed (MPI_BAND);\n"
             "spans: each rank walks the traces t with t mod K = its rank, rank 0 aggregates them.\n"
             "Details: docs/distributed.md.\n",
    .groups = {CLI_OWN("options:", dist_opts)},
    .size = sizeof(dist_args),
};

int cmd_dist(int argc, char **argv)
{
    int at = 1, stats = 0;
    if (argc > 1 && strcmp(argv[1], "--stats") == 0)
        at = 2, stats = 1;
    for (size_t i = 0; at < argc && i < sizeof subs / sizeof subs[0]; i++) {
        if (strcmp(argv[at], subs[i].name) != 0)
            continue;
        if (stats) /* the analysis sees --stats first: dist summary --stats ... */
            argv[1] = argv[2], argv[2] = (char *)"--stats";
        lp_dist *d;
        lp_error err;
        lp_error_clear(&err);
        if (lp_dist_open(&d, &err))
            return cli_fail("dist", &err);
        int rc = subs[i].run(d, argc - 1, argv + 1);
        fflush(stdout);
        lp_dist_close(d);
        return rc;
    }
    dist_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_dist, argc, argv, &a, &rest);
    if (rc)
        return rc;
    cli_args_release(&cli_spec_dist, &a, &rest);
    if (!rest.n)
        return cli_usage("dist", "which analysis? (summary, infer or spans)");
    return cli_usage("dist", "unknown analysis '%s' (summary, infer or spans)", rest.operands[0]);
}
