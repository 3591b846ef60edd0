/* test_record.c: the recorder (record.h) and its `monitor` source on real commands:
 * the CPU time the monitor measures for the process tree against the kernel's own
 * account of the command (getrusage of the reaped child), for a busy shell loop, a
 * busy child process and a sleep; tolerances are in CPU time, never in wall-clock
 * speed, so a loaded machine does not matter. Exit statuses, signals forwarded, a
 * command that cannot run, a directory in use, unknown sources, attaching. */
#include "t.h"
#include "tutil.h"
#include "longpole/record/record.h"
#include "longpole/import/grade10.h"
#include "longpole/codec/json.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char base[256];
static int seq;

static void rmrf(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

static const char *newdir(char *buf, size_t n)
{
    snprintf(buf, n, "%s/rec%d", base, seq++);
    return buf;
}

/* The last value of a metric in a recording's monitor.csv (NAN if absent). */
static double last_value(const char *dir, const char *metric, size_t *nsamples)
{
    char path[600];
    snprintf(path, sizeof path, "%s/monitor.csv", dir);
    lp_g10_data d;
    lp_diags ds;
    lp_error err;
    lp_diags_init(&ds, 10);
    double v = NAN;
    lp_input *in;
    if (lp_g10_data_init(&d, &err) || lp_input_open(&in, path, &err))
        return NAN;
    if (lp_g10_read_monitor(&d, in, NULL, &ds, &err) == LP_OK) {
        const lp_g10_series *s = lp_g10_data_series(&d, "testhost", metric);
        if (s && s->n) {
            v = s->value[s->n - 1];
            if (nsamples)
                *nsamples = s->n;
            for (size_t i = 1; i < s->n; i++) /* a counter: never decreasing, times increasing */
                CHECK(s->value[i] >= s->value[i - 1] && s->time[i] > s->time[i - 1]);
        }
    }
    CHECK_EQ_I(ds.nerrors, 0);
    lp_input_close(in);
    lp_g10_data_release(&d);
    lp_diags_release(&ds);
    return v;
}

/* The manifest's top-level object; its source statuses checked. */
static int manifest_ok(const char *dir, const char *want_status, int64_t *code)
{
    char path[600];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    lp_input *in;
    lp_json_reader *r;
    lp_error err;
    int ok = 0;
    if (lp_input_open(&in, path, &err))
        return 0;
    if (lp_json_reader_new(&r, in, NULL, &err) == LP_OK) {
        lp_json_ev ev;
        if (lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_VALUE) {
            const lp_json *src = lp_json_first(lp_json_get(ev.tree, "sources"));
            ok = lp_json_str_is(lp_json_get(ev.tree, "format"), "longpole-recording") && src &&
                 lp_json_str_is(lp_json_get(src, "name"), "monitor") &&
                 lp_json_str_is(lp_json_get(src, "status"), want_status);
            const lp_json *c = lp_json_get(lp_json_get(ev.tree, "exit"), "code");
            if (code && (!c || lp_json_i64(c, code)))
                *code = INT64_MIN;
        }
        lp_json_reader_free(r);
    }
    lp_input_close(in);
    return ok;
}

static lp_rec_result record(const char *dir, const char *script, lp_status *st)
{
    static const char *const monitor_only[] = {"monitor", NULL}; /* perf and tracefs are tested on their own */
    lp_rec_opts o = {0};
    o.dir = dir;
    o.host = "testhost";
    o.period_ns = 10000000;
    o.sources = monitor_only;
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    lp_rec_result res;
    lp_error err;
    *st = lp_record_run(&o, argv, &res, &err);
    if (*st)
        fprintf(stderr, "record %s: %s\n", script, err.msg);
    return res;
}

/* CPU time measured two ways: the monitor's last proc.cpu and getrusage of the child. */
static void cpu_case(const char *script, double min_cpu)
{
    char dir[300];
    lp_status st;
    lp_rec_result res = record(newdir(dir, sizeof dir), script, &st);
    CHECK(st == LP_OK);
    size_t n = 0;
    double mon = last_value(dir, "proc.cpu", &n), ru = res.user_s + res.sys_s;
    fprintf(stderr, "%s: monitor %.4f s of CPU in %zu samples, getrusage %.4f s\n", script, mon, n, ru);
    CHECK(res.exit_code == 0);
    CHECK(ru >= min_cpu);
    CHECK(n >= 2);
    /* tick-rounded parts (reaped children) and a last partial period per exited process */
    CHECK(fabs(mon - ru) <= 0.03 + 0.03 * ru);
    int64_t code;
    CHECK(manifest_ok(dir, "ok", &code) && code == 0);
    rmrf(dir);
}

static void test_exit_and_signal(void)
{
    char dir[300];
    lp_status st;
    lp_rec_result res = record(newdir(dir, sizeof dir), "exit 3", &st);
    CHECK(st == LP_OK && res.exit_code == 3 && res.signal == 0);
    int64_t code;
    CHECK(manifest_ok(dir, "ok", &code) && code == 3);
    rmrf(dir);
    res = record(newdir(dir, sizeof dir), "kill -KILL $$", &st);
    CHECK(st == LP_OK && res.signal == SIGKILL && res.exit_code == 128 + SIGKILL);
    rmrf(dir);
    /* a signal sent to the recorder reaches the command; the recorder survives */
    res = record(newdir(dir, sizeof dir), "kill -TERM $PPID; exec sleep 30", &st);
    CHECK(st == LP_OK && res.signal == SIGTERM);
    CHECK(manifest_ok(dir, "ok", NULL));
    rmrf(dir);
}

static void test_errors(void)
{
    char dir[300];
    static const char *const monitor_only[] = {"monitor", NULL};
    lp_rec_opts o = {0};
    lp_rec_result res;
    lp_error err;
    o.sources = monitor_only;
    o.dir = newdir(dir, sizeof dir);
    char *bad[] = {"/nonexistent/longpole-no-such-command", NULL};
    CHECK(lp_record_run(&o, bad, &res, &err) == LP_ERR_IO);
    CHECK(strstr(err.msg, "cannot run") != NULL);
    CHECK(manifest_ok(dir, "ok", NULL)); /* the manifest says what happened */
    /* the directory is now in use */
    char *ok[] = {"true", NULL};
    CHECK(lp_record_run(&o, ok, &res, &err) == LP_ERR_ARG);
    rmrf(dir);
    const char *srcs[] = {"nosuchsource", NULL};
    o.dir = newdir(dir, sizeof dir);
    o.sources = srcs;
    CHECK(lp_record_run(&o, ok, &res, &err) == LP_ERR_ARG);
    rmrf(dir);
    CHECK(lp_rec_source_find("monitor") != NULL && lp_rec_sources()[0] != NULL);
}

static void test_attach(void)
{
    pid_t p = fork();
    if (p == 0) {
        execlp("sh", "sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done", (char *)NULL);
        _exit(127);
    }
    char dir[300];
    static const char *const monitor_only[] = {"monitor", NULL};
    lp_rec_opts o = {0};
    o.sources = monitor_only;
    o.dir = newdir(dir, sizeof dir);
    o.host = "testhost";
    lp_rec_result res;
    lp_error err;
    CHECK(lp_record_attach(&o, (int)p, &res, &err) == LP_OK); /* ends when the loop ends (a zombie) */
    int status;
    waitpid(p, &status, 0);
    CHECK(res.exit_code == -1 && res.pid == (int)p);
    size_t n = 0;
    CHECK(last_value(dir, "proc.cpu", &n) >= 0 && n >= 2);
    CHECK(manifest_ok(dir, "ok", NULL));
    rmrf(dir);
}

int main(void)
{
    snprintf(base, sizeof base, "/tmp/lp_record_test_%d", (int)getpid());
    if (mkdir(base, 0777)) {
        fprintf(stderr, "cannot make %s\n", base);
        return 1;
    }
    if (access("/proc/self/stat", R_OK)) {
        fprintf(stderr, "no /proc: skipped\n");
        return 77;
    }
    cpu_case("i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done", 0.05);
    cpu_case("sleep 0.2", 0);
    cpu_case("awk 'BEGIN { for (i = 0; i < 3000000; i++) s += i }'; i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done",
             0.05);
    test_exit_and_signal();
    test_errors();
    test_attach();
    rmdir(base);
    return t_done("test_record");
}
