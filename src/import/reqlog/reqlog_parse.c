/* reqlog_parse.c: one shard of a request log, lines to records (see reqlog_int.h and
 * docs/formats/request-log.md).
 *
 * A plain file's shard is mapped (with room for its last line); a compressed file or
 * stdin is one shard read through lp_input. A shard processes exactly the lines that
 * start inside its byte range, so shards partition the file's lines and line numbers
 * are fixed up by prefix sums at the merge.
 *
 * The hot path (csv_fast) is a mapped CSV/TSV line whose fields need no unquoting or
 * trimming: one scan, 16 bytes at a time, finds the line's end and its delimiters, and
 * the fields go to the record as pointers into the mapping. Any other line goes
 * through the general loop (rd_line, then rl_csv_split_plain or rl_csv_split), which
 * gives the same records, diagnostics and line numbers for the lines both accept
 * (tests/unit/import/test_reqlog_csv.c). Names (hosts, tasks, events) and the request
 * id usually repeat: caches keyed by length and first and last 8 bytes skip the
 * string table's hash; <task, event> pairs have a small cache before the hash table.
 */
#include "import/reqlog/reqlog_int.h"
#include "longpole/codec/json.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- names and aliases ----------------------------------------------------------- */

const char *const rl_role_names[LP_RL_NROLES] = {"request", "host", "time", "event", "task", "seq"};
static const char *const aliases[LP_RL_NROLES][8] = {
    {"request", "request_id", "req", NULL},
    {"host", "hostname", NULL},
    {"time", "timestamp", "ts", "time_ns", "time_us", "time_ms", "time_s", NULL},
    {"event", NULL},
    {"task", NULL},
    {"seq", "sequence", NULL},
};

static int is_number(const char *s)
{
    if (!s || !*s)
        return 0;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

static int64_t suffix_scale(const char *name, size_t n)
{
    struct {
        const char *suf;
        int64_t scale;
    } sfx[] = {{"_ns", 1}, {"_us", 1000}, {"_ms", 1000000}, {"_s", 1000000000}};
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        size_t k = strlen(sfx[i].suf);
        if (n > k && strncasecmp(name + n - k, sfx[i].suf, k) == 0)
            return sfx[i].scale;
    }
    return 0;
}

static int64_t unit_scale(lp_reqlog_unit u)
{
    switch (u) {
    case LP_RL_UNIT_US: return 1000;
    case LP_RL_UNIT_MS: return 1000000;
    case LP_RL_UNIT_S: return 1000000000;
    default: return 1;
    }
}

void rl_host_from_path(const char *path, char *out, size_t cap)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strcspn(b, ".");
    if (n == 0)
        n = strlen(b);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}

/* ---- CSV fields ------------------------------------------------------------------- */

/* Split a line into fields: up to maxf are stored; returns the number of fields in the
 * line, or -1 on a bad quote. Quoted fields with doubled quotes are unescaped into
 * scratch (cap bytes). Spaces around unquoted fields are trimmed. */
int rl_csv_split(const char *s, size_t n, char delim, const char **f, size_t *fl, int maxf, char *scratch,
                 size_t cap)
{
    int k = 0;
    size_t i = 0, used = 0;
    for (;;) {
        while (i < n && s[i] == ' ' && delim != ' ')
            i++;
        const char *fs;
        size_t fn;
        if (i < n && s[i] == '"') {
            size_t j = i + 1;
            int esc = 0;
            for (;;) {
                const char *q = memchr(s + j, '"', n - j);
                if (!q)
                    return -1;
                j = (size_t)(q - s);
                if (j + 1 < n && s[j + 1] == '"') {
                    esc = 1;
                    j += 2;
                    continue;
                }
                break;
            }
            fs = s + i + 1;
            fn = j - i - 1;
            if (esc) {
                if (used + fn > cap)
                    return -1;
                char *o = scratch + used;
                size_t m = 0;
                for (size_t x = 0; x < fn; x++) {
                    o[m++] = fs[x];
                    if (fs[x] == '"')
                        x++;
                }
                fs = o;
                fn = m;
                used += m;
            }
            i = j + 1;
            while (i < n && s[i] == ' ' && delim != ' ')
                i++;
            if (i < n && s[i] != delim)
                return -1;
        } else {
            const char *q = memchr(s + i, delim, n - i);
            size_t e = q ? (size_t)(q - s) : n;
            fs = s + i;
            fn = e - i;
            while (fn && fs[fn - 1] == ' ' && delim != ' ')
                fn--;
            i = e;
        }
        if (k < maxf) {
            f[k] = fs;
            fl[k] = fn;
        }
        k++;
        if (i >= n)
            return k;
        i++; /* the delimiter */
        if (i == n) {
            if (k < maxf) {
                f[k] = s + n;
                fl[k] = 0;
            }
            return k + 1;
        }
    }
}

/* The fast split (the common line): fields are the bytes between delimiters, found 16
 * bytes at a time (SSE2) or with memchr. A field that begins with '"' or ' ' or ends
 * with ' ' is one rl_csv_split would unquote or trim: then -2, and the caller splits
 * the line with rl_csv_split; otherwise both give the same fields and count. */
#define RL_FIELD_OR(end, plain_fails)                                                                              \
    do {                                                                                                           \
        size_t e_ = (end);                                                                                         \
        if (e_ > a && (s[a] == '"' || s[a] == ' ' || s[e_ - 1] == ' '))                                            \
            plain_fails;                                                                                           \
        if (k < maxf) {                                                                                            \
            f[k] = s + a;                                                                                          \
            fl[k] = e_ - a;                                                                                        \
        }                                                                                                          \
        k++;                                                                                                       \
        a = e_ + 1;                                                                                                \
    } while (0)
#define RL_FIELD(end) RL_FIELD_OR(end, return -2)

int rl_csv_split_plain(const char *s, size_t n, char delim, const char **f, size_t *fl, int maxf)
{
    int k = 0;
    size_t a = 0; /* where the current field begins */
#if defined(__SSE2__)
    const __m128i D = _mm_set1_epi8(delim);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        unsigned m =
            (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s + i)), D));
        for (; m; m &= m - 1)
            RL_FIELD(i + (size_t)__builtin_ctz(m));
    }
    if (i < n && n >= 16) {
        /* the last 16 bytes of the line, without those already seen */
        unsigned m = (unsigned)_mm_movemask_epi8(
                         _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s + n - 16)), D)) >>
                     (16 - (n - i));
        for (; m; m &= m - 1)
            RL_FIELD(i + (size_t)__builtin_ctz(m));
    } else {
        for (; i < n; i++)
            if (s[i] == delim)
                RL_FIELD(i);
    }
#else
    for (const char *q; (q = memchr(s + a, delim, n - a)) != NULL;)
        RL_FIELD((size_t)(q - s));
#endif
    RL_FIELD(n);
    return k;
}
#undef RL_FIELD

