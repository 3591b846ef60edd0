/* jsonlibs.h: shared by the parts of the jsonlibs harness (jansson and json-c cannot
 * be included in one file: both define json_object). */
#ifndef LP_BENCH_JSONLIBS_H
#define LP_BENCH_JSONLIBS_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
typedef struct sums {
    uint64_t nodes, bytes;
} sums;
/* position of the first element of the "data" array */
static inline size_t data_start(const char *b, size_t n)
{
    const char *key = "\"data\"";
    for (size_t i = 0; i + 6 <= n; i++)
        if (memcmp(b + i, key, 6) == 0) {
            for (size_t j = i + 6; j < n; j++)
                if (b[j] == '[')
                    return j + 1;
            return n;
        }
    return n;
}
static inline size_t skip_sep(const char *b, size_t n, size_t i)
{
    while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t' || b[i] == ','))
        i++;
    return i;
}
sums run_jansson(const char *b, size_t n);
sums run_jsonc(const char *b, size_t n);
#endif
