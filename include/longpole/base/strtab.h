/* strtab.h: interned strings. Every name in a trace (workers, activity types,
 * operators, attribute keys and values, message ids that are not numbers) is stored
 * once and referred to by a 32-bit id.
 *
 * Invariants: id 0 is the empty string and always exists; ids are dense and
 * assigned in order of first insertion; a string's bytes never move once interned
 * (they live in fixed-size blocks), so lp_strtab_get() pointers stay valid until
 * lp_strtab_release(). Strings may contain any byte except NUL; each is stored
 * NUL-terminated. Tuned for many lookups of few distinct strings (the worker and
 * type names of every record) and for millions of distinct ones (message ids).
 */
#ifndef LONGPOLE_STRTAB_H
#define LONGPOLE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t lp_str;            /* an interned string id */
#define LP_STR_EMPTY ((lp_str)0)
#define LP_STR_NONE ((lp_str)UINT32_MAX) /* "no string" where one is optional */

typedef struct lp_strtab {
    uint32_t n;          /* number of strings (ids 0..n-1) */
    uint32_t cap;        /* capacity of off/len */
    char **blk;          /* blocks holding string bytes */
    uint32_t nblk, capblk;
    size_t blkused;      /* bytes used in the last block */
    size_t blksize;      /* size of the last block */
    const char **ptr;    /* ptr[id] -> NUL-terminated bytes */
    uint32_t *len;       /* len[id] */
    struct lp_hmap32 *index; /* the library's hash table (base/hashmap.h): hash of the bytes -> id */
    size_t bytes;        /* total string bytes (without NULs) */
} lp_strtab;

int lp_strtab_init(lp_strtab *st);
void lp_strtab_release(lp_strtab *st);

/* Intern `s[0..n)`; on success stores its id in *id and returns 0; -1 on out of memory
 * or when the table would exceed 2^32-2 strings. */
int lp_strtab_intern(lp_strtab *st, const char *s, size_t n, lp_str *id);
/* Look up without inserting; LP_STR_NONE if absent. */
lp_str lp_strtab_find(const lp_strtab *st, const char *s, size_t n);

static inline const char *lp_strtab_get(const lp_strtab *st, lp_str id) { return st->ptr[id]; }
static inline uint32_t lp_strtab_len(const lp_strtab *st, lp_str id) { return st->len[id]; }

/* A copy of src with the same ids (one block, hash table copied, nothing re-hashed).
 * Returns 0 or -1 (out of memory; dst is then empty). */
int lp_strtab_copy(lp_strtab *dst, const lp_strtab *src);

/* Resident bytes used by the table (for memory accounting). */
size_t lp_strtab_footprint(const lp_strtab *st);

#endif
