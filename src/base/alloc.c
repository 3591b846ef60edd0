/* alloc.c: the single allocator (see alloc.h); also the failure-injection hook.
 *
 * Large blocks (LP_HUGE_MIN and more) are advised to the kernel as wanting transparent
 * huge pages (MADV_HUGEPAGE; the common Debian setting "madvise" gives them only to
 * regions that ask). The first write to fresh memory is what the kernel charges for: on
 * the development VM, 4 KiB pages first written cost 0.8 CPU s per GB, 2 MiB pages 0.18
 * (bench/RESULTS.md, "Fresh memory"); the advice changes nothing else (same bytes, same
 * zeroing), and a kernel without THP ignores it.
 */
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define LP_HUGE_MIN ((size_t)8 << 20)

/* Advise the whole pages inside [p, p + n) of a large block to use huge pages. */
static void *huge(void *p, size_t n)
{
#if defined(MADV_HUGEPAGE) && !defined(LP_FUZZING)
    if (p && n >= LP_HUGE_MIN) {
        uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + n) & ~(uintptr_t)4095;
        if (e > a)
            (void)madvise((void *)a, e - a, MADV_HUGEPAGE); /* advice only: a refusal changes nothing */
    }
#else
    (void)n;
#endif
    return p;
}

static long fail_after = -1; /* < 0: never fail */

void lp_alloc_fail_after(long n) { fail_after = n; }

static int should_fail(void)
{
    if (fail_after < 0)
        return 0;
    if (fail_after == 0)
        return 1;
    fail_after--;
    return 0;
}

void *lp_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    return huge(malloc(n ? n : 1), n);
}

void *lp_calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    if (count == 0 || size == 0)
        return calloc(1, 1);
    return huge(calloc(count, size), count * size); /* calloc checked count * size */
}

void *lp_realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void *lp_reallocarray(void *p, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return lp_realloc(p, count * size);
}

void lp_free(void *p) { free(p); }

char *lp_strndup(const char *s, size_t n)
{
    char *d = lp_malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

int lp_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap < 16 ? 16 : *cap + *cap / 2;
    if (ncap < need)
        ncap = need;
    void *p = lp_reallocarray(*arr, ncap, elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}


int lp_grow_at(void *arrp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    void *p;
    memcpy(&p, arrp, sizeof p);
    if (lp_grow(&p, cap, need, elem))
        return -1;
    memcpy(arrp, &p, sizeof p);
    return 0;
}
