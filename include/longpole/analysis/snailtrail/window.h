/* window.h: windowed critical-participation analysis, the unit both `longpole
 * summary` (offline, over a trace file) and a streaming engine are built from
 * (SnailTrail §5: snapshot construction, CP, summaries; docs/analyses/
 * critical-participation.md).
 *
 * One window = lp_window_analyze(): cut the snapshot of [ts, te] (snapshot.h), count its
 * transient critical paths and compute every edge's CP (cpmetric.h), draw one path
 * uniformly (seeded per window, so results do not depend on threads or order), build
 * the requested summaries (summary.h) and run the instrumentation checks; the result is
 * an lp_winres. A workspace (lp_winws) holds every buffer, grow-only: analysing window
 * after window allocates nothing once the buffers fit the largest.
 *
 * Many windows = lp_winpool: a pool of threads, each with its own workspace, fed with
 * windows in order (lp_winpool_submit) and handing results back in the same order
 * through a callback that always runs on the caller's thread (inside submit, poll or
 * finish), so printing needs no locks. At most 2 * threads + 2 windows are in flight:
 * memory is bounded by the windows being computed, not by their number.
 *
 * For a streaming engine: for each closed window, build an lp_trace holding its
 * records (see snapshot.h for what makes it equal to the offline snapshot), an
 * lp_snapsrc and lp_sumkeys on it, and submit (src, keys, index, ts, te); free them in
 * the callback of that window (r->src, r->keys and r->t name them) or after finish.
 * Offline, one source and one key table serve every window of the trace; plan the
 * window bounds (lp_wingrid_plan) so no window scans all messages.
 */
#ifndef LONGPOLE_WINDOW_H
#define LONGPOLE_WINDOW_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/analysis/snailtrail/snapshot.h"
#include "longpole/analysis/snailtrail/cpmetric.h"
#include "longpole/analysis/snailtrail/summary.h"

/* ---- a grid of windows -------------------------------------------------------------- */

/* Window k is [origin + k * step, origin + k * step + size]. Tumbling: step = size. */
typedef struct lp_wingrid {
    int64_t origin;          /* start of window 0 */
    int64_t size;            /* > 0 */
    int64_t step;            /* > 0 */
    uint64_t n;              /* number of windows */
} lp_wingrid;

/* The windows covering [from, to]: from origin = from, every window until one reaches
 * `to` (n = 1 if to <= from + size). LP_ERR_ARG for size or step <= 0 or to < from,
 * LP_ERR_LIMIT past 2^32 windows or times beyond the int64 range. */
lp_status lp_wingrid_make(lp_wingrid *g, int64_t from, int64_t to, int64_t size, int64_t step, lp_error *err);
static inline int64_t lp_wingrid_ts(const lp_wingrid *g, uint64_t k) { return g->origin + (int64_t)k * g->step; }
static inline int64_t lp_wingrid_te(const lp_wingrid *g, uint64_t k) { return lp_wingrid_ts(g, k) + g->size; }
/* Plan every window bound of the grid in src (lp_snapsrc_plan). */
lp_status lp_wingrid_plan(const lp_wingrid *g, lp_snapsrc *src, lp_error *err);

/* ---- one window ---------------------------------------------------------------------- */

typedef struct lp_winopts {
    unsigned kinds;          /* summaries wanted: bits (1u << lp_sumkind) */
    uint64_t seed;           /* sampled paths: window `index` uses lp_rng_seed(seed, index) */
    int no_path;             /* do not sample a path */
    int no_checks;           /* skip the instrumentation checks */
} lp_winopts;

#define LP_WIN_SUM_TOL 1e-9  /* |sum of CP - 1| allowed (issue 3) */

