/* g10_print.c: the text answer of `longpole grade10`, the answer first: the run's
 * makespan and the issues with their replayed gains, then the bottlenecks per phase
 * type and resource (paper Fig. 4), the imbalance of each concurrently repeated type
 * (Fig. 5), the resource timelines, and every adjustment made to the data, counted. */
#include "g10cli.h"
#include "base/util.h"

#include <string.h>

void g10_adjust_sum(const lp_g10_attr *a, g10_adjust *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t k = 0; k < a->ntl; k++) {
        out->clipped += a->tl[k].clipped;
        out->gaps += a->tl[k].gaps;
        out->dropped += a->tl[k].dropped;
        out->merged += a->tl[k].merged;
    }
}

static void print_issues(FILE *out, const lp_g10_attr *a, const lp_g10_issues *is, uint64_t top)
{
    const lp_g10_model *m = a->m;
    size_t rep = 0;
    for (size_t i = 0; i < is->n; i++)
        rep += is->v[i].reported != 0;
    fprintf(out, "issues (replayed; reported above %.1f%% of the makespan): %zu of %zu candidates\n",
            100 * is->threshold, rep, is->n);
    if (is->ps_groups && is->ps_rejected) { /* contended, but the sharing model did not reproduce the run */
        char r0[32], r1[32];
        fprintf(out, "  processor sharing not used: its replay of the recorded work (%s) is not within %.0f%% of the "
                     "recorded durations' replay (%s); imbalance and outlier gains are the fixed-duration ones\n",
                is->ps_baseline < 0 ? "incomplete" : lp_fmt_dur(is->ps_baseline, r0, sizeof r0), 100 * LP_G10_PS_TOL,
                lp_fmt_dur(is->baseline, r1, sizeof r1));
    }
    uint64_t shown = 0;
    for (size_t i = 0; i < is->n && (!top || shown < top); i++) {
        const lp_g10_issue *v = &is->v[i];
        if (!v->reported)
            continue;
        shown++;
        const char *what = v->kind == LP_G10_ISSUE_BOTTLENECK ? lp_g10_model_str(m, m->res[v->res].name)
                                                              : lp_g10_model_str(m, m->type[v->type].path);
        char g[32], m0[32], m1[32], sv[32];
        fprintf(out, "  %2llu. %-10s %-28s gain %9s %6.2f%%  makespan %s -> %s  (%llu phases, %s of phase time)\n",
                (unsigned long long)shown, lp_g10_issue_name(v->kind), what, lp_fmt_dur(v->gain_ns, g, sizeof g),
                100 * v->gain, lp_fmt_dur(v->ps ? is->ps_baseline : is->baseline, m0, sizeof m0),
                lp_fmt_dur(v->makespan, m1, sizeof m1), (unsigned long long)v->phases,
                lp_fmt_dur(v->saved_ns, sv, sizeof sv));
        if (v->ps)
            fprintf(out, "      assumed: processor sharing (%llu leaves as work on %u contended timeline(s); "
                         "capacity %g at a share of %.3f)\n",
                    (unsigned long long)is->ps_leaves, is->ps_groups, is->ps_capacity, is->ps_share);
        if (v->kind == LP_G10_ISSUE_OUTLIER && v->key != LP_STR_NONE && a->x->keyname[v->type] != LP_STR_NONE)
            fprintf(out, "      %llu outlier instances (over %.1fx their set's median), %llu of them %s=%s\n",
                    (unsigned long long)v->instances, LP_G10_OUTLIER, (unsigned long long)v->key_count,
                    lp_strtab_get(&a->x->strs, a->x->keyname[v->type]), lp_strtab_get(&a->x->strs, v->key));
        else if (v->kind == LP_G10_ISSUE_OUTLIER)
            fprintf(out, "      %llu outlier instances (over %.1fx their set's median)\n",
                    (unsigned long long)v->instances, LP_G10_OUTLIER);
    }
    if (!rep)
        fprintf(out, "  none: no bottleneck, imbalance or outlier would shorten the run by %.1f%% or more\n",
                100 * is->threshold);
}

