/* fuzz_collapsed.c: libFuzzer target for the timestamped collapsed-stacks reader (src/import/stacks/collapsed.c): the properties of stacks_fuzz.h. Seeds:
 * tests/fuzz/corpus/collapsed/. */
#include "stacks_fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) { return stacks_fuzz_one(lp_stacks_read_collapsed, data, n); }
