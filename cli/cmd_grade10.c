/* cmd_grade10.c: `longpole grade10`: Grade10's analysis (papers/grade10.txt;
 * docs/analyses/grade10.md) from the command line. Inputs: Grade10 OperationLogs
 * (sniffed: a line holding `OperationLog:` or starting with `time=`), any trace longpole
 * loads (its activities are the phases), a recording of `longpole record` (a directory
 * with manifest.json: its monitor.csv is the monitoring, its *.oplog files the phases,
 * its *.g10 file the model), monitoring and blocking CSVs, a model file (or, for a
 * trace, a built-in one: every worker a serial thread of its activities, the CPU of the
 * recorded process tree as the resource). Then the attribution, bottlenecks, issues by
 * replay, optionally fitted rules; out as text (the answer first), JSON or SQLite.
 *
 * Exit status: 0; 4 (LP_EXIT_DATA) when the input had errors (reported with file and
 * line, bad records skipped, the rest analysed), or when the model is refused or no phase
 * remains (nothing printed but the errors); 9 (LP_EXIT_EMPTY) when the input holds no
 * phase record or activity at all; 3 a file cannot be read; 2 usage.
 */
#include "g10cli.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct g10_args {
    cli_load load;
    cli_list monitoring, blocking;
    const char *model, *sqlite, *html;
    int64_t slice;
    int mode, fit, json, phases;
    uint64_t top;
    double threshold;
    int64_t unit;
} g10_args;

static void g10_init(void *p)
{
    g10_args *a = p;
    a->top = 10;
    a->threshold = -1;
}

static const char *const g10_modes[] = {"slice", "event", NULL};

static const cli_opt g10_opts[] = {
    {"--model", .kind = CLI_STR, .arg = "FILE", CLI_AT(g10_args, model), .err = "--model needs a file",
     .example = "job.g10", .help = "the model (docs/formats/grade10-model.md; examples in docs/examples/grade10/);\n"
                                   "default for a trace: the built-in one; for a recording: its *.g10"},
    {"--monitoring", .kind = CLI_LIST, .arg = "CSV", CLI_AT(g10_args, monitoring), .err = "--monitoring needs a file",
     .example = "mon.csv", .help = "monitoring samples time,host,metric,value (repeatable)"},
    {"--blocking", .kind = CLI_LIST, .arg = "CSV", CLI_AT(g10_args, blocking), .err = "--blocking needs a file",
     .example = "gc.csv", .help = "blocking intervals start,end,host,resource[,scope] (repeatable)"},
    {"--slice", .kind = CLI_DUR, .arg = "D", CLI_AT(g10_args, slice), .range = "[1,)", .err = "--slice needs a duration",
     .example = "10ms", .help = "timeslice of slice mode (default: the model's, 10ms)"},
    {"--mode", .kind = CLI_CHOICE, .arg = "slice|event", CLI_AT(g10_args, mode), .choices = g10_modes,
     .err = "--mode needs slice or event", .bad = "--mode: '%s' is not slice or event", .example = "event",
     .help = "fixed timeslices as the paper (default), or segments between demand changes"},
    {"--fit-rules", .kind = CLI_FLAG, CLI_AT(g10_args, fit),
     .help = "also fit Variable weights of the defaulted rules by NNLS (printed as rule lines)"},
    {"--threshold", .kind = CLI_DOUBLE, .arg = "X", CLI_AT(g10_args, threshold), .range = "[0,1]",
     .err = "--threshold needs a number", .example = "0.05", .help = "report issues gaining at least X of the makespan (default: the model's)"},
    {"--top", .kind = CLI_COUNT, .arg = "N", CLI_AT(g10_args, top), .err = "--top needs a number", .example = "5",
     .help = "issues printed (default 10, 0 = every reported one)"},
    {"--time-unit", .kind = CLI_DUR, .arg = "D", CLI_AT(g10_args, unit), .range = "[1,)",
     .err = "--time-unit needs a duration", .example = "1ms",
     .help = "unit of bare OperationLog times (default: decided from their size)"},
    {"--json", .kind = CLI_FLAG, CLI_AT(g10_args, json), .help = "one JSON document (docs/analyses/grade10.md)"},
    {"--phases", .kind = CLI_FLAG, CLI_AT(g10_args, phases), .help = "with --json: every phase instance too"},
    {"--sqlite", .kind = CLI_STR, .arg = "DB", CLI_AT(g10_args, sqlite), .err = "--sqlite needs a database file",
     .example = "out.db", .help = "also write the grade10 tables to DB (docs/formats/sqlite.md)"},
    {"--html", .kind = CLI_STR, .arg = "FILE", CLI_AT(g10_args, html), .err = "--html needs a file", .example = "g10.html",
     .help = "also write an HTML report: the Grade10 section (issues, usage vs demand over\ntime, bottlenecks, "
             "imbalance), with a trace's own sections for a trace"},
    CLI_END,
};

