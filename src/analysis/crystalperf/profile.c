/* profile.c: CrystalPerf's execution profile (profile.h): resource time of every activity
 * from samples joined by thread and time, from Spark task metrics, or from the activity
 * type; and the same per time interval.
 *
 * Invariants: ns[a][*] sums to at most the length of activity a (sample intervals of
 * one thread do not overlap; metrics split the length); every sample is counted once as
 * used, outside (no activity of its worker overlaps it) or without worker.
 * Cost: O(A) for metrics, O(S log A) for the join (a binary search per sample on its
 * worker's activities), O(A + bins) for the intervals.
 */
#include "longpole/analysis/crystalperf/profile.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <stdlib.h>
#include <string.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static int attr_i64(const lp_trace *t, uint32_t list, const char *key, int64_t *v)
{
    lp_str s = lp_trace_attr(t, list, key);
    if (s == LP_STR_NONE)
        return 0;
    char *end;
    long long x = strtoll(lp_trace_str(t, s), &end, 10);
    if (*end || x < 0)
        return 0;
    *v = x;
    return 1;
}

int lp_cpf_act_bytes(const lp_trace *t, uint64_t a, double *disk, double *net)
{
    uint32_t list = t->aattr[a];
    int64_t db = 0, nb = 0, in = 0, out = 0, rem = 0, loc = 0;
    *disk = *net = 0;
    if (!list)
        return 0;
    int own = attr_i64(t, list, "disk_bytes", &db) | attr_i64(t, list, "net_bytes", &nb);
    if (own) {
        *disk = (double)db, *net = (double)nb;
        return 1;
    }
    int spark = attr_i64(t, list, "input_bytes", &in) | attr_i64(t, list, "output_bytes", &out) |
                attr_i64(t, list, "shuffle_remote_bytes", &rem) | attr_i64(t, list, "shuffle_local_bytes", &loc);
    lp_str l = lp_trace_attr(t, list, "locality");
    int remote_input =
        l != LP_STR_NONE && (!strcmp(lp_trace_str(t, l), "RACK_LOCAL") || !strcmp(lp_trace_str(t, l), "ANY"));
    *disk = (double)loc + (double)out + (remote_input ? 0 : (double)in);
    *net = (double)rem + (remote_input ? (double)in : 0);
    return spark;
}

/* Spark: one activity of a task whose attributes carry its metrics. */
static int spark_vector(const lp_trace *t, uint64_t a, double ns[LP_RES_N])
{
    uint32_t list = t->aattr[a];
    int64_t cpu, len = t->aend[a] - t->astart[a];
    if (!list || !attr_i64(t, list, "run_ms", &cpu))
        return 0;
    const char *ty = lp_trace_type_name(t, t->atype[a]);
    uint16_t tt = t->atype[a];
    int offcpu = !strcmp(ty, "off-cpu"); /* the importer's split of a task's compute time */
    if (tt == LP_TYPE_PROCESSING || offcpu) {
        if (!attr_i64(t, list, "cpu_ns", &cpu))
            return 0; /* Spark before 2.1: no CPU time; nothing to say */
        /* processing: its CPU time (older traces: the whole compute part, so at most
         * cpu_ns of it is on the CPU); off-cpu: none of it */
        int64_t on = offcpu ? 0 : cpu < len ? cpu : len, rest = len - on;
        double disk, net;
        lp_cpf_act_bytes(t, a, &disk, &net);
        ns[LP_RES_CPU] = (double)on;
        if (disk + net > 0) {
            ns[LP_RES_DISK] = (double)rest * disk / (disk + net);
            ns[LP_RES_NET] = (double)rest * net / (disk + net);
        } else
            ns[LP_RES_UNKNOWN] = (double)rest;
        return 1;
    }
    if (tt == LP_TYPE_SERIALIZATION || tt == LP_TYPE_DESERIALIZATION || !strcmp(ty, "gc"))
        ns[LP_RES_CPU] = (double)len;
    else if (tt == LP_TYPE_SCHEDULING)
        ns[LP_RES_WAIT] = (double)len;
    else if (tt == LP_TYPE_IO) {
        int64_t fetch = 0, sw = 0;
        attr_i64(t, list, "fetch_wait_ms", &fetch);
        attr_i64(t, list, "shuffle_write_ns", &sw);
        fetch *= 1000000;
        if (sw > 0 && llabs(len - sw) <= 1000000 && !(fetch > 0 && llabs(len - fetch) <= 1000000))
            ns[LP_RES_DISK] = (double)len;
        else
            ns[LP_RES_NET] = (double)len; /* fetch wait, or getting the result */
    } else
        return 0;
    return 1;
}

