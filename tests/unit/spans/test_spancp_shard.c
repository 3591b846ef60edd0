/* test_spancp_shard.c: span critical paths split over K parts (spancp.h, "a trace's
 * path as bytes": `longpole dist spans`) against one process: for random tables of many
 * traces (ties, skew, async children, shuffled input), K = 1..4, each part walks the
 * traces t mod K = part with its own workspace and packs the paths; the paths unpacked
 * in trace order re-pack to the single-process bytes, and the aggregate built from them
 * gives the same percentile tables (sets, latencies, every row). Damaged buffers are
 * LP_ERR_FORMAT. */
#include "longpole/longpole.h"
#include "longpole/model/span.h"
#include "longpole/analysis/spans/spancp.h"
#include "t.h"

static lp_diags DS;
static uint64_t rs = 0x853C49E6748FEA9BULL;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
static int64_t rr(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static void add(lp_spans *sp, const char *trace, uint64_t id, uint64_t parent, int64_t start, int64_t dur, int kind,
                unsigned flags, const char *svc, const char *op)
{
    lp_span_rec r;
    memset(&r, 0, sizeof r);
    lp_error err;
    lp_spans_trace(sp, trace, strlen(trace), &r.trace, &err);
    r.id = id;
    r.pid = parent;
    r.idtext = LP_STR_NONE;
    r.flags = (uint16_t)(flags | (parent ? LP_SPAN_HAS_PARENT : 0));
    r.start = start;
    r.dur = dur;
    r.kind = (uint8_t)kind;
    r.service = lp_spans_name(sp, svc, strlen(svc));
    r.op = lp_spans_name(sp, op, strlen(op));
    r.line = sp->n + 1;
    r.off = sp->n * 100;
    CHECK(lp_spans_add(sp, &r, &err) == LP_OK);
}

/* A random trace of n spans: children near their parent (some outside: skew), ties,
 * async children, operations from a small set. */
static void random_trace(lp_spans *sp, const char *trace, int n)
{
    int64_t s[64], e[64];
    for (int i = 0; i < n; i++) {
        int p = i ? (int)rr(0, i - 1) : -1;
        if (p < 0) {
            s[i] = rr(0, 5);
            e[i] = s[i] + rr(0, 60);
        } else {
            s[i] = rr(s[p] - 2, e[p] + 1);
            e[i] = s[i] + rr(0, 15);
        }
        char op[8];
        snprintf(op, sizeof op, "op%d", (int)rr(0, 4));
        add(sp, trace, (uint64_t)i + 1, p >= 0 ? (uint64_t)p + 1 : 0, s[i], e[i] - s[i], (int)rr(0, 5),
            rr(0, 9) == 0 ? LP_SPAN_FOLLOWS : 0, rr(0, 1) ? "svcA" : "svcB", op);
    }
}

typedef struct packed {
    uint8_t *buf;
    size_t len, cap;
} packed;

/* Walk the traces t mod K == part (K 0: all) into out. */
static void walk(const lp_spans *sp, uint32_t K, uint32_t part, packed *out)
{
    lp_spancp cp;
    lp_spancp_init(&cp);
    lp_error err;
    for (uint32_t t = 0; t < sp->ntraces; t++) {
        if (K && t % K != part)
            continue;
        CHECK(lp_spancp_trace(&cp, sp, t, &err) == LP_OK);
        CHECK(lp_spancp_pack(&cp, &out->buf, &out->len, &out->cap, &err) == LP_OK);
    }
    lp_spancp_release(&cp);
}

/* The percentile tables of paths added in trace order from parts (K 0: one buffer). */
static lp_spancp_pct *aggregate(const lp_spans *sp, packed *parts, uint32_t K, const double *p, size_t np,
                                packed *repack)
{
    lp_spancp_agg *agg;
    lp_spancp cp;
    lp_error err;
    lp_spancp_init(&cp);
    CHECK(lp_spancp_agg_new(&agg, sp, &err) == LP_OK);
    size_t off[4] = {0, 0, 0, 0};
    uint32_t k = K ? K : 1;
    for (uint32_t t = 0; t < sp->ntraces; t++) {
        uint32_t q = t % k;
        if (lp_spancp_unpack(&cp, parts[q].buf, parts[q].len, &off[q], sp->n, &err) != LP_OK) {
            CHECK(0);
            break;
        }
        CHECK_EQ_I(cp.trace, t);
        CHECK(lp_spancp_agg_add(agg, &cp, &err) == LP_OK);
        CHECK(lp_spancp_pack(&cp, &repack->buf, &repack->len, &repack->cap, &err) == LP_OK);
    }
    for (uint32_t q = 0; q < k; q++)
        CHECK_EQ_I(off[q], parts[q].len);
    lp_spancp_pct *pct = NULL;
    CHECK(lp_spancp_agg_percentiles(agg, p, np, &pct, &err) == LP_OK);
    lp_spancp_agg_free(agg);
    lp_spancp_release(&cp);
    return pct;
}

static int same_rows(const lp_spancp_row *a, size_t na, const lp_spancp_row *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].id != b[i].id || a[i].total != b[i].total || a[i].max != b[i].max || a[i].traces != b[i].traces)
            return 0;
    return 1;
}

