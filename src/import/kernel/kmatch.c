/* kmatch.c: TCP segments matched across hosts, and the clocks they synchronise
 * (lp_kmatch_run, kernel.h).
 *
 * Matching (as Trace Compass's TcpEventMatching): a segment leaving one host
 * (inet_sock_local_out; LTTng >= 2.9: net_dev_queue with its TCP header) and entering
 * another (inet_sock_local_in / netif_receive_skb) have equal (seq, ack_seq, flags);
 * `check` is not used (it differs between the two ends). When the sockets' addresses
 * are known on both ends (inet_connect / inet_accept / inet_sock_clone), they must
 * mirror each other (send's source = receive's destination, ports likewise). A host
 * uses its inet_sock events when it has any, else its device events with a TCP header.
 * Each receive, in time order, takes the earliest unmatched send of another host with
 * its key (so a retransmitted segment pairs first with first); a send or receive is
 * used once. What stays unmatched is counted.
 *
 * Clocks: host 0 is the reference. From it, a breadth-first spanning tree over the
 * host pairs whose packets allow a line (khull.c; pairs visited in host order) maps
 * each host onto its parent (x = parent's clock, y = child's: the child's time is
 * a x + b, so t_parent = (t - b) / a), composed down to the reference. Hosts with no
 * usable pair keep the identity (quality ABSENT, or FAIL if their packets contradict
 * every line).
 */
#include "import/kernel/kint.h"
#include "import/kernel/khull.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <math.h>
#include <string.h>

typedef struct pev {
    uint32_t host;
    uint32_t next;   /* next send with the same hash (UINT32_MAX: none) */
    uint64_t ev;
    uint64_t hash;
    int matched;
} pev;

#define NIL UINT32_MAX

static int is_tcp_inet(const lp_kev *e)
{
    return (e->type == LP_KEV_NET_SEND || e->type == LP_KEV_NET_RECV) && !(e->flags & LP_KNET_DEV);
}

static int is_tcp_dev(const lp_kev *e)
{
    return (e->type == LP_KEV_NET_SEND || e->type == LP_KEV_NET_RECV) && (e->flags & LP_KNET_TCP);
}

static uint64_t pkey(const lp_kev *e)
{
    return lp_hash_mix((uint64_t)e->a, (uint64_t)e->b << 16 ^ (e->flags & 0xffff));
}

static int same_key(const lp_kev *x, const lp_kev *y)
{
    return x->a == y->a && x->b == y->b && (x->flags & 0xffff) == (y->flags & 0xffff);
}

/* The addresses of a send and a receive mirror each other, or one is unknown. */
static int addr_ok(const lp_khost *hs, const lp_kev *s, const lp_khost *hr, const lp_kev *r)
{
    if ((s->flags & LP_KNET_DEV) || (r->flags & LP_KNET_DEV))
        return 1;
    const lp_ksock *a = lp_khost_sock(hs, s->key, s->ts), *b = lp_khost_sock(hr, r->key, r->ts);
    if (!a || !b)
        return 1;
    return a->saddr == b->daddr && a->daddr == b->saddr && a->sport == b->dport && a->dport == b->sport;
}

/* The packet events of every host: sends into sends[] (chained by key hash in `heads`),
 * receives into recvs[], both in (host, time) order. */
static lp_status collect(const lp_ktrace *kt, pev **sends, size_t *ns, pev **recvs, size_t *nr, lp_error *err)
{
    size_t caps = 0, capr = 0;
    for (uint32_t h = 0; h < kt->nhosts; h++) {
        const lp_khost *k = &kt->host[h];
        int inet = 0;
        for (uint64_t i = 0; i < k->nev && !inet; i++)
            inet = is_tcp_inet(&k->ev[i]);
        for (uint64_t i = 0; i < k->nev; i++) {
            const lp_kev *e = &k->ev[i];
            if (!(inet ? is_tcp_inet(e) : is_tcp_dev(e)))
                continue;
            int send = e->type == LP_KEV_NET_SEND;
            pev **arr = send ? sends : recvs;
            size_t *n = send ? ns : nr, *cap = send ? &caps : &capr;
            if (*n >= NIL - 1 || lp_grow_at(arr, cap, *n + 1, sizeof **arr))
                return lp_error_set(err, LP_ERR_NOMEM, "out of memory (packets)");
            (*arr)[(*n)++] = (pev){h, NIL, i, pkey(e), 0};
        }
    }
    return LP_OK;
}

