/* test_hashmap.c: base/hashmap.h against a naive twin (an unsorted array searched
 * linearly) over thousands of random operation sequences with few distinct keys (so
 * deletions hit runs and wrap-arounds), hashed keys with deliberate collisions, growth,
 * clearing, and allocation failure. */
#include "t.h"
#include "tutil.h"
#include "base/hashmap.h"
#include "longpole/base/alloc.h"

#include <stdint.h>

typedef struct naive {
    uint64_t key[512], val[512];
    size_t n;
} naive;

static int naive_get(const naive *a, uint64_t k, uint64_t *v)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->key[i] == k) {
            *v = a->val[i];
            return 1;
        }
    return 0;
}

static void naive_put(naive *a, uint64_t k, uint64_t v)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->key[i] == k) {
            a->val[i] = v;
            return;
        }
    a->key[a->n] = k;
    a->val[a->n++] = v;
}

static int naive_del(naive *a, uint64_t k)
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
static int same(const lp_hmap *m, const naive *a)
{
    if (m->n != a->n)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        uint64_t v;
        if (!lp_hmap_get(m, a->key[i], &v) || v != a->val[i])
            return 0;
    }
    size_t live = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slot[i].val != LP_HMAP_EMPTY) {
            uint64_t v;
            if (!naive_get(a, m->slot[i].key, &v) || v != m->slot[i].val)
                return 0;
            live++;
        }
    return live == a->n && m->n <= m->cap / 2;
}

static void test_exact_random(void)
{
    uint64_t seed = 42;
    int bad = 0;
    for (int round = 0; round < 3000 && !bad; round++) {
        lp_hmap m;
        CHECK(lp_hmap_init(&m, round % 3 ? 0 : 100, NULL) == LP_OK);
        naive a = {.n = 0};
        uint64_t universe = 1 + t_splitmix(&seed) % 300;
        int ops = (int)(t_splitmix(&seed) % 600);
        for (int k = 0; k < ops && !bad; k++) {
            uint64_t r = t_splitmix(&seed);
            /* keys that collide in their low or high bits, or both */
            uint64_t key = (r >> 8) % universe;
            key = (r & 1) ? key << 40 : (r & 2) ? key * 1024 : key;
            uint64_t v = 0;
            switch ((r >> 4) % 4) {
            case 0:
            case 1:
                if (a.n < 512) {
                    uint64_t val = t_splitmix(&seed) >> 1;
                    CHECK(lp_hmap_put(&m, key, val, NULL) == LP_OK);
                    naive_put(&a, key, val);
                }
                break;
            case 2: {
                int x = lp_hmap_del(&m, key), y = naive_del(&a, key);
                if (x != y)
                    bad = 1;
                break;
            }
            default: {
                uint64_t w = 0;
                int x = lp_hmap_get(&m, key, &v), y = naive_get(&a, key, &w);
                if (x != y || (x && v != w))
                    bad = 1;
            }
            }
            if (k % 37 == 0 && !same(&m, &a))
                bad = 1;
        }
        if (!same(&m, &a))
            bad = 1;
        if (round % 100 == 0) {
            lp_hmap_clear(&m);
            a.n = 0;
            if (!same(&m, &a))
                bad = 1;
        }
        lp_hmap_release(&m);
        if (bad)
            fprintf(stderr, "exact keys: first mismatch in round %d\n", round);
    }
    CHECK(!bad);
}

/* hashed keys: entries are strings of a table, the hash deliberately weak (a few
 * values) so that eq() has to tell them apart */
typedef struct strs {
    char s[256][8];
    size_t n;
} strs;
typedef struct probe {
    const strs *t;
    const char *want;
} probe;

static int str_eq(const void *ctx, uint64_t v)
{
    const probe *p = ctx;
    return strcmp(p->t->s[v], p->want) == 0;
}

static void test_hashed(void)
{
    uint64_t seed = 7;
    for (int round = 0; round < 500; round++) {
        lp_hmap m;
        lp_hmap_init(&m, 0, NULL);
        strs t = {.n = 0};
        int ok = 1;
        for (int k = 0; k < 200; k++) {
            char w[8];
            snprintf(w, sizeof w, "s%u", (unsigned)(t_splitmix(&seed) % 150));
            uint64_t h = lp_hash_bytes(w, strlen(w)) % (1 + round % 5); /* 1 to 5 distinct hashes */
            probe p = {&t, w};
            size_t slot = 0;
            uint64_t v = lp_hmap_find(&m, h, str_eq, &p, &slot);
            size_t naive_i = t.n;
            for (size_t i = 0; i < t.n; i++)
                if (t.s[i][0] && strcmp(t.s[i], w) == 0)
                    naive_i = i;
            if ((v == LP_HMAP_EMPTY) != (naive_i == t.n) || (v != LP_HMAP_EMPTY && v != naive_i))
                ok = 0;
            if (v == LP_HMAP_EMPTY) {
                memcpy(t.s[t.n], w, sizeof w);
                CHECK(lp_hmap_add(&m, h, t.n++, NULL) == LP_OK);
            } else if (t_splitmix(&seed) % 3 == 0) {
                lp_hmap_del_at(&m, slot);
                t.s[v][0] = 0; /* gone from the twin too (never equal to a probe) */
            }
        }
        CHECK(ok);
        lp_hmap_release(&m);
    }
}

static void test_nomem(void)
{
    lp_hmap m;
    lp_hmap_init(&m, 0, NULL);
    lp_alloc_fail_after(0);
    lp_error err;
    lp_error_clear(&err);
    CHECK(lp_hmap_put(&m, 1, 2, &err) == LP_ERR_NOMEM);
    int added = 0;
    CHECK(lp_hmap_slot_of(&m, 1, 2, &added) == NULL);
    lp_alloc_fail_after(-1);
    CHECK(lp_hmap_put(&m, 1, 2, &err) == LP_OK);
    uint64_t v = 0;
    CHECK(lp_hmap_get(&m, 1, &v) && v == 2);
    lp_hmap_slot *s = lp_hmap_slot_of(&m, 1, 9, &added);
    CHECK(s && !added && s->val == 2);
    lp_hmap_release(&m);
    CHECK(!lp_hmap_get(&m, 1, &v));
}

int main(void)
{
    test_exact_random();
    test_hashed();
    test_nomem();
    return t_done("test_hashmap");
}
