/* attrib_tl.c: one resource timeline of the attribution (attrib.h): a consumable
 * resource on one host, from its monitoring series and the leaf phases whose demand
 * falls on it.
 *
 *  1. windows: consecutive samples (t_{i-1}, t_i] of the series; C = (v_i - v_{i-1}) x
 *     scale for a counter, v_i x scale x (t_i - t_{i-1}) for a mean (capacity units x
 *     seconds); a window with negative C is dropped and reported; intervals longer than
 *     gap-factor x the median are reported as gaps (their window still holds);
 *  2. segments: slices of the fixed grid over the windows (slice mode), or the sorted
 *     distinct instants where a window, a phase or a blocked interval begins or ends
 *     (event mode);
 *  3. demand: E_t and V_t as sums over phase types of the rule's value x (number of
 *     active phases of the type), counted with integer difference arrays so a segment
 *     with no active phase has exactly zero demand;
 *  4. each window upsampled (upsample.c); windows that round to no slice pass their
 *     consumption to the next one. Effective capacity: when the resource has a delay=
 *     series (run-queue delay: time its threads were ready to run but waited for a core),
 *     a window's on-resource fraction f = C / (C + D) (D the delay in the window) scales
 *     its exact demand (a thread that wants one core got f of one: the rest of the
 *     machine was taken by others), and a window with f below the bottleneck threshold
 *     is contended: its phases count as globally bottlenecked on the resource;
 *  5. per phase, through prefix sums over the segments: the attributed usage (exact:
 *     e_p x sum l x/E; variable: v_q x sum l (u - x)/V) and the time bottlenecked
 *     (global: u >= threshold x K, or a contended window; local, exact phases:
 *     x >= threshold x E).
 * O(segments x rule groups + phases x pieces).
 */
#include "analysis/grade10/g10_int.h"
#include "longpole/base/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

void *g10_scratch_get(g10_scratch *sc, int slot, size_t bytes)
{
    if (bytes < 16)
        bytes = 16;
    if (sc->cap[slot] >= bytes)
        return sc->buf[slot];
    size_t c = sc->cap[slot] ? sc->cap[slot] : 4096;
    while (c < bytes)
        c *= 2;
    lp_free(sc->buf[slot]);
    sc->buf[slot] = slot == SC_CNT || slot == SC_FIRST || slot == SC_SEG ? lp_calloc(1, c) : lp_malloc(c);
    sc->cap[slot] = sc->buf[slot] ? c : 0;
    return sc->buf[slot];
}

void g10_scratch_release(g10_scratch *sc)
{
    for (int i = 0; i < SC_N; i++)
        lp_free(sc->buf[i]);
    memset(sc, 0, sizeof *sc);
}

typedef struct win {
    int64_t w0, w1;
    double C;
    double f;        /* on-resource fraction C / (C + delay), 1 when unknown */
    uint32_t s0, s1; /* segments [s0, s1) */
} win;

typedef struct tlw { /* scratch of one timeline (buffers of sc) */
    g10_scratch *sc;
    win *w;
    size_t nw;
    int64_t lo, hi;     /* the span of the windows, rounded: the phases' pieces are clipped to it */
    double *len;        /* [nseg] seconds */
    uint32_t *seg;      /* on the first grid of this thread (slice mode): the segments of the active pieces
                           (piece_segs); NULL otherwise */
} tlw;

static int cmp_i64(const void *p, const void *q)
{
    int64_t x = *(const int64_t *)p, y = *(const int64_t *)q;
    return x < y ? -1 : x > y;
}

/* The counter of series s at time t, interpolated linearly between its samples; 0 when t
 * is outside the series. */
static int counter_at(const lp_g10_series *s, int64_t t, double *v)
{
    if (!s->n || t < s->time[0] || t > s->time[s->n - 1])
        return 0;
    size_t l = 0, h = s->n - 1; /* last sample at or before t */
    while (l < h) {
        size_t m = l + (h - l + 1) / 2;
        if (s->time[m] <= t)
            l = m;
        else
            h = m - 1;
    }
    if (s->time[l] == t || l + 1 == s->n) {
        *v = s->value[l];
        return 1;
    }
    double r = ((double)t - (double)s->time[l]) / ((double)s->time[l + 1] - (double)s->time[l]);
    *v = s->value[l] + r * (s->value[l + 1] - s->value[l]);
    return 1;
}

