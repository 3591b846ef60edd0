/* stream_trace.c: a closed window's lp_trace made straight from the stream's records
 * (stream_int.h), without lp_builder: the same trace the builder makes of the same
 * records in the same order (MODEL.md's rules as builder.c applies them), at a
 * fraction of the cost, because a window's records are already valid (checked when
 * they arrived), whole (halves matched by the stream) and nearly sorted.
 *
 * Steps, as builder.c's lp_builder_finish: names interned in the builder's order
 * (built-in types, workers, other types, operators); activities grouped by worker in
 * arrival order (a stable counting sort), a worker's activities sorted by (start, end,
 * arrival) only when one starts before an earlier one, then every activity overlapping
 * the previous kept one dropped (counted); messages in the given order, received-
 * before-sent ones flagged LP_MSG_SKEW; then the gaps of each worker's timeline, from
 * its first event to its last, split at its sends and receives, `waiting` when a
 * receive happens at the gap's end, else `unknown`; the extent. stream_pool.c keeps the
 * builder path as the naive twin (lp_stream_opts.naive_build), and test_stream.c
 * compares the two traces column by column on random windows. */
#include "stream_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct tact {
    int64_t s, e;
    uint16_t type;
    lp_str op;
    uint32_t w;
    uint32_t idx;            /* arrival order */
} tact;

