/* dataflow_int.h: the dataflow generator's record log, between the simulation
 * (dataflow.c) and its outputs: a trace built through lp_builder (dataflow_build.c),
 * or .lpt text (dataflow_text.c) or .lptb (dataflow_bin.c) written straight from the
 * log by several threads.
 *
 * Invariants
 *  - Simulation worker i < nw is "<name of its operator k>.<i - opfirst[k]>"; worker nw,
 *    when has_jm, is "jobmanager". Builder worker ids are the simulation indices (workers are declared
 *    in that order, before any record), so both outputs name workers alike.
 *  - acts[i] holds worker i's activities in start order, never overlapping, as packed
 *    words (df_act_* below); `last` is the end of the last one.
 *  - The message log holds nmsgs messages in receive (emission) order, field by field:
 *    six LEB128 varint streams ms[f][0, mlen[f]) (DF_F_*): receive time minus the
 *    previous message's (zigzag), receive minus send time, id minus the previous id
 *    (zigzag), sender, receiver, kind | records << 3. A reader of one field reads only
 *    its stream (the binary writer formats a column at a time). Per sender send times
 *    are in order too; ids are unique. Decoding starts from (base_recv, base_id) at
 *    offset 0 of every stream, or from marks[k] at message k * DF_MSG_MARK. About 12
 *    bytes a message instead of 32.
 * The outputs read only the log: the text one writes exactly what lp_lpt_write would
 * write for the built trace (tests/unit/test_gen_direct.c checks it byte for byte), the
 * binary one (dataflow_bin.c) exactly what lp_lptb_write would.
 */
#ifndef LP_GEN_DATAFLOW_INT_H
#define LP_GEN_DATAFLOW_INT_H

#include "longpole/gen/gen.h"
#include "base/pool.h"

#include <stdint.h>
#include <stdio.h>

/* Activity words: type (4 bits) | length (30 bits) << 4 | time since the previous
 * activity's end (30 bits) << 34; an activity that does not fit is DF_ESCAPE | type << 4
 * followed by its start and end. */
#define DF_ESCAPE 15u
#define DF_FIT (UINT64_C(1) << 30)

/* Where activity number j * DF_ACT_MARK (j >= 1) of a worker starts: its word index
 * and the end of the activity before it (decoding can start there). */
typedef struct df_amark {
    size_t k;
    int64_t last;
} df_amark;
#define DF_ACT_MARK 32768

typedef struct df_acts {
    uint64_t *wd;      /* activity words */
    size_t n, cap;
    int64_t last;      /* end of the last activity */
    size_t nacts;      /* activities */
    df_amark *marks;   /* marks[j - 1]: before activity j * DF_ACT_MARK */
    size_t nmarks, markcap;
} df_acts;

/* Decode the activity at wd[k], which follows one that ended at *last (0 for the
 * first); updates *last and returns the index of the next activity. */
static inline size_t df_act_get(const uint64_t *wd, size_t k, int64_t *last, int64_t *start, int64_t *end,
                                uint32_t *type)
{
    uint64_t x = wd[k++];
    if ((x & 15) != DF_ESCAPE) {
        *type = (uint32_t)(x & 15);
        *start = (int64_t)((uint64_t)*last + (x >> 34));
        *end = (int64_t)((uint64_t)*start + ((x >> 4) & (DF_FIT - 1)));
    } else {
        *type = (uint32_t)((x >> 4) & 15);
        *start = (int64_t)wd[k++];
        *end = (int64_t)wd[k++];
    }
    *last = *end;
    return k;
}

#define DF_CREDIT_BYTES 16u /* size of a credit message */
#define DF_CTRL_BYTES 64u   /* size of a barrier or ack message (a timer has 0 bytes) */

/* Message kinds. */
enum { DF_DATA = 0, DF_CREDIT, DF_BARRIER, DF_ACK, DF_TIMER, DF_NKINDS };

/* A decoded message. */
typedef struct df_msg {
    int64_t recv, sent;
    uint64_t id;
    uint32_t from, to; /* simulation worker indices */
    uint32_t kind, n;  /* DF_*; records of a data message */
} df_msg;

/* Message fields, one varint stream each. */
enum { DF_F_RECV, DF_F_LAT, DF_F_ID, DF_F_FROM, DF_F_TO, DF_F_KIND, DF_NF };

/* Decoder state before a message: its offset in each stream, the previous receive
 * time and id. */
typedef struct df_mark {
    size_t off[DF_NF];
    int64_t recv;
    uint64_t id;
} df_mark;
#define DF_MSG_MARK 16384 /* a mark every this many messages */
#define DF_VARINT_MAX 10  /* bytes of one encoded field, at most */

