/* report.c: the HTML report (report.h): its lifecycle, the section registry, the
 * document around the sections (head with the Content-Security-Policy, header, tail with
 * the script) and the analyses sections share (PAG, critical path, checks).
 *
 * Invariants: a report borrows its data and copies its options (the arrays too); a
 * section is prepared at most once and its state lives until lp_report_free; writing
 * only reads prepared state (so prepared reports can be written by several threads).
 * The document is HTML5: one <section id="lp-s-NAME" class="lp-sec"> per section inside
 * <main>, the data of the script in <script type="application/json"> or
 * "application/x-longpole" (base64) blocks, which browsers never execute, and one
 * executable <script nonce=...> at the end.
 */
#include "longpole/base/version.h"
#include "longpole/report/report.h"
#include "longpole/base/alloc.h"
#include "report_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* ---- the registry: one line per section, in document order ------------------------ */

static const lp_report_section *const sections[] = {
    &lp_report_sec_overview,
    &lp_report_sec_timeline,
    &lp_report_sec_breakdown,
    &lp_report_sec_resources,
    &lp_report_sec_grade10,
    &lp_report_sec_summaries,
    &lp_report_sec_requests,
    &lp_report_sec_spans,
    NULL,
};

const lp_report_section *const *lp_report_sections(void) { return sections; }

const lp_report_section *lp_report_section_find(const char *name)
{
    for (size_t i = 0; sections[i]; i++)
        if (strcmp(sections[i]->name, name) == 0)
            return sections[i];
    return NULL;
}

static size_t section_index(const char *name)
{
    for (size_t i = 0; sections[i]; i++)
        if (strcmp(sections[i]->name, name) == 0)
            return i;
    return SIZE_MAX;
}

#define NSEC (sizeof sections / sizeof sections[0] - 1)

struct lp_report {
    lp_report_data d;             /* as given (pointers borrowed) */
    lp_report_opts o;             /* copied; windows and percentiles point at the copies below */
    int64_t *windows;             /* copy of o.windows */
    double *pct;                  /* copy of o.percentiles */
    char nonce[32];               /* base64 of 16 random bytes */
    void *state[NSEC];            /* per section, after prepare */
    int prepared[NSEC];
    lp_report_graph g;            /* shared analyses */
    int have_graph;
};

void lp_report_opts_init(lp_report_opts *o)
{
    static const double pct[] = {50, 95, 99, 100};
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->top = 10;
    o->table_rows = 25;
    o->bins = 2048;
    o->exact_acts = 2000000;
    o->exact_msgs = 2000000;
    o->exact_cp = 2000000;
    o->max_bytes = 12u << 20;
    o->percentiles = pct;
    o->npercentiles = sizeof pct / sizeof pct[0];
}

static void make_nonce(char out[32], int fixed)
{
    unsigned char b[16];
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    ssize_t got = fixed ? 0 : getrandom(b, sizeof b, GRND_NONBLOCK);
    if (fixed) {
        memcpy(b, "longpole-fixed!!", 16);
    } else if (got != (ssize_t)sizeof b) {
        /* no entropy source: time, pid and an address, mixed (still unpredictable enough
         * to keep a trace's names from guessing it before the file exists) */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_sec ^
                     ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&ts;
        for (int i = 0; i < 16; i++) {
            x ^= x >> 33;
            x *= 0xff51afd7ed558ccdull;
            x ^= x >> 29;
            b[i] = (unsigned char)x;
        }
    }
    size_t o = 0;
    for (size_t i = 0; i + 3 <= 15; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
        out[o++] = tab[v >> 18], out[o++] = tab[(v >> 12) & 63], out[o++] = tab[(v >> 6) & 63], out[o++] = tab[v & 63];
    }
    uint32_t v = (uint32_t)b[15] << 16;
    out[o++] = tab[v >> 18], out[o++] = tab[(v >> 12) & 63], out[o++] = '=', out[o++] = '=';
    out[o] = '\0';
}

