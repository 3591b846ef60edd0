/* model_read.c: reading a Grade10 model file (docs/formats/grade10-model.md) into an
 * lp_g10_model (model.h).
 *
 * One statement per line, tokens separated by blanks, `#` comments. The first
 * statement is `grade10-model 1`. Statements are collected in one pass (a phase's
 * parent must be declared before it); names that may be declared later (`after`
 * siblings) and the rules are resolved at the end (model_finish), where cycles of
 * `after` edges are found. Every problem is reported with its line and the reading
 * goes on, so one run lists all of them; any error fails the whole model.
 */
#include "longpole/analysis/grade10/model.h"
#include "analysis/grade10/g10_int.h"
#include "import/grade10/g10_text.h"
#include "longpole/import/grade10.h"
#include "longpole/base/alloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXTOK 16

typedef struct tok {
    const char *p;
    size_t n;
} tok;

typedef struct mread {
    lp_g10_model *m;
    lp_diags *ds;
    const char *fname;
    uint64_t line;
    g10_pending_after *pa;
    size_t npa, cappa;
    size_t captype, capres, capcap, caprule;
    int errors;
    int header;
} mread;

static void bad(mread *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(mread *r, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lp_diags_report(r->ds, LP_SEV_ERROR, LP_RULE_MODEL, r->fname, r->line, "%s", msg);
    r->errors++;
}

static int tok_is(const tok *t, const char *w) { return t->n == strlen(w) && memcmp(t->p, w, t->n) == 0; }

static lp_status intern(mread *r, const tok *t, lp_str *s, lp_error *err)
{
    if (lp_strtab_intern(&r->m->strs, t->p, t->n, s))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    return LP_OK;
}

/* A finite non-negative number, optionally followed by '%' (then *pct = 1 and the value
 * is divided by 100). */
static int number(const tok *t, double *v, int allow_pct, int *pct)
{
    size_t n = t->n;
    int p = 0;
    if (allow_pct && n && t->p[n - 1] == '%')
        p = 1, n--;
    if (!g10_parse_double(t->p, n, v) || *v < 0)
        return 0;
    if (p)
        *v /= 100;
    if (pct)
        *pct = p;
    else if (p)
        return 0;
    return 1;
}

/* ---- phase types ------------------------------------------------------------------ */

static lp_status add_type(mread *r, lp_str name, lp_str path, uint32_t parent, lp_error *err)
{
    lp_g10_model *m = r->m;
    if (lp_grow_at(&m->type, &r->captype, m->ntypes + 1, sizeof *m->type))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_g10_ptype *t = &m->type[m->ntypes];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->path = path;
    t->parent = parent;
    t->key = LP_STR_NONE;
    t->first_child = t->next_sibling = LP_G10_NONE;
    t->line = r->line;
    if (parent != LP_G10_NONE) {
        t->depth = m->type[parent].depth + 1;
        uint32_t *link = &m->type[parent].first_child;
        while (*link != LP_G10_NONE)
            link = &m->type[*link].next_sibling;
        *link = m->ntypes;
    }
    m->ntypes++;
    return LP_OK;
}

/* The parent of a path and its last component; 0 (reported) if the path is bad. */
static int split_path(mread *r, const tok *p, uint32_t *parent, tok *last)
{
    if (!p->n || p->p[0] != '/' || p->p[p->n - 1] == '/' || p->n < 2) {
        bad(r, "phase path '%.*s' must start with '/' and name a phase (e.g. /Job/Task)", (int)p->n, p->p);
        return 0;
    }
    for (size_t i = 1; i < p->n; i++)
        if (p->p[i] == '/' && p->p[i - 1] == '/') {
            bad(r, "phase path '%.*s' has an empty component", (int)p->n, p->p);
            return 0;
        }
    size_t k = p->n;
    while (p->p[k - 1] != '/')
        k--;
    last->p = p->p + k;
    last->n = p->n - k;
    char buf[4096];
    size_t pn = k > 1 ? k - 1 : 1;
    if (pn >= sizeof buf) {
        bad(r, "phase path too long");
        return 0;
    }
    memcpy(buf, p->p, pn);
    buf[pn] = 0;
    *parent = lp_g10_model_type(r->m, buf);
    if (*parent == LP_G10_NONE) {
        bad(r, "the parent '%s' of phase '%.*s' is not declared (declare parents first)", buf, (int)p->n, p->p);
        return 0;
    }
    return 1;
}

static lp_status st_phase(mread *r, tok *t, int nt, lp_error *err)
{
    if (nt < 2) {
        bad(r, "phase: expected a path");
        return LP_OK;
    }
    uint32_t parent;
    tok last;
    if (!split_path(r, &t[1], &parent, &last))
        return LP_OK;
    char buf[4096];
    snprintf(buf, sizeof buf, "%.*s", (int)t[1].n, t[1].p);
    if (lp_g10_model_type(r->m, buf) != LP_G10_NONE) {
        bad(r, "phase '%s' declared twice", buf);
        return LP_OK;
    }
    lp_str name, path;
    lp_status st;
    if ((st = intern(r, &last, &name, err)) || (st = intern(r, &t[1], &path, err)))
        return st;
    uint8_t rep = LP_G10_ONCE;
    lp_str key = LP_STR_NONE;
    int i = 2;
    if (i < nt && (tok_is(&t[i], "sequential") || tok_is(&t[i], "concurrent"))) {
        rep = tok_is(&t[i], "sequential") ? LP_G10_SEQUENTIAL : LP_G10_CONCURRENT;
        if (i + 1 >= nt || tok_is(&t[i + 1], "after")) {
            bad(r, "phase '%s': %.*s needs the instance key that tells instances apart", buf, (int)t[i].n, t[i].p);
            return LP_OK;
        }
        if ((st = intern(r, &t[i + 1], &key, err)))
            return st;
        i += 2;
    } else if (i < nt && tok_is(&t[i], "once")) {
        i++;
    }
    uint8_t serial = 0;
    if (i < nt && tok_is(&t[i], "serial")) {
        serial = 1;
        i++;
    }
    uint32_t self = r->m->ntypes;
    if ((st = add_type(r, name, path, parent, err)))
        return st;
    r->m->type[self].repeat = rep;
    r->m->type[self].key = key;
    r->m->type[self].serial = serial;
    if (i < nt && tok_is(&t[i], "after")) {
        if (++i == nt)
            bad(r, "phase '%s': after needs sibling names", buf);
        for (; i < nt; i++) {
            const char *p = t[i].p, *f;
            size_t n = t[i].n, fn;
            while (g10_next_field(&p, &n, ',', &f, &fn)) {
                if (!fn)
                    continue;
                tok s = {f, fn};
                g10_pending_after pa = {self, 0, r->line};
                if ((st = intern(r, &s, &pa.name, err)))
                    return st;
                if (lp_grow_at(&r->pa, &r->cappa, r->npa + 1, sizeof *r->pa))
                    return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                r->pa[r->npa++] = pa;
            }
        }
    } else if (i < nt) {
        bad(r, "phase '%s': unexpected '%.*s' (expected once, sequential KEY, concurrent KEY, serial, after NAMES)", buf,
            (int)t[i].n, t[i].p);
    }
    return LP_OK;
}

/* ---- resources, capacities, rules --------------------------------------------------- */

static lp_status res_option(mread *r, lp_g10_res *res, const tok *t, int *have_cap, int *have_sample,
                            lp_error *err)
{
    const char *eq = memchr(t->p, '=', t->n);
    if (!eq) {
        bad(r, "resource: '%.*s' is not key=value", (int)t->n, t->p);
        return LP_OK;
    }
    tok k = {t->p, (size_t)(eq - t->p)}, v = {eq + 1, t->n - k.n - 1};
    int cons = res->kind == LP_G10_CONSUMABLE;
    if (tok_is(&k, "metric") && v.n)
        return intern(r, &v, &res->metric, err);
    if (tok_is(&k, "unit") && v.n)
        return intern(r, &v, &res->unit, err);
    if (cons && tok_is(&k, "delay") && v.n)
        return intern(r, &v, &res->delay, err);
    if (cons && tok_is(&k, "sample") && (tok_is(&v, "counter") || tok_is(&v, "mean"))) {
        res->sample = tok_is(&v, "counter") ? LP_G10_COUNTER : LP_G10_MEAN;
        *have_sample = 1;
    } else if (cons && tok_is(&k, "capacity")) {
        if (!number(&v, &res->capacity, 0, NULL) || !(res->capacity > 0))
            bad(r, "resource: capacity must be a positive number, not '%.*s'", (int)v.n, v.p);
        *have_cap = 1;
    } else if (cons && tok_is(&k, "scale")) {
        if (!number(&v, &res->scale, 0, NULL) || !(res->scale > 0))
            bad(r, "resource: scale must be a positive number, not '%.*s'", (int)v.n, v.p);
    } else {
        bad(r, "resource: unknown or invalid option '%.*s' for a %s resource", (int)t->n, t->p,
            cons ? "consumable" : "blocking");
    }
    return LP_OK;
}

static lp_status st_resource(mread *r, tok *t, int nt, lp_error *err)
{
    lp_g10_model *m = r->m;
    if (nt < 3 || (!tok_is(&t[2], "consumable") && !tok_is(&t[2], "blocking"))) {
        bad(r, "resource: expected NAME consumable|blocking [options]");
        return LP_OK;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)t[1].n, t[1].p);
    if (lp_g10_model_res(m, buf) != LP_G10_NONE) {
        bad(r, "resource '%s' declared twice", buf);
        return LP_OK;
    }
    lp_g10_res res = {0, tok_is(&t[2], "consumable") ? LP_G10_CONSUMABLE : LP_G10_BLOCKING, 0, 0, 1, 0, LP_STR_NONE,
                      r->line, LP_STR_NONE};
    lp_status st;
    if ((st = intern(r, &t[1], &res.name, err)))
        return st;
    res.metric = res.name;
    int have_cap = 0, have_sample = 0;
    for (int i = 3; i < nt; i++)
        if ((st = res_option(r, &res, &t[i], &have_cap, &have_sample, err)))
            return st;
    if (res.kind == LP_G10_CONSUMABLE && (!have_cap || !have_sample))
        bad(r, "consumable resource '%s' needs %s", buf,
            !have_cap ? "capacity=K (per host)" : "sample=counter|mean (what its monitored values are)");
    if (lp_grow_at(&m->res, &r->capres, m->nres + 1, sizeof *m->res))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    m->res[m->nres++] = res;
    return LP_OK;
}

