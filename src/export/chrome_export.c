/* chrome_export.c: a trace as Chrome Trace Event Format JSON with its critical path
 * marked (chrome_export.h; docs/export.md). Streams with lp_jsonw: memory is O(workers +
 * critical-path length), never O(activities).
 *
 * Order of the output: metadata (process and thread names, sort indices), then each
 * worker's activities in time order, then the messages (flow pairs), then the critical
 * path track and its flows. Viewers sort events by time, so the order only matters for
 * readability; flow points are bound to the slice enclosing them, which exists because
 * gaps are written too (unless no_gaps).
 */
#include "longpole/base/version.h"
#include "longpole/export/chrome_export.h"
#include "longpole/base/jsonw.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Exact microseconds text of a nanosecond time: "12", "12.5", "-0.001". */
static const char *us_text(int64_t ns, char *buf, size_t n)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t q = a / 1000, r = a % 1000;
    if (!r) {
        snprintf(buf, n, "%s%llu", ns < 0 ? "-" : "", (unsigned long long)q);
    } else {
        char f[4];
        snprintf(f, sizeof f, "%03llu", (unsigned long long)r);
        int k = 3;
        while (k > 1 && f[k - 1] == '0')
            f[--k] = '\0';
        snprintf(buf, n, "%s%llu.%s", ns < 0 ? "-" : "", (unsigned long long)q, f);
    }
    return buf;
}

/* A number whose text is already formatted. lp_jsonw has no call for it (its doubles
 * lose nanoseconds beyond 2^53), so this writes the separators lp_jsonw would before a
 * value, from the state jsonw.h documents (compact output only). */
static void jw_kus(lp_jsonw *j, const char *key, int64_t ns)
{
    char b[32];
    lp_jsonw_key(j, key);
    lp_jsonw_raw(j, us_text(ns, b, sizeof b));
}

/* A trace string as a JSON string (with its length: names may hold NUL bytes). */
static void jw_tstr(lp_jsonw *j, const lp_trace *t, lp_str s)
{
    lp_jsonw_strn(j, lp_strtab_get(&t->strs, s), lp_strtab_len(&t->strs, s));
}

/* Attributes of a list as string args. */
static void attr_args(lp_jsonw *j, const lp_trace *t, uint32_t list)
{
    if (!list)
        return;
    uint32_t n = t->apool[list];
    for (uint32_t i = 0; i < n; i++) {
        lp_jsonw_key(j, lp_trace_str(t, t->apool[list + 1 + 2 * i]));
        jw_tstr(j, t, t->apool[list + 2 + 2 * i]);
    }
}

static void meta(lp_jsonw *j, const char *what, uint32_t pid, uint32_t tid, const char *key, const char *sval,
                 size_t slen, int64_t ival)
{
    lp_jsonw_obj(j);
    lp_jsonw_kstr(j, "ph", "M");
    lp_jsonw_kstr(j, "name", what);
    lp_jsonw_ku64(j, "pid", pid);
    lp_jsonw_ku64(j, "tid", tid);
    lp_jsonw_key(j, "args");
    lp_jsonw_obj(j);
    if (sval) {
        lp_jsonw_key(j, key);
        lp_jsonw_strn(j, sval, slen);
        /* readers trim names; the exact one for longpole's importer */
        if (slen && (sval[0] == ' ' || sval[0] == '\t' || sval[slen - 1] == ' ' || sval[slen - 1] == '\t')) {
            lp_jsonw_key(j, "longpole.name");
            lp_jsonw_strn(j, sval, slen);
        }
    } else
        lp_jsonw_ki64(j, key, ival);
    lp_jsonw_obj_end(j);
    lp_jsonw_obj_end(j);
    fputc('\n', j->f);
}

typedef struct cpact {
    uint64_t act;
    int64_t ns;
} cpact;

static int cmp_cpact(const void *a, const void *b)
{
    const cpact *x = a, *y = b;
    return x->act < y->act ? -1 : x->act > y->act;
}

/* The event name of an activity: its operator, else its type. */
static lp_str act_name(const lp_trace *t, uint64_t a) { return t->aop[a] != LP_STR_NONE ? t->aop[a] : t->type_name[t->atype[a]]; }

