/* cpath.c: the whole-trace critical path (see cpath.h for the definition and ties).
 *
 * Pass 1 computes, for every vertex v, ov[v]: the vertex furthest back in time
 * reachable by walking back from v over non-waiting edges (so the longest path ending
 * at v has weight vtime[v] - vtime[ov[v]]; 4 bytes per vertex). Each worker's vertices are processed in order; a vertex
 * is ready once the send vertices of its incoming messages are done. Workers run as
 * far as they can; a worker that needs another's vertex pushes that worker on a stack
 * (with the vertex as its target), so the pass touches every vertex and edge once and
 * stays on one worker's arrays for long runs. A worker needing one that is already on
 * the stack is a real cycle (only zero-time message cycles can form one); the blocking
 * message is then ignored and counted.
 * Pass 2 walks back from the last vertex re-evaluating the same choice at each vertex.
 */
#include "longpole/analysis/critical-path/cpath.h"
#include "base/hugepage.h"
#include "longpole/base/alloc.h"

#include <string.h>

void lp_cpath_release(lp_cpath *cp)
{
    lp_free(cp->e);
    memset(cp, 0, sizeof *cp);
}

typedef struct dp {
    const lp_pag *g;
    const lp_trace *t;
    uint32_t *ov;        /* per vertex: the vertex its longest path reaches back to */
    uint64_t *cur;       /* per worker: vertices processed */
    uint8_t *ignored;    /* per message, allocated on the first cycle */
    uint64_t ncycles;
} dp;

/* Best predecessor choice at v given the origins of its predecessors: returns the
 * origin vertex of v's longest path and sets *pick to UINT64_MAX (worker edge), a
 * message index, or UINT64_MAX-1 (none: v is its own origin). */
static inline uint32_t choose(const dp *d, uint64_t v, int first, uint64_t *pick)
{
    const lp_pag *g = d->g;
    uint32_t best = (uint32_t)v;
    int64_t bt = INT64_MAX;
    *pick = UINT64_MAX - 1;
    if (!first && lp_pag_wedge_live(g, v)) {
        best = d->ov[v - 1];
        bt = g->vtime[best];
        *pick = UINT64_MAX;
    }
    for (uint32_t k = g->vin[v]; k < g->vin[v + 1]; k++) {
        uint32_t m = g->inmsg[k];
        if (d->ignored && d->ignored[m])
            continue;
        uint32_t o = d->ov[g->msv[m]];
        if (g->vtime[o] < bt) {
            bt = g->vtime[o];
            best = o;
            *pick = m;
        }
    }
    return best;
}

/* Is message m's send vertex processed? */
static inline int ready(const dp *d, uint32_t m)
{
    uint32_t x = d->t->msrc[m];
    return d->g->msv[m] < d->g->voff[x] + d->cur[x];
}

