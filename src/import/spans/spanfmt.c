/* spanfmt.c: the helpers the JSON span importers share (spanjson.h): skipped-record
 * accounting and messages. The table of span formats and the
 * loading of files are in src/load/ (load.h).
 */
#include "longpole/import/spanfmt.h"
#include "longpole/base/alloc.h"
#include "import/spans/spanjson.h"
#include "import/import_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- import accounting ------------------------------------------------------------------ */

size_t lp_span_import_nest_min = LP_SPAN_NEST_MIN;
size_t lp_span_import_bufsize = LP_SPAN_BUFSIZE;

void lp_span_import_init(lp_span_import *im, lp_spans *sp, const char *format)
{
    memset(im, 0, sizeof *im);
    im->sp = sp;
    im->format = format;
    im->lasttraceidx = LP_SPAN_NONE;
}

void lp_span_import_skip(lp_span_import *im, lp_skip_reason why, const lp_json *at, const char *fmt, ...)
{
    im->skipped[why]++;
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lp_spans_report(im->sp, LP_SEV_ERROR, at ? at->off : 0, at ? at->line : 0, "%s; record skipped", msg);
}

void lp_span_import_bad(lp_span_import *im, const lp_json_ev *ev)
{
    im->skipped[LP_SKIP_JSON]++;
    if (ev->fatal) {
        im->fatal = 1;
        lp_spans_report(im->sp, LP_SEV_ERROR, ev->off, ev->line, "%s; the rest of the file is not read", ev->msg);
    } else {
        lp_spans_report(im->sp, LP_SEV_ERROR, ev->off, ev->line, "%s; record skipped", ev->msg);
    }
}

void lp_span_import_repaired(lp_span_import *im, const lp_json_ev *ev)
{
    if (!ev->repaired || !im->sp->diags)
        return;
    lp_spans *sp = im->sp;
    lp_diags_report(sp->diags, LP_SEV_WARNING, LP_RULE_ENCODING, sp->nfiles ? sp->files[sp->cursrc] : NULL, ev->rline,
                    "byte %llu: %s; the string was mended (bad bytes became '?')%s", (unsigned long long)ev->roff,
                    ev->rmsg, ev->repaired > 1 ? ", and other strings of the record too" : "");
}

static const char *const skip_names[LP_SKIP_NREASONS] = {
    [LP_SKIP_JSON] = "not valid JSON",
    [LP_SKIP_SHAPE] = "not a span or trace object",
    [LP_SKIP_NO_ID] = "without a span id",
    [LP_SKIP_NO_TRACE] = "without a trace id",
    [LP_SKIP_FIELD] = "with a field of the wrong type",
    [LP_SKIP_TIME] = "without a usable start time",
    [LP_SKIP_UNSUPPORTED] = "in an unsupported variant",
};

void lp_span_import_summary(lp_span_import *im)
{
    char buf[400];
    uint64_t total = lp_import_counts(buf, sizeof buf, im->skipped, skip_names, LP_SKIP_NREASONS);
    if (!total || !im->sp->diags)
        return;
    lp_diags_report(im->sp->diags, LP_SEV_NOTE, LP_RULE_IMPORT, im->sp->nfiles ? im->sp->files[im->sp->cursrc] : NULL,
                    0, "%s: %llu span(s) read, %llu record(s) skipped (%s)%s", im->format,
                    (unsigned long long)im->nspans, (unsigned long long)total, buf,
                    im->fatal ? "; the file ended early" : "");
}

lp_status lp_span_import_trace(lp_span_import *im, const lp_json *v, uint32_t *trace, int *ok, lp_error *err)
{
    *ok = 0;
    if (!v || v->type != LP_JSON_STRING || v->len == 0)
        return LP_OK;
    *ok = 1;
    if (im->lasttraceidx != LP_SPAN_NONE && v->len == im->lasttracelen && memcmp(v->s, im->lasttrace, v->len) == 0) {
        *trace = im->lasttraceidx;
        return LP_OK;
    }
    lp_status st = lp_spans_trace(im->sp, v->s, v->len, trace, err);
    if (st)
        return st;
    if (v->len <= sizeof im->lasttrace) {
        memcpy(im->lasttrace, v->s, v->len);
        im->lasttracelen = v->len;
        im->lasttraceidx = *trace;
    }
    return LP_OK;
}

int lp_span_import_progress(const lp_load_opts *opts, lp_input *in, uint64_t *counter)
{
    if (!opts || !opts->progress || ++*counter % 4096)
        return 0;
    return opts->progress(opts->progress_ctx, "reading", lp_input_consumed(in), lp_input_size(in));
}

