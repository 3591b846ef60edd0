/* cpmetric.c: path counts, critical participation and uniform path sampling on a
 * snapshot (cpmetric.h; SnailTrail §3.2 Eq. 3, §5 Algorithm 2).
 *
 * Forward pass (fwd): the workers' vertices are visited in a topological order built
 * on the fly, as in cpath.c: a worker runs as far as it can (up to a time horizon that
 * advances in slices of about 64 vertices per worker, so that all passes touch the
 * recent vertices of every worker together and stay in cache); a vertex whose incoming
 * message comes from a send vertex not yet visited suspends it and pushes the sender's
 * worker (target: that send vertex) on a stack. A worker needed while already on the
 * stack can only come from a zero-time message cycle; that message is then ignored.
 * Vertices already counted are marked in a bitset (so the count array is never read
 * before it is written). The order is recorded, and the backward pass (bwd) walks it
 * in reverse, pushing each receive vertex's count to the message's send vertex (so it
 * needs no outgoing lists) and computing the CP of the edges into each vertex as soon
 * as its bwd is final. Both passes visit each vertex and edge once; software prefetch
 * covers the next vertices of each run. Counts are lp_xnum (see the header for the
 * representation and its error bound); the hot paths add inline.
 */
#include "longpole/analysis/snailtrail/cpmetric.h"
#include "longpole/base/alloc.h"
#include "base/hugepage.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define XBIG 0x1p256
#define XSMALL 0x1p-256
#define EXACT_MAX 0x1p53

/* ---- lp_xnum -------------------------------------------------------------------- */

static inline uint32_t maxu(uint32_t a, uint32_t b) { return a > b ? a : b; }

static inline lp_xnum xadd(lp_xnum a, lp_xnum b)
{
    if (a.m == 0)
        return b;
    if (b.m == 0)
        return a;
    lp_xnum r;
    if (a.e == b.e) {
        r.m = a.m + b.m;
        r.e = a.e;
        r.rd = maxu(a.rd, b.rd);
        if (a.e != 0 || a.rd || b.rd || r.m > EXACT_MAX) /* integers below 2^53 add exactly */
            r.rd++;
        if (r.m >= XBIG) {
            r.m *= XSMALL;
            r.e++;
        }
        return r;
    }
    if (a.e < b.e) {
        lp_xnum x = a;
        a = b;
        b = x;
    }
    r.e = a.e;
    r.rd = maxu(a.rd, b.rd) + 1;
    r.m = a.e - b.e == 1 ? a.m + b.m * XSMALL : a.m; /* further apart: b < 2^-256 of a */
    if (r.m >= XBIG) {
        r.m *= XSMALL;
        r.e++;
    }
    return r;
}

static inline lp_xnum xmul(lp_xnum a, lp_xnum b)
{
    if (a.m == 0 || b.m == 0)
        return lp_xnum_zero();
    lp_xnum r;
    r.m = a.m * b.m;
    r.e = a.e + b.e;
    r.rd = a.rd + b.rd;
    if (r.e != 0 || a.rd || b.rd || r.m > EXACT_MAX)
        r.rd++;
    if (r.m >= XBIG) {
        r.m *= XSMALL;
        r.e++;
    }
    return r;
}

/* m * 2^(256 d) for small d, exactly (as long as the result is a normal double). */
static inline double scale256(double m, int64_t d)
{
    switch (d) {
    case 0: return m;
    case -1: return m * XSMALL;
    case -2: return m * XSMALL * XSMALL;
    case 1: return m * XBIG;
    default: return d < -5 ? 0.0 : d > 3 ? HUGE_VAL : ldexp(m, (int)(d * LP_XNUM_STEP));
    }
}

lp_xnum lp_xnum_add(lp_xnum a, lp_xnum b) { return xadd(a, b); }
lp_xnum lp_xnum_mul(lp_xnum a, lp_xnum b) { return xmul(a, b); }

lp_xnum lp_xnum_from_double(double v)
{
    lp_xnum r = {0.0, 0, 0};
    if (!(v > 0) || !isfinite(v))
        return r;
    r.m = v;
    while (r.m >= XBIG) {
        r.m *= XSMALL;
        r.e++;
    }
    while (r.m < 1.0) {
        r.m *= XBIG;
        r.e--;
    }
    r.rd = (v == floor(v) && v <= EXACT_MAX) ? 0 : 1;
    return r;
}

