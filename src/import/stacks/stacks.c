/* stacks.c: the table of call-stack samples (stacks.h): frames and stacks interned
 * (deduplicated through the one hash table, base/hashmap.h, with hashed keys and our own
 * equality), samples appended column by column, sorted by start; detection of the two
 * text inputs and loading a file; the line splitter both readers share.
 *
 * Invariants: frame ids and stack ids are dense in order of first insertion; equal
 * (symbol, library, kernel) triples and equal frame lists share one id. Memory: 9 bytes
 * per frame, 4 per stack entry, 29 per sample, plus the strings.
 */
#include "longpole/import/stacks.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "import/stacks/stacks_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct stk_idx {
    lp_hmap frames, stacks;
} stk_idx;

void lp_stacks_init(lp_stacks *s)
{
    memset(s, 0, sizeof *s);
    lp_strtab_init(&s->strs);
}

void lp_stacks_release(lp_stacks *s)
{
    lp_strtab_release(&s->strs);
    lp_free(s->fsym);
    lp_free(s->fdso);
    lp_free(s->fkern);
    lp_free(s->soff);
    lp_free(s->sfr);
    lp_free(s->start);
    lp_free(s->end);
    lp_free(s->tid);
    lp_free(s->pid);
    lp_free(s->state);
    lp_free(s->stack);
    stk_idx *x = s->idx;
    if (x) {
        lp_hmap_release(&x->frames);
        lp_hmap_release(&x->stacks);
        lp_free(x);
    }
    memset(s, 0, sizeof *s);
}

const char *lp_sstate_name(lp_sstate st)
{
    static const char *const names[LP_SS_N] = {"on-cpu", "runnable", "blocked", "sleeping", "unknown"};
    return st < LP_SS_N ? names[st] : "?";
}

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static stk_idx *idx_of(lp_stacks *s)
{
    if (!s->idx)
        s->idx = lp_calloc(1, sizeof(stk_idx));
    return s->idx;
}

typedef struct frame_key {
    const lp_stacks *s;
    lp_str sym, dso;
    uint8_t kern;
} frame_key;

static int frame_eq(const void *ctx, uint64_t v)
{
    const frame_key *k = ctx;
    return k->s->fsym[v] == k->sym && k->s->fdso[v] == k->dso && k->s->fkern[v] == k->kern;
}

lp_status lp_stacks_frame_add(lp_stacks *s, const char *sym, size_t nsym, const char *dso, size_t ndso, int kernel,
                              uint32_t *id, lp_error *err)
{
    stk_idx *x = idx_of(s);
    frame_key k = {s, 0, 0, (uint8_t)(kernel != 0)};
    if (!x || lp_strtab_intern(&s->strs, sym, nsym, &k.sym) || lp_strtab_intern(&s->strs, dso, ndso, &k.dso))
        return nomem(err);
    uint64_t h = lp_hash_mix(((uint64_t)k.sym << 1) | k.kern, k.dso);
    uint64_t v = lp_hmap_find(&x->frames, h, frame_eq, &k, NULL);
    if (v != LP_HMAP_EMPTY) {
        *id = (uint32_t)v;
        return LP_OK;
    }
    if (s->nframes == UINT32_MAX - 1)
        return lp_error_set(err, LP_ERR_LIMIT, "more than 2^32 distinct frames");
    size_t c1 = s->capframes, c2 = s->capframes, c3 = s->capframes;
    if (lp_grow_at(&s->fsym, &c1, s->nframes + 1, sizeof *s->fsym) ||
        lp_grow_at(&s->fdso, &c2, s->nframes + 1, sizeof *s->fdso) ||
        lp_grow_at(&s->fkern, &c3, s->nframes + 1, sizeof *s->fkern))
        return nomem(err);
    s->capframes = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
    s->fsym[s->nframes] = k.sym, s->fdso[s->nframes] = k.dso, s->fkern[s->nframes] = k.kern;
    if (lp_hmap_add(&x->frames, h, s->nframes, err))
        return LP_ERR_NOMEM;
    *id = s->nframes++;
    return LP_OK;
}

