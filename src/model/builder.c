/* builder.c: building an lp_trace from records, enforcing MODEL.md's rules.
 *
 * Records arrive in any order across workers (and usually in time order within one).
 * They are appended to the trace's columns as they come, with two temporary
 * columns (worker, source line) that lp_builder_finish() uses and frees. Finishing:
 *   1. groups activities by worker (a stable counting sort, skipped when the input
 *      is already grouped) and sorts the workers whose records came out of order;
 *   2. drops activities that overlap an earlier one of the same worker (reported);
 *   3. matches send and receive halves by (sender, receiver, id) into messages,
 *      one per receive (multicast), reporting duplicates and unmatched halves;
 *   4. fills the gaps of every worker timeline (MODEL.md "Gaps") in place.
 * Each step is O(n) plus sorting what was out of order. Temporary memory peaks at
 * one column plus a 4-byte permutation per activity. Worker and type names, attribute
 * lists and the sends waiting for their receives are found through the library's hash
 * table (base/hashmap.h, lp_hmap32). The per-record columns are listed once
 * (TRACE_ACT_COLUMNS and friends below), and every step that moves records goes
 * through those lists.
 */
#include "longpole/model/trace.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

typedef struct half {
    uint32_t w;        /* the worker that logged it */
    uint32_t peer;     /* receiver (for a send) or sender (for a receive) */
    int64_t time;
    uint64_t id;
    uint32_t attrs;
    uint32_t line;
    uint16_t src;
} half;

typedef struct source {
    char *name;
} source;

struct lp_builder {
    lp_trace *t;
    lp_diags *diags;
    lp_builder_opts opts;

    source *srcs;            /* input names; srcs[cur] receives records */
    uint16_t nsrc, cursrc;

    size_t wcap;             /* capacity of per-worker arrays */
    lp_hmap32 wmap;          /* worker name (lp_str) -> worker */
    int64_t *wlast;          /* latest activity start seen per worker */
    uint8_t *wunsorted;      /* worker's activities came out of time order */
    uint8_t *wdeclared;      /* worker had a W record */
    const char *lastw;       /* one-entry cache for lp_builder_worker */
    size_t lastwlen;
    uint32_t lastwid;

    lp_hmap32 tmap;          /* type name (lp_str) -> type */

    size_t acap;             /* capacity of activity columns */
    uint32_t *aworker, *aline;
    uint16_t *asrc;          /* allocated once a second source appears */
    size_t mcap;
    uint32_t *mline;
    uint16_t *msrcidx;

    half *sends, *recvs;
    size_t nsends, capsends, nrecvs, caprecvs;

    size_t apcap;            /* capacity of t->apool */
    lp_hmap32 lmap;          /* attribute lists: hash of the pairs (hashed key) -> offset in t->apool */
};

/* The per-record columns, each listed once: growing, permuting, reordering, dropping
 * overlaps, filling gaps and shrinking all go through these lists.
 *  TRACE_ACT_COLUMNS(X): the trace's activity columns, X(column, its value in the gap
 *    activity made from the gap `g`);
 *  RECORD_ACT_COLUMNS(X): the builder's own per-activity columns, X(column, optional),
 *    freed once the halves are matched (before gaps are filled); an optional column is
 *    NULL until a second source appears (lp_builder_source);
 *  TRACE_MSG_COLUMNS(X), RECORD_MSG_COLUMNS(X): the same for messages. */
#define TRACE_ACT_COLUMNS(X) \
    X(astart, g->s) X(aend, g->e) X(atype, g->type) X(aop, LP_STR_NONE) X(aattr, 0) X(aflags, LP_ACT_GAP)
#define RECORD_ACT_COLUMNS(X) X(aworker, 0) X(aline, 0) X(asrc, 1)
#define TRACE_MSG_COLUMNS(X) X(msrc) X(mdst) X(msend) X(mrecv) X(mid) X(mattr) X(mflags)
#define RECORD_MSG_COLUMNS(X) X(mline, 0) X(msrcidx, 1)

/* Resize column `col` to n elements; `fail` runs if that is impossible. */
#define RESIZE(col, n, fail)                                   \
    do {                                                       \
        void *p_ = lp_reallocarray((col), (n), sizeof *(col)); \
        if (!p_)                                               \
            fail;                                              \
        (col) = p_;                                            \
    } while (0)

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

/* ---- lifecycle ------------------------------------------------------------------ */

lp_status lp_builder_new(lp_builder **out, lp_diags *diags, const lp_builder_opts *opts, lp_error *err)
{
    *out = NULL;
    lp_builder *b = lp_calloc(1, sizeof *b);
    if (!b)
        return nomem(err);
    b->diags = diags;
    if (opts)
        b->opts = *opts;
    b->t = lp_calloc(1, sizeof *b->t);
    if (!b->t || lp_strtab_init(&b->t->strs))
        goto oom;
    b->t->apool = lp_malloc(64 * sizeof(uint32_t));
    if (!b->t->apool)
        goto oom;
    b->apcap = 64;
    b->t->apool[0] = 0;
    b->t->napool = 1;
    for (int i = 0; i < LP_TYPE_NBUILTIN; i++) {
        uint16_t ty;
        if (lp_builder_type(b, lp_type_builtin_name(i), strlen(lp_type_builtin_name(i)), &ty, err)) {
            lp_builder_free(b);
            return err ? err->status : LP_ERR_NOMEM;
        }
    }
    *out = b;
    return LP_OK;
oom:
    lp_builder_free(b);
    return nomem(err);
}

