/* resource.c: the resource of a call-stack sample (resource.h): thread state, then the
 * kernel blocking stack, then the classifier at the first named frame, else unknown; and
 * frames labelled by measurement.
 *
 * The kernel rules were read off blocking stacks recorded on Linux 6.x here (fsync on
 * ext4: io_schedule <- folio_wait_bit <- __filemap_fdatawait_range <- ext4_sync_file;
 * TCP: sk_stream_wait_memory <- tcp_sendmsg, sk_wait_data <- tcp_recvmsg; a pool thread
 * idle: futex_do_wait <- do_futex); they match by prefix, leaf-most matching frame first.
 * Cost: O(depth) per sample, one classifier call per distinct frame (cached).
 */
#include "longpole/analysis/crystalperf/resource.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *lp_res_name(int r)
{
    static const char *const n[LP_RES_N] = {"cpu", "disk", "net", "wait", "unknown"};
    return r >= 0 && r < LP_RES_N ? n[r] : "?";
}

const char *lp_res_how_name(lp_res_how h)
{
    static const char *const n[LP_HOW_N] = {"thread-state", "kernel-stack", "classifier", "none"};
    return h < LP_HOW_N ? n[h] : "?";
}

typedef struct rule {
    const char *prefix;
    int res;
} rule;

static const rule rules[] = {
    /* block I/O and file systems */
    {"io_schedule", LP_RES_DISK}, {"bit_wait_io", LP_RES_DISK}, {"submit_bio_wait", LP_RES_DISK},
    {"blk_mq_", LP_RES_DISK}, {"folio_wait", LP_RES_DISK}, {"wait_on_page_bit", LP_RES_DISK},
    {"__filemap_fdatawait", LP_RES_DISK}, {"filemap_fdatawait", LP_RES_DISK}, {"jbd2_", LP_RES_DISK},
    {"ext4_sync_file", LP_RES_DISK}, {"xfs_file_fsync", LP_RES_DISK}, {"btrfs_sync_file", LP_RES_DISK},
    {"do_fsync", LP_RES_DISK}, {"__x64_sys_fsync", LP_RES_DISK}, {"__x64_sys_fdatasync", LP_RES_DISK},
    {"__x64_sys_sync", LP_RES_DISK}, {"blkdev_", LP_RES_DISK},
    /* the network stack */
    {"sk_stream_wait_memory", LP_RES_NET}, {"sk_wait_data", LP_RES_NET}, {"tcp_", LP_RES_NET},
    {"udp_", LP_RES_NET}, {"inet_csk_accept", LP_RES_NET}, {"inet_wait_for_connect", LP_RES_NET},
    {"__inet_stream_connect", LP_RES_NET}, {"__skb_wait_for_more_packets", LP_RES_NET},
    {"__skb_recv_udp", LP_RES_NET}, {"sk_wait_event", LP_RES_NET},
    /* waiting for someone else */
    {"futex_", LP_RES_WAIT}, {"do_futex", LP_RES_WAIT}, {"__futex", LP_RES_WAIT}, {"pipe_read", LP_RES_WAIT},
    {"pipe_write", LP_RES_WAIT}, {"pipe_wait", LP_RES_WAIT}, {"ep_poll", LP_RES_WAIT},
    {"do_epoll_wait", LP_RES_WAIT}, {"do_select", LP_RES_WAIT}, {"core_sys_select", LP_RES_WAIT},
    {"do_sys_poll", LP_RES_WAIT}, {"do_nanosleep", LP_RES_WAIT}, {"hrtimer_nanosleep", LP_RES_WAIT},
    {"do_wait", LP_RES_WAIT}, {"kernel_wait4", LP_RES_WAIT}, {"unix_stream_read", LP_RES_WAIT},
    {"unix_stream_sendmsg", LP_RES_WAIT}, {"do_sigtimedwait", LP_RES_WAIT}, {"sigsuspend", LP_RES_WAIT},
    {"__x64_sys_pause", LP_RES_WAIT}, {"wait_for_completion", LP_RES_WAIT}, {"msgrcv", LP_RES_WAIT},
    {"do_semtimedop", LP_RES_WAIT}, {"rwsem_down_", LP_RES_WAIT}, {"__mutex_lock", LP_RES_WAIT},
    {"mutex_lock", LP_RES_WAIT}, {"d_alloc_parallel", LP_RES_WAIT}, {"percpu_rwsem_wait", LP_RES_WAIT},
    {"rt_mutex_", LP_RES_WAIT},
    {NULL, 0},
};

int lp_cpf_kernel_rule(const char *sym)
{
    for (const rule *r = rules; r->prefix; r++)
        if (!strncmp(sym, r->prefix, strlen(r->prefix)))
            return r->res;
    return -1;
}

/* Scheduler frames that name no resource (skipped when looking for a frame to classify). */
static int sched_core(const char *sym)
{
    return !strcmp(sym, "__schedule") || !strcmp(sym, "schedule") || !strncmp(sym, "schedule_", 9) ||
           !strncmp(sym, "preempt_", 8) || !strncmp(sym, "entry_SYSCALL", 13) || !strcmp(sym, "do_syscall_64") ||
           !strncmp(sym, "asm_", 4) || !strncmp(sym, "irqentry_", 9) || !strncmp(sym, "exit_to_user", 12);
}

lp_status lp_cpf_attr_init(lp_cpf_attr *a, const lp_stacks *s, const lp_cls_model *m, lp_error *err)
{
    memset(a, 0, sizeof *a);
    a->s = s, a->m = m;
    if (m && s->nframes) {
        a->cache = lp_reallocarray(NULL, (size_t)s->nframes * LP_CLS_N, sizeof *a->cache);
        if (!a->cache)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        for (size_t k = 0; k < (size_t)s->nframes * LP_CLS_N; k++)
            a->cache[k] = NAN;
    }
    return LP_OK;
}

