/* stream.c: the online engine of stream.h (SnailTrail §5 run on live streams;
 * docs/analyses/stream.md): names, per-worker watermarks, the records held for the open
 * windows, message halves and open activities waiting for their other end, the rule
 * that closes windows, what a closed window's trace is made of, and what is dropped
 * once it is closed.
 *
 * Invariants (between calls):
 *  - every record in `store` touches an open window, or holds some worker's latest
 *    event before the oldest open window (its neighbour), or arrived late and was not
 *    yet compacted away;
 *  - n_live = workers with a live stream (own && !ended); n_below = those of them whose
 *    watermark is <= thr; thr = te of the oldest open window (phase 0) or the latest
 *    first-event-after-te of the live streams (phase 1);
 *  - windows close strictly in order; `frontier` is te of the last closed one;
 *  - names only grow, so ids agree across windows; cur_names, when set, is a snapshot
 *    of the current names (workers, types, operators, parallelism).
 * Pending halves are kept in order of arrival (walks over them: matching a send to any
 * receiver, in-flight messages, expiry reports, go in that order) and found by
 * (sender, receiver, id) through the library's hash table (base/hashmap.h); a removed
 * half leaves a hole until the array is compacted on a later insertion.
 * Cost per record: a few hash lookups and O(1) bookkeeping; per closed window: O(held
 * records + workers + pending halves).
 */
#include "stream_int.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

double lp_stream_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void lp_stream_opts_init(lp_stream_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = 1000000000;
    o->max_delay = -1;
    o->threads = 1;
    o->win.kinds = (1u << LP_SUM_NKINDS) - 1;
    o->win.seed = 1;
}

const char *lp_stream_close_name(lp_stream_why c)
{
    switch (c) {
    case LP_CLOSE_WATERMARK: return "watermarks";
    case LP_CLOSE_DELAY: return "max-delay";
    case LP_CLOSE_ENDED: return "ended";
    case LP_CLOSE_END: return "end";
    }
    return "?";
}

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* ---- the window grid ---------------------------------------------------------------- */

static int64_t ts_of(const lp_stream *s, uint64_t k)
{
    __int128 v = (__int128)s->origin + (__int128)k * s->o.step;
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}
static int64_t te_of(const lp_stream *s, uint64_t k) { return add_sat(ts_of(s, k), s->o.size); }

/* ---- names ----------------------------------------------------------------------------- */

static int grow_s2(lp_stream *s)
{
    if (s->names.n <= s->caps2)
        return 0;
    size_t cap = s->caps2 ? s->caps2 : 64;
    while (cap < s->names.n)
        cap *= 2;
    uint32_t **arr[3] = {&s->s2w, &s->s2t, &s->s2o};
    for (int i = 0; i < 3; i++) {
        uint32_t *p = lp_reallocarray(*arr[i], cap, sizeof *p);
        if (!p)
            return -1;
        memset(p + s->caps2, 0xff, (cap - s->caps2) * sizeof *p);
        *arr[i] = p;
    }
    s->caps2 = cap;
    return 0;
}

static void names_dirty(lp_stream *s)
{
    if (s->cur_names) {
        snames *nm = s->cur_names;
        s->cur_names = NULL;
        lp_stream_names_unref(s, nm);
    }
}

void lp_stream_names_unref(lp_stream *s, snames *nm)
{
    (void)s;
    if (!nm || --nm->refs)
        return;
    lp_free(nm->wname);
    lp_free(nm->wlen);
    lp_free(nm->tname);
    lp_free(nm->tlen);
    lp_free(nm->oname);
    lp_free(nm->olen);
    lp_free(nm->oppar);
    lp_free(nm);
}

/* A reference to the current names (made if needed). */
static snames *names_get(lp_stream *s)
{
    if (!s->cur_names) {
        snames *nm = lp_calloc(1, sizeof *nm);
        if (!nm)
            return NULL;
        nm->refs = 1;
        nm->nw = s->nworkers;
        nm->nt = s->ntypes;
        nm->nops = s->nops;
        nm->wname = lp_malloc((nm->nw + 1) * sizeof *nm->wname);
        nm->wlen = lp_malloc((nm->nw + 1) * sizeof *nm->wlen);
        nm->tname = lp_malloc((nm->nt + 1) * sizeof *nm->tname);
        nm->tlen = lp_malloc((nm->nt + 1) * sizeof *nm->tlen);
        nm->oname = lp_malloc((nm->nops + 1) * sizeof *nm->oname);
        nm->olen = lp_malloc((nm->nops + 1) * sizeof *nm->olen);
        nm->oppar = lp_malloc((nm->nops + 1) * sizeof *nm->oppar);
        if (!nm->wname || !nm->wlen || !nm->tname || !nm->tlen || !nm->oname || !nm->olen || !nm->oppar) {
            lp_stream_names_unref(s, nm);
            return NULL;
        }
        for (uint32_t i = 0; i < nm->nw; i++) {
            nm->wname[i] = lp_strtab_get(&s->names, s->wstr[i]);
            nm->wlen[i] = lp_strtab_len(&s->names, s->wstr[i]);
        }
        for (uint32_t i = 0; i < nm->nt; i++) {
            nm->tname[i] = lp_strtab_get(&s->names, s->tstr[i]);
            nm->tlen[i] = lp_strtab_len(&s->names, s->tstr[i]);
        }
        for (uint32_t i = 0; i < nm->nops; i++) {
            nm->oname[i] = lp_strtab_get(&s->names, s->ostr[i]);
            nm->olen[i] = lp_strtab_len(&s->names, s->ostr[i]);
            nm->oppar[i] = s->opar[i];
        }
        s->cur_names = nm;
    }
    s->cur_names->refs++;
    return s->cur_names;
}

