/* test_causal.c: causal-model inference (causal.h).
 *  - the bit-parallel refinement against a naive twin (every pair, every request) on
 *    random corpora, with 1 or 2 threads and any block size;
 *  - on generated corpora the inferred model equals the generator's ground truth
 *    (nothing missed, nothing spurious, the pipeline found), after skew correction;
 *    without it the same corpus gives a visibly wrong model;
 *  - convergence: rejections level off;
 *  - refining in two runs (through the model file) equals one run over everything;
 *  - the model file round-trips; the filter drops segments. */
#include "t.h"
#include "longpole/analysis/mystery/causal.h"
#include "longpole/gen/genreq.h"
#include "longpole/import/reqlog.h"
#include "longpole/analysis/mystery/skew.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[256];
static unsigned long long rs = 0x9E3779B97F4A7C15ULL;
static unsigned rnd(unsigned n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs % n);
}

static lp_reqlog *load_text(const char *text, unsigned threads)
{
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    o.threads = threads;
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_error err;
    lp_reqlog *rl = NULL;
    if (lp_reqlog_load_mem(text, strlen(text), "c.csv", &o, &ds, &rl, &err))
        fprintf(stderr, "load: %s\n", err.msg);
    lp_diags_release(&ds);
    return rl;
}

static lp_reqlog *load_files(const char *const *paths, size_t n)
{
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_error err;
    lp_reqlog *rl = NULL;
    if (lp_reqlog_load(paths, n, &o, &ds, &rl, &err))
        fprintf(stderr, "load: %s\n", err.msg);
    CHECK_EQ_I(ds.nerrors, 0);
    lp_diags_release(&ds);
    return rl;
}

/* A random corpus: 4 tasks with optional events, hosts with skewed clocks, so that
 * cross-host segments sometimes run backwards (and are made monotone). */
static char *random_corpus(int nreq)
{
    size_t cap = (size_t)nreq * 12 * 48 + 64, n = 0;
    char *t = malloc(cap);
    n += (size_t)snprintf(t + n, cap - n, "request,host,time,event,task\n");
    for (int r = 0; r < nreq; r++) {
        for (int task = 0; task < 4; task++) {
            int64_t now = (int64_t)rnd(30) + task * (int64_t)rnd(10);
            int host = (int)rnd(2);
            int64_t hostclock[3] = {0, (int64_t)rnd(3), -5};
            int lasthost = -1;
            int64_t last[3] = {-1000, -1000, -1000};
            for (int e = 0; e < 4; e++) {
                if (e > 0 && e < 3 && rnd(4) == 0)
                    continue; /* optional event */
                if (rnd(3) == 0)
                    host = (int)rnd(3);
                now += (int64_t)rnd(12);
                int64_t stamp = now + hostclock[host];
                if (stamp < last[host])
                    stamp = last[host]; /* never backwards on one host */
                last[host] = stamp;
                lasthost = host;
                n += (size_t)snprintf(t + n, cap - n, "r%d,h%d,%lld,e%d,t%d\n", r, host, (long long)stamp, e, task);
            }
            (void)lasthost;
        }
    }
    return t;
}

