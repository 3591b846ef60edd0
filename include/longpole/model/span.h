/* span.h: the spans of distributed traces (Jaeger, Zipkin v2, OpenTelemetry), as the
 * span importers read them: a columnar table kept beside the activity graph, because
 * the span-tree critical path (spancp.h) works on the tree itself. The mapping of spans
 * into workers, activities and messages is documented in docs/formats/spans.md.
 *
 * Life of a table: lp_spans_init; the importers add spans (lp_spans_add) and extra
 * references (lp_spans_add_ref) from any number of files (lp_spans_source names the
 * file for diagnostics); lp_spans_finish groups the spans by trace and resolves the
 * trees, reporting every problem to the diagnostics sink with file, line and byte
 * offset: duplicate span ids (the later span is dropped), Zipkin shared spans (the
 * SERVER half of an RPC that reuses its CLIENT's id becomes the client's child),
 * Zipkin spans sent in several parts (merged, as Zipkin does), orphans (a parent
 * that is not in the trace: the span becomes a root of its own),
 * parent cycles (the link that closes the cycle is dropped), spans without a
 * timestamp or duration (placed from their children), negative durations (likewise).
 * Then per trace one root is chosen (a span without parent reference; else the
 * earliest orphan) and children lists are built.
 *
 * Invariants after lp_spans_finish: spans are grouped by trace in `order`; every kept
 * span has start <= start + dur (dur >= 0); parent links form a forest (no cycles,
 * parent in the same trace); kids[kfirst[i] .. kfirst[i+1]) are the kept children of
 * span i in input order. Times are int64 ns (Jaeger and Zipkin's microseconds are
 * multiplied by 1000). Memory: about 70 bytes per span plus the names, and about 30
 * more while finishing.
 */
#ifndef LONGPOLE_SPAN_H
#define LONGPOLE_SPAN_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/base/strtab.h"
#include "longpole/base/diag.h"
#include "longpole/model/trace.h"

typedef enum lp_span_kind {
    LP_SPAN_UNSPECIFIED = 0,
    LP_SPAN_INTERNAL,
    LP_SPAN_SERVER,
    LP_SPAN_CLIENT,
    LP_SPAN_PRODUCER,
    LP_SPAN_CONSUMER
} lp_span_kind;

/* span flags */
#define LP_SPAN_HAS_PARENT 0x01u   /* names a parent (pid is valid) */
#define LP_SPAN_FOLLOWS 0x02u      /* the parent reference is FOLLOWS_FROM (not waited on) */
#define LP_SPAN_SHARED 0x04u       /* Zipkin shared span: the server half of an RPC (its id is the client's) */
#define LP_SPAN_NO_START 0x08u     /* no timestamp in the input (placed from its children) */
#define LP_SPAN_NO_DURATION 0x10u  /* no (or a negative) duration in the input (end from its children) */
#define LP_SPAN_IDTEXT 0x20u       /* the id is not hexadecimal: id is a hash, idtext holds the text */
#define LP_SPAN_DROPPED 0x40u      /* dropped by lp_spans_finish (reported) */
#define LP_SPAN_ORPHAN 0x80u       /* its parent is not in the trace (or closed a cycle): a root of its own */
#define LP_SPAN_PARTS 0x100u       /* the format sends a span in parts (Zipkin): a second span with its id, the
                                      same shared flag and a compatible service and kind is merged into it */
#define LP_SPAN_MERGED 0x200u      /* dropped because it was merged into an earlier part (with DROPPED) */

/* Types of references besides the parent. */
typedef enum lp_span_ref_type {
    LP_REF_FOLLOWS_FROM = 1,  /* Jaeger/OpenTracing FOLLOWS_FROM (a second reference) */
    LP_REF_CHILD_OF = 2,      /* a second CHILD_OF reference (kept as a link) */
    LP_REF_LINK = 3           /* OpenTelemetry link */
} lp_span_ref_type;

typedef struct lp_span_ref {
    uint32_t span;     /* the referring span */
    uint32_t trace;    /* trace of the target */
    uint64_t id;       /* target span id */
    uint32_t target;   /* after finish: the target span, LP_SPAN_NONE if not in the input */
    uint8_t type;      /* lp_span_ref_type */
} lp_span_ref;

#define LP_SPAN_NONE UINT32_MAX

/* One span as an importer hands it over. */
typedef struct lp_span_rec {
    uint32_t trace;       /* from lp_spans_trace() */
    uint64_t id;          /* from lp_spans_id() */
    uint64_t pid;         /* parent id (with LP_SPAN_HAS_PARENT) */
    lp_str idtext;        /* id text when LP_SPAN_IDTEXT, else LP_STR_NONE */
    lp_str service, op;   /* interned in the table's strtab (LP_STR_EMPTY if unknown) */
    int64_t start, dur;   /* ns */
    uint8_t kind;         /* lp_span_kind */
    uint16_t flags;       /* LP_SPAN_HAS_PARENT, FOLLOWS, SHARED, NO_START, NO_DURATION, PARTS */
    uint64_t off, line;   /* where the span is in its file */
} lp_span_rec;

