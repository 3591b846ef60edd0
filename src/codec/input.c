/* input.c: a byte source that undoes gzip or zstd compression (see io.h).
 *
 * Compression is recognised by magic numbers (gzip 1f 8b, zstd 28 b5 2f fd), never by
 * file name. Multi-member gzip and multi-frame zstd streams are read to the end, so
 * `cat a.gz b.gz` works. Reads are done in 1 MiB blocks; a small look-ahead buffer
 * serves lp_input_peek() for format detection. Truncated compressed input is an error
 * (LP_ERR_FORMAT) naming the byte offset, never a silent short read.
 */
#include "longpole/codec/io.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define RAWBUF ((size_t)1 << 20)
#define PEEKMAX 64

struct lp_input {
    char *name;
    int fd;                 /* -1 for memory input */
    int owns_fd;
    const unsigned char *mem;
    size_t memlen, mempos;
    uint64_t size;          /* file size if known */
    uint64_t consumed;      /* raw bytes consumed */
    lp_compression comp;
    unsigned char *raw;     /* raw (compressed) buffer */
    size_t rawlen, rawpos;
    int raweof;
    z_stream zs;
    int zinit;
    ZSTD_DStream *zd;
    int zdone;              /* decompressor saw the end of a member/frame */
    unsigned char peek[PEEKMAX];
    size_t npeek, peekpos;
    int peeked;
};

static lp_status raw_fill(lp_input *in, lp_error *err)
{
    if (in->rawpos < in->rawlen || in->raweof)
        return LP_OK;
    in->rawpos = in->rawlen = 0;
    if (in->fd < 0) {
        size_t n = in->memlen - in->mempos;
        if (n > RAWBUF)
            n = RAWBUF;
        memcpy(in->raw, in->mem + in->mempos, n);
        in->mempos += n;
        in->rawlen = n;
    } else {
        for (;;) {
            ssize_t n = read(in->fd, in->raw, RAWBUF);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return lp_error_set(err, LP_ERR_IO, "%s: read failed: %s", in->name, strerror(errno));
            in->rawlen = (size_t)n;
            break;
        }
    }
    if (in->rawlen == 0)
        in->raweof = 1;
    return LP_OK;
}

