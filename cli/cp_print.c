/* cp_print.c: the output of `cp` for a loaded trace (cli_cp_print; shared by cp and
 * demo): the whole-trace critical path, its breakdown by type, worker and operator and
 * the conventional profile beside it, as text or one JSON document
 * (docs/formats/cp-json.md). Stages: window, compute, print. */
#include "cli.h"
#include "base/util.h"

#include <string.h>

static const char *elem_type(const lp_trace *t, const lp_cp_elem *e)
{
    return e->kind == LP_CP_MESSAGE ? "message" : lp_trace_type_name(t, t->atype[e->index]);
}

static void print_elem_row(const lp_trace *t, const lp_cp_elem *e, size_t k, int64_t base)
{
    char d[32], idb[64];
    lp_fmt_dur(e->end - e->start, d, sizeof d);
    if (e->kind == LP_CP_MESSAGE) {
        char who[160];
        snprintf(who, sizeof who, "%s -> %s", lp_trace_worker_name(t, t->msrc[e->index]),
                 lp_trace_worker_name(t, t->mdst[e->index]));
        lp_trace_msgid(t, t->mid[e->index], idb, sizeof idb);
        printf("%6zu  %-24s %-16s %-14s %14lld %14lld %12s\n", k + 1, who, "message", idb[0] ? idb : "-",
               (long long)(e->start - base), (long long)(e->end - base), d);
    } else {
        lp_str op = t->aop[e->index];
        int partial = e->start != t->astart[e->index] || e->end != t->aend[e->index];
        printf("%6zu  %-24s %-16s %-14s %14lld %14lld %12s%s\n", k + 1, lp_trace_worker_name(t, e->worker),
               elem_type(t, e), op == LP_STR_NONE ? "-" : lp_trace_str(t, op), (long long)(e->start - base),
               (long long)(e->end - base), d, partial ? "  (part)" : "");
    }
}

static void print_chain(const lp_trace *t, const lp_cpath *cp)
{
    printf("path: ");
    for (size_t k = cp->n; k-- > 0;) {
        const lp_cp_elem *e = &cp->e[k];
        char idb[64];
        if (e->kind == LP_CP_MESSAGE) {
            lp_trace_msgid(t, t->mid[e->index], idb, sizeof idb);
            printf("message%s%s [%lld,%lld]", idb[0] ? " " : "", idb, (long long)e->start, (long long)e->end);
        } else {
            printf("%s[%lld,%lld]", lp_trace_worker_name(t, e->worker), (long long)e->start, (long long)e->end);
        }
        if (k)
            printf(" <- ");
    }
    printf("\n");
}

static void print_breakdown(const lp_trace *t, const lp_breakdown *b, size_t top)
{
    char h[32];
    snprintf(h, sizeof h, "by %s", lp_group_name(b->by));
    printf("\n%-28s %12s %7s   %12s %7s\n", h, "on path", "share", "profile", "share");
    size_t shown = 0;
    for (size_t i = 0; i < b->n; i++) {
        const lp_brow *r = &b->rows[i];
        if (top && shown >= top) {
            printf("%-28s (%zu more rows; --top 0 shows all)\n", "...", b->n - i);
            break;
        }
        char d1[32], d2[32];
        double s1 = b->path_total ? 100.0 * (double)r->path_ns / (double)b->path_total : 0;
        double s2 = b->prof_total ? 100.0 * (double)r->prof_ns / (double)b->prof_total : 0;
        printf("%-28.28s %12s %6.1f%%   %12s %6.1f%%\n", lp_breakdown_label(t, b, r),
               lp_fmt_dur(r->path_ns, d1, sizeof d1), s1, lp_fmt_dur(r->prof_ns, d2, sizeof d2), s2);
        shown++;
    }
    if (b->by == LP_BY_TYPE && b->waiting_ns) {
        char d[32];
        printf("(waiting, never on the path, not in the profile: %s)\n", lp_fmt_dur(b->waiting_ns, d, sizeof d));
    }
    if (b->by == LP_BY_TYPE && b->gap_ns) {
        char d[32];
        printf("(gaps filled as unknown, not in the input, so not in the profile: %s)\n",
               lp_fmt_dur(b->gap_ns, d, sizeof d));
    }
}

