/* fuzz_stream.c: libFuzzer target for the streaming engine on .lpt text (stream.h):
 * the input's lines go to three connections (by the hash of their second field, so a
 * worker's records stay in order on one connection, as a live system sends them), fed
 * in input-chosen chunk sizes. The first line may be "#w SIZE STEP DELAY" (any
 * integers; defaults otherwise). Invariants: no crash, leak or undefined behaviour
 * whatever the bytes (bad lines, huge or negative times, late and out-of-order
 * records, unmatched halves); every window's CP sums to 1 within its error bound when
 * it has paths; windows come in order. */
#include "longpole/longpole.h"
#include "fuzz_check.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static int on_window(void *ctx, const lp_winres *r, const lp_stream_winfo *wi)
{
    uint64_t *last = ctx;
    (void)wi;
    FUZZ_CHECK(*last == UINT64_MAX || r->index > *last);
    *last = r->index;
    if (r->has_paths)
        FUZZ_CHECK(fabs(r->cp_sum - 1.0) <= r->err_bound + 1e-12);
    FUZZ_CHECK(r->t0 <= r->t1);
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_stream_opts o;
    lp_stream_opts_init(&o);
    o.size = 1000;
    if (n > 3 && data[0] == '#' && data[1] == 'w') {
        long long size = 0, step = 0, delay = -1;
        char head[128];
        size_t k = 0;
        while (k < n && k < sizeof head - 1 && data[k] != '\n') {
            head[k] = (char)data[k];
            k++;
        }
        head[k] = '\0';
        if (sscanf(head + 2, "%lld %lld %lld", &size, &step, &delay) >= 1 && size > 0) {
            o.size = size;
            o.step = step > 0 ? step : 0;
            o.max_delay = delay;
        }
    }
    o.max_line = 200;
    o.max_empty = 4;
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_stream *s;
    uint64_t last = UINT64_MAX;
    if (lp_stream_new(&s, &o, &ds, on_window, NULL, &last, &err) == LP_OK) {
        uint32_t c[3];
        int ok = 1;
        for (int i = 0; i < 3 && ok; i++)
            ok = lp_stream_open(s, "c", LP_STREAM_LPT, &c[i], &err) == LP_OK;
        size_t chunk = n ? 1 + data[n - 1] % 64 : 1;
        for (size_t p = 0; p < n && ok;) {
            const unsigned char *e = memchr(data + p, '\n', n - p);
            size_t len = e ? (size_t)(e - (data + p)) + 1 : n - p;
            size_t sp = 0; /* the second field picks the connection */
            while (sp < len && data[p + sp] != ' ')
                sp++;
            unsigned h = sp + 1 < len ? data[p + sp + 1] : 0;
            for (size_t q = 0; q < len && ok; q += chunk) {
                size_t m = len - q < chunk ? len - q : chunk;
                ok = lp_stream_feed(s, c[h % 3], data + p + q, m, &err) == LP_OK;
            }
            p += len;
        }
        if (ok)
            lp_stream_finish(s, &err);
        lp_stream_free(s);
    }
    lp_diags_release(&ds);
    return 0;
}
