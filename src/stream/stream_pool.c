/* stream_pool.c: closed windows of a stream (stream.h) built and analysed on a pool of
 * threads, results delivered in window order on the feeding thread.
 *
 * A window's job: order its messages as a reader of the replay file would make them,
 * make its lp_trace straight from the records (stream_trace.c; or through lp_builder,
 * the naive twin, with lp_stream_opts.naive_build), registering the names known at
 * closing in id order (so worker, type and operator ids agree across windows), index
 * the trace (lp_snapsrc, no plan: the in-flight sets come from one scan of its few
 * messages), make the operator keys with the stream's parallelism so far (each
 * operator's workers seen since the start, the closest the stream can come to
 * `summary`'s whole-trace count),
 * and run lp_window_analyze. The windows are jobs of a queue of the thread pool
 * (base/pool.h) whose slots bound the windows in flight: 2 * threads + 2; the feeding
 * thread waits (delivering) when it is full, so a slow analysis slows the reading and
 * TCP pushes back on the senders. Results are delivered in window order on the feeding
 * thread; after a failure nothing more is delivered, and the slots are cleared when the
 * stream is freed.
 */
#include "stream_int.h"

#include <stdlib.h>
#include <string.h>

static void slot_clear(sslot *sl)
{
    if (sl->keys) {
        lp_sumkeys_release(sl->keys);
        lp_free(sl->keys);
        sl->keys = NULL;
    }
    if (sl->src) {
        lp_snapsrc_release(sl->src);
        lp_free(sl->src);
        sl->src = NULL;
    }
    lp_trace_free(sl->t);
    sl->t = NULL;
}

static int cmp_mkey(const void *pa, const void *pb)
{
    const mkey *a = pa, *b = pb;
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->w != b->w)
        return a->w < b->w ? -1 : 1;
    if (a->seq != b->seq)
        return (int32_t)(a->seq - b->seq) < 0 ? -1 : 1; /* arrival numbers wrap */
    return a->i < b->i ? -1 : a->i > b->i;
}

/* Build and analyse one window (any thread). */
/* The window's trace through lp_builder: the naive twin of lp_stream_build_trace
 * (lp_stream_opts.naive_build), compared with it by the tests. */
static lp_status build_naive(sslot *sl, spool_ws *pw, size_t nmsg, lp_error *err)
{
    const snames *nm = sl->nm;
    lp_diags ds;
    lp_diags_init(&ds, 0);
    lp_builder *b = NULL;
    lp_status st = lp_builder_new(&b, &ds, NULL, err);
    for (uint32_t w = 0; !st && w < nm->nw; w++) {
        uint32_t id;
        st = lp_builder_worker(b, nm->wname[w], nm->wlen[w], &id, err);
        if (!st && id != w)
            st = lp_error_set(err, LP_ERR_ARG, "stream: worker ids disagree (a bug)");
    }
    for (uint32_t t = LP_TYPE_NBUILTIN; !st && t < nm->nt; t++) {
        uint16_t id;
        st = lp_builder_type(b, nm->tname[t], nm->tlen[t], &id, err);
        if (!st && id != t)
            st = lp_error_set(err, LP_ERR_ARG, "stream: type ids disagree (a bug)");
    }
    if (!st && nm->nops > pw->capop) {
        void *q = pw->opstr;
        if (lp_grow(&q, &pw->capop, nm->nops, sizeof(lp_str)))
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        else
            pw->opstr = q;
    }
    for (uint32_t o = 0; !st && o < nm->nops; o++)
        if (lp_strtab_intern(lp_builder_strtab(b), nm->oname[o], nm->olen[o], &pw->opstr[o]))
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < sl->nrecs; i++) {
        const srec *r = &sl->recs[i];
        if (r->kind == SREC_ACT)
            st = lp_builder_activity(b, r->w, r->a, r->b, r->type, r->op == LP_NONE32 ? LP_STR_NONE : pw->opstr[r->op],
                                     0, 0, err);
    }
    for (size_t j = 0; !st && j < nmsg; j++) {
        const srec *r = &sl->recs[pw->mk[j].i];
        st = lp_builder_message(b, r->w, r->a, r->peer, r->b, LP_MSGID_NONE, 0, 0, err);
    }
    if (st) {
        lp_builder_free(b);
        lp_diags_release(&ds);
        return st;
    }
    st = lp_builder_finish(b, &sl->t, err);
    sl->wi.build_errors = ds.nerrors;
    lp_diags_release(&ds);
    return st;
}

