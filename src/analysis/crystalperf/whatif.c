/* whatif.c: the what-if replay of CrystalPerf (whatif.h): task times under a new
 * configuration (Alg. 1 and 2), the event-driven replay of the DAG on slots, and the
 * reversed roofline of memory.
 *
 * The replay: events (a task's end frees its slot; an edge fires at its point in the
 * source task plus its latency; a task without dependencies is released at its recorded
 * start) are taken from one min-heap by time; all events of one instant are applied, then
 * every pool that changed, in pool order, starts its released tasks in recorded order
 * (one ready heap per pool) on its free slots; events those starts make at the same
 * instant are applied next, and so on. Times are integer ns (a task's new time rounded
 * once, at its start), so the naive twin in tests/unit/crystalperf reproduces every
 * start exactly. A dependency cycle leaves tasks that never run: an error.
 * Cost: O((n + e) log n) time, O(n + e) memory.
 */
#include "longpole/analysis/crystalperf/whatif.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "base/heap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

/* Alg. 2 on one device: the I/O part t_io of a task, split into buffer processing and
 * transfer; the transfer scaled by B/B' (ratio B'/B) and by the sharing factor kf. Returns
 * the new I/O time. */
static double io_time(double t_io, double ratio, double bw, double kf, const lp_wi_config *c)
{
    if (ratio <= 0)
        ratio = 1;
    if ((ratio == 1 && kf == 1) || t_io <= 0)
        return t_io;
    double sb = c->buf_bytes > 0 ? c->buf_bytes : 65536, o = c->buf_ns > 0 ? c->buf_ns : 2000;
    double tp = bw > 0 ? (t_io * 1e-9 * bw / sb) * o : 0;
    if (tp > t_io)
        tp = t_io;
    return tp + (t_io - tp) * kf / ratio;
}

/* A device's new time for a task (whatif.h): Alg. 2 (io_time) when the recording does
 * not say the task's bytes and the recorded bandwidth, or with no_sharing; otherwise, on
 * a device the recording saturated, Alg. 2 with the sharing factor k'/k; on one it did
 * not saturate, the recorded time until the new bandwidth shared by k' tasks becomes the
 * bound: max(t_io, k' D / B'). */
static double dev_time(const lp_wi_node *nd, const lp_wi_config *c, double t_io, double bytes, double rate, double bw,
                       double ratio)
{
    if (c->no_sharing || t_io <= 0 || bytes <= 0 || bw <= 0)
        return io_time(t_io, ratio, bw, 1, c);
    double k = nd->conc >= 1 ? nd->conc : 1, k2 = k;
    if (c->slots && nd->rec_slots && c->slots != nd->rec_slots) {
        double n2 = (double)c->slots;
        k2 = k * n2 / (double)nd->rec_slots;
        k2 = k2 < 1 ? 1 : k2 > n2 ? n2 : k2;
    }
    if (rate >= LP_WI_SATURATED * bw)
        return io_time(t_io, ratio, bw, k2 / k, c);
    double bw2 = bw * (ratio > 0 ? ratio : 1), bound = k2 * bytes / bw2 * 1e9;
    return bound > t_io ? bound : t_io;
}

double lp_wi_task_time(const lp_wi_node *nd, const lp_wi_config *c)
{
    double T = (double)nd->dur;
    if (c->no_vectors)
        return T;
    double sp = c->cpu_speed > 0 ? c->cpu_speed : 1;
    double tc = nd->v[LP_RES_CPU] * T, td = nd->v[LP_RES_DISK] * T, tn = nd->v[LP_RES_NET] * T;
    return T - tc - td - tn + tc / sp + dev_time(nd, c, td, nd->disk_bytes, nd->disk_rate, c->disk_bw, c->disk_ratio) +
           dev_time(nd, c, tn, nd->net_bytes, nd->net_rate, c->net_bw, c->net_ratio);
}

double lp_wi_memory(double recorded_ns, double mem, double mem2, double data_bytes, double per_byte_ns)
{
    double over = data_bytes > mem ? data_bytes - mem : 0, over2 = data_bytes > mem2 ? data_bytes - mem2 : 0;
    double flat = recorded_ns - over * per_byte_ns;
    if (flat < 0)
        flat = 0;
    return flat + over2 * per_byte_ns;
}

/* ---- heaps ------------------------------------------------------------------------------- */

typedef struct ev {
    int64_t t;
    uint32_t id;   /* node (end, release) or edge */
    uint8_t kind;  /* 0 end, 1 edge, 2 release */
} ev;

