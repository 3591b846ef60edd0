/* khull.h: the convex-hull bounds on the clock relation of two hosts (the method of
 * Duda et al. that Trace Compass's SyncAlgorithmFullyIncremental implements
 * incrementally; here computed exactly from all the packets at once).
 *
 * Points are (x, y) = (time on host U, time on host V) of one packet: a packet U -> V
 * gives (its send on U, its receive on V) and must lie on or ABOVE the line
 * y = a x + b that maps U's clock to V's (it arrived after it left); a packet V -> U
 * gives (its receive on U, its send on V) and must lie on or BELOW it. The lines that
 * respect every packet form a convex set of (a, b): its extreme slopes a_lo, a_hi are
 * set by two lines through one point of each kind (found on the lower hull of the
 * "above" points and the upper hull of the "below" points); the chosen line is the
 * middle of those two (mean slope and mean intercept, as Trace Compass), which is
 * feasible by convexity; at the chosen slope, b_lo..b_hi are the intercepts the packets
 * allow. Exact: hulls with 128-bit cross products on integer nanoseconds, slopes and
 * intercepts in long double relative to the first point (epoch nanoseconds need 61
 * bits). O(n log n).
 */
#ifndef LP_IMPORT_KERNEL_KHULL_H
#define LP_IMPORT_KERNEL_KHULL_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"

typedef struct khpt {
    int64_t x, y;
} khpt;

typedef enum khq {
    KH_NONE = 0,   /* no points */
    KH_ACCURATE,   /* both kinds: a and b bounded on both sides */
    KH_APPROX,     /* the slope is unbounded on one side (one kind of point only, or the
                      two kinds do not interleave): a = 1 when unbounded on both sides */
    KH_FAIL        /* no line respects every point */
} khq;

typedef struct khres {
    khq q;
    long double a, b;          /* the chosen line y = a x + b (raw coordinates) */
    long double a_lo, a_hi;    /* slope bounds (+-INFINITY when unbounded) */
    long double b_lo, b_hi;    /* intercepts allowed at the chosen slope (+-INFINITY: unbounded) */
    size_t nhull;              /* points on the two hulls */
} khres;

/* above[na]: points on or above the line; below[nb]: on or below. The arrays are
 * sorted in place. LP_ERR_NOMEM. */
lp_status lp_khull_fit(khpt *above, size_t na, khpt *below, size_t nb, khres *r, lp_error *err);

#endif
