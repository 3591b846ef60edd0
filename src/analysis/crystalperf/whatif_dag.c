/* whatif_dag.c: the job DAG a what-if replay runs (whatif.h): pools of slots, tasks and
 * the segments of sequential workers, dependencies from messages and from the order of
 * sequential workers, first waves and warm-up factors, the tasks' recorded concurrency k
 * and their groups' rates on the devices.
 *
 * Invariants: nodes are in order of recorded start (ties by worker, then by time on the
 * worker), every edge joins two different nodes, and the nodes of a sequential worker are
 * chained in time order; a task's k (conc) is at least 1. Cost: O(A log A + M log A) and
 * the pairs of one pool's tasks that overlap.
 */
#include "longpole/analysis/crystalperf/whatif.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

void lp_wi_dag_release(lp_wi_dag *d)
{
    lp_free(d->node);
    lp_free(d->edge);
    lp_free(d->slots);
    lp_free(d->seq);
    lp_free(d->warmup);
    memset(d, 0, sizeof *d);
}

/* The pool of every worker (pool= or executor=), sequential workers a pool each. */
static lp_status pools(const lp_trace *t, lp_wi_dag *d, uint32_t *wpool, lp_error *err)
{
    lp_hmap m;
    lp_status st = lp_hmap_init(&m, 16, err);
    size_t cap = 0, cap2 = 0;
    for (uint32_t w = 0; w < t->nworkers && !st; w++) {
        lp_str key = lp_trace_attr(t, t->wattr[w], "pool");
        if (key == LP_STR_NONE)
            key = lp_trace_attr(t, t->wattr[w], "executor");
        uint64_t v;
        if (key != LP_STR_NONE && lp_hmap_get(&m, key, &v)) {
            wpool[w] = (uint32_t)v;
            d->slots[v]++;
            continue;
        }
        if (lp_grow_at(&d->slots, &cap, d->npools + 1, sizeof *d->slots) ||
            lp_grow_at(&d->seq, &cap2, d->npools + 1, sizeof *d->seq)) {
            st = nomem(err);
            break;
        }
        d->slots[d->npools] = 1;
        d->seq[d->npools] = key == LP_STR_NONE;
        if (key != LP_STR_NONE && (st = lp_hmap_put(&m, key, d->npools, err)))
            break;
        wpool[w] = d->npools++;
    }
    lp_hmap_release(&m);
    return st;
}

static lp_str task_of(const lp_trace *t, uint64_t a) { return lp_trace_attr(t, t->aattr[a], "task"); }

/* Nodes of one worker, in time order; amap[a] = node of activity a (NONE: not a node). */
static lp_status worker_nodes(const lp_trace *t, const lp_cpf_profile *p, lp_wi_dag *d, uint32_t w, uint32_t pool,
                              uint32_t *amap, size_t *cap, lp_error *err)
{
    int seq = d->seq[pool];
    for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1]; a++) {
        amap[a] = NONE;
        int gap = (t->aflags[a] & LP_ACT_GAP) != 0;
        if (gap && !seq)
            continue;
        double v[LP_RES_N];
        lp_cpf_act_vector(p, a, v);
        int64_t len = t->aend[a] - t->astart[a];
        lp_str tk = gap ? LP_STR_NONE : task_of(t, a);
        if (a > t->wfirst[w] && !gap && tk != LP_STR_NONE && amap[a - 1] != NONE && task_of(t, a - 1) == tk &&
            t->aend[a - 1] == t->astart[a] && !(t->aflags[a - 1] & LP_ACT_GAP)) {
            lp_wi_node *nd = &d->node[amap[a - 1]]; /* one task in several activities */
            if (len > nd->dur)
                nd->op = t->aop[a]; /* the task's operator: that of its longest part */
            double tot = (double)(nd->dur + len);
            for (int r = 0; r < LP_RES_N; r++)
                nd->v[r] = tot > 0 ? (nd->v[r] * (double)nd->dur + v[r] * (double)len) / tot : nd->v[r];
            nd->dur += len;
            double db, nb;
            lp_cpf_act_bytes(t, a, &db, &nb); /* a task's metrics may be on each of its activities */
            nd->disk_bytes = db > nd->disk_bytes ? db : nd->disk_bytes;
            nd->net_bytes = nb > nd->net_bytes ? nb : nd->net_bytes;
            amap[a] = amap[a - 1];
            continue;
        }
        if (lp_grow_at(&d->node, cap, d->n + 1, sizeof *d->node))
            return nomem(err);
        lp_wi_node *nd = &d->node[d->n];
        memset(nd, 0, sizeof *nd);
        nd->start = t->astart[a], nd->dur = len, nd->pool = pool, nd->worker = w, nd->op = t->aop[a];
        nd->kind = !gap ? LP_WI_TASK : t->atype[a] == LP_TYPE_WAITING ? LP_WI_WAIT : LP_WI_GAP;
        memcpy(nd->v, v, sizeof v);
        if (!gap)
            lp_cpf_act_bytes(t, a, &nd->disk_bytes, &nd->net_bytes);
        nd->conc = 1;
        nd->rec_slots = seq ? 0 : d->slots[pool];
        amap[a] = (uint32_t)d->n++;
    }
    return LP_OK;
}

