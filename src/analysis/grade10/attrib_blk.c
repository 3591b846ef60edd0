/* attrib_blk.c: blocking resources (papers/grade10.txt §III-B) in the attribution:
 * the input's intervals grouped into instances by (resource, host, scope), sorted and
 * merged; for every leaf phase the instances that stop it (its type's rule on the
 * resource is Full, the host matches or the instance is for every host, and the phase
 * or an ancestor carries every scope key); and a leaf's active pieces: its bounds
 * minus the blocked intervals, rounded to slices in slice mode.
 */
#include "analysis/grade10/g10_int.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

void g10_pieces_release(g10_pieces *pc)
{
    lp_free(pc->s);
    lp_free(pc->e);
    memset(pc, 0, sizeof *pc);
}

static lp_status piece_add(g10_pieces *pc, int64_t s, int64_t e, lp_error *err)
{
    if (pc->n == pc->cap) {
        size_t c = pc->cap ? pc->cap * 2 : 16;
        int64_t *ns = lp_reallocarray(pc->s, c, sizeof *ns);
        if (!ns)
            return nomem(err);
        pc->s = ns;
        int64_t *ne = lp_reallocarray(pc->e, c, sizeof *ne);
        if (!ne)
            return nomem(err);
        pc->e = ne;
        pc->cap = c;
    }
    pc->s[pc->n] = s;
    pc->e[pc->n] = e;
    pc->n++;
    return LP_OK;
}

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

int64_t g10_round(const lp_g10_attr *a, int64_t t)
{
    if (a->mode != LP_G10_SLICES)
        return t;
    int64_t u, back;
    if (a->origin && !__builtin_sub_overflow(t, a->origin, &u)) { /* on the grid from the origin */
        int64_t d = a->slice_ns, r = floor_div(u, d), rem = u - r * d;
        if (rem >= d / 2) /* half up, as below */
            r++;
        if (!__builtin_mul_overflow(r, d, &u) && !__builtin_add_overflow(u, a->origin, &back))
            return back;
    }
    int64_t d = a->slice_ns, h;
    if (__builtin_add_overflow(t, d / 2, &h))
        return floor_div(t, d) * d;
    int64_t r = floor_div(h, d);
    return r < INT64_MIN / d ? floor_div(t, d) * d + d : r * d;
}

/* ---- instances ---------------------------------------------------------------------- */

typedef struct bkey {
    const lp_g10_attr *a;
    uint32_t res;
    lp_str host;
    const lp_str *scope;
    uint32_t nscope;
} bkey;

static int blk_eq(const void *ctx, uint64_t v)
{
    const bkey *k = ctx;
    const lp_g10_blk *b = &k->a->blk[v];
    return b->res == k->res && b->host == k->host && b->nscope == k->nscope &&
           (!k->nscope || memcmp(b->scope, k->scope, 2 * k->nscope * sizeof *k->scope) == 0);
}

/* An input string in the exec's table (LP_STR_NONE if the exec never saw it). */
static lp_str exec_str(const lp_g10_exec *x, const lp_g10_data *d, lp_str s)
{
    return lp_strtab_find(&x->strs, lp_strtab_get(&d->strs, s), lp_strtab_len(&d->strs, s));
}

static int cmp_i64pair(const void *p, const void *q)
{
    const int64_t *x = p, *y = q;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Sort and merge one instance's intervals. */
static lp_status merge_intervals(lp_g10_blk *b, lp_error *err)
{
    /* (empty intervals, from rounding, are dropped) */
    int64_t *pairs = lp_malloc(2 * b->n * sizeof *pairs + 1);
    if (!pairs)
        return nomem(err);
    for (size_t i = 0; i < b->n; i++)
        pairs[2 * i] = b->s[i], pairs[2 * i + 1] = b->e[i];
    qsort(pairs, b->n, 2 * sizeof *pairs, cmp_i64pair);
    size_t k = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (pairs[2 * i] >= pairs[2 * i + 1])
            continue;
        if (k && pairs[2 * i] <= b->e[k - 1]) {
            if (pairs[2 * i + 1] > b->e[k - 1])
                b->e[k - 1] = pairs[2 * i + 1];
            continue;
        }
        b->s[k] = pairs[2 * i];
        b->e[k] = pairs[2 * i + 1];
        k++;
    }
    b->n = k;
    lp_free(pairs);
    return LP_OK;
}

