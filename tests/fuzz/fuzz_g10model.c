/* fuzz_g10model.c: libFuzzer target for the Grade10 model reader
 * (src/analysis/grade10/model_read.c, model.c): any input must be read or refused
 * without a crash, a leak or undefined behaviour; an accepted model keeps its
 * invariants (parents before children, siblings ordered by `after`, every rule
 * resolved). Seeds: tests/fuzz/corpus/g10model/. */
#include "longpole/analysis/grade10/model.h"
#include <stdlib.h>

#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_g10_model *m = NULL;
    if (lp_g10_model_parse(&m, (const char *)data, n, "fuzz.g10", &ds, &err) == LP_OK) {
        CHECK_INVARIANT(m->ntypes >= 1 && m->type[0].parent == LP_G10_NONE);
        for (uint32_t t = 1; t < m->ntypes; t++)
            CHECK_INVARIANT(m->type[t].parent < t && m->type[t].depth == m->type[m->type[t].parent].depth + 1);
        for (uint32_t a = 0; a < m->nafter; a++)
            CHECK_INVARIANT(m->type[m->after[a].before].parent == m->type[m->after[a].after].parent);
        for (uint32_t p = 0; p < m->ntypes; p++) { /* `after` respected by the sibling order */
            uint32_t f = m->sib_first[p], k = 0;
            for (uint32_t c = m->type[p].first_child; c != LP_G10_NONE; c = m->type[c].next_sibling)
                k++;
            for (uint32_t a = 0; a < m->nafter; a++) {
                if (m->type[m->after[a].after].parent != p)
                    continue;
                uint32_t ib = k, ia = k;
                for (uint32_t i = 0; i < k; i++) {
                    if (m->sib_order[f + i] == m->after[a].before)
                        ib = i;
                    if (m->sib_order[f + i] == m->after[a].after)
                        ia = i;
                }
                CHECK_INVARIANT(ib < ia);
            }
        }
        for (size_t i = 0; i < (size_t)m->ntypes * m->nres; i++)
            CHECK_INVARIANT(m->rkind[i] <= LP_G10_RULE_FULL);
        lp_g10_model_free(m);
    } else {
        CHECK_INVARIANT(m == NULL);
    }
    lp_diags_release(&ds);
    return 0;
}
