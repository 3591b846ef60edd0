/* stream_print.c: what `stream` prints beside summary's windows (streamcli.h,
 * docs/analyses/stream.md): the stream-window object (how a window closed), the
 * stream's totals as text or a JSON line, and the counts of the diagnostics printed as
 * they came. */
#include "streamcli.h"

void cli_stream_diag_counts(const lp_diags *ds)
{
    uint64_t total = ds->nerrors + ds->nwarnings + ds->nnotes;
    if (!total)
        return;
    fprintf(stderr, "input: %llu error%s, %llu warning%s, %llu note%s (", (unsigned long long)ds->nerrors,
            ds->nerrors == 1 ? "" : "s", (unsigned long long)ds->nwarnings, ds->nwarnings == 1 ? "" : "s",
            (unsigned long long)ds->nnotes, ds->nnotes == 1 ? "" : "s");
    int first = 1;
    for (int r = 0; r < LP_RULE_COUNT; r++)
        if (ds->count[r]) {
            fprintf(stderr, "%s%s: %llu", first ? "" : ", ", lp_rule_name((lp_rule)r),
                    (unsigned long long)ds->count[r]);
            first = 0;
        }
    fprintf(stderr, ")\n");
}

/* The stream-window object printed after each window's summaries: how the window
 * closed and what the stream held (also published by `stream --serve`). */
