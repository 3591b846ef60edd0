/* chrome.c: the Chrome Trace Event Format importer ("chrome"), with the PyTorch
 * profiler (Kineto) flavour on top. The mapping is documented in
 * docs/formats/chrome.md; this header summarises it.
 *
 * Input: a JSON array of events, or an object whose "traceEvents" member is that
 * array (other members are metadata: displayTimeUnit, otherData, Kineto's
 * schemaVersion/deviceProperties/distributedInfo...), plain, gzip or zstd. The array
 * may lack its closing ']' (the format allows it: tracers that crash leave it out).
 * Events are read one at a time (lp_json_reader: memory is bounded by the largest
 * event) into compact columns; everything is resolved at the end of the file, because
 * nesting, flows and metadata (Kineto writes thread names last) need the whole file.
 *
 * Model (MODEL.md; SnailTrail §2, §4.1):
 *  - a thread (pid, tid) is a worker; its slices (X, and B/E pairs matched per thread
 *    in input order) are nested by time: each instant of the thread belongs to the
 *    innermost slice open then, which becomes the activity (operator = the slice's
 *    name) with attribute stack="outer;...;parent". A slice that overlaps the end of
 *    its enclosing slice is clipped to it (reported). A B never closed is closed at the
 *    end of the trace (the latest timestamp of the file) and reported with its
 *    position; an E without B is reported and dropped;
 *  - types: a category that names a built-in type (processing, waiting, io, ...) is
 *    that type (so longpole's own exports read back); Kineto memory copies are `io`;
 *    CUDA synchronisation calls that waited for the GPU are `waiting`; everything else
 *    is `processing`;
 *  - flows (s/t/f, keyed by cat+name+id; and bind_id with flow_out/flow_in on slices)
 *    are messages: s (or a flow_out slice's end) sends, t receives and sends again, f
 *    receives at its own time with bp:"e" (or for the ipc/input categories), else at
 *    the start of the next slice of its thread (catapult's binding);
 *  - async events: each async id (b/e/n: cat+id; S/T/F: name+id) is its own worker
 *    timeline "async:<cat-or-name>:<id>"; b/e nest like B/E; S..F is one slice with a
 *    child per step (T, p); the outermost slice gets a message from the thread that
 *    began it and one to the thread that ended it;
 *  - counters C, instants i/I, samples P, objects N/O/D, memory dumps v/V and the like
 *    have no duration and no causal link: they are counted, not modelled;
 *  - metadata M: process_name, process_labels, process_sort_index, thread_name,
 *    thread_sort_index become worker names and attributes;
 *  - timestamps are microseconds (numbers, or numbers in strings), converted exactly to
 *    integer nanoseconds (decimal arithmetic, rounded half to even below 1 ns);
 *    displayTimeUnit only changes how viewers display times (the format's definition
 *    and catapult's), so it is kept as a note, never applied.
 * Kineto (docs/formats/chrome.md "PyTorch"): GPU streams are workers like threads;
 * a launch (a runtime call and the GPU operation with the same correlation id; the ac2g
 * flows are not needed) is a message, delivered when the stream could take the
 * operation (at the previous operation's end if the stream was still busy, HTA's
 * "kernel-kernel" rule, else at the operation's start, so the gap before it is the
 * launch wait); a synchronisation call (cuda*Synchronize) that the GPU made wait
 * receives a message from the GPU operation that ended last before it returned (of the
 * stream, device or event named by the matching cuda_sync record when there is one,
 * else of any stream), and only then is `waiting`; the profiler's own span ("Trace"
 * category) is dropped; per-event bookkeeping ids are not kept as attributes.
 *
 * Resolution at the end of a file, in order: close open B's, async events into slices
 * on their timelines, group and sort slices per thread, GPU operations per stream,
 * launch and sync messages (Kineto), flow messages, worker names, then per thread the
 * nesting walk that emits activities (emit_thread), then the messages.
 *
 * Invariants of the resolved output: per worker, activities are emitted in time order
 * and never overlap; every record skipped is counted by reason and reported with the
 * file, line and byte offset; the per-file note sums them up.
 */
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/import.h"
#include "longpole/codec/json.h"
#include "longpole/base/alloc.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define OPEN_END INT64_MIN        /* end of a B slice not closed yet */
#define MAX_ARGS 16               /* args kept as attributes per event */
#define MAX_ARG_LEN 256           /* longer string args are not kept */
#define MAX_STACK_TEXT 4096       /* stack attribute text is cut here */

/* ---- why records are skipped or not modelled --------------------------------------- */

enum skip {
    SK_JSON = 0,      /* not valid JSON */
    SK_SHAPE,         /* not an object */
    SK_PH,            /* no or bad "ph" */
    SK_TS,            /* no or bad "ts" */
    SK_DUR,           /* X without a usable "dur", or negative */
    SK_FIELD,         /* a field of the wrong type */
    SK_E_NO_B,        /* E without an open B */
    SK_NEG,           /* E before its B */
    SK_NO_ID,         /* flow or async event without an id */
    SK_FLOW_NO_START, /* flow step or end without a start */
    SK_FLOW_NO_END,   /* flow start never ended */
    SK_ASYNC,         /* unmatched async end, async step without start */
    SK_PHASE,         /* unknown phase letter */
    SK_N
};
static const char *const skip_names[SK_N] = {
    "not valid JSON", "not an event object", "without a usable ph", "without a usable ts",
    "X without a usable dur", "with a field of the wrong type", "E without B", "E before its B",
    "flow/async without id", "flow step/end without start", "flow start without end",
    "unmatched async", "unknown phase",
};

enum unmodelled {
    UM_COUNTER = 0, UM_INSTANT, UM_SAMPLE, UM_OBJECT, UM_MEMDUMP, UM_OTHER, UM_META, UM_ASYNC_N,
    UM_GAP, UM_TRACE_MARK, UM_SYNC_LINK, UM_KINETO_FLOW, UM_N
};
static const char *const um_names[UM_N] = {
    "counters (C)", "instants (i/I)", "samples (P)", "object events (N/O/D)", "memory dumps (v/V)",
    "other marks", "other metadata", "async instants (n)", "derived events of longpole exports",
    "profiler spans (Trace)", "cuda_sync records", "Kineto launch/sync flows (replaced by correlation links)",
};

/* ---- compact event columns ------------------------------------------------------- */

/* slice flags */
#define SL_UNCLOSED 0x001u  /* B never closed: ended at the end of the trace */
#define SL_CLIPPED 0x002u   /* overlapped its parent's end: clipped */
#define SL_GPU_OP 0x004u    /* Kineto GPU operation (kernel, memcpy, memset) */
#define SL_SYNC 0x008u      /* CUDA synchronisation call */
#define SL_WAIT 0x010u      /* ... that waited for the GPU (a message arrives at its end) */
#define SL_MARK 0x020u      /* Kineto profiler span ("Trace") */
#define SL_DROP 0x040u      /* not emitted */
#define SL_IO 0x080u        /* memory copy */
#define SL_RUNTIME 0x100u   /* CUDA runtime or driver call (Kineto) */
#define SL_NO_OP 0x200u     /* no operator (longpole.no_op) */
#define SL_FROM_B 0x400u    /* made by a B (and its E) */
#define SL_ASYNC 0x800u     /* made by async events */
#define SL_CONTAINER 0x1000u /* a GPU-side annotation: names the stack of the operations in it, no activity */

typedef struct cslice {
    int64_t start, end;   /* ns; end OPEN_END while a B is open */
    uint64_t off;         /* byte offset of the event (B for B/E) */
    uint32_t line;        /* its line (saturated) */
    uint32_t thread;      /* thread index */
    lp_str name, cat;     /* LP_STR_NONE when absent */
    uint32_t attrs;       /* kept args (offset in ctx.kvp, 0 = none) */
    uint32_t seq;         /* input order */
    uint16_t flags;       /* SL_* */
    int64_t corr;         /* Kineto correlation id, -1 if none */
} cslice;

/* A flow point. v1 (s/t/f) carry their own time; v2 (bind_id) points refer to a slice
 * and take its start (flow_in) or end (flow_out). */
typedef struct cflow {
    int64_t ts;
    uint64_t off;
    uint32_t line;
    uint32_t key;         /* private key id of the flow (cat, name, id) or bind_id */
    uint32_t thread;
    uint32_t slice;       /* v2: slice index; v1: NONE */
    uint32_t seq;
    uint32_t attrs;       /* args of the event (v1 s only; offset in ctx.kvp) */
    lp_str cat, name;
    uint64_t msgid;       /* the id as a message id */
    char ph;              /* 's','t','f'; v2: 'o' out, 'i' in, 'x' in and out */
    uint8_t bind_here;    /* f binds to the enclosing slice (bp:"e", or the ipc/input hack) */
    uint8_t lpexport;     /* written by longpole's exporter (args longpole.msg_id): no flow name attribute */
} cflow;

typedef struct casync {
    int64_t ts;
    uint64_t off;
    uint32_t line;
    uint32_t key;         /* private key id of the async id */
    uint32_t thread;      /* the thread that logged it */
    uint32_t seq;
    uint32_t attrs;       /* offset in ctx.kvp */
    lp_str name, cat, step;
    char ph;              /* b e S T p F */
} casync;

/* Kineto's GPU-side record of a synchronisation (cat "cuda_sync"). */
typedef struct csync {
    int64_t corr, start, end;
    int64_t stream, wait_stream; /* -1 if absent */
    uint32_t thread;
    int kind;             /* SY_* */
} csync;
enum { SY_OTHER = 0, SY_STREAM, SY_CONTEXT, SY_EVENT };

typedef struct cthread {
    lp_str pid, tid;      /* texts (trace strings) */
    uint32_t proc;        /* process index */
    lp_str tname;         /* thread_name metadata, LP_STR_NONE if none */
    lp_str tsort;         /* thread_sort_index text */
    int64_t stream;       /* Kineto stream number of its GPU ops, -1 if none */
    lp_str akey;          /* async: the worker name */
    uint8_t async;        /* an async id's timeline */
    uint8_t gpu;          /* has GPU operations */
    uint8_t used;         /* becomes a worker */
    uint32_t worker;
    uint32_t *open;       /* B stack (slice indices) */
    uint32_t nopen, capopen;
    uint32_t first, count;/* its slices in ctx.order after grouping */
    uint32_t gfirst, gcount; /* its GPU ops in ctx.gop */
} cthread;

typedef struct cproc {
    lp_str pid, name, labels, sort;
} cproc;

/* A resolved message, emitted once every worker exists. */
typedef struct cmsg {
    uint32_t src, dst;    /* threads */
    int64_t send, recv;
    uint64_t id;
    uint32_t attrs;
    uint32_t line;
} cmsg;

/* sort key of a slice within its thread */
typedef struct skey {
    int64_t start, end;
    uint32_t seq, idx;
} skey;

typedef struct gop {
    int64_t start, end, pmax; /* pmax: the latest end among this op and the ones before */
} gop;

/* Categories with a meaning (Kineto's, and the profiler's own span). */
enum {
    KC_CPU_OP = 0, KC_OPERATOR, KC_CUDA_RUNTIME, KC_RUNTIME, KC_CUDA_DRIVER, KC_KERNEL, KC_KERNEL2, KC_AC2G,
    KC_GPU_MEMCPY, KC_GPU_MEMSET, KC_MEMCPY, KC_MEMSET, KC_USER_ANNOTATION, KC_GPU_USER_ANNOTATION,
    KC_PYTHON_FUNCTION, KC_CUDA_SYNC, KC_TRACE, K_NCATS
};
static const char *const kcat_names[K_NCATS] = {
    "cpu_op", "Operator", "cuda_runtime", "Runtime", "cuda_driver", "kernel", "Kernel", "ac2g", "gpu_memcpy",
    "gpu_memset", "Memcpy", "Memset", "user_annotation", "gpu_user_annotation", "python_function", "cuda_sync", "Trace",
};

