/* chrome.c: the Chrome Trace Event Format importer ("chrome"), with the PyTorch
 * profiler (Kineto) flavour on top. The mapping is documented in
 * docs/formats/chrome.md; this header summarises it. This file reads a file and runs
 * the stages (and holds the diagnostics, the summary and the detection); the stages
 * are in chrome_keys.c, chrome_events.c, chrome_async.c, chrome_kineto.c,
 * chrome_flows.c and chrome_emit.c, sharing chrome_int.h.
 *
 * Input: a JSON array of events, or an object whose "traceEvents" member is that
 * array (other members are metadata: displayTimeUnit, otherData, Kineto's
 * schemaVersion/deviceProperties/distributedInfo...), plain, gzip or zstd. The array
 * may lack its closing ']' (the format allows it: tracers that crash leave it out).
 * Events are read one at a time (lp_json_reader: memory is bounded by the largest
 * event) into compact columns; everything is resolved at the end of the file, because
 * nesting, flows and metadata (Kineto writes thread names last) need the whole file.
 *
 * Model (MODEL.md; SnailTrail §2, §4.1):
 *  - a thread (pid, tid) is a worker; its slices (X, and B/E pairs matched per thread
 *    in input order) are nested by time: each instant of the thread belongs to the
 *    innermost slice open then, which becomes the activity (operator = the slice's
 *    name) with attribute stack="outer;...;parent". A slice that overlaps the end of
 *    its enclosing slice is clipped to it (reported). A B never closed is closed at the
 *    end of the trace (the latest timestamp of the file) and reported with its
 *    position; an E without B is reported and dropped;
 *  - types: a category that names a built-in type (processing, waiting, io, ...) is
 *    that type (so longpole's own exports read back); Kineto memory copies are `io`;
 *    CUDA synchronisation calls that waited for the GPU are `waiting`; everything else
 *    is `processing`;
 *  - flows (s/t/f, keyed by cat+name+id; and bind_id with flow_out/flow_in on slices)
 *    are messages: s (or a flow_out slice's end) sends, t receives and sends again, f
 *    receives at its own time with bp:"e" (or for the ipc/input categories), else at
 *    the start of the next slice of its thread (catapult's binding);
 *  - async events: each async id (b/e/n: cat+id; S/T/F: name+id) is its own worker
 *    timeline "async:<cat-or-name>:<id>"; b/e nest like B/E; S..F is one slice with a
 *    child per step (T, p); the outermost slice gets a message from the thread that
 *    began it and one to the thread that ended it;
 *  - counters C, instants i/I, samples P, objects N/O/D, memory dumps v/V and the like
 *    have no duration and no causal link: they are counted, not modelled;
 *  - metadata M: process_name, process_labels, process_sort_index, thread_name,
 *    thread_sort_index become worker names and attributes;
 *  - timestamps are microseconds (numbers, or numbers in strings), converted exactly to
 *    integer nanoseconds (decimal arithmetic, rounded half to even below 1 ns);
 *    displayTimeUnit only changes how viewers display times (the format's definition
 *    and catapult's), so it is kept as a note, never applied.
 * Kineto (docs/formats/chrome.md "PyTorch"): GPU streams are workers like threads;
 * a launch (a runtime call and the GPU operation with the same correlation id; the ac2g
 * flows are not needed) is a message, delivered when the stream could take the
 * operation (at the previous operation's end if the stream was still busy, HTA's
 * "kernel-kernel" rule, else at the operation's start, so the gap before it is the
 * launch wait); a synchronisation call (cuda*Synchronize) that the GPU made wait
 * receives a message from the GPU operation that ended last before it returned (of the
 * stream, device or event named by the matching cuda_sync record when there is one,
 * else of any stream), and only then is `waiting`; the profiler's own span ("Trace"
 * category) is dropped; per-event bookkeeping ids are not kept as attributes.
 *
 * Resolution at the end of a file, in order: close open B's, async events into slices
 * on their timelines, group and sort slices per thread, GPU operations per stream,
 * launch and sync messages (Kineto), flow messages, worker names, then per thread the
 * nesting walk that emits activities (emit_thread), then the messages.
 *
 * Invariants of the resolved output: per worker, activities are emitted in time order
 * and never overlap; every record skipped is counted by reason and reported with the
 * file, line and byte offset; the per-file note sums them up.
 */
