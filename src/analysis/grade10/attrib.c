/* attrib.c: the driver of Grade10's resource attribution (attrib.h): blocking
 * instances, every leaf's active time, one timeline per (consumable resource, host
 * with monitoring), the leaves assigned to timelines by their host with the demand
 * their rule gives them, each timeline built (attrib_tl.c, one thread per timeline
 * through base/pool), per-type totals; and the accessors of the result.
 *
 * A leaf without a host goes to the resource's only timeline when there is exactly
 * one; otherwise it, like a leaf on a host without monitoring, gets no attribution
 * (counted and reported once). Results never depend on the thread count: each
 * timeline writes only its own phases' uses and its own totals, merged in order.
 */
#include "analysis/grade10/g10_int.h"
#include "longpole/base/alloc.h"
#include "base/pool.h"

#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

void lp_g10_attr_free(lp_g10_attr *a)
{
    if (!a)
        return;
    for (uint32_t k = 0; k < a->ntl; k++) {
        lp_g10_tl *tl = &a->tl[k];
        if (!tl->bound_shared)
            lp_free(tl->bound);
        lp_free(tl->E), lp_free(tl->V), lp_free(tl->u), lp_free(tl->x), lp_free(tl->f);
    }
    lp_free(a->tl);
    for (uint32_t g = 0; g < a->nblk; g++)
        lp_free(a->blk[g].s), lp_free(a->blk[g].e), lp_free(a->blk[g].scope);
    lp_free(a->blk);
    for (uint32_t r = 0; a->use && r < a->m->nres; r++)
        lp_free(a->use[r]);
    lp_free(a->use);
    lp_free(a->nuse);
    lp_free(a->pblk_first);
    lp_free(a->pblk);
    lp_free(a->active_ns);
    lp_free(a->pfirst);
    lp_free(a->ps);
    lp_free(a->pe);
    lp_free(a->tstat);
    lp_strtab_release(&a->strs);
    lp_free(a);
}

uint32_t *g10_type_rows(const lp_g10_model *m, int which)
{
    size_t w = (size_t)m->nres + 1;
    uint32_t *rows = lp_malloc(((size_t)m->ntypes * w + 1) * sizeof *rows);
    for (uint32_t t = 0; rows && t < m->ntypes; t++) {
        uint32_t *row = rows + t * w;
        row[0] = 0;
        for (uint32_t r = 0; r < m->nres; r++) {
            uint8_t k = m->rkind[(size_t)t * m->nres + r];
            if (m->res[r].kind == LP_G10_BLOCKING ? (which & G10_ROWS_BLOCKING) && k == LP_G10_RULE_FULL
                                                  : (which & G10_ROWS_CONSUMABLE) && k != LP_G10_RULE_NONE)
                row[1 + row[0]++] = r;
        }
    }
    return rows;
}

