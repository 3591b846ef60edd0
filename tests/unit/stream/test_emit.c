/* test_emit.c: the stream order of `stream --emit` (lp_stream_emit_order, a lazy merge of
 * the workers' runs) against its naive twin (every record in one array, sorted by
 * (time, worker, kind, index)) on generated jobs and on thousands of small random traces
 * with ties at one instant, zero-length activities, gaps and messages to oneself, with
 * and without halves. */
#include "longpole/stream/stream.h"
#include "streamtest.h"
#include "t.h"

typedef struct rec {
    int64_t t;
    uint32_t w;
    uint8_t kind;
    uint64_t i;
} rec;

static int cmp_rec(const void *pa, const void *pb)
{
    const rec *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->w != b->w)
        return a->w < b->w ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

typedef struct got {
    rec *r;
    size_t n, cap;
} got;

static lp_status take(void *ctx, const lp_emit_rec *e, lp_error *err)
{
    (void)err;
    got *g = ctx;
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 256;
        g->r = realloc(g->r, g->cap * sizeof *g->r);
    }
    g->r[g->n++] = (rec){e->t, e->w, e->kind, e->i};
    return LP_OK;
}

/* 1 when the merge's order equals the twin's. */
static int same_order(const lp_trace *t, int halves)
{
    size_t n = 0, cap = t->nacts + 2 * t->nmsgs + 1;
    rec *all = malloc(cap * sizeof *all);
    for (uint32_t w = 0; w < t->nworkers; w++)
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++)
            if (!(t->aflags[i] & LP_ACT_GAP))
                all[n++] = (rec){t->astart[i], w, 0, i};
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        if (halves) {
            all[n++] = (rec){t->msend[m], t->msrc[m], 2, m};
            all[n++] = (rec){t->mrecv[m], t->mdst[m], 3, m};
        } else {
            all[n++] = (rec){t->msend[m], t->msrc[m], 1, m};
        }
    }
    qsort(all, n, sizeof *all, cmp_rec);
    got g = {0};
    lp_error err;
    int ok = lp_stream_emit_order(t, halves, take, &g, &err) == LP_OK && g.n == n;
    for (size_t i = 0; ok && i < n; i++)
        ok = cmp_rec(&all[i], &g.r[i]) == 0;
    free(all);
    free(g.r);
    return ok;
}

/* A small random trace as .lpt text: few workers and times, so ties are common. */
static char *random_text(uint64_t *s)
{
    size_t cap = 1 << 16, o = 0;
    char *b = malloc(cap);
    o += (size_t)snprintf(b + o, cap - o, "longpole-trace 1\n");
    int W = 1 + (int)(tlcg(s) % 4);
    for (int w = 0; w < W; w++) {
        int64_t t = (int64_t)(tlcg(s) % 5);
        int na = (int)(tlcg(s) % 6);
        for (int a = 0; a < na; a++) {
            int64_t d = (int64_t)(tlcg(s) % 4), gap = (int64_t)(tlcg(s) % 3);
            o += (size_t)snprintf(b + o, cap - o, "A w%d %lld %lld processing\n", w, (long long)(t + gap),
                                  (long long)(t + gap + d));
            t += gap + d;
        }
    }
    int nm = (int)(tlcg(s) % 8);
    for (int m = 0; m < nm; m++) {
        int a = (int)(tlcg(s) % (uint64_t)W), c = (int)(tlcg(s) % (uint64_t)W);
        int64_t ts = (int64_t)(tlcg(s) % 10), tr = ts + (int64_t)(tlcg(s) % 4);
        o += (size_t)snprintf(b + o, cap - o, "M w%d %lld w%d %lld\n", a, (long long)ts, c, (long long)tr);
    }
    return b;
}

int main(void)
{
    for (int k = 0; k < 6; k++) {
        char *text = stream_text(100 + (uint64_t)k, 200000000, k % 2, NULL, k < 3 ? 0.0 : 0.5);
        CHECK(text != NULL);
        lp_trace *t = text ? text_trace(text) : NULL;
        CHECK(t != NULL && t->nacts > 1000);
        if (t) {
            CHECK(same_order(t, 0));
            CHECK(same_order(t, 1));
        }
        lp_trace_free(t);
        free(text);
    }
    uint64_t seed = 12345;
    int tried = 0;
    for (int k = 0; k < 3000; k++) {
        char *text = random_text(&seed);
        lp_trace *t = text_trace(text);
        if (t) {
            tried++;
            CHECK(same_order(t, 0));
            CHECK(same_order(t, 1));
        }
        lp_trace_free(t);
        free(text);
    }
    CHECK(tried > 2000);
    fprintf(stderr, "test_emit: 6 generated jobs and %d random traces, with and without halves\n", tried);
    return t_done("test_emit");
}
