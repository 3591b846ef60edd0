/* cmd_dist_summary.c: `mpirun -n K longpole dist summary [--stats] ...`: SnailTrail's
 * summaries with the windows split over the ranks (docs/distributed.md). Same options,
 * inputs and output as `longpole summary` (cmd_summary.c runs it, calling the hooks
 * here, summary.h): every rank loads the trace and plans the whole grid, analyses the
 * windows k with k mod K = its rank, and packs their results (lp_winres_pack); rank 0
 * gathers the packed results and prints them, and the totals, in index order, so its
 * output is byte-identical to `summary`'s (the results are copied bit for bit and
 * added to the totals in the same order). What moves: one gather of every rank's
 * packed windows (about 100 bytes plus 60 per summary row per window). */
#include "summary.h"
#include "dshard.h"

#include <string.h>

struct cli_sumdist {
    dshard s;
    uint8_t *buf;            /* this rank's packed windows */
    size_t len, cap;
};

int cli_sumdist_mine(const cli_sumdist *sd, uint64_t k) { return lp_wingrid_part(k, (uint64_t)sd->s.size) == (uint64_t)sd->s.rank; }

dshard *cli_sumdist_shard(cli_sumdist *sd) { return sd ? &sd->s : NULL; }

int cli_sumdist_root(const cli_sumdist *sd) { return sd->s.rank == 0; }

int cli_sumdist_keep(cli_sumdist *sd, const lp_winres *r)
{
    lp_error err;
    return lp_winres_pack(r, &sd->buf, &sd->len, &sd->cap, &err) ? -1 : 0;
}

int cli_sumdist_agree(cli_sumdist *sd, int rc) { return dshard_agree(&sd->s, rc); }

int cli_sumdist_same(cli_sumdist *sd, const lp_trace *t)
{
    uint64_t h = dshard_mix(dshard_mix(dshard_mix(0, t->nworkers), t->nacts), t->nmsgs);
    h = dshard_mix(dshard_mix(h, (uint64_t)t->tmin), (uint64_t)t->tmax);
    return dshard_same(&sd->s, h, "workers, activities, messages or extent");
}

/* Rank 0: the gathered buffers (all, lens[size]) unpacked in index order into fn. */
static lp_status replay(cli_sumdist *sd, const uint8_t *all, const size_t *lens, uint64_t n, const lp_sumkeys *keys,
                        const lp_snapsrc *src, lp_winres_fn fn, void *ctx, lp_error *err)
{
    int K = sd->s.size;
    size_t *off = lp_calloc((size_t)K, sizeof *off), *base = lp_calloc((size_t)K, sizeof *base);
    lp_status st = off && base ? LP_OK : lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (int r = 1; !st && r < K; r++)
        base[r] = base[r - 1] + lens[r - 1];
    lp_winres res;
    lp_winres_init(&res);
    for (uint64_t k = 0; !st && k < n; k++) {
        int p = (int)lp_wingrid_part(k, (uint64_t)K);
        if (!(st = lp_winres_unpack(&res, all + base[p], lens[p], &off[p], keys, src, err)) && res.index != k)
            st = lp_error_set(err, LP_ERR_FORMAT, "rank %d sent window %llu where %llu was due", p,
                              (unsigned long long)res.index, (unsigned long long)k);
        if (!st && fn(ctx, &res))
            st = lp_error_set(err, LP_ERR_IO, "writing the output failed");
    }
    for (int r = 0; !st && r < K; r++)
        if (off[r] != lens[r])
            st = lp_error_set(err, LP_ERR_FORMAT, "rank %d sent %zu bytes more than its windows", r, lens[r] - off[r]);
    lp_winres_release(&res);
    lp_free(off);
    lp_free(base);
    return st;
}

lp_status cli_sumdist_merge(cli_sumdist *sd, lp_status st, uint64_t n, const lp_sumkeys *keys,
                            const lp_snapsrc *src, lp_winres_fn fn, void *ctx, lp_error *err)
{
    int first = dshard_agree(&sd->s, st ? cli_exit_for(st) : 0);
    if (st)
        return st;
    if (first)
        return lp_error_set(err, LP_ERR_IO, "another rank failed");
    void *all = NULL;
    size_t *lens = lp_calloc((size_t)sd->s.size, sizeof *lens);
    if (!lens) /* the gather must still happen: send nothing */
        sd->len = 0;
    size_t dummy[1];
    st = lp_dist_gather(sd->s.d, 0, sd->buf, sd->len, &all, lens ? lens : dummy, err);
    if (!st && sd->s.rank == 0)
        st = lens ? replay(sd, all, lens, n, keys, src, fn, ctx, err) : lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_free(all);
    lp_free(lens);
    return st;
}

int cli_dist_summary(cli_dist *D, int argc, char **argv)
{
    cli_sumdist sd;
    memset(&sd, 0, sizeof sd);
    dshard_init(&sd.s, D, "summary", argc, argv);
    int rc = cli_summary_main(argc, argv, &sd);
    dshard_stats(&sd.s);
    lp_free(sd.buf);
    return rc;
}