/* Free the per-record columns and halves (not needed once the halves are matched). */
static void free_records(lp_builder *b)
{
#define FREE_COL(col, opt) \
    lp_free(b->col);       \
    b->col = NULL;
    RECORD_ACT_COLUMNS(FREE_COL)
    RECORD_MSG_COLUMNS(FREE_COL)
#undef FREE_COL
    lp_free(b->sends);
    lp_free(b->recvs);
    b->sends = b->recvs = NULL;
}

static void free_temp(lp_builder *b)
{
    lp_hmap32_release(&b->wmap);
    lp_free(b->wlast);
    lp_free(b->wunsorted);
    lp_free(b->wdeclared);
    lp_hmap32_release(&b->tmap);
    free_records(b);
    lp_hmap32_release(&b->lmap);
    for (uint16_t i = 0; i < b->nsrc; i++)
        lp_free(b->srcs[i].name);
    lp_free(b->srcs);
    b->wlast = NULL;
    b->wunsorted = b->wdeclared = NULL;
    b->srcs = NULL;
    b->nsrc = 0;
}

void lp_builder_free(lp_builder *b)
{
    if (!b)
        return;
    free_temp(b);
    lp_trace_free(b->t);
    lp_free(b);
}

lp_strtab *lp_builder_strtab(lp_builder *b) { return &b->t->strs; }
lp_diags *lp_builder_diags(lp_builder *b) { return b->diags; }
const lp_trace *lp_builder_trace(const lp_builder *b) { return b->t; }

uint64_t lp_builder_records(const lp_builder *b) { return b->t->nacts + b->t->nmsgs + b->nsends + b->nrecvs; }

static const char *srcname(const lp_builder *b, uint16_t s) { return b->nsrc ? b->srcs[s].name : NULL; }

lp_status lp_builder_source(lp_builder *b, const char *name, lp_error *err)
{
    for (uint16_t i = 0; i < b->nsrc; i++)
        if (strcmp(b->srcs[i].name, name) == 0) {
            b->cursrc = i;
            return LP_OK;
        }
    if (b->nsrc == UINT16_MAX)
        return lp_error_set(err, LP_ERR_LIMIT, "too many input files (at most %u)", UINT16_MAX);
    source *s = lp_reallocarray(b->srcs, (size_t)b->nsrc + 1, sizeof *s);
    if (!s)
        return nomem(err);
    b->srcs = s;
    s[b->nsrc].name = lp_strndup(name, strlen(name));
    if (!s[b->nsrc].name)
        return nomem(err);
    if (b->nsrc == 1) { /* a second source: start recording where each record came from */
        b->asrc = lp_calloc(b->acap ? b->acap : 1, sizeof *b->asrc);
        b->msrcidx = lp_calloc(b->mcap ? b->mcap : 1, sizeof *b->msrcidx);
        if (!b->asrc || !b->msrcidx)
            return nomem(err);
    }
    b->cursrc = b->nsrc++;
    return LP_OK;
}

/* ---- names --------------------------------------------------------------------- */

static int grow_workers(lp_builder *b, size_t need)
{
    if (need <= b->wcap)
        return 0;
    size_t ncap = b->wcap ? b->wcap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    lp_trace *t = b->t;
    lp_str *wn = lp_reallocarray(t->wname, ncap, sizeof *wn);
    if (!wn)
        return -1;
    t->wname = wn;
    uint32_t *wa = lp_reallocarray(t->wattr, ncap, sizeof *wa);
    if (!wa)
        return -1;
    t->wattr = wa;
    int64_t *wl = lp_reallocarray(b->wlast, ncap, sizeof *wl);
    if (!wl)
        return -1;
    b->wlast = wl;
    uint8_t *wu = lp_reallocarray(b->wunsorted, ncap, 1);
    if (!wu)
        return -1;
    b->wunsorted = wu;
    uint8_t *wd = lp_reallocarray(b->wdeclared, ncap, 1);
    if (!wd)
        return -1;
    b->wdeclared = wd;
    b->wcap = ncap;
    return 0;
}

lp_status lp_builder_worker(lp_builder *b, const char *name, size_t n, uint32_t *w, lp_error *err)
{
    if (b->lastw && n == b->lastwlen && memcmp(name, b->lastw, n) == 0) {
        *w = b->lastwid;
        return LP_OK;
    }
    lp_trace *t = b->t;
    lp_str s;
    if (lp_strtab_intern(&t->strs, name, n, &s))
        return nomem(err);
    uint32_t id;
    if (!lp_hmap32_get(&b->wmap, s, &id)) {
        if (t->nworkers >= LP_NONE32 - 1)
            return lp_error_set(err, LP_ERR_LIMIT, "too many workers");
        if (grow_workers(b, (size_t)t->nworkers + 1))
            return nomem(err);
        id = t->nworkers;
        t->wname[id] = s;
        t->wattr[id] = 0;
        b->wlast[id] = INT64_MIN;
        b->wunsorted[id] = 0;
        b->wdeclared[id] = 0;
        if (lp_hmap32_put(&b->wmap, s, id, NULL))
            return nomem(err);
        t->nworkers++;
    }
    b->lastw = lp_strtab_get(&t->strs, s);
    b->lastwlen = n;
    b->lastwid = id;
    *w = id;
    return LP_OK;
}

