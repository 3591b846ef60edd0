/* classify.h: the resource classifier of CrystalPerf (§3.2-3.4): which resource a function
 * mostly uses, learned from the words of its name, its library, its source file and its
 * documentation. src/analysis/crystalperf/classify.c; model file format in
 * docs/formats/crystalperf-model.md; the training set share/crystalperf/labels.tsv and
 * how it was made in docs/analyses/crystalperf.md.
 *
 * Model: one multinomial logistic regression over binary features: the sub-tokens of
 * the function, library and file names (split at '_', '.', '/', case changes and digits,
 * lower-cased, a plural 's' dropped; tagged "f:", "l:", "p:") and the words of the
 * documentation ("d:"), scaled by 1/sqrt(their number) (feature set 1; set 2 adds stems,
 * character n-grams of the function's sub-tokens and per-block scaling: see below and
 * docs/formats/crystalperf-model.md; the set and the L2 are chosen by grouped
 * cross-validation, nested when it reports). Every training example is seen
 * twice, with and without its documentation, because the frames of a profile have no
 * documentation. Trained by full-batch gradient descent (Adam steps) with L2
 * regularisation (optionally balanced class weights), deterministically (no randomness
 * in training; the seed only deals cross-validation folds).
 * Why not the paper's two networks averaged (§3.2): on our set the average of a name
 * model and a documentation model scored 62.3 % held out by library, one model over both
 * 72.7 % (docs/analyses/crystalperf.md); a linear model is what the paper's networks are
 * (a single layer, §3.3), explains itself feature by feature (--explain) and trains in
 * seconds.
 *
 * Classes: cpu, disk, net, wait (waiting for another thread or process: locks, futexes,
 * pipes, polling, sleeping). The paper has the first three; `wait` keeps
 * synchronisation from being forced into a resource.
 */
#ifndef LONGPOLE_CRYSTALPERF_CLASSIFY_H
#define LONGPOLE_CRYSTALPERF_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/base/strtab.h"

enum { LP_CLS_CPU = 0, LP_CLS_DISK, LP_CLS_NET, LP_CLS_WAIT, LP_CLS_N };
const char *lp_cls_name(int c);
/* "cpu", "disk", "net"/"network", "wait"/"waiting" -> class; -1 if none. */
int lp_cls_parse(const char *s, size_t n);

/* One labelled example (a row of labels.tsv). Strings are owned by the set. */
typedef struct lp_cls_example {
    int label;               /* LP_CLS_* */
    lp_str group;            /* cross-validation group (the library; never a feature) */
    lp_str function, library, file, doc;   /* features come from these ("" if absent) */
    lp_str source;           /* "rule:..." or "measured:..." (not a feature) */
} lp_cls_example;

typedef struct lp_cls_set {
    lp_strtab strs;
    lp_cls_example *ex;
    size_t n, cap;
} lp_cls_set;

void lp_cls_set_init(lp_cls_set *s);
void lp_cls_set_release(lp_cls_set *s);
/* Read labels.tsv (header line, then label, group, function, library, file, doc, source
 * separated by tabs). Bad rows are skipped and counted in *nbad (may be NULL). */
lp_status lp_cls_set_read(lp_cls_set *s, const char *path, size_t *nbad, lp_error *err);

/* Feature sets (the model file's version, docs/formats/crystalperf-model.md):
 * 1: name sub-tokens and documentation words in one block, each 1/sqrt(n);
 * 2 (current): the same plus character n-grams (LP_CLS_NGRAM_MIN..MAX) of the function's
 *    sub-tokens, in three blocks (names, n-grams, documentation) each of unit length. */
enum { LP_CLS_FEATURES_V1 = 1, LP_CLS_FEATURES_V2 = 2, LP_CLS_FEATURES = LP_CLS_FEATURES_V2 };
/* What training uses unless told: set 1, chosen over set 2 by grouped cross-validation
 * (`longpole classify --train --select`; docs/analyses/crystalperf.md). */
enum { LP_CLS_FEATURES_DEFAULT = LP_CLS_FEATURES_V1 };
enum { LP_CLS_NGRAM_MIN = 3, LP_CLS_NGRAM_MAX = 5 };

/* The model. Features are interned in `feats`; w[f * LP_CLS_N + c]; `version` is its
 * feature set (0 after init: the current one). */
typedef struct lp_cls_model {
    int version;
    lp_strtab feats;
    double *w;
    size_t cap;
    double bias[LP_CLS_N];
} lp_cls_model;

