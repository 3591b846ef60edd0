/* g10_int.h: what the files of the Grade10 analysis share and nobody else uses. */
#ifndef LP_ANALYSIS_G10_INT_H
#define LP_ANALYSIS_G10_INT_H

#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/exec.h"
#include "longpole/analysis/grade10/attrib.h"
#include "base/hashmap.h"

/* A sibling name an `after` clause refers to, resolved when the model is complete. */
typedef struct g10_pending_after {
    uint32_t type;
    lp_str name;
    uint64_t line;
} g10_pending_after;

/* Resolve `after` names, order siblings (reporting cycles), decide every rule; errors
 * found are reported and added to *errors. */
lp_status g10_model_finish(lp_g10_model *m, lp_diags *ds, const g10_pending_after *pa, size_t npa, int *errors,
                           lp_error *err);

/* ---- building an exec (exec_build.c, exec_finish.c) ------------------------------- */

enum { XB_START = 1, XB_END = 2 };

/* Phase instances under construction, in creation order (a parent before its
 * children); the exec being built holds the string table. */
typedef struct g10_xb {
    const lp_g10_model *m;
    lp_g10_exec *x;
    lp_diags *ds;
    uint32_t n;
    size_t cap;
    uint32_t *type, *parent;
    lp_str *key;
    int64_t *start, *end;
    uint8_t *has;            /* XB_START | XB_END */
    lp_str *sfile, *efile;
    uint64_t *sline, *eline;
    lp_str *ownhost;         /* host named in its own records, or LP_STR_NONE */
    lp_hmap map;             /* hash(parent, type, key) -> instance */
    lp_hmap names;           /* phase-name id -> 1 + offset of its candidate types in cand */
    uint32_t *cand;          /* lists: count, then type indices */
    size_t ncand, capcand;
    lp_hmap alias;           /* key << 32 | value -> host (single records: host=H, key=value) */
    lp_str host_key, hostname_key;
    uint64_t unknown_names;  /* distinct unknown phase names reported (trace input reports a few) */
} g10_xb;

lp_status g10_xb_init(g10_xb *b, const lp_g10_model *m, lp_diags *ds, lp_error *err);
void g10_xb_release(g10_xb *b);
/* One record: phase `name` (an id of b->x->strs) with instance keys kv[0, 2*nkv)
 * (ids of b->x->strs), bounds t0/t1 for the flags in `what` (XB_START, XB_END or
 * both). quiet_unknown: a record that resolves to no phase type (unknown name, missing
 * keys, ambiguous) is counted, not an error. */
lp_status g10_xb_add(g10_xb *b, lp_str name, const lp_str *kv, uint32_t nkv, int what, int64_t t0, int64_t t1,
                     lp_str file, uint64_t line, int quiet_unknown, lp_error *err);
/* Is `name` the name (or path) of some phase type? */
lp_status g10_xb_known(g10_xb *b, lp_str name, int *known, lp_error *err);
/* A `single` record without a phase: host=H (or hostname=H) and key=value pairs map
 * instances with that key value to host H. */
lp_status g10_xb_alias(g10_xb *b, const lp_str *kv, uint32_t nkv, lp_error *err);
/* The name of builder instance i ("/Run/Superstep[3]/Compute[w1]") into buf. */
const char *g10_xb_name(const g10_xb *b, uint32_t i, char *buf, size_t n);
/* Validate, derive, order, assign hosts; hands over the exec (b->x = NULL). */
lp_status g10_xb_finish(g10_xb *b, lp_g10_exec **out, lp_error *err);

/* ---- attribution (attrib.c, attrib_blk.c, attrib_tl.c) ------------------------------ */

#define G10_KEEP 20 /* reports of one kind kept in full; the rest are counted */

/* A growable list of time pieces [s[k], e[k]). */
typedef struct g10_pieces {
    int64_t *s, *e;
    size_t n, cap;
} g10_pieces;

void g10_pieces_release(g10_pieces *pc);
/* t rounded to the nearest slice boundary (slice mode), or t (event mode). */
int64_t g10_round(const lp_g10_attr *a, int64_t t);
/* The bounds of leaf p in segment time: rounded (and widened to one slice when they
 * round to nothing: *widened) in slice mode, as recorded in event mode. */
void g10_bounds(const lp_g10_attr *a, uint32_t p, int64_t *S, int64_t *E, int *widened);
/* The time leaf p is blocked by instances of blocking resource r (LP_G10_NONE: any)
 * within its bounds (pc is scratch). */
lp_status g10_blocked_ns(const lp_g10_attr *a, uint32_t p, uint32_t r, g10_pieces *pc, int64_t *out, lp_error *err);
/* The active pieces of leaf p: its bounds (rounded, and widened to one slice when they
 * round to nothing, in slice mode) minus the intervals of the blocking instances that
 * stop it; *widened set when widening happened. */
lp_status g10_pieces_of(const lp_g10_attr *a, uint32_t p, g10_pieces *pc, int *widened, lp_error *err);
/* The active pieces of leaf p as computed once by the attribution (a->pfirst/ps/pe). */
static inline size_t g10_leaf_pieces(const lp_g10_attr *a, uint32_t p, const int64_t **s, const int64_t **e)
{
    *s = a->ps + a->pfirst[p];
    *e = a->pe + a->pfirst[p];
    return a->pfirst[p + 1] - a->pfirst[p];
}
/* Per phase type t, the resources r (in order) its leaves have a use of: the blocking
 * ones with rule Full (G10_ROWS_BLOCKING), the consumable ones with a rule other than
 * None (G10_ROWS_CONSUMABLE), or both; row t of nres + 1 entries, the count first.
 * NULL if out of memory (lp_free it). */
