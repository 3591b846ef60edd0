/* sqlite_export.c: the database side of the SQLite export (sqlite_export.h): schema,
 * runs and their replacement, the transaction and the row writer every table goes
 * through. The tables of each input kind are written by sqlite_export_trace.c,
 * sqlite_export_req.c and sqlite_export_spans.c; the schema is docs/formats/sqlite.md
 * (keep the two in step: tests/scripts/test_sqlite.sh checks that every table of the
 * schema is documented).
 *
 * Invariants: while an lp_sqlite is open, exactly one transaction is open on it (BEGIN
 * IMMEDIATE in lp_sqlite_open, COMMIT in lp_sqlite_commit, ROLLBACK in lp_sqlite_close
 * otherwise); every data table's primary key starts with `run`, and every table that
 * holds rows of a run is listed in sq_tables[] (so replacing a run deletes all of it).
 */
#define _GNU_SOURCE
#include "export/sqlite_export_int.h"
#include "longpole/base/version.h"
#include "longpole/base/alloc.h"
#include "longpole/base/jsonw.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- schema ---------------------------------------------------------------------------- */

/* Every table that holds rows of a run (deleted when the run is replaced). */
static const char *const sq_tables[] = {
    "types", "workers", "operators", "activities", "messages", "attrs", "cp_info", "cp", "breakdown",
    "breakdown_totals", "check_info", "check_p1", "check_p2", "windows", "window_summary", "window_rows",
    "activity_cp", "message_cp", "hosts", "skew_pairs", "tasks", "event_names", "requests", "request_attrs",
    "log_events", "segments", "slack_histogram", "relationships", "pipelines", "categories",
    "category_quantiles", "whatif", "request_quantiles", "req_info", "request_segments", "span_info",
    "span_traces", "spans", "span_cp", "span_percentiles", "span_cp_ops", "span_cp_paths", "g10_info",
    "g10_types", "g10_resources", "g10_phases", "g10_usage", "g10_timelines", "g10_segments", "g10_type_stats",
    "g10_issues", "cpf_info", "cpf_path", "cpf_ops", "cpf_activity", NULL};

