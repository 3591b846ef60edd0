/* reqlog_int.h: internals of the request-log reader shared by reqlog.c (loading,
 * merging, grouping, checks) and reqlog_parse.c (one shard: lines to records).
 *
 * A shard is a byte range of a plain file, or a whole stream (compressed file, stdin).
 * Each shard is parsed by one thread into its own tables (local request ids, local
 * names, local <task, event> points), so shards never share mutable state; the merge
 * maps local ids to global ones in shard order, which makes the result independent of
 * the number of threads.
 */
#ifndef LP_REQLOG_INT_H
#define LP_REQLOG_INT_H

#include "longpole/import/reqlog.h"
#include "longpole/codec/io.h"
#include "base/hashmap.h"
#include <stdatomic.h>

#define RL_MAXCOLS 4096          /* highest column number a role may name */
#define RL_MAXLINE ((size_t)16 << 20) /* longer lines are reported and skipped */
#define RL_NCACHE_BITS 10         /* name cache: 1024 entries per shard */
#define RL_PCACHE_BITS 8          /* point cache: 256 entries per shard */
#define RL_MAXKEYS (LP_RL_NROLES * 8 + LP_REQLOG_MAXATTR)

/* How one file is laid out (decided from its first record). */
typedef struct rl_layout {
    lp_reqlog_format fmt;     /* CSV, TSV or JSONL */
    char delim;               /* field separator (CSV/TSV) */
    int header;               /* the first record is a header */
    uint64_t header_off;      /* its byte offset (plain files) */
    int col[LP_RL_NROLES];    /* 0-based column per role, -1 = absent (CSV/TSV) */
    int acol[LP_REQLOG_MAXATTR]; /* column per attribute, -1 = absent */
    int ncols;                /* columns needed: max index + 1 */
    int64_t scale;            /* ns per time unit */
    int iso;                  /* times are RFC 3339 */
    /* JSON lines: keys and what they map to (role, or LP_RL_NROLES + attribute index),
     * with the time scale a key implies (by its suffix) */
    int nkeys;
    const char *key[RL_MAXKEYS];
    size_t keylen[RL_MAXKEYS];
    int keyrole[RL_MAXKEYS];
    int64_t keyscale[RL_MAXKEYS];
    int have[LP_RL_NROLES];   /* the role can be present (JSONL: always 1 for mapped roles) */
    char host[256];           /* host_from_name: the file's host */
} rl_layout;

typedef struct rl_diag {
    uint64_t line;            /* shard-local, 1-based */
    uint8_t sev, rule;
    char *msg;
} rl_diag;

typedef struct rl_attrv {
    uint32_t req;             /* local request */
    uint32_t attr;            /* attribute index */
    uint32_t val;             /* local name id */
    uint64_t line;            /* shard-local line */
} rl_attrv;

/* A name cache entry: the name's length and its first and last 8 bytes (zero-padded),
 * which are the whole name when n <= 16 (then a hit needs no other comparison). */
typedef struct rl_ncache {
    uint64_t v0, v1;
    uint32_t n;               /* 0 = empty (names are never empty) */
    lp_str id;
} rl_ncache;

typedef struct rl_shard {
    /* what to read */
    uint32_t file;            /* index into the file list */
    const char *path;
    uint64_t begin, end;      /* byte range of a plain file */
    int whole;                /* read the whole stream through lp_input */
    const void *mem;          /* in-memory input (whole), or NULL */
    size_t memlen;
    rl_layout *lay;           /* the file's layout (whole: filled by the shard) */
    const lp_reqlog_opts *opts;
    const char *rdend;        /* bytes before this are readable (a mapped shard), or NULL */
    atomic_uint_fast64_t *progress; /* bytes read by all shards */
    /* records: time, point (local), host (local name id), seg = local request, src unused */
    lp_reqrow *rows;
    uint64_t nrows, caprows;
    int64_t *seq;             /* per record, if a seq column is mapped */
    uint64_t capseq;
    lp_strtab reqs;           /* local request ids */
    lp_strtab names;          /* local hosts, tasks, events, attribute values */
    rl_ncache ncache[1u << RL_NCACHE_BITS]; /* recently interned names */
    uint64_t pc_key[1u << RL_PCACHE_BITS];  /* recently seen points: task << 32 | event */
    uint32_t pc_pt[1u << RL_PCACHE_BITS];   /* their local point + 1 (0 = empty) */
    int tabs_ok;
    /* local points: (task name id, event name id) -> local point */
    uint32_t *pt_task, *pt_event;
    uint32_t npts, cappts;
    lp_hmap ptmap;            /* task << 32 | event -> local point */
    /* lines without a record, diagnostics, malformed lines' requests, attributes */
    uint64_t *skip;
    uint64_t nskip, capskip;
    rl_diag *diags;
    size_t ndiags, capdiags;
    uint32_t *badreq;
    size_t nbadreq, capbadreq;
    rl_attrv *av;
    size_t nav, capav;
    uint64_t nlines;          /* lines consumed */
    uint64_t nbadlines;
    /* one-entry caches of the last request and host (consecutive lines repeat them) */
    const char *lastreq;
    size_t lastreqn;          /* 0 = none */
    uint64_t lastreq0, lastreq1; /* its first and last 8 bytes, as in rl_ncache */
    uint32_t lastreqid;
    /* outcome */
    lp_status st;             /* resource error (LP_OK otherwise) */
    uint64_t cpu_ns;          /* CPU time the shard took (its thread's clock) */
    lp_error err;
    uint8_t *ishost;          /* per local name: used as a host */
    size_t capishost;
    /* merge */
    uint64_t row0, line0;
    uint32_t *m_pt, *m_req, *m_host; /* local -> global points, requests, hosts */
} rl_shard;

/* The roles' names ("request", "host", ...: --columns, messages) and whether a column
 * name or key is one of a role's usual names (case-insensitive: "request_id", "ts"...). */
extern const char *const rl_role_names[LP_RL_NROLES];
int rl_role_alias(int role, const char *s, size_t n);

/* Parse one shard (thread-safe: touches only the shard). */
void rl_shard_run(rl_shard *sh);
void rl_shard_release(rl_shard *sh);

/* Decide the layout of a file from its first content line (not blank, not a comment):
 * format, header, columns. `line` has no line terminator. On a bad option (unknown
 * column name, column numbers with JSON lines) returns an error naming the file. */
lp_status rl_layout_detect(rl_layout *L, const char *line, size_t n, const char *path, const lp_reqlog_opts *o,
                           lp_error *err);
void rl_layout_release(rl_layout *L);
/* Split a CSV/TSV line into fields (see reqlog_parse.c); returns the number of fields
 * or -1 on a bad quote. rl_csv_split handles every case (quotes, spaces trimmed);
 * rl_csv_split_plain only lines where no field begins with a quote or a space or ends
 * with a space (then both give the same fields), returning -2 for any other line. */
int rl_csv_split(const char *s, size_t n, char delim, const char **f, size_t *fl, int maxf, char *scratch, size_t cap);
int rl_csv_split_plain(const char *s, size_t n, char delim, const char **f, size_t *fl, int maxf);
/* The host name implied by a file name (basename up to its first '.'). */
void rl_host_from_path(const char *path, char *out, size_t cap);
/* Parse a time field into ns. Returns 0 or -1 (with a reason). */
int rl_parse_time(const char *s, size_t n, int64_t scale, int iso, int64_t *out, const char **why);

#endif
