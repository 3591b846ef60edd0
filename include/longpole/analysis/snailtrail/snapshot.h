/* snapshot.h: PAG snapshots of a time window [ts, te] (SnailTrail §3.1, Definitions
 * 5-6; docs/analyses/critical-participation.md) and the per-window instrumentation
 * checks (SnailTrail App. A.2, Properties 1 and 2).
 *
 * A snapshot is the program activity graph of the trace projected on [ts, te]: every
 * activity and message that overlaps the window, cut to it (an activity straddling a
 * bound appears cut in each window it touches). "Overlaps" is exactly lp_trace_window's
 * rule: a positive-length overlap, or a zero-length edge inside the half-open [ts, te),
 * so with tumbling windows every zero-length edge belongs to exactly one window. The
 * graph is the same as lp_pag_build(lp_trace_window(t, ts, te)) (the tests check it
 * vertex for vertex), but it is cut straight from the trace's columns: per worker, the
 * activities, sends and receives in the window are found by binary search, and the
 * messages in flight across a bound come from an index prepared once per trace
 * (lp_snapsrc_plan), so thousands of windows over a big trace cost O(window) each and
 * nothing is copied. Buffers are grow-only and reused from window to window: building
 * a snapshot allocates nothing once they are large enough.
 *
 * Graph layout (as lp_pag): worker w's vertices are [voff[w], voff[w+1]) in strictly
 * increasing time; the worker edge into v (v not the first of its worker) is part of
 * activity vact[v] (a global activity index of the trace), LP_NONE32 if that interval
 * is not covered; message edges into v are in[vin[v] .. vin[v+1]), each naming its send
 * vertex and its (global) message index. Messages received before they were sent
 * (LP_MSG_SKEW) have vertices but no edge. The extent [t0, t1] is the earliest and the
 * latest vertex: V_s (start vertices) are the vertices at t0, V_e those at t1 (SnailTrail
 * Algorithm 2, lines 1-2); t0 = ts and t1 = te unless nothing covers a bound (the
 * trace's own start and end, or a window past them).
 *
 * For a streaming engine: put the window's records (a superset is fine: anything
 * outside [ts, te] is projected away) in an lp_trace (lp_builder), wrap it with
 * lp_snapsrc_init (no plan needed: the in-flight sets are then found by one scan of the
 * messages), and call lp_snapshot_build. To get exactly the offline snapshot, give each
 * worker's records overlapping the window plus its first record after te (and its last
 * before ts): the builder's gap filling decides from the neighbouring events whether
 * idle time at a bound is `waiting` or `unknown`.
 */
#ifndef LONGPOLE_SNAPSHOT_H
#define LONGPOLE_SNAPSHOT_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/model/trace.h"

/* What snapshots are cut from: a trace and its per-trace indexes (read-only once
 * built, so any number of threads can cut snapshots from one source at once). */
typedef struct lp_snapsrc {
    const lp_trace *t;
    lp_endpoints snd;        /* per worker: messages sent, by send time (as lp_endpoints_build;
                              * the columns live in `arena`: not for lp_endpoints_release) */
    lp_endpoints rcv;        /* per worker: messages received, by receive time */
    uint32_t *sendpos;       /* [nmsgs] position of message m in snd.msg */
    /* the other end of each endpoint, so windows read them in order (not by message) */
    int64_t *snd_other;      /* [nmsgs] receive time of the message at send position j */
    int64_t *rcv_other;      /* [nmsgs] send time of the message at receive position j */
    uint32_t *rcv_src;       /* [nmsgs] sender of the message at receive position j */
    uint32_t *rcv_spos;      /* [nmsgs] its send position */
    void *arena;             /* one block holding the per-message columns above */
    /* the plan: messages in flight at chosen instants (a < q < b, a/b the message's
     * earlier/later end), so windows need not scan every message */
    int64_t *qt;             /* [nq] planned instants, strictly increasing */
    size_t nq;
    uint64_t *qoff;          /* [nq+1] qmsg[qoff[i] .. qoff[i+1]) are in flight at qt[i] */
    uint32_t *qmsg;          /* message indices, ascending within an instant */
} lp_snapsrc;

/* Index a trace (O(A + M), 52 bytes per message). The trace must outlive the source.
 * LP_ERR_LIMIT if the trace has 2^32-1 messages or more. */
lp_status lp_snapsrc_init(lp_snapsrc *src, const lp_trace *t, lp_error *err);
/* Prepare the in-flight sets at `times` (any order, duplicates allowed): every window
 * bound that will be asked for. O(M log Q + output). Without a plan (or for a bound not
 * planned), a snapshot finds them by scanning all messages. Replaces any earlier plan. */
lp_status lp_snapsrc_plan(lp_snapsrc *src, const int64_t *times, size_t n, lp_error *err);
void lp_snapsrc_release(lp_snapsrc *src);

/* A message edge into a vertex. */
typedef struct lp_snapin {
    int64_t st;              /* its (clamped) send time: vtime[sv] */
    uint32_t sv;             /* send vertex */
    uint32_t msg;            /* message index in the trace */
} lp_snapin;

