/* alloc.c: the single allocator (see alloc.h); also the failure-injection hook. */
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

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
    return malloc(n ? n : 1);
}

void *lp_calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    if (count == 0 || size == 0)
        return calloc(1, 1);
    return calloc(count, size);
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
