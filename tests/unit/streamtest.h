/* streamtest.h: helpers shared by the streaming tests (test_stream.c, test_stream_net.c):
 * a generated job written in stream order, its offline window results (the naive twin:
 * the whole trace loaded, every window analysed with lp_window_analyze exactly as
 * `longpole summary` does), the stream's results captured from its callback, and a
 * field-by-field comparison that reports the first difference. */
#ifndef LP_TEST_STREAMTEST_H
#define LP_TEST_STREAMTEST_H

#include "longpole/longpole.h"
#include "longpole/stream/stream.h"
#include "t.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a window's result is compared on (deep copy of lp_winres). */
typedef struct wsnap {
    uint64_t index;
    int64_t ts, te, t0, t1;
    uint32_t nworkers, nactive;
    uint64_t nevents, nacts, nmsgs, nv, nwedges, nin, ncycles, path_edges;
    lp_xnum n;
    int has_paths, checked;
    double cp_sum;
    uint32_t nvs, nve;
    uint64_t np1, np2;
    unsigned kinds;
    size_t nrows[LP_SUM_NKINDS];
    lp_sumrow *rows[LP_SUM_NKINDS];
    char **labels[LP_SUM_NKINDS];
    lp_stream_winfo wi;
} wsnap;

typedef struct wsnaps {
    wsnap *v;
    size_t n, cap;
} wsnaps;

static inline void wsnap_take(wsnap *w, const lp_winres *r)
{
    memset(w, 0, sizeof *w);
    w->index = r->index;
    w->ts = r->ts;
    w->te = r->te;
    w->t0 = r->t0;
    w->t1 = r->t1;
    w->nworkers = r->nworkers;
    w->nactive = r->nactive;
    w->nevents = r->nevents;
    w->nacts = r->nacts;
    w->nmsgs = r->nmsgs;
    w->nv = r->nv;
    w->nwedges = r->nwedges;
    w->nin = r->nin;
    w->ncycles = r->ncycles;
    w->path_edges = r->path_edges;
    w->n = r->n;
    w->has_paths = r->has_paths;
    w->checked = r->checked;
    w->cp_sum = r->cp_sum;
    w->nvs = r->nvs;
    w->nve = r->nve;
    w->np1 = r->check.np1;
    w->np2 = r->check.np2;
    w->kinds = r->kinds;
    char buf[256];
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        if (!(r->kinds & (1u << k)))
            continue;
        const lp_summary *s = &r->sum[k];
        w->nrows[k] = s->n;
        w->rows[k] = malloc((s->n + 1) * sizeof *w->rows[k]);
        w->labels[k] = malloc((s->n + 1) * sizeof *w->labels[k]);
        for (size_t i = 0; i < s->n; i++) {
            w->rows[k][i] = s->rows[i];
            w->labels[k][i] = strdup(lp_sumkeys_label(r->keys, (lp_sumkind)k, s->rows[i].key, buf, sizeof buf));
        }
    }
}

static inline void wsnaps_push(wsnaps *a, const lp_winres *r, const lp_stream_winfo *wi)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->v = realloc(a->v, a->cap * sizeof *a->v);
    }
    wsnap_take(&a->v[a->n], r);
    if (wi)
        a->v[a->n].wi = *wi;
    a->n++;
}

static inline void wsnaps_free(wsnaps *a)
{
    for (size_t i = 0; i < a->n; i++)
        for (int k = 0; k < LP_SUM_NKINDS; k++) {
            for (size_t j = 0; j < a->v[i].nrows[k]; j++)
                free(a->v[i].labels[k][j]);
            free(a->v[i].rows[k]);
            free(a->v[i].labels[k]);
        }
    free(a->v);
    memset(a, 0, sizeof *a);
}

/* Compare two windows field by field; returns 0 if equal, else prints the first
 * difference (with `what`) and returns 1. Doubles must be bit-identical: both sides run
 * the same arithmetic on the same graph. */
static inline int wsnap_cmp(const wsnap *a, const wsnap *b, const char *what)
{
#define D(f, fmt, cast)                                                                                   \
    if (a->f != b->f) {                                                                                   \
        fprintf(stderr, "%s: window %llu: " #f " differs: " fmt " vs " fmt "\n", what,                    \
                (unsigned long long)a->index, (cast)a->f, (cast)b->f);                                    \
        return 1;                                                                                         \
    }
    D(index, "%llu", unsigned long long)
    D(ts, "%lld", long long)
    D(te, "%lld", long long)
    D(t0, "%lld", long long)
    D(t1, "%lld", long long)
    D(nworkers, "%u", unsigned)
    D(nactive, "%u", unsigned)
    D(nevents, "%llu", unsigned long long)
    D(nacts, "%llu", unsigned long long)
    D(nmsgs, "%llu", unsigned long long)
    D(nv, "%llu", unsigned long long)
    D(nwedges, "%llu", unsigned long long)
    D(nin, "%llu", unsigned long long)
    D(ncycles, "%llu", unsigned long long)
    D(path_edges, "%llu", unsigned long long)
    D(n.m, "%.17g", double)
    D(n.e, "%d", int)
    D(has_paths, "%d", int)
    D(cp_sum, "%.17g", double)
    D(nvs, "%u", unsigned)
    D(nve, "%u", unsigned)
    D(np1, "%llu", unsigned long long)
    D(np2, "%llu", unsigned long long)
    D(kinds, "%u", unsigned)
#undef D
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        if (a->nrows[k] != b->nrows[k]) {
            fprintf(stderr, "%s: window %llu: summary %d has %zu vs %zu rows\n", what, (unsigned long long)a->index, k,
                    a->nrows[k], b->nrows[k]);
            return 1;
        }
        for (size_t i = 0; i < a->nrows[k]; i++) {
            const lp_sumrow *x = &a->rows[k][i], *y = &b->rows[k][i];
            if (strcmp(a->labels[k][i], b->labels[k][i]) || x->cp != y->cp || x->rank != y->rank || x->par != y->par ||
                x->prof_ns != y->prof_ns || x->path_ns != y->path_ns) {
                fprintf(stderr, "%s: window %llu: summary %d row %zu differs: %s cp %.17g par %u prof %lld path %lld vs "
                                "%s cp %.17g par %u prof %lld path %lld\n",
                        what, (unsigned long long)a->index, k, i, a->labels[k][i], x->cp, x->par,
                        (long long)x->prof_ns, (long long)x->path_ns, b->labels[k][i], y->cp, y->par,
                        (long long)y->prof_ns, (long long)y->path_ns);
                return 1;
            }
        }
    }
    return 0;
}

