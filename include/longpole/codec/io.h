/* io.h: byte streams with transparent compression: lp_input reads a file (or stdin for
 * "-") and undoes gzip or zstd compression, recognised by their magic numbers, so every
 * reader accepts compressed input; lp_save_with writes a file (or stdout), compressed
 * on request. Implemented in src/codec/input.c and src/codec/output.c.
 */
#ifndef LONGPOLE_CODEC_IO_H
#define LONGPOLE_CODEC_IO_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "longpole/base/status.h"

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

/* ---- compressed output ---------------------------------------------------------- */

/* Write a file with any writer: `write` is called once with the (possibly
 * compressing) stream; the file is created ("-": stdout), compressed if `compress` is
 * LP_COMP_GZIP or LP_COMP_ZSTD, flushed and closed, and errors name the path. */
typedef lp_status (*lp_write_fn)(void *ctx, FILE *out, lp_error *err);
lp_status lp_save_with(const char *path, lp_compression compress, lp_write_fn write, void *ctx, lp_error *err);

#endif
