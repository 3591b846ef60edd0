/* test_causal_shard.c: the Mystery Machine's inference split over K parts (causal.h,
 * "sharded inference": `longpole dist infer`) against one process: for random and
 * generated corpora (skew corrected, with pipelines), starting from an empty model or
 * from a model refined earlier, K = 1..4 parts each refine their requests from the
 * same starting model, their state words are merged (AND, SUM), the pipelines checked
 * per part and ORed, and the model file written is byte-identical to the one of a
 * single refinement over every request. */
#include "t.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/analysis/mystery/skew.h"
#include "longpole/gen/genreq.h"
#include "longpole/import/reqlog.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long long rs = 0x2545F4914F6CDD1DULL;
static unsigned rnd(unsigned n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs % n);
}

static lp_reqlog *load_mem(const char *text)
{
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    o.threads = 1;
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_error err;
    lp_reqlog *rl = NULL;
    if (lp_reqlog_load_mem(text, strlen(text), "c.csv", &o, &ds, &rl, &err))
        fprintf(stderr, "load: %s\n", err.msg);
    lp_diags_release(&ds);
    return rl;
}

/* A random corpus: up to 5 tasks of optional events on 3 hosts; task t+1 often starts
 * after task t's events (producer/consumer hand-offs), so pipelines are proposed and
 * some are rejected. */
static char *random_corpus(int nreq)
{
    size_t cap = (size_t)nreq * 5 * 5 * 48 + 64, n = 0;
    char *t = malloc(cap);
    n += (size_t)snprintf(t + n, cap - n, "request,host,time,event,task\n");
    int ntask = 2 + (int)rnd(4);
    for (int r = 0; r < nreq; r++) {
        int64_t base = 0;
        for (int task = 0; task < ntask; task++) {
            int64_t now = rnd(2) ? base : (int64_t)rnd(30);
            int host = (int)rnd(3);
            for (int e = 0; e < 5; e++) {
                if (e > 0 && e < 4 && rnd(5) == 0)
                    continue; /* optional event */
                now += 1 + (int64_t)rnd(8);
                n += (size_t)snprintf(t + n, cap - n, "r%d,h%d,%lld,e%d,t%d\n", r, host, (long long)now, e, task);
                if (e == 1)
                    base = now;
            }
        }
    }
    return t;
}

