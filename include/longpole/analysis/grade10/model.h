/* model.h: a Grade10 model (papers/grade10.txt §III-B, §III-D1): the execution model
 * (phase types in a nested DAG, each once, sequentially repeated or concurrently
 * repeated by an instance key, with `after` edges between siblings), the resource model
 * (consumable resources with a capacity per host, blocking resources) and the
 * attribution rules (None, Exact(d), Variable(w) for consumable resources; Full or None
 * for blocking ones) given by phase-path patterns. The text format is
 * docs/formats/grade10-model.md (`grade10-model 1`); model_read.c reads it.
 *
 * Invariants of a model that lp_g10_model_read returned: type 0 is the root "/"; a
 * type's parent has a smaller index (types are in declaration order, parents first);
 * `after` edges join siblings and have no cycle (sib_order lists each parent's
 * children in a topological order of them); every rule names a resource; rkind/rval
 * hold, for every (type, resource), the rule that applies (the first matching rule
 * line, else the default).
 */
#ifndef LONGPOLE_ANALYSIS_GRADE10_MODEL_H
#define LONGPOLE_ANALYSIS_GRADE10_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "longpole/base/status.h"
#include "longpole/base/diag.h"
#include "longpole/base/strtab.h"
#include "longpole/codec/io.h"

#define LP_G10_MODEL_VERSION 1
#define LP_G10_NONE UINT32_MAX

typedef enum lp_g10_repeat { LP_G10_ONCE = 0, LP_G10_SEQUENTIAL, LP_G10_CONCURRENT } lp_g10_repeat;
typedef enum lp_g10_reskind { LP_G10_CONSUMABLE = 0, LP_G10_BLOCKING } lp_g10_reskind;
typedef enum lp_g10_sample { LP_G10_COUNTER = 0, LP_G10_MEAN } lp_g10_sample;
typedef enum lp_g10_rulekind {
    LP_G10_RULE_NONE = 0,
    LP_G10_RULE_EXACT,     /* consumable: the phase needs exactly `value` (absolute, or a fraction of capacity) */
    LP_G10_RULE_VARIABLE,  /* consumable: relative weight `value` in the variable share */
    LP_G10_RULE_FULL       /* blocking: the phase is inactive while the resource is blocked */
} lp_g10_rulekind;
typedef enum lp_g10_trace_phase { LP_G10_BY_OPERATOR = 0, LP_G10_BY_TYPE } lp_g10_trace_phase;

typedef struct lp_g10_ptype {
    lp_str name;         /* last path component ("" for the root) */
    lp_str path;         /* "/A/B" ("/" for the root) */
    uint32_t parent;     /* LP_G10_NONE for the root */
    uint8_t repeat;      /* lp_g10_repeat */
    lp_str key;          /* the repetition key (LP_STR_NONE when once) */
    uint8_t serial;      /* its children run one at a time, in recorded order (a thread's timeline) */
    uint32_t depth;      /* root 0 */
    uint32_t first_child, next_sibling; /* declaration order; LP_G10_NONE at the end */
    uint64_t line;
} lp_g10_ptype;

typedef struct lp_g10_after {
    uint32_t before, after; /* type `after` starts when every `before` sibling instance has ended */
    uint64_t line;
} lp_g10_after;

typedef struct lp_g10_res {
    lp_str name;
    uint8_t kind;        /* lp_g10_reskind */
    lp_str metric;       /* the monitoring metric (consumable) or the blocking CSV's resource name */
    uint8_t sample;      /* consumable: lp_g10_sample */
    double scale;        /* consumable: monitored rate (or mean) x scale = usage in capacity units */
    double capacity;     /* consumable: per host, unless overridden */
    lp_str unit;         /* for people ("cores", "B/s") */
    uint64_t line;
    lp_str delay;        /* consumable: a counter of the time the measured threads were ready to use
                            the resource but waited for it (run-queue delay), same units as the
                            usage: gives the effective capacity per window; LP_STR_NONE: none */
} lp_g10_res;

