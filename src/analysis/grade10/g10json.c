/* g10json.c: a Grade10 analysis as JSON (g10json.h). Times are written in seconds
 * (doubles) and nanoseconds where they identify instants; usage in the resource's
 * capacity units times seconds. */
#include "longpole/analysis/grade10/g10json.h"
#include "longpole/base/alloc.h"

#include <stdio.h>

const char *lp_g10_rule_name(uint8_t kind)
{
    static const char *const n[] = {"none", "exact", "variable", "full"};
    return kind < 4 ? n[kind] : "?";
}

const char *lp_g10_repeat_name(uint8_t repeat)
{
    static const char *const n[] = {"once", "sequential", "concurrent"};
    return repeat < 3 ? n[repeat] : "?";
}

const char *lp_g10_mode_name(int mode) { return mode == LP_G10_EVENTS ? "events" : "slices"; }
const char *lp_g10_issue_name(uint8_t kind)
{
    return kind == LP_G10_ISSUE_IMBALANCE ? "imbalance" : kind == LP_G10_ISSUE_OUTLIER ? "outlier" : "bottleneck";
}

static double sec(int64_t ns) { return (double)ns / 1e9; }

static void run_info(lp_jsonw *j, const lp_g10_attr *a)
{
    const lp_g10_exec *x = a->x;
    lp_jsonw_key(j, "run");
    lp_jsonw_obj(j);
    lp_jsonw_ki64(j, "start_ns", x->start[0]);
    lp_jsonw_ki64(j, "end_ns", x->end[0]);
    lp_jsonw_kdbl(j, "duration_s", sec(x->end[0] - x->start[0]));
    lp_jsonw_ku64(j, "phases", x->n);
    lp_jsonw_ku64(j, "leaves", x->nleaves);
    lp_jsonw_key(j, "hosts");
    lp_jsonw_arr(j);
    for (uint32_t h = 0; h < x->nhosts; h++)
        lp_jsonw_str(j, lp_g10_exec_str(x, x->hosts[h]));
    lp_jsonw_arr_end(j);
    lp_jsonw_obj_end(j);
    lp_jsonw_key(j, "adjustments");
    lp_jsonw_obj(j);
    lp_jsonw_ku64(j, "records_used", x->records);
    lp_jsonw_ku64(j, "records_dropped", x->dropped);
    lp_jsonw_ku64(j, "unmatched", x->unmatched);
    lp_jsonw_ku64(j, "trace_activities_ignored", x->ignored);
    lp_jsonw_ku64(j, "widened", a->widened);
    lp_jsonw_ku64(j, "no_host", a->no_host);
    lp_jsonw_ku64(j, "unmonitored", a->unmonitored);
    lp_jsonw_ku64(j, "unknown_blocking", a->unknown_blocking);
    lp_jsonw_obj_end(j);
}

static void resources(lp_jsonw *j, const lp_g10_attr *a)
{
    const lp_g10_model *m = a->m;
    lp_jsonw_key(j, "resources");
    lp_jsonw_arr(j);
    for (uint32_t r = 0; r < m->nres; r++) {
        const lp_g10_res *res = &m->res[r];
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "name", lp_g10_model_str(m, res->name));
        lp_jsonw_kstr(j, "kind", res->kind == LP_G10_CONSUMABLE ? "consumable" : "blocking");
        lp_jsonw_kstr(j, "metric", lp_g10_model_str(m, res->metric));
        if (res->unit != LP_STR_NONE)
            lp_jsonw_kstr(j, "unit", lp_g10_model_str(m, res->unit));
        lp_jsonw_key(j, "timelines");
        lp_jsonw_arr(j);
        for (uint32_t k = 0; k < a->ntl; k++) {
            const lp_g10_tl *tl = &a->tl[k];
            if (tl->res != r)
                continue;
            double sat = 0, span = tl->nseg ? (double)tl->bound[tl->nseg] - (double)tl->bound[0] : 0;
            for (uint32_t s = 0; s < tl->nseg; s++)
                if (tl->u[s] >= m->bottleneck * tl->capacity * (1 - 1e-12))
                    sat += (double)tl->bound[s + 1] - (double)tl->bound[s];
            lp_jsonw_obj(j);
            lp_jsonw_kstr(j, "host", lp_strtab_get(&a->strs, tl->host));
            lp_jsonw_kdbl(j, "capacity", tl->capacity);
            lp_jsonw_ku64(j, "segments", tl->nseg);
            lp_jsonw_ku64(j, "windows", tl->nwin);
            lp_jsonw_kdbl(j, "consumed", tl->consumed);
            lp_jsonw_kdbl(j, "attributed", tl->attributed);
            lp_jsonw_kdbl(j, "background", tl->background);
            lp_jsonw_kdbl(j, "clipped", tl->clipped);
            lp_jsonw_kdbl(j, "saturated_s", sat / 1e9);
            lp_jsonw_kdbl(j, "saturated_share", span > 0 ? sat / span : 0);
            lp_jsonw_ku64(j, "merged_windows", tl->merged);
            lp_jsonw_ku64(j, "dropped_windows", tl->dropped);
            lp_jsonw_ku64(j, "gaps", tl->gaps);
            lp_jsonw_ku64(j, "phases", tl->nphases);
            if (res->delay != LP_STR_NONE) {
                lp_jsonw_key(j, "effective_capacity");
                lp_jsonw_obj(j);
                lp_jsonw_kstr(j, "delay_metric", lp_g10_model_str(m, res->delay));
                lp_jsonw_ku64(j, "windows", tl->nwin_delay);
                lp_jsonw_ku64(j, "windows_without_delay", tl->delay_bad);
                lp_jsonw_kdbl(j, "used", tl->delay_used);
                lp_jsonw_kdbl(j, "waited", tl->delay_waited);
                lp_jsonw_kdbl(j, "on_share", lp_g10_tl_on_share(tl));
                lp_jsonw_kdbl(j, "contended_s", tl->contended_s);
                lp_jsonw_obj_end(j);
            }
            lp_jsonw_obj_end(j);
        }
        lp_jsonw_arr_end(j);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
}

