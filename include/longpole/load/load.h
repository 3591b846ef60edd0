/* load.h: loading traces from files: detection of each input's format (native text or
 * binary, or a registered importer, import.h), directories expanded (inputs.h), several
 * inputs merged into one trace; and the registries of importers and span formats.
 * Adding a format: one file in src/import/, one entry in src/load/registry.c.
 */
#ifndef LONGPOLE_LOAD_LOAD_H
#define LONGPOLE_LOAD_LOAD_H

#include <stddef.h>
#include "longpole/base/status.h"
#include "longpole/base/diag.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/import.h"
#include "longpole/import/spanfmt.h"

/* Load one or more files into one trace: native text or binary (by content), or any
 * registered importer. Several files are merged (worker names are global); whether
 * they belong together is runs.h's question. A binary file can only be loaded alone. Data problems are reported to `diags`. */
lp_status lp_trace_load(const char *const *paths, size_t npaths, const lp_load_opts *opts, lp_diags *diags,
                        lp_trace **out, lp_error *err);

/* What input no reader recognises looks like, as a clause for the refusal ("it looks
 * like part of a CTF trace ..."), from its first n bytes (sniff.c); NULL when head is
 * empty or only white space. Writes into buf. */
const char *lp_input_sniff(const void *head, size_t n, char *buf, size_t nbuf);
/* Do these first bytes start a CTF metadata or stream file? */
int lp_input_is_ctf(const void *head, size_t n);

/* ---- the registries (registry.c) ----------------------------------------------- */

/* All registered importers, NULL-terminated. */
const lp_importer *const *lp_importers(void);
/* By name; NULL if unknown. */
const lp_importer *lp_importer_find(const char *name);
/* Best importer for this head, or NULL if none scores above 0. */
const lp_importer *lp_importer_detect(const unsigned char *head, size_t n, const char *path);

/* The span formats (jaeger, zipkin, otlp), NULL-terminated; by name; by detection (the
 * format that recognises this input best, or NULL: score 0 everywhere). */
const lp_span_format *const *lp_span_formats(void);
const lp_span_format *lp_span_format_find(const char *name);
const lp_span_format *lp_span_format_detect(const unsigned char *head, size_t n, const char *path);

/* Read files (directories are expanded by lp_inputs_expand, inputs.h) into the table
 * with the named format or by detection; then lp_spans_finish. A file no format
 * recognises is reported and skipped. */
lp_status lp_spans_load(lp_spans *sp, const char *const *paths, size_t npaths, const char *format,
                        const lp_load_opts *opts, lp_error *err);

#endif
