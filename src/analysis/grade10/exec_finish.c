/* exec_finish.c: the phase instances collected by exec_build.c made into an
 * lp_g10_exec (exec.h): bounds checked (a start without an end and the reverse are
 * reported with their file and line and dropped; end before start likewise), bounds
 * derived from children where an instance has no record of its own (or lost it),
 * instances with neither removed, the tree laid out in depth-first preorder with
 * children in order of start, hosts assigned, and children outside a recorded parent
 * and overlapping instances of a sequential type reported. O(n log n) for the sorts.
 */
#include "analysis/grade10/g10_int.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEEP 20 /* reports of one kind kept in full, the rest counted */
#define SPAN_MAX ((int64_t)1 << 62) /* longest phase (146 years): replay sums stay in range */

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

/* Check bounds and derive the missing ones, children before parents (reverse
 * creation order). valid[i] set for instances that stay. */
static void bounds(g10_xb *b, uint8_t *valid, uint8_t *derived, int64_t *cmin, int64_t *cmax)
{
    char name[256];
    for (uint32_t i = 0; i < b->n; i++)
        cmin[i] = INT64_MAX, cmax[i] = INT64_MIN;
    for (uint32_t i = b->n; i-- > 0;) {
        int rec = b->has[i] == (XB_START | XB_END);
        int64_t span;
        if (rec && b->end[i] >= b->start[i] && (__builtin_sub_overflow(b->end[i], b->start[i], &span) || span > SPAN_MAX)) {
            lp_diags_report(b->ds, LP_SEV_ERROR, LP_RULE_FIELD, lp_strtab_get(&b->x->strs, b->efile[i]), b->eline[i],
                            "phase %s lasts longer than 2^62 ns: dropped", g10_xb_name(b, i, name, sizeof name));
            b->x->dropped++;
            rec = 0;
            b->has[i] = 0;
        }
        const char *sf = lp_strtab_get(&b->x->strs, b->sfile[i]), *ef = lp_strtab_get(&b->x->strs, b->efile[i]);
        int kids = cmin[i] <= cmax[i];
        if (rec && b->end[i] < b->start[i]) {
            lp_diags_report(b->ds, LP_SEV_ERROR, LP_RULE_END_BEFORE_START, ef, b->eline[i],
                            "phase %s ends (%lld) before it starts (%lld, %s:%llu): dropped%s",
                            g10_xb_name(b, i, name, sizeof name), (long long)b->end[i], (long long)b->start[i], sf,
                            (unsigned long long)b->sline[i], kids ? "; bounds taken from its children" : "");
            b->x->dropped++;
            rec = 0;
        } else if (b->has[i] == XB_START) {
            lp_diags_report(b->ds, LP_SEV_ERROR, LP_RULE_UNMATCHED, sf, b->sline[i],
                            "phase %s started here and never ended: dropped%s", g10_xb_name(b, i, name, sizeof name),
                            kids ? "; bounds taken from its children" : "");
            b->x->unmatched++, b->x->dropped++;
        } else if (b->has[i] == XB_END) {
            lp_diags_report(b->ds, LP_SEV_ERROR, LP_RULE_UNMATCHED, ef, b->eline[i],
                            "phase %s ended here but never started: dropped%s", g10_xb_name(b, i, name, sizeof name),
                            kids ? "; bounds taken from its children" : "");
            b->x->unmatched++, b->x->dropped++;
        }
        valid[i] = 1;
        derived[i] = 0;
        if (rec) {
            cmin[i] = b->start[i];
            cmax[i] = b->end[i];
        } else if (kids) {
            derived[i] = 1;
        } else {
            valid[i] = 0;
            continue;
        }
        uint32_t p = b->parent[i];
        if (p != LP_G10_NONE) {
            if (cmin[i] < cmin[p])
                cmin[p] = cmin[i];
            if (cmax[i] > cmax[p])
                cmax[p] = cmax[i];
        }
    }
}

typedef struct kid {
    int64_t start;
    uint32_t i;
} kid;

