/* causal.c: causal-model inference by rejection (Mystery Machine, OSDI'14 §4.1-4.2;
 * see causal.h and docs/analyses/mystery-inference.md).
 *
 * The model is three bit matrices over segment ids (rows of `words` 64-bit words).
 * Unused rows and columns hold the initial hypothesis (hb, mx all ones; seen zero), so
 * adding a segment never touches existing rows unless the capacity grows.
 * Refinement, per request of n segments: sort the segments by start and by end; the
 * suffix unions SUF[k] (segments whose start rank >= k) and prefix unions PRE[k]
 * (segments whose end rank < k) are built once (n+1 bitsets each), so succ(A) and
 * pred(A) are one binary search and one bitset each. Updating A's rows costs `words`
 * word operations; a request costs O(n log n + n * words). Threads refine disjoint
 * ranges of a block of requests into private matrices that start as "everything
 * hypothesized" and are ANDed (hb, mx) or ORed (seen) into the model in thread order at
 * the end of each block, which is also where convergence is measured.
 */
#include "longpole/analysis/mystery/causal.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "base/pool.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lifecycle ---------------------------------------------------------------------- */

lp_status lp_causal_init(lp_causal *m, lp_error *err)
{
    memset(m, 0, sizeof *m);
    if (lp_strtab_init(&m->names)) {
        lp_strtab_release(&m->names); /* a failed init may have allocated */
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    return LP_OK;
}

static void free_derived(lp_causal *m)
{
    lp_free(m->topo);
    m->topo = NULL;
    for (uint32_t i = 0; i < m->npipes; i++) {
        lp_free(m->pipes[i].a);
        lp_free(m->pipes[i].b);
    }
    lp_free(m->pipes);
    m->pipes = NULL;
    m->npipes = 0;
    m->finished = 0;
}

void lp_causal_release(lp_causal *m)
{
    free_derived(m);
    lp_strtab_release(&m->names);
    lp_free(m->seg_task);
    lp_free(m->seg_from);
    lp_free(m->seg_to);
    lp_free(m->seg_count);
    lp_free(m->seg_cross);
    lp_free(m->seg_dropped);
    lp_free(m->hb);
    lp_free(m->mx);
    lp_free(m->seen);
    lp_free(m->filter);
    lp_free(m->pipe_rej);
    if (m->segmap)
        lp_hmap32_release(m->segmap);
    lp_free(m->segmap);
    memset(m, 0, sizeof *m);
}

static inline uint32_t seg_hash(lp_str t, lp_str f, lp_str e)
{
    return (uint32_t)lp_hash_mix((uint64_t)t << 32 | f, e);
}

/* A segment's names being looked up, for the table's equality callback. */
typedef struct segkey {
    const lp_causal *m;
    lp_str t, f, e;
} segkey;

static inline int same_segment(const void *ctx, uint64_t s)
{
    const segkey *k = ctx;
    return k->m->seg_task[s] == k->t && k->m->seg_from[s] == k->f && k->m->seg_to[s] == k->e;
}

lp_status lp_causal_set_filter(lp_causal *m, const char *regex, lp_error *err)
{
    regex_t re;
    int rc = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char buf[256];
        regerror(rc, &re, buf, sizeof buf);
        return lp_error_set(err, LP_ERR_ARG, "bad filter regex '%s': %s", regex, buf);
    }
    regfree(&re);
    lp_free(m->filter);
    m->filter = lp_strndup(regex, strlen(regex));
    if (!m->filter)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    /* existing segments are re-evaluated */
    if (m->nseg && regcomp(&re, m->filter, REG_EXTENDED | REG_NOSUB) == 0) {
        char lab[1024];
        for (uint32_t s = 0; s < m->nseg; s++)
            m->seg_dropped[s] = regexec(&re, lp_causal_label(m, s, lab, sizeof lab), 0, NULL, 0) == 0;
        regfree(&re);
    }
    return LP_OK;
}

const char *lp_causal_label(const lp_causal *m, uint32_t s, char *buf, size_t n)
{
    snprintf(buf, n, "%s:%s->%s", lp_strtab_get(&m->names, m->seg_task[s]), lp_strtab_get(&m->names, m->seg_from[s]),
             lp_strtab_get(&m->names, m->seg_to[s]));
    return buf;
}

/* Grow the bit matrices to hold `need` segments. */
static int grow_words(lp_causal *m, uint32_t need)
{
    uint32_t w = m->words ? m->words : 1;
    while ((uint64_t)w * 64 < need)
        w *= 2;
    if (w == m->words && m->hb)
        return 0;
    size_t rows = (size_t)w * 64;
    uint64_t *hb = lp_malloc(rows * w * sizeof *hb);
    uint64_t *mx = lp_malloc(rows * w * sizeof *mx);
    uint64_t *seen = lp_calloc(rows * w, sizeof *seen);
    if (!hb || !mx || !seen) {
        lp_free(hb), lp_free(mx), lp_free(seen);
        return -1;
    }
    memset(hb, 0xff, rows * w * sizeof *hb);
    memset(mx, 0xff, rows * w * sizeof *mx);
    for (uint32_t r = 0; r < m->nseg; r++) {
        memcpy(hb + (size_t)r * w, m->hb + (size_t)r * m->words, m->words * sizeof *hb);
        memcpy(mx + (size_t)r * w, m->mx + (size_t)r * m->words, m->words * sizeof *mx);
        memcpy(seen + (size_t)r * w, m->seen + (size_t)r * m->words, m->words * sizeof *seen);
    }
    lp_free(m->hb), lp_free(m->mx), lp_free(m->seen);
    m->hb = hb, m->mx = mx, m->seen = seen;
    m->words = w;
    return 0;
}

uint32_t lp_causal_find(const lp_causal *m, const char *task, const char *from, const char *to)
{
    lp_str t = lp_strtab_find(&m->names, task, strlen(task));
    lp_str f = lp_strtab_find(&m->names, from, strlen(from));
    lp_str e = lp_strtab_find(&m->names, to, strlen(to));
    if (t == LP_STR_NONE || f == LP_STR_NONE || e == LP_STR_NONE || !m->segmap)
        return LP_CAUSAL_NONE;
    segkey k = {m, t, f, e};
    uint32_t s = lp_hmap32_find(m->segmap, seg_hash(t, f, e), same_segment, &k, NULL);
    return s == LP_HMAP32_EMPTY ? LP_CAUSAL_NONE : s;
}

