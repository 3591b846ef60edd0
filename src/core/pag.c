/* pag.c: building the program activity graph of a trace (see pag.h).
 *
 * Per worker, three sorted streams are merged: the activity boundaries (start, end,
 * start, end, ... non-decreasing because activities never overlap), the send times
 * and the receive times. Each distinct instant becomes a vertex; the activity that
 * covers the interval between two consecutive vertices labels the worker edge. One
 * pass into arrays sized for the worst case, shrunk afterwards (untouched capacity is
 * never resident).
 *
 * Big traces are built on two threads: the send and receive endpoint lists at once, then
 * the workers in two halves of about equal worst-case size. The first half is written
 * in place; the second from the worst-case end of the first, then moved down next to it
 * (vertex arrays, incoming-message lists, and the message -> vertex maps of its
 * messages shifted), so the graph is identical to the one-thread build.
 */
#include "longpole/pag.h"
#include "longpole/alloc.h"
#include "analysis/hugepage.h"

#include <pthread.h>
#include <string.h>

uint64_t lp_pag_parallel_min = 200000;

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

typedef struct ep_job {
    const lp_trace *t;
    lp_endpoints *ep;
    lp_error err;
    lp_status st;
} ep_job;

static void *ep_thread(void *arg)
{
    ep_job *j = arg;
    j->st = lp_endpoints_build(j->t, 1, j->ep, &j->err);
    return NULL;
}

/* Workers [w0, w1) emitted from vertex `base` and incoming-message index `kin`. */
typedef struct half_job {
    const lp_trace *t;
    lp_pag *g;
    const lp_endpoints *snd, *rcv;
    uint32_t w0, w1;
    uint64_t base;
    uint32_t kin;
} half_job;

static void *half_thread(void *arg)
{
    half_job *j = arg;
    lp_pag *g = j->g;
    uint64_t v = j->base;
    for (uint32_t w = j->w0; w < j->w1; w++) {
        v += worker_vertices(j->t, w, j->snd, j->rcv, v, g->vtime, g->vact, g->msv, g->mrv, g->vin, g->inmsg, &j->kin);
        g->voff[w + 1] = v; /* each half writes only its own workers' ends */
    }
    return NULL;
}

/* Build the vertices on two threads (see the file comment); 0 when a thread could not be
 * started (nothing written then: the caller builds on one thread). */
static int build_halves(const lp_trace *t, lp_pag *g, const lp_endpoints *snd, const lp_endpoints *rcv,
                        uint32_t *kin_out)
{
    uint32_t nw = t->nworkers;
    uint64_t total = 2 * t->nacts + 2 * t->nmsgs, acc = 0;
    uint32_t k = 1;
    for (uint32_t w = 0; w + 1 < nw; w++) {
        acc += 2 * (t->wfirst[w + 1] - t->wfirst[w]) + (snd->off[w + 1] - snd->off[w]) +
               (rcv->off[w + 1] - rcv->off[w]);
        k = w + 1;
        if (2 * acc >= total)
            break;
    }
    /* the second half starts after the first half's worst case */
    uint64_t rb = 2 * (t->wfirst[k] - t->wfirst[0]) + snd->off[k] + rcv->off[k];
    uint32_t kb = (uint32_t)rcv->off[k];
    half_job a = {t, g, snd, rcv, 0, k, 0, 0}, b = {t, g, snd, rcv, k, nw, rb, kb};
    pthread_t th;
    if (pthread_create(&th, NULL, half_thread, &b) != 0)
        return 0;
    half_thread(&a);
    pthread_join(th, NULL);
    uint64_t va = g->voff[k], nvb = g->voff[nw] - rb, shift = rb - va;
    uint32_t ka = a.kin, dk = kb - ka, nkb = b.kin - kb;
    if (shift) {
        memmove(g->vtime + va, g->vtime + rb, nvb * sizeof *g->vtime);
        memmove(g->vact + va, g->vact + rb, nvb * sizeof *g->vact);
    }
    for (uint64_t v = 0; v < nvb; v++)
        g->vin[va + v] = g->vin[rb + v] - dk;
    if (dk)
        memmove(g->inmsg + ka, g->inmsg + kb, (size_t)nkb * sizeof *g->inmsg);
    for (uint32_t w = k; w < nw; w++)
        g->voff[w + 1] -= shift;
    if (shift) {
        for (uint64_t m = 0; m < t->nmsgs; m++) {
            g->msv[m] -= t->msrc[m] >= k ? (uint32_t)shift : 0;
            g->mrv[m] -= t->mdst[m] >= k ? (uint32_t)shift : 0;
        }
    }
    *kin_out = ka + nkb;
    return 1;
}

lp_status lp_pag_build(const lp_trace *t, lp_pag *g, lp_error *err)
{
    memset(g, 0, sizeof *g);
    g->t = t;
    g->nworkers = t->nworkers;
    lp_endpoints snd = {0}, rcv = {0};
    int par = t->nacts + t->nmsgs >= lp_pag_parallel_min && t->nworkers >= 2;
    ep_job rj = {t, &rcv, {0}, LP_OK};
    pthread_t th;
    int threaded = par && pthread_create(&th, NULL, ep_thread, &rj) == 0;
    lp_status st = lp_endpoints_build(t, 0, &snd, err);
    if (threaded)
        pthread_join(th, NULL);
    else
        rj.st = lp_endpoints_build(t, 1, &rcv, &rj.err);
    if (st || rj.st) {
        if (!st)
            *err = rj.err;
        lp_endpoints_release(&snd);
        lp_endpoints_release(&rcv);
        return st ? st : rj.st;
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
    /* written once, front to back: first touch is cheaper with huge pages */
    lp_hint_huge(g->vtime, nvmax * sizeof *g->vtime);
    lp_hint_huge(g->vact, nvmax * sizeof *g->vact);
    lp_hint_huge(g->vin, (nvmax + 1) * sizeof *g->vin);
    lp_hint_huge(g->msv, nm * sizeof *g->msv);
    lp_hint_huge(g->mrv, nm * sizeof *g->mrv);
    lp_hint_huge(g->inmsg, nm * sizeof *g->inmsg);
    uint32_t kin = 0;
    /* two threads need the worst-case layout (vmax from the counts, not the exact pass) */
    if (!(par && vmax == 2 * t->nacts + 2 * t->nmsgs && build_halves(t, g, &snd, &rcv, &kin)))
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
