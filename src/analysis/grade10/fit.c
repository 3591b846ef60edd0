/* fit.c: Variable weights fitted by non-negative least squares (fit.h). One pass over
 * each timeline's windows and phases builds the rows (activity share of every fitted
 * type, the user's own Variable demand, the user's Exact demand to subtract), folded
 * at once into the normal equations G = A'A, h = A'y, so memory is one row per window
 * of one timeline at a time. */
#include "longpole/analysis/grade10/fit.h"
#include "analysis/grade10/g10_int.h"
#include "longpole/base/alloc.h"

#include <math.h>
#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

void lp_g10_fit_release(lp_g10_fit *f)
{
    lp_free(f->weight);
    lp_free(f->fitted);
    memset(f, 0, sizeof *f);
}

typedef struct fwin {
    int64_t w0, w1;
    double C;
} fwin;

/* The windows of a series that overlap the run (as the attribution takes them). */
static size_t fit_windows(const lp_g10_attr *a, const lp_g10_res *res, const lp_g10_series *s, fwin *w)
{
    size_t n = 0;
    for (size_t i = 1; i < s->n; i++) {
        int64_t t0 = s->time[i - 1], t1 = s->time[i];
        if (t1 <= a->x->start[0] || t0 >= a->x->end[0])
            continue;
        double C = res->sample == LP_G10_COUNTER ? (s->value[i] - s->value[i - 1]) * res->scale
                                                 : s->value[i] * res->scale * ((double)(t1 - t0) / 1e9);
        if (C >= 0)
            w[n++] = (fwin){t0, t1, C};
    }
    return n;
}

/* Add one leaf's activity to the rows of the windows it overlaps (or, with `exact`,
 * its Exact demand to the windows' exact demand). */
static void add_phase(const lp_g10_attr *a, uint32_t p, const fwin *w, size_t nw, double *rows, size_t K, size_t col,
                      double f, double *exact)
{
    const int64_t *ps, *pe;
    size_t npc = g10_leaf_pieces(a, p, &ps, &pe);
    for (size_t q = 0; q < npc; q++) {
        size_t l = 0, h = nw; /* first window ending after the piece starts */
        while (l < h) {
            size_t mid = l + (h - l) / 2;
            if (w[mid].w1 <= ps[q])
                l = mid + 1;
            else
                h = mid;
        }
        for (size_t i = l; i < nw && w[i].w0 < pe[q]; i++) {
            int64_t lo = ps[q] > w[i].w0 ? ps[q] : w[i].w0, hi = pe[q] < w[i].w1 ? pe[q] : w[i].w1;
            if (hi <= lo)
                continue;
            double share = f * (double)(hi - lo) / (double)(w[i].w1 - w[i].w0);
            if (exact)
                exact[i] += share;
            else
                rows[i * K + col] += share;
        }
    }
}

/* The rows of one timeline folded into G, h, yy. */
static lp_status fit_timeline(const lp_g10_attr *a, const lp_g10_data *d, uint32_t k, const uint32_t *col, size_t K,
                              double *G, double *h, double *yy, uint64_t *nw_total, lp_error *err)
{
    const lp_g10_tl *tl = &a->tl[k];
    const lp_g10_res *res = &a->m->res[tl->res];
    const lp_g10_series *s = lp_g10_data_series(d, lp_strtab_get(&a->strs, tl->host), lp_g10_model_str(a->m, res->metric));
    if (!s || s->n < 2)
        return LP_OK;
    fwin *w = lp_malloc((s->n - 1) * sizeof *w);
    double *rows = lp_calloc((s->n - 1) * K + 1, sizeof *rows), *exact = lp_calloc(s->n, sizeof *exact);
    lp_status st = LP_OK;
    if (!w || !rows || !exact) {
        st = nomem(err);
        goto out;
    }
    size_t nw = fit_windows(a, res, s, w);
    for (size_t i = 0; i < a->nuse[tl->res] && !st; i++) {
        const lp_g10_use *u = &a->use[tl->res][i];
        if (u->tl != k)
            continue;
        uint8_t kind;
        double val = lp_g10_rule_of(a->m, a->x->type[u->phase], tl->res, tl->capacity, &kind);
        uint32_t c = col[a->x->type[u->phase]];
        if (c != LP_G10_NONE)
            add_phase(a, u->phase, w, nw, rows, K, c, 1.0, NULL);
        else if (kind == LP_G10_RULE_VARIABLE)
            add_phase(a, u->phase, w, nw, rows, K, K - 1, val, NULL);
        else if (kind == LP_G10_RULE_EXACT)
            add_phase(a, u->phase, w, nw, rows, K, 0, val, exact);
    }
    for (size_t i = 0; i < nw && !st; i++) {
        double y = w[i].C / ((double)(w[i].w1 - w[i].w0) / 1e9) - exact[i];
        if (y < 0)
            y = 0;
        const double *r = rows + i * K;
        for (size_t p = 0; p < K; p++) {
            h[p] += r[p] * y;
            for (size_t q = 0; q < K; q++)
                G[p * K + q] += r[p] * r[q];
        }
        *yy += y * y;
    }
    *nw_total += nw;
out:
    lp_free(w), lp_free(rows), lp_free(exact);
    return st;
}

