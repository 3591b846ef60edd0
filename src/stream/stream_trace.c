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

/* Names, in the builder's order: built-in types, workers, other types, operators
 * (interned into pw->opstr). */
static int st_names(lp_trace *t, const snames *nm, spool_ws *pw)
{
    const uint32_t nw = nm->nw;
    t->type_name = lp_malloc((nm->nt ? nm->nt : 1) * sizeof *t->type_name);
    t->wname = lp_malloc((nw ? nw : 1) * sizeof *t->wname);
    t->wattr = lp_calloc(nw ? nw : 1, sizeof *t->wattr);
    t->wfirst = lp_calloc((size_t)nw + 1, sizeof *t->wfirst);
    t->apool = lp_malloc(sizeof *t->apool);
    if (!t->type_name || !t->wname || !t->wattr || !t->wfirst || !t->apool)
        return -1;
    t->apool[0] = 0;
    t->napool = 1;
    for (uint32_t i = 0; i < nm->nt && i < LP_TYPE_NBUILTIN; i++)
        if (lp_strtab_intern(&t->strs, nm->tname[i], nm->tlen[i], &t->type_name[i]))
            return -1;
    for (uint32_t w = 0; w < nw; w++)
        if (lp_strtab_intern(&t->strs, nm->wname[w], nm->wlen[w], &t->wname[w]))
            return -1;
    for (uint32_t i = LP_TYPE_NBUILTIN; i < nm->nt; i++)
        if (lp_strtab_intern(&t->strs, nm->tname[i], nm->tlen[i], &t->type_name[i]))
            return -1;
    t->ntypes = nm->nt;
    t->nworkers = nw;
    if (grow((void **)&pw->opstr, &pw->capop, nm->nops, sizeof *pw->opstr))
        return -1;
    for (uint32_t o = 0; o < nm->nops; o++)
        if (lp_strtab_intern(&t->strs, nm->oname[o], nm->olen[o], &pw->opstr[o]))
            return -1;
    return 0;
}

/* Activities grouped by worker, in arrival order (stable counting sort), sorted where
 * a worker's arrived out of order, overlaps dropped: into pw->ta2, worker w's kept ones
 * at [t->wfirst[w], t->wfirst[w + 1]). Returns the number kept, or -1. */
static int64_t st_acts(spool_ws *pw, const sslot *sl, uint32_t nw, lp_trace *t, uint64_t *dropped)
{
    size_t na = 0;
    for (size_t i = 0; i < sl->nrecs; i++)
        na += sl->recs[i].kind == SREC_ACT;
    if (grow((void **)&pw->ta, &pw->capta, na + 1, sizeof *pw->ta) ||
        grow((void **)&pw->ta2, &pw->capta2, na + 1, sizeof *pw->ta2) ||
        grow((void **)&pw->wcur, &pw->capwcur, (size_t)nw + 2, sizeof *pw->wcur) ||
        grow((void **)&pw->wmax, &pw->capwmax, (size_t)nw + 1, sizeof *pw->wmax) ||
        grow((void **)&pw->wuns, &pw->capwuns, (size_t)nw + 1, 1))
        return -1;
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
    return (int64_t)kept;
}

/* Messages, in the given order (their records listed in pw->mp). */
static int st_msgs(spool_ws *pw, const sslot *sl, const mkey *order, size_t nmsg, lp_trace *t)
{
    if (grow((void **)&pw->mp, &pw->capmp, nmsg + 1, sizeof *pw->mp))
        return -1;
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
        return -1;
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
    return 0;
}

/* One gap into pw->gp. */
static int st_gap(spool_ws *pw, size_t *ng, uint32_t w, int64_t s, int64_t e, int type)
{
    if (grow((void **)&pw->gp, &pw->capgp, *ng + 1, sizeof *pw->gp))
        return -1;
    pw->gp[(*ng)++] = (tact){s, e, (uint16_t)type, LP_STR_NONE, w, 0};
    return 0;
}

/* The instants a worker's sends (or receives) lie between. */
typedef struct st_inst {
    const int64_t *time;
    uint64_t i, hi;
} st_inst;

/* Worker w's gaps, from its first event to its last, split at its sends and receives
 * (ga: its kept activities [lo, hi)). */
