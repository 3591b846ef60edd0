/* fuzz_lptb.c: libFuzzer target for the binary reader. Built with LP_FUZZING the
 * checksum is not enforced (so the fuzzer reaches the validation), every other check
 * is: any input must be rejected cleanly or load into a trace that holds the
 * properties of trace_fuzz.h (invariants, a critical path that adds up) and writes
 * back to the same columns (binary) and the same activities and messages (text). */
#include "trace_fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_error err;
    lp_input *in;
    if (lp_input_open_mem(&in, data, n, "fuzz.lptb", &err))
        return 0;
    lp_trace *t = NULL;
    lp_status st = lp_lptb_read(in, &t, NULL, NULL, &err);
    lp_input_close(in);
    if (st)
        return 0;
    fuzz_trace_invariants(t);
    fuzz_trace_cpath(t);
    fuzz_trace_lptb_roundtrip(t);
    fuzz_trace_lpt_roundtrip(t);
    lp_trace_free(t);
    return 0;
}