static void json_breakdown(lp_jsonw *j, const lp_trace *t, const lp_breakdown *b)
{
    lp_jsonw_key(j, lp_group_name(b->by));
    lp_jsonw_obj(j);
    lp_jsonw_ki64(j, "path_total_ns", b->path_total);
    lp_jsonw_ki64(j, "profile_total_ns", b->prof_total);
    lp_jsonw_ki64(j, "waiting_ns", b->waiting_ns);
    lp_jsonw_ki64(j, "unknown_gaps_ns", b->gap_ns);
    lp_jsonw_key(j, "rows");
    lp_jsonw_arr(j);
    for (size_t i = 0; i < b->n; i++) {
        const lp_brow *r = &b->rows[i];
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "key", lp_breakdown_label(t, b, r));
        lp_jsonw_ki64(j, "path_ns", r->path_ns);
        lp_jsonw_kdbl(j, "path_share", b->path_total ? (double)r->path_ns / (double)b->path_total : 0);
        lp_jsonw_ku64(j, "path_elements", r->path_n);
        lp_jsonw_ki64(j, "profile_ns", r->prof_ns);
        lp_jsonw_kdbl(j, "profile_share", b->prof_total ? (double)r->prof_ns / (double)b->prof_total : 0);
        lp_jsonw_ku64(j, "profile_count", r->prof_n);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_jsonw_obj_end(j);
}

