/* dshard.h: what the sharded `longpole dist` commands (summary, infer: cmd_dist_*.c)
 * share: the communicator and the command's name, agreeing on failure so that no rank
 * waits for one that stopped (the failed rank is named with its inputs), and the
 * distribution block of --stats (messages, bytes and CPU seconds per rank) on stderr. */
#ifndef LP_CLI_DSHARD_H
#define LP_CLI_DSHARD_H

#include "distcli.h"

typedef struct dshard { /* (struct tag: the hooks of summary.h, infdist.h, spandist.h name it) */
    cli_dist *D;
    lp_dist *d;
    const char *cmd;       /* "summary", "infer" */
    int rank, size;
    int stats;             /* --stats */
    char **inputs;         /* this rank's inputs (for the message of a failure) */
    int ninputs;
} dshard;

/* The sharded analyses (cmd_dist_NAME.c, one line each in dist_commands.c), and their
 * option tables: the single-process command's groups plus DSHARD_GROUP (cmd_NAME.c). */
int cli_dist_summary(cli_dist *D, int argc, char **argv);
int cli_dist_infer(cli_dist *D, int argc, char **argv);
int cli_dist_spans(cli_dist *D, int argc, char **argv);
extern const cli_spec cli_spec_dist_summary, cli_spec_dist_infer, cli_spec_dist_spans;

/* The options the sharded commands add (--stats), on a dshard_opt at member m of T. */
typedef struct dshard_opt {
    int stats;
} dshard_opt;
extern const cli_opt dshard_opts[];
#define DSHARD_GROUP(T, m) CLI_GROUP("distribution:", dshard_opts, T, m)

/* Set up for subcommand `cmd` on D's communicator. */
void dshard_init(dshard *s, cli_dist *D, const char *cmd, int argc, char **argv);
/* Parse a command's arguments: sh NULL = one process (cli_parse), else the dist spec
 * on every rank (cli_dist_parse: only rank 0 prints a usage message). */
int dshard_parse(dshard *sh, const cli_spec *one, const cli_spec *dist, int argc, char **argv, void *args,
                 cli_args *a);

/* Every rank: rc is this rank's status (0 or an exit status). A failed rank says so,
 * naming itself and its inputs; the others name the first failed rank. Returns the
 * first failed rank's status (the same on every rank), or 0. */
int dshard_agree(dshard *s, int rc);
/* Every rank, after loading: whether every rank loaded the same input (fingerprint: a
 * few counts of what was loaded, mixed; `what` says which counts). A rank whose
 * fingerprint differs from rank 0's says so, naming itself and its arguments, and every
 * rank gets LP_EXIT_DATA; 0 when all agree. */
int dshard_same(dshard *s, uint64_t fingerprint, const char *what);
/* Mix counts into a fingerprint. */
uint64_t dshard_mix(uint64_t h, uint64_t v);

/* Every rank: gather the counters and CPU seconds; rank 0 prints them on stderr with
 * --stats. */
void dshard_stats(dshard *s);

#endif
