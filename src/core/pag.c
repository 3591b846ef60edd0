/* pag.c: building the program activity graph of a trace (see pag.h).
 *
 * Per worker, three sorted streams are merged: the activity boundaries (start, end,
 * start, end, ... non-decreasing because activities never overlap), the send times
 * and the receive times. Each distinct instant becomes a vertex; the activity that
 * covers the interval between two consecutive vertices labels the worker edge. One
 * pass into arrays sized for the worst case, shrunk afterwards (untouched capacity is
 * never resident).
 */
#include "longpole/pag.h"
#include "longpole/alloc.h"

#include <string.h>

void lp_pag_release(lp_pag *g)
{
    lp_free(g->voff);
    lp_free(g->vtime);
    lp_free(g->vact);
    lp_free(g->vin);
    lp_free(g->inmsg);
    lp_free(g->msv);
    lp_free(g->mrv);
    memset(g, 0, sizeof *g);
}

uint32_t lp_pag_vworker(const lp_pag *g, uint64_t v)
{
    uint32_t lo = 0, hi = g->nworkers;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->voff[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    while (lo + 1 < g->nworkers && g->voff[lo + 1] <= v)
        lo++;
    return lo;
}

/* Count (vtime == NULL) or emit the vertices of worker w; returns the count.
 * Activities are visited in order; message instants before an activity's start (or
 * after the last activity) lie in uncovered time, those inside (start, end] are covered
 * by it. A vertex's worker edge is the activity covering (previous vertex, vertex]. */
static inline uint64_t worker_vertices(const lp_trace *t, uint32_t w, const lp_endpoints *snd,
                                       const lp_endpoints *rcv, uint64_t base, int64_t *vtime, uint32_t *vact,
                                       uint32_t *msv, uint32_t *mrv, uint32_t *vin, uint32_t *inmsg, uint32_t *kin)
{
    const uint32_t *sm = snd->msg + snd->off[w], *se = snd->msg + snd->off[w + 1];
    const uint32_t *rm = rcv->msg + rcv->off[w], *re = rcv->msg + rcv->off[w + 1];
    const int64_t *st = snd->time + snd->off[w], *rt = rcv->time + rcv->off[w];
    int64_t ns = sm < se ? *st : INT64_MAX;
    int64_t nr = rm < re ? *rt : INT64_MAX;
    uint64_t n = 0;
    int64_t last = INT64_MIN;
#define EMIT(tv, act)                                                                \
    do {                                                                             \
        if (n == 0 || (tv) != last) {                                                \
            if (vtime) {                                                             \
                vtime[base + n] = (tv);                                              \
                vact[base + n] = n ? (act) : UINT32_MAX;                             \
                vin[base + n] = *kin;                                                \
            }                                                                        \
            n++;                                                                     \
            last = (tv);                                                             \
        }                                                                            \
    } while (0)
    /* give the messages at instant `last` their vertex */
#define ASSIGN()                                                                     \
    do {                                                                             \
        while (sm < se && ns == last) {                                              \
            if (msv)                                                                 \
                msv[*sm] = (uint32_t)(base + n - 1);                                 \
            sm++;                                                                    \
            st++;                                                                    \
            ns = sm < se ? *st : INT64_MAX;                                          \
        }                                                                            \
        while (rm < re && nr == last) {                                              \
            if (mrv) {                                                               \
                mrv[*rm] = (uint32_t)(base + n - 1);                                 \
                if (!(t->mflags[*rm] & LP_MSG_SKEW))                                 \
                    inmsg[(*kin)++] = *rm;                                           \
            }                                                                        \
            rm++;                                                                    \
            rt++;                                                                    \
            nr = rm < re ? *rt : INT64_MAX;                                          \
        }                                                                            \
    } while (0)
    for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++) {
        int64_t s0 = t->astart[i], e0 = t->aend[i];
        int64_t m;
        while ((m = ns < nr ? ns : nr) < s0) { /* uncovered instants before the activity */
            EMIT(m, UINT32_MAX);
            ASSIGN();
        }
        EMIT(s0, UINT32_MAX);
        ASSIGN();
        while ((m = ns < nr ? ns : nr) < e0) { /* instants inside it */
            EMIT(m, (uint32_t)i);
            ASSIGN();
        }
        EMIT(e0, (uint32_t)i);
        ASSIGN();
    }
    while (sm < se || rm < re) { /* uncovered instants after the last activity */
        int64_t m = sm < se && (rm >= re || ns <= nr) ? ns : nr;
        EMIT(m, UINT32_MAX);
        ASSIGN();
    }
#undef EMIT
#undef ASSIGN
    return n;
}