/* kind: 0 worker, 1 type, 2 operator. */
static lp_status name_id(lp_stream *s, int kind, const char *p, size_t n, uint32_t *id, lp_error *err)
{
    if (lp_stream_cached(s, kind, p, n, id))
        return LP_OK;
    uint32_t h = lp_stream_name_hash(p, n);
    lp_str str;
    if (n > UINT32_MAX - 1 || lp_strtab_intern(&s->names, p, n, &str) || grow_s2(s))
        return nomem(err);
    uint32_t *map = kind == 0 ? s->s2w : kind == 1 ? s->s2t : s->s2o;
    uint32_t v = map[str];
    if (v == LP_NONE32) {
        if (kind == 0) {
            if (s->nworkers >= LP_NONE32 - 2)
                return lp_error_set(err, LP_ERR_LIMIT, "too many workers");
            if (s->nworkers == s->capworkers) {
                size_t cap = s->capworkers ? 2 * (size_t)s->capworkers : 64;
                swk *nw = lp_reallocarray(s->wk, cap, sizeof *nw);
                if (!nw)
                    return nomem(err);
                s->wk = nw;
                lp_str *ns = lp_reallocarray(s->wstr, cap, sizeof *ns);
                if (!ns)
                    return nomem(err);
                s->wstr = ns;
                s->capworkers = (uint32_t)cap;
            }
            v = s->nworkers++;
            swk *w = &s->wk[v];
            memset(w, 0, sizeof *w);
            w->wm = INT64_MIN;
            w->last_a_start = w->last_a_end = INT64_MIN;
            w->conn = LP_NONE32;
            w->stlast = INT64_MIN;
            w->last_op = LP_NONE32;
            s->wstr[v] = str;
            s->st.workers = s->nworkers;
        } else if (kind == 1) {
            if (s->ntypes >= LP_TYPE_MAX)
                return lp_error_set(err, LP_ERR_LIMIT, "too many activity types (at most %u)", LP_TYPE_MAX);
            void *q = s->tstr;
            size_t cap = s->captypes;
            if (lp_grow(&q, &cap, (size_t)s->ntypes + 1, sizeof(lp_str)))
                return nomem(err);
            s->tstr = q;
            s->captypes = (uint32_t)cap;
            v = s->ntypes++;
            s->tstr[v] = str;
        } else {
            if (s->nops >= LP_NONE32 - 2)
                return lp_error_set(err, LP_ERR_LIMIT, "too many operators");
            if (s->nops == s->capops) {
                size_t cap = s->capops ? 2 * (size_t)s->capops : 16;
                lp_str *no = lp_reallocarray(s->ostr, cap, sizeof *no);
                if (!no)
                    return nomem(err);
                s->ostr = no;
                uint32_t *np = lp_reallocarray(s->opar, cap, sizeof *np);
                if (!np)
                    return nomem(err);
                s->opar = np;
                s->capops = (uint32_t)cap;
            }
            v = s->nops++;
            s->ostr[v] = str;
            s->opar[v] = 0;
        }
        map[str] = v;
        names_dirty(s);
    }
    h *= 2; /* the set: the older entry goes second */
    s->cache[kind][h + 1] = s->cache[kind][h];
    s->cache[kind][h].p = lp_strtab_get(&s->names, str);
    s->cache[kind][h].n = (uint32_t)n;
    s->cache[kind][h].id = v;
    *id = v;
    return LP_OK;
}

lp_status lp_stream_worker(lp_stream *s, const char *name, size_t n, uint32_t *w, lp_error *err)
{
    return name_id(s, 0, name, n, w, err);
}

lp_status lp_stream_type(lp_stream *s, const char *name, size_t n, uint16_t *type, lp_error *err)
{
    uint32_t v = 0;
    lp_status st = name_id(s, 1, name, n, &v, err);
    *type = (uint16_t)v;
    return st;
}

lp_status lp_stream_op(lp_stream *s, const char *name, size_t n, uint32_t *op, lp_error *err)
{
    return name_id(s, 2, name, n, op, err);
}

uint64_t lp_stream_msgid(const char *p, size_t n)
{
    uint64_t v;
    if (lp_parse_canonical_u63(p, n, &v))
        return v;
    return (XXH3_64bits(p, n) & (LP_MSGID_STR - 1)) | LP_MSGID_STR;
}

/* Operator parallelism: workers seen running each operator. */
static int op_pair(lp_stream *s, uint32_t op, uint32_t w)
{
    if (op == LP_NONE32 || s->wk[w].last_op == op)
        return 0;
    s->wk[w].last_op = op;
    int added;
    if (lp_hmap_get_or_put(&s->oppairs, ((uint64_t)op + 1) << 32 | w, 0, &added) == LP_HMAP_EMPTY)
        return -1;
    if (!added)
        return 0;
    s->opar[op]++;
    names_dirty(s);
    return 0;
}

/* ---- watermarks ------------------------------------------------------------------------ */

static inline int is_live(const swk *w) { return w->own && !w->ended; }

static void recount(lp_stream *s)
{
    uint64_t live = 0, below = 0;
    for (uint32_t i = 0; i < s->nworkers; i++) {
        const swk *w = &s->wk[i];
        if (!is_live(w))
            continue;
        live++;
        below += w->wm <= s->thr;
    }
    s->n_live = live;
    s->n_below = below;
}

static void make_live(lp_stream *s, swk *w)
{
    if (is_live(w))
        return;
    w->own = 1;
    w->ended = 0;
    s->n_live++;
    s->n_below += w->wm <= s->thr;
}

static void end_stream(lp_stream *s, swk *w)
{
    if (!is_live(w))
        return;
    w->ended = 1;
    s->n_live--;
    s->n_below -= w->wm <= s->thr;
}

/* The provisional grid, while no window has closed: from the earliest instant seen. */
static void regrid(lp_stream *s)
{
    if (s->o.has_origin) {
        s->origin = s->o.origin;
        int64_t k = 0;
        if (s->tmin > s->origin) { /* the first window whose [ts, te) holds tmin */
            __int128 d = (__int128)s->tmin - s->origin - s->o.size;
            k = d < 0 ? 0 : (int64_t)(d / s->o.step) + 1;
        }
        s->k_first = (uint64_t)k;
    } else {
        s->origin = floordiv(s->tmin, s->o.step) * s->o.step;
        s->k_first = 0;
    }
    s->k_open = s->k_first;
    s->phase = 0;
    s->te_open = te_of(s, s->k_open);
    s->thr = s->te_open;
    recount(s);
}

static void extent(lp_stream *s, int64_t lo, int64_t hi)
{
    if (hi > s->tmax)
        s->tmax = hi;
    if (lo < s->tmin) {
        s->tmin = lo;
        s->started = 1;
        if (!s->frozen)
            regrid(s);
    }
}

/* A record of worker w at its own time x arrived through conn: returns 1 when it is
 * out of order (older than the watermark). */
static int own_record(lp_stream *s, uint32_t conn, uint32_t wi, int64_t x)
{
    swk *w = &s->wk[wi];
    if (conn < s->nconns && x > s->conns[conn].last_t)
        s->conns[conn].last_t = x;
    make_live(s, w);
    w->conn = conn;
    if (x > s->maxtau)
        s->maxtau = x;
    if (x < w->wm) {
        s->st.out_of_order++;
        return 1;
    }
    if (w->wm <= s->thr && x > s->thr)
        s->n_below--;
    w->wm = x;
    return 0;
}

/* ---- late records ---------------------------------------------------------------------- */

static void late_dirty(lp_stream *s, uint64_t k)
{
    for (size_t i = 0; i < s->nlate_dirty; i++)
        if (s->late_dirty[i] == k)
            return;
    if (s->nlate_dirty < sizeof s->late_dirty / sizeof s->late_dirty[0])
        s->late_dirty[s->nlate_dirty++] = k;
}

/* A record over [lo, hi] arrived: count it for every closed window it touches. */
static void check_late(lp_stream *s, int64_t lo, int64_t hi)
{
    if (!s->frozen || lo > s->frontier)
        return;
    s->st.late++;
    /* closed windows k in [k_first, k_open) with ts_k <= hi and te_k >= lo */
    __int128 d = (__int128)lo - s->origin - s->o.size;
    __int128 klo = d <= 0 ? 0 : (d + s->o.step - 1) / s->o.step;
    __int128 dh = (__int128)hi - s->origin;
    __int128 khi = dh < 0 ? -1 : dh / s->o.step;
    if (klo < (__int128)s->k_first)
        klo = s->k_first;
    if (khi > (__int128)s->k_open - 1)
        khi = (__int128)s->k_open - 1;
    if (khi < klo)
        return;
    s->st.late_windows += (uint64_t)(khi - klo + 1);
    if (khi - klo >= LATE_RING)
        klo = khi - LATE_RING + 1;
    for (__int128 k = klo; k <= khi; k++) {
        size_t r = (size_t)((uint64_t)k % LATE_RING);
        if (s->late_idx[r] != (uint64_t)k)
            continue; /* older than the ring */
        s->late_cnt[r]++;
        late_dirty(s, (uint64_t)k);
    }
}

