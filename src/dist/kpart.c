/* kpart.c: a host's part of the execution graph packed for the wire, and the graph of
 * the hosts rank 0 has assembled from their parts (keci.h).
 *
 * A packed part: u32 magic, u32 host; u32 nworkers, then per worker i32 tid, i32 cpu,
 * its comm and name (u32 length + bytes), u32 vertex count; the vertices in order
 * (i64 vt, u8 state, u8 reason each); u32 nlinks, then (u32 from, u32 to, u8 kind) in
 * the part's own vertex numbering; u64 nkeys lp_kpktkey (vertex in the part's
 * numbering); u64 nends, then (u64 packet * 2 + end, u32 vertex) with end 0 the send, 1
 * the receive's target. A host's workers and vertices are contiguous in a graph laid
 * out host by host (kgraph_layout), so the part is a slice of the graph.
 */
#include "longpole/dist/keci.h"
#include "longpole/base/alloc.h"

#include <string.h>

#define PART_MAGIC 0x5452504bu /* "KPRT" */

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

lp_status lp_keci_pack_part(const lp_kgraph *g, uint32_t h, const lp_kmatch *m, const uint32_t *sv,
                            const uint32_t *tv, lp_dbuf *out, lp_error *err)
{
    uint32_t w0 = 0, w1;
    while (w0 < g->nworkers && g->w[w0].host != h)
        w0++;
    for (w1 = w0; w1 < g->nworkers && g->w[w1].host == h;)
        w1++;
    for (uint32_t w = w1; w < g->nworkers; w++)
        if (g->w[w].host == h)
            return lp_error_set(err, LP_ERR_DATA, "host %u's workers are not contiguous in the graph", h);
    uint32_t v0 = w0 < w1 ? g->voff[w0] : 0, v1 = w0 < w1 ? g->voff[w1] : 0;
    lp_dbuf_u32(out, PART_MAGIC);
    lp_dbuf_u32(out, h);
    lp_dbuf_u32(out, w1 - w0);
    for (uint32_t w = w0; w < w1; w++) {
        lp_dbuf_put(out, &g->w[w].tid, 4);
        lp_dbuf_put(out, &g->w[w].cpu, 4);
        lp_dbuf_str(out, g->w[w].comm == LP_STR_NONE ? "" : lp_kgraph_str(g, g->w[w].comm));
        lp_dbuf_str(out, lp_kgraph_worker_name(g, w));
        lp_dbuf_u32(out, g->voff[w + 1] - g->voff[w]);
    }
    lp_dbuf_put(out, g->vt + v0, (size_t)(v1 - v0) * 8);
    lp_dbuf_put(out, g->vstate + v0, v1 - v0);
    lp_dbuf_put(out, g->vreason + v0, v1 - v0);
    uint32_t nl = 0;
    for (uint32_t l = 0; l < g->nlinks; l++)
        nl += g->lkind[l] != LP_KL_NETWORK && g->lfrom[l] >= v0 && g->lfrom[l] < v1;
    lp_dbuf_u32(out, nl);
    for (uint32_t l = 0; l < g->nlinks; l++) {
        if (g->lkind[l] == LP_KL_NETWORK || g->lfrom[l] < v0 || g->lfrom[l] >= v1)
            continue;
        if (g->lto[l] < v0 || g->lto[l] >= v1)
            return lp_error_set(err, LP_ERR_DATA, "link %u leaves host %u without being a packet", l, h);
        lp_dbuf_u32(out, g->lfrom[l] - v0);
        lp_dbuf_u32(out, g->lto[l] - v0);
        lp_dbuf_put(out, &g->lkind[l], 1);
    }
    uint64_t nk = 0;
    for (uint64_t i = 0; i < g->npk; i++)
        nk += g->pk[i].host == h;
    lp_dbuf_u64(out, nk);
    for (uint64_t i = 0; i < g->npk; i++) {
        if (g->pk[i].host != h)
            continue;
        lp_kpktkey k = g->pk[i];
        if (k.vertex != LP_NONE32)
            k.vertex -= v0;
        lp_dbuf_put(out, &k, sizeof k);
    }
    uint64_t ne = 0;
    for (uint64_t p = 0; p < m->npk; p++)
        ne += (m->pk[p].shost == h && sv[p] != LP_NONE32) + (m->pk[p].rhost == h && tv[p] != LP_NONE32);
    lp_dbuf_u64(out, ne);
    for (uint64_t p = 0; p < m->npk; p++)
        for (int end = 0; end < 2; end++) {
            uint32_t hh = end ? m->pk[p].rhost : m->pk[p].shost, v = end ? tv[p] : sv[p];
            if (hh != h || v == LP_NONE32)
                continue;
            lp_dbuf_u64(out, p * 2 + (uint64_t)end);
            lp_dbuf_u32(out, v - v0);
        }
    return out->fail ? nomem(err) : LP_OK;
}

uint32_t lp_keci_part_host(const void *buf, size_t n)
{
    lp_drd r = lp_drd_init(buf, n);
    uint32_t magic = lp_drd_u32(&r), h = lp_drd_u32(&r);
    return r.bad || magic != PART_MAGIC ? UINT32_MAX : h;
}

