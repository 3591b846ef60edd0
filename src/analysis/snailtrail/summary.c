/* summary.c: the four CP-based summaries of a window (summary.h; SnailTrail §6, §7.4).
 * One pass over the window's edges feeds every requested summary at once: worker edges
 * by vertex (the worker is the loop's), message edges by their incoming lists, then the
 * sampled path's edges. Dense accumulators for types, workers and operators; for
 * sender/receiver pairs, accumulators in order of first appearance found through the
 * library's hash table (base/hashmap.h). Nothing is allocated per edge; the
 * accumulators, the table and the rows are reused from window to window. */
#include "longpole/analysis/snailtrail/summary.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct acc {
    double cp;
    int64_t prof;
    int64_t path;
} acc;

typedef struct pent {
    uint64_t key;            /* src << 32 | dst */
    acc a;
} pent;

static const char *const kind_names[LP_SUM_NKINDS] = {"activity", "worker", "operator", "comm"};

const char *lp_sumkind_name(lp_sumkind k) { return (unsigned)k < LP_SUM_NKINDS ? kind_names[k] : "?"; }

int lp_sumkind_parse(const char *s, size_t n, lp_sumkind *k)
{
    static const struct {
        const char *name;
        lp_sumkind k;
    } names[] = {{"activity", LP_SUM_ACTIVITY}, {"worker", LP_SUM_WORKER},   {"straggler", LP_SUM_WORKER},
                 {"operator", LP_SUM_OPERATOR}, {"comm", LP_SUM_COMM},       {"communication", LP_SUM_COMM}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == n && memcmp(names[i].name, s, n) == 0) {
            *k = names[i].k;
            return 0;
        }
    return -1;
}

/* ---- keys ------------------------------------------------------------------------------ */

void lp_sumkeys_release(lp_sumkeys *k)
{
    lp_free(k->opid);
    lp_free(k->opname);
    lp_free(k->oppar);
    memset(k, 0, sizeof *k);
}

lp_status lp_sumkeys_init(lp_sumkeys *k, const lp_trace *t, lp_error *err)
{
    memset(k, 0, sizeof *k);
    k->t = t;
    size_t ns = t->strs.n ? t->strs.n : 1;
    k->opid = lp_malloc(ns * sizeof *k->opid);
    uint32_t *lastw = NULL;
    if (!k->opid)
        goto oom;
    memset(k->opid, 0xff, ns * sizeof *k->opid);
    size_t cap = 0;
    for (uint32_t w = 0; w < t->nworkers; w++)
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++) {
            lp_str op = t->aop[i];
            if (op == LP_STR_NONE || op >= ns)
                continue;
            uint32_t id = k->opid[op];
            if (id == LP_NONE32) {
                id = k->nops;
                void *p = k->opname;
                size_t c2 = cap;
                if (lp_grow(&p, &c2, k->nops + 1, sizeof *k->opname))
                    goto oom;
                k->opname = p;
                p = k->oppar;
                c2 = cap;
                if (lp_grow(&p, &c2, k->nops + 1, sizeof *k->oppar))
                    goto oom;
                k->oppar = p;
                p = lastw;
                if (lp_grow(&p, &cap, k->nops + 1, sizeof *lastw))
                    goto oom;
                lastw = p;
                k->opname[id] = op;
                k->oppar[id] = 0;
                lastw[id] = LP_NONE32;
                k->opid[op] = id;
                k->nops++;
            }
            if (lastw[id] != w) { /* activities come grouped by worker */
                lastw[id] = w;
                k->oppar[id]++;
            }
        }
    lp_free(lastw);
    return LP_OK;
oom:
    lp_free(lastw);
    lp_sumkeys_release(k);
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory indexing operators");
}

const char *lp_sumkeys_label(const lp_sumkeys *k, lp_sumkind kind, uint64_t key, char *buf, size_t n)
{
    const lp_trace *t = k->t;
    if (key == LP_SUMKEY_COMM)
        return "communication";
    if (key == LP_SUMKEY_NONE)
        return "-";
    switch (kind) {
    case LP_SUM_ACTIVITY: return key < t->ntypes ? lp_trace_type_name(t, (uint32_t)key) : "?";
    case LP_SUM_WORKER: return key < t->nworkers ? lp_trace_worker_name(t, (uint32_t)key) : "?";
    case LP_SUM_OPERATOR: return key < k->nops ? lp_trace_str(t, k->opname[key]) : "?";
    case LP_SUM_COMM: {
        uint32_t a = (uint32_t)(key >> 32), b = (uint32_t)key;
        if (a >= t->nworkers || b >= t->nworkers)
            return "?";
        snprintf(buf, n, "%s -> %s", lp_trace_worker_name(t, a), lp_trace_worker_name(t, b));
        return buf;
    }
    default: return "?";
    }
}

