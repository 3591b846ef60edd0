/* import_util.c: the helpers of import_util.h. */
#include "import/import_util.h"

#include <stdio.h>

uint64_t lp_import_counts(char *buf, size_t size, const uint64_t *count, const char *const *names, int n)
{
    uint64_t total = 0;
    size_t o = 0;
    if (size)
        buf[0] = '\0';
    for (int r = 0; r < n; r++)
        if (count[r]) {
            total += count[r];
            if (o < size)
                o += (size_t)snprintf(buf + o, size - o, "%s%llu %s", o ? ", " : "", (unsigned long long)count[r],
                                      names[r]);
        }
    return total;
}
