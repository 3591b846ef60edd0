/* breakdown.c: critical-path time by key beside the conventional profile (see breakdown.h).
 * The profile counts busy time: every activity except `waiting` and filled gaps (both
 * summed apart), and the wall-clock time during which at least one message between two
 * workers is in flight (the union of their [send, receive] intervals: overlapping
 * messages count once).
 * Keys are dense small integers except operators (string ids), which go through a
 * slot table; one pass over the activities, one over the messages (the union:
 * a sweep over the intervals in start or end order, sorted only when the trace has them
 * in neither), one over the path, shared by every grouping asked for at once
 * (lp_breakdown_compute_set: `cp` computes all three in one pass). */
#include "longpole/analysis/critical-path/breakdown.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

const char *lp_group_name(lp_group g)
{
    return g == LP_BY_TYPE ? "type" : g == LP_BY_WORKER ? "worker" : "operator";
}

void lp_breakdown_release(lp_breakdown *b)
{
    lp_free(b->rows);
    memset(b, 0, sizeof *b);
}

const char *lp_breakdown_label(const lp_trace *t, const lp_breakdown *b, const lp_brow *r)
{
    if (r->key == LP_KEY_COMM)
        return "communication";
    if (r->key == LP_KEY_NONE)
        return "-";
    switch (b->by) {
    case LP_BY_TYPE: return lp_trace_type_name(t, r->key);
    case LP_BY_WORKER: return lp_trace_worker_name(t, r->key);
    case LP_BY_OPERATOR: return lp_trace_str(t, r->key);
    }
    return "?";
}

static int cmp_ival(const void *pa, const void *pb)
{
    const lp_ival *a = pa, *b = pb;
    return a->s < b->s ? -1 : a->s > b->s;
}

int64_t lp_ival_union(lp_ival *v, size_t n)
{
    if (n == 0) /* (v may be NULL then: qsort must not see it) */
        return 0;
    qsort(v, n, sizeof *v, cmp_ival);
    int64_t sum = 0, lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && v[i].s <= hi) {
            hi = v[i].e > hi ? v[i].e : hi;
            continue;
        }
        sum += i ? hi - lo : 0;
        lo = v[i].s, hi = v[i].e;
    }
    return sum + (n ? hi - lo : 0);
}

/* The length of the union of the in-flight intervals of the messages between two
 * workers (skewed ones have none), and their number. */
static lp_status comm_union(const lp_trace *t, int64_t *len, uint64_t *count, lp_error *err)
{
    *len = 0;
    *count = 0;
    uint64_t n = 0;
    int by_start = 1, by_end = 1;
    int64_t ps = INT64_MIN, pe = INT64_MIN;
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        if (t->msrc[m] == t->mdst[m])
            continue; /* a worker's message to itself (a timer): its time is that worker's waiting */
        n++;
        if (lp_trace_msg_weight(t, m) <= 0)
            continue;
        by_start &= t->msend[m] >= ps;
        by_end &= t->mrecv[m] >= pe;
        ps = t->msend[m], pe = t->mrecv[m];
    }
    *count = n;
    if (by_start || by_end) { /* sweep forwards by start, or backwards by end */
        int64_t lo = 0, hi = 0, sum = 0;
        int open = 0;
        for (uint64_t k = 0; k < t->nmsgs; k++) {
            uint64_t m = by_start ? k : t->nmsgs - 1 - k;
            if (t->msrc[m] == t->mdst[m] || lp_trace_msg_weight(t, m) <= 0)
                continue;
            int64_t s = t->msend[m], e = t->mrecv[m];
            if (open && (by_start ? s <= hi : e >= lo)) {
                lo = s < lo ? s : lo;
                hi = e > hi ? e : hi;
                continue;
            }
            sum += open ? hi - lo : 0;
            lo = s, hi = e, open = 1;
        }
        *len = sum + (open ? hi - lo : 0);
        return LP_OK;
    }
    lp_ival *v = lp_malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    size_t k = 0;
    for (uint64_t m = 0; m < t->nmsgs; m++)
        if (t->msrc[m] != t->mdst[m] && lp_trace_msg_weight(t, m) > 0)
            v[k++] = (lp_ival){t->msend[m], t->mrecv[m]};
    *len = lp_ival_union(v, k);
    lp_free(v);
    return LP_OK;
}