const cli_spec cli_spec_grade10 = {
    .cmd = "grade10",
    .usage = "usage: longpole grade10 [--model FILE] [--monitoring CSV] [--blocking CSV] [--slice D]\n"
             "                        [--mode slice|event] [--fit-rules] [--json] [--sqlite DB] [--html FILE]\n"
             "                        INPUT...\n",
    .about = "Grade10 (papers/grade10.txt): coarse resource monitoring attributed to the phases\n"
             "of a run through a model of the program, the bottlenecks of every phase (global:\n"
             "the resource saturated; local: an Exact phase at its demand; blocking), and the\n"
             "gain of fixing each issue, estimated by replaying the phase DAG (a resource's\n"
             "bottleneck removed; a concurrent type's imbalance removed). INPUT is a Grade10\n"
             "OperationLog, any trace longpole reads (activities are phases), or a recording\n"
             "of `longpole record` (its monitor.csv, *.oplog and *.g10 are used).\n",
    .groups = {CLI_OWN("options:", g10_opts), CLI_LOAD_GROUPS(g10_args, load)},
    .notes = "The text answer: the makespan and the issues by gain (bottleneck, imbalance, outlier),\n"
             "on a trace the resources of its critical path, then bottlenecks per phase type and\n"
             "resource, imbalance, resources (with effective capacity when a resource has delay=),\n"
             "and every adjustment made to the data. When a CPU-like resource with Exact rules was\n"
             "contended (more threads than cores, or other load), imbalance and outlier issues are\n"
             "replayed under processor sharing (their work shares the cores) and say so.\n"
             "exit status: 0; 4 the input had errors (reported with file and line; the rest was\n"
             "analysed) or the model was refused or no phase remained; 9 the input holds no phase\n"
             "record or activity; 3 unreadable file.\n",
    .size = sizeof(g10_args),
    .init = g10_init,
};

/* ---- inputs --------------------------------------------------------------------------- */

typedef struct g10_in {
    lp_g10_data d;
    lp_diags ds;
    const char **oplog, **trace, **mon, **blk;
    size_t noplog, ntrace, nmon, nblk;
    char **owned;           /* paths made here (recordings) */
    size_t nowned;
    char *rec_model;        /* a recording's *.g10 */
    char host[256];         /* a recording's host */
    long cpus;              /* a recording's CPUs (0: unknown) */
    lp_trace *t;
} g10_in;

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

/* Is `path` a Grade10 OperationLog (a line with an OperationLog record in its first 64 KiB)? */
static int is_oplog(const char *path)
{
    if (ends_with(path, ".oplog"))
        return 1;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[4096];
    int yes = 0;
    for (int k = 0; !yes && k < 200 && fgets(line, sizeof line, f); k++)
        yes = strncmp(line, "time=", 5) == 0 || strstr(line, "OperationLog:") || strstr(line, "OperationLog -");
    fclose(f);
    return yes;
}

static char *own(g10_in *g, const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = lp_malloc(n);
    char **v = lp_realloc(g->owned, (g->nowned + 1) * sizeof *v);
    if (!p || !v) {
        lp_free(p);
        if (v)
            g->owned = v;
        return NULL;
    }
    g->owned = v;
    snprintf(p, n, "%s/%s", dir, name);
    g->owned[g->nowned++] = p;
    return p;
}