#include "import/chrome/chrome_int.h"
#include "import/import_util.h"
#include "longpole/base/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const skip_names[SK_N] = {
    "not valid JSON", "not an event object", "without a usable ph", "without a usable ts",
    "X without a usable dur", "with a field of the wrong type", "E without B", "E before its B",
    "flow/async without id", "flow step/end without start", "flow start without end",
    "unmatched async", "unknown phase",
};

static const char *const um_names[UM_N] = {
    "counters (C)", "instants (i/I)", "samples (P)", "object events (N/O/D)", "memory dumps (v/V)",
    "other marks", "other metadata", "async instants (n)", "derived events of longpole exports",
    "profiler spans (Trace)", "cuda_sync records", "Kineto launch/sync flows (replaced by correlation links)",
};

static const char *const kcat_names[K_NCATS] = {
    "cpu_op", "Operator", "cuda_runtime", "Runtime", "cuda_driver", "kernel", "Kernel", "ac2g", "gpu_memcpy",
    "gpu_memset", "Memcpy", "Memset", "user_annotation", "gpu_user_annotation", "python_function", "cuda_sync", "Trace",
};

/* ---- diagnostics ------------------------------------------------------------------- */

void ch_report(cctx *c, lp_severity sev, lp_rule rule, uint64_t line, uint64_t off, const char *fmt, ...)
{
    if (!c->ds)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lp_diags_report(c->ds, sev, rule, c->file, line, "byte %llu: %s", (unsigned long long)off, msg);
}

void ch_skip(cctx *c, enum skip why, const lp_json *at, const char *fmt, ...)
{
    c->skipped[why]++;
    if (!c->ds)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ch_report(c, LP_SEV_ERROR, LP_RULE_IMPORT, at ? at->line : 0, at ? at->off : 0, "%s; event skipped", msg);
}

/* Close the slices still open (B without E) at the end of the trace. */
static void close_open(cctx *c)
{
    for (size_t t = 0; t < c->nth; t++) {
        cthread *th = &c->th[t];
        while (th->nopen) {
            cslice *s = &c->sl[th->open[--th->nopen]];
            s->end = c->tmax > s->start ? c->tmax : s->start;
            s->flags |= SL_UNCLOSED;
            ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, s->line, s->off,
                      "slice '%s' begun here (B) on thread %s/%s is never ended (no E); closed at the end of the trace "
                      "(%lld ns)",
                      s->name == LP_STR_NONE ? "" : lp_strtab_get(c->st, s->name), lp_strtab_get(c->st, th->pid),
                      lp_strtab_get(c->st, th->tid), (long long)s->end);
        }
    }
}

