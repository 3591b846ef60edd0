/* trace.h: the activity graph's records in memory (MODEL.md "Model"): workers,
 * activities and messages, stored column by column for traces of hundreds of
 * millions of records.
 *
 * An lp_trace is immutable once built and always satisfies:
 *  - activities are grouped by worker: worker w owns [wfirst[w], wfirst[w+1]);
 *  - within a worker, activities are sorted by start, never overlap
 *    (end[i] <= start[i+1]) and tile the worker's timeline: from its first event
 *    (activity boundary, send or receive) to its last, every instant is covered.
 *    Uncovered time in the input became a gap activity (flag LP_ACT_GAP) of type
 *    `waiting` if a receive on that worker happens at the gap's end, else `unknown`;
 *  - start <= end for every activity; times are signed 64-bit nanoseconds;
 *  - every message is whole (halves were matched by (sender, receiver, id)); a
 *    multicast send is one message per receive; a message received before it was
 *    sent carries LP_MSG_SKEW, its weight counts as 0 and path analyses ignore it;
 *  - every id (worker, type, string, attribute list) stored in a column is valid.
 * Traces are built through lp_builder, which enforces the rules of MODEL.md and
 * reports violations to an lp_diags sink.
 *
 * Memory: an activity costs 27 bytes (start, end, type, operator, attributes,
 * flags), a message 41 bytes; attribute lists and strings are shared.
 */
#ifndef LONGPOLE_TRACE_H
#define LONGPOLE_TRACE_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/base/status.h"
#include "longpole/base/strtab.h"
#include "longpole/base/diag.h"

#define LP_NONE32 UINT32_MAX

/* Activity types built in (SnailTrail §4.1, extended). Their ids are fixed; user-defined
 * types get ids from LP_TYPE_NBUILTIN on. */
enum lp_builtin_type {
    LP_TYPE_PROCESSING = 0,
    LP_TYPE_SCHEDULING,
    LP_TYPE_BARRIER,
    LP_TYPE_BUFFER,
    LP_TYPE_SERIALIZATION,
    LP_TYPE_DESERIALIZATION,
    LP_TYPE_WAITING,
    LP_TYPE_IO,
    LP_TYPE_UNKNOWN,
    LP_TYPE_NBUILTIN
};
#define LP_TYPE_MAX 65535u
/* The name of built-in type ty < LP_TYPE_NBUILTIN ("processing", ...), else NULL. */
const char *lp_type_builtin_name(uint32_t ty);

/* aflags */
#define LP_ACT_GAP 0x01u      /* made by gap filling, not present in the input */
/* mflags */
#define LP_MSG_SKEW 0x01u     /* recv < send: weight clamped to zero, ignored by path analyses */
#define LP_MSG_HALVES 0x02u   /* came from an S/R pair rather than an M record */

/* Message ids: a canonical decimal number below 2^63 is stored as itself; any
 * other token is interned and stored as LP_MSGID_STR | string id. */
#define LP_MSGID_NONE UINT64_MAX
#define LP_MSGID_STR (UINT64_C(1) << 63)

typedef struct lp_trace {
    lp_strtab strs;          /* every name */

    uint32_t ntypes;         /* activity types; type_name[t] is its name */
    lp_str *type_name;

    uint32_t nworkers;
    lp_str *wname;           /* worker names, unique */
    uint32_t *wattr;         /* worker attribute list (0 = none) */
    uint64_t *wfirst;        /* [nworkers+1] activity ranges by worker */

    uint64_t nacts;
    int64_t *astart, *aend;
    uint16_t *atype;
    lp_str *aop;             /* operator, or LP_STR_NONE */
    uint32_t *aattr;         /* attribute list (0 = none) */
    uint8_t *aflags;         /* LP_ACT_* */

    uint64_t nmsgs;
    uint32_t *msrc, *mdst;   /* sender and receiver workers */
    int64_t *msend, *mrecv;
    uint64_t *mid;           /* message id (LP_MSGID_*) */
    uint32_t *mattr;
    uint8_t *mflags;         /* LP_MSG_* */

    uint32_t *apool;         /* attribute lists: apool[l] = npairs, then npairs (key, value) lp_str pairs; apool[0] = 0 */
    uint64_t napool;

    int64_t tmin, tmax;      /* earliest and latest instant of any event (0,0 if empty) */
    uint64_t ngaps;          /* activities made by gap filling */
    uint64_t nskew;          /* messages with LP_MSG_SKEW */

    void *map;               /* a mapped .lptb file the columns may point into (private,
                                writable: writes stay in this process), or NULL */
    size_t maplen;
} lp_trace;

void lp_trace_free(lp_trace *t);

/* The worker an activity belongs to (binary search over wfirst). */
uint32_t lp_trace_act_worker(const lp_trace *t, uint64_t act);
/* Name lookups. */
static inline const char *lp_trace_str(const lp_trace *t, lp_str s) { return lp_strtab_get(&t->strs, s); }
static inline const char *lp_trace_worker_name(const lp_trace *t, uint32_t w) { return lp_strtab_get(&t->strs, t->wname[w]); }
static inline const char *lp_trace_type_name(const lp_trace *t, uint32_t ty) { return lp_strtab_get(&t->strs, t->type_name[ty]); }
/* Find a worker or type by name: LP_NONE32 if absent. */
uint32_t lp_trace_find_worker(const lp_trace *t, const char *name);
uint32_t lp_trace_find_type(const lp_trace *t, const char *name);
/* Attribute lookup in a list: value string id or LP_STR_NONE. */
lp_str lp_trace_attr(const lp_trace *t, uint32_t list, const char *key);
/* Format a message id into buf (NUL-terminated); returns buf. "" for none. */
const char *lp_trace_msgid(const lp_trace *t, uint64_t id, char *buf, size_t n);
/* Weight of message m on a path: recv - send, or 0 when skewed. */
static inline int64_t lp_trace_msg_weight(const lp_trace *t, uint64_t m)
{
    return (t->mflags[m] & LP_MSG_SKEW) ? 0 : t->mrecv[m] - t->msend[m];
}
/* Resident bytes of the trace's arrays (for memory accounting). */
size_t lp_trace_footprint(const lp_trace *t);

