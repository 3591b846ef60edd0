/* kgraph_build.c: the execution graph of a set of kernel traces (lp_kgraph_build).
 *
 * Steps: (1) index the matched packets by the events they name, per host (dropping, and
 * counting, packets that name an event twice or events that are not a send and a
 * receive); (2) build every host's part from its events on its own thread
 * (kgraph_events.c; hosts share nothing but the packet arrays, of which each writes
 * distinct elements); (3) turn every matched packet whose two ends found a context into a
 * network link from its send vertex to what it woke (or to its receive), kept only if it
 * goes strictly forward in reference time (a packet received no later than it was sent
 * means the clocks disagree: counted, never silently kept); (4) lay the parts out, host
 * by host; (5) report every count to the diagnostics sink.
 *
 * The graph is acyclic by construction: within a host every edge and link goes from an
 * older vertex to a newer one (the waker's vertex is made before the wakee's), and a
 * cycle through network links would need them all to take no time.
 */
#include "analysis/kernel/kgraph_int.h"
#include "base/pool.h"
#include "longpole/base/alloc.h"

#include <string.h>

typedef struct build {
    const lp_ktrace *kt;
    const lp_kmatch *m;
    int sync;
    int partial;           /* opts->partial: hosts without events are absent */
    uint32_t *out_send, *out_target; /* opts->pk_send_v, pk_target_v (may be NULL) */
    lp_hmap *pkmap;        /* [nhosts] */
    uint32_t *pk_send, *pk_recv, *pk_target;
    uint8_t *pk_ok;        /* [npk] indexed in step 1 */
    khost_out *outs;       /* [nhosts] */
    lp_status *st;         /* [nhosts] */
    lp_error *errs;        /* [nhosts] */
    lp_diags *diags;
    lp_kgraph_stats pkst;  /* packet counts of step 1 and 3 */
} build;

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

/* Step 1: index the packets' events per host. */
static lp_status index_packets(build *b, lp_error *err)
{
    const lp_ktrace *kt = b->kt;
    uint64_t npk = b->m ? b->m->npk : 0;
    b->pkmap = lp_calloc(kt->nhosts ? kt->nhosts : 1, sizeof *b->pkmap);
    b->pk_send = lp_malloc((npk ? npk : 1) * 4);
    b->pk_recv = lp_malloc((npk ? npk : 1) * 4);
    b->pk_target = lp_malloc((npk ? npk : 1) * 4);
    b->pk_ok = lp_calloc(npk ? npk : 1, 1);
    if (!b->pkmap || !b->pk_send || !b->pk_recv || !b->pk_target || !b->pk_ok)
        return nomem(err);
    memset(b->pk_send, 0xff, (size_t)(npk ? npk : 1) * 4);
    memset(b->pk_recv, 0xff, (size_t)(npk ? npk : 1) * 4);
    memset(b->pk_target, 0xff, (size_t)(npk ? npk : 1) * 4);
    for (uint64_t p = 0; p < npk; p++) {
        const lp_kpacket *k = &b->m->pk[p];
        int s_in = 1, r_in = 1; /* the ends are present (partial builds: hosts without events are not) */
        if (b->partial && k->shost < kt->nhosts && k->rhost < kt->nhosts) {
            s_in = kt->host[k->shost].nev > 0;
            r_in = kt->host[k->rhost].nev > 0;
        }
        if (k->shost >= kt->nhosts || k->rhost >= kt->nhosts || (s_in && k->sev >= kt->host[k->shost].nev) ||
            (r_in && k->rev >= kt->host[k->rhost].nev) ||
            (s_in && kt->host[k->shost].ev[k->sev].type != LP_KEV_NET_SEND) ||
            (r_in && kt->host[k->rhost].ev[k->rev].type != LP_KEV_NET_RECV)) {
            if (!b->pkst.npk_bad++ && b->diags)
                lp_diags_report(b->diags, LP_SEV_WARNING, LP_RULE_IMPORT, "packets", p + 1,
                                "matched packet %llu does not name a send and a receive event (dropped)",
                                (unsigned long long)p);
            continue;
        }
        uint64_t ks = k->sev * 2, kr = k->rev * 2 + 1, old;
        if ((s_in && lp_hmap_get(&b->pkmap[k->shost], ks, &old)) || (r_in && lp_hmap_get(&b->pkmap[k->rhost], kr, &old))) {
            b->pkst.npk_dup++;
            continue;
        }
        if ((s_in && lp_hmap_put(&b->pkmap[k->shost], ks, p, err)) || (r_in && lp_hmap_put(&b->pkmap[k->rhost], kr, p, err)))
            return nomem(err);
        b->pk_ok[p] = s_in && r_in ? 1 : 2; /* 2: one end absent (partial): no link */
    }
    return LP_OK;
}

