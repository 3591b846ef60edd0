/* report_timeline.c: the timeline section (docs/report.md "Timeline", "Aggregation"):
 * one row per worker, activities coloured by type, messages as arrows, the whole-trace
 * critical path (cpath.h) highlighted, with zoom, pan and hover in the script.
 *
 * What it embeds (binary blocks, base64, decoded by the script; formats in docs/report.md):
 *  - a pyramid of levels: level k has bins * 4^k bins per row over the trace's span;
 *    each bin says its dominant type, busy share and critical-path share (report_bins.c),
 *    stored per row as runs of equal bins. Levels are added while they stay within the
 *    byte budget and add detail (not past one bin per nanosecond, not past the point
 *    where the exact items take over, nor when bins get finer than the activities);
 *  - the activities themselves (type, operator, start, end) when the trace has at most
 *    exact_acts, drawn one by one once a view holds few enough of them;
 *  - the messages (at most exact_msgs), drawn as arrows when a view holds few enough;
 *  - the critical path's elements (at most exact_cp), drawn one by one when a view holds
 *    few enough, else as the per-bin coverage.
 * What is not embedded is said in the section and in the view's status line: nothing is
 * left out silently. The state is the encoded blocks (built once; writing only copies).
 */
#include "report_int.h"
#include "longpole/base/alloc.h"
#include "longpole/model/span.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define TL_MAX_LEVELS 8
#define TL_EXACT_VIEW 30000   /* the script draws items one by one below this many in view */
#define TL_PX 2048            /* widest plot the levels are made for */

typedef struct tl_level {
    uint32_t n;               /* bins per row */
    rp_buf b;                 /* runs of every row */
    uint64_t runs;
} tl_level;

typedef struct tl_state {
    tl_level lv[TL_MAX_LEVELS];
    uint32_t nlv;
    char lv_stop[160];        /* why there is no deeper level */
    rp_buf acts, msgs, cp;    /* exact blocks (empty if left out) */
    int has_acts, has_msgs, has_cp;
    char acts_why[160], msgs_why[160], cp_why[160];
    lp_str *ops;              /* dense operator ids -> string (for names) */
    uint32_t nops;
    int64_t t0, t1;           /* binned span [t0, t1) */
    uint64_t ncp_acts;        /* critical-path elements that are activities */
} tl_state;

static int tl_applies(const lp_report_data *d) { return d->trace != NULL && d->trace->nworkers > 0; }

static void tl_release(void *state)
{
    tl_state *s = state;
    if (!s)
        return;
    for (uint32_t k = 0; k < TL_MAX_LEVELS; k++)
        rp_buf_release(&s->lv[k].b);
    rp_buf_release(&s->acts);
    rp_buf_release(&s->msgs);
    rp_buf_release(&s->cp);
    lp_free(s->ops);
    lp_free(s);
}

static void fmt_count(char *buf, size_t n, uint64_t v)
{
    char tmp[32];
    int k = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v), o = 0;
    for (int i = 0; i < k && (size_t)o + 2 < n; i++) {
        buf[o++] = tmp[i];
        if ((k - i - 1) % 3 == 0 && i + 1 < k)
            buf[o++] = ',';
    }
    buf[o] = '\0';
}

/* Per-worker critical-path intervals (CSR). */
typedef struct cp_rows {
    uint64_t *off;            /* [nworkers + 1] */
    int64_t *s, *e;
} cp_rows;