lp_status lp_causal_segment(lp_causal *m, const char *task, const char *from, const char *to, uint32_t *id,
                            lp_error *err)
{
    uint32_t s = lp_causal_find(m, task, from, to);
    if (s != LP_CAUSAL_NONE) {
        *id = s;
        return LP_OK;
    }
    if (m->nseg >= (1u << 24))
        return lp_error_set(err, LP_ERR_LIMIT, "more than %u segments", 1u << 24);
    if (m->nseg == m->capseg) {
        uint32_t nc = m->capseg ? m->capseg * 2 : 64;
        lp_str *a = lp_reallocarray(m->seg_task, nc, sizeof *a);
        if (!a)
            goto nomem;
        m->seg_task = a;
        if (!(a = lp_reallocarray(m->seg_from, nc, sizeof *a)))
            goto nomem;
        m->seg_from = a;
        if (!(a = lp_reallocarray(m->seg_to, nc, sizeof *a)))
            goto nomem;
        m->seg_to = a;
        uint64_t *c = lp_reallocarray(m->seg_count, nc, sizeof *c);
        if (!c)
            goto nomem;
        m->seg_count = c;
        uint8_t *x = lp_reallocarray(m->seg_cross, nc, 1);
        if (!x)
            goto nomem;
        m->seg_cross = x;
        if (!(x = lp_reallocarray(m->seg_dropped, nc, 1)))
            goto nomem;
        m->seg_dropped = x;
        m->capseg = nc;
    }
    if (grow_words(m, m->nseg + 1))
        goto nomem;
    if (!m->segmap && !(m->segmap = lp_calloc(1, sizeof *m->segmap))) /* zeroed: an empty table */
        goto nomem;
    s = m->nseg;
    if (lp_strtab_intern(&m->names, task, strlen(task), &m->seg_task[s]) ||
        lp_strtab_intern(&m->names, from, strlen(from), &m->seg_from[s]) ||
        lp_strtab_intern(&m->names, to, strlen(to), &m->seg_to[s]))
        goto nomem;
    m->seg_count[s] = 0;
    m->seg_cross[s] = 0;
    m->seg_dropped[s] = 0;
    if (lp_hmap32_add(m->segmap, seg_hash(m->seg_task[s], m->seg_from[s], m->seg_to[s]), s, NULL))
        goto nomem;
    m->nseg++;
    if (m->filter) {
        regex_t re;
        if (regcomp(&re, m->filter, REG_EXTENDED | REG_NOSUB) == 0) {
            char lab[1024];
            m->seg_dropped[s] = regexec(&re, lp_causal_label(m, s, lab, sizeof lab), 0, NULL, 0) == 0;
            regfree(&re);
        }
    }
    free_derived(m);
    *id = s;
    return LP_OK;
nomem:
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
}

lp_status lp_causal_map(lp_causal *m, const lp_reqlog *rl, uint32_t **map, lp_error *err)
{
    *map = lp_malloc((rl->nsegs ? rl->nsegs : 1) * sizeof **map);
    if (!*map)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint32_t s = 0; s < rl->nsegs; s++) {
        lp_status st = lp_causal_segment(m, lp_reqlog_str(rl, rl->task_name[rl->seg_task[s]]),
                                         lp_reqlog_str(rl, rl->event_name[rl->seg_from[s]]),
                                         lp_reqlog_str(rl, rl->event_name[rl->seg_to[s]]), &(*map)[s], err);
        if (st) {
            lp_free(*map);
            *map = NULL;
            return st;
        }
        if (rl->seg_cross[s])
            m->seg_cross[(*map)[s]] = 1;
    }
    return LP_OK;
}

lp_rel lp_causal_rel(const lp_causal *m, uint32_t a, uint32_t b)
{
    uint32_t w = m->words;
    if (a == b || m->seg_dropped[a] || m->seg_dropped[b] || !lp_causal_bit(m->seen, w, a, b))
        return LP_REL_UNSEEN;
    int ab = lp_causal_bit(m->hb, w, a, b), ba = lp_causal_bit(m->hb, w, b, a);
    if (ab && ba)
        return a < b ? LP_REL_BEFORE : LP_REL_AFTER;
    if (ab)
        return LP_REL_BEFORE;
    if (ba)
        return LP_REL_AFTER;
    if (lp_causal_bit(m->mx, w, a, b) && lp_causal_bit(m->mx, w, b, a))
        return LP_REL_EXCLUSIVE;
    return LP_REL_CONCURRENT;
}

/* ---- one request's segments (shared with the pipeline check) ------------------------------ */

typedef struct rseg {
    int64_t start, end;
    uint32_t id;    /* model segment */
} rseg;

/* The request's segments with times made monotone along each task (a later event of a
 * task never precedes an earlier one, even across hosts after skew correction).
 * Returns the count; out has room for the request's row count. */
static size_t request_segments(const lp_reqlog *rl, uint64_t r, const uint32_t *map, const uint8_t *dropped,
                               rseg *out)
{
    uint64_t a = rl->rfirst[r], b = rl->rfirst[r + 1];
    const lp_reqrow *rows = rl->rows;
    size_t n = 0;
    int64_t prev = 0;
    uint32_t ptask = UINT32_MAX;
    for (uint64_t i = a; i < b; i++) {
        uint32_t t = rl->pt_task[rows[i].point];
        int64_t ti = rows[i].time;
        if (t == ptask && ti < prev)
            ti = prev;
        ptask = t;
        prev = ti;
        if (rows[i].seg == LP_REQLOG_NONE)
            continue;
        uint32_t id = map[rows[i].seg];
        int64_t te = rows[i + 1].time; /* the task's next event: same task by construction */
        if (te < ti)
            te = ti;
        if (dropped[id])
            continue;
        out[n].start = ti;
        out[n].end = te;
        out[n].id = id;
        n++;
    }
    return n;
}

/* ---- refinement ------------------------------------------------------------------------ */

typedef struct rf_thread {
    uint64_t *hb, *mx, *seen;   /* private matrices for the block */
    uint64_t *count;            /* per segment */
    uint64_t *present;          /* words */
    uint64_t *suf, *pre;        /* (n+1) * words */
    size_t capn;
    rseg *segs;
    int64_t *skey, *ekey;
    uint32_t *sidx, *eidx;
    size_t caprows;
    int nomem;
} rf_thread;

typedef struct rf_ctx {
    lp_causal *m;
    const lp_reqlog *rl;
    const uint32_t *map;
    rf_thread *th;
    uint64_t lo, hi;            /* the block */
    uint32_t nseg, words;
} rf_ctx;