static const char sq_schema[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);\n"
    "CREATE TABLE IF NOT EXISTS runs(run INTEGER PRIMARY KEY, kind TEXT NOT NULL, inputs TEXT NOT NULL UNIQUE,"
    " created TEXT NOT NULL, longpole TEXT NOT NULL, options TEXT, input_errors INTEGER, input_warnings INTEGER,"
    " seconds REAL, rows INTEGER);\n"
    /* activity traces */
    "CREATE TABLE IF NOT EXISTS types(run INTEGER, id INTEGER, name TEXT, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS workers(run INTEGER, id INTEGER, name TEXT, attrs INTEGER, activities INTEGER,"
    " first_activity INTEGER, start_ns INTEGER, end_ns INTEGER, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS operators(run INTEGER, id INTEGER, name TEXT, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS activities(run INTEGER, id INTEGER, worker INTEGER, type INTEGER, operator INTEGER,"
    " start_ns INTEGER, end_ns INTEGER, attrs INTEGER, gap INTEGER, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS messages(run INTEGER, id INTEGER, src INTEGER, dst INTEGER, send_ns INTEGER,"
    " recv_ns INTEGER, msgid, attrs INTEGER, skew INTEGER, halves INTEGER, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS attrs(run INTEGER, list INTEGER, pos INTEGER, key TEXT, value TEXT,"
    " PRIMARY KEY(run, list, pos)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS cp_info(run INTEGER PRIMARY KEY, window_from INTEGER, window_to INTEGER,"
    " start_ns INTEGER, end_ns INTEGER, total_ns INTEGER, elements INTEGER, cycles_broken INTEGER,"
    " skewed_messages_ignored INTEGER) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS cp(run INTEGER, step INTEGER, kind TEXT, worker INTEGER, activity INTEGER,"
    " message INTEGER, start_ns INTEGER, end_ns INTEGER, partial INTEGER, PRIMARY KEY(run, step)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS breakdown(run INTEGER, grp TEXT, rank INTEGER, key TEXT, path_ns INTEGER,"
    " path_elements INTEGER, profile_ns INTEGER, profile_count INTEGER, PRIMARY KEY(run, grp, rank)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS breakdown_totals(run INTEGER, grp TEXT, path_total_ns INTEGER,"
    " profile_total_ns INTEGER, waiting_ns INTEGER, PRIMARY KEY(run, grp)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS check_info(run INTEGER PRIMARY KEY, property1 INTEGER, property2 INTEGER,"
    " property2_ns INTEGER) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS check_p1(run INTEGER, n INTEGER, worker INTEGER, time_ns INTEGER,"
    " PRIMARY KEY(run, n)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS check_p2(run INTEGER, n INTEGER, from_ns INTEGER, to_ns INTEGER,"
    " waiting_workers INTEGER, PRIMARY KEY(run, n)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS windows(run INTEGER, idx INTEGER, ts INTEGER, te INTEGER, start_ns INTEGER,"
    " end_ns INTEGER, events INTEGER, activities INTEGER, messages INTEGER, workers INTEGER,"
    " active_workers INTEGER, vertices INTEGER, worker_edges INTEGER, message_edges INTEGER, paths_log10 REAL,"
    " paths_approx TEXT, paths_exact TEXT, start_vertices INTEGER, end_vertices INTEGER, has_paths INTEGER,"
    " cp_sum REAL, cp_sum_ok INTEGER, err_bound REAL, cycles_broken INTEGER, property1 INTEGER,"
    " property2 INTEGER, property2_ns INTEGER, path_edges INTEGER, PRIMARY KEY(run, idx)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS window_summary(run INTEGER, idx INTEGER, kind TEXT, cp_total REAL,"
    " profile_total_ns INTEGER, waiting_ns INTEGER, path_total_ns INTEGER, nrows INTEGER,"
    " PRIMARY KEY(run, idx, kind)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS window_rows(run INTEGER, idx INTEGER, kind TEXT, rank INTEGER, key TEXT,"
    " src TEXT, dst TEXT, cp REAL, parallelism INTEGER, cp_per_worker REAL, profile_ns INTEGER,"
    " profile_share REAL, path_ns INTEGER, path_share REAL, PRIMARY KEY(run, idx, kind, rank)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS activity_cp(run INTEGER, idx INTEGER, activity INTEGER, cp REAL,"
    " PRIMARY KEY(run, idx, activity)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS message_cp(run INTEGER, idx INTEGER, message INTEGER, cp REAL,"
    " PRIMARY KEY(run, idx, message)) WITHOUT ROWID;\n"
    /* request logs */
    "CREATE TABLE IF NOT EXISTS hosts(run INTEGER, id INTEGER, name TEXT, offset_ns INTEGER, bound_ns INTEGER,"
    " parent INTEGER, reference INTEGER, rpcs INTEGER, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS skew_pairs(run INTEGER, a INTEGER, b INTEGER, theta_ns INTEGER, rtt_ns INTEGER,"
    " rpcs INTEGER, PRIMARY KEY(run, a, b)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS tasks(run INTEGER, id INTEGER, name TEXT, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS event_names(run INTEGER, id INTEGER, name TEXT, PRIMARY KEY(run, id))"
    " WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS requests(run INTEGER, id INTEGER, name TEXT, excluded INTEGER, start_ns INTEGER,"
    " latency_ns INTEGER, cp_ns INTEGER, segments INTEGER, edges INTEGER, violations INTEGER,"
    " unknown_segments INTEGER, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS request_attrs(run INTEGER, request INTEGER, name TEXT, value TEXT,"
    " PRIMARY KEY(run, request, name)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS log_events(run INTEGER, request INTEGER, pos INTEGER, host INTEGER, task INTEGER,"
    " event INTEGER, time_ns INTEGER, segment INTEGER, PRIMARY KEY(run, request, pos)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS segments(run INTEGER, id INTEGER, task TEXT, start_event TEXT, end_event TEXT,"
    " label TEXT, category TEXT, cross_host INTEGER, dropped INTEGER, model_requests INTEGER, requests INTEGER,"
    " on_cp INTEGER, cp_sum_ns INTEGER, summed_sum_ns INTEGER, slack_sum_ns INTEGER, cp_mean_ns REAL,"
    " summed_mean_ns REAL, slack_mean_ns REAL, overrepresentation REAL, requests_outliers INTEGER,"
    " on_cp_outliers INTEGER, cp_outliers_ns INTEGER, summed_outliers_ns INTEGER, PRIMARY KEY(run, id))"
    " WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS slack_histogram(run INTEGER, segment INTEGER, bin INTEGER, min_ns INTEGER,"
    " max_ns INTEGER, requests INTEGER, PRIMARY KEY(run, segment, bin)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS relationships(run INTEGER, a INTEGER, b INTEGER, rel TEXT, direct INTEGER,"
    " PRIMARY KEY(run, a, b)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS pipelines(run INTEGER, pipe INTEGER, pos INTEGER, producer TEXT, consumer TEXT,"
    " a INTEGER, b INTEGER, rejected INTEGER, PRIMARY KEY(run, pipe, pos)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS categories(run INTEGER, id INTEGER, name TEXT, requests_present INTEGER,"
    " cp_sum_ns INTEGER, summed_sum_ns INTEGER, cp_mean_ns REAL, summed_mean_ns REAL, cp_share REAL,"
    " summed_share REAL, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS category_quantiles(run INTEGER, category INTEGER, q INTEGER, cp_share REAL,"
    " slack_ns REAL, PRIMARY KEY(run, category, q)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS whatif(run INTEGER, category INTEGER, bucket INTEGER, slack_min_ns INTEGER,"
    " slack_max_ns INTEGER, requests INTEGER, correlation REAL, time_mean_ns REAL, latency_mean_ns REAL,"
    " PRIMARY KEY(run, category, bucket)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS request_quantiles(run INTEGER, q INTEGER, latency_ns REAL, cp_ns REAL,"
    " PRIMARY KEY(run, q)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS req_info(run INTEGER PRIMARY KEY, requests INTEGER, analysed INTEGER,"
    " excluded INTEGER, lines INTEGER, bad_lines INTEGER, skew_corrected INTEGER, model_file TEXT,"
    " model_segments INTEGER, model_requests INTEGER, violations INTEGER, unknown_segments INTEGER,"
    " latency_mean_ns REAL, cp_mean_ns REAL, outlier_share REAL, outliers INTEGER, outlier_latency_ns INTEGER)"
    " WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS request_segments(run INTEGER, request INTEGER, pos INTEGER, segment INTEGER,"
    " task INTEGER, start_ns INTEGER, end_ns INTEGER, slack_ns INTEGER, cpstart_ns INTEGER, cpend_ns INTEGER,"
    " on_cp INTEGER, path_pos INTEGER, PRIMARY KEY(run, request, pos)) WITHOUT ROWID;\n"
    /* spans */
    "CREATE TABLE IF NOT EXISTS cpf_info(run INTEGER PRIMARY KEY, bottleneck TEXT, coverage REAL, partial INTEGER,"
    " path_ns INTEGER, samples INTEGER, samples_joined INTEGER, samples_outside INTEGER, samples_no_worker INTEGER,"
    " by_state INTEGER, by_kernel INTEGER, by_classifier INTEGER, undecided INTEGER, metric_activities INTEGER);\n"
    "CREATE TABLE IF NOT EXISTS cpf_path(run INTEGER, resource TEXT, path_ns REAL, all_ns REAL,"
    " PRIMARY KEY(run, resource)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS cpf_ops(run INTEGER, rank INTEGER, operation TEXT, resource TEXT, path_ns REAL,"
    " all_ns REAL, PRIMARY KEY(run, rank, resource)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS cpf_activity(run INTEGER, activity INTEGER, evidence TEXT, samples INTEGER,"
    " cpu REAL, disk REAL, net REAL, wait REAL, unknown REAL, coverage REAL, PRIMARY KEY(run, activity)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS span_info(run INTEGER PRIMARY KEY, files INTEGER, spans INTEGER, spans_kept INTEGER,"
    " traces INTEGER, merged_parts INTEGER, shared_rpc_spans INTEGER, duplicates_dropped INTEGER, orphans INTEGER,"
    " cycles_broken INTEGER, traces_analysed INTEGER) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS span_traces(run INTEGER, id INTEGER, trace_id TEXT, root INTEGER, start_ns INTEGER,"
    " latency_ns INTEGER, spans INTEGER, sections INTEGER, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS spans(run INTEGER, id INTEGER, trace INTEGER, span_id TEXT, parent INTEGER,"
    " service TEXT, operation TEXT, kind TEXT, start_ns INTEGER, dur_ns INTEGER, flags INTEGER, dropped INTEGER,"
    " file TEXT, line INTEGER, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS span_cp(run INTEGER, trace INTEGER, step INTEGER, span INTEGER, start_ns INTEGER,"
    " end_ns INTEGER, PRIMARY KEY(run, trace, step)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS span_percentiles(run INTEGER, percentile REAL, traces INTEGER, latency_ns INTEGER,"
    " latency_sum_ns INTEGER, PRIMARY KEY(run, percentile)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS span_cp_ops(run INTEGER, percentile REAL, rank INTEGER, service TEXT,"
    " operation TEXT, total_ns INTEGER, mean_ns REAL, share REAL, max_ns INTEGER, traces INTEGER,"
    " PRIMARY KEY(run, percentile, rank)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS span_cp_paths(run INTEGER, percentile REAL, rank INTEGER, path TEXT, depth INTEGER,"
    " total_ns INTEGER, mean_ns REAL, share REAL, max_ns INTEGER, traces INTEGER,"
    " PRIMARY KEY(run, percentile, rank)) WITHOUT ROWID;\n"
    /* Grade10 (sqlite_export_g10.c) */
    "CREATE TABLE IF NOT EXISTS g10_info(run INTEGER PRIMARY KEY, model TEXT, mode TEXT, slice_ns INTEGER,"
    " bottleneck REAL, phases INTEGER, leaves INTEGER, start_ns INTEGER, end_ns INTEGER, replayed_ns INTEGER,"
    " issue_threshold REAL, records_used INTEGER, records_dropped INTEGER, unmatched INTEGER, widened INTEGER,"
    " no_host INTEGER, unmonitored INTEGER, unknown_blocking INTEGER);\n"
    "CREATE TABLE IF NOT EXISTS g10_types(run INTEGER, id INTEGER, path TEXT, parent INTEGER, repeat TEXT,"
    " key TEXT, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS g10_resources(run INTEGER, id INTEGER, name TEXT, kind TEXT, metric TEXT,"
    " sample TEXT, scale REAL, capacity REAL, unit TEXT, PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS g10_phases(run INTEGER, id INTEGER, type INTEGER, parent INTEGER, key TEXT,"
    " host TEXT, start_ns INTEGER, end_ns INTEGER, derived INTEGER, leaf INTEGER, active_ns INTEGER,"
    " PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS g10_usage(run INTEGER, resource INTEGER, phase INTEGER, timeline INTEGER,"
    " used REAL, bottleneck_ns INTEGER, PRIMARY KEY(run, resource, phase)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS g10_timelines(run INTEGER, id INTEGER, resource INTEGER, host TEXT, capacity REAL,"
    " segments INTEGER, windows INTEGER, consumed REAL, attributed REAL, background REAL, clipped REAL,"
    " merged_windows INTEGER, dropped_windows INTEGER, gaps INTEGER, phases INTEGER,"
    " PRIMARY KEY(run, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS g10_segments(run INTEGER, timeline INTEGER, idx INTEGER, start_ns INTEGER,"
    " end_ns INTEGER, exact_demand REAL, variable_demand REAL, usage REAL, exact_usage REAL, bottleneck INTEGER,"
    " PRIMARY KEY(run, timeline, idx)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS g10_type_stats(run INTEGER, type INTEGER, resource INTEGER, rule TEXT, value REAL,"
    " percent INTEGER, phases INTEGER, active_ns INTEGER, used REAL, bottleneck_ns INTEGER, global_ns INTEGER,"
    " local_ns INTEGER, PRIMARY KEY(run, type, resource)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS g10_issues(run INTEGER, rank INTEGER, kind TEXT, resource INTEGER, type INTEGER,"
    " phases INTEGER, saved_ns INTEGER, makespan_ns INTEGER, gain_ns INTEGER, gain REAL, reported INTEGER,"
    " PRIMARY KEY(run, rank)) WITHOUT ROWID;\n"
    "CREATE VIEW IF NOT EXISTS v_g10_usage AS SELECT u.run, u.phase, t.path AS type, p.key, p.host,"
    " r.name AS resource, p.start_ns, p.end_ns, p.active_ns, u.used, u.bottleneck_ns"
    " FROM g10_usage u JOIN g10_phases p ON p.run = u.run AND p.id = u.phase"
    " JOIN g10_types t ON t.run = u.run AND t.id = p.type"
    " JOIN g10_resources r ON r.run = u.run AND r.id = u.resource;\n"
    "CREATE VIEW IF NOT EXISTS v_g10_issues AS SELECT i.run, i.rank, i.kind, r.name AS resource, t.path AS type,"
    " i.phases, i.saved_ns, i.makespan_ns, i.gain_ns, i.gain, i.reported FROM g10_issues i"
    " LEFT JOIN g10_resources r ON r.run = i.run AND r.id = i.resource"
    " LEFT JOIN g10_types t ON t.run = i.run AND t.id = i.type;\n"
    /* views: names resolved */
    "CREATE VIEW IF NOT EXISTS v_activities AS SELECT a.run, a.id, w.name AS worker, t.name AS type,"
    " o.name AS operator, a.start_ns, a.end_ns, a.end_ns - a.start_ns AS duration_ns, a.attrs, a.gap"
    " FROM activities a JOIN workers w ON w.run = a.run AND w.id = a.worker"
    " JOIN types t ON t.run = a.run AND t.id = a.type"
    " LEFT JOIN operators o ON o.run = a.run AND o.id = a.operator;\n"
    "CREATE VIEW IF NOT EXISTS v_messages AS SELECT m.run, m.id, s.name AS src, d.name AS dst, m.send_ns,"
    " m.recv_ns, m.recv_ns - m.send_ns AS duration_ns, m.msgid, m.attrs, m.skew"
    " FROM messages m JOIN workers s ON s.run = m.run AND s.id = m.src"
    " JOIN workers d ON d.run = m.run AND d.id = m.dst;\n"
    "CREATE VIEW IF NOT EXISTS v_cp AS SELECT c.run, c.step, c.kind, w.name AS worker,"
    " CASE c.kind WHEN 'message' THEN ws.name END AS src, CASE c.kind WHEN 'message' THEN w.name END AS dst,"
    " CASE c.kind WHEN 'activity' THEN t.name ELSE 'message' END AS type, o.name AS operator,"
    " c.start_ns, c.end_ns, c.end_ns - c.start_ns AS duration_ns, c.partial, a.gap, c.activity, c.message"
    " FROM cp c JOIN workers w ON w.run = c.run AND w.id = c.worker"
    " LEFT JOIN activities a ON a.run = c.run AND a.id = c.activity"
    " LEFT JOIN types t ON t.run = c.run AND t.id = a.type"
    " LEFT JOIN operators o ON o.run = c.run AND o.id = a.operator"
    " LEFT JOIN messages m ON m.run = c.run AND m.id = c.message"
    " LEFT JOIN workers ws ON ws.run = c.run AND ws.id = m.src;\n"
    "CREATE VIEW IF NOT EXISTS v_request_segments AS SELECT r.run, q.name AS request, r.pos, s.label AS segment,"
    " s.category, r.start_ns, r.end_ns, r.end_ns - r.start_ns AS duration_ns, r.slack_ns, r.on_cp, r.path_pos"
    " FROM request_segments r JOIN requests q ON q.run = r.run AND q.id = r.request"
    " LEFT JOIN segments s ON s.run = r.run AND s.id = r.segment;\n";