typedef struct stack_key {
    const lp_stacks *s;
    const uint32_t *fr;
    uint32_t n;
} stack_key;

static int stack_eq(const void *ctx, uint64_t v)
{
    const stack_key *k = ctx;
    uint32_t a = k->s->soff[v], b = k->s->soff[v + 1];
    return b - a == k->n && memcmp(k->s->sfr + a, k->fr, k->n * sizeof *k->fr) == 0;
}

lp_status lp_stacks_stack_add(lp_stacks *s, const uint32_t *fr, uint32_t n, uint32_t *id, lp_error *err)
{
    if (n == 0) {
        *id = LP_NONE32_STK;
        return LP_OK;
    }
    stk_idx *x = idx_of(s);
    if (!x)
        return nomem(err);
    stack_key k = {s, fr, n};
    uint64_t h = lp_hash_bytes(fr, n * sizeof *fr);
    uint64_t v = lp_hmap_find(&x->stacks, h, stack_eq, &k, NULL);
    if (v != LP_HMAP_EMPTY) {
        *id = (uint32_t)v;
        return LP_OK;
    }
    uint64_t used = s->nstacks ? s->soff[s->nstacks] : 0;
    if (used + n > UINT32_MAX || s->nstacks == UINT32_MAX - 2)
        return lp_error_set(err, LP_ERR_LIMIT, "more than 2^32 stack frames in distinct stacks");
    if (lp_grow_at(&s->soff, &s->capstacks, (size_t)s->nstacks + 2, sizeof *s->soff) ||
        lp_grow_at(&s->sfr, &s->capsfr, (size_t)(used + n), sizeof *s->sfr))
        return nomem(err);
    s->soff[s->nstacks] = (uint32_t)used;
    memcpy(s->sfr + used, fr, n * sizeof *fr);
    s->soff[s->nstacks + 1] = (uint32_t)(used + n);
    if (lp_hmap_add(&x->stacks, h, s->nstacks, err))
        return LP_ERR_NOMEM;
    *id = s->nstacks++;
    return LP_OK;
}

lp_status lp_stacks_push(lp_stacks *s, int64_t start, int64_t end, uint32_t tid, uint32_t pid, lp_sstate st,
                         uint32_t stack, lp_error *err)
{
    if (s->n == s->cap) {
        size_t c = s->cap ? s->cap * 2 : 1024;
        int64_t *a = lp_reallocarray(s->start, c, sizeof *a);
        if (!a)
            return nomem(err);
        s->start = a;
        if (!(a = lp_reallocarray(s->end, c, sizeof *a)))
            return nomem(err);
        s->end = a;
        uint32_t *u = lp_reallocarray(s->tid, c, sizeof *u);
        if (!u)
            return nomem(err);
        s->tid = u;
        if (!(u = lp_reallocarray(s->pid, c, sizeof *u)))
            return nomem(err);
        s->pid = u;
        if (!(u = lp_reallocarray(s->stack, c, sizeof *u)))
            return nomem(err);
        s->stack = u;
        uint8_t *b = lp_reallocarray(s->state, c, 1);
        if (!b)
            return nomem(err);
        s->state = b;
        s->cap = c;
    }
    s->start[s->n] = start, s->end[s->n] = end < start ? start : end;
    s->tid[s->n] = tid, s->pid[s->n] = pid, s->state[s->n] = (uint8_t)st, s->stack[s->n] = stack;
    s->n++;
    return LP_OK;
}

/* ---- sorting ------------------------------------------------------------------------ */

typedef struct sort_ctx {
    const lp_stacks *s;
} sort_ctx;
static const lp_stacks *g_sort; /* qsort has no context; only used inside lp_stacks_sort */