static void types(lp_jsonw *j, const lp_g10_attr *a)
{
    const lp_g10_model *m = a->m;
    uint64_t *count = lp_calloc(m->ntypes, sizeof *count);
    for (uint32_t i = 0; count && i < a->x->n; i++)
        count[a->x->type[i]]++;
    lp_jsonw_key(j, "types");
    lp_jsonw_arr(j);
    for (uint32_t t = 0; t < m->ntypes; t++) {
        const lp_g10_ptype *pt = &m->type[t];
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "path", lp_g10_model_str(m, pt->path));
        lp_jsonw_kstr(j, "repeat", lp_g10_repeat_name(pt->repeat));
        if (pt->key != LP_STR_NONE)
            lp_jsonw_kstr(j, "key", lp_g10_model_str(m, pt->key));
        lp_jsonw_ku64(j, "instances", count ? count[t] : 0);
        lp_jsonw_key(j, "resources");
        lp_jsonw_arr(j);
        for (uint32_t r = 0; r < m->nres; r++) {
            const lp_g10_tstat *ts = &a->tstat[(size_t)t * m->nres + r];
            size_t i = (size_t)t * m->nres + r;
            if (!ts->phases)
                continue;
            lp_jsonw_obj(j);
            lp_jsonw_kstr(j, "resource", lp_g10_model_str(m, m->res[r].name));
            lp_jsonw_kstr(j, "rule", lp_g10_rule_name(m->rkind[i]));
            if (m->rkind[i] == LP_G10_RULE_EXACT || m->rkind[i] == LP_G10_RULE_VARIABLE)
                lp_jsonw_kdbl(j, m->rpct[i] ? "share_of_capacity" : "value", m->rval[i]);
            lp_jsonw_ku64(j, "phases", ts->phases);
            lp_jsonw_kdbl(j, "active_s", sec(ts->active_ns));
            if (m->res[r].kind == LP_G10_CONSUMABLE)
                lp_jsonw_kdbl(j, "used", ts->used);
            lp_jsonw_kdbl(j, m->res[r].kind == LP_G10_CONSUMABLE ? "bottleneck_s" : "blocked_s", sec(ts->bn_ns));
            if (m->res[r].kind == LP_G10_CONSUMABLE) {
                lp_jsonw_kdbl(j, "global_s", sec(ts->bn_global_ns));
                lp_jsonw_kdbl(j, "local_s", sec(ts->bn_local_ns));
            }
            lp_jsonw_kdbl(j, "bottleneck_share", ts->active_ns ? (double)ts->bn_ns / (double)ts->active_ns : 0);
            lp_jsonw_obj_end(j);
        }
        lp_jsonw_arr_end(j);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_free(count);
}

