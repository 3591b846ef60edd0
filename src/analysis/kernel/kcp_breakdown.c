/* kcp_breakdown.c: where a thread's critical path spends its time, by thread and by
 * (state, reason), next to the thread's own profile over the same interval (kcpath.h).
 *
 * The own profile is what a per-thread state view shows: the thread's edges clipped to
 * the interval. Side by side with the path it tells, for example, that a thread was
 * "blocked on thread" 80% of the time, and that on its critical path that time was
 * another thread running (60%) and waiting for a CPU (20%). State rows are kept in a
 * direct table (3 kinds x 16 x 16 keys), thread rows in the one hash table; both are
 * sorted at the end. O(path elements + thread edges in the interval).
 */
#include "longpole/analysis/kernel/kcpath.h"
#include "base/hashmap.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NKEYS (3 * 16 * 16)

static unsigned skey(unsigned kind, unsigned state, unsigned reason) { return (kind * 16 + state) * 16 + reason; }

static int row_cmp(const void *pa, const void *pb)
{
    const lp_kcp_row *a = pa, *b = pb;
    if (a->path_ns != b->path_ns)
        return a->path_ns > b->path_ns ? -1 : 1;
    if (a->own_ns != b->own_ns)
        return a->own_ns > b->own_ns ? -1 : 1;
    uint64_t ka = (uint64_t)a->worker << 24 | (uint64_t)skey(a->kind, a->state, a->reason);
    uint64_t kb = (uint64_t)b->worker << 24 | (uint64_t)skey(b->kind, b->state, b->reason);
    return ka < kb ? -1 : ka > kb;
}

void lp_kcp_breakdown_release(lp_kcp_breakdown *b)
{
    lp_free(b->by_thread);
    lp_free(b->by_state);
    memset(b, 0, sizeof *b);
}

/* State rows: the path's elements, then the thread's own edges. */
static lp_status by_state(const lp_kgraph *g, const lp_kcp *cp, lp_kcp_breakdown *out, lp_error *err)
{
    lp_kcp_row *t = lp_calloc(NKEYS, sizeof *t);
    if (!t)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < cp->n; i++) {
        const lp_kcp_elem *e = &cp->e[i];
        lp_kcp_row *r = &t[skey(e->kind, e->state & 15, e->reason & 15)];
        r->path_ns += e->end - e->start;
        r->path_n++;
    }
    uint32_t w = cp->worker;
    for (uint32_t v = g->voff[w]; v + 1 < g->voff[w + 1]; v++) {
        int64_t a = g->vt[v] > cp->start ? g->vt[v] : cp->start, b = g->vt[v + 1] < cp->end ? g->vt[v + 1] : cp->end;
        if (b <= a)
            continue;
        unsigned st = g->vstate[v];
        lp_kcp_row *r = st == LP_KS_NONE ? &t[skey(LP_KCP_GAP, LP_KS_UNKNOWN, LP_KR_NONE)]
                                         : &t[skey(LP_KCP_STATE, st, g->vreason[v])];
        r->own_ns += b - a;
        r->own_n++;
    }
    size_t n = 0;
    for (unsigned k = 0; k < NKEYS; k++)
        if (t[k].path_n || t[k].own_n) {
            t[n] = t[k];
            t[n].worker = LP_NONE32;
            t[n].kind = (uint8_t)(k / 256);
            t[n].state = (uint8_t)(k / 16 % 16);
            t[n].reason = (uint8_t)(k % 16);
            n++;
        }
    qsort(t, n, sizeof *t, row_cmp);
    out->by_state = t;
    out->nstate = n;
    return LP_OK;
}

/* Thread rows: each element's worker (links: LP_NONE32); the thread's own row carries its
 * whole interval as own time. */
static lp_status by_thread(const lp_kcp *cp, lp_kcp_breakdown *out, lp_error *err)
{
    lp_hmap m;
    lp_kcp_row *rows = NULL;
    size_t n = 0, cap = 0;
    lp_status st = lp_hmap_init(&m, 16, err);
    for (size_t i = 0; !st && i <= cp->n; i++) {
        uint32_t w = i == cp->n ? cp->worker : cp->e[i].kind == LP_KCP_LINK ? LP_NONE32 : cp->e[i].worker;
        uint64_t idx;
        if (!lp_hmap_get(&m, w, &idx)) {
            if (lp_grow((void **)&rows, &cap, n + 1, sizeof *rows) || lp_hmap_put(&m, w, n, err)) {
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                break;
            }
            memset(&rows[n], 0, sizeof *rows);
            rows[n].worker = w;
            idx = n++;
        }
        if (i == cp->n) {
            rows[idx].own_ns = cp->end - cp->start;
            rows[idx].own_n = 1;
        } else {
            rows[idx].path_ns += cp->e[i].end - cp->e[i].start;
            rows[idx].path_n++;
        }
    }
    lp_hmap_release(&m);
    if (st) {
        lp_free(rows);
        return st;
    }
    qsort(rows, n, sizeof *rows, row_cmp);
    out->by_thread = rows;
    out->nthread = n;
    return LP_OK;
}

lp_status lp_kcp_breakdown_compute(const lp_kgraph *g, const lp_kcp *cp, lp_kcp_breakdown *out, lp_error *err)
{
    memset(out, 0, sizeof *out);
    out->total = cp->end - cp->start;
    lp_status st = by_state(g, cp, out, err);
    if (!st)
        st = by_thread(cp, out, err);
    if (st)
        lp_kcp_breakdown_release(out);
    return st;
}

const char *lp_kcp_row_label(const lp_kcp_row *r, char *buf, size_t n)
{
    if (r->kind == LP_KCP_GAP)
        snprintf(buf, n, "gap");
    else if (r->kind == LP_KCP_LINK)
        snprintf(buf, n, "link/%s", lp_klink_name(r->reason));
    else if (r->state == LP_KS_BLOCKED)
        snprintf(buf, n, "blocked/%s", lp_kreason_name(r->reason));
    else
        snprintf(buf, n, "%s", lp_kstate_name(r->state));
    return buf;
}
