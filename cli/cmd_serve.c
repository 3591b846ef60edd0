/* cmd_serve.c: `longpole serve`: the report's views (report.h) and a JSON API for each
 * analysis over local HTTP (serve.h; docs/serve.md), and the hook that makes `longpole
 * stream --serve` publish every closed window as a server-sent event with a page that
 * draws them live.
 *
 * The JSON API runs the CLI's own commands: GET /api/cp?from=1s answers exactly what
 * `longpole cp --json --from 1s INPUTS` prints, because it is that command, run as a
 * child of this process (lp_cmdcache: this binary, cached per distinct request, at most
 * --jobs at once). So every endpoint is the CLI's JSON writer by construction, none is
 * duplicated, and an analysis that crashes or runs out of memory cannot take the server
 * down. Query parameters are validated here by type and passed as option values in a
 * fixed order; nothing from the URL becomes a file name (the inputs are the command
 * line's). The views are computed in this process once, before listening, and each
 * page is rendered once and kept.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "viewcli.h"
#include "longpole/report/report.h"
#include "longpole/serve/serve.h"
#include "longpole/load/inputs.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

const char cli_help_serve[] =
    "usage: longpole serve [--listen HOST:PORT] [OPTIONS] INPUT...\n"
    "\n"
    "A local web server for the inputs (traces, span traces or request logs, detected as\n"
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
    "URL ever reaches the file system. SIGINT or SIGTERM stops it cleanly.\n"
    "\n"
    "options:\n"
    "  --listen HOST:PORT  address (default 127.0.0.1:8080; PORT 0: any free port; the\n"
    "                      URL is printed on stderr)\n"
    "  --port-file F       write the port number to F once listening\n"
    "  --no-views          the JSON API only (no report computed: less memory)\n"
    "  --window LIST, --seed N, --top N, --rows N, --percentile LIST, --title TEXT\n"
    "                      the views' options, as for `longpole report`\n"
    "  --jobs N            analyses running at once (default 2)\n"
    "  --job-timeout S     an analysis running longer is stopped (default 600 s)\n"
    "  --max-connections N concurrent connections (default 1000)\n"
    "  --rate R --burst B  requests per second per client address (default 200, burst 1000)\n"
    "  --timeout S         idle connection timeout (default 30 s)\n"
    "  -v, --verbose       log every request on stderr\n"
    "  loading: --format F, --strict, -q, --max-errors N, --threads N; request logs: the\n"
    "  options below, --model FILE, --categories FILE, --stratify SPEC, --outliers P,\n"
    "  --buckets N, --requests (every input is a request log)\n"
    "\n" REQCLI_HELP;

/* ---- endpoints ------------------------------------------------------------------------- */

enum { K_GRAPH = 1, K_SPANS = 2, K_REQ = 4 };

typedef enum ptype { P_TIME, P_DUR, P_COUNT, P_SHARE, P_KINDS, P_FLAG, P_PCTS, P_TEXT } ptype;

typedef struct param {
    const char *name;        /* query parameter */
    const char *opt;         /* the command's option */
    ptype type;
    int repeat;              /* may be given several times */
} param;

#define MAXP 10
typedef struct endpoint {
    const char *path;
    unsigned kinds;          /* inputs it applies to (K_*) */
    const char *cmd;         /* the command */
    const char *fixed[3];    /* arguments right after it */
    const char *type;        /* content type of its answer */
    int no_model;            /* only without --model (infer would refine the given model) */
    param p[MAXP];
} endpoint;

#define JSON "application/json; charset=utf-8"
#define NDJSON "application/x-ndjson; charset=utf-8"

static const endpoint endpoints[] = {
    {"/api/trace", K_GRAPH, "info", {"--json"}, JSON, 0, {{NULL, NULL, 0, 0}}},
    {"/api/cp", K_GRAPH, "cp", {"--json"}, JSON, 0, {{"from", "--from", P_TIME, 0}, {"to", "--to", P_TIME, 0}}},
    {"/api/check", K_GRAPH, "check", {"--json"}, JSON, 0, {{"from", "--from", P_TIME, 0}, {"to", "--to", P_TIME, 0}}},
    {"/api/summary",
     K_GRAPH,
     "summary",
     {"--json"},
     NDJSON,
     0,
     {{"window", "--window", P_DUR, 0},
      {"slide", "--slide", P_DUR, 0},
      {"by", "--by", P_KINDS, 0},
      {"top", "--top", P_COUNT, 0},
      {"seed", "--seed", P_COUNT, 0},
      {"from", "--from", P_TIME, 0},
      {"to", "--to", P_TIME, 0},
      {"no_path", "--no-path", P_FLAG, 0},
      {"no_checks", "--no-checks", P_FLAG, 0}}},
    {"/api/spans",
     K_SPANS,
     "spans",
     {"--json"},
     JSON,
     0,
     {{"percentile", "--percentile", P_PCTS, 0}, {"trace", "--trace", P_TEXT, 0}, {"sections", "--sections", P_FLAG, 0}}},
    {"/api/requests",
     K_REQ,
     "requests",
     {"--json"},
     JSON,
     0,
     {{"outliers", "--outliers", P_SHARE, 0},
      {"buckets", "--buckets", P_COUNT, 0},
      {"top", "--top", P_COUNT, 0},
      {"stratify", "--stratify", P_TEXT, 1},
      {"per_request", "--per-request", P_FLAG, 0},
      {"request", "--request", P_TEXT, 0}}},
    {"/api/skew", K_REQ, "skew", {"--json"}, JSON, 0, {{"pairs", "--pairs", P_FLAG, 0}}},
    {"/api/model", K_REQ, "infer", {"-o", "-"}, JSON, 1, {{NULL, NULL, 0, 0}}},
    {NULL, 0, NULL, {NULL}, NULL, 0, {{NULL, NULL, 0, 0}}},
};

