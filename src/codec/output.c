/* output.c: lp_save_with (io.h): a file or stdout written through a caller's writer,
 * gzip- or zstd-compressed on request through a stdio cookie, so writers stream whatever
 * the output's size. Errors name the path.
 */
#define _GNU_SOURCE
#include "longpole/codec/io.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <zlib.h>
#include <zstd.h>

/* ---- compressed output through a stdio cookie ---------------------------------- */

typedef struct zcookie {
    FILE *f;
    lp_compression comp;
    z_stream zs;
    ZSTD_CStream *zc;
    unsigned char buf[1 << 16];
    int failed;
} zcookie;

static int zdrain_gz(zcookie *c, int flush)
{
    do {
        c->zs.next_out = c->buf;
        c->zs.avail_out = sizeof c->buf;
        int rc = deflate(&c->zs, flush);
        if (rc == Z_STREAM_ERROR)
            return -1;
        size_t k = sizeof c->buf - c->zs.avail_out;
        if (k && fwrite(c->buf, 1, k, c->f) != k)
            return -1;
        if (flush == Z_FINISH && rc == Z_STREAM_END)
            return 0;
    } while (c->zs.avail_out == 0 || (flush == Z_FINISH));
    return 0;
}

static ssize_t zwrite(void *cookie, const char *p, size_t n)
{
    zcookie *c = cookie;
    if (c->comp == LP_COMP_GZIP) {
        c->zs.next_in = (unsigned char *)(uintptr_t)p;
        c->zs.avail_in = (uInt)n;
        while (c->zs.avail_in)
            if (zdrain_gz(c, Z_NO_FLUSH))
                return -1;
        return (ssize_t)n;
    }
    ZSTD_inBuffer ib = {p, n, 0};
    while (ib.pos < ib.size) {
        ZSTD_outBuffer ob = {c->buf, sizeof c->buf, 0};
        size_t rc = ZSTD_compressStream2(c->zc, &ob, &ib, ZSTD_e_continue);
        if (ZSTD_isError(rc) || (ob.pos && fwrite(c->buf, 1, ob.pos, c->f) != ob.pos))
            return -1;
    }
    return (ssize_t)n;
}

static int zclose(void *cookie)
{
    zcookie *c = cookie;
    int rc = 0;
    if (c->comp == LP_COMP_GZIP) {
        c->zs.next_in = NULL;
        c->zs.avail_in = 0;
        if (zdrain_gz(c, Z_FINISH))
            rc = -1;
        deflateEnd(&c->zs);
    } else {
        ZSTD_inBuffer ib = {NULL, 0, 0};
        size_t left;
        do {
            ZSTD_outBuffer ob = {c->buf, sizeof c->buf, 0};
            left = ZSTD_compressStream2(c->zc, &ob, &ib, ZSTD_e_end);
            if (ZSTD_isError(left) || (ob.pos && fwrite(c->buf, 1, ob.pos, c->f) != ob.pos)) {
                rc = -1;
                break;
            }
        } while (left);
        ZSTD_freeCStream(c->zc);
    }
    if (fflush(c->f))
        rc = -1;
    lp_free(c);
    return rc;
}

static FILE *zopen(FILE *f, lp_compression comp)
{
    zcookie *c = lp_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->f = f;
    c->comp = comp;
    if (comp == LP_COMP_GZIP) {
        if (deflateInit2(&c->zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            lp_free(c);
            return NULL;
        }
    } else {
        c->zc = ZSTD_createCStream();
        if (!c->zc) {
            lp_free(c);
            return NULL;
        }
        ZSTD_CCtx_setParameter(c->zc, ZSTD_c_compressionLevel, 3);
    }
    cookie_io_functions_t io = {NULL, zwrite, NULL, zclose};
    FILE *z = fopencookie(c, "w", io);
    if (!z) {
        if (comp == LP_COMP_GZIP)
            deflateEnd(&c->zs);
        else
            ZSTD_freeCStream(c->zc);
        lp_free(c);
    }
    return z;
}

lp_status lp_save_with(const char *path, lp_compression compress, lp_write_fn write, void *ctx, lp_error *err)
{
    int is_stdout = strcmp(path, "-") == 0;
    FILE *f = is_stdout ? stdout : fopen(path, "wb");
    if (!f)
        return lp_error_set(err, LP_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
    FILE *w = f;
    if (compress != LP_COMP_NONE) {
        w = zopen(f, compress);
        if (!w) {
            if (!is_stdout)
                fclose(f);
            return lp_error_set(err, LP_ERR_NOMEM, "cannot start compression");
        }
    }
    lp_status st = write(ctx, w, err);
    if (w != f && fclose(w) != 0 && !st)
        st = lp_error_set(err, LP_ERR_IO, "compressing '%s' failed", path);
    if (!is_stdout && fclose(f) != 0 && !st)
        st = lp_error_set(err, LP_ERR_IO, "writing '%s' failed: %s", path, strerror(errno));
    else if (is_stdout && fflush(f) != 0 && !st)
        st = lp_error_set(err, LP_ERR_IO, "writing to stdout failed: %s", strerror(errno));
    if (st)
        lp_error_push(err, "writing %s", path);
    return st;
}

