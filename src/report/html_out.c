/* html_out.c: the HTML writer of the report (report.h, lp_html): trusted markup,
 * escaped untrusted text, JSON strings safe inside <script>, base64, numbers.
 *
 * Invariants: nothing from an input reaches the output except through lp_html_text*
 * (HTML text and attribute values) or lp_html_json_str* (script data); both decode UTF-8
 * strictly (no overlongs, no surrogates, nothing above U+10FFFF) and replace every
 * invalid byte by U+FFFD, so the document is valid UTF-8 whatever the trace holds.
 * Characters HTML5 calls parse errors in input (C0 controls other than tab, LF and CR,
 * DEL, C1 controls, noncharacters) are replaced in text and \u-escaped in JSON.
 * Write errors are sticky (`failed`), reported once by lp_html_status.
 */
#include "longpole/report/report.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* ---- UTF-8 ------------------------------------------------------------------------- */

/* Decode one code point at s[0..n): its value in *cp and its length, or 0 if s[0]
 * does not start a valid sequence (then the caller replaces one byte). */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[k] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

/* A code point HTML5 reports as a parse error when it appears in the input stream. */
static int html_bad_cp(uint32_t cp)
{
    if (cp < 0x20)
        return cp != '\t' && cp != '\n' && cp != '\r';
    if (cp >= 0x7F && cp <= 0x9F)
        return 1;
    if (cp >= 0xFDD0 && cp <= 0xFDEF)
        return 1;
    return (cp & 0xFFFE) == 0xFFFE;
}

/* ---- a tiny output abstraction: to a FILE (lp_html) or to a buffer (the escapers) ---- */

typedef struct sink {
    lp_html *h;              /* writing to a stream, or NULL */
    char *out;               /* writing to a buffer */
    size_t cap, len;         /* bytes the result needs so far */
} sink;

static void sink_put(sink *k, const char *s, size_t n)
{
    if (k->h) {
        lp_html_rawn(k->h, s, n);
    } else {
        if (k->len < k->cap) {
            size_t room = k->cap - k->len;
            memcpy(k->out + k->len, s, n < room ? n : room);
        }
    }
    k->len += n;
}

static void sink_end(sink *k)
{
    if (!k->h && k->cap)
        k->out[k->len < k->cap ? k->len : k->cap - 1] = '\0';
}

static const char REPL[] = "\xEF\xBF\xBD"; /* U+FFFD */

static void escape_html(sink *k, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0; /* bytes [i - run, i) are copied as they are */
    while (i < n) {
        unsigned c = s[i];
        const char *rep = NULL;
        size_t adv = 1;
        if (c < 0x80) {
            switch (c) {
            case '&': rep = "&amp;"; break;
            case '<': rep = "&lt;"; break;
            case '>': rep = "&gt;"; break;
            case '"': rep = "&quot;"; break;
            case '\'': rep = "&#39;"; break;
            default:
                if (html_bad_cp(c))
                    rep = REPL;
            }
        } else {
            uint32_t cp;
            adv = utf8_next(s + i, n - i, &cp);
            if (!adv) {
                adv = 1;
                rep = REPL;
            } else if (html_bad_cp(cp)) {
                rep = REPL;
            }
        }
        if (rep) {
            if (run)
                sink_put(k, (const char *)s + i - run, run);
            sink_put(k, rep, strlen(rep));
            run = 0;
        } else {
            run += adv;
        }
        i += adv;
    }
    if (run)
        sink_put(k, (const char *)s + i - run, run);
}

static void escape_json(sink *k, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0;
    sink_put(k, "\"", 1);
    while (i < n) {
        unsigned c = s[i];
        char buf[8];
        const char *rep = NULL;
        size_t rlen = 0, adv = 1;
        uint32_t cp = c;
        int esc = 0;
        if (c < 0x80) {
            switch (c) {
            case '"': rep = "\\\""; break;
            case '\\': rep = "\\\\"; break;
            case '\n': rep = "\\n"; break;
            case '\t': rep = "\\t"; break;
            case '\r': rep = "\\r"; break;
            default:
                esc = c < 0x20 || c == 0x7F || c == '<' || c == '>' || c == '&';
            }
        } else {
            adv = utf8_next(s + i, n - i, &cp);
            if (!adv) {
                adv = 1;
                cp = 0xFFFD;
                esc = 1;
            } else {
                esc = html_bad_cp(cp) || cp == 0x2028 || cp == 0x2029;
            }
        }
        if (esc) {
            if (cp >= 0x10000) { /* noncharacters above the BMP: a surrogate pair */
                uint32_t v = cp - 0x10000, hi = 0xD800 + (v >> 10), lo = 0xDC00 + (v & 0x3FF);
                char b2[13] = {'\\', 'u', hex[hi >> 12], hex[(hi >> 8) & 15], hex[(hi >> 4) & 15], hex[hi & 15],
                               '\\', 'u', hex[lo >> 12], hex[(lo >> 8) & 15], hex[(lo >> 4) & 15], hex[lo & 15], 0};
                if (run)
                    sink_put(k, (const char *)s + i - run, run);
                sink_put(k, b2, 12);
                run = 0;
                i += adv;
                continue;
            }
            buf[0] = '\\', buf[1] = 'u', buf[2] = hex[(cp >> 12) & 15], buf[3] = hex[(cp >> 8) & 15];
            buf[4] = hex[(cp >> 4) & 15], buf[5] = hex[cp & 15];
            rep = buf;
            rlen = 6;
        } else if (rep) {
            rlen = strlen(rep);
        }
        if (rep) {
            if (run)
                sink_put(k, (const char *)s + i - run, run);
            sink_put(k, rep, rlen);
            run = 0;
        } else {
            run += adv;
        }
        i += adv;
    }
    if (run)
        sink_put(k, (const char *)s + i - run, run);
    sink_put(k, "\"", 1);
}

