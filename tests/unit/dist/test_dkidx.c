/* test_dkidx.c: the sidecar of a `dist kcp` rank's index (dkidx.h): written and read
 * back field for field (through a file and from memory); every single-bit change and
 * every truncation refused (checksum, or the magic/length checks before it); a file that
 * is not one refused; counts that do not fit the bytes refused even under a right
 * checksum. */
#include "t.h"
#include "longpole/dist/dkidx.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void fill(lp_dkidx *x, uint32_t *sv, uint32_t *tv, uint8_t *eci)
{
    memset(x, 0, sizeof *x);
    x->lpkx_sum = 0x1122334455667788ull, x->digest = 0xdeadbeefcafef00dull;
    x->rank = 1, x->nranks = 3, x->nhosts = 5;
    for (int i = 0; i < 4; i++)
        x->fig[i] = (uint64_t)i * 7 + 1;
    x->npk = 3;
    for (uint32_t i = 0; i < 3; i++)
        sv[i] = i * 11, tv[i] = i == 1 ? UINT32_MAX : i * 13;
    for (int i = 0; i < 17; i++)
        eci[i] = (uint8_t)(i * 31);
    x->sv = sv, x->tv = tv, x->eci = eci, x->neci = 17;
}

static void same(const lp_dkidx *a, const lp_dkidx *b)
{
    CHECK(a->lpkx_sum == b->lpkx_sum && a->digest == b->digest);
    CHECK_EQ_I(a->rank, b->rank);
    CHECK_EQ_I(a->nranks, b->nranks);
    CHECK_EQ_I(a->nhosts, b->nhosts);
    CHECK(memcmp(a->fig, b->fig, sizeof a->fig) == 0);
    CHECK_EQ_I(a->npk, b->npk);
    CHECK_EQ_I(a->neci, b->neci);
    CHECK(memcmp(a->sv, b->sv, a->npk * 4) == 0 && memcmp(a->tv, b->tv, a->npk * 4) == 0);
    CHECK(memcmp(a->eci, b->eci, a->neci) == 0);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *p = malloc(1 << 16);
    *n = f && p ? fread(p, 1, 1 << 16, f) : 0;
    if (f)
        fclose(f);
    return p;
}

int main(void)
{
    uint32_t sv[3], tv[3];
    uint8_t eci[17];
    lp_dkidx x, y;
    fill(&x, sv, tv, eci);
    char path[] = "/tmp/lp_test_dkidx_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    lp_error err;
    CHECK_EQ_I(lp_dkidx_write(path, &x, &err), LP_OK);
    CHECK_EQ_I(lp_dkidx_read(path, &y, &err), LP_OK);
    same(&x, &y);
    lp_dkidx_release(&y);
    size_t n;
    uint8_t *b = slurp(path, &n);
    CHECK_EQ_I(n, 88 + 3 * 8 + 17 + 8);
    CHECK_EQ_I(lp_dkidx_read_mem(b, n, "m", &y, &err), LP_OK);
    same(&x, &y);
    lp_dkidx_release(&y);
    for (size_t i = 0; i < n * 8; i++) { /* every bit */
        b[i / 8] ^= (uint8_t)(1u << (i % 8));
        lp_status st = lp_dkidx_read_mem(b, n, "m", &y, &err);
        CHECK(st == LP_ERR_FORMAT || st == LP_ERR_CHECKSUM);
        CHECK(y.sv == NULL && y.eci == NULL);
        b[i / 8] ^= (uint8_t)(1u << (i % 8));
    }
    for (size_t len = 0; len < n; len++) /* every truncation */
        CHECK(lp_dkidx_read_mem(b, len, "m", &y, &err) != LP_OK);
    /* counts beyond the bytes, under a right checksum */
    uint64_t big = 1ull << 40, sum;
    memcpy(b + 72, &big, 8);
    sum = lp_hash_bytes(b, n - 8);
    memcpy(b + n - 8, &sum, 8);
    CHECK_EQ_I(lp_dkidx_read_mem(b, n, "m", &y, &err), LP_ERR_FORMAT);
    CHECK(strstr(err.msg, "counts") != NULL);
    CHECK_EQ_I(lp_dkidx_read("/nonexistent/x.lpkx.dk", &y, &err), LP_ERR_IO);
    free(b);
    unlink(path);
    return t_done("dkidx");
}
