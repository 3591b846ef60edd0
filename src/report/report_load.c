/* report_load.c: loading whatever a report is asked to show (report.h, lp_report_load):
 * each input is classified (lp_report_detect) as a trace, a span trace or a request log,
 * then every graph input goes through lp_trace_load (span files also into an lp_spans
 * table for the span section), and the request logs through the Mystery Machine's
 * pipeline exactly as `longpole requests` runs it: lp_reqlog_load, attributes, clock-skew
 * correction (skew.h), the causal model (loaded or inferred, causal.h), categories and
 * lp_reqstats_run. A server calls the same function, so its views equal the report's.
 *
 * Invariants: data problems go to the caller's diagnostics sink once (span files read a
 * second time for the span table report to a private sink, unless they were the only
 * graph inputs, in which case the table is read once and turned into the graph with
 * lp_spans_to_builder); on failure everything loaded so far is released.
 */
#include "longpole/report/report.h"
#include "longpole/base/alloc.h"
#include "longpole/load/inputs.h"
#include "longpole/codec/io.h"
#include "longpole/codec/json.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/spanfmt.h"
#include "longpole/load/load.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ---- detection ---------------------------------------------------------------------- */

/* Does the first line of a CSV/TSV name both an `event` and a `task` column, or does a
 * JSON line have both keys? */
static int looks_like_reqlog(const char *s, size_t n)
{
    size_t e = 0;
    while (e < n && s[e] != '\n')
        e++;
    if (e < n && e && s[e - 1] == '\r')
        e--;
    size_t i = 0;
    while (i < e && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i < e && s[i] == '{') {
        int ev = 0, task = 0;
        lp_json_head h;
        lp_json_head_init(&h, s + i, e - i);
        while (lp_json_head_next(&h)) {
            ev |= lp_json_head_is(&h, "event");
            task |= lp_json_head_is(&h, "task");
        }
        return ev && task;
    }
    int ev = 0, task = 0;
    char sep = memchr(s, '\t', e) ? '\t' : ',';
    for (size_t a = 0; a <= e;) {
        size_t b = a;
        while (b < e && s[b] != sep)
            b++;
        size_t x = a, y = b;
        while (x < y && (isspace((unsigned char)s[x]) || s[x] == '"'))
            x++;
        while (y > x && (isspace((unsigned char)s[y - 1]) || s[y - 1] == '"'))
            y--;
        if (y - x == 5 && strncasecmp(s + x, "event", 5) == 0)
            ev = 1;
        if (y - x == 4 && strncasecmp(s + x, "task", 4) == 0)
            task = 1;
        a = b + 1;
    }
    return ev && task;
}

lp_status lp_report_detect(const char *path, lp_report_kind *kind, lp_error *err)
{
    *kind = LP_RK_TRACE;
    struct stat sb;
    if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return LP_OK;
    lp_input *in;
    lp_status st = lp_input_open(&in, path, err);
    if (st)
        return st;
    const void *head;
    size_t nh;
    if ((st = lp_input_peek(in, &head, &nh, err))) {
        lp_input_close(in);
        return lp_error_push(err, "reading %s", path);
    }
    if (lp_span_format_detect(head, nh, path)) {
        *kind = LP_RK_SPANS;
        lp_input_close(in);
        return LP_OK;
    }
    if (nh >= 8 && (memcmp(head, "longpole", 8) == 0 || memcmp(head, LP_LPTB_MAGIC, 8) == 0)) {
        lp_input_close(in);
        return LP_OK;
    }
    char buf[4096];
    size_t n = 0, got;
    while (n < sizeof buf && !(st = lp_input_read(in, buf + n, sizeof buf - n, &got, err)) && got)
        n += got;
    lp_input_close(in);
    if (st)
        return lp_error_push(err, "reading %s", path);
    if (looks_like_reqlog(buf, n))
        *kind = LP_RK_REQLOG;
    return LP_OK;
}

/* ---- loading ------------------------------------------------------------------------ */

