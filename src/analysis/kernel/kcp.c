/* kcp.c: a thread's critical path (kcpath.h): the query (the thread's lifetime, the
 * interval clamped to it), the walk (kcp_bounded.c or kcp_unbounded.c), and gluing the
 * walk's items into contiguous elements (kcp_int.h).
 *
 * Gluing keeps a cursor, the end of the path so far (initially the query start): an item
 * starting after it gets a GAP element first (on the item's worker: the time the trace
 * does not explain), an item starting before it is clipped at it, every item is clipped
 * to the query end, and zero-length items are kept only if they are links (a wake-up
 * is an instant, but it says who the path continues on). So elements are contiguous
 * and sum to end - start.
 */
#include "analysis/kernel/kcp_int.h"
#include "longpole/base/alloc.h"

#include <string.h>

int kitems_push(kitems *l, uint8_t kind, uint32_t ref, int64_t t0, int64_t t1)
{
    if (lp_grow((void **)&l->it, &l->cap, l->n + 1, sizeof *l->it))
        return -1;
    kitem *i = &l->it[l->n++];
    i->kind = kind;
    i->ref = ref;
    i->t0 = t0;
    i->t1 = t1;
    return 0;
}

void kitems_reverse(kitems *l, size_t from)
{
    for (size_t a = from, b = l->n; a + 1 < b; a++, b--) {
        kitem t = l->it[a];
        l->it[a] = l->it[b - 1];
        l->it[b - 1] = t;
    }
}

void lp_kcp_release(lp_kcp *cp)
{
    lp_free(cp->e);
    memset(cp, 0, sizeof *cp);
}

/* An item's extent and workers. */
static void item_span(const lp_kgraph *g, const kitem *it, int64_t *t0, int64_t *t1, uint32_t *from, uint32_t *to)
{
    switch (it->kind) {
    case KI_LINK:
        *t0 = g->vt[g->lfrom[it->ref]];
        *t1 = g->vt[g->lto[it->ref]];
        *from = lp_kgraph_vworker(g, g->lfrom[it->ref]);
        *to = lp_kgraph_vworker(g, g->lto[it->ref]);
        break;
    case KI_GAP:
        *t0 = it->t0;
        *t1 = it->t1;
        *from = *to = it->ref;
        break;
    default:
        *t0 = g->vt[it->ref];
        *t1 = g->vt[it->ref + 1];
        *from = *to = lp_kgraph_vworker(g, it->ref);
        break;
    }
}

static int put(lp_kcp *cp, size_t *cap, const lp_kcp_elem *e)
{
    if (lp_grow((void **)&cp->e, cap, cp->n + 1, sizeof *cp->e))
        return -1;
    cp->e[cp->n++] = *e;
    if (e->flags & LP_KCP_UNEXPLAINED) {
        cp->nunexplained++;
        cp->unexplained_ns += e->end - e->start;
    }
    if (e->kind == LP_KCP_GAP)
        cp->gap_ns += e->end - e->start;
    return 0;
}

lp_status kcp_glue(const lp_kgraph *g, const kitems *items, lp_kcp *cp, lp_error *err)
{
    size_t cap = 0;
    int64_t cur = cp->start, hi = cp->end;
    for (size_t i = 0; i < items->n && cur <= hi; i++) {
        const kitem *it = &items->it[i];
        int64_t t0, t1;
        uint32_t from, to;
        item_span(g, it, &t0, &t1, &from, &to);
        if (t1 < cur || (t1 == cur && it->kind != KI_LINK) || t0 > hi)
            continue;
        if (t0 > cur) {
            lp_kcp_elem gap = {cur, t0 < hi ? t0 : hi, from, from, LP_NONE32, LP_KCP_GAP, LP_KS_UNKNOWN, LP_KR_NONE, 0};
            if (put(cp, &cap, &gap))
                return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            cur = gap.end;
        }
        lp_kcp_elem e = {cur, t1 < hi ? t1 : hi, to, from, it->ref, LP_KCP_STATE, 0, 0, 0};
        if (e.start > t0 || e.end < t1)
            e.flags |= LP_KCP_CLIPPED;
        if (e.end == e.start && it->kind != KI_LINK)
            continue;
        switch (it->kind) {
        case KI_LINK:
            e.kind = LP_KCP_LINK;
            e.state = LP_KS_NONE;
            e.reason = g->lkind[it->ref];
            break;
        case KI_GAP:
            e.kind = LP_KCP_GAP;
            e.state = LP_KS_UNKNOWN;
            e.ref = LP_NONE32;
            break;
        default:
            e.state = g->vstate[it->ref];
            e.reason = g->vreason[it->ref];
            if (it->kind == KI_UNEXPL)
                e.flags |= LP_KCP_UNEXPLAINED;
            break;
        }
        if (put(cp, &cap, &e))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        cur = e.end;
    }
    if (cur < hi) { /* nothing explained the end: only a damaged walk leaves this */
        lp_kcp_elem gap = {cur, hi, cp->worker, cp->worker, LP_NONE32, LP_KCP_GAP, LP_KS_UNKNOWN, LP_KR_NONE, 0};
        if (put(cp, &cap, &gap))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    return LP_OK;
}

lp_status lp_kcp_compute(const lp_kgraph *g, uint32_t w, int64_t start, int64_t end, lp_kcp_algo algo, lp_kcp *out,
                         lp_error *err)
{
    memset(out, 0, sizeof *out);
    if (w >= g->nworkers || g->voff[w] == g->voff[w + 1])
        return lp_error_set(err, LP_ERR_ARG, "worker %u has no vertices in the execution graph", w);
    int64_t life0 = g->vt[g->voff[w]], life1 = g->vt[g->voff[w + 1] - 1];
    int64_t s = start < life0 ? life0 : start, e = end > life1 ? life1 : end;
    if (s > e)
        return lp_error_set(err, LP_ERR_ARG, "the interval [%lld, %lld] misses the lifetime of '%s' [%lld, %lld]",
                            (long long)start, (long long)end, lp_kgraph_worker_name(g, w), (long long)life0,
                            (long long)life1);
    out->worker = w;
    out->start = s;
    out->end = e;
    out->algo = algo;
    kitems items = {NULL, 0, 0};
    lp_status st = algo == LP_KCP_UNBOUNDED ? kcp_unbounded(g, w, s, e, &items, err)
                                            : kcp_bounded(g, w, s, e, &items, err);
    if (!st)
        st = kcp_glue(g, &items, out, err);
    lp_free(items.it);
    if (st)
        lp_kcp_release(out);
    return st;
}