static lp_status match(const lp_ktrace *kt, lp_kmatch *m, pev *s, size_t ns, pev *r, size_t nr, lp_error *err)
{
    lp_hmap heads; /* hash -> the first send of its chain that may still be unmatched */
    lp_status st = lp_hmap_init(&heads, ns, err);
    for (size_t i = ns; i-- > 0 && !st;) { /* built backwards: chains in (host, time) order */
        int added;
        uint64_t v = lp_hmap_get_or_put(&heads, s[i].hash, i, &added);
        if (v == LP_HMAP_EMPTY)
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        else if (!added) {
            s[i].next = (uint32_t)v;
            lp_hmap_put(&heads, s[i].hash, i, NULL); /* present: no growth */
        }
    }
    size_t cap = 0;
    for (size_t j = 0; j < nr && !st; j++) {
        const lp_khost *hr = &kt->host[r[j].host];
        const lp_kev *re = &hr->ev[r[j].ev];
        uint64_t first;
        if (!lp_hmap_get(&heads, r[j].hash, &first))
            continue;
        uint32_t i = (uint32_t)first;
        while (i != NIL && s[i].matched) /* drop the matched prefix of the chain */
            i = s[i].next;
        if (i == NIL) {
            lp_hmap_del(&heads, r[j].hash);
            continue;
        }
        if (i != first)
            lp_hmap_put(&heads, r[j].hash, i, NULL); /* present: no growth */
        for (; i != NIL; i = s[i].next) {
            if (s[i].matched || s[i].host == r[j].host)
                continue;
            const lp_khost *hs = &kt->host[s[i].host];
            const lp_kev *se = &hs->ev[s[i].ev];
            if (same_key(se, re) && addr_ok(hs, se, hr, re))
                break;
        }
        if (i == NIL)
            continue;
        s[i].matched = r[j].matched = 1;
        if (lp_grow_at(&m->pk, &cap, m->npk + 1, sizeof *m->pk)) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        m->pk[m->npk++] = (lp_kpacket){s[i].host, r[j].host, s[i].ev, r[j].ev};
    }
    lp_hmap_release(&heads);
    return st;
}

/* ---- clocks ------------------------------------------------------------------------------ */

/* The hull of the packets between parent p and child c (x = p's clock, y = c's). */
static lp_status pair_fit(const lp_ktrace *kt, const lp_kmatch *m, uint32_t p, uint32_t c, khres *res,
                          uint64_t *npk, lp_error *err)
{
    size_t na = 0, nb = 0;
    for (uint64_t i = 0; i < m->npk; i++) {
        const lp_kpacket *k = &m->pk[i];
        na += k->shost == p && k->rhost == c;
        nb += k->shost == c && k->rhost == p;
    }
    *npk = na + nb;
    khpt *A = lp_malloc((na + nb + 1) * sizeof *A), *B = A + na;
    if (!A)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    size_t ia = 0, ib = 0;
    for (uint64_t i = 0; i < m->npk; i++) {
        const lp_kpacket *k = &m->pk[i];
        int64_t ts = kt->host[k->shost].ev[k->sev].ts, tr = kt->host[k->rhost].ev[k->rev].ts;
        if (k->shost == p && k->rhost == c)
            A[ia++] = (khpt){ts, tr}; /* p -> c: above the line */
        else if (k->shost == c && k->rhost == p)
            B[ib++] = (khpt){tr, ts}; /* c -> p: below */
    }
    lp_status st = lp_khull_fit(A, na, B, nb, res, err);
    lp_free(A);
    return st;
}

