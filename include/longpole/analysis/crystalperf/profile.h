/* profile.h: CrystalPerf's execution profile (§4): the resource vector of every activity
 * of a trace, from its call-stack samples or from its own metrics, and per time interval.
 * src/analysis/crystalperf/profile.c; definitions in docs/analyses/crystalperf.md.
 *
 * Evidence, per activity:
 *  - samples: a sample of thread `tid` belongs to the worker whose attribute tid= (or
 *    thread=) is that number; its interval is shared among the worker's activities it
 *    overlaps, each getting the overlapping time with the sample's resource vector
 *    (resource.h). Samples of a thread no worker names, and sample time outside every
 *    activity of its worker, are counted (not attributed);
 *  - metrics (Spark tasks, attributes of src/import/spark.c): the computing part gets cpu
 *    = min(its length, Executor CPU Time) and its off-CPU rest goes to disk or net in
 *    proportion to the bytes the task read and wrote there (input and output bytes:
 *    disk, or net when the task's locality was RACK_LOCAL or ANY; remote shuffle bytes:
 *    net; local shuffle bytes: disk), or to unknown when it moved no byte; GC,
 *    (de)serialization: cpu; shuffle fetch wait and getting the result: net; shuffle
 *    write: disk; scheduler delay: wait;
 *  - the type alone: `waiting` gaps are wait, other gaps unknown.
 * Samples win over metrics when an activity has both.
 *
 * An activity's vector is ns[r] / its length; `coverage` is the share of its length that
 * evidence explains (sampled time / length, 1 for metrics); the rest is unknown.
 */
#ifndef LONGPOLE_CRYSTALPERF_PROFILE_H
#define LONGPOLE_CRYSTALPERF_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/analysis/crystalperf/resource.h"
#include "longpole/model/trace.h"

enum { LP_EV_NONE = 0, LP_EV_SAMPLES, LP_EV_METRICS, LP_EV_TYPE };

typedef struct lp_cpf_profile {
    const lp_trace *t;
    double (*ns)[LP_RES_N];   /* [nacts] time by resource (sums to at most the length) */
    uint32_t *nsamples;       /* [nacts] samples that touched it */
    uint8_t *ev;              /* [nacts] LP_EV_* */
    /* interval table: bins of bin_ns from t->tmin; ns by resource over all activities */
    int64_t bin_ns;
    size_t nbins;
    double (*bin)[LP_RES_N];
    /* what the join met */
    uint64_t samples, samples_used, samples_no_worker, samples_outside;
    int64_t ns_outside;       /* sample time outside every activity of its worker */
    uint64_t by_how[LP_HOW_N];
    uint32_t workers_with_tid;
    uint64_t acts_metrics;    /* activities with vectors from metrics */
} lp_cpf_profile;

typedef struct lp_cpf_opts {
    int64_t bin_ns;           /* interval length (0: none) */
    int64_t offset_ns;        /* added to every sample time (clock offset of the samples) */
} lp_cpf_opts;

/* s and m may be NULL (then only metrics and types). */
lp_status lp_cpf_profile_build(const lp_trace *t, const lp_stacks *s, const lp_cls_model *m, const lp_cpf_opts *o,
                               lp_cpf_profile *out, lp_error *err);
void lp_cpf_profile_release(lp_cpf_profile *p);

/* Activity a's vector (fractions of its length, unknown = the unexplained rest) and the
 * share its evidence covers. */
double lp_cpf_act_vector(const lp_cpf_profile *p, uint64_t a, double v[LP_RES_N]);

/* The bytes activity a moved on disk and on the network, from its attributes: disk_bytes
 * and net_bytes (any trace), else Spark's byte metrics split as above (input and output:
 * disk, or net for RACK_LOCAL / ANY input; shuffle: remote net, local disk). Returns 0
 * (and zeros) when it carries none. */
int lp_cpf_act_bytes(const lp_trace *t, uint64_t a, double *disk, double *net);

#endif
