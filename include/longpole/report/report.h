/* report.h: the HTML report (`longpole report`, docs/report.md): one self-contained
 * HTML5 document (inline SVG, CSS and a little JavaScript; no network access; opens
 * from disk) made of SECTIONS, each a view of analyses that already exist in the
 * library:
 *
 *   overview    what was loaded, the critical path's length, the instrumentation
 *               checks (SnailTrail App. A.2)                          [trace]
 *   timeline    one row per worker, activities coloured by type, messages as arrows,
 *               the critical path highlighted; zoom, pan, hover; big traces drawn from
 *               a pyramid of per-pixel bins computed here             [trace]
 *   breakdown   the critical path by type, worker and operator next to the
 *               conventional profile (breakdown.h)                    [trace]
 *   summaries   critical participation per window, SnailTrail's four summaries as
 *               stacked bars next to the conventional profile and one sampled path
 *               (window.h; SnailTrail Figures 5, 7-11), several window sizes [trace]
 *   requests    Mystery Machine: summed delay vs critical path, per-category CDFs of
 *               the critical-path share, strata, slack CDFs, outlier differential,
 *               natural-variation what-if (reqstats.h; OSDI'14 Figures 5-8, 10)
 *                                                                     [request logs]
 *   spans       exclusive critical-path time by service/operation and by call path
 *               at latency percentiles, and an icicle flame graph (spancp.h) [spans]
 *   grade10     Grade10: issues with replayed gains, usage vs demand over time with
 *               saturation shaded, bottleneck share per phase type and resource,
 *               imbalance (attrib.h, issues.h; paper Figs. 3-5)   [a Grade10 attribution]
 *
 * Using it (what `longpole report` does, and what a server does):
 *
 *     lp_report_inputs in;                      // or fill an lp_report_data yourself
 *     lp_report_load(&in, paths, n, &lo, &diags, &err);
 *     lp_report *r;
 *     lp_report_new(&r, &in.data, &opts, &err); // borrows in.data's analyses
 *     lp_report_prepare(r, NULL, 0, &err);      // compute every applicable section
 *     lp_report_write(r, stdout_or_socket_FILE, &err);     // the whole document
 *     lp_report_write_page(r, names, k, f, &err);          // a document with k sections
 *     lp_report_free(r); lp_report_inputs_release(&in);
 *
 * To embed sections in a page of your own (a server's): lp_report_write_head (doctype,
 * CSP, CSS, opening <body>), then any lp_report_write_section calls, then
 * lp_report_write_tail (the script and closing tags). The script finds every section in
 * the page by its markup, so any subset in any order works.
 *
 * Threads: lp_report_prepare (and lp_report_new) compute and cache; once prepare has run
 * for the sections you will write, every write function only reads the report, so
 * several threads may write the same report at once, each to its own FILE. A write of
 * a section that was not prepared prepares it first (then it is not read-only).
 *
 * Security: every name that comes from an input (workers, types, operators, services,
 * tasks, events, file names) is untrusted. Text and attributes go through
 * lp_html_text (HTML-escaped; invalid UTF-8 and control characters replaced), data for
 * the script through lp_html_json_str (JSON whose '<', '>', '&', U+2028 and U+2029 are
 * \u-escaped, so it can never close its <script> data block); the script inserts names
 * with textContent or its own escaping. The document also carries a Content-Security-
 * Policy allowing no network access at all and only scripts bearing the report's random
 * nonce, so even markup that escaped escaping could not run.
 *
 * Adding a section: one file src/report/report_NAME.c defining an lp_report_section
 * (name, title, applies, prepare, release, write) and one line in the registry
 * (src/report/report.c, `sections[]`). Sections share the costly analyses through
 * lp_report_graph (PAG, critical path, checks: computed once per report).
 */
