/* chrome_kineto.c: the PyTorch profiler (Kineto) flavour (chrome_int.h): GPU operations
 * grouped per stream, launches (a runtime call and the GPU operation with its
 * correlation id) as messages delivered when the stream could take the operation, and
 * synchronisation calls that the GPU made wait, which receive a message from the GPU
 * operation that ended last before they returned (docs/formats/chrome.md "PyTorch").
 *
 * Invariants: a message never arrives before it is sent; a synchronisation call is
 * `waiting` only when a GPU operation ended inside it.
 */
#include "import/chrome/chrome_int.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The GPU operations of every GPU thread, by start, with running maxima of ends. */
lp_status ch_group_gpu_ops(cctx *c)
{
    size_t n = 0;
    for (size_t t = 0; t < c->nth; t++)
        if (c->th[t].gpu) {
            const skey *k = c->order + c->th[t].first;
            for (uint32_t i = 0; i < c->th[t].count; i++)
                n += (c->sl[k[i].idx].flags & SL_GPU_OP) != 0;
        }
    c->gop = lp_malloc((n ? n : 1) * sizeof *c->gop);
    if (!c->gop)
        return nomem(c);
    c->ngop = 0;
    for (size_t t = 0; t < c->nth; t++) {
        cthread *th = &c->th[t];
        th->gfirst = (uint32_t)c->ngop;
        th->gcount = 0;
        if (!th->gpu)
            continue;
        const skey *k = c->order + th->first;
        int64_t pm = INT64_MIN;
        for (uint32_t i = 0; i < th->count; i++) {
            const cslice *s = &c->sl[k[i].idx];
            if (!(s->flags & SL_GPU_OP))
                continue;
            gop *g = &c->gop[c->ngop++];
            g->start = s->start;
            g->end = s->end;
            if (s->end > pm)
                pm = s->end;
            g->pmax = pm;
            th->gcount++;
        }
    }
    return LP_OK;
}

