/* test_khull.c: the clock hull (src/import/kernel/khull.c) against a naive twin on
 * thousands of random packet sets, and packet matching with clock synchronisation
 * (kmatch.c) on synthetic hosts.
 *
 * The naive twin: every line through one "above" point and one "below" point is a
 * candidate; it is feasible if no point is on the wrong side (exact, 128-bit cross
 * products); the extreme feasible slopes are the bounds (a slope is unbounded above
 * iff every below point is right of every above point, or on the same x and not above
 * it; likewise below); no feasible line and no unbounded side means no line at all.
 * The intercepts allowed at the chosen slope are min/max over all points. */
#include "import/kernel/khull.h"
#include "import/kernel/kint.h"
#include "longpole/import/kernel.h"
#include "t.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

__extension__ typedef __int128 i128;

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static int64_t rint_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }
static double runif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

typedef struct naive {
    int feasible, unb_hi, unb_lo;
    long double a_lo, a_hi, b_at_lo, b_at_hi;
} naive;

/* Is r on the allowed side of the line through p (above) and q (below)? */
static int side_ok(khpt p, khpt q, khpt r, int r_above)
{
    i128 dx = (i128)q.x - p.x;
    i128 v = ((i128)r.y - p.y) * dx - ((i128)q.y - p.y) * ((i128)r.x - p.x); /* sign of (r - line) * dx */
    if (dx < 0)
        v = -v;
    return r_above ? v >= 0 : v <= 0;
}

static naive naive_fit(const khpt *A, size_t na, const khpt *B, size_t nb)
{
    naive r = {0, 1, 1, INFINITY, -INFINITY, 0, 0};
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++) {
            khpt p = A[i], q = B[j];
            if (!(q.x > p.x || (q.x == p.x && p.y >= q.y)))
                r.unb_hi = 0;
            if (!(q.x < p.x || (q.x == p.x && p.y >= q.y)))
                r.unb_lo = 0;
            if (p.x == q.x)
                continue;
            int ok = 1;
            for (size_t k = 0; k < na && ok; k++)
                ok = side_ok(p, q, A[k], 1);
            for (size_t k = 0; k < nb && ok; k++)
                ok = side_ok(p, q, B[k], 0);
            if (!ok)
                continue;
            r.feasible = 1;
            long double a = (long double)(q.y - p.y) / (long double)(q.x - p.x);
            if (a > r.a_hi) {
                r.a_hi = a;
                r.b_at_hi = (long double)p.y - a * (long double)p.x;
            }
            if (a < r.a_lo) {
                r.a_lo = a;
                r.b_at_lo = (long double)p.y - a * (long double)p.x;
            }
        }
    if (r.unb_hi || r.unb_lo)
        r.feasible = 1;
    if (r.unb_hi)
        r.a_hi = INFINITY;
    if (r.unb_lo)
        r.a_lo = -INFINITY;
    return r;
}

static int close_to(long double x, long double y, long double abs_tol)
{
    if (isinf(x) || isinf(y))
        return x == y;
    return fabsl(x - y) <= abs_tol + 1e-12L * fabsl(y);
}

static int cases, accurate, approx, fail;