lp_status lp_report_new(lp_report **out, const lp_report_data *d, const lp_report_opts *o, lp_error *err)
{
    *out = NULL;
    lp_report_opts def;
    if (!o) {
        lp_report_opts_init(&def);
        o = &def;
    }
    int any = 0;
    for (size_t i = 0; sections[i]; i++)
        if (strcmp(sections[i]->name, "overview") != 0 && sections[i]->applies(d))
            any = 1;
    if (!any)
        return lp_error_set(err, LP_ERR_ARG, "nothing to report: no trace, span table, analysed request log or Grade10 attribution");
    lp_report *r = lp_calloc(1, sizeof *r);
    if (!r)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    r->d = *d;
    r->o = *o;
    if (o->nwindows) {
        r->windows = lp_malloc(o->nwindows * sizeof *r->windows);
        if (!r->windows)
            goto nomem;
        memcpy(r->windows, o->windows, o->nwindows * sizeof *r->windows);
        r->o.windows = r->windows;
    } else {
        r->o.windows = NULL;
    }
    if (o->npercentiles) {
        r->pct = lp_malloc(o->npercentiles * sizeof *r->pct);
        if (!r->pct)
            goto nomem;
        memcpy(r->pct, o->percentiles, o->npercentiles * sizeof *r->pct);
        r->o.percentiles = r->pct;
    } else {
        r->o.percentiles = NULL;
    }
    if (!r->o.top)
        r->o.top = 10;
    if (!r->o.bins)
        r->o.bins = 2048;
    make_nonce(r->nonce, o->no_nonce);
    *out = r;
    return LP_OK;
nomem:
    lp_free(r->windows);
    lp_free(r->pct);
    lp_free(r);
    return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
}

void lp_report_free(lp_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < NSEC; i++)
        if (r->prepared[i] || r->state[i])
            sections[i]->release(r->state[i]);
    if (r->have_graph)
        lp_cpath_release(&r->g.cp);
    lp_free(r->windows);
    lp_free(r->pct);
    lp_free(r);
}

const lp_report_data *lp_report_data_of(const lp_report *r) { return &r->d; }
const lp_report_opts *lp_report_opts_of(const lp_report *r) { return &r->o; }
const char *lp_report_nonce(const lp_report *r) { return r->nonce; }

int lp_report_applies(const lp_report *r, const char *name)
{
    const lp_report_section *s = lp_report_section_find(name);
    return s && s->applies(&r->d);
}

/* ---- shared analyses -------------------------------------------------------------- */

/* A path given by the caller (lp_report_data.cp), copied so the report owns its own. */
static lp_status cpath_copy(const lp_cpath *src, lp_cpath *dst, lp_error *err)
{
    *dst = *src;
    dst->e = lp_malloc((src->n ? src->n : 1) * sizeof *dst->e);
    if (!dst->e)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (src->n)
        memcpy(dst->e, src->e, src->n * sizeof *dst->e);
    return LP_OK;
}

lp_status lp_report_graph_get(lp_report *r, const lp_report_graph **g, lp_error *err)
{
    *g = NULL;
    if (!r->d.trace)
        return lp_error_set(err, LP_ERR_ARG, "no trace to analyse");
    if (r->have_graph) {
        *g = &r->g;
        return LP_OK;
    }
    /* the graph only for its size (the overview prints it), released before the path,
     * which comes from the trace's columns (lp_cpath_trace: the same path, no graph) */
    lp_pag pag;
    lp_status st = lp_pag_build(r->d.trace, &pag, err);
    if (st)
        return lp_error_push(err, "building the activity graph");
    memset(&r->g, 0, sizeof r->g);
    r->g.nv = pag.nv;
    r->g.nwedges = pag.nwedges;
    r->g.ncedges = pag.ncedges;
    lp_pag_release(&pag);
    st = r->d.cp ? cpath_copy(r->d.cp, &r->g.cp, err) : lp_cpath_trace(r->d.trace, &r->g.cp, err);
    if (st)
        return lp_error_push(err, "critical path");
    /* the checks, on the snapshot of the whole trace */
    const lp_trace *t = r->d.trace;
    lp_snapsrc src;
    lp_snapshot snap;
    lp_snapcheck_buf cb;
    memset(&cb, 0, sizeof cb);
    lp_snapshot_init(&snap);
    if (!(st = lp_snapsrc_init(&src, t, err))) {
        if (!(st = lp_snapshot_build(&snap, &src, t->tmin, t->tmax, err)))
            st = lp_snapshot_check(&snap, &cb, &r->g.check, err);
        lp_snapsrc_release(&src);
    }
    lp_snapshot_release(&snap);
    lp_snapcheck_buf_release(&cb);
    if (st) {
        lp_cpath_release(&r->g.cp);
        return lp_error_push(err, "instrumentation checks");
    }
    r->have_graph = 1;
    *g = &r->g;
    return LP_OK;
}

