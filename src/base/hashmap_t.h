/* hashmap_t.h: the hash table of hashmap.h, written once for both widths of slot.
 * Not a header of its own: hashmap.h includes it for the types, the inline functions
 * and the declarations, and hashmap.c (with LP_HMAP_BODY defined) for the out-of-line
 * functions, each time with LP_HMAP_WIDE set to 1 (lp_hmap: 64-bit keys and values) or
 * 0 (lp_hmap32: 32-bit keys and values). HM(_get) names lp_hmap_get or lp_hmap32_get,
 * HM_U is the key and value type. The invariants are hashmap.h's.
 */
#if LP_HMAP_WIDE
#define HM(x) lp_hmap##x
#define HM_U uint64_t
#define HM_GOLDEN UINT64_C(0x9E3779B97F4A7C15)
#define HM_BITS 64
#else
#define HM(x) lp_hmap32##x
#define HM_U uint32_t
#define HM_GOLDEN UINT32_C(0x9E3779B9)
#define HM_BITS 32
#endif
#define HM_EMPTY ((HM_U)-1)

#ifndef LP_HMAP_BODY

typedef struct HM(_slot) {
    HM_U key;
    HM_U val1;          /* the value + 1; 0: the slot is free */
} HM(_slot);

typedef struct HM() {
    HM(_slot) *slot;    /* [cap] */
    size_t cap;         /* 0 or a power of two */
    size_t n;           /* entries stored */
    size_t room;        /* slots allocated (>= cap: reset may use fewer) */
    unsigned shift;     /* bits - log2(cap): home slot = (key * golden) >> shift */
} HM();

lp_status HM(_init)(HM() *m, size_t expect, lp_error *err);
void HM(_release)(HM() *m);
void HM(_clear)(HM() *m);
lp_status HM(_reset)(HM() *m, size_t expect, lp_error *err);
lp_status HM(_reserve)(HM() *m, size_t n, lp_error *err);
lp_status HM(_copy)(HM() *dst, const HM() *src, lp_error *err);
lp_status HM(_put)(HM() *m, HM_U key, HM_U val, lp_error *err);
int HM(_del)(HM() *m, HM_U key);
void HM(_del_at)(HM() *m, size_t i);
/* The out-of-line halves of the insertions: grow if half full, then store (key, val)
 * in the first free slot from key's home (0, or -1 if the table could not grow). */
int HM(_insert_)(HM() *m, HM_U key, HM_U val);
lp_status HM(_add_grow_)(HM() *m, HM_U h, HM_U val, lp_error *err);

static inline size_t HM(_home_)(const HM() *m, HM_U key) { return (size_t)((HM_U)(key * HM_GOLDEN) >> m->shift); }

static inline int HM(_get)(const HM() *m, HM_U key, HM_U *val)
{
    if (!m->n)
        return 0;
    size_t mask = m->cap - 1;
    for (size_t i = HM(_home_)(m, key);; i = (i + 1) & mask) {
        const HM(_slot) *s = &m->slot[i];
        if (!s->val1)
            return 0;
        if (s->key == key) {
            *val = s->val1 - 1;
            return 1;
        }
    }
}

static inline HM_U HM(_get_or_put)(HM() *m, HM_U key, HM_U fresh, int *added)
{
    *added = 1;
    if (m->cap) {
        size_t mask = m->cap - 1;
        for (size_t i = HM(_home_)(m, key);; i = (i + 1) & mask) {
            HM(_slot) *s = &m->slot[i];
            if (!s->val1) {
                if (2 * (m->n + 1) > m->cap)
                    break; /* half full: grow first */
                s->key = key;
                s->val1 = fresh + 1;
                m->n++;
                return fresh;
            }
            if (s->key == key) {
                *added = 0;
                return s->val1 - 1;
            }
        }
    }
    return HM(_insert_)(m, key, fresh) ? HM_EMPTY : fresh;
}

