/* fuzz_reqpart.c: libFuzzer target for a part's pass 1 of the request aggregates as
 * `dist requests` sends it between ranks (lp_reqstats_part_add, src/analysis/mystery/
 * reqstats_part.c). The receiver takes the shape the input's header claims (rows, part
 * count, categories, segments, bounded small) so the fuzzer reaches the body; any input
 * must be refused cleanly or fill only the rows of the part it names, never read or
 * write out of bounds (ASan). */
#include "longpole/analysis/mystery/reqstats.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

#define CHECK_INVARIANT(c) ((c) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static uint64_t u64_at(const unsigned char *d, size_t n, size_t at)
{
    uint64_t v = 0;
    if (at + 8 <= n)
        memcpy(&v, d + at, 8);
    return v;
}

static uint32_t u32_at(const unsigned char *d, size_t n, size_t at)
{
    uint32_t v = 0;
    if (at + 4 <= n)
        memcpy(&v, d + at, 4);
    return v;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
    /* header: magic u32, size u64, part, nparts, n, lo, hi (u64), C, S (u32) */
    uint64_t from = u64_at(data, n, 12), nparts = u64_at(data, n, 20), rows = u64_at(data, n, 28);
    uint32_t C = u32_at(data, n, 52), S = u32_at(data, n, 56);
    if (nparts < 2 || nparts > 8 || rows > 4096 || C > 8 || S > 256 || from >= nparts)
        nparts = 2, rows = 16, C = 2, S = 4, from = 1;
    lp_reqstats out;
    memset(&out, 0, sizeof out);
    out.seg = lp_calloc(S ? S : 1, sizeof *out.seg);
    out.cat = lp_calloc(C ? C : 1, sizeof *out.cat);
    int64_t *lat = lp_calloc(rows ? rows : 1, sizeof *lat), *cp = lp_calloc(rows ? rows : 1, sizeof *cp);
    uint8_t *ne = lp_calloc(rows ? rows : 1, 1);
    size_t cells = (size_t)rows * C;
    float *ccp = lp_calloc(cells ? cells : 1, sizeof *ccp), *ctot = lp_calloc(cells ? cells : 1, sizeof *ctot),
          *csl = lp_calloc(cells ? cells : 1, sizeof *csl);
    if (out.seg && out.cat && lat && cp && ne && ccp && ctot && csl) {
        lp_reqstats_part p = {0, nparts, rows, 0, 0, C, S, lat, cp, ne, ccp, ctot, csl, &out};
        lp_reqstats_part_range(rows, 0, nparts, &p.lo, &p.hi);
        lp_error err;
        lp_status st = lp_reqstats_part_add(&p, data, n, from, &err);
        CHECK_INVARIANT(st == LP_OK || st == LP_ERR_FORMAT);
        /* part 0's own rows are never written by another part's pack */
        for (uint64_t r = p.lo; r < p.hi; r++)
            CHECK_INVARIANT(lat[r] == 0 && cp[r] == 0 && ne[r] == 0);
    }
    lp_free(out.seg), lp_free(out.cat), lp_free(lat), lp_free(cp), lp_free(ne);
    lp_free(ccp), lp_free(ctot), lp_free(csl);
    return 0;
}
