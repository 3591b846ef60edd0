/* fuzz_jaeger.c: libFuzzer target for the jaeger span importer (src/import/spans/jaeger.c), the span
 * table's tree rules, the span-tree critical path and the mapping into the activity
 * graph (see spans_fuzz.h), by the tree path and the streaming path. Seeds:
 * tests/fuzz/corpus/jaeger/. */
#include "spans_fuzz.h"
#include "import/spans/spanjson.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

/* Twice: as a user's files are read (a trace is streamed span by span only when it is
 * larger than 1 MiB), and with every trace that can be streamed streamed, decided on
 * partial data in a small buffer (the nested streaming of codec/json.h). */
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_span_import_nest_min = LP_SPAN_NEST_MIN;
    lp_span_import_bufsize = LP_SPAN_BUFSIZE;
    fuzz_spans("jaeger", data, n);
    lp_span_import_nest_min = 1;
    lp_span_import_bufsize = 1 + (n ? data[n - 1] % 64 : 0);
    fuzz_spans("jaeger", data, n);
    lp_span_import_nest_min = LP_SPAN_NEST_MIN;
    lp_span_import_bufsize = LP_SPAN_BUFSIZE;
    return 0;
}
