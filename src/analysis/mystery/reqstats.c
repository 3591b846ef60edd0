/* reqstats.c: aggregates over the requests' critical paths and the case-study analyses
 * (OSDI'14 §4.3-4.4, §5; see reqstats.h and docs/analyses/mystery-aggregates.md).
 *
 * Pass 1 (threads over contiguous ranges of requests) computes every request's
 * critical path and slack, adds integer sums per segment and category into per-thread
 * accumulators, and keeps per request its latency, critical path, and per category
 * its critical-path time, summed delay and slack (floats: 12 bytes per request and
 * category). The outliers are then chosen by rank (latency descending, then request
 * order) and pass 2 recomputes only their paths. Quantiles, what-if buckets and strata
 * come from sorting the per-request arrays; quantile p of n sorted values is the value
 * at index round(p * (n - 1) / 100).
 *
 * Split over parts (`dist requests`, opts part/nparts/gather): a part runs pass 1 on
 * its contiguous range of the analysed requests (rows of the whole run's columns), and
 * the gather hook hands one part every row and the sums of all (integer sums: the same
 * whatever the order); that part goes on exactly as one process would, so its results
 * are identical to an unsplit run's.
 */
#include "longpole/analysis/mystery/reqstats.h"
#include "longpole/analysis/mystery/reqpath.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "base/pool.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- categories ----------------------------------------------------------------------- */

void lp_reqcat_init(lp_reqcat *c) { memset(c, 0, sizeof *c); }

void lp_reqcat_release(lp_reqcat *c)
{
    for (uint32_t i = 0; i <= LP_REQCAT_MAX; i++)
        lp_free(c->name[i]);
    for (uint32_t i = 0; i < c->nrules; i++)
        lp_free(c->rules[i].pattern);
    lp_free(c->rules);
    lp_free(c->of_seg);
    memset(c, 0, sizeof *c);
}

static int cat_index(lp_reqcat *c, const char *name, size_t n, uint32_t *out)
{
    for (uint32_t i = 0; i < c->ncat; i++)
        if (strlen(c->name[i]) == n && memcmp(c->name[i], name, n) == 0) {
            *out = i;
            return 0;
        }
    if (c->ncat == LP_REQCAT_MAX)
        return 1;
    c->name[c->ncat] = lp_strndup(name, n);
    if (!c->name[c->ncat])
        return -1;
    *out = c->ncat++;
    return 0;
}

