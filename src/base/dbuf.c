/* dbuf.c: the growable byte buffer and the byte reader (dbuf.h). */
#include "longpole/base/dbuf.h"
#include "longpole/base/alloc.h"

#include <string.h>

void lp_dbuf_put(lp_dbuf *b, const void *src, size_t n)
{
    if (b->fail || !n)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *p = lp_realloc(b->p, cap);
        if (!p) {
            b->fail = 1;
            return;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

void lp_dbuf_str(lp_dbuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    lp_dbuf_u32(b, (uint32_t)n);
    lp_dbuf_put(b, s, n);
}

void lp_dbuf_release(lp_dbuf *b)
{
    lp_free(b->p);
    memset(b, 0, sizeof *b);
}

const void *lp_drd_get(lp_drd *r, size_t n)
{
    if (r->bad || n > r->n - r->off) {
        r->bad = 1;
        return NULL;
    }
    const void *p = r->p + r->off;
    r->off += n;
    return p;
}

uint32_t lp_drd_u32(lp_drd *r)
{
    uint32_t v = 0;
    const void *p = lp_drd_get(r, 4);
    if (p)
        memcpy(&v, p, 4);
    return v;
}

uint64_t lp_drd_u64(lp_drd *r)
{
    uint64_t v = 0;
    const void *p = lp_drd_get(r, 8);
    if (p)
        memcpy(&v, p, 8);
    return v;
}

const char *lp_drd_str(lp_drd *r, uint32_t *len)
{
    *len = lp_drd_u32(r);
    return r->bad ? NULL : lp_drd_get(r, *len);
}

void lp_drd_copy(lp_drd *r, void *dst, size_t n)
{
    const void *p = lp_drd_get(r, n);
    if (p)
        memcpy(dst, p, n);
    else
        memset(dst, 0, n);
}
