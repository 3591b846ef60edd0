/* reqlog.h: request logs in the minimal UberTrace schema (Mystery Machine, OSDI'14 §3):
 * one record per logged event with a request id, the host that logged it, a timestamp
 * on that host's own clock, an event name and a task name (a task is a distributed
 * thread of control). Read from CSV, TSV or JSON lines, plain or gzip/zstd, one file
 * per host or mixed (docs/formats/request-log.md), into a compact in-memory store that
 * the skew, inference and critical-path analyses share.
 *
 * Invariants of a loaded lp_reqlog:
 *  - rows are grouped by request: request r owns rows [rfirst[r], rfirst[r+1]);
 *  - within a request, rows are sorted by task, then by the order the task's events
 *    happened: the `seq` field when one is mapped, else input order (file order as
 *    given, then line order). Timestamps are only compared per (task, host) by the
 *    reader; across hosts the order comes from the log, never from the clocks;
 *  - every good request (rbad[r] == 0) has unique <event, task> pairs and times that
 *    never go backwards within one task on one host; a request that breaks either
 *    rule, or has a malformed line that could be attributed to it, is excluded
 *    (rbad[r] = 1) after every problem was reported with its file and line;
 *  - row.seg is the id of the segment <task, this event, next event of the task>
 *    (OSDI'14 §4.1), LP_REQLOG_NONE on a task's last event. Segment ids are canonical:
 *    sorted by (task name, start event name, end event name), so they do not depend on
 *    the input order, the sharding or the number of threads;
 *  - names (hosts, tasks, events, attribute names and values) are interned once.
 * Memory: 24 bytes per row (plus 8 per row while a `seq` column is being sorted and
 * 4 per row while ungrouped input is regrouped), ~40 bytes per request.
 * Parsing uses several threads; diagnostics come out in file and line order.
 */
#ifndef LONGPOLE_REQLOG_H
#define LONGPOLE_REQLOG_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/base/status.h"
#include "longpole/base/strtab.h"
#include "longpole/base/diag.h"
#include "longpole/base/progress.h"

#define LP_REQLOG_NONE UINT32_MAX

/* The roles a column (CSV/TSV) or key (JSON lines) can play. */
typedef enum lp_reqlog_role {
    LP_RL_REQUEST = 0, /* request id (any string) */
    LP_RL_HOST,        /* host that logged the event */
    LP_RL_TIME,        /* timestamp on the host's clock */
    LP_RL_EVENT,       /* event name */
    LP_RL_TASK,        /* task name */
    LP_RL_SEQ,         /* optional: order of the event within its task (integer) */
    LP_RL_NROLES
} lp_reqlog_role;

typedef enum lp_reqlog_format { LP_RL_AUTO = 0, LP_RL_CSV, LP_RL_TSV, LP_RL_JSONL } lp_reqlog_format;

/* Time units of the time column. AUTO: from the column's name suffix (_ns, _us, _ms, _s)
 * if it has one, else nanoseconds. Numbers may have a fraction ("1690000000.25" s);
 * ISO is RFC 3339 ("2013-07-21T10:00:00.123456Z", offsets allowed). */
typedef enum lp_reqlog_unit {
    LP_RL_UNIT_AUTO = 0, LP_RL_UNIT_NS, LP_RL_UNIT_US, LP_RL_UNIT_MS, LP_RL_UNIT_S, LP_RL_UNIT_ISO
} lp_reqlog_unit;

#define LP_REQLOG_MAXATTR 32

typedef struct lp_reqlog_opts {
    /* Column name (header or JSON key) or 1-based column number per role; NULL = the
     * default names: request|request_id|req, host, time|timestamp|ts|time_ns|time_us|
     * time_ms|time_s, event, task, seq (seq is optional, the others are required unless
     * host_from_name is set). */
    const char *col[LP_RL_NROLES];
    /* Extra columns/keys read as request attributes (for stratification): name given
     * to the attribute and its column. Empty values are ignored. */
    const char *attr_name[LP_REQLOG_MAXATTR];
    const char *attr_col[LP_REQLOG_MAXATTR];
    unsigned nattr;
    lp_reqlog_format format;  /* AUTO: JSON lines if the first record starts with '{', TSV if
                                 the header has a tab, else CSV */
    char delimiter;           /* 0 = by format */
    int header;               /* -1 auto (a header exists unless every role is a number),
                                 0 no header, 1 the first record is a header */
    lp_reqlog_unit unit;
    int host_from_name;       /* the host is the file's name up to its first '.' (one file
                                 per host, no host column) */
    unsigned threads;         /* 0 = one per online CPU */
    size_t shard_bytes;       /* plain files are split in shards of this size (0 = 32 MiB) */
    lp_progress_fn progress;  /* optional: bytes read */
    void *progress_ctx;
    char strbuf[2048];        /* holds the names lp_reqlog_opts_columns parsed (col[] and attr_*
                                 point into it: do not copy a parsed lp_reqlog_opts by value) */
    size_t strused;
} lp_reqlog_opts;

void lp_reqlog_opts_init(lp_reqlog_opts *o);
/* Parse "role=col,role=col,...": roles request, host, time, event, task, seq and
 * attr.NAME (an attribute). */
