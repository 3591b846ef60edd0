/* dataflow_bin.c: lp_gen_dataflow_write_lptb (gen.h): the dataflow simulation's log
 * (dataflow_int.h) written as a .lptb file straight away, without building the trace
 * in memory.
 *
 * The bytes are exactly what lp_lptb_write writes for the trace lp_gen_dataflow_run
 * builds from the same options (tests/unit/test_gen_direct.c compares them over many
 * option sets and thread counts). The names and attribute lists come from a builder fed
 * only the names (df_names), finished into a skeleton trace; the columns are computed
 * from the log, the activities with the builder's gap filling (MODEL.md "Gaps",
 * builder.c step 4) redone from the log.
 *
 * Steps
 *  1. Gap pieces: one pass over the message stream's receives walks every worker's
 *     activities alongside and records the pieces the builder's gap filling would make
 *     (a gap is split at every receive inside it; a piece is `waiting` when a receive
 *     happens at its end). The builder also splits gaps at sends, but no send falls in a
 *     gap: the simulation sends every message at the end of its sender's latest
 *     activity and checks it (sent_ok in dataflow.c). Workers are shared out among the
 *     threads, each reading every receive; receives out of time order fail the run as a
 *     generator bug. The data buffer sizes, in the order they first appeared, come from
 *     the log (df_log.dsizes).
 *  2. The skeleton: df_names, then the data lists in that order; finished.
 *  3. Rows: the activity blocks (a worker's activities between two marks of its log,
 *     with the gap pieces before them, and after the last one in its last block); the
 *     workers' row ranges and the extent follow.
 *  4. Output: the header and small sections, then every column as a run of blocks
 *     through the ordered output (df_out, dataflow_out.c): formatted on several threads,
 *     hashed (XXH3-64) and written in order; then the attribute pool and the checksum.
 *
 * Invariants: a block's rows are a function of the log, the gap pieces and the block
 * alone, so every column pass produces the same rows. A worker's pieces are in time
 * order, so a block's are a contiguous run found by binary search. Memory beyond the
 * log: 12 bytes a gap piece and a few blocks of output.
 */
#include "dataflow_int.h"
#include "formats/lptb_hdr.h"
#include "longpole/formats/lpt.h"
#include "longpole/base/alloc.h"

#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

enum { AC_START, AC_END, AC_TYPE, AC_OP, AC_ATTR, AC_FLAGS, NACOLS };
enum { MC_SRC, MC_DST, MC_SEND, MC_RECV, MC_ID, MC_ATTR, MC_FLAGS, NMCOLS };
static const uint8_t acol_size[NACOLS] = {8, 8, 2, 4, 4, 1};
static const uint8_t mcol_size[NMCOLS] = {4, 4, 8, 8, 8, 4, 1};

enum { OB_HEAD, OB_ACOL, OB_MCOL, OB_TAIL };

typedef struct ablk {
    uint32_t w;
    uint8_t first, last; /* the worker's first / last block */
    uint64_t alo, ahi;   /* activities [alo, ahi) of the worker */
    size_t lo;           /* the word of activity alo in the worker's log */
    int64_t prev;        /* end of the activity before alo (0 before the first) */
    size_t plo, phi;     /* its gap pieces (wgaps): regions alo..ahi-1, and ahi in the last block */
    uint64_t rows;       /* activities and gap pieces */
} ablk;

typedef struct oblk {
    uint8_t kind, col;
    uint8_t pad;         /* zero bytes after the block: the last block of a section pads it to 8 bytes */
    size_t idx;          /* activity block or message mark */
} oblk;

/* A worker's gap pieces (step 1), in time order: piece k fills part of gap region
 * reg[k] >> 1 (the time before activity reg, or after the last one when reg = the
 * worker's activity count), ends at end[k], and is `waiting` when reg[k] & 1. */
typedef struct wgaps {
    uint32_t *reg;
    int64_t *end;
    size_t n, cap;
    int64_t first, last;  /* the worker's first and last event (first > last: none) */
} wgaps;

/* Walking a worker's activities in order. */
typedef struct acur {
    const uint64_t *wd;
    size_t k;              /* word of the next activity to decode */
    uint64_t j, n;         /* current activity, activities */
    int64_t prev, s, e;    /* decoder state; activity j's start and end (j < n) */
} acur;

static inline void acur_next(acur *c)
{
    uint32_t type;
    if (++c->j < c->n)
        c->k = df_act_get(c->wd, c->k, &c->prev, &c->s, &c->e, &type);
}

