/* requests_json.c: the JSON output of `longpole requests` (reqout.h;
 * docs/formats/mystery-requests-json.md): one document, one function per member:
 * input, model, latency and critical path, categories with their what-if buckets,
 * segments, outliers, strata, and with --per-request every request. */
#include "reqout.h"

#include <math.h>
#include <string.h>

/* One request: its latency, critical path and segments (start, duration, slack). */
void requests_json_request(lp_jsonw *j, const lp_reqpath *p, const lp_causal *m, const lp_reqlog *rl, uint64_t r)
{
    (void)m;
    lp_jsonw_obj(j);
    lp_jsonw_kstr(j, "request", lp_reqlog_str(rl, rl->req_name[r]));
    lp_jsonw_ki64(j, "start_ns", p->first);
    lp_jsonw_ki64(j, "latency_ns", p->latency);
    lp_jsonw_ki64(j, "cp_ns", p->cp);
    lp_jsonw_ku64(j, "violations", p->violations);
    lp_jsonw_key(j, "path");
    lp_jsonw_arr(j);
    for (uint32_t k = 0; k < p->npath; k++)
        lp_jsonw_u64(j, p->seg[p->path[k]]);
    lp_jsonw_arr_end(j);
    lp_jsonw_key(j, "segments");
    lp_jsonw_arr(j);
    for (uint32_t i = 0; i < p->n; i++) {
        lp_jsonw_arr(j);
        lp_jsonw_u64(j, p->seg[i]);
        lp_jsonw_i64(j, p->start[i] - p->first);
        lp_jsonw_i64(j, p->dur[i]);
        lp_jsonw_i64(j, p->slack[i]);
        lp_jsonw_arr_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_jsonw_obj_end(j);
}

static void requests_jq(lp_jsonw *j, const char *key, const double *q)
{
    lp_jsonw_key(j, key);
    lp_jsonw_arr(j);
    for (int p = 0; p < LP_REQSTATS_Q; p++)
        lp_jsonw_dbl(j, q[p]);
    lp_jsonw_arr_end(j);
}

/* The input, the model, latency and the critical path. */
static void json_head(lp_jsonw *j, const reqout *rx)
{
    const lp_reqstats *S = rx->S;
    const lp_causal *m = rx->m;
    const lp_reqlog *rl = rx->rl;
    lp_jsonw_kstr(j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(j, "command", "requests");
    lp_jsonw_key(j, "input");
    lp_jsonw_obj(j);
    lp_jsonw_ku64(j, "requests", rl->nreqs);
    lp_jsonw_ku64(j, "analysed", S->analysed);
    lp_jsonw_ku64(j, "excluded", S->excluded);
    lp_jsonw_ku64(j, "lines", rl->nlines);
    lp_jsonw_ku64(j, "bad_lines", rl->nbadlines);
    lp_jsonw_kbool(j, "skew_corrected", !rx->no_skew);
    lp_jsonw_kbool(j, "input_errors", rx->data_errors);
    lp_jsonw_obj_end(j);
    lp_jsonw_key(j, "model");
    lp_jsonw_obj(j);
    if (rx->model)
        lp_jsonw_kstr(j, "file", rx->model);
    else
        lp_jsonw_kstr(j, "file", "(inferred from the input)");
    lp_jsonw_ku64(j, "segments", m->nseg);
    lp_jsonw_ku64(j, "requests", m->nreq);
    lp_jsonw_ku64(j, "violations", S->violations);
    lp_jsonw_ku64(j, "unknown_segments", S->unknown);
    lp_jsonw_obj_end(j);
    lp_jsonw_key(j, "latency");
    lp_jsonw_obj(j);
    lp_jsonw_kdbl(j, "mean_ns", S->latency_mean);
    requests_jq(j, "quantiles_ns", S->latency_q);
    lp_jsonw_obj_end(j);
    lp_jsonw_key(j, "critical_path");
    lp_jsonw_obj(j);
    lp_jsonw_kdbl(j, "mean_ns", S->cp_mean);
    requests_jq(j, "quantiles_ns", S->cp_q);
    lp_jsonw_obj_end(j);
}

/* Per category: means, shares, quantiles and the what-if buckets. */
static void json_categories(lp_jsonw *j, const reqout *rx)
{
    const lp_reqstats *S = rx->S;
    const lp_reqcat *cat = rx->cat;
    uint32_t C = S->ncat;
    double n = rx->n;
    lp_jsonw_key(j, "categories");
    lp_jsonw_arr(j);
    for (uint32_t c = 0; c < C; c++) {
        const lp_reqstats_cat *pc = &S->cat[c];
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "name", cat->name[c]);
        lp_jsonw_ku64(j, "requests_present", pc->present);
        lp_jsonw_kdbl(j, "cp_mean_ns", (double)pc->cp_sum / n);
        lp_jsonw_kdbl(j, "summed_mean_ns", (double)pc->dur_sum / n);
        lp_jsonw_kdbl(j, "cp_share", rx->cp_total ? (double)pc->cp_sum / (double)rx->cp_total : NAN);
        lp_jsonw_kdbl(j, "summed_share", rx->dur_total ? (double)pc->dur_sum / (double)rx->dur_total : NAN);
        requests_jq(j, "cp_share_quantiles", pc->share_q);
        requests_jq(j, "slack_quantiles_ns", pc->slack_q);
        lp_jsonw_key(j, "whatif");
        lp_jsonw_arr(j);
        for (uint32_t b = 0; b < pc->nbuckets; b++) {
            const lp_reqstats_bucket *bk = &pc->buckets[b];
            lp_jsonw_obj(j);
            lp_jsonw_ki64(j, "slack_min_ns", bk->slack_lo);
            lp_jsonw_ki64(j, "slack_max_ns", bk->slack_hi);
            lp_jsonw_ku64(j, "requests", bk->n);
            lp_jsonw_kdbl(j, "correlation", bk->r);
            lp_jsonw_kdbl(j, "time_mean_ns", bk->x_mean);
            lp_jsonw_kdbl(j, "latency_mean_ns", bk->latency_mean);
            lp_jsonw_obj_end(j);
        }
        lp_jsonw_arr_end(j);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
}

/* Per segment of the model. */
static void json_segments(lp_jsonw *j, const reqout *rx)
{
    const lp_reqstats *S = rx->S;
    const lp_causal *m = rx->m;
    const lp_reqcat *cat = rx->cat;
    double n = rx->n;
    lp_jsonw_key(j, "segments");
    lp_jsonw_arr(j);
    for (uint32_t s = 0; s < S->nseg; s++) {
        const lp_reqstats_seg *g = &S->seg[s];
        lp_jsonw_obj(j);
        lp_jsonw_ku64(j, "id", s);
        lp_jsonw_kstr(j, "task", lp_strtab_get(&m->names, m->seg_task[s]));
        lp_jsonw_kstr(j, "start", lp_strtab_get(&m->names, m->seg_from[s]));
        lp_jsonw_kstr(j, "end", lp_strtab_get(&m->names, m->seg_to[s]));
        lp_jsonw_kstr(j, "category", cat->name[cat->of_seg[s]]);
        lp_jsonw_ku64(j, "requests", g->present);
        lp_jsonw_ku64(j, "on_cp", g->oncp);
        lp_jsonw_kdbl(j, "cp_mean_ns", (double)g->cp_sum / n);
        lp_jsonw_kdbl(j, "summed_mean_ns", (double)g->dur_sum / n);
        lp_jsonw_kdbl(j, "slack_mean_ns", g->present ? (double)g->slack_sum / (double)g->present : NAN);
        lp_jsonw_key(j, "slack_histogram");
        lp_jsonw_arr(j);
        for (int h = 0; h < LP_REQSTATS_HIST; h++)
            lp_jsonw_u64(j, g->slack_hist[h]);
        lp_jsonw_arr_end(j);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
}

/* The slowest requests against the rest. */
static void json_outliers(lp_jsonw *j, const reqout *rx)
{
    const lp_reqstats *S = rx->S;
    const lp_causal *m = rx->m;
    char lab[1024];
    lp_jsonw_key(j, "outliers");
    lp_jsonw_obj(j);
    lp_jsonw_kdbl(j, "share", rx->share);
    lp_jsonw_ku64(j, "requests", S->noutliers);
    lp_jsonw_ki64(j, "latency_min_ns", S->outlier_latency);
    lp_jsonw_key(j, "segments");
    lp_jsonw_arr(j);
    uint64_t rest = S->analysed - S->noutliers;
    int64_t tout = 0, tall = 0;
    for (uint32_t s = 0; s < S->nseg; s++)
        tout += S->seg[s].cp_out, tall += S->seg[s].cp_sum;
    for (uint32_t k = 0; k < S->nranked && k < rx->top; k++) {
        uint32_t s = S->ranked[k];
        const lp_reqstats_seg *g = &S->seg[s];
        lp_jsonw_obj(j);
        lp_jsonw_ku64(j, "id", s);
        lp_jsonw_kstr(j, "segment", lp_causal_label(m, s, lab, sizeof lab));
        lp_jsonw_kdbl(j, "overrepresentation", lp_reqstats_overrep(S, s));
        lp_jsonw_kdbl(j, "cp_share_outliers", tout ? (double)g->cp_out / (double)tout : NAN);
        lp_jsonw_kdbl(j, "cp_share_rest", tall - tout ? (double)(g->cp_sum - g->cp_out) / (double)(tall - tout) : NAN);
        lp_jsonw_kdbl(j, "on_cp_outliers", S->noutliers ? (double)g->oncp_out / (double)S->noutliers : NAN);
        lp_jsonw_kdbl(j, "on_cp_rest", rest ? (double)(g->oncp - g->oncp_out) / (double)rest : NAN);
        lp_jsonw_kdbl(j, "present_outliers", S->noutliers ? (double)g->present_out / (double)S->noutliers : NAN);
        lp_jsonw_kdbl(j, "present_rest", rest ? (double)(g->present - g->present_out) / (double)rest : NAN);
        lp_jsonw_kdbl(j, "cp_mean_outliers_ns", S->noutliers ? (double)g->cp_out / (double)S->noutliers : NAN);
        lp_jsonw_kdbl(j, "cp_mean_rest_ns", rest ? (double)(g->cp_sum - g->cp_out) / (double)rest : NAN);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_jsonw_obj_end(j);
}

/* The strata (Figure 7). */
static void json_strata(lp_jsonw *j, const reqout *rx)
{
    const lp_reqstats *S = rx->S;
    const lp_reqcat *cat = rx->cat;
    uint32_t C = S->ncat;
    double n = rx->n;
    lp_jsonw_key(j, "strata");
    lp_jsonw_arr(j);
    for (uint32_t i = 0; i < S->nstrat; i++) {
        const lp_reqstats_strat *st = &S->strat[i];
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "by", st->name);
        lp_jsonw_ku64(j, "missing", st->missing);
        lp_jsonw_key(j, "values");
        lp_jsonw_arr(j);
        for (uint32_t k = 0; k < st->nvals; k++) {
            const lp_reqstats_stratum *sv = &st->vals[k];
            lp_jsonw_obj(j);
            lp_jsonw_kstr(j, "value", sv->label);
            lp_jsonw_ku64(j, "requests", sv->n);
            lp_jsonw_kdbl(j, "fraction", (double)sv->n / n);
            lp_jsonw_kdbl(j, "latency_mean_ns", sv->latency_mean);
            lp_jsonw_kdbl(j, "cp_mean_ns", sv->cp_mean);
            lp_jsonw_key(j, "cp_mean_ns_by_category");
            lp_jsonw_obj(j);
            for (uint32_t c = 0; c < C; c++)
                lp_jsonw_kdbl(j, cat->name[c], sv->cat_cp_mean[c]);
            lp_jsonw_obj_end(j);
            lp_jsonw_obj_end(j);
        }
        lp_jsonw_arr_end(j);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
}

/* --per-request: every request. */
static lp_status json_requests(lp_jsonw *j, const reqout *rx, lp_error *err)
{
    const lp_causal *m = rx->m;
    const lp_reqlog *rl = rx->rl;
    lp_jsonw_key(j, "requests");
    lp_jsonw_arr(j);
    for (uint64_t r = 0; r < rl->nreqs; r++) {
        if (rl->rbad[r])
            continue;
        if (lp_reqpath_compute(rx->p, m, rl, rx->map, r, err))
            return err->status;
        requests_json_request(j, rx->p, m, rl, r);
    }
    lp_jsonw_arr_end(j);
    return LP_OK;
}

lp_status requests_json(const reqout *rx, lp_error *err)
{
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    json_head(&j, rx);
    json_categories(&j, rx);
    json_segments(&j, rx);
    json_outliers(&j, rx);
    json_strata(&j, rx);
    lp_status st = rx->per_request ? json_requests(&j, rx, err) : LP_OK;
    if (st)
        return st;
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
    return LP_OK;
}
