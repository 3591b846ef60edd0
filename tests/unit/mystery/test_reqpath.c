/* test_reqpath.c: per-request critical path and slack (reqpath.h) against a naive twin
 * on thousands of small random requests: edges from the documented rules, transitive
 * reduction by path search, the critical path by enumerating every path (ties by the
 * documented key), slack by definition (CP minus the longest path through the
 * segment). Plus hand-made cases: mutual exclusion made dynamic, a contradicted
 * relationship, zero-length segments tying at one instant, and gaps. */
#include "t.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/analysis/mystery/reqpath.h"

#include <stdlib.h>
#include <string.h>

static unsigned long long rng_state = 88172645463325252ULL;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

static void setbit(uint64_t *rows, uint32_t w, uint32_t a, uint32_t b, int v)
{
    uint64_t *x = &rows[(size_t)a * w + (b >> 6)];
    if (v)
        *x |= 1ULL << (b & 63);
    else
        *x &= ~(1ULL << (b & 63));
}

/* An empty model with S segments t<s>:a<s>->b<s>, each seen `count` times (0: 1-3 at
 * random). */
static void named_segments(lp_causal *m, uint32_t S, uint32_t count)
{
    lp_error err;
    lp_causal_init(m, &err);
    for (uint32_t s = 0; s < S; s++) {
        char t[16], f[16], e[16];
        snprintf(t, sizeof t, "t%u", s);
        snprintf(f, sizeof f, "a%u", s);
        snprintf(e, sizeof e, "b%u", s);
        uint32_t id;
        lp_causal_segment(m, t, f, e, &id, &err);
        m->seg_count[id] = count ? count : 1 + rnd(3);
    }
}

/* A model of S segments with random relationships. */
static void random_model(lp_causal *m, uint32_t S)
{
    named_segments(m, S, 10);
    lp_error err;
    uint32_t W = m->words;
    for (uint32_t a = 0; a < S; a++)
        for (uint32_t b = a + 1; b < S; b++) {
            unsigned k = rnd(6);
            int seen = k != 5;
            setbit(m->seen, W, a, b, seen);
            setbit(m->seen, W, b, a, seen);
            /* 0 a->b, 1 b->a, 2 exclusive, 3-4 concurrent, 5 unseen */
            setbit(m->hb, W, a, b, k == 0 || k == 5);
            setbit(m->hb, W, b, a, k == 1 || k == 5);
            setbit(m->mx, W, a, b, k <= 2 || k == 5);
            setbit(m->mx, W, b, a, k <= 2 || k == 5);
        }
    lp_causal_finish(m, NULL, NULL, &err);
}

#define MAXN 9

typedef struct prob {
    size_t n;
    uint32_t seg[MAXN], task[MAXN];
    int64_t start[MAXN], end[MAXN];
} prob;

/* Random request: tasks listed in order, each a chain of segments sharing events. */
static void random_request(prob *q, uint32_t S, int zero)
{
    q->n = 0;
    uint32_t used[64] = {0};
    unsigned ntask = 1 + rnd(3);
    for (unsigned t = 0; t < ntask && q->n < MAXN - 1; t++) {
        unsigned len = 1 + rnd(3);
        int64_t now = (int64_t)rnd(40);
        for (unsigned k = 0; k < len && q->n < MAXN - 1; k++) {
            uint32_t s;
            unsigned guard = 0;
            do
                s = rnd(S);
            while (used[s] && ++guard < 100);
            if (used[s])
                break;
            used[s] = 1;
            int64_t d = zero && rnd(4) == 0 ? 0 : 1 + (int64_t)rnd(20);
            q->seg[q->n] = s;
            q->task[q->n] = t;
            q->start[q->n] = now;
            q->end[q->n] = now + d;
            now += d;
            q->n++;
        }
    }
}

/* ---- the naive twin ---------------------------------------------------------------------- */

