/* reqpath.c: per-request critical path and slack (OSDI'14 §4.2-4.3; see reqpath.h and
 * docs/analyses/mystery-critical-path.md).
 *
 * Everything is in the request's order (sorted by start, end, topological position,
 * id), so edges only go forward and one pass in each direction computes the longest
 * paths. Rows are bitsets of ceil(n / 64) words: building the edges tests each pair
 * once against the model's bits (64 pairs at a time for a request of at most 64
 * segments with ids below 64: build_edges_small), the transitive reduction ORs the
 * reach sets of each vertex's successors (reverse order), and the path walks use the
 * reduced rows.
 * Zero-length segments at one instant tie in the sort; within such a block the order
 * is re-derived topologically from the edges between its members (task order and the
 * model), lowest key first, so task-order edges never point backwards.
 */
#include "longpole/analysis/mystery/reqpath.h"
#include "longpole/base/alloc.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

void lp_reqpath_init(lp_reqpath *p) { memset(p, 0, sizeof *p); }

void lp_reqpath_release(lp_reqpath *p)
{
    lp_free(p->seg), lp_free(p->task), lp_free(p->start), lp_free(p->end), lp_free(p->dur);
    lp_free(p->cpstart), lp_free(p->cpend), lp_free(p->slack), lp_free(p->oncp), lp_free(p->path);
    lp_free(p->succ), lp_free(p->reach), lp_free(p->order), lp_free(p->next), lp_free(p->pos);
    lp_free(p->rowoff), lp_free(p->keys), lp_free(p->evt), lp_free(p->istart), lp_free(p->iend), lp_free(p->iseg), lp_free(p->itask);
    memset(p, 0, sizeof *p);
}

/* Bits set (portable: no dependency on the popcnt instruction being enabled). */
static inline unsigned popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

typedef struct key {
    int64_t start, end;
    uint32_t topo, seg, idx;
} key;

static int reserve(lp_reqpath *p, size_t n)
{
    if (n <= p->cap && p->succ)
        return 0;
    size_t cap = n < 64 ? 64 : n * 2;
    if (cap > UINT32_MAX / 2)
        return -1;
    size_t W = (cap + 63) / 64;
#define RE(ptr, count)                                                                                 \
    do {                                                                                               \
        void *q_ = lp_reallocarray((ptr), (count), sizeof *(ptr));                                     \
        if (!q_)                                                                                       \
            return -1;                                                                                 \
        (ptr) = q_;                                                                                    \
    } while (0)
    RE(p->seg, cap);
    RE(p->task, cap);
    RE(p->start, cap);
    RE(p->end, cap);
    RE(p->dur, cap);
    RE(p->cpstart, cap);
    RE(p->cpend, cap);
    RE(p->slack, cap);
    RE(p->oncp, cap);
    RE(p->path, cap);
    RE(p->order, cap);
    RE(p->next, cap);
    RE(p->pos, cap);
    RE(p->rowoff, cap);
    {
        void *q = lp_reallocarray(p->keys, cap, sizeof(key));
        if (!q)
            return -1;
        p->keys = q;
    }
    RE(p->succ, cap * W);
    RE(p->reach, cap * W);
#undef RE
    p->cap = (uint32_t)cap;
    p->capw = (uint32_t)W;
    return 0;
}

/* The model's relationship of two segments (LP_REL_UNSEEN for unknown ones), inline. */
static inline lp_rel rel_of(const lp_causal *m, uint32_t a, uint32_t b)
{
    if (a == LP_CAUSAL_NONE || b == LP_CAUSAL_NONE || a == b)
        return LP_REL_UNSEEN;
    uint32_t w = m->words;
    size_t ra = (size_t)a * w, rb = (size_t)b * w;
    if (!((m->seen[ra + (b >> 6)] >> (b & 63)) & 1))
        return LP_REL_UNSEEN;
    int ab = (int)((m->hb[ra + (b >> 6)] >> (b & 63)) & 1), ba = (int)((m->hb[rb + (a >> 6)] >> (a & 63)) & 1);
    if (ab && ba)
        return a < b ? LP_REL_BEFORE : LP_REL_AFTER;
    if (ab)
        return LP_REL_BEFORE;
    if (ba)
        return LP_REL_AFTER;
    if ((m->mx[ra + (b >> 6)] >> (b & 63)) & 1)
        return LP_REL_EXCLUSIVE;
    return LP_REL_CONCURRENT;
}