/* ---- times ------------------------------------------------------------------------ */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char *s, size_t n, size_t at, size_t k, unsigned *v)
{
    if (at + k > n)
        return -1;
    unsigned x = 0;
    for (size_t i = 0; i < k; i++) {
        unsigned d = (unsigned)(s[at + i] - '0');
        if (d > 9)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

static int parse_iso(const char *s, size_t n, int64_t *out)
{
    unsigned Y, M, D, h, m, sec;
    if (digits(s, n, 0, 4, &Y) || n < 19 || s[4] != '-' || digits(s, n, 5, 2, &M) || s[7] != '-' ||
        digits(s, n, 8, 2, &D) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || digits(s, n, 11, 2, &h) ||
        s[13] != ':' || digits(s, n, 14, 2, &m) || s[16] != ':' || digits(s, n, 17, 2, &sec))
        return -1;
    if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
        return -1;
    size_t i = 19;
    int64_t frac = 0;
    if (i < n && (s[i] == '.' || s[i] == ',')) {
        i++;
        size_t k = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (k < 9) {
                frac = frac * 10 + (s[i] - '0');
                k++;
            }
            i++;
        }
        if (k == 0)
            return -1;
        while (k < 9) {
            frac *= 10;
            k++;
        }
    }
    int64_t off = 0;
    if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        unsigned oh, om;
        int neg = s[i] == '-';
        if (digits(s, n, i + 1, 2, &oh))
            return -1;
        size_t j = i + 3;
        if (j < n && s[j] == ':')
            j++;
        if (digits(s, n, j, 2, &om) || oh > 23 || om > 59)
            return -1;
        off = ((int64_t)oh * 60 + om) * 60;
        if (neg)
            off = -off;
        i = j + 2;
    }
    if (i != n)
        return -1;
    int64_t days = days_from_civil(Y, M, D);
    int64_t secs = days * 86400 + (int64_t)h * 3600 + m * 60 + sec - off;
    if (secs > INT64_MAX / 1000000000 - 1 || secs < INT64_MIN / 1000000000 + 1)
        return -1;
    *out = secs * 1000000000 + frac;
    return 0;
}

