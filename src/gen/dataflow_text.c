/* dataflow_text.c: lp_gen_dataflow_write (gen.h): the dataflow simulation's log
 * (dataflow_int.h) written as .lpt text straight away, without building the trace,
 * formatted by several threads.
 *
 * The output is byte for byte what lp_lpt_write writes for the trace that
 * lp_gen_dataflow_run builds from the same options (tests/unit/test_gen_text.c compares them
 * over many option sets): the header, a W record per worker in id order, the A records
 * worker by worker in start order (no gaps: the writer omits them), then the messages in
 * receive order, as M records or S/R pairs. Generated names never need escaping
 * (operator names are [A-Za-z0-9_.-] and cannot start with '#').
 *
 * Invariants: the output is cut into blocks (the header and W records; runs of at most
 * DF_ACT_MARK activities of one worker; runs of DF_MSG_MARK messages), numbered in
 * output order and run through the ordered output (df_out, dataflow_out.c, on the thread
 * pool): formatted by several threads, written strictly in order. So the output does not depend on the number of
 * threads, and memory beyond the log is a few buffers of one block's text.
 */
#include "dataflow_int.h"
#include "longpole/base/alloc.h"
#include "base/util.h"

#include <string.h>

#define NAME_MAX_ 64        /* worker names: at most 31 + 1 + 4 bytes, see df_worker_name */
#define SUFFIX_MAX 64       /* " <type> <operator>\n": at most 1 + 15 + 1 + 31 + 1 bytes */
#define ACT_LINE_MAX (2 + NAME_MAX_ + 2 * 21 + SUFFIX_MAX)
#define MSG_LINE_MAX (2 * (2 + 2 * NAME_MAX_ + 3 * 21 + 4) + 48)

enum { BLK_HEADER, BLK_ACTS, BLK_MSGS };

typedef struct blk {
    uint32_t kind;      /* BLK_* */
    uint32_t w;         /* BLK_ACTS: the worker; BLK_MSGS: the mark it starts at */
    size_t lo, hi;      /* word range (BLK_ACTS) or message range (BLK_MSGS) */
    int64_t last;       /* BLK_ACTS: end of the activity before word lo (0 at the start) */
    size_t nrec;        /* records in the block, for its size bound */
} blk;

typedef struct tw {
    const df_log *log;
    const lp_gen_dataflow *o;
    blk *blocks;
    size_t nblocks, nb_cap;
    char (*name)[NAME_MAX_];     /* per worker: its name */
    uint8_t *namelen;
    char (*suffix)[LP_TYPE_NBUILTIN][SUFFIX_MAX]; /* per operator (nops = job manager): " <type>[ <op>]\n" */
    uint8_t (*suflen)[LP_TYPE_NBUILTIN];
    FILE *out;
    uint64_t done, total;        /* records written, records in all (progress) */
} tw;

/* " kind=<kind>\n", copied 16 bytes at a time */
static const char kind_suffix[DF_NKINDS][16] = {" kind=data\n", " kind=credit\n", " kind=barrier\n",
                                                " kind=ack\n", " kind=timer\n"};
static const uint8_t kind_len[DF_NKINDS] = {11, 13, 14, 10, 12};

/* ---- blocks -------------------------------------------------------------------------- */

static int add_block(tw *t, blk b)
{
    if (t->nblocks == t->nb_cap) {
        void *p = t->blocks;
        size_t cap = t->nb_cap;
        if (lp_grow(&p, &cap, t->nblocks + 1, sizeof(blk)))
            return -1;
        t->blocks = p;
        t->nb_cap = cap;
    }
    t->blocks[t->nblocks++] = b;
    return 0;
}

/* Cut the output into blocks (see the invariants). */
static int make_blocks(tw *t)
{
    const df_log *l = t->log;
    uint32_t nwk = l->nw + (uint32_t)l->has_jm;
    if (add_block(t, (blk){BLK_HEADER, 0, 0, 0, 0, (size_t)nwk + 1}))
        return -1;
    for (uint32_t w = 0; w < nwk; w++) {
        const df_acts *a = &l->acts[w];
        size_t lo = 0;
        int64_t last = 0;
        for (size_t j = 0; j <= a->nmarks; j++) { /* a block per mark (dataflow_int.h) */
            size_t hi = j < a->nmarks ? a->marks[j].k : a->n;
            size_t n = j < a->nmarks ? DF_ACT_MARK : a->nacts - a->nmarks * DF_ACT_MARK;
            if (n && add_block(t, (blk){BLK_ACTS, w, lo, hi, last, n}))
                return -1;
            if (j < a->nmarks) {
                lo = hi;
                last = a->marks[j].last;
            }
        }
    }
    for (size_t k = 0; k < l->nmarks; k++) { /* a block per mark */
        size_t lo = k * DF_MSG_MARK, hi = l->nmsgs - lo > DF_MSG_MARK ? lo + DF_MSG_MARK : l->nmsgs;
        if (add_block(t, (blk){BLK_MSGS, (uint32_t)k, lo, hi, 0, hi - lo}))
            return -1;
    }
    return 0;
}