/* ---- the writer -------------------------------------------------------------------- */

void lp_html_init(lp_html *h, FILE *f)
{
    h->f = f;
    h->failed = 0;
    h->bytes = 0;
}

void lp_html_rawn(lp_html *h, const char *s, size_t n)
{
    if (h->failed || !n)
        return;
    if (fwrite(s, 1, n, h->f) != n)
        h->failed = errno ? errno : EIO;
    h->bytes += n;
}

void lp_html_raw(lp_html *h, const char *s) { lp_html_rawn(h, s, strlen(s)); }

void lp_html_printf(lp_html *h, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (k < 0) {
        h->failed = EINVAL;
        return;
    }
    if ((size_t)k < sizeof buf) {
        lp_html_rawn(h, buf, (size_t)k);
        return;
    }
    if (h->failed)
        return;
    va_start(ap, fmt);
    if (vfprintf(h->f, fmt, ap) < 0)
        h->failed = errno ? errno : EIO;
    va_end(ap);
    h->bytes += (uint64_t)k;
}

void lp_html_textn(lp_html *h, const char *s, size_t n)
{
    sink k = {h, NULL, 0, 0};
    escape_html(&k, s, n);
}

void lp_html_text(lp_html *h, const char *s) { lp_html_textn(h, s ? s : "", s ? strlen(s) : 0); }

void lp_html_json_strn(lp_html *h, const char *s, size_t n)
{
    sink k = {h, NULL, 0, 0};
    escape_json(&k, s, n);
}

void lp_html_json_str(lp_html *h, const char *s)
{
    if (!s)
        lp_html_raw(h, "null");
    else
        lp_html_json_strn(h, s, strlen(s));
}

void lp_html_base64(lp_html *h, const void *p, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = p;
    char buf[4096];
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        buf[o++] = tab[v >> 18], buf[o++] = tab[(v >> 12) & 63], buf[o++] = tab[(v >> 6) & 63], buf[o++] = tab[v & 63];
        if (o == sizeof buf) {
            lp_html_rawn(h, buf, o);
            o = 0;
        }
    }
    if (i < n) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
        buf[o++] = tab[v >> 18], buf[o++] = tab[(v >> 12) & 63];
        buf[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        buf[o++] = '=';
    }
    lp_html_rawn(h, buf, o);
}

void lp_html_dur(lp_html *h, int64_t ns)
{
    char buf[48];
    lp_fmt_dur(ns, buf, sizeof buf);
    lp_html_raw(h, buf);
}

void lp_html_pct(lp_html *h, double x)
{
    if (!(x == x))
        lp_html_raw(h, "-");
    else if (x == 0)
        lp_html_raw(h, "0");
    else if (x > 0 && x * 100 < 0.05)
        lp_html_raw(h, "&lt;0.1%");
    else
        lp_html_printf(h, "%.1f%%", x * 100);
}

void lp_html_num(lp_html *h, double v)
{
    if (!isfinite(v))
        lp_html_raw(h, "null");
    else if (v == floor(v) && fabs(v) < 9e15)
        lp_html_printf(h, "%.0f", v);
    else
        lp_html_printf(h, "%.6g", v);
}

lp_status lp_html_status(const lp_html *h, lp_error *err)
{
    if (!h->failed && h->f && ferror(h->f))
        return lp_error_set(err, LP_ERR_IO, "writing the report failed");
    if (h->failed)
        return lp_error_set(err, LP_ERR_IO, "writing the report failed: %s", strerror(h->failed));
    return LP_OK;
}

size_t lp_html_escape(const char *s, size_t n, char *out, size_t cap)
{
    sink k = {NULL, out, cap, 0};
    escape_html(&k, s, n);
    sink_end(&k);
    return k.len;
}

size_t lp_html_json_escape(const char *s, size_t n, char *out, size_t cap)
{
    sink k = {NULL, out, cap, 0};
    escape_json(&k, s, n);
    sink_end(&k);
    return k.len;
}