/* The projection of a trace on [ts, te] (SnailTrail Definitions 5-6): every activity and
 * message that overlaps the window, cut to it (an activity that straddles a boundary
 * appears cut). Workers are kept (same ids) even when they have nothing in the window.
 * The result satisfies the lp_trace invariants. */
lp_status lp_trace_window(const lp_trace *t, int64_t ts, int64_t te, lp_trace **out, lp_error *err);

/* Per-worker message endpoints in time order: for worker w, the messages it sent
 * (which = LP_EP_SEND, ordered by send time) or received (LP_EP_RECV, by receive time)
 * are msg[off[w] .. off[w+1]), ties in message order. Built in O(M) when the messages
 * are already in time order per worker, O(M log M) otherwise. With LP_EP_NOTIME or'ed
 * into which, the time column is not made (NULL: 8 bytes per message less, for callers
 * that read the times from the trace's columns). */
#define LP_EP_SEND 0
#define LP_EP_RECV 1
#define LP_EP_NOTIME 2
typedef struct lp_endpoints {
    uint64_t *off;   /* [nworkers+1] */
    uint32_t *msg;   /* [nmsgs] message indices */
    int64_t *time;   /* [nmsgs] their send (or receive) times, for sequential scans; or NULL */
} lp_endpoints;
lp_status lp_endpoints_build(const lp_trace *t, int which, lp_endpoints *ep, lp_error *err);
void lp_endpoints_release(lp_endpoints *ep);

/* ---- building a trace ---------------------------------------------------------- */

typedef struct lp_builder lp_builder;

/* Options; zero-initialise and set what you need. */
typedef struct lp_builder_opts {
    int no_gap_fill;          /* leave uncovered time uncovered (only for tools that write the input back) */
} lp_builder_opts;

/* Diagnostics go to `diags` (must outlive the builder); opts may be NULL. */
lp_status lp_builder_new(lp_builder **out, lp_diags *diags, const lp_builder_opts *opts, lp_error *err);
void lp_builder_free(lp_builder *b);
lp_strtab *lp_builder_strtab(lp_builder *b);
lp_diags *lp_builder_diags(lp_builder *b);
/* The trace under construction (read-only use: name lookups while importing). */
const lp_trace *lp_builder_trace(const lp_builder *b);

/* Name the input that the following records come from (for diagnostics). */
lp_status lp_builder_source(lp_builder *b, const char *name, lp_error *err);

/* Worker by name, created on first use. */
lp_status lp_builder_worker(lp_builder *b, const char *name, size_t n, uint32_t *w, lp_error *err);
/* Worker attribute list (a W record). A second declaration with different attributes is
 * reported and ignored. */
lp_status lp_builder_worker_attrs(lp_builder *b, uint32_t w, uint32_t attrs, uint64_t line, lp_error *err);
/* Activity type by name (built-ins have fixed ids). */
lp_status lp_builder_type(lp_builder *b, const char *name, size_t n, uint16_t *type, lp_error *err);
/* An attribute list from npairs (key, value) pairs, deduplicated: equal lists share an id.
 * npairs == 0 gives 0. */
lp_status lp_builder_attrs(lp_builder *b, const lp_str *kv, uint32_t npairs, uint32_t *list, lp_error *err);

/* Records. `line` is the 1-based source line (or record number), for diagnostics.
 * A record that breaks a rule is reported and dropped; the call still returns LP_OK.
 * Only resource failures (memory, limits) return an error. */
lp_status lp_builder_activity(lp_builder *b, uint32_t w, int64_t start, int64_t end, uint16_t type,
                              lp_str op, uint32_t attrs, uint64_t line, lp_error *err);
lp_status lp_builder_message(lp_builder *b, uint32_t src, int64_t send, uint32_t dst, int64_t recv,
                             uint64_t id, uint32_t attrs, uint64_t line, lp_error *err);
lp_status lp_builder_send(lp_builder *b, uint32_t w, int64_t time, uint32_t dst, uint64_t id,
                          uint32_t attrs, uint64_t line, lp_error *err);
lp_status lp_builder_recv(lp_builder *b, uint32_t w, int64_t time, uint32_t src, uint64_t id,
                          uint32_t attrs, uint64_t line, lp_error *err);

/* Encode a message-id token (see LP_MSGID_*). */
lp_status lp_builder_msgid(lp_builder *b, const char *s, size_t n, uint64_t *id, lp_error *err);

/* Number of records accepted so far (activities + messages + halves). */
uint64_t lp_builder_records(const lp_builder *b);

/* Sort, check overlaps, match halves, fill gaps; hand over the trace. The builder is
 * consumed (freed) whether or not this succeeds. */
lp_status lp_builder_finish(lp_builder *b, lp_trace **out, lp_error *err);

#endif
