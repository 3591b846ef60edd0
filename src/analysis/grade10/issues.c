/* issues.c: Grade10's performance issues (issues.h, papers/grade10.txt §III-F): for
 * every resource some phase was bottlenecked on, and for every concurrently repeated
 * phase type, the leaf durations with the issue fixed, replayed against the replay of
 * the recorded durations: by the spans of the changed leaves' ancestors only (respan.c),
 * or, for a run whose recorded order goes against the model's `after` clauses, by the
 * DAG (replay.c). Each candidate lists the leaves it changed for that.
 *
 * Removing resource R's bottleneck from leaf p: over p's active time, wherever p is
 * bottlenecked on R (R saturated, or p at its Exact demand of R), p would run faster
 * until another resource binds: by the least headroom h among its other consumable
 * resources there (1 where it is bottlenecked on one of them; an Exact phase can grow
 * to its demand, h = E/x; a Variable one can take the free capacity, h = (a + K - u)/a;
 * a resource it gets nothing of does not bind), so that stretch takes 1/h of its time
 * (none, where nothing binds). Where R was contended (effective capacity: its threads got
 * a share f < threshold of what they were ready to use), p would run 1/f times faster at
 * most: h is also capped by 1/f there. Time R blocked it (a blocking resource) is removed. The
 * saving is computed in segment time (rounded bounds in slice mode) and applied to the
 * recorded duration as a ratio. The walk: one pass over the leaves, every resource of a
 * leaf at once; within a piece of its active time the instants only grow, so each other
 * timeline is followed with a cursor instead of a search, and where the piece is whole
 * slices of one grid shared by all its timelines (monitoring sampled together), each
 * slice's headroom is computed once per resource and shared by every resource the leaf
 * is bottlenecked on. tests/unit/grade10/test_g10_savings.c has the naive twin.
 *
 * Removing type T's imbalance: every set of T's instances under one parent (two or
 * more) gets the set's mean replayed span; a composite instance is scaled by scaling
 * all its leaves (a replay is homogeneous: scaling every duration scales the span).
 *
 * Removing type T's outliers (not in the paper: its imbalance keeps the straggler's
 * extra work, so it underestimates a run without the straggler): in every set of three
 * or more, the instances over LP_G10_OUTLIER x the set's median span are scaled to the
 * longest of the others; the key value most of them share (the straggling thread or
 * worker) is named.
 *
 * When a timeline of an Exact rule was contended (more exact demand than capacity, or
 * competing load), the imbalance and outlier candidates are estimated again under fluid
 * processor sharing (psreplay.c) and marked so.
 */
#include "longpole/analysis/grade10/issues.h"
#include "analysis/grade10/g10_int.h"
#include "analysis/grade10/psreplay.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

/* One consumable resource of a leaf, with a cursor over its timeline. */
typedef struct other {
    const lp_g10_tl *tl;
    uint8_t kind;
    double val;
    uint32_t s0;         /* the segment holding the current piece's start (0 before the timeline) */
    uint32_t cur;        /* cursor: the segment of the last instant looked up (from s0, forward) */
    int same;            /* slice mode: cut exactly as the previous one in the list (same bounds) */
} other;

/* The cursor of o moved forward to the segment holding t (bound[0] <= t < bound[nseg],
 * t at or after the cursor's segment start): the same segment g10_seg_of finds, by a
 * walk instead of a division or a search (the instants asked within a piece only grow). */
static inline uint32_t seek(other *o, int64_t t)
{
    const lp_g10_tl *tl = o->tl;
    uint32_t s = o->cur;
    while (s + 1 < tl->nseg && tl->bound[s + 1] <= t)
        s++;
    return o->cur = s;
}

