/* span_trace.c: activity graphs made from spans (span.h, docs/formats/spans.md):
 * recognising a span's worker by the attributes the span importers give it (`service`,
 * `operation`) and naming it for people. Lookups only: O(attributes) per worker. */
#include "longpole/model/span.h"

#include <stdio.h>
#include <string.h>

static int span_names(const lp_trace *t, uint32_t w, lp_str ks, lp_str ko, const char **service,
                      const char **operation)
{
    uint32_t list = t->wattr ? t->wattr[w] : 0;
    if (!list || ks == LP_STR_NONE || ko == LP_STR_NONE)
        return 0;
    lp_str vs = LP_STR_NONE, vo = LP_STR_NONE;
    uint32_t n = t->apool[list];
    for (uint32_t i = 0; i < n; i++) {
        lp_str k = t->apool[list + 1 + 2 * i];
        if (k == ks)
            vs = t->apool[list + 2 + 2 * i];
        else if (k == ko)
            vo = t->apool[list + 2 + 2 * i];
    }
    if (vs == LP_STR_NONE || vo == LP_STR_NONE)
        return 0;
    if (service)
        *service = lp_trace_str(t, vs);
    if (operation)
        *operation = lp_trace_str(t, vo);
    return 1;
}

int lp_trace_worker_span(const lp_trace *t, uint32_t w, const char **service, const char **operation)
{
    if (w >= t->nworkers)
        return 0;
    return span_names(t, w, lp_strtab_find(&t->strs, "service", 7), lp_strtab_find(&t->strs, "operation", 9),
                      service, operation);
}

int lp_trace_is_spans(const lp_trace *t)
{
    lp_str ks = lp_strtab_find(&t->strs, "service", 7), ko = lp_strtab_find(&t->strs, "operation", 9);
    if (!t->nworkers || ks == LP_STR_NONE || ko == LP_STR_NONE)
        return 0;
    for (uint32_t w = 0; w < t->nworkers; w++)
        if (!span_names(t, w, ks, ko, NULL, NULL))
            return 0;
    return 1;
}

const char *lp_trace_worker_label(const lp_trace *t, uint32_t w, char *buf, size_t n)
{
    const char *svc, *op;
    if (!lp_trace_worker_span(t, w, &svc, &op))
        return lp_trace_worker_name(t, w);
    snprintf(buf, n, "%s %s", svc, op);
    return buf;
}