lp_status lp_reqcat_load(lp_reqcat *c, const char *path, lp_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return lp_error_set(err, LP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    char line[4096];
    unsigned ln = 0;
    lp_status st = LP_OK;
    while (st == LP_OK && fgets(line, sizeof line, f)) {
        ln++;
        char *save = NULL;
        char *name = strtok_r(line, " \t\r\n", &save);
        if (!name || name[0] == '#')
            continue;
        char *field = strtok_r(NULL, " \t\r\n", &save);
        char *pat = save ? save + strspn(save, " \t") : NULL;
        if (pat) {
            size_t k = strlen(pat);
            while (k && (pat[k - 1] == '\n' || pat[k - 1] == '\r' || pat[k - 1] == ' ' || pat[k - 1] == '\t'))
                pat[--k] = '\0';
        }
        if (!field || !pat || !*pat) {
            st = lp_error_set(err, LP_ERR_ARG, "%s:%u: expected CATEGORY FIELD PATTERN", path, ln);
            break;
        }
        int fl = strcmp(field, "task") == 0 ? 0 : strcmp(field, "segment") == 0 ? 1
               : strcmp(field, "network") == 0 ? 2 : -1;
        if (fl < 0) {
            st = lp_error_set(err, LP_ERR_ARG, "%s:%u: field '%s' is not task, segment or network", path, ln, field);
            break;
        }
        if (fl == 2 && strcmp(pat, "yes") != 0 && strcmp(pat, "no") != 0) {
            st = lp_error_set(err, LP_ERR_ARG, "%s:%u: network takes yes or no", path, ln);
            break;
        }
        if (fl < 2) {
            regex_t re;
            int rc = regcomp(&re, pat, REG_EXTENDED | REG_NOSUB);
            if (rc) {
                char b[256];
                regerror(rc, &re, b, sizeof b);
                st = lp_error_set(err, LP_ERR_ARG, "%s:%u: bad regex '%s': %s", path, ln, pat, b);
                break;
            }
            regfree(&re);
        }
        uint32_t ci;
        int r = cat_index(c, name, strlen(name), &ci);
        if (r < 0 || (r > 0 && (st = lp_error_set(err, LP_ERR_LIMIT, "%s:%u: more than %d categories", path, ln,
                                                 LP_REQCAT_MAX))))
            break;
        lp_reqcat_rule *nr = lp_reallocarray(c->rules, c->nrules + 1, sizeof *nr);
        if (!nr) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        c->rules = nr;
        nr[c->nrules].cat = ci;
        nr[c->nrules].field = fl;
        nr[c->nrules].pattern = lp_strndup(pat, strlen(pat));
        if (!nr[c->nrules].pattern) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        c->nrules++;
    }
    fclose(f);
    if (st == LP_OK && c->nrules == 0)
        st = lp_error_set(err, LP_ERR_ARG, "%s: no category rules", path);
    return st;
}

lp_status lp_reqcat_assign(lp_reqcat *c, const lp_causal *m, lp_error *err)
{
    lp_free(c->of_seg);
    c->of_seg = lp_malloc((m->nseg ? m->nseg : 1) * sizeof *c->of_seg);
    if (!c->of_seg)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    c->nseg = m->nseg;
    regex_t *re = NULL;
    if (c->nrules) {
        re = lp_calloc(c->nrules, sizeof *re);
        if (!re)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        for (uint32_t i = 0; i < c->nrules; i++)
            if (c->rules[i].field < 2)
                regcomp(&re[i], c->rules[i].pattern, REG_EXTENDED | REG_NOSUB);
    } else {
        c->by_task = 1;
    }
    uint32_t other = UINT32_MAX;
    lp_status st = LP_OK;
    char lab[1024];
    for (uint32_t s = 0; s < m->nseg && st == LP_OK; s++) {
        uint32_t ci = UINT32_MAX;
        const char *task = lp_strtab_get(&m->names, m->seg_task[s]);
        if (c->nrules) {
            lp_causal_label(m, s, lab, sizeof lab);
            for (uint32_t i = 0; i < c->nrules && ci == UINT32_MAX; i++) {
                const lp_reqcat_rule *r = &c->rules[i];
                int hit = r->field == 0   ? regexec(&re[i], task, 0, NULL, 0) == 0
                        : r->field == 1 ? regexec(&re[i], lab, 0, NULL, 0) == 0
                                        : (m->seg_cross[s] != 0) == (strcmp(r->pattern, "yes") == 0);
                if (hit)
                    ci = r->cat;
            }
        } else {
            const char *nm = m->seg_cross[s] ? "network" : task;
            int rc = cat_index(c, nm, strlen(nm), &ci);
            if (rc < 0)
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            else if (rc > 0)
                ci = UINT32_MAX;
        }
        if (ci == UINT32_MAX) {
            if (other == UINT32_MAX) {
                if (!c->name[LP_REQCAT_MAX]) {
                    c->name[LP_REQCAT_MAX] = lp_strndup("other", 5);
                    if (!c->name[LP_REQCAT_MAX]) {
                        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                        break;
                    }
                }
                /* "other" goes last: its index is decided after every segment is mapped */
                other = LP_REQCAT_MAX;
            }
            ci = LP_REQCAT_MAX;
        }
        c->of_seg[s] = ci;
    }
    if (re) {
        for (uint32_t i = 0; i < c->nrules; i++)
            if (c->rules[i].field < 2)
                regfree(&re[i]);
        lp_free(re);
    }
    if (st == LP_OK && other != UINT32_MAX) {
        uint32_t oi = c->ncat;
        c->name[oi] = c->name[LP_REQCAT_MAX];
        c->name[LP_REQCAT_MAX] = NULL;
        c->ncat++;
        for (uint32_t s = 0; s < m->nseg; s++)
            if (c->of_seg[s] == LP_REQCAT_MAX)
                c->of_seg[s] = oi;
    }
    return st;
}

/* ---- pass 1 and 2 ------------------------------------------------------------------------ */

typedef struct th_acc {
    lp_reqstats_seg *seg;
    int64_t *cat_dur, *cat_cp;
    uint64_t *cat_present;
    uint64_t violations, unknown;
    int nomem;
    lp_error err;
} th_acc;

typedef struct rs_ctx {
    const lp_causal *m;
    const lp_reqlog *rl;
    const uint32_t *map;
    const lp_reqcat *cat;
    uint32_t C;
    const uint64_t *req;      /* analysed index -> request */
    uint64_t n;
    uint64_t lo, hi;          /* pass 1: the rows this part computes (all: 0, n) */
    int64_t *lat, *cp;
    float *ccp, *ctot, *cslack;
    uint8_t *nonempty;
    const uint64_t *outl;     /* pass 2: outlier analysed indices */
    uint64_t nout;
    int pass;
    th_acc *th;
    lp_progress_fn progress;
    void *progress_ctx;
    lp_pool *pool; /* the threads of both passes (NULL: run here) */
} rs_ctx;

static inline unsigned hist_bin(int64_t v)
{
    if (v <= 0)
        return 0;
    unsigned b = 64 - (unsigned)__builtin_clzll((uint64_t)v);
    return b > 64 ? 64 : b;
}

static lp_status rs_worker(void *ctx, size_t tid, size_t nthr, lp_error *err)
{
    rs_ctx *X = ctx;
    th_acc *T = &X->th[tid];
    lp_reqpath p;
    lp_reqpath_init(&p);
    uint32_t C = X->C;
    int64_t *cdur = lp_calloc(C ? C : 1, sizeof *cdur), *ccp = lp_calloc(C ? C : 1, sizeof *ccp),
            *cmin = lp_malloc((C ? C : 1) * sizeof *cmin), *cend = lp_malloc((C ? C : 1) * sizeof *cend);
    if (!cdur || !ccp || !cmin || !cend) {
        T->nomem = 1;
        goto out;
    }
    uint64_t total = X->pass == 1 ? X->hi - X->lo : X->nout, lo, hi;
    lp_pool_range(total, tid, nthr, &lo, &hi);
    for (uint64_t q = lo; q < hi; q++) {
        uint64_t k = X->pass == 1 ? X->lo + q : X->outl[q];
        uint64_t r = X->req[k];
        if (lp_reqpath_compute(&p, X->m, X->rl, X->map, r, &T->err)) {
            T->nomem = 1;
            break;
        }
        if (tid == 0 && X->progress && (q & 4095) == 0)
            X->progress(X->progress_ctx, X->pass == 1 ? "paths" : "outliers", (q - lo) * nthr, total);
        if (X->pass == 2) {
            for (uint32_t i = 0; i < p.n; i++) {
                lp_reqstats_seg *s = &T->seg[p.seg[i]];
                s->present_out++;
                s->dur_out += p.dur[i];
                if (p.oncp[i]) {
                    s->oncp_out++;
                    s->cp_out += p.dur[i];
                }
            }
            continue;
        }
        X->lat[k] = p.latency;
        X->cp[k] = p.cp;
        X->nonempty[k] = p.n > 0;
        T->violations += p.violations;
        T->unknown += p.unknown;
        for (uint32_t c = 0; c < C; c++) {
            cdur[c] = ccp[c] = 0;
            cmin[c] = INT64_MAX;
        }
        for (uint32_t i = 0; i < p.n; i++) {
            uint32_t sid = p.seg[i];
            lp_reqstats_seg *s = &T->seg[sid];
            s->present++;
            s->dur_sum += p.dur[i];
            s->slack_sum += p.slack[i];
            s->slack_hist[hist_bin(p.slack[i])]++;
            uint32_t c = X->cat->of_seg[sid];
            cdur[c] += p.dur[i];
            /* the category's slack: that of its last-ending segment (in the request's
             * order, the last of equal ends), as OSDI'14 §5.2 takes the server's slack
             * from the last data item it sends */
            if (cmin[c] == INT64_MAX || p.end[i] >= cend[c]) {
                cmin[c] = p.slack[i];
                cend[c] = p.end[i];
            }
            if (p.oncp[i]) {
                s->oncp++;
                s->cp_sum += p.dur[i];
                ccp[c] += p.dur[i];
            }
        }
        for (uint32_t c = 0; c < C; c++) {
            X->ccp[k * C + c] = (float)ccp[c];
            X->ctot[k * C + c] = (float)cdur[c];
            X->cslack[k * C + c] = cmin[c] == INT64_MAX ? -1.0f : (float)cmin[c];
            T->cat_dur[c] += cdur[c];
            T->cat_cp[c] += ccp[c];
            T->cat_present[c] += cmin[c] != INT64_MAX;
        }
    }
out:
    lp_free(cdur), lp_free(ccp), lp_free(cmin), lp_free(cend);
    lp_reqpath_release(&p);
    return LP_OK;
}

/* ---- sorting helpers ------------------------------------------------------------------------ */

typedef struct kv {
    double v;
    uint64_t k;
} kv;

/* Order-preserving maps of doubles and signed integers to unsigned keys. */
static inline uint64_t dkey(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return (b >> 63) ? ~b : b | 0x8000000000000000ULL;
}

/* Stable LSD radix sort of n items of `size` bytes by a 64-bit key (16-bit digits; a
 * digit every item shares is skipped). Millions of latencies sort in a few tens of ms,
 * where qsort needs a second. Returns -1 on out of memory (items left unsorted). */
static int radix(void *items, size_t n, size_t size, uint64_t (*keyof)(const void *))
{
    if (n < 2)
        return 0;
    uint32_t *cnt = lp_calloc(4 * 65536, sizeof *cnt);
    char *tmp = lp_malloc(n * size);
    uint64_t *keys = lp_malloc(n * sizeof *keys), *tkeys = lp_malloc(n * sizeof *tkeys);
    if (!cnt || !tmp || !keys || !tkeys) {
        lp_free(cnt), lp_free(tmp), lp_free(keys), lp_free(tkeys);
        return -1;
    }
    char *a = items, *b = tmp;
    for (size_t i = 0; i < n; i++) {
        keys[i] = keyof(a + i * size);
        for (int d = 0; d < 4; d++)
            cnt[d * 65536 + ((keys[i] >> (16 * d)) & 0xFFFF)]++;
    }
    for (int d = 0; d < 4; d++) {
        uint32_t *c = cnt + d * 65536;
        if (c[(keys[0] >> (16 * d)) & 0xFFFF] == n)
            continue; /* all equal in this digit */
        uint32_t sum = 0;
        for (uint32_t x = 0; x < 65536; x++) {
            uint32_t t = c[x];
            c[x] = sum;
            sum += t;
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t at = c[(keys[i] >> (16 * d)) & 0xFFFF]++;
            memcpy(b + (size_t)at * size, a + i * size, size);
            tkeys[at] = keys[i];
        }
        char *t = a;
        a = b, b = t;
        uint64_t *u = keys;
        keys = tkeys, tkeys = u;
    }
    if (a != items)
        memcpy(items, a, n * size);
    lp_free(cnt), lp_free(a == items ? tmp : a), lp_free(keys), lp_free(tkeys);
    return 0;
}

static uint64_t key_dbl(const void *p) { return dkey(*(const double *)p); }
static uint64_t key_i64(const void *p) { return (uint64_t)*(const int64_t *)p ^ 0x8000000000000000ULL; }
static uint64_t key_kv(const void *p) { return dkey(((const kv *)p)->v); }

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static int cmp_kv(const void *a, const void *b)
{
    const kv *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* Sort, by radix when memory allows, else qsort (same order: kv ties keep k order
 * because items come in increasing k and the radix sort is stable). */
static void sort_dbl(double *v, size_t n)
{
    if (radix(v, n, sizeof *v, key_dbl))
        qsort(v, n, sizeof *v, cmp_dbl);
}
static void sort_i64(int64_t *v, size_t n)
{
    if (radix(v, n, sizeof *v, key_i64))
        qsort(v, n, sizeof *v, cmp_i64);
}
static void sort_kv(kv *v, size_t n)
{
    if (radix(v, n, sizeof *v, key_kv))
        qsort(v, n, sizeof *v, cmp_kv);
}

static inline size_t qidx(size_t n, unsigned p) { return (size_t)(((uint64_t)p * (n - 1) + 50) / 100); }

static void quantiles_dbl(double *v, size_t n, double *q)
{
    if (!n) {
        for (unsigned p = 0; p < LP_REQSTATS_Q; p++)
            q[p] = NAN;
        return;
    }
    sort_dbl(v, n);
    for (unsigned p = 0; p < LP_REQSTATS_Q; p++)
        q[p] = v[qidx(n, p)];
}

static double pearson(const double *x, const double *y, size_t n)
{
    if (n < 2)
        return NAN;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++)
        mx += x[i], my += y[i];
    mx /= (double)n, my /= (double)n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double a = x[i] - mx, b = y[i] - my;
        sxy += a * b, sxx += a * a, syy += b * b;
    }
    if (sxx <= 0 || syy <= 0)
        return NAN;
    return sxy / sqrt(sxx * syy);
}

