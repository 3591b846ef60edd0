/* values.c: the values of options: times, durations, counts and numbers, and the
 * comma-separated lists of durations and percentiles, and the kind of a trace output
 * by its name (cli.h). Each parser takes the
 * whole string or fails: no value is ever half-read. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int unit_scale(const char *u, double *scale)
{
    static const struct {
        const char *u;
        double s;
    } units[] = {{"", 1}, {"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"min", 60e9},
                 {"h", 3600e9}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(u, units[i].u) == 0) {
            *scale = units[i].s;
            return 0;
        }
    return -1;
}

int cli_parse_dur(const char *s, int64_t *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    /* plain integers exactly */
    long long iv = strtoll(s, &end, 10);
    if (!*end && errno == 0 && iv >= 0) {
        *out = iv;
        return 0;
    }
    double v = strtod(s, &end);
    if (end == s || errno || v < 0 || !isfinite(v))
        return -1;
    double scale;
    if (unit_scale(end, &scale))
        return -1;
    double ns = v * scale;
    if (ns > 9.2e18)
        return -1;
    *out = (int64_t)llround(ns);
    return 0;
}

int cli_parse_time(const char *s, int64_t base, int64_t *out)
{
    if (!s || !*s)
        return -1;
    int rel = s[0] == '+';
    const char *p = rel ? s + 1 : s;
    int neg = !rel && p[0] == '-';
    if (neg)
        p++;
    int64_t v;
    if (cli_parse_dur(p, &v))
        return -1;
    if (neg)
        v = -v;
    *out = rel ? base + v : v;
    return 0;
}

int cli_parse_count(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0)
        return -1;
    double mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1e3, end++;
    else if (*end == 'M')
        mul = 1e6, end++;
    else if (*end == 'G')
        mul = 1e9, end++;
    if (*end)
        return -1;
    v *= mul;
    if (v > 1.8e19 || v != floor(v))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

int cli_output_kind(const char *out, int to, lp_compression *comp)
{
    *comp = ends_with(out, ".gz") ? LP_COMP_GZIP : ends_with(out, ".zst") ? LP_COMP_ZSTD : LP_COMP_NONE;
    if (to >= 0)
        return to == 1;
    return ends_with(out, ".lptb") || ends_with(out, ".lptb.gz") || ends_with(out, ".lptb.zst");
}

/* Split "a,b,c" (at most 511 bytes) into tokens; fn(token) for each; -1 if one fails. */
static int split_list(const char *s, int (*fn)(const char *tok, void *out, size_t max, size_t *n), void *out,
                      size_t max, size_t *n)
{
    char buf[512];
    *n = 0;
    if (!s || strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (*n == max || fn(tok, out, max, n))
            return -1;
    return *n ? 0 : -1;
}

static int one_pct(const char *tok, void *out, size_t max, size_t *n)
{
    double p;
    (void)max;
    if (strcmp(tok, "all") == 0)
        p = 100;
    else if (cli_parse_double(tok[0] == 'p' || tok[0] == 'P' ? tok + 1 : tok, &p))
        return -1;
    if (!(p > 0 && p <= 100))
        return -1;
    ((double *)out)[(*n)++] = p;
    return 0;
}

int cli_parse_pcts(const char *s, double *out, size_t max, size_t *n)
{
    return split_list(s, one_pct, out, max, n);
}

static int one_dur(const char *tok, void *out, size_t max, size_t *n)
{
    int64_t d;
    (void)max;
    if (cli_parse_dur(tok, &d) || d <= 0)
        return -1;
    ((int64_t *)out)[(*n)++] = d;
    return 0;
}

int cli_parse_durs(const char *s, int64_t *out, size_t max, size_t *n)
{
    return split_list(s, one_dur, out, max, n);
}