/* Step 2, on `nthreads` threads: host h on thread h % nthreads. */
/* One host's part (a pool task); its failure is kept per host and reported in host order. */
static lp_status run_host(void *ctx, size_t task, size_t ntasks, lp_error *err)
{
    (void)ntasks;
    (void)err;
    build *b = ctx;
    uint32_t h = (uint32_t)task;
    khost_in in = {b->kt, h, b->sync ? &b->m->clock[h] : NULL, &b->pkmap[h], b->pk_send, b->pk_recv, b->pk_target};
    lp_error_clear(&b->errs[h]);
    b->st[h] = khost_build(&in, &b->outs[h], &b->errs[h]);
    return LP_OK;
}

/* Step 3: network links between the parts. */
static lp_status packet_links(build *b, kxlink **out, uint64_t *nout, lp_error *err)
{
    uint64_t npk = b->m ? b->m->npk : 0, n = 0;
    kxlink *x = lp_malloc((npk ? npk : 1) * sizeof *x);
    if (!x)
        return nomem(err);
    for (uint64_t p = 0; p < npk; p++) {
        const lp_kpacket *k = &b->m->pk[p];
        if (b->pk_ok[p] != 1)
            continue; /* counted in step 1, or an end is absent (partial) */
        uint32_t s = b->pk_send[p], t = b->pk_target[p];
        if (s == LP_NONE32 || t == LP_NONE32) {
            b->pkst.npk_noendpoint++;
            continue;
        }
        int64_t ts = b->outs[k->shost].part.vt[s], tr = b->outs[k->rhost].part.vt[t];
        if (tr <= ts) {
            if (!b->pkst.npk_skew++ && b->diags)
                lp_diags_report(b->diags, LP_SEV_WARNING, LP_RULE_RECV_BEFORE_SEND, "packets", p + 1,
                                "matched packet %llu is received at %lld, no later than sent (%lld) on the "
                                "reference clock: link dropped", (unsigned long long)p, (long long)tr, (long long)ts);
            continue;
        }
        x[n].pfrom = k->shost;
        x[n].vfrom = s;
        x[n].pto = k->rhost;
        x[n].vto = t;
        x[n].kind = LP_KL_NETWORK;
        n++;
    }
    b->pkst.npk_linked = n;
    *out = x;
    *nout = n;
    return LP_OK;
}

static void add_stats(lp_kgraph_stats *a, const lp_kgraph_stats *b)
{
    const uint64_t *s = (const uint64_t *)b;
    uint64_t *d = (uint64_t *)a;
    for (size_t i = 0; i < sizeof *a / sizeof(uint64_t); i++)
        d[i] += s[i];
}

/* Step 5: what each host adjusted, with its first problems verbatim. */
static void report(const build *b, const lp_kgraph *g)
{
    if (!b->diags)
        return;
    for (uint32_t h = 0; h < b->kt->nhosts; h++) {
        if (b->partial && !b->kt->host[h].nev)
            continue; /* an absent host (partial builds): nothing to report */
        const khost_out *o = &b->outs[h];
        const char *src = lp_strtab_get(&b->kt->strs, b->kt->host[h].source);
        for (unsigned i = 0; i < o->nnotes; i++) /* named by stamp: a position among the events
                                                    kept would not be the trace's (docs/formats/ctf.md) */
            if (o->notes[i].ts == INT64_MIN)
                lp_diags_report(b->diags, o->notes[i].sev, o->notes[i].rule, src, 0, "%s", o->notes[i].msg);
            else
                lp_diags_report(b->diags, o->notes[i].sev, o->notes[i].rule, src, 0, "%s (the event at %lld ns, host clock)",
                                o->notes[i].msg, (long long)o->notes[i].ts);
        if (o->st.nctx_mismatch)
            lp_diags_report(b->diags, LP_SEV_NOTE, LP_RULE_IMPORT, src, 0,
                            "%llu interrupt exits did not match the CPU's innermost context (ignored; usual for "
                            "interrupts that began before tracing)", (unsigned long long)o->st.nctx_mismatch);
        if (o->st.nnoctx)
            lp_diags_report(b->diags, LP_SEV_NOTE, LP_RULE_IMPORT, src, 0,
                            "%llu packet events had no thread or kernel context to attach to",
                            (unsigned long long)o->st.nnoctx);
    }
    if (b->pkst.npk_noendpoint)
        lp_diags_report(b->diags, LP_SEV_WARNING, LP_RULE_IMPORT, "packets", 0,
                        "%llu matched packets had an end without context: no link", (unsigned long long)b->pkst.npk_noendpoint);
    if (b->pkst.npk_dup)
        lp_diags_report(b->diags, LP_SEV_WARNING, LP_RULE_DUP_SEND, "packets", 0,
                        "%llu matched packets named an event already matched (dropped)", (unsigned long long)b->pkst.npk_dup);
    if (b->pkst.npk_skew > 1)
        lp_diags_report(b->diags, LP_SEV_WARNING, LP_RULE_RECV_BEFORE_SEND, "packets", 0,
                        "%llu matched packets in all were received no later than sent (links dropped)",
                        (unsigned long long)b->pkst.npk_skew);
    if (g->st.nrenamed)
        lp_diags_report(b->diags, LP_SEV_NOTE, LP_RULE_IMPORT, "graph", 0,
                        "%llu worker names collided and got a '#n' suffix", (unsigned long long)g->st.nrenamed);
}