static void late_flush(lp_stream *s)
{
    for (size_t i = 0; i < s->nlate_dirty; i++) {
        uint64_t k = s->late_dirty[i];
        size_t r = (size_t)(k % LATE_RING);
        if (s->late_fn && s->late_idx[r] == k)
            s->late_fn(s->ctx, k, ts_of(s, k), te_of(s, k), s->late_cnt[r]);
    }
    s->nlate_dirty = 0;
}

/* ---- records held ----------------------------------------------------------------------- */

static lp_status store_add(lp_stream *s, const srec *r, lp_error *err)
{
    if (s->nstore == s->capstore) {
        size_t cap = s->capstore ? s->capstore * 2 : 4096;
        srec *ns = lp_reallocarray(s->store, cap, sizeof *ns);
        if (!ns)
            return nomem(err);
        s->store = ns;
        uint8_t *nm = lp_realloc(s->mark, cap);
        if (!nm)
            return nomem(err);
        s->mark = nm;
        s->capstore = cap;
    }
    s->store[s->nstore++] = *r;
    if (s->nstore > s->st.max_retained)
        s->st.max_retained = s->nstore;
    s->st.retained = s->nstore;
    return LP_OK;
}

static inline int64_t rec_lo(const srec *r) { return r->a < r->b ? r->a : r->b; }
static inline int64_t rec_hi(const srec *r) { return r->a < r->b ? r->b : r->a; }
/* The worker of a record's second event. */
static inline uint32_t rec_w2(const srec *r) { return r->kind == SREC_MSG ? r->peer : r->w; }

/* ---- pending halves --------------------------------------------------------------------- */

static inline uint32_t pend_hash(uint32_t src, uint32_t dst, uint64_t id)
{
    return (uint32_t)lp_hash_mix(id, (uint64_t)src << 32 | dst);
}

static void pend_count(lp_stream *s)
{
    size_t live = 0;
    for (uint32_t i = 0; i < s->nworkers; i++)
        live += s->wk[i].nstk;
    s->st.pending = s->npending_live + live;
    if (s->st.pending > s->st.max_pending)
        s->st.max_pending = s->st.pending;
}

/* Close the holes of the pending array (keeping the order of arrival) and index it
 * anew. Never during a walk over the array. */
static void pend_compact(lp_stream *s)
{
    size_t out = 0;
    lp_hmap32_clear(&s->pendmap);
    for (size_t j = 0; j < s->endpend; j++) {
        const pend *p = &s->pend[j];
        if (!p->kind)
            continue;
        s->pend[out] = *p; /* (the table had more entries: adding cannot fail) */
        lp_hmap32_add(&s->pendmap, pend_hash(p->src, p->dst, p->id), (uint32_t)out++, NULL);
    }
    s->endpend = out;
}

static lp_status pend_add(lp_stream *s, uint8_t kind, uint32_t src, uint32_t dst, uint64_t id, int64_t t,
                          uint32_t seq, lp_error *err)
{
    if (s->endpend == s->cappend) {
        if (2 * s->npend <= s->endpend && s->endpend) { /* half holes: close them rather than grow */
            pend_compact(s);
        } else {
            void *q = s->pend;
            if (lp_grow(&q, &s->cappend, s->endpend + 1, sizeof(pend)))
                return nomem(err);
            s->pend = q;
        }
    }
    if (lp_hmap32_add(&s->pendmap, pend_hash(src, dst, id), (uint32_t)s->endpend, NULL))
        return nomem(err);
    s->pend[s->endpend++] = (pend){id, t, src, dst, seq, kind};
    s->npend++;
    if (kind != PEND_DONE)
        s->npending_live++;
    return LP_OK;
}

/* A pending half being looked up: its key and the kinds wanted (bit 1 << kind). */
typedef struct pkey {
    const pend *pend;
    uint32_t src, dst;
    uint64_t id;
    unsigned kinds;
} pkey;

static inline int pend_matches(const void *ctx, uint64_t i)
{
    const pkey *k = ctx;
    const pend *p = &k->pend[i];
    return p->src == k->src && p->dst == k->dst && p->id == k->id && (k->kinds >> p->kind & 1);
}

/* Find an entry of one of the kinds in `kinds` (bit 1 << kind) with this key; with
 * *slot its slot in the table, for pend_del until the table next changes. */
static pend *pend_find(lp_stream *s, unsigned kinds, uint32_t src, uint32_t dst, uint64_t id, size_t *slot)
{
    pkey k = {s->pend, src, dst, id, kinds};
    uint32_t i = lp_hmap32_find(&s->pendmap, pend_hash(src, dst, id), pend_matches, &k, slot);
    return i == LP_HMAP32_EMPTY ? NULL : &s->pend[i];
}

static inline int is_index(const void *ctx, uint64_t i) { return i == *(const uint64_t *)ctx; }

/* Remove entry p, whose table slot is *slot (from pend_find), or found here if slot is
 * NULL. It leaves a hole: walks over the array may go on. */
static void pend_del(lp_stream *s, pend *p, const size_t *slot)
{
    if (slot) {
        lp_hmap32_del_at(&s->pendmap, *slot);
    } else {
        uint64_t i = (uint64_t)(p - s->pend);
        size_t at;
        if (lp_hmap32_find(&s->pendmap, pend_hash(p->src, p->dst, p->id), is_index, &i, &at) != LP_HMAP32_EMPTY)
            lp_hmap32_del_at(&s->pendmap, at);
    }
    if (p->kind != PEND_DONE)
        s->npending_live--;
    p->kind = 0;
    if (--s->npend == 0)
        s->endpend = 0; /* all holes: the table is empty too */
}

/* ---- records ----------------------------------------------------------------------------- */

static lp_status advance(lp_stream *s, lp_error *err);

static const char *cname(const lp_stream *s, uint32_t conn)
{
    return conn < s->nconns ? s->conns[conn].name : "(declared)";
}
static const char *wname(const lp_stream *s, uint32_t w) { return lp_strtab_get(&s->names, s->wstr[w]); }

#define REPORT(s, sev, rule, conn, line, ...) \
    lp_diags_report((s)->diags, (sev), (rule), cname((s), (conn)), (line), __VA_ARGS__)

static lp_status check_ids(lp_stream *s, uint32_t w, uint32_t peer, lp_error *err)
{
    if (w >= s->nworkers || (peer != LP_NONE32 && peer >= s->nworkers))
        return lp_error_set(err, LP_ERR_ARG, "stream record with an invalid worker id");
    return LP_OK;
}

