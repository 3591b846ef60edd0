/* winpack.c: a window's result (lp_winres) as bytes and back (window.h), so that the
 * windows of one grid can be analysed by several processes and merged in index order
 * by one (`longpole dist summary`, docs/distributed.md).
 *
 * Layout (host byte order, no padding): a magic word "LPW1" and the result's size in
 * bytes, then every scalar field in declaration order (doubles as their 8 bytes, so
 * the copy is bit for bit), the checks, and per summary kind filled its totals and
 * rows. Invariants: unpack(pack(r)) has every field of r equal (bit for bit) except the
 * pointers t, keys, src (given to unpack) and user (NULL); a buffer that is short, has
 * another magic, or a summary kind or row count out of range is LP_ERR_FORMAT, never
 * a read past its end.
 */
#include "longpole/analysis/snailtrail/window.h"
#include "longpole/base/alloc.h"
#include "longpole/base/dbuf.h"

#include <string.h>

#define WP_MAGIC 0x3157504cu /* "LPW1" */

/* ---- writing ---------------------------------------------------------------------------- */

#define PUT LP_DBUF_PUT


static void put_check(lp_dbuf *w, const lp_snapcheck *c)
{
    PUT(w, c->np1);
    PUT(w, c->p1_worker);
    PUT(w, c->p1_time);
    PUT(w, c->np2);
    PUT(w, c->p2_from);
    PUT(w, c->p2_to);
    PUT(w, c->p2_active);
    PUT(w, c->p2_ns);
}

static void put_summary(lp_dbuf *w, const lp_summary *s)
{
    uint32_t kind = (uint32_t)s->kind;
    uint64_t n = s->n;
    PUT(w, kind);
    PUT(w, n);
    PUT(w, s->cp_total);
    PUT(w, s->prof_total);
    PUT(w, s->waiting_ns);
    PUT(w, s->path_total);
    for (size_t i = 0; i < s->n; i++) {
        const lp_sumrow *r = &s->rows[i];
        PUT(w, r->key);
        PUT(w, r->cp);
        PUT(w, r->rank);
        PUT(w, r->par);
        PUT(w, r->prof_ns);
        PUT(w, r->prof_share);
        PUT(w, r->path_ns);
        PUT(w, r->path_share);
    }
}

lp_status lp_winres_pack(const lp_winres *r, uint8_t **buf, size_t *len, size_t *cap, lp_error *err)
{
    lp_dbuf w = {*buf, *len, *cap, 0};
    size_t start = *len;
    uint32_t magic = WP_MAGIC, kinds = r->kinds;
    uint64_t size = 0; /* filled in at the end */
    int32_t flags[4] = {r->has_paths, r->sum_ok, r->checked, 0};
    PUT(&w, magic);
    PUT(&w, size);
    PUT(&w, r->index), PUT(&w, r->ts), PUT(&w, r->te), PUT(&w, r->t0), PUT(&w, r->t1);
    PUT(&w, r->nworkers), PUT(&w, r->nactive), PUT(&w, r->nevents), PUT(&w, r->nacts), PUT(&w, r->nmsgs);
    PUT(&w, r->nv), PUT(&w, r->nwedges), PUT(&w, r->nin);
    PUT(&w, r->n.m), PUT(&w, r->n.e), PUT(&w, r->n.rd), PUT(&w, r->log10n);
    PUT(&w, flags);
    PUT(&w, r->cp_sum), PUT(&w, r->err_bound), PUT(&w, r->n_agree), PUT(&w, r->ncycles);
    PUT(&w, r->nvs), PUT(&w, r->nve), PUT(&w, r->path_edges), PUT(&w, r->seconds);
    put_check(&w, &r->check);
    PUT(&w, kinds);
    for (int k = 0; k < LP_SUM_NKINDS; k++)
        if (r->kinds & (1u << k))
            put_summary(&w, &r->sum[k]);
    *buf = w.p, *len = w.n, *cap = w.cap; /* the buffer as grown (unchanged by a failed growth) */
    if (w.fail)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory packing window %llu", (unsigned long long)r->index);
    size = (uint64_t)(*len - start);
    memcpy(*buf + start + sizeof magic, &size, sizeof size);
    return LP_OK;
}

/* ---- reading ---------------------------------------------------------------------------- */