/* Sort idx[0..n) by key ascending (insertion sort: n is small and runs are sorted). */
static void sort_by(uint32_t *idx, const int64_t *key, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t x = idx[i];
        int64_t k = key[x];
        size_t j = i;
        while (j > 0 && key[idx[j - 1]] > k) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = x;
    }
}

/* The thread's per-row buffers for a request of `rows` rows. */
static int rf_reserve_rows(rf_thread *T, size_t rows)
{
    if (rows <= T->caprows)
        return 0;
    size_t nc = rows * 2;
    rseg *s = lp_reallocarray(T->segs, nc, sizeof *s);
    if (!s)
        return -1;
    T->segs = s;
    int64_t *k1 = lp_reallocarray(T->skey, nc, sizeof *k1);
    if (!k1)
        return -1;
    T->skey = k1;
    int64_t *k2 = lp_reallocarray(T->ekey, nc, sizeof *k2);
    if (!k2)
        return -1;
    T->ekey = k2;
    uint32_t *i1 = lp_reallocarray(T->sidx, nc, sizeof *i1);
    if (!i1)
        return -1;
    T->sidx = i1;
    uint32_t *i2 = lp_reallocarray(T->eidx, nc, sizeof *i2);
    if (!i2)
        return -1;
    T->eidx = i2;
    T->caprows = nc;
    return 0;
}

/* The thread's suffix and prefix sets for n segments of W words. */
static int rf_reserve_sets(rf_thread *T, size_t n, uint32_t W)
{
    if (n + 1 <= T->capn)
        return 0;
    size_t nc = (n + 1) * 2;
    uint64_t *a = lp_reallocarray(T->suf, nc * W, sizeof *a);
    if (!a)
        return -1;
    T->suf = a;
    uint64_t *b = lp_reallocarray(T->pre, nc * W, sizeof *b);
    if (!b)
        return -1;
    T->pre = b;
    T->capn = nc;
    return 0;
}