typedef struct lp_spans {
    lp_strtab strs;       /* services, operations, trace ids, non-hex span ids */
    lp_diags *diags;      /* where problems go (not owned) */

    size_t n, cap;        /* spans */
    uint32_t *trace;      /* trace index */
    uint64_t *id;         /* span id: hex value, or a hash of the text (LP_SPAN_IDTEXT) */
    uint64_t *pid;        /* parent id as given */
    lp_str *idtext;       /* allocated once a non-hex id appears; LP_STR_NONE for hex ids */
    lp_str *service, *op;
    int64_t *start, *dur; /* ns */
    uint8_t *kind;
    uint16_t *flags;
    uint64_t *off;        /* byte offset in its file */
    uint32_t *line;       /* line in its file */
    uint16_t *src;        /* file index */

    size_t ntraces, captraces;
    lp_str *trace_id;     /* trace id, normalised (hex: lower case, no leading zeros): the key */
    lp_str *trace_text;   /* trace id as first seen in the input: for output */
    struct lp_hmap32 *tmap; /* trace_id -> trace index (the library's hash table, base/hashmap.h) */

    lp_span_ref *refs;    /* references other than the parent */
    size_t nrefs, caprefs;

    char **files;         /* input names */
    uint16_t nfiles, cursrc;

    /* filled by lp_spans_finish */
    int finished;
    uint32_t *order;      /* [n] span indices grouped by trace, input order within a trace */
    uint64_t *tfirst;     /* [ntraces+1]: the spans of trace t are order[tfirst[t] .. tfirst[t+1]) */
    uint32_t *root;       /* [ntraces] the chosen root span, LP_SPAN_NONE if the trace has none left */
    uint32_t *parent;     /* [n] parent span or LP_SPAN_NONE */
    uint32_t *kfirst;     /* [n+1] children ranges in kids */
    uint32_t *kids;       /* children, input order */
    uint64_t nkept;       /* spans not dropped */
    uint64_t ndup, nmerged, nshared, norphan, ncycle, nnotime, nroots_extra; /* what finish found */
} lp_spans;

void lp_spans_init(lp_spans *sp, lp_diags *diags);
void lp_spans_release(lp_spans *sp);

/* Name the file the next spans come from. */
lp_status lp_spans_source(lp_spans *sp, const char *name, lp_error *err);
const char *lp_spans_file(const lp_spans *sp, uint32_t span);

/* The trace with this id text (created on first use). Hex ids are normalised, so
 * "00ab" and "AB" are one trace. */
lp_status lp_spans_trace(lp_spans *sp, const char *s, size_t n, uint32_t *trace, lp_error *err);
/* Encode a span id: a hex text of at most 16 significant digits is its value (*text =
 * LP_STR_NONE); anything else is hashed and its text interned (*text set). Returns -1
 * for an empty id. */
int lp_spans_id(lp_spans *sp, const char *s, size_t n, uint64_t *id, lp_str *text);
/* Intern a name (service, operation). LP_STR_NONE on out of memory. */
lp_str lp_spans_name(lp_spans *sp, const char *s, size_t n);

lp_status lp_spans_add(lp_spans *sp, const lp_span_rec *rec, lp_error *err);
/* A reference of the last added span to span `id` of trace `trace`. */
lp_status lp_spans_add_ref(lp_spans *sp, uint32_t trace, uint64_t id, lp_span_ref_type type, lp_error *err);

/* Report a problem of the current file at a position ("byte N: ..."). */
void lp_spans_report(lp_spans *sp, lp_severity sev, uint64_t off, uint64_t line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Group, resolve and check (see the header comment). Only resource failures fail. */
lp_status lp_spans_finish(lp_spans *sp, lp_error *err);

/* Is child c waited on by its parent? No for FOLLOWS_FROM and for a CONSUMER under a
 * PRODUCER (asynchronous messaging, as in Jaeger UI); yes otherwise. */
static inline int lp_spans_blocking(const lp_spans *sp, uint32_t c, uint32_t p)
{
    if (sp->flags[c] & LP_SPAN_FOLLOWS)
        return 0;
    return !(sp->kind[p] == LP_SPAN_PRODUCER && sp->kind[c] == LP_SPAN_CONSUMER);
}

static inline int64_t lp_spans_end(const lp_spans *sp, uint32_t i) { return sp->start[i] + sp->dur[i]; }

/* Does a child running [cs, ce] fall inside a parent running [S, E] in the sense of
 * the span critical path (Jaeger UI's rule)? Not if it starts at or after the parent's
 * end, nor if it starts before the parent and ends at or before the parent's start;
 * otherwise it is kept (and clipped to the parent). */
static inline int lp_spans_within(int64_t cs, int64_t ce, int64_t S, int64_t E)
{
    return cs >= S ? cs < E : ce > S;
}

/* The span's id as text (hex, 16 digits, or the original text), with ":server" for the
 * server half of a shared span. Returns buf. */
const char *lp_spans_idstr(const lp_spans *sp, uint32_t i, char *buf, size_t size);
const char *lp_spans_kind_name(lp_span_kind k);
static inline const char *lp_spans_str(const lp_spans *sp, lp_str s) { return lp_strtab_get(&sp->strs, s); }
/* The trace id of trace t as it was written in the input. */
static inline const char *lp_spans_trace_text(const lp_spans *sp, uint32_t t)
{
    return lp_strtab_get(&sp->strs, sp->trace_text[t]);
}

/* ---- activity graphs made from spans (span_trace.c; docs/formats/spans.md) ---------- */

/* Is worker w of t a span as the span importers map one (attributes `service` and
 * `operation`)? Then 1, with the names (borrowed from t; either pointer may be NULL). */
int lp_trace_worker_span(const lp_trace *t, uint32_t w, const char **service, const char **operation);
/* Is every worker of t a span (a span trace: its whole-trace critical path is not the
 * request's path of spancp.h)? 0 for a trace without workers. */
int lp_trace_is_spans(const lp_trace *t);
/* A worker's name for people: "service operation" for a span, else the worker's name.
 * Returns buf or the name. */
const char *lp_trace_worker_label(const lp_trace *t, uint32_t w, char *buf, size_t n);

#endif
