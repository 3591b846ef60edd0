/* reqout.h: the output of `longpole requests` (cmd_requests.c runs the analyses): its
 * results and options in one view (reqout), printed as text tables (requests_text.c)
 * or one JSON document (requests_json.c). */
#ifndef LP_CLI_REQOUT_H
#define LP_CLI_REQOUT_H

#include "reqcli.h"
#include "base/util.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/analysis/mystery/reqpath.h"
#include "longpole/analysis/mystery/reqstats.h"

typedef struct reqout {
    const lp_causal *m;
    const lp_reqlog *rl;
    const uint32_t *map;      /* log segment -> model segment */
    const lp_reqcat *cat;
    const lp_reqstats *S;
    lp_reqpath *p;            /* scratch: one request's path (--per-request) */
    const char *model;        /* the model file; NULL: inferred from the logs */
    double share;             /* --outliers */
    uint64_t buckets;         /* --buckets */
    uint64_t top;             /* rows of the segment tables (UINT64_MAX: all) */
    int no_skew, per_request, data_errors;
    double n;                 /* requests analysed, at least 1 (the divisor of means) */
    int64_t cp_total, dur_total; /* critical path and summed delay over all categories */
} reqout;

/* Everything, as text or JSON; fails only computing --per-request's paths. */
lp_status requests_text(const reqout *rx, lp_error *err);
lp_status requests_json(const reqout *rx, lp_error *err);
/* One request (--request ID). */
void requests_text_request(const lp_reqpath *p, const lp_causal *m, const lp_reqlog *rl, uint64_t r,
                           const lp_reqcat *cat);
void requests_json_request(lp_jsonw *j, const lp_reqpath *p, const lp_causal *m, const lp_reqlog *rl, uint64_t r);
/* A duration in ns ("-" when not finite). */
const char *reqout_dur(double ns, char *buf, size_t n);

#endif