static void json_output(const lp_trace *t, const lp_cpath *cp, lp_breakdown *bd, int windowed, int64_t from,
                        int64_t to, int data_errors)
{
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(&j, "command", "cp");
    lp_jsonw_key(&j, "trace");
    lp_jsonw_obj(&j);
    lp_jsonw_ku64(&j, "workers", t->nworkers);
    lp_jsonw_ku64(&j, "activities", t->nacts - t->ngaps);
    lp_jsonw_ku64(&j, "gaps", t->ngaps);
    lp_jsonw_ku64(&j, "messages", t->nmsgs);
    lp_jsonw_ku64(&j, "skewed_messages", t->nskew);
    lp_jsonw_ki64(&j, "start", t->tmin);
    lp_jsonw_ki64(&j, "end", t->tmax);
    lp_jsonw_obj_end(&j);
    lp_jsonw_key(&j, "window");
    if (windowed) {
        lp_jsonw_obj(&j);
        lp_jsonw_ki64(&j, "from", from);
        lp_jsonw_ki64(&j, "to", to);
        lp_jsonw_obj_end(&j);
    } else {
        lp_jsonw_null(&j);
    }
    lp_jsonw_key(&j, "critical_path");
    lp_jsonw_obj(&j);
    lp_jsonw_ki64(&j, "start", cp->start);
    lp_jsonw_ki64(&j, "end", cp->end);
    lp_jsonw_ki64(&j, "total_ns", cp->total);
    lp_jsonw_ku64(&j, "elements", cp->n);
    lp_jsonw_ku64(&j, "cycles_broken", cp->ncycles);
    lp_jsonw_ku64(&j, "skewed_messages_ignored", cp->nskew);
    lp_jsonw_key(&j, "path");
    lp_jsonw_arr(&j);
    for (size_t k = 0; k < cp->n; k++) {
        const lp_cp_elem *e = &cp->e[k];
        lp_jsonw_obj(&j);
        if (e->kind == LP_CP_MESSAGE) {
            char idb[64];
            lp_jsonw_kstr(&j, "kind", "message");
            lp_jsonw_kstr(&j, "from", lp_trace_worker_name(t, t->msrc[e->index]));
            lp_jsonw_kstr(&j, "to", lp_trace_worker_name(t, t->mdst[e->index]));
            lp_jsonw_ki64(&j, "start", e->start);
            lp_jsonw_ki64(&j, "end", e->end);
            lp_jsonw_ki64(&j, "duration_ns", e->end - e->start);
            lp_jsonw_key(&j, "id");
            if (t->mid[e->index] == LP_MSGID_NONE)
                lp_jsonw_null(&j);
            else
                lp_jsonw_str(&j, lp_trace_msgid(t, t->mid[e->index], idb, sizeof idb));
        } else {
            lp_str op = t->aop[e->index];
            lp_jsonw_kstr(&j, "kind", "activity");
            lp_jsonw_kstr(&j, "worker", lp_trace_worker_name(t, e->worker));
            lp_jsonw_kstr(&j, "type", elem_type(t, e));
            lp_jsonw_key(&j, "operator");
            if (op == LP_STR_NONE)
                lp_jsonw_null(&j);
            else
                lp_jsonw_str(&j, lp_trace_str(t, op));
            lp_jsonw_ki64(&j, "start", e->start);
            lp_jsonw_ki64(&j, "end", e->end);
            lp_jsonw_ki64(&j, "duration_ns", e->end - e->start);
            lp_jsonw_kbool(&j, "partial", e->start != t->astart[e->index] || e->end != t->aend[e->index]);
            lp_jsonw_kbool(&j, "gap", (t->aflags[e->index] & LP_ACT_GAP) != 0);
        }
        lp_jsonw_obj_end(&j);
    }
    lp_jsonw_arr_end(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_key(&j, "breakdown");
    lp_jsonw_obj(&j);
    for (int g = 0; g < 3; g++)
        json_breakdown(&j, t, &bd[g]);
    lp_jsonw_obj_end(&j);
    lp_jsonw_kbool(&j, "input_errors", data_errors);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

/* The critical path of t and its three breakdowns; on failure nothing is left. */
static lp_status compute(const lp_trace *t, lp_cpath *cp, lp_breakdown bd[3], lp_error *err)
{
    lp_pag g;
    memset(bd, 0, 3 * sizeof *bd);
    if (lp_pag_build(t, &g, err))
        return err->status;
    lp_status st = lp_cpath_compute(&g, cp, err);
    lp_pag_release(&g);
    if (st)
        return st;
    for (int k = 0; k < 3; k++)
        if ((st = lp_breakdown_compute(t, cp, (lp_group)k, &bd[k], err))) {
            for (int q = 0; q < k; q++)
                lp_breakdown_release(&bd[q]);
            lp_cpath_release(cp);
            return st;
        }
    return LP_OK;
}

/* The path's rows: all of them, or the first and last path_limit / 2. */
static void print_path(const lp_trace *t, const lp_cpath *cp, uint64_t path_limit)
{
    char d[32];
    printf("\n%6s  %-24s %-16s %-14s %14s %14s %12s\n", "#", "worker", "type", "operator", "start", "end",
           "duration");
    for (size_t k = 0; k < cp->n; k++) {
        if (path_limit && cp->n > path_limit && k == path_limit / 2) {
            printf("%6s  ... %zu elements not shown (--path all shows every one)\n", "", cp->n - (size_t)path_limit);
            k = cp->n - (size_t)(path_limit - path_limit / 2);
        }
        print_elem_row(t, &cp->e[k], k, t->tmin);
    }
    printf("%6s  total %s: the durations add up to the path's end minus its start\n", "",
           lp_fmt_dur(cp->total, d, sizeof d));
}

static void print_text(const lp_trace *t, const lp_cpath *cp, const lp_breakdown bd[3], const cli_cp_opts *o)
{
    char d[32];
    printf("trace: %u workers, %llu activities (+%llu gaps filled), %llu messages", t->nworkers,
           (unsigned long long)(t->nacts - t->ngaps), (unsigned long long)t->ngaps, (unsigned long long)t->nmsgs);
    if (o->windowed)
        printf(", window [%lld, %lld]", (long long)o->from, (long long)o->to);
    printf("\ntimes are ns after %lld\n", (long long)t->tmin);
    lp_fmt_dur(cp->total, d, sizeof d);
    printf("critical path: %s", d);
    if (cp->total >= 1000)
        printf(" (%lld ns)", (long long)cp->total);
    printf(" from %lld to %lld, %zu element%s\n", (long long)(cp->start - t->tmin), (long long)(cp->end - t->tmin),
           cp->n, cp->n == 1 ? "" : "s");
    if (cp->nskew)
        printf("note: %llu message(s) received before sent were left out (clock skew)\n",
               (unsigned long long)cp->nskew);
    if (cp->ncycles)
        printf("note: %llu zero-time message cycle(s) broken by ignoring one message each\n",
               (unsigned long long)cp->ncycles);
    if (cp->n && cp->n <= 12)
        print_chain(t, cp);
    if (cp->n)
        print_path(t, cp, o->path_limit);
    for (int k = 0; k < 3; k++)
        print_breakdown(t, &bd[k], (size_t)o->top);
}

int cli_cp_print(const lp_trace *t0, const cli_cp_opts *o, int data_errors)
{
    lp_error err;
    lp_error_clear(&err);
    const lp_trace *t = t0;
    lp_trace *wt = NULL;
    if (o->windowed) {
        if (lp_trace_window(t0, o->from, o->to, &wt, &err))
            return cli_fail("cp", &err);
        t = wt;
    }
    lp_cpath cp;
    lp_breakdown bd[3];
    cli_progress_items("analysing", 0, 0); /* issue 6 */
    if (compute(t, &cp, bd, &err)) {
        lp_trace_free(wt);
        return cli_fail("cp", &err);
    }
    cli_progress_done(); /* issue 6 */
    if (o->json)
        json_output(t, &cp, bd, o->windowed, o->from, o->to, data_errors);
    else
        print_text(t, &cp, bd, o);
    for (int k = 0; k < 3; k++)
        lp_breakdown_release(&bd[k]);
    lp_cpath_release(&cp);
    lp_trace_free(wt);
    if (fflush(stdout) != 0)
        return LP_EXIT_IO;
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
