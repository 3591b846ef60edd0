/* spancp.c: the span-tree critical path (Jaeger UI's walk) and its aggregation over
 * traces at latency percentiles (CRISP), as specified in spancp.h and
 * docs/analyses/span-critical-path.md.
 *
 * Per trace: a DFS from the root keeps the children the parent waits for that fall
 * inside it, clips them, and lists each kept span's kept children contiguously; each
 * list is sorted by (end ascending, start descending, span id descending), so the
 * child the walk wants — the latest to end at or before a bound — is found by binary
 * search below a per-span cursor that only moves down (a child is entered at most
 * once). Sections come out backwards in time and are reversed at the end; adjacent
 * sections of one span are merged. Everything is iterative, so deep trees cannot
 * overflow the stack. Workspace is reused from trace to trace.
 *
 * Aggregation: call paths are interned in a trie keyed by (parent node, operation)
 * in the library's hash table (base/hashmap.h); each trace contributes (node, exclusive time) entries, which
 * percentile tables then accumulate in latency order, snapshotting at each
 * percentile's boundary: one pass over the entries for all percentiles.
 */
#include "longpole/analysis/spans/spancp.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

void lp_spancp_init(lp_spancp *cp) { memset(cp, 0, sizeof *cp); }

void lp_spancp_release(lp_spancp *cp)
{
    lp_free(cp->sec);
    lp_free(cp->visit);
    lp_free(cp->local);
    lp_free(cp->cs);
    lp_free(cp->ce);
    lp_free(cp->koff);
    lp_free(cp->kids);
    lp_free(cp->cursor);
    lp_free(cp->stack);
    lp_free(cp->sortbuf);
    memset(cp, 0, sizeof *cp);
}

static int reserve(lp_spancp *cp, size_t cnt, size_t table)
{
    if (table > cp->captable) {
        uint32_t *l = lp_reallocarray(cp->local, table, sizeof *l);
        if (!l)
            return -1;
        cp->local = l;
        cp->captable = table;
    }
    if (cnt <= cp->cap)
        return 0;
    size_t c = cp->cap ? cp->cap : 64;
    while (c < cnt)
        c *= 2;
#define R(col)                                                   \
    do {                                                         \
        void *p_ = lp_reallocarray(col, c, sizeof *(col));       \
        if (!p_)                                                 \
            return -1;                                           \
        col = p_;                                                \
    } while (0)
    R(cp->cs);
    R(cp->ce);
    R(cp->koff);
    R(cp->kids);
    R(cp->cursor);
    R(cp->stack);
#undef R
    cp->cap = c;
    return 0;
}

static int emit(lp_spancp *cp, uint32_t span, int64_t a, int64_t b)
{
    if (cp->nsec && cp->sec[cp->nsec - 1].span == span && cp->sec[cp->nsec - 1].start == b) {
        cp->sec[cp->nsec - 1].start = a;
        return 0;
    }
    if (cp->nsec == cp->capsec) {
        void *p = cp->sec;
        if (lp_grow(&p, &cp->capsec, cp->nsec + 1, sizeof(lp_spancp_section)))
            return -1;
        cp->sec = p;
    }
    cp->sec[cp->nsec++] = (lp_spancp_section){span, a, b};
    return 0;
}

static int push_visit(lp_spancp *cp, uint32_t span)
{
    if (cp->nvisit == cp->capvisit) {
        void *p = cp->visit;
        if (lp_grow(&p, &cp->capvisit, cp->nvisit + 1, sizeof(lp_spancp_visit)))
            return -1;
        cp->visit = p;
    }
    cp->visit[cp->nvisit++] = (lp_spancp_visit){span, 0};
    return 0;
}

/* kids order: end ascending, then start descending, then span id descending, then
 * span index descending: the last of equal ends is the one that started first, then
 * the one with the smaller id (not the input order, so that a trace gives the same
 * path whatever order its spans come in). */
