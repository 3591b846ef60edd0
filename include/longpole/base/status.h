/* status.h: the one status convention of liblongpole, and the error-cause chain.
 *
 * Every fallible library function returns an lp_status: 0 is success, a negative
 * value is an error, a positive value is a non-error condition a caller must
 * handle (LP_END: no more input; LP_AGAIN: nothing available yet, try later).
 * Functions that can fail also take an `lp_error *err` (may be NULL). On error
 * they fill it with a human-readable cause; callers that add context append a
 * layer with lp_error_push(), so the CLI can print
 *   "reading trace.lpt: line 12: field 3 (start): not an integer: '12x'".
 * The library never prints and never exits.
 */
#ifndef LONGPOLE_STATUS_H
#define LONGPOLE_STATUS_H

#include <stdarg.h>
#include <stddef.h>

typedef enum lp_status {
    LP_OK = 0,
    LP_END = 1,          /* end of input reached: not an error */
    LP_AGAIN = 2,        /* no data available now (streaming): not an error */
    LP_ERR_NOMEM = -1,   /* allocation failed */
    LP_ERR_IO = -2,      /* the operating system refused a read, write or open */
    LP_ERR_FORMAT = -3,  /* input is not in the expected format (bad magic, bad version, corrupt) */
    LP_ERR_DATA = -4,    /* input is well-formed but violates a rule of the model */
    LP_ERR_ARG = -5,     /* a caller passed an invalid argument */
    LP_ERR_LIMIT = -6,   /* a documented capacity limit was exceeded (e.g. 2^32 vertices) */
    LP_ERR_CHECKSUM = -7,/* stored checksum does not match the content */
    LP_ERR_UNSUPPORTED = -8 /* valid input using a feature this build does not support */
} lp_status;

#define LP_ERROR_MAX 1024

/* An error message with its context chain, innermost cause last.
 * Fixed-size so that reporting an out-of-memory error never allocates. */
typedef struct lp_error {
    lp_status status;        /* the status of the innermost failure */
    size_t len;              /* bytes used in msg, excluding the NUL */
    char msg[LP_ERROR_MAX];  /* "outer: inner: innermost", NUL-terminated, truncated if long */
} lp_error;

/* Reset to "no error". */
void lp_error_clear(lp_error *err);

/* Record the innermost cause; returns `st` so callers can write
 *   return lp_error_set(err, LP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
 * `err` may be NULL (the status is still returned). */
lp_status lp_error_set(lp_error *err, lp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
lp_status lp_error_vset(lp_error *err, lp_status st, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Prepend a context layer ("reading x.lpt") to an error already set. Returns err->status. */
lp_status lp_error_push(lp_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A short constant name for a status ("out of memory", "I/O error", ...). */
const char *lp_status_str(lp_status st);

#endif
