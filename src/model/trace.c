/* trace.c: lp_trace accessors, lifetime, message endpoints and window projection
 * (SnailTrail Definitions 5-6). See trace.h for the invariants every trace holds. */
#include "longpole/model/trace.h"
#include "longpole/base/alloc.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Free a column unless it lies in the trace's mapping (lpt_bin.c maps .lptb files). */
static void col_free(const lp_trace *t, void *p)
{
    const char *c = p, *m = t->map;
    if (!m || c < m || c >= m + t->maplen)
        lp_free(p);
}

const char *lp_type_builtin_name(uint32_t ty)
{
    static const char *const names[LP_TYPE_NBUILTIN] = {
        "processing", "scheduling", "barrier", "buffer", "serialization",
        "deserialization", "waiting", "io", "unknown",
    };
    return ty < LP_TYPE_NBUILTIN ? names[ty] : NULL;
}

void lp_trace_free(lp_trace *t)
{
    if (!t)
        return;
    lp_strtab_release(&t->strs);
    void *cols[] = {t->type_name, t->wname, t->wattr, t->wfirst, t->astart, t->aend, t->atype,
                    t->aop,       t->aattr, t->aflags, t->msrc, t->mdst,  t->msend, t->mrecv,
                    t->mid,       t->mattr, t->mflags, t->apool};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        col_free(t, cols[i]);
    if (t->map)
        munmap(t->map, t->maplen);
    lp_free(t);
}

uint32_t lp_trace_act_worker(const lp_trace *t, uint64_t act)
{
    /* largest w with wfirst[w] <= act and a non-empty range */
    uint32_t lo = 0, hi = t->nworkers;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->wfirst[mid] <= act)
            lo = mid;
        else
            hi = mid;
    }
    while (lo + 1 < t->nworkers && t->wfirst[lo + 1] <= act)
        lo++;
    return lo;
}

uint32_t lp_trace_find_worker(const lp_trace *t, const char *name)
{
    lp_str s = lp_strtab_find(&t->strs, name, strlen(name));
    if (s == LP_STR_NONE)
        return LP_NONE32;
    for (uint32_t w = 0; w < t->nworkers; w++)
        if (t->wname[w] == s)
            return w;
    return LP_NONE32;
}

uint32_t lp_trace_find_type(const lp_trace *t, const char *name)
{
    lp_str s = lp_strtab_find(&t->strs, name, strlen(name));
    if (s == LP_STR_NONE)
        return LP_NONE32;
    for (uint32_t ty = 0; ty < t->ntypes; ty++)
        if (t->type_name[ty] == s)
            return ty;
    return LP_NONE32;
}

lp_str lp_trace_attr(const lp_trace *t, uint32_t list, const char *key)
{
    if (!list)
        return LP_STR_NONE;
    lp_str k = lp_strtab_find(&t->strs, key, strlen(key));
    if (k == LP_STR_NONE)
        return LP_STR_NONE;
    uint32_t n = t->apool[list];
    for (uint32_t i = 0; i < n; i++)
        if (t->apool[list + 1 + 2 * i] == k)
            return t->apool[list + 2 + 2 * i];
    return LP_STR_NONE;
}

const char *lp_trace_msgid(const lp_trace *t, uint64_t id, char *buf, size_t n)
{
    if (id == LP_MSGID_NONE) {
        if (n)
            buf[0] = '\0';
        return buf;
    }
    if (id & LP_MSGID_STR) {
        const char *s = lp_trace_str(t, (lp_str)(id & 0xFFFFFFFFu));
        size_t len = strlen(s);
        if (len >= n)
            len = n ? n - 1 : 0;
        memcpy(buf, s, len);
        if (n)
            buf[len] = '\0';
        return buf;
    }
    char tmp[24];
    size_t len = lp_fmt_u64(tmp, id);
    if (len >= n)
        len = n ? n - 1 : 0;
    memcpy(buf, tmp, len);
    if (n)
        buf[len] = '\0';
    return buf;
}

size_t lp_trace_footprint(const lp_trace *t)
{
    return lp_strtab_footprint(&t->strs) + (size_t)t->ntypes * 4 + (size_t)t->nworkers * 16 +
           (size_t)t->nacts * 27 + (size_t)t->nmsgs * 41 + (size_t)t->napool * 4;
}

/* ---- endpoints ----------------------------------------------------------------- */

typedef struct tkey {
    int64_t t;
    uint32_t m;
} tkey;