static int kid_before(const lp_spans *sp, const lp_spancp *cp, const uint32_t *order, uint32_t a, uint32_t b)
{
    if (cp->ce[a] != cp->ce[b])
        return cp->ce[a] < cp->ce[b];
    if (cp->cs[a] != cp->cs[b])
        return cp->cs[a] > cp->cs[b];
    if (sp->id[order[a]] != sp->id[order[b]])
        return sp->id[order[a]] > sp->id[order[b]];
    return order[a] > order[b];
}

/* A large family is sorted on packed keys (the four columns kid_before reads, side by
 * side) by a bottom-up merge sort: sequential passes instead of a heap sort's random
 * reads of four columns (a span with a million children spent most of its critical
 * path there). The order is kid_before's, a total order, so the result is the same. */
typedef struct kidkey {
    int64_t ce, cs;
    uint64_t id;
    uint32_t order, local;
} kidkey;

static inline int key_before(const kidkey *a, const kidkey *b)
{
    if (a->ce != b->ce)
        return a->ce < b->ce;
    if (a->cs != b->cs)
        return a->cs > b->cs;
    if (a->id != b->id)
        return a->id > b->id;
    return a->order > b->order;
}

static int sort_kids_packed(const lp_spans *sp, lp_spancp *cp, const uint32_t *order, uint32_t *k, size_t n)
{
    if (n > SIZE_MAX / (2 * sizeof(kidkey)))
        return -1;
    if (cp->capsort < 2 * n) {
        void *p = lp_realloc(cp->sortbuf, 2 * n * sizeof(kidkey));
        if (!p)
            return -1;
        cp->sortbuf = p;
        cp->capsort = 2 * n;
    }
    kidkey *a = cp->sortbuf, *b = a + n;
    for (size_t i = 0; i < n; i++) {
        uint32_t x = k[i];
        a[i] = (kidkey){cp->ce[x], cp->cs[x], sp->id[order[x]], order[x], x};
    }
    /* runs of 16 by insertion, then merges */
    for (size_t lo = 0; lo < n; lo += 16) {
        size_t hi = lo + 16 < n ? lo + 16 : n;
        for (size_t i = lo + 1; i < hi; i++) {
            kidkey x = a[i];
            size_t j = i;
            for (; j > lo && key_before(&x, &a[j - 1]); j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
    }
    for (size_t w = 16; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                b[o++] = key_before(&a[j], &a[i]) ? a[j++] : a[i++];
            while (i < mid)
                b[o++] = a[i++];
            while (j < hi)
                b[o++] = a[j++];
        }
        kidkey *t = a;
        a = b;
        b = t;
    }
    for (size_t i = 0; i < n; i++)
        k[i] = a[i].local;
    return 0;
}

static void sort_kids(const lp_spans *sp, lp_spancp *cp, const uint32_t *order, uint32_t *k, size_t n)
{
    if (n >= 64 && sort_kids_packed(sp, cp, order, k, n) == 0)
        return;
    if (n < 24) {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = k[i];
            size_t j = i;
            for (; j > 0 && kid_before(sp, cp, order, x, k[j - 1]); j--)
                k[j] = k[j - 1];
            k[j] = x;
        }
        return;
    }
    /* heap sort: no recursion, no allocation */
    for (size_t start = n / 2; start-- > 0;) {
        size_t r = start;
        for (;;) {
            size_t c = 2 * r + 1;
            if (c >= n)
                break;
            if (c + 1 < n && kid_before(sp, cp, order, k[c], k[c + 1]))
                c++;
            if (!kid_before(sp, cp, order, k[r], k[c]))
                break;
            uint32_t t = k[r];
            k[r] = k[c];
            k[c] = t;
            r = c;
        }
    }
    for (size_t end = n; end-- > 1;) {
        uint32_t t = k[0];
        k[0] = k[end];
        k[end] = t;
        size_t r = 0;
        for (;;) {
            size_t c = 2 * r + 1;
            if (c >= end)
                break;
            if (c + 1 < end && kid_before(sp, cp, order, k[c], k[c + 1]))
                c++;
            if (!kid_before(sp, cp, order, k[r], k[c]))
                break;
            uint32_t x = k[r];
            k[r] = k[c];
            k[c] = x;
            r = c;
        }
    }
}