typedef struct lp_winres {
    uint64_t index;          /* as submitted */
    int64_t ts, te;          /* the window */
    int64_t t0, t1;          /* its snapshot's extent (V_s at t0, V_e at t1) */
    uint32_t nworkers;       /* workers of the trace */
    uint32_t nactive;        /* workers with something in the window */
    uint64_t nevents;        /* SnailTrail events in [ts, te) (snapshot.h) */
    uint64_t nacts, nmsgs;   /* activities and messages taking part */
    uint64_t nv, nwedges, nin; /* vertices, worker edges, message edges */
    lp_xnum n;               /* number of transient critical paths */
    double log10n;           /* its log10 (-inf if none) */
    int has_paths;           /* N > 0 and t1 > t0 */
    double cp_sum;           /* sum of CP over every edge */
    double err_bound;        /* a priori bound on |cp_sum - 1| and each CP's relative error */
    int sum_ok;              /* has_paths and |cp_sum - 1| <= LP_WIN_SUM_TOL */
    double n_agree;          /* |N from V_s - N from V_e| / N (0 when exact) */
    uint64_t ncycles;        /* zero-time message cycles broken */
    uint32_t nvs, nve;       /* start and end vertices */
    uint64_t path_edges;     /* edges of the sampled path (0 if none) */
    int checked;             /* the checks ran */
    lp_snapcheck check;      /* App. A.2 Properties 1 and 2 */
    unsigned kinds;          /* summaries filled */
    lp_summary sum[LP_SUM_NKINDS];
    double seconds;          /* wall time to analyse the window (cut, count, sample, summarise, check) */
    const lp_trace *t;       /* for names: the trace, key table and source used */
    const lp_sumkeys *keys;
    const lp_snapsrc *src;
    void *user;              /* as submitted (lp_winpool_submit_user) */
} lp_winres;

void lp_winres_init(lp_winres *r);
void lp_winres_release(lp_winres *r);

/* Every buffer one window needs; one per thread. */
typedef struct lp_winws {
    lp_snapshot snap;
    lp_cpm cpm;
    lp_cppath path;
    lp_sumbuf sbuf;
    lp_snapcheck_buf cbuf;
} lp_winws;

void lp_winws_init(lp_winws *ws);
void lp_winws_release(lp_winws *ws);

/* Analyse [ts, te] of src into r (whose buffers are reused). After it, ws->snap and
 * ws->cpm still hold the window's graph and per-edge CP until the next call. */
lp_status lp_window_analyze(lp_winws *ws, const lp_snapsrc *src, const lp_sumkeys *keys, uint64_t index, int64_t ts,
                            int64_t te, const lp_winopts *o, lp_winres *r, lp_error *err);

/* ---- many windows on a pool of threads ------------------------------------------------- */

/* Called with each result in submission order, on the thread calling submit, poll or
 * finish. Return non-zero to stop: the pool then fails with LP_ERR_ARG ("stopped"). */
typedef int (*lp_winres_fn)(void *ctx, const lp_winres *r);

typedef struct lp_winpool lp_winpool;

/* nthreads 0 = one per online CPU; 1 = no threads (each submit analyses at once). */
lp_status lp_winpool_new(lp_winpool **out, unsigned nthreads, const lp_winopts *o, lp_winres_fn fn, void *ctx,
                         lp_error *err);
/* Queue a window (blocks while the pool is full, delivering finished results). The
 * source and keys must stay valid until the window's result has been delivered. */
lp_status lp_winpool_submit(lp_winpool *p, const lp_snapsrc *src, const lp_sumkeys *keys, uint64_t index,
                            int64_t ts, int64_t te, void *user, lp_error *err);
/* Deliver the results finished so far (in order), without waiting. */
lp_status lp_winpool_poll(lp_winpool *p, lp_error *err);
/* Wait for every queued window and deliver the rest. The first failure of any window
 * (or of the callback) is returned; later windows are then not analysed. */
lp_status lp_winpool_finish(lp_winpool *p, lp_error *err);
unsigned lp_winpool_threads(const lp_winpool *p);
void lp_winpool_free(lp_winpool *p);

/* ---- a window's result as bytes (sharded runs: docs/distributed.md) ------------------- */

/* A run over K processes splits the grid by window index: window k belongs to part
 * k % K, each part analyses its windows with the same source, keys and options, and
 * the results, moved as bytes, are merged in index order: every field is copied
 * bit for bit (doubles too), so a merged window prints exactly as if analysed here.
 * The bytes are in host order with a magic word and the layout's version: the
 * processes of one run share a build and an architecture. */
static inline uint64_t lp_wingrid_part(uint64_t k, uint64_t nparts) { return nparts ? k % nparts : 0; }

/* Append r to buf[0..*len) (grown: *cap; lp_free by the caller). */
lp_status lp_winres_pack(const lp_winres *r, uint8_t **buf, size_t *len, size_t *cap, lp_error *err);
/* Read the result at buf[*off..n) into r (released first) and advance *off; names
 * resolve through keys, its trace and src (which must be what the packing process
 * used, built on the same trace). LP_ERR_FORMAT for a short or damaged buffer. */
lp_status lp_winres_unpack(lp_winres *r, const uint8_t *buf, size_t n, size_t *off, const lp_sumkeys *keys,
                           const lp_snapsrc *src, lp_error *err);

#endif