double lp_xnum_ratio(lp_xnum a, lp_xnum b)
{
    if (a.m == 0)
        return 0.0;
    return scale256(a.m / b.m, (int64_t)a.e - b.e);
}

double lp_xnum_log10(lp_xnum x)
{
    if (x.m == 0)
        return -HUGE_VAL;
    return (double)(log10l((long double)x.m) + (long double)x.e * LP_XNUM_STEP * 0.30102999566398119521373889472449302677L);
}

int lp_xnum_cmp(lp_xnum a, lp_xnum b)
{
    if (a.m == 0 || b.m == 0)
        return (a.m > 0) - (b.m > 0);
    if (a.e != b.e)
        return a.e < b.e ? -1 : 1;
    return a.m < b.m ? -1 : a.m > b.m;
}

const char *lp_xnum_fmt(lp_xnum x, int digits, char *buf, size_t n)
{
    if (digits < 1)
        digits = 1;
    if (digits > 17)
        digits = 17;
    if (x.m == 0) {
        snprintf(buf, n, "0");
        return buf;
    }
    if (x.e == 0 && x.m <= EXACT_MAX && x.m == floor(x.m)) {
        snprintf(buf, n, "%.0f", x.m);
        return buf;
    }
    long double l = log10l((long double)x.m) + (long double)x.e * LP_XNUM_STEP * 0.30102999566398119521373889472449302677L;
    long double ex = floorl(l);
    long double mant = powl(10.0L, l - ex);
    /* rounding the mantissa to `digits` may carry into the next power of ten */
    long double unit = powl(10.0L, (long double)(digits - 1));
    mant = roundl(mant * unit) / unit;
    if (mant >= 10.0L) {
        mant /= 10.0L;
        ex += 1.0L;
    }
    snprintf(buf, n, "%.*Lfe%+lld", digits - 1, mant, (long long)ex);
    return buf;
}

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

/* ---- buffers ------------------------------------------------------------------------- */

void lp_cpm_init(lp_cpm *c) { memset(c, 0, sizeof *c); }

void lp_cpm_release(lp_cpm *c)
{
    lp_free(c->cnt);
    lp_free(c->done);
    lp_free(c->cpw);
    lp_free(c->cpin);
    lp_free(c->order);
    lp_free(c->ignored);
    lp_free(c->cur);
    lp_free(c->stk);
    lp_free(c->target);
    lp_free(c->onstk);
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
        if (reserve((void **)&c->done, n / 64 + 1, sizeof *c->done))
            return LP_ERR_NOMEM;
        lp_hint_huge(c->cnt, n * sizeof *c->cnt);
        lp_hint_huge(c->cpw, n * sizeof *c->cpw);
        lp_hint_huge(c->order, n * sizeof *c->order);
        c->cap_v = n;
    }
    if (s->nin + 1 > c->cap_in || !c->cpin) {
        size_t n = (size_t)s->nin + (size_t)s->nin / 4 + 16;
        if (reserve((void **)&c->cpin, n, sizeof *c->cpin) || reserve((void **)&c->ignored, n, 1))
            return LP_ERR_NOMEM;
        lp_hint_huge(c->cpin, n * sizeof *c->cpin);
        lp_hint_huge(c->ignored, n);
        c->cap_in = n;
    }
    if ((size_t)s->nworkers + 1 > c->cap_w || !c->cur) {
        size_t n = (size_t)s->nworkers + 16;
        if (reserve((void **)&c->cur, n, sizeof *c->cur) || reserve((void **)&c->stk, n, sizeof *c->stk) ||
            reserve((void **)&c->target, n, sizeof *c->target) || reserve((void **)&c->onstk, n, 1))
            return LP_ERR_NOMEM;
        c->cap_w = n;
    }
    return LP_OK;
}

