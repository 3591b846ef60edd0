/* spans_fuzz.h: the body shared by the span importers' fuzz targets (fuzz_jaeger.c,
 * fuzz_zipkin.c, fuzz_otlp.c): read the input with one format into a span table,
 * finish it, compute every trace's critical path and check its invariants (sections in
 * time order, adjacent, covering the root's run exactly), aggregate at percentiles,
 * then map the table into an activity graph and run the whole-trace critical path on
 * it. Any input must pass without a crash, a leak or undefined behaviour. The checks
 * are FUZZ_CHECK()s, kept in every build type. */
#ifndef LP_FUZZ_SPANS_H
#define LP_FUZZ_SPANS_H

#include "longpole/longpole.h"
#include "fuzz_check.h"
#include "longpole/model/span.h"
#include "longpole/codec/io.h"
#include "longpole/import/spanfmt.h"
#include "longpole/load/load.h"
#include "longpole/analysis/spans/spancp.h"
#include <stdlib.h>
#include <string.h>

/* The table after lp_spans_finish (span.h): spans grouped by trace in `order` (a
 * permutation), kept spans well formed (trace, names, times without overflow), every
 * trace's root a kept parentless span of it, children lists that match the parent
 * links, the kept count adding up, references resolved to spans or to none. */
static void fuzz_span_table(const lp_spans *sp)
{
    FUZZ_CHECK(sp->finished);
    FUZZ_CHECK(sp->tfirst[0] == 0 && sp->tfirst[sp->ntraces] == sp->n);
    uint64_t kept = 0, kids = 0, withparent = 0;
    uint8_t *seen = calloc(sp->n ? sp->n : 1, 1);
    FUZZ_CHECK(seen != NULL);
    for (uint32_t t = 0; t < sp->ntraces; t++) {
        FUZZ_CHECK(sp->tfirst[t] <= sp->tfirst[t + 1]);
        for (uint64_t k = sp->tfirst[t]; k < sp->tfirst[t + 1]; k++) {
            uint32_t i = sp->order[k];
            FUZZ_CHECK(i < sp->n && !seen[i] && sp->trace[i] == t);
            seen[i] = 1;
        }
        uint32_t r = sp->root[t];
        FUZZ_CHECK(r == LP_SPAN_NONE ||
                   (r < sp->n && sp->trace[r] == t && sp->parent[r] == LP_SPAN_NONE && !(sp->flags[r] & LP_SPAN_DROPPED)));
    }
    free(seen);
    for (size_t i = 0; i < sp->n; i++) {
        if (sp->flags[i] & LP_SPAN_DROPPED)
            continue;
        kept++;
        FUZZ_CHECK(sp->trace[i] < sp->ntraces);
        FUZZ_CHECK(sp->service[i] < sp->strs.n && sp->op[i] < sp->strs.n);
        FUZZ_CHECK(sp->dur[i] >= 0 && sp->start[i] <= INT64_MAX - sp->dur[i]);
        withparent += sp->parent[i] != LP_SPAN_NONE;
        FUZZ_CHECK(sp->kfirst[i] <= sp->kfirst[i + 1]);
        for (uint32_t k = sp->kfirst[i]; k < sp->kfirst[i + 1]; k++) {
            FUZZ_CHECK(sp->kids[k] < sp->n && sp->parent[sp->kids[k]] == i);
            kids++;
        }
    }
    FUZZ_CHECK(kept == sp->nkept);
    FUZZ_CHECK(kids == withparent);
    for (size_t r = 0; r < sp->nrefs; r++)
        FUZZ_CHECK(sp->refs[r].span < sp->n && (sp->refs[r].target == LP_SPAN_NONE || sp->refs[r].target < sp->n));
}

static int fuzz_spans(const char *format, const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_spans sp;
    lp_spans_init(&sp, &ds);
    lp_error err;
    lp_input *in;
    const lp_span_format *f = lp_span_format_find(format);
    FUZZ_CHECK(f);
    if (lp_input_open_mem(&in, data, n, "fuzz.json", &err))
        goto out;
    lp_status st = lp_spans_source(&sp, "fuzz.json", &err);
    if (!st)
        st = f->read(&sp, in, NULL, &err);
    lp_input_close(in);
    if (st || lp_spans_finish(&sp, &err))
        goto out;
    fuzz_span_table(&sp);
    /* the tree */
    for (size_t i = 0; i < sp.n; i++) {
        if (sp.flags[i] & LP_SPAN_DROPPED)
            continue;
        FUZZ_CHECK(sp.dur[i] >= 0);
        uint32_t p = sp.parent[i];
        FUZZ_CHECK(p == LP_SPAN_NONE || (p < sp.n && sp.trace[p] == sp.trace[i] && !(sp.flags[p] & LP_SPAN_DROPPED)));
        size_t steps = 0; /* no cycles */
        for (uint32_t x = (uint32_t)i; x != LP_SPAN_NONE; x = sp.parent[x])
            FUZZ_CHECK(++steps <= sp.n);
    }
    /* critical paths */
    lp_spancp cp;
    lp_spancp_init(&cp);
    lp_spancp_agg *agg = NULL;
    if (lp_spancp_agg_new(&agg, &sp, &err) == LP_OK) {
        for (uint32_t t = 0; t < sp.ntraces; t++) {
            if (lp_spancp_trace(&cp, &sp, t, &err))
                break;
            int64_t sum = 0;
            for (size_t k = 0; k < cp.nsec; k++) {
                FUZZ_CHECK(cp.sec[k].start < cp.sec[k].end);
                FUZZ_CHECK(k == 0 || cp.sec[k].start == cp.sec[k - 1].end);
                sum += cp.sec[k].end - cp.sec[k].start;
            }
            if (cp.root != LP_SPAN_NONE) {
                FUZZ_CHECK(sum == cp.latency);
                FUZZ_CHECK(cp.nsec == 0 || (cp.sec[0].start == cp.start && cp.sec[cp.nsec - 1].end == cp.start + cp.latency));
            }
            if (lp_spancp_agg_add(agg, &cp, &err))
                break;
        }
        double ps[] = {50, 100};
        lp_spancp_pct *pct;
        if (lp_spancp_agg_percentiles(agg, ps, 2, &pct, &err) == LP_OK) {
            char buf[256];
            for (size_t k = 0; k < pct[1].npaths; k++)
                lp_spancp_path_format(agg, pct[1].paths[k].id, ";", buf, sizeof buf);
            lp_spancp_pct_free(pct, 2);
        }
        lp_spancp_agg_free(agg);
    }
    lp_spancp_release(&cp);
    /* the activity graph */
    lp_builder *b;
    if (lp_builder_new(&b, &ds, NULL, &err) == LP_OK) {
        lp_trace *t;
        if (lp_spans_to_builder(&sp, b, &err) == LP_OK) {
            if (lp_builder_finish(b, &t, &err) == LP_OK) {
                lp_pag g;
                if (lp_pag_build(t, &g, &err) == LP_OK) {
                    lp_cpath c;
                    if (lp_cpath_compute(&g, &c, &err) == LP_OK)
                        lp_cpath_release(&c);
                    lp_pag_release(&g);
                }
                lp_trace_free(t);
            }
        } else {
            lp_builder_free(b);
        }
    }
out:
    lp_spans_release(&sp);
    lp_diags_release(&ds);
    return 0;
}

#endif