static void acur_init(acur *c, const df_acts *a)
{
    *c = (acur){a->wd, 0, (uint64_t)-1, a->nacts, 0, 0, 0};
    acur_next(c);
}

typedef struct bw {
    const df_log *log;
    const lp_gen_dataflow *o;
    uint32_t nwk;
    unsigned nthr;
    lp_pool *pool;             /* nthr workers (none for one thread): step 1 and the output */
    /* step 1 */
    wgaps *wg;                 /* [nwk] */
    /* names */
    lp_trace *skel;
    uint32_t *dattr;           /* [batch + 1] */
    uint32_t kattr[DF_NKINDS];
    lp_str *wop;               /* [nwk]: each worker's operator name, or LP_STR_NONE */
    /* rows */
    ablk *ab;
    size_t nab, abcap;
    uint64_t *wrows;           /* [nwk + 1]: row ranges (the file's activity offsets) */
    uint64_t nrows, ngaps;
    int64_t tmin, tmax;
    /* output */
    char *head;
    size_t headlen;
    oblk *ob;
    size_t nob;
    FILE *out;
    XXH3_state_t *h;
    uint64_t bytes_done, bytes_total, records;
} bw;

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

/* Messages of mark k. */
static size_t mark_msgs(const df_log *l, size_t k)
{
    size_t lo = k * DF_MSG_MARK;
    return l->nmsgs - lo > DF_MSG_MARK ? DF_MSG_MARK : l->nmsgs - lo;
}

/* ---- step 1: gap pieces ------------------------------------------------------------ */

/* What a part of step 1 found wrong. */
typedef struct pass_out {
    int nomem;
    const char *bad;           /* what the log breaks (a generator bug) */
} pass_out;

static int add_piece_grow(wgaps *g)
{
    size_t cap = g->cap, cap2 = g->cap;
    void *p = g->reg, *q = g->end;
    if (lp_grow(&p, &cap, g->n + 1, sizeof(uint32_t)))
        return -1;
    g->reg = p;
    if (lp_grow(&q, &cap2, g->n + 1, sizeof(int64_t)))
        return -1;
    g->end = q;
    g->cap = cap < cap2 ? cap : cap2;
    return 0;
}

static inline int add_piece(wgaps *g, uint64_t reg, int64_t end, int waiting)
{
    if (g->n == g->cap && add_piece_grow(g))
        return -1;
    g->reg[g->n] = (uint32_t)(reg << 1) | (uint32_t)waiting;
    g->end[g->n++] = end;
    return 0;
}

/* A worker's gap filling, driven by its receives in time order (builder.c step 4; no send
 * falls inside a gap, as the simulation checks: sent_ok in dataflow.c): `cur` is the time
 * reached in the current region (activity a.j's), `at_limit` says a receive happened at
 * its end. */
typedef struct rstate {
    acur a;
    int64_t cur, lastrecv;
    int at_limit, seen;
} rstate;

/* Close the regions that end before t (t = INT64_MAX: all of them). */
static int close_regions(wgaps *g, rstate *r, int64_t t)
{
    if (!(r->a.j < r->a.n && r->a.s < t))
        return 0;
    /* the walk on locals: the pieces' arrays cannot alias them */
    acur a = r->a;
    int64_t cur = r->cur;
    int at_limit = r->at_limit, rc = 0;
    do {
        if (cur < a.s && add_piece(g, a.j, a.s, at_limit)) {
            rc = -1;
            break;
        }
        cur = a.e;
        at_limit = 0;
        acur_next(&a);
    } while (a.j < a.n && a.s < t);
    r->a = a;
    r->cur = cur;
    r->at_limit = at_limit;
    return rc;
}

/* Step 1 on several threads: thread t makes the pieces of the workers it owns (owner[w]
 * == t), reading every receive and skipping the others'. */
typedef struct scan_ctx {
    const bw *x;
    const uint8_t *owner;
    pass_out out[DF_OUT_MAX_THREADS];
} scan_ctx;

