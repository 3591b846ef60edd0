/* t.h: the unit-test harness: CHECK records a failure with file:line and goes on;
 * each test file's main() returns t_done(), non-zero if anything failed. */
#ifndef LP_TEST_T_H
#define LP_TEST_T_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failures, t_checks;

#define CHECK(c)                                                                     \
    do {                                                                             \
        t_checks++;                                                                  \
        if (!(c)) {                                                                  \
            t_failures++;                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);    \
        }                                                                            \
    } while (0)

#define CHECK_EQ_I(a, b)                                                             \
    do {                                                                             \
        long long a_ = (long long)(a), b_ = (long long)(b);                          \
        t_checks++;                                                                  \
        if (a_ != b_) {                                                              \
            t_failures++;                                                            \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__,     \
                    __LINE__, #a, a_, #b, b_);                                       \
        }                                                                            \
    } while (0)

#define CHECK_STR(a, b)                                                              \
    do {                                                                             \
        const char *a_ = (a), *b_ = (b);                                             \
        t_checks++;                                                                  \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                     \
            t_failures++;                                                            \
            fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__,       \
                    __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");           \
        }                                                                            \
    } while (0)

static inline int t_done(const char *name)
{
    fprintf(stderr, "%s: %d checks, %d failed\n", name, t_checks, t_failures);
    return t_failures ? 1 : 0;
}

#endif
