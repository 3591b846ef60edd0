/* skew.c: clock-skew estimation from RPC patterns (OSDI'14 §3; see skew.h and
 * docs/analyses/mystery-skew.md).
 *
 * Threads scan disjoint ranges of requests, each keeping its own table of host pairs
 * (the library's hash table, base/hashmap.h, from the pair to its entry) with the
 * minimum-rtt estimate; the tables are merged
 * with a rule that does not depend on their order (smaller rtt, then smaller theta),
 * so the result does not depend on the number of threads. The offsets come from
 * Dijkstra's algorithm over the pair graph with rtt as the cost (ties: lower host id).
 */
#include "longpole/analysis/mystery/skew.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "base/pool.h"

#include <stdlib.h>
#include <string.h>

typedef struct pest {
    uint64_t key;       /* a << 32 | b, a < b */
    int64_t theta, rtt;
    uint64_t n;
} pest;

typedef struct ptab {
    lp_hmap map;        /* key -> index in e */
    pest *e;            /* the pairs, in order of first appearance */
    size_t n, cap;
    uint64_t nrpc, nneg;
    int nomem;
} ptab;

static void ptab_release(ptab *t)
{
    lp_hmap_release(&t->map);
    lp_free(t->e);
}

/* Add one estimate (theta = clock(b) - clock(a) for the normalized pair). */
static int ptab_add(ptab *t, uint64_t key, int64_t theta, int64_t rtt, uint64_t n)
{
    int added;
    uint64_t i = lp_hmap_get_or_put(&t->map, key, t->n, &added);
    if (i == LP_HMAP_EMPTY)
        return -1;
    if (added) {
        void *p = t->e;
        if (lp_grow(&p, &t->cap, t->n + 1, sizeof *t->e)) {
            lp_hmap_del(&t->map, key);
            return -1;
        }
        t->e = p;
        t->e[t->n++] = (pest){key, theta, rtt, n};
        return 0;
    }
    pest *p = &t->e[i];
    p->n += n;
    if (rtt < p->rtt || (rtt == p->rtt && theta < p->theta)) {
        p->rtt = rtt;
        p->theta = theta;
    }
    return 0;
}

typedef struct sk_ctx {
    const lp_reqlog *rl;
    ptab *tabs;
} sk_ctx;

static lp_status sk_worker(void *ctx, size_t tid, size_t nthr, lp_error *err)
{
    sk_ctx *C = ctx;
    const lp_reqlog *rl = C->rl;
    ptab *T = &C->tabs[tid];
    uint64_t lo, hi;
    lp_pool_range(rl->nreqs, tid, nthr, &lo, &hi);
    const lp_reqrow *R = rl->rows;
    for (uint64_t r = lo; r < hi && !T->nomem; r++) {
        if (rl->rbad[r])
            continue;
        uint64_t a = rl->rfirst[r], b = rl->rfirst[r + 1];
        /* each task's run of rows */
        for (uint64_t s0 = a; s0 < b;) {
            uint32_t task = rl->pt_task[R[s0].point];
            uint64_t s1 = s0 + 1;
            while (s1 < b && rl->pt_task[R[s1].point] == task)
                s1++;
            for (uint64_t i = s0; i + 2 < s1; i++) {
                uint32_t c = R[i].host, s = R[i + 1].host;
                if (s == c)
                    continue;
                /* next event back on c */
                uint64_t j = i + 2;
                while (j < s1 && R[j].host != c)
                    j++;
                if (j >= s1)
                    continue;
                if (R[j - 1].host != s)
                    continue; /* control came back from another host: not a plain RPC */
                int64_t client = R[j].time - R[i].time, server = R[j - 1].time - R[i + 1].time;
                int64_t rtt = client - server;
                if (rtt < 0) {
                    T->nneg++;
                    continue;
                }
                int64_t theta = R[i + 1].time - (R[i].time + rtt / 2); /* clock(s) - clock(c) */
                uint64_t key;
                if (c < s) {
                    key = (uint64_t)c << 32 | s;
                } else {
                    key = (uint64_t)s << 32 | c;
                    theta = -theta;
                }
                if (ptab_add(T, key, theta, rtt, 1)) {
                    T->nomem = 1;
                    break;
                }
                T->nrpc++;
            }
            s0 = s1;
        }
    }
    return LP_OK;
}

