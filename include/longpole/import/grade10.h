/* grade10.h: the inputs of a Grade10 analysis (papers/grade10.txt §III-C) as read from
 * text, before any model is applied: phase events from Grade10's `OperationLog` lines,
 * monitoring samples (CSV `time,host,metric,value`) and blocking intervals (CSV
 * `start,end,host,resource[,scope]`). docs/formats/grade10-inputs.md has the syntax.
 *
 * The readers check syntax only (fields, numbers, order of samples within a series);
 * what the names mean (which phase type, which resource) is decided by the analysis
 * against a model (analysis/grade10/model.h), so every record keeps its file and line
 * for the errors found there. A record that breaks a rule is reported to the lp_diags
 * sink with its file and line and dropped; the readers return an error status only for
 * resource failures (memory, I/O) or input they cannot read at all.
 *
 * Invariants of an lp_g10_data: every string id is valid in `strs`; tag lists live in
 * `pool` (pool[0] = 0 is the empty list; a list at offset o is pool[o] = npairs, then
 * npairs (key, value) string-id pairs); within a monitoring series the sample times
 * strictly increase; every blocking interval has start <= end.
 */
#ifndef LONGPOLE_IMPORT_GRADE10_H
#define LONGPOLE_IMPORT_GRADE10_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/base/diag.h"
#include "longpole/base/strtab.h"
#include "longpole/codec/io.h"

typedef enum lp_g10_evkind { LP_G10_EV_START = 0, LP_G10_EV_END = 1, LP_G10_EV_SINGLE = 2 } lp_g10_evkind;

/* One OperationLog record: `time=T, event=start|end|single, phase=P, key=value, ...`. */
typedef struct lp_g10_event {
    int64_t time;      /* nanoseconds */
    uint8_t kind;      /* lp_g10_evkind */
    lp_str phase;      /* the value of phase=, or LP_STR_NONE (a record without a phase) */
    uint32_t tags;     /* the other key=value pairs (offset in pool; 0 = none) */
    lp_str file;       /* the input's name */
    uint64_t line;
} lp_g10_event;

/* The samples of one metric on one host, in time order. */
typedef struct lp_g10_series {
    lp_str host, metric;
    lp_str file;        /* the file of its first sample */
    size_t n, cap;
    int64_t *time;      /* nanoseconds, strictly increasing */
    double *value;
    uint64_t *line;
} lp_g10_series;

/* One interval during which a blocking resource was unavailable. */
typedef struct lp_g10_block {
    int64_t start, end; /* nanoseconds, start <= end */
    lp_str host;        /* LP_STR_EMPTY: every host */
    lp_str resource;
    uint32_t scope;     /* key=value pairs a phase instance must carry to be blocked (pool offset; 0 = all) */
    lp_str file;
    uint64_t line;
} lp_g10_block;

typedef struct lp_g10_data {
    lp_strtab strs;
    uint32_t *pool;               /* tag lists */
    size_t npool, cappool;
    lp_g10_event *ev;             /* phase events, in input order */
    size_t nev, capev;
    lp_g10_series *series;        /* monitoring, one per (host, metric), in order of first sample */
    size_t nseries, capseries;
    void *series_index;           /* (host, metric) -> series (internal) */
    lp_g10_block *blk;            /* blocking intervals, in input order */
    size_t nblk, capblk;
    uint64_t ignored_lines;       /* OperationLog inputs: lines without an OperationLog record */
} lp_g10_data;

lp_status lp_g10_data_init(lp_g10_data *d, lp_error *err);
void lp_g10_data_release(lp_g10_data *d);

/* The series of (host, metric), or NULL. */
const lp_g10_series *lp_g10_data_series(const lp_g10_data *d, const char *host, const char *metric);
/* The value of `key` in tag list `tags`, or LP_STR_NONE. */
lp_str lp_g10_tag(const lp_g10_data *d, uint32_t tags, lp_str key);
/* Append a tag list (npairs key/value pairs) to the pool; *off = its offset (0 if npairs == 0). */
lp_status lp_g10_data_tags(lp_g10_data *d, const lp_str *kv, uint32_t npairs, uint32_t *off, lp_error *err);

/* Append one monitoring sample to the series of (host, metric) (made on first use), for
 * samples that come from elsewhere than a CSV file (line: 0 or the caller's record
 * number). LP_ERR_DATA (nothing added) if t is not after the series' last sample. */
lp_status lp_g10_data_sample(lp_g10_data *d, const char *host, const char *metric, int64_t t, double v, uint64_t line,
                             lp_error *err);

/* Times: a unit in nanoseconds for bare integers (1 = ns, 1000000 = ms), or 0 to decide:
 * OperationLog times are epoch milliseconds from 10^11 to 10^14 (Giraph's logs) and
 * epoch nanoseconds from 10^17 on (PowerGraph's); anything else, or a file that mixes the
 * two, is an error that asks for the unit. CSV inputs name their unit in the header
 * (time_ns, time_us, time_ms, time_s; bare `time`/`start`/`end`: the unit given, 0 = ns). */
typedef struct lp_g10_read_opts {
    int64_t time_unit_ns;
} lp_g10_read_opts;

/* Grade10 OperationLog lines (Giraph writes `... org.apache.giraph.metrics.OperationLog:
 * time=..., event=..., phase=...`, PowerGraph `OperationLog: time=...`): every line
 * holding `OperationLog` followed by `:` or `-`, or starting with `time=`, is one record;
 * other lines are counted in ignored_lines. `opts` may be NULL. */
lp_status lp_g10_read_oplog(lp_g10_data *d, lp_input *in, const lp_g10_read_opts *opts, lp_diags *ds,
                            lp_error *err);
/* Monitoring CSV `time,host,metric,value` (optional header naming the columns in any
 * order; `#` comments). A sample not after the previous one of its series is an error
 * (dropped). */
lp_status lp_g10_read_monitor(lp_g10_data *d, lp_input *in, const lp_g10_read_opts *opts, lp_diags *ds,
                              lp_error *err);
/* Blocking CSV `start,end,host,resource[,scope]`; scope is `key=value;key=value`. */
lp_status lp_g10_read_blocking(lp_g10_data *d, lp_input *in, const lp_g10_read_opts *opts, lp_diags *ds,
                               lp_error *err);

/* Parse a duration: an integer or decimal with a unit (ns, us, ms, s), e.g. "10ms",
 * "0.5s"; a bare number is nanoseconds. 1 on success. */
int lp_g10_parse_duration(const char *s, size_t n, int64_t *ns);

#endif