typedef struct cctx {
    lp_builder *b;        /* the trace being built (not owned) */
    lp_strtab *st;        /* the trace's strings */
    lp_diags *ds;         /* the builder's diagnostics sink */
    const char *file;     /* the input's name, for diagnostics */
    const lp_load_opts *opts; /* progress callback (may be NULL) */
    lp_input *in;         /* the input (for progress: bytes consumed) */
    lp_error *err;        /* where resource errors go */

    lp_strtab keys;       /* private: thread, process, flow and async keys */
    uint32_t *keyval;     /* key id -> thread or process index */
    size_t capkeyval;     /* capacity of keyval */

    cthread *th;          /* threads (and async timelines) */
    size_t nth, capth;
    cproc *pr;            /* processes */
    size_t npr, cappr;
    cslice *sl;           /* slices, in input order */
    size_t nsl, capsl;
    cflow *fl;            /* flow points, in input order */
    size_t nfl, capfl;
    casync *as;           /* async events, in input order */
    size_t nas, capas;
    csync *sy;            /* Kineto cuda_sync records */
    size_t nsy, capsy;
    cmsg *ms;             /* resolved messages */
    size_t nms, capms;
    uint32_t *kvp;        /* kept args: kvp[o] = npairs, then npairs (key, value) strings; kvp[0] = 0 */
    size_t nkvp, capkvp;
    skey *order;          /* slices grouped by thread, sorted */
    gop *gop;             /* GPU ops grouped by thread */
    size_t ngop;          /* entries of gop */

    uint32_t seq;         /* next input-order number */
    int64_t tmax;         /* latest instant of the file */
    int have_t;           /* tmax is set */
    int kineto;           /* Kineto flavour seen */
    int has_rank;         /* distributedInfo.rank seen */
    char rank[32];        /* its text */
    lp_str dtu;           /* displayTimeUnit */
    uint64_t nevents;     /* trace events read */
    uint64_t skipped[SK_N];       /* records skipped, by reason */
    uint64_t unmodelled[UM_N];    /* events read but not modelled, by kind */
    int fatal;            /* the file ended early (truncated, corrupt) */
    int array_open;       /* a top-level array whose ']' is missing */
    uint64_t progress_n;  /* events since the last progress call */

    char lastkey[128];    /* the last thread key looked up ... */
    size_t lastkeylen;    /* ... its length ... */
    uint32_t lastthread;  /* ... and its thread (NONE: none yet) */

    /* interned attribute keys and values */
    lp_str s_launch, s_cat, s_stack, s_pid, s_tid, s_process, s_thread, s_labels, s_sort, s_kind, s_gpu, s_cpu, s_async,
        s_unclosed, s_true, s_clipped, s_flow, s_edge, s_async_begin, s_async_end, s_sync, s_stream, s_rank;

    uint64_t *memo_k;     /* stack-text memo: (parent stack << 32 | parent name) -> ... */
    lp_str *memo_v;       /* ... the stack text of the children; open addressing */
    size_t memo_cap, memo_n;
    char *stackbuf;       /* scratch for building stack texts */
    lp_str k_cat[K_NCATS];  /* the categories that matter (kcat_names), interned */
} cctx;

static lp_status nomem(cctx *c) { return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory"); }

/* Grow the array whose pointer is at arrp (any element type; copied through memcpy so
 * no pointer is accessed through the wrong type). */
/* ---- diagnostics ------------------------------------------------------------------- */

static void report(cctx *c, lp_severity sev, lp_rule rule, uint64_t line, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void report(cctx *c, lp_severity sev, lp_rule rule, uint64_t line, uint64_t off, const char *fmt, ...)
{
    if (!c->ds)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lp_diags_report(c->ds, sev, rule, c->file, line, "byte %llu: %s", (unsigned long long)off, msg);
}

static void skip(cctx *c, enum skip why, const lp_json *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void skip(cctx *c, enum skip why, const lp_json *at, const char *fmt, ...)
{
    c->skipped[why]++;
    if (!c->ds)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    report(c, LP_SEV_ERROR, LP_RULE_IMPORT, at ? at->line : 0, at ? at->off : 0, "%s; event skipped", msg);
}

/* ---- numbers ------------------------------------------------------------------------ */

static const uint64_t pow10u[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
                                    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
                                    1000000000000ull, 10000000000000ull, 100000000000000ull,
                                    1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
                                    1000000000000000000ull, 10000000000000000000ull};

/* Decimal text (JSON number grammar) of a number of microseconds to integer
 * nanoseconds, exactly: rounded half to even only where the text has digits below
 * 1 ns. 0 on success, -1 on bad syntax or overflow. */
static int us_to_ns(const char *p, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && (p[i] == '-' || p[i] == '+')) {
        neg = p[i] == '-';
        i++;
    }
    uint64_t m = 0;
    int nd = 0, exp10 = 0, sticky = 0, digits = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        digits++;
        if (nd < 19) {
            m = m * 10 + d;
            if (m)
                nd++;
        } else {
            exp10++;
            sticky |= d != 0;
        }
    }
    if (i < n && p[i] == '.') {
        i++;
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
            unsigned d = (unsigned)(p[i] - '0');
            digits++;
            if (nd < 19) {
                m = m * 10 + d;
                if (m)
                    nd++;
                exp10--;
            } else {
                sticky |= d != 0;
            }
        }
    }
    if (!digits)
        return -1;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        int eneg = 0, e = 0, ed = 0;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            eneg = p[i++] == '-';
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, ed++)
            if (e < 100000)
                e = e * 10 + (p[i] - '0');
        if (!ed)
            return -1;
        exp10 += eneg ? -e : e;
    }
    if (i != n)
        return -1;
    uint64_t q;
    int E = exp10 + 3;
    if (m == 0) {
        q = 0;
    } else if (E >= 0) {
        if (E > 19)
            return -1;
        if (m > UINT64_MAX / pow10u[E])
            return -1;
        q = m * pow10u[E];
    } else {
        int k = -E;
        if (k > 19) {
            q = 0;
        } else {
            uint64_t P = pow10u[k];
            q = m / P;
            uint64_t r = m % P;
            if (r > P - r || (r == P - r && (sticky || (q & 1))))
                q++;
        }
    }
    if (q > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? -(int64_t)q : (int64_t)q;
    return 0;
}

/* A timestamp or duration node (a number, or a number in a string) in ns. */
static int node_ns(const lp_json *v, int64_t *out)
{
    if (!v || (v->type != LP_JSON_NUMBER && v->type != LP_JSON_STRING))
        return -1;
    return us_to_ns(v->s, v->len, out);
}

/* The text of an id-like node (pid, tid, id): a number's literal or a string's
 * content; NULL for other types. */
static const char *id_text(const lp_json *v, size_t *n)
{
    if (!v || (v->type != LP_JSON_NUMBER && v->type != LP_JSON_STRING))
        return NULL;
    *n = v->len;
    return v->s;
}

/* ---- strings and keys ------------------------------------------------------------------ */

static int intern(cctx *c, const char *s, size_t n, lp_str *out) { return lp_strtab_intern(c->st, s, n, out); }

static lp_str node_str(cctx *c, const lp_json *v, int *oom)
{
    lp_str s = LP_STR_NONE;
    if (v && v->type == LP_JSON_STRING && intern(c, v->s, v->len, &s))
        *oom = 1;
    return s;
}

/* Key id in the private table; keyval grows along, new entries NONE. */
static int key_id(cctx *c, const char *k, size_t n, uint32_t *id)
{
    lp_str s;
    if (lp_strtab_intern(&c->keys, k, n, &s))
        return -1;
    if (s >= c->capkeyval) {
        size_t old = c->capkeyval;
        if (lp_grow_at(&c->keyval, &c->capkeyval, (size_t)s + 1, sizeof *c->keyval))
            return -1;
        for (size_t i = old; i < c->capkeyval; i++)
            c->keyval[i] = NONE;
    }
    *id = s;
    return 0;
}

/* Build "a\x1fb\x1fc..." into buf (cut at cap). */
static size_t join_key(char *buf, size_t cap, const char *const *parts, const size_t *lens, int n)
{
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        if (i && o < cap)
            buf[o++] = '\x1f';
        size_t k = lens[i] < cap - o ? lens[i] : cap - o;
        memcpy(buf + o, parts[i], k);
        o += k;
    }
    return o;
}

static lp_status get_proc(cctx *c, const char *pid, size_t pn, uint32_t *out)
{
    char buf[160];
    const char *parts[2] = {"P", pid};
    size_t lens[2] = {1, pn};
    size_t kn = join_key(buf, sizeof buf, parts, lens, 2);
    uint32_t k;
    if (key_id(c, buf, kn, &k))
        return nomem(c);
    if (c->keyval[k] == NONE) {
        if (lp_grow_at(&c->pr, &c->cappr, c->npr + 1, sizeof *c->pr))
            return nomem(c);
        cproc *p = &c->pr[c->npr];
        p->name = p->labels = p->sort = LP_STR_NONE;
        if (intern(c, pid, pn, &p->pid))
            return nomem(c);
        c->keyval[k] = (uint32_t)c->npr++;
    }
    *out = c->keyval[k];
    return LP_OK;
}

static lp_status new_thread(cctx *c, uint32_t *out)
{
    if (lp_grow_at(&c->th, &c->capth, c->nth + 1, sizeof *c->th))
        return nomem(c);
    cthread *t = &c->th[c->nth];
    memset(t, 0, sizeof *t);
    t->pid = t->tid = t->tname = t->tsort = t->akey = LP_STR_NONE;
    t->stream = -1;
    t->worker = NONE;
    t->proc = NONE;
    *out = (uint32_t)c->nth++;
    return LP_OK;
}

/* The thread of (pid, tid) nodes: pid missing is "0", tid missing is the pid. */
static lp_status get_thread(cctx *c, const lp_json *pidn, const lp_json *tidn, uint32_t *out)
{
    size_t pn = 1, tn;
    const char *ps = id_text(pidn, &pn);
    if (!ps) {
        ps = "0";
        pn = 1;
    }
    const char *ts = id_text(tidn, &tn);
    if (!ts) {
        ts = ps;
        tn = pn;
    }
    char buf[128];
    const char *parts[3] = {"T", ps, ts};
    size_t lens[3] = {1, pn, tn};
    size_t kn = join_key(buf, sizeof buf, parts, lens, 3);
    if (c->lastthread != NONE && kn == c->lastkeylen && memcmp(buf, c->lastkey, kn) == 0) {
        *out = c->lastthread;
        return LP_OK;
    }
    uint32_t k;
    if (key_id(c, buf, kn, &k))
        return nomem(c);
    if (c->keyval[k] == NONE) {
        uint32_t t, p;
        lp_status st;
        if ((st = get_proc(c, ps, pn, &p)) || (st = new_thread(c, &t)))
            return st;
        cthread *th = &c->th[t];
        th->proc = p;
        if (intern(c, ps, pn, &th->pid) || intern(c, ts, tn, &th->tid))
            return nomem(c);
        c->keyval[k] = t;
    }
    *out = c->keyval[k];
    memcpy(c->lastkey, buf, kn);
    c->lastkeylen = kn;
    c->lastthread = *out;
    return LP_OK;
}

/* ---- one event ------------------------------------------------------------------------ */

/* The members of an event that matter. */
typedef struct evf {
    const lp_json *ph, *ts, *dur, *pid, *tid, *name, *cat, *args, *id, *id2, *bp, *s, *bind_id, *flow_in, *flow_out;
} evf;


static void fields(const lp_json *ev, evf *f)
{
    memset(f, 0, sizeof *f);
    for (const lp_json *m = lp_json_first(ev); m; m = lp_json_next_sibling(m)) {
        switch (m->klen) {
        case 1:
            if (m->key[0] == 's')
                f->s = m;
            break;
        case 2:
            if (LP_JSON_KEY(m, "ph"))
                f->ph = m;
            else if (LP_JSON_KEY(m, "ts"))
                f->ts = m;
            else if (LP_JSON_KEY(m, "id"))
                f->id = m;
            else if (LP_JSON_KEY(m, "bp"))
                f->bp = m;
            break;
        case 3:
            if (LP_JSON_KEY(m, "dur"))
                f->dur = m;
            else if (LP_JSON_KEY(m, "pid"))
                f->pid = m;
            else if (LP_JSON_KEY(m, "tid"))
                f->tid = m;
            else if (LP_JSON_KEY(m, "cat"))
                f->cat = m;
            else if (LP_JSON_KEY(m, "id2"))
                f->id2 = m;
            break;
        case 4:
            if (LP_JSON_KEY(m, "name"))
                f->name = m;
            else if (LP_JSON_KEY(m, "args"))
                f->args = m;
            break;
        case 7:
            if (LP_JSON_KEY(m, "bind_id"))
                f->bind_id = m;
            else if (LP_JSON_KEY(m, "flow_in"))
                f->flow_in = m;
            break;
        case 8:
            if (LP_JSON_KEY(m, "flow_out"))
                f->flow_out = m;
            break;
        default:
            break;
        }
    }
}

/* What Kineto args say about a slice. */
typedef struct kargs {
    int64_t corr, stream, wait_stream;
    const lp_json *sync_kind;
    int derived;          /* "longpole.derived" (gaps, critical-path track of longpole's exports) */
    int no_op;            /* "longpole.no_op": the name only repeats the type */
    const lp_json *msgid; /* "longpole.msg_id" */
    const lp_json *step;  /* "step" (async T/p) */
} kargs;

/* Kineto's per-event bookkeeping ids: unique on every event, they would make every
 * attribute list distinct (and cost a third of the import time) for no analysis value;
 * the correlation id becomes the id of the launch message instead. */
static int is_bookkeeping(const lp_json *m)
{
    switch (m->klen) {
    case 6: return LP_JSON_KEY(m, "Ev Idx");
    case 11: return LP_JSON_KEY(m, "External id") || LP_JSON_KEY(m, "correlation");
    case 15: return LP_JSON_KEY(m, "Sequence number");
    case 17: return LP_JSON_KEY(m, "Record function id");
    default: return 0;
    }
}

