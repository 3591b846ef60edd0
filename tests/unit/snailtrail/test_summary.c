/* test_summary.c: the four summaries (summary.h) and the window machinery (window.h)
 * against naive twins:
 *  - per-key CP equals the sum over enumerated transient paths (naive twin, cptest.h);
 *  - the conventional profile equals lp_breakdown's profile of the projected trace;
 *  - the sampled path's column adds up to the window's span;
 *  - the window grid equals its definition; planned and unplanned windows agree;
 *  - the thread pool gives bit-identical results with 1, 2 and 3 threads, in order,
 *    and stops cleanly when the callback asks. */
#include "t.h"
#include "tutil.h"
#include "cptest.h"

#include <math.h>

/* ---- summaries against enumeration and against lp_breakdown ----------------------------- */

typedef struct lab { char key[96]; double cp; int64_t prof; } lab;

static lab *lab_get(lab *a, int *n, const char *key)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(a[i].key, key) == 0)
            return &a[i];
    snprintf(a[*n].key, sizeof a[*n].key, "%s", key);
    a[*n].cp = 0;
    a[*n].prof = 0;
    return &a[(*n)++];
}

static int summaries_checked;

static void check_window(const lp_trace *t, const lp_snapsrc *src, const lp_sumkeys *keys, lp_winws *ws,
                         lp_winres *r, int64_t ts, int64_t te)
{
    lp_error err;
    lp_winopts o = {(1u << LP_SUM_NKINDS) - 1, 7, 0, 0};
    CHECK(lp_window_analyze(ws, src, keys, 0, ts, te, &o, r, &err) == LP_OK);
    lp_trace *wt;
    if (lp_trace_window(t, ts, te, &wt, &err) != LP_OK) {
        CHECK(0);
        return;
    }
    lp_pag g;
    CHECK(lp_pag_build(wt, &g, &err) == LP_OK);
    char buf[160];
    /* profiles against lp_breakdown (activity, worker, operator) */
    static const lp_group groups[3] = {LP_BY_TYPE, LP_BY_WORKER, LP_BY_OPERATOR};
    for (int k = 0; k < 3; k++) {
        lp_breakdown bd;
        CHECK(lp_breakdown_compute(wt, NULL, groups[k], &bd, &err) == LP_OK);
        const lp_summary *s = &r->sum[k];
        CHECK_EQ_I(s->prof_total, bd.prof_total);
        CHECK_EQ_I(s->waiting_ns, bd.waiting_ns);
        for (size_t i = 0; i < bd.n; i++) {
            const char *want = lp_breakdown_label(wt, &bd, &bd.rows[i]);
            int64_t got = 0;
            for (size_t j = 0; j < s->n; j++)
                if (strcmp(lp_sumkeys_label(keys, s->kind, s->rows[j].key, buf, sizeof buf), want) == 0)
                    got = s->rows[j].prof_ns;
            CHECK_EQ_I(got, bd.rows[i].prof_ns);
        }
        lp_breakdown_release(&bd);
    }
    /* CP per key against the enumeration */
    naive nv;
    if (naive_count(&nv, &g, 2e5) && nv.n > 0 && nv.t1 > nv.t0) {
        summaries_checked++;
        lab acc[4][256];
        int na[4] = {0, 0, 0, 0};
        double norm = nv.n * (double)(nv.t1 - nv.t0);
        for (uint32_t w = 0; w < g.nworkers; w++)
            for (uint64_t v = g.voff[w] + 1; v < g.voff[w + 1]; v++) {
                uint32_t a = g.vact[v];
                if (a == LP_NONE32 || wt->atype[a] == LP_TYPE_WAITING)
                    continue;
                double cp = nv.cw[v] * (double)(g.vtime[v] - g.vtime[v - 1]) / norm;
                lab_get(acc[0], &na[0], lp_trace_type_name(wt, wt->atype[a]))->cp += cp;
                lab_get(acc[1], &na[1], lp_trace_worker_name(wt, w))->cp += cp;
                lab_get(acc[2], &na[2], wt->aop[a] == LP_STR_NONE ? "-" : lp_trace_str(wt, wt->aop[a]))->cp += cp;
            }
        for (uint64_t m = 0; m < wt->nmsgs; m++) {
            if (wt->mflags[m] & LP_MSG_SKEW)
                continue;
            double cp = nv.cm[m] * (double)(wt->mrecv[m] - wt->msend[m]) / norm;
            for (int k = 0; k < 3; k++)
                lab_get(acc[k], &na[k], "communication")->cp += cp;
            snprintf(buf, sizeof buf, "%s -> %s", lp_trace_worker_name(wt, wt->msrc[m]),
                     lp_trace_worker_name(wt, wt->mdst[m]));
            lab *l = lab_get(acc[3], &na[3], buf);
            l->cp += cp;
            if (wt->msrc[m] != wt->mdst[m]) /* a message to oneself is no communication time */
                l->prof += wt->mrecv[m] - wt->msend[m];
        }
        for (int k = 0; k < 4; k++) {
            const lp_summary *s = &r->sum[k];
            double total = 0;
            for (int i = 0; i < na[k]; i++) {
                double got = 0;
                int64_t prof = 0;
                for (size_t j = 0; j < s->n; j++)
                    if (strcmp(lp_sumkeys_label(keys, s->kind, s->rows[j].key, buf, sizeof buf), acc[k][i].key) == 0) {
                        got = s->rows[j].cp;
                        prof = s->rows[j].prof_ns;
                    }
                CHECK(fabs(got - acc[k][i].cp) <= 1e-12);
                if (k == 3)
                    CHECK_EQ_I(prof, acc[k][i].prof);
                total += acc[k][i].cp;
            }
            CHECK(fabs(s->cp_total - total) <= 1e-12);
            if (k < 3)
                CHECK(fabs(s->cp_total - 1) <= 1e-12);
            /* rows are sorted by rank (workers and operators: comm and "-" last) */
            for (size_t j = 1; j < s->n; j++) {
                int sp0 = k != 0 && k != 3 && s->rows[j - 1].key >= LP_SUMKEY_NONE;
                int sp1 = k != 0 && k != 3 && s->rows[j].key >= LP_SUMKEY_NONE;
                CHECK(sp0 <= sp1);
                if (sp0 == sp1)
                    CHECK(s->rows[j - 1].rank >= s->rows[j].rank);
            }
            /* the single path: its column adds up to the window (messages only, for comm) */
            int64_t ps = 0;
            for (size_t j = 0; j < s->n; j++)
                ps += s->rows[j].path_ns;
            if (k < 3)
                CHECK_EQ_I(ps, nv.t1 - nv.t0);
            CHECK_EQ_I(s->path_total, nv.t1 - nv.t0);
        }
    }
    naive_free(&nv);
    lp_pag_release(&g);
    lp_trace_free(wt);
}