typedef struct naive {
    size_t n;
    uint32_t order[MAXN];        /* rank -> input index */
    int edge[MAXN][MAXN];        /* unreduced, in rank space */
    int red[MAXN][MAXN];         /* reduced */
    int64_t dur[MAXN], end[MAXN];
    uint32_t task[MAXN];
    int64_t cp;
    uint32_t path[MAXN], npath;
    int64_t through[MAXN];       /* longest path through each vertex */
    int64_t before[MAXN], after[MAXN];
    uint32_t violations;
} naive;

static lp_rel relation(const lp_causal *m, uint32_t a, uint32_t b) { return lp_causal_rel(m, a, b); }

static int reach_other(const naive *v, size_t from, size_t to, int depth)
{
    /* a path from -> to of at least two edges, avoiding the direct edge at the start */
    for (size_t k = 0; k < v->n; k++) {
        if (!v->edge[from][k])
            continue;
        if (depth == 0 && k == to)
            continue;
        if (k == to)
            return 1;
        if (reach_other(v, k, to, depth + 1))
            return 1;
    }
    return 0;
}

/* every path from a source to a sink: enumerate, keep the best by weight then key */
typedef struct walk {
    const naive *v;
    uint32_t cur[MAXN], ncur;
    int64_t w;
    uint32_t best[MAXN], nbest;
    int64_t bw;
} walk;

/* Compare two paths of equal weight from their ends: <0 if a is preferred. */
static int prefer(const naive *v, const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb)
{
    uint32_t i = na, j = nb;
    /* sinks: latest end, then earliest rank */
    uint32_t x = a[--i], y = b[--j];
    if (x != y) {
        if (v->end[x] != v->end[y])
            return v->end[x] > v->end[y] ? -1 : 1;
        return x < y ? -1 : 1;
    }
    while (i > 0 && j > 0) {
        uint32_t succ = a[i];
        x = a[--i], y = b[--j];
        if (x == y)
            continue;
        if (v->end[x] != v->end[y])
            return v->end[x] > v->end[y] ? -1 : 1;
        int ox = v->task[x] != v->task[succ], oy = v->task[y] != v->task[succ];
        if (ox != oy)
            return ox ? -1 : 1;
        return x < y ? -1 : 1;
    }
    return 0;
}

static void dfs(walk *k, uint32_t u)
{
    const naive *v = k->v;
    k->cur[k->ncur++] = u;
    k->w += v->dur[u];
    int sink = 1;
    for (uint32_t x = 0; x < v->n; x++)
        if (v->red[u][x]) {
            sink = 0;
            dfs(k, x);
        }
    if (sink) {
        if (k->nbest == 0 || k->w > k->bw ||
            (k->w == k->bw && prefer(v, k->cur, k->ncur, k->best, k->nbest) < 0)) {
            memcpy(k->best, k->cur, k->ncur * sizeof *k->cur);
            k->nbest = k->ncur;
            k->bw = k->w;
        }
        /* longest path through each vertex of this one */
        for (uint32_t i = 0; i < k->ncur; i++)
            if (k->w > ((naive *)v)->through[k->cur[i]])
                ((naive *)v)->through[k->cur[i]] = k->w;
        /* longest prefix before and suffix after each vertex */
        int64_t acc = 0;
        for (uint32_t i = 0; i < k->ncur; i++) {
            uint32_t c = k->cur[i];
            if (acc > ((naive *)v)->before[c])
                ((naive *)v)->before[c] = acc;
            if (k->w - acc - v->dur[c] > ((naive *)v)->after[c])
                ((naive *)v)->after[c] = k->w - acc - v->dur[c];
            acc += v->dur[c];
        }
    }
    k->w -= v->dur[u];
    k->ncur--;
}

