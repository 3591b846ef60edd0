/* kgraph_layout.c: parts of an execution graph under construction (creation order) and
 * their layout into lp_kgraph's worker-major columns (see kgraph_int.h).
 *
 * Appending costs 22 bytes per vertex (time, worker, state, reason, link slots) and 9 per
 * link, grown by 1.5x. Layout is a stable counting sort of the vertices by worker: a
 * worker's vertices were appended in time order, so they stay in time order; it needs a
 * 4-byte permutation per vertex of the part being copied, and frees each part's columns
 * once copied, so the peak is the finished graph plus the largest part. Names are
 * formatted here ("host/comm-tid") and made unique with a "#n" suffix if two workers
 * would share one (counted in stats.nrenamed). Workers without a vertex are dropped.
 */
#include "analysis/kernel/kgraph_int.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <string.h>

void kpart_init(kpart *p, const lp_strtab *strs)
{
    memset(p, 0, sizeof *p);
    p->strs = strs;
}

void kpart_release(kpart *p)
{
    lp_free(p->whost);
    lp_free(p->wtid);
    lp_free(p->wcpu);
    lp_free(p->wcomm);
    lp_free(p->wtail);
    lp_free(p->wcount);
    lp_free(p->vt);
    lp_free(p->vw);
    lp_free(p->vst);
    lp_free(p->vrs);
    lp_free(p->vin);
    lp_free(p->vout);
    lp_free(p->lfrom);
    lp_free(p->lto);
    lp_free(p->lkind);
    const lp_strtab *s = p->strs;
    memset(p, 0, sizeof *p);
    p->strs = s;
}

/* Grow parallel columns to hold `need` elements (capacity *cap, shared). */
static int grow_cols(uint32_t *cap, uint32_t need, void **cols[], const size_t *elem, int ncols)
{
    if (need <= *cap)
        return 0;
    uint64_t nc = *cap ? (uint64_t)*cap + *cap / 2 : 64;
    if (nc < need)
        nc = need;
    if (nc > UINT32_MAX - 1)
        nc = UINT32_MAX - 1;
    for (int i = 0; i < ncols; i++) {
        void *q = lp_reallocarray(*cols[i], (size_t)nc, elem[i]);
        if (!q)
            return -1;
        *cols[i] = q;
    }
    *cap = (uint32_t)nc;
    return 0;
}

uint32_t kpart_worker(kpart *p, uint32_t host, int32_t tid, int32_t cpu, lp_str comm)
{
    if (p->nw >= LP_NONE32 - 1)
        return LP_NONE32;
    void **cols[] = {(void **)&p->whost, (void **)&p->wtid, (void **)&p->wcpu, (void **)&p->wcomm,
                     (void **)&p->wtail, (void **)&p->wcount};
    static const size_t el[] = {4, 4, 4, 4, 4, 4};
    if (grow_cols(&p->capw, p->nw + 1, cols, el, 6))
        return LP_NONE32;
    uint32_t w = p->nw++;
    p->whost[w] = host;
    p->wtid[w] = tid;
    p->wcpu[w] = cpu;
    p->wcomm[w] = comm;
    p->wtail[w] = LP_NONE32;
    p->wcount[w] = 0;
    return w;
}

uint32_t kpart_append(kpart *p, uint32_t w, int64_t t, uint8_t state, uint8_t reason)
{
    if (p->nv >= LP_NONE32 - 1)
        return LP_NONE32;
    void **cols[] = {(void **)&p->vt, (void **)&p->vw, (void **)&p->vst, (void **)&p->vrs,
                     (void **)&p->vin, (void **)&p->vout};
    static const size_t el[] = {8, 4, 1, 1, 4, 4};
    if (grow_cols(&p->capv, p->nv + 1, cols, el, 6))
        return LP_NONE32;
    uint32_t v = p->nv++;
    p->vt[v] = t;
    p->vw[v] = w;
    p->vst[v] = LP_KS_NONE;
    p->vrs[v] = LP_KR_NONE;
    p->vin[v] = p->vout[v] = LP_NONE32;
    uint32_t tail = p->wtail[w];
    if (tail != LP_NONE32) {
        p->vst[tail] = state;
        p->vrs[tail] = state == LP_KS_BLOCKED ? reason : LP_KR_NONE;
    }
    p->wtail[w] = v;
    p->wcount[w]++;
    return v;
}