void lp_skew_release(lp_skew *s)
{
    lp_free(s->offset);
    lp_free(s->bound);
    lp_free(s->parent);
    lp_free(s->root);
    lp_free(s->rpcs);
    lp_free(s->pairs);
    memset(s, 0, sizeof *s);
}

static int pair_cmp(const void *x, const void *y)
{
    const lp_skew_pair *a = x, *b = y;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* The RPC patterns of every request, gathered on threads and merged into *all (pairs
 * keyed by host pair, with counts into out). */
static lp_status sk_gather(const lp_reqlog *rl, unsigned nthr, ptab *all, lp_skew *out, lp_error *err)
{
    ptab *tabs = lp_calloc(nthr, sizeof *tabs);
    if (!tabs)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_status st = LP_OK;
    sk_ctx C = {rl, tabs};
    lp_pool *pool = NULL;
    lp_pool_new(&pool, nthr - 1, NULL); /* without it, the parts run here */
    lp_pool_run(pool, nthr, sk_worker, &C, NULL);
    lp_pool_free(pool);
    for (unsigned t = 0; t < nthr && !st; t++) {
        if (tabs[t].nomem) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        out->nrpc += tabs[t].nrpc;
        out->nnegative += tabs[t].nneg;
        for (size_t i = 0; i < tabs[t].n; i++)
            if (ptab_add(all, tabs[t].e[i].key, tabs[t].e[i].theta, tabs[t].e[i].rtt, tabs[t].e[i].n)) {
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                break;
            }
    }
    for (unsigned t = 0; t < nthr; t++)
        ptab_release(&tabs[t]);
    lp_free(tabs);
    return st;
}

/* out's arrays, and its pairs from the merged table, sorted. */
static int sk_pairs(lp_skew *out, uint32_t H, const ptab *all)
{
    out->nhosts = H;
    out->offset = lp_calloc(H ? H : 1, sizeof *out->offset);
    out->bound = lp_calloc(H ? H : 1, sizeof *out->bound);
    out->parent = lp_malloc((H ? H : 1) * sizeof *out->parent);
    out->root = lp_malloc((H ? H : 1) * sizeof *out->root);
    out->rpcs = lp_calloc(H ? H : 1, sizeof *out->rpcs);
    out->pairs = lp_malloc((all->n ? all->n : 1) * sizeof *out->pairs);
    if (!out->offset || !out->bound || !out->parent || !out->root || !out->rpcs || !out->pairs)
        return -1;
    for (size_t i = 0; i < all->n; i++) {
        lp_skew_pair *p = &out->pairs[out->npairs++];
        p->a = (uint32_t)(all->e[i].key >> 32);
        p->b = (uint32_t)all->e[i].key;
        p->theta = all->e[i].theta;
        p->rtt = all->e[i].rtt;
        p->n = all->e[i].n;
    }
    qsort(out->pairs, out->npairs, sizeof *out->pairs, pair_cmp);
    for (uint32_t h = 0; h < H; h++) {
        out->parent[h] = LP_SKEW_NONE;
        out->root[h] = h;
    }
    return 0;
}

/* The host graph (pairs as edges, both directions) and Dijkstra's state. */
typedef struct skg {
    uint32_t H;
    uint32_t *adjoff, *adj;  /* CSR: the pairs of each host */
    int64_t *dist;
    uint8_t *done;
    uint32_t *heap, *hpos;   /* binary heap keyed by (dist, host) */
} skg;

static int sk_graph(skg *g, lp_skew *out)
{
    uint32_t H = g->H;
    g->adjoff = lp_calloc((size_t)H + 1, sizeof *g->adjoff);
    g->adj = lp_malloc(((size_t)out->npairs * 2 + 1) * sizeof *g->adj);
    g->dist = lp_malloc((H ? H : 1) * sizeof *g->dist);
    g->done = lp_calloc(H ? H : 1, 1);
    g->heap = lp_malloc((H ? H : 1) * sizeof *g->heap);
    g->hpos = lp_malloc((H ? H : 1) * sizeof *g->hpos);
    uint32_t *fill = lp_malloc((H ? H : 1) * sizeof *fill);
    int bad = !g->adjoff || !g->adj || !g->dist || !g->done || !g->heap || !g->hpos || !fill;
    if (!bad) {
        for (uint32_t i = 0; i < out->npairs; i++) {
            g->adjoff[out->pairs[i].a + 1]++;
            g->adjoff[out->pairs[i].b + 1]++;
            out->rpcs[out->pairs[i].a] += out->pairs[i].n;
            out->rpcs[out->pairs[i].b] += out->pairs[i].n;
        }
        for (uint32_t h = 0; h < H; h++)
            g->adjoff[h + 1] += g->adjoff[h];
        memcpy(fill, g->adjoff, H * sizeof *fill);
        for (uint32_t i = 0; i < out->npairs; i++) {
            g->adj[fill[out->pairs[i].a]++] = i;
            g->adj[fill[out->pairs[i].b]++] = i;
        }
    }
    lp_free(fill);
    return bad ? -1 : 0;
}

static void sk_graph_free(skg *g)
{
    lp_free(g->adjoff), lp_free(g->adj), lp_free(g->dist), lp_free(g->done), lp_free(g->heap), lp_free(g->hpos);
}

/* The next component's root: the reference if not reached yet, else the host left
 * with the most RPCs (then by name); UINT32_MAX when none is left. */
static uint32_t sk_root(const lp_reqlog *rl, const lp_skew *out, const skg *g, uint32_t ref)
{
    if (ref != UINT32_MAX && !g->done[ref] && out->rpcs[ref])
        return ref;
    uint32_t root = UINT32_MAX;
    for (uint32_t h = 0; h < g->H; h++)
        if (!g->done[h] && out->rpcs[h] &&
            (root == UINT32_MAX || out->rpcs[h] > out->rpcs[root] ||
             (out->rpcs[h] == out->rpcs[root] &&
              strcmp(lp_reqlog_str(rl, rl->host_name[h]), lp_reqlog_str(rl, rl->host_name[root])) < 0)))
            root = h;
    return root;
}

#define LESS(x, y) (g->dist[x] < g->dist[y] || (g->dist[x] == g->dist[y] && (x) < (y)))

static void sk_swap(skg *g, uint32_t i, uint32_t j)
{
    uint32_t x = g->heap[i];
    g->heap[i] = g->heap[j];
    g->heap[j] = x;
    g->hpos[g->heap[i]] = i;
    g->hpos[g->heap[j]] = j;
}

/* The heap's least host, removed. */
static uint32_t sk_pop(skg *g, uint32_t *hn)
{
    uint32_t *heap = g->heap, u = heap[0];
    heap[0] = heap[--*hn];
    g->hpos[heap[0]] = 0;
    for (uint32_t i = 0;;) { /* sift down */
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *hn && LESS(heap[l], heap[m]))
            m = l;
        if (r < *hn && LESS(heap[r], heap[m]))
            m = r;
        if (m == i)
            break;
        sk_swap(g, i, m);
        i = m;
    }
    return u;
}

