/* path.h: the resources of a critical path's phases (papers/grade10.txt §III, issue 15:
 * "on a critical path, the resource breakdown of the path's phases"). The critical path
 * of a trace says which activities the run waited for; Grade10's attribution says which
 * resource each phase used and when it was bottlenecked. Joined, they say what the path
 * itself was made of: how much CPU (network, disk...) its phases used, and for how much
 * of the path they were bottlenecked on each resource, i.e. what a faster resource
 * would shorten first.
 *
 * Definition: for every activity element of the path that is a leaf phase (a phase built
 * from that trace activity: lp_g10_exec.src), the part of the phase on the path
 * (element length / phase length, 1 for a whole activity) scales the phase's attributed
 * usage and bottleneck time of each resource; path time on activities that are no phase
 * (unknown types, messages, gaps) is counted apart, never dropped. Invariant: on_path_ns
 * = phase_ns + other_ns, and each resource's bottleneck time <= the path time on phases
 * using it.
 */
#ifndef LONGPOLE_ANALYSIS_GRADE10_PATH_H
#define LONGPOLE_ANALYSIS_GRADE10_PATH_H

#include <stdint.h>
#include "longpole/analysis/critical-path/cpath.h"
#include "longpole/analysis/grade10/attrib.h"

typedef struct lp_g10_pathres {
    int64_t with_ns;         /* path time on phases with a rule on this resource */
    double used;             /* attributed usage on the path (capacity units x s; consumable) */
    int64_t bn_ns;           /* path time bottlenecked on it (consumable) or blocked by it (blocking) */
} lp_g10_pathres;

typedef struct lp_g10_path {
    int64_t on_path_ns;      /* the path's length */
    int64_t phase_ns;        /* of it, on activities that are leaf phases */
    int64_t other_ns;        /* on anything else: activities of no phase type, messages */
    uint64_t elems, phase_elems;
    lp_g10_pathres *res;     /* [m->nres] */
} lp_g10_path;

/* The path cp of trace t (whose activities built the attribution's phases) against
 * attribution a. LP_ERR_ARG if the phases were not built from a trace with t's
 * activities. */
lp_status lp_g10_path_of(const lp_g10_attr *a, const lp_trace *t, const lp_cpath *cp, lp_g10_path *out,
                         lp_error *err);
void lp_g10_path_release(lp_g10_path *p);

#endif