/* Sizes of a part, read once to allocate (workers, vertices, links, keys). */
typedef struct psize {
    uint32_t nw, nv, nl;
    uint64_t nk;
} psize;

static lp_status bad(const lp_drd *r, uint32_t h, lp_error *err)
{
    return lp_error_set(err, LP_ERR_FORMAT, "graph part of host %u: bad bytes at offset %zu", h, r->off);
}

/* Walk a part: sizes (g == NULL), or fill g from the offsets in `at` (ends into ends[]). */
static lp_status walk(const lp_dbuf *b, uint32_t h, lp_kgraph *g, const psize *at, psize *sz, uint32_t *ends_s,
                      uint32_t *ends_t, uint64_t npk, lp_error *err)
{
    lp_drd r = lp_drd_init(b->p, b->n);
    if (lp_drd_u32(&r) != PART_MAGIC || lp_drd_u32(&r) != h)
        return bad(&r, h, err);
    memset(sz, 0, sizeof *sz);
    sz->nw = lp_drd_u32(&r);
    if (r.bad || sz->nw > b->n / 16)
        return bad(&r, h, err);
    for (uint32_t i = 0; i < sz->nw; i++) {
        const void *tid = lp_drd_get(&r, 4), *cpu = lp_drd_get(&r, 4);
        uint32_t lc, ln;
        const char *comm = lp_drd_str(&r, &lc), *name = comm ? lp_drd_str(&r, &ln) : NULL;
        uint32_t nv = lp_drd_u32(&r);
        if (r.bad || !name || nv > b->n)
            return bad(&r, h, err);
        if (g) {
            lp_kworker *w = &g->w[at->nw + i];
            memcpy(&w->tid, tid, 4);
            memcpy(&w->cpu, cpu, 4);
            w->host = h;
            if (lp_strtab_intern(&g->strs, comm, lc, &w->comm) || lp_strtab_intern(&g->strs, name, ln, &w->name))
                return nomem(err);
            g->voff[at->nw + i + 1] = g->voff[at->nw + i] + nv;
        }
        sz->nv += nv;
    }
    const void *vt = lp_drd_get(&r, (size_t)sz->nv * 8), *vs = lp_drd_get(&r, sz->nv), *vr = lp_drd_get(&r, sz->nv);
    sz->nl = lp_drd_u32(&r);
    if (r.bad || sz->nl > b->n / 9)
        return bad(&r, h, err);
    if (g) {
        memcpy(g->vt + at->nv, vt, (size_t)sz->nv * 8);
        memcpy(g->vstate + at->nv, vs, sz->nv);
        memcpy(g->vreason + at->nv, vr, sz->nv);
    }
    for (uint32_t l = 0; l < sz->nl; l++) {
        uint32_t f = lp_drd_u32(&r), t = lp_drd_u32(&r);
        const uint8_t *k = lp_drd_get(&r, 1);
        if (r.bad || f >= sz->nv || t >= sz->nv)
            return bad(&r, h, err);
        if (g)
            g->lfrom[at->nl + l] = at->nv + f, g->lto[at->nl + l] = at->nv + t, g->lkind[at->nl + l] = *k;
    }
    sz->nk = lp_drd_u64(&r);
    if (r.bad || sz->nk > b->n / sizeof(lp_kpktkey))
        return bad(&r, h, err);
    for (uint64_t i = 0; i < sz->nk; i++) {
        const void *k = lp_drd_get(&r, sizeof(lp_kpktkey));
        if (g && k) {
            lp_kpktkey *d = &g->pk[at->nk + i];
            memcpy(d, k, sizeof *d);
            if (d->vertex != LP_NONE32)
                d->vertex = d->vertex < sz->nv ? d->vertex + at->nv : LP_NONE32;
            d->host = h;
        }
    }
    uint64_t ne = lp_drd_u64(&r);
    for (uint64_t i = 0; i < ne && !r.bad; i++) {
        uint64_t e = lp_drd_u64(&r);
        uint32_t v = lp_drd_u32(&r);
        if (r.bad || e >= npk * 2 || v >= sz->nv)
            return bad(&r, h, err);
        if (g)
            (e & 1 ? ends_t : ends_s)[e / 2] = at->nv + v;
    }
    return r.bad || r.off != r.n ? bad(&r, h, err) : LP_OK;
}

