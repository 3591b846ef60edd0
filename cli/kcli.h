/* kcli.h: what the kernel-trace commands share (`cp --thread`, `index`): getting the
 * execution graph of kernel traces (read, match packets, synchronise clocks, build; or
 * map a persisted index checked against the traces), with everything the readers and
 * the build adjusted kept for the output, and printing the answer of a thread query
 * (text, JSON, HTML report, Chrome export).
 *
 * Invariants: a cli_kgraph holds a graph (g) whenever cli_kgraph_load returned 0; when
 * it came from an index, `from_index` is set and the per-host reader figures and the
 * clocks' bounds are absent (nhosts_read == 0, have_match == 0): the output says so
 * instead of printing zeros. */
#ifndef LP_CLI_KCLI_H
#define LP_CLI_KCLI_H

#include "cli.h"
#include "longpole/import/kernel.h"
#include "longpole/analysis/kernel/kgraph.h"
#include "longpole/analysis/kernel/kcpath.h"
#include "longpole/analysis/kernel/kindex.h"

/* What the reader said about one host (copied before the events are freed). */
typedef struct cli_khost {
    const char *name, *source; /* in the graph's / the reader's strings: copied here */
    char *name_own, *source_own;
    uint64_t nev, nreordered, nlost, nbad, nother, nsock, bytes;
    uint32_t ncpus, nstreams, nchunks;
} cli_khost;

typedef struct cli_kgraph {
    lp_kgraph *g;
    cli_khost *host;           /* [nhosts_read] */
    uint32_t nhosts_read;
    lp_kmatch m;               /* packets and clocks (have_match) */
    int have_match;
    int from_index;            /* g was mapped from an index file */
    int index_stamped;         /* ... whose verification stamp vouched for its checksum and invariants */
    int wrote_index;           /* the index named by --index did not exist: written */
    int no_sync;
    uint64_t diag_errors, diag_warnings;
} cli_kgraph;

/* How to get the graph. */
typedef struct cli_kload {
    int no_sync;               /* --no-sync */
    const char *index;         /* --index F: use it if it is the index of these traces,
                                  write it if it does not exist, refuse it otherwise */
    int quiet;
    size_t max_diags;
    int verify;                /* --verify: check every byte of the index whatever its stamp says */
} cli_kload;

/* Read `paths` (CTF directories, ftrace files) into a graph, or map the index. Prints
 * the diagnostics and errors to stderr (as "longpole CMD: ..."); returns 0 or an exit
 * status. */
int cli_kgraph_load(const char *cmd, const cli_kload *o, char **paths, int npaths, cli_kgraph *out);
void cli_kgraph_release(cli_kgraph *k);
/* Write the index of k's graph for `paths` to `file`; 0 or an exit status (message printed). */
int cli_kindex_write(const char *cmd, const cli_kgraph *k, char **paths, int npaths, const char *file);
/* Map the index `file` if it is the one of these traces with this clock option (their
 * fingerprint taken here): lp_kindex_open_info's status, verdict and info. For `cp
 * --thread --index` and each rank of `dist kcp --index`. */
lp_status cli_kindex_map(const char *file, char *const *paths, size_t npaths, int no_sync, int verify, lp_kgraph **g,
                         lp_kindex_verdict *v, lp_kindex_info *info, lp_error *err);
/* The exit status of an index that could not be mapped: stale or foreign 8, corrupt 5. */
int cli_kindex_exit(lp_kindex_verdict v, lp_status st);

/* A thread query and its answer. */
typedef struct cli_kquery {
    const char *thread, *host;
    lp_kcp_algo algo;
    int64_t from, to;          /* as asked (LP_KCP_LIFETIME_* when not given) */
    lp_kcp cp;
    lp_kcp_breakdown bd;
} cli_kquery;

typedef struct cli_kout {
    int json;
    uint64_t path_limit, top;  /* path rows (0: all), breakdown rows (0: all) */
    const char *html, *chrome; /* files to write, or NULL ("-": standard output) */
} cli_kout;

/* Find q->thread (on q->host), resolve --from/--to (may be NULL) against it, compute its
 * path (q->algo) and breakdown into q (cmd_kcp.c); 0 or an exit status (message printed
 * as "longpole CMD: ..."). */
int cli_kcp_query(const char *cmd, const char *from, const char *to, const cli_kgraph *k, cli_kquery *q);

/* Print the answer (kprint.c, kjson.c). */
void cli_kcp_text(const cli_kgraph *k, const cli_kquery *q, const cli_kout *o);
void cli_kcp_json(const cli_kgraph *k, const cli_kquery *q, const cli_kout *o);
/* The HTML report and the Chrome export of the graph with the thread's path marked
 * (kview.c); 0 or an exit status. */
int cli_kcp_views(const cli_kgraph *k, const cli_kquery *q, const cli_kout *o);

/* What building the graph adjusted or could not use, one entry per count: the JSON key
 * of `adjustments` and the phrase the HTML report shows for a non-zero count (kjson.c).
 * Returns the number of entries written to out (at most CLI_KADJ_MAX). */
#define CLI_KADJ_MAX 32
typedef struct cli_kadj {
    const char *key, *what;
    uint64_t v;
} cli_kadj;
size_t cli_kadjustments(const cli_kgraph *k, cli_kadj *out);

/* Shared by the printers: the clock quality's name, the host name of host h. */
const char *cli_kclock_quality(unsigned q);
/* Counts of the path's unexplained elements: all of them, and those that are network
 * waits (a packet from or to a host that was not traced, or not matched). */
void cli_kcp_unexplained(const lp_kcp *cp, uint64_t *n, uint64_t *nnet, int64_t *ns, int64_t *netns);

#endif
