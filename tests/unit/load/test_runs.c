/* test_runs.c: what unrecognised input looks like (lp_input_sniff) and which inputs are
 * one run (lp_load_runs, runs.h): known cases, then a differential test against a naive
 * twin (union-find over every overlapping pair) on random sets of files. */
#include "t.h"
#include "longpole/load/runs.h"
#include "longpole/base/alloc.h"

#include <stdint.h>
#include <unistd.h>

static void test_sniff(void)
{
    char buf[256];
    static const unsigned char ctf_stream[] = {0xc1, 0x1f, 0xfc, 0xc1, 0, 0, 0, 0};
    CHECK(lp_input_sniff("", 0, buf, sizeof buf) == NULL);
    CHECK(lp_input_sniff(" \n\t", 3, buf, sizeof buf) == NULL);
    CHECK(lp_input_is_ctf(ctf_stream, sizeof ctf_stream));
    CHECK(lp_input_is_ctf("/* CTF 1.8 */", 13));
    CHECK(!lp_input_is_ctf("{}", 2));
    CHECK(strstr(lp_input_sniff(ctf_stream, sizeof ctf_stream, buf, sizeof buf), "longpole cp --thread") != NULL);
    const char *own = "{\"longpole\":\"0.1.0\",\"command\":\"cp\",\"definition\":{}}";
    CHECK(strstr(lp_input_sniff(own, strlen(own), buf, sizeof buf), "own --json output") != NULL);
    CHECK(strstr(lp_input_sniff("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", 40, buf, sizeof buf), "nested") != NULL);
    CHECK(strstr(lp_input_sniff("{}\n", 3, buf, sizeof buf), "it is JSON") != NULL);
    CHECK(strstr(lp_input_sniff("a,b,c\n1,2,3\n", 12, buf, sizeof buf), "it is text") != NULL);
    static const unsigned char bin[] = {0x00, 0x01, 0xff, 0x7f, 0x02};
    CHECK(strstr(lp_input_sniff(bin, sizeof bin, buf, sizeof buf), "binary data") != NULL);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Index of path p among names[], or -1. */
static int which(char names[][256], int n, const char *p)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], p) == 0)
            return i;
    return -1;
}

static void test_known(void)
{
    char dir[] = "/tmp/lp_test_runs_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char a[256], b[256], c[256], d[256];
    snprintf(a, sizeof a, "%s/a.lpt", dir);
    snprintf(b, sizeof b, "%s/b.lpt", dir);
    snprintf(c, sizeof c, "%s/c.lpt", dir);
    snprintf(d, sizeof d, "%s/d.bin", dir);
    put(a, "A w1 0 40 processing\n");
    put(b, "A w2 1000 1040 processing\n");
    put(c, "A w3 30 50 processing\n");
    put(d, "\x01\x02\x03\xff");
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_error err;
    lp_runs r;
    const char *dirs[] = {dir};
    CHECK(lp_load_runs(dirs, 1, NULL, &ds, &r, &err) == LP_OK);
    CHECK_EQ_I(r.n, 2); /* {a, c} overlap; b alone; d skipped */
    CHECK_EQ_I(r.skipped, 1);
    CHECK_EQ_I(ds.nwarnings, 1);
    if (r.n == 2) {
        CHECK_EQ_I(r.first[1], 2);
        CHECK_EQ_I(r.first[2], 3);
        CHECK_STR(r.paths[0], a);
        CHECK_STR(r.paths[1], c);
        CHECK_STR(r.paths[2], b);
        CHECK_EQ_I(r.tmin[0], 0);
        CHECK_EQ_I(r.tmax[0], 50);
        CHECK_EQ_I(r.tmin[1], 1000);
    }
    lp_runs_release(&r);
    lp_diags_release(&ds);
    /* halves whose other half is in another file: one run, the paths as given */
    put(a, "A w1 0 40 processing\nS w1 40 w2 m1\n");
    put(b, "R w2 1000 w1 m1\nA w2 1000 1040 processing\n");
    unlink(c);
    unlink(d);
    const char *two[] = {a, b};
    lp_diags_init(&ds, 10);
    CHECK(lp_load_runs(two, 2, NULL, &ds, &r, &err) == LP_OK);
    CHECK_EQ_I(r.n, 1);
    CHECK(r.n == 1 && r.first[1] == 2 && strcmp(r.paths[0], a) == 0);
    lp_runs_release(&r);
    lp_diags_release(&ds);
    unlink(a);
    unlink(b);
    rmdir(dir);
}

/* The naive twin: union-find over all pairs whose closed spans intersect. */
static int find(int *p, int x) { return p[x] == x ? x : (p[x] = find(p, p[x])); }

static void test_differential(void)
{
    char dir[] = "/tmp/lp_test_runs_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    uint64_t seed = 12345;
    int cases = 0, multi = 0;
    for (int trial = 0; trial < 300; trial++) {
        int n = 2 + (int)((seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 61); /* 2..9 */
        char names[10][256];
        long long lo[10], hi[10];
        for (int i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            lo[i] = (long long)((seed >> 33) % 100);
            hi[i] = lo[i] + 1 + (long long)((seed >> 20) % 20);
            snprintf(names[i], sizeof names[i], "%s/f%d.lpt", dir, i);
            char text[128];
            snprintf(text, sizeof text, "A w%d %lld %lld processing\n", i, lo[i], hi[i]);
            put(names[i], text);
        }
        int par[10];
        for (int i = 0; i < n; i++)
            par[i] = i;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (lo[i] <= hi[j] && lo[j] <= hi[i])
                    par[find(par, i)] = find(par, j);
        int ngroups = 0;
        for (int i = 0; i < n; i++)
            ngroups += find(par, i) == i;
        const char *dirs[] = {dir};
        lp_diags ds;
        lp_diags_init(&ds, 0);
        lp_error err;
        lp_runs r;
        CHECK(lp_load_runs(dirs, 1, NULL, &ds, &r, &err) == LP_OK);
        CHECK_EQ_I(r.n, ngroups);
        if ((int)r.n == ngroups && ngroups > 1) {
            /* every run is exactly one group of the twin */
            for (size_t k = 0; k < r.n; k++) {
                int g = find(par, which(names, n, r.paths[r.first[k]]));
                int members = 0;
                for (size_t i = r.first[k]; i < r.first[k + 1]; i++) {
                    int f = which(names, n, r.paths[i]);
                    CHECK(f >= 0 && find(par, f) == g);
                }
                for (int i = 0; i < n; i++)
                    members += find(par, i) == g;
                CHECK_EQ_I(r.first[k + 1] - r.first[k], members);
            }
            multi++;
        }
        cases++;
        lp_runs_release(&r);
        lp_diags_release(&ds);
        for (int i = 0; i < n; i++)
            unlink(names[i]);
    }
    CHECK(multi > 50); /* the random cases do exercise several runs */
    fprintf(stderr, "runs: %d random cases, %d with several runs\n", cases, multi);
    rmdir(dir);
}

int main(void)
{
    test_sniff();
    test_known();
    test_differential();
    return t_done("test_runs");
}
