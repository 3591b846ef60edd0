/* spanfmt.h: the interface of a span-format reader (Jaeger, Zipkin, OTLP: src/import/spans/),
 * which fills a span table (span.h); and spans as an activity graph for the trace
 * importers (spans_graph.c). The table of formats and loading of files is in load.h.
 */
#ifndef LONGPOLE_IMPORT_SPANFMT_H
#define LONGPOLE_IMPORT_SPANFMT_H

#include "longpole/model/span.h"
#include "longpole/formats/lpt.h"

/* A reader of one span format (src/import/spans/jaeger.c, zipkin.c, otlp.c). The same
 * readers back the activity-graph importers of import.h (src/import/spans/spans_graph.c). */
typedef struct lp_span_format {
    const char *name;                 /* as in import.h: "jaeger", "zipkin", "otlp" */
    int (*detect)(const unsigned char *head, size_t n, const char *path);
    /* Read one input into the table (lp_spans_source already called). Data problems go
     * to the diagnostics; only resource failures fail. */
    lp_status (*read)(lp_spans *sp, lp_input *in, const lp_load_opts *opts, lp_error *err);
} lp_span_format;

/* Add a finished table's spans to a builder as workers, activities and messages
 * (docs/formats/spans.md). */
lp_status lp_spans_to_builder(const lp_spans *sp, lp_builder *b, lp_error *err);

#endif
