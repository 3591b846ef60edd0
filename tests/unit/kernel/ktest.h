/* ktest.h: helpers for the execution-graph tests: kernel traces written event by event
 * (what the readers would produce), hand-built graphs, a one-line rendering of a
 * worker's timeline, and path comparison against expected elements. */
#ifndef LP_TEST_KTEST_H
#define LP_TEST_KTEST_H

#include "t.h"
#include "longpole/analysis/kernel/kcpath.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <string.h>

/* ---- kernel traces by hand ------------------------------------------------------- */

static inline void kt_init(lp_ktrace *kt)
{
    memset(kt, 0, sizeof *kt);
    lp_strtab_init(&kt->strs);
}

static inline lp_str kt_str(lp_ktrace *kt, const char *s)
{
    lp_str id = LP_STR_NONE;
    if (s)
        lp_strtab_intern(&kt->strs, s, strlen(s), &id);
    return id;
}

static inline uint32_t kt_host(lp_ktrace *kt, const char *name, uint32_t ncpus)
{
    kt->host = realloc(kt->host, (kt->nhosts + 1) * sizeof *kt->host);
    lp_khost *h = &kt->host[kt->nhosts];
    memset(h, 0, sizeof *h);
    h->name = kt_str(kt, name);
    h->source = kt_str(kt, name);
    h->ncpus = ncpus;
    return kt->nhosts++;
}

/* Append an event (the caller keeps them in time order). Returns its index. */
static inline uint64_t kt_ev(lp_ktrace *kt, uint32_t host, int64_t ts, uint32_t cpu, lp_kev_type type, int32_t tid,
                             int32_t tid2, int64_t a, int64_t b, uint64_t key, const char *name, const char *name2)
{
    lp_khost *h = &kt->host[host];
    h->ev = realloc(h->ev, (h->nev + 1) * sizeof *h->ev);
    lp_kev *e = &h->ev[h->nev];
    memset(e, 0, sizeof *e);
    e->ts = ts;
    e->cpu = cpu;
    e->type = (uint16_t)type;
    e->tid = tid;
    e->tid2 = tid2;
    e->ctx_tid = -1;
    e->a = a;
    e->b = b;
    e->key = key;
    e->name = kt_str(kt, name);
    e->name2 = kt_str(kt, name2);
    return h->nev++;
}

/* Common events. */
static inline void kt_switch(lp_ktrace *kt, uint32_t h, int64_t ts, uint32_t cpu, const char *pcomm, int32_t ptid,
                             int64_t pstate, const char *ncomm, int32_t ntid)
{
    kt_ev(kt, h, ts, cpu, LP_KEV_SCHED_SWITCH, ptid, ntid, pstate, 0, 0, ncomm, pcomm);
}
static inline void kt_wakeup(lp_ktrace *kt, uint32_t h, int64_t ts, uint32_t cpu, const char *comm, int32_t tid)
{
    kt_ev(kt, h, ts, cpu, LP_KEV_SCHED_WAKEUP, tid, 0, cpu, 0, 0, comm, NULL);
}
static inline void kt_simple(lp_ktrace *kt, uint32_t h, int64_t ts, uint32_t cpu, lp_kev_type type, int64_t a)
{
    kt_ev(kt, h, ts, cpu, type, -1, 0, a, 0, 0, NULL, NULL);
}

static inline void kt_release(lp_ktrace *kt)
{
    for (uint32_t i = 0; i < kt->nhosts; i++)
        free(kt->host[i].ev);
    free(kt->host);
    lp_strtab_release(&kt->strs);
}

/* The event of host h whose type is `type` and key is `key` (packets by message id). */
static inline uint64_t kt_find(const lp_ktrace *kt, uint32_t h, lp_kev_type type, uint64_t key)
{
    for (uint64_t i = 0; i < kt->host[h].nev; i++)
        if (kt->host[h].ev[i].type == type && kt->host[h].ev[i].key == key)
            return i;
    return UINT64_MAX;
}

/* ---- rendering a graph ------------------------------------------------------------- */

static inline const char *kg_state_code(const lp_kgraph *g, uint32_t v, char *buf, size_t n)
{
    switch (g->vstate[v]) {
    case LP_KS_RUNNING: return "R";
    case LP_KS_PREEMPTED: return "P";
    case LP_KS_WAIT_CPU: return "W";
    case LP_KS_UNKNOWN: return "U";
    case LP_KS_BLOCKED: snprintf(buf, n, "B/%s", lp_kreason_name(g->vreason[v])); return buf;
    default: return "-";
    }
}

