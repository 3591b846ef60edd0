/* kgraph.c: the execution graph's lifecycle, lookups and invariant check (kgraph.h).
 *
 * lp_kgraph_validate is the one statement of the graph's invariants: the index reader
 * runs it on every file it maps (nothing in a file is trusted), and the tests run it on
 * every graph they build. It is one pass over the workers, vertices and links.
 */
#include "longpole/analysis/kernel/kgraph.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const char *const state_names[LP_KS_COUNT] = {"none", "running", "preempted", "wait-cpu", "blocked", "unknown"};
static const char *const reason_names[LP_KR_COUNT] = {"",       "timer", "block-device", "network", "ipi",
                                                      "interrupted", "thread", "irq", "softirq", "unknown"};
static const char *const link_names[LP_KL_COUNT] = {"wakeup", "fork", "network", "timer"};

const char *lp_kstate_name(unsigned state) { return state < LP_KS_COUNT ? state_names[state] : "?"; }
const char *lp_kreason_name(unsigned reason) { return reason < LP_KR_COUNT ? reason_names[reason] : "?"; }
const char *lp_klink_name(unsigned kind) { return kind < LP_KL_COUNT ? link_names[kind] : "?"; }

/* Is p inside the mapped file (then it is not ours to free)? */
static int mapped(const lp_kgraph *g, const void *p)
{
    const char *m = g->map;
    return m && (const char *)p >= m && (const char *)p < m + g->maplen;
}

static void release_col(const lp_kgraph *g, void *p)
{
    if (!mapped(g, p))
        lp_free(p);
}

void lp_kgraph_free(lp_kgraph *g)
{
    if (!g)
        return;
    void *cols[] = {g->host, g->clock_slope, g->clock_offset, g->w, g->voff, g->vt, g->vstate, g->vreason,
                    g->vin, g->vout, g->lfrom, g->lto, g->lkind, g->pk};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        release_col(g, cols[i]);
    lp_strtab_release(&g->strs);
    if (g->map)
        munmap(g->map, g->maplen);
    lp_free(g);
}

uint32_t lp_kgraph_vworker(const lp_kgraph *g, uint32_t v)
{
    uint32_t lo = 0, hi = g->nworkers; /* voff[lo] <= v < voff[hi] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->voff[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    /* skip empty workers that share the offset */
    while (lo + 1 < g->nworkers && g->voff[lo + 1] <= v)
        lo++;
    return lo;
}

size_t lp_kgraph_footprint(const lp_kgraph *g)
{
    size_t n = lp_strtab_footprint(&g->strs);
    const struct {
        const void *p;
        size_t bytes;
    } cols[] = {
        {g->host, (size_t)g->nhosts * 4},       {g->clock_slope, (size_t)g->nhosts * 8},
        {g->clock_offset, (size_t)g->nhosts * 8}, {g->w, (size_t)g->nworkers * sizeof(lp_kworker)},
        {g->voff, ((size_t)g->nworkers + 1) * 4}, {g->vt, (size_t)g->nv * 8},
        {g->vstate, g->nv},                     {g->vreason, g->nv},
        {g->vin, (size_t)g->nv * 4},            {g->vout, (size_t)g->nv * 4},
        {g->lfrom, (size_t)g->nlinks * 4},      {g->lto, (size_t)g->nlinks * 4},
        {g->lkind, g->nlinks},                  {g->pk, (size_t)g->npk * sizeof(lp_kpktkey)},
    };
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        if (!mapped(g, cols[i].p))
            n += cols[i].bytes;
    return n;
}

/* ---- invariants -------------------------------------------------------------------- */

#define BAD(...) lp_error_set(err, LP_ERR_FORMAT, __VA_ARGS__)

/* Any vertex of [a, b) with a bad state or reason, or a time going back? */
static int bad_vertices(const lp_kgraph *g, uint32_t a, uint32_t b)
{
    unsigned bad = 0;
    for (uint32_t v = a; v < b; v++) {
        unsigned st = g->vstate[v], rs = g->vreason[v];
        bad |= (st >= LP_KS_COUNT) | (rs >= LP_KR_COUNT) | ((st == LP_KS_BLOCKED) ^ (rs != LP_KR_NONE));
    }
    for (uint32_t v = a; v + 1 < b; v++)
        bad |= g->vt[v + 1] < g->vt[v];
    return bad != 0;
}