static int runs;

static void test_random(void)
{
    static const double pcts[] = {50, 90, 99, 100};
    for (int iter = 0; iter < 400; iter++) {
        lp_spans sp;
        lp_diags_init(&DS, 0);
        lp_spans_init(&sp, &DS);
        lp_error err;
        lp_spans_source(&sp, "t.json", &err);
        int ntr = (int)rr(1, 30);
        for (int t = 0; t < ntr; t++) {
            char name[16];
            snprintf(name, sizeof name, "tr%d", t);
            random_trace(&sp, name, (int)rr(1, 40));
        }
        CHECK(lp_spans_finish(&sp, &err) == LP_OK);
        packed one = {NULL, 0, 0}, onere = {NULL, 0, 0};
        walk(&sp, 0, 0, &one);
        lp_spancp_pct *ref = aggregate(&sp, &one, 0, pcts, 4, &onere);
        CHECK(onere.len == one.len && memcmp(onere.buf, one.buf, one.len) == 0);
        for (uint32_t K = 1; K <= 4; K++) {
            packed parts[4], re = {NULL, 0, 0};
            memset(parts, 0, sizeof parts);
            for (uint32_t q = 0; q < K; q++)
                walk(&sp, K, q, &parts[q]);
            lp_spancp_pct *got = aggregate(&sp, parts, K, pcts, 4, &re);
            CHECK(re.len == one.len && memcmp(re.buf, one.buf, one.len) == 0);
            for (size_t i = 0; got && ref && i < 4; i++) {
                CHECK_EQ_I(got[i].ntraces, ref[i].ntraces);
                CHECK_EQ_I(got[i].latency, ref[i].latency);
                CHECK_EQ_I(got[i].latency_sum, ref[i].latency_sum);
                CHECK(same_rows(got[i].ops, got[i].nops, ref[i].ops, ref[i].nops));
                CHECK(same_rows(got[i].paths, got[i].npaths, ref[i].paths, ref[i].npaths));
            }
            lp_spancp_pct_free(got, 4);
            for (uint32_t q = 0; q < K; q++)
                lp_free(parts[q].buf);
            lp_free(re.buf);
            runs++;
        }
        /* damaged: cut short, another magic, a span index outside a smaller table */
        if (one.len) {
            lp_spancp cp;
            lp_spancp_init(&cp);
            size_t off = 0;
            CHECK(lp_spancp_unpack(&cp, one.buf, one.len - 1 < 12 ? 0 : 11, &off, sp.n, &err) == LP_ERR_FORMAT);
            off = 0;
            one.buf[0] ^= 0x40;
            CHECK(lp_spancp_unpack(&cp, one.buf, one.len, &off, sp.n, &err) == LP_ERR_FORMAT);
            one.buf[0] ^= 0x40;
            off = 0;
            lp_status st = lp_spancp_unpack(&cp, one.buf, one.len, &off, 0, &err);
            CHECK(st == LP_ERR_FORMAT || cp.root == LP_SPAN_NONE);
            lp_spancp_release(&cp);
        }
        lp_spancp_pct_free(ref, 4);
        lp_free(one.buf);
        lp_free(onere.buf);
        lp_spans_release(&sp);
        lp_diags_release(&DS);
    }
}

int main(void)
{
    test_random();
    fprintf(stderr, "spancp shard: %d sharded runs\n", runs);
    CHECK(runs >= 1600);
    return t_done("test_spancp_shard");
}