/* ---- the database ------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

lp_status sq_fail(lp_sqlite *db, lp_error *err, const char *what)
{
    int rc = sqlite3_errcode(db->db);
    lp_status st = rc == SQLITE_NOMEM ? LP_ERR_NOMEM
                   : (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT) ? LP_ERR_FORMAT
                   : rc == SQLITE_FULL || rc == SQLITE_TOOBIG ? LP_ERR_LIMIT
                                                              : LP_ERR_IO;
    return lp_error_set(err, st, "%s: %s", what, sqlite3_errmsg(db->db));
}

static lp_status exec(lp_sqlite *db, const char *sql, lp_error *err)
{
    if (sqlite3_exec(db->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return sq_fail(db, err, "sqlite");
    return LP_OK;
}

void lp_sqlite_opts_init(lp_sqlite_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->outlier_share = 0.05;
    o->buckets = 20;
}

enum { SQ_V_NULL = 0, SQ_V_INT, SQ_V_DBL, SQ_V_TXT, SQ_V_COPY };

lp_status sq_prep(lp_sqlite *db, sq_ins *x, const char *sql, lp_error *err)
{
    memset(x, 0, sizeof *x);
    x->db = db;
    const char *values = strstr(sql, "VALUES(");
    if (!values)
        return lp_error_set(err, LP_ERR_ARG, "internal: not an INSERT ... VALUES(...)");
    for (const char *p = values; *p; p++)
        x->ncols += *p == '?';
    if (sqlite3_prepare_v3(db->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &x->s1, NULL) != SQLITE_OK)
        return sq_fail(db, err, "preparing an insert");
    /* the batch: the same INSERT with SQ_BATCH groups of parameters */
    size_t head = (size_t)(values - sql) + 6, group = strlen(values + 6);
    char *bsql = lp_malloc(head + SQ_BATCH * (group + 1) + 1);
    size_t n = (size_t)SQ_BATCH * (size_t)x->ncols;
    x->vt = lp_malloc(n);
    x->vi = lp_malloc(n * sizeof *x->vi);
    x->vd = lp_malloc(n * sizeof *x->vd);
    x->vs = lp_malloc(n * sizeof *x->vs);
    if (!bsql || !x->vt || !x->vi || !x->vd || !x->vs) {
        lp_free(bsql);
        sq_free(x);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    memcpy(bsql, sql, head);
    size_t len = head;
    for (int i = 0; i < SQ_BATCH; i++) {
        if (i)
            bsql[len++] = ',';
        memcpy(bsql + len, values + 6, group);
        len += group;
    }
    bsql[len] = '\0';
    int rc = sqlite3_prepare_v3(db->db, bsql, -1, SQLITE_PREPARE_PERSISTENT, &x->sb, NULL);
    lp_free(bsql);
    if (rc != SQLITE_OK) {
        lp_status st = sq_fail(db, err, "preparing an insert");
        sq_free(x);
        return st;
    }
    return LP_OK;
}

