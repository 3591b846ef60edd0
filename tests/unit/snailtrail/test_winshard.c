/* test_winshard.c: SnailTrail's windows split over K parts (window.h, winpack.c:
 * `longpole dist summary`) against one process:
 *  - for random traces and random grids, K = 1..4: each part analyses the windows
 *    k % K == part on its own source and key table (as another process would), packs
 *    them, the parts' bytes are unpacked and merged in index order, and every merged
 *    result re-packs to exactly the bytes of the single-process result (bit for bit:
 *    doubles included; only the wall-clock `seconds` is zeroed on both sides);
 *  - a damaged buffer (cut anywhere, another magic, a summary kind out of place) is
 *    LP_ERR_FORMAT, never a read past its end. */
#include "t.h"
#include "tutil.h"
#include "cptest.h"

typedef struct packed {
    uint8_t *buf;
    size_t len, cap;
    uint64_t n;
    int bad;
} packed;

static int on_pack(void *ctx, const lp_winres *r)
{
    packed *p = ctx;
    lp_winres c = *r; /* shallow: the rows stay the pool's */
    c.seconds = 0;
    lp_error err;
    if (lp_winres_pack(&c, &p->buf, &p->len, &p->cap, &err))
        p->bad = 1;
    p->n++;
    return 0;
}

/* Windows of g with k % K == part (K = 0: all), analysed on a fresh source and key table. */
static void run_part(const lp_trace *t, const lp_wingrid *g, const lp_winopts *wo, uint64_t K, uint64_t part,
                     packed *out)
{
    lp_snapsrc src;
    lp_sumkeys keys;
    lp_error err;
    CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
    CHECK(lp_wingrid_plan(g, &src, &err) == LP_OK);
    CHECK(lp_sumkeys_init(&keys, t, &err) == LP_OK);
    lp_winpool *p;
    CHECK(lp_winpool_new(&p, 1 + (unsigned)(part % 2), wo, on_pack, out, &err) == LP_OK);
    for (uint64_t k = 0; k < g->n; k++)
        if (!K || lp_wingrid_part(k, K) == part)
            CHECK(lp_winpool_submit(p, &src, &keys, k, lp_wingrid_ts(g, k), lp_wingrid_te(g, k), NULL, &err) ==
                  LP_OK);
    CHECK(lp_winpool_finish(p, &err) == LP_OK);
    lp_winpool_free(p);
    lp_sumkeys_release(&keys);
    lp_snapsrc_release(&src);
    CHECK(!out->bad);
}

static int shards_checked, windows_checked;

/* The parts' results merged in index order, re-packed, against the reference bytes. */
static void merge_and_compare(const lp_trace *t, packed *parts, uint64_t K, const packed *ref, uint64_t nwin)
{
    lp_sumkeys keys;
    lp_snapsrc src;
    lp_error err;
    CHECK(lp_sumkeys_init(&keys, t, &err) == LP_OK);
    CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
    size_t off[4] = {0, 0, 0, 0};
    packed merged = {NULL, 0, 0, 0, 0};
    lp_winres r;
    lp_winres_init(&r);
    for (uint64_t k = 0; k < nwin; k++) {
        uint64_t p = lp_wingrid_part(k, K);
        lp_status st = lp_winres_unpack(&r, parts[p].buf, parts[p].len, &off[p], &keys, &src, &err);
        CHECK(st == LP_OK);
        if (st)
            break;
        CHECK_EQ_I(r.index, k);
        CHECK(r.t == t && r.keys == &keys);
        CHECK(lp_winres_pack(&r, &merged.buf, &merged.len, &merged.cap, &err) == LP_OK);
        windows_checked++;
    }
    for (uint64_t p = 0; p < K; p++)
        CHECK_EQ_I(off[p], parts[p].len);
    CHECK_EQ_I(merged.len, ref->len);
    CHECK(merged.len == ref->len && memcmp(merged.buf, ref->buf, ref->len) == 0);
    shards_checked++;
    lp_winres_release(&r);
    lp_free(merged.buf);
    lp_snapsrc_release(&src);
    lp_sumkeys_release(&keys);
}

