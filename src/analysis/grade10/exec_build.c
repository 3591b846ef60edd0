/* exec_build.c: phase records to phase instances (exec.h), the part shared by the
 * OperationLog and the trace inputs: resolving a record's phase name to a model type
 * (the one type with that name whose repetition keys the record carries, or an exact
 * path), walking down from the root to its instance (creating ancestors on the way,
 * identified by (parent, type, key value)), and setting its start or end. Duplicate
 * bounds, unknown names and ambiguous names are reported with the record's file and
 * line and the record is dropped. exec_finish.c turns the result into an lp_g10_exec.
 */
#include "analysis/grade10/g10_int.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <string.h>

#define MAXDEPTH 64

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static lp_status grow(g10_xb *b, lp_error *err)
{
    if (b->n < b->cap)
        return LP_OK;
    size_t c = b->cap ? b->cap * 2 : 1024;
#define G(a) do { void *q_ = lp_reallocarray(b->a, c, sizeof *b->a); if (!q_) return nomem(err); b->a = q_; } while (0)
    G(type); G(parent); G(key); G(start); G(end); G(has); G(sfile); G(efile); G(sline); G(eline); G(ownhost);
#undef G
    b->cap = c;
    return LP_OK;
}

static lp_status new_inst(g10_xb *b, uint32_t parent, uint32_t type, lp_str key, uint32_t *out, lp_error *err)
{
    lp_status st = grow(b, err);
    if (st)
        return st;
    if (b->n == UINT32_MAX - 1)
        return lp_error_set(err, LP_ERR_LIMIT, "more than 2^32 phase instances");
    uint32_t i = b->n++;
    b->type[i] = type;
    b->parent[i] = parent;
    b->key[i] = key;
    b->start[i] = b->end[i] = 0;
    b->has[i] = 0;
    b->sfile[i] = b->efile[i] = 0;
    b->sline[i] = b->eline[i] = 0;
    b->ownhost[i] = LP_STR_NONE;
    *out = i;
    return LP_OK;
}

lp_status g10_xb_init(g10_xb *b, const lp_g10_model *m, lp_diags *ds, lp_error *err)
{
    memset(b, 0, sizeof *b);
    b->m = m;
    b->ds = ds;
    lp_g10_exec *x = lp_calloc(1, sizeof *x);
    if (!x)
        return nomem(err);
    b->x = x;
    x->m = m;
    if (lp_strtab_init(&x->strs) || !(x->keyname = lp_calloc(m->ntypes, sizeof *x->keyname)))
        return nomem(err);
    for (uint32_t t = 0; t < m->ntypes; t++) {
        x->keyname[t] = LP_STR_NONE;
        if (m->type[t].key != LP_STR_NONE) {
            const char *k = lp_g10_model_str(m, m->type[t].key);
            if (lp_strtab_intern(&x->strs, k, strlen(k), &x->keyname[t]))
                return nomem(err);
        }
    }
    const char *hk = lp_g10_model_str(m, m->host_key);
    if (lp_strtab_intern(&x->strs, hk, strlen(hk), &b->host_key) ||
        lp_strtab_intern(&x->strs, "hostname", 8, &b->hostname_key))
        return nomem(err);
    uint32_t root;
    return new_inst(b, LP_G10_NONE, 0, LP_STR_NONE, &root, err);
}

void g10_xb_release(g10_xb *b)
{
    lp_free(b->type);
    lp_free(b->parent);
    lp_free(b->key);
    lp_free(b->start);
    lp_free(b->end);
    lp_free(b->has);
    lp_free(b->sfile);
    lp_free(b->efile);
    lp_free(b->sline);
    lp_free(b->eline);
    lp_free(b->ownhost);
    lp_hmap_release(&b->map);
    lp_hmap_release(&b->names);
    lp_hmap_release(&b->alias);
    lp_free(b->cand);
    lp_g10_exec_free(b->x);
    memset(b, 0, sizeof *b);
}

static lp_str kv_get(const lp_str *kv, uint32_t nkv, lp_str key)
{
    for (uint32_t i = 0; i < nkv; i++)
        if (kv[2 * i] == key)
            return kv[2 * i + 1];
    return LP_STR_NONE;
}

