/* cpwork.c: the CrystalPerf validation workload: a small dataflow job with a DAG of
 * stages that stress one resource each, which writes its own trace (.lpt, CLOCK_MONOTONIC
 * ns, so it lines up with `perf record -k mono` samples).
 *
 *   stage "compress" (CPU):  K tasks, each deflates B bytes of generated data and hashes it;
 *   stage "persist"  (disk): K tasks, each writes its share in 64 KiB chunks, fdatasync each;
 *   stage "ship"     (net):  K tasks, each sends its share over TCP to a sink;
 *   stage "reduce":          one sequential task on the coordinator (hashing all results).
 *
 * The coordinator submits a stage's tasks to a queue served by a pool of T threads once
 * the previous stage has finished (a barrier, as Spark's DAG scheduler); every task is a
 * launch message (coordinator -> pool thread, sent when queued, received when taken) and
 * a result message back. Workers carry tid= and pool= attributes, tasks task= and stage=,
 * disk and network tasks the bytes they moved (disk_bytes=, net_bytes=).
 *
 * Modes:
 *   cpwork run [--threads T] [--tasks K] [--cpu-mb M] [--disk-mb M] [--net-mb M]
 *              [--stages cpu,disk,net,reduce] [--dir D] [--sink HOST:PORT] [--trace F]
 *   cpwork sink --port P [--rate BYTES_PER_S]   read and discard (optionally slowly)
 * Bench and fixture driver only: not part of the library.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define MAXT 64
#define MAXK 4096

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *m)
{
    perror(m);
    exit(1);
}

/* ---- options -------------------------------------------------------------------------- */

static int nthreads = 2, ntasks = 8;
static double cpu_mb = 4, disk_mb = 4, net_mb = 4;
static const char *stages = "cpu,disk,net,reduce", *dir = "/tmp", *sink = NULL, *trace_path = "cpwork.lpt";

/* ---- the trace ------------------------------------------------------------------------ */

typedef struct rec {
    char line[200];
} rec;
static rec *recs;
static size_t nrecs, caprecs;
static pthread_mutex_t rec_mu = PTHREAD_MUTEX_INITIALIZER;

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...)
{
    pthread_mutex_lock(&rec_mu);
    if (nrecs == caprecs) {
        caprecs = caprecs ? caprecs * 2 : 1024;
        recs = realloc(recs, caprecs * sizeof *recs);
        if (!recs)
            die("realloc");
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(recs[nrecs++].line, sizeof recs[0].line, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&rec_mu);
}

/* ---- the work of a task ----------------------------------------------------------------- */

static unsigned long fnv(const unsigned char *p, size_t n, unsigned long h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211UL;
    return h;
}

__attribute__((noinline)) static unsigned long compress_block(int task)
{
    size_t n = (size_t)(cpu_mb * 1048576);
    unsigned char *in = malloc(n), *out;
    uLongf outn = compressBound(n);
    out = malloc(outn);
    if (!in || !out)
        die("malloc");
    uint32_t x = 2463534242u + (uint32_t)task;
    for (size_t i = 0; i < n; i++) { /* compressible but not trivial */
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        in[i] = (unsigned char)('a' + (x % 7));
    }
    if (compress2(out, &outn, in, n, 6) != Z_OK)
        die("compress2");
    unsigned long h = fnv(in, n, 1469598103934665603UL);
    h = fnv(out, outn, h);
    free(in);
    free(out);
    return h;
}

__attribute__((noinline)) static unsigned long persist_block(int task)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cpwork.%d.%d.dat", dir, (int)getpid(), task);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open");
    static __thread unsigned char buf[65536];
    memset(buf, task, sizeof buf);
    size_t n = (size_t)(disk_mb * 1048576);
    for (size_t done = 0; done < n; done += sizeof buf) {
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            die("write");
        if (fdatasync(fd))
            die("fdatasync");
    }
    close(fd);
    unlink(path);
    return n;
}

__attribute__((noinline)) static unsigned long ship_block(int task)
{
    if (!sink)
        return 0;
    char host[64];
    const char *colon = strrchr(sink, ':');
    if (!colon || (size_t)(colon - sink) >= sizeof host)
        die("--sink HOST:PORT");
    memcpy(host, sink, (size_t)(colon - sink));
    host[colon - sink] = 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        die("sink address");
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a))
        die("connect");
    static __thread unsigned char buf[65536];
    memset(buf, task, sizeof buf);
    size_t n = (size_t)(net_mb * 1048576);
    for (size_t done = 0; done < n;) {
        ssize_t k = send(s, buf, sizeof buf < n - done ? sizeof buf : n - done, 0);
        if (k <= 0)
            die("send");
        done += (size_t)k;
    }
    shutdown(s, SHUT_WR);
    char c;
    while (read(s, &c, 1) > 0) /* the sink closes once it has read everything */
        ;
    close(s);
    return n;
}

