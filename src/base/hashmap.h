/* hashmap.h: the one hash table of liblongpole: open addressing with linear probing
 * over a power-of-two array of (key, value) slots, in two widths of the same structure
 * and code (written once, in hashmap_t.h):
 *  - lp_hmap: 64-bit keys and values (16-byte slots);
 *  - lp_hmap32: 32-bit keys and values (8-byte slots, half the memory), for tables of
 *    32-bit ids or indices that can grow to millions of entries (interned strings,
 *    message halves, names of spans and workers).
 * Internal to the library (every module that needs a table uses this one). Each
 * function below exists for both, lp_hmap_X and lp_hmap32_X, with uint64_t or uint32_t
 * keys and values (written U).
 *
 * Two ways to use it, on the same structure:
 *  - exact keys: the key is the whole identity (an id, or fields packed into the key):
 *    get / get_or_put / put / del;
 *  - hashed keys: the key is a hash of something larger that the caller keeps (a
 *    string, a triple of ids), the value names the caller's entry, and equality is the
 *    caller's: find(m, hash, eq, ctx) visits only the slots whose key is that hash and
 *    asks eq() about their values; find_or_add inserts when eq() holds for none; add
 *    inserts without looking. With a good hash, eq() is called about once per
 *    successful lookup (lp_hmap32: the low 32 bits of lp_hash_bytes or lp_hash_mix).
 * Tables that must list their entries in a meaningful order (insertion, sorted) keep
 * the entries in the caller's array and map keys to indices into it; iteration here is
 * in slot order, which depends on the keys and the table's history.
 *
 * Invariants: cap is 0 or a power of two >= 8; n <= cap / 2 (the table doubles before
 * passing half full, so every probe sequence ends at an empty slot within a few steps);
 * a slot stores its value + 1, so an all-zero slot is empty (fresh zero pages from the
 * allocator need no clearing, and a zeroed table is a valid empty one) and the largest
 * value (LP_HMAP_EMPTY, LP_HMAP32_EMPTY) is not storable; every slot between an entry's
 * home slot and its own is occupied (deletion shifts the following entries back
 * instead of leaving tombstones). A table of n entries costs 2-4 n slots. Lookups, and
 * insertions that need no growth, are inline: a multiply, a shift and usually one cache
 * line.
 *
 * The functions (m a table, U its key and value type):
 *  lp_status init(m, expect, err)   empty, with room for `expect` entries (0: allocate on
 *                                   first insertion); LP_ERR_NOMEM
 *  void release(m)                  free the slots; the table is empty and usable again
 *  void clear(m)                    remove every entry, keeping the allocation
 *  lp_status reset(m, expect, err)  clear, and size the table for `expect` entries in the
 *                                   slots already allocated when they are enough: a table
 *                                   reused for many sets of varied sizes (one per trace)
 *                                   costs what each set needs, not what the largest did
 *  lp_status reserve(m, n, err)     room for n entries in all (never shrinks)
 *                                   (after reserve or reset, insertions up to that many
 *                                   entries cannot fail)
 *  lp_status copy(dst, src, err)    dst = src, same slots (dst is overwritten, not
 *                                   released; LP_ERR_NOMEM leaves it empty)
 *  int get(m, key, U *val)          1 and the value if present, else 0
 *  U get_or_put(m, key, fresh, int *added)
 *                                   the value of key; if absent, `fresh` stored for it
 *                                   and returned with *added = 1; EMPTY if out of memory
 *  lp_status put(m, key, val, err)  set key's value (inserted or replaced)
 *  int del(m, key)                  remove key; 1 if it was present
 *  U find(m, h, eq, ctx, size_t *slot)
 *                                   the first value under hash h for which eq(ctx, value)
 *                                   holds, or EMPTY; *slot (may be NULL): where, for
 *                                   del_at / set_at until the table next changes
 *  U find_or_add(m, h, eq, ctx, fresh, int *added)
 *                                   find, or else `fresh` stored under h (*added = 1);
 *                                   one probe sequence; EMPTY if out of memory
 *  lp_status add(m, h, val, err)    insert without looking (the caller knows there is no
 *                                   equal entry, or wants several under one hash)
 *  void set_at(m, slot, val)        replace the value in a slot from find
 *  void del_at(m, slot)             remove the entry in a slot from find
 *  int at(m, i, U *key, U *val)     slot i (< cap): 1 and its entry if it holds one; i = 0
 *                                   .. cap-1 lists the entries in slot order
 *  void each(m, fn, ctx)            fn(ctx, key, value) for every entry, in slot order
 *  size_t footprint(m)              resident bytes of the slots
 * `eq` is usually a static inline function, which the compiler inlines into the probe.
 */
#ifndef LP_BASE_HASHMAP_H
#define LP_BASE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"

#define LP_HMAP_EMPTY UINT64_MAX
#define LP_HMAP32_EMPTY UINT32_MAX

/* The equality of hashed keys: does the caller's entry `val` equal what ctx describes? */
typedef int (*lp_hmap_eq)(const void *ctx, uint64_t val);

#define LP_HMAP_WIDE 1
#include "base/hashmap_t.h" /* lp_hmap */
#undef LP_HMAP_WIDE
#define LP_HMAP_WIDE 0
#include "base/hashmap_t.h" /* lp_hmap32 */
#undef LP_HMAP_WIDE

/* Hashed keys: a 64-bit hash of bytes (XXH3); and two 64-bit words (ids, or ids
 * packed in pairs) combined into a key: distinct pairs rarely share a key, and both
 * the high and the low 32 bits depend on every input bit (lp_hmap32 takes the low
 * ones). Cheap, because the table spreads keys itself (Fibonacci hashing). */
uint64_t lp_hash_bytes(const void *p, size_t n);
static inline uint64_t lp_hash_mix(uint64_t a, uint64_t b)
{
    uint64_t x = (a * UINT64_C(0x9E3779B97F4A7C15) ^ b) * UINT64_C(0xBF58476D1CE4E5B9);
    return x ^ (x >> 32);
}

#endif
