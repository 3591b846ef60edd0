/* replay.c: the replay of a run (issues.h, papers/grade10.txt §III-F): the precedence
 * DAG of the phase instances in CSR form with a topological order, and one longest-path
 * relaxation per replay.
 *
 * Nodes: i is the start of instance i; a composite instance's end is a node of its own,
 * n + (its rank among the composite instances); a leaf's end is its start node plus its
 * duration (no node: half the events of a run); then one join node per (parent
 * instance, sibling type) that another sibling type runs `after`, so that "every B
 * after every A" costs |A| + |B| edges instead of |A| x |B|. Edges: parent start ->
 * child start; child end -> parent end; start -> end of a composite phase; end of an
 * instance of a sequentially repeated type -> start of the next one under the same
 * parent (children are in order of start); end of every instance of A -> join -> start
 * of every instance of B for `B after A`; under a `serial` parent, end of each child ->
 * start of the next one (any type).
 * The CSR is built in place from two walks of the same edges (one counting, one
 * filling), with no edge list, and renumbered in Kahn's topological order (so a replay
 * walks its times forward); only the arrays a replay reads are kept (fresh memory is
 * slow to touch on some machines). The graph kernels being extracted into src/graph
 * (topological order, longest path) can replace topo() and the relaxation loop.
 */
#include "longpole/analysis/grade10/issues.h"
#include "longpole/base/alloc.h"

#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

/* The edges under construction: a walk either counts (first[from + 1]++, and the join
 * nodes) or fills (succ at the cursor first[from]++). */
typedef struct walk {
    const lp_g10_exec *x;
    const uint32_t *endn;    /* [n] the end node of each instance */
    uint32_t *first, *succ;  /* NULL while counting the nodes */
    int fill;
    uint32_t nnodes;         /* nodes so far (joins are numbered as they are met) */
    size_t nedges;
} walk;

static inline void add(walk *w, uint32_t from, uint32_t to)
{
    w->nedges++;
    if (!w->first)
        return;
    if (w->fill)
        w->succ[w->first[from]++] = to;
    else
        w->first[from + 1]++;
}

/* Sequential and `after` edges among the children of p (last, stamp: scratch per type). */
static void sibling_edges(walk *w, uint32_t p, uint32_t *last, uint32_t *stamp)
{
    const lp_g10_exec *x = w->x;
    const lp_g10_model *m = x->m;
    int serial = m->type[x->type[p]].serial;
    uint32_t prev = LP_G10_NONE;
    for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
        uint32_t t = x->type[c];
        if (serial && prev != LP_G10_NONE)
            add(w, w->endn[prev], c);
        prev = c;
        if (m->type[t].repeat == LP_G10_SEQUENTIAL && stamp[t] == p + 1)
            add(w, w->endn[last[t]], c);
        stamp[t] = p + 1;
        last[t] = c;
    }
    for (uint32_t k = 0; k < m->nafter; k++) {
        const lp_g10_after *af = &m->after[k];
        if (m->type[af->before].parent != x->type[p])
            continue;
        int hasa = 0, hasb = 0;
        for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c])
            hasa |= x->type[c] == af->before, hasb |= x->type[c] == af->after;
        if (!hasa || !hasb)
            continue;
        uint32_t g = w->nnodes++;
        for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
            if (x->type[c] == af->before)
                add(w, w->endn[c], g);
            else if (x->type[c] == af->after)
                add(w, g, c);
        }
    }
}

/* One walk over every edge. */
static void walk_edges(walk *w, uint32_t *last, uint32_t *stamp)
{
    const lp_g10_exec *x = w->x;
    w->nnodes = x->n;
    for (uint32_t i = 0; i < x->n; i++)
        if (x->size[i] > 1)
            w->nnodes++;
    w->nedges = 0;
    memset(stamp, 0, x->m->ntypes * sizeof *stamp);
    for (uint32_t i = 0; i < x->n; i++) {
        if (x->size[i] > 1)
            add(w, i, w->endn[i]);
        if (i)
            add(w, x->parent[i], i), add(w, w->endn[i], w->endn[x->parent[i]]);
        if (x->size[i] > 1)
            sibling_edges(w, i, last, stamp);
    }
}

/* The CSR of the edges (by source node; w->first[nnodes + 1], w->succ[nedges]). */
static lp_status build_csr(walk *w, lp_error *err)
{
    const lp_g10_exec *x = w->x;
    uint32_t *last = lp_malloc((x->m->ntypes + 1) * sizeof *last), *stamp = lp_malloc((x->m->ntypes + 1) * sizeof *stamp);
    lp_status st = last && stamp ? LP_OK : nomem(err);
    if (!st) /* the nodes and edges, counted */
        walk_edges(w, last, stamp);
    if (!st && (w->nedges >= UINT32_MAX || w->nnodes >= UINT32_MAX - 1))
        st = lp_error_set(err, LP_ERR_LIMIT, "too many phase instances to replay");
    if (!st && (!(w->first = lp_calloc((size_t)w->nnodes + 2, sizeof *w->first)) ||
                !(w->succ = lp_malloc(w->nedges * sizeof *w->succ + 1))))
        st = nomem(err);
    if (!st) {
        walk_edges(w, last, stamp); /* out-degrees */
        for (uint32_t v = 0; v < w->nnodes; v++)
            w->first[v + 1] += w->first[v];
        w->fill = 1;
        walk_edges(w, last, stamp); /* first[v] moves to the end of v's edges */
        for (uint32_t v = w->nnodes; v > 0; v--)
            w->first[v] = w->first[v - 1];
        w->first[0] = 0;
    }
    lp_free(last);
    lp_free(stamp);
    return st;
}

