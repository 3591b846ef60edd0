/* distcli.h: `longpole dist SUBCOMMAND ...` (cmd_dist.c): the analyses spread over the
 * ranks of an MPI job (docs/distributed.md). Rank 0 is the coordinator and the viewer:
 * it alone prints results; the other ranks print nothing unless they fail, and then a
 * message naming their rank (and the file). Without mpirun the job is one rank (the
 * "self" transport) and the result is the same.
 *
 * A subcommand is one file (cli/cmd_dist_NAME.c defining its run function and its
 * cli_spec, declared here) and one line in cli_dist_commands (dist_commands.c). Its run
 * function is called on every rank with the communicator already open; it returns the
 * exit status, the same on every rank (agree on it with cli_dist_agree before any step
 * other ranks depend on, so that a failing rank never leaves the others waiting).
 */
#ifndef LP_CLI_DISTCLI_H
#define LP_CLI_DISTCLI_H

#include "cli.h"
#include "longpole/dist/dist.h"

typedef struct cli_dist {
    lp_dist *d;
    int rank, size;
    const char *sub;   /* the subcommand's name ("kcp") */
} cli_dist;

typedef struct cli_dist_command {
    const char *name;
    int (*run)(cli_dist *D, int argc, char **argv); /* argv[0] is the subcommand's name */
    const char *summary;
    const cli_spec *spec;
} cli_dist_command;
extern const cli_dist_command cli_dist_commands[]; /* ends with a NULL name */

/* The subcommands (one line each in dist_commands.c). */
int cli_dist_kcp(cli_dist *D, int argc, char **argv);
extern const cli_spec cli_spec_dist_kcp;

/* Parse a subcommand's options on every rank; only rank 0 prints a usage message. */
int cli_dist_parse(cli_dist *D, const cli_spec *s, int argc, char **argv, void *args, cli_args *a);
/* Agree on failure: every rank passes its exit status (0 if fine); all get the status
 * of the first (lowest) rank that failed, and *who (may be NULL) that rank (-1: none).
 * A failed transport is LP_EXIT_INTERNAL (the message printed). */
int cli_dist_agree(cli_dist *D, int rc, int *who);
/* "longpole dist SUB: rank R: ..." on stderr (any rank). */
void cli_dist_err(const cli_dist *D, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_dist_fail(const cli_dist *D, const lp_error *err); /* cli_dist_err with err; returns its exit status */

#endif
