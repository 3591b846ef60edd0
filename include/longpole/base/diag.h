/* diag.h: diagnostics about input data: every rule a reader enforces reports here,
 * with the file, the line (or byte offset for binary input) and the reason.
 *
 * A reader never stops at bad data: it reports, skips what the rule says to skip,
 * and goes on. The sink keeps the first `keep` messages verbatim and counts every
 * report by rule, so a 10 GB trace with a million bad lines costs no memory beyond
 * the kept messages. An optional callback sees every diagnostic as it happens.
 */
#ifndef LONGPOLE_DIAG_H
#define LONGPOLE_DIAG_H

#include <stddef.h>
#include <stdint.h>

typedef enum lp_severity { LP_SEV_NOTE = 0, LP_SEV_WARNING = 1, LP_SEV_ERROR = 2 } lp_severity;

/* The rules of MODEL.md (and of the binary format), one code each. */
typedef enum lp_rule {
    LP_RULE_SYNTAX = 0,        /* error: unknown record letter, bad header, line too long */
    LP_RULE_FIELD,             /* error: missing or non-numeric field, malformed key=value */
    LP_RULE_END_BEFORE_START,  /* error: activity end < start */
    LP_RULE_OVERLAP,           /* error: two activities of one worker overlap; the later is dropped */
    LP_RULE_UNMATCHED_RECV,    /* error: receive half with no matching send at end of input */
    LP_RULE_UNMATCHED_SEND,    /* error: send half with no matching receive at end of input */
    LP_RULE_DUP_SEND,          /* error: two sends with the same (sender, receiver, id) */
    LP_RULE_RECV_BEFORE_SEND,  /* warning: message received before it was sent; its weight is clamped to 0 */
    LP_RULE_ORDER,             /* warning: a worker's records are not in time order */
    LP_RULE_ENCODING,          /* error: a name is not valid UTF-8 */
    LP_RULE_WORKER_ATTR,       /* warning: a worker declared twice with different attributes */
    LP_RULE_BINARY,            /* error: corrupt binary trace (bad section, bad id, checksum) */
    LP_RULE_IMPORT,            /* warning/error: a record of a foreign format was skipped */
    LP_RULE_LIMIT,             /* error: a capacity limit was reached */
    LP_RULE_MODEL,             /* error: a model file breaks a rule (unknown name, cycle, bad value) */
    LP_RULE_UNMATCHED,         /* error: a phase started and never ended, or ended without a start */
    LP_RULE_GAP,               /* warning: monitoring samples much further apart than usual */
    LP_RULE_COUNT
} lp_rule;

typedef struct lp_diag {
    lp_severity sev;
    lp_rule rule;
    const char *file;     /* the input's name as given by the caller ("-" for stdin); owned by the sink */
    uint64_t line;        /* 1-based line, or 0 when not line-based */
    uint64_t offset;      /* byte offset for binary input (valid when line == 0 and has_offset) */
    int has_offset;
    char *msg;            /* owned by the sink */
} lp_diag;

typedef void (*lp_diag_fn)(void *ctx, const lp_diag *d);

typedef struct lp_diags {
    lp_diag *kept;                 /* the first `keep` diagnostics, in report order */
    size_t nkept, capkept, keep;
    uint64_t count[LP_RULE_COUNT]; /* every report, by rule */
    uint64_t nerrors, nwarnings, nnotes;
    char **files;                  /* interned copies of file names */
    size_t nfiles;
    lp_diag_fn fn;                 /* optional: called for every diagnostic */
    void *fnctx;
} lp_diags;

void lp_diags_init(lp_diags *ds, size_t keep);
void lp_diags_release(lp_diags *ds);

/* Report one diagnostic. Never fails: if memory runs out the message is only counted. */
void lp_diags_report(lp_diags *ds, lp_severity sev, lp_rule rule, const char *file,
                     uint64_t line, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Same, for binary input: position is a byte offset. */
void lp_diags_report_at(lp_diags *ds, lp_severity sev, lp_rule rule, const char *file,
                        uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Short name of a rule, stable, used in JSON output ("overlap", "recv-before-send", ...). */
const char *lp_rule_name(lp_rule r);
const char *lp_severity_name(lp_severity s);

/* Format one diagnostic as "file:line: error: msg [rule]" (or "file: byte N: ...")
 * into buf; returns the length it needed (like snprintf). */
int lp_diag_format(char *buf, size_t n, const lp_diag *d);

#endif
