/* cmd_stream.c: `longpole stream`: SnailTrail's online mode (§5): critical participation
 * and the four summaries of every time window of a live record stream, emitted as soon
 * as the window closes (stream.h, docs/analyses/stream.md). Input: .lpt lines or
 * SnailTrail's binary log, from standard input or any number of TCP connections.
 * Output: `summary`'s text blocks or JSON lines per window (cmd_summary.c prints both),
 * plus what only a stream has: why and when each window closed, late records, and the
 * stream's totals. `--emit` writes a trace's records in stream order (a replay file). */
#include "cli.h"
#include "longpole/stream/stream.h"
#include "longpole/import/snailtrail.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char cli_help_stream[] =
    "usage: longpole stream --window D [OPTIONS]                (analyse a live stream)\n"
    "       longpole stream --emit [--halves] [--emit-format F] TRACE...   (write a replay)\n"
    "\n"
    "Online critical participation (SnailTrail §5): records arrive from standard input\n"
    "or TCP connections (one per worker or mixed; a connection may carry any workers),\n"
    "and every time window is analysed as soon as it closes: its snapshot, the number of\n"
    "transient critical paths, CP of every activity and message, SnailTrail's four\n"
    "summaries and the instrumentation checks, in `longpole summary`'s format.\n"
    "\n"
    "A worker's watermark is the time of its latest record (A: its start; M and S: the\n"
    "send; R: the receive; SnailTrail events: their time). A window [ts, te] closes when\n"
    "every live worker's watermark has passed te and the first event after te of every\n"
    "worker has arrived; with --max-delay D also once the latest time seen is D past\n"
    "te. A worker's stream ends when its connection closes. Records for a window already\n"
    "emitted are late: counted and reported, used for the windows still open. Memory is\n"
    "bounded by the open windows. Malformed lines, late records, unmatched halves and\n"
    "dropped connections are reported, never fatal. SIGINT/SIGTERM or the end of input:\n"
    "the open windows are flushed with what arrived, then the totals are printed.\n"
    "Details: docs/analyses/stream.md.\n"
    "\n"
    "options:\n"
    "  --window D        window size (ns, or with ns/us/ms/s/m/h); required\n"
    "  --slide S         step between window starts (default: the size, tumbling)\n"
    "  --origin T        window k starts at T + k*S (default: the earliest time seen,\n"
    "                    rounded down to a multiple of S)\n"
    "  --listen H:P      accept TCP connections on host H, port P (0: any free port; the\n"
    "                    port is printed on stderr); without it, standard input is read\n"
    "  --connections N   with --listen: end once N connections have come and gone\n"
    "  --port-file F     with --listen: write the port number to F once listening\n"
    "  --serve PORT      also serve a live web view of the windows on 127.0.0.1:PORT (or\n"
    "                    HOST:PORT; 0: any free port, printed on stderr): a page drawing the\n"
    "                    summaries as windows close, and server-sent events of the JSON\n"
    "                    lines at /api/stream/events (docs/serve.md)\n"
    "  --format F        lpt (default) or snailtrail (SnailTrail's MessagePack log)\n"
    "  --max-delay D     also close a window once the latest record time is D past its end\n"
    "  --flight-limit D  sends still waiting for their receive D before the oldest open\n"
    "                    window are dropped as unmatched (default: 64 slides)\n"
    "  --workers FILE    expect these workers (W records or one name per line): windows\n"
    "                    wait for each of them; their ids follow the file's order\n"
    "  --threads N       analyse windows on N threads (default 1; 0 = one per core)\n"
    "  --by LIST         summaries: activity, worker, operator, comm, or all (default)\n"
    "  --top K           rows per summary (default 5; 0 = all; JSON: all unless given)\n"
    "  --json            JSON lines: summary's window objects, plus \"stream-window\",\n"
    "                    \"late\" and a final \"stream\" object (docs/analyses/stream.md)\n"
    "  --compact         one line per window\n"
    "  --seed N          seed of the random paths (default 1)\n"
    "  --no-path, --no-checks, --timing   as for `summary`\n"
    "  --max-line N      longest .lpt line accepted (default 64k)\n"
    "  -q                diagnostics as counts only; --max-errors N: printed in full\n"
    "                    (default 20)\n"
    "\n"
    "--emit writes the records of TRACE in stream order (W records, then every record at\n"
    "its time) to standard output or -o FILE: .lpt text (--halves: messages as S/R\n"
    "pairs), or with --emit-format snailtrail SnailTrail's binary log. Feeding it back\n"
    "gives `summary`'s windows. Exit: 0, or 4 if the input had errors.\n";

