/* dshard.h: what the sharded `longpole dist` commands (summary, infer, spans, requests:
 * cmd_dist_*.c) share, so that their shape lives once: the run (dshard_run: set up,
 * the single-process command's main with its hooks, the --stats block, release), the
 * communicator and the command's name, agreeing on failure so that no rank waits for
 * one that stopped (the failed rank is named with its inputs), the gather of every
 * rank's packed results at rank 0, and the distribution block of --stats (messages,
 * bytes and CPU seconds per rank) on stderr. A command's main takes a dshard (NULL:
 * one process) and passes it to its hooks (summary.h, infdist.h, spandist.h, reqdist.h). */
#ifndef LP_CLI_DSHARD_H
#define LP_CLI_DSHARD_H

#include "distcli.h"

typedef struct dshard { /* (struct tag: the hooks of summary.h, infdist.h, spandist.h name it) */
    cli_dist *D;
    lp_dist *d;
    const char *cmd;       /* "summary", "infer", "spans", "requests" */
    int rank, size;
    int stats;             /* --stats */
    char **inputs;         /* this rank's inputs (for the message of a failure) */
    int ninputs;
    uint8_t *buf;          /* this rank's packed results (dshard_gather sends them) */
    size_t len, cap;
    uint8_t *all;          /* rank 0 after dshard_gather: every rank's, in rank order: */
    size_t *lens, *base;   /*   rank r's are all[base[r] .. base[r] + lens[r]), */
    size_t *off;           /*   read up to base[r] + off[r] (the unpackers advance it) */
    uint64_t *words;       /* a command's own words (infer: the starting model's counts) */
    size_t nwords;
} dshard;

/* The sharded analyses (cmd_dist_NAME.c, one line each in dist_commands.c), and their
 * option tables: the single-process command's groups plus DSHARD_GROUP (cmd_NAME.c). */
int cli_dist_summary(cli_dist *D, int argc, char **argv);
int cli_dist_infer(cli_dist *D, int argc, char **argv);
int cli_dist_spans(cli_dist *D, int argc, char **argv);
int cli_dist_requests(cli_dist *D, int argc, char **argv);
extern const cli_spec cli_spec_dist_summary, cli_spec_dist_infer, cli_spec_dist_spans, cli_spec_dist_requests;

/* The options the sharded commands add (--stats), on a dshard_opt at member m of T. */
typedef struct dshard_opt {
    int stats;
} dshard_opt;
extern const cli_opt dshard_opts[];
#define DSHARD_GROUP(T, m) CLI_GROUP("distribution:", dshard_opts, T, m)

/* Every rank: run subcommand `cmd` (argv[0]) on D's communicator: main(argc, argv, s)
 * is the single-process command's main given the shard, then the --stats block
 * (dshard_stats), then what the shard holds is freed. Returns main's status. */
int dshard_run(cli_dist *D, const char *cmd, int (*main)(int argc, char **argv, dshard *s), int argc, char **argv);
/* Whether this is rank 0 (the one that prints). */
static inline int dshard_root(const dshard *s) { return s->rank == 0; }
/* Parse a command's arguments: sh NULL = one process (cli_parse), else the dist spec
 * on every rank (cli_dist_parse: only rank 0 prints a usage message). */
int dshard_parse(dshard *sh, const cli_spec *one, const cli_spec *dist, int argc, char **argv, void *args,
                 cli_args *a);

/* Every rank: rc is this rank's status (0 or an exit status). A failed rank says so,
 * naming itself and its inputs; the others name the first failed rank. Returns the
 * first failed rank's status (the same on every rank), or 0. */
int dshard_agree(dshard *s, int rc);
/* Every rank, after its share of the work (st: how it went here): dshard_agree on it.
 * Returns st when this rank failed, an error "another rank failed" when another did,
 * else LP_OK: the step after it may be a collective. */
lp_status dshard_settle(dshard *s, lp_status st, lp_error *err);
/* Every rank, after dshard_settle: gather every rank's buf[0 .. len) at rank 0 into
 * all, lens, base and off (zero). */
lp_status dshard_gather(dshard *s, lp_error *err);
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