static lp_status st_capacity(mread *r, tok *t, int nt, lp_error *err)
{
    lp_g10_model *m = r->m;
    lp_g10_cap c = {0, 0, 0, r->line};
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", nt > 1 ? (int)t[1].n : 0, nt > 1 ? t[1].p : "");
    if (nt != 4) {
        bad(r, "capacity: expected RESOURCE HOST VALUE");
        return LP_OK;
    }
    c.res = lp_g10_model_res(m, buf);
    if (c.res == LP_G10_NONE || m->res[c.res].kind != LP_G10_CONSUMABLE) {
        bad(r, "capacity: '%s' is not a consumable resource declared above", buf);
        return LP_OK;
    }
    if (!number(&t[3], &c.capacity, 0, NULL) || !(c.capacity > 0)) {
        bad(r, "capacity: '%.*s' is not a positive number", (int)t[3].n, t[3].p);
        return LP_OK;
    }
    lp_status st = intern(r, &t[2], &c.host, err);
    if (st)
        return st;
    if (lp_grow_at(&m->cap, &r->capcap, m->ncap + 1, sizeof *m->cap))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    m->cap[m->ncap++] = c;
    return LP_OK;
}

/* A rule's kind and value from tokens t[0..nt); 0 if reported bad. */
static int rule_kind(mread *r, const tok *t, int nt, int consumable, uint8_t *kind, double *val, uint8_t *pct)
{
    *val = 0;
    *pct = 0;
    if (nt >= 1 && tok_is(&t[0], "none") && nt == 1) {
        *kind = LP_G10_RULE_NONE;
        return 1;
    }
    if (!consumable) {
        if (nt == 1 && tok_is(&t[0], "full")) {
            *kind = LP_G10_RULE_FULL;
            return 1;
        }
        bad(r, "a blocking resource's rule is none or full");
        return 0;
    }
    int p = 0;
    if (nt >= 1 && tok_is(&t[0], "variable") && nt <= 2) {
        *kind = LP_G10_RULE_VARIABLE;
        *val = 1;
        if (nt == 2 && !number(&t[1], val, 0, NULL)) {
            bad(r, "variable: weight '%.*s' is not a non-negative number", (int)t[1].n, t[1].p);
            return 0;
        }
        return 1;
    }
    if (nt == 2 && tok_is(&t[0], "exact")) {
        *kind = LP_G10_RULE_EXACT;
        if (!number(&t[1], val, 1, &p)) {
            bad(r, "exact: demand '%.*s' is not a non-negative number (or percentage)", (int)t[1].n, t[1].p);
            return 0;
        }
        *pct = (uint8_t)p;
        return 1;
    }
    bad(r, "a consumable resource's rule is none, exact DEMAND[%%] or variable [WEIGHT]");
    return 0;
}