double lp_reqstats_overrep(const lp_reqstats *s, uint32_t seg)
{
    int64_t tout = 0, tall = 0;
    for (uint32_t i = 0; i < s->nseg; i++) {
        tout += s->seg[i].cp_out;
        tall += s->seg[i].cp_sum;
    }
    int64_t trest = tall - tout;
    const lp_reqstats_seg *g = &s->seg[seg];
    double a = tout > 0 ? (double)g->cp_out / (double)tout : 0;
    double b = trest > 0 ? (double)(g->cp_sum - g->cp_out) / (double)trest : 0;
    return a - b;
}

/* sorted by decreasing over-representation, then id: kv with v = -overrep, k = id */

void lp_reqstats_release(lp_reqstats *s)
{
    lp_free(s->seg);
    for (uint32_t c = 0; c < s->ncat; c++)
        lp_free(s->cat[c].buckets);
    lp_free(s->cat);
    lp_free(s->ranked);
    for (uint32_t i = 0; i < s->nstrat; i++) {
        for (uint32_t v = 0; v < s->strat[i].nvals; v++) {
            lp_free(s->strat[i].vals[v].label);
            lp_free(s->strat[i].vals[v].cat_cp_mean);
        }
        lp_free(s->strat[i].vals);
        lp_free(s->strat[i].name);
    }
    lp_free(s->strat);
    memset(s, 0, sizeof *s);
}

