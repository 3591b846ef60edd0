/* cmd_serve.c: `longpole serve`: the report's views (report.h; serve_pages.c) and a JSON
 * API for each analysis (serve_api.c) over local HTTP (serve.h; docs/serve.md).
 *
 * The JSON API runs the CLI's own commands: GET /api/cp?from=1s answers exactly what
 * `longpole cp --json --from 1s INPUTS` prints, because it is that command, run as a
 * child of this process (lp_cmdcache running this executable, cli_self_path: cached
 * per distinct request, at most --jobs at once). So every endpoint is the CLI's JSON
 * writer by construction, none is duplicated, and an analysis that crashes or runs out
 * of memory cannot take the server down. The children read the inputs again: they get
 * the inputs as absolute paths and the loading options of the command line (forwarded
 * as given). The views are computed in this process once, before listening, and each
 * page is rendered once and kept. Stages: options, inputs by kind, the views, the
 * server, waiting for a signal. */
#define _GNU_SOURCE
#include "servecli.h"
#include "service.h"
#include "viewcli.h"
#include "longpole/load/inputs.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

typedef struct serve_args {
    viewcli vc;
    lp_server_opts so;
    lp_cmdcache_opts co;
    const char *port_file;
    int no_views, verbose;
} serve_args;

static void serve_init(void *p)
{
    serve_args *a = p;
    viewcli_init(&a->vc);
    lp_server_opts_init(&a->so);
}

#define A(m) CLI_AT(serve_args, m)

static const cli_opt serve_opts[] = {
    {"--listen", .kind = CLI_STR, .arg = "HOST:PORT", A(so.listen), .err = "--listen needs HOST:PORT",
     .example = "127.0.0.1:0",
     .help = "address (default 127.0.0.1:8080; PORT 0: any free port; the\nURL is printed on stderr)"},
    {"--port-file", .kind = CLI_STR, .arg = "F", A(port_file), .err = "--port-file needs a file name",
     .example = "port.txt", .help = "write the port number to F once listening"},
    {"--no-views", .kind = CLI_FLAG, A(no_views), .help = "the JSON API only (no report computed: less memory)"},
    {"--jobs", .kind = CLI_COUNT, .arg = "N", A(co.max_running), .range = "[1,64]", .err = "--jobs takes 1..64",
     .example = "4", .help = "analyses running at once (default 2)"},
    {"--job-timeout", .kind = CLI_DOUBLE, .arg = "S", A(co.timeout_s), .range = "(0,)",
     .err = "--job-timeout takes seconds", .example = "60", .help = "an analysis running longer is stopped (default 600 s)"},
    {"--max-connections", .kind = CLI_COUNT, .arg = "N", A(so.max_conns), .range = "[1,100000]",
     .err = "--max-connections takes 1..100000", .example = "10", .help = "concurrent connections (default 1000)"},
    {"--rate", .kind = CLI_DOUBLE, .arg = "R", A(so.rate), .range = "(0,)", .err = "--rate takes requests per second",
     .example = "10", .help = ""},
    {"--burst", .kind = CLI_DOUBLE, .arg = "B", A(so.burst), .range = "[1,)",
     .err = "--burst takes a number of requests (>= 1)", .example = "20",
     .help = "requests per second per client address (default 200, burst 1000)"},
    {"--timeout", .kind = CLI_COUNT, .arg = "S", A(so.timeout_s), .range = "[1,86400]",
     .err = "--timeout takes 1..86400 seconds", .example = "5", .help = "idle connection timeout (default 30 s)"},
    {"-v", "--verbose", .kind = CLI_FLAG, A(verbose), .help = "log every request on stderr"},
    CLI_END,
};

#undef A