int kpart_link(kpart *p, uint32_t from, uint32_t to, uint8_t kind)
{
    void **cols[] = {(void **)&p->lfrom, (void **)&p->lto, (void **)&p->lkind};
    static const size_t el[] = {4, 4, 1};
    if (p->nl >= LP_NONE32 - 1 || grow_cols(&p->capl, p->nl + 1, cols, el, 3))
        return -1;
    uint32_t l = p->nl++;
    p->lfrom[l] = from;
    p->lto[l] = to;
    p->lkind[l] = kind;
    p->vout[from] = l;
    p->vin[to] = l;
    return 0;
}

/* ---- layout ---------------------------------------------------------------------- */

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory laying out the execution graph"); }

/* Format a worker's name into buf. */
static void worker_name(const lp_kgraph *g, uint32_t host, int32_t tid, int32_t cpu, const char *comm, char *buf,
                        size_t n)
{
    const char *h = lp_kgraph_str(g, g->host[host]);
    if (tid == 0)
        snprintf(buf, n, "%s/swapper/%d-0", h, cpu);
    else if (tid < 0)
        snprintf(buf, n, "%s/kernel/%d", h, cpu);
    else
        snprintf(buf, n, "%s/%s-%d", h, comm && *comm ? comm : "?", tid);
}

/* A zeroed byte per string id up to `need`, grown by 1.5x. */
static int grow_flags(uint8_t **f, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap + *cap / 2 + 64;
    if (nc < need)
        nc = need;
    uint8_t *q = lp_realloc(*f, nc);
    if (!q)
        return -1;
    memset(q + *cap, 0, nc - *cap);
    *f = q;
    *cap = nc;
    return 0;
}

/* Intern the workers' commands and unique names. */
static lp_status name_workers(lp_kgraph *g, kpart *parts, uint32_t nparts, lp_error *err)
{
    uint8_t *used = NULL; /* by string id: a worker already has this name */
    size_t ucap = 0;
    char buf[512], alt[600];
    uint32_t w = 0;
    for (uint32_t p = 0; p < nparts; p++) {
        for (uint32_t i = 0; i < parts[p].nw; i++, w++) {
            lp_kworker *k = &g->w[w];
            const char *comm = parts[p].wcomm[i] == LP_STR_NONE ? "" : lp_strtab_get(parts[p].strs, parts[p].wcomm[i]);
            if (lp_strtab_intern(&g->strs, comm, strlen(comm), &k->comm))
                goto oom;
            worker_name(g, k->host, k->tid, k->cpu, comm, buf, sizeof buf);
            const char *nm = buf;
            for (unsigned sfx = 2;; sfx++) {
                if (lp_strtab_intern(&g->strs, nm, strlen(nm), &k->name) || grow_flags(&used, &ucap, (size_t)k->name + 1))
                    goto oom;
                if (!used[k->name])
                    break;
                if (sfx == 2)
                    g->st.nrenamed++;
                snprintf(alt, sizeof alt, "%s#%u", buf, sfx);
                nm = alt;
            }
            used[k->name] = 1;
        }
    }
    lp_free(used);
    return LP_OK;
oom:
    lp_free(used);
    return nomem(err);
}

/* Copy one part's vertices to their final places (perm: creation id -> final id). */
static void copy_part(lp_kgraph *g, const kpart *p, uint32_t wbase, uint32_t *fill, uint32_t *perm)
{
    for (uint32_t v = 0; v < p->nv; v++) {
        uint32_t w = wbase + p->vw[v];
        uint32_t f = g->voff[w] + fill[w]++;
        perm[v] = f;
        g->vt[f] = p->vt[v];
        g->vstate[f] = p->vst[v];
        g->vreason[f] = p->vrs[v];
    }
}

static void put_link(lp_kgraph *g, uint32_t l, uint32_t from, uint32_t to, uint8_t kind)
{
    g->lfrom[l] = from;
    g->lto[l] = to;
    g->lkind[l] = kind;
    g->vout[from] = l;
    g->vin[to] = l;
}

/* Drop the part's workers that never got a vertex (seen only in a fork, statedump or
 * exit event: Trace Compass's graph has no such workers either); 0, or -1 on out of
 * memory. */
static int compact_workers(kpart *p)
{
    uint32_t *map = lp_malloc((p->nw ? p->nw : 1) * sizeof *map), n = 0;
    if (!map)
        return -1;
    for (uint32_t w = 0; w < p->nw; w++) {
        map[w] = p->wcount[w] ? n : LP_NONE32;
        if (p->wcount[w]) {
            p->whost[n] = p->whost[w];
            p->wtid[n] = p->wtid[w];
            p->wcpu[n] = p->wcpu[w];
            p->wcomm[n] = p->wcomm[w];
            p->wtail[n] = p->wtail[w];
            p->wcount[n] = p->wcount[w];
            n++;
        }
    }
    for (uint32_t v = 0; v < p->nv; v++)
        p->vw[v] = map[p->vw[v]];
    p->nw = n;
    lp_free(map);
    return 0;
}