/* The naive model: for every pair of the model's segments, every request. */
static void naive_check(const lp_causal *m, const lp_reqlog *rl, const uint32_t *map)
{
    uint32_t S = m->nseg;
    int64_t *st = malloc(S * sizeof *st), *en = malloc(S * sizeof *en);
    uint8_t *pr = malloc(S);
    uint8_t *hb = malloc((size_t)S * S), *mx = malloc((size_t)S * S), *seen = malloc((size_t)S * S);
    memset(hb, 1, (size_t)S * S);
    memset(mx, 1, (size_t)S * S);
    memset(seen, 0, (size_t)S * S);
    for (uint64_t r = 0; r < rl->nreqs; r++) {
        if (rl->rbad[r])
            continue;
        memset(pr, 0, S);
        int64_t prev = 0;
        uint32_t ptask = UINT32_MAX;
        for (uint64_t i = rl->rfirst[r]; i < rl->rfirst[r + 1]; i++) {
            const lp_reqrow *w = &rl->rows[i];
            uint32_t task = rl->pt_task[w->point];
            int64_t t = w->time;
            if (task == ptask && t < prev)
                t = prev;
            ptask = task;
            prev = t;
            if (w->seg == LP_REQLOG_NONE)
                continue;
            uint32_t s = map[w->seg];
            int64_t e = rl->rows[i + 1].time < t ? t : rl->rows[i + 1].time;
            pr[s] = 1;
            st[s] = t;
            en[s] = e;
        }
        for (uint32_t a = 0; a < S; a++)
            for (uint32_t b = 0; b < S; b++) {
                if (!pr[a] || !pr[b] || m->seg_dropped[a] || m->seg_dropped[b])
                    continue;
                seen[a * S + b] = 1;
                if (st[b] < en[a])
                    hb[a * S + b] = 0;
                if (st[b] < en[a] && st[a] < en[b])
                    mx[a * S + b] = 0;
            }
    }
    int bad = 0;
    for (uint32_t a = 0; a < S; a++)
        for (uint32_t b = 0; b < S; b++) {
            if (a == b || m->seg_dropped[a] || m->seg_dropped[b])
                continue;
            int s = lp_causal_bit(m->seen, m->words, a, b);
            if (s != seen[a * S + b])
                bad++;
            if (s && lp_causal_bit(m->hb, m->words, a, b) != hb[a * S + b])
                bad++;
            if (s && lp_causal_bit(m->mx, m->words, a, b) != mx[a * S + b])
                bad++;
        }
    CHECK_EQ_I(bad, 0);
    free(st), free(en), free(pr), free(hb), free(mx), free(seen);
}

static void test_naive_twin(void)
{
    for (int round = 0; round < 6; round++) {
        char *text = random_corpus(300 + round * 200);
        lp_reqlog *rl = load_text(text, round % 2 ? 2 : 1);
        CHECK(rl != NULL);
        if (!rl) {
            free(text);
            continue;
        }
        lp_error err;
        lp_causal m;
        lp_causal_init(&m, &err);
        if (round == 5)
            CHECK(lp_causal_set_filter(&m, "^t1:", &err) == LP_OK);
        uint32_t *map;
        CHECK(lp_causal_map(&m, rl, &map, &err) == LP_OK);
        lp_causal_refine_opts o;
        memset(&o, 0, sizeof o);
        o.threads = round % 2 ? 2 : 1;
        o.block = round == 2 ? 1 : round == 3 ? 37 : 0;
        lp_causal_conv *conv = NULL;
        size_t nconv = 0;
        if (round == 3) {
            o.conv = &conv;
            o.nconv = &nconv;
        }
        CHECK(lp_causal_refine(&m, rl, map, &o, &err) == LP_OK);
        naive_check(&m, rl, map);
        if (round == 3) {
            CHECK(nconv > 10);
            /* remaining hypotheses = hypotheses tested - all rejections so far */
            uint64_t rej = 0;
            for (size_t i = 0; i < nconv; i++)
                rej += conv[i].rejected;
            CHECK_EQ_I(conv[nconv - 1].hypotheses - rej, conv[nconv - 1].remaining);
            lp_free(conv);
        }
        if (round == 5) {
            int dropped = 0;
            for (uint32_t s = 0; s < m.nseg; s++)
                if (m.seg_dropped[s]) {
                    dropped++;
                    for (uint32_t b = 0; b < m.nseg; b++)
                        CHECK(lp_causal_rel(&m, s, b) == LP_REL_UNSEEN);
                }
            CHECK(dropped > 0);
        }
        lp_free(map);
        lp_causal_release(&m);
        lp_reqlog_free(rl);
        free(text);
    }
}

static void gen(const char *prefix, uint64_t requests, uint32_t segments, int64_t skew, double miss, uint64_t seed)
{
    lp_genreq g;
    lp_genreq_defaults(&g);
    g.requests = requests;
    g.segments = segments;
    g.skew_ns = skew;
    g.miss_rate = miss;
    g.seed = seed;
    g.clients = 300;
    lp_genreq_out out;
    lp_error err;
    CHECK(lp_genreq_write(&g, prefix, &out, &err) == LP_OK);
}

