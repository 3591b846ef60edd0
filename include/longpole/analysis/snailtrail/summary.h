/* summary.h: SnailTrail's four CP-based performance summaries of a window (§6), each
 * next to the conventional profile and to a single randomly drawn transient critical
 * path (§7.4, Figures 7-9); docs/analyses/critical-participation.md.
 *
 *  activity  CP per activity type: which kind of work is on the critical path?
 *  worker    CP per worker timeline (the straggler summary): which worker holds the
 *            job back?
 *  operator  CP per operator, ranked by CP divided by the operator's parallelism (the
 *            number of workers running it in the trace): which stage to re-scale?
 *  comm      CP per sender -> receiver pair of message edges: which channel to
 *            shorten or co-locate?
 * Every row has three columns: cp, the key's share of the critical participation
 * (Eq. 4: the CP of its edges summed; a window's CP sums to 1); prof_share, its share
 * of the conventional profile (the summed durations of its activities in the window,
 * cut at the bounds; `waiting` is not busy time and is left out, reported as
 * waiting_ns, and so are the `unknown` gaps gap filling made, which no profiler saw;
 * message time is the "communication" row: the wall-clock time during which some
 * message between two workers is in flight, overlapping messages counted once, as in
 * breakdown.h; in the comm summary, each channel's summed message time, of the
 * channels' total); and path_share, its share of
 * the sampled path (time on that one path / t1 - t0), the single-path summary the
 * paper contrasts CP with. In the activity, worker and operator summaries message edges
 * form one row, "communication" (key LP_SUMKEY_COMM); activities without an operator
 * are the row "-" (LP_SUMKEY_NONE; gap activities have none). Rows are sorted by rank
 * (cp, or cp per worker for operators), then profile, then key; in the worker and
 * operator summaries the "communication" and "-" rows come after every worker or
 * operator (they are neither).
 */
#ifndef LONGPOLE_SUMMARY_H
#define LONGPOLE_SUMMARY_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/analysis/snailtrail/snapshot.h"
#include "longpole/analysis/critical-path/breakdown.h"
#include "longpole/analysis/snailtrail/cpmetric.h"

typedef enum lp_sumkind {
    LP_SUM_ACTIVITY = 0,
    LP_SUM_WORKER,
    LP_SUM_OPERATOR,
    LP_SUM_COMM,
    LP_SUM_NKINDS
} lp_sumkind;

const char *lp_sumkind_name(lp_sumkind k);            /* "activity", "worker", "operator", "comm" */
/* Parse one name (also "straggler" for worker, "communication" for comm). 0 on success. */
int lp_sumkind_parse(const char *s, size_t n, lp_sumkind *k);

#define LP_SUMKEY_COMM UINT64_MAX        /* message edges */
#define LP_SUMKEY_NONE (UINT64_MAX - 1)  /* activities without an operator */

/* Key tables of a trace, built once (O(activities)): dense operator ids and each
 * operator's parallelism. Read-only afterwards (shared by threads). */
typedef struct lp_sumkeys {
    const lp_trace *t;
    uint32_t nops;
    uint32_t *opid;          /* [t->strs.n] string id -> dense operator id, or LP_NONE32 */
    lp_str *opname;          /* [nops] */
    uint32_t *oppar;         /* [nops] workers with at least one activity of the operator */
} lp_sumkeys;

lp_status lp_sumkeys_init(lp_sumkeys *k, const lp_trace *t, lp_error *err);
void lp_sumkeys_release(lp_sumkeys *k);
/* A row key as text: type, worker or operator name, "sender -> receiver",
 * "communication" or "-". Returns buf (or a string owned by the trace). */
const char *lp_sumkeys_label(const lp_sumkeys *k, lp_sumkind kind, uint64_t key, char *buf, size_t n);

typedef struct lp_sumrow {
    uint64_t key;            /* type id, worker id, dense operator id, src << 32 | dst, or LP_SUMKEY_* */
    double cp;               /* summed CP of the key's edges */
    double rank;             /* what rows are sorted by: cp, or cp / par for operators */
    uint32_t par;            /* operators: parallelism; 1 otherwise */
    int64_t prof_ns;         /* conventional profile: the key's busy time in the window */
    double prof_share;       /* prof_ns / prof_total */
    int64_t path_ns;         /* time of the key on the sampled transient path */
    double path_share;       /* path_ns / (t1 - t0) */
} lp_sumrow;

typedef struct lp_summary {
    lp_sumkind kind;
    lp_sumrow *rows;         /* sorted (see above) */
    size_t n, cap;
    double cp_total;         /* sum of the rows' cp: 1 (within rounding) except for comm,
                              * where it is the share of message edges */
    int64_t prof_total;      /* busy time of all activities + message time (comm: message time) */
    int64_t waiting_ns;      /* waiting time in the window, not in the profile */
    int64_t path_total;      /* length of the sampled path (t1 - t0), 0 without one */
} lp_summary;

void lp_summary_init(lp_summary *s);
void lp_summary_release(lp_summary *s);

/* Accumulators reused across windows (grow-only). */
typedef struct lp_sumbuf {
    void *acc[LP_SUM_NKINDS];    /* per kind: dense accumulators */
    size_t cap[LP_SUM_NKINDS];
    void *pairs;                 /* comm: the sender/receiver pairs and their accumulators */
    lp_ival *iv;                 /* the window's message intervals (the profile's communication) */
    size_t capiv;
    size_t pcap, npairs;
    struct lp_hmap *pairmap;     /* sender << 32 | receiver -> index in pairs (base/hashmap.h) */
} lp_sumbuf;

void lp_sumbuf_release(lp_sumbuf *b);

/* Fill the summaries whose bit (1u << kind) is set in `kinds` (out[kind] for each) in
 * one pass over the window's edges. `path` may be NULL (path columns are then 0).
 * keys must be built on the snapshot's trace. */
lp_status lp_summary_compute(lp_summary out[LP_SUM_NKINDS], unsigned kinds, lp_sumbuf *buf, const lp_sumkeys *keys,
                             const lp_snapshot *s, const lp_cpm *c, const lp_cppath *path, lp_error *err);

#endif
