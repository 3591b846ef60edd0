/* test_g10_path.c: the resources of a critical path's phases (path.h) against a naive
 * twin (every path element's phase found by a linear search, its share applied by hand)
 * on 600 random traces with random monitoring, and the invariants: the path's length is
 * its phase time plus the rest, no resource has more path time than the path, nor more
 * bottleneck time than path time on phases using it; and a trace the phases were not
 * built from is refused. */
#include "t.h"
#include "tutil.h"
#include "longpole/analysis/critical-path/cpath.h"
#include "longpole/analysis/grade10/attrib.h"
#include "longpole/analysis/grade10/exec.h"
#include "longpole/analysis/grade10/model.h"
#include "longpole/analysis/grade10/path.h"
#include "longpole/import/grade10.h"
#include "longpole/model/pag.h"

#include <math.h>

static uint64_t rng = 99;
static uint64_t rnd(void) { return t_splitmix(&rng); }
static int64_t rint_(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static const char *types[] = {"processing", "serialization", "waiting", "io", "other"};

/* workers of activities (some of a type the model lacks), messages between them */
static void random_trace(char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "longpole-trace 1\n");
    int nw = (int)rint_(1, 4);
    for (int w = 0; w < nw; w++) {
        int64_t t = rint_(0, 5);
        for (int k = (int)rint_(1, 6); k > 0; k--) {
            if (rnd() % 3 == 0)
                t += rint_(1, 4);
            int64_t d = rint_(1, 6);
            n += (size_t)snprintf(buf + n, cap - n, "A w%d %lld %lld %s op\n", w, (long long)t, (long long)(t + d),
                                  w == 0 && n < 40 ? "processing" : types[rnd() % 5]); /* one phase at least */
            t += d;
        }
    }
    for (int k = (int)rint_(0, 5); k > 0; k--) {
        int a = (int)rint_(0, nw - 1), b = (int)rint_(0, nw - 1);
        int64_t s = rint_(0, 25);
        n += (size_t)snprintf(buf + n, cap - n, "M w%d %lld w%d %lld\n", a, (long long)s, b,
                              (long long)(s + rint_(1, 8)));
    }
}

static const char *model_text = "grade10-model 1\ntrace-phase type\nslice 1ns\n"
                                "phase /Worker concurrent worker serial\n"
                                "phase /Worker/processing concurrent activity\n"
                                "phase /Worker/serialization concurrent activity\n"
                                "phase /Worker/waiting concurrent activity\n"
                                "phase /Worker/io concurrent activity\n"
                                "resource cpu consumable metric=cpu sample=mean capacity=2\n"
                                "resource disk consumable metric=disk sample=mean capacity=1\n"
                                "default consumable none\n"
                                "rule /**/processing cpu exact 1\nrule /**/serialization cpu variable 1\n"
                                "rule /**/io disk variable 1\nrule /**/io cpu variable 0.2\n";

static lp_status read_mon(lp_g10_data *d, lp_diags *ds)
{
    char m[4096];
    size_t n = (size_t)snprintf(m, sizeof m, "time,host,metric,value\n");
    for (int64_t t = 0; t <= 60; t += 4)
        n += (size_t)snprintf(m + n, sizeof m - n, "%lld,h,cpu,%.3f\n%lld,h,disk,%.3f\n", (long long)t,
                              (double)(rnd() % 2200) / 1000, (long long)t, (double)(rnd() % 1100) / 1000);
    lp_input *in;
    lp_error err;
    lp_g10_read_opts o = {1};
    if (lp_input_open_mem(&in, m, n, "mon.csv", &err))
        return LP_ERR_NOMEM;
    lp_status st = lp_g10_read_monitor(d, in, &o, ds, &err);
    lp_input_close(in);
    return st;
}

/* the naive twin of lp_g10_path_of */
static void twin(const lp_g10_attr *a, const lp_trace *t, const lp_cpath *cp, lp_g10_path *p)
{
    const lp_g10_exec *x = a->x;
    for (size_t i = 0; i < cp->n; i++) {
        const lp_cp_elem *e = &cp->e[i];
        int64_t len = e->end - e->start;
        uint32_t q = LP_G10_NONE;
        for (uint32_t k = 0; e->kind == LP_CP_ACTIVITY && k < x->n; k++)
            if (x->size[k] == 1 && x->src[k] == e->index + 1)
                q = k;
        if (q == LP_G10_NONE) {
            p->other_ns += len;
            continue;
        }
        p->phase_ns += len;
        double share = (double)len / (double)(x->end[q] - x->start[q]);
        for (uint32_t r = 0; r < a->m->nres; r++)
            for (size_t u = 0; u < a->nuse[r]; u++)
                if (a->use[r][u].phase == q) {
                    p->res[r].with_ns += len;
                    p->res[r].used += a->use[r][u].used * share;
                    int64_t bn = (int64_t)((double)a->use[r][u].bn_ns * share + 0.5);
                    p->res[r].bn_ns += bn < len ? bn : len;
                }
    }
    (void)t;
}