static void print_bottlenecks(FILE *out, const lp_g10_attr *a)
{
    const lp_g10_model *m = a->m;
    fprintf(out, "\nbottlenecks per phase type and resource:\n");
    fprintf(out, "  %-32s %-8s %-9s %7s %10s %11s %10s %6s %10s %10s\n", "type", "resource", "rule", "phases",
            "active", "used", "bottleneck", "share", "global", "local");
    int any = 0;
    for (uint32_t t = 0; t < m->ntypes; t++)
        for (uint32_t r = 0; r < m->nres; r++) {
            const lp_g10_tstat *ts = &a->tstat[(size_t)t * m->nres + r];
            size_t i = (size_t)t * m->nres + r;
            if (!ts->phases)
                continue;
            any = 1;
            int cons = m->res[r].kind == LP_G10_CONSUMABLE;
            char rule[32];
            if (m->rkind[i] == LP_G10_RULE_EXACT || m->rkind[i] == LP_G10_RULE_VARIABLE)
                snprintf(rule, sizeof rule, "%s %g%s", lp_g10_rule_name(m->rkind[i]), m->rpct[i] ? 100 * m->rval[i] : m->rval[i],
                         m->rpct[i] ? "%" : "");
            else
                snprintf(rule, sizeof rule, "%s", lp_g10_rule_name(m->rkind[i]));
            char used[32] = "-";
            if (cons)
                snprintf(used, sizeof used, "%.4g", ts->used);
            char act[32], bn[32], gl[32], lo[32];
            fprintf(out, "  %-32s %-8s %-9s %7llu %10s %11s %10s %5.1f%%", lp_g10_model_str(m, m->type[t].path),
                    lp_g10_model_str(m, m->res[r].name), rule, (unsigned long long)ts->phases,
                    lp_fmt_dur(ts->active_ns, act, sizeof act), used, lp_fmt_dur(ts->bn_ns, bn, sizeof bn),
                    ts->active_ns ? 100.0 * (double)ts->bn_ns / (double)ts->active_ns : 0.0);
            if (cons)
                fprintf(out, " %10s %10s\n", lp_fmt_dur(ts->bn_global_ns, gl, sizeof gl),
                        lp_fmt_dur(ts->bn_local_ns, lo, sizeof lo));
            else
                fprintf(out, " %10s %10s\n", "(blocked)", "-");
        }
    if (!any)
        fprintf(out, "  none: no phase has a rule on a resource (the model has %u resources)\n", m->nres);
}

/* For each concurrently repeated type: over the sets of its instances under one parent,
 * the worst max/mean duration and the summed excess of the longest over the mean. */
static void print_imbalance(FILE *out, const lp_g10_attr *a)
{
    const lp_g10_exec *x = a->x;
    const lp_g10_model *m = a->m;
    size_t nt = m->ntypes;
    double *mx = lp_calloc(nt, sizeof *mx), *sum = lp_calloc(nt, sizeof *sum), *worst = lp_calloc(nt, sizeof *worst);
    double *excess = lp_calloc(nt, sizeof *excess);
    uint64_t *cnt = lp_calloc(nt, sizeof *cnt), *sets = lp_calloc(nt, sizeof *sets);
    if (!mx || !sum || !worst || !excess || !cnt || !sets)
        goto done;
    for (uint32_t p = 0; p < x->n; p++) {
        if (x->size[p] == 1)
            continue;
        for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
            uint32_t t = x->type[c];
            double d = (double)(x->end[c] - x->start[c]);
            mx[t] = cnt[t] ? (d > mx[t] ? d : mx[t]) : d;
            sum[t] += d;
            cnt[t]++;
        }
        for (uint32_t c = p + 1; c < p + x->size[p]; c += x->size[c]) {
            uint32_t t = x->type[c];
            if (!cnt[t])
                continue;
            if (cnt[t] > 1 && m->type[t].repeat == LP_G10_CONCURRENT && sum[t] > 0) {
                double mean = sum[t] / (double)cnt[t];
                if (mx[t] / mean > worst[t])
                    worst[t] = mx[t] / mean;
                excess[t] += mx[t] - mean;
                sets[t]++;
            }
            mx[t] = sum[t] = 0;
            cnt[t] = 0;
        }
    }
    fprintf(out, "\nimbalance of concurrent phase types (sets: instances under one parent):\n");
    fprintf(out, "  %-32s %6s %14s %16s\n", "type", "sets", "worst max/mean", "sum of max-mean");
    int any = 0;
    for (uint32_t t = 0; t < nt; t++)
        if (sets[t]) {
            any = 1;
            char ex[32];
            fprintf(out, "  %-32s %6llu %14.2f %16s\n", lp_g10_model_str(m, m->type[t].path),
                    (unsigned long long)sets[t], worst[t], lp_fmt_dur((int64_t)(excess[t] + 0.5), ex, sizeof ex));
        }
    if (!any)
        fprintf(out, "  none: no concurrent type has two instances under one parent\n");