/* ---- strata ---------------------------------------------------------------------------------- */

typedef struct sacc {
    uint64_t n;
    double lat, cp;
    double *ccp;
    lp_str val;       /* categorical value */
    double lo, hi;    /* quantile bucket range */
} sacc;

static int cmp_sacc(const void *a, const void *b)
{
    const sacc *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return (x->val > y->val) - (x->val < y->val);
}

/* Where the values of a --stratify spec come from: *kind 0 attribute (*attr), 1
 * latency, 2 critical path, 3 category time (*ci); *K quantiles (0: categorical). */
static lp_status strat_source(const rs_ctx *X, const lp_reqcat *cat, const char *spec, int *kind, long *K,
                              uint32_t *attr, uint32_t *ci, lp_error *err)
{
    char name[256];
    const char *colon = strrchr(spec, ':');
    size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
    *K = 0;
    if (colon) {
        char *e;
        *K = strtol(colon + 1, &e, 10);
        if (*e || *K < 2 || *K > 1000)
            return lp_error_set(err, LP_ERR_ARG, "--stratify %s: the number of quantiles must be 2..1000", spec);
    }
    if (nl >= sizeof name)
        nl = sizeof name - 1;
    memcpy(name, spec, nl);
    name[nl] = '\0';
    *kind = -1;
    *attr = LP_REQLOG_NONE, *ci = 0;
    if (strcmp(name, "latency") == 0)
        *kind = 1;
    else if (strcmp(name, "cp") == 0)
        *kind = 2;
    else if (strncmp(name, "cat.", 4) == 0) {
        for (*ci = 0; *ci < cat->ncat && strcmp(cat->name[*ci], name + 4) != 0; (*ci)++)
            ;
        if (*ci == cat->ncat)
            return lp_error_set(err, LP_ERR_ARG, "--stratify %s: no category '%s'", spec, name + 4);
        *kind = 3;
    } else {
        *attr = lp_reqlog_attr_find(X->rl, name);
        if (*attr == LP_REQLOG_NONE)
            return lp_error_set(err, LP_ERR_ARG, "--stratify %s: no request attribute '%s'", spec, name);
        *kind = 0;
    }
    if (*kind != 0 && !*K)
        return lp_error_set(err, LP_ERR_ARG, "--stratify %s: a number needs quantiles (e.g. %s:5)", spec, name);
    return LP_OK;
}

/* Numeric strata: the analysed requests' values sorted and cut into K quantile
 * buckets (*pacc, K of them, even on error). */
