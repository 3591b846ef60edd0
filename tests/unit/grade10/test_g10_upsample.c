/* test_g10_upsample.c: Grade10's upsampling of one window (papers/grade10.txt §III-D2):
 * the paper's Fig. 2 known answer (15 % and 65 %), edge cases, and a naive twin that
 * iterates the caps (distribute in proportion, clamp whatever exceeds its cap, repeat)
 * on thousands of random windows; invariants: total preserved to 1e-9, 0 <= x <= u <= K. */
#include "t.h"
#include "tutil.h"
#include "longpole/analysis/grade10/attrib.h"

#include <math.h>

#define N 1280

/* The twin: the paper's steps written the slow, obvious way. */
static double naive(size_t n, const double *len, const double *E, const double *V, double K, double C, double *u,
                    double *x)
{
    double A = 0;
    for (size_t t = 0; t < n; t++) {
        x[t] = E[t] < K ? E[t] : K;
        A += len[t] * x[t];
    }
    if (C <= A) {
        for (size_t t = 0; t < n; t++)
            u[t] = x[t] = A > 0 ? x[t] * C / A : 0;
        return 0;
    }
    for (size_t t = 0; t < n; t++)
        u[t] = x[t];
    double R = C - A;
    for (int pass = 0; pass < 2 && R > 1e-300; pass++) {
        int active[N];
        for (size_t t = 0; t < n; t++)
            active[t] = (pass ? 1 : V[t] > 0) && u[t] < K;
        for (;;) {
            double W = 0;
            for (size_t t = 0; t < n; t++)
                if (active[t])
                    W += len[t] * (pass ? 1 : V[t]);
            if (W <= 0)
                break;
            int clamped = 0;
            for (size_t t = 0; t < n; t++) {
                if (!active[t])
                    continue;
                double add = R * (pass ? 1 : V[t]) / W;
                if (u[t] + add > K) {
                    R -= len[t] * (K - u[t]);
                    u[t] = K;
                    active[t] = 0;
                    clamped = 1;
                }
            }
            if (clamped)
                continue; /* redistribute what is left among the others */
            for (size_t t = 0; t < n; t++)
                if (active[t])
                    u[t] += R * (pass ? 1 : V[t]) / W;
            R = 0;
            break;
        }
    }
    return R > 0 ? R : 0;
}

static void test_fig2(void)
{
    /* resource R2, slices 2 and 3: P2 variable (y) in both, P3 exact 50 % in slice 3;
     * the window's mean is 40 % */
    double len[2] = {1, 1}, E[2] = {0, 0.5}, V[2] = {1, 1}, u[2], x[2];
    uint32_t scr[2];
    double clip = lp_g10_upsample(2, len, E, V, 1.0, 0.4 * 2, u, x, scr);
    CHECK(clip == 0);
    CHECK(fabs(u[0] - 0.15) < 1e-12 && fabs(u[1] - 0.65) < 1e-12);
    /* attribution in slice 3: P3 gets e/E of the exact part, P2 v/V of the rest */
    double p3 = 0.5 * x[1] / E[1], p2 = 1.0 * (u[1] - x[1]) / V[1];
    CHECK(fabs(p3 - 0.50) < 1e-12 && fabs(p2 - 0.15) < 1e-12);
    /* the same with the variable weight doubled (2y): proportions unchanged */
    double V2[2] = {2, 2};
    lp_g10_upsample(2, len, E, V2, 1.0, 0.8, u, x, scr);
    CHECK(fabs(u[0] - 0.15) < 1e-12 && fabs(u[1] - 0.65) < 1e-12);
}

