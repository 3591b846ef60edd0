/* classify.c: CrystalPerf's resource classifier (classify.h): features from identifier
 * sub-tokens, multinomial logistic regression trained by full-batch gradient descent,
 * the text model format, the embedded default model (grouped cross-validation:
 * classify_cv.c).
 *
 * Invariants: a model's feature ids are its strtab's ids (row f of w belongs to string f;
 * id 0, the empty string, is never a feature); training is deterministic (same set, same
 * options, same weights, bit for bit); prediction ignores features the model has not seen.
 * Cost: training is O(iters x (nnz + features) x classes): about 0.6 s for the 11,700
 * functions of a fold with feature set 1, 2.7 s with set 2 (its n-grams: 4x the nonzeros).
 */
#include "longpole/analysis/crystalperf/classify.h"
#include "longpole/base/alloc.h"
#include "longpole/codec/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cls_names[LP_CLS_N] = {"cpu", "disk", "net", "wait"};

const char *lp_cls_name(int c) { return c >= 0 && c < LP_CLS_N ? cls_names[c] : "unknown"; }

int lp_cls_parse(const char *s, size_t n)
{
    for (int c = 0; c < LP_CLS_N; c++)
        if (strlen(cls_names[c]) == n && !memcmp(s, cls_names[c], n))
            return c;
    if (n == 7 && !memcmp(s, "network", 7))
        return LP_CLS_NET;
    if (n == 7 && !memcmp(s, "waiting", 7))
        return LP_CLS_WAIT;
    return -1;
}

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

/* ---- tokens ----------------------------------------------------------------------------- */

static int is_lower(char c) { return c >= 'a' && c <= 'z'; }
static int is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) { return is_lower(c) || is_upper(c); }

size_t lp_cls_subtokens(const char *s, char *buf, size_t cap)
{
    size_t nt = 0, used = 0;
    size_t n = s ? strlen(s) : 0;
    size_t i = 0;
    while (i < n) {
        if (!is_alpha(s[i])) {
            i++;
            continue;
        }
        size_t a = i++;
        /* a run: "Upper lower*", "UPPER+" (ending before Upper lower), or "lower+" */
        if (is_upper(s[a]) && i < n && is_upper(s[i])) {
            while (i < n && is_upper(s[i]) && !(i + 1 < n && is_lower(s[i + 1])))
                i++;
        } else {
            while (i < n && is_lower(s[i]))
                i++;
        }
        size_t len = i - a;
        if (len < 2 || len > 40 || used + len + 1 > cap)
            continue;
        for (size_t k = 0; k < len; k++)
            buf[used + k] = (char)(is_upper(s[a + k]) ? s[a + k] - 'A' + 'a' : s[a + k]);
        buf[used + len] = 0;
        used += len + 1;
        nt++;
    }
    return nt;
}

#define MAXF 512

typedef struct feats {
    char buf[16384];
    size_t used;
    const char *f[MAXF];
    double v[MAXF]; /* each feature's value: 1/sqrt(the size of its block) */
    size_t n;
    int version;    /* the feature set */
} feats;

/* Append "tag:tok[0..len)" unless already there. */
static void put(feats *fs, char tag, const char *tok, size_t len)
{
    if (fs->n == MAXF || fs->used + len + 3 > sizeof fs->buf)
        return;
    char *p = fs->buf + fs->used;
    p[0] = tag, p[1] = ':';
    memcpy(p + 2, tok, len);
    p[len + 2] = 0;
    for (size_t k = 0; k < fs->n; k++)
        if (!strcmp(fs->f[k], p))
            return;
    fs->f[fs->n++] = p;
    fs->used += len + 3;
}

static int ends(const char *t, size_t len, const char *suf)
{
    size_t n = strlen(suf);
    return len >= n && !memcmp(t + len - n, suf, n);
}

/* The length of a word's stem, feature set 2: "-ing" (6 letters or more), "-ed" (not
 * "-eed"), "-es" after s/x/z/ch/sh and "-ies"/"-ied" (5 or more) lose those letters but
 * the "i"; "-s" (4 or more, not "-ss", "-us", "-is") its "s": blocking, blocked, blocks ->
 * block; waiting -> wait; sockets -> socket; flushes -> flush; copies, copied -> copi. */