static void naive_solve(naive *v, const lp_causal *m, const prob *q)
{
    memset(v, 0, sizeof *v);
    v->n = q->n;
    /* order by (start, end, topo, seg, index): no zero-length ties in these inputs */
    for (size_t i = 0; i < q->n; i++)
        v->order[i] = (uint32_t)i;
    for (size_t i = 0; i < q->n; i++)
        for (size_t j = i + 1; j < q->n; j++) {
            uint32_t a = v->order[i], b = v->order[j];
            int swap = 0;
            if (q->start[a] != q->start[b])
                swap = q->start[b] < q->start[a];
            else if (q->end[a] != q->end[b])
                swap = q->end[b] < q->end[a];
            else if (m->topo[q->seg[a]] != m->topo[q->seg[b]])
                swap = m->topo[q->seg[b]] < m->topo[q->seg[a]];
            else
                swap = q->seg[b] < q->seg[a];
            if (swap) {
                v->order[i] = b;
                v->order[j] = a;
            }
        }
    size_t rank[MAXN];
    for (size_t k = 0; k < q->n; k++)
        rank[v->order[k]] = k;
    for (size_t k = 0; k < q->n; k++) {
        uint32_t i = v->order[k];
        v->dur[k] = q->end[i] - q->start[i];
        v->end[k] = q->end[i];
        v->task[k] = q->task[i];
    }
    for (size_t i = 0; i < q->n; i++) {
        /* task order */
        if (i + 1 < q->n && q->task[i + 1] == q->task[i])
            v->edge[rank[i]][rank[i + 1]] = 1;
        for (size_t j = 0; j < q->n; j++) {
            if (i == j || rank[i] > rank[j])
                continue;
            lp_rel r = relation(m, q->seg[i], q->seg[j]);
            int fwd = q->end[i] <= q->start[j], back = q->end[j] <= q->start[i];
            if (r == LP_REL_BEFORE) {
                if (fwd)
                    v->edge[rank[i]][rank[j]] = 1;
                else
                    v->violations++;
            } else if (r == LP_REL_AFTER) {
                if (!back)
                    v->violations++;
            } else if (r == LP_REL_EXCLUSIVE) {
                if (fwd)
                    v->edge[rank[i]][rank[j]] = 1;
                else if (!back)
                    v->violations++;
            }
        }
    }
    for (size_t i = 0; i < q->n; i++)
        for (size_t j = 0; j < q->n; j++)
            v->red[i][j] = v->edge[i][j] && !reach_other(v, i, j, 0);
    walk k;
    memset(&k, 0, sizeof k);
    k.v = v;
    for (uint32_t s = 0; s < q->n; s++) {
        int source = 1;
        for (uint32_t x = 0; x < q->n; x++)
            if (v->red[x][s])
                source = 0;
        if (source)
            dfs(&k, s);
    }
    v->cp = k.bw;
    v->npath = k.nbest;
    memcpy(v->path, k.best, k.nbest * sizeof *k.best);
}

static void test_random(void)
{
    int mism = 0;
    for (int it = 0; it < 4000; it++) {
        lp_causal m;
        uint32_t S = 3 + rnd(8);
        random_model(&m, S);
        prob q;
        random_request(&q, S, 0);
        lp_reqpath p;
        lp_reqpath_init(&p);
        lp_error err;
        CHECK(lp_reqpath_solve(&p, &m, q.n, q.seg, q.task, q.start, q.end, &err) == LP_OK);
        naive v;
        naive_solve(&v, &m, &q);
        int ok = p.n == q.n && p.cp == v.cp && p.npath == v.npath && p.violations == v.violations;
        for (uint32_t i = 0; ok && i < p.npath; i++)
            ok = p.path[i] == v.path[i];
        for (uint32_t i = 0; ok && i < p.n; i++) {
            ok = p.order[i] == v.order[i] && p.slack[i] == p.cp - v.through[i] && p.cpstart[i] == v.before[i] &&
                 p.cpend[i] == v.after[i] && p.oncp[i] == (p.slack[i] == 0 ? p.oncp[i] : 0);
            for (uint32_t j = 0; ok && j < p.n; j++)
                ok = lp_reqpath_edge(&p, i, j) == v.red[i][j];
        }
        /* slack is never negative and is zero on the path */
        for (uint32_t i = 0; ok && i < p.n; i++)
            ok = p.slack[i] >= 0 && (!p.oncp[i] || p.slack[i] == 0);
        if (!ok && mism++ < 5) {
            fprintf(stderr, "mismatch (iteration %d): cp %lld vs %lld, path %u vs %u, violations %u vs %u\n", it,
                    (long long)p.cp, (long long)v.cp, p.npath, v.npath, p.violations, v.violations);
        }
        CHECK(ok);
        lp_reqpath_release(&p);
        lp_causal_release(&m);
    }
    CHECK_EQ_I(mism, 0);
}

