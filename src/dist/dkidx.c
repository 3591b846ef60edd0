/* dkidx.c: the sidecar of a `dist kcp` rank's index (dkidx.h, docs/formats/dkidx.md):
 * magic, version, the fields of lp_dkidx (counts first), the vertex columns, the ECI
 * bytes, then XXH3-64 of every preceding byte. Integers in host order: the ranks that
 * write and read a rank's sidecar are one build on one node.
 *
 * Invariants: the checksum is checked before any count is used; every count is checked
 * against the bytes left before anything is copied; a refused file leaves x empty.
 */
#include "longpole/dist/dkidx.h"
#include "longpole/base/alloc.h"
#include "longpole/base/dbuf.h"
#include "base/hashmap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

void lp_dkidx_release(lp_dkidx *x)
{
    lp_free(x->sv);
    lp_free(x->tv);
    lp_free(x->eci);
    memset(x, 0, sizeof *x);
}

lp_status lp_dkidx_write(const char *path, const lp_dkidx *x, lp_error *err)
{
    lp_dbuf b = {0};
    lp_dbuf_put(&b, LP_DKIDX_MAGIC, 8);
    lp_dbuf_u32(&b, LP_DKIDX_VERSION);
    lp_dbuf_u32(&b, x->rank);
    lp_dbuf_u32(&b, x->nranks);
    lp_dbuf_u32(&b, x->nhosts);
    lp_dbuf_u64(&b, x->lpkx_sum);
    lp_dbuf_u64(&b, x->digest);
    lp_dbuf_put(&b, x->fig, sizeof x->fig);
    lp_dbuf_u64(&b, x->npk);
    lp_dbuf_u64(&b, x->neci);
    lp_dbuf_put(&b, x->sv, x->npk * 4);
    lp_dbuf_put(&b, x->tv, x->npk * 4);
    lp_dbuf_put(&b, x->eci, x->neci);
    if (!b.fail)
        lp_dbuf_u64(&b, lp_hash_bytes(b.p, b.n));
    if (b.fail) {
        lp_dbuf_release(&b);
        return nomem(err);
    }
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) {
        lp_dbuf_release(&b);
        return lp_error_set(err, LP_ERR_ARG, "index path too long");
    }
    FILE *f = fopen(tmp, "wb");
    int ok = f && fwrite(b.p, 1, b.n, f) == b.n;
    int e = errno;
    if (f && fclose(f) != 0 && ok)
        ok = 0, e = errno;
    lp_dbuf_release(&b);
    if (!ok || rename(tmp, path) != 0) {
        if (ok)
            e = errno;
        unlink(tmp);
        return lp_error_set(err, LP_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    return LP_OK;
}

static lp_status bad(lp_error *err, const char *name, size_t off, const char *what)
{
    return lp_error_set(err, LP_ERR_FORMAT, "%s: byte %zu: %s", name, off, what);
}

lp_status lp_dkidx_read_mem(const void *buf, size_t n, const char *name, lp_dkidx *x, lp_error *err)
{
    memset(x, 0, sizeof *x);
    const size_t head = 8 + 4 * 4 + 8 * 2 + sizeof x->fig + 8 * 2;
    if (n < 8 || memcmp(buf, LP_DKIDX_MAGIC, 8) != 0)
        return bad(err, name, 0, "not the sidecar of a dist kcp index (magic)");
    if (n < head + 8)
        return bad(err, name, n, "truncated (shorter than its header)");
    uint64_t sum;
    memcpy(&sum, (const uint8_t *)buf + n - 8, 8);
#ifndef LP_FUZZING /* fuzzing: the checks behind the checksum are what is exercised */
    if (sum != lp_hash_bytes(buf, n - 8))
        return lp_error_set(err, LP_ERR_CHECKSUM, "%s: byte %zu: checksum mismatch", name, n - 8);
#else
    (void)sum;
#endif
    lp_drd r = lp_drd_init(buf, n - 8);
    lp_drd_get(&r, 8);
    if (lp_drd_u32(&r) != LP_DKIDX_VERSION)
        return bad(err, name, 8, "another version");
    x->rank = lp_drd_u32(&r), x->nranks = lp_drd_u32(&r), x->nhosts = lp_drd_u32(&r);
    x->lpkx_sum = lp_drd_u64(&r), x->digest = lp_drd_u64(&r);
    LP_DRD_GET(&r, x->fig);
    uint64_t npk = lp_drd_u64(&r), neci = lp_drd_u64(&r);
    size_t left = r.n - r.off;
    if (r.bad || npk > left / 8 || neci != left - npk * 8) {
        memset(x, 0, sizeof *x);
        return bad(err, name, head - 16, "counts do not fit the file");
    }
    x->sv = lp_malloc(npk ? npk * 4 : 1);
    x->tv = lp_malloc(npk ? npk * 4 : 1);
    x->eci = lp_malloc(neci ? neci : 1);
    if (!x->sv || !x->tv || !x->eci) {
        lp_dkidx_release(x);
        return nomem(err);
    }
    x->npk = npk, x->neci = (size_t)neci;
    lp_drd_copy(&r, x->sv, npk * 4);
    lp_drd_copy(&r, x->tv, npk * 4);
    lp_drd_copy(&r, x->eci, x->neci);
    return LP_OK;
}

/* The whole file in memory (lp_free). */
static lp_status slurp(const char *path, uint8_t **out, size_t *n, lp_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return lp_error_set(err, LP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    lp_dbuf b = {0};
    uint8_t chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        lp_dbuf_put(&b, chunk, got);
    int rerr = ferror(f);
    fclose(f);
    if (rerr || b.fail) {
        lp_dbuf_release(&b);
        return rerr ? lp_error_set(err, LP_ERR_IO, "cannot read '%s'", path) : nomem(err);
    }
    *out = b.p, *n = b.n;
    return LP_OK;
}

lp_status lp_dkidx_read(const char *path, lp_dkidx *x, lp_error *err)
{
    memset(x, 0, sizeof *x);
    uint8_t *p = NULL;
    size_t n = 0;
    lp_status st = slurp(path, &p, &n, err);
    if (!st)
        st = lp_dkidx_read_mem(p, n, path, x, err);
    lp_free(p);
    return st;
}

lp_status lp_dkidx_lpkx_sum(const char *lpkx, uint64_t *sum, lp_error *err)
{
    FILE *f = fopen(lpkx, "rb");
    if (!f)
        return lp_error_set(err, LP_ERR_IO, "cannot open '%s': %s", lpkx, strerror(errno));
    int ok = fseek(f, -8, SEEK_END) == 0 && fread(sum, 1, 8, f) == 8;
    fclose(f);
    return ok ? LP_OK : lp_error_set(err, LP_ERR_IO, "cannot read the checksum of '%s'", lpkx);
}
