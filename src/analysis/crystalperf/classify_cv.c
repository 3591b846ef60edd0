/* classify_cv.c: grouped cross-validation of CrystalPerf's resource classifier
 * (classify.h), and choosing training options by it (nested: an inner grouped
 * cross-validation on each outer training part only).
 *
 * Invariants: whole groups are held out (a group's rows are all in one fold); the folds
 * depend only on the set, the rows in scope and the seed (groups shuffled by splitmix64
 * of the seed, then dealt largest first to the lightest fold); a held-out row never
 * influences the options or the weights its prediction is made with, in the inner
 * selection either. Deterministic: same set, options and seed, same answer.
 */
#include "longpole/analysis/crystalperf/classify.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

typedef struct grp {
    lp_str id;
    uint32_t count;
    uint64_t key;
} grp;

static int cmp_grp(const void *a, const void *b)
{
    const grp *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* Deal the groups of the rows in scope (NULL: all) to folds; fold_of_group[id] for
 * every string id (-1: no row in scope). */
static lp_status deal_folds(const lp_cls_set *s, const uint8_t *scope, int folds, uint64_t seed, int *fold_of_group,
                            uint32_t *ngroups, lp_error *err)
{
    uint32_t *cnt = lp_calloc(s->strs.n, sizeof *cnt);
    grp *g = lp_malloc((size_t)s->strs.n * sizeof *g);
    if (!cnt || !g) {
        lp_free(cnt);
        lp_free(g);
        return nomem(err);
    }
    for (size_t i = 0; i < s->n; i++)
        if (!scope || scope[i])
            cnt[s->ex[i].group]++;
    uint32_t ng = 0;
    uint64_t x = seed;
    for (uint32_t id = 0; id < s->strs.n; id++) {
        fold_of_group[id] = -1;
        if (cnt[id]) {
            g[ng].id = id, g[ng].count = cnt[id], g[ng].key = splitmix(&x);
            ng++;
        }
    }
    qsort(g, ng, sizeof *g, cmp_grp);
    uint64_t load[32] = {0};
    for (uint32_t k = 0; k < ng; k++) {
        int best = 0;
        for (int f = 1; f < folds; f++)
            if (load[f] < load[best])
                best = f;
        fold_of_group[g[k].id] = best;
        load[best] += g[k].count;
    }
    *ngroups = ng;
    lp_free(g);
    lp_free(cnt);
    return LP_OK;
}

static int argmax(const double p[LP_CLS_N])
{
    int best = 0;
    for (int c = 1; c < LP_CLS_N; c++)
        if (p[c] > p[best])
            best = c;
    return best;
}

static lp_status select_opts(const lp_cls_set *s, const uint8_t *scope, int folds, uint64_t seed,
                             const lp_cls_train_opts *grid, int ngrid, int *best, double *acc, lp_error *err);

/* One fold: train on `use` (options picked from the grid by an inner cross-validation
 * on `use` alone when there is one) and predict the rows of `test`. */
static lp_status run_fold(const lp_cls_set *s, const uint8_t *use, const uint8_t *test, uint64_t seed,
                          const lp_cls_train_opts *o, lp_cls_cv *out, int f, lp_error *err)
{
    lp_status st = LP_OK;
    if (out->ngrid > 0) {
        int inner = out->inner_folds ? out->inner_folds : 4;
        if ((st = select_opts(s, use, inner, seed, out->grid, out->ngrid, &out->chosen[f], &out->inner_acc[f], err)))
            return st;
        o = &out->grid[out->chosen[f]];
    }
    lp_cls_model m;
    lp_cls_model_init(&m);
    st = lp_cls_train(&m, s, use, o, err);
    uint64_t right = 0, all = 0;
    for (size_t i = 0; i < s->n && !st; i++) {
        if (!test[i])
            continue;
        const lp_cls_example *e = &s->ex[i];
        double p[LP_CLS_N];
        lp_cls_predict(&m, lp_strtab_get(&s->strs, e->function), lp_strtab_get(&s->strs, e->library),
                       lp_strtab_get(&s->strs, e->file), o && o->no_doc ? "" : lp_strtab_get(&s->strs, e->doc), p);
        int best = argmax(p);
        out->confusion[e->label][best]++;
        if (out->pred)
            out->pred[i] = (int8_t)best;
        right += best == e->label, all++;
    }
    out->fold_acc[f] = all ? (double)right / (double)all : 0;
    lp_cls_model_release(&m);
    return st;
}

/* Held-out predictions for the rows in scope (NULL: all), into out->confusion,
 * out->pred, out->fold_acc (and out->chosen with a grid). */
static lp_status run_cv(const lp_cls_set *s, const uint8_t *scope, int folds, uint64_t seed,
                        const lp_cls_train_opts *o, lp_cls_cv *out, lp_error *err)
{
    if (folds < 2 || folds > 32)
        return lp_error_set(err, LP_ERR_ARG, "folds must be in [2, 32]");
    int *fog = lp_malloc((size_t)s->strs.n * sizeof *fog);
    uint8_t *use = lp_malloc(s->n ? 2 * s->n : 1), *test = use + s->n;
    if (!fog || !use) {
        lp_free(fog);
        lp_free(use);
        return nomem(err);
    }
    lp_status st = deal_folds(s, scope, folds, seed, fog, &out->ngroups, err);
    if (!st && out->ngroups < (uint32_t)folds)
        st = lp_error_set(err, LP_ERR_DATA, "%u group(s) cannot make %d folds", out->ngroups, folds);
    out->folds = folds;
    for (int f = 0; f < folds && !st; f++) {
        for (size_t i = 0; i < s->n; i++) {
            int in = !scope || scope[i];
            use[i] = in && fog[s->ex[i].group] != f;
            test[i] = in && fog[s->ex[i].group] == f;
        }
        st = run_fold(s, use, test, seed, o, out, f, err);
    }
    lp_free(fog);
    lp_free(use);
    return st;
}

/* The candidate with the best grouped cross-validated accuracy on the rows in scope
 * (the first of equals). */
static lp_status select_opts(const lp_cls_set *s, const uint8_t *scope, int folds, uint64_t seed,
                             const lp_cls_train_opts *grid, int ngrid, int *best, double *acc, lp_error *err)
{
    *best = 0, *acc = -1;
    for (int k = 0; k < ngrid; k++) {
        lp_cls_cv cv;
        memset(&cv, 0, sizeof cv);
        lp_status st = run_cv(s, scope, folds, seed, &grid[k], &cv, err);
        if (st)
            return st;
        uint64_t right = 0, n = 0;
        for (int a = 0; a < LP_CLS_N; a++)
            for (int b = 0; b < LP_CLS_N; b++)
                n += cv.confusion[a][b], right += a == b ? cv.confusion[a][b] : 0;
        double a_ = n ? (double)right / (double)n : 0;
        if (a_ > *acc)
            *acc = a_, *best = k;
    }
    return LP_OK;
}

lp_status lp_cls_select(const lp_cls_set *s, int folds, uint64_t seed, const lp_cls_train_opts *grid, int ngrid,
                        int *best, double *acc, lp_error *err)
{
    if (ngrid < 1)
        return lp_error_set(err, LP_ERR_ARG, "no candidate options to choose from");
    return select_opts(s, NULL, folds, seed, grid, ngrid, best, acc, err);
}

/* Accuracy, per-class precision, recall and F1, macro F1 from the confusion matrix. */
static void summarise(lp_cls_cv *out)
{
    uint64_t right = 0;
    for (int a = 0; a < LP_CLS_N; a++)
        for (int b = 0; b < LP_CLS_N; b++) {
            out->n += out->confusion[a][b];
            right += a == b ? out->confusion[a][b] : 0;
        }
    out->accuracy = out->n ? (double)right / (double)out->n : 0;
    int present = 0;
    for (int c = 0; c < LP_CLS_N; c++) {
        uint64_t tp = out->confusion[c][c], npred = 0, act = 0;
        for (int k = 0; k < LP_CLS_N; k++)
            npred += out->confusion[k][c], act += out->confusion[c][k];
        out->precision[c] = npred ? (double)tp / (double)npred : 0;
        out->recall[c] = act ? (double)tp / (double)act : 0;
        double pr = out->precision[c] + out->recall[c];
        out->f1[c] = pr > 0 ? 2 * out->precision[c] * out->recall[c] / pr : 0;
        if (act) {
            out->macro_f1 += out->f1[c];
            present++;
        }
    }
    out->macro_f1 = present ? out->macro_f1 / present : 0;
}

lp_status lp_cls_crossval(const lp_cls_set *s, int folds, uint64_t seed, const lp_cls_train_opts *o, lp_cls_cv *out,
                          lp_error *err)
{
    lp_cls_cv in = *out; /* the caller's inputs: pred, grid, ngrid, inner_folds */
    memset(out, 0, sizeof *out);
    out->pred = in.pred, out->grid = in.grid, out->ngrid = in.ngrid, out->inner_folds = in.inner_folds;
    if (out->ngrid > 0 && (out->inner_folds == 1 || out->inner_folds > 32 || out->inner_folds < 0))
        return lp_error_set(err, LP_ERR_ARG, "inner folds must be in [2, 32]");
    lp_status st = run_cv(s, NULL, folds, seed, o, out, err);
    if (!st)
        summarise(out);
    return st;
}