/* Active time of every leaf; blocking uses. */
static lp_status leaves(lp_g10_attr *a, lp_diags *ds, lp_error *err)
{
    const lp_g10_exec *x = a->x;
    const lp_g10_model *m = a->m;
    g10_pieces pc = {0};
    lp_status st = LP_OK;
    size_t cap = 0, np = 0;
    uint32_t *rows = g10_type_rows(m, G10_ROWS_BLOCKING);
    if (!rows || !(a->active_ns = lp_calloc(x->n, sizeof *a->active_ns)) ||
        !(a->pfirst = lp_calloc((size_t)x->n + 1, sizeof *a->pfirst))) {
        lp_free(rows);
        return nomem(err);
    }
    if (x->nleaves) { /* one piece a leaf, usually: sized once (a copy at every doubling touches twice the memory) */
        if (!(a->ps = lp_malloc(x->nleaves * sizeof *a->ps)) || !(a->pe = lp_malloc(x->nleaves * sizeof *a->pe)))
            st = nomem(err);
        cap = st ? 0 : x->nleaves;
    }
    for (uint32_t p = 0; p < x->n && !st; p++) {
        a->pfirst[p] = (uint32_t)np;
        if (!lp_g10_is_leaf(x, p))
            continue;
        int wid;
        if ((st = g10_pieces_of(a, p, &pc, &wid, err)))
            break;
        a->widened += wid;
        if (np + pc.n > UINT32_MAX - 1) {
            st = lp_error_set(err, LP_ERR_LIMIT, "more than 2^32 active pieces");
            break;
        }
        if (np + pc.n > cap) {
            size_t c = cap ? 2 * cap : 1024;
            while (c < np + pc.n)
                c *= 2;
            int64_t *ns = lp_reallocarray(a->ps, c, sizeof *ns), *ne;
            if (!ns) {
                st = nomem(err);
                break;
            }
            a->ps = ns;
            if (!(ne = lp_reallocarray(a->pe, c, sizeof *ne))) {
                st = nomem(err);
                break;
            }
            a->pe = ne;
            cap = c;
        }
        for (size_t k = 0; k < pc.n; k++) {
            a->ps[np] = pc.s[k], a->pe[np++] = pc.e[k];
            a->active_ns[p] += pc.e[k] - pc.s[k];
        }
        const uint32_t *row = rows + (size_t)x->type[p] * (m->nres + 1);
        for (uint32_t i = 1; i <= row[0] && !st; i++) {
            uint32_t r = row[i];
            int64_t b = 0;
            if (a->pblk_first[p + 1] > a->pblk_first[p])
                st = g10_blocked_ns(a, p, r, &pc, &b, err);
            lp_g10_use *u = &a->use[r][a->nuse[r]++];
            *u = (lp_g10_use){p, LP_G10_NONE, 0, b};
            lp_g10_tstat *ts = &a->tstat[(size_t)x->type[p] * m->nres + r];
            ts->phases++;
            ts->active_ns += a->active_ns[p];
            ts->bn_ns += b;
        }
    }
    a->pfirst[x->n] = (uint32_t)np;
    if (!st && !a->ps) { /* no pieces at all: keep the pointers valid */
        a->ps = lp_malloc(sizeof *a->ps);
        a->pe = lp_malloc(sizeof *a->pe);
        if (!a->ps || !a->pe)
            st = nomem(err);
    }
    g10_pieces_release(&pc);
    lp_free(rows);
    if (!st && a->widened)
        lp_diags_report(ds, LP_SEV_NOTE, LP_RULE_IMPORT, NULL, 0,
                        "%llu phases shorter than half a slice (%lld ns) were widened to the one slice holding their midpoint",
                        (unsigned long long)a->widened, (long long)a->slice_ns);
    return st;
}

/* Room for the uses of every resource (leaves whose rule is not None). */
static lp_status alloc_uses(lp_g10_attr *a, lp_error *err)
{
    const lp_g10_model *m = a->m;
    const lp_g10_exec *x = a->x;
    a->use = lp_calloc(m->nres ? m->nres : 1, sizeof *a->use);
    a->nuse = lp_calloc(m->nres ? m->nres : 1, sizeof *a->nuse);
    size_t *cnt = lp_calloc(m->nres ? m->nres : 1, sizeof *cnt);
    if (!a->use || !a->nuse || !cnt) {
        lp_free(cnt);
        return nomem(err);
    }
    for (uint32_t p = 0; p < x->n; p++)
        if (lp_g10_is_leaf(x, p))
            for (uint32_t r = 0; r < m->nres; r++)
                cnt[r] += m->rkind[(size_t)x->type[p] * m->nres + r] != LP_G10_RULE_NONE;
    for (uint32_t r = 0; r < m->nres; r++)
        if (!(a->use[r] = lp_malloc(cnt[r] * sizeof *a->use[r] + 1))) {
            lp_free(cnt);
            return nomem(err);
        }
    lp_free(cnt);
    return LP_OK;
}

