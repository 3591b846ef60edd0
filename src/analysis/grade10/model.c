/* model.c: a Grade10 model after reading (model.h): `after` names resolved to sibling
 * types, cycles among siblings found (Kahn's algorithm per parent: what remains
 * unsorted lies on or after a cycle), each parent's children put in a topological
 * order, and the rule for every (phase type, resource) decided: the first `rule` line
 * whose resource matches and whose pattern matches the type's path, else the
 * default. Also the lookups and the path-pattern matcher.
 */
#include "longpole/analysis/grade10/model.h"
#include "analysis/grade10/g10_int.h"
#include "longpole/base/alloc.h"

#include <fnmatch.h>
#include <string.h>

#define MAXCOMP 128

void lp_g10_model_free(lp_g10_model *m)
{
    if (!m)
        return;
    lp_strtab_release(&m->strs);
    lp_free(m->type);
    lp_free(m->after);
    lp_free(m->sib_order);
    lp_free(m->sib_first);
    lp_free(m->res);
    lp_free(m->cap);
    lp_free(m->rule);
    lp_free(m->rkind);
    lp_free(m->rval);
    lp_free(m->rpct);
    lp_free(m->rline);
    lp_free(m);
}

uint32_t lp_g10_model_type(const lp_g10_model *m, const char *path)
{
    lp_str s = lp_strtab_find(&m->strs, path, strlen(path));
    if (s == LP_STR_NONE)
        return LP_G10_NONE;
    for (uint32_t t = 0; t < m->ntypes; t++)
        if (m->type[t].path == s)
            return t;
    return LP_G10_NONE;
}

uint32_t lp_g10_model_res(const lp_g10_model *m, const char *name)
{
    lp_str s = lp_strtab_find(&m->strs, name, strlen(name));
    if (s == LP_STR_NONE)
        return LP_G10_NONE;
    for (uint32_t r = 0; r < m->nres; r++)
        if (m->res[r].name == s)
            return r;
    return LP_G10_NONE;
}

double lp_g10_model_capacity(const lp_g10_model *m, uint32_t r, const char *host)
{
    if (host) {
        lp_str h = lp_strtab_find(&m->strs, host, strlen(host));
        for (uint32_t i = 0; h != LP_STR_NONE && i < m->ncap; i++)
            if (m->cap[i].res == r && m->cap[i].host == h)
                return m->cap[i].capacity;
    }
    return m->res[r].capacity;
}

/* Components of a '/'-separated path into NUL-terminated copies in buf; count, or -1. */
static int components(const char *path, char *buf, size_t cap, const char **comp)
{
    int k = 0;
    size_t used = 0;
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (k == MAXCOMP || used + n + 1 > cap)
            return -1;
        memcpy(buf + used, p, n);
        buf[used + n] = 0;
        comp[k++] = buf + used;
        used += n + 1;
        p += n;
    }
    return k;
}

int lp_g10_path_match(const char *pattern, const char *path)
{
    char pb[4096], qb[4096];
    const char *pc[MAXCOMP], *qc[MAXCOMP];
    int np = components(pattern, pb, sizeof pb, pc), nq = components(path, qb, sizeof qb, qc);
    if (np < 0 || nq < 0)
        return 0;
    /* dp[j]: pattern[0, i) matches path[0, j); rows i = 0..np, O(np * nq) */
    unsigned char dp[MAXCOMP + 1], nx[MAXCOMP + 1];
    memset(dp, 0, sizeof dp);
    dp[0] = 1;
    for (int i = 0; i < np; i++) {
        int star = strcmp(pc[i], "**") == 0;
        memset(nx, 0, sizeof nx);
        for (int j = 0; j <= nq; j++) {
            if (star)
                nx[j] = dp[j] || (j && nx[j - 1]);
            else if (j)
                nx[j] = dp[j - 1] && fnmatch(pc[i], qc[j - 1], 0) == 0;
        }
        memcpy(dp, nx, sizeof dp);
    }
    return dp[nq];
}

/* Resolve pending `after` names to sibling types. */
static lp_status resolve_after(lp_g10_model *m, lp_diags *ds, const g10_pending_after *pa, size_t npa, int *errors,
                               lp_error *err)
{
    const char *fname = lp_strtab_get(&m->strs, m->file);
    size_t cap = 0;
    for (size_t i = 0; i < npa; i++) {
        uint32_t t = pa[i].type, parent = m->type[t].parent, sib = LP_G10_NONE;
        for (uint32_t c = m->type[parent].first_child; c != LP_G10_NONE; c = m->type[c].next_sibling)
            if (m->type[c].name == pa[i].name)
                sib = c;
        if (sib == LP_G10_NONE || sib == t) {
            if (sib == t)
                lp_diags_report(ds, LP_SEV_ERROR, LP_RULE_MODEL, fname, pa[i].line, "phase '%s' cannot run after itself",
                                lp_strtab_get(&m->strs, m->type[t].path));
            else
                lp_diags_report(ds, LP_SEV_ERROR, LP_RULE_MODEL, fname, pa[i].line,
                                "phase '%s': no sibling named '%s' to run after",
                                lp_strtab_get(&m->strs, m->type[t].path), lp_strtab_get(&m->strs, pa[i].name));
            ++*errors;
            continue;
        }
        if (lp_grow_at(&m->after, &cap, m->nafter + 1, sizeof *m->after))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        m->after[m->nafter++] = (lp_g10_after){sib, t, pa[i].line};
    }
    return LP_OK;
}