const cli_spec cli_spec_serve = {
    .cmd = "serve",
    .usage = "usage: longpole serve [--listen HOST:PORT] [OPTIONS] INPUT...\n",
    .about = "A local web server for the inputs (traces, span traces or request logs, detected as\n"
             "`report` does): the report's views, live, and a JSON API for each analysis whose\n"
             "answers are exactly the CLI's --json output for the same options (docs/serve.md):\n"
             "  /                   the whole report; /view/NAME one section (overview, timeline,\n"
             "                      breakdown, summaries, requests, spans)\n"
             "  /api                the endpoints available for these inputs, with their parameters\n"
             "  /api/trace          = longpole info --json            (traces and span traces)\n"
             "  /api/cp             = longpole cp --json               ?from=T&to=T\n"
             "  /api/check          = longpole check --json            ?from=T&to=T\n"
             "  /api/summary        = longpole summary --json          ?window=D&slide=D&by=LIST&top=K\n"
             "                        &seed=N&from=T&to=T&no_path=1&no_checks=1 (JSON lines)\n"
             "  /api/spans          = longpole spans --json            ?percentile=LIST&trace=ID&sections=1\n"
             "  /api/requests       = longpole requests --json         ?outliers=P&buckets=N&top=N\n"
             "                        &stratify=S (repeatable)&per_request=1&request=ID\n"
             "  /api/skew           = longpole skew --json             ?pairs=1\n"
             "  /api/model          = longpole infer -o -  (the inferred causal model; without --model)\n"
             "Each distinct request runs once (inputs never change while serving) and is kept.\n"
             "`longpole stream ... --serve PORT` serves the windows of a live stream instead: a page\n"
             "that draws the summaries as windows close, and server-sent events at\n"
             "/api/stream/events (the stream's JSON lines; /api/stream/windows lists them).\n"
             "\n"
             "Security: binds 127.0.0.1 by default and then only answers requests whose Host is a\n"
             "loopback name (no DNS rebinding); GET and HEAD only; no request bodies; bounded\n"
             "request size, connections and request rate per client (429 beyond); nothing from a\n"
             "URL ever reaches the file system. SIGINT or SIGTERM stops it cleanly.\n",
    .groups = {CLI_OWN("options:", serve_opts), VIEWCLI_GROUPS(serve_args, vc)},
    .notes = "The views' options set the report's; --format, the log options, --model and\n"
             "--categories also go to the analyses of the API, and --outliers, --buckets and\n"
             "--stratify are the defaults of /api/requests.\n",
    .size = sizeof(serve_args),
    .init = serve_init,
};

/* ---- the server's state ------------------------------------------------------------------ */

static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "longpole serve: %s\n", line);
}

/* Raise the open-file limit towards the connection limit (one descriptor per connection). */
static void raise_nofile(unsigned conns)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rlim_t want = (rlim_t)conns + 128;
    if (rl.rlim_cur < want) {
        rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Forward argv[first..last] (an option as given) to the children of the kinds given. */
static int add_fwd(srv *s, unsigned kinds, char **argv, int first, int last)
{
    size_t n = (size_t)(last - first + 1);
    for (int k = 0; k < 3; k++) {
        if (!(kinds & (1u << k)))
            continue;
        char **p = lp_reallocarray(s->fwd[k], s->nfwd[k] + n, sizeof *p);
        if (!p)
            return -1;
        s->fwd[k] = p;
        for (int i = first; i <= last; i++)
            p[s->nfwd[k]++] = argv[i];
    }
    return 0;
}

static int add_input(srv *s, int k, const char *path)
{
    char *rp = realpath(path, NULL);
    char *copy = lp_strndup(rp ? rp : path, strlen(rp ? rp : path));
    free(rp);
    char **p = copy ? lp_reallocarray(s->in[k], s->nin[k] + 1, sizeof *p) : NULL;
    if (!p) {
        lp_free(copy);
        return -1;
    }
    s->in[k] = p;
    p[s->nin[k]++] = copy;
    return 0;
}

/* The kind of one input (a directory: the kind of its first file). */
static lp_report_kind input_kind(const char *path, int requests)
{
    if (requests)
        return LP_RK_REQLOG;
    lp_input_item *items = NULL;
    size_t n = 0;
    lp_error err;
    lp_report_kind k = LP_RK_TRACE;
    if (lp_inputs_expand(&path, 1, &items, &n, &err) == LP_OK && n && items[0].kind == LP_INPUT_FILE)
        lp_report_detect(items[0].path, &k, &err);
    lp_inputs_free(items, n);
    return k;
}

/* A default of an API parameter (the command line's value); at most 32 are kept. */
static void add_default(srv *s, const char *name, const char *value)
{
    if (s->ndef < sizeof s->defn / sizeof s->defn[0]) {
        s->defn[s->ndef] = name;
        s->defv[s->ndef++] = value;
    }
}

static void srv_release(srv *s)
{
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < s->nin[k]; i++)
            lp_free(s->in[k][i]);
        lp_free(s->in[k]);
        lp_free(s->fwd[k]);
    }
    for (size_t i = 0; i < sizeof s->pages / sizeof s->pages[0]; i++)
        lp_server_buf_unref(s->pages[i]);
    lp_server_buf_unref(s->index);
    lp_free(s->api_ctx);
    pthread_mutex_destroy(&s->mu);
}