static size_t stem2(const char *t, size_t len)
{
    if (len >= 6 && ends(t, len, "ing"))
        return len - 3;
    if (len >= 5 && (ends(t, len, "ied") || ends(t, len, "ies")))
        return len - 2;
    if (len >= 5 && ends(t, len, "ed") && !ends(t, len, "eed"))
        return len - 2;
    if (len >= 5 && (ends(t, len, "ses") || ends(t, len, "xes") || ends(t, len, "zes") || ends(t, len, "ches") ||
                     ends(t, len, "shes")))
        return len - 2;
    if (len >= 4 && t[len - 1] == 's' && t[len - 2] != 's' && t[len - 2] != 'u' && t[len - 2] != 'i')
        return len - 1;
    return len;
}

static void add(feats *fs, char tag, const char *tok)
{
    size_t len = strlen(tok);
    if (fs->version >= 2)
        len = stem2(tok, len);
    else if (len > 4 && tok[len - 1] == 's' && tok[len - 2] != 's') /* a crude stem: sockets -> socket */
        len--;
    put(fs, tag, tok, len);
}

static void add_ident(feats *fs, char tag, const char *s)
{
    char tb[4096];
    size_t nt = lp_cls_subtokens(s, tb, sizeof tb);
    const char *t = tb;
    for (size_t k = 0; k < nt; k++, t += strlen(t) + 1)
        add(fs, tag, t);
}

static int stopword(const char *w)
{
    static const char *const sw[] = {"the", "and", "for", "this", "that", "with", "from", "are", "was", "which",
                                     "not", "but", "can", "its", "has", "have", "will", "into", "when", "then",
                                     "there", "these", "those", "than", "also", "any", "all", "one", "use", "used",
                                     "returns", "return", "value", "function", "given", "object", "none", NULL};
    for (int i = 0; sw[i]; i++)
        if (!strcmp(w, sw[i]))
            return 1;
    return 0;
}

static void add_doc(feats *fs, const char *s)
{
    size_t n = s ? strlen(s) : 0, words = 0;
    for (size_t i = 0; i < n && words < 64;) {
        if (!is_alpha(s[i])) {
            i++;
            continue;
        }
        size_t a = i;
        while (i < n && (is_alpha(s[i]) || is_digit(s[i])))
            i++;
        size_t len = i - a;
        if (len < 3 || len > 30)
            continue;
        char w[32];
        for (size_t k = 0; k < len; k++)
            w[k] = (char)(is_upper(s[a + k]) ? s[a + k] - 'A' + 'a' : s[a + k]);
        w[len] = 0;
        if (stopword(w))
            continue;
        add(fs, 'd', w);
        words++;
    }
}

/* "libz.so.1" -> "z"; "/usr/lib/python3.11/socket.py" -> "usr lib python socket py" is
 * left to the sub-tokeniser; only the lib prefix and .so suffix are dropped. */
static void add_lib(feats *fs, const char *lib)
{
    if (!lib || !*lib)
        return;
    char b[256];
    size_t n = strlen(lib);
    if (n >= sizeof b)
        n = sizeof b - 1;
    memcpy(b, lib, n);
    b[n] = 0;
    char *so = strstr(b, ".so");
    if (so)
        *so = 0;
    add_ident(fs, 'l', strncmp(b, "lib", 3) == 0 ? b + 3 : b);
}

/* Character n-grams (LP_CLS_NGRAM_MIN..MAX characters) of each sub-token of a function's
 * name, the token framed as "^token$" (unstemmed), tagged "g:". They let a held-out
 * library's "fdatasync", "recvmsg" or "sendall" share weights with "fsync", "recv" and
 * "send" seen in other libraries, where whole sub-tokens would be unseen. */
