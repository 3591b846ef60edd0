/* jsonw.c: streaming JSON writer (see jsonw.h). Invariant: depth counts open
 * containers; first[d] says whether the container at depth d is still empty. */
#include "longpole/base/jsonw.h"
#include "base/util.h"

#include <math.h>
#include <string.h>

void lp_jsonw_init(lp_jsonw *j, FILE *f, int pretty)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->pretty = pretty;
    j->first[0] = 1;
}

static void indent(lp_jsonw *j)
{
    if (!j->pretty)
        return;
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* Before a value or key: comma and indentation as needed. */
static void pre(lp_jsonw *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth > 0) {
        if (!j->first[j->depth])
            fputc(',', j->f);
        indent(j);
    }
    j->first[j->depth] = 0;
}

static void open(lp_jsonw *j, char c)
{
    pre(j);
    fputc(c, j->f);
    if (j->depth < LP_JSON_MAXDEPTH - 1)
        j->depth++;
    j->first[j->depth] = 1;
}

static void close_(lp_jsonw *j, char c)
{
    int empty = j->first[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (!empty)
        indent(j);
    fputc(c, j->f);
}

void lp_jsonw_obj(lp_jsonw *j) { open(j, '{'); }
void lp_jsonw_obj_end(lp_jsonw *j) { close_(j, '}'); }
void lp_jsonw_arr(lp_jsonw *j) { open(j, '['); }
void lp_jsonw_arr_end(lp_jsonw *j) { close_(j, ']'); }

static void esc(lp_jsonw *j, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    fputc('"', j->f);
    while (p < e) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            fputc('\\', j->f);
            fputc(c, j->f);
            p++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", j->f); break;
            case '\t': fputs("\\t", j->f); break;
            case '\r': fputs("\\r", j->f); break;
            default: {
                char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
                fputs(u, j->f);
            }
            }
            p++;
        } else if (c < 0x80) {
            fputc(c, j->f);
            p++;
        } else {
            size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
            if (len > 1 && (size_t)(e - p) >= len && lp_utf8_valid((const char *)p, len)) {
                fwrite(p, 1, len, j->f);
                p += len;
            } else {
                fputs("\xEF\xBF\xBD", j->f); /* U+FFFD */
                p++;
            }
        }
    }
    fputc('"', j->f);
}

void lp_jsonw_key(lp_jsonw *j, const char *k)
{
    pre(j);
    esc(j, k, strlen(k));
    fputs(j->pretty ? ": " : ":", j->f);
    j->after_key = 1;
}

void lp_jsonw_strn(lp_jsonw *j, const char *s, size_t n)
{
    pre(j);
    esc(j, s, n);
}

void lp_jsonw_str(lp_jsonw *j, const char *s)
{
    if (!s) {
        lp_jsonw_null(j);
        return;
    }
    lp_jsonw_strn(j, s, strlen(s));
}

void lp_jsonw_i64(lp_jsonw *j, int64_t v)
{
    char b[24];
    pre(j);
    fwrite(b, 1, lp_fmt_i64(b, v), j->f);
}

void lp_jsonw_u64(lp_jsonw *j, uint64_t v)
{
    char b[24];
    pre(j);
    fwrite(b, 1, lp_fmt_u64(b, v), j->f);
}

void lp_jsonw_dbl(lp_jsonw *j, double v)
{
    pre(j);
    if (!isfinite(v))
        fputs("null", j->f);
    else
        fprintf(j->f, "%.15g", v);
}

void lp_jsonw_bool(lp_jsonw *j, int v)
{
    pre(j);
    fputs(v ? "true" : "false", j->f);
}

void lp_jsonw_null(lp_jsonw *j)
{
    pre(j);
    fputs("null", j->f);
}

void lp_jsonw_raw(lp_jsonw *j, const char *text)
{
    pre(j);
    fputs(text, j->f);
}

void lp_jsonw_kstr(lp_jsonw *j, const char *k, const char *v) { lp_jsonw_key(j, k); lp_jsonw_str(j, v); }
void lp_jsonw_ki64(lp_jsonw *j, const char *k, int64_t v) { lp_jsonw_key(j, k); lp_jsonw_i64(j, v); }
void lp_jsonw_ku64(lp_jsonw *j, const char *k, uint64_t v) { lp_jsonw_key(j, k); lp_jsonw_u64(j, v); }
void lp_jsonw_kdbl(lp_jsonw *j, const char *k, double v) { lp_jsonw_key(j, k); lp_jsonw_dbl(j, v); }
void lp_jsonw_kbool(lp_jsonw *j, const char *k, int v) { lp_jsonw_key(j, k); lp_jsonw_bool(j, v); }

void lp_jsonw_end(lp_jsonw *j) { fputc('\n', j->f); }