static int attrs_equal(const lp_trace *t, uint32_t a, uint32_t b)
{
    if (a == b)
        return 1;
    uint32_t na = t->apool[a];
    return na == t->apool[b] && memcmp(t->apool + a + 1, t->apool + b + 1, 2 * na * sizeof(uint32_t)) == 0;
}

lp_status lp_builder_worker_attrs(lp_builder *b, uint32_t w, uint32_t attrs, uint64_t line, lp_error *err)
{
    lp_trace *t = b->t;
    if (w >= t->nworkers)
        return lp_error_set(err, LP_ERR_ARG, "no worker %u", w);
    if (b->wdeclared[w] && !attrs_equal(t, t->wattr[w], attrs)) {
        lp_diags_report(b->diags, LP_SEV_WARNING, LP_RULE_WORKER_ATTR, srcname(b, b->cursrc), line,
                        "worker '%s' declared again with different attributes; keeping the first",
                        lp_trace_worker_name(t, w));
        return LP_OK;
    }
    b->wdeclared[w] = 1;
    t->wattr[w] = attrs;
    return LP_OK;
}

lp_status lp_builder_type(lp_builder *b, const char *name, size_t n, uint16_t *type, lp_error *err)
{
    lp_trace *t = b->t;
    lp_str s;
    if (lp_strtab_intern(&t->strs, name, n, &s))
        return nomem(err);
    uint32_t id;
    if (!lp_hmap32_get(&b->tmap, s, &id)) {
        if (t->ntypes >= LP_TYPE_MAX)
            return lp_error_set(err, LP_ERR_LIMIT, "too many activity types (at most %u)", LP_TYPE_MAX);
        lp_str *tn = lp_reallocarray(t->type_name, (size_t)t->ntypes + 1, sizeof *tn);
        if (!tn)
            return nomem(err);
        t->type_name = tn;
        id = t->ntypes;
        tn[id] = s;
        if (lp_hmap32_put(&b->tmap, s, id, NULL))
            return nomem(err);
        t->ntypes++;
    }
    *type = (uint16_t)id;
    return LP_OK;
}

/* An attribute list being looked up, for the table's equality callback. */
typedef struct listkey {
    const uint32_t *apool;
    const lp_str *kv;
    uint32_t npairs;
} listkey;

static inline int same_list(const void *ctx, uint64_t off)
{
    const listkey *k = ctx;
    return k->apool[off] == k->npairs && memcmp(k->apool + off + 1, k->kv, 2 * (size_t)k->npairs * 4) == 0;
}

lp_status lp_builder_attrs(lp_builder *b, const lp_str *kv, uint32_t npairs, uint32_t *list, lp_error *err)
{
    lp_trace *t = b->t;
    if (npairs == 0) {
        *list = 0;
        return LP_OK;
    }
    /* the table compares the hash first, so the pool is only read for a likely match */
    uint32_t h = (uint32_t)XXH3_64bits(kv, 2 * (size_t)npairs * sizeof *kv);
    listkey k = {t->apool, kv, npairs};
    uint32_t found = lp_hmap32_find(&b->lmap, h, same_list, &k, NULL);
    if (found != LP_HMAP32_EMPTY) {
        *list = found;
        return LP_OK;
    }
    size_t need = t->napool + 1 + 2 * (size_t)npairs;
    if (need >= LP_NONE32)
        return lp_error_set(err, LP_ERR_LIMIT, "too many distinct attribute lists");
    void *p = t->apool;
    if (lp_grow(&p, &b->apcap, need, sizeof(uint32_t)))
        return nomem(err);
    t->apool = p;
    uint32_t off = (uint32_t)t->napool;
    if (lp_hmap32_add(&b->lmap, h, off, NULL))
        return nomem(err);
    t->apool[off] = npairs;
    memcpy(t->apool + off + 1, kv, 2 * (size_t)npairs * 4);
    t->napool = need;
    *list = off;
    return LP_OK;
}

lp_status lp_builder_msgid(lp_builder *b, const char *s, size_t n, uint64_t *id, lp_error *err)
{
    uint64_t v;
    if (lp_parse_canonical_u63(s, n, &v)) {
        *id = v;
        return LP_OK;
    }
    lp_str str;
    if (lp_strtab_intern(&b->t->strs, s, n, &str))
        return nomem(err);
    *id = LP_MSGID_STR | str;
    return LP_OK;
}

/* ---- records ------------------------------------------------------------------- */

static int grow_acts(lp_builder *b)
{
    lp_trace *t = b->t;
    size_t ncap = b->acap < 1024 ? 1024 : b->acap + b->acap / 2;
#define GROW_T(col, gapval) RESIZE(t->col, ncap, return -1);
#define GROW_R(col, opt) \
    if (!(opt) || b->col) \
        RESIZE(b->col, ncap, return -1);
    TRACE_ACT_COLUMNS(GROW_T)
    RECORD_ACT_COLUMNS(GROW_R)
    b->acap = ncap;
    return 0;
}