__attribute__((noinline)) static unsigned long reduce_all(unsigned long *res, int n)
{
    /* a sequential pass: hash a buffer proportional to the job */
    size_t len = (size_t)(cpu_mb * 1048576);
    unsigned char *b = malloc(len);
    if (!b)
        die("malloc");
    for (size_t i = 0; i < len; i++)
        b[i] = (unsigned char)(i * 31 + (size_t)res[i % (size_t)n]);
    unsigned long h = 0;
    for (int r = 0; r < 4; r++)
        h = fnv(b, len, h + (unsigned long)r);
    free(b);
    return h;
}

/* ---- the pool ---------------------------------------------------------------------------- */

typedef struct task {
    int id, stage;
    const char *op;
    int64_t queued;
    unsigned long result;
} task;

static task q[MAXK];
static int qhead, qtail, done_count, quitting;
static int64_t last_result; /* when the coordinator received the latest result (under mu) */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER, dcond = PTHREAD_COND_INITIALIZER;

static void *pool_main(void *arg)
{
    int k = (int)(intptr_t)arg;
    emit("W pool.%d tid=%ld pool=pool", k, (long)syscall(SYS_gettid));
    int64_t last_end = -1; /* when this thread finished its previous task */
    for (;;) {
        pthread_mutex_lock(&mu);
        while (qhead == qtail && !quitting)
            pthread_cond_wait(&qcond, &mu);
        if (qhead == qtail) {
            pthread_mutex_unlock(&mu);
            return NULL;
        }
        task *t = &q[qhead++ % MAXK];
        pthread_mutex_unlock(&mu);
        int64_t s = now_ns();
        /* a task queued before this thread was free waited for a slot, not for a message:
         * the thread was busy (its previous task, then taking this one: `scheduling`, part
         * of this task as a Spark task's scheduler delay is, so that a replay keeps it in
         * front of the task on the task's slot) */
        int64_t got = s; /* the launch's receive: where this task's activities begin */
        if (last_end >= 0 && t->queued <= last_end) {
            emit("A pool.%d %lld %lld scheduling dequeue task=%d stage=%d", k, (long long)last_end, (long long)s,
                 t->id, t->stage);
            got = last_end;
        }
        emit("M coord %lld pool.%d %lld id=L%d", (long long)t->queued, k, (long long)got, t->id);
        unsigned long r = t->stage == 1 ? compress_block(t->id) : t->stage == 2 ? persist_block(t->id)
                                                                                : ship_block(t->id);
        int64_t e = now_ns();
        if (t->stage == 2 || t->stage == 3) /* the bytes it moved: what a shared device's model needs */
            emit("A pool.%d %lld %lld processing %s task=%d stage=%d %s_bytes=%lu", k, (long long)s, (long long)e,
                 t->op, t->id, t->stage, t->stage == 2 ? "disk" : "net", r);
        else
            emit("A pool.%d %lld %lld processing %s task=%d stage=%d", k, (long long)s, (long long)e, t->op, t->id,
                 t->stage);
        pthread_mutex_lock(&mu);
        t->result = r;
        done_count++;
        int64_t d = now_ns();
        emit("M pool.%d %lld coord %lld id=R%d", k, (long long)e, (long long)d, t->id);
        last_result = d;
        last_end = e;
        pthread_cond_signal(&dcond);
        pthread_mutex_unlock(&mu);
    }
}

static unsigned long results[MAXK];

/* One stage on the coordinator: `scheduling submit` (queueing the tasks: the launch
 * messages leave from it), the barrier (the coordinator is blocked until the last result
 * arrives: a gap ending at that receive, `waiting` in the trace), then `scheduling wake`
 * from that receive until the coordinator runs again. The coordinator's activities join
 * end to end from *cursor, so that nothing of its time is an `unknown` gap a replay would
 * have to keep at its recorded length. */
static void run_stage(int stage, const char *op, int *next_id, int64_t *cursor)
{
    int first = *next_id;
    pthread_mutex_lock(&mu);
    done_count = 0;
    for (int i = 0; i < ntasks; i++) {
        task *t = &q[qtail++ % MAXK];
        t->id = (*next_id)++, t->stage = stage, t->op = op, t->queued = now_ns();
    }
    int64_t submitted = now_ns();
    emit("A coord %lld %lld scheduling submit stage=%d", (long long)*cursor, (long long)submitted, stage);
    pthread_cond_broadcast(&qcond);
    while (done_count < ntasks)
        pthread_cond_wait(&dcond, &mu);
    int64_t woke = now_ns();
    if (last_result > submitted)
        emit("A coord %lld %lld scheduling wake stage=%d", (long long)last_result, (long long)woke, stage);
    *cursor = woke;
    for (int i = 0; i < ntasks; i++)
        results[(first + i) % MAXK] ^= q[(first + i) % MAXK].result;
    pthread_mutex_unlock(&mu);
}

