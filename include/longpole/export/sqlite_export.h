/* sqlite_export.h: every loaded entity and every analysis result of an input set as
 * SQLite tables, so that users can drill down with SQL (issue 6 item 2; the schema is
 * docs/formats/sqlite.md, created by lp_sqlite_open and versioned in table `meta`).
 *
 * One database holds any number of *runs*: a run is one export of one input set, and
 * its id is the first column of every row. The input set is identified by the list of
 * its inputs, each made absolute and canonical (realpath; "-" stays "-"), in the order
 * given: exporting the same inputs again *replaces* their run (its rows are deleted and
 * the new ones written in the same transaction; the run id is INTEGER PRIMARY KEY, so a
 * replaced run that was the latest gets its id again, any other a new one), so nothing is ever
 * duplicated, and runs of other inputs are left alone.
 *
 * Life of an export: lp_sqlite_open (creates the schema if needed, begins one
 * transaction, removes the input set's previous run, registers the new run), then one
 * or more of lp_sqlite_trace / lp_sqlite_reqlog / lp_sqlite_spans, then
 * lp_sqlite_commit. lp_sqlite_close without a commit rolls everything back: the
 * database is then exactly as before (the previous run included).
 *
 * Speed: one transaction, prepared statements bound and reset row by row, rows
 * streamed from the in-memory columns (nothing is copied or built a second time),
 * tables WITHOUT ROWID keyed by (run, id) and written in key order (appends), a large
 * page cache, synchronous=OFF and an exclusive lock during the load. The rollback
 * journal stays on (in memory): a fresh database journals almost nothing (new pages
 * have no pre-image), and a failed export rolls back cleanly (journal_mode=OFF would
 * make ROLLBACK undefined). Not crash-safe against power loss until the commit returns.
 * Analyses run as the CLI runs them (same library calls, same defaults), so the tables
 * hold what `longpole cp|check|summary|requests|spans --json` print.
 * SQLite is used from the calling thread only.
 */
#ifndef LONGPOLE_SQLITE_EXPORT_H
#define LONGPOLE_SQLITE_EXPORT_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/base/status.h"
#include "longpole/model/trace.h"
#include "longpole/base/progress.h"
#include "longpole/import/reqlog.h"
#include "longpole/analysis/mystery/skew.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/analysis/mystery/reqstats.h"
#include "longpole/model/span.h"
#include "longpole/analysis/grade10/attrib.h"
#include "longpole/analysis/grade10/issues.h"
#include "longpole/analysis/crystalperf/bottleneck.h"

#define LP_SQLITE_SCHEMA_VERSION 1

typedef struct lp_sqlite lp_sqlite;

/* What the analyses are run with. Zero-initialise (lp_sqlite_opts_init) and set. */
typedef struct lp_sqlite_opts {
    /* activity traces */
    int64_t window;          /* SnailTrail window size in ns; 0 = the whole trace as one window */
    int64_t slide;           /* step between window starts; 0 = window (tumbling) */
    unsigned kinds;          /* summaries (bits 1u << lp_sumkind); 0 = all four */
    uint64_t seed;           /* sampled transient paths (as `summary --seed`; default 1) */
    int no_path;             /* do not sample paths */
    int no_checks;           /* no per-window App. A.2 checks */
    int no_windows;          /* no window tables at all */
    int edge_cp;             /* also table activity_cp: every activity's CP in every window */
    unsigned threads;        /* window analysis threads (0 = one per CPU) */
    /* request logs */
    double outlier_share;    /* 0 = 0.05 */
    uint32_t buckets;        /* what-if buckets, 0 = 20 */
    int no_request_paths;    /* leave out request_segments (one row per segment per request) */
    int no_events;           /* leave out the log's events (one row per log line) */
    /* spans */
    const double *percentiles; /* span CP aggregation percentiles; NULL = 50, 95, 99, 100 */
    size_t npercentiles;
    /* progress: rows written (what = "exporting"), and window analysis */
    lp_progress_fn progress;
    void *progress_ctx;
} lp_sqlite_opts;