void lp_cpf_attr_release(lp_cpf_attr *a)
{
    lp_free(a->cache);
    memset(a, 0, sizeof *a);
}

static void classify_frame(lp_cpf_attr *a, uint32_t f, double v[LP_RES_N])
{
    float *c = a->cache + (size_t)f * LP_CLS_N;
    if (isnan(c[0])) {
        double p[LP_CLS_N];
        lp_cls_predict(a->m, lp_strtab_get(&a->s->strs, a->s->fsym[f]), lp_strtab_get(&a->s->strs, a->s->fdso[f]),
                       NULL, NULL, p);
        for (int k = 0; k < LP_CLS_N; k++)
            c[k] = (float)p[k];
    }
    for (int k = 0; k < LP_CLS_N; k++)
        v[k] = c[k];
    v[LP_RES_UNKNOWN] = 0;
}

lp_res_how lp_cpf_sample(lp_cpf_attr *a, uint64_t i, double v[LP_RES_N], uint32_t *frame)
{
    const lp_stacks *s = a->s;
    for (int k = 0; k < LP_RES_N; k++)
        v[k] = 0;
    *frame = UINT32_MAX;
    uint8_t st = s->state[i];
    if (st == LP_SS_ONCPU || st == LP_SS_RUNNABLE) {
        v[LP_RES_CPU] = 1;
        a->by_how[LP_HOW_STATE]++;
        return LP_HOW_STATE;
    }
    uint32_t stk = s->stack[i], d = lp_stacks_depth(s, stk);
    for (uint32_t k = 0; k < d; k++) {
        uint32_t f = lp_stacks_frame(s, stk, k);
        if (!s->fkern[f])
            continue;
        int r = lp_cpf_kernel_rule(lp_strtab_get(&s->strs, s->fsym[f]));
        if (r >= 0) {
            v[r] = 1;
            *frame = f;
            a->by_how[LP_HOW_KERNEL]++;
            return LP_HOW_KERNEL;
        }
    }
    if (a->m) {
        uint32_t pick = UINT32_MAX;
        for (int pass = 0; pass < 2 && pick == UINT32_MAX; pass++) /* user frames first, then kernel */
            for (uint32_t k = 0; k < d; k++) {
                uint32_t f = lp_stacks_frame(s, stk, k);
                const char *sym = lp_strtab_get(&s->strs, s->fsym[f]);
                if (*sym && s->fkern[f] == pass && !(pass && sched_core(sym))) {
                    pick = f;
                    break;
                }
            }
        if (pick != UINT32_MAX) {
            classify_frame(a, pick, v);
            *frame = pick;
            a->by_how[LP_HOW_CLASSIFIER]++;
            return LP_HOW_CLASSIFIER;
        }
    }
    v[LP_RES_UNKNOWN] = 1;
    a->by_how[LP_HOW_NONE]++;
    return LP_HOW_NONE;
}

/* ---- labels by measurement ----------------------------------------------------------------- */

static int cmp_label(const void *x, const void *y)
{
    const lp_cpf_label *a = x, *b = y;
    return a->frame < b->frame ? -1 : a->frame > b->frame;
}

lp_status lp_cpf_measure_labels(const lp_stacks *s, lp_cpf_label **out, size_t *n, lp_error *err)
{
    *out = NULL, *n = 0;
    lp_cpf_attr a;
    lp_status st = lp_cpf_attr_init(&a, s, NULL, err);
    double *acc = lp_calloc(s->nframes ? (size_t)s->nframes * LP_CLS_N : 1, sizeof *acc);
    uint64_t *seen = lp_calloc(s->nframes ? s->nframes : 1, sizeof *seen); /* last sample + 1 that counted it */
    if (!st && (!acc || !seen))
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; i < s->n && !st; i++) {
        double v[LP_RES_N];
        uint32_t fr;
        lp_res_how how = lp_cpf_sample(&a, i, v, &fr);
        if (how != LP_HOW_STATE && how != LP_HOW_KERNEL)
            continue;
        double ns = (double)(s->end[i] - s->start[i]);
        uint32_t stk = s->stack[i], d = lp_stacks_depth(s, stk);
        for (uint32_t k = 0; k < d; k++) {
            uint32_t f = lp_stacks_frame(s, stk, k);
            if (s->fkern[f] || !*lp_strtab_get(&s->strs, s->fsym[f]) || seen[f] == i + 1)
                continue; /* a recursive frame counts once per sample */
            seen[f] = i + 1;
            for (int c = 0; c < LP_CLS_N; c++)
                acc[(size_t)f * LP_CLS_N + c] += ns * v[c];
        }
    }
    size_t cap = 0;
    for (uint32_t f = 0; f < s->nframes && !st; f++) {
        double tot = 0, best = 0;
        int bc = 0;
        for (int c = 0; c < LP_CLS_N; c++) {
            double x = acc[(size_t)f * LP_CLS_N + c];
            tot += x;
            if (x > best)
                best = x, bc = c;
        }
        if (tot < 1e6)
            continue;
        if (lp_grow_at(out, &cap, *n + 1, sizeof **out)) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        lp_cpf_label l = {f, bc, best / tot, (int64_t)tot};
        (*out)[(*n)++] = l;
    }
    if (*n)
        qsort(*out, *n, sizeof **out, cmp_label);
    lp_free(acc);
    lp_free(seen);
    lp_cpf_attr_release(&a);
    if (st) {
        lp_free(*out);
        *out = NULL, *n = 0;
    }
    return st;
}