static int push(const char ***v, size_t *n, const char *s)
{
    const char **w = lp_realloc(*v, (*n + 1) * sizeof *w);
    if (!w)
        return -1;
    w[(*n)++] = s;
    *v = w;
    return 0;
}

/* The host and CPUs of a recording's manifest. */
static void read_manifest(g10_in *g, const char *path)
{
    lp_error err;
    lp_error_clear(&err);
    lp_input *in = NULL;
    lp_json_reader *r = NULL;
    if (lp_input_open(&in, path, &err) || lp_json_reader_new(&r, in, NULL, &err)) {
        if (in)
            lp_input_close(in);
        return;
    }
    lp_json_ev ev;
    if (lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_VALUE) {
        const lp_json *h = lp_json_get(ev.tree, "host"), *c = lp_json_get(ev.tree, "cpus");
        int64_t v;
        if (h && h->type == LP_JSON_STRING)
            snprintf(g->host, sizeof g->host, "%s", h->s);
        if (c && !lp_json_i64(c, &v))
            g->cpus = (long)v;
    }
    lp_json_reader_free(r);
    lp_input_close(in);
}

/* A recording: its monitor.csv, blocking.csv, *.oplog and *.g10 files. */
static int add_recording(g10_in *g, const char *dir)
{
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    read_manifest(g, mpath);
    DIR *dd = opendir(dir);
    if (!dd) {
        fprintf(stderr, "longpole grade10: cannot read the recording '%s'\n", dir);
        return LP_EXIT_IO;
    }
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(dd))) {
        const char *n = e->d_name;
        char *p = NULL;
        if (strcmp(n, "monitor.csv") == 0 || strcmp(n, "blocking.csv") == 0 || ends_with(n, ".oplog") ||
            ends_with(n, ".g10"))
            if (!(p = own(g, dir, n)))
                rc = LP_EXIT_NOMEM;
        if (!p)
            continue;
        if (strcmp(n, "monitor.csv") == 0)
            rc = push(&g->mon, &g->nmon, p) ? LP_EXIT_NOMEM : 0;
        else if (strcmp(n, "blocking.csv") == 0)
            rc = push(&g->blk, &g->nblk, p) ? LP_EXIT_NOMEM : 0;
        else if (ends_with(n, ".oplog"))
            rc = push(&g->oplog, &g->noplog, p) ? LP_EXIT_NOMEM : 0;
        else if (!g->rec_model)
            g->rec_model = p;
    }
    closedir(dd);
    if (!rc && !g->noplog && !g->ntrace)
        fprintf(stderr, "longpole grade10: note: the recording '%s' has no phases (*.oplog); give its phases as "
                        "another input\n", dir);
    return rc;
}

static int classify(g10_in *g, char **paths, int n, const g10_args *a)
{
    for (int i = 0; i < n; i++) {
        struct stat st;
        char m[4096];
        snprintf(m, sizeof m, "%s/manifest.json", paths[i]);
        int rc;
        if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode) && access(m, R_OK) == 0)
            rc = add_recording(g, paths[i]);
        else if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode) && is_oplog(paths[i]))
            rc = push(&g->oplog, &g->noplog, paths[i]) ? LP_EXIT_NOMEM : 0;
        else
            rc = push(&g->trace, &g->ntrace, paths[i]) ? LP_EXIT_NOMEM : 0;
        if (rc)
            return rc;
    }
    for (uint32_t i = 0; i < a->monitoring.n; i++)
        if (push(&g->mon, &g->nmon, a->monitoring.v[i]))
            return LP_EXIT_NOMEM;
    for (uint32_t i = 0; i < a->blocking.n; i++)
        if (push(&g->blk, &g->nblk, a->blocking.v[i]))
            return LP_EXIT_NOMEM;
    if (g->noplog && g->ntrace)
        return cli_usage("grade10", "give the phases either as OperationLogs or as a trace, not both");
    if (!g->noplog && !g->ntrace)
        return cli_usage("grade10", "no phases: give an OperationLog, a trace or a recording with *.oplog");
    return 0;
}

typedef lp_status (*g10_reader)(lp_g10_data *, lp_input *, const lp_g10_read_opts *, lp_diags *, lp_error *);

