/* g10work.c: the workload of Grade10's validation on this machine (bench/grade10/
 * validate.sh, issue 15): T threads run R rounds; in each round every thread computes
 * for a random amount of CPU work (one outlier thread computing `outlier` times as
 * long), waits at a barrier, exchanges B bytes with its peer thread over a loopback TCP
 * connection, writes and fsyncs W bytes to its own file, and waits at a second barrier.
 * Every phase is logged as Grade10 OperationLog lines (epoch nanoseconds, the clock
 * `longpole record` writes) into OPLOG, and the thread's CPU time over each phase
 * (CLOCK_THREAD_CPUTIME_ID) into TRUTH (ground truth: phase,round,thread,start_ns,end_ns,
 * cpu_ns). The work lengths come from a seed, so a rerun with -o 1 does the same work
 * without the outlier, and one with -S the same total work balanced (the outlier's extra
 * work shared evenly by the round's threads: what Grade10's imbalance issue assumes).
 *
 * usage: g10work [-t T] [-r R] [-m MS] [-o OUTLIER] [-S] [-s SEED] [-b BYTES] [-w BYTES]
 *                OPLOG TRUTH DIR
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int T = 4, R = 8, outlier_thread = 1, spread = 0;
static double ms = 60, outlier = 3;
static long bytes = 4 << 20, wbytes = 2 << 20;
static unsigned seed = 1;
static const char *dir;
static FILE *oplog, *truth;
static pthread_mutex_t logmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
static int *sock;            /* [T]: each thread's end of its pair's connection */
static double *work;         /* [R * T]: CPU ms of each compute phase */

static int64_t now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct ph {
    const char *name;
    int round, thread;
    int64_t t0, c0;
} ph;

static void ph_start(ph *p, const char *name, int round, int thread)
{
    p->name = name, p->round = round, p->thread = thread;
    p->t0 = now(CLOCK_REALTIME);
    p->c0 = now(CLOCK_THREAD_CPUTIME_ID);
}

static void ph_end(const ph *p)
{
    int64_t c1 = now(CLOCK_THREAD_CPUTIME_ID), t1 = now(CLOCK_REALTIME);
    pthread_mutex_lock(&logmu);
    fprintf(oplog, "time=%lld, event=start, phase=%s, round=%d, thread=%d\n", (long long)p->t0, p->name, p->round,
            p->thread);
    fprintf(oplog, "time=%lld, event=end, phase=%s, round=%d, thread=%d\n", (long long)t1, p->name, p->round,
            p->thread);
    fprintf(truth, "%s,%d,%d,%lld,%lld,%lld\n", p->name, p->round, p->thread, (long long)p->t0, (long long)t1,
            (long long)(c1 - p->c0));
    pthread_mutex_unlock(&logmu);
}

/* Spin until this thread has used `msec` of CPU. */
static void compute(double msec)
{
    int64_t end = now(CLOCK_THREAD_CPUTIME_ID) + (int64_t)(msec * 1e6);
    volatile uint64_t x = 1;
    while (now(CLOCK_THREAD_CPUTIME_ID) < end)
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
}

static void xfer(int fd, int send, long n)
{
    static __thread char buf[65536];
    while (n > 0) {
        ssize_t k = send ? write(fd, buf, n < (long)sizeof buf ? (size_t)n : sizeof buf)
                         : read(fd, buf, n < (long)sizeof buf ? (size_t)n : sizeof buf);
        if (k <= 0) {
            perror("g10work: socket");
            exit(1);
        }
        n -= k;
    }
}

static void *thread_main(void *arg)
{
    int i = (int)(intptr_t)arg;
    char path[4096];
    snprintf(path, sizeof path, "%s/io.%d", dir, i);
    static __thread char wbuf[65536];
    memset(wbuf, 'x', sizeof wbuf);
    for (int r = 0; r < R; r++) {
        ph p;
        ph_start(&p, "Compute", r, i);
        compute(work[r * T + i]);
        ph_end(&p);
        pthread_barrier_wait(&bar);
        ph_start(&p, "Comm", r, i);
        int even = (i % 2) == 0;
        xfer(sock[i], even, bytes);
        xfer(sock[i], !even, bytes);
        ph_end(&p);
        ph_start(&p, "IO", r, i);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        for (long k = 0; fd >= 0 && k < wbytes; k += (long)sizeof wbuf)
            if (write(fd, wbuf, sizeof wbuf) < 0)
                break;
        if (fd >= 0) {
            fsync(fd);
            close(fd);
        }
        ph_end(&p);
        pthread_barrier_wait(&bar);
    }
    unlink(path);
    return NULL;
}

/* A connected loopback TCP pair. */
static void tcp_pair(int *a, int *b)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) || listen(l, 1) ||
        getsockname(l, (struct sockaddr *)&sa, &sl)) {
        perror("g10work: listen");
        exit(1);
    }
    *a = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(*a, (struct sockaddr *)&sa, sizeof sa) || (*b = accept(l, NULL, NULL)) < 0) {
        perror("g10work: connect");
        exit(1);
    }
    close(l);
}

int main(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "t:r:m:o:s:b:w:S")) != -1)
        switch (c) {
        case 't': T = atoi(optarg); break;
        case 'r': R = atoi(optarg); break;
        case 'm': ms = atof(optarg); break;
        case 'o': outlier = atof(optarg); break;
        case 's': seed = (unsigned)atoi(optarg); break;
        case 'b': bytes = atol(optarg); break;
        case 'w': wbytes = atol(optarg); break;
        case 'S': spread = 1; break;
        default: return 2;
        }
    if (argc - optind != 3 || T < 2 || T % 2 || R < 1) {
        fprintf(stderr, "usage: g10work [-t T (even)] [-r R] [-m MS] [-o OUTLIER] [-s SEED] [-b BYTES] [-w BYTES] "
                        "OPLOG TRUTH DIR\n");
        return 2;
    }
    oplog = fopen(argv[optind], "w");
    truth = fopen(argv[optind + 1], "w");
    dir = argv[optind + 2];
    if (!oplog || !truth) {
        perror("g10work");
        return 1;
    }
    fprintf(truth, "phase,round,thread,start_ns,end_ns,cpu_ns\n");
    work = calloc((size_t)R * T, sizeof *work);
    sock = calloc((size_t)T, sizeof *sock);
    srand(seed);
    for (int r = 0; r < R; r++)
        for (int i = 0; i < T; i++) /* uniform in [0.7, 1.3] x ms; the outlier thread x outlier */
            work[r * T + i] = ms * (0.7 + 0.6 * rand() / (double)RAND_MAX) * (i == outlier_thread ? outlier : 1);
    if (spread) /* the outlier's extra work shared evenly by the round's threads: the same total, balanced */
        for (int r = 0; r < R; r++) {
            double extra = work[r * T + outlier_thread] * (outlier - 1) / outlier;
            work[r * T + outlier_thread] -= extra;
            for (int i = 0; i < T; i++)
                work[r * T + i] += extra / T;
        }
    for (int i = 0; i < T; i += 2)
        tcp_pair(&sock[i], &sock[i + 1]);
    pthread_barrier_init(&bar, NULL, (unsigned)T);
    pthread_t *th = calloc((size_t)T, sizeof *th);
    int64_t t0 = now(CLOCK_REALTIME);
    for (int i = 0; i < T; i++)
        pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i);
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    int64_t t1 = now(CLOCK_REALTIME);
    fclose(oplog);
    fclose(truth);
    printf("g10work: %d threads, %d rounds, outlier x%g: %.3f s\n", T, R, outlier, (double)(t1 - t0) / 1e9);
    return 0;
}