typedef struct lp_cls_train_opts {
    double l2;               /* 0: the default, 1e-4 */
    int iters;               /* 0: the default, 200 (Adam steps, full batch) */
    double rate;             /* 0: the default, 0.05 */
    int no_doc;              /* leave documentation words out */
    int balanced;            /* weigh classes by inverse frequency */
    int features;            /* feature set 1 or 2; 0: LP_CLS_FEATURES_DEFAULT */
} lp_cls_train_opts;

void lp_cls_model_init(lp_cls_model *m);
void lp_cls_model_release(lp_cls_model *m);
/* Train on the examples whose index has use[i] != 0 (use NULL: all). */
lp_status lp_cls_train(lp_cls_model *m, const lp_cls_set *s, const uint8_t *use, const lp_cls_train_opts *o,
                       lp_error *err);
/* Class probabilities of a function (any of the strings may be NULL or ""). */
void lp_cls_predict(const lp_cls_model *m, const char *function, const char *library, const char *file,
                    const char *doc, double p[LP_CLS_N]);
/* Load / save the text model (docs/formats/crystalperf-model.md). */
lp_status lp_cls_model_load(lp_cls_model *m, const char *text, size_t n, const char *name, lp_error *err);
lp_status lp_cls_model_read(lp_cls_model *m, const char *path, lp_error *err);
lp_status lp_cls_model_save(const lp_cls_model *m, const char *path, lp_error *err);
/* The model shipped with longpole (trained on share/crystalperf/labels.tsv), embedded. */
lp_status lp_cls_model_default(lp_cls_model *m, lp_error *err);

/* Explanation: the features of a function with their weight for each class, strongest
 * for the predicted class first; at most `max`; returns how many were written. */
typedef struct lp_cls_contrib {
    char feat[96];
    double w[LP_CLS_N];
} lp_cls_contrib;
size_t lp_cls_explain(const lp_cls_model *m, const char *function, const char *library, const char *file,
                      const char *doc, lp_cls_contrib *out, size_t max);

/* Cross-validation grouped by example group (src/analysis/crystalperf/classify_cv.c;
 * out->pred, if set before the call, gets every example's held-out prediction): whole
 * groups are held out, the groups shuffled by `seed` and dealt to `folds` folds by size.
 * Nested: with out->grid/ngrid set before the call, each fold's options are the grid's
 * best by an inner grouped cross-validation (inner_folds, 0: 4; same seed) on that fold's
 * training part alone, and `o` is ignored: the held-out rows choose nothing. */
typedef struct lp_cls_cv {
    int folds;
    uint64_t n;                          /* examples evaluated */
    uint64_t confusion[LP_CLS_N][LP_CLS_N]; /* [true][predicted] */
    double accuracy;
    double precision[LP_CLS_N], recall[LP_CLS_N], f1[LP_CLS_N], macro_f1;
    double fold_acc[32];
    uint32_t ngroups;
    int8_t *pred;                        /* optional, caller's [n]: each example's held-out prediction */
    const lp_cls_train_opts *grid;       /* optional input: candidate options (nested) */
    int ngrid, inner_folds;
    int chosen[32];                      /* nested: each fold's pick (index into grid) */
    double inner_acc[32];                /* and its inner cross-validated accuracy */
} lp_cls_cv;
lp_status lp_cls_crossval(const lp_cls_set *s, int folds, uint64_t seed, const lp_cls_train_opts *o, lp_cls_cv *out,
                          lp_error *err);
/* The candidate of `grid` with the best grouped cross-validated accuracy on the whole
 * set (the first of equals): how the shipped model's options are chosen. */
lp_status lp_cls_select(const lp_cls_set *s, int folds, uint64_t seed, const lp_cls_train_opts *grid, int ngrid,
                        int *best, double *acc, lp_error *err);

/* Tokenising (exposed for tests): the lower-cased sub-tokens of an identifier, each
 * written NUL-terminated into buf one after another; returns the number of tokens. */
size_t lp_cls_subtokens(const char *s, char *buf, size_t cap);
/* The features of a function under feature set `version` (1 or 2) as a model sees them
 * (documentation included when given): each "tag:token" written NUL-terminated into buf
 * one after another, its value into val[k]; returns how many (at most max). */
size_t lp_cls_features(int version, const char *function, const char *library, const char *file, const char *doc,
                       char *buf, size_t cap, double *val, size_t max);

#endif
