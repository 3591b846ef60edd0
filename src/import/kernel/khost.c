/* khost.c: building one host of an lp_ktrace from the streams a reader fed (kint.h):
 *
 *  1. each stream in timestamp order: the events that arrived with a stamp below one
 *     already seen in their stream are counted (nreordered) and put in place by a
 *     stable natural merge sort (LTTng's scp traces step back at packet boundaries;
 *     babeltrace2's muxer stops there, this never drops an event);
 *  2. the streams merged by (timestamp, stream number) with a binary heap;
 *  3. (one pass with 4) the per-CPU context: ctx_tid of an event the reader could not attribute is the
 *     thread running on its CPU, from sched_switch (next_tid after, prev_tid before the
 *     first switch of that CPU) and LTTng statedump entries that say RUN on a CPU; one
 *     the tracer wrote is kept and marked LP_KEVF_CTX;
 *  4. the per-socket address table: inet_connect / inet_accept give a socket's
 *     addresses, inet_sock_clone copies the listening socket's to the new one (in time
 *     order, so a reused socket address gets its addresses of the time);
 *  5. (while merging) unused events not kept: when no event
 *     of the host carries the tracer's context, an LP_KEV_OTHER event that is not the
 *     first or last of its stream affects nothing but its CPU's latest stamp (the graph's
 *     estimate of when a lost switch happened on an idle CPU), so it is dropped and the
 *     next event of its CPU, if a switch, carries that stamp (LP_KEVF_PREV, member b).
 *     Counted (ndropped, and in nother); the stream edges keep each host's first and last
 *     stamps (pieces of one host are joined by them, kchunk.c). 30-40 % of LTTng kernel
 *     traces' events are of this kind (timer_start/cancel, sched_stat_*, kmem_*...).
 * Memory: the streams plus the merged array (2 x 64 bytes per event at the peak).
 */
#include "import/kernel/kint.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <stdlib.h>
#include <string.h>

void khb_init(khb *b, lp_ktrace *kt, lp_diags *diags, const char *file)
{
    memset(b, 0, sizeof *b);
    b->kt = kt;
    b->diags = diags;
    b->file = file;
    b->name = b->source = LP_STR_NONE;
}

void kspare_release(kspare *sp)
{
    for (uint32_t i = 0; i < sp->n; i++)
        lp_free(sp->ev[i]);
    sp->n = 0;
}

/* A stream's array to the spares (or freed). */
static void spare_put(kspare *sp, kstream *k)
{
    if (sp && k->ev && sp->n < KSPARE_MAX) {
        sp->ev[sp->n] = k->ev;
        sp->cap[sp->n++] = k->cap;
    } else
        lp_free(k->ev);
    k->ev = NULL;
    k->n = k->cap = 0;
}

/* The largest spare array for a new stream, if any. */
static void spare_get(kspare *sp, kstream *k)
{
    if (!sp || !sp->n)
        return;
    uint32_t best = 0;
    for (uint32_t i = 1; i < sp->n; i++)
        if (sp->cap[i] > sp->cap[best])
            best = i;
    k->ev = sp->ev[best];
    k->cap = sp->cap[best];
    sp->ev[best] = sp->ev[--sp->n];
    sp->cap[best] = sp->cap[sp->n];
}

void khb_release(khb *b)
{
    for (uint32_t i = 0; i < b->nst; i++)
        lp_free(b->st[i].ev);
    lp_free(b->st);
    b->st = NULL;
    b->nst = b->capst = 0;
}

lp_status khb_push(khb *b, uint32_t s, const lp_kev *e, lp_error *err)
{
    if (s >= b->nst) {
        size_t cap = b->capst;
        if (lp_grow_at(&b->st, &cap, (size_t)s + 1, sizeof *b->st))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory (streams)");
        b->capst = (uint32_t)cap;
        memset(b->st + b->nst, 0, ((size_t)s + 1 - b->nst) * sizeof *b->st);
        b->nst = s + 1;
    }
    kstream *k = &b->st[s];
    if (k->cap == 0)
        spare_get(b->spare, k);
    if (k->n == k->cap && lp_grow_at(&k->ev, &k->cap, k->n + 1, sizeof *k->ev))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory (%zu events)", k->n);
    if (k->n == 0) /* the order is counted here, while the event is at hand (no pass later) */
        k->mx = e->ts, k->nruns = 1;
    else {
        k->nruns += e->ts < k->ev[k->n - 1].ts;
        if (e->ts < k->mx)
            k->nout++;
        else
            k->mx = e->ts;
    }
    k->ev[k->n++] = *e;
    b->nctx += e->ctx_tid >= 0;
    if (e->cpu >= b->ncpus)
        b->ncpus = e->cpu + 1;
    return LP_OK;
}

