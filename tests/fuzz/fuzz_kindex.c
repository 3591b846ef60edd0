/* fuzz_kindex.c: libFuzzer target for the execution graph's index reader
 * (src/analysis/kernel/kindex.c). Built with LP_FUZZING the checksum is not enforced
 * (so the fuzzer reaches the validation), every other check is: any input must be
 * refused cleanly, or open into a graph that satisfies its invariants and answers every
 * thread's bounded and unbounded critical path with contiguous elements covering the
 * interval. */
#include "longpole/analysis/kernel/kcpath.h"
#include "longpole/analysis/kernel/kindex.h"
#include <stdlib.h>

/* Checked in every build (CHECK_INVARIANT() vanishes under NDEBUG). */
#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_error err;
    lp_kgraph *g = NULL;
    lp_kindex_verdict v;
    if (lp_kindex_open_mem(data, n, "fuzz.lpkx", NULL, &g, &v, &err) != LP_OK) {
        CHECK_INVARIANT(g == NULL && v != LP_KINDEX_OK);
        return 0;
    }
    CHECK_INVARIANT(lp_kgraph_validate(g, &err) == LP_OK);
    for (uint32_t w = 0; w < g->nworkers && w < 64; w++)
        for (int algo = 0; algo < 2; algo++) {
            lp_kcp cp;
            if (lp_kcp_compute(g, w, LP_KCP_LIFETIME_START, LP_KCP_LIFETIME_END, (lp_kcp_algo)algo, &cp, &err))
                continue;
            int64_t cur = cp.start;
            for (size_t i = 0; i < cp.n; i++) {
                CHECK_INVARIANT(cp.e[i].start == cur && cp.e[i].end >= cp.e[i].start);
                cur = cp.e[i].end;
            }
            CHECK_INVARIANT(cur == cp.end);
            lp_kcp_release(&cp);
        }
    lp_kgraph_free(g);
    return 0;
}
