/* test_keci.c: the External Communication Index of kernel traces (keci.h):
 *  - differential: on thousands of random multi-host traces (TCP sends and receives of
 *    matching and unmatched keys among scheduling events, inet- and device-level, with
 *    clock offsets), the merge of the hosts' skeletons (lp_keci_match) gives exactly
 *    the packets, unmatched counts and clocks of lp_kmatch_run over the whole traces;
 *  - a packed host unpacks to the same events, strings and figures;
 *  - every truncation of a packed host, and garbage, is LP_ERR_FORMAT, never a crash;
 *  - the match survives its own packing. */
#include "t.h"
#include "longpole/dist/keci.h"
#include "longpole/base/alloc.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return n ? rng % n : 0;
}

static lp_kev ev_of(int64_t ts, uint16_t type, uint32_t seq, uint32_t ack, uint32_t flags)
{
    lp_kev e;
    memset(&e, 0, sizeof e);
    e.ts = ts, e.type = type, e.a = seq, e.b = ack, e.flags = flags, e.tid = -1, e.tid2 = -1, e.ctx_tid = -1;
    e.key = 0x1000 + rnd(3);
    e.name = e.name2 = LP_STR_NONE;
    return e;
}

static void push(lp_khost *h, size_t *cap, lp_kev e)
{
    if (h->nev == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        h->ev = lp_realloc(h->ev, *cap * sizeof *h->ev);
    }
    h->ev[h->nev++] = e;
}

