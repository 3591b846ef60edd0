/* io.h: byte input with transparent decompression, and the native trace formats.
 *
 * lp_input reads a file (or stdin for "-") and undoes gzip or zstd compression,
 * recognised by their magic numbers, so every reader accepts compressed input.
 * The native text format (.lpt v1) is MODEL.md's; the binary form (.lptb v1) is
 * documented in docs/formats/lptb.md. lp_trace_load() picks the reader by content.
 */
#ifndef LONGPOLE_IO_H
#define LONGPOLE_IO_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "longpole/base/status.h"
#include "longpole/model/trace.h"

/* ---- decompressing input ------------------------------------------------------- */

typedef enum lp_compression { LP_COMP_NONE = 0, LP_COMP_GZIP, LP_COMP_ZSTD } lp_compression;

typedef struct lp_input lp_input;

/* Open `path` ("-" = stdin). Compression is detected from the first bytes. */
lp_status lp_input_open(lp_input **in, const char *path, lp_error *err);
/* Read from memory (not copied; must outlive the input). */
lp_status lp_input_open_mem(lp_input **in, const void *data, size_t n, const char *name, lp_error *err);
/* Read up to n decompressed bytes; *got = 0 only at the end of input. */
lp_status lp_input_read(lp_input *in, void *buf, size_t n, size_t *got, lp_error *err);
/* Peek at the first bytes of the decompressed stream without consuming them (up to 64). */
lp_status lp_input_peek(lp_input *in, const void **p, size_t *n, lp_error *err);
lp_compression lp_input_compression(const lp_input *in);
const char *lp_input_name(const lp_input *in);
/* Compressed bytes consumed so far and total size if known (0 if not): for progress bars. */
uint64_t lp_input_consumed(const lp_input *in);
uint64_t lp_input_size(const lp_input *in);
/* The descriptor of an uncompressed regular file (its size is lp_input_size), for
 * readers that map the file instead of reading it; -1 for anything else. */
int lp_input_file_fd(const lp_input *in);
void lp_input_close(lp_input *in);

/* ---- progress ------------------------------------------------------------------ */

/* Called now and then by long operations: done and total in the operation's unit
 * (bytes for loading). Return non-zero to cancel (the operation then fails). */
typedef int (*lp_progress_fn)(void *ctx, const char *what, uint64_t done, uint64_t total);

/* ---- native formats ------------------------------------------------------------------ */

typedef enum lp_format {
    LP_FORMAT_AUTO = 0,
    LP_FORMAT_LPT,    /* native text */
    LP_FORMAT_LPTB,   /* native binary */
    LP_FORMAT_FOREIGN /* anything an importer registers (see import.h) */
} lp_format;

typedef struct lp_load_opts {
    lp_builder_opts build;   /* passed to the builder */
    lp_progress_fn progress; /* optional */
    void *progress_ctx;
    const char *format;      /* NULL/"auto", "lpt", "lptb", or an importer's name */
} lp_load_opts;

/* Feed one text stream into a builder (several files may feed one builder). Data
 * problems go to the builder's diagnostics; only resource errors return an error. */
lp_status lp_lpt_read(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err);

/* Write a trace as .lpt v1 text: header, W records for every worker (in id order),
 * A records by worker and start (gap activities omitted), then the messages in message
 * order: M records, or S/R pairs for messages that were read as halves (one S per
 * sender, receiver and id; an R per receive). Reading the result back gives an equal
 * trace. */
lp_status lp_lpt_write(const lp_trace *t, FILE *out, lp_error *err);

/* Binary form: read a whole trace (validated: ids, ordering, tiling, checksum). */
lp_status lp_lptb_read(lp_input *in, lp_trace **out, lp_diags *diags, const lp_load_opts *opts, lp_error *err);
lp_status lp_lptb_write(const lp_trace *t, FILE *out, lp_error *err);
/* Magic at the start of every .lptb file. */
#define LP_LPTB_MAGIC "LPTB\r\n\032\n"
#define LP_LPTB_VERSION 1u

/* Load one or more files into one trace: native text or binary (by content), or any
 * registered importer. Several files are merged (worker names are global). A binary
 * file can only be loaded alone. Data problems are reported to `diags`. */
lp_status lp_trace_load(const char *const *paths, size_t npaths, const lp_load_opts *opts, lp_diags *diags,
                        lp_trace **out, lp_error *err);

/* Write to a path, choosing text or binary by `binary`; "-" writes to stdout. If
 * `compress` is LP_COMP_GZIP or LP_COMP_ZSTD, the output is compressed. */
lp_status lp_trace_save(const lp_trace *t, const char *path, int binary, lp_compression compress, lp_error *err);

/* The same for any writer: `write` is called once with the (possibly compressing)
 * stream; the file is created, compressed, flushed and closed as by lp_trace_save, and
 * errors name the path. */
typedef lp_status (*lp_write_fn)(void *ctx, FILE *out, lp_error *err);
lp_status lp_save_with(const char *path, lp_compression compress, lp_write_fn write, void *ctx, lp_error *err);

#endif