/* ---- the server's state ------------------------------------------------------------------ */

typedef struct srv {
    char **in[3];            /* absolute input paths by kind: graph (traces and spans), spans, request logs */
    size_t nin[3];
    unsigned kinds;          /* K_* present */
    char **fwd[3];           /* forwarded loading options per kind */
    size_t nfwd[3];
    int model_given;
    lp_cmdcache *cache;
    lp_report *report;       /* NULL with --no-views */
    pthread_mutex_t mu;      /* pages */
    lp_server_buf *pages[17];/* [0]: the whole report, [1 + i]: section i alone */
    lp_server_buf *index;    /* /api */
    char csp[256];           /* of the report's pages */
    const char *title;
    /* the command line's values of API parameters (--outliers, --buckets, --stratify):
     * the defaults of /api/requests, so it answers as /view/requests shows; a URL's own
     * value of the parameter replaces them */
    const char *defn[32], *defv[32];
    size_t ndef;
} srv;

typedef struct api_ctx {
    srv *s;
    const endpoint *ep;
} api_ctx;

static int kind_slot(const endpoint *ep) { return ep->kinds & K_REQ ? 2 : ep->kinds & K_SPANS ? 1 : 0; }

static const char *ptype_name(ptype t)
{
    static const char *const n[] = {"time", "duration", "count", "share", "summaries", "flag", "percentiles", "text"};
    return n[t];
}

/* Validate one value; 0 if good. */
static int check_value(ptype t, const char *v, char *why, size_t n)
{
    int64_t x;
    uint64_t u;
    double d;
    unsigned k;
    switch (t) {
    case P_TIME:
        if (!cli_parse_time(v, 0, &x))
            return 0;
        snprintf(why, n, "not a time (ns, or a number with ns/us/ms/s/m/h; +T = after the start)");
        return -1;
    case P_DUR:
        if (!cli_parse_dur(v, &x) && x > 0)
            return 0;
        snprintf(why, n, "not a positive duration (e.g. 250ms)");
        return -1;
    case P_COUNT:
        if (!cli_parse_count(v, &u))
            return 0;
        snprintf(why, n, "not a count");
        return -1;
    case P_SHARE:
        if (!cli_parse_double(v, &d) && d > 0 && d < 1)
            return 0;
        snprintf(why, n, "not a share in (0, 1)");
        return -1;
    case P_KINDS:
        if (!cli_parse_kinds(v, &k))
            return 0;
        snprintf(why, n, "takes activity, worker, operator, comm (comma-separated) or all");
        return -1;
    case P_FLAG:
        if (!*v || !strcmp(v, "1") || !strcmp(v, "0") || !strcmp(v, "true") || !strcmp(v, "false"))
            return 0;
        snprintf(why, n, "a flag: 1, true, 0 or false");
        return -1;
    case P_PCTS:
        for (const char *p = v; *p; p++)
            if (!strchr("0123456789.,allpP", *p)) {
                snprintf(why, n, "a list like 50,95,99,all");
                return -1;
            }
        if (*v && strlen(v) < 200)
            return 0;
        snprintf(why, n, "a list like 50,95,99,all");
        return -1;
    case P_TEXT:
        if (!*v || strlen(v) > 512) {
            snprintf(why, n, "empty or longer than 512 bytes");
            return -1;
        }
        for (const unsigned char *p = (const unsigned char *)v; *p; p++)
            if (*p < 0x20 || *p == 0x7f) {
                snprintf(why, n, "control characters are not accepted");
                return -1;
            }
        return 0;
    }
    return -1;
}