static void add_ngrams(feats *fs, const char *function)
{
    char tb[4096], w[48];
    size_t nt = lp_cls_subtokens(function, tb, sizeof tb);
    const char *t = tb;
    for (size_t k = 0; k < nt; k++, t += strlen(t) + 1) {
        size_t len = strlen(t);
        w[0] = '^';
        memcpy(w + 1, t, len); /* a sub-token is at most 40 letters */
        w[len + 1] = '$';
        for (size_t g = LP_CLS_NGRAM_MIN; g <= LP_CLS_NGRAM_MAX; g++)
            for (size_t a = 0; a + g <= len + 2; a++)
                put(fs, 'g', w + a, g);
    }
}

/* Features [from, n) form one block: each gets 1/sqrt(the block's size). */
static void scale_block(feats *fs, size_t from)
{
    double v = fs->n > from ? 1.0 / sqrt((double)(fs->n - from)) : 0;
    for (size_t k = from; k < fs->n; k++)
        fs->v[k] = v;
}

/* Features: part 0 the names (function, library, file), 1 the documentation, 2 both.
 * Version 1: one block (every feature 1/sqrt(n)). Version 2: three blocks, each scaled
 * to unit length on its own: name sub-tokens (f:, l:, p:), the n-grams of the function's
 * sub-tokens (g:), documentation words (d:); so many n-grams or a long documentation do
 * not drown the name's whole words. */
static void extract_part(feats *fs, int version, const char *function, const char *library, const char *file,
                         const char *doc, int part)
{
    fs->used = 0, fs->n = 0, fs->version = version;
    if (version < 2) {
        if (part != 1) {
            add_ident(fs, 'f', function);
            add_lib(fs, library);
            add_ident(fs, 'p', file);
        }
        if (part != 0)
            add_doc(fs, doc);
        scale_block(fs, 0);
        return;
    }
    size_t from = 0;
    if (part != 1) {
        add_ident(fs, 'f', function);
        add_lib(fs, library);
        add_ident(fs, 'p', file);
        scale_block(fs, from);
        from = fs->n;
        add_ngrams(fs, function);
        scale_block(fs, from);
        from = fs->n;
    }
    if (part != 0) {
        add_doc(fs, doc);
        scale_block(fs, from);
    }
}

size_t lp_cls_features(int version, const char *function, const char *library, const char *file, const char *doc,
                       char *buf, size_t cap, double *val, size_t max)
{
    feats *fs = lp_malloc(sizeof *fs);
    if (!fs)
        return 0;
    extract_part(fs, version, function, library, file, doc, 2);
    size_t k = 0, used = 0;
    for (; k < fs->n && k < max; k++) {
        size_t len = strlen(fs->f[k]);
        if (used + len + 1 > cap)
            break;
        memcpy(buf + used, fs->f[k], len + 1);
        used += len + 1;
        val[k] = fs->v[k];
    }
    lp_free(fs);
    return k;
}

/* ---- training sets ------------------------------------------------------------------------- */

void lp_cls_set_init(lp_cls_set *s)
{
    memset(s, 0, sizeof *s);
    lp_strtab_init(&s->strs);
}

void lp_cls_set_release(lp_cls_set *s)
{
    lp_strtab_release(&s->strs);
    lp_free(s->ex);
    memset(s, 0, sizeof *s);
}

static lp_status read_all(const char *path, char **out, size_t *n, lp_error *err)
{
    lp_input *in;
    lp_status st = lp_input_open(&in, path, err);
    if (st)
        return st;
    size_t cap = 1 << 16, len = 0;
    char *b = lp_malloc(cap);
    while (b) {
        if (len + 1 >= cap) {
            char *nb = lp_realloc(b, cap * 2);
            if (!nb) {
                lp_free(b);
                b = NULL;
                break;
            }
            b = nb, cap *= 2;
        }
        size_t got;
        if ((st = lp_input_read(in, b + len, cap - len - 1, &got, err)))
            break;
        if (!got)
            break;
        len += got;
    }
    lp_input_close(in);
    if (!b)
        return nomem(err);
    if (st) {
        lp_free(b);
        return st;
    }
    b[len] = 0;
    *out = b, *n = len;
    return LP_OK;
}

