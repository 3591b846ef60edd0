/* strtab.c: interned strings (see strtab.h).
 *
 * Design: string bytes are appended to blocks that never move (64 KiB, or larger for a
 * longer string); ptr[]/len[] index them by id; an open-addressing, linear-probing
 * table of ids (load <= 1/2) finds a string by its XXH3 hash, whose low 32 bits are
 * cached per id so that probes and rehashes rarely touch the bytes.
 */
#include "longpole/base/strtab.h"
#include "longpole/base/alloc.h"

#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#define BLOCK_MIN ((size_t)64 * 1024)

static uint32_t hash_bytes(const char *s, size_t n) { return (uint32_t)XXH3_64bits(s, n); }

static int add_block(lp_strtab *st, size_t need)
{
    if (st->nblk == st->capblk) {
        size_t cap = st->capblk;
        void *p = st->blk;
        if (lp_grow(&p, &cap, st->nblk + 1, sizeof(char *)))
            return -1;
        st->blk = p;
        st->capblk = (uint32_t)cap;
    }
    size_t sz = need > BLOCK_MIN ? need : BLOCK_MIN;
    char *b = lp_malloc(sz);
    if (!b)
        return -1;
    st->blk[st->nblk++] = b;
    st->blksize = sz;
    st->blkused = 0;
    return 0;
}

static int rehash(lp_strtab *st, uint32_t ncap)
{
    uint32_t *h = lp_calloc(ncap, sizeof *h);
    if (!h)
        return -1;
    uint32_t mask = ncap - 1;
    for (uint32_t id = 0; id < st->n; id++) {
        uint32_t i = st->hval[id] & mask;
        while (h[i])
            i = (i + 1) & mask;
        h[i] = id + 1;
    }
    lp_free(st->hash);
    st->hash = h;
    st->hcap = ncap;
    return 0;
}

int lp_strtab_init(lp_strtab *st)
{
    memset(st, 0, sizeof *st);
    lp_str id;
    if (lp_strtab_intern(st, "", 0, &id)) {
        lp_strtab_release(st); /* whatever the failed intern had allocated */
        return -1;
    }
    return 0;
}

void lp_strtab_release(lp_strtab *st)
{
    for (uint32_t i = 0; i < st->nblk; i++)
        lp_free(st->blk[i]);
    lp_free(st->blk);
    lp_free(st->ptr);
    lp_free(st->len);
    lp_free(st->hash);
    lp_free(st->hval);
    memset(st, 0, sizeof *st);
}

lp_str lp_strtab_find(const lp_strtab *st, const char *s, size_t n)
{
    if (!st->hcap)
        return LP_STR_NONE;
    uint32_t hv = hash_bytes(s, n), mask = st->hcap - 1;
    for (uint32_t i = hv & mask;; i = (i + 1) & mask) {
        uint32_t e = st->hash[i];
        if (!e)
            return LP_STR_NONE;
        uint32_t id = e - 1;
        if (st->hval[id] == hv && st->len[id] == n && memcmp(st->ptr[id], s, n) == 0)
            return id;
    }
}

int lp_strtab_intern(lp_strtab *st, const char *s, size_t n, lp_str *out)
{
    uint32_t hv = hash_bytes(s, n);
    if (st->hcap) {
        uint32_t mask = st->hcap - 1;
        for (uint32_t i = hv & mask;; i = (i + 1) & mask) {
            uint32_t e = st->hash[i];
            if (!e)
                break;
            uint32_t id = e - 1;
            if (st->hval[id] == hv && st->len[id] == n && memcmp(st->ptr[id], s, n) == 0) {
                *out = id;
                return 0;
            }
        }
    }
    if (n >= UINT32_MAX || st->n >= UINT32_MAX - 2)
        return -1;
    /* keep load factor <= 1/2 */
    if ((uint64_t)(st->n + 1) * 2 > st->hcap) {
        uint64_t ncap = st->hcap ? (uint64_t)st->hcap * 2 : 64;
        if (ncap > (UINT64_C(1) << 31) || rehash(st, (uint32_t)ncap))
            return -1;
    }
    if (st->n == st->cap) {
        size_t cap = st->cap, cap2 = st->cap, cap3 = st->cap;
        void *p = st->ptr, *l = st->len, *h = st->hval;
        if (lp_grow(&p, &cap, st->n + 1, sizeof(char *)))
            return -1;
        st->ptr = p;
        if (lp_grow(&l, &cap2, st->n + 1, sizeof(uint32_t)))
            return -1;
        st->len = l;
        if (lp_grow(&h, &cap3, st->n + 1, sizeof(uint32_t)))
            return -1;
        st->hval = h;
        st->cap = (uint32_t)(cap < cap2 ? (cap < cap3 ? cap : cap3) : (cap2 < cap3 ? cap2 : cap3));
    }
    if (!st->nblk || st->blksize - st->blkused < n + 1)
        if (add_block(st, n + 1))
            return -1;
    char *dst = st->blk[st->nblk - 1] + st->blkused;
    memcpy(dst, s, n);
    dst[n] = '\0';
    st->blkused += n + 1;
    uint32_t id = st->n++;
    st->ptr[id] = dst;
    st->len[id] = (uint32_t)n;
    st->hval[id] = hv;
    st->bytes += n;
    uint32_t mask = st->hcap - 1, i = hv & mask;
    while (st->hash[i])
        i = (i + 1) & mask;
    st->hash[i] = id + 1;
    *out = id;
    return 0;
}

size_t lp_strtab_footprint(const lp_strtab *st)
{
    size_t b = 0;
    for (uint32_t i = 0; i + 1 < st->nblk; i++)
        b += BLOCK_MIN; /* approximate: full blocks */
    b += st->blkused;
    return b + (size_t)st->cap * (sizeof(char *) + 8) + (size_t)st->hcap * 4;
}

int lp_strtab_copy(lp_strtab *dst, const lp_strtab *src)
{
    memset(dst, 0, sizeof *dst);
    size_t n = src->n ? src->n : 1, total = src->bytes + src->n;
    dst->blk = lp_malloc(sizeof *dst->blk);
    dst->ptr = lp_malloc(n * sizeof *dst->ptr);
    dst->len = lp_malloc(n * sizeof *dst->len);
    dst->hval = lp_malloc(n * sizeof *dst->hval);
    dst->hash = lp_malloc((src->hcap ? src->hcap : 1) * sizeof *dst->hash);
    char *b = lp_malloc(total ? total : 1);
    if (!dst->blk || !dst->ptr || !dst->len || !dst->hval || !dst->hash || !b) {
        lp_free(b);
        lp_strtab_release(dst);
        return -1;
    }
    /* every string into one block, in id order: the ids and the hash table carry over */
    dst->blk[0] = b;
    dst->nblk = dst->capblk = 1;
    dst->blksize = dst->blkused = total;
    for (uint32_t id = 0; id < src->n; id++) {
        memcpy(b, src->ptr[id], (size_t)src->len[id] + 1);
        dst->ptr[id] = b;
        b += src->len[id] + 1;
    }
    memcpy(dst->len, src->len, src->n * sizeof *dst->len);
    memcpy(dst->hval, src->hval, src->n * sizeof *dst->hval);
    memcpy(dst->hash, src->hash, src->hcap * sizeof *dst->hash);
    dst->n = dst->cap = src->n;
    dst->hcap = src->hcap;
    dst->bytes = src->bytes;
    return 0;
}
