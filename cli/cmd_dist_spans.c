/* cmd_dist_spans.c: `mpirun -n K longpole dist spans [--stats] ...`: span critical
 * paths with the traces split over the ranks (docs/distributed.md). Same options,
 * inputs and output as `longpole spans` (cmd_spans.c runs it, calling the hooks here,
 * spandist.h, with the shard dshard_run gives it). Every rank loads every span file
 * (a trace's spans may come from several files, and the table numbers the traces),
 * walks the traces t with t mod K = its rank and packs their paths; rank 0 gathers
 * them and adds them to the aggregate and prints them in trace order, exactly as
 * `spans` does with the paths it computes itself, so the percentile tables (which
 * need every trace's values: the sets are the fastest traces) are exact. What moves:
 * one gather of the paths (about 100 bytes plus 20 per section and 12 per visited
 * span, per trace). */
#include "spandist.h"
#include "dshard.h"

int cli_spandist_same(dshard *s, const lp_spans *sp)
{
    uint64_t h = dshard_mix(dshard_mix(dshard_mix(0, sp->n), sp->ntraces), sp->nkept);
    return dshard_same(s, h, "spans or traces");
}

static lp_status walk_mine(dshard *s, const lp_spans *sp, uint32_t only, lp_error *err)
{
    lp_spancp cp;
    lp_spancp_init(&cp);
    lp_status st = LP_OK;
    for (uint32_t t = (uint32_t)s->rank; t < sp->ntraces && !st; t += (uint32_t)s->size)
        if (only == LP_SPAN_NONE || t == only)
            if (!(st = lp_spancp_trace(&cp, sp, t, err)))
                st = lp_spancp_pack(&cp, &s->buf, &s->len, &s->cap, err);
    lp_spancp_release(&cp);
    return st;
}

lp_status cli_spandist_walk(dshard *s, const lp_spans *sp, uint32_t only, lp_error *err)
{
    lp_status st = dshard_settle(s, walk_mine(s, sp, only, err), err);
    return st ? st : dshard_gather(s, err);
}

lp_status cli_spandist_next(dshard *s, const lp_spans *sp, uint32_t t, lp_spancp *cp, lp_error *err)
{
    int r = lp_dist_owner(t, s->size);
    lp_status st = lp_spancp_unpack(cp, s->all + s->base[r], s->lens[r], &s->off[r], sp->n, err);
    if (!st && cp->trace != t)
        st = lp_error_set(err, LP_ERR_FORMAT, "rank %d sent the path of trace %u where %u was due", r, cp->trace, t);
    return st;
}

int cli_dist_spans(cli_dist *D, int argc, char **argv) { return dshard_run(D, "spans", cli_spans_main, argc, argv); }
