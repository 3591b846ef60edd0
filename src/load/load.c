/* load.c: lp_trace_load(): format detection, merging several
 * inputs into one trace (load.h).
 *
 * Detection is by content: the .lptb magic, else the best-scoring registered importer,
 * else native text. Text input that starts with "longpole-trace" or a record letter
 * followed by a blank scores as native text; a foreign importer must score higher to
 * take a file.
 */
#define _GNU_SOURCE
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/import.h"
#include "longpole/load/load.h"
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

/* The header tracefs (`# tracer: ...`) or `longpole record`'s kernel source puts first:
 * a kernel trace, read by `cp --thread` (import/kernel.h), never by the activity loaders. */
static int is_ftrace(const void *head, size_t n)
{
    static const char *const heads[] = {"# tracer:", "# longpole-kernel:"};
    for (size_t i = 0; i < sizeof heads / sizeof *heads; i++) {
        size_t k = strlen(heads[i]);
        if (n >= k && memcmp(head, heads[i], k) == 0)
            return 1;
    }
    return 0;
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
        if (!fmt && is_ftrace(head, nh)) {
            lp_input_close(in);
            st = lp_error_set(err, LP_ERR_FORMAT,
                              "%s: ftrace text (a kernel trace): this command reads activity traces; the critical "
                              "path of a thread of kernel traces is `longpole cp --thread TID|NAME %s`",
                              path, path);
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
