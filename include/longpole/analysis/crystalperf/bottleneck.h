/* bottleneck.h: the bottleneck resource of the critical path and the per-operation
 * breakdown (CrystalPerf §4.2): the resource time of every element of the whole-trace
 * critical path (analysis/critical-path), summed; the resource with the most time among
 * cpu, disk and net is the bottleneck. src/analysis/crystalperf/bottleneck.c.
 *
 * An activity part on the path takes its activity's vector (profile.h) times the part's
 * length; a message takes net when its two workers name different hosts (host=), else
 * wait (a hand-over inside one host: queueing, not a device). `coverage` is the share of
 * the path's time that evidence explains; below one half the answer is partial and
 * says so (lp_cpf_bottleneck.partial).
 */
#ifndef LONGPOLE_CRYSTALPERF_BOTTLENECK_H
#define LONGPOLE_CRYSTALPERF_BOTTLENECK_H

#include "longpole/analysis/critical-path/cpath.h"
#include "longpole/analysis/crystalperf/profile.h"

typedef struct lp_cpf_oprow {
    lp_str op;                   /* operator, or LP_STR_NONE (activities without one) */
    int message;                 /* 1: the row of messages */
    double path[LP_RES_N];       /* ns on the critical path by resource */
    double all[LP_RES_N];        /* ns in the whole trace (every activity) by resource */
    int64_t path_ns, all_ns;
} lp_cpf_oprow;

typedef struct lp_cpf_bottleneck {
    double path[LP_RES_N];       /* ns of the path by resource */
    double all[LP_RES_N];        /* ns of every activity by resource */
    int64_t path_total;
    double coverage;             /* of the path's time explained by evidence */
    int bottleneck;              /* LP_RES_CPU/DISK/NET, or -1 without evidence */
    int partial;                 /* coverage < 0.5 */
    double (*elem)[LP_RES_N];    /* [cp->n] each path element's vector */
    size_t nelem;
    lp_cpf_oprow *ops;           /* by path time, then whole-trace time */
    size_t nops;
} lp_cpf_bottleneck;

lp_status lp_cpf_bottleneck_compute(const lp_cpf_profile *p, const lp_cpath *cp, lp_cpf_bottleneck *out,
                                    lp_error *err);
void lp_cpf_bottleneck_release(lp_cpf_bottleneck *b);

#endif