/* How much faster a phase could use resource `o` in its segment s before it binds. */
static inline double headroom(const other *o, uint32_t s, double th)
{
    const lp_g10_tl *tl = o->tl;
    double K = tl->capacity, u = tl->u[s], x = tl->x[s];
    if (u >= th * K)
        return 1;
    if (o->kind == LP_G10_RULE_EXACT) {
        if (tl->E[s] > 0 && x >= th * tl->E[s])
            return 1;
        return x > 0 ? tl->E[s] / x : INFINITY;
    }
    double share = tl->V[s] > 0 ? o->val * (u - x) / tl->V[s] : 0;
    return share > 0 ? (share + K - u) / share : INFINITY;
}

/* Time saved in [lo, hi) (p bottlenecked on R = ot[skip] throughout) given its other
 * resources (not monitored at an instant: nothing known to bind there); on the slice
 * grid [lo, hi) is one slice of every timeline. */
static double saved_in(const lp_g10_attr *a, other *ot, size_t no, size_t skip, int64_t lo, int64_t hi, double th,
                       double hmax)
{
    double saved = 0;
    int events = a->mode != LP_G10_SLICES;
    while (lo < hi) {
        int64_t next = hi;
        double h = hmax;
        for (size_t i = 0; i < no; i++) {
            const lp_g10_tl *tl = ot[i].tl;
            if (i == skip || !tl->nseg || lo >= tl->bound[tl->nseg])
                continue;
            if (lo < tl->bound[0]) {
                if (events && tl->bound[0] < next)
                    next = tl->bound[0];
                continue;
            }
            uint32_t s = seek(&ot[i], lo);
            if (events && tl->bound[s + 1] < next)
                next = tl->bound[s + 1];
            double hr = headroom(&ot[i], s, th);
            if (hr < h)
                h = hr;
        }
        saved += (double)(next - lo) * (isinf(h) ? 1.0 : 1.0 - 1.0 / h);
        lo = next;
    }
    return saved;
}

/* One leaf's uses, gathered across resources. */
typedef struct leafuse {
    uint32_t r;
    size_t i;            /* index in a->use[r] */
} leafuse;

/* Are timelines tl and pt cut alike (slice mode: the same slice grid and ends, so the
 * same bounds)? */
static int cut_alike(const lp_g10_attr *a, const lp_g10_tl *tl, const lp_g10_tl *pt)
{
    return tl->nseg == pt->nseg && tl->lead == pt->lead && tl->grid0 == pt->grid0 && tl->nseg &&
           tl->bound[0] == pt->bound[0] && tl->bound[tl->nseg] == pt->bound[pt->nseg] && a->mode == LP_G10_SLICES;
}

/* Every cursor of ot at the start t of a piece (timelines cut alike, as monitoring
 * sampled together usually is, share one lookup); alike[i * ntl + j]: cut_alike of
 * timelines j and i. */
static void cursors_at(const lp_g10_attr *a, other *ot, size_t no, int64_t t, const uint8_t *alike)
{
    for (size_t i = 0; i < no; i++) {
        const lp_g10_tl *tl = ot[i].tl;
        uint32_t s = 0;
        ot[i].same = i && alike[(size_t)(ot[i - 1].tl - a->tl) * a->ntl + (size_t)(tl - a->tl)];
        if (ot[i].same)
            s = ot[i - 1].s0; /* the same slice grid and ends: the same bounds, the same segment */
        else if (tl->nseg && t >= tl->bound[tl->nseg])
            s = tl->nseg - 1;
        else if (tl->nseg && t > tl->bound[0])
            s = g10_seg_of(a, tl, t);
        ot[i].s0 = ot[i].cur = s;
    }
}

/* d / slice when d is a whole number (>= 1) of slices, else 0; the quotient guessed in
 * floating point and checked in integers (a division only when the guess cannot be). */
static int64_t whole_slices(int64_t d, int64_t slice)
{
    if (d <= 0)
        return 0;
    int64_t k = (int64_t)((double)d / (double)slice + 0.5), p;
    if (k > 0 && k < ((int64_t)1 << 50) && !__builtin_mul_overflow(k, slice, &p))
        return p == d ? k : 0;
    return d % slice ? 0 : d / slice;
}