const lp_report_graph *lp_report_graph_peek(const lp_report *r) { return r->have_graph ? &r->g : NULL; }

/* ---- preparing and writing -------------------------------------------------------- */

static lp_status prepare_one(lp_report *r, size_t i, lp_error *err)
{
    if (r->prepared[i] || !sections[i]->applies(&r->d))
        return LP_OK;
    lp_status st = sections[i]->prepare(r, &r->state[i], err);
    if (st) {
        sections[i]->release(r->state[i]);
        r->state[i] = NULL;
        return lp_error_push(err, "report section '%s'", sections[i]->name);
    }
    r->prepared[i] = 1;
    return LP_OK;
}

lp_status lp_report_prepare(lp_report *r, const char *const *names, size_t n, lp_error *err)
{
    if (!names || !n) {
        size_t total = 0, done = 0;
        for (size_t i = 0; i < NSEC; i++)
            total += sections[i]->applies(&r->d) != 0;
        for (size_t i = 0; i < NSEC; i++) {
            if (!sections[i]->applies(&r->d))
                continue;
            if (r->o.progress && r->o.progress(r->o.progress_ctx, sections[i]->title, done, total))
                return lp_error_set(err, LP_ERR_ARG, "cancelled");
            lp_status st = prepare_one(r, i, err);
            if (st)
                return st;
            done++;
        }
        if (r->o.progress)
            r->o.progress(r->o.progress_ctx, "report", total, total);
        return LP_OK;
    }
    for (size_t k = 0; k < n; k++) {
        size_t i = section_index(names[k]);
        if (i == SIZE_MAX)
            return lp_error_set(err, LP_ERR_ARG, "no report section '%s'", names[k]);
    }
    for (size_t k = 0; k < n; k++) {
        lp_status st = prepare_one(r, section_index(names[k]), err);
        if (st)
            return st;
    }
    return LP_OK;
}

static const char *report_title(const lp_report *r, char *buf, size_t n)
{
    if (r->d.title)
        return r->d.title;
    const char *name = r->d.ninputs ? r->d.inputs[0] : "trace";
    const char *slash = strrchr(name, '/');
    if (slash && slash[1])
        name = slash + 1;
    snprintf(buf, n, "longpole report: %s%s", name, r->d.ninputs > 1 ? " and more" : "");
    return buf;
}