static inline int key_lt(const key *a, const key *b)
{
    if (a->start != b->start)
        return a->start < b->start;
    if (a->end != b->end)
        return a->end < b->end;
    if (a->topo != b->topo)
        return a->topo < b->topo;
    if (a->seg != b->seg)
        return a->seg < b->seg;
    return a->idx < b->idx;
}

/* The request's order: the keys of the segments, sorted. */
static void sort_keys(key *keys, const lp_causal *m, size_t n, const uint32_t *seg, const int64_t *start,
                      const int64_t *end)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t s = seg[i];
        keys[i].start = start[i];
        keys[i].end = end[i];
        keys[i].topo = (s != LP_CAUSAL_NONE && m->topo) ? m->topo[s] : UINT32_MAX;
        keys[i].seg = s;
        keys[i].idx = (uint32_t)i;
    }
    for (size_t i = 1; i < n; i++) { /* insertion sort: n is small and mostly sorted by task */
        key x = keys[i];
        size_t j = i;
        while (j > 0 && key_lt(&x, &keys[j - 1])) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = x;
    }
}

/* Zero-length ties: order each block of equal zero-length keys topologically (task
 * order, then the model). */
static lp_status order_ties(key *keys, const lp_causal *m, size_t n, const uint32_t *task, lp_error *err)
{
    for (size_t b0 = 0; b0 < n;) {
        size_t b1 = b0 + 1;
        while (b1 < n && keys[b1].start == keys[b0].start && keys[b1].end == keys[b0].end)
            b1++;
        if (b1 - b0 >= 2 && keys[b0].start == keys[b0].end) {
            /* repeatedly take the first member (in key order) with no predecessor left */
            size_t nb = b1 - b0;
            key *blk = lp_malloc(nb * sizeof *blk);
            uint8_t *used = lp_calloc(nb, 1);
            if (!blk || !used) {
                lp_free(blk), lp_free(used);
                return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            }
            for (size_t k = 0; k < nb; k++) {
                size_t pick = nb;
                for (size_t x = 0; x < nb && pick == nb; x++) {
                    if (used[x])
                        continue;
                    int blocked = 0;
                    for (size_t y = 0; y < nb && !blocked; y++) {
                        if (used[y] || y == x)
                            continue;
                        const key *a = &keys[b0 + y], *b = &keys[b0 + x];
                        /* does y have to come before x? */
                        if (task[a->idx] == task[b->idx] && a->idx < b->idx)
                            blocked = 1;
                        else if (task[a->idx] != task[b->idx] && rel_of(m, a->seg, b->seg) == LP_REL_BEFORE)
                            blocked = 1;
                    }
                    if (!blocked)
                        pick = x;
                }
                if (pick == nb) /* a cycle: take the first left */
                    for (size_t x = 0; x < nb && pick == nb; x++)
                        if (!used[x])
                            pick = x;
                used[pick] = 1;
                blk[k] = keys[b0 + pick];
            }
            memcpy(keys + b0, blk, nb * sizeof *blk);
            lp_free(blk), lp_free(used);
        }
        b0 = b1;
    }
    return LP_OK;
}

/* The segments, permuted into the request's order. */
static void permute(lp_reqpath *p, const lp_causal *m, size_t n, const uint32_t *seg, const uint32_t *task,
                    const int64_t *start, const int64_t *end)
{
    const key *keys = p->keys;
    uint32_t *pos = p->pos;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = keys[k].idx;
        pos[i] = (uint32_t)k;
        p->order[k] = i;
    }
    for (size_t k = 0; k < n; k++) {
        uint32_t i = p->order[k];
        p->seg[k] = seg[i];
        p->task[k] = task[i];
        p->start[k] = start[i];
        p->end[k] = end[i];
        p->dur[k] = end[i] - start[i];
        p->next[k] = (i + 1 < n && task[i + 1] == task[i]) ? pos[i + 1] : UINT32_MAX;
        if (seg[i] == LP_CAUSAL_NONE || !m->seg_count || m->seg_count[seg[i]] == 0)
            p->unknown++;
    }
}

