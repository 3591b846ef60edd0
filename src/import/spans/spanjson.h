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
    /* nested streaming (codec/json.h, lp_json_opts): the arrays whose huge elements are
     * streamed (a Jaeger trace of "data"), and the arrays streamed inside them */
    const char *const *nest_keys, *const *nest_stream;
    /* strings mended inside the element being streamed: one warning for all of them at
     * its end, as for a record read whole */
    unsigned nestd, held;
    uint64_t hoff, hline;
    char hmsg[200];
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

/* Elements larger than this are streamed when the format asks for it (nest_keys), and
 * the reader starts with a buffer of LP_SPAN_BUFSIZE: 128 KiB and 256 KiB, so that the
 * memory of an import is a few hundred KiB beside the span table whatever the size of
 * one trace (on machines where fresh memory is slow, the 4 MiB buffer and the nodes of
 * a first attempt at a huge trace were most of a 10 k-span import). The tree path
 * (every element read whole, as before nested streaming) is the naive twin of the
 * differential tests, which set nest_min to 0 (off) or to 1 (every element that can
 * be streamed is). */
#define LP_SPAN_NEST_MIN ((size_t)128 << 10)
#define LP_SPAN_BUFSIZE ((size_t)256 << 10)
extern size_t lp_span_import_nest_min;
/* The reader's first buffer; the tests make it small so that elements cross refills
 * and the nesting is decided on partial data. */
extern size_t lp_span_import_bufsize;

/* The event loop of every JSON span importer: a streaming reader over `in` in repair
 * mode with the format's stream keys (NULL: none); mended strings and bad records are
 * reported and counted here, progress reported and cancellation honoured; every other
 * event goes to fn. At the end of the input fn gets NULL (to settle what waited for the
 * end of the file), then the per-file summary is reported. */
typedef lp_status (*lp_span_import_fn)(void *ctx, const lp_json_ev *ev);
lp_status lp_span_import_run(lp_span_import *im, lp_input *in, const char *const *keys, const lp_load_opts *opts,
                             lp_span_import_fn fn, void *ctx, lp_error *err);

/* The id of a span from its id node (`what` names it in messages: "a spanID", "an id"):
 * 0 with r->id and r->idtext set, or 1 when it is not a non-empty string (the record
 * is skipped and reported, at the node or else at the span n). */
int lp_span_import_id(lp_span_import *im, const lp_json *n, const lp_json *id, const char *what, lp_span_rec *r);
/* The trace of span `sid` from its trace id node (`field` names it in messages): LP_OK
 * with *skipped 0 and r->trace set, or *skipped 1 when it is not a non-empty string
 * (the record is skipped and reported); a resource error otherwise. */
lp_status lp_span_import_trace_of(lp_span_import *im, const lp_json *n, const lp_json *tr, const char *field,
                                  const char *sid, lp_span_rec *r, int *skipped, lp_error *err);
/* The duration of span `sid` in microseconds: absent or null sets LP_SPAN_NO_DURATION;
 * negative is reported and the end is taken from the children; 1 when it is not an
 * integer (the record is skipped and reported), else 0. */
int lp_span_import_duration(lp_span_import *im, const lp_json *du, const char *sid, lp_span_rec *r);

/* Microseconds (an integer number, a number with a zero fraction, or an integer in a
 * string) to ns: 0, or -1 if it is none of these or out of range. */
static inline int lp_span_import_us(const lp_json *v, int64_t *ns)
{
    int64_t us;
    if (lp_json_i64(v, &us) && lp_json_i64_lenient(v, &us)) /* (the first: the common case, fast) */
        return -1;
    if (us > INT64_MAX / 1000 || us < INT64_MIN / 1000)
        return -1;
    *ns = us * 1000;
    return 0;
}

/* The importer of a span format into a builder: read into a span table, finish it,
 * map it (spans_graph.c). */
lp_status lp_spans_import(lp_builder *b, lp_input *in, const lp_span_format *f, const lp_load_opts *opts,
                          lp_error *err);

#endif
