/* common.c: what every command shares to report its end: the exit status of a library
 * status, usage and runtime error messages, and the path of the running executable. */
#include "cli.h"

#include <stdarg.h>
#include <unistd.h>

int cli_exit_for(lp_status st)
{
    switch (st) {
    case LP_OK:
    case LP_END:
    case LP_AGAIN: return LP_EXIT_OK;
    case LP_ERR_NOMEM: return LP_EXIT_NOMEM;
    case LP_ERR_IO: return LP_EXIT_IO;
    case LP_ERR_FORMAT:
    case LP_ERR_CHECKSUM:
    case LP_ERR_UNSUPPORTED: return LP_EXIT_FORMAT;
    case LP_ERR_DATA: return LP_EXIT_DATA;
    case LP_ERR_ARG: return LP_EXIT_USAGE;
    case LP_ERR_LIMIT: return LP_EXIT_LIMIT;
    }
    return LP_EXIT_INTERNAL;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "longpole %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see `longpole help %s`)\n", cmd);
    va_end(ap);
    return LP_EXIT_USAGE;
}

int cli_fail(const char *cmd, const lp_error *err)
{
    cli_progress_done();
    fprintf(stderr, "longpole %s: %s\n", cmd, err->msg[0] ? err->msg : lp_status_str(err->status));
    return cli_exit_for(err->status);
}

static const char *self_argv0 = "longpole";

void cli_self_init(const char *argv0)
{
    if (argv0 && *argv0)
        self_argv0 = argv0;
}

const char *cli_self_path(void)
{
    return access("/proc/self/exe", X_OK) == 0 ? "/proc/self/exe" : self_argv0;
}

void cli_json_trace_counts(lp_jsonw *j, const lp_trace *t)
{
    lp_jsonw_ku64(j, "workers", t->nworkers);
    lp_jsonw_ku64(j, "activities", t->nacts - t->ngaps);
    lp_jsonw_ku64(j, "gaps", t->ngaps);
    lp_jsonw_ku64(j, "messages", t->nmsgs);
    lp_jsonw_ku64(j, "skewed_messages", t->nskew);
    lp_jsonw_ki64(j, "start", t->tmin);
    lp_jsonw_ki64(j, "end", t->tmax);
}