static inline HM_U HM(_find)(const HM() *m, HM_U h, lp_hmap_eq eq, const void *ctx, size_t *slotp)
{
    if (!m->n)
        return HM_EMPTY;
    size_t mask = m->cap - 1;
    for (size_t i = HM(_home_)(m, h);; i = (i + 1) & mask) {
        const HM(_slot) *s = &m->slot[i];
        if (!s->val1)
            return HM_EMPTY;
        if (s->key == h && eq(ctx, s->val1 - 1)) {
            if (slotp)
                *slotp = i;
            return s->val1 - 1;
        }
    }
}

static inline HM_U HM(_find_or_add)(HM() *m, HM_U h, lp_hmap_eq eq, const void *ctx, HM_U fresh, int *added)
{
    *added = 1;
    if (m->cap) {
        size_t mask = m->cap - 1;
        for (size_t i = HM(_home_)(m, h);; i = (i + 1) & mask) {
            HM(_slot) *s = &m->slot[i];
            if (!s->val1) {
                if (2 * (m->n + 1) > m->cap)
                    break; /* half full: grow first */
                s->key = h;
                s->val1 = fresh + 1;
                m->n++;
                return fresh;
            }
            if (s->key == h && eq(ctx, s->val1 - 1)) {
                *added = 0;
                return s->val1 - 1;
            }
        }
    }
    return HM(_insert_)(m, h, fresh) ? HM_EMPTY : fresh;
}

static inline lp_status HM(_add)(HM() *m, HM_U h, HM_U val, lp_error *err)
{
    if (2 * (m->n + 1) > m->cap)
        return HM(_add_grow_)(m, h, val, err);
    size_t mask = m->cap - 1, i = HM(_home_)(m, h);
    while (m->slot[i].val1)
        i = (i + 1) & mask;
    m->slot[i].key = h;
    m->slot[i].val1 = val + 1;
    m->n++;
    return LP_OK;
}

static inline void HM(_set_at)(HM() *m, size_t i, HM_U val) { m->slot[i].val1 = val + 1; }

static inline int HM(_at)(const HM() *m, size_t i, HM_U *key, HM_U *val)
{
    if (!m->slot[i].val1)
        return 0;
    *key = m->slot[i].key;
    *val = m->slot[i].val1 - 1;
    return 1;
}

static inline void HM(_each)(const HM() *m, void (*fn)(void *ctx, HM_U key, HM_U val), void *ctx)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slot[i].val1)
            fn(ctx, m->slot[i].key, m->slot[i].val1 - 1);
}

static inline size_t HM(_footprint)(const HM() *m) { return m->room * sizeof(HM(_slot)); }

#else /* LP_HMAP_BODY: the out-of-line functions */

static lp_status HM(_grow_to_)(HM() *m, size_t ncap, lp_error *err)
{
    HM(_slot) *ns = lp_calloc(ncap, sizeof *ns); /* all free */
    if (!ns)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory for a hash table of %zu slots", ncap);
    HM(_slot) *old = m->slot;
    size_t ocap = m->cap;
    m->slot = ns;
    m->cap = m->room = ncap;
    m->shift = HM_BITS - hm_log2(ncap);
    size_t mask = ncap - 1;
    for (size_t i = 0; i < ocap; i++) {
        if (!old[i].val1)
            continue;
        size_t j = HM(_home_)(m, old[i].key);
        while (ns[j].val1)
            j = (j + 1) & mask;
        ns[j] = old[i];
    }
    lp_free(old);
    return LP_OK;
}

/* The capacity for n entries, at least `from` (0 if too large). */
static size_t HM(_cap_for_)(size_t from, size_t n)
{
    size_t cap = from;
    while (cap / 2 < n) {
        if (cap > SIZE_MAX / 2 / sizeof(HM(_slot)) || (HM_BITS < 64 && cap >= ((size_t)1 << (HM_BITS - 1))))
            return 0; /* (lp_hmap32: at most 2^31 slots, so that the shift stays positive) */
        cap *= 2;
    }
    return cap;
}

lp_status HM(_reserve)(HM() *m, size_t n, lp_error *err)
{
    size_t cap = HM(_cap_for_)(m->cap ? m->cap : 8, n);
    if (!cap)
        return lp_error_set(err, LP_ERR_LIMIT, "hash table of %zu entries is too large", n);
    return cap == m->cap ? LP_OK : HM(_grow_to_)(m, cap, err);
}