lp_status lp_spancp_trace(lp_spancp *cp, const lp_spans *sp, uint32_t t, lp_error *err)
{
    if (!sp->finished || t >= sp->ntraces)
        return lp_error_set(err, LP_ERR_ARG, "no trace %u in a finished span table", t);
    uint64_t lo = sp->tfirst[t], cnt = sp->tfirst[t + 1] - lo;
    const uint32_t *order = sp->order + lo; /* local index -> span */
    cp->trace = t;
    cp->root = sp->root[t];
    cp->nsec = cp->nvisit = 0;
    cp->start = cp->latency = 0;
    cp->nclipped = cp->noutside = cp->nasync = 0;
    cp->clipped_ns = 0;
    if (cp->root == LP_SPAN_NONE)
        return LP_OK;
    if (reserve(cp, cnt, sp->n))
        return nomem(err);
    for (uint64_t k = 0; k < cnt; k++)
        cp->local[order[k]] = (uint32_t)k;
    /* the tree the walk uses: DFS from the root, clipping */
    uint32_t lroot = cp->local[cp->root];
    cp->cs[lroot] = sp->start[cp->root];
    cp->ce[lroot] = lp_spans_end(sp, cp->root);
    size_t top = 0, nk = 0;
    cp->stack[top++] = lroot;
    while (top) {
        uint32_t p = cp->stack[--top], ps = order[p];
        cp->koff[p] = (uint32_t)nk;
        uint32_t count = 0;
        for (uint32_t q = sp->kfirst[ps]; q < sp->kfirst[ps + 1]; q++) {
            uint32_t c = sp->kids[q];
            int64_t s = sp->start[c], e = lp_spans_end(sp, c);
            if (!lp_spans_blocking(sp, c, ps)) {
                cp->nasync++;
                continue;
            }
            if (!lp_spans_within(s, e, cp->cs[p], cp->ce[p])) {
                cp->noutside++;
                continue;
            }
            if (s < cp->cs[p] || e > cp->ce[p]) {
                cp->nclipped++;
                cp->clipped_ns += (s < cp->cs[p] ? cp->cs[p] - s : 0) + (e > cp->ce[p] ? e - cp->ce[p] : 0);
            }
            uint32_t lc = cp->local[c];
            cp->cs[lc] = s > cp->cs[p] ? s : cp->cs[p];
            cp->ce[lc] = e < cp->ce[p] ? e : cp->ce[p];
            cp->kids[nk++] = lc;
            count++;
        }
        cp->cursor[p] = count;
        for (uint32_t j = 0; j < count; j++)
            cp->stack[top++] = cp->kids[cp->koff[p] + j];
    }
    /* sort each kept span's children: the root's, and those of every kept child */
    sort_kids(sp, cp, order, cp->kids + cp->koff[lroot], cp->cursor[lroot]);
    for (uint64_t j = 0; j < nk; j++) {
        uint32_t x = cp->kids[j];
        if (cp->cursor[x] > 1)
            sort_kids(sp, cp, order, cp->kids + cp->koff[x], cp->cursor[x]);
    }
    /* the walk */
    uint32_t *vidx = cp->stack; /* local -> visit index */
    uint32_t cur = lroot;
    int64_t bound = cp->ce[lroot];
    if (push_visit(cp, cp->root))
        return nomem(err);
    vidx[lroot] = 0;
    for (;;) {
        const uint32_t *k = cp->kids + cp->koff[cur];
        /* largest j < cursor with ce[k[j]] <= bound */
        uint32_t a = 0, b = cp->cursor[cur];
        while (a < b) {
            uint32_t mid = a + (b - a) / 2;
            if (cp->ce[k[mid]] <= bound)
                a = mid + 1;
            else
                b = mid;
        }
        if (a > 0) {
            uint32_t c = k[a - 1];
            cp->cursor[cur] = a - 1;
            if (cp->ce[c] < bound) {
                if (emit(cp, order[cur], cp->ce[c], bound))
                    return nomem(err);
                cp->visit[vidx[cur]].excl += bound - cp->ce[c];
            }
            if (push_visit(cp, order[c]))
                return nomem(err);
            vidx[c] = (uint32_t)cp->nvisit - 1;
            cur = c;
            bound = cp->ce[c];
            continue;
        }
        if (cp->cs[cur] < bound) {
            if (emit(cp, order[cur], cp->cs[cur], bound))
                return nomem(err);
            cp->visit[vidx[cur]].excl += bound - cp->cs[cur];
        }
        if (cur == lroot)
            break;
        bound = cp->cs[cur];
        cur = cp->local[sp->parent[order[cur]]];
    }
    for (size_t i = 0, j = cp->nsec; i + 1 < j; i++, j--) {
        lp_spancp_section x = cp->sec[i];
        cp->sec[i] = cp->sec[j - 1];
        cp->sec[j - 1] = x;
    }
    cp->start = cp->cs[lroot];
    cp->latency = cp->ce[lroot] - cp->cs[lroot];
    return LP_OK;
}

