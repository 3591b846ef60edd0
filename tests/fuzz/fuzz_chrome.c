/* fuzz_chrome.c: libFuzzer target for the Chrome Trace Event Format importer
 * (src/import/chrome/) and the Chrome exporter (src/export/chrome_export.c). Any input
 * must import without a crash, a leak or undefined behaviour into a trace that keeps
 * the invariants (activities in order, no overlap per worker), whose critical path adds
 * up; and exporting that trace and importing the export must give the same workers,
 * activities (times, type, operator) and messages (the round trip docs/export.md
 * promises). Seeds: tests/fuzz/corpus/chrome/. */
#include "trace_fuzz.h"
#include "longpole/export/chrome_export.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static lp_trace *import(const void *data, size_t n, lp_diags *ds)
{
    lp_error err;
    lp_builder *b;
    lp_trace *t = NULL;
    if (lp_builder_new(&b, ds, NULL, &err))
        return NULL;
    lp_input *in;
    if (lp_input_open_mem(&in, data, n, "fuzz.json", &err)) {
        lp_builder_free(b);
        return NULL;
    }
    lp_status st = lp_builder_source(b, "fuzz.json", &err);
    if (!st)
        st = lp_importer_find("chrome")->read(b, in, NULL, &err);
    lp_input_close(in);
    if (st) {
        lp_builder_free(b);
        return NULL;
    }
    if (lp_builder_finish(b, &t, &err))
        return NULL;
    return t;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_trace *t = import(data, n, &ds);
    if (!t)
        goto out;
    fuzz_trace_invariants(t);
    lp_pag g;
    lp_cpath cp;
    int have_cp = 0;
    if (lp_pag_build(t, &g, &err) == LP_OK) {
        if (lp_cpath_compute(&g, &cp, &err) == LP_OK) {
            int64_t s = 0;
            for (size_t i = 0; i < cp.n; i++)
                s += cp.e[i].end - cp.e[i].start;
            FUZZ_CHECK(s == cp.total);
            have_cp = 1;
        }
        lp_pag_release(&g);
    }
    fuzz_trace_lptb_roundtrip(t);
    /* the round trip through the exporter */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
        lp_chrome_export_opts o;
        memset(&o, 0, sizeof o);
        o.cp = have_cp ? &cp : NULL;
        lp_status st = lp_chrome_export(t, f, &o, &err);
        fclose(f);
        if (st == LP_OK) {
            lp_diags ds2;
            lp_diags_init(&ds2, 4);
            lp_trace *t2 = import(buf, len, &ds2);
            FUZZ_CHECK(t2 != NULL);
            FUZZ_CHECK(ds2.nerrors == 0);
            fuzz_trace_same(t, t2);
            lp_trace_free(t2);
            lp_diags_release(&ds2);
        }
        free(buf);
    }
    if (have_cp)
        lp_cpath_release(&cp);
    lp_trace_free(t);
out:
    lp_diags_release(&ds);
    return 0;
}
