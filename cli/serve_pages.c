/* serve_pages.c: the report's views served by `longpole serve` (servecli.h): the whole
 * report at /, one section at /view/NAME, each rendered once on first request and kept;
 * with --no-views a short page pointing at the API. */
#include "servecli.h"

#include <stdlib.h>
#include <string.h>

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

lp_status serve_pages_route(srv *s, lp_server *server, lp_error *err)
{
    lp_status st = lp_server_route(server, "/", 0, page_handler, s, err);
    if (!st)
        st = lp_server_route(server, "/view/", 1, page_handler, s, err);
    return st;
}
