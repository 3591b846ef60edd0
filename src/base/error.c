/* error.c: lp_error, the error-cause chain (see status.h).
 * Invariant: msg is always NUL-terminated and len == strlen(msg); nothing here allocates. */
#include "longpole/base/status.h"

#include <stdio.h>
#include <string.h>

void lp_error_clear(lp_error *err)
{
    if (!err)
        return;
    err->status = LP_OK;
    err->len = 0;
    err->msg[0] = '\0';
}

lp_status lp_error_vset(lp_error *err, lp_status st, const char *fmt, va_list ap)
{
    if (!err)
        return st;
    err->status = st;
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    if (n < 0)
        n = 0;
    err->len = (size_t)n < sizeof err->msg ? (size_t)n : sizeof err->msg - 1;
    return st;
}

lp_status lp_error_set(lp_error *err, lp_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lp_error_vset(err, st, fmt, ap);
    va_end(ap);
    return st;
}

lp_status lp_error_push(lp_error *err, const char *fmt, ...)
{
    if (!err)
        return LP_ERR_ARG;
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n < 0)
        return err->status;
    size_t plen = (size_t)n < sizeof prefix ? (size_t)n : sizeof prefix - 1;
    size_t add = plen + 2; /* "prefix: " */
    size_t keep = err->len;
    if (add >= sizeof err->msg)
        return err->status;
    if (keep + add >= sizeof err->msg)
        keep = sizeof err->msg - 1 - add;
    memmove(err->msg + add, err->msg, keep);
    memcpy(err->msg, prefix, plen);
    err->msg[plen] = ':';
    err->msg[plen + 1] = ' ';
    err->len = keep + add;
    err->msg[err->len] = '\0';
    return err->status;
}

const char *lp_status_str(lp_status st)
{
    switch (st) {
    case LP_OK: return "ok";
    case LP_END: return "end of input";
    case LP_AGAIN: return "try again";
    case LP_ERR_NOMEM: return "out of memory";
    case LP_ERR_IO: return "I/O error";
    case LP_ERR_FORMAT: return "bad format";
    case LP_ERR_DATA: return "bad data";
    case LP_ERR_ARG: return "invalid argument";
    case LP_ERR_LIMIT: return "limit exceeded";
    case LP_ERR_CHECKSUM: return "checksum mismatch";
    case LP_ERR_UNSUPPORTED: return "unsupported";
    }
    return "unknown status";
}
