/* kcp_bounded.c: the bounded critical path (Trace Compass's CriticalPathAlgorithmBounded
 * and OSCriticalPathAlgorithm, reimplemented from their documented behaviour; the
 * definition, with its enumerable specification, is in docs/analyses/
 * kernel-critical-path.md "Bounded").
 *
 * The thread's edges are taken in order. A blocked edge that can be resolved (blocked
 * on a thread, a packet, an unclassified interrupt, or nothing seen) is replaced by its
 * explanation: starting at the source of the link into the edge's end (the wake-up), a
 * backward walk that prefers, at each vertex,
 *   1. the incoming link if it comes from at or before the bound (the walk is done),
 *   2. else the incoming horizontal edge (a resolvable blocked one is itself replaced
 *      by its explanation, bounded by its own start, once the walk is chosen),
 *   3. else (a dead end ahead, or the first vertex) the incoming link,
 * and stops at the first vertex at or before the bound (the blocked edge's start). Of all
 * such walks, the first in this preference order that reaches the bound is taken; if
 * none does, the last one (it ends at a vertex nothing explains: a gap). Trace Compass
 * finds it by depth-first search with a stack of alternatives; here the search memoises
 * each vertex's outcome (reached the bound or not, and the move that did it), so a
 * vertex reached along several walks is explored once: O(vertices and links behind
 * the wake-up, back to the bound) per blocked edge, with a hash entry per vertex visited.
 *
 * No recursion: explanations of nested blocked edges are tasks on an explicit stack, so
 * a deep chain of threads each waiting for the next costs heap, not C stack.
 */
#include "analysis/kernel/kcp_int.h"
#include "base/hashmap.h"
#include "longpole/base/alloc.h"

enum { V_PENDING = 1, V_OK = 2, V_FAIL = 3 };
enum { M_NONE = 0, M_SHORT, M_HORIZ, M_LINK };
enum { T_ITEM = 0, T_RESOLVE };

typedef struct frame {
    uint32_t z, first;   /* vertex, first vertex of its worker */
    uint8_t stage;       /* 0 new, 1 horizontal child asked, 2 link child asked */
} frame;

typedef struct task {
    uint8_t type;        /* T_ITEM: an item to output; T_RESOLVE: a blocked edge to explain */
    kitem item;          /* T_ITEM */
    uint32_t v;          /* T_RESOLVE: the blocked edge's start vertex */
    int64_t bound;       /* T_RESOLVE */
} task;

typedef struct bctx {
    const lp_kgraph *g;
    lp_hmap memo;        /* (call << 32 | vertex) -> status | move << 4 */
    uint64_t call;
    frame *stk;
    size_t nstk, capstk;
    task *tasks;
    size_t ntasks, captasks;
    kitems *out;
    lp_error *err;
} bctx;