static lp_status recv_part(void *ctx, size_t tid, size_t nthr, lp_error *err)
{
    scan_ctx *c = ctx;
    const bw *x = c->x;
    const df_log *l = x->log;
    pass_out *o = &c->out[tid];
    rstate *st = lp_calloc(x->nwk, sizeof *st);
    if (!st) {
        o->nomem = 1;
        return LP_OK;
    }
    for (uint32_t w = 0; w < x->nwk; w++) {
        acur_init(&st[w].a, &l->acts[w]);
        st[w].cur = st[w].a.n ? st[w].a.s : INT64_MAX;
    }
    int fail = 0;
    for (size_t k = 0; k < l->nmarks && !fail; k++) {
        df_rd rd;
        df_rd_mark(&rd, l, k);
        for (size_t i = 0, n = mark_msgs(l, k); i < n; i++) {
            int64_t t = df_rd_recv(&rd);
            uint64_t to = df_rd_field(&rd, DF_F_TO);
            if (to >= x->nwk) {
                o->bad = "a receiver out of range";
                fail = 1;
                break;
            }
            if (c->owner[to] != tid)
                continue;
            rstate *r = &st[to];
            wgaps *g = &x->wg[to];
            if (!r->seen) { /* the first event may be this receive, before the first activity */
                r->seen = 1;
                if (t < r->cur)
                    r->cur = t;
                g->first = r->cur;
            } else if (t < r->lastrecv) {
                o->bad = "receives out of time order";
                fail = 1;
                break;
            }
            r->lastrecv = t;
            if (close_regions(g, r, t)) {
                o->nomem = fail = 1;
                break;
            }
            if (t <= r->cur)
                continue; /* during an activity or at the region's start */
            if (r->a.j < r->a.n && t == r->a.s) {
                r->at_limit = 1; /* ends the region's last piece */
            } else {
                if (add_piece(g, r->a.j, t, 1)) {
                    o->nomem = fail = 1;
                    break;
                }
                r->cur = t;
            }
        }
    }
    for (uint32_t w = 0; w < x->nwk && !fail; w++) {
        if (c->owner[w] != tid)
            continue;
        rstate *r = &st[w];
        wgaps *g = &x->wg[w];
        const df_acts *a = &l->acts[w];
        if (!r->seen)
            g->first = a->nacts ? r->cur : INT64_MAX;
        if (close_regions(g, r, INT64_MAX)) {
            o->nomem = 1;
            break;
        }
        int64_t last = a->nacts ? a->last : INT64_MIN;
        g->last = r->seen && r->lastrecv > last ? r->lastrecv : last;
    }
    lp_free(st);
    return LP_OK;
}

static lp_status scan(bw *x, lp_error *err)
{
    const df_log *l = x->log;
    x->wg = lp_calloc((size_t)x->nwk + 1, sizeof *x->wg);
    uint8_t *owner = lp_calloc((size_t)x->nwk + 1, 1);
    uint64_t *load = lp_calloc(DF_OUT_MAX_THREADS, sizeof *load);
    if (!x->wg || !owner || !load) {
        lp_free(owner);
        lp_free(load);
        return nomem(err);
    }
    /* workers to threads, the largest first to the least loaded (activities walked) */
    unsigned nt = x->nthr > x->nwk ? (x->nwk ? x->nwk : 1) : x->nthr;
    for (uint32_t done = 0; done < x->nwk; done++) {
        uint32_t big = UINT32_MAX;
        for (uint32_t w = 0; w < x->nwk; w++)
            if (!owner[w] && (big == UINT32_MAX || l->acts[w].nacts > l->acts[big].nacts))
                big = w;
        unsigned t = 0;
        for (unsigned u = 1; u < nt; u++)
            t = load[u] < load[t] ? u : t;
        owner[big] = (uint8_t)(t + 1); /* 0 = not yet placed */
        load[t] += l->acts[big].nacts + 1;
    }
    for (uint32_t w = 0; w < x->nwk; w++)
        owner[w]--;
    int bad = 0;
    for (uint32_t w = 0; w < x->nwk; w++)
        bad |= l->acts[w].nacts >= (UINT64_C(1) << 31);
    scan_ctx c;
    memset(&c, 0, sizeof c);
    c.x = x;
    c.owner = owner;
    if (!bad)
        lp_pool_run(x->pool, nt, recv_part, &c, NULL);
    lp_free(owner);
    lp_free(load);
    if (bad)
        return lp_error_set(err, LP_ERR_LIMIT, "a worker with 2^31 activities or more");
    for (unsigned t = 0; t < nt; t++)
        if (c.out[t].nomem)
            return nomem(err);
    for (unsigned t = 0; t < nt; t++)
        if (c.out[t].bad)
            return lp_error_set(err, LP_ERR_DATA, "dataflow generator bug: %s", c.out[t].bad);
    return LP_OK;
}