typedef struct plan {
    const lp_g10_series **series; /* [ntl] */
    const lp_g10_series **delay;  /* [ntl] the resource's delay= series on the same host, or NULL */
    g10_tlphases *ph;             /* [ntl] */
    lp_hmap idx;                  /* res << 32 | host (a->strs) -> timeline */
    uint32_t *only;               /* [nres]: the resource's only timeline, or LP_G10_NONE */
} plan;

/* The series of resource r's delay= metric on host h (of d's string table), or NULL. */
static const lp_g10_series *delay_series(const lp_g10_model *m, uint32_t r, const lp_g10_data *d, lp_str h)
{
    if (m->res[r].delay == LP_STR_NONE)
        return NULL;
    const char *metric = lp_g10_model_str(m, m->res[r].delay);
    for (size_t i = 0; i < d->nseries; i++)
        if (d->series[i].host == h && strcmp(lp_strtab_get(&d->strs, d->series[i].metric), metric) == 0)
            return &d->series[i];
    return NULL;
}

/* One timeline per (consumable resource, monitored host). */
static lp_status timelines(lp_g10_attr *a, const lp_g10_data *d, plan *pl, lp_error *err)
{
    const lp_g10_model *m = a->m;
    size_t cap = 0, capser = 0, capdel = 0;
    lp_status st = LP_OK;
    if (!(pl->only = lp_malloc((m->nres ? m->nres : 1) * sizeof *pl->only)))
        return nomem(err);
    for (uint32_t r = 0; r < m->nres && !st; r++) {
        pl->only[r] = LP_G10_NONE;
        if (m->res[r].kind != LP_G10_CONSUMABLE)
            continue;
        const char *metric = lp_g10_model_str(m, m->res[r].metric);
        uint32_t count = 0;
        for (size_t i = 0; i < d->nseries && !st; i++) {
            const lp_g10_series *s = &d->series[i];
            if (strcmp(lp_strtab_get(&d->strs, s->metric), metric) != 0)
                continue;
            const char *host = lp_strtab_get(&d->strs, s->host);
            lp_str h;
            if (lp_strtab_intern(&a->strs, host, strlen(host), &h) ||
                lp_grow_at(&a->tl, &cap, a->ntl + 1, sizeof *a->tl) ||
                lp_grow_at(&pl->series, &capser, a->ntl + 1, sizeof *pl->series) ||
                lp_grow_at(&pl->delay, &capdel, a->ntl + 1, sizeof *pl->delay))
                return nomem(err);
            lp_g10_tl *tl = &a->tl[a->ntl];
            memset(tl, 0, sizeof *tl);
            tl->res = r;
            tl->host = h;
            tl->capacity = lp_g10_model_capacity(m, r, host);
            pl->series[a->ntl] = s;
            pl->delay[a->ntl] = delay_series(m, r, d, s->host);
            st = lp_hmap_put(&pl->idx, (uint64_t)r << 32 | h, a->ntl, err);
            pl->only[r] = count++ ? LP_G10_NONE - 1 : a->ntl;
            a->ntl++;
        }
        if (pl->only[r] == LP_G10_NONE - 1)
            pl->only[r] = LP_G10_NONE;
    }
    if (!st && !(pl->ph = lp_calloc(a->ntl + 1, sizeof *pl->ph)))
        st = nomem(err);
    return st;
}

/* The timeline of every (exec host, resource): tab[h * nres + r] for h < nhosts, and
 * tab[nhosts * nres + r] for a leaf without a host (the resource's only timeline). */