typedef struct lp_g10_cap {
    uint32_t res;
    lp_str host;
    double capacity;
    uint64_t line;
} lp_g10_cap;

typedef struct lp_g10_rule {
    lp_str pattern;      /* a phase-path pattern: components with * ? [..] globs, and ** */
    uint32_t res;
    uint8_t kind;        /* lp_g10_rulekind */
    double value;
    uint8_t percent;     /* exact: value is a fraction of the host's capacity */
    uint64_t line;
    uint64_t used;       /* phase types it decided */
} lp_g10_rule;

typedef struct lp_g10_model {
    lp_strtab strs;
    lp_str file;
    lp_g10_ptype *type;
    uint32_t ntypes;
    lp_g10_after *after;
    uint32_t nafter;
    uint32_t *sib_order; /* [ntypes]: for each parent, its children in topological order of `after`,
                            at sib_first[parent] .. + number of children */
    uint32_t *sib_first; /* [ntypes] */
    lp_g10_res *res;
    uint32_t nres;
    lp_g10_cap *cap;
    uint32_t ncap;
    lp_g10_rule *rule;
    uint32_t nrules;
    /* resolved rules, [ntypes * nres] */
    uint8_t *rkind;
    double *rval;
    uint8_t *rpct;
    uint32_t *rline;     /* index of the rule that decided, or LP_G10_NONE (the default) */
    /* defaults and settings */
    uint8_t def_consumable;  /* rule kind for (type, consumable resource) no line matches: variable */
    double def_consumable_val; /* 1 */
    uint8_t def_blocking;    /* none */
    int64_t slice_ns;        /* 10 ms */
    double bottleneck;       /* 0.95: a resource at >= this share of capacity is a bottleneck */
    double issue_min;        /* 0.01: issues saving less than this share of the makespan are not reported */
    double gap_factor;       /* 10: a sample interval over this many times the series' median is a gap */
    lp_str host_key;         /* instance key naming a phase's host ("host") */
    uint8_t trace_phase;     /* lp_g10_trace_phase: how a trace's activities name their phase type */
} lp_g10_model;

/* Read a model. Every problem is reported to `ds` with the line; LP_ERR_DATA (and no
 * model) if there was any error, LP_ERR_FORMAT if the header is missing,
 * LP_ERR_UNSUPPORTED for another version. */
lp_status lp_g10_model_read(lp_g10_model **out, lp_input *in, lp_diags *ds, lp_error *err);
/* The same from a string (tests, embedded models); `name` is used in diagnostics. */
lp_status lp_g10_model_parse(lp_g10_model **out, const char *text, size_t n, const char *name, lp_diags *ds,
                             lp_error *err);
void lp_g10_model_free(lp_g10_model *m);

/* A type by exact path ("/A/B"), or LP_G10_NONE. */
uint32_t lp_g10_model_type(const lp_g10_model *m, const char *path);
/* A resource by name, or LP_G10_NONE. */
uint32_t lp_g10_model_res(const lp_g10_model *m, const char *name);
/* The capacity of consumable resource r on `host` (LP_STR_NONE or an unknown host: the default). */
double lp_g10_model_capacity(const lp_g10_model *m, uint32_t r, const char *host);
static inline const char *lp_g10_model_str(const lp_g10_model *m, lp_str s) { return lp_strtab_get(&m->strs, s); }
/* Does phase path `path` match `pattern` (components with fnmatch globs; "**" matches
 * any number of components, including none)? */
int lp_g10_path_match(const char *pattern, const char *path);
/* The rule for (type, resource) as an absolute demand on a host of capacity `cap`:
 * kind into *kind, value into the return (exact % converted). */
static inline double lp_g10_rule_of(const lp_g10_model *m, uint32_t t, uint32_t r, double cap, uint8_t *kind)
{
    size_t i = (size_t)t * m->nres + r;
    *kind = m->rkind[i];
    return m->rpct[i] ? m->rval[i] * cap : m->rval[i];
}

#endif