/* What the writing stages share. */
typedef struct cx {
    const lp_trace *t;
    const lp_chrome_export_opts *o;
    const lp_cpath *cp;
    lp_jsonw *j;
    FILE *out;
    uint32_t *wpid;          /* [nworkers] process of each worker (1-based) */
    lp_str *pkey;            /* [nproc] the host (or pid) attribute of each process */
    uint32_t nproc, cp_pid;  /* processes; the critical path's own */
    cpact *cpa;              /* time on the path per activity, by activity */
    size_t ncpa;
} cx;

/* Processes: workers grouped by their host (else pid) attribute. */
static void group_processes(cx *x)
{
    const lp_trace *t = x->t;
    for (uint32_t w = 0; w < t->nworkers; w++) {
        lp_str k = lp_trace_attr(t, t->wattr[w], "host");
        if (k == LP_STR_NONE)
            k = lp_trace_attr(t, t->wattr[w], "pid");
        uint32_t p;
        for (p = 0; p < x->nproc && x->pkey[p] != k; p++)
            ;
        if (p == x->nproc)
            x->pkey[x->nproc++] = k;
        x->wpid[w] = p + 1;
    }
    x->cp_pid = x->nproc + 1;
}

/* Time on the path per activity (cp->n > 0). */
static lp_status path_times(cx *x, lp_error *err)
{
    const lp_cpath *cp = x->cp;
    cpact *cpa = x->cpa = lp_malloc(cp->n * sizeof *cpa);
    if (!cpa)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    size_t ncpa = 0;
    for (size_t i = 0; i < cp->n; i++)
        if (cp->e[i].kind == LP_CP_ACTIVITY) {
            cpa[ncpa].act = cp->e[i].index;
            cpa[ncpa].ns = cp->e[i].end - cp->e[i].start;
            ncpa++;
        }
    qsort(cpa, ncpa, sizeof *cpa, cmp_cpact);
    size_t m = 0; /* merge repeated activities */
    for (size_t i = 0; i < ncpa; i++) {
        if (m && cpa[m - 1].act == cpa[i].act)
            cpa[m - 1].ns += cpa[i].ns;
        else
            cpa[m++] = cpa[i];
    }
    x->ncpa = m;
    return LP_OK;
}

/* The opening: otherData, then traceEvents opened. */
static void write_header(const cx *x)
{
    const lp_trace *t = x->t;
    const lp_cpath *cp = x->cp;
    lp_jsonw *j = x->j;
    lp_jsonw_obj(j);
    lp_jsonw_key(j, "otherData");
    lp_jsonw_obj(j);
    lp_jsonw_kstr(j, "producer", "longpole " LONGPOLE_VERSION);
    if (x->o->source)
        lp_jsonw_kstr(j, "source", x->o->source);
    lp_jsonw_ku64(j, "workers", t->nworkers);
    lp_jsonw_ku64(j, "activities", t->nacts - t->ngaps);
    lp_jsonw_ku64(j, "messages", t->nmsgs);
    if (cp) {
        lp_jsonw_ki64(j, "critical_path_ns", cp->total);
        lp_jsonw_ki64(j, "critical_path_start_ns", cp->start);
        lp_jsonw_ki64(j, "critical_path_end_ns", cp->end);
        lp_jsonw_ku64(j, "critical_path_elements", cp->n);
    }
    lp_jsonw_obj_end(j);
    lp_jsonw_key(j, "traceEvents");
    lp_jsonw_arr(j);
    fputc('\n', x->out);
}