static lp_status add_block(lp_g10_attr *a, lp_hmap *idx, size_t *capblk, const lp_g10_data *d, const lp_g10_block *in,
                           uint32_t res, lp_error *err)
{
    lp_str scope[64];
    uint32_t ns = in->scope ? d->pool[in->scope] : 0;
    if (ns > 32)
        ns = 32;
    for (uint32_t i = 0; i < 2 * ns; i++)
        scope[i] = exec_str(a->x, d, d->pool[in->scope + 1 + i]);
    lp_str host = LP_STR_EMPTY;
    if (in->host != LP_STR_EMPTY &&
        lp_strtab_intern(&a->strs, lp_strtab_get(&d->strs, in->host), lp_strtab_len(&d->strs, in->host), &host))
        return nomem(err);
    bkey k = {a, res, host, scope, ns};
    uint64_t h = lp_hash_mix(lp_hash_mix(res, host), ns ? lp_hash_bytes(scope, 2 * ns * sizeof *scope) : 0);
    uint64_t v = lp_hmap_find(idx, h, blk_eq, &k, NULL);
    if (v == LP_HMAP_EMPTY) {
        if (lp_grow_at(&a->blk, capblk, a->nblk + 1, sizeof *a->blk))
            return nomem(err);
        lp_g10_blk *b = &a->blk[a->nblk];
        memset(b, 0, sizeof *b);
        b->res = res;
        b->host = host;
        b->nscope = ns;
        if (ns && !(b->scope = lp_malloc(2 * ns * sizeof *b->scope)))
            return nomem(err);
        if (ns)
            memcpy(b->scope, scope, 2 * ns * sizeof *scope);
        v = a->nblk++;
        lp_status st = lp_hmap_add(idx, h, v, err);
        if (st)
            return st;
    }
    lp_g10_blk *b = &a->blk[v];
    if (b->n == b->cap) {
        size_t nc = b->cap ? 2 * b->cap : 8;
        int64_t *nsv = lp_reallocarray(b->s, nc, sizeof *nsv), *ne;
        if (!nsv)
            return nomem(err);
        b->s = nsv;
        if (!(ne = lp_reallocarray(b->e, nc, sizeof *ne)))
            return nomem(err);
        b->e = ne;
        b->cap = nc;
    }
    b->s[b->n] = in->start;
    b->e[b->n] = in->end;
    b->n++;
    return LP_OK;
}

/* Which instances stop which leaves: a CSR over the exec's instances. */
static lp_status leaf_blocks(lp_g10_attr *a, lp_error *err)
{
    const lp_g10_exec *x = a->x;
    const lp_g10_model *m = a->m;
    if (!(a->pblk_first = lp_calloc((size_t)x->n + 1, sizeof *a->pblk_first)))
        return nomem(err);
    size_t cap = 0, n = 0;
    for (uint32_t p = 0; p < x->n; p++) {
        a->pblk_first[p] = (uint32_t)n;
        if (!lp_g10_is_leaf(x, p))
            continue;
        lp_str host = a->only_host;
        if (x->host[p] != LP_G10_NONE) {
            const char *h = lp_g10_exec_str(x, x->hosts[x->host[p]]);
            host = lp_strtab_find(&a->strs, h, strlen(h));
        }
        for (uint32_t g = 0; g < a->nblk; g++) {
            const lp_g10_blk *b = &a->blk[g];
            if (m->rkind[(size_t)x->type[p] * m->nres + b->res] != LP_G10_RULE_FULL)
                continue;
            if (b->host != LP_STR_EMPTY && b->host != host)
                continue;
            int ok = 1;
            for (uint32_t i = 0; i < b->nscope && ok; i++)
                ok = b->scope[2 * i] != LP_STR_NONE && b->scope[2 * i + 1] != LP_STR_NONE &&
                     lp_g10_exec_has_key(x, p, b->scope[2 * i], b->scope[2 * i + 1]);
            if (!ok)
                continue;
            if (lp_grow_at(&a->pblk, &cap, n + 1, sizeof *a->pblk))
                return nomem(err);
            a->pblk[n++] = g;
        }
    }
    a->pblk_first[x->n] = (uint32_t)n;
    return LP_OK;
}

lp_status g10_blocking_build(lp_g10_attr *a, const lp_g10_data *d, lp_diags *ds, lp_error *err)
{
    const lp_g10_model *m = a->m;
    lp_hmap idx = {0};
    size_t capblk = 0;
    lp_status st = LP_OK;
    for (size_t i = 0; i < d->nblk && !st; i++) {
        const lp_g10_block *in = &d->blk[i];
        const char *name = lp_strtab_get(&d->strs, in->resource);
        uint32_t res = LP_G10_NONE;
        for (uint32_t r = 0; r < m->nres && res == LP_G10_NONE; r++)
            if (m->res[r].kind == LP_G10_BLOCKING && strcmp(lp_g10_model_str(m, m->res[r].metric), name) == 0)
                res = r;
        if (res == LP_G10_NONE) {
            if (a->unknown_blocking++ < G10_KEEP)
                lp_diags_report(ds, LP_SEV_WARNING, LP_RULE_IMPORT, lp_strtab_get(&d->strs, in->file), in->line,
                                "blocking resource '%s' is not in the model: interval ignored", name);
            continue;
        }
        st = add_block(a, &idx, &capblk, d, in, res, err);
    }
    lp_hmap_release(&idx);
    for (uint32_t g = 0; g < a->nblk && !st; g++) {
        lp_g10_blk *b = &a->blk[g];
        if (a->mode == LP_G10_SLICES) /* only rounded bounds are ever used: round once */
            for (size_t i = 0; i < b->n; i++)
                b->s[i] = g10_round(a, b->s[i]), b->e[i] = g10_round(a, b->e[i]);
        st = merge_intervals(b, err);
    }
    if (!st)
        st = leaf_blocks(a, err);
    return st;
}

