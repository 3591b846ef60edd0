/* wingrid.c: the window grid (window.h; SnailTrail §5): n windows of one size, each
 * starting a step after the previous from an origin, the last one covering the range's
 * end; and the plan that prepares a snapshot source for every window bound. A grid that
 * would have 2^32 windows or more, or end past the largest time, is refused. */
#include "longpole/analysis/snailtrail/window.h"
#include "longpole/base/alloc.h"

#include <string.h>

lp_status lp_wingrid_make(lp_wingrid *g, int64_t from, int64_t to, int64_t size, int64_t step, lp_error *err)
{
    memset(g, 0, sizeof *g);
    if (size <= 0 || step <= 0)
        return lp_error_set(err, LP_ERR_ARG, "window size and step must be positive");
    if (to < from)
        return lp_error_set(err, LP_ERR_ARG, "window range ends (%lld) before it starts (%lld)", (long long)to,
                            (long long)from);
    __int128 len = (__int128)to - from;
    uint64_t n = 1;
    if (len > size) {
        __int128 k = (len - size + step - 1) / step + 1;
        if (k > (__int128)UINT32_MAX)
            return lp_error_set(err, LP_ERR_LIMIT, "more than 2^32 windows (a step of %lld ns over %lld ns)",
                                (long long)step, (long long)(to - from));
        n = (uint64_t)k;
    }
    __int128 last = (__int128)from + (__int128)(n - 1) * step + size;
    if (last > INT64_MAX)
        return lp_error_set(err, LP_ERR_LIMIT, "the last window would end past the largest time");
    g->origin = from;
    g->size = size;
    g->step = step;
    g->n = n;
    return LP_OK;
}

lp_status lp_wingrid_plan(const lp_wingrid *g, lp_snapsrc *src, lp_error *err)
{
    size_t n = (size_t)g->n * 2;
    int64_t *q = lp_malloc((n ? n : 1) * sizeof *q);
    if (!q)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory planning windows");
    for (uint64_t k = 0; k < g->n; k++) {
        q[2 * k] = lp_wingrid_ts(g, k);
        q[2 * k + 1] = lp_wingrid_te(g, k);
    }
    lp_status st = lp_snapsrc_plan(src, q, n, err);
    lp_free(q);
    return st;
}