void sq_free(sq_ins *x)
{
    if (x->s1)
        sqlite3_finalize(x->s1);
    if (x->sb)
        sqlite3_finalize(x->sb);
    lp_free(x->vt);
    lp_free(x->vi);
    lp_free(x->vd);
    lp_free(x->vs);
    lp_free(x->arena);
    memset(x, 0, sizeof *x);
}

/* Bind rows [r0, r0 + n) of the buffer to s (parameters from 1) and run it. */
static lp_status sq_exec(sq_ins *x, sqlite3_stmt *s, int r0, int n, lp_error *err)
{
    int nc = x->ncols;
    for (int i = 0; i < n * nc; i++) {
        int v = r0 * nc + i;
        switch (x->vt[v]) {
        case SQ_V_INT: sqlite3_bind_int64(s, i + 1, x->vi[v]); break;
        case SQ_V_DBL: sqlite3_bind_double(s, i + 1, x->vd[v]); break;
        case SQ_V_TXT: sqlite3_bind_text(s, i + 1, x->vs[v], -1, SQLITE_STATIC); break;
        case SQ_V_COPY: sqlite3_bind_text(s, i + 1, x->arena + x->vi[v], -1, SQLITE_STATIC); break;
        default: sqlite3_bind_null(s, i + 1); break;
        }
    }
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return sq_fail(x->db, err, "writing rows");
    x->db->rows += (uint64_t)n;
    return LP_OK;
}