static lp_status check_workers(const lp_kgraph *g, lp_error *err)
{
    if (g->voff[0] != 0 || g->voff[g->nworkers] != g->nv)
        return BAD("vertex offsets do not cover the %u vertices", g->nv);
    for (uint32_t w = 0; w < g->nworkers; w++) /* before any vertex is read */
        if (g->voff[w + 1] < g->voff[w])
            return BAD("worker %u: vertex offsets decrease", w);
    for (uint32_t i = 0; i < g->nhosts; i++)
        if (g->host[i] >= g->strs.n)
            return BAD("host %u: bad name id %u", i, g->host[i]);
    for (uint32_t w = 0; w < g->nworkers; w++) {
        const lp_kworker *k = &g->w[w];
        if (k->host >= g->nhosts || k->comm >= g->strs.n || k->name >= g->strs.n)
            return BAD("worker %u: bad host, command or name id", w);
        if (k->tid < -1 || (k->tid <= 0) != (k->cpu >= 0))
            return BAD("worker %u: tid %d and cpu %d do not agree", w, k->tid, k->cpu);
        uint32_t a = g->voff[w], b = g->voff[w + 1];
        if (bad_vertices(g, a, b)) /* branch-free scan; on failure find and name the vertex */
            for (uint32_t v = a; v < b; v++) {
                uint8_t st = g->vstate[v], rs = g->vreason[v];
                if (st >= LP_KS_COUNT || rs >= LP_KR_COUNT || (st == LP_KS_BLOCKED) != (rs != LP_KR_NONE))
                    return BAD("vertex %u (worker %u): bad state %u / reason %u", v, w, st, rs);
                if (v + 1 < b && g->vt[v + 1] < g->vt[v])
                    return BAD("vertex %u (worker %u): time goes back (%lld after %lld)", v + 1, w,
                               (long long)g->vt[v + 1], (long long)g->vt[v]);
            }
        if (b > a && g->vstate[b - 1] != LP_KS_NONE)
            return BAD("vertex %u: the last vertex of worker %u has an outgoing edge", b - 1, w);
    }
    /* names are unique: each name id at most once */
    uint8_t *seen = lp_calloc(g->strs.n ? g->strs.n : 1, 1);
    if (!seen)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint32_t w = 0; w < g->nworkers; w++) {
        if (seen[g->w[w].name]++) {
            lp_free(seen);
            return BAD("worker %u: name '%s' is not unique", w, lp_kgraph_worker_name(g, w));
        }
    }
    lp_free(seen);
    return LP_OK;
}

static lp_status check_links(const lp_kgraph *g, lp_error *err)
{
    for (uint32_t l = 0; l < g->nlinks; l++) {
        uint32_t a = g->lfrom[l], b = g->lto[l];
        if (a >= g->nv || b >= g->nv || g->lkind[l] >= LP_KL_COUNT)
            return BAD("link %u: bad vertex or kind", l);
        if (g->vout[a] != l || g->vin[b] != l)
            return BAD("link %u: its vertices do not name it", l);
        if (g->vt[b] < g->vt[a])
            return BAD("link %u: runs back in time (%lld to %lld)", l, (long long)g->vt[a], (long long)g->vt[b]);
    }
    /* each link claims its two vertices (so no two share one); if exactly nlinks
     * vertices name an incoming (outgoing) link, those are the claimed ones: no other
     * vertex names a link. A sequential count instead of a lookup per vertex. */
    uint64_t nin = 0, nout = 0;
    for (uint32_t v = 0; v < g->nv; v++) {
        nin += g->vin[v] != LP_NONE32;
        nout += g->vout[v] != LP_NONE32;
    }
    if (nin != g->nlinks || nout != g->nlinks)
        return BAD("%llu vertices name an incoming and %llu an outgoing link, for %u links", (unsigned long long)nin,
                   (unsigned long long)nout, g->nlinks);
    for (uint64_t i = 0; i < g->npk; i++) {
        const lp_kpktkey *k = &g->pk[i];
        if (k->host >= g->nhosts || (k->vertex != LP_NONE32 && k->vertex >= g->nv) || k->dir > 1)
            return BAD("packet key %llu: bad host, vertex or direction", (unsigned long long)i);
    }
    return LP_OK;
}

lp_status lp_kgraph_validate(const lp_kgraph *g, lp_error *err)
{
    lp_status st = check_workers(g, err);
    return st ? st : check_links(g, err);
}

/* ---- finding a thread ---------------------------------------------------------------- */

static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

lp_status lp_kgraph_find_thread(const lp_kgraph *g, const char *thread, const char *host, uint32_t *out,
                                lp_error *err)
{
    if (!thread || !*thread)
        return lp_error_set(err, LP_ERR_ARG, "no thread given");
    int bytid = all_digits(thread), byname = strchr(thread, '/') != NULL;
    long tid = bytid ? strtol(thread, NULL, 10) : -2;
    size_t tlen = strlen(thread);
    uint8_t *hostok = NULL; /* [nhosts] the host is `host` (each host name compared once) */
    if (host) {
        hostok = lp_calloc(g->nhosts ? g->nhosts : 1, 1);
        if (!hostok)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        for (uint32_t h = 0; h < g->nhosts; h++)
            hostok[h] = strcmp(lp_kgraph_str(g, g->host[h]), host) == 0;
    }
    uint32_t found[5], nfound = 0;
    for (uint32_t w = 0; w < g->nworkers; w++) {
        const lp_kworker *k = &g->w[w];
        if (hostok && !hostok[k->host])
            continue;
        lp_str name = byname ? k->name : k->comm; /* lengths first: most names differ in it */
        int hit = bytid ? (long)k->tid == tid
                        : g->strs.len[name] == tlen && memcmp(lp_kgraph_str(g, name), thread, tlen) == 0;
        if (hit) {
            if (nfound < 5)
                found[nfound] = w;
            nfound++;
        }
    }
    lp_free(hostok);
    if (nfound == 1) {
        *out = found[0];
        return LP_OK;
    }
    if (!nfound)
        return lp_error_set(err, LP_ERR_ARG, "no thread '%s'%s%s in the execution graph", thread,
                            host ? " on host " : "", host ? host : "");
    char list[400];
    size_t len = 0;
    list[0] = 0;
    for (uint32_t i = 0; i < nfound && i < 5 && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", lp_kgraph_worker_name(g, found[i]));
    return lp_error_set(err, LP_ERR_ARG, "thread '%s' is ambiguous: %u threads match (%s%s); name one fully "
                        "(host/comm-tid) or give the host", thread, nfound, list, nfound > 5 ? ", ..." : "");
}