static lp_status nomem(bctx *c) { return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory"); }

static inline uint64_t key(const bctx *c, uint32_t v) { return c->call << 32 | v; }

/* As a child of the walk: 1 reaches the bound, 0 does not (or is on the current walk:
 * a cycle, possible only in a damaged graph), -1 not explored yet. */
static int child(const bctx *c, uint32_t y, int64_t bound)
{
    if (c->g->vt[y] <= bound)
        return 1;
    uint64_t m;
    if (lp_hmap_get(&c->memo, key(c, y), &m))
        return (m & 15) == V_OK;
    return -1;
}

static lp_status push_frame(bctx *c, uint32_t z, uint32_t first)
{
    if (lp_grow((void **)&c->stk, &c->capstk, c->nstk + 1, sizeof *c->stk) ||
        lp_hmap_put(&c->memo, key(c, z), V_PENDING, NULL))
        return nomem(c);
    c->stk[c->nstk].z = z;
    c->stk[c->nstk].first = first;
    c->stk[c->nstk].stage = 0;
    c->nstk++;
    return LP_OK;
}

/* Decide z (the top frame) and pop it. */
static lp_status decide(bctx *c, uint32_t z, int status, int move)
{
    c->nstk--;
    return lp_hmap_put(&c->memo, key(c, z), (uint64_t)status | (uint64_t)move << 4, NULL) ? nomem(c) : LP_OK;
}

/* Ask child y of the top frame (moving it to `stage`): explore it if new. */
static lp_status ask(bctx *c, uint32_t y, int64_t bound, uint8_t stage)
{
    c->stk[c->nstk - 1].stage = stage;
    if (child(c, y, bound) >= 0)
        return LP_OK;
    return push_frame(c, y, c->g->voff[lp_kgraph_vworker(c->g, y)]);
}

/* One step of the search on the top frame. */
static lp_status step(bctx *c, int64_t bound)
{
    const lp_kgraph *g = c->g;
    frame f = c->stk[c->nstk - 1];
    uint32_t z = f.z, l = g->vin[z];
    int horiz = kcp_has_in_edge(g, z, f.first);
    switch (f.stage) {
    case 0:
        if (l != LP_NONE32 && g->vt[g->lfrom[l]] <= bound)
            return decide(c, z, V_OK, M_SHORT);
        if (horiz)
            return ask(c, z - 1, bound, 1);
        if (l != LP_NONE32)
            return ask(c, g->lfrom[l], bound, 2);
        return decide(c, z, V_FAIL, M_NONE);
    case 1:
        if (child(c, z - 1, bound) == 1)
            return decide(c, z, V_OK, M_HORIZ);
        if (l != LP_NONE32 && !lp_kstate_resolvable(g->vstate[z - 1], g->vreason[z - 1]))
            return ask(c, g->lfrom[l], bound, 2);
        return decide(c, z, V_FAIL, M_HORIZ);
    default:
        return decide(c, z, child(c, g->lfrom[l], bound) == 1 ? V_OK : V_FAIL, M_LINK);
    }
}

static lp_status search(bctx *c, uint32_t root, int64_t bound)
{
    lp_status st = LP_OK;
    if (child(c, root, bound) >= 0)
        return LP_OK;
    if ((st = push_frame(c, root, c->g->voff[lp_kgraph_vworker(c->g, root)])))
        return st;
    while (!st && c->nstk)
        st = step(c, bound);
    return st;
}

static lp_status push_task(bctx *c, uint8_t type, uint8_t kind, uint32_t ref, uint32_t v, int64_t bound)
{
    if (lp_grow((void **)&c->tasks, &c->captasks, c->ntasks + 1, sizeof *c->tasks))
        return nomem(c);
    task *t = &c->tasks[c->ntasks++];
    t->type = type;
    t->item.kind = kind;
    t->item.ref = ref;
    t->item.t0 = t->item.t1 = 0;
    t->v = v;
    t->bound = bound;
    return LP_OK;
}

/* Explain the blocked edge v -> v+1 within `bound`: push its walk's items as tasks (the
 * wake-up first, so that it is output last). Nothing pushed: no explanation. */
static lp_status resolve(bctx *c, uint32_t v, int64_t bound)
{
    const lp_kgraph *g = c->g;
    if (g->vt[v] > bound)
        bound = g->vt[v];
    uint32_t l = g->vin[v + 1];
    if (l == LP_NONE32)
        return LP_OK;
    lp_status st = push_task(c, T_ITEM, KI_LINK, l, 0, 0);
    uint32_t z = g->lfrom[l];
    c->call++;
    if (st || (st = search(c, z, bound)))
        return st;
    for (uint64_t steps = 0; !st && g->vt[z] > bound; steps++) {
        uint64_t m = 0;
        if (steps > c->memo.n + 1 || !lp_hmap_get(&c->memo, key(c, z), &m))
            return lp_error_set(c->err, LP_ERR_DATA, "the execution graph has a cycle (at vertex %u)", z);
        switch (m >> 4) {
        case M_SHORT:
            return push_task(c, T_ITEM, KI_LINK, g->vin[z], 0, 0);
        case M_HORIZ:
            if (lp_kstate_resolvable(g->vstate[z - 1], g->vreason[z - 1]))
                st = push_task(c, T_RESOLVE, 0, 0, z - 1, bound);
            else
                st = push_task(c, T_ITEM, KI_EDGE, z - 1, 0, 0);
            z--;
            break;
        case M_LINK:
            st = push_task(c, T_ITEM, KI_LINK, g->vin[z], 0, 0);
            z = g->lfrom[g->vin[z]];
            break;
        default:
            return LP_OK; /* a dead end: the walk stops short of the bound */
        }
    }
    return st;
}

/* Output the explanation of blocked edge v (or v itself, unexplained). */
static lp_status explain(bctx *c, uint32_t v, int64_t bound)
{
    lp_status st = push_task(c, T_RESOLVE, 0, 0, v, bound);
    while (!st && c->ntasks) {
        task t = c->tasks[--c->ntasks];
        if (t.type == T_ITEM) {
            if (kitems_push(c->out, t.item.kind, t.item.ref, 0, 0))
                return nomem(c);
            continue;
        }
        size_t mark = c->ntasks;
        st = resolve(c, t.v, t.bound);
        if (!st && c->ntasks == mark && kitems_push(c->out, KI_UNEXPL, t.v, 0, 0))
            return nomem(c);
    }
    return st;
}

lp_status kcp_bounded(const lp_kgraph *g, uint32_t w, int64_t s, int64_t e, kitems *out, lp_error *err)
{
    bctx c = {g, {0}, 0, NULL, 0, 0, NULL, 0, 0, out, err};
    lp_status st = lp_hmap_init(&c.memo, 0, err);
    uint32_t first = g->voff[w], last = g->voff[w + 1] - 1;
    uint32_t lo = first, hi = last; /* first edge ending after s: vt[lo + 1] > s */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->vt[mid + 1] > s)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (uint32_t v = lo; !st && v < last && g->vt[v] < e; v++) {
        if (g->vt[v + 1] == g->vt[v])
            continue;
        if (g->vstate[v] == LP_KS_NONE) {
            if (kitems_push(out, KI_GAP, w, g->vt[v], g->vt[v + 1]))
                st = nomem(&c);
        } else if (!lp_kstate_resolvable(g->vstate[v], g->vreason[v])) {
            if (kitems_push(out, KI_EDGE, v, 0, 0))
                st = nomem(&c);
        } else {
            st = explain(&c, v, g->vt[v] > s ? g->vt[v] : s);
        }
    }
    lp_hmap_release(&c.memo);
    lp_free(c.stk);
    lp_free(c.tasks);
    return st;
}
