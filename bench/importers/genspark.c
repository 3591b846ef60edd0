/* genspark.c: a large Spark event log (JSON lines, as Spark 3's JsonProtocol writes
 * them) for the importer benchmark (bench/importers/run.sh).
 *
 * usage: genspark BYTES SEED > app.log
 * An application on 16 executors of 8 cores running jobs of 2-4 stages of 200-800
 * tasks each until about BYTES bytes are written: TaskStart and TaskEnd per task (the
 * TaskEnd with full Task Info, Task Metrics and the Accumulables list Spark 3 writes,
 * about 3 KB), stage and job events, executor metrics updates now and then. Tasks are
 * placed on free cores in time order, so the log is consistent. Deterministic for a
 * seed. Prints "events N tasks M" on stderr.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static uint64_t uniform(uint64_t n) { return next() % n; }

static uint64_t written, nevents, ntasks;

static void line(const char *s, int n)
{
    fwrite(s, 1, (size_t)n, stdout);
    written += (uint64_t)n;
    nevents++;
}

#define EXEC 16
#define CORES 8

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: genspark BYTES SEED\n");
        return 2;
    }
    uint64_t target = strtoull(argv[1], NULL, 10);
    rng = strtoull(argv[2], NULL, 10) * 0x9E3779B97F4A7C15ull + 7;
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    static char b[16384];
    int n;
    uint64_t t = UINT64_C(1700000000000);
    n = snprintf(b, sizeof b, "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.4.1\"}\n");
    line(b, n);
    n = snprintf(b, sizeof b,
                 "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"bench\",\"App ID\":\"app-1\",\"Timestamp\":%" PRIu64
                 ",\"User\":\"spark\"}\n",
                 t);
    line(b, n);
    for (int e = 0; e < EXEC; e++) {
        n = snprintf(b, sizeof b,
                     "{\"Event\":\"SparkListenerExecutorAdded\",\"Timestamp\":%" PRIu64 ",\"Executor ID\":\"%d\",\"Executor "
                     "Info\":{\"Host\":\"worker-%02d.cluster\",\"Total Cores\":%d,\"Log Urls\":{\"stdout\":\"http://worker-%02d:8042/"
                     "stdout\",\"stderr\":\"http://worker-%02d:8042/stderr\"},\"Attributes\":{},\"Resources\":{},"
                     "\"Resource Profile Id\":0}}\n",
                     t + 100, e + 1, e, CORES, e, e);
        line(b, n);
    }
    uint64_t core_free[EXEC][CORES];
    for (int e = 0; e < EXEC; e++)
        for (int c = 0; c < CORES; c++)
            core_free[e][c] = t + 1000;
    uint64_t job = 0, stage = 0, task = 0, acc = 100;
    t += 1000;
    while (written < target) {
        int nst = 2 + (int)uniform(3);
        n = snprintf(b, sizeof b, "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":%" PRIu64 ",\"Submission Time\":%" PRIu64
                                  ",\"Stage Infos\":[",
                     job, t);
        for (int s = 0; s < nst; s++)
            n += snprintf(b + n, sizeof b - (size_t)n,
                          "%s{\"Stage ID\":%" PRIu64 ",\"Stage Attempt ID\":0,\"Stage Name\":\"%s at Job%" PRIu64
                          ".scala:%d\",\"Number of Tasks\":400,\"Parent IDs\":[%s],\"Details\":\"\",\"Accumulables\":[]}",
                          s ? "," : "", stage + (uint64_t)s, s == nst - 1 ? "collect" : "map", job, 10 + s, s ? "" : "");
        n += snprintf(b + n, sizeof b - (size_t)n, "],\"Stage IDs\":[");
        for (int s = 0; s < nst; s++)
            n += snprintf(b + n, sizeof b - (size_t)n, "%s%" PRIu64, s ? "," : "", stage + (uint64_t)s);
        n += snprintf(b + n, sizeof b - (size_t)n, "],\"Properties\":{\"spark.job.description\":\"bench job\"}}\n");
        line(b, n);
        for (int s = 0; s < nst && written < target; s++, stage++) {
            uint64_t submit = t + 5 + uniform(20);
            int ntk = 200 + (int)uniform(600);
            n = snprintf(b, sizeof b,
                         "{\"Event\":\"SparkListenerStageSubmitted\",\"Stage Info\":{\"Stage ID\":%" PRIu64
                         ",\"Stage Attempt ID\":0,\"Stage Name\":\"%s at Job%" PRIu64 ".scala:%d\",\"Number of Tasks\":%d,"
                         "\"Parent IDs\":[],\"Submission Time\":%" PRIu64 ",\"Accumulables\":[]}}\n",
                         stage, s == nst - 1 ? "collect" : "map", job, 10 + s, ntk, submit);
            line(b, n);
            uint64_t last = submit;
            for (int k = 0; k < ntk; k++, task++) {
                /* the earliest free core */
                int be = 0, bc = 0;
                for (int e = 0; e < EXEC; e++)
                    for (int c = 0; c < CORES; c++)
                        if (core_free[e][c] < core_free[be][bc])
                            be = e, bc = c;
                uint64_t launch = core_free[be][bc] > submit ? core_free[be][bc] : submit;
                launch += uniform(3);
                uint64_t deser = 1 + uniform(20), run = 50 + uniform(2000), gc = uniform(run / 10 + 1),
                         ser = uniform(3), fetch = s ? uniform(run / 5 + 1) : 0;
                uint64_t finish = launch + deser + run + ser + 2 + uniform(10);
                uint64_t swrite_ns = s == nst - 1 ? 0 : uniform(run * 200000 + 1);
                core_free[be][bc] = finish - uniform(3);
                if (finish > last)
                    last = finish;
                n = snprintf(b, sizeof b,
                             "{\"Event\":\"SparkListenerTaskStart\",\"Stage ID\":%" PRIu64 ",\"Stage Attempt ID\":0,\"Task Info\":"
                             "{\"Task ID\":%" PRIu64 ",\"Index\":%d,\"Attempt\":0,\"Partition ID\":%d,\"Launch Time\":%" PRIu64
                             ",\"Executor ID\":\"%d\",\"Host\":\"worker-%02d.cluster\",\"Locality\":\"PROCESS_LOCAL\","
                             "\"Speculative\":false,\"Getting Result Time\":0,\"Finish Time\":0,\"Failed\":false,\"Killed\":false,"
                             "\"Accumulables\":[]}}\n",
                             stage, task, k, k, launch, be + 1, be);
                line(b, n);
                uint64_t rsize = 1000 + uniform(5000);
                n = snprintf(b, sizeof b,
                             "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":%" PRIu64 ",\"Stage Attempt ID\":0,\"Task Type\":\"%s\","
                             "\"Task End Reason\":{\"Reason\":\"Success\"},\"Task Info\":{\"Task ID\":%" PRIu64 ",\"Index\":%d,"
                             "\"Attempt\":0,\"Partition ID\":%d,\"Launch Time\":%" PRIu64 ",\"Executor ID\":\"%d\",\"Host\":"
                             "\"worker-%02d.cluster\",\"Locality\":\"PROCESS_LOCAL\",\"Speculative\":false,\"Getting Result Time\":0,"
                             "\"Finish Time\":%" PRIu64 ",\"Failed\":false,\"Killed\":false,\"Accumulables\":["
                             "{\"ID\":%" PRIu64 ",\"Name\":\"internal.metrics.executorDeserializeTime\",\"Update\":%" PRIu64 ",\"Value\":%" PRIu64 ",\"Internal\":true,\"Count Failed Values\":true},"
                             "{\"ID\":%" PRIu64 ",\"Name\":\"internal.metrics.executorDeserializeCpuTime\",\"Update\":%" PRIu64 ",\"Value\":%" PRIu64 ",\"Internal\":true,\"Count Failed Values\":true},"
                             "{\"ID\":%" PRIu64 ",\"Name\":\"internal.metrics.executorRunTime\",\"Update\":%" PRIu64 ",\"Value\":%" PRIu64 ",\"Internal\":true,\"Count Failed Values\":true},"
                             "{\"ID\":%" PRIu64 ",\"Name\":\"internal.metrics.executorCpuTime\",\"Update\":%" PRIu64 ",\"Value\":%" PRIu64 ",\"Internal\":true,\"Count Failed Values\":true},"
                             "{\"ID\":%" PRIu64 ",\"Name\":\"internal.metrics.resultSize\",\"Update\":%" PRIu64 ",\"Value\":%" PRIu64 ",\"Internal\":true,\"Count Failed Values\":true},"
                             "{\"ID\":%" PRIu64 ",\"Name\":\"internal.metrics.jvmGCTime\",\"Update\":%" PRIu64 ",\"Value\":%" PRIu64 ",\"Internal\":true,\"Count Failed Values\":true},"
                             "{\"ID\":%" PRIu64 ",\"Name\":\"internal.metrics.resultSerializationTime\",\"Update\":%" PRIu64 ",\"Value\":%" PRIu64 ",\"Internal\":true,\"Count Failed Values\":true}"
                             "]},\"Task Executor Metrics\":{\"JVMHeapMemory\":%" PRIu64 ",\"JVMOffHeapMemory\":0,\"OnHeapExecutionMemory\":0},"
                             "\"Task Metrics\":{\"Executor Deserialize Time\":%" PRIu64 ",\"Executor Deserialize CPU Time\":%" PRIu64
                             ",\"Executor Run Time\":%" PRIu64 ",\"Executor CPU Time\":%" PRIu64 ",\"Peak Execution Memory\":0,"
                             "\"Result Size\":%" PRIu64 ",\"JVM GC Time\":%" PRIu64 ",\"Result Serialization Time\":%" PRIu64
                             ",\"Memory Bytes Spilled\":0,\"Disk Bytes Spilled\":0,\"Shuffle Read Metrics\":{\"Remote Blocks Fetched\":%" PRIu64
                             ",\"Local Blocks Fetched\":%" PRIu64 ",\"Fetch Wait Time\":%" PRIu64 ",\"Remote Bytes Read\":%" PRIu64
                             ",\"Remote Bytes Read To Disk\":0,\"Local Bytes Read\":%" PRIu64 ",\"Total Records Read\":%" PRIu64
                             "},\"Shuffle Write Metrics\":{\"Shuffle Bytes Written\":%" PRIu64 ",\"Shuffle Write Time\":%" PRIu64
                             ",\"Shuffle Records Written\":%" PRIu64 "},\"Input Metrics\":{\"Bytes Read\":%" PRIu64
                             ",\"Records Read\":%" PRIu64 "},\"Output Metrics\":{\"Bytes Written\":0,\"Records Written\":0},"
                             "\"Updated Blocks\":[]}}\n",
                             stage, s == nst - 1 ? "ResultTask" : "ShuffleMapTask", task, k, k, launch, be + 1, be, finish,
                             acc, deser, deser, acc + 1, deser * 900000, deser * 900000, acc + 2, run, run, acc + 3,
                             run * 950000, run * 950000, acc + 4, rsize, rsize, acc + 5, gc, gc, acc + 6, ser, ser,
                             uniform(1u << 30), deser, deser * 900000, run, run * 950000, rsize, gc, ser, uniform(100),
                             uniform(100), fetch, uniform(1u << 26), uniform(1u << 26), uniform(100000), uniform(1u << 26),
                             swrite_ns, uniform(100000), uniform(1u << 28), uniform(1000000));
                line(b, n);
                ntasks++;
            }
            n = snprintf(b, sizeof b,
                         "{\"Event\":\"SparkListenerStageCompleted\",\"Stage Info\":{\"Stage ID\":%" PRIu64
                         ",\"Stage Attempt ID\":0,\"Stage Name\":\"%s at Job%" PRIu64 ".scala:%d\",\"Number of Tasks\":%d,"
                         "\"Parent IDs\":[],\"Submission Time\":%" PRIu64 ",\"Completion Time\":%" PRIu64 ",\"Accumulables\":[]}}\n",
                         stage, s == nst - 1 ? "collect" : "map", job, 10 + s, ntk, submit, last + 2);
            line(b, n);
            t = last + 3;
            if (uniform(4) == 0) {
                n = snprintf(b, sizeof b,
                             "{\"Event\":\"SparkListenerStageExecutorMetrics\",\"Executor ID\":\"%d\",\"Stage ID\":%" PRIu64
                             ",\"Stage Attempt ID\":0,\"Executor Metrics\":{\"JVMHeapMemory\":%" PRIu64 "}}\n",
                             (int)uniform(EXEC) + 1, stage, uniform(1u << 30));
                line(b, n);
            }
            for (int e = 0; e < EXEC; e++)
                for (int c = 0; c < CORES; c++)
                    if (core_free[e][c] < t)
                        core_free[e][c] = t;
        }
        n = snprintf(b, sizeof b,
                     "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":%" PRIu64 ",\"Completion Time\":%" PRIu64
                     ",\"Job Result\":{\"Result\":\"JobSucceeded\"}}\n",
                     job, t + 1);
        line(b, n);
        job++;
        t += 10 + uniform(100);
    }
    n = snprintf(b, sizeof b, "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":%" PRIu64 "}\n", t + 100);
    line(b, n);
    fflush(stdout);
    fprintf(stderr, "events %" PRIu64 " tasks %" PRIu64 "\n", nevents, ntasks);
    return 0;
}