/* ---- aggregation -------------------------------------------------------------------- */

typedef struct trec {
    int64_t latency;
    uint32_t trace;
    uint32_t count;   /* entries */
    uint64_t first;   /* first entry */
} trec;

typedef struct entry {
    uint32_t node;
    int64_t excl;
} entry;

struct lp_spancp_agg {
    const lp_spans *sp;
    uint64_t *opkey;          /* operation: service << 32 | operation (span-table strings) */
    size_t nops, capops;
    lp_hmap opmap;            /* opkey -> op */
    uint32_t *nparent, *nop, *ndepth; /* call-path trie nodes */
    size_t nnodes, capnodes;
    lp_hmap nmap;             /* parent << 32 | op -> node */
    trec *tr;
    size_t ntr, captr;
    entry *ent;
    size_t nent, capent;
    uint32_t *node_of;        /* [table size] span -> node, for the trace being added */
};

lp_status lp_spancp_agg_new(lp_spancp_agg **out, const lp_spans *sp, lp_error *err)
{
    *out = NULL;
    lp_spancp_agg *a = lp_calloc(1, sizeof *a);
    if (!a)
        return nomem(err);
    a->sp = sp;
    a->node_of = lp_malloc((sp->n ? sp->n : 1) * sizeof *a->node_of);
    if (!a->node_of) {
        lp_free(a);
        return nomem(err);
    }
    *out = a;
    return LP_OK;
}

void lp_spancp_agg_free(lp_spancp_agg *a)
{
    if (!a)
        return;
    lp_free(a->opkey);
    lp_hmap_release(&a->opmap);
    lp_free(a->nparent);
    lp_free(a->nop);
    lp_free(a->ndepth);
    lp_hmap_release(&a->nmap);
    lp_free(a->tr);
    lp_free(a->ent);
    lp_free(a->node_of);
    lp_free(a);
}

uint64_t lp_spancp_agg_traces(const lp_spancp_agg *a) { return a->ntr; }

static int op_index(lp_spancp_agg *a, uint64_t key, uint32_t *op)
{
    int added;
    uint64_t v = lp_hmap_get_or_put(&a->opmap, key, a->nops, &added);
    if (v == LP_HMAP_EMPTY)
        return -1;
    *op = (uint32_t)v;
    if (!added)
        return 0;
    void *p = a->opkey;
    if (lp_grow(&p, &a->capops, a->nops + 1, sizeof(uint64_t)))
        return -1;
    a->opkey = p;
    a->opkey[a->nops++] = key;
    return 0;
}