lp_status sq_fin(sq_ins *x, lp_error *err)
{
    lp_status st = x->st;
    for (int r = 0; r < x->nrows && !st && x->s1; r++)
        st = sq_exec(x, x->s1, r, 1, err);
    sq_free(x);
    return st;
}

lp_status sq_end(sq_ins *x, lp_status st, lp_error *err)
{
    if (st) {
        sq_free(x);
        return st;
    }
    return sq_fin(x, err);
}

void sq_row(sq_ins *x)
{
    x->k = 0;
    sq_i64(x, x->db->run);
}

static inline int sq_slot(sq_ins *x)
{
    int v = x->nrows * x->ncols + x->k;
    x->k++;
    return x->k <= x->ncols ? v : -1; /* a row with too many values: a bug, ignored */
}

void sq_i64(sq_ins *x, int64_t v)
{
    int s = sq_slot(x);
    if (s >= 0)
        x->vt[s] = SQ_V_INT, x->vi[s] = v;
}
void sq_u64(sq_ins *x, uint64_t v)
{
    if (v > (uint64_t)INT64_MAX)
        sq_dbl(x, (double)v);
    else
        sq_i64(x, (int64_t)v);
}
void sq_null(sq_ins *x)
{
    int s = sq_slot(x);
    if (s >= 0)
        x->vt[s] = SQ_V_NULL;
}
void sq_dbl(sq_ins *x, double v)
{
    int s = sq_slot(x);
    if (s >= 0) {
        x->vt[s] = isfinite(v) ? SQ_V_DBL : SQ_V_NULL;
        x->vd[s] = v;
    }
}
void sq_txt(sq_ins *x, const char *str)
{
    int s = sq_slot(x);
    if (s >= 0) {
        x->vt[s] = str ? SQ_V_TXT : SQ_V_NULL;
        x->vs[s] = str;
    }
}
void sq_txt_copy(sq_ins *x, const char *str)
{
    int s = sq_slot(x);
    if (s < 0)
        return;
    x->vt[s] = SQ_V_NULL;
    if (!str)
        return;
    size_t n = strlen(str) + 1;
    if (x->arena_used + n > x->arena_cap) {
        size_t cap = x->arena_cap ? x->arena_cap : 4096;
        while (cap < x->arena_used + n)
            cap *= 2;
        char *a = lp_realloc(x->arena, cap);
        if (!a) {
            if (!x->st)
                x->st = LP_ERR_NOMEM;
            return;
        }
        x->arena = a;
        x->arena_cap = cap;
    }
    memcpy(x->arena + x->arena_used, str, n);
    x->vt[s] = SQ_V_COPY;
    x->vi[s] = (int64_t)x->arena_used;
    x->arena_used += n;
}
void sq_opt32(sq_ins *x, uint32_t v)
{
    if (v == UINT32_MAX)
        sq_null(x);
    else
        sq_i64(x, v);
}

