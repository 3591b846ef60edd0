/* secwrite.c: sections padded to 8 bytes with a running XXH3-64 checksum (secwrite.h).
 * Invariant: w->h holds the checksum of the w->off bytes written so far. */
#include "codec/secwrite.h"

#include <xxhash.h>

lp_status lp_secw_init(lp_secw *w, FILE *f, lp_error *err)
{
    w->f = f;
    w->off = 0;
    w->failed = 0;
    XXH3_state_t *h = XXH3_createState();
    w->h = h;
    if (!h)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    XXH3_64bits_reset(h);
    return LP_OK;
}

void lp_secw_put(lp_secw *w, const void *p, size_t n)
{
    if (!n)
        return;
    if (fwrite(p, 1, n, w->f) != n)
        w->failed = 1;
    XXH3_64bits_update(w->h, p, n);
    w->off += n;
}

void lp_secw_pad(lp_secw *w)
{
    static const char zero[8];
    lp_secw_put(w, zero, (size_t)((8 - (w->off & 7)) & 7));
}

void lp_secw_section(lp_secw *w, const void *p, size_t elem, uint64_t n)
{
    lp_secw_put(w, p, (size_t)(elem * n));
    lp_secw_pad(w);
}

int lp_secw_finish(lp_secw *w)
{
    uint64_t sum = XXH3_64bits_digest(w->h);
    lp_secw_abandon(w);
    if (fwrite(&sum, 1, 8, w->f) != 8)
        w->failed = 1;
    if (fflush(w->f) != 0 || ferror(w->f))
        w->failed = 1;
    return w->failed ? -1 : 0;
}

void lp_secw_abandon(lp_secw *w)
{
    XXH3_freeState(w->h);
    w->h = NULL;
}
