/* dkcp_query.c: the query of `dist kcp` under AL2/AL3 (dkcp.h, docs/distributed.md):
 * rank 0 starts from the hosts where the thread is (each rank said so in the set-up),
 * fetches their events from their owners and computes the path on the graph of the hosts
 * it has (a partial build: their parts exactly as in the whole graph). A dependency is a
 * matched packet whose other end is on a host rank 0 does not have and whose receive
 * woke a worker at a time the path covers on that worker: the path could follow its
 * link. Each round resolves the dependencies found: AL3 asks, for each sender host
 * needed, the one rank the merged ECI names as its owner; AL2 (the paper's [2]) sends
 * every rank one message per round listing the round's dependencies (one packet key per
 * sender host needed), and each rank answers once (with the hosts of its own that sent
 * them, or with nothing). The path is
 * computed again until no dependency is left: it is then the whole graph's path, since
 * every link it could follow is present.
 */
#include "dkcp.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

static int nomem(dkcp *k)
{
    cli_dist_err(k->D, "out of memory");
    return LP_EXIT_NOMEM;
}

/* The reply to a request: u32 count, then that many graph parts of this rank's hosts,
 * each as u64 length + bytes. */
static int pack_reply(dkcp *k, const uint32_t *hosts, uint32_t n, lp_dbuf *out)
{
    lp_error err;
    lp_error_clear(&err);
    lp_dbuf_u32(out, n);
    for (uint32_t i = 0; i < n; i++) {
        lp_dbuf part = {0};
        if (lp_keci_pack_part(k->own_g, hosts[i], &k->m, k->own_sv, k->own_tv, &part, &err)) {
            lp_dbuf_release(&part);
            return cli_dist_fail(k->D, &err);
        }
        lp_dbuf_u64(out, part.n);
        lp_dbuf_put(out, part.p, part.n);
        lp_dbuf_release(&part);
        k->sent[hosts[i]] = 1;
    }
    return out->fail ? nomem(k) : 0;
}

/* The hosts a request asks this rank for (hosts[] has room for k->nh): AL3 names one;
 * AL2 gives a list of keys (u32 count, then the keys), each naming the host that sent
 * it if that host is this rank's. */
static uint32_t answer(dkcp *k, int tag, const void *buf, size_t n, uint32_t *hosts)
{
    lp_drd r = lp_drd_init(buf, n);
    uint64_t v;
    uint32_t nh = 0;
    if (tag == DK_T_HOST) {
        uint32_t h = lp_drd_u32(&r);
        if (!r.bad && h < k->nh && dk_host_is_mine(k, h) && !k->sent[h])
            hosts[nh++] = h;
    } else if (tag == DK_T_KEY) {
        uint32_t cnt = lp_drd_u32(&r);
        for (uint32_t i = 0; i < cnt && !r.bad; i++) {
            uint64_t key = lp_drd_u64(&r);
            if (r.bad || !lp_hmap_get(&k->keys, key, &v) || k->sent[v])
                continue;
            int dup = 0;
            for (uint32_t j = 0; j < nh && !dup; j++)
                dup = hosts[j] == (uint32_t)v;
            if (!dup && nh < k->nh)
                hosts[nh++] = (uint32_t)v;
        }
    }
    return nh;
}

int dk_serve(dkcp *k)
{
    lp_error err;
    lp_error_clear(&err);
    int failed = 0;
    for (;;) {
        void *buf;
        size_t n;
        int from, tag;
        if (lp_dist_recv(k->D->d, 0, LP_DIST_ANY, &buf, &n, &from, &tag, &err))
            return cli_dist_fail(k->D, &err);
        if (tag == DK_T_DONE) {
            lp_free(buf);
            return failed;
        }
        uint32_t *hosts = lp_malloc((k->nh ? k->nh : 1) * sizeof *hosts);
        uint32_t nh = hosts ? answer(k, tag, buf, n, hosts) : 0;
        lp_free(buf);
        k->nserved++;
        lp_dbuf b = {0};
        int rc = hosts ? pack_reply(k, hosts, nh, &b) : nomem(k);
        lp_free(hosts);
        if (rc) { /* rank 0 waits for a reply: say it failed (it stops the query), then serve on */
            lp_dbuf_release(&b);
            lp_dbuf_u32(&b, UINT32_MAX);
            failed = rc;
        }
        if (lp_dist_send(k->D->d, 0, DK_T_DATA, b.p, b.n, &err)) {
            lp_dbuf_release(&b);
            return cli_dist_fail(k->D, &err);
        }
        lp_dbuf_release(&b);
    }
}

