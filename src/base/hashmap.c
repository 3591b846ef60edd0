/* hashmap.c: the hash table of hashmap.h: growth, insertion and deletion by backward
 * shift (linear probing keeps every key's entries in one run from its home slot, so a
 * deleted slot is refilled by the next entry of the run that may move into it).
 * Invariant kept by every function: n <= cap / 2. */
#include "base/hashmap.h"
#include "longpole/base/alloc.h"

#include <string.h>
#include <xxhash.h>

static unsigned log2_of(size_t cap)
{
    unsigned b = 0;
    while (((size_t)1 << b) < cap)
        b++;
    return b;
}

static lp_status grow_to(lp_hmap *m, size_t ncap, lp_error *err)
{
    lp_hmap_slot *ns = lp_malloc(ncap * sizeof *ns);
    if (!ns)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory for a hash table of %zu slots", ncap);
    memset(ns, 0xff, ncap * sizeof *ns); /* every val = LP_HMAP_EMPTY */
    lp_hmap_slot *old = m->slot;
    size_t ocap = m->cap;
    m->slot = ns;
    m->cap = ncap;
    m->shift = 64 - log2_of(ncap);
    size_t mask = ncap - 1;
    for (size_t i = 0; i < ocap; i++) {
        if (old[i].val == LP_HMAP_EMPTY)
            continue;
        size_t j = lp_hmap_home_(m, old[i].key);
        while (ns[j].val != LP_HMAP_EMPTY)
            j = (j + 1) & mask;
        ns[j] = old[i];
    }
    lp_free(old);
    return LP_OK;
}

lp_status lp_hmap_reserve(lp_hmap *m, size_t n, lp_error *err)
{
    size_t cap = m->cap ? m->cap : 8;
    while (cap / 2 < n) {
        if (cap > SIZE_MAX / 2 / sizeof(lp_hmap_slot))
            return lp_error_set(err, LP_ERR_LIMIT, "hash table of %zu entries is too large", n);
        cap *= 2;
    }
    return cap == m->cap ? LP_OK : grow_to(m, cap, err);
}

lp_status lp_hmap_init(lp_hmap *m, size_t expect, lp_error *err)
{
    memset(m, 0, sizeof *m);
    m->shift = 64;
    return expect ? lp_hmap_reserve(m, expect, err) : LP_OK;
}

void lp_hmap_release(lp_hmap *m)
{
    lp_free(m->slot);
    memset(m, 0, sizeof *m);
    m->shift = 64;
}

void lp_hmap_clear(lp_hmap *m)
{
    if (m->slot)
        memset(m->slot, 0xff, m->cap * sizeof *m->slot);
    m->n = 0;
}

/* Room for one more entry. */
static int make_room(lp_hmap *m)
{
    if (m->n + 1 <= m->cap / 2)
        return 1;
    return lp_hmap_reserve(m, m->n + 1, NULL) == LP_OK;
}

lp_hmap_slot *lp_hmap_slot_of(lp_hmap *m, uint64_t key, uint64_t fresh, int *added)
{
    if (!make_room(m))
        return NULL;
    size_t mask = m->cap - 1;
    size_t i = lp_hmap_home_(m, key);
    for (; m->slot[i].val != LP_HMAP_EMPTY; i = (i + 1) & mask)
        if (m->slot[i].key == key) {
            *added = 0;
            return &m->slot[i];
        }
    m->slot[i].key = key;
    m->slot[i].val = fresh;
    m->n++;
    *added = 1;
    return &m->slot[i];
}

lp_status lp_hmap_put(lp_hmap *m, uint64_t key, uint64_t val, lp_error *err)
{
    int added;
    lp_hmap_slot *s = lp_hmap_slot_of(m, key, val, &added);
    if (!s)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory growing a hash table of %zu entries", m->n);
    s->val = val;
    return LP_OK;
}

lp_status lp_hmap_add(lp_hmap *m, uint64_t h, uint64_t val, lp_error *err)
{
    if (!make_room(m))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory growing a hash table of %zu entries", m->n);
    size_t mask = m->cap - 1;
    size_t i = lp_hmap_home_(m, h);
    while (m->slot[i].val != LP_HMAP_EMPTY)
        i = (i + 1) & mask;
    m->slot[i].key = h;
    m->slot[i].val = val;
    m->n++;
    return LP_OK;
}

void lp_hmap_del_at(lp_hmap *m, size_t i)
{
    size_t mask = m->cap - 1;
    /* Backward shift: move later entries of the run into the hole when their home slot
     * is not strictly between the hole and their position (cyclically). */
    for (size_t j = (i + 1) & mask; m->slot[j].val != LP_HMAP_EMPTY; j = (j + 1) & mask) {
        size_t h = lp_hmap_home_(m, m->slot[j].key);
        int stays = (i <= j) ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            m->slot[i] = m->slot[j];
            i = j;
        }
    }
    m->slot[i].val = LP_HMAP_EMPTY;
    m->n--;
}

int lp_hmap_del(lp_hmap *m, uint64_t key)
{
    if (!m->n)
        return 0;
    size_t mask = m->cap - 1;
    for (size_t i = lp_hmap_home_(m, key); m->slot[i].val != LP_HMAP_EMPTY; i = (i + 1) & mask)
        if (m->slot[i].key == key) {
            lp_hmap_del_at(m, i);
            return 1;
        }
    return 0;
}

uint64_t lp_hash_bytes(const void *p, size_t n) { return XXH3_64bits(p, n); }
