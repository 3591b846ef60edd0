/* fuzz_cpfmodel.c: libFuzzer target for the CrystalPerf classifier's model reader
 * (src/analysis/crystalperf/classify.c, lp_cls_model_load): any input is a model or an
 * error, never a crash; a model that loads predicts probabilities that sum to 1. Seeds:
 * tests/fuzz/corpus/cpfmodel/. */
#include "longpole/analysis/crystalperf/classify.h"
#include <math.h>
#include <stdlib.h>

#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_cls_model m;
    lp_cls_model_init(&m);
    lp_error err;
    if (lp_cls_model_load(&m, (const char *)data, n, "fuzz", &err) == LP_OK) {
        double p[LP_CLS_N], sum = 0;
        lp_cls_predict(&m, "tcp_sendmsg", "libc.so.6", "net/ipv4/tcp.c", "send a message", p);
        for (int c = 0; c < LP_CLS_N; c++) {
            CHECK_INVARIANT(p[c] >= 0 && p[c] <= 1);
            sum += p[c];
        }
        CHECK_INVARIANT(fabs(sum - 1) < 1e-9 || isnan(sum));
    }
    lp_cls_model_release(&m);
    return 0;
}
