/* check.h: SnailTrail's instrumentation requirements (Appendix A.2).
 *
 * Property 1 (minimum in-degree): every vertex later than the earliest instant has an
 *   incoming edge. With gap filling, a violation is a worker whose timeline starts
 *   after the trace (or window) starts with no message received at that instant: an
 *   "out of the blue" event, meaning instrumentation is missing.
 * Property 2 (communication existence): at no time are all active workers waiting
 *   while no message is in flight (that would be a deadlock). A worker is active from
 *   its first to its last vertex. Checked on the open intervals between consecutive
 *   event instants; violations are reported as maximal intervals. Instants alone (a
 *   wait ending at the same instant another begins) are not reported.
 */
#ifndef LONGPOLE_CHECK_H
#define LONGPOLE_CHECK_H

#include <stdint.h>
#include <stddef.h>
#include "longpole/model/pag.h"

typedef struct lp_p1 {
    uint32_t worker;
    int64_t time;          /* the vertex with no incoming edge */
} lp_p1;

typedef struct lp_p2 {
    int64_t from, to;      /* maximal interval where all active workers wait, nothing in flight */
    uint32_t nactive;      /* active (and so waiting) workers */
} lp_p2;

typedef struct lp_check {
    lp_p1 *p1;
    size_t np1;
    lp_p2 *p2;
    size_t np2;
    int64_t p2_ns;         /* total time in Property 2 violations */
} lp_check;

/* Check a trace (or a window of one: pass lp_trace_window's result). */
lp_status lp_check_run(const lp_pag *g, lp_check *out, lp_error *err);
void lp_check_release(lp_check *c);

#endif