lp_status HM(_init)(HM() *m, size_t expect, lp_error *err)
{
    memset(m, 0, sizeof *m);
    m->shift = HM_BITS;
    return expect ? HM(_reserve)(m, expect, err) : LP_OK;
}

void HM(_release)(HM() *m)
{
    lp_free(m->slot);
    memset(m, 0, sizeof *m);
    m->shift = HM_BITS;
}

void HM(_clear)(HM() *m)
{
    if (m->slot)
        memset(m->slot, 0, m->cap * sizeof *m->slot);
    m->n = 0;
}

lp_status HM(_reset)(HM() *m, size_t expect, lp_error *err)
{
    size_t cap = HM(_cap_for_)(8, expect);
    if (!cap)
        return lp_error_set(err, LP_ERR_LIMIT, "hash table of %zu entries is too large", expect);
    if (cap > m->room) {
        HM(_release)(m);
        return HM(_grow_to_)(m, cap, err);
    }
    m->cap = cap;
    m->shift = HM_BITS - hm_log2(cap);
    HM(_clear)(m);
    return LP_OK;
}

lp_status HM(_copy)(HM() *dst, const HM() *src, lp_error *err)
{
    HM(_init)(dst, 0, NULL);
    if (!src->cap)
        return LP_OK;
    dst->slot = lp_malloc(src->cap * sizeof *dst->slot);
    if (!dst->slot)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory copying a hash table of %zu slots", src->cap);
    memcpy(dst->slot, src->slot, src->cap * sizeof *dst->slot);
    dst->cap = dst->room = src->cap;
    dst->n = src->n;
    dst->shift = src->shift;
    return LP_OK;
}

int HM(_insert_)(HM() *m, HM_U key, HM_U val)
{
    if (2 * (m->n + 1) > m->cap && HM(_reserve)(m, m->n + 1, NULL))
        return -1;
    size_t mask = m->cap - 1;
    size_t i = HM(_home_)(m, key);
    while (m->slot[i].val1)
        i = (i + 1) & mask;
    m->slot[i].key = key;
    m->slot[i].val1 = val + 1;
    m->n++;
    return 0;
}

lp_status HM(_add_grow_)(HM() *m, HM_U h, HM_U val, lp_error *err)
{
    if (HM(_insert_)(m, h, val))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory growing a hash table of %zu entries", m->n);
    return LP_OK;
}

lp_status HM(_put)(HM() *m, HM_U key, HM_U val, lp_error *err)
{
    if (m->n) {
        size_t mask = m->cap - 1;
        for (size_t i = HM(_home_)(m, key); m->slot[i].val1; i = (i + 1) & mask)
            if (m->slot[i].key == key) {
                m->slot[i].val1 = val + 1;
                return LP_OK;
            }
    }
    return HM(_add_grow_)(m, key, val, err);
}

void HM(_del_at)(HM() *m, size_t i)
{
    size_t mask = m->cap - 1;
    /* Backward shift: move later entries of the run into the hole when their home slot
     * is not strictly between the hole and their position (cyclically). */
    for (size_t j = (i + 1) & mask; m->slot[j].val1; j = (j + 1) & mask) {
        size_t h = HM(_home_)(m, m->slot[j].key);
        int stays = (i <= j) ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            m->slot[i] = m->slot[j];
            i = j;
        }
    }
    m->slot[i].val1 = 0;
    m->n--;
}

int HM(_del)(HM() *m, HM_U key)
{
    if (!m->n)
        return 0;
    size_t mask = m->cap - 1;
    for (size_t i = HM(_home_)(m, key); m->slot[i].val1; i = (i + 1) & mask)
        if (m->slot[i].key == key) {
            HM(_del_at)(m, i);
            return 1;
        }
    return 0;
}

#endif

#undef HM
#undef HM_U
#undef HM_GOLDEN
#undef HM_BITS
#undef HM_EMPTY
