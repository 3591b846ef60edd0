/* skew.h: clock-skew estimation and correction for request logs (Mystery Machine,
 * OSDI'14 §3, UberTrace).
 *
 * Within a task, control passing from host C to host S and back to C is an RPC: with
 * c0 the last event on C before, s0 .. s1 the events on S (other hosts may come in
 * between, nested), and c1 the next event on C,
 *     rtt   = (c1 - c0) - (s1 - s0)          (client interval minus server interval)
 *     theta = s0 - (c0 + rtt / 2)            (S's clock minus C's clock)
 * assuming symmetric request and response delays. Each host pair keeps the estimate
 * of the RPC with the smallest rtt over all requests (the least perturbed by queueing
 * and slow start; its error is at most the asymmetry of that RPC's two delays, so at
 * most rtt / 2). RPCs with a negative rtt (a log point far from the communication) are
 * counted and ignored. The hosts and pairs form a graph; in each connected component
 * the reference is the host given by the caller, else the one supported by the most
 * RPCs, and every host's offset is the sum of the pair estimates along its shortest
 * path to the reference by rtt (the path with the smallest error bound, the sum of
 * rtt / 2 along it). Correcting subtracts the offset from every timestamp of the host.
 * Hosts in no RPC keep offset 0 and are reported as unsupported.
 */
#ifndef LONGPOLE_SKEW_H
#define LONGPOLE_SKEW_H

#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/import/reqlog.h"

#define LP_SKEW_ROOT UINT32_MAX        /* parent of a reference host */
#define LP_SKEW_NONE (UINT32_MAX - 1)  /* parent of a host in no RPC */

typedef struct lp_skew_pair {
    uint32_t a, b;      /* hosts, a < b */
    int64_t theta;      /* clock(b) - clock(a), ns, from the minimum-rtt RPC */
    int64_t rtt;        /* that minimum rtt */
    uint64_t n;         /* RPCs observed between a and b (either direction) */
} lp_skew_pair;

typedef struct lp_skew {
    uint32_t nhosts;
    int64_t *offset;    /* per host: its clock minus its reference's clock (ns) */
    int64_t *bound;     /* error bound of the offset: sum of rtt / 2 along the path */
    uint32_t *parent;   /* host the offset was derived from, LP_SKEW_ROOT or LP_SKEW_NONE */
    uint32_t *root;     /* the reference of the host's component */
    uint64_t *rpcs;     /* RPCs involving the host */
    lp_skew_pair *pairs;
    uint32_t npairs;
    uint32_t ncomponents; /* components with at least one RPC */
    uint64_t nrpc;      /* RPC patterns used */
    uint64_t nnegative; /* RPC patterns ignored for a negative rtt */
} lp_skew;

typedef struct lp_skew_opts {
    unsigned threads;      /* 0 = online CPUs */
    const char *reference; /* host name to use as reference, or NULL */
} lp_skew_opts;

/* Estimate from every good request of the log (host clocks: before lp_skew_apply). */
lp_status lp_skew_estimate(const lp_reqlog *rl, const lp_skew_opts *o, lp_skew *out, lp_error *err);
/* Subtract each host's offset from its timestamps (all rows) and update min/max time. */
void lp_skew_apply(const lp_skew *s, lp_reqlog *rl);
void lp_skew_release(lp_skew *s);

#endif
