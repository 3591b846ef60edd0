/* cpmetric.c: path counts and critical participation on a snapshot (cpmetric.h;
 * SnailTrail §3.2 Eq. 3, §5 Algorithm 2).
 *
 * Forward pass (fwd): the dependency-order walk of graph/topo.h over the snapshot's
 * graph (workers are chains, message edges links), with graph/pathcount.h's fwd step as
 * its visitor, as in cpath.c: a worker runs as far as it can, up to a time horizon that
 * advances in slices of about 64 vertices per worker, so that all passes touch the
 * recent vertices of every worker together and stay in cache; zero-time message
 * cycles are broken by the walk. The walk marks counted vertices in a bitset, so the
 * count array is never read before it is written (a first read would map the zero
 * page, copied on the first write: twice the cost of a first write with huge pages).
 * The order is recorded, and the backward pass (bwd) walks it in reverse, pushing each
 * receive vertex's count to the message's send vertex (so it needs no outgoing lists)
 * and computing the CP of the edges into each vertex as soon as its bwd is final. Both
 * passes visit each vertex and edge once; software prefetch covers the next vertices
 * of each run. Counts are lp_xnum (graph/xnum.h); the hot paths add inline. Drawing
 * paths from the counts is in cpsample.c.
 */
#include "longpole/analysis/snailtrail/cpmetric.h"
#include "longpole/base/alloc.h"
#include "base/hugepage.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- buffers ------------------------------------------------------------------------- */

void lp_cpm_init(lp_cpm *c)
{
    memset(c, 0, sizeof *c);
    lp_topo_init(&c->topo);
}

void lp_cpm_release(lp_cpm *c)
{
    lp_free(c->cnt);
    lp_free(c->cpw);
    lp_free(c->cpin);
    lp_free(c->order);
    lp_topo_release(&c->topo);
    memset(c, 0, sizeof *c);
}

