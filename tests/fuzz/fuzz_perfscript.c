/* fuzz_perfscript.c: libFuzzer target for the `perf script` text reader (src/import/stacks/perfscript.c): the properties of stacks_fuzz.h. Seeds:
 * tests/fuzz/corpus/perfscript/. */
#include "stacks_fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) { return stacks_fuzz_one(lp_stacks_read_perf, data, n); }