lp_status khb_str(khb *b, const char *s, size_t n, lp_str *out, lp_error *err)
{
    if (lp_strtab_intern(&b->kt->strs, s, n, out)) {
        *out = LP_STR_NONE;
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory (strings)");
    }
    return LP_OK;
}

lp_status khb_name(khb *b, int kind, const char *s, size_t n, lp_str *out, lp_error *err)
{
    if (kind == KF_BASENAME)
        for (size_t j = n; j-- > 0;)
            if (s[j] == '/') {
                s += j + 1;
                n -= j + 1;
                break;
            }
    return khb_str(b, s, n, out, err);
}

/* ---- 1. one stream in time order ------------------------------------------------------- */

/* Merge the sorted runs a[lo..mid) and a[mid..hi) through tmp (stable). */
static void merge_runs(lp_kev *a, lp_kev *tmp, size_t lo, size_t mid, size_t hi)
{
    size_t i = lo, j = mid, o = lo;
    while (i < mid && j < hi)
        tmp[o++] = a[j].ts < a[i].ts ? a[j++] : a[i++];
    while (i < mid)
        tmp[o++] = a[i++];
    while (j < hi)
        tmp[o++] = a[j++];
    memcpy(a + lo, tmp + lo, (hi - lo) * sizeof *a);
}

/* Sort k->ev by ts (stable); khb_push counted its runs and out-of-order events. Natural
 * merge sort: a stream with r runs costs O(n log r). */
static lp_status stream_sort(kstream *k, lp_error *err)
{
    size_t nruns = k->nruns;
    if (nruns <= 1)
        return LP_OK;
    size_t *run = lp_malloc((nruns + 1) * sizeof *run);
    lp_kev *tmp = lp_malloc(k->n * sizeof *tmp);
    if (!run || !tmp) {
        lp_free(run);
        lp_free(tmp);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory (sorting %zu events)", k->n);
    }
    size_t r = 0;
    run[r++] = 0;
    for (size_t i = 1; i < k->n; i++)
        if (k->ev[i].ts < k->ev[i - 1].ts)
            run[r++] = i;
    run[r] = k->n;
    while (r > 1) { /* merge neighbouring runs pairwise: r halves each round */
        size_t w = 0;
        for (size_t i = 0; i < r; i += 2) {
            if (i + 1 < r)
                merge_runs(k->ev, tmp, run[i], run[i + 1], run[i + 2]);
            run[w++] = run[i];
        }
        run[w] = k->n;
        r = w;
    }
    lp_free(run);
    lp_free(tmp);
    return LP_OK;
}

/* ---- 5. unused events not kept (applied while merging) ------------------------------------ */

typedef struct kdrop {
    int on;          /* dropping applies to this host */
    uint32_t ncpus;
    int64_t *ts;     /* [ncpus] the stamp of the last dropped event, while pend */
    uint8_t *pend;   /* [ncpus] the CPU's latest event was dropped */
    uint64_t n;      /* events dropped */
} kdrop;

