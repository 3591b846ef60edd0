/* load.c: lp_trace_load(): format detection, merging several
 * inputs into one trace (load.h).
 *
 * Detection is by content: the .lptb magic, else the best-scoring registered importer,
 * else native text. Text input that starts with "longpole-trace" or a record letter
 * followed by a blank scores as native text; a foreign importer must score higher to
 * take a file. Input that is neither (and not empty) is no trace: named on the command
 * line it is refused with what it looks like (sniff.c); found in a folder it is
 * reported and skipped, and a folder with nothing readable is refused. A corrupt or
 * truncated file in a folder is reported (rule binary) and the rest of it skipped.
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
#include <stdio.h>
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

/* Was this input named on the command line (not found in a folder)? */
static int named(const char *const *paths, size_t npaths, const char *path)
{
    for (size_t i = 0; i < npaths; i++)
        if (strcmp(paths[i], path) == 0)
            return 1;
    return 0;
}

/* The files of folders that no reader recognised: skipped and reported. */
typedef struct skipped {
    size_t n;
    char first[256], why[256]; /* the first one, and what it looks like */
} skipped;

/* An input no reader recognises: named on the command line, it is refused (never an
 * analysis of nothing, docs/trust.md); found in a folder, it is reported and skipped,
 * except a CTF trace, which stands for the whole folder. */
static lp_status unrecognised(const char *path, const void *head, size_t nh, int is_named, lp_diags *diags,
                              skipped *skip, lp_error *err)
{
    char why[256];
    if (!lp_input_sniff(head, nh, why, sizeof why))
        return LP_OK; /* empty: an empty native trace (the commands say there is nothing to analyse) */
    if (is_named || lp_input_is_ctf(head, nh))
        return lp_error_set(err, LP_ERR_FORMAT, "%s: not a trace format longpole reads: %s", path, why);
    lp_diags_report(diags, LP_SEV_WARNING, LP_RULE_IMPORT, path, 0, "not a trace format longpole reads (%s); skipped",
                    why);
    if (!skip->n++) {
        snprintf(skip->first, sizeof skip->first, "%s", path);
        snprintf(skip->why, sizeof skip->why, "%s", why);
    }
    return LP_OK;
}

/* A corrupt or truncated file found in a folder (a bad compressed stream, a broken
 * container) is reported with the codec's reason and the rest of that file skipped;
 * the folder's other files are still read (what the file gave before the damage is
 * kept). Named on the command line, it stays an error. Returns 1 if absorbed. */
static int absorbed(lp_status st, const char *path, int is_named, lp_diags *diags, lp_error *err)
{
    if (st != LP_ERR_FORMAT || is_named)
        return 0;
    const char *msg = err->msg;
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        msg += n + 2; /* the name is the diagnostic's own */
    lp_diags_report(diags, LP_SEV_ERROR, LP_RULE_BINARY, path, 0, "%s; the rest of this file was skipped", msg);
    lp_error_clear(err);
    return 1;
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
    skipped skip;
    memset(&skip, 0, sizeof skip);
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
        if ((st = lp_input_peek(in, &head, &nh, err))) { /* (the codec's message names the file) */
            lp_input_close(in);
            if (absorbed(st, path, named(paths, npaths, path), diags, err))
                continue;
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
            int own = lpt_score(head, nh);
            if (best && best->detect(head, nh, path) > own)
                imp = best;
            else if (own < 50) { /* nobody's: refused, or skipped in a folder */
                st = unrecognised(path, head, nh, named(paths, npaths, path), diags, &skip, err);
                lp_input_close(in);
                if (st)
                    goto fail;
                continue;
            }
        }
        if (imp) {
            if ((st = lp_builder_source(b, path, err)) == LP_OK)
                st = imp->read(b, in, opts, err);
        } else {
            st = lp_lpt_read(b, in, opts, err);
        }
        lp_input_close(in);
        if (st && !absorbed(st, path, named(paths, npaths, path), diags, err))
            goto fail;
    }
    if (skip.n && skip.n == nitems) {
        st = lp_error_set(err, LP_ERR_FORMAT, "%s: no file in it is a trace format longpole reads (%zu skipped; %s: %s)",
                          paths[0], skip.n, skip.first, skip.why);
        goto fail;
    }
    lp_inputs_free(items, nitems);
    if (opts->progress) /* the graph's last phase: said, not a bar stuck near 100% (issue 12) */
        opts->progress(opts->progress_ctx, "building", 0, 0);
    return lp_builder_finish(b, out, err);
fail:
    lp_inputs_free(items, nitems);
    lp_builder_free(b);
    return st;
}
