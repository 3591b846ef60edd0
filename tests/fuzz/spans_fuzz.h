/* spans_fuzz.h: the body shared by the span importers' fuzz targets (fuzz_jaeger.c,
 * fuzz_zipkin.c, fuzz_otlp.c): read the input with one format into a span table,
 * finish it, compute every trace's critical path and check its invariants (sections in
 * time order, adjacent, covering the root's run exactly), aggregate at percentiles,
 * then map the table into an activity graph and run the whole-trace critical path on
 * it. Any input must pass without a crash, a leak or undefined behaviour. The checks
 * are assert()s, kept in every build type. */
#ifndef LP_FUZZ_SPANS_H
#define LP_FUZZ_SPANS_H

#undef NDEBUG
#include "longpole/longpole.h"
#include "longpole/model/span.h"
#include "longpole/codec/io.h"
#include "longpole/import/spanfmt.h"
#include "longpole/load/load.h"
#include "longpole/analysis/spans/spancp.h"
#include <assert.h>
#include <string.h>

static int fuzz_spans(const char *format, const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_spans sp;
    lp_spans_init(&sp, &ds);
    lp_error err;
    lp_input *in;
    const lp_span_format *f = lp_span_format_find(format);
    assert(f);
    if (lp_input_open_mem(&in, data, n, "fuzz.json", &err))
        goto out;
    lp_status st = lp_spans_source(&sp, "fuzz.json", &err);
    if (!st)
        st = f->read(&sp, in, NULL, &err);
    lp_input_close(in);
    if (st || lp_spans_finish(&sp, &err))
        goto out;
    /* the tree */
    for (size_t i = 0; i < sp.n; i++) {
        if (sp.flags[i] & LP_SPAN_DROPPED)
            continue;
        assert(sp.dur[i] >= 0);
        uint32_t p = sp.parent[i];
        assert(p == LP_SPAN_NONE || (p < sp.n && sp.trace[p] == sp.trace[i] && !(sp.flags[p] & LP_SPAN_DROPPED)));
        size_t steps = 0; /* no cycles */
        for (uint32_t x = (uint32_t)i; x != LP_SPAN_NONE; x = sp.parent[x])
            assert(++steps <= sp.n);
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
                assert(cp.sec[k].start < cp.sec[k].end);
                assert(k == 0 || cp.sec[k].start == cp.sec[k - 1].end);
                sum += cp.sec[k].end - cp.sec[k].start;
            }
            if (cp.root != LP_SPAN_NONE) {
                assert(sum == cp.latency);
                assert(cp.nsec == 0 || (cp.sec[0].start == cp.start && cp.sec[cp.nsec - 1].end == cp.start + cp.latency));
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