static void one_case(khpt *A, size_t na, khpt *B, size_t nb, long double xmag)
{
    khpt a2[64], b2[64];
    memcpy(a2, A, na * sizeof *A);
    memcpy(b2, B, nb * sizeof *B);
    khres r;
    lp_error err;
    CHECK(lp_khull_fit(a2, na, b2, nb, &r, &err) == LP_OK);
    cases++;
    long double btol = 1e-6L + xmag * 1e-17L; /* intercepts of epoch-scale x */
    if (!na || !nb) {
        CHECK_EQ_I(r.q, (na || nb) ? KH_APPROX : KH_NONE);
        if (na || nb) {
            CHECK(r.a == 1);
            long double want = na ? INFINITY : -INFINITY; /* the tight side: y - x over the points */
            for (size_t i = 0; i < na; i++)
                want = fminl(want, (long double)A[i].y - (long double)A[i].x);
            for (size_t i = 0; i < nb; i++)
                want = fmaxl(want, (long double)B[i].y - (long double)B[i].x);
            CHECK(close_to(r.b, want, btol));
            approx++;
        }
        return;
    }
    naive n = naive_fit(A, na, B, nb);
    if (!n.feasible) {
        CHECK_EQ_I(r.q, KH_FAIL);
        fail++;
        return;
    }
    int ok = r.q == KH_ACCURATE || r.q == KH_APPROX;
    CHECK(ok);
    if (!ok) {
        fprintf(stderr, "  case %d: fast says no line, naive found [%Lg, %Lg]\n", cases, n.a_lo, n.a_hi);
        return;
    }
    CHECK(close_to(r.a_hi, n.a_hi, 1e-15L));
    CHECK(close_to(r.a_lo, n.a_lo, 1e-15L));
    CHECK_EQ_I(r.q, (isinf(n.a_hi) || isinf(n.a_lo)) ? KH_APPROX : KH_ACCURATE);
    if (r.q == KH_ACCURATE) {
        accurate++;
        CHECK(close_to(r.a, (n.a_lo + n.a_hi) / 2, 1e-15L));
        CHECK(close_to(r.b, (n.b_at_lo + n.b_at_hi) / 2, btol));
    } else
        approx++;
    /* the intercepts allowed at the chosen slope, and the chosen line inside them */
    long double blo = -INFINITY, bhi = INFINITY;
    for (size_t i = 0; i < na; i++)
        bhi = fminl(bhi, (long double)A[i].y - r.a * (long double)A[i].x);
    for (size_t i = 0; i < nb; i++)
        blo = fmaxl(blo, (long double)B[i].y - r.a * (long double)B[i].x);
    CHECK(close_to(r.b_hi, bhi, btol));
    CHECK(close_to(r.b_lo, blo, btol));
    CHECK(r.b >= r.b_lo - btol && r.b <= r.b_hi + btol);
}

/* Packets of two clocks y = a x + b with random latencies (x near epoch ns). */
static void realistic(void)
{
    khpt A[64], B[64];
    size_t na = (size_t)rint_in(1, 40), nb = (size_t)rint_in(rnd() % 8 ? 1 : 0, 40);
    long double a = 1 + (runif() - 0.5) * 2e-4L, b = (runif() - 0.5) * 2e11;
    int64_t x0 = rnd() % 2 ? 1361214076000000000LL + rint_in(0, 1000000000) : rint_in(0, 1000000);
    int64_t span = rint_in(1000, 20000000000LL);
    for (size_t i = 0; i < na; i++) { /* x -> y: sent at x, received after */
        int64_t x = x0 + rint_in(0, span);
        A[i] = (khpt){x, (int64_t)llroundl(a * x + b) + rint_in(500, 2000000)};
    }
    for (size_t i = 0; i < nb; i++) { /* y -> x: received at x, sent before */
        int64_t x = x0 + rint_in(0, span);
        B[i] = (khpt){x, (int64_t)llroundl(a * x + b) - rint_in(500, 2000000)};
    }
    if (rnd() % 16 == 0 && na) /* a packet that contradicts the others (a clock jump) */
        A[0].y -= rint_in(10000000, 100000000);
    one_case(A, na, B, nb, (long double)x0);
}

/* Small integer grids: ties, equal x, collinear points, empty and contradicting sets. */
static void grid(void)
{
    khpt A[64], B[64];
    size_t na = (size_t)rint_in(0, 7), nb = (size_t)rint_in(0, 7);
    int64_t w = rint_in(1, 12);
    for (size_t i = 0; i < na; i++)
        A[i] = (khpt){rint_in(0, w), rint_in(0, w) + rint_in(0, 4)};
    for (size_t i = 0; i < nb; i++)
        B[i] = (khpt){rint_in(0, w), rint_in(0, w) - rint_in(0, 4)};
    one_case(A, na, B, nb, 0);
}