static lp_status strat_quantiles(const rs_ctx *X, int kind, long K, uint32_t attr, uint32_t ci,
                                 lp_reqstats_strat *out, sacc **pacc, size_t *pnacc, lp_error *err)
{
    const lp_reqlog *rl = X->rl;
    uint32_t C = X->C;
    lp_status st = LP_OK;
    kv *vals = lp_malloc((X->n ? X->n : 1) * sizeof *vals);
    if (!vals)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    size_t nv = 0;
    for (uint64_t k = 0; k < X->n; k++) {
        if (!X->nonempty[k])
            continue;
        double v;
        if (kind == 1)
            v = (double)X->lat[k];
        else if (kind == 2)
            v = (double)X->cp[k];
        else if (kind == 3)
            v = X->ctot[k * C + ci];
        else {
            lp_str s = rl->rattr[(size_t)attr * rl->nreqs + X->req[k]];
            char *e;
            if (s == LP_STR_NONE) {
                out->missing++;
                continue;
            }
            const char *txt = lp_reqlog_str(rl, s);
            errno = 0;
            v = strtod(txt, &e);
            if (e == txt || *e || errno || !isfinite(v)) {
                out->missing++;
                continue;
            }
        }
        vals[nv].v = v;
        vals[nv].k = k;
        nv++;
    }
    sort_kv(vals, nv);
    sacc *acc = lp_calloc((size_t)K, sizeof *acc);
    if (!acc) {
        lp_free(vals);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    size_t nacc = (size_t)K;
    for (size_t b = 0; b < nacc; b++) {
        acc[b].ccp = lp_calloc(C ? C : 1, sizeof *acc[b].ccp);
        if (!acc[b].ccp)
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        size_t lo = nv * b / nacc, hi = nv * (b + 1) / nacc;
        acc[b].lo = hi > lo ? vals[lo].v : NAN;
        acc[b].hi = hi > lo ? vals[hi - 1].v : NAN;
        for (size_t i = lo; i < hi && st == LP_OK; i++) {
            uint64_t k = vals[i].k;
            acc[b].n++;
            acc[b].lat += (double)X->lat[k];
            acc[b].cp += (double)X->cp[k];
            for (uint32_t c = 0; c < C; c++)
                acc[b].ccp[c] += X->ccp[k * C + c];
        }
    }
    lp_free(vals);
    *pacc = acc;
    *pnacc = nacc;
    return st;
}

/* Categorical strata: one per value of the attribute (name ids; a small open hash),
 * largest first, the tail past maxv folded into "(other)" (*pacc: the strata so far,
 * even on error). */
static lp_status strat_values(const rs_ctx *X, uint32_t attr, uint32_t maxv, lp_reqstats_strat *out, sacc **pacc,
                              size_t *pnacc, lp_error *err)
{
    const lp_reqlog *rl = X->rl;
    uint32_t C = X->C;
    lp_status st = LP_OK;
    sacc *acc = NULL;
    size_t nacc = 0;
    lp_hmap32 slot; /* value -> index in acc */
    lp_hmap32_init(&slot, 0, NULL);
    for (uint64_t k = 0; k < X->n && st == LP_OK; k++) {
        if (!X->nonempty[k])
            continue;
        lp_str v = rl->rattr[(size_t)attr * rl->nreqs + X->req[k]];
        if (v == LP_STR_NONE) {
            out->missing++;
            continue;
        }
        int added;
        uint32_t h = lp_hmap32_get_or_put(&slot, v, (uint32_t)nacc, &added);
        if (h == LP_HMAP32_EMPTY) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        if (added) {
            sacc *na = lp_reallocarray(acc, nacc + 1, sizeof *na);
            if (!na) {
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                break;
            }
            acc = na;
            memset(&acc[nacc], 0, sizeof *acc);
            acc[nacc].val = v;
            acc[nacc].ccp = lp_calloc(C ? C : 1, sizeof *acc[nacc].ccp);
            if (!acc[nacc].ccp) {
                nacc++;
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                break;
            }
            nacc++;
        }
        sacc *a = &acc[h];
        a->n++;
        a->lat += (double)X->lat[k];
        a->cp += (double)X->cp[k];
        for (uint32_t c = 0; c < C; c++)
            a->ccp[c] += X->ccp[k * C + c];
    }
    lp_hmap32_release(&slot);
    if (st == LP_OK) {
        if (nacc)
            qsort(acc, nacc, sizeof *acc, cmp_sacc);
        if (maxv && nacc > maxv) { /* fold the tail into "(other)" */
            for (size_t i = maxv; i < nacc; i++) {
                acc[maxv - 1].n += acc[i].n;
                acc[maxv - 1].lat += acc[i].lat;
                acc[maxv - 1].cp += acc[i].cp;
                for (uint32_t c = 0; c < C; c++)
                    acc[maxv - 1].ccp[c] += acc[i].ccp[c];
                lp_free(acc[i].ccp);
            }
            acc[maxv - 1].val = LP_STR_NONE;
            nacc = maxv;
        }
    }
    *pacc = acc;
    *pnacc = nacc;
    return st;
}

/* The strata's labels and means into out. */
static lp_status strat_output(const rs_ctx *X, int kind, long K, const sacc *acc, size_t nacc, lp_reqstats_strat *out,
                              lp_error *err)
{
    uint32_t C = X->C;
    out->vals = lp_calloc(nacc ? nacc : 1, sizeof *out->vals);
    if (!out->vals)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < nacc; i++) {
        lp_reqstats_stratum *v = &out->vals[out->nvals++];
        char lb[512];
        if (K && kind != 0) {
            char b1[32], b2[32];
            snprintf(lb, sizeof lb, "q%zu [%s, %s]", i + 1, lp_fmt_dur((int64_t)llround(acc[i].lo), b1, sizeof b1),
                     lp_fmt_dur((int64_t)llround(acc[i].hi), b2, sizeof b2));
        } else if (K)
            snprintf(lb, sizeof lb, "q%zu [%.6g, %.6g]", i + 1, acc[i].lo, acc[i].hi);
        else
            snprintf(lb, sizeof lb, "%s", acc[i].val == LP_STR_NONE ? "(other)" : lp_reqlog_str(X->rl, acc[i].val));
        v->label = lp_strndup(lb, strlen(lb));
        v->n = acc[i].n;
        v->latency_mean = acc[i].n ? acc[i].lat / (double)acc[i].n : NAN;
        v->cp_mean = acc[i].n ? acc[i].cp / (double)acc[i].n : NAN;
        v->cat_cp_mean = lp_malloc((C ? C : 1) * sizeof *v->cat_cp_mean);
        if (!v->label || !v->cat_cp_mean)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        for (uint32_t c = 0; c < C; c++)
            v->cat_cp_mean[c] = acc[i].n ? acc[i].ccp[c] / (double)acc[i].n : NAN;
    }
    return LP_OK;
}

static lp_status stratify(const rs_ctx *X, const lp_reqcat *cat, const char *spec, uint32_t maxv, lp_reqstats_strat *out,
                          lp_error *err)
{
    memset(out, 0, sizeof *out);
    out->name = lp_strndup(spec, strlen(spec));
    if (!out->name)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    int kind;
    long K;
    uint32_t attr, ci;
    lp_status st = strat_source(X, cat, spec, &kind, &K, &attr, &ci, err);
    if (st)
        return st;
    sacc *acc = NULL;
    size_t nacc = 0;
    if (K)
        st = strat_quantiles(X, kind, K, attr, ci, out, &acc, &nacc, err);
    else
        st = strat_values(X, attr, maxv, out, &acc, &nacc, err);
    if (st == LP_OK)
        st = strat_output(X, kind, K, acc, nacc, out, err);
    for (size_t i = 0; i < nacc; i++)
        lp_free(acc[i].ccp);
    lp_free(acc);
    return st;
}