static int cmp_sample(const void *a, const void *b)
{
    uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b;
    const lp_stacks *s = g_sort;
    if (s->start[i] != s->start[j])
        return s->start[i] < s->start[j] ? -1 : 1;
    if (s->tid[i] != s->tid[j])
        return s->tid[i] < s->tid[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

lp_status lp_stacks_sort(lp_stacks *s, lp_error *err)
{
    int sorted = 1;
    for (uint64_t i = 1; i < s->n && sorted; i++)
        sorted = s->start[i - 1] < s->start[i] || (s->start[i - 1] == s->start[i] && s->tid[i - 1] <= s->tid[i]);
    if (sorted)
        return LP_OK;
    uint64_t *perm = lp_reallocarray(NULL, s->n, sizeof *perm);
    void *tmp = lp_reallocarray(NULL, s->n, sizeof(int64_t));
    if (!perm || !tmp) {
        lp_free(perm);
        lp_free(tmp);
        return nomem(err);
    }
    for (uint64_t i = 0; i < s->n; i++)
        perm[i] = i;
    g_sort = s;
    qsort(perm, s->n, sizeof *perm, cmp_sample);
    g_sort = NULL;
#define PERMUTE(col, T)                                                                                                \
    do {                                                                                                               \
        T *t_ = tmp;                                                                                                   \
        for (uint64_t i = 0; i < s->n; i++)                                                                            \
            t_[i] = s->col[perm[i]];                                                                                   \
        memcpy(s->col, t_, s->n * sizeof(T));                                                                          \
    } while (0)
    PERMUTE(start, int64_t);
    PERMUTE(end, int64_t);
    PERMUTE(tid, uint32_t);
    PERMUTE(pid, uint32_t);
    PERMUTE(stack, uint32_t);
    PERMUTE(state, uint8_t);
#undef PERMUTE
    lp_free(perm);
    lp_free(tmp);
    return LP_OK;
}

/* ---- detection and loading --------------------------------------------------------------- */

int lp_stacks_detect(const unsigned char *head, size_t n)
{
    /* perf script: "comm [pid/]tid [cpu] secs.frac: ..." then tab-indented frames;
     * collapsed: "ts tid frames weight" with ';' between frames. Look at the first
     * non-comment line. */
    size_t i = 0;
    while (i < n && (head[i] == '#' || head[i] == '\n')) {
        while (i < n && head[i] != '\n')
            i++;
        i++;
    }
    if (i >= n)
        return 0;
    size_t e = i;
    while (e < n && head[e] != '\n')
        e++;
    int colon_time = 0, semis = 0, digits_first = head[i] >= '0' && head[i] <= '9';
    for (size_t k = i; k + 1 < e; k++) {
        if (head[k] == '.' && k > i && head[k - 1] >= '0' && head[k - 1] <= '9') {
            size_t m = k + 1;
            while (m < e && head[m] >= '0' && head[m] <= '9')
                m++;
            if (m > k + 1 && m < e && head[m] == ':')
                colon_time = 1;
        }
        if (head[k] == ';')
            semis++;
    }
    if (colon_time)
        return 1;
    if (digits_first)
        return 2;
    (void)semis;
    return 0;
}

lp_status lp_stacks_load(lp_stacks *s, const char *path, lp_diags *ds, lp_error *err)
{
    lp_input *in;
    lp_status st = lp_input_open(&in, path, err);
    if (st)
        return st;
    const void *head;
    size_t n;
    if ((st = lp_input_peek(in, &head, &n, err))) {
        lp_input_close(in);
        return st;
    }
    int kind = lp_stacks_detect(head, n);
    uint64_t before = s->n;
    if (kind == 1)
        st = lp_stacks_read_perf(s, in, path, ds, err);
    else if (kind == 2)
        st = lp_stacks_read_collapsed(s, in, path, ds, err);
    else
        st = lp_error_set(err, LP_ERR_FORMAT,
                          "'%s' is neither `perf script` output nor timestamped collapsed stacks "
                          "(docs/formats/perf-script.md, collapsed-stacks.md)",
                          path);
    lp_input_close(in);
    if (!st && s->n == before)
        st = lp_error_set(err, LP_ERR_DATA, "'%s' holds no stack sample (%llu lines, %llu malformed)", path,
                          (unsigned long long)s->nlines, (unsigned long long)s->nbad);
    if (!st)
        st = lp_stacks_sort(s, err);
    return st;
}