/* The first start rank with start >= e. */
static inline size_t rf_starts_before(const rf_thread *T, size_t n, int64_t e)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (T->skey[T->sidx[mid]] >= e)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The number of segments with end <= s. */
static inline size_t rf_ends_by(const rf_thread *T, size_t n, int64_t s)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (T->ekey[T->eidx[mid]] <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The refinement with one word per set (at most 64 segments in the model). */
static void rf_one_word(rf_thread *T, const rseg *S, size_t n)
{
    uint64_t *suf = T->suf, *pre = T->pre;
    uint64_t p = 0;
    for (size_t i = 0; i < n; i++)
        p |= 1ULL << S[i].id;
    suf[n] = 0;
    for (size_t k = n; k-- > 0;)
        suf[k] = suf[k + 1] | 1ULL << S[T->sidx[k]].id;
    pre[0] = 0;
    for (size_t k = 0; k < n; k++)
        pre[k + 1] = pre[k] | 1ULL << S[T->eidx[k]].id;
    uint64_t np = ~p;
    for (size_t i = 0; i < n; i++) {
        uint64_t succ = suf[rf_starts_before(T, n, S[i].end)];
        uint64_t pred = pre[rf_ends_by(T, n, S[i].start)];
        uint32_t id = S[i].id;
        T->hb[id] &= succ | np;
        T->mx[id] &= succ | pred | np;
        T->seen[id] |= p;
    }
}

/* The refinement with W words per set. */
static void rf_words(rf_thread *T, const rseg *S, size_t n, uint32_t W)
{
    uint64_t *P = T->present, *suf = T->suf, *pre = T->pre;
    for (size_t i = 0; i < n; i++)
        P[S[i].id >> 6] |= 1ULL << (S[i].id & 63);
    memset(suf + n * W, 0, W * sizeof *suf);
    for (size_t k = n; k-- > 0;) {
        memcpy(suf + k * W, suf + (k + 1) * W, W * sizeof *suf);
        uint32_t id = S[T->sidx[k]].id;
        suf[k * W + (id >> 6)] |= 1ULL << (id & 63);
    }
    memset(pre, 0, W * sizeof *pre);
    for (size_t k = 0; k < n; k++) {
        memcpy(pre + (k + 1) * W, pre + k * W, W * sizeof *pre);
        uint32_t id = S[T->eidx[k]].id;
        pre[(k + 1) * W + (id >> 6)] |= 1ULL << (id & 63);
    }
    for (size_t i = 0; i < n; i++) {
        const uint64_t *succ = suf + rf_starts_before(T, n, S[i].end) * W;
        const uint64_t *pred = pre + rf_ends_by(T, n, S[i].start) * W;
        uint32_t id = S[i].id;
        uint64_t *h = T->hb + (size_t)id * W, *x = T->mx + (size_t)id * W, *sn = T->seen + (size_t)id * W;
        for (uint32_t k = 0; k < W; k++) {
            uint64_t np = ~P[k];
            h[k] &= succ[k] | np;
            x[k] &= succ[k] | pred[k] | np;
            sn[k] |= P[k];
        }
    }
    for (size_t i = 0; i < n; i++)
        P[S[i].id >> 6] = 0;
}

static int rf_request(rf_ctx *C, rf_thread *T, uint64_t r)
{
    const lp_reqlog *rl = C->rl;
    if (rf_reserve_rows(T, (size_t)(rl->rfirst[r + 1] - rl->rfirst[r])))
        return -1;
    size_t n = request_segments(rl, r, C->map, C->m->seg_dropped, T->segs);
    if (n == 0)
        return 0;
    uint32_t W = C->words;
    if (rf_reserve_sets(T, n, W))
        return -1;
    rseg *S = T->segs;
    for (size_t i = 0; i < n; i++) {
        T->skey[i] = S[i].start;
        T->ekey[i] = S[i].end;
        T->sidx[i] = (uint32_t)i;
        T->eidx[i] = (uint32_t)i;
        T->count[S[i].id]++;
    }
    sort_by(T->sidx, T->skey, n);
    sort_by(T->eidx, T->ekey, n);
    if (W == 1)
        rf_one_word(T, S, n);
    else
        rf_words(T, S, n, W);
    return 0;
}

static lp_status rf_worker(void *ctx, size_t tid, size_t nthr, lp_error *err)
{
    rf_ctx *C = ctx;
    rf_thread *T = &C->th[tid];
    uint64_t lo, hi;
    lp_pool_range(C->hi - C->lo, tid, nthr, &lo, &hi);
    size_t cells = (size_t)C->nseg * C->words;
    memset(T->hb, 0xff, cells * sizeof *T->hb);
    memset(T->mx, 0xff, cells * sizeof *T->mx);
    memset(T->seen, 0, cells * sizeof *T->seen);
    for (uint64_t r = C->lo + lo; r < C->lo + hi && !T->nomem; r++) {
        if (C->rl->rbad[r])
            continue;
        if (rf_request(C, T, r))
            T->nomem = 1;
    }
    return LP_OK;
}

static inline uint64_t popc(uint64_t x) { return (uint64_t)__builtin_popcountll(x); }

/* Hypotheses among seen pairs, and how many survive. */
static void measure(const lp_causal *m, lp_causal_conv *c)
{
    uint32_t W = m->words;
    uint64_t pairs = 0, hbl = 0, mxl = 0, rels = 0;
    uint32_t segs = 0;
    for (uint32_t a = 0; a < m->nseg; a++) {
        if (m->seg_count[a])
            segs++;
        if (m->seg_dropped[a])
            continue;
        const uint64_t *s = m->seen + (size_t)a * W, *h = m->hb + (size_t)a * W, *x = m->mx + (size_t)a * W;
        uint64_t ps = 0, ph = 0, px = 0;
        for (uint32_t k = 0; k < W; k++) {
            ps += popc(s[k]);
            ph += popc(s[k] & h[k]);
            px += popc(s[k] & x[k]);
        }
        if (lp_causal_bit(m->seen, W, a, a)) { /* the diagonal is not a pair */
            ps--;
            ph -= (uint64_t)lp_causal_bit(m->hb, W, a, a);
            px -= (uint64_t)lp_causal_bit(m->mx, W, a, a);
        }
        pairs += ps;
        hbl += ph;
        mxl += px;
    }
    /* dropped segments' columns: subtract */
    for (uint32_t a = 0; a < m->nseg; a++) {
        if (m->seg_dropped[a])
            continue;
        for (uint32_t b = 0; b < m->nseg; b++)
            if (b != a && m->seg_dropped[b] && lp_causal_bit(m->seen, W, a, b)) {
                pairs--;
                hbl -= (uint64_t)lp_causal_bit(m->hb, W, a, b);
                mxl -= (uint64_t)lp_causal_bit(m->mx, W, a, b);
            }
    }
    uint64_t hbe, mx, un;
    lp_causal_counts(m, &hbe, NULL, &mx, &un);
    rels = hbe + mx;
    c->segments = segs;
    c->pairs = pairs;
    c->hypotheses = pairs + pairs / 2; /* hb per ordered pair, mx per unordered pair */
    c->remaining = hbl + mxl / 2;
    c->relationships = rels;
}

lp_status lp_causal_refine(lp_causal *m, const lp_reqlog *rl, const uint32_t *map, const lp_causal_refine_opts *o,
                           lp_error *err)
{
    lp_causal_refine_opts def;
    if (!o) {
        memset(&def, 0, sizeof def);
        o = &def;
    }
    free_derived(m);
    unsigned nthr = lp_pool_threads(o->threads, 64);
    if (o->nparts && o->part >= o->nparts)
        return lp_error_set(err, LP_ERR_ARG, "part %llu of %llu", (unsigned long long)o->part,
                            (unsigned long long)o->nparts);
    if (nthr > 1 && rl->nreqs < 2048)
        nthr = 1;
    uint32_t W = m->words ? m->words : 1;
    if (!m->hb && grow_words(m, 1))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    W = m->words;
    size_t cells = (size_t)(m->nseg ? m->nseg : 1) * W;
    rf_thread *th = lp_calloc(nthr, sizeof *th);
    lp_causal_conv *conv = NULL;
    size_t nconv = 0, capconv = 0;
    lp_status st = LP_OK;
    lp_pool *pool = NULL;
    if (!th)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (unsigned t = 0; t < nthr; t++) {
        th[t].hb = lp_malloc(cells * sizeof(uint64_t));
        th[t].mx = lp_malloc(cells * sizeof(uint64_t));
        th[t].seen = lp_malloc(cells * sizeof(uint64_t));
        th[t].count = lp_calloc(m->nseg ? m->nseg : 1, sizeof(uint64_t));
        th[t].present = lp_calloc(W, sizeof(uint64_t));
        if (!th[t].hb || !th[t].mx || !th[t].seen || !th[t].count || !th[t].present) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            goto out;
        }
    }
    uint64_t block = o->block ? o->block : 65536;
    rf_ctx C = {m, rl, map, th, 0, 0, m->nseg, W};
    lp_causal_conv prev;
    memset(&prev, 0, sizeof prev);
    if (o->conv)
        measure(m, &prev);
    uint64_t base_requests = m->nreq, rlo = 0, rhi = rl->nreqs;
    if (o->nparts)
        lp_pool_range(rl->nreqs, (size_t)o->part, (size_t)o->nparts, &rlo, &rhi);
    lp_pool_new(&pool, nthr - 1, NULL); /* one pool for every block; without it, the parts run here */
    for (uint64_t lo = rlo; lo < rhi; lo += block) {
        C.lo = lo;
        C.hi = lo + block < rhi ? lo + block : rhi;
        lp_pool_run(pool, nthr, rf_worker, &C, NULL);
        for (unsigned t = 0; t < nthr; t++)
            if (th[t].nomem) {
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                goto out;
            }
        uint64_t good = 0;
        for (uint64_t r = C.lo; r < C.hi; r++)
            good += !rl->rbad[r];
        /* hypotheses newly seen in this block count as tested from the start */
        lp_causal_conv before = prev;
        if (o->conv) {
            /* seen pairs after the block with the old hb/mx give the hypotheses in play */
            for (unsigned t = 0; t < nthr; t++)
                for (size_t i = 0; i < cells; i++)
                    m->seen[i] |= th[t].seen[i];
            measure(m, &before);
        }
        for (unsigned t = 0; t < nthr; t++) {
            for (size_t i = 0; i < cells; i++) {
                m->hb[i] &= th[t].hb[i];
                m->mx[i] &= th[t].mx[i];
                m->seen[i] |= th[t].seen[i];
            }
            for (uint32_t s = 0; s < m->nseg; s++) {
                m->seg_count[s] += th[t].count[s];
                th[t].count[s] = 0;
            }
        }
        m->nreq += good;
        if (o->conv) {
            lp_causal_conv now;
            measure(m, &now);
            now.requests = m->nreq - base_requests;
            now.rejected = before.remaining - now.remaining;
            if (nconv == capconv) {
                void *p = conv;
                size_t c = capconv;
                if (lp_grow(&p, &c, nconv + 1, sizeof *conv)) {
                    st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                    goto out;
                }
                conv = p;
                capconv = c;
            }
            conv[nconv++] = now;
            prev = now;
        }
        if (o->progress)
            o->progress(o->progress_ctx, "inferring", C.hi - rlo, rhi - rlo);
    }
out:
    lp_pool_free(pool);
    for (unsigned t = 0; t < nthr; t++) {
        lp_free(th[t].hb), lp_free(th[t].mx), lp_free(th[t].seen), lp_free(th[t].count);
        lp_free(th[t].present), lp_free(th[t].suf), lp_free(th[t].pre), lp_free(th[t].segs);
        lp_free(th[t].skey), lp_free(th[t].ekey), lp_free(th[t].sidx), lp_free(th[t].eidx);
    }
    lp_free(th);
    if (st == LP_OK && o->conv) {
        *o->conv = conv;
        *o->nconv = nconv;
    } else {
        lp_free(conv);
    }
    return st;
}