static void api_handler(void *ctx, const lp_server_req *q, lp_server_resp *r)
{
    const api_ctx *a = ctx;
    srv *s = a->s;
    const endpoint *ep = a->ep;
    const char *names[64], *values[64];
    size_t na = lp_server_req_args(q, names, values, 64);
    char msg[600];
    if (na > 64) {
        lp_server_resp_error(r, 400, "too many query parameters");
        return;
    }
    /* every argument must be a parameter of the endpoint, with a good value */
    int given[MAXP] = {0};
    char tfix[64][48]; /* time values whose '+' came as a space */
    for (size_t i = 0; i < na; i++) {
        int k = 0;
        while (k < MAXP && ep->p[k].name && strcmp(ep->p[k].name, names[i]) != 0)
            k++;
        if (k == MAXP || !ep->p[k].name) {
            int m = snprintf(msg, sizeof msg, "unknown parameter '%.64s' for %s (parameters:", names[i], ep->path);
            for (int j = 0; j < MAXP && ep->p[j].name && m < 500; j++)
                m += snprintf(msg + m, sizeof msg - (size_t)m, " %s", ep->p[j].name);
            snprintf(msg + m, sizeof msg - (size_t)m, "%s)", ep->p[0].name ? "" : " none");
            lp_server_resp_error(r, 400, msg);
            return;
        }
        if (given[k]++ && !ep->p[k].repeat) {
            snprintf(msg, sizeof msg, "parameter '%s' given twice", ep->p[k].name);
            lp_server_resp_error(r, 400, msg);
            return;
        }
        /* an unencoded '+' reads as a space (form encoding): "from=+1s" means +1s */
        if (ep->p[k].type == P_TIME && values[i][0] == ' ' && strlen(values[i]) < sizeof tfix[0]) {
            snprintf(tfix[i], sizeof tfix[i], "+%s", values[i] + 1);
            values[i] = tfix[i];
        }
        char why[160];
        if (check_value(ep->p[k].type, values[i], why, sizeof why)) {
            snprintf(msg, sizeof msg, "parameter '%s': %s", ep->p[k].name, why);
            lp_server_resp_error(r, 400, msg);
            return;
        }
    }
    /* the command line: parameters in the endpoint's order (one cache entry per meaning) */
    int slot = kind_slot(ep);
    size_t cap = 8 + 2 * (na + 1) + 2 * s->ndef + s->nfwd[slot] + s->nin[slot];
    const char **argv = lp_calloc(cap, sizeof *argv);
    if (!argv) {
        lp_server_resp_error(r, 500, "out of memory");
        return;
    }
    size_t n = 0;
    argv[n++] = ep->cmd;
    for (int k = 0; k < 3 && ep->fixed[k]; k++)
        argv[n++] = ep->fixed[k];
    for (int k = 0; k < MAXP && ep->p[k].name; k++)
        for (size_t i = 0; i < na; i++) {
            if (strcmp(names[i], ep->p[k].name) != 0)
                continue;
            if (ep->p[k].type == P_FLAG) {
                if (strcmp(values[i], "0") != 0 && strcmp(values[i], "false") != 0)
                    argv[n++] = ep->p[k].opt;
            } else {
                argv[n++] = ep->p[k].opt;
                argv[n++] = values[i];
            }
        }
    for (int k = 0; k < MAXP && ep->p[k].name; k++)
        for (size_t d = 0; !given[k] && d < s->ndef; d++)
            if (strcmp(s->defn[d], ep->p[k].name) == 0) {
                argv[n++] = ep->p[k].opt;
                argv[n++] = s->defv[d];
            }
    argv[n++] = "-q";
    for (size_t i = 0; i < s->nfwd[slot]; i++)
        argv[n++] = s->fwd[slot][i];
    for (size_t i = 0; i < s->nin[slot]; i++)
        argv[n++] = s->in[slot][i];
    lp_cmdout *res = NULL;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_cmdcache_get(s->cache, argv, n, &res, &err);
    lp_free(argv);
    if (st == LP_ERR_LIMIT) {
        lp_server_resp_error(r, 503, err.msg);
        r->retry_after = 5;
        return;
    }
    if (st) {
        lp_server_resp_error(r, st == LP_ERR_NOMEM ? 500 : 503, err.msg);
        return;
    }
    /* exit 0 (ok), 1 (check: findings), 4 (input errors: the answer is still complete) */
    if (!res->timed_out && !res->too_big && (res->status == 0 || res->status == 1 || res->status == 4) &&
        res->out->len) {
        r->status = 200;
        r->type = ep->type;
        r->body = lp_server_buf_ref(res->out);
    } else {
        char e[sizeof res->err]; /* the result is shared (cached): copy before trimming */
        memcpy(e, res->err, sizeof e);
        size_t l = strlen(e);
        while (l && (e[l - 1] == '\n' || e[l - 1] == ' '))
            e[--l] = '\0';
        const char *last = strrchr(e, '\n');
        snprintf(msg, sizeof msg, "%.590s",
                 res->timed_out ? "the analysis took too long and was stopped"
                 : res->too_big ? "the answer is too big"
                 : last         ? last + 1
                 : *e           ? e
                                : "the analysis failed");
        lp_server_resp_error(r, res->timed_out ? 504 : res->status == 2 ? 400 : 500, msg);
    }
    lp_cmdout_unref(res);
}

/* ---- pages ----------------------------------------------------------------------------------- */

static void nonce(char out[25])
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
        for (size_t i = 0; i < sizeof b; i++)
            b[i] = (unsigned char)rand();
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 5; i++) {
        uint32_t v = (uint32_t)b[3 * i] << 16 | (uint32_t)b[3 * i + 1] << 8 | b[3 * i + 2];
        out[4 * i] = a[v >> 18 & 63], out[4 * i + 1] = a[v >> 12 & 63], out[4 * i + 2] = a[v >> 6 & 63],
                out[4 * i + 3] = a[v & 63];
    }
    out[20] = a[b[15] >> 2];
    out[21] = a[(b[15] & 3) << 4];
    out[22] = out[23] = '=';
    out[24] = '\0';
}

