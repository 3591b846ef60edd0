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
#include "base/hashmap.h"

enum { DK_AL1 = 0, DK_AL2, DK_AL3 };
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
int dk_host_is_mine(const dkcp *k, uint32_t h);

#endif