/* ---- step 2: names ----------------------------------------------------------------- */

static lp_status skeleton(bw *x, lp_error *err)
{
    lp_diags ds;
    lp_diags_init(&ds, 1);
    lp_builder *b = NULL;
    df_names nm;
    memset(&nm, 0, sizeof nm);
    lp_status st = lp_builder_new(&b, &ds, NULL, err);
    if (!st)
        st = df_names_setup(&nm, b, x->log, err);
    for (size_t i = 0; i < x->log->ndsizes && !st; i++) { /* in order of first appearance */
        uint32_t list;
        st = df_names_data(&nm, x->log->dsizes[i], &list, err);
    }
    if (!st) {
        x->dattr = nm.dattr; /* kept: the message attribute column */
        nm.dattr = NULL;
        memcpy(x->kattr, nm.kattr, sizeof x->kattr);
        x->wop = lp_calloc((size_t)x->nwk + 1, sizeof *x->wop);
        if (!x->wop)
            st = nomem(err);
        for (uint32_t w = 0; w < x->nwk && !st; w++) {
            uint32_t k = df_worker_op(x->log, w);
            x->wop[w] = k < x->o->nops ? nm.opname[k] : LP_STR_NONE;
        }
    }
    df_names_release(&nm);
    if (st) {
        lp_builder_free(b);
    } else {
        st = lp_builder_finish(b, &x->skel, err);
        if (!st && (ds.nerrors || ds.nwarnings))
            st = lp_error_set(err, LP_ERR_DATA, "dataflow generator bug: the builder reported a name");
    }
    lp_diags_release(&ds);
    return st;
}

/* ---- step 3: rows ------------------------------------------------------------------ */

/* First piece of g whose region is >= reg. */
static size_t piece_lower(const wgaps *g, uint64_t reg)
{
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((g->reg[mid] >> 1) < reg)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Block b's column `col` (AC_START, AC_END, AC_TYPE) into out: its activities merged with
 * its gap pieces. A piece starts where the row before it ended: the activity before the
 * block, or the worker's first event in its first block. */
static void emit_block(const bw *x, const ablk *b, int col, void *out)
{
    const df_acts *a = &x->log->acts[b->w];
    const wgaps *g = &x->wg[b->w];
    int64_t *o64 = out;
    uint16_t *o16 = out;
    int64_t prev = b->prev, end = b->first ? g->first : b->prev;
    size_t k = b->lo, p = b->plo;
    uint64_t r = 0;
    for (uint64_t j = b->alo;; j++) {
        for (; p < b->phi && (g->reg[p] >> 1) == j; p++, r++) {
            int64_t e = g->end[p];
            if (col == AC_START)
                o64[r] = end;
            else if (col == AC_END)
                o64[r] = e;
            else
                o16[r] = (g->reg[p] & 1) ? LP_TYPE_WAITING : LP_TYPE_UNKNOWN;
            end = e;
        }
        if (j == b->ahi)
            break;
        int64_t s, e;
        uint32_t type;
        k = df_act_get(a->wd, k, &prev, &s, &e, &type);
        if (col == AC_START)
            o64[r] = s;
        else if (col == AC_END)
            o64[r] = e;
        else
            o16[r] = (uint16_t)type;
        end = e;
        r++;
    }
}

/* Block b's operator or flag column: each activity's operator (or 0), a gap's
 * LP_STR_NONE (or LP_ACT_GAP). Piece p is row (its region - alo) + (p - plo). */
static void emit_gapcol(const bw *x, const ablk *b, int col, void *out)
{
    const wgaps *g = &x->wg[b->w];
    uint32_t *o32 = out;
    uint8_t *o8 = out;
    lp_str op = x->wop[b->w];
    if (col == AC_OP)
        for (uint64_t r = 0; r < b->rows; r++)
            o32[r] = op;
    else
        memset(o8, 0, (size_t)b->rows);
    for (size_t p = b->plo; p < b->phi; p++) {
        uint64_t r = (g->reg[p] >> 1) - b->alo + (p - b->plo);
        if (col == AC_OP)
            o32[r] = LP_STR_NONE;
        else
            o8[r] = LP_ACT_GAP;
    }
}

static int add_ablk(bw *x, ablk b)
{
    void *p = x->ab;
    if (lp_grow(&p, &x->abcap, x->nab + 1, sizeof(ablk)))
        return -1;
    x->ab = p;
    x->ab[x->nab++] = b;
    return 0;
}

/* The activity blocks: a worker's activities between two marks of its log, with the gap
 * pieces before them (and after the last, in the worker's last block). */
static lp_status rows(bw *x, lp_error *err)
{
    const df_log *l = x->log;
    x->wrows = lp_calloc((size_t)x->nwk + 1, sizeof *x->wrows);
    if (!x->wrows)
        return nomem(err);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t w = 0; w < x->nwk; w++) {
        const df_acts *a = &l->acts[w];
        const wgaps *g = &x->wg[w];
        x->wrows[w + 1] = x->wrows[w] + a->nacts + g->n;
        x->ngaps += g->n;
        if (g->first > g->last)
            continue; /* no events */
        lo = g->first < lo ? g->first : lo;
        hi = g->last > hi ? g->last : hi;
        uint64_t alo = 0;
        size_t wlo = 0;
        int64_t prev = 0;
        for (size_t j = 0; j <= a->nmarks; j++) { /* a block per mark (dataflow_int.h) */
            uint64_t ahi = j < a->nmarks ? (uint64_t)(j + 1) * DF_ACT_MARK : a->nacts;
            int lastblk = j == a->nmarks;
            ablk b = {.w = w, .first = alo == 0, .last = (uint8_t)lastblk, .alo = alo, .ahi = ahi, .lo = wlo,
                      .prev = prev, .plo = piece_lower(g, alo), .phi = lastblk ? g->n : piece_lower(g, ahi)};
            b.rows = (ahi - alo) + (b.phi - b.plo);
            if (b.rows && add_ablk(x, b))
                return nomem(err);
            if (!lastblk) {
                alo = ahi;
                wlo = a->marks[j].k;
                prev = a->marks[j].last;
            }
        }
    }
    x->nrows = x->wrows[x->nwk];
    if (x->nrows >= LP_NONE32)
        return lp_error_set(err, LP_ERR_LIMIT, "more than %u activities after gap filling", LP_NONE32 - 1);
    if (l->nmsgs >= (uint64_t)LP_NONE32 - 1)
        return lp_error_set(err, LP_ERR_LIMIT, "more than %u messages", LP_NONE32 - 2);
    if (lo > hi)
        lo = hi = 0;
    x->tmin = lo;
    x->tmax = hi;
    return LP_OK;
}

