/* lpt.h: the native trace formats: text (.lpt v1, MODEL.md and docs/formats/lpt.md) and
 * binary (.lptb v1, docs/formats/lptb.md), and the reading options every trace reader
 * (native or foreign, import.h) takes.
 */
#ifndef LONGPOLE_FORMATS_LPT_H
#define LONGPOLE_FORMATS_LPT_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "longpole/base/status.h"
#include "longpole/base/progress.h"
#include "longpole/codec/io.h"
#include "longpole/model/trace.h"

typedef enum lp_format {
    LP_FORMAT_AUTO = 0,
    LP_FORMAT_LPT,    /* native text */
    LP_FORMAT_LPTB,   /* native binary */
    LP_FORMAT_FOREIGN /* anything an importer registers (see import.h) */
} lp_format;

typedef struct lp_load_opts {
    lp_builder_opts build;   /* passed to the builder */
    lp_progress_fn progress; /* optional */
    void *progress_ctx;
    const char *format;      /* NULL/"auto", "lpt", "lptb", or an importer's name */
} lp_load_opts;

/* Feed one text stream into a builder (several files may feed one builder). Data
 * problems go to the builder's diagnostics; only resource errors return an error. */
lp_status lp_lpt_read(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err);

/* Write a trace as .lpt v1 text: header, W records for every worker (in id order),
 * A records by worker and start (gap activities omitted), then the messages in message
 * order: M records, or S/R pairs for messages that were read as halves (one S per
 * sender, receiver and id; an R per receive). Reading the result back gives an equal
 * trace. */
lp_status lp_lpt_write(const lp_trace *t, FILE *out, lp_error *err);

/* Binary form: read a whole trace (validated: ids, ordering, tiling, checksum). */
lp_status lp_lptb_read(lp_input *in, lp_trace **out, lp_diags *diags, const lp_load_opts *opts, lp_error *err);
lp_status lp_lptb_write(const lp_trace *t, FILE *out, lp_error *err);
/* Magic at the start of every .lptb file. */
#define LP_LPTB_MAGIC "LPTB\r\n\032\n"
#define LP_LPTB_VERSION 1u

/* Write to a path, choosing text or binary by `binary`; "-" writes to stdout. If
 * `compress` is LP_COMP_GZIP or LP_COMP_ZSTD, the output is compressed. */
lp_status lp_trace_save(const lp_trace *t, const char *path, int binary, lp_compression compress, lp_error *err);

#endif