void cli_stream_winfo_json(FILE *f, const lp_winres *r, const lp_stream_winfo *wi)
{
    lp_jsonw j;
    lp_jsonw_init(&j, f, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "kind", "stream-window");
    lp_jsonw_ku64(&j, "index", r->index);
    lp_jsonw_kstr(&j, "closed_by", lp_stream_close_name(wi->closed_by));
    lp_jsonw_ku64(&j, "records", wi->records);
    lp_jsonw_ku64(&j, "in_flight", wi->in_flight);
    lp_jsonw_ku64(&j, "retained", wi->retained);
    lp_jsonw_ki64(&j, "lag_ns", wi->lag_ns);
    lp_jsonw_kdbl(&j, "latency_s", wi->latency_s);
    lp_jsonw_ku64(&j, "build_errors", wi->build_errors);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

static void stats_json(const lp_stream *s, const lp_stream_stats *st, double wall)
{
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "kind", "stream");
    lp_jsonw_kbool(&j, "complete", st->late + st->dropped == 0); /* issue 12: records missing from windows? */
    lp_jsonw_ku64(&j, "missing_records", st->late + st->dropped);
    lp_jsonw_ku64(&j, "bytes", st->bytes);
    lp_jsonw_ku64(&j, "lines", st->lines);
    lp_jsonw_ku64(&j, "records", st->records);
    lp_jsonw_ku64(&j, "events", st->events);
    lp_jsonw_ku64(&j, "malformed", st->malformed);
    lp_jsonw_ku64(&j, "out_of_order", st->out_of_order);
    lp_jsonw_ku64(&j, "late", st->late);
    lp_jsonw_ku64(&j, "late_windows", st->late_windows);
    lp_jsonw_ku64(&j, "overlaps", st->overlaps);
    lp_jsonw_ku64(&j, "skewed", st->skewed);
    lp_jsonw_ku64(&j, "matched", st->matched);
    lp_jsonw_ku64(&j, "unmatched_sends", st->unmatched_sends);
    lp_jsonw_ku64(&j, "unmatched_receives", st->unmatched_recvs);
    lp_jsonw_ku64(&j, "duplicate_sends", st->dup_sends);
    lp_jsonw_ku64(&j, "unpaired_activity_events", st->open_dropped);
    lp_jsonw_ku64(&j, "connections", st->connections);
    lp_jsonw_ku64(&j, "disconnects", st->disconnects);
    lp_jsonw_ku64(&j, "dropped", st->dropped);
    lp_jsonw_ku64(&j, "truncated", st->truncated);
    lp_jsonw_ku64(&j, "workers", st->workers);
    lp_jsonw_ku64(&j, "windows", st->windows);
    lp_jsonw_ku64(&j, "skipped_empty_windows", st->skipped);
    lp_jsonw_key(&j, "closed_by");
    lp_jsonw_obj(&j);
    for (int k = 0; k < 4; k++)
        lp_jsonw_ku64(&j, lp_stream_close_name((lp_stream_why)k), st->closed_by[k]);
    lp_jsonw_obj_end(&j);
    lp_jsonw_ku64(&j, "max_retained", st->max_retained);
    lp_jsonw_ku64(&j, "max_pending", st->max_pending);
    lp_jsonw_ku64(&j, "threads", lp_stream_threads(s));
    lp_jsonw_kdbl(&j, "seconds", wall);
    lp_jsonw_kdbl(&j, "events_per_second", wall > 0 ? (double)st->events / wall : 0);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

static void stats_text(const lp_stream *s, const lp_stream_stats *st, double wall)
{
    printf("\nstream: %llu records (%llu events) in %llu bytes from %llu connection%s; %llu windows (%llu by "
           "watermarks, %llu by max-delay, %llu when streams ended, %llu at the end)\n",
           (unsigned long long)st->records, (unsigned long long)st->events, (unsigned long long)st->bytes,
           (unsigned long long)st->connections, st->connections == 1 ? "" : "s", (unsigned long long)st->windows,
           (unsigned long long)st->closed_by[0], (unsigned long long)st->closed_by[1],
           (unsigned long long)st->closed_by[2], (unsigned long long)st->closed_by[3]);
    printf("  malformed %llu, out of order %llu, late %llu (in %llu window%s), overlapping %llu, skewed %llu, "
           "unmatched sends %llu, unmatched receives %llu, duplicate sends %llu, unpaired activity events %llu\n",
           (unsigned long long)st->malformed, (unsigned long long)st->out_of_order, (unsigned long long)st->late,
           (unsigned long long)st->late_windows, st->late_windows == 1 ? "" : "s", (unsigned long long)st->overlaps,
           (unsigned long long)st->skewed, (unsigned long long)st->unmatched_sends,
           (unsigned long long)st->unmatched_recvs, (unsigned long long)st->dup_sends,
           (unsigned long long)st->open_dropped);
    printf("  disconnects %llu (%llu dropped, %llu inside a line or record); workers %llu; at most %llu records "
           "and %llu halves held; %.3f s, %.2f M events/s on %u analysis thread%s\n",
           (unsigned long long)st->disconnects, (unsigned long long)st->dropped, (unsigned long long)st->truncated,
           (unsigned long long)st->workers,
           (unsigned long long)st->max_retained, (unsigned long long)st->max_pending, wall,
           wall > 0 ? (double)st->events / wall / 1e6 : 0.0, lp_stream_threads(s),
           lp_stream_threads(s) == 1 ? "" : "s");
}

/* Records the windows' results are missing: late ones, and those lost when a
 * connection dropped. */
static uint64_t missing(const lp_stream_stats *st) { return st->late + st->dropped; }

#define INCOMPLETE_REMEDY                                                                                             \
    "a file written worker by worker (as `longpole generate` writes it) is not in time order: analyse it with "     \
    "`longpole summary FILE`, or replay it in time order with `longpole stream --emit FILE | longpole stream ...`"

int cli_stream_stats_print(const lp_stream *s, int json, double wall)
{
    const lp_stream_stats *st = lp_stream_get_stats(s);
    uint64_t miss = missing(st);
    if (json) {
        stats_json(s, st, wall);
        return miss > 0;
    }
    stats_text(s, st, wall);
    if (miss)
        printf("RESULTS ARE INCOMPLETE: %llu of %llu records (%.1f%%) are missing from the windows' summaries (%llu "
               "arrived after their window had been emitted, in %llu window%s marked by `late:` lines; %llu lost with "
               "dropped connections); %s\n",
               (unsigned long long)miss, (unsigned long long)(st->records + st->dropped),
               st->records + st->dropped ? 100.0 * (double)miss / (double)(st->records + st->dropped) : 0.0,
               (unsigned long long)st->late, (unsigned long long)st->late_windows, st->late_windows == 1 ? "" : "s",
               (unsigned long long)st->dropped, INCOMPLETE_REMEDY);
    return miss > 0;
}