/* Hosts, clocks, strings of the graph. */
static lp_status graph_head(const build *b, lp_kgraph *g, lp_error *err)
{
    uint32_t nh = b->kt->nhosts;
    if (lp_strtab_init(&g->strs))
        return nomem(err);
    g->nhosts = nh;
    g->synced = b->sync;
    g->host = lp_malloc((nh ? nh : 1) * 4);
    g->clock_slope = lp_malloc((nh ? nh : 1) * 8);
    g->clock_offset = lp_malloc((nh ? nh : 1) * 8);
    if (!g->host || !g->clock_slope || !g->clock_offset)
        return nomem(err);
    for (uint32_t h = 0; h < nh; h++) {
        const char *nm = lp_strtab_get(&b->kt->strs, b->kt->host[h].name);
        if (lp_strtab_intern(&g->strs, nm, strlen(nm), &g->host[h]))
            return nomem(err);
        g->clock_slope[h] = b->sync ? b->m->clock[h].slope : 1.0;
        g->clock_offset[h] = b->sync ? b->m->clock[h].offset : 0.0;
    }
    return LP_OK;
}

/* The graph vertices of every packet's ends (opts->pk_send_v, pk_target_v). */
static void packet_vertices(const build *b, uint32_t *const *perms)
{
    uint64_t npk = b->m ? b->m->npk : 0;
    for (uint64_t p = 0; p < npk; p++) {
        const lp_kpacket *k = &b->m->pk[p];
        uint32_t s = b->pk_ok[p] ? b->pk_send[p] : LP_NONE32, t = b->pk_ok[p] ? b->pk_target[p] : LP_NONE32;
        if (b->out_send)
            b->out_send[p] = s == LP_NONE32 ? LP_NONE32 : perms[k->shost][s];
        if (b->out_target)
            b->out_target[p] = t == LP_NONE32 ? LP_NONE32 : perms[k->rhost][t];
    }
}

/* Step 4 and the packet keys (their vertices renumbered). */
static lp_status assemble(build *b, lp_kgraph *g, const kxlink *x, uint64_t nx, lp_error *err)
{
    uint32_t nh = b->kt->nhosts;
    kpart *parts = lp_malloc((nh ? nh : 1) * sizeof *parts);
    uint32_t **perms = lp_calloc(nh ? nh : 1, sizeof *perms);
    lp_status st = LP_OK;
    if (!parts || !perms) {
        st = nomem(err);
        goto out;
    }
    for (uint32_t h = 0; h < nh; h++)
        parts[h] = b->outs[h].part; /* moved: the parts array owns the columns now */
    for (uint32_t h = 0; h < nh; h++)
        kpart_init(&b->outs[h].part, &b->kt->strs);
    st = kgraph_layout(g, parts, nh, x, nx, perms, err);
    for (uint32_t h = 0; h < nh; h++)
        kpart_release(&parts[h]);
    if (st)
        goto out;
    packet_vertices(b, perms);
    for (uint32_t h = 0; h < nh; h++)
        g->npk += b->outs[h].nkeys;
    g->pk = lp_malloc((g->npk ? g->npk : 1) * sizeof *g->pk);
    if (!g->pk) {
        st = nomem(err);
        goto out;
    }
    uint64_t i = 0;
    for (uint32_t h = 0; h < nh; h++)
        for (uint64_t k = 0; k < b->outs[h].nkeys; k++, i++) {
            g->pk[i] = b->outs[h].keys[k];
            if (g->pk[i].vertex != LP_NONE32)
                g->pk[i].vertex = perms[h][g->pk[i].vertex];
        }
out:
    if (perms)
        for (uint32_t h = 0; h < nh; h++)
            lp_free(perms[h]);
    lp_free(perms);
    lp_free(parts);
    return st;
}

