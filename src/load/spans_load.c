/* spans_load.c: lp_spans_load (load.h): files and directories read into a span table,
 * each by the span format named or detected, then the table finished. */
#include "longpole/load/load.h"
#include "longpole/load/inputs.h"

#include <string.h>

lp_status lp_spans_load(lp_spans *sp, const char *const *paths, size_t npaths, const char *format,
                        const lp_load_opts *opts, lp_error *err)
{
    const lp_span_format *forced = NULL;
    if (format && strcmp(format, "auto") != 0) {
        forced = lp_span_format_find(format);
        if (!forced)
            return lp_error_set(err, LP_ERR_ARG, "unknown span format '%s' (jaeger, zipkin or otlp)", format);
    }
    lp_input_item *items;
    size_t nfiles;
    lp_status st = lp_inputs_expand(paths, npaths, &items, &nfiles, err);
    if (st)
        return st;
    if (!nfiles) {
        lp_inputs_free(items, nfiles);
        return lp_error_set(err, LP_ERR_ARG, "no input files");
    }
    for (size_t i = 0; i < nfiles && !st; i++) {
        const char *file = items[i].path;
        if (items[i].kind == LP_INPUT_SPARK_DIR) {
            if (sp->diags)
                lp_diags_report(sp->diags, LP_SEV_ERROR, LP_RULE_IMPORT, file, 0,
                                "a Spark event-log directory holds no spans; skipped");
            continue;
        }
        lp_input *in;
        if ((st = lp_input_open(&in, file, err)))
            break;
        const void *head;
        size_t nh;
        if ((st = lp_input_peek(in, &head, &nh, err))) {
            lp_error_push(err, "reading %s", file);
            lp_input_close(in);
            break;
        }
        const lp_span_format *f = forced ? forced : lp_span_format_detect(head, nh, file);
        if ((st = lp_spans_source(sp, file, err))) {
            lp_input_close(in);
            break;
        }
        if (!f && sp->diags) {
            lp_diags_report(sp->diags, LP_SEV_ERROR, LP_RULE_IMPORT, file, 0,
                            "not a span trace this build reads (Jaeger, Zipkin v2 or OTLP JSON); file skipped "
                            "(--format forces one)");
        } else if (f) {
            st = f->read(sp, in, opts, err);
            if (st)
                lp_error_push(err, "reading %s", file);
        }
        lp_input_close(in);
    }
    lp_inputs_free(items, nfiles);
    if (st)
        return st;
    return lp_spans_finish(sp, err);
}
