/* test_spark.c: the Spark event-log importer (src/import/spark.c): the layout of a
 * task's sub-activities, the driver's activities and messages, failures and bad records
 * reported with their positions, rolling (v2) directories and their file order, the
 * directory expansion of lp_trace_load (src/load/inputs.c), and a differential test of
 * the greedy slot assignment (SnailTrail §4.2) against a naive twin on random tasks. */
#include "longpole/longpole.h"
#include "longpole/import/spark.h"
#include "longpole/load/inputs.h"
#include "t.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static lp_diags DS;
static int ds_init;

static lp_trace *imp(const char *doc)
{
    if (ds_init)
        lp_diags_release(&DS);
    ds_init = 1;
    lp_diags_init(&DS, 500);
    lp_error err;
    lp_builder *b;
    if (lp_builder_new(&b, &DS, NULL, &err))
        return NULL;
    lp_input *in;
    if (lp_input_open_mem(&in, doc, strlen(doc), "app.log", &err)) {
        lp_builder_free(b);
        return NULL;
    }
    lp_status st = lp_builder_source(b, "app.log", &err);
    if (!st)
        st = lp_importer_find("spark")->read(b, in, NULL, &err);
    lp_input_close(in);
    if (st) {
        lp_builder_free(b);
        return NULL;
    }
    lp_trace *t;
    if (lp_builder_finish(b, &t, &err))
        return NULL;
    return t;
}

static char *diags_text(void)
{
    static char buf[32768];
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < DS.nkept && o < sizeof buf; i++) {
        char line[1024];
        lp_diag_format(line, sizeof line, &DS.kept[i]);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\n", line);
    }
    return buf;
}

#define HAS_DIAG(frag)                                                                                     \
    do {                                                                                                   \
        t_checks++;                                                                                        \
        if (!strstr(diags_text(), frag)) {                                                                 \
            t_failures++;                                                                                  \
            fprintf(stderr, "%s:%d: diagnostics lack \"%s\":\n%s", __FILE__, __LINE__, frag, diags_text()); \
        }                                                                                                  \
    } while (0)

static const char *attr(const lp_trace *t, uint32_t list, const char *key)
{
    lp_str s = lp_trace_attr(t, list, key);
    return s == LP_STR_NONE ? NULL : lp_trace_str(t, s);
}