#ifndef LONGPOLE_REPORT_H
#define LONGPOLE_REPORT_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "longpole/base/status.h"
#include "longpole/base/diag.h"
#include "longpole/base/progress.h"
#include "longpole/model/trace.h"
#include "longpole/analysis/critical-path/cpath.h"
#include "longpole/analysis/snailtrail/snapshot.h"
#include "longpole/model/span.h"
#include "longpole/import/reqlog.h"
#include "longpole/analysis/mystery/skew.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/analysis/mystery/reqstats.h"
#include "longpole/import/stacks.h"
#include "longpole/analysis/crystalperf/classify.h"
#include "longpole/analysis/grade10/attrib.h"
#include "longpole/analysis/grade10/issues.h"
#include "longpole/analysis/grade10/path.h"

/* ---- HTML output ------------------------------------------------------------------ */

/* A writer of HTML to a stdio stream. Output is buffered by stdio; a failed write is
 * remembered (`failed`) and reported by lp_html_status, so writers need not check each
 * call. Only lp_html_raw* and lp_html_printf emit markup: give them literals and
 * numbers, never input data. */
typedef struct lp_html {
    FILE *f;                 /* the stream (not owned) */
    int failed;              /* a write failed */
    uint64_t bytes;          /* bytes written so far */
} lp_html;

