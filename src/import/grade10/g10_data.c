/* g10_data.c: the container of Grade10 inputs (lp_g10_data, import/grade10.h): string
 * table, tag-list pool, events, monitoring series indexed by (host, metric), blocking
 * intervals. Invariant: series_index maps (host << 32 | metric) to the series' index,
 * for every series. */
#include "longpole/import/grade10.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "import/grade10/g10_text.h"

#include <string.h>

lp_status lp_g10_data_init(lp_g10_data *d, lp_error *err)
{
    memset(d, 0, sizeof *d);
    lp_hmap *m = lp_calloc(1, sizeof *m);
    if (!m || lp_strtab_init(&d->strs)) {
        lp_free(m);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    d->series_index = m;
    d->pool = lp_malloc(16 * sizeof *d->pool);
    if (!d->pool) {
        lp_g10_data_release(d);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    d->cappool = 16;
    d->pool[0] = 0;
    d->npool = 1;
    return LP_OK;
}

void lp_g10_data_release(lp_g10_data *d)
{
    lp_strtab_release(&d->strs);
    lp_free(d->pool);
    lp_free(d->ev);
    for (size_t i = 0; i < d->nseries; i++) {
        lp_free(d->series[i].time);
        lp_free(d->series[i].value);
        lp_free(d->series[i].line);
    }
    lp_free(d->series);
    if (d->series_index) {
        lp_hmap_release(d->series_index);
        lp_free(d->series_index);
    }
    lp_free(d->blk);
    memset(d, 0, sizeof *d);
}

const lp_g10_series *lp_g10_data_series(const lp_g10_data *d, const char *host, const char *metric)
{
    lp_str h = lp_strtab_find(&d->strs, host, strlen(host));
    lp_str m = lp_strtab_find(&d->strs, metric, strlen(metric));
    if (h == LP_STR_NONE || m == LP_STR_NONE)
        return NULL;
    uint64_t v;
    if (!lp_hmap_get(d->series_index, (uint64_t)h << 32 | m, &v))
        return NULL;
    return &d->series[v];
}

lp_str lp_g10_tag(const lp_g10_data *d, uint32_t tags, lp_str key)
{
    if (!tags)
        return LP_STR_NONE;
    uint32_t n = d->pool[tags];
    for (uint32_t i = 0; i < n; i++)
        if (d->pool[tags + 1 + 2 * i] == key)
            return d->pool[tags + 2 + 2 * i];
    return LP_STR_NONE;
}

lp_status lp_g10_data_tags(lp_g10_data *d, const lp_str *kv, uint32_t npairs, uint32_t *off, lp_error *err)
{
    if (!npairs) {
        *off = 0;
        return LP_OK;
    }
    size_t need = d->npool + 1 + 2 * (size_t)npairs;
    if (need > UINT32_MAX)
        return lp_error_set(err, LP_ERR_LIMIT, "more than 2^32 words of Grade10 tags");
    if (lp_grow_at(&d->pool, &d->cappool, need, sizeof *d->pool))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    *off = (uint32_t)d->npool;
    d->pool[d->npool] = npairs;
    memcpy(d->pool + d->npool + 1, kv, 2 * (size_t)npairs * sizeof *kv);
    d->npool = need;
    return LP_OK;
}

lp_status g10_series_of(lp_g10_data *d, lp_str host, lp_str metric, lp_str file, lp_g10_series **out, lp_error *err)
{
    int added;
    uint64_t v = lp_hmap_get_or_put(d->series_index, (uint64_t)host << 32 | metric, d->nseries, &added);
    if (v == LP_HMAP_EMPTY)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (added) {
        if (lp_grow_at(&d->series, &d->capseries, d->nseries + 1, sizeof *d->series)) {
            lp_hmap_del(d->series_index, (uint64_t)host << 32 | metric);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        }
        lp_g10_series *se = &d->series[d->nseries++];
        memset(se, 0, sizeof *se);
        se->host = host;
        se->metric = metric;
        se->file = file;
    }
    *out = &d->series[v];
    return LP_OK;
}

lp_status g10_series_append(lp_g10_series *s, int64_t t, double v, uint64_t line, lp_error *err)
{
    size_t cap = s->cap;
    if (lp_grow_at(&s->time, &cap, s->n + 1, sizeof *s->time))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    cap = s->cap;
    if (lp_grow_at(&s->value, &cap, s->n + 1, sizeof *s->value))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    cap = s->cap;
    if (lp_grow_at(&s->line, &cap, s->n + 1, sizeof *s->line))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    s->cap = cap;
    s->time[s->n] = t;
    s->value[s->n] = v;
    s->line[s->n] = line;
    s->n++;
    return LP_OK;
}

lp_status lp_g10_data_sample(lp_g10_data *d, const char *host, const char *metric, int64_t t, double v, uint64_t line,
                             lp_error *err)
{
    lp_str h, m;
    if (lp_strtab_intern(&d->strs, host, strlen(host), &h) || lp_strtab_intern(&d->strs, metric, strlen(metric), &m))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_g10_series *s;
    lp_status st = g10_series_of(d, h, m, 0, &s, err);
    if (st)
        return st;
    if (s->n && t <= s->time[s->n - 1])
        return lp_error_set(err, LP_ERR_DATA, "sample of %s on '%s' at %lld is not after the previous one", metric, host,
                            (long long)t);
    return g10_series_append(s, t, v, line, err);
}
