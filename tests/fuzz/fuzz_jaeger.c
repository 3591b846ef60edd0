/* fuzz_jaeger.c: libFuzzer target for the jaeger span importer (src/import/spans/jaeger.c), the span
 * table's tree rules, the span-tree critical path and the mapping into the activity
 * graph (see spans_fuzz.h). Seeds: tests/fuzz/corpus/jaeger/. */
#include "spans_fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) { return fuzz_spans("jaeger", data, n); }
