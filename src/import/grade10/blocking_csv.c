/* blocking_csv.c: intervals during which a blocking resource (paper §III-B: a lock, a
 * full queue, a garbage-collection pause) was unavailable, as CSV
 * `start,end,host,resource[,scope]` (docs/formats/grade10-inputs.md).
 *
 * An optional header names the columns in any order (start and end may carry a unit:
 * start_ms, end_ms, ...); without one the order is the one above. `host` may be empty
 * or `*` (every host). `scope` is `key=value;key=value`: only phase instances carrying
 * every one of these instance keys (their own or an ancestor's) are blocked; empty:
 * every phase on the host. Rows with end < start, bad numbers or a bad scope are
 * reported with their line and dropped.
 */
#include "longpole/import/grade10.h"
#include "import/grade10/g10_text.h"
#include "longpole/base/alloc.h"

#include <string.h>
#include <strings.h>

enum { B_START, B_END, B_HOST, B_RES, B_SCOPE, NB };
#define MAXSCOPE 16

typedef struct bctx {
    lp_g10_data *d;
    lp_diags *ds;
    const char *fname;
    lp_str file;
    int col[NB];        /* field index of each column (-1: absent) */
    int minf, maxf;     /* fields a row may have */
    int64_t unit[2];    /* of start and end */
} bctx;

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static int starts(const char *f, size_t n, const char *w)
{
    size_t k = strlen(w);
    return n >= k && strncasecmp(f, w, k) == 0 && (n == k || f[k] == '_');
}

static int header(bctx *c, const char *p, size_t n, uint64_t line)
{
    const char *f;
    size_t fn;
    const char *q = p;
    size_t qn = n;
    g10_next_field(&q, &qn, ',', &f, &fn);
    g10_trim(&f, &fn);
    if (!fn || (f[0] >= '0' && f[0] <= '9') || f[0] == '-' || f[0] == '+' || f[0] == '.')
        return 0;
    for (int i = 0; i < NB; i++)
        c->col[i] = -1;
    int k = 0;
    q = p;
    qn = n;
    while (g10_next_field(&q, &qn, ',', &f, &fn)) {
        g10_trim(&f, &fn);
        int w = -1;
        int64_t u = g10_unit_suffix(f, fn);
        if (starts(f, fn, "start"))
            w = B_START, c->unit[0] = u ? u : c->unit[0];
        else if (starts(f, fn, "end"))
            w = B_END, c->unit[1] = u ? u : c->unit[1];
        else if (fn == 4 && strncasecmp(f, "host", 4) == 0)
            w = B_HOST;
        else if (fn == 8 && strncasecmp(f, "resource", 8) == 0)
            w = B_RES;
        else if (fn == 5 && strncasecmp(f, "scope", 5) == 0)
            w = B_SCOPE;
        if (w < 0 || c->col[w] >= 0) {
            lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_SYNTAX, c->fname, line,
                            "header column '%.*s' is %s (expected start, end, host, resource[, scope])",
                            (int)(fn > 40 ? 40 : fn), f, w < 0 ? "unknown" : "repeated");
            return -1;
        }
        c->col[w] = k++;
    }
    for (int i = 0; i < B_SCOPE; i++)
        if (c->col[i] < 0) {
            lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_SYNTAX, c->fname, line,
                            "header lacks a column (expected start, end, host, resource[, scope])");
            return -1;
        }
    c->minf = c->maxf = k;
    return 1;
}