/* Is R = ot[j] bottlenecked in its segment s (saturated, or p at its Exact demand), or
 * contended (*cont)? */
static inline int bn_at(const other *o, uint32_t s, double th, int *cont)
{
    const lp_g10_tl *tl = o->tl;
    int bn = tl->u[s] >= th * tl->capacity || (o->kind == LP_G10_RULE_EXACT && tl->E[s] > 0 && tl->x[s] >= th * tl->E[s]);
    *cont = !bn && tl->f && tl->f[s] < th;
    return bn || *cont;
}

/* The most a leaf contended on R in segment s could speed up (1/f), unbounded where not. */
static inline double hmax_at(const lp_g10_tl *tl, uint32_t s, int cont)
{
    return cont ? 1 / (tl->f[s] > 0 ? tl->f[s] : 1e-9) : INFINITY;
}

/* Slice mode: is piece [ps, pe) n whole slices of the grid of every timeline in ot (the
 * slice i of the piece segment s0 + i of each, cursors_at done)? Then the walk below
 * gives the same sums as saved_in slice by slice: every timeline is cut at the same
 * instants, each slice one segment of each. */
static int piece_on_grid(const lp_g10_attr *a, const other *ot, size_t no, int64_t ps, int64_t pe, uint32_t *n)
{
    int64_t k = a->mode == LP_G10_SLICES ? whole_slices(pe - ps, a->slice_ns) : 0;
    if (!k)
        return 0;
    for (size_t i = 0; i < no; i++) {
        const lp_g10_tl *tl = ot[i].tl;
        uint32_t s0 = ot[i].s0;
        if (ot[i].same)
            continue; /* checked with the previous one */
        if (!tl->nseg || s0 < tl->lead || k > (int64_t)tl->nseg - s0 || tl->bound[s0] != ps ||
            tl->bound[s0 + k] != pe || tl->bound[s0 + k] - tl->grid0 != (int64_t)(s0 + k - tl->lead) * a->slice_ns)
            return 0;
    }
    *n = (uint32_t)k;
    return 1;
}

/* The savings of piece [ps, pe) on the grid (piece_on_grid): per slice, every resource's
 * headroom once, then for each resource the leaf is bottlenecked on, the least of the
 * others'. */
static void piece_savings_grid(const lp_g10_attr *a, const other *ot, size_t no, const int *isbn, uint32_t n,
                               double th, double *saved)
{
    double len = (double)a->slice_ns;
    for (uint32_t i = 0; i < n; i++) {
        /* every resource's headroom, and the least two (the least of the others is the
         * least one's, or, for the least itself, the second's) */
        double h1 = INFINITY, h2 = INFINITY;
        size_t o1 = SIZE_MAX;
        for (size_t o = 0; o < no; o++) {
            double h = headroom(&ot[o], ot[o].s0 + i, th);
            if (h < h1)
                h2 = h1, h1 = h, o1 = o;
            else if (h < h2)
                h2 = h;
        }
        for (size_t j = 0; j < no; j++) {
            int cont;
            if (!isbn[j] || !bn_at(&ot[j], ot[j].s0 + i, th, &cont))
                continue;
            double h = hmax_at(ot[j].tl, ot[j].s0 + i, cont), least = j == o1 ? h2 : h1;
            if (least < h)
                h = least;
            saved[j] += len * (isinf(h) ? 1.0 : 1.0 - 1.0 / h);
        }
    }
}

/* Time leaf p would save without resource lu[k]'s bottleneck, in segment time, for
 * every k (0 where it is not bottlenecked). */
