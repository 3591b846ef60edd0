/* g10_text.h: line-oriented text helpers shared by the Grade10 readers (OperationLog,
 * monitoring and blocking CSV) and the Grade10 model file parser. Internal.
 *
 * Lines come from the library's line reader (codec/lines.h); lines longer than
 * G10_LINE_MAX are an LP_ERR_LIMIT error naming the line.
 */
#ifndef LP_IMPORT_G10_TEXT_H
#define LP_IMPORT_G10_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/codec/io.h"
#include "longpole/base/strtab.h"
#include "codec/lines.h"

#define G10_LINE_MAX ((size_t)1 << 24)


/* A CSV with an optional header line, read whole: blank lines and '#' comments are
 * skipped; the first other line goes to header() (-1: not this format -> LP_ERR_FORMAT
 * "line N: not a <what> header"; 1: a header, consumed; 0: no header, the line is a
 * row), every line after it to row(); lines are trimmed. Errors are pushed with
 * "reading <fname>". */
typedef int (*g10_csv_header_fn)(void *ctx, const char *p, size_t n, uint64_t line);
typedef lp_status (*g10_csv_row_fn)(void *ctx, const char *p, size_t n, uint64_t line, lp_error *err);
lp_status g10_csv_read(lp_input *in, const char *what, const char *fname, g10_csv_header_fn header,
                       g10_csv_row_fn row, void *ctx, lp_error *err);

/* Split a CSV row at ',' (fields trimmed): the field of column col[i] into (fv[i], fl[i])
 * for i < ncol. Returns the number of fields, or maxf + 1 as soon as there are more than
 * maxf (the rest is not read). */
int g10_csv_fields(const char *p, size_t n, const int *col, int ncol, int maxf, const char **fv, size_t *fl);

/* Trim spaces and tabs from both ends of (*p, *n). */
void g10_trim(const char **p, size_t *n);
/* A finite double from exactly the bytes s[0, n); 1 on success. */
int g10_parse_double(const char *s, size_t n, double *out);
/* A signed decimal integer, optionally with a fraction, times `unit` nanoseconds,
 * rounded to the nearest ns ("12", "12.5" with unit 1000000 -> 12500000); 1 on
 * success, 0 on bad syntax or overflow. */
int g10_parse_time(const char *s, size_t n, int64_t unit, int64_t *out);
/* Split the next field off (*p, *n) at `sep`: the field (untrimmed) into (*f, *fn). 0
 * when nothing is left. */
int g10_next_field(const char **p, size_t *n, char sep, const char **f, size_t *fn);
/* The unit of a time column named like "time_ms" (suffix _ns, _us, _ms, _s): its
 * nanoseconds, or 0 when the name has no unit suffix. */
int64_t g10_unit_suffix(const char *name, size_t n);

/* The series of (host, metric) in d, made on first use (g10_data.c). */
struct lp_g10_data;
struct lp_g10_series;
lp_status g10_series_of(struct lp_g10_data *d, lp_str host, lp_str metric, lp_str file, struct lp_g10_series **out,
                        lp_error *err);
/* Append a sample (the caller checked the order). */
lp_status g10_series_append(struct lp_g10_series *s, int64_t t, double v, uint64_t line, lp_error *err);

#endif
