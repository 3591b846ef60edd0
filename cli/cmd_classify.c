/* cmd_classify.c: `longpole classify`: CrystalPerf's resource classifier (§3.2-3.4):
 * train a model on labelled functions, cross-validate it grouped by library, explain a
 * prediction, or label frames by measurement from a perf recording. */
#include "cli.h"
#include "longpole/analysis/crystalperf/classify.h"
#include "longpole/analysis/crystalperf/resource.h"

#include <string.h>

typedef struct classify_args {
    const char *train, *cv, *explain, *measure, *model, *out, *library, *file, *doc;
    uint64_t folds, seed, iters, features;
    int json, no_doc, balanced, nested, select;
    double l2, rate;
} classify_args;

static void classify_init(void *p)
{
    classify_args *a = p;
    a->folds = 5;
    a->seed = 1;
}

static const cli_opt classify_opts[] = {
    {"--train", .kind = CLI_STR, .arg = "LABELS", CLI_AT(classify_args, train), .err = "--train needs a labels file",
     .example = "labels.tsv", .help = "train a model on LABELS (labels.tsv format) and write it to -o"},
    {"--cv", .kind = CLI_STR, .arg = "LABELS", CLI_AT(classify_args, cv), .err = "--cv needs a labels file",
     .example = "labels.tsv",
     .help = "cross-validate on LABELS, whole groups (libraries) held out: accuracy,\n"
             "per-class precision/recall/F1 and the confusion matrix"},
    {"--explain", .kind = CLI_STR, .arg = "FUNCTION", CLI_AT(classify_args, explain),
     .err = "--explain needs a function name", .example = "deflate_slow",
     .help = "classify one function and show each feature's weight"},
    {"--measure", .kind = CLI_STR, .arg = "PERF.TXT", CLI_AT(classify_args, measure),
     .err = "--measure needs a perf script file", .example = "stacks.perf.txt",
     .help = "label every named user frame of a recording by where its time went\n"
             "(on CPU, blocked in block I/O, in the network stack, waiting): rows\n"
             "for labels.tsv on standard output"},
    {"--model", .kind = CLI_STR, .arg = "FILE", CLI_AT(classify_args, model), .err = "--model needs a file",
     .example = "model.txt", .help = "the model for --explain (default: the built-in one)"},
    {"-o", "--output", .kind = CLI_STR, .arg = "FILE", CLI_AT(classify_args, out), .err = "-o needs a file",
     .example = "model.txt", .help = "where --train writes the model (default: standard output)"},
    {"--library", .kind = CLI_STR, .arg = "LIB", CLI_AT(classify_args, library), .err = "--library needs a name",
     .example = "libz.so.1", .help = ""},
    {"--file", .kind = CLI_STR, .arg = "PATH", CLI_AT(classify_args, file), .err = "--file needs a path",
     .example = "deflate.c", .help = ""},
    {"--doc", .kind = CLI_STR, .arg = "TEXT", CLI_AT(classify_args, doc), .err = "--doc needs a text",
     .example = "compress a buffer", .help = "more about the --explain function: its library, source file, docs"},
    {"--folds", .kind = CLI_COUNT, .arg = "K", CLI_AT(classify_args, folds), .range = "[2,32]",
     .err = "--folds needs a number in [2, 32]", .example = "5", .help = "folds of --cv (default 5)"},
    {"--seed", .kind = CLI_COUNT, .arg = "S", CLI_AT(classify_args, seed), .err = "--seed needs a number",
     .example = "7", .help = "how --cv deals the groups to folds (default 1)"},
    {"--iters", .kind = CLI_COUNT, .arg = "N", CLI_AT(classify_args, iters), .range = "[1,100000]",
     .err = "--iters needs a number", .example = "200", .help = "gradient-descent (Adam) iterations (default 200)"},
    {"--l2", .kind = CLI_DOUBLE, .arg = "X", CLI_AT(classify_args, l2), .range = "(0,)", .err = "--l2 needs a number > 0",
     .example = "0.0001", .help = ""},
    {"--rate", .kind = CLI_DOUBLE, .arg = "X", CLI_AT(classify_args, rate), .range = "(0,)",
     .err = "--rate needs a number > 0", .example = "0.05", .help = "L2 regularisation (default 0.0001) and Adam's step size (default 0.05)"},
    {"--no-doc", .kind = CLI_FLAG, CLI_AT(classify_args, no_doc), .help = "leave documentation words out"},
    {"--balanced", .kind = CLI_FLAG, CLI_AT(classify_args, balanced),
     .help = "weigh classes by inverse frequency (more recall on rare classes)"},
    {"--features", .kind = CLI_COUNT, .arg = "V", CLI_AT(classify_args, features), .range = "[1,2]",
     .err = "--features needs 1 or 2", .example = "1",
     .help = "feature set of --train/--cv: 1 (default) name sub-tokens and documentation\n"
             "words; 2 also character n-grams of the name's sub-tokens, and stems"},
    {"--nested", .kind = CLI_FLAG, CLI_AT(classify_args, nested),
     .help = "with --cv: each fold picks its feature set (1, 2) and L2 (3e-5, 1e-4,\n"
             "3e-4) by an inner grouped 4-fold cross-validation on its training part\n"
             "only (the held-out groups choose nothing); prints each fold's pick"},
    {"--select", .kind = CLI_FLAG, CLI_AT(classify_args, select),
     .help = "with --train: pick the feature set and L2 from that grid by grouped\n"
             "cross-validation on LABELS first (the rule labels only: the built-in model\n"
             "keeps the defaults, better on the measured labels)"},
    {"--json", .kind = CLI_FLAG, CLI_AT(classify_args, json), .help = "one JSON document (with --cv)"},
    CLI_END,
};