/* ---- run ------------------------------------------------------------------------------------- */

/* The per-request arrays, the thread accumulators and out's per-segment and
 * per-category arrays, for the n requests not excluded (listed in X->req). */
static lp_status rs_alloc(rs_ctx *X, unsigned nthr, lp_reqstats *out, lp_error *err)
{
    const lp_reqlog *rl = X->rl;
    uint32_t C = X->C, S = X->m->nseg;
    uint64_t n = 0;
    for (uint64_t r = 0; r < rl->nreqs; r++)
        n += !rl->rbad[r];
    out->excluded = rl->nreqs - n;
    uint64_t *req = lp_malloc((n ? n : 1) * sizeof *req);
    X->req = req;
    X->lat = lp_malloc((n ? n : 1) * sizeof *X->lat);
    X->cp = lp_malloc((n ? n : 1) * sizeof *X->cp);
    X->nonempty = lp_calloc(n ? n : 1, 1);
    X->ccp = lp_malloc((size_t)(n ? n : 1) * (C ? C : 1) * sizeof *X->ccp);
    X->ctot = lp_malloc((size_t)(n ? n : 1) * (C ? C : 1) * sizeof *X->ctot);
    X->cslack = lp_malloc((size_t)(n ? n : 1) * (C ? C : 1) * sizeof *X->cslack);
    X->th = lp_calloc(nthr, sizeof *X->th);
    out->seg = lp_calloc(S ? S : 1, sizeof *out->seg);
    out->cat = lp_calloc(C ? C : 1, sizeof *out->cat);
    if (!req || !X->lat || !X->cp || !X->nonempty || !X->ccp || !X->ctot || !X->cslack || !X->th || !out->seg ||
        !out->cat)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    out->nseg = S;
    out->ncat = C;
    n = 0;
    for (uint64_t r = 0; r < rl->nreqs; r++)
        if (!rl->rbad[r])
            req[n++] = r;
    X->n = n;
    for (unsigned t = 0; t < nthr; t++) {
        th_acc *T = &X->th[t];
        T->seg = lp_calloc(S ? S : 1, sizeof *T->seg);
        T->cat_dur = lp_calloc(C ? C : 1, sizeof *T->cat_dur);
        T->cat_cp = lp_calloc(C ? C : 1, sizeof *T->cat_cp);
        T->cat_present = lp_calloc(C ? C : 1, sizeof *T->cat_present);
        if (!T->seg || !T->cat_dur || !T->cat_cp || !T->cat_present)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    return LP_OK;
}

static void rs_free(rs_ctx *X, unsigned nthr)
{
    if (X->th)
        for (unsigned t = 0; t < nthr; t++) {
            lp_free(X->th[t].seg), lp_free(X->th[t].cat_dur), lp_free(X->th[t].cat_cp), lp_free(X->th[t].cat_present);
        }
    lp_free(X->th);
    lp_free((void *)X->req), lp_free(X->lat), lp_free(X->cp), lp_free(X->nonempty), lp_free(X->ccp), lp_free(X->ctot);
    lp_free(X->cslack), lp_free((void *)X->outl);
}

/* Run a pass on the threads; a thread's error becomes the result. */
static lp_status rs_pass(rs_ctx *X, int pass, uint64_t total, unsigned nthr, lp_error *err)
{
    X->pass = pass;
    lp_pool_run(X->pool, total < 1024 ? 1 : nthr, rs_worker, X, NULL);
    for (unsigned t = 0; t < nthr; t++)
        if (X->th[t].nomem) {
            *err = X->th[t].err;
            return X->th[t].err.status ? X->th[t].err.status : LP_ERR_NOMEM;
        }
    return LP_OK;
}

void lp_reqstats_part_range(uint64_t n, uint64_t part, uint64_t nparts, uint64_t *lo, uint64_t *hi)
{
    if (nparts == 0) {
        *lo = 0, *hi = n;
        return;
    }
    lp_pool_range(n, (size_t)part, (size_t)nparts, lo, hi);
}

/* A part's pass 1 (st: how it went) handed to the gather hook (o->gather), which every
 * part calls even after a failure; *go_on = 0 on the parts that stop. */
static lp_status rs_gather(rs_ctx *X, const lp_reqstats_opts *o, lp_status st, lp_reqstats *out, int *go_on,
                           lp_error *err)
{
    *go_on = 1;
    if (!o->gather)
        return st;
    lp_reqstats_part p = {o->part, o->nparts, X->n, X->lo, X->hi, X->C, X->m->nseg, X->lat, X->cp, X->nonempty,
                          X->ccp, X->ctot, X->cslack, out};
    return o->gather(o->gather_ctx, &p, st, go_on, err);
}

/* Pass 1: every request's path (this part's rows); the threads' sums merged into out
 * (and cleared for pass 2). */
static lp_status rs_pass1(rs_ctx *X, const lp_reqstats_opts *o, unsigned nthr, lp_reqstats *out, lp_error *err)
{
    uint32_t C = X->C, S = X->m->nseg;
    lp_reqstats_part_range(X->n, o->part, o->nparts, &X->lo, &X->hi);
    lp_status st = rs_pass(X, 1, X->hi - X->lo, nthr, err);
    if (st)
        return st;
    for (unsigned t = 0; t < nthr; t++) {
        th_acc *T = &X->th[t];
        out->violations += T->violations;
        out->unknown += T->unknown;
        for (uint32_t s = 0; s < S; s++) {
            lp_reqstats_seg *a = &out->seg[s], *b = &T->seg[s];
            a->present += b->present, a->oncp += b->oncp;
            a->dur_sum += b->dur_sum, a->cp_sum += b->cp_sum, a->slack_sum += b->slack_sum;
            for (int h = 0; h < LP_REQSTATS_HIST; h++)
                a->slack_hist[h] += b->slack_hist[h];
            memset(b, 0, sizeof *b);
        }
        for (uint32_t c = 0; c < C; c++) {
            out->cat[c].dur_sum += T->cat_dur[c];
            out->cat[c].cp_sum += T->cat_cp[c];
            out->cat[c].present += T->cat_present[c];
        }
    }
    return LP_OK;
}

/* The analysed requests (those with segments) compacted in place. */
static void rs_compact(rs_ctx *X, lp_reqstats *out)
{
    uint32_t C = X->C;
    uint64_t *req = (uint64_t *)X->req, a = 0;
    for (uint64_t k = 0; k < X->n; k++) {
        if (!X->nonempty[k])
            continue;
        req[a] = req[k];
        X->lat[a] = X->lat[k];
        X->cp[a] = X->cp[k];
        X->nonempty[a] = 1;
        if (C) {
            memmove(X->ccp + a * C, X->ccp + k * C, C * sizeof *X->ccp);
            memmove(X->ctot + a * C, X->ctot + k * C, C * sizeof *X->ctot);
            memmove(X->cslack + a * C, X->cslack + k * C, C * sizeof *X->cslack);
        }
        a++;
    }
    X->n = a;
    out->analysed = a;
}

/* Latency and critical path: means and quantiles (n > 0). */
static lp_status rs_latency(const rs_ctx *X, lp_reqstats *out, lp_error *err)
{
    uint64_t n = X->n;
    int64_t *v = lp_malloc(n * sizeof *v);
    if (!v)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    double sl = 0, sc = 0;
    for (uint64_t k = 0; k < n; k++) {
        v[k] = X->lat[k];
        sl += (double)X->lat[k];
        sc += (double)X->cp[k];
    }
    out->latency_mean = sl / (double)n;
    out->cp_mean = sc / (double)n;
    sort_i64(v, n);
    for (unsigned p = 0; p < LP_REQSTATS_Q; p++)
        out->latency_q[p] = (double)v[qidx(n, p)];
    for (uint64_t k = 0; k < n; k++)
        v[k] = X->cp[k];
    sort_i64(v, n);
    for (unsigned p = 0; p < LP_REQSTATS_Q; p++)
        out->cp_q[p] = (double)v[qidx(n, p)];
    lp_free(v);
    return LP_OK;
}

/* Outliers: the top share by latency (then request order); pass 2 recomputes their
 * paths. kvs holds max(n, segments) entries. */
static lp_status rs_outliers(rs_ctx *X, double share, unsigned nthr, kv *kvs, lp_reqstats *out, lp_error *err)
{
    uint64_t n = X->n;
    for (uint64_t k = 0; k < n; k++) {
        kvs[k].v = -(double)X->lat[k];
        kvs[k].k = k;
    }
    sort_kv(kvs, n);
    out->noutliers = (uint64_t)ceil(share * (double)n);
    if (out->noutliers > n)
        out->noutliers = n;
    uint64_t *outl = lp_malloc((out->noutliers ? out->noutliers : 1) * sizeof *outl);
    if (!outl)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; i < out->noutliers; i++)
        outl[i] = kvs[i].k;
    out->outlier_latency = out->noutliers ? X->lat[kvs[out->noutliers - 1].k] : 0;
    X->outl = outl;
    X->nout = out->noutliers;
    lp_status st = rs_pass(X, 2, X->nout, nthr, err);
    if (st)
        return st;
    for (unsigned t = 0; t < nthr; t++)
        for (uint32_t s = 0; s < X->m->nseg; s++) {
            out->seg[s].present_out += X->th[t].seg[s].present_out;
            out->seg[s].oncp_out += X->th[t].seg[s].oncp_out;
            out->seg[s].dur_out += X->th[t].seg[s].dur_out;
            out->seg[s].cp_out += X->th[t].seg[s].cp_out;
        }
    return LP_OK;
}