static const char *app =
    "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.3.0\"}\n"
    "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"t\",\"App ID\":\"app-1\",\"Timestamp\":1000}\n"
    "{\"Event\":\"SparkListenerExecutorAdded\",\"Timestamp\":1001,\"Executor ID\":\"1\",\"Executor Info\":{\"Host\":"
    "\"h1\",\"Total Cores\":2}}\n"
    "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":0,\"Submission Time\":1010,\"Stage Infos\":[{\"Stage ID\":0,"
    "\"Stage Attempt ID\":0,\"Stage Name\":\"map at A.scala:1\"},{\"Stage ID\":1,\"Stage Attempt ID\":0,\"Stage "
    "Name\":\"collect at A.scala:2\",\"Parent IDs\":[0]}],\"Stage IDs\":[0,1]}\n"
    "{\"Event\":\"SparkListenerStageSubmitted\",\"Stage Info\":{\"Stage ID\":0,\"Stage Attempt ID\":0,\"Stage "
    "Name\":\"map at A.scala:1\",\"Submission Time\":1015}}\n"
    "{\"Event\":\"SparkListenerTaskStart\",\"Stage ID\":0,\"Stage Attempt ID\":0,\"Task Info\":{\"Task ID\":0,"
    "\"Index\":0,\"Attempt\":0,\"Launch Time\":1020,\"Executor ID\":\"1\",\"Host\":\"h1\"}}\n"
    "{\"Event\":\"SparkListenerTaskStart\",\"Stage ID\":0,\"Stage Attempt ID\":0,\"Task Info\":{\"Task ID\":1,"
    "\"Index\":1,\"Attempt\":0,\"Launch Time\":1021,\"Executor ID\":\"1\",\"Host\":\"h1\"}}\n"
    "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Stage Attempt ID\":0,\"Task End Reason\":{\"Reason\":"
    "\"Success\"},\"Task Info\":{\"Task ID\":0,\"Index\":0,\"Attempt\":0,\"Launch Time\":1020,\"Executor ID\":\"1\","
    "\"Host\":\"h1\",\"Getting Result Time\":0,\"Finish Time\":1100},\"Task Metrics\":{\"Executor Deserialize "
    "Time\":10,\"Executor Run Time\":60,\"JVM GC Time\":5,\"Result Serialization Time\":2,\"Result Size\":100,"
    "\"Shuffle Read Metrics\":{\"Fetch Wait Time\":0},\"Shuffle Write Metrics\":{\"Shuffle Write Time\":3000000}}}\n"
    "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Stage Attempt ID\":0,\"Task End Reason\":{\"Reason\":"
    "\"ExceptionFailure\",\"Class Name\":\"java.lang.RuntimeException\",\"Description\":\"boom\"},\"Task Info\":"
    "{\"Task ID\":1,\"Index\":1,\"Attempt\":0,\"Launch Time\":1021,\"Executor ID\":\"1\",\"Finish Time\":1050}}\n"
    "{\"Event\":\"SparkListenerStageCompleted\",\"Stage Info\":{\"Stage ID\":0,\"Stage Attempt ID\":0,\"Stage "
    "Name\":\"map at A.scala:1\",\"Submission Time\":1015,\"Completion Time\":1105}}\n"
    "{\"Event\":\"SparkListenerStageSubmitted\",\"Stage Info\":{\"Stage ID\":1,\"Stage Attempt ID\":0,\"Submission "
    "Time\":1110}}\n"
    "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":1,\"Stage Attempt ID\":0,\"Task End Reason\":{\"Reason\":"
    "\"Success\"},\"Task Info\":{\"Task ID\":2,\"Index\":0,\"Attempt\":0,\"Launch Time\":1112,\"Executor ID\":\"1\","
    "\"Getting Result Time\":1190,\"Finish Time\":1200},\"Task Metrics\":{\"Executor Deserialize Time\":3,"
    "\"Executor Run Time\":70,\"Result Serialization Time\":1,\"Shuffle Read Metrics\":{\"Fetch Wait Time\":20}}}\n"
    "{\"Event\":\"SparkListenerStageCompleted\",\"Stage Info\":{\"Stage ID\":1,\"Stage Attempt ID\":0,\"Submission "
    "Time\":1110,\"Completion Time\":1202,\"Failure Reason\":\"Job aborted\\nstack\"}}\n"
    "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":0,\"Completion Time\":1205,\"Job Result\":{\"Result\":"
    "\"JobSucceeded\"}}\n"
    "{\"Event\":\"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart\",\"executionId\":0}\n"
    "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":1300}\n";

#define MS 1000000LL