static char *path2(const char *prefix, const char *suffix)
{
    static char b[4][600];
    static int k;
    k = (k + 1) % 4;
    snprintf(b[k], sizeof b[k], "%s%s", prefix, suffix);
    return b[k];
}

/* Infer from a generated log; returns the model (caller releases). */
static void infer(const char *const *paths, size_t n, int correct, lp_causal *m, lp_causal_conv **conv, size_t *nconv,
                  uint64_t block)
{
    lp_error err;
    lp_reqlog *rl = load_files(paths, n);
    if (!rl)
        return;
    if (correct) {
        lp_skew sk;
        lp_skew_opts so = {0, NULL};
        CHECK(lp_skew_estimate(rl, &so, &sk, &err) == LP_OK);
        lp_skew_apply(&sk, rl);
        lp_skew_release(&sk);
    }
    lp_causal_init(m, &err);
    uint32_t *map;
    lp_causal_map(m, rl, &map, &err);
    lp_causal_refine_opts o;
    memset(&o, 0, sizeof o);
    o.block = block;
    o.conv = conv;
    o.nconv = nconv;
    CHECK(lp_causal_refine(m, rl, map, conv ? &o : NULL, &err) == LP_OK);
    CHECK(lp_causal_finish(m, rl, map, &err) == LP_OK);
    lp_free(map);
    lp_reqlog_free(rl);
}