/* Segments by decreasing over-representation on the outliers' paths. */
static lp_status rs_rank(uint32_t S, kv *kvs, lp_reqstats *out, lp_error *err)
{
    out->ranked = lp_malloc((S ? S : 1) * sizeof *out->ranked);
    if (!out->ranked)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    int64_t tout = 0, tall = 0;
    for (uint32_t s = 0; s < S; s++) {
        tout += out->seg[s].cp_out;
        tall += out->seg[s].cp_sum;
    }
    size_t nk = 0;
    for (uint32_t s = 0; s < S; s++) {
        if (!out->seg[s].present)
            continue;
        double x = tout > 0 ? (double)out->seg[s].cp_out / (double)tout : 0;
        double y = tall - tout > 0 ? (double)(out->seg[s].cp_sum - out->seg[s].cp_out) / (double)(tall - tout) : 0;
        kvs[nk].v = -(x - y);
        kvs[nk].k = s;
        nk++;
    }
    sort_kv(kvs, nk);
    for (size_t i = 0; i < nk; i++)
        out->ranked[out->nranked++] = (uint32_t)kvs[i].k;
    return LP_OK;
}

/* One category: share and slack quantiles, and B what-if buckets by slack (tmp, tx, ty
 * and kvs hold n entries). */
static lp_status rs_category(const rs_ctx *X, uint32_t c, uint32_t B, kv *kvs, double *tmp, double *tx, double *ty,
                             lp_reqstats_cat *pc, lp_error *err)
{
    uint64_t n = X->n;
    uint32_t C = X->C;
    size_t m2 = 0;
    for (uint64_t k = 0; k < n; k++)
        if (X->cp[k] > 0)
            tmp[m2++] = (double)X->ccp[k * C + c] / (double)X->cp[k];
    quantiles_dbl(tmp, m2, pc->share_q);
    m2 = 0;
    for (uint64_t k = 0; k < n; k++)
        if (X->cslack[k * C + c] >= 0) {
            kvs[m2].v = X->cslack[k * C + c];
            kvs[m2].k = k;
            tmp[m2] = X->cslack[k * C + c];
            m2++;
        }
    quantiles_dbl(tmp, m2, pc->slack_q);
    if (m2 == 0)
        return LP_OK;
    sort_kv(kvs, m2);
    uint32_t nb = m2 < B ? (uint32_t)m2 : B;
    pc->buckets = lp_calloc(nb, sizeof *pc->buckets);
    if (!pc->buckets)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    pc->nbuckets = nb;
    for (uint32_t b = 0; b < nb; b++) {
        size_t lo = m2 * b / nb, hi = m2 * (b + 1) / nb;
        lp_reqstats_bucket *bk = &pc->buckets[b];
        bk->n = hi - lo;
        bk->slack_lo = (int64_t)kvs[lo].v;
        bk->slack_hi = (int64_t)kvs[hi - 1].v;
        double sx = 0, sy = 0;
        for (size_t i = lo; i < hi; i++) {
            uint64_t k = kvs[i].k;
            tx[i - lo] = X->ctot[k * C + c];
            ty[i - lo] = (double)X->lat[k];
            sx += tx[i - lo];
            sy += ty[i - lo];
        }
        bk->x_mean = bk->n ? sx / (double)bk->n : NAN;
        bk->latency_mean = bk->n ? sy / (double)bk->n : NAN;
        bk->r = pearson(tx, ty, hi - lo);
    }
    return LP_OK;
}

