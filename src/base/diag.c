/* diag.c: the diagnostics sink (see diag.h).
 * Invariant: count[] and the n* totals count every report, kept or not; a report that
 * cannot be stored for lack of memory is still counted. */
#include "longpole/base/diag.h"
#include "longpole/base/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const rule_names[LP_RULE_COUNT] = {
    [LP_RULE_SYNTAX] = "syntax",
    [LP_RULE_FIELD] = "field",
    [LP_RULE_END_BEFORE_START] = "end-before-start",
    [LP_RULE_OVERLAP] = "overlap",
    [LP_RULE_UNMATCHED_RECV] = "unmatched-receive",
    [LP_RULE_UNMATCHED_SEND] = "unmatched-send",
    [LP_RULE_DUP_SEND] = "duplicate-send",
    [LP_RULE_RECV_BEFORE_SEND] = "recv-before-send",
    [LP_RULE_ORDER] = "order",
    [LP_RULE_ENCODING] = "encoding",
    [LP_RULE_WORKER_ATTR] = "worker-redeclared",
    [LP_RULE_BINARY] = "binary",
    [LP_RULE_IMPORT] = "import",
    [LP_RULE_LIMIT] = "limit",
    [LP_RULE_MODEL] = "model",
    [LP_RULE_UNMATCHED] = "unmatched",
    [LP_RULE_GAP] = "gap",
};

const char *lp_rule_name(lp_rule r) { return (unsigned)r < LP_RULE_COUNT ? rule_names[r] : "?"; }

const char *lp_severity_name(lp_severity s)
{
    return s == LP_SEV_ERROR ? "error" : s == LP_SEV_WARNING ? "warning" : "note";
}

void lp_diags_init(lp_diags *ds, size_t keep)
{
    memset(ds, 0, sizeof *ds);
    ds->keep = keep;
}

void lp_diags_release(lp_diags *ds)
{
    for (size_t i = 0; i < ds->nkept; i++)
        lp_free(ds->kept[i].msg);
    lp_free(ds->kept);
    for (size_t i = 0; i < ds->nfiles; i++)
        lp_free(ds->files[i]);
    lp_free(ds->files);
    memset(ds, 0, sizeof *ds);
}

static const char *intern_file(lp_diags *ds, const char *file)
{
    if (!file)
        return NULL;
    for (size_t i = ds->nfiles; i-- > 0;)
        if (strcmp(ds->files[i], file) == 0)
            return ds->files[i];
    char **f = lp_reallocarray(ds->files, ds->nfiles + 1, sizeof *f);
    if (!f)
        return NULL;
    ds->files = f;
    char *c = lp_strndup(file, strlen(file));
    if (!c)
        return NULL;
    ds->files[ds->nfiles++] = c;
    return c;
}

static void vreport(lp_diags *ds, lp_severity sev, lp_rule rule, const char *file, uint64_t line,
                    uint64_t offset, int has_offset, const char *fmt, va_list ap) __attribute__((format(printf, 8, 0)));

static void vreport(lp_diags *ds, lp_severity sev, lp_rule rule, const char *file, uint64_t line,
                    uint64_t offset, int has_offset, const char *fmt, va_list ap)
{
    if ((unsigned)rule < LP_RULE_COUNT)
        ds->count[rule]++;
    if (sev == LP_SEV_ERROR)
        ds->nerrors++;
    else if (sev == LP_SEV_WARNING)
        ds->nwarnings++;
    else
        ds->nnotes++;
    if (ds->nkept >= ds->keep && !ds->fn)
        return;
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    lp_diag d = {sev, rule, intern_file(ds, file), line, offset, has_offset, buf};
    if (ds->fn)
        ds->fn(ds->fnctx, &d);
    if (ds->nkept >= ds->keep)
        return;
    if (ds->nkept == ds->capkept) {
        void *p = ds->kept;
        if (lp_grow(&p, &ds->capkept, ds->nkept + 1, sizeof(lp_diag)))
            return;
        ds->kept = p;
    }
    d.msg = lp_strndup(buf, strlen(buf));
    if (!d.msg)
        return;
    ds->kept[ds->nkept++] = d;
}

void lp_diags_report(lp_diags *ds, lp_severity sev, lp_rule rule, const char *file, uint64_t line,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(ds, sev, rule, file, line, 0, 0, fmt, ap);
    va_end(ap);
}

void lp_diags_report_at(lp_diags *ds, lp_severity sev, lp_rule rule, const char *file,
                        uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(ds, sev, rule, file, 0, offset, 1, fmt, ap);
    va_end(ap);
}

int lp_diag_format(char *buf, size_t n, const lp_diag *d)
{
    const char *file = d->file ? d->file : "<input>";
    if (d->line)
        return snprintf(buf, n, "%s:%llu: %s: %s [%s]", file, (unsigned long long)d->line,
                        lp_severity_name(d->sev), d->msg, lp_rule_name(d->rule));
    if (d->has_offset)
        return snprintf(buf, n, "%s: byte %llu: %s: %s [%s]", file, (unsigned long long)d->offset,
                        lp_severity_name(d->sev), d->msg, lp_rule_name(d->rule));
    return snprintf(buf, n, "%s: %s: %s [%s]", file, lp_severity_name(d->sev), d->msg,
                    lp_rule_name(d->rule));
}