/* The edges of the request's graph (succ rows), and the violations of the model. */
static void build_edges(lp_reqpath *p, const lp_causal *m, size_t n, uint32_t W)
{
    /* edges: the model's rows of each segment are located once; each pair then costs
     * a few shifts (seen, hb both ways, mx) */
    uint64_t *S = p->succ;
    memset(S, 0, (size_t)n * W * sizeof *S);
    const uint32_t MW = m->words;
    size_t *ro = p->rowoff;
    for (uint32_t i = 0; i < n; i++)
        ro[i] = p->seg[i] == LP_CAUSAL_NONE ? SIZE_MAX : (size_t)p->seg[i] * MW;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t *row = S + (size_t)i * W;
        if (p->next[i] != UINT32_MAX && p->next[i] > i)
            row[p->next[i] >> 6] |= 1ULL << (p->next[i] & 63);
        uint32_t si = p->seg[i];
        if (si == LP_CAUSAL_NONE)
            continue;
        const uint64_t *hbi = m->hb + ro[i], *mxi = m->mx + ro[i], *sni = m->seen + ro[i];
        const uint32_t wi = si >> 6, bi = si & 63;
        const int64_t ei = p->end[i], st_i = p->start[i];
        for (uint32_t j = i + 1; j < n; j++) {
            uint32_t sj = p->seg[j];
            if (sj == LP_CAUSAL_NONE || sj == si)
                continue;
            uint32_t wj = sj >> 6, bj = sj & 63;
            if (!((sni[wj] >> bj) & 1))
                continue;
            int ab = (int)((hbi[wj] >> bj) & 1), ba = (int)((m->hb[ro[j] + wi] >> bi) & 1);
            int before, excl = 0;
            if (ab)
                before = !ba || si < sj;
            else if (ba)
                before = 0;
            else if ((mxi[wj] >> bj) & 1)
                before = 1, excl = 1;
            else
                continue; /* concurrent */
            if (before) {
                if (ei <= p->start[j])
                    row[j >> 6] |= 1ULL << (j & 63);
                else if (!(excl && p->end[j] <= st_i))
                    p->violations++;
            } else if (!(p->end[j] <= st_i)) { /* j -> i contradicted */
                p->violations++;
            }
        }
    }
}

/* One step of transpose64: swap the off-diagonal j x j blocks of each 2j x 2j block
 * on the diagonal (rows k and k + j, the bits of mask and those j above them). For
 * j >= 2 two consecutive rows go together (SSE2, where there is SSE2). */
static inline void transpose_step(uint64_t a[64], unsigned j, uint64_t mask)
{
#if defined(__SSE2__)
    if (j >= 2) {
        const __m128i M = _mm_set1_epi64x((long long)mask);
        for (unsigned b = 0; b < 64; b += 2 * j)
            for (unsigned k = b; k < b + j; k += 2) {
                __m128i *pa = (__m128i *)(void *)(a + k), *pb = (__m128i *)(void *)(a + k + j);
                __m128i x = _mm_loadu_si128(pa), y = _mm_loadu_si128(pb);
                __m128i t = _mm_and_si128(_mm_xor_si128(_mm_srli_epi64(x, (int)j), y), M);
                _mm_storeu_si128(pb, _mm_xor_si128(y, t));
                _mm_storeu_si128(pa, _mm_xor_si128(x, _mm_slli_epi64(t, (int)j)));
            }
        return;
    }
#endif
    for (unsigned b = 0; b < 64; b += 2 * j)
        for (unsigned k = b; k < b + j; k++) {
            uint64_t t = ((a[k] >> j) ^ a[k + j]) & mask;
            a[k + j] ^= t;
            a[k] ^= t << j;
        }
}

/* Transpose a 64 x 64 bit matrix in place (bit b of a[r] is element (r, b)): swap the
 * off-diagonal blocks of 32, then of 16 in each, ... down to single bits. */
static void transpose64(uint64_t a[64])
{
    transpose_step(a, 32, 0x00000000FFFFFFFFULL);
    transpose_step(a, 16, 0x0000FFFF0000FFFFULL);
    transpose_step(a, 8, 0x00FF00FF00FF00FFULL);
    transpose_step(a, 4, 0x0F0F0F0F0F0F0F0FULL);
    transpose_step(a, 2, 0x3333333333333333ULL);
    transpose_step(a, 1, 0x5555555555555555ULL);
}