static void test_twin(void)
{
    for (int i = 0; i < 4000; i++)
        realistic();
    for (int i = 0; i < 6000; i++)
        grid();
    fprintf(stderr, "khull twin: %d cases (%d accurate, %d approximate, %d without a line)\n", cases, accurate, approx,
            fail);
    CHECK(accurate > 1000);
    CHECK(approx > 100);
    CHECK(fail > 100);
}

/* ---- matching and synchronisation on synthetic hosts -------------------------------- */

/* Three hosts in a chain 0 <-> 1 <-> 2 (0 and 2 never talk); host h's clock is
 * t_h = s[h] * t_0 + o[h]. */
static void test_match_chain(void)
{
    lp_ktrace *kt;
    lp_error err;
    lp_diags ds;
    lp_diags_init(&ds, 10);
    CHECK(lp_ktrace_new(&kt, &err) == LP_OK);
    const long double s[3] = {1, 1.00002L, 0.99997L}, o[3] = {0, 5e9L, -3e9L};
    khb b[3];
    for (int h = 0; h < 3; h++)
        khb_init(&b[h], kt, &ds, "synthetic");
    uint32_t seq = 1000;
    int64_t t = 1400000000000000000LL;
    int npk = 0;
    for (int i = 0; i < 300; i++) {
        int pair = i % 2, from = pair ? 1 : 0, to = pair ? 2 : 1;
        if (rnd() % 2) {
            int x = from;
            from = to;
            to = x;
        }
        t += rint_in(100000, 5000000);
        int64_t lat = rint_in(20000, 400000);
        lp_kev snd = {.type = LP_KEV_NET_SEND, .tid = -1, .tid2 = -1, .ctx_tid = 1, .key = 0x1000u + (unsigned)pair,
                      .a = seq, .b = seq + 7, .flags = 0x1808};
        lp_kev rcv = snd;
        rcv.type = LP_KEV_NET_RECV;
        rcv.key = 0x2000u + (unsigned)pair;
        snd.ts = (int64_t)llroundl(s[from] * t + o[from]);
        rcv.ts = (int64_t)llroundl(s[to] * (t + lat) + o[to]);
        seq += 100;
        CHECK(khb_push(&b[from], 0, &snd, &err) == LP_OK);
        CHECK(khb_push(&b[to], 0, &rcv, &err) == LP_OK);
        npk++;
    }
    /* a segment whose receive was not traced, and one sent to itself (loopback) */
    lp_kev lone = {.type = LP_KEV_NET_SEND, .ts = t + 1, .tid = -1, .tid2 = -1, .ctx_tid = 1, .a = 1, .b = 2, .flags = 2};
    CHECK(khb_push(&b[0], 0, &lone, &err) == LP_OK);
    lp_kev lo_s = lone, lo_r = lone;
    lo_s.a = lo_r.a = 77;
    lo_r.type = LP_KEV_NET_RECV;
    lo_r.ts += 10;
    CHECK(khb_push(&b[2], 0, &lo_s, &err) == LP_OK);
    CHECK(khb_push(&b[2], 0, &lo_r, &err) == LP_OK);
    for (int h = 0; h < 3; h++)
        CHECK(khb_finish(&b[h], &err) == LP_OK);
    lp_kmatch m;
    CHECK(lp_kmatch_run(kt, &m, &err) == LP_OK);
    CHECK_EQ_I(m.npk, npk);
    CHECK_EQ_I(m.nunmatched_send, 2);
    CHECK_EQ_I(m.nunmatched_recv, 1);
    CHECK_EQ_I(m.clock[1].quality, LP_KCLOCK_ACCURATE);
    CHECK_EQ_I(m.clock[2].quality, LP_KCLOCK_ACCURATE);
    CHECK_EQ_I(m.clock[1].via, 0);
    CHECK_EQ_I(m.clock[2].via, 1);
    /* the true maps (t_0 = (t_h - o) / s) lie within the bounds, and are close */
    for (int h = 1; h < 3; h++) {
        long double ts = 1 / s[h], to = -o[h] / s[h];
        CHECK(ts >= m.clock[h].slope_lo * (1 - 1e-9) && ts <= m.clock[h].slope_hi * (1 + 1e-9));
        CHECK(fabsl(ts - m.clock[h].slope) <= m.clock[h].slope_hi - m.clock[h].slope_lo);
        CHECK(m.clock[h].slope_hi - m.clock[h].slope_lo < 2e-3);
        int64_t th = (int64_t)llroundl(s[h] * t + o[h]);
        CHECK(fabsl((long double)lp_kclock_apply(&m.clock[h], th) - (ts * th + to)) < 400000); /* within a latency */
    }
    for (uint64_t i = 0; i < m.npk; i++) { /* causal once synchronised */
        const lp_kpacket *k = &m.pk[i];
        CHECK(lp_kclock_apply(&m.clock[k->rhost], kt->host[k->rhost].ev[k->rev].ts) >=
              lp_kclock_apply(&m.clock[k->shost], kt->host[k->shost].ev[k->sev].ts));
    }
    lp_kmatch_release(&m);
    lp_ktrace_free(kt);
    lp_diags_release(&ds);
}

