/* spancp_pack.c: a trace's critical path (lp_spancp: its sections, the spans visited
 * with their exclusive time, and the adjustment counts) as bytes and back (spancp.h),
 * so the traces of one table can be walked by several processes and aggregated by one
 * (`longpole dist spans`, docs/distributed.md).
 * Layout (host byte order): magic "LPS1", the result's size in bytes, the scalars, the
 * sections (span u32, start, end), the visits (span u32, excl). Invariants: unpack of
 * pack gives every result field equal; a short buffer, another magic, counts beyond the
 * bytes, or a span index outside the table is LP_ERR_FORMAT, never a read past the end. */
#include "longpole/analysis/spans/spancp.h"
#include "longpole/base/alloc.h"
#include "longpole/base/dbuf.h"

#include <string.h>

#define SP_MAGIC 0x3153504cu /* "LPS1" */
#define SEC_BYTES 20         /* u32 + 2 * i64 */
#define VISIT_BYTES 12       /* u32 + i64 */

#define PUT LP_DBUF_PUT


lp_status lp_spancp_pack(const lp_spancp *cp, uint8_t **buf, size_t *len, size_t *cap, lp_error *err)
{
    lp_dbuf w = {*buf, *len, *cap, 0};
    size_t start = *len;
    uint32_t magic = SP_MAGIC;
    uint64_t size = 0, nsec = cp->nsec, nvisit = cp->nvisit;
    PUT(&w, magic), PUT(&w, size);
    PUT(&w, cp->trace), PUT(&w, cp->root), PUT(&w, cp->start), PUT(&w, cp->latency);
    PUT(&w, cp->nclipped), PUT(&w, cp->clipped_ns), PUT(&w, cp->noutside), PUT(&w, cp->nasync);
    PUT(&w, nsec), PUT(&w, nvisit);
    for (size_t i = 0; i < cp->nsec; i++)
        PUT(&w, cp->sec[i].span), PUT(&w, cp->sec[i].start), PUT(&w, cp->sec[i].end);
    for (size_t i = 0; i < cp->nvisit; i++)
        PUT(&w, cp->visit[i].span), PUT(&w, cp->visit[i].excl);
    *buf = w.p, *len = w.n, *cap = w.cap; /* the buffer as grown (unchanged by a failed growth) */
    if (w.fail)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory packing the path of trace %u", cp->trace);
    size = (uint64_t)(*len - start);
    memcpy(*buf + start + sizeof magic, &size, sizeof size);
    return LP_OK;
}

#define GET LP_DRD_GET


lp_status lp_spancp_unpack(lp_spancp *cp, const uint8_t *buf, size_t n, size_t *off, uint64_t nspans, lp_error *err)
{
    size_t at = *off;
    lp_drd g = {buf, n, at, at > n};
    uint32_t magic = 0;
    uint64_t size = 0, nsec = 0, nvisit = 0;
    GET(&g, magic), GET(&g, size);
    if (g.bad || magic != SP_MAGIC || size > n - at)
        return lp_error_set(err, LP_ERR_FORMAT, "trace path at byte %zu: bad header", at);
    g.n = at + (size_t)size;
    GET(&g, cp->trace), GET(&g, cp->root), GET(&g, cp->start), GET(&g, cp->latency);
    GET(&g, cp->nclipped), GET(&g, cp->clipped_ns), GET(&g, cp->noutside), GET(&g, cp->nasync);
    GET(&g, nsec), GET(&g, nvisit);
    size_t left = g.n - g.off;
    if (g.bad || nsec > left / SEC_BYTES || nvisit > (left - nsec * SEC_BYTES) / VISIT_BYTES)
        return lp_error_set(err, LP_ERR_FORMAT, "trace path at byte %zu: bad counts", at);
    if (lp_grow_at(&cp->sec, &cp->capsec, (size_t)nsec + 1, sizeof *cp->sec) ||
        lp_grow_at(&cp->visit, &cp->capvisit, (size_t)nvisit + 1, sizeof *cp->visit))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    cp->nsec = (size_t)nsec;
    cp->nvisit = (size_t)nvisit;
    int badspan = cp->root != LP_SPAN_NONE && cp->root >= nspans;
    for (size_t i = 0; i < cp->nsec; i++) {
        GET(&g, cp->sec[i].span), GET(&g, cp->sec[i].start), GET(&g, cp->sec[i].end);
        badspan |= cp->sec[i].span >= nspans;
    }
    for (size_t i = 0; i < cp->nvisit; i++) {
        GET(&g, cp->visit[i].span), GET(&g, cp->visit[i].excl);
        badspan |= cp->visit[i].span >= nspans;
    }
    if (g.bad || badspan || g.off != g.n) {
        cp->nsec = cp->nvisit = 0;
        cp->root = LP_SPAN_NONE;
        return lp_error_set(err, LP_ERR_FORMAT, "trace path at byte %zu: bad %s", at,
                            badspan ? "span index" : "length");
    }
    *off = g.off;
    return LP_OK;
}