static void leaf_savings(const lp_g10_attr *a, uint32_t p, const leafuse *lu, size_t nl, const uint8_t *alike,
                         double *out)
{
    const lp_g10_model *m = a->m;
    other ot[64];
    size_t no = 0, mine[64]; /* ot[j] belongs to lu[mine[j]] */
    int need = 0;
    for (size_t k = 0; k < nl; k++) {
        const lp_g10_use *u = &a->use[lu[k].r][lu[k].i];
        out[k] = 0;
        need |= u->bn_ns > 0 && m->res[lu[k].r].kind == LP_G10_CONSUMABLE && u->tl != LP_G10_NONE;
        if (m->res[lu[k].r].kind == LP_G10_BLOCKING)
            out[k] = (double)u->bn_ns;
        if (m->res[lu[k].r].kind != LP_G10_CONSUMABLE || u->tl == LP_G10_NONE || no == 64)
            continue;
        uint8_t kind;
        double val = lp_g10_rule_of(m, a->x->type[p], lu[k].r, a->tl[u->tl].capacity, &kind);
        mine[no] = k;
        ot[no].tl = &a->tl[u->tl], ot[no].kind = kind, ot[no].val = val, ot[no].same = 0;
        no++;
    }
    if (!need)
        return;
    const int64_t *ps, *pe;
    size_t npc = g10_leaf_pieces(a, p, &ps, &pe);
    double th = m->bottleneck * (1 - 1e-12), saved[64];
    int isbn[64];
    for (size_t j = 0; j < no; j++)
        saved[j] = 0, isbn[j] = a->use[lu[mine[j]].r][lu[mine[j]].i].bn_ns > 0;
    for (size_t k = 0; k < npc; k++) {
        cursors_at(a, ot, no, ps[k], alike);
        uint32_t n;
        if (piece_on_grid(a, ot, no, ps[k], pe[k], &n)) {
            piece_savings_grid(a, ot, no, isbn, n, th, saved);
            continue;
        }
        for (size_t j = 0; j < no; j++) {
            if (!isbn[j])
                continue;
            const lp_g10_tl *tl = ot[j].tl;
            for (size_t q = 0; q < no; q++) /* the others' cursors back to the piece's start */
                ot[q].cur = ot[q].s0;
            int64_t lo = ps[k] > tl->bound[0] ? ps[k] : tl->bound[0];
            int64_t hi = pe[k] < tl->bound[tl->nseg] ? pe[k] : tl->bound[tl->nseg];
            for (uint32_t s = lo < hi ? ot[j].s0 : tl->nseg; s < tl->nseg && tl->bound[s] < hi; s++) {
                int cont; /* contended: at most 1/f faster */
                if (!bn_at(&ot[j], s, th, &cont))
                    continue;
                int64_t a0 = tl->bound[s] > lo ? tl->bound[s] : lo, a1 = tl->bound[s + 1] < hi ? tl->bound[s + 1] : hi;
                saved[j] += saved_in(a, ot, no, j, a0, a1, th, hmax_at(tl, s, cont));
            }
        }
    }
    for (size_t j = 0; j < no; j++)
        if (isbn[j])
            out[mine[j]] = saved[j];
}

/* The leaves one resource's bottleneck removal shortens, with their new durations, in
 * leaf order (few, next to the leaves: no array over every use). */
typedef struct shortened {
    uint32_t p;
    int64_t dur;
} shortened;
typedef struct shortlist {
    shortened *v;
    size_t n, cap;
} shortlist;

/* Leaf p's duration once `saved` (segment time) is removed from it, or -1 if unchanged. */
static int64_t shortened_dur(const lp_g10_attr *a, uint32_t p, double saved)
{
    const lp_g10_exec *x = a->x;
    int64_t S, E;
    int wid;
    g10_bounds(a, p, &S, &E, &wid);
    if (E <= S)
        return -1;
    double keep = 1 - saved / (double)(E - S);
    int64_t d = x->end[p] - x->start[p];
    int64_t nd = keep > 0 ? (int64_t)llround((double)d * keep) : 0;
    return nd < d ? nd : -1;
}

/* For every resource r, the leaves shortened without r's bottleneck: sl[r]. One sweep
 * over the leaves with a cursor per resource (each use array is read once, in order). */