/* ---- derived: order, direct edges, pipelines ---------------------------------------------- */

/* Reported happens-before edges as rows (a -> b). */
static uint64_t *edges(const lp_causal *m)
{
    uint32_t W = m->words, S = m->nseg;
    uint64_t *e = lp_calloc((size_t)(S ? S : 1) * W, sizeof *e);
    if (!e)
        return NULL;
    for (uint32_t a = 0; a < S; a++)
        for (uint32_t b = 0; b < S; b++)
            if (lp_causal_rel(m, a, b) == LP_REL_BEFORE)
                e[(size_t)a * W + (b >> 6)] |= 1ULL << (b & 63);
    return e;
}

/* Kahn's algorithm, lowest id first; a cycle (impossible for a consistent corpus) is
 * broken by taking the lowest remaining id. */
static int topo_order(const lp_causal *m, const uint64_t *e, uint32_t *pos, uint32_t *order)
{
    uint32_t S = m->nseg, W = m->words;
    uint32_t *indeg = lp_calloc(S ? S : 1, sizeof *indeg);
    uint8_t *done = lp_calloc(S ? S : 1, 1);
    if (!indeg || !done) {
        lp_free(indeg), lp_free(done);
        return -1;
    }
    for (uint32_t a = 0; a < S; a++)
        for (uint32_t b = 0; b < S; b++)
            if ((e[(size_t)a * W + (b >> 6)] >> (b & 63)) & 1)
                indeg[b]++;
    for (uint32_t k = 0; k < S; k++) {
        uint32_t pick = UINT32_MAX;
        for (uint32_t s = 0; s < S; s++)
            if (!done[s] && indeg[s] == 0) {
                pick = s;
                break;
            }
        if (pick == UINT32_MAX)
            for (uint32_t s = 0; s < S; s++)
                if (!done[s]) {
                    pick = s;
                    break;
                }
        done[pick] = 1;
        pos[pick] = k;
        if (order)
            order[k] = pick;
        for (uint32_t b = 0; b < S; b++)
            if (((e[(size_t)pick * W + (b >> 6)] >> (b & 63)) & 1) && indeg[b])
                indeg[b]--;
    }
    lp_free(indeg);
    lp_free(done);
    return 0;
}

