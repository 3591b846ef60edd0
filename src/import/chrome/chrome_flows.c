/* chrome_flows.c: messages (chrome_int.h): flow events (s/t/f keyed by cat+name+id, and
 * bind_id with flow_out/flow_in on slices) matched into messages, each delivered at
 * its own time, at the enclosing slice (bp:"e"), or at the start of the next slice of
 * its thread (catapult's binding); and the helpers every message source shares.
 *
 * Invariants: a flow step or end without a start, and a start never ended, are skipped
 * and reported; every message joins two threads at times within the trace.
 */
#include "import/chrome/chrome_int.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- resolution: messages ------------------------------------------------------------- */

lp_status ch_add_msg(cctx *c, uint32_t src, int64_t send, uint32_t dst, int64_t recv, uint64_t id, uint32_t attrs,
                     uint32_t line)
{
    if (lp_grow_at(&c->ms, &c->capms, c->nms + 1, sizeof *c->ms))
        return nomem(c);
    cmsg *m = &c->ms[c->nms++];
    m->src = src;
    m->dst = dst;
    m->send = send;
    m->recv = recv;
    m->id = id;
    m->attrs = attrs;
    m->line = line;
    c->th[src].used = c->th[dst].used = 1;
    return LP_OK;
}

/* The builder's attribute list of kept args (offset in ctx.kvp) plus extra pairs. */
lp_status ch_attrs_plus(cctx *c, uint32_t base, const lp_str *extra, uint32_t nextra, uint32_t *out)
{
    uint32_t nb = base ? c->kvp[base] : 0;
    lp_str kv[2 * (MAX_ARGS + 8)];
    uint32_t np = 0;
    for (uint32_t i = 0; i < nb && np < MAX_ARGS + 4; i++, np++) {
        kv[2 * np] = c->kvp[base + 1 + 2 * i];
        kv[2 * np + 1] = c->kvp[base + 2 + 2 * i];
    }
    for (uint32_t i = 0; i < nextra; i++, np++) {
        kv[2 * np] = extra[2 * i];
        kv[2 * np + 1] = extra[2 * i + 1];
    }
    return lp_builder_attrs(c->b, kv, np, out, c->err);
}

/* Start of the first slice of thread th starting at or after t; INT64_MIN if none. */
static int64_t next_slice_start(const cctx *c, const cthread *th, int64_t t)
{
    const skey *k = c->order + th->first;
    size_t lo = 0, hi = th->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k[mid].start < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < th->count ? k[lo].start : INT64_MIN;
}