static lp_status cp_rows_build(const lp_trace *t, const lp_cpath *cp, cp_rows *c, lp_error *err)
{
    memset(c, 0, sizeof *c);
    c->off = lp_calloc((size_t)t->nworkers + 1, sizeof *c->off);
    uint64_t na = 0;
    for (size_t k = 0; k < cp->n; k++)
        na += cp->e[k].kind == LP_CP_ACTIVITY;
    c->s = lp_malloc((na ? na : 1) * sizeof *c->s);
    c->e = lp_malloc((na ? na : 1) * sizeof *c->e);
    uint64_t *pos = lp_calloc((size_t)t->nworkers + 1, sizeof *pos);
    if (!c->off || !c->s || !c->e || !pos) {
        lp_free(pos);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < cp->n; k++)
        if (cp->e[k].kind == LP_CP_ACTIVITY)
            c->off[cp->e[k].worker + 1]++;
    for (uint32_t w = 0; w < t->nworkers; w++)
        c->off[w + 1] += c->off[w];
    for (size_t k = 0; k < cp->n; k++) {
        const lp_cp_elem *e = &cp->e[k];
        if (e->kind != LP_CP_ACTIVITY)
            continue;
        uint64_t p = c->off[e->worker] + pos[e->worker]++;
        c->s[p] = e->start;
        c->e[p] = e->end;
    }
    lp_free(pos);
    return LP_OK;
}

static void cp_rows_release(cp_rows *c)
{
    lp_free(c->off);
    lp_free(c->s);
    lp_free(c->e);
}

/* One level: every row binned and run-length encoded. */
static lp_status build_level(const lp_trace *t, const cp_rows *cr, int64_t t0, int64_t t1, uint32_t n, tl_level *lv,
                             lp_tlbin *bins, lp_tlscratch *scr, lp_error *err)
{
    lv->n = n;
    lv->runs = 0;
    for (uint32_t w = 0; w < t->nworkers; w++) {
        uint64_t a = cr->off[w], b = cr->off[w + 1];
        lp_status st = lp_tlbin_row(t, w, cr->s + a, cr->e + a, (size_t)(b - a), t0, t1, n, bins, scr, err);
        if (st)
            return st;
        /* count the runs, then write them */
        uint64_t nr = 0;
        for (uint32_t i = 0; i < n;) {
            uint32_t j = i + 1;
            while (j < n && bins[j].dom == bins[i].dom && bins[j].busy == bins[i].busy && bins[j].cp == bins[i].cp)
                j++;
            nr++;
            i = j;
        }
        rp_buf_uv(&lv->b, nr);
        for (uint32_t i = 0; i < n;) {
            uint32_t j = i + 1;
            while (j < n && bins[j].dom == bins[i].dom && bins[j].busy == bins[i].busy && bins[j].cp == bins[i].cp)
                j++;
            rp_buf_uv(&lv->b, j - i);
            rp_buf_uv(&lv->b, bins[i].dom);
            rp_buf_byte(&lv->b, (unsigned)(bins[i].busy << 4 | bins[i].cp));
            i = j;
        }
        lv->runs += nr;
        if (lv->b.failed)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory encoding the timeline");
    }
    return LP_OK;
}

/* Dense operator ids: ops[k] is the string of operator k. */
static lp_status dense_ops(const lp_trace *t, tl_state *s, uint32_t **map, lp_error *err)
{
    *map = lp_malloc(((size_t)t->strs.n ? t->strs.n : 1) * sizeof **map);
    if (!*map)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    memset(*map, 0xff, (size_t)t->strs.n * sizeof **map);
    size_t cap = 0;
    for (uint64_t i = 0; i < t->nacts; i++) {
        lp_str op = t->aop[i];
        if (op == LP_STR_NONE || (*map)[op] != UINT32_MAX)
            continue;
        if (lp_grow((void **)&s->ops, &cap, (size_t)s->nops + 1, sizeof *s->ops))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        (*map)[op] = s->nops;
        s->ops[s->nops++] = op;
    }
    return LP_OK;
}

static void encode_acts(const lp_trace *t, const uint32_t *opmap, int64_t t0, rp_buf *b)
{
    for (uint32_t w = 0; w < t->nworkers; w++) {
        uint64_t a = t->wfirst[w], e = t->wfirst[w + 1];
        rp_buf_uv(b, e - a);
        int64_t prev = t0;
        for (uint64_t i = a; i < e; i++) {
            rp_buf_sv(b, t->astart[i] - prev);
            rp_buf_uv(b, (uint64_t)(t->aend[i] - t->astart[i]));
            rp_buf_uv(b, (uint64_t)t->atype[i] * 2 + ((t->aflags[i] & LP_ACT_GAP) != 0));
            rp_buf_uv(b, t->aop[i] == LP_STR_NONE ? 0 : (uint64_t)opmap[t->aop[i]] + 1);
            prev = t->aend[i];
        }
    }
}

