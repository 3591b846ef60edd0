/* strtab.c: interned strings (see strtab.h).
 *
 * Design: string bytes are appended to blocks that never move (64 KiB, or larger for a
 * longer string); ptr[]/len[] index them by id; the library's hash table
 * (base/hashmap.h: lp_hmap32, hashed keys) maps 32 bits of the XXH3 hash of a string's
 * bytes to its id, so probes compare hashes and read the bytes of (almost always) just
 * the string that matches, and growing the table never touches the bytes. The table is
 * allocated on first use, so a zeroed lp_strtab is a valid empty table.
 */
#include "longpole/base/strtab.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#define BLOCK_MIN ((size_t)64 * 1024)

static uint32_t hash_bytes(const char *s, size_t n) { return (uint32_t)XXH3_64bits(s, n); }

/* A string being looked up, for the table's equality callback. */
typedef struct probe {
    const lp_strtab *st;
    const char *s;
    size_t n;
} probe;

static inline int same_string(const void *ctx, uint64_t id)
{
    const probe *p = ctx;
    return p->st->len[id] == p->n && memcmp(p->st->ptr[id], p->s, p->n) == 0;
}

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
    if (st->index)
        lp_hmap32_release(st->index);
    lp_free(st->index);
    memset(st, 0, sizeof *st);
}

lp_str lp_strtab_find(const lp_strtab *st, const char *s, size_t n)
{
    if (!st->index)
        return LP_STR_NONE;
    probe p = {st, s, n};
    uint32_t id = lp_hmap32_find(st->index, hash_bytes(s, n), same_string, &p, NULL);
    return id == LP_HMAP32_EMPTY ? LP_STR_NONE : id;
}

int lp_strtab_intern(lp_strtab *st, const char *s, size_t n, lp_str *out)
{
    uint32_t hv = hash_bytes(s, n);
    if (st->index) {
        probe p = {st, s, n};
        uint32_t id = lp_hmap32_find(st->index, hv, same_string, &p, NULL);
        if (id != LP_HMAP32_EMPTY) {
            *out = id;
            return 0;
        }
    } else {
        st->index = lp_malloc(sizeof *st->index);
        if (!st->index || lp_hmap32_init(st->index, 32, NULL)) {
            lp_free(st->index);
            st->index = NULL;
            return -1;
        }
    }
    if (n >= UINT32_MAX || st->n >= UINT32_MAX - 2)
        return -1;
    if (st->n == st->cap) {
        size_t cap = st->cap, cap2 = st->cap;
        void *p = st->ptr, *l = st->len;
        if (lp_grow(&p, &cap, st->n + 1, sizeof(char *)))
            return -1;
        st->ptr = p;
        if (lp_grow(&l, &cap2, st->n + 1, sizeof(uint32_t)))
            return -1;
        st->len = l;
        st->cap = (uint32_t)(cap < cap2 ? cap : cap2);
    }
    if (!st->nblk || st->blksize - st->blkused < n + 1)
        if (add_block(st, n + 1))
            return -1;
    if (lp_hmap32_add(st->index, hv, st->n, NULL))
        return -1;
    char *dst = st->blk[st->nblk - 1] + st->blkused;
    memcpy(dst, s, n);
    dst[n] = '\0';
    st->blkused += n + 1;
    uint32_t id = st->n++;
    st->ptr[id] = dst;
    st->len[id] = (uint32_t)n;
    st->bytes += n;
    *out = id;
    return 0;
}

size_t lp_strtab_footprint(const lp_strtab *st)
{
    size_t b = 0;
    for (uint32_t i = 0; i + 1 < st->nblk; i++)
        b += BLOCK_MIN; /* approximate: full blocks */
    b += st->blkused;
    return b + (size_t)st->cap * (sizeof(char *) + 4) + (st->index ? lp_hmap32_footprint(st->index) : 0);
}

int lp_strtab_copy(lp_strtab *dst, const lp_strtab *src)
{
    memset(dst, 0, sizeof *dst);
    size_t n = src->n ? src->n : 1, total = src->bytes + src->n;
    dst->blk = lp_malloc(sizeof *dst->blk);
    dst->ptr = lp_malloc(n * sizeof *dst->ptr);
    dst->len = lp_malloc(n * sizeof *dst->len);
    dst->index = lp_malloc(sizeof *dst->index);
    char *b = lp_malloc(total ? total : 1);
    if (dst->index) {
        lp_hmap32 empty;
        lp_hmap32_init(&empty, 0, NULL);
        if (lp_hmap32_copy(dst->index, src->index ? src->index : &empty, NULL)) {
            lp_free(dst->index);
            dst->index = NULL;
        }
    }
    if (!dst->blk || !dst->ptr || !dst->len || !dst->index || !b) {
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
    dst->n = dst->cap = src->n;
    dst->bytes = src->bytes;
    return 0;
}
