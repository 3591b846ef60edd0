/* g10json.h: a Grade10 analysis as JSON (docs/analyses/grade10.md "Output"): the run,
 * every adjustment made to the input, each resource timeline's totals, per phase type
 * and resource the attributed usage and bottleneck time (paper Fig. 4), the issues
 * with their replayed gains (Fig. 5), and optionally every phase instance with its
 * usage rolled up the hierarchy. Written with base/jsonw. */
#ifndef LONGPOLE_ANALYSIS_GRADE10_G10JSON_H
#define LONGPOLE_ANALYSIS_GRADE10_G10JSON_H

#include <stdio.h>
#include "longpole/base/jsonw.h"
#include "longpole/analysis/grade10/attrib.h"
#include "longpole/analysis/grade10/issues.h"

/* The object of one analysis into j. `is` may be NULL (no issues); `phases`: also the
 * array of every instance (its rolled-up usage and bottleneck time per resource). */
lp_status lp_g10_json(lp_jsonw *j, const lp_g10_attr *a, const lp_g10_issues *is, int phases, lp_error *err);

/* The name of a rule kind ("none", "exact", "variable", "full"), a repetition ("once",
 * "sequential", "concurrent"), a mode ("slices", "events"), an issue kind. */
const char *lp_g10_rule_name(uint8_t kind);
const char *lp_g10_repeat_name(uint8_t repeat);
const char *lp_g10_mode_name(int mode);
const char *lp_g10_issue_name(uint8_t kind);

#endif