/* Scalar args kept for the attributes (at most MAX_ARGS; long strings, arrays, objects
 * and nulls are not kept) into ctx.kvp: *list is their offset (0: none). The builder's
 * attribute list is made once per slice when it is emitted (attrs_plus), since most
 * events' args are unique and deduplicating them twice would cost twice. Also picks
 * out the Kineto args and longpole's own marks. */
static lp_status args_attrs(cctx *c, const lp_json *args, uint32_t *list, kargs *k, lp_str *extra, int nextra)
{
    lp_str kv[2 * (MAX_ARGS + 4)];
    uint32_t np = 0;
    k->corr = k->stream = k->wait_stream = -1;
    k->sync_kind = NULL;
    k->derived = 0;
    k->no_op = 0;
    k->msgid = NULL;
    k->step = NULL;
    for (int i = 0; i < nextra; i++)
        kv[np * 2] = extra[2 * i], kv[np * 2 + 1] = extra[2 * i + 1], np++;
    if (args && args->type == LP_JSON_OBJECT) {
        for (const lp_json *m = lp_json_first(args); m; m = lp_json_next_sibling(m)) {
            if (m->type == LP_JSON_NUMBER) {
                if (LP_JSON_KEY(m, "correlation"))
                    lp_json_i64(m, &k->corr);
                else if (LP_JSON_KEY(m, "stream"))
                    lp_json_i64(m, &k->stream);
                else if (LP_JSON_KEY(m, "wait_on_stream"))
                    lp_json_i64(m, &k->wait_stream);
            } else if (m->type == LP_JSON_STRING) {
                if (LP_JSON_KEY(m, "cuda_sync_kind"))
                    k->sync_kind = m;
                else if (LP_JSON_KEY(m, "step"))
                    k->step = m;
            }
            if (m->klen > 9 && memcmp(m->key, "longpole.", 9) == 0) { /* longpole's own marks: not attributes */
                if (LP_JSON_KEY(m, "longpole.derived"))
                    k->derived = 1;
                else if (LP_JSON_KEY(m, "longpole.msg_id"))
                    k->msgid = m;
                else if (LP_JSON_KEY(m, "longpole.no_op"))
                    k->no_op = 1;
                continue;
            }
            if (np >= MAX_ARGS + (uint32_t)nextra)
                continue;
            const char *vs;
            size_t vn;
            switch (m->type) {
            case LP_JSON_NUMBER:
            case LP_JSON_STRING:
                vs = m->s;
                vn = m->len;
                if (vn > MAX_ARG_LEN)
                    continue;
                break;
            case LP_JSON_TRUE: vs = "true", vn = 4; break;
            case LP_JSON_FALSE: vs = "false", vn = 5; break;
            default: continue;
            }
            if (m->klen == 0 || memchr(m->key, '\0', m->klen))
                continue; /* keys are C strings in the outputs */
            if (is_bookkeeping(m))
                continue;
            if (intern(c, m->key, m->klen, &kv[np * 2]) || intern(c, vs, vn, &kv[np * 2 + 1]))
                return nomem(c);
            np++;
        }
    }
    if (!np) {
        *list = 0;
        return LP_OK;
    }
    if (c->nkvp + 1 + 2 * (size_t)np >= UINT32_MAX)
        return lp_error_set(c->err, LP_ERR_LIMIT, "too many event args in one file");
    if (lp_grow_at(&c->kvp, &c->capkvp, c->nkvp + 1 + 2 * (size_t)np, sizeof *c->kvp))
        return nomem(c);
    *list = (uint32_t)c->nkvp;
    c->kvp[c->nkvp++] = np;
    memcpy(c->kvp + c->nkvp, kv, 2 * (size_t)np * sizeof *kv);
    c->nkvp += 2 * (size_t)np;
    return LP_OK;
}


/* Which of the meaningful categories an interned category is (K_NCATS: none). */
static int kcat(const cctx *c, lp_str cat)
{
    if (cat == LP_STR_NONE)
        return K_NCATS;
    for (int i = 0; i < K_NCATS; i++)
        if (c->k_cat[i] == cat)
            return i;
    return K_NCATS;
}

static int ends_with(const lp_json *v, const char *suf)
{
    size_t k = strlen(suf);
    return v && v->type == LP_JSON_STRING && v->len >= k && memcmp(v->s + v->len - k, suf, k) == 0;
}

static void see_time(cctx *c, int64_t t)
{
    if (!c->have_t || t > c->tmax)
        c->tmax = t;
    c->have_t = 1;
}

static lp_status push_slice(cctx *c, const lp_json *ev, uint32_t thread, int64_t start, int64_t end, lp_str name,
                            lp_str cat, uint32_t attrs, uint16_t flags, int64_t corr, uint32_t *idx)
{
    if (c->nsl >= NONE - 1)
        return lp_error_set(c->err, LP_ERR_LIMIT, "more than %u slices in one file", NONE - 2);
    if (lp_grow_at(&c->sl, &c->capsl, c->nsl + 1, sizeof *c->sl))
        return nomem(c);
    cslice *s = &c->sl[c->nsl];
    s->start = start;
    s->end = end;
    s->off = ev->off;
    s->line = lp_line32(ev->line);
    s->thread = thread;
    s->name = name;
    s->cat = cat;
    s->attrs = attrs;
    s->seq = c->seq++;
    s->flags = flags;
    s->corr = corr;
    *idx = (uint32_t)c->nsl++;
    c->th[thread].used = 1;
    return LP_OK;
}

/* The id of a flow or async event as text: "id", or id2.global / id2.local. */
static const char *event_id(const evf *f, size_t *n, int *local)
{
    *local = 0;
    const char *s = id_text(f->id, n);
    if (s)
        return s;
    if (f->id2 && f->id2->type == LP_JSON_OBJECT) {
        const lp_json *g = lp_json_get(f->id2, "global");
        if ((s = id_text(g, n)))
            return s;
        const lp_json *l = lp_json_get(f->id2, "local");
        if ((s = id_text(l, n))) {
            *local = 1;
            return s;
        }
    }
    return NULL;
}

static lp_status push_flow(cctx *c, const lp_json *ev, uint32_t key, uint32_t thread, int64_t ts, uint32_t slice,
                           char ph, int bind_here, lp_str cat, lp_str name, uint32_t attrs, const char *id, size_t idn)
{
    if (lp_grow_at(&c->fl, &c->capfl, c->nfl + 1, sizeof *c->fl))
        return nomem(c);
    cflow *f = &c->fl[c->nfl];
    f->ts = ts;
    f->off = ev->off;
    f->line = lp_line32(ev->line);
    f->key = key;
    f->thread = thread;
    f->slice = slice;
    f->seq = c->seq++;
    f->attrs = attrs;
    f->cat = cat;
    f->name = name;
    f->ph = ph;
    f->bind_here = (uint8_t)bind_here;
    f->lpexport = 0;
    if (!id)
        f->msgid = LP_MSGID_NONE;
    else if (lp_builder_msgid(c->b, id, idn, &f->msgid, c->err))
        return c->err ? c->err->status : LP_ERR_NOMEM;
    c->nfl++;
    c->th[thread].used = 1;
    return LP_OK;
}

/* v2 flow points on a slice event (X, B, b, n). */
static lp_status v2_flows(cctx *c, const lp_json *ev, const evf *f, uint32_t thread, uint32_t slice)
{
    if (!f->bind_id)
        return LP_OK;
    size_t n;
    const char *id = id_text(f->bind_id, &n);
    if (!id) {
        char w[80];
        report(c, LP_SEV_WARNING, LP_RULE_IMPORT, f->bind_id->line, f->bind_id->off,
               "bind_id must be a number or a string, found %s; the flow is ignored", lp_json_what(f->bind_id, w, sizeof w));
        c->skipped[SK_FIELD]++;
        return LP_OK;
    }
    int in = f->flow_in && f->flow_in->type == LP_JSON_TRUE;
    int out = f->flow_out && f->flow_out->type == LP_JSON_TRUE;
    if (!in && !out) {
        report(c, LP_SEV_WARNING, LP_RULE_IMPORT, f->bind_id->line, f->bind_id->off,
               "bind_id without flow_in or flow_out: the flow has no direction and is ignored");
        c->skipped[SK_FIELD]++;
        return LP_OK;
    }
    char buf[128];
    const char *parts[2] = {"V", id};
    size_t lens[2] = {1, n};
    uint32_t key;
    if (key_id(c, buf, join_key(buf, sizeof buf, parts, lens, 2), &key))
        return nomem(c);
    return push_flow(c, ev, key, thread, 0, slice, in && out ? 'x' : in ? 'i' : 'o', 1, LP_STR_NONE, LP_STR_NONE, 0,
                     id, n);
}

static lp_status metadata(cctx *c, const lp_json *ev, const evf *f)
{
    const lp_json *nm = f->name;
    const lp_json *args = f->args;
    const lp_json *v = NULL;
    int oom = 0;
    char w[80];
    if (!nm || nm->type != LP_JSON_STRING) {
        skip(c, SK_FIELD, ev, "metadata event (ph M) without a name string (found %s)", lp_json_what(nm, w, sizeof w));
        return LP_OK;
    }
    int proc = 0;
    const char *argkey = NULL;
    lp_str *dst = NULL;
    uint32_t t = NONE, p = NONE;
    lp_status st;
    if (lp_json_str_is(nm, "process_name"))
        proc = 1, argkey = "name";
    else if (lp_json_str_is(nm, "process_labels"))
        proc = 2, argkey = "labels";
    else if (lp_json_str_is(nm, "process_sort_index"))
        proc = 3, argkey = "sort_index";
    else if (lp_json_str_is(nm, "thread_name"))
        argkey = "name";
    else if (lp_json_str_is(nm, "thread_sort_index"))
        argkey = "sort_index";
    else {
        c->unmodelled[UM_META]++;
        return LP_OK;
    }
    v = lp_json_get(args, argkey);
    if (!v || (v->type != LP_JSON_STRING && v->type != LP_JSON_NUMBER)) {
        skip(c, SK_FIELD, ev, "metadata %s: args.%s should be a %s, found %s", nm->s, argkey,
             proc == 3 || !strcmp(argkey, "sort_index") ? "number" : "string", lp_json_what(v, w, sizeof w));
        return LP_OK;
    }
    if (proc) {
        size_t pn = 1;
        const char *ps = id_text(f->pid, &pn);
        if (!ps)
            ps = "0", pn = 1;
        if ((st = get_proc(c, ps, pn, &p)))
            return st;
        dst = proc == 1 ? &c->pr[p].name : proc == 2 ? &c->pr[p].labels : &c->pr[p].sort;
    } else {
        if ((st = get_thread(c, f->pid, f->tid, &t)))
            return st;
        dst = strcmp(argkey, "name") == 0 ? &c->th[t].tname : &c->th[t].tsort;
    }
    /* names are trimmed (Kineto writes "stream 7 "), unless longpole's export gave the
     * exact name */
    const char *s = v->s;
    size_t n = v->len;
    const lp_json *exact = lp_json_get(args, "longpole.name");
    if (exact && exact->type == LP_JSON_STRING && v->type == LP_JSON_STRING) {
        s = exact->s;
        n = exact->len;
    } else {
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
            n--;
        while (n && (*s == ' ' || *s == '\t'))
            s++, n--;
    }
    if (intern(c, s, n, dst))
        oom = 1;
    return oom ? nomem(c) : LP_OK;
}

static lp_status async_event(cctx *c, const lp_json *ev, const evf *f, char ph, int64_t ts, uint32_t thread,
                             lp_str name, lp_str cat)
{
    size_t idn;
    int local;
    const char *id = event_id(f, &idn, &local);
    char w[80];
    if (!id) {
        skip(c, SK_NO_ID, ev, "async event (ph %c) without an id (found %s)", ph, lp_json_what(f->id, w, sizeof w));
        return LP_OK;
    }
    int nestable = ph == 'b' || ph == 'e' || ph == 'n';
    if (ph == 'n') {
        c->unmodelled[UM_ASYNC_N]++;
        return LP_OK;
    }
    /* key: nestable by (cat, id [, pid if local]); legacy by (name, id) as catapult does */
    char buf[200];
    const char *parts[4];
    size_t lens[4];
    int np = 0;
    parts[np] = nestable ? "b" : "S", lens[np++] = 1;
    lp_str by = nestable ? cat : name;
    const char *bys = by == LP_STR_NONE ? "" : lp_strtab_get(c->st, by);
    parts[np] = bys, lens[np++] = strlen(bys);
    parts[np] = id, lens[np++] = idn;
    if (local) {
        parts[np] = lp_strtab_get(c->st, c->th[thread].pid);
        lens[np] = strlen(parts[np]);
        np++;
    }
    size_t kn = join_key(buf, sizeof buf, parts, lens, np);
    uint32_t key;
    if (key_id(c, buf, kn, &key))
        return nomem(c);
    if (c->keyval[key] == NONE) { /* the async timeline */
        uint32_t t;
        lp_status st = new_thread(c, &t);
        if (st)
            return st;
        cthread *th = &c->th[t];
        th->async = 1;
        th->proc = c->th[thread].proc;
        th->pid = c->th[thread].pid;
        char nb[300];
        int k = snprintf(nb, sizeof nb, "async:%s:%.*s", bys, (int)(idn > 200 ? 200 : idn), id);
        if (intern(c, nb, (size_t)k < sizeof nb ? (size_t)k : sizeof nb - 1, &th->akey))
            return nomem(c);
        c->keyval[key] = t;
    }
    kargs ka;
    uint32_t attrs;
    lp_status st = args_attrs(c, f->args, &attrs, &ka, NULL, 0);
    if (st)
        return st;
    if (lp_grow_at(&c->as, &c->capas, c->nas + 1, sizeof *c->as))
        return nomem(c);
    casync *a = &c->as[c->nas++];
    a->ts = ts;
    a->off = ev->off;
    a->line = lp_line32(ev->line);
    a->key = key;
    a->thread = thread;
    a->seq = c->seq++;
    a->attrs = attrs;
    a->name = name;
    a->cat = cat;
    a->step = LP_STR_NONE;
    a->ph = ph;
    if (ka.step) {
        int oom = 0;
        a->step = node_str(c, ka.step, &oom);
        if (oom)
            return nomem(c);
    }
    return LP_OK;
}

