/* dbuf.h: a growable byte buffer and a reader over bytes, for values packed as their
 * host bytes (fixed-width fields in host order: the messages of the distributed
 * analyses, docs/distributed.md, whose ranks are one architecture; the packed windows
 * and span paths they exchange). LP_DBUF_PUT / LP_DRD_GET copy one variable.
 *
 * Invariants: writing never fails visibly until lp_dbuf_take/lp_dbuf_ok: an allocation
 * failure sets `fail` and later writes do nothing; a reader that runs past its end sets
 * `bad` and reads zeros.
 */
#ifndef LONGPOLE_DBUF_H
#define LONGPOLE_DBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct lp_dbuf {
    uint8_t *p;
    size_t n, cap;
    int fail;
} lp_dbuf;

void lp_dbuf_put(lp_dbuf *b, const void *src, size_t n);
static inline void lp_dbuf_u32(lp_dbuf *b, uint32_t v) { lp_dbuf_put(b, &v, 4); }
static inline void lp_dbuf_u64(lp_dbuf *b, uint64_t v) { lp_dbuf_put(b, &v, 8); }
void lp_dbuf_str(lp_dbuf *b, const char *s); /* u32 length, bytes */
void lp_dbuf_release(lp_dbuf *b);

typedef struct lp_drd {
    const uint8_t *p;
    size_t n, off;
    int bad;
} lp_drd;

static inline lp_drd lp_drd_init(const void *p, size_t n) { lp_drd r = {(const uint8_t *)p, n, 0, 0}; return r; }
/* A pointer to the next n bytes (NULL and bad set if fewer are left). */
const void *lp_drd_get(lp_drd *r, size_t n);
uint32_t lp_drd_u32(lp_drd *r);
uint64_t lp_drd_u64(lp_drd *r);
/* A string: *len bytes at the returned pointer (not NUL-terminated); NULL if bad. */
const char *lp_drd_str(lp_drd *r, uint32_t *len);
/* Copy the next n bytes to dst (zeros, and bad set, if fewer are left). */
void lp_drd_copy(lp_drd *r, void *dst, size_t n);

#define LP_DBUF_PUT(b, x) lp_dbuf_put((b), &(x), sizeof(x))
#define LP_DRD_GET(r, x) lp_drd_copy((r), &(x), sizeof(x))

#endif