lp_status lp_causal_direct(const lp_causal *m, uint64_t **rows, lp_error *err)
{
    uint32_t S = m->nseg, W = m->words;
    *rows = NULL;
    uint64_t *e = edges(m);
    uint32_t *pos = lp_malloc((S ? S : 1) * sizeof *pos);
    uint32_t *order = lp_malloc((S ? S : 1) * sizeof *order);
    uint64_t *reach = lp_calloc((size_t)(S ? S : 1) * W, sizeof *reach);
    uint64_t *acc = lp_malloc(W * sizeof *acc);
    if (!e || !pos || !order || !reach || !acc || topo_order(m, e, pos, order)) {
        lp_free(e), lp_free(pos), lp_free(order), lp_free(reach), lp_free(acc);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    /* reverse topological order: reach[a] = e[a] | reach of its successors */
    for (uint32_t k = S; k-- > 0;) {
        uint32_t a = order[k];
        uint64_t *ea = e + (size_t)a * W, *ra = reach + (size_t)a * W;
        memset(acc, 0, W * sizeof *acc);
        for (uint32_t w = 0; w < W; w++)
            for (uint64_t bits = ea[w]; bits; bits &= bits - 1) {
                uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(bits);
                if (pos[b] <= pos[a])
                    continue; /* a broken cycle */
                const uint64_t *rb = reach + (size_t)b * W;
                for (uint32_t x = 0; x < W; x++)
                    acc[x] |= rb[x];
            }
        for (uint32_t x = 0; x < W; x++) {
            ra[x] = ea[x] | acc[x];
            ea[x] &= ~acc[x];
        }
    }
    lp_free(pos), lp_free(order), lp_free(reach), lp_free(acc);
    *rows = e;
    return LP_OK;
}

void lp_causal_counts(const lp_causal *m, uint64_t *hb, uint64_t *hb_direct, uint64_t *mx, uint64_t *unseen_pairs)
{
    uint64_t h = 0, x = 0, u = 0;
    for (uint32_t a = 0; a < m->nseg; a++)
        for (uint32_t b = a + 1; b < m->nseg; b++) {
            if (m->seg_dropped[a] || m->seg_dropped[b])
                continue;
            lp_rel r = lp_causal_rel(m, a, b);
            h += r == LP_REL_BEFORE || r == LP_REL_AFTER;
            x += r == LP_REL_EXCLUSIVE;
            u += r == LP_REL_UNSEEN;
        }
    *hb = h;
    *mx = x;
    *unseen_pairs = u;
    if (hb_direct) {
        *hb_direct = 0;
        uint64_t *d;
        lp_error e;
        if (lp_causal_direct(m, &d, &e) == LP_OK) {
            for (size_t i = 0; i < (size_t)m->nseg * m->words; i++)
                *hb_direct += popc(d[i]);
            lp_free(d);
        }
    }
}

static int pipe_rejected(const lp_causal *m, lp_str t1, lp_str t2)
{
    for (uint32_t i = 0; i < m->npipe_rej; i++)
        if (m->pipe_rej[2 * i] == t1 && m->pipe_rej[2 * i + 1] == t2)
            return 1;
    return 0;
}

typedef struct pp_ctx {
    const lp_causal *m;
    const lp_reqlog *rl;
    const uint32_t *map;
    uint8_t *rej;        /* [nthreads * npipes] */
    uint64_t lo, hi;     /* the requests checked */
    int64_t **start;     /* per thread: start per model segment, INT64_MIN if absent */
    rseg **segs;
    size_t *capsegs;
    int *nomem;
} pp_ctx;

static lp_status pp_worker(void *ctx, size_t tid, size_t nthr, lp_error *err)
{
    pp_ctx *C = ctx;
    const lp_causal *m = C->m;
    uint64_t lo, hi;
    lp_pool_range(C->hi - C->lo, tid, nthr, &lo, &hi);
    lo += C->lo, hi += C->lo;
    int64_t *start = C->start[tid];
    uint8_t *rej = C->rej + (size_t)tid * m->npipes;
    for (uint64_t r = lo; r < hi; r++) {
        if (C->rl->rbad[r])
            continue;
        size_t rows = (size_t)(C->rl->rfirst[r + 1] - C->rl->rfirst[r]);
        if (rows > C->capsegs[tid]) {
            rseg *s = lp_reallocarray(C->segs[tid], rows * 2, sizeof *s);
            if (!s) {
                C->nomem[tid] = 1;
                return LP_OK;
            }
            C->segs[tid] = s;
            C->capsegs[tid] = rows * 2;
        }
        rseg *S = C->segs[tid];
        size_t n = request_segments(C->rl, r, C->map, m->seg_dropped, S);
        for (size_t i = 0; i < n; i++)
            start[S[i].id] = S[i].start;
        for (uint32_t p = 0; p < m->npipes; p++) {
            if (rej[p])
                continue;
            const lp_causal_pipe *pp = &m->pipes[p];
            for (uint32_t i = 0; i < pp->npairs && !rej[p]; i++) {
                int64_t ai = start[pp->a[i]], bi = start[pp->b[i]];
                if (ai == INT64_MIN || bi == INT64_MIN)
                    continue;
                for (uint32_t j = i + 1; j < pp->npairs; j++) {
                    int64_t aj = start[pp->a[j]], bj = start[pp->b[j]];
                    if (aj == INT64_MIN || bj == INT64_MIN)
                        continue;
                    int oa = (ai > aj) - (ai < aj), ob = (bi > bj) - (bi < bj);
                    if (oa * ob < 0) {
                        rej[p] = 1;
                        break;
                    }
                }
            }
        }
        for (size_t i = 0; i < n; i++)
            start[S[i].id] = INT64_MIN;
    }
    return LP_OK;
}

/* The pipeline search of lp_causal_finish: the tasks, and per consumer task the pairs
 * (t1, a, b) found so far. */
typedef struct plsearch {
    const uint64_t *e;       /* direct happens-before edges, rows of W words */
    const uint32_t *order;   /* segments in topological order */
    uint32_t S, W, ntask;
    lp_str *tasks;           /* [ntask] task names */
    uint32_t *tix;           /* [S] task index of each segment */
    uint32_t *fcur, *lastf, *npairs, *touched; /* per task */
    uint8_t *mono;           /* per task: its f stays in topological order */
    uint32_t *pa, *pt, *pb;  /* the current consumer's pairs: a, t1, b */
    size_t cappairs, npp;
} plsearch;

static int pl_alloc(plsearch *P, const lp_causal *m)
{
    uint32_t S = P->S;
    P->tasks = lp_malloc(S * sizeof *P->tasks);
    P->tix = lp_malloc(S * sizeof *P->tix);
    P->fcur = lp_malloc(S * sizeof *P->fcur), P->lastf = lp_malloc(S * sizeof *P->lastf);
    P->npairs = lp_malloc(S * sizeof *P->npairs), P->touched = lp_malloc(S * sizeof *P->touched);
    P->mono = lp_malloc(S);
    P->pa = lp_malloc((size_t)S * 2 * sizeof *P->pa);
    P->pt = lp_malloc(S * sizeof *P->pt), P->pb = lp_malloc(S * sizeof *P->pb);
    P->cappairs = S;
    if (!P->tasks || !P->tix || !P->fcur || !P->lastf || !P->npairs || !P->touched || !P->mono || !P->pa || !P->pt ||
        !P->pb)
        return -1;
    for (uint32_t s2 = 0; s2 < S; s2++) {
        uint32_t k;
        for (k = 0; k < P->ntask && P->tasks[k] != m->seg_task[s2]; k++)
            ;
        if (k == P->ntask)
            P->tasks[P->ntask++] = m->seg_task[s2];
        P->tix[s2] = k;
    }
    for (uint32_t t = 0; t < P->ntask; t++)
        P->fcur[t] = P->lastf[t] = UINT32_MAX;
    return 0;
}

static void pl_free(plsearch *P)
{
    lp_free(P->tasks), lp_free(P->pa), lp_free(P->pb), lp_free(P->tix), lp_free(P->fcur), lp_free(P->lastf);
    lp_free(P->npairs), lp_free(P->touched), lp_free(P->mono), lp_free(P->pt);
}

/* Record the pair (t, f, b). */
static int pl_pair(plsearch *P, uint32_t t, uint32_t f, uint32_t b)
{
    if (P->npp == P->cappairs) {
        size_t nc = P->cappairs * 2;
        uint32_t *x1 = lp_reallocarray(P->pa, nc, sizeof *P->pa), *x2 = x1 ? lp_reallocarray(P->pt, nc, sizeof *P->pt) : NULL;
        if (x1)
            P->pa = x1;
        if (x2)
            P->pt = x2;
        uint32_t *x3 = x2 ? lp_reallocarray(P->pb, nc, sizeof *P->pb) : NULL;
        if (!x3)
            return -1;
        P->pb = x3;
        P->cappairs = nc;
    }
    P->pt[P->npp] = t;
    P->pa[P->npp] = f;
    P->pb[P->npp] = b;
    P->npp++;
    return 0;
}

/* Consumer task j: its segments b in topological order; for every other task t1, f(b)
 * = the last segment of t1 (topologically) happening before b; each new f gives a
 * pair. One scan of each b's column. */
static int pl_consumer(plsearch *P, const lp_causal *m, uint32_t j)
{
    const uint32_t S = P->S, W = P->W;
    const uint64_t *e = P->e;
    for (uint32_t t = 0; t < P->ntask; t++)
        P->lastf[t] = UINT32_MAX, P->npairs[t] = 0, P->mono[t] = 1;
    P->npp = 0;
    for (uint32_t k = 0; k < S; k++) {
        uint32_t b = P->order[k];
        if (m->seg_dropped[b] || P->tix[b] != j)
            continue;
        uint32_t nt = 0;
        for (uint32_t a = 0; a < S; a++) {
            if (P->tix[a] == j || m->seg_dropped[a] || !((e[(size_t)a * W + (b >> 6)] >> (b & 63)) & 1))
                continue;
            uint32_t t = P->tix[a];
            if (P->fcur[t] == UINT32_MAX) {
                P->touched[nt++] = t;
                P->fcur[t] = a;
            } else if (m->topo[a] > m->topo[P->fcur[t]]) {
                P->fcur[t] = a;
            }
        }
        for (uint32_t x = 0; x < nt; x++) {
            uint32_t t = P->touched[x], f = P->fcur[t];
            P->fcur[t] = UINT32_MAX;
            if (f == P->lastf[t])
                continue;
            if (P->lastf[t] != UINT32_MAX && m->topo[f] < m->topo[P->lastf[t]])
                P->mono[t] = 0;
            P->lastf[t] = f;
            P->npairs[t]++;
            if (pl_pair(P, t, f, b))
                return -1;
        }
    }
    return 0;
}

/* The pipelines into consumer task j: every producer with two pairs or more in
 * topological order, not rejected before. */
static int pl_pipes(plsearch *P, lp_causal *m, uint32_t j)
{
    for (uint32_t t = 0; t < P->ntask; t++) {
        if (t == j || P->npairs[t] < 2 || !P->mono[t] || pipe_rejected(m, P->tasks[t], P->tasks[j]))
            continue;
        lp_causal_pipe *pp = lp_reallocarray(m->pipes, m->npipes + 1, sizeof *pp);
        if (!pp)
            return -1;
        m->pipes = pp;
        pp = &m->pipes[m->npipes];
        pp->t1 = P->tasks[t];
        pp->t2 = P->tasks[j];
        pp->npairs = P->npairs[t];
        pp->a = lp_malloc(P->npairs[t] * sizeof *pp->a);
        pp->b = lp_malloc(P->npairs[t] * sizeof *pp->b);
        m->npipes++;
        if (!pp->a || !pp->b)
            return -1;
        uint32_t q = 0;
        for (size_t x = 0; x < P->npp; x++)
            if (P->pt[x] == t) {
                pp->a[q] = P->pa[x];
                pp->b[q] = P->pb[x];
                q++;
            }
    }
    return 0;
}

/* FIFO counterexamples among requests [lo, hi): out[p] |= 1 for each candidate some
 * request contradicts. Returns 0, or -1 when out of memory. */
static int pl_check(const lp_causal *m, const lp_reqlog *rl, const uint32_t *map, uint64_t lo, uint64_t hi,
                    uint8_t *out)
{
    uint32_t S = m->nseg;
    unsigned nthr = lp_pool_threads(0, 64);
    if (hi - lo < 4096)
        nthr = 1;
    pp_ctx C;
    memset(&C, 0, sizeof C);
    C.m = m;
    C.rl = rl;
    C.map = map;
    C.lo = lo;
    C.hi = hi;
    C.rej = lp_calloc((size_t)nthr * m->npipes + 1, 1);
    C.start = lp_calloc(nthr, sizeof *C.start);
    C.segs = lp_calloc(nthr, sizeof *C.segs);
    C.capsegs = lp_calloc(nthr, sizeof *C.capsegs);
    C.nomem = lp_calloc(nthr, sizeof *C.nomem);
    int ok = C.rej && C.start && C.segs && C.capsegs && C.nomem;
    for (unsigned t = 0; ok && t < nthr; t++) {
        C.start[t] = lp_malloc((S ? S : 1) * sizeof **C.start);
        if (!C.start[t])
            ok = 0;
        else
            for (uint32_t s = 0; s < S; s++)
                C.start[t][s] = INT64_MIN;
    }
    if (ok) {
        lp_pool *pool = NULL;
        lp_pool_new(&pool, nthr - 1, NULL); /* without it, the parts run here */
        lp_pool_run(pool, nthr, pp_worker, &C, NULL);
        lp_pool_free(pool);
        for (unsigned t = 0; t < nthr; t++)
            if (C.nomem[t])
                ok = 0;
    }
    if (ok)
        for (uint32_t p = 0; p < m->npipes; p++)
            for (unsigned t = 0; t < nthr; t++)
                out[p] |= C.rej[(size_t)t * m->npipes + p];
    if (C.start)
        for (unsigned t = 0; t < nthr; t++)
            lp_free(C.start[t]);
    if (C.segs)
        for (unsigned t = 0; t < nthr; t++)
            lp_free(C.segs[t]);
    lp_free(C.rej), lp_free(C.start), lp_free(C.segs), lp_free(C.capsegs), lp_free(C.nomem);
    return ok ? 0 : -1;
}

/* Drop the candidates with rej[p] set, remembering them in pipe_rej. 0, or -1 when out
 * of memory. */
static int pl_reject(lp_causal *m, const uint8_t *rej)
{
    uint32_t keep = 0;
    int ok = 1;
    for (uint32_t p = 0; p < m->npipes; p++) {
        if (ok && rej[p]) {
            lp_str *pr = lp_reallocarray(m->pipe_rej, 2 * (m->npipe_rej + 1), sizeof *pr);
            if (pr) {
                m->pipe_rej = pr;
                pr[2 * m->npipe_rej] = m->pipes[p].t1;
                pr[2 * m->npipe_rej + 1] = m->pipes[p].t2;
                m->npipe_rej++;
                lp_free(m->pipes[p].a);
                lp_free(m->pipes[p].b);
                continue;
            }
            ok = 0;
        }
        m->pipes[keep++] = m->pipes[p];
    }
    m->npipes = keep;
    return ok ? 0 : -1;
}

/* FIFO counterexamples: pipelines some request contradicts are rejected (remembered in
 * pipe_rej). Returns 0, or -1 when out of memory. */
static int pl_fifo(lp_causal *m, const lp_reqlog *rl, const uint32_t *map)
{
    uint8_t *rej = lp_calloc(m->npipes + 1, 1);
    int rc = !rej || pl_check(m, rl, map, 0, rl->nreqs, rej) || pl_reject(m, rej) ? -1 : 0;
    lp_free(rej);
    return rc;
}

lp_status lp_causal_pipes_check(const lp_causal *m, const lp_reqlog *rl, const uint32_t *map, uint64_t part,
                                uint64_t nparts, uint8_t *rej, lp_error *err)
{
    uint64_t lo = 0, hi = rl->nreqs;
    if (nparts && part >= nparts)
        return lp_error_set(err, LP_ERR_ARG, "part %llu of %llu", (unsigned long long)part,
                            (unsigned long long)nparts);
    if (nparts)
        lp_pool_range(rl->nreqs, (size_t)part, (size_t)nparts, &lo, &hi);
    if (m->npipes && pl_check(m, rl, map, lo, hi, rej))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    return LP_OK;
}

lp_status lp_causal_pipes_reject(lp_causal *m, const uint8_t *rej, lp_error *err)
{
    if (pl_reject(m, rej))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    return LP_OK;
}

/* ---- the mergeable state (causal.h) -------------------------------------------------------- */

void lp_causal_state_size(const lp_causal *m, size_t *nand, size_t *nsum)
{
    *nand = 3 * (size_t)m->nseg * m->words;
    *nsum = (size_t)m->nseg + 1;
}

void lp_causal_state_get(const lp_causal *m, uint64_t *andw, uint64_t *sumw)
{
    size_t cells = (size_t)m->nseg * m->words;
    if (cells) {
        memcpy(andw, m->hb, cells * sizeof *andw);
        memcpy(andw + cells, m->mx, cells * sizeof *andw);
    }
    for (size_t i = 0; i < cells; i++)
        andw[2 * cells + i] = ~m->seen[i];
    for (uint32_t s = 0; s < m->nseg; s++)
        sumw[s] = m->seg_count[s];
    sumw[m->nseg] = m->nreq;
}

void lp_causal_state_set(lp_causal *m, const uint64_t *andw, const uint64_t *sumw)
{
    size_t cells = (size_t)m->nseg * m->words;
    free_derived(m);
    if (cells) {
        memcpy(m->hb, andw, cells * sizeof *andw);
        memcpy(m->mx, andw + cells, cells * sizeof *andw);
    }
    for (size_t i = 0; i < cells; i++)
        m->seen[i] = ~andw[2 * cells + i];
    for (uint32_t s = 0; s < m->nseg; s++)
        m->seg_count[s] = sumw[s];
    m->nreq = sumw[m->nseg];
}

lp_status lp_causal_finish(lp_causal *m, const lp_reqlog *rl, const uint32_t *map, lp_error *err)
{
    free_derived(m);
    uint32_t S = m->nseg, W = m->words;
    if (S == 0) {
        m->finished = 1;
        return LP_OK;
    }
    uint64_t *e = edges(m);
    m->topo = lp_malloc(S * sizeof *m->topo);
    uint32_t *order = lp_malloc(S * sizeof *order);
    if (!e || !m->topo || !order || topo_order(m, e, m->topo, order)) {
        lp_free(e), lp_free(order);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    /* pipelines: O(S^2) per consumer task (pl_consumer) */
    plsearch P;
    memset(&P, 0, sizeof P);
    P.e = e, P.order = order, P.S = S, P.W = W;
    int bad = pl_alloc(&P, m);
    for (uint32_t j = 0; j < P.ntask && !bad; j++)
        bad = pl_consumer(&P, m, j) || pl_pipes(&P, m, j);
    if (!bad && rl && m->npipes)
        bad = pl_fifo(m, rl, map);
    pl_free(&P);
    lp_free(e), lp_free(order);
    if (bad)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    m->finished = 1;
    return LP_OK;
}

/* ---- comparison --------------------------------------------------------------------------- */

static int is_rel(lp_rel r) { return r == LP_REL_BEFORE || r == LP_REL_AFTER || r == LP_REL_EXCLUSIVE; }

lp_status lp_causal_compare(const lp_causal *m, const lp_causal *ref, lp_causal_diff *d, lp_causal_diff_fn fn,
                            void *ctx, lp_error *err)
{
    memset(d, 0, sizeof *d);
    uint32_t *tomap = lp_malloc((ref->nseg ? ref->nseg : 1) * sizeof *tomap);
    if (!tomap)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint32_t s = 0; s < ref->nseg; s++) {
        tomap[s] = lp_causal_find(m, lp_strtab_get(&ref->names, ref->seg_task[s]),
                                  lp_strtab_get(&ref->names, ref->seg_from[s]),
                                  lp_strtab_get(&ref->names, ref->seg_to[s]));
        if (tomap[s] == LP_CAUSAL_NONE)
            d->only_ref++;
    }
    uint64_t inm = 0;
    for (uint32_t s = 0; s < ref->nseg; s++)
        inm += tomap[s] != LP_CAUSAL_NONE;
    d->only_m = m->nseg - inm;
    char la[1024], lb[1024];
    for (uint32_t a = 0; a < ref->nseg; a++) {
        if (tomap[a] == LP_CAUSAL_NONE)
            continue;
        for (uint32_t b = a + 1; b < ref->nseg; b++) {
            if (tomap[b] == LP_CAUSAL_NONE)
                continue;
            lp_rel want = lp_causal_rel(ref, a, b), got = lp_causal_rel(m, tomap[a], tomap[b]);
            if (want == LP_REL_UNSEEN || got == LP_REL_UNSEEN)
                continue;
            /* normalize "both ways" ties: compare by the relation's meaning */
            d->compared++;
            if (want == got)
                continue;
            if (is_rel(want))
                d->missed++;
            if (is_rel(got))
                d->spurious++;
            if (fn)
                fn(ctx, lp_causal_label(ref, a, la, sizeof la), lp_causal_label(ref, b, lb, sizeof lb), want, got);
        }
    }
    /* pipelines, by task names and pair labels */
    for (int side = 0; side < 2; side++) {
        const lp_causal *x = side ? m : ref, *y = side ? ref : m;
        for (uint32_t p = 0; p < x->npipes; p++) {
            const lp_causal_pipe *pp = &x->pipes[p];
            const char *t1 = lp_strtab_get(&x->names, pp->t1), *t2 = lp_strtab_get(&x->names, pp->t2);
            int found = 0;
            for (uint32_t q = 0; q < y->npipes && !found; q++) {
                const lp_causal_pipe *qq = &y->pipes[q];
                if (strcmp(t1, lp_strtab_get(&y->names, qq->t1)) || strcmp(t2, lp_strtab_get(&y->names, qq->t2)) ||
                    qq->npairs != pp->npairs)
                    continue;
                int same = 1;
                for (uint32_t i = 0; i < pp->npairs && same; i++) {
                    lp_causal_label(x, pp->a[i], la, sizeof la);
                    same = strcmp(la, lp_causal_label(y, qq->a[i], lb, sizeof lb)) == 0;
                    if (same) {
                        lp_causal_label(x, pp->b[i], la, sizeof la);
                        same = strcmp(la, lp_causal_label(y, qq->b[i], lb, sizeof lb)) == 0;
                    }
                }
                found = same;
            }
            if (!found) {
                if (side)
                    d->pipes_spurious++;
                else
                    d->pipes_missed++;
            }
        }
    }
    lp_free(tomap);
    return LP_OK;
}