static void test_edges(void)
{
    uint32_t scr[4];
    double u[4], x[4];
    /* identity: one segment per window */
    double l1[1] = {1}, e1[1] = {3}, v1[1] = {2};
    lp_g10_upsample(1, l1, e1, v1, 4, 3.5, u, x, scr);
    CHECK(fabs(u[0] - 3.5) < 1e-12 && fabs(x[0] - 3) < 1e-12);
    lp_g10_upsample(1, l1, e1, v1, 4, 1.5, u, x, scr);
    CHECK(fabs(u[0] - 1.5) < 1e-12 && fabs(x[0] - 1.5) < 1e-12);
    double e0[1] = {0}, v0[1] = {0};
    lp_g10_upsample(1, l1, e0, v0, 4, 2.5, u, x, scr); /* no demand: all background */
    CHECK(fabs(u[0] - 2.5) < 1e-12 && x[0] == 0);
    /* exact demand above capacity is capped at K and scaled */
    double l2[2] = {1, 1}, e2[2] = {8, 0}, v2[2] = {0, 0};
    lp_g10_upsample(2, l2, e2, v2, 4, 2, u, x, scr);
    CHECK(fabs(u[0] - 2) < 1e-12 && u[1] == 0);
    /* more than capacity everywhere: clipped, reported */
    double clip = lp_g10_upsample(2, l2, e2, v2, 4, 10, u, x, scr);
    CHECK(fabs(clip - 2) < 1e-12 && u[0] == 4 && u[1] == 4);
    /* variable demand capped: one slice saturates, the other takes the rest */
    double l3[3] = {1, 1, 1}, e3[3] = {0, 0, 0}, v3[3] = {10, 1, 0};
    lp_g10_upsample(3, l3, e3, v3, 1, 1.5, u, x, scr);
    CHECK(fabs(u[0] - 1) < 1e-12 && fabs(u[1] - 0.5) < 1e-12 && u[2] == 0);
    /* then background into the slice without demand */
    lp_g10_upsample(3, l3, e3, v3, 1, 2.5, u, x, scr);
    CHECK(fabs(u[0] - 1) < 1e-12 && fabs(u[1] - 1) < 1e-12 && fabs(u[2] - 0.5) < 1e-12);
    /* zero consumption */
    lp_g10_upsample(3, l3, e3, v3, 1, 0, u, x, scr);
    CHECK(u[0] == 0 && u[1] == 0 && u[2] == 0);
}

static double rnd(uint64_t *s) { return (double)(t_splitmix(s) >> 11) / 9007199254740992.0; }

static void test_twin(void)
{
    uint64_t seed = 42;
    int bad = 0;
    for (int c = 0; c < 20000; c++) {
        /* every 50th window longer than 512 segments (upsample.c sorts those another way) */
        size_t n = c % 50 == 49 ? 513 + t_splitmix(&seed) % 700 : 1 + t_splitmix(&seed) % 40;
        static double len[N], E[N], V[N], u[N], x[N], u2[N], x2[N];
        static uint32_t scr[N];
        double K = 0.5 + 10 * rnd(&seed), total = 0;
        int eq_len = rnd(&seed) < 0.5;
        for (size_t t = 0; t < n; t++) {
            len[t] = eq_len ? 0.01 : 0.001 + rnd(&seed);
            double r = rnd(&seed);
            E[t] = r < 0.4 ? 0 : r < 0.6 ? K * rnd(&seed) * 2 : floor(4 * rnd(&seed));
            r = rnd(&seed);
            V[t] = r < 0.4 ? 0 : r < 0.7 ? 1 + floor(5 * rnd(&seed)) : 10 * rnd(&seed);
            total += len[t];
        }
        double C = K * total * 1.2 * rnd(&seed);
        double c1 = lp_g10_upsample(n, len, E, V, K, C, u, x, scr);
        double c2 = naive(n, len, E, V, K, C, u2, x2);
        double sum = 0, tol = 1e-9 * (C > 1 ? C : 1);
        int ok = fabs(c1 - c2) <= tol;
        for (size_t t = 0; t < n; t++) {
            sum += len[t] * u[t];
            ok &= fabs(u[t] - u2[t]) <= 1e-9 * (K > 1 ? K : 1) && fabs(x[t] - x2[t]) <= 1e-9 * (K > 1 ? K : 1);
            ok &= x[t] >= 0 && x[t] <= u[t] + 1e-12 && u[t] <= K * (1 + 1e-12);
        }
        ok &= fabs(sum + c1 - C) <= tol;
        if (!ok && bad++ < 3) {
            fprintf(stderr, "case %d n=%zu K=%g C=%g clip %g vs %g, sum %g\n", c, n, K, C, c1, c2, sum);
            for (size_t t = 0; t < n; t++)
                fprintf(stderr, "  t%zu len %g E %g V %g: u %.12g vs %.12g, x %.12g vs %.12g\n", t, len[t], E[t], V[t],
                        u[t], u2[t], x[t], x2[t]);
        }
    }
    CHECK_EQ_I(bad, 0);
}

int main(void)
{
    test_fig2();
    test_edges();
    test_twin();
    return t_done("test_g10_upsample");
}