static lp_status st_rule(mread *r, tok *t, int nt, lp_error *err)
{
    lp_g10_model *m = r->m;
    if (nt < 4) {
        bad(r, "rule: expected PATTERN RESOURCE none|exact D|variable W|full");
        return LP_OK;
    }
    if (!t[1].n || t[1].p[0] != '/') {
        bad(r, "rule: the pattern '%.*s' must start with '/'", (int)t[1].n, t[1].p);
        return LP_OK;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)t[2].n, t[2].p);
    lp_g10_rule ru = {0, lp_g10_model_res(m, buf), 0, 0, 0, r->line, 0};
    if (ru.res == LP_G10_NONE) {
        bad(r, "rule: unknown resource '%s' (declare it with `resource` above)", buf);
        return LP_OK;
    }
    if (!rule_kind(r, t + 3, nt - 3, m->res[ru.res].kind == LP_G10_CONSUMABLE, &ru.kind, &ru.value, &ru.percent))
        return LP_OK;
    lp_status st = intern(r, &t[1], &ru.pattern, err);
    if (st)
        return st;
    if (lp_grow_at(&m->rule, &r->caprule, m->nrules + 1, sizeof *m->rule))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    m->rule[m->nrules++] = ru;
    return LP_OK;
}

/* ---- settings ------------------------------------------------------------------------- */

