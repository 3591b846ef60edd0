/* resource.h: the resource of each call-stack sample (CrystalPerf §4.1, with measured
 * evidence first), and frames labelled by measurement for the classifier's training set.
 * src/analysis/crystalperf/resource.c.
 *
 * Resources: cpu, disk, net, wait (waiting for another thread, process or timer: not a
 * resource a faster device would shorten), unknown. The first four share the classifier's
 * class numbers (classify.h).
 *
 * A sample's resource, in order of evidence (each sample says which decided: `how`):
 *  1. its thread state: on the CPU, or runnable (preempted or throttled: waiting for a
 *     core) -> cpu;
 *  2. off the CPU, the kernel frames of its blocking stack, leaf first: the first frame a
 *     rule names decides (io_schedule, submit_bio_wait, folio_wait_*, jbd2_/ext4_sync_file,
 *     do_fsync -> disk; sk_stream_wait_memory, sk_wait_data, tcp_/udp_/inet_ -> net;
 *     futex_, pipe_, ep_poll, do_select, do_sys_poll, do_nanosleep, do_wait, unix_stream_
 *     -> wait; the list is in resource.c and docs/analyses/crystalperf.md);
 *  3. the classifier (classify.h) at the first frame with a name, user frames first: its
 *     class probabilities;
 *  4. unknown (counted).
 */
#ifndef LONGPOLE_CRYSTALPERF_RESOURCE_H
#define LONGPOLE_CRYSTALPERF_RESOURCE_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/analysis/crystalperf/classify.h"
#include "longpole/import/stacks.h"

enum { LP_RES_CPU = 0, LP_RES_DISK, LP_RES_NET, LP_RES_WAIT, LP_RES_UNKNOWN, LP_RES_N };
const char *lp_res_name(int r);

typedef enum lp_res_how { LP_HOW_STATE = 0, LP_HOW_KERNEL, LP_HOW_CLASSIFIER, LP_HOW_NONE, LP_HOW_N } lp_res_how;
const char *lp_res_how_name(lp_res_how h);

/* The kernel rule a frame name matches: a resource, or -1. */
int lp_cpf_kernel_rule(const char *sym);

/* Resources of samples, with the classifier's answers cached per frame. */
typedef struct lp_cpf_attr {
    const lp_stacks *s;
    const lp_cls_model *m;     /* may be NULL: no classifier step */
    float *cache;              /* [nframes * LP_CLS_N], NaN when not computed */
    uint64_t by_how[LP_HOW_N]; /* samples decided by each kind of evidence */
} lp_cpf_attr;

lp_status lp_cpf_attr_init(lp_cpf_attr *a, const lp_stacks *s, const lp_cls_model *m, lp_error *err);
void lp_cpf_attr_release(lp_cpf_attr *a);
/* Sample i's resource vector (sums to 1) into v; returns how it was decided; *frame the
 * frame that decided (LP_NONE32 for the state or none). */
lp_res_how lp_cpf_sample(lp_cpf_attr *a, uint64_t i, double v[LP_RES_N], uint32_t *frame);

/* Frames labelled by measurement: every named user frame of the samples decided by
 * state or kernel stack, with the time of the samples it appears in, by resource; the
 * label is the resource with most of that time (wait included). Frames seen in less
 * than `min_ns` (1 ms) of samples are left out. */
typedef struct lp_cpf_label {
    uint32_t frame;            /* frame id in the stacks */
    int label;                 /* LP_CLS_* */
    double share;              /* of the frame's time that went to `label` */
    int64_t ns;                /* the frame's time */
} lp_cpf_label;
lp_status lp_cpf_measure_labels(const lp_stacks *s, lp_cpf_label **out, size_t *n, lp_error *err);

#endif