static void test_ground_truth(void)
{
    struct {
        uint32_t segs;
        uint64_t reqs;
        double miss;
    } cases[] = {{14, 6000, 0.2}, {33, 10000, 0.1}, {60, 20000, 0.1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char prefix[400];
        snprintf(prefix, sizeof prefix, "%s/g%u", tmpdir, cases[c].segs);
        gen(prefix, cases[c].reqs, cases[c].segs, 50000000, cases[c].miss, 11 + c);
        const char *p[] = {path2(prefix, ".csv")};
        lp_causal m, truth;
        lp_error err;
        lp_causal_conv *conv = NULL;
        size_t nconv = 0;
        infer(p, 1, 1, &m, &conv, &nconv, 500);
        CHECK(lp_causal_load(&truth, path2(prefix, ".truth.json"), &err) == LP_OK);
        lp_causal_diff d;
        CHECK(lp_causal_compare(&m, &truth, &d, NULL, NULL, &err) == LP_OK);
        CHECK(d.compared > 0);
        CHECK_EQ_I(d.missed, 0);
        CHECK_EQ_I(d.spurious, 0);
        CHECK_EQ_I(d.only_ref, 0);
        CHECK_EQ_I(d.only_m, 0);
        CHECK_EQ_I(d.pipes_missed, 0);
        CHECK_EQ_I(d.pipes_spurious, 0);
        /* the pipeline: render => display, one pair per chunk */
        lp_genreq_shape sh;
        lp_genreq_shape_of(cases[c].segs, &sh, &err);
        CHECK_EQ_I(m.npipes, sh.chunks >= 2 ? 1 : 0);
        if (m.npipes == 1) {
            CHECK_STR(lp_strtab_get(&m.names, m.pipes[0].t1), "render");
            CHECK_STR(lp_strtab_get(&m.names, m.pipes[0].t2), "display");
            CHECK_EQ_I(m.pipes[0].npairs, sh.chunks);
            char lab[256], want[64];
            for (uint32_t i = 0; i < m.pipes[0].npairs; i++) {
                snprintf(want, sizeof want, "display:show%u->shown%u", i + 1, i + 1);
                CHECK_STR(lp_causal_label(&m, m.pipes[0].b[i], lab, sizeof lab), want);
            }
        }
        /* mutual exclusion exists exactly in the lock and JavaScript groups */
        uint64_t hb, hbd, mx, un;
        lp_causal_counts(&m, &hb, &hbd, &mx, &un);
        uint64_t want_mx = (sh.js ? (uint64_t)sh.js * (sh.js - 1) / 2 * 4 : 0) + (sh.lock ? 3 : 0);
        CHECK_EQ_I(mx, want_mx);
        /* convergence levels off: the second half of the blocks rejects (almost) nothing */
        uint64_t first = 0, late = 0, total = 0;
        for (size_t i = 0; i < nconv; i++) {
            total += conv[i].rejected;
            if (i == 0)
                first = conv[i].rejected;
            if (i >= nconv / 2)
                late += conv[i].rejected;
        }
        CHECK(nconv >= 10);
        CHECK(first > total / 2);
        CHECK(late * 200 <= total);
        CHECK_EQ_I(conv[nconv - 1].relationships, hb + mx);
        lp_free(conv);
        lp_causal_release(&truth);
        lp_causal_release(&m);
    }
}

/* Without skew correction the same corpus yields a visibly wrong model. */
static void test_skew_matters(void)
{
    char prefix[400];
    snprintf(prefix, sizeof prefix, "%s/g60", tmpdir); /* written by test_ground_truth */
    const char *p[] = {path2(prefix, ".csv")};
    lp_causal m, truth;
    lp_error err;
    infer(p, 1, 0, &m, NULL, NULL, 0);
    CHECK(lp_causal_load(&truth, path2(prefix, ".truth.json"), &err) == LP_OK);
    lp_causal_diff d;
    lp_causal_compare(&m, &truth, &d, NULL, NULL, &err);
    fprintf(stderr, "without skew correction: %llu relationships missed, %llu spurious of %llu pairs\n",
            (unsigned long long)d.missed, (unsigned long long)d.spurious, (unsigned long long)d.compared);
    CHECK(d.missed + d.spurious > d.compared / 20);
    lp_causal_release(&truth);
    lp_causal_release(&m);
    /* with no skew in the data, no correction is needed */
    snprintf(prefix, sizeof prefix, "%s/noskew", tmpdir);
    gen(prefix, 12000, 40, 0, 0.1, 5);
    const char *q[] = {path2(prefix, ".csv")};
    infer(q, 1, 0, &m, NULL, NULL, 0);
    CHECK(lp_causal_load(&truth, path2(prefix, ".truth.json"), &err) == LP_OK);
    lp_causal_compare(&m, &truth, &d, NULL, NULL, &err);
    CHECK_EQ_I(d.missed + d.spurious, 0);
    lp_causal_release(&truth);
    lp_causal_release(&m);
}

/* Refining in two runs through the file equals one run; the file round-trips. */
static void test_incremental(void)
{
    char prefix[400];
    snprintf(prefix, sizeof prefix, "%s/inc", tmpdir);
    gen(prefix, 8000, 45, 0, 0.1, 9);
    /* split the log at a request boundary */
    FILE *f = fopen(path2(prefix, ".csv"), "r");
    FILE *a = fopen(path2(prefix, ".a.csv"), "w"), *b = fopen(path2(prefix, ".b.csv"), "w");
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (n++ == 0) {
            fputs(line, a);
            fputs(line, b);
            continue;
        }
        long r = strtol(line + 1, NULL, 10);
        fputs(line, r <= 3000 ? a : b);
    }
    fclose(f), fclose(a), fclose(b);
    lp_error err;
    char fa[600], fb[600];
    snprintf(fa, sizeof fa, "%s.a.csv", prefix);
    snprintf(fb, sizeof fb, "%s.b.csv", prefix);
    const char *pa[] = {fa}, *pb[] = {fb};
    const char *both[] = {fa, fb};
    lp_causal one, two, again;
    infer(both, 2, 0, &one, NULL, NULL, 0);
    /* run 1, saved, loaded, run 2 */
    lp_causal m1;
    infer(pa, 1, 0, &m1, NULL, NULL, 0);
    CHECK(lp_causal_save(&m1, path2(prefix, ".m1.json"), &err) == LP_OK);
    CHECK(lp_causal_load(&two, path2(prefix, ".m1.json"), &err) == LP_OK);
    /* round trip: same bits, counts, pipelines */
    CHECK_EQ_I(two.nseg, m1.nseg);
    CHECK_EQ_I(two.nreq, m1.nreq);
    int same = 1;
    for (uint32_t x = 0; x < m1.nseg; x++) {
        CHECK_EQ_I(two.seg_count[x], m1.seg_count[x]);
        for (uint32_t y = 0; y < m1.nseg; y++)
            same &= lp_causal_bit(two.hb, two.words, x, y) == lp_causal_bit(m1.hb, m1.words, x, y) &&
                    lp_causal_bit(two.mx, two.words, x, y) == lp_causal_bit(m1.mx, m1.words, x, y) &&
                    lp_causal_bit(two.seen, two.words, x, y) == lp_causal_bit(m1.seen, m1.words, x, y);
    }
    CHECK(same);
    CHECK_EQ_I(two.npipes, m1.npipes);
    lp_causal_release(&m1);
    lp_reqlog *rl = load_files(pb, 1);
    uint32_t *map;
    lp_causal_map(&two, rl, &map, &err);
    CHECK(lp_causal_refine(&two, rl, map, NULL, &err) == LP_OK);
    lp_causal_finish(&two, rl, map, &err);
    lp_free(map);
    lp_reqlog_free(rl);
    CHECK_EQ_I(two.nreq, one.nreq);
    lp_causal_diff d;
    lp_causal_compare(&two, &one, &d, NULL, NULL, &err);
    CHECK_EQ_I(d.missed + d.spurious + d.only_m + d.only_ref, 0);
    /* the same bits for every pair, by names */
    int diff = 0;
    char la[256], lb[256];
    for (uint32_t x = 0; x < one.nseg; x++) {
        lp_causal_label(&one, x, la, sizeof la);
        uint32_t tx = lp_causal_find(&two, lp_strtab_get(&one.names, one.seg_task[x]),
                                     lp_strtab_get(&one.names, one.seg_from[x]), lp_strtab_get(&one.names, one.seg_to[x]));
        for (uint32_t y = 0; y < one.nseg && tx != LP_CAUSAL_NONE; y++) {
            uint32_t ty = lp_causal_find(&two, lp_strtab_get(&one.names, one.seg_task[y]),
                                         lp_strtab_get(&one.names, one.seg_from[y]),
                                         lp_strtab_get(&one.names, one.seg_to[y]));
            diff += lp_causal_bit(one.hb, one.words, x, y) != lp_causal_bit(two.hb, two.words, tx, ty);
            diff += lp_causal_bit(one.seen, one.words, x, y) != lp_causal_bit(two.seen, two.words, tx, ty);
            diff += lp_causal_bit(one.mx, one.words, x, y) != lp_causal_bit(two.mx, two.words, tx, ty);
        }
        (void)lb;
    }
    CHECK_EQ_I(diff, 0);
    /* a model with a filter keeps it */
    CHECK(lp_causal_set_filter(&two, "^js", &err) == LP_OK);
    CHECK(lp_causal_save(&two, path2(prefix, ".m2.json"), &err) == LP_OK);
    CHECK(lp_causal_load(&again, path2(prefix, ".m2.json"), &err) == LP_OK);
    CHECK_STR(again.filter, "^js");
    uint32_t js = lp_causal_find(&again, "js1", "run", "mid");
    CHECK(js != LP_CAUSAL_NONE && again.seg_dropped[js]);
    lp_causal_release(&again);
    /* bad files */
    FILE *g = fopen(path2(prefix, ".bad.json"), "w");
    fputs("{\"format\": \"longpole-causal-model\", \"version\": 2}", g);
    fclose(g);
    CHECK(lp_causal_load(&again, path2(prefix, ".bad.json"), &err) == LP_ERR_UNSUPPORTED);
    g = fopen(path2(prefix, ".bad.json"), "w");
    fputs("{\"format\": \"longpole-causal-model\", \"version\": 1, \"segments\": [{\"id\": 0, \"task\": \"t\", "
          "\"start\": \"a\", \"end\": \"b\", \"hb\": \"1\", \"mx\": \"x\", \"seen\": \"0\"}]}",
          g);
    fclose(g);
    CHECK(lp_causal_load(&again, path2(prefix, ".bad.json"), &err) == LP_ERR_FORMAT);
    lp_causal_release(&one);
    lp_causal_release(&two);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lp-causal-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    test_naive_twin();
    test_ground_truth();
    test_skew_matters();
    test_incremental();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return t_done("test_causal");
}