/* The candidate types of a phase name: offset of (count, types...) in b->cand. */
static lp_status candidates(g10_xb *b, lp_str name, size_t *off, lp_error *err)
{
    uint64_t v;
    if (lp_hmap_get(&b->names, name, &v)) {
        *off = (size_t)v - 1;
        return LP_OK;
    }
    const lp_g10_model *m = b->m;
    const char *s = lp_strtab_get(&b->x->strs, name);
    size_t o = b->ncand, k = 0;
    if (lp_grow_at(&b->cand, &b->capcand, b->ncand + 1 + m->ntypes, sizeof *b->cand))
        return nomem(err);
    if (s[0] == '/') {
        uint32_t t = lp_g10_model_type(m, s);
        if (t != LP_G10_NONE)
            b->cand[o + 1 + k++] = t;
    } else {
        for (uint32_t t = 1; t < m->ntypes; t++)
            if (strcmp(lp_g10_model_str(m, m->type[t].name), s) == 0)
                b->cand[o + 1 + k++] = t;
    }
    b->cand[o] = (uint32_t)k;
    b->ncand = o + 1 + k;
    *off = o;
    return lp_hmap_put(&b->names, name, o + 1, err);
}

lp_status g10_xb_known(g10_xb *b, lp_str name, int *known, lp_error *err)
{
    size_t off;
    lp_status st = candidates(b, name, &off, err);
    *known = !st && b->cand[off] > 0;
    return st;
}

/* Does the record carry every repetition key on the path of type t? */
static int keys_present(const g10_xb *b, uint32_t t, const lp_str *kv, uint32_t nkv)
{
    for (; t; t = b->m->type[t].parent)
        if (b->m->type[t].repeat != LP_G10_ONCE && kv_get(kv, nkv, b->x->keyname[t]) == LP_STR_NONE)
            return 0;
    return 1;
}

/* Resolve a record's type; LP_G10_NONE (reported unless quiet and unknown) if none or several. */
static lp_status resolve(g10_xb *b, lp_str name, const lp_str *kv, uint32_t nkv, lp_str file, uint64_t line,
                         int quiet_unknown, uint32_t *type, lp_error *err)
{
    size_t off;
    lp_status st = candidates(b, name, &off, err);
    if (st)
        return st;
    uint32_t nc = b->cand[off], found = LP_G10_NONE, nfound = 0;
    for (uint32_t i = 0; i < nc; i++)
        if (keys_present(b, b->cand[off + 1 + i], kv, nkv))
            found = b->cand[off + 1 + i], nfound++;
    *type = nfound == 1 ? found : LP_G10_NONE;
    if (nfound == 1 || quiet_unknown)
        return LP_OK;
    const char *fn = lp_strtab_get(&b->x->strs, file), *s = lp_strtab_get(&b->x->strs, name);
    if (!nc)
        lp_diags_report(b->ds, LP_SEV_ERROR, LP_RULE_IMPORT, fn, line, "unknown phase '%s': no phase type of the model has this name", s);
    else if (!nfound)
        lp_diags_report(b->ds, LP_SEV_ERROR, LP_RULE_IMPORT, fn, line,
                        "phase '%s' lacks an instance key its type needs (e.g. %s=...)", s,
                        lp_g10_model_str(b->m, b->m->type[b->cand[off + 1]].key != LP_STR_NONE
                                                   ? b->m->type[b->cand[off + 1]].key
                                                   : b->m->type[b->m->type[b->cand[off + 1]].parent].key));
    else
        lp_diags_report(b->ds, LP_SEV_ERROR, LP_RULE_IMPORT, fn, line,
                        "phase '%s' is ambiguous: %u phase types of this name match its keys (name it by path)", s,
                        nfound);
    return LP_OK;
}

const char *g10_xb_name(const g10_xb *b, uint32_t i, char *buf, size_t n)
{
    uint32_t path[MAXDEPTH], np = 0;
    for (uint32_t a = i; a && np < MAXDEPTH; a = b->parent[a])
        path[np++] = a;
    size_t k = 0;
    buf[0] = 0;
    if (!np)
        snprintf(buf, n, "/");
    while (np-- && k < n) {
        uint32_t a = path[np];
        const char *nm = lp_g10_model_str(b->m, b->m->type[b->type[a]].name);
        if (b->key[a] != LP_STR_NONE)
            k += (size_t)snprintf(buf + k, n - k, "/%s[%s]", nm, lp_strtab_get(&b->x->strs, b->key[a]));
        else
            k += (size_t)snprintf(buf + k, n - k, "/%s", nm);
    }
    return buf;
}