/* Latest end <= t among the GPU ops of thread th (INT64_MIN if none). */
static int64_t gpu_last_end(const cctx *c, const cthread *th, int64_t t)
{
    const gop *g = c->gop + th->gfirst;
    size_t lo = 0, hi = th->gcount; /* first index with pmax > t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g[mid].pmax <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? g[lo - 1].pmax : INT64_MIN;
}

/* Index of the GPU op of th that starts at or contains t (the last with start <= t);
 * -1 if none. */
long ch_gpu_op_at(const cctx *c, const cthread *th, int64_t t)
{
    const gop *g = c->gop + th->gfirst;
    size_t lo = 0, hi = th->gcount;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;
}

typedef struct corr_ix {
    int64_t corr;
    uint32_t idx;
} corr_ix;

static int cmp_corr(const void *a, const void *b)
{
    const corr_ix *x = a, *y = b;
    if (x->corr != y->corr)
        return x->corr < y->corr ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Kineto: every GPU operation receives a message from the runtime call that launched
 * it (same correlation id), sent when the call returned or the operation started,
 * whichever came first, and delivered when the stream could take the operation: at
 * the end of the previous operation of the stream if that was still running when the
 * launch was issued (the operation waited in the stream's queue, HTA's kernel-kernel
 * delay), else at the operation's start (the gap before it is the launch delay). */
lp_status ch_resolve_launches(cctx *c)
{
    size_t nrt = 0;
    for (size_t i = 0; i < c->nsl; i++)
        nrt += (c->sl[i].flags & (SL_RUNTIME | SL_DROP)) == SL_RUNTIME && c->sl[i].corr >= 0;
    if (!nrt || !c->ngop)
        return LP_OK;
    corr_ix *rt = lp_malloc(nrt * sizeof *rt);
    if (!rt)
        return nomem(c);
    size_t n = 0;
    for (size_t i = 0; i < c->nsl; i++)
        if ((c->sl[i].flags & (SL_RUNTIME | SL_DROP)) == SL_RUNTIME && c->sl[i].corr >= 0) {
            rt[n].corr = c->sl[i].corr;
            rt[n].idx = (uint32_t)i;
            n++;
        }
    qsort(rt, n, sizeof *rt, cmp_corr);
    lp_str kv[2] = {c->s_edge, c->s_launch};
    uint32_t a_launch;
    lp_status st = lp_builder_attrs(c->b, kv, 1, &a_launch, c->err);
    for (size_t t = 0; t < c->nth && !st; t++) {
        const cthread *th = &c->th[t];
        if (!th->gpu || !th->gcount)
            continue;
        const skey *k = c->order + th->first;
        const gop *g = c->gop + th->gfirst;
        uint32_t gi = 0;
        for (uint32_t i = 0; i < th->count && !st; i++) {
            const cslice *op = &c->sl[k[i].idx];
            if (!(op->flags & SL_GPU_OP))
                continue;
            int64_t prev_end = gi ? g[gi - 1].pmax : INT64_MIN;
            gi++;
            if (op->corr < 0)
                continue;
            size_t lo = 0, hi = n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (rt[mid].corr < op->corr)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == n || rt[lo].corr != op->corr)
                continue;
            const cslice *call = &c->sl[rt[lo].idx];
            int64_t send = call->end < op->start ? call->end : op->start;
            if (send < call->start)
                send = call->start;
            int64_t recv = prev_end > send && prev_end <= op->start ? prev_end : op->start;
            st = ch_add_msg(c, call->thread, send, (uint32_t)t, recv, (uint64_t)op->corr, a_launch, op->line);
        }
    }
    lp_free(rt);
    return st;
}

/* Kineto: synchronisation calls the GPU made wait receive a message from the GPU
 * operation that ended last before they returned: of the stream (Stream Sync), the
 * device (Context Sync) or the event's stream (Event Sync) that the matching
 * cuda_sync record names, else of any stream. A call that returned before any such
 * operation ended during it did not wait, and stays `processing`. */
lp_status ch_resolve_syncs(cctx *c)
{
    size_t nsync = 0;
    for (size_t i = 0; i < c->nsl; i++)
        nsync += (c->sl[i].flags & (SL_SYNC | SL_DROP)) == SL_SYNC;
    if (!nsync)
        return LP_OK;
    size_t ngpu = 0;
    for (size_t t = 0; t < c->nth; t++)
        ngpu += c->th[t].gpu && c->th[t].gcount;
    if (!ngpu)
        return LP_OK;
    /* correlation -> cuda_sync record */
    corr_ix *byc = lp_malloc((c->nsy ? c->nsy : 1) * sizeof *byc);
    if (!byc)
        return nomem(c);
    size_t nby = 0;
    for (size_t i = 0; i < c->nsy; i++)
        if (c->sy[i].corr >= 0) {
            byc[nby].corr = c->sy[i].corr;
            byc[nby].idx = (uint32_t)i;
            nby++;
        }
    qsort(byc, nby, sizeof *byc, cmp_corr);
    lp_str kv[2] = {c->s_edge, c->s_sync};
    uint32_t a_sync;
    lp_status st = lp_builder_attrs(c->b, kv, 1, &a_sync, c->err);
    for (size_t i = 0; i < c->nsl && !st; i++) {
        cslice *s = &c->sl[i];
        if ((s->flags & (SL_SYNC | SL_DROP)) != SL_SYNC)
            continue;
        const csync *y = NULL;
        if (s->corr >= 0) {
            size_t lo = 0, hi = nby;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (byc[mid].corr < s->corr)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < nby && byc[lo].corr == s->corr)
                y = &c->sy[byc[lo].idx];
        }
        int64_t best = INT64_MIN;
        uint32_t bt = NONE;
        for (size_t t = 0; t < c->nth; t++) {
            const cthread *th = &c->th[t];
            if (!th->gpu || !th->gcount)
                continue;
            if (y && y->kind != SY_OTHER) {
                const cthread *yt = &c->th[y->thread];
                if (th->proc != yt->proc)
                    continue; /* another device */
                int64_t want = y->kind == SY_STREAM ? y->stream : y->kind == SY_EVENT ? y->wait_stream : -1;
                if (want >= 0 && th->stream != want)
                    continue;
            }
            int64_t e = gpu_last_end(c, th, s->end);
            if (e > best) {
                best = e;
                bt = (uint32_t)t;
            }
        }
        if (bt != NONE && best >= s->start) {
            s->flags |= SL_WAIT;
            st = ch_add_msg(c, bt, best, s->thread, s->end, LP_MSGID_NONE, a_sync, s->line);
        }
    }
    lp_free(byc);
    return st;
}