lp_status lp_cls_set_read(lp_cls_set *s, const char *path, size_t *nbad, lp_error *err)
{
    char *b;
    size_t n;
    lp_status st = read_all(path, &b, &n, err);
    if (st)
        return st;
    size_t bad = 0, lineno = 0;
    for (char *p = b; p < b + n && !st;) {
        char *e = memchr(p, '\n', (size_t)(b + n - p));
        if (!e)
            e = b + n;
        char *line = p;
        p = e + 1;
        if (++lineno == 1 || e == line || *line == '#')
            continue; /* the header */
        const char *fld[7];
        size_t fl[7], nf = 0;
        for (char *q = line; nf < 7;) {
            char *t = memchr(q, '\t', (size_t)(e - q));
            fld[nf] = q, fl[nf] = (size_t)((t ? t : e) - q);
            if (fl[nf] && fld[nf][fl[nf] - 1] == '\r')
                fl[nf]--;
            nf++;
            if (!t)
                break;
            q = t + 1;
        }
        int label = nf == 7 ? lp_cls_parse(fld[0], fl[0]) : -1;
        if (label < 0 || fl[1] == 0 || fl[2] == 0) {
            bad++;
            continue;
        }
        if (lp_grow_at(&s->ex, &s->cap, s->n + 1, sizeof *s->ex)) {
            st = nomem(err);
            break;
        }
        lp_cls_example *x = &s->ex[s->n];
        x->label = label;
        if (lp_strtab_intern(&s->strs, fld[1], fl[1], &x->group) ||
            lp_strtab_intern(&s->strs, fld[2], fl[2], &x->function) ||
            lp_strtab_intern(&s->strs, fld[3], fl[3], &x->library) ||
            lp_strtab_intern(&s->strs, fld[4], fl[4], &x->file) ||
            lp_strtab_intern(&s->strs, fld[5], fl[5], &x->doc) ||
            lp_strtab_intern(&s->strs, fld[6], fl[6], &x->source)) {
            st = nomem(err);
            break;
        }
        s->n++;
    }
    lp_free(b);
    if (nbad)
        *nbad = bad;
    if (!st && !s->n)
        st = lp_error_set(err, LP_ERR_FORMAT,
                          "'%s' holds no labelled function (expected a header, then rows: label, group, "
                          "function, library, file, doc, source separated by tabs)",
                          path);
    return st;
}

/* ---- the model ------------------------------------------------------------------------------- */

void lp_cls_model_init(lp_cls_model *m)
{
    memset(m, 0, sizeof *m);
    m->version = LP_CLS_FEATURES;
    lp_strtab_init(&m->feats);
}

void lp_cls_model_release(lp_cls_model *m)
{
    lp_strtab_release(&m->feats);
    lp_free(m->w);
    memset(m, 0, sizeof *m);
}

static lp_status feat_id(lp_cls_model *m, const char *f, lp_str *id, lp_error *err)
{
    if (lp_strtab_intern(&m->feats, f, strlen(f), id))
        return nomem(err);
    size_t need = (size_t)(*id + 1) * LP_CLS_N, old = m->cap;
    if (need > m->cap) {
        if (lp_grow_at(&m->w, &m->cap, need, sizeof *m->w))
            return nomem(err);
        for (size_t k = old; k < m->cap; k++)
            m->w[k] = 0;
    }
    return LP_OK;
}

static void softmax(double z[LP_CLS_N])
{
    double mx = z[0], s = 0;
    for (int c = 1; c < LP_CLS_N; c++)
        if (z[c] > mx)
            mx = z[c];
    for (int c = 0; c < LP_CLS_N; c++)
        s += (z[c] = exp(z[c] - mx));
    for (int c = 0; c < LP_CLS_N; c++)
        z[c] /= s;
}

typedef struct sparse {
    uint32_t *off, *col;
    double *val;   /* per entry: the feature's value (extract_part) */
    int *y;
    size_t rows;
} sparse;

static void sparse_free(sparse *x)
{
    lp_free(x->off);
    lp_free(x->col);
    lp_free(x->val);
    lp_free(x->y);
}