static int ts_cmp(const void *a, const void *b)
{
    const lp_kev *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* A random trace of nh hosts: packets between random pairs (clock offsets per host),
 * unmatched sends and receives, and other events around them. */
static lp_ktrace *random_trace(uint32_t nh)
{
    lp_ktrace *kt;
    CHECK_EQ_I(lp_keci_ktrace_new(nh, &kt, NULL), LP_OK);
    size_t cap[8] = {0};
    int64_t off[8];
    int dev = (int)rnd(4) == 0; /* sometimes a host of device-level TCP events only */
    for (uint32_t h = 0; h < nh; h++) {
        char name[16];
        snprintf(name, sizeof name, "h%u", h);
        lp_strtab_intern(&kt->strs, name, strlen(name), &kt->host[h].name);
        kt->host[h].ncpus = 1;
        off[h] = (int64_t)rnd(1000000) - 500000;
    }
    uint32_t np = (uint32_t)rnd(60);
    for (uint32_t p = 0; p < np; p++) {
        uint32_t a = (uint32_t)rnd(nh), b = (uint32_t)rnd(nh);
        int64_t t = (int64_t)rnd(100000000) + 1000000, d = (int64_t)rnd(200000) + 1000;
        uint32_t seq = (uint32_t)rnd(50), ack = (uint32_t)rnd(3), fl = (uint32_t)rnd(2) ? 0x18 : 0x10;
        uint32_t fa = dev && a == nh - 1 ? (LP_KNET_DEV | LP_KNET_TCP | fl) : fl;
        uint32_t fb = dev && b == nh - 1 ? (LP_KNET_DEV | LP_KNET_TCP | fl) : fl;
        int kind = (int)rnd(5);
        if (kind != 4)
            push(&kt->host[a], &cap[a], ev_of(t + off[a], LP_KEV_NET_SEND, seq, ack, fa));
        if (kind != 3)
            push(&kt->host[b], &cap[b], ev_of(t + d + off[b], LP_KEV_NET_RECV, seq, ack, fb));
    }
    for (uint32_t h = 0; h < nh; h++) {
        uint32_t n = (uint32_t)rnd(40);
        for (uint32_t i = 0; i < n; i++)
            push(&kt->host[h], &cap[h], ev_of((int64_t)rnd(110000000), LP_KEV_SCHED_SWITCH, 0, 0, 0));
        if (kt->host[h].nev)
            qsort(kt->host[h].ev, kt->host[h].nev, sizeof *kt->host[h].ev, ts_cmp);
        else
            kt->host[h].ev = lp_malloc(sizeof(lp_kev));
        kt->host[h].sock = lp_malloc(sizeof(lp_ksock));
    }
    return kt;
}

static int same_match(const lp_kmatch *a, const lp_kmatch *b, uint32_t nh)
{
    if (a->npk != b->npk || a->nunmatched_send != b->nunmatched_send || a->nunmatched_recv != b->nunmatched_recv)
        return 0;
    if (a->npk && memcmp(a->pk, b->pk, a->npk * sizeof *a->pk) != 0)
        return 0;
    for (uint32_t h = 0; h < nh; h++)
        if (a->clock[h].slope != b->clock[h].slope || a->clock[h].offset != b->clock[h].offset ||
            a->clock[h].quality != b->clock[h].quality || a->clock[h].via != b->clock[h].via)
            return 0;
    return 1;
}

/* The skeletons of kt's hosts, packed one after the other and unpacked at "rank 0". */
static int merge_equals_whole(lp_ktrace *kt)
{
    lp_kmatch whole, merged;
    if (lp_kmatch_run(kt, &whole, NULL))
        return 0;
    lp_dbuf b = {0};
    for (uint32_t h = kt->nhosts; h-- > 0;) /* any order: each names its index */
        CHECK_EQ_I(lp_keci_pack_host(kt, h, h, 1, &b, NULL), LP_OK);
    lp_ktrace *skel;
    CHECK_EQ_I(lp_keci_ktrace_new(kt->nhosts, &skel, NULL), LP_OK);
    uint64_t **orig = lp_calloc(kt->nhosts, sizeof *orig);
    lp_drd r = lp_drd_init(b.p, b.n);
    int ok = 1;
    for (uint32_t i = 0; i < kt->nhosts; i++) {
        uint32_t h;
        uint64_t *o, nev;
        if (lp_keci_unpack_host(&r, skel, &h, &o, &nev, NULL)) {
            ok = 0;
            break;
        }
        orig[h] = o;
        ok &= nev == kt->host[h].nev;
    }
    ok &= r.off == r.n;
    if (ok && !lp_keci_match(skel, orig, &merged, NULL)) {
        ok &= same_match(&whole, &merged, kt->nhosts);
        /* the match over the wire */
        lp_dbuf mb = {0};
        lp_keci_pack_match(&merged, kt->nhosts, &mb);
        lp_kmatch back;
        lp_drd mr = lp_drd_init(mb.p, mb.n);
        if (!lp_keci_unpack_match(&mr, kt->nhosts, &back, NULL)) {
            ok &= same_match(&merged, &back, kt->nhosts);
            lp_kmatch_release(&back);
        } else {
            ok = 0;
        }
        lp_dbuf_release(&mb);
        lp_kmatch_release(&merged);
    } else {
        ok = 0;
    }
    for (uint32_t h = 0; h < kt->nhosts; h++)
        lp_free(orig[h]);
    lp_free(orig);
    lp_ktrace_free(skel);
    lp_dbuf_release(&b);
    lp_kmatch_release(&whole);
    return ok;
}

static void test_differential(void)
{
    int bad = 0;
    uint64_t matched = 0;
    for (int i = 0; i < 2000; i++) {
        lp_ktrace *kt = random_trace(2 + (uint32_t)rnd(4));
        lp_kmatch m;
        if (!lp_kmatch_run(kt, &m, NULL)) {
            matched += m.npk;
            lp_kmatch_release(&m);
        }
        if (!merge_equals_whole(kt) && bad++ < 3)
            fprintf(stderr, "case %d: the merged ECIs differ from the whole traces' match\n", i);
        lp_ktrace_free(kt);
    }
    CHECK_EQ_I(bad, 0);
    CHECK(matched > 1000); /* the cases do exercise matching */
}

static void test_roundtrip_and_truncation(void)
{
    lp_ktrace *kt = random_trace(2);
    lp_strtab_intern(&kt->strs, "/traces/h0", 10, &kt->host[0].source);
    kt->host[0].nreordered = 3, kt->host[0].bytes = 12345;
    if (kt->host[0].nev) {
        lp_strtab_intern(&kt->strs, "sshd", 4, &kt->host[0].ev[0].name);
    }
    lp_dbuf b = {0};
    CHECK_EQ_I(lp_keci_pack_host(kt, 0, 1, 0, &b, NULL), LP_OK);
    lp_ktrace *back;
    CHECK_EQ_I(lp_keci_ktrace_new(2, &back, NULL), LP_OK);
    lp_drd r = lp_drd_init(b.p, b.n);
    uint32_t h = 99;
    CHECK_EQ_I(lp_keci_unpack_host(&r, back, &h, NULL, NULL, NULL), LP_OK);
    CHECK_EQ_I(h, 1);
    const lp_khost *x = &kt->host[0], *y = &back->host[1];
    CHECK_EQ_I(y->nev, x->nev);
    CHECK_STR(lp_strtab_get(&back->strs, y->name), "h0");
    CHECK_STR(lp_strtab_get(&back->strs, y->source), "/traces/h0");
    CHECK_EQ_I(y->nreordered, 3);
    CHECK_EQ_I(y->bytes, 12345);
    for (uint64_t i = 0; i < x->nev && i < y->nev; i++) {
        CHECK(x->ev[i].ts == y->ev[i].ts && x->ev[i].type == y->ev[i].type && x->ev[i].a == y->ev[i].a);
        const char *nx = x->ev[i].name == LP_STR_NONE ? "" : lp_strtab_get(&kt->strs, x->ev[i].name);
        const char *ny = y->ev[i].name == LP_STR_NONE ? "" : lp_strtab_get(&back->strs, y->ev[i].name);
        CHECK_STR(ny, nx);
    }
    /* a host already present is refused */
    r = lp_drd_init(b.p, b.n);
    CHECK_EQ_I(lp_keci_unpack_host(&r, back, &h, NULL, NULL, NULL), LP_ERR_FORMAT);
    lp_ktrace_free(back);
    /* every truncation is a format error */
    for (size_t n = 0; n < b.n; n += 1 + n / 7) {
        CHECK_EQ_I(lp_keci_ktrace_new(2, &back, NULL), LP_OK);
        r = lp_drd_init(b.p, n);
        lp_error err;
        CHECK_EQ_I(lp_keci_unpack_host(&r, back, &h, NULL, NULL, &err), LP_ERR_FORMAT);
        CHECK(back->host[1].ev == NULL);
        lp_ktrace_free(back);
    }
    /* garbage */
    uint8_t junk[64];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)rnd(256);
    CHECK_EQ_I(lp_keci_ktrace_new(2, &back, NULL), LP_OK);
    r = lp_drd_init(junk, sizeof junk);
    CHECK_EQ_I(lp_keci_unpack_host(&r, back, &h, NULL, NULL, NULL), LP_ERR_FORMAT);
    lp_ktrace_free(back);
    lp_dbuf_release(&b);
    lp_ktrace_free(kt);
}

int main(void)
{
    test_roundtrip_and_truncation();
    test_differential();
    return t_done("keci");
}
