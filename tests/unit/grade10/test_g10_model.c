/* test_g10_model.c: the Grade10 model file (docs/formats/grade10-model.md): a full
 * model read back, rules decided by the first matching line, path patterns, and bad
 * models (cycles, unknown phases and resources, bad values) refused with their line. */
#include "t.h"
#include "tutil.h"
#include "longpole/analysis/grade10/model.h"

static lp_g10_model *parse(const char *text, lp_diags *ds, lp_status *st)
{
    lp_diags_init(ds, 50);
    lp_error err;
    lp_g10_model *m = NULL;
    *st = lp_g10_model_parse(&m, text, strlen(text), "m.g10", ds, &err);
    return m;
}

static int diag_at(const lp_diags *ds, unsigned long long line, const char *needle)
{
    for (size_t i = 0; i < ds->nkept; i++)
        if ((!line || ds->kept[i].line == line) && ds->kept[i].rule == LP_RULE_MODEL && strstr(ds->kept[i].msg, needle))
            return 1;
    return 0;
}

static const char *good =
    "# a Giraph-like job\n"
    "grade10-model 1\n"
    "slice 5ms\n"
    "phase /Load\n"
    "phase /Load/Worker concurrent worker\n"
    "phase /Run after Load\n"
    "phase /Run/Superstep sequential superstep\n"
    "phase /Run/Superstep/Compute concurrent worker\n"
    "phase /Run/Superstep/Compute/Thread concurrent thread\n"
    "phase /Run/Superstep/Barrier after Compute\n"
    "phase /Write once after Run\n"
    "resource cpu consumable metric=proc.cpu sample=counter capacity=8 unit=cores\n"
    "resource net consumable metric=net.rx sample=mean capacity=1.25e8 scale=1\n"
    "resource gc blocking\n"
    "capacity cpu big 32\n"
    "rule /**/Thread cpu exact 1\n"
    "rule /Run/** cpu variable 2\n"
    "rule /**/Thread net none\n"
    "rule /Load/* cpu exact 50%\n"
    "rule /Run/Superstep/Compute/** gc full\n"
    "bottleneck 90%\n"
    "host-key node\n";

static void test_good(void)
{
    lp_diags ds;
    lp_status st;
    lp_g10_model *m = parse(good, &ds, &st);
    CHECK(st == LP_OK && m);
    if (!m)
        return;
    CHECK_EQ_I(m->ntypes, 9);
    CHECK_EQ_I(m->slice_ns, 5000000);
    CHECK(m->bottleneck == 0.9);
    CHECK_STR(lp_g10_model_str(m, m->host_key), "node");
    uint32_t thr = lp_g10_model_type(m, "/Run/Superstep/Compute/Thread");
    uint32_t ss = lp_g10_model_type(m, "/Run/Superstep");
    uint32_t bar = lp_g10_model_type(m, "/Run/Superstep/Barrier");
    uint32_t lw = lp_g10_model_type(m, "/Load/Worker");
    uint32_t cpu = lp_g10_model_res(m, "cpu"), net = lp_g10_model_res(m, "net"), gc = lp_g10_model_res(m, "gc");
    CHECK(thr != LP_G10_NONE && ss != LP_G10_NONE && bar != LP_G10_NONE && lw != LP_G10_NONE);
    CHECK(cpu == 0 && net == 1 && gc == 2);
    CHECK_EQ_I(m->type[ss].repeat, LP_G10_SEQUENTIAL);
    CHECK_STR(lp_g10_model_str(m, m->type[ss].key), "superstep");
    CHECK_EQ_I(m->type[thr].depth, 4);
    uint8_t k;
    CHECK(lp_g10_rule_of(m, thr, cpu, 8, &k) == 1 && k == LP_G10_RULE_EXACT);
    CHECK(lp_g10_rule_of(m, bar, cpu, 8, &k) == 2 && k == LP_G10_RULE_VARIABLE);
    CHECK(lp_g10_rule_of(m, lw, cpu, 8, &k) == 4 && k == LP_G10_RULE_EXACT); /* 50% of 8 */
    lp_g10_rule_of(m, thr, net, 1, &k);
    CHECK_EQ_I(k, LP_G10_RULE_NONE);
    lp_g10_rule_of(m, bar, net, 1, &k);
    CHECK_EQ_I(k, LP_G10_RULE_VARIABLE); /* default variable 1 */
    lp_g10_rule_of(m, thr, gc, 0, &k);
    CHECK_EQ_I(k, LP_G10_RULE_FULL);
    lp_g10_rule_of(m, bar, gc, 0, &k);
    CHECK_EQ_I(k, LP_G10_RULE_NONE);
    CHECK(lp_g10_model_capacity(m, cpu, "big") == 32);
    CHECK(lp_g10_model_capacity(m, cpu, "small") == 8);
    CHECK(m->res[net].sample == LP_G10_MEAN && m->res[cpu].sample == LP_G10_COUNTER);
    CHECK_EQ_I(m->nafter, 3);
    /* Barrier comes after Compute in the sibling order of Superstep */
    uint32_t f = m->sib_first[ss], comp = lp_g10_model_type(m, "/Run/Superstep/Compute");
    CHECK(m->sib_order[f] == comp && m->sib_order[f + 1] == bar);
    CHECK_EQ_I(ds.nerrors, 0);
    lp_g10_model_free(m);
    lp_diags_release(&ds);
}