/* While parsing: the children read the inputs again, so the loading options go along,
 * as given: --format (to the kinds it names) and the log options (to request logs). */
typedef struct fwd_ctx {
    srv *s;
    serve_args *a;
} fwd_ctx;

static int forward(void *ctx, const cli_group *g, const cli_opt *o, char **argv, int first, int last)
{
    fwd_ctx *f = ctx;
    if (g->opts == reqcli_log_opts)
        return add_fwd(f->s, 4, argv, first, last) ? LP_EXIT_NOMEM : 0;
    if (g->opts == viewcli_opts && strcmp(o->name, "--format") == 0)
        return add_fwd(f->s, f->a->vc.format_reqlog ? 4 : 1 | 2, argv, first, last) ? LP_EXIT_NOMEM : 0;
    return 0;
}

/* The inputs by kind, as absolute paths (the analyses run in children), and the
 * command line's values that the API's children need too. */
static int add_inputs(srv *s, serve_args *a, const cli_args *rest)
{
    for (int i = 0; i < rest->n; i++)
        if (strcmp(rest->operands[i], "-") == 0)
            return cli_usage("serve", "standard input cannot be served (the analyses read the inputs again): give files");
    if (!rest->n)
        return cli_usage("serve", "no input given");
    viewcli *vc = &a->vc;
    for (int i = 0; i < rest->n; i++) {
        lp_report_kind k = input_kind(rest->operands[i], vc->lo.requests);
        int slot = k == LP_RK_REQLOG ? 2 : 0;
        if (add_input(s, slot, rest->operands[i]) || (k == LP_RK_SPANS && add_input(s, 1, rest->operands[i])))
            return LP_EXIT_NOMEM;
        s->kinds |= k == LP_RK_REQLOG ? K_REQ : k == LP_RK_SPANS ? (K_GRAPH | K_SPANS) : K_GRAPH;
    }
    s->model_given = vc->model_given;
    s->title = vc->title;
    /* the command line's values of /api/requests's parameters are its defaults */
    if (vc->outliers_arg)
        add_default(s, "outliers", vc->outliers_arg);
    if (vc->buckets_arg)
        add_default(s, "buckets", vc->buckets_arg);
    for (uint32_t k = 0; k < vc->strat.n; k++)
        add_default(s, "stratify", vc->strat.v[k]);
    char *fw[2];
    if (s->model_given) { /* for `requests` (infer --model would refine the file in place); /api/model is off */
        fw[0] = "--model", fw[1] = (char *)vc->lo.model;
        if (add_fwd(s, 4, fw, 0, 1))
            return LP_EXIT_NOMEM;
    }
    if (vc->lo.categories) {
        fw[0] = "--categories", fw[1] = (char *)vc->lo.categories;
        if (add_fwd(s, 4, fw, 0, 1))
            return LP_EXIT_NOMEM;
    }
    return 0;
}