/* ---- step 4: output ---------------------------------------------------------------- */

static size_t pad8(size_t n) { return (8 - (n & 7)) & 7; }

/* Header, strings, type names, worker names and attributes, activity offsets. */
static lp_status make_head(bw *x, lp_error *err)
{
    const lp_trace *t = x->skel;
    if (t->nworkers != x->nwk)
        return lp_error_set(err, LP_ERR_DATA, "dataflow generator bug: %u workers named, %u simulated", t->nworkers,
                            x->nwk);
    size_t strbytes = t->strs.bytes + t->strs.n;
    size_t len = LP_LPTB_HDR_SIZE + strbytes + pad8(strbytes);
    len += 4 * (size_t)t->ntypes + pad8(4 * (size_t)t->ntypes);
    len += 2 * (4 * (size_t)x->nwk + pad8(4 * (size_t)x->nwk));
    len += 8 * ((size_t)x->nwk + 1);
    char *p = lp_calloc(len, 1);
    if (!p)
        return nomem(err);
    x->head = p;
    x->headlen = len;
    lp_lptb_hdr h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, LP_LPTB_MAGIC, 8);
    h.version = LP_LPTB_VERSION;
    h.nstrings = t->strs.n;
    h.strbytes = strbytes;
    h.ntypes = t->ntypes;
    h.nworkers = x->nwk;
    h.nacts = x->nrows;
    h.nmsgs = x->log->nmsgs;
    h.napool = t->napool;
    h.ngaps = x->ngaps;
    h.tmin = x->tmin;
    h.tmax = x->tmax;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    for (uint32_t i = 0; i < t->strs.n; i++) {
        memcpy(p, t->strs.ptr[i], t->strs.len[i]);
        p += t->strs.len[i] + 1; /* NUL: calloc'd */
    }
    p += pad8(strbytes);