lp_status lp_cpath_compute(const lp_pag *g, lp_cpath *out, lp_error *err)
{
    memset(out, 0, sizeof *out);
    const lp_trace *t = g->t;
    out->nskew = t->nskew;
    if (g->nv == 0)
        return LP_OK;
    dp d = {g, t, NULL, NULL, NULL, 0};
    d.ov = lp_malloc(g->nv * sizeof *d.ov);
    d.cur = lp_calloc(g->nworkers ? g->nworkers : 1, sizeof *d.cur);
    uint32_t *stk = lp_malloc((g->nworkers ? g->nworkers : 1) * sizeof *stk);
    uint64_t *target = lp_malloc((g->nworkers ? g->nworkers : 1) * sizeof *target);
    uint8_t *onstk = lp_calloc(g->nworkers ? g->nworkers : 1, 1);
    lp_status st = LP_OK;
    if (!d.ov || !d.cur || !stk || !target || !onstk) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto done;
    }
    lp_hint_huge(d.ov, g->nv * sizeof *d.ov);
    for (uint32_t w0 = 0; w0 < g->nworkers; w0++) {
        uint64_t len0 = g->voff[w0 + 1] - g->voff[w0];
        if (d.cur[w0] >= len0)
            continue;
        size_t sp = 0;
        stk[sp] = w0;
        target[sp++] = len0;
        onstk[w0] = 1;
        while (sp) {
            uint32_t w = stk[sp - 1];
            uint64_t tgt = target[sp - 1], base = g->voff[w];
            int pushed = 0;
            /* local copies so the hot loop keeps them in registers */
            uint64_t c = d.cur[w];
            uint32_t *ov = d.ov;
            const uint32_t *vin = g->vin, *vact = g->vact;
            const uint16_t *atype = t->atype;
            while (c < tgt) {
                uint64_t v = base + c;
                if (vin[v] == vin[v + 1]) { /* no message: the common, fast case */
                    ov[v] = c && vact[v] != UINT32_MAX && atype[vact[v]] != LP_TYPE_WAITING ? ov[v - 1] : (uint32_t)v;
                    c++;
                    continue;
                }
                d.cur[w] = c;
                /* wait for the senders of v's messages */
                uint32_t blocked = UINT32_MAX;
                for (uint32_t k = vin[v]; k < vin[v + 1]; k++) {
                    uint32_t m = g->inmsg[k];
                    if ((!d.ignored || !d.ignored[m]) && !ready(&d, m)) {
                        blocked = m;
                        break;
                    }
                }
                if (blocked != UINT32_MAX) {
                    uint32_t x = t->msrc[blocked];
                    if (onstk[x]) { /* a zero-time cycle: drop this message */
                        if (!d.ignored && !(d.ignored = lp_calloc(t->nmsgs, 1))) {
                            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                            goto done;
                        }
                        d.ignored[blocked] = 1;
                        d.ncycles++;
                        continue;
                    }
                    stk[sp] = x;
                    target[sp++] = g->msv[blocked] - g->voff[x] + 1;
                    onstk[x] = 1;
                    pushed = 1;
                    break;
                }
                uint64_t pick;
                ov[v] = choose(&d, v, c == 0, &pick);
                c++;
            }
            d.cur[w] = c;
            if (!pushed) {
                onstk[w] = 0;
                sp--;
            }
        }
    }
    /* the last vertex: latest, then furthest reach, then lowest worker */
    uint64_t last = UINT64_MAX;
    for (uint32_t w = 0; w < g->nworkers; w++) {
        if (g->voff[w] == g->voff[w + 1])
            continue;
        uint64_t v = g->voff[w + 1] - 1;
        if (last == UINT64_MAX || g->vtime[v] > g->vtime[last] ||
            (g->vtime[v] == g->vtime[last] && g->vtime[d.ov[v]] < g->vtime[d.ov[last]]))
            last = v;
    }
    /* walk back */
    size_t cap = 64, n = 0;
    lp_cp_elem *e = lp_malloc(cap * sizeof *e);
    if (!e) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto done;
    }
    uint64_t v = last;
    uint32_t w = lp_pag_vworker(g, v);
    out->end = g->vtime[v];
    for (;;) {
        uint64_t pick;
        choose(&d, v, v == g->voff[w], &pick);
        if (pick == UINT64_MAX - 1)
            break;
        if (pick == UINT64_MAX) {
            uint32_t a = g->vact[v];
            if (n && e[n - 1].kind == LP_CP_ACTIVITY && e[n - 1].index == a && e[n - 1].start == g->vtime[v]) {
                e[n - 1].start = g->vtime[v - 1];
            } else {
                if (n == cap) {
                    void *p = e;
                    if (lp_grow(&p, &cap, n + 1, sizeof *e)) {
                        lp_free(e);
                        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                        goto done;
                    }
                    e = p;
                }
                e[n++] = (lp_cp_elem){LP_CP_ACTIVITY, w, a, g->vtime[v - 1], g->vtime[v]};
            }
            v--;
        } else {
            if (n == cap) {
                void *p = e;
                if (lp_grow(&p, &cap, n + 1, sizeof *e)) {
                    lp_free(e);
                    st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                    goto done;
                }
                e = p;
            }
            e[n++] = (lp_cp_elem){LP_CP_MESSAGE, t->mdst[pick], pick, t->msend[pick], t->mrecv[pick]};
            v = g->msv[pick];
            w = t->msrc[pick];
        }
    }
    out->start = g->vtime[v];
    out->total = out->end - out->start;
    /* reverse into time order */
    for (size_t i = 0; i < n / 2; i++) {
        lp_cp_elem x = e[i];
        e[i] = e[n - 1 - i];
        e[n - 1 - i] = x;
    }
    out->e = e;
    out->n = n;
    out->ncycles = d.ncycles;
done:
    lp_free(d.ov);
    lp_free(d.cur);
    lp_free(d.ignored);
    lp_free(stk);
    lp_free(target);
    lp_free(onstk);
    return st;
}