/* messages by send time (ties: message order) */
typedef struct msg_key {
    int64_t send;
    uint32_t m;
} msg_key;

static int cmp_msg(const void *pa, const void *pb)
{
    const msg_key *a = pa, *b = pb;
    if (a->send != b->send)
        return a->send < b->send ? -1 : 1;
    return a->m < b->m ? -1 : a->m > b->m;
}

static lp_status encode_msgs(const lp_trace *t, int64_t t0, rp_buf *b, lp_error *err)
{
    msg_key *ord = lp_malloc((t->nmsgs ? t->nmsgs : 1) * sizeof *ord);
    if (!ord)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    int sorted = 1;
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        ord[m] = (msg_key){t->msend[m], (uint32_t)m};
        if (m && t->msend[m] < t->msend[m - 1])
            sorted = 0;
    }
    if (!sorted)
        qsort(ord, t->nmsgs, sizeof *ord, cmp_msg);
    rp_buf_uv(b, t->nmsgs);
    int64_t prev = t0;
    for (uint64_t k = 0; k < t->nmsgs; k++) {
        uint32_t m = ord[k].m;
        rp_buf_uv(b, (uint64_t)(t->msend[m] - prev));
        rp_buf_sv(b, t->mrecv[m] - t->msend[m]);
        rp_buf_uv(b, t->msrc[m]);
        rp_buf_uv(b, t->mdst[m]);
        prev = t->msend[m];
    }
    lp_free(ord);
    return LP_OK;
}

static void encode_cp(const lp_trace *t, const lp_cpath *cp, int64_t t0, rp_buf *b)
{
    rp_buf_uv(b, cp->n);
    int64_t prev = t0;
    for (size_t k = 0; k < cp->n; k++) {
        const lp_cp_elem *e = &cp->e[k];
        rp_buf_uv(b, (uint64_t)e->worker * 2 + (e->kind == LP_CP_MESSAGE));
        rp_buf_sv(b, e->start - prev);
        rp_buf_uv(b, (uint64_t)(e->end - e->start));
        if (e->kind == LP_CP_MESSAGE)
            rp_buf_uv(b, t->msrc[e->index]);
        else
            rp_buf_uv(b, e->index - t->wfirst[e->worker]);
        prev = e->end;
    }
}

/* The exact blocks, most telling first (the path, the messages, the activities), each
 * only while the blocks so far stay within the size budget (--max-mb): the file is
 * bounded whatever the counts; what is left out is drawn from the bins (the reason in
 * s->*_why). */