static int cmp_tact(const void *pa, const void *pb)
{
    const tact *a = pa, *b = pb;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    if (a->e != b->e)
        return a->e < b->e ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Sort instants that are nearly in order (a worker's receives in send order: channels
 * are mostly FIFO): insertion sort while it stays cheap, else qsort. */
static void sort_nearly(int64_t *a, uint64_t n)
{
    uint64_t budget = 8 * n + 64;
    for (uint64_t i = 1; i < n; i++) {
        int64_t x = a[i];
        uint64_t j = i;
        while (j > 0 && a[j - 1] > x) {
            a[j] = a[j - 1];
            j--;
            if (!--budget) {
                a[j] = x;
                qsort(a, n, sizeof *a, cmp_i64);
                return;
            }
        }
        a[j] = x;
    }
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    return need <= *cap ? 0 : lp_grow(p, cap, need, elem);
}

/* Per-worker instants (sends or receives) grouped by worker, each group sorted. */
static int group_times(spool_ws *pw, int which, const srec *const *msgs, size_t nm, uint32_t nw, uint64_t **offp,
                       int64_t **timep)
{
    uint64_t **off = which ? &pw->roff : &pw->soff;
    int64_t **tim = which ? &pw->rtime : &pw->stime;
    size_t *capoff = which ? &pw->caproff : &pw->capsoff;
    size_t *captim = which ? &pw->caprtime : &pw->capstime;
    if (grow((void **)off, capoff, (size_t)nw + 2, sizeof **off) || grow((void **)tim, captim, nm + 1, sizeof **tim))
        return -1;
    uint64_t *o = *off;
    int64_t *tt = *tim;
    memset(o, 0, ((size_t)nw + 2) * sizeof *o);
    for (size_t i = 0; i < nm; i++)
        o[(which ? msgs[i]->peer : msgs[i]->w) + 2]++;
    for (uint32_t w = 0; w < nw; w++)
        o[w + 2] += o[w + 1];
    for (size_t i = 0; i < nm; i++) { /* o[w + 1] is the next free slot of worker w */
        uint32_t w = which ? msgs[i]->peer : msgs[i]->w;
        tt[o[w + 1]++] = which ? msgs[i]->b : msgs[i]->a;
    }
    for (uint32_t w = 0; w < nw; w++) /* o[w] .. o[w + 1] now; sort where needed */
        sort_nearly(tt + o[w], o[w + 1] - o[w]);
    *offp = o;
    *timep = tt;
    return 0;
}

lp_status lp_stream_build_trace(spool_ws *pw, const sslot *sl, const mkey *order, size_t nmsg, lp_trace **out,
                                uint64_t *dropped, lp_error *err)
{
    const snames *nm = sl->nm;
    const uint32_t nw = nm->nw;
    *out = NULL;
    *dropped = 0;
    lp_trace *t = lp_calloc(1, sizeof *t);
    if (!t || lp_strtab_init(&t->strs)) {
        if (t)
            lp_strtab_release(&t->strs);
        lp_free(t);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
#define FAIL()                                                          \
    do {                                                                \
        lp_trace_free(t);                                               \
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");        \
    } while (0)
    /* names, in the builder's order */
    t->type_name = lp_malloc((nm->nt ? nm->nt : 1) * sizeof *t->type_name);
    t->wname = lp_malloc((nw ? nw : 1) * sizeof *t->wname);
    t->wattr = lp_calloc(nw ? nw : 1, sizeof *t->wattr);
    t->wfirst = lp_calloc((size_t)nw + 1, sizeof *t->wfirst);
    t->apool = lp_malloc(sizeof *t->apool);
    if (!t->type_name || !t->wname || !t->wattr || !t->wfirst || !t->apool)
        FAIL();
    t->apool[0] = 0;
    t->napool = 1;
    for (uint32_t i = 0; i < nm->nt && i < LP_TYPE_NBUILTIN; i++)
        if (lp_strtab_intern(&t->strs, nm->tname[i], nm->tlen[i], &t->type_name[i]))
            FAIL();
    for (uint32_t w = 0; w < nw; w++)
        if (lp_strtab_intern(&t->strs, nm->wname[w], nm->wlen[w], &t->wname[w]))
            FAIL();
    for (uint32_t i = LP_TYPE_NBUILTIN; i < nm->nt; i++)
        if (lp_strtab_intern(&t->strs, nm->tname[i], nm->tlen[i], &t->type_name[i]))
            FAIL();
    t->ntypes = nm->nt;
    t->nworkers = nw;
    if (grow((void **)&pw->opstr, &pw->capop, nm->nops, sizeof *pw->opstr))
        FAIL();
    for (uint32_t o = 0; o < nm->nops; o++)
        if (lp_strtab_intern(&t->strs, nm->oname[o], nm->olen[o], &pw->opstr[o]))
            FAIL();

    /* activities grouped by worker, in arrival order (stable counting sort) */
    size_t na = 0;
    for (size_t i = 0; i < sl->nrecs; i++)
        na += sl->recs[i].kind == SREC_ACT;
    if (grow((void **)&pw->ta, &pw->capta, na + 1, sizeof *pw->ta) ||
        grow((void **)&pw->ta2, &pw->capta2, na + 1, sizeof *pw->ta2) ||
        grow((void **)&pw->wcur, &pw->capwcur, (size_t)nw + 2, sizeof *pw->wcur) ||
        grow((void **)&pw->wmax, &pw->capwmax, (size_t)nw + 1, sizeof *pw->wmax) ||
        grow((void **)&pw->wuns, &pw->capwuns, (size_t)nw + 1, 1))
        FAIL();
    uint64_t *cnt = pw->wcur;
    memset(cnt, 0, ((size_t)nw + 2) * sizeof *cnt);
    for (uint32_t w = 0; w < nw; w++) {
        pw->wmax[w] = INT64_MIN;
        pw->wuns[w] = 0;
    }
    size_t k = 0;
    for (size_t i = 0; i < sl->nrecs; i++) {
        const srec *r = &sl->recs[i];
        if (r->kind != SREC_ACT)
            continue;
        pw->ta[k] = (tact){r->a, r->b, r->type, r->op == LP_NONE32 ? LP_STR_NONE : pw->opstr[r->op], r->w, (uint32_t)k};
        cnt[r->w + 1]++;
        if (r->a < pw->wmax[r->w]) /* as the builder: before a start seen earlier */
            pw->wuns[r->w] = 1;
        else
            pw->wmax[r->w] = r->a;
        k++;
    }
    for (uint32_t w = 0; w < nw; w++)
        cnt[w + 1] += cnt[w];
    for (size_t i = 0; i < na; i++) /* cnt[w] is the next slot of worker w */
        pw->ta2[cnt[pw->ta[i].w]++] = pw->ta[i];
    /* cnt[w] is now the end of worker w; its start is cnt[w - 1] (0 for w = 0) */
    tact *ga = pw->ta2;
    uint64_t kept = 0;
    for (uint32_t w = 0; w < nw; w++) {
        uint64_t lo = w ? cnt[w - 1] : 0, hi = cnt[w];
        if (pw->wuns[w])
            qsort(ga + lo, hi - lo, sizeof *ga, cmp_tact);
        /* drop what overlaps the previous kept activity; compact in place */
        uint64_t prev = UINT64_MAX;
        t->wfirst[w] = kept;
        for (uint64_t i = lo; i < hi; i++) {
            if (prev != UINT64_MAX && ga[i].s < ga[prev].e) {
                (*dropped)++;
                continue;
            }
            ga[kept] = ga[i];
            prev = kept++;
        }
    }
    t->wfirst[nw] = kept;

    /* messages, in the given order */
    if (grow((void **)&pw->mp, &pw->capmp, nmsg + 1, sizeof *pw->mp))
        FAIL();
    const srec **mp = pw->mp;
    for (size_t j = 0; j < nmsg; j++)
        mp[j] = &sl->recs[order[j].i];
    size_t nmm = nmsg ? nmsg : 1;
    t->msrc = lp_malloc(nmm * sizeof *t->msrc);
    t->mdst = lp_malloc(nmm * sizeof *t->mdst);
    t->msend = lp_malloc(nmm * sizeof *t->msend);
    t->mrecv = lp_malloc(nmm * sizeof *t->mrecv);
    t->mid = lp_malloc(nmm * sizeof *t->mid);
    t->mattr = lp_calloc(nmm, sizeof *t->mattr);
    t->mflags = lp_malloc(nmm * sizeof *t->mflags);
    if (!t->msrc || !t->mdst || !t->msend || !t->mrecv || !t->mid || !t->mattr || !t->mflags)
        FAIL();
    for (size_t j = 0; j < nmsg; j++) {
        const srec *r = mp[j];
        t->msrc[j] = r->w;
        t->mdst[j] = r->peer;
        t->msend[j] = r->a;
        t->mrecv[j] = r->b;
        t->mid[j] = LP_MSGID_NONE;
        t->mflags[j] = r->b < r->a ? LP_MSG_SKEW : 0;
        t->nskew += r->b < r->a;
    }
    t->nmsgs = nmsg;

    /* gaps: each worker's sends and receives, sorted */
    uint64_t *soff, *roff;
    int64_t *stime, *rtime;
    if (group_times(pw, 0, mp, nmsg, nw, &soff, &stime) || group_times(pw, 1, mp, nmsg, nw, &roff, &rtime))
        FAIL();
    size_t ng = 0;
#define GAP(w_, s_, e_, ty_)                                                           \
    do {                                                                               \
        if (grow((void **)&pw->gp, &pw->capgp, ng + 1, sizeof *pw->gp))                \
            FAIL();                                                                    \
        pw->gp[ng++] = (tact){(s_), (e_), (uint16_t)(ty_), LP_STR_NONE, (w_), 0};      \
    } while (0)
    for (uint32_t w = 0; w < nw; w++) {
        uint64_t lo = t->wfirst[w], hi = t->wfirst[w + 1];
        uint64_t si = soff[w], shi = soff[w + 1], ri = roff[w], rhi = roff[w + 1];
        int64_t first = INT64_MAX, last = INT64_MIN;
        if (lo < hi) {
            first = ga[lo].s;
            last = ga[hi - 1].e;
        }
        if (si < shi) {
            first = stime[si] < first ? stime[si] : first;
            last = stime[shi - 1] > last ? stime[shi - 1] : last;
        }
        if (ri < rhi) {
            first = rtime[ri] < first ? rtime[ri] : first;
            last = rtime[rhi - 1] > last ? rtime[rhi - 1] : last;
        }
        if (first > last)
            continue; /* no event */
        int64_t cur = first;
        for (uint64_t i = lo; i <= hi; i++) {
            int64_t limit = i < hi ? ga[i].s : last;
            if (limit > cur) { /* the gaps in (cur, limit), split at sends and receives */
                while (si < shi && stime[si] <= cur)
                    si++;
                while (ri < rhi && rtime[ri] <= cur)
                    ri++;
                for (;;) {
                    int64_t ns = si < shi ? stime[si] : INT64_MAX, nr = ri < rhi ? rtime[ri] : INT64_MAX;
                    int64_t y = ns < nr ? ns : nr;
                    if (y >= limit)
                        break;
                    GAP(w, cur, y, nr == y ? LP_TYPE_WAITING : LP_TYPE_UNKNOWN);
                    cur = y;
                    while (si < shi && stime[si] <= cur)
                        si++;
                    while (ri < rhi && rtime[ri] <= cur)
                        ri++;
                }
                if (limit > cur) {
                    int64_t nr = ri < rhi ? rtime[ri] : INT64_MAX;
                    GAP(w, cur, limit, nr == limit ? LP_TYPE_WAITING : LP_TYPE_UNKNOWN);
                }
            }
            if (i < hi)
                cur = ga[i].e > cur ? ga[i].e : cur;
        }
    }
#undef GAP
    /* the columns: each worker's activities and gaps merged by start (an activity before
     * a gap starting at the same instant) */
    uint64_t n = kept + ng, nn = n ? n : 1;
    t->astart = lp_malloc(nn * sizeof *t->astart);
    t->aend = lp_malloc(nn * sizeof *t->aend);
    t->atype = lp_malloc(nn * sizeof *t->atype);
    t->aop = lp_malloc(nn * sizeof *t->aop);
    t->aattr = lp_calloc(nn, sizeof *t->aattr);
    t->aflags = lp_malloc(nn * sizeof *t->aflags);
    if (!t->astart || !t->aend || !t->atype || !t->aop || !t->aattr || !t->aflags)
        FAIL();
#undef FAIL
    uint64_t o = 0;
    size_t gi = 0;
    int64_t lo_t = INT64_MAX, hi_t = INT64_MIN;
    for (uint32_t w = 0; w < nw; w++) {
        uint64_t i = t->wfirst[w], hi = t->wfirst[w + 1];
        t->wfirst[w] = o;
        for (;;) {
            int take_gap = gi < ng && pw->gp[gi].w == w && (i == hi || pw->gp[gi].s < ga[i].s);
            const tact *x;
            if (take_gap)
                x = &pw->gp[gi++];
            else if (i < hi)
                x = &ga[i++];
            else
                break;
            t->astart[o] = x->s;
            t->aend[o] = x->e;
            t->atype[o] = x->type;
            t->aop[o] = x->op;
            t->aflags[o] = take_gap ? LP_ACT_GAP : 0;
            o++;
        }
        if (t->wfirst[w] < o) {
            lo_t = t->astart[t->wfirst[w]] < lo_t ? t->astart[t->wfirst[w]] : lo_t;
            hi_t = t->aend[o - 1] > hi_t ? t->aend[o - 1] : hi_t;
        }
    }
    t->wfirst[nw] = o;
    t->nacts = o;
    t->ngaps = ng;
    for (size_t j = 0; j < nmsg; j++) {
        int64_t a = t->msend[j], z = t->mrecv[j];
        if (a > z) {
            int64_t x = a;
            a = z;
            z = x;
        }
        lo_t = a < lo_t ? a : lo_t;
        hi_t = z > hi_t ? z : hi_t;
    }
    if (lo_t > hi_t)
        lo_t = hi_t = 0;
    t->tmin = lo_t;
    t->tmax = hi_t;
    *out = t;
    return LP_OK;
}