/* Every window of `t` on the grid (origin, size, step) until one reaches tmax, offline. */
static inline int offline_windows(const lp_trace *t, int64_t origin, int64_t size, int64_t step, const lp_winopts *o,
                                  wsnaps *out)
{
    lp_error err;
    lp_wingrid g;
    if (!step)
        step = size;
    if (lp_wingrid_make(&g, origin, t->tmax, size, step, &err)) {
        fprintf(stderr, "offline grid: %s\n", err.msg);
        return -1;
    }
    lp_snapsrc src;
    lp_sumkeys keys;
    if (lp_snapsrc_init(&src, t, &err))
        return -1;
    if (lp_sumkeys_init(&keys, t, &err)) {
        lp_snapsrc_release(&src);
        return -1;
    }
    lp_winws ws;
    lp_winws_init(&ws);
    lp_winres r;
    lp_winres_init(&r);
    int rc = 0;
    for (uint64_t k = 0; k < g.n && !rc; k++) {
        if (lp_window_analyze(&ws, &src, &keys, k, lp_wingrid_ts(&g, k), lp_wingrid_te(&g, k), o, &r, &err)) {
            fprintf(stderr, "offline window %llu: %s\n", (unsigned long long)k, err.msg);
            rc = -1;
        }
        else
            wsnaps_push(out, &r, NULL);
    }
    lp_winres_release(&r);
    lp_winws_release(&ws);
    lp_sumkeys_release(&keys);
    lp_snapsrc_release(&src);
    return rc;
}

/* A small generated job written in stream order (malloc'd text). */
static inline char *stream_text(uint64_t seed, int64_t duration, int halves, const char *ops, double skew)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    lp_error err;
    if (ops && lp_gen_parse_ops(&o, ops, &err))
        return NULL;
    o.duration_ns = duration;
    o.seed = seed;
    o.rate = 300000;
    o.checkpoint_ns = skew < 0 ? 10000000 : duration / 3 > 0 ? duration / 3 : 0;
    if (skew < 0)
        skew = 0;
    o.skew = skew;
    lp_trace *t;
    if (lp_gen_dataflow_run(&o, &t, &err))
        return NULL;
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f || lp_stream_write_lpt(t, f, halves, &err)) {
        if (f)
            fclose(f);
        lp_trace_free(t);
        free(buf);
        return NULL;
    }
    fclose(f);
    lp_trace_free(t);
    return buf;
}

/* Load .lpt text (the offline side). */
static inline lp_trace *text_trace(const char *text)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_builder *b;
    lp_trace *t = NULL;
    lp_input *in;
    if (lp_builder_new(&b, &ds, NULL, &err) == LP_OK) {
        if (lp_input_open_mem(&in, text, strlen(text), "offline.lpt", &err) == LP_OK) {
            lp_status st = lp_lpt_read(b, in, NULL, &err);
            lp_input_close(in);
            if (st == LP_OK && lp_builder_finish(b, &t, &err) == LP_OK)
                b = NULL;
        }
        lp_builder_free(b);
    }
    lp_diags_release(&ds);
    return t;
}

/* Stream callback collecting results. */
static inline int collect(void *ctx, const lp_winres *r, const lp_stream_winfo *wi)
{
    wsnaps_push(ctx, r, wi);
    return 0;
}

/* Compare the stream's windows with the offline ones (same count, same fields). */
static inline int compare_all(const wsnaps *off, const wsnaps *on, const char *what)
{
    if (off->n != on->n) {
        fprintf(stderr, "%s: %zu offline windows, %zu from the stream\n", what, off->n, on->n);
        return 1;
    }
    for (size_t i = 0; i < off->n; i++)
        if (wsnap_cmp(&off->v[i], &on->v[i], what))
            return 1;
    return 0;
}

/* The worker a .lpt line belongs to in a stream (W/A/S/R: field 2; M: the sender). */
static inline size_t line_worker(const char *p, size_t n, const char **w)
{
    const char *e = p + n, *q = p;
    while (q < e && *q != ' ')
        q++;
    while (q < e && *q == ' ')
        q++;
    *w = q;
    const char *z = q;
    while (z < e && *z != ' ' && *z != '\n')
        z++;
    return (size_t)(z - q);
}

static inline uint64_t tlcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

#endif