/* The views: load and analyse once, here. */
static int load_views(srv *s, serve_args *a, const cli_args *rest, lp_report_inputs *in)
{
    viewcli_apply(&a->vc);
    int data_errors = 0;
    int rc = viewcli_load(&a->vc, "serve", rest->operands, rest->n, NULL, 0, in, &s->report, &data_errors);
    if (rc)
        return rc;
    snprintf(s->csp, sizeof s->csp,
             "default-src 'none'; script-src 'nonce-%s'; style-src 'unsafe-inline'; img-src data:; "
             "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
             lp_report_nonce(s->report));
    return 0;
}

/* The command cache of the API and the server with its routes, started. */
static int start_server(srv *s, serve_args *a, lp_server **server)
{
    static const char *const child_env[] = {"LONGPOLE_NO_PROGRESS=1", NULL};
    a->co.env = child_env;
    a->co.exe = cli_self_path();
    a->co.name = "longpole";
    lp_error err;
    lp_error_clear(&err);
    if (lp_cmdcache_new(&s->cache, &a->co, &err))
        return cli_fail("serve", &err);
    if (a->verbose)
        a->so.log = log_line;
    raise_nofile(a->so.max_conns);
    lp_status st = lp_server_new(server, &a->so, &err);
    if (!st)
        st = serve_pages_route(s, *server, &err);
    if (!st)
        st = serve_api_route(s, *server, &err);
    if (!st) {
        lp_server_attach_cache(*server, s->cache);
        st = lp_server_start(*server, &err);
    }
    return st ? cli_fail("serve", &err) : 0;
}

/* Serve until SIGINT or SIGTERM. */
static void serve_until_stopped(lp_server *server, const char *port_file)
{
    cli_stop_catch();
    signal(SIGPIPE, SIG_IGN);
    const char *host = lp_server_host(server);
    int v6 = strchr(host, ':') != NULL;
    fprintf(stderr, "longpole serve: http://%s%s%s:%u/ (Ctrl-C stops)\n", v6 ? "[" : "", host, v6 ? "]" : "",
            lp_server_port(server));
    if (port_file)
        cli_write_port_file(port_file, lp_server_port(server));
    while (!cli_stop_flag)
        pause();
    uint64_t nreq, nlim, nref;
    lp_server_counts(server, &nreq, &nlim, &nref);
    fprintf(stderr, "longpole serve: stopping (%llu requests answered, %llu rate-limited, %llu refused)\n",
            (unsigned long long)nreq, (unsigned long long)nlim, (unsigned long long)nref);
    /* the handler stays: a second signal while stopping (timeout(1) and process-group
     * kills send one to the group as well) must not cut the clean shutdown short */
}

int cmd_serve(int argc, char **argv)
{
    srv s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mu, NULL);
    serve_args a;
    cli_args rest;
    fwd_ctx fc = {&s, &a};
    int rc = cli_parse_seen(&cli_spec_serve, argc, argv, &a, &rest, forward, &fc);
    if (rc) {
        srv_release(&s);
        return rc;
    }
    lp_report_inputs in;
    int have_in = 0;
    lp_server *server = NULL;
    if (!(rc = add_inputs(&s, &a, &rest)) && !a.no_views && !(rc = load_views(&s, &a, &rest, &in))) {
        have_in = 1;
        reqcli_timing(&a.vc.rq, "serve");
    }
    if (!rc && !(rc = start_server(&s, &a, &server)))
        serve_until_stopped(server, a.port_file);
    lp_server_free(server);
    lp_cmdcache_free(s.cache);
    lp_report_free(s.report);
    s.report = NULL;
    if (have_in)
        lp_report_inputs_release(&in);
    srv_release(&s);
    cli_args_release(&cli_spec_serve, &a, &rest);
    return rc;
}
