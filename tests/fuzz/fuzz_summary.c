/* fuzz_summary.c: libFuzzer target for windowed critical participation (snapshot.h,
 * cpmetric.h, summary.h, window.h) on whatever the native text reader accepts. The
 * first line of the input may be "#w SIZE STEP" (window size and step in ns, any
 * integers); the rest is a trace. Every window of the grid over the trace is analysed
 * with every summary, a sampled path and the checks; the invariants: no crash, leak or
 * undefined behaviour, CP sums to 1 within the error bound when there are paths, every
 * CP is in [0, 1], and the sampled path is as long as the window. */
#include "longpole/longpole.h"
#include "fuzz_check.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>


int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static lp_trace *load(const unsigned char *data, size_t n, lp_diags *ds)
{
    lp_error err;
    lp_builder *b;
    if (lp_builder_new(&b, ds, NULL, &err))
        return NULL;
    lp_input *in;
    if (lp_input_open_mem(&in, data, n, "fuzz.lpt", &err)) {
        lp_builder_free(b);
        return NULL;
    }
    lp_status st = lp_lpt_read(b, in, NULL, &err);
    lp_input_close(in);
    if (st) {
        lp_builder_free(b);
        return NULL;
    }
    lp_trace *t;
    if (lp_builder_finish(b, &t, &err))
        return NULL;
    return t;
}

static int on_window(void *ctx, const lp_winres *r)
{
    (void)ctx;
    if (r->has_paths) {
        FUZZ_CHECK(fabs(r->cp_sum - 1.0) <= r->err_bound + 1e-12);
        for (int k = 0; k < LP_SUM_NKINDS; k++)
            for (size_t i = 0; i < r->sum[k].n; i++)
                FUZZ_CHECK(r->sum[k].rows[i].cp >= 0 && r->sum[k].rows[i].cp <= 1 + 1e-9);
        if (r->kinds & (1u << LP_SUM_ACTIVITY))
            FUZZ_CHECK(r->sum[LP_SUM_ACTIVITY].path_total == r->t1 - r->t0);
    } else {
        FUZZ_CHECK(r->cp_sum == 0);
    }
    FUZZ_CHECK(r->t0 <= r->t1);
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    long long size = 0, step = 0;
    if (n > 3 && data[0] == '#' && data[1] == 'w') {
        char head[64];
        size_t k = 0;
        while (k < n && k < sizeof head - 1 && data[k] != '\n') {
            head[k] = (char)data[k];
            k++;
        }
        head[k] = '\0';
        if (sscanf(head + 2, "%lld %lld", &size, &step) < 1)
            size = 0;
    }
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_trace *t = load(data, n, &ds);
    if (!t) {
        lp_diags_release(&ds);
        return 0;
    }
    lp_error err;
    lp_snapsrc src;
    lp_sumkeys keys;
    if (lp_snapsrc_init(&src, t, &err) == LP_OK) {
        if (lp_sumkeys_init(&keys, t, &err) == LP_OK) {
            int64_t len = t->tmax - t->tmin;
            if (size <= 0 || size > INT64_C(1) << 40)
                size = len > 0 ? len / 3 + 1 : 1;
            if (step <= 0 || step > INT64_C(1) << 40)
                step = size;
            /* at most 64 windows */
            if (len / step > 64)
                step = len / 64 + 1;
            lp_wingrid g;
            if (lp_wingrid_make(&g, t->tmin, t->tmax, size, step, &err) == LP_OK) {
                int planned = n && (data[n - 1] & 1) && lp_wingrid_plan(&g, &src, &err) == LP_OK;
                (void)planned;
                lp_winopts o = {(1u << LP_SUM_NKINDS) - 1, n, 0, 0};
                lp_winpool *p;
                if (lp_winpool_new(&p, 1, &o, on_window, NULL, &err) == LP_OK) {
                    for (uint64_t k = 0; k < g.n; k++)
                        if (lp_winpool_submit(p, &src, &keys, k, lp_wingrid_ts(&g, k), lp_wingrid_te(&g, k), NULL,
                                              &err))
                            break;
                    lp_winpool_finish(p, &err);
                    lp_winpool_free(p);
                }
            }
            lp_sumkeys_release(&keys);
        }
        lp_snapsrc_release(&src);
    }
    lp_trace_free(t);
    lp_diags_release(&ds);
    return 0;
}
