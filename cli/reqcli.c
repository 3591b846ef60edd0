/* reqcli.c: the options and loading shared by the request-log commands (reqcli.h). */
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

/* ---- the options ---------------------------------------------------------------------- */

static int set_columns(void *dst, const char *v, char *msg, size_t n)
{
    lp_error err;
    if (!lp_reqlog_opts_columns(dst, v, &err))
        return 0;
    snprintf(msg, n, "--columns: %s", err.msg);
    return -1;
}

static int set_unit(void *dst, const char *v, char *msg, size_t n)
{
    lp_error err;
    if (!lp_reqlog_opts_unit(dst, v, &err))
        return 0;
    snprintf(msg, n, "--time-unit: %s", err.msg);
    return -1;
}

/* --delimiter C: one character, or "tab" / "\t" */
static int set_delimiter(void *dst, const char *v, char *msg, size_t n)
{
    if (strlen(v) != 1 && strcmp(v, "\\t") != 0 && strcmp(v, "tab") != 0)
        return -1;
    *(char *)dst = strlen(v) == 1 ? v[0] : '\t';
    return 0;
}

static int set_format(void *dst, const char *v, char *msg, size_t n)
{
    lp_reqlog_format *f = dst;
    if (strcmp(v, "csv") == 0)
        *f = LP_RL_CSV;
    else if (strcmp(v, "tsv") == 0)
        *f = LP_RL_TSV;
    else if (strcmp(v, "jsonl") == 0 || strcmp(v, "json") == 0)
        *f = LP_RL_JSONL;
    else if (strcmp(v, "auto") == 0)
        *f = LP_RL_AUTO;
    else
        return -1;
    return 0;
}

/* --max-errors N (0 counts as 1) */
static int set_max_diags(void *dst, const char *v, char *msg, size_t n)
{
    uint64_t k;
    if (cli_parse_count(v, &k))
        return -1;
    *(size_t *)dst = k ? (size_t)k : 1;
    return 0;
}

#define R(m) CLI_AT(reqcli, m)

const cli_opt reqcli_log_opts[] = {
    {"--columns", .kind = CLI_FN, .arg = "SPEC", R(log), .fn = set_columns, .err = "--columns: needs a value",
     .example = "request=req,time=ts",
     .help = "role=column,... roles request, host, time, event, task, seq,\n"
             "attr.NAME; a column is a header name or a 1-based number\n"
             "(default names: request|request_id|req, host, time|timestamp|\n"
             "ts|time_ns|time_us|time_ms|time_s, event, task, seq)"},
    {"--delimiter", .kind = CLI_FN, .arg = "C", R(log.delimiter), .fn = set_delimiter,
     .err = "--delimiter takes one character (or 'tab')", .example = "tab",
     .help = "field separator of CSV (default ',' or tab)"},
    {"--time-unit", .kind = CLI_FN, .arg = "U", R(log), .fn = set_unit, .err = "--time-unit: needs a value",
     .example = "us", .help = "ns, us, ms, s or iso (default: the time column's suffix, else ns)"},
    {"--header", .kind = CLI_SET, R(log.header), .ival = 1, .help = ""},
    {"--no-header", .kind = CLI_SET, R(log.header), .ival = 0, .help = "whether the first line names the columns"},
    {"--host-from-name", .kind = CLI_FLAG, R(log.host_from_name),
     .help = "one file per host: the host is the file name up to its first '.'"},
    {"--attrs", .kind = CLI_STR, .arg = "FILE", R(attrs), .err = "--attrs needs a file", .example = "a.csv",
     .help = "request attributes: a table with a request column (CSV/TSV/JSONL)"},
    {"--no-skew", .kind = CLI_FLAG, R(no_skew),
     .help = "do not correct clock skew (default: corrected from RPC patterns)"},
    {"--reference", .kind = CLI_STR, .arg = "HOST", R(reference), .err = "--reference needs a host name",
     .example = "web1", .help = "host whose clock the others are corrected to"},
    CLI_END,
};

const cli_opt reqcli_format_opts[] = {
    {"--format", .kind = CLI_FN, .arg = "F", R(log.format), .fn = set_format,
     .err = "--format takes csv, tsv or jsonl", .example = "jsonl", .help = "csv, tsv or jsonl (default: by content)"},
    CLI_END,
};

const cli_opt reqcli_run_opts[] = {
    {"--threads", .kind = CLI_COUNT, .arg = "N", R(threads), .range = "[0,64]",
     .err = "--threads takes 0..64 (0 = one per CPU)", .example = "2", .help = "threads (default: one per CPU)"},
    {"--timing", .kind = CLI_FLAG, R(timing), .help = "print the time of each phase (load, skew, ...) on stderr"},
    CLI_END,
};

const cli_opt reqcli_diag_opts[] = {
    {"--strict", .kind = CLI_FLAG, R(strict),
     .help = "stop if the input has errors (default: report, skip, go on, exit 4)"},
    {"-q", "--quiet", .kind = CLI_FLAG, R(quiet), .help = "print only the counts of the input's diagnostics"},
    {"--max-errors", .kind = CLI_FN, .arg = "N", R(max_diags), .fn = set_max_diags, .err = "--max-errors needs a count",
     .example = "5", .help = "diagnostics printed in full (default 20)"},
    CLI_END,
};

#undef R

void reqcli_model_init(reqcli_model *m)
{
    m->share = 0.05;
    m->buckets = 20;
}

#define M(m) CLI_AT(reqcli_model, m)

const cli_opt reqcli_model_opts[] = {
    {"--model", .kind = CLI_STR, .arg = "FILE", M(model), .err = "--model needs a file", .example = "m.json",
     .help = "causal model from `longpole infer` (default: inferred from the logs)"},
    {"--categories", .kind = CLI_STR, .arg = "FILE", M(cats), .err = "--categories needs a file", .example = "c.txt",
     .help = "segment categories: lines 'CATEGORY task|segment|network PATTERN',\n"
             "first match wins (docs/formats/mystery-categories.md); default:\n"
             "'network' for segments crossing hosts, else the task's name"},
    {"--filter", .kind = CLI_STR, .arg = "REGEX", M(filter), .err = "--filter needs a regular expression",
     .example = "^debug:", .help = "(without --model) drop matching segments while inferring"},
    {"--outliers", .kind = CLI_DOUBLE, .arg = "P", M(share), .range = "(0,1)",
     .err = "--outliers takes a share between 0 and 1 (e.g. 0.05)", .example = "0.1",
     .help = "share of slowest requests taken as outliers (default 0.05)"},
    {"--buckets", .kind = CLI_COUNT, .arg = "N", M(buckets), .range = "[1,1000]", .err = "--buckets takes 1..1000",
     .example = "4", .help = "what-if slack buckets (default 20)"},
    CLI_END,
};

#undef M

/* ---- loading -------------------------------------------------------------------------- */

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