/* "5 B/network 35 W 40": vertex times with the states of the edges between them. */
static inline const char *kg_timeline(const lp_kgraph *g, uint32_t w, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    char sb[32];
    for (uint32_t v = g->voff[w]; v < g->voff[w + 1] && len < n; v++) {
        len += (size_t)snprintf(buf + len, n - len, "%s%lld", v > g->voff[w] ? " " : "", (long long)g->vt[v]);
        if (v + 1 < g->voff[w + 1] && len < n)
            len += (size_t)snprintf(buf + len, n - len, " %s", kg_state_code(g, v, sb, sizeof sb));
    }
    return buf;
}

static inline uint32_t kg_worker(const lp_kgraph *g, const char *name)
{
    for (uint32_t w = 0; w < g->nworkers; w++)
        if (strcmp(lp_kgraph_worker_name(g, w), name) == 0)
            return w;
    return LP_NONE32;
}

/* Check a worker's timeline by name. */
#define CHECK_TIMELINE(g, name, expect)                                                              \
    do {                                                                                             \
        char tl_[1024];                                                                              \
        uint32_t w_ = kg_worker((g), (name));                                                        \
        CHECK(w_ != LP_NONE32);                                                                      \
        if (w_ != LP_NONE32)                                                                         \
            CHECK_STR(kg_timeline((g), w_, tl_, sizeof tl_), (expect));                              \
    } while (0)

/* Is there a link from worker a at ta to worker b at tb of this kind? */
static inline int kg_has_link(const lp_kgraph *g, const char *a, int64_t ta, const char *b, int64_t tb, lp_klink kind)
{
    uint32_t wa = kg_worker(g, a), wb = kg_worker(g, b);
    for (uint32_t l = 0; l < g->nlinks; l++)
        if (lp_kgraph_vworker(g, g->lfrom[l]) == wa && lp_kgraph_vworker(g, g->lto[l]) == wb &&
            g->vt[g->lfrom[l]] == ta && g->vt[g->lto[l]] == tb && g->lkind[l] == kind)
            return 1;
    return 0;
}

/* Two graphs equal column by column (strings by content). */
static inline int kg_same(const lp_kgraph *a, const lp_kgraph *b)
{
    if (a->nhosts != b->nhosts || a->nworkers != b->nworkers || a->nv != b->nv || a->nlinks != b->nlinks ||
        a->npk != b->npk || a->synced != b->synced)
        return 0;
    for (uint32_t w = 0; w < a->nworkers; w++)
        if (a->w[w].host != b->w[w].host || a->w[w].tid != b->w[w].tid || a->w[w].cpu != b->w[w].cpu ||
            strcmp(lp_kgraph_worker_name(a, w), lp_kgraph_worker_name(b, w)) != 0)
            return 0;
    return !memcmp(a->voff, b->voff, (a->nworkers + 1) * 4) && !memcmp(a->vt, b->vt, a->nv * 8) &&
           !memcmp(a->vstate, b->vstate, a->nv) && !memcmp(a->vreason, b->vreason, a->nv) &&
           !memcmp(a->vin, b->vin, a->nv * 4) && !memcmp(a->vout, b->vout, a->nv * 4) &&
           !memcmp(a->lfrom, b->lfrom, a->nlinks * 4) && !memcmp(a->lto, b->lto, a->nlinks * 4) &&
           !memcmp(a->lkind, b->lkind, a->nlinks) && !memcmp(a->pk, b->pk, a->npk * sizeof *a->pk) &&
           !memcmp(&a->st, &b->st, sizeof a->st);
}

/* ---- paths --------------------------------------------------------------------------- */

/* An expected element: kind, worker, from (links), start, end, state, reason, flags. */
typedef struct xel {
    int kind;
    uint32_t worker, from;
    int64_t start, end;
    int state, reason, flags;
} xel;