typedef struct lp_snapshot {
    const lp_trace *t;       /* the trace the snapshot was cut from */
    int64_t ts, te;          /* the window asked for */
    int64_t t0, t1;          /* extent: the earliest and latest vertex (0, 0 when empty) */
    uint32_t nworkers;       /* = t->nworkers (workers with nothing in the window have no vertex) */
    uint32_t nactive;        /* workers with at least one vertex */
    uint64_t nv;             /* vertices */
    uint64_t nwedges;        /* worker edges (vertices with vact != LP_NONE32) */
    uint64_t nin;            /* message edges */
    uint64_t nacts;          /* activities taking part (cut or whole) */
    uint64_t nmsgs;          /* messages taking part, skewed ones included */
    uint64_t nevents;        /* logged events with a time in [ts, te): activity starts
                              * and ends (gap activities excluded) and message sends and
                              * receives, SnailTrail's unit (§7.3); tumbling windows add
                              * up to the trace's total */
    uint64_t *voff;          /* [nworkers+1] */
    int64_t *vtime;          /* [nv] */
    uint32_t *vact;          /* [nv] activity of the worker edge into v, or LP_NONE32 */
    uint32_t *vin;           /* [nv+1] offsets into in */
    lp_snapin *in;           /* [nin] message edges by receive vertex */
    /* buffers (grow-only; capacities in elements) and scratch */
    size_t cap_w, cap_v, cap_in, cap_s, cap_r, cap_if0, cap_if1, cap_tail;
    uint64_t *w_alo, *w_ahi; /* [nworkers] activity slice of the window */
    uint64_t *w_slo, *w_shi; /* [nworkers] send-endpoint slice (times in [ts, te]) */
    uint64_t *w_rlo, *w_rhi; /* [nworkers] receive-endpoint slice */
    uint64_t *w_sbase;       /* [nworkers] offset of the send slice in svtx */
    uint32_t *w_tail;        /* [nworkers+1] CSR of the messages in flight at te, by receiver */
    uint8_t *w_flag;         /* [nworkers] vertex needed at ts (1) / te (2) by in-flight messages */
    uint64_t *w_nwait;       /* [nworkers] waiting edges of the worker */
    uint64_t *w_tail0;       /* [nworkers] first activity ending at or after ts (events) */
    uint32_t *svtx;          /* send vertex of each send-slice entry */
    uint32_t *rvtx;          /* receive vertex of each receive-slice entry */
    uint32_t *if0, *if1;     /* messages in flight at ts / te (when not planned) */
    uint32_t *tail;          /* messages in flight at te, normal ones, grouped by receiver */
} lp_snapshot;

void lp_snapshot_init(lp_snapshot *s);
void lp_snapshot_release(lp_snapshot *s);
/* Cut the snapshot of [ts, te] (ts <= te) from src into s, reusing s's buffers.
 * LP_ERR_ARG if te < ts, LP_ERR_LIMIT past 2^32-1 vertices or edges, LP_ERR_NOMEM. */
lp_status lp_snapshot_build(lp_snapshot *s, const lp_snapsrc *src, int64_t ts, int64_t te, lp_error *err);

/* Worker of vertex v (binary search). */
uint32_t lp_snapshot_vworker(const lp_snapshot *s, uint64_t v);
/* Is the worker edge into v on possible paths: it exists and is not `waiting`? The
 * caller knows v is not the first vertex of its worker (vact is LP_NONE32 there). */
static inline int lp_snapshot_live(const lp_snapshot *s, uint64_t v)
{
    return s->vact[v] != LP_NONE32 && s->t->atype[s->vact[v]] != LP_TYPE_WAITING;
}

/* Does the edge [a, b] (either order) take part in window [ts, te]? The projection rule. */
static inline int lp_snap_overlaps(int64_t a, int64_t b, int64_t ts, int64_t te)
{
    if (a > b) {
        int64_t x = a;
        a = b;
        b = x;
    }
    return (a < te && b > ts) || (a == b && ts <= a && a < te);
}

/* ---- instrumentation checks per window (SnailTrail App. A.2) ------------------------- */

#define LP_SNAPCHECK_KEEP 8   /* violations kept verbatim per property */

typedef struct lp_snapcheck {
    uint64_t np1;            /* Property 1: vertices after t0 with no incoming edge */
    uint32_t p1_worker[LP_SNAPCHECK_KEEP];
    int64_t p1_time[LP_SNAPCHECK_KEEP];
    uint64_t np2;            /* Property 2: maximal open intervals where every active
                              * worker waits and no message is in flight */
    int64_t p2_from[LP_SNAPCHECK_KEEP], p2_to[LP_SNAPCHECK_KEEP];
    uint32_t p2_active[LP_SNAPCHECK_KEEP];
    int64_t p2_ns;           /* their total length */
} lp_snapcheck;

/* Scratch for lp_snapshot_check (grow-only). */
typedef struct lp_snapcheck_buf {
    uint64_t *key, *tmp;
    size_t cap;
} lp_snapcheck_buf;

/* Evaluate both properties on a snapshot, with lp_check_run's definitions (check.h)
 * restricted to the window: its start vertices are V_s. Property 2 is skipped in
 * O(workers) when some worker is busy (never waiting) from t0 to t1; otherwise it is a
 * sweep over the sorted boundaries (radix sort, O(n)). */
lp_status lp_snapshot_check(const lp_snapshot *s, lp_snapcheck_buf *buf, lp_snapcheck *out, lp_error *err);
void lp_snapcheck_buf_release(lp_snapcheck_buf *buf);

#endif