/* Models with a relationship over every pair, and ties everywhere. */
static void test_ties(void)
{
    int mism = 0;
    for (int it = 0; it < 2000; it++) {
        lp_causal m;
        uint32_t S = 6;
        random_model(&m, S);
        prob q;
        q.n = 0;
        /* equal durations in parallel tasks: many longest paths */
        for (uint32_t s = 0; s < S; s++) {
            q.seg[q.n] = s;
            q.task[q.n] = s % 3;
            q.start[q.n] = (int64_t)(s / 3) * 10;
            q.end[q.n] = q.start[q.n] + 10;
            q.n++;
        }
        /* listed task by task */
        prob r = q;
        size_t k = 0;
        for (uint32_t t = 0; t < 3; t++)
            for (size_t i = 0; i < q.n; i++)
                if (q.task[i] == t) {
                    r.seg[k] = q.seg[i], r.task[k] = t, r.start[k] = q.start[i], r.end[k] = q.end[i];
                    k++;
                }
        lp_reqpath p;
        lp_reqpath_init(&p);
        lp_error err;
        lp_reqpath_solve(&p, &m, r.n, r.seg, r.task, r.start, r.end, &err);
        naive v;
        naive_solve(&v, &m, &r);
        int ok = p.cp == v.cp && p.npath == v.npath;
        for (uint32_t i = 0; ok && i < p.npath; i++)
            ok = p.path[i] == v.path[i];
        if (!ok)
            mism++;
        lp_reqpath_release(&p);
        lp_causal_release(&m);
    }
    CHECK_EQ_I(mism, 0);
}

/* A named model for the hand-made cases: segments 0..n-1 in task t<i>. */
static void named_model(lp_causal *m, uint32_t n)
{
    lp_error err;
    lp_causal_init(m, &err);
    for (uint32_t s = 0; s < n; s++) {
        char t[16], a[16], b[16];
        snprintf(t, sizeof t, "t%u", s);
        snprintf(a, sizeof a, "a%u", s);
        snprintf(b, sizeof b, "b%u", s);
        uint32_t id;
        lp_causal_segment(m, t, a, b, &id, &err);
        m->seg_count[id] = 1;
    }
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = 0; b < n; b++) {
            setbit(m->seen, m->words, a, b, a != b);
            setbit(m->hb, m->words, a, b, 0);
            setbit(m->mx, m->words, a, b, 0);
        }
}