#define XS(w, a, b, st) {LP_KCP_STATE, (w), (w), (a), (b), (st), LP_KR_NONE, 0}
#define XSC(w, a, b, st) {LP_KCP_STATE, (w), (w), (a), (b), (st), LP_KR_NONE, LP_KCP_CLIPPED}
#define XB(w, a, b, r) {LP_KCP_STATE, (w), (w), (a), (b), LP_KS_BLOCKED, (r), 0}
#define XU(w, a, b, r) {LP_KCP_STATE, (w), (w), (a), (b), LP_KS_BLOCKED, (r), LP_KCP_UNEXPLAINED}
#define XL(f, w, a, b, k) {LP_KCP_LINK, (w), (f), (a), (b), LP_KS_NONE, (k), 0}
#define XLC(f, w, a, b, k) {LP_KCP_LINK, (w), (f), (a), (b), LP_KS_NONE, (k), LP_KCP_CLIPPED}
#define XG(w, a, b) {LP_KCP_GAP, (w), (w), (a), (b), LP_KS_UNKNOWN, LP_KR_NONE, 0}

static inline void kcp_print(const lp_kgraph *g, const lp_kcp *cp, FILE *f)
{
    for (size_t i = 0; i < cp->n; i++) {
        const lp_kcp_elem *e = &cp->e[i];
        const char *k = e->kind == LP_KCP_LINK ? "link" : e->kind == LP_KCP_GAP ? "gap" : "state";
        fprintf(f, "    %-5s %s%s%s [%lld, %lld] %s/%s%s%s\n", k, e->kind == LP_KCP_LINK ? lp_kgraph_worker_name(g, e->from) : "",
                e->kind == LP_KCP_LINK ? " -> " : "", lp_kgraph_worker_name(g, e->worker), (long long)e->start,
                (long long)e->end, e->kind == LP_KCP_LINK ? lp_klink_name(e->reason) : lp_kstate_name(e->state),
                e->kind == LP_KCP_LINK ? "" : lp_kreason_name(e->reason),
                e->flags & LP_KCP_CLIPPED ? " clipped" : "", e->flags & LP_KCP_UNEXPLAINED ? " unexplained" : "");
    }
}

/* Elements contiguous from start to end. */
static inline int kcp_contiguous(const lp_kcp *cp)
{
    int64_t cur = cp->start;
    for (size_t i = 0; i < cp->n; i++) {
        if (cp->e[i].start != cur || cp->e[i].end < cp->e[i].start)
            return 0;
        cur = cp->e[i].end;
    }
    return cur == cp->end;
}

static inline int kcp_matches(const lp_kcp *cp, const xel *x, size_t n)
{
    if (cp->n != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const lp_kcp_elem *e = &cp->e[i];
        if (e->kind != x[i].kind || e->worker != x[i].worker || e->from != x[i].from || e->start != x[i].start ||
            e->end != x[i].end || e->state != x[i].state || e->reason != x[i].reason || e->flags != x[i].flags)
            return 0;
    }
    return 1;
}

/* Compute and compare; print both on a mismatch. */
static inline void check_path(const char *what, const lp_kgraph *g, uint32_t w, int64_t s, int64_t e, lp_kcp_algo algo,
                              const xel *x, size_t n)
{
    lp_kcp cp;
    lp_error err;
    lp_status st = lp_kcp_compute(g, w, s, e, algo, &cp, &err);
    CHECK(st == LP_OK);
    if (st) {
        fprintf(stderr, "  %s: %s\n", what, err.msg);
        return;
    }
    int ok = kcp_matches(&cp, x, n);
    CHECK(ok);
    CHECK(kcp_contiguous(&cp));
    if (!ok) {
        fprintf(stderr, "  %s (%s): got\n", what, algo == LP_KCP_BOUNDED ? "bounded" : "unbounded");
        kcp_print(g, &cp, stderr);
        fprintf(stderr, "  expected %zu elements:\n", n);
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "    kind %d %u->%u [%lld, %lld] state %d reason %d flags %d\n", x[i].kind, x[i].from,
                    x[i].worker, (long long)x[i].start, (long long)x[i].end, x[i].state, x[i].reason, x[i].flags);
    }
    lp_kcp_release(&cp);
}

#define CHECK_PATH(what, g, w, algo, ...)                                                                   \
    do {                                                                                                   \
        const xel x_[] = {__VA_ARGS__};                                                                    \
        check_path((what), (g), (w), LP_KCP_LIFETIME_START, LP_KCP_LIFETIME_END, (algo), x_, sizeof x_ / sizeof x_[0]); \
    } while (0)

#endif