/* c's clock onto the reference through its parent's map pm: t_p = (t - b) / a. */
static void compose(lp_kclock *cc, const lp_kclock *pm, const khres *h, uint32_t parent, int64_t t0)
{
    long double s = 1.0L / h->a, o = -h->b / h->a; /* child -> parent */
    long double ps = pm->slope, po = pm->offset;
    cc->slope = (double)(ps * s);
    cc->offset = (double)(ps * o + po);
    cc->slope_lo = (double)(ps / h->a_hi);
    cc->slope_hi = (double)(ps / h->a_lo);
    cc->offset_lo = (double)(ps * (-h->b_hi / h->a) + po);
    cc->offset_hi = (double)(ps * (-h->b_lo / h->a) + po);
    cc->quality = h->q == KH_ACCURATE ? LP_KCLOCK_ACCURATE : LP_KCLOCK_APPROXIMATE;
    cc->accurate = h->q == KH_ACCURATE;
    cc->via = parent;
    cc->nhull = h->nhull;
    cc->t0 = t0;
    cc->r0 = (int64_t)llroundl(ps * (s * (long double)t0 + o) + po);
}

static lp_status sync_clocks(const lp_ktrace *kt, lp_kmatch *m, lp_error *err)
{
    uint32_t n = kt->nhosts, *queue = lp_malloc((size_t)n * sizeof *queue);
    uint8_t *seen = lp_calloc(n, 1);
    if (!queue || !seen) {
        lp_free(queue);
        lp_free(seen);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    for (uint32_t h = 0; h < n; h++)
        m->clock[h] = (lp_kclock){.slope = 1, .slope_lo = 1, .slope_hi = 1, .quality = LP_KCLOCK_ABSENT, .via = h};
    m->clock[0].quality = LP_KCLOCK_REFERENCE;
    lp_status st = LP_OK;
    size_t qh = 0, qt = 0;
    if (n)
        queue[qt++] = 0, seen[0] = 1;
    while (qh < qt && !st) {
        uint32_t p = queue[qh++];
        for (uint32_t c = 0; c < n && !st; c++) {
            if (seen[c])
                continue;
            khres res;
            uint64_t npk;
            st = pair_fit(kt, m, p, c, &res, &npk, err);
            if (st || !npk)
                continue;
            if (res.q == KH_FAIL) {
                m->clock[c].quality = LP_KCLOCK_FAIL;
                m->clock[c].npackets = npk;
                continue;
            }
            int64_t t0 = 0; /* the child's first packet: the map's base */
            for (uint64_t i = 0; i < m->npk; i++) {
                const lp_kpacket *k = &m->pk[i];
                if ((k->shost == c && k->rhost == p) || (k->shost == p && k->rhost == c)) {
                    t0 = k->shost == c ? kt->host[c].ev[k->sev].ts : kt->host[c].ev[k->rev].ts;
                    break;
                }
            }
            compose(&m->clock[c], &m->clock[p], &res, p, t0);
            m->clock[c].npackets = npk;
            seen[c] = 1;
            queue[qt++] = c;
        }
    }
    lp_free(queue);
    lp_free(seen);
    return st;
}

lp_status lp_kmatch_run(const lp_ktrace *kt, lp_kmatch *m, lp_error *err)
{
    memset(m, 0, sizeof *m);
    m->clock = lp_calloc(kt->nhosts ? kt->nhosts : 1, sizeof *m->clock);
    if (!m->clock)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    pev *s = NULL, *r = NULL;
    size_t ns = 0, nr = 0;
    lp_status st = collect(kt, &s, &ns, &r, &nr, err);
    if (!st)
        st = match(kt, m, s, ns, r, nr, err);
    if (!st) {
        m->nunmatched_send = ns - m->npk;
        m->nunmatched_recv = nr - m->npk;
        st = sync_clocks(kt, m, err);
    }
    lp_free(s);
    lp_free(r);
    if (st)
        lp_kmatch_release(m);
    return st;
}

void lp_kmatch_release(lp_kmatch *m)
{
    lp_free(m->pk);
    lp_free(m->clock);
    memset(m, 0, sizeof *m);
}
