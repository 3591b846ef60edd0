/* nnls.c: non-negative least squares by Lawson and Hanson's active-set method on the
 * normal equations (fit.h). The passive set P holds the variables allowed to be
 * positive; each outer step frees the variable with the largest gradient, each inner
 * step solves the unconstrained problem on P and, if some variable went negative, moves
 * back along the segment to the first boundary and drops the variables at zero. The
 * subproblems are solved by Gaussian elimination with partial pivoting; a pivot below
 * 1e-12 x the diagonal's scale marks a variable that is a combination of the others (it
 * stays at zero). Tested against an exhaustive search over every passive set. */
#include "longpole/analysis/grade10/fit.h"
#include "longpole/base/alloc.h"

#include <math.h>
#include <string.h>

#define KMAX 256

/* Solve G_PP z = h_P for the variables of P (idx[0..np)); z[np]. 0 if fine. */
static void solve(size_t k, const double *G, const double *h, const size_t *idx, size_t np, double *z, double *M)
{
    size_t w = np + 1;
    double scale = 0;
    for (size_t i = 0; i < np; i++) {
        for (size_t j = 0; j < np; j++)
            M[i * w + j] = G[idx[i] * k + idx[j]];
        M[i * w + np] = h[idx[i]];
        if (fabs(M[i * w + i]) > scale)
            scale = fabs(M[i * w + i]);
    }
    int dead[KMAX] = {0};
    for (size_t c = 0; c < np; c++) {
        size_t piv = c;
        for (size_t r = c + 1; r < np; r++)
            if (fabs(M[r * w + c]) > fabs(M[piv * w + c]))
                piv = r;
        if (!(fabs(M[piv * w + c]) > 1e-12 * (scale > 0 ? scale : 1))) {
            dead[c] = 1; /* dependent column: its variable stays 0 */
            for (size_t r = 0; r < np; r++)
                M[r * w + c] = 0;
            continue;
        }
        if (piv != c)
            for (size_t j = 0; j < w; j++) {
                double t = M[c * w + j];
                M[c * w + j] = M[piv * w + j];
                M[piv * w + j] = t;
            }
        for (size_t r = 0; r < np; r++) {
            if (r == c || M[r * w + c] == 0)
                continue;
            double f = M[r * w + c] / M[c * w + c];
            for (size_t j = c; j < w; j++)
                M[r * w + j] -= f * M[c * w + j];
        }
    }
    for (size_t c = 0; c < np; c++)
        z[c] = dead[c] || M[c * w + c] == 0 ? 0 : M[c * w + np] / M[c * w + c];
}

int lp_g10_nnls(size_t k, const double *G, const double *h, double *x)
{
    if (k > KMAX)
        k = KMAX;
    memset(x, 0, k * sizeof *x);
    if (!k)
        return 0;
    double *M = lp_malloc(k * (k + 1) * sizeof *M), grad[KMAX], z[KMAX], zp[KMAX];
    size_t idx[KMAX];
    unsigned char inP[KMAX] = {0};
    if (!M)
        return -1;
    double gscale = 0;
    for (size_t i = 0; i < k; i++)
        gscale = fmax(gscale, fabs(h[i]));
    double tol = 1e-12 * (gscale > 0 ? gscale : 1);
    int it = 0, maxit = (int)(3 * k + 10);
    for (; it < maxit; it++) {
        size_t best = k;
        for (size_t j = 0; j < k; j++) {
            double g = h[j];
            for (size_t i = 0; i < k; i++)
                g -= G[j * k + i] * x[i];
            grad[j] = g;
            if (!inP[j] && g > tol && (best == k || g > grad[best]))
                best = j;
        }
        if (best == k)
            break;
        inP[best] = 1;
        for (int inner = 0; inner < maxit; inner++) {
            size_t np = 0;
            for (size_t j = 0; j < k; j++)
                if (inP[j])
                    idx[np++] = j;
            solve(k, G, h, idx, np, zp, M);
            memset(z, 0, k * sizeof *z);
            int allpos = 1;
            for (size_t i = 0; i < np; i++) {
                z[idx[i]] = zp[i];
                allpos &= zp[i] > 0;
            }
            if (allpos) {
                memcpy(x, z, k * sizeof *x);
                break;
            }
            double alpha = 1;
            for (size_t i = 0; i < np; i++) {
                size_t j = idx[i];
                if (z[j] <= 0 && x[j] - z[j] > 0 && x[j] / (x[j] - z[j]) < alpha)
                    alpha = x[j] / (x[j] - z[j]);
            }
            for (size_t j = 0; j < k; j++) {
                x[j] += alpha * (z[j] - x[j]);
                if (inP[j] && x[j] <= 1e-15 * (1 + fabs(z[j])))
                    inP[j] = 0, x[j] = 0;
            }
        }
    }
    lp_free(M);
    return it < maxit ? it : -1;
}
