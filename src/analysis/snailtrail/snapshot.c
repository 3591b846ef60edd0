/* snapshot.c: PAG snapshots of a window cut straight from a trace's columns
 * (snapshot.h; SnailTrail §3.1, Definitions 5-6). The per-window checks of App. A.2
 * are in snapcheck.c.
 *
 * Building a snapshot is two passes over the workers:
 *  A. per worker, three sorted streams are merged exactly as lp_pag_build merges them
 *     (pag.c): the clamped activity boundaries of the worker's activity slice, and the
 *     clamped instants of its sends and receives in the window, plus an instant at ts
 *     (te) when a message in flight across that bound starts (ends) on the worker.
 *     Every distinct instant is a vertex; the send (receive) vertex of each slice entry
 *     is recorded as it is met.
 *  B. the incoming-message lists (CSR) are filled in vertex order: the receive-slice
 *     entries in time order, then the messages in flight at te at the worker's last
 *     vertex. A message's send vertex is the sender's first vertex (at ts) if it was sent
 *     before ts, else the vertex recorded for its entry in the sender's send slice
 *     (found in O(1) through src->sendpos).
 * The slices come from binary searches over per-worker sorted columns; the messages in
 * flight across a bound (the only ones no slice finds) come from the source's plan.
 * Invariant: with the same trace and window, the vertex times, the activity of every
 * worker edge and the multiset of message edges are those of
 * lp_pag_build(lp_trace_window(t, ts, te)).
 */
#include "longpole/analysis/snailtrail/snapshot.h"
#include "longpole/base/alloc.h"
#include "base/hugepage.h"

#include <stdlib.h>
#include <string.h>

/* ---- the source ------------------------------------------------------------------- */

void lp_snapsrc_release(lp_snapsrc *src)
{
    lp_free(src->snd.off); /* the per-message columns live in the arena */
    lp_free(src->rcv.off);
    lp_free(src->arena);
    lp_free(src->qt);
    lp_free(src->qoff);
    lp_free(src->qmsg);
    memset(src, 0, sizeof *src);
}

/* An endpoint sort key (for workers whose messages are not already in time order). */
typedef struct epkey {
    int64_t t;
    uint32_t m;
} epkey;

static int cmp_epkey(const void *pa, const void *pb)
{
    const epkey *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->m < b->m ? -1 : a->m > b->m;
}

/* Sort positions [lo, hi) of one side by (time, message). */
static int sort_side(lp_endpoints *ep, uint64_t lo, uint64_t hi)
{
    epkey *k = lp_malloc((hi - lo) * sizeof *k);
    if (!k)
        return -1;
    for (uint64_t i = lo; i < hi; i++)
        k[i - lo] = (epkey){ep->time[i], ep->msg[i]};
    qsort(k, hi - lo, sizeof *k, cmp_epkey);
    for (uint64_t i = lo; i < hi; i++) {
        ep->time[i] = k[i - lo].t;
        ep->msg[i] = k[i - lo].m;
    }
    lp_free(k);
    return 0;
}