static uint32_t *timeline_table(lp_g10_attr *a, const plan *pl)
{
    const lp_g10_model *m = a->m;
    const lp_g10_exec *x = a->x;
    uint32_t *tab = lp_malloc(((size_t)x->nhosts + 1) * m->nres * sizeof *tab + 1);
    if (!tab)
        return NULL;
    for (uint32_t h = 0; h <= x->nhosts; h++) {
        lp_str hs = LP_STR_NONE;
        if (h < x->nhosts) {
            const char *hn = lp_g10_exec_str(x, x->hosts[h]);
            hs = lp_strtab_find(&a->strs, hn, strlen(hn));
        }
        for (uint32_t r = 0; r < m->nres; r++) {
            uint64_t k = LP_G10_NONE;
            if (h == x->nhosts)
                k = pl->only[r];
            else if (hs == LP_STR_NONE || !lp_hmap_get(&pl->idx, (uint64_t)r << 32 | hs, &k))
                k = LP_G10_NONE;
            tab[(size_t)h * m->nres + r] = (uint32_t)k;
        }
    }
    return tab;
}

/* A leaf's use of consumable r with no timeline: its totals, and the report. */
static lp_status unmonitored(lp_g10_attr *a, uint32_t p, uint32_t r, lp_hmap *missing, lp_diags *ds, lp_error *err)
{
    const lp_g10_model *m = a->m;
    const lp_g10_exec *x = a->x;
    lp_g10_tstat *ts = &a->tstat[(size_t)x->type[p] * m->nres + r];
    ts->phases++;
    ts->active_ns += a->active_ns[p];
    if (x->host[p] == LP_G10_NONE) {
        a->no_host++;
        return LP_OK;
    }
    int added;
    if (lp_hmap_get_or_put(missing, (uint64_t)r << 32 | x->host[p], 1, &added) == LP_HMAP_EMPTY)
        return nomem(err);
    if (added && a->unmonitored++ < G10_KEEP)
        lp_diags_report(ds, LP_SEV_WARNING, LP_RULE_IMPORT, NULL, 0,
                        "no monitoring of '%s' (metric %s) on host '%s': its phases get no usage",
                        lp_g10_model_str(m, m->res[r].name), lp_g10_model_str(m, m->res[r].metric),
                        lp_g10_exec_str(x, x->hosts[x->host[p]]));
    return LP_OK;
}

/* Every leaf with an Exact or Variable rule onto the timeline of its host: the leaves
 * of each timeline counted first, then listed in arrays of exactly that size. */
static lp_status assign(lp_g10_attr *a, plan *pl, lp_diags *ds, lp_error *err)
{
    const lp_g10_model *m = a->m;
    const lp_g10_exec *x = a->x;
    lp_hmap missing = {0};
    lp_status st = LP_OK;
    uint32_t *tab = timeline_table(a, pl), *rows = g10_type_rows(m, G10_ROWS_CONSUMABLE);
    if (!tab || !rows) {
        lp_free(tab), lp_free(rows);
        return nomem(err);
    }
    for (int fill = 0; fill < 2 && !st; fill++) {
        for (uint32_t k = 0; fill && k < a->ntl && !st; k++) {
            g10_tlphases *ph = &pl->ph[k];
            if (!(ph->phase = lp_malloc(ph->cap * sizeof *ph->phase + 1)) ||
                !(ph->slot = lp_malloc(ph->cap * sizeof *ph->slot + 1)))
                st = nomem(err);
        }
        for (uint32_t p = 0; p < x->n && !st; p++) {
            if (!lp_g10_is_leaf(x, p))
                continue;
            const uint32_t *row = tab + (size_t)(x->host[p] == LP_G10_NONE ? x->nhosts : x->host[p]) * m->nres;
            const uint32_t *rr = rows + (size_t)x->type[p] * (m->nres + 1);
            for (uint32_t i = 1; i <= rr[0] && !st; i++) {
                uint32_t r = rr[i], k = row[r];
                if (!fill) {
                    pl->ph[k == LP_G10_NONE ? 0 : k].cap += k != LP_G10_NONE;
                    continue;
                }
                uint32_t slot = (uint32_t)a->nuse[r]++;
                if (k == LP_G10_NONE) {
                    a->use[r][slot] = (lp_g10_use){p, LP_G10_NONE, 0, 0};
                    st = unmonitored(a, p, r, &missing, ds, err);
                    continue;
                }
                g10_tlphases *ph = &pl->ph[k];
                ph->phase[ph->n] = p;
                ph->slot[ph->n++] = slot;
            }
        }
    }
    lp_hmap_release(&missing);
    lp_free(tab), lp_free(rows);
    if (!st && a->no_host)
        lp_diags_report(ds, LP_SEV_WARNING, LP_RULE_IMPORT, NULL, 0,
                        "%llu (phase, resource) pairs have no host and the resource is not monitored on exactly one "
                        "host: they get no usage (give its monitoring, or name the host with the model's host-key)",
                        (unsigned long long)a->no_host);
    return st;
}

