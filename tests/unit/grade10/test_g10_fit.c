/* test_g10_fit.c: Variable weights fitted by non-negative least squares: the NNLS
 * solver against an exhaustive search over every passive set on random problems, and
 * known weights recovered from a synthetic run whose monitoring they generated. */
#include "t.h"
#include "tutil.h"
#include "longpole/import/grade10.h"
#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/exec.h"
#include "longpole/analysis/grade10/attrib.h"
#include "longpole/analysis/grade10/fit.h"

#include <math.h>

static double rnd(uint64_t *s) { return (double)(t_splitmix(s) >> 11) / 9007199254740992.0; }

static double objective(size_t k, const double *G, const double *h, const double *x)
{
    double f = 0;
    for (size_t p = 0; p < k; p++) {
        f -= 2 * h[p] * x[p];
        for (size_t q = 0; q < k; q++)
            f += x[p] * G[p * k + q] * x[q];
    }
    return f;
}

/* Unconstrained least squares on the variables of `mask` (Gauss-Jordan); 0 if singular. */
static int ls_subset(size_t k, const double *G, const double *h, unsigned mask, double *x)
{
    size_t idx[8], n = 0;
    for (size_t j = 0; j < k; j++)
        if (mask >> j & 1)
            idx[n++] = j;
    double M[8][9];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++)
            M[i][j] = G[idx[i] * k + idx[j]];
        M[i][n] = h[idx[i]];
    }
    for (size_t c = 0; c < n; c++) {
        size_t p = c;
        for (size_t r = c + 1; r < n; r++)
            if (fabs(M[r][c]) > fabs(M[p][c]))
                p = r;
        if (fabs(M[p][c]) < 1e-10)
            return 0;
        for (size_t j = 0; j <= n; j++) {
            double t = M[c][j];
            M[c][j] = M[p][j];
            M[p][j] = t;
        }
        for (size_t r = 0; r < n; r++)
            if (r != c) {
                double f = M[r][c] / M[c][c];
                for (size_t j = c; j <= n; j++)
                    M[r][j] -= f * M[c][j];
            }
    }
    memset(x, 0, k * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[idx[i]] = M[i][n] / M[i][i];
    return 1;
}

static void test_nnls_twin(void)
{
    uint64_t seed = 5;
    int bad = 0;
    for (int c = 0; c < 3000; c++) {
        size_t k = 1 + t_splitmix(&seed) % 7, rows = k + t_splitmix(&seed) % 10;
        double A[20][8], y[20], G[64] = {0}, h[8] = {0}, x[8], best[8];
        for (size_t i = 0; i < rows; i++) {
            for (size_t j = 0; j < k; j++)
                A[i][j] = rnd(&seed) < 0.3 ? 0 : rnd(&seed) * 3;
            y[i] = rnd(&seed) * 4 - 1;
        }
        for (size_t p = 0; p < k; p++) {
            for (size_t i = 0; i < rows; i++)
                h[p] += A[i][p] * y[i];
            for (size_t q = 0; q < k; q++)
                for (size_t i = 0; i < rows; i++)
                    G[p * k + q] += A[i][p] * A[i][q];
        }
        lp_g10_nnls(k, G, h, x);
        double fbest = 0; /* x = 0 is always feasible */
        memset(best, 0, sizeof best);
        for (unsigned mask = 1; mask < (1u << k); mask++) {
            double z[8];
            if (!ls_subset(k, G, h, mask, z))
                continue;
            int feas = 1;
            for (size_t j = 0; j < k; j++)
                feas &= z[j] >= -1e-12;
            double f = objective(k, G, h, z);
            if (feas && f < fbest)
                fbest = f, memcpy(best, z, sizeof best);
        }
        double f = objective(k, G, h, x);
        int ok = fabs(f - fbest) <= 1e-9 * (1 + fabs(fbest));
        for (size_t j = 0; j < k; j++)
            ok &= x[j] >= 0;
        if (!ok && bad++ < 3)
            fprintf(stderr, "case %d k=%zu: nnls objective %.12g, exhaustive %.12g\n", c, k, f, fbest);
    }
    CHECK_EQ_I(bad, 0);
}

/* Threads of type A use 2 cores each, readers of type B half a core each, the monitor
 * reports their sum every 100 ms; the fit must give back 2 and 0.5. */
