/* test_kcp_naive.c: the bounded critical path against its specification, by exhaustive
 * enumeration, on thousands of small random execution graphs (the naive twin of
 * kcp_bounded.c); and the unbounded path's invariants on the same graphs.
 *
 * The specification (docs/analyses/kernel-critical-path.md "Bounded"), enumerated here
 * independently of the library:
 *   path(T, s, e)      = T's edges over [s, e] in order, each non-resolvable edge as
 *                        itself, each hole as a gap, each resolvable blocked edge b as
 *                        explain(b, max(start(b), s)), or b itself (unexplained) if empty;
 *                        then glued (gaps where the path jumps ahead, clipping to [s, e]).
 *   explain(b, B)      with B' = max(B, start(b)): if no link ends at b's end, empty; else
 *                        the link, then the walk chosen among ALL walks back from its
 *                        source, where a walk at vertex z (time > B') ends if z's incoming
 *                        link starts at or before B' (taking it), and otherwise may take
 *                        z's incoming horizontal edge (choice 0) and/or z's incoming link
 *                        (choice 1; offered beside an edge only if that edge is not
 *                        resolvable), ends successfully at a vertex at or before B', and
 *                        fails at a vertex with no move. The chosen walk is the successful
 *                        one with the smallest choice word (lexicographic), or if none
 *                        succeeds the one with the largest word. Resolvable blocked edges
 *                        on the chosen walk are replaced by explain(edge, B') (themselves
 *                        if that is empty).
 * Every walk is listed; nothing is memoised. */
#include "ktest.h"
#include "tutil.h"

#include <stdlib.h>

/* ---- random graphs ------------------------------------------------------------------ */

typedef struct rv {
    uint32_t w, idx, bid; /* worker, index on it, builder vertex id */
    int64_t t;
} rv;

