/* sqlite_export_int.h: what the parts of the SQLite export share (sqlite_export.c: the
 * database, runs and the row writer; sqlite_export_trace.c, _req.c, _spans.c: the
 * tables of each input kind). Private to src/report.
 *
 * Writing a row: sq_row(x) binds the run id as parameter 1, then sq_i64/sq_txt/...
 * bind the next parameters in order, and sq_step(x) ends the row (written then, or
 * with its batch). Text given to sq_txt must stay valid until sq_fin (the strings of a
 * trace, log or span table do); sq_txt_copy copies it. sq_fin writes what is left:
 * its status must be checked.
 */
#ifndef LP_SQLITE_EXPORT_INT_H
#define LP_SQLITE_EXPORT_INT_H

#include <sqlite3.h>
#include "longpole/export/sqlite_export.h"

struct lp_sqlite {
    sqlite3 *db;               /* the connection */
    int64_t run;               /* id of the run being written */
    int in_tx;                 /* the transaction is open */
    int replaced;              /* an earlier run of these inputs was removed */
    uint64_t rows;             /* rows written */
    double t0;                 /* monotonic time at open */
    lp_progress_fn progress;   /* from the options of the current lp_sqlite_* call */
    void *progress_ctx;
};

/* A prepared insert. Rows are buffered and written SQ_BATCH at a time by one
 * multi-row INSERT (twice as fast as row by row: the statement's fixed cost is shared);
 * the rest goes through the one-row statement when the insert is finished (sq_fin). */
#define SQ_BATCH 64
typedef struct sq_ins {
    lp_sqlite *db;
    sqlite3_stmt *s1;          /* one row */
    sqlite3_stmt *sb;          /* SQ_BATCH rows */
    int ncols;                 /* parameters per row (the run included) */
    int k;                     /* parameters bound in the current row */
    int nrows;                 /* rows buffered */
    uint8_t *vt;               /* [SQ_BATCH * ncols] value types (SQ_V_*) */
    int64_t *vi;               /* integers (and arena offsets of copied text) */
    double *vd;                /* reals */
    const char **vs;           /* text that outlives the insert */
    char *arena;               /* copied text of the buffered rows */
    size_t arena_used, arena_cap;
    lp_status st;              /* the first failure of a batch */
} sq_ins;

lp_status sq_prep(lp_sqlite *db, sq_ins *x, const char *sql, lp_error *err);
lp_status sq_fin(sq_ins *x, lp_error *err); /* flush and free; safe on a failed sq_prep */
void sq_free(sq_ins *x);                    /* free without flushing (after a failure) */
/* End an insert: flushed if st is LP_OK, else just freed; returns the first failure. */
lp_status sq_end(sq_ins *x, lp_status st, lp_error *err);
void sq_row(sq_ins *x);
void sq_i64(sq_ins *x, int64_t v);
void sq_u64(sq_ins *x, uint64_t v);
void sq_null(sq_ins *x);
void sq_dbl(sq_ins *x, double v);          /* NaN and infinities become NULL */
void sq_txt(sq_ins *x, const char *s);     /* NULL becomes NULL; not copied */
void sq_txt_copy(sq_ins *x, const char *s);/* copied (for scratch buffers) */
void sq_opt32(sq_ins *x, uint32_t v);      /* UINT32_MAX becomes NULL */
lp_status sq_step(sq_ins *x, lp_error *err);
lp_status sq_fail(lp_sqlite *db, lp_error *err, const char *what);
/* Progress, when the current call has a callback (non-zero: cancel). */
int sq_progress(lp_sqlite *db, const char *what, uint64_t done, uint64_t total);

#endif
