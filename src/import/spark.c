/* spark.c: the Apache Spark event-log importer ("spark"; spark.h), SnailTrail §4.2's
 * Spark model. The mapping is documented in docs/formats/spark.md; in short:
 *
 *  - input: JSON lines of SparkListener* events (Spark's JsonProtocol), plain, gzip or
 *    zstd; one file (v1) or a rolling v2 directory (lp_spark_read_dir: its event files
 *    in index order, one state). Timestamps are epoch milliseconds (JsonProtocol),
 *    except "Shuffle Write Time" (ns);
 *  - workers: "driver", and the task slots of every executor, "executor.<id>.<k>".
 *    Executor scheduling is not in the log, so tasks are placed greedily as SnailTrail
 *    §4.2 does: in launch order, a task runs on the executor's most recently freed slot
 *    among those free at its launch (lowest slot on ties), a new slot when none is
 *    free (reported once per executor if that exceeds its "Total Cores");
 *  - a task [Launch Time, Finish Time] becomes consecutive sub-activities laid out
 *    backwards from its finish, in the order of Spark UI's task timeline: getting
 *    result (io), result serialization (serialization), shuffle write (io), GC
 *    (type "gc"), computing (processing: run time minus shuffle read wait, shuffle
 *    write and GC), shuffle read wait (io), task deserialization (deserialization), and
 *    what remains at the start is scheduler delay (scheduling). Parts are clipped at the
 *    launch when the millisecond metrics do not fit. A task without metrics (failed) is
 *    one `processing` activity. Operator: the stage name; attributes stage, attempt,
 *    task, index, executor, host (and status when it did not succeed);
 *  - the driver: `scheduling` activities for submitting a job (job submission to its
 *    first stage's submission), submitting a stage (submission to its first task's
 *    launch), completing a stage (its last task's finish to its completion) and
 *    completing a job (its last stage's completion to the job's end); where they
 *    overlap (concurrent jobs) a later one starts when the earlier ends;
 *  - messages: the driver launches every task (driver -> slot at the launch) and every
 *    task reports its result (slot -> driver at the finish, bytes = result size). Stage
 *    dependencies and shuffles therefore run through the driver: a child stage's tasks
 *    are launched after the driver saw its parents' last results, which is what Spark's
 *    DAG scheduler does. Parent-task-to-child-task shuffle edges would be
 *    O(parents x children) and are not made;
 *  - failed tasks and stages are kept (status attribute) and reported; tasks started
 *    but never ended, TaskEnd without TaskStart, bad or unknown records are reported
 *    with file, line and byte offset; the per-application note sums them up.
 */
#include "longpole/import/spark.h"
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/import.h"
#include "longpole/codec/json.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "import/import_util.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NONE UINT32_MAX
#define MS 1000000LL

enum skip {
    SK_JSON = 0, SK_SHAPE, SK_FIELD, SK_NEG, SK_DUP, SK_NO_END, SK_CODEC, SK_N
};
static const char *const skip_names[SK_N] = {
    "not valid JSON", "not a SparkListener event", "with a missing or wrong field", "ending before they start",
    "duplicate task ends", "tasks never ended", "files in an unsupported codec",
};

/* ---- maps from 64-bit keys to indices: the library's hash table ------------------------- */

static uint32_t imap_get(const lp_hmap *m, uint64_t k)
{
    uint64_t v;
    return lp_hmap_get(m, k, &v) ? (uint32_t)v : NONE;
}

static int imap_put(lp_hmap *m, uint64_t k, uint32_t v) { return lp_hmap_put(m, k, v, NULL) ? -1 : 0; }

/* ---- state ------------------------------------------------------------------------------ */

#define TF_STARTED 0x01u
#define TF_ENDED 0x02u
#define TF_METRICS 0x04u

typedef struct stask {
    int64_t id;
    int64_t launch, finish, getres;      /* ms; getres 0 when the result was not fetched */
    int64_t deser, run, gc, ser, fetch;  /* ms, -1 when absent */
    int64_t swrite_ns, result_size;      /* -1 when absent */
    int32_t stage, sattempt, index, attempt;
    lp_str exec, host, reason;           /* reason: LP_STR_NONE on success */
    uint64_t off;                        /* of the TaskEnd (or TaskStart) */
    uint32_t line;
    uint16_t src;                        /* file index */
    uint8_t flags;
    uint32_t slot;                       /* assigned slot (index into the executor's slots) */
    int64_t end;                         /* ms: when its slot is free again: the finish, or the next
                                            task's launch on the slot when the driver recorded the
                                            finish after it (see assign_slots) */
    uint32_t execi;                      /* executor index */
    int64_t xm[14];                      /* the metrics of xmetric[] (CrystalPerf), -1 when absent */
    lp_str locality;                     /* "Locality" of the Task Info, LP_STR_NONE if absent */
} stask;

/* Task metrics kept as attributes of the task's activities (issue 16, CrystalPerf's
 * resource vectors of Spark tasks, docs/formats/spark.md): attribute key, the object
 * holding it ("" = Task Metrics itself) and its JSON name. */
static const struct xmetric {
    const char *key, *obj, *name;
} xmetric[14] = {
    {"cpu_ns", "", "Executor CPU Time"},
    {"deser_cpu_ns", "", "Executor Deserialize CPU Time"},
    {"run_ms", "", "Executor Run Time"},
    {"gc_ms", "", "JVM GC Time"},
    {"fetch_wait_ms", "Shuffle Read Metrics", "Fetch Wait Time"},
    {"shuffle_write_ns", "Shuffle Write Metrics", "Shuffle Write Time"},
    {"input_bytes", "Input Metrics", "Bytes Read"},
    {"output_bytes", "Output Metrics", "Bytes Written"},
    {"shuffle_remote_bytes", "Shuffle Read Metrics", "Remote Bytes Read"},
    {"shuffle_local_bytes", "Shuffle Read Metrics", "Local Bytes Read"},
    {"shuffle_write_bytes", "Shuffle Write Metrics", "Shuffle Bytes Written"},
    {"memory_spill_bytes", "", "Memory Bytes Spilled"},
    {"disk_spill_bytes", "", "Disk Bytes Spilled"},
    {"peak_memory_bytes", "", "Peak Execution Memory"},
};

typedef struct sstage {
    int32_t id, attempt;
    lp_str name, failure;
    int64_t submit, complete;            /* ms, -1 when absent */
    int64_t first_launch, last_finish;   /* ms, from its tasks; -1 none */
    uint64_t off;
    uint32_t line;
    uint16_t src;
} sstage;

typedef struct sjob {
    int32_t id;
    int64_t submit, end;                 /* ms, -1 when absent */
    lp_str result;
    uint32_t stfirst, stcount;           /* stage ids in ctx.jobstages */
    uint64_t off;
    uint32_t line;
    uint16_t src;
} sjob;

typedef struct sexec {
    lp_str id, host;
    int64_t cores;                       /* -1 unknown */
    int64_t *free_at;                    /* per slot: when its last task finished (ms) */
    uint32_t *last;                      /* per slot: its last task (index in ctx.tk) */
    uint32_t *worker;
    size_t nslots, capslots, capworker;
    int warned;
} sexec;

typedef struct dact {                    /* a driver activity before overlap trimming */
    int64_t start, end;                  /* ns */
    lp_str op;
    uint32_t attrs;
    uint32_t line;
    uint16_t src;
} dact;