int rl_parse_time(const char *s, size_t n, int64_t scale, int iso, int64_t *out, const char **why)
{
    if (!iso && n && n <= 18) {
        /* the common case: a plain non-negative integer, eight digits at a time (the
         * SWAR conversion of Lemire, "Parsing series of integers with SIMD") */
        uint64_t v = 0;
        size_t i = 0;
        while (n - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if ((((w & 0xF0F0F0F0F0F0F0F0ULL) | (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4))) !=
                0x3333333333333333ULL)
                break;
            w = (w & 0x0F0F0F0F0F0F0F0FULL) * 2561 >> 8;
            w = (w & 0x00FF00FF00FF00FFULL) * 6553601 >> 16;
            w = (w & 0x0000FFFF0000FFFFULL) * 42949672960001ULL >> 32;
            v = v * 100000000ULL + (uint32_t)w;
            i += 8;
        }
        for (; i < n; i++) {
            unsigned d = (unsigned)((unsigned char)s[i] - '0');
            if (d > 9)
                break;
            v = v * 10 + d;
        }
        uint64_t ns; /* v * scale without a division (v <= INT64_MAX / scale, as below) */
        if (i == n && !__builtin_mul_overflow(v, (uint64_t)scale, &ns) && ns <= (uint64_t)INT64_MAX) {
            *out = (int64_t)ns;
            return 0;
        }
    }
    if (iso) {
        if (parse_iso(s, n, out)) {
            *why = "is not an RFC 3339 timestamp";
            return -1;
        }
        return 0;
    }
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    uint64_t ip = 0;
    size_t nd = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        unsigned d = (unsigned)(s[i] - '0');
        if (ip > (UINT64_MAX - d) / 10) {
            *why = "is out of range";
            return -1;
        }
        ip = ip * 10 + d;
        i++;
        nd++;
    }
    uint64_t frac = 0, fdiv = 1;
    size_t nf = 0;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (fdiv < 1000000000ULL) {
                frac = frac * 10 + (uint64_t)(s[i] - '0');
                fdiv *= 10;
            }
            i++;
            nf++;
        }
    }
    if (nd + nf == 0) {
        *why = "is not a number";
        return -1;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        /* exponent notation: through a double (JSON writers produce it for big numbers) */
        char tmp[64];
        if (n >= sizeof tmp) {
            *why = "is not a number";
            return -1;
        }
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        char *e;
        errno = 0;
        double v = strtod(tmp, &e);
        if (*e || errno || !(v * (double)scale < 9.2e18 && v * (double)scale > -9.2e18)) {
            *why = *e ? "is not a number" : "is out of range";
            return -1;
        }
        double ns = v * (double)scale;
        *out = (int64_t)(ns < 0 ? ns - 0.5 : ns + 0.5);
        return 0;
    }
    if (i != n) {
        *why = "is not a number";
        return -1;
    }
    if (ip > (uint64_t)INT64_MAX / (uint64_t)scale) {
        *why = "is out of range";
        return -1;
    }
    uint64_t v = ip * (uint64_t)scale + frac * (uint64_t)scale / fdiv;
    if (v > (uint64_t)INT64_MAX) {
        *why = "is out of range";
        return -1;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

/* ---- layout ----------------------------------------------------------------------- */

static int name_eq(const char *a, size_t an, const char *b)
{
    size_t bn = strlen(b);
    return an == bn && strncasecmp(a, b, an) == 0;
}

int rl_role_alias(int role, const char *s, size_t n)
{
    for (int k = 0; aliases[role][k]; k++)
        if (name_eq(s, n, aliases[role][k]))
            return 1;
    return 0;
}

void rl_layout_release(rl_layout *L) { (void)L; }

/* The layout carries a failure as an error status returned to the caller. */
static lp_status layout_fail(lp_error *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static lp_status layout_fail(lp_error *err, const char *path, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return lp_error_set(err, LP_ERR_FORMAT, "%s: %s", path, buf);
}

/* JSON lines: the keys each role and attribute may have (the option's name, else the
 * role's usual names), with the time scale a key's suffix implies. */
static lp_status layout_jsonl(rl_layout *L, const lp_reqlog_opts *o, const char *path, lp_error *err)
{
    for (int r = 0; r < LP_RL_NROLES; r++) {
        if (r == LP_RL_HOST && o->host_from_name && !o->col[r])
            continue;
        if (o->col[r]) {
            if (is_number(o->col[r]))
                return layout_fail(err, path, "JSON lines need key names, not column numbers ('%s=%s')",
                                   rl_role_names[r], o->col[r]);
            L->key[L->nkeys] = o->col[r];
            L->keylen[L->nkeys] = strlen(o->col[r]);
            L->keyrole[L->nkeys] = r;
            L->keyscale[L->nkeys] = o->unit == LP_RL_UNIT_AUTO ? suffix_scale(o->col[r], strlen(o->col[r])) : 0;
            L->nkeys++;
        } else {
            for (int k = 0; aliases[r][k]; k++) {
                L->key[L->nkeys] = aliases[r][k];
                L->keylen[L->nkeys] = strlen(aliases[r][k]);
                L->keyrole[L->nkeys] = r;
                L->keyscale[L->nkeys] =
                    o->unit == LP_RL_UNIT_AUTO ? suffix_scale(aliases[r][k], strlen(aliases[r][k])) : 0;
                L->nkeys++;
            }
        }
        L->have[r] = 1;
    }
    for (unsigned a = 0; a < o->nattr; a++) {
        if (is_number(o->attr_col[a]))
            return layout_fail(err, path, "JSON lines need key names, not column numbers ('attr.%s=%s')",
                               o->attr_name[a], o->attr_col[a]);
        L->key[L->nkeys] = o->attr_col[a];
        L->keylen[L->nkeys] = strlen(o->attr_col[a]);
        L->keyrole[L->nkeys] = LP_RL_NROLES + (int)a;
        L->keyscale[L->nkeys] = 0;
        L->nkeys++;
    }
    /* seq is optional: present only if mapped explicitly */
    L->have[LP_RL_SEQ] = o->col[LP_RL_SEQ] != NULL;
    if (!L->have[LP_RL_SEQ]) {
        int k = 0;
        for (int x = 0; x < L->nkeys; x++)
            if (L->keyrole[x] != LP_RL_SEQ)
                L->key[k] = L->key[x], L->keylen[k] = L->keylen[x], L->keyrole[k] = L->keyrole[x],
                L->keyscale[k] = L->keyscale[x], k++;
        L->nkeys = k;
    }
    return LP_OK;
}

/* CSV/TSV: the column of each role, by number or by name in the header (f, fl: its nf
 * fields; none without a header). */
static lp_status role_columns(rl_layout *L, const lp_reqlog_opts *o, const char *path, const int *need,
                              const char **f, const size_t *fl, int nf, lp_error *err)
{
    lp_status st = LP_OK;
    for (int r = 0; r < LP_RL_NROLES && st == LP_OK; r++) {
        if (r == LP_RL_HOST && o->host_from_name && !o->col[r])
            continue;
        const char *want = o->col[r];
        if (want && is_number(want)) {
            long c = strtol(want, NULL, 10);
            if (c < 1 || c > RL_MAXCOLS)
                st = layout_fail(err, path, "column %s of '%s' is out of range (1..%d)", want, rl_role_names[r],
                                 RL_MAXCOLS);
            else
                L->col[r] = (int)c - 1;
            continue;
        }
        if (!L->header) {
            if (want)
                st = layout_fail(err, path, "column '%s' for '%s' needs a header line", want, rl_role_names[r]);
            else if (need[r])
                st = layout_fail(err, path, "no header line: give '%s' as a column number in --columns",
                                 rl_role_names[r]);
            continue;
        }
        for (int c = 0; c < nf && L->col[r] < 0; c++) {
            if (want) {
                if (name_eq(f[c], fl[c], want))
                    L->col[r] = c;
            } else if (rl_role_alias(r, f[c], fl[c])) {
                L->col[r] = c;
            }
        }
        if (L->col[r] < 0 && (need[r] || want))
            st = layout_fail(err, path, "the header has no column '%s'%s", want ? want : rl_role_names[r],
                             want ? "" : " (or one of its usual names)");
        if (r == LP_RL_TIME && L->col[r] >= 0 && o->unit == LP_RL_UNIT_AUTO) {
            int64_t sc = suffix_scale(f[L->col[r]], fl[L->col[r]]);
            if (sc)
                L->scale = sc;
        }
    }
    return st;
}

/* CSV/TSV: the column of each attribute (--columns attr.NAME=COLUMN). */
static lp_status attr_columns(rl_layout *L, const lp_reqlog_opts *o, const char *path, const char **f,
                              const size_t *fl, int nf, lp_error *err)
{
    lp_status st = LP_OK;
    for (unsigned a = 0; a < o->nattr && st == LP_OK; a++) {
        const char *want = o->attr_col[a];
        if (is_number(want)) {
            long c = strtol(want, NULL, 10);
            if (c < 1 || c > RL_MAXCOLS)
                st = layout_fail(err, path, "column %s of 'attr.%s' is out of range", want, o->attr_name[a]);
            else
                L->acol[a] = (int)c - 1;
            continue;
        }
        if (!L->header) {
            st = layout_fail(err, path, "column '%s' needs a header line", want);
            continue;
        }
        for (int c = 0; c < nf; c++)
            if (name_eq(f[c], fl[c], want)) {
                L->acol[a] = c;
                break;
            }
        if (L->acol[a] < 0)
            st = layout_fail(err, path, "the header has no column '%s' (attribute %s)", want, o->attr_name[a]);
    }
    return st;
}

lp_status rl_layout_detect(rl_layout *L, const char *line, size_t n, const char *path, const lp_reqlog_opts *o,
                           lp_error *err)
{
    char host[256];
    memcpy(host, L->host, sizeof host);
    uint64_t hoff = L->header_off;
    memset(L, 0, sizeof *L);
    memcpy(L->host, host, sizeof host);
    L->header_off = hoff;
    for (int r = 0; r < LP_RL_NROLES; r++)
        L->col[r] = -1;
    for (int a = 0; a < LP_REQLOG_MAXATTR; a++)
        L->acol[a] = -1;
    L->scale = unit_scale(o->unit);
    L->iso = o->unit == LP_RL_UNIT_ISO;
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    L->fmt = o->format;
    if (L->fmt == LP_RL_AUTO)
        L->fmt = (i < n && line[i] == '{') ? LP_RL_JSONL : memchr(line, '\t', n) ? LP_RL_TSV : LP_RL_CSV;

    int need[LP_RL_NROLES] = {1, !o->host_from_name, 1, 1, 1, 0};
    if (L->fmt == LP_RL_JSONL)
        return layout_jsonl(L, o, path, err);

    L->delim = o->delimiter ? o->delimiter : L->fmt == LP_RL_TSV ? '\t' : ',';
    int allnum = 1;
    for (int r = 0; r < LP_RL_NROLES; r++)
        if ((need[r] || o->col[r]) && !is_number(o->col[r]))
            allnum = 0;
    for (unsigned a = 0; a < o->nattr; a++)
        if (!is_number(o->attr_col[a]))
            allnum = 0;
    L->header = o->header >= 0 ? o->header : !allnum;

    const char **f = NULL;
    size_t *fl = NULL;
    char *scratch = NULL;
    int nf = 0;
    if (L->header) {
        f = lp_malloc(RL_MAXCOLS * sizeof *f);
        fl = lp_malloc(RL_MAXCOLS * sizeof *fl);
        scratch = lp_malloc(n + 1);
        if (!f || !fl || !scratch) {
            lp_free(f), lp_free(fl), lp_free(scratch);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        }
        nf = rl_csv_split(line, n, L->delim, f, fl, RL_MAXCOLS, scratch, n);
        if (nf < 0) {
            lp_free(f), lp_free(fl), lp_free(scratch);
            return layout_fail(err, path, "the header line has a bad quote");
        }
        if (nf > RL_MAXCOLS)
            nf = RL_MAXCOLS;
    }
    lp_status st = role_columns(L, o, path, need, f, fl, nf, err);
    if (st == LP_OK)
        st = attr_columns(L, o, path, f, fl, nf, err);
    lp_free(f), lp_free(fl), lp_free(scratch);
    if (st)
        return st;
    L->ncols = 0;
    for (int r = 0; r < LP_RL_NROLES; r++) {
        if (L->col[r] + 1 > L->ncols)
            L->ncols = L->col[r] + 1;
        L->have[r] = L->col[r] >= 0;
    }
    for (unsigned a = 0; a < o->nattr; a++)
        if (L->acol[a] + 1 > L->ncols)
            L->ncols = L->acol[a] + 1;
    return LP_OK;
}

/* ---- shard state ------------------------------------------------------------------ */

static int push_skip(rl_shard *sh, uint64_t line)
{
    if (sh->nskip == sh->capskip) {
        void *p = sh->skip;
        size_t cap = sh->capskip;
        if (lp_grow(&p, &cap, sh->nskip + 1, sizeof *sh->skip))
            return -1;
        sh->skip = p;
        sh->capskip = cap;
    }
    sh->skip[sh->nskip++] = line;
    return 0;
}

static void sdiag(rl_shard *sh, uint64_t line, lp_severity sev, lp_rule rule, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void sdiag(rl_shard *sh, uint64_t line, lp_severity sev, lp_rule rule, const char *fmt, ...)
{
    if (sh->ndiags == sh->capdiags) {
        void *p = sh->diags;
        size_t cap = sh->capdiags;
        if (lp_grow(&p, &cap, sh->ndiags + 1, sizeof *sh->diags))
            return;
        sh->diags = p;
        sh->capdiags = cap;
    }
    char buf[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rl_diag *d = &sh->diags[sh->ndiags];
    d->msg = lp_strndup(buf, strlen(buf));
    d->line = line;
    d->sev = (uint8_t)sev;
    d->rule = (uint8_t)rule;
    sh->ndiags++; /* a NULL msg (no memory) is still counted */
}

/* Quote a field for a message: at most 40 bytes, non-printables as '?'. */
static const char *q40(const char *s, size_t n, char *buf)
{
    size_t k = n > 40 ? 40 : n;
    for (size_t i = 0; i < k; i++)
        buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (n > 40) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k] = '\0';
    return buf;
}

/* Names repeat on every line (a few hosts, tasks, events): a direct-mapped cache keyed
 * by a cheap hash of the bytes skips the table's hash and probe on a hit. */
static inline uint64_t load8(const char *s, size_t n)
{
    uint64_t v = 0;
    if (n >= 8) {
        memcpy(&v, s, 8);
        return v;
    }
    for (size_t i = 0; i < n; i++) /* no variable-length copy: it stalls the load that follows */
        v |= (uint64_t)(unsigned char)s[i] << (8 * i);
    return v;
}

/* load8 of a short name: one 8-byte load, masked, when the bytes after it are readable
 * (the same value as load8 on a little-endian machine). */
static inline uint64_t load8s(const rl_shard *sh, const char *s, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n < 8 && sh->rdend && sh->rdend - s >= 8) {
        uint64_t v;
        memcpy(&v, s, 8);
        return v & ((1ULL << (8 * n)) - 1);
    }
#else
    (void)sh;
#endif
    return load8(s, n);
}

static int intern_name(rl_shard *sh, const char *s, size_t n, lp_str *out)
{
    uint64_t v0 = load8s(sh, s, n), v1 = n > 8 ? load8(s + n - 8, 8) : 0;
    uint64_t h = (v0 * 0x9E3779B97F4A7C15ULL) ^ (v1 * 0xC2B2AE3D27D4EB4FULL) ^ n;
    rl_ncache *c = &sh->ncache[h >> (64 - RL_NCACHE_BITS)];
    if (c->n == n && c->v0 == v0 && c->v1 == v1 &&
        (n <= 16 || memcmp(lp_strtab_get(&sh->names, c->id), s, n) == 0)) {
        *out = c->id;
        return 0;
    }
    if (lp_strtab_intern(&sh->names, s, n, out))
        return -1;
    *c = (rl_ncache){v0, v1, (uint32_t)n, *out};
    return 0;
}

static int intern_req(rl_shard *sh, const char *s, size_t n, uint32_t *id)
{
    uint64_t v0 = load8s(sh, s, n), v1 = n > 8 ? load8(s + n - 8, 8) : 0;
    if (sh->lastreqn == n && sh->lastreq0 == v0 && sh->lastreq1 == v1 &&
        (n <= 16 || memcmp(sh->lastreq, s, n) == 0)) {
        *id = sh->lastreqid;
        return 0;
    }
    lp_str x;
    if (lp_strtab_intern(&sh->reqs, s, n, &x))
        return -1;
    *id = x;
    sh->lastreq = lp_strtab_get(&sh->reqs, x);
    sh->lastreqn = n;
    sh->lastreq0 = v0;
    sh->lastreq1 = v1;
    sh->lastreqid = x;
    return 0;
}

static int intern_point(rl_shard *sh, uint32_t task, uint32_t ev, uint32_t *out)
{
    uint64_t key = (uint64_t)task << 32 | ev;
    uint32_t ci = (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - RL_PCACHE_BITS));
    if (sh->pc_pt[ci] && sh->pc_key[ci] == key) {
        *out = sh->pc_pt[ci] - 1;
        return 0;
    }
    int added;
    uint64_t p = lp_hmap_get_or_put(&sh->ptmap, key, sh->npts, &added);
    if (p == LP_HMAP_EMPTY)
        return -1;
    *out = (uint32_t)p;
    if (added) {
        if (sh->npts == sh->cappts) {
            size_t cap = sh->cappts;
            void *a = sh->pt_task, *b = sh->pt_event;
            size_t cap2 = cap;
            if (lp_grow(&a, &cap, sh->npts + 1, sizeof(uint32_t)))
                return -1;
            sh->pt_task = a;
            if (lp_grow(&b, &cap2, sh->npts + 1, sizeof(uint32_t)))
                return -1;
            sh->pt_event = b;
            sh->cappts = (uint32_t)(cap < cap2 ? cap : cap2);
        }
        sh->pt_task[sh->npts] = task;
        sh->pt_event[sh->npts] = ev;
        sh->npts++;
    }
    sh->pc_key[ci] = key;
    sh->pc_pt[ci] = *out + 1;
    return 0;
}

static int mark_badreq(rl_shard *sh, const char *s, size_t n)
{
    uint32_t id;
    if (intern_req(sh, s, n, &id))
        return -1;
    if (sh->nbadreq == sh->capbadreq) {
        void *p = sh->badreq;
        size_t cap = sh->capbadreq;
        if (lp_grow(&p, &cap, sh->nbadreq + 1, sizeof *sh->badreq))
            return -1;
        sh->badreq = p;
        sh->capbadreq = cap;
    }
    sh->badreq[sh->nbadreq++] = id;
    return 0;
}

/* The values of one record, as found in a line. */
typedef struct rec {
    const char *v[LP_RL_NROLES];
    size_t n[LP_RL_NROLES];
    int got[LP_RL_NROLES];
    const char *av[LP_REQLOG_MAXATTR];
    size_t an[LP_REQLOG_MAXATTR];
    int64_t scale;           /* time scale (JSON key suffix may set it) */
} rec;

/* A well-formed record's row: the request, host, task and event interned (in this
 * order: local ids are numbered by first appearance), the point, the row, the
 * attributes. v and n are indexed by role; r gives the attributes (NULL: none). */
static int put_row(rl_shard *sh, const char *const *v, const size_t *n, int64_t t, int64_t seq, const rec *r,
                   uint64_t line)
{
    const rl_layout *L = sh->lay;
    uint32_t req, host, task, ev, pt;
    lp_str hs, ts, es;
    if (intern_req(sh, v[LP_RL_REQUEST], n[LP_RL_REQUEST], &req))
        return -1;
    if (L->have[LP_RL_HOST]) {
        if (intern_name(sh, v[LP_RL_HOST], n[LP_RL_HOST], &hs))
            return -1;
    } else if (lp_strtab_intern(&sh->names, L->host, strlen(L->host), &hs)) {
        return -1;
    }
    if (intern_name(sh, v[LP_RL_TASK], n[LP_RL_TASK], &ts) || intern_name(sh, v[LP_RL_EVENT], n[LP_RL_EVENT], &es))
        return -1;
    host = hs, task = ts, ev = es;
    if (hs >= sh->capishost) {
        size_t nc = (hs + 1) * 2;
        uint8_t *x = lp_realloc(sh->ishost, nc);
        if (!x)
            return -1;
        memset(x + sh->capishost, 0, nc - sh->capishost);
        sh->ishost = x;
        sh->capishost = nc;
    }
    sh->ishost[hs] = 1;
    if (intern_point(sh, task, ev, &pt))
        return -1;
    if (sh->nrows == sh->caprows) {
        void *p = sh->rows;
        size_t cap = sh->caprows;
        if (lp_grow(&p, &cap, sh->nrows + 1, sizeof *sh->rows))
            return -1;
        sh->rows = p;
        sh->caprows = cap;
    }
    if (L->have[LP_RL_SEQ] && sh->nrows == sh->capseq) {
        void *p = sh->seq;
        size_t cap = sh->capseq;
        if (lp_grow(&p, &cap, sh->nrows + 1, sizeof *sh->seq))
            return -1;
        sh->seq = p;
        sh->capseq = cap;
    }
    lp_reqrow *w = &sh->rows[sh->nrows];
    w->time = t;
    w->point = pt;
    w->host = host;
    w->seg = req;
    w->src = 0;
    if (L->have[LP_RL_SEQ])
        sh->seq[sh->nrows] = seq;
    sh->nrows++;
    for (unsigned a = 0; r && a < sh->opts->nattr; a++) {
        if (!r->av[a] || r->an[a] == 0)
            continue;
        lp_str vs;
        if (lp_strtab_intern(&sh->names, r->av[a], r->an[a], &vs))
            return -1;
        if (sh->nav == sh->capav) {
            void *p = sh->av;
            size_t cap = sh->capav;
            if (lp_grow(&p, &cap, sh->nav + 1, sizeof *sh->av))
                return -1;
            sh->av = p;
            sh->capav = cap;
        }
        sh->av[sh->nav++] = (rl_attrv){req, a, vs, line};
    }
    return 0;
}


/* Turn a record into a row; malformed records are reported (and their request marked). */
static int emit(rl_shard *sh, const rec *r, uint64_t line)
{
    const rl_layout *L = sh->lay;
    char qb[64];
    int bad = 0;
    for (int k = 0; k < LP_RL_NROLES && !bad; k++) {
        if (!L->have[k])
            continue;
        if (!r->got[k]) {
            if (L->fmt == LP_RL_JSONL)
                sdiag(sh, line, LP_SEV_ERROR, LP_RULE_FIELD, "missing field '%s'", rl_role_names[k]);
            else
                sdiag(sh, line, LP_SEV_ERROR, LP_RULE_FIELD, "missing field '%s' (column %d)", rl_role_names[k],
                      L->col[k] + 1);
            bad = 1;
        } else if (r->n[k] == 0 && k != LP_RL_SEQ) {
            sdiag(sh, line, LP_SEV_ERROR, LP_RULE_FIELD, "empty field '%s'", rl_role_names[k]);
            bad = 1;
        }
    }
    int64_t t = 0, seq = 0;
    const char *why = NULL;
    if (!bad && rl_parse_time(r->v[LP_RL_TIME], r->n[LP_RL_TIME], r->scale, L->iso, &t, &why)) {
        sdiag(sh, line, LP_SEV_ERROR, LP_RULE_FIELD, "time '%s' %s", q40(r->v[LP_RL_TIME], r->n[LP_RL_TIME], qb),
              why);
        bad = 1;
    }
    if (!bad && L->have[LP_RL_SEQ]) {
        if (r->n[LP_RL_SEQ] == 0 || rl_parse_time(r->v[LP_RL_SEQ], r->n[LP_RL_SEQ], 1, 0, &seq, &why) ||
            memchr(r->v[LP_RL_SEQ], '.', r->n[LP_RL_SEQ])) {
            sdiag(sh, line, LP_SEV_ERROR, LP_RULE_FIELD, "seq '%s' is not an integer",
                  q40(r->v[LP_RL_SEQ], r->n[LP_RL_SEQ], qb));
            bad = 1;
        }
    }
    if (bad) {
        sh->nbadlines++;
        if (push_skip(sh, line))
            return -1;
        if (r->got[LP_RL_REQUEST] && r->n[LP_RL_REQUEST] && mark_badreq(sh, r->v[LP_RL_REQUEST], r->n[LP_RL_REQUEST]))
            return -1;
        return 0;
    }
    return put_row(sh, r->v, r->n, t, seq, r, line);
}

static int csv_record(rl_shard *sh, const char *const *f, const size_t *fl, int nf, uint64_t line);

/* One CSV/TSV line. */
static int csv_line(rl_shard *sh, const char *s, size_t n, uint64_t line, const char **f, size_t *fl, char *scratch,
                    size_t cap)
{
    const rl_layout *L = sh->lay;
    int nf = rl_csv_split_plain(s, n, L->delim, f, fl, L->ncols);
    if (nf == -2)
        nf = rl_csv_split(s, n, L->delim, f, fl, L->ncols, scratch, cap);
    if (nf < 0) {
        sdiag(sh, line, LP_SEV_ERROR, LP_RULE_SYNTAX, "bad quoting");
        sh->nbadlines++;
        /* the request may still be readable: the first fields usually precede the quote */
        return push_skip(sh, line);
    }
    return csv_record(sh, f, fl, nf, line);
}

/* A split CSV/TSV line (nf fields) to a record. */
static int csv_record(rl_shard *sh, const char *const *f, const size_t *fl, int nf, uint64_t line)
{
    const rl_layout *L = sh->lay;
    rec r; /* every field emit reads is set below (no memset of the whole record: hot) */
    r.scale = L->scale;
    for (int k = 0; k < LP_RL_NROLES; k++) {
        int c = L->col[k], in = c >= 0 && c < nf;
        r.v[k] = in ? f[c] : NULL;
        r.n[k] = in ? fl[c] : 0;
        r.got[k] = in;
    }
    for (unsigned a = 0; a < sh->opts->nattr; a++) {
        int c = L->acol[a];
        r.av[a] = c >= 0 && c < nf ? f[c] : NULL;
        r.an[a] = c >= 0 && c < nf ? fl[c] : 0;
    }
    return emit(sh, &r, line);
}

/* csv_record for a layout with every role but seq in a column and no attributes (the
 * usual log): a line whose fields are all there, none empty, and whose time reads goes
 * straight to put_row, without a record to fill and check; any other line goes
 * through csv_record, which reports it (same rows and diagnostics either way). */
static int csv_plain_record(rl_shard *sh, const char *const *f, const size_t *fl, int nf, uint64_t line)
{
    const rl_layout *L = sh->lay;
    if (nf >= L->ncols) {
        const char *v[LP_RL_NROLES];
        size_t n[LP_RL_NROLES];
        v[LP_RL_REQUEST] = f[L->col[LP_RL_REQUEST]], n[LP_RL_REQUEST] = fl[L->col[LP_RL_REQUEST]];
        v[LP_RL_HOST] = f[L->col[LP_RL_HOST]], n[LP_RL_HOST] = fl[L->col[LP_RL_HOST]];
        v[LP_RL_TIME] = f[L->col[LP_RL_TIME]], n[LP_RL_TIME] = fl[L->col[LP_RL_TIME]];
        v[LP_RL_EVENT] = f[L->col[LP_RL_EVENT]], n[LP_RL_EVENT] = fl[L->col[LP_RL_EVENT]];
        v[LP_RL_TASK] = f[L->col[LP_RL_TASK]], n[LP_RL_TASK] = fl[L->col[LP_RL_TASK]];
        v[LP_RL_SEQ] = NULL, n[LP_RL_SEQ] = 0;
        int64_t t;
        const char *why;
        if (n[LP_RL_REQUEST] && n[LP_RL_HOST] && n[LP_RL_TIME] && n[LP_RL_EVENT] && n[LP_RL_TASK] &&
            rl_parse_time(v[LP_RL_TIME], n[LP_RL_TIME], L->scale, L->iso, &t, &why) == 0)
            return put_row(sh, v, n, t, 0, NULL, line);
    }
    return csv_record(sh, f, fl, nf, line);
}

/* One JSON object per line. */
static int json_line(rl_shard *sh, const char *s, size_t n, uint64_t line, char *scratch, size_t cap)
{
    const rl_layout *L = sh->lay;
    rec r;
    memset(&r, 0, sizeof r);
    r.scale = L->scale;
    lp_json_pull j;
    lp_json_pull_init(&j, s, n);
    size_t used = 0;
    int has = lp_json_pull_obj(&j);
    if (has < 0)
        goto syntax;
    while (has) {
        const char *k;
        size_t kn;
        if (lp_json_pull_key(&j, &k, &kn, scratch + used, cap - used))
            goto syntax;
        if (k == scratch + used)
            used += kn;
        int role = -1;
        int64_t ks = 0;
        for (int x = 0; x < L->nkeys; x++)
            if (L->keylen[x] == kn && strncasecmp(L->key[x], k, kn) == 0) {
                role = L->keyrole[x];
                ks = L->keyscale[x];
                break;
            }
        int c = lp_json_pull_peek(&j);
        if (role < 0 || c == '{' || c == '[') {
            if (role >= 0 && role < LP_RL_NROLES) {
                char qb[64];
                sdiag(sh, line, LP_SEV_ERROR, LP_RULE_FIELD, "field '%s' is not a string or number",
                      q40(k, kn, qb));
                sh->nbadlines++;
                if (r.got[LP_RL_REQUEST] && r.n[LP_RL_REQUEST] &&
                    mark_badreq(sh, r.v[LP_RL_REQUEST], r.n[LP_RL_REQUEST]))
                    return -1;
                return push_skip(sh, line);
            }
            if (lp_json_pull_skip(&j))
                goto syntax;
        } else {
            const char *v;
            size_t vn;
            int kind;
            if (lp_json_pull_scalar(&j, &v, &vn, scratch + used, cap - used, &kind))
                goto syntax;
            if (v == scratch + used)
                used += vn;
            if (kind == 'z')
                v = "", vn = 0;
            if (role < LP_RL_NROLES) {
                if (!r.got[role]) {
                    r.v[role] = v;
                    r.n[role] = vn;
                    r.got[role] = 1;
                    if (role == LP_RL_TIME && ks && sh->opts->unit == LP_RL_UNIT_AUTO)
                        r.scale = ks;
                }
            } else {
                r.av[role - LP_RL_NROLES] = v;
                r.an[role - LP_RL_NROLES] = vn;
            }
        }
        int nx = lp_json_pull_next(&j, '}');
        if (nx < 0)
            goto syntax;
        has = nx;
    }
    if (!lp_json_pull_at_end(&j)) {
        j.why = "text after the object";
        goto syntax;
    }
    return emit(sh, &r, line);
syntax:
    sdiag(sh, line, LP_SEV_ERROR, LP_RULE_SYNTAX, "bad JSON at byte %zu: %s", (size_t)(j.p - s) + 1,
          j.why ? j.why : "syntax error");
    sh->nbadlines++;
    if (r.got[LP_RL_REQUEST] && r.n[LP_RL_REQUEST] && mark_badreq(sh, r.v[LP_RL_REQUEST], r.n[LP_RL_REQUEST]))
        return -1;
    return push_skip(sh, line);
}

/* ---- reading ---------------------------------------------------------------------- */

typedef struct reader {
    int fd;                /* plain file, or -1 */
    lp_input *in;          /* stream, or NULL */
    uint64_t off;          /* file offset of buf[0] (plain) */
    uint64_t rdoff;        /* next pread offset (plain) */
    char *buf;
    size_t len, cap, pos;
    int eof;
    void *map;             /* a plain shard mapped whole (buf points into it), or NULL */
    size_t maplen;
    int cut;               /* the mapping stops before the end of the file */
} reader;

static lp_status rd_fill(reader *r, lp_error *err)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->off += r->pos;
        r->pos = 0;
    }
    if (r->len == r->cap) {
        size_t ncap = r->cap * 2;
        char *nb = lp_realloc(r->buf, ncap + 1);
        if (!nb)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        r->buf = nb;
        r->cap = ncap;
    }
    size_t want = r->cap - r->len;
    if (r->in) {
        size_t got;
        lp_status st = lp_input_read(r->in, r->buf + r->len, want, &got, err);
        if (st)
            return st;
        if (got == 0)
            r->eof = 1;
        r->len += got;
    } else {
        ssize_t got;
        do
            got = pread(r->fd, r->buf + r->len, want, (off_t)r->rdoff);
        while (got < 0 && errno == EINTR);
        if (got < 0)
            return lp_error_set(err, LP_ERR_IO, "reading: %s", strerror(errno));
        if (got == 0)
            r->eof = 1;
        r->len += (size_t)got;
        r->rdoff += (uint64_t)got;
    }
    return LP_OK;
}

