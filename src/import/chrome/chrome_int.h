/* chrome_int.h: what the files of the Chrome Trace Event Format importer share
 * (src/import/chrome/: chrome.c reads a file and runs the stages, chrome_keys.c the
 * values and threads of an event, chrome_events.c one event, chrome_async.c async
 * events, chrome_kineto.c the PyTorch profiler's GPU streams, chrome_flows.c messages,
 * chrome_emit.c the activities). Internal; chrome.c's header describes the mapping.
 */
#ifndef LP_IMPORT_CHROME_INT_H
#define LP_IMPORT_CHROME_INT_H

#include "longpole/codec/io.h"
#include "longpole/codec/json.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/import.h"
#include "base/hashmap.h"
#include "base/util.h"

#include <stdint.h>

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

enum unmodelled {
    UM_COUNTER = 0, UM_INSTANT, UM_SAMPLE, UM_OBJECT, UM_MEMDUMP, UM_OTHER, UM_META, UM_ASYNC_N,
    UM_GAP, UM_TRACE_MARK, UM_SYNC_LINK, UM_KINETO_FLOW, UM_N
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

/* The state of one file's import. */
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

    lp_hmap memo;         /* stack-text memo: (parent stack << 32 | parent name) -> children's stack text */
    char *stackbuf;       /* scratch for building stack texts */
    lp_str k_cat[K_NCATS];  /* the categories that matter (kcat_names), interned */
} cctx;

/* The members of an event that matter. */
typedef struct evf {
    const lp_json *ph, *ts, *dur, *pid, *tid, *name, *cat, *args, *id, *id2, *bp, *s, *bind_id, *flow_in, *flow_out;
} evf;

/* What Kineto args say about a slice. */
typedef struct kargs {
    int64_t corr, stream, wait_stream;
    const lp_json *sync_kind;
    int derived;          /* "longpole.derived" (gaps, critical-path track of longpole's exports) */
    int no_op;            /* "longpole.no_op": the name only repeats the type */
    const lp_json *msgid; /* "longpole.msg_id" */
    const lp_json *step;  /* "step" (async T/p) */
} kargs;

/* sort key of a flow point or async event: by key, then input order */
typedef struct fkey {
    uint32_t key, seq;
    int64_t ts;
    uint32_t idx;
} fkey;

static inline lp_status nomem(cctx *c) { return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory"); }
static inline int intern(cctx *c, const char *s, size_t n, lp_str *out) { return lp_strtab_intern(c->st, s, n, out); }

/* chrome.c: diagnostics */
void ch_report(cctx *c, lp_severity sev, lp_rule rule, uint64_t line, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* A record skipped: counted by reason, reported (error) at the node's position. */
void ch_skip(cctx *c, enum skip why, const lp_json *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* chrome_keys.c */
int ch_node_ns(const lp_json *v, int64_t *out);
const char *ch_id_text(const lp_json *v, size_t *n);
lp_str ch_node_str(cctx *c, const lp_json *v, int *oom);
int ch_key_id(cctx *c, const char *k, size_t n, uint32_t *id);
size_t ch_join_key(char *buf, size_t cap, const char *const *parts, const size_t *lens, int n);
lp_status ch_get_proc(cctx *c, const char *pid, size_t pn, uint32_t *out);
lp_status ch_new_thread(cctx *c, uint32_t *out);
lp_status ch_get_thread(cctx *c, const lp_json *pidn, const lp_json *tidn, uint32_t *out);

/* chrome_events.c */
lp_status ch_args_attrs(cctx *c, const lp_json *args, uint32_t *list, kargs *k, lp_str *extra, int nextra);
lp_status ch_push_slice(cctx *c, const lp_json *ev, uint32_t thread, int64_t start, int64_t end, lp_str name,
                        lp_str cat, uint32_t attrs, uint16_t flags, int64_t corr, uint32_t *idx);
const char *ch_event_id(const evf *f, size_t *n, int *local);
lp_status ch_event(cctx *c, const lp_json *ev);
lp_status ch_top_member(cctx *c, const lp_json_ev *ev);

/* chrome_async.c */
lp_status ch_async_event(cctx *c, const lp_json *ev, const evf *f, char ph, int64_t ts, uint32_t thread, lp_str name,
                         lp_str cat);
lp_status ch_resolve_async(cctx *c);

/* chrome_kineto.c */
lp_status ch_group_gpu_ops(cctx *c);
long ch_gpu_op_at(const cctx *c, const cthread *th, int64_t t);
lp_status ch_resolve_launches(cctx *c);
lp_status ch_resolve_syncs(cctx *c);

/* chrome_flows.c */
lp_status ch_add_msg(cctx *c, uint32_t src, int64_t send, uint32_t dst, int64_t recv, uint64_t id, uint32_t attrs,
                     uint32_t line);
lp_status ch_attrs_plus(cctx *c, uint32_t base, const lp_str *extra, uint32_t nextra, uint32_t *out);
int ch_cmp_fkey(const void *a, const void *b);
lp_status ch_resolve_flows(cctx *c);

/* chrome_emit.c */
lp_status ch_group_slices(cctx *c);
lp_status ch_emit(cctx *c);

#endif
