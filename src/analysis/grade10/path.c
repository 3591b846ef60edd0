/* path.c: the resources of a critical path's phases (path.h): each activity element of
 * the path mapped to the leaf phase built from its activity, its share of the phase
 * applied to the phase's attributed usage and bottleneck time per resource.
 *
 * Invariants: every path element is counted once, in phase_ns or other_ns; shares are in
 * [0, 1]; a phase the attribution gave no use on a resource adds nothing for it.
 * O(activities + path elements x resources x log uses).
 */
#include "longpole/analysis/grade10/path.h"
#include "longpole/base/alloc.h"

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

void lp_g10_path_release(lp_g10_path *p)
{
    lp_free(p->res);
    p->res = NULL;
}

/* activity index -> the leaf phase built from it, LP_G10_NONE when none */
static lp_status phase_of_activity(const lp_g10_exec *x, const lp_trace *t, uint32_t **out, lp_error *err)
{
    uint32_t *map = lp_malloc(((size_t)t->nacts + 1) * sizeof *map);
    if (!map)
        return nomem(err);
    for (uint64_t i = 0; i < t->nacts; i++)
        map[i] = LP_G10_NONE;
    for (uint32_t p = 0; p < x->n; p++) {
        if (!lp_g10_is_leaf(x, p) || !x->src[p])
            continue;
        uint64_t act = x->src[p] - 1;
        if (act >= t->nacts || t->astart[act] != x->start[p] || t->aend[act] != x->end[p]) {
            lp_free(map);
            return lp_error_set(err, LP_ERR_ARG, "the phases were not built from this trace's activities");
        }
        map[act] = p;
    }
    *out = map;
    return LP_OK;
}

lp_status lp_g10_path_of(const lp_g10_attr *a, const lp_trace *t, const lp_cpath *cp, lp_g10_path *out,
                         lp_error *err)
{
    const lp_g10_model *m = a->m;
    const lp_g10_exec *x = a->x;
    *out = (lp_g10_path){0};
    uint32_t *map = NULL;
    lp_status st = phase_of_activity(x, t, &map, err);
    if (st)
        return st;
    if (!(out->res = lp_calloc(m->nres + 1, sizeof *out->res))) {
        lp_free(map);
        return nomem(err);
    }
    out->on_path_ns = cp->total;
    out->elems = cp->n;
    for (size_t i = 0; i < cp->n; i++) {
        const lp_cp_elem *e = &cp->e[i];
        int64_t len = e->end - e->start;
        uint32_t p = e->kind == LP_CP_ACTIVITY && e->index < t->nacts ? map[e->index] : LP_G10_NONE;
        if (p == LP_G10_NONE) {
            out->other_ns += len;
            continue;
        }
        out->phase_ns += len, out->phase_elems++;
        int64_t plen = x->end[p] - x->start[p];
        double share = plen > 0 ? (double)len / (double)plen : 1;
        if (share > 1)
            share = 1;
        for (uint32_t r = 0; r < m->nres; r++) {
            const lp_g10_use *u = lp_g10_use_of(a, r, p);
            if (!u)
                continue;
            lp_g10_pathres *pr = &out->res[r];
            pr->with_ns += len;
            pr->used += u->used * share;
            int64_t bn = (int64_t)((double)u->bn_ns * share + 0.5);
            pr->bn_ns += bn < len ? bn : len;
        }
    }
    lp_free(map);
    return LP_OK;
}