static void test_cases(void)
{
    lp_error err;
    lp_causal m;
    /* A -> C, B -> C, A | B exclusive (ran A then B): C waits for B, B for A */
    named_model(&m, 3);
    setbit(m.hb, m.words, 0, 2, 1);
    setbit(m.hb, m.words, 1, 2, 1);
    setbit(m.mx, m.words, 0, 1, 1);
    setbit(m.mx, m.words, 1, 0, 1);
    lp_causal_finish(&m, NULL, NULL, &err);
    uint32_t seg[3] = {0, 1, 2}, task[3] = {0, 1, 2};
    int64_t st[3] = {0, 10, 25}, en[3] = {10, 25, 30};
    lp_reqpath p;
    lp_reqpath_init(&p);
    CHECK(lp_reqpath_solve(&p, &m, 3, seg, task, st, en, &err) == LP_OK);
    CHECK_EQ_I(p.cp, 30);
    CHECK_EQ_I(p.npath, 3);
    CHECK_EQ_I(p.edges, 2); /* A -> C removed: A -> B -> C */
    CHECK(!lp_reqpath_edge(&p, 0, 2));
    CHECK_EQ_I(p.violations, 0);
    /* the same with B first: B -> A -> C */
    int64_t st2[3] = {15, 0, 25}, en2[3] = {25, 15, 30};
    lp_reqpath_solve(&p, &m, 3, seg, task, st2, en2, &err);
    CHECK_EQ_I(p.cp, 30);
    CHECK_EQ_I(p.seg[p.path[0]], 1);
    CHECK_EQ_I(p.seg[p.path[1]], 0);
    /* a contradicted happens-before (C starts before B ends): counted, no edge */
    int64_t st3[3] = {0, 10, 20}, en3[3] = {10, 25, 30};
    lp_reqpath_solve(&p, &m, 3, seg, task, st3, en3, &err);
    CHECK_EQ_I(p.violations, 1);
    CHECK_EQ_I(p.cp, 25); /* A -> B; C only after A: 10 + 10 < 25 */
    /* slack: C could grow by 5 before it matters (A+B = 25, A+C = 20) */
    CHECK_EQ_I(p.slack[2], 5);
    lp_causal_release(&m);

    /* zero-length segments at one instant, in one task and across tasks */
    named_model(&m, 4);
    setbit(m.hb, m.words, 0, 1, 1); /* a zero-length pair always together */
    setbit(m.hb, m.words, 1, 0, 1);
    setbit(m.hb, m.words, 2, 3, 1);
    lp_causal_finish(&m, NULL, NULL, &err);
    /* task 0: segs 1 then 0 (the model's tie says 0 -> 1: task order wins), task 1: 2 then 3 */
    uint32_t seg4[4] = {1, 0, 2, 3}, task4[4] = {0, 0, 1, 1};
    int64_t st4[4] = {5, 5, 0, 5}, en4[4] = {5, 5, 5, 9};
    CHECK(lp_reqpath_solve(&p, &m, 4, seg4, task4, st4, en4, &err) == LP_OK);
    /* every edge goes forward and the task order holds */
    int pos1 = -1, pos0 = -1;
    for (uint32_t i = 0; i < p.n; i++) {
        if (p.seg[i] == 1)
            pos1 = (int)i;
        if (p.seg[i] == 0)
            pos0 = (int)i;
    }
    CHECK(pos1 >= 0 && pos0 > pos1);
    CHECK_EQ_I(p.cp, 9);
    lp_causal_release(&m);

    /* gaps: B starts 5 after A ends; the path is A -> B, its length the durations (10) */
    named_model(&m, 2);
    setbit(m.hb, m.words, 0, 1, 1);
    lp_causal_finish(&m, NULL, NULL, &err);
    uint32_t seg5[2] = {0, 1}, task5[2] = {0, 1};
    int64_t st5[2] = {0, 10}, en5[2] = {5, 15};
    lp_reqpath_solve(&p, &m, 2, seg5, task5, st5, en5, &err);
    CHECK_EQ_I(p.cp, 10);
    CHECK_EQ_I(p.npath, 2);
    /* an empty request */
    CHECK(lp_reqpath_solve(&p, &m, 0, seg5, task5, st5, en5, &err) == LP_OK);
    CHECK_EQ_I(p.cp, 0);
    CHECK_EQ_I(p.npath, 0);
    lp_reqpath_release(&p);
    lp_causal_release(&m);
}

/* More than 64 segments in a request: multi-word rows agree with the naive rules on
 * the path length (a chain with side branches). */
