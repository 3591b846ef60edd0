/* alloc.h: the single allocator every part of liblongpole allocates through.
 *
 * Invariants: lp_malloc/lp_calloc/lp_realloc return NULL only on failure (never for
 * size 0: they allocate at least one byte), and every failure is reported by the
 * caller as LP_ERR_NOMEM. Because every allocation passes here, tests can make the
 * N-th allocation fail (lp_alloc_fail_after) and check that nothing leaks or crashes.
 * Large arrays are grown with lp_realloc; glibc serves big blocks with mmap and grows
 * them with mremap, so capacity that is never touched costs no resident memory.
 */
#ifndef LONGPOLE_ALLOC_H
#define LONGPOLE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

void *lp_malloc(size_t n);
void *lp_calloc(size_t count, size_t size);   /* overflow-checked count*size, zeroed */
void *lp_realloc(void *p, size_t n);
void *lp_reallocarray(void *p, size_t count, size_t size); /* overflow-checked */
void lp_free(void *p);
char *lp_strndup(const char *s, size_t n);

/* Test hook: after `n` more successful allocations, every allocation fails
 * (n < 0 disables the hook). Not thread-safe; tests only. */
void lp_alloc_fail_after(long n);

/* Grow `*arr` (elements of `elem` bytes, capacity `*cap`) so it can hold `need`
 * elements, growing by 1.5x. Returns 0 or -1 on overflow/out of memory (then *arr is
 * unchanged). */
int lp_grow(void **arr, size_t *cap, size_t need, size_t elem);
/* The same for an array of any element type given by the address of its pointer
 * (`&c->items`): the pointer is read and written through memcpy, so no object is accessed
 * through the wrong type. */
int lp_grow_at(void *arrp, size_t *cap, size_t need, size_t elem);

#endif