static volatile sig_atomic_t stop_flag;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

typedef struct sctx {
    cli_sumfmt fmt;
    cli_sumtotal *tot;
    lp_stream *s;
    int base_set;
    size_t max_diags, shown_diags;
    int quiet;
    const char *port_file;
} sctx;

static void print_diag(void *ctx, const lp_diag *d)
{
    sctx *c = ctx;
    if (c->quiet || c->shown_diags >= c->max_diags) {
        if (!c->quiet && c->shown_diags++ == c->max_diags)
            fprintf(stderr, "longpole stream: (further diagnostics only counted)\n");
        return;
    }
    char buf[1024];
    lp_diag_format(buf, sizeof buf, d);
    fprintf(stderr, "%s\n", buf);
    c->shown_diags++;
}

/* The diagnostics were printed as they came (print_diag): now their counts by rule. */
static void print_diag_counts(const lp_diags *ds)
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

/* The stream-window object printed after each window's summaries (docs/analyses/stream.md):
 * how the window closed and what the stream held; shared with `stream --serve`. */
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

static int on_window(void *ctx, const lp_winres *r, const lp_stream_winfo *wi)
{
    sctx *c = ctx;
    if (!c->base_set) {
        c->fmt.base = lp_stream_tmin(c->s);
        c->base_set = 1;
    }
    cli_winres_print(stdout, r, &c->fmt);
    cli_stream_serve_window(r, wi); /* --serve: publish the window (cmd_serve.c) */
    if (c->fmt.json) {
        cli_stream_winfo_json(stdout, r, wi);
    } else if (!c->fmt.compact) {
        printf("  stream: closed by %s, %llu records (%llu in flight or open), %llu held, lag %.3f ms, "
               "latency %.3f ms\n",
               lp_stream_close_name(wi->closed_by), (unsigned long long)wi->records,
               (unsigned long long)wi->in_flight, (unsigned long long)wi->retained, (double)wi->lag_ns / 1e6,
               wi->latency_s * 1e3);
    }
    cli_sumtotal_add(c->tot, r);
    fflush(stdout);
    return ferror(stdout) ? -1 : 0;
}

static void on_late(void *ctx, uint64_t index, int64_t ts, int64_t te, uint64_t total)
{
    sctx *c = ctx;
    if (c->fmt.json) {
        printf("{\"kind\":\"late\",\"index\":%llu,\"ts\":%lld,\"te\":%lld,\"records\":%llu}\n",
               (unsigned long long)index, (long long)ts, (long long)te, (unsigned long long)total);
    } else {
        printf("late: window %llu [%.9g s, %.9g s) has received %llu record%s since it was emitted\n",
               (unsigned long long)index, (double)(ts - c->fmt.base) / 1e9, (double)(te - c->fmt.base) / 1e9,
               (unsigned long long)total, total == 1 ? "" : "s");
    }
}

static void on_listen(void *ctx, const char *host, unsigned port)
{
    sctx *c = ctx;
    fprintf(stderr, "longpole stream: listening on %s:%u\n", host, port);
    if (c->port_file) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", c->port_file);
        FILE *f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "%u\n", port);
            if (fclose(f) == 0)
                rename(tmp, c->port_file);
        }
    }
}

static void print_stats(const lp_stream *s, const sctx *c, double wall)
{
    const lp_stream_stats *st = lp_stream_get_stats(s);
    if (c->fmt.json) {
        lp_jsonw j;
        lp_jsonw_init(&j, stdout, 0);
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "kind", "stream");
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
        return;
    }
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

/* --workers FILE: its W records (and bare names) go through a connection of their own,
 * left open until the end, so the workers are live from the start. */