static void sk_up(skg *g, uint32_t i)
{
    while (i > 0) { /* sift up */
        uint32_t up = (i - 1) / 2;
        if (!LESS(g->heap[i], g->heap[up]))
            break;
        sk_swap(g, i, up);
        i = up;
    }
}

#undef LESS

/* One component from root: Dijkstra over the round-trip times, each host's offset and
 * bound summed along its path from the root. */
static void sk_component(lp_skew *out, skg *g, uint32_t root)
{
    uint32_t hn = 0;
    g->dist[root] = 0;
    out->parent[root] = LP_SKEW_ROOT;
    out->offset[root] = 0;
    out->bound[root] = 0;
    g->heap[hn] = root;
    g->hpos[root] = hn++;
    for (uint32_t h = 0; h < g->H; h++)
        if (h != root && !g->done[h])
            g->dist[h] = INT64_MAX;
    while (hn) {
        uint32_t u = sk_pop(g, &hn);
        g->done[u] = 1;
        out->root[u] = root;
        for (uint32_t k = g->adjoff[u]; k < g->adjoff[u + 1]; k++) {
            const lp_skew_pair *p = &out->pairs[g->adj[k]];
            uint32_t v = p->a == u ? p->b : p->a;
            if (g->done[v])
                continue;
            int64_t nd = g->dist[u] + p->rtt;
            if (nd > g->dist[v] || (nd == g->dist[v] && out->parent[v] != LP_SKEW_NONE && out->parent[v] <= u))
                continue;
            int fresh = g->dist[v] == INT64_MAX;
            g->dist[v] = nd;
            out->parent[v] = u;
            out->offset[v] = out->offset[u] + (p->a == u ? p->theta : -p->theta);
            out->bound[v] = out->bound[u] + p->rtt / 2;
            if (fresh) {
                g->heap[hn] = v;
                g->hpos[v] = hn++;
            }
            sk_up(g, g->hpos[v]);
        }
    }
}