static int grow_msgs(lp_builder *b)
{
    lp_trace *t = b->t;
    size_t ncap = b->mcap < 1024 ? 1024 : b->mcap + b->mcap / 2;
#define GROW_M(col) RESIZE(t->col, ncap, return -1);
    TRACE_MSG_COLUMNS(GROW_M)
    RECORD_MSG_COLUMNS(GROW_R)
#undef GROW_M
#undef GROW_R
#undef GROW_T
    b->mcap = ncap;
    return 0;
}

lp_status lp_builder_activity(lp_builder *b, uint32_t w, int64_t start, int64_t end, uint16_t type,
                              lp_str op, uint32_t attrs, uint64_t line, lp_error *err)
{
    lp_trace *t = b->t;
    if (w >= t->nworkers || type >= t->ntypes)
        return lp_error_set(err, LP_ERR_ARG, "activity with invalid worker or type id");
    if (end < start) {
        lp_diags_report(b->diags, LP_SEV_ERROR, LP_RULE_END_BEFORE_START, srcname(b, b->cursrc), line,
                        "activity on worker '%s' ends before it starts (start %lld, end %lld); record dropped",
                        lp_trace_worker_name(t, w), (long long)start, (long long)end);
        return LP_OK;
    }
    if (t->nacts >= (uint64_t)LP_NONE32 - 1)
        return lp_error_set(err, LP_ERR_LIMIT, "more than %u activities", LP_NONE32 - 2);
    if (t->nacts == b->acap && grow_acts(b))
        return nomem(err);
    if (start < b->wlast[w]) {
        if (!b->wunsorted[w])
            lp_diags_report(b->diags, LP_SEV_WARNING, LP_RULE_ORDER, srcname(b, b->cursrc), line,
                            "activity on worker '%s' starts at %lld, before the previous one (%lld): "
                            "records of this worker are not in time order",
                            lp_trace_worker_name(t, w), (long long)start, (long long)b->wlast[w]);
        b->wunsorted[w] = 1;
    } else {
        b->wlast[w] = start;
    }
    uint64_t i = t->nacts++;
    t->astart[i] = start;
    t->aend[i] = end;
    t->atype[i] = type;
    t->aop[i] = op;
    t->aattr[i] = attrs;
    t->aflags[i] = 0;
    b->aworker[i] = w;
    b->aline[i] = lp_line32(line);
    if (b->asrc)
        b->asrc[i] = b->cursrc;
    return LP_OK;
}

static void report_skew(lp_builder *b, uint16_t src, uint64_t line, uint32_t from, int64_t send, uint32_t to, int64_t recv)
{
    lp_diags_report(b->diags, LP_SEV_WARNING, LP_RULE_RECV_BEFORE_SEND, srcname(b, src), line,
                    "message %s -> %s received at %lld, %lld ns before it was sent (clock skew?); "
                    "its weight counts as 0",
                    lp_trace_worker_name(b->t, from), lp_trace_worker_name(b->t, to), (long long)recv,
                    (long long)(send - recv));
}

static lp_status add_message(lp_builder *b, uint32_t src, int64_t send, uint32_t dst, int64_t recv, uint64_t id,
                             uint32_t attrs, uint8_t flags, uint64_t line, uint16_t srcidx, lp_error *err)
{
    lp_trace *t = b->t;
    if (t->nmsgs >= (uint64_t)LP_NONE32 - 1)
        return lp_error_set(err, LP_ERR_LIMIT, "more than %u messages", LP_NONE32 - 2);
    if (t->nmsgs == b->mcap && grow_msgs(b))
        return nomem(err);
    if (recv < send) {
        flags |= LP_MSG_SKEW;
        t->nskew++;
        report_skew(b, srcidx, line, src, send, dst, recv);
    }
    uint64_t i = t->nmsgs++;
    t->msrc[i] = src;
    t->mdst[i] = dst;
    t->msend[i] = send;
    t->mrecv[i] = recv;
    t->mid[i] = id;
    t->mattr[i] = attrs;
    t->mflags[i] = flags;
    b->mline[i] = lp_line32(line);
    if (b->msrcidx)
        b->msrcidx[i] = srcidx;
    return LP_OK;
}

lp_status lp_builder_message(lp_builder *b, uint32_t src, int64_t send, uint32_t dst, int64_t recv, uint64_t id,
                             uint32_t attrs, uint64_t line, lp_error *err)
{
    if (src >= b->t->nworkers || dst >= b->t->nworkers)
        return lp_error_set(err, LP_ERR_ARG, "message with invalid worker id");
    return add_message(b, src, send, dst, recv, id, attrs, 0, line, b->cursrc, err);
}

static lp_status add_half(lp_builder *b, half **arr, size_t *n, size_t *cap, uint32_t w, int64_t time,
                          uint32_t peer, uint64_t id, uint32_t attrs, uint64_t line, lp_error *err)
{
    if (w >= b->t->nworkers || peer >= b->t->nworkers)
        return lp_error_set(err, LP_ERR_ARG, "message half with invalid worker id");
    if (*n >= LP_NONE32 - 1)
        return lp_error_set(err, LP_ERR_LIMIT, "too many message halves");
    void *p = *arr;
    if (lp_grow(&p, cap, *n + 1, sizeof(half)))
        return nomem(err);
    *arr = p;
    half *h = &(*arr)[(*n)++];
    h->w = w;
    h->peer = peer;
    h->time = time;
    h->id = id;
    h->attrs = attrs;
    h->line = lp_line32(line);
    h->src = b->cursrc;
    return LP_OK;
}