/* Addresses decide between two connections with the same (seq, ack, flags). */
static void test_match_addresses(void)
{
    lp_ktrace *kt;
    lp_error err;
    lp_diags ds;
    lp_diags_init(&ds, 10);
    CHECK(lp_ktrace_new(&kt, &err) == LP_OK);
    khb b0, b1;
    khb_init(&b0, kt, &ds, "h0");
    khb_init(&b1, kt, &ds, "h1");
    /* host 0 has two sockets to two peers; host 1 is the peer of socket 0x20 */
    lp_kev c1 = {.ts = 1, .type = LP_KEV_SOCK_ADDR, .key = 0x10, .a = 1, .b = 9, .flags = 1000u << 16 | 80, .tid = -1, .tid2 = -1, .ctx_tid = 1};
    lp_kev c2 = {.ts = 2, .type = LP_KEV_SOCK_ADDR, .key = 0x20, .a = 1, .b = 2, .flags = 1001u << 16 | 80, .tid = -1, .tid2 = -1, .ctx_tid = 1};
    lp_kev s1 = {.ts = 10, .type = LP_KEV_NET_SEND, .key = 0x10, .a = 5, .b = 6, .flags = 0x18, .tid = -1, .tid2 = -1, .ctx_tid = 1};
    lp_kev s2 = s1;
    s2.ts = 11;
    s2.key = 0x20;
    lp_kev acc = {.ts = 3, .type = LP_KEV_SOCK_ADDR, .key = 0x99, .a = 2, .b = 1, .flags = 80u << 16 | 1001, .tid = -1, .tid2 = -1, .ctx_tid = 1};
    lp_kev r = {.ts = 20, .type = LP_KEV_NET_RECV, .key = 0x99, .a = 5, .b = 6, .flags = 0x18, .tid = -1, .tid2 = -1, .ctx_tid = 1};
    CHECK(khb_push(&b0, 0, &c1, &err) == LP_OK && khb_push(&b0, 0, &c2, &err) == LP_OK);
    CHECK(khb_push(&b0, 0, &s1, &err) == LP_OK && khb_push(&b0, 0, &s2, &err) == LP_OK);
    CHECK(khb_push(&b1, 0, &acc, &err) == LP_OK && khb_push(&b1, 0, &r, &err) == LP_OK);
    CHECK(khb_finish(&b0, &err) == LP_OK && khb_finish(&b1, &err) == LP_OK);
    lp_kmatch m;
    CHECK(lp_kmatch_run(kt, &m, &err) == LP_OK);
    CHECK_EQ_I(m.npk, 1);
    if (m.npk == 1)
        CHECK_EQ_I(kt->host[0].ev[m.pk[0].sev].key, 0x20); /* not the earlier send of socket 0x10 */
    CHECK_EQ_I(m.clock[1].quality, LP_KCLOCK_APPROXIMATE); /* one direction only */
    lp_kmatch_release(&m);
    lp_ktrace_free(kt);
    lp_diags_release(&ds);
}

int main(void)
{
    test_twin();
    test_match_chain();
    test_match_addresses();
    return t_done("test_khull");
}
