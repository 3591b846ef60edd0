/* spanjson.h: what the JSON span importers (jaeger.c, zipkin.c, otlp.c) share: the
 * counters of skipped records with their reasons (summarised once per file), and
 * messages about wrong fields. (Detection looks at the head with lp_json_head_tokens,
 * codec/json.h.) Internal.
 */
#ifndef LP_IMPORT_SPANJSON_H
#define LP_IMPORT_SPANJSON_H

#include "longpole/codec/json.h"
#include "longpole/model/span.h"
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/spanfmt.h"

/* Why a record was skipped. */
typedef enum lp_skip_reason {
    LP_SKIP_JSON = 0,   /* not valid JSON (bad UTF-8, bad escape, bad number, syntax) */
    LP_SKIP_SHAPE,      /* not an object where a span or trace was expected */
    LP_SKIP_NO_ID,      /* no span id */
    LP_SKIP_NO_TRACE,   /* no trace id */
    LP_SKIP_FIELD,      /* a field of the wrong type or out of range */
    LP_SKIP_TIME,       /* no usable start time */
    LP_SKIP_UNSUPPORTED,/* a format variant that is not read (Zipkin v1) */
    LP_SKIP_NREASONS
} lp_skip_reason;

typedef struct lp_span_import {
    lp_spans *sp;
    const char *format;                /* "jaeger", ... for the summary */
    uint64_t nspans;                   /* spans added from this file */
    uint64_t skipped[LP_SKIP_NREASONS];
    int fatal;                         /* the file ended early (truncated, corrupt) */
    /* one-entry cache of the last trace id text */
    char lasttrace[80];
    size_t lasttracelen;
    uint32_t lasttraceidx;
} lp_span_import;

void lp_span_import_init(lp_span_import *im, lp_spans *sp, const char *format);
/* A skipped record: counted, and reported (error) at the node's position. */
void lp_span_import_skip(lp_span_import *im, lp_skip_reason why, const lp_json *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A bad JSON event: counted and reported at its position. */
void lp_span_import_bad(lp_span_import *im, const lp_json_ev *ev);
/* A record delivered with mended strings (repair mode): one warning at the first. */
void lp_span_import_repaired(lp_span_import *im, const lp_json_ev *ev);
/* The per-file note: spans read and records skipped, by reason (only if any skipped). */
void lp_span_import_summary(lp_span_import *im);
/* Trace index for a trace id string node (cached). -1 (reported by the caller) if the
 * node is not a non-empty string. */
lp_status lp_span_import_trace(lp_span_import *im, const lp_json *v, uint32_t *trace, int *ok, lp_error *err);
/* Progress: called now and then with the bytes consumed. */
int lp_span_import_progress(const lp_load_opts *opts, lp_input *in, uint64_t *counter);

/* The importer of a span format into a builder: read into a span table, finish it,
 * map it (spans_graph.c). */
lp_status lp_spans_import(lp_builder *b, lp_input *in, const lp_span_format *f, const lp_load_opts *opts,
                          lp_error *err);

#endif