lp_status lp_stream_declare(lp_stream *s, uint32_t conn, uint32_t w, lp_error *err)
{
    lp_status st = check_ids(s, w, LP_NONE32, err);
    if (st)
        return st;
    s->st.records++;
    make_live(s, &s->wk[w]);
    s->wk[w].conn = conn;
    return advance(s, err);
}

static lp_status add_act(lp_stream *s, uint32_t w, int64_t a, int64_t b, uint16_t type, uint32_t op, lp_error *err)
{
    srec r = {a, b, w, LP_NONE32, op, type, SREC_ACT, 0};
    if (op_pair(s, op, w))
        return nomem(err);
    return store_add(s, &r, err);
}

lp_status lp_stream_activity(lp_stream *s, uint32_t conn, uint64_t line, uint32_t w, int64_t start, int64_t end,
                             uint16_t type, uint32_t op, lp_error *err)
{
    lp_status st = check_ids(s, w, LP_NONE32, err);
    if (st)
        return st;
    if (type >= s->ntypes || (op != LP_NONE32 && op >= s->nops))
        return lp_error_set(err, LP_ERR_ARG, "stream activity with an invalid type or operator id");
    s->st.records++;
    s->st.events += 2;
    if (end < start) {
        s->st.malformed++;
        REPORT(s, LP_SEV_ERROR, LP_RULE_END_BEFORE_START, conn, line,
               "activity on worker '%s' ends before it starts (start %lld, end %lld); record dropped", wname(s, w),
               (long long)start, (long long)end);
        return LP_OK;
    }
    swk *wk = &s->wk[w];
    int ooo = own_record(s, conn, w, start);
    if (!ooo && start < wk->last_a_end) {
        s->st.overlaps++;
        REPORT(s, LP_SEV_ERROR, LP_RULE_OVERLAP, conn, line,
               "activity [%lld, %lld] on worker '%s' overlaps the previous one [%lld, %lld]; record dropped",
               (long long)start, (long long)end, wname(s, w), (long long)wk->last_a_start, (long long)wk->last_a_end);
        return advance(s, err);
    }
    if (!ooo) {
        wk->last_a_start = start;
        wk->last_a_end = end;
    }
    extent(s, start, end);
    check_late(s, start, end);
    if ((st = add_act(s, w, start, end, type, op, err)))
        return st;
    return advance(s, err);
}

static lp_status add_msg(lp_stream *s, uint32_t src, int64_t send, uint32_t dst, int64_t recv, uint32_t seq,
                         uint8_t flags, lp_error *err)
{
    srec r = {send, recv, src, dst, seq, 0, SREC_MSG, flags};
    return store_add(s, &r, err);
}

lp_status lp_stream_message(lp_stream *s, uint32_t conn, uint64_t line, uint32_t src, int64_t send, uint32_t dst,
                            int64_t recv, lp_error *err)
{
    lp_status st = check_ids(s, src, dst, err);
    if (st || (st = check_ids(s, dst, LP_NONE32, err)))
        return st;
    s->st.records++;
    s->st.events += 2;
    own_record(s, conn, src, send);
    int64_t lo = send, hi = recv;
    if (recv < send) {
        s->st.skewed++;
        REPORT(s, LP_SEV_WARNING, LP_RULE_RECV_BEFORE_SEND, conn, line,
               "message %s -> %s received at %lld, %lld ns before it was sent (clock skew?); its weight counts as 0",
               wname(s, src), wname(s, dst), (long long)recv, (long long)(send - recv));
        lo = recv;
        hi = send;
    }
    extent(s, lo, hi);
    check_late(s, lo, hi);
    if ((st = add_msg(s, src, send, dst, recv, s->seq++, 0, err)))
        return st;
    return advance(s, err);
}

lp_status lp_stream_send(lp_stream *s, uint32_t conn, uint64_t line, uint32_t w, int64_t t, uint32_t dst,
                         uint64_t id, lp_error *err)
{
    lp_status st = check_ids(s, w, dst, err);
    if (st)
        return st;
    s->st.records++;
    s->st.events++;
    own_record(s, conn, w, t);
    extent(s, t, t);
    check_late(s, t, t);
    if (pend_find(s, 1u << PEND_SEND | 1u << PEND_DONE, w, dst, id, NULL)) {
        s->st.dup_sends++;
        char idb[32];
        REPORT(s, LP_SEV_ERROR, LP_RULE_DUP_SEND, conn, line,
               "second send %s -> %s with message id %s; record dropped", wname(s, w),
               dst == LP_NONE32 ? "*" : wname(s, dst),
               (id & LP_MSGID_STR) ? "(a name)" : (snprintf(idb, sizeof idb, "%llu", (unsigned long long)id), idb));
        return advance(s, err);
    }
    /* receives that came first */
    int matched = 0;
    if (dst != LP_NONE32) {
        pend *p;
        size_t slot;
        while ((p = pend_find(s, 1u << PEND_RECV, w, dst, id, &slot))) {
            int64_t r = p->t;
            uint32_t seq = p->seq;
            pend_del(s, p, &slot);
            if ((st = add_msg(s, w, t, dst, r, seq, SREC_HALVES, err)))
                return st;
            s->st.matched++;
            matched = 1;
        }
    } else if (s->npending_live) { /* a send to any receiver: every waiting receive, in order of arrival */
        for (size_t j = 0; j < s->endpend; j++) {
            pend *p = &s->pend[j];
            if (p->kind == PEND_RECV && p->src == w && p->id == id) {
                uint32_t d = p->dst, seq = p->seq;
                int64_t r = p->t;
                pend_del(s, p, NULL);
                if ((st = add_msg(s, w, t, d, r, seq, SREC_HALVES, err)))
                    return st;
                s->st.matched++;
                matched = 1;
            }
        }
    }
    /* a send to any receiver stays for more receives; a keyed one is done when matched */
    if ((!matched || dst == LP_NONE32) && (st = pend_add(s, matched ? PEND_DONE : PEND_SEND, w, dst, id, t, 0, err)))
        return st;
    pend_count(s);
    return advance(s, err);
}

lp_status lp_stream_recv(lp_stream *s, uint32_t conn, uint64_t line, uint32_t w, int64_t t, uint32_t src,
                         uint64_t id, lp_error *err)
{
    (void)line;
    lp_status st = check_ids(s, w, src, err);
    if (st)
        return st;
    if (src == LP_NONE32)
        return lp_error_set(err, LP_ERR_ARG, "stream receive without a sender");
    s->st.records++;
    s->st.events++;
    own_record(s, conn, w, t);
    extent(s, t, t);
    check_late(s, t, t);
    size_t slot;
    pend *p = pend_find(s, 1u << PEND_SEND | 1u << PEND_DONE, src, w, id, &slot);
    if (!p)
        p = pend_find(s, 1u << PEND_SEND | 1u << PEND_DONE, src, LP_NONE32, id, &slot);
    if (p) {
        int64_t send = p->t;
        if (p->dst != LP_NONE32) { /* keyed: one receive */
            pend_del(s, p, &slot);
        } else if (p->kind == PEND_SEND) {
            p->kind = PEND_DONE;
            s->npending_live--;
        }
        if (t < send) {
            s->st.skewed++;
            REPORT(s, LP_SEV_WARNING, LP_RULE_RECV_BEFORE_SEND, conn, line,
                   "message %s -> %s received at %lld, %lld ns before it was sent (clock skew?); its weight counts "
                   "as 0",
                   wname(s, src), wname(s, w), (long long)t, (long long)(send - t));
            extent(s, t, send);
        } else {
            extent(s, send, t);
        }
        if ((st = add_msg(s, src, send, w, t, s->seq++, SREC_HALVES, err)))
            return st;
        s->st.matched++;
    } else if ((st = pend_add(s, PEND_RECV, src, w, id, t, s->seq++, err))) {
        return st;
    }
    pend_count(s);
    return advance(s, err);
}