static lp_status st_setting(mread *r, tok *t, int nt, lp_error *err)
{
    lp_g10_model *m = r->m;
    double v;
    int pct;
    if (nt == 3 && tok_is(&t[0], "default")) {
        uint8_t kind, p;
        int cons = tok_is(&t[1], "consumable");
        if (!cons && !tok_is(&t[1], "blocking")) {
            bad(r, "default: expected consumable or blocking");
            return LP_OK;
        }
        if (rule_kind(r, t + 2, nt - 2, cons, &kind, &v, &p)) {
            if (cons)
                m->def_consumable = kind, m->def_consumable_val = v;
            else
                m->def_blocking = kind;
        }
    } else if (nt == 4 && tok_is(&t[0], "default") && tok_is(&t[1], "consumable")) {
        uint8_t kind, p;
        if (rule_kind(r, t + 2, 2, 1, &kind, &v, &p)) {
            if (p)
                bad(r, "default: an exact default must be absolute, not a percentage");
            m->def_consumable = kind, m->def_consumable_val = v;
        }
    } else if (nt == 2 && tok_is(&t[0], "slice")) {
        if (!lp_g10_parse_duration(t[1].p, t[1].n, &m->slice_ns) || m->slice_ns <= 0)
            bad(r, "slice: '%.*s' is not a positive duration (e.g. 10ms)", (int)t[1].n, t[1].p);
    } else if (nt == 2 && tok_is(&t[0], "bottleneck")) {
        if (!number(&t[1], &v, 1, &pct) || v <= 0 || v > 1)
            bad(r, "bottleneck: '%.*s' is not a share of capacity in (0, 1] (e.g. 0.95 or 95%%)", (int)t[1].n, t[1].p);
        else
            m->bottleneck = v;
    } else if (nt == 2 && tok_is(&t[0], "issue-threshold")) {
        if (!number(&t[1], &v, 1, &pct) || v >= 1)
            bad(r, "issue-threshold: '%.*s' is not a share of the makespan in [0, 1)", (int)t[1].n, t[1].p);
        else
            m->issue_min = v;
    } else if (nt == 2 && tok_is(&t[0], "gap-factor")) {
        if (!number(&t[1], &v, 0, NULL) || v <= 1)
            bad(r, "gap-factor: '%.*s' is not a number above 1", (int)t[1].n, t[1].p);
        else
            m->gap_factor = v;
    } else if (nt == 2 && tok_is(&t[0], "host-key")) {
        return intern(r, &t[1], &m->host_key, err);
    } else if (nt == 2 && tok_is(&t[0], "trace-phase") && (tok_is(&t[1], "operator") || tok_is(&t[1], "type"))) {
        m->trace_phase = tok_is(&t[1], "operator") ? LP_G10_BY_OPERATOR : LP_G10_BY_TYPE;
    } else {
        bad(r, "unknown statement or wrong number of arguments: '%.*s'", (int)t[0].n, t[0].p);
    }
    return LP_OK;
}