static void test_recover(void)
{
    const char *model = "grade10-model 1\n"
                        "phase /Stage sequential stage\n"
                        "phase /Stage/A concurrent thread\n"
                        "phase /Stage/B concurrent reader\n"
                        "phase /Stage/Fixed\n"
                        "resource cpu consumable metric=cpu sample=mean capacity=64\n"
                        "rule /Stage/Fixed cpu exact 1\n";
    lp_diags ds;
    lp_diags_init(&ds, 20);
    lp_error err;
    lp_g10_model *m = NULL;
    CHECK(lp_g10_model_parse(&m, model, strlen(model), "m.g10", &ds, &err) == LP_OK);
    lp_g10_data d;
    lp_g10_data_init(&d, &err);
    uint64_t seed = 9;
    const int64_t ms = 1000000;
    /* activity per 1 ms bucket, to compute the monitoring exactly */
    static double load[20000];
    memset(load, 0, sizeof load);
    char line[256];
    char *ops = NULL;
    size_t nops = 0;
    FILE *f = open_memstream(&ops, &nops);
    for (int s = 0; s < 20; s++) {
        int64_t base = s * 1000 * ms;
        for (int th = 0; th < 6; th++) {
            int64_t st = base + (int64_t)(t_splitmix(&seed) % 400) * ms, en = st + (int64_t)(50 + t_splitmix(&seed) % 500) * ms;
            int isA = th < 3;
            fprintf(f, "time=%lld, event=start, phase=%s, stage=%d, %s=%d\n", (long long)st, isA ? "A" : "B", s,
                    isA ? "thread" : "reader", th);
            fprintf(f, "time=%lld, event=end, phase=%s, stage=%d, %s=%d\n", (long long)en, isA ? "A" : "B", s,
                    isA ? "thread" : "reader", th);
            for (int64_t t = st / ms; t < en / ms; t++)
                load[t] += isA ? 2.0 : 0.5;
        }
        int64_t fs = base + 900 * ms, fe = base + 1000 * ms;
        fprintf(f, "time=%lld, event=start, phase=Fixed, stage=%d\ntime=%lld, event=end, phase=Fixed, stage=%d\n",
                (long long)fs, s, (long long)fe, s);
        for (int64_t t = fs / ms; t < fe / ms; t++)
            load[t] += 1.0;
    }
    fclose(f);
    char *mon = NULL;
    size_t nmon = 0;
    FILE *g = open_memstream(&mon, &nmon);
    fprintf(g, "0,h,cpu,0\n");
    for (int64_t w = 100; w <= 20000; w += 100) {
        double sum = 0;
        for (int64_t t = w - 100; t < w; t++)
            sum += load[t];
        snprintf(line, sizeof line, "%lld,h,cpu,%.17g\n", (long long)(w * ms), sum / 100);
        fputs(line, g);
    }
    fclose(g);
    lp_input *in;
    lp_g10_read_opts o = {1};
    CHECK(lp_input_open_mem(&in, ops, strlen(ops), "ops.log", &err) == LP_OK);
    CHECK(lp_g10_read_oplog(&d, in, &o, &ds, &err) == LP_OK);
    lp_input_close(in);
    CHECK(lp_input_open_mem(&in, mon, strlen(mon), "mon.csv", &err) == LP_OK);
    CHECK(lp_g10_read_monitor(&d, in, &o, &ds, &err) == LP_OK);
    lp_input_close(in);
    lp_g10_exec *x = NULL;
    CHECK(lp_g10_exec_from_events(m, &d, &ds, &x, &err) == LP_OK);
    lp_g10_attr *a = NULL;
    lp_g10_opts ao = {LP_G10_EVENTS, 0, 1};
    CHECK(x && lp_g10_attribute(m, x, &d, &ao, &ds, &a, &err) == LP_OK);
    lp_g10_fit fit;
    CHECK(a && lp_g10_fit_rules(a, &d, 0, &fit, &err) == LP_OK);
    if (a) {
        uint32_t A = lp_g10_model_type(m, "/Stage/A"), B = lp_g10_model_type(m, "/Stage/B"),
                 F = lp_g10_model_type(m, "/Stage/Fixed");
        CHECK(fit.fitted[A] && fit.fitted[B] && !fit.fitted[F]);
        CHECK(fabs(fit.weight[A] - 2.0) < 1e-6 && fabs(fit.weight[B] - 0.5) < 1e-6);
        CHECK(fit.residual < 1e-6);
        CHECK_EQ_I(fit.windows, 200);
        char *txt = NULL;
        size_t nt = 0;
        FILE *w = open_memstream(&txt, &nt);
        lp_g10_fit_write(w, m, &fit);
        fclose(w);
        CHECK(strstr(txt, "rule /Stage/A cpu variable 2\n") != NULL);
        CHECK(strstr(txt, "rule /Stage/B cpu variable 0.5\n") != NULL);
        free(txt);
        lp_g10_fit_release(&fit);
    }
    lp_g10_attr_free(a);
    lp_g10_exec_free(x);
    lp_g10_data_release(&d);
    lp_g10_model_free(m);
    lp_diags_release(&ds);
    free(ops);
    free(mon);
}

int main(void)
{
    test_nnls_twin();
    test_recover();
    return t_done("test_g10_fit");
}