/* ---- formatting ---------------------------------------------------------------------- */

static inline char *put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/* Copy a string of n <= K bytes from a buffer with K readable bytes as K bytes (a few
 * vector moves; a variable-length copy costs more for short strings): the output
 * buffers keep DF_OUT_SLACK bytes after each block's bound. */
#define PUTK(p, s, n, K) (memcpy((p), (s), (K)), (p) + (n))

static char *fmt_header(const tw *t, char *p)
{
    p = put(p, "longpole-trace 1\n", 17);
    for (uint32_t w = 0; w < t->log->nw + (uint32_t)t->log->has_jm; w++) {
        p = put(p, "W ", 2);
        p = put(p, t->name[w], t->namelen[w]);
        *p++ = '\n';
    }
    return p;
}

static char *fmt_acts(const tw *t, const blk *b, char *p)
{
    const df_acts *a = &t->log->acts[b->w];
    uint32_t op = df_worker_op(t->log, b->w);
    const char(*suf)[SUFFIX_MAX] = t->suffix[op];
    const uint8_t *sl = t->suflen[op];
    char pre[2 * NAME_MAX_];
    size_t pl = 0;
    pre[pl++] = 'A';
    pre[pl++] = ' ';
    memcpy(pre + pl, t->name[b->w], t->namelen[b->w]);
    pl += t->namelen[b->w];
    pre[pl++] = ' ';
    int64_t last = b->last;
    for (size_t k = b->lo; k < b->hi;) {
        int64_t start, end;
        uint32_t type;
        k = df_act_get(a->wd, k, &last, &start, &end, &type);
        p = PUTK(p, pre, pl, sizeof pre);
        p += lp_fmt_i64(p, start);
        *p++ = ' ';
        p += lp_fmt_i64(p, end);
        p = PUTK(p, suf[type], sl[type], SUFFIX_MAX);
    }
    return p;
}

static char *fmt_msgs(const tw *t, const blk *b, char *p)
{
    const df_log *l = t->log;
    df_rd rd;
    df_rd_mark(&rd, l, b->w);
    for (size_t i = b->lo; i < b->hi; i++) {
        df_msg msg;
        const df_msg *m = &msg;
        df_rd_msg(&rd, &msg);
        uint64_t id = m->id;
        uint32_t kind = m->kind < DF_NKINDS ? m->kind : DF_DATA;
        uint64_t bytes = kind == DF_DATA    ? (uint64_t)m->n * t->o->record_bytes
                         : kind == DF_CREDIT ? DF_CREDIT_BYTES
                         : kind == DF_TIMER  ? 0
                                             : DF_CTRL_BYTES;
        if (t->o->halves) {
            p = put(p, "S ", 2);
            p = PUTK(p, t->name[m->from], t->namelen[m->from], NAME_MAX_);
            *p++ = ' ';
            p += lp_fmt_i64(p, m->sent);
            *p++ = ' ';
            p = PUTK(p, t->name[m->to], t->namelen[m->to], NAME_MAX_);
            *p++ = ' ';
            p += lp_fmt_u64(p, id);
            p = put(p, " bytes=", 7);
            p += lp_fmt_u64(p, bytes);
            p = PUTK(p, kind_suffix[kind], kind_len[kind], 16);
            p = put(p, "R ", 2);
            p = PUTK(p, t->name[m->to], t->namelen[m->to], NAME_MAX_);
            *p++ = ' ';
            p += lp_fmt_i64(p, m->recv);
            *p++ = ' ';
            p = PUTK(p, t->name[m->from], t->namelen[m->from], NAME_MAX_);
            *p++ = ' ';
            p += lp_fmt_u64(p, id);
            *p++ = '\n';
            continue;
        }
        p = put(p, "M ", 2);
        p = PUTK(p, t->name[m->from], t->namelen[m->from], NAME_MAX_);
        *p++ = ' ';
        p += lp_fmt_i64(p, m->sent);
        *p++ = ' ';
        p = PUTK(p, t->name[m->to], t->namelen[m->to], NAME_MAX_);
        *p++ = ' ';
        p += lp_fmt_i64(p, m->recv);
        p = put(p, " id=", 4);
        p += lp_fmt_u64(p, id);
        p = put(p, " bytes=", 7);
        p += lp_fmt_u64(p, bytes);
        p = PUTK(p, kind_suffix[kind], kind_len[kind], 16);
    }
    return p;
}