/* What a SnailTrail Start or End event does first: check its ids, count it, and accept
 * it only in its worker's time order (*ok = 0 and the error reported otherwise). */
static lp_status activity_event(lp_stream *s, uint32_t conn, uint64_t line, uint32_t w, int64_t t, const char *what,
                                int *ok, lp_error *err)
{
    *ok = 0;
    lp_status st = check_ids(s, w, LP_NONE32, err);
    if (st)
        return st;
    s->st.records++;
    s->st.events++;
    swk *wk = &s->wk[w];
    if (own_record(s, conn, w, t) || t < wk->stlast) {
        REPORT(s, LP_SEV_ERROR, LP_RULE_ORDER, conn, line,
               "%s of an activity on worker '%s' at %lld, before its previous event (%lld): the events of a "
               "worker must come in time order; event dropped",
               what, wname(s, w), (long long)t, (long long)(wk->stlast > wk->wm ? wk->stlast : wk->wm));
        return LP_OK;
    }
    extent(s, t, t);
    check_late(s, t, t);
    *ok = 1;
    return LP_OK;
}

/* SnailTrail events (Start/End), flattened per worker as SnailTrail's PAG construction
 * does (pag-construction/src/lib.rs, create_initial_pag_edges): one activity at a time. */
lp_status lp_stream_start(lp_stream *s, uint32_t conn, uint64_t line, uint32_t w, int64_t t, uint16_t type,
                          uint32_t op, lp_error *err)
{
    int ok;
    lp_status st = activity_event(s, conn, line, w, t, "start", &ok, err);
    if (st)
        return st;
    if (!ok)
        return advance(s, err);
    swk *wk = &s->wk[w];
    if (wk->nstk && t > wk->stlast) { /* a start inside an activity cuts it */
        const stopen *top = &wk->stk[wk->nstk - 1];
        if ((st = add_act(s, w, wk->stlast, t, top->type, top->op, err)))
            return st;
    }
    void *q = wk->stk;
    size_t cap = wk->capstk;
    if (lp_grow(&q, &cap, (size_t)wk->nstk + 1, sizeof(stopen)))
        return nomem(err);
    wk->stk = q;
    wk->capstk = (uint32_t)cap;
    wk->stk[wk->nstk++] = (stopen){t, type, op};
    wk->stlast = t;
    pend_count(s);
    return advance(s, err);
}

lp_status lp_stream_end(lp_stream *s, uint32_t conn, uint64_t line, uint32_t w, int64_t t, uint16_t type,
                        uint32_t op, lp_error *err)
{
    int ok;
    lp_status st = activity_event(s, conn, line, w, t, "end", &ok, err);
    if (st)
        return st;
    if (!ok)
        return advance(s, err);
    swk *wk = &s->wk[w];
    uint32_t i = wk->nstk;
    while (i > 0 && wk->stk[i - 1].type != type)
        i--;
    if (i == 0) {
        s->st.open_dropped++;
        REPORT(s, LP_SEV_ERROR, LP_RULE_IMPORT, conn, line,
               "end of a '%s' activity on worker '%s' at %lld without a start; event dropped",
               lp_strtab_get(&s->names, s->tstr[type]), wname(s, w), (long long)t);
        return advance(s, err);
    }
    const stopen *so = &wk->stk[i - 1];
    int whole = i == wk->nstk && so->t == wk->stlast; /* not cut since it started */
    if (t > wk->stlast || whole) {
        if ((st = add_act(s, w, wk->stlast, t, type, op != LP_NONE32 ? op : so->op, err)))
            return st;
    }
    wk->nstk = i - 1;
    wk->stlast = t;
    pend_count(s);
    return advance(s, err);
}

/* ---- closing windows ----------------------------------------------------------------------- */

static lp_status grow_scratch(lp_stream *s)
{
    if (s->nworkers <= s->capscratch)
        return LP_OK;
    size_t cap = s->capscratch ? s->capscratch : 64;
    while (cap < s->nworkers)
        cap *= 2;
    int64_t *a = lp_reallocarray(s->predt, cap, sizeof *a);
    if (!a)
        return LP_ERR_NOMEM;
    s->predt = a;
    a = lp_reallocarray(s->succt, cap, sizeof *a);
    if (!a)
        return LP_ERR_NOMEM;
    s->succt = a;
    a = lp_reallocarray(s->npredt, cap, sizeof *a);
    if (!a)
        return LP_ERR_NOMEM;
    s->npredt = a;
    size_t *b = lp_reallocarray(s->predi, cap, sizeof *b);
    if (!b)
        return LP_ERR_NOMEM;
    s->predi = b;
    b = lp_reallocarray(s->npredi, cap, sizeof *b);
    if (!b)
        return LP_ERR_NOMEM;
    s->npredi = b;
    s->capscratch = cap;
    return LP_OK;
}

/* Phase 1's threshold: the latest first-event-after-te over the workers. Every live
 * stream has passed te, so it has a record after te (its watermark bounds it); a worker
 * without a live stream (ended, or only named by others) counts when an event of it
 * after te is known: a live stream may still send it a message received before that. */
static int64_t need_after(lp_stream *s, int64_t te)
{
    int64_t *succ = s->succt;
    for (uint32_t w = 0; w < s->nworkers; w++)
        succ[w] = is_live(&s->wk[w]) ? s->wk[w].wm : INT64_MAX;
#define EV(wk_, t_)                                 \
    do {                                            \
        int64_t tt_ = (t_);                         \
        if (tt_ > te && tt_ < succ[(wk_)])          \
            succ[(wk_)] = tt_;                      \
    } while (0)
    for (size_t i = 0; i < s->nstore; i++) {
        const srec *r = &s->store[i];
        EV(r->w, r->a);
        EV(rec_w2(r), r->b);
    }
    for (size_t j = 0; j < s->endpend; j++) {
        const pend *p = &s->pend[j];
        if (p->kind == PEND_SEND || p->kind == PEND_DONE)
            EV(p->src, p->t);
        else if (p->kind == PEND_RECV)
            EV(p->dst, p->t);
    }
    for (uint32_t w = 0; w < s->nworkers; w++)
        if (s->wk[w].nstk)
            EV(w, s->wk[w].stlast);
#undef EV
    int64_t need = te;
    for (uint32_t w = 0; w < s->nworkers; w++)
        if (succ[w] != INT64_MAX && succ[w] > need)
            need = succ[w];
    return need;
}