static lp_status detect(lp_input *in, lp_error *err)
{
    lp_status st = raw_fill(in, err);
    if (st)
        return st;
    /* make sure we see 4 bytes when they exist (a short first read is possible on pipes) */
    while (!in->raweof && in->rawlen < 4) {
        if (in->fd < 0)
            break;
        ssize_t n = read(in->fd, in->raw + in->rawlen, RAWBUF - in->rawlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return lp_error_set(err, LP_ERR_IO, "%s: read failed: %s", in->name, strerror(errno));
        if (n == 0)
            break;
        in->rawlen += (size_t)n;
    }
    const unsigned char *p = in->raw;
    if (in->rawlen >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
        in->comp = LP_COMP_GZIP;
        memset(&in->zs, 0, sizeof in->zs);
        if (inflateInit2(&in->zs, 15 + 16) != Z_OK)
            return lp_error_set(err, LP_ERR_NOMEM, "%s: cannot start gzip decompression", in->name);
        in->zinit = 1;
    } else if (in->rawlen >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd) {
        in->comp = LP_COMP_ZSTD;
        in->zd = ZSTD_createDStream();
        if (!in->zd)
            return lp_error_set(err, LP_ERR_NOMEM, "%s: cannot start zstd decompression", in->name);
        ZSTD_initDStream(in->zd);
    }
    return LP_OK;
}

static lp_status open_common(lp_input *in, lp_error *err)
{
    in->raw = lp_malloc(RAWBUF);
    if (!in->raw)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    return detect(in, err);
}

lp_status lp_input_open(lp_input **out, const char *path, lp_error *err)
{
    *out = NULL;
    lp_input *in = lp_calloc(1, sizeof *in);
    if (!in)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    in->fd = -1;
    in->name = lp_strndup(path, strlen(path));
    if (!in->name) {
        lp_input_close(in);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    if (strcmp(path, "-") == 0) {
        in->fd = 0;
    } else {
        in->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0) {
            lp_status st = lp_error_set(err, LP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
            lp_input_close(in);
            return st;
        }
        in->owns_fd = 1;
        struct stat sb;
        if (fstat(in->fd, &sb) == 0) {
            if (S_ISDIR(sb.st_mode)) {
                lp_status st = lp_error_set(err, LP_ERR_IO, "cannot read '%s': is a directory", path);
                lp_input_close(in);
                return st;
            }
            if (S_ISREG(sb.st_mode))
                in->size = (uint64_t)sb.st_size;
        }
    }
    lp_status st = open_common(in, err);
    if (st) {
        lp_input_close(in);
        return st;
    }
    *out = in;
    return LP_OK;
}

lp_status lp_input_open_mem(lp_input **out, const void *data, size_t n, const char *name, lp_error *err)
{
    *out = NULL;
    lp_input *in = lp_calloc(1, sizeof *in);
    if (!in)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    in->fd = -1;
    in->mem = data;
    in->memlen = n;
    in->size = n;
    in->name = lp_strndup(name ? name : "<memory>", strlen(name ? name : "<memory>"));
    if (!in->name) {
        lp_input_close(in);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    lp_status st = open_common(in, err);
    if (st) {
        lp_input_close(in);
        return st;
    }
    *out = in;
    return LP_OK;
}

void lp_input_close(lp_input *in)
{
    if (!in)
        return;
    if (in->owns_fd && in->fd >= 0)
        close(in->fd);
    if (in->zinit)
        inflateEnd(&in->zs);
    if (in->zd)
        ZSTD_freeDStream(in->zd);
    lp_free(in->raw);
    lp_free(in->name);
    lp_free(in);
}

lp_compression lp_input_compression(const lp_input *in) { return in->comp; }
const char *lp_input_name(const lp_input *in) { return in->name; }
uint64_t lp_input_consumed(const lp_input *in) { return in->consumed; }
uint64_t lp_input_size(const lp_input *in) { return in->size; }
int lp_input_file_fd(const lp_input *in) { return in->comp == LP_COMP_NONE && in->size && in->mem == NULL ? in->fd : -1; }

/* Uncompressed input and a large read with nothing buffered: straight into the caller's
 * buffer (no copy through in->raw, which was a tenth of a big JSON import). */
static lp_status read_direct(lp_input *in, unsigned char *buf, size_t n, size_t *got, lp_error *err)
{
    size_t k;
    if (in->fd < 0) {
        k = in->memlen - in->mempos;
        if (k > n)
            k = n;
        memcpy(buf, in->mem + in->mempos, k);
        in->mempos += k;
    } else {
        ssize_t r;
        do
            r = read(in->fd, buf, n > SSIZE_MAX ? SSIZE_MAX : n);
        while (r < 0 && errno == EINTR);
        if (r < 0)
            return lp_error_set(err, LP_ERR_IO, "%s: read failed: %s", in->name, strerror(errno));
        k = (size_t)r;
    }
    if (!k)
        in->raweof = 1;
    in->consumed += k;
    *got = k;
    return LP_OK;
}

/* Decompress into buf; *got = 0 means end of input. */
static lp_status read_raw(lp_input *in, unsigned char *buf, size_t n, size_t *got, lp_error *err)
{
    *got = 0;
    if (in->comp == LP_COMP_NONE && in->rawpos == in->rawlen && !in->raweof && n >= RAWBUF)
        return read_direct(in, buf, n, got, err);
    while (*got == 0) {
        lp_status st = raw_fill(in, err);
        if (st)
            return st;
        size_t avail = in->rawlen - in->rawpos;
        if (in->comp == LP_COMP_NONE) {
            if (!avail)
                return LP_OK;
            size_t k = avail < n ? avail : n;
            memcpy(buf, in->raw + in->rawpos, k);
            in->rawpos += k;
            in->consumed += k;
            *got = k;
            return LP_OK;
        }
        if (in->comp == LP_COMP_GZIP) {
            if (!avail) {
                if (!in->zdone)
                    return lp_error_set(err, LP_ERR_FORMAT, "%s: gzip stream truncated at byte %llu",
                                        in->name, (unsigned long long)in->consumed);
                return LP_OK;
            }
            if (in->zdone) { /* another member follows */
                if (inflateReset(&in->zs) != Z_OK)
                    return lp_error_set(err, LP_ERR_FORMAT, "%s: gzip reset failed", in->name);
                in->zdone = 0;
            }
            in->zs.next_in = in->raw + in->rawpos;
            in->zs.avail_in = (uInt)avail;
            in->zs.next_out = buf;
            in->zs.avail_out = (uInt)(n > UINT32_MAX ? UINT32_MAX : n);
            int rc = inflate(&in->zs, Z_NO_FLUSH);
            size_t used = avail - in->zs.avail_in;
            in->rawpos += used;
            in->consumed += used;
            *got = (size_t)(in->zs.next_out - buf);
            if (rc == Z_STREAM_END)
                in->zdone = 1;
            else if (rc != Z_OK && rc != Z_BUF_ERROR)
                return lp_error_set(err, LP_ERR_FORMAT, "%s: corrupt gzip data near byte %llu: %s", in->name,
                                    (unsigned long long)in->consumed, in->zs.msg ? in->zs.msg : "inflate failed");
            else if (rc == Z_BUF_ERROR && used == 0 && *got == 0)
                return lp_error_set(err, LP_ERR_FORMAT, "%s: corrupt gzip data near byte %llu", in->name,
                                    (unsigned long long)in->consumed);
            continue;
        }
        /* zstd */
        if (!avail) {
            if (!in->zdone) {
                /* flush what the decoder still holds */
                ZSTD_inBuffer ib = {in->raw, 0, 0};
                ZSTD_outBuffer ob = {buf, n, 0};
                size_t rc = ZSTD_decompressStream(in->zd, &ob, &ib);
                if (ZSTD_isError(rc))
                    return lp_error_set(err, LP_ERR_FORMAT, "%s: corrupt zstd data: %s", in->name,
                                        ZSTD_getErrorName(rc));
                *got = ob.pos;
                if (ob.pos)
                    return LP_OK;
                return lp_error_set(err, LP_ERR_FORMAT, "%s: zstd stream truncated at byte %llu", in->name,
                                    (unsigned long long)in->consumed);
            }
            return LP_OK;
        }
        ZSTD_inBuffer ib = {in->raw + in->rawpos, avail, 0};
        ZSTD_outBuffer ob = {buf, n, 0};
        size_t rc = ZSTD_decompressStream(in->zd, &ob, &ib);
        if (ZSTD_isError(rc))
            return lp_error_set(err, LP_ERR_FORMAT, "%s: corrupt zstd data near byte %llu: %s", in->name,
                                (unsigned long long)in->consumed, ZSTD_getErrorName(rc));
        in->rawpos += ib.pos;
        in->consumed += ib.pos;
        in->zdone = rc == 0;
        *got = ob.pos;
    }
    return LP_OK;
}

lp_status lp_input_peek(lp_input *in, const void **p, size_t *n, lp_error *err)
{
    if (!in->peeked) {
        in->peeked = 1;
        while (in->npeek < PEEKMAX) {
            size_t got;
            lp_status st = read_raw(in, in->peek + in->npeek, PEEKMAX - in->npeek, &got, err);
            if (st)
                return st;
            if (!got)
                break;
            in->npeek += got;
        }
    }
    *p = in->peek + in->peekpos;
    *n = in->npeek - in->peekpos;
    return LP_OK;
}

lp_status lp_input_read(lp_input *in, void *buf, size_t n, size_t *got, lp_error *err)
{
    if (in->peekpos < in->npeek) {
        size_t k = in->npeek - in->peekpos;
        if (k > n)
            k = n;
        memcpy(buf, in->peek + in->peekpos, k);
        in->peekpos += k;
        *got = k;
        return LP_OK;
    }
    return read_raw(in, buf, n, got, err);
}