lp_status sq_step(sq_ins *x, lp_error *err)
{
    if (x->st) {
        if (x->st == LP_ERR_NOMEM)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        return x->st;
    }
    for (; x->k < x->ncols; ) /* missing values: NULL */
        sq_null(x);
    if (++x->nrows < SQ_BATCH)
        return LP_OK;
    lp_status st = sq_exec(x, x->sb, 0, SQ_BATCH, err);
    x->nrows = 0;
    x->arena_used = 0;
    if (st)
        x->st = st;
    return st;
}

int sq_progress(lp_sqlite *db, const char *what, uint64_t done, uint64_t total)
{
    if (!db->progress)
        return 0;
    return db->progress(db->progress_ctx, what, done, total);
}

/* The inputs as a JSON array of canonical paths: the identity of the input set. */
static char *inputs_key(const char *const *inputs, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    lp_jsonw j;
    lp_jsonw_init(&j, f, 0);
    lp_jsonw_arr(&j);
    for (size_t i = 0; i < n; i++) {
        char *rp = strcmp(inputs[i], "-") == 0 ? NULL : realpath(inputs[i], NULL);
        lp_jsonw_str(&j, rp ? rp : inputs[i]);
        free(rp);
    }
    lp_jsonw_arr_end(&j);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Schema check: a longpole database of our version, or an empty one (then created). */
static lp_status check_schema(lp_sqlite *db, lp_error *err)
{
    sqlite3_stmt *s = NULL;
    int64_t ntables = 0, has_meta = 0;
    if (sqlite3_prepare_v2(db->db,
                           "SELECT count(*), sum(name = 'meta') FROM sqlite_schema WHERE type = 'table'", -1, &s,
                           NULL) != SQLITE_OK)
        return sq_fail(db, err, "reading the schema");
    if (sqlite3_step(s) == SQLITE_ROW) {
        ntables = sqlite3_column_int64(s, 0);
        has_meta = sqlite3_column_int64(s, 1);
    } else {
        sqlite3_finalize(s);
        return sq_fail(db, err, "reading the schema");
    }
    sqlite3_finalize(s);
    if (ntables && !has_meta)
        return lp_error_set(err, LP_ERR_FORMAT,
                            "the database holds other tables (not a longpole export): use a new file");
    if (!has_meta)
        return LP_OK;
    if (sqlite3_prepare_v2(db->db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &s, NULL) !=
        SQLITE_OK)
        return sq_fail(db, err, "reading the schema version");
    int64_t v = -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    if (v != LP_SQLITE_SCHEMA_VERSION)
        return lp_error_set(err, LP_ERR_FORMAT,
                            "the database has longpole schema version %lld, this longpole writes version %d: "
                            "use a new file",
                            (long long)v, LP_SQLITE_SCHEMA_VERSION);
    return LP_OK;
}

/* Remove the earlier run of these inputs, if any. */
static lp_status drop_run(lp_sqlite *db, const char *key, lp_error *err)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db->db, "SELECT run FROM runs WHERE inputs = ?", -1, &s, NULL) != SQLITE_OK)
        return sq_fail(db, err, "finding the earlier run");
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    int64_t old = -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        old = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    if (old < 0)
        return LP_OK;
    db->replaced = 1;
    /* the only run: DELETE without WHERE frees whole tables at once (SQLite's truncate
     * optimisation), much faster than deleting row by row */
    int64_t others = 0;
    if (sqlite3_prepare_v2(db->db, "SELECT count(*) FROM runs WHERE run != ?", -1, &s, NULL) != SQLITE_OK)
        return sq_fail(db, err, "counting runs");
    sqlite3_bind_int64(s, 1, old);
    if (sqlite3_step(s) == SQLITE_ROW)
        others = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    char sql[128];
    for (size_t i = 0; sq_tables[i]; i++) {
        if (others)
            snprintf(sql, sizeof sql, "DELETE FROM %s WHERE run = %lld", sq_tables[i], (long long)old);
        else
            snprintf(sql, sizeof sql, "DELETE FROM %s", sq_tables[i]);
        lp_status st = exec(db, sql, err);
        if (st)
            return lp_error_push(err, "removing the earlier run");
    }
    snprintf(sql, sizeof sql, "DELETE FROM runs WHERE run = %lld", (long long)old);
    return exec(db, sql, err);
}