/* Window [t0, t1) with usage C: its on-resource fraction from the delay series. */
static double on_fraction(lp_g10_tl *tl, const lp_g10_res *r, const lp_g10_series *delay, int64_t t0, int64_t t1,
                          double C)
{
    double d0, d1;
    if (!delay)
        return 1;
    if (!counter_at(delay, t0, &d0) || !counter_at(delay, t1, &d1) || !(d1 - d0 >= 0)) {
        tl->delay_bad++;
        return 1;
    }
    double D = (d1 - d0) * r->scale;
    tl->nwin_delay++;
    tl->delay_used += C;
    tl->delay_waited += D;
    return C + D > 0 ? C / (C + D) : 1;
}

/* Windows of the series that overlap the run, with gap reports. */
static lp_status windows(lp_g10_attr *a, lp_g10_tl *tl, const lp_g10_series *s, const lp_g10_series *delay,
                         const lp_g10_data *d, lp_diags *ds, tlw *w, lp_error *err)
{
    const lp_g10_res *r = &a->m->res[tl->res];
    int64_t run0 = a->x->start[0], run1 = a->x->end[0];
    if (s->n < 2)
        return LP_OK;
    int64_t *iv = g10_scratch_get(w->sc, SC_IV, (s->n - 1) * sizeof *iv);
    if (!iv || !(w->w = g10_scratch_get(w->sc, SC_WIN, (s->n - 1) * sizeof *w->w)))
        return nomem(err);
    for (size_t i = 1; i < s->n; i++)
        if (__builtin_sub_overflow(s->time[i], s->time[i - 1], &iv[i - 1]))
            iv[i - 1] = INT64_MAX;
    qsort(iv, s->n - 1, sizeof *iv, cmp_i64);
    double med = (double)iv[(s->n - 1) / 2];
    const char *fn = lp_strtab_get(&d->strs, s->file);
    for (size_t i = 1; i < s->n; i++) {
        int64_t t0 = s->time[i - 1], t1 = s->time[i];
        double len = (double)t1 - (double)t0;
        if (len > a->m->gap_factor * med && tl->gaps++ < G10_KEEP)
            lp_diags_report(ds, LP_SEV_WARNING, LP_RULE_GAP, fn, s->line[i],
                            "monitoring gap: %s on host '%s' has no sample for %.3f s before this one (median interval %.3f s)",
                            lp_strtab_get(&d->strs, s->metric), lp_strtab_get(&d->strs, s->host), len / 1e9,
                            med / 1e9);
        if (t1 <= run0 || t0 >= run1)
            continue;
        double C = r->sample == LP_G10_COUNTER ? (s->value[i] - s->value[i - 1]) * r->scale
                                               : s->value[i] * r->scale * (len / 1e9);
        if (!(C >= 0)) {
            if (tl->dropped++ < G10_KEEP)
                lp_diags_report(ds, LP_SEV_WARNING, LP_RULE_FIELD, fn, s->line[i],
                                "%s on host '%s': %s; window dropped", lp_strtab_get(&d->strs, s->metric),
                                lp_strtab_get(&d->strs, s->host),
                                r->sample == LP_G10_COUNTER ? "the counter went backwards" : "a negative mean");
            continue;
        }
        w->w[w->nw++] = (win){t0, t1, C, on_fraction(tl, r, delay, t0, t1, C), 0, 0};
    }
    return LP_OK;
}

/* Piece k of the attribution's active pieces (a->ps, a->pe) clipped to the timeline's
 * span [w->lo, w->hi): 1 if anything is left, into *s, *e. */
static inline int clipped(const lp_g10_attr *a, const tlw *w, size_t k, int64_t *s, int64_t *e)
{
    *s = a->ps[k] < w->lo ? w->lo : a->ps[k];
    *e = a->pe[k] > w->hi ? w->hi : a->pe[k];
    return *s < *e;
}

