/* exec.h: the execution trace of a Grade10 analysis (papers/grade10.txt §III-C): the
 * tree of phase instances of one run, each an instance of a model phase type, with its
 * start and end, its instance key and its host. Built from Grade10 OperationLog events
 * (import/grade10.h) or from any trace longpole reads (an activity is a phase instance:
 * its operator, or its type, names the phase type; its attributes, its worker's
 * attributes and the pseudo-keys `worker=<name>`, `operator=<op>`, `type=<type>` and
 * `activity=<index>` are its instance keys; an activity whose name is no phase type, or
 * that lacks a key its type needs, is left out and counted).
 *
 * Resolution, as Grade10 does it: `phase=NAME` names the one type called NAME whose
 * repetition keys (its own and its ancestors') all appear among the record's keys (or
 * a full path "/A/B", or "/" for the root); the instance is identified by its path of
 * key values. Ancestors without records of their own get their bounds from their
 * children (derived). A phase's host is the value of the model's host key in its
 * records, else the host a `single` record maps its instance key to (`event=single,
 * host=H, worker=3`), else its parent's.
 *
 * Invariants of an lp_g10_exec: instances are in depth-first preorder, instance 0 is
 * the root (type 0), children follow their parent in order of start; the descendants
 * of i are i+1 .. i+size[i]-1; start <= end; a parent's bounds cover its children's
 * when they were derived (recorded bounds are kept as recorded and a child outside them
 * is reported); an instance without a record and without children does not exist.
 * Every dropped or adjusted record was reported with its file and line.
 */
#ifndef LONGPOLE_ANALYSIS_GRADE10_EXEC_H
#define LONGPOLE_ANALYSIS_GRADE10_EXEC_H

#include <stdint.h>
#include "longpole/analysis/grade10/model.h"
#include "longpole/import/grade10.h"
#include "longpole/model/trace.h"

typedef struct lp_g10_exec {
    const lp_g10_model *m;   /* not owned; must outlive the exec */
    lp_strtab strs;          /* key names and values, hosts, file names */
    uint32_t n;              /* phase instances */
    uint32_t *type;
    uint32_t *parent;        /* LP_G10_NONE for the root */
    uint32_t *size;          /* subtree size (1 for a leaf) */
    int64_t *start, *end;    /* nanoseconds */
    lp_str *key;             /* value of its type's repetition key, LP_STR_NONE for a type repeated once */
    uint32_t *host;          /* index into hosts[], LP_G10_NONE if unknown */
    uint8_t *derived;        /* bounds derived from the children */
    uint64_t *src;           /* the line of its start record (else its end record) in its file; from a
                                trace: the activity's index + 1; 0 for a derived phase */
    lp_str *hosts;
    uint32_t nhosts;
    lp_str *keyname;         /* [m->ntypes]: each type's repetition key name in strs (LP_STR_NONE) */
    uint32_t nleaves;
    /* what building did to the input (each also reported) */
    uint64_t records;        /* records used */
    uint64_t dropped;        /* records dropped (unknown phase, duplicate, unmatched, bad bounds) */
    uint64_t unmatched;      /* starts without end and ends without start */
    uint64_t ignored;        /* trace activities whose name is no phase type (not an error) */
} lp_g10_exec;

/* Phase instances from OperationLog events. LP_ERR_DATA if no phase instance remains. */
lp_status lp_g10_exec_from_events(const lp_g10_model *m, const lp_g10_data *d, lp_diags *ds, lp_g10_exec **out,
                                  lp_error *err);
/* Phase instances from a trace's activities (gap activities are skipped). */
lp_status lp_g10_exec_from_trace(const lp_g10_model *m, const lp_trace *t, lp_diags *ds, lp_g10_exec **out,
                                 lp_error *err);
void lp_g10_exec_free(lp_g10_exec *x);

static inline int lp_g10_is_leaf(const lp_g10_exec *x, uint32_t i) { return x->size[i] == 1; }
static inline const char *lp_g10_exec_str(const lp_g10_exec *x, lp_str s) { return lp_strtab_get(&x->strs, s); }
/* The instance's name: its type path with key values, "/Run/Superstep[3]/Compute[w1]",
 * into buf (truncated to n); returns buf. */
const char *lp_g10_exec_name(const lp_g10_exec *x, uint32_t i, char *buf, size_t n);
/* Does instance i (or an ancestor) carry instance key `key` with value `val` (strings
 * of x->strs; the host key matches the host)? */
int lp_g10_exec_has_key(const lp_g10_exec *x, uint32_t i, lp_str key, lp_str val);

#endif
