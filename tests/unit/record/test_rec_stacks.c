/* test_rec_stacks.c: the recorder's `stacks` source (src/record/stacks.c) on a child
 * that does a fixed amount of CPU work and a few synced writes: the source starts perf
 * on it, the child is released, and after it ends the source leaves a stacks.perf.txt
 * the perf-script reader reads, with samples of the child (on and off the CPU).
 * Skips (77) where perf cannot run (not installed, not allowed). */
#include "t.h"
#include "longpole/import/stacks.h"
#include "longpole/record/stacks.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void child(int rd, const char *dir)
{
    char c;
    if (read(rd, &c, 1) != 1)
        _exit(1);
    volatile uint64_t h = 1469598103934665603ULL;
    for (uint64_t i = 0; i < 200000000ULL; i++)
        h = (h ^ i) * 1099511628211ULL;
    char path[512];
    snprintf(path, sizeof path, "%s/child.dat", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char buf[4096] = {1};
    for (int k = 0; k < 20 && fd >= 0; k++)
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf || fdatasync(fd))
            break;
    if (fd >= 0)
        close(fd);
    unlink(path);
    _exit(h == 42);
}

int main(void)
{
    lp_error err;
    if (lp_rec_stacks.probe(&err)) {
        fprintf(stderr, "test_rec_stacks: skipped: %s\n", err.msg);
        return 77;
    }
    char dir[] = "/tmp/lp_rec_stacksXXXXXX";
    if (!mkdtemp(dir))
        return 1;
    int p[2];
    if (pipe(p))
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        child(p[0], dir);
    }
    close(p[0]);
    lp_rec_opts o = {.dir = dir, .period_ns = 1000000};
    void *st = NULL;
    lp_status s = lp_rec_stacks.start(&st, &o, (int)pid, &err);
    if (s) {
        fprintf(stderr, "test_rec_stacks: skipped: perf did not start here: %s\n", err.msg);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return 77;
    }
    CHECK(write(p[1], "x", 1) == 1);
    close(p[1]);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    char *m = NULL;
    size_t mlen = 0;
    FILE *mf = open_memstream(&m, &mlen);
    lp_jsonw jw;
    lp_jsonw_init(&jw, mf, 0);
    lp_jsonw_obj(&jw);
    s = lp_rec_stacks.stop(st, &jw, &err);
    lp_jsonw_obj_end(&jw);
    lp_jsonw_end(&jw);
    fclose(mf);
    CHECK(s == LP_OK);
    if (s)
        fprintf(stderr, "stop: %s\n", err.msg);
    CHECK(m && strstr(m, "stacks.perf.txt") != NULL);
    free(m);
    char txt[600];
    snprintf(txt, sizeof txt, "%s/stacks.perf.txt", dir);
    lp_stacks sk;
    lp_stacks_init(&sk);
    lp_diags ds;
    lp_diags_init(&ds, 4);
    CHECK(lp_stacks_load(&sk, txt, &ds, &err) == LP_OK);
    uint64_t mine = 0, oncpu = 0;
    for (uint64_t i = 0; i < sk.n; i++)
        if (sk.pid[i] == (uint32_t)pid) {
            mine++;
            oncpu += sk.state[i] == LP_SS_ONCPU;
        }
    CHECK(mine > 0);
    CHECK(oncpu > 0);
    CHECK(sk.has_switch);
    lp_stacks_release(&sk);
    lp_diags_release(&ds);
    char path[700];
    snprintf(path, sizeof path, "%s/stacks.perf.log", dir);
    if (!t_failures) {
        unlink(path);
        unlink(txt);
        rmdir(dir);
    } else
        fprintf(stderr, "kept %s\n", dir);
    return t_done("test_rec_stacks");
}