static const lp_wi_node *g_nodes;
static int cmp_node(const void *x, const void *y)
{
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    const lp_wi_node *a = &g_nodes[i], *b = &g_nodes[j];
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->worker != b->worker)
        return a->worker < b->worker ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Put the nodes in order of recorded start; remap amap. */
static lp_status order_nodes(lp_wi_dag *d, uint32_t *amap, uint64_t nacts, lp_error *err)
{
    uint32_t *perm = lp_malloc((d->n ? d->n : 1) * sizeof *perm), *inv = lp_malloc((d->n ? d->n : 1) * sizeof *inv);
    lp_wi_node *nn = lp_malloc((d->n ? d->n : 1) * sizeof *nn);
    if (!perm || !inv || !nn) {
        lp_free(perm);
        lp_free(inv);
        lp_free(nn);
        return nomem(err);
    }
    for (size_t i = 0; i < d->n; i++)
        perm[i] = (uint32_t)i;
    g_nodes = d->node;
    qsort(perm, d->n, sizeof *perm, cmp_node);
    g_nodes = NULL;
    for (size_t i = 0; i < d->n; i++) {
        nn[i] = d->node[perm[i]];
        inv[perm[i]] = (uint32_t)i;
    }
    for (uint64_t a = 0; a < nacts; a++)
        if (amap[a] != NONE)
            amap[a] = inv[amap[a]];
    lp_free(d->node);
    d->node = nn;
    lp_free(perm);
    lp_free(inv);
    return LP_OK;
}

static lp_status add_edge(lp_wi_dag *d, size_t *cap, uint32_t s, uint32_t e, double frac, int64_t lat, int net,
                          lp_error *err)
{
    if (s == e)
        return LP_OK;
    if (lp_grow_at(&d->edge, cap, d->ne + 1, sizeof *d->edge))
        return nomem(err);
    lp_wi_edge x = {s, e, frac, lat, (uint8_t)net};
    d->edge[d->ne++] = x;
    return LP_OK;
}

