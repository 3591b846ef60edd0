/* spandist.h: `spans` over the ranks of a communicator (`longpole dist spans`,
 * cmd_dist_spans.c; docs/distributed.md). A NULL shard = one process. Every rank
 * loads every span file (the same table, the same trace numbers), walks the traces t
 * with t mod K = its rank and packs their paths (lp_spancp_pack); rank 0 gathers them
 * and aggregates and prints them in trace order, as `spans` does. */
#ifndef LP_CLI_SPANDIST_H
#define LP_CLI_SPANDIST_H

#include "cli.h"
#include "longpole/model/span.h"
#include "longpole/analysis/spans/spancp.h"

struct dshard;
int cli_spans_main(int argc, char **argv, struct dshard *sh);
/* Every rank, after loading: whether all ranks loaded the same table (dshard_same). */
int cli_spandist_same(struct dshard *s, const lp_spans *sp);
/* Every rank: walk this rank's traces (only `only` if it is not LP_SPAN_NONE), agree
 * on failure, gather the paths at rank 0. */
lp_status cli_spandist_walk(struct dshard *s, const lp_spans *sp, uint32_t only, lp_error *err);
/* Rank 0, after the walk, for t in increasing order: the path of trace t into cp. */
lp_status cli_spandist_next(struct dshard *s, const lp_spans *sp, uint32_t t, lp_spancp *cp, lp_error *err);

#endif
