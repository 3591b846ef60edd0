/* kview.c: `cp --thread --html F` and `--chrome F` (kcli.h): the execution graph in the
 * activity-graph model (lp_kgraph_to_trace: threads as workers, states as activities,
 * wake-ups and packets as messages) drawn by the existing report and Chrome export, with
 * the thread's critical path marked instead of the whole trace's.
 *
 * The thread's path is carried over element by element: a state piece becomes the part
 * of the activity its edge became (same worker, same interval), a link the message the
 * link became (its id is the link's index), a gap the gap-filling activity of its worker
 * when there is one. Zero-length state pieces have no activity (the model's activities
 * are intervals) and are left out; nothing else is dropped. */
#include "kcli.h"
#include "longpole/base/alloc.h"

#include <string.h>

/* The activity of trace worker tw covering [s, e] (s < e), or UINT64_MAX. */
static uint64_t find_act(const lp_trace *t, uint32_t tw, int64_t s, int64_t e)
{
    uint64_t lo = t->wfirst[tw], hi = t->wfirst[tw + 1];
    while (lo < hi) { /* the first activity ending after s */
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->aend[mid] <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->wfirst[tw + 1] && t->astart[lo] <= s && t->aend[lo] >= e ? lo : UINT64_MAX;
}

/* The thread's path as a path of the trace t made from g. */
static lp_status to_cpath(const lp_kgraph *g, const lp_kcp *kp, const lp_trace *t, lp_cpath *out, lp_error *err)
{
    memset(out, 0, sizeof *out);
    uint64_t *msg = lp_malloc((g->nlinks ? g->nlinks : 1) * sizeof *msg);
    uint32_t *tw = lp_malloc((g->nworkers ? g->nworkers : 1) * sizeof *tw);
    out->e = lp_malloc((kp->n ? kp->n : 1) * sizeof *out->e);
    if (!msg || !tw || !out->e) {
        lp_free(msg), lp_free(tw), lp_free(out->e);
        out->e = NULL;
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    for (uint32_t l = 0; l < g->nlinks; l++)
        msg[l] = UINT64_MAX;
    for (uint64_t m = 0; m < t->nmsgs; m++)
        if (t->mid[m] < g->nlinks)
            msg[t->mid[m]] = m;
    for (uint32_t w = 0; w < g->nworkers; w++)
        tw[w] = LP_NONE32;
    for (size_t i = 0; i < kp->n; i++) {
        const lp_kcp_elem *e = &kp->e[i];
        lp_cp_elem c = {LP_CP_ACTIVITY, 0, 0, e->start, e->end};
        if (e->kind == LP_KCP_LINK) {
            if (e->ref >= g->nlinks || msg[e->ref] == UINT64_MAX)
                continue;
            c.kind = LP_CP_MESSAGE;
            c.index = msg[e->ref];
            c.worker = t->mdst[c.index];
        } else {
            if (e->end <= e->start || e->worker >= g->nworkers)
                continue;
            if (tw[e->worker] == LP_NONE32)
                tw[e->worker] = lp_trace_find_worker(t, lp_kgraph_worker_name(g, e->worker));
            if (tw[e->worker] == LP_NONE32 || (c.index = find_act(t, tw[e->worker], e->start, e->end)) == UINT64_MAX)
                continue;
            c.worker = tw[e->worker];
        }
        out->e[out->n++] = c;
    }
    out->start = kp->start, out->end = kp->end, out->total = kp->end - kp->start;
    lp_free(msg);
    lp_free(tw);
    return LP_OK;
}

static FILE *open_out(const char *path)
{
    return strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
}

static int close_out(FILE *f, const char *path, lp_status st, const lp_error *err)
{
    int bad = f != stdout ? fclose(f) != 0 : fflush(f) != 0;
    if (st)
        return cli_fail("cp", err);
    if (bad) {
        fprintf(stderr, "longpole cp: writing %s failed\n", path);
        return LP_EXIT_IO;
    }
    return 0;
}

static int write_html(const lp_trace *t, const lp_cpath *cp, const cli_kquery *q, const cli_kgraph *k, const char *path)
{
    const lp_kgraph *g = k->g;
    /* the graph's adjustments, as sentences (the non-zero ones) */
    cli_kadj adj[CLI_KADJ_MAX];
    size_t nadj = cli_kadjustments(k, adj), na = 0;
    char sent[CLI_KADJ_MAX][160];
    const char *sp[CLI_KADJ_MAX];
    for (size_t i = 0; i < nadj; i++)
        if (adj[i].v) {
            snprintf(sent[na], sizeof sent[na], "%llu %s", (unsigned long long)adj[i].v, adj[i].what);
            sp[na] = sent[na];
            na++;
        }
    char title[300];
    snprintf(title, sizeof title, "longpole: critical path of thread %s", lp_kgraph_worker_name(g, q->cp.worker));
    lp_report_data d;
    memset(&d, 0, sizeof d);
    d.trace = t;
    d.cp = cp;
    d.title = title;
    d.adjust = sp;
    d.nadjust = na;
    lp_report_opts ro;
    lp_report_opts_init(&ro);
    lp_error err;
    lp_error_clear(&err);
    lp_report *r;
    lp_status st = lp_report_new(&r, &d, &ro, &err);
    if (st)
        return cli_fail("cp", &err);
    FILE *f = open_out(path);
    if (!f) {
        lp_report_free(r);
        fprintf(stderr, "longpole cp: cannot write %s\n", path);
        return LP_EXIT_IO;
    }
    st = lp_report_write(r, f, &err);
    lp_report_free(r);
    return close_out(f, path, st, &err);
}

static int write_chrome(const lp_trace *t, const lp_cpath *cp, const char *path)
{
    FILE *f = open_out(path);
    if (!f) {
        fprintf(stderr, "longpole cp: cannot write %s\n", path);
        return LP_EXIT_IO;
    }
    lp_chrome_export_opts co = {cp, 0, "kernel execution graph"};
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_chrome_export(t, f, &co, &err);
    return close_out(f, path, st, &err);
}

int cli_kcp_views(const cli_kgraph *k, const cli_kquery *q, const cli_kout *o)
{
    lp_error err;
    lp_error_clear(&err);
    lp_trace *t = NULL;
    lp_diags ds;
    lp_diags_init(&ds, 5);
    lp_status st = lp_kgraph_to_trace(k->g, &ds, &t, &err);
    cli_print_diags(&ds, 5);
    lp_diags_release(&ds);
    if (st)
        return cli_fail("cp", &err);
    lp_cpath cp;
    int rc = 0;
    if ((st = to_cpath(k->g, &q->cp, t, &cp, &err)))
        rc = cli_fail("cp", &err);
    if (!rc && o->html)
        rc = write_html(t, &cp, q, k, o->html);
    if (!rc && o->chrome)
        rc = write_chrome(t, &cp, o->chrome);
    lp_cpath_release(&cp);
    lp_trace_free(t);
    return rc;
}