/* ---- summaries ------------------------------------------------------------------------- */

void lp_summary_init(lp_summary *s) { memset(s, 0, sizeof *s); }

void lp_summary_release(lp_summary *s)
{
    lp_free(s->rows);
    memset(s, 0, sizeof *s);
}

void lp_sumbuf_release(lp_sumbuf *b)
{
    for (int k = 0; k < LP_SUM_NKINDS; k++)
        lp_free(b->acc[k]);
    lp_free(b->pairs);
    lp_free(b->iv);
    if (b->pairmap)
        lp_hmap_release(b->pairmap);
    lp_free(b->pairmap);
    memset(b, 0, sizeof *b);
}

/* The accumulator of a pair, added if new (NULL when out of memory). */
static inline acc *pair_acc(lp_sumbuf *b, uint64_t key)
{
    int added;
    uint64_t i = lp_hmap_get_or_put(b->pairmap, key, b->npairs, &added);
    if (i == LP_HMAP_EMPTY)
        return NULL;
    if (added) {
        void *p = b->pairs;
        if (lp_grow(&p, &b->pcap, b->npairs + 1, sizeof(pent))) {
            lp_hmap_del(b->pairmap, key);
            return NULL;
        }
        b->pairs = p;
        ((pent *)p)[b->npairs++] = (pent){key, {0, 0, 0}};
    }
    return &((pent *)b->pairs)[i].a;
}

