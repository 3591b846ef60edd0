/* fuzz_snailtrail.c: libFuzzer target for SnailTrail's binary log (snailtrail.h): the
 * importer into a builder, and the streaming engine reading the same bytes (stream.h,
 * --format snailtrail) cut into chunks at input-chosen places over two connections,
 * with tiny windows (so every event crosses bounds and halves and open activities are
 * completed at closing). Properties: no crash, leak or undefined behaviour; the
 * imported trace holds the trace invariants, its critical path adds up and it writes
 * back to the same columns (trace_fuzz.h); every window's CP sums to 1 within its
 * error bound when it has paths; the stream's event count never exceeds the bytes. */
#include "trace_fuzz.h"
#include "longpole/import/snailtrail.h"
#include "longpole/codec/io.h"
#include "longpole/load/load.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static int on_window(void *ctx, const lp_winres *r, const lp_stream_winfo *wi)
{
    (void)ctx;
    (void)wi;
    if (r->has_paths)
        FUZZ_CHECK(fabs(r->cp_sum - 1.0) <= r->err_bound + 1e-12);
    FUZZ_CHECK(r->t0 <= r->t1);
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_builder *b;
    if (lp_builder_new(&b, &ds, NULL, &err) == LP_OK) {
        lp_input *in;
        if (lp_input_open_mem(&in, data, n, "fuzz.msgpack", &err) == LP_OK) {
            lp_status st = lp_importer_find("snailtrail")->read(b, in, NULL, &err);
            lp_input_close(in);
            lp_trace *t;
            if (st) {
                lp_builder_free(b);
            } else if (lp_builder_finish(b, &t, &err) == LP_OK) {
                fuzz_trace_invariants(t);
                fuzz_trace_cpath(t);
                fuzz_trace_lptb_roundtrip(t);
                lp_trace_free(t);
            }
        } else {
            lp_builder_free(b);
        }
    }
    lp_diags_release(&ds);

    lp_diags_init(&ds, 4);
    lp_stream_opts o;
    lp_stream_opts_init(&o);
    o.size = (int64_t)1 << (8 + (n ? data[0] % 52 : 10));
    o.step = n > 1 && (data[1] & 1) ? o.size / 2 + 1 : 0;
    o.max_empty = 4;
    o.max_delay = n > 2 && (data[2] & 1) ? (int64_t)data[2] : -1;
    lp_stream *s;
    if (lp_stream_new(&s, &o, &ds, on_window, NULL, NULL, &err) == LP_OK) {
        uint32_t c[2];
        if (lp_stream_open(s, "a", LP_STREAM_SNAILTRAIL, &c[0], &err) == LP_OK &&
            lp_stream_open(s, "b", LP_STREAM_SNAILTRAIL, &c[1], &err) == LP_OK) {
            size_t cut = n > 3 ? data[3] % (n + 1) : n / 2;
            if (lp_stream_feed(s, c[0], data, cut, &err) == LP_OK &&
                lp_stream_feed(s, c[1], data + cut, n - cut, &err) == LP_OK && lp_stream_finish(s, &err) == LP_OK)
                FUZZ_CHECK(lp_stream_get_stats(s)->events <= n);
        }
        lp_stream_free(s);
    }
    lp_diags_release(&ds);
    return 0;
}