/* Next line (without its terminator) or 0 at the end; *start is its file offset. */
static int rd_line(reader *r, const char **s, size_t *n, uint64_t *start, int *toolong, lp_status *st, lp_error *err)
{
    *toolong = 0;
    for (;;) {
        char *nl = r->pos < r->len ? memchr(r->buf + r->pos, '\n', r->len - r->pos) : NULL;
        if (nl || (r->eof && r->pos < r->len)) {
            size_t e = nl ? (size_t)(nl - r->buf) : r->len;
            *s = r->buf + r->pos;
            *n = e - r->pos;
            *start = r->off + r->pos;
            r->pos = nl ? e + 1 : e;
            if (!nl && r->cut) { /* a line running past the mapped window is too long */
                *toolong = 1;
                *s = NULL;
                *n = 0;
                return 1;
            }
            if (*n && (*s)[*n - 1] == '\r')
                (*n)--;
            return 1;
        }
        if (r->eof)
            return 0;
        if (r->len - r->pos >= RL_MAXLINE) {
            /* skip to the next newline */
            *toolong = 1;
            *start = r->off + r->pos;
            for (;;) {
                r->pos = r->len;
                if ((*st = rd_fill(r, err)) != LP_OK)
                    return -1;
                char *q = memchr(r->buf, '\n', r->len);
                if (q) {
                    r->pos = (size_t)(q - r->buf) + 1;
                    break;
                }
                if (r->eof) {
                    r->pos = r->len;
                    break;
                }
            }
            *s = NULL;
            *n = 0;
            return 1;
        }
        if ((*st = rd_fill(r, err)) != LP_OK)
            return -1;
    }
}