static void type_and_metrics(lp_cpf_profile *p)
{
    const lp_trace *t = p->t;
    for (uint64_t a = 0; a < t->nacts; a++) {
        double *ns = p->ns[a];
        int64_t len = t->aend[a] - t->astart[a];
        if (spark_vector(t, a, ns)) {
            p->ev[a] = LP_EV_METRICS;
            p->acts_metrics++;
        } else if (t->atype[a] == LP_TYPE_WAITING) {
            ns[LP_RES_WAIT] = (double)len;
            p->ev[a] = LP_EV_TYPE;
        }
    }
}

/* worker of each thread id (attribute tid= or thread=) */
static lp_status tid_map(lp_cpf_profile *p, lp_hmap *m, lp_error *err)
{
    const lp_trace *t = p->t;
    lp_status st = lp_hmap_init(m, t->nworkers, err);
    for (uint32_t w = 0; w < t->nworkers && !st; w++) {
        int64_t tid;
        if (!attr_i64(t, t->wattr[w], "tid", &tid) && !attr_i64(t, t->wattr[w], "thread", &tid))
            continue;
        uint64_t old;
        if (lp_hmap_get(m, (uint64_t)tid, &old))
            continue; /* the first worker naming a thread keeps it */
        st = lp_hmap_put(m, (uint64_t)tid, w, err);
        p->workers_with_tid++;
    }
    return st;
}

