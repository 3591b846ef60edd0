/* cmd_stream.c: `longpole stream`: SnailTrail's online mode (§5): critical participation
 * and the four summaries of every time window of a live record stream, emitted as soon
 * as the window closes (stream.h, docs/analyses/stream.md). Input: .lpt lines or
 * SnailTrail's binary log, from standard input or any number of TCP connections.
 * Output: `summary`'s text blocks or JSON lines per window (summary.h), plus what only
 * a stream has: why and when each window closed, late records, and the stream's
 * totals (stream_print.c). `--serve` also publishes the windows on a live page
 * (stream_serve.c); `--emit` writes a trace's records in stream order (stream_emit.c).
 * Stages: options, the stream (with --workers and --serve), reading until the end of
 * input or a signal, the totals. */
#include "streamcli.h"
#include "service.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct stream_args {
    lp_stream_opts so;       /* --window, --slide, --origin, --max-delay, --flight-limit, --threads, --max-line */
    cli_sumopts sum;         /* the summaries' options (copied into so.win) */
    const char *win_s, *slide_s; /* as given (the header repeats them) */
    const char *listen, *port_file, *workers, *serve;
    uint64_t max_conns;
    int format;              /* --format: 0 lpt, 1 snailtrail */
    int quiet;
    size_t max_diags;
} stream_args;

static void stream_init(void *p)
{
    stream_args *a = p;
    lp_stream_opts_init(&a->so);
    cli_sumopts_init(&a->sum);
    a->max_diags = 20;
}

/* --origin T: window k starts at T + k * slide */
static int set_origin(void *dst, const char *v, char *msg, size_t n)
{
    lp_stream_opts *so = dst;
    if (cli_parse_time(v, 0, &so->origin))
        return -1;
    so->has_origin = 1;
    return 0;
}

static const char *const stream_formats[] = {"lpt", "snailtrail", NULL};

#define S(m) CLI_AT(stream_args, m)

static const cli_opt stream_opts[] = {
    {"--window", .kind = CLI_DUR, .arg = "D", S(so.size), .range = "(0,)", CLI_RAW(stream_args, win_s),
     .err = "--window needs a duration (e.g. 1s)",
     .bad = "--window needs a positive duration (ns, or a number with ns/us/ms/s/m/h)", .example = "1s",
     .help = "window size (ns, or with ns/us/ms/s/m/h); required"},
    {"--slide", .kind = CLI_DUR, .arg = "S", S(so.step), .range = "(0,)", CLI_RAW(stream_args, slide_s),
     .err = "--slide needs a duration", .bad = "bad --slide '%s' (a positive duration)", .example = "500ms",
     .help = "step between window starts (default: the size, tumbling)"},
    {"--origin", .kind = CLI_FN, .arg = "T", S(so), .fn = set_origin, .err = "--origin needs a time",
     .bad = "bad --origin '%s' (a time in ns or with a unit)", .example = "1s",
     .help = "window k starts at T + k*S (default: the earliest time seen,\nrounded down to a multiple of S)"},
    {"--listen", .kind = CLI_STR, .arg = "H:P", S(listen), .err = "--listen needs HOST:PORT", .example = "127.0.0.1:0",
     .help = "accept TCP connections on host H, port P (0: any free port; the\n"
             "port is printed on stderr); without it, standard input is read"},
    {"--connections", .kind = CLI_COUNT, .arg = "N", S(max_conns), .range = "[1,)",
     .err = "--connections needs a positive number", .example = "2",
     .help = "with --listen: end once N connections have come and gone"},
    {"--port-file", .kind = CLI_STR, .arg = "F", S(port_file), .err = "--port-file needs a file name",
     .example = "port.txt", .help = "with --listen: write the port number to F once listening"},
    {"--serve", .kind = CLI_STR, .arg = "PORT", S(serve), .err = "--serve needs a port (or HOST:PORT)",
     .example = "0",
     .help = "also serve a live web view of the windows on 127.0.0.1:PORT (or\n"
             "HOST:PORT; 0: any free port, printed on stderr): a page drawing the\n"
             "summaries as windows close, and server-sent events of the JSON\n"
             "lines at /api/stream/events (docs/serve.md)"},
    {"--format", .kind = CLI_CHOICE, .arg = "F", S(format), .choices = stream_formats,
     .err = "--format takes lpt or snailtrail", .example = "snailtrail",
     .help = "lpt (default) or snailtrail (SnailTrail's MessagePack log)"},
    {"--max-delay", .kind = CLI_DUR, .arg = "D", S(so.max_delay), .err = "bad --max-delay (a duration)",
     .example = "2s", .help = "also close a window once the latest record time is D past its end"},
    {"--flight-limit", .kind = CLI_DUR, .arg = "D", S(so.flight_limit), .range = "(0,)",
     .err = "bad --flight-limit (a positive duration)", .example = "10s",
     .help = "sends still waiting for their receive D before the oldest open\n"
             "window are dropped as unmatched (default: 64 slides)"},
    {"--workers", .kind = CLI_STR, .arg = "FILE", S(workers), .err = "--workers needs a file", .example = "w.txt",
     .help = "expect these workers (W records or one name per line): windows\n"
             "wait for each of them; their ids follow the file's order"},
    {"--threads", .kind = CLI_COUNT, .arg = "N", S(so.threads), .range = "[0,256]", .err = "--threads takes 0..256",
     .example = "2", .help = "analyse windows on N threads (default 1; 0 = one per core)"},
    {"--json", .kind = CLI_FLAG, S(sum.fmt.json),
     .help = "JSON lines: summary's window objects, plus \"stream-window\",\n"
             "\"late\" and a final \"stream\" object (docs/analyses/stream.md)"},
    {"--compact", .kind = CLI_FLAG, S(sum.fmt.compact), .help = "one line per window"},
    {"--max-line", .kind = CLI_COUNT, .arg = "N", S(so.max_line), .range = "[16,1073741824]",
     .err = "--max-line takes 16..1G bytes", .example = "1M", .help = "longest .lpt line accepted (default 64k)"},
    {"-q", "--quiet", .kind = CLI_FLAG, S(quiet), .help = "diagnostics as counts only"},
    {"--max-errors", .kind = CLI_COUNT, .arg = "N", S(max_diags), .err = "--max-errors needs a number",
     .example = "5", .help = "diagnostics printed in full (default 20)"},
    CLI_END,
};