static void test_layout(void)
{
    lp_trace *t = imp(app);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_I(DS.nerrors, 0);
    HAS_DIAG("app.log:9: warning: byte");
    HAS_DIAG("task 1 (stage 0.0) did not succeed: ExceptionFailure: \"java.lang.RuntimeException\" \"boom\"");
    HAS_DIAG("app.log:12: warning: byte");
    HAS_DIAG("SparkListenerTaskEnd: task 2 ends without a SparkListenerTaskStart; its Task Info is used");
    HAS_DIAG("stage 1.0 failed: Job aborted [import]");
    HAS_DIAG("spark: 16 events read: 3 tasks (1 not successful) on 2 slots of 1 executors, 2 stage attempts (1 failed), "
             "1 jobs");
    /* task 0 on slot 0: laid out backwards from its finish */
    uint32_t w = lp_trace_find_worker(t, "executor.1.0");
    CHECK(w != LP_NONE32);
    if (w == LP_NONE32) {
        lp_trace_free(t);
        return;
    }
    CHECK_STR(attr(t, t->wattr[w], "host"), "h1");
    CHECK_STR(attr(t, t->wattr[w], "cores"), "2");
    static const struct {
        int64_t s, e;
        const char *type;
    } want[] = {
        {1020, 1028, "scheduling"}, {1028, 1038, "deserialization"}, {1038, 1090, "processing"}, {1090, 1095, "gc"},
        {1095, 1098, "io"}, {1098, 1100, "serialization"},
        /* task 2: result fetch at the end, shuffle read wait before computing */
        {1112, 1116, "scheduling"}, {1116, 1119, "deserialization"}, {1119, 1139, "io"}, {1139, 1189, "processing"},
        {1189, 1190, "serialization"}, {1190, 1200, "io"},
    };
    size_t k = 0;
    for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1]; a++) {
        if (t->aflags[a] & LP_ACT_GAP)
            continue;
        CHECK(k < sizeof want / sizeof want[0]);
        if (k >= sizeof want / sizeof want[0])
            break;
        CHECK_EQ_I(t->astart[a], want[k].s * MS);
        CHECK_EQ_I(t->aend[a], want[k].e * MS);
        CHECK_STR(lp_trace_type_name(t, t->atype[a]), want[k].type);
        CHECK_STR(attr(t, t->aattr[a], "task"), k < 6 ? "0" : "2");
        CHECK_STR(lp_trace_str(t, t->aop[a]), k < 6 ? "map at A.scala:1" : "collect at A.scala:2");
        k++;
    }
    CHECK_EQ_I(k, sizeof want / sizeof want[0]);
    /* the failed task: one activity with its status */
    w = lp_trace_find_worker(t, "executor.1.1");
    CHECK(w != LP_NONE32 && t->wfirst[w + 1] - t->wfirst[w] == 1);
    if (w != LP_NONE32)
        CHECK_STR(attr(t, t->aattr[t->wfirst[w]], "status"), "ExceptionFailure");
    /* the driver: scheduling activities, and a launch and a result message per task */
    w = lp_trace_find_worker(t, "driver");
    CHECK(w != LP_NONE32);
    int nsched = 0;
    for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1]; a++)
        nsched += t->atype[a] == LP_TYPE_SCHEDULING;
    CHECK_EQ_I(nsched, 6); /* job submit, 2 x (stage submit, complete), job complete */
    int launch = 0, result = 0;
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        const char *e = attr(t, t->mattr[m], "edge");
        launch += e && !strcmp(e, "launch") && t->msrc[m] == w;
        result += e && !strcmp(e, "result") && t->mdst[m] == w;
    }
    CHECK_EQ_I(launch, 3);
    CHECK_EQ_I(result, 3);
    lp_trace_free(t);
}

static void test_bad_records(void)
{
    lp_trace *t = imp("{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":\"x\"}\n"
                      "not json\n"
                      "{\"Event\":\"SparkListenerTaskStart\",\"Stage ID\":0,\"Task Info\":{\"Task ID\":9,\"Launch "
                      "Time\":5,\"Executor ID\":\"2\"}}\n"
                      "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Task Info\":{\"Task ID\":8,\"Launch "
                      "Time\":10,\"Finish Time\":5,\"Executor ID\":\"2\"}}\n"
                      "[1,2]\n"
                      "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Task Info\":{\"Task ID\":7,\"Launch "
                      "Time\":\"soon\",\"Executor ID\":\"2\"}}\n"
                      "{\"NoEvent\":1}\n"
                      "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Task Info\":{\"Task ID\":6,\"Launch "
                      "Time\":1,\"Finish Time\":2,\"Executor ID\":\"2\"}}\n"
                      "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Task Info\":{\"Task ID\":6,\"Launch "
                      "Time\":1,\"Finish Time\":2,\"Executor ID\":\"2\"}}\n");
    CHECK(t != NULL);
    HAS_DIAG("app.log:1: error: byte 0: SparkListenerTaskEnd: \"Task Info\" must be an object, found nothing; record "
             "skipped [import]");
    HAS_DIAG("app.log:2: error: byte 48: expected a value, found 'n'; line skipped [import]");
    HAS_DIAG("app.log:4: error: byte");
    HAS_DIAG("task 8 finishes (5 ms) before its launch (10 ms); record skipped");
    HAS_DIAG("app.log:5: error: byte");
    HAS_DIAG("must be a JSON object, found an array");
    HAS_DIAG("\"Launch Time\" must be a time in milliseconds, found a string \"soon\"; record skipped");
    HAS_DIAG("app.log:7: error: byte");
    HAS_DIAG("a Spark event must have an \"Event\" string, found nothing; line skipped");
    HAS_DIAG("app.log:9: error: byte");
    HAS_DIAG("task 6 was already ended (byte");
    HAS_DIAG("app.log:3: warning: byte");
    HAS_DIAG("task 9 (stage 0.0) started at 5 ms never ended (no SparkListenerTaskEnd); dropped");
    CHECK_EQ_I(DS.nerrors, 7);
    if (t) {
        CHECK_EQ_I(t->nacts - t->ngaps, 1); /* task 6 */
        lp_trace_free(t);
    }
}