/* Make *p an array of at least need elements (its contents are not needed). */
static int reserve(void **p, size_t need, size_t elem)
{
    /* realloc, not free + malloc: a large block grows in place (mremap), keeping the
     * pages already touched (and their huge pages) */
    void *q = lp_reallocarray(*p, need, elem);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

static lp_status grow(lp_cpm *c, const lp_snapshot *s)
{
    if (s->nv + 1 > c->cap_v || !c->cnt) {
        size_t n = (size_t)s->nv + (size_t)s->nv / 4 + 16;
        if (reserve((void **)&c->cnt, n, sizeof *c->cnt) || reserve((void **)&c->cpw, n, sizeof *c->cpw) ||
            reserve((void **)&c->order, n, sizeof *c->order))
            return LP_ERR_NOMEM;
        lp_hint_huge(c->cnt, n * sizeof *c->cnt);
        lp_hint_huge(c->cpw, n * sizeof *c->cpw);
        lp_hint_huge(c->order, n * sizeof *c->order);
        c->cap_v = n;
    }
    if (s->nin + 1 > c->cap_in || !c->cpin) {
        size_t n = (size_t)s->nin + (size_t)s->nin / 4 + 16;
        if (reserve((void **)&c->cpin, n, sizeof *c->cpin))
            return LP_ERR_NOMEM;
        lp_hint_huge(c->cpin, n * sizeof *c->cpin);
        c->cap_in = n;
    }
    return LP_OK;
}

/* ---- counting ------------------------------------------------------------------------ */

/* The snapshot's graph: workers are chains, message edges are links (link k is in[k],
 * from in[k].sv: a field of an array of structs, read with a stride). */
static inline lp_graph snap_graph(const lp_snapshot *s)
{
    lp_graph g = {s->nv, s->nworkers, s->voff, s->nin, s->vin, NULL, s->in ? &s->in->sv : NULL,
                  (uint32_t)(sizeof *s->in / sizeof(uint32_t)), NULL};
    return g;
}

/* What the forward pass's visitors read and write. */
typedef struct fwd_ctx {
    lp_cpcount *cnt;
    const int64_t *vtime;
    const uint32_t *vact, *vin;
    const uint16_t *atype;
    int64_t t0;
} fwd_ctx;

#define LIVE(x, v) ((x)->vact[v] != LP_NONE32 && (x)->atype[(x)->vact[v]] != LP_TYPE_WAITING)

/* The run is sequential but one of many streams: fetch ahead. */
static inline void fwd_ahead(const fwd_ctx *x, uint64_t v)
{
    __builtin_prefetch(&x->cnt[v + 8], 1);
    __builtin_prefetch(&x->vtime[v + 16]);
    __builtin_prefetch(&x->vin[v + 32]);
    __builtin_prefetch(&x->vact[v + 32]);
}

static inline void fwd_plain(void *ctx, const lp_graph *g, uint64_t v, uint64_t pos, const uint8_t *ign)
{
    fwd_ctx *x = ctx;
    fwd_ahead(x, v);
    x->cnt[v].fwd = lp_pathcount_fwd_chain(x->cnt, v, x->vtime[v] == x->t0, LIVE(x, v));
    x->cnt[v].bwd = lp_xnum_zero();
}

static inline void fwd_joined(void *ctx, const lp_graph *g, uint64_t v, uint64_t pos, const uint8_t *ign)
{
    fwd_ctx *x = ctx;
    fwd_ahead(x, v);
    x->cnt[v].fwd = lp_pathcount_fwd_at(g, x->cnt, v, x->vtime[v] == x->t0, LIVE(x, v), ign);
    x->cnt[v].bwd = lp_xnum_zero();
}

/* Forward, in time slices: every worker advances to the horizon h before any goes past
 * it, so the order visits the workers' recent vertices together (and the backward pass,
 * its reverse, too); a slice holds about SLICE vertices per worker. */
static lp_status count_fwd(lp_cpm *c, const lp_snapshot *s, lp_error *err)
{
    enum { SLICE = 64 };
    const lp_graph g = snap_graph(s);
    lp_status st = lp_topo_begin(&c->topo, &g, err);
    if (st)
        return st;
    const uint32_t nw = s->nworkers;
    const int64_t t0 = s->t0, t1 = s->t1;
    fwd_ctx x = {c->cnt, s->vtime, s->vact, s->vin, s->t->atype, t0};
    /* in 128 bits and at most the span: a wide window with few vertices must not make a
     * step that overflows (and then, clamped to 1 ns, a loop over every nanosecond) */
    __int128 span128 = (__int128)t1 - t0, st128 = span128 * SLICE * nw / (__int128)(s->nv ? s->nv : 1);
    if (st128 > span128)
        st128 = span128;
    if (st128 > INT64_MAX)
        st128 = INT64_MAX;
    int64_t step = st128 < 1 ? 1 : (int64_t)st128;
    for (int64_t h = t0;;) {
        int last = h >= t1 || (__int128)t1 - h <= step;
        h = last ? t1 : h + step;
        for (uint32_t w0 = 0; w0 < nw; w0++) {
            uint64_t base0 = s->voff[w0], len0 = s->voff[w0 + 1] - base0, lim = c->topo.cur[w0];
            if (last)
                lim = len0;
            else
                while (lim < len0 && s->vtime[base0 + lim] < h)
                    lim++;
            if ((st = lp_topo_advance(&c->topo, &g, w0, lim, c->order, fwd_plain, fwd_joined, &x, err)))
                return st;
        }
        if (last)
            return LP_OK;
    }
}

/* N from the end vertices (and |V_s|, |V_e|). */
static void count_ends(lp_cpm *c, const lp_snapshot *s)
{
    for (uint32_t w = 0; w < s->nworkers; w++) {
        uint64_t a = s->voff[w], z = s->voff[w + 1];
        if (a == z)
            continue;
        c->nvs += s->vtime[a] == s->t0;
        if (s->vtime[z - 1] == s->t1) {
            c->nve++;
            c->n = lp_xnum_add(c->n, c->cnt[z - 1].fwd);
        }
    }
    c->log10n = lp_xnum_log10(c->n);
    c->has_paths = c->n.m != 0 && c->span > 0;
}

/* Backward, in reverse order; the CP of the edges into v once bwd[v] is final:
 * c(e) w(e) / (N span), four roundings beyond the counts'. */
static void count_bwd(lp_cpm *c, const lp_snapshot *s)
{
    const uint64_t nv = s->nv;
    const int64_t t1 = s->t1;
    const int64_t *vtime = s->vtime;
    const uint32_t *vin = s->vin, *order = c->order;
    const lp_snapin *in = s->in;
    const uint8_t *ign = c->topo.ncycles ? c->topo.ignored : NULL;
    const fwd_ctx x = {c->cnt, vtime, s->vact, vin, s->t->atype, s->t0}; /* for LIVE */
    lp_cpcount *cnt = c->cnt;
    const lp_xnum N = c->n;
    const int has = c->has_paths;
    /* CP(e) = (f.m b.m) 2^(256 d) * (w / (N.m span)): the factor 1 / (N.m span) is
     * computed once (two roundings, common to every edge), then three per edge */
    const double kinv = has ? 1.0 / (N.m * (double)c->span) : 0.0;
    double *cpw = c->cpw, *cpin = c->cpin;
    long double sum = 0;
    uint32_t rdmax = 0;
    for (uint64_t i = nv; i-- > 0;) {
        uint64_t v = order[i];
        if (i >= 16) { /* fetch ahead: the vertex 16 steps on */
            uint64_t u = order[i - 16];
            __builtin_prefetch(&cnt[u], 1);
            __builtin_prefetch(&vtime[u]);
            __builtin_prefetch(&vin[u]);
            __builtin_prefetch(&cpw[u], 1);
        }
        lp_xnum b = lp_pathcount_bwd_at(cnt, v, vtime[v] == t1, v + 1 < nv && LIVE(&x, v + 1));
        cnt[v].bwd = b;
        double cp = 0;
        if (has && b.m != 0 && LIVE(&x, v)) {
            lp_xnum f = cnt[v - 1].fwd;
            if (f.m != 0) {
                cp = lp_xnum_scale(f.m * b.m, (int64_t)f.e + b.e - N.e) * ((double)(vtime[v] - vtime[v - 1]) * kinv);
                uint32_t rd = f.rd + b.rd;
                rdmax = rd > rdmax ? rd : rdmax;
                sum += cp;
            }
        }
        cpw[v] = cp;
        for (uint32_t k = vin[v]; k < vin[v + 1]; k++) {
            cp = 0;
            if (b.m != 0 && !(ign && ign[k])) {
                lp_pathcount_push(cnt, in[k].sv, b);
                lp_xnum f = cnt[in[k].sv].fwd;
                if (has && f.m != 0) {
                    cp = lp_xnum_scale(f.m * b.m, (int64_t)f.e + b.e - N.e) * ((double)(vtime[v] - in[k].st) * kinv);
                    uint32_t rd = f.rd + b.rd;
                    rdmax = rd > rdmax ? rd : rdmax;
                    sum += cp;
                }
            }
            cpin[k] = cp;
        }
    }
    for (uint32_t w = 0; w < s->nworkers; w++)
        if (s->voff[w] < s->voff[w + 1] && vtime[s->voff[w]] == s->t0)
            c->n_s = lp_xnum_add(c->n_s, cnt[s->voff[w]].bwd);
    if (has) {
        c->sum = (double)sum;
        c->err_bound = ((double)rdmax + (double)N.rd + 5.0) * 0x1p-53;
    }
}

#undef LIVE

lp_status lp_cpm_compute(lp_cpm *c, const lp_snapshot *s, lp_error *err)
{
    c->s = s;
    c->n = c->n_s = lp_xnum_zero();
    c->log10n = -HUGE_VAL;
    c->span = s->t1 - s->t0;
    c->sum = 0;
    c->err_bound = 0;
    c->ncycles = 0;
    c->nvs = c->nve = 0;
    c->has_paths = 0;
    if (grow(c, s))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory counting the paths of a window");
    if (!s->nv)
        return LP_OK;
    lp_status st = count_fwd(c, s, err);
    if (st)
        return st;
    c->ncycles = c->topo.ncycles;
    count_ends(c, s);
    count_bwd(c, s);
    return LP_OK;
}