/* The training rows: features of `part` (extract_part), or 3: every example twice, with
 * all its features and with its names only. Examples without any feature are left out. */
static lp_status build_rows(lp_cls_model *m, const lp_cls_set *s, const uint8_t *use, int part, sparse *x,
                            lp_error *err)
{
    memset(x, 0, sizeof *x);
    size_t rows = 0, capcol = 0, capval = 0, ncol = 0;
    for (size_t i = 0; i < s->n; i++)
        rows += !use || use[i];
    int twice = part == 3;
    rows *= twice ? 2 : 1;
    x->off = lp_calloc(rows + 1, sizeof *x->off);
    x->y = lp_calloc(rows ? rows : 1, sizeof *x->y);

    feats *fs = lp_malloc(sizeof *fs);
    lp_status st = (!x->off || !x->y || !fs) ? nomem(err) : LP_OK;
    size_t r = 0;
    for (size_t j = 0; j < s->n * (twice ? 2 : 1) && !st; j++) {
        size_t i = twice ? j / 2 : j;
        if (use && !use[i])
            continue;
        const lp_cls_example *e = &s->ex[i];
        extract_part(fs, m->version, lp_strtab_get(&s->strs, e->function), lp_strtab_get(&s->strs, e->library),
                     lp_strtab_get(&s->strs, e->file), lp_strtab_get(&s->strs, e->doc),
                     twice ? (j % 2 ? 0 : 2) : part);
        if (!fs->n)
            continue;
        if (lp_grow_at(&x->col, &capcol, ncol + fs->n + 1, sizeof *x->col) ||
            lp_grow_at(&x->val, &capval, ncol + fs->n + 1, sizeof *x->val)) {
            st = nomem(err);
            break;
        }
        for (size_t k = 0; k < fs->n && !st; k++) {
            lp_str id;
            st = feat_id(m, fs->f[k], &id, err);
            x->val[ncol] = fs->v[k];
            x->col[ncol++] = id;
        }
        x->y[r] = e->label;
        x->off[++r] = (uint32_t)ncol;
    }
    x->rows = r;
    lp_free(fs);
    if (st)
        sparse_free(x);
    return st;
}

/* Full-batch gradient descent with Adam steps. */
static lp_status fit(lp_cls_model *m, const sparse *x, double *bias, double l2, int iters, double rate, int balanced,
                     lp_error *err)
{
    size_t nw = (size_t)m->feats.n * LP_CLS_N;
    double *g = lp_calloc(nw ? 3 * nw : 1, sizeof *g); /* gradient, Adam's first and second moments */
    if (!g)
        return nomem(err);
    double *m1 = g + nw, *m2 = g + 2 * nw, bm1[LP_CLS_N] = {0}, bm2[LP_CLS_N] = {0};
    /* class weights: 1, or balanced (each class weighs as much in all) */
    double cnt[LP_CLS_N] = {0}, cw[LP_CLS_N];
    for (size_t r = 0; r < x->rows; r++)
        cnt[x->y[r]]++;
    int present = 0;
    for (int c = 0; c < LP_CLS_N; c++)
        present += cnt[c] > 0;
    for (int c = 0; c < LP_CLS_N; c++)
        cw[c] = cnt[c] > 0 ? (balanced ? (double)x->rows / (present * cnt[c]) : 1.0) : 0;
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    double p1 = 1, p2 = 1, inv = 1.0 / (double)x->rows;
    for (int it = 0; it < iters; it++) {
        double gb[LP_CLS_N] = {0};
        memset(g, 0, nw * sizeof *g);
        for (size_t r = 0; r < x->rows; r++) {
            double z[LP_CLS_N];
            for (int c = 0; c < LP_CLS_N; c++)
                z[c] = bias[c];
            for (uint32_t k = x->off[r]; k < x->off[r + 1]; k++)
                for (int c = 0; c < LP_CLS_N; c++)
                    z[c] += m->w[(size_t)x->col[k] * LP_CLS_N + c] * x->val[k];
            softmax(z);
            for (int c = 0; c < LP_CLS_N; c++) {
                double d_ = cw[x->y[r]] * (z[c] - (c == x->y[r]));
                gb[c] += d_;
                for (uint32_t k = x->off[r]; k < x->off[r + 1]; k++)
                    g[(size_t)x->col[k] * LP_CLS_N + c] += d_ * x->val[k];
            }
        }
        p1 *= b1, p2 *= b2;
        double step = rate * sqrt(1 - p2) / (1 - p1);
        for (size_t k = LP_CLS_N; k < nw; k++) { /* row 0 is the empty string: never a feature */
            if (g[k] == 0 && m1[k] == 0 && m->w[k] == 0)
                continue; /* a feature of the other part */
            double gk = g[k] * inv + l2 * m->w[k];
            m1[k] = b1 * m1[k] + (1 - b1) * gk;
            m2[k] = b2 * m2[k] + (1 - b2) * gk * gk;
            m->w[k] -= step * m1[k] / (sqrt(m2[k]) + eps);
        }
        for (int c = 0; c < LP_CLS_N; c++) {
            double gk = gb[c] * inv;
            bm1[c] = b1 * bm1[c] + (1 - b1) * gk;
            bm2[c] = b2 * bm2[c] + (1 - b2) * gk * gk;
            bias[c] -= step * bm1[c] / (sqrt(bm2[c]) + eps);
        }
    }
    lp_free(g);
    return LP_OK;
}

