/* chrome_export.h: any trace as Chrome Trace Event Format JSON, for Perfetto UI and
 * chrome://tracing, with its critical path marked (docs/export.md).
 *
 * Mapping: every worker is a thread (its name is the thread name; workers with a
 * `host` attribute, else a `pid` attribute, are grouped into one process per value);
 * every activity is an X event (name: the operator, or the type when there is none;
 * cat: the type; args: the attributes), gaps included as X events marked derived; every
 * message is a flow (s on the sender at the send, f with bp:"e" on the receiver at the
 * receive; args: the attributes); the critical path is its own process/track
 * ("critical path") with one X event per element, its messages are also drawn as flows
 * of category "longpole.critical_path", and every activity on it carries
 * args["longpole.critical_ns"] (its time on the path), so searching "critical" finds
 * it. Timestamps are exact: nanoseconds written as microseconds with up to three
 * decimals. Output is streamed (no document is built in memory).
 *
 * Re-import: the chrome importer skips events marked args["longpole.derived"] (gaps and
 * the critical-path track), flows of category longpole.*, and args named longpole.*; it
 * takes args["longpole.msg_id"] as the message id, args["longpole.no_op"] as "no
 * operator" and a thread_name's args["longpole.name"] as the exact worker name (names
 * with leading or trailing blanks): exporting a trace and importing the result gives the
 * same workers (those with activities), activities (times, types, operators,
 * attributes) and messages.
 */
#ifndef LONGPOLE_CHROME_EXPORT_H
#define LONGPOLE_CHROME_EXPORT_H

#include <stdio.h>
#include "longpole/model/trace.h"
#include "longpole/analysis/critical-path/cpath.h"

typedef struct lp_chrome_export_opts {
    const lp_cpath *cp;      /* the critical path to mark (of this trace), or NULL */
    int no_gaps;             /* leave gap activities out */
    const char *source;      /* written as otherData.source (e.g. the input's name), or NULL */
} lp_chrome_export_opts;

/* Write `t` to `out` (compact JSON, one event per line). opts may be NULL. Only
 * LP_ERR_IO (a write failed) or LP_ERR_NOMEM are returned. */
lp_status lp_chrome_export(const lp_trace *t, FILE *out, const lp_chrome_export_opts *opts, lp_error *err);

#endif