/* ---- counting ------------------------------------------------------------------------ */

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
    const uint64_t nv = s->nv;
    if (!nv)
        return LP_OK;
    const lp_trace *t = s->t;
    const uint32_t nw = s->nworkers;
    const int64_t t0 = s->t0, t1 = s->t1;
    const int64_t *vtime = s->vtime;
    const uint32_t *vact = s->vact, *vin = s->vin;
    const lp_snapin *in = s->in;
    const uint16_t *atype = t->atype;
    lp_cpcount *cnt = c->cnt;
    uint32_t *order = c->order;
    uint8_t *ignored = c->ignored;
    int any_ignored = 0;
    memset(c->cur, 0, (size_t)nw * sizeof *c->cur);
    memset(c->onstk, 0, nw);
    memset(ignored, 0, s->nin);
    /* done[v]: v's fwd is final (a bitset, so that the counts are never read before
     * they are written: a first read would map the zero page, copied on the first
     * write, twice the cost of a first write with huge pages) */
    uint64_t *done = c->done;
    memset(done, 0, (nv / 64 + 1) * sizeof *done);
#define DONE(v) ((done[(v) >> 6] >> ((v) & 63)) & 1)
#define SET_DONE(v) (done[(v) >> 6] |= UINT64_C(1) << ((v) & 63))
    const lp_xnum one = lp_xnum_one(), zero = lp_xnum_zero();
