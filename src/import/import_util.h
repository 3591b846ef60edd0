/* import_util.h: small helpers every importer shares (import_util.c). Internal to the
 * import layer. */
#ifndef LP_IMPORT_UTIL_H
#define LP_IMPORT_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* "3 not valid JSON, 1 without a span id": the non-zero counts of n reasons with their
 * names, comma-separated, into buf (cut at its size; "" if none); returns the sum of
 * the counts. For the per-file notes of records skipped or not modelled. */
uint64_t lp_import_counts(char *buf, size_t size, const uint64_t *count, const char *const *names, int n);

#endif
