/* kcpath.h: the critical path of one thread over an interval, in the execution graph
 * (docs/analyses/kernel-critical-path.md; Giraldeau & Dagenais, Trace Compass's
 * CriticalPathAlgorithmBounded / OSCriticalPathAlgorithm; the distributed critical path
 * paper, papers/distributed-critical-path-eci.txt §III-A).
 *
 * The path says, for every instant of [start, end], what the thread was waiting for:
 * its own running, preempted, waiting-for-CPU or timer/disk/IPI time, or, while it was
 * blocked on another thread or a packet, what that thread (recursively, across hosts)
 * was doing. It is a sequence of elements in time order, each starting where the
 * previous ended, covering exactly [start, end]:
 *  - STATE: a piece of a worker's horizontal edge (its state and reason);
 *  - LINK: a wake-up, fork or packet link (its kind), from `from` to `worker`; zero
 *    length for a wake-up, the transit time for a packet;
 *  - GAP: time nothing in the trace explains (a waker whose history starts inside the
 *    blocked interval with no cause recorded): state unknown.
 * A blocked state that could not be replaced (no wake-up found: a packet from a host not
 * traced, a wake-up not recorded) stays on the path flagged LP_KCP_UNEXPLAINED.
 *
 * Bounded (Trace Compass's default): each blocked interval of the thread is replaced by
 * the path of what ended it, walked back from the wake-up only as far as the start of
 * the blocked interval, recursively (nested blocked intervals are bounded by their own
 * start). Unbounded: one walk back from the end, following every wake-up as far back as
 * it goes (the classic critical path of the thread's end, MODEL.md's walk with blocked
 * as `waiting`); when it reaches a worker whose history starts with no cause, it returns
 * to the thread (the time in between is a GAP on the thread). The exact rules, and
 * where they differ from Trace Compass, are in the doc.
 */
#ifndef LONGPOLE_KCPATH_H
#define LONGPOLE_KCPATH_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/analysis/kernel/kgraph.h"

typedef enum lp_kcp_algo { LP_KCP_BOUNDED = 0, LP_KCP_UNBOUNDED = 1 } lp_kcp_algo;
typedef enum lp_kcp_kind { LP_KCP_STATE = 0, LP_KCP_LINK = 1, LP_KCP_GAP = 2 } lp_kcp_kind;

#define LP_KCP_UNEXPLAINED 0x01u /* a resolvable blocked state with no explanation, left on the path */
#define LP_KCP_CLIPPED 0x02u     /* only part of the edge or link is on the path */

typedef struct lp_kcp_elem {
    int64_t start, end;
    uint32_t worker;   /* STATE, GAP: whose time; LINK: the destination */
    uint32_t from;     /* LINK: the source worker; otherwise == worker */
    uint32_t ref;      /* STATE: the edge's start vertex; LINK: the link index; GAP: LP_NONE32 */
    uint8_t kind;      /* lp_kcp_kind */
    uint8_t state;     /* STATE: lp_kstate; LINK: LP_KS_NONE; GAP: LP_KS_UNKNOWN */
    uint8_t reason;    /* STATE: lp_kreason; LINK: lp_klink */
    uint8_t flags;     /* LP_KCP_* */
} lp_kcp_elem;

typedef struct lp_kcp {
    lp_kcp_elem *e;     /* in time order, contiguous */
    size_t n;
    uint32_t worker;    /* the thread */
    int64_t start, end; /* the interval covered (the query clamped to the thread's lifetime) */
    lp_kcp_algo algo;
    uint64_t nunexplained; /* elements flagged LP_KCP_UNEXPLAINED */
    int64_t unexplained_ns, gap_ns;
} lp_kcp;

/* Query bounds meaning "from the thread's first vertex" / "to its last". */
#define LP_KCP_LIFETIME_START INT64_MIN
#define LP_KCP_LIFETIME_END INT64_MAX

/* The critical path of worker w over [start, end], clamped to its lifetime. LP_ERR_ARG if
 * w is not a worker or the interval misses its lifetime; LP_ERR_DATA if the graph turns
 * out to have a cycle (a damaged graph). */
lp_status lp_kcp_compute(const lp_kgraph *g, uint32_t w, int64_t start, int64_t end, lp_kcp_algo algo, lp_kcp *out,
                         lp_error *err);
void lp_kcp_release(lp_kcp *cp);

/* ---- breakdown: where the path's time goes, next to the thread's own profile ---------- */

/* A row keyed by worker (by_thread; LP_NONE32 = time on links) or by (kind, state,
 * reason) (by_state). Path columns sum the path's elements; own columns sum the thread's
 * own edges clipped to the interval (its conventional profile: what a per-thread state
 * view would show). Rows sorted by path time, then own time, then key. */
typedef struct lp_kcp_row {
    uint32_t worker;
    uint8_t kind, state, reason, pad;
    int64_t path_ns;
    uint64_t path_n;
    int64_t own_ns;
    uint64_t own_n;
} lp_kcp_row;

typedef struct lp_kcp_breakdown {
    lp_kcp_row *by_thread;
    size_t nthread;
    lp_kcp_row *by_state;
    size_t nstate;
    int64_t total;     /* end - start: the path's and the own profile's total */
} lp_kcp_breakdown;

lp_status lp_kcp_breakdown_compute(const lp_kgraph *g, const lp_kcp *cp, lp_kcp_breakdown *out, lp_error *err);
void lp_kcp_breakdown_release(lp_kcp_breakdown *b);
/* "running", "blocked/timer", "link/network", "gap" ... for a by_state row (buf of 32). */
const char *lp_kcp_row_label(const lp_kcp_row *r, char *buf, size_t n);

#endif
