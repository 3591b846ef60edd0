/* kgraph_builder.c: building an execution graph by hand (kgraph.h): the tests'
 * re-expressions of Trace Compass's scenarios, random graphs for the naive twin, and any
 * front end that knows its threads' states without kernel events.
 *
 * One part (kgraph_int.h) holds everything; every call checks what the event builder
 * guarantees by construction (time order on a worker, state and reason agreeing, links
 * forward in time and at most one each way per vertex), and finishing checks that the
 * links close no cycle, so a hand-built graph satisfies lp_kgraph_validate.
 */
#include "analysis/kernel/kgraph_int.h"
#include "longpole/base/alloc.h"

#include <string.h>

struct lp_kgraph_builder {
    lp_strtab strs;   /* commands (the part's strings) */
    lp_strtab hstrs;  /* host names, in host order */
    kpart part;
};

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

lp_status lp_kgraph_builder_new(lp_kgraph_builder **out, lp_error *err)
{
    lp_kgraph_builder *b = lp_calloc(1, sizeof *b);
    if (!b)
        return nomem(err);
    if (lp_strtab_init(&b->strs) || lp_strtab_init(&b->hstrs)) {
        lp_strtab_release(&b->strs);
        lp_free(b);
        return nomem(err);
    }
    kpart_init(&b->part, &b->strs);
    *out = b;
    return LP_OK;
}

void lp_kgraph_builder_free(lp_kgraph_builder *b)
{
    if (!b)
        return;
    kpart_release(&b->part);
    lp_strtab_release(&b->strs);
    lp_strtab_release(&b->hstrs);
    lp_free(b);
}

lp_status lp_kgraph_builder_host(lp_kgraph_builder *b, const char *name, uint32_t *host, lp_error *err)
{
    lp_str id;
    /* host ids are dense from 0: string id 0 is the empty string, so host i is string i+1 */
    if (!*name)
        return lp_error_set(err, LP_ERR_ARG, "a host needs a name");
    if (lp_strtab_intern(&b->hstrs, name, strlen(name), &id))
        return nomem(err);
    *host = id - 1;
    return LP_OK;
}

lp_status lp_kgraph_builder_worker(lp_kgraph_builder *b, uint32_t host, int32_t tid, int32_t cpu, const char *comm,
                                   uint32_t *w, lp_error *err)
{
    if (host + 1 >= b->hstrs.n)
        return lp_error_set(err, LP_ERR_ARG, "worker on unknown host %u", host);
    if (tid < -1 || (tid <= 0) != (cpu >= 0))
        return lp_error_set(err, LP_ERR_ARG, "worker tid %d: a thread has no cpu, an idle (0) or kernel (-1) "
                            "worker has one", tid);
    lp_str c = LP_STR_NONE;
    if (comm && lp_strtab_intern(&b->strs, comm, strlen(comm), &c))
        return nomem(err);
    uint32_t id = kpart_worker(&b->part, host, tid, cpu, c);
    if (id == LP_NONE32)
        return nomem(err);
    *w = id;
    return LP_OK;
}

lp_status lp_kgraph_builder_append(lp_kgraph_builder *b, uint32_t w, int64_t t, lp_kstate state, lp_kreason reason,
                                   uint32_t *v, lp_error *err)
{
    kpart *p = &b->part;
    if (w >= p->nw)
        return lp_error_set(err, LP_ERR_ARG, "no worker %u", w);
    if ((unsigned)state >= LP_KS_COUNT || (unsigned)reason >= LP_KR_COUNT ||
        (state == LP_KS_BLOCKED) != (reason != LP_KR_NONE))
        return lp_error_set(err, LP_ERR_DATA, "state %s and reason '%s' do not agree (a reason goes with blocked, "
                            "and only there)", lp_kstate_name(state), lp_kreason_name(reason));
    uint32_t tail = p->wtail[w];
    if (tail != LP_NONE32 && t < p->vt[tail])
        return lp_error_set(err, LP_ERR_DATA, "worker %u: vertex at %lld before the previous one (%lld)", w,
                            (long long)t, (long long)p->vt[tail]);
    uint32_t id = kpart_append(p, w, t, (uint8_t)state, (uint8_t)reason);
    if (id == LP_NONE32)
        return nomem(err);
    if (v)
        *v = id;
    return LP_OK;
}

lp_status lp_kgraph_builder_link(lp_kgraph_builder *b, uint32_t from, uint32_t to, lp_klink kind, lp_error *err)
{
    kpart *p = &b->part;
    if (from >= p->nv || to >= p->nv || (unsigned)kind >= LP_KL_COUNT || from == to)
        return lp_error_set(err, LP_ERR_ARG, "bad link %u -> %u", from, to);
    if (p->vt[to] < p->vt[from])
        return lp_error_set(err, LP_ERR_DATA, "link %u -> %u runs back in time (%lld to %lld)", from, to,
                            (long long)p->vt[from], (long long)p->vt[to]);
    if (p->vout[from] != LP_NONE32 || p->vin[to] != LP_NONE32)
        return lp_error_set(err, LP_ERR_DATA, "link %u -> %u: a vertex has at most one outgoing and one incoming "
                            "link", from, to);
    if (kpart_link(p, from, to, (uint8_t)kind))
        return nomem(err);
    return LP_OK;
}

lp_status lp_kgraph_builder_finish(lp_kgraph_builder *b, lp_kgraph **out, lp_error *err)
{
    *out = NULL;
    lp_kgraph *g = lp_calloc(1, sizeof *g);
    lp_status st = LP_OK;
    if (!g || lp_strtab_init(&g->strs)) {
        lp_free(g);
        lp_kgraph_builder_free(b);
        return nomem(err);
    }
    uint32_t nh = b->hstrs.n - 1;
    g->nhosts = nh;
    g->host = lp_malloc((nh ? nh : 1) * sizeof *g->host);
    g->clock_slope = lp_malloc((nh ? nh : 1) * sizeof(double));
    g->clock_offset = lp_malloc((nh ? nh : 1) * sizeof(double));
    if (!g->host || !g->clock_slope || !g->clock_offset) {
        st = nomem(err);
        goto out;
    }
    for (uint32_t h = 0; h < nh; h++) {
        const char *nm = lp_strtab_get(&b->hstrs, h + 1);
        if (lp_strtab_intern(&g->strs, nm, strlen(nm), &g->host[h])) {
            st = nomem(err);
            goto out;
        }
        g->clock_slope[h] = 1.0;
        g->clock_offset[h] = 0.0;
    }
    if ((st = kgraph_layout(g, &b->part, 1, NULL, 0, NULL, err)))
        goto out;
    uint32_t at = 0;
    int cyc = kgraph_has_cycle(g, &at);
    if (cyc < 0)
        st = nomem(err);
    else if (cyc)
        st = lp_error_set(err, LP_ERR_DATA, "the links form a cycle (through vertex %u of worker '%s' at %lld)", at,
                          lp_kgraph_worker_name(g, lp_kgraph_vworker(g, at)), (long long)g->vt[at]);
out:
    lp_kgraph_builder_free(b);
    if (st) {
        lp_kgraph_free(g);
        return st;
    }
    *out = g;
    return LP_OK;
}
