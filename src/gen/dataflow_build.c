/* dataflow_build.c: lp_gen_dataflow_run (gen.h): the dataflow simulation's log
 * (dataflow_int.h) handed to lp_builder, so the generated trace passes every rule of
 * the model that a trace read from a file would; and the trace's names and attribute
 * lists (df_names), which the direct binary writer (dataflow_bin.c) makes the same way.
 *
 * Invariants: workers are declared in simulation order before any record, so builder
 * worker ids equal simulation indices; messages reach the builder in chunks while the
 * simulation runs (the log's message buffer is reused, so memory stays that of the
 * trace), activities at the end grouped by worker (which spares the builder a
 * permutation of every column). Any builder diagnostic is a generator bug and fails the
 * run with LP_ERR_DATA.
 */
#include "dataflow_int.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <string.h>

#define MSG_CHUNK 65536 /* messages handed to the builder at a time */

typedef struct bctx {
    df_names nm;
    uint64_t line;               /* record number, for the builder's diagnostics */
} bctx;

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static lp_status intern(df_names *c, const char *str, lp_str *id, lp_error *err)
{
    if (lp_strtab_intern(lp_builder_strtab(c->b), str, strlen(str), id))
        return nomem(err);
    return LP_OK;
}

/* Attribute list "bytes=<bytes> kind=<kind>". */
static lp_status make_attrs(df_names *c, uint64_t bytes, lp_str kind, uint32_t *list, lp_error *err)
{
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%llu", (unsigned long long)bytes);
    lp_str v;
    if (lp_strtab_intern(lp_builder_strtab(c->b), buf, (size_t)len, &v))
        return nomem(err);
    lp_str kv[4] = {c->k_bytes, v, c->k_kind, kind};
    return lp_builder_attrs(c->b, kv, 2, list, err);
}

lp_status df_names_setup(df_names *c, lp_builder *b, const df_log *log, lp_error *err)
{
    memset(c, 0, sizeof *c);
    c->b = b;
    c->o = log->o;
    lp_status st = lp_builder_source(c->b, "dataflow", err);
    for (uint32_t k = 0; k < c->o->nops && !st; k++) /* the string table's order: as it always was */
        st = intern(c, c->o->ops[k].name, &c->opname[k], err);
    for (uint32_t i = 0; i < log->nw + (uint32_t)log->has_jm && !st; i++) {
        char name[64];
        size_t len = df_worker_name(log, i, name);
        uint32_t id;
        st = lp_builder_worker(c->b, name, len, &id, err);
        if (!st && id != i)
            st = lp_error_set(err, LP_ERR_DATA, "dataflow generator bug: worker '%s' got id %u", name, id);
    }
    if (st)
        return st;
    lp_str v[DF_NKINDS];
    static const char *const kinds[DF_NKINDS] = {"data", "credit", "barrier", "ack", "timer"};
    static const uint64_t bytes[DF_NKINDS] = {0, DF_CREDIT_BYTES, DF_CTRL_BYTES, DF_CTRL_BYTES, 0};
    if ((st = intern(c, "bytes", &c->k_bytes, err)) || (st = intern(c, "kind", &c->k_kind, err)))
        return st;
    for (int k = 0; k < DF_NKINDS; k++)
        if ((st = intern(c, kinds[k], &v[k], err)))
            return st;
    c->v_data = v[DF_DATA];
    for (int k = DF_CREDIT; k < DF_NKINDS; k++)
        if ((st = make_attrs(c, bytes[k], v[k], &c->kattr[k], err)))
            return st;
    c->dattr = lp_calloc((size_t)c->o->batch + 1, sizeof *c->dattr);
    return c->dattr ? LP_OK : nomem(err);
}

lp_status df_names_data(df_names *c, uint32_t n, uint32_t *list, lp_error *err)
{
    if (n > c->o->batch)
        return lp_error_set(err, LP_ERR_DATA, "dataflow generator bug: a buffer of %u records", n);
    if (!c->dattr[n]) {
        lp_status st = make_attrs(c, (uint64_t)n * c->o->record_bytes, c->v_data, &c->dattr[n], err);
        if (st)
            return st;
    }
    *list = c->dattr[n];
    return LP_OK;
}

