/* fuzz_ftrace.c: libFuzzer target for the ftrace text reader (src/import/kernel/ftrace.c
 * and the host builder khost.c): any input reads without a crash, a leak or undefined
 * behaviour into one host whose events are in time order, on CPUs below ncpus, each
 * attributed to its line's thread, and whose counts add up (every line gives at most
 * one event or one skipped record; LP_KEV_OTHER events are nother; what was reordered
 * is at most what was read); reading the same bytes again gives the same events.
 * Seeds: tests/fuzz/corpus/ftrace/. */
#include "longpole/import/kernel.h"
#include <stdlib.h>
#include <string.h>

#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_ktrace *kt = NULL, *again = NULL;
    if (lp_ktrace_read_ftrace_mem(data, n, "fuzz.ftrace", &ds, &kt, &err) != LP_OK)
        goto out;
    CHECK_INVARIANT(kt->nhosts == 1);
    const lp_khost *h = &kt->host[0];
    uint64_t lines = 1, other = 0;
    for (size_t i = 0; i < n; i++)
        lines += data[i] == '\n';
    CHECK_INVARIANT(h->nev + h->nbad <= lines);
    CHECK_INVARIANT(h->nreordered <= h->nev);
    for (uint64_t i = 0; i < h->nev; i++) {
        const lp_kev *e = &h->ev[i];
        CHECK_INVARIANT(i == 0 || h->ev[i - 1].ts <= e->ts);
        CHECK_INVARIANT(e->cpu < h->ncpus);
        CHECK_INVARIANT(e->ctx_tid >= 0);
        CHECK_INVARIANT(e->type < LP_KEV_NTYPES);
        CHECK_INVARIANT(e->name == LP_STR_NONE || e->name < kt->strs.n);
        CHECK_INVARIANT(e->name2 == LP_STR_NONE || e->name2 < kt->strs.n);
        other += e->type == LP_KEV_OTHER;
    }
    CHECK_INVARIANT(other == h->nother);
    CHECK_INVARIANT(h->bytes == n);
    lp_diags ds2;
    lp_diags_init(&ds2, 4);
    if (lp_ktrace_read_ftrace_mem(data, n, "fuzz.ftrace", &ds2, &again, &err) == LP_OK) {
        const lp_khost *g = &again->host[0];
        CHECK_INVARIANT(g->nev == h->nev && g->nbad == h->nbad && g->nlost == h->nlost);
        CHECK_INVARIANT(g->nev == 0 || memcmp(g->ev, h->ev, h->nev * sizeof *h->ev) == 0);
        CHECK_INVARIANT(ds2.nerrors + ds2.nwarnings == ds.nerrors + ds.nwarnings);
        lp_ktrace_free(again);
    }
    lp_diags_release(&ds2);
    lp_ktrace_free(kt);
out:
    lp_diags_release(&ds);
    return 0;
}
