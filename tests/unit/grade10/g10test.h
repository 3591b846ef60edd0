/* g10test.h: the set-up the Grade10 tests share (test_g10_attrib.c, test_g10_replay.c,
 * test_g10_savings.c): a growing text buffer for generated OperationLogs and
 * monitoring CSVs, a uniform random number, a model parsed from text, one input read
 * from text (OperationLog, monitoring or blocking by `which`), and the phase instances
 * of a model and an OperationLog. Each helper reports its failure on stderr and returns
 * NULL or an error status, so the calling test's CHECKs fail on it. */
#ifndef LP_TEST_G10TEST_H
#define LP_TEST_G10TEST_H

#include "t.h"
#include "tutil.h"
#include "longpole/import/grade10.h"
#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/exec.h"
#include "longpole/analysis/grade10/attrib.h"

#include <stdarg.h>

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->p && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)k + 64;
        b->p = realloc(b->p, b->cap);
    }
}

/* Uniform in [0, 1). */
static inline double rnd(uint64_t *s) { return (double)(t_splitmix(s) >> 11) / 9007199254740992.0; }

/* The model of `text`, or NULL (the error on stderr). */
static inline lp_g10_model *model_of(const char *text)
{
    lp_diags ds;
    lp_diags_init(&ds, 20);
    lp_error err;
    lp_g10_model *m = NULL;
    if (lp_g10_model_parse(&m, text, strlen(text), "m.g10", &ds, &err))
        fprintf(stderr, "model: %s\n", err.msg);
    lp_diags_release(&ds);
    return m;
}

enum { G10T_OPLOG, G10T_MONITOR, G10T_BLOCKING };

/* Reads `text` into d as an OperationLog, monitoring CSV or blocking CSV (`which`). */
static inline lp_status g10t_load(lp_g10_data *d, const char *text, int which, lp_diags *ds, lp_error *err)
{
    static const char *const name[3] = {"ops.log", "mon.csv", "blk.csv"};
    lp_input *in;
    lp_g10_read_opts o = {1};
    lp_status st = lp_input_open_mem(&in, text, strlen(text), name[which], err);
    if (st)
        return st;
    st = which == G10T_OPLOG     ? lp_g10_read_oplog(d, in, &o, ds, err)
         : which == G10T_MONITOR ? lp_g10_read_monitor(d, in, &o, ds, err)
                                 : lp_g10_read_blocking(d, in, &o, ds, err);
    lp_input_close(in);
    return st;
}

/* The phase instances of the OperationLog `ops` under m, or NULL; d and ds are
 * initialised either way (the caller releases them). */
static inline lp_g10_exec *exec_of(const lp_g10_model *m, const char *ops, lp_g10_data *d, lp_diags *ds)
{
    lp_error err;
    lp_g10_exec *x = NULL;
    lp_diags_init(ds, 50);
    if (lp_g10_data_init(d, &err))
        return NULL;
    if (g10t_load(d, ops, G10T_OPLOG, ds, &err) || lp_g10_exec_from_events(m, d, ds, &x, &err))
        fprintf(stderr, "exec: %s\n", err.msg);
    return x;
}

#endif