static int cmp_rows(const void *pa, const void *pb)
{
    const lp_brow *a = pa, *b = pb;
    if (a->path_ns != b->path_ns)
        return a->path_ns > b->path_ns ? -1 : 1;
    if (a->prof_ns != b->prof_ns)
        return a->prof_ns > b->prof_ns ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* The slot of activity i of worker w under grouping `by` (nkeys: the grouping's keys;
 * slot nkeys is "none"). */
static inline size_t act_slot(const lp_trace *t, lp_group by, uint32_t w, uint64_t i, size_t nkeys)
{
    return by == LP_BY_TYPE ? t->atype[i] : by == LP_BY_WORKER ? w : t->aop[i] == LP_STR_NONE ? nkeys : t->aop[i];
}

static size_t group_keys(const lp_trace *t, lp_group by)
{
    return by == LP_BY_TYPE ? t->ntypes : by == LP_BY_WORKER ? t->nworkers : t->strs.n;
}

/* The profile's activity columns of every grouping at once: one pass over the
 * activities (acc[g] has group_keys + 2 slots: + none + comm). */
static void profile_acts(const lp_trace *t, lp_brow *acc[3], int64_t *waiting, int64_t *gaps)
{
    size_t nk[3];
    for (int g = 0; g < 3; g++)
        nk[g] = group_keys(t, (lp_group)g);
    for (uint32_t w = 0; w < t->nworkers; w++)
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++) {
#if defined(__GNUC__)
            if (!(i & 31) && i + 256 < t->nacts) { /* (mapped columns: see cptrace.c) */
                __builtin_prefetch(&t->astart[i + 256]);
                __builtin_prefetch(&t->aend[i + 256]);
                __builtin_prefetch(&t->atype[i + 256]);
                __builtin_prefetch(&t->aop[i + 256]);
                __builtin_prefetch(&t->aflags[i + 256]);
            }
#endif
            int64_t d = t->aend[i] - t->astart[i];
            if (t->atype[i] == LP_TYPE_WAITING) {
                *waiting += d;
                continue;
            }
            if (t->aflags[i] & LP_ACT_GAP) {
                *gaps += d;
                continue;
            }
            for (int g = 0; g < 3; g++)
                if (acc[g]) {
                    size_t s = act_slot(t, (lp_group)g, w, i, nk[g]);
                    acc[g][s].prof_ns += d;
                    acc[g][s].prof_n++;
                }
        }
}

/* Rows from the slots of one grouping, sorted. */
static lp_status finish(lp_brow *acc, size_t nkeys, lp_breakdown *out, lp_error *err)
{
    size_t nslot = nkeys + 2, s_none = nkeys, s_comm = nkeys + 1, nrows = 0;
    for (size_t s = 0; s < nslot; s++)
        nrows += acc[s].prof_n || acc[s].path_n;
    out->rows = lp_malloc((nrows ? nrows : 1) * sizeof *out->rows);
    if (!out->rows)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t s = 0; s < nslot; s++) {
        if (!acc[s].prof_n && !acc[s].path_n)
            continue;
        lp_brow r = acc[s];
        r.key = s == s_comm ? LP_KEY_COMM : s == s_none ? LP_KEY_NONE : (uint32_t)s;
        out->rows[out->n++] = r;
        out->path_total += r.path_ns;
        out->prof_total += r.prof_ns;
    }
    qsort(out->rows, out->n, sizeof *out->rows, cmp_rows);
    return LP_OK;
}