const cli_spec cli_spec_classify = {
    .cmd = "classify",
    .usage = "usage: longpole classify --train LABELS [-o MODEL] | --cv LABELS [--folds K --seed S] [--json]\n"
             "       longpole classify --explain FUNCTION [--library L --file F --doc TEXT] [--model MODEL]\n"
             "       longpole classify --measure PERF.TXT\n",
    .about = "The resource classifier of CrystalPerf (§3.2-3.4): which resource a function mostly\n"
             "uses (cpu, disk, net, or wait for another thread), from the sub-tokens of its name,\n"
             "library and file and the words of its documentation; multinomial logistic\n"
             "regression (docs/analyses/crystalperf.md). The built-in model is trained on\n"
             "share/crystalperf/labels.tsv (scripts/crystalperf/make_labels.py): man pages 2-3,\n"
             "the Python standard library and OpenJDK, labelled by header, module or package (never\n"
             "a feature), plus frames labelled by measurement (--measure).\n",
    .groups = {CLI_OWN("options:", classify_opts)},
    .notes = "exit status: 0 done, 2 usage, 3 unreadable file, 5 not a labels/model file.\n",
    .operands = CLI_NO_OPERANDS,
    .size = sizeof(classify_args),
    .init = classify_init,
};

/* What --nested and --select choose from: the feature sets crossed with L2 a factor 3
 * either side of the default (fixed before any nested run; the rest of the options as
 * given). */
static const double grid_l2[] = {3e-5, 1e-4, 3e-4};
enum { GRID_N = 2 * 3 };

static void make_grid(const lp_cls_train_opts *o, lp_cls_train_opts g[GRID_N])
{
    for (int k = 0; k < GRID_N; k++) {
        g[k] = *o;
        g[k].features = o->features ? o->features : 1 + k / 3;
        g[k].l2 = grid_l2[k % 3];
    }
}

static void print_pick(const char *what, const lp_cls_train_opts *g, double acc)
{
    printf("%s: features %d, l2 %g (inner accuracy %.2f%%)\n", what, g->features, g->l2, 100 * acc);
}

