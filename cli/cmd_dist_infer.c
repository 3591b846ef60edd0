/* cmd_dist_infer.c: `mpirun -n K longpole dist infer [--stats] ...`: the Mystery
 * Machine's inference with the requests split over the ranks (docs/distributed.md).
 * Same options, inputs and output as `longpole infer` (cmd_infer.c runs it, calling
 * the hooks here, infdist.h, with the shard dshard_run gives it). Every rank loads
 * every log (so segment ids and the skew correction are the same everywhere) and
 * refines the starting model with its contiguous share of the requests
 * (lp_causal_refine part/nparts); the models' state (causal.h: hb, mx and not-seen
 * rows; counts) is combined by one AND and one SUM allreduce, which gives exactly the
 * bits and counts of one refinement over every request, since rejection only clears
 * bits. Pipeline candidates, derived from the merged model on every rank alike, are
 * checked on each share and rejected when any share contradicts them (a SUM of one
 * word per candidate). What moves: 3 * S * W + S + 1 words per rank (S segments,
 * W = ceil(S / 64)) plus one word per candidate. */
#include "infdist.h"
#include "dshard.h"

int cli_infdist_same(dshard *s, const lp_reqlog *rl)
{
    uint64_t h = dshard_mix(dshard_mix(dshard_mix(0, rl->nrows), rl->nreqs), rl->nsegs);
    h = dshard_mix(dshard_mix(h, rl->nbad), rl->nhosts);
    return dshard_same(s, h, "records, requests, segments or hosts");
}

/* This rank's share: part `*part` of `*nparts`. */
static void cli_infdist_part(const dshard *s, uint64_t *part, uint64_t *nparts)
{
    *part = (uint64_t)s->rank;
    *nparts = (uint64_t)s->size;
}

/* Before refining (segments mapped): remember the starting model's counts. */
static lp_status cli_infdist_start(dshard *s, const lp_causal *m, lp_error *err)
{
    size_t nand;
    lp_causal_state_size(m, &nand, &s->nwords);
    uint64_t *andw = lp_malloc((nand + 1) * sizeof *andw);
    s->words = lp_malloc(s->nwords * sizeof *s->words);
    if (!andw || !s->words) {
        lp_free(andw);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    lp_causal_state_get(m, andw, s->words);
    lp_free(andw);
    return LP_OK;
}

/* Every rank, after refining (st: how it went here): combine the models into m. */
static lp_status cli_infdist_merge(dshard *s, lp_status st, lp_causal *m, lp_error *err)
{
    if ((st = dshard_settle(s, st, err)))
        return st;
    size_t nand, nsum;
    lp_causal_state_size(m, &nand, &nsum);
    uint64_t *andw = lp_malloc((nand + 1) * sizeof *andw), *sumw = lp_malloc(nsum * sizeof *sumw);
    /* every rank has the same segments, so the same sizes: the allreduces match */
    if (!andw || !sumw || nsum != s->nwords) {
        lp_free(andw), lp_free(sumw);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); /* MPI aborts the job on a rank that leaves */
    }
    lp_causal_state_get(m, andw, sumw);
    if (s->rank) /* the starting model's counts once, from rank 0 */
        for (size_t i = 0; i < nsum; i++)
            sumw[i] -= s->words[i];
    st = lp_dist_allreduce_u64(s->d, andw, nand, LP_DIST_BAND, err);
    if (!st)
        st = lp_dist_allreduce_u64(s->d, sumw, nsum, LP_DIST_SUM, err);
    if (!st)
        lp_causal_state_set(m, andw, sumw);
    lp_free(andw), lp_free(sumw);
    return st;
}

lp_status cli_infdist_refine(dshard *s, lp_status st, lp_causal *m, const lp_reqlog *rl, const uint32_t *map,
                             lp_causal_refine_opts *ro, lp_error *err)
{
    if (!s) /* one process */
        return st ? st : lp_causal_refine(m, rl, map, ro, err);
    if (!st) { /* this rank's share of the requests */
        cli_infdist_part(s, &ro->part, &ro->nparts);
        st = cli_infdist_start(s, m, err);
    }
    if (!st)
        st = lp_causal_refine(m, rl, map, ro, err);
    return cli_infdist_merge(s, st, m, err); /* every rank, even after a failure */
}

lp_status cli_infdist_finish(dshard *s, lp_causal *m, const lp_reqlog *rl, const uint32_t *map, lp_error *err)
{
    lp_status st = lp_causal_finish(m, NULL, NULL, err); /* the candidates: the same on every rank */
    if (st || !m->npipes)
        return st;
    uint8_t *rej = lp_calloc(m->npipes, 1);
    uint64_t *w = lp_calloc(m->npipes, sizeof *w);
    if (!rej || !w)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (!st)
        st = lp_causal_pipes_check(m, rl, map, (uint64_t)s->rank, (uint64_t)s->size, rej, err);
    for (uint32_t p = 0; !st && p < m->npipes; p++)
        w[p] = rej[p];
    if (!st)
        st = lp_dist_allreduce_u64(s->d, w, m->npipes, LP_DIST_SUM, err);
    for (uint32_t p = 0; !st && p < m->npipes; p++)
        rej[p] = w[p] != 0;
    if (!st)
        st = lp_causal_pipes_reject(m, rej, err);
    lp_free(rej), lp_free(w);
    return st;
}

int cli_dist_infer(cli_dist *D, int argc, char **argv) { return dshard_run(D, "infer", cli_infer_main, argc, argv); }
