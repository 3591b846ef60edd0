/* runs.c: grouping inputs into runs by their time spans (runs.h). Each expanded input
 * is loaded alone into a scratch sink (its diagnostics belong to the real load of its
 * run, later); spans sorted by start are swept, a run closing when the next span
 * starts after the latest end so far. O(inputs log inputs) plus the loads. */
#include "longpole/load/runs.h"
#include "longpole/load/inputs.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>

typedef struct span {
    size_t item;
    int64_t lo, hi;
} span;

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->item < y->item ? -1 : x->item > y->item;
}

void lp_runs_release(lp_runs *r)
{
    for (size_t i = 0; r->paths && i < r->npaths; i++)
        lp_free(r->paths[i]);
    lp_free(r->paths);
    lp_free(r->first);
    lp_free(r->tmin);
    lp_free(r->tmax);
    memset(r, 0, sizeof *r);
}

static lp_status alloc_runs(lp_runs *r, size_t nruns, size_t npaths, lp_error *err)
{
    r->n = nruns;
    r->first = lp_calloc(nruns + 1, sizeof *r->first);
    r->paths = lp_calloc(npaths ? npaths : 1, sizeof *r->paths);
    r->npaths = npaths;
    r->tmin = lp_calloc(nruns, sizeof *r->tmin);
    r->tmax = lp_calloc(nruns, sizeof *r->tmax);
    if (!r->first || !r->paths || !r->tmin || !r->tmax) {
        lp_runs_release(r);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    return LP_OK;
}

/* One run: the paths as given. */
static lp_status one_run(lp_runs *r, const char *const *paths, size_t npaths, lp_error *err)
{
    lp_status st = alloc_runs(r, 1, npaths, err);
    if (st)
        return st;
    for (size_t i = 0; i < npaths; i++) {
        if (!(r->paths[i] = lp_strndup(paths[i], strlen(paths[i])))) {
            lp_runs_release(r);
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        }
    }
    r->first[1] = npaths;
    return LP_OK;
}

/* The span of each item loaded alone; *nok of them are usable (in sp[0 .. nok)). */
static lp_status item_spans(const lp_input_item *items, size_t nitems, const lp_load_opts *opts, span *sp,
                            size_t *nok, int *linked, lp_error *err)
{
    *linked = 0;
    lp_load_opts o = *opts;
    o.progress = NULL;
    *nok = 0;
    for (size_t i = 0; i < nitems; i++) {
        lp_diags scratch;
        lp_diags_init(&scratch, 0);
        lp_error e;
        lp_error_clear(&e);
        lp_trace *t = NULL;
        const char *p = items[i].path;
        lp_status st = lp_trace_load(&p, 1, &o, &scratch, &t, &e);
        /* message halves without their other half: it is part of a trace split by worker */
        *linked |= scratch.count[LP_RULE_UNMATCHED_SEND] + scratch.count[LP_RULE_UNMATCHED_RECV] > 0;
        lp_diags_release(&scratch);
        if (st == LP_ERR_NOMEM) {
            lp_trace_free(t);
            return lp_error_set(err, st, "out of memory");
        }
        if (!st && t->nacts > t->ngaps)
            sp[(*nok)++] = (span){i, t->tmin, t->tmax};
        lp_trace_free(t);
    }
    return LP_OK;
}

lp_status lp_load_runs(const char *const *paths, size_t npaths, const lp_load_opts *opts, lp_diags *diags,
                       lp_runs *out, lp_error *err)
{
    memset(out, 0, sizeof *out);
    lp_load_opts dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!opts)
        opts = &dflt;
    lp_input_item *items = NULL;
    size_t nitems = 0;
    lp_status st = lp_inputs_expand(paths, npaths, &items, &nitems, err);
    if (st)
        return st;
    int has_stdin = 0; /* standard input cannot be read twice: it joins whatever it is given with */
    for (size_t i = 0; i < nitems; i++)
        has_stdin |= strcmp(items[i].path, "-") == 0;
    size_t nscan = has_stdin ? 1 : nitems; /* inputs to load alone: one means one run */
    span *sp = nscan > 1 ? lp_calloc(nscan, sizeof *sp) : NULL;
    size_t nok = 0, nruns = 1;
    int linked = 0;
    if (nscan > 1 && !sp)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    else if (nscan > 1)
        st = item_spans(items, nitems, opts, sp, &nok, &linked, err);
    if (!st && nok > 1 && !linked) {
        qsort(sp, nok, sizeof *sp, cmp_span);
        int64_t hi = sp[0].hi;
        for (size_t i = 1; i < nok; i++) {
            nruns += sp[i].lo > hi;
            hi = sp[i].hi > hi ? sp[i].hi : hi;
        }
    }
    if (!st && nruns == 1)
        st = one_run(out, paths, npaths, err);
    else if (!st && !(st = alloc_runs(out, nruns, nok, err))) {
        size_t r = 0;
        int64_t hi = sp[0].hi;
        out->tmin[0] = sp[0].lo;
        for (size_t i = 0; i < nok && !st; i++) {
            if (i && sp[i].lo > hi) {
                out->tmax[r] = hi;
                out->first[++r] = i;
                out->tmin[r] = sp[i].lo;
            }
            hi = sp[i].hi > hi ? sp[i].hi : hi;
            const char *p = items[sp[i].item].path;
            if (!(out->paths[i] = lp_strndup(p, strlen(p))))
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            out->first[r + 1] = i + 1;
        }
        out->tmax[r] = hi;
        out->skipped = nitems - nok;
        for (size_t i = 0; i < nitems && !st; i++) { /* the inputs that joined no run */
            size_t k = 0;
            while (k < nok && sp[k].item != i)
                k++;
            if (k == nok)
                lp_diags_report(diags, LP_SEV_WARNING, LP_RULE_IMPORT, items[i].path, 0,
                                "not readable on its own or holds no activity; left out of the runs (load it "
                                "alone to see why)");
        }
        if (st)
            lp_runs_release(out);
    }
    lp_free(sp);
    lp_inputs_free(items, nitems);
    return st;
}
