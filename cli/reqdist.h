/* reqdist.h: `requests` over the ranks of a communicator (`longpole dist requests`,
 * cmd_dist_requests.c; docs/distributed.md). A NULL shard = one process. Every rank
 * loads every log (same segments, same skew correction); without --model the model is
 * inferred as `dist infer` does (infdist.h); each rank computes the critical paths of
 * its contiguous share of the requests (lp_reqstats opts part/nparts), and the gather
 * hook hands rank 0 every share's rows and sums, from which it aggregates and prints
 * exactly what `requests` does. */
#ifndef LP_CLI_REQDIST_H
#define LP_CLI_REQDIST_H

#include "cli.h"
#include "longpole/analysis/mystery/reqstats.h"

struct dshard;
int cli_requests_main(int argc, char **argv, struct dshard *sh);
/* The lp_reqstats gather hook (ctx: the dshard): every rank, after its share's paths. */
lp_status cli_reqdist_gather(void *ctx, lp_reqstats_part *p, lp_status st, int *go_on, lp_error *err);

#endif
