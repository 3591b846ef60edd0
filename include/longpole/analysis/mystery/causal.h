/* causal.h: the Mystery Machine's causal model (OSDI'14 §4.1-4.2): relationships
 * between segments <task, start event, end event> inferred from request logs by
 * rejecting hypotheses on their first counterexample.
 *
 * For every ordered pair of segments (A, B) the model keeps three bits:
 *   hb[A][B]   "A happens before B": B started at or after A ended in every request
 *              where both occurred;
 *   mx[A][B]   "A and B are mutually exclusive": they never overlapped (symmetric);
 *   seen[A][B] A and B occurred together in at least one request.
 * A pair never seen together stays hypothesized (vacuously true): it is reported as
 * "not yet observed", never as a relationship, and is tested as soon as it is seen.
 * Refinement is pure bit arithmetic per request (docs/analyses/mystery-inference.md):
 *   hb[A] &= succ(A) | ~present;  mx[A] &= succ(A) | pred(A) | ~present;  seen[A] |= present
 * where succ(A) = {B: start(B) >= end(A)} and pred(A) = {B: end(B) <= start(A)} are
 * built from two sorts of the request's segments. Relations only ever lose bits, so
 * the model after a corpus does not depend on the order of its requests, on how they
 * are split between threads, or on whether the corpus came in one run or several.
 *
 * Reported relationships of a seen pair (A, B):
 *   happens-before A -> B   hb[A][B] and not hb[B][A] (both: zero-length segments that
 *                           always coincided; reported A -> B for the lower id);
 *   mutual exclusion A | B  mx, and neither hb direction;
 *   concurrent              otherwise (no relationship).
 * Pipelines (FIFO between two tasks, §4.1) are derived: for tasks t1 != t2, pair each
 * segment b of t2 (in t2's order) with the last segment a of t1 that happens before it;
 * the first b of each such a forms a pair (a, b). Two or more pairs make a pipeline
 * candidate t1 => t2: data handed from t1 to t2 at several points, in order. A
 * candidate is rejected on the first request where two of its pairs are ordered
 * differently in t1 and in t2 (not FIFO). Pipelines add no dynamic edge beyond their
 * happens-before pairs (§4.2: all relationships become happens-before per request).
 */
#ifndef LONGPOLE_CAUSAL_H
#define LONGPOLE_CAUSAL_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "longpole/base/status.h"
#include "longpole/base/strtab.h"
#include "longpole/import/reqlog.h"

#define LP_CAUSAL_NONE UINT32_MAX

typedef enum lp_rel {
    LP_REL_UNSEEN = 0,  /* never observed together */
    LP_REL_CONCURRENT,  /* no relationship */
    LP_REL_BEFORE,      /* a -> b */
    LP_REL_AFTER,       /* b -> a */
    LP_REL_EXCLUSIVE    /* a | b */
} lp_rel;

typedef struct lp_causal_pipe {
    lp_str t1, t2;          /* producer and consumer task names */
    uint32_t npairs;
    uint32_t *a, *b;        /* pairs (a[i] in t1, b[i] in t2), in t2's order */
} lp_causal_pipe;

typedef struct lp_causal {
    lp_strtab names;        /* task and event names, the filter */
    uint32_t nseg, capseg;
    lp_str *seg_task, *seg_from, *seg_to; /* segment names */
    uint64_t *seg_count;    /* requests in which the segment occurred */
    uint8_t *seg_cross;     /* seen crossing hosts (a network segment) */
    uint8_t *seg_dropped;   /* matched the filter: no relationships, ignored by analyses */
    uint32_t words;         /* 64-bit words per bit row (capacity: words * 64 segments) */
    uint64_t *hb, *mx, *seen; /* [capseg * words] */
    uint64_t nreq;          /* requests the model was refined over */
    char *filter;           /* POSIX extended regex on "task:start->end", or NULL */
    struct lp_hmap32 *segmap; /* hash of (task, start, end) -> segment (the library's hash table) */
    /* derived by lp_causal_finish */
    uint32_t *topo;         /* position in a static topological order of hb (ties: id) */
    lp_causal_pipe *pipes;
    uint32_t npipes;
    lp_str *pipe_rej;       /* rejected pipeline candidates: task name pairs (2 per entry) */
    uint32_t npipe_rej;
    int finished;
} lp_causal;

lp_status lp_causal_init(lp_causal *m, lp_error *err);
void lp_causal_release(lp_causal *m);

/* Set the filter (dropped segments are never related); only before segments exist. */
lp_status lp_causal_set_filter(lp_causal *m, const char *regex, lp_error *err);
/* Segment id by names, adding it (fully hypothesized) if new. */
lp_status lp_causal_segment(lp_causal *m, const char *task, const char *from, const char *to, uint32_t *id,
                            lp_error *err);
uint32_t lp_causal_find(const lp_causal *m, const char *task, const char *from, const char *to);
/* "task:start->end" */
const char *lp_causal_label(const lp_causal *m, uint32_t s, char *buf, size_t n);

/* Map every segment of a log to a model segment (adding new ones); map[] has
 * rl->nsegs entries and is freed by the caller with lp_free. */
lp_status lp_causal_map(lp_causal *m, const lp_reqlog *rl, uint32_t **map, lp_error *err);