static lp_status event(cctx *c, const lp_json *ev)
{
    char w[80];
    c->nevents++;
    if (ev->type != LP_JSON_OBJECT) {
        skip(c, SK_SHAPE, ev, "a trace event must be an object, found %s", lp_json_what(ev, w, sizeof w));
        return LP_OK;
    }
    evf f;
    fields(ev, &f);
    if (!f.ph || f.ph->type != LP_JSON_STRING || f.ph->len == 0) {
        skip(c, SK_PH, ev, "event without a phase (\"ph\" is %s)", lp_json_what(f.ph, w, sizeof w));
        return LP_OK;
    }
    char ph = f.ph->s[0];
    if (f.ph->len != 1) {
        c->skipped[SK_PHASE]++;
        report(c, LP_SEV_WARNING, LP_RULE_IMPORT, ev->line, ev->off, "unknown phase %s; event skipped",
               lp_json_excerpt(f.ph, w, sizeof w));
        return LP_OK;
    }
    if (ph == 'M')
        return metadata(c, ev, &f);
    switch (ph) {
    case 'C': c->unmodelled[UM_COUNTER]++; return LP_OK;
    case 'i': case 'I': case 'R': c->unmodelled[UM_INSTANT]++; return LP_OK;
    case 'P': c->unmodelled[UM_SAMPLE]++; return LP_OK;
    case 'N': case 'O': case 'D': c->unmodelled[UM_OBJECT]++; return LP_OK;
    case 'v': case 'V': c->unmodelled[UM_MEMDUMP]++; return LP_OK;
    case 'c': case '(': case ')': case '=': c->unmodelled[UM_OTHER]++; return LP_OK;
    case 'X': case 'B': case 'E': case 's': case 't': case 'f': case 'b': case 'e': case 'n':
    case 'S': case 'T': case 'F': case 'p': break;
    default:
        c->skipped[SK_PHASE]++;
        report(c, LP_SEV_WARNING, LP_RULE_IMPORT, ev->line, ev->off, "unknown phase '%c'; event skipped", ph);
        return LP_OK;
    }
    int64_t ts;
    if (node_ns(f.ts, &ts)) {
        skip(c, SK_TS, f.ts ? f.ts : ev, "%c event: \"ts\" must be a number of microseconds, found %s", ph,
             lp_json_what(f.ts, w, sizeof w));
        return LP_OK;
    }
    if ((f.name && f.name->type != LP_JSON_STRING && f.name->type != LP_JSON_NULL) ||
        (f.cat && f.cat->type != LP_JSON_STRING && f.cat->type != LP_JSON_NULL)) {
        const lp_json *bad = f.name && f.name->type != LP_JSON_STRING && f.name->type != LP_JSON_NULL ? f.name : f.cat;
        skip(c, SK_FIELD, bad, "%c event: \"%s\" must be a string, found %s", ph, bad->key, lp_json_what(bad, w, sizeof w));
        return LP_OK;
    }
    if ((f.pid && f.pid->type != LP_JSON_NUMBER && f.pid->type != LP_JSON_STRING) ||
        (f.tid && f.tid->type != LP_JSON_NUMBER && f.tid->type != LP_JSON_STRING)) {
        const lp_json *bad = f.pid && f.pid->type != LP_JSON_NUMBER && f.pid->type != LP_JSON_STRING ? f.pid : f.tid;
        skip(c, SK_FIELD, bad, "%c event: \"%s\" must be a number or a string, found %s", ph, bad->key,
             lp_json_what(bad, w, sizeof w));
        return LP_OK;
    }
    uint32_t thread;
    lp_status st = get_thread(c, f.pid, f.tid, &thread);
    if (st)
        return st;
    int oom = 0;
    lp_str name = node_str(c, f.name, &oom), cat = node_str(c, f.cat, &oom);
    if (oom)
        return nomem(c);
    int kc = kcat(c, cat);
    if (kc < KC_TRACE)
        c->kineto = 1;

    switch (ph) {
    case 'X': {
        int64_t dur;
        if (node_ns(f.dur, &dur)) {
            skip(c, SK_DUR, f.dur ? f.dur : ev, "X event '%s': \"dur\" must be a number of microseconds, found %s",
                 name == LP_STR_NONE ? "" : lp_strtab_get(c->st, name), lp_json_what(f.dur, w, sizeof w));
            return LP_OK;
        }
        if (dur < 0) {
            skip(c, SK_DUR, f.dur, "X event '%s' has a negative duration (%lld ns)",
                 name == LP_STR_NONE ? "" : lp_strtab_get(c->st, name), (long long)dur);
            return LP_OK;
        }
        if (ts > INT64_MAX - dur) {
            skip(c, SK_DUR, f.dur, "X event ends beyond the 64-bit nanosecond range");
            return LP_OK;
        }
        kargs ka;
        uint32_t attrs;
        if ((st = args_attrs(c, f.args, &attrs, &ka, NULL, 0)))
            return st;
        uint16_t flags = ka.no_op ? SL_NO_OP : 0;
        if (ka.derived) {
            c->unmodelled[UM_GAP]++;
            return LP_OK;
        }
        if (kc == KC_CUDA_SYNC) { /* a GPU-side synchronisation record */
            if (lp_grow_at(&c->sy, &c->capsy, c->nsy + 1, sizeof *c->sy))
                return nomem(c);
            csync *y = &c->sy[c->nsy++];
            y->corr = ka.corr;
            y->start = ts;
            y->end = ts + dur;
            y->stream = ka.stream;
            y->wait_stream = ka.wait_stream;
            y->thread = thread;
            y->kind = SY_OTHER;
            if (lp_json_str_is(ka.sync_kind, "Stream Sync"))
                y->kind = SY_STREAM;
            else if (lp_json_str_is(ka.sync_kind, "Context Sync") || lp_json_str_is(ka.sync_kind, "Device Sync"))
                y->kind = SY_CONTEXT;
            else if (lp_json_str_is(ka.sync_kind, "Event Sync"))
                y->kind = SY_EVENT;
            see_time(c, ts + dur);
            c->unmodelled[UM_SYNC_LINK]++;
            return LP_OK;
        }
        if (kc == KC_KERNEL || kc == KC_KERNEL2 || kc == KC_GPU_MEMCPY || kc == KC_MEMCPY || kc == KC_GPU_MEMSET ||
            kc == KC_MEMSET) {
            flags |= SL_GPU_OP;
            c->th[thread].gpu = 1;
            if (ka.stream >= 0)
                c->th[thread].stream = ka.stream;
            if (kc == KC_GPU_MEMCPY || kc == KC_MEMCPY)
                flags |= SL_IO;
        } else if (kc == KC_CUDA_RUNTIME || kc == KC_RUNTIME || kc == KC_CUDA_DRIVER) {
            flags |= SL_RUNTIME;
            if (ends_with(f.name, "Synchronize"))
                flags |= SL_SYNC;
        } else if (kc == KC_TRACE) {
            flags |= SL_MARK;
        } else if (kc == KC_GPU_USER_ANNOTATION) {
            flags |= SL_CONTAINER; /* its time between kernels is the stream's idle time, not work */
        }
        uint32_t idx;
        if ((st = push_slice(c, ev, thread, ts, ts + dur, name, cat, attrs, flags, ka.corr, &idx)))
            return st;
        see_time(c, ts + dur);
        return v2_flows(c, ev, &f, thread, idx);
    }
    case 'B': {
        kargs ka;
        uint32_t attrs, idx;
        if ((st = args_attrs(c, f.args, &attrs, &ka, NULL, 0)))
            return st;
        if (ka.derived) {
            c->unmodelled[UM_GAP]++;
            return LP_OK;
        }
        if ((st = push_slice(c, ev, thread, ts, OPEN_END, name, cat, attrs, SL_FROM_B, ka.corr, &idx)))
            return st;
        cthread *th = &c->th[thread];
        if (th->nopen == th->capopen) {
            size_t cap = th->capopen;
            if (lp_grow_at(&th->open, &cap, (size_t)th->nopen + 1, sizeof *th->open))
                return nomem(c);
            th->capopen = (uint32_t)cap;
        }
        th->open[th->nopen++] = idx;
        see_time(c, ts);
        return v2_flows(c, ev, &f, thread, idx);
    }
    case 'E': {
        cthread *th = &c->th[thread];
        see_time(c, ts);
        if (!th->nopen) {
            skip(c, SK_E_NO_B, ev, "E event%s%s%s on thread %s/%s without an open B", name != LP_STR_NONE ? " '" : "",
                 name != LP_STR_NONE ? lp_strtab_get(c->st, name) : "", name != LP_STR_NONE ? "'" : "",
                 lp_strtab_get(c->st, th->pid), lp_strtab_get(c->st, th->tid));
            return LP_OK;
        }
        uint32_t idx = th->open[--th->nopen];
        cslice *s = &c->sl[idx];
        if (ts < s->start) {
            s->flags |= SL_DROP;
            skip(c, SK_NEG, ev, "E event at %lld ns ends slice '%s' (B at byte %llu) before it began (%lld ns)",
                 (long long)ts, s->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, s->name),
                 (unsigned long long)s->off, (long long)s->start);
            s->end = s->start;
            return LP_OK;
        }
        s->end = ts;
        if (name != LP_STR_NONE && s->name != LP_STR_NONE && name != s->name && lp_strtab_len(c->st, name))
            report(c, LP_SEV_WARNING, LP_RULE_IMPORT, ev->line, ev->off,
                   "E event '%s' closes slice '%s' (B at byte %llu): names differ", lp_strtab_get(c->st, name),
                   lp_strtab_get(c->st, s->name), (unsigned long long)s->off);
        return LP_OK;
    }
    case 's':
    case 't':
    case 'f': {
        size_t idn;
        int local;
        const char *id = event_id(&f, &idn, &local);
        if (!id) {
            skip(c, SK_NO_ID, ev, "flow event (ph %c) without an id (found %s)", ph, lp_json_what(f.id, w, sizeof w));
            return LP_OK;
        }
        const char *cs = cat == LP_STR_NONE ? "" : lp_strtab_get(c->st, cat);
        const char *ns = name == LP_STR_NONE ? "" : lp_strtab_get(c->st, name);
        if (!strncmp(cs, "longpole.", 9)) { /* the critical-path flows of longpole's exports */
            c->unmodelled[UM_GAP]++;
            return LP_OK;
        }
        char buf[256];
        const char *parts[4] = {"F", cs, ns, id};
        size_t lens[4] = {1, strlen(cs), strlen(ns), idn};
        uint32_t key;
        if (key_id(c, buf, join_key(buf, sizeof buf, parts, lens, 4), &key))
            return nomem(c);
        int bind_here = ph != 'f' || lp_json_str_is(f.bp, "e") || strstr(cs, "input") || strstr(cs, "ipc.flow");
        uint32_t attrs = 0;
        const char *mid = id;
        size_t midn = idn;
        int lpexport = 0;
        if (ph == 's') {
            kargs ka;
            if ((st = args_attrs(c, f.args, &attrs, &ka, NULL, 0)))
                return st;
            if (ka.msgid) { /* longpole's export: the original message id (null: none) */
                lpexport = 1;
                mid = ka.msgid->type == LP_JSON_STRING || ka.msgid->type == LP_JSON_NUMBER ? ka.msgid->s : NULL;
                midn = mid ? ka.msgid->len : 0;
            }
        }
        see_time(c, ts);
        if ((st = push_flow(c, ev, key, thread, ts, NONE, ph, bind_here, cat, name, attrs, mid, midn)))
            return st;
        c->fl[c->nfl - 1].lpexport = (uint8_t)lpexport;
        return LP_OK;
    }
    case 'b':
    case 'e':
    case 'n':
    case 'S':
    case 'T':
    case 'F':
    case 'p':
        see_time(c, ts);
        return async_event(c, ev, &f, ph, ts, thread, name, cat);
    default:
        return LP_OK;
    }
}