lp_status lp_pag_build(const lp_trace *t, lp_pag *g, lp_error *err)
{
    memset(g, 0, sizeof *g);
    g->t = t;
    g->nworkers = t->nworkers;
    lp_endpoints snd = {0}, rcv = {0};
    lp_status st = lp_endpoints_build(t, 0, &snd, err);
    if (st)
        return st;
    if ((st = lp_endpoints_build(t, 1, &rcv, err))) {
        lp_endpoints_release(&snd);
        return st;
    }
    g->voff = lp_calloc((size_t)t->nworkers + 1, sizeof *g->voff);
    if (!g->voff)
        goto oom;
    /* one pass: the arrays are sized for the worst case (two vertices per activity, one
     * per message end) and shrunk after; untouched capacity costs no resident memory */
    uint64_t vmax = 2 * t->nacts + 2 * t->nmsgs;
    if (vmax >= UINT32_MAX) {
        uint64_t exact = 0;
        for (uint32_t w = 0; w < t->nworkers; w++)
            exact += worker_vertices(t, w, &snd, &rcv, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        if (exact >= UINT32_MAX) {
            lp_endpoints_release(&snd);
            lp_endpoints_release(&rcv);
            lp_pag_release(g);
            return lp_error_set(err, LP_ERR_LIMIT, "the graph has %llu vertices; at most %u are supported",
                                (unsigned long long)exact, UINT32_MAX - 1);
        }
        vmax = exact;
    }
    size_t nvmax = vmax ? vmax : 1, nm = t->nmsgs ? t->nmsgs : 1;
    g->vtime = lp_malloc(nvmax * sizeof *g->vtime);
    g->vact = lp_malloc(nvmax * sizeof *g->vact);
    g->msv = lp_malloc(nm * sizeof *g->msv);
    g->mrv = lp_malloc(nm * sizeof *g->mrv);
    /* the receive endpoints are in vertex order, so the incoming-message lists (CSR) are
     * filled in the same pass, in order, with no scatter */
    g->vin = lp_malloc((nvmax + 1) * sizeof *g->vin);
    g->inmsg = lp_malloc(nm * sizeof *g->inmsg);
    if (!g->vtime || !g->vact || !g->msv || !g->mrv || !g->vin || !g->inmsg)
        goto oom;
    uint32_t kin = 0;
    for (uint32_t w = 0; w < t->nworkers; w++)
        g->voff[w + 1] = g->voff[w] + worker_vertices(t, w, &snd, &rcv, g->voff[w], g->vtime, g->vact, g->msv,
                                                      g->mrv, g->vin, g->inmsg, &kin);
    g->nv = g->voff[t->nworkers];
    g->vin[g->nv] = kin;
    g->ncedges = kin;
    lp_endpoints_release(&snd);
    lp_endpoints_release(&rcv);
    {
        void *p = lp_realloc(g->vtime, (g->nv ? g->nv : 1) * sizeof *g->vtime);
        if (p)
            g->vtime = p;
        p = lp_realloc(g->vact, (g->nv ? g->nv : 1) * sizeof *g->vact);
        if (p)
            g->vact = p;
        p = lp_realloc(g->vin, (g->nv + 1) * sizeof *g->vin);
        if (p)
            g->vin = p;
    }
    for (uint64_t v = 0; v < g->nv; v++)
        g->nwedges += g->vact[v] != UINT32_MAX;
    return LP_OK;
oom:
    lp_endpoints_release(&snd);
    lp_endpoints_release(&rcv);
    lp_pag_release(g);
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory building the activity graph");
}