/* Children of every parent in a topological order of the `after` edges (Kahn); a
 * sibling group with a cycle is reported with the line of an edge on it. */
static lp_status sibling_order(lp_g10_model *m, lp_diags *ds, int *errors, lp_error *err)
{
    uint32_t nt = m->ntypes;
    m->sib_order = lp_calloc(nt, sizeof *m->sib_order);
    m->sib_first = lp_calloc(nt, sizeof *m->sib_first);
    uint32_t *indeg = lp_calloc(nt, sizeof *indeg);
    if (!m->sib_order || !m->sib_first || !indeg) {
        lp_free(indeg);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    for (uint32_t a = 0; a < m->nafter; a++)
        indeg[m->after[a].after]++;
    uint32_t pos = 0;
    for (uint32_t p = 0; p < nt; p++) {
        m->sib_first[p] = pos;
        uint32_t start = pos, nkids = 0;
        for (uint32_t c = m->type[p].first_child; c != LP_G10_NONE; c = m->type[c].next_sibling) {
            nkids++;
            if (!indeg[c])
                m->sib_order[pos++] = c;
        }
        for (uint32_t q = start; q < pos; q++)
            for (uint32_t a = 0; a < m->nafter; a++)
                if (m->after[a].before == m->sib_order[q] && --indeg[m->after[a].after] == 0)
                    m->sib_order[pos++] = m->after[a].after;
        if (pos - start == nkids)
            continue;
        for (uint32_t a = 0; a < m->nafter; a++)
            if (m->type[m->after[a].after].parent == p && indeg[m->after[a].after] &&
                indeg[m->after[a].before]) {
                lp_diags_report(ds, LP_SEV_ERROR, LP_RULE_MODEL, lp_strtab_get(&m->strs, m->file), m->after[a].line,
                                "the `after` edges among the children of '%s' form a cycle (through '%s' after '%s')",
                                lp_strtab_get(&m->strs, m->type[p].path),
                                lp_strtab_get(&m->strs, m->type[m->after[a].after].name),
                                lp_strtab_get(&m->strs, m->type[m->after[a].before].name));
                ++*errors;
                break;
            }
        for (uint32_t c = m->type[p].first_child; c != LP_G10_NONE; c = m->type[c].next_sibling)
            if (indeg[c])
                m->sib_order[pos++] = c, indeg[c] = 0;
    }
    lp_free(indeg);
    return LP_OK;
}

/* The rule of every (type, resource). */
static lp_status resolve_rules(lp_g10_model *m, lp_diags *ds, lp_error *err)
{
    size_t n = (size_t)m->ntypes * (m->nres ? m->nres : 1);
    m->rkind = lp_calloc(n, 1);
    m->rval = lp_calloc(n, sizeof *m->rval);
    m->rpct = lp_calloc(n, 1);
    m->rline = lp_calloc(n, sizeof *m->rline);
    if (!m->rkind || !m->rval || !m->rpct || !m->rline)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint32_t t = 0; t < m->ntypes; t++) {
        const char *path = lp_strtab_get(&m->strs, m->type[t].path);
        for (uint32_t r = 0; r < m->nres; r++) {
            size_t i = (size_t)t * m->nres + r;
            int cons = m->res[r].kind == LP_G10_CONSUMABLE;
            m->rkind[i] = cons ? m->def_consumable : m->def_blocking;
            m->rval[i] = cons ? m->def_consumable_val : 0;
            m->rline[i] = LP_G10_NONE;
            for (uint32_t k = 0; k < m->nrules; k++) {
                lp_g10_rule *ru = &m->rule[k];
                if (ru->res != r || !lp_g10_path_match(lp_strtab_get(&m->strs, ru->pattern), path))
                    continue;
                m->rkind[i] = ru->kind;
                m->rval[i] = ru->value;
                m->rpct[i] = ru->percent;
                m->rline[i] = k;
                ru->used++;
                break;
            }
        }
    }
    for (uint32_t k = 0; k < m->nrules; k++)
        if (!m->rule[k].used)
            lp_diags_report(ds, LP_SEV_WARNING, LP_RULE_MODEL, lp_strtab_get(&m->strs, m->file), m->rule[k].line,
                            "rule '%s' decides no phase type (no path matches, or an earlier rule matched first)",
                            lp_strtab_get(&m->strs, m->rule[k].pattern));
    return LP_OK;
}

lp_status g10_model_finish(lp_g10_model *m, lp_diags *ds, const g10_pending_after *pa, size_t npa, int *errors,
                           lp_error *err)
{
    lp_status st = resolve_after(m, ds, pa, npa, errors, err);
    if (!st)
        st = sibling_order(m, ds, errors, err);
    if (!st)
        st = resolve_rules(m, ds, err);
    return st;
}