typedef struct sctx {
    lp_builder *b;                       /* the trace being built (not owned) */
    lp_strtab *st;                       /* its strings */
    lp_diags *ds;                        /* its diagnostics sink */
    lp_error *err;                       /* where resource errors go */
    const lp_load_opts *opts;            /* progress callback (may be NULL) */
    char **files;                        /* names of the files read (owned) */
    size_t nfiles, capfiles;
    uint16_t cur;                        /* current file */

    stask *tk;                           /* tasks (TaskStart/TaskEnd merged) */
    size_t ntk, captk;
    lp_hmap taskmap;                        /* task id -> index */
    sstage *sg;                          /* stage attempts */
    size_t nsg, capsg;
    lp_hmap stagemap;                       /* (stage, attempt) -> index */
    lp_hmap stagename;                      /* stage -> index of an attempt carrying its name */
    sjob *jb;                            /* jobs */
    size_t njb, capjb;
    lp_hmap jobmap;                         /* job id -> index */
    int32_t *jobstages;                  /* the stage ids of every job (sjob.stfirst..) */
    size_t njobstages, capjobstages;
    sexec *ex;                           /* executors */
    size_t nex, capex;
    lp_hmap execmap;                        /* executor id string -> index */

    lp_str app_name, app_id, version, driver_host; /* application facts (LP_STR_NONE if absent) */
    int64_t app_start, app_end;          /* ms, -1 if absent */
    uint64_t nevents, nother;            /* events read; of them, not modelled */
    uint64_t skipped[SK_N];              /* records skipped, by reason */
    uint64_t nfailed_tasks, nfailed_stages, ntrimmed; /* for the note */
    int fatal;                           /* a file ended early */
    uint64_t progress_n;                 /* records since the last progress call */
    lp_input *in;                        /* the current input */

    /* interned attribute keys and values, and driver operators */
    lp_str s_stage, s_attempt, s_task, s_index, s_executor, s_host, s_status, s_kind, s_driver, s_slot, s_cores,
        s_edge, s_launch, s_result, s_bytes, s_job, s_failed, s_true, s_app, s_app_id, s_version, s_speculative;
    lp_str op_job_submit, op_stage_submit, op_stage_complete, op_job_complete;
    uint16_t t_gc;                       /* the type "gc" */
    uint16_t t_offcpu;                   /* the type "off-cpu": run time the task's thread
                                            spent off the CPU (Executor CPU Time known) */
} sctx;