/* A member of the top-level object other than traceEvents. */
static lp_status top_member(cctx *c, const lp_json_ev *ev)
{
    const lp_json *v = ev->tree;
    if (!strcmp(ev->key, "displayTimeUnit")) {
        int oom = 0;
        c->dtu = node_str(c, v, &oom);
        if (oom)
            return nomem(c);
    } else if (!strcmp(ev->key, "schemaVersion") || !strcmp(ev->key, "deviceProperties") ||
               !strcmp(ev->key, "traceName")) {
        c->kineto = 1;
    } else if (!strcmp(ev->key, "distributedInfo")) {
        c->kineto = 1;
        const lp_json *r = lp_json_get(v, "rank");
        size_t n;
        const char *s = id_text(r, &n);
        if (s && n < sizeof c->rank) {
            memcpy(c->rank, s, n);
            c->rank[n] = '\0';
            c->has_rank = 1;
        }
    }
    return LP_OK;
}

/* ---- resolution: grouping and sorting slices ------------------------------------------- */

static int cmp_skey(const void *a, const void *b)
{
    const skey *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* longer first: the parent */
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Group the (not dropped) slices by thread and sort each group by start, longer first,
 * input order. Threads already in order are not sorted. */
static lp_status group_slices(cctx *c)
{
    for (size_t t = 0; t < c->nth; t++)
        c->th[t].count = 0;
    size_t n = 0;
    for (size_t i = 0; i < c->nsl; i++)
        if (!(c->sl[i].flags & SL_DROP)) {
            c->th[c->sl[i].thread].count++;
            n++;
        }
    c->order = lp_malloc((n ? n : 1) * sizeof *c->order);
    if (!c->order)
        return nomem(c);
    uint32_t acc = 0;
    for (size_t t = 0; t < c->nth; t++) {
        c->th[t].first = acc;
        acc += c->th[t].count;
        c->th[t].count = 0;
    }
    for (size_t i = 0; i < c->nsl; i++) {
        const cslice *s = &c->sl[i];
        if (s->flags & SL_DROP)
            continue;
        cthread *th = &c->th[s->thread];
        skey *k = &c->order[th->first + th->count++];
        k->start = s->start;
        k->end = s->end;
        k->seq = s->seq;
        k->idx = (uint32_t)i;
    }
    for (size_t t = 0; t < c->nth; t++) {
        skey *k = c->order + c->th[t].first;
        size_t m = c->th[t].count;
        int sorted = 1;
        for (size_t i = 1; i < m && sorted; i++)
            if (cmp_skey(&k[i - 1], &k[i]) > 0)
                sorted = 0;
        if (!sorted)
            qsort(k, m, sizeof *k, cmp_skey);
    }
    return LP_OK;
}

/* The GPU operations of every GPU thread, by start, with running maxima of ends. */
static lp_status group_gpu_ops(cctx *c)
{
    size_t n = 0;
    for (size_t t = 0; t < c->nth; t++)
        if (c->th[t].gpu) {
            const skey *k = c->order + c->th[t].first;
            for (uint32_t i = 0; i < c->th[t].count; i++)
                n += (c->sl[k[i].idx].flags & SL_GPU_OP) != 0;
        }
    c->gop = lp_malloc((n ? n : 1) * sizeof *c->gop);
    if (!c->gop)
        return nomem(c);
    c->ngop = 0;
    for (size_t t = 0; t < c->nth; t++) {
        cthread *th = &c->th[t];
        th->gfirst = (uint32_t)c->ngop;
        th->gcount = 0;
        if (!th->gpu)
            continue;
        const skey *k = c->order + th->first;
        int64_t pm = INT64_MIN;
        for (uint32_t i = 0; i < th->count; i++) {
            const cslice *s = &c->sl[k[i].idx];
            if (!(s->flags & SL_GPU_OP))
                continue;
            gop *g = &c->gop[c->ngop++];
            g->start = s->start;
            g->end = s->end;
            if (s->end > pm)
                pm = s->end;
            g->pmax = pm;
            th->gcount++;
        }
    }
    return LP_OK;
}

/* Latest end <= t among the GPU ops of thread th (INT64_MIN if none). */
static int64_t gpu_last_end(const cctx *c, const cthread *th, int64_t t)
{
    const gop *g = c->gop + th->gfirst;
    size_t lo = 0, hi = th->gcount; /* first index with pmax > t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g[mid].pmax <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? g[lo - 1].pmax : INT64_MIN;
}

/* Index of the GPU op of th that starts at or contains t (the last with start <= t);
 * -1 if none. */
static long gpu_op_at(const cctx *c, const cthread *th, int64_t t)
{
    const gop *g = c->gop + th->gfirst;
    size_t lo = 0, hi = th->gcount;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;
}

/* Start of the first slice of thread th starting at or after t; INT64_MIN if none. */
static int64_t next_slice_start(const cctx *c, const cthread *th, int64_t t)
{
    const skey *k = c->order + th->first;
    size_t lo = 0, hi = th->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k[mid].start < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < th->count ? k[lo].start : INT64_MIN;
}

/* ---- resolution: messages ------------------------------------------------------------- */

static lp_status add_msg(cctx *c, uint32_t src, int64_t send, uint32_t dst, int64_t recv, uint64_t id, uint32_t attrs,
                         uint32_t line)
{
    if (lp_grow_at(&c->ms, &c->capms, c->nms + 1, sizeof *c->ms))
        return nomem(c);
    cmsg *m = &c->ms[c->nms++];
    m->src = src;
    m->dst = dst;
    m->send = send;
    m->recv = recv;
    m->id = id;
    m->attrs = attrs;
    m->line = line;
    c->th[src].used = c->th[dst].used = 1;
    return LP_OK;
}

/* The builder's attribute list of kept args (offset in ctx.kvp) plus extra pairs. */
static lp_status attrs_plus(cctx *c, uint32_t base, const lp_str *extra, uint32_t nextra, uint32_t *out)
{
    uint32_t nb = base ? c->kvp[base] : 0;
    lp_str kv[2 * (MAX_ARGS + 8)];
    uint32_t np = 0;
    for (uint32_t i = 0; i < nb && np < MAX_ARGS + 4; i++, np++) {
        kv[2 * np] = c->kvp[base + 1 + 2 * i];
        kv[2 * np + 1] = c->kvp[base + 2 + 2 * i];
    }
    for (uint32_t i = 0; i < nextra; i++, np++) {
        kv[2 * np] = extra[2 * i];
        kv[2 * np + 1] = extra[2 * i + 1];
    }
    return lp_builder_attrs(c->b, kv, np, out, c->err);
}

typedef struct corr_ix {
    int64_t corr;
    uint32_t idx;
} corr_ix;

static int cmp_corr(const void *a, const void *b)
{
    const corr_ix *x = a, *y = b;
    if (x->corr != y->corr)
        return x->corr < y->corr ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Kineto: every GPU operation receives a message from the runtime call that launched
 * it (same correlation id), sent when the call returned or the operation started,
 * whichever came first, and delivered when the stream could take the operation: at
 * the end of the previous operation of the stream if that was still running when the
 * launch was issued (the operation waited in the stream's queue, HTA's kernel-kernel
 * delay), else at the operation's start (the gap before it is the launch delay). */
static lp_status resolve_launches(cctx *c)
{
    size_t nrt = 0;
    for (size_t i = 0; i < c->nsl; i++)
        nrt += (c->sl[i].flags & (SL_RUNTIME | SL_DROP)) == SL_RUNTIME && c->sl[i].corr >= 0;
    if (!nrt || !c->ngop)
        return LP_OK;
    corr_ix *rt = lp_malloc(nrt * sizeof *rt);
    if (!rt)
        return nomem(c);
    size_t n = 0;
    for (size_t i = 0; i < c->nsl; i++)
        if ((c->sl[i].flags & (SL_RUNTIME | SL_DROP)) == SL_RUNTIME && c->sl[i].corr >= 0) {
            rt[n].corr = c->sl[i].corr;
            rt[n].idx = (uint32_t)i;
            n++;
        }
    qsort(rt, n, sizeof *rt, cmp_corr);
    lp_str kv[2] = {c->s_edge, c->s_launch};
    uint32_t a_launch;
    lp_status st = lp_builder_attrs(c->b, kv, 1, &a_launch, c->err);
    for (size_t t = 0; t < c->nth && !st; t++) {
        const cthread *th = &c->th[t];
        if (!th->gpu || !th->gcount)
            continue;
        const skey *k = c->order + th->first;
        const gop *g = c->gop + th->gfirst;
        uint32_t gi = 0;
        for (uint32_t i = 0; i < th->count && !st; i++) {
            const cslice *op = &c->sl[k[i].idx];
            if (!(op->flags & SL_GPU_OP))
                continue;
            int64_t prev_end = gi ? g[gi - 1].pmax : INT64_MIN;
            gi++;
            if (op->corr < 0)
                continue;
            size_t lo = 0, hi = n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (rt[mid].corr < op->corr)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == n || rt[lo].corr != op->corr)
                continue;
            const cslice *call = &c->sl[rt[lo].idx];
            int64_t send = call->end < op->start ? call->end : op->start;
            if (send < call->start)
                send = call->start;
            int64_t recv = prev_end > send && prev_end <= op->start ? prev_end : op->start;
            st = add_msg(c, call->thread, send, (uint32_t)t, recv, (uint64_t)op->corr, a_launch, op->line);
        }
    }
    lp_free(rt);
    return st;
}

/* Kineto: synchronisation calls the GPU made wait receive a message from the GPU
 * operation that ended last before they returned: of the stream (Stream Sync), the
 * device (Context Sync) or the event's stream (Event Sync) that the matching
 * cuda_sync record names, else of any stream. A call that returned before any such
 * operation ended during it did not wait, and stays `processing`. */
static lp_status resolve_syncs(cctx *c)
{
    size_t nsync = 0;
    for (size_t i = 0; i < c->nsl; i++)
        nsync += (c->sl[i].flags & (SL_SYNC | SL_DROP)) == SL_SYNC;
    if (!nsync)
        return LP_OK;
    size_t ngpu = 0;
    for (size_t t = 0; t < c->nth; t++)
        ngpu += c->th[t].gpu && c->th[t].gcount;
    if (!ngpu)
        return LP_OK;
    /* correlation -> cuda_sync record */
    corr_ix *byc = lp_malloc((c->nsy ? c->nsy : 1) * sizeof *byc);
    if (!byc)
        return nomem(c);
    size_t nby = 0;
    for (size_t i = 0; i < c->nsy; i++)
        if (c->sy[i].corr >= 0) {
            byc[nby].corr = c->sy[i].corr;
            byc[nby].idx = (uint32_t)i;
            nby++;
        }
    qsort(byc, nby, sizeof *byc, cmp_corr);
    lp_str kv[2] = {c->s_edge, c->s_sync};
    uint32_t a_sync;
    lp_status st = lp_builder_attrs(c->b, kv, 1, &a_sync, c->err);
    for (size_t i = 0; i < c->nsl && !st; i++) {
        cslice *s = &c->sl[i];
        if ((s->flags & (SL_SYNC | SL_DROP)) != SL_SYNC)
            continue;
        const csync *y = NULL;
        if (s->corr >= 0) {
            size_t lo = 0, hi = nby;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (byc[mid].corr < s->corr)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < nby && byc[lo].corr == s->corr)
                y = &c->sy[byc[lo].idx];
        }
        int64_t best = INT64_MIN;
        uint32_t bt = NONE;
        for (size_t t = 0; t < c->nth; t++) {
            const cthread *th = &c->th[t];
            if (!th->gpu || !th->gcount)
                continue;
            if (y && y->kind != SY_OTHER) {
                const cthread *yt = &c->th[y->thread];
                if (th->proc != yt->proc)
                    continue; /* another device */
                int64_t want = y->kind == SY_STREAM ? y->stream : y->kind == SY_EVENT ? y->wait_stream : -1;
                if (want >= 0 && th->stream != want)
                    continue;
            }
            int64_t e = gpu_last_end(c, th, s->end);
            if (e > best) {
                best = e;
                bt = (uint32_t)t;
            }
        }
        if (bt != NONE && best >= s->start) {
            s->flags |= SL_WAIT;
            st = add_msg(c, bt, best, s->thread, s->end, LP_MSGID_NONE, a_sync, s->line);
        }
    }
    lp_free(byc);
    return st;
}

typedef struct fkey {
    uint32_t key, seq;
    int64_t ts;
    uint32_t idx;
} fkey;

static int cmp_fkey(const void *a, const void *b)
{
    const fkey *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Time of a flow point: v1 its ts; v2 the slice's start (in) or end (out). */
static int64_t point_time(const cctx *c, const cflow *p, int sending)
{
    if (p->slice == NONE)
        return p->ts;
    const cslice *s = &c->sl[p->slice];
    if (sending)
        return s->end;
    return s->start;
}

/* Where a receiving point delivers: v1 f not bound to its enclosing slice goes to the
 * start of the next slice of its thread; on a Kineto GPU stream, a launch is delivered
 * when the stream could take it. */
static int64_t deliver_time(const cctx *c, const cflow *p, int64_t send)
{
    int64_t r = point_time(c, p, 0);
    const cthread *th = &c->th[p->thread];
    if (p->slice == NONE && p->ph == 'f' && !p->bind_here) {
        int64_t n = next_slice_start(c, th, r);
        if (n != INT64_MIN)
            r = n;
    }
    if (th->gpu && th->gcount) {
        long k = gpu_op_at(c, th, r);
        if (k >= 1) {
            const gop *g = c->gop + th->gfirst;
            int64_t prev_end = g[k - 1].pmax;
            if (send < prev_end && prev_end <= r)
                r = prev_end;
        }
    }
    return r;
}

static lp_status resolve_flows(cctx *c)
{
    if (!c->nfl)
        return LP_OK;
    fkey *k = lp_malloc(c->nfl * sizeof *k);
    if (!k)
        return nomem(c);
    size_t nk = 0;
    lp_str s_ac2g = lp_strtab_find(c->st, "ac2g", 4), s_async = lp_strtab_find(c->st, "async", 5),
           s_launch = lp_strtab_find(c->st, "launch", 6);
    for (size_t i = 0; i < c->nfl; i++) {
        const cflow *p = &c->fl[i];
        /* Kineto's launch and sync flows: the correlation ids link the same events */
        if (c->kineto && p->cat != LP_STR_NONE &&
            (p->cat == s_ac2g || (p->cat == s_async && p->name == s_launch))) {
            c->unmodelled[UM_KINETO_FLOW]++;
            continue;
        }
        k[nk].key = p->key;
        k[nk].seq = p->seq;
        /* v2 points order by their slice's start (the event's own time) */
        k[nk].ts = p->slice == NONE ? p->ts : c->sl[p->slice].start;
        k[nk].idx = (uint32_t)i;
        nk++;
    }
    qsort(k, nk, sizeof *k, cmp_fkey);
    lp_status st = LP_OK;
    for (size_t i = 0; i < nk && !st;) {
        size_t j = i;
        while (j < nk && k[j].key == k[i].key)
            j++;
        uint32_t pend = NONE; /* the open point of this flow id */
        /* one start and one end: a pair whatever their times (a message received before
         * it was sent is the builder's to report) */
        if (j - i == 2) {
            const cflow *a = &c->fl[k[i].idx], *z = &c->fl[k[i + 1].idx];
            if ((a->ph == 'f' && z->ph == 's') || (a->ph == 'i' && z->ph == 'o')) {
                fkey tmp = k[i];
                k[i] = k[i + 1];
                k[i + 1] = tmp;
            }
        }
        for (size_t x = i; x < j && !st; x++) {
            const cflow *p = &c->fl[k[x].idx];
            int v2 = p->slice != NONE;
            int starts = v2 ? p->ph == 'o' || p->ph == 'x' : p->ph == 's' || p->ph == 't';
            int ends = v2 ? p->ph == 'i' || p->ph == 'x' : p->ph == 't' || p->ph == 'f';
            if (v2 && (c->sl[p->slice].flags & SL_DROP))
                continue;
            if (ends) {
                if (pend == NONE) {
                    c->skipped[SK_FLOW_NO_START]++;
                    report(c, LP_SEV_WARNING, LP_RULE_IMPORT, p->line, p->off,
                           "flow %s (ph %c) without a start; ignored", v2 ? "bind_id" : "event", v2 ? 'i' : p->ph);
                } else {
                    const cflow *s = &c->fl[pend];
                    int64_t send = point_time(c, s, 1);
                    if (!v2 || s->slice == NONE) {
                        /* v1 sends at its own time */
                    } else {
                        /* v2: the sender's end, but not after the receiver's start (nor before the sender's start) */
                        int64_t rs = point_time(c, p, 0);
                        if (send > rs)
                            send = rs > c->sl[s->slice].start ? rs : c->sl[s->slice].start;
                    }
                    int64_t recv = deliver_time(c, p, send);
                    uint32_t attrs;
                    lp_str extra[4];
                    uint32_t ne = 0;
                    if (s->name != LP_STR_NONE && !s->lpexport)
                        extra[2 * ne] = c->s_flow, extra[2 * ne + 1] = s->name, ne++;
                    if ((st = attrs_plus(c, s->attrs, extra, ne, &attrs)))
                        break;
                    st = add_msg(c, s->thread, send, p->thread, recv, s->msgid, attrs, s->line);
                }
                pend = NONE;
            }
            if (starts) {
                if (pend != NONE && !ends) {
                    const cflow *o = &c->fl[pend];
                    report(c, LP_SEV_WARNING, LP_RULE_IMPORT, p->line, p->off,
                           "flow started again before the start at byte %llu ended; the earlier start is dropped",
                           (unsigned long long)o->off);
                    c->skipped[SK_FLOW_NO_END]++;
                }
                pend = k[x].idx;
            }
        }
        if (pend != NONE) {
            const cflow *p = &c->fl[pend];
            c->skipped[SK_FLOW_NO_END]++;
            report(c, LP_SEV_WARNING, LP_RULE_IMPORT, p->line, p->off, "flow %s never ends; ignored",
                   p->slice != NONE ? "bind_id (flow_out)" : p->ph == 's' ? "start (ph s)" : "step (ph t)");
        }
        i = j;
    }
    lp_free(k);
    return st;
}

/* Async events into slices on their id's timeline, plus begin/end messages for the
 * outermost slices. */
static lp_status resolve_async(cctx *c)
{
    if (!c->nas)
        return LP_OK;
    fkey *k = lp_malloc(c->nas * sizeof *k);
    uint32_t *stack = NULL;
    size_t capstack = 0;
    if (!k)
        return nomem(c);
    for (size_t i = 0; i < c->nas; i++) {
        k[i].key = c->as[i].key;
        k[i].seq = c->as[i].seq;
        k[i].ts = c->as[i].ts;
        k[i].idx = (uint32_t)i;
    }
    qsort(k, c->nas, sizeof *k, cmp_fkey);
    lp_str kvb[2] = {c->s_edge, c->s_async_begin}, kve[2] = {c->s_edge, c->s_async_end};
    uint32_t a_begin, a_end;
    lp_status st;
    if ((st = lp_builder_attrs(c->b, kvb, 1, &a_begin, c->err)) || (st = lp_builder_attrs(c->b, kve, 1, &a_end, c->err))) {
        lp_free(k);
        return st;
    }
    for (size_t i = 0; i < c->nas && !st;) {
        size_t j = i;
        while (j < c->nas && k[j].key == k[i].key)
            j++;
        uint32_t at = c->keyval[k[i].key];
        int64_t last = c->as[k[j - 1].idx].ts;
        size_t depth = 0;
        uint32_t sopen = NONE; /* legacy S..F: the S */
        uint32_t steps_from = NONE;
        for (size_t x = i; x < j && !st; x++) {
            casync *a = &c->as[k[x].idx];
            lp_json fake; /* position for push_slice */
            memset(&fake, 0, sizeof fake);
            fake.off = a->off;
            fake.line = a->line;
            if (a->ph == 'b') {
                if (lp_grow_at(&stack, &capstack, depth + 1, sizeof *stack)) {
                    st = nomem(c);
                    break;
                }
                stack[depth++] = k[x].idx;
            } else if (a->ph == 'e') {
                size_t d = depth;
                while (d > 0 && c->as[stack[d - 1]].name != a->name)
                    d--;
                if (d == 0) {
                    c->skipped[SK_ASYNC]++;
                    report(c, LP_SEV_WARNING, LP_RULE_IMPORT, a->line, a->off,
                           "async end (ph e) '%s' without a matching begin; ignored",
                           a->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, a->name));
                    continue;
                }
                /* inner begins left open are closed here too */
                while (depth >= d) {
                    casync *bg = &c->as[stack[depth - 1]];
                    uint32_t idx;
                    if ((st = push_slice(c, &fake, at, bg->ts, a->ts, bg->name, bg->cat, bg->attrs, SL_ASYNC, -1, &idx)))
                        break;
                    if (depth - 1 == 0) { /* outermost: linked to the threads that began and ended it */
                        if ((st = add_msg(c, bg->thread, bg->ts, at, bg->ts, LP_MSGID_NONE, a_begin, bg->line)) ||
                            (st = add_msg(c, at, a->ts, a->thread, a->ts, LP_MSGID_NONE, a_end, a->line)))
                            break;
                    }
                    if (depth == d) {
                        depth--;
                        break;
                    }
                    c->skipped[SK_ASYNC]++;
                    report(c, LP_SEV_WARNING, LP_RULE_IMPORT, bg->line, bg->off,
                           "async begin (ph b) '%s' is closed by the end of an enclosing begin",
                           bg->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, bg->name));
                    depth--;
                }
            } else if (a->ph == 'S') {
                if (sopen != NONE) {
                    c->skipped[SK_ASYNC]++;
                    report(c, LP_SEV_WARNING, LP_RULE_IMPORT, a->line, a->off,
                           "async start (ph S) while the same id is open since byte %llu; ignored",
                           (unsigned long long)c->as[sopen].off);
                    continue;
                }
                sopen = k[x].idx;
                steps_from = NONE;
            } else { /* T, p, F */
                if (sopen == NONE) {
                    c->skipped[SK_ASYNC]++;
                    report(c, LP_SEV_WARNING, LP_RULE_IMPORT, a->line, a->off,
                           "async %s (ph %c) without a start (ph S); ignored", a->ph == 'F' ? "finish" : "step", a->ph);
                    continue;
                }
                casync *s = &c->as[sopen];
                /* the step slice that ends here: [previous step or S, this] for p; T opens one */
                if (steps_from != NONE) {
                    casync *from = &c->as[steps_from];
                    casync *named = from->ph == 'T' ? from : a;
                    if (named->ph == 'T' || named->ph == 'p') {
                        char nb[512];
                        const char *nm = s->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, s->name);
                        const char *sp = named->step == LP_STR_NONE ? "" : lp_strtab_get(c->st, named->step);
                        int n = snprintf(nb, sizeof nb, "%s:%s", nm, sp);
                        lp_str sn;
                        uint32_t idx;
                        if (intern(c, nb, (size_t)n < sizeof nb ? (size_t)n : sizeof nb - 1, &sn)) {
                            st = nomem(c);
                            break;
                        }
                        if ((st = push_slice(c, &fake, at, from->ts, a->ts, sn, s->cat, named->attrs, SL_ASYNC, -1, &idx)))
                            break;
                    }
                } else if (a->ph == 'p') {
                    char nb[512];
                    const char *nm = s->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, s->name);
                    const char *sp = a->step == LP_STR_NONE ? "" : lp_strtab_get(c->st, a->step);
                    int n = snprintf(nb, sizeof nb, "%s:%s", nm, sp);
                    lp_str sn;
                    uint32_t idx;
                    if (intern(c, nb, (size_t)n < sizeof nb ? (size_t)n : sizeof nb - 1, &sn)) {
                        st = nomem(c);
                        break;
                    }
                    if ((st = push_slice(c, &fake, at, s->ts, a->ts, sn, s->cat, a->attrs, SL_ASYNC, -1, &idx)))
                        break;
                }
                steps_from = k[x].idx;
                if (a->ph == 'F') {
                    uint32_t idx;
                    if ((st = push_slice(c, &fake, at, s->ts, a->ts, s->name, s->cat, s->attrs, SL_ASYNC, -1, &idx)) ||
                        (st = add_msg(c, s->thread, s->ts, at, s->ts, LP_MSGID_NONE, a_begin, s->line)) ||
                        (st = add_msg(c, at, a->ts, a->thread, a->ts, LP_MSGID_NONE, a_end, a->line)))
                        break;
                    sopen = NONE;
                    steps_from = NONE;
                }
            }
        }
        /* begins never ended: closed at the last event of this id (catapult) */
        while (depth > 0 && !st) {
            casync *bg = &c->as[stack[--depth]];
            c->skipped[SK_ASYNC]++;
            report(c, LP_SEV_WARNING, LP_RULE_IMPORT, bg->line, bg->off,
                   "async begin (ph b) '%s' is never ended; closed at the last event of its id",
                   bg->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, bg->name));
            lp_json fake;
            memset(&fake, 0, sizeof fake);
            fake.off = bg->off;
            fake.line = bg->line;
            uint32_t idx;
            st = push_slice(c, &fake, at, bg->ts, last, bg->name, bg->cat, bg->attrs, SL_UNCLOSED | SL_ASYNC, -1, &idx);
        }
        if (sopen != NONE && !st) {
            casync *s = &c->as[sopen];
            c->skipped[SK_ASYNC]++;
            report(c, LP_SEV_WARNING, LP_RULE_IMPORT, s->line, s->off,
                   "async start (ph S) '%s' is never finished (no F); ignored",
                   s->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, s->name));
        }
        i = j;
    }
    lp_free(stack);
    lp_free(k);
    return st;
}