/* ---- slot assignment: differential test ----------------------------------------------------- */

typedef struct rtask {
    int64_t launch, finish, run;   /* ms */
    int exec;
    int slot;                      /* naive assignment */
} rtask;

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng % n;
}

static int cmp_rtask(const void *a, const void *b)
{
    const rtask *x = a, *y = b;
    if (x->launch != y->launch)
        return x->launch < y->launch ? -1 : 1;
    if (x->finish != y->finish)
        return x->finish < y->finish ? -1 : 1;
    return 0;
}

/* The naive twin: for each task in launch order, recompute every slot's state from the
 * tasks already placed (O(n^2)). A slot is free when its last task finished by the
 * launch; when none is, one whose last task's executor side (launch + run) was over is
 * taken (the earliest-finishing); else a new slot. */
static void naive_slots(rtask *v, int n)
{
    for (int i = 0; i < n; i++) {
        int best = -1, soft = -1;
        int64_t bfree = 0, sfree = 0;
        for (int k = 0;; k++) {
            int last = -1;
            for (int j = 0; j < i; j++)
                if (v[j].exec == v[i].exec && v[j].slot == k)
                    last = j;
            if (last < 0)
                break;
            if (v[last].finish <= v[i].launch) {
                if (best < 0 || v[last].finish > bfree)
                    best = k, bfree = v[last].finish;
            } else if (v[last].launch + v[last].run <= v[i].launch) {
                if (soft < 0 || v[last].finish < sfree)
                    soft = k, sfree = v[last].finish;
            }
        }
        if (best < 0)
            best = soft;
        if (best < 0) {
            int ns = 0;
            for (int j = 0; j < i; j++)
                if (v[j].exec == v[i].exec && v[j].slot + 1 > ns)
                    ns = v[j].slot + 1;
            best = ns;
        }
        v[i].slot = best;
    }
}