static void join_sample(lp_cpf_profile *p, uint32_t w, int64_t s, int64_t e, const double v[LP_RES_N])
{
    const lp_trace *t = p->t;
    uint64_t lo = t->wfirst[w], hi = t->wfirst[w + 1];
    while (lo < hi) { /* first activity ending after s */
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->aend[mid] <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t got = 0;
    for (uint64_t a = lo; a < t->wfirst[w + 1] && t->astart[a] < e; a++) {
        int64_t from = s > t->astart[a] ? s : t->astart[a], to = e < t->aend[a] ? e : t->aend[a];
        if (to <= from)
            continue;
        if (p->ev[a] != LP_EV_SAMPLES) {
            memset(p->ns[a], 0, sizeof p->ns[a]);
            p->ev[a] = LP_EV_SAMPLES;
        }
        for (int r = 0; r < LP_RES_N; r++)
            p->ns[a][r] += (double)(to - from) * v[r];
        p->nsamples[a]++;
        got += to - from;
    }
    p->ns_outside += (e - s) - got;
    if (got)
        p->samples_used++;
    else
        p->samples_outside++;
}

static lp_status join(lp_cpf_profile *p, const lp_stacks *s, const lp_cls_model *m, int64_t off, lp_error *err)
{
    lp_hmap tids;
    lp_status st = tid_map(p, &tids, err);
    lp_cpf_attr at;
    if (!st)
        st = lp_cpf_attr_init(&at, s, m, err);
    else
        return st;
    if (st) {
        lp_hmap_release(&tids);
        return st;
    }
    p->samples = s->n;
    for (uint64_t i = 0; i < s->n; i++) {
        uint64_t w;
        if (!lp_hmap_get(&tids, s->tid[i], &w)) {
            p->samples_no_worker++;
            continue;
        }
        double v[LP_RES_N];
        uint32_t fr;
        lp_cpf_sample(&at, i, v, &fr);
        join_sample(p, (uint32_t)w, s->start[i] + off, s->end[i] + off, v);
    }
    memcpy(p->by_how, at.by_how, sizeof p->by_how);
    lp_cpf_attr_release(&at);
    lp_hmap_release(&tids);
    return LP_OK;
}

static lp_status intervals(lp_cpf_profile *p, int64_t bin, lp_error *err)
{
    const lp_trace *t = p->t;
    if (bin <= 0 || t->tmax <= t->tmin)
        return LP_OK;
    uint64_t nb = (uint64_t)((t->tmax - t->tmin) / bin) + 1;
    if (nb > 10000000)
        return lp_error_set(err, LP_ERR_LIMIT, "more than 10^7 intervals: choose a longer interval");
    p->bin = lp_calloc(nb, sizeof *p->bin);
    if (!p->bin)
        return nomem(err);
    p->bin_ns = bin, p->nbins = nb;
    for (uint64_t a = 0; a < t->nacts; a++) {
        int64_t len = t->aend[a] - t->astart[a];
        if (!len || p->ev[a] == LP_EV_NONE)
            continue;
        for (uint64_t b = (uint64_t)((t->astart[a] - t->tmin) / bin); b < nb; b++) {
            int64_t bs = t->tmin + (int64_t)b * bin, be = bs + bin;
            if (bs >= t->aend[a])
                break;
            int64_t from = bs > t->astart[a] ? bs : t->astart[a], to = be < t->aend[a] ? be : t->aend[a];
            double f = (double)(to - from) / (double)len;
            for (int r = 0; r < LP_RES_N; r++)
                p->bin[b][r] += p->ns[a][r] * f;
        }
    }
    return LP_OK;
}

lp_status lp_cpf_profile_build(const lp_trace *t, const lp_stacks *s, const lp_cls_model *m, const lp_cpf_opts *o,
                               lp_cpf_profile *p, lp_error *err)
{
    memset(p, 0, sizeof *p);
    p->t = t;
    size_t na = t->nacts ? t->nacts : 1;
    p->ns = lp_calloc(na, sizeof *p->ns);
    p->nsamples = lp_calloc(na, sizeof *p->nsamples);
    p->ev = lp_calloc(na, 1);
    if (!p->ns || !p->nsamples || !p->ev) {
        lp_cpf_profile_release(p);
        return nomem(err);
    }
    type_and_metrics(p);
    lp_status st = s ? join(p, s, m, o ? o->offset_ns : 0, err) : LP_OK;
    if (!st)
        st = intervals(p, o ? o->bin_ns : 0, err);
    if (st)
        lp_cpf_profile_release(p);
    return st;
}

void lp_cpf_profile_release(lp_cpf_profile *p)
{
    lp_free(p->ns);
    lp_free(p->nsamples);
    lp_free(p->ev);
    lp_free(p->bin);
    memset(p, 0, sizeof *p);
}

double lp_cpf_act_vector(const lp_cpf_profile *p, uint64_t a, double v[LP_RES_N])
{
    int64_t len = p->t->aend[a] - p->t->astart[a];
    for (int r = 0; r < LP_RES_N; r++)
        v[r] = 0;
    if (len <= 0) {
        v[LP_RES_UNKNOWN] = 1;
        return 0;
    }
    double sum = 0;
    for (int r = 0; r < LP_RES_N; r++) {
        v[r] = p->ns[a][r] / (double)len;
        sum += v[r];
    }
    if (sum > 1) { /* rounding */
        for (int r = 0; r < LP_RES_N; r++)
            v[r] /= sum;
        sum = 1;
    }
    v[LP_RES_UNKNOWN] += 1 - sum;
    return sum;
}