static int declare_workers(lp_stream *s, const char *path, lp_error *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) {
        fprintf(stderr, "longpole stream: cannot open '%s': %s\n", path, strerror(errno));
        return LP_EXIT_IO;
    }
    uint32_t id;
    char name[4200];
    snprintf(name, sizeof name, "--workers %s", path);
    if (lp_stream_open(s, name, LP_STREAM_LPT, &id, err)) {
        if (f != stdin)
            fclose(f);
        return cli_fail("stream", err);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || !*p)
            continue;
        int is_w = (p[0] == 'W' && (p[1] == ' ' || p[1] == '\t'));
        const char *q = p;
        while (*q && *q != ' ' && *q != '\t' && *q != '\n' && *q != '\r')
            q++;
        const char *rest = q;
        while (*rest == ' ' || *rest == '\t')
            rest++;
        int bare = !is_w && (*rest == '\n' || *rest == '\r' || !*rest) && (size_t)(q - p) > 1;
        if (!is_w && !bare)
            continue; /* other records: not declarations */
        if (bare) {
            char buf[8192];
            int k = snprintf(buf, sizeof buf, "W %.*s\n", (int)(q - p), p);
            if (k > 0 && (size_t)k < sizeof buf && lp_stream_feed(s, id, buf, (size_t)k, err)) {
                rc = cli_fail("stream", err);
                break;
            }
        } else if (lp_stream_feed(s, id, p, strlen(p), err)) {
            rc = cli_fail("stream", err);
            break;
        }
    }
    free(line);
    if (f != stdin)
        fclose(f);
    return rc;
}