static lp_status rs_categories(const rs_ctx *X, uint32_t B, kv *kvs, lp_reqstats *out, lp_error *err)
{
    uint64_t n = X->n;
    double *tmp = lp_malloc(n * sizeof *tmp), *tx = lp_malloc(n * sizeof *tx), *ty = lp_malloc(n * sizeof *ty);
    lp_status st = !tmp || !tx || !ty ? lp_error_set(err, LP_ERR_NOMEM, "out of memory") : LP_OK;
    for (uint32_t c = 0; c < X->C && !st; c++)
        st = rs_category(X, c, B, kvs, tmp, tx, ty, &out->cat[c], err);
    lp_free(tmp), lp_free(tx), lp_free(ty);
    return st;
}

static lp_status rs_strata(const rs_ctx *X, const lp_reqstats_opts *o, lp_reqstats *out, lp_error *err)
{
    if (!o->nstratify)
        return LP_OK;
    out->strat = lp_calloc(o->nstratify, sizeof *out->strat);
    if (!out->strat)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < o->nstratify; i++) {
        out->nstrat++;
        lp_status st = stratify(X, X->cat, o->stratify[i], o->max_values ? o->max_values : 50, &out->strat[i], err);
        if (st)
            return st;
    }
    return LP_OK;
}

/* No request analysed: every mean and quantile is NaN. */
static void rs_none(lp_reqstats *out)
{
    out->latency_mean = out->cp_mean = NAN;
    for (unsigned q = 0; q < LP_REQSTATS_Q; q++)
        out->latency_q[q] = out->cp_q[q] = NAN;
    for (uint32_t c = 0; c < out->ncat; c++)
        for (unsigned q = 0; q < LP_REQSTATS_Q; q++)
            out->cat[c].share_q[q] = out->cat[c].slack_q[q] = NAN;
}

lp_status lp_reqstats_run(const lp_causal *m, const lp_reqlog *rl, const uint32_t *map, const lp_reqcat *cat,
                          const lp_reqstats_opts *o, lp_reqstats *out, lp_error *err)
{
    memset(out, 0, sizeof *out);
    lp_reqstats_opts def;
    if (!o) {
        memset(&def, 0, sizeof def);
        o = &def;
    }
    if (!cat->of_seg || cat->nseg != m->nseg)
        return lp_error_set(err, LP_ERR_ARG, "categories were not assigned to this model");
    double share = o->outlier_share > 0 && o->outlier_share < 1 ? o->outlier_share : 0.05;
    uint32_t B = o->buckets ? o->buckets : 20;
    unsigned nthr = lp_pool_threads(o->threads, 64);
    rs_ctx X;
    memset(&X, 0, sizeof X);
    X.m = m, X.rl = rl, X.map = map, X.cat = cat, X.C = cat->ncat;
    X.progress = o->progress, X.progress_ctx = o->progress_ctx;
    kv *kvs = NULL;
    int go_on = 1;
    if (o->nparts && o->part >= o->nparts)
        return lp_error_set(err, LP_ERR_ARG, "part %llu of %llu", (unsigned long long)o->part,
                            (unsigned long long)o->nparts);
    lp_status st = rs_alloc(&X, nthr, out, err);
    if (!st)
        lp_pool_new(&X.pool, nthr - 1, NULL); /* for both passes; without it, the parts run here */
    if (!st)
        st = rs_pass1(&X, o, nthr, out, err);
    st = rs_gather(&X, o, st, out, &go_on, err);
    if (!st && !go_on)
        goto out; /* another part analyses */
    if (!st)
        rs_compact(&X, out);
    if (!st && X.n == 0) {
        rs_none(out);
        goto out;
    }
    if (!st)
        st = rs_latency(&X, out, err);
    if (!st && !(kvs = lp_malloc((X.n > m->nseg ? X.n : m->nseg) * sizeof *kvs))) /* requests, later segments */
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (!st)
        st = rs_outliers(&X, share, nthr, kvs, out, err);
    if (!st)
        st = rs_rank(m->nseg, kvs, out, err);
    if (!st)
        st = rs_categories(&X, B, kvs, out, err);
    if (!st)
        st = rs_strata(&X, o, out, err);
out:
    lp_pool_free(X.pool);
    rs_free(&X, nthr);
    lp_free(kvs);
    if (st)
        lp_reqstats_release(out);
    return st;
}
