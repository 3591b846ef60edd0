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
 * output order. Formatter threads claim blocks in order and format block b into slot
 * b % nslots once block b - nslots has been written; the calling thread writes the blocks
 * strictly in order. So the output does not depend on the number of threads, and memory
 * beyond the log is nslots buffers of one block's text. The first failure (memory, I/O)
 * stops every thread.
 */
#include "dataflow_int.h"
#include "longpole/alloc.h"
#include "core/util.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define NAME_MAX_ 64        /* worker names: at most 31 + 1 + 4 bytes, see df_worker_name */
#define SUFFIX_MAX 64       /* " <type> <operator>\n": at most 1 + 15 + 1 + 31 + 1 bytes */
#define ACT_LINE_MAX (2 + NAME_MAX_ + 2 * 21 + SUFFIX_MAX)
#define MSG_LINE_MAX (2 * (2 + 2 * NAME_MAX_ + 3 * 21 + 4) + 48)
#define MAX_THREADS 8

enum { BLK_HEADER, BLK_ACTS, BLK_MSGS };

typedef struct blk {
    uint32_t kind;      /* BLK_* */
    uint32_t w;         /* BLK_ACTS: the worker; BLK_MSGS: the mark it starts at */
    size_t lo, hi;      /* word range (BLK_ACTS) or message range (BLK_MSGS) */
    int64_t last;       /* BLK_ACTS: end of the activity before word lo (0 at the start) */
    size_t nrec;        /* records in the block, for its size bound */
} blk;

typedef struct slot {
    char *buf;
    size_t len, cap;
    size_t ready;       /* 1 + the block formatted here, 0 = none yet */
} slot;

