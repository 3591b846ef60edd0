/* common.c: helpers shared by the commands (see cli.h). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cli_exit_for(lp_status st)
{
    switch (st) {
    case LP_OK:
    case LP_END:
    case LP_AGAIN: return LP_EXIT_OK;
    case LP_ERR_NOMEM: return LP_EXIT_NOMEM;
    case LP_ERR_IO: return LP_EXIT_IO;
    case LP_ERR_FORMAT:
    case LP_ERR_CHECKSUM:
    case LP_ERR_UNSUPPORTED: return LP_EXIT_FORMAT;
    case LP_ERR_DATA: return LP_EXIT_DATA;
    case LP_ERR_ARG: return LP_EXIT_USAGE;
    case LP_ERR_LIMIT: return LP_EXIT_LIMIT;
    }
    return LP_EXIT_INTERNAL;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "longpole %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see `longpole help %s`)\n", cmd);
    va_end(ap);
    return LP_EXIT_USAGE;
}

int cli_fail(const char *cmd, const lp_error *err)
{
    cli_progress_done();
    fprintf(stderr, "longpole %s: %s\n", cmd, err->msg[0] ? err->msg : lp_status_str(err->status));
    return cli_exit_for(err->status);
}

static const char *self_argv0 = "longpole";

void cli_self_init(const char *argv0)
{
    if (argv0 && *argv0)
        self_argv0 = argv0;
}

const char *cli_self_path(void)
{
    return access("/proc/self/exe", X_OK) == 0 ? "/proc/self/exe" : self_argv0;
}

/* ---- options ---------------------------------------------------------------------- */

int cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        *val = NULL;
        return 1;
    }
    *val = argv[++*i];
    return 1;
}

int cli_flag(char **argv, int i, const char *name) { return strcmp(argv[i], name) == 0; }

int cli_load_option(const char *cmd, int argc, char **argv, int *i, cli_load *lo)
{
    const char *v;
    if (cli_flag(argv, *i, "--strict")) {
        lo->strict = 1;
        return 1;
    }
    if (cli_flag(argv, *i, "-q") || cli_flag(argv, *i, "--quiet")) {
        lo->quiet = 1;
        return 1;
    }
    if (cli_opt(argc, argv, i, "--format", &v)) {
        if (!v)
            return cli_usage(cmd, "--format needs a value"), -1;
        lo->format = v;
        return 1;
    }
    if (cli_opt(argc, argv, i, "--max-errors", &v)) {
        uint64_t n;
        if (!v || cli_parse_count(v, &n))
            return cli_usage(cmd, "--max-errors needs a number"), -1;
        lo->max_diags = (size_t)n;
        return 1;
    }
    return 0;
}

/* ---- numbers and times --------------------------------------------------------------- */

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

/* ---- progress ------------------------------------------------------------------------ */

static int progress_on = -1; /* -1: not decided */
static int progress_shown;
static struct timespec progress_last;

int cli_progress_enabled(void)
{
    if (progress_on < 0)
        progress_on = isatty(2) && !getenv("LONGPOLE_NO_PROGRESS");
    return progress_on;
}

void cli_progress_disable(void) { progress_on = 0; }

int cli_progress(void *ctx, const char *what, uint64_t done, uint64_t total)
{
    (void)ctx;
    if (!cli_progress_enabled())
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double dt = (double)(now.tv_sec - progress_last.tv_sec) + (double)(now.tv_nsec - progress_last.tv_nsec) / 1e9;
    if (progress_shown && dt < 0.1 && done < total)
        return 0;
    progress_last = now;
    progress_shown = 1;
    /* loading reports bytes; every other phase counts items (requests, windows, rows) */
    int bytes = strcmp(what, "loading") == 0 || strcmp(what, "reading") == 0;
    if (!bytes) {
        if (total) {
            int pct = done >= total ? 100 : (int)((double)done * 100.0 / (double)total);
            int bar = pct * 30 / 100;
            fprintf(stderr, "\r%-10s [%.*s%*s] %3d%%  %llu/%llu ", what, bar, "==============================",
                    30 - bar, "", pct, (unsigned long long)done, (unsigned long long)total);
        } else if (done) {
            fprintf(stderr, "\r%-10s %llu ", what, (unsigned long long)done);
        } else {
            fprintf(stderr, "\r%-10s ... ", what);
        }
        return 0;
    }
    if (total) {
        int pct = (int)((double)done * 100.0 / (double)total);
        if (pct > 100)
            pct = 100;
        int bar = pct * 30 / 100;
        fprintf(stderr, "\r%-10s [%.*s%*s] %3d%%  %.1f/%.1f MB ", what, bar, "==============================",
                30 - bar, "", pct, (double)done / 1e6, (double)total / 1e6);
    } else {
        fprintf(stderr, "\r%-10s %.1f MB ", what, (double)done / 1e6);
    }
    return 0;
}

void cli_progress_done(void)
{
    if (progress_shown) {
        fprintf(stderr, "\r\033[K");
        progress_shown = 0;
    }
}

/* ---- loading ------------------------------------------------------------------------ */

void cli_print_diags(const lp_diags *ds, size_t max)
{
    char buf[1024];
    size_t shown = 0;
    for (size_t i = 0; i < ds->nkept && shown < max; i++, shown++) {
        lp_diag_format(buf, sizeof buf, &ds->kept[i]);
        fprintf(stderr, "%s\n", buf);
    }
    uint64_t total = ds->nerrors + ds->nwarnings + ds->nnotes;
    if (total > shown)
        fprintf(stderr, "... and %llu more\n", (unsigned long long)(total - shown));
    if (total) {
        fprintf(stderr, "input: %llu error%s, %llu warning%s (", (unsigned long long)ds->nerrors,
                ds->nerrors == 1 ? "" : "s", (unsigned long long)ds->nwarnings, ds->nwarnings == 1 ? "" : "s");
        int first = 1;
        for (int r = 0; r < LP_RULE_COUNT; r++)
            if (ds->count[r]) {
                fprintf(stderr, "%s%s: %llu", first ? "" : ", ", lp_rule_name((lp_rule)r),
                        (unsigned long long)ds->count[r]);
                first = 0;
            }
        fprintf(stderr, ")\n");
    }
}

int cli_load_trace(const cli_load *o, char **paths, int npaths, lp_trace **out, int *data_errors)
{
    lp_diags ds;
    size_t max = o->max_diags ? o->max_diags : 20;
    lp_diags_init(&ds, o->quiet ? 0 : max);
    lp_load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.format = o->format;
    if (!o->no_progress && cli_progress_enabled()) {
        lo.progress = cli_progress;
    }
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_trace_load((const char *const *)paths, (size_t)npaths, &lo, &ds, out, &err);
    cli_progress_done();
    cli_print_diags(&ds, o->quiet ? 0 : max);
    *data_errors = ds.nerrors > INT_MAX ? INT_MAX : (int)ds.nerrors; /* a count: callers test it, export stores it */
    lp_diags_release(&ds);
    if (st) {
        fprintf(stderr, "longpole: %s\n", err.msg[0] ? err.msg : lp_status_str(st));
        return cli_exit_for(st);
    }
    if (*data_errors && o->strict) {
        fprintf(stderr, "longpole: the input has errors and --strict was given; stopping\n");
        lp_trace_free(*out);
        *out = NULL;
        return LP_EXIT_DATA;
    }
    return 0;
}
