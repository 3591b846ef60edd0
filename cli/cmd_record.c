/* cmd_record.c: `longpole record` (one recorder for every source: monitor, kernel,
 * stacks; docs/record.md) and `longpole monitor` (the same with the monitor source
 * only, Grade10's sampler). The command after `--` is run under recording
 * (lp_record_run), or a running process is followed (--pid, lp_record_attach). The
 * answer, on stderr so that the command's own output stays its own: what was recorded,
 * per source its status, files and bytes (from the recording's manifest), how the
 * command ended.
 *
 * Exit status: the command's (128 + N if signal N ended it); the recorder's own
 * failures have statuses of their own (`longpole help exit-codes`): 125 the recording
 * could not be made or a source the user named failed, 126 the command could not be
 * executed, 127 it was not found; a bad command line is 2 before anything runs.
 * The command sees LONGPOLE_RECORDING=DIR in its environment, so it can write its own
 * logs (e.g. a Grade10 OperationLog, *.oplog) into the recording.
 */
#include "cli.h"
#include "longpole/record/record.h"
#include "base/util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { REC_EXIT_FAILED = 125, REC_EXIT_NOEXEC = 126, REC_EXIT_NOTFOUND = 127 };

typedef struct rec_args {
    const char *dir, *sources, *host;
    int64_t period;
    uint64_t pid;
    int quiet;
} rec_args;

static const cli_opt rec_opts[] = {
    {"-o", "--output", .kind = CLI_STR, .arg = "DIR", CLI_AT(rec_args, dir), .err = "-o needs a directory",
     .example = "run1", .help = "the recording's directory: new or empty (default: recording-DATE-TIME)"},
    {"--sources", .kind = CLI_STR, .arg = "LIST", CLI_AT(rec_args, sources), .err = "--sources needs a list",
     .example = "monitor", .help = "comma-separated sources to run (default: those that can run here);\n"
                                    "a named source that cannot run refuses the recording"},
    {"--period", .kind = CLI_DUR, .arg = "D", CLI_AT(rec_args, period), .range = "[1000,)",
     .err = "--period needs a duration", .example = "10ms", .help = "sampling period of the sampling sources (default 10ms)"},
    {"--host", .kind = CLI_STR, .arg = "H", CLI_AT(rec_args, host), .err = "--host needs a name", .example = "node1",
     .help = "the host name the sources write (default: this machine's node name)"},
    {"--pid", .kind = CLI_COUNT, .arg = "P", CLI_AT(rec_args, pid), .range = "[1,)", .err = "--pid needs a process id",
     .example = "1", .help = "follow running process P (until it exits or Ctrl-C) instead of a command"},
    {"-q", "--quiet", .kind = CLI_FLAG, CLI_AT(rec_args, quiet), .help = "print nothing but errors"},
    CLI_END,
};

static const char rec_notes[] =
    "The command runs with LONGPOLE_RECORDING=DIR in its environment (to write its own\n"
    "logs there, e.g. a Grade10 OperationLog as DIR/*.oplog). What was recorded is\n"
    "printed on stderr after the command ends; DIR/manifest.json has the details.\n"
    "Signals: SIGINT, SIGTERM, SIGHUP, SIGQUIT sent to longpole are forwarded to the\n"
    "command (typed at the terminal they reach it directly); the recording is completed.\n"
    "exit status: the command's (128+N if signal N ended it); 125 the recording failed\n"
    "(directory, a named source that cannot run or failed), 126 the command cannot be\n"
    "executed, 127 it was not found, 2 a bad command line (`longpole help exit-codes`).\n";

const cli_spec cli_spec_record = {
    .cmd = "record",
    .usage = "usage: longpole record [-o DIR] [--sources LIST] [--period D] [--host H] -- CMD [ARG...]\n"
             "       longpole record [-o DIR] [--sources LIST] [--period D] [--host H] --pid P\n",
    .about = "Record a run once for every analysis: resource samples for Grade10 (monitor),\n"
             "kernel events (kernel: tracefs), call stacks for CrystalPerf (stacks: perf).\n"
             "The recording is a directory with one file set per source and manifest.json\n"
             "(docs/record.md); `longpole grade10 DIR` analyses it.\n",
    .groups = {CLI_OWN("options:", rec_opts)},
    .notes = rec_notes,
    .operands = CLI_NO_OPERANDS,
    .unknown = "unknown option '%s' (the command to record goes after --)",
    .size = sizeof(rec_args),
};

