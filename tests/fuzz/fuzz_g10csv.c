/* fuzz_g10csv.c: libFuzzer target for the Grade10 monitoring and blocking CSV readers
 * (src/import/grade10/monitor_csv.c, blocking_csv.c) and the attribution fed by them:
 * the input is read both ways, then attributed (both modes) against a fixed model and
 * run; the readers' invariants (series strictly increasing, start <= end) and the
 * attribution's (each timeline's usage within capacity, its consumption accounted
 * for) must hold. Seeds: tests/fuzz/corpus/g10csv/. */
#include "longpole/import/grade10.h"
#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/exec.h"
#include "longpole/analysis/grade10/attrib.h"
#include "longpole/analysis/grade10/issues.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static const char model[] = "grade10-model 1\nslice 1ms\n"
                            "phase /S sequential s\nphase /S/T concurrent t\nphase /S/M after T\n"
                            "resource cpu consumable metric=cpu sample=counter capacity=2\n"
                            "resource net consumable metric=net sample=mean capacity=100\n"
                            "resource gc blocking\n"
                            "rule /S/T cpu exact 1\nrule /S/M net variable 2\nrule /S/T gc full\n";
static const char ops[] = "time=0, event=start, phase=T, s=0, t=0\ntime=5000000, event=end, phase=T, s=0, t=0\n"
                          "time=1000000, event=start, phase=T, s=0, t=1\ntime=3500000, event=end, phase=T, s=0, t=1\n"
                          "time=5000000, event=start, phase=M, s=0\ntime=9000000, event=end, phase=M, s=0\n"
                          "time=9000000, event=start, phase=T, s=1, t=0\ntime=9100000, event=end, phase=T, s=1, t=0\n";

static void read_with(lp_g10_data *d, lp_status (*fn)(lp_g10_data *, lp_input *, const lp_g10_read_opts *, lp_diags *,
                                                      lp_error *),
                      const unsigned char *data, size_t n, lp_diags *ds)
{
    lp_input *in;
    lp_error err;
    lp_g10_read_opts o = {0};
    if (lp_input_open_mem(&in, data, n, "fuzz.csv", &err) == LP_OK) {
        fn(d, in, &o, ds, &err);
        lp_input_close(in);
    }
}

static void attribute(const lp_g10_model *m, const lp_g10_exec *x, const lp_g10_data *d, int mode, lp_diags *ds)
{
    lp_error err;
    lp_g10_attr *a = NULL;
    lp_g10_opts o = {mode, 0, 1};
    if (lp_g10_attribute(m, x, d, &o, ds, &a, &err) != LP_OK)
        return;
    for (uint32_t k = 0; k < a->ntl; k++) {
        const lp_g10_tl *t = &a->tl[k];
        double sum = 0;
        for (uint32_t s = 0; s < t->nseg; s++) {
            CHECK_INVARIANT(t->x[s] >= 0 && t->u[s] <= t->capacity * (1 + 1e-9) && t->x[s] <= t->u[s] * (1 + 1e-9) + 1e-12);
            sum += t->u[s] * ((double)t->bound[s + 1] - (double)t->bound[s]) / 1e9;
        }
        if (isfinite(t->consumed) && t->consumed < 1e12)
            CHECK_INVARIANT(fabs(sum + t->clipped - t->consumed) <= 1e-6 * (1 + t->consumed));
    }
    lp_g10_issues is;
    if (lp_g10_issues_find(a, -1, &is, &err) == LP_OK) {
        for (size_t i = 0; i < is.n; i++)
            CHECK_INVARIANT(is.v[i].makespan <= is.baseline + (int64_t)x->n && is.v[i].makespan >= 0);
        lp_g10_issues_release(&is);
    }
    lp_g10_attr_free(a);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_g10_data d;
    lp_g10_model *m = NULL;
    if (lp_g10_data_init(&d, &err) || lp_g10_model_parse(&m, model, sizeof model - 1, "m.g10", &ds, &err))
        abort();
    read_with(&d, lp_g10_read_monitor, data, n, &ds);
    read_with(&d, lp_g10_read_blocking, data, n, &ds);
    for (size_t i = 0; i < d.nseries; i++)
        for (size_t k = 1; k < d.series[i].n; k++)
            CHECK_INVARIANT(d.series[i].time[k] > d.series[i].time[k - 1]);
    for (size_t i = 0; i < d.nblk; i++)
        CHECK_INVARIANT(d.blk[i].start <= d.blk[i].end);
    lp_input *in;
    lp_g10_read_opts o = {1};
    if (lp_input_open_mem(&in, ops, sizeof ops - 1, "ops.log", &err) == LP_OK) {
        lp_g10_read_oplog(&d, in, &o, &ds, &err);
        lp_input_close(in);
    }
    lp_g10_exec *x = NULL;
    if (lp_g10_exec_from_events(m, &d, &ds, &x, &err) == LP_OK) {
        attribute(m, x, &d, LP_G10_SLICES, &ds);
        attribute(m, x, &d, LP_G10_EVENTS, &ds);
        lp_g10_exec_free(x);
    }
    lp_g10_model_free(m);
    lp_g10_data_release(&d);
    lp_diags_release(&ds);
    return 0;
}
