/* test_cptrace.c: the critical path computed from the trace's columns (lp_cpath_trace,
 * cptrace.c) against its twin over the program activity graph (lp_pag_build +
 * lp_cpath_compute, itself checked against exhaustive enumeration in test_cpath.c):
 * the same path element for element, the same counts, the same three breakdowns byte
 * for byte, on 5,000 random traces made to hit every corner (zero-time message cycles,
 * messages to oneself, skewed messages, zero-length activities, gaps, waiting,
 * message instants at and inside activity boundaries), on windows of them, on
 * generated dataflow jobs, and under allocation failures (an error, never a crash). */
#include "t.h"
#include "tutil.h"

#include <stdlib.h>

static int pag_cp(const lp_trace *t, lp_cpath *cp)
{
    lp_pag g;
    lp_error err;
    if (lp_pag_build(t, &g, &err))
        return -1;
    int rc = lp_cpath_compute(&g, cp, &err) ? -1 : 0;
    lp_pag_release(&g);
    return rc;
}

static int same_elems(const lp_cpath *a, const lp_cpath *b)
{
    if (a->n != b->n || a->start != b->start || a->end != b->end || a->total != b->total ||
        a->ncycles != b->ncycles || a->nskew != b->nskew)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        const lp_cp_elem *x = &a->e[i], *y = &b->e[i];
        if (x->kind != y->kind || x->worker != y->worker || x->index != y->index || x->start != y->start ||
            x->end != y->end)
            return 0;
    }
    return 1;
}

/* The three breakdowns of both paths are equal row for row. */
static int same_breakdowns(const lp_trace *t, const lp_cpath *a, const lp_cpath *b)
{
    int ok = 1;
    lp_error err;
    for (int g = 0; g < 3 && ok; g++) {
        lp_breakdown x, y;
        if (lp_breakdown_compute(t, a, (lp_group)g, &x, &err))
            return 0;
        if (lp_breakdown_compute(t, b, (lp_group)g, &y, &err)) {
            lp_breakdown_release(&x);
            return 0;
        }
        ok = x.n == y.n && x.path_total == y.path_total && x.prof_total == y.prof_total &&
             x.waiting_ns == y.waiting_ns && x.gap_ns == y.gap_ns;
        for (size_t i = 0; ok && i < x.n; i++)
            ok = x.rows[i].key == y.rows[i].key && x.rows[i].path_ns == y.rows[i].path_ns &&
                 x.rows[i].path_n == y.rows[i].path_n && x.rows[i].prof_ns == y.rows[i].prof_ns &&
                 x.rows[i].prof_n == y.rows[i].prof_n;
        lp_breakdown_release(&x);
        lp_breakdown_release(&y);
    }
    return ok;
}

/* What `cp` runs (lp_cpath_analyse: path and breakdowns, on two threads when
 * lp_cpath_parallel_min allows) gives the PAG path and its breakdowns. */
static int same_analysis(const lp_trace *t, const lp_cpath *a)
{
    lp_cpath c;
    lp_breakdown bd[3];
    lp_error err;
    if (lp_cpath_analyse(t, &c, bd, &err))
        return 0;
    int ok = same_elems(a, &c);
    for (int g = 0; g < 3; g++) {
        lp_breakdown x;
        if (lp_breakdown_compute(t, a, (lp_group)g, &x, &err)) {
            ok = 0;
            continue;
        }
        ok &= x.n == bd[g].n && x.path_total == bd[g].path_total && x.prof_total == bd[g].prof_total &&
              x.waiting_ns == bd[g].waiting_ns && x.gap_ns == bd[g].gap_ns && bd[g].by == (lp_group)g;
        for (size_t i = 0; ok && i < x.n; i++)
            ok = x.rows[i].key == bd[g].rows[i].key && x.rows[i].path_ns == bd[g].rows[i].path_ns &&
                 x.rows[i].path_n == bd[g].rows[i].path_n && x.rows[i].prof_ns == bd[g].rows[i].prof_ns &&
                 x.rows[i].prof_n == bd[g].rows[i].prof_n;
        lp_breakdown_release(&x);
        lp_breakdown_release(&bd[g]);
    }
    lp_cpath_release(&c);
    return ok;
}

/* One trace: both forms agree (and the lean one succeeds whenever the PAG one does). */
static int agree(const lp_trace *t, uint64_t *cycles)
{
    lp_cpath a, b;
    lp_error err;
    if (pag_cp(t, &a))
        return 0;
    if (lp_cpath_trace(t, &b, &err)) {
        fprintf(stderr, "lp_cpath_trace: %s\n", err.msg);
        lp_cpath_release(&a);
        return 0;
    }
    int ok = same_elems(&a, &b) && same_breakdowns(t, &a, &b) && same_analysis(t, &a);
    if (!ok && getenv("CPT_DEBUG")) {
        const lp_cpath *p[2] = {&a, &b};
        for (int q = 0; q < 2; q++) {
            fprintf(stderr, "%s: %lld..%lld n=%zu cyc=%llu:", q ? "lean" : "pag", (long long)p[q]->start,
                    (long long)p[q]->end, p[q]->n, (unsigned long long)p[q]->ncycles);
            for (size_t i = 0; i < p[q]->n; i++)
                fprintf(stderr, " %c%u:%llu[%lld,%lld]", p[q]->e[i].kind ? 'M' : 'A', p[q]->e[i].worker,
                        (unsigned long long)p[q]->e[i].index, (long long)p[q]->e[i].start, (long long)p[q]->e[i].end);
            fprintf(stderr, "\n");
        }
    }
    *cycles += a.ncycles;
    lp_cpath_release(&a);
    lp_cpath_release(&b);
    return ok;
}