static const cli_opt mon_opts[] = {
    {"-o", "--output", .kind = CLI_STR, .arg = "DIR", CLI_AT(rec_args, dir), .err = "-o needs a directory",
     .example = "run1", .help = "the recording's directory: new or empty (default: recording-DATE-TIME)"},
    {"--period", .kind = CLI_DUR, .arg = "D", CLI_AT(rec_args, period), .range = "[1000,)",
     .err = "--period needs a duration", .example = "10ms", .help = "sampling period (default 10ms)"},
    {"--host", .kind = CLI_STR, .arg = "H", CLI_AT(rec_args, host), .err = "--host needs a name", .example = "node1",
     .help = "the host column of the CSV (default: this machine's node name)"},
    {"--pid", .kind = CLI_COUNT, .arg = "P", CLI_AT(rec_args, pid), .range = "[1,)", .err = "--pid needs a process id",
     .example = "1", .help = "follow running process P (until it exits or Ctrl-C) instead of a command"},
    {"-q", "--quiet", .kind = CLI_FLAG, CLI_AT(rec_args, quiet), .help = "print nothing but errors"},
    CLI_END,
};

const cli_spec cli_spec_monitor = {
    .cmd = "monitor",
    .usage = "usage: longpole monitor [-o DIR] [--period D] [--host H] -- CMD [ARG...]\n"
             "       longpole monitor [-o DIR] [--period D] [--host H] --pid P\n",
    .about = "`longpole record --sources monitor`: sample the process tree's and the machine's\n"
             "CPU, run-queue delay, pressure stall information, network and disk every period\n"
             "into DIR/monitor.csv (time_ns,host,metric,value: Grade10's monitoring CSV,\n"
             "docs/formats/grade10-inputs.md; the metrics are listed in docs/record.md).\n",
    .groups = {CLI_OWN("options:", mon_opts)},
    .notes = rec_notes,
    .operands = CLI_NO_OPERANDS,
    .unknown = "unknown option '%s' (the command to record goes after --)",
    .size = sizeof(rec_args),
};

/* ---- the answer ------------------------------------------------------------------------ */