done:
    lp_free(mx), lp_free(sum), lp_free(worst), lp_free(excess), lp_free(cnt), lp_free(sets);
}

static void print_resources(FILE *out, const lp_g10_attr *a)
{
    const lp_g10_model *m = a->m;
    fprintf(out, "\nresources (usage in capacity units x s):\n");
    fprintf(out, "  %-8s %-12s %9s %8s %11s %11s %11s %9s %8s\n", "resource", "host", "capacity", "windows", "consumed",
            "attributed", "background", "clipped", "saturated");
    if (!a->ntl)
        fprintf(out, "  none: no monitoring of a consumable resource of the model\n");
    for (uint32_t k = 0; k < a->ntl; k++) {
        const lp_g10_tl *tl = &a->tl[k];
        double sat = 0, span = tl->nseg ? (double)tl->bound[tl->nseg] - (double)tl->bound[0] : 0;
        for (uint32_t s = 0; s < tl->nseg; s++)
            if (tl->u[s] >= m->bottleneck * tl->capacity * (1 - 1e-12))
                sat += (double)tl->bound[s + 1] - (double)tl->bound[s];
        fprintf(out, "  %-8s %-12s %9.4g %8u %11.4g %11.4g %11.4g %9.4g %7.1f%%\n",
                lp_g10_model_str(m, m->res[tl->res].name), lp_strtab_get(&a->strs, tl->host), tl->capacity, tl->nwin,
                tl->consumed, tl->attributed, tl->background, tl->clipped, span > 0 ? 100 * sat / span : 0.0);
    }
    for (uint32_t k = 0; k < a->ntl; k++) {
        const lp_g10_tl *tl = &a->tl[k];
        const lp_g10_res *r = &m->res[tl->res];
        if (r->delay == LP_STR_NONE)
            continue;
        const char *rn = lp_g10_model_str(m, r->name), *hn = lp_strtab_get(&a->strs, tl->host);
        if (!tl->nwin_delay) {
            fprintf(out, "  effective capacity of %s on %s: no %s series for this host; capacity assumed free\n", rn,
                    hn, lp_g10_model_str(m, r->delay));
            continue;
        }
        double on = lp_g10_tl_on_share(tl);
        fprintf(out, "  effective capacity of %s on %s (%s): the threads got %.1f%% of what they were ready to use "
                     "(%.4g used, %.4g waited) in %u windows; contended (below %.0f%%) %.3g s; Exact demand scaled "
                     "per window\n",
                rn, hn, lp_g10_model_str(m, r->delay), 100 * on, tl->delay_used, tl->delay_waited, tl->nwin_delay,
                100 * m->bottleneck, tl->contended_s);
        if (tl->delay_bad)
            fprintf(out, "    %llu windows without a usable delay (outside its samples or going backwards): "
                         "capacity assumed free there\n", (unsigned long long)tl->delay_bad);
    }
}

