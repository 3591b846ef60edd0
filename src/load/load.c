/* load.c: lp_trace_load() and lp_trace_save(): format detection, merging several
 * inputs into one trace, and (optionally compressed) output.
 *
 * Detection is by content: the .lptb magic, else the best-scoring registered importer,
 * else native text. Text input that starts with "longpole-trace" or a record letter
 * followed by a blank scores as native text; a foreign importer must score higher to
 * take a file. Compressed output goes through a stdio cookie, so the writers stream
 * whatever the trace's size.
 */
#define _GNU_SOURCE
#include "longpole/codec/io.h"
#include "longpole/import/import.h"
#include "longpole/load/inputs.h"
#include "longpole/import/spark.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

static int lpt_score(const unsigned char *p, size_t n)
{
    size_t i = 0;
    for (;;) {
        while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
            i++;
        if (i < n && p[i] == '#') { /* skip comment line */
            while (i < n && p[i] != '\n')
                i++;
            if (i == n)
                return 50; /* a long comment: probably ours */
            continue;
        }
        break;
    }
    if (n - i >= 14 && memcmp(p + i, "longpole-trace", 14) == 0)
        return 95;
    if (n - i >= 2 && strchr("WAMSR", p[i]) && (p[i + 1] == ' ' || p[i + 1] == '\t'))
        return 60;
    if (i == n)
        return 50; /* empty (or only comments): an empty native trace */
    return 5;
}

lp_status lp_trace_load(const char *const *paths, size_t npaths, const lp_load_opts *opts, lp_diags *diags,
                        lp_trace **out, lp_error *err)
{
    *out = NULL;
    lp_load_opts dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!opts)
        opts = &dflt;
    if (npaths == 0)
        return lp_error_set(err, LP_ERR_ARG, "no input given");
    const char *fmt = opts->format && strcmp(opts->format, "auto") != 0 ? opts->format : NULL;
    const lp_importer *forced = NULL;
    if (fmt && strcmp(fmt, "lpt") != 0 && strcmp(fmt, "lptb") != 0) {
        forced = lp_importer_find(fmt);
        if (!forced)
            return lp_error_set(err, LP_ERR_ARG, "unknown format '%s' (see `longpole help formats`)", fmt);
    }
    /* directories: their files in name order; a rolling Spark event log is one input */
    lp_input_item *items = NULL;
    size_t nitems = 0;
    lp_status st = lp_inputs_expand(paths, npaths, &items, &nitems, err);
    if (st)
        return st;
    if (nitems == 0) {
        lp_inputs_free(items, nitems);
        return lp_error_set(err, LP_ERR_ARG, "no input files in '%s'", paths[0]);
    }
    lp_builder *b = NULL;
    if ((st = lp_builder_new(&b, diags, &opts->build, err))) {
        lp_inputs_free(items, nitems);
        return st;
    }
    for (size_t i = 0; i < nitems; i++) {
        const char *path = items[i].path;
        if (items[i].kind == LP_INPUT_SPARK_DIR) {
            if (fmt && strcmp(fmt, "spark") != 0) {
                st = lp_error_set(err, LP_ERR_ARG, "%s: a Spark event-log directory cannot be read as '%s'", path,
                                  fmt);
                goto fail;
            }
            if ((st = lp_builder_source(b, path, err)) || (st = lp_spark_read_dir(b, path, opts, err)))
                goto fail;
            continue;
        }
        lp_input *in;
        if ((st = lp_input_open(&in, path, err)))
            goto fail;
        const void *head;
        size_t nh;
        if ((st = lp_input_peek(in, &head, &nh, err))) {
            lp_error_push(err, "reading %s", path);
            lp_input_close(in);
            goto fail;
        }
        int is_bin = nh >= 8 && memcmp(head, LP_LPTB_MAGIC, 8) == 0;
        if ((fmt && strcmp(fmt, "lptb") == 0) || (!fmt && is_bin)) {
            if (nitems != 1 || lp_builder_records(b)) {
                lp_input_close(in);
                st = lp_error_set(err, LP_ERR_ARG, "%s: a binary trace can only be loaded alone", path);
                goto fail;
            }
            lp_builder_free(b);
            lp_inputs_free(items, nitems);
            st = lp_lptb_read(in, out, diags, opts, err);
            lp_input_close(in);
            return st;
        }
        const lp_importer *imp = forced;
        if (!imp && !fmt) {
            const lp_importer *best = lp_importer_detect(head, nh, path);
            if (best && best->detect(head, nh, path) > lpt_score(head, nh))
                imp = best;
        }
        if (imp) {
            if ((st = lp_builder_source(b, path, err)) == LP_OK)
                st = imp->read(b, in, opts, err);
        } else {
            st = lp_lpt_read(b, in, opts, err);
        }
        lp_input_close(in);
        if (st)
            goto fail;
    }
    lp_inputs_free(items, nitems);
    return lp_builder_finish(b, out, err);
fail:
    lp_inputs_free(items, nitems);
    lp_builder_free(b);
    return st;
}

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

static lp_status write_text(void *t, FILE *out, lp_error *err) { return lp_lpt_write(t, out, err); }
static lp_status write_bin(void *t, FILE *out, lp_error *err) { return lp_lptb_write(t, out, err); }

lp_status lp_trace_save(const lp_trace *t, const char *path, int binary, lp_compression compress, lp_error *err)
{
    return lp_save_with(path, compress, binary ? write_bin : write_text, (void *)(uintptr_t)t, err);
}