static lp_status push_rec(sslot *sl, const srec *r)
{
    if (sl->nrecs == sl->caprecs) {
        void *q = sl->recs;
        if (lp_grow(&q, &sl->caprecs, sl->nrecs + 1, sizeof(srec)))
            return LP_ERR_NOMEM;
        sl->recs = q;
    }
    sl->recs[sl->nrecs++] = *r;
    return LP_OK;
}

/* What the window [ts, te]'s trace is made of (see stream.h). */
static lp_status select_window(lp_stream *s, sslot *sl, int64_t ts, int64_t te, int64_t nts, lp_error *err)
{
    sl->nrecs = 0;
    s->sel_touch = 0;
    int64_t *predt = s->predt, *succt = s->succt, *npredt = s->npredt;
    size_t *predi = s->predi, *npredi = s->npredi;
    for (uint32_t w = 0; w < s->nworkers; w++) {
        predt[w] = npredt[w] = INT64_MIN;
        succt[w] = INT64_MAX;
        predi[w] = npredi[w] = SIZE_MAX;
    }
    if (sl->caprecs < s->nstore + 16) { /* every held record fits; fakes may grow it */
        void *q = sl->recs;
        if (lp_grow(&q, &sl->caprecs, s->nstore + 16, sizeof(srec)))
            return nomem(err);
        sl->recs = q;
    }
    /* one pass: each worker's last event before ts (this window's neighbour) and before
     * the next window's start nts (kept by the compaction), and first instant after te */
#define EV(wk_, t_, i_)                                   \
    do {                                                  \
        int64_t tt_ = (t_);                               \
        uint32_t ww_ = (wk_);                             \
        if (tt_ < nts && tt_ > npredt[ww_]) {             \
            npredt[ww_] = tt_;                            \
            npredi[ww_] = (i_);                           \
        }                                                 \
        if (tt_ < ts) {                                   \
            if (tt_ > predt[ww_]) {                       \
                predt[ww_] = tt_;                         \
                predi[ww_] = (i_);                        \
            }                                             \
        } else if (tt_ > te && tt_ < succt[ww_]) {        \
            succt[ww_] = tt_;                             \
        }                                                 \
    } while (0)
    for (size_t i = 0; i < s->nstore; i++) {
        const srec *r = &s->store[i];
        s->mark[i] = 0;
        EV(r->w, r->a, i);
        EV(rec_w2(r), r->b, i);
    }
#undef EV
    /* records in arrival order (per worker, time order), each worker's last event before
     * ts first, so the builder finds every worker's records sorted */
    for (uint32_t w = 0; w < s->nworkers; w++) {
        size_t i = predi[w];
        if (i != SIZE_MAX && !s->mark[i]) {
            s->mark[i] = 1;
            sl->recs[sl->nrecs++] = s->store[i];
        }
    }
    /* then those touching [ts, te], and every record with an event at a worker's first
     * instant after te: whether a receive happens there decides the type of the idle
     * time before it */
    for (size_t i = 0; i < s->nstore; i++) {
        const srec *r = &s->store[i];
        if (s->mark[i])
            continue;
        int touch = rec_hi(r) >= ts && rec_lo(r) <= te;
        if (touch || r->a == succt[r->w] || r->b == succt[rec_w2(r)]) {
            s->mark[i] = 1;
            sl->recs[sl->nrecs++] = *r;
            s->sel_touch += (r->a >= ts && r->a <= te) || (r->b >= ts && r->b <= te);
        }
    }
    uint64_t fl = 0;
    if (!s->finishing) {
        /* sends still waiting for their receive: in flight past te; receives whose send
         * has not come (only after te: the events there); open activities: past te */
        int64_t x = add_sat(s->tmax > te ? s->tmax : te, 1);
        for (size_t j = 0; j < s->endpend; j++) { /* in order of arrival */
            const pend *p = &s->pend[j];
            srec r = {0, 0, p->src, p->dst, UINT32_MAX, 0, SREC_MSG, SREC_FAKE | SREC_HALVES};
            if (p->kind == PEND_SEND && p->dst != LP_NONE32 && p->t <= x) {
                r.a = p->t;
                r.b = x;
            } else if (p->kind == PEND_RECV && p->t > te) {
                r.a = r.b = p->t;
            } else {
                continue;
            }
            if (push_rec(sl, &r))
                return nomem(err);
            fl++;
            s->sel_touch += r.a >= ts && r.a <= te;
        }
        for (uint32_t w = 0; w < s->nworkers; w++) {
            const swk *wk = &s->wk[w];
            if (!wk->nstk || wk->stlast > x)
                continue;
            const stopen *top = &wk->stk[wk->nstk - 1];
            srec r = {wk->stlast, x, w, LP_NONE32, top->op, top->type, SREC_ACT, SREC_FAKE};
            if (push_rec(sl, &r))
                return nomem(err);
            fl++;
            s->sel_touch += r.a >= ts && r.a <= te;
        }
    }
    sl->wi.in_flight = fl;
    sl->wi.records = sl->nrecs;
    return LP_OK;
}

/* After a window closed: drop what no open window needs (the oldest open one starts at
 * ts), keeping each worker's latest event before ts. */
static void compact(lp_stream *s, int64_t ts)
{
    const size_t *npredi = s->npredi; /* each worker's last event before ts (select_window) */
    size_t out = 0;
    for (size_t i = 0; i < s->nstore; i++) {
        const srec *r = &s->store[i];
        if (rec_hi(r) >= ts || npredi[r->w] == i || npredi[rec_w2(r)] == i)
            s->store[out++] = *r;
    }
    s->nstore = out;
    s->st.retained = out;
}

/* Drop halves that waited too long (counted unmatched) and sends to any receiver kept
 * for more receives once their windows are gone (all: every one, at the end). */
static void expire(lp_stream *s, int64_t ts, int all)
{
    int64_t lim = add_sat(ts, -s->o.flight_limit), done_lim = add_sat(ts, -s->o.size);
    for (size_t j = 0; j < s->endpend; j++) { /* in order of arrival */
        pend *p = &s->pend[j];
        int drop = 0;
        if (!p->kind)
            continue;
        if (p->kind == PEND_DONE) {
            drop = all || p->t < done_lim;
        } else if (all || p->t < lim) {
            drop = 1;
            char idb[32];
            if (p->id & LP_MSGID_STR)
                snprintf(idb, sizeof idb, "(a name)");
            else
                snprintf(idb, sizeof idb, "%llu", (unsigned long long)p->id);
            if (p->kind == PEND_SEND) {
                s->st.unmatched_sends++;
                lp_diags_report(s->diags, LP_SEV_ERROR, LP_RULE_UNMATCHED_SEND, "stream", 0,
                                "send from '%s' to '%s' at %lld with message id %s has no matching receive%s",
                                wname(s, p->src), p->dst == LP_NONE32 ? "*" : wname(s, p->dst), (long long)p->t, idb,
                                all ? "" : " within the flight limit");
            } else {
                s->st.unmatched_recvs++;
                lp_diags_report(s->diags, LP_SEV_ERROR, LP_RULE_UNMATCHED_RECV, "stream", 0,
                                "receive on '%s' from '%s' at %lld with message id %s has no matching send",
                                wname(s, p->dst), wname(s, p->src), (long long)p->t, idb);
            }
        }
        if (drop)
            pend_del(s, p, NULL);
    }
}