void rl_shard_release(rl_shard *sh)
{
    lp_free(sh->rows);
    lp_free(sh->seq);
    if (sh->tabs_ok) {
        lp_strtab_release(&sh->reqs);
        lp_strtab_release(&sh->names);
    }
    lp_free(sh->pt_task);
    lp_free(sh->pt_event);
    lp_hmap_release(&sh->ptmap);
    lp_free(sh->skip);
    for (size_t i = 0; i < sh->ndiags; i++)
        lp_free(sh->diags[i].msg);
    lp_free(sh->diags);
    lp_free(sh->badreq);
    lp_free(sh->av);
    lp_free(sh->ishost);
    lp_free(sh->m_pt);
    lp_free(sh->m_req);
    lp_free(sh->m_host);
    sh->ishost = NULL, sh->m_pt = sh->m_req = sh->m_host = NULL;
    sh->capishost = 0;
    sh->rows = NULL, sh->seq = NULL, sh->pt_task = sh->pt_event = NULL;
    sh->skip = NULL, sh->diags = NULL, sh->badreq = NULL, sh->av = NULL;
    sh->tabs_ok = 0;
}

/* Open the shard's input: a whole stream (lp_input), or a plain file's byte range,
 * mapped whole when it can be (no copy, and the pages leave the resident set when the
 * shard is done), positioned at the first line that begins inside the range. */