/* The segment that starts at boundary t (t = bound[nseg] gives nseg). */
static inline uint32_t seg_at(const lp_g10_attr *a, const lp_g10_tl *tl, int64_t t)
{
    if (a->mode == LP_G10_SLICES) {
        if (t < tl->grid0)
            return 0;
        if (t >= tl->bound[tl->nseg])
            return tl->nseg;
        uint64_t k = ((uint64_t)t - (uint64_t)tl->grid0) / (uint64_t)a->slice_ns;
        return tl->lead + (uint32_t)k;
    }
    size_t l = 0, h = tl->nseg;
    while (l < h) {
        size_t m = l + (h - l) / 2;
        if (tl->bound[m] < t)
            l = m + 1;
        else
            h = m;
    }
    return (uint32_t)l;
}

/* The segments [*s0, *s1) of active piece k on the timeline (*s0 == *s1: none, the piece
 * is outside the windows); on the first grid a thread builds (slice mode), kept for its
 * next timelines with the same grid (monitoring sampled together: the same lookups on
 * every metric): seg[2k] = s0 + 1 (0: not yet found), seg[2k + 1] = s1. */
static inline void piece_segs(const lp_g10_attr *a, const lp_g10_tl *tl, const tlw *w, size_t k, uint32_t *s0,
                              uint32_t *s1)
{
    uint32_t *c = w->seg ? w->seg + 2 * k : NULL;
    if (c && c[0]) {
        *s0 = c[0] - 1, *s1 = c[1];
        return;
    }
    int64_t ps, pe;
    *s0 = *s1 = 0;
    if (clipped(a, w, k, &ps, &pe))
        *s0 = seg_at(a, tl, ps), *s1 = seg_at(a, tl, pe);
    if (c)
        c[0] = *s0 + 1, c[1] = *s1;
}

/* Slice mode: the fixed grid over the run, and one segment for each part of the windows
 * outside it (no demand there: a single segment gets the same rate as its slices would).
 * A timeline with the same grid and ends as the last one this thread built shares its
 * bounds (monitoring sampled together: one copy instead of one per metric). */
static lp_status slice_grid(lp_g10_attr *a, lp_g10_tl *tl, int64_t lo, int64_t hi, g10_scratch *sc, lp_error *err)
{
    int64_t A = g10_round(a, a->x->start[0]), B = g10_round(a, a->x->end[0]);
    if (A < lo)
        A = lo;
    if (B > hi)
        B = hi;
    if (B < A)
        B = A;
    __int128 n = ((__int128)B - A) / a->slice_ns;
    uint32_t lead = lo < A, trail = hi > B;
    if (n + lead + trail > UINT32_MAX - 1)
        return lp_error_set(err, LP_ERR_LIMIT, "more than 2^32 slices in one timeline: use a longer slice");
    tl->nseg = (uint32_t)n + lead + trail;
    tl->lead = lead;
    tl->grid0 = A;
    if (sc->grid && sc->grid_lo == lo && sc->grid_hi == hi && sc->grid_A == A && sc->grid_nseg == tl->nseg &&
        sc->grid_lead == lead) { /* the same bounds as the last grid built: shared (fresh memory is slow) */
        tl->bound = sc->grid;
        tl->bound_shared = 1;
        return LP_OK;
    }
    if (!(tl->bound = lp_malloc(((size_t)tl->nseg + 1) * sizeof *tl->bound)))
        return nomem(err);
    sc->grid = tl->bound, sc->grid_lo = lo, sc->grid_hi = hi, sc->grid_A = A, sc->grid_nseg = tl->nseg;
    sc->grid_lead = lead;
    sc->grid_gen++;
    size_t k = 0;
    if (lead)
        tl->bound[k++] = lo;
    for (int64_t i = 0; i <= (int64_t)n; i++)
        tl->bound[k++] = A + i * a->slice_ns;
    if (trail)
        tl->bound[k++] = hi;
    return LP_OK;
}