static lp_status all_savings(const lp_g10_attr *a, shortlist *sl, lp_error *err)
{
    const lp_g10_model *m = a->m;
    size_t *cur = lp_calloc(m->nres + 1, sizeof *cur), w = (size_t)m->nres + 1;
    uint32_t *rows = g10_type_rows(m, G10_ROWS_BLOCKING | G10_ROWS_CONSUMABLE); /* row t of w */
    uint8_t *alike = lp_malloc((size_t)a->ntl * a->ntl + 1);
    leafuse lu[64];
    double out[64];
    lp_status st = cur && rows && alike ? LP_OK : nomem(err);
    for (uint32_t i = 0; !st && i < a->ntl; i++)
        for (uint32_t j = 0; j < a->ntl; j++)
            alike[(size_t)i * a->ntl + j] = (uint8_t)cut_alike(a, &a->tl[j], &a->tl[i]);
    for (uint32_t p = 0; p < a->x->n && !st; p++) {
        if (!lp_g10_is_leaf(a->x, p))
            continue;
        size_t nl = 0;
        int any = 0;
        const uint32_t *row = rows + (size_t)a->x->type[p] * w;
        for (uint32_t i = 1; i <= row[0] && nl < 64; i++) {
            uint32_t r = row[i];
            if (cur[r] < a->nuse[r] && a->use[r][cur[r]].phase == p) {
                any |= a->use[r][cur[r]].bn_ns > 0;
                lu[nl++] = (leafuse){r, cur[r]++};
                if (cur[r] + 12 < a->nuse[r]) /* a dozen leaves ahead: with the timelines walked
                                                 too, the hardware loses these streams */
                    __builtin_prefetch(&a->use[r][cur[r] + 12]);
            }
        }
        if (!any)
            continue;
        leaf_savings(a, p, lu, nl, alike, out);
        for (size_t k = 0; k < nl && !st; k++) {
            int64_t nd = out[k] > 0 ? shortened_dur(a, p, out[k]) : -1;
            shortlist *l = &sl[lu[k].r];
            if (nd < 0)
                continue;
            if (lp_grow_at(&l->v, &l->cap, l->n + 1, sizeof *l->v))
                st = nomem(err);
            else
                l->v[l->n++] = (shortened){p, nd};
        }
    }
    lp_free(cur), lp_free(rows), lp_free(alike);
    return st;
}

static void free_savings(const lp_g10_attr *a, shortlist *sl)
{
    for (uint32_t r = 0; sl && r < a->m->nres; r++)
        lp_free(sl[r].v);
    lp_free(sl);
}

lp_status lp_g10_without_bottleneck(const lp_g10_attr *a, uint32_t r, int64_t *dur, uint64_t *changed, lp_error *err)
{
    shortlist *sl = lp_calloc(a->m->nres + 1, sizeof *sl);
    lp_status st = sl ? all_savings(a, sl, err) : nomem(err);
    *changed = 0;
    for (size_t i = 0; !st && i < sl[r].n; i++)
        dur[sl[r].v[i].p] = sl[r].v[i].dur, ++*changed;
    free_savings(a, sl);
    return st;
}

/* Multiply every leaf duration in i's subtree by s. */
static void scale_subtree(const lp_g10_exec *x, uint32_t i, double s, int64_t *dur)
{
    for (uint32_t l = i; l < i + x->size[i]; l++)
        if (x->size[l] == 1)
            dur[l] = (int64_t)llround((double)dur[l] * s);
}

