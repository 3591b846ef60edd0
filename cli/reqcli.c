/* reqcli.c: shared options and loading of the request-log commands (see reqcli.h). */
#include "reqcli.h"

#include <limits.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void reqcli_init(reqcli *o)
{
    memset(o, 0, sizeof *o);
    lp_reqlog_opts_init(&o->log);
    o->t0 = o->tlast = now_s();
}

void reqcli_mark(reqcli *o, const char *phase)
{
    double t = now_s();
    if (o->tlen < sizeof o->tbuf) {
        int k = snprintf(o->tbuf + o->tlen, sizeof o->tbuf - o->tlen, "%s%s %.2f s", o->tlen ? ", " : "", phase,
                         t - o->tlast);
        if (k > 0)
            o->tlen += (size_t)k;
    }
    o->tlast = t;
}

void reqcli_timing(reqcli *o, const char *cmd)
{
    if (o->timing)
        fprintf(stderr, "longpole %s: timing: %s; total %.2f s\n", cmd, o->tbuf, now_s() - o->t0);
}

int reqcli_opt(reqcli *o, const char *cmd, int argc, char **argv, int *i, int *rc)
{
    const char *v;
    lp_error err;
    uint64_t n;
    *rc = 0;
    if (cli_opt(argc, argv, i, "--columns", &v)) {
        if (!v || lp_reqlog_opts_columns(&o->log, v, &err))
            *rc = cli_usage(cmd, "--columns: %s", v ? err.msg : "needs a value");
    } else if (cli_opt(argc, argv, i, "--format", &v)) {
        if (v && strcmp(v, "csv") == 0)
            o->log.format = LP_RL_CSV;
        else if (v && strcmp(v, "tsv") == 0)
            o->log.format = LP_RL_TSV;
        else if (v && (strcmp(v, "jsonl") == 0 || strcmp(v, "json") == 0))
            o->log.format = LP_RL_JSONL;
        else if (v && strcmp(v, "auto") == 0)
            o->log.format = LP_RL_AUTO;
        else
            *rc = cli_usage(cmd, "--format takes csv, tsv or jsonl");
    } else if (cli_opt(argc, argv, i, "--delimiter", &v)) {
        if (!v || (strlen(v) != 1 && strcmp(v, "\\t") != 0 && strcmp(v, "tab") != 0))
            *rc = cli_usage(cmd, "--delimiter takes one character (or 'tab')");
        else
            o->log.delimiter = strlen(v) == 1 ? v[0] : '\t';
    } else if (cli_opt(argc, argv, i, "--time-unit", &v)) {
        if (!v || lp_reqlog_opts_unit(&o->log, v, &err))
            *rc = cli_usage(cmd, "--time-unit: %s", v ? err.msg : "needs a value");
    } else if (cli_flag(argv, *i, "--header")) {
        o->log.header = 1;
    } else if (cli_flag(argv, *i, "--no-header")) {
        o->log.header = 0;
    } else if (cli_flag(argv, *i, "--host-from-name")) {
        o->log.host_from_name = 1;
    } else if (cli_opt(argc, argv, i, "--attrs", &v)) {
        if (!v)
            *rc = cli_usage(cmd, "--attrs needs a file");
        o->attrs = v;
    } else if (cli_flag(argv, *i, "--no-skew")) {
        o->no_skew = 1;
    } else if (cli_opt(argc, argv, i, "--reference", &v)) {
        if (!v)
            *rc = cli_usage(cmd, "--reference needs a host name");
        o->reference = v;
    } else if (cli_opt(argc, argv, i, "--threads", &v)) {
        if (!v || cli_parse_count(v, &n) || n > 64)
            *rc = cli_usage(cmd, "--threads takes 0..64 (0 = one per CPU)");
        else
            o->threads = (unsigned)n;
    } else if (cli_flag(argv, *i, "--timing")) {
        o->timing = 1;
    } else if (cli_flag(argv, *i, "--strict")) {
        o->strict = 1;
    } else if (cli_flag(argv, *i, "-q") || cli_flag(argv, *i, "--quiet")) {
        o->quiet = 1;
    } else if (cli_opt(argc, argv, i, "--max-errors", &v)) {
        if (!v || cli_parse_count(v, &n))
            *rc = cli_usage(cmd, "--max-errors needs a count");
        else
            o->max_diags = (size_t)n ? (size_t)n : 1;
    } else {
        return 0;
    }
    return 1;
}

int reqcli_load(reqcli *o, const char *cmd, lp_reqlog **rl, int *data_errors)
{
    *rl = NULL;
    *data_errors = 0;
    if (o->npaths == 0)
        return cli_usage(cmd, "no log files given");
    o->log.threads = o->threads;
    if (cli_progress_enabled()) {
        o->log.progress = cli_progress;
        o->log.progress_ctx = NULL;
    }
    size_t max = o->max_diags ? o->max_diags : 20;
    lp_diags ds;
    lp_diags_init(&ds, o->quiet ? 0 : max);
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_reqlog_load((const char *const *)o->paths, (size_t)o->npaths, &o->log, &ds, rl, &err);
    cli_progress_done();
    if (st == LP_OK && o->attrs) {
        uint64_t unknown;
        st = lp_reqlog_load_attrs(*rl, o->attrs, &o->log, &ds, &unknown, &err);
        if (st == LP_OK && unknown && !o->quiet)
            fprintf(stderr, "longpole %s: %llu request(s) of %s are not in the logs\n", cmd,
                    (unsigned long long)unknown, o->attrs);
    }
    cli_print_diags(&ds, o->quiet ? 0 : max);
    *data_errors = ds.nerrors > INT_MAX ? INT_MAX : (int)ds.nerrors; /* a count: callers test it, export stores it */
    lp_diags_release(&ds);
    if (st) {
        lp_reqlog_free(*rl);
        *rl = NULL;
        return cli_fail(cmd, &err);
    }
    if (*data_errors && (*rl)->nbad && !o->quiet)
        fprintf(stderr, "longpole %s: %llu of %llu requests excluded for the errors above\n", cmd,
                (unsigned long long)(*rl)->nbad, (unsigned long long)(*rl)->nreqs);
    if (*data_errors && o->strict) {
        fprintf(stderr, "longpole %s: the input has errors and --strict was given; stopping\n", cmd);
        lp_reqlog_free(*rl);
        *rl = NULL;
        return LP_EXIT_DATA;
    }
    reqcli_mark(o, "load");
    return 0;
}

int reqcli_skew(reqcli *o, const char *cmd, lp_reqlog *rl, lp_skew *sk)
{
    lp_skew local;
    lp_skew *s = sk ? sk : &local;
    memset(s, 0, sizeof *s);
    if (o->no_skew)
        return 0;
    lp_skew_opts so = {o->threads, o->reference};
    lp_error err;
    lp_error_clear(&err);
    if (lp_skew_estimate(rl, &so, s, &err))
        return cli_fail(cmd, &err);
    lp_skew_apply(s, rl);
    if (!sk)
        lp_skew_release(s);
    reqcli_mark(o, "skew");
    return 0;
}
