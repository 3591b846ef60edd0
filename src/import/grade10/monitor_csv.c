/* monitor_csv.c: monitoring samples as CSV, `time,host,metric,value` (docs/formats/
 * grade10-inputs.md), what `longpole record`'s monitor source writes and what any
 * sampler can be converted to. What a value means (a cumulative counter, or the mean
 * rate over the interval since the previous sample of its series) is declared per
 * metric by the model, not here.
 *
 * An optional header names the columns in any order (time may carry its unit:
 * time_ns, time_us, time_ms, time_s); without one the columns are time, host, metric,
 * value and times are in the caller's unit (ns by default). Fields are not quoted.
 * Samples are grouped into one series per (host, metric); within a series times must
 * strictly increase: a sample at or before its predecessor is reported (rule `order`)
 * and dropped. Bad rows are reported with their line and dropped.
 */
#include "longpole/import/grade10.h"
#include "import/grade10/g10_text.h"
#include "longpole/base/alloc.h"

#include <string.h>
#include <strings.h>

enum { C_TIME, C_HOST, C_METRIC, C_VALUE, NCOLS };

typedef struct mctx {
    lp_g10_data *d;
    lp_diags *ds;
    const char *fname;
    lp_str file;
    int col[NCOLS];      /* field index of each column */
    int nfields;
    int64_t unit;
} mctx;

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static int name_is(const char *f, size_t n, const char *name) { return strlen(name) == n && strncasecmp(f, name, n) == 0; }

/* A header line: 1 if it is one (columns set), 0 if it is data, -1 if it is a broken header. */
static int header(mctx *c, const char *p, size_t n, uint64_t line)
{
    const char *f;
    size_t fn;
    const char *q = p;
    size_t qn = n;
    g10_next_field(&q, &qn, ',', &f, &fn);
    g10_trim(&f, &fn);
    double dummy;
    if (fn && (g10_parse_double(f, fn, &dummy) || (f[0] >= '0' && f[0] <= '9')))
        return 0;
    int seen[NCOLS] = {0, 0, 0, 0}, k = 0;
    q = p;
    qn = n;
    while (g10_next_field(&q, &qn, ',', &f, &fn)) {
        g10_trim(&f, &fn);
        int which = -1;
        int64_t u = g10_unit_suffix(f, fn);
        if (name_is(f, fn, "time") || name_is(f, fn, "timestamp") || (u && fn > 4 && strncasecmp(f, "time_", 5) == 0))
            which = C_TIME, c->unit = u ? u : c->unit;
        else if (name_is(f, fn, "host") || name_is(f, fn, "hostname"))
            which = C_HOST;
        else if (name_is(f, fn, "metric"))
            which = C_METRIC;
        else if (name_is(f, fn, "value"))
            which = C_VALUE;
        if (which < 0 || seen[which]) {
            lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_SYNTAX, c->fname, line,
                            "header column '%.*s' is %s (expected time, host, metric, value)", (int)(fn > 40 ? 40 : fn),
                            f, which < 0 ? "unknown" : "repeated");
            return -1;
        }
        seen[which] = 1;
        c->col[which] = k++;
    }
    for (int i = 0; i < NCOLS; i++)
        if (!seen[i]) {
            lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_SYNTAX, c->fname, line,
                            "header lacks a column (expected time, host, metric, value)");
            return -1;
        }
    c->nfields = k;
    return 1;
}

static lp_status row(mctx *c, const char *p, size_t n, uint64_t line, lp_error *err)
{
    const char *fv[NCOLS];
    size_t fl[NCOLS];
    int k = g10_csv_fields(p, n, c->col, NCOLS, c->nfields, fv, fl);
    if (k != c->nfields) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "%s fields (expected %d)",
                        k < c->nfields ? "too few" : "too many", c->nfields);
        return LP_OK;
    }
    int64_t t;
    double v;
    if (!g10_parse_time(fv[C_TIME], fl[C_TIME], c->unit, &t)) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "time is not a number: '%.*s'",
                        (int)(fl[C_TIME] > 40 ? 40 : fl[C_TIME]), fv[C_TIME]);
        return LP_OK;
    }
    if (!fl[C_METRIC]) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "empty metric name");
        return LP_OK;
    }
    if (!g10_parse_double(fv[C_VALUE], fl[C_VALUE], &v)) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_FIELD, c->fname, line, "value is not a finite number: '%.*s'",
                        (int)(fl[C_VALUE] > 40 ? 40 : fl[C_VALUE]), fv[C_VALUE]);
        return LP_OK;
    }
    lp_str host, metric;
    if (lp_strtab_intern(&c->d->strs, fv[C_HOST], fl[C_HOST], &host) ||
        lp_strtab_intern(&c->d->strs, fv[C_METRIC], fl[C_METRIC], &metric))
        return nomem(err);
    lp_g10_series *s = NULL;
    lp_status st = g10_series_of(c->d, host, metric, c->file, &s, err);
    if (st)
        return st;
    if (s->n && t <= s->time[s->n - 1]) {
        lp_diags_report(c->ds, LP_SEV_ERROR, LP_RULE_ORDER, c->fname, line,
                        "sample of %s on host '%s' at %lld is not after the previous one (line %llu, at %lld): dropped",
                        lp_strtab_get(&c->d->strs, metric), lp_strtab_get(&c->d->strs, host), (long long)t,
                        (unsigned long long)s->line[s->n - 1], (long long)s->time[s->n - 1]);
        return LP_OK;
    }
    return g10_series_append(s, t, v, line, err);
}

static int header_cb(void *ctx, const char *p, size_t n, uint64_t line) { return header(ctx, p, n, line); }

static lp_status row_cb(void *ctx, const char *p, size_t n, uint64_t line, lp_error *err)
{
    return row(ctx, p, n, line, err);
}

lp_status lp_g10_read_monitor(lp_g10_data *d, lp_input *in, const lp_g10_read_opts *opts, lp_diags *ds,
                              lp_error *err)
{
    mctx c = {d, ds, lp_input_name(in), 0, {C_TIME, C_HOST, C_METRIC, C_VALUE}, NCOLS, 1};
    if (opts && opts->time_unit_ns > 0)
        c.unit = opts->time_unit_ns;
    if (lp_strtab_intern(&d->strs, c.fname, strlen(c.fname), &c.file))
        return nomem(err);
    return g10_csv_read(in, "monitoring CSV", c.fname, header_cb, row_cb, &c, err);
}