typedef struct df_log {
    const lp_gen_dataflow *o;    /* the (validated) options: operator names */
    uint32_t nw;                 /* simulation workers (without the job manager) */
    int has_jm;                  /* worker nw is the job manager */
    uint32_t opfirst[LP_GEN_MAXOPS + 1]; /* first worker of each operator; opfirst[nops] = nw */
    df_acts *acts;               /* nw + 1 entries */
    uint8_t *ms[DF_NF];          /* the message log, a stream per field */
    size_t mlen[DF_NF], mcap[DF_NF];
    size_t room;                 /* messages that fit in every stream without growing it */
    size_t nmsgs;                /* messages in the log */
    int64_t base_recv, cur_recv; /* decoder state at offset 0; encoder state at mlen */
    uint64_t base_id, cur_id;
    df_mark *marks;              /* marks[k]: state before message k * DF_MSG_MARK */
    size_t nmarks, markcap;
    uint32_t *dsizes;            /* the sizes (records) of data messages, in the order they first
                                    appeared (dropped messages included) */
    size_t ndsizes, dsizecap;
    uint8_t *dseen;              /* [batch + 1]: size n appeared */
} df_log;

/* The trace's names and attribute lists, made through an lp_builder in the order the
 * built trace has them: built-in types, operators, workers (ids = simulation indices),
 * the message attribute keys and kinds, the non-data kinds' lists, then a data list
 * per buffer size in the order the sizes first appear in the message stream. */
typedef struct df_names {
    lp_builder *b;
    const lp_gen_dataflow *o;
    uint32_t *dattr;             /* [batch + 1]: list of a data message of n records (0 = not made) */
    uint32_t kattr[DF_NKINDS];   /* lists of the other kinds */
    lp_str k_bytes, k_kind, v_data;
    lp_str opname[LP_GEN_MAXOPS];
} df_names;
/* Declare the workers of log and make the fixed names in b. */
lp_status df_names_setup(df_names *c, lp_builder *b, const df_log *log, lp_error *err);
/* The attribute list of a data message of n <= batch records, made on first use. */
lp_status df_names_data(df_names *c, uint32_t n, uint32_t *list, lp_error *err);
void df_names_release(df_names *c);

/* Check the options (LP_ERR_ARG / LP_ERR_LIMIT with the reason). */
lp_status df_validate(const lp_gen_dataflow *o, lp_error *err);
/* Lay out the workers of validated options in log (no records yet). */
lp_status df_log_init(df_log *log, const lp_gen_dataflow *o, lp_error *err);
/* Worker i's name into buf (room for 64 bytes); returns its length. */
size_t df_worker_name(const df_log *log, uint32_t i, char *buf);
/* Operator index of worker i (nops for the job manager). */
uint32_t df_worker_op(const df_log *log, uint32_t i);
/* Run the simulation into an initialised log. `on_msgs`, when not NULL, is called each
 * time the stream holds `chunk` messages and must consume them (df_log_drop); without
 * it the log keeps every message. */
typedef lp_status (*df_msg_fn)(void *ctx, df_log *log, lp_error *err);
lp_status df_simulate(df_log *log, df_msg_fn on_msgs, void *ctx, size_t chunk, lp_error *err);
/* Check the options, lay out the log and simulate into it, keeping every message (the
 * direct writers' start); on failure the log holds nothing. */
lp_status df_log_run(df_log *log, const lp_gen_dataflow *o, lp_error *err);
void df_log_release(df_log *log);
/* Forget the logged messages (they were consumed): the log restarts empty. */
void df_log_drop(df_log *log);
/* Room in the log for the next message, and its mark when one is due (df_log_msg);
 * -1 when out of memory. */
int df_log_reserve(df_log *log);
/* A data size seen for the first time (df_log_msg); -1 when out of memory. */
int df_log_dsize(df_log *log, uint32_t n);