/* ---- emission -------------------------------------------------------------------------- */

static lp_status set_worker_names(cctx *c)
{
    /* thread names used more than once among the threads that become workers */
    lp_strtab *st = c->st;
    uint32_t *cnt = lp_calloc(st->n ? st->n : 1, sizeof *cnt);
    if (!cnt)
        return nomem(c);
    for (size_t t = 0; t < c->nth; t++)
        if (c->th[t].used && !c->th[t].async && c->th[t].tname != LP_STR_NONE && c->th[t].tname < st->n)
            cnt[c->th[t].tname]++;
    lp_status s = LP_OK;
    char buf[1024];
    for (size_t t = 0; t < c->nth && !s; t++) {
        cthread *th = &c->th[t];
        if (!th->used)
            continue;
        /* names are built with their lengths: they may hold any byte */
        size_t n = 0;
#define APPEND(p, k)                                                                                                   \
    do {                                                                                                               \
        size_t k_ = (k);                                                                                               \
        if (k_ > sizeof buf - n)                                                                                       \
            k_ = sizeof buf - n;                                                                                       \
        memcpy(buf + n, (p), k_);                                                                                      \
        n += k_;                                                                                                       \
    } while (0)
#define APPEND_STR(id) APPEND(lp_strtab_get(st, id), lp_strtab_len(st, id))
        if (c->has_rank) {
            APPEND("rank", 4);
            APPEND(c->rank, strlen(c->rank));
            APPEND("/", 1);
        }
        int named = th->tname != LP_STR_NONE && lp_strtab_len(st, th->tname);
        if (th->async) {
            APPEND_STR(th->akey);
        } else if (named) {
            APPEND_STR(th->tname);
            if (cnt[th->tname] > 1) {
                APPEND(" (", 2);
                APPEND_STR(th->pid);
                APPEND("/", 1);
                APPEND_STR(th->tid);
                APPEND(")", 1);
            }
        } else {
            APPEND_STR(th->pid);
            APPEND("/", 1);
            APPEND_STR(th->tid);
        }
#undef APPEND_STR
#undef APPEND
        if ((s = lp_builder_worker(c->b, buf, n, &th->worker, c->err)))
            break;
        /* attributes */
        lp_str kv[2 * 10];
        uint32_t np = 0;
        const cproc *p = th->proc != NONE ? &c->pr[th->proc] : NULL;
#define PAIR(k, v)                                                                                                     \
    do {                                                                                                               \
        kv[2 * np] = (k);                                                                                              \
        kv[2 * np + 1] = (v);                                                                                          \
        np++;                                                                                                          \
    } while (0)
        PAIR(c->s_kind, th->async ? c->s_async : th->gpu ? c->s_gpu : c->s_cpu);
        if (th->pid != LP_STR_NONE)
            PAIR(c->s_pid, th->pid);
        if (!th->async && th->tid != LP_STR_NONE)
            PAIR(c->s_tid, th->tid);
        if (p && p->name != LP_STR_NONE)
            PAIR(c->s_process, p->name);
        if (p && p->labels != LP_STR_NONE)
            PAIR(c->s_labels, p->labels);
        if (!th->async && th->tname != LP_STR_NONE)
            PAIR(c->s_thread, th->tname);
        if (!th->async && th->tsort != LP_STR_NONE)
            PAIR(c->s_sort, th->tsort);
        if (th->gpu && th->stream >= 0) {
            char sb[24];
            int k = snprintf(sb, sizeof sb, "%lld", (long long)th->stream);
            lp_str v;
            if (intern(c, sb, (size_t)k, &v)) {
                s = nomem(c);
                break;
            }
            PAIR(c->s_stream, v);
        }
        if (c->has_rank) {
            lp_str v;
            if (intern(c, c->rank, strlen(c->rank), &v)) {
                s = nomem(c);
                break;
            }
            PAIR(c->s_rank, v);
        }
#undef PAIR
        uint32_t list;
        if ((s = lp_builder_attrs(c->b, kv, np, &list, c->err)))
            break;
        s = lp_builder_worker_attrs(c->b, th->worker, list, 0, c->err);
    }
    lp_free(cnt);
    return s;
}

