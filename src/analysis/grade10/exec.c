/* exec.c: the two ways to an lp_g10_exec (exec.h) — Grade10 OperationLog events and
 * the activities of any trace — and the exec's small accessors. Both feed the same
 * builder (exec_build.c); strings are translated once per distinct id into the exec's
 * own string table.
 */
#include "analysis/grade10/g10_int.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <string.h>

#define MAXKV 128

void lp_g10_exec_free(lp_g10_exec *x)
{
    if (!x)
        return;
    lp_strtab_release(&x->strs);
    lp_free(x->type);
    lp_free(x->parent);
    lp_free(x->size);
    lp_free(x->start);
    lp_free(x->end);
    lp_free(x->key);
    lp_free(x->host);
    lp_free(x->derived);
    lp_free(x->src);
    lp_free(x->hosts);
    lp_free(x->keyname);
    lp_free(x);
}

const char *lp_g10_exec_name(const lp_g10_exec *x, uint32_t i, char *buf, size_t n)
{
    uint32_t path[64], np = 0;
    for (uint32_t a = i; a && np < 64; a = x->parent[a])
        path[np++] = a;
    size_t k = 0;
    if (n)
        buf[0] = 0;
    if (!np)
        snprintf(buf, n, "/");
    while (np-- && k < n) {
        uint32_t a = path[np];
        const char *nm = lp_g10_model_str(x->m, x->m->type[x->type[a]].name);
        if (x->key[a] != LP_STR_NONE)
            k += (size_t)snprintf(buf + k, n - k, "/%s[%s]", nm, lp_strtab_get(&x->strs, x->key[a]));
        else
            k += (size_t)snprintf(buf + k, n - k, "/%s", nm);
    }
    return buf;
}

int lp_g10_exec_has_key(const lp_g10_exec *x, uint32_t i, lp_str key, lp_str val)
{
    const char *hk = lp_g10_model_str(x->m, x->m->host_key);
    lp_str hks = lp_strtab_find(&x->strs, hk, strlen(hk));
    if (key == hks)
        return x->host[i] != LP_G10_NONE && x->hosts[x->host[i]] == val;
    for (uint32_t a = i; a != LP_G10_NONE; a = x->parent[a])
        if (x->keyname[x->type[a]] == key && x->key[a] == val)
            return 1;
    return 0;
}

/* A translation cache from another string table's ids to the exec's. */
typedef struct xlat {
    const lp_strtab *from;
    lp_strtab *to;
    uint32_t *map; /* id + 1, 0 = not yet */
} xlat;

static lp_status xl(xlat *c, lp_str s, lp_str *out, lp_error *err)
{
    if (c->map[s]) {
        *out = c->map[s] - 1;
        return LP_OK;
    }
    if (lp_strtab_intern(c->to, lp_strtab_get(c->from, s), lp_strtab_len(c->from, s), out))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    c->map[s] = *out + 1;
    return LP_OK;
}

static lp_status event(g10_xb *b, xlat *c, const lp_g10_data *d, const lp_g10_event *e, lp_error *err)
{
    lp_str kv[2 * MAXKV];
    uint32_t nkv = e->tags ? d->pool[e->tags] : 0;
    if (nkv > MAXKV)
        nkv = MAXKV;
    lp_status st = LP_OK;
    for (uint32_t k = 0; k < 2 * nkv && !st; k++)
        st = xl(c, d->pool[e->tags + 1 + k], &kv[k], err);
    if (st)
        return st;
    if (e->phase == LP_STR_NONE)
        return g10_xb_alias(b, kv, nkv, err);
    lp_str name, file;
    if ((st = xl(c, e->phase, &name, err)) || (st = xl(c, e->file, &file, err)))
        return st;
    int what = e->kind == LP_G10_EV_START ? XB_START : e->kind == LP_G10_EV_END ? XB_END : XB_START | XB_END;
    return g10_xb_add(b, name, kv, nkv, what, e->time, e->time, file, e->line, 0, err);
}

lp_status lp_g10_exec_from_events(const lp_g10_model *m, const lp_g10_data *d, lp_diags *ds, lp_g10_exec **out,
                                  lp_error *err)
{
    *out = NULL;
    g10_xb b;
    xlat c = {&d->strs, NULL, lp_calloc((size_t)d->strs.n + 1, sizeof *c.map)};
    lp_status st = g10_xb_init(&b, m, ds, err);
    if (!st && !c.map)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (!st) {
        c.to = &b.x->strs;
        /* aliases first: a host mapping may come after the phases it names */
        for (size_t i = 0; i < d->nev && !st; i++)
            if (d->ev[i].phase == LP_STR_NONE)
                st = event(&b, &c, d, &d->ev[i], err);
        for (size_t i = 0; i < d->nev && !st; i++)
            if (d->ev[i].phase != LP_STR_NONE)
                st = event(&b, &c, d, &d->ev[i], err);
    }
    if (!st)
        st = g10_xb_finish(&b, out, err);
    lp_free(c.map);
    g10_xb_release(&b);
    return st;
}