/* build_edges for a small request (at most 64 segments, every segment id below 64,
 * no negative duration: the usual case), word-parallel. The model's rows of the
 * request's segments are gathered (rows by position, then transposed, gathered by
 * position again and transposed back), which gives for each position i the bits, over
 * positions j, of seen(si, sj), hb(si, sj), hb(sj, si) and mx(si, sj); the rules of
 * build_edges then apply to 64 pairs at once. Positions are sorted by start, so the
 * j with i ending by j's start are a suffix (found by bisection); j (> i) ends by i's
 * start only when both start at that instant and j has no length. Same edges and
 * violations as build_edges (tests/unit/mystery/test_reqpath.c). */
static void build_edges_small(lp_reqpath *p, const lp_causal *m, uint32_t n)
{
    uint64_t L[3][64], B[3][64], pm[64], gt[65];
    const uint64_t *rows[3] = {m->seen, m->hb, m->mx};
    const uint32_t MW = m->words;
    const uint32_t *seg = p->seg;
    const int64_t *start = p->start, *end = p->end;
    memset(pm, 0, sizeof pm);
    for (uint32_t i = 0; i < n; i++)
        if (seg[i] != LP_CAUSAL_NONE)
            pm[seg[i]] |= 1ULL << i;
    gt[64] = 0; /* gt[s]: positions whose segment id is above s */
    for (uint32_t s = 64; s-- > 0;)
        gt[s] = gt[s + 1] | (s < 63 ? pm[s + 1] : 0);
    for (int x = 0; x < 3; x++) {
        for (uint32_t i = 0; i < 64; i++)
            L[x][i] = i < n && seg[i] != LP_CAUSAL_NONE ? rows[x][(size_t)seg[i] * MW] : 0;
        transpose64(L[x]); /* L[x][b] bit i: M(si, b) */
        for (uint32_t j = 0; j < 64; j++)
            B[x][j] = j < n && seg[j] != LP_CAUSAL_NONE ? L[x][seg[j]] : 0;
        memcpy(L[x], B[x], sizeof L[x]); /* B[x][j] bit i: M(si, sj) */
        transpose64(L[x]);                /* L[x][i] bit j: M(si, sj) */
    }
    uint64_t *S = p->succ;
    uint32_t viol = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t row = 0;
        if (p->next[i] != UINT32_MAX && p->next[i] > i)
            row = 1ULL << p->next[i];
        const uint32_t si = seg[i];
        if (si != LP_CAUSAL_NONE && i + 1 < n) {
            const uint64_t later = ~0ULL << (i + 1); /* i + 1 < n <= 64 */
            const uint64_t ab = L[1][i], ba = B[1][i], mx = L[2][i];
            const uint64_t rel = L[0][i] & later & ~pm[si] & (ab | ba | mx);
            const uint64_t excl = ~ab & ~ba & mx;
            const uint64_t before = (ab & (~ba | gt[si])) | excl;
            /* fwd: the first j > i starting at or after i's end, and all after it */
            const int64_t ei = end[i], st_i = start[i];
            uint32_t lo = i + 1, hi = n;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (start[mid] >= ei)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            const uint64_t fwd = lo < 64 ? ~0ULL << lo : 0;
            uint64_t back = 0;
            for (uint32_t j = i + 1; j < n && start[j] <= st_i; j++)
                if (end[j] <= st_i)
                    back |= 1ULL << j;
            const uint64_t edge = rel & before & fwd;
            row |= edge;
            viol += popcount64(rel & ~edge & ~(((before & excl) | ~before) & back));
        }
        S[i] = row;
    }
    p->violations += viol;
}

/* Whether build_edges_small applies. */
static int small_request(const lp_reqpath *p, uint32_t n)
{
    if (n > 64)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if ((p->seg[i] != LP_CAUSAL_NONE && p->seg[i] >= 64) || p->end[i] < p->start[i])
            return 0;
    return 1;
}

