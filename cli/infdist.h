/* infdist.h: `infer` over the ranks of a communicator (`longpole dist infer`,
 * cmd_dist_infer.c; docs/distributed.md). A NULL shard = one process. Every rank
 * loads every log (same segments, same skew correction), refines the model with its
 * contiguous share of the requests, and the models' state words are combined by an
 * AND (relations) and a SUM (counts) allreduce; pipeline candidates are checked per
 * share and their rejections summed. Only rank 0 writes the model and prints. */
#ifndef LP_CLI_INFDIST_H
#define LP_CLI_INFDIST_H

#include "cli.h"
#include "longpole/analysis/mystery/causal.h"

struct dshard;
int cli_infer_main(int argc, char **argv, struct dshard *sh);
/* Every rank, after loading: whether all ranks loaded the same logs (dshard_same). */
int cli_infdist_same(struct dshard *s, const lp_reqlog *rl);
/* Every rank (s NULL: one process), after mapping (st: how that went): refine m with
 * this rank's share of the requests (cli_infdist_part, _start, lp_causal_refine,
 * _merge); returns the merged outcome. */
lp_status cli_infdist_refine(struct dshard *s, lp_status st, lp_causal *m, const lp_reqlog *rl, const uint32_t *map,
                             lp_causal_refine_opts *ro, lp_error *err);
/* Every rank: derive the pipelines of the merged model and reject those any rank's
 * requests contradict (lp_causal_finish over every request). */
lp_status cli_infdist_finish(struct dshard *s, lp_causal *m, const lp_reqlog *rl, const uint32_t *map, lp_error *err);

#endif
