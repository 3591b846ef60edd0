/* fuzz_check.h: the check every fuzz target uses for its properties. It fires in every
 * build (libFuzzer with the sanitizers, and the corpus replays of ctest in the plain
 * and sanitizer builds, NDEBUG or not): the condition, file and line on stderr, then
 * abort(), which libFuzzer reports as a crash with the input that caused it. */
#ifndef LP_FUZZ_CHECK_H
#define LP_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(c)                                                                                              \
    do {                                                                                                           \
        if (!(c)) {                                                                                                \
            fprintf(stderr, "%s:%d: fuzz property failed: %s\n", __FILE__, __LINE__, #c);                         \
            abort();                                                                                               \
        }                                                                                                          \
    } while (0)

#endif