lp_status lp_g10_fit_rules(const lp_g10_attr *a, const lp_g10_data *d, uint32_t r, lp_g10_fit *out, lp_error *err)
{
    const lp_g10_model *m = a->m;
    memset(out, 0, sizeof *out);
    if (r >= m->nres || m->res[r].kind != LP_G10_CONSUMABLE)
        return lp_error_set(err, LP_ERR_DATA, "rules can be fitted for consumable resources only");
    out->res = r;
    out->ntypes = m->ntypes;
    out->weight = lp_calloc(m->ntypes, sizeof *out->weight);
    out->fitted = lp_calloc(m->ntypes, 1);
    uint32_t *col = lp_malloc(m->ntypes * sizeof *col);
    if (!out->weight || !out->fitted || !col) {
        lp_free(col);
        lp_g10_fit_release(out);
        return nomem(err);
    }
    size_t K = 0;
    for (uint32_t t = 0; t < m->ntypes; t++) {
        size_t i = (size_t)t * m->nres + r;
        col[t] = LP_G10_NONE;
        if (m->rline[i] == LP_G10_NONE && m->rkind[i] == LP_G10_RULE_VARIABLE)
            for (size_t u = 0; u < a->nuse[r] && col[t] == LP_G10_NONE; u++)
                if (a->x->type[a->use[r][u].phase] == t)
                    col[t] = (uint32_t)K++;
    }
    K++; /* the user's Variable demand */
    double *G = lp_calloc(K * K, sizeof *G), *h = lp_calloc(K, sizeof *h), *w = lp_calloc(K, sizeof *w), yy = 0;
    lp_status st = !G || !h || !w ? nomem(err) : LP_OK;
    for (uint32_t k = 0; k < a->ntl && !st; k++)
        if (a->tl[k].res == r)
            st = fit_timeline(a, d, k, col, K, G, h, &yy, &out->windows, err);
    if (!st && !out->windows)
        st = lp_error_set(err, LP_ERR_DATA, "no monitoring window of '%s' overlaps the run",
                          lp_g10_model_str(m, m->res[r].name));
    if (!st) {
        lp_g10_nnls(K, G, h, w);
        double f = yy;
        for (size_t p = 0; p < K; p++) {
            f -= 2 * h[p] * w[p];
            for (size_t q = 0; q < K; q++)
                f += w[p] * G[p * K + q] * w[q];
        }
        out->residual = yy > 0 ? sqrt(f > 0 ? f : 0) / sqrt(yy) : 0;
        out->user_scale = w[K - 1];
        for (uint32_t t = 0; t < m->ntypes; t++)
            if (col[t] != LP_G10_NONE)
                out->fitted[t] = 1, out->weight[t] = w[col[t]];
    }
    lp_free(G), lp_free(h), lp_free(w), lp_free(col);
    if (st)
        lp_g10_fit_release(out);
    return st;
}

void lp_g10_fit_write(FILE *f, const lp_g10_model *m, const lp_g10_fit *fit)
{
    fprintf(f, "# fitted by non-negative least squares over %llu windows (relative residual %.3g)\n",
            (unsigned long long)fit->windows, fit->residual);
    for (uint32_t t = 0; t < fit->ntypes; t++)
        if (fit->fitted[t])
            fprintf(f, "rule %s %s variable %.6g\n", lp_g10_model_str(m, m->type[t].path),
                    lp_g10_model_str(m, m->res[fit->res].name), fit->weight[t]);
}
