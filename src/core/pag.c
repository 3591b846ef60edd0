/* pag.c: building the program activity graph of a trace (see pag.h).
 *
 * Per worker, three sorted streams are merged: the activity boundaries (start, end,
 * start, end, ... non-decreasing because activities never overlap), the send times
 * and the receive times. Each distinct instant becomes a vertex; the activity that
 * covers the interval between two consecutive vertices labels the worker edge.
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

/* Count (vtime == NULL) or emit the vertices of worker w. Returns the count. */
static uint64_t worker_vertices(const lp_trace *t, uint32_t w, const lp_endpoints *snd, const lp_endpoints *rcv,
                                uint64_t base, int64_t *vtime, uint32_t *vact, uint32_t *msv, uint32_t *mrv)
{
    uint64_t a = t->wfirst[w], az = t->wfirst[w + 1];
    uint64_t bi = 2 * a, bz = 2 * az; /* boundary stream: index 2i = start of i, 2i+1 = end of i */
    uint64_t si = snd->off[w], sz = snd->off[w + 1];
    uint64_t ri = rcv->off[w], rz = rcv->off[w + 1];
    uint64_t n = 0;
    uint64_t cover = a; /* candidate covering activity */
    int64_t prev = 0;
    for (;;) {
        int64_t tb = bi < bz ? ((bi & 1) ? t->aend[bi >> 1] : t->astart[bi >> 1]) : INT64_MAX;
        int64_t ts = si < sz ? t->msend[snd->msg[si]] : INT64_MAX;
        int64_t tr = ri < rz ? t->mrecv[rcv->msg[ri]] : INT64_MAX;
        int64_t tv = tb < ts ? tb : ts;
        tv = tr < tv ? tr : tv;
        if (bi >= bz && si >= sz && ri >= rz)
            break;
        uint64_t v = base + n;
        if (vtime) {
            vtime[v] = tv;
            uint32_t act = UINT32_MAX;
            if (n > 0) {
                while (cover < az && t->aend[cover] < tv)
                    cover++;
                if (cover < az && t->astart[cover] <= prev && t->aend[cover] >= tv)
                    act = (uint32_t)cover;
            }
            vact[v] = act;
        }
        while (bi < bz && ((bi & 1) ? t->aend[bi >> 1] : t->astart[bi >> 1]) == tv)
            bi++;
        while (si < sz && t->msend[snd->msg[si]] == tv) {
            if (msv)
                msv[snd->msg[si]] = (uint32_t)v;
            si++;
        }
        while (ri < rz && t->mrecv[rcv->msg[ri]] == tv) {
            if (mrv)
                mrv[rcv->msg[ri]] = (uint32_t)v;
            ri++;
        }
        prev = tv;
        n++;
    }
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
    for (uint32_t w = 0; w < t->nworkers; w++)
        g->voff[w + 1] = g->voff[w] + worker_vertices(t, w, &snd, &rcv, 0, NULL, NULL, NULL, NULL);
    g->nv = g->voff[t->nworkers];
    if (g->nv >= UINT32_MAX) {
        lp_endpoints_release(&snd);
        lp_endpoints_release(&rcv);
        lp_pag_release(g);
        return lp_error_set(err, LP_ERR_LIMIT, "the graph has %llu vertices; at most %u are supported",
                            (unsigned long long)g->nv, UINT32_MAX - 1);
    }
    size_t nv = g->nv ? g->nv : 1, nm = t->nmsgs ? t->nmsgs : 1;
    g->vtime = lp_malloc(nv * sizeof *g->vtime);
    g->vact = lp_malloc(nv * sizeof *g->vact);
    g->msv = lp_malloc(nm * sizeof *g->msv);
    g->mrv = lp_malloc(nm * sizeof *g->mrv);
    if (!g->vtime || !g->vact || !g->msv || !g->mrv)
        goto oom;
    for (uint32_t w = 0; w < t->nworkers; w++)
        worker_vertices(t, w, &snd, &rcv, g->voff[w], g->vtime, g->vact, g->msv, g->mrv);
    lp_endpoints_release(&snd);
    lp_endpoints_release(&rcv);
    for (uint64_t v = 0; v < g->nv; v++)
        g->nwedges += g->vact[v] != UINT32_MAX;
    /* incoming communication edges */
    g->vin = lp_calloc((size_t)g->nv + 1, sizeof *g->vin);
    if (!g->vin)
        goto oom;
    for (uint64_t m = 0; m < t->nmsgs; m++)
        if (!(t->mflags[m] & LP_MSG_SKEW)) {
            g->vin[g->mrv[m] + 1]++;
            g->ncedges++;
        }
    for (uint64_t v = 0; v < g->nv; v++)
        g->vin[v + 1] += g->vin[v];
    g->inmsg = lp_malloc((g->ncedges ? g->ncedges : 1) * sizeof *g->inmsg);
    if (!g->inmsg)
        goto oom;
    {
        /* fill using vin as a cursor, then shift back */
        for (uint64_t m = 0; m < t->nmsgs; m++)
            if (!(t->mflags[m] & LP_MSG_SKEW))
                g->inmsg[g->vin[g->mrv[m]]++] = (uint32_t)m;
        for (uint64_t v = g->nv; v > 0; v--)
            g->vin[v] = g->vin[v - 1];
        g->vin[0] = 0;
    }
    return LP_OK;
oom:
    lp_endpoints_release(&snd);
    lp_endpoints_release(&rcv);
    lp_pag_release(g);
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory building the activity graph");
}