static lp_status statement(mread *r, tok *t, int nt, lp_error *err)
{
    if (!r->header) {
        if (nt == 2 && tok_is(&t[0], "grade10-model")) {
            r->header = 1;
            if (!tok_is(&t[1], "1"))
                return lp_error_set(err, LP_ERR_UNSUPPORTED, "%s:%llu: grade10-model version %.*s (this build reads 1)",
                                    r->fname, (unsigned long long)r->line, (int)t[1].n, t[1].p);
            return LP_OK;
        }
        return lp_error_set(err, LP_ERR_FORMAT, "%s:%llu: not a Grade10 model (the first line must be `grade10-model 1`)",
                            r->fname, (unsigned long long)r->line);
    }
    if (tok_is(&t[0], "phase"))
        return st_phase(r, t, nt, err);
    if (tok_is(&t[0], "resource"))
        return st_resource(r, t, nt, err);
    if (tok_is(&t[0], "capacity"))
        return st_capacity(r, t, nt, err);
    if (tok_is(&t[0], "rule"))
        return st_rule(r, t, nt, err);
    return st_setting(r, t, nt, err);
}

/* Split a line into blank-separated tokens, stopping at '#'. */
static int tokens(const char *p, size_t n, tok *t)
{
    int k = 0;
    size_t i = 0;
    while (i < n && k < MAXTOK) {
        while (i < n && (p[i] == ' ' || p[i] == '\t'))
            i++;
        if (i == n || p[i] == '#')
            break;
        size_t s = i;
        while (i < n && p[i] != ' ' && p[i] != '\t')
            i++;
        t[k].p = p + s;
        t[k].n = i - s;
        k++;
    }
    return k;
}

static lp_status model_new(lp_g10_model **out, const char *name, lp_error *err)
{
    lp_g10_model *m = lp_calloc(1, sizeof *m);
    if (!m || lp_strtab_init(&m->strs)) {
        lp_free(m);
        *out = NULL;
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    *out = m;
    m->def_consumable = LP_G10_RULE_VARIABLE;
    m->def_consumable_val = 1;
    m->def_blocking = LP_G10_RULE_NONE;
    m->slice_ns = 10000000;
    m->bottleneck = 0.95;
    m->issue_min = 0.01;
    m->gap_factor = 10;
    m->trace_phase = LP_G10_BY_OPERATOR;
    lp_str root, empty = LP_STR_EMPTY;
    if (lp_strtab_intern(&m->strs, name, strlen(name), &m->file) || lp_strtab_intern(&m->strs, "/", 1, &root) ||
        lp_strtab_intern(&m->strs, "host", 4, &m->host_key))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    size_t cap = 0;
    if (lp_grow_at(&m->type, &cap, 1, sizeof *m->type))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_g10_ptype *t = &m->type[0];
    memset(t, 0, sizeof *t);
    t->name = empty;
    t->path = root;
    t->parent = t->first_child = t->next_sibling = LP_G10_NONE;
    t->key = LP_STR_NONE;
    m->ntypes = 1;
    return LP_OK;
}

lp_status lp_g10_model_read(lp_g10_model **out, lp_input *in, lp_diags *ds, lp_error *err)
{
    *out = NULL;
    lp_g10_model *m = NULL;
    const char *fname = lp_input_name(in);
    lp_status st = model_new(&m, fname, err);
    if (st) {
        lp_g10_model_free(m);
        return st;
    }
    mread r = {.m = m, .ds = ds, .fname = fname, .captype = 1};
    lp_lines L;
    lp_lines_init(&L, in, G10_LINE_MAX, 0);
    const char *p;
    size_t n;
    while ((st = lp_lines_next(&L, &p, &n, NULL, err)) == LP_OK) {
        tok t[MAXTOK];
        r.line = L.line;
        int nt = tokens(p, n, t);
        if (nt == MAXTOK) {
            bad(&r, "more than %d words on a line", MAXTOK - 1);
            continue;
        }
        if (nt && (st = statement(&r, t, nt, err)))
            break;
    }
    lp_lines_release(&L);
    if (st == LP_END && !r.header)
        st = lp_error_set(err, LP_ERR_FORMAT, "%s: empty: not a Grade10 model", fname);
    else if (st == LP_END)
        st = g10_model_finish(m, ds, r.pa, r.npa, &r.errors, err);
    lp_free(r.pa);
    if (!st && r.errors)
        st = lp_error_set(err, LP_ERR_DATA, "%s: %d error%s in the model", fname, r.errors, r.errors > 1 ? "s" : "");
    if (st) {
        lp_g10_model_free(m);
        return st;
    }
    *out = m;
    return LP_OK;
}

lp_status lp_g10_model_parse(lp_g10_model **out, const char *text, size_t n, const char *name, lp_diags *ds,
                             lp_error *err)
{
    lp_input *in;
    lp_status st = lp_input_open_mem(&in, text, n, name, err);
    if (st)
        return st;
    st = lp_g10_model_read(out, in, ds, err);
    lp_input_close(in);
    return st;
}