#define SECTION(src, elem, n)                      \
    do {                                           \
        memcpy(p, (src), (size_t)(elem) * (n));    \
        p += (size_t)(elem) * (n);                 \
        p += pad8((size_t)(elem) * (n));           \
    } while (0)
    SECTION(t->type_name, 4, t->ntypes);
    SECTION(t->wname, 4, x->nwk);
    SECTION(t->wattr, 4, x->nwk);
    SECTION(x->wrows, 8, (size_t)x->nwk + 1);
#undef SECTION
    return LP_OK;
}

static int add_oblk(bw *x, size_t *cap, oblk b)
{
    void *p = x->ob;
    if (lp_grow(&p, cap, x->nob + 1, sizeof(oblk)))
        return -1;
    x->ob = p;
    x->ob[x->nob++] = b;
    return 0;
}

static lp_status make_oblocks(bw *x, lp_error *err)
{
    size_t cap = 0;
    if (add_oblk(x, &cap, (oblk){OB_HEAD, 0, 0, 0}))
        return nomem(err);
    for (uint8_t c = 0; c < NACOLS; c++) {
        uint8_t pad = (uint8_t)pad8((size_t)x->nrows * acol_size[c]);
        for (size_t i = 0; i < x->nab; i++)
            if (add_oblk(x, &cap, (oblk){OB_ACOL, c, i + 1 == x->nab ? pad : 0, i}))
                return nomem(err);
    }
    for (uint8_t c = 0; c < NMCOLS; c++) {
        uint8_t pad = (uint8_t)pad8(x->log->nmsgs * mcol_size[c]);
        for (size_t k = 0; k < x->log->nmarks; k++)
            if (add_oblk(x, &cap, (oblk){OB_MCOL, c, k + 1 == x->log->nmarks ? pad : 0, k}))
                return nomem(err);
    }
    if (add_oblk(x, &cap, (oblk){OB_TAIL, 0, (uint8_t)pad8((size_t)x->skel->napool * 4), 0}))
        return nomem(err);
    return LP_OK;
}

static size_t ob_bound(void *ctx, size_t bi)
{
    const bw *x = ctx;
    const oblk *b = &x->ob[bi];
    switch (b->kind) {
    case OB_HEAD:
        return x->headlen;
    case OB_ACOL:
        return (size_t)x->ab[b->idx].rows * acol_size[b->col] + 8;
    case OB_MCOL:
        return mark_msgs(x->log, b->idx) * mcol_size[b->col] + 8;
    default:
        return (size_t)x->skel->napool * 4 + 8;
    }
}

static size_t fmt_acol(const bw *x, const oblk *b, char *buf)
{
    const ablk *a = &x->ab[b->idx];
    size_t len = (size_t)a->rows * acol_size[b->col];
    switch (b->col) {
    case AC_START:
    case AC_END:
    case AC_TYPE:
        emit_block(x, a, b->col, buf);
        break;
    case AC_OP:
    case AC_FLAGS:
        emit_gapcol(x, a, b->col, buf);
        break;
    default: /* AC_ATTR: generated activities have no attributes */
        memset(buf, 0, len);
        break;
    }
    return len;
}

static size_t fmt_mcol(const bw *x, const oblk *b, char *buf)
{
    const df_log *l = x->log;
    size_t n = mark_msgs(l, b->idx);
    if (b->col == MC_FLAGS) {
        memset(buf, x->o->halves ? LP_MSG_HALVES : 0, n);
        return n;
    }
    df_rd rd;
    df_rd_mark(&rd, l, b->idx);
    uint32_t *o32 = (uint32_t *)(void *)buf;
    int64_t *o64 = (int64_t *)(void *)buf;
    switch (b->col) { /* each column reads only its fields' streams */
    case MC_SRC:
        for (size_t i = 0; i < n; i++)
            o32[i] = (uint32_t)df_rd_field(&rd, DF_F_FROM);
        break;
    case MC_DST:
        for (size_t i = 0; i < n; i++)
            o32[i] = (uint32_t)df_rd_field(&rd, DF_F_TO);
        break;
    case MC_SEND:
        for (size_t i = 0; i < n; i++) {
            int64_t recv = df_rd_recv(&rd);
            o64[i] = (int64_t)((uint64_t)recv - df_rd_field(&rd, DF_F_LAT));
        }
        break;
    case MC_RECV:
        for (size_t i = 0; i < n; i++)
            o64[i] = df_rd_recv(&rd);
        break;
    case MC_ID:
        for (size_t i = 0; i < n; i++)
            o64[i] = (int64_t)df_rd_id(&rd);
        break;
    default:
        for (size_t i = 0; i < n; i++) {
            uint64_t k = df_rd_field(&rd, DF_F_KIND);
            o32[i] = (k & 7) == DF_DATA ? x->dattr[k >> 3] : x->kattr[k & 7];
        }
        break;
    }
    return n * mcol_size[b->col];
}

