/* fuzz_lptb.c: libFuzzer target for the binary reader. Built with LP_FUZZING the
 * checksum is not enforced (so the fuzzer reaches the validation), every other check
 * is: any input must be rejected cleanly or load into a trace that satisfies the
 * invariants and survives the PAG and the critical path. */
#include "longpole/longpole.h"
#include <stdlib.h>

/* Checked in every build (CHECK_INVARIANT() vanishes under NDEBUG). */
#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

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
    return 0;
}