typedef struct evheap {
    ev *a;
    uint32_t n;
    size_t cap;
} evheap;

static inline int ev_less(ev x, ev y) { return x.t < y.t; }
static inline int u32_less(uint32_t x, uint32_t y) { return x < y; }
LP_HEAP_DEFINE(evq, ev, ev_less)
LP_HEAP_DEFINE(rq, uint32_t, u32_less) /* a min-heap of node indices (recorded order) in a slice of one array */

static int ev_push(evheap *h, ev e)
{
    if (lp_grow_at(&h->a, &h->cap, (size_t)h->n + 1, sizeof *h->a))
        return -1;
    evq_push(h->a, &h->n, e);
    return 0;
}

static ev ev_pop(evheap *h) { return evq_pop(h->a, &h->n); }

/* ---- the replay ---------------------------------------------------------------------------- */

typedef struct rp {
    const lp_wi_dag *d;
    const lp_wi_config *c;
    uint32_t *eoff, *eidx;     /* out-edges by source */
    uint32_t *indeg;
    uint32_t *roff, *rn, *rq;  /* ready heaps: pool p is rq[roff[p] .. roff[p] + rn[p]) */
    uint32_t *freeslots, *slots;
    uint8_t *dirty;
    uint32_t *dlist, ndirty;
    lp_hmap wave;              /* (pool, op) -> tasks started */
    evheap h;
    int64_t end;
    size_t done;
    int64_t *start;
} rp;

static void rp_release(rp *r)
{
    lp_free(r->eoff);
    lp_free(r->eidx);
    lp_free(r->indeg);
    lp_free(r->roff);
    lp_free(r->rn);
    lp_free(r->rq);
    lp_free(r->freeslots);
    lp_free(r->slots);
    lp_free(r->dirty);
    lp_free(r->dlist);
    lp_free(r->h.a);
    lp_hmap_release(&r->wave);
}

static lp_status rp_init(rp *r, const lp_wi_dag *d, const lp_wi_config *c, lp_error *err)
{
    memset(r, 0, sizeof *r);
    r->d = d, r->c = c;
    size_t n = d->n ? d->n : 1, np = d->npools ? d->npools : 1;
    r->eoff = lp_calloc(n + 1, sizeof *r->eoff);
    r->eidx = lp_malloc((d->ne ? d->ne : 1) * sizeof *r->eidx);
    r->indeg = lp_calloc(n, sizeof *r->indeg);
    r->roff = lp_calloc(np + 1, sizeof *r->roff);
    r->rn = lp_calloc(np, sizeof *r->rn);
    r->rq = lp_malloc(n * sizeof *r->rq);
    r->freeslots = lp_malloc(np * sizeof *r->freeslots);
    r->slots = lp_malloc(np * sizeof *r->slots);
    r->dirty = lp_calloc(np, 1);
    r->dlist = lp_malloc(np * sizeof *r->dlist);
    if (!r->eoff || !r->eidx || !r->indeg || !r->roff || !r->rn || !r->rq || !r->freeslots || !r->slots ||
        !r->dirty || !r->dlist)
        return nomem(err);
    for (size_t k = 0; k < d->ne; k++) {
        r->eoff[d->edge[k].src + 1]++;
        r->indeg[d->edge[k].dst]++;
    }
    for (size_t i = 0; i < d->n; i++)
        r->eoff[i + 1] += r->eoff[i];
    uint32_t *fill = lp_malloc(n * sizeof *fill);
    if (!fill)
        return nomem(err);
    memcpy(fill, r->eoff, n * sizeof *fill);
    for (size_t k = 0; k < d->ne; k++)
        r->eidx[fill[d->edge[k].src]++] = (uint32_t)k;
    lp_free(fill);
    for (size_t i = 0; i < d->n; i++)
        r->roff[d->node[i].pool + 1]++;
    for (uint32_t p = 0; p < d->npools; p++) {
        r->roff[p + 1] += r->roff[p];
        r->slots[p] = d->seq[p] ? 1 : (c->slots ? c->slots : d->slots[p]);
        r->freeslots[p] = r->slots[p];
    }
    return lp_hmap_init(&r->wave, 64, err);
}

