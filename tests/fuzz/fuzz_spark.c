/* fuzz_spark.c: libFuzzer target for the Spark event-log importer (src/import/spark.c):
 * any input must import without a crash, a leak or undefined behaviour into a trace
 * that keeps the invariants, whose critical path adds up. Seeds:
 * tests/fuzz/corpus/spark/. */
#include "longpole/longpole.h"
#include <stdlib.h>
#include <string.h>

#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_builder *b;
    if (lp_builder_new(&b, &ds, NULL, &err))
        goto out;
    lp_input *in;
    if (lp_input_open_mem(&in, data, n, "fuzz.log", &err)) {
        lp_builder_free(b);
        goto out;
    }
    lp_status st = lp_builder_source(b, "fuzz.log", &err);
    if (!st)
        st = lp_importer_find("spark")->read(b, in, NULL, &err);
    lp_input_close(in);
    if (st) {
        lp_builder_free(b);
        goto out;
    }
    lp_trace *t;
    if (lp_builder_finish(b, &t, &err))
        goto out;
    for (uint32_t w = 0; w < t->nworkers; w++)
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++) {
            CHECK_INVARIANT(t->astart[i] <= t->aend[i]);
            CHECK_INVARIANT(i == t->wfirst[w] || t->aend[i - 1] <= t->astart[i]);
        }
    lp_pag g;
    if (lp_pag_build(t, &g, &err) == LP_OK) {
        lp_cpath cp;
        if (lp_cpath_compute(&g, &cp, &err) == LP_OK) {
            int64_t s = 0;
            for (size_t i = 0; i < cp.n; i++)
                s += cp.e[i].end - cp.e[i].start;
            CHECK_INVARIANT(s == cp.total);
            lp_cpath_release(&cp);
        }
        lp_pag_release(&g);
    }
    lp_trace_free(t);
out:
    lp_diags_release(&ds);
    return 0;
}
