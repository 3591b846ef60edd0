/* cptest.h: helpers shared by the critical-participation tests: small random traces
 * (built through lp_builder, with waiting, gaps, zero-length activities and messages,
 * and optionally messages received before they were sent) and the naive twin of path
 * counting: an exhaustive enumeration of every transient critical path of a reference
 * PAG (lp_pag_build on lp_trace_window), counting the paths through each edge. */
#ifndef LP_TEST_CPTEST_H
#define LP_TEST_CPTEST_H

#include "longpole/longpole.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 12345;
static inline uint32_t rnd(uint32_t n) { return (uint32_t)(lp_rng_next(&rng_state) % n); }

/* ---- random traces ------------------------------------------------------------------ */

static inline lp_trace *random_trace(int with_skew)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_builder *b;
    lp_error err;
    if (lp_builder_new(&b, &ds, NULL, &err))
        return NULL;
    uint32_t nw = 1 + rnd(4);
    uint32_t wid[8];
    static const uint16_t types[] = {LP_TYPE_PROCESSING, LP_TYPE_PROCESSING, LP_TYPE_WAITING, LP_TYPE_UNKNOWN,
                                     LP_TYPE_IO, LP_TYPE_SERIALIZATION};
    for (uint32_t w = 0; w < nw; w++) {
        char name[16];
        snprintf(name, sizeof name, "w%u", w);
        lp_builder_worker(b, name, strlen(name), &wid[w], &err);
    }
    uint64_t line = 0;
    for (uint32_t w = 0; w < nw; w++) {
        int64_t t = rnd(6);
        uint32_t na = 1 + rnd(5);
        for (uint32_t i = 0; i < na; i++) {
            int64_t len = rnd(8) == 0 ? 0 : 1 + rnd(9);
            lp_builder_activity(b, wid[w], t, t + len, types[rnd(6)], LP_STR_NONE, 0, ++line, &err);
            t += len + (rnd(3) == 0 ? rnd(4) : 0);
        }
    }
    uint32_t nm = rnd(7);
    for (uint32_t k = 0; k < nm; k++) {
        uint32_t a = rnd(nw), c = rnd(nw);
        int64_t s = rnd(36), lat = rnd(6);
        if (lat == 0 && a >= c) /* zero-time messages only upwards: no zero-time cycles */
            lat = 1 + rnd(3);
        int64_t r = s + lat;
        if (with_skew && rnd(10) == 0)
            r = s - 1 - rnd(3);
        lp_builder_message(b, wid[a], s, wid[c], r, k, 0, ++line, &err);
    }
    lp_trace *t = NULL;
    if (lp_builder_finish(b, &t, &err))
        t = NULL;
    if (t && ds.nerrors) {
        lp_trace_free(t);
        t = NULL;
    }
    lp_diags_release(&ds);
    return t;
}

/* ---- naive twin: enumerate every transient path on the reference PAG ------------------- */

typedef struct naive {
    const lp_pag *g;
    int64_t t0, t1;
    double n;            /* paths */
    double *cw;          /* [nv] paths through the worker edge into v */
    double *cm;          /* [nmsgs] paths through message m */
    uint64_t *stack;     /* edges on the current path: v, or (1<<63)|m */
    size_t sp;
    double limit;
    uint64_t *outoff;    /* out-message CSR by send vertex */
    uint32_t *outmsg;
} naive;

static inline int live(const lp_pag *g, uint64_t v) { return lp_pag_wedge_live(g, v); }

static inline void dfs(naive *nv, uint64_t v, uint32_t w)
{
    const lp_pag *g = nv->g;
    if (nv->n > nv->limit)
        return;
    if (g->vtime[v] == nv->t1) {
        nv->n += 1;
        for (size_t i = 0; i < nv->sp; i++) {
            uint64_t e = nv->stack[i];
            if (e >> 63)
                nv->cm[e & 0xffffffffu] += 1;
            else
                nv->cw[e] += 1;
        }
    }
    if (v + 1 < g->voff[w + 1] && live(g, v + 1)) {
        nv->stack[nv->sp++] = v + 1;
        dfs(nv, v + 1, w);
        nv->sp--;
    }
    for (uint64_t k = nv->outoff[v]; k < nv->outoff[v + 1]; k++) {
        uint32_t m = nv->outmsg[k];
        nv->stack[nv->sp++] = (UINT64_C(1) << 63) | m;
        dfs(nv, g->mrv[m], g->t->mdst[m]);
        nv->sp--;
    }
}

/* Returns 0 if enumeration gave up (too many paths). */
static inline int naive_count(naive *nv, const lp_pag *g, double limit)
{
    memset(nv, 0, sizeof *nv);
    nv->g = g;
    nv->limit = limit;
    const lp_trace *t = g->t;
    nv->t0 = INT64_MAX;
    nv->t1 = INT64_MIN;
    for (uint64_t v = 0; v < g->nv; v++) {
        nv->t0 = g->vtime[v] < nv->t0 ? g->vtime[v] : nv->t0;
        nv->t1 = g->vtime[v] > nv->t1 ? g->vtime[v] : nv->t1;
    }
    nv->cw = calloc(g->nv + 1, sizeof *nv->cw);
    nv->cm = calloc(t->nmsgs + 1, sizeof *nv->cm);
    nv->stack = calloc(g->nv + t->nmsgs + 1, sizeof *nv->stack);
    nv->outoff = calloc(g->nv + 2, sizeof *nv->outoff);
    nv->outmsg = calloc(t->nmsgs + 1, sizeof *nv->outmsg);
    for (uint64_t m = 0; m < t->nmsgs; m++)
        if (!(t->mflags[m] & LP_MSG_SKEW))
            nv->outoff[g->msv[m] + 1]++;
    for (uint64_t v = 0; v < g->nv; v++)
        nv->outoff[v + 1] += nv->outoff[v];
    uint64_t *pos = calloc(g->nv + 1, sizeof *pos);
    memcpy(pos, nv->outoff, g->nv * sizeof *pos);
    for (uint64_t m = 0; m < t->nmsgs; m++)
        if (!(t->mflags[m] & LP_MSG_SKEW))
            nv->outmsg[pos[g->msv[m]]++] = (uint32_t)m;
    free(pos);
    /* an instantaneous window has no transient path (and, cut to one instant, messages
     * may form zero-time cycles) */
    if (g->nv && nv->t1 > nv->t0)
        for (uint32_t w = 0; w < g->nworkers; w++)
            if (g->voff[w] < g->voff[w + 1] && g->vtime[g->voff[w]] == nv->t0)
                dfs(nv, g->voff[w], w);
    return nv->n <= limit;
}

static inline void naive_free(naive *nv)
{
    free(nv->cw);
    free(nv->cm);
    free(nv->stack);
    free(nv->outoff);
    free(nv->outmsg);
}


#endif
