/* hashmap_twin_t.h: the tests of test_hashmap.c, written once for both widths of the
 * table and included twice: TW_WIDE 1 tests lp_hmap (64-bit), 0 tests lp_hmap32. T(x)
 * names this width's copy of a test function, HM(x) the table's, U its key and value
 * type. */
#if TW_WIDE
#define HM(x) lp_hmap##x
#define T(x) x##_64
#define U uint64_t
#define EMPTY LP_HMAP_EMPTY
#define BITS 64
#else
#define HM(x) lp_hmap32##x
#define T(x) x##_32
#define U uint32_t
#define EMPTY LP_HMAP32_EMPTY
#define BITS 32
#endif

typedef struct T(naive) {
    U key[512], val[512];
    size_t n;
} T(naive);

static int T(naive_get)(const T(naive) *a, U k, U *v)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->key[i] == k) {
            *v = a->val[i];
            return 1;
        }
    return 0;
}

static void T(naive_put)(T(naive) *a, U k, U v)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->key[i] == k) {
            a->val[i] = v;
            return;
        }
    a->key[a->n] = k;
    a->val[a->n++] = v;
}

static int T(naive_del)(T(naive) *a, U k)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->key[i] == k) {
            a->key[i] = a->key[--a->n];
            a->val[i] = a->val[a->n];
            return 1;
        }
    return 0;
}

/* every key the twin holds is found with its value, and the table holds nothing more */
static int T(same)(const HM() *m, const T(naive) *a)
{
    if (m->n != a->n)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        U v;
        if (!HM(_get)(m, a->key[i], &v) || v != a->val[i])
            return 0;
    }
    size_t live = 0;
    for (size_t i = 0; i < m->cap; i++) {
        U k, x, v;
        if (HM(_at)(m, i, &k, &x)) {
            if (!T(naive_get)(a, k, &v) || v != x)
                return 0;
            live++;
        }
    }
    return live == a->n && m->n <= m->cap / 2;
}

/* a random value, never the unstorable one */
static U T(value)(uint64_t *seed) { return (U)(t_splitmix(seed) % EMPTY); }

/* reset to a smaller size, then fill again */
static int T(reset_and_fill)(HM() *m, T(naive) *a, size_t expect)
{
    CHECK(HM(_reset)(m, expect, NULL) == LP_OK);
    a->n = 0;
    if (!T(same)(m, a) || m->cap > 32 || m->room < m->cap)
        return 0;
    for (U k = 0; k < 40; k++) {
        CHECK(HM(_put)(m, k * 977, k, NULL) == LP_OK);
        T(naive_put)(a, k * 977, k);
    }
    return T(same)(m, a);
}

/* one random operation on the table and its twin; 0 if they disagree */
static int T(random_op)(HM() *m, T(naive) *a, uint64_t *seed, U universe)
{
    uint64_t r = t_splitmix(seed);
    /* keys that collide in their low or high bits, or both */
    U key = (U)((r >> 8) % universe);
    key = (r & 1) ? (U)(key << (BITS - 24)) : (r & 2) ? (U)(key * 1024) : key;
    U v = 0, w = 0;
    switch ((r >> 4) % 5) {
    case 0:
    case 1:
        if (a->n < 512) {
            U val = T(value)(seed);
            CHECK(HM(_put)(m, key, val, NULL) == LP_OK);
            T(naive_put)(a, key, val);
        }
        return 1;
    case 4: /* get_or_put: the value present, or the fresh one stored */
        if (a->n < 512) {
            U fresh = T(value)(seed);
            int added = -1, had = T(naive_get)(a, key, &w);
            U got = HM(_get_or_put)(m, key, fresh, &added);
            if (!had)
                T(naive_put)(a, key, fresh);
            return added == !had && got == (had ? w : fresh);
        }
        return 1;
    case 2:
        return HM(_del)(m, key) == T(naive_del)(a, key);
    default: {
        int x = HM(_get)(m, key, &v), y = T(naive_get)(a, key, &w);
        return x == y && (!x || v == w);
    }
    }
}