static int cmp_kid(const void *a, const void *b)
{
    const kid *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Depth-first preorder of the valid instances, children by start: order[k] = old id of
 * new id k. Returns the count. */
static lp_status preorder(g10_xb *b, const uint8_t *valid, const int64_t *lo, uint32_t *order, uint32_t *cnt,
                          lp_error *err)
{
    uint32_t n = b->n;
    uint32_t *first = lp_calloc((size_t)n + 1, sizeof *first);
    kid *kids = lp_malloc((size_t)n * sizeof *kids + 1);
    uint32_t *stack = lp_malloc((size_t)n * sizeof *stack + 1);
    if (!first || !kids || !stack) {
        lp_free(first), lp_free(kids), lp_free(stack);
        return nomem(err);
    }
    for (uint32_t i = 1; i < n; i++)
        if (valid[i])
            first[b->parent[i] + 1]++;
    for (uint32_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    uint32_t *fill = stack; /* reuse as fill cursors */
    memcpy(fill, first, (size_t)n * sizeof *fill);
    for (uint32_t i = 1; i < n; i++)
        if (valid[i])
            kids[fill[b->parent[i]]++] = (kid){lo[i], i};
    for (uint32_t p = 0; p < n; p++)
        if (first[p + 1] - first[p] > 1)
            qsort(kids + first[p], first[p + 1] - first[p], sizeof *kids, cmp_kid);
    uint32_t sp = 0, k = 0;
    stack[sp++] = 0;
    while (sp) {
        uint32_t i = stack[--sp];
        order[k++] = i;
        for (uint32_t c = first[i + 1]; c-- > first[i];)
            stack[sp++] = kids[c].i;
    }
    *cnt = k;
    lp_free(first), lp_free(kids), lp_free(stack);
    return LP_OK;
}

static lp_status alloc_exec(lp_g10_exec *x, uint32_t n, lp_error *err)
{
    x->n = n;
    x->type = lp_malloc((size_t)n * sizeof *x->type);
    x->parent = lp_malloc((size_t)n * sizeof *x->parent);
    x->size = lp_malloc((size_t)n * sizeof *x->size);
    x->start = lp_malloc((size_t)n * sizeof *x->start);
    x->end = lp_malloc((size_t)n * sizeof *x->end);
    x->key = lp_malloc((size_t)n * sizeof *x->key);
    x->host = lp_malloc((size_t)n * sizeof *x->host);
    x->derived = lp_malloc(n);
    x->src = lp_malloc((size_t)n * sizeof *x->src);
    if (!x->type || !x->parent || !x->size || !x->start || !x->end || !x->key || !x->host || !x->derived || !x->src)
        return nomem(err);
    return LP_OK;
}

/* A host string's index in x->hosts (added if new). */
static lp_status host_index(lp_g10_exec *x, lp_hmap *hidx, lp_str h, uint32_t *out, lp_error *err)
{
    uint64_t v;
    if (lp_hmap_get(hidx, h, &v)) {
        *out = (uint32_t)v;
        return LP_OK;
    }
    lp_str *nh = lp_reallocarray(x->hosts, (size_t)x->nhosts + 1, sizeof *nh);
    if (!nh)
        return nomem(err);
    x->hosts = nh;
    x->hosts[x->nhosts] = h;
    *out = x->nhosts++;
    return lp_hmap_put(hidx, h, *out, err);
}

/* Fill the exec in preorder; hosts from own records, aliases, or the parent. */
static lp_status layout(g10_xb *b, const uint32_t *order, uint32_t n, const uint8_t *derived, const int64_t *lo,
                        const int64_t *hi, uint32_t *newid, lp_error *err)
{
    lp_g10_exec *x = b->x;
    lp_status st = alloc_exec(x, n, err);
    if (st)
        return st;
    lp_hmap hidx = {0};
    for (uint32_t k = 0; k < n && !st; k++) {
        uint32_t i = order[k];
        newid[i] = k;
        x->type[k] = b->type[i];
        x->parent[k] = k ? newid[b->parent[i]] : LP_G10_NONE;
        x->start[k] = lo[i];
        x->end[k] = hi[i];
        x->key[k] = b->key[i];
        x->derived[k] = derived[i];
        x->src[k] = derived[i] ? 0 : b->sline[i] ? b->sline[i] : b->eline[i];
        x->size[k] = 1;
        lp_str h = b->ownhost[i];
        uint64_t v;
        if (h == LP_STR_NONE && b->key[i] != LP_STR_NONE &&
            lp_hmap_get(&b->alias, (uint64_t)x->keyname[b->type[i]] << 32 | b->key[i], &v))
            h = (lp_str)v;
        if (h != LP_STR_NONE)
            st = host_index(x, &hidx, h, &x->host[k], err);
        else
            x->host[k] = k ? x->host[x->parent[k]] : LP_G10_NONE;
    }
    lp_hmap_release(&hidx);
    for (uint32_t k = n; k-- > 1;)
        x->size[x->parent[k]] += x->size[k];
    x->nleaves = 0;
    for (uint32_t k = 0; k < n; k++)
        x->nleaves += x->size[k] == 1;
    return st;
}

/* Children outside a recorded parent; overlapping instances of a sequential type
 * (each parent's children visited once, the previous child of each type remembered). */
static lp_status checks(g10_xb *b, const uint32_t *order, lp_error *err)
{
    lp_g10_exec *x = b->x;
    uint64_t outside = 0, overlap = 0;
    char name[256];
    uint32_t *last = lp_malloc((size_t)b->m->ntypes * sizeof *last), *stamp = lp_calloc(b->m->ntypes, sizeof *stamp);
    if (!last || !stamp) {
        lp_free(last), lp_free(stamp);
        return nomem(err);
    }
    for (uint32_t p = 0; p < x->n; p++) {
        for (uint32_t k = p + 1; k < p + x->size[p]; k += x->size[k]) {
            uint32_t i = order[k], t = x->type[k];
            const char *f = lp_strtab_get(&x->strs, b->sfile[i] ? b->sfile[i] : b->efile[i]);
            uint64_t line = b->sline[i] ? b->sline[i] : b->eline[i];
            if (!x->derived[p] && (x->start[k] < x->start[p] || x->end[k] > x->end[p]) && outside++ < KEEP)
                lp_diags_report(b->ds, LP_SEV_WARNING, LP_RULE_IMPORT, f, line,
                                "phase %s [%lld, %lld] is not within its parent's bounds [%lld, %lld]",
                                g10_xb_name(b, i, name, sizeof name), (long long)x->start[k], (long long)x->end[k],
                                (long long)x->start[p], (long long)x->end[p]);
            if (b->m->type[t].repeat != LP_G10_SEQUENTIAL)
                continue;
            if (stamp[t] == p + 1 && x->end[last[t]] > x->start[k] && overlap++ < KEEP)
                lp_diags_report(b->ds, LP_SEV_WARNING, LP_RULE_OVERLAP, f, line,
                                "phase %s starts before the previous %s ends (a sequential type)",
                                g10_xb_name(b, i, name, sizeof name), lp_g10_model_str(b->m, b->m->type[t].name));
            stamp[t] = p + 1;
            last[t] = k;
        }
    }
    lp_free(last), lp_free(stamp);
    if (outside > KEEP || overlap > KEEP)
        lp_diags_report(b->ds, LP_SEV_WARNING, LP_RULE_IMPORT, NULL, 0,
                        "%llu phases outside their parent's bounds and %llu overlapping sequential phases in all",
                        (unsigned long long)outside, (unsigned long long)overlap);
    return LP_OK;
}

lp_status g10_xb_finish(g10_xb *b, lp_g10_exec **out, lp_error *err)
{
    uint32_t n = b->n;
    uint8_t *valid = lp_malloc((size_t)n + 1), *derived = lp_malloc((size_t)n + 1);
    int64_t *lo = lp_malloc((size_t)n * sizeof *lo + 1), *hi = lp_malloc((size_t)n * sizeof *hi + 1);
    uint32_t *order = lp_malloc((size_t)n * sizeof *order + 1), *newid = lp_malloc((size_t)n * sizeof *newid + 1);
    lp_status st = LP_OK;
    if (!valid || !derived || !lo || !hi || !order || !newid) {
        st = nomem(err);
        goto out;
    }
    bounds(b, valid, derived, lo, hi);
    if (!valid[0]) {
        st = lp_error_set(err, LP_ERR_DATA, "no phase instance with a start and an end");
        goto out;
    }
    int64_t span;
    if (__builtin_sub_overflow(hi[0], lo[0], &span) || span > SPAN_MAX) {
        st = lp_error_set(err, LP_ERR_DATA, "the phases span more than 2^62 ns (146 years): bad timestamps?");
        goto out;
    }
    uint32_t cnt = 0;
    if ((st = preorder(b, valid, lo, order, &cnt, err)) || (st = layout(b, order, cnt, derived, lo, hi, newid, err)))
        goto out;
    if ((st = checks(b, order, err)))
        goto out;
    *out = b->x;
    b->x = NULL;
out:
    lp_free(valid), lp_free(derived), lp_free(lo), lp_free(hi), lp_free(order), lp_free(newid);
    return st;
}