void lp_report_inputs_release(lp_report_inputs *in)
{
    lp_trace_free(in->trace);
    if (in->has_spans)
        lp_spans_release(&in->spans);
    if (in->has_stats)
        lp_reqstats_release(&in->stats);
    lp_reqcat_release(&in->cats);
    if (in->has_model)
        lp_causal_release(&in->model);
    if (in->has_skew)
        lp_skew_release(&in->skew);
    lp_free(in->segmap);
    lp_reqlog_free(in->reqlog);
    for (size_t i = 0; i < in->nnames; i++)
        lp_free(in->names[i]);
    lp_free(in->names);
    lp_diags_release(&in->quiet);
    memset(in, 0, sizeof *in);
    lp_reqcat_init(&in->cats);
    lp_diags_init(&in->quiet, 0);
}

static lp_status load_requests(lp_report_inputs *in, const char *const *paths, size_t n, const lp_report_load_opts *o,
                               lp_diags *diags, lp_error *err)
{
    lp_reqlog_opts def;
    const lp_reqlog_opts *ro = o->reqlog;
    if (!ro) {
        lp_reqlog_opts_init(&def);
        ro = &def;
    }
    lp_reqlog_opts lo;
    memcpy(&lo, ro, sizeof lo);
    /* col[] and attr_* may point into ro->strbuf: re-point them into the copy */
    for (int k = 0; k < LP_RL_NROLES; k++)
        if (ro->col[k] >= ro->strbuf && ro->col[k] < ro->strbuf + sizeof ro->strbuf)
            lo.col[k] = lo.strbuf + (ro->col[k] - ro->strbuf);
    for (unsigned k = 0; k < ro->nattr && k < LP_REQLOG_MAXATTR; k++) {
        if (ro->attr_name[k] >= ro->strbuf && ro->attr_name[k] < ro->strbuf + sizeof ro->strbuf)
            lo.attr_name[k] = lo.strbuf + (ro->attr_name[k] - ro->strbuf);
        if (ro->attr_col[k] >= ro->strbuf && ro->attr_col[k] < ro->strbuf + sizeof ro->strbuf)
            lo.attr_col[k] = lo.strbuf + (ro->attr_col[k] - ro->strbuf);
    }
    lo.threads = o->threads;
    if (o->progress) {
        lo.progress = o->progress;
        lo.progress_ctx = o->progress_ctx;
    }
    lp_status st = lp_reqlog_load(paths, n, &lo, diags, &in->reqlog, err);
    if (st)
        return st;
    lp_reqlog *rl = in->reqlog;
    if (o->attrs) {
        uint64_t unknown;
        if ((st = lp_reqlog_load_attrs(rl, o->attrs, &lo, diags, &unknown, err)))
            return st;
    }
    if (!o->no_skew) {
        lp_skew_opts so = {o->threads, o->reference};
        if ((st = lp_skew_estimate(rl, &so, &in->skew, err)))
            return st;
        in->has_skew = 1;
        lp_skew_apply(&in->skew, rl);
    }
    if (o->model) {
        if ((st = lp_causal_load(&in->model, o->model, err)))
            return st;
    } else if ((st = lp_causal_init(&in->model, err))) {
        return st;
    }
    in->has_model = 1;
    if (o->categories && (st = lp_reqcat_load(&in->cats, o->categories, err)))
        return st;
    if ((st = lp_causal_map(&in->model, rl, &in->segmap, err)))
        return st;
    if (!o->model) {
        lp_causal_refine_opts fo;
        memset(&fo, 0, sizeof fo);
        fo.threads = o->threads;
        if ((st = lp_causal_refine(&in->model, rl, in->segmap, &fo, err)))
            return st;
    }
    if ((st = lp_causal_finish(&in->model, o->model ? NULL : rl, in->segmap, err)))
        return st;
    if ((st = lp_reqcat_assign(&in->cats, &in->model, err)))
        return st;
    /* strata: as asked, or latency quintiles and every attribute of the logs */
    const char *strat[1 + 64];
    const char *const *sv = o->stratify;
    uint32_t ns = o->nstratify;
    if (!sv) {
        ns = 0;
        strat[ns++] = "latency:5";
        for (uint32_t a = 0; a < rl->nattrs && ns < 1 + 64; a++)
            strat[ns++] = lp_reqlog_str(rl, rl->attr_name[a]);
        sv = strat;
    }
    lp_reqstats_opts so;
    memset(&so, 0, sizeof so);
    so.threads = o->threads;
    so.outlier_share = o->outliers > 0 ? o->outliers : 0.05;
    so.buckets = o->buckets ? o->buckets : 20;
    so.stratify = sv;
    so.nstratify = ns;
    if ((st = lp_reqstats_run(&in->model, rl, in->segmap, &in->cats, &so, &in->stats, err)))
        return st;
    in->has_stats = 1;
    return LP_OK;
}