void lp_sqlite_opts_init(lp_sqlite_opts *o);

/* What happened, for the caller's summary line. */
typedef struct lp_sqlite_stats {
    int64_t run;             /* the new run's id */
    int replaced;            /* an earlier run of the same inputs was removed */
    uint64_t rows;           /* rows written */
    double seconds;          /* from open to commit */
} lp_sqlite_stats;

/* Open (create) the database at `path`, create the schema if missing (LP_ERR_FORMAT if
 * the file is another SQLite database of a different schema version, or not SQLite),
 * begin the transaction, delete the previous run of this input set and register the
 * new one. `kind` is "trace", "requests" or "spans"; `options` (may be NULL) is stored
 * with the run as given (a JSON object describing the options, for the record). */
lp_status lp_sqlite_open(lp_sqlite **out, const char *path, const char *const *inputs, size_t ninputs,
                         const char *kind, const char *options, lp_error *err);
/* Record the input's diagnostics counts in the run. */
lp_status lp_sqlite_set_diags(lp_sqlite *db, uint64_t errors, uint64_t warnings, lp_error *err);

/* An activity trace: types, workers, operators, activities, messages, attributes; the
 * whole-trace critical path, its breakdowns and the App. A.2 checks (of `t`, which may
 * be a window: then cp_info.window_from/to say so, pass from <= to; else from > to);
 * SnailTrail windows with N, the sum of CP and the four summaries (opts). */
lp_status lp_sqlite_trace(lp_sqlite *db, const lp_trace *t, int64_t from, int64_t to, const lp_sqlite_opts *o,
                          lp_error *err);

/* Request logs: hosts and clock offsets (sk may be NULL: not corrected), requests and
 * their attributes, the logged events, the model's segments, relationships and
 * pipelines (m finished; map from lp_causal_map), categories (assigned), the
 * aggregates of lp_reqstats_run (quantiles, what-if, outliers) and every request's
 * segments with slack and critical path. `model_file` is recorded (NULL: inferred). */
lp_status lp_sqlite_reqlog(lp_sqlite *db, const lp_reqlog *rl, const lp_skew *sk, const lp_causal *m,
                           const uint32_t *map, const lp_reqcat *cat, const char *model_file,
                           const lp_sqlite_opts *o, lp_error *err);

/* Span traces: traces, spans, each trace's critical-path sections, and the exclusive
 * critical-path time by operation and call path at the percentiles (opts). The
 * activity graph the spans map to is exported with lp_sqlite_trace. */
lp_status lp_sqlite_spans(lp_sqlite *db, const lp_spans *sp, const lp_sqlite_opts *o, lp_error *err);

/* A Grade10 analysis (kind "grade10"): the model's phase types and resources, every
 * phase instance, every (leaf, resource) usage and bottleneck time, the resource
 * timelines and (with `segments`) their segments' demand and usage, the per-type
 * totals and the issues (`is` may be NULL). */
lp_status lp_sqlite_grade10(lp_sqlite *db, const lp_g10_attr *a, const lp_g10_issues *is, int segments,
                            lp_error *err);

/* Commit; fills *stats (may be NULL). */
lp_status lp_sqlite_commit(lp_sqlite *db, lp_sqlite_stats *stats, lp_error *err);
/* CrystalPerf's tables (cpf_info, cpf_path, cpf_ops, cpf_activity) of a profile and the
 * bottleneck of its trace's critical path; the trace itself is exported with
 * lp_sqlite_trace in the same run (activity ids match). */
lp_status lp_sqlite_crystalperf(lp_sqlite *db, const lp_cpf_profile *p, const lp_cpf_bottleneck *b, lp_error *err);
/* Close; without a commit, everything since lp_sqlite_open is rolled back. */
void lp_sqlite_close(lp_sqlite *db);

#endif
