/* test_sqlite_export.c: the SQLite export (sqlite_export.h) read back with the SQLite C
 * API and compared, row by row, with the in-memory structures it was written from (the
 * naive twin: a plain walk over the trace's columns, the path and the request paths
 * computed here): activities, messages (numeric and string ids), attribute lists,
 * the critical path, windows; batch boundaries (row counts around the 64-row batch);
 * replacing a run (same inputs: one run, same rows; other inputs untouched);
 * rollback (closing without commit leaves the database as it was); the schema check
 * (a foreign database is refused); request logs (per-request critical paths). */
#include "t.h"
#include "tutil.h"
#include "longpole/export/sqlite_export.h"
#include "longpole/analysis/mystery/reqpath.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dbpath[256];

static int64_t q1(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        fprintf(stderr, "sql: %s: %s\n", sql, sqlite3_errmsg(db));
        return -2;
    }
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

static sqlite3 *opendb(void)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static int export_trace(const lp_trace *t, const char *input, const lp_sqlite_opts *o, int commit)
{
    lp_sqlite *x;
    lp_error err;
    const char *in[1] = {input};
    if (lp_sqlite_open(&x, dbpath, in, 1, "trace", NULL, &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        return -1;
    }
    lp_status st = lp_sqlite_trace(x, t, 1, 0, o, &err);
    if (!st && commit)
        st = lp_sqlite_commit(x, NULL, &err);
    if (st)
        fprintf(stderr, "export: %s\n", err.msg);
    lp_sqlite_close(x);
    return st ? -1 : 0;
}

/* A trace of n activities on two workers with messages and attributes. */
static lp_trace *make_trace(int n)
{
    size_t cap = (size_t)n * 80 + 256;
    char *txt = malloc(cap);
    size_t k = (size_t)snprintf(txt, cap, "W a host=h1\nW b host=h2 rack=r7\n");
    for (int i = 0; i < n; i++) {
        const char *w = i % 2 ? "b" : "a";
        k += (size_t)snprintf(txt + k, cap - k, "A %s %d %d processing op%d%s\n", w, (i / 2) * 10, (i / 2) * 10 + 7,
                              i % 3, i % 5 == 0 ? " k=v" : "");
        if (i % 4 == 1 && i + 2 < n)
            k += (size_t)snprintf(txt + k, cap - k, "M a %d b %d id=%s%s\n", (i / 2) * 10 + 7, (i / 2) * 10 + 9,
                                  i % 8 == 1 ? "id-" : "", i % 8 == 1 ? "x" : "12");
    }
    lp_diags ds;
    lp_trace *t = load_text(txt, &ds);
    lp_diags_release(&ds);
    free(txt);
    return t;
}

/* Every activity, message and attribute list of t as stored in the run. */
static void check_rows(sqlite3 *db, const lp_trace *t, int64_t run)
{
    sqlite3_stmt *s;
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT id, worker, type, operator, start_ns, end_ns, attrs, gap FROM activities WHERE run = %lld "
             "ORDER BY id",
             (long long)run);
    CHECK(sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK);
    uint64_t a = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        CHECK_EQ_I(sqlite3_column_int64(s, 0), a);
        CHECK_EQ_I(sqlite3_column_int64(s, 1), lp_trace_act_worker(t, a));
        CHECK_EQ_I(sqlite3_column_int64(s, 2), t->atype[a]);
        if (t->aop[a] == LP_STR_NONE)
            CHECK(sqlite3_column_type(s, 3) == SQLITE_NULL);
        else
            CHECK_EQ_I(sqlite3_column_int64(s, 3), t->aop[a]);
        CHECK_EQ_I(sqlite3_column_int64(s, 4), t->astart[a]);
        CHECK_EQ_I(sqlite3_column_int64(s, 5), t->aend[a]);
        CHECK_EQ_I(sqlite3_column_type(s, 6) == SQLITE_NULL ? 0 : sqlite3_column_int64(s, 6), t->aattr[a]);
        CHECK_EQ_I(sqlite3_column_int64(s, 7), (t->aflags[a] & LP_ACT_GAP) != 0);
        a++;
    }
    sqlite3_finalize(s);
    CHECK_EQ_I(a, t->nacts);
    snprintf(sql, sizeof sql, "SELECT id, src, dst, send_ns, recv_ns, msgid FROM messages WHERE run = %lld ORDER BY id",
             (long long)run);
    CHECK(sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK);
    uint64_t m = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        CHECK_EQ_I(sqlite3_column_int64(s, 1), t->msrc[m]);
        CHECK_EQ_I(sqlite3_column_int64(s, 2), t->mdst[m]);
        CHECK_EQ_I(sqlite3_column_int64(s, 3), t->msend[m]);
        CHECK_EQ_I(sqlite3_column_int64(s, 4), t->mrecv[m]);
        char idb[64];
        lp_trace_msgid(t, t->mid[m], idb, sizeof idb);
        if (t->mid[m] & LP_MSGID_STR)
            CHECK(sqlite3_column_type(s, 5) == SQLITE_TEXT && strcmp((const char *)sqlite3_column_text(s, 5), idb) == 0);
        else
            CHECK(sqlite3_column_type(s, 5) == SQLITE_INTEGER && sqlite3_column_int64(s, 5) == atoll(idb));
        m++;
    }
    sqlite3_finalize(s);
    CHECK_EQ_I(m, t->nmsgs);
    /* attribute lists: every pair of every list, in order */
    snprintf(sql, sizeof sql, "SELECT list, pos, key, value FROM attrs WHERE run = %lld ORDER BY list, pos",
             (long long)run);
    CHECK(sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK);
    uint64_t l = 1, k = 0, pairs = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        while (l < t->napool && k == t->apool[l]) { /* next non-empty list */
            l += 1 + 2 * (uint64_t)t->apool[l];
            k = 0;
        }
        CHECK_EQ_I(sqlite3_column_int64(s, 0), l);
        CHECK_EQ_I(sqlite3_column_int64(s, 1), k);
        CHECK_STR((const char *)sqlite3_column_text(s, 2), lp_trace_str(t, t->apool[l + 1 + 2 * k]));
        CHECK_STR((const char *)sqlite3_column_text(s, 3), lp_trace_str(t, t->apool[l + 2 + 2 * k]));
        k++;
        pairs++;
    }
    sqlite3_finalize(s);
    uint64_t want = 0;
    for (uint64_t q = 1; q < t->napool; q += 1 + 2 * (uint64_t)t->apool[q])
        want += t->apool[q];
    CHECK_EQ_I(pairs, want);
}