static void test_random(void)
{
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_error err;
    lp_g10_model *m = NULL;
    CHECK(lp_g10_model_parse(&m, model_text, strlen(model_text), "m.g10", &ds, &err) == LP_OK);
    int bad = 0, paths = 0;
    for (int c = 0; m && c < 600; c++) {
        char buf[8192];
        random_trace(buf, sizeof buf);
        lp_diags tds;
        lp_trace *t = load_text(buf, &tds); /* initialises tds */
        lp_g10_data d;
        lp_g10_exec *x = NULL;
        lp_g10_attr *a = NULL;
        lp_pag g;
        lp_cpath cp = {0};
        lp_g10_path p = {0}, q = {0};
        lp_g10_opts o = {LP_G10_SLICES, 0, 1};
        int ok = t && !lp_g10_data_init(&d, &err);
        if (ok && (read_mon(&d, &tds) || lp_g10_exec_from_trace(m, t, &tds, &x, &err) ||
                   lp_g10_attribute(m, x, &d, &o, &tds, &a, &err) || lp_pag_build(t, &g, &err)))
            ok = 0, bad++, fprintf(stderr, "case %d: %s\n%s", c, err.msg, buf);
        if (ok && !lp_cpath_compute(&g, &cp, &err) && lp_g10_path_of(a, t, &cp, &p, &err) == LP_OK) {
            paths++;
            q.res = calloc(m->nres, sizeof *q.res);
            twin(a, t, &cp, &q);
            int same = p.on_path_ns == cp.total && p.phase_ns + p.other_ns == cp.total &&
                       p.phase_ns == q.phase_ns && p.other_ns == q.other_ns;
            for (uint32_t r = 0; r < m->nres; r++) {
                same &= p.res[r].with_ns == q.res[r].with_ns && p.res[r].bn_ns == q.res[r].bn_ns &&
                        fabs(p.res[r].used - q.res[r].used) <= 1e-12 * (1 + fabs(q.res[r].used));
                same &= p.res[r].bn_ns <= p.res[r].with_ns && p.res[r].with_ns <= p.phase_ns && p.res[r].used >= 0;
            }
            if (!same && bad++ < 3)
                fprintf(stderr, "case %d: path breakdown differs from its twin or breaks an invariant:\n%s", c, buf);
            free(q.res);
            lp_g10_path_release(&p);
        }
        if (ok)
            lp_pag_release(&g);
        lp_cpath_release(&cp);
        lp_g10_attr_free(a);
        lp_g10_exec_free(x);
        if (t)
            lp_g10_data_release(&d);
        lp_trace_free(t);
        lp_diags_release(&tds);
    }
    CHECK_EQ_I(bad, 0);
    CHECK(paths > 500);
    lp_g10_model_free(m);
    lp_diags_release(&ds);
}

/* phases built from one trace, a path of another: refused, not a confident answer */
static void test_foreign(void)
{
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_error err;
    lp_g10_model *m = NULL;
    CHECK(lp_g10_model_parse(&m, model_text, strlen(model_text), "m.g10", &ds, &err) == LP_OK);
    lp_diags ds1, ds2;
    lp_trace *t1 = load_text("longpole-trace 1\nA w0 0 10 processing op\nA w0 10 20 io op\n", &ds1);
    lp_trace *t2 = load_text("longpole-trace 1\nA w0 0 7 processing op\nA w0 7 20 io op\n", &ds2);
    lp_g10_data d;
    lp_g10_exec *x = NULL;
    lp_g10_attr *a = NULL;
    lp_g10_opts o = {LP_G10_SLICES, 0, 1};
    CHECK(m && t1 && t2 && !lp_g10_data_init(&d, &err));
    if (m && t1 && t2) {
        CHECK(lp_g10_exec_from_trace(m, t1, &ds, &x, &err) == LP_OK);
        CHECK(x && lp_g10_attribute(m, x, &d, &o, &ds, &a, &err) == LP_OK);
        lp_pag g;
        lp_cpath cp = {0};
        lp_g10_path p = {0};
        CHECK(lp_pag_build(t2, &g, &err) == LP_OK && lp_cpath_compute(&g, &cp, &err) == LP_OK);
        CHECK(a && lp_g10_path_of(a, t2, &cp, &p, &err) == LP_ERR_ARG);
        lp_g10_path_release(&p);
        lp_cpath_release(&cp);
        lp_pag_release(&g);
        lp_g10_data_release(&d);
    }
    lp_g10_attr_free(a);
    lp_g10_exec_free(x);
    lp_trace_free(t1);
    lp_trace_free(t2);
    lp_diags_release(&ds1);
    lp_diags_release(&ds2);
    lp_g10_model_free(m);
    lp_diags_release(&ds);
}

int main(void)
{
    test_random();
    test_foreign();
    return t_done("test_g10_path");
}