lp_status lp_skew_estimate(const lp_reqlog *rl, const lp_skew_opts *o, lp_skew *out, lp_error *err)
{
    memset(out, 0, sizeof *out);
    unsigned nthr = lp_pool_threads(o ? o->threads : 0, 64);
    if (rl->nreqs < 4096)
        nthr = 1;
    ptab all = {0};
    skg g;
    memset(&g, 0, sizeof g);
    g.H = rl->nhosts;
    lp_status st = sk_gather(rl, nthr, &all, out, err);
    if (!st && (sk_pairs(out, g.H, &all) || sk_graph(&g, out)))
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    uint32_t ref = UINT32_MAX;
    if (!st && o && o->reference) {
        for (uint32_t h = 0; h < g.H; h++)
            if (strcmp(lp_reqlog_str(rl, rl->host_name[h]), o->reference) == 0)
                ref = h;
        if (ref == UINT32_MAX)
            st = lp_error_set(err, LP_ERR_ARG, "reference host '%s' is not in the logs", o->reference);
    }
    /* components: start from the reference, then from the best-supported host left */
    for (uint32_t root; !st && (root = sk_root(rl, out, &g, ref)) != UINT32_MAX;) {
        out->ncomponents++;
        sk_component(out, &g, root);
    }
    ptab_release(&all);
    sk_graph_free(&g);
    if (st)
        lp_skew_release(out);
    return st;
}

typedef struct ap_ctx {
    const lp_skew *s;
    lp_reqlog *rl;
    int64_t lo[64], hi[64];
} ap_ctx;

static lp_status ap_worker(void *ctx, size_t tid, size_t nthr, lp_error *err)
{
    ap_ctx *A = ctx;
    lp_reqlog *rl = A->rl;
    const int64_t *off = A->s->offset;
    uint64_t a, b;
    lp_pool_range(rl->nreqs, tid, nthr, &a, &b);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint64_t q = a; q < b; q++) {
        int good = !rl->rbad[q];
        for (uint64_t k = rl->rfirst[q]; k < rl->rfirst[q + 1]; k++) {
            int64_t t = rl->rows[k].time -= off[rl->rows[k].host];
            if (good) {
                lo = t < lo ? t : lo;
                hi = t > hi ? t : hi;
            }
        }
    }
    A->lo[tid] = lo;
    A->hi[tid] = hi;
    return LP_OK;
}

void lp_skew_apply(const lp_skew *s, lp_reqlog *rl)
{
    ap_ctx A;
    A.s = s;
    A.rl = rl;
    unsigned n = lp_pool_threads(0, 64);
    if (rl->nrows < ((uint64_t)1 << 20))
        n = 1;
    lp_pool *pool = NULL;
    lp_pool_new(&pool, n - 1, NULL); /* without it, the parts run here */
    lp_pool_run(pool, n, ap_worker, &A, NULL);
    lp_pool_free(pool);
    rl->min_time = INT64_MAX;
    rl->max_time = INT64_MIN;
    for (unsigned t = 0; t < n; t++) {
        if (A.lo[t] < rl->min_time)
            rl->min_time = A.lo[t];
        if (A.hi[t] > rl->max_time)
            rl->max_time = A.hi[t];
    }
    if (rl->min_time > rl->max_time)
        rl->min_time = rl->max_time = 0;
}