static void write_head(lp_report *r, lp_html *h)
{
    char tb[512];
    const char *title = report_title(r, tb, sizeof tb);
    lp_html_raw(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'nonce-");
    lp_html_raw(h, r->nonce);
    lp_html_raw(h, "'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">\n"
                   "<meta name=\"generator\" content=\"longpole " LONGPOLE_VERSION "\">\n<title>");
    lp_html_text(h, title);
    lp_html_raw(h, "</title>\n<style>\n");
    lp_html_raw(h, lp_report_css);
    lp_html_raw(h, "</style>\n</head>\n<body>\n<header class=\"lp-head\">\n<h1>");
    lp_html_text(h, title);
    lp_html_raw(h, "</h1>\n<p class=\"lp-inputs\">");
    if (r->d.ninputs) {
        lp_html_raw(h, r->d.ninputs == 1 ? "Input: " : "Inputs: ");
        for (size_t i = 0; i < r->d.ninputs; i++) {
            if (i)
                lp_html_raw(h, ", ");
            if (i == 20 && r->d.ninputs > 21) {
                lp_html_printf(h, "and %zu more", r->d.ninputs - 20);
                break;
            }
            lp_html_raw(h, "<code>");
            lp_html_text(h, r->d.inputs[i]);
            lp_html_raw(h, "</code>");
        }
        lp_html_raw(h, ". ");
    }
    lp_html_raw(h, "Generated by longpole " LONGPOLE_VERSION ".</p>\n<nav id=\"lp-nav\"></nav>\n"
                   "<p id=\"lp-noscript\" class=\"lp-note\">The charts and tables below work without "
                   "JavaScript; the timeline needs it.</p>\n</header>\n<main>\n");
}

static void write_tail(lp_report *r, lp_html *h)
{
    lp_html_raw(h, "</main>\n<footer class=\"lp-foot\">longpole " LONGPOLE_VERSION
                   " &middot; definitions: docs/report.md</footer>\n<script nonce=\"");
    lp_html_raw(h, r->nonce);
    lp_html_raw(h, "\">\n");
    lp_html_raw(h, lp_report_js);
    lp_html_raw(h, "</script>\n</body>\n</html>\n");
}

static lp_status write_sec(lp_report *r, size_t i, lp_html *h, lp_error *err)
{
    if (!sections[i]->applies(&r->d))
        return LP_OK;
    lp_status st = prepare_one(r, i, err);
    if (st)
        return st;
    st = sections[i]->write(r, r->state[i], h, err);
    if (st)
        return lp_error_push(err, "report section '%s'", sections[i]->name);
    return LP_OK;
}

lp_status lp_report_write_head(lp_report *r, FILE *f, lp_error *err)
{
    lp_html h;
    lp_html_init(&h, f);
    write_head(r, &h);
    return lp_html_status(&h, err);
}

lp_status lp_report_write_tail(lp_report *r, FILE *f, lp_error *err)
{
    lp_html h;
    lp_html_init(&h, f);
    write_tail(r, &h);
    return lp_html_status(&h, err);
}

lp_status lp_report_write_section(lp_report *r, const char *name, FILE *f, lp_error *err)
{
    size_t i = section_index(name);
    if (i == SIZE_MAX)
        return lp_error_set(err, LP_ERR_ARG, "no report section '%s'", name);
    lp_html h;
    lp_html_init(&h, f);
    lp_status st = write_sec(r, i, &h, err);
    if (st)
        return st;
    return lp_html_status(&h, err);
}

lp_status lp_report_write_page(lp_report *r, const char *const *names, size_t n, FILE *f, lp_error *err)
{
    for (size_t k = 0; k < n; k++)
        if (section_index(names[k]) == SIZE_MAX)
            return lp_error_set(err, LP_ERR_ARG, "no report section '%s'", names[k]);
    lp_html h;
    lp_html_init(&h, f);
    write_head(r, &h);
    for (size_t i = 0; i < NSEC; i++) {
        int want = names == NULL;
        for (size_t k = 0; !want && k < n; k++)
            want = strcmp(names[k], sections[i]->name) == 0;
        if (!want)
            continue;
        lp_status st = write_sec(r, i, &h, err);
        if (st)
            return st;
        if (h.failed)
            break;
    }
    write_tail(r, &h);
    return lp_html_status(&h, err);
}

lp_status lp_report_write(lp_report *r, FILE *f, lp_error *err) { return lp_report_write_page(r, NULL, 0, f, err); }

/* ---- helpers for sections (report_int.h) ------------------------------------------- */

void rp_section_open(lp_html *h, const lp_report_section *s)
{
    lp_html_raw(h, "<section class=\"lp-sec\" id=\"lp-s-");
    lp_html_raw(h, s->name);
    lp_html_raw(h, "\" data-title=\"");
    lp_html_text(h, s->title);
    lp_html_raw(h, "\">\n<h2>");
    lp_html_text(h, s->title);
    lp_html_raw(h, "</h2>\n");
}

void rp_section_close(lp_html *h) { lp_html_raw(h, "</section>\n"); }