static void print_cv_text(const lp_cls_cv *cv, size_t n, size_t nbad)
{
    printf("grouped %d-fold cross-validation: %llu functions in %u groups (whole groups held out)%s\n", cv->folds,
           (unsigned long long)cv->n, cv->ngroups, nbad ? "" : "");
    if (nbad)
        printf("  %zu malformed row(s) skipped\n", nbad);
    (void)n;
    printf("accuracy %.2f%%   macro F1 %.3f\n", 100 * cv->accuracy, cv->macro_f1);
    printf("per fold:");
    for (int f = 0; f < cv->folds; f++)
        printf(" %.1f%%", 100 * cv->fold_acc[f]);
    printf("\n\n%-6s %9s %9s %6s\n", "class", "precision", "recall", "F1");
    for (int c = 0; c < LP_CLS_N; c++)
        printf("%-6s %9.3f %9.3f %6.3f\n", lp_cls_name(c), cv->precision[c], cv->recall[c], cv->f1[c]);
    printf("\nconfusion (rows: label, columns: predicted)\n%-6s", "");
    for (int c = 0; c < LP_CLS_N; c++)
        printf(" %6s", lp_cls_name(c));
    printf("\n");
    for (int a = 0; a < LP_CLS_N; a++) {
        printf("%-6s", lp_cls_name(a));
        for (int b = 0; b < LP_CLS_N; b++)
            printf(" %6llu", (unsigned long long)cv->confusion[a][b]);
        printf("\n");
    }
}

