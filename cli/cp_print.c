/* cp_print.c: the output of `cp` for a loaded trace (cli_cp_print; shared by cp and
 * demo): the headline (headline.h), the whole-trace critical path, its breakdown by
 * type, worker and operator and the conventional profile beside it, as text or one
 * JSON document (docs/formats/cp-json.md). On a span trace it says which definition it
 * used and points to `spans` (docs/trust.md). Text times are after the trace start;
 * columns are as wide as their longest name (never cut, so two names never print the
 * same). Stages: window, compute, print. */
#include "cli.h"
#include "base/util.h"
#include "longpole/analysis/critical-path/headline.h"

#include <string.h>

static const char *elem_type(const lp_trace *t, const lp_cp_elem *e)
{
    return e->kind == LP_CP_MESSAGE ? "message" : lp_trace_type_name(t, t->atype[e->index]);
}

/* Does an activity element cover only part of its activity? In a window the activity
 * was already cut: compare with the original trace's activity (same worker ids), the
 * one of the worker's tiling that covers the element. */
static int elem_partial(const lp_trace *t, const lp_trace *orig, const lp_cp_elem *e)
{
    if (e->start != t->astart[e->index] || e->end != t->aend[e->index])
        return 1;
    if (orig == t)
        return 0;
    uint64_t lo = orig->wfirst[e->worker], hi = orig->wfirst[e->worker + 1];
    while (lo < hi) { /* the first activity starting after the element's start */
        uint64_t mid = lo + (hi - lo) / 2;
        if (orig->astart[mid] <= e->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint64_t i = lo; i-- > orig->wfirst[e->worker];) {
        if (orig->aend[i] >= e->end)
            return orig->astart[i] != e->start || orig->aend[i] != e->end;
        if (orig->astart[i] < e->start)
            break;
    }
    return 0;
}

/* Column widths of the path's rows: as wide as the longest name shown. */
typedef struct cp_cols {
    int who, type, op;
} cp_cols;

static void elem_names(const lp_trace *t, const lp_cp_elem *e, char *who, size_t n, const char **type,
                       const char **op, char *idb, size_t nid)
{
    if (e->kind == LP_CP_MESSAGE) {
        snprintf(who, n, "%s -> %s", lp_trace_worker_name(t, t->msrc[e->index]),
                 lp_trace_worker_name(t, t->mdst[e->index]));
        lp_trace_msgid(t, t->mid[e->index], idb, nid);
        *type = "message";
        *op = idb[0] ? idb : "-";
    } else {
        snprintf(who, n, "%s", lp_trace_worker_name(t, e->worker));
        lp_str o = t->aop[e->index];
        *type = elem_type(t, e);
        *op = o == LP_STR_NONE ? "-" : lp_trace_str(t, o);
    }
}

static void widen(cp_cols *c, const lp_trace *t, const lp_cp_elem *e)
{
    char who[1024], idb[64];
    const char *type, *op;
    elem_names(t, e, who, sizeof who, &type, &op, idb, sizeof idb);
    int w = (int)strlen(who), ty = (int)strlen(type), o = (int)strlen(op);
    c->who = w > c->who ? w : c->who;
    c->type = ty > c->type ? ty : c->type;
    c->op = o > c->op ? o : c->op;
}

static void print_elem_row(const lp_trace *t, const lp_trace *orig, const lp_cp_elem *e, size_t k, int64_t base,
                           const cp_cols *c)
{
    char d[32], idb[64], who[1024];
    const char *type, *op;
    lp_fmt_dur(e->end - e->start, d, sizeof d);
    elem_names(t, e, who, sizeof who, &type, &op, idb, sizeof idb);
    printf("%6zu  %-*s %-*s %-*s %14lld %14lld %12s%s\n", k + 1, c->who, who, c->type, type, c->op, op,
           (long long)(e->start - base), (long long)(e->end - base), d,
           e->kind == LP_CP_ACTIVITY && elem_partial(t, orig, e) ? "  (part)" : "");
}

static void print_chain(const lp_trace *t, const lp_cpath *cp, int64_t base)
{
    printf("path (ns after the trace start): ");
    for (size_t k = cp->n; k-- > 0;) {
        const lp_cp_elem *e = &cp->e[k];
        char idb[64];
        if (e->kind == LP_CP_MESSAGE) {
            lp_trace_msgid(t, t->mid[e->index], idb, sizeof idb);
            printf("message%s%s [%lld,%lld]", idb[0] ? " " : "", idb, (long long)(e->start - base),
                   (long long)(e->end - base));
        } else {
            printf("%s[%lld,%lld]", lp_trace_worker_name(t, e->worker), (long long)(e->start - base),
                   (long long)(e->end - base));
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
    int width = 28;
    for (size_t i = 0; i < b->n && (!top || i < top); i++) {
        int l = (int)strlen(lp_breakdown_label(t, b, &b->rows[i]));
        width = l > width ? l : width;
    }
    printf("\n%-*s %12s %7s   %12s %7s\n", width, h, "on path", "share", "profile", "share");
    size_t shown = 0;
    for (size_t i = 0; i < b->n; i++) {
        const lp_brow *r = &b->rows[i];
        if (top && shown >= top) {
            printf("%-*s (%zu more rows; --top 0 shows all)\n", width, "...", b->n - i);
            break;
        }
        char d1[32], d2[32];
        double s1 = b->path_total ? 100.0 * (double)r->path_ns / (double)b->path_total : 0;
        double s2 = b->prof_total ? 100.0 * (double)r->prof_ns / (double)b->prof_total : 0;
        printf("%-*s %12s %6.1f%%   %12s %6.1f%%\n", width, lp_breakdown_label(t, b, r),
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

/* What every printer needs: the trace analysed (a window's projection or the trace),
 * the original (its start is the base of text times), the results. */
typedef struct cp_out {
    const lp_trace *t, *orig;
    const lp_cpath *cp;
    const lp_breakdown *bd;
    const lp_headline *head;
    int spans;                 /* a span trace: say which definition this is */
    const cli_cp_opts *o;
    int data_errors;
} cp_out;

#define SPANS_NOTE                                                                                                \
    "span trace: this is the whole-trace critical path, over every span including asynchronous ones that "      \
    "outlive their root; the request's path (from its root span, Jaeger UI's walk) is `longpole spans` "         \
    "(docs/trust.md, docs/analyses/span-critical-path.md)"

static void json_headline(lp_jsonw *j, const lp_headline *h)
{
    lp_jsonw_key(j, "headline");
    lp_jsonw_obj(j);
    lp_jsonw_kstr(j, "text", h->text);
    lp_jsonw_kstr(j, "by", lp_group_name(h->by));
    lp_jsonw_key(j, "path");
    lp_jsonw_arr(j);
    for (size_t i = 0; i < h->ntop; i++) {
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "key", h->top[i].label);
        lp_jsonw_ki64(j, "path_ns", h->top[i].path_ns);
        lp_jsonw_kdbl(j, "path_share", h->top[i].path_share);
        lp_jsonw_kdbl(j, "profile_share", h->top[i].prof_share);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_jsonw_key(j, "profile");
    lp_jsonw_arr(j);
    for (size_t i = 0; i < h->nblamed; i++) {
        lp_jsonw_obj(j);
        lp_jsonw_kstr(j, "key", h->blamed[i].label);
        lp_jsonw_ki64(j, "profile_ns", h->blamed[i].prof_ns);
        lp_jsonw_kdbl(j, "profile_share", h->blamed[i].prof_share);
        lp_jsonw_kdbl(j, "path_share", h->blamed[i].path_share);
        lp_jsonw_obj_end(j);
    }
    lp_jsonw_arr_end(j);
    lp_jsonw_ki64(j, "max_saving_ns", h->save_max_ns);
    lp_jsonw_key(j, "top_worker");
    if (h->top_worker)
        lp_jsonw_str(j, h->top_worker);
    else
        lp_jsonw_null(j);
    lp_jsonw_obj_end(j);
}

/* What the analysis did to the data (docs/trust.md): counted, never silent. */
static void json_adjustments(lp_jsonw *j, const cp_out *c, uint64_t cut)
{
    lp_jsonw_key(j, "adjustments");
    lp_jsonw_obj(j);
    lp_jsonw_ku64(j, "gaps_filled", c->t->ngaps);
    lp_jsonw_ku64(j, "skewed_messages_ignored", c->cp->nskew);
    lp_jsonw_ku64(j, "cycles_broken", c->cp->ncycles);
    lp_jsonw_ku64(j, "path_elements_cut_by_window", cut);
    lp_jsonw_obj_end(j);
}

static void json_elem(lp_jsonw *j, const cp_out *c, const lp_cp_elem *e)
{
    const lp_trace *t = c->t;
    lp_jsonw_obj(j);
    if (e->kind == LP_CP_MESSAGE) {
        char idb[64];
        lp_jsonw_kstr(j, "kind", "message");
        lp_jsonw_kstr(j, "from", lp_trace_worker_name(t, t->msrc[e->index]));
        lp_jsonw_kstr(j, "to", lp_trace_worker_name(t, t->mdst[e->index]));
        lp_jsonw_ki64(j, "start", e->start);
        lp_jsonw_ki64(j, "end", e->end);
        lp_jsonw_ki64(j, "duration_ns", e->end - e->start);
        lp_jsonw_key(j, "id");
        if (t->mid[e->index] == LP_MSGID_NONE)
            lp_jsonw_null(j);
        else
            lp_jsonw_str(j, lp_trace_msgid(t, t->mid[e->index], idb, sizeof idb));
    } else {
        lp_str op = t->aop[e->index];
        lp_jsonw_kstr(j, "kind", "activity");
        lp_jsonw_kstr(j, "worker", lp_trace_worker_name(t, e->worker));
        lp_jsonw_kstr(j, "type", elem_type(t, e));
        lp_jsonw_key(j, "operator");
        if (op == LP_STR_NONE)
            lp_jsonw_null(j);
        else
            lp_jsonw_str(j, lp_trace_str(t, op));
        lp_jsonw_ki64(j, "start", e->start);
        lp_jsonw_ki64(j, "end", e->end);
        lp_jsonw_ki64(j, "duration_ns", e->end - e->start);
        lp_jsonw_kbool(j, "partial", elem_partial(t, c->orig, e));
        lp_jsonw_kbool(j, "gap", (t->aflags[e->index] & LP_ACT_GAP) != 0);
    }
    lp_jsonw_obj_end(j);
}

/* Path elements a window cut (their activity reaches past a bound of the window). */
static uint64_t cut_by_window(const cp_out *c)
{
    uint64_t n = 0;
    if (c->orig == c->t)
        return 0;
    for (size_t k = 0; k < c->cp->n; k++) {
        const lp_cp_elem *e = &c->cp->e[k];
        n += e->kind == LP_CP_ACTIVITY && (e->start == c->o->from || e->end == c->o->to) &&
             elem_partial(c->t, c->orig, e);
    }
    return n;
}

static void json_output(const cp_out *c)
{
    const lp_trace *t = c->t;
    const lp_cpath *cp = c->cp;
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_kstr(&j, "command", "cp");
    if (c->o->runs) { /* one of several runs (runs.h): which, and its inputs */
        const lp_runs *r = c->o->runs;
        lp_jsonw_key(&j, "run");
        lp_jsonw_obj(&j);
        lp_jsonw_ku64(&j, "index", c->o->run + 1);
        lp_jsonw_ku64(&j, "of", r->n);
        lp_jsonw_key(&j, "inputs");
        lp_jsonw_arr(&j);
        for (size_t i = r->first[c->o->run]; i < r->first[c->o->run + 1]; i++)
            lp_jsonw_str(&j, r->paths[i]);
        lp_jsonw_arr_end(&j);
        lp_jsonw_obj_end(&j);
    }
    lp_jsonw_key(&j, "definition");
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "path", "whole-trace");
    lp_jsonw_key(&j, "note");
    if (c->spans)
        lp_jsonw_str(&j, SPANS_NOTE);
    else
        lp_jsonw_null(&j);
    lp_jsonw_obj_end(&j);
    json_headline(&j, c->head);
    lp_jsonw_key(&j, "trace");
    lp_jsonw_obj(&j);
    cli_json_trace_counts(&j, t);
    lp_jsonw_kbool(&j, "spans", c->spans);
    lp_jsonw_obj_end(&j);
    lp_jsonw_key(&j, "window");
    if (c->o->windowed) {
        lp_jsonw_obj(&j);
        lp_jsonw_ki64(&j, "from", c->o->from);
        lp_jsonw_ki64(&j, "to", c->o->to);
        lp_jsonw_obj_end(&j);
    } else {
        lp_jsonw_null(&j);
    }
    json_adjustments(&j, c, cut_by_window(c));
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
    for (size_t k = 0; k < cp->n; k++)
        json_elem(&j, c, &cp->e[k]);
    lp_jsonw_arr_end(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_key(&j, "breakdown");
    lp_jsonw_obj(&j);
    for (int g = 0; g < 3; g++)
        json_breakdown(&j, t, &c->bd[g]);
    lp_jsonw_obj_end(&j);
    lp_jsonw_kbool(&j, "input_errors", c->data_errors);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

/* The critical path of t (straight from the trace's columns, without the PAG) and its
 * three breakdowns (lp_cpath_analyse); on failure nothing is left. */
static lp_status compute(const lp_trace *t, lp_cpath *cp, lp_breakdown bd[3], lp_error *err)
{
    cli_progress_items("analysing", 0, 1);
    return lp_cpath_analyse(t, cp, bd, err);
}

/* The path's rows: all of them, or the first and last path_limit / 2. */
static void print_path(const cp_out *c)
{
    const lp_cpath *cp = c->cp;
    uint64_t path_limit = c->o->path_limit;
    char d[32];
    cp_cols w = {24, 16, 14};
    for (size_t k = 0; k < cp->n; k++) {
        if (path_limit && cp->n > path_limit && k == path_limit / 2)
            k = cp->n - (size_t)(path_limit - path_limit / 2);
        widen(&w, c->t, &cp->e[k]);
    }
    printf("\n%6s  %-*s %-*s %-*s %14s %14s %12s\n", "#", w.who, "worker", w.type, "type", w.op, "operator", "start",
           "end", "duration");
    for (size_t k = 0; k < cp->n; k++) {
        if (path_limit && cp->n > path_limit && k == path_limit / 2) {
            printf("%6s  ... %zu elements not shown (--path all shows every one)\n", "", cp->n - (size_t)path_limit);
            k = cp->n - (size_t)(path_limit - path_limit / 2);
        }
        print_elem_row(c->t, c->orig, &cp->e[k], k, c->orig->tmin, &w);
    }
    printf("%6s  total %s: the durations add up to the path's end minus its start\n", "",
           lp_fmt_dur(cp->total, d, sizeof d));
}

static void print_text(const cp_out *c)
{
    const lp_trace *t = c->t;
    const lp_cpath *cp = c->cp;
    const int64_t base = c->orig->tmin;
    char d[32];
    printf("%s\n", c->head->text);
    if (c->spans)
        printf("%s\n", SPANS_NOTE);
    printf("\ntrace: %u workers, %llu activities (+%llu gaps filled), %llu messages", t->nworkers,
           (unsigned long long)(t->nacts - t->ngaps), (unsigned long long)t->ngaps, (unsigned long long)t->nmsgs);
    if (c->o->windowed)
        printf(", window [%lld, %lld]", (long long)(c->o->from - base), (long long)(c->o->to - base));
    printf("\ntimes are ns after the trace start (%lld)\n", (long long)base);
    lp_fmt_dur(cp->total, d, sizeof d);
    printf("critical path: %s", d);
    if (cp->total >= 1000)
        printf(" (%lld ns)", (long long)cp->total);
    printf(" from %lld to %lld, %zu element%s\n", (long long)(cp->start - base), (long long)(cp->end - base), cp->n,
           cp->n == 1 ? "" : "s");
    if (cp->nskew)
        printf("note: %llu message(s) received before sent were left out (clock skew)\n",
               (unsigned long long)cp->nskew);
    if (cp->ncycles)
        printf("note: %llu zero-time message cycle(s) broken by ignoring one message each\n",
               (unsigned long long)cp->ncycles);
    uint64_t cut = cut_by_window(c);
    if (cut)
        printf("note: %llu path element(s) cut by the window, marked (part)\n", (unsigned long long)cut);
    if (cp->n && cp->n <= 12)
        print_chain(t, cp, base);
    if (cp->n)
        print_path(c);
    for (int k = 0; k < 3; k++)
        print_breakdown(t, &c->bd[k], (size_t)c->o->top);
}

int cli_cp_print(const lp_trace *t0, const cli_cp_opts *o, int data_errors)
{
    lp_error err;
    lp_error_clear(&err);
    const lp_trace *t = t0;
    lp_trace *wt = NULL;
    int rc = cli_refuse_empty("cp", t0);
    if (!rc && o->windowed)
        rc = cli_refuse_window("cp", t0, NULL, o->from, o->to);
    if (rc)
        return rc;
    if (o->windowed) {
        if (lp_trace_window(t0, o->from, o->to, &wt, &err))
            return cli_fail("cp", &err);
        t = wt;
        if ((rc = cli_refuse_window("cp", t0, wt, o->from, o->to))) {
            lp_trace_free(wt);
            return rc;
        }
    }
    lp_cpath cp;
    lp_breakdown bd[3];
    lp_headline head;
    if (compute(t, &cp, bd, &err)) {
        lp_trace_free(wt);
        return cli_fail("cp", &err);
    }
    lp_status st = lp_headline_make(t, &cp, bd, &head, &err);
    cli_progress_done(); /* issue 6 */
    if (!st) {
        cp_out c = {t, t0, &cp, bd, &head, lp_trace_is_spans(t0), o, data_errors};
        if (o->json)
            json_output(&c);
        else
            print_text(&c);
        lp_headline_release(&head);
    }
    for (int k = 0; k < 3; k++)
        lp_breakdown_release(&bd[k]);
    lp_cpath_release(&cp);
    lp_trace_free(wt);
    if (st)
        return cli_fail("cp", &err);
    if (fflush(stdout) != 0)
        return LP_EXIT_IO;
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