static lp_trace *with_operators(lp_trace *t)
{
    /* give the random trace's activities operators: a round trip through text */
    if (!t)
        return NULL;
    char *text = write_text(t);
    lp_trace_free(t);
    if (!text)
        return NULL;
    size_t n = strlen(text);
    char *out = malloc(2 * n + 1), *o = out;
    for (char *line = text; *line;) {
        char *e = strchr(line, '\n');
        size_t len = e ? (size_t)(e - line) : strlen(line);
        memcpy(o, line, len);
        o += len;
        if (line[0] == 'A') {
            static const char *ops[] = {" map", " reduce", " -"};
            const char *op = ops[rnd(3)];
            memcpy(o, op, strlen(op));
            o += strlen(op);
        }
        *o++ = '\n';
        line += len + (e ? 1 : 0);
    }
    *o = '\0';
    free(text);
    lp_diags ds;
    lp_trace *r = load_text(out, &ds);
    lp_diags_release(&ds);
    free(out);
    return r;
}

static void test_summaries(void)
{
    lp_winws ws;
    lp_winres r;
    lp_winws_init(&ws);
    lp_winres_init(&r);
    for (int it = 0; it < 600; it++) {
        lp_trace *t = with_operators(random_trace(it % 4 == 0));
        if (!t)
            continue;
        lp_snapsrc src;
        lp_sumkeys keys;
        lp_error err;
        CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
        CHECK(lp_sumkeys_init(&keys, t, &err) == LP_OK);
        check_window(t, &src, &keys, &ws, &r, t->tmin, t->tmax);
        for (int k = 0; k < 3; k++) {
            int64_t a = (int64_t)rnd(40), b = a + 1 + (int64_t)rnd(25);
            check_window(t, &src, &keys, &ws, &r, a, b);
        }
        lp_sumkeys_release(&keys);
        lp_snapsrc_release(&src);
        lp_trace_free(t);
    }
    lp_winres_release(&r);
    lp_winws_release(&ws);
    fprintf(stderr, "summaries: %d windows against enumeration\n", summaries_checked);
    CHECK(summaries_checked > 500);
}

