/* hugepage.h: a hint that a large, freshly allocated buffer should be backed by
 * transparent huge pages (Linux madvise MADV_HUGEPAGE on the 2 MiB-aligned part of it).
 * A snapshot of a 256 s window holds some 250 MB of per-vertex arrays that are written
 * once; with 4 KiB pages their first touch costs one page fault per 4 KiB (about a
 * third of the analysis), with huge pages one per 2 MiB. Internal to the analyses; a
 * no-op elsewhere or for buffers under 4 MiB. Never fails (the hint may be ignored). */
#ifndef LP_ANALYSIS_HUGEPAGE_H
#define LP_ANALYSIS_HUGEPAGE_H

#include <stddef.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

static inline void lp_hint_huge(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (!p || bytes < 2 * huge)
        return;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), z = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (z > a)
        (void)madvise((void *)a, z - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

#endif