/* Metadata: process and thread names and sort indices. */
static void write_meta(const cx *x)
{
    const lp_trace *t = x->t;
    lp_jsonw *j = x->j;
    for (uint32_t p = 0; p < x->nproc; p++) {
        const char *name = x->pkey[p] != LP_STR_NONE ? lp_trace_str(t, x->pkey[p]) : "longpole trace";
        size_t nlen = x->pkey[p] != LP_STR_NONE ? lp_strtab_len(&t->strs, x->pkey[p]) : strlen(name);
        meta(j, "process_name", p + 1, 0, "name", name, nlen, 0);
        meta(j, "process_sort_index", p + 1, 0, "sort_index", NULL, 0, p + 1);
    }
    for (uint32_t w = 0; w < t->nworkers; w++) {
        meta(j, "thread_name", x->wpid[w], w + 1, "name", lp_trace_worker_name(t, w),
             lp_strtab_len(&t->strs, t->wname[w]), 0);
        meta(j, "thread_sort_index", x->wpid[w], w + 1, "sort_index", NULL, 0, w);
    }
    if (x->cp) {
        meta(j, "process_name", x->cp_pid, 0, "name", "critical path", 13, 0);
        meta(j, "process_sort_index", x->cp_pid, 0, "sort_index", NULL, 0, 0);
        meta(j, "thread_name", x->cp_pid, 1, "name", "critical path", 13, 0);
    }
}

/* Each worker's activities in time order. */
static void write_activities(const cx *x)
{
    const lp_trace *t = x->t;
    lp_jsonw *j = x->j;
    const cpact *cpa = x->cpa;
    size_t ci = 0;
    for (uint32_t w = 0; w < t->nworkers; w++) {
        for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1]; a++) {
            int gap = (t->aflags[a] & LP_ACT_GAP) != 0;
            if (gap && x->o->no_gaps)
                continue;
            lp_jsonw_obj(j);
            lp_jsonw_kstr(j, "ph", "X");
            lp_jsonw_ku64(j, "pid", x->wpid[w]);
            lp_jsonw_ku64(j, "tid", w + 1);
            jw_kus(j, "ts", t->astart[a]);
            jw_kus(j, "dur", t->aend[a] - t->astart[a]);
            lp_jsonw_key(j, "name");
            jw_tstr(j, t, act_name(t, a));
            lp_jsonw_key(j, "cat");
            jw_tstr(j, t, t->type_name[t->atype[a]]);
            while (ci < x->ncpa && cpa[ci].act < a)
                ci++;
            int on_cp = ci < x->ncpa && cpa[ci].act == a;
            int no_op = t->aop[a] == LP_STR_NONE && !gap;
            if (t->aattr[a] || gap || on_cp || no_op) {
                lp_jsonw_key(j, "args");
                lp_jsonw_obj(j);
                attr_args(j, t, t->aattr[a]);
                if (gap)
                    lp_jsonw_kstr(j, "longpole.derived", "gap");
                if (no_op)
                    lp_jsonw_kbool(j, "longpole.no_op", 1);
                if (on_cp)
                    lp_jsonw_ki64(j, "longpole.critical_ns", cpa[ci].ns);
                lp_jsonw_obj_end(j);
            }
            lp_jsonw_obj_end(j);
            fputc('\n', x->out);
        }
    }
}

/* The messages, as flow pairs. */
static void write_messages(const cx *x)
{
    const lp_trace *t = x->t;
    lp_jsonw *j = x->j;
    char idb[64];
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        for (int end = 0; end < 2; end++) {
            uint32_t w = end ? t->mdst[m] : t->msrc[m];
            lp_jsonw_obj(j);
            lp_jsonw_kstr(j, "ph", end ? "f" : "s");
            if (end)
                lp_jsonw_kstr(j, "bp", "e");
            lp_jsonw_ku64(j, "id", m);
            lp_jsonw_kstr(j, "cat", "message");
            lp_jsonw_kstr(j, "name", "message");
            lp_jsonw_ku64(j, "pid", x->wpid[w]);
            lp_jsonw_ku64(j, "tid", w + 1);
            jw_kus(j, "ts", end ? t->mrecv[m] : t->msend[m]);
            if (!end) {
                lp_jsonw_key(j, "args");
                lp_jsonw_obj(j);
                attr_args(j, t, t->mattr[m]);
                lp_jsonw_key(j, "longpole.msg_id");
                if (t->mid[m] != LP_MSGID_NONE)
                    lp_jsonw_str(j, lp_trace_msgid(t, t->mid[m], idb, sizeof idb));
                else
                    lp_jsonw_null(j);
                lp_jsonw_obj_end(j);
            }
            lp_jsonw_obj_end(j);
            fputc('\n', x->out);
        }
    }
}