typedef struct tljob {
    lp_g10_attr *a;
    plan *pl;
    const lp_g10_data *d;
    lp_diags *ds;
    lp_g10_tstat *ts;       /* [ntl * ntypes] */
    lp_status *st;          /* [ntl] */
    lp_error *errs;         /* [ntl] */
    lp_diags *tds;          /* [ntl] per-timeline diagnostics, merged in order */
} tljob;

/* Part `tid` of n of the timelines (a pool task; failures are kept per timeline). */
static lp_status tl_run(void *ctx, size_t tid, size_t n, lp_error *err)
{
    (void)err;
    tljob *j = ctx;
    uint32_t nt = j->a->m->ntypes;
    g10_scratch sc;
    memset(&sc, 0, sizeof sc);
    for (uint32_t k = (uint32_t)tid; k < j->a->ntl; k += (uint32_t)n)
        j->st[k] = g10_tl_build(j->a, k, j->pl->series[k], j->pl->delay[k], j->d, &j->pl->ph[k], &j->tds[k], j->ts + (size_t)k * nt,
                                &sc, &j->errs[k]);
    g10_scratch_release(&sc);
    return LP_OK;
}

static void replay_diags(lp_diags *to, const lp_diags *from)
{
    for (size_t i = 0; i < from->nkept; i++) {
        const lp_diag *dg = &from->kept[i];
        lp_diags_report(to, dg->sev, dg->rule, dg->file, dg->line, "%s", dg->msg);
    }
}

/* Build every timeline (in parallel), then merge totals and diagnostics in order. */
static lp_status build_all(lp_g10_attr *a, plan *pl, const lp_g10_data *d, lp_diags *ds, unsigned threads,
                           lp_error *err)
{
    uint32_t nt = a->m->ntypes, ntl = a->ntl;
    tljob j = {a, pl, d, ds, lp_calloc((size_t)ntl * nt + 1, sizeof *j.ts), lp_calloc(ntl + 1, sizeof *j.st),
               lp_calloc(ntl + 1, sizeof *j.errs), lp_calloc(ntl + 1, sizeof *j.tds)};
    lp_status st = LP_OK;
    if (!j.ts || !j.st || !j.errs || !j.tds) {
        st = nomem(err);
        goto out;
    }
    for (uint32_t k = 0; k < ntl; k++)
        lp_diags_init(&j.tds[k], G10_KEEP * 2);
    unsigned n = lp_pool_threads(threads, ntl ? ntl : 1);
    lp_pool *pool = NULL;
    lp_pool_new(&pool, n - 1, NULL); /* without it, the timelines are built here */
    lp_pool_run(pool, n, tl_run, &j, NULL);
    lp_pool_free(pool);
    for (uint32_t k = 0; k < ntl; k++) {
        replay_diags(ds, &j.tds[k]);
        if (j.st[k] && !st) {
            st = j.st[k];
            if (err)
                *err = j.errs[k];
        }
        for (uint32_t t = 0; t < nt; t++) {
            const lp_g10_tstat *s = &j.ts[(size_t)k * nt + t];
            lp_g10_tstat *o = &a->tstat[(size_t)t * a->m->nres + a->tl[k].res];
            o->phases += s->phases, o->active_ns += s->active_ns, o->used += s->used, o->bn_ns += s->bn_ns;
            o->bn_global_ns += s->bn_global_ns, o->bn_local_ns += s->bn_local_ns;
        }
    }
out:
    for (uint32_t k = 0; j.tds && k < ntl; k++)
        lp_diags_release(&j.tds[k]);
    lp_free(j.ts), lp_free(j.st), lp_free(j.errs), lp_free(j.tds);
    return st;
}