/* A page of the report: the whole document (sec < 0) or one section, rendered once. */
static lp_server_buf *report_page(srv *s, int sec, lp_error *err)
{
    pthread_mutex_lock(&s->mu);
    lp_server_buf *b = s->pages[sec + 1];
    if (b) {
        lp_server_buf_ref(b);
        pthread_mutex_unlock(&s->mu);
        return b;
    }
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    lp_status st = f ? LP_OK : lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (!st && sec < 0) {
        /* the report, with a line of links to the views and the API after its header */
        st = lp_report_write_head(s->report, f, err);
        if (!st) {
            fputs("<p class=\"lp-note\">Served live by <code>longpole serve</code>: views", f);
            for (const lp_report_section *const *q = lp_report_sections(); *q; q++)
                if (lp_report_applies(s->report, (*q)->name))
                    fprintf(f, " <a href=\"/view/%s\">%s</a>", (*q)->name, (*q)->name);
            fputs(" &middot; <a href=\"/api\">JSON API</a></p>\n", f);
            for (const lp_report_section *const *q = lp_report_sections(); *q && !st; q++)
                st = lp_report_write_section(s->report, (*q)->name, f, err);
        }
        if (!st)
            st = lp_report_write_tail(s->report, f, err);
    } else if (!st) {
        const char *name = lp_report_sections()[sec]->name;
        st = lp_report_write_page(s->report, &name, 1, f, err);
    }
    if (f && fclose(f) != 0 && !st)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (!st) {
        char *copy = lp_malloc(len + 1);
        if (copy) {
            memcpy(copy, data, len + 1);
            b = lp_server_buf_take(copy, len);
        }
        if (!b)
            lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    free(data);
    if (b)
        s->pages[sec + 1] = lp_server_buf_ref(b);
    pthread_mutex_unlock(&s->mu);
    return b;
}

static const char minimal_page[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>longpole serve</title></head>\n"
    "<body><h1>longpole serve</h1>\n<p>The views are off (--no-views). The JSON API: <a href=\"/api\">/api</a> "
    "lists the endpoints for these inputs.</p></body></html>\n";

static void page_handler(void *ctx, const lp_server_req *q, lp_server_resp *r)
{
    srv *s = ctx;
    const char *path = lp_server_req_path(q);
    const char *names[1], *values[1];
    if (lp_server_req_args(q, names, values, 1)) {
        lp_server_resp_error(r, 400, "pages take no parameters");
        return;
    }
    r->type = "text/html; charset=utf-8";
    if (!s->report) {
        if (strcmp(path, "/") != 0) {
            lp_server_resp_error(r, 404, "the views are off (--no-views)");
            return;
        }
        lp_server_resp_set(r, 200, "text/html; charset=utf-8", minimal_page, sizeof minimal_page - 1);
        return;
    }
    int sec = -1;
    if (strcmp(path, "/") != 0) {
        const char *name = path + strlen("/view/");
        sec = 0;
        const lp_report_section *const *all = lp_report_sections();
        while (all[sec] && strcmp(all[sec]->name, name) != 0)
            sec++;
        if (!all[sec] || sec >= 16 || !lp_report_applies(s->report, name)) {
            lp_server_resp_error(r, 404, "no such view for these inputs (see /)");
            return;
        }
    }
    lp_error err;
    lp_error_clear(&err);
    lp_server_buf *b = report_page(s, sec, &err);
    if (!b) {
        lp_server_resp_error(r, 500, err.msg);
        return;
    }
    r->status = 200;
    r->type = "text/html; charset=utf-8";
    r->body = b;
    r->csp = s->csp;
}

static void index_handler(void *ctx, const lp_server_req *q, lp_server_resp *r)
{
    srv *s = ctx;
    const char *names[1], *values[1];
    if (lp_server_req_args(q, names, values, 1)) {
        lp_server_resp_error(r, 400, "/api takes no parameters");
        return;
    }
    r->status = 200;
    r->body = lp_server_buf_ref(s->index);
}

static lp_server_buf *make_index(const srv *s)
{
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    if (!f)
        return NULL;
    lp_jsonw j;
    lp_jsonw_init(&j, f, 1);
    lp_jsonw_obj(&j);
    lp_jsonw_kstr(&j, "longpole", LONGPOLE_VERSION);
    lp_jsonw_key(&j, "inputs");
    lp_jsonw_arr(&j);
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < s->nin[k]; i++)
            if (k != 1) /* span inputs are also graph inputs: listed once */
                lp_jsonw_str(&j, s->in[k][i]);
    lp_jsonw_arr_end(&j);
    lp_jsonw_key(&j, "views");
    lp_jsonw_arr(&j);
    for (const lp_report_section *const *q = lp_report_sections(); s->report && *q; q++)
        if (lp_report_applies(s->report, (*q)->name)) {
            char p[96];
            snprintf(p, sizeof p, "/view/%s", (*q)->name);
            lp_jsonw_str(&j, p);
        }
    lp_jsonw_arr_end(&j);
    lp_jsonw_key(&j, "endpoints");
    lp_jsonw_arr(&j);
    for (const endpoint *ep = endpoints; ep->path; ep++) {
        if (!(ep->kinds & s->kinds) || (ep->no_model && s->model_given))
            continue;
        lp_jsonw_obj(&j);
        lp_jsonw_kstr(&j, "path", ep->path);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "longpole %s%s%s%s%s", ep->cmd, ep->fixed[0] ? " " : "",
                 ep->fixed[0] ? ep->fixed[0] : "", ep->fixed[1] ? " " : "", ep->fixed[1] ? ep->fixed[1] : "");
        lp_jsonw_kstr(&j, "command", cmd);
        lp_jsonw_kstr(&j, "content_type", ep->type);
        lp_jsonw_key(&j, "parameters");
        lp_jsonw_arr(&j);
        for (int k = 0; k < MAXP && ep->p[k].name; k++) {
            lp_jsonw_obj(&j);
            lp_jsonw_kstr(&j, "name", ep->p[k].name);
            lp_jsonw_kstr(&j, "option", ep->p[k].opt);
            lp_jsonw_kstr(&j, "type", ptype_name(ep->p[k].type));
            if (ep->p[k].repeat)
                lp_jsonw_kbool(&j, "repeatable", 1);
            lp_jsonw_obj_end(&j);
        }
        lp_jsonw_arr_end(&j);
        lp_jsonw_obj_end(&j);
    }
    lp_jsonw_arr_end(&j);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
    if (fclose(f) != 0) {
        free(data);
        return NULL;
    }
    lp_server_buf *b = lp_server_buf_copy(data, len);
    free(data);
    return b;
}

/* ---- signals and the command --------------------------------------------------------------- */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

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