/* After max_empty windows in a row without an event inside, jump to the first window
 * holding one (a record far in the future, or an activity that never ends, must not
 * make the stream emit billions of identical windows). Returns 1 when it jumped. */
static int skip_empty(lp_stream *s)
{
    if (s->empty_run < s->o.max_empty)
        return 0;
    int64_t ts = ts_of(s, s->k_open), nxt = INT64_MAX;
#define NX(t_)                                  \
    do {                                        \
        int64_t x_ = (t_);                      \
        if (x_ >= ts && x_ < nxt)               \
            nxt = x_;                           \
    } while (0)
    for (size_t i = 0; i < s->nstore; i++) {
        NX(s->store[i].a);
        NX(s->store[i].b);
    }
    for (size_t j = 0; j < s->endpend; j++)
        if (s->pend[j].kind == PEND_SEND || s->pend[j].kind == PEND_RECV)
            NX(s->pend[j].t);
    for (uint32_t w = 0; w < s->nworkers; w++)
        if (s->wk[w].nstk)
            NX(s->wk[w].stlast);
#undef NX
    if (nxt == INT64_MAX)
        nxt = s->tmax > ts ? s->tmax : ts;
    /* the first window with te >= nxt */
    __int128 d = (__int128)nxt - s->origin - s->o.size;
    uint64_t k2 = d <= 0 ? 0 : (uint64_t)((d + s->o.step - 1) / s->o.step);
    if (k2 <= s->k_open + 1)
        return 0;
    uint64_t skipped = k2 - s->k_open;
    s->st.skipped += skipped;
    lp_diags_report(s->diags, LP_SEV_NOTE, LP_RULE_LIMIT, "stream", 0,
                    "%llu windows from %lld on skipped: no event until %lld", (unsigned long long)skipped,
                    (long long)ts, (long long)nxt);
    s->k_open = k2;
    s->frontier = te_of(s, k2 - 1);
    s->empty_run = 0;
    s->phase = 0;
    s->te_open = te_of(s, s->k_open);
    s->thr = s->te_open;
    recount(s);
    return 1;
}

static lp_status close_window(lp_stream *s, lp_stream_why why, lp_error *err)
{
    if (skip_empty(s))
        return LP_OK;
    uint64_t k = s->k_open;
    int64_t ts = ts_of(s, k), te = te_of(s, k);
    sslot *sl;
    lp_status st = lp_spool_reserve(s, &sl, err);
    if (st)
        return st;
    if (grow_scratch(s))
        return nomem(err);
    memset(&sl->wi, 0, sizeof sl->wi);
    int64_t nts = ts_of(s, k + 1);
    if ((st = select_window(s, sl, ts, te, nts, err)))
        return st;
    sl->nm = names_get(s);
    if (!sl->nm)
        return nomem(err);
    s->empty_run = s->sel_touch ? 0 : s->empty_run + 1;
    sl->index = k;
    sl->ts = ts;
    sl->te = te;
    sl->wi.closed_by = why;
    sl->wi.retained = s->nstore;
    sl->wi.lag_ns = s->maxtau > te ? s->maxtau - te : 0;
    sl->t_close = lp_stream_now();
    s->frozen = 1;
    s->frontier = te;
    s->late_idx[k % LATE_RING] = k;
    s->late_cnt[k % LATE_RING] = 0;
    s->k_open = k + 1;
    s->st.windows++;
    s->st.closed_by[why]++;
    if ((st = lp_spool_submit(s, sl, err)))
        return st;
    compact(s, nts);
    if (!s->finishing)
        expire(s, nts, 0);
    s->phase = 0;
    s->te_open = te_of(s, s->k_open);
    s->thr = s->te_open;
    recount(s);
    pend_count(s);
    return LP_OK;
}

/* Close every window that can close now. */
static lp_status advance(lp_stream *s, lp_error *err)
{
    lp_status st;
    while (s->started) {
        int64_t te = s->te_open;
        if (s->o.max_delay >= 0 && s->maxtau > add_sat(te, s->o.max_delay) && te < INT64_MAX) {
            if ((st = close_window(s, LP_CLOSE_DELAY, err)))
                return st;
            continue;
        }
        if (s->n_live == 0) {
            /* no live stream: close the windows that have data */
            if (s->k_open == s->k_first || te_of(s, s->k_open - 1) < s->tmax) {
                if ((st = close_window(s, s->finishing ? LP_CLOSE_END : LP_CLOSE_ENDED, err)))
                    return st;
                continue;
            }
            break;
        }
        if (s->n_below)
            break;
        if (s->phase == 0) {
            if (grow_scratch(s))
                return nomem(err);
            s->phase = 1;
            s->thr = need_after(s, te);
            recount(s);
            continue;
        }
        if ((st = close_window(s, LP_CLOSE_WATERMARK, err)))
            return st;
    }
    return LP_OK;
}

/* ---- connections ------------------------------------------------------------------------ */

lp_status lp_stream_open(lp_stream *s, const char *name, lp_stream_format fmt, uint32_t *id, lp_error *err)
{
    if (s->nconns == s->capconns) {
        size_t cap = s->capconns ? 2 * (size_t)s->capconns : 16;
        sconn *nc = lp_reallocarray(s->conns, cap, sizeof *nc);
        if (!nc)
            return nomem(err);
        s->conns = nc;
        s->capconns = (uint32_t)cap;
    }
    if (s->nconns >= LP_NONE32 - 1)
        return lp_error_set(err, LP_ERR_LIMIT, "too many connections");
    sconn *c = &s->conns[s->nconns];
    memset(c, 0, sizeof *c);
    c->name = lp_strndup(name, strlen(name));
    if (!c->name)
        return nomem(err);
    c->fmt = fmt;
    c->open = 1;
    c->last_t = INT64_MIN;
    *id = s->nconns++;
    s->st.connections++;
    return LP_OK;
}

lp_status lp_stream_feed(lp_stream *s, uint32_t conn, const void *buf, size_t n, lp_error *err)
{
    if (conn >= s->nconns || !s->conns[conn].open)
        return lp_error_set(err, LP_ERR_ARG, "feeding a connection that is not open");
    lp_status failed = lp_spool_status(s, err);
    if (failed)
        return failed;
    s->conns[conn].bytes += n;
    s->st.bytes += n;
    lp_status st = s->conns[conn].fmt == LP_STREAM_SNAILTRAIL ? lp_stream_feed_st(s, conn, buf, n, err)
                                                              : lp_stream_feed_lpt(s, conn, buf, n, err);
    if (st)
        return st;
    late_flush(s);
    return lp_spool_deliver(s, 0, err);
}