static void plan_release(plan *pl, uint32_t ntl)
{
    for (uint32_t k = 0; pl->ph && k < ntl; k++) {
        g10_tlphases *ph = &pl->ph[k];
        lp_free(ph->phase), lp_free(ph->slot);
    }
    lp_free(pl->ph);
    lp_free(pl->series);
    lp_free(pl->delay);
    lp_free(pl->only);
    lp_hmap_release(&pl->idx);
}

/* The one host every monitoring series and blocking interval names, if there is one. */
static lp_status only_host(lp_g10_attr *a, const lp_g10_data *d, lp_error *err)
{
    lp_str h = LP_STR_NONE;
    int several = 0;
    for (size_t i = 0; i < d->nseries && !several; i++)
        several = h != LP_STR_NONE && h != d->series[i].host, h = d->series[i].host;
    for (size_t i = 0; i < d->nblk && !several; i++)
        if (d->blk[i].host != LP_STR_EMPTY)
            several = h != LP_STR_NONE && h != d->blk[i].host, h = d->blk[i].host;
    a->only_host = LP_STR_NONE;
    if (several || h == LP_STR_NONE)
        return LP_OK;
    if (lp_strtab_intern(&a->strs, lp_strtab_get(&d->strs, h), lp_strtab_len(&d->strs, h), &a->only_host))
        return nomem(err);
    return LP_OK;
}

lp_status lp_g10_attribute(const lp_g10_model *m, const lp_g10_exec *x, const lp_g10_data *d, const lp_g10_opts *o,
                           lp_diags *ds, lp_g10_attr **out, lp_error *err)
{
    *out = NULL;
    if (x->m != m)
        return lp_error_set(err, LP_ERR_ARG, "the phase instances were built with another model");
    lp_g10_attr *a = lp_calloc(1, sizeof *a);
    if (!a || lp_strtab_init(&a->strs)) {
        lp_free(a);
        return nomem(err);
    }
    a->m = m;
    a->x = x;
    a->mode = o && o->mode == LP_G10_EVENTS ? LP_G10_EVENTS : LP_G10_SLICES;
    a->slice_ns = o && o->slice_ns > 0 ? o->slice_ns : m->slice_ns;
    a->origin = 0; /* the first sample of the monitoring: the slice grid's origin */
    for (size_t i = 0, first = 1; i < d->nseries; i++)
        if (d->series[i].n && (first || d->series[i].time[0] < a->origin))
            a->origin = d->series[i].time[0], first = 0;
    plan pl = {0};
    lp_status st = LP_OK;
    if (!(a->tstat = lp_calloc((size_t)m->ntypes * (m->nres ? m->nres : 1), sizeof *a->tstat)))
        st = nomem(err);
    if (!st)
        st = only_host(a, d, err);
    if (!st)
        st = g10_blocking_build(a, d, ds, err);
    if (!st)
        st = alloc_uses(a, err);
    if (!st)
        st = leaves(a, ds, err);
    if (!st)
        st = timelines(a, d, &pl, err);
    if (!st)
        st = assign(a, &pl, ds, err);
    if (!st)
        st = build_all(a, &pl, d, ds, o ? o->threads : 0, err);
    plan_release(&pl, a->ntl);
    if (st) {
        lp_g10_attr_free(a);
        return st;
    }
    *out = a;
    return LP_OK;
}
