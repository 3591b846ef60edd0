/* cmd_dist_spans.c: `mpirun -n K longpole dist spans [--stats] ...`: span critical
 * paths with the traces split over the ranks (docs/distributed.md). Same options,
 * inputs and output as `longpole spans` (cmd_spans.c runs it, calling the hooks here,
 * spandist.h). Every rank loads every span file (a trace's spans may come from several
 * files, and the table numbers the traces), walks the traces t with t mod K = its rank
 * and packs their paths; rank 0 gathers them and adds them to the aggregate and prints
 * them in trace order, exactly as `spans` does with the paths it computes itself, so
 * the percentile tables (which need every trace's values: the sets are the fastest
 * traces) are exact. What moves: one gather of the paths (about 100 bytes plus 20 per
 * section and 12 per visited span, per trace). */
#include "spandist.h"
#include "dshard.h"

#include <string.h>

struct cli_spandist {
    dshard s;
    uint8_t *buf;            /* this rank's packed paths */
    size_t len, cap;
    uint8_t *all;            /* rank 0: every rank's, in rank order */
    size_t *lens, *base, *off;
};

dshard *cli_spandist_shard(cli_spandist *sd) { return sd ? &sd->s : NULL; }

int cli_spandist_root(const cli_spandist *sd) { return sd->s.rank == 0; }

int cli_spandist_agree(cli_spandist *sd, int rc) { return dshard_agree(&sd->s, rc); }

int cli_spandist_same(cli_spandist *sd, const lp_spans *sp)
{
    uint64_t h = dshard_mix(dshard_mix(dshard_mix(0, sp->n), sp->ntraces), sp->nkept);
    return dshard_same(&sd->s, h, "spans or traces");
}

static lp_status walk_mine(cli_spandist *sd, const lp_spans *sp, uint32_t only, lp_error *err)
{
    lp_spancp cp;
    lp_spancp_init(&cp);
    lp_status st = LP_OK;
    for (uint32_t t = (uint32_t)sd->s.rank; t < sp->ntraces && !st; t += (uint32_t)sd->s.size)
        if (only == LP_SPAN_NONE || t == only)
            if (!(st = lp_spancp_trace(&cp, sp, t, err)))
                st = lp_spancp_pack(&cp, &sd->buf, &sd->len, &sd->cap, err);
    lp_spancp_release(&cp);
    return st;
}

lp_status cli_spandist_walk(cli_spandist *sd, const lp_spans *sp, uint32_t only, lp_error *err)
{
    lp_status st = walk_mine(sd, sp, only, err);
    int first = dshard_agree(&sd->s, st ? cli_exit_for(st) : 0);
    if (st)
        return st;
    if (first)
        return lp_error_set(err, LP_ERR_IO, "another rank failed");
    size_t K = (size_t)sd->s.size, dummy[1];
    if (sd->s.rank == 0) {
        sd->lens = lp_calloc(K, sizeof *sd->lens);
        sd->base = lp_calloc(K, sizeof *sd->base);
        sd->off = lp_calloc(K, sizeof *sd->off);
    }
    int nomem = sd->s.rank == 0 && (!sd->lens || !sd->base || !sd->off);
    void *all = NULL;
    st = lp_dist_gather(sd->s.d, 0, sd->buf, sd->len, &all, nomem ? dummy : sd->lens, err);
    sd->all = all;
    if (!st && nomem)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t r = 1; !st && sd->s.rank == 0 && r < K; r++)
        sd->base[r] = sd->base[r - 1] + sd->lens[r - 1];
    return st;
}

lp_status cli_spandist_next(cli_spandist *sd, const lp_spans *sp, uint32_t t, lp_spancp *cp, lp_error *err)
{
    int r = lp_dist_owner(t, sd->s.size);
    lp_status st = lp_spancp_unpack(cp, sd->all + sd->base[r], sd->lens[r], &sd->off[r], sp->n, err);
    if (!st && cp->trace != t)
        st = lp_error_set(err, LP_ERR_FORMAT, "rank %d sent the path of trace %u where %u was due", r, cp->trace, t);
    return st;
}

int cli_dist_spans(cli_dist *D, int argc, char **argv)
{
    cli_spandist sd;
    memset(&sd, 0, sizeof sd);
    dshard_init(&sd.s, D, "spans", argc, argv);
    int rc = cli_spans_main(argc, argv, &sd);
    dshard_stats(&sd.s);
    lp_free(sd.buf), lp_free(sd.all), lp_free(sd.lens), lp_free(sd.base), lp_free(sd.off);
    return rc;
}