static void T(test_exact_random)(void)
{
    uint64_t seed = 42;
    int bad = 0;
    for (int round = 0; round < 3000 && !bad; round++) {
        HM() m;
        if (round % 7 == 3)
            memset(&m, 0, sizeof m); /* a zeroed table is an empty one */
        else
            CHECK(HM(_init)(&m, round % 3 ? 0 : 100, NULL) == LP_OK);
        T(naive) a = {.n = 0};
        U universe = (U)(1 + t_splitmix(&seed) % 300);
        int ops = (int)(t_splitmix(&seed) % 600);
        for (int k = 0; k < ops && !bad; k++)
            if (!T(random_op)(&m, &a, &seed, universe) || (k % 37 == 0 && !T(same)(&m, &a)))
                bad = 1;
        if (!T(same)(&m, &a))
            bad = 1;
        if (round % 50 == 0) { /* a copy holds the same entries, in the same slots */
            HM() c;
            CHECK(HM(_copy)(&c, &m, NULL) == LP_OK);
            if (!T(same)(&c, &a) || c.cap != m.cap || (m.cap && memcmp(c.slot, m.slot, m.cap * sizeof *m.slot)))
                bad = 1;
            HM(_release)(&c);
        }
        if (round % 100 == 0) {
            HM(_clear)(&m);
            a.n = 0;
            if (!T(same)(&m, &a))
                bad = 1;
        } else if (round % 100 == 1 && !T(reset_and_fill)(&m, &a, (size_t)round % 13)) {
            bad = 1;
        }
        HM(_release)(&m);
        if (bad)
            fprintf(stderr, "exact keys (%d bits): first mismatch in round %d\n", BITS, round);
    }
    CHECK(!bad);
}

/* hashed keys: entries are strings of a table, the hash deliberately weak (a few
 * values) so that eq() has to tell them apart */
static int T(hashed_round)(uint64_t *seed, U nhash)
{
    HM() m;
    HM(_init)(&m, 0, NULL);
    strs t = {.n = 0};
    int ok = 1;
    for (int k = 0; k < 200; k++) {
        char w[8];
        snprintf(w, sizeof w, "s%u", (unsigned)(t_splitmix(seed) % 150));
        U h = (U)(lp_hash_bytes(w, strlen(w)) % nhash);
        probe p = {&t, w};
        size_t slot = 0;
        U v = HM(_find)(&m, h, str_eq, &p, &slot);
        size_t naive_i = t.n;
        for (size_t i = 0; i < t.n; i++)
            if (t.s[i][0] && strcmp(t.s[i], w) == 0)
                naive_i = i;
        if ((v == EMPTY) != (naive_i == t.n) || (v != EMPTY && v != naive_i))
            ok = 0;
        int added = 0;
        if (v == EMPTY) {
            memcpy(t.s[t.n], w, sizeof w);
            if (k % 2) /* add, or find_or_add: which finds nothing either, and adds */
                CHECK(HM(_add)(&m, h, (U)t.n, NULL) == LP_OK);
            else
                CHECK(HM(_find_or_add)(&m, h, str_eq, &p, (U)t.n, &added) == t.n && added);
            t.n++;
        } else if (t_splitmix(seed) % 3 == 0) {
            HM(_del_at)(&m, slot);
            t.s[v][0] = 0; /* gone from the twin too (never equal to a probe) */
        } else if (t_splitmix(seed) % 2) {
            HM(_set_at)(&m, slot, v); /* the same value again: nothing changes */
        } else if (HM(_find_or_add)(&m, h, str_eq, &p, 999, &added) != v || added) {
            ok = 0;
        }
    }
    HM(_release)(&m);
    return ok;
}

static void T(test_hashed)(void)
{
    uint64_t seed = 7;
    for (int round = 0; round < 500; round++)
        CHECK(T(hashed_round)(&seed, (U)(1 + round % 5))); /* 1 to 5 distinct hashes */
}

static void T(test_nomem)(void)
{
    HM() m;
    HM(_init)(&m, 0, NULL);
    lp_alloc_fail_after(0);
    lp_error err;
    lp_error_clear(&err);
    CHECK(HM(_put)(&m, 1, 2, &err) == LP_ERR_NOMEM);
    int added = 0;
    CHECK(HM(_get_or_put)(&m, 1, 2, &added) == EMPTY);
    CHECK(HM(_reset)(&m, 100, &err) == LP_ERR_NOMEM);
    lp_alloc_fail_after(-1);
    CHECK(HM(_put)(&m, 1, 2, &err) == LP_OK);
    U v = 0;
    CHECK(HM(_get)(&m, 1, &v) && v == 2);
    CHECK(HM(_get_or_put)(&m, 1, 9, &added) == 2 && !added);
    /* a reserved table inserts without allocating */
    CHECK(HM(_reserve)(&m, 100, &err) == LP_OK);
    lp_alloc_fail_after(0);
    for (U k = 2; k <= 100; k++)
        CHECK(HM(_get_or_put)(&m, k, k, &added) == k && added);
    HM() c;
    CHECK(HM(_copy)(&c, &m, &err) == LP_ERR_NOMEM && c.n == 0 && !c.slot);
    lp_alloc_fail_after(-1);
    HM(_release)(&m);
    CHECK(!HM(_get)(&m, 1, &v));
}

#undef HM
#undef T
#undef U
#undef EMPTY
#undef BITS
