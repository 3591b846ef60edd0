/* tutil.h: helpers shared by unit tests: load a trace from text, find diagnostics. */
#ifndef LP_TEST_TUTIL_H
#define LP_TEST_TUTIL_H

#include "longpole/longpole.h"
#include <string.h>

/* splitmix64: the tests' seeded random numbers (*state is the seed, then the state). */
static inline uint64_t t_splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Load .lpt text from a string; diagnostics go to ds (initialised here). NULL on failure. */
static inline lp_trace *load_text(const char *text, lp_diags *ds)
{
    lp_diags_init(ds, 100);
    lp_error err;
    lp_builder *b;
    if (lp_builder_new(&b, ds, NULL, &err))
        return NULL;
    lp_input *in;
    if (lp_input_open_mem(&in, text, strlen(text), "t.lpt", &err)) {
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

/* Does any kept diagnostic have this rule and line (line 0 = any)? */
static inline int has_diag(const lp_diags *ds, lp_rule rule, unsigned long long line)
{
    for (size_t i = 0; i < ds->nkept; i++)
        if (ds->kept[i].rule == rule && (!line || ds->kept[i].line == line))
            return 1;
    return 0;
}

/* Write a trace as text into a malloc'd string. */
static inline char *write_text(const lp_trace *t)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    lp_error err;
    if (lp_lpt_write(t, f, &err)) {
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    return buf;
}

#endif