#undef S

const cli_spec cli_spec_stream = {
    .cmd = "stream",
    .usage = "usage: longpole stream --window D [OPTIONS]                (analyse a live stream)\n"
             "       longpole stream --emit [--halves] [--emit-format F] TRACE...   (write a replay)\n",
    .about = "Online critical participation (SnailTrail §5): records arrive from standard input\n"
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
             "Details: docs/analyses/stream.md.\n",
    .groups = {CLI_OWN("options:", stream_opts), CLI_GROUP(NULL, cli_sum_opts, stream_args, sum)},
    .operands = CLI_STDIN_ONLY,
    .unknown = "unknown option '%s' (the input is standard input or --listen)",
    .size = sizeof(stream_args),
    .init = stream_init,
};

/* ---- the stream's callbacks ------------------------------------------------------------- */

typedef struct sctx {
    cli_sumfmt fmt;
    cli_sumtotal *tot;
    lp_stream *s;
    int base_set;
    size_t max_diags, shown_diags;
    int quiet;
    const char *port_file;
} sctx;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

static int on_window(void *ctx, const lp_winres *r, const lp_stream_winfo *wi)
{
    sctx *c = ctx;
    if (!c->base_set) {
        c->fmt.base = lp_stream_tmin(c->s);
        c->base_set = 1;
    }
    cli_winres_print(stdout, r, &c->fmt);
    cli_stream_serve_window(r, wi); /* --serve: publish the window (stream_serve.c) */
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
        printf("late: window %llu [%.9g s, %.9g s) has received %llu record%s since it was emitted: its summary "
               "above is partial\n",
               (unsigned long long)index, (double)(ts - c->fmt.base) / 1e9, (double)(te - c->fmt.base) / 1e9,
               (unsigned long long)total, total == 1 ? "" : "s");
    }
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

static void on_listen(void *ctx, const char *host, unsigned port)
{
    sctx *c = ctx;
    fprintf(stderr, "longpole stream: listening on %s:%u\n", host, port);
    if (c->port_file)
        cli_write_port_file(c->port_file, port);
}

/* ---- the command ------------------------------------------------------------------------- */

/* What the options say together (each alone was checked by the parser). */
static int check_args(stream_args *a)
{
    if (!a->win_s)
        return cli_usage("stream", "--window needs a positive duration (ns, or a number with ns/us/ms/s/m/h)");
    if (a->sum.fmt.json && a->sum.fmt.compact)
        return cli_usage("stream", "--json and --compact exclude each other");
    if ((a->max_conns || a->port_file) && !a->listen)
        return cli_usage("stream", "--connections and --port-file need --listen");
    cli_sumopts_apply(&a->sum);
    a->so.win = a->sum.win;
    return 0;
}