static void test_patterns(void)
{
    CHECK(lp_g10_path_match("/**", "/"));
    CHECK(lp_g10_path_match("/**", "/a/b/c"));
    CHECK(lp_g10_path_match("/a/**/c", "/a/c"));
    CHECK(lp_g10_path_match("/a/**/c", "/a/x/y/c"));
    CHECK(!lp_g10_path_match("/a/**/c", "/a/x/y/d"));
    CHECK(lp_g10_path_match("/*/b", "/zz/b"));
    CHECK(!lp_g10_path_match("/*/b", "/b"));
    CHECK(lp_g10_path_match("/**/*Thread", "/S/Gather/WorkerGather/GatherThread"));
    CHECK(!lp_g10_path_match("/**/*Thread", "/S/Gather/WorkerGather"));
    CHECK(lp_g10_path_match("/a/**/**/b", "/a/b"));
}

static void bad_model(const char *text, unsigned long long line, const char *needle, lp_status want)
{
    lp_diags ds;
    lp_status st;
    lp_g10_model *m = parse(text, &ds, &st);
    CHECK(m == NULL);
    CHECK_EQ_I(st, want);
    if (needle && !diag_at(&ds, line, needle)) {
        t_failures++;
        fprintf(stderr, "no diagnostic at line %llu containing '%s'; got:\n", line, needle);
        for (size_t i = 0; i < ds.nkept; i++)
            fprintf(stderr, "   %llu: %s\n", (unsigned long long)ds.kept[i].line, ds.kept[i].msg);
    }
    lp_diags_release(&ds);
}

static void test_bad(void)
{
    bad_model("phase /A\n", 0, NULL, LP_ERR_FORMAT);
    bad_model("grade10-model 2\nphase /A\n", 0, NULL, LP_ERR_UNSUPPORTED);
    bad_model("", 0, NULL, LP_ERR_FORMAT);
    /* a cycle of after edges */
    bad_model("grade10-model 1\nphase /A after C\nphase /B after A\nphase /C after B\n", 0, "cycle", LP_ERR_DATA);
    bad_model("grade10-model 1\nphase /A after A\n", 2, "after itself", LP_ERR_DATA);
    /* unknown phases */
    bad_model("grade10-model 1\nphase /A/B\n", 2, "not declared", LP_ERR_DATA);
    bad_model("grade10-model 1\nphase /A\nphase /B after Z\n", 3, "no sibling named 'Z'", LP_ERR_DATA);
    bad_model("grade10-model 1\nphase /A\nphase /A/X\nphase /B after X\n", 4, "no sibling", LP_ERR_DATA);
    bad_model("grade10-model 1\nphase /A\nphase /A\n", 3, "twice", LP_ERR_DATA);
    bad_model("grade10-model 1\nphase A\n", 2, "start with '/'", LP_ERR_DATA);
    bad_model("grade10-model 1\nphase /A concurrent\n", 2, "instance key", LP_ERR_DATA);
    /* unknown resources */
    bad_model("grade10-model 1\nphase /A\nrule /A cpu exact 1\n", 3, "unknown resource 'cpu'", LP_ERR_DATA);
    bad_model("grade10-model 1\ncapacity cpu h 4\n", 2, "not a consumable resource", LP_ERR_DATA);
    /* bad values */
    bad_model("grade10-model 1\nresource cpu consumable sample=counter\n", 2, "capacity", LP_ERR_DATA);
    bad_model("grade10-model 1\nresource cpu consumable capacity=4\n", 2, "sample=", LP_ERR_DATA);
    bad_model("grade10-model 1\nresource cpu consumable capacity=-4 sample=mean\n", 2, "positive", LP_ERR_DATA);
    bad_model("grade10-model 1\nresource cpu consumable capacity=4 sample=mean\nrule /** cpu full\n", 3, "consumable",
              LP_ERR_DATA);
    bad_model("grade10-model 1\nresource gc blocking\nrule /** gc exact 1\n", 3, "blocking", LP_ERR_DATA);
    bad_model("grade10-model 1\nslice 0ms\n", 2, "slice", LP_ERR_DATA);
    bad_model("grade10-model 1\nbottleneck 1.5\n", 2, "bottleneck", LP_ERR_DATA);
    bad_model("grade10-model 1\nfrobnicate 3\n", 2, "unknown statement", LP_ERR_DATA);
    /* several errors are all reported */
    lp_diags ds;
    lp_status st;
    lp_g10_model *m = parse("grade10-model 1\nphase /A/B\nrule /A x none\nslice x\n", &ds, &st);
    CHECK(!m && st == LP_ERR_DATA);
    CHECK_EQ_I(ds.nerrors, 3);
    lp_diags_release(&ds);
    /* a rule that decides nothing is a warning, not an error */
    m = parse("grade10-model 1\nphase /A\nresource gc blocking\nrule /B gc full\n", &ds, &st);
    CHECK(m && st == LP_OK && ds.nwarnings == 1 && diag_at(&ds, 4, "decides no phase"));
    lp_g10_model_free(m);
    lp_diags_release(&ds);
}

int main(void)
{
    test_good();
    test_patterns();
    test_bad();
    return t_done("test_g10_model");
}