static int cmp_rows(const void *pa, const void *pb)
{
    const lp_sumrow *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank > b->rank ? -1 : 1;
    if (a->prof_ns != b->prof_ns)
        return a->prof_ns > b->prof_ns ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int add_row(lp_summary *s, uint64_t key, const acc *a, uint32_t par)
{
    if (a->cp == 0 && a->prof == 0 && a->path == 0)
        return 0;
    if (s->n == s->cap) {
        void *p = s->rows;
        if (lp_grow(&p, &s->cap, s->n + 1, sizeof *s->rows))
            return -1;
        s->rows = p;
    }
    lp_sumrow *r = &s->rows[s->n++];
    r->key = key;
    r->cp = a->cp;
    r->par = par ? par : 1;
    r->rank = a->cp / r->par;
    r->prof_ns = a->prof;
    r->path_ns = a->path;
    s->cp_total += a->cp;
    return 0;
}

/* One window's summing: the accumulators by key of each kind asked for (NULL when not),
 * and the window's totals. */
typedef struct sumx {
    const lp_trace *t;
    const lp_snapshot *s;
    const lp_sumkeys *keys;
    lp_sumbuf *buf;
    acc *at, *aw, *ao;       /* by type, worker, operator (+ "-" and communication) */
    int want_comm;           /* the pairs table (buf) is summed too */
    size_t comm_t, comm_w, none_o, comm_o; /* the extra keys' slots */
    int64_t waiting, busy, msgtime, plen;
    int64_t msgwall;         /* the union of the message intervals (the profile's communication) */
} sumx;

/* The accumulators of the kinds asked for, zeroed; the pairs table emptied. */
static int sum_prepare(sumx *x, unsigned kinds)
{
    const uint32_t nty = x->t->ntypes, nw = x->s->nworkers, nops = x->keys->nops;
    const size_t need[LP_SUM_NKINDS] = {(size_t)nty + 1, (size_t)nw + 1, (size_t)nops + 2, 0};
    lp_sumbuf *buf = x->buf;
    acc *A[LP_SUM_NKINDS] = {NULL, NULL, NULL, NULL};
    for (int k = 0; k < LP_SUM_COMM; k++) {
        if (!(kinds & (1u << k)))
            continue;
        if (need[k] > buf->cap[k] || !buf->acc[k]) {
            acc *p = lp_reallocarray(NULL, need[k] + 16, sizeof *p);
            if (!p)
                return -1;
            lp_free(buf->acc[k]);
            buf->acc[k] = p;
            buf->cap[k] = need[k] + 16;
        }
        A[k] = buf->acc[k];
        memset(A[k], 0, need[k] * sizeof *A[k]);
    }
    x->want_comm = (kinds >> LP_SUM_COMM) & 1;
    if (x->want_comm) {
        if (!buf->pairmap && !(buf->pairmap = lp_calloc(1, sizeof *buf->pairmap))) /* zeroed: empty */
            return -1;
        lp_hmap_clear(buf->pairmap);
        buf->npairs = 0;
    }
    x->at = A[LP_SUM_ACTIVITY], x->aw = A[LP_SUM_WORKER], x->ao = A[LP_SUM_OPERATOR];
    x->comm_t = nty, x->comm_w = nw, x->none_o = nops, x->comm_o = (size_t)nops + 1;
    return 0;
}

/* The operator slot of activity a ("-", none_o, when it has none or it is not indexed). */
static inline size_t op_slot(const lp_str *aop, const uint32_t *opid, size_t none_o, uint32_t a)
{
    lp_str op = aop[a];
    return op == LP_STR_NONE || opid[op] == LP_NONE32 ? none_o : opid[op];
}

/* Worker edges: CP and profile time by type, worker and operator; waiting apart. */
static void sum_worker_edges(sumx *x, const double *cpw)
{
    const lp_trace *t = x->t;
    const lp_snapshot *s = x->s;
    acc *at = x->at, *aw = x->aw, *ao = x->ao;
    const uint32_t *opid = x->keys->opid;
    const size_t none_o = x->none_o;
    int64_t waiting = 0, busy = 0; /* (locals: the loop keeps them in registers) */
    for (uint32_t w = 0; w < s->nworkers; w++)
        for (uint64_t v = s->voff[w] + 1; v < s->voff[w + 1]; v++) {
            uint32_t a = s->vact[v];
            if (a == LP_NONE32)
                continue;
            int64_t d = s->vtime[v] - s->vtime[v - 1];
            uint16_t ty = t->atype[a];
            if (ty == LP_TYPE_WAITING) {
                waiting += d;
                continue;
            }
            double cp = cpw[v];
            int64_t pd = t->aflags[a] & LP_ACT_GAP ? 0 : d; /* a filled gap is in no profile (breakdown.h) */
            busy += pd;
            if (at) {
                at[ty].cp += cp;
                at[ty].prof += pd;
            }
            if (aw) {
                aw[w].cp += cp;
                aw[w].prof += pd;
            }
            if (ao) {
                size_t o = op_slot(t->aop, opid, none_o, a);
                ao[o].cp += cp;
                ao[o].prof += pd;
            }
        }
    x->waiting += waiting;
    x->busy += busy;
}

/* Message edges: CP and profile time of communication, by worker pair too. */
static int sum_message_edges(sumx *x, const double *cpin)
{
    const lp_trace *t = x->t;
    const lp_snapshot *s = x->s;
    double cpmsg = 0;
    int64_t msgtime = 0;
    size_t niv = 0; /* the profile's communication is the union of the message intervals */
    if (s->nin > x->buf->capiv) {
        lp_ival *iv = lp_reallocarray(x->buf->iv, s->nin, sizeof *iv);
        if (!iv)
            return -1;
        x->buf->iv = iv;
        x->buf->capiv = s->nin;
    }
    for (uint64_t v = 0; v < s->nv; v++)
        for (uint32_t k = s->vin[v]; k < s->vin[v + 1]; k++) {
            int64_t d = s->vtime[v] - s->in[k].st;
            double cp = cpin[k];
            uint32_t m = s->in[k].msg;
            /* as in breakdown.c: a message to oneself (a timer) overlaps that worker's
             * waiting, so it is no communication time in the profile */
            int64_t pd = t->msrc[m] == t->mdst[m] ? 0 : d;
            msgtime += pd;
            if (pd > 0)
                x->buf->iv[niv++] = (lp_ival){s->in[k].st, s->vtime[v]};
            cpmsg += cp;
            if (x->want_comm) {
                acc *p = pair_acc(x->buf, (uint64_t)t->msrc[m] << 32 | t->mdst[m]);
                if (!p)
                    return -1;
                p->cp += cp;
                p->prof += pd;
            }
        }
    x->msgtime += msgtime;
    x->msgwall = lp_ival_union(x->buf->iv, niv);
    acc *comm[3] = {x->at ? &x->at[x->comm_t] : NULL, x->aw ? &x->aw[x->comm_w] : NULL,
                    x->ao ? &x->ao[x->comm_o] : NULL};
    for (int i = 0; i < 3; i++)
        if (comm[i]) {
            comm[i]->cp += cpmsg;
            comm[i]->prof += x->msgwall;
        }
    return 0;
}

/* The receive vertex of message edge in[k]: binary search on vin. */
static uint64_t recv_vertex(const lp_snapshot *s, uint64_t k)
{
    uint64_t lo = 0, hi = s->nv;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (s->vin[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    while (lo + 1 < s->nv && s->vin[lo + 1] <= k)
        lo++;
    return lo;
}

/* The sampled path: its time by key, and its length. */
static int sum_path(sumx *x, const lp_cppath *path)
{
    const lp_trace *t = x->t;
    const lp_snapshot *s = x->s;
    acc *at = x->at, *aw = x->aw, *ao = x->ao;
    for (size_t i = 0; path && i < path->n; i++) {
        uint64_t e = path->e[i];
        if (e & LP_CPPATH_MSG) {
            uint64_t k = e & ~LP_CPPATH_MSG;
            int64_t d = s->vtime[recv_vertex(s, k)] - s->in[k].st;
            x->plen += d;
            if (at)
                at[x->comm_t].path += d;
            if (aw)
                aw[x->comm_w].path += d;
            if (ao)
                ao[x->comm_o].path += d;
            if (x->want_comm) {
                uint32_t m = s->in[k].msg;
                acc *p = pair_acc(x->buf, (uint64_t)t->msrc[m] << 32 | t->mdst[m]);
                if (!p)
                    return -1;
                p->path += d;
            }
        } else {
            uint64_t v = e;
            uint32_t a = s->vact[v];
            int64_t d = s->vtime[v] - s->vtime[v - 1];
            x->plen += d;
            if (at)
                at[t->atype[a]].path += d;
            if (aw)
                aw[lp_snapshot_vworker(s, v)].path += d;
            if (ao)
                ao[op_slot(t->aop, x->keys->opid, x->none_o, a)].path += d;
        }
    }
    return 0;
}

/* The rows of kind k: one per key with anything, shares, then sorted (for workers and
 * operators, the communication and "-" rows last). */
static int sum_rows(const sumx *x, int k, lp_summary *o)
{
    const uint32_t nty = x->t->ntypes, nw = x->s->nworkers, nops = x->keys->nops;
    o->kind = (lp_sumkind)k;
    o->n = 0;
    o->cp_total = 0;
    o->waiting_ns = x->waiting;
    o->path_total = x->plen;
    o->prof_total = k == LP_SUM_COMM ? x->msgtime : x->busy + x->msgwall;
    int bad = 0;
    switch (k) {
    case LP_SUM_ACTIVITY:
        for (uint32_t ty = 0; ty < nty && !bad; ty++)
            bad = add_row(o, ty, &x->at[ty], 1);
        bad = bad || add_row(o, LP_SUMKEY_COMM, &x->at[x->comm_t], 1);
        break;
    case LP_SUM_WORKER:
        for (uint32_t w = 0; w < nw && !bad; w++)
            bad = add_row(o, w, &x->aw[w], 1);
        bad = bad || add_row(o, LP_SUMKEY_COMM, &x->aw[x->comm_w], 1);
        break;
    case LP_SUM_OPERATOR:
        for (uint32_t op = 0; op < nops && !bad; op++)
            bad = add_row(o, op, &x->ao[op], x->keys->oppar[op]);
        bad = bad || add_row(o, LP_SUMKEY_NONE, &x->ao[x->none_o], 1);
        bad = bad || add_row(o, LP_SUMKEY_COMM, &x->ao[x->comm_o], 1);
        break;
    default: {
        const pent *p = x->buf->pairs;
        for (size_t i = 0; i < x->buf->npairs && !bad; i++)
            bad = add_row(o, p[i].key, &p[i].a, 1);
        break;
    }
    }
    if (bad)
        return -1;
    for (size_t i = 0; i < o->n; i++) {
        lp_sumrow *r = &o->rows[i];
        r->prof_share = o->prof_total ? (double)r->prof_ns / (double)o->prof_total : 0;
        r->path_share = x->plen ? (double)r->path_ns / (double)x->plen : 0;
    }
    /* worker and operator summaries: the communication and "-" rows are not workers
     * or operators; they go last */
    size_t nreal = o->n;
    if (k == LP_SUM_WORKER || k == LP_SUM_OPERATOR) {
        nreal = 0;
        for (size_t i = 0; i < o->n; i++)
            if (o->rows[i].key < LP_SUMKEY_NONE) {
                lp_sumrow r = o->rows[nreal];
                o->rows[nreal++] = o->rows[i];
                o->rows[i] = r;
            }
    }
    if (nreal > 1)
        qsort(o->rows, nreal, sizeof *o->rows, cmp_rows);
    if (o->n - nreal > 1)
        qsort(o->rows + nreal, o->n - nreal, sizeof *o->rows, cmp_rows);
    return 0;
}

lp_status lp_summary_compute(lp_summary out[LP_SUM_NKINDS], unsigned kinds, lp_sumbuf *buf, const lp_sumkeys *keys,
                             const lp_snapshot *s, const lp_cpm *c, const lp_cppath *path, lp_error *err)
{
    sumx x;
    memset(&x, 0, sizeof x);
    x.t = s->t, x.s = s, x.keys = keys, x.buf = buf;
    if (sum_prepare(&x, kinds))
        goto oom;
    sum_worker_edges(&x, c->cpw);
    if (sum_message_edges(&x, c->cpin) || sum_path(&x, path))
        goto oom;
    for (int k = 0; k < LP_SUM_NKINDS; k++)
        if ((kinds & (1u << k)) && sum_rows(&x, k, &out[k]))
            goto oom;
    return LP_OK;
oom:
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory summarising a window");
}
