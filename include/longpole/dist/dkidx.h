/* dkidx.h: what a rank of `longpole dist kcp --index DIR` keeps beside the persisted
 * graph of its hosts (docs/distributed.md "Index reuse"; docs/formats/dkidx.md), so that
 * a later query neither reads nor re-builds its traces: the rank's hosts packed as their
 * ECIs (the skeletons rank 0 merges, keci.h), the vertices of every matched packet's ends
 * in the rank's graph, the diagnostics counts of the reading and the build, and the
 * digest of the match (and options) the graph was built with.
 *
 * The graph itself is an ordinary index (`.lpkx`, kindex.h) of the rank's partial graph
 * with the fingerprint of the rank's traces; this sidecar (`.lpkx.dk`) is tied to it by
 * the index's stored checksum, and checked whole by its own (XXH3-64 of every byte before
 * it).
 *
 * Invariants: a sidecar that was read (lp_dkidx_read returned LP_OK) has its checksum
 * right, its counts within its bytes and its ECIs as written; nothing in it is trusted
 * before the checksum is.
 */
#ifndef LONGPOLE_DKIDX_H
#define LONGPOLE_DKIDX_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/analysis/kernel/kindex.h"

#define LP_DKIDX_MAGIC "LPDKIX\r\n"
#define LP_DKIDX_VERSION 2u
#define LP_DKIDX_SUFFIX LP_KINDEX_DIST_SUFFIX /* beside F.lpkx: F.lpkx.dk (left out of fingerprints) */

typedef struct lp_dkidx {
    uint64_t lpkx_sum;      /* the stored checksum (last 8 bytes) of the index it belongs to */
    uint64_t digest;        /* of the match, host names and options the graph was built with */
    uint32_t rank, nranks, nhosts;
    uint64_t fig[4];        /* read errors, read warnings, build errors, build warnings */
    uint64_t npk;           /* matched packets */
    uint32_t *sv, *tv;      /* [npk] send vertex, target vertex in the rank's graph */
    uint8_t *eci;           /* the rank's hosts packed as ECIs (lp_keci_pack_host, skeleton) */
    size_t neci;
} lp_dkidx;

/* Write x to path (through a temporary file renamed into place). */
lp_status lp_dkidx_write(const char *path, const lp_dkidx *x, lp_error *err);
/* Read and check path into x (owned: lp_dkidx_release). LP_ERR_IO if it cannot be read,
 * LP_ERR_FORMAT (not a sidecar, another version, truncated, counts out of range) or
 * LP_ERR_CHECKSUM, with the byte offset in err. */
lp_status lp_dkidx_read(const char *path, lp_dkidx *x, lp_error *err);
/* The same from bytes (tests, fuzzing); `name` names them in errors. */
lp_status lp_dkidx_read_mem(const void *buf, size_t n, const char *name, lp_dkidx *x, lp_error *err);
void lp_dkidx_release(lp_dkidx *x);

/* The stored checksum of an index file (its last 8 bytes). LP_ERR_IO if unreadable. */
lp_status lp_dkidx_lpkx_sum(const char *lpkx, uint64_t *sum, lp_error *err);

#endif