static lp_status check_args(const lp_ktrace *kt, const lp_kmatch *m, int sync, lp_error *err)
{
    if (!kt)
        return lp_error_set(err, LP_ERR_ARG, "no kernel trace");
    for (uint32_t h = 0; sync && h < kt->nhosts; h++)
        if (!(m->clock[h].slope > 0))
            return lp_error_set(err, LP_ERR_ARG, "host '%s': clock map with slope %g (must be positive)",
                                lp_strtab_get(&kt->strs, kt->host[h].name), m->clock[h].slope);
    return LP_OK;
}

static void release(build *b)
{
    uint32_t nh = b->kt->nhosts;
    for (uint32_t h = 0; b->pkmap && h < nh; h++)
        lp_hmap_release(&b->pkmap[h]);
    for (uint32_t h = 0; b->outs && h < nh; h++)
        khost_out_release(&b->outs[h]);
    lp_free(b->pkmap);
    lp_free(b->pk_send);
    lp_free(b->pk_recv);
    lp_free(b->pk_target);
    lp_free(b->pk_ok);
    lp_free(b->outs);
    lp_free(b->st);
    lp_free(b->errs);
}

lp_status lp_kgraph_build(const lp_ktrace *kt, const lp_kmatch *m, const lp_kgraph_opts *opts, lp_diags *diags,
                          lp_kgraph **out, lp_error *err)
{
    *out = NULL;
    int sync = m && m->clock && !(opts && opts->no_sync);
    lp_status st = check_args(kt, m, sync, err);
    if (st)
        return st;
    build b = {kt, m, sync, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, diags, {0}};
    if (opts) {
        b.partial = opts->partial;
        b.out_send = opts->pk_send_v, b.out_target = opts->pk_target_v;
    }
    uint32_t nh = kt->nhosts;
    lp_kgraph *g = lp_calloc(1, sizeof *g);
    b.outs = lp_calloc(nh ? nh : 1, sizeof *b.outs);
    b.st = lp_calloc(nh ? nh : 1, sizeof *b.st);
    b.errs = lp_calloc(nh ? nh : 1, sizeof *b.errs);
    kxlink *x = NULL;
    uint64_t nx = 0;
    if (!g || !b.outs || !b.st || !b.errs) {
        st = nomem(err);
        goto out;
    }
    for (uint32_t h = 0; h < nh; h++)
        kpart_init(&b.outs[h].part, &kt->strs);
    if ((st = index_packets(&b, err)))
        goto out;
    unsigned want = opts && opts->threads ? opts->threads : 0;
    unsigned nt = lp_pool_threads(want, nh ? nh : 1);
    lp_pool *pool = NULL;
    if (nt > 1 && (st = lp_pool_new(&pool, nt - 1, err)))
        goto out;
    st = lp_pool_run(pool, nh, run_host, &b, err);
    lp_pool_free(pool);
    if (st)
        goto out;
    for (uint32_t h = 0; h < nh; h++)
        if (b.st[h]) {
            st = lp_error_set(err, b.st[h], "host '%s': %s", lp_strtab_get(&kt->strs, kt->host[h].name),
                              b.errs[h].msg);
            goto out;
        }
    if ((st = packet_links(&b, &x, &nx, err)) || (st = graph_head(&b, g, err)))
        goto out;
    for (uint32_t h = 0; h < nh; h++)
        add_stats(&g->st, &b.outs[h].st);
    add_stats(&g->st, &b.pkst);
    st = assemble(&b, g, x, nx, err);
    if (!st)
        report(&b, g);
out:
    lp_free(x);
    release(&b);
    if (st) {
        lp_kgraph_free(g);
        return st;
    }
    *out = g;
    return LP_OK;
}