static void print_adjust(FILE *out, const lp_g10_attr *a)
{
    const lp_g10_exec *x = a->x;
    g10_adjust ad;
    g10_adjust_sum(a, &ad);
    fprintf(out, "\nadjustments to the data:\n");
    fprintf(out, "  phase records: %llu used, %llu dropped, %llu unmatched start/end, %llu trace activities not phases\n",
            (unsigned long long)x->records, (unsigned long long)x->dropped, (unsigned long long)x->unmatched,
            (unsigned long long)x->ignored);
    fprintf(out, "  phases: %llu widened to one slice, %llu without a monitored host; %llu (resource, host) pairs unmonitored\n",
            (unsigned long long)a->widened, (unsigned long long)a->no_host, (unsigned long long)a->unmonitored);
    fprintf(out, "  monitoring: %.4g clipped above capacity, %llu gaps, %llu windows dropped (counter going backwards "
                 "or negative mean), %llu short windows merged\n",
            ad.clipped, (unsigned long long)ad.gaps, (unsigned long long)ad.dropped, (unsigned long long)ad.merged);
    fprintf(out, "  blocking: %llu intervals of resources not in the model\n", (unsigned long long)a->unknown_blocking);
}

/* A counter's increase over [t0, t1]: from the last sample at or before t0 (else the
 * first) to the first at or after t1 (else the last); -1 without samples. */
static double counter_over(const lp_g10_data *d, const char *metric, int64_t t0, int64_t t1)
{
    for (size_t k = 0; k < d->nseries; k++) {
        const lp_g10_series *s = &d->series[k];
        if (s->n < 2 || strcmp(lp_strtab_get(&d->strs, s->metric), metric) != 0)
            continue;
        size_t i = 0, j = s->n - 1;
        while (i + 1 < s->n && s->time[i + 1] <= t0)
            i++;
        while (j > i && s->time[j - 1] >= t1)
            j--;
        return s->value[j] - s->value[i];
    }
    return -1;
}

void g10_contention_of(const lp_g10_data *d, int64_t t0, int64_t t1, g10_contention *c)
{
    memset(c, 0, sizeof *c);
    c->wall_s = (double)(t1 - t0) / 1e9;
    double cpu = counter_over(d, "proc.cpu", t0, t1), delay = counter_over(d, "proc.delay", t0, t1);
    double psi = counter_over(d, "psi.cpu.some", t0, t1);
    if (cpu >= 0 && delay >= 0)
        c->have_delay = 1, c->cpu_s = cpu, c->delay_s = delay;
    if (psi >= 0)
        c->have_psi = 1, c->psi_s = psi;
}

void g10_print_contention(FILE *out, const g10_contention *c)
{
    double dshare = c->have_delay && c->cpu_s + c->delay_s > 0 ? c->delay_s / (c->cpu_s + c->delay_s) : 0;
    double pshare = c->have_psi && c->wall_s > 0 ? c->psi_s / c->wall_s : 0;
    if (dshare <= 0.1 && pshare <= 0.1)
        return;
    fprintf(out, "contention: ");
    if (c->have_delay)
        fprintf(out, "the recorded threads waited for a core %.0f%% of their runnable time (run-queue delay %.3g s "
                     "against %.3g s of CPU)", 100 * dshare, c->delay_s, c->cpu_s);
    if (c->have_psi)
        fprintf(out, "%sCPU pressure (PSI some) %.0f%% of the run", c->have_delay ? "; " : "", 100 * pshare);
    if (c->effective)
        fprintf(out, ":\n  the run was made under contention; Exact demands were scaled, window by window, to the "
                     "share of the resource the threads got (effective capacity, below)\n");
    else
        fprintf(out, ":\n  the run was made under contention; capacities and Exact rules assume free resources "
                     "(declare delay=proc.delay on the cpu resource for effective capacity, or try --fit-rules)\n");
}