lp_status lp_stream_close(lp_stream *s, uint32_t conn, int abrupt, lp_error *err)
{
    if (conn >= s->nconns || !s->conns[conn].open)
        return LP_OK;
    sconn *c = &s->conns[conn];
    lp_status st = c->fmt == LP_STREAM_SNAILTRAIL ? lp_stream_close_st(s, conn, err)
                                                  : lp_stream_close_lpt(s, conn, err);
    if (st)
        return st;
    c->open = 0;
    lp_free(c->part);
    c->part = NULL;
    c->npart = c->cappart = 0;
    if (abrupt || !s->finishing)
        s->st.disconnects++;
    s->st.dropped += abrupt != 0;
    if (abrupt)
        lp_diags_report(s->diags, LP_SEV_WARNING, LP_RULE_IMPORT, c->name, 0,
                        "connection dropped after %llu bytes, %llu records", (unsigned long long)c->bytes,
                        (unsigned long long)c->records);
    for (uint32_t w = 0; w < s->nworkers; w++)
        if (s->wk[w].conn == conn)
            end_stream(s, &s->wk[w]);
    if ((st = advance(s, err)))
        return st;
    late_flush(s);
    return lp_spool_deliver(s, 0, err);
}

lp_status lp_stream_poll(lp_stream *s, lp_error *err)
{
    late_flush(s);
    return lp_spool_deliver(s, 0, err);
}

lp_status lp_stream_finish(lp_stream *s, lp_error *err)
{
    lp_status st;
    s->finishing = 1;
    for (uint32_t c = 0; c < s->nconns; c++)
        if (s->conns[c].open && (st = lp_stream_close(s, c, 0, err)))
            return st;
    for (uint32_t w = 0; w < s->nworkers; w++)
        end_stream(s, &s->wk[w]);
    if ((st = advance(s, err)))
        return st;
    /* what never found its other end */
    expire(s, 0, 1);
    for (uint32_t w = 0; w < s->nworkers; w++) {
        swk *wk = &s->wk[w];
        for (uint32_t i = 0; i < wk->nstk; i++) {
            s->st.open_dropped++;
            lp_diags_report(s->diags, LP_SEV_ERROR, LP_RULE_IMPORT, "stream", 0,
                            "activity '%s' started on worker '%s' at %lld never ended; dropped",
                            lp_strtab_get(&s->names, s->tstr[wk->stk[i].type]), wname(s, w),
                            (long long)wk->stk[i].t);
        }
        wk->nstk = 0;
    }
    pend_count(s);
    if ((st = lp_spool_deliver(s, 1, err)))
        return st;
    late_flush(s);
    return LP_OK;
}

/* ---- lifecycle --------------------------------------------------------------------------- */

lp_status lp_stream_new(lp_stream **out, const lp_stream_opts *o, lp_diags *diags, lp_stream_fn fn,
                        lp_stream_late_fn late_fn, void *ctx, lp_error *err)
{
    *out = NULL;
    if (o->size <= 0 || o->step < 0)
        return lp_error_set(err, LP_ERR_ARG, "window size must be positive and the slide not negative");
    lp_stream *s = lp_calloc(1, sizeof *s);
    if (!s)
        return nomem(err);
    s->o = *o;
    if (!s->o.step)
        s->o.step = s->o.size;
    if (!s->o.flight_limit)
        s->o.flight_limit = s->o.step > INT64_MAX / 64 ? INT64_MAX : 64 * s->o.step;
    if (!s->o.max_line)
        s->o.max_line = (size_t)64 << 10;
    if (!s->o.max_empty)
        s->o.max_empty = 256;
    s->diags = diags;
    s->fn = fn;
    s->late_fn = late_fn;
    s->ctx = ctx;
    s->tmin = INT64_MAX;
    s->tmax = s->maxtau = INT64_MIN;
    s->frontier = INT64_MIN;
    for (size_t i = 0; i < LATE_RING; i++)
        s->late_idx[i] = UINT64_MAX;
    lp_status st;
    s->lscratch = lp_malloc(s->o.max_line + 1);
    if (!s->lscratch || lp_strtab_init(&s->names)) {
        lp_strtab_release(&s->names);
        lp_free(s->lscratch);
        lp_free(s);
        return nomem(err);
    }
    /* the built-in types, in the builder's order, so type ids agree with every trace */
    lp_diags ds;
    lp_diags_init(&ds, 0);
    lp_builder *b = NULL;
    if ((st = lp_builder_new(&b, &ds, NULL, err))) {
        lp_diags_release(&ds);
        lp_stream_free(s);
        return st;
    }
    const lp_trace *bt = lp_builder_trace(b);
    for (uint32_t i = 0; i < bt->ntypes && !st; i++) {
        uint16_t ty;
        const char *nm = lp_trace_type_name(bt, i);
        st = lp_stream_type(s, nm, strlen(nm), &ty, err);
    }
    lp_builder_free(b);
    lp_diags_release(&ds);
    if (!st)
        st = lp_spool_init(s, err);
    if (st) {
        lp_stream_free(s);
        return st;
    }
    *out = s;
    return LP_OK;
}

void lp_stream_free(lp_stream *s)
{
    if (!s)
        return;
    lp_spool_free(s);
    names_dirty(s);
    lp_strtab_release(&s->names);
    lp_free(s->s2w);
    lp_free(s->s2t);
    lp_free(s->s2o);
    lp_free(s->tstr);
    lp_free(s->ostr);
    lp_free(s->opar);
    lp_hmap_release(&s->oppairs);
    for (uint32_t i = 0; i < s->nworkers; i++)
        lp_free(s->wk[i].stk);
    lp_free(s->wk);
    lp_free(s->wstr);
    for (uint32_t i = 0; i < s->nconns; i++) {
        lp_free(s->conns[i].name);
        lp_free(s->conns[i].part);
    }
    lp_free(s->conns);
    lp_free(s->lscratch);
    lp_free(s->st_wid);
    lp_free(s->st_oid);
    lp_free(s->store);
    lp_free(s->mark);
    lp_free(s->pend);
    lp_hmap32_release(&s->pendmap);
    lp_free(s->predt);
    lp_free(s->succt);
    lp_free(s->predi);
    lp_free(s->npredt);
    lp_free(s->npredi);
    lp_free(s);
}

size_t lp_stream_flow(const lp_stream *s, const uint32_t *ids, size_t n, uint8_t *ahead)
{
    size_t nahead = 0, nbehind = 0;
    int64_t lim = add_sat(s->te_open, s->o.step);
    for (size_t i = 0; i < n; i++) {
        const sconn *c = ids[i] < s->nconns ? &s->conns[ids[i]] : NULL;
        ahead[i] = s->frozen && c && c->open && c->last_t > lim;
        nahead += ahead[i];
        nbehind += c && c->open && !ahead[i];
    }
    if (!nbehind) { /* every one is ahead: nothing to wait for */
        if (n) memset(ahead, 0, n);
        return 0;
    }
    return nahead;
}

const lp_stream_stats *lp_stream_get_stats(const lp_stream *s) { return &s->st; }
unsigned lp_stream_threads(const lp_stream *s) { return s->nthreads; }
int64_t lp_stream_tmin(const lp_stream *s) { return s->tmin; }
int64_t lp_stream_origin(const lp_stream *s) { return s->origin; }