#define GET LP_DRD_GET


static void get_check(lp_drd *g, lp_snapcheck *c)
{
    GET(g, c->np1);
    GET(g, c->p1_worker);
    GET(g, c->p1_time);
    GET(g, c->np2);
    GET(g, c->p2_from);
    GET(g, c->p2_to);
    GET(g, c->p2_active);
    GET(g, c->p2_ns);
}

/* One summary's rows; -1 out of memory, 1 malformed. */
static int get_summary(lp_drd *g, lp_summary *s, int want)
{
    uint32_t kind;
    uint64_t n;
    GET(g, kind);
    GET(g, n);
    /* a row is 60 bytes: more rows than bytes left cannot be right */
    if (g->bad || (int)kind != want || n > (g->n - g->off) / 60)
        return 1;
    s->kind = (lp_sumkind)kind;
    GET(g, s->cp_total);
    GET(g, s->prof_total);
    GET(g, s->waiting_ns);
    GET(g, s->path_total);
    if (n && !(s->rows = lp_calloc((size_t)n, sizeof *s->rows)))
        return -1;
    s->n = s->cap = (size_t)n;
    for (size_t i = 0; i < s->n; i++) {
        lp_sumrow *r = &s->rows[i];
        GET(g, r->key);
        GET(g, r->cp);
        GET(g, r->rank);
        GET(g, r->par);
        GET(g, r->prof_ns);
        GET(g, r->prof_share);
        GET(g, r->path_ns);
        GET(g, r->path_share);
    }
    return g->bad;
}

lp_status lp_winres_unpack(lp_winres *r, const uint8_t *buf, size_t n, size_t *off, const lp_sumkeys *keys,
                           const lp_snapsrc *src, lp_error *err)
{
    lp_winres_release(r);
    lp_winres_init(r);
    size_t at = *off;
    lp_drd g = {buf, n, at, at > n};
    uint32_t magic = 0, kinds = 0;
    uint64_t size = 0;
    int32_t flags[4];
    GET(&g, magic);
    GET(&g, size);
    if (g.bad || magic != WP_MAGIC || size > n - at)
        return lp_error_set(err, LP_ERR_FORMAT, "window result at byte %zu: bad header", at);
    g.n = at + (size_t)size; /* read no further than this result */
    GET(&g, r->index), GET(&g, r->ts), GET(&g, r->te), GET(&g, r->t0), GET(&g, r->t1);
    GET(&g, r->nworkers), GET(&g, r->nactive), GET(&g, r->nevents), GET(&g, r->nacts), GET(&g, r->nmsgs);
    GET(&g, r->nv), GET(&g, r->nwedges), GET(&g, r->nin);
    GET(&g, r->n.m), GET(&g, r->n.e), GET(&g, r->n.rd), GET(&g, r->log10n);
    GET(&g, flags);
    r->has_paths = flags[0], r->sum_ok = flags[1], r->checked = flags[2];
    GET(&g, r->cp_sum), GET(&g, r->err_bound), GET(&g, r->n_agree), GET(&g, r->ncycles);
    GET(&g, r->nvs), GET(&g, r->nve), GET(&g, r->path_edges), GET(&g, r->seconds);
    get_check(&g, &r->check);
    GET(&g, kinds);
    if (g.bad || kinds >= (1u << LP_SUM_NKINDS))
        return lp_error_set(err, LP_ERR_FORMAT, "window result at byte %zu: bad fields", at);
    r->kinds = kinds;
    for (int k = 0; k < LP_SUM_NKINDS; k++) {
        if (!(kinds & (1u << k)))
            continue;
        int rc = get_summary(&g, &r->sum[k], k);
        if (rc < 0)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        if (rc)
            return lp_error_set(err, LP_ERR_FORMAT, "window %llu at byte %zu: bad %s summary",
                                (unsigned long long)r->index, at, lp_sumkind_name((lp_sumkind)k));
    }
    if (g.off != g.n)
        return lp_error_set(err, LP_ERR_FORMAT, "window %llu at byte %zu: %zu bytes left over",
                            (unsigned long long)r->index, at, g.n - g.off);
    r->keys = keys;
    r->t = keys->t;
    r->src = src;
    *off = g.off;
    return LP_OK;
}
