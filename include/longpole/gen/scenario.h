/* scenario.h: presets of the dataflow generator (gen.h) that reproduce SnailTrail's use
 * cases (§7.5, on Dhalion's WordCount benchmark: source -> flatmap -> count, the count
 * keyed by word), for `longpole generate dataflow --scenario NAME` and the integration
 * tests of the critical-participation summaries (docs/analyses/critical-participation.md).
 *
 *  skew30, skew50, skew80   "Detecting skew": parallelism 4 everywhere, 30/50/80% of the
 *                           words go to one key, so count.0 is hot; the straggler
 *                           summary names count.0 in every window.
 *  flatmap-424, flatmap-124, flatmap-444
 *                           "Optimizing operator parallelism": the flatmap stage
 *                           under-provisioned (4-2-4), then the source slowed to one
 *                           worker (1-2-4: the flatmap is still the bottleneck), then
 *                           re-scaled (4-4-4): the operator summary ranks flatmap first
 *                           in the first two and no longer in the third.
 * Each preset starts from lp_gen_dataflow_defaults and sets operators, costs, rate and
 * skew; duration 10 s, seed 1 (callers may change any field afterwards). The model and
 * why these parameters make the effects appear: src/gen/scenarios.c.
 */
#ifndef LONGPOLE_SCENARIO_H
#define LONGPOLE_SCENARIO_H

#include <stddef.h>
#include "longpole/gen/gen.h"

typedef struct lp_gen_scenario {
    const char *name;        /* e.g. "skew30" */
    const char *about;       /* one line: the paper's setting */
    const char *expect;      /* one line: what the summaries should show */
} lp_gen_scenario;

/* The presets, in order; *n receives their number. */
const lp_gen_scenario *lp_gen_scenarios(size_t *n);
/* Reset o to the named preset. LP_ERR_ARG (naming the presets) if unknown. */
lp_status lp_gen_scenario_apply(lp_gen_dataflow *o, const char *name, lp_error *err);

#endif
