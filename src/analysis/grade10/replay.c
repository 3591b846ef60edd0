/* replay.c: the replay of a run (issues.h, papers/grade10.txt §III-F): the precedence
 * DAG of the phase instances in CSR form with a topological order, and one longest-path
 * relaxation per replay.
 *
 * Nodes: 2i is the start of instance i, 2i+1 its end; then one join node per (parent
 * instance, sibling type) that another sibling type runs `after`, so that "every B
 * after every A" costs |A| + |B| edges instead of |A| x |B|. Edges: parent start ->
 * child start; child end -> parent end; start -> end (weighted by the duration for a
 * leaf, 0 for a composite phase); end of an instance of a sequentially repeated type ->
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

/* Sequential and `after` edges among the children of p. */
static int sibling_edges(const lp_g10_exec *x, uint32_t p, edges *E, uint32_t *last, uint32_t *stamp, uint32_t *nnodes)
{
    const lp_g10_model *m = x->m;
    int serial = m->type[x->type[p]].serial;
    uint32_t prev = LP_G10_NONE;
    for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
        uint32_t t = x->type[c];
        if (serial && prev != LP_G10_NONE && add(E, 2 * prev + 1, 2 * c))
            return -1;
        prev = c;
        if (m->type[t].repeat == LP_G10_SEQUENTIAL && stamp[t] == p + 1 && add(E, 2 * last[t] + 1, 2 * c))
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
            if ((x->type[c] == af->before && add(E, 2 * c + 1, g)) || (x->type[c] == af->after && add(E, g, 2 * c)))
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
        bad = add(E, 2 * i, 2 * i + 1);
        if (!bad && i)
            bad = add(E, 2 * x->parent[i], 2 * i) || add(E, 2 * i + 1, 2 * x->parent[i] + 1);
        if (!bad && x->size[i] > 1)
            bad = sibling_edges(x, i, E, last, stamp, nnodes);
    }
    lp_free(last);
    lp_free(stamp);
    return bad ? nomem(err) : LP_OK;
}

/* CSR from the edge list, then Kahn's order. */
static lp_status topo(lp_g10_replay *rp, const edges *E, lp_error *err)
{
    uint32_t n = rp->nnodes;
    rp->first = lp_calloc((size_t)n + 1, sizeof *rp->first);
    rp->succ = lp_malloc(E->n * sizeof *rp->succ + 1);
    rp->topo = lp_malloc((size_t)n * sizeof *rp->topo + 1);
    rp->t = lp_malloc((size_t)n * sizeof *rp->t + 1);
    uint32_t *indeg = lp_calloc((size_t)n + 1, sizeof *indeg);
    if (!rp->first || !rp->succ || !rp->topo || !rp->t || !indeg) {
        lp_free(indeg);
        return nomem(err);
    }
    for (size_t i = 0; i < E->n; i++) {
        rp->first[(E->e[i] >> 32) + 1]++;
        indeg[(uint32_t)E->e[i]]++;
    }
    for (uint32_t v = 0; v < n; v++)
        rp->first[v + 1] += rp->first[v];
    uint32_t *fill = rp->topo; /* borrowed as cursors */
    memcpy(fill, rp->first, (size_t)n * sizeof *fill);
    for (size_t i = 0; i < E->n; i++)
        rp->succ[fill[E->e[i] >> 32]++] = (uint32_t)E->e[i];
    uint32_t head = 0, tail = 0;
    for (uint32_t v = 0; v < n; v++)
        if (!indeg[v])
            rp->topo[tail++] = v;
    while (head < tail) {
        uint32_t v = rp->topo[head++];
        for (uint32_t k = rp->first[v]; k < rp->first[v + 1]; k++)
            if (--indeg[rp->succ[k]] == 0)
                rp->topo[tail++] = rp->succ[k];
    }
    lp_free(indeg);
    if (tail != n)
        return lp_error_set(err, LP_ERR_DATA, "the phases' precedence has a cycle (%u of %u events ordered)", tail, n);
    return LP_OK;
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
    lp_free(rp->topo);
    lp_free(rp->t);
    memset(rp, 0, sizeof *rp);
}

int64_t lp_g10_replay_run(lp_g10_replay *rp, const int64_t *dur, int64_t *start, int64_t *end)
{
    const lp_g10_exec *x = rp->x;
    int64_t *t = rp->t;
    for (uint32_t v = 0; v < rp->nnodes; v++)
        t[v] = INT64_MIN;
    t[0] = x->start[0];
    for (uint32_t k = 0; k < rp->nnodes; k++) {
        uint32_t v = rp->topo[k];
        int64_t out = t[v];
        if (v < 2 * x->n && !(v & 1) && x->size[v >> 1] == 1 && __builtin_add_overflow(out, dur[v >> 1], &out))
            out = INT64_MAX; /* saturate: never reached for execs within 2^62 ns and sane durations */
        for (uint32_t e = rp->first[v]; e < rp->first[v + 1]; e++)
            if (out > t[rp->succ[e]])
                t[rp->succ[e]] = out;
    }
    for (uint32_t i = 0; i < x->n && (start || end); i++) {
        if (start)
            start[i] = t[2 * i];
        if (end)
            end[i] = t[2 * i + 1];
    }
    return t[1] - t[0];
}