static uint16_t slice_type(cctx *c, const cslice *s, int *cat_is_type)
{
    *cat_is_type = 0;
    if (s->cat != LP_STR_NONE) {
        static const char *const names[LP_TYPE_NBUILTIN] = {"processing", "scheduling", "barrier", "buffer",
                                                            "serialization", "deserialization", "waiting", "io",
                                                            "unknown"};
        const char *cs = lp_strtab_get(c->st, s->cat);
        for (int i = 0; i < LP_TYPE_NBUILTIN; i++)
            if (!strcmp(cs, names[i])) {
                *cat_is_type = 1;
                return (uint16_t)i;
            }
    }
    if (s->flags & SL_SYNC)
        return (s->flags & SL_WAIT) ? LP_TYPE_WAITING : LP_TYPE_PROCESSING;
    if (s->flags & SL_IO)
        return LP_TYPE_IO;
    return LP_TYPE_PROCESSING;
}

/* The stack text of a child of (parent stack text, parent name): memoised. */
static lp_status stack_of(cctx *c, lp_str parent_stack, lp_str parent_name, lp_str *out)
{
    if (parent_name == LP_STR_NONE)
        parent_name = LP_STR_EMPTY;
    uint64_t key = ((uint64_t)parent_stack << 32) | parent_name;
    if (c->memo_n * 2 >= c->memo_cap) {
        size_t ncap = c->memo_cap ? c->memo_cap * 2 : 1024;
        uint64_t *nk = lp_malloc(ncap * sizeof *nk);
        lp_str *nv = lp_malloc(ncap * sizeof *nv);
        if (!nk || !nv) {
            lp_free(nk);
            lp_free(nv);
            return nomem(c);
        }
        for (size_t i = 0; i < ncap; i++)
            nk[i] = UINT64_MAX;
        for (size_t i = 0; i < c->memo_cap; i++)
            if (c->memo_k[i] != UINT64_MAX) {
                size_t h = (size_t)((c->memo_k[i] * 0x9E3779B97F4A7C15ull) >> 20) & (ncap - 1);
                while (nk[h] != UINT64_MAX)
                    h = (h + 1) & (ncap - 1);
                nk[h] = c->memo_k[i];
                nv[h] = c->memo_v[i];
            }
        lp_free(c->memo_k);
        lp_free(c->memo_v);
        c->memo_k = nk;
        c->memo_v = nv;
        c->memo_cap = ncap;
    }
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (c->memo_cap - 1);
    while (c->memo_k[h] != UINT64_MAX) {
        if (c->memo_k[h] == key) {
            *out = c->memo_v[h];
            return LP_OK;
        }
        h = (h + 1) & (c->memo_cap - 1);
    }
    /* text: parent stack + ";" + parent name */
    size_t o = 0;
    if (parent_stack != LP_STR_NONE) {
        size_t n = lp_strtab_len(c->st, parent_stack);
        memcpy(c->stackbuf, lp_strtab_get(c->st, parent_stack), n);
        o = n;
    }
    size_t nn = lp_strtab_len(c->st, parent_name);
    if (o + 1 + nn < MAX_STACK_TEXT) {
        if (o)
            c->stackbuf[o++] = ';';
        memcpy(c->stackbuf + o, lp_strtab_get(c->st, parent_name), nn);
        o += nn;
    }
    lp_str s;
    if (intern(c, c->stackbuf, o, &s))
        return nomem(c);
    c->memo_k[h] = key;
    c->memo_v[h] = s;
    c->memo_n++;
    *out = s;
    return LP_OK;
}

/* Per-slice emission info, computed when the slice is pushed. */
typedef struct open_s {
    uint32_t idx;
    lp_str op;            /* operator: the name, none when it only repeats a built-in type */
    int64_t end;
    lp_str stack;         /* stack text of this slice's children */
    uint16_t type;
    uint32_t attrs;
    int emitted;
} open_s;

static lp_status piece(cctx *c, const cthread *th, open_s *o, int64_t from, int64_t to)
{
    const cslice *s = &c->sl[o->idx];
    if (s->flags & SL_CONTAINER)
        return LP_OK;
    int whole_zero = s->start == s->end && !o->emitted && from == to;
    if (to <= from && !whole_zero)
        return LP_OK;
    o->emitted = 1;
    return lp_builder_activity(c->b, th->worker, from, to, o->type, o->op, o->attrs, s->line, c->err);
}

static lp_status open_slice(cctx *c, open_s *o, uint32_t idx, int64_t end, const open_s *parent)
{
    cslice *s = &c->sl[idx];
    o->idx = idx;
    o->end = end;
    o->emitted = 0;
    int cat_is_type;
    o->type = slice_type(c, s, &cat_is_type);
    o->op = (s->flags & SL_NO_OP) ? LP_STR_NONE : s->name;
    lp_str extra[8];
    uint32_t ne = 0;
    lp_str stack = parent ? parent->stack : LP_STR_NONE;
    if (parent && stack != LP_STR_NONE)
        extra[2 * ne] = c->s_stack, extra[2 * ne + 1] = stack, ne++;
    if (s->cat != LP_STR_NONE && !cat_is_type && lp_strtab_len(c->st, s->cat))
        extra[2 * ne] = c->s_cat, extra[2 * ne + 1] = s->cat, ne++;
    if (s->flags & SL_UNCLOSED)
        extra[2 * ne] = c->s_unclosed, extra[2 * ne + 1] = c->s_true, ne++;
    if (s->flags & SL_CLIPPED)
        extra[2 * ne] = c->s_clipped, extra[2 * ne + 1] = c->s_true, ne++;
    lp_status st = attrs_plus(c, s->attrs, extra, ne, &o->attrs);
    if (st)
        return st;
    /* the stack text of this slice's children */
    return stack_of(c, stack, s->name, &o->stack);
}

/* Flatten one thread's sorted slices into activities: at every instant the innermost
 * open slice is the activity. */
static lp_status emit_thread(cctx *c, cthread *th, open_s **stk, size_t *capstk)
{
    const skey *k = c->order + th->first;
    size_t depth = 0;
    int64_t cursor = INT64_MIN;
    lp_status st = LP_OK;
    for (uint32_t i = 0; i < th->count && !st; i++) {
        cslice *s = &c->sl[k[i].idx];
        if (s->flags & SL_DROP)
            continue;
        int64_t start = s->start, end = s->end;
        while (depth && (*stk)[depth - 1].end <= start && !st) {
            open_s *o = &(*stk)[depth - 1];
            st = piece(c, th, o, cursor, o->end);
            cursor = o->end;
            depth--;
        }
        if (st)
            break;
        open_s *parent = depth ? &(*stk)[depth - 1] : NULL;
        if (parent) {
            if (end > parent->end) {
                const cslice *ps = &c->sl[parent->idx];
                report(c, LP_SEV_WARNING, LP_RULE_IMPORT, s->line, s->off,
                       "slice '%s' [%lld, %lld] on thread %s overlaps the end of its enclosing slice '%s' "
                       "(byte %llu, ends %lld): clipped to it",
                       s->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, s->name), (long long)start, (long long)end,
                       lp_trace_worker_name(lp_builder_trace(c->b), th->worker),
                       ps->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, ps->name), (unsigned long long)ps->off,
                       (long long)parent->end);
                end = parent->end;
                s->flags |= SL_CLIPPED;
            }
            if ((st = piece(c, th, parent, cursor, start)))
                break;
        }
        if (lp_grow_at(stk, capstk, depth + 1, sizeof **stk)) {
            st = nomem(c);
            break;
        }
        parent = depth ? &(*stk)[depth - 1] : NULL;
        if ((st = open_slice(c, &(*stk)[depth], k[i].idx, end, parent)))
            break;
        depth++;
        cursor = start;
    }
    while (depth && !st) {
        open_s *o = &(*stk)[depth - 1];
        st = piece(c, th, o, cursor, o->end);
        cursor = o->end;
        depth--;
    }
    return st;
}

static lp_status emit(cctx *c)
{
    lp_status st = set_worker_names(c);
    if (st)
        return st;
    open_s *stk = NULL;
    size_t capstk = 0;
    c->stackbuf = lp_malloc(MAX_STACK_TEXT + 8);
    if (!c->stackbuf)
        return nomem(c);
    for (size_t t = 0; t < c->nth && !st; t++)
        if (c->th[t].used && c->th[t].count)
            st = emit_thread(c, &c->th[t], &stk, &capstk);
    lp_free(stk);
    for (size_t i = 0; i < c->nms && !st; i++) {
        const cmsg *m = &c->ms[i];
        st = lp_builder_message(c->b, c->th[m->src].worker, m->send, c->th[m->dst].worker, m->recv, m->id, m->attrs,
                                m->line, c->err);
    }
    return st;
}