static int read_all(g10_in *g, const char **paths, size_t n, g10_reader fn, const lp_g10_read_opts *ro)
{
    for (size_t i = 0; i < n; i++) {
        lp_error err;
        lp_error_clear(&err);
        lp_input *in = NULL;
        lp_status st = lp_input_open(&in, paths[i], &err);
        if (!st) {
            st = fn(&g->d, in, ro, &g->ds, &err);
            lp_input_close(in);
        }
        if (st)
            return cli_fail("grade10", &err);
    }
    return 0;
}

static void release_in(g10_in *g)
{
    lp_g10_data_release(&g->d);
    lp_diags_release(&g->ds);
    lp_free(g->oplog), lp_free(g->trace), lp_free(g->mon), lp_free(g->blk);
    for (size_t i = 0; i < g->nowned; i++)
        lp_free(g->owned[i]);
    lp_free(g->owned);
    if (g->t)
        lp_trace_free(g->t);
}

/* ---- the model -------------------------------------------------------------------------- */

/* A name usable as a path component of a model. */
static int plain_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s == '/' || *s == ' ' || *s == '\t' || *s == '#' || (unsigned char)*s < 0x20)
            return 0;
    return 1;
}

/* The built-in model of a trace: every worker a serial thread of activities; the CPU of
 * the recorded process tree (proc.cpu, else the machine's cpu.busy) when monitored, with
 * the recording's CPUs (else the cpu.online samples) as capacity, and the tree's
 * run-queue delay (proc.delay) as its effective capacity when recorded. */
static char *builtin_model(const g10_in *g, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    /* slices: 10 ms, or a thousandth of a shorter run */
    int64_t span = g->t->tmax - g->t->tmin, slice = 10000000;
    if (span < 1000 * slice)
        slice = span / 1000 > 0 ? span / 1000 : 1;
    fprintf(f, "grade10-model 1\n# built in (longpole grade10): workers as serial threads of their activities\n"
               "trace-phase type\nslice %lldns\nphase /Worker concurrent worker serial\n", (long long)slice);
    for (uint32_t ty = 0; ty < g->t->ntypes; ty++) {
        const char *n = lp_trace_type_name(g->t, ty);
        if (plain_name(n) && strcmp(n, "gap") != 0)
            fprintf(f, "phase /Worker/%s concurrent activity\n", n);
    }
    const char *metric = NULL;
    int delay = 0;
    double cap = (double)g->cpus;
    for (size_t s = 0; s < g->d.nseries; s++) {
        const char *mn = lp_strtab_get(&g->d.strs, g->d.series[s].metric);
        if (strcmp(mn, "proc.cpu") == 0)
            metric = "proc.cpu";
        else if (strcmp(mn, "cpu.busy") == 0 && !metric)
            metric = "cpu.busy";
        else if (strcmp(mn, "cpu.online") == 0 && cap <= 0 && g->d.series[s].n)
            cap = g->d.series[s].value[0];
        delay |= strcmp(mn, "proc.delay") == 0;
    }
    if (metric && cap > 0)
        fprintf(f, "resource cpu consumable metric=%s sample=counter capacity=%g unit=cores%s\n", metric, cap,
                delay && strcmp(metric, "proc.cpu") == 0 ? " delay=proc.delay" : "");
    fclose(f);
    return buf;
}

static int load_model(g10_in *g, const g10_args *a, lp_g10_model **m, const char **from)
{
    lp_error err;
    lp_error_clear(&err);
    lp_status st;
    const char *file = a->model ? a->model : g->rec_model;
    if (file) {
        lp_input *in = NULL;
        if ((st = lp_input_open(&in, file, &err)))
            return cli_fail("grade10", &err);
        st = lp_g10_model_read(m, in, &g->ds, &err);
        lp_input_close(in);
        *from = file;
    } else if (g->t) {
        size_t n = 0;
        char *text = builtin_model(g, &n);
        if (!text)
            return LP_EXIT_NOMEM;
        st = lp_g10_model_parse(m, text, n, "(built-in model)", &g->ds, &err);
        free(text);
        *from = "built-in (every worker a serial thread of its activities)";
    } else {
        return cli_usage("grade10", "an OperationLog needs a model: --model FILE (examples: docs/examples/grade10/)");
    }
    if (st) {
        cli_print_diags(&g->ds, 50);
        fprintf(stderr, "longpole grade10: %s\n", err.msg[0] ? err.msg : "the model was refused");
        return st == LP_ERR_DATA || st == LP_ERR_FORMAT || st == LP_ERR_UNSUPPORTED ? LP_EXIT_DATA : cli_exit_for(st);
    }
    return 0;
}