lp_status lp_report_load(lp_report_inputs *in, const char *const *paths, size_t npaths, const lp_report_load_opts *o,
                         lp_diags *diags, lp_error *err)
{
    memset(in, 0, sizeof *in);
    lp_reqcat_init(&in->cats);
    lp_diags_init(&in->quiet, 0);
    in->diags = diags;
    lp_report_load_opts def;
    if (!o) {
        memset(&def, 0, sizeof def);
        o = &def;
    }
    if (!npaths)
        return lp_error_set(err, LP_ERR_ARG, "no input given");
    lp_status st = LP_OK;
    in->names = lp_calloc(npaths, sizeof *in->names);
    if (!in->names)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < npaths; i++) {
        if (!(in->names[i] = lp_strndup(paths[i], strlen(paths[i])))) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            goto fail;
        }
        in->nnames = i + 1;
    }
    lp_input_item *items = NULL;
    size_t nitems = 0;
    if ((st = lp_inputs_expand(paths, npaths, &items, &nitems, err)))
        goto fail;
    const char **graph = lp_calloc(nitems + 1, sizeof *graph), **spans = lp_calloc(nitems + 1, sizeof *spans),
               **logs = lp_calloc(nitems + 1, sizeof *logs);
    size_t ng = 0, ns = 0, nl = 0;
    if (!graph || !spans || !logs) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nitems; i++) {
        lp_report_kind k = LP_RK_TRACE;
        if (o->requests)
            k = LP_RK_REQLOG;
        else if (items[i].kind == LP_INPUT_FILE && (st = lp_report_detect(items[i].path, &k, err)))
            goto done;
        if (o->format && !o->requests)
            k = lp_span_format_find(o->format) ? LP_RK_SPANS : LP_RK_TRACE;
        if (k == LP_RK_REQLOG) {
            logs[nl++] = items[i].path;
        } else {
            graph[ng++] = items[i].path;
            if (k == LP_RK_SPANS)
                spans[ns++] = items[i].path;
        }
    }
    lp_load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.format = o->format;
    lo.progress = o->progress;
    lo.progress_ctx = o->progress_ctx;
    if (ng && ns == ng) {
        /* only span files: one reading into the table, then the graph from it */
        lp_spans_init(&in->spans, diags);
        in->has_spans = 1;
        if ((st = lp_spans_load(&in->spans, spans, ns, o->format, &lo, err)))
            goto done;
        lp_builder *b;
        if ((st = lp_builder_new(&b, diags, NULL, err)))
            goto done;
        if ((st = lp_spans_to_builder(&in->spans, b, err))) {
            lp_builder_free(b);
            goto done;
        }
        if ((st = lp_builder_finish(b, &in->trace, err)))
            goto done;
    } else if (ng) {
        if ((st = lp_trace_load(graph, ng, &lo, diags, &in->trace, err)))
            goto done;
        if (ns) {
            lp_spans_init(&in->spans, &in->quiet);
            in->has_spans = 1;
            lo.format = NULL;
            if ((st = lp_spans_load(&in->spans, spans, ns, NULL, &lo, err)))
                goto done;
        }
    }
    if (nl && (st = load_requests(in, logs, nl, o, diags, err)))
        goto done;
done:
    lp_free(graph);
    lp_free(spans);
    lp_free(logs);
    lp_inputs_free(items, nitems);
    if (st)
        goto fail;
    lp_report_data *d = &in->data;
    memset(d, 0, sizeof *d);
    d->trace = in->trace;
    d->spans = in->has_spans ? &in->spans : NULL;
    if (in->has_stats) {
        d->reqlog = in->reqlog;
        d->model = &in->model;
        d->cats = &in->cats;
        d->reqstats = &in->stats;
        d->skew_corrected = in->has_skew;
        d->model_file = o->model;
    }
    d->inputs = (const char *const *)in->names;
    d->ninputs = in->nnames;
    if (diags) {
        d->input_errors = diags->nerrors;
        d->input_warnings = diags->nwarnings;
    }
    return LP_OK;
fail:
    lp_report_inputs_release(in);
    return st;
}
