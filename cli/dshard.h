/* dshard.h: what the sharded `longpole dist` commands (summary, infer: cmd_dist_*.c)
 * share: the communicator and the command's name, agreeing on failure so that no rank
 * waits for one that stopped (the failed rank is named with its inputs), and the
 * distribution block of --stats (messages, bytes and CPU seconds per rank) on stderr. */
#ifndef LP_CLI_DSHARD_H
#define LP_CLI_DSHARD_H

#include "cli.h"
#include "longpole/dist/dist.h"

typedef struct dshard {
    lp_dist *d;
    const char *cmd;       /* "summary", "infer" */
    int rank, size;
    int stats;             /* --stats */
    char **inputs;         /* this rank's inputs (for the message of a failure) */
    int ninputs;
} dshard;

/* The sharded analyses (cmd_dist_NAME.c): argv[0] is the analysis' name, --stats
 * (if given) argv[1]. */
int cmd_dist_summary(lp_dist *d, int argc, char **argv);
int cmd_dist_infer(lp_dist *d, int argc, char **argv);
int cmd_dist_spans(lp_dist *d, int argc, char **argv);

/* Take --stats when it is the first argument (argv[1]); returns the new argc. */
int dshard_init(dshard *s, lp_dist *d, const char *cmd, int argc, char **argv);
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