/* Rank 0: keep the parts of a reply. */
static int take_reply(dkcp *k, const void *buf, size_t n)
{
    lp_drd r = lp_drd_init(buf, n);
    uint32_t cnt = lp_drd_u32(&r);
    if (cnt == UINT32_MAX) {
        cli_dist_err(k->D, "a rank failed to answer a request (its message above says why)");
        return LP_EXIT_INTERNAL;
    }
    for (uint32_t i = 0; i < cnt && !r.bad; i++) {
        uint64_t len = lp_drd_u64(&r);
        const void *p = r.bad || len > r.n - r.off ? NULL : lp_drd_get(&r, (size_t)len);
        uint32_t h = p ? lp_keci_part_host(p, (size_t)len) : UINT32_MAX;
        if (h >= k->nh || k->have[h]) {
            r.bad = 1;
            break;
        }
        lp_dbuf_put(&k->parts[h], p, (size_t)len);
        if (k->parts[h].fail)
            return nomem(k);
        k->have[h] = 1;
        k->nfetched++;
    }
    if (r.bad) {
        cli_dist_err(k->D, "a reply of %zu bytes is not a list of graph parts", n);
        return LP_EXIT_INTERNAL;
    }
    return 0;
}

/* Rank 0: one request to rank `to` (itself: answered locally, nothing moves). */
static int request(dkcp *k, int to, int tag, const void *msg, size_t n)
{
    lp_error err;
    lp_error_clear(&err);
    k->req_to[to]++;
    if (to == 0) {
        uint32_t *hosts = lp_malloc((k->nh ? k->nh : 1) * sizeof *hosts);
        if (!hosts)
            return nomem(k);
        uint32_t nh = answer(k, tag, msg, n, hosts);
        k->nserved++;
        lp_dbuf b = {0};
        int rc = pack_reply(k, hosts, nh, &b);
        lp_free(hosts);
        if (!rc)
            rc = take_reply(k, b.p, b.n);
        lp_dbuf_release(&b);
        return rc;
    }
    if (lp_dist_send(k->D->d, to, tag, msg, n, &err))
        return cli_dist_fail(k->D, &err);
    return 0;
}

static int collect(dkcp *k, int from)
{
    lp_error err;
    lp_error_clear(&err);
    void *buf;
    size_t n;
    if (lp_dist_recv(k->D->d, from, DK_T_DATA, &buf, &n, NULL, NULL, &err))
        return cli_dist_fail(k->D, &err);
    int rc = take_reply(k, buf, n);
    lp_free(buf);
    return rc;
}

/* Fetch host h from its owner (AL3, and the query's own hosts). */
static int fetch_owner(dkcp *k, uint32_t h)
{
    int to = lp_dist_owner(h, k->D->size);
    int rc = request(k, to, DK_T_HOST, &h, 4);
    if (!rc && to != 0)
        rc = collect(k, to);
    if (!rc && !k->have[h]) {
        cli_dist_err(k->D, "rank %d did not send host %u ('%s')", to, h, k->paths[h]);
        rc = LP_EXIT_INTERNAL;
    }
    return rc;
}

/* The key of packet p's send (what AL2 broadcasts). */
static uint64_t send_key(const dkcp *k, uint64_t p)
{
    const lp_kpacket *pk = &k->m.pk[p];
    const uint64_t *o = k->orig[pk->shost];
    uint64_t lo = 0, hi = k->skel->host[pk->shost].nev;
    while (lo < hi) { /* the skeleton event of the send (orig is increasing) */
        uint64_t mid = lo + (hi - lo) / 2;
        if (o[mid] < pk->sev)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lp_keci_key(&k->skel->host[pk->shost].ev[lo]);
}

/* AL2: one message to every rank listing the round's dependencies (for each sender host
 * needed, the key of its first packet the path could follow: u32 count, then the keys);
 * every rank answers once. */
static int fetch_broadcast(dkcp *k, const uint8_t *need, const uint32_t *tv)
{
    lp_dbuf msg = {0};
    uint32_t cnt = 0;
    lp_dbuf_u32(&msg, 0);
    for (uint32_t h = 0; h < k->nh; h++) {
        if (!need[h] || k->have[h])
            continue;
        for (uint64_t p = 0; p < k->m.npk; p++)
            if (k->m.pk[p].shost == h && k->have[k->m.pk[p].rhost] && tv[p] != LP_NONE32) {
                lp_dbuf_u64(&msg, send_key(k, p));
                cnt++;
                break;
            }
    }
    if (msg.fail) {
        lp_dbuf_release(&msg);
        return nomem(k);
    }
    memcpy(msg.p, &cnt, 4); /* the count, in the byte order lp_dbuf_u32 wrote */
    int rc = 0;
    for (int r = 0; r < k->D->size && !rc; r++)
        rc = request(k, r, DK_T_KEY, msg.p, msg.n);
    for (int r = 1; r < k->D->size && !rc; r++)
        rc = collect(k, r);
    lp_dbuf_release(&msg);
    for (uint32_t h = 0; h < k->nh && !rc; h++) /* a key two hosts of one rank share: ask its owner */
        if (need[h] && !k->have[h])
            rc = fetch_owner(k, h);
    return rc;
}

typedef struct span {
    uint32_t w;
    int64_t s, e;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->w != y->w)
        return x->w < y->w ? -1 : 1;
    return x->s < y->s ? -1 : x->s > y->s;
}

