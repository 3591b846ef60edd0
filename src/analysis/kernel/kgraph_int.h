/* kgraph_int.h: the building blocks of the execution graph shared by the hand builder
 * (kgraph_builder.c), the event builder (kgraph_events.c, kgraph_build.c) and the layout
 * step (kgraph_layout.c). Internal.
 *
 * A part is a graph under construction in creation order: workers, vertices appended to
 * workers as events come (so each worker's vertices are in time order), links between
 * its own vertices. The event builder makes one part per host (built on its own thread);
 * links between hosts are kept aside as cross links and laid out with the parts.
 * Layout turns parts into the worker-major columns of lp_kgraph.
 */
#ifndef LP_KGRAPH_INT_H
#define LP_KGRAPH_INT_H

#include "longpole/analysis/kernel/kgraph.h"
#include "base/hashmap.h"

typedef struct kpart {
    const lp_strtab *strs;  /* where the workers' comm ids live */
    uint32_t nw, capw;
    uint32_t *whost;        /* [nw] host index */
    int32_t *wtid, *wcpu;   /* [nw] */
    lp_str *wcomm;          /* [nw] in strs, LP_STR_NONE if unknown */
    uint32_t *wtail;        /* [nw] latest vertex, LP_NONE32 before the first */
    uint32_t *wcount;       /* [nw] vertices */

    uint32_t nv, capv;
    int64_t *vt;            /* [nv] */
    uint32_t *vw;           /* [nv] worker */
    uint8_t *vst, *vrs;     /* [nv] state and reason of the edge from this vertex */
    uint32_t *vin, *vout;   /* [nv] link index or LP_NONE32 */

    uint32_t nl, capl;
    uint32_t *lfrom, *lto;  /* [nl] */
    uint8_t *lkind;
} kpart;

/* A link between vertices of two parts. */
typedef struct kxlink {
    uint32_t pfrom, vfrom, pto, vto;
    uint8_t kind;
} kxlink;

void kpart_init(kpart *p, const lp_strtab *strs);
void kpart_release(kpart *p);
/* A new worker; its id, or LP_NONE32 on out of memory. */
uint32_t kpart_worker(kpart *p, uint32_t host, int32_t tid, int32_t cpu, lp_str comm);
/* Append a vertex to worker w at t; the edge from w's tail gets (state, reason). The new
 * vertex id, or LP_NONE32 on out of memory (or past 2^32 - 2 vertices). The caller keeps
 * t >= the tail's time and state/reason coherent. */
uint32_t kpart_append(kpart *p, uint32_t w, int64_t t, uint8_t state, uint8_t reason);
/* A link between two of the part's vertices (each without a link in that direction);
 * 0, or -1 on out of memory. */
int kpart_link(kpart *p, uint32_t from, uint32_t to, uint8_t kind);

/* Lay out parts (in order; worker ids follow part order, then creation order) and cross
 * links into g, whose strs and host names are already set. Workers get their names
 * (host names from g). Each part's vertex columns are freed as soon as they are copied.
 * perms (may be NULL) receives, per part, its vertices' final ids (the caller frees
 * each array with lp_free). */
lp_status kgraph_layout(lp_kgraph *g, kpart *parts, uint32_t nparts, const kxlink *x, uint64_t nx, uint32_t **perms,
                        lp_error *err);

/* Does the graph have a cycle? Kahn's algorithm over horizontal edges and links
 * (O(V + L), 8 bytes per vertex). 0 acyclic, 1 cycle (*at: a vertex on or behind it),
 * -1 out of memory. Written to move to src/graph (shared graph kernels) when that layer
 * lands. */
int kgraph_has_cycle(const lp_kgraph *g, uint32_t *at); /* kgraph_topo.c */

/* ---- one host's events (kgraph_events.c) ----------------------------------------- */

/* What building one host needs. The packet arrays are shared by all hosts' threads: a
 * host writes only the send side of packets it sent and the receive side of packets it
 * received (distinct elements), so no locking is needed. */
typedef struct khost_in {
    const lp_ktrace *kt;
    uint32_t host;
    const lp_kclock *clock;  /* NULL: the host's own clock */
    const lp_hmap *pkmap;    /* this host's matched events: key ev * 2 + dir (0 send, 1 receive) -> packet */
    uint32_t *pk_send;       /* [npk] send endpoint vertex (part-local), LP_NONE32 */
    uint32_t *pk_recv;       /* [npk] receive endpoint vertex */
    uint32_t *pk_target;     /* [npk] the vertex the packet's link ends at (what it woke, or its receive) */
} khost_in;

#define KHOST_NOTES 8

typedef struct khost_note {
    lp_severity sev;
    lp_rule rule;
    uint64_t ev;            /* event index (among the events the reader kept) */
    int64_t ts;             /* its stamp (host clock), INT64_MIN if none: what the report names */
    char msg[160];
} khost_note;

typedef struct khost_out {
    kpart part;
    lp_kgraph_stats st;
    lp_kpktkey *keys;       /* unmatched TCP endpoints, in event order */
    uint64_t nkeys;
    size_t capkeys;
    khost_note notes[KHOST_NOTES];
    unsigned nnotes;
} khost_out;

/* Build one host's part from its events (Trace Compass's handlers: statedump, sched,
 * interrupt contexts, execution graph). out->part must be initialised with the trace's
 * string table. */
lp_status khost_build(const khost_in *in, khost_out *out, lp_error *err);
void khost_out_release(khost_out *out);

#endif