static uint64_t file_bytes(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    if (name[0] == '/')
        snprintf(path, sizeof path, "%s", name);
    else
        snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* One line per source of the manifest: name, status, files with their bytes, and the
 * reason when it did not run. Returns how many named sources failed (named: all). */
static int print_sources(const char *dir, const lp_json *doc, int named, FILE *out)
{
    const lp_json *src = lp_json_get(doc, "sources");
    int failed = 0;
    fprintf(out, "  %-8s %-8s %s\n", "source", "status", "files");
    for (const lp_json *s = src ? lp_json_first(src) : NULL; s; s = lp_json_next_sibling(s)) {
        const lp_json *name = lp_json_get(s, "name"), *status = lp_json_get(s, "status");
        const lp_json *files = lp_json_get(s, "files"), *why = lp_json_get(s, "reason");
        const char *st = status && status->type == LP_JSON_STRING ? status->s : "?";
        fprintf(out, "  %-8s %-8s", name && name->type == LP_JSON_STRING ? name->s : "?", st);
        if (strcmp(st, "ok") != 0 && named)
            failed++;
        uint64_t total = 0;
        int nf = 0;
        for (const lp_json *f = files ? lp_json_first(files) : NULL; f; f = lp_json_next_sibling(f))
            if (f->type == LP_JSON_STRING) {
                uint64_t b = file_bytes(dir, f->s);
                total += b;
                fprintf(out, "%s%s (%llu bytes)", nf++ ? ", " : " ", f->s, (unsigned long long)b);
            }
        if (nf > 1)
            fprintf(out, "; %llu bytes", (unsigned long long)total);
        if (!nf && strcmp(st, "ok") == 0)
            fprintf(out, " (none)");
        if (why && why->type == LP_JSON_STRING)
            fprintf(out, "%s%s", nf ? "; " : " ", why->s);
        fputc('\n', out);
    }
    return failed;
}

/* Read DIR/manifest.json and print its sources; -1 if it cannot be read. */
static int report_sources(const char *dir, int named, FILE *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    lp_error err;
    lp_error_clear(&err);
    lp_input *in = NULL;
    lp_json_reader *r = NULL;
    if (lp_input_open(&in, path, &err) || lp_json_reader_new(&r, in, NULL, &err)) {
        if (in)
            lp_input_close(in);
        return -1;
    }
    lp_json_ev ev;
    int failed = -1;
    if (lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_VALUE && ev.tree->type == LP_JSON_OBJECT)
        failed = print_sources(dir, ev.tree, named, out);
    lp_json_reader_free(r);
    lp_input_close(in);
    return failed;
}

static void print_answer(const char *dir, char **cmd, const lp_rec_result *res, FILE *out)
{
    char d[32];
    if (cmd) {
        fprintf(out, "longpole record: '%s' (pid %d) ", cmd[0], res->pid);
        if (res->signal)
            fprintf(out, "killed by signal %d (%s)", res->signal, strsignal(res->signal));
        else
            fprintf(out, "exited with status %d", res->exit_code);
    } else {
        fprintf(out, "longpole record: process %d followed", res->pid);
    }
    fprintf(out, " after %s", lp_fmt_dur(res->end_ns - res->start_ns, d, sizeof d));
    fprintf(out, "; recorded into %s/ (cpu: user %.3f s, sys %.3f s)\n", dir, res->user_s, res->sys_s);
}

/* ---- running it ---------------------------------------------------------------------- */

/* Split "a,b,c" into a NULL-terminated list (in buf, a copy); NULL on an empty name. */
static const char **split_sources(const char *s, char *buf, size_t n, const char **v, size_t cap)
{
    snprintf(buf, n, "%s", s);
    size_t k = 0;
    for (char *p = buf, *save = NULL, *tok; (tok = strtok_r(p, ",", &save)) && k + 1 < cap; p = NULL)
        v[k++] = tok;
    v[k] = NULL;
    return k ? v : NULL;
}

static int recorder_status(const lp_error *err)
{
    if (err->status == LP_ERR_IO && strstr(err->msg, "cannot run '"))
        return strstr(err->msg, strerror(ENOENT)) ? REC_EXIT_NOTFOUND : REC_EXIT_NOEXEC;
    return err->status == LP_ERR_NOMEM ? LP_EXIT_NOMEM : REC_EXIT_FAILED;
}

static int run(const char *name, const rec_args *a, char **cmd, const char *const *sources)
{
    char defdir[64];
    const char *dir = a->dir;
    if (!dir) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(defdir, sizeof defdir, "recording-%Y%m%d-%H%M%S", &tm);
        dir = defdir;
    }
    lp_rec_opts o = {.dir = dir, .period_ns = a->period, .sources = sources, .host = a->host};
    lp_rec_result res;
    lp_error err;
    lp_error_clear(&err);
    lp_status st;
    if (cmd) {
        setenv("LONGPOLE_RECORDING", dir, 1);
        st = lp_record_run(&o, cmd, &res, &err);
    } else {
        st = lp_record_attach(&o, (int)a->pid, &res, &err);
    }
    if (st) {
        fprintf(stderr, "longpole %s: %s\n", name, err.msg[0] ? err.msg : lp_status_str(st));
        if (!a->quiet && report_sources(dir, sources != NULL, stderr) >= 0)
            fprintf(stderr, "  (partial recording in %s/)\n", dir);
        return recorder_status(&err);
    }
    FILE *out = a->quiet ? NULL : stderr;
    if (out)
        print_answer(dir, cmd, &res, out);
    FILE *sink = out ? out : fopen("/dev/null", "w");
    int failed = sink ? report_sources(dir, sources != NULL, sink) : 0;
    if (sink && !out)
        fclose(sink);
    if (failed != 0) {
        fprintf(stderr, "longpole %s: %s\n", name,
                failed < 0 ? "the recording's manifest cannot be read" : "a source named with --sources did not record");
        return REC_EXIT_FAILED;
    }
    if (out && res.sources_ok)
        fprintf(out, "analyse with: longpole grade10 %s\n", dir);
    return cmd ? res.exit_code : LP_EXIT_OK;
}

/* argv up to "--" is longpole's; after it, the command. */
static int record_main(const cli_spec *spec, const char *const *forced, int argc, char **argv)
{
    int dd = 1;
    while (dd < argc && strcmp(argv[dd], "--") != 0)
        dd++;
    rec_args a;
    cli_args rest;
    int rc = cli_parse(spec, dd, argv, &a, &rest);
    if (rc)
        return rc;
    cli_args_release(spec, &a, &rest);
    char **cmd = dd < argc ? argv + dd + 1 : NULL;
    if (cmd && !cmd[0])
        return cli_usage(spec->cmd, "no command after --");
    if (!cmd && !a.pid)
        return cli_usage(spec->cmd, "give a command after -- or --pid P");
    if (cmd && a.pid)
        return cli_usage(spec->cmd, "--pid and a command cannot go together");
    char buf[1024];
    const char *v[32];
    const char *const *sources = forced;
    if (a.sources) {
        if (!(sources = split_sources(a.sources, buf, sizeof buf, v, 32)))
            return cli_usage(spec->cmd, "--sources needs at least one source name");
        for (size_t i = 0; sources[i]; i++)
            if (!lp_rec_source_find(sources[i]))
                return cli_usage(spec->cmd, "unknown source '%s' (see `longpole help record`)", sources[i]);
    }
    return run(spec->cmd, &a, cmd, sources);
}

int cmd_record(int argc, char **argv) { return record_main(&cli_spec_record, NULL, argc, argv); }

int cmd_monitor(int argc, char **argv)
{
    static const char *const mon[] = {"monitor", NULL};
    return record_main(&cli_spec_monitor, mon, argc, argv);
}
