/* heap.h: the binary min-heap, written once for any element type: LP_HEAP_DEFINE(name,
 * T, less) defines static inline name_push(T *a, uint32_t *n, T x) and T name_pop(T *a,
 * uint32_t *n) over a caller's array a[0 .. *n) (room for one more on push; pop needs
 * *n > 0). less(x, y) is a strict order; elements it does not order come out in an
 * order fixed by the sequence of pushes and pops (the same on every run), not in
 * insertion order: give less a tie-break where the order of equal keys matters.
 * Invariant: a[(i - 1) / 2] is never greater than a[i]. Users: the event queues of the
 * replays (grade10 psreplay.c, crystalperf whatif.c).
 */
#ifndef LP_BASE_HEAP_H
#define LP_BASE_HEAP_H

#include <stdint.h>

#define LP_HEAP_DEFINE(name, T, less)                                                                                 \
    static inline void name##_push(T *a, uint32_t *n, T x)                                                            \
    {                                                                                                                  \
        uint32_t i = (*n)++;                                                                                           \
        while (i > 0 && less(x, a[(i - 1) / 2])) {                                                                     \
            a[i] = a[(i - 1) / 2];                                                                                     \
            i = (i - 1) / 2;                                                                                           \
        }                                                                                                              \
        a[i] = x;                                                                                                      \
    }                                                                                                                  \
    static inline T name##_pop(T *a, uint32_t *n)                                                                      \
    {                                                                                                                  \
        T top = a[0], last = a[--*n];                                                                                  \
        uint32_t i = 0;                                                                                                \
        for (;;) {                                                                                                     \
            uint32_t c = 2 * i + 1;                                                                                    \
            if (c >= *n)                                                                                               \
                break;                                                                                                 \
            if (c + 1 < *n && less(a[c + 1], a[c]))                                                                    \
                c++;                                                                                                   \
            if (!less(a[c], last))                                                                                     \
                break;                                                                                                 \
            a[i] = a[c];                                                                                               \
            i = c;                                                                                                     \
        }                                                                                                              \
        if (*n)                                                                                                        \
            a[i] = last;                                                                                               \
        return top;                                                                                                    \
    }

#endif