lp_status lp_g10_without_imbalance(const lp_g10_exec *x, uint32_t type, const int64_t *span, int64_t *dur,
                                   uint64_t *changed, lp_error *err)
{
    (void)err;
    *changed = 0;
    for (uint32_t p = 0; p < x->n; p++) {
        if (x->size[p] == 1 || x->m->type[type].parent != x->type[p])
            continue;
        uint64_t k = 0;
        double sum = 0;
        for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c])
            if (x->type[c] == type)
                k++, sum += (double)span[c];
        if (k < 2)
            continue;
        double mean = sum / (double)k;
        for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
            if (x->type[c] != type || span[c] <= 0 || (double)span[c] == mean)
                continue;
            scale_subtree(x, c, mean / (double)span[c], dur);
            *changed += x->size[c] == 1 ? 1 : 0;
            if (x->size[c] > 1)
                for (uint32_t l = c; l < c + x->size[c]; l++)
                    *changed += x->size[l] == 1;
        }
    }
    return LP_OK;
}

static int cmp_i64(const void *p, const void *q)
{
    int64_t a = *(const int64_t *)p, b = *(const int64_t *)q;
    return (a > b) - (a < b);
}

/* Outliers of the set of `type` under parent p: scaled down into dur; counted into v and
 * their key values into keys (exec strs -> count). *spp: scratch, grown to the set's size. */
static lp_status set_outliers(const lp_g10_exec *x, uint32_t p, uint32_t type, const int64_t *span, int64_t *dur,
                              int64_t **spp, size_t *cap, lp_hmap *keys, lp_g10_issue *v, lp_error *err)
{
    size_t k = 0;
    for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c])
        if (x->type[c] == type) {
            if (lp_grow_at(spp, cap, k + 1, sizeof **spp))
                return nomem(err);
            (*spp)[k++] = span[c];
        }
    int64_t *sp = *spp;
    if (k < 3)
        return LP_OK;
    if (k <= 32) { /* the usual small set: insertion sort (the same order as qsort's: values only) */
        for (size_t i = 1; i < k; i++) {
            int64_t s = sp[i];
            size_t j = i;
            for (; j > 0 && sp[j - 1] > s; j--)
                sp[j] = sp[j - 1];
            sp[j] = s;
        }
    } else {
        qsort(sp, k, sizeof *sp, cmp_i64);
    }
    double med = k % 2 ? (double)sp[k / 2] : ((double)sp[k / 2 - 1] + (double)sp[k / 2]) / 2;
    double lim = LP_G10_OUTLIER * med;
    int64_t typical = -1; /* the longest span at or under the limit */
    for (size_t i = 0; i < k; i++)
        if ((double)sp[i] <= lim)
            typical = sp[i];
    if (typical <= 0)
        return LP_OK;
    for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
        if (x->type[c] != type || (double)span[c] <= lim)
            continue;
        scale_subtree(x, c, (double)typical / (double)span[c], dur);
        v->instances++;
        for (uint32_t l = c; l < c + x->size[c]; l++)
            v->phases += x->size[l] == 1;
        if (x->key[c] != LP_STR_NONE) {
            uint64_t n = 0;
            lp_hmap_get(keys, x->key[c], &n);
            lp_status st = lp_hmap_put(keys, x->key[c], n + 1, err);
            if (st)
                return st;
        }
    }
    return LP_OK;
}

lp_status lp_g10_without_outliers(const lp_g10_exec *x, uint32_t type, const int64_t *span, int64_t *dur,
                                  lp_g10_issue *v, lp_error *err)
{
    v->phases = v->instances = v->key_count = 0;
    v->key = LP_STR_NONE;
    int64_t *sp = NULL; /* scratch: the spans of one set */
    size_t cap = 0;
    lp_hmap keys;
    lp_status st = lp_hmap_init(&keys, 16, err);
    if (st)
        return st;
    for (uint32_t p = 0; p < x->n && !st; p++)
        if (x->size[p] > 1 && x->m->type[type].parent == x->type[p])
            st = set_outliers(x, p, type, span, dur, &sp, &cap, &keys, v, err);
    for (uint32_t i = 0; !st && i < x->n; i++) { /* the most common key, first in instance order on ties */
        uint64_t n;
        if (x->type[i] == type && x->key[i] != LP_STR_NONE && lp_hmap_get(&keys, x->key[i], &n) && n > v->key_count)
            v->key = x->key[i], v->key_count = n;
    }
    lp_hmap_release(&keys);
    lp_free(sp);
    return st;
}

