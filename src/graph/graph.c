/* graph.c: the out-of-line parts of the plain-array graph (graph.h): finding the chain
 * of a vertex. */
#include "longpole/graph/graph.h"

uint32_t lp_chain_find(const uint64_t *coff, uint32_t n, uint64_t v)
{
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (coff[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    while (lo + 1 < n && coff[lo + 1] <= v) /* past empty chains */
        lo++;
    return lo;
}