static int emit(int argc, char **argv)
{
    cli_load lo = {0};
    const char *out = NULL, *efmt = "lpt", *v;
    int halves = 0;
    char **paths = lp_malloc((size_t)argc * sizeof *paths);
    int npaths = 0;
    uint64_t n;
    if (!paths)
        return LP_EXIT_NOMEM;
#define USAGE(...) return lp_free(paths), cli_usage("stream", __VA_ARGS__)
    for (int i = 1; i < argc; i++) {
        if (cli_flag(argv, i, "--emit"))
            continue;
        if (cli_flag(argv, i, "--halves"))
            halves = 1;
        else if (cli_flag(argv, i, "-q") || cli_flag(argv, i, "--quiet"))
            lo.quiet = 1;
        else if (cli_opt(argc, argv, &i, "-o", &out)) {
            if (!out)
                USAGE("-o needs a file name");
        } else if (cli_opt(argc, argv, &i, "--emit-format", &efmt)) {
            if (!efmt || (strcmp(efmt, "lpt") && strcmp(efmt, "snailtrail")))
                USAGE("--emit-format takes lpt or snailtrail");
        } else if (cli_opt(argc, argv, &i, "--format", &lo.format)) {
            if (!lo.format)
                USAGE("--format needs a value");
        } else if (cli_opt(argc, argv, &i, "--max-errors", &v)) {
            if (!v || cli_parse_count(v, &n))
                USAGE("--max-errors needs a number");
            lo.max_diags = (size_t)n;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            USAGE("unknown option '%s' with --emit", argv[i]);
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (!npaths)
        USAGE("--emit needs a trace");
#undef USAGE
    lp_trace *t = NULL;
    int data_errors = 0;
    int rc = cli_load_trace(&lo, paths, npaths, &t, &data_errors);
    lp_free(paths);
    if (rc)
        return rc;
    FILE *f = out && strcmp(out, "-") ? fopen(out, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "longpole stream: cannot create '%s': %s\n", out, strerror(errno));
        lp_trace_free(t);
        return LP_EXIT_IO;
    }
    lp_error err;
    lp_error_clear(&err);
    lp_status st = strcmp(efmt, "snailtrail") == 0 ? lp_st_write(t, f, &err) : lp_stream_write_lpt(t, f, halves, &err);
    int cl = f != stdout ? fclose(f) : fflush(f);
    lp_trace_free(t);
    if (st)
        return cli_fail("stream", &err);
    if (cl) {
        fprintf(stderr, "longpole stream: write error\n");
        return LP_EXIT_IO;
    }
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}

int cmd_stream(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--emit") == 0)
            return emit(argc, argv);
    const char *v, *win_s = NULL, *slide_s = NULL, *listen = NULL, *workers = NULL, *origin_s = NULL;
    const char *serve = NULL; /* --serve PORT: a live web view of the windows (cmd_serve.c) */
    lp_stream_opts so;
    lp_stream_opts_init(&so);
    sctx c;
    memset(&c, 0, sizeof c);
    c.fmt.top = 5;
    c.fmt.seed = 1;
    c.max_diags = 20;
    int top_given = 0;
    uint64_t n, max_conns = 0;
    lp_stream_format fmt = LP_STREAM_LPT;
    for (int i = 1; i < argc; i++) {
        if (cli_flag(argv, i, "--json"))
            c.fmt.json = 1;
        else if (cli_flag(argv, i, "--compact"))
            c.fmt.compact = 1;
        else if (cli_flag(argv, i, "--timing"))
            c.fmt.timing = 1;
        else if (cli_flag(argv, i, "--no-path"))
            so.win.no_path = 1;
        else if (cli_flag(argv, i, "--no-checks"))
            so.win.no_checks = 1;
        else if (cli_flag(argv, i, "-q") || cli_flag(argv, i, "--quiet"))
            c.quiet = 1;
        else if (cli_opt(argc, argv, &i, "--window", &win_s)) {
            if (!win_s)
                return cli_usage("stream", "--window needs a duration (e.g. 1s)");
        } else if (cli_opt(argc, argv, &i, "--slide", &slide_s)) {
            if (!slide_s)
                return cli_usage("stream", "--slide needs a duration");
        } else if (cli_opt(argc, argv, &i, "--origin", &origin_s)) {
            if (!origin_s)
                return cli_usage("stream", "--origin needs a time");
        } else if (cli_opt(argc, argv, &i, "--listen", &listen)) {
            if (!listen)
                return cli_usage("stream", "--listen needs HOST:PORT");
        } else if (cli_opt(argc, argv, &i, "--connections", &v)) {
            if (!v || cli_parse_count(v, &max_conns) || !max_conns)
                return cli_usage("stream", "--connections needs a positive number");
        } else if (cli_opt(argc, argv, &i, "--port-file", &c.port_file)) {
            if (!c.port_file)
                return cli_usage("stream", "--port-file needs a file name");
        } else if (cli_opt(argc, argv, &i, "--format", &v)) {
            if (v && strcmp(v, "lpt") == 0)
                fmt = LP_STREAM_LPT;
            else if (v && strcmp(v, "snailtrail") == 0)
                fmt = LP_STREAM_SNAILTRAIL;
            else
                return cli_usage("stream", "--format takes lpt or snailtrail");
        } else if (cli_opt(argc, argv, &i, "--max-delay", &v)) {
            if (!v || cli_parse_dur(v, &so.max_delay))
                return cli_usage("stream", "bad --max-delay (a duration)");
        } else if (cli_opt(argc, argv, &i, "--flight-limit", &v)) {
            if (!v || cli_parse_dur(v, &so.flight_limit) || so.flight_limit <= 0)
                return cli_usage("stream", "bad --flight-limit (a positive duration)");
        } else if (cli_opt(argc, argv, &i, "--workers", &workers)) {
            if (!workers)
                return cli_usage("stream", "--workers needs a file");
        } else if (cli_opt(argc, argv, &i, "--threads", &v)) {
            if (!v || cli_parse_count(v, &n) || n > 256)
                return cli_usage("stream", "--threads takes 0..256");
            so.threads = (unsigned)n;
        } else if (cli_opt(argc, argv, &i, "--by", &v)) {
            if (!v || cli_parse_kinds(v, &so.win.kinds))
                return cli_usage("stream", "--by takes activity, worker, operator, comm (comma-separated) or all");
        } else if (cli_opt(argc, argv, &i, "--top", &v)) {
            if (!v || cli_parse_count(v, &n))
                return cli_usage("stream", "--top needs a number");
            c.fmt.top = (size_t)n;
            top_given = 1;
        } else if (cli_opt(argc, argv, &i, "--seed", &v)) {
            if (!v || cli_parse_count(v, &n))
                return cli_usage("stream", "--seed needs a number");
            so.win.seed = c.fmt.seed = n;
        } else if (cli_opt(argc, argv, &i, "--max-line", &v)) {
            if (!v || cli_parse_count(v, &n) || n < 16 || n > ((uint64_t)1 << 30))
                return cli_usage("stream", "--max-line takes 16..1G bytes");
            so.max_line = (size_t)n;
        } else if (cli_opt(argc, argv, &i, "--max-errors", &v)) {
            if (!v || cli_parse_count(v, &n))
                return cli_usage("stream", "--max-errors needs a number");
            c.max_diags = (size_t)n;
        } else if (cli_opt(argc, argv, &i, "--serve", &serve)) {
            if (!serve)
                return cli_usage("stream", "--serve needs a port (or HOST:PORT)");
        } else if (strcmp(argv[i], "-") == 0) {
            continue; /* standard input: the default */
        } else {
            return cli_usage("stream", "unknown option '%s' (the input is standard input or --listen)", argv[i]);
        }
    }
    if (!win_s || cli_parse_dur(win_s, &so.size) || so.size <= 0)
        return cli_usage("stream", "--window needs a positive duration (ns, or a number with ns/us/ms/s/m/h)");
    if (slide_s && (cli_parse_dur(slide_s, &so.step) || so.step <= 0))
        return cli_usage("stream", "bad --slide '%s' (a positive duration)", slide_s);
    if (origin_s) {
        if (cli_parse_time(origin_s, 0, &so.origin))
            return cli_usage("stream", "bad --origin '%s' (a time in ns or with a unit)", origin_s);
        so.has_origin = 1;
    }
    if (c.fmt.json && c.fmt.compact)
        return cli_usage("stream", "--json and --compact exclude each other");
    if ((max_conns || c.port_file) && !listen)
        return cli_usage("stream", "--connections and --port-file need --listen");
    c.fmt.top_json = top_given ? c.fmt.top : 0;

    lp_diags ds;
    lp_diags_init(&ds, 0);
    ds.fn = print_diag;
    ds.fnctx = &c;
    c.tot = cli_sumtotal_new();
    if (!c.tot)
        return LP_EXIT_NOMEM;
    lp_error err;
    lp_error_clear(&err);
    lp_stream *s = NULL;
    lp_status st = lp_stream_new(&s, &so, &ds, on_window, on_late, &c, &err);
    if (st) {
        cli_sumtotal_free(c.tot);
        lp_diags_release(&ds);
        return cli_fail("stream", &err);
    }
    c.s = s;
    int rc = 0;
    if (workers && (rc = declare_workers(s, workers, &err))) {
        lp_stream_free(s);
        cli_sumtotal_free(c.tot);
        lp_diags_release(&ds);
        return rc;
    }
    if (serve && (rc = cli_stream_serve_start(serve, &c.fmt))) {
        lp_stream_free(s);
        cli_sumtotal_free(c.tot);
        lp_diags_release(&ds);
        return rc;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (!c.fmt.json) {
        char head[256];
        int k = snprintf(head, sizeof head, "stream: windows of %s", win_s);
        if (slide_s)
            k += snprintf(head + k, sizeof head - (size_t)k, " sliding by %s", slide_s);
        printf("%s; %s; %s; times are after the first record\n", head,
               fmt == LP_STREAM_SNAILTRAIL ? "SnailTrail records" : ".lpt records",
               listen ? "TCP connections" : "standard input");
        fflush(stdout);
    }
    lp_serve_opts sv;
    memset(&sv, 0, sizeof sv);
    sv.listen = listen;
    sv.read_stdin = !listen;
    sv.format = fmt;
    sv.max_conns = max_conns;
    sv.stop = &stop_flag;
    sv.on_listen = on_listen;
    sv.ctx = &c;
    double t0 = now_s();
    st = lp_stream_serve(s, &sv, &err);
    if (!st)
        st = lp_stream_finish(s, &err);
    double wall = now_s() - t0;
    if (!st) {
        if (!c.base_set)
            c.fmt.base = lp_stream_tmin(s) == INT64_MAX ? 0 : lp_stream_tmin(s);
        cli_sumtotal_print(stdout, c.tot, &c.fmt);
        print_stats(s, &c, wall);
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    cli_stream_serve_stop(st ? NULL : c.tot); /* --serve: last events, then the server stops */
    print_diag_counts(&ds);
    int data_errors = ds.nerrors > 0;
    lp_stream_free(s);
    cli_sumtotal_free(c.tot);
    lp_diags_release(&ds);
    if (st)
        return cli_fail("stream", &err);
    if (fflush(stdout) != 0)
        return LP_EXIT_IO;
    return data_errors ? LP_EXIT_DATA : LP_EXIT_OK;
}
