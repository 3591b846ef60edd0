/* attrib_query.c: questions asked of a finished attribution (attrib.h): the use of a
 * (resource, phase) pair (binary search: each resource's uses are in phase order),
 * totals rolled up the phase hierarchy (a reverse preorder pass: every instance's
 * descendants follow it), a leaf's active pieces and its usage over time.
 */
#include "analysis/grade10/g10_int.h"

#include <string.h>

const lp_g10_use *lp_g10_use_of(const lp_g10_attr *a, uint32_t r, uint32_t phase)
{
    if (r >= a->m->nres)
        return NULL;
    const lp_g10_use *u = a->use[r];
    size_t l = 0, h = a->nuse[r];
    while (l < h) {
        size_t m = l + (h - l) / 2;
        if (u[m].phase < phase)
            l = m + 1;
        else
            h = m;
    }
    return l < a->nuse[r] && u[l].phase == phase ? &u[l] : NULL;
}

void lp_g10_rollup(const lp_g10_attr *a, uint32_t r, double *used, int64_t *bn_ns)
{
    const lp_g10_exec *x = a->x;
    if (used)
        memset(used, 0, x->n * sizeof *used);
    if (bn_ns)
        memset(bn_ns, 0, x->n * sizeof *bn_ns);
    for (size_t i = 0; i < a->nuse[r]; i++) {
        const lp_g10_use *u = &a->use[r][i];
        if (used)
            used[u->phase] += u->used;
        if (bn_ns)
            bn_ns[u->phase] += u->bn_ns;
    }
    for (uint32_t i = x->n; i-- > 1;) {
        uint32_t p = x->parent[i];
        if (used)
            used[p] += used[i];
        if (bn_ns)
            bn_ns[p] += bn_ns[i];
    }
}

size_t lp_g10_active(const lp_g10_attr *a, uint32_t phase, int64_t *s, int64_t *e, size_t cap)
{
    if (phase >= a->x->n || !lp_g10_is_leaf(a->x, phase))
        return 0;
    const int64_t *ps, *pe;
    size_t n = g10_leaf_pieces(a, phase, &ps, &pe);
    for (size_t k = 0; k < n && k < cap; k++)
        s[k] = ps[k], e[k] = pe[k];
    return n;
}

/* The first segment of timeline tl that ends after t. */
static uint32_t seg_after(const lp_g10_tl *tl, int64_t t)
{
    size_t l = 0, h = tl->nseg;
    while (l < h) {
        size_t m = l + (h - l) / 2;
        if (tl->bound[m + 1] <= t)
            l = m + 1;
        else
            h = m;
    }
    return (uint32_t)l;
}

size_t lp_g10_phase_usage(const lp_g10_attr *a, uint32_t k, uint32_t phase, int64_t *t, double *rate, size_t cap)
{
    if (k >= a->ntl || phase >= a->x->n || !lp_g10_is_leaf(a->x, phase))
        return 0;
    const lp_g10_tl *tl = &a->tl[k];
    uint8_t kind;
    double val = lp_g10_rule_of(a->m, a->x->type[phase], tl->res, tl->capacity, &kind);
    if (kind != LP_G10_RULE_EXACT && kind != LP_G10_RULE_VARIABLE)
        return 0;
    const int64_t *ps, *pe;
    size_t np = g10_leaf_pieces(a, phase, &ps, &pe), n = 0;
    for (size_t q = 0; q < np; q++)
            for (uint32_t s = seg_after(tl, ps[q]); s < tl->nseg && tl->bound[s] < pe[q]; s++) {
                double r = 0;
                if (kind == LP_G10_RULE_EXACT && tl->E[s] > 0)
                    r = val * tl->x[s] / tl->E[s];
                else if (kind == LP_G10_RULE_VARIABLE && tl->V[s] > 0)
                    r = val * (tl->u[s] - tl->x[s]) / tl->V[s];
                if (n < cap)
                    t[n] = tl->bound[s], rate[n] = r;
                n++;
            }
    return n;
}
