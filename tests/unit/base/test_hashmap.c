/* test_hashmap.c: base/hashmap.h, both widths (lp_hmap, lp_hmap32), against a naive
 * twin (an unsorted array searched linearly) over thousands of random operation
 * sequences with few distinct keys (so deletions hit runs and wrap-arounds), hashed
 * keys with deliberate collisions, growth, clearing, resetting, copying, zeroed
 * tables, and allocation failure. The tests are written once (hashmap_twin_t.h). */
#include "t.h"
#include "tutil.h"
#include "base/hashmap.h"
#include "longpole/base/alloc.h"

#include <stdint.h>

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

#define TW_WIDE 1
#include "hashmap_twin_t.h"
#undef TW_WIDE
#define TW_WIDE 0
#include "hashmap_twin_t.h"
#undef TW_WIDE

/* lp_hash_mix keeps distinct pairs apart in both halves of its result (lp_hmap32 keys
 * are its low 32 bits): pairs of ids as the callers pack them, swapped pairs included */
static void test_mix(void)
{
    enum { N = 40000 };
    static uint32_t lo[N];
    static uint64_t full[N];
    size_t n = 0;
    for (uint64_t id = 0; id < 1000; id++)
        for (uint64_t pair = 0; pair < 40; pair++)
            if (n < N) {
                uint64_t x = lp_hash_mix(id, (pair % 7) << 32 | (pair / 7));
                full[n] = x;
                lo[n++] = (uint32_t)x;
            }
    size_t same_full = 0, same_lo = 0;
    lp_hmap seen;
    lp_hmap32 seen32;
    lp_hmap_init(&seen, 0, NULL);
    lp_hmap32_init(&seen32, 0, NULL);
    for (size_t i = 0; i < n; i++) {
        int added;
        lp_hmap_get_or_put(&seen, full[i], i, &added);
        same_full += !added;
        lp_hmap32_get_or_put(&seen32, lo[i], (uint32_t)i, &added);
        same_lo += !added;
    }
    CHECK(same_full == 0);
    CHECK(same_lo <= 2); /* 40000 random 32-bit values: about 0.2 collisions expected */
    lp_hmap_release(&seen);
    lp_hmap32_release(&seen32);
}

int main(void)
{
    test_exact_random_64();
    test_exact_random_32();
    test_hashed_64();
    test_hashed_32();
    test_nomem_64();
    test_nomem_32();
    test_mix();
    return t_done("test_hashmap");
}
