/* kjson.c: `cp --thread --json` (docs/formats/kcp-json.md): the same answer as the text
 * (kprint.c) as one JSON document: the query, the path's summary, the breakdowns, every
 * element (all of them: --path does not apply), the clocks and the adjustments. Times
 * are integer ns on the reference clock; slopes and offsets are printed with 17
 * significant digits (lp_jsonw_raw), so they read back exactly. */
#include "kcli.h"

#include <math.h>
#include <string.h>

static void kdbl17(lp_jsonw *j, const char *key, double v)
{
    lp_jsonw_key(j, key);
    if (!isfinite(v)) {
        lp_jsonw_null(j);
        return;
    }
    char b[40];
    snprintf(b, sizeof b, "%.17g", v);
    lp_jsonw_raw(j, b);
}

static const char *wname(const lp_kgraph *g, uint32_t w) { return w == LP_NONE32 ? NULL : lp_kgraph_worker_name(g, w); }

static void summary(lp_jsonw *j, const cli_kgraph *k, const cli_kquery *q)
{
    const lp_kgraph *g = k->g;
    const lp_kcp *cp = &q->cp;
    const lp_kworker *w = &g->w[cp->worker];
    lp_jsonw_key(j, "thread");
    lp_jsonw_obj(j);
    lp_jsonw_kstr(j, "name", lp_kgraph_worker_name(g, cp->worker));
    lp_jsonw_ki64(j, "tid", w->tid);
    lp_jsonw_kstr(j, "host", lp_kgraph_str(g, g->host[w->host]));
    lp_jsonw_kstr(j, "comm", lp_kgraph_str(g, w->comm));
    lp_jsonw_obj_end(j);
    lp_jsonw_kstr(j, "algorithm", cp->algo == LP_KCP_UNBOUNDED ? "unbounded" : "bounded");
    lp_jsonw_kbool(j, "lifetime", q->from == LP_KCP_LIFETIME_START && q->to == LP_KCP_LIFETIME_END);
    lp_jsonw_ki64(j, "start", cp->start);
    lp_jsonw_ki64(j, "end", cp->end);
    lp_jsonw_ki64(j, "length_ns", cp->end - cp->start);
    lp_jsonw_ku64(j, "elements", cp->n);
    uint64_t n, nnet;
    int64_t ns, netns;
    cli_kcp_unexplained(cp, &n, &nnet, &ns, &netns);
    lp_jsonw_key(j, "unexplained");
    lp_jsonw_obj(j);
    lp_jsonw_ku64(j, "elements", n);
    lp_jsonw_ki64(j, "ns", ns);
    lp_jsonw_ku64(j, "network_elements", nnet);
    lp_jsonw_ki64(j, "network_ns", netns);
    lp_jsonw_obj_end(j);
    lp_jsonw_ki64(j, "gap_ns", cp->gap_ns);
}