enum { G10_ROWS_BLOCKING = 1, G10_ROWS_CONSUMABLE = 2 };
uint32_t *g10_type_rows(const lp_g10_model *m, int which);
/* Blocking instances from the inputs, and for every leaf the ones that stop it. */
lp_status g10_blocking_build(lp_g10_attr *a, const lp_g10_data *d, lp_diags *ds, lp_error *err);

/* The segment of timeline tl holding instant t (bound[0] <= t < bound[nseg]): O(1) on
 * the slice grid, a binary search in event mode. */
static inline uint32_t g10_seg_of(const lp_g10_attr *a, const lp_g10_tl *tl, int64_t t)
{
    if (a->mode == LP_G10_SLICES) {
        if (t < tl->grid0)
            return 0;
        uint64_t k = tl->lead + ((uint64_t)t - (uint64_t)tl->grid0) / (uint64_t)a->slice_ns;
        return k < tl->nseg ? (uint32_t)k : tl->nseg - 1;
    }
    size_t l = 0, h = tl->nseg;
    while (l < h) {
        size_t m = l + (h - l) / 2;
        if (tl->bound[m + 1] <= t)
            l = m + 1;
        else
            h = m;
    }
    return (uint32_t)l;
}

/* The leaf phases whose demand falls on one timeline (each one's rule, Exact or
 * Variable, and its value: lp_g10_rule_of with the timeline's capacity). */
typedef struct g10_tlphases {
    uint32_t *phase;     /* exec instance */
    uint32_t *slot;      /* index in a->use[res] */
    size_t n, cap;
} g10_tlphases;

/* Scratch buffers reused from one timeline to the next by one thread (fresh memory is
 * slow to touch on some machines: a timeline's temporaries are as big as its arrays). */
enum { SC_IV, SC_WIN, SC_CNT, SC_FIRST, SC_ORDER, SC_SCR, SC_LEN, SC_PX, SC_PY, SC_PG, SC_PL,
       SC_PU, SC_EF, SC_SEG, SC_N };
typedef struct g10_scratch {
    void *buf[SC_N];
    size_t cap[SC_N];
    /* slice mode: the last grid this thread built (owned by its timeline, which lives as
     * long as the attribution): a timeline with the same grid and ends shares it */
    int64_t *grid, grid_lo, grid_hi, grid_A;
    uint32_t grid_nseg, grid_lead;
    uint32_t grid_gen;       /* grids built (SC_SEG holds piece segments on the first one) */
} g10_scratch;

/* Buffer `slot` of at least `bytes` (contents undefined; SC_CNT and SC_FIRST are zero
 * when handed out and must be left zero by their users; SC_SEG is zero when new). NULL
 * if out of memory. */
void *g10_scratch_get(g10_scratch *sc, int slot, size_t bytes);
void g10_scratch_release(g10_scratch *sc);

/* Build timeline k (a->tl[k]: res, host, capacity set) from its monitoring series (and
 * the resource's delay series on that host, NULL if none: effective capacity):
 * windows, segments, demand, upsampling, the uses of its phases and their type totals
 * (added into ts[ntypes]). */
lp_status g10_tl_build(lp_g10_attr *a, uint32_t k, const lp_g10_series *s, const lp_g10_series *delay,
                       const lp_g10_data *d, const g10_tlphases *ph, lp_diags *ds, lp_g10_tstat *ts, g10_scratch *sc,
                       lp_error *err);

/* ---- incremental replay (respan.c) --------------------------------------------------- */

/* Makespans of candidates that change some leaves of a baseline, from the spans of
 * their ancestors only (the spans of the others are the baseline's). */
typedef struct g10_respan {
    const lp_g10_exec *x;
    const int64_t *base;     /* [n] the baseline replay's spans (end - start) */
    int64_t *span;           /* [n] the candidate's span of each recomputed composite */
    uint32_t *stamp;         /* [n] == gen: recomputed for the current candidate */
    uint32_t gen;
    uint32_t *tstamp;        /* [ntypes] per-type state of the parent being evaluated */
    int64_t *tmax, *tlast;   /* [ntypes] the latest end, and the last one, of each type's children */
    uint32_t tgen;
    uint8_t *tflag;          /* [ntypes] what local_span needs of each type (respan.c: RS_*) */
    uint32_t *dirty;         /* the composites to recompute */
    size_t ndirty, capdirty;
    size_t scan_above;       /* more of them than this (x->n / 64): found by a scan, not sorted */
} g10_respan;

/* *usable = 0 (and nothing allocated) when under some parent the recorded order of the
 * children is not a topological order of the model's `after` clauses: replay the DAG. */
lp_status g10_respan_init(g10_respan *rs, const lp_g10_exec *x, const int64_t *base_span, int *usable, lp_error *err);
void g10_respan_release(g10_respan *rs);
/* The baseline: every composite's span from leaf durations dur, into span_out[n] (the
 * base_span given to g10_respan_init, leaves: their duration); returns the makespan. */
int64_t g10_respan_all(g10_respan *rs, const int64_t *dur, int64_t *span_out);
/* The makespan with leaf durations dur (equal to the baseline's but for the leaves in
 * changed[0, nchanged), in any order, repeats allowed). */
lp_status g10_respan_run(g10_respan *rs, const int64_t *dur, const uint32_t *changed, size_t nchanged,
                         int64_t *makespan, lp_error *err);

#endif