/* Close the slices still open (B without E) at the end of the trace. */
static void close_open(cctx *c)
{
    for (size_t t = 0; t < c->nth; t++) {
        cthread *th = &c->th[t];
        while (th->nopen) {
            cslice *s = &c->sl[th->open[--th->nopen]];
            s->end = c->tmax > s->start ? c->tmax : s->start;
            s->flags |= SL_UNCLOSED;
            report(c, LP_SEV_WARNING, LP_RULE_IMPORT, s->line, s->off,
                   "slice '%s' begun here (B) on thread %s/%s is never ended (no E); closed at the end of the trace "
                   "(%lld ns)",
                   s->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, s->name), lp_strtab_get(c->st, th->pid),
                   lp_strtab_get(c->st, th->tid), (long long)s->end);
        }
    }
}

static void summary(cctx *c)
{
    if (!c->ds)
        return;
    char sk[600], um[600];
    size_t o = 0, u = 0;
    uint64_t nsk = 0, num = 0;
    sk[0] = um[0] = '\0';
    for (int r = 0; r < SK_N; r++)
        if (c->skipped[r]) {
            nsk += c->skipped[r];
            if (o < sizeof sk)
                o += (size_t)snprintf(sk + o, sizeof sk - o, "%s%llu %s", o ? ", " : "",
                                      (unsigned long long)c->skipped[r], skip_names[r]);
        }
    for (int r = 0; r < UM_N; r++)
        if (c->unmodelled[r]) {
            num += c->unmodelled[r];
            if (u < sizeof um)
                u += (size_t)snprintf(um + u, sizeof um - u, "%s%llu %s", u ? ", " : "",
                                      (unsigned long long)c->unmodelled[r], um_names[r]);
        }
    size_t nslices = 0, nthreads = 0, nx = 0, nb = 0, na = 0;
    for (size_t i = 0; i < c->nsl; i++) {
        uint16_t f = c->sl[i].flags;
        if (f & SL_DROP)
            continue;
        nslices++;
        nb += (f & SL_FROM_B) != 0;
        na += (f & SL_ASYNC) != 0;
        nx += !(f & (SL_FROM_B | SL_ASYNC));
    }
    for (size_t t = 0; t < c->nth; t++)
        nthreads += c->th[t].used;
    lp_diags_report(c->ds, LP_SEV_NOTE, LP_RULE_IMPORT, c->file, 0,
                    "chrome%s: %llu events read: %zu slices (X %zu, B/E %zu, async %zu) on %zu workers, %zu messages; "
                    "%llu not modelled%s%s%s; %llu skipped%s%s%s%s%s%s",
                    c->kineto ? " (PyTorch/Kineto)" : "", (unsigned long long)c->nevents, nslices, nx, nb, na, nthreads,
                    c->nms,
                    (unsigned long long)num, num ? " (" : "", um, num ? ")" : "", (unsigned long long)nsk,
                    nsk ? " (" : "", sk, nsk ? ")" : "", c->fatal ? "; the file ended early" : "",
                    c->dtu != LP_STR_NONE ? "; displayTimeUnit " : "",
                    c->dtu != LP_STR_NONE ? lp_strtab_get(c->st, c->dtu) : "");
}

static lp_status init_strings(cctx *c)
{
    static const char *const names[] = {"launch", "cat", "stack", "pid", "tid", "process", "thread", "labels", "sort_index",
                                        "kind", "gpu", "cpu", "async", "unclosed", "true", "clipped", "flow", "edge",
                                        "async-begin", "async-end", "sync", "stream", "rank"};
    lp_str *dst[] = {&c->s_launch, &c->s_cat, &c->s_stack, &c->s_pid, &c->s_tid, &c->s_process, &c->s_thread, &c->s_labels,
                     &c->s_sort, &c->s_kind, &c->s_gpu, &c->s_cpu, &c->s_async, &c->s_unclosed, &c->s_true,
                     &c->s_clipped, &c->s_flow, &c->s_edge, &c->s_async_begin, &c->s_async_end, &c->s_sync,
                     &c->s_stream, &c->s_rank};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (intern(c, names[i], strlen(names[i]), dst[i]))
            return nomem(c);
    for (int i = 0; i < K_NCATS; i++)
        if (intern(c, kcat_names[i], strlen(kcat_names[i]), &c->k_cat[i]))
            return nomem(c);
    return LP_OK;
}

static void release(cctx *c)
{
    for (size_t t = 0; t < c->nth; t++)
        lp_free(c->th[t].open);
    lp_free(c->th);
    lp_free(c->pr);
    lp_free(c->sl);
    lp_free(c->fl);
    lp_free(c->as);
    lp_free(c->sy);
    lp_free(c->ms);
    lp_free(c->order);
    lp_free(c->gop);
    lp_free(c->keyval);
    lp_free(c->kvp);
    lp_free(c->memo_k);
    lp_free(c->memo_v);
    lp_free(c->stackbuf);
    lp_strtab_release(&c->keys);
}

static lp_status chrome_read(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    cctx c;
    memset(&c, 0, sizeof c);
    c.b = b;
    c.st = lp_builder_strtab(b);
    c.ds = lp_builder_diags(b);
    c.file = lp_input_name(in);
    c.opts = opts;
    c.in = in;
    c.err = err;
    c.lastthread = NONE;
    c.dtu = LP_STR_NONE;
    if (lp_strtab_init(&c.keys)) { /* it may have allocated before failing */
        lp_strtab_release(&c.keys);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    lp_status st = init_strings(&c);
    if (!st && lp_grow_at(&c.kvp, &c.capkvp, 1, sizeof *c.kvp))
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (!st)
        c.kvp[c.nkvp++] = 0;
    lp_json_reader *r = NULL;
    static const char *const keys[] = {"traceEvents", NULL};
    lp_json_opts jo;
    memset(&jo, 0, sizeof jo);
    jo.stream_keys = keys;
    jo.repair = 1;
    if (!st)
        st = lp_json_reader_new(&r, in, &jo, err);
    int top_array = 0, saw_events = 0, top_object = 0;
    while (!st) {
        lp_json_ev ev;
        lp_status rs = lp_json_next(r, &ev, err);
        if (rs == LP_END)
            break;
        if (rs) {
            st = rs;
            break;
        }
        switch (ev.kind) {
        case LP_JSON_EV_BEGIN:
            if (ev.type == LP_JSON_ARRAY)
                top_array = 1;
            else
                top_object = 1;
            break;
        case LP_JSON_EV_ELEMENT:
            saw_events = 1;
            if (ev.repaired && c.ds)
                lp_diags_report(c.ds, LP_SEV_WARNING, LP_RULE_ENCODING, c.file, ev.rline,
                                "byte %llu: %s; the string was mended (bad bytes became '?')",
                                (unsigned long long)ev.roff, ev.rmsg);
            st = event(&c, ev.tree);
            if (opts && opts->progress && ++c.progress_n % 4096 == 0 &&
                opts->progress(opts->progress_ctx, "reading", lp_input_consumed(in), lp_input_size(in)))
                st = lp_error_set(err, LP_ERR_ARG, "cancelled");
            break;
        case LP_JSON_EV_MEMBER:
            st = top_member(&c, &ev);
            break;
        case LP_JSON_EV_VALUE:
            c.skipped[SK_SHAPE]++;
            report(&c, LP_SEV_ERROR, LP_RULE_IMPORT, ev.line, ev.off,
                   "expected an array of trace events or an object with \"traceEvents\", found a %s",
                   lp_json_type_name(ev.tree ? (lp_json_type)ev.tree->type : LP_JSON_NULL));
            break;
        case LP_JSON_EV_END:
            break;
        case LP_JSON_EV_BAD:
            if (ev.fatal && top_array && ev.code == LP_JSON_E_UNCLOSED) {
                /* the format allows the array's ']' to be missing */
                c.array_open = 1;
                if (c.ds)
                    lp_diags_report(c.ds, LP_SEV_NOTE, LP_RULE_IMPORT, c.file, ev.line,
                                    "byte %llu: the event array is not closed (allowed by the format)",
                                    (unsigned long long)ev.off);
                break;
            }
            c.skipped[SK_JSON]++;
            if (ev.fatal)
                c.fatal = 1;
            report(&c, LP_SEV_ERROR, LP_RULE_IMPORT, ev.line, ev.off, "%s; %s", ev.msg,
                   ev.fatal ? "the rest of the file is not read" : "event skipped");
            break;
        }
    }
    if (!st && top_object && !saw_events && !c.fatal)
        report(&c, LP_SEV_WARNING, LP_RULE_IMPORT, 1, 0, "no \"traceEvents\" array in the object: no events");
    if (!st) {
        close_open(&c);
        st = resolve_async(&c);
    }
    if (!st && c.kineto)
        for (size_t i = 0; i < c.nsl; i++)
            if (c.sl[i].flags & SL_MARK) {
                c.sl[i].flags |= SL_DROP;
                c.unmodelled[UM_TRACE_MARK]++;
            }
    if (!st)
        st = group_slices(&c);
    if (!st)
        st = group_gpu_ops(&c);
    if (!st && c.kineto)
        st = resolve_launches(&c);
    if (!st && c.kineto)
        st = resolve_syncs(&c);
    if (!st)
        st = resolve_flows(&c);
    if (!st) {
        /* threads whose every slice was dropped and that carry no message make no worker */
        for (size_t t = 0; t < c.nth; t++)
            if (c.th[t].used && !c.th[t].count) {
                int keep = 0;
                for (size_t i = 0; i < c.nms && !keep; i++)
                    keep = c.ms[i].src == t || c.ms[i].dst == t;
                c.th[t].used = (uint8_t)keep;
            }
        st = emit(&c);
    }
    if (!st)
        summary(&c);
    lp_json_reader_free(r);
    release(&c);
    return st;
}

/* ---- detection ------------------------------------------------------------------------------ */

/* The keys of the first object in the head: after '[' (array) or at the top level. The
 * scalar values between them are skipped; the scan stops at a container value, a key
 * with escapes or cut by the end of the head. -1 if the head holds no such object. */
static int head_keys(const unsigned char *p, size_t n, char keys[][24], int max, int *array, int *empty_array)
{
    lp_json_head h;
    lp_json_head_init(&h, p, n);
    *array = *empty_array = 0;
    int t = lp_json_head_next(&h);
    if (t == '[') {
        *array = 1;
        t = lp_json_head_next(&h);
        if (t == ']') {
            *empty_array = 1;
            return 0;
        }
    }
    if (t != '{')
        return -1;
    int k = 0;
    while (k < max) {
        if (lp_json_head_next(&h) != '"' || !h.closed || h.esc)
            break;
        size_t m = h.n < 23 ? h.n : 23;
        memcpy(keys[k], h.s, m);
        keys[k][m] = '\0';
        k++;
        if (lp_json_head_next(&h) != ':')
            break;
        /* skip a scalar value; stop at containers */
        t = lp_json_head_next(&h);
        if (t == '{' || t == '[' || (t == '"' && !h.closed))
            break;
        if (t == '"')
            t = lp_json_head_next(&h);
        else
            while (t && t != ',' && t != '}')
                t = lp_json_head_next(&h);
        if (t != ',')
            break;
    }
    return k;
}

static int chrome_detect(const unsigned char *head, size_t n, const char *path)
{
    char keys[8][24];
    int array, empty;
    int k = head_keys(head, n, keys, 8, &array, &empty);
    (void)path;
    if (empty)
        return 20;
    if (k <= 0)
        return 0;
    if (!array) {
        if (!strcmp(keys[0], "traceEvents"))
            return 95;
        if (!strcmp(keys[0], "schemaVersion") || !strcmp(keys[0], "deviceProperties") ||
            !strcmp(keys[0], "distributedInfo"))
            return 90;
        if (!strcmp(keys[0], "displayTimeUnit") || !strcmp(keys[0], "otherData") ||
            !strcmp(keys[0], "systemTraceEvents") || !strcmp(keys[0], "stackFrames") ||
            !strcmp(keys[0], "samples") || !strcmp(keys[0], "traceName") || !strcmp(keys[0], "metadata"))
            return 80;
        return 0;
    }
    static const char *const evkeys[] = {"ph", "cat", "pid", "tid", "ts", "name", "args", "dur", "id", "s", "bp",
                                         "tts", "cname", NULL};
    int chromeish = 1;
    for (int i = 0; i < k; i++) {
        if (!strcmp(keys[i], "ph"))
            return 92;
        int known = 0;
        for (int e = 0; evkeys[e]; e++)
            known |= !strcmp(keys[i], evkeys[e]);
        chromeish &= known;
    }
    return chromeish ? 70 : 0;
}

const lp_importer lp_import_chrome = {
    "chrome",
    "Chrome Trace Event Format JSON (array or {\"traceEvents\"}), incl. PyTorch profiler (Kineto) traces: "
    "threads and GPU streams (docs/formats/chrome.md)",
    chrome_detect,
    chrome_read,
};
