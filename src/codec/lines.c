/* lines.c: lines of a decompressed input (lines.h).
 * Invariant: buf[pos, len) is read and not yet handed out; after an over-long line was
 * cut, `skipping` is 1 until the newline that ends it has been consumed. */
#include "codec/lines.h"
#include "longpole/base/alloc.h"

#include <string.h>

#define CHUNK ((size_t)1 << 16)

void lp_lines_init(lp_lines *L, lp_input *in, size_t max, int cut_long)
{
    memset(L, 0, sizeof *L);
    L->in = in;
    L->max = max;
    L->cut_long = cut_long;
}

void lp_lines_release(lp_lines *L)
{
    lp_free(L->buf);
    L->buf = NULL;
    L->cap = L->len = L->pos = 0;
}

/* Read more input after the pending bytes (moved to the front first). */
static lp_status refill(lp_lines *L, lp_error *err)
{
    if (L->pos) {
        memmove(L->buf, L->buf + L->pos, L->len - L->pos);
        L->len -= L->pos;
        L->pos = 0;
    }
    if (L->cap - L->len < CHUNK) {
        size_t ncap = L->cap ? L->cap * 2 : 4 * CHUNK;
        char *nb = lp_realloc(L->buf, ncap);
        if (!nb)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        L->buf = nb;
        L->cap = ncap;
    }
    size_t got = 0;
    lp_status st = lp_input_read(L->in, L->buf + L->len, L->cap - L->len, &got, err);
    if (st)
        return st;
    if (!got)
        L->eof = 1;
    L->len += got;
    return LP_OK;
}

/* Drop what is left of a cut line: up to and including its newline. */
static void skip_rest(lp_lines *L)
{
    char *q = memchr(L->buf + L->pos, '\n', L->len - L->pos);
    if (q) {
        L->pos = (size_t)(q - L->buf) + 1;
        L->skipping = 0;
    } else {
        L->pos = L->len;
    }
}

lp_status lp_lines_next(lp_lines *L, const char **p, size_t *n, int *cut, lp_error *err)
{
    if (cut)
        *cut = 0;
    for (;;) {
        if (L->skipping)
            skip_rest(L);
        size_t avail = L->len - L->pos;
        char *s = avail && !L->skipping ? L->buf + L->pos : NULL;
        char *nl = s ? memchr(s, '\n', avail) : NULL;
        size_t k = nl ? (size_t)(nl - s) : avail;
        if (s && k > L->max) { /* over-long, whether or not its end has been read */
            if (!L->cut_long)
                return lp_error_set(err, LP_ERR_LIMIT, "line %llu: longer than %zu bytes",
                                    (unsigned long long)L->line + 1, L->max);
            k = L->max;
            L->pos += k;
            L->skipping = 1;
            if (cut)
                *cut = 1;
        } else if (s && (nl || L->eof)) {
            L->pos += nl ? k + 1 : k;
        } else {
            if (L->eof && !L->skipping)
                return LP_END;
            if (L->eof) { /* a cut line that ran to the end of input */
                L->skipping = 0;
                continue;
            }
            lp_status st = refill(L, err);
            if (st)
                return st;
            continue;
        }
        if (k && s[k - 1] == '\r')
            k--;
        L->line++;
        *p = s;
        *n = k;
        return LP_OK;
    }
}