static void test_wide(void)
{
    lp_error err;
    lp_causal m;
    uint32_t n = 150;
    named_model(&m, n);
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = a + 1; b < n; b++)
            setbit(m.hb, m.words, a, b, b % 3 == 0 || a % 3 == 0);
    lp_causal_finish(&m, NULL, NULL, &err);
    uint32_t *seg = malloc(n * sizeof *seg), *task = malloc(n * sizeof *task);
    int64_t *st = malloc(n * sizeof *st), *en = malloc(n * sizeof *en);
    for (uint32_t s = 0; s < n; s++) {
        seg[s] = s;
        task[s] = s;
        st[s] = (int64_t)s * 10;
        en[s] = st[s] + 5 + (s % 7);
    }
    lp_reqpath p;
    lp_reqpath_init(&p);
    CHECK(lp_reqpath_solve(&p, &m, n, seg, task, st, en, &err) == LP_OK);
    /* the longest path: every segment is ordered with every multiple of 3, so the path
     * visits all segments but can skip none... compute by dynamic programming */
    int64_t *best = calloc(n, sizeof *best), cp = 0;
    for (uint32_t b = 0; b < n; b++) {
        int64_t in = 0;
        for (uint32_t a = 0; a < b; a++)
            if ((b % 3 == 0 || a % 3 == 0) && en[a] <= st[b] && best[a] > in)
                in = best[a];
        best[b] = in + en[b] - st[b];
        if (best[b] > cp)
            cp = best[b];
    }
    CHECK_EQ_I(p.cp, cp);
    CHECK(p.words == 3);
    for (uint32_t i = 0; i < n; i++)
        CHECK(p.slack[i] >= 0);
    free(seg), free(task), free(st), free(en), free(best);
    lp_reqpath_release(&p);
    lp_causal_release(&m);
}

/* ---- the word-parallel edges against the pair-by-pair rules --------------------------- */

/* The pair-by-pair edge test lp_reqpath_solve used before its word-parallel form for
 * small requests (kept here as the twin): on the request's order (p->seg, start, end,
 * next), the unreduced edges into E (n x n) and the violations. */
#define DMAX 96
static uint32_t pair_edges(const lp_reqpath *p, const lp_causal *m, uint8_t E[DMAX][DMAX])
{
    uint32_t n = p->n, viol = 0;
    memset(E, 0, sizeof(uint8_t[DMAX][DMAX]));
    for (uint32_t i = 0; i < n; i++) {
        if (p->next[i] != UINT32_MAX && p->next[i] > i)
            E[i][p->next[i]] = 1;
        uint32_t si = p->seg[i];
        if (si == LP_CAUSAL_NONE)
            continue;
        for (uint32_t j = i + 1; j < n; j++) {
            uint32_t sj = p->seg[j];
            if (sj == LP_CAUSAL_NONE || sj == si)
                continue;
            size_t W = m->words;
            if (!((m->seen[si * W + (sj >> 6)] >> (sj & 63)) & 1))
                continue;
            int ab = (int)((m->hb[si * W + (sj >> 6)] >> (sj & 63)) & 1);
            int ba = (int)((m->hb[sj * W + (si >> 6)] >> (si & 63)) & 1);
            int before, excl = 0;
            if (ab)
                before = !ba || si < sj;
            else if (ba)
                before = 0;
            else if ((m->mx[si * W + (sj >> 6)] >> (sj & 63)) & 1)
                before = 1, excl = 1;
            else
                continue;
            if (before) {
                if (p->end[i] <= p->start[j])
                    E[i][j] = 1;
                else if (!(excl && p->end[j] <= p->start[i]))
                    viol++;
            } else if (!(p->end[j] <= p->start[i])) {
                viol++;
            }
        }
    }
    return viol;
}

/* A model of S segments whose bits are independent coin flips (any combination of
 * seen, hb both ways and mx; no topological order: ties by id). */
static void coin_model(lp_causal *m, uint32_t S)
{
    named_segments(m, S, 0);
    for (uint32_t a = 0; a < S; a++)
        for (uint32_t b = 0; b < S; b++) {
            setbit(m->seen, m->words, a, b, rnd(8) != 0);
            setbit(m->hb, m->words, a, b, rnd(3) == 0);
            setbit(m->mx, m->words, a, b, rnd(4) == 0);
        }
}

/* Thousands of random requests of up to 90 segments (one word of 64 and more) over
 * models of up to 100 segments (ids past 64 too), with unknown and repeated segments,
 * zero-length segments, equal starts and some negative durations: the reduced edges
 * and the violations equal those of the pair-by-pair rules, and the path that of a
 * scan of every earlier position for each step back. */