/* Parse `key=value;key=value` into a tag list. 0 (reported) if malformed. */
static int scope(bctx *c, const char *p, size_t n, uint64_t line, uint32_t *off, lp_status *st, lp_error *err)
{
    lp_str kv[2 * MAXSCOPE];
    uint32_t k = 0;
    const char *f;
    size_t fn;
    *st = LP_OK;
    while (g10_next_field(&p, &n, ';', &f, &fn)) {
        g10_trim(&f, &fn);
        if (!fn)
            continue;
        const char *eq = memchr(f, '=', fn);
        if (!eq || eq == f || k == MAXSCOPE) {
            if (k == MAXSCOPE)
                lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "scope has more than %d keys",
                                MAXSCOPE);
            else
                lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "scope '%.*s' is not key=value",
                                (int)(fn > 40 ? 40 : fn), f);
            return 0;
        }
        const char *a = f, *b = eq + 1;
        size_t an = (size_t)(eq - f), bn = fn - an - 1;
        g10_trim(&a, &an);
        g10_trim(&b, &bn);
        if (lp_strtab_intern(&c->d->strs, a, an, &kv[2 * k]) || lp_strtab_intern(&c->d->strs, b, bn, &kv[2 * k + 1])) {
            *st = nomem(err);
            return 0;
        }
        k++;
    }
    *st = lp_g10_data_tags(c->d, kv, k, off, err);
    return *st == LP_OK;
}

static lp_status row(bctx *c, const char *p, size_t n, uint64_t line, lp_error *err)
{
    const char *fv[NB] = {NULL, NULL, NULL, NULL, NULL};
    size_t fl[NB] = {0, 0, 0, 0, 0};
    int k = g10_csv_fields(p, n, c->col, NB, c->maxf, fv, fl);
    if (k < c->minf || k > c->maxf) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "%d fields (expected %d%s)", k, c->minf,
                        c->maxf > c->minf ? " or 5" : "");
        return LP_OK;
    }
    lp_g10_block b = {0, 0, LP_STR_EMPTY, 0, 0, c->file, line};
    if (!g10_parse_time(fv[B_START], fl[B_START], c->unit[0], &b.start) ||
        !g10_parse_time(fv[B_END], fl[B_END], c->unit[1], &b.end)) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "start or end is not a number");
        return LP_OK;
    }
    if (b.end < b.start) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_END_BEFORE_START, c->fname, line,
                        "blocking interval ends (%lld) before it starts (%lld)", (long long)b.end, (long long)b.start);
        return LP_OK;
    }
    if (!fl[B_RES]) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "empty resource name");
        return LP_OK;
    }
    int anyhost = !fl[B_HOST] || (fl[B_HOST] == 1 && fv[B_HOST][0] == '*');
    if ((!anyhost && lp_strtab_intern(&c->d->strs, fv[B_HOST], fl[B_HOST], &b.host)) ||
        lp_strtab_intern(&c->d->strs, fv[B_RES], fl[B_RES], &b.resource))
        return nomem(err);
    if (fv[B_SCOPE] && fl[B_SCOPE]) {
        lp_status st;
        if (!scope(c, fv[B_SCOPE], fl[B_SCOPE], line, &b.scope, &st, err))
            return st;
    }
    lp_g10_data *d = c->d;
    if (lp_grow_at(&d->blk, &d->capblk, d->nblk + 1, sizeof *d->blk))
        return nomem(err);
    d->blk[d->nblk++] = b;
    return LP_OK;
}

static int header_cb(void *ctx, const char *p, size_t n, uint64_t line) { return header(ctx, p, n, line); }

static lp_status row_cb(void *ctx, const char *p, size_t n, uint64_t line, lp_error *err)
{
    return row(ctx, p, n, line, err);
}

lp_status lp_g10_read_blocking(lp_g10_data *d, lp_input *in, const lp_g10_read_opts *opts, lp_diags *ds,
                               lp_error *err)
{
    int64_t u = opts && opts->time_unit_ns > 0 ? opts->time_unit_ns : 1;
    bctx c = {d, ds, lp_input_name(in), 0, {0, 1, 2, 3, 4}, 4, 5, {u, u}};
    if (lp_strtab_intern(&d->strs, c.fname, strlen(c.fname), &c.file))
        return nomem(err);
    return g10_csv_read(in, "blocking-interval CSV", c.fname, header_cb, row_cb, &c, err);
}
