/* fuzz_lpt.c: libFuzzer target for the native text reader (and the builder's rules,
 * the PAG and the critical path on whatever it accepts). Any input must load without
 * a crash, a leak or undefined behaviour, and what it loads must hold the properties
 * of trace_fuzz.h: the trace invariants, a critical path that adds up, and round trips
 * through both writers (text: the same workers, activities and messages; binary: the
 * same columns). */
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
    if (lp_input_open_mem(&in, data, n, "fuzz.lpt", &err)) {
        lp_builder_free(b);
        goto out;
    }
    lp_status st = lp_lpt_read(b, in, NULL, &err);
    lp_input_close(in);
    if (st) {
        lp_builder_free(b);
        goto out;
    }
    lp_trace *t;
    if (lp_builder_finish(b, &t, &err))
        goto out;
    fuzz_trace_invariants(t);
    fuzz_trace_cpath(t);
    lp_pag g;
    if (lp_pag_build(t, &g, &err) == LP_OK) {
        lp_check c;
        if (lp_check_run(&g, &c, &err) == LP_OK)
            lp_check_release(&c);
        lp_pag_release(&g);
    }
    fuzz_trace_lpt_roundtrip(t);
    fuzz_trace_lptb_roundtrip(t);
    lp_trace_free(t);
out:
    lp_diags_release(&ds);
    return 0;
}