/* Does the path cover worker w at time t? (spans sorted by worker, then start) */
static int covers(const span *sp, size_t n, uint32_t w, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the first span of w starting after t */
        size_t mid = lo + (hi - lo) / 2;
        if (sp[mid].w < w || (sp[mid].w == w && sp[mid].s <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0 && sp[i].w == w;)
        if (sp[i].e >= t)
            return 1;
    return 0;
}

/* The senders' hosts the path needs (need[h] set); returns how many packets. */
static uint64_t dependencies(dkcp *k, const lp_kgraph *g, const lp_kcp *cp, const uint32_t *tv, uint8_t *need)
{
    span *sp = lp_malloc((cp->n ? cp->n : 1) * 2 * sizeof *sp);
    size_t n = 0;
    if (!sp)
        return UINT64_MAX;
    for (size_t i = 0; i < cp->n; i++) {
        const lp_kcp_elem *e = &cp->e[i];
        sp[n++] = (span){e->worker, e->start, e->end};
        if (e->kind == LP_KCP_LINK && e->from != e->worker && e->from != LP_NONE32)
            sp[n++] = (span){e->from, e->start, e->end};
    }
    qsort(sp, n, sizeof *sp, span_cmp);
    uint64_t nd = 0;
    for (uint64_t p = 0; p < k->m.npk; p++) {
        const lp_kpacket *pk = &k->m.pk[p];
        if (!k->have[pk->rhost] || k->have[pk->shost] || tv[p] == LP_NONE32)
            continue;
        if (covers(sp, n, lp_kgraph_vworker(g, tv[p]), g->vt[tv[p]])) {
            if (!need[pk->shost])
                need[pk->shost] = 1;
            nd++;
        }
    }
    lp_free(sp);
    return nd;
}

/* The graph of the hosts rank 0 has, and the path on it. */
static int round_path(dkcp *k, cli_kquery *q, const char *from, const char *to, lp_kgraph **g, uint32_t *tv)
{
    lp_error err;
    lp_error_clear(&err);
    lp_kgraph_free(*g);
    *g = NULL;
    lp_kcp_breakdown_release(&q->bd);
    lp_kcp_release(&q->cp);
    const char **names = lp_malloc(k->nh * sizeof *names);
    if (!names)
        return nomem(k);
    for (uint32_t h = 0; h < k->nh; h++)
        names[h] = lp_strtab_get(&k->skel->strs, k->skel->host[h].name);
    lp_status st = lp_keci_assemble(k->nh, names, k->parts, &k->m, !k->no_sync, g, tv, &err);
    lp_free(names);
    if (st)
        return cli_dist_fail(k->D, &err);
    cli_kgraph kg;
    memset(&kg, 0, sizeof kg);
    kg.g = *g;
    return cli_kcp_query("dist kcp", from, to, &kg, q);
}

int dk_query(dkcp *k, cli_kquery *q, const char *from, const char *to, lp_kgraph **g)
{
    lp_error err;
    lp_error_clear(&err);
    uint64_t npk = k->m.npk;
    uint32_t *tv = lp_malloc((npk ? npk : 1) * 4);
    uint8_t *need = lp_calloc(k->nh, 1);
    k->have = lp_calloc(k->nh, 1);
    k->req_to = lp_calloc((size_t)k->D->size, sizeof *k->req_to);
    k->parts = lp_calloc(k->nh, sizeof *k->parts);
    int rc = !tv || !need || !k->have || !k->req_to || !k->parts ? nomem(k) : 0;
    for (uint32_t h = 0; !rc && h < k->nh; h++) /* the thread's hosts */
        if (k->verdict[h])
            rc = fetch_owner(k, h);
    while (!rc) {
        if ((rc = round_path(k, q, from, to, g, tv)))
            break;
        k->nrounds++;
        memset(need, 0, k->nh);
        uint64_t nd = dependencies(k, *g, &q->cp, tv, need);
        if (nd == UINT64_MAX) {
            rc = nomem(k);
            break;
        }
        if (!nd)
            break;
        k->ndeps += nd;
        if (k->algo == DK_AL2) {
            rc = fetch_broadcast(k, need, tv);
            continue;
        }
        for (uint32_t h = 0; !rc && h < k->nh; h++)
            if (need[h] && !k->have[h])
                rc = fetch_owner(k, h);
    }
    for (int r = 1; r < k->D->size; r++) /* the serving ranks stop */
        if (lp_dist_send(k->D->d, r, DK_T_DONE, "", 0, &err) && !rc)
            rc = cli_dist_fail(k->D, &err);
    lp_free(tv);
    lp_free(need);
    return rc;
}