/* The stream, its declared workers and the live view. */
static int open_stream(const stream_args *a, sctx *c, lp_diags *ds, lp_stream **s)
{
    lp_error err;
    lp_error_clear(&err);
    if (lp_stream_new(s, &a->so, ds, on_window, on_late, c, &err))
        return cli_fail("stream", &err);
    c->s = *s;
    int rc = 0;
    if (a->workers && (rc = declare_workers(*s, a->workers, &err)))
        return rc;
    if (a->serve && (rc = cli_stream_serve_start(a->serve, &c->fmt)))
        return rc;
    return 0;
}

static void print_head(const stream_args *a)
{
    char head[256];
    int k = snprintf(head, sizeof head, "stream: windows of %s", a->win_s);
    if (a->slide_s)
        k += snprintf(head + k, sizeof head - (size_t)k, " sliding by %s", a->slide_s);
    printf("%s; %s; %s; times are after the first record\n", head,
           a->format == 1 ? "SnailTrail records" : ".lpt records", a->listen ? "TCP connections" : "standard input");
    fflush(stdout);
}

/* Read until the inputs end or a signal stops us, then flush the open windows. */
static lp_status run(const stream_args *a, sctx *c, lp_stream *s, double *wall, lp_error *err)
{
    lp_serve_opts sv;
    memset(&sv, 0, sizeof sv);
    sv.listen = a->listen;
    sv.read_stdin = !a->listen;
    sv.format = a->format == 1 ? LP_STREAM_SNAILTRAIL : LP_STREAM_LPT;
    sv.max_conns = a->max_conns;
    sv.stop = &cli_stop_flag;
    sv.on_listen = on_listen;
    sv.ctx = c;
    double t0 = now_s();
    lp_status st = lp_stream_serve(s, &sv, err);
    if (!st)
        st = lp_stream_finish(s, err);
    *wall = now_s() - t0;
    return st;
}

int cmd_stream(int argc, char **argv)
{
    if (cli_has(argc, argv, "--emit") == 1)
        return cli_stream_emit(argc, argv);
    stream_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_stream, argc, argv, &a, &rest);
    if (rc)
        return rc;
    cli_args_release(&cli_spec_stream, &a, &rest);
    if ((rc = check_args(&a)))
        return rc;
    sctx c;
    memset(&c, 0, sizeof c);
    c.fmt = a.sum.fmt;
    c.max_diags = a.max_diags;
    c.quiet = a.quiet;
    c.port_file = a.port_file;
    lp_diags ds;
    lp_diags_init(&ds, 0);
    ds.fn = print_diag;
    ds.fnctx = &c;
    c.tot = cli_sumtotal_new();
    if (!c.tot) {
        lp_diags_release(&ds);
        return LP_EXIT_NOMEM;
    }
    lp_stream *s = NULL;
    if ((rc = open_stream(&a, &c, &ds, &s))) {
        lp_stream_free(s);
        cli_sumtotal_free(c.tot);
        lp_diags_release(&ds);
        return rc;
    }
    cli_stop_catch();
    if (!c.fmt.json)
        print_head(&a);
    lp_error err;
    lp_error_clear(&err);
    double wall = 0;
    int incomplete = 0;
    lp_status st = run(&a, &c, s, &wall, &err);
    if (!st) {
        if (!c.base_set)
            c.fmt.base = lp_stream_tmin(s) == INT64_MAX ? 0 : lp_stream_tmin(s);
        cli_sumtotal_print(stdout, c.tot, &c.fmt);
        incomplete = cli_stream_stats_print(s, c.fmt.json, wall);
    }
    cli_stop_default();
    cli_stream_serve_stop(st ? NULL : c.tot); /* --serve: last events, then the server stops */
    cli_stream_diag_counts(&ds);
    int data_errors = ds.nerrors > 0;
    lp_stream_free(s);
    cli_sumtotal_free(c.tot);
    lp_diags_release(&ds);
    if (st)
        return cli_fail("stream", &err);
    if (fflush(stdout) != 0)
        return LP_EXIT_IO;
    /* a finite input (standard input, not --listen) whose windows miss records: the
     * results are incomplete, and the status says so (docs/trust.md) */
    return data_errors || (incomplete && !a.listen) ? LP_EXIT_DATA : LP_EXIT_OK;
}
