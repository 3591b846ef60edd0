/* check.c: SnailTrail App. A.2 Properties 1 and 2 (see check.h).
 * Property 1 is a scan of the PAG's vertices. Property 2 is a sweep over the sorted
 * boundaries of worker spans, waiting activities and messages in flight, counting
 * each on the open interval after a boundary. O(n log n) in the number of waits and
 * messages. */
#include "longpole/analysis/critical-path/check.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

void lp_check_release(lp_check *c)
{
    lp_free(c->p1);
    lp_free(c->p2);
    memset(c, 0, sizeof *c);
}

typedef struct ev {
    int64_t t;
    int32_t da, dw, dc; /* deltas: active workers, waiting, in flight */
} ev;

static int cmp_ev(const void *pa, const void *pb)
{
    const ev *a = pa, *b = pb;
    return a->t < b->t ? -1 : a->t > b->t;
}

lp_status lp_check_run(const lp_pag *g, lp_check *out, lp_error *err)
{
    memset(out, 0, sizeof *out);
    const lp_trace *t = g->t;
    /* Property 1 */
    int64_t tmin = INT64_MAX;
    for (uint32_t w = 0; w < g->nworkers; w++)
        if (g->voff[w] < g->voff[w + 1] && g->vtime[g->voff[w]] < tmin)
            tmin = g->vtime[g->voff[w]];
    size_t cap1 = 0;
    for (uint32_t w = 0; w < g->nworkers; w++)
        for (uint64_t v = g->voff[w]; v < g->voff[w + 1]; v++) {
            if (g->vtime[v] == tmin)
                continue;
            int indeg = (v > g->voff[w] && g->vact[v] != UINT32_MAX) + (g->vin[v + 1] > g->vin[v]);
            if (indeg)
                continue;
            void *p = out->p1;
            if (lp_grow(&p, &cap1, out->np1 + 1, sizeof(lp_p1)))
                goto oom;
            out->p1 = p;
            out->p1[out->np1++] = (lp_p1){w, g->vtime[v]};
        }
    /* Property 2 */
    size_t nev = 0;
    for (uint32_t w = 0; w < g->nworkers; w++) {
        if (g->voff[w] == g->voff[w + 1])
            continue;
        nev += 2;
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++)
            nev += 2 * (t->atype[i] == LP_TYPE_WAITING && t->aend[i] > t->astart[i]);
    }
    for (uint64_t m = 0; m < t->nmsgs; m++)
        nev += 2 * (t->mrecv[m] > t->msend[m]);
    ev *e = lp_malloc((nev ? nev : 1) * sizeof *e);
    if (!e)
        goto oom;
    size_t k = 0;
    for (uint32_t w = 0; w < g->nworkers; w++) {
        if (g->voff[w] == g->voff[w + 1])
            continue;
        e[k++] = (ev){g->vtime[g->voff[w]], 1, 0, 0};
        e[k++] = (ev){g->vtime[g->voff[w + 1] - 1], -1, 0, 0};
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++)
            if (t->atype[i] == LP_TYPE_WAITING && t->aend[i] > t->astart[i]) {
                e[k++] = (ev){t->astart[i], 0, 1, 0};
                e[k++] = (ev){t->aend[i], 0, -1, 0};
            }
    }
    for (uint64_t m = 0; m < t->nmsgs; m++)
        if (t->mrecv[m] > t->msend[m]) {
            e[k++] = (ev){t->msend[m], 0, 0, 1};
            e[k++] = (ev){t->mrecv[m], 0, 0, -1};
        }
    qsort(e, k, sizeof *e, cmp_ev);
    int64_t a = 0, wt = 0, c = 0;
    size_t cap2 = 0;
    for (size_t i = 0; i < k;) {
        int64_t now = e[i].t;
        for (; i < k && e[i].t == now; i++) {
            a += e[i].da;
            wt += e[i].dw;
            c += e[i].dc;
        }
        if (i == k)
            break;
        int64_t next = e[i].t;
        if (a > 0 && wt >= a && c == 0) {
            if (out->np2 && out->p2[out->np2 - 1].to == now) {
                out->p2[out->np2 - 1].to = next;
            } else {
                void *p = out->p2;
                if (lp_grow(&p, &cap2, out->np2 + 1, sizeof(lp_p2))) {
                    lp_free(e);
                    goto oom;
                }
                out->p2 = p;
                out->p2[out->np2++] = (lp_p2){now, next, (uint32_t)a};
            }
            out->p2_ns += next - now;
        }
    }
    lp_free(e);
    return LP_OK;
oom:
    lp_check_release(out);
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
}