static void summary(cctx *c)
{
    if (!c->ds)
        return;
    char sk[600], um[600];
    uint64_t nsk = lp_import_counts(sk, sizeof sk, c->skipped, skip_names, SK_N);
    uint64_t num = lp_import_counts(um, sizeof um, c->unmodelled, um_names, UM_N);
    size_t nslices = 0, nthreads = 0, nx = 0, nb = 0, na = 0;
    for (size_t i = 0; i < c->nsl; i++) {
        uint16_t f = c->sl[i].flags;
        if (f & SL_DROP)
            continue;
        nslices++;
        nb += (f & SL_FROM_B) != 0;
        na += (f & SL_ASYNC) != 0;
        nx += !(f & (SL_FROM_B | SL_ASYNC));
    }
    for (size_t t = 0; t < c->nth; t++)
        nthreads += c->th[t].used;
    lp_diags_report(c->ds, LP_SEV_NOTE, LP_RULE_IMPORT, c->file, 0,
                    "chrome%s: %llu events read: %zu slices (X %zu, B/E %zu, async %zu) on %zu workers, %zu messages; "
                    "%llu not modelled%s%s%s; %llu skipped%s%s%s%s%s%s",
                    c->kineto ? " (PyTorch/Kineto)" : "", (unsigned long long)c->nevents, nslices, nx, nb, na, nthreads,
                    c->nms,
                    (unsigned long long)num, num ? " (" : "", um, num ? ")" : "", (unsigned long long)nsk,
                    nsk ? " (" : "", sk, nsk ? ")" : "", c->fatal ? "; the file ended early" : "",
                    c->dtu != LP_STR_NONE ? "; displayTimeUnit " : "",
                    c->dtu != LP_STR_NONE ? lp_strtab_get(c->st, c->dtu) : "");
}

static lp_status init_strings(cctx *c)
{
    static const char *const names[] = {"launch", "cat", "stack", "pid", "tid", "process", "thread", "labels", "sort_index",
                                        "kind", "gpu", "cpu", "async", "unclosed", "true", "clipped", "flow", "edge",
                                        "async-begin", "async-end", "sync", "stream", "rank"};
    lp_str *dst[] = {&c->s_launch, &c->s_cat, &c->s_stack, &c->s_pid, &c->s_tid, &c->s_process, &c->s_thread, &c->s_labels,
                     &c->s_sort, &c->s_kind, &c->s_gpu, &c->s_cpu, &c->s_async, &c->s_unclosed, &c->s_true,
                     &c->s_clipped, &c->s_flow, &c->s_edge, &c->s_async_begin, &c->s_async_end, &c->s_sync,
                     &c->s_stream, &c->s_rank};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (intern(c, names[i], strlen(names[i]), dst[i]))
            return nomem(c);
    for (int i = 0; i < K_NCATS; i++)
        if (intern(c, kcat_names[i], strlen(kcat_names[i]), &c->k_cat[i]))
            return nomem(c);
    return LP_OK;
}

static void release(cctx *c)
{
    for (size_t t = 0; t < c->nth; t++)
        lp_free(c->th[t].open);
    lp_free(c->th);
    lp_free(c->pr);
    lp_free(c->sl);
    lp_free(c->fl);
    lp_free(c->as);
    lp_free(c->sy);
    lp_free(c->ms);
    lp_free(c->order);
    lp_free(c->gop);
    lp_free(c->keyval);
    lp_free(c->kvp);
    lp_hmap_release(&c->memo);
    lp_free(c->stackbuf);
    lp_strtab_release(&c->keys);
}

/* The events of the file, one at a time (ch_event); the other members of a top-level
 * object (ch_top_member); JSON problems reported, the missing ']' of a top-level array
 * allowed. */
