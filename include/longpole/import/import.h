/* import.h: the interface of an importer of a foreign trace format (the registry of
 * them is in load.h).
 *
 * An importer turns one input stream into records of an lp_builder (so several files,
 * even of different formats, can feed one trace). It reports every record it cannot
 * use to the builder's diagnostics (rule LP_RULE_IMPORT, or a more precise one) with
 * the file and line or byte offset, and keeps going. Detection looks at the first
 * bytes of the decompressed input (and the file name only as a tie-breaker); the
 * importer with the highest score above 0 wins. `longpole convert --format NAME`
 * forces one. Adding a format: one file in src/import/, one entry in src/load/registry.c (load.h).
 */
#ifndef LONGPOLE_IMPORT_H
#define LONGPOLE_IMPORT_H

#include <stddef.h>
#include "longpole/formats/lpt.h"

typedef struct lp_importer {
    const char *name;         /* "jaeger", "zipkin", ... (used by --format) */
    const char *description;  /* one line for `longpole help formats` */
    /* Score 0..100 for how sure the importer is that `head` (the first bytes of the
     * decompressed input) starts a file it reads; `path` may be NULL. */
    int (*detect)(const unsigned char *head, size_t n, const char *path);
    /* Read the whole input into the builder. */
    lp_status (*read)(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err);
} lp_importer;

#endif
