/* bottleneck.c: the bottleneck resource of the critical path and the per-operation
 * resource breakdown (bottleneck.h; CrystalPerf §4.2).
 *
 * Invariants: the path's resource times add up to its total (within rounding), every
 * element taking its activity's vector (unknown for unexplained time); the rows of ops
 * add up to the path and to the whole trace. Cost: O(path + activities + ops log ops).
 */
#include "longpole/analysis/crystalperf/bottleneck.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <stdlib.h>
#include <string.h>

static int msg_resource(const lp_trace *t, uint64_t m)
{
    lp_str a = lp_trace_attr(t, t->wattr[t->msrc[m]], "host"), b = lp_trace_attr(t, t->wattr[t->mdst[m]], "host");
    return a != LP_STR_NONE && b != LP_STR_NONE && a != b ? LP_RES_NET : LP_RES_WAIT;
}

static int cmp_row(const void *x, const void *y)
{
    const lp_cpf_oprow *a = x, *b = y;
    if (a->path_ns != b->path_ns)
        return a->path_ns > b->path_ns ? -1 : 1;
    if (a->all_ns != b->all_ns)
        return a->all_ns > b->all_ns ? -1 : 1;
    return a->op < b->op ? -1 : a->op > b->op;
}

/* The row of an operator (LP_STR_NONE: none; message: the messages' row). */
static lp_cpf_oprow *row_of(lp_cpf_bottleneck *b, lp_hmap *idx, size_t *cap, lp_str op, int message,
                            lp_error *err)
{
    uint64_t key = message ? UINT64_C(1) << 40 : (uint64_t)op, v;
    if (lp_hmap_get(idx, key, &v))
        return &b->ops[v];
    if (lp_grow_at(&b->ops, cap, b->nops + 1, sizeof *b->ops) || lp_hmap_put(idx, key, b->nops, err)) {
        lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        return NULL;
    }
    lp_cpf_oprow *r = &b->ops[b->nops++];
    memset(r, 0, sizeof *r);
    r->op = op, r->message = message;
    return r;
}

lp_status lp_cpf_bottleneck_compute(const lp_cpf_profile *p, const lp_cpath *cp, lp_cpf_bottleneck *b,
                                    lp_error *err)
{
    const lp_trace *t = p->t;
    memset(b, 0, sizeof *b);
    b->bottleneck = -1;
    b->elem = lp_calloc(cp->n ? cp->n : 1, sizeof *b->elem);
    lp_hmap idx;
    lp_status st = b->elem ? lp_hmap_init(&idx, 64, err) : lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (st) {
        lp_free(b->elem);
        b->elem = NULL;
        return st;
    }
    b->nelem = cp->n;
    size_t cap = 0;
    double explained = 0;
    for (size_t i = 0; i < cp->n && !st; i++) {
        const lp_cp_elem *e = &cp->e[i];
        int64_t len = e->end - e->start;
        double v[LP_RES_N] = {0};
        lp_cpf_oprow *r;
        if (e->kind == LP_CP_MESSAGE) {
            v[msg_resource(t, e->index)] = 1;
            explained += (double)len;
            r = row_of(b, &idx, &cap, LP_STR_NONE, 1, err);
        } else {
            explained += (double)len * lp_cpf_act_vector(p, e->index, v);
            r = row_of(b, &idx, &cap, t->aop[e->index], 0, err);
        }
        if (!r) {
            st = LP_ERR_NOMEM;
            break;
        }
        memcpy(b->elem[i], v, sizeof v);
        for (int k = 0; k < LP_RES_N; k++) {
            b->path[k] += v[k] * (double)len;
            r->path[k] += v[k] * (double)len;
        }
        r->path_ns += len;
        b->path_total += len;
    }
    for (uint64_t a = 0; a < t->nacts && !st; a++) {
        int64_t len = t->aend[a] - t->astart[a];
        double v[LP_RES_N];
        lp_cpf_act_vector(p, a, v);
        lp_cpf_oprow *r = row_of(b, &idx, &cap, t->aop[a], 0, err);
        if (!r) {
            st = LP_ERR_NOMEM;
            break;
        }
        for (int k = 0; k < LP_RES_N; k++) {
            b->all[k] += v[k] * (double)len;
            r->all[k] += v[k] * (double)len;
        }
        r->all_ns += len;
    }
    lp_hmap_release(&idx);
    if (st) {
        lp_cpf_bottleneck_release(b);
        return st;
    }
    qsort(b->ops, b->nops, sizeof *b->ops, cmp_row);
    b->coverage = b->path_total ? explained / (double)b->path_total : 0;
    b->partial = b->coverage < 0.5;
    for (int k = LP_RES_CPU; k <= LP_RES_NET; k++)
        if (b->path[k] > 0 && (b->bottleneck < 0 || b->path[k] > b->path[b->bottleneck]))
            b->bottleneck = k;
    return LP_OK;
}

void lp_cpf_bottleneck_release(lp_cpf_bottleneck *b)
{
    lp_free(b->elem);
    lp_free(b->ops);
    memset(b, 0, sizeof *b);
}