static void check_cp(sqlite3 *db, const lp_trace *t, int64_t run)
{
    lp_pag g;
    lp_cpath cp;
    lp_error err;
    CHECK(lp_pag_build(t, &g, &err) == LP_OK);
    CHECK(lp_cpath_compute(&g, &cp, &err) == LP_OK);
    lp_pag_release(&g);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT kind, activity, message, start_ns, end_ns FROM cp WHERE run = %lld ORDER BY step",
             (long long)run);
    sqlite3_stmt *s;
    CHECK(sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK);
    size_t k = 0;
    while (sqlite3_step(s) == SQLITE_ROW && k < cp.n) {
        const lp_cp_elem *e = &cp.e[k++];
        int msg = strcmp((const char *)sqlite3_column_text(s, 0), "message") == 0;
        CHECK_EQ_I(msg, e->kind == LP_CP_MESSAGE);
        CHECK_EQ_I(sqlite3_column_int64(s, msg ? 2 : 1), e->index);
        CHECK_EQ_I(sqlite3_column_int64(s, 3), e->start);
        CHECK_EQ_I(sqlite3_column_int64(s, 4), e->end);
    }
    sqlite3_finalize(s);
    CHECK_EQ_I(k, cp.n);
    snprintf(sql, sizeof sql, "SELECT total_ns FROM cp_info WHERE run = %lld", (long long)run);
    CHECK_EQ_I(q1(db, sql), cp.total);
    lp_cpath_release(&cp);
}