typedef struct tw {
    const df_log *log;
    const lp_gen_dataflow *o;
    blk *blocks;
    size_t nblocks, nb_cap;
    char (*name)[NAME_MAX_];     /* per worker: its name */
    uint8_t *namelen;
    char (*suffix)[LP_TYPE_NBUILTIN][SUFFIX_MAX]; /* per operator (nops = job manager): " <type>[ <op>]\n" */
    uint8_t (*suflen)[LP_TYPE_NBUILTIN];
    pthread_mutex_t mu;
    pthread_cond_t ready_cv, free_cv;
    size_t next;                 /* next block to claim */
    size_t written;              /* blocks written */
    slot *slots;
    unsigned nslots;
    int failed;                  /* stop everything */
    lp_status st;                /* the first failure's status (a formatter's; I/O is the writer's) */
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
 * buffers keep SLACK bytes after each block's bound. */
#define SLACK 128
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
    const df_mark *mk = &l->marks[b->w];
    const uint8_t *q = l->mb + mk->off;
    int64_t prev_recv = mk->recv;
    uint64_t prev_id = mk->id;
    for (size_t i = b->lo; i < b->hi; i++) {
        df_msg msg;
        const df_msg *m = &msg;
        q = df_msg_get(q, &msg, &prev_recv, &prev_id);
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

static size_t block_bound(const blk *b)
{
    return b->kind == BLK_HEADER ? 17 + b->nrec * (NAME_MAX_ + 3)
           : b->kind == BLK_ACTS ? b->nrec * ACT_LINE_MAX
                                 : b->nrec * MSG_LINE_MAX;
}

/* Format block bi into sl; -1 when out of memory. */
static int format(const tw *t, size_t bi, slot *sl)
{
    const blk *b = &t->blocks[bi];
    size_t need = block_bound(b) + SLACK;
    if (need > sl->cap) {
        char *nb = lp_realloc(sl->buf, need);
        if (!nb)
            return -1;
        sl->buf = nb;
        sl->cap = need;
    }
    char *p = sl->buf;
    p = b->kind == BLK_HEADER ? fmt_header(t, p) : b->kind == BLK_ACTS ? fmt_acts(t, b, p) : fmt_msgs(t, b, p);
    sl->len = (size_t)(p - sl->buf);
    return 0;
}

/* ---- threads --------------------------------------------------------------------------- */

static void *formatter(void *arg)
{
    tw *t = arg;
    pthread_mutex_lock(&t->mu);
    while (!t->failed && t->next < t->nblocks) {
        size_t b = t->next++;
        slot *sl = &t->slots[b % t->nslots];
        while (!t->failed && b >= t->written + t->nslots)
            pthread_cond_wait(&t->free_cv, &t->mu);
        if (t->failed)
            break;
        pthread_mutex_unlock(&t->mu);
        int rc = format(t, b, sl);
        pthread_mutex_lock(&t->mu);
        if (rc) {
            t->failed = 1;
            t->st = LP_ERR_NOMEM;
            pthread_cond_broadcast(&t->free_cv);
        } else {
            sl->ready = b + 1;
        }
        pthread_cond_broadcast(&t->ready_cv);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* Report block b written (the header block counts its W records). */
static int progress(const tw *t, uint64_t *done, size_t b, uint64_t total)
{
    *done += t->blocks[b].nrec;
    return t->o->progress ? t->o->progress(t->o->progress_ctx, "writing", *done, total) : 0;
}

/* Write every block in order, formatted by `nthreads` threads (1: by this one). */
static lp_status write_blocks(tw *t, FILE *out, unsigned nthreads, lp_error *err)
{
    uint64_t total = 0, done = 0;
    for (size_t b = 0; b < t->nblocks; b++)
        total += t->blocks[b].nrec;
    if (nthreads <= 1 || t->nblocks < 4) {
        slot sl = {NULL, 0, 0, 0};
        lp_status st = LP_OK;
        for (size_t b = 0; b < t->nblocks && !st; b++) {
            if (format(t, b, &sl))
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            else if (sl.len && fwrite(sl.buf, 1, sl.len, out) != sl.len)
                st = lp_error_set(err, LP_ERR_IO, "write failed");
            else if (progress(t, &done, b, total))
                st = lp_error_set(err, LP_ERR_ARG, "cancelled");
        }
        lp_free(sl.buf);
        return st;
    }
    t->nslots = 2 * nthreads + 2;
    t->slots = lp_calloc(t->nslots, sizeof *t->slots);
    if (!t->slots)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    pthread_t th[MAX_THREADS];
    unsigned started = 0;
    lp_status st = LP_OK;
    for (; started < nthreads; started++)
        if (pthread_create(&th[started], NULL, formatter, t) != 0)
            break;
    if (!started) {
        st = lp_error_set(err, LP_ERR_NOMEM, "cannot start a formatting thread");
    } else {
        for (size_t b = 0; b < t->nblocks; b++) {
            slot *sl = &t->slots[b % t->nslots];
            pthread_mutex_lock(&t->mu);
            while (!t->failed && sl->ready != b + 1)
                pthread_cond_wait(&t->ready_cv, &t->mu);
            int failed = t->failed;
            pthread_mutex_unlock(&t->mu);
            if (failed)
                break;
            if (sl->len && fwrite(sl->buf, 1, sl->len, out) != sl->len) {
                st = lp_error_set(err, LP_ERR_IO, "write failed");
                break;
            }
            if (progress(t, &done, b, total)) {
                st = lp_error_set(err, LP_ERR_ARG, "cancelled");
                break;
            }
            pthread_mutex_lock(&t->mu);
            t->written = b + 1;
            pthread_cond_broadcast(&t->free_cv);
            pthread_mutex_unlock(&t->mu);
        }
    }
    pthread_mutex_lock(&t->mu);
    if (st || t->written < t->nblocks)
        t->failed = 1;
    pthread_cond_broadcast(&t->free_cv);
    pthread_cond_broadcast(&t->ready_cv);
    pthread_mutex_unlock(&t->mu);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (!st && t->st)
        st = lp_error_set(err, t->st, "out of memory");
    for (unsigned i = 0; i < t->nslots; i++)
        lp_free(t->slots[i].buf);
    lp_free(t->slots);
    return st;
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

static unsigned default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

lp_status lp_gen_dataflow_write(const lp_gen_dataflow *o, FILE *out, unsigned threads, lp_error *err)
{
    if (!o || !out)
        return lp_error_set(err, LP_ERR_ARG, "dataflow: no options or no output");
    lp_status st = df_validate(o, err);
    if (st)
        return st;
    df_log log;
    if ((st = df_log_init(&log, o, err)) || (st = df_simulate(&log, NULL, NULL, 0, err))) {
        df_log_release(&log);
        return st;
    }
    tw t;
    memset(&t, 0, sizeof t);
    t.log = &log;
    t.o = o;
    pthread_mutex_init(&t.mu, NULL);
    pthread_cond_init(&t.ready_cv, NULL);
    pthread_cond_init(&t.free_cv, NULL);
    if (!(st = setup_names(&t, err))) {
        if (make_blocks(&t))
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        else
            st = write_blocks(&t, out, threads ? (threads > MAX_THREADS ? MAX_THREADS : threads) : default_threads(),
                              err);
    }
    if (!st && (fflush(out) != 0 || ferror(out)))
        st = lp_error_set(err, LP_ERR_IO, "write failed");
    pthread_mutex_destroy(&t.mu);
    pthread_cond_destroy(&t.ready_cv);
    pthread_cond_destroy(&t.free_cv);
    lp_free(t.blocks);
    lp_free(t.name);
    lp_free(t.namelen);
    lp_free(t.suffix);
    lp_free(t.suflen);
    df_log_release(&log);
    return st;
}
