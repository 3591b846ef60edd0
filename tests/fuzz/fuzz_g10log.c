/* fuzz_g10log.c: libFuzzer target for the Grade10 OperationLog reader
 * (src/import/grade10/oplog.c) and the phase-instance tree built from it against a
 * fixed model (src/analysis/grade10/exec*.c), then replayed: the tree keeps its
 * invariants (preorder, subtree sizes, start <= end) and the replay of the recorded
 * durations keeps its constraints (leaf durations, children inside their parents). Seeds: tests/fuzz/corpus/g10log/. */
#include "longpole/import/grade10.h"
#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/exec.h"
#include "longpole/analysis/grade10/issues.h"
#include <stdlib.h>

#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static const char model[] = "grade10-model 1\n"
                            "phase /Load\nphase /Load/Worker concurrent worker\n"
                            "phase /Superstep sequential superstep after Load\n"
                            "phase /Superstep/Compute concurrent worker\n"
                            "phase /Superstep/Compute/Thread concurrent thread\n"
                            "phase /Superstep/Barrier after Compute\n"
                            "resource cpu consumable metric=cpu sample=mean capacity=4\n";

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_g10_data d;
    lp_g10_model *m = NULL;
    if (lp_g10_data_init(&d, &err) || lp_g10_model_parse(&m, model, sizeof model - 1, "m.g10", &ds, &err))
        abort();
    lp_input *in;
    if (lp_input_open_mem(&in, data, n, "fuzz.log", &err) == LP_OK) {
        lp_g10_read_oplog(&d, in, NULL, &ds, &err);
        lp_input_close(in);
    }
    lp_g10_exec *x = NULL;
    if (lp_g10_exec_from_events(m, &d, &ds, &x, &err) == LP_OK) {
        CHECK_INVARIANT(x->n >= 1 && x->size[0] == x->n);
        for (uint32_t i = 0; i < x->n; i++) {
            CHECK_INVARIANT(x->start[i] <= x->end[i]);
            if (i) {
                uint32_t p = x->parent[i];
                CHECK_INVARIANT(p < i && i + x->size[i] <= p + x->size[p]);
            }
        }
        lp_g10_replay rp;
        if (lp_g10_replay_init(&rp, x, &err) == LP_OK) {
            int64_t *dur = calloc(x->n, sizeof *dur);
            if (dur) {
                for (uint32_t i = 0; i < x->n; i++)
                    dur[i] = x->size[i] == 1 ? x->end[i] - x->start[i] : 0;
                int64_t *st = calloc(x->n, sizeof *st), *en = calloc(x->n, sizeof *en);
                int64_t mk = lp_g10_replay_run(&rp, dur, st, en);
                CHECK_INVARIANT(mk >= 0);
                for (uint32_t i = 0; st && en && i < x->n; i++) { /* every constraint of the replay holds */
                    CHECK_INVARIANT(st[i] <= en[i] && (x->size[i] > 1 || en[i] - st[i] == dur[i]));
                    if (i)
                        CHECK_INVARIANT(st[i] >= st[x->parent[i]] && en[i] <= en[x->parent[i]]);
                }
                free(st);
                free(en);
                free(dur);
            }
            lp_g10_replay_release(&rp);
        }
        lp_g10_exec_free(x);
    }
    lp_g10_model_free(m);
    lp_g10_data_release(&d);
    lp_diags_release(&ds);
    return 0;
}