static int cmp_issue(const void *p, const void *q)
{
    const lp_g10_issue *x = p, *y = q;
    if (x->gain_ns != y->gain_ns)
        return x->gain_ns > y->gain_ns ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->kind == LP_G10_ISSUE_BOTTLENECK ? (x->res > y->res) - (x->res < y->res)
                                               : (x->type > y->type) - (x->type < y->type);
}

static lp_status push(lp_g10_issues *is, size_t *cap, lp_g10_issue v, lp_error *err)
{
    if (lp_grow_at(&is->v, cap, is->n + 1, sizeof *is->v))
        return nomem(err);
    is->v[is->n++] = v;
    return LP_OK;
}

/* The replays of the candidates: the DAG's (replay.c), or, when the run allows it, the
 * spans above the changed leaves only (respan.c). */
typedef struct replayer {
    const lp_g10_exec *x;
    lp_g10_replay rp;        /* built only without `incremental` */
    g10_respan rs;
    int incremental;
    uint32_t *changed;   /* [n] scratch: the leaves a candidate changed */
    size_t nchanged;
} replayer;

/* One candidate with v.saved_ns set and its changed leaves listed: replay the changed
 * durations, record the gain. */
static lp_status replayed(replayer *R, lp_g10_issues *is, size_t *cap, lp_g10_issue v, const int64_t *dur,
                          lp_error *err)
{
    if (!R->incremental)
        v.makespan = lp_g10_replay_run(&R->rp, dur, NULL, NULL);
    else {
        lp_status st = g10_respan_run(&R->rs, dur, R->changed, R->nchanged, &v.makespan, err);
        if (st)
            return st;
    }
    v.gain_ns = is->baseline - v.makespan;
    v.gain = is->baseline > 0 ? (double)v.gain_ns / (double)is->baseline : 0;
    v.reported = v.gain_ns > 0 && v.gain >= is->threshold;
    return push(is, cap, v, err);
}

/* One candidate: the time its changed durations remove and the leaves they change,
 * then replayed. */
static lp_status candidate(replayer *R, lp_g10_issues *is, size_t *cap, lp_g10_issue v, const int64_t *base,
                           const int64_t *dur, lp_error *err)
{
    const lp_g10_exec *x = R->x;
    v.saved_ns = 0;
    R->nchanged = 0;
    for (uint32_t i = 0; i < x->n; i++)
        if (x->size[i] == 1 && dur[i] != base[i]) {
            v.saved_ns += base[i] - dur[i];
            R->changed[R->nchanged++] = i;
        }
    return replayed(R, is, cap, v, dur, err);
}

/* dur back to base after a candidate: its changed leaves when it was replayed (the
 * others are equal to base), everything otherwise. */
static void restore(const replayer *R, uint64_t replayed_phases, const int64_t *base, int64_t *dur)
{
    if (!replayed_phases) {
        memcpy(dur, base, R->x->n * sizeof *dur);
        return;
    }
    for (size_t i = 0; i < R->nchanged; i++)
        dur[R->changed[i]] = base[R->changed[i]];
}