/* ---- outputs ----------------------------------------------------------------------------- */

static int fit_rules(FILE *out, const lp_g10_attr *a, const lp_g10_data *d, lp_jsonw *j)
{
    const lp_g10_model *m = a->m;
    if (!j)
        fprintf(out, "\nfitted rules (non-negative least squares of the monitored usage on the phases' activity):\n");
    for (uint32_t r = 0; r < m->nres; r++) {
        if (m->res[r].kind != LP_G10_CONSUMABLE)
            continue;
        lp_g10_fit fit;
        lp_error err;
        lp_error_clear(&err);
        if (lp_g10_fit_rules(a, d, r, &fit, &err)) {
            if (!j)
                fprintf(out, "# %s: no fit: %s\n", lp_g10_model_str(m, m->res[r].name), err.msg);
            continue;
        }
        if (j) {
            lp_jsonw_obj(j);
            lp_jsonw_kstr(j, "resource", lp_g10_model_str(m, m->res[r].name));
            lp_jsonw_ku64(j, "windows", fit.windows);
            lp_jsonw_kdbl(j, "residual", fit.residual);
            lp_jsonw_kdbl(j, "user_scale", fit.user_scale);
            lp_jsonw_key(j, "weights");
            lp_jsonw_obj(j);
            for (uint32_t t = 0; t < fit.ntypes; t++)
                if (fit.fitted[t])
                    lp_jsonw_kdbl(j, lp_g10_model_str(m, m->type[t].path), fit.weight[t]);
            lp_jsonw_obj_end(j);
            lp_jsonw_obj_end(j);
        } else {
            fprintf(out, "# %s: %llu windows, relative residual %.3f\n", lp_g10_model_str(m, m->res[r].name),
                    (unsigned long long)fit.windows, fit.residual);
            lp_g10_fit_write(out, m, &fit);
        }
        lp_g10_fit_release(&fit);
    }
    return 0;
}

/* The analysis object, with "fitted_rules" added before its end when asked. */
static void contention_json(const lp_g10_attr *a, const lp_g10_data *d)
{
    g10_contention c;
    g10_contention_of(d, a->x->start[0], a->x->end[0], &c);
    lp_jsonw j;
    lp_jsonw_init(&j, stdout, 0);
    lp_jsonw_obj(&j);
    if (c.have_delay) {
        lp_jsonw_kdbl(&j, "cpu_s", c.cpu_s);
        lp_jsonw_kdbl(&j, "run_queue_delay_s", c.delay_s);
    }
    if (c.have_psi)
        lp_jsonw_kdbl(&j, "psi_cpu_some_s", c.psi_s);
    lp_jsonw_kdbl(&j, "wall_s", c.wall_s);
    lp_jsonw_obj_end(&j);
    lp_jsonw_end(&j);
}

static int print_json(const lp_g10_attr *a, const lp_g10_issues *is, const g10_args *o, const lp_g10_data *d,
                      const lp_g10_path *path)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return LP_EXIT_NOMEM;
    lp_jsonw j;
    lp_jsonw_init(&j, f, 1);
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_g10_json(&j, a, is, o->phases, &err);
    lp_jsonw_end(&j);
    fclose(f);
    if (st) {
        free(buf);
        return cli_fail("grade10", &err);
    }
    char *close = buf ? strrchr(buf, '}') : NULL;
    if (!close) {
        free(buf);
        return LP_EXIT_INTERNAL;
    }
    /* the library's object, then the command's own members before its end */
    char *end = close;
    while (end > buf && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    fwrite(buf, 1, (size_t)(end - buf), stdout);
    fputs(",\n  \"contention\": ", stdout);
    contention_json(a, d);
    if (path) {
        fputs(",\n  \"critical_path\": ", stdout);
        lp_jsonw_init(&j, stdout, 0);
        lp_jsonw_obj(&j);
        g10_json_path(&j, a, path);
        lp_jsonw_obj_end(&j);
        lp_jsonw_end(&j);
    }
    if (o->fit) {
        fputs(",\n  \"fitted_rules\": ", stdout);
        lp_jsonw_init(&j, stdout, 0);
        lp_jsonw_arr(&j);
        fit_rules(stdout, a, d, &j);
        lp_jsonw_arr_end(&j);
        lp_jsonw_end(&j);
    }
    fputs("}\n", stdout); /* lp_jsonw_end ended the line */
    free(buf);
    return 0;
}