static void rows(lp_jsonw *j, const lp_kgraph *g, const lp_kcp_breakdown *b, int by_state)
{
    const lp_kcp_row *r0 = by_state ? b->by_state : b->by_thread;
    size_t nr = by_state ? b->nstate : b->nthread;
    lp_jsonw_key(j, by_state ? "by_state" : "by_thread");
    lp_jsonw_arr(j);
    for (size_t i = 0; i < nr; i++) {
        const lp_kcp_row *r = &r0[i];
        char lab[40];
        lp_jsonw_obj(j);
        if (by_state)
            lp_jsonw_kstr(j, "key", lp_kcp_row_label(r, lab, sizeof lab));
        else
            lp_jsonw_kstr(j, "thread", wname(g, r->worker)); /* null: the links' row */
        lp_jsonw_ki64(j, "path_ns", r->path_ns);
        lp_jsonw_kdbl(j, "path_share", b->total ? (double)r->path_ns / (double)b->total : 0);
        lp_jsonw_ku64(j, "path_elements", r->path_n);
        lp_jsonw_ki64(j, "own_ns", r->own_ns);
        lp_jsonw_kdbl(j, "own_share", b->total ? (double)r->own_ns / (double)b->total : 0);
        lp_jsonw_ku64(j, "own_edges", r->own_n);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
}

static void elements(lp_jsonw *j, const lp_kgraph *g, const lp_kcp *cp)
{
    static const char *const kinds[] = {"state", "link", "gap"};
    lp_jsonw_key(j, "path");
    lp_jsonw_arr(j);
    for (size_t i = 0; i < cp->n; i++) {
        const lp_kcp_elem *e = &cp->e[i];
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "kind", kinds[e->kind < 3 ? e->kind : 2]);
        lp_jsonw_ki64(j, "start", e->start);
        lp_jsonw_ki64(j, "end", e->end);
        lp_jsonw_kstr(j, "thread", wname(g, e->worker));
        if (e->kind == LP_KCP_LINK) {
            lp_jsonw_kstr(j, "from", wname(g, e->from));
            lp_jsonw_kstr(j, "link", lp_klink_name(e->reason));
        } else {
            lp_jsonw_kstr(j, "state", lp_kstate_name(e->state));
            if (e->state == LP_KS_BLOCKED)
                lp_jsonw_kstr(j, "reason", lp_kreason_name(e->reason));
        }
        if (e->flags & LP_KCP_UNEXPLAINED)
            lp_jsonw_kbool(j, "unexplained", 1);
        if (e->flags & LP_KCP_CLIPPED)
            lp_jsonw_kbool(j, "part", 1);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
}

static void clocks(lp_jsonw *j, const cli_kgraph *k)
{
    const lp_kgraph *g = k->g;
    lp_jsonw_kbool(j, "synchronised", g->synced);
    lp_jsonw_key(j, "hosts");
    lp_jsonw_arr(j);
    for (uint32_t h = 0; h < g->nhosts; h++) {
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "name", lp_kgraph_str(g, g->host[h]));
        kdbl17(j, "applied_slope", g->clock_slope[h]);
        kdbl17(j, "applied_offset", g->clock_offset[h]);
        if (k->have_match && h < k->nhosts_read) {
            const lp_kclock *c = &k->m.clock[h];
            const cli_khost *x = &k->host[h];
            lp_jsonw_kstr(j, "source", x->source);
            lp_jsonw_key(j, "clock");
            lp_jsonw_obj(j);
            lp_jsonw_kstr(j, "quality", cli_kclock_quality(c->quality));
            lp_jsonw_kstr(j, "via", c->via < g->nhosts ? lp_kgraph_str(g, g->host[c->via]) : NULL);
            kdbl17(j, "slope", c->slope);
            kdbl17(j, "offset", c->offset);
            kdbl17(j, "slope_lo", c->slope_lo);
            kdbl17(j, "slope_hi", c->slope_hi);
            kdbl17(j, "offset_lo", c->offset_lo);
            kdbl17(j, "offset_hi", c->offset_hi);
            lp_jsonw_ku64(j, "packets", c->npackets);
            lp_jsonw_ku64(j, "hull_packets", c->nhull);
            lp_jsonw_obj_end(j);
            lp_jsonw_key(j, "read");
            lp_jsonw_obj(j);
            lp_jsonw_ku64(j, "events", x->nev);
            lp_jsonw_ku64(j, "cpus", x->ncpus);
            lp_jsonw_ku64(j, "streams", x->nstreams);
            lp_jsonw_ku64(j, "pieces", x->nchunks);
            lp_jsonw_ku64(j, "bytes", x->bytes);
            lp_jsonw_ku64(j, "reordered", x->nreordered);
            lp_jsonw_ku64(j, "lost", x->nlost);
            lp_jsonw_ku64(j, "bad", x->nbad);
            lp_jsonw_ku64(j, "not_used", x->nother);
            lp_jsonw_ku64(j, "sockets", x->nsock);
            lp_jsonw_obj_end(j);
        }
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
}

size_t cli_kadjustments(const cli_kgraph *k, cli_kadj *out)
{
    const lp_kgraph_stats *s = &k->g->st;
    size_t n = 0;
#define ADJ(key_, what_, v_) (out[n++] = (cli_kadj){key_, what_, (uint64_t)(v_)})
    if (k->have_match) {
        ADJ("packets_matched", "packets matched across hosts", k->m.npk);
        ADJ("packets_unmatched_send", "TCP sends without a matching receive", k->m.nunmatched_send);
        ADJ("packets_unmatched_recv", "TCP receives without a matching send", k->m.nunmatched_recv);
    }
    ADJ("events", "events read", s->nevents);
    ADJ("reordered", "events out of time order, put in place", s->nreordered);
    ADJ("lost", "events the tracer reported lost", s->nlost);
    ADJ("wakeups", "wake-ups that ended a wait", s->nwakeups);
    ADJ("spurious_wakeups", "spurious wake-ups (of a thread running or runnable: ignored)", s->nspurious);
    ADJ("context_mismatches", "interrupt exits without their entry (ignored)", s->nctx_mismatch);
    ADJ("context_overflows", "interrupt entries nested beyond 16 (ignored)", s->nctx_overflow);
    ADJ("bad_cpu", "events on a CPU beyond the host's count (ignored)", s->nbadcpu);
    ADJ("packet_events_without_context", "packet events without a thread or kernel context", s->nnoctx);
    ADJ("network_links", "network links made from matched packets", s->npk_linked);
    ADJ("packets_skewed", "matched packets received before sent on the reference clock (dropped)", s->npk_skew);
    ADJ("packets_without_endpoint", "matched packets with an end without context (dropped)", s->npk_noendpoint);
    ADJ("packets_duplicated", "matched packets naming an event already matched (dropped)", s->npk_dup);
    ADJ("packets_bad", "matched packets not naming a send and a receive (dropped)", s->npk_bad);
    ADJ("graph_unmatched_send", "TCP sends left unmatched in the graph", s->nunmatched_send);
    ADJ("graph_unmatched_recv", "TCP receives left unmatched in the graph", s->nunmatched_recv);
    ADJ("renamed_workers", "threads whose names collided (given a #n suffix)", s->nrenamed);
    ADJ("switches_inferred", "context switches the trace lost, inferred from the thread each later event names",
        s->nswitch_inferred);
    ADJ("input_errors", "input errors (records skipped)", k->diag_errors);
    ADJ("input_warnings", "input warnings", k->diag_warnings);
#undef ADJ
    return n;
}

static void adjustments(lp_jsonw *j, const cli_kgraph *k)
{
    cli_kadj a[CLI_KADJ_MAX];
    size_t n = cli_kadjustments(k, a);
    lp_jsonw_key(j, "adjustments");
    lp_jsonw_obj(j);
    for (size_t i = 0; i < n; i++)
        lp_jsonw_ku64(j, a[i].key, a[i].v);
    lp_jsonw_obj_end(j);
}

void cli_kcp_json(const cli_kgraph *k, const cli_kquery *q, const cli_kout *o)
{
    (void)o;
    const lp_kgraph *g = k->g;
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(&j, "command", "cp --thread");
    summary(&j, k, q);
    rows(&j, g, &q->bd, 1);
    rows(&j, g, &q->bd, 0);
    elements(&j, g, &q->cp);
    clocks(&j, k);
    adjustments(&j, k);
    lp_jsonw_key(&j, "graph");
    lp_jsonw_obj(&j);
    lp_jsonw_kbool(&j, "from_index", k->from_index);
    if (k->from_index)
        lp_jsonw_kstr(&j, "index_checks", k->index_stamped ? "stamp" : "full");
    lp_jsonw_ku64(&j, "hosts", g->nhosts);
    lp_jsonw_ku64(&j, "workers", g->nworkers);
    lp_jsonw_ku64(&j, "vertices", g->nv);
    lp_jsonw_ku64(&j, "links", g->nlinks);
    lp_jsonw_obj_end(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}
