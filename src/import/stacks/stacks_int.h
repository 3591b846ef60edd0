/* stacks_int.h: what the stack-sample readers share (stacks.c): a line splitter over an
 * lp_input and small parsing helpers. Private to src/import/stacks/. */
#ifndef LP_IMPORT_STACKS_INT_H
#define LP_IMPORT_STACKS_INT_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/codec/io.h"
#include "longpole/import/stacks.h"

#define LP_NONE32_STK UINT32_MAX
#include "codec/lines.h"

#define STK_MAXLINE 8192   /* longer lines are cut (and reported) */
#define STK_MAXDEPTH 1024  /* deeper stacks keep their leaf-most frames */


/* "secs.frac" (1 to 9 fraction digits) or an integer of ns into ns; 0 if good. */
static inline int stk_parse_time(const char *p, size_t n, int64_t *out)
{
    int64_t sec = 0, frac = 0;
    size_t i = 0, nd = 0;
    int dot = 0;
    if (!n)
        return -1;
    for (; i < n; i++) {
        char c = p[i];
        if (c == '.' && !dot) {
            dot = 1;
            continue;
        }
        if (c < '0' || c > '9')
            return -1;
        if (!dot) {
            if (sec > (INT64_MAX - 9) / 10)
                return -1;
            sec = sec * 10 + (c - '0');
        } else if (nd < 9) {
            frac = frac * 10 + (c - '0');
            nd++;
        }
    }
    if (!dot) {
        *out = sec;
        return 0;
    }
    if (nd == 0 || sec > INT64_MAX / 1000000000 - 1)
        return -1;
    while (nd < 9)
        frac *= 10, nd++;
    *out = sec * 1000000000 + frac;
    return 0;
}

static inline int stk_parse_u32(const char *p, size_t n, uint32_t *out)
{
    uint64_t v = 0;
    if (!n || n > 10)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    if (v > UINT32_MAX - 1)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

#endif