lp_status lp_cls_train(lp_cls_model *m, const lp_cls_set *s, const uint8_t *use, const lp_cls_train_opts *o,
                       lp_error *err)
{
    /* The defaults are those of the shipped model: feature set 1, l2 1e-4 (71.69 % in its
     * grouped 5-fold CV on the rule labels, 81.1 % of the measured rows held out; --select
     * would pick l2 3e-5 for 72.99 % on the rule labels but 76.8 % on the measured rows,
     * and the measured rows are the ground truth: docs/analyses/crystalperf.md) */
    lp_cls_train_opts d = {1e-4, 200, 0.05, 0, 0, LP_CLS_FEATURES_DEFAULT};
    if (!o)
        o = &d;
    if (o->features < 0 || o->features > LP_CLS_FEATURES)
        return lp_error_set(err, LP_ERR_ARG, "feature set %d does not exist (1 to %d)", o->features,
                            LP_CLS_FEATURES);
    if (m->feats.n > 1)
        return lp_error_set(err, LP_ERR_ARG, "lp_cls_train needs a fresh model");
    m->version = o->features ? o->features : LP_CLS_FEATURES_DEFAULT;
    double l2 = o->l2 > 0 ? o->l2 : d.l2, rate = o->rate > 0 ? o->rate : d.rate;
    int iters = o->iters > 0 ? o->iters : d.iters;
    lp_status st = LP_OK;
    sparse x;
    if ((st = build_rows(m, s, use, o->no_doc ? 0 : 3, &x, err)))
        return st;
    if (!x.rows)
        st = lp_error_set(err, LP_ERR_DATA, "no example to train on");
    else
        st = fit(m, &x, m->bias, l2, iters, rate, o->balanced, err);
    sparse_free(&x);
    return st;
}

/* Class scores (log-odds); whether any feature was known. */
static int part_scores(const lp_cls_model *m, const feats *fs, const double *bias, double z[LP_CLS_N])
{
    int known = 0;
    for (int c = 0; c < LP_CLS_N; c++)
        z[c] = bias[c];
    for (size_t k = 0; k < fs->n; k++) {
        lp_str id = lp_strtab_find(&m->feats, fs->f[k], strlen(fs->f[k]));
        if (id == LP_STR_NONE || (size_t)(id + 1) * LP_CLS_N > m->cap)
            continue;
        known = 1;
        for (int c = 0; c < LP_CLS_N; c++)
            z[c] += m->w[(size_t)id * LP_CLS_N + c] * fs->v[k];
    }
    return known;
}

