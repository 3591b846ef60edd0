/* dataflow_int.h: the dataflow generator's record log, between the simulation
 * (dataflow.c) and its two outputs: a trace built through lp_builder (dataflow_build.c),
 * or .lpt text written straight from the log by several threads (dataflow_text.c).
 *
 * Invariants
 *  - Simulation worker i < nw is "<name of its operator k>.<i - opfirst[k]>"; worker nw,
 *    when has_jm, is "jobmanager". Builder worker ids are the simulation indices (workers are declared
 *    in that order, before any record), so both outputs name workers alike.
 *  - acts[i] holds worker i's activities in start order, never overlapping, as packed
 *    words (df_act_* below); `last` is the end of the last one.
 *  - The message stream mb[0, mlen) holds nmsgs messages in receive (emission) order,
 *    each as six LEB128 varints (df_msg_put): receive time minus the previous message's
 *    (zigzag), receive minus send time, id minus the previous id (zigzag), sender,
 *    receiver, kind | records << 3. Per sender send times are in order too; ids are
 *    unique. Decoding starts from (base_recv, base_id) at offset 0, or from marks[k] at
 *    message k * DF_MSG_MARK. About 12 bytes a message instead of 32.
 * Both outputs read only the log: the text one writes exactly what lp_lpt_write would
 * write for the built trace (tests/unit/test_gen_text.c checks it byte for byte).
 */
#ifndef LP_GEN_DATAFLOW_INT_H
#define LP_GEN_DATAFLOW_INT_H

#include "longpole/gen.h"

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

/* Decoder state before a message: its offset in the stream, the previous receive time
 * and id. */
typedef struct df_mark {
    size_t off;
    int64_t recv;
    uint64_t id;
} df_mark;
#define DF_MSG_MARK 16384 /* a mark every this many messages */
#define DF_MSG_MAXLEN 60  /* bytes of one encoded message, at most */

typedef struct df_log {
    const lp_gen_dataflow *o;    /* the (validated) options: operator names */
    uint32_t nw;                 /* simulation workers (without the job manager) */
    int has_jm;                  /* worker nw is the job manager */
    uint32_t opfirst[LP_GEN_MAXOPS + 1]; /* first worker of each operator; opfirst[nops] = nw */
    df_acts *acts;               /* nw + 1 entries */
    uint8_t *mb;                 /* the message stream */
    size_t mlen, mcap;
    size_t nmsgs;                /* messages in mb */
    int64_t base_recv, cur_recv; /* decoder state at offset 0; encoder state at mlen */
    uint64_t base_id, cur_id;
    df_mark *marks;              /* marks[k]: state before message k * DF_MSG_MARK */
    size_t nmarks, markcap;
} df_log;

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
void df_log_release(df_log *log);
/* Forget the messages of the stream (they were consumed): it restarts empty. */
void df_log_drop(df_log *log);

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
    uint64_t x = *p & 0x7f;
    for (unsigned sh = 7; *p++ & 0x80; sh += 7)
        x |= (uint64_t)(*p & 0x7f) << sh;
    *v = x;
    return p;
}

static inline uint64_t df_zz_(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t df_unzz_(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Encode message m at p (room for DF_MSG_MAXLEN bytes) after (*recv, *id); updates them. */
static inline uint8_t *df_msg_put(uint8_t *p, const df_msg *m, int64_t *recv, uint64_t *id)
{
    p = df_put_(p, df_zz_((int64_t)((uint64_t)m->recv - (uint64_t)*recv)));
    p = df_put_(p, (uint64_t)m->recv - (uint64_t)m->sent);
    p = df_put_(p, df_zz_((int64_t)(m->id - *id)));
    p = df_put_(p, m->from);
    p = df_put_(p, m->to);
    p = df_put_(p, (uint64_t)m->kind | (uint64_t)m->n << 3);
    *recv = m->recv;
    *id = m->id;
    return p;
}

/* Decode the message at p after (*recv, *id); updates them. */
static inline const uint8_t *df_msg_get(const uint8_t *p, df_msg *m, int64_t *recv, uint64_t *id)
{
    uint64_t v;
    p = df_get_(p, &v);
    m->recv = (int64_t)((uint64_t)*recv + (uint64_t)df_unzz_(v));
    p = df_get_(p, &v);
    m->sent = (int64_t)((uint64_t)m->recv - v);
    p = df_get_(p, &v);
    m->id = *id + (uint64_t)df_unzz_(v);
    p = df_get_(p, &v);
    m->from = (uint32_t)v;
    p = df_get_(p, &v);
    m->to = (uint32_t)v;
    p = df_get_(p, &v);
    m->kind = (uint32_t)(v & 7);
    m->n = (uint32_t)(v >> 3);
    *recv = m->recv;
    *id = m->id;
    return p;
}

#endif
