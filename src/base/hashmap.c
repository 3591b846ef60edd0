/* hashmap.c: the out-of-line functions of hashmap.h (growth, the insertions that need
 * it, deletion by backward shift), made for both widths from hashmap_t.h. Linear
 * probing keeps every slot between an entry's home and its position occupied, so a
 * deleted slot is refilled by the next entry of the run that may move into it. Slots
 * hold value + 1, so zeroed memory is empty slots. Invariant kept by every function:
 * n <= cap / 2. */
#include "base/hashmap.h"
#include "longpole/base/alloc.h"

#include <string.h>
#define XXH_INLINE_ALL /* as everywhere in the library: no libxxhash.so to load at startup */
#include <xxhash.h>

static unsigned hm_log2(size_t cap)
{
    unsigned b = 0;
    while (((size_t)1 << b) < cap)
        b++;
    return b;
}

#define LP_HMAP_BODY
#define LP_HMAP_WIDE 1
#include "base/hashmap_t.h" /* lp_hmap */
#undef LP_HMAP_WIDE
#define LP_HMAP_WIDE 0
#include "base/hashmap_t.h" /* lp_hmap32 */
#undef LP_HMAP_WIDE
#undef LP_HMAP_BODY

uint64_t lp_hash_bytes(const void *p, size_t n) { return XXH3_64bits(p, n); }