static int add_fwd(srv *s, unsigned kinds, const char *a, const char *b)
{
    for (int k = 0; k < 3; k++) {
        if (!(kinds & (1u << k)))
            continue;
        char **p = lp_reallocarray(s->fwd[k], s->nfwd[k] + 2, sizeof *p);
        if (!p)
            return -1;
        s->fwd[k] = p;
        p[s->nfwd[k]++] = (char *)a;
        if (b)
            p[s->nfwd[k]++] = (char *)b;
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
    pthread_mutex_destroy(&s->mu);
}

int cmd_serve(int argc, char **argv)
{
    srv s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mu, NULL);
    viewcli vc;
    lp_server_opts so;
    lp_server_opts_init(&so);
    lp_cmdcache_opts co;
    memset(&co, 0, sizeof co);
    const char *port_file = NULL, *v;
    int no_views = 0, verbose = 0, rc = 0;
    char **paths = lp_calloc((size_t)argc + 1, sizeof *paths);
    int npaths = 0;
    lp_report_inputs in;
    int have_in = 0;
    lp_server *server = NULL;
    if (viewcli_init(&vc, argc) || !paths) {
        viewcli_free(&vc), lp_free(paths);
        pthread_mutex_destroy(&s.mu);
        return LP_EXIT_NOMEM;
    }
    reqcli *rq = &vc.rq;
    lp_report_load_opts *lo = &vc.lo;
#define USAGE(...)                                                                                                     \
    do {                                                                                                               \
        rc = cli_usage("serve", __VA_ARGS__);                                                                          \
        goto end;                                                                                                      \
    } while (0)
#define FWD(kinds, a, b)                                                                                               \
    do {                                                                                                               \
        if (add_fwd(&s, kinds, a, b)) {                                                                                \
            rc = LP_EXIT_NOMEM;                                                                                        \
            goto end;                                                                                                  \
        }                                                                                                              \
    } while (0)
    for (int i = 1; i < argc; i++) {
        uint64_t n;
        const char *opt = argv[i];
        if (cli_opt(argc, argv, &i, "--listen", &so.listen)) {
            if (!so.listen)
                USAGE("--listen needs HOST:PORT");
        } else if (cli_opt(argc, argv, &i, "--port-file", &port_file)) {
            if (!port_file)
                USAGE("--port-file needs a file name");
        } else if (cli_flag(argv, i, "--no-views")) {
            no_views = 1;
        } else if (cli_flag(argv, i, "-v") || cli_flag(argv, i, "--verbose")) {
            verbose = 1;
        } else if (cli_opt(argc, argv, &i, "--jobs", &v)) {
            if (!v || cli_parse_count(v, &n) || n < 1 || n > 64)
                USAGE("--jobs takes 1..64");
            co.max_running = (unsigned)n;
        } else if (cli_opt(argc, argv, &i, "--job-timeout", &v)) {
            if (!v || cli_parse_double(v, &co.timeout_s) || !(co.timeout_s > 0))
                USAGE("--job-timeout takes seconds");
        } else if (cli_opt(argc, argv, &i, "--max-connections", &v)) {
            if (!v || cli_parse_count(v, &n) || n < 1 || n > 100000)
                USAGE("--max-connections takes 1..100000");
            so.max_conns = (unsigned)n;
        } else if (cli_opt(argc, argv, &i, "--rate", &v)) {
            if (!v || cli_parse_double(v, &so.rate) || !(so.rate > 0))
                USAGE("--rate takes requests per second");
        } else if (cli_opt(argc, argv, &i, "--burst", &v)) {
            if (!v || cli_parse_double(v, &so.burst) || !(so.burst >= 1))
                USAGE("--burst takes a number of requests (>= 1)");
        } else if (cli_opt(argc, argv, &i, "--timeout", &v)) {
            if (!v || cli_parse_count(v, &n) || n < 1 || n > 86400)
                USAGE("--timeout takes 1..86400 seconds");
            so.timeout_s = (unsigned)n;
        } else if (viewcli_opt(&vc, "serve", argc, argv, &i, &rc)) {
            if (rc)
                goto end;
            /* the analyses' children read the inputs again: the loading options go along */
            if (vc.format_arg) { /* --format was this option */
                FWD(vc.format_reqlog ? 4 : 1 | 2, "--format", vc.format_arg);
                vc.format_arg = NULL;
            }
        } else if (reqcli_opt(rq, "serve", argc, argv, &i, &rc)) {
            if (rc)
                goto end;
            /* the log options go to the request-log commands as given (argv[first..i]) */
            if (strcmp(opt, "--threads") != 0 && strcmp(opt, "--timing") != 0 && strcmp(opt, "-q") != 0 &&
                strcmp(opt, "--quiet") != 0 && strcmp(opt, "--strict") != 0 && strcmp(opt, "--max-errors") != 0)
                FWD(4, opt, opt == argv[i] ? NULL : argv[i]);
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            USAGE("unknown option '%s'", argv[i]);
        } else if (strcmp(argv[i], "-") == 0) {
            USAGE("standard input cannot be served (the analyses read the inputs again): give files");
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (!npaths)
        USAGE("no input given");
#undef USAGE
    /* the inputs by kind, as absolute paths (the analyses run in children) */
    for (int i = 0; i < npaths; i++) {
        lp_report_kind k = input_kind(paths[i], lo->requests);
        int slot = k == LP_RK_REQLOG ? 2 : 0;
        if (add_input(&s, slot, paths[i]) || (k == LP_RK_SPANS && add_input(&s, 1, paths[i]))) {
            rc = LP_EXIT_NOMEM;
            goto end;
        }
        s.kinds |= k == LP_RK_REQLOG ? K_REQ : k == LP_RK_SPANS ? (K_GRAPH | K_SPANS) : K_GRAPH;
    }
    s.model_given = vc.model_given;
    s.title = vc.title;
    /* the command line's values of /api/requests's parameters are its defaults */
    if (vc.outliers_arg)
        add_default(&s, "outliers", vc.outliers_arg);
    if (vc.buckets_arg)
        add_default(&s, "buckets", vc.buckets_arg);
    for (uint32_t k = 0; k < vc.nstrat; k++)
        add_default(&s, "stratify", vc.strat[k]);
    if (s.model_given)
        FWD(4, "--model", lo->model); /* for `requests` (infer --model would refine the file in place); /api/model is off */
    if (lo->categories)
        FWD(4, "--categories", lo->categories);
#undef FWD
    lp_error err;
    lp_error_clear(&err);
    /* the views: load and analyse once, here */
    if (!no_views) {
        viewcli_apply(&vc);
        int data_errors = 0;
        if ((rc = viewcli_load(&vc, "serve", paths, npaths, NULL, 0, &in, &s.report, &data_errors)))
            goto end;
        have_in = 1;
        snprintf(s.csp, sizeof s.csp,
                 "default-src 'none'; script-src 'nonce-%s'; style-src 'unsafe-inline'; img-src data:; "
                 "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
                 lp_report_nonce(s.report));
    }
    /* the server */
    static const char *const child_env[] = {"LONGPOLE_NO_PROGRESS=1", NULL};
    co.env = child_env;
    co.exe = cli_self_path();
    co.name = "longpole";
    if (lp_cmdcache_new(&s.cache, &co, &err)) {
        rc = cli_fail("serve", &err);
        goto end;
    }
    if (!(s.index = make_index(&s))) {
        rc = LP_EXIT_NOMEM;
        goto end;
    }
    if (verbose)
        so.log = log_line;
    raise_nofile(so.max_conns);
    api_ctx actx[sizeof endpoints / sizeof endpoints[0]];
    lp_status st = lp_server_new(&server, &so, &err);
    if (!st)
        st = lp_server_route(server, "/", 0, page_handler, &s, &err);
    if (!st)
        st = lp_server_route(server, "/view/", 1, page_handler, &s, &err);
    if (!st)
        st = lp_server_route(server, "/api", 0, index_handler, &s, &err);
    for (size_t k = 0; !st && endpoints[k].path; k++) {
        const endpoint *ep = &endpoints[k];
        if (!(ep->kinds & s.kinds) || (ep->no_model && s.model_given))
            continue;
        actx[k].s = &s;
        actx[k].ep = ep;
        st = lp_server_route(server, ep->path, 0, api_handler, &actx[k], &err);
    }
    if (!st) {
        lp_server_attach_cache(server, s.cache);
        st = lp_server_start(server, &err);
    }
    if (st) {
        rc = cli_fail("serve", &err);
        goto end;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    const char *host = lp_server_host(server);
    int v6 = strchr(host, ':') != NULL;
    fprintf(stderr, "longpole serve: http://%s%s%s:%u/ (Ctrl-C stops)\n", v6 ? "[" : "", host, v6 ? "]" : "",
            lp_server_port(server));
    if (port_file) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
        FILE *f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "%u\n", lp_server_port(server));
            if (fclose(f) == 0)
                rename(tmp, port_file);
        }
    }
    while (!stop_flag)
        pause();
    uint64_t nreq, nlim, nref;
    lp_server_counts(server, &nreq, &nlim, &nref);
    fprintf(stderr, "longpole serve: stopping (%llu requests answered, %llu rate-limited, %llu refused)\n",
            (unsigned long long)nreq, (unsigned long long)nlim, (unsigned long long)nref);
    /* the handler stays: a second signal while stopping (timeout(1) and process-group
     * kills send one to the group as well) must not cut the clean shutdown short */
end:
    lp_server_free(server);
    lp_cmdcache_free(s.cache);
    lp_report_free(s.report);
    s.report = NULL;
    if (have_in)
        lp_report_inputs_release(&in);
    srv_release(&s);
    viewcli_free(&vc);
    lp_free(paths);
    return rc;
}

