/* respan.c: the replay of a candidate that changes few leaves (g10_int.h, issues.c),
 * from the spans of the composite instances above them only.
 *
 * A replay is hierarchical: every constraint on an instance's start comes from its
 * parent's start or from its siblings' ends (replay.c), so the span of a composite
 * instance (end - start) is a function of its children's spans alone:
 *   off(c)  = max(0, end(previous child) under a serial parent, end(previous c's type)
 *             for a sequentially repeated type, max end of the children of each type
 *             c's type runs after),   end(c) = off(c) + span(c),
 *   span(p) = max(0, max over its children of end(c)),
 * and the makespan is the root's span. Changing some leaves' durations changes the
 * spans of their ancestors only: those are recomputed, deepest first (in decreasing
 * instance order: a child follows its parent in preorder), the others are the
 * baseline's. Integer max and + only: the same makespan as the DAG replay, which the
 * tests check it against (tests/unit/grade10/test_g10_replay.c).
 *
 * Children are evaluated in recorded order, which is a topological order of the
 * sibling constraints unless, under some parent, a child of type A comes after a
 * child of type B where B runs after A (data against the model): then g10_respan_init
 * reports it unusable and the caller replays the DAG. When usable, every constraint
 * goes forward in instance order, so the DAG has no cycle and the baseline itself is
 * replayed this way too (g10_respan_all), without building the DAG.
 */
#include "analysis/grade10/g10_int.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

/* tflag bits: sequentially repeated; runs after some type; its children's ends are
 * needed by a later sibling (RS_SEQ, or the `before` of some after clause) */
enum { RS_SEQ = 1, RS_AFTER = 2, RS_TRACK = 4 };

/* Is the recorded order of p's children topological for its `after` clauses? */
static int forward(const lp_g10_exec *x, uint32_t p)
{
    const lp_g10_model *m = x->m;
    for (uint32_t k = 0; k < m->nafter; k++) {
        const lp_g10_after *af = &m->after[k];
        if (m->type[af->before].parent != x->type[p])
            continue;
        int seen_after = 0;
        for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
            if (x->type[c] == af->after)
                seen_after = 1;
            else if (x->type[c] == af->before && seen_after)
                return 0;
        }
    }
    return 1;
}

lp_status g10_respan_init(g10_respan *rs, const lp_g10_exec *x, const int64_t *base_span, int *usable, lp_error *err)
{
    memset(rs, 0, sizeof *rs);
    rs->x = x;
    rs->base = base_span;
    rs->scan_above = x->n / 64;
    *usable = 1;
    for (uint32_t p = 0; p < x->n && *usable; p++)
        if (x->size[p] > 1 && x->m->nafter)
            *usable = forward(x, p);
    if (!*usable)
        return LP_OK;
    uint32_t nt = x->m->ntypes;
    rs->span = lp_malloc(((size_t)x->n + 1) * sizeof *rs->span);
    rs->stamp = lp_calloc((size_t)x->n + 1, sizeof *rs->stamp);
    rs->tstamp = lp_calloc((size_t)nt + 1, sizeof *rs->tstamp);
    rs->tmax = lp_malloc(((size_t)nt + 1) * sizeof *rs->tmax);
    rs->tlast = lp_malloc(((size_t)nt + 1) * sizeof *rs->tlast);
    rs->tflag = lp_calloc((size_t)nt + 1, sizeof *rs->tflag);
    if (!rs->span || !rs->stamp || !rs->tstamp || !rs->tmax || !rs->tlast || !rs->tflag) {
        g10_respan_release(rs);
        return nomem(err);
    }
    for (uint32_t t = 0; t < nt; t++)
        rs->tflag[t] = x->m->type[t].repeat == LP_G10_SEQUENTIAL ? RS_SEQ | RS_TRACK : 0;
    for (uint32_t k = 0; k < x->m->nafter; k++) {
        rs->tflag[x->m->after[k].after] |= RS_AFTER;
        rs->tflag[x->m->after[k].before] |= RS_TRACK;
    }
    return LP_OK;
}

void g10_respan_release(g10_respan *rs)
{
    lp_free(rs->span), lp_free(rs->stamp), lp_free(rs->tstamp), lp_free(rs->tmax), lp_free(rs->tlast);
    lp_free(rs->tflag), lp_free(rs->dirty);
    memset(rs, 0, sizeof *rs);
}