lp_status lp_snapsrc_init(lp_snapsrc *src, const lp_trace *t, lp_error *err)
{
    memset(src, 0, sizeof *src);
    src->t = t;
    if (t->nmsgs >= UINT32_MAX || t->nacts >= UINT32_MAX)
        return lp_error_set(err, LP_ERR_LIMIT, "snapshots support fewer than 2^32-1 activities and messages");
    const uint64_t M = t->nmsgs;
    const uint32_t nw = t->nworkers;
    size_t nm = M ? M : 1, nwp = (size_t)nw + 1;
    /* The same endpoint lists as lp_endpoints_build (per worker, by time, ties by
     * message index) and the other-end columns beside them, in one pass over the
     * messages in index order: the reads are sequential, the writes go to 2 * workers
     * sequential streams. Workers whose messages are not in time order are sorted
     * afterwards and the columns refilled. The nine per-message columns share one
     * block, whose first touch is cheap with huge pages (hugepage.h). */
    src->snd.off = lp_calloc(nwp, sizeof *src->snd.off);
    src->rcv.off = lp_calloc(nwp, sizeof *src->rcv.off);
    size_t bytes = nm * (4 * sizeof(int64_t) + 5 * sizeof(uint32_t));
    src->arena = lp_malloc(bytes);
    uint64_t *ns = lp_malloc(nwp * sizeof *ns), *nr = lp_malloc(nwp * sizeof *nr);
    if (!src->snd.off || !src->rcv.off || !src->arena || !ns || !nr)
        goto oom;
    lp_hint_huge(src->arena, bytes);
    {
        int64_t *p64 = src->arena;
        src->snd.time = p64;
        src->snd_other = p64 + nm;
        src->rcv.time = p64 + 2 * nm;
        src->rcv_other = p64 + 3 * nm;
        uint32_t *p32 = (uint32_t *)(p64 + 4 * nm);
        src->snd.msg = p32;
        src->rcv.msg = p32 + nm;
        src->sendpos = p32 + 2 * nm;
        src->rcv_src = p32 + 3 * nm;
        src->rcv_spos = p32 + 4 * nm;
    }
    for (uint64_t m = 0; m < M; m++) {
        src->snd.off[t->msrc[m] + 1]++;
        src->rcv.off[t->mdst[m] + 1]++;
    }
    for (uint32_t w = 0; w < nw; w++) {
        src->snd.off[w + 1] += src->snd.off[w];
        src->rcv.off[w + 1] += src->rcv.off[w];
    }
    memcpy(ns, src->snd.off, nwp * sizeof *ns);
    memcpy(nr, src->rcv.off, nwp * sizeof *nr);
    for (uint64_t m = 0; m < M; m++) {
        uint32_t a = t->msrc[m];
        int64_t sd = t->msend[m], rc = t->mrecv[m];
        uint64_t p = ns[a]++, q = nr[t->mdst[m]]++;
        src->snd.msg[p] = (uint32_t)m;
        src->snd.time[p] = sd;
        src->snd_other[p] = rc;
        src->sendpos[m] = (uint32_t)p;
        src->rcv.msg[q] = (uint32_t)m;
        src->rcv.time[q] = rc;
        src->rcv_other[q] = sd;
        src->rcv_src[q] = a;
        src->rcv_spos[q] = (uint32_t)p;
    }
    int resorted = 0;
    for (int side = 0; side < 2; side++) {
        lp_endpoints *ep = side ? &src->rcv : &src->snd;
        for (uint32_t w = 0; w < nw; w++) {
            uint64_t lo = ep->off[w], hi = ep->off[w + 1];
            int sorted = 1;
            for (uint64_t i = lo + 1; i < hi && sorted; i++)
                sorted = ep->time[i - 1] <= ep->time[i];
            if (!sorted) {
                if (sort_side(ep, lo, hi))
                    goto oom;
                resorted = 1;
            }
        }
    }
    if (resorted) {
        for (uint64_t i = 0; i < M; i++) {
            uint32_t m = src->snd.msg[i];
            src->sendpos[m] = (uint32_t)i;
            src->snd_other[i] = t->mrecv[m];
        }
        for (uint64_t j = 0; j < M; j++) {
            uint32_t m = src->rcv.msg[j];
            src->rcv_other[j] = t->msend[m];
            src->rcv_src[j] = t->msrc[m];
            src->rcv_spos[j] = src->sendpos[m];
        }
    }
    lp_free(ns);
    lp_free(nr);
    return LP_OK;
oom:
    lp_free(ns);
    lp_free(nr);
    lp_snapsrc_release(src);
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory indexing the trace for snapshots");
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* First index i in [lo, hi) with a[i] > x (upper) or a[i] >= x (lower). */
static inline uint64_t upper_i64(const int64_t *a, uint64_t lo, uint64_t hi, int64_t x)
{
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (a[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline uint64_t lower_i64(const int64_t *a, uint64_t lo, uint64_t hi, int64_t x)
{
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

lp_status lp_snapsrc_plan(lp_snapsrc *src, const int64_t *times, size_t n, lp_error *err)
{
    const lp_trace *t = src->t;
    lp_free(src->qt);
    lp_free(src->qoff);
    lp_free(src->qmsg);
    src->qt = NULL;
    src->qoff = NULL;
    src->qmsg = NULL;
    src->nq = 0;
    int64_t *q = lp_malloc((n ? n : 1) * sizeof *q);
    uint64_t *off = lp_calloc(n + 2, sizeof *off);
    if (!q || !off)
        goto oom;
    if (n)
        memcpy(q, times, n * sizeof *q);
    qsort(q, n, sizeof *q, cmp_i64);
    size_t nq = 0;
    for (size_t i = 0; i < n; i++)
        if (nq == 0 || q[i] != q[nq - 1])
            q[nq++] = q[i];
    /* a difference array of the instants each message spans, then the CSR */
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        int64_t a = t->msend[m], b = t->mrecv[m];
        if (a > b) {
            int64_t x = a;
            a = b;
            b = x;
        }
        if (a == b)
            continue;
        uint64_t lo = upper_i64(q, 0, nq, a);
        if (lo == nq || q[lo] >= b) /* no planned instant inside: most messages */
            continue;
        uint64_t hi = lower_i64(q, lo + 1, nq, b);
        off[lo + 1]++;
        off[hi + 1]--;
    }
    for (size_t i = 1; i <= nq; i++)
        off[i] += off[i - 1];   /* off[i] = messages in flight at q[i-1] */
    off[0] = 0;
    for (size_t i = 1; i <= nq; i++)
        off[i] += off[i - 1];   /* prefix sums: the CSR offsets */
    uint64_t total = off[nq];
    uint32_t *msg = lp_malloc((total ? total : 1) * sizeof *msg);
    uint64_t *pos = lp_malloc((nq ? nq : 1) * sizeof *pos);
    if (!msg || !pos) {
        lp_free(msg);
        lp_free(pos);
        goto oom;
    }
    memcpy(pos, off, nq * sizeof *pos);
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        int64_t a = t->msend[m], b = t->mrecv[m];
        if (a > b) {
            int64_t x = a;
            a = b;
            b = x;
        }
        if (a == b)
            continue;
        uint64_t lo = upper_i64(q, 0, nq, a);
        if (lo == nq || q[lo] >= b)
            continue;
        uint64_t hi = lower_i64(q, lo + 1, nq, b);
        for (uint64_t i = lo; i < hi; i++)
            msg[pos[i]++] = (uint32_t)m;
    }
    lp_free(pos);
    src->qt = q;
    src->nq = nq;
    src->qoff = off;
    src->qmsg = msg;
    return LP_OK;
oom:
    lp_free(q);
    lp_free(off);
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory planning snapshot windows");
}

/* ---- buffers ------------------------------------------------------------------------ */

void lp_snapshot_init(lp_snapshot *s) { memset(s, 0, sizeof *s); }

void lp_snapshot_release(lp_snapshot *s)
{
    lp_free(s->voff);
    lp_free(s->vtime);
    lp_free(s->vact);
    lp_free(s->vin);
    lp_free(s->in);
    lp_free(s->w_alo);
    lp_free(s->w_ahi);
    lp_free(s->w_slo);
    lp_free(s->w_shi);
    lp_free(s->w_rlo);
    lp_free(s->w_rhi);
    lp_free(s->w_sbase);
    lp_free(s->w_tail);
    lp_free(s->w_flag);
    lp_free(s->w_nwait);
    lp_free(s->w_tail0);
    lp_free(s->svtx);
    lp_free(s->rvtx);
    lp_free(s->if0);
    lp_free(s->if1);
    lp_free(s->tail);
    memset(s, 0, sizeof *s);
}

/* Make *p hold at least `need` elements of `elem` bytes (contents not needed). */
static int ensure(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap && *p)
        return 0;
    size_t n = need + need / 4 + 16;
    void *q = lp_reallocarray(*p, n, elem); /* large blocks grow in place (mremap) */
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    lp_hint_huge(q, n * elem);
    return 0;
}

static lp_status grow_workers(lp_snapshot *s, uint32_t nw)
{
    size_t need = (size_t)nw + 1;
    if (need <= s->cap_w && s->voff)
        return LP_OK;
    size_t cap = 0;
#define W(field)                                                         \
    do {                                                                 \
        cap = s->cap_w;                                                  \
        if (ensure((void **)&s->field, &cap, need, sizeof *s->field))    \
            return LP_ERR_NOMEM;                                         \
    } while (0)
    W(voff);
    W(w_alo);
    W(w_ahi);
    W(w_slo);
    W(w_shi);
    W(w_rlo);
    W(w_rhi);
    W(w_sbase);
    W(w_tail);
    W(w_flag);
    W(w_nwait);
    W(w_tail0);
#undef W
    s->cap_w = cap;
    return LP_OK;
}

/* The messages in flight at instant q: planned, or found by a scan into *buf. */
static lp_status inflight(const lp_snapsrc *src, int64_t q, uint32_t **buf, size_t *cap, const uint32_t **out,
                          size_t *n)
{
    if (src->nq) {
        uint64_t i = lower_i64(src->qt, 0, src->nq, q);
        if (i < src->nq && src->qt[i] == q) {
            *out = src->qmsg + src->qoff[i];
            *n = (size_t)(src->qoff[i + 1] - src->qoff[i]);
            return LP_OK;
        }
    }
    const lp_trace *t = src->t;
    size_t k = 0;
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        int64_t a = t->msend[m], b = t->mrecv[m];
        if (a > b) {
            int64_t x = a;
            a = b;
            b = x;
        }
        if (a < q && q < b) {
            if (k == *cap || !*buf) {
                void *p = *buf;
                if (lp_grow(&p, cap, k + 1, sizeof **buf))
                    return LP_ERR_NOMEM;
                *buf = p;
            }
            (*buf)[k++] = (uint32_t)m;
        }
    }
    *out = *buf;
    *n = k;
    return LP_OK;
}

/* ---- building ---------------------------------------------------------------------- */

/* The message-instant stream of one worker: an optional instant at ts, the send and
 * receive slices (entries outside the window skipped), an optional instant at te. The
 * next instant is kept in `next` (valid when `has`), so the merge loop compares one
 * value per vertex. */
typedef struct mstream {
    const lp_trace *t;
    int64_t ts, te;
    int pre, post;
    const int64_t *stime, *sother; uint64_t sj, sn; /* send slice: times, other ends */
    const int64_t *rtime, *rother; uint64_t rj, rn; /* receive slice */
    uint32_t *svtx, *rvtx;  /* where the entries' vertices go (indexed like the slices) */
    int64_t ns, nr;         /* clamped time of the current entry of each slice */
    int hs, hr;             /* a current entry exists */
    int has;                /* a next instant exists */
    int64_t next;           /* the next instant */
} mstream;

static inline int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Advance a slice to its next entry inside the window, marking skipped ones. */
static inline void s_next(mstream *q)
{
    while (q->sj < q->sn) {
        if (lp_snap_overlaps(q->stime[q->sj], q->sother[q->sj], q->ts, q->te)) {
            q->ns = clamp64(q->stime[q->sj], q->ts, q->te);
            q->hs = 1;
            return;
        }
        q->svtx[q->sj++] = LP_NONE32;
    }
    q->hs = 0;
}

static inline void r_next(mstream *q)
{
    while (q->rj < q->rn) {
        if (lp_snap_overlaps(q->rother[q->rj], q->rtime[q->rj], q->ts, q->te)) {
            q->nr = clamp64(q->rtime[q->rj], q->ts, q->te);
            q->hr = 1;
            return;
        }
        q->rvtx[q->rj++] = LP_NONE32;
    }
    q->hr = 0;
}

static inline void m_refresh(mstream *q)
{
    if (q->pre) {
        q->next = q->ts;
        q->has = 1;
        return;
    }
    q->has = 0;
    if (q->hs) {
        q->next = q->ns;
        q->has = 1;
    }
    if (q->hr && (!q->has || q->nr < q->next)) {
        q->next = q->nr;
        q->has = 1;
    }
    if (!q->has && q->post) {
        q->next = q->te;
        q->has = 1;
    }
}

/* Give vertex v (at instant `at` == q->next) to every message instant equal to it. */
static void m_assign(mstream *q, int64_t at, uint32_t v)
{
    if (q->pre && q->ts == at)
        q->pre = 0;
    while (q->hs && q->ns == at) {
        q->svtx[q->sj++] = v;
        s_next(q);
    }
    while (q->hr && q->nr == at) {
        q->rvtx[q->rj++] = v;
        r_next(q);
    }
    if (q->post && !q->hs && !q->hr && q->te == at)
        q->post = 0;
    m_refresh(q);
}

/* Phase A for worker w: its vertices from `base` on; returns their number. Also counts
 * the worker's waiting edges, worker edges and logged events. */
static __attribute__((noinline)) uint64_t worker_vertices(lp_snapshot *s, const lp_snapsrc *src, uint32_t w,
                                                          uint64_t base, uint64_t *nwait, uint64_t *nwe, uint64_t *nev)
{
    const lp_trace *t = src->t;
    const int64_t ts = s->ts, te = s->te;
    int64_t *vtime = s->vtime + base;
    uint32_t *vact = s->vact + base;
    mstream q;
    q.t = t;
    q.ts = ts;
    q.te = te;
    q.pre = s->w_flag[w] & 1;
    q.post = (s->w_flag[w] & 2) != 0;
    q.stime = src->snd.time + s->w_slo[w];
    q.sother = src->snd_other + s->w_slo[w];
    q.sj = 0;
    q.sn = s->w_shi[w] - s->w_slo[w];
    q.rtime = src->rcv.time + s->w_rlo[w];
    q.rother = src->rcv_other + s->w_rlo[w];
    q.rj = 0;
    q.rn = s->w_rhi[w] - s->w_rlo[w];
    q.svtx = s->svtx + s->w_sbase[w];
    q.rvtx = s->rvtx;               /* advanced by the caller between workers */
    s_next(&q);
    r_next(&q);
    m_refresh(&q);
    uint64_t n = 0, we = 0, ev = 0, nwt = 0;
    int64_t last = 0;
#define EMIT(tv, act)                                                   \
    do {                                                                \
        if (n == 0 || (tv) != last) {                                   \
            vtime[n] = (tv);                                            \
            vact[n] = n ? (act) : LP_NONE32;                            \
            we += n && (act) != LP_NONE32;                              \
            n++;                                                        \
            last = (tv);                                                \
        }                                                               \
    } while (0)
#define ASSIGN()                                                        \
    do {                                                                \
        if (q.has && q.next == last)                                    \
            m_assign(&q, last, (uint32_t)(base + n - 1));               \
    } while (0)
    const uint16_t *atype = t->atype;
    const uint8_t *aflags = t->aflags;
    /* events of activities that end at ts (not in the window) */
    for (uint64_t i = s->w_tail0[w]; i < s->w_alo[w]; i++)
        ev += !(aflags[i] & LP_ACT_GAP) && t->aend[i] < te;
    for (uint64_t i = s->w_alo[w]; i < s->w_ahi[w]; i++) {
        int64_t a = t->astart[i], b = t->aend[i];
        if (!(aflags[i] & LP_ACT_GAP))
            ev += (a >= ts) + (b < te);
        int64_t s0 = a < ts ? ts : a, e0 = b > te ? te : b;
        while (q.has && q.next < s0) {
            EMIT(q.next, LP_NONE32);
            m_assign(&q, last, (uint32_t)(base + n - 1));
        }
        EMIT(s0, LP_NONE32);
        ASSIGN();
        uint64_t before = n;
        while (q.has && q.next < e0) {
            EMIT(q.next, (uint32_t)i);
            m_assign(&q, last, (uint32_t)(base + n - 1));
        }
        EMIT(e0, (uint32_t)i);
        ASSIGN();
        if (atype[i] == LP_TYPE_WAITING)
            nwt += n - before;
    }
    while (q.has) {
        EMIT(q.next, LP_NONE32);
        m_assign(&q, last, (uint32_t)(base + n - 1));
    }
#undef EMIT
#undef ASSIGN
    *nwait += nwt;
    *nwe += we;
    *nev += ev;
    return n;
}

/* Messages in flight across the bounds: the workers needing a vertex at ts (w_flag 1)
 * or te (2), the normal messages in flight at te grouped by receiver (tail, w_tail),
 * and the messages counted so far (*nmsgs). */
static int snap_inflight(lp_snapshot *s, const lp_snapsrc *src, int64_t ts, int64_t te, uint64_t *nmsgs,
                         uint64_t *ntailp)
{
    const lp_trace *t = src->t;
    uint32_t nw = t->nworkers;
    const uint32_t *f0, *f1;
    size_t nf0, nf1;
    if (inflight(src, ts, &s->if0, &s->cap_if0, &f0, &nf0) || inflight(src, te, &s->if1, &s->cap_if1, &f1, &nf1))
        return -1;
    memset(s->w_flag, 0, nw);
    memset(s->w_tail, 0, ((size_t)nw + 1) * sizeof *s->w_tail);
    uint64_t ntail = 0;
    for (size_t k = 0; k < nf0; k++) {
        uint32_t m = f0[k];
        if (t->msend[m] < t->mrecv[m]) {
            s->w_flag[t->msrc[m]] |= 1; /* sent before ts: the sender's vertex at ts */
            (*nmsgs)++;
        } else {
            s->w_flag[t->mdst[m]] |= 1; /* skewed, received before ts */
        }
    }
    for (size_t k = 0; k < nf1; k++) {
        uint32_t m = f1[k];
        if (t->msend[m] < t->mrecv[m]) {
            s->w_flag[t->mdst[m]] |= 2; /* received after te: the receiver's vertex at te */
            s->w_tail[t->mdst[m] + 1]++;
            ntail++;
        } else {
            s->w_flag[t->msrc[m]] |= 2; /* skewed, sent after te */
            (*nmsgs)++;
        }
    }
    if (ensure((void **)&s->tail, &s->cap_tail, ntail + 1, sizeof *s->tail))
        return -1;
    for (uint32_t w = 0; w < nw; w++)
        s->w_tail[w + 1] += s->w_tail[w];
    /* fill by receiver; w_tail[w] is advanced to w's end and restored after */
    for (size_t k = 0; k < nf1; k++) {
        uint32_t m = f1[k];
        if (t->msend[m] < t->mrecv[m])
            s->tail[s->w_tail[t->mdst[m]]++] = m;
    }
    for (uint32_t w = nw; w-- > 0;)
        s->w_tail[w + 1] = s->w_tail[w];
    s->w_tail[0] = 0;
    *ntailp = ntail;
    return 0;
}

/* Each worker's slices of activities, sends and receives in the window, and the
 * worst-case sizes: vertices, send and receive entries. */
static void snap_slices(lp_snapshot *s, const lp_snapsrc *src, int64_t ts, int64_t te, uint64_t *vmax, uint64_t *smax,
                        uint64_t *rmax)
{
    const lp_trace *t = src->t;
    *vmax = *smax = *rmax = 0;
    for (uint32_t w = 0; w < t->nworkers; w++) {
        uint64_t lo = t->wfirst[w], hi = t->wfirst[w + 1];
        /* activities: the first ending after ts (or zero-length at ts), up to the first
         * starting at or after te; ends are non-decreasing within a worker */
        uint64_t alo = lower_i64(t->aend, lo, hi, ts);
        s->w_tail0[w] = alo; /* activities ending at ts are not in the window, their end event is */
        while (alo < hi && t->aend[alo] == ts && t->astart[alo] < ts)
            alo++;
        uint64_t ahi = lower_i64(t->astart, alo, hi, te);
        s->w_alo[w] = alo;
        s->w_ahi[w] = ahi < alo ? alo : ahi;
        uint64_t so = src->snd.off[w], se = src->snd.off[w + 1];
        s->w_slo[w] = lower_i64(src->snd.time, so, se, ts);
        s->w_shi[w] = upper_i64(src->snd.time, s->w_slo[w], se, te);
        uint64_t ro = src->rcv.off[w], re = src->rcv.off[w + 1];
        s->w_rlo[w] = lower_i64(src->rcv.time, ro, re, ts);
        s->w_rhi[w] = upper_i64(src->rcv.time, s->w_rlo[w], re, te);
        s->w_sbase[w] = *smax;
        *smax += s->w_shi[w] - s->w_slo[w];
        *rmax += s->w_rhi[w] - s->w_rlo[w];
        *vmax += 2 * (s->w_ahi[w] - s->w_alo[w]) + (s->w_shi[w] - s->w_slo[w]) + (s->w_rhi[w] - s->w_rlo[w]) + 2;
    }
}

/* The graph's arrays for the worst case. */
static int snap_reserve(lp_snapshot *s, uint64_t vmax, uint64_t smax, uint64_t rmax, uint64_t ntail)
{
    size_t cv = s->cap_v;
    if (ensure((void **)&s->vtime, &cv, vmax + 1, sizeof *s->vtime))
        return -1;
    cv = s->cap_v;
    if (ensure((void **)&s->vact, &cv, vmax + 1, sizeof *s->vact))
        return -1;
    cv = s->cap_v;
    if (ensure((void **)&s->vin, &cv, vmax + 1, sizeof *s->vin))
        return -1;
    s->cap_v = cv;
    if (ensure((void **)&s->svtx, &s->cap_s, smax + 1, sizeof *s->svtx) ||
        ensure((void **)&s->rvtx, &s->cap_r, rmax + 1, sizeof *s->rvtx) ||
        ensure((void **)&s->in, &s->cap_in, rmax + ntail + 1, sizeof *s->in))
        return -1;
    return 0;
}

/* Phase B: incoming messages by receive vertex (those received in the window, then
 * those in flight at te, at the receiver's last vertex). */
static void snap_edges(lp_snapshot *s, const lp_snapsrc *src, int64_t ts)
{
    const lp_trace *t = src->t;
    uint64_t k = 0, vcur = 0, rbase = 0;
    for (uint32_t w = 0; w < t->nworkers; w++) {
        uint64_t r0 = s->w_rlo[w], rn = s->w_rhi[w] - r0;
        const uint32_t *rm = src->rcv.msg + r0, *rsrc = src->rcv_src + r0, *rspos = src->rcv_spos + r0;
        const int64_t *rt = src->rcv.time + r0, *ro = src->rcv_other + r0;
        for (uint64_t j = 0; j < rn; j++) {
            uint32_t v = s->rvtx[rbase + j];
            if (v == LP_NONE32 || rt[j] < ro[j]) /* outside the window, or skewed: no edge */
                continue;
            while (vcur <= v)
                s->vin[vcur++] = (uint32_t)k;
            uint32_t x = rsrc[j];
            int64_t st = ro[j];
            uint32_t sv = st < ts ? (uint32_t)s->voff[x] : s->svtx[s->w_sbase[x] + rspos[j] - s->w_slo[x]];
            s->in[k++] = (lp_snapin){st < ts ? ts : st, sv, rm[j]};
        }
        rbase += rn;
        if (s->w_tail[w] < s->w_tail[w + 1]) {
            uint64_t v = s->voff[w + 1] - 1;
            while (vcur <= v)
                s->vin[vcur++] = (uint32_t)k;
            for (uint32_t j = s->w_tail[w]; j < s->w_tail[w + 1]; j++) {
                uint32_t m = s->tail[j], x = t->msrc[m];
                int64_t st = t->msend[m];
                uint32_t sv = st < ts ? (uint32_t)s->voff[x]
                                      : s->svtx[s->w_sbase[x] + src->sendpos[m] - s->w_slo[x]];
                s->in[k++] = (lp_snapin){st < ts ? ts : st, sv, m};
            }
        }
    }
    while (vcur <= s->nv)
        s->vin[vcur++] = (uint32_t)k;
    s->nin = k;
}

lp_status lp_snapshot_build(lp_snapshot *s, const lp_snapsrc *src, int64_t ts, int64_t te, lp_error *err)
{
    const lp_trace *t = src->t;
    if (te < ts)
        return lp_error_set(err, LP_ERR_ARG, "window end %lld is before its start %lld", (long long)te, (long long)ts);
    s->t = t;
    s->ts = ts;
    s->te = te;
    s->nworkers = t->nworkers;
    s->nv = s->nin = s->nwedges = s->nacts = s->nmsgs = s->nevents = 0;
    s->nactive = 0;
    s->t0 = s->t1 = 0;
    uint64_t nmsgs = 0, ntail = 0, vmax, smax, rmax;
    if (grow_workers(s, t->nworkers) || snap_inflight(s, src, ts, te, &nmsgs, &ntail))
        goto oom;
    snap_slices(s, src, ts, te, &vmax, &smax, &rmax);
    if (vmax >= UINT32_MAX || rmax + ntail >= UINT32_MAX)
        return lp_error_set(err, LP_ERR_LIMIT, "window [%lld, %lld] has more than 2^32-2 vertices or edges",
                            (long long)ts, (long long)te);
    if (snap_reserve(s, vmax, smax, rmax, ntail))
        goto oom;
    /* phase A: every worker's vertices, the extent, and the counts (kept here: the
     * vertex loop of worker_vertices is compiled best inlined into this function) */
    uint32_t nw = t->nworkers;
    uint64_t nv = 0, rbase = 0, nwe = 0, nev = 0;
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    for (uint32_t w = 0; w < nw; w++) {
        s->voff[w] = nv;
        uint32_t *rv = s->rvtx;
        s->rvtx = rv + rbase;
        uint64_t nwait = 0;
        uint64_t n = worker_vertices(s, src, w, nv, &nwait, &nwe, &nev);
        s->rvtx = rv;
        s->w_nwait[w] = nwait;
        rbase += s->w_rhi[w] - s->w_rlo[w];
        if (n) {
            s->nactive++;
            t0 = s->vtime[nv] < t0 ? s->vtime[nv] : t0;
            t1 = s->vtime[nv + n - 1] > t1 ? s->vtime[nv + n - 1] : t1;
        }
        nv += n;
        /* messages (counted by their sender) and their logged events in [ts, te) */
        s->nacts += s->w_ahi[w] - s->w_alo[w];
        const uint32_t *sv = s->svtx + s->w_sbase[w];
        for (uint64_t j = 0, sn = s->w_shi[w] - s->w_slo[w]; j < sn; j++)
            nmsgs += sv[j] != LP_NONE32;
        /* sends and receives at te are the only slice entries outside [ts, te) */
        nev += upper_i64(src->snd.time, s->w_slo[w], s->w_shi[w], te - (te > INT64_MIN)) - s->w_slo[w];
        nev += upper_i64(src->rcv.time, s->w_rlo[w], s->w_rhi[w], te - (te > INT64_MIN)) - s->w_rlo[w];
    }
    s->voff[nw] = nv;
    s->nv = nv;
    s->nmsgs = nmsgs;
    s->nwedges = nwe;
    s->nevents = nev;
    if (nv) {
        s->t0 = t0;
        s->t1 = t1;
    }
    snap_edges(s, src, ts);
    return LP_OK;
oom:
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory building the snapshot of [%lld, %lld]", (long long)ts,
                        (long long)te);
}

uint32_t lp_snapshot_vworker(const lp_snapshot *s, uint64_t v)
{
    uint32_t lo = 0, hi = s->nworkers;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->voff[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    while (lo + 1 < s->nworkers && s->voff[lo + 1] <= v)
        lo++;
    return lo;
}