/* ---- `longpole stream --serve`: live windows ------------------------------------------------ */

static const char live_page[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<title>longpole stream: live</title>\n<style nonce=\"@NONCE@\">\n"
    "body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#1d1d1f;background:#fff}\n"
    "h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.1em;margin:1.2em 0 .3em}\n"
    ".st{color:#555}.chart{overflow-x:auto}.legend span{display:inline-block;margin:0 1em .2em 0}\n"
    ".sw{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:-.05em}\n"
    "table{border-collapse:collapse;margin:.3em 0}td,th{padding:.1em .7em;text-align:right}"
    "td:first-child,th:first-child{text-align:left}tr:nth-child(even){background:#f4f4f6}\n"
    "</style>\n</head>\n<body>\n<h1>longpole stream: live critical participation</h1>\n"
    "<p class=\"st\" id=\"st\">connecting&hellip;</p>\n"
    "<p class=\"st\">Each bar is one window (the latest on the right): how the critical participation (CP, "
    "SnailTrail &sect;3.2) of the window divides among the keys of each summary. Server-sent events: "
    "<code>/api/stream/events</code>; every window so far: <code>/api/stream/windows</code>.</p>\n"
    "<div id=\"charts\"></div>\n<h2 id=\"lh\">Latest window</h2>\n<div id=\"latest\"></div>\n"
    "<script nonce=\"@NONCE@\">\n"
    "(function(){'use strict';\n"
    "var KINDS=['activity','worker','operator','comm'],TITLE={activity:'Activity summary: CP by activity type',"
    "worker:'Straggler summary: CP by worker',operator:'Operator summary: CP by operator',"
    "comm:'Communication summary: CP by sender \\u2192 receiver'};\n"
    "var MAXW=120,TOP=8,SVG='http://www.w3.org/2000/svg',wins=[],count=0,ended=false,pending=false;\n"
    "var st=document.getElementById('st'),charts=document.getElementById('charts'),"
    "latest=document.getElementById('latest'),lh=document.getElementById('lh');\n"
    "function E(t,a,txt,ns){var e=ns?document.createElementNS(SVG,t):document.createElement(t);"
    "for(var k in a)e.setAttribute(k,a[k]);if(txt!==undefined)e.textContent=String(txt);return e;}\n"
    "function color(s){var h=0;for(var i=0;i<s.length;i++)h=(h*31+s.charCodeAt(i))>>>0;"
    "return 'hsl('+(h%360)+',55%,'+(45+(h>>9)%20)+'%)';}\n"
    "function pct(x){return x==null?'-':(x*100).toFixed(1)+'%';}\n"
    "function chart(kind,ws){var top={},sum={};ws.forEach(function(w){var s=w.summaries[kind];"
    "if(!s)return;s.rows.forEach(function(r){sum[r.key]=(sum[r.key]||0)+r.cp;});});\n"
    "var keys=Object.keys(sum).sort(function(a,b){return sum[b]-sum[a];}).slice(0,TOP);"
    "keys.forEach(function(k){top[k]=1;});\n"
    "var W=Math.max(600,Math.min(1200,ws.length*10)),H=180,bw=W/Math.max(ws.length,1),"
    "svg=E('svg',{width:W,height:H+20,viewBox:'0 0 '+W+' '+(H+20),role:'img'},undefined,1);\n"
    "ws.forEach(function(w,i){var s=w.summaries[kind];if(!s)return;var y=H,other=0;"
    "s.rows.forEach(function(r){if(!top[r.key]){other+=r.cp;return;}var h=r.cp*H;y-=h;"
    "var re=E('rect',{x:i*bw,y:y,width:Math.max(bw-1,1),height:Math.max(h,0),fill:color(r.key)},undefined,1);"
    "re.appendChild(E('title',{},'window '+w.index+': '+r.key+' '+pct(r.cp),1));svg.appendChild(re);});\n"
    "if(other>0){var h=other*H;y-=h;var re=E('rect',{x:i*bw,y:y,width:Math.max(bw-1,1),height:h,fill:'#bbb'},"
    "undefined,1);re.appendChild(E('title',{},'window '+w.index+': other '+pct(other),1));svg.appendChild(re);}});\n"
    "svg.appendChild(E('line',{x1:0,y1:H,x2:W,y2:H,stroke:'#888'},undefined,1));\n"
    "var d=E('div',{'class':'chart'});d.appendChild(E('h2',{},TITLE[kind]));d.appendChild(svg);"
    "var lg=E('div',{'class':'legend'});keys.concat(['other']).forEach(function(k){var sp=E('span',{});"
    "var sw=E('span',{'class':'sw'});sw.appendChild(E('svg',{width:12,height:12},undefined,1)).appendChild("
    "E('rect',{width:12,height:12,fill:k==='other'?'#bbb':color(k)},undefined,1));"
    "sp.appendChild(sw);sp.appendChild(document.createTextNode(k));lg.appendChild(sp);});"
    "d.appendChild(lg);return d;}\n"
    "function table(w){var d=E('div',{});KINDS.forEach(function(kind){var s=w.summaries[kind];if(!s)return;"
    "d.appendChild(E('h2',{},TITLE[kind]));var t=E('table',{}),h=E('tr',{});"
    "['key','CP','profile','1 path'].forEach(function(c){h.appendChild(E('th',{},c));});t.appendChild(h);"
    "s.rows.slice(0,15).forEach(function(r){var tr=E('tr',{});[r.key,pct(r.cp),pct(r.profile_share),"
    "pct(r.path_share)].forEach(function(c){tr.appendChild(E('td',{},c));});t.appendChild(tr);});"
    "d.appendChild(t);});return d;}\n"
    "function render(){pending=false;var ws=wins.slice(-MAXW),w=ws[ws.length-1];"
    "st.textContent=count+' window'+(count===1?'':'s')+' received'+(ended?'; the stream has ended':'; live')+"
    "(w?'; latest ['+w.ts+', '+w.te+'] ns, N = '+w.paths.approx+' transient critical paths':'');\n"
    "charts.textContent='';if(w)KINDS.forEach(function(k){if(w.summaries[k])charts.appendChild(chart(k,ws));});\n"
    "latest.textContent='';if(w){lh.textContent='Latest window: '+w.index;latest.appendChild(table(w));}}\n"
    "function later(){if(!pending){pending=true;setTimeout(render,100);}}\n"
    "var es=new EventSource('/api/stream/events');\n"
    "es.addEventListener('window',function(e){wins.push(JSON.parse(e.data));count++;"
    "if(wins.length>4*MAXW)wins.splice(0,wins.length-MAXW);later();});\n"
    "es.addEventListener('end',function(){ended=true;es.close();later();});\n"
    "es.onerror=function(){if(!ended)st.textContent='connection lost; retrying\\u2026';};\n"
    "})();\n</script>\n</body>\n</html>\n";

static struct {
    lp_server *server;
    lp_server_hub *hub;
    cli_sumfmt fmt;          /* the stream's, with json on */
} live;

static void live_page_handler(void *ctx, const lp_server_req *q, lp_server_resp *r)
{
    (void)ctx;
    (void)q;
    char n[25];
    nonce(n);
    /* the page with its nonce in place of every @NONCE@ (a fresh one per response) */
    size_t cap = sizeof live_page + 4 * 24, o = 0;
    char *page = lp_malloc(cap);
    if (!page) {
        lp_server_resp_error(r, 500, "out of memory");
        return;
    }
    for (const char *p = live_page;;) {
        const char *at = strstr(p, "@NONCE@");
        size_t k = at ? (size_t)(at - p) : strlen(p);
        memcpy(page + o, p, k);
        o += k;
        if (!at)
            break;
        memcpy(page + o, n, 24);
        o += 24;
        p = at + 7;
    }
    page[o] = '\0';
    r->body = lp_server_buf_take(page, o);
    r->status = r->body ? 200 : 500;
    r->type = "text/html; charset=utf-8";
    snprintf(r->csp_buf, sizeof r->csp_buf,
             "default-src 'none'; script-src 'nonce-%s'; style-src 'nonce-%s'; connect-src 'self'; img-src data:; "
             "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
             n, n);
    r->csp = r->csp_buf;
}

static void live_windows_handler(void *ctx, const lp_server_req *q, lp_server_resp *r)
{
    (void)ctx;
    (void)q;
    lp_error err;
    lp_server_buf *b = NULL;
    if (lp_server_hub_dump(live.hub, "window", &b, &err)) {
        lp_server_resp_error(r, 500, err.msg);
        return;
    }
    r->status = 200;
    r->type = NDJSON;
    r->body = b;
}

static void live_index_handler(void *ctx, const lp_server_req *q, lp_server_resp *r)
{
    (void)ctx;
    (void)q;
    static const char idx[] =
        "{\"longpole\":\"" LONGPOLE_VERSION "\",\"mode\":\"stream\",\"endpoints\":["
        "{\"path\":\"/api/stream/events\",\"content_type\":\"text/event-stream\",\"events\":[\"window\","
        "\"stream-window\",\"overall\",\"end\"]},"
        "{\"path\":\"/api/stream/windows\",\"content_type\":\"application/x-ndjson\"}]}\n";
    lp_server_resp_set(r, 200, JSON, idx, sizeof idx - 1);
}

/* Publish what `fn` writes to a memory stream (one JSON line, its newline dropped). */
static void live_publish(const char *event, void (*fn)(FILE *f, const void *a, const void *b), const void *a,
                         const void *b)
{
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    if (!f)
        return;
    fn(f, a, b);
    if (fclose(f) == 0) {
        while (len && data[len - 1] == '\n')
            len--;
        lp_error err;
        if (lp_server_hub_publish(live.hub, event, data, len, &err))
            fprintf(stderr, "longpole stream: --serve: %s\n", err.msg);
    }
    free(data);
}

static void write_window(FILE *f, const void *a, const void *b)
{
    (void)b;
    cli_winres_print(f, a, &live.fmt);
}

/* The stream-window object, as `stream --json` prints it after each window. */
static void write_winfo(FILE *f, const void *a, const void *b)
{
    cli_stream_winfo_json(f, a, b);
}

static void write_overall(FILE *f, const void *a, const void *b)
{
    (void)b;
    cli_sumtotal_print(f, (cli_sumtotal *)a, &live.fmt);
}

int cli_stream_serve_start(const char *listen, const cli_sumfmt *fmt)
{
    char spec[300];
    if (!strchr(listen, ':'))
        snprintf(spec, sizeof spec, "127.0.0.1:%s", listen);
    else
        snprintf(spec, sizeof spec, "%s", listen);
    live.fmt = *fmt;
    live.fmt.json = 1;
    live.fmt.compact = 0;
    lp_server_opts so;
    lp_server_opts_init(&so);
    so.listen = spec;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_server_hub_new(&live.hub, 100000, (size_t)256 << 20, &err);
    if (!st)
        st = lp_server_new(&live.server, &so, &err);
    if (!st)
        st = lp_server_route(live.server, "/", 0, live_page_handler, NULL, &err);
    if (!st)
        st = lp_server_route(live.server, "/api", 0, live_index_handler, NULL, &err);
    if (!st)
        st = lp_server_route_events(live.server, "/api/stream/events", live.hub, &err);
    if (!st)
        st = lp_server_route(live.server, "/api/stream/windows", 0, live_windows_handler, NULL, &err);
    if (!st)
        st = lp_server_start(live.server, &err);
    if (st) {
        lp_server_free(live.server);
        lp_server_hub_free(live.hub);
        memset(&live, 0, sizeof live);
        lp_error_push(&err, "--serve %s", listen);
        return cli_fail("stream", &err);
    }
    signal(SIGPIPE, SIG_IGN);
    const char *host = lp_server_host(live.server);
    int v6 = strchr(host, ':') != NULL;
    fprintf(stderr, "longpole stream: serving the windows at http://%s%s%s:%u/\n", v6 ? "[" : "", host, v6 ? "]" : "",
            lp_server_port(live.server));
    return 0;
}

void cli_stream_serve_window(const lp_winres *r, const lp_stream_winfo *wi)
{
    if (!live.server)
        return;
    live_publish("window", write_window, r, NULL);
    live_publish("stream-window", write_winfo, r, wi);
}

void cli_stream_serve_stop(cli_sumtotal *tot)
{
    if (!live.server)
        return;
    if (tot)
        live_publish("overall", write_overall, tot, NULL);
    lp_error err;
    lp_server_hub_publish(live.hub, "end", "{}", 2, &err);
    lp_server_free(live.server); /* ends the event streams (after their last events) */
    lp_server_hub_free(live.hub);
    memset(&live, 0, sizeof live);
}