/* Class probabilities of a function. */
static void predict(const lp_cls_model *m, feats *fs, const char *function, const char *library, const char *file,
                    const char *doc, double p[LP_CLS_N])
{
    extract_part(fs, m->version, function, library, file, doc, 2);
    part_scores(m, fs, m->bias, p);
    softmax(p);
}

void lp_cls_predict(const lp_cls_model *m, const char *function, const char *library, const char *file,
                    const char *doc, double p[LP_CLS_N])
{
    feats *fs = lp_malloc(sizeof *fs);
    if (!fs) {
        for (int c = 0; c < LP_CLS_N; c++)
            p[c] = 1.0 / LP_CLS_N;
        return;
    }
    predict(m, fs, function, library, file, doc, p);
    lp_free(fs);
}

static int cmp_contrib_cls;
static int cmp_contrib(const void *a, const void *b)
{
    double x = ((const lp_cls_contrib *)a)->w[cmp_contrib_cls], y = ((const lp_cls_contrib *)b)->w[cmp_contrib_cls];
    return x > y ? -1 : x < y;
}

size_t lp_cls_explain(const lp_cls_model *m, const char *function, const char *library, const char *file,
                      const char *doc, lp_cls_contrib *out, size_t max)
{
    feats *fs = lp_malloc(sizeof *fs);
    if (!fs)
        return 0;
    double p[LP_CLS_N];
    predict(m, fs, function, library, file, doc, p);
    int best = 0;
    for (int c = 1; c < LP_CLS_N; c++)
        if (p[c] > p[best])
            best = c;
    size_t k = 0;
    for (int part = 2; part < 3; part++) {
        extract_part(fs, m->version, function, library, file, doc, part);
        for (size_t i = 0; i < fs->n && k < max; i++) {
            lp_str id = lp_strtab_find(&m->feats, fs->f[i], strlen(fs->f[i]));
            int unseen = id == LP_STR_NONE || (size_t)(id + 1) * LP_CLS_N > m->cap;
            snprintf(out[k].feat, sizeof out[k].feat, "%s%s", fs->f[i], unseen ? " (unseen)" : "");
            for (int c = 0; c < LP_CLS_N; c++)
                out[k].w[c] = unseen ? 0 : m->w[(size_t)id * LP_CLS_N + c] * fs->v[i];
            k++;
        }
    }
    cmp_contrib_cls = best;
    qsort(out, k, sizeof *out, cmp_contrib);
    lp_free(fs);
    return k;
}

/* ---- the text format ---------------------------------------------------------------------------- */

lp_status lp_cls_model_load(lp_cls_model *m, const char *text, size_t n, const char *name, lp_error *err)
{
    const char *p = text, *end = text + n;
    size_t line = 0;
    int have_head = 0, have_classes = 0;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e)
            e = end;
        line++;
        size_t len = (size_t)(e - p);
        char buf[512];
        if (len >= sizeof buf)
            return lp_error_set(err, LP_ERR_FORMAT, "%s: line %zu: too long", name, line);
        memcpy(buf, p, len);
        buf[len] = 0;
        p = e + 1;
        if (!len || buf[0] == '#')
            continue;
        if (!have_head) {
            int v = 0, end_ = 0;
            if (sscanf(buf, "longpole-classifier %d%n", &v, &end_) != 1 || buf[end_])
                return lp_error_set(err, LP_ERR_FORMAT, "%s: line %zu: not a longpole classifier model "
                                                        "(expected 'longpole-classifier %d')", name, line,
                                    LP_CLS_FEATURES);
            if (v < 1 || v > LP_CLS_FEATURES)
                return lp_error_set(err, LP_ERR_FORMAT, "%s: line %zu: classifier model version %d: this longpole "
                                                        "reads versions 1 to %d (a newer longpole wrote it?)",
                                    name, line, v, LP_CLS_FEATURES);
            m->version = v;
            have_head = 1;
            continue;
        }
        if (!strncmp(buf, "classes", 7)) {
            if (strcmp(buf, "classes\tcpu\tdisk\tnet\twait") && strcmp(buf, "classes cpu disk net wait"))
                return lp_error_set(err, LP_ERR_FORMAT, "%s: line %zu: unsupported classes", name, line);
            have_classes = 1;
            continue;
        }
        double v[LP_CLS_N];
        char feat[256];
        if (!strncmp(buf, "bias", 4)) {
            if (sscanf(buf + 4, "%lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3]) != 4 || !isfinite(v[0]) ||
                !isfinite(v[1]) || !isfinite(v[2]) || !isfinite(v[3]))
                return lp_error_set(err, LP_ERR_FORMAT, "%s: line %zu: bad bias", name, line);
            memcpy(m->bias, v, sizeof v);
            continue;
        }
        if (buf[0] == 'w' && buf[1] == '\t' && sscanf(buf + 2, "%255s %lf %lf %lf %lf", feat, &v[0], &v[1], &v[2], &v[3]) == 5) {
            lp_str id;
            lp_status st = feat_id(m, feat, &id, err);
            if (st)
                return st;
            if (!id)
                return lp_error_set(err, LP_ERR_FORMAT, "%s: line %zu: empty feature", name, line);
            for (int c = 0; c < LP_CLS_N; c++) {
                if (!isfinite(v[c]))
                    return lp_error_set(err, LP_ERR_FORMAT, "%s: line %zu: weight not finite", name, line);
                m->w[(size_t)id * LP_CLS_N + c] = v[c];
            }
            continue;
        }
        return lp_error_set(err, LP_ERR_FORMAT, "%s: line %zu: unknown record '%.20s'", name, line, buf);
    }
    if (!have_head || !have_classes)
        return lp_error_set(err, LP_ERR_FORMAT, "%s: not a longpole classifier model (no header or classes)", name);
    return LP_OK;
}