void g10_print_path(FILE *out, const lp_g10_attr *a, const lp_g10_path *p)
{
    const lp_g10_model *m = a->m;
    char d[32], d2[32], d3[32];
    double L = p->on_path_ns > 0 ? (double)p->on_path_ns : 1;
    fprintf(out, "\ncritical path of the trace: %s, %llu elements; %s (%.1f%%) on %llu phases, %s on other activities "
                 "and messages\n",
            lp_fmt_dur(p->on_path_ns, d, sizeof d), (unsigned long long)p->elems, lp_fmt_dur(p->phase_ns, d2, sizeof d2),
            100 * (double)p->phase_ns / L, (unsigned long long)p->phase_elems, lp_fmt_dur(p->other_ns, d3, sizeof d3));
    if (!m->nres) {
        fprintf(out, "  no resources in the model: nothing to break the path down by\n");
        return;
    }
    fprintf(out, "  %-10s %20s %18s %24s\n", "resource", "on phases using it", "used on path", "bottlenecked on path");
    for (uint32_t r = 0; r < m->nres; r++) {
        const lp_g10_pathres *pr = &p->res[r];
        const lp_g10_res *res = &m->res[r];
        char used[48];
        if (res->kind == LP_G10_CONSUMABLE)
            snprintf(used, sizeof used, "%.4g %s x s", pr->used,
                     res->unit != LP_STR_NONE ? lp_g10_model_str(m, res->unit) : "units");
        else
            snprintf(used, sizeof used, "(blocking)");
        fprintf(out, "  %-10s %12s %6.1f%% %18s %15s %6.1f%%\n", lp_g10_model_str(m, res->name),
                lp_fmt_dur(pr->with_ns, d, sizeof d), 100 * (double)pr->with_ns / L, used,
                lp_fmt_dur(pr->bn_ns, d2, sizeof d2), 100 * (double)pr->bn_ns / L);
    }
}

void g10_json_path(lp_jsonw *j, const lp_g10_attr *a, const lp_g10_path *p)
{
    const lp_g10_model *m = a->m;
    lp_jsonw_kdbl(j, "length_s", (double)p->on_path_ns / 1e9);
    lp_jsonw_ku64(j, "elements", p->elems);
    lp_jsonw_ku64(j, "phase_elements", p->phase_elems);
    lp_jsonw_kdbl(j, "on_phases_s", (double)p->phase_ns / 1e9);
    lp_jsonw_kdbl(j, "on_other_s", (double)p->other_ns / 1e9);
    lp_jsonw_key(j, "resources");
    lp_jsonw_arr(j);
    for (uint32_t r = 0; r < m->nres; r++) {
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "name", lp_g10_model_str(m, m->res[r].name));
        lp_jsonw_kdbl(j, "with_s", (double)p->res[r].with_ns / 1e9);
        if (m->res[r].kind == LP_G10_CONSUMABLE)
            lp_jsonw_kdbl(j, "used", p->res[r].used);
        lp_jsonw_kdbl(j, "bottlenecked_s", (double)p->res[r].bn_ns / 1e9);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
}

void g10_print_text(FILE *out, const lp_g10_attr *a, const lp_g10_issues *is, uint64_t top, const char *model_from,
                    const g10_contention *c, const lp_g10_path *path)
{
    const lp_g10_exec *x = a->x;
    char d[32];
    fprintf(out, "grade10: makespan %s", lp_fmt_dur(x->end[0] - x->start[0], d, sizeof d));
    if (is)
        fprintf(out, " (replayed %s)", lp_fmt_dur(is->baseline, d, sizeof d));
    fprintf(out, ", %u phases (%u leaves)", x->n, x->nleaves);
    if (x->nhosts)
        fprintf(out, " on %u host%s", x->nhosts, x->nhosts == 1 ? "" : "s");
    else if (a->only_host != LP_STR_NONE)
        fprintf(out, " on host %s (the monitoring's)", lp_strtab_get(&a->strs, a->only_host));
    fprintf(out, "; %s mode", lp_g10_mode_name(a->mode));
    if (a->mode == LP_G10_SLICES)
        fprintf(out, ", %s slices", lp_fmt_dur(a->slice_ns, d, sizeof d));
    fprintf(out, "; model %s\n", model_from);
    if (c) {
        g10_contention ce = *c;
        for (uint32_t k = 0; k < a->ntl; k++)
            ce.effective |= a->tl[k].nwin_delay > 0;
        g10_print_contention(out, &ce);
    }
    if (is)
        print_issues(out, a, is, top);
    if (path)
        g10_print_path(out, a, path);
    print_bottlenecks(out, a);
    print_imbalance(out, a);
    print_resources(out, a);
    print_adjust(out, a);
}