/* Element i of the critical path on its track, and its flow pair if a message. */
static void write_cp_elem(const cx *x, size_t i)
{
    const lp_trace *t = x->t;
    lp_jsonw *j = x->j;
    const lp_cp_elem *e = &x->cp->e[i];
    lp_jsonw_obj(j);
    lp_jsonw_kstr(j, "ph", "X");
    lp_jsonw_ku64(j, "pid", x->cp_pid);
    lp_jsonw_ku64(j, "tid", 1);
    jw_kus(j, "ts", e->start);
    jw_kus(j, "dur", e->end - e->start);
    if (e->kind == LP_CP_ACTIVITY) {
        lp_jsonw_key(j, "name");
        jw_tstr(j, t, act_name(t, e->index));
        lp_jsonw_kstr(j, "cat", "critical_path");
        lp_jsonw_key(j, "args");
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "longpole.derived", "critical-path");
        lp_jsonw_key(j, "type");
        jw_tstr(j, t, t->type_name[t->atype[e->index]]);
        lp_jsonw_key(j, "worker");
        jw_tstr(j, t, t->wname[e->worker]);
    } else {
        lp_jsonw_kstr(j, "name", "message");
        lp_jsonw_kstr(j, "cat", "critical_path");
        lp_jsonw_key(j, "args");
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "longpole.derived", "critical-path");
        lp_jsonw_key(j, "from");
        jw_tstr(j, t, t->wname[t->msrc[e->index]]);
        lp_jsonw_key(j, "to");
        jw_tstr(j, t, t->wname[t->mdst[e->index]]);
    }
    lp_jsonw_ku64(j, "step", i + 1);
    lp_jsonw_obj_end(j);
    lp_jsonw_obj_end(j);
    fputc('\n', x->out);
    if (e->kind != LP_CP_MESSAGE)
        return;
    for (int end = 0; end < 2; end++) {
        uint32_t w = end ? t->mdst[e->index] : t->msrc[e->index];
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "ph", end ? "f" : "s");
        if (end)
            lp_jsonw_kstr(j, "bp", "e");
        lp_jsonw_ku64(j, "id", i + 1);
        lp_jsonw_kstr(j, "cat", "longpole.critical_path");
        lp_jsonw_kstr(j, "name", "critical path");
        lp_jsonw_ku64(j, "pid", x->wpid[w]);
        lp_jsonw_ku64(j, "tid", w + 1);
        jw_kus(j, "ts", end ? e->end : e->start);
        lp_jsonw_obj_end(j);
        fputc('\n', x->out);
    }
}

lp_status lp_chrome_export(const lp_trace *t, FILE *out, const lp_chrome_export_opts *o, lp_error *err)
{
    lp_chrome_export_opts dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!o)
        o = &dflt;
    lp_jsonw jw;
    cx x = {t, o, o->cp, &jw, out, NULL, NULL, 0, 0, NULL, 0};
    x.wpid = lp_malloc((t->nworkers ? t->nworkers : 1) * sizeof *x.wpid);
    x.pkey = lp_malloc((t->nworkers + 1) * sizeof *x.pkey);
    lp_status st = !x.wpid || !x.pkey ? lp_error_set(err, LP_ERR_NOMEM, "out of memory") : LP_OK;
    if (!st) {
        group_processes(&x);
        if (x.cp && x.cp->n)
            st = path_times(&x, err);
    }
    if (!st) {
        lp_jsonw_init(&jw, out, 0);
        write_header(&x);
        write_meta(&x);
        write_activities(&x);
        write_messages(&x);
        for (size_t i = 0; x.cp && i < x.cp->n; i++)
            write_cp_elem(&x, i);
        lp_jsonw_arr_end(&jw);
        lp_jsonw_obj_end(&jw);
        lp_jsonw_end(&jw);
    }
    lp_free(x.cpa);
    lp_free(x.wpid);
    lp_free(x.pkey);
    if (!st && ferror(out))
        return lp_error_set(err, LP_ERR_IO, "writing the Chrome trace failed: %s", strerror(errno));
    return st;
}