static lp_status rd_open(rl_shard *sh, reader *r, lp_error *err)
{
    lp_status st = LP_OK;
    r->cap = (size_t)1 << 20;
    r->buf = lp_malloc(r->cap + 1);
    if (!r->buf)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (sh->whole)
        return sh->mem ? lp_input_open_mem(&r->in, sh->mem, sh->memlen, sh->path, err)
                       : lp_input_open(&r->in, sh->path, err);
    r->fd = open(sh->path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0)
        return lp_error_set(err, LP_ERR_IO, "cannot open '%s': %s", sh->path, strerror(errno));
    r->off = r->rdoff = sh->begin;
    /* map the shard (and room for its last line) */
    struct stat sb;
    if (fstat(r->fd, &sb) == 0 && (uint64_t)sb.st_size > sh->begin) {
        uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
        uint64_t from = (sh->begin ? sh->begin - 1 : 0) / pg * pg;
        uint64_t lim = sh->end + RL_MAXLINE + 1;
        if (lim > (uint64_t)sb.st_size)
            lim = (uint64_t)sb.st_size;
        void *mp = mmap(NULL, (size_t)(lim - from), PROT_READ, MAP_PRIVATE, r->fd, (off_t)from);
        if (mp != MAP_FAILED) {
            madvise(mp, (size_t)(lim - from), MADV_SEQUENTIAL);
            lp_free(r->buf);
            r->map = mp;
            r->maplen = (size_t)(lim - from);
            r->buf = mp;
            r->len = r->cap = r->maplen;
            r->off = from;
            r->pos = (size_t)(sh->begin - from);
            r->eof = 1;
            r->cut = lim < (uint64_t)sb.st_size;
        }
    }
    /* start at the first line that begins inside the range */
    int partial = 0;
    if (sh->begin > 0 && r->map) {
        partial = r->buf[sh->begin - 1 - r->off] != '\n';
    } else if (sh->begin > 0) {
        char c;
        ssize_t k = pread(r->fd, &c, 1, (off_t)(sh->begin - 1));
        partial = k == 1 && c != '\n';
    }
    if (partial) {
        const char *s;
        size_t n;
        uint64_t at;
        int tl;
        rd_line(r, &s, &n, &at, &tl, &st, err);
    }
    return st;
}

