/* pag.c: building the program activity graph of a trace (see pag.h).
 *
 * Per worker, three sorted streams are merged: the activity boundaries (start, end,
 * start, end, ... non-decreasing because activities never overlap), the send times
 * and the receive times. Each distinct instant becomes a vertex; the activity that
 * covers the interval between two consecutive vertices labels the worker edge. One
 * pass into arrays sized for the worst case, shrunk afterwards (untouched capacity is
 * never resident).
 *
 * Big traces are built on two threads (a pool of one worker and the caller, base/pool.h):
 * the send and receive endpoint lists at once; then the workers, in two ranges of about
 * equal work, are counted exactly (a merge without writes) and emitted at their exact
 * offsets into arrays of the exact size, so the graph is identical to the one-thread
 * build and no memory is touched beyond it (no worst-case slack, no moving).
 */
#include "longpole/model/pag.h"
#include "longpole/base/alloc.h"
#include "base/hugepage.h"
#include "base/pool.h"

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

/* Task 0: the send endpoints, task 1: the receive endpoints. */
typedef struct ep_job {
    const lp_trace *t;
    lp_endpoints *ep[2];
} ep_job;

static lp_status ep_task(void *ctx, size_t which, size_t n, lp_error *err)
{
    ep_job *j = ctx;
    return lp_endpoints_build(j->t, (int)which, j->ep[which], err);
}

/* The graph's arrays for up to nv vertices (at least 1) of trace t; -1 when out of memory.
 * Written once, front to back (the receive endpoints are in vertex order, so the
 * incoming-message lists are filled in order too): first touch is cheaper with huge pages. */
static int alloc_arrays(lp_pag *g, const lp_trace *t, uint64_t nv)
{
    size_t nvs = nv ? nv : 1, nm = t->nmsgs ? t->nmsgs : 1;
    g->vtime = lp_malloc(nvs * sizeof *g->vtime);
    g->vact = lp_malloc(nvs * sizeof *g->vact);
    g->vin = lp_malloc((nvs + 1) * sizeof *g->vin);
    g->msv = lp_malloc(nm * sizeof *g->msv);
    g->mrv = lp_malloc(nm * sizeof *g->mrv);
    g->inmsg = lp_malloc(nm * sizeof *g->inmsg);
    if (!g->vtime || !g->vact || !g->vin || !g->msv || !g->mrv || !g->inmsg)
        return -1;
    lp_hint_huge(g->vtime, nvs * sizeof *g->vtime);
    lp_hint_huge(g->vact, nvs * sizeof *g->vact);
    lp_hint_huge(g->vin, (nvs + 1) * sizeof *g->vin);
    lp_hint_huge(g->msv, nm * sizeof *g->msv);
    lp_hint_huge(g->mrv, nm * sizeof *g->mrv);
    lp_hint_huge(g->inmsg, nm * sizeof *g->inmsg);
    return 0;
}

/* A range of workers for one thread: counted (g's arrays NULL: the exact vertex count of
 * each worker goes to cnt[w]), or emitted from vertex `base` and incoming-message index
 * `kin`. */
typedef struct range_job {
    const lp_trace *t;
    lp_pag *g;
    const lp_endpoints *snd, *rcv;
    uint32_t w0, w1;
    uint64_t *cnt;
    uint64_t base;
    uint32_t kin;
} range_job;

