/* test_cmdcache.c: the server's command cache (serve.h, lp_cmdcache) with /bin/sh as the
 * program: a command runs once and its answer is kept (also for callers asking while it
 * runs); the exit status and the end of stderr come back; a run over the time limit or
 * the output limit is killed, flagged and not kept; callers beyond the waiting limit are
 * refused at once (the server's 503); old answers are evicted beyond the cache size;
 * shutdown ends running children and refuses new runs. Each run appends a line to a
 * counter file, so "ran again" is observed, not inferred. */
#define _GNU_SOURCE
#include "t.h"
#include "longpole/longpole.h"
#include "longpole/serve/serve.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[64], counter[128];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Lines in the counter file: how many runs of commands that count. */
static int runs(void)
{
    FILE *f = fopen(counter, "r");
    int n = 0, c;
    while (f && (c = getc(f)) != EOF)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

/* Run `sh -c SCRIPT` through the cache; the script sees the counter file as $1. */
static lp_status run(lp_cmdcache *c, const char *script, lp_cmdout **res)
{
    const char *args[] = {"-c", script, "sh", counter};
    lp_error err;
    *res = NULL;
    return lp_cmdcache_get(c, args, 4, res, &err);
}

static int out_is(const lp_cmdout *r, const char *want)
{
    return r && r->out && r->out->len == strlen(want) && memcmp(r->out->data, want, r->out->len) == 0;
}

static lp_cmdcache *cache(double timeout, size_t max_output, size_t cache_bytes, unsigned running, unsigned waiting)
{
    lp_cmdcache_opts o;
    memset(&o, 0, sizeof o);
    o.exe = "/bin/sh";
    o.name = "sh";
    o.timeout_s = timeout;
    o.max_output = max_output;
    o.cache_bytes = cache_bytes;
    o.max_running = running;
    o.max_waiting = waiting;
    lp_cmdcache *c = NULL;
    lp_error err;
    if (lp_cmdcache_new(&c, &o, &err))
        fprintf(stderr, "lp_cmdcache_new: %s\n", err.msg);
    return c;
}

static void test_kept_and_status(void)
{
    lp_cmdcache *c = cache(30, 0, 0, 2, 0);
    CHECK(c != NULL);
    if (!c)
        return;
    lp_cmdout *a, *b;
    int r0 = runs();
    CHECK_EQ_I(run(c, "echo x >> \"$1\"; echo hello", &a), LP_OK);
    CHECK(out_is(a, "hello\n"));
    CHECK_EQ_I(a ? a->status : -1, 0);
    CHECK_EQ_I(run(c, "echo x >> \"$1\"; echo hello", &b), LP_OK);
    CHECK(out_is(b, "hello\n"));
    CHECK_EQ_I(runs(), r0 + 1); /* the second answer came from the cache */
    lp_cmdout_unref(a);
    lp_cmdout_unref(b);
    /* a failing command: status and the end of stderr */
    CHECK_EQ_I(run(c, "echo partial; echo 'bad thing' >&2; exit 3", &a), LP_OK);
    CHECK_EQ_I(a ? a->status : -1, 3);
    CHECK(a && strstr(a->err, "bad thing") != NULL);
    CHECK(out_is(a, "partial\n"));
    lp_cmdout_unref(a);
    lp_cmdcache_free(c);
}

typedef struct caller {
    lp_cmdcache *c;
    const char *script;
    lp_status st;
    lp_cmdout *res;
    double done;
} caller;

static void *call(void *arg)
{
    caller *k = arg;
    k->st = run(k->c, k->script, &k->res);
    k->done = now();
    return NULL;
}

/* Callers asking for a command already running wait for that run. */
static void test_shared_run(void)
{
    lp_cmdcache *c = cache(30, 0, 0, 2, 0);
    if (!c)
        return;
    int r0 = runs();
    const char *s = "echo x >> \"$1\"; sleep 0.5; echo shared";
    caller k[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        k[i] = (caller){c, s, LP_OK, NULL, 0};
        pthread_create(&th[i], NULL, call, &k[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_I(k[i].st, LP_OK);
        CHECK(out_is(k[i].res, "shared\n"));
        lp_cmdout_unref(k[i].res);
    }
    CHECK_EQ_I(runs(), r0 + 1);
    lp_cmdcache_free(c);
}

/* Over the time limit: killed, flagged, not kept. Over the output limit: the same. */
static void test_limits(void)
{
    lp_cmdcache *c = cache(0.4, 100000, 0, 2, 0);
    if (!c)
        return;
    lp_cmdout *r;
    int r0 = runs();
    double t0 = now();
    CHECK_EQ_I(run(c, "echo x >> \"$1\"; sleep 20; echo never", &r), LP_OK);
    double took = now() - t0;
    CHECK(r && r->timed_out);
    CHECK(r && r->status >= 128);
    CHECK(took < 10);
    lp_cmdout_unref(r);
    CHECK_EQ_I(run(c, "echo x >> \"$1\"; sleep 20; echo never", &r), LP_OK); /* not kept: runs again */
    CHECK(r && r->timed_out);
    lp_cmdout_unref(r);
    CHECK_EQ_I(runs(), r0 + 2);
    /* 1 MB of output against a 100 kB limit */
    CHECK_EQ_I(run(c, "head -c 1000000 /dev/zero", &r), LP_OK);
    CHECK(r && r->too_big);
    CHECK(r && !r->timed_out);
    CHECK(r && r->out && r->out->len <= 100000 + 65536);
    lp_cmdout_unref(r);
    lp_cmdcache_free(c);
}

/* One running, one waiting: a third caller is refused at once (LP_ERR_LIMIT: "busy"). */
static void test_busy(void)
{
    lp_cmdcache *c = cache(30, 0, 0, 1, 1);
    if (!c)
        return;
    caller a = {c, "sleep 1.5; echo a", LP_OK, NULL, 0}, b = {c, "echo b", LP_OK, NULL, 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, call, &a);
    usleep(300000);
    pthread_create(&tb, NULL, call, &b);
    usleep(300000);
    lp_cmdout *r;
    double t0 = now();
    CHECK_EQ_I(run(c, "echo c", &r), LP_ERR_LIMIT);
    CHECK(now() - t0 < 0.5);
    CHECK(r == NULL);
    /* a caller for the command already running is not counted against the limit */
    CHECK_EQ_I(run(c, "sleep 1.5; echo a", &r), LP_OK);
    CHECK(out_is(r, "a\n"));
    lp_cmdout_unref(r);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK_EQ_I(a.st, LP_OK);
    CHECK_EQ_I(b.st, LP_OK);
    CHECK(out_is(a.res, "a\n") && out_is(b.res, "b\n"));
    CHECK(b.done >= a.done - 0.05); /* b waited for a's slot */
    lp_cmdout_unref(a.res);
    lp_cmdout_unref(b.res);
    lp_cmdcache_free(c);
}

/* Answers beyond cache_bytes in all: the oldest goes first. */
static void test_eviction(void)
{
    lp_cmdcache *c = cache(30, 0, 5000, 2, 0);
    if (!c)
        return;
    const char *s1 = "echo x >> \"$1\"; head -c 2000 /dev/zero", *s2 = "echo y >> \"$1\"; head -c 2000 /dev/zero",
               *s3 = "echo z >> \"$1\"; head -c 2000 /dev/zero";
    lp_cmdout *r;
    int r0 = runs();
    const char *order[] = {s1, s2, s3};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_I(run(c, order[i], &r), LP_OK);
        CHECK(r && r->out && r->out->len == 2000);
        lp_cmdout_unref(r);
    }
    CHECK_EQ_I(runs(), r0 + 3);
    CHECK_EQ_I(run(c, s3, &r), LP_OK); /* newest: kept */
    lp_cmdout_unref(r);
    CHECK_EQ_I(runs(), r0 + 3);
    CHECK_EQ_I(run(c, s1, &r), LP_OK); /* oldest: evicted, runs again */
    lp_cmdout_unref(r);
    CHECK_EQ_I(runs(), r0 + 4);
    lp_cmdcache_free(c);
}

/* Shutdown ends a running child promptly and refuses new runs. */
static void test_shutdown(void)
{
    lp_cmdcache *c = cache(60, 0, 0, 2, 0);
    if (!c)
        return;
    caller a = {c, "sleep 30; echo late", LP_OK, NULL, 0};
    pthread_t ta;
    pthread_create(&ta, NULL, call, &a);
    usleep(300000);
    double t0 = now();
    lp_cmdcache_shutdown(c);
    pthread_join(ta, NULL);
    CHECK(a.done - t0 < 10);
    CHECK(a.st != LP_OK || (a.res && a.res->status >= 128));
    lp_cmdout_unref(a.res);
    lp_cmdout *r;
    CHECK_EQ_I(run(c, "echo after", &r), LP_ERR_IO);
    lp_cmdcache_free(c);
}

/* The program and its argv[0] are the caller's (the library assumes no binary of its
 * own): the child sees the options' name as argv[0], the arguments after it; no
 * program is an argument error. */
static void test_program_and_name(void)
{
    lp_cmdcache_opts o;
    memset(&o, 0, sizeof o);
    lp_cmdcache *c = NULL;
    lp_error err;
    CHECK_EQ_I(lp_cmdcache_new(&c, &o, &err), LP_ERR_ARG);
    CHECK(c == NULL);
    o.exe = "/bin/sh";
    o.name = "lp-test-name";
    if (lp_cmdcache_new(&c, &o, &err) != LP_OK)
        return;
    lp_cmdout *r = NULL;
    const char *args[] = {"-c", "tr '\\000' ' ' < /proc/$$/cmdline"};
    CHECK_EQ_I(lp_cmdcache_get(c, args, 2, &r, &err), LP_OK);
    if (access("/proc/self/cmdline", R_OK) == 0)
        CHECK(r && r->out && r->out->len >= 16 && memcmp(r->out->data, "lp-test-name -c ", 16) == 0);
    lp_cmdout_unref(r);
    lp_cmdcache_free(c);
}

int main(void)
{
    if (access("/bin/sh", X_OK) != 0) {
        printf("test_cmdcache: skipped, no /bin/sh\n");
        return 77;
    }
    snprintf(dir, sizeof dir, "/tmp/lp-cmdcache-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(counter, sizeof counter, "%s/count", dir);
    test_kept_and_status();
    test_shared_run();
    test_limits();
    test_busy();
    test_eviction();
    test_shutdown();
    test_program_and_name();
    unlink(counter);
    rmdir(dir);
    return t_done("test_cmdcache");
}