lp_status lp_builder_send(lp_builder *b, uint32_t w, int64_t time, uint32_t dst, uint64_t id, uint32_t attrs,
                          uint64_t line, lp_error *err)
{
    return add_half(b, &b->sends, &b->nsends, &b->capsends, w, time, dst, id, attrs, line, err);
}

lp_status lp_builder_recv(lp_builder *b, uint32_t w, int64_t time, uint32_t src, uint64_t id, uint32_t attrs,
                          uint64_t line, lp_error *err)
{
    return add_half(b, &b->recvs, &b->nrecvs, &b->caprecvs, w, time, src, id, attrs, line, err);
}

/* ---- finishing ------------------------------------------------------------------ */

/* A column of n elements of `elem` bytes moved to new[dst[i]] = old[i] (old is freed);
 * NULL if out of memory (old is kept). */
static void *permuted(void *col, size_t elem, const uint32_t *dst, uint64_t n)
{
    char *old = col, *nw = lp_malloc(n ? n * elem : 1);
    if (!nw)
        return NULL;
    switch (elem) {
    case 1:
        for (uint64_t i = 0; i < n; i++)
            nw[dst[i]] = old[i];
        break;
    case 2:
        for (uint64_t i = 0; i < n; i++)
            ((uint16_t *)(void *)nw)[dst[i]] = ((uint16_t *)(void *)old)[i];
        break;
    case 4:
        for (uint64_t i = 0; i < n; i++)
            ((uint32_t *)(void *)nw)[dst[i]] = ((uint32_t *)(void *)old)[i];
        break;
    default:
        for (uint64_t i = 0; i < n; i++)
            ((uint64_t *)(void *)nw)[dst[i]] = ((uint64_t *)(void *)old)[i];
        break;
    }
    lp_free(old);
    return nw;
}

static int permute_acts(lp_builder *b, const uint32_t *dst)
{
    lp_trace *t = b->t;
    uint64_t n = t->nacts;
#define PERMUTE(col)                                             \
    if (col) {                                                   \
        void *p_ = permuted((col), sizeof *(col), dst, n);       \
        if (!p_)                                                 \
            return -1;                                           \
        (col) = p_;                                              \
    }
#define PERMUTE_T(col, gapval) PERMUTE(t->col)
#define PERMUTE_R(col, opt) PERMUTE(b->col)
    TRACE_ACT_COLUMNS(PERMUTE_T)
    RECORD_ACT_COLUMNS(PERMUTE_R)
#undef PERMUTE_R
#undef PERMUTE_T
#undef PERMUTE
    b->acap = n;
    return 0;
}

typedef struct sortkey {
    int64_t start, end;
    uint32_t idx;
} sortkey;