static lp_status read_events(cctx *c, lp_json_reader *r)
{
    lp_status st = LP_OK;
    int top_array = 0, saw_events = 0, top_object = 0;
    while (!st) {
        lp_json_ev ev;
        lp_status rs = lp_json_next(r, &ev, c->err);
        if (rs == LP_END)
            break;
        if (rs) {
            st = rs;
            break;
        }
        switch (ev.kind) {
        case LP_JSON_EV_BEGIN:
            if (ev.type == LP_JSON_ARRAY)
                top_array = 1;
            else
                top_object = 1;
            break;
        case LP_JSON_EV_ELEMENT:
            saw_events = 1;
            if (ev.repaired && c->ds)
                lp_diags_report(c->ds, LP_SEV_WARNING, LP_RULE_ENCODING, c->file, ev.rline,
                                "byte %llu: %s; the string was mended (bad bytes became '?')",
                                (unsigned long long)ev.roff, ev.rmsg);
            st = ch_event(c, ev.tree);
            if (c->opts && c->opts->progress && ++c->progress_n % 4096 == 0 &&
                c->opts->progress(c->opts->progress_ctx, "reading", lp_input_consumed(c->in), lp_input_size(c->in)))
                st = lp_error_set(c->err, LP_ERR_ARG, "cancelled");
            break;
        case LP_JSON_EV_MEMBER:
            st = ch_top_member(c, &ev);
            break;
        case LP_JSON_EV_VALUE:
            c->skipped[SK_SHAPE]++;
            ch_report(c, LP_SEV_ERROR, LP_RULE_IMPORT, ev.line, ev.off,
                      "expected an array of trace events or an object with \"traceEvents\", found a %s",
                      lp_json_type_name(ev.tree ? (lp_json_type)ev.tree->type : LP_JSON_NULL));
            break;
        case LP_JSON_EV_END:
            break;
        case LP_JSON_EV_BAD:
            if (ev.fatal && top_array && ev.code == LP_JSON_E_UNCLOSED) {
                /* the format allows the array's ']' to be missing */
                c->array_open = 1;
                if (c->ds)
                    lp_diags_report(c->ds, LP_SEV_NOTE, LP_RULE_IMPORT, c->file, ev.line,
                                    "byte %llu: the event array is not closed (allowed by the format)",
                                    (unsigned long long)ev.off);
                break;
            }
            c->skipped[SK_JSON]++;
            if (ev.fatal)
                c->fatal = 1;
            ch_report(c, LP_SEV_ERROR, LP_RULE_IMPORT, ev.line, ev.off, "%s; %s", ev.msg,
                      ev.fatal ? "the rest of the file is not read" : "event skipped");
            break;
        }
    }
    if (!st && top_object && !saw_events && !c->fatal)
        ch_report(c, LP_SEV_WARNING, LP_RULE_IMPORT, 1, 0, "no \"traceEvents\" array in the object: no events");
    return st;
}

/* The end of the file, in order: open B's closed, async events into slices, slices
 * grouped per thread, GPU operations per stream, launch and sync messages (Kineto),
 * flow messages, then the activities and messages (ch_emit). */
static lp_status resolve(cctx *c)
{
    close_open(c);
    lp_status st = ch_resolve_async(c);
    if (!st && c->kineto)
        for (size_t i = 0; i < c->nsl; i++)
            if (c->sl[i].flags & SL_MARK) {
                c->sl[i].flags |= SL_DROP;
                c->unmodelled[UM_TRACE_MARK]++;
            }
    if (!st)
        st = ch_group_slices(c);
    if (!st)
        st = ch_group_gpu_ops(c);
    if (!st && c->kineto)
        st = ch_resolve_launches(c);
    if (!st && c->kineto)
        st = ch_resolve_syncs(c);
    if (!st)
        st = ch_resolve_flows(c);
    if (!st) {
        /* threads whose every slice was dropped and that carry no message make no worker */
        for (size_t t = 0; t < c->nth; t++)
            if (c->th[t].used && !c->th[t].count) {
                int keep = 0;
                for (size_t i = 0; i < c->nms && !keep; i++)
                    keep = c->ms[i].src == t || c->ms[i].dst == t;
                c->th[t].used = (uint8_t)keep;
            }
        st = ch_emit(c);
    }
    return st;
}

