/* serve_api.c: the JSON API of `longpole serve` (servecli.h; docs/serve.md): one
 * endpoint per analysis, each answered by running the CLI's own command as a child of
 * the server (lp_cmdcache: each distinct request runs once and is kept, at most --jobs
 * at once), so every answer is that command's --json output by construction. Query
 * parameters are validated here by type and passed as option values in the endpoint's
 * fixed order (one cache entry per meaning); nothing from a URL becomes a file name
 * (the inputs are the command line's). /api lists the endpoints for these inputs. */
#include "servecli.h"
#include "summary.h"

#include <stdlib.h>
#include <string.h>

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

/* Every argument must be a parameter of the endpoint, given once unless repeatable, with
 * a good value; 0, or -1 after answering 400. Time values whose '+' came as a space
 * are mended in tfix. */
static int check_args(const endpoint *ep, const char **names, const char **values, size_t na, int *given,
                      char (*tfix)[48], lp_server_resp *r)
{
    char msg[600];
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
            return -1;
        }
        if (given[k]++ && !ep->p[k].repeat) {
            snprintf(msg, sizeof msg, "parameter '%s' given twice", ep->p[k].name);
            lp_server_resp_error(r, 400, msg);
            return -1;
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
            return -1;
        }
    }
    return 0;
}

/* The child's arguments: the command, its fixed options, the parameters in the
 * endpoint's order, the command line's defaults of those not given, -q, the forwarded
 * loading options and the inputs. NULL when out of memory. */
static const char **command_line(const srv *s, const endpoint *ep, const char **names, const char **values,
                                 size_t na, const int *given, size_t *n)
{
    int slot = kind_slot(ep);
    size_t cap = 8 + 2 * (na + 1) + 2 * s->ndef + s->nfwd[slot] + s->nin[slot];
    const char **argv = lp_calloc(cap, sizeof *argv);
    if (!argv)
        return NULL;
    *n = 0;
    argv[(*n)++] = ep->cmd;
    for (int k = 0; k < 3 && ep->fixed[k]; k++)
        argv[(*n)++] = ep->fixed[k];
    for (int k = 0; k < MAXP && ep->p[k].name; k++)
        for (size_t i = 0; i < na; i++) {
            if (strcmp(names[i], ep->p[k].name) != 0)
                continue;
            if (ep->p[k].type == P_FLAG) {
                if (strcmp(values[i], "0") != 0 && strcmp(values[i], "false") != 0)
                    argv[(*n)++] = ep->p[k].opt;
            } else {
                argv[(*n)++] = ep->p[k].opt;
                argv[(*n)++] = values[i];
            }
        }
    for (int k = 0; k < MAXP && ep->p[k].name; k++)
        for (size_t d = 0; !given[k] && d < s->ndef; d++)
            if (strcmp(s->defn[d], ep->p[k].name) == 0) {
                argv[(*n)++] = ep->p[k].opt;
                argv[(*n)++] = s->defv[d];
            }
    argv[(*n)++] = "-q";
    for (size_t i = 0; i < s->nfwd[slot]; i++)
        argv[(*n)++] = s->fwd[slot][i];
    for (size_t i = 0; i < s->nin[slot]; i++)
        argv[(*n)++] = s->in[slot][i];
    return argv;
}

/* The child's result as the response: its output (exit 0 ok, 1 check's findings, 4
 * input errors: the answer is still complete), else the last line of its stderr. */
static void answer(const endpoint *ep, lp_cmdout *res, lp_server_resp *r)
{
    if (!res->timed_out && !res->too_big && (res->status == 0 || res->status == 1 || res->status == 4) &&
        res->out->len) {
        r->status = 200;
        r->type = ep->type;
        r->body = lp_server_buf_ref(res->out);
        return;
    }
    char e[sizeof res->err], msg[600]; /* the result is shared (cached): copy before trimming */
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

static void api_handler(void *ctx, const lp_server_req *q, lp_server_resp *r)
{
    const api_ctx *a = ctx;
    const endpoint *ep = a->ep;
    const char *names[64], *values[64];
    size_t na = lp_server_req_args(q, names, values, 64);
    if (na > 64) {
        lp_server_resp_error(r, 400, "too many query parameters");
        return;
    }
    int given[MAXP] = {0};
    char tfix[64][48];
    if (check_args(ep, names, values, na, given, tfix, r))
        return;
    size_t n = 0;
    const char **argv = command_line(a->s, ep, names, values, na, given, &n);
    if (!argv) {
        lp_server_resp_error(r, 500, "out of memory");
        return;
    }
    lp_cmdout *res = NULL;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_cmdcache_get(a->s->cache, argv, n, &res, &err);
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
    answer(ep, res, r);
    lp_cmdout_unref(res);
}

/* Whether the endpoint applies to these inputs (/api/model only without --model). */
static int offered(const srv *s, const endpoint *ep)
{
    return (ep->kinds & s->kinds) && !(ep->no_model && s->model_given);
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
        if (!offered(s, ep))
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

lp_status serve_api_route(srv *s, lp_server *server, lp_error *err)
{
    size_t n = 0;
    while (endpoints[n].path)
        n++;
    api_ctx *ctx = lp_calloc(n, sizeof *ctx);
    if (!ctx || !(s->index = make_index(s))) {
        lp_free(ctx);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    s->api_ctx = ctx;
    lp_status st = lp_server_route(server, "/api", 0, index_handler, s, err);
    for (size_t k = 0; !st && k < n; k++) {
        if (!offered(s, &endpoints[k]))
            continue;
        ctx[k].s = s;
        ctx[k].ep = &endpoints[k];
        st = lp_server_route(server, endpoints[k].path, 0, api_handler, &ctx[k], err);
    }
    return st;
}