static int cmp_sortkey(const void *pa, const void *pb)
{
    const sortkey *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Reorder elements [lo, lo+cnt) of a column of `size`-byte elements so that position r
 * holds old position lo + k[r].idx; tmp holds cnt elements. */
static void reorder_col(void *col, size_t size, uint64_t lo, const sortkey *k, uint64_t cnt, char *tmp)
{
    char *base = (char *)col + lo * size;
    memcpy(tmp, base, cnt * size);
    for (uint64_t r = 0; r < cnt; r++)
        memcpy(base + r * size, tmp + (uint64_t)k[r].idx * size, size);
}

/* Reorder activities [lo, lo+cnt) so that position r holds old position lo + k[r].idx. */
static int reorder_range(lp_builder *b, uint64_t lo, const sortkey *k, uint64_t cnt)
{
    lp_trace *t = b->t;
    char *tmp = lp_malloc(cnt * 8);
    if (!tmp)
        return -1;
#define REORDER_T(col, gapval) reorder_col(t->col, sizeof *t->col, lo, k, cnt, tmp);
#define REORDER_R(col, opt) \
    if (b->col)             \
        reorder_col(b->col, sizeof *b->col, lo, k, cnt, tmp);
    TRACE_ACT_COLUMNS(REORDER_T)
    RECORD_ACT_COLUMNS(REORDER_R)
#undef REORDER_R
#undef REORDER_T
    lp_free(tmp);
    return 0;
}

/* Step 1: group by worker (stable), then sort the workers whose records came out of
 * time order. Fills t->wfirst. */
static lp_status group_activities(lp_builder *b, lp_error *err)
{
    lp_trace *t = b->t;
    uint64_t n = t->nacts;
    uint32_t nw = t->nworkers;
    t->wfirst = lp_calloc((size_t)nw + 1, sizeof *t->wfirst);
    if (!t->wfirst)
        return nomem(err);
    int grouped = 1;
    for (uint64_t i = 0; i < n; i++) {
        t->wfirst[b->aworker[i] + 1]++;
        if (i && b->aworker[i] < b->aworker[i - 1])
            grouped = 0;
    }
    for (uint32_t w = 0; w < nw; w++)
        t->wfirst[w + 1] += t->wfirst[w];
    if (!grouped) {
        uint32_t *dst = lp_malloc((n ? n : 1) * sizeof *dst);
        uint64_t *next = lp_malloc(((size_t)nw + 1) * sizeof *next);
        if (!dst || !next) {
            lp_free(dst);
            lp_free(next);
            return nomem(err);
        }
        memcpy(next, t->wfirst, ((size_t)nw + 1) * sizeof *next);
        for (uint64_t i = 0; i < n; i++)
            dst[i] = (uint32_t)next[b->aworker[i]]++;
        lp_free(next);
        int rc = permute_acts(b, dst);
        lp_free(dst);
        if (rc)
            return nomem(err);
    }
    for (uint32_t w = 0; w < nw; w++) {
        if (!b->wunsorted[w])
            continue;
        uint64_t lo = t->wfirst[w], cnt = t->wfirst[w + 1] - lo;
        sortkey *k = lp_malloc((cnt ? cnt : 1) * sizeof *k);
        if (!k)
            return nomem(err);
        for (uint64_t j = 0; j < cnt; j++) {
            k[j].start = t->astart[lo + j];
            k[j].end = t->aend[lo + j];
            k[j].idx = (uint32_t)j;
        }
        qsort(k, cnt, sizeof *k, cmp_sortkey);
        int rc = reorder_range(b, lo, k, cnt);
        lp_free(k);
        if (rc)
            return nomem(err);
    }
    return LP_OK;
}

/* Step 2: drop activities that overlap the previous kept one of their worker. */
static lp_status drop_overlaps(lp_builder *b, lp_error *err)
{
    lp_trace *t = b->t;
    uint64_t out = 0;
    uint64_t wstart = 0;
    for (uint32_t w = 0; w < t->nworkers; w++) {
        uint64_t lo = t->wfirst[w], hi = t->wfirst[w + 1];
        t->wfirst[w] = wstart;
        uint64_t prev = UINT64_MAX; /* index (in output) of the last kept activity */
        for (uint64_t i = lo; i < hi; i++) {
            if (prev != UINT64_MAX && t->astart[i] < t->aend[prev]) {
                lp_diags_report(b->diags, LP_SEV_ERROR, LP_RULE_OVERLAP,
                                srcname(b, b->asrc ? b->asrc[i] : 0), b->aline[i],
                                "activity [%lld, %lld] on worker '%s' overlaps [%lld, %lld] (%s%sline %u); "
                                "record dropped",
                                (long long)t->astart[i], (long long)t->aend[i], lp_trace_worker_name(t, w),
                                (long long)t->astart[prev], (long long)t->aend[prev],
                                b->nsrc > 1 ? srcname(b, b->asrc[prev]) : "", b->nsrc > 1 ? " " : "",
                                b->aline[prev]);
                continue;
            }
            if (out != i) {
#define MOVE_T(col, gapval) t->col[out] = t->col[i];
#define MOVE_R(col, opt)  \
    if (!(opt) || b->col) \
        b->col[out] = b->col[i];
                TRACE_ACT_COLUMNS(MOVE_T)
                RECORD_ACT_COLUMNS(MOVE_R)
#undef MOVE_R
#undef MOVE_T
            }
            prev = out++;
        }
        wstart = out;
    }
    t->wfirst[t->nworkers] = out;
    t->nacts = out;
    (void)err;
    return LP_OK;
}

/* Step 3: match halves: sends in a table keyed by a hash of (sender, receiver, id). */
typedef struct hkey {
    const half *sends;
    uint32_t from, to;
    uint64_t id;
} hkey;

static inline uint32_t hkey_hash(const hkey *k)
{
    return (uint32_t)lp_hash_mix(k->id, (uint64_t)k->from << 32 | k->to);
}

static inline int same_send(const void *ctx, uint64_t i)
{
    const hkey *k = ctx;
    const half *o = &k->sends[i];
    return o->w == k->from && o->peer == k->to && o->id == k->id;
}

static lp_status match_halves(lp_builder *b, lp_error *err)
{
    lp_trace *t = b->t;
    if (!b->nsends && !b->nrecvs)
        return LP_OK;
    lp_hmap32 tab; /* send index; room for every send, so no insertion fails */
    uint8_t *matched = lp_calloc(b->nsends ? b->nsends : 1, 1);
    if (!matched || lp_hmap32_init(&tab, b->nsends, NULL)) {
        lp_free(matched);
        return nomem(err);
    }
    lp_status st = LP_OK;
    for (size_t i = 0; i < b->nsends; i++) {
        const half *s = &b->sends[i];
        hkey k = {b->sends, s->w, s->peer, s->id};
        int added;
        uint32_t first = lp_hmap32_find_or_add(&tab, hkey_hash(&k), same_send, &k, (uint32_t)i, &added);
        if (!added) {
            const half *o = &b->sends[first];
            char idb[64];
            lp_diags_report(b->diags, LP_SEV_ERROR, LP_RULE_DUP_SEND, srcname(b, s->src), s->line,
                            "second send %s -> %s with message id '%s' (first at %s%sline %u); record dropped",
                            lp_trace_worker_name(t, s->w), lp_trace_worker_name(t, s->peer),
                            lp_trace_msgid(t, s->id, idb, sizeof idb), b->nsrc > 1 ? srcname(b, o->src) : "",
                            b->nsrc > 1 ? " " : "", o->line);
            matched[i] = 1; /* not reported again as unmatched */
        }
    }
    for (size_t i = 0; i < b->nrecvs && st == LP_OK; i++) {
        const half *r = &b->recvs[i];
        hkey k = {b->sends, r->peer, r->w, r->id};
        uint32_t si = lp_hmap32_find(&tab, hkey_hash(&k), same_send, &k, NULL);
        const half *s = NULL;
        if (si != LP_HMAP32_EMPTY) {
            s = &b->sends[si];
            matched[si] = 1;
        }
        if (!s) {
            char idb[64];
            lp_diags_report(b->diags, LP_SEV_ERROR, LP_RULE_UNMATCHED_RECV, srcname(b, r->src), r->line,
                            "receive on '%s' from '%s' with message id '%s' has no matching send; record dropped",
                            lp_trace_worker_name(t, r->w), lp_trace_worker_name(t, r->peer),
                            lp_trace_msgid(t, r->id, idb, sizeof idb));
            continue;
        }
        uint32_t attrs = s->attrs;
        if (r->attrs && s->attrs && r->attrs != s->attrs) {
            uint32_t ns = t->apool[s->attrs], nr = t->apool[r->attrs];
            lp_str *kv = lp_malloc(2 * ((size_t)ns + nr) * sizeof *kv);
            if (!kv) {
                st = nomem(err);
                break;
            }
            memcpy(kv, t->apool + s->attrs + 1, 2 * (size_t)ns * 4);
            memcpy(kv + 2 * ns, t->apool + r->attrs + 1, 2 * (size_t)nr * 4);
            st = lp_builder_attrs(b, kv, ns + nr, &attrs, err);
            lp_free(kv);
            if (st)
                break;
        } else if (r->attrs) {
            attrs = r->attrs;
        }
        st = add_message(b, s->w, s->time, r->w, r->time, r->id, attrs, LP_MSG_HALVES, r->line, r->src, err);
    }
    for (size_t i = 0; i < b->nsends && st == LP_OK; i++) {
        if (matched[i])
            continue;
        const half *s = &b->sends[i];
        char idb[64];
        lp_diags_report(b->diags, LP_SEV_ERROR, LP_RULE_UNMATCHED_SEND, srcname(b, s->src), s->line,
                        "send from '%s' to '%s' with message id '%s' has no matching receive; record dropped",
                        lp_trace_worker_name(t, s->w), lp_trace_worker_name(t, s->peer),
                        lp_trace_msgid(t, s->id, idb, sizeof idb));
    }
    lp_hmap32_release(&tab);
    lp_free(matched);
    return st;
}

/* Step 4: gap filling. */
typedef struct gap {
    int64_t s, e;
    uint32_t w;
    uint16_t type;
} gap;

typedef struct gapvec {
    gap *v;
    size_t n, cap;
} gapvec;

static int push_gap(gapvec *g, uint32_t w, int64_t s, int64_t e, uint16_t type)
{
    void *p = g->v;
    if (lp_grow(&p, &g->cap, g->n + 1, sizeof(gap)))
        return -1;
    g->v = p;
    g->v[g->n++] = (gap){s, e, w, type};
    return 0;
}

/* Emit gaps [cur, y] at each instant y of `pts` in (cur, limit), then [cur, limit]. */
static int gaps_in(gapvec *g, uint32_t w, int64_t cur, int64_t limit, const lp_endpoints *snd,
                   const lp_endpoints *rcv, const lp_trace *t, uint64_t *si, uint64_t *ri)
{
    uint64_t send_hi = snd->off[w + 1], recv_hi = rcv->off[w + 1];
    /* skip instants at or before cur */
    while (*si < send_hi && snd->time[*si] <= cur)
        (*si)++;
    while (*ri < recv_hi && rcv->time[*ri] <= cur)
        (*ri)++;
    for (;;) {
        int64_t ns = *si < send_hi ? snd->time[*si] : INT64_MAX;
        int64_t nr = *ri < recv_hi ? rcv->time[*ri] : INT64_MAX;
        int64_t y = ns < nr ? ns : nr;
        if (y >= limit)
            break;
        /* gap [cur, y]: waiting iff a receive happens at y */
        if (push_gap(g, w, cur, y, nr == y ? LP_TYPE_WAITING : LP_TYPE_UNKNOWN))
            return -1;
        cur = y;
        while (*si < send_hi && snd->time[*si] <= cur)
            (*si)++;
        while (*ri < recv_hi && rcv->time[*ri] <= cur)
            (*ri)++;
    }
    if (limit > cur) {
        int64_t nr = *ri < recv_hi ? rcv->time[*ri] : INT64_MAX;
        if (push_gap(g, w, cur, limit, nr == limit ? LP_TYPE_WAITING : LP_TYPE_UNKNOWN))
            return -1;
    }
    return 0;
}

/* Merge the gaps (in worker order, sorted within a worker) into the activity columns,
 * in place from the back. */
static lp_status merge_gaps(lp_trace *t, const gapvec *gaps, lp_error *err)
{
    uint64_t n = t->nacts, nn = n + gaps->n;
    if (nn >= LP_NONE32)
        return lp_error_set(err, LP_ERR_LIMIT, "more than %u activities after gap filling", LP_NONE32 - 1);
#define GROW_T(col, gapval) RESIZE(t->col, nn, return nomem(err));
    TRACE_ACT_COLUMNS(GROW_T)
#undef GROW_T
    size_t gi = gaps->n;
    uint64_t out = nn;
    for (uint32_t w = t->nworkers; w-- > 0;) {
        uint64_t lo = t->wfirst[w], i = t->wfirst[w + 1];
        t->wfirst[w + 1] = out;
        while (i > lo || (gi > 0 && gaps->v[gi - 1].w == w)) {
            int take_gap = gi > 0 && gaps->v[gi - 1].w == w && (i == lo || gaps->v[gi - 1].s >= t->astart[i - 1]);
            out--;
            if (take_gap) {
                const gap *g = &gaps->v[--gi];
#define GAP_T(col, gapval) t->col[out] = (gapval);
                TRACE_ACT_COLUMNS(GAP_T)
#undef GAP_T
            } else {
                i--;
#define MOVE_T(col, gapval) t->col[out] = t->col[i];
                TRACE_ACT_COLUMNS(MOVE_T)
#undef MOVE_T
            }
        }
    }
    t->wfirst[0] = 0;
    t->nacts = nn;
    t->ngaps = gaps->n;
    return LP_OK;
}

static lp_status fill_gaps(lp_builder *b, lp_error *err)
{
    lp_trace *t = b->t;
    lp_endpoints snd, rcv;
    lp_status st = lp_endpoints_build(t, 0, &snd, err);
    if (st)
        return st;
    st = lp_endpoints_build(t, 1, &rcv, err);
    if (st) {
        lp_endpoints_release(&snd);
        return st;
    }
    gapvec g = {0};
    for (uint32_t w = 0; w < t->nworkers && st == LP_OK; w++) {
        uint64_t lo = t->wfirst[w], hi = t->wfirst[w + 1];
        uint64_t si = snd.off[w], ri = rcv.off[w];
        int64_t first = INT64_MAX, last = INT64_MIN;
        if (lo < hi) {
            first = t->astart[lo];
            last = t->aend[hi - 1];
        }
        if (si < snd.off[w + 1]) {
            int64_t a = snd.time[si], z = snd.time[snd.off[w + 1] - 1];
            first = a < first ? a : first;
            last = z > last ? z : last;
        }
        if (ri < rcv.off[w + 1]) {
            int64_t a = rcv.time[ri], z = rcv.time[rcv.off[w + 1] - 1];
            first = a < first ? a : first;
            last = z > last ? z : last;
        }
        if (first > last)
            continue; /* worker with no events */
        int64_t cur = first;
        for (uint64_t i = lo; i <= hi; i++) {
            int64_t limit = i < hi ? t->astart[i] : last;
            if (limit > cur && gaps_in(&g, w, cur, limit, &snd, &rcv, t, &si, &ri)) {
                st = nomem(err);
                break;
            }
            if (i < hi)
                cur = t->aend[i] > cur ? t->aend[i] : cur;
        }
    }
    lp_endpoints_release(&snd);
    lp_endpoints_release(&rcv);
    if (st || g.n == 0) {
        lp_free(g.v);
        return st;
    }
    st = merge_gaps(t, &g, err);
    lp_free(g.v);
    return st;
}

static void compute_extent(lp_trace *t)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t w = 0; w < t->nworkers; w++) {
        if (t->wfirst[w] < t->wfirst[w + 1]) {
            lo = t->astart[t->wfirst[w]] < lo ? t->astart[t->wfirst[w]] : lo;
            hi = t->aend[t->wfirst[w + 1] - 1] > hi ? t->aend[t->wfirst[w + 1] - 1] : hi;
        }
    }
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        int64_t a = t->msend[m], z = t->mrecv[m];
        if (a > z) {
            int64_t x = a;
            a = z;
            z = x;
        }
        lo = a < lo ? a : lo;
        hi = z > hi ? z : hi;
    }
    if (lo > hi)
        lo = hi = 0;
    t->tmin = lo;
    t->tmax = hi;
}