static int node_index(lp_spancp_agg *a, uint32_t parent, uint32_t op, uint32_t *node)
{
    int added;
    uint64_t v = lp_hmap_get_or_put(&a->nmap, (uint64_t)parent << 32 | op, a->nnodes, &added);
    if (v == LP_HMAP_EMPTY)
        return -1;
    *node = (uint32_t)v;
    if (!added)
        return 0;
    if (a->nnodes >= UINT32_MAX - 2)
        return -1;
    if (a->nnodes == a->capnodes) {
        size_t ncap = a->capnodes ? a->capnodes * 2 : 256;
        uint32_t *p1 = lp_reallocarray(a->nparent, ncap, sizeof *p1);
        if (!p1)
            return -1;
        a->nparent = p1;
        uint32_t *p2 = lp_reallocarray(a->nop, ncap, sizeof *p2);
        if (!p2)
            return -1;
        a->nop = p2;
        uint32_t *p3 = lp_reallocarray(a->ndepth, ncap, sizeof *p3);
        if (!p3)
            return -1;
        a->ndepth = p3;
        a->capnodes = ncap;
    }
    uint32_t n = (uint32_t)a->nnodes++;
    a->nparent[n] = parent;
    a->nop[n] = op;
    a->ndepth[n] = parent == UINT32_MAX ? 1 : a->ndepth[parent] + 1;
    return 0;
}

static int cmp_entry(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    return a->node < b->node ? -1 : a->node > b->node;
}

lp_status lp_spancp_agg_add(lp_spancp_agg *a, const lp_spancp *cp, lp_error *err)
{
    const lp_spans *sp = a->sp;
    if (cp->root == LP_SPAN_NONE)
        return LP_OK;
    if (a->ntr == a->captr) {
        void *p = a->tr;
        if (lp_grow(&p, &a->captr, a->ntr + 1, sizeof(trec)))
            return nomem(err);
        a->tr = p;
    }
    uint64_t first = a->nent;
    for (size_t i = 0; i < cp->nvisit; i++) {
        uint32_t s = cp->visit[i].span;
        uint32_t pn = s == cp->root ? UINT32_MAX : a->node_of[sp->parent[s]];
        uint32_t op, node;
        if (op_index(a, (uint64_t)sp->service[s] << 32 | sp->op[s], &op) || node_index(a, pn, op, &node))
            return nomem(err);
        a->node_of[s] = node;
        if (cp->visit[i].excl <= 0)
            continue;
        if (a->nent == a->capent) {
            void *p = a->ent;
            if (lp_grow(&p, &a->capent, a->nent + 1, sizeof(entry)))
                return nomem(err);
            a->ent = p;
        }
        a->ent[a->nent++] = (entry){node, cp->visit[i].excl};
    }
    /* one entry per call path in a trace */
    size_t cnt = a->nent - first;
    if (cnt > 1) {
        if (cnt < 32) {
            entry *e = a->ent + first;
            for (size_t i = 1; i < cnt; i++) {
                entry x = e[i];
                size_t j = i;
                for (; j > 0 && e[j - 1].node > x.node; j--)
                    e[j] = e[j - 1];
                e[j] = x;
            }
        } else {
            qsort(a->ent + first, cnt, sizeof(entry), cmp_entry);
        }
        size_t w = first;
        for (size_t i = first; i < a->nent; i++) {
            if (w > first && a->ent[w - 1].node == a->ent[i].node)
                a->ent[w - 1].excl += a->ent[i].excl;
            else
                a->ent[w++] = a->ent[i];
        }
        a->nent = w;
    }
    a->tr[a->ntr++] = (trec){cp->latency, cp->trace, (uint32_t)(a->nent - first), first};
    return LP_OK;
}

static int cmp_trec(const void *x, const void *y)
{
    const trec *a = x, *b = y;
    if (a->latency != b->latency)
        return a->latency < b->latency ? -1 : 1;
    return a->trace < b->trace ? -1 : a->trace > b->trace;
}

