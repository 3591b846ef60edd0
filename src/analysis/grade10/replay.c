/* replay.c: the replay of a run (issues.h, papers/grade10.txt §III-F): the precedence
 * DAG of the phase instances in CSR form with a topological order, and one longest-path
 * relaxation per replay.
 *
 * Nodes: 2i is the start of instance i, 2i+1 its end (a leaf's end is its start node
 * plus its duration, so 2i+1 stays unused for a leaf); then one join node per (parent
 * instance, sibling type) that another sibling type runs `after`, so that "every B
 * after every A" costs |A| + |B| edges instead of |A| x |B|. Edges: parent start ->
 * child start; child end -> parent end; start -> end of a composite phase; end of an instance of a sequentially repeated type ->
 * start of the next one under the same parent (children are in order of start); end
 * of every instance of A -> join -> start of every instance of B for `B after A`; under
 * a `serial` parent, end of each child -> start of the next one (any type).
 * The topological order is Kahn's; the graph kernels being extracted into src/graph
 * (topological order, longest path) can replace topo() and the relaxation loop.
 */
#include "longpole/analysis/grade10/issues.h"
#include "longpole/base/alloc.h"

#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

typedef struct edges {
    uint64_t *e; /* from << 32 | to */
    size_t n, cap;
} edges;

static int add(edges *E, uint32_t from, uint32_t to)
{
    if (E->n == E->cap) {
        size_t c = E->cap ? 2 * E->cap : 4096;
        uint64_t *ne = lp_reallocarray(E->e, c, sizeof *ne);
        if (!ne)
            return -1;
        E->e = ne;
        E->cap = c;
    }
    E->e[E->n++] = (uint64_t)from << 32 | to;
    return 0;
}

/* The events of instance i: its start is node 2i; its end is node 2i + 1, except for a
 * leaf, whose end is its start node plus its duration (one node: half the events of a
 * run, and no start -> end edge). */
static inline uint32_t S_(uint32_t i) { return 2 * i; }
static inline uint32_t E_(const lp_g10_exec *x, uint32_t i) { return x->size[i] == 1 ? 2 * i : 2 * i + 1; }

/* Sequential and `after` edges among the children of p. */
static int sibling_edges(const lp_g10_exec *x, uint32_t p, edges *E, uint32_t *last, uint32_t *stamp, uint32_t *nnodes)
{
    const lp_g10_model *m = x->m;
    int serial = m->type[x->type[p]].serial;
    uint32_t prev = LP_G10_NONE;
    for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
        uint32_t t = x->type[c];
        if (serial && prev != LP_G10_NONE && add(E, E_(x, prev), S_(c)))
            return -1;
        prev = c;
        if (m->type[t].repeat == LP_G10_SEQUENTIAL && stamp[t] == p + 1 && add(E, E_(x, last[t]), S_(c)))
            return -1;
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
        uint32_t g = (*nnodes)++;
        for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c])
            if ((x->type[c] == af->before && add(E, E_(x, c), g)) || (x->type[c] == af->after && add(E, g, S_(c))))
                return -1;
    }
    return 0;
}

static lp_status build_edges(const lp_g10_exec *x, edges *E, uint32_t *nnodes, lp_error *err)
{
    if ((uint64_t)x->n * 2 + x->n >= UINT32_MAX)
        return lp_error_set(err, LP_ERR_LIMIT, "too many phase instances to replay");
    *nnodes = 2 * x->n;
    uint32_t *last = lp_malloc(x->m->ntypes * sizeof *last), *stamp = lp_calloc(x->m->ntypes, sizeof *stamp);
    int bad = !last || !stamp;
    for (uint32_t i = 0; i < x->n && !bad; i++) {
        if (x->size[i] > 1)
            bad = add(E, S_(i), E_(x, i));
        if (!bad && i)
            bad = add(E, S_(x->parent[i]), S_(i)) || add(E, E_(x, i), E_(x, x->parent[i]));
        if (!bad && x->size[i] > 1)
            bad = sibling_edges(x, i, E, last, stamp, nnodes);
    }
    lp_free(last);
    lp_free(stamp);
    return bad ? nomem(err) : LP_OK;
}

/* Kahn's order of the nodes, then the CSR renumbered in that order (so a replay walks
 * its times forward), the leaves' start nodes marked, and each event's node. */
static lp_status topo(lp_g10_replay *rp, const edges *E, lp_error *err)
{
    uint32_t n = rp->nnodes;
    const lp_g10_exec *x = rp->x;
    uint32_t *first = lp_calloc((size_t)n + 1, sizeof *first), *succ = lp_malloc(E->n * sizeof *succ + 1);
    uint32_t *order = lp_malloc((size_t)n * sizeof *order + 1), *indeg = lp_calloc((size_t)n + 1, sizeof *indeg);
    rp->first = lp_calloc((size_t)n + 1, sizeof *rp->first);
    rp->succ = lp_malloc(E->n * sizeof *rp->succ + 1);
    rp->leaf = lp_malloc((size_t)n * sizeof *rp->leaf + 1);
    rp->pos = lp_malloc((size_t)n * sizeof *rp->pos + 1); /* node -> position, then kept as event -> node */
    rp->t = lp_malloc((size_t)n * sizeof *rp->t + 1);
    lp_status st = LP_OK;
    if (!first || !succ || !order || !indeg || !rp->first || !rp->succ || !rp->leaf || !rp->pos || !rp->t) {
        st = nomem(err);
        goto out;
    }
    for (size_t i = 0; i < E->n; i++) {
        first[(E->e[i] >> 32) + 1]++;
        indeg[(uint32_t)E->e[i]]++;
    }
    for (uint32_t v = 0; v < n; v++)
        first[v + 1] += first[v];
    memcpy(order, first, (size_t)n * sizeof *order); /* borrowed as cursors */
    for (size_t i = 0; i < E->n; i++)
        succ[order[E->e[i] >> 32]++] = (uint32_t)E->e[i];
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
    for (uint32_t k = 0; k < n; k++) /* node -> its position */
        rp->pos[order[k]] = k;
    uint32_t e = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t v = order[k];
        rp->first[k] = e;
        for (uint32_t q = first[v]; q < first[v + 1]; q++)
            rp->succ[e++] = rp->pos[succ[q]];
        rp->leaf[k] = v < 2 * x->n && !(v & 1) && x->size[v >> 1] == 1 ? v >> 1 : UINT32_MAX;
    }
    rp->first[n] = e;
out:
    lp_free(first), lp_free(succ), lp_free(order), lp_free(indeg);
    return st;
}

lp_status lp_g10_replay_init(lp_g10_replay *rp, const lp_g10_exec *x, lp_error *err)
{
    memset(rp, 0, sizeof *rp);
    rp->x = x;
    edges E = {0};
    lp_status st = build_edges(x, &E, &rp->nnodes, err);
    if (!st)
        st = topo(rp, &E, err);
    lp_free(E.e);
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
    for (uint32_t i = 0; i < x->n && (start || end); i++) {
        int64_t st = t[rp->pos[2 * i]];
        if (start)
            start[i] = st;
        if (end)
            end[i] = x->size[i] == 1 ? st + dur[i] : t[rp->pos[2 * i + 1]];
    }
    return x->size[0] == 1 ? dur[0] : t[rp->pos[1]] - t[rp->pos[0]];
}
