/* fuzz_spark.c: libFuzzer target for the Spark event-log importer (src/import/spark.c):
 * any input must import without a crash, a leak or undefined behaviour into a trace
 * that holds the properties of trace_fuzz.h (invariants, a critical path that adds up,
 * round trips through the binary and text writers), and with fewer activities than the
 * input has bytes. Seeds: tests/fuzz/corpus/spark/. */
#include "trace_fuzz.h"

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
    fuzz_trace_invariants(t);
    /* every activity comes from a record of tens of bytes (a task's end: one; a job's or
     * stage's submission and completion: two): never more activities than input bytes */
    FUZZ_CHECK(t->nacts - t->ngaps <= n);
    fuzz_trace_cpath(t);
    fuzz_trace_lptb_roundtrip(t);
    fuzz_trace_lpt_roundtrip(t);
    lp_trace_free(t);
out:
    lp_diags_release(&ds);
    return 0;
}
