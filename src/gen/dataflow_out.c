/* dataflow_out.c: the direct writers' ordered output (dataflow_int.h, df_out): an output
 * cut into numbered blocks runs through a queue of the thread pool (base/pool.h). Block
 * b is formatted by a worker into the buffer of the queue slot it was given, and the
 * slot's delivery hands it to the sink, in block order, on the calling thread.
 *
 * Invariants: a slot's buffer only grows (freed and allocated again, never copied), so
 * memory is a few blocks' bounds; the queue holds at most 2 * workers + 2 blocks (one
 * buffer without workers); the sink sees blocks 0, 1, ... each once.
 */
#include "dataflow_int.h"
#include "longpole/base/alloc.h"

typedef struct oslot {
    size_t b;          /* the block in this slot */
    char *buf;
    size_t len, cap;
} oslot;

typedef struct orun {
    const df_out *o;
    oslot *slots;
} orun;

static lp_status format_job(void *ctx, size_t i, unsigned thread, lp_error *err)
{
    orun *r = ctx;
    oslot *sl = &r->slots[i];
    size_t need = r->o->bound(r->o->ctx, sl->b) + DF_OUT_SLACK;
    if (need > sl->cap) {
        lp_free(sl->buf);
        sl->buf = lp_malloc(need);
        sl->cap = sl->buf ? need : 0;
        if (!sl->buf)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    sl->len = r->o->format(r->o->ctx, sl->b, sl->buf);
    return LP_OK;
}

static lp_status sink_slot(void *ctx, size_t i, lp_error *err)
{
    orun *r = ctx;
    const oslot *sl = &r->slots[i];
    return r->o->sink(r->o->ctx, sl->b, sl->buf, sl->len, err);
}

lp_status df_out_run(const df_out *o, lp_pool *pool, lp_error *err)
{
    orun r = {o, NULL};
    lp_poolq *q = NULL;
    lp_status st = lp_poolq_new(&q, pool, 2 * (size_t)lp_pool_workers(pool) + 2, format_job, sink_slot, &r, err);
    if (st)
        return st;
    size_t n = lp_poolq_slots(q);
    r.slots = lp_calloc(n, sizeof *r.slots);
    if (!r.slots)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t b = 0; b < o->nblocks && !st; b++) {
        size_t i;
        if (!(st = lp_poolq_reserve(q, &i, err))) {
            r.slots[i].b = b;
            st = lp_poolq_submit(q, err);
        }
    }
    if (!st)
        st = lp_poolq_finish(q, err);
    lp_poolq_free(q);
    if (r.slots)
        for (size_t i = 0; i < n; i++)
            lp_free(r.slots[i].buf);
    lp_free(r.slots);
    return st;
}
