/* stacks_fuzz.h: the body of the call-stack readers' fuzz targets (fuzz_perfscript,
 * fuzz_collapsed): any input must read without a crash, a leak or undefined behaviour
 * into a sample table that keeps its invariants (sorted by start, start <= end, every
 * stack and frame id valid), and every sample's resource must be a vector summing to 1. */
#ifndef LP_STACKS_FUZZ_H
#define LP_STACKS_FUZZ_H

#include "fuzz_check.h"
#include "longpole/analysis/crystalperf/resource.h"
#include "longpole/codec/io.h"

#include <math.h>

typedef lp_status (*stacks_reader)(lp_stacks *s, lp_input *in, const char *name, lp_diags *ds, lp_error *err);

/* The sample table's invariants and the resource vectors of its samples. */
static void stacks_check(const lp_stacks *s)
{
    for (uint64_t i = 0; i < s->n; i++) {
        FUZZ_CHECK(s->start[i] <= s->end[i]);
        FUZZ_CHECK(i == 0 || s->start[i - 1] <= s->start[i]);
        FUZZ_CHECK(s->state[i] < LP_SS_N);
        FUZZ_CHECK(s->stack[i] == UINT32_MAX || s->stack[i] < s->nstacks);
    }
    for (uint32_t k = 0; k < s->nstacks; k++)
        for (uint32_t f = s->soff[k]; f < s->soff[k + 1]; f++)
            FUZZ_CHECK(s->sfr[f] < s->nframes);
    lp_cpf_attr a;
    lp_error err;
    if (lp_cpf_attr_init(&a, s, NULL, &err) == LP_OK) {
        for (uint64_t i = 0; i < s->n; i++) {
            double v[LP_RES_N], sum = 0;
            uint32_t fr;
            lp_cpf_sample(&a, i, v, &fr);
            for (int r = 0; r < LP_RES_N; r++)
                sum += v[r];
            FUZZ_CHECK(fabs(sum - 1) < 1e-9);
        }
        lp_cpf_attr_release(&a);
    }
}

static int stacks_fuzz_one(stacks_reader read, const unsigned char *data, size_t n)
{
    lp_diags ds;
    lp_diags_init(&ds, 4);
    lp_error err;
    lp_stacks s;
    lp_stacks_init(&s);
    lp_input *in;
    if (lp_input_open_mem(&in, data, n, "fuzz.txt", &err) == LP_OK) {
        lp_status st = read(&s, in, "fuzz.txt", &ds, &err);
        lp_input_close(in);
        if (st == LP_OK)
            stacks_check(&s);
    }
    lp_stacks_release(&s);
    lp_diags_release(&ds);
    return 0;
}

#endif