static void test_slots_differential(void)
{
    for (int round = 0; round < 60; round++) {
        enum { N = 40 };
        rtask v[N];
        int n = 5 + (int)rnd(N - 5);
        for (int i = 0; i < n; i++) {
            v[i].exec = (int)rnd(2);
            v[i].launch = 1000 + (int64_t)rnd(200);
            v[i].run = 1 + (int64_t)rnd(40);
            v[i].finish = v[i].launch + v[i].run + (int64_t)rnd(8); /* the driver records it a bit later */
        }
        qsort(v, (size_t)n, sizeof *v, cmp_rtask);
        /* distinct launches keep the input order and the sort order the same */
        for (int i = 1; i < n; i++)
            if (v[i].launch == v[i - 1].launch && v[i].finish == v[i - 1].finish)
                v[i].finish++;
        qsort(v, (size_t)n, sizeof *v, cmp_rtask);
        naive_slots(v, n);
        char *doc = malloc(600 * (size_t)n + 200);
        size_t o = 0;
        for (int i = 0; i < n; i++)
            o += (size_t)sprintf(doc + o,
                                 "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Task End Reason\":{\"Reason\":"
                                 "\"Success\"},\"Task Info\":{\"Task ID\":%d,\"Launch Time\":%lld,\"Executor ID\":\"%d\","
                                 "\"Finish Time\":%lld},\"Task Metrics\":{\"Executor Run Time\":%lld}}\n",
                                 i, (long long)v[i].launch, v[i].exec, (long long)v[i].finish, (long long)v[i].run);
        lp_trace *t = imp(doc);
        free(doc);
        CHECK(t != NULL);
        if (!t)
            continue;
        int bad = 0;
        for (uint32_t w = 0; w < t->nworkers; w++) {
            int e, k;
            if (sscanf(lp_trace_worker_name(t, w), "executor.%d.%d", &e, &k) != 2)
                continue;
            for (uint64_t a = t->wfirst[w]; a < t->wfirst[w + 1]; a++) {
                const char *id = attr(t, t->aattr[a], "task");
                if (!id)
                    continue;
                int i = atoi(id);
                if (v[i].exec != e || v[i].slot != k)
                    bad++;
            }
        }
        CHECK_EQ_I(bad, 0);
        lp_trace_free(t);
    }
}

/* ---- rolling directories and directory inputs ------------------------------------------------ */

static void write_file(const char *dir, const char *name, const char *text, size_t n)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f)
        return;
    fwrite(text, 1, n, f);
    fclose(f);
}

static lp_trace *load_paths(const char *const *paths, size_t n)
{
    if (ds_init)
        lp_diags_release(&DS);
    ds_init = 1;
    lp_diags_init(&DS, 100);
    lp_trace *t = NULL;
    lp_error err;
    if (lp_trace_load(paths, n, NULL, &DS, &t, &err))
        return NULL;
    return t;
}