/* Operator parallelism: the workers running each operator. */
static void test_parallelism(void)
{
    lp_diags ds;
    lp_trace *t = load_text("A a 0 10 processing map\nA b 0 10 processing map\nA b 10 20 io src\n"
                            "A c 0 20 processing red\nA c 20 30 processing map\n",
                            &ds);
    CHECK(t != NULL);
    lp_sumkeys k;
    lp_error err;
    CHECK(lp_sumkeys_init(&k, t, &err) == LP_OK);
    CHECK_EQ_I(k.nops, 3);
    for (uint32_t i = 0; i < k.nops; i++) {
        const char *name = lp_trace_str(t, k.opname[i]);
        uint32_t want = strcmp(name, "map") == 0 ? 3 : 1;
        CHECK_EQ_I(k.oppar[i], want);
    }
    lp_sumkeys_release(&k);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* ---- the grid ------------------------------------------------------------------------------ */

static void test_grid(void)
{
    lp_error err;
    lp_wingrid g;
    for (int it = 0; it < 2000; it++) {
        int64_t from = (int64_t)rnd(1000) - 500, to = from + (int64_t)rnd(2000);
        int64_t size = 1 + (int64_t)rnd(300), step = 1 + (int64_t)rnd(300);
        CHECK(lp_wingrid_make(&g, from, to, size, step, &err) == LP_OK);
        CHECK(g.n >= 1);
        CHECK(lp_wingrid_ts(&g, 0) == from);
        CHECK(lp_wingrid_te(&g, g.n - 1) >= to);                   /* the windows reach `to` */
        CHECK(g.n == 1 || lp_wingrid_te(&g, g.n - 2) < to);        /* and no more than needed */
    }
    CHECK(lp_wingrid_make(&g, 0, 10, 0, 1, &err) == LP_ERR_ARG);
    CHECK(lp_wingrid_make(&g, 0, 10, 1, -1, &err) == LP_ERR_ARG);
    CHECK(lp_wingrid_make(&g, 10, 0, 1, 1, &err) == LP_ERR_ARG);
    CHECK(lp_wingrid_make(&g, 0, INT64_MAX / 2, 1, 1, &err) == LP_ERR_LIMIT);
    CHECK(lp_wingrid_make(&g, INT64_MAX - 10, INT64_MAX - 5, 100, 1, &err) == LP_ERR_LIMIT);
}

/* ---- the pool ---------------------------------------------------------------------------- */

typedef struct fp {
    uint64_t index;
    double m, sum, cp[LP_SUM_NKINDS][8];
    int32_t e;
    uint64_t nv, np1, np2, path;
    int64_t prof[LP_SUM_NKINDS][8], pathns[LP_SUM_NKINDS][8];
    uint64_t key[LP_SUM_NKINDS][8];
} fp;

typedef struct collect {
    fp *f;
    size_t n, stop_at;
} collect;

static int on_result(void *ctx, const lp_winres *r)
{
    collect *c = ctx;
    if (c->stop_at && c->n == c->stop_at)
        return 1;
    fp *x = &c->f[c->n++];
    memset(x, 0, sizeof *x);
    x->index = r->index;
    x->m = r->n.m;
    x->e = r->n.e;
    x->sum = r->cp_sum;
    x->nv = r->nv;
    x->np1 = r->check.np1;
    x->np2 = r->check.np2;
    x->path = r->path_edges;
    for (int k = 0; k < LP_SUM_NKINDS; k++)
        for (size_t i = 0; i < r->sum[k].n && i < 8; i++) {
            x->cp[k][i] = r->sum[k].rows[i].cp;
            x->prof[k][i] = r->sum[k].rows[i].prof_ns;
            x->pathns[k][i] = r->sum[k].rows[i].path_ns;
            x->key[k][i] = r->sum[k].rows[i].key;
        }
    return 0;
}

static void test_pool(void)
{
    lp_gen_dataflow o;
    lp_gen_dataflow_defaults(&o);
    o.duration_ns = 120000000;
    o.skew = 0.4;
    lp_trace *t;
    lp_error err;
    CHECK(lp_gen_dataflow_run(&o, &t, &err) == LP_OK);
    lp_snapsrc src, plain;
    lp_sumkeys keys;
    lp_wingrid g;
    CHECK(lp_snapsrc_init(&src, t, &err) == LP_OK);
    CHECK(lp_snapsrc_init(&plain, t, &err) == LP_OK);
    CHECK(lp_sumkeys_init(&keys, t, &err) == LP_OK);
    CHECK(lp_wingrid_make(&g, t->tmin, t->tmax, 25000000, 10000000, &err) == LP_OK);
    CHECK(lp_wingrid_plan(&g, &src, &err) == LP_OK);
    lp_winopts wo = {(1u << LP_SUM_NKINDS) - 1, 3, 0, 0};
    fp *ref = calloc(g.n, sizeof *ref);
    for (unsigned th = 1; th <= 3; th++) {
        for (int planned = 0; planned < 2; planned++) {
            if (th > 1 && !planned)
                continue;
            collect c = {calloc(g.n, sizeof(fp)), 0, 0};
            lp_winpool *p;
            CHECK(lp_winpool_new(&p, th, &wo, on_result, &c, &err) == LP_OK);
            CHECK(lp_winpool_threads(p) == th);
            for (uint64_t k = 0; k < g.n; k++)
                CHECK(lp_winpool_submit(p, planned ? &src : &plain, &keys, k, lp_wingrid_ts(&g, k),
                                        lp_wingrid_te(&g, k), NULL, &err) == LP_OK);
            CHECK(lp_winpool_finish(p, &err) == LP_OK);
            lp_winpool_free(p);
            CHECK_EQ_I(c.n, g.n);
            for (size_t k = 0; k < c.n; k++)
                CHECK_EQ_I(c.f[k].index, k);
            if (th == 1 && !planned)
                memcpy(ref, c.f, g.n * sizeof *ref);
            else
                CHECK(memcmp(ref, c.f, g.n * sizeof *ref) == 0);
            free(c.f);
        }
    }
    /* the windows are not trivial */
    int paths = 0;
    for (uint64_t k = 0; k < g.n; k++)
        paths += ref[k].m > 0 && fabs(ref[k].sum - 1) < 1e-9;
    CHECK(paths >= (int)g.n - 1);
    /* a callback that stops the run */
    for (unsigned th = 1; th <= 2; th++) {
        collect c = {calloc(g.n, sizeof(fp)), 0, 3};
        lp_winpool *p;
        CHECK(lp_winpool_new(&p, th, &wo, on_result, &c, &err) == LP_OK);
        lp_status st = LP_OK;
        for (uint64_t k = 0; k < g.n && !st; k++)
            st = lp_winpool_submit(p, &src, &keys, k, lp_wingrid_ts(&g, k), lp_wingrid_te(&g, k), NULL, &err);
        if (!st)
            st = lp_winpool_finish(p, &err);
        CHECK(st == LP_ERR_ARG);
        CHECK_EQ_I(c.n, 3);
        lp_winpool_free(p);
        free(c.f);
    }
    free(ref);
    lp_sumkeys_release(&keys);
    lp_snapsrc_release(&src);
    lp_snapsrc_release(&plain);
    lp_trace_free(t);
}

int main(void)
{
    test_grid();
    test_parallelism();
    test_summaries();
    test_pool();
    return t_done("test_summary");
}