void df_names_release(df_names *c)
{
    lp_free(c->dattr);
    c->dattr = NULL;
}

/* Hand the logged messages to the builder and empty the log's buffer. */
static lp_status feed_msgs(void *ctx, df_log *log, lp_error *err)
{
    bctx *c = ctx;
    lp_status st = LP_OK;
    df_rd rd;
    df_rd_start(&rd, log);
    for (size_t i = 0; i < log->nmsgs && !st; i++) {
        df_msg msg;
        const df_msg *m = &msg;
        df_rd_msg(&rd, &msg);
        uint32_t kind = m->kind, attrs;
        if (kind == DF_DATA) {
            if ((st = df_names_data(&c->nm, m->n, &attrs, err)))
                break;
        } else {
            attrs = c->nm.kattr[kind];
        }
        lp_builder *b = c->nm.b;
        if (c->nm.o->halves) {
            st = lp_builder_send(b, m->from, m->sent, m->to, m->id, attrs, ++c->line, err);
            if (!st)
                st = lp_builder_recv(b, m->to, m->recv, m->from, m->id, 0, ++c->line, err);
        } else {
            st = lp_builder_message(b, m->from, m->sent, m->to, m->recv, m->id, attrs, ++c->line, err);
        }
    }
    df_log_drop(log);
    return st;
}

/* Hand the activities to the builder, worker by worker, freeing each worker's words. */
static lp_status feed_acts(bctx *c, df_log *log, lp_error *err)
{
    lp_status st = LP_OK;
    for (uint32_t i = 0; i <= log->nw && !st; i++) {
        df_acts *a = &log->acts[i];
        uint32_t k = df_worker_op(log, i);
        lp_str op = k < c->nm.o->nops ? c->nm.opname[k] : LP_STR_NONE;
        int64_t last = 0;
        for (size_t j = 0; j < a->n && !st;) {
            int64_t start, end;
            uint32_t type;
            j = df_act_get(a->wd, j, &last, &start, &end, &type);
            st = lp_builder_activity(c->nm.b, i, start, end, (uint16_t)type, op, 0, ++c->line, err);
        }
        lp_free(a->wd);
        lp_free(a->marks);
        a->wd = NULL;
        a->marks = NULL;
        a->n = a->cap = a->nacts = a->nmarks = a->markcap = 0;
    }
    return st;
}

lp_status lp_gen_dataflow_run(const lp_gen_dataflow *o, lp_trace **out, lp_error *err)
{
    if (!o || !out)
        return lp_error_set(err, LP_ERR_ARG, "dataflow: no options or no output");
    *out = NULL;
    lp_status st = df_validate(o, err);
    if (st)
        return st;
    lp_diags ds;
    lp_diags_init(&ds, 10);
    bctx c;
    memset(&c, 0, sizeof c);
    df_log log;
    lp_builder *b = NULL;
    if ((st = df_log_init(&log, o, err)) || (st = lp_builder_new(&b, &ds, NULL, err))) {
        df_log_release(&log);
        lp_diags_release(&ds);
        return st;
    }
    if (!(st = df_names_setup(&c.nm, b, &log, err)) && !(st = df_simulate(&log, feed_msgs, &c, MSG_CHUNK, err)) &&
        !(st = feed_acts(&c, &log, err)))
        st = feed_msgs(&c, &log, err);
    df_log_release(&log);
    df_names_release(&c.nm);
    if (st) {
        lp_builder_free(b);
        lp_diags_release(&ds);
        return st;
    }
    lp_trace *t;
    st = lp_builder_finish(b, &t, err);
    if (st) {
        lp_diags_release(&ds);
        return st;
    }
    if (ds.nerrors || ds.nwarnings) {
        char msg[512] = "no message kept";
        if (ds.nkept)
            lp_diag_format(msg, sizeof msg, &ds.kept[0]);
        st = lp_error_set(err, LP_ERR_DATA, "dataflow generator bug: %llu errors, %llu warnings from the builder: %s",
                          (unsigned long long)ds.nerrors, (unsigned long long)ds.nwarnings, msg);
        lp_trace_free(t);
        lp_diags_release(&ds);
        return st;
    }
    lp_diags_release(&ds);
    *out = t;
    return LP_OK;
}