static lp_status tl_exact(const lp_trace *t, const lp_report_opts *o, const lp_report_graph *g, tl_state *s,
                          lp_error *err)
{
    lp_status st;
    char c1[32], c2[32];
    uint64_t exact_bytes = 0;
    char mb[32];
    snprintf(mb, sizeof mb, "%.0f MB", (double)o->max_bytes / 1048576.0);
    if (g->cp.n <= o->exact_cp) {
        encode_cp(t, &g->cp, s->t0, &s->cp);
        s->has_cp = 1;
        if (!s->cp.failed && exact_bytes + s->cp.n > o->max_bytes) {
            fmt_count(c1, sizeof c1, g->cp.n);
            snprintf(s->cp_why, sizeof s->cp_why, "%s critical-path elements would pass the size budget of %s", c1, mb);
            rp_buf_release(&s->cp);
            s->has_cp = 0;
        }
        exact_bytes += s->cp.n;
    } else {
        fmt_count(c1, sizeof c1, g->cp.n), fmt_count(c2, sizeof c2, o->exact_cp);
        snprintf(s->cp_why, sizeof s->cp_why, "%s critical-path elements exceed the limit of %s embedded one by one", c1,
                 c2);
    }
    if (t->nmsgs <= o->exact_msgs) {
        if ((st = encode_msgs(t, s->t0, &s->msgs, err)))
            return st;
        s->has_msgs = 1;
        if (!s->msgs.failed && exact_bytes + s->msgs.n > o->max_bytes) {
            fmt_count(c1, sizeof c1, t->nmsgs);
            snprintf(s->msgs_why, sizeof s->msgs_why, "%s messages would pass the size budget of %s", c1, mb);
            rp_buf_release(&s->msgs);
            s->has_msgs = 0;
        }
        exact_bytes += s->msgs.n;
    } else {
        fmt_count(c1, sizeof c1, t->nmsgs), fmt_count(c2, sizeof c2, o->exact_msgs);
        snprintf(s->msgs_why, sizeof s->msgs_why, "%s messages exceed the limit of %s embedded one by one", c1, c2);
    }
    uint32_t *opmap = NULL;
    if ((st = dense_ops(t, s, &opmap, err))) {
        lp_free(opmap);
        return st;
    }
    if (t->nacts <= o->exact_acts) {
        encode_acts(t, opmap, s->t0, &s->acts);
        s->has_acts = 1;
        if (!s->acts.failed && exact_bytes + s->acts.n > o->max_bytes) {
            fmt_count(c1, sizeof c1, t->nacts);
            snprintf(s->acts_why, sizeof s->acts_why, "%s activities (gaps included) would pass the size budget of %s",
                     c1, mb);
            rp_buf_release(&s->acts);
            s->has_acts = 0;
        }
        exact_bytes += s->acts.n;
    } else {
        fmt_count(c1, sizeof c1, t->nacts), fmt_count(c2, sizeof c2, o->exact_acts);
        snprintf(s->acts_why, sizeof s->acts_why, "%s activities (gaps included) exceed the limit of %s embedded one by one",
                 c1, c2);
    }
    lp_free(opmap);
    if (s->acts.failed || s->msgs.failed || s->cp.failed)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory encoding the timeline");
    return LP_OK;
}

/* The pyramid: levels of bins, each 4 times finer, until one would pass the size budget,
 * the bins reach about 1 ns or the activities, or the exact activities take over (the
 * reason in s->lv_stop). */
static lp_status tl_levels(const lp_trace *t, const lp_report_opts *o, const lp_report_graph *g, tl_state *s,
                           lp_error *err)
{
    uint64_t T = (uint64_t)s->t1 - (uint64_t)s->t0;
    lp_status st = LP_OK;
    cp_rows cr;
    if ((st = cp_rows_build(t, &g->cp, &cr, err))) {
        cp_rows_release(&cr);
        return st;
    }
    uint64_t n0 = o->bins < T ? o->bins : T;
    uint64_t need = UINT64_MAX; /* with exact activities, no level finer than the script needs */
    if (s->has_acts)
        need = (uint64_t)TL_PX * (t->nacts / TL_EXACT_VIEW + 1);
    lp_tlbin *bins = NULL;
    lp_tlscratch scr;
    memset(&scr, 0, sizeof scr);
    uint64_t bytes = s->acts.n + s->msgs.n + s->cp.n;
    snprintf(s->lv_stop, sizeof s->lv_stop, "the levels reach the limit of %d", TL_MAX_LEVELS);
    for (uint64_t n = n0, k = 0; k < TL_MAX_LEVELS; k++, n *= 4) {
        if (n > T) {
            snprintf(s->lv_stop, sizeof s->lv_stop, "the finest level has bins of about 1 ns");
            break;
        }
        if (n > UINT32_MAX / 2) {
            snprintf(s->lv_stop, sizeof s->lv_stop, "the finest level has the most bins allowed");
            break;
        }
        lp_tlbin *nb = lp_reallocarray(bins, n, sizeof *bins);
        if (!nb) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory binning the timeline");
            break;
        }
        bins = nb;
        tl_level *lv = &s->lv[k];
        if ((st = build_level(t, &cr, s->t0, s->t1, (uint32_t)n, lv, bins, &scr, err)))
            break;
        if (k && bytes + lv->b.n > o->max_bytes) {
            rp_buf_release(&lv->b);
            snprintf(s->lv_stop, sizeof s->lv_stop, "a finer level would pass the report's size budget (--max-mb)");
            break;
        }
        bytes += lv->b.n;
        s->nlv = (uint32_t)k + 1;
        if (n >= need) {
            snprintf(s->lv_stop, sizeof s->lv_stop, "zoomed in further, activities are drawn one by one");
            break;
        }
        if (k && lv->runs >= 2 * (t->nacts + t->nworkers) && lv->runs >= 3 * s->lv[k - 1].runs) {
            snprintf(s->lv_stop, sizeof s->lv_stop, "bins are already finer than the activities");
            break;
        }
    }
    lp_free(bins);
    lp_tlscratch_release(&scr);
    cp_rows_release(&cr);
    return st;
}