/* ---- active pieces ------------------------------------------------------------------ */

static int cmp_piece(const void *p, const void *q)
{
    const int64_t *x = p, *y = q;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}


void g10_bounds(const lp_g10_attr *a, uint32_t p, int64_t *S, int64_t *E, int *widened)
{
    const lp_g10_exec *x = a->x;
    int64_t lo = x->start[p], hi = x->end[p];
    *S = g10_round(a, lo);
    *E = g10_round(a, hi);
    *widened = 0;
    if (*S == *E && hi > lo && a->mode == LP_G10_SLICES) {
        *S = floor_div(lo + (hi - lo) / 2, a->slice_ns) * a->slice_ns;
        *E = *S + a->slice_ns;
        *widened = 1;
    }
}

/* The blocked intervals of leaf p inside [S, E) (of resource r only, or of all when r
 * is LP_G10_NONE), rounded like the bounds, appended to pc unsorted. */
static lp_status blocked_pieces(const lp_g10_attr *a, uint32_t p, uint32_t r, int64_t S, int64_t E, g10_pieces *pc,
                                lp_error *err)
{
    lp_status st = LP_OK;
    for (uint32_t k = a->pblk_first[p]; k < a->pblk_first[p + 1] && !st; k++) {
        const lp_g10_blk *b = &a->blk[a->pblk[k]];
        if (r != LP_G10_NONE && b->res != r)
            continue;
        size_t l = 0, h = b->n; /* first interval ending after S (bounds rounded at build time) */
        while (l < h) {
            size_t mid = l + (h - l) / 2;
            if (b->e[mid] <= S)
                l = mid + 1;
            else
                h = mid;
        }
        for (size_t i = l; i < b->n && b->s[i] < E && !st; i++) {
            int64_t bs = b->s[i], be = b->e[i];
            if (bs < S)
                bs = S;
            if (be > E)
                be = E;
            if (bs < be)
                st = piece_add(pc, bs, be, err);
        }
    }
    return st;
}

static lp_status sort_pieces(g10_pieces *pc, lp_error *err)
{
    size_t nb = pc->n;
    if (nb < 2)
        return LP_OK;
    int64_t *pairs = lp_malloc(2 * nb * sizeof *pairs);
    if (!pairs)
        return nomem(err);
    for (size_t i = 0; i < nb; i++)
        pairs[2 * i] = pc->s[i], pairs[2 * i + 1] = pc->e[i];
    qsort(pairs, nb, 2 * sizeof *pairs, cmp_piece);
    for (size_t i = 0; i < nb; i++)
        pc->s[i] = pairs[2 * i], pc->e[i] = pairs[2 * i + 1];
    lp_free(pairs);
    return LP_OK;
}

lp_status g10_blocked_ns(const lp_g10_attr *a, uint32_t p, uint32_t r, g10_pieces *pc, int64_t *out, lp_error *err)
{
    int64_t S, E;
    int wid;
    g10_bounds(a, p, &S, &E, &wid);
    pc->n = 0;
    *out = 0;
    lp_status st = blocked_pieces(a, p, r, S, E, pc, err);
    if (!st)
        st = sort_pieces(pc, err);
    if (st)
        return st;
    int64_t cur = S;
    for (size_t i = 0; i < pc->n; i++) {
        int64_t s = pc->s[i] > cur ? pc->s[i] : cur;
        if (pc->e[i] > s)
            *out += pc->e[i] - s;
        if (pc->e[i] > cur)
            cur = pc->e[i];
    }
    return LP_OK;
}

lp_status g10_pieces_of(const lp_g10_attr *a, uint32_t p, g10_pieces *pc, int *widened, lp_error *err)
{
    int64_t S, E;
    g10_bounds(a, p, &S, &E, widened);
    pc->n = 0;
    if (S >= E)
        return LP_OK;
    lp_status st = blocked_pieces(a, p, LP_G10_NONE, S, E, pc, err);
    if (!st)
        st = sort_pieces(pc, err);
    if (st)
        return st;
    size_t nb = pc->n;
    /* complement of the (sorted, possibly overlapping) blocked pieces within [S, E),
     * written after them, then moved to the front */
    int64_t cur = S;
    for (size_t i = 0; i < nb && !st; i++) {
        if (pc->s[i] > cur)
            st = piece_add(pc, cur, pc->s[i], err);
        if (pc->e[i] > cur)
            cur = pc->e[i];
    }
    if (!st && cur < E)
        st = piece_add(pc, cur, E, err);
    if (st)
        return st;
    memmove(pc->s, pc->s + nb, (pc->n - nb) * sizeof *pc->s);
    memmove(pc->e, pc->e + nb, (pc->n - nb) * sizeof *pc->e);
    pc->n -= nb;
    return LP_OK;
}