lp_status lp_sqlite_open(lp_sqlite **out, const char *path, const char *const *inputs, size_t ninputs,
                         const char *kind, const char *options, lp_error *err)
{
    *out = NULL;
    lp_sqlite *db = lp_calloc(1, sizeof *db);
    if (!db)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    db->t0 = now_s();
    int rc = sqlite3_open_v2(path, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        lp_status st = db->db ? sq_fail(db, err, "opening the database")
                              : lp_error_set(err, LP_ERR_NOMEM, "out of memory opening the database");
        lp_error_push(err, "%s", path);
        lp_sqlite_close(db);
        return st;
    }
    sqlite3_extended_result_codes(db->db, 0);
    lp_status st = LP_OK;
    char *key = NULL;
    /* a 64 MiB page cache, no fsync, one writer; 64 KiB pages for a new file */
    if ((st = exec(db,
                   "PRAGMA page_size = 65536; PRAGMA cache_size = -65536; PRAGMA synchronous = OFF;"
                   " PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY;",
                   err)))
        goto fail;
    if ((st = exec(db, "BEGIN IMMEDIATE", err)))
        goto fail;
    db->in_tx = 1;
    if ((st = check_schema(db, err)))
        goto fail;
    if ((st = exec(db, sq_schema, err)))
        goto fail;
    char ver[96];
    snprintf(ver, sizeof ver,
             "INSERT OR REPLACE INTO meta VALUES('schema_version', '%d'), ('producer', 'longpole %s')",
             LP_SQLITE_SCHEMA_VERSION, LONGPOLE_VERSION);
    if ((st = exec(db, ver, err)))
        goto fail;
    key = inputs_key(inputs, ninputs);
    if (!key) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((st = drop_run(db, key, err)))
        goto fail;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db->db,
                           "INSERT INTO runs(kind, inputs, created, longpole, options) VALUES(?, ?, "
                           "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?, ?)",
                           -1, &s, NULL) != SQLITE_OK) {
        st = sq_fail(db, err, "registering the run");
        goto fail;
    }
    sqlite3_bind_text(s, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, LONGPOLE_VERSION, -1, SQLITE_STATIC);
    if (options)
        sqlite3_bind_text(s, 4, options, -1, SQLITE_STATIC);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        st = sq_fail(db, err, "registering the run");
        goto fail;
    }
    db->run = sqlite3_last_insert_rowid(db->db);
    free(key);
    *out = db;
    return LP_OK;