static void test_trace(void)
{
    static const int sizes[] = {1, 63, 64, 65, 130, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unlink(dbpath);
        lp_trace *t = make_trace(sizes[i]);
        CHECK(t != NULL);
        if (!t)
            continue;
        lp_sqlite_opts o;
        lp_sqlite_opts_init(&o);
        o.window = 40;
        o.threads = 1;
        o.edge_cp = sizes[i] == 130;
        CHECK(export_trace(t, "t.lpt", &o, 1) == 0);
        sqlite3 *db = opendb();
        CHECK(db != NULL);
        if (db) {
            int64_t run = q1(db, "SELECT run FROM runs");
            CHECK_EQ_I(q1(db, "SELECT count(*) FROM runs"), 1);
            check_rows(db, t, run);
            check_cp(db, t, run);
            CHECK_EQ_I(q1(db, "SELECT count(*) FROM workers"), t->nworkers);
            /* windows of 40 ns from the start: as many as the grid */
            int64_t span = t->tmax - t->tmin;
            int64_t nwin = span <= 40 ? 1 : (span + 39) / 40;
            CHECK_EQ_I(q1(db, "SELECT count(*) FROM windows"), nwin);
            /* CP sums to 1 in every window with paths (activity summary rows) */
            CHECK_EQ_I(q1(db, "SELECT count(*) FROM (SELECT idx, sum(cp) s FROM window_rows WHERE kind = 'activity' "
                              "GROUP BY idx) JOIN windows USING (idx) WHERE has_paths AND abs(s - 1) > 1e-9"),
                       0);
            if (o.edge_cp) /* per-edge CP adds up to each window's CP sum */
                CHECK_EQ_I(q1(db, "SELECT count(*) FROM windows w WHERE has_paths AND abs(cp_sum - "
                                  "(SELECT coalesce(sum(cp), 0) FROM activity_cp a WHERE a.idx = w.idx) - "
                                  "(SELECT coalesce(sum(cp), 0) FROM message_cp m WHERE m.idx = w.idx)) > 1e-9"),
                           0);
            /* the view resolves names for every path element */
            CHECK_EQ_I(q1(db, "SELECT count(*) FROM v_cp"), q1(db, "SELECT count(*) FROM cp"));
            sqlite3_close(db);
        }
        lp_trace_free(t);
    }
}

static void test_replace_rollback(void)
{
    unlink(dbpath);
    lp_trace *t1 = make_trace(100), *t2 = make_trace(37);
    lp_sqlite_opts o;
    lp_sqlite_opts_init(&o);
    o.threads = 1;
    CHECK(export_trace(t1, "one.lpt", &o, 1) == 0);
    sqlite3 *db = opendb();
    int64_t rows1 = q1(db, "SELECT count(*) FROM activities");
    sqlite3_close(db);
    CHECK_EQ_I(rows1, t1->nacts);
    /* the same inputs again: replaced, not added */
    CHECK(export_trace(t1, "one.lpt", &o, 1) == 0);
    db = opendb();
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM runs"), 1);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM activities"), rows1);
    sqlite3_close(db);
    /* other inputs: a second run */
    CHECK(export_trace(t2, "two.lpt", &o, 1) == 0);
    db = opendb();
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM runs"), 2);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM activities"), (int64_t)(t1->nacts + t2->nacts));
    sqlite3_close(db);
    /* replace the first while the second is there: the second is untouched */
    CHECK(export_trace(t1, "one.lpt", &o, 1) == 0);
    db = opendb();
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM runs"), 2);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM activities a JOIN runs r USING (run) WHERE r.inputs LIKE '%two.lpt%'"),
               t2->nacts);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM activities"), (int64_t)(t1->nacts + t2->nacts));
    int64_t cp_before = q1(db, "SELECT count(*) FROM cp");
    sqlite3_close(db);
    /* no commit: rolled back, the earlier run of these inputs still there */
    CHECK(export_trace(t2, "one.lpt", &o, 0) == 0);
    db = opendb();
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM runs"), 2);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM activities"), (int64_t)(t1->nacts + t2->nacts));
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM cp"), cp_before);
    sqlite3_close(db);
    lp_trace_free(t1);
    lp_trace_free(t2);
}