lp_status lp_cls_model_read(lp_cls_model *m, const char *path, lp_error *err)
{
    char *b;
    size_t n;
    lp_status st = read_all(path, &b, &n, err);
    if (st)
        return st;
    st = lp_cls_model_load(m, b, n, path, err);
    lp_free(b);
    return st;
}

typedef struct save_ctx {
    const lp_cls_model *m;
} save_ctx;

static lp_status write_model(void *ctx, FILE *f, lp_error *err)
{
    const lp_cls_model *m = ((save_ctx *)ctx)->m;
    fprintf(f, "longpole-classifier %d\n# multinomial logistic regression over identifier sub-tokens%s "
               "(docs/formats/crystalperf-model.md)\nclasses\tcpu\tdisk\tnet\twait\n", m->version,
            m->version >= 2 ? " and their character n-grams" : "");
    fprintf(f, "bias\t%.9g\t%.9g\t%.9g\t%.9g\n", m->bias[0], m->bias[1], m->bias[2], m->bias[3]);

    for (uint32_t id = 1; id < m->feats.n; id++) {
        const double *w = m->w + (size_t)id * LP_CLS_N;
        if (fabs(w[0]) + fabs(w[1]) + fabs(w[2]) + fabs(w[3]) < 1e-4)
            continue;
        fprintf(f, "w\t%s\t%.5g\t%.5g\t%.5g\t%.5g\n", lp_strtab_get(&m->feats, id), w[0], w[1], w[2], w[3]);
    }
    return ferror(f) ? lp_error_set(err, LP_ERR_IO, "write error") : LP_OK;
}

lp_status lp_cls_model_save(const lp_cls_model *m, const char *path, lp_error *err)
{
    save_ctx c = {m};
    return lp_save_with(path, LP_COMP_NONE, write_model, &c, err);
}

/* The embedded model (generated at build time from share/crystalperf/model.txt). */
extern const unsigned char lp_cpf_model_text[];
extern const size_t lp_cpf_model_text_len;

lp_status lp_cls_model_default(lp_cls_model *m, lp_error *err)
{
    if (!lp_cpf_model_text_len)
        return lp_error_set(err, LP_ERR_UNSUPPORTED, "this build has no embedded classifier model "
                                                     "(share/crystalperf/model.txt was missing)");
    return lp_cls_model_load(m, (const char *)lp_cpf_model_text, lp_cpf_model_text_len, "the built-in model", err);
}