/* Transitive reduction: reverse order, reach = succ | reach of succ. */
static lp_status reduce(lp_reqpath *p, lp_error *err)
{
    const uint32_t n = p->n, W = p->words;
    uint64_t *S = p->succ, *R = p->reach;
    uint32_t edges = 0;
    if (W == 1) {
        for (uint32_t i = n; i-- > 0;) {
            uint64_t row = S[i], acc = 0;
            for (uint64_t bits = row; bits; bits &= bits - 1)
                acc |= R[__builtin_ctzll(bits)];
            R[i] = row | acc;
            S[i] = row & ~acc;
            edges += (uint32_t)popcount64(S[i]);
        }
    } else {
        uint64_t acc[64];
        uint64_t *accp = W <= 64 ? acc : lp_malloc(W * sizeof *accp);
        if (!accp)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        for (uint32_t i = n; i-- > 0;) {
            uint64_t *row = S + (size_t)i * W, *ri = R + (size_t)i * W;
            memset(accp, 0, W * sizeof *accp);
            for (uint32_t w = 0; w < W; w++)
                for (uint64_t bits = row[w]; bits; bits &= bits - 1) {
                    uint32_t j = w * 64 + (uint32_t)__builtin_ctzll(bits);
                    const uint64_t *rj = R + (size_t)j * W;
                    for (uint32_t x = 0; x < W; x++)
                        accp[x] |= rj[x];
                }
            for (uint32_t x = 0; x < W; x++) {
                ri[x] = row[x] | accp[x];
                row[x] &= ~accp[x];
                edges += (uint32_t)popcount64(row[x]);
            }
        }
        if (accp != acc)
            lp_free(accp);
    }
    p->edges += edges;
    return LP_OK;
}

/* Longest paths before (cpstart) and after (cpend) each segment, the critical path's
 * length and every segment's slack. */
static void longest(lp_reqpath *p)
{
    const uint32_t n = p->n, W = p->words;
    const uint64_t *S = p->succ;
    for (uint32_t i = 0; i < n; i++)
        p->cpstart[i] = 0;
    for (uint32_t i = 0; i < n; i++) {
        int64_t v = p->cpstart[i] + p->dur[i];
        const uint64_t *row = S + (size_t)i * W;
        for (uint32_t w = 0; w < W; w++)
            for (uint64_t bits = row[w]; bits; bits &= bits - 1) {
                uint32_t j = w * 64 + (uint32_t)__builtin_ctzll(bits);
                if (v > p->cpstart[j])
                    p->cpstart[j] = v;
            }
    }
    for (uint32_t i = n; i-- > 0;) {
        int64_t best = 0;
        const uint64_t *row = S + (size_t)i * W;
        for (uint32_t w = 0; w < W; w++)
            for (uint64_t bits = row[w]; bits; bits &= bits - 1) {
                uint32_t j = w * 64 + (uint32_t)__builtin_ctzll(bits);
                int64_t v = p->dur[j] + p->cpend[j];
                if (v > best)
                    best = v;
            }
        p->cpend[i] = best;
    }
    int64_t cp = 0;
    for (uint32_t i = 0; i < n; i++) {
        int64_t v = p->cpstart[i] + p->dur[i] + p->cpend[i];
        if (v > cp)
            cp = v;
    }
    p->cp = cp;
    for (uint32_t i = 0; i < n; i++) {
        p->slack[i] = cp - p->cpstart[i] - p->dur[i] - p->cpend[i];
        p->oncp[i] = 0;
    }
}

/* The predecessor i of v that the path takes so far (best, or UINT32_MAX), given i:
 * on a longest path into v, latest-ending, then one in another task than v. */
static inline uint32_t path_pick(const lp_reqpath *p, uint32_t i, uint32_t v, uint32_t best)
{
    if (p->cpstart[i] + p->dur[i] != p->cpstart[v])
        return best;
    if (best == UINT32_MAX || p->end[i] > p->end[best] ||
        (p->end[i] == p->end[best] && p->task[i] != p->task[v] && p->task[best] == p->task[v]))
        return i;
    return best;
}

/* The path: the latest-ending sink on a longest path, then back. */
static void walk_path(lp_reqpath *p)
{
    const uint32_t n = p->n, W = p->words;
    const uint64_t *S = p->succ;
    const int64_t cp = p->cp;
    uint32_t v = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        int sink = 1;
        const uint64_t *row = S + (size_t)i * W;
        for (uint32_t w = 0; w < W && sink; w++)
            sink = row[w] == 0;
        if (!sink || p->cpstart[i] + p->dur[i] != cp)
            continue;
        if (v == UINT32_MAX || p->end[i] > p->end[v])
            v = i;
    }
    /* one word a row: the predecessors of each position as a row (S transposed), so the
     * walk visits only them, in the same (increasing) order as the scan below */
    uint64_t pred[64];
    if (W == 1) {
        for (uint32_t i = 0; i < 64; i++)
            pred[i] = i < n ? S[i] : 0;
        transpose64(pred);
    }
    uint32_t np = 0;
    while (v != UINT32_MAX) {
        p->path[np++] = v;
        p->oncp[v] = 1;
        uint32_t best = UINT32_MAX;
        if (W == 1) {
            for (uint64_t bits = pred[v] & ((1ULL << v) - 1); bits; bits &= bits - 1) /* v < n <= 64 */
                best = path_pick(p, (uint32_t)__builtin_ctzll(bits), v, best);
        } else {
            for (uint32_t i = 0; i < v; i++)
                if ((S[(size_t)i * W + (v >> 6)] >> (v & 63)) & 1)
                    best = path_pick(p, i, v, best);
        }
        v = best;
    }
    for (uint32_t a = 0, b = np ? np - 1 : 0; a < b; a++, b--) {
        uint32_t t = p->path[a];
        p->path[a] = p->path[b];
        p->path[b] = t;
    }
    p->npath = np;
}