static lp_kgraph *random_graph(uint64_t *seed)
{
    lp_kgraph_builder *b;
    lp_error err;
    if (lp_kgraph_builder_new(&b, &err))
        return NULL;
    uint32_t host;
    lp_kgraph_builder_host(b, "h", &host, &err);
    uint32_t nw = 1 + (uint32_t)(t_splitmix(seed) % 5);
    rv vs[48];
    uint32_t nv = 0, perm[5] = {0, 1, 2, 3, 4};
    for (uint32_t i = 4; i > 0; i--) {
        uint32_t j = (uint32_t)(t_splitmix(seed) % (i + 1)), x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    for (uint32_t w = 0; w < nw; w++) {
        uint32_t id;
        lp_kgraph_builder_worker(b, host, (int32_t)w + 1, -1, "t", &id, &err);
        uint32_t n = 1 + (uint32_t)(t_splitmix(seed) % 8);
        int64_t t = (int64_t)(t_splitmix(seed) % 12);
        for (uint32_t i = 0; i < n; i++) {
            lp_kstate st = LP_KS_NONE;
            lp_kreason rs = LP_KR_NONE;
            if (i) {
                uint64_t r = t_splitmix(seed) % 16;
                if (r < 7) {
                    st = LP_KS_BLOCKED;
                    static const lp_kreason reasons[] = {LP_KR_THREAD, LP_KR_NETWORK, LP_KR_UNKNOWN, LP_KR_IRQ,
                                                         LP_KR_THREAD, LP_KR_TIMER,   LP_KR_BLOCK_DEV};
                    rs = reasons[r];
                } else {
                    static const lp_kstate states[] = {LP_KS_RUNNING, LP_KS_RUNNING, LP_KS_RUNNING, LP_KS_PREEMPTED,
                                                       LP_KS_WAIT_CPU, LP_KS_UNKNOWN, LP_KS_NONE, LP_KS_RUNNING, LP_KS_RUNNING};
                    st = states[r - 7];
                }
                t += (int64_t)(t_splitmix(seed) % 4);
            }
            uint32_t bid;
            if (lp_kgraph_builder_append(b, id, t, st, rs, &bid, &err)) {
                lp_kgraph_builder_free(b);
                return NULL;
            }
            vs[nv++] = (rv){w, i, bid, t};
        }
    }
    /* links respecting the order (time, permuted worker, index): acyclic by construction */
    uint32_t tries = 3 * nv;
    for (uint32_t k = 0; k < tries; k++) {
        const rv *a = &vs[t_splitmix(seed) % nv], *z = &vs[t_splitmix(seed) % nv];
        int before = a->t < z->t || (a->t == z->t && (perm[a->w] < perm[z->w] || (a->w == z->w && a->idx < z->idx)));
        if (!before)
            continue;
        lp_klink kind = (lp_klink)(t_splitmix(seed) % 3);
        lp_kgraph_builder_link(b, a->bid, z->bid, kind, &err); /* refused if a vertex already has one: fine */
    }
    lp_kgraph *g = NULL;
    if (lp_kgraph_builder_finish(b, &g, &err))
        return NULL;
    return g;
}

/* ---- the specification ---------------------------------------------------------------- */

enum { IK_EDGE = 0, IK_LINK, IK_UNEXPL, IK_GAP };
typedef struct nit {
    int kind;
    uint32_t ref;      /* vertex, link, or worker for gaps */
    int64_t t0, t1;
} nit;

typedef struct nlist {
    nit it[4096];
    size_t n;
    int overflow;
} nlist;

static void add(nlist *l, int kind, uint32_t ref, int64_t t0, int64_t t1)
{
    if (l->n == sizeof l->it / sizeof l->it[0]) {
        l->overflow = 1;
        return;
    }
    l->it[l->n++] = (nit){kind, ref, t0, t1};
}

static uint32_t wof(const lp_kgraph *g, uint32_t v)
{
    uint32_t w = 0;
    while (w + 1 < g->nworkers && g->voff[w + 1] <= v)
        w++;
    return w;
}

static int has_edge_in(const lp_kgraph *g, uint32_t z) { return z > g->voff[wof(g, z)] && g->vstate[z - 1] != LP_KS_NONE; }

typedef struct walk {
    char word[64];
    int moves[64];     /* 'S' shortcut, 'H' horizontal, 'L' link */
    uint32_t at[64];   /* the vertex each move starts from */
    int nmoves, ok;
} walk;

typedef struct walks {
    walk w[2048];
    int n, overflow;
} walks;

static void gen(const lp_kgraph *g, uint32_t z, int64_t B, walk cur, walks *out)
{
    if (cur.nmoves >= 63 || (size_t)strlen(cur.word) >= 62) {
        out->overflow = 1;
        return;
    }
    uint32_t l = g->vin[z];
    if (g->vt[z] <= B) {
        cur.ok = 1;
    } else if (l != LP_NONE32 && g->vt[g->lfrom[l]] <= B) {
        cur.at[cur.nmoves] = z;
        cur.moves[cur.nmoves++] = 'S';
        cur.ok = 1;
    } else {
        int h = has_edge_in(g, z);
        int lk = l != LP_NONE32 && (!h || !lp_kstate_resolvable(g->vstate[z - 1], g->vreason[z - 1]));
        cur.at[cur.nmoves] = z;
        if (h && lk) {
            walk a = cur, b2 = cur;
            size_t n = strlen(cur.word);
            a.word[n] = '0', a.word[n + 1] = 0;
            b2.word[n] = '1', b2.word[n + 1] = 0;
            a.moves[a.nmoves++] = 'H';
            b2.moves[b2.nmoves++] = 'L';
            gen(g, z - 1, B, a, out);
            gen(g, g->lfrom[l], B, b2, out);
            return;
        }
        if (h) {
            cur.moves[cur.nmoves++] = 'H';
            gen(g, z - 1, B, cur, out);
            return;
        }
        if (lk) {
            cur.moves[cur.nmoves++] = 'L';
            gen(g, g->lfrom[l], B, cur, out);
            return;
        }
        cur.ok = 0;
    }
    if (out->n == (int)(sizeof out->w / sizeof out->w[0])) {
        out->overflow = 1;
        return;
    }
    out->w[out->n++] = cur;
}

static int explain(const lp_kgraph *g, uint32_t v, int64_t B, nlist *fwd);

/* The forward items of blocked edge v: its explanation or v itself. */
static void explain_or_self(const lp_kgraph *g, uint32_t v, int64_t B, nlist *fwd)
{
    if (!explain(g, v, B, fwd))
        add(fwd, IK_UNEXPL, v, 0, 0);
}

/* Appends the explanation of blocked edge v in forward order; 0 if it is empty. */
static int explain(const lp_kgraph *g, uint32_t v, int64_t B, nlist *fwd)
{
    if (g->vt[v] > B)
        B = g->vt[v];
    uint32_t l = g->vin[v + 1];
    if (l == LP_NONE32)
        return 0;
    static walks ws[16];
    static int depth = 0;
    if (depth == 16) {
        fwd->overflow = 1;
        return 1;
    }
    walks *all = &ws[depth++];
    all->n = all->overflow = 0;
    walk start;
    memset(&start, 0, sizeof start);
    gen(g, g->lfrom[l], B, start, all);
    int pick = -1;
    for (int i = 0; i < all->n; i++)
        if (all->w[i].ok && (pick < 0 || strcmp(all->w[i].word, all->w[pick].word) < 0))
            pick = i;
    if (pick < 0)
        for (int i = 0; i < all->n; i++)
            if (pick < 0 || strcmp(all->w[i].word, all->w[pick].word) > 0)
                pick = i;
    if (all->overflow)
        fwd->overflow = 1;
    walk wk = all->w[pick];
    /* the walk goes back in time: emit its moves last to first, then the wake-up */
    for (int m = wk.nmoves - 1; m >= 0; m--) {
        uint32_t z = wk.at[m];
        if (wk.moves[m] == 'H') {
            if (lp_kstate_resolvable(g->vstate[z - 1], g->vreason[z - 1]))
                explain_or_self(g, z - 1, B, fwd);
            else
                add(fwd, IK_EDGE, z - 1, 0, 0);
        } else {
            add(fwd, IK_LINK, g->vin[z], 0, 0);
        }
    }
    add(fwd, IK_LINK, l, 0, 0);
    depth--;
    return 1;
}

/* Glue items into elements over [s, e]. */
static size_t glue(const lp_kgraph *g, const nlist *it, uint32_t wlast, int64_t s, int64_t e, lp_kcp_elem *out, size_t max)
{
    size_t n = 0;
    int64_t cur = s;
    for (size_t i = 0; i < it->n && n + 2 < max; i++) {
        const nit *x = &it->it[i];
        int64_t t0, t1;
        uint32_t from, to;
        if (x->kind == IK_LINK) {
            t0 = g->vt[g->lfrom[x->ref]], t1 = g->vt[g->lto[x->ref]];
            from = wof(g, g->lfrom[x->ref]), to = wof(g, g->lto[x->ref]);
        } else if (x->kind == IK_GAP) {
            t0 = x->t0, t1 = x->t1, from = to = x->ref;
        } else {
            t0 = g->vt[x->ref], t1 = g->vt[x->ref + 1], from = to = wof(g, x->ref);
        }
        int link = x->kind == IK_LINK;
        if (t1 < cur || (t1 == cur && !link) || t0 > e)
            continue;
        if (t0 > cur) {
            out[n++] = (lp_kcp_elem){cur, t0 < e ? t0 : e, from, from, LP_NONE32, LP_KCP_GAP, LP_KS_UNKNOWN, 0, 0};
            cur = out[n - 1].end;
        }
        lp_kcp_elem el = {cur, t1 < e ? t1 : e, to, from, x->ref, LP_KCP_STATE, 0, 0, 0};
        if (el.end == el.start && !link)
            continue;
        if (el.start > t0 || el.end < t1)
            el.flags |= LP_KCP_CLIPPED;
        if (link) {
            el.kind = LP_KCP_LINK;
            el.reason = g->lkind[x->ref];
        } else if (x->kind == IK_GAP) {
            el.kind = LP_KCP_GAP;
            el.state = LP_KS_UNKNOWN;
            el.ref = LP_NONE32;
        } else {
            el.state = g->vstate[x->ref];
            el.reason = g->vreason[x->ref];
            if (x->kind == IK_UNEXPL)
                el.flags |= LP_KCP_UNEXPLAINED;
        }
        out[n++] = el;
        cur = el.end;
    }
    if (cur < e)
        out[n++] = (lp_kcp_elem){cur, e, wlast, wlast, LP_NONE32, LP_KCP_GAP, LP_KS_UNKNOWN, 0, 0};
    return n;
}

static size_t naive_bounded(const lp_kgraph *g, uint32_t w, int64_t s, int64_t e, lp_kcp_elem *out, size_t max,
                            int *overflow)
{
    static nlist items;
    items.n = 0;
    items.overflow = 0;
    for (uint32_t v = g->voff[w]; v + 1 < g->voff[w + 1]; v++) {
        if (g->vt[v + 1] <= s || g->vt[v] >= e || g->vt[v + 1] == g->vt[v])
            continue;
        if (g->vstate[v] == LP_KS_NONE)
            add(&items, IK_GAP, w, g->vt[v], g->vt[v + 1]);
        else if (!lp_kstate_resolvable(g->vstate[v], g->vreason[v]))
            add(&items, IK_EDGE, v, 0, 0);
        else
            explain_or_self(g, v, g->vt[v] > s ? g->vt[v] : s, &items);
    }
    *overflow = items.overflow;
    return glue(g, &items, w, s, e, out, max);
}

/* ---- the comparison ------------------------------------------------------------------ */

static int same(const lp_kcp_elem *a, const lp_kcp_elem *b)
{
    return a->start == b->start && a->end == b->end && a->worker == b->worker && a->from == b->from &&
           a->ref == b->ref && a->kind == b->kind && a->state == b->state && a->reason == b->reason &&
           a->flags == b->flags;
}

/* Unbounded: contiguous, within [s, e], every element a piece of what it names. */
static int unbounded_sane(const lp_kgraph *g, const lp_kcp *cp)
{
    if (!kcp_contiguous(cp))
        return 0;
    for (size_t i = 0; i < cp->n; i++) {
        const lp_kcp_elem *x = &cp->e[i];
        if (x->kind == LP_KCP_STATE &&
            (x->ref >= g->nv || g->vt[x->ref] > x->start || g->vt[x->ref + 1] < x->end || wof(g, x->ref) != x->worker))
            return 0;
        if (x->kind == LP_KCP_LINK && (x->ref >= g->nlinks || g->vt[g->lfrom[x->ref]] > x->start ||
                                       g->vt[g->lto[x->ref]] < x->end || wof(g, g->lto[x->ref]) != x->worker))
            return 0;
    }
    return 1;
}

int main(void)
{
    static lp_kcp_elem want[8192];
    int compared = 0, skipped = 0, mismatches = 0, with_links = 0;
    for (uint64_t round = 1; round <= 20000; round++) {
        uint64_t seed = round * 7919;
        lp_kgraph *g = random_graph(&seed);
        CHECK(g != NULL);
        if (!g)
            continue;
        with_links += g->nlinks > 0;
        for (uint32_t w = 0; w < g->nworkers; w++) {
            int64_t life0 = g->vt[g->voff[w]], life1 = g->vt[g->voff[w + 1] - 1];
            int64_t s = life0, e = life1;
            if (t_splitmix(&seed) % 3 == 0) { /* a random interval inside the lifetime */
                s = life0 + (int64_t)(t_splitmix(&seed) % (uint64_t)(life1 - life0 + 1));
                e = s + (int64_t)(t_splitmix(&seed) % (uint64_t)(life1 - s + 1));
            }
            lp_kcp cp;
            lp_error err;
            lp_status st = lp_kcp_compute(g, w, s, e, LP_KCP_BOUNDED, &cp, &err);
            CHECK(st == LP_OK);
            if (st)
                continue;
            int overflow = 0;
            size_t n = naive_bounded(g, w, s, e, want, sizeof want / sizeof want[0], &overflow);
            if (overflow) {
                skipped++;
                lp_kcp_release(&cp);
                continue;
            }
            compared++;
            int ok = cp.n == n && kcp_contiguous(&cp);
            for (size_t i = 0; ok && i < n; i++)
                ok = same(&cp.e[i], &want[i]);
            if (!ok && mismatches++ < 3) {
                fprintf(stderr, "round %llu worker %u [%lld, %lld]: fast path\n", (unsigned long long)round, w,
                        (long long)s, (long long)e);
                kcp_print(g, &cp, stderr);
                lp_kcp naive = {want, n, w, s, e, LP_KCP_BOUNDED, 0, 0, 0};
                fprintf(stderr, "  specification:\n");
                kcp_print(g, &naive, stderr);
            }
            CHECK(ok);
            lp_kcp_release(&cp);
            st = lp_kcp_compute(g, w, s, e, LP_KCP_UNBOUNDED, &cp, &err);
            CHECK(st == LP_OK);
            if (!st) {
                CHECK(unbounded_sane(g, &cp));
                lp_kcp_release(&cp);
            }
        }
        if (round % 10 == 0) { /* the model's view of random graphs, self-links included */
            lp_diags ds;
            lp_diags_init(&ds, 5);
            lp_trace *t = NULL;
            lp_error err;
            CHECK(lp_kgraph_to_trace(g, &ds, &t, &err) == LP_OK);
            CHECK_EQ_I(ds.nerrors, 0);
            if (t)
                CHECK_EQ_I(t->nmsgs, g->nlinks);
            lp_trace_free(t);
            lp_diags_release(&ds);
        }
        lp_kgraph_free(g);
    }
    fprintf(stderr, "compared %d paths (%d skipped: too many walks), %d graphs with links\n", compared, skipped,
            with_links);
    CHECK(compared > 5000);
    CHECK(skipped < compared / 100);
    return t_done("test_kcp_naive");
}
