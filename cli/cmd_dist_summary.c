/* cmd_dist_summary.c: `mpirun -n K longpole dist summary [--stats] ...`: SnailTrail's
 * summaries with the windows split over the ranks (docs/distributed.md). Same options,
 * inputs and output as `longpole summary` (cmd_summary.c runs it, calling the hooks
 * here, summary.h, with the shard dshard_run gives it): every rank loads the trace and
 * plans the whole grid, analyses the windows k with k mod K = its rank, and packs their
 * results (lp_winres_pack); rank 0 gathers the packed results and prints them, and the
 * totals, in index order, so its output is byte-identical to `summary`'s (the results
 * are copied bit for bit and added to the totals in the same order). What moves: one
 * gather of every rank's packed windows (about 100 bytes plus 60 per summary row per
 * window). */
#include "summary.h"
#include "dshard.h"

int cli_sumdist_mine(const dshard *s, uint64_t k) { return lp_wingrid_part(k, (uint64_t)s->size) == (uint64_t)s->rank; }

int cli_sumdist_keep(dshard *s, const lp_winres *r)
{
    lp_error err;
    return lp_winres_pack(r, &s->buf, &s->len, &s->cap, &err) ? -1 : 0;
}

int cli_sumdist_same(dshard *s, const lp_trace *t)
{
    uint64_t h = dshard_mix(dshard_mix(dshard_mix(0, t->nworkers), t->nacts), t->nmsgs);
    h = dshard_mix(dshard_mix(h, (uint64_t)t->tmin), (uint64_t)t->tmax);
    return dshard_same(s, h, "workers, activities, messages or extent");
}

/* Rank 0: the gathered buffers unpacked in index order into fn. */
static lp_status replay(dshard *s, uint64_t n, const lp_sumkeys *keys, const lp_snapsrc *src, lp_winres_fn fn,
                        void *ctx, lp_error *err)
{
    lp_status st = LP_OK;
    lp_winres res;
    lp_winres_init(&res);
    for (uint64_t k = 0; !st && k < n; k++) {
        int p = (int)lp_wingrid_part(k, (uint64_t)s->size);
        if (!(st = lp_winres_unpack(&res, s->all + s->base[p], s->lens[p], &s->off[p], keys, src, err)) &&
            res.index != k)
            st = lp_error_set(err, LP_ERR_FORMAT, "rank %d sent window %llu where %llu was due", p,
                              (unsigned long long)res.index, (unsigned long long)k);
        if (!st && fn(ctx, &res))
            st = lp_error_set(err, LP_ERR_IO, "writing the output failed");
    }
    for (int r = 0; !st && r < s->size; r++)
        if (s->off[r] != s->lens[r])
            st = lp_error_set(err, LP_ERR_FORMAT, "rank %d sent %zu bytes more than its windows", r,
                              s->lens[r] - s->off[r]);
    lp_winres_release(&res);
    return st;
}

lp_status cli_sumdist_merge(dshard *s, lp_status st, uint64_t n, const lp_sumkeys *keys, const lp_snapsrc *src,
                            lp_winres_fn fn, void *ctx, lp_error *err)
{
    if ((st = dshard_settle(s, st, err)))
        return st;
    st = dshard_gather(s, err);
    return !st && dshard_root(s) ? replay(s, n, keys, src, fn, ctx, err) : st;
}

int cli_dist_summary(cli_dist *D, int argc, char **argv)
{
    return dshard_run(D, "summary", cli_summary_main, argc, argv);
}
