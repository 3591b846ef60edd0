/* fuzz_perfscript.c: libFuzzer target for the `perf script` text reader (src/import/stacks/perfscript.c): any
 * input must read without a crash, a leak or undefined behaviour into a sample table
 * that keeps its invariants (sorted by start, start <= end, every stack and frame id
 * valid), and every sample's resource must be a vector summing to 1. Seeds:
 * tests/fuzz/corpus/perfscript/. */
#include "longpole/analysis/crystalperf/resource.h"
#include "longpole/codec/io.h"
#include <math.h>
#include <stdlib.h>

#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_stacks s;
    lp_stacks_init(&s);
    lp_input *in;
    if (lp_input_open_mem(&in, data, n, "fuzz.txt", &err))
        goto out;
    lp_status st = lp_stacks_read_perf(&s, in, "fuzz.txt", &ds, &err);
    lp_input_close(in);
    if (st)
        goto out;
    for (uint64_t i = 0; i < s.n; i++) {
        CHECK_INVARIANT(s.start[i] <= s.end[i]);
        CHECK_INVARIANT(i == 0 || s.start[i - 1] <= s.start[i]);
        CHECK_INVARIANT(s.state[i] < LP_SS_N);
        CHECK_INVARIANT(s.stack[i] == UINT32_MAX || s.stack[i] < s.nstacks);
    }
    for (uint32_t k = 0; k < s.nstacks; k++)
        for (uint32_t f = s.soff[k]; f < s.soff[k + 1]; f++)
            CHECK_INVARIANT(s.sfr[f] < s.nframes);
    lp_cpf_attr a;
    if (lp_cpf_attr_init(&a, &s, NULL, &err) == LP_OK) {
        for (uint64_t i = 0; i < s.n; i++) {
            double v[LP_RES_N], sum = 0;
            uint32_t fr;
            lp_cpf_sample(&a, i, v, &fr);
            for (int r = 0; r < LP_RES_N; r++)
                sum += v[r];
            CHECK_INVARIANT(fabs(sum - 1) < 1e-9);
        }
        lp_cpf_attr_release(&a);
    }
out:
    lp_stacks_release(&s);
    lp_diags_release(&ds);
    return 0;
}