lp_status lp_g10_issues_find(const lp_g10_attr *a, double threshold, lp_g10_issues *out, lp_error *err)
{
    const lp_g10_exec *x = a->x;
    const lp_g10_model *m = a->m;
    memset(out, 0, sizeof *out);
    out->threshold = threshold >= 0 ? threshold : m->issue_min;
    out->recorded = x->end[0] - x->start[0];
    replayer R;
    memset(&R, 0, sizeof R);
    R.x = x;
    lp_status st = LP_OK;
    /* three arrays over the instances (fresh memory is slow to touch on some machines):
     * the recorded durations, the baseline's spans, and the candidates' durations (which
     * first hold the baseline's ends) */
    int64_t *base = lp_malloc(x->n * sizeof *base), *rs = lp_malloc(x->n * sizeof *rs);
    int64_t *dur = lp_malloc(x->n * sizeof *dur);
    size_t cap = 0;
    if (!base || !dur || !rs)
        st = nomem(err);
    for (uint32_t i = 0; !st && i < x->n; i++)
        base[i] = x->size[i] == 1 ? x->end[i] - x->start[i] : 0;
    if (!st)
        st = g10_respan_init(&R.rs, x, rs, &R.incremental, err);
    if (!st && R.incremental) {
        out->baseline = g10_respan_all(&R.rs, base, rs); /* the baseline's spans */
    } else if (!st && !(st = lp_g10_replay_init(&R.rp, x, err))) {
        out->baseline = lp_g10_replay_run(&R.rp, base, rs, dur);
        for (uint32_t i = 0; i < x->n; i++)
            rs[i] = dur[i] - rs[i]; /* the baseline's spans */
    }
    if (!st && !(R.changed = lp_malloc(((size_t)x->n + 1) * sizeof *R.changed)))
        st = nomem(err);
    shortlist *sl = st ? NULL : lp_calloc(m->nres + 1, sizeof *sl);
    if (!st)
        st = sl ? all_savings(a, sl, err) : nomem(err);
    if (!st)
        memcpy(dur, base, x->n * sizeof *dur);
    for (uint32_t r = 0; !st && r < m->nres; r++) { /* dur is base outside the candidate */
        lp_g10_issue v = {LP_G10_ISSUE_BOTTLENECK, r, LP_G10_NONE, 0, LP_STR_NONE, 0, 0, 0, 0, 0, 0, 0, 0};
        R.nchanged = 0;
        for (size_t i = 0; i < sl[r].n; i++) {
            dur[sl[r].v[i].p] = sl[r].v[i].dur, v.saved_ns += base[sl[r].v[i].p] - sl[r].v[i].dur;
            R.changed[R.nchanged++] = sl[r].v[i].p;
        }
        v.phases = sl[r].n;
        if (v.phases)
            st = replayed(&R, out, &cap, v, dur, err);
        for (size_t i = 0; i < sl[r].n; i++)
            dur[sl[r].v[i].p] = base[sl[r].v[i].p];
    }
    free_savings(a, sl);
    for (uint32_t t = 1; !st && t < m->ntypes; t++) {
        if (m->type[t].repeat != LP_G10_CONCURRENT)
            continue;
        lp_g10_issue v = {LP_G10_ISSUE_IMBALANCE, LP_G10_NONE, t, 0, LP_STR_NONE, 0, 0, 0, 0, 0, 0, 0, 0};
        if (!(st = lp_g10_without_imbalance(x, t, rs, dur, &v.phases, err)) && v.phases)
            st = candidate(&R, out, &cap, v, base, dur, err);
        restore(&R, v.phases, base, dur);
        lp_g10_issue o = {LP_G10_ISSUE_OUTLIER, LP_G10_NONE, t, 0, LP_STR_NONE, 0, 0, 0, 0, 0, 0, 0, 0};
        if (!st && !(st = lp_g10_without_outliers(x, t, rs, dur, &o, err)) && o.phases)
            st = candidate(&R, out, &cap, o, base, dur, err);
        restore(&R, o.phases, base, dur);
    }
    if (!st) /* a contended CPU: imbalance and outliers again under processor sharing (psreplay.c) */
        st = g10_ps_issues(a, out, err);
    if (!st && out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, cmp_issue);
    lp_free(base), lp_free(dur), lp_free(rs), lp_free(R.changed);
    g10_respan_release(&R.rs);
    lp_g10_replay_release(&R.rp);
    if (st)
        lp_g10_issues_release(out);
    return st;
}

void lp_g10_issues_release(lp_g10_issues *is)
{
    lp_free(is->v);
    memset(is, 0, sizeof *is);
}