lp_status lp_reqlog_opts_columns(lp_reqlog_opts *o, const char *spec, lp_error *err);
lp_status lp_reqlog_opts_unit(lp_reqlog_opts *o, const char *unit, lp_error *err);

/* One logged event. */
typedef struct lp_reqrow {
    int64_t time;    /* ns, host clock (after lp_skew_apply: the reference clock) */
    uint32_t point;  /* the <task, event> pair: pt_task[point], pt_event[point] */
    uint32_t host;   /* host id */
    uint32_t seg;    /* segment starting at this event, LP_REQLOG_NONE at the task's last event */
    uint32_t src;    /* input position (0-based over all records read), for lp_reqlog_where */
} lp_reqrow;

/* Provenance of a run of rows: a shard of one input file. */
typedef struct lp_reqlog_src {
    uint32_t file;       /* index into lp_reqlog.fname */
    uint64_t row0;       /* first input position (lp_reqrow.src) of the shard */
    uint64_t nrows;      /* records it produced */
    uint64_t line0;      /* line number, in its file, of the shard's first line (1-based) */
    uint64_t *skip;      /* shard-local 1-based numbers of its lines that produced no record */
    uint64_t nskip;
} lp_reqlog_src;

typedef struct lp_reqlog {
    lp_strtab names;          /* every name: hosts, tasks, events, requests, attributes */

    uint32_t nhosts;
    lp_str *host_name;
    uint32_t ntasks;
    lp_str *task_name;
    uint32_t nevents;
    lp_str *event_name;
    uint32_t npoints;         /* distinct <task, event> pairs */
    uint32_t *pt_task, *pt_event;
    uint32_t nsegs;           /* distinct segments <task, start event, end event> */
    uint32_t *seg_task, *seg_from, *seg_to; /* task id, start and end event ids */
    uint8_t *seg_cross;       /* 1 if the segment was seen crossing hosts */

    uint64_t nreqs;
    lp_str *req_name;         /* request ids */
    uint64_t *rfirst;         /* [nreqs + 1] */
    uint8_t *rbad;            /* 1: excluded (its problems were reported) */
    uint64_t nbad;            /* requests excluded */

    uint32_t nattrs;          /* request attributes */
    lp_str *attr_name;
    lp_str *rattr;            /* [nattrs * nreqs]: rattr[a * nreqs + r] is request r's value of
                                 attribute a, LP_STR_NONE if unset */
    uint32_t *name_req;       /* [nname_req]: request index of a name id, LP_REQLOG_NONE if none */
    uint32_t nname_req;

    uint64_t nrows;
    lp_reqrow *rows;

    uint64_t nlines;          /* input lines read (all files) */
    uint64_t nbadlines;       /* lines skipped as malformed */
    int has_seq;              /* a seq column ordered the tasks' events */
    int64_t min_time, max_time; /* over all rows (host clocks) */
    uint64_t parse_cpu_ns;    /* CPU time the line parsers took, all threads (benchmarks) */

    char **fname;             /* input file names, as given */
    uint32_t nfiles;
    lp_reqlog_src *srcs;      /* provenance by input position, sorted by row0 */
    uint32_t nsrcs;
} lp_reqlog;

/* Read `paths` ("-" = stdin) into *out. Data problems go to `diags` (file, line, reason;
 * rules LP_RULE_FIELD, LP_RULE_SYNTAX, LP_RULE_IMPORT for a duplicate <event, task>,
 * LP_RULE_ORDER for time going backwards, LP_RULE_LIMIT); only resource errors,
 * unreadable files and bad options return an error. */
lp_status lp_reqlog_load(const char *const *paths, size_t npaths, const lp_reqlog_opts *o, lp_diags *diags,
                         lp_reqlog **out, lp_error *err);
/* The same from memory (one input named `name`; not copied). */
lp_status lp_reqlog_load_mem(const void *data, size_t n, const char *name, const lp_reqlog_opts *o, lp_diags *diags,
                             lp_reqlog **out, lp_error *err);
/* Read request attributes from a table (CSV/TSV with a header, or JSON lines): the
 * request column (o->col[LP_RL_REQUEST] or the default names) and every other column
 * becomes an attribute. Requests not in the log are counted in *unknown. */
lp_status lp_reqlog_load_attrs(lp_reqlog *rl, const char *path, const lp_reqlog_opts *o, lp_diags *diags,
                               uint64_t *unknown, lp_error *err);
void lp_reqlog_free(lp_reqlog *rl);

/* File and line of row `src` (its lp_reqrow.src); returns the file name. */
const char *lp_reqlog_where(const lp_reqlog *rl, uint32_t src, uint64_t *line);

/* Names. */
static inline const char *lp_reqlog_str(const lp_reqlog *rl, lp_str s) { return lp_strtab_get(&rl->names, s); }
/* "task:start->end" into buf (truncated to n). */
const char *lp_reqlog_seg_label(const lp_reqlog *rl, uint32_t seg, char *buf, size_t n);
/* Attribute id by name, or LP_REQLOG_NONE. */
uint32_t lp_reqlog_attr_find(const lp_reqlog *rl, const char *name);
/* Request by id string, or UINT64_MAX. */
uint64_t lp_reqlog_find(const lp_reqlog *rl, const char *id);

#endif