static int write_sqlite(const g10_args *o, char **inputs, int n, const lp_g10_attr *a, const lp_g10_issues *is)
{
    lp_sqlite *db;
    lp_error err;
    lp_error_clear(&err);
    lp_status st = lp_sqlite_open(&db, o->sqlite, (const char *const *)inputs, (size_t)n, "grade10", o->model, &err);
    if (st)
        return cli_fail("grade10", &err);
    if (!(st = lp_sqlite_grade10(db, a, is, 1, &err)))
        st = lp_sqlite_commit(db, NULL, &err);
    lp_sqlite_close(db);
    return st ? cli_fail("grade10", &err) : 0;
}

static int write_html(const g10_args *o, char **inputs, int n, const lp_trace *t, const lp_g10_attr *a,
                      const lp_g10_issues *is, const lp_g10_path *path)
{
    lp_report_data d;
    memset(&d, 0, sizeof d);
    d.trace = t;
    d.g10 = a;
    d.g10_issues = is;
    d.g10_path = path;
    d.inputs = (const char *const *)inputs;
    d.ninputs = (size_t)n;
    lp_report_opts ro;
    lp_report_opts_init(&ro);
    lp_error err;
    lp_error_clear(&err);
    FILE *f = fopen(o->html, "w");
    if (!f) {
        fprintf(stderr, "longpole grade10: cannot write '%s'\n", o->html);
        return LP_EXIT_IO;
    }
    lp_report *r = NULL;
    lp_status st = lp_report_new(&r, &d, &ro, &err);
    if (!st)
        st = lp_report_write(r, f, &err);
    if (r)
        lp_report_free(r);
    if (fclose(f) && !st)
        st = lp_error_set(&err, LP_ERR_IO, "writing '%s' failed", o->html);
    return st ? cli_fail("grade10", &err) : 0;
}

/* ---- the command ------------------------------------------------------------------------- */

/* The resources of the trace's critical path (path.h); 0 with a note on stderr when the
 * path cannot be computed (the rest of the answer stands). */
static int critical_path(const lp_trace *t, const lp_g10_attr *a, lp_g10_path *out)
{
    lp_error err;
    lp_error_clear(&err);
    lp_cpath cp = {0};
    lp_status st = lp_cpath_trace(t, &cp, &err); /* no PAG: the path from the trace's columns */
    if (!st)
        st = lp_g10_path_of(a, t, &cp, out, &err);
    lp_cpath_release(&cp);
    if (st)
        fprintf(stderr, "longpole grade10: note: no critical-path breakdown: %s\n", err.msg);
    return !st;
}