fail:
    free(key);
    lp_error_push(err, "%s", path);
    lp_sqlite_close(db);
    return st;
}

lp_status lp_sqlite_set_diags(lp_sqlite *db, uint64_t errors, uint64_t warnings, lp_error *err)
{
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE runs SET input_errors = %llu, input_warnings = %llu WHERE run = %lld",
             (unsigned long long)errors, (unsigned long long)warnings, (long long)db->run);
    return exec(db, sql, err);
}

lp_status lp_sqlite_commit(lp_sqlite *db, lp_sqlite_stats *stats, lp_error *err)
{
    double secs = now_s() - db->t0;
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE runs SET seconds = %.6f, rows = %llu WHERE run = %lld", secs,
             (unsigned long long)db->rows, (long long)db->run);
    lp_status st = exec(db, sql, err);
    if (!st)
        st = exec(db, "COMMIT", err);
    if (st)
        return lp_error_push(err, "committing");
    db->in_tx = 0;
    if (stats) {
        stats->run = db->run;
        stats->replaced = db->replaced;
        stats->rows = db->rows;
        stats->seconds = now_s() - db->t0;
    }
    return LP_OK;
}

void lp_sqlite_close(lp_sqlite *db)
{
    if (!db)
        return;
    if (db->db) {
        if (db->in_tx)
            sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close_v2(db->db);
    }
    lp_free(db);
}
