/* inputs.h: the input files named on a command line, with directories expanded.
 *
 * lp_trace_load() accepts files and directories. A directory stands for the trace
 * files in it, in name order (subdirectories too, depth first; hidden entries are
 * skipped), except a rolling Spark event-log directory (spark.h), which is one input
 * read by the Spark importer as a whole. "-" (stdin) is kept as is.
 */
#ifndef LONGPOLE_INPUTS_H
#define LONGPOLE_INPUTS_H

#include <stddef.h>
#include "longpole/base/status.h"

typedef enum lp_input_kind {
    LP_INPUT_FILE = 0,      /* a file (or "-") */
    LP_INPUT_SPARK_DIR      /* a rolling Spark event-log directory */
} lp_input_kind;

typedef struct lp_input_item {
    char *path;             /* owned */
    lp_input_kind kind;
} lp_input_item;

/* Expand `paths` into *items (malloc'd; free with lp_inputs_free). Paths that do not
 * exist are kept (opening them reports the error). Directories nested deeper than 32
 * are an error (LP_ERR_LIMIT). */
lp_status lp_inputs_expand(const char *const *paths, size_t npaths, lp_input_item **items, size_t *nitems,
                           lp_error *err);
void lp_inputs_free(lp_input_item *items, size_t nitems);

#endif