static int analyse(g10_in *g, const g10_args *o, const lp_g10_model *m, const char *model_from, char **inputs,
                   int ninputs)
{
    lp_error err;
    lp_error_clear(&err);
    lp_g10_exec *x = NULL;
    lp_g10_attr *at = NULL;
    lp_g10_issues is;
    memset(&is, 0, sizeof is);
    /* nothing to analyse: exit 9, as every analysis (cli_refuse_empty) */
    if (g->t ? g->t->nacts <= g->t->ngaps : g->d.nev == 0) {
        cli_print_diags(&g->ds, o->load.quiet ? 0 : (o->load.max_diags ? o->load.max_diags : 20));
        if (g->t)
            return cli_refuse_empty("grade10", g->t);
        fprintf(stderr, "longpole grade10: the OperationLog holds no phase record: there is nothing to analyse\n");
        return LP_EXIT_EMPTY;
    }
    lp_status st = g->t ? lp_g10_exec_from_trace(m, g->t, &g->ds, &x, &err)
                        : lp_g10_exec_from_events(m, &g->d, &g->ds, &x, &err);
    lp_g10_opts ao = {o->mode == 1 ? LP_G10_EVENTS : LP_G10_SLICES, o->slice, 0};
    if (!st)
        st = lp_g10_attribute(m, x, &g->d, &ao, &g->ds, &at, &err);
    if (!st)
        st = lp_g10_issues_find(at, o->threshold, &is, &err);
    lp_g10_path path = {0};
    int have_path = !st && g->t && critical_path(g->t, at, &path);
    /* a trace's own loading reported its diagnostics already: these are the model's,
       the monitoring's and the attribution's */
    cli_print_diags_as(&g->ds, o->load.quiet ? 0 : (o->load.max_diags ? o->load.max_diags : 20),
                       g->t ? "model, monitoring and attribution" : "input");
    int rc = 0;
    if (st) {
        rc = cli_fail("grade10", &err);
    } else {
        if (o->json)
            rc = print_json(at, &is, o, &g->d, have_path ? &path : NULL);
        else {
            g10_contention c;
            g10_contention_of(&g->d, x->start[0], x->end[0], &c);
            g10_print_text(stdout, at, &is, o->top, model_from, &c, have_path ? &path : NULL);
            if (o->fit)
                fit_rules(stdout, at, &g->d, NULL);
        }
        if (!rc && o->sqlite)
            rc = write_sqlite(o, inputs, ninputs, at, &is);
        if (!rc && o->html)
            rc = write_html(o, inputs, ninputs, g->t, at, &is, have_path ? &path : NULL);
        if (!rc && g->ds.nerrors)
            rc = LP_EXIT_DATA;
    }
    lp_g10_issues_release(&is);
    lp_g10_path_release(&path);
    if (at)
        lp_g10_attr_free(at);
    if (x)
        lp_g10_exec_free(x);
    return rc;
}

static int run(g10_args *o, char **inputs, int ninputs)
{
    g10_in g;
    memset(&g, 0, sizeof g);
    lp_error err;
    lp_error_clear(&err);
    size_t keep = o->load.quiet ? 0 : (o->load.max_diags ? o->load.max_diags : 20);
    lp_diags_init(&g.ds, keep > 50 ? keep : 50);
    if (lp_g10_data_init(&g.d, &err)) {
        lp_diags_release(&g.ds);
        return cli_fail("grade10", &err);
    }
    lp_g10_read_opts ro = {o->unit};
    int rc = classify(&g, inputs, ninputs, o);
    if (!rc)
        rc = read_all(&g, g.oplog, g.noplog, lp_g10_read_oplog, &ro);
    if (!rc)
        rc = read_all(&g, g.mon, g.nmon, lp_g10_read_monitor, &ro);
    if (!rc)
        rc = read_all(&g, g.blk, g.nblk, lp_g10_read_blocking, &ro);
    int data_errors = 0;
    if (!rc && g.ntrace)
        rc = cli_load_trace(&o->load, (char **)g.trace, (int)g.ntrace, &g.t, &data_errors);
    lp_g10_model *m = NULL;
    const char *from = NULL;
    if (!rc)
        rc = load_model(&g, o, &m, &from);
    if (!rc)
        rc = analyse(&g, o, m, from, inputs, ninputs);
    if (!rc && data_errors)
        rc = LP_EXIT_DATA;
    if (m)
        lp_g10_model_free(m);
    release_in(&g);
    return rc;
}

int cmd_grade10(int argc, char **argv)
{
    g10_args a;
    cli_args rest;
    int rc = cli_parse(&cli_spec_grade10, argc, argv, &a, &rest);
    if (rc)
        return rc;
    if (!rest.n)
        rc = cli_usage("grade10", "no input given");
    else if (a.phases && !a.json)
        rc = cli_usage("grade10", "--phases goes with --json");
    else
        rc = run(&a, rest.operands, rest.n);
    cli_args_release(&cli_spec_grade10, &a, &rest);
    return rc;
}
