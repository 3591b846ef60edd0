/* servecli.h: the state of `longpole serve` (cmd_serve.c) shared with its two halves:
 * the report's views (serve_pages.c) and the JSON API (serve_api.c). The state is
 * filled before the server starts and read-only while it runs, but for the pages
 * rendered on first request (under `mu`). */
#ifndef LP_CLI_SERVECLI_H
#define LP_CLI_SERVECLI_H

#include "cli.h"
#include "longpole/report/report.h"
#include "longpole/serve/serve.h"

#include <pthread.h>

/* Kinds of inputs: activity graphs (traces, and span traces as graphs), span traces,
 * request logs. */
enum { K_GRAPH = 1, K_SPANS = 2, K_REQ = 4 };

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
    void *api_ctx;           /* the endpoints' handler contexts (serve_api.c) */
    char csp[256];           /* of the report's pages */
    const char *title;
    /* the command line's values of API parameters (--outliers, --buckets, --stratify):
     * the defaults of /api/requests, so it answers as /view/requests shows; a URL's own
     * value of the parameter replaces them */
    const char *defn[32], *defv[32];
    size_t ndef;
} srv;

/* Route / and /view/NAME (serve_pages.c). */
lp_status serve_pages_route(srv *s, lp_server *server, lp_error *err);
/* Route /api and the endpoints that apply to the inputs (serve_api.c); sets s->index
 * and s->api_ctx (freed by the caller with lp_server_buf_unref and lp_free). */
lp_status serve_api_route(srv *s, lp_server *server, lp_error *err);

#endif