static lp_status nomem(sctx *c) { return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory"); }

static const char *fname(const sctx *c, uint16_t src) { return c->nfiles ? c->files[src] : NULL; }

static void report(sctx *c, lp_severity sev, uint16_t src, uint64_t line, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void report(sctx *c, lp_severity sev, uint16_t src, uint64_t line, uint64_t off, const char *fmt, ...)
{
    if (!c->ds)
        return;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lp_diags_report(c->ds, sev, LP_RULE_IMPORT, fname(c, src), line, "byte %llu: %s", (unsigned long long)off, msg);
}

/* A field problem: the record is skipped. */
static void bad_field(sctx *c, const lp_json *rec, const char *event, const char *field, const lp_json *found,
                      const char *want)
{
    char w[80];
    c->skipped[SK_FIELD]++;
    const lp_json *at = found ? found : rec;
    report(c, LP_SEV_ERROR, c->cur, at->line, at->off, "%s: \"%s\" must be %s, found %s; record skipped", event, field,
           want, lp_json_what(found, w, sizeof w));
}

static int intern(sctx *c, const char *s, size_t n, lp_str *out) { return lp_strtab_intern(c->st, s, n, out); }

static int str_of(sctx *c, const lp_json *v, lp_str *out)
{
    *out = LP_STR_NONE;
    if (v && v->type == LP_JSON_STRING)
        return intern(c, v->s, v->len, out);
    if (v && v->type == LP_JSON_NUMBER) /* executor ids are strings, but be lenient */
        return intern(c, v->s, v->len, out);
    return 0;
}

/* An integer field (number, or a string holding one): 0 if present and valid. */
static int int_of(const lp_json *v, int64_t *out)
{
    if (!v)
        return -1;
    return lp_json_i64_lenient(v, out);
}

static int64_t int_or(const lp_json *v, int64_t dflt)
{
    int64_t x;
    return int_of(v, &x) ? dflt : x;
}

/* ---- records ---------------------------------------------------------------------------- */

static lp_status get_exec(sctx *c, lp_str id, uint32_t *out)
{
    uint32_t i = imap_get(&c->execmap, id);
    if (i == NONE) {
        if (lp_grow_at(&c->ex, &c->capex, c->nex + 1, sizeof *c->ex))
            return nomem(c);
        sexec *e = &c->ex[c->nex];
        memset(e, 0, sizeof *e);
        e->id = id;
        e->host = LP_STR_NONE;
        e->cores = -1;
        i = (uint32_t)c->nex++;
        if (imap_put(&c->execmap, id, i))
            return nomem(c);
    }
    *out = i;
    return LP_OK;
}

static lp_status get_stage(sctx *c, int64_t id, int64_t attempt, uint32_t *out)
{
    uint64_t key = ((uint64_t)(uint32_t)id << 32) | (uint32_t)attempt;
    uint32_t i = imap_get(&c->stagemap, key);
    if (i == NONE) {
        if (lp_grow_at(&c->sg, &c->capsg, c->nsg + 1, sizeof *c->sg))
            return nomem(c);
        sstage *s = &c->sg[c->nsg];
        memset(s, 0, sizeof *s);
        s->id = (int32_t)id;
        s->attempt = (int32_t)attempt;
        s->name = s->failure = LP_STR_NONE;
        s->submit = s->complete = s->first_launch = s->last_finish = -1;
        s->src = c->cur;
        i = (uint32_t)c->nsg++;
        if (imap_put(&c->stagemap, key, i))
            return nomem(c);
    }
    *out = i;
    return LP_OK;
}

/* "Stage Info" (StageSubmitted, StageCompleted) or an element of JobStart's
 * "Stage Infos". */
static lp_status stage_info(sctx *c, const lp_json *rec, const lp_json *si, const char *event, int completed)
{
    int64_t id, attempt;
    if (!si || si->type != LP_JSON_OBJECT) {
        bad_field(c, rec, event, "Stage Info", si, "an object");
        return LP_OK;
    }
    const lp_json *idn = lp_json_get(si, "Stage ID");
    if (int_of(idn, &id) || id < 0 || id > INT32_MAX) {
        bad_field(c, rec, event, "Stage ID", idn, "a non-negative integer");
        return LP_OK;
    }
    attempt = int_or(lp_json_get(si, "Stage Attempt ID"), 0);
    if (attempt < 0 || attempt > INT32_MAX)
        attempt = 0;
    uint32_t i;
    lp_status st = get_stage(c, id, attempt, &i);
    if (st)
        return st;
    sstage *s = &c->sg[i];
    lp_str name;
    if (str_of(c, lp_json_get(si, "Stage Name"), &name))
        return nomem(c);
    if (name != LP_STR_NONE) {
        s->name = name;
        if (imap_get(&c->stagename, (uint64_t)id) == NONE && imap_put(&c->stagename, (uint64_t)id, i))
            return nomem(c);
    }
    int64_t t;
    if (!int_of(lp_json_get(si, "Submission Time"), &t))
        s->submit = t;
    if (!event)
        return LP_OK;
    s->off = rec->off;
    s->line = lp_line32(rec->line);
    s->src = c->cur;
    if (completed) {
        if (!int_of(lp_json_get(si, "Completion Time"), &t))
            s->complete = t;
        const lp_json *fr = lp_json_get(si, "Failure Reason");
        if (fr && fr->type == LP_JSON_STRING) {
            /* the first line of the reason */
            size_t n = 0;
            while (n < fr->len && fr->s[n] != '\n' && n < 300)
                n++;
            if (intern(c, fr->s, n, &s->failure))
                return nomem(c);
            c->nfailed_stages++;
            report(c, LP_SEV_WARNING, c->cur, rec->line, rec->off, "stage %d.%d failed: %s", s->id, s->attempt,
                   lp_strtab_get(c->st, s->failure));
        }
    }
    return LP_OK;
}

/* What a SparkListenerTaskEnd adds to task t (of stage.sattempt): the end reason (a
 * failure is reported) and the metrics. */
static lp_status task_end(sctx *c, const lp_json *rec, const char *event, stask *t, int64_t stage, int64_t sattempt)
{
    /* the end reason */
    const lp_json *er = lp_json_get(rec, "Task End Reason");
    const lp_json *rs = lp_json_get(er, "Reason");
    if (rs && rs->type == LP_JSON_STRING && !lp_json_str_is(rs, "Success")) {
        if (intern(c, rs->s, rs->len, &t->reason))
            return nomem(c);
        c->nfailed_tasks++;
        const lp_json *cls = lp_json_get(er, "Class Name"), *desc = lp_json_get(er, "Description");
        char ex1[64], ex2[64];
        report(c, LP_SEV_WARNING, c->cur, rec->line, rec->off, "task %lld (stage %lld.%lld) did not succeed: %s%s%s%s%s",
               (long long)t->id, (long long)stage, (long long)sattempt, rs->s, cls ? ": " : "",
               cls ? lp_json_excerpt(cls, ex1, sizeof ex1) : "", desc ? " " : "",
               desc ? lp_json_excerpt(desc, ex2, sizeof ex2) : "");
    } else if (rs && rs->type != LP_JSON_STRING) {
        char w[80];
        report(c, LP_SEV_WARNING, c->cur, rs->line, rs->off, "%s: \"Reason\" should be a string, found %s", event,
               lp_json_what(rs, w, sizeof w));
    }
    /* metrics */
    const lp_json *tm = lp_json_get(rec, "Task Metrics");
    if (tm && tm->type == LP_JSON_OBJECT) {
        t->flags |= TF_METRICS;
        t->deser = int_or(lp_json_get(tm, "Executor Deserialize Time"), -1);
        t->run = int_or(lp_json_get(tm, "Executor Run Time"), -1);
        t->gc = int_or(lp_json_get(tm, "JVM GC Time"), -1);
        t->ser = int_or(lp_json_get(tm, "Result Serialization Time"), -1);
        t->result_size = int_or(lp_json_get(tm, "Result Size"), -1);
        t->fetch = int_or(lp_json_get(lp_json_get(tm, "Shuffle Read Metrics"), "Fetch Wait Time"), -1);
        t->swrite_ns = int_or(lp_json_get(lp_json_get(tm, "Shuffle Write Metrics"), "Shuffle Write Time"), -1);
        for (int k = 0; k < 14; k++)
            t->xm[k] = int_or(lp_json_get(*xmetric[k].obj ? lp_json_get(tm, xmetric[k].obj) : tm, xmetric[k].name), -1);
    }
    t->locality = LP_STR_NONE;
    const lp_json *loc = lp_json_get(lp_json_get(rec, "Task Info"), "Locality");
    if (loc && loc->type == LP_JSON_STRING && intern(c, loc->s, loc->len, &t->locality))
        return nomem(c);
    return LP_OK;
}

static lp_status num_str(sctx *c, int64_t v, lp_str *out);

/* The task's metrics as attribute pairs appended to kv[2 * *np ...] (at most 15 pairs). */
static lp_status metric_attrs(sctx *c, const stask *t, lp_str *kv, uint32_t *np)
{
    if (!(t->flags & TF_METRICS))
        return LP_OK;
    for (int k = 0; k < 14; k++) {
        if (t->xm[k] < 0)
            continue;
        lp_str key, vs;
        if (intern(c, xmetric[k].key, strlen(xmetric[k].key), &key))
            return nomem(c);
        lp_status st = num_str(c, t->xm[k], &vs);
        if (st)
            return st;
        kv[2 * *np] = key, kv[2 * *np + 1] = vs, (*np)++;
    }
    if (t->locality != LP_STR_NONE) {
        lp_str key;
        if (intern(c, "locality", 8, &key))
            return nomem(c);
        kv[2 * *np] = key, kv[2 * *np + 1] = t->locality, (*np)++;
    }
    return LP_OK;
}

/* SparkListenerTaskStart and TaskEnd (end): the task by its id, checked field by field
 * (a record that cannot be used is skipped and reported). */
static lp_status task_info(sctx *c, const lp_json *rec, const char *event, int end)
{
    const lp_json *ti = lp_json_get(rec, "Task Info");
    if (!ti || ti->type != LP_JSON_OBJECT) {
        bad_field(c, rec, event, "Task Info", ti, "an object");
        return LP_OK;
    }
    int64_t id, launch, stage, sattempt;
    const lp_json *n;
    if (int_of(n = lp_json_get(ti, "Task ID"), &id)) {
        bad_field(c, rec, event, "Task ID", n, "an integer");
        return LP_OK;
    }
    if (int_of(n = lp_json_get(ti, "Launch Time"), &launch) || launch < 0 || launch > INT64_MAX / MS) {
        bad_field(c, rec, event, "Launch Time", n, "a time in milliseconds");
        return LP_OK;
    }
    if (int_of(n = lp_json_get(rec, "Stage ID"), &stage) || stage < 0 || stage > INT32_MAX) {
        bad_field(c, rec, event, "Stage ID", n, "a non-negative integer");
        return LP_OK;
    }
    sattempt = int_or(lp_json_get(rec, "Stage Attempt ID"), 0);
    lp_str exec;
    if (str_of(c, n = lp_json_get(ti, "Executor ID"), &exec))
        return nomem(c);
    if (exec == LP_STR_NONE) {
        bad_field(c, rec, event, "Executor ID", n, "a string");
        return LP_OK;
    }
    int64_t finish = 0;
    if (end && (int_of(n = lp_json_get(ti, "Finish Time"), &finish) || finish < 0 || finish > INT64_MAX / MS)) {
        bad_field(c, rec, event, "Finish Time", n, "a time in milliseconds");
        return LP_OK;
    }
    if (end && finish < launch) {
        c->skipped[SK_NEG]++;
        report(c, LP_SEV_ERROR, c->cur, rec->line, rec->off,
               "%s: task %lld finishes (%lld ms) before its launch (%lld ms); record skipped", event, (long long)id,
               (long long)finish, (long long)launch);
        return LP_OK;
    }
    uint32_t i = imap_get(&c->taskmap, (uint64_t)id);
    stask *t;
    if (i == NONE) {
        if (lp_grow_at(&c->tk, &c->captk, c->ntk + 1, sizeof *c->tk))
            return nomem(c);
        t = &c->tk[c->ntk];
        memset(t, 0, sizeof *t);
        t->id = id;
        t->reason = LP_STR_NONE;
        t->deser = t->run = t->gc = t->ser = t->fetch = t->swrite_ns = t->result_size = -1;
        i = (uint32_t)c->ntk++;
        if (imap_put(&c->taskmap, (uint64_t)id, i))
            return nomem(c);
        if (end)
            report(c, LP_SEV_WARNING, c->cur, rec->line, rec->off,
                   "%s: task %lld ends without a SparkListenerTaskStart; its Task Info is used", event, (long long)id);
    } else {
        t = &c->tk[i];
        if ((end && (t->flags & TF_ENDED)) || (!end && (t->flags & TF_STARTED))) {
            c->skipped[SK_DUP]++;
            report(c, LP_SEV_ERROR, c->cur, rec->line, rec->off,
                   "%s: task %lld was already %s (byte %llu of %s); record skipped", event, (long long)id,
                   end ? "ended" : "started", (unsigned long long)t->off, fname(c, t->src) ? fname(c, t->src) : "?");
            return LP_OK;
        }
    }
    t->launch = launch;
    t->stage = (int32_t)stage;
    t->sattempt = (int32_t)sattempt;
    t->index = (int32_t)int_or(lp_json_get(ti, "Index"), -1);
    t->attempt = (int32_t)int_or(lp_json_get(ti, "Attempt"), 0);
    t->exec = exec;
    if (str_of(c, lp_json_get(ti, "Host"), &t->host))
        return nomem(c);
    t->off = rec->off;
    t->line = lp_line32(rec->line);
    t->src = c->cur;
    t->flags |= end ? TF_ENDED : TF_STARTED;
    if (!end)
        return LP_OK;
    t->finish = finish;
    t->getres = int_or(lp_json_get(ti, "Getting Result Time"), 0);
    return task_end(c, rec, event, t, stage, sattempt);
}

/* The "Job ID" of a job event: 0, or 1 when it is not a non-negative integer (the
 * record is skipped and reported). */
static int job_id(sctx *c, const lp_json *rec, const char *event, int64_t *id)
{
    const lp_json *n = lp_json_get(rec, "Job ID");
    if (int_of(n, id) || *id < 0 || *id > INT32_MAX) {
        bad_field(c, rec, event, "Job ID", n, "a non-negative integer");
        return 1;
    }
    return 0;
}

/* SparkListenerJobStart: the job, its stages' ids, and the stage infos it carries. */
static lp_status job_start(sctx *c, const lp_json *rec, const char *event)
{
    int64_t id, v;
    lp_status st = LP_OK;
    if (job_id(c, rec, event, &id))
        return LP_OK;
    uint32_t j = imap_get(&c->jobmap, (uint64_t)id);
    if (j == NONE) {
        if (lp_grow_at(&c->jb, &c->capjb, c->njb + 1, sizeof *c->jb))
            return nomem(c);
        j = (uint32_t)c->njb++;
        memset(&c->jb[j], 0, sizeof c->jb[j]);
        c->jb[j].end = -1;
        c->jb[j].result = LP_STR_NONE;
        if (imap_put(&c->jobmap, (uint64_t)id, j))
            return nomem(c);
    }
    sjob *jb = &c->jb[j];
    jb->id = (int32_t)id;
    jb->submit = int_or(lp_json_get(rec, "Submission Time"), -1);
    jb->off = rec->off;
    jb->line = lp_line32(rec->line);
    jb->src = c->cur;
    jb->stfirst = (uint32_t)c->njobstages;
    jb->stcount = 0;
    const lp_json *ids = lp_json_get(rec, "Stage IDs");
    for (const lp_json *x = ids && ids->type == LP_JSON_ARRAY ? lp_json_first(ids) : NULL; x;
         x = lp_json_next_sibling(x)) {
        if (int_of(x, &v) || v < 0 || v > INT32_MAX)
            continue;
        if (lp_grow_at(&c->jobstages, &c->capjobstages, c->njobstages + 1, sizeof *c->jobstages))
            return nomem(c);
        c->jobstages[c->njobstages++] = (int32_t)v;
        jb->stcount++;
    }
    const lp_json *infos = lp_json_get(rec, "Stage Infos");
    for (const lp_json *x = infos && infos->type == LP_JSON_ARRAY ? lp_json_first(infos) : NULL; x && !st;
         x = lp_json_next_sibling(x))
        if (x->type == LP_JSON_OBJECT)
            st = stage_info(c, rec, x, NULL, 0);
    return st;
}

/* SparkListenerJobEnd: the job's end and result. */
static lp_status job_end(sctx *c, const lp_json *rec, const char *event)
{
    int64_t id;
    if (job_id(c, rec, event, &id))
        return LP_OK;
    uint32_t j = imap_get(&c->jobmap, (uint64_t)id);
    if (j == NONE) {
        report(c, LP_SEV_WARNING, c->cur, rec->line, rec->off, "%s: job %lld was never started; ignored", event,
               (long long)id);
        return LP_OK;
    }
    c->jb[j].end = int_or(lp_json_get(rec, "Completion Time"), -1);
    const lp_json *res = lp_json_get(lp_json_get(rec, "Job Result"), "Result");
    if (str_of(c, res, &c->jb[j].result))
        return nomem(c);
    if (res && res->type == LP_JSON_STRING && !lp_json_str_is(res, "JobSucceeded"))
        report(c, LP_SEV_WARNING, c->cur, rec->line, rec->off, "job %lld did not succeed: %s", (long long)id, res->s);
    return LP_OK;
}

/* SparkListenerExecutorAdded and BlockManagerAdded: executors and their hosts (the
 * driver's host from its block manager). */
static lp_status executor_added(sctx *c, const lp_json *rec, const char *event)
{
    lp_str id;
    lp_status st;
    const lp_json *n;
    if (str_of(c, n = lp_json_get(rec, "Executor ID"), &id))
        return nomem(c);
    if (id == LP_STR_NONE) {
        bad_field(c, rec, event, "Executor ID", n, "a string");
        return LP_OK;
    }
    uint32_t x;
    if ((st = get_exec(c, id, &x)))
        return st;
    const lp_json *info = lp_json_get(rec, "Executor Info");
    if (str_of(c, lp_json_get(info, "Host"), &c->ex[x].host))
        return nomem(c);
    c->ex[x].cores = int_or(lp_json_get(info, "Total Cores"), -1);
    return LP_OK;
}

static lp_status block_manager_added(sctx *c, const lp_json *rec)
{
    const lp_json *bm = lp_json_get(rec, "Block Manager ID");
    lp_str id, host;
    lp_status st;
    if (str_of(c, lp_json_get(bm, "Executor ID"), &id) || str_of(c, lp_json_get(bm, "Host"), &host))
        return nomem(c);
    if (id != LP_STR_NONE && host != LP_STR_NONE) {
        const char *s = lp_strtab_get(c->st, id);
        if (!strcmp(s, "driver") || !strcmp(s, "<driver>"))
            c->driver_host = host;
        uint32_t x = imap_get(&c->execmap, id);
        if (x != NONE && c->ex[x].host == LP_STR_NONE)
            c->ex[x].host = host;
        else if (x == NONE) {
            if ((st = get_exec(c, id, &x)))
                return st;
            c->ex[x].host = host;
        }
    }
    return LP_OK;
}

/* One line of the log: a SparkListener event by its name; other listeners' events are
 * counted, not modelled. */
static lp_status record(sctx *c, const lp_json *rec)
{
    char w[80];
    c->nevents++;
    if (rec->type != LP_JSON_OBJECT) {
        c->skipped[SK_SHAPE]++;
        report(c, LP_SEV_ERROR, c->cur, rec->line, rec->off,
               "a Spark event log line must be a JSON object, found %s; line skipped", lp_json_what(rec, w, sizeof w));
        return LP_OK;
    }
    const lp_json *ev = lp_json_get(rec, "Event");
    if (!ev || ev->type != LP_JSON_STRING) {
        c->skipped[SK_SHAPE]++;
        report(c, LP_SEV_ERROR, c->cur, rec->line, rec->off,
               "a Spark event must have an \"Event\" string, found %s; line skipped", lp_json_what(ev, w, sizeof w));
        return LP_OK;
    }
    const char *e = ev->s;
    if (strncmp(e, "SparkListener", 13) != 0) {
        c->nother++; /* SQL, streaming and other listeners' events */
        return LP_OK;
    }
    e += 13;
    if (!strcmp(e, "TaskStart"))
        return task_info(c, rec, ev->s, 0);
    if (!strcmp(e, "TaskEnd"))
        return task_info(c, rec, ev->s, 1);
    if (!strcmp(e, "StageSubmitted"))
        return stage_info(c, rec, lp_json_get(rec, "Stage Info"), ev->s, 0);
    if (!strcmp(e, "StageCompleted"))
        return stage_info(c, rec, lp_json_get(rec, "Stage Info"), ev->s, 1);
    if (!strcmp(e, "JobStart"))
        return job_start(c, rec, ev->s);
    if (!strcmp(e, "JobEnd"))
        return job_end(c, rec, ev->s);
    if (!strcmp(e, "ExecutorAdded"))
        return executor_added(c, rec, ev->s);
    if (!strcmp(e, "BlockManagerAdded"))
        return block_manager_added(c, rec);
    if (!strcmp(e, "ApplicationStart")) {
        c->app_start = int_or(lp_json_get(rec, "Timestamp"), -1);
        if (str_of(c, lp_json_get(rec, "App Name"), &c->app_name) || str_of(c, lp_json_get(rec, "App ID"), &c->app_id))
            return nomem(c);
    } else if (!strcmp(e, "ApplicationEnd")) {
        c->app_end = int_or(lp_json_get(rec, "Timestamp"), -1);
    } else if (!strcmp(e, "LogStart")) {
        if (str_of(c, lp_json_get(rec, "Spark Version"), &c->version))
            return nomem(c);
    } else {
        c->nother++;
    }
    return LP_OK;
}

/* Read one stream of JSON lines into the state. */
static lp_status read_stream(sctx *c, lp_input *in)
{
    lp_json_opts jo;
    memset(&jo, 0, sizeof jo);
    jo.lines = 1;
    jo.repair = 1;
    lp_json_reader *r;
    lp_status st = lp_json_reader_new(&r, in, &jo, c->err);
    if (st)
        return st;
    c->in = in;
    while (!st) {
        lp_json_ev ev;
        lp_status rs = lp_json_next(r, &ev, c->err);
        if (rs == LP_END)
            break;
        if (rs) {
            st = rs;
            break;
        }
        if (ev.kind == LP_JSON_EV_BAD) {
            c->skipped[SK_JSON]++;
            if (ev.fatal)
                c->fatal = 1;
            report(c, LP_SEV_ERROR, c->cur, ev.line, ev.off, "%s; %s", ev.msg,
                   ev.fatal ? "the rest of the file is not read" : "line skipped");
            continue;
        }
        if (ev.kind == LP_JSON_EV_BEGIN) { /* a top-level array: its elements are not events */
            c->skipped[SK_SHAPE]++;
            report(c, LP_SEV_ERROR, c->cur, ev.line, ev.off,
                   "a Spark event log line must be a JSON object, found an array; skipped");
            continue;
        }
        if (ev.kind != LP_JSON_EV_VALUE)
            continue;
        if (ev.repaired && c->ds)
            lp_diags_report(c->ds, LP_SEV_WARNING, LP_RULE_ENCODING, fname(c, c->cur), ev.rline,
                            "byte %llu: %s; the string was mended (bad bytes became '?')", (unsigned long long)ev.roff,
                            ev.rmsg);
        st = record(c, ev.tree);
        if (!st && c->opts && c->opts->progress && ++c->progress_n % 4096 == 0 &&
            c->opts->progress(c->opts->progress_ctx, "reading", lp_input_consumed(in), lp_input_size(in)))
            st = lp_error_set(c->err, LP_ERR_ARG, "cancelled");
    }
    lp_json_reader_free(r);
    return st;
}

/* ---- building ------------------------------------------------------------------------- */

static int cmp_task(const void *a, const void *b)
{
    const stask *x = a, *y = b;
    if (x->launch != y->launch)
        return x->launch < y->launch ? -1 : 1;
    if (x->finish != y->finish)
        return x->finish < y->finish ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_dact(const void *a, const void *b)
{
    const dact *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

static lp_status set_source(sctx *c, uint16_t src)
{
    if (!c->nfiles)
        return LP_OK;
    return lp_builder_source(c->b, c->files[src], c->err);
}

/* Worker of slot k of executor x, created on first use. */
static lp_status slot_worker(sctx *c, sexec *e, size_t k, uint32_t *w)
{
    char buf[300];
    const char *id = lp_strtab_get(c->st, e->id);
    if (!strcmp(id, "<driver>"))
        id = "driver";
    int n = snprintf(buf, sizeof buf, "executor.%s.%zu", id, k);
    if (n < 0 || (size_t)n >= sizeof buf)
        n = (int)sizeof buf - 1;
    lp_status st = lp_builder_worker(c->b, buf, (size_t)n, w, c->err);
    if (st)
        return st;
    char kb[24];
    int kn = snprintf(kb, sizeof kb, "%zu", k);
    lp_str slot, cores = LP_STR_NONE;
    if (intern(c, kb, (size_t)kn, &slot))
        return nomem(c);
    if (e->cores >= 0) {
        kn = snprintf(kb, sizeof kb, "%lld", (long long)e->cores);
        if (intern(c, kb, (size_t)kn, &cores))
            return nomem(c);
    }
    lp_str kv[10];
    uint32_t np = 0;
    kv[2 * np] = c->s_kind, kv[2 * np + 1] = c->s_slot, np++;
    kv[2 * np] = c->s_executor, kv[2 * np + 1] = e->id, np++;
    kv[2 * np] = c->s_slot, kv[2 * np + 1] = slot, np++;
    if (e->host != LP_STR_NONE)
        kv[2 * np] = c->s_host, kv[2 * np + 1] = e->host, np++;
    if (cores != LP_STR_NONE)
        kv[2 * np] = c->s_cores, kv[2 * np + 1] = cores, np++;
    uint32_t list;
    if ((st = lp_builder_attrs(c->b, kv, np, &list, c->err)))
        return st;
    return lp_builder_worker_attrs(c->b, *w, list, 0, c->err);
}

/* When the executor had finished task t (ms): its launch plus deserialization, run and
 * result serialization times; the finish when the metrics are missing. */
static int64_t executor_end(const stask *t)
{
    if (!(t->flags & TF_METRICS) || t->run < 0)
        return t->finish;
    int64_t e = t->launch + (t->deser > 0 ? t->deser : 0) + t->run + (t->ser > 0 ? t->ser : 0);
    return e < t->finish ? e : t->finish;
}

/* Assign every task to a slot of its executor (SnailTrail §4.2): in launch order, the
 * most recently freed slot among those free at its launch. "Finish Time" is recorded by
 * the driver when it has handled the result, often a few ms after the executor's core
 * ran its next task; so when no slot is free, a slot whose task the executor had
 * already finished (launch + deserialization + run + serialization <= this launch) is
 * taken, the earliest-finishing one, and that task's slot time ends at this launch
 * (its result message still reaches the driver at its finish). Only when none is, a
 * new slot is made (reported once per executor beyond its "Total Cores"). */
static lp_status assign_slots(sctx *c)
{
    for (size_t i = 0; i < c->ntk; i++) {
        stask *t = &c->tk[i];
        uint32_t x;
        lp_status st = get_exec(c, t->exec, &x);
        if (st)
            return st;
        sexec *e = &c->ex[x];
        t->execi = x;
        t->end = t->finish;
        size_t best = SIZE_MAX, soft = SIZE_MAX;
        for (size_t k = 0; k < e->nslots; k++) {
            if (e->free_at[k] <= t->launch) {
                if (best == SIZE_MAX || e->free_at[k] > e->free_at[best])
                    best = k;
            } else if (executor_end(&c->tk[e->last[k]]) <= t->launch) {
                if (soft == SIZE_MAX || e->free_at[k] < e->free_at[soft])
                    soft = k;
            }
        }
        if (best == SIZE_MAX && soft != SIZE_MAX) {
            best = soft;
            c->tk[e->last[soft]].end = t->launch;
            c->ntrimmed++;
        }
        if (best == SIZE_MAX) {
            size_t cap = e->capslots;
            if (lp_grow_at(&e->free_at, &cap, e->nslots + 1, sizeof *e->free_at))
                return nomem(c);
            if (lp_grow_at(&e->last, &e->capslots, e->nslots + 1, sizeof *e->last))
                return nomem(c);
            best = e->nslots++;
            if (e->cores >= 0 && (int64_t)e->nslots > e->cores && !e->warned) {
                e->warned = 1;
                report(c, LP_SEV_WARNING, t->src, t->line, t->off,
                       "executor %s runs more tasks at once (%zu at %lld ms) than its %lld cores; extra slots are "
                       "made",
                       lp_strtab_get(c->st, e->id), e->nslots, (long long)t->launch, (long long)e->cores);
            }
        }
        e->free_at[best] = t->finish;
        e->last[best] = (uint32_t)i;
        t->slot = (uint32_t)best;
    }
    return LP_OK;
}

/* The sub-activities of one task, laid out backwards from its finish. */
static lp_status emit_task(sctx *c, const stask *t, uint32_t w, lp_str op, uint32_t attrs)
{
    int64_t L = t->launch * MS, F = t->end * MS;
    if (!(t->flags & TF_METRICS) || t->run < 0)
        return lp_builder_activity(c->b, w, L, F, LP_TYPE_PROCESSING, op, attrs, t->line, c->err);
    int64_t getres = t->getres > 0 && t->getres <= t->finish && t->end == t->finish ? (t->finish - t->getres) * MS : 0;
    int64_t ser = t->ser > 0 ? t->ser * MS : 0;
    int64_t swrite = t->swrite_ns > 0 ? t->swrite_ns : 0;
    int64_t gc = t->gc > 0 ? t->gc * MS : 0;
    int64_t fetch = t->fetch > 0 ? t->fetch * MS : 0;
    int64_t run = t->run * MS;
    int64_t compute = run - fetch - swrite - gc;
    if (compute < 0)
        compute = 0;
    /* With the task thread's CPU time (Spark >= 2.1, xm[0]: "Executor CPU Time", ns), the
     * compute part is split: processing = min(CPU time, compute), the rest of it off the
     * CPU (blocked reading input, on locks, in remote reads) is "off-cpu", placed before the
     * processing (Spark does not say when within the task it happened). */
    int64_t offcpu = 0;
    if (t->xm[0] >= 0 && t->xm[0] < compute) {
        offcpu = compute - t->xm[0];
        compute = t->xm[0];
    }
    int64_t deser = t->deser > 0 ? t->deser * MS : 0;
    struct {
        int64_t len;
        uint16_t type;
    } part[8] = {
        {getres, LP_TYPE_IO}, {ser, LP_TYPE_SERIALIZATION}, {swrite, LP_TYPE_IO}, {gc, c->t_gc},
        {compute, LP_TYPE_PROCESSING}, {offcpu, c->t_offcpu}, {fetch, LP_TYPE_IO}, {deser, LP_TYPE_DESERIALIZATION},
    };
    int64_t s[9], e[9];
    uint16_t ty[9];
    int np = 0;
    int64_t cur = F;
    for (int i = 0; i < 8; i++) {
        if (part[i].len <= 0 || cur <= L)
            continue;
        int64_t from = cur - part[i].len < L ? L : cur - part[i].len;
        s[np] = from, e[np] = cur, ty[np] = part[i].type, np++;
        cur = from;
    }
    if (cur > L)
        s[np] = L, e[np] = cur, ty[np] = LP_TYPE_SCHEDULING, np++;
    if (np == 0)
        return lp_builder_activity(c->b, w, L, F, LP_TYPE_PROCESSING, op, attrs, t->line, c->err);
    for (int i = np - 1; i >= 0; i--) {
        lp_status st = lp_builder_activity(c->b, w, s[i], e[i], ty[i], op, attrs, t->line, c->err);
        if (st)
            return st;
    }
    return LP_OK;
}

static lp_status num_str(sctx *c, int64_t v, lp_str *out)
{
    char b[24];
    int n = snprintf(b, sizeof b, "%lld", (long long)v);
    return intern(c, b, (size_t)n, out) ? nomem(c) : LP_OK;
}

static lp_status add_dact(sctx *c, dact **d, size_t *n, size_t *cap, int64_t s_ms, int64_t e_ms, lp_str op,
                          lp_str k1, int64_t v1, lp_str k2, int64_t v2, int failed, uint32_t line, uint16_t src)
{
    if (s_ms < 0 || e_ms < 0 || e_ms < s_ms)
        return LP_OK;
    if (lp_grow_at(d, cap, *n + 1, sizeof **d))
        return nomem(c);
    lp_str kv[6];
    uint32_t np = 0;
    lp_status st;
    kv[0] = k1;
    if ((st = num_str(c, v1, &kv[1])))
        return st;
    np = 1;
    if (k2 != LP_STR_NONE) {
        kv[2] = k2;
        if ((st = num_str(c, v2, &kv[3])))
            return st;
        np = 2;
    }
    if (failed) {
        kv[2 * np] = c->s_failed;
        kv[2 * np + 1] = c->s_true;
        np++;
    }
    dact *a = &(*d)[(*n)++];
    a->start = s_ms * MS;
    a->end = e_ms * MS;
    a->op = op;
    a->line = line;
    a->src = src;
    return lp_builder_attrs(c->b, kv, np, &a->attrs, c->err);
}

/* Tasks never ended are dropped (reported); the others sorted for the slot walk. */
static void drop_unended(sctx *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->ntk; i++) {
        stask *t = &c->tk[i];
        if (!(t->flags & TF_ENDED)) {
            c->skipped[SK_NO_END]++;
            report(c, LP_SEV_WARNING, t->src, t->line, t->off,
                   "task %lld (stage %d.%d) started at %lld ms never ended (no SparkListenerTaskEnd); dropped",
                   (long long)t->id, t->stage, t->sattempt, (long long)t->launch);
            continue;
        }
        c->tk[n++] = *t;
    }
    c->ntk = n;
    if (c->ntk)
        qsort(c->tk, c->ntk, sizeof *c->tk, cmp_task);
}

/* The driver's worker with its attributes (*drv NONE when there is nothing to drive). */
static lp_status driver_worker(sctx *c, uint32_t *drv)
{
    lp_status st;
    *drv = NONE;
    if (!c->ntk && !c->njb && !c->nsg)
        return LP_OK;
    if ((st = lp_builder_worker(c->b, "driver", 6, drv, c->err)))
        return st;
    lp_str kv[12];
    uint32_t np = 0;
    kv[2 * np] = c->s_kind, kv[2 * np + 1] = c->s_driver, np++;
    if (c->driver_host != LP_STR_NONE)
        kv[2 * np] = c->s_host, kv[2 * np + 1] = c->driver_host, np++;
    if (c->app_name != LP_STR_NONE)
        kv[2 * np] = c->s_app, kv[2 * np + 1] = c->app_name, np++;
    if (c->app_id != LP_STR_NONE)
        kv[2 * np] = c->s_app_id, kv[2 * np + 1] = c->app_id, np++;
    if (c->version != LP_STR_NONE)
        kv[2 * np] = c->s_version, kv[2 * np + 1] = c->version, np++;
    uint32_t list;
    if ((st = lp_builder_attrs(c->b, kv, np, &list, c->err)))
        return st;
    return lp_builder_worker_attrs(c->b, *drv, list, 0, c->err);
}

/* The operator of task t: its stage's name (of any attempt), else "stage N"; the
 * stage's first launch and last finish are updated. */
static lp_status task_op(sctx *c, const stask *t, lp_str *op)
{
    uint32_t si;
    lp_status st;
    if ((st = get_stage(c, t->stage, t->sattempt, &si)))
        return st;
    sstage *sg = &c->sg[si];
    if (sg->first_launch < 0 || t->launch < sg->first_launch)
        sg->first_launch = t->launch;
    if (t->finish > sg->last_finish)
        sg->last_finish = t->finish;
    *op = sg->name;
    if (*op == LP_STR_NONE) {
        uint32_t ni = imap_get(&c->stagename, (uint64_t)t->stage);
        if (ni != NONE)
            *op = c->sg[ni].name;
    }
    if (*op == LP_STR_NONE) {
        char b[40];
        int k = snprintf(b, sizeof b, "stage %d", t->stage);
        if (intern(c, b, (size_t)k, op))
            return nomem(c);
    }
    return LP_OK;
}

/* The worker of task t's slot (created lazily, in slot order of first use). */
static lp_status task_worker(sctx *c, const stask *t, uint32_t *w)
{
    sexec *e = &c->ex[t->execi];
    lp_status st;
    if (t->slot >= e->capworker || e->worker[t->slot] == 0) {
        size_t old = e->capworker;
        if (lp_grow_at(&e->worker, &e->capworker, (size_t)t->slot + 1, sizeof *e->worker))
            return nomem(c);
        for (size_t k = old; k < e->capworker; k++)
            e->worker[k] = 0;
        if ((st = slot_worker(c, e, t->slot, w)))
            return st;
        e->worker[t->slot] = *w + 1; /* 0 = not created */
    }
    *w = e->worker[t->slot] - 1;
    return LP_OK;
}

/* One task: its activity with its attributes, the launch message from the driver and
 * the result message back. */
static lp_status task_out(sctx *c, const stask *t, uint32_t drv, uint32_t a_launch)
{
    lp_status st;
    lp_str op;
    uint32_t w;
    if ((st = task_op(c, t, &op)) || (st = task_worker(c, t, &w)))
        return st;
    lp_str kv[48], vs;
    uint32_t np = 0;
    if ((st = num_str(c, t->stage, &vs)))
        return st;
    kv[2 * np] = c->s_stage, kv[2 * np + 1] = vs, np++;
    if ((st = num_str(c, t->sattempt, &vs)))
        return st;
    kv[2 * np] = c->s_attempt, kv[2 * np + 1] = vs, np++;
    if ((st = num_str(c, t->id, &vs)))
        return st;
    kv[2 * np] = c->s_task, kv[2 * np + 1] = vs, np++;
    if (t->index >= 0) {
        if ((st = num_str(c, t->index, &vs)))
            return st;
        kv[2 * np] = c->s_index, kv[2 * np + 1] = vs, np++;
    }
    if (t->reason != LP_STR_NONE)
        kv[2 * np] = c->s_status, kv[2 * np + 1] = t->reason, np++;
    if ((st = metric_attrs(c, t, kv, &np)))
        return st;
    uint32_t attrs;
    if ((st = lp_builder_attrs(c->b, kv, np, &attrs, c->err)) || (st = emit_task(c, t, w, op, attrs)))
        return st;
    /* launch and result messages */
    lp_str mk[4];
    mk[0] = c->s_edge, mk[1] = c->s_result;
    uint32_t mnp = 1, a_result;
    if (t->result_size >= 0) {
        mk[2] = c->s_bytes;
        if ((st = num_str(c, t->result_size, &mk[3])))
            return st;
        mnp = 2;
    }
    if ((st = lp_builder_attrs(c->b, mk, mnp, &a_result, c->err)))
        return st;
    if ((st = lp_builder_message(c->b, drv, t->launch * MS, w, t->launch * MS, (uint64_t)t->id, a_launch, t->line,
                                 c->err)))
        return st;
    return lp_builder_message(c->b, w, t->end * MS, drv, t->finish * MS, (uint64_t)t->id, a_result, t->line, c->err);
}

/* The driver's scheduling: a job's or stage's submission until its first task or
 * stage, its completion after its last; in time order, never overlapping. */
static lp_status driver_schedule(sctx *c, uint32_t drv, uint16_t *cursrc)
{
    lp_status st = LP_OK;
    dact *d = NULL;
    size_t nd = 0, capd = 0;
    for (size_t i = 0; i < c->nsg && !st; i++) {
        const sstage *s = &c->sg[i];
        st = add_dact(c, &d, &nd, &capd, s->submit, s->first_launch, c->op_stage_submit, c->s_stage, s->id,
                      c->s_attempt, s->attempt, 0, s->line, s->src);
        if (!st)
            st = add_dact(c, &d, &nd, &capd, s->last_finish, s->complete, c->op_stage_complete, c->s_stage, s->id,
                          c->s_attempt, s->attempt, s->failure != LP_STR_NONE, s->line, s->src);
    }
    for (size_t i = 0; i < c->njb && !st; i++) {
        const sjob *j = &c->jb[i];
        int64_t first = -1, last = -1;
        for (uint32_t k = 0; k < j->stcount; k++) {
            int32_t sid = c->jobstages[j->stfirst + k];
            for (int32_t a = 0; a < 64; a++) { /* attempts of the stage */
                uint32_t si = imap_get(&c->stagemap, ((uint64_t)(uint32_t)sid << 32) | (uint32_t)a);
                if (si == NONE)
                    break;
                const sstage *s = &c->sg[si];
                if (s->submit >= 0 && (first < 0 || s->submit < first))
                    first = s->submit;
                if (s->complete > last)
                    last = s->complete;
            }
        }
        int failed = j->result != LP_STR_NONE && strcmp(lp_strtab_get(c->st, j->result), "JobSucceeded") != 0;
        st = add_dact(c, &d, &nd, &capd, j->submit, first, c->op_job_submit, c->s_job, j->id, LP_STR_NONE, 0, 0,
                      j->line, j->src);
        if (!st)
            st = add_dact(c, &d, &nd, &capd, last, j->end, c->op_job_complete, c->s_job, j->id, LP_STR_NONE, 0, failed,
                          j->line, j->src);
    }
    if (!st && nd) {
        qsort(d, nd, sizeof *d, cmp_dact);
        int64_t last_end = INT64_MIN;
        for (size_t i = 0; i < nd && !st; i++) {
            int64_t s = d[i].start < last_end ? last_end : d[i].start;
            if (s >= d[i].end && !(d[i].start == d[i].end && s == d[i].start))
                continue;
            if (d[i].src != *cursrc) {
                *cursrc = d[i].src;
                if ((st = set_source(c, *cursrc)))
                    break;
            }
            st = lp_builder_activity(c->b, drv, s, d[i].end, LP_TYPE_SCHEDULING, d[i].op, d[i].attrs, d[i].line,
                                     c->err);
            if (d[i].end > last_end)
                last_end = d[i].end;
        }
    }
    lp_free(d);
    return st;
}

/* The trace: tasks on their executors' slots, the driver's scheduling, and the
 * messages between them. */
static lp_status build(sctx *c)
{
    lp_status st;
    drop_unended(c);
    if ((st = assign_slots(c)))
        return st;
    uint32_t drv;
    if ((st = driver_worker(c, &drv)))
        return st;
    lp_str kl[2] = {c->s_edge, c->s_launch};
    uint32_t a_launch;
    if ((st = lp_builder_attrs(c->b, kl, 1, &a_launch, c->err)))
        return st;
    uint16_t cursrc = UINT16_MAX;
    for (size_t i = 0; i < c->ntk && !st; i++) {
        const stask *t = &c->tk[i];
        if (t->src != cursrc) {
            cursrc = t->src;
            if ((st = set_source(c, cursrc)))
                break;
        }
        st = task_out(c, t, drv, a_launch);
    }
    if (st)
        return st;
    return driver_schedule(c, drv, &cursrc);
}

static void summary(sctx *c)
{
    if (!c->ds)
        return;
    char sk[500];
    uint64_t nsk = lp_import_counts(sk, sizeof sk, c->skipped, skip_names, SK_N);
    size_t nslots = 0, nexec = 0;
    for (size_t i = 0; i < c->nex; i++) {
        nslots += c->ex[i].nslots;
        nexec += c->ex[i].nslots > 0;
    }
    lp_diags_report(c->ds, LP_SEV_NOTE, LP_RULE_IMPORT, c->nfiles ? c->files[0] : NULL, 0,
                    "spark: %llu events read%s%s: %zu tasks (%llu not successful) on %zu slots of %zu executors, %zu "
                    "stage attempts (%llu failed), %zu jobs; %llu task ends recorded after their slot's next launch; %llu "
                    "other events not modelled; %llu skipped%s%s%s%s",
                    (unsigned long long)c->nevents, c->nfiles > 1 ? " from " : "",
                    c->nfiles > 1 ? "several files" : "", c->ntk, (unsigned long long)c->nfailed_tasks, nslots, nexec,
                    c->nsg, (unsigned long long)c->nfailed_stages, c->njb, (unsigned long long)c->ntrimmed,
                    (unsigned long long)c->nother,
                    (unsigned long long)nsk, nsk ? " (" : "", sk, nsk ? ")" : "", c->fatal ? "; a file ended early" : "");
}

static lp_status init(sctx *c, lp_builder *b, const lp_load_opts *opts, lp_error *err)
{
    memset(c, 0, sizeof *c);
    c->b = b;
    c->st = lp_builder_strtab(b);
    c->ds = lp_builder_diags(b);
    c->err = err;
    c->opts = opts;
    c->app_name = c->app_id = c->version = c->driver_host = LP_STR_NONE;
    c->app_start = c->app_end = -1;
    static const char *const names[] = {"stage", "attempt", "task", "index", "executor", "host", "status", "kind",
                                        "driver", "slot", "cores", "edge", "launch", "result", "bytes", "job",
                                        "failed", "true", "app", "app_id", "spark_version", "speculative",
                                        "job-submit", "stage-submit", "stage-complete", "job-complete"};
    lp_str *dst[] = {&c->s_stage, &c->s_attempt, &c->s_task, &c->s_index, &c->s_executor, &c->s_host, &c->s_status,
                     &c->s_kind, &c->s_driver, &c->s_slot, &c->s_cores, &c->s_edge, &c->s_launch, &c->s_result,
                     &c->s_bytes, &c->s_job, &c->s_failed, &c->s_true, &c->s_app, &c->s_app_id, &c->s_version,
                     &c->s_speculative, &c->op_job_submit, &c->op_stage_submit, &c->op_stage_complete,
                     &c->op_job_complete};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (intern(c, names[i], strlen(names[i]), dst[i]))
            return nomem(c);
    lp_status st = lp_builder_type(b, "gc", 2, &c->t_gc, err);
    return st ? st : lp_builder_type(b, "off-cpu", 7, &c->t_offcpu, err);
}

static void release(sctx *c)
{
    for (size_t i = 0; i < c->nfiles; i++)
        lp_free(c->files[i]);
    lp_free(c->files);
    for (size_t i = 0; i < c->nex; i++) {
        lp_free(c->ex[i].free_at);
        lp_free(c->ex[i].last);
        lp_free(c->ex[i].worker);
    }
    lp_free(c->ex);
    lp_free(c->tk);
    lp_free(c->sg);
    lp_free(c->jb);
    lp_free(c->jobstages);
    lp_hmap_release(&c->taskmap);
    lp_hmap_release(&c->stagemap);
    lp_hmap_release(&c->stagename);
    lp_hmap_release(&c->jobmap);
    lp_hmap_release(&c->execmap);
}

static lp_status add_file(sctx *c, const char *name)
{
    if (c->nfiles >= UINT16_MAX)
        return lp_error_set(c->err, LP_ERR_LIMIT, "too many event-log files (at most %u)", UINT16_MAX);
    if (lp_grow_at(&c->files, &c->capfiles, c->nfiles + 1, sizeof *c->files))
        return nomem(c);
    if (!(c->files[c->nfiles] = lp_strndup(name, strlen(name))))
        return nomem(c);
    c->cur = (uint16_t)c->nfiles++;
    return LP_OK;
}

static lp_status spark_read(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    sctx c;
    lp_status st = init(&c, b, opts, err);
    if (!st)
        st = add_file(&c, lp_input_name(in));
    if (!st)
        st = read_stream(&c, in);
    if (!st)
        st = build(&c);
    if (!st)
        summary(&c);
    release(&c);
    return st;
}

/* ---- rolling (v2) directories ------------------------------------------------------------ */

static int has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

/* "events_<N>_..." -> N, or -1. */
static long long events_index(const char *name)
{
    if (!has_prefix(name, "events_"))
        return -1;
    const char *p = name + 7;
    if (*p < '0' || *p > '9')
        return -1;
    long long v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (LLONG_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return *p == '_' ? v : -1;
}

static const char *base_name(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    const char *s = path + n;
    while (s > path && s[-1] != '/')
        s--;
    return s;
}

int lp_spark_is_log_dir(const char *path)
{
    struct stat sb;
    if (!path || strcmp(path, "-") == 0 || stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return 0;
    if (has_prefix(base_name(path), "eventlog_v2_"))
        return 1;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int yes = 0;
    struct dirent *e;
    while (!yes && (e = readdir(d)))
        yes = has_prefix(e->d_name, "appstatus_") || events_index(e->d_name) >= 0;
    closedir(d);
    return yes;
}

typedef struct ent {
    long long idx;
    int compact;
    char *name;
} ent;

static int cmp_ent(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    if (x->idx != y->idx)
        return x->idx < y->idx ? -1 : 1;
    if (x->compact != y->compact)
        return y->compact - x->compact; /* the compacted file of an index first */
    return strcmp(x->name, y->name);
}

void lp_spark_files_free(char **files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        lp_free(files[i]);
    lp_free(files);
}

lp_status lp_spark_log_files(const char *dir, char ***files, size_t *nfiles, lp_error *err)
{
    *files = NULL;
    *nfiles = 0;
    DIR *d = opendir(dir);
    if (!d)
        return lp_error_set(err, LP_ERR_IO, "cannot read directory '%s': %s", dir, strerror(errno));
    ent *v = NULL;
    size_t n = 0, cap = 0;
    lp_status st = LP_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        long long idx = events_index(e->d_name);
        if (idx < 0)
            continue;
        if (lp_grow_at(&v, &cap, n + 1, sizeof *v)) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        v[n].idx = idx;
        v[n].compact = ends_with(e->d_name, ".compact");
        if (!(v[n].name = lp_strndup(e->d_name, strlen(e->d_name)))) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (!st && n) {
        qsort(v, n, sizeof *v, cmp_ent);
        /* from the last compacted file on */
        size_t from = 0;
        for (size_t i = 0; i < n; i++)
            if (v[i].compact)
                from = i;
        char **out = lp_calloc(n - from, sizeof *out);
        if (!out)
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        size_t k = 0;
        for (size_t i = from; i < n && !st; i++) {
            if (i > from && v[i].idx == v[from].idx && v[from].compact)
                continue; /* the original of a compacted index */
            size_t len = strlen(dir) + strlen(v[i].name) + 2;
            if (!(out[k] = lp_malloc(len))) {
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                break;
            }
            snprintf(out[k], len, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", v[i].name);
            k++;
        }
        if (st) {
            lp_spark_files_free(out, k);
        } else {
            *files = out;
            *nfiles = k;
        }
    }
    for (size_t i = 0; i < n; i++)
        lp_free(v[i].name);
    lp_free(v);
    return st;
}

lp_status lp_spark_read_dir(lp_builder *b, const char *dir, const lp_load_opts *opts, lp_error *err)
{
    char **files;
    size_t nf;
    lp_status st = lp_spark_log_files(dir, &files, &nf, err);
    if (st)
        return st;
    sctx c;
    if ((st = init(&c, b, opts, err))) {
        lp_spark_files_free(files, nf);
        release(&c);
        return st;
    }
    if (!nf && c.ds)
        lp_diags_report(c.ds, LP_SEV_ERROR, LP_RULE_IMPORT, dir, 0,
                        "no events_<N>_* files in this event-log directory: nothing to read");
    for (size_t i = 0; i < nf && !st; i++) {
        if ((st = add_file(&c, files[i])) || (st = lp_builder_source(b, files[i], err)))
            break;
        if (ends_with(files[i], ".lz4") || ends_with(files[i], ".lzf") || ends_with(files[i], ".snappy")) {
            c.skipped[SK_CODEC]++;
            if (c.ds)
                lp_diags_report(c.ds, LP_SEV_ERROR, LP_RULE_IMPORT, files[i], 0,
                                "Spark's %s codec is not supported (only zstd and gzip are); decompress the file "
                                "first; file skipped",
                                strrchr(files[i], '.') + 1);
            continue;
        }
        lp_input *in;
        if ((st = lp_input_open(&in, files[i], err)))
            break;
        st = read_stream(&c, in);
        lp_input_close(in);
    }
    if (!st)
        st = build(&c);
    if (!st)
        summary(&c);
    lp_spark_files_free(files, nf);
    release(&c);
    return st;
}

/* ---- detection ------------------------------------------------------------------------------ */

/* A line that opens with {"Event": ... (JSON lines: the key on the line of the brace). */
static int spark_detect(const unsigned char *head, size_t n, const char *path)
{
    lp_json_head h;
    lp_json_head_init(&h, head, n);
    (void)path;
    if (lp_json_head_next(&h) != '{')
        return 0;
    lp_json_head_next(&h);
    if (h.newline || !lp_json_head_is(&h, "Event"))
        return 0;
    if (lp_json_head_next(&h) == ':')
        lp_json_head_next(&h);
    if (h.tok == '"' && h.n >= 13 && memcmp(h.s, "SparkListener", 13) == 0)
        return 98;
    if (h.tok == '"' && h.n >= 16 && memcmp(h.s, "org.apache.spark", 16) == 0)
        return 95;
    return 85;
}

const lp_importer lp_import_spark = {
    "spark",
    "Apache Spark event log (JSON lines of SparkListener events; a file, or a rolling eventlog_v2_* directory): "
    "driver and executor task slots (docs/formats/spark.md)",
    spark_detect,
    spark_read,
};