static int st_worker_gaps(spool_ws *pw, size_t *ng, uint32_t w, const tact *ga, uint64_t lo, uint64_t hi, st_inst S,
                          st_inst R)
{
    int64_t first = INT64_MAX, last = INT64_MIN;
    if (lo < hi) {
        first = ga[lo].s;
        last = ga[hi - 1].e;
    }
    if (S.i < S.hi) {
        first = S.time[S.i] < first ? S.time[S.i] : first;
        last = S.time[S.hi - 1] > last ? S.time[S.hi - 1] : last;
    }
    if (R.i < R.hi) {
        first = R.time[R.i] < first ? R.time[R.i] : first;
        last = R.time[R.hi - 1] > last ? R.time[R.hi - 1] : last;
    }
    if (first > last)
        return 0; /* no event */
    int64_t cur = first;
    for (uint64_t i = lo; i <= hi; i++) {
        int64_t limit = i < hi ? ga[i].s : last;
        if (limit > cur) { /* the gaps in (cur, limit), split at sends and receives */
            while (S.i < S.hi && S.time[S.i] <= cur)
                S.i++;
            while (R.i < R.hi && R.time[R.i] <= cur)
                R.i++;
            for (;;) {
                int64_t ns = S.i < S.hi ? S.time[S.i] : INT64_MAX, nr = R.i < R.hi ? R.time[R.i] : INT64_MAX;
                int64_t y = ns < nr ? ns : nr;
                if (y >= limit)
                    break;
                if (st_gap(pw, ng, w, cur, y, nr == y ? LP_TYPE_WAITING : LP_TYPE_UNKNOWN))
                    return -1;
                cur = y;
                while (S.i < S.hi && S.time[S.i] <= cur)
                    S.i++;
                while (R.i < R.hi && R.time[R.i] <= cur)
                    R.i++;
            }
            if (limit > cur) {
                int64_t nr = R.i < R.hi ? R.time[R.i] : INT64_MAX;
                if (st_gap(pw, ng, w, cur, limit, nr == limit ? LP_TYPE_WAITING : LP_TYPE_UNKNOWN))
                    return -1;
            }
        }
        if (i < hi)
            cur = ga[i].e > cur ? ga[i].e : cur;
    }
    return 0;
}

/* Every worker's gaps into pw->gp (*ng of them), by worker and time. */
static int st_gaps(spool_ws *pw, const lp_trace *t, uint32_t nw, size_t nmsg, size_t *ng)
{
    uint64_t *soff, *roff;
    int64_t *stime, *rtime;
    if (group_times(pw, 0, pw->mp, nmsg, nw, &soff, &stime) || group_times(pw, 1, pw->mp, nmsg, nw, &roff, &rtime))
        return -1;
    *ng = 0;
    for (uint32_t w = 0; w < nw; w++) {
        st_inst S = {stime, soff[w], soff[w + 1]}, R = {rtime, roff[w], roff[w + 1]};
        if (st_worker_gaps(pw, ng, w, pw->ta2, t->wfirst[w], t->wfirst[w + 1], S, R))
            return -1;
    }
    return 0;
}

/* The columns: each worker's activities and gaps merged by start (an activity before a
 * gap starting at the same instant); then the extent. */
static int st_columns(spool_ws *pw, lp_trace *t, uint32_t nw, uint64_t kept, size_t ng)
{
    const tact *ga = pw->ta2;
    uint64_t n = kept + ng, nn = n ? n : 1;
    t->astart = lp_malloc(nn * sizeof *t->astart);
    t->aend = lp_malloc(nn * sizeof *t->aend);
    t->atype = lp_malloc(nn * sizeof *t->atype);
    t->aop = lp_malloc(nn * sizeof *t->aop);
    t->aattr = lp_calloc(nn, sizeof *t->aattr);
    t->aflags = lp_malloc(nn * sizeof *t->aflags);
    if (!t->astart || !t->aend || !t->atype || !t->aop || !t->aattr || !t->aflags)
        return -1;
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
    for (size_t j = 0; j < t->nmsgs; j++) {
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
    return 0;
}

lp_status lp_stream_build_trace(spool_ws *pw, const sslot *sl, const mkey *order, size_t nmsg, lp_trace **out,
                                uint64_t *dropped, lp_error *err)
{
    const uint32_t nw = sl->nm->nw;
    *out = NULL;
    *dropped = 0;
    lp_trace *t = lp_calloc(1, sizeof *t);
    if (!t || lp_strtab_init(&t->strs)) {
        if (t)
            lp_strtab_release(&t->strs);
        lp_free(t);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    int64_t kept = -1;
    size_t ng = 0;
    if (st_names(t, sl->nm, pw) || (kept = st_acts(pw, sl, nw, t, dropped)) < 0 || st_msgs(pw, sl, order, nmsg, t) ||
        st_gaps(pw, t, nw, nmsg, &ng) || st_columns(pw, t, nw, (uint64_t)kept, ng)) {
        lp_trace_free(t);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    *out = t;
    return LP_OK;
}
