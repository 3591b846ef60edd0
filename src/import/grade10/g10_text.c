/* g10_text.c: line cutting and field parsing for the Grade10 text inputs (g10_text.h).
 * Lines come from codec/lines.h; this file holds the CSV loop and the field parsers. */
#include "import/grade10/g10_text.h"
#include "longpole/import/grade10.h"
#include "longpole/base/alloc.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

lp_status g10_csv_read(lp_input *in, const char *what, const char *fname, g10_csv_header_fn header,
                       g10_csv_row_fn row, void *ctx, lp_error *err)
{
    lp_lines L;
    lp_lines_init(&L, in, G10_LINE_MAX, 0);
    const char *p;
    size_t n;
    lp_status st;
    int first = 1;
    while ((st = lp_lines_next(&L, &p, &n, NULL, err)) == LP_OK) {
        g10_trim(&p, &n);
        if (!n || p[0] == '#')
            continue;
        if (first) {
            first = 0;
            int h = header(ctx, p, n, L.line);
            if (h < 0) {
                st = lp_error_set(err, LP_ERR_FORMAT, "line %llu: not a %s header", (unsigned long long)L.line,
                                  what);
                break;
            }
            if (h)
                continue;
        }
        if ((st = row(ctx, p, n, L.line, err)))
            break;
    }
    lp_lines_release(&L);
    if (st == LP_END)
        return LP_OK;
    return lp_error_push(err, "reading %s", fname);
}

int g10_csv_fields(const char *p, size_t n, const int *col, int ncol, int maxf, const char **fv, size_t *fl)
{
    const char *f;
    size_t fn;
    int k = 0;
    while (g10_next_field(&p, &n, ',', &f, &fn)) {
        if (k >= maxf)
            return maxf + 1;
        g10_trim(&f, &fn);
        for (int i = 0; i < ncol; i++)
            if (col[i] == k)
                fv[i] = f, fl[i] = fn;
        k++;
    }
    return k;
}

void g10_trim(const char **p, size_t *n)
{
    const char *s = *p;
    size_t k = *n;
    while (k && (*s == ' ' || *s == '\t')) {
        s++;
        k--;
    }
    while (k && (s[k - 1] == ' ' || s[k - 1] == '\t'))
        k--;
    *p = s;
    *n = k;
}

int g10_parse_double(const char *s, size_t n, double *out)
{
    char buf[64];
    if (!n || n >= sizeof buf)
        return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    double v = strtod(buf, &end);
    if (end != buf + n || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

int g10_parse_time(const char *s, size_t n, int64_t unit, int64_t *out)
{
    const char *dot = memchr(s, '.', n);
    size_t ni = dot ? (size_t)(dot - s) : n;
    int neg = ni && s[0] == '-';
    int64_t ip = 0;
    if (ni == (size_t)neg) {
        if (!dot)
            return 0;
    } else if (!lp_parse_i64(s, ni, &ip)) {
        return 0;
    }
    int64_t v;
    if (__builtin_mul_overflow(ip, unit, &v))
        return 0;
    if (dot) {
        const char *f = dot + 1;
        size_t nf = n - ni - 1;
        if (!nf || nf > 18)
            return 0;
        int64_t frac = 0, den = 1;
        for (size_t i = 0; i < nf; i++) {
            unsigned d = (unsigned char)f[i] - '0';
            if (d > 9)
                return 0;
            frac = frac * 10 + d;
            den *= 10;
        }
        /* frac / den * unit, rounded: unit <= 1e9 and frac < den <= 1e18 fit in 128 bits */
        __int128 q = ((__int128)frac * unit * 2 + den) / ((__int128)den * 2);
        int64_t fv = (int64_t)q;
        if (neg ? __builtin_sub_overflow(v, fv, &v) : __builtin_add_overflow(v, fv, &v))
            return 0;
    }
    *out = v;
    return 1;
}

int g10_next_field(const char **p, size_t *n, char sep, const char **f, size_t *fn)
{
    if (!*p)
        return 0;
    const char *s = *p;
    const char *e = memchr(s, sep, *n);
    if (e) {
        *f = s;
        *fn = (size_t)(e - s);
        *n -= *fn + 1;
        *p = e + 1;
    } else {
        *f = s;
        *fn = *n;
        *p = NULL;
        *n = 0;
    }
    return 1;
}

int64_t g10_unit_suffix(const char *name, size_t n)
{
    static const struct {
        const char *suf;
        int64_t ns;
    } sfx[] = {{"_ns", 1}, {"_us", 1000}, {"_ms", 1000000}, {"_s", 1000000000}};
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        size_t k = strlen(sfx[i].suf);
        if (n > k && strncasecmp(name + n - k, sfx[i].suf, k) == 0)
            return sfx[i].ns;
    }
    return 0;
}

int lp_g10_parse_duration(const char *s, size_t n, int64_t *ns)
{
    static const struct {
        const char *u;
        int64_t ns;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
    g10_trim(&s, &n);
    size_t k = n;
    while (k && ((s[k - 1] >= 'a' && s[k - 1] <= 'z')))
        k--;
    int64_t unit = 1;
    if (k < n) {
        unit = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strlen(units[i].u) == n - k && memcmp(s + k, units[i].u, n - k) == 0)
                unit = units[i].ns;
        if (!unit)
            return 0;
    }
    return k && g10_parse_time(s, k, unit, ns);
}