/* First activity of worker w ending at or after time x. */
static uint64_t act_at(const lp_trace *t, uint32_t w, int64_t x)
{
    uint64_t lo = t->wfirst[w], hi = t->wfirst[w + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->aend[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The node a send at s on worker w fires from, and at which point of it. */
static uint32_t send_node(const lp_trace *t, const lp_wi_dag *d, const uint32_t *amap, uint32_t w, int64_t s,
                          double *frac)
{
    uint64_t a = act_at(t, w, s), end = t->wfirst[w + 1];
    if (a < end && t->aend[a] == s && amap[a] != NONE && d->node[amap[a]].start + d->node[amap[a]].dur == s) {
        *frac = 1;
        return amap[a];
    }
    while (a < end && t->aend[a] == s) /* s is a boundary: the segment starting there */
        a++;
    if (a < end && t->astart[a] <= s && amap[a] != NONE) {
        const lp_wi_node *nd = &d->node[amap[a]];
        *frac = nd->dur > 0 ? (double)(s - nd->start) / (double)nd->dur : 0;
        return amap[a];
    }
    for (uint64_t b = a; b-- > t->wfirst[w];) /* in a gap that is no node: the last node before */
        if (amap[b] != NONE && t->aend[b] <= s) {
            *frac = 1;
            return amap[b];
        }
    return NONE;
}

/* The node a receive at r on worker w releases: the first segment starting at or after
 * r (after a `waiting` gap: the segment the message let run; the gap itself only passes
 * its chain on, or its start would wait for messages that its own worker's earlier sends
 * cause). */
static uint32_t recv_node(const lp_trace *t, const lp_wi_dag *d, const uint32_t *amap, uint32_t w, int64_t r)
{
    uint64_t a = act_at(t, w, r), end = t->wfirst[w + 1];
    (void)d;
    for (; a < end; a++)
        if (amap[a] != NONE && t->astart[a] >= r)
            return amap[a];
    return NONE;
}

static lp_status edges(const lp_trace *t, lp_wi_dag *d, const uint32_t *amap, lp_error *err)
{
    size_t cap = 0;
    lp_status st = LP_OK;
    uint32_t *last = lp_malloc((t->nworkers ? t->nworkers : 1) * sizeof *last);
    if (!last)
        return nomem(err);
    for (uint32_t w = 0; w < t->nworkers; w++)
        last[w] = NONE;
    for (size_t i = 0; i < d->n && !st; i++) { /* chains of sequential workers (nodes are in time order) */
        const lp_wi_node *nd = &d->node[i];
        if (!d->seq[nd->pool])
            continue;
        if (last[nd->worker] != NONE)
            st = add_edge(d, &cap, last[nd->worker], (uint32_t)i, 1.0, 0, 0, err);
        last[nd->worker] = (uint32_t)i;
    }
    lp_free(last);
    for (uint64_t m = 0; m < t->nmsgs && !st; m++) {
        if (t->mflags[m] & LP_MSG_SKEW)
            continue;
        double frac = 0;
        uint32_t s = send_node(t, d, amap, t->msrc[m], t->msend[m], &frac);
        uint32_t r = recv_node(t, d, amap, t->mdst[m], t->mrecv[m]);
        if (s == NONE || r == NONE) {
            d->msgs_unplaced++;
            continue;
        }
        lp_str ha = lp_trace_attr(t, t->wattr[t->msrc[m]], "host"), hb = lp_trace_attr(t, t->wattr[t->mdst[m]], "host");
        int net = ha != LP_STR_NONE && hb != LP_STR_NONE && ha != hb;
        int64_t lat = t->mrecv[m] - t->msend[m];
        if (!net && !d->seq[d->node[r].pool])
            lat = 0; /* queueing for a slot: the replay recomputes it */
        st = add_edge(d, &cap, s, r, frac, lat, net, err);
    }
    return st;
}

/* k of every task (whatif.h): 1 + the time other tasks of its pool overlap it over its
 * length, a sweep over each pool's tasks in order of start. O(n + overlapping pairs). */
static lp_status concurrency(lp_wi_dag *d, lp_error *err)
{
    uint32_t *off = lp_calloc(d->npools + 1, sizeof *off), *idx = lp_malloc((d->n ? d->n : 1) * sizeof *idx);
    double *ov = lp_calloc(d->n ? d->n : 1, sizeof *ov);
    if (!off || !idx || !ov) {
        lp_free(off);
        lp_free(idx);
        lp_free(ov);
        return nomem(err);
    }
    for (size_t i = 0; i < d->n; i++)
        if (d->node[i].kind == LP_WI_TASK && !d->seq[d->node[i].pool])
            off[d->node[i].pool + 1]++;
    for (uint32_t p = 0; p < d->npools; p++)
        off[p + 1] += off[p];
    for (size_t i = 0; i < d->n; i++) /* nodes are in order of start: so is each pool's list */
        if (d->node[i].kind == LP_WI_TASK && !d->seq[d->node[i].pool])
            idx[off[d->node[i].pool]++] = (uint32_t)i;
    for (uint32_t p = d->npools; p > 0; p--)
        off[p] = off[p - 1];
    off[0] = 0;
    for (uint32_t p = 0; p < d->npools; p++)
        for (uint32_t x = off[p]; x < off[p + 1]; x++) {
            const lp_wi_node *a = &d->node[idx[x]];
            int64_t ea = a->start + a->dur;
            for (uint32_t y = x + 1; y < off[p + 1] && d->node[idx[y]].start < ea; y++) {
                const lp_wi_node *b = &d->node[idx[y]];
                int64_t eb = b->start + b->dur, o = (eb < ea ? eb : ea) - b->start;
                ov[idx[x]] += (double)o, ov[idx[y]] += (double)o;
            }
        }
    for (size_t i = 0; i < d->n; i++)
        if (d->node[i].dur > 0)
            d->node[i].conc = 1 + ov[i] / (double)d->node[i].dur;
    lp_free(off);
    lp_free(idx);
    lp_free(ov);
    return LP_OK;
}

/* The rate of every task's pool and operator on each device (whatif.h): sum D over
 * sum t_io / k of the group's tasks that moved bytes there. O(n) with a map. */
static lp_status rates(lp_wi_dag *d, lp_error *err)
{
    lp_hmap m;
    lp_status st = lp_hmap_init(&m, 64, err);
    double *acc = NULL; /* per group: disk D, disk time, net D, net time */
    size_t cap = 0, ng = 0;
    uint32_t *grp = lp_malloc((d->n ? d->n : 1) * sizeof *grp);
    if (!st && !grp)
        st = nomem(err);
    for (size_t i = 0; i < d->n && !st; i++) {
        lp_wi_node *nd = &d->node[i];
        grp[i] = UINT32_MAX;
        if (nd->kind != LP_WI_TASK || d->seq[nd->pool] || (nd->disk_bytes <= 0 && nd->net_bytes <= 0))
            continue;
        uint64_t key = ((uint64_t)nd->pool << 32) | nd->op, g;
        if (!lp_hmap_get(&m, key, &g)) {
            if (lp_grow_at(&acc, &cap, (ng + 1) * 4, sizeof *acc)) {
                st = nomem(err);
                break;
            }
            memset(acc + ng * 4, 0, 4 * sizeof *acc);
            if ((st = lp_hmap_put(&m, key, ng, err)))
                break;
            g = ng++;
        }
        grp[i] = (uint32_t)g;
        double k = nd->conc >= 1 ? nd->conc : 1, dur = (double)nd->dur * 1e-9;
        if (nd->disk_bytes > 0)
            acc[g * 4] += nd->disk_bytes, acc[g * 4 + 1] += nd->v[LP_RES_DISK] * dur / k;
        if (nd->net_bytes > 0)
            acc[g * 4 + 2] += nd->net_bytes, acc[g * 4 + 3] += nd->v[LP_RES_NET] * dur / k;
    }
    for (size_t i = 0; i < d->n && !st; i++)
        if (grp[i] != UINT32_MAX) {
            const double *a = acc + (size_t)grp[i] * 4;
            d->node[i].disk_rate = a[1] > 0 ? a[0] / a[1] : 0;
            d->node[i].net_rate = a[3] > 0 ? a[2] / a[3] : 0;
        }
    lp_free(grp);
    lp_free(acc);
    lp_hmap_release(&m);
    return st;
}

/* First waves (per pool and operator, the first `slots` tasks) and warm-up factors. */
static lp_status waves(lp_wi_dag *d, lp_error *err)
{
    lp_hmap cnt;
    lp_status st = lp_hmap_init(&cnt, 64, err);
    d->warmup = lp_malloc((d->npools ? d->npools : 1) * sizeof *d->warmup);
    double *fs = lp_calloc(d->npools ? d->npools : 1, 4 * sizeof *fs); /* per pool: first sum, n, later sum, n */
    if (!st && (!d->warmup || !fs))
        st = nomem(err);
    for (size_t i = 0; i < d->n && !st; i++) {
        lp_wi_node *nd = &d->node[i];
        if (d->seq[nd->pool] || nd->kind != LP_WI_TASK)
            continue;
        uint64_t key = ((uint64_t)nd->pool << 32) | nd->op, k = 0;
        lp_hmap_get(&cnt, key, &k);
        nd->first_wave = k < d->slots[nd->pool];
        if ((st = lp_hmap_put(&cnt, key, k + 1, err)))
            break;
    }
    /* w: per operator, mean first-wave time over mean later time, clamped to [1/3, 3];
     * averaged weighted by the operator's time (a pool's short bookkeeping activities,
     * e.g. taking a task off a queue, vary most and weigh least) */
    for (uint32_t p = 0; p < d->npools && !st; p++)
        d->warmup[p] = 1;
    if (!st) {
        /* operators of a pool with both kinds of tasks: sums per (pool, op) in a second map */
        lp_hmap sums;
        st = lp_hmap_init(&sums, 64, err);
        double *acc = NULL;
        size_t cap = 0, nacc = 0;
        for (size_t i = 0; i < d->n && !st; i++) {
            const lp_wi_node *nd = &d->node[i];
            if (d->seq[nd->pool] || nd->kind != LP_WI_TASK)
                continue;
            uint64_t key = ((uint64_t)nd->pool << 32) | nd->op, k;
            if (!lp_hmap_get(&sums, key, &k)) {
                if (lp_grow_at(&acc, &cap, (nacc + 1) * 5, sizeof *acc) || lp_hmap_put(&sums, key, nacc, err)) {
                    st = nomem(err);
                    break;
                }
                memset(acc + nacc * 5, 0, 5 * sizeof *acc);
                acc[nacc * 5 + 4] = nd->pool;
                k = nacc++;
            }
            acc[k * 5 + (nd->first_wave ? 0 : 2)] += (double)nd->dur;
            acc[k * 5 + (nd->first_wave ? 1 : 3)] += 1;
        }
        for (size_t k = 0; k < nacc && !st; k++) {
            double *a = acc + k * 5;
            if (a[1] > 0 && a[3] > 0 && a[2] > 0) {
                uint32_t p = (uint32_t)a[4];
                double w = (a[0] / a[1]) / (a[2] / a[3]);
                w = w < 1.0 / 3 ? 1.0 / 3 : w > 3 ? 3 : w;
                fs[p * 4] += w * (a[0] + a[2]);
                fs[p * 4 + 1] += a[0] + a[2];
            }
        }
        for (uint32_t p = 0; p < d->npools && !st; p++)
            if (fs[p * 4 + 1] > 0) {
                double w = fs[p * 4] / fs[p * 4 + 1];
                d->warmup[p] = w < 1.0 / 3 ? 1.0 / 3 : w > 3 ? 3 : w;
            }
        lp_free(acc);
        lp_hmap_release(&sums);
    }
    lp_free(fs);
    lp_hmap_release(&cnt);
    return st;
}

lp_status lp_wi_dag_build(const lp_trace *t, const lp_cpf_profile *p, lp_wi_dag *d, lp_error *err)
{
    memset(d, 0, sizeof *d);
    if (!t->nacts)
        return lp_error_set(err, LP_ERR_DATA, "the trace has no activity: nothing to replay");
    uint32_t *wpool = lp_malloc(t->nworkers * sizeof *wpool);
    uint32_t *amap = lp_malloc(t->nacts * sizeof *amap);
    lp_status st = (!wpool || !amap) ? nomem(err) : pools(t, d, wpool, err);
    size_t cap = 0;
    for (uint32_t w = 0; w < t->nworkers && !st; w++)
        st = worker_nodes(t, p, d, w, wpool[w], amap, &cap, err);
    if (!st && !d->n)
        st = lp_error_set(err, LP_ERR_DATA, "the trace has no task to replay");
    if (!st)
        st = order_nodes(d, amap, t->nacts, err);
    if (!st)
        st = edges(t, d, amap, err);
    if (!st)
        st = concurrency(d, err);
    if (!st)
        st = rates(d, err);
    if (!st)
        st = waves(d, err);
    d->t0 = t->tmin, d->t1 = t->tmax;
    lp_free(wpool);
    lp_free(amap);
    if (st)
        lp_wi_dag_release(d);
    return st;
}
