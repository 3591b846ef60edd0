/* fuzz_dkidx.c: libFuzzer target for the sidecar of a `dist kcp` rank's index
 * (src/dist/dkidx.c) and the packed ECIs it holds (lp_keci_unpack_host, src/dist/keci.c).
 * Built with LP_FUZZING the checksum is not enforced (so the fuzzer reaches the counts
 * and the ECIs); any input must be refused cleanly or read into counts that fit its
 * bytes, and its ECIs unpacked or refused without reading out of bounds. */
#include "longpole/dist/dkidx.h"
#include "longpole/dist/keci.h"
#include <stdlib.h>

#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_error err;
    lp_dkidx x;
    if (lp_dkidx_read_mem(data, n, "fuzz.lpkx.dk", &x, &err) != LP_OK) {
        CHECK_INVARIANT(x.sv == NULL && x.eci == NULL);
        return 0;
    }
    CHECK_INVARIANT(x.npk * 8 + x.neci <= n);
    lp_ktrace *kt = NULL;
    if (lp_keci_ktrace_new(8, &kt, &err) == LP_OK) {
        lp_drd r = lp_drd_init(x.eci, x.neci);
        while (r.off < r.n) {
            uint32_t h;
            if (lp_keci_unpack_host(&r, kt, &h, NULL, NULL, &err) != LP_OK)
                break;
            CHECK_INVARIANT(h < 8);
        }
        lp_ktrace_free(kt);
    }
    lp_dkidx_release(&x);
    return 0;
}