static lp_status alloc_graph(lp_kgraph *g, uint32_t nh, const psize *t, uint32_t nl, lp_error *err)
{
    g->host = lp_malloc((nh ? nh : 1) * sizeof *g->host);
    g->clock_slope = lp_malloc((nh ? nh : 1) * 8);
    g->clock_offset = lp_malloc((nh ? nh : 1) * 8);
    g->w = lp_calloc(t->nw ? t->nw : 1, sizeof *g->w);
    g->voff = lp_calloc((size_t)t->nw + 1, 4);
    g->vt = lp_malloc((t->nv ? t->nv : 1) * 8);
    g->vstate = lp_malloc(t->nv ? t->nv : 1);
    g->vreason = lp_malloc(t->nv ? t->nv : 1);
    g->vin = lp_malloc((t->nv ? t->nv : 1) * 4);
    g->vout = lp_malloc((t->nv ? t->nv : 1) * 4);
    g->lfrom = lp_malloc((nl ? nl : 1) * 4);
    g->lto = lp_malloc((nl ? nl : 1) * 4);
    g->lkind = lp_malloc(nl ? nl : 1);
    g->pk = lp_malloc((t->nk ? t->nk : 1) * sizeof *g->pk);
    if (!g->host || !g->clock_slope || !g->clock_offset || !g->w || !g->voff || !g->vt || !g->vstate ||
        !g->vreason || !g->vin || !g->vout || !g->lfrom || !g->lto || !g->lkind || !g->pk)
        return nomem(err);
    return LP_OK;
}

/* The network links between the parts present, decided as lp_kgraph_build does. */
static uint32_t network_links(lp_kgraph *g, const lp_kmatch *m, const uint32_t *es, const uint32_t *et, uint32_t nl)
{
    for (uint64_t p = 0; p < m->npk; p++) {
        uint32_t s = es[p], t = et[p];
        if (s == LP_NONE32 || t == LP_NONE32 || g->vt[t] <= g->vt[s])
            continue;
        g->lfrom[nl] = s, g->lto[nl] = t, g->lkind[nl] = LP_KL_NETWORK;
        nl++;
    }
    return nl;
}

static lp_status assemble(uint32_t nh, const char *const *names, const lp_dbuf *parts, const lp_kmatch *m, int sync,
                          lp_kgraph *g, uint32_t *es, uint32_t *et, lp_error *err)
{
    psize tot = {0}, sz;
    lp_status st;
    for (uint32_t h = 0; h < nh; h++) {
        if (!parts[h].p)
            continue;
        if ((st = walk(&parts[h], h, NULL, NULL, &sz, NULL, NULL, m->npk, err)))
            return st;
        tot.nw += sz.nw, tot.nv += sz.nv, tot.nl += sz.nl, tot.nk += sz.nk;
    }
    uint32_t maxl = tot.nl + (uint32_t)m->npk;
    if (lp_strtab_init(&g->strs) || (st = alloc_graph(g, nh, &tot, maxl, err)))
        return st ? st : nomem(err);
    g->nhosts = nh, g->synced = sync;
    for (uint32_t h = 0; h < nh; h++) {
        if (lp_strtab_intern(&g->strs, names[h], strlen(names[h]), &g->host[h]))
            return nomem(err);
        g->clock_slope[h] = sync ? m->clock[h].slope : 1.0;
        g->clock_offset[h] = sync ? m->clock[h].offset : 0.0;
    }
    psize at = {0};
    for (uint32_t h = 0; h < nh; h++) {
        if (!parts[h].p)
            continue;
        if ((st = walk(&parts[h], h, g, &at, &sz, es, et, m->npk, err)))
            return st;
        at.nw += sz.nw, at.nv += sz.nv, at.nl += sz.nl, at.nk += sz.nk;
    }
    g->nworkers = tot.nw, g->nv = tot.nv, g->npk = tot.nk;
    g->nlinks = network_links(g, m, es, et, tot.nl);
    memset(g->vin, 0xff, (size_t)(tot.nv ? tot.nv : 1) * 4);
    memset(g->vout, 0xff, (size_t)(tot.nv ? tot.nv : 1) * 4);
    for (uint32_t l = 0; l < g->nlinks; l++) {
        if (g->vin[g->lto[l]] != LP_NONE32 || g->vout[g->lfrom[l]] != LP_NONE32)
            return lp_error_set(err, LP_ERR_FORMAT, "assembled graph: two links at vertex %u", g->lto[l]);
        g->vin[g->lto[l]] = l, g->vout[g->lfrom[l]] = l;
    }
    return lp_kgraph_validate(g, err);
}

lp_status lp_keci_assemble(uint32_t nhosts, const char *const *names, const lp_dbuf *parts, const lp_kmatch *m,
                           int sync, lp_kgraph **out, uint32_t *tv, lp_error *err)
{
    *out = NULL;
    uint64_t npk = m->npk;
    lp_kgraph *g = lp_calloc(1, sizeof *g);
    uint32_t *es = lp_malloc((npk ? npk : 1) * 4), *et = lp_malloc((npk ? npk : 1) * 4);
    lp_status st = !g || !es || !et ? nomem(err) : LP_OK;
    if (!st) {
        memset(es, 0xff, (npk ? npk : 1) * 4);
        memset(et, 0xff, (npk ? npk : 1) * 4);
        st = assemble(nhosts, names, parts, m, sync, g, es, et, err);
    }
    if (!st && tv)
        memcpy(tv, et, npk * 4);
    lp_free(es);
    lp_free(et);
    if (st) {
        if (g && !g->strs.ptr)
            lp_strtab_init(&g->strs);
        lp_kgraph_free(g);
        return st;
    }
    *out = g;
    return LP_OK;
}