static void mark(rp *r, uint32_t p)
{
    if (!r->dirty[p]) {
        r->dirty[p] = 1;
        r->dlist[r->ndirty++] = p;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* A node's new time, starting now (warm-up by its place among its operator's starts). */
static lp_status node_time(rp *r, uint32_t i, int64_t *out, lp_error *err)
{
    const lp_wi_node *nd = &r->d->node[i];
    if (nd->kind == LP_WI_WAIT) {
        *out = 0;
        return LP_OK;
    }
    if (nd->kind == LP_WI_GAP) {
        *out = nd->dur;
        return LP_OK;
    }
    double t = lp_wi_task_time(nd, r->c);
    if (!r->d->seq[nd->pool]) {
        uint64_t key = ((uint64_t)nd->pool << 32) | nd->op, k = 0;
        lp_hmap_get(&r->wave, key, &k);
        lp_status st = lp_hmap_put(&r->wave, key, k + 1, err);
        if (st)
            return st;
        double w = r->c->no_warmup ? 1 : r->d->warmup[nd->pool];
        int first = k < r->slots[nd->pool];
        if (nd->first_wave && !first)
            t /= w;
        else if (!nd->first_wave && first)
            t *= w;
    }
    *out = llround(t);
    return LP_OK;
}

static lp_status start_node(rp *r, uint32_t i, int64_t now, lp_error *err)
{
    int64_t dur;
    lp_status st = node_time(r, i, &dur, err);
    if (st)
        return st;
    if (r->start)
        r->start[i] = now;
    ev e = {now + dur, i, 0};
    if (ev_push(&r->h, e))
        return nomem(err);
    for (uint32_t k = r->eoff[i]; k < r->eoff[i + 1]; k++) {
        const lp_wi_edge *x = &r->d->edge[r->eidx[k]];
        double lat = (double)x->lat;
        if (x->net && r->c->net_ratio > 0 && !r->c->no_vectors)
            lat /= r->c->net_ratio;
        ev f = {now + llround(x->frac * (double)dur) + llround(lat), r->eidx[k], 1};
        if (ev_push(&r->h, f))
            return nomem(err);
    }
    return LP_OK;
}

static lp_status dispatch(rp *r, int64_t now, lp_error *err)
{
    qsort(r->dlist, r->ndirty, sizeof *r->dlist, cmp_u32);
    lp_status st = LP_OK;
    for (uint32_t k = 0; k < r->ndirty && !st; k++) {
        uint32_t p = r->dlist[k];
        r->dirty[p] = 0;
        while (!st && r->freeslots[p] && r->rn[p]) {
            uint32_t i = rq_pop(r->rq + r->roff[p], &r->rn[p]);
            r->freeslots[p]--;
            st = start_node(r, i, now, err);
        }
    }
    r->ndirty = 0;
    return st;
}

static void ready(rp *r, uint32_t i)
{
    uint32_t p = r->d->node[i].pool;
    rq_push(r->rq + r->roff[p], &r->rn[p], i);
    mark(r, p);
}

lp_status lp_wi_replay(const lp_wi_dag *d, const lp_wi_config *c, int with_starts, lp_wi_result *res, lp_error *err)
{
    memset(res, 0, sizeof *res);
    rp r;
    lp_status st = rp_init(&r, d, c, err);
    if (!st && with_starts && !(r.start = res->start = lp_calloc(d->n ? d->n : 1, sizeof *res->start)))
        st = nomem(err);
    for (size_t i = 0; i < d->n && !st; i++)
        if (!r.indeg[i]) {
            ev e = {d->node[i].start, (uint32_t)i, 2};
            if (ev_push(&r.h, e))
                st = nomem(err);
        }
    r.end = d->t0;
    while (!st && r.h.n) {
        int64_t now = r.h.a[0].t;
        while (r.h.n && r.h.a[0].t == now) {
            ev e = ev_pop(&r.h);
            if (e.kind == 0) {
                uint32_t p = d->node[e.id].pool;
                r.freeslots[p]++;
                mark(&r, p);
                r.done++;
                if (now > r.end)
                    r.end = now;
            } else if (e.kind == 1) {
                if (!--r.indeg[d->edge[e.id].dst])
                    ready(&r, d->edge[e.id].dst);
            } else
                ready(&r, e.id);
        }
        st = dispatch(&r, now, err);
    }
    if (!st && r.done < d->n)
        st = lp_error_set(err, LP_ERR_DATA, "%zu of %zu tasks never ran: the dependencies of the trace form a cycle",
                          d->n - r.done, d->n);
    res->makespan = r.end - d->t0;
    res->recorded = d->t1 - d->t0;
    r.start = NULL;
    rp_release(&r);
    if (st)
        lp_wi_result_release(res);
    return st;
}

void lp_wi_result_release(lp_wi_result *r)
{
    lp_free(r->start);
    r->start = NULL;
}