/* Shrink a column to exactly n elements (frees unused capacity). */
#define SHRINK(col, n)                                                          \
    do {                                                                        \
        void *p_ = lp_reallocarray(col, (n) ? (n) : 1, sizeof *(col));          \
        if (p_)                                                                 \
            col = p_;                                                           \
    } while (0)

lp_status lp_builder_finish(lp_builder *b, lp_trace **out, lp_error *err)
{
    *out = NULL;
    lp_trace *t = b->t;
    lp_status st = group_activities(b, err);
    if (!st)
        st = drop_overlaps(b, err);
    if (!st)
        st = match_halves(b, err);
    /* the per-record source columns are no longer needed */
    free_records(b);
    if (!st) {
#define SHRINK_M(col) SHRINK(t->col, t->nmsgs);
        TRACE_MSG_COLUMNS(SHRINK_M)
#undef SHRINK_M
    }
    if (!st && !b->opts.no_gap_fill)
        st = fill_gaps(b, err);
    if (st) {
        lp_builder_free(b);
        return st;
    }
#define SHRINK_T(col, gapval) SHRINK(t->col, t->nacts);
    TRACE_ACT_COLUMNS(SHRINK_T)
#undef SHRINK_T
    SHRINK(t->apool, t->napool);
    SHRINK(t->wname, t->nworkers);
    SHRINK(t->wattr, t->nworkers);
    compute_extent(t);
    *out = t;
    b->t = NULL;
    lp_builder_free(b);
    return LP_OK;
}
