/* hashmap.h: the one hash table of liblongpole: 64-bit keys to 64-bit values, open
 * addressing with linear probing over a power-of-two array of (key, value) slots.
 * Internal to the library (every module that needs a table uses this one).
 *
 * Two ways to use it, on the same structure:
 *  - exact keys: the key is the whole identity (an id, or fields packed into 64 bits):
 *    lp_hmap_get / lp_hmap_put / lp_hmap_slot;
 *  - hashed keys: the key is a 64-bit hash of something larger that the caller keeps
 *    (a string, a triple of ids), the value names the caller's entry, and equality is
 *    the caller's: lp_hmap_find(m, hash, eq, ctx) visits only the slots whose key is
 *    that hash and asks eq() about their values; lp_hmap_add inserts without looking.
 *    With a good 64-bit hash, eq() is called about once per successful lookup.
 *
 * Invariants: cap is 0 or a power of two >= 8; n <= cap / 2 (the table doubles before
 * passing half full, so every probe sequence ends at an empty slot within a few steps);
 * an empty slot has val == LP_HMAP_EMPTY, which therefore is not a storable value; the
 * entries of one key form an unbroken run from its home slot (deletion shifts the
 * following entries back instead of leaving tombstones). Slots are 16 bytes: a table of
 * n entries costs 32-64 n bytes. Lookups are inline: a lookup is a multiply, a shift
 * and usually one cache line.
 */
#ifndef LP_BASE_HASHMAP_H
#define LP_BASE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"

#define LP_HMAP_EMPTY UINT64_MAX

typedef struct lp_hmap_slot {
    uint64_t key;
    uint64_t val; /* LP_HMAP_EMPTY: the slot is free */
} lp_hmap_slot;

typedef struct lp_hmap {
    lp_hmap_slot *slot; /* [cap] */
    size_t cap;         /* 0 or a power of two */
    size_t n;           /* entries stored */
    unsigned shift;     /* 64 - log2(cap): home slot = (key * golden) >> shift */
} lp_hmap;

/* An empty table with room for `expect` entries before it grows (0: allocate on first
 * insertion). LP_ERR_NOMEM if the room cannot be allocated. */
lp_status lp_hmap_init(lp_hmap *m, size_t expect, lp_error *err);
/* Free the slots; the table is empty and usable again. */
void lp_hmap_release(lp_hmap *m);
/* Remove every entry, keeping the allocation. */
void lp_hmap_clear(lp_hmap *m);
/* Make room for `n` entries in all (never shrinks). */
lp_status lp_hmap_reserve(lp_hmap *m, size_t n, lp_error *err);

/* The home slot of a key. Fibonacci hashing: keys that differ only in their high or
 * low bits still spread. */
static inline size_t lp_hmap_home_(const lp_hmap *m, uint64_t key)
{
    return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> m->shift);
}

/* ---- exact keys ---------------------------------------------------------------- */

/* The value of `key` into *val: 1 if present, 0 if not. */
static inline int lp_hmap_get(const lp_hmap *m, uint64_t key, uint64_t *val)
{
    if (!m->n)
        return 0;
    size_t mask = m->cap - 1;
    for (size_t i = lp_hmap_home_(m, key);; i = (i + 1) & mask) {
        const lp_hmap_slot *s = &m->slot[i];
        if (s->val == LP_HMAP_EMPTY)
            return 0;
        if (s->key == key) {
            *val = s->val;
            return 1;
        }
    }
}

/* The slot of `key`, inserted with value `fresh` if absent (*added = 1) or as it was
 * (*added = 0). The pointer is valid until the next insertion or deletion.
 * `fresh` != LP_HMAP_EMPTY. NULL if the table could not grow (out of memory). */
lp_hmap_slot *lp_hmap_slot_of(lp_hmap *m, uint64_t key, uint64_t fresh, int *added);

/* Set key's value (inserted or replaced). LP_ERR_NOMEM if the table could not grow. */
lp_status lp_hmap_put(lp_hmap *m, uint64_t key, uint64_t val, lp_error *err);

/* Remove `key`; 1 if it was present. */
int lp_hmap_del(lp_hmap *m, uint64_t key);

/* ---- hashed keys ----------------------------------------------------------------- */

/* The first value stored under hash `h` for which eq(ctx, value) is non-zero, or
 * LP_HMAP_EMPTY. With *slotp (may be NULL) the slot index of the match, for
 * lp_hmap_del_at. `eq` is usually a static function the compiler inlines here. */
static inline uint64_t lp_hmap_find(const lp_hmap *m, uint64_t h, int (*eq)(const void *ctx, uint64_t val),
                                    const void *ctx, size_t *slotp)
{
    if (!m->n)
        return LP_HMAP_EMPTY;
    size_t mask = m->cap - 1;
    for (size_t i = lp_hmap_home_(m, h);; i = (i + 1) & mask) {
        const lp_hmap_slot *s = &m->slot[i];
        if (s->val == LP_HMAP_EMPTY)
            return LP_HMAP_EMPTY;
        if (s->key == h && eq(ctx, s->val)) {
            if (slotp)
                *slotp = i;
            return s->val;
        }
    }
}

/* Insert (h, val) without looking for an equal entry (the caller knows there is none,
 * or wants several values under one hash). val != LP_HMAP_EMPTY. */
lp_status lp_hmap_add(lp_hmap *m, uint64_t h, uint64_t val, lp_error *err);

/* Remove the entry in slot i (from lp_hmap_find). */
void lp_hmap_del_at(lp_hmap *m, size_t i);

/* ---- every entry --------------------------------------------------------------- */

/* Visit the entries in slot order (not insertion order): for (size_t i = 0; i < m->cap;
 * i++) if (m->slot[i].val != LP_HMAP_EMPTY) ... ; lp_hmap_each does the same with a
 * callback. */
static inline void lp_hmap_each(const lp_hmap *m, void (*fn)(void *ctx, uint64_t key, uint64_t val), void *ctx)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slot[i].val != LP_HMAP_EMPTY)
            fn(ctx, m->slot[i].key, m->slot[i].val);
}

/* Resident bytes of the slots. */
static inline size_t lp_hmap_footprint(const lp_hmap *m) { return m->cap * sizeof(lp_hmap_slot); }

/* A 64-bit hash of bytes (XXH3), and a mix of two 64-bit words, for hashed keys. */
uint64_t lp_hash_bytes(const void *p, size_t n);
static inline uint64_t lp_hash_mix(uint64_t a, uint64_t b)
{
    uint64_t x = (a ^ (b + UINT64_C(0x9E3779B97F4A7C15) + (a << 6) + (a >> 2))) * UINT64_C(0xBF58476D1CE4E5B9);
    x ^= x >> 31;
    x *= UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 29);
}

#endif