static int cmp_tkey(const void *pa, const void *pb)
{
    const tkey *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->m < b->m ? -1 : a->m > b->m;
}

void lp_endpoints_release(lp_endpoints *ep)
{
    lp_free(ep->off);
    lp_free(ep->msg);
    lp_free(ep->time);
    ep->off = NULL;
    ep->msg = NULL;
    ep->time = NULL;
}

lp_status lp_endpoints_build(const lp_trace *t, int which, lp_endpoints *ep, lp_error *err)
{
    int notime = (which & LP_EP_NOTIME) != 0;
    which &= LP_EP_RECV;
    const uint32_t *wk = which ? t->mdst : t->msrc;
    const int64_t *tm = which ? t->mrecv : t->msend;
    uint32_t nw = t->nworkers;
    uint64_t n = t->nmsgs;
    ep->off = lp_calloc((size_t)nw + 1, sizeof *ep->off);
    ep->msg = lp_malloc((n ? n : 1) * sizeof *ep->msg);
    ep->time = notime ? NULL : lp_malloc((n ? n : 1) * sizeof *ep->time);
    uint64_t *next = lp_malloc(((size_t)nw + 1) * sizeof *next);
    int64_t *lastt = lp_malloc(((size_t)nw + 1) * sizeof *lastt);
    uint8_t *unsorted = lp_calloc((size_t)nw + 1, 1);
    if (!ep->off || !ep->msg || (!notime && !ep->time) || !next || !lastt || !unsorted) {
        lp_free(next);
        lp_free(lastt);
        lp_free(unsorted);
        lp_endpoints_release(ep);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    /* one sequential pass: the counts, and whether each worker's messages come in time
     * order (the scatter below keeps message order, so then its list is sorted) */
    for (uint64_t m = 0; m < n; m++) {
        uint32_t w = wk[m];
        unsorted[w] |= ep->off[w + 1] && tm[m] < lastt[w];
        lastt[w] = tm[m];
        ep->off[w + 1]++;
    }
    lp_free(lastt);
    for (uint32_t w = 0; w < nw; w++)
        ep->off[w + 1] += ep->off[w];
    memcpy(next, ep->off, ((size_t)nw + 1) * sizeof *next);
    for (uint64_t m = 0; m < n; m++) {
        uint64_t k = next[wk[m]]++;
        ep->msg[k] = (uint32_t)m;
        if (!notime)
            ep->time[k] = tm[m];
    }
    lp_free(next);
    for (uint32_t w = 0; w < nw; w++) {
        uint64_t lo = ep->off[w], hi = ep->off[w + 1];
        if (!unsorted[w])
            continue;
        tkey *k = lp_malloc((hi - lo) * sizeof *k);
        if (!k) {
            lp_free(unsorted);
            lp_endpoints_release(ep);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        }
        for (uint64_t i = lo; i < hi; i++)
            k[i - lo] = (tkey){tm[ep->msg[i]], ep->msg[i]};
        qsort(k, hi - lo, sizeof *k, cmp_tkey);
        for (uint64_t i = lo; i < hi; i++) {
            ep->msg[i] = k[i - lo].m;
            if (!notime)
                ep->time[i] = k[i - lo].t;
        }
        lp_free(k);
    }
    lp_free(unsorted);
    return LP_OK;
}

/* ---- window projection ------------------------------------------------------------- */

#define DUP(dst, src, n)                                                     \
    do {                                                                     \
        (dst) = lp_malloc(((n) ? (n) : 1) * sizeof *(src));                  \
        if (!(dst))                                                          \
            goto oom;                                                        \
        if (n)                                                               \
            memcpy((dst), (src), (n) * sizeof *(src));                       \
    } while (0)

/* Does edge [a, b] take part in window [ts, te)? Positive-length overlap, or a
 * zero-length edge inside the half-open window. */
static inline int in_window(int64_t a, int64_t b, int64_t ts, int64_t te)
{
    if (a > b) {
        int64_t x = a;
        a = b;
        b = x;
    }
    return (a < te && b > ts) || (a == b && ts <= a && a < te);
}

static inline int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

lp_status lp_trace_window(const lp_trace *t, int64_t ts, int64_t te, lp_trace **out, lp_error *err)
{
    *out = NULL;
    if (te < ts)
        return lp_error_set(err, LP_ERR_ARG, "window end %lld is before its start %lld", (long long)te,
                            (long long)ts);
    lp_trace *w = lp_calloc(1, sizeof *w);
    if (!w)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (lp_strtab_copy(&w->strs, &t->strs))
        goto oom;
    w->ntypes = t->ntypes;
    DUP(w->type_name, t->type_name, t->ntypes);
    w->nworkers = t->nworkers;
    DUP(w->wname, t->wname, t->nworkers);
    DUP(w->wattr, t->wattr, t->nworkers);
    w->napool = t->napool;
    DUP(w->apool, t->apool, t->napool);
    w->wfirst = lp_calloc((size_t)t->nworkers + 1, sizeof *w->wfirst);
    if (!w->wfirst)
        goto oom;
    /* count, then copy */
    uint64_t na = 0, nm = 0;
    for (uint64_t i = 0; i < t->nacts; i++)
        na += in_window(t->astart[i], t->aend[i], ts, te);
    for (uint64_t m = 0; m < t->nmsgs; m++)
        nm += in_window(t->msend[m], t->mrecv[m], ts, te);
    size_t ca = na ? na : 1, cm = nm ? nm : 1;
    if (!(w->astart = lp_malloc(ca * 8)) || !(w->aend = lp_malloc(ca * 8)) || !(w->atype = lp_malloc(ca * 2)) ||
        !(w->aop = lp_malloc(ca * 4)) || !(w->aattr = lp_malloc(ca * 4)) || !(w->aflags = lp_malloc(ca)))
        goto oom;
    if (!(w->msrc = lp_malloc(cm * 4)) || !(w->mdst = lp_malloc(cm * 4)) || !(w->msend = lp_malloc(cm * 8)) ||
        !(w->mrecv = lp_malloc(cm * 8)) || !(w->mid = lp_malloc(cm * 8)) || !(w->mattr = lp_malloc(cm * 4)) ||
        !(w->mflags = lp_malloc(cm)))
        goto oom;
    uint64_t k = 0;
    for (uint32_t wk = 0; wk < t->nworkers; wk++) {
        w->wfirst[wk] = k;
        for (uint64_t i = t->wfirst[wk]; i < t->wfirst[wk + 1]; i++) {
            if (!in_window(t->astart[i], t->aend[i], ts, te))
                continue;
            w->astart[k] = clamp(t->astart[i], ts, te);
            w->aend[k] = clamp(t->aend[i], ts, te);
            w->atype[k] = t->atype[i];
            w->aop[k] = t->aop[i];
            w->aattr[k] = t->aattr[i];
            w->aflags[k] = t->aflags[i];
            if (t->aflags[i] & LP_ACT_GAP)
                w->ngaps++;
            k++;
        }
    }
    w->wfirst[t->nworkers] = k;
    w->nacts = k;
    k = 0;
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        if (!in_window(t->msend[m], t->mrecv[m], ts, te))
            continue;
        w->msrc[k] = t->msrc[m];
        w->mdst[k] = t->mdst[m];
        w->msend[k] = clamp(t->msend[m], ts, te);
        w->mrecv[k] = clamp(t->mrecv[m], ts, te);
        w->mid[k] = t->mid[m];
        w->mattr[k] = t->mattr[m];
        w->mflags[k] = t->mflags[m];
        if (t->mflags[m] & LP_MSG_SKEW)
            w->nskew++;
        k++;
    }
    w->nmsgs = k;
    w->tmin = ts;
    w->tmax = te;
    /* the extent is the projected content's, not the window's */
    {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (uint32_t wk = 0; wk < w->nworkers; wk++)
            if (w->wfirst[wk] < w->wfirst[wk + 1]) {
                lo = w->astart[w->wfirst[wk]] < lo ? w->astart[w->wfirst[wk]] : lo;
                hi = w->aend[w->wfirst[wk + 1] - 1] > hi ? w->aend[w->wfirst[wk + 1] - 1] : hi;
            }
        for (uint64_t m = 0; m < w->nmsgs; m++) {
            int64_t a = w->msend[m] < w->mrecv[m] ? w->msend[m] : w->mrecv[m];
            int64_t z = w->msend[m] < w->mrecv[m] ? w->mrecv[m] : w->msend[m];
            lo = a < lo ? a : lo;
            hi = z > hi ? z : hi;
        }
        if (lo <= hi) {
            w->tmin = lo;
            w->tmax = hi;
        }
    }
    *out = w;
    return LP_OK;
oom:
    lp_trace_free(w);
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
}