static void print_cv_json(const lp_cls_cv *cv, uint64_t seed)
{
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "command", "classify");
    lp_jsonw_ku64(&j, "folds", (uint64_t)cv->folds);
    lp_jsonw_ku64(&j, "seed", seed);
    lp_jsonw_ku64(&j, "functions", cv->n);
    lp_jsonw_ku64(&j, "groups", cv->ngroups);
    lp_jsonw_kdbl(&j, "accuracy", cv->accuracy);
    lp_jsonw_kdbl(&j, "macro_f1", cv->macro_f1);
    lp_jsonw_key(&j, "classes");
    lp_jsonw_obj(&j);
    for (int c = 0; c < LP_CLS_N; c++) {
        lp_jsonw_key(&j, lp_cls_name(c));
        lp_jsonw_obj(&j);
        lp_jsonw_kdbl(&j, "precision", cv->precision[c]);
        lp_jsonw_kdbl(&j, "recall", cv->recall[c]);
        lp_jsonw_kdbl(&j, "f1", cv->f1[c]);
        lp_jsonw_key(&j, "confusion");
        lp_jsonw_arr(&j);
        for (int b = 0; b < LP_CLS_N; b++)
            lp_jsonw_u64(&j, cv->confusion[c][b]);
        lp_jsonw_arr_end(&j);
        lp_jsonw_obj_end(&j);
    }
    lp_jsonw_obj_end(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

/* The groups, worst held-out accuracy first (the ten worst). */
static void print_groups(const lp_cls_set *s, const lp_cls_cv *cv)
{
    uint32_t *right = lp_calloc(s->strs.n, sizeof *right), *all = lp_calloc(s->strs.n, sizeof *all);
    if (!right || !all) {
        lp_free(right);
        lp_free(all);
        return;
    }
    for (size_t i = 0; i < s->n; i++) {
        all[s->ex[i].group]++;
        right[s->ex[i].group] += cv->pred[i] == s->ex[i].label;
    }
    /* by how the rows were labelled: "rule:man-header", ..., "measured" */
    printf("\nheld-out accuracy by labelling source:\n");
    const char *kinds[] = {"rule:man-header", "rule:py-module", "rule:java-package", "measured"};
    for (int k = 0; k < 4; k++) {
        uint64_t r = 0, n = 0;
        for (size_t i = 0; i < s->n; i++)
            if (!strncmp(lp_strtab_get(&s->strs, s->ex[i].source), kinds[k], strlen(kinds[k]))) {
                n++;
                r += cv->pred[i] == s->ex[i].label;
            }
        if (n)
            printf("  %-20s %5.1f%% of %llu\n", kinds[k], 100.0 * (double)r / (double)n, (unsigned long long)n);
    }
    printf("\nworst groups (held out):\n");
    for (int k = 0; k < 10; k++) {
        uint32_t worst = 0;
        double wa = 2;
        for (uint32_t g = 0; g < s->strs.n; g++)
            if (all[g] >= 10 && (double)right[g] / all[g] < wa)
                wa = (double)right[g] / all[g], worst = g;
        if (wa > 1)
            break;
        printf("  %-40s %5.1f%% of %u\n", lp_strtab_get(&s->strs, worst), 100 * wa, all[worst]);
        all[worst] = 0;
    }
    lp_free(right);
    lp_free(all);
}

static int run_cv(const classify_args *a, const lp_cls_train_opts *o)
{
    lp_cls_set s;
    lp_cls_set_init(&s);
    lp_error err;
    lp_error_clear(&err);
    size_t nbad = 0;
    lp_cls_cv cv;
    memset(&cv, 0, sizeof cv);
    lp_cls_train_opts grid[GRID_N];
    if (a->nested) {
        make_grid(o, grid);
        cv.grid = grid, cv.ngrid = GRID_N;
    }
    int rc = 0;
    if (lp_cls_set_read(&s, a->cv, &nbad, &err))
        rc = cli_fail("classify", &err);
    else if (!(cv.pred = lp_malloc(s.n)))
        rc = LP_EXIT_NOMEM;
    else if (lp_cls_crossval(&s, (int)a->folds, a->seed, o, &cv, &err))
        rc = cli_fail("classify", &err);
    else if (a->json)
        print_cv_json(&cv, a->seed);
    else {
        print_cv_text(&cv, s.n, nbad);
        if (cv.ngrid) {
            printf("\nnested: each fold's options chosen by grouped %d-fold cross-validation on its training part\n",
                   cv.inner_folds ? cv.inner_folds : 4);
            for (int f = 0; f < cv.folds; f++) {
                char what[32];
                snprintf(what, sizeof what, "  fold %d", f + 1);
                print_pick(what, &cv.grid[cv.chosen[f]], cv.inner_acc[f]);
            }
        }
        print_groups(&s, &cv);
    }
    lp_free(cv.pred);
    lp_cls_set_release(&s);
    return rc;
}

static int run_train(const classify_args *a, const lp_cls_train_opts *o)
{
    lp_cls_set s;
    lp_cls_set_init(&s);
    lp_cls_model m;
    lp_cls_model_init(&m);
    lp_error err;
    lp_error_clear(&err);
    size_t nbad = 0;
    int rc = 0, best = 0;
    double acc = 0;
    lp_cls_train_opts grid[GRID_N];
    make_grid(o, grid);
    if (lp_cls_set_read(&s, a->train, &nbad, &err) ||
        (a->select && lp_cls_select(&s, (int)a->folds, a->seed, grid, GRID_N, &best, &acc, &err)) ||
        lp_cls_train(&m, &s, NULL, a->select ? &grid[best] : o, &err) ||
        lp_cls_model_save(&m, a->out ? a->out : "-", &err))
        rc = cli_fail("classify", &err);
    else {
        if (a->select)
            fprintf(stderr, "longpole classify: chose features %d, l2 %g by grouped %d-fold cross-validation "
                            "(accuracy %.2f%%)\n", grid[best].features, grid[best].l2, (int)a->folds, 100 * acc);
        fprintf(stderr, "longpole classify: trained on %zu functions (%zu malformed rows skipped), %u features\n", s.n,
                nbad, m.feats.n - 1);
    }
    lp_cls_model_release(&m);
    lp_cls_set_release(&s);
    return rc;
}

static int run_explain(const classify_args *a)
{
    lp_cls_model m;
    lp_cls_model_init(&m);
    lp_error err;
    lp_error_clear(&err);
    if (a->model ? lp_cls_model_read(&m, a->model, &err) : lp_cls_model_default(&m, &err)) {
        lp_cls_model_release(&m);
        return cli_fail("classify", &err);
    }
    double p[LP_CLS_N];
    lp_cls_predict(&m, a->explain, a->library, a->file, a->doc, p);
    int best = 0;
    for (int c = 1; c < LP_CLS_N; c++)
        if (p[c] > p[best])
            best = c;
    printf("%s: %s (", a->explain, lp_cls_name(best));
    for (int c = 0; c < LP_CLS_N; c++)
        printf("%s%s %.3f", c ? ", " : "", lp_cls_name(c), p[c]);
    printf(")\n");
    lp_cls_contrib cb[64];
    size_t n = lp_cls_explain(&m, a->explain, a->library, a->file, a->doc, cb, 64);
    if (!n)
        printf("  no feature: the prediction is the model's prior\n");
    printf("  %-32s %8s %8s %8s %8s\n", "feature", "cpu", "disk", "net", "wait");
    for (size_t i = 0; i < n; i++)
        printf("  %-32s %8.3f %8.3f %8.3f %8.3f\n", cb[i].feat, cb[i].w[0], cb[i].w[1], cb[i].w[2], cb[i].w[3]);
    lp_cls_model_release(&m);
    return 0;
}

static int run_measure(const classify_args *a)
{
    lp_stacks s;
    lp_stacks_init(&s);
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_error err;
    lp_error_clear(&err);
    lp_cpf_label *lab = NULL;
    size_t n = 0;
    int rc = 0;
    if (lp_stacks_load(&s, a->measure, &ds, &err) || lp_cpf_measure_labels(&s, &lab, &n, &err))
        rc = cli_fail("classify", &err);
    cli_print_diags(&ds, 10);
    if (!rc) {
        printf("label\tgroup\tfunction\tlibrary\tfile\tdoc\tsource\n");
        for (size_t i = 0; i < n; i++) {
            const char *lib = lp_strtab_get(&s.strs, s.fdso[lab[i].frame]);
            printf("%s\tlib:%s\t%s\t%s\t\t\tmeasured:%.0f%%-of-%llu-ms\n", lp_cls_name(lab[i].label), *lib ? lib : "?",
                   lp_strtab_get(&s.strs, s.fsym[lab[i].frame]), lib, 100 * lab[i].share,
                   (unsigned long long)(lab[i].ns / 1000000));
        }
        fprintf(stderr, "longpole classify: %zu frame(s) labelled by measurement\n", n);
    }
    lp_free(lab);
    lp_diags_release(&ds);
    lp_stacks_release(&s);
    return rc;
}

int cmd_classify(int argc, char **argv)
{
    classify_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_classify, argc, argv, &a, &rest);
    if (rc)
        return rc;
    cli_args_release(&cli_spec_classify, &a, &rest);
    int modes = !!a.train + !!a.cv + !!a.explain + !!a.measure;
    if (modes != 1)
        return cli_usage("classify", "give exactly one of --train, --cv, --explain, --measure");
    if (a.nested && !a.cv)
        return cli_usage("classify", "--nested goes with --cv");
    if (a.select && !a.train)
        return cli_usage("classify", "--select goes with --train");
    lp_cls_train_opts o = {a.l2, (int)a.iters, a.rate, a.no_doc, a.balanced, (int)a.features};
    if (a.cv)
        return run_cv(&a, &o);
    if (a.train)
        return run_train(&a, &o);
    if (a.measure)
        return run_measure(&a);
    return run_explain(&a);
}