static void issues(lp_jsonw *j, const lp_g10_attr *a, const lp_g10_issues *is)
{
    const lp_g10_model *m = a->m;
    lp_jsonw_key(j, "issues");
    lp_jsonw_obj(j);
    lp_jsonw_kdbl(j, "recorded_s", sec(is->recorded));
    lp_jsonw_kdbl(j, "replayed_s", sec(is->baseline));
    lp_jsonw_kdbl(j, "threshold", is->threshold);
    if (is->ps_groups) { /* only when contended: the output of other runs is unchanged */
        lp_jsonw_key(j, "processor_sharing");
        lp_jsonw_obj(j);
        lp_jsonw_kbool(j, "used", !is->ps_rejected);
        if (is->ps_baseline >= 0)
            lp_jsonw_kdbl(j, "replayed_s", sec(is->ps_baseline));
        else {
            lp_jsonw_key(j, "replayed_s");
            lp_jsonw_null(j);
        }
        lp_jsonw_kdbl(j, "tolerance", LP_G10_PS_TOL);
        lp_jsonw_ku64(j, "timelines", is->ps_groups);
        lp_jsonw_ku64(j, "leaves", is->ps_leaves);
        lp_jsonw_kdbl(j, "capacity", is->ps_capacity);
        lp_jsonw_kdbl(j, "share", is->ps_share);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_key(j, "list");
    lp_jsonw_arr(j);
    for (size_t i = 0; i < is->n; i++) {
        const lp_g10_issue *v = &is->v[i];
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "kind", lp_g10_issue_name(v->kind));
        if (v->kind == LP_G10_ISSUE_BOTTLENECK)
            lp_jsonw_kstr(j, "resource", lp_g10_model_str(m, m->res[v->res].name));
        else
            lp_jsonw_kstr(j, "type", lp_g10_model_str(m, m->type[v->type].path));
        if (v->kind == LP_G10_ISSUE_OUTLIER) {
            lp_jsonw_ku64(j, "instances", v->instances);
            if (v->key != LP_STR_NONE && a->x->keyname[v->type] != LP_STR_NONE) {
                lp_jsonw_key(j, "mostly");
                lp_jsonw_obj(j);
                lp_jsonw_kstr(j, "key", lp_strtab_get(&a->x->strs, a->x->keyname[v->type]));
                lp_jsonw_kstr(j, "value", lp_strtab_get(&a->x->strs, v->key));
                lp_jsonw_ku64(j, "instances", v->key_count);
                lp_jsonw_obj_end(j);
            }
        }
        lp_jsonw_ku64(j, "phases", v->phases);
        lp_jsonw_kdbl(j, "phase_time_saved_s", sec(v->saved_ns));
        lp_jsonw_kdbl(j, "makespan_s", sec(v->makespan));
        lp_jsonw_kdbl(j, "gain_s", sec(v->gain_ns));
        lp_jsonw_kdbl(j, "gain", v->gain);
        lp_jsonw_kbool(j, "reported", v->reported);
        if (v->ps)
            lp_jsonw_kstr(j, "assumed", "processor sharing");
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_jsonw_obj_end(j);
}

static lp_status phase_list(lp_jsonw *j, const lp_g10_attr *a, lp_error *err)
{
    const lp_g10_exec *x = a->x;
    const lp_g10_model *m = a->m;
    size_t nr = m->nres ? m->nres : 1;
    double *used = lp_malloc(nr * x->n * sizeof *used + 1);
    int64_t *bn = lp_malloc(nr * x->n * sizeof *bn + 1);
    if (!used || !bn) {
        lp_free(used), lp_free(bn);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    for (uint32_t r = 0; r < m->nres; r++)
        lp_g10_rollup(a, r, used + (size_t)r * x->n, bn + (size_t)r * x->n);
    char name[512];
    lp_jsonw_key(j, "phases");
    lp_jsonw_arr(j);
    for (uint32_t i = 0; i < x->n; i++) {
        lp_jsonw_obj(j);
        lp_jsonw_ku64(j, "id", i);
        lp_jsonw_kstr(j, "name", lp_g10_exec_name(x, i, name, sizeof name));
        if (i)
            lp_jsonw_ku64(j, "parent", x->parent[i]);
        lp_jsonw_ki64(j, "start_ns", x->start[i]);
        lp_jsonw_ki64(j, "end_ns", x->end[i]);
        if (x->host[i] != LP_G10_NONE)
            lp_jsonw_kstr(j, "host", lp_g10_exec_str(x, x->hosts[x->host[i]]));
        lp_jsonw_kbool(j, "derived", x->derived[i]);
        lp_jsonw_key(j, "resources");
        lp_jsonw_obj(j);
        for (uint32_t r = 0; r < m->nres; r++) {
            double u = used[(size_t)r * x->n + i];
            int64_t b = bn[(size_t)r * x->n + i];
            if (u == 0 && b == 0)
                continue;
            lp_jsonw_key(j, lp_g10_model_str(m, m->res[r].name));
            lp_jsonw_obj(j);
            if (m->res[r].kind == LP_G10_CONSUMABLE)
                lp_jsonw_kdbl(j, "used", u);
            lp_jsonw_kdbl(j, m->res[r].kind == LP_G10_CONSUMABLE ? "bottleneck_s" : "blocked_s", sec(b));
            lp_jsonw_obj_end(j);
        }
        lp_jsonw_obj_end(j);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_free(used), lp_free(bn);
    return LP_OK;
}

lp_status lp_g10_json(lp_jsonw *j, const lp_g10_attr *a, const lp_g10_issues *is, int phases, lp_error *err)
{
    const lp_g10_model *m = a->m;
    lp_jsonw_obj(j);
    lp_jsonw_kstr(j, "format", "longpole-grade10");
    lp_jsonw_ki64(j, "version", 1);
    lp_jsonw_kstr(j, "model", lp_g10_model_str(m, m->file));
    lp_jsonw_kstr(j, "mode", lp_g10_mode_name(a->mode));
    lp_jsonw_ki64(j, "slice_ns", a->slice_ns);
    lp_jsonw_kdbl(j, "bottleneck_threshold", m->bottleneck);
    run_info(j, a);
    resources(j, a);
    types(j, a);
    if (is)
        issues(j, a, is);
    lp_status st = phases ? phase_list(j, a, err) : LP_OK;
    lp_jsonw_obj_end(j);
    return st;
}