#define LIVE(v) (vact[v] != LP_NONE32 && atype[vact[v]] != LP_TYPE_WAITING)
#define IGN(k) (any_ignored && ignored[k])
    /* forward, in time slices: every worker advances to the horizon h before any goes
     * past it, so the order visits the workers' recent vertices together (and the
     * backward pass, its reverse, too); a slice holds about SLICE vertices per worker */
    enum { SLICE = 64 };
    uint64_t no = 0;
    /* in 128 bits and at most the span: a wide window with few vertices must not make a
     * step that overflows (and then, clamped to 1 ns, a loop over every nanosecond) */
    __int128 span128 = (__int128)t1 - t0, st128 = span128 * SLICE * nw / (__int128)(nv ? nv : 1);
    if (st128 > span128)
        st128 = span128;
    if (st128 > INT64_MAX)
        st128 = INT64_MAX;
    int64_t step = st128 < 1 ? 1 : (int64_t)st128;
    for (int64_t h = t0;;) {
        int last = h >= t1 || (__int128)t1 - h <= step;
        h = last ? t1 : h + step;
        for (uint32_t w0 = 0; w0 < nw; w0++) {
            uint64_t base0 = s->voff[w0], len0 = s->voff[w0 + 1] - base0, lim = c->cur[w0];
            if (last)
                lim = len0;
            else
                while (lim < len0 && vtime[base0 + lim] < h)
                    lim++;
            if (c->cur[w0] >= lim)
                continue;
            size_t sp = 0;
            c->stk[sp] = w0;
            c->target[sp++] = lim;
            c->onstk[w0] = 1;
            while (sp) {
                uint32_t w = c->stk[sp - 1];
                uint64_t tgt = c->target[sp - 1], base = s->voff[w], cc = c->cur[w];
                int pushed = 0;
                while (cc < tgt) {
                    uint64_t v = base + cc;
                    /* the run is sequential but one of many streams: fetch ahead */
                    __builtin_prefetch(&cnt[v + 8], 1);
                    __builtin_prefetch(&vtime[v + 16]);
                    __builtin_prefetch(&vin[v + 32]);
                    __builtin_prefetch(&vact[v + 32]);
                    if (vin[v] == vin[v + 1]) { /* no message in: the common case */
                        lp_xnum x = vtime[v] == t0 ? one : zero;
                        if (LIVE(v))
                            x = x.m == 0 ? cnt[v - 1].fwd : xadd(x, cnt[v - 1].fwd);
                        cnt[v].fwd = x;
                        cnt[v].bwd = zero;
                        SET_DONE(v);
                        order[no++] = (uint32_t)v;
                        cc++;
                        continue;
                    }
                    c->cur[w] = cc;
                    uint32_t blocked = LP_NONE32;
                    for (uint32_t k = vin[v]; k < vin[v + 1]; k++) {
                        if (IGN(k))
                            continue;
                        if (!DONE(in[k].sv)) {
                            blocked = k;
                            break;
                        }
                    }
                    if (blocked != LP_NONE32) {
                        uint32_t x = lp_snapshot_vworker(s, in[blocked].sv); /* voff is in cache */
                        if (c->onstk[x]) { /* a zero-time cycle: ignore this message */
                            any_ignored = 1;
                            ignored[blocked] = 1;
                            c->ncycles++;
                            continue;
                        }
                        c->stk[sp] = x;
                        c->target[sp++] = in[blocked].sv - s->voff[x] + 1;
                        c->onstk[x] = 1;
                        pushed = 1;
                        break;
                    }
                    lp_xnum x = vtime[v] == t0 ? one : zero;
                    if (LIVE(v))
                        x = xadd(x, cnt[v - 1].fwd);
                    for (uint32_t k = vin[v]; k < vin[v + 1]; k++)
                        if (!IGN(k))
                            x = xadd(x, cnt[in[k].sv].fwd);
                    cnt[v].fwd = x;
                    cnt[v].bwd = zero;
                    SET_DONE(v);
                    order[no++] = (uint32_t)v;
                    cc++;
                }
                c->cur[w] = cc;
                if (!pushed) {
                    c->onstk[w] = 0;
                    sp--;
                }
            }
        }
        if (last)
            break;
    }
    /* N from the end vertices */
    for (uint32_t w = 0; w < nw; w++) {
        uint64_t a = s->voff[w], z = s->voff[w + 1];
        if (a == z)
            continue;
        c->nvs += vtime[a] == t0;
        if (vtime[z - 1] == t1) {
            c->nve++;
            c->n = xadd(c->n, cnt[z - 1].fwd);
        }
    }
    c->log10n = lp_xnum_log10(c->n);
    c->has_paths = c->n.m != 0 && c->span > 0;
    /* backward, in reverse order; the CP of the edges into v once bwd[v] is final:
     * c(e) w(e) / (N span), four roundings beyond the counts' */
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
        lp_xnum b = cnt[v].bwd;
        if (vtime[v] == t1)
            b = xadd(b, one);
        if (v + 1 < nv && LIVE(v + 1))
            b = b.m == 0 ? cnt[v + 1].bwd : xadd(b, cnt[v + 1].bwd);
        cnt[v].bwd = b;
        double cp = 0;
        if (has && b.m != 0 && LIVE(v)) {
            lp_xnum f = cnt[v - 1].fwd;
            if (f.m != 0) {
                cp = scale256(f.m * b.m, (int64_t)f.e + b.e - N.e) * ((double)(vtime[v] - vtime[v - 1]) * kinv);
                uint32_t rd = f.rd + b.rd;
                rdmax = rd > rdmax ? rd : rdmax;
                sum += cp;
            }
        }
        cpw[v] = cp;
        for (uint32_t k = vin[v]; k < vin[v + 1]; k++) {
            cp = 0;
            if (b.m != 0 && !IGN(k)) {
                lp_cpcount *x = &cnt[in[k].sv];
                x->bwd = x->bwd.m == 0 ? b : xadd(x->bwd, b);
                lp_xnum f = x->fwd;
                if (has && f.m != 0) {
                    cp = scale256(f.m * b.m, (int64_t)f.e + b.e - N.e) * ((double)(vtime[v] - in[k].st) * kinv);
                    uint32_t rd = f.rd + b.rd;
                    rdmax = rd > rdmax ? rd : rdmax;
                    sum += cp;
                }
            }
            cpin[k] = cp;
        }
    }
#undef LIVE
#undef IGN
#undef DONE
#undef SET_DONE
    for (uint32_t w = 0; w < nw; w++)
        if (s->voff[w] < s->voff[w + 1] && vtime[s->voff[w]] == t0)
            c->n_s = xadd(c->n_s, cnt[s->voff[w]].bwd);
    if (has) {
        c->sum = (double)sum;
        c->err_bound = ((double)rdmax + (double)N.rd + 5.0) * 0x1p-53;
    }
    return LP_OK;
}

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
            if (c->ignored[k] || cnt[s->in[k].sv].fwd.m == 0)
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