static void test_pairs_differential(void)
{
    static uint8_t E[DMAX][DMAX], R[DMAX][DMAX];
    uint32_t seg[DMAX], task[DMAX];
    int64_t st[DMAX], en[DMAX];
    int mism = 0, runs = 0;
    for (int mi = 0; mi < 60; mi++) {
        lp_causal m;
        uint32_t S = mi % 3 == 0 ? 2 + rnd(100) : 2 + rnd(63);
        coin_model(&m, S);
        lp_reqpath p;
        lp_reqpath_init(&p);
        for (int it = 0; it < 80; it++, runs++) {
            uint32_t n = it % 4 == 0 ? 1 + rnd(DMAX - 6) : 1 + rnd(64);
            int64_t span = 1 + (int64_t)rnd(it % 2 ? 30 : 1000);
            int negok = rnd(20) == 0;
            uint32_t t = 0;
            for (uint32_t i = 0; i < n; i++) {
                if (rnd(5) == 0)
                    t++;
                task[i] = t;
                seg[i] = rnd(12) == 0 ? LP_CAUSAL_NONE : rnd(S);
                st[i] = (int64_t)rnd((unsigned)span);
                int64_t d = rnd(4) == 0 ? 0 : (int64_t)rnd((unsigned)span);
                en[i] = negok && rnd(3) == 0 ? st[i] - d : st[i] + d;
            }
            lp_error err;
            if (lp_reqpath_solve(&p, &m, n, seg, task, st, en, &err) != LP_OK) {
                mism++;
                continue;
            }
            uint32_t viol = pair_edges(&p, &m, E);
            /* transitive reduction of E: reach in reverse order, drop edges implied */
            for (uint32_t i = n; i-- > 0;) {
                for (uint32_t j = 0; j < n; j++)
                    R[i][j] = E[i][j];
                for (uint32_t j = i + 1; j < n; j++)
                    if (E[i][j])
                        for (uint32_t k = j + 1; k < n; k++)
                            R[i][k] |= R[j][k];
            }
            int ok = p.violations == viol;
            for (uint32_t i = 0; ok && i < n; i++)
                for (uint32_t j = 0; ok && j < n; j++) {
                    int implied = 0;
                    for (uint32_t k = i + 1; k < j && !implied; k++)
                        implied = E[i][k] && R[k][j];
                    ok = lp_reqpath_edge(&p, i, j) == (E[i][j] && !implied);
                }
            /* the path by a scan of every earlier position (the walk before predecessor
             * rows): the latest-ending sink on a longest path, then back */
            uint32_t v = UINT32_MAX, opath[DMAX], onp = 0;
            for (uint32_t i = 0; i < n; i++) {
                int sink = 1;
                for (uint32_t j = 0; j < n && sink; j++)
                    sink = !lp_reqpath_edge(&p, i, j);
                if (sink && p.cpstart[i] + p.dur[i] == p.cp && (v == UINT32_MAX || p.end[i] > p.end[v]))
                    v = i;
            }
            while (v != UINT32_MAX) {
                opath[onp++] = v;
                uint32_t best = UINT32_MAX;
                for (uint32_t i = 0; i < v; i++)
                    if (lp_reqpath_edge(&p, i, v) && p.cpstart[i] + p.dur[i] == p.cpstart[v] &&
                        (best == UINT32_MAX || p.end[i] > p.end[best] ||
                         (p.end[i] == p.end[best] && p.task[i] != p.task[v] && p.task[best] == p.task[v])))
                        best = i;
                v = best;
            }
            ok = ok && p.npath == onp;
            for (uint32_t k = 0; ok && k < onp; k++)
                ok = p.path[k] == opath[onp - 1 - k];
            if (!ok && mism++ < 5)
                fprintf(stderr, "pairs mismatch: model %d request %d (n %u, S %u): violations %u vs %u\n", mi, it,
                        n, S, p.violations, viol);
        }
        lp_reqpath_release(&p);
        lp_causal_release(&m);
    }
    CHECK_EQ_I(mism, 0);
    CHECK_EQ_I(runs, 4800);
}

int main(void)
{
    test_random();
    test_ties();
    test_cases();
    test_wide();
    test_pairs_differential();
    return t_done("test_reqpath");
}
