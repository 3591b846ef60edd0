/* cpsample.c: transient critical paths drawn uniformly from a snapshot's path counts
 * (cpmetric.h; SnailTrail §5): the end vertex with probability fwd/N, then each step back
 * with probability proportional to the predecessor's count; and the splitmix64 generator
 * the draws use (one stream per window, so results do not depend on the thread count). */
#include "longpole/analysis/snailtrail/cpmetric.h"
#include "longpole/base/alloc.h"

#include <string.h>

/* ---- random numbers ------------------------------------------------------------------ */

uint64_t lp_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

uint64_t lp_rng_seed(uint64_t seed, uint64_t stream)
{
    uint64_t s = seed ^ 0x6A09E667F3BCC909ULL;
    uint64_t a = lp_rng_next(&s);
    s = a ^ (stream * 0xD1342543DE82EF95ULL + 0x2545F4914F6CDD1DULL);
    return lp_rng_next(&s);
}

static inline double rng_unit(uint64_t *st) { return (double)(lp_rng_next(st) >> 11) * 0x1p-53; }

/* ---- sampling ------------------------------------------------------------------------- */

void lp_cppath_release(lp_cppath *p)
{
    lp_free(p->e);
    memset(p, 0, sizeof *p);
}

static int path_push(lp_cppath *p, uint64_t e)
{
    if (p->n == p->cap) {
        void *q = p->e;
        if (lp_grow(&q, &p->cap, p->n + 1, sizeof *p->e))
            return -1;
        p->e = q;
    }
    p->e[p->n++] = e;
    return 0;
}

lp_status lp_cpm_sample(const lp_cpm *c, uint64_t *rng, lp_cppath *out, lp_error *err)
{
    out->n = 0;
    if (!c->has_paths)
        return LP_OK;
    const lp_snapshot *s = c->s;
    const lp_trace *t = s->t;
    const lp_cpcount *cnt = c->cnt;
    /* the end vertex */
    double u = rng_unit(rng), acc = 0;
    uint64_t v = UINT64_MAX, lastnz = UINT64_MAX;
    for (uint32_t w = 0; w < s->nworkers && v == UINT64_MAX; w++) {
        uint64_t a = s->voff[w], z = s->voff[w + 1];
        if (a == z || s->vtime[z - 1] != s->t1 || cnt[z - 1].fwd.m == 0)
            continue;
        lastnz = z - 1;
        acc += lp_xnum_ratio(cnt[z - 1].fwd, c->n);
        if (u < acc)
            v = z - 1;
    }
    if (v == UINT64_MAX)
        v = lastnz;
    /* walk back */
    for (uint64_t steps = 0; steps <= s->nv; steps++) {
        lp_xnum tot = cnt[v].fwd;
        u = rng_unit(rng);
        acc = 0;
        uint64_t pick = UINT64_MAX, last = UINT64_MAX; /* UINT64_MAX - 1: stop */
        if (s->vtime[v] == s->t0) {
            last = UINT64_MAX - 1;
            acc += lp_xnum_ratio(lp_xnum_one(), tot);
            if (u < acc)
                pick = last;
        }
        if (pick == UINT64_MAX && s->vact[v] != LP_NONE32 && t->atype[s->vact[v]] != LP_TYPE_WAITING &&
            cnt[v - 1].fwd.m != 0) {
            last = v;
            acc += lp_xnum_ratio(cnt[v - 1].fwd, tot);
            if (u < acc)
                pick = last;
        }
        for (uint32_t k = s->vin[v]; pick == UINT64_MAX && k < s->vin[v + 1]; k++) {
            if (lp_topo_ignored(&c->topo, (uint32_t)k) || cnt[s->in[k].sv].fwd.m == 0)
                continue;
            last = LP_CPPATH_MSG | k;
            acc += lp_xnum_ratio(cnt[s->in[k].sv].fwd, tot);
            if (u < acc)
                pick = last;
        }
        if (pick == UINT64_MAX)
            pick = last; /* rounding left u past the sum */
        if (pick == UINT64_MAX - 1 || pick == UINT64_MAX)
            return LP_OK;
        if (path_push(out, pick))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory sampling a path");
        v = (pick & LP_CPPATH_MSG) ? s->in[pick & ~LP_CPPATH_MSG].sv : v - 1;
    }
    return lp_error_set(err, LP_ERR_ARG, "path sampling did not terminate (inconsistent counts)");
}