static lp_status chrome_read(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    cctx c;
    memset(&c, 0, sizeof c);
    c.b = b;
    c.st = lp_builder_strtab(b);
    c.ds = lp_builder_diags(b);
    c.file = lp_input_name(in);
    c.opts = opts;
    c.in = in;
    c.err = err;
    c.lastthread = NONE;
    c.dtu = LP_STR_NONE;
    if (lp_strtab_init(&c.keys)) { /* it may have allocated before failing */
        lp_strtab_release(&c.keys);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    lp_status st = init_strings(&c);
    if (!st && lp_grow_at(&c.kvp, &c.capkvp, 1, sizeof *c.kvp))
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (!st)
        c.kvp[c.nkvp++] = 0;
    lp_json_reader *r = NULL;
    static const char *const keys[] = {"traceEvents", NULL};
    lp_json_opts jo;
    memset(&jo, 0, sizeof jo);
    jo.stream_keys = keys;
    jo.repair = 1;
    if (!st)
        st = lp_json_reader_new(&r, in, &jo, err);
    if (!st)
        st = read_events(&c, r);
    if (!st)
        st = resolve(&c);
    if (!st)
        summary(&c);
    lp_json_reader_free(r);
    release(&c);
    return st;
}

/* ---- detection ------------------------------------------------------------------------------ */

/* The keys of the first object in the head: after '[' (array) or at the top level. The
 * scalar values between them are skipped; the scan stops at a container value, a key
 * with escapes or cut by the end of the head. -1 if the head holds no such object. */
static int head_keys(const unsigned char *p, size_t n, char keys[][24], int max, int *array, int *empty_array)
{
    lp_json_head h;
    lp_json_head_init(&h, p, n);
    *array = *empty_array = 0;
    int t = lp_json_head_next(&h);
    if (t == '[') {
        *array = 1;
        t = lp_json_head_next(&h);
        if (t == ']') {
            *empty_array = 1;
            return 0;
        }
    }
    if (t != '{')
        return -1;
    int k = 0;
    while (k < max) {
        if (lp_json_head_next(&h) != '"' || !h.closed || h.esc)
            break;
        size_t m = h.n < 23 ? h.n : 23;
        memcpy(keys[k], h.s, m);
        keys[k][m] = '\0';
        k++;
        if (lp_json_head_next(&h) != ':')
            break;
        /* skip a scalar value; stop at containers */
        t = lp_json_head_next(&h);
        if (t == '{' || t == '[' || (t == '"' && !h.closed))
            break;
        if (t == '"')
            t = lp_json_head_next(&h);
        else
            while (t && t != ',' && t != '}')
                t = lp_json_head_next(&h);
        if (t != ',')
            break;
    }
    return k;
}

static int chrome_detect(const unsigned char *head, size_t n, const char *path)
{
    char keys[8][24];
    int array, empty;
    int k = head_keys(head, n, keys, 8, &array, &empty);
    (void)path;
    if (empty)
        return 20;
    if (k <= 0)
        return 0;
    if (!array) {
        if (!strcmp(keys[0], "traceEvents"))
            return 95;
        if (!strcmp(keys[0], "schemaVersion") || !strcmp(keys[0], "deviceProperties") ||
            !strcmp(keys[0], "distributedInfo"))
            return 90;
        if (!strcmp(keys[0], "displayTimeUnit") || !strcmp(keys[0], "otherData") ||
            !strcmp(keys[0], "systemTraceEvents") || !strcmp(keys[0], "stackFrames") ||
            !strcmp(keys[0], "samples") || !strcmp(keys[0], "traceName") || !strcmp(keys[0], "metadata"))
            return 80;
        return 0;
    }
    static const char *const evkeys[] = {"ph", "cat", "pid", "tid", "ts", "name", "args", "dur", "id", "s", "bp",
                                         "tts", "cname", NULL};
    int chromeish = 1;
    for (int i = 0; i < k; i++) {
        if (!strcmp(keys[i], "ph"))
            return 92;
        int known = 0;
        for (int e = 0; evkeys[e]; e++)
            known |= !strcmp(keys[i], evkeys[e]);
        chromeish &= known;
    }
    return chromeish ? 70 : 0;
}

const lp_importer lp_import_chrome = {
    "chrome",
    "Chrome Trace Event Format JSON (array or {\"traceEvents\"}), incl. PyTorch profiler (Kineto) traces: "
    "threads and GPU streams (docs/formats/chrome.md)",
    chrome_detect,
    chrome_read,
};