lp_status kgraph_layout(lp_kgraph *g, kpart *parts, uint32_t nparts, const kxlink *x, uint64_t nx, uint32_t **perms,
                        lp_error *err)
{
    for (uint32_t p = 0; p < nparts; p++)
        if (compact_workers(&parts[p]))
            return nomem(err);
    uint64_t nw = 0, nv = 0, nl = nx;
    for (uint32_t p = 0; p < nparts; p++) {
        nw += parts[p].nw;
        nv += parts[p].nv;
        nl += parts[p].nl;
    }
    if (nw >= LP_NONE32 || nv >= LP_NONE32 || nl >= LP_NONE32)
        return lp_error_set(err, LP_ERR_LIMIT, "execution graph too large (%llu workers, %llu vertices, %llu links; "
                            "at most 2^32 - 2 each)", (unsigned long long)nw, (unsigned long long)nv,
                            (unsigned long long)nl);
    g->nworkers = (uint32_t)nw;
    g->nv = (uint32_t)nv;
    g->nlinks = (uint32_t)nl;
    g->w = lp_calloc(nw ? nw : 1, sizeof *g->w);
    g->voff = lp_calloc(nw + 1, sizeof *g->voff);
    g->vt = lp_malloc((nv ? nv : 1) * sizeof *g->vt);
    g->vstate = lp_malloc(nv ? nv : 1);
    g->vreason = lp_malloc(nv ? nv : 1);
    g->vin = lp_malloc((nv ? nv : 1) * 4);
    g->vout = lp_malloc((nv ? nv : 1) * 4);
    g->lfrom = lp_malloc((nl ? nl : 1) * 4);
    g->lto = lp_malloc((nl ? nl : 1) * 4);
    g->lkind = lp_malloc(nl ? nl : 1);
    uint32_t *fill = lp_calloc(nw ? nw : 1, 4);
    uint32_t **perm = lp_calloc(nparts ? nparts : 1, sizeof *perm);
    lp_status st = LP_OK;
    if (!g->w || !g->voff || !g->vt || !g->vstate || !g->vreason || !g->vin || !g->vout || !g->lfrom || !g->lto ||
        !g->lkind || !fill || !perm) {
        st = nomem(err);
        goto out;
    }
    memset(g->vin, 0xff, (size_t)nv * 4);
    memset(g->vout, 0xff, (size_t)nv * 4);
    uint32_t w = 0;
    for (uint32_t p = 0; p < nparts; p++)
        for (uint32_t i = 0; i < parts[p].nw; i++, w++) {
            g->w[w].host = parts[p].whost[i];
            g->w[w].tid = parts[p].wtid[i];
            g->w[w].cpu = parts[p].wcpu[i];
            g->voff[w + 1] = g->voff[w] + parts[p].wcount[i];
        }
    if ((st = name_workers(g, parts, nparts, err)))
        goto out;
    uint32_t wbase = 0, l = 0;
    for (uint32_t p = 0; p < nparts; p++) {
        kpart *pp = &parts[p];
        perm[p] = lp_malloc((pp->nv ? pp->nv : 1) * 4);
        if (!perm[p]) {
            st = nomem(err);
            goto out;
        }
        copy_part(g, pp, wbase, fill, perm[p]);
        for (uint32_t k = 0; k < pp->nl; k++, l++)
            put_link(g, l, perm[p][pp->lfrom[k]], perm[p][pp->lto[k]], pp->lkind[k]);
        wbase += pp->nw;
        /* the part's vertex columns are no longer needed (its workers stay for naming) */
        lp_free(pp->vt), pp->vt = NULL;
        lp_free(pp->vst), pp->vst = NULL;
        lp_free(pp->vrs), pp->vrs = NULL;
        lp_free(pp->vin), pp->vin = NULL;
        lp_free(pp->vout), pp->vout = NULL;
    }
    for (uint64_t k = 0; k < nx; k++, l++)
        put_link(g, l, perm[x[k].pfrom][x[k].vfrom], perm[x[k].pto][x[k].vto], x[k].kind);
out:
    if (perm)
        for (uint32_t p = 0; p < nparts; p++) {
            if (perms && !st)
                perms[p] = perm[p];
            else
                lp_free(perm[p]);
        }
    lp_free(perm);
    lp_free(fill);
    return st;
}
