/* cmd_dist.c: `longpole dist SUBCOMMAND ...` (distcli.h, docs/distributed.md): opens
 * the communicator (MPI under mpirun, else one rank), runs the subcommand on every rank,
 * closes it. Rank 0 alone prints results; the other ranks print only their failures,
 * naming their rank. A build without MPI refuses with "built without MPI" (exit 5, the
 * status of an unsupported input) when started by mpirun, and runs as one rank otherwise.
 */
#include "distcli.h"

#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

const cli_spec cli_spec_dist = {
    .cmd = "dist",
    .usage = "usage: longpole dist SUBCOMMAND [OPTIONS] INPUT...      (one rank)\n"
             "       mpirun -n K longpole dist SUBCOMMAND [OPTIONS] INPUT...\n",
    .about = "An analysis spread over the ranks of an Open MPI job: rank 0 coordinates and\n"
             "alone prints; the answer is the single-process command's, byte for byte\n"
             "(docs/distributed.md). Subcommands: kcp (a thread's critical path in kernel\n"
             "traces, one trace per host, host i read by rank i mod K: `cp --thread` spread\n"
             "over the hosts); summary, infer, requests, spans (SnailTrail windows, The Mystery\n"
             "Machine's inference and per-request paths, span paths: every rank reads the\n"
             "inputs, the work is split).\n",
    .notes = "`longpole help dist` prints every subcommand's options; `--stats` adds what moved\n"
             "between ranks (messages, bytes, requests, CPU seconds per rank, wall time).\n",
    .operands = CLI_OPERANDS,
};

void cli_dist_err(const cli_dist *D, const char *fmt, ...)
{
    /* one write per line: mpirun forwards each rank's stderr as it comes, so a line
     * written in pieces can be cut by another rank's */
    char line[2048];
    int n = snprintf(line, sizeof line, "longpole dist %s: rank %d: ", D->sub ? D->sub : "", D->rank);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof line - 1) {
        int r = vsnprintf(line + n, sizeof line - 1 - (size_t)n, fmt, ap);
        n = r < 0 ? n + snprintf(line + n, sizeof line - 1 - (size_t)n, "(unprintable message)") : n + r;
    }
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
    line[len++] = '\n';
    fwrite(line, 1, len, stderr);
}

int cli_dist_fail(const cli_dist *D, const lp_error *err)
{
    cli_dist_err(D, "%s", err->msg[0] ? err->msg : lp_status_str(err->status));
    return cli_exit_for(err->status);
}

int cli_dist_agree(cli_dist *D, int rc, int *who)
{
    /* one word, no allocation (a rank that could not take part would leave the others
     * waiting): a failed rank r offers (K - r) << 32 | its status, the others 0; the
     * largest is the first (lowest) failed rank's, with its status */
    int status = rc < 0 ? LP_EXIT_INTERNAL : rc;
    uint64_t w = status ? ((uint64_t)(D->size - D->rank) << 32) | (uint32_t)status : 0;
    int out = 0, first = -1;
    lp_error err;
    lp_error_clear(&err);
    if (lp_dist_allreduce_u64(D->d, &w, 1, LP_DIST_MAX, &err)) {
        cli_dist_fail(D, &err);
        out = LP_EXIT_INTERNAL;
    } else if (w) {
        first = D->size - (int)(w >> 32);
        out = (int)(uint32_t)w;
    }
    if (who)
        *who = first;
    return out;
}

int cli_dist_parse(cli_dist *D, const cli_spec *s, int argc, char **argv, void *args, cli_args *a)
{
    if (D->rank == 0)
        return cli_parse(s, argc, argv, args, a);
    /* the same parse on every rank: only rank 0 says what is wrong */
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0)
        dup2(null, 2);
    int rc = cli_parse(s, argc, argv, args, a);
    fflush(stderr);
    if (saved >= 0 && null >= 0)
        dup2(saved, 2);
    if (saved >= 0)
        close(saved);
    if (null >= 0)
        close(null);
    return rc;
}

static const cli_dist_command *find_sub(const char *name)
{
    for (const cli_dist_command *c = cli_dist_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

int cmd_dist(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage("dist", "no subcommand given (see `longpole help dist`)");
    const cli_dist_command *c = find_sub(argv[1]);
    if (!c)
        return cli_usage("dist", "unknown subcommand '%s' (see `longpole help dist`)", argv[1]);
    if (lp_dist_launched() && !lp_dist_have_mpi()) {
        fprintf(stderr, "longpole dist: built without MPI, but started by an MPI launcher: rebuild with "
                        "libopenmpi-dev installed (docs/distributed.md), or run without mpirun (one rank)\n");
        return LP_EXIT_FORMAT;
    }
    lp_error err;
    lp_error_clear(&err);
    cli_dist D = {NULL, 0, 1, c->name};
    if (lp_dist_open(&D.d, &err))
        return cli_fail("dist", &err);
    D.rank = lp_dist_rank(D.d), D.size = lp_dist_size(D.d);
    int rc = c->run(&D, argc - 1, argv + 1);
    fflush(stdout);
    lp_dist_close(D.d);
    return rc;
}

void cli_dist_help(FILE *out)
{
    for (const cli_dist_command *c = cli_dist_commands; c->name; c++)
        cli_spec_print(out, c->spec);
}