void lp_html_init(lp_html *h, FILE *f);
/* Trusted markup (a literal of the report's own). */
void lp_html_raw(lp_html *h, const char *s);
void lp_html_rawn(lp_html *h, const char *s, size_t n);
/* Formatted trusted markup; arguments must be numbers or the report's own literals. */
void lp_html_printf(lp_html *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Untrusted text as HTML text or a double- or single-quoted attribute value: & < > " '
 * become entities; invalid UTF-8 bytes, C0 controls other than tab and newline, DEL and
 * C1 controls become U+FFFD. */
void lp_html_text(lp_html *h, const char *s);
void lp_html_textn(lp_html *h, const char *s, size_t n);
/* Untrusted text as a JSON string literal (with its quotes) safe inside a <script>
 * element: JSON escapes plus \u003c \u003e \u0026 for < > &, \u2028 and \u2029; invalid
 * UTF-8 becomes U+FFFD. NULL writes null. */
void lp_html_json_str(lp_html *h, const char *s);
void lp_html_json_strn(lp_html *h, const char *s, size_t n);
/* Bytes as base64 (RFC 4648, with padding). */
void lp_html_base64(lp_html *h, const void *p, size_t n);
/* Numbers as text: a duration with 3 significant digits ("1.23 ms"), a share in percent
 * ("12.3%", "<0.1%", "0"), a JSON number (finite doubles; others become null). */
void lp_html_dur(lp_html *h, int64_t ns);
void lp_html_pct(lp_html *h, double share);
void lp_html_num(lp_html *h, double v);
/* LP_OK, or LP_ERR_IO (with err) if any write failed. */
lp_status lp_html_status(const lp_html *h, lp_error *err);

/* The same escapings into a caller's buffer (for tests and for callers that build
 * strings): writes at most cap bytes (NUL-terminated when cap > 0) and returns the
 * length the whole result needs, without the NUL. */
size_t lp_html_escape(const char *s, size_t n, char *out, size_t cap);
size_t lp_html_json_escape(const char *s, size_t n, char *out, size_t cap);

/* ---- what a report is made from -------------------------------------------------- */

/* The analysed inputs. Everything is borrowed and must outlive the report; any part may
 * be NULL (sections that need it do not apply). */
typedef struct lp_report_data {
    const lp_trace *trace;        /* an activity graph: overview, timeline, breakdown, summaries */
    const lp_spans *spans;        /* a finished span table (lp_spans_finish): spans */
    /* request logs (Mystery Machine): the section needs all four */
    const lp_reqlog *reqlog;      /* the logs, skew-corrected when skew_corrected */
    const lp_causal *model;       /* finished causal model (lp_causal_finish) */
    const lp_reqcat *cats;        /* categories assigned to the model's segments */
    const lp_reqstats *reqstats;  /* lp_reqstats_run over the logs */
    int skew_corrected;           /* clock skew was corrected (shown in the report) */
    const char *model_file;       /* the model's file, NULL if inferred from the logs */
    /* call-stack samples of the trace's run (CrystalPerf: resources section; may be NULL) */
    const lp_stacks *samples;
    const lp_cls_model *cpf_model;/* classifier for them (NULL: measured evidence only) */
    /* a Grade10 attribution (grade10 section; may be NULL) and its issues (may be NULL) */
    const lp_g10_attr *g10;
    const lp_g10_issues *g10_issues;
    const lp_g10_path *g10_path;  /* the resources of the trace's critical path (may be NULL) */
    /* the critical path to show instead of the whole-trace one (e.g. one thread's path in
       a kernel trace's execution graph, `cp --thread --html`); elements of `trace`, copied */
    const lp_cpath *cp;
    /* shown in the header */
    const char *title;            /* NULL: "longpole report: " and the first input's name */
    const char *const *inputs;    /* the input names as given */
    size_t ninputs;
    uint64_t input_errors;        /* errors reported while loading (records skipped) */
    uint64_t input_warnings;
    /* what the analysis counted or adjusted in the data beyond loading (e.g. a kernel
       graph's reordered events, inferred context switches), one sentence each, shown in
       the overview; may be NULL */
    const char *const *adjust;
    size_t nadjust;
} lp_report_data;

/* Options; lp_report_opts_init sets the defaults given here. */
typedef struct lp_report_opts {
    const int64_t *windows;       /* window sizes (ns) of the CP summaries, in the order
                                     shown; NULL/0: automatic: two sizes, a "nice" duration
                                     (1, 2 or 5 x 10^k ns) near span/20 and near span/100 */
    size_t nwindows;
    uint64_t seed;                /* random transient paths of the summaries (1) */
    unsigned threads;             /* analysis threads, 0 = one per online CPU (0) */
    uint32_t top;                 /* keys per stacked-bar chart, the rest is "other" (10) */
    uint32_t table_rows;          /* rows shown per table before the rest is folded into
                                     a <details> element (never dropped) (25) */
    /* the timeline (docs/report.md "Aggregation") */
    uint32_t bins;                /* bins per row of the coarsest pyramid level (2048) */
    uint64_t exact_acts;          /* activities embedded exactly (drawn one by one when
                                     zoomed in) when the trace has at most this many;
                                     above, only bins (stated in the view) (2,000,000) */
    uint64_t exact_msgs;          /* the same for messages (2,000,000) */
    uint64_t exact_cp;            /* the same for critical-path elements (2,000,000) */
    uint64_t max_bytes;           /* the bins' budget in bytes: deeper levels are added
                                     while the total stays below it (12 MB) */
    /* spans */
    const double *percentiles;    /* latency percentiles of the span tables (50, 95, 99, 100) */
    size_t npercentiles;
    int no_nonce;                 /* tests: a fixed nonce instead of a random one (0) */
    lp_progress_fn progress;      /* optional: analysis progress */
    void *progress_ctx;
} lp_report_opts;

void lp_report_opts_init(lp_report_opts *o);

typedef struct lp_report lp_report;

/* A report over `d` (copied; the data it points to is borrowed). Computes nothing yet.
 * LP_ERR_ARG if d has nothing to show. */
lp_status lp_report_new(lp_report **out, const lp_report_data *d, const lp_report_opts *o, lp_error *err);
void lp_report_free(lp_report *r);

/* Compute the named sections (NULL, 0: every section that applies); idempotent. An
 * unknown name is LP_ERR_ARG. */
lp_status lp_report_prepare(lp_report *r, const char *const *names, size_t n, lp_error *err);

/* The whole document: every section that applies, in registry order. */
lp_status lp_report_write(lp_report *r, FILE *f, lp_error *err);
/* A whole document with only the named sections (those that do not apply are skipped;
 * an unknown name is LP_ERR_ARG). */
lp_status lp_report_write_page(lp_report *r, const char *const *names, size_t n, FILE *f, lp_error *err);
/* The parts of a document, for pages composed by the caller: head (doctype, meta, CSP
 * with the report's nonce, title, CSS, <body>, header block), one section's HTML
 * (<section id="lp-s-NAME">...</section>; nothing if it does not apply), and the tail
 * (the script, </body></html>). */
lp_status lp_report_write_head(lp_report *r, FILE *f, lp_error *err);
lp_status lp_report_write_section(lp_report *r, const char *name, FILE *f, lp_error *err);
lp_status lp_report_write_tail(lp_report *r, FILE *f, lp_error *err);

/* Does the section apply to this report's data? 0 for unknown names. */
int lp_report_applies(const lp_report *r, const char *name);
/* The report's script nonce (base64, for a caller's own <script nonce=...> elements). */
const char *lp_report_nonce(const lp_report *r);

/* ---- sections (the registry) ------------------------------------------------------ */

typedef struct lp_report_section {
    const char *name;             /* id in URLs and --sections: "timeline", ... */
    const char *title;            /* heading */
    /* does it apply to this data? */
    int (*applies)(const lp_report_data *d);
    /* compute what the section shows into *state (owned by the section; freed by
     * release, which must accept whatever prepare left on failure) */
    lp_status (*prepare)(lp_report *r, void **state, lp_error *err);
    void (*release)(void *state);
    /* write <section id="lp-s-NAME" class="lp-sec">...</section>; read-only */
    lp_status (*write)(const lp_report *r, const void *state, lp_html *h, lp_error *err);
} lp_report_section;

/* The registry, in document order, NULL-terminated. */
const lp_report_section *const *lp_report_sections(void);
const lp_report_section *lp_report_section_find(const char *name);

/* For section code: the report's data and options. */
const lp_report_data *lp_report_data_of(const lp_report *r);
const lp_report_opts *lp_report_opts_of(const lp_report *r);

/* The analyses several sections share, computed once (not thread-safe: call from
 * prepare). The PAG is built only for its size and released before the path, which
 * comes from the trace's columns (lp_cpath_trace); the path and checks stay. The
 * checks are those of lp_check_run on the whole trace, evaluated as the snapshot of
 * [tmin, tmax] (lp_snapshot_check: the same definitions, linear time where
 * lp_check_run sorts). */
typedef struct lp_report_graph {
    lp_cpath cp;                  /* whole-trace critical path (cpath.h) */
    lp_snapcheck check;           /* SnailTrail App. A.2 Properties 1 and 2 (counts, first few) */
    uint64_t nv, nwedges, ncedges;/* size of the PAG */
} lp_report_graph;
lp_status lp_report_graph_get(lp_report *r, const lp_report_graph **g, lp_error *err);
/* The same once computed (NULL before): for write functions. */
const lp_report_graph *lp_report_graph_peek(const lp_report *r);

/* ---- the timeline's binning (report_bins.c; docs/report.md "Aggregation") ----------- */

/* One bin of one worker's row: bin i of n over [t0, t1) is
 * [t0 + floor(i (t1 - t0) / n), t0 + floor((i + 1)(t1 - t0) / n)), so the bins of a level
 * with 4n bins nest exactly in those of a level with n. */
typedef struct lp_tlbin {
    uint32_t dom;                 /* dominant type + 1: the non-`waiting` type with the most
                                     time in the bin (ties: the lowest id); `waiting` if the
                                     bin holds only waiting time; 0 if no activity of the
                                     worker covers any of the bin */
    uint8_t busy;                 /* non-waiting time / bin width, in 15ths, rounded; any
                                     busy time at all gives at least 1 */
    uint8_t cp;                   /* time on the critical path / bin width, likewise */
} lp_tlbin;

/* Scratch reused across rows (grow-only). */
typedef struct lp_tlscratch {
    int64_t *tt;                  /* [ntypes] time per type in the current bin */
    uint32_t *touched;            /* types touched in the current bin */
    size_t captypes;
} lp_tlscratch;
void lp_tlscratch_release(lp_tlscratch *s);

/* Bin worker w's activities into out[0..n). cps/cpe: the worker's critical-path
 * intervals (sorted, disjoint), ncp of them. t1 > t0, 1 <= n <= t1 - t0. O(activities of
 * w in range + n). */
lp_status lp_tlbin_row(const lp_trace *t, uint32_t w, const int64_t *cps, const int64_t *cpe, size_t ncp,
                       int64_t t0, int64_t t1, uint32_t n, lp_tlbin *out, lp_tlscratch *s, lp_error *err);
/* Bin edge i of n over [t0, t1) (exact, no overflow). */
int64_t lp_tlbin_edge(int64_t t0, int64_t t1, uint64_t n, uint64_t i);

/* ---- loading inputs for a report (report_load.c) ----------------------------------- */

typedef enum lp_report_kind {
    LP_RK_TRACE = 0,              /* an activity graph: native formats or an importer's */
    LP_RK_SPANS,                  /* Jaeger, Zipkin or OTLP spans (also loaded as a graph) */
    LP_RK_REQLOG                  /* a request log: CSV/TSV/JSON lines with event and task */
} lp_report_kind;

/* What an input is, from its first bytes (decompressed): a span format's detector, then
 * a request-log header (CSV/TSV whose first line names `event` and `task` columns, or a
 * JSON line with "event" and "task" keys), else a trace. Directories are traces (their
 * files are expanded by the loaders). */
lp_status lp_report_detect(const char *path, lp_report_kind *kind, lp_error *err);

typedef struct lp_report_load_opts {
    const char *format;           /* trace format for every graph input (NULL = detect) */
    int requests;                 /* every input is a request log (no detection) */
    const lp_reqlog_opts *reqlog; /* request-log options (NULL = defaults) */
    const char *attrs;            /* request attributes table (lp_reqlog_load_attrs), or NULL */
    int no_skew;                  /* do not correct clock skew */
    const char *reference;        /* skew reference host, or NULL */
    const char *model;            /* causal model file (lp_causal_load); NULL = infer from the logs */
    const char *categories;       /* category rules (lp_reqcat_load), or NULL for the default */
    double outliers;              /* outlier share (0 = 0.05) */
    uint32_t buckets;             /* what-if buckets (0 = 20) */
    const char *const *stratify;  /* strata (reqstats.h); NULL: "latency:5" and every request
                                     attribute of the logs */
    uint32_t nstratify;
    unsigned threads;             /* 0 = online CPUs */
    lp_progress_fn progress;      /* loading progress (bytes) */
    void *progress_ctx;
} lp_report_load_opts;

/* Everything loaded and analysed; `data` points into it, ready for lp_report_new. */
typedef struct lp_report_inputs {
    lp_report_data data;
    lp_trace *trace;              /* graph of the trace and span inputs, or NULL */
    lp_spans spans;               /* span inputs (has_spans) */
    int has_spans;
    lp_reqlog *reqlog;            /* request-log inputs, or NULL */
    lp_skew skew;                 /* its clock-skew estimate (when corrected) */
    lp_causal model;
    lp_reqcat cats;
    lp_reqstats stats;
    uint32_t *segmap;             /* log segment -> model segment */
    int has_model, has_stats, has_skew;
    char **names;                 /* copies of the input names */
    size_t nnames;
    lp_diags *diags;              /* the sink given to lp_report_load (borrowed) */
    lp_diags quiet;               /* a sink for the second reading of span files */
} lp_report_inputs;

/* Detect every input's kind, load the graph inputs into one trace (lp_trace_load; span
 * files also into a span table), the request logs into one log (lp_reqlog_load, skew
 * correction, model inferred or loaded, categories, lp_reqstats_run). Data problems go
 * to diags (the loaders' rules); only resource failures, unreadable files and bad
 * options fail. On failure *in is released. */
lp_status lp_report_load(lp_report_inputs *in, const char *const *paths, size_t npaths, const lp_report_load_opts *o,
                         lp_diags *diags, lp_error *err);
void lp_report_inputs_release(lp_report_inputs *in);

#endif