/* The pseudo-keys every activity carries (exec strings). */
typedef struct pkeys {
    lp_str worker, op, type, activity;
} pkeys;

/* One activity's keys: its attributes, its worker's, then worker=<name>,
 * operator=<operator>, type=<type>, activity=<index> (the first occurrence of a key wins). */
static lp_status activity_keys(xlat *c, const lp_trace *t, uint32_t w, uint64_t a, const pkeys *pk, lp_str *kv,
                               uint32_t *nkv, lp_error *err)
{
    uint32_t k = 0;
    lp_status st = LP_OK;
    uint32_t lists[2] = {t->aattr[a], t->wattr ? t->wattr[w] : 0};
    for (int l = 0; l < 2 && !st; l++) {
        const uint32_t *p = t->apool + lists[l];
        uint32_t np = lists[l] ? p[0] : 0;
        for (uint32_t i = 0; i < np && k < MAXKV - 4 && !st; i++, k++)
            if (!(st = xl(c, p[1 + 2 * i], &kv[2 * k], err)))
                st = xl(c, p[2 + 2 * i], &kv[2 * k + 1], err);
    }
    if (!st) {
        kv[2 * k] = pk->worker;
        st = xl(c, t->wname[w], &kv[2 * k + 1], err);
        k++;
    }
    if (!st && t->aop[a] != LP_STR_NONE) {
        kv[2 * k] = pk->op;
        st = xl(c, t->aop[a], &kv[2 * k + 1], err);
        k++;
    }
    if (!st) {
        kv[2 * k] = pk->type;
        st = xl(c, t->type_name[t->atype[a]], &kv[2 * k + 1], err);
        k++;
    }
    if (!st) {
        char num[24];
        snprintf(num, sizeof num, "%llu", (unsigned long long)a);
        kv[2 * k] = pk->activity;
        if (lp_strtab_intern(c->to, num, strlen(num), &kv[2 * k + 1]))
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        k++;
    }
    *nkv = k;
    return st;
}

lp_status lp_g10_exec_from_trace(const lp_g10_model *m, const lp_trace *t, lp_diags *ds, lp_g10_exec **out,
                                 lp_error *err)
{
    *out = NULL;
    g10_xb b;
    xlat c = {&t->strs, NULL, lp_calloc((size_t)t->strs.n + 1, sizeof *c.map)};
    lp_status st = g10_xb_init(&b, m, ds, err);
    lp_str file = 0;
    pkeys pk = {0, 0, 0, 0};
    if (!st && !c.map)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (!st) {
        c.to = &b.x->strs;
        if (lp_strtab_intern(c.to, "worker", 6, &pk.worker) || lp_strtab_intern(c.to, "operator", 8, &pk.op) ||
            lp_strtab_intern(c.to, "type", 4, &pk.type) || lp_strtab_intern(c.to, "activity", 8, &pk.activity) ||
            lp_strtab_intern(c.to, "<trace>", 7, &file))
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    lp_str kv[2 * MAXKV];
    for (uint32_t w = 0; w < t->nworkers && !st; w++)
        for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1] && !st; a++) {
            if (t->aflags[a] & LP_ACT_GAP)
                continue;
            uint32_t nkv;
            lp_str name, tyname;
            if ((st = activity_keys(&c, t, w, a, &pk, kv, &nkv, err)) ||
                (st = xl(&c, t->type_name[t->atype[a]], &tyname, err)))
                break;
            name = tyname;
            if (m->trace_phase == LP_G10_BY_OPERATOR && t->aop[a] != LP_STR_NONE) {
                if ((st = xl(&c, t->aop[a], &name, err)))
                    break;
                int known;
                if ((st = g10_xb_known(&b, name, &known, err)))
                    break;
                if (!known)
                    name = tyname;
            }
            st = g10_xb_add(&b, name, kv, nkv, XB_START | XB_END, t->astart[a], t->aend[a], file, a + 1, 1, err);
        }
    if (!st)
        st = g10_xb_finish(&b, out, err);
    if (!st && b.x == NULL && (*out)->ignored)
        lp_diags_report(ds, LP_SEV_NOTE, LP_RULE_IMPORT, "<trace>", 0,
                        "%llu activities resolve to no phase type of the model (an unknown name, or a key their type needs is missing) and were left out",
                        (unsigned long long)(*out)->ignored);
    lp_free(c.map);
    g10_xb_release(&b);
    return st;
}