static void test_schema_check(void)
{
    unlink(dbpath);
    sqlite3 *db;
    CHECK(sqlite3_open(dbpath, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "CREATE TABLE mine(x)", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    lp_sqlite *x = NULL;
    lp_error err;
    const char *in[1] = {"t.lpt"};
    CHECK(lp_sqlite_open(&x, dbpath, in, 1, "trace", NULL, &err) == LP_ERR_FORMAT);
    CHECK(x == NULL);
    /* a file that is not a database at all */
    FILE *f = fopen(dbpath, "w");
    fputs("this is not sqlite, but it is long enough to have a header of sorts...........................\n", f);
    fclose(f);
    CHECK(lp_sqlite_open(&x, dbpath, in, 1, "trace", NULL, &err) != LP_OK);
    CHECK(x == NULL);
    unlink(dbpath);
}

static void test_requests(void)
{
    static const char csv[] = "request,host,time,event,task\n"
                              "r1,c,0,send,client\nr1,s,10,recv,server\nr1,s,30,reply,server\nr1,c,50,done,client\n"
                              "r2,c,100,send,client\nr2,s,105,recv,server\nr2,s,160,reply,server\nr2,c,170,done,client\n"
                              "r3,c,200,send,client\nr3,s,230,recv,server\nr3,s,240,reply,server\nr3,c,290,done,client\n";
    lp_reqlog_opts ro;
    lp_reqlog_opts_init(&ro);
    ro.threads = 1;
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_reqlog *rl = NULL;
    lp_error err;
    CHECK(lp_reqlog_load_mem(csv, sizeof csv - 1, "r.csv", &ro, &ds, &rl, &err) == LP_OK);
    lp_causal m;
    CHECK(lp_causal_init(&m, &err) == LP_OK);
    uint32_t *map = NULL;
    CHECK(lp_causal_map(&m, rl, &map, &err) == LP_OK);
    lp_causal_refine_opts fo;
    memset(&fo, 0, sizeof fo);
    fo.threads = 1;
    CHECK(lp_causal_refine(&m, rl, map, &fo, &err) == LP_OK);
    CHECK(lp_causal_finish(&m, rl, map, &err) == LP_OK);
    lp_reqcat cat;
    lp_reqcat_init(&cat);
    CHECK(lp_reqcat_assign(&cat, &m, &err) == LP_OK);
    unlink(dbpath);
    lp_sqlite *x;
    const char *in[1] = {"r.csv"};
    lp_sqlite_opts o;
    lp_sqlite_opts_init(&o);
    o.threads = 1;
    CHECK(lp_sqlite_open(&x, dbpath, in, 1, "requests", NULL, &err) == LP_OK);
    CHECK(lp_sqlite_reqlog(x, rl, NULL, &m, map, &cat, NULL, &o, &err) == LP_OK);
    CHECK(lp_sqlite_commit(x, NULL, &err) == LP_OK);
    lp_sqlite_close(x);
    sqlite3 *db = opendb();
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM requests"), rl->nreqs);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM log_events"), rl->nrows);
    CHECK_EQ_I(q1(db, "SELECT count(*) FROM segments"), m.nseg);
    /* every request's path, as lp_reqpath computes it */
    lp_reqpath p;
    lp_reqpath_init(&p);
    for (uint64_t r = 0; r < rl->nreqs; r++) {
        CHECK(lp_reqpath_compute(&p, &m, rl, map, r, &err) == LP_OK);
        char sql[200];
        snprintf(sql, sizeof sql, "SELECT cp_ns FROM requests WHERE id = %llu", (unsigned long long)r);
        CHECK_EQ_I(q1(db, sql), p.cp);
        for (uint32_t k = 0; k < p.npath; k++) {
            snprintf(sql, sizeof sql, "SELECT segment FROM request_segments WHERE request = %llu AND path_pos = %u",
                     (unsigned long long)r, k);
            CHECK_EQ_I(q1(db, sql), p.seg[p.path[k]]);
        }
        snprintf(sql, sizeof sql, "SELECT count(*) FROM request_segments WHERE request = %llu AND on_cp",
                 (unsigned long long)r);
        CHECK_EQ_I(q1(db, sql), p.npath);
        snprintf(sql, sizeof sql, "SELECT sum(slack_ns) FROM request_segments WHERE request = %llu",
                 (unsigned long long)r);
        int64_t slack = 0;
        for (uint32_t i = 0; i < p.n; i++)
            slack += p.slack[i];
        CHECK_EQ_I(q1(db, sql), slack);
    }
    lp_reqpath_release(&p);
    sqlite3_close(db);
    unlink(dbpath);
    lp_reqcat_release(&cat);
    lp_free(map);
    lp_causal_release(&m);
    lp_reqlog_free(rl);
    lp_diags_release(&ds);
}

int main(void)
{
    snprintf(dbpath, sizeof dbpath, "/tmp/lp_test_sqlite_%d.db", (int)getpid());
    test_trace();
    test_replace_rollback();
    test_schema_check();
    test_requests();
    unlink(dbpath);
    return t_done("test_sqlite_export");
}