static lp_status drop_init(kdrop *d, const khb *b, lp_error *err)
{
    memset(d, 0, sizeof *d);
    if (b->keep_all || b->nctx)
        return LP_OK;
    d->ncpus = b->ncpus ? b->ncpus : 1;
    d->ts = lp_malloc(d->ncpus * sizeof *d->ts);
    d->pend = lp_calloc(d->ncpus, 1);
    if (!d->ts || !d->pend) {
        lp_free(d->ts);
        lp_free(d->pend);
        d->ts = NULL;
        d->pend = NULL;
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    d->on = 1;
    return LP_OK;
}

static void drop_release(kdrop *d)
{
    lp_free(d->ts);
    lp_free(d->pend);
}

/* Event e (in merged order; `edge`: first or last of its stream) is to be dropped: 1.
 * Otherwise 0, and a switch after dropped events of its CPU takes the last one's stamp. */
static inline int drop_step(kdrop *d, lp_kev *e, int edge)
{
    uint32_t c = e->cpu;
    if (e->type == LP_KEV_OTHER && !edge) {
        d->ts[c] = e->ts;
        d->pend[c] = 1;
        d->n++;
        return 1;
    }
    if (d->pend[c]) {
        d->pend[c] = 0;
        if (e->type == LP_KEV_SCHED_SWITCH) {
            e->b = d->ts[c];
            e->kfl |= LP_KEVF_PREV;
        }
    }
    return 0;
}

/* ---- 2. merging the streams ------------------------------------------------------------- */

typedef struct mhead {
    const kstream *s;
    size_t i;
    uint32_t id;
} mhead;

static int head_less(const mhead *a, const mhead *b)
{
    int64_t x = a->s->ev[a->i].ts, y = b->s->ev[b->i].ts;
    return x < y || (x == y && a->id < b->id);
}

static void sift_down(mhead *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && head_less(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && head_less(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        mhead t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Merged into a new array, unused events dropped (d). A host of one stream with nothing to
 * drop takes that stream's array; with events to drop it is copied too: its kept events
 * go to memory sized for them and the stream's array goes back to the spares, so the
 * next host writes into memory already touched instead of fresh pages. */
static lp_status merge_streams(khb *b, kdrop *d, lp_kev **out, uint64_t *nout, lp_error *err)
{
    size_t total = 0, live = 0;
    for (uint32_t s = 0; s < b->nst; s++) {
        total += b->st[s].n;
        live += b->st[s].n > 0;
    }
    if (live <= 1 && !d->on) { /* one stream: take its array */
        for (uint32_t s = 0; s < b->nst; s++)
            if (b->st[s].n) {
                *out = b->st[s].ev;
                *nout = b->st[s].n;
                b->st[s].ev = NULL;
                b->st[s].n = b->st[s].cap = 0;
                return LP_OK;
            }
        *out = NULL;
        *nout = 0;
        return LP_OK;
    }
    lp_kev *ev = lp_malloc((total ? total : 1) * sizeof *ev);
    mhead *h = lp_malloc((live ? live : 1) * sizeof *h);
    if (!ev || !h) {
        lp_free(ev);
        lp_free(h);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory (merging %zu events)", total);
    }
    size_t n = 0;
    for (uint32_t s = 0; s < b->nst; s++)
        if (b->st[s].n)
            h[n++] = (mhead){&b->st[s], 0, s};
    for (size_t i = n / 2; i-- > 0;)
        sift_down(h, n, i);
    size_t o = 0;
    while (n) {
        size_t i = h[0].i++;
        ev[o] = h[0].s->ev[i];
        o += !d->on || !drop_step(d, &ev[o], i == 0 || h[0].i == h[0].s->n);
        if (h[0].i == h[0].s->n)
            h[0] = h[--n];
        sift_down(h, n, 0);
    }
    lp_free(h);
    if (o < total && o) { /* give back what the dropped events left unused */
        lp_kev *t = lp_realloc(ev, o * sizeof *ev);
        ev = t ? t : ev;
    }
    for (uint32_t s = 0; s < b->nst; s++) /* the streams are no longer needed */
        spare_put(b->spare, &b->st[s]);
    *out = ev;
    *nout = o;
    return LP_OK;
}

/* ---- 3 and 4. per-CPU context and socket addresses, in one pass --------------------------- */

#define STATEDUMP_RUN 6 /* LTTng's statedump status LTTNG_RUN */

int khost_sock_cmp(const void *x, const void *y)
{
    const lp_ksock *a = x, *b = y;
    if (a->sk != b->sk)
        return a->sk < b->sk ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return 0;
}

/* The socket table's entry for one LP_KEV_SOCK_ADDR event (a clone copies its listening
 * socket's addresses, if known). */
static lp_status sock_event(lp_kev *e, lp_ksock **tab, size_t *cap, size_t *n, lp_hmap *latest, lp_error *err)
{
    if (e->kfl & KPAD_CLONE) {
        e->kfl &= (uint16_t)~KPAD_CLONE;
        uint64_t j;
        const lp_ksock *o = lp_hmap_get(latest, (uint64_t)e->a, &j) ? &(*tab)[j] : NULL;
        e->a = o ? o->saddr : 0;
        e->b = o ? o->daddr : 0;
        e->flags = o ? (uint32_t)o->sport << 16 | o->dport : 0;
        if (!o)
            return LP_OK; /* the listening socket's addresses are not known */
    }
    if (lp_grow_at(tab, cap, *n + 1, sizeof **tab))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory (sockets)");
    (*tab)[*n] = (lp_ksock){e->key, e->ts, (uint32_t)e->a, (uint32_t)e->b, (uint16_t)(e->flags >> 16),
                            (uint16_t)e->flags};
    lp_status st = lp_hmap_put(latest, e->key, *n, err);
    ++*n;
    return st;
}

/* One pass over the merged events (each pass over 64-byte events is a trip through
 * memory, so the three jobs share it): ctx_tid of every event, the socket table, the
 * count of LP_KEV_OTHER. An event left without a thread takes the prev_tid of the next
 * switch on its CPU: a second pass, backwards from the last such switch only (`fill`:
 * usually a short prefix of the host). */
static lp_status host_pass(lp_khost *h, lp_error *err)
{
    lp_kev *ev = h->ev;
    uint64_t n = h->nev, nother = 0, fill = 0; /* the backward pass covers [0, fill) */
    uint32_t ncpus = h->ncpus;
    int32_t *cur = lp_malloc((size_t)ncpus * sizeof *cur);
    uint8_t *waiting = lp_calloc(ncpus, 1); /* an event of this CPU waits for its next switch */
    size_t cap = 0, ns = 0;
    lp_ksock *tab = NULL;
    lp_hmap latest; /* sk -> index in tab of its latest entry */
    if (!cur || !waiting) {
        lp_free(cur);
        lp_free(waiting);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    lp_status st = lp_hmap_init(&latest, 0, err);
    for (uint32_t c = 0; c < ncpus; c++)
        cur[c] = -1;
    for (uint64_t i = 0; i < n && !st; i++) {
        lp_kev *e = &ev[i];
        if (e->type == LP_KEV_STATEDUMP_PROCESS && e->a == STATEDUMP_RUN && e->b >= 0 && e->b < ncpus &&
            cur[e->b] < 0)
            cur[e->b] = e->tid;
        if (e->ctx_tid >= 0)
            e->kfl |= LP_KEVF_CTX;
        else
            e->ctx_tid = e->type == LP_KEV_SCHED_SWITCH && cur[e->cpu] < 0 ? e->tid : cur[e->cpu];
        if (e->type == LP_KEV_SCHED_SWITCH) {
            if (waiting[e->cpu])
                waiting[e->cpu] = 0, fill = i + 1;
            cur[e->cpu] = e->tid2;
        } else {
            if (e->ctx_tid < 0)
                waiting[e->cpu] = 1;
            cur[e->cpu] = e->ctx_tid;
        }
        if (e->type == LP_KEV_SOCK_ADDR)
            st = sock_event(e, &tab, &cap, &ns, &latest, err);
        nother += e->type == LP_KEV_OTHER;
    }
    lp_hmap_release(&latest);
    lp_free(waiting);
    if (st) {
        lp_free(cur);
        lp_free(tab);
        return st;
    }
    for (uint32_t c = 0; c < ncpus; c++)
        cur[c] = -1;
    for (uint64_t i = fill; i-- > 0;) {
        lp_kev *e = &ev[i];
        if (e->type == LP_KEV_SCHED_SWITCH)
            cur[e->cpu] = e->tid;
        else if (e->ctx_tid < 0)
            e->ctx_tid = cur[e->cpu];
    }
    lp_free(cur);
    if (ns > 1)
        qsort(tab, ns, sizeof *tab, khost_sock_cmp); /* entries of one sk are already in time order */
    h->sock = tab;
    h->nsock = ns;
    h->nother += nother;
    return LP_OK;
}

const lp_ksock *lp_khost_sock(const lp_khost *h, uint64_t sk, int64_t ts)
{
    size_t lo = 0, hi = h->nsock; /* first entry with (sk, ts') > (sk, ts) */
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        const lp_ksock *s = &h->sock[m];
        if (s->sk < sk || (s->sk == sk && s->ts <= ts))
            lo = m + 1;
        else
            hi = m;
    }
    if (lo > 0 && h->sock[lo - 1].sk == sk)
        return &h->sock[lo - 1];
    if (lo < h->nsock && h->sock[lo].sk == sk)
        return &h->sock[lo];
    return NULL;
}

/* ---- the host --------------------------------------------------------------------------- */

lp_status khb_finish(khb *b, lp_error *err)
{
    lp_ktrace *kt = b->kt;
    lp_khost h;
    memset(&h, 0, sizeof h);
    lp_status st = LP_OK;
    kdrop d;
    for (uint32_t s = 0; s < b->nst && !st; s++) {
        st = stream_sort(&b->st[s], err);
        h.nreordered += b->st[s].nout;
    }
    if (!st)
        st = drop_init(&d, b, err);
    else
        memset(&d, 0, sizeof d);
    if (!st)
        st = merge_streams(b, &d, &h.ev, &h.nev, err);
    h.ncpus = b->ncpus ? b->ncpus : 1;
    if (!st)
        st = host_pass(&h, err);
    drop_release(&d);
    h.ndropped = d.n;
    h.nother += d.n;
    lp_khost *nh = st ? NULL : lp_reallocarray(kt->host, (size_t)kt->nhosts + 1, sizeof *kt->host);
    if (!st && !nh)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (st) {
        lp_free(h.ev);
        lp_free(h.sock);
        khb_release(b);
        return st;
    }
    h.name = b->name;
    h.source = b->source;
    h.nlost = b->nlost;
    h.nbad = b->nbad;
    h.nstreams = b->nst;
    h.bytes = b->bytes;
    h.nchunks = 1;
    kt->host = nh;
    kt->host[kt->nhosts++] = h;
    khb_release(b);
    return LP_OK;
}
