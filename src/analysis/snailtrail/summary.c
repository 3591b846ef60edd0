/* summary.c: the four CP-based summaries of a window (summary.h; SnailTrail §6, §7.4).
 * One pass over the window's edges feeds every requested summary at once: worker edges
 * by vertex (the worker is the loop's), message edges by their incoming lists, then the
 * sampled path's edges. Dense accumulators for types, workers and operators; an
 * open-addressing table for sender/receiver pairs. Nothing is allocated per edge; the
 * accumulators and rows are reused from window to window. */
#include "longpole/analysis/snailtrail/summary.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct acc {
    double cp;
    int64_t prof;
    int64_t path;
} acc;

typedef struct pent {
    uint64_t key;            /* src << 32 | dst; UINT64_MAX = empty */
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
    lp_free(b->used);
    lp_free(b->iv);
    memset(b, 0, sizeof *b);
}

static inline uint32_t pair_hash(uint64_t key, size_t cap)
{
    return (uint32_t)(((key + 1) * 0x9E3779B97F4A7C15ULL) >> 32) & (uint32_t)(cap - 1);
}

static int pairs_grow(lp_sumbuf *b, size_t need)
{
    size_t cap = b->pcap ? b->pcap : 64;
    while (cap < 2 * need)
        cap *= 2;
    if (cap == b->pcap)
        return 0;
    pent *np = lp_reallocarray(NULL, cap, sizeof *np);
    uint32_t *nu = lp_reallocarray(NULL, cap, sizeof *nu);
    if (!np || !nu) {
        lp_free(np);
        lp_free(nu);
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        np[i].key = UINT64_MAX;
    pent *op = b->pairs;
    size_t n = 0;
    for (size_t i = 0; i < b->npairs; i++) {
        pent e = op[b->used[i]];
        uint32_t h = pair_hash(e.key, cap);
        while (np[h].key != UINT64_MAX)
            h = (h + 1) & (uint32_t)(cap - 1);
        np[h] = e;
        nu[n++] = h;
    }
    lp_free(b->pairs);
    lp_free(b->used);
    b->pairs = np;
    b->used = nu;
    b->pcap = cap;
    return 0;
}

/* The accumulator of a pair, inserted if new (NULL when the table cannot grow). The
 * table holds at most half its capacity. */
static inline acc *pair_acc(lp_sumbuf *b, uint64_t key)
{
    if (2 * (b->npairs + 1) > b->pcap && pairs_grow(b, b->npairs + 1))
        return NULL;
    pent *p = b->pairs;
    uint32_t h = pair_hash(key, b->pcap);
    while (p[h].key != key) {
        if (p[h].key == UINT64_MAX) {
            p[h].key = key;
            p[h].a = (acc){0, 0, 0};
            b->used[b->npairs++] = h;
            return &p[h].a;
        }
        h = (h + 1) & (uint32_t)(b->pcap - 1);
    }
    return &p[h].a;
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

lp_status lp_summary_compute(lp_summary out[LP_SUM_NKINDS], unsigned kinds, lp_sumbuf *buf, const lp_sumkeys *keys,
                             const lp_snapshot *s, const lp_cpm *c, const lp_cppath *path, lp_error *err)
{
    const lp_trace *t = s->t;
    const uint32_t nty = t->ntypes, nw = s->nworkers, nops = keys->nops;
    const size_t need[LP_SUM_NKINDS] = {(size_t)nty + 1, (size_t)nw + 1, (size_t)nops + 2, 0};
    acc *A[LP_SUM_NKINDS] = {NULL, NULL, NULL, NULL};
    for (int k = 0; k < LP_SUM_COMM; k++) {
        if (!(kinds & (1u << k)))
            continue;
        if (need[k] > buf->cap[k] || !buf->acc[k]) {
            acc *p = lp_reallocarray(NULL, need[k] + 16, sizeof *p);
            if (!p)
                goto oom;
            lp_free(buf->acc[k]);
            buf->acc[k] = p;
            buf->cap[k] = need[k] + 16;
        }
        A[k] = buf->acc[k];
        memset(A[k], 0, need[k] * sizeof *A[k]);
    }
    const int want_comm = (kinds >> LP_SUM_COMM) & 1;
    if (want_comm) {
        for (size_t i = 0; i < buf->npairs; i++)
            ((pent *)buf->pairs)[buf->used[i]].key = UINT64_MAX;
        buf->npairs = 0;
        if (pairs_grow(buf, 1))
            goto oom;
    }
    acc *at = A[LP_SUM_ACTIVITY], *aw = A[LP_SUM_WORKER], *ao = A[LP_SUM_OPERATOR];
    const size_t comm_t = nty, comm_w = nw, none_o = nops, comm_o = (size_t)nops + 1;
    const uint32_t *opid = keys->opid;
    int64_t waiting = 0, busy = 0, msgtime = 0;
    const double *cpw = c->cpw, *cpin = c->cpin;
    /* worker edges */
    for (uint32_t w = 0; w < nw; w++)
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
                lp_str op = t->aop[a];
                size_t o = op == LP_STR_NONE || opid[op] == LP_NONE32 ? none_o : opid[op];
                ao[o].cp += cp;
                ao[o].prof += pd;
            }
        }
    /* message edges; the profile's communication is the union of their intervals */
    double cpmsg = 0;
    size_t niv = 0;
    if (s->nin > buf->capiv) {
        lp_ival *iv = lp_reallocarray(buf->iv, s->nin, sizeof *iv);
        if (!iv)
            goto oom;
        buf->iv = iv;
        buf->capiv = s->nin;
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
                buf->iv[niv++] = (lp_ival){s->in[k].st, s->vtime[v]};
            cpmsg += cp;
            if (want_comm) {
                acc *p = pair_acc(buf, (uint64_t)t->msrc[m] << 32 | t->mdst[m]);
                if (!p)
                    goto oom;
                p->cp += cp;
                p->prof += pd;
            }
        }
    int64_t msgwall = lp_ival_union(buf->iv, niv);
    if (at) {
        at[comm_t].cp += cpmsg;
        at[comm_t].prof += msgwall;
    }
    if (aw) {
        aw[comm_w].cp += cpmsg;
        aw[comm_w].prof += msgwall;
    }
    if (ao) {
        ao[comm_o].cp += cpmsg;
        ao[comm_o].prof += msgwall;
    }
    /* the sampled path */
    int64_t plen = 0;
    if (path)
        for (size_t i = 0; i < path->n; i++) {
            uint64_t e = path->e[i];
            if (e & LP_CPPATH_MSG) {
                uint64_t k = e & ~LP_CPPATH_MSG;
                uint64_t v = 0;
                /* the receive vertex of in[k]: binary search on vin */
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
                v = lo;
                int64_t d = s->vtime[v] - s->in[k].st;
                plen += d;
                if (at)
                    at[comm_t].path += d;
                if (aw)
                    aw[comm_w].path += d;
                if (ao)
                    ao[comm_o].path += d;
                if (want_comm) {
                    uint32_t m = s->in[k].msg;
                    acc *p = pair_acc(buf, (uint64_t)t->msrc[m] << 32 | t->mdst[m]);
                    if (!p)
                        goto oom;
                    p->path += d;
                }
            } else {
                uint64_t v = e;
                uint32_t a = s->vact[v];
                int64_t d = s->vtime[v] - s->vtime[v - 1];
                plen += d;
                if (at)
                    at[t->atype[a]].path += d;
                if (aw)
                    aw[lp_snapshot_vworker(s, v)].path += d;
                if (ao) {
                    lp_str op = t->aop[a];
                    ao[op == LP_STR_NONE || opid[op] == LP_NONE32 ? none_o : opid[op]].path += d;
                }
            }
        }
    /* rows */
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        if (!(kinds & (1u << k)))
            continue;
        lp_summary *o = &out[k];
        o->kind = (lp_sumkind)k;
        o->n = 0;
        o->cp_total = 0;
        o->waiting_ns = waiting;
        o->path_total = plen;
        o->prof_total = k == LP_SUM_COMM ? msgtime : busy + msgwall;
        int bad = 0;
        switch (k) {
        case LP_SUM_ACTIVITY:
            for (uint32_t ty = 0; ty < nty && !bad; ty++)
                bad = add_row(o, ty, &at[ty], 1);
            bad = bad || add_row(o, LP_SUMKEY_COMM, &at[comm_t], 1);
            break;
        case LP_SUM_WORKER:
            for (uint32_t w = 0; w < nw && !bad; w++)
                bad = add_row(o, w, &aw[w], 1);
            bad = bad || add_row(o, LP_SUMKEY_COMM, &aw[comm_w], 1);
            break;
        case LP_SUM_OPERATOR:
            for (uint32_t op = 0; op < nops && !bad; op++)
                bad = add_row(o, op, &ao[op], keys->oppar[op]);
            bad = bad || add_row(o, LP_SUMKEY_NONE, &ao[none_o], 1);
            bad = bad || add_row(o, LP_SUMKEY_COMM, &ao[comm_o], 1);
            break;
        default: {
            const pent *p = buf->pairs;
            for (size_t i = 0; i < buf->npairs && !bad; i++)
                bad = add_row(o, p[buf->used[i]].key, &p[buf->used[i]].a, 1);
            break;
        }
        }
        if (bad)
            goto oom;
        for (size_t i = 0; i < o->n; i++) {
            lp_sumrow *r = &o->rows[i];
            r->prof_share = o->prof_total ? (double)r->prof_ns / (double)o->prof_total : 0;
            r->path_share = plen ? (double)r->path_ns / (double)plen : 0;
        }
        /* worker and operator summaries: the communication and "-" rows are not workers
         * or operators; they go last */
        size_t nreal = o->n;
        if (k == LP_SUM_WORKER || k == LP_SUM_OPERATOR) {
            nreal = 0;
            for (size_t i = 0; i < o->n; i++)
                if (o->rows[i].key < LP_SUMKEY_NONE) {
                    lp_sumrow x = o->rows[nreal];
                    o->rows[nreal++] = o->rows[i];
                    o->rows[i] = x;
                }
        }
        if (nreal > 1)
            qsort(o->rows, nreal, sizeof *o->rows, cmp_rows);
        if (o->n - nreal > 1)
            qsort(o->rows + nreal, o->n - nreal, sizeof *o->rows, cmp_rows);
    }
    return LP_OK;
oom:
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory summarising a window");
}