static lp_status grid(lp_g10_attr *a, lp_g10_tl *tl, const g10_tlphases *ph, tlw *w, lp_error *err)
{
    int64_t lo = g10_round(a, w->w[0].w0), hi = g10_round(a, w->w[w->nw - 1].w1);
    if (a->mode == LP_G10_SLICES)
        return slice_grid(a, tl, lo, hi, w->sc, err);
    size_t n = 2 * w->nw;
    for (size_t i = 0; i < ph->n; i++)
        n += 2 * ((size_t)a->pfirst[ph->phase[i] + 1] - a->pfirst[ph->phase[i]]);
    int64_t *b = lp_malloc(n * sizeof *b + sizeof *b);
    if (!b)
        return nomem(err);
    size_t k = 0;
    for (size_t i = 0; i < w->nw; i++)
        b[k++] = w->w[i].w0, b[k++] = w->w[i].w1;
    for (size_t i = 0; i < ph->n; i++)
        for (size_t q = a->pfirst[ph->phase[i]]; q < a->pfirst[ph->phase[i] + 1]; q++)
            if (clipped(a, w, q, &b[k], &b[k + 1]))
                k += 2;
    qsort(b, k, sizeof *b, cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (!u || b[i] != b[u - 1])
            b[u++] = b[i];
    if (u - 1 > UINT32_MAX - 1) {
        lp_free(b);
        return lp_error_set(err, LP_ERR_LIMIT, "more than 2^32 segments in one timeline");
    }
    tl->bound = b;
    tl->nseg = (uint32_t)(u - 1);
    return LP_OK;
}

/* E and V: per phase type (all its phases on one timeline have the same rule and
 * value), value x the count of its active phases, counted exactly in integers. */
static lp_status demand(lp_g10_attr *a, lp_g10_tl *tl, const g10_tlphases *ph, const tlw *w, lp_error *err)
{
    uint32_t n = tl->nseg, nt = a->m->ntypes;
    uint32_t *first = g10_scratch_get(w->sc, SC_FIRST, ((size_t)nt + 1) * sizeof *first);
    uint32_t *order = g10_scratch_get(w->sc, SC_ORDER, ph->n * sizeof *order);
    int32_t *cnt = g10_scratch_get(w->sc, SC_CNT, ((size_t)n + 1) * sizeof *cnt);
    if (!first || !order || !cnt)
        return nomem(err);
    const uint32_t *type = a->x->type;
    for (size_t i = 0; i < ph->n; i++) /* counting sort by type */
        first[type[ph->phase[i]] + 1]++;
    for (uint32_t t = 0; t < nt; t++)
        first[t + 1] += first[t];
    for (size_t i = 0; i < ph->n; i++)
        order[first[type[ph->phase[i]]]++] = (uint32_t)i;
    for (uint32_t t = nt; t-- > 0;) /* back to bucket starts */
        first[t + 1] = first[t];
    first[0] = 0;
    for (uint32_t t = 0; t < nt; t++) {
        if (first[t] == first[t + 1])
            continue;
        uint8_t kind;
        double val = lp_g10_rule_of(a->m, t, tl->res, tl->capacity, &kind);
        for (uint32_t h = first[t]; h < first[t + 1]; h++) {
            uint32_t i = order[h];
            for (size_t k = a->pfirst[ph->phase[i]]; k < a->pfirst[ph->phase[i] + 1]; k++) {
                uint32_t s0, s1; /* a piece of no segment (s0 == s1) adds and takes one: nothing */
                piece_segs(a, tl, w, k, &s0, &s1);
                cnt[s0]++;
                cnt[s1]--;
            }
        }
        double *D = kind == LP_G10_RULE_EXACT ? tl->E : tl->V;
        int32_t c = 0;
        for (uint32_t s = 0; s < n; s++) {
            c += cnt[s];
            cnt[s] = 0;
            if (c)
                D[s] += val * c;
        }
        cnt[n] = 0;
    }
    memset(first, 0, ((size_t)nt + 1) * sizeof *first); /* left zero for the next user */
    return LP_OK;
}

/* Upsample every window; those that cover no segment pass their consumption on. */
static lp_status upsample(lp_g10_attr *a, lp_g10_tl *tl, tlw *w, lp_error *err)
{
    uint32_t n = tl->nseg;
    uint32_t *scr = g10_scratch_get(w->sc, SC_SCR, (size_t)n * sizeof *scr);
    double *ef = g10_scratch_get(w->sc, SC_EF, (size_t)n * sizeof *ef);
    if (!scr || !ef || !(w->len = g10_scratch_get(w->sc, SC_LEN, (size_t)n * sizeof *w->len)))
        return nomem(err);
    for (uint32_t s = 0; tl->f && s < n; s++)
        tl->f[s] = 1;
    for (uint32_t s = 0; s < n; s++)
        w->len[s] = ((double)tl->bound[s + 1] - (double)tl->bound[s]) / 1e9;
    double carry = 0;
    size_t last = SIZE_MAX;
    for (size_t i = 0; i < w->nw; i++) {
        win *wi = &w->w[i];
        wi->s0 = seg_at(a, tl, g10_round(a, wi->w0));
        wi->s1 = seg_at(a, tl, g10_round(a, wi->w1));
        tl->consumed += wi->C;
        if (wi->s0 >= wi->s1) {
            carry += wi->C;
            wi->C = 0;
            tl->merged++;
            continue;
        }
        wi->C += carry;
        carry = 0;
        last = i;
    }
    if (carry > 0) { /* trailing windows shorter than half a slice go into the last one */
        if (last == SIZE_MAX)
            tl->clipped += carry;
        else
            w->w[last].C += carry;
    }
    for (size_t i = 0; i < w->nw; i++) {
        win *wi = &w->w[i];
        if (wi->s0 >= wi->s1)
            continue;
        const double *E = tl->E + wi->s0;
        if (wi->f < 1) { /* effective capacity: the exact demand scaled by what the threads got */
            for (uint32_t s = wi->s0; s < wi->s1; s++)
                ef[s] = tl->E[s] * wi->f, tl->f[s] = wi->f;
            E = ef + wi->s0;
            if (wi->f < a->m->bottleneck)
                tl->contended_s += ((double)tl->bound[wi->s1] - (double)tl->bound[wi->s0]) / 1e9;
        }
        tl->clipped += lp_g10_upsample(wi->s1 - wi->s0, w->len + wi->s0, E, tl->V + wi->s0, tl->capacity, wi->C,
                                       tl->u + wi->s0, tl->x + wi->s0, scr);
        tl->nwin++;
    }
    return LP_OK;
}

/* Prefix sums over the segments, then each phase's usage and bottleneck time. */
static lp_status shares(lp_g10_attr *a, lp_g10_tl *tl, uint32_t k, const g10_tlphases *ph, const tlw *w,
                        lp_g10_tstat *ts, lp_error *err)
{
    uint32_t n = tl->nseg;
    size_t nb = ((size_t)n + 1) * 8;
    double *PX = g10_scratch_get(w->sc, SC_PX, nb), *PY = g10_scratch_get(w->sc, SC_PY, nb);
    int64_t *PG = g10_scratch_get(w->sc, SC_PG, nb), *PL = g10_scratch_get(w->sc, SC_PL, nb);
    int64_t *PU = g10_scratch_get(w->sc, SC_PU, nb);
    if (!PX || !PY || !PG || !PL || !PU)
        return nomem(err);
    double th = a->m->bottleneck * (1 - 1e-12), K = tl->capacity;
    PX[0] = PY[0] = 0;
    PG[0] = PL[0] = PU[0] = 0;
    double bg = 0;
    for (uint32_t s = 0; s < n; s++) {
        double l = w->len[s], y = tl->u[s] - tl->x[s];
        /* a segment outside the run can be long: clamp so the prefix sums cannot overflow */
        double lnd = (double)tl->bound[s + 1] - (double)tl->bound[s];
        int64_t ln = lnd > 4e18 / 8 ? (int64_t)(4e18 / 8) : (int64_t)lnd;
        int g = tl->u[s] >= th * K || (tl->f && tl->f[s] < th), loc = tl->E[s] > 0 && tl->x[s] >= th * tl->E[s];
        PX[s + 1] = PX[s] + (tl->E[s] > 0 ? l * tl->x[s] / tl->E[s] : 0);
        PY[s + 1] = PY[s] + (tl->V[s] > 0 ? l * y / tl->V[s] : 0);
        PG[s + 1] = PG[s] + (g ? ln : 0);
        PL[s + 1] = PL[s] + (loc ? ln : 0);
        PU[s + 1] = PU[s] + (g || loc ? ln : 0);
        if (!(tl->V[s] > 0))
            bg += l * y;
        if (!(tl->E[s] > 0))
            bg += l * tl->x[s]; /* zero: x is 0 without exact demand */
    }
    const lp_g10_exec *x = a->x;
    double total = 0, val = 0;
    uint32_t last_t = LP_G10_NONE; /* the rule of the previous phase's type, kept */
    uint8_t kind = 0;
    for (size_t i = 0; i < ph->n; i++) {
        uint32_t p = ph->phase[i], t = x->type[p];
        if (t != last_t)
            val = lp_g10_rule_of(a->m, t, tl->res, tl->capacity, &kind), last_t = t;
        int exact = kind == LP_G10_RULE_EXACT;
        double used = 0;
        int64_t bn = 0, bg_ns = 0, bl_ns = 0;
        for (size_t q = a->pfirst[p]; q < a->pfirst[p + 1]; q++) {
            uint32_t s0, s1;
            piece_segs(a, tl, w, q, &s0, &s1);
            if (s0 == s1)
                continue; /* would add zeros */
            used += exact ? PX[s1] - PX[s0] : PY[s1] - PY[s0];
            bg_ns += PG[s1] - PG[s0];
            if (exact) {
                bl_ns += PL[s1] - PL[s0];
                bn += PU[s1] - PU[s0];
            } else {
                bn += PG[s1] - PG[s0];
            }
        }
        used *= val;
        total += used;
        a->use[tl->res][ph->slot[i]] = (lp_g10_use){p, k, used, bn};
        lp_g10_tstat *st = &ts[t];
        st->phases++;
        st->active_ns += a->active_ns[p];
        st->used += used;
        st->bn_ns += bn;
        st->bn_global_ns += bg_ns;
        st->bn_local_ns += bl_ns;
    }
    tl->attributed = total;
    tl->background = bg;
    return LP_OK;
}

lp_status g10_tl_build(lp_g10_attr *a, uint32_t k, const lp_g10_series *s, const lp_g10_series *delay,
                       const lp_g10_data *d, const g10_tlphases *ph, lp_diags *ds, lp_g10_tstat *ts, g10_scratch *sc,
                       lp_error *err)
{
    lp_g10_tl *tl = &a->tl[k];
    tlw w = {0};
    w.sc = sc;
    tl->nphases = (uint32_t)ph->n;
    lp_status st = windows(a, tl, s, delay, d, ds, &w, err);
    if (!st && w.nw) {
        w.lo = g10_round(a, w.w[0].w0), w.hi = g10_round(a, w.w[w.nw - 1].w1);
        if (!(st = grid(a, tl, ph, &w, err)) && a->mode == LP_G10_SLICES && sc->grid_gen == 1 &&
            !(w.seg = g10_scratch_get(sc, SC_SEG, 2 * (size_t)a->pfirst[a->x->n] * sizeof *w.seg)))
            st = nomem(err);
        if (!st) {
            size_t n = (size_t)tl->nseg + 1;
            tl->E = lp_calloc(n, sizeof *tl->E);
            tl->V = lp_calloc(n, sizeof *tl->V);
            tl->u = lp_calloc(n, sizeof *tl->u);
            tl->x = lp_calloc(n, sizeof *tl->x);
            tl->f = delay ? lp_malloc(n * sizeof *tl->f) : NULL;
            if (!tl->E || !tl->V || !tl->u || !tl->x || (delay && !tl->f))
                st = nomem(err);
        }
        if (!st)
            st = demand(a, tl, ph, &w, err);
        if (!st)
            st = upsample(a, tl, &w, err);
        if (!st)
            st = shares(a, tl, k, ph, &w, ts, err);
    } else if (!st) {
        /* no window overlaps the run: the phases get nothing, but their uses exist */
        for (size_t i = 0; i < ph->n; i++) {
            uint32_t p = ph->phase[i];
            a->use[tl->res][ph->slot[i]] = (lp_g10_use){p, k, 0, 0};
            ts[a->x->type[p]].phases++;
            ts[a->x->type[p]].active_ns += a->active_ns[p];
        }
    }
    return st;
}
