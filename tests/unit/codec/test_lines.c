/* test_lines.c: the line reader (codec/lines.h) against a naive twin that splits the
 * whole text at once, on thousands of random texts (LF and CR LF ends, empty lines,
 * no final newline, lines around the limit and far past it, sizes across the reader's
 * buffer growth), in both modes: over-long lines cut (and the rest skipped) or an error
 * naming the line. */
#include "codec/lines.h"
#include "t.h"

#include <stdint.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* A random text of `nl` lines with lengths up to maxlen (some far longer). */
static size_t gen(char *b, size_t cap, int nl, size_t maxlen)
{
    size_t o = 0;
    for (int i = 0; i < nl; i++) {
        size_t k = next() % 8 == 0 ? maxlen + next() % (3 * maxlen + 1) : next() % (maxlen + 2);
        if (o + k + 2 >= cap)
            break;
        for (size_t j = 0; j < k; j++)
            b[o++] = (char)('a' + next() % 26);
        if (i + 1 < nl || next() % 2) {
            if (next() % 3 == 0)
                b[o++] = '\r';
            b[o++] = '\n';
        }
    }
    return o;
}

/* The twin: every line of b, cut at max or stopping at the first over-long one. */
static int twin_check(const char *b, size_t n, size_t max, int cut_long)
{
    lp_input *in = NULL;
    lp_error err;
    if (lp_input_open_mem(&in, b, n, "text", &err))
        return 0;
    lp_lines L;
    lp_lines_init(&L, in, max, cut_long);
    size_t pos = 0;
    uint64_t line = 0;
    int ok = 1;
    while (ok) {
        const char *p;
        size_t k;
        int cut = -1;
        lp_status st = lp_lines_next(&L, &p, &k, cut_long ? &cut : NULL, &err);
        if (pos >= n) { /* the twin has no more lines */
            ok = st == LP_END;
            break;
        }
        const char *e = memchr(b + pos, '\n', n - pos);
        size_t len = e ? (size_t)(e - (b + pos)) : n - pos, next_pos = e ? pos + len + 1 : n;
        size_t body = len && b[pos + len - 1] == '\r' ? len - 1 : len;
        line++;
        if (len > max) {
            if (!cut_long) {
                ok = st == LP_ERR_LIMIT && L.line + 1 == line;
                break;
            }
            size_t c = max && b[pos + max - 1] == '\r' ? max - 1 : max;
            ok = st == LP_OK && cut == 1 && k == c && memcmp(p, b + pos, c) == 0 && L.line == line;
        } else {
            ok = st == LP_OK && k == body && memcmp(p, b + pos, body) == 0 && L.line == line &&
                 (!cut_long || cut == 0);
        }
        pos = next_pos;
    }
    lp_lines_release(&L);
    lp_input_close(in);
    return ok;
}

int main(void)
{
    static char b[1 << 21];
    int cases = 0;
    for (int i = 0; i < 3000; i++) {
        size_t maxlen = i % 10 == 0 ? (size_t)300000 : 1 + next() % 64;
        int nl = 1 + (int)(next() % (i % 10 == 0 ? 8 : 200));
        size_t n = gen(b, sizeof b, nl, maxlen);
        for (int mode = 0; mode < 2; mode++) {
            CHECK(twin_check(b, n, maxlen, mode));
            cases++;
        }
    }
    CHECK(twin_check("", 0, 10, 0));
    CHECK(twin_check("\n\n", 2, 10, 1));
    fprintf(stderr, "test_lines: %d random texts in both modes\n", cases / 2);
    return t_done("test_lines");
}