static int cmp_row(const void *x, const void *y)
{
    const lp_spancp_row *a = x, *b = y;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

typedef struct acc {
    int64_t *tot, *max;
    uint64_t *cnt;
} acc;

static lp_spancp_row *snapshot(const acc *c, size_t n, size_t *nrows)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += c->cnt[i] > 0;
    lp_spancp_row *r = lp_malloc((k ? k : 1) * sizeof *r);
    if (!r)
        return NULL;
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (c->cnt[i])
            r[k++] = (lp_spancp_row){(uint32_t)i, c->tot[i], c->max[i], c->cnt[i]};
    qsort(r, k, sizeof *r, cmp_row);
    *nrows = k;
    return r;
}

static int cmp_pidx(const void *x, const void *y)
{
    const double *a = *(const double *const *)x, *b = *(const double *const *)y;
    return *a < *b ? -1 : *a > *b;
}

lp_status lp_spancp_agg_percentiles(lp_spancp_agg *a, const double *p, size_t np, lp_spancp_pct **out, lp_error *err)
{
    *out = NULL;
    for (size_t i = 0; i < np; i++)
        if (!(p[i] > 0 && p[i] <= 100))
            return lp_error_set(err, LP_ERR_ARG, "percentile %g is not in (0, 100]", p[i]);
    lp_spancp_pct *pct = lp_calloc(np ? np : 1, sizeof *pct);
    const double **idx = lp_malloc((np ? np : 1) * sizeof *idx);
    acc no = {0}, op = {0};
    uint32_t *stamp = NULL, *list = NULL;
    int64_t *sum = NULL;
    lp_status st = LP_OK;
    size_t nn = a->nnodes ? a->nnodes : 1, nop = a->nops ? a->nops : 1;
    no.tot = lp_calloc(nn, sizeof *no.tot);
    no.max = lp_calloc(nn, sizeof *no.max);
    no.cnt = lp_calloc(nn, sizeof *no.cnt);
    op.tot = lp_calloc(nop, sizeof *op.tot);
    op.max = lp_calloc(nop, sizeof *op.max);
    op.cnt = lp_calloc(nop, sizeof *op.cnt);
    stamp = lp_malloc(nop * sizeof *stamp);
    list = lp_malloc(nop * sizeof *list);
    sum = lp_malloc(nop * sizeof *sum);
    if (!pct || !idx || !no.tot || !no.max || !no.cnt || !op.tot || !op.max || !op.cnt || !stamp || !list || !sum) {
        st = nomem(err);
        goto out;
    }
    for (size_t i = 0; i < nop; i++)
        stamp[i] = UINT32_MAX;
    for (size_t i = 0; i < np; i++)
        idx[i] = &p[i];
    qsort(idx, np, sizeof *idx, cmp_pidx);
    if (a->ntr > 1)
        qsort(a->tr, a->ntr, sizeof *a->tr, cmp_trec);
    size_t done = 0;
    int64_t latsum = 0;
    for (size_t q = 0; q < np; q++) {
        size_t k = (size_t)(idx[q] - p);
        double want = ceil((double)a->ntr * p[k] / 100.0 - 1e-9);
        size_t upto = a->ntr ? (size_t)want : 0;
        if (a->ntr && upto < 1)
            upto = 1;
        if (upto > a->ntr)
            upto = a->ntr;
        for (; done < upto; done++) {
            const trec *t = &a->tr[done];
            latsum += t->latency;
            size_t nl = 0;
            for (uint64_t e = t->first; e < t->first + t->count; e++) {
                const entry *x = &a->ent[e];
                no.tot[x->node] += x->excl;
                if (x->excl > no.max[x->node])
                    no.max[x->node] = x->excl;
                no.cnt[x->node]++;
                uint32_t o = a->nop[x->node];
                if (stamp[o] != (uint32_t)done) {
                    stamp[o] = (uint32_t)done;
                    sum[o] = 0;
                    list[nl++] = o;
                }
                sum[o] += x->excl;
            }
            for (size_t j = 0; j < nl; j++) {
                uint32_t o = list[j];
                op.tot[o] += sum[o];
                if (sum[o] > op.max[o])
                    op.max[o] = sum[o];
                op.cnt[o]++;
            }
        }
        pct[k].p = p[k];
        pct[k].ntraces = upto;
        pct[k].latency = upto ? a->tr[upto - 1].latency : 0;
        pct[k].latency_sum = latsum;
        pct[k].ops = snapshot(&op, a->nops, &pct[k].nops);
        pct[k].paths = snapshot(&no, a->nnodes, &pct[k].npaths);
        if (!pct[k].ops || !pct[k].paths) {
            st = nomem(err);
            goto out;
        }
    }
out:
    lp_free(idx);
    lp_free(no.tot);
    lp_free(no.max);
    lp_free(no.cnt);
    lp_free(op.tot);
    lp_free(op.max);
    lp_free(op.cnt);
    lp_free(stamp);
    lp_free(list);
    lp_free(sum);
    if (st) {
        lp_spancp_pct_free(pct, np);
        return st;
    }
    *out = pct;
    return LP_OK;
}