static inline uint8_t *df_put_(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline const uint8_t *df_get_(const uint8_t *p, uint64_t *v)
{
    if (p[0] < 0x80) { /* the common lengths first: worker ids, kinds, id steps; times */
        *v = p[0];
        return p + 1;
    }
    if (p[1] < 0x80) {
        *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        return p + 2;
    }
    if (p[2] < 0x80) {
        *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7 | (uint64_t)p[2] << 14;
        return p + 3;
    }
    uint64_t x = (uint64_t)(p[0] & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7 | (uint64_t)(p[2] & 0x7f) << 14;
    p += 2;
    for (unsigned sh = 21; *p++ & 0x80; sh += 7)
        x |= (uint64_t)(*p & 0x7f) << sh;
    *v = x;
    return p;
}

static inline uint64_t df_zz_(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t df_unzz_(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Append message m (and a mark when one is due); -1 when out of memory. */
static inline int df_log_msg(df_log *l, const df_msg *m)
{
    if ((!l->room || l->nmsgs % DF_MSG_MARK == 0) && df_log_reserve(l))
        return -1;
    if (m->kind == DF_DATA && (m->n > l->o->batch || !l->dseen[m->n]) && df_log_dsize(l, m->n))
        return -1;
    uint64_t v[DF_NF] = {df_zz_((int64_t)((uint64_t)m->recv - (uint64_t)l->cur_recv)),
                         (uint64_t)m->recv - (uint64_t)m->sent,
                         df_zz_((int64_t)(m->id - l->cur_id)),
                         m->from,
                         m->to,
                         (uint64_t)m->kind | (uint64_t)m->n << 3};
    for (int f = 0; f < DF_NF; f++)
        l->mlen[f] = (size_t)(df_put_(l->ms[f] + l->mlen[f], v[f]) - l->ms[f]);
    l->cur_recv = m->recv;
    l->cur_id = m->id;
    l->nmsgs++;
    l->room--;
    return 0;
}

/* Reading the message log, field by field or whole messages. */
typedef struct df_rd {
    const uint8_t *p[DF_NF];
    int64_t recv;  /* the previous message's receive time and id */
    uint64_t id;
} df_rd;

/* Start before message k * DF_MSG_MARK (k < nmarks). */
static inline void df_rd_mark(df_rd *r, const df_log *l, size_t k)
{
    const df_mark *mk = &l->marks[k];
    for (int f = 0; f < DF_NF; f++)
        r->p[f] = l->ms[f] + mk->off[f];
    r->recv = mk->recv;
    r->id = mk->id;
}

/* Start at the first message of the log. */
static inline void df_rd_start(df_rd *r, const df_log *l)
{
    for (int f = 0; f < DF_NF; f++)
        r->p[f] = l->ms[f];
    r->recv = l->base_recv;
    r->id = l->base_id;
}

/* The next message's field f as stored (DF_F_FROM, DF_F_TO, DF_F_KIND are plain values). */
static inline uint64_t df_rd_field(df_rd *r, int f)
{
    uint64_t v;
    r->p[f] = df_get_(r->p[f], &v);
    return v;
}
/* The next message's receive time. */
static inline int64_t df_rd_recv(df_rd *r)
{
    r->recv = (int64_t)((uint64_t)r->recv + (uint64_t)df_unzz_(df_rd_field(r, DF_F_RECV)));
    return r->recv;
}
/* The next message's id. */
static inline uint64_t df_rd_id(df_rd *r)
{
    r->id += (uint64_t)df_unzz_(df_rd_field(r, DF_F_ID));
    return r->id;
}
/* ---- output (dataflow_out.c) ----------------------------------------------------------
 * The direct writers' output, cut into numbered blocks: formatted by the pool's workers,
 * handed to the sink strictly in block order on the calling thread (base/pool.h), with a
 * buffer per slot of the queue (2 * workers + 2). The bytes do not depend on the number of
 * threads; the first failure (memory, the sink's error) stops the rest and is returned. */
#define DF_OUT_SLACK 128        /* bytes a format may write beyond bound(b) (fixed-size copies) */
#define DF_OUT_MAX_THREADS 8    /* formatting threads at most (and the default: one per CPU) */
typedef struct df_out {
    size_t nblocks;
    void *ctx;
    /* Most bytes block b takes (its buffer has DF_OUT_SLACK more, 16-byte aligned). */
    size_t (*bound)(void *ctx, size_t b);
    /* Format block b into buf; returns its length. Any thread, concurrently for
     * different blocks: it only reads shared state. */
    size_t (*format)(void *ctx, size_t b, char *buf);
    /* Consume block b (write it out): in block order, on the calling thread. */
    lp_status (*sink)(void *ctx, size_t b, const char *buf, size_t len, lp_error *err);
} df_out;
lp_status df_out_run(const df_out *o, lp_pool *pool, lp_error *err);

/* The next message whole. */
static inline void df_rd_msg(df_rd *r, df_msg *m)
{
    m->recv = df_rd_recv(r);
    m->sent = (int64_t)((uint64_t)m->recv - df_rd_field(r, DF_F_LAT));
    m->id = df_rd_id(r);
    m->from = (uint32_t)df_rd_field(r, DF_F_FROM);
    m->to = (uint32_t)df_rd_field(r, DF_F_TO);
    uint64_t k = df_rd_field(r, DF_F_KIND);
    m->kind = (uint32_t)(k & 7);
    m->n = (uint32_t)(k >> 3);
}

#endif