lp_status lp_reqpath_solve(lp_reqpath *p, const lp_causal *m, size_t n, const uint32_t *seg, const uint32_t *task,
                           const int64_t *start, const int64_t *end, lp_error *err)
{
    if (reserve(p, n ? n : 1))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    p->n = (uint32_t)n;
    p->npath = 0;
    p->cp = 0;
    p->edges = 0;
    p->violations = 0;
    p->unknown = 0;
    if (n == 0)
        return LP_OK;
    uint32_t W = (uint32_t)((n + 63) / 64);
    p->words = W; /* rows are packed for this request */
    sort_keys(p->keys, m, n, seg, start, end);
    lp_status st = order_ties(p->keys, m, n, task, err);
    if (st)
        return st;
    permute(p, m, n, seg, task, start, end);
    if (small_request(p, (uint32_t)n))
        build_edges_small(p, m, (uint32_t)n);
    else
        build_edges(p, m, n, W);
    if ((st = reduce(p, err)))
        return st;
    longest(p);
    walk_path(p);
    return LP_OK;
}

lp_status lp_reqpath_compute(lp_reqpath *p, const lp_causal *m, const lp_reqlog *rl, const uint32_t *map, uint64_t r,
                             lp_error *err)
{
    uint64_t a = rl->rfirst[r], b = rl->rfirst[r + 1];
    size_t rows = (size_t)(b - a);
    if (rows > p->caprows) {
        size_t nc = rows * 2;
        int64_t *e = lp_reallocarray(p->evt, nc, sizeof *e);
        if (e)
            p->evt = e;
        int64_t *e1 = e ? lp_reallocarray(p->istart, nc, sizeof *e1) : NULL;
        if (e1)
            p->istart = e1;
        int64_t *e2 = e1 ? lp_reallocarray(p->iend, nc, sizeof *e2) : NULL;
        if (e2)
            p->iend = e2;
        uint32_t *u1 = e2 ? lp_reallocarray(p->iseg, nc, sizeof *u1) : NULL;
        if (u1)
            p->iseg = u1;
        uint32_t *u2 = u1 ? lp_reallocarray(p->itask, nc, sizeof *u2) : NULL;
        if (!u2)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        p->itask = u2;
        p->caprows = nc;
    }
    /* times made non-decreasing along each task */
    const lp_reqrow *R = rl->rows + a;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t i = 0; i < rows; i++) {
        int64_t t = R[i].time;
        if (i > 0 && rl->pt_task[R[i].point] == rl->pt_task[R[i - 1].point] && t < p->evt[i - 1])
            t = p->evt[i - 1];
        p->evt[i] = t;
        if (t < first)
            first = t;
        if (t > last)
            last = t;
    }
    /* segments, task by task in task order (the rows' order) */
    size_t n = 0;
    uint32_t *sg = p->iseg, *tk = p->itask;
    int64_t *st = p->istart, *en = p->iend;
    for (size_t i = 0; i < rows; i++) {
        if (R[i].seg == LP_REQLOG_NONE)
            continue;
        uint32_t s = map ? map[R[i].seg] : LP_CAUSAL_NONE;
        if (s != LP_CAUSAL_NONE && m->seg_dropped[s])
            continue;
        sg[n] = s;
        tk[n] = rl->pt_task[R[i].point];
        st[n] = p->evt[i];
        en[n] = p->evt[i + 1];
        n++;
    }
    lp_status stt = lp_reqpath_solve(p, m, n, sg, tk, st, en, err);
    p->first = rows ? first : 0;
    p->last = rows ? last : 0;
    p->latency = p->last - p->first;
    return stt;
}