static void rd_close(reader *r)
{
    if (r->in)
        lp_input_close(r->in);
    if (r->fd >= 0)
        close(r->fd);
    if (r->map)
        munmap(r->map, r->maplen);
    else
        lp_free(r->buf);
}

/* The hot loop of a mapped CSV/TSV shard: each line's end and its fields are found in
 * one scan (delimiters and newlines, 16 bytes at a time), and a plain line (no field
 * that begins with a quote or a space or ends with a space) becomes a record without
 * going through rd_line and the splitters. Any other line is left to the general loop
 * with r->pos at its start: a blank or comment line, the header, a field to unquote or
 * trim, a line running past the mapped window. Returns 1 at the end of the shard, 0 at
 * a line for the general loop, -1 when out of memory. Same lines, records, line numbers
 * and progress as the general loop. */
/* the field of RL_FIELD_OR (above), a field that is not plain going to the general loop */
#define FAST_FIELD(end) RL_FIELD_OR(end, goto general)

static int csv_fast(rl_shard *sh, reader *r, const char **f, size_t *fl, uint64_t *lastprog)
{
    const rl_layout *L = sh->lay;
    const char delim = L->delim;
    const int maxf = L->ncols;
    const char *const buf = r->buf;
    const size_t len = r->len;
    size_t pos = r->pos;
    const int plainrec = L->have[LP_RL_REQUEST] && L->have[LP_RL_HOST] && L->have[LP_RL_TIME] &&
                         L->have[LP_RL_EVENT] && L->have[LP_RL_TASK] && !L->have[LP_RL_SEQ] && sh->opts->nattr == 0;
#if defined(__SSE2__)
    const __m128i D = _mm_set1_epi8(delim), NL = _mm_set1_epi8('\n');
#endif
    while (pos < len) {
        uint64_t at = r->off + pos;
        if (at >= sh->end)
            break;
        const char *s = buf + pos;
        const size_t avail = len - pos;
        if (*s == ' ' || *s == '\t' || *s == '#' || *s == '\n' || *s == '\r' || (L->header && at == L->header_off))
            goto general;
        int k = 0;
        size_t a = 0, i = 0, e = avail;
        int nl = 0;
#if defined(__SSE2__)
        for (; i + 16 <= avail; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            unsigned md = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, D));
            unsigned mn = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, NL));
            if (mn) {
                unsigned lim = (unsigned)__builtin_ctz(mn);
                for (md &= (1u << lim) - 1; md; md &= md - 1)
                    FAST_FIELD(i + (size_t)__builtin_ctz(md));
                e = i + lim;
                nl = 1;
                break;
            }
            for (; md; md &= md - 1)
                FAST_FIELD(i + (size_t)__builtin_ctz(md));
        }
