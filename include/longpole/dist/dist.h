/* dist.h: the transport of the distributed analyses (docs/distributed.md; issue 14):
 * a communicator of `size` ranks numbered 0..size-1, rank 0 the coordinator, over
 * which byte buffers move as tagged point-to-point messages and a few collectives.
 *
 * The communicator is opaque and works through a small table of operations
 * (lp_dist_ops), so another transport can replace the two built in:
 *  - "mpi": Open MPI's MPI_COMM_WORLD (built only when CMake finds MPI: LP_HAVE_MPI;
 *    lp_dist_have_mpi() says so); used when the process runs under mpirun;
 *  - "self": one rank, no MPI: a process alone (not under mpirun) and the unit tests.
 *    A message a rank sends to itself is queued; receiving when nothing matches is
 *    LP_ERR_ARG ("would block"), never a hang.
 *
 * Every operation counts what this rank moved (lp_dist_counters): a point-to-point
 * message is one message of its length, sent by its sender and received by its
 * receiver; a broadcast is size-1 messages sent by the root and one received by every
 * other rank; a gather one message sent by every non-root rank and size-1 received by
 * the root; an allreduce of n words counts as one message of 8n bytes sent and one
 * received by every rank (a lower bound: the transport's own tree or ring is not
 * visible); a barrier moves nothing. Counters never include the length prefixes the
 * MPI transport adds to variable-size collectives.
 *
 * Collectives must be called by every rank in the same order (as MPI's). Errors are
 * returned (lp_status + lp_error; the MPI transport sets MPI_ERRORS_RETURN), never
 * printed; but a rank that fails between collectives leaves the others waiting in the
 * next one: callers agree on failure with an allreduce of a status word before a step
 * other ranks depend on (docs/distributed.md "When a rank fails").
 *
 * Buffers the transport returns (recv, bcast at non-roots, gather at the root) are
 * allocated with lp_malloc and owned by the caller (lp_free).
 *
 * Invariants: 0 <= rank < size; tags of callers are 0..LP_DIST_TAG_MAX (tags above it
 * are the transport's own); buffers are at most LP_DIST_MAX_BYTES long (LP_ERR_LIMIT).
 */
#ifndef LONGPOLE_DIST_H
#define LONGPOLE_DIST_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"

#define LP_DIST_ANY (-1)              /* receive: any source, any tag */
#define LP_DIST_TAG_MAX 30000         /* callers' tags are 0..LP_DIST_TAG_MAX */
#define LP_DIST_MAX_BYTES 0x7fffffffu /* one buffer (MPI counts are int) */

typedef struct lp_dist lp_dist;

typedef enum lp_dist_op {
    LP_DIST_BAND = 0, /* bitwise AND (MPI_BAND) */
    LP_DIST_SUM,      /* sum, modulo 2^64 (MPI_SUM) */
    LP_DIST_MAX,      /* largest (MPI_MAX) */
    LP_DIST_MIN,      /* smallest (MPI_MIN) */
    LP_DIST_BOR       /* bitwise OR (MPI_BOR) */
} lp_dist_op;

/* What one rank moved since its communicator was opened (or counters reset). */
typedef struct lp_dist_counters {
    uint64_t msgs_sent, bytes_sent;
    uint64_t msgs_recv, bytes_recv;
} lp_dist_counters;

/* A transport: every function gets the implementation's state `impl`. Counting is done
 * by the communicator around these calls, not by them. recv/bcast/gather allocate the
 * buffers they return with lp_malloc. */
typedef struct lp_dist_ops {
    const char *name;
    lp_status (*send)(void *impl, int dest, int tag, const void *buf, size_t n, lp_error *err);
    lp_status (*recv)(void *impl, int src, int tag, void **buf, size_t *n, int *from, int *got_tag, lp_error *err);
    /* root: *buf, *n are the data (kept); others: set to a new buffer */
    lp_status (*bcast)(void *impl, int root, void **buf, size_t *n, lp_error *err);
    /* root: *all = the buffers in rank order, lens[size] their lengths; others: *all = NULL */
    lp_status (*gather)(void *impl, int root, const void *buf, size_t n, void **all, size_t *lens, lp_error *err);
    lp_status (*allreduce_u64)(void *impl, uint64_t *words, size_t n, lp_dist_op op, lp_error *err);
    lp_status (*barrier)(void *impl, lp_error *err);
    void (*close)(void *impl);
} lp_dist_ops;

/* A communicator over a transport (takes `impl`, which ops->close releases). */
lp_status lp_dist_new(const lp_dist_ops *ops, void *impl, int rank, int size, lp_dist **out, lp_error *err);

/* The transports. lp_dist_open: MPI when built with it and the process was started by
 * mpirun (lp_dist_launched()), else self. lp_dist_open_mpi: LP_ERR_UNSUPPORTED when
 * built without MPI. MPI is initialised by the first open and finalised by the close of
 * the communicator that initialised it. */
lp_status lp_dist_open(lp_dist **out, lp_error *err);
lp_status lp_dist_open_self(lp_dist **out, lp_error *err);
lp_status lp_dist_open_mpi(lp_dist **out, lp_error *err);
int lp_dist_have_mpi(void);  /* 1 if this build has the MPI transport */
int lp_dist_launched(void);  /* 1 if an MPI launcher (Open MPI's mpirun, PMIx) started this process */
void lp_dist_close(lp_dist *d);

int lp_dist_rank(const lp_dist *d);
int lp_dist_size(const lp_dist *d);
const char *lp_dist_name(const lp_dist *d); /* "mpi", "self", or another transport's name */

/* The rank that owns item i (a host, a file) of a list: i mod size (docs/distributed.md). */
static inline int lp_dist_owner(size_t i, int size) { return size > 0 ? (int)(i % (size_t)size) : 0; }

/* Point to point. recv: src and tag may be LP_DIST_ANY; *from and *got_tag (may be
 * NULL) receive the actual source and tag. */
lp_status lp_dist_send(lp_dist *d, int dest, int tag, const void *buf, size_t n, lp_error *err);
lp_status lp_dist_recv(lp_dist *d, int src, int tag, void **buf, size_t *n, int *from, int *got_tag, lp_error *err);

/* Collectives (every rank, same order). */
lp_status lp_dist_bcast(lp_dist *d, int root, void **buf, size_t *n, lp_error *err);
lp_status lp_dist_gather(lp_dist *d, int root, const void *buf, size_t n, void **all, size_t *lens, lp_error *err);
lp_status lp_dist_allreduce_u64(lp_dist *d, uint64_t *words, size_t n, lp_dist_op op, lp_error *err);
lp_status lp_dist_barrier(lp_dist *d, lp_error *err);

/* This rank's counters; reset them (a query's figures apart from its set-up's). */
lp_dist_counters lp_dist_counters_get(const lp_dist *d);
void lp_dist_counters_reset(lp_dist *d);
/* Every rank's counters at the root (all[size] there; may be NULL elsewhere). This
 * gather itself is not counted. */
lp_status lp_dist_counters_gather(lp_dist *d, int root, lp_dist_counters *all, lp_error *err);

/* CPU seconds (user + system, getrusage) this process has used: the per-rank cost
 * figure that does not depend on how many cores the ranks share. */
double lp_dist_cpu_seconds(void);

#endif
