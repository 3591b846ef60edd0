/* fuzz_chrome.c: libFuzzer target for the Chrome Trace Event Format importer
 * (src/import/chrome/) and the Chrome exporter (src/export/chrome_export.c). Any input
 * must import without a crash, a leak or undefined behaviour into a trace that keeps
 * the invariants (activities in order, no overlap per worker), whose critical path adds
 * up; and exporting that trace and importing the export must give the same workers,
 * activities (times, type, operator) and messages (the round trip docs/export.md
 * promises). Seeds: tests/fuzz/corpus/chrome/. */
#include "longpole/longpole.h"
#include "longpole/export/chrome_export.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

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

/* Worker of b with the name of a's worker w (names may hold NUL bytes). */
static uint32_t find_worker(const lp_trace *a, uint32_t w, const lp_trace *b)
{
    const char *n = lp_trace_worker_name(a, w);
    uint32_t len = lp_strtab_len(&a->strs, a->wname[w]);
    for (uint32_t v = 0; v < b->nworkers; v++)
        if (lp_strtab_len(&b->strs, b->wname[v]) == len && !memcmp(lp_trace_worker_name(b, v), n, len))
            return v;
    return LP_NONE32;
}

static void same(const lp_trace *a, const lp_trace *b)
{
    CHECK_INVARIANT(a->nacts - a->ngaps == b->nacts - b->ngaps);
    CHECK_INVARIANT(a->nmsgs == b->nmsgs);
    for (uint32_t w = 0; w < a->nworkers; w++) {
        uint32_t v = find_worker(a, w, b);
        uint64_t i = a->wfirst[w], k;
        if (v == LP_NONE32) { /* a worker without activities may vanish */
            for (; i < a->wfirst[w + 1]; i++)
                CHECK_INVARIANT(a->aflags[i] & LP_ACT_GAP);
            continue;
        }
        k = b->wfirst[v];
        for (;; i++, k++) {
            while (i < a->wfirst[w + 1] && (a->aflags[i] & LP_ACT_GAP))
                i++;
            while (k < b->wfirst[v + 1] && (b->aflags[k] & LP_ACT_GAP))
                k++;
            if (i == a->wfirst[w + 1] || k == b->wfirst[v + 1]) {
                CHECK_INVARIANT(i == a->wfirst[w + 1] && k == b->wfirst[v + 1]);
                break;
            }
            CHECK_INVARIANT(a->astart[i] == b->astart[k] && a->aend[i] == b->aend[k]);
            CHECK_INVARIANT(!strcmp(lp_trace_type_name(a, a->atype[i]), lp_trace_type_name(b, b->atype[k])));
            CHECK_INVARIANT((a->aop[i] == LP_STR_NONE) == (b->aop[k] == LP_STR_NONE));
            CHECK_INVARIANT(a->aop[i] == LP_STR_NONE || !strcmp(lp_trace_str(a, a->aop[i]), lp_trace_str(b, b->aop[k])));
        }
    }
    /* messages: the same (sender, send, receiver, receive) in total */
    int64_t sa = 0, sb = 0;
    for (uint64_t m = 0; m < a->nmsgs; m++)
        sa += a->msend[m] * 3 + a->mrecv[m] * 7;
    for (uint64_t m = 0; m < b->nmsgs; m++)
        sb += b->msend[m] * 3 + b->mrecv[m] * 7;
    CHECK_INVARIANT(sa == sb);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_trace *t = import(data, n, &ds);
    if (!t)
        goto out;
    for (uint32_t w = 0; w < t->nworkers; w++)
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++) {
            CHECK_INVARIANT(t->astart[i] <= t->aend[i]);
            CHECK_INVARIANT(i == t->wfirst[w] || t->aend[i - 1] <= t->astart[i]);
        }
    lp_pag g;
    lp_cpath cp;
    int have_cp = 0;
    if (lp_pag_build(t, &g, &err) == LP_OK) {
        if (lp_cpath_compute(&g, &cp, &err) == LP_OK) {
            int64_t s = 0;
            for (size_t i = 0; i < cp.n; i++)
                s += cp.e[i].end - cp.e[i].start;
            CHECK_INVARIANT(s == cp.total);
            have_cp = 1;
        }
        lp_pag_release(&g);
    }
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
            CHECK_INVARIANT(t2 != NULL);
            CHECK_INVARIANT(ds2.nerrors == 0);
            same(t, t2);
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
