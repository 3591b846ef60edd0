/* fuzz_ctf.c: libFuzzer target for the direct CTF decoder (src/import/kernel/ctf_meta.c,
 * ctf_pkt.c) and the host builder: the input is TSDL metadata text (or metadata
 * packets), a NUL, then the bytes of one stream file. Any input decodes without a crash,
 * a hang, a leak or undefined behaviour, to an error or to one host whose events are in
 * time order on CPUs below ncpus, whose LP_KEV_OTHER count adds up and whose strings are
 * in the table; decoding the same bytes again gives the same events.
 * Seeds: tests/fuzz/corpus/ctf/ (written by `test_ctfpkt --seeds DIR`). */
#include "import/kernel/kint.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static lp_ktrace *decode(const unsigned char *data, size_t n, lp_diags *ds)
{
    const unsigned char *z = memchr(data, 0, n);
    size_t nm = z ? (size_t)(z - data) : n;
    const unsigned char *s = z ? z + 1 : data + n;
    size_t ns = z ? n - nm - 1 : 0;
    lp_ktrace *kt;
    lp_error err;
    if (lp_ktrace_new(&kt, &err))
        return NULL;
    khb b;
    khb_init(&b, kt, ds, "fuzz");
    lp_status st = lp_kctf_direct_mem(&b, (const char *)data, nm, s, ns, &err);
    if (!st)
        st = khb_finish(&b, &err);
    else
        khb_release(&b);
    if (st) {
        lp_ktrace_free(kt);
        return NULL;
    }
    return kt;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_ktrace *kt = decode(data, n, &ds);
    if (kt) {
        CHECK_INVARIANT(kt->nhosts == 1);
        const lp_khost *h = &kt->host[0];
        uint64_t other = 0;
        for (uint64_t i = 0; i < h->nev; i++) {
            const lp_kev *e = &h->ev[i];
            CHECK_INVARIANT(i == 0 || h->ev[i - 1].ts <= e->ts);
            CHECK_INVARIANT(e->cpu < h->ncpus);
            CHECK_INVARIANT(e->type < LP_KEV_NTYPES);
            CHECK_INVARIANT(e->name == LP_STR_NONE || e->name < kt->strs.n);
            CHECK_INVARIANT(e->name2 == LP_STR_NONE || e->name2 < kt->strs.n);
            other += e->type == LP_KEV_OTHER;
        }
        CHECK_INVARIANT(other == h->nother);
        lp_diags ds2;
        lp_diags_init(&ds2, 4);
        lp_ktrace *again = decode(data, n, &ds2);
        CHECK_INVARIANT(again != NULL);
        const lp_khost *g = &again->host[0];
        CHECK_INVARIANT(g->nev == h->nev && g->nbad == h->nbad && g->nlost == h->nlost);
        CHECK_INVARIANT(g->nev == 0 || memcmp(g->ev, h->ev, h->nev * sizeof *h->ev) == 0);
        lp_ktrace_free(again);
        lp_diags_release(&ds2);
        lp_ktrace_free(kt);
    }
    lp_diags_release(&ds);
    return 0;
}