static lp_status tl_prepare(lp_report *r, void **state, lp_error *err)
{
    const lp_trace *t = lp_report_data_of(r)->trace;
    const lp_report_opts *o = lp_report_opts_of(r);
    tl_state *s = lp_calloc(1, sizeof *s);
    *state = s;
    if (!s)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    const lp_report_graph *g;
    lp_status st = lp_report_graph_get(r, &g, err);
    if (st)
        return st;
    s->t0 = t->tmin;
    s->t1 = t->tmax > t->tmin ? t->tmax : t->tmin + 1;
    if ((st = tl_exact(t, o, g, s, err)) || (st = tl_levels(t, o, g, s, err)))
        return st;
    s->ncp_acts = 0;
    for (size_t k = 0; k < g->cp.n; k++)
        s->ncp_acts += g->cp.e[k].kind == LP_CP_ACTIVITY;
    return LP_OK;
}

/* ---- writing ---------------------------------------------------------------------- */

static void blob(lp_html *h, const char *id, const rp_buf *b)
{
    lp_html_printf(h, "<script type=\"application/x-longpole\" id=\"%s\">", id);
    lp_html_base64(h, b->p, b->n);
    lp_html_raw(h, "</script>\n");
}

static lp_status tl_write(const lp_report *r, const void *state, lp_html *h, lp_error *err)
{
    (void)err;
    const tl_state *s = state;
    const lp_trace *t = lp_report_data_of(r)->trace;
    const lp_report_graph *g = lp_report_graph_peek(r);
    rp_section_open(h, &lp_report_sec_timeline);
    lp_html_raw(h, "<p class=\"lp-note\">One row per worker; activities coloured by type (<em>waiting</em> left blank), "
                   "messages as arrows, the critical path in red. Scroll the wheel over the plot to zoom, drag to pan "
                   "(or use the buttons and the arrow keys), hover for details. Where a view holds more than can be "
                   "drawn, each pixel column shows a bin: the colour of its dominant type, the height of its busy share, "
                   "and a red strip as strong as its share of critical-path time.");
    if (!s->has_acts || !s->has_msgs || !s->has_cp) {
        lp_html_raw(h, " Not embedded one by one (drawn only as bins): ");
        int any = 0;
        const char *why[3] = {s->has_acts ? NULL : s->acts_why, s->has_msgs ? NULL : s->msgs_why,
                              s->has_cp ? NULL : s->cp_why};
        for (int k = 0; k < 3; k++)
            if (why[k]) {
                if (any)
                    lp_html_raw(h, "; ");
                lp_html_text(h, why[k]);
                any = 1;
            }
        lp_html_raw(h, " (<code>--exact-max</code> and <code>--max-mb</code> raise the limits; see "
                       "docs/report.md).");
    }
    lp_html_raw(h, "</p>\n<div class=\"lp-tl\" data-meta=\"lp-tl-meta\" tabindex=\"0\"><noscript>The timeline needs "
                   "JavaScript.</noscript></div>\n");
    /* metadata */
    lp_html_raw(h, "<script type=\"application/json\" id=\"lp-tl-meta\">{\"t0\":");
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)s->t0);
    lp_html_json_str(h, num);
    lp_html_printf(h, ",\"span\":%llu,\"nacts\":%llu,\"ngaps\":%llu,\"nmsgs\":%llu,\"ncp\":%zu,\"cp_total\":%lld,",
                   (unsigned long long)((uint64_t)s->t1 - (uint64_t)s->t0), (unsigned long long)t->nacts,
                   (unsigned long long)t->ngaps, (unsigned long long)t->nmsgs, g ? g->cp.n : 0,
                   (long long)(g ? g->cp.total : 0));
    lp_html_printf(h, "\"exact_view\":%d,\"waiting\":%d,", TL_EXACT_VIEW, LP_TYPE_WAITING);
    lp_html_raw(h, "\"workers\":[");
    for (uint32_t w = 0; w < t->nworkers; w++) { /* a span's row: its service and operation (span_trace.c) */
        char lab[512];
        if (w)
            lp_html_raw(h, ",");
        lp_html_json_str(h, lp_trace_worker_label(t, w, lab, sizeof lab));
    }
    lp_html_raw(h, "],\"types\":[");
    for (uint32_t ty = 0; ty < t->ntypes; ty++) {
        lp_html_raw(h, ty ? ",[" : "[");
        lp_html_json_str(h, lp_trace_type_name(t, ty));
        lp_html_printf(h, ",\"%s\"]", rp_type_color(ty));
    }
    lp_html_raw(h, "],\"ops\":[");
    for (uint32_t k = 0; k < s->nops; k++) {
        if (k)
            lp_html_raw(h, ",");
        lp_html_json_str(h, lp_trace_str(t, s->ops[k]));
    }
    lp_html_raw(h, "],\"levels\":[");
    for (uint32_t k = 0; k < s->nlv; k++)
        lp_html_printf(h, "%s{\"n\":%u,\"id\":\"lp-tl-L%u\",\"runs\":%llu}", k ? "," : "", s->lv[k].n, k,
                       (unsigned long long)s->lv[k].runs);
    lp_html_raw(h, "],\"levels_stop\":");
    lp_html_json_str(h, s->lv_stop);
    lp_html_raw(h, ",\"acts\":");
    lp_html_raw(h, s->has_acts ? "\"lp-tl-A\"" : "null");
    lp_html_raw(h, ",\"acts_why\":");
    lp_html_json_str(h, s->acts_why);
    lp_html_raw(h, ",\"msgs\":");
    lp_html_raw(h, s->has_msgs ? "\"lp-tl-M\"" : "null");
    lp_html_raw(h, ",\"msgs_why\":");
    lp_html_json_str(h, s->msgs_why);
    lp_html_raw(h, ",\"cp\":");
    lp_html_raw(h, s->has_cp ? "\"lp-tl-C\"" : "null");
    lp_html_raw(h, ",\"cp_why\":");
    lp_html_json_str(h, s->cp_why);
    lp_html_raw(h, "}</script>\n");
    char id[32];
    for (uint32_t k = 0; k < s->nlv; k++) {
        snprintf(id, sizeof id, "lp-tl-L%u", k);
        blob(h, id, &s->lv[k].b);
    }
    if (s->has_acts)
        blob(h, "lp-tl-A", &s->acts);
    if (s->has_msgs)
        blob(h, "lp-tl-M", &s->msgs);
    if (s->has_cp)
        blob(h, "lp-tl-C", &s->cp);
    rp_section_close(h);
    return LP_OK;
}

const lp_report_section lp_report_sec_timeline = {
    "timeline", "Timeline", tl_applies, tl_prepare, tl_release, tl_write,
};
