/* cmd_dist_requests.c: `mpirun -n K longpole dist requests [--stats] ...`: the Mystery
 * Machine's per-request critical paths and slack with the requests split over the
 * ranks (docs/distributed.md). Same options, inputs and output as `longpole requests`
 * (cmd_requests.c runs it, calling the hook here, reqdist.h, with the shard dshard_run
 * gives it). Every rank loads every log; each computes the paths of its contiguous
 * share of the requests (pass 1 of lp_reqstats_run: the per-request columns and the
 * integer sums per segment and category) and packs them (lp_reqstats_part_pack); rank
 * 0 gathers the shares, puts each share's rows in place and adds its sums, and goes on
 * as `requests` does over every request (outliers, quantiles, what-if buckets, strata:
 * each needs every request's values, so these are exact). What moves: one gather of
 * 17 + 12 C bytes per request (C categories) and about 560 bytes per segment per rank. */
#include "reqdist.h"
#include "dshard.h"

lp_status cli_reqdist_gather(void *ctx, lp_reqstats_part *p, lp_status st, int *go_on, lp_error *err)
{
    dshard *s = ctx;
    *go_on = dshard_root(s);
    if (!st) /* this rank's share, packed before agreeing so that a failure here is agreed on too */
        st = lp_reqstats_part_pack(p, &s->buf, &s->len, &s->cap, err);
    if ((st = dshard_settle(s, st, err)) || (st = dshard_gather(s, err)) || !dshard_root(s))
        return st;
    for (int r = 1; r < s->size && !st; r++)
        st = lp_reqstats_part_add(p, s->all + s->base[r], s->lens[r], (uint64_t)r, err);
    return st;
}

int cli_dist_requests(cli_dist *D, int argc, char **argv)
{
    return dshard_run(D, "requests", cli_requests_main, argc, argv);
}