void lp_spancp_pct_free(lp_spancp_pct *pct, size_t np)
{
    if (!pct)
        return;
    for (size_t i = 0; i < np; i++) {
        lp_free(pct[i].ops);
        lp_free(pct[i].paths);
    }
    lp_free(pct);
}

void lp_spancp_op_names(const lp_spancp_agg *a, uint32_t op, const char **service, const char **operation)
{
    uint64_t k = a->opkey[op];
    *service = lp_spans_str(a->sp, (lp_str)(k >> 32));
    *operation = lp_spans_str(a->sp, (lp_str)(k & 0xffffffffu));
}

uint32_t lp_spancp_path_op(const lp_spancp_agg *a, uint32_t node) { return a->nop[node]; }

size_t lp_spancp_path_ops(const lp_spancp_agg *a, uint32_t node, uint32_t *ops, size_t max)
{
    size_t depth = a->ndepth[node], k = depth;
    for (uint32_t n = node; n != UINT32_MAX; n = a->nparent[n]) {
        k--;
        if (k < max)
            ops[k] = a->nop[n];
    }
    return depth;
}
uint32_t lp_spancp_path_depth(const lp_spancp_agg *a, uint32_t node) { return a->ndepth[node]; }

/* Append s to buf (bounded), sanitising for folded stacks when fold is set. */
static size_t put(char *buf, size_t size, size_t o, const char *s, int fold)
{
    for (; *s; s++, o++)
        if (o + 1 < size) {
            char c = *s;
            if (fold && (c == ';' || c == '\n' || c == '\r'))
                c = '_';
            buf[o] = c;
        }
    return o;
}

size_t lp_spancp_path_format(const lp_spancp_agg *a, uint32_t node, const char *sep, char *buf, size_t size)
{
    uint32_t depth = a->ndepth[node];
    uint32_t stackbuf[64], *chain = depth <= 64 ? stackbuf : lp_malloc(depth * sizeof *chain);
    if (!chain) {
        if (size)
            buf[0] = '\0';
        return 0;
    }
    uint32_t k = depth;
    for (uint32_t n = node; n != UINT32_MAX; n = a->nparent[n])
        chain[--k] = n;
    int fold = strcmp(sep, ";") == 0;
    size_t o = 0;
    for (uint32_t i = 0; i < depth; i++) {
        const char *svc, *opn;
        lp_spancp_op_names(a, a->nop[chain[i]], &svc, &opn);
        if (i)
            o = put(buf, size, o, sep, 0);
        o = put(buf, size, o, "[", 0);
        o = put(buf, size, o, svc, fold);
        o = put(buf, size, o, "] ", 0);
        o = put(buf, size, o, opn, fold);
    }
    if (size)
        buf[o < size ? o : size - 1] = '\0';
    if (chain != stackbuf)
        lp_free(chain);
    return o;
}