void lp_bprofile_release(lp_bprofile *p)
{
    for (int g = 0; g < 3; g++)
        lp_free(p->acc[g]);
    memset(p, 0, sizeof *p);
}

/* Keys are slots: direct for types/workers (+1 slot for none, +1 for comm). For
 * operators, string ids can be large, so a slot table of size strs.n is used (ids are
 * < strs.n); 40 bytes per string, only for this pass. The groupings asked for (want[g])
 * share one pass over the activities and one over the messages. */
lp_status lp_bprofile_compute(const lp_trace *t, const int want[3], lp_bprofile *p, lp_error *err)
{
    memset(p, 0, sizeof *p);
    for (int g = 0; g < 3; g++) {
        if (!want[g])
            continue;
        p->nk[g] = group_keys(t, (lp_group)g);
        if (!(p->acc[g] = lp_calloc(p->nk[g] + 2, sizeof *p->acc[g]))) {
            lp_bprofile_release(p);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        }
    }
    profile_acts(t, p->acc, &p->waiting_ns, &p->gap_ns);
    int64_t comm_ns;
    uint64_t comm_n;
    lp_status st = comm_union(t, &comm_ns, &comm_n, err);
    if (st) {
        lp_bprofile_release(p);
        return st;
    }
    for (int g = 0; g < 3; g++)
        if (p->acc[g]) {
            p->acc[g][p->nk[g] + 1].prof_ns = comm_ns;
            p->acc[g][p->nk[g] + 1].prof_n = comm_n;
        }
    return LP_OK;
}

lp_status lp_breakdown_finish(const lp_trace *t, const lp_cpath *cp, lp_bprofile *p, lp_breakdown out[3],
                              lp_error *err)
{
    lp_status st = LP_OK;
    for (int g = 0; g < 3; g++) {
        memset(&out[g], 0, sizeof out[g]);
        out[g].by = (lp_group)g;
    }
    for (int g = 0; g < 3 && !st; g++) {
        lp_brow *acc = p->acc[g];
        if (!acc)
            continue;
        out[g].waiting_ns = p->waiting_ns;
        out[g].gap_ns = p->gap_ns;
        for (size_t k = 0; cp && k < cp->n; k++) {
            const lp_cp_elem *e = &cp->e[k];
            size_t s = e->kind == LP_CP_MESSAGE ? p->nk[g] + 1 : act_slot(t, (lp_group)g, e->worker, e->index, p->nk[g]);
            acc[s].path_ns += e->end - e->start;
            acc[s].path_n++;
        }
        st = finish(acc, p->nk[g], &out[g], err);
    }
    lp_bprofile_release(p);
    for (int g = 0; g < 3 && st; g++) {
        lp_breakdown_release(&out[g]);
        out[g].by = (lp_group)g;
    }
    return st;
}

lp_status lp_breakdown_compute_set(const lp_trace *t, const lp_cpath *cp, const int want[3], lp_breakdown out[3],
                                   lp_error *err)
{
    lp_bprofile p;
    lp_status st = lp_bprofile_compute(t, want, &p, err);
    if (st) {
        for (int g = 0; g < 3; g++) {
            memset(&out[g], 0, sizeof out[g]);
            out[g].by = (lp_group)g;
        }
        return st;
    }
    return lp_breakdown_finish(t, cp, &p, out, err);
}

lp_status lp_breakdown_compute(const lp_trace *t, const lp_cpath *cp, lp_group by, lp_breakdown *out,
                               lp_error *err)
{
    int want[3] = {by == LP_BY_TYPE, by == LP_BY_WORKER, by == LP_BY_OPERATOR};
    lp_breakdown all[3];
    lp_status st = lp_breakdown_compute_set(t, cp, want, all, err);
    *out = all[by];
    if (st)
        memset(out, 0, sizeof *out), out->by = by;
    return st;
}