static void range_run(range_job *j)
{
    lp_pag *g = j->g;
    uint64_t v = j->base;
    for (uint32_t w = j->w0; w < j->w1; w++) {
        if (j->cnt) {
            j->cnt[w] = worker_vertices(j->t, w, j->snd, j->rcv, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        } else {
            v += worker_vertices(j->t, w, j->snd, j->rcv, v, g->vtime, g->vact, g->msv, g->mrv, g->vin, g->inmsg,
                                 &j->kin);
        }
    }
}

/* Task i of two: range job i (ctx: range_job[2]). */
static lp_status range_task(void *ctx, size_t i, size_t n, lp_error *err)
{
    range_run(&((range_job *)ctx)[i]);
    return LP_OK;
}

/* The first worker of the second of two ranges of about equal work. */
static uint32_t split_workers(const lp_trace *t, const lp_endpoints *snd, const lp_endpoints *rcv)
{
    uint32_t nw = t->nworkers, k = 1;
    uint64_t total = 2 * t->nacts + 2 * t->nmsgs, acc = 0;
    for (uint32_t w = 0; w + 1 < nw; w++) {
        acc += 2 * (t->wfirst[w + 1] - t->wfirst[w]) + (snd->off[w + 1] - snd->off[w]) +
               (rcv->off[w + 1] - rcv->off[w]);
        k = w + 1;
        if (2 * acc >= total)
            break;
    }
    return k;
}

/* Two threads (pool): every worker's exact vertex count first (the two ranges counted at
 * once), then the two ranges emitted at once at their exact offsets into arrays of the
 * exact size. Fills voff and sizes the arrays; 1, -1 when out of memory, -2 when the
 * graph is too big (g->nv says how big). */
static int build_two(lp_pool *pool, const lp_trace *t, lp_pag *g, const lp_endpoints *snd, const lp_endpoints *rcv)
{
    uint32_t nw = t->nworkers, k = split_workers(t, snd, rcv);
    uint64_t *cnt = g->voff + 1; /* voff[w + 1] = worker w's count, then the prefix sums */
    range_job ab[2] = {{t, g, snd, rcv, 0, k, cnt, 0, 0}, {t, g, snd, rcv, k, nw, cnt, 0, 0}};
    lp_pool_run(pool, 2, range_task, ab, NULL);
    for (uint32_t w = 0; w < nw; w++)
        g->voff[w + 1] += g->voff[w];
    uint64_t nv = g->voff[nw];
    if (nv >= UINT32_MAX) {
        g->nv = nv;
        return -2;
    }
    /* incoming messages before the second range: the first range's non-skewed receives */
    uint32_t kb = (uint32_t)rcv->off[k];
    if (t->nskew)
        for (uint64_t i = 0; i < rcv->off[k]; i++)
            kb -= (t->mflags[rcv->msg[i]] & LP_MSG_SKEW) != 0;
    if (alloc_arrays(g, t, nv))
        return -1;
    ab[0] = (range_job){t, g, snd, rcv, 0, k, NULL, 0, 0};
    ab[1] = (range_job){t, g, snd, rcv, k, nw, NULL, g->voff[k], kb};
    lp_pool_run(pool, 2, range_task, ab, NULL);
    g->nv = nv;
    g->ncedges = ab[1].kin;
    return 1;
}

lp_status lp_pag_build(const lp_trace *t, lp_pag *g, lp_error *err)
{
    memset(g, 0, sizeof *g);
    g->t = t;
    g->nworkers = t->nworkers;
    lp_endpoints snd = {0}, rcv = {0};
    int par = t->nacts + t->nmsgs >= lp_pag_parallel_min && t->nworkers >= 2;
    lp_pool *pool = NULL;
    if (par)
        lp_pool_new(&pool, 1, NULL); /* without it (or its thread), both halves run here */
    ep_job ej = {t, {&snd, &rcv}};
    lp_status st = lp_pool_run(pool, 2, ep_task, &ej, err); /* the first failure: the sends' */
    if (st) {
        lp_pool_free(pool);
        lp_endpoints_release(&snd);
        lp_endpoints_release(&rcv);
        return st;
    }
    g->voff = lp_calloc((size_t)t->nworkers + 1, sizeof *g->voff);
    int two = !g->voff ? -1 : par ? build_two(pool, t, g, &snd, &rcv) : 0;
    lp_pool_free(pool);
    if (two == -1)
        goto oom;
    if (two == -2)
        goto too_big;
    if (!two) {
        /* one pass: the arrays are sized for the worst case (two vertices per activity, one
         * per message end) and shrunk after; untouched capacity costs no resident memory */
        uint64_t vmax = 2 * t->nacts + 2 * t->nmsgs;
        if (vmax >= UINT32_MAX) {
            uint64_t exact = 0;
            for (uint32_t w = 0; w < t->nworkers; w++)
                exact += worker_vertices(t, w, &snd, &rcv, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
            g->nv = exact;
            if (exact >= UINT32_MAX)
                goto too_big;
            vmax = exact;
        }
        if (alloc_arrays(g, t, vmax))
            goto oom;
        uint32_t kin = 0;
        for (uint32_t w = 0; w < t->nworkers; w++)
            g->voff[w + 1] = g->voff[w] + worker_vertices(t, w, &snd, &rcv, g->voff[w], g->vtime, g->vact, g->msv,
                                                          g->mrv, g->vin, g->inmsg, &kin);
        g->nv = g->voff[t->nworkers];
        g->ncedges = kin;
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
    g->vin[g->nv] = (uint32_t)g->ncedges;
    lp_endpoints_release(&snd);
    lp_endpoints_release(&rcv);
    for (uint64_t v = 0; v < g->nv; v++)
        g->nwedges += g->vact[v] != UINT32_MAX;
    return LP_OK;
too_big:
    lp_endpoints_release(&snd);
    lp_endpoints_release(&rcv);
    {
        unsigned long long nv = g->nv;
        lp_pag_release(g);
        return lp_error_set(err, LP_ERR_LIMIT, "the graph has %llu vertices; at most %u are supported", nv,
                            UINT32_MAX - 1);
    }
oom:
    lp_endpoints_release(&snd);
    lp_endpoints_release(&rcv);
    lp_pag_release(g);
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory building the activity graph");
}