static void check_trace(const lp_trace *t, int64_t size, int64_t step, unsigned kinds, uint64_t seed, int no_path)
{
    lp_wingrid g;
    lp_error err;
    if (lp_wingrid_make(&g, t->tmin, t->tmax, size, step, &err) != LP_OK || g.n > 4000)
        return;
    lp_winopts wo = {kinds, seed, no_path, (int)(seed % 3 == 0)};
    packed ref = {NULL, 0, 0, 0, 0};
    run_part(t, &g, &wo, 0, 0, &ref);
    CHECK_EQ_I(ref.n, g.n);
    for (uint64_t K = 1; K <= 4; K++) {
        packed parts[4];
        memset(parts, 0, sizeof parts);
        for (uint64_t p = 0; p < K; p++)
            run_part(t, &g, &wo, K, p, &parts[p]);
        merge_and_compare(t, parts, K, &ref, g.n);
        for (uint64_t p = 0; p < K; p++)
            lp_free(parts[p].buf);
    }
    lp_free(ref.buf);
}

static void test_random(void)
{
    for (int it = 0; it < 1500; it++) {
        lp_trace *t = random_trace(it % 4 == 0);
        if (!t)
            continue;
        int64_t span = t->tmax - t->tmin > 0 ? t->tmax - t->tmin : 1;
        int64_t size = 1 + (int64_t)rnd((uint32_t)span + 1), step = it % 3 ? size : 1 + (int64_t)rnd((uint32_t)size);
        unsigned kinds = it % 5 ? (1u << LP_SUM_NKINDS) - 1 : 1u + rnd((1u << LP_SUM_NKINDS) - 1);
        check_trace(t, size, step, kinds, 1 + rnd(100), it % 7 == 0);
        lp_trace_free(t);
    }
}

static void test_generated(void)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        lp_gen_dataflow o;
        lp_gen_dataflow_defaults(&o);
        o.duration_ns = 60000000;
        o.seed = seed;
        o.skew = 0.3;
        lp_trace *t;
        lp_error err;
        CHECK(lp_gen_dataflow_run(&o, &t, &err) == LP_OK);
        check_trace(t, 7000000, seed == 2 ? 3000000 : 7000000, (1u << LP_SUM_NKINDS) - 1, seed, 0);
        lp_trace_free(t);
    }
}

/* Cut, re-labelled or re-kinded buffers are refused. */
static void test_damaged(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.duration_ns = 20000000;
    lp_trace *t;
    lp_error err;
    CHECK(lp_gen_dataflow_run(&o, &t, &err) == LP_OK);
    lp_wingrid g;
    CHECK(lp_wingrid_make(&g, t->tmin, t->tmax, 10000000, 10000000, &err) == LP_OK);
    lp_winopts wo = {(1u << LP_SUM_NKINDS) - 1, 1, 0, 0};
    packed one = {NULL, 0, 0, 0, 0};
    run_part(t, &g, &wo, 0, 0, &one);
    lp_sumkeys keys;
    lp_snapsrc src;
    CHECK(lp_sumkeys_init(&keys, t, &err) == LP_OK);
    CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
    lp_winres r;
    lp_winres_init(&r);
    size_t off = 0, first = 0;
    CHECK(lp_winres_unpack(&r, one.buf, one.len, &off, &keys, &src, &err) == LP_OK);
    first = off;
    int refused = 0;
    for (size_t cut = 0; cut < first; cut += 1 + cut / 16) {
        off = 0;
        refused += lp_winres_unpack(&r, one.buf, cut, &off, &keys, &src, &err) == LP_ERR_FORMAT;
    }
    CHECK(refused > 0);
    for (size_t cut = 0; cut < first; cut += 1 + cut / 16)
        refused--;
    CHECK_EQ_I(refused, 0);
    uint8_t *copy = malloc(one.len);
    memcpy(copy, one.buf, one.len);
    copy[0] ^= 1;
    off = 0;
    CHECK(lp_winres_unpack(&r, copy, one.len, &off, &keys, &src, &err) == LP_ERR_FORMAT);
    CHECK(strstr(err.msg, "bad header") != NULL);
    memcpy(copy, one.buf, one.len);
    memset(copy + 4, 0xff, 8); /* the size past the end */
    off = 0;
    CHECK(lp_winres_unpack(&r, copy, one.len, &off, &keys, &src, &err) == LP_ERR_FORMAT);
    free(copy);
    lp_winres_release(&r);
    lp_snapsrc_release(&src);
    lp_sumkeys_release(&keys);
    lp_free(one.buf);
    lp_trace_free(t);
}

int main(void)
{
    test_random();
    test_generated();
    test_damaged();
    fprintf(stderr, "winshard: %d sharded runs, %d windows merged\n", shards_checked, windows_checked);
    CHECK(shards_checked > 4000);
    return t_done("test_winshard");
}
