/* lines.h: the one line reader of the library's line-oriented text inputs (Grade10's
 * OperationLog, monitoring and blocking CSV and model files; perf script and collapsed
 * stacks): a decompressed lp_input cut into lines without their end (LF or CR LF),
 * numbered from 1. Internal to the library.
 *
 * A line is handed out as a pointer into the reader's buffer, valid until the next call.
 * A line longer than `max` bytes is, as the caller chose, an LP_ERR_LIMIT error naming
 * the line, or cut at `max` bytes (*cut = 1) with the rest of it skipped.
 *
 * Invariants: buf[pos, len) holds the bytes read but not yet handed out; the buffer
 * grows (doubling, from 256 KiB) only while a single line does not fit, up to max plus
 * one read; `line` is the number of the line last handed out.
 */
#ifndef LP_CODEC_LINES_H
#define LP_CODEC_LINES_H

#include "longpole/codec/io.h"

#include <stddef.h>
#include <stdint.h>

typedef struct lp_lines {
    lp_input *in;
    char *buf;
    size_t cap, len, pos;
    size_t max;     /* longest line */
    int cut_long;   /* 1: over-long lines are cut, 0: they are an error */
    int eof, skipping;
    uint64_t line;
} lp_lines;

void lp_lines_init(lp_lines *L, lp_input *in, size_t max, int cut_long);
void lp_lines_release(lp_lines *L);
/* The next line into (*p, *n): LP_OK, LP_END at the end of input, or an error. cut may
 * be NULL when over-long lines are errors. */
lp_status lp_lines_next(lp_lines *L, const char **p, size_t *n, int *cut, lp_error *err);

#endif