int lp_span_import_id(lp_span_import *im, const lp_json *n, const lp_json *id, const char *what, lp_span_rec *r)
{
    if (!id || id->type != LP_JSON_STRING || !id->len) {
        char w[80];
        lp_span_import_skip(im, LP_SKIP_NO_ID, id ? id : n, "span without %s string (found %s)", what,
                            lp_json_what(id, w, sizeof w));
        return 1;
    }
    lp_spans_id(im->sp, id->s, id->len, &r->id, &r->idtext);
    return 0;
}

lp_status lp_span_import_trace_of(lp_span_import *im, const lp_json *n, const lp_json *tr, const char *field,
                                  const char *sid, lp_span_rec *r, int *skipped, lp_error *err)
{
    int ok;
    *skipped = 0;
    lp_status s = lp_span_import_trace(im, tr, &r->trace, &ok, err);
    if (s || ok)
        return s;
    char w[80];
    lp_span_import_skip(im, LP_SKIP_NO_TRACE, tr ? tr : n, "span %s: %s must be a non-empty string, found %s", sid,
                        field, lp_json_what(tr, w, sizeof w));
    *skipped = 1;
    return LP_OK;
}

int lp_span_import_duration(lp_span_import *im, const lp_json *du, const char *sid, lp_span_rec *r)
{
    if (!du || du->type == LP_JSON_NULL) {
        r->flags |= LP_SPAN_NO_DURATION;
    } else if (lp_span_import_us(du, &r->dur)) {
        char w[80];
        lp_span_import_skip(im, LP_SKIP_FIELD, du, "span %s: duration must be an integer number of microseconds, found %s",
                            sid, lp_json_what(du, w, sizeof w));
        return 1;
    } else if (r->dur < 0) {
        lp_spans_report(im->sp, LP_SEV_ERROR, du->off, du->line,
                        "span %s: negative duration %lld us; its end is taken from its children", sid,
                        (long long)(r->dur / 1000));
        r->dur = 0;
        r->flags |= LP_SPAN_NO_DURATION;
    }
    return 0;
}

/* Strings mended in an element that is streamed (a huge trace): held, and reported at
 * its end as one warning at the first of them, as when the element is one record. */
static void hold_repaired(lp_span_import *im, const lp_json_ev *ev)
{
    if (!ev->repaired)
        return;
    if (!im->held) {
        im->hoff = ev->roff;
        im->hline = ev->rline;
        memcpy(im->hmsg, ev->rmsg, sizeof im->hmsg);
    }
    im->held += ev->repaired;
}

static void flush_repaired(lp_span_import *im)
{
    if (!im->held)
        return;
    lp_json_ev ev;
    memset(&ev, 0, sizeof ev);
    ev.repaired = im->held;
    ev.roff = im->hoff;
    ev.rline = im->hline;
    memcpy(ev.rmsg, im->hmsg, sizeof ev.rmsg);
    lp_span_import_repaired(im, &ev);
    im->held = 0;
}

lp_status lp_span_import_run(lp_span_import *im, lp_input *in, const char *const *keys, const lp_load_opts *opts,
                             lp_span_import_fn fn, void *ctx, lp_error *err)
{
    lp_json_opts o = {.stream_keys = keys,
                      .repair = 1,
                      .bufsize = lp_span_import_bufsize,
                      .nest_min = lp_span_import_nest_min,
                      .nest_keys = im->nest_keys,
                      .nest_stream = im->nest_stream};
    lp_json_reader *r;
    lp_status st = lp_json_reader_new(&r, in, &o, err);
    if (st)
        return st;
    lp_json_ev ev;
    uint64_t tick = 0;
    while ((st = lp_json_next(r, &ev, err)) == LP_OK) {
        if (ev.kind == LP_JSON_EV_BEGIN && ev.depth)
            im->nestd = ev.depth;
        if (im->nestd)
            hold_repaired(im, &ev);
        else
            lp_span_import_repaired(im, &ev);
        if (ev.kind == LP_JSON_EV_BAD)
            lp_span_import_bad(im, &ev);
        else
            st = fn(ctx, &ev);
        if (ev.kind == LP_JSON_EV_END && ev.depth) {
            im->nestd = ev.depth - 1;
            if (!im->nestd)
                flush_repaired(im);
        }
        if (st)
            break;
        if (lp_span_import_progress(opts, in, &tick)) {
            st = lp_error_set(err, LP_ERR_IO, "cancelled");
            break;
        }
    }
    if (st == LP_END)
        flush_repaired(im); /* (a streamed element cut short) */
    if (st == LP_END && !(st = fn(ctx, NULL)))
        lp_span_import_summary(im);
    lp_json_reader_free(r);
    return st;
}