int ch_cmp_fkey(const void *a, const void *b)
{
    const fkey *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Time of a flow point: v1 its ts; v2 the slice's start (in) or end (out). */
static int64_t point_time(const cctx *c, const cflow *p, int sending)
{
    if (p->slice == NONE)
        return p->ts;
    const cslice *s = &c->sl[p->slice];
    if (sending)
        return s->end;
    return s->start;
}

/* Where a receiving point delivers: v1 f not bound to its enclosing slice goes to the
 * start of the next slice of its thread; on a Kineto GPU stream, a launch is delivered
 * when the stream could take it. */
static int64_t deliver_time(const cctx *c, const cflow *p, int64_t send)
{
    int64_t r = point_time(c, p, 0);
    const cthread *th = &c->th[p->thread];
    if (p->slice == NONE && p->ph == 'f' && !p->bind_here) {
        int64_t n = next_slice_start(c, th, r);
        if (n != INT64_MIN)
            r = n;
    }
    if (th->gpu && th->gcount) {
        long k = ch_gpu_op_at(c, th, r);
        if (k >= 1) {
            const gop *g = c->gop + th->gfirst;
            int64_t prev_end = g[k - 1].pmax;
            if (send < prev_end && prev_end <= r)
                r = prev_end;
        }
    }
    return r;
}

lp_status ch_resolve_flows(cctx *c)
{
    if (!c->nfl)
        return LP_OK;
    fkey *k = lp_malloc(c->nfl * sizeof *k);
    if (!k)
        return nomem(c);
    size_t nk = 0;
    lp_str s_ac2g = lp_strtab_find(c->st, "ac2g", 4), s_async = lp_strtab_find(c->st, "async", 5),
           s_launch = lp_strtab_find(c->st, "launch", 6);
    for (size_t i = 0; i < c->nfl; i++) {
        const cflow *p = &c->fl[i];
        /* Kineto's launch and sync flows: the correlation ids link the same events */
        if (c->kineto && p->cat != LP_STR_NONE &&
            (p->cat == s_ac2g || (p->cat == s_async && p->name == s_launch))) {
            c->unmodelled[UM_KINETO_FLOW]++;
            continue;
        }
        k[nk].key = p->key;
        k[nk].seq = p->seq;
        /* v2 points order by their slice's start (the event's own time) */
        k[nk].ts = p->slice == NONE ? p->ts : c->sl[p->slice].start;
        k[nk].idx = (uint32_t)i;
        nk++;
    }
    qsort(k, nk, sizeof *k, ch_cmp_fkey);
    lp_status st = LP_OK;
    for (size_t i = 0; i < nk && !st;) {
        size_t j = i;
        while (j < nk && k[j].key == k[i].key)
            j++;
        uint32_t pend = NONE; /* the open point of this flow id */
        /* one start and one end: a pair whatever their times (a message received before
         * it was sent is the builder's to report) */
        if (j - i == 2) {
            const cflow *a = &c->fl[k[i].idx], *z = &c->fl[k[i + 1].idx];
            if ((a->ph == 'f' && z->ph == 's') || (a->ph == 'i' && z->ph == 'o')) {
                fkey tmp = k[i];
                k[i] = k[i + 1];
                k[i + 1] = tmp;
            }
        }
        for (size_t x = i; x < j && !st; x++) {
            const cflow *p = &c->fl[k[x].idx];
            int v2 = p->slice != NONE;
            int starts = v2 ? p->ph == 'o' || p->ph == 'x' : p->ph == 's' || p->ph == 't';
            int ends = v2 ? p->ph == 'i' || p->ph == 'x' : p->ph == 't' || p->ph == 'f';
            if (v2 && (c->sl[p->slice].flags & SL_DROP))
                continue;
            if (ends) {
                if (pend == NONE) {
                    c->skipped[SK_FLOW_NO_START]++;
                    ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, p->line, p->off,
                              "flow %s (ph %c) without a start; ignored", v2 ? "bind_id" : "event", v2 ? 'i' : p->ph);
                } else {
                    const cflow *s = &c->fl[pend];
                    int64_t send = point_time(c, s, 1);
                    if (!v2 || s->slice == NONE) {
                        /* v1 sends at its own time */
                    } else {
                        /* v2: the sender's end, but not after the receiver's start (nor before the sender's start) */
                        int64_t rs = point_time(c, p, 0);
                        if (send > rs)
                            send = rs > c->sl[s->slice].start ? rs : c->sl[s->slice].start;
                    }
                    int64_t recv = deliver_time(c, p, send);
                    uint32_t attrs;
                    lp_str extra[4];
                    uint32_t ne = 0;
                    if (s->name != LP_STR_NONE && !s->lpexport)
                        extra[2 * ne] = c->s_flow, extra[2 * ne + 1] = s->name, ne++;
                    if ((st = ch_attrs_plus(c, s->attrs, extra, ne, &attrs)))
                        break;
                    st = ch_add_msg(c, s->thread, send, p->thread, recv, s->msgid, attrs, s->line);
                }
                pend = NONE;
            }
            if (starts) {
                if (pend != NONE && !ends) {
                    const cflow *o = &c->fl[pend];
                    ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, p->line, p->off,
                              "flow started again before the start at byte %llu ended; the earlier start is dropped",
                              (unsigned long long)o->off);
                    c->skipped[SK_FLOW_NO_END]++;
                }
                pend = k[x].idx;
            }
        }
        if (pend != NONE) {
            const cflow *p = &c->fl[pend];
            c->skipped[SK_FLOW_NO_END]++;
            ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, p->line, p->off, "flow %s never ends; ignored",
                      p->slice != NONE ? "bind_id (flow_out)" : p->ph == 's' ? "start (ph s)" : "step (ph t)");
        }
        i = j;
    }
    lp_free(k);
    return st;
}
