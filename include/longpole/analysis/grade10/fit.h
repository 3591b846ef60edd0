/* fit.h: Variable weights fitted to the monitoring, so a user gets attribution rules
 * without writing them (what GradeML, Grade10's successor, does: non-negative least
 * squares of the observed usage on the activity of each phase type).
 *
 * For one consumable resource: every monitoring window i of every host gives an
 * observation y_i = max(0, mean usage - the mean Exact demand of the phases whose
 * rules the user wrote), and a row of the activity of each fitted phase type (the sum,
 * over its leaf instances on that host, of the share of the window they were active)
 * plus one column for the user's own Variable demand. The non-negative weights w
 * minimising |A w - y| are the Variable weights of the fitted types, in capacity units
 * per active instance (e.g. cores per thread). Fitted types are those whose rule on
 * the resource came from the model's default, not from a `rule` line.
 */
#ifndef LONGPOLE_ANALYSIS_GRADE10_FIT_H
#define LONGPOLE_ANALYSIS_GRADE10_FIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "longpole/analysis/grade10/attrib.h"

/* Non-negative least squares (Lawson and Hanson) on the normal equations: minimise
 * x'Gx - 2h'x over x >= 0, G (k x k, row-major, symmetric positive semi-definite) and
 * h given; x[k] out. Returns the iterations used, or -1 if they ran out (x is then the
 * best found). */
int lp_g10_nnls(size_t k, const double *G, const double *h, double *x);

typedef struct lp_g10_fit {
    uint32_t res;
    uint32_t ntypes;         /* the model's */
    double *weight;          /* [ntypes] fitted Variable weight (valid where fitted[t]) */
    uint8_t *fitted;         /* [ntypes] */
    double user_scale;       /* the weight of the user's own Variable demand column */
    double residual;         /* |A w - y| / |y| over the windows (0 when y = 0) */
    uint64_t windows;        /* observations */
} lp_g10_fit;

/* Fit the Variable weights of resource r. The attribution gives the phases, their
 * hosts, their active time and the model; d its monitoring. LP_ERR_DATA if r is not a
 * consumable resource or no window overlaps the run. */
lp_status lp_g10_fit_rules(const lp_g10_attr *a, const lp_g10_data *d, uint32_t r, lp_g10_fit *out, lp_error *err);
void lp_g10_fit_release(lp_g10_fit *f);
/* The fitted weights as model `rule` lines (one per fitted type, in type order). */
void lp_g10_fit_write(FILE *f, const lp_g10_model *m, const lp_g10_fit *fit);

#endif