static size_t ob_format(void *ctx, size_t bi, char *buf)
{
    const bw *x = ctx;
    const oblk *b = &x->ob[bi];
    size_t len;
    switch (b->kind) {
    case OB_HEAD:
        memcpy(buf, x->head, x->headlen);
        return x->headlen;
    case OB_ACOL:
        len = fmt_acol(x, b, buf);
        break;
    case OB_MCOL:
        len = fmt_mcol(x, b, buf);
        break;
    default:
        len = (size_t)x->skel->napool * 4;
        memcpy(buf, x->skel->apool, len);
        break;
    }
    memset(buf + len, 0, b->pad);
    return len + b->pad;
}

static lp_status ob_sink(void *ctx, size_t bi, const char *buf, size_t len, lp_error *err)
{
    (void)bi;
    bw *x = ctx;
    if (len && fwrite(buf, 1, len, x->out) != len)
        return lp_error_set(err, LP_ERR_IO, "write failed");
    XXH3_64bits_update(x->h, buf, len);
    x->bytes_done += len;
    if (x->o->progress) {
        uint64_t done = (uint64_t)((double)x->records * (double)x->bytes_done / (double)x->bytes_total);
        if (x->o->progress(x->o->progress_ctx, "writing", done, x->records))
            return lp_error_set(err, LP_ERR_ARG, "cancelled");
    }
    return LP_OK;
}

static lp_status write_all(bw *x, lp_error *err)
{
    lp_status st = make_head(x, err);
    if (!st)
        st = make_oblocks(x, err);
    if (st)
        return st;
    x->h = XXH3_createState();
    if (!x->h)
        return nomem(err);
    XXH3_64bits_reset(x->h);
    for (size_t b = 0; b < x->nob; b++) /* the exact size, for progress */
        x->bytes_total += ob_bound(x, b) - (x->ob[b].kind == OB_HEAD ? 0 : 8) + x->ob[b].pad;
    x->bytes_total = x->bytes_total ? x->bytes_total : 1;
    x->records = x->nrows + x->log->nmsgs;
    df_out pipe = {x->nob, x, ob_bound, ob_format, ob_sink};
    st = df_out_run(&pipe, x->pool, err);
    if (!st) {
        uint64_t sum = XXH3_64bits_digest(x->h);
        if (fwrite(&sum, 1, 8, x->out) != 8 || fflush(x->out) != 0 || ferror(x->out))
            st = lp_error_set(err, LP_ERR_IO, "write failed");
    }
    return st;
}

static void release(bw *x)
{
    lp_pool_free(x->pool);
    lp_trace_free(x->skel);
    lp_free(x->dattr);
    lp_free(x->wop);
    if (x->wg)
        for (uint32_t w = 0; w < x->nwk; w++) {
            lp_free(x->wg[w].reg);
            lp_free(x->wg[w].end);
        }
    lp_free(x->wg);
    lp_free(x->ab);
    lp_free(x->wrows);
    lp_free(x->head);
    lp_free(x->ob);
    if (x->h)
        XXH3_freeState(x->h);
}

lp_status lp_gen_dataflow_write_lptb(const lp_gen_dataflow *o, FILE *out, unsigned threads, lp_error *err)
{
    if (!o || !out)
        return lp_error_set(err, LP_ERR_ARG, "dataflow: no options or no output");
    df_log log;
    lp_status st = df_log_run(&log, o, err);
    if (st)
        return st;
    bw x;
    memset(&x, 0, sizeof x);
    x.log = &log;
    x.o = o;
    x.out = out;
    x.nwk = log.nw + (uint32_t)log.has_jm;
    x.nthr = lp_pool_threads(threads, DF_OUT_MAX_THREADS);
    if (!(st = lp_pool_new(&x.pool, x.nthr > 1 ? x.nthr : 0, err)) && !(st = scan(&x, err)) &&
        !(st = skeleton(&x, err)) && !(st = rows(&x, err)))
        st = write_all(&x, err);
    release(&x);
    df_log_release(&log);
    return st;
}