#endif
        if (!nl) {
            for (; i < avail; i++) {
                if (s[i] == '\n') {
                    e = i;
                    nl = 1;
                    break;
                }
                if (s[i] == delim)
                    FAST_FIELD(i);
            }
            if (!nl && r->cut)
                goto general; /* runs past the mapped window: too long */
        }
        size_t n = e;
        if (n && s[n - 1] == '\r')
            n--;
        if (n < a) /* the CR was a field's only byte after a delimiter at the end */
            goto general;
        FAST_FIELD(n);
        pos += nl ? e + 1 : e;
        uint64_t line = ++sh->nlines;
        if (sh->progress) {
            uint64_t done = r->off + pos - sh->begin;
            if (done - *lastprog >= ((uint64_t)1 << 20)) {
                atomic_fetch_add(sh->progress, done - *lastprog);
                *lastprog = done;
            }
        }
        if (plainrec ? csv_plain_record(sh, f, fl, k, line) : csv_record(sh, f, fl, k, line)) {
            r->pos = pos;
            return -1;
        }
        continue;
    general:
        r->pos = pos;
        return 0;
    }
    r->pos = pos;
    return 1;
}
#undef FAST_FIELD
#undef RL_FIELD_OR

/* The layout of a stream, decided from its first content line (line) at s. Returns 0:
 * parse the line as a record; 1: it was the header; 2: the file cannot be read (its
 * first line reported, the shard stops); -1: out of memory. */
static int stream_layout(rl_shard *sh, const char *s, size_t n, uint64_t line)
{
    rl_layout *L = sh->lay;
    if (sh->opts->host_from_name)
        rl_host_from_path(sh->path, L->host, sizeof L->host);
    lp_error lerr;
    lp_error_clear(&lerr);
    lp_status ls = rl_layout_detect(L, s, n, sh->path, sh->opts, &lerr);
    if (ls == LP_ERR_NOMEM)
        return -1;
    if (ls) {
        /* the file cannot be read: report at its first line and stop */
        const char *m = lerr.msg;
        size_t pl = strlen(sh->path);
        if (strncmp(m, sh->path, pl) == 0 && m[pl] == ':')
            m += pl + 2;
        sdiag(sh, line, LP_SEV_ERROR, LP_RULE_SYNTAX, "%s; file skipped", m);
        sh->nbadlines++;
        return push_skip(sh, line) ? -1 : 2;
    }
    if (L->header)
        return push_skip(sh, line) ? -1 : 1;
    return 0;
}

void rl_shard_run(rl_shard *sh)
{
    lp_error *err = &sh->err;
    lp_status st = LP_OK;
    reader r;
    memset(&r, 0, sizeof r);
    r.fd = -1;
    const char **f = NULL;
    size_t *fl = NULL;
    char *scratch = NULL;
    size_t scap = 0;
    /* (a failed init may have allocated: release is safe on a partial table) */
    if (lp_strtab_init(&sh->reqs)) {
        lp_strtab_release(&sh->reqs);
        sh->st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        return;
    }
    if (lp_strtab_init(&sh->names)) {
        lp_strtab_release(&sh->names);
        lp_strtab_release(&sh->reqs);
        sh->st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        return;
    }
    sh->tabs_ok = 1;
    if ((st = rd_open(sh, &r, err)))
        goto out;
    int have_layout = !sh->whole;
    uint64_t lastprog = 0;
    int fast = r.map && !sh->whole && sh->lay->fmt != LP_RL_JSONL && sh->lay->delim != '\n' && sh->lay->delim != '\r';
    if (r.map)
        sh->rdend = r.buf + r.len;
    if (fast) {
        f = lp_malloc((size_t)(sh->lay->ncols ? sh->lay->ncols : 1) * sizeof *f);
        fl = lp_malloc((size_t)(sh->lay->ncols ? sh->lay->ncols : 1) * sizeof *fl);
        if (!f || !fl)
            goto nomem;
    }
    for (;;) {
        if (fast) {
            int fr = csv_fast(sh, &r, f, fl, &lastprog);
            if (fr < 0)
                goto nomem;
            if (fr > 0)
                break;
        }
        const char *s;
        size_t n;
        uint64_t at;
        int toolong;
        int got = rd_line(&r, &s, &n, &at, &toolong, &st, err);
        if (got < 0)
            goto out;
        if (got == 0)
            break;
        if (!sh->whole && at >= sh->end)
            break;
        uint64_t line = ++sh->nlines;
        if (sh->progress) {
            uint64_t pos = sh->whole ? lp_input_consumed(r.in) : r.off + r.pos - sh->begin;
            if (pos - lastprog >= ((uint64_t)1 << 20)) {
                atomic_fetch_add(sh->progress, pos - lastprog);
                lastprog = pos;
            }
        }
        if (toolong) {
            sdiag(sh, line, LP_SEV_ERROR, LP_RULE_SYNTAX, "line longer than %zu bytes", RL_MAXLINE);
            sh->nbadlines++;
            if (push_skip(sh, line))
                goto nomem;
            continue;
        }
        size_t i = 0;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == n || s[i] == '#') {
            if (push_skip(sh, line))
                goto nomem;
            continue;
        }
        if (!have_layout) {
            int lr = stream_layout(sh, s, n, line);
            if (lr < 0)
                goto nomem;
            if (lr == 2)
                break;
            have_layout = 1;
            if (lr == 1)
                continue;
        } else if (!sh->whole && sh->lay->header && at == sh->lay->header_off) {
            if (push_skip(sh, line))
                goto nomem;
            continue;
        }
        if (!f && sh->lay->fmt != LP_RL_JSONL) {
            f = lp_malloc((size_t)(sh->lay->ncols ? sh->lay->ncols : 1) * sizeof *f);
            fl = lp_malloc((size_t)(sh->lay->ncols ? sh->lay->ncols : 1) * sizeof *fl);
            if (!f || !fl)
                goto nomem;
        }
        if (scap < n + 1) {
            lp_free(scratch);
            scap = n + 1 > 4096 ? n + 1 : 4096;
            scratch = lp_malloc(scap);
            if (!scratch)
                goto nomem;
        }
        int rc = sh->lay->fmt == LP_RL_JSONL ? json_line(sh, s, n, line, scratch, scap)
                                             : csv_line(sh, s, n, line, f, fl, scratch, scap);
        if (rc)
            goto nomem;
    }
    if (sh->progress) {
        uint64_t pos = sh->whole ? lp_input_consumed(r.in) : (r.off + r.pos > sh->end ? sh->end : r.off + r.pos) - sh->begin;
        if (pos > lastprog)
            atomic_fetch_add(sh->progress, pos - lastprog);
    }
    goto out;
nomem:
    st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
out:
    rd_close(&r);
    lp_free(f);
    lp_free(fl);
    lp_free(scratch);
    sh->st = st;
}