/* The span of instance c in the candidate. */
static inline int64_t span_of(const g10_respan *rs, uint32_t c, const int64_t *dur)
{
    if (rs->x->size[c] == 1)
        return dur[c];
    return rs->stamp[c] == rs->gen ? rs->span[c] : rs->base[c];
}

/* The span of composite p from its children's. */
static int64_t local_span(g10_respan *rs, uint32_t p, const int64_t *dur)
{
    const lp_g10_exec *x = rs->x;
    const lp_g10_model *m = x->m;
    int serial = m->type[x->type[p]].serial, have_prev = 0;
    int64_t span = 0, prev_end = 0;
    if (++rs->tgen == 0) { /* stamps wrapped: start over */
        memset(rs->tstamp, 0, ((size_t)m->ntypes + 1) * sizeof *rs->tstamp);
        rs->tgen = 1;
    }
    uint32_t g = rs->tgen; /* per-type state of this parent: tstamp[t] == g */
    for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
        uint32_t t = x->type[c];
        int64_t o = 0;
        if (serial && have_prev && prev_end > o)
            o = prev_end;
        uint8_t f = rs->tflag[t];
        if ((f & RS_SEQ) && rs->tstamp[t] == g && rs->tlast[t] > o)
            o = rs->tlast[t];
        for (uint32_t k = 0; (f & RS_AFTER) && k < m->nafter; k++) {
            const lp_g10_after *af = &m->after[k];
            if (af->after == t && m->type[af->before].parent == x->type[p] && rs->tstamp[af->before] == g &&
                rs->tmax[af->before] > o)
                o = rs->tmax[af->before];
        }
        int64_t e = o + span_of(rs, c, dur);
        if (f & RS_TRACK) { /* (a type nobody reads the ends of is not tracked) */
            if (rs->tstamp[t] != g)
                rs->tstamp[t] = g, rs->tmax[t] = e;
            else if (e > rs->tmax[t])
                rs->tmax[t] = e;
            rs->tlast[t] = e;
        }
        prev_end = e, have_prev = 1;
        if (e > span)
            span = e;
    }
    return span;
}

static int cmp_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x < y) - (x > y);
}

int64_t g10_respan_all(g10_respan *rs, const int64_t *dur, int64_t *span_out)
{
    const lp_g10_exec *x = rs->x;
    if (++rs->gen == 0) {
        memset(rs->stamp, 0, ((size_t)x->n + 1) * sizeof *rs->stamp);
        rs->gen = 1;
    }
    for (uint32_t p = x->n; p-- > 0;) /* children before parents */
        if (x->size[p] > 1) {
            rs->span[p] = local_span(rs, p, dur);
            rs->stamp[p] = rs->gen;
        }
    for (uint32_t i = 0; i < x->n; i++)
        span_out[i] = x->size[i] == 1 ? dur[i] : rs->span[i];
    return span_of(rs, 0, dur);
}

lp_status g10_respan_run(g10_respan *rs, const int64_t *dur, const uint32_t *changed, size_t nchanged,
                         int64_t *makespan, lp_error *err)
{
    const lp_g10_exec *x = rs->x;
    if (++rs->gen == 0) { /* stamps wrapped: start over */
        memset(rs->stamp, 0, ((size_t)x->n + 1) * sizeof *rs->stamp);
        rs->gen = 1;
    }
    rs->ndirty = 0;
    for (size_t i = 0; i < nchanged; i++) /* every ancestor of a changed leaf, once */
        for (uint32_t p = x->parent[changed[i]]; p != LP_G10_NONE && rs->stamp[p] != rs->gen; p = x->parent[p]) {
            if (lp_grow_at(&rs->dirty, &rs->capdirty, rs->ndirty + 1, sizeof *rs->dirty))
                return nomem(err);
            rs->stamp[p] = rs->gen;
            rs->dirty[rs->ndirty++] = p;
        }
    if (rs->ndirty > rs->scan_above) { /* many: a scan of the instances is cheaper than a sort */
        for (uint32_t p = x->n; p-- > 0;) /* children before parents */
            if (rs->stamp[p] == rs->gen)
                rs->span[p] = local_span(rs, p, dur);
    } else {
        if (rs->ndirty > 1)
            qsort(rs->dirty, rs->ndirty, sizeof *rs->dirty, cmp_desc); /* children before parents */
        for (size_t i = 0; i < rs->ndirty; i++)
            rs->span[rs->dirty[i]] = local_span(rs, rs->dirty[i], dur);
    }
    *makespan = span_of(rs, 0, dur);
    return LP_OK;
}
