/* kindex.h: the execution graph persisted (docs/formats/kindex.md): an index file that
 * later queries map instead of re-reading the kernel traces (the precomputed graphs of
 * the distributed critical path paper, papers/distributed-critical-path-eci.txt §III-C),
 * with the keys of the unmatched packets its External Communication Index needs.
 *
 * The file is versioned and checksummed (XXH3-64, as .lptb), records the identity of
 * the traces it was built from (every trace file's path, size and modification time:
 * the fingerprint) and whether the host clocks were synchronised. Opening it maps it and
 * checks, in this order: that it is an index of this version (else FOREIGN), that its
 * size matches its header and its checksum its bytes, and every invariant of the graph
 * (else CORRUPT), then that it was built from the same traces (else FOREIGN), that none
 * of their files changed (else STALE), and with the clock option asked for (else
 * FOREIGN). A refused file is never used; the verdict says why, the error says what
 * (file, byte offset, section or trace file).
 *
 * Verification stamp: checking every byte of a large index costs more than the query it
 * serves (a 589 MB index: 0.3 CPU s of checksum and invariants for a 50 ms query). So a
 * file that passed every check (or that this library wrote) gets a small sidecar,
 * INDEX.verified (LP_KINDEX_STAMP_SUFFIX), naming the index file exactly as the file
 * system identifies it: device, inode, size, modification and status-change times, and
 * its stored checksum. A later open whose file still matches the stamp (any write,
 * truncation, rename over it or touch changes the status-change time, which no user can
 * set) maps it without reading every byte: the header, the section sizes, the strings
 * and the stored fingerprint are still checked, the checksum and the graph's invariants
 * are not. A stamp that does not match, is absent, unreadable or malformed means the full
 * checks, and a fresh stamp when they pass. What a stamp cannot see: bytes changed below
 * the file system (a failing disk, a raw device write); lp_kindex_expect.verify = 1 (the
 * CLI's --verify) checks everything whatever the stamp says.
 */
#ifndef LONGPOLE_KINDEX_H
#define LONGPOLE_KINDEX_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/analysis/kernel/kgraph.h"

#define LP_KINDEX_MAGIC "LPKX\r\n\x1a\n"
#define LP_KINDEX_VERSION 2u
#define LP_KINDEX_EXT ".lpkx" /* files with this extension are left out of fingerprints */
#define LP_KINDEX_STAMP_SUFFIX ".verified" /* INDEX.lpkx.verified: also left out of fingerprints */
#define LP_KINDEX_DIST_SUFFIX ".dk" /* INDEX.lpkx.dk, a `dist kcp` rank's sidecar (dist/dkidx.h): left out too */

/* One trace file, or a trace path as given (a root). */
typedef struct lp_kindex_file {
    char *path;        /* roots: canonical absolute path; files: root path + "/" + relative path */
    uint64_t size;
    int64_t mtime_ns;
    uint32_t root;     /* index of its root among the roots (a root names itself) */
    uint32_t is_root;
} lp_kindex_file;

/* The identity of a set of traces: their roots in the order given, then every regular
 * file under each directory root, sorted by path within its root. */
typedef struct lp_kindex_fp {
    lp_kindex_file *f;
    size_t n;
    uint32_t nroots;
} lp_kindex_fp;

/* Fingerprint trace paths (directories are walked, up to 16 levels, skipping *.lpkx).
 * LP_ERR_IO if a path cannot be read. */
lp_status lp_kindex_fingerprint(const char *const *paths, size_t npaths, lp_kindex_fp *fp, lp_error *err);
void lp_kindex_fp_release(lp_kindex_fp *fp);

/* Write g with its traces' fingerprint to `path` (through a temporary file renamed into
 * place, so a reader never sees half a file), and its verification stamp (best effort:
 * without one, the next open checks everything). */
lp_status lp_kindex_write(const lp_kgraph *g, const lp_kindex_fp *fp, const char *path, lp_error *err);

typedef enum lp_kindex_verdict {
    LP_KINDEX_OK = 0,
    LP_KINDEX_CORRUPT,   /* truncated, checksum, or an invariant broken */
    LP_KINDEX_FOREIGN,   /* not an index, another version, other traces, or another clock option */
    LP_KINDEX_STALE,     /* the same traces, but a file was added, removed or changed since */
    LP_KINDEX_UNREADABLE /* the operating system refused to open or map it */
} lp_kindex_verdict;

const char *lp_kindex_verdict_name(lp_kindex_verdict v); /* "ok", "corrupt", "foreign", "stale", "unreadable" */

typedef struct lp_kindex_expect {
    const lp_kindex_fp *fp; /* the traces as they are now; NULL: do not compare (the caller vouches) */
    int synced;             /* 1 clocks synchronised, 0 raw, -1 either */
    unsigned threads;       /* the checksum and the content checks: 0 automatic (side by side on
                               two threads for files of 16 MB and more, when there are 2 CPUs),
                               1 one after the other, 2 side by side whatever the size */
    unsigned verify;        /* 0: a matching verification stamp vouches for the checksum and the
                               invariants; 1: check every byte whatever the stamp says */
} lp_kindex_expect;

/* How an open went (lp_kindex_open_info). */
typedef struct lp_kindex_info {
    int stamped;      /* 1: a verification stamp vouched for the file (checksum and invariants not rerun) */
    int stamp_written;/* 1: the full checks passed and a new stamp was written */
} lp_kindex_info;

/* Map and check an index file (expect may be NULL: no comparison). The graph's columns
 * point into the mapping, which lp_kgraph_free unmaps. On refusal: LP_ERR_FORMAT (foreign
 * or corrupt), LP_ERR_CHECKSUM, LP_ERR_DATA (stale, or other traces/options) or
 * LP_ERR_IO, with *verdict set (verdict may be NULL). */
lp_status lp_kindex_open(const char *path, const lp_kindex_expect *expect, lp_kgraph **out, lp_kindex_verdict *verdict,
                         lp_error *err);
/* The same, saying in *info (may be NULL) whether a stamp was used or written. */
lp_status lp_kindex_open_info(const char *path, const lp_kindex_expect *expect, lp_kgraph **out,
                              lp_kindex_verdict *verdict, lp_kindex_info *info, lp_error *err);
/* The same from bytes in memory (copied; tests and fuzzing). `name` names them in errors. */
lp_status lp_kindex_open_mem(const void *buf, size_t n, const char *name, const lp_kindex_expect *expect, lp_kgraph **out,
                             lp_kindex_verdict *verdict, lp_error *err);

#endif
