/* test_lpt_tok.c: the .lpt line tokenizer (formats/lpt_tok.h) against a naive twin (a
 * byte loop) over thousands of random lines: lengths 0..700 around the 16-byte blocks,
 * spaces, tabs, '%', runs of delimiters, and more than LP_LPT_MAXTOK tokens; both with
 * readable padding after the line (filled with bytes that must be ignored: '%' and
 * token bytes) and without (the line at the very end of its allocation, so ASan sees any
 * read past it). */
#include "t.h"
#include "tutil.h"
#include "formats/lpt_tok.h"

#include <stdint.h>

static size_t naive(const char *p, size_t n, size_t *off, size_t *len, int *pct)
{
    size_t nt = 0;
    *pct = 0;
    for (size_t i = 0; i < n; i++)
        *pct |= p[i] == '%';
    for (size_t i = 0; i < n;) {
        while (i < n && (p[i] == ' ' || p[i] == '\t'))
            i++;
        if (i == n)
            break;
        size_t s = i;
        while (i < n && p[i] != ' ' && p[i] != '\t')
            i++;
        if (nt == LP_LPT_MAXTOK)
            return LP_LPT_MAXTOK + 1;
        off[nt] = s;
        len[nt] = i - s;
        nt++;
    }
    return nt;
}

static void check_line(const char *line, size_t n, uint64_t *rng)
{
    static lp_lpt_tok tk[LP_LPT_MAXTOK];
    static size_t off[LP_LPT_MAXTOK + 1], len[LP_LPT_MAXTOK + 1];
    int want_pct;
    size_t want = naive(line, n, off, len, &want_pct);
    for (int padded = 0; padded <= 1; padded++) {
        /* the line at the end of its buffer, or followed by 16 bytes of noise */
        char *buf = malloc(n + 17);
        char *p = padded ? buf : buf + 17; /* unpadded: p[n] is past the allocation */
        memcpy(p, line, n);
        if (padded)
            for (size_t i = 0; i < 16; i++)
                p[n + i] = "%x\t %ab=%%cd\r\n#z"[t_splitmix(rng) % 16];
        int pct = -1;
        size_t got = lp_lpt_tokenize(p, n, padded, tk, &pct);
        CHECK_EQ_I(got, want);
        if (got == want && want <= LP_LPT_MAXTOK) {
            CHECK_EQ_I(pct, want_pct);
            for (size_t i = 0; i < got; i++) {
                CHECK(tk[i].p == p + off[i]);
                CHECK_EQ_I(tk[i].n, len[i]);
            }
        }
        if (want > LP_LPT_MAXTOK)
            CHECK_EQ_I(pct, 1);
        free(buf);
    }
}

int main(void)
{
    uint64_t rng = 42;
    char line[800];
    /* alphabets: mostly tokens, mostly delimiters, and short tokens (many of them) */
    static const char *alpha[] = {"abcdefgh0123= ", "a \t\t  %", "a b c d e f g h % ", "x\t", "%%%% ab"};
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)(t_splitmix(&rng) % (round % 10 == 0 ? 700 : 70));
        const char *a = alpha[t_splitmix(&rng) % 5];
        size_t na = strlen(a);
        for (size_t i = 0; i < n; i++)
            line[i] = a[t_splitmix(&rng) % na];
        check_line(line, n, &rng);
    }
    /* exactly LP_LPT_MAXTOK tokens, and one more, ending at a block edge or not */
    for (int extra = 0; extra <= 1; extra++)
        for (int trail = 0; trail <= 2; trail++) {
            size_t n = 0;
            for (int k = 0; k < LP_LPT_MAXTOK + extra; k++) {
                line[n++] = 'a';
                line[n++] = ' ';
            }
            n -= trail == 0; /* no trailing delimiter */
            if (trail == 2)
                line[n++] = '\t';
            check_line(line, n, &rng);
        }
    return t_done("test_lpt_tok");
}