static uint64_t rng;
static int64_t rin(int64_t lo, int64_t hi) { return lo + (int64_t)(t_splitmix(&rng) % (uint64_t)(hi - lo + 1)); }

static const char *types[] = {"processing", "serialization", "waiting", "io", "buffer", "waiting"};

/* A small random trace as text: every corner the model allows. */
static char *random_trace(char *buf, size_t cap)
{
    size_t n = 0;
    int nw = (int)rin(1, 6);
    for (int w = 0; w < nw; w++) {
        int64_t tc = rin(0, 6);
        int na = (int)rin(0, 7);
        for (int k = 0; k < na; k++) {
            if (rin(0, 3) == 0)
                tc += rin(1, 4); /* a gap */
            int64_t d = rin(0, 7) == 0 ? 0 : rin(1, 6);
            n += (size_t)snprintf(buf + n, cap - n, "A w%d %lld %lld %s op%d\n", w, (long long)tc,
                                  (long long)(tc + d), types[rin(0, 5)], (int)rin(0, 2));
            tc += d;
        }
    }
    int nm = (int)rin(0, 10);
    for (int k = 0; k < nm; k++) {
        int a = (int)rin(0, nw - 1), b = (int)rin(0, nw - 1);
        int64_t s = rin(0, 30), r = s + rin(0, 8);
        int kind = (int)rin(0, 9);
        if (kind == 0)
            r = s - rin(1, 5); /* skewed */
        else if (kind <= 2)
            r = s; /* zero time: may close cycles, even to oneself */
        n += (size_t)snprintf(buf + n, cap - n, "M w%d %lld w%d %lld id=%d\n", a, (long long)s, b, (long long)r, k);
    }
    return buf;
}

static void test_random(void)
{
    static char buf[16384];
    rng = 20261127;
    int mismatches = 0, windows = 0;
    uint64_t cycles = 0;
    for (int iter = 0; iter < 5000; iter++) {
        char *txt = random_trace(buf, sizeof buf);
        lp_diags ds;
        lp_trace *t = load_text(txt, &ds);
        CHECK(t != NULL);
        if (!t) {
            lp_diags_release(&ds);
            continue;
        }
        int ok = agree(t, &cycles);
        if (ok && t->tmax > t->tmin && iter % 4 == 0) { /* and a window of it */
            int64_t a = rin(t->tmin, t->tmax), b = rin(a, t->tmax);
            lp_trace *w;
            lp_error err;
            if (lp_trace_window(t, a, b, &w, &err) == LP_OK) {
                ok = agree(w, &cycles);
                windows++;
                lp_trace_free(w);
            }
        }
        if (!ok && mismatches++ < 3)
            fprintf(stderr, "mismatch (iteration %d):\n%s", iter, txt);
        lp_trace_free(t);
        lp_diags_release(&ds);
    }
    CHECK_EQ_I(mismatches, 0);
    CHECK(windows > 500);
    CHECK(cycles > 0); /* the cycle breaking was exercised */
}

/* Generated jobs: long timelines, many messages, two-thread PAG build. */
static void test_dataflow(void)
{
    uint64_t cycles = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        lp_gen_dataflow o;
        lp_gen_dataflow_defaults(&o);
        o.max_records = 200000 * seed;
        o.seed = seed;
        lp_trace *t = NULL;
        lp_error err;
        CHECK(lp_gen_dataflow_run(&o, &t, &err) == LP_OK);
        if (!t)
            continue;
        CHECK(agree(t, &cycles));
        lp_trace_free(t);
    }
}

/* Every allocation failing in turn: an error, never a crash or a leak (ASan). */
static void test_alloc_failures(void)
{
    lp_diags ds;
    lp_trace *t = load_text("A a 0 10 processing\nA b 0 10 processing\n"
                            "M a 10 b 10 id=1\nM b 10 a 10 id=2\n"
                            "A a 10 20 processing\nA b 10 30 processing\nM a 20 b 25 id=3\n",
                            &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    int failed = 0, succeeded = 0;
    for (long k = 0; k < 40; k++) {
        lp_cpath cp;
        lp_error err;
        lp_alloc_fail_after(k);
        lp_status st = lp_cpath_trace(t, &cp, &err);
        lp_alloc_fail_after(-1);
        if (st) {
            CHECK(st == LP_ERR_NOMEM);
            CHECK(cp.n == 0 && cp.e == NULL);
            failed++;
        } else {
            CHECK_EQ_I(cp.total, 30);
            CHECK(cp.ncycles >= 1);
            succeeded++;
        }
        lp_cpath_release(&cp);
    }
    CHECK(failed > 3 && succeeded > 0);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

int main(void)
{
    test_random();
    uint64_t keep = lp_cpath_parallel_min;
    lp_cpath_parallel_min = 0; /* everything again on two threads */
    test_random();
    test_dataflow();
    lp_cpath_parallel_min = UINT64_MAX;
    test_dataflow();
    lp_cpath_parallel_min = keep;
    test_alloc_failures();
    return t_done("test_cptrace");
}