/* The model file as bytes (malloc'd). */
static char *model_bytes(const lp_causal *m, size_t *len)
{
    FILE *f = tmpfile();
    lp_error err;
    CHECK(lp_causal_write(m, f, &err) == LP_OK);
    long n = ftell(f);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

/* A model from `start` (NULL: empty) refined over rl, whole (nparts 0) or part p. */
static void refine(lp_causal *m, const lp_reqlog *rl, uint32_t **map, uint64_t p, uint64_t nparts,
                   const lp_reqlog *startlog)
{
    lp_error err;
    CHECK(lp_causal_init(m, &err) == LP_OK);
    if (startlog) { /* the starting model: refined over an earlier log */
        uint32_t *m0;
        CHECK(lp_causal_map(m, startlog, &m0, &err) == LP_OK);
        CHECK(lp_causal_refine(m, startlog, m0, NULL, &err) == LP_OK);
        CHECK(lp_causal_finish(m, startlog, m0, &err) == LP_OK);
        lp_free(m0);
    }
    CHECK(lp_causal_map(m, rl, map, &err) == LP_OK);
    lp_causal_refine_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 1 + (unsigned)(p % 2);
    o.block = 1 + rnd(50);
    o.part = p;
    o.nparts = nparts;
    CHECK(lp_causal_refine(m, rl, *map, &o, &err) == LP_OK);
}

static int runs_checked, pipes_seen;

/* Single process against K parts merged, on log rl (after startlog, if any). */
static void check_log(const lp_reqlog *rl, const lp_reqlog *startlog)
{
    lp_error err;
    lp_causal one;
    uint32_t *map;
    refine(&one, rl, &map, 0, 0, startlog);
    CHECK(lp_causal_finish(&one, rl, map, &err) == LP_OK);
    lp_free(map);
    size_t reflen;
    char *ref = model_bytes(&one, &reflen);
    pipes_seen += one.npipes + one.npipe_rej > 0;
    uint64_t *base_sum = NULL;
    for (uint64_t K = 1; K <= 4; K++) {
        lp_causal part[4];
        uint32_t *maps[4];
        size_t nand = 0, nsum = 0;
        uint64_t *andw = NULL, *sumw = NULL, *w = NULL, *s = NULL;
        for (uint64_t p = 0; p < K; p++) {
            refine(&part[p], rl, &maps[p], p, K, startlog);
            lp_causal_state_size(&part[p], &nand, &nsum);
            if (!andw) {
                andw = malloc((nand + 1) * 8), sumw = calloc(nsum, 8), w = malloc((nand + 1) * 8), s = malloc(nsum * 8);
                memset(andw, 0xff, (nand + 1) * 8);
            }
            lp_causal_state_get(&part[p], w, s);
            for (size_t i = 0; i < nand; i++)
                andw[i] &= w[i];
            for (size_t i = 0; i < nsum; i++)
                sumw[i] += s[i];
        }
        if (startlog) { /* the start counted K times: its counts are those of an unrefined twin */
            lp_causal b;
            uint32_t *bm;
            CHECK(lp_causal_init(&b, &err) == LP_OK);
            uint32_t *m0;
            CHECK(lp_causal_map(&b, startlog, &m0, &err) == LP_OK);
            CHECK(lp_causal_refine(&b, startlog, m0, NULL, &err) == LP_OK);
            lp_free(m0);
            CHECK(lp_causal_map(&b, rl, &bm, &err) == LP_OK);
            lp_free(bm);
            base_sum = malloc(nsum * 8);
            uint64_t *bw = malloc((nand + 1) * 8);
            lp_causal_state_get(&b, bw, base_sum);
            for (size_t i = 0; i < nsum; i++)
                sumw[i] -= (K - 1) * base_sum[i];
            free(bw), free(base_sum);
            lp_causal_release(&b);
        }
        lp_causal_state_set(&part[0], andw, sumw);
        CHECK(lp_causal_finish(&part[0], NULL, NULL, &err) == LP_OK);
        uint8_t *rej = calloc(part[0].npipes + 1, 1);
        for (uint64_t p = 0; p < K; p++)
            CHECK(lp_causal_pipes_check(&part[0], rl, maps[0], p, K, rej, &err) == LP_OK);
        CHECK(lp_causal_pipes_reject(&part[0], rej, &err) == LP_OK);
        size_t len;
        char *got = model_bytes(&part[0], &len);
        CHECK_EQ_I(len, reflen);
        CHECK(len == reflen && memcmp(got, ref, len) == 0);
        runs_checked++;
        free(got), free(rej), free(andw), free(sumw), free(w), free(s);
        for (uint64_t p = 0; p < K; p++) {
            lp_causal_release(&part[p]);
            lp_free(maps[p]);
        }
    }
    free(ref);
    lp_causal_release(&one);
}

static void test_random(void)
{
    for (int it = 0; it < 400; it++) {
        char *text = random_corpus(1 + (int)rnd(60));
        lp_reqlog *rl = load_mem(text);
        lp_reqlog *start = NULL;
        char *t2 = NULL;
        if (it % 4 == 3) {
            t2 = random_corpus(1 + (int)rnd(20));
            start = load_mem(t2);
        }
        if (rl)
            check_log(rl, start);
        lp_reqlog_free(start);
        lp_reqlog_free(rl);
        free(t2);
        free(text);
    }
}

/* Generated corpora: skew corrected first (the same on every part: each loads every log). */
static void test_generated(void)
{
    char dir[] = "/tmp/lp_causal_shard_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%s/g%llu", dir, (unsigned long long)seed);
        lp_genreq g;
        lp_genreq_defaults(&g);
        g.requests = 3000 + 2000 * seed;
        g.segments = 12 + 8 * (uint32_t)seed;
        g.skew_ns = 2000000;
        g.seed = seed;
        g.clients = 100;
        lp_genreq_out out;
        lp_error err;
        CHECK(lp_genreq_write(&g, prefix, &out, &err) == LP_OK);
        char path[128];
        snprintf(path, sizeof path, "%s.csv", prefix);
        const char *paths[1] = {path};
        lp_reqlog_opts o;
        lp_reqlog_opts_init(&o);
        lp_diags ds;
        lp_diags_init(&ds, 10);
        lp_reqlog *rl = NULL;
        CHECK(lp_reqlog_load(paths, 1, &o, &ds, &rl, &err) == LP_OK);
        lp_diags_release(&ds);
        if (!rl)
            continue;
        lp_skew sk;
        lp_skew_opts so = {0, NULL};
        CHECK(lp_skew_estimate(rl, &so, &sk, &err) == LP_OK);
        lp_skew_apply(&sk, rl);
        lp_skew_release(&sk);
        check_log(rl, NULL);
        lp_reqlog_free(rl);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    test_random();
    test_generated();
    fprintf(stderr, "causal shard: %d sharded runs, %d corpora with pipeline candidates\n", runs_checked,
            pipes_seen);
    CHECK(runs_checked >= 1600);
    CHECK(pipes_seen > 0);
    return t_done("test_causal_shard");
}
