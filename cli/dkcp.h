/* dkcp.h: `longpole dist kcp` shared between its files (cmd_dist_kcp.c: options, AL1,
 * output; dkcp_setup.c: reading, ECIs, merge, per-host graphs; dkcp_query.c: the path
 * and the requests of AL2/AL3). docs/distributed.md says what moves and why the answer
 * equals `cp --thread`'s.
 *
 * Invariants: host i of the command line is host i everywhere (the graph's host index)
 * and is owned by rank i mod K; `own` holds the events of this rank's hosts only and `own_g`
 * their graph; `parts` (rank 0) the graph parts of the hosts fetched so far (have[h]); the match `m` is the one of the
 * whole traces on every rank once the set-up is done.
 */
#ifndef LP_CLI_DKCP_H
#define LP_CLI_DKCP_H

#include "distcli.h"
#include "kcli.h"
#include "longpole/dist/keci.h"
#include "longpole/dist/dkidx.h"
#include "base/hashmap.h"

enum { DK_AL1 = 0, DK_AL2, DK_AL3 };
/* What a rank did with --index: none; mapped its graph; built and wrote it (absent);
 * rebuilt and rewrote it (built with another match: another host's trace changed). */
enum { DK_IDX_NONE = 0, DK_IDX_USED, DK_IDX_WRITTEN, DK_IDX_REBUILT, DK_IDX_OPEN };
enum { DK_T_HOST = 1, DK_T_KEY = 2, DK_T_DATA = 3, DK_T_DONE = 4 }; /* message tags */

typedef struct dk_totals {   /* the whole graph's figures, summed over the ranks */
    uint64_t nworkers, nv, nlinks, npk, diag_errors, diag_warnings;
    lp_kgraph_stats st;
} dk_totals;

typedef struct dkcp {
    cli_dist *D;
    char **paths;
    uint32_t nh;
    int algo, no_sync, quiet;
    const char *thread, *host;
    /* --index DIR (dkcp_index.c): this rank's persisted graph and its sidecar */
    const char *index_dir;
    int verify;
    int idx;                 /* DK_IDX_*: what this rank did with its index */
    char *idx_path;          /* DIR/rankR-of-K.lpkx */
    lp_kgraph *idx_g;        /* mapped and checked against this rank's traces */
    lp_dkidx side;           /* its sidecar (ECIs, packet-end vertices, counts, digest) */
    lp_dbuf eci;             /* the ECIs sent (kept to be written with a new index) */
    uint64_t digest;         /* of the match and options this query's graphs are built with */
    uint64_t build_errors, build_warnings;
    /* every rank */
    lp_ktrace *own;          /* [nh] hosts: this rank's with their events */
    lp_hmap keys;            /* AL2: lp_keci_key of this rank's sends -> host */
    uint8_t *sent;           /* [nh] hosts this rank has sent to rank 0 */
    lp_kmatch m;
    int have_m;
    lp_kgraph *own_g;        /* the graph of this rank's hosts (a partial build) */
    uint32_t *own_sv, *own_tv; /* [m.npk] its packets' send and target vertices */
    uint64_t read_errors, read_warnings;
    uint64_t nserved;        /* requests this rank answered */
    double cpu_eci;          /* CPU seconds making (and at rank 0 merging) the ECIs */
    /* rank 0 */
    lp_ktrace *skel;         /* [nh] the ECIs */
    uint64_t **orig, *nev_read;
    uint8_t *verdict;        /* [nh] 0 no such thread, 1 found, 2 ambiguous there */
    dk_totals tot;
    lp_dbuf *parts;          /* [nh] graph parts of the hosts fetched (have[h]) */
    uint8_t *have;
    uint64_t *req_to;        /* [size] requests sent to each rank */
    uint64_t ndeps, nrounds, nfetched;
} dkcp;

int dk_setup(dkcp *k);                   /* every rank; 0 or the agreed exit status */
int dk_query(dkcp *k, cli_kquery *q, const char *from, const char *to, lp_kgraph **g); /* rank 0 */
int dk_serve(dkcp *k);                   /* ranks > 0: answer requests until DONE */
void dk_release(dkcp *k);
/* --index (dkcp_index.c). dk_idx_open: -1 no index file (build and write it), 0 mapped
 * (k->idx_g, k->side), else the exit status (message printed). dk_idx_own: this rank's
 * hosts' names and AL2 keys from the sidecar's ECIs. dk_idx_write: the index of this
 * rank's graph and its sidecar. */
int dk_idx_open(dkcp *k);
int dk_idx_own(dkcp *k);
int dk_idx_write(dkcp *k, const lp_kgraph *g, const uint32_t *sv, const uint32_t *tv);
int dk_index_keys(dkcp *k, const lp_ktrace *kt);
const char *dk_idx_name(int idx);
int dk_host_is_mine(const dkcp *k, uint32_t h);

#endif