typedef struct ikey {
    const g10_xb *b;
    uint32_t parent, type;
    lp_str key;
} ikey;

static int inst_eq(const void *ctx, uint64_t v)
{
    const ikey *k = ctx;
    return k->b->parent[v] == k->parent && k->b->type[v] == k->type && k->b->key[v] == k->key;
}

static lp_status child_of(g10_xb *b, uint32_t parent, uint32_t type, lp_str key, uint32_t *out, lp_error *err)
{
    ikey k = {b, parent, type, key};
    uint64_t h = lp_hash_mix(lp_hash_mix(parent, type), key);
    uint64_t v = lp_hmap_find(&b->map, h, inst_eq, &k, NULL);
    if (v != LP_HMAP_EMPTY) {
        *out = (uint32_t)v;
        return LP_OK;
    }
    lp_status st = new_inst(b, parent, type, key, out, err);
    if (!st)
        st = lp_hmap_add(&b->map, h, *out, err);
    return st;
}

static lp_status set_bounds(g10_xb *b, uint32_t i, const lp_str *kv, uint32_t nkv, int what, int64_t t0, int64_t t1,
                            lp_str file, uint64_t line)
{
    const char *fn = lp_strtab_get(&b->x->strs, file);
    char name[256];
    if (b->has[i] & what) {
        int s = (b->has[i] & what & XB_START) != 0;
        lp_diags_report(b->ds, LP_SEV_ERROR, LP_RULE_IMPORT, fn, line, "phase %s %s again (first at %s:%llu): dropped",
                        g10_xb_name(b, i, name, sizeof name), s ? "started" : "ended",
                        lp_strtab_get(&b->x->strs, s ? b->sfile[i] : b->efile[i]),
                        (unsigned long long)(s ? b->sline[i] : b->eline[i]));
        b->x->dropped++;
        return LP_OK;
    }
    if (what & XB_START)
        b->start[i] = t0, b->sfile[i] = file, b->sline[i] = line;
    if (what & XB_END)
        b->end[i] = t1, b->efile[i] = file, b->eline[i] = line;
    b->has[i] |= (uint8_t)what;
    lp_str h = kv_get(kv, nkv, b->host_key);
    if (h != LP_STR_NONE)
        b->ownhost[i] = h;
    b->x->records++;
    return LP_OK;
}

lp_status g10_xb_add(g10_xb *b, lp_str name, const lp_str *kv, uint32_t nkv, int what, int64_t t0, int64_t t1,
                     lp_str file, uint64_t line, int quiet_unknown, lp_error *err)
{
    uint32_t t;
    lp_status st = resolve(b, name, kv, nkv, file, line, quiet_unknown, &t, err);
    if (st)
        return st;
    if (t == LP_G10_NONE) {
        if (quiet_unknown)
            b->x->ignored++;
        else
            b->x->dropped++;
        return LP_OK;
    }
    uint32_t path[MAXDEPTH], np = 0;
    for (uint32_t a = t; a && np < MAXDEPTH; a = b->m->type[a].parent)
        path[np++] = a;
    uint32_t i = 0;
    while (np--) {
        uint32_t a = path[np];
        lp_str key = b->m->type[a].repeat == LP_G10_ONCE ? LP_STR_NONE : kv_get(kv, nkv, b->x->keyname[a]);
        if ((st = child_of(b, i, a, key, &i, err)))
            return st;
    }
    return set_bounds(b, i, kv, nkv, what, t0, t1, file, line);
}

lp_status g10_xb_alias(g10_xb *b, const lp_str *kv, uint32_t nkv, lp_error *err)
{
    lp_str h = kv_get(kv, nkv, b->host_key);
    if (h == LP_STR_NONE)
        h = kv_get(kv, nkv, b->hostname_key);
    if (h == LP_STR_NONE)
        return LP_OK;
    for (uint32_t i = 0; i < nkv; i++) {
        lp_str k = kv[2 * i];
        if (k == b->host_key || k == b->hostname_key)
            continue;
        lp_status st = lp_hmap_put(&b->alias, (uint64_t)k << 32 | kv[2 * i + 1], h, err);
        if (st)
            return st;
    }
    return LP_OK;
}