static size_t block_bound(void *ctx, size_t bi)
{
    const blk *b = &((const tw *)ctx)->blocks[bi];
    return b->kind == BLK_HEADER ? 17 + b->nrec * (NAME_MAX_ + 3)
           : b->kind == BLK_ACTS ? b->nrec * ACT_LINE_MAX
                                 : b->nrec * MSG_LINE_MAX;
}

static size_t format(void *ctx, size_t bi, char *buf)
{
    const tw *t = ctx;
    const blk *b = &t->blocks[bi];
    char *p = b->kind == BLK_HEADER ? fmt_header(t, buf) : b->kind == BLK_ACTS ? fmt_acts(t, b, buf) : fmt_msgs(t, b, buf);
    return (size_t)(p - buf);
}

/* Write block bi (in order) and report progress (the header block counts its W records). */
static lp_status sink(void *ctx, size_t bi, const char *buf, size_t len, lp_error *err)
{
    tw *t = ctx;
    if (len && fwrite(buf, 1, len, t->out) != len)
        return lp_error_set(err, LP_ERR_IO, "write failed");
    t->done += t->blocks[bi].nrec;
    if (t->o->progress && t->o->progress(t->o->progress_ctx, "writing", t->done, t->total))
        return lp_error_set(err, LP_ERR_ARG, "cancelled");
    return LP_OK;
}

/* ---- the run ------------------------------------------------------------------------- */

static lp_status setup_names(tw *t, lp_error *err)
{
    const df_log *l = t->log;
    const lp_gen_dataflow *o = t->o;
    uint32_t nwk = l->nw + (uint32_t)l->has_jm;
    t->name = lp_calloc((size_t)nwk + 1, sizeof *t->name);
    t->namelen = lp_calloc((size_t)nwk + 1, sizeof *t->namelen);
    t->suffix = lp_calloc((size_t)o->nops + 1, sizeof *t->suffix);
    t->suflen = lp_calloc((size_t)o->nops + 1, sizeof *t->suflen);
    if (!t->name || !t->namelen || !t->suffix || !t->suflen)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint32_t w = 0; w < nwk; w++)
        t->namelen[w] = (uint8_t)df_worker_name(l, w, t->name[w]);
    for (uint32_t k = 0; k <= o->nops; k++)
        for (uint32_t ty = 0; ty < LP_TYPE_NBUILTIN; ty++) {
            int n = k < o->nops ? snprintf(t->suffix[k][ty], SUFFIX_MAX, " %s %s\n", lp_type_builtin_name(ty), o->ops[k].name)
                                : snprintf(t->suffix[k][ty], SUFFIX_MAX, " %s\n", lp_type_builtin_name(ty));
            t->suflen[k][ty] = (uint8_t)n;
        }
    return LP_OK;
}

lp_status lp_gen_dataflow_write(const lp_gen_dataflow *o, FILE *out, unsigned threads, lp_error *err)
{
    if (!o || !out)
        return lp_error_set(err, LP_ERR_ARG, "dataflow: no options or no output");
    df_log log;
    lp_status st = df_log_run(&log, o, err);
    if (st)
        return st;
    tw t;
    memset(&t, 0, sizeof t);
    t.log = &log;
    t.o = o;
    t.out = out;
    if (!(st = setup_names(&t, err))) {
        if (make_blocks(&t)) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        } else {
            for (size_t b = 0; b < t.nblocks; b++)
                t.total += t.blocks[b].nrec;
            df_out pipe = {t.nblocks, &t, block_bound, format, sink};
            unsigned nthr = lp_pool_threads(threads, DF_OUT_MAX_THREADS);
            lp_pool *pool = NULL; /* formatting threads, unless one or a few blocks */
            if (!(st = lp_pool_new(&pool, nthr > 1 && t.nblocks >= 4 ? nthr : 0, err)))
                st = df_out_run(&pipe, pool, err);
            lp_pool_free(pool);
        }
    }
    if (!st && (fflush(out) != 0 || ferror(out)))
        st = lp_error_set(err, LP_ERR_IO, "write failed");
    lp_free(t.blocks);
    lp_free(t.name);
    lp_free(t.namelen);
    lp_free(t.suffix);
    lp_free(t.suflen);
    df_log_release(&log);
    return st;
}