static int run(void)
{
    if (ntasks < 1 || ntasks > MAXK / 4 || nthreads < 1 || nthreads > MAXT)
        die("bad --tasks/--threads");
    int64_t t0 = now_ns();
    emit("W coord tid=%ld", (long)syscall(SYS_gettid));
    pthread_t th[MAXT];
    for (int k = 0; k < nthreads; k++)
        if (pthread_create(&th[k], NULL, pool_main, (void *)(intptr_t)k))
            die("pthread_create");
    int id = 0;
    int64_t cursor = now_ns();
    if (strstr(stages, "cpu"))
        run_stage(1, "compress", &id, &cursor);
    if (strstr(stages, "disk"))
        run_stage(2, "persist", &id, &cursor);
    if (strstr(stages, "net"))
        run_stage(3, "ship", &id, &cursor);
    if (strstr(stages, "reduce")) {
        int64_t s = cursor;
        unsigned long h = reduce_all(results, id ? id : 1);
        int64_t e = now_ns();
        emit("A coord %lld %lld processing reduce stage=4 h=%lu", (long long)s, (long long)e, h % 1000);
    }
    pthread_mutex_lock(&mu);
    quitting = 1;
    pthread_cond_broadcast(&qcond);
    pthread_mutex_unlock(&mu);
    for (int k = 0; k < nthreads; k++)
        pthread_join(th[k], NULL);
    int64_t t1 = now_ns();
    FILE *f = fopen(trace_path, "w");
    if (!f)
        die(trace_path);
    fprintf(f, "longpole-trace 1\n# cpwork: threads=%d tasks=%d cpu_mb=%g disk_mb=%g net_mb=%g stages=%s\n", nthreads,
            ntasks, cpu_mb, disk_mb, net_mb, stages);
    fprintf(f, "# wall_ns %lld\n", (long long)(t1 - t0));
    for (size_t i = 0; i < nrecs; i++)
        fprintf(f, "%s\n", recs[i].line);
    fclose(f);
    printf("wall_ns %lld\n", (long long)(t1 - t0));
    return 0;
}

/* ---- the sink ------------------------------------------------------------------------------ */

static void *sink_conn(void *arg)
{
    int c = (int)(intptr_t)arg;
    static __thread char buf[65536];
    while (read(c, buf, sizeof buf) > 0)
        ;
    close(c);
    return NULL;
}

__attribute__((noreturn)) static void sink_main(int port, double rate)
{
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 64))
        die("sink bind/listen");
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        if (rate > 0) { /* slow reader: a chunk, then sleep to keep to the rate */
            char buf[16384];
            ssize_t k;
            while ((k = read(c, buf, sizeof buf)) > 0) {
                struct timespec d = {0, (long)(1e9 * (double)k / rate)};
                nanosleep(&d, NULL);
            }
            close(c);
        } else {
            pthread_t th;
            if (pthread_create(&th, NULL, sink_conn, (void *)(intptr_t)c) == 0)
                pthread_detach(th);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2)
        goto usage;
    int port = 0;
    double rate = 0;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            goto usage;
        i++;
        if (!strcmp(o, "--threads"))
            nthreads = atoi(v);
        else if (!strcmp(o, "--tasks"))
            ntasks = atoi(v);
        else if (!strcmp(o, "--cpu-mb"))
            cpu_mb = atof(v);
        else if (!strcmp(o, "--disk-mb"))
            disk_mb = atof(v);
        else if (!strcmp(o, "--net-mb"))
            net_mb = atof(v);
        else if (!strcmp(o, "--stages"))
            stages = v;
        else if (!strcmp(o, "--dir"))
            dir = v;
        else if (!strcmp(o, "--sink"))
            sink = v;
        else if (!strcmp(o, "--trace"))
            trace_path = v;
        else if (!strcmp(o, "--port"))
            port = atoi(v);
        else if (!strcmp(o, "--rate"))
            rate = atof(v);
        else
            goto usage;
    }
    if (!strcmp(argv[1], "run"))
        return run();
    if (!strcmp(argv[1], "sink") && port > 0)
        sink_main(port, rate);
usage:
    fprintf(stderr, "usage: cpwork run [--threads T] [--tasks K] [--cpu-mb M] [--disk-mb M] [--net-mb M]\n"
                    "                  [--stages cpu,disk,net,reduce] [--dir D] [--sink HOST:PORT] [--trace F]\n"
                    "       cpwork sink --port P [--rate BYTES_PER_S]\n");
    return 2;
}