/* Kahn's order of the nodes, then the CSR renumbered in that order (so a replay walks
 * its times forward), the leaves' start nodes marked, and each node's position. */
static lp_status topo(lp_g10_replay *rp, walk *w, lp_error *err)
{
    uint32_t n = w->nnodes;
    const lp_g10_exec *x = rp->x;
    const uint32_t *first = w->first, *succ = w->succ;
    uint32_t *order = lp_malloc((size_t)n * sizeof *order + 1), *indeg = lp_calloc((size_t)n + 1, sizeof *indeg);
    lp_status st = LP_OK;
    if (!order || !indeg) {
        st = nomem(err);
        goto out;
    }
    for (size_t i = 0; i < w->nedges; i++)
        indeg[succ[i]]++;
    uint32_t head = 0, tail = 0;
    for (uint32_t v = 0; v < n; v++)
        if (!indeg[v])
            order[tail++] = v;
    while (head < tail) {
        uint32_t v = order[head++];
        for (uint32_t k = first[v]; k < first[v + 1]; k++)
            if (--indeg[succ[k]] == 0)
                order[tail++] = succ[k];
    }
    if (tail != n) {
        st = lp_error_set(err, LP_ERR_DATA, "the phases' precedence has a cycle (%u of %u events ordered)", tail, n);
        goto out;
    }
    rp->nnodes = n;
    rp->leaf = indeg; /* all zero now: reused */
    indeg = NULL;
    rp->first = lp_malloc(((size_t)n + 1) * sizeof *rp->first);
    rp->succ = lp_malloc(w->nedges * sizeof *rp->succ + 1);
    rp->pos = lp_malloc((size_t)n * sizeof *rp->pos + 1); /* node -> position */
    rp->t = lp_malloc((size_t)n * sizeof *rp->t + 1);
    if (!rp->first || !rp->succ || !rp->pos || !rp->t) {
        st = nomem(err);
        goto out;
    }
    for (uint32_t k = 0; k < n; k++)
        rp->pos[order[k]] = k;
    uint32_t e = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t v = order[k];
        rp->first[k] = e;
        for (uint32_t q = first[v]; q < first[v + 1]; q++)
            rp->succ[e++] = rp->pos[succ[q]];
        rp->leaf[k] = v < x->n && x->size[v] == 1 ? v : UINT32_MAX;
    }
    rp->first[n] = e;
out:
    lp_free(order), lp_free(indeg);
    return st;
}

lp_status lp_g10_replay_init(lp_g10_replay *rp, const lp_g10_exec *x, lp_error *err)
{
    memset(rp, 0, sizeof *rp);
    rp->x = x;
    walk w = {x, NULL, NULL, NULL, 0, 0, 0};
    uint32_t *endn = lp_malloc(((size_t)x->n + 1) * sizeof *endn);
    lp_status st = endn ? LP_OK : nomem(err);
    if ((uint64_t)x->n * 2 >= UINT32_MAX - 1)
        st = lp_error_set(err, LP_ERR_LIMIT, "too many phase instances to replay");
    for (uint32_t i = 0, c = x->n; !st && i < x->n; i++)
        endn[i] = x->size[i] > 1 ? c++ : i;
    w.endn = endn;
    if (!st)
        st = build_csr(&w, err);
    if (!st)
        st = topo(rp, &w, err);
    lp_free(endn), lp_free(w.first), lp_free(w.succ);
    if (st)
        lp_g10_replay_release(rp);
    return st;
}

void lp_g10_replay_release(lp_g10_replay *rp)
{
    lp_free(rp->first);
    lp_free(rp->succ);
    lp_free(rp->leaf);
    lp_free(rp->pos);
    lp_free(rp->t);
    memset(rp, 0, sizeof *rp);
}

int64_t lp_g10_replay_run(lp_g10_replay *rp, const int64_t *dur, int64_t *start, int64_t *end)
{
    const lp_g10_exec *x = rp->x;
    int64_t *t = rp->t;
    for (uint32_t v = 0; v < rp->nnodes; v++)
        t[v] = INT64_MIN;
    t[rp->pos[0]] = x->start[0];
    for (uint32_t v = 0; v < rp->nnodes; v++) { /* nodes are in topological order */
        int64_t out = t[v];
        if (rp->leaf[v] != UINT32_MAX && __builtin_add_overflow(out, dur[rp->leaf[v]], &out))
            out = INT64_MAX; /* saturate: never reached for execs within 2^62 ns and sane durations */
        for (uint32_t e = rp->first[v]; e < rp->first[v + 1]; e++)
            if (out > t[rp->succ[e]])
                t[rp->succ[e]] = out;
    }
    for (uint32_t i = 0, c = x->n; i < x->n && (start || end); i++) {
        int64_t st = t[rp->pos[i]];
        if (start)
            start[i] = st;
        if (x->size[i] > 1 && end)
            end[i] = t[rp->pos[c]];
        else if (end)
            end[i] = st + dur[i];
        c += x->size[i] > 1;
    }
    return x->size[0] == 1 ? dur[0] : t[rp->pos[x->n]] - t[rp->pos[0]];
}