/* Sort message keys: insertion sort while the keys are nearly in order (one connection,
 * messages mostly by time), else a merge sort with the comparison inlined (glibc's qsort
 * calls it through a pointer: a tenth of a window's work). Stable either way; the keys
 * are distinct anyway (i). Returns -1 when the merge sort's buffer cannot be had. */
static int sort_mkeys(mkey *a, size_t n)
{
    size_t budget = 8 * n + 64;
    for (size_t i = 1; i < n; i++) {
        mkey x = a[i];
        size_t j = i;
        while (j > 0 && cmp_mkey(&a[j - 1], &x) > 0) {
            a[j] = a[j - 1];
            j--;
            if (!--budget) {
                a[j] = x;
                goto merge;
            }
        }
        a[j] = x;
    }
    return 0;
merge:;
    mkey *tmp = lp_malloc(n * sizeof *tmp);
    if (!tmp)
        return -1;
    mkey *src = a, *dst = tmp;
    for (size_t lo = 0; lo < n; lo += 16) { /* runs of 16 by insertion */
        size_t hi = lo + 16 < n ? lo + 16 : n;
        for (size_t i = lo + 1; i < hi; i++) {
            mkey x = a[i];
            size_t j = i;
            while (j > lo && cmp_mkey(&a[j - 1], &x) > 0) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
    }
    for (size_t w = 16; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = cmp_mkey(&src[j], &src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        mkey *x = src;
        src = dst;
        dst = x;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    lp_free(tmp);
    return 0;
}

/* Build and analyse one window (any thread). */
static lp_status process(lp_stream *s, sslot *sl, spool_ws *pw, lp_error *err)
{
    const snames *nm = sl->nm;
    lp_status st = LP_OK;
    /* messages in the order a reader of the same records in stream order makes them
     * (`summary` on a replay file): whole messages by send, sender and arrival, then the
     * ones made of halves by receive, receiver and arrival; then the ones in flight. The
     * order breaks ties in the analysis, so it must not depend on how connections
     * interleaved. */
    size_t nmsg = 0;
    for (size_t i = 0; i < sl->nrecs; i++)
        nmsg += sl->recs[i].kind == SREC_MSG;
    if (nmsg > pw->capmk) {
        void *q = pw->mk;
        if (lp_grow(&q, &pw->capmk, nmsg, sizeof(mkey)))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        pw->mk = q;
    }
    if (nmsg) {
        size_t k = 0;
        for (size_t i = 0; i < sl->nrecs; i++) {
            const srec *r = &sl->recs[i];
            if (r->kind != SREC_MSG)
                continue;
            int h = (r->flags & SREC_HALVES) != 0;
            pw->mk[k++] = (mkey){(uint64_t)((r->flags & SREC_FAKE) != 0) << 1 | (uint64_t)h, h ? r->b : r->a,
                                 h ? r->peer : r->w, r->op, (uint32_t)i};
        }
        if (sort_mkeys(pw->mk, nmsg))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    if (s->o.naive_build) {
        st = build_naive(sl, pw, nmsg, err);
    } else {
        uint64_t dropped = 0;
        st = lp_stream_build_trace(pw, sl, pw->mk, nmsg, &sl->t, &dropped, err);
        sl->wi.build_errors = dropped;
    }
    if (st)
        return st;
    const lp_trace *t = sl->t;
    sl->src = lp_malloc(sizeof *sl->src);
    sl->keys = lp_calloc(1, sizeof *sl->keys);
    if (!sl->src || !sl->keys) {
        lp_free(sl->src);
        sl->src = NULL;
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    if ((st = lp_snapsrc_init(sl->src, t, err))) {
        lp_free(sl->src);
        sl->src = NULL;
        return st;
    }
    /* the operator keys: global ids, parallelism so far */
    lp_sumkeys *k = sl->keys;
    k->t = t;
    k->nops = nm->nops;
    k->opid = lp_malloc((t->strs.n ? t->strs.n : 1) * sizeof *k->opid);
    k->opname = lp_malloc((nm->nops ? nm->nops : 1) * sizeof *k->opname);
    k->oppar = lp_malloc((nm->nops ? nm->nops : 1) * sizeof *k->oppar);
    if (!k->opid || !k->opname || !k->oppar)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    memset(k->opid, 0xff, (t->strs.n ? t->strs.n : 1) * sizeof *k->opid);
    for (uint32_t o = 0; o < nm->nops; o++) {
        k->opid[pw->opstr[o]] = o;
        k->opname[o] = pw->opstr[o];
        k->oppar[o] = nm->oppar[o];
    }
    return lp_window_analyze(&pw->ws, sl->src, k, sl->index, sl->ts, sl->te, &s->o.win, &sl->res, err);
}

static lp_status process_job(void *ctx, size_t slot, unsigned thread, lp_error *err)
{
    lp_stream *s = ctx;
    return process(s, &s->slots[slot], &s->pws[thread], err);
}

/* Hand a window's result to the callback (feeding thread); its trace becomes the one
 * kept for labels. */
static lp_status deliver_job(void *ctx, size_t slot, lp_error *err)
{
    lp_stream *s = ctx;
    sslot *sl = &s->slots[slot];
    lp_status st = LP_OK;
    sl->wi.latency_s = lp_stream_now() - sl->t_close;
    if (s->fn && s->fn(s->ctx, &sl->res, &sl->wi))
        st = lp_error_set(err, LP_ERR_ARG, "stopped by the result callback");
    if (s->last_keys) {
        lp_sumkeys_release(s->last_keys);
        lp_free(s->last_keys);
    }
    if (s->last_src) {
        lp_snapsrc_release(s->last_src);
        lp_free(s->last_src);
    }
    lp_trace_free(s->last_t);
    s->last_t = sl->t;
    s->last_src = sl->src;
    s->last_keys = sl->keys;
    sl->t = NULL;
    sl->src = NULL;
    sl->keys = NULL;
    lp_stream_names_unref(s, sl->nm);
    sl->nm = NULL;
    return st;
}

lp_status lp_spool_init(lp_stream *s, lp_error *err)
{
    unsigned n = lp_pool_threads(s->o.threads, 256);
    s->nthreads = n;
    lp_status st = lp_pool_new(&s->pool, n > 1 ? n : 0, err);
    if (!st)
        st = lp_poolq_new(&s->q, s->pool, 2 * (size_t)n + 2, process_job, deliver_job, s, err);
    if (st)
        return st;
    s->nslots = lp_poolq_slots(s->q);
    s->npws = lp_poolq_threads(s->q);
    s->slots = lp_calloc(s->nslots, sizeof *s->slots);
    s->pws = lp_calloc(s->npws, sizeof *s->pws);
    if (!s->slots || !s->pws)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < s->nslots; i++)
        lp_winres_init(&s->slots[i].res);
    for (unsigned i = 0; i < s->npws; i++)
        lp_winws_init(&s->pws[i].ws);
    return LP_OK;
}

void lp_spool_free(lp_stream *s)
{
    lp_poolq_free(s->q); /* no thread touches the slots after this */
    lp_pool_free(s->pool);
    s->q = NULL;
    s->pool = NULL;
    if (s->slots)
        for (size_t i = 0; i < s->nslots; i++) {
            sslot *sl = &s->slots[i];
            slot_clear(sl);
            lp_stream_names_unref(s, sl->nm);
            sl->nm = NULL;
            lp_free(sl->recs);
            lp_winres_release(&sl->res);
        }
    if (s->pws)
        for (unsigned i = 0; i < s->npws; i++) {
            lp_winws_release(&s->pws[i].ws);
            spool_ws *pw = &s->pws[i];
            lp_free(pw->opstr);
            lp_free(pw->mk);
            lp_free(pw->ta);
            lp_free(pw->ta2);
            lp_free(pw->gp);
            lp_free(pw->wcur);
            lp_free(pw->wmax);
            lp_free(pw->wuns);
            lp_free(pw->mp);
            lp_free(pw->soff);
            lp_free(pw->roff);
            lp_free(pw->stime);
            lp_free(pw->rtime);
        }
    if (s->last_keys) {
        lp_sumkeys_release(s->last_keys);
        lp_free(s->last_keys);
    }
    if (s->last_src) {
        lp_snapsrc_release(s->last_src);
        lp_free(s->last_src);
    }
    lp_trace_free(s->last_t);
    s->last_t = NULL;
    s->last_src = NULL;
    s->last_keys = NULL;
    lp_free(s->slots);
    lp_free(s->pws);
    s->slots = NULL;
    s->pws = NULL;
}

lp_status lp_spool_reserve(lp_stream *s, sslot **out, lp_error *err)
{
    size_t i;
    *out = NULL;
    lp_status st = lp_poolq_reserve(s->q, &i, err);
    if (!st)
        *out = &s->slots[i];
    return st;
}

lp_status lp_spool_submit(lp_stream *s, sslot *sl, lp_error *err)
{
    (void)sl;
    return lp_poolq_submit(s->q, err);
}

lp_status lp_spool_deliver(lp_stream *s, int wait_all, lp_error *err)
{
    return wait_all ? lp_poolq_finish(s->q, err) : lp_poolq_poll(s->q, err);
}

lp_status lp_spool_status(lp_stream *s, lp_error *err) { return lp_poolq_status(s->q, err); }