static inline int lp_causal_bit(const uint64_t *rows, uint32_t words, uint32_t a, uint32_t b)
{
    return (int)((rows[(size_t)a * words + (b >> 6)] >> (b & 63)) & 1u);
}
/* The reported relationship of a pair. */
lp_rel lp_causal_rel(const lp_causal *m, uint32_t a, uint32_t b);

/* Convergence (Figure 3): one row per block of requests processed. */
typedef struct lp_causal_conv {
    uint64_t requests;      /* requests processed so far */
    uint32_t segments;      /* segments seen so far */
    uint64_t pairs;         /* ordered pairs seen together so far */
    uint64_t hypotheses;    /* hypotheses tested so far (hb per ordered pair, mx per pair) */
    uint64_t remaining;     /* hypotheses not rejected */
    uint64_t rejected;      /* rejected in this block */
    uint64_t relationships; /* reported relationships (hb edges + exclusive pairs) */
} lp_causal_conv;

typedef struct lp_causal_refine_opts {
    unsigned threads;       /* 0 = online CPUs */
    uint64_t block;         /* requests per convergence block (0 = one block) */
    lp_causal_conv **conv;  /* out: rows (lp_free by the caller), if non-NULL */
    size_t *nconv;
    lp_progress_fn progress;
    void *progress_ctx;
    uint64_t part, nparts;  /* refine with part `part` of `nparts` contiguous request ranges
                               (lp_pool_range); nparts 0 = every request */
} lp_causal_refine_opts;

/* Refine with every good request of a log (map from lp_causal_map). */
lp_status lp_causal_refine(lp_causal *m, const lp_reqlog *rl, const uint32_t *map, const lp_causal_refine_opts *o,
                           lp_error *err);
/* Derive the topological order and pipelines; if rl is given, pipeline candidates are
 * checked against its requests (FIFO counterexamples), else they are kept. */
lp_status lp_causal_finish(lp_causal *m, const lp_reqlog *rl, const uint32_t *map, lp_error *err);

/* ---- sharded inference (docs/distributed.md) ---------------------------------------------
 * K processes load the same logs (so the same segments, in the same order) and the same
 * starting model; each refines its part of the requests (opts part/nparts). A model's
 * mergeable state is two word vectors: `and` words (the hb rows, the mx rows and the
 * complement of the seen rows, nseg * words each) merge by bitwise AND, `sum` words
 * (each segment's request count, then nreq) by addition. Rejection only clears bits,
 * so ANDing the parts' words gives exactly the bits of one refinement over every
 * request; the counts are sums (subtract the starting model's sum words from every
 * part but one). Pipelines: lp_causal_finish(m, NULL, NULL) on the merged model
 * derives the same candidates everywhere; each part marks the candidates its requests
 * contradict (lp_causal_pipes_check), the marks are ORed (a SUM > 0) and
 * lp_causal_pipes_reject drops them, exactly as lp_causal_finish with the whole log. */
void lp_causal_state_size(const lp_causal *m, size_t *nand, size_t *nsum);
void lp_causal_state_get(const lp_causal *m, uint64_t *andw, uint64_t *sumw);
void lp_causal_state_set(lp_causal *m, const uint64_t *andw, const uint64_t *sumw);
/* rej[p] = 1 for each pipeline candidate p some good request of part `part` of
 * `nparts` contradicts (others untouched). */
lp_status lp_causal_pipes_check(const lp_causal *m, const lp_reqlog *rl, const uint32_t *map, uint64_t part,
                                uint64_t nparts, uint8_t *rej, lp_error *err);
/* Drop the candidates with rej[p] set (remembered as rejected, as lp_causal_finish does). */
lp_status lp_causal_pipes_reject(lp_causal *m, const uint8_t *rej, lp_error *err);

/* Counts of reported relationships. */
void lp_causal_counts(const lp_causal *m, uint64_t *hb, uint64_t *hb_direct, uint64_t *mx, uint64_t *unseen_pairs);
/* Direct happens-before edges: the transitive reduction of the reported hb relation
 * (rows of `words` words, allocated; lp_free). */
lp_status lp_causal_direct(const lp_causal *m, uint64_t **rows, lp_error *err);

/* The model file (docs/formats/mystery-model.md). */
lp_status lp_causal_write(const lp_causal *m, FILE *f, lp_error *err);
lp_status lp_causal_save(const lp_causal *m, const char *path, lp_error *err);
lp_status lp_causal_load(lp_causal *m, const char *path, lp_error *err);

/* Differences between two models over the pairs both have seen: relationships of
 * `ref` that `m` lacks (missed) or gets differently, and those `m` reports that `ref`
 * does not (spurious). fn (optional) is called for each difference. */
typedef void (*lp_causal_diff_fn)(void *ctx, const char *a, const char *b, lp_rel want, lp_rel got);
typedef struct lp_causal_diff {
    uint64_t compared;      /* pairs seen by both */
    uint64_t missed;        /* ref has a relationship m does not have */
    uint64_t spurious;      /* m has a relationship ref does not have */
    uint64_t only_ref, only_m; /* segments in one model only */
    uint64_t pipes_missed, pipes_spurious;
} lp_causal_diff;
lp_status lp_causal_compare(const lp_causal *m, const lp_causal *ref, lp_causal_diff *d, lp_causal_diff_fn fn,
                            void *ctx, lp_error *err);

#endif
