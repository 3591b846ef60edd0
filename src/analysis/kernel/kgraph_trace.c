/* kgraph_trace.c: the execution graph in the activity-graph model (MODEL.md), through
 * an lp_builder, so the whole-trace critical path, snapshots, breakdowns, reports and
 * exports of lp_trace all work on kernel traces (mapping in kgraph.h, lp_kgraph_feed).
 *
 * One pass over the workers, edges and links; attribute lists are made once per worker,
 * per reason and per link kind and shared. Zero-length edges carry no time and are left
 * out (the model's activities are intervals); links are messages even when they take no
 * time (a wake-up), so the model's critical path can follow them.
 */
#include "longpole/analysis/kernel/kgraph.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <string.h>

typedef struct feed {
    const lp_kgraph *g;
    lp_builder *b;
    lp_str key_host, key_tid, key_cpu, key_comm, key_reason, key_kind;
    uint16_t type[LP_KS_COUNT];
    uint16_t waiting;
    uint32_t reason_attrs[LP_KR_COUNT];
    uint32_t kind_attrs[LP_KL_COUNT];
    uint32_t *wid;
    uint32_t fresh; /* the newest builder worker id so far */
} feed;

static lp_status str(feed *f, const char *s, lp_str *id, lp_error *err)
{
    if (lp_strtab_intern(lp_builder_strtab(f->b), s, strlen(s), id))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    return LP_OK;
}

static lp_status pair_list(feed *f, lp_str key, const char *val, uint32_t *list, lp_error *err)
{
    lp_str kv[2] = {key, 0};
    lp_status st = str(f, val, &kv[1], err);
    return st ? st : lp_builder_attrs(f->b, kv, 1, list, err);
}

static lp_status setup(feed *f, lp_error *err)
{
    static const char *const types[LP_KS_COUNT] = {NULL, "running", "preempted", "wait-cpu", "blocked", "unknown"};
    lp_status st;
    if ((st = str(f, "host", &f->key_host, err)) || (st = str(f, "tid", &f->key_tid, err)) ||
        (st = str(f, "cpu", &f->key_cpu, err)) || (st = str(f, "comm", &f->key_comm, err)) ||
        (st = str(f, "reason", &f->key_reason, err)) || (st = str(f, "kind", &f->key_kind, err)))
        return st;
    for (unsigned s = 1; s < LP_KS_COUNT; s++)
        if ((st = lp_builder_type(f->b, types[s], strlen(types[s]), &f->type[s], err)))
            return st;
    f->waiting = LP_TYPE_WAITING;
    for (unsigned r = 1; r < LP_KR_COUNT; r++)
        if ((st = pair_list(f, f->key_reason, lp_kreason_name(r), &f->reason_attrs[r], err)))
            return st;
    for (unsigned k = 0; k < LP_KL_COUNT; k++)
        if ((st = pair_list(f, f->key_kind, lp_klink_name(k), &f->kind_attrs[k], err)))
            return st;
    return LP_OK;
}

static lp_status worker(feed *f, uint32_t w, lp_error *err)
{
    const lp_kgraph *g = f->g;
    const lp_kworker *k = &g->w[w];
    const char *name = lp_kgraph_worker_name(g, w);
    lp_status st = lp_builder_worker(f->b, name, strlen(name), &f->wid[w], err);
    if (st)
        return st;
    if (w > 0 && f->wid[w] <= f->fresh) /* builder ids come in order: a name seen before has an older one */
        return lp_error_set(err, LP_ERR_FORMAT, "workers share the name '%s' (a damaged graph)", name);
    f->fresh = f->wid[w];
    char num[24];
    snprintf(num, sizeof num, "%d", k->tid > 0 ? k->tid : k->cpu);
    lp_str kv[6] = {f->key_host, 0, k->tid > 0 ? f->key_tid : f->key_cpu, 0, f->key_comm, 0};
    uint32_t list;
    if ((st = str(f, lp_kgraph_str(g, g->host[k->host]), &kv[1], err)) || (st = str(f, num, &kv[3], err)) ||
        (st = str(f, lp_kgraph_str(g, k->comm), &kv[5], err)) || (st = lp_builder_attrs(f->b, kv, 3, &list, err)))
        return st;
    return lp_builder_worker_attrs(f->b, f->wid[w], list, 0, err);
}

static lp_status edges(feed *f, uint32_t w, lp_error *err)
{
    const lp_kgraph *g = f->g;
    for (uint32_t v = g->voff[w]; v + 1 < g->voff[w + 1]; v++) {
        uint8_t s = g->vstate[v];
        if (s == LP_KS_NONE || g->vt[v + 1] == g->vt[v])
            continue;
        uint16_t type = f->type[s];
        uint32_t attrs = 0;
        if (s == LP_KS_BLOCKED) {
            attrs = f->reason_attrs[g->vreason[v]];
            if (g->vin[v + 1] != LP_NONE32)
                type = f->waiting; /* ended by a message: the model's wait */
        } else if (s == LP_KS_UNKNOWN) {
            type = LP_TYPE_UNKNOWN;
        }
        lp_status st = lp_builder_activity(f->b, f->wid[w], g->vt[v], g->vt[v + 1], type, LP_STR_NONE, attrs,
                                           (uint64_t)v + 1, err);
        if (st)
            return st;
    }
    return LP_OK;
}

lp_status lp_kgraph_feed(const lp_kgraph *g, lp_builder *b, lp_error *err)
{
    feed f;
    memset(&f, 0, sizeof f);
    f.g = g;
    f.b = b;
    f.wid = lp_malloc((g->nworkers ? g->nworkers : 1) * sizeof *f.wid);
    if (!f.wid)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_status st = setup(&f, err);
    for (uint32_t w = 0; !st && w < g->nworkers; w++)
        st = worker(&f, w, err);
    for (uint32_t w = 0; !st && w < g->nworkers; w++)
        st = edges(&f, w, err);
    for (uint32_t l = 0; !st && l < g->nlinks; l++) {
        uint32_t a = g->lfrom[l], z = g->lto[l];
        st = lp_builder_message(b, f.wid[lp_kgraph_vworker(g, a)], g->vt[a], f.wid[lp_kgraph_vworker(g, z)], g->vt[z],
                                l, f.kind_attrs[g->lkind[l]], (uint64_t)l + 1, err);
    }
    lp_free(f.wid);
    return st;
}

lp_status lp_kgraph_to_trace(const lp_kgraph *g, lp_diags *diags, lp_trace **out, lp_error *err)
{
    lp_builder *b;
    lp_status st = lp_builder_new(&b, diags, NULL, err);
    if (st)
        return st;
    if ((st = lp_builder_source(b, "execution graph", err)) || (st = lp_kgraph_feed(g, b, err))) {
        lp_builder_free(b);
        return st;
    }
    return lp_builder_finish(b, out, err);
}