static void test_rolling(void)
{
    char base[] = "/tmp/lp-spark-XXXXXX";
    if (!mkdtemp(base)) {
        CHECK(0);
        return;
    }
    char dir[600];
    snprintf(dir, sizeof dir, "%s/eventlog_v2_app-1", base);
    CHECK(mkdir(dir, 0755) == 0);
    /* the application's lines over events_1, events_2 and events_10 (in that order) */
    const char *p = app;
    const char *cut1 = strstr(p, "{\"Event\":\"SparkListenerTaskStart\"");
    const char *cut2 = strstr(p, "{\"Event\":\"SparkListenerStageSubmitted\",\"Stage Info\":{\"Stage ID\":1");
    write_file(dir, "events_1_app-1", p, (size_t)(cut1 - p));
    write_file(dir, "events_2_app-1", cut1, (size_t)(cut2 - cut1));
    write_file(dir, "events_10_app-1", cut2, strlen(cut2));
    write_file(dir, "appstatus_app-1", "", 0);
    char **files;
    size_t nf;
    lp_error err;
    CHECK(lp_spark_log_files(dir, &files, &nf, &err) == LP_OK);
    CHECK_EQ_I(nf, 3);
    if (nf == 3) {
        CHECK(strstr(files[0], "/events_1_app-1") != NULL);
        CHECK(strstr(files[1], "/events_2_app-1") != NULL);
        CHECK(strstr(files[2], "/events_10_app-1") != NULL);
    }
    lp_spark_files_free(files, nf);
    CHECK(lp_spark_is_log_dir(dir));
    CHECK(!lp_spark_is_log_dir(base)); /* the folder that holds an application's folder is not one */
    /* the directory loads as the whole application */
    const char *one[1] = {dir};
    lp_trace *t = load_paths(one, 1);
    CHECK(t != NULL);
    lp_trace *ref = imp(app);
    if (t && ref) {
        CHECK_EQ_I(t->nacts, ref->nacts);
        CHECK_EQ_I(t->nmsgs, ref->nmsgs);
        CHECK_EQ_I(t->nworkers, ref->nworkers);
        for (uint64_t a = 0; a < t->nacts && a < ref->nacts; a++)
            if (t->astart[a] != ref->astart[a] || t->aend[a] != ref->aend[a]) {
                CHECK(0);
                break;
            }
    }
    lp_trace_free(t);
    lp_trace_free(ref);
    /* a compacted file: replay from it on; the files it replaced are not read */
    char dir2[600];
    snprintf(dir2, sizeof dir2, "%s/logs", base);
    CHECK(mkdir(dir2, 0755) == 0);
    write_file(dir2, "events_1_a", "x\n", 2);
    write_file(dir2, "events_2_a", "x\n", 2);
    write_file(dir2, "events_2_a.compact", "{}\n", 3);
    write_file(dir2, "events_3_a", "{}\n", 3);
    CHECK(lp_spark_is_log_dir(dir2));
    CHECK(lp_spark_log_files(dir2, &files, &nf, &err) == LP_OK);
    CHECK_EQ_I(nf, 2);
    if (nf == 2) {
        CHECK(strstr(files[0], "/events_2_a.compact") != NULL);
        CHECK(strstr(files[1], "/events_3_a") != NULL);
    }
    lp_spark_files_free(files, nf);
    /* directory inputs: files in name order, subdirectories too, a Spark log as one */
    char dir3[600], sub[700];
    snprintf(dir3, sizeof dir3, "%s/in", base);
    snprintf(sub, sizeof sub, "%s/sub", dir3);
    CHECK(mkdir(dir3, 0755) == 0 && mkdir(sub, 0755) == 0);
    write_file(dir3, "b.lpt", "A w 0 1 processing\n", 19);
    write_file(dir3, "a.lpt", "A v 0 1 processing\n", 19);
    write_file(dir3, ".hidden", "junk", 4);
    write_file(sub, "c.lpt", "A u 0 1 processing\n", 19);
    char mv[1500];
    snprintf(mv, sizeof mv, "%s/eventlog_v2_app-1", dir3);
    CHECK(rename(dir, mv) == 0);
    const char *in[1] = {dir3};
    lp_input_item *items;
    size_t ni;
    CHECK(lp_inputs_expand(in, 1, &items, &ni, &err) == LP_OK);
    CHECK_EQ_I(ni, 4);
    if (ni == 4) {
        CHECK(strstr(items[0].path, "/a.lpt") && items[0].kind == LP_INPUT_FILE);
        CHECK(strstr(items[1].path, "/b.lpt") && items[1].kind == LP_INPUT_FILE);
        CHECK(strstr(items[2].path, "/eventlog_v2_app-1") && items[2].kind == LP_INPUT_SPARK_DIR);
        CHECK(strstr(items[3].path, "/sub/c.lpt") && items[3].kind == LP_INPUT_FILE);
    }
    lp_inputs_free(items, ni);
    t = load_paths(in, 1);
    CHECK(t != NULL);
    if (t) {
        CHECK(lp_trace_find_worker(t, "driver") != LP_NONE32);
        CHECK(lp_trace_find_worker(t, "u") != LP_NONE32 && lp_trace_find_worker(t, "v") != LP_NONE32);
        lp_trace_free(t);
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    CHECK(system(cmd) == 0);
}

/* Every allocation failing in turn: the import fails cleanly (no crash, no leak under the
 * sanitizers) until there is memory enough, then gives the full result. */
static void test_out_of_memory(void)
{
    lp_trace *ref = imp(app);
    CHECK(ref != NULL);
    int succeeded = 0;
    for (long n = 0; n < 3000 && !succeeded; n++) {
        lp_alloc_fail_after(n);
        lp_trace *t = imp(app);
        lp_alloc_fail_after(-1);
        if (t) {
            succeeded = 1;
            CHECK(ref && t->nacts == ref->nacts && t->nmsgs == ref->nmsgs);
            lp_trace_free(t);
        }
    }
    CHECK(succeeded);
    lp_trace_free(ref);
}

int main(void)
{
    test_layout();
    test_bad_records();
    test_slots_differential();
    test_rolling();
    test_out_of_memory();
    if (ds_init)
        lp_diags_release(&DS);
    return t_done("test_spark");
}
