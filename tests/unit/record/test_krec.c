/* test_krec.c: the recorder source "kernel" (src/record/kernel.c) around a small
 * workload, as the recorder runs it: the command is started stopped (here: blocked on a
 * pipe), the source started on its pid, the command released, waited for, the source
 * stopped; then kernel.ftrace is read back with the ftrace reader. Checks: the private
 * tracefs instance is gone afterwards (also after a failed start), the manifest names
 * the file, the file reads without a bad line, and it shows the workload: sh exec'd,
 * sleep forked and exec'd, sleep blocking (S) and being woken from a timer interrupt.
 * Skipped (77) when not root or tracefs is not mounted. */
#include "longpole/record/kernel.h"
#include "longpole/base/jsonw.h"
#include "longpole/import/kernel.h"
#include "t.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int instance_exists(void)
{
    char p[128];
    struct stat sb;
    snprintf(p, sizeof p, "/sys/kernel/tracing/instances/longpole-%ld", (long)getpid());
    if (stat(p, &sb) == 0)
        return 1;
    snprintf(p, sizeof p, "/sys/kernel/debug/tracing/instances/longpole-%ld", (long)getpid());
    return stat(p, &sb) == 0;
}

static const char *S(const lp_ktrace *kt, lp_str s) { return s == LP_STR_NONE ? "" : lp_strtab_get(&kt->strs, s); }

int main(void)
{
    const lp_rec_source *src = &lp_rec_source_kernel;
    lp_error err;
    if (src->probe(&err) != LP_OK) {
        fprintf(stderr, "test_krec: SKIP: %s\n", err.msg);
        return 77;
    }
    CHECK_STR(src->name, "kernel");
    char dir[] = "/tmp/lp-krec-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);

    /* a failed start leaves nothing behind */
    lp_rec_opts bad = {.dir = "/proc/no/such/dir"};
    void *state = NULL;
    CHECK(src->start(&state, &bad, 1, &err) != LP_OK);
    CHECK(!instance_exists());

    int gate[2];
    CHECK(pipe(gate) == 0);
    pid_t child = fork();
    if (child == 0) { /* the command, held until the source runs */
        char c;
        close(gate[1]);
        if (read(gate[0], &c, 1) != 1)
            _exit(126);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execl("/bin/sh", "sh", "-c", "sleep 0.05; echo x", (char *)NULL);
        _exit(127);
    }
    close(gate[0]);
    lp_rec_opts o = {.dir = dir};
    lp_status st = src->start(&state, &o, child, &err);
    CHECK(st == LP_OK);
    if (st)
        fprintf(stderr, "start: %s\n", err.msg);
    CHECK(instance_exists() == (st == LP_OK));
    CHECK(write(gate[1], "x", 1) == 1);
    close(gate[1]);
    int ws;
    CHECK(waitpid(child, &ws, 0) == child && WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    char *manifest = NULL;
    size_t mlen = 0;
    FILE *mf = open_memstream(&manifest, &mlen);
    CHECK(mf != NULL);
    lp_jsonw jw;
    lp_jsonw_init(&jw, mf, 0);
    lp_jsonw_obj(&jw);
    if (!st)
        CHECK(src->stop(state, &jw, &err) == LP_OK);
    lp_jsonw_obj_end(&jw);
    lp_jsonw_end(&jw);
    fclose(mf);
    CHECK(!instance_exists());
    CHECK(manifest && strstr(manifest, "\"files\"") && strstr(manifest, "\"kernel.ftrace\"") != NULL);
    CHECK(manifest && strstr(manifest, "\"sched/sched_switch\"") != NULL);
    free(manifest);

    char path[256];
    snprintf(path, sizeof path, "%s/kernel.ftrace", dir);
    const char *paths[] = {path};
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_ktrace *kt = NULL;
    st = lp_ktrace_read(paths, 1, &ds, &kt, &err);
    CHECK(st == LP_OK);
    if (kt) {
        const lp_khost *h = &kt->host[0];
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        CHECK_STR(S(kt, h->name), host);
        CHECK_EQ_I(h->nbad, 0);
        CHECK(h->nev > 10);
        CHECK(h->ncpus >= 1);
        int sh_exec = 0, sleep_exec = 0, forked = 0, blocked = 0, timer_wake = 0;
        int32_t sleep_tid = -1;
        for (uint64_t i = 0; i < h->nev; i++) {
            const lp_kev *e = &h->ev[i];
            if (e->type == LP_KEV_PROCESS_EXEC && e->tid == child && !strcmp(S(kt, e->name), "sh"))
                sh_exec = 1;
            if (e->type == LP_KEV_PROCESS_FORK && e->tid == child)
                forked = 1;
            if (e->type == LP_KEV_PROCESS_EXEC && !strcmp(S(kt, e->name), "sleep"))
                sleep_exec = 1, sleep_tid = e->tid;
        }
        /* sleep blocks (S), and a timer interrupt on some CPU wakes it: the waking
         * event comes between hrtimer_expire_entry and _exit on that CPU */
        int in_timer[1024] = {0};
        for (uint64_t i = 0; i < h->nev && sleep_tid >= 0; i++) {
            const lp_kev *e = &h->ev[i];
            if (e->cpu >= 1024)
                continue;
            if (e->type == LP_KEV_HRTIMER_ENTRY)
                in_timer[e->cpu] = 1;
            if (e->type == LP_KEV_HRTIMER_EXIT)
                in_timer[e->cpu] = 0;
            if (e->type == LP_KEV_SCHED_SWITCH && e->tid == sleep_tid && (e->a & LP_KSTATE_INTERRUPTIBLE))
                blocked = 1;
            if ((e->type == LP_KEV_SCHED_WAKING || e->type == LP_KEV_SCHED_WAKEUP) && e->tid == sleep_tid &&
                in_timer[e->cpu] && blocked)
                timer_wake = 1;
        }
        CHECK(sh_exec);
        CHECK(forked);
        CHECK(sleep_exec);
        CHECK(blocked);
        CHECK(timer_wake);
        fprintf(stderr, "test_krec: %llu events, %llu lost, %u CPUs; sleep %d blocked %d, woken by a timer %d\n",
                (unsigned long long)h->nev, (unsigned long long)h->nlost, h->ncpus, sleep_tid, blocked, timer_wake);
        lp_ktrace_free(kt);
    }
    lp_diags_release(&ds);
    unlink(path);
    rmdir(dir);
    return t_done("test_krec");
}
