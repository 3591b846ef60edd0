/* test_reqlog.c: the request-log reader (reqlog.h): formats, column mapping, time
 * units, the rules (every malformed line reported with its file and line, the other
 * requests still read), per-host files with seq, compression, and differential checks:
 * grouped vs shuffled input, one shard vs many, one thread vs two must give the same
 * store. Out-of-memory injection at every allocation. */
#include "t.h"
#include "tutil.h"
#include "longpole/import/reqlog.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char tmpdir[256];

static const char *tpath(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        abort();
    fputs(text, f);
    fclose(f);
}

static lp_reqlog *ld_mem(const char *text, const lp_reqlog_opts *o, lp_diags *ds)
{
    lp_diags_init(ds, 100);
    lp_error err;
    lp_reqlog *rl = NULL;
    if (lp_reqlog_load_mem(text, strlen(text), "t.csv", o, ds, &rl, &err) != LP_OK) {
        fprintf(stderr, "load failed: %s\n", err.msg);
        return NULL;
    }
    return rl;
}

static lp_reqlog *ld_files(const char *const *paths, size_t n, const lp_reqlog_opts *o, lp_diags *ds)
{
    lp_diags_init(ds, 1000);
    lp_error err;
    lp_reqlog *rl = NULL;
    if (lp_reqlog_load(paths, n, o, ds, &rl, &err) != LP_OK) {
        fprintf(stderr, "load failed: %s\n", err.msg);
        return NULL;
    }
    return rl;
}

/* A canonical text of the store: per request (sorted by name), its rows in order. */
static char *dump(const lp_reqlog *rl)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    uint64_t *ord = malloc((rl->nreqs + 1) * sizeof *ord);
    for (uint64_t r = 0; r < rl->nreqs; r++)
        ord[r] = r;
    for (uint64_t i = 1; i < rl->nreqs; i++) {
        uint64_t x = ord[i], j = i;
        while (j > 0 && strcmp(lp_reqlog_str(rl, rl->req_name[ord[j - 1]]), lp_reqlog_str(rl, rl->req_name[x])) > 0) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = x;
    }
    for (uint64_t k = 0; k < rl->nreqs; k++) {
        uint64_t r = ord[k];
        fprintf(f, "%s%s:", lp_reqlog_str(rl, rl->req_name[r]), rl->rbad[r] ? "(bad)" : "");
        for (uint64_t i = rl->rfirst[r]; i < rl->rfirst[r + 1]; i++) {
            const lp_reqrow *w = &rl->rows[i];
            char lab[256] = "-";
            if (w->seg != LP_REQLOG_NONE)
                lp_reqlog_seg_label(rl, w->seg, lab, sizeof lab);
            fprintf(f, " [%s %s %s %lld %s]", lp_reqlog_str(rl, rl->task_name[rl->pt_task[w->point]]),
                    lp_reqlog_str(rl, rl->event_name[rl->pt_event[w->point]]), lp_reqlog_str(rl, rl->host_name[w->host]),
                    (long long)w->time, lab);
        }
        fputc('\n', f);
    }
    fclose(f);
    free(ord);
    return buf;
}

static int has_line(const lp_diags *ds, lp_rule rule, unsigned long long line, const char *needle)
{
    for (size_t i = 0; i < ds->nkept; i++)
        if (ds->kept[i].rule == rule && ds->kept[i].line == line && (!needle || strstr(ds->kept[i].msg, needle)))
            return 1;
    return 0;
}

static void test_basic_csv(void)
{
    const char *text = "# a comment\n"
                       "request,host,time,event,task\n"
                       "r1,c,100,click,page\n"
                       "r1,c,150,send,page\n"
                       "r1,w,90,recv,page\n"      /* another host's clock: not compared */
                       "\n"
                       "r1,w,120,done,page\n"
                       "r2,c,10,click,page\n"
                       "r2,c,20,send,page\n"
                       "r1,w,95,start,side\n"
                       "r1,w,99,end,side\n";
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    lp_diags ds;
    lp_reqlog *rl = ld_mem(text, &o, &ds);
    CHECK(rl != NULL);
    if (!rl)
        return;
    CHECK_EQ_I(ds.nerrors + ds.nwarnings, 0);
    CHECK_EQ_I(rl->nreqs, 2);
    CHECK_EQ_I(rl->nrows, 8);
    CHECK_EQ_I(rl->nbad, 0);
    CHECK_EQ_I(rl->nhosts, 2);
    /* segments, sorted by names: page click->send, recv->done, send->recv, side start->end */
    CHECK_EQ_I(rl->nsegs, 4);
    char lab[128];
    CHECK_STR(lp_reqlog_seg_label(rl, 0, lab, sizeof lab), "page:click->send");
    CHECK_STR(lp_reqlog_seg_label(rl, 1, lab, sizeof lab), "page:recv->done");
    CHECK_STR(lp_reqlog_seg_label(rl, 2, lab, sizeof lab), "page:send->recv");
    CHECK_STR(lp_reqlog_seg_label(rl, 3, lab, sizeof lab), "side:start->end");
    CHECK_EQ_I(rl->seg_cross[2], 1); /* send (c) -> recv (w) */
    CHECK_EQ_I(rl->seg_cross[0], 0);
    /* r1's rows: grouped by task (page first: first seen), in input order */
    const lp_reqrow *w = rl->rows + rl->rfirst[0];
    CHECK_STR(lp_reqlog_str(rl, rl->event_name[rl->pt_event[w[0].point]]), "click");
    CHECK_STR(lp_reqlog_str(rl, rl->event_name[rl->pt_event[w[3].point]]), "done");
    CHECK_EQ_I(w[3].seg, LP_REQLOG_NONE);
    CHECK_STR(lp_reqlog_str(rl, rl->event_name[rl->pt_event[w[4].point]]), "start");
    /* provenance: the row of "recv" is line 5, "done" line 7 */
    uint64_t line;
    CHECK_STR(lp_reqlog_where(rl, w[2].src, &line), "t.csv");
    CHECK_EQ_I(line, 5);
    lp_reqlog_where(rl, w[3].src, &line);
    CHECK_EQ_I(line, 7);
    lp_reqlog_where(rl, w[5].src, &line);
    CHECK_EQ_I(line, 11);
    CHECK_EQ_I(lp_reqlog_find(rl, "r2"), 1);
    CHECK(lp_reqlog_find(rl, "r3") == UINT64_MAX);
    lp_reqlog_free(rl);
    lp_diags_release(&ds);
}

static void test_columns_units(void)
{
    lp_reqlog_opts o;
    lp_error err;
    /* custom names, ms with fractions, TSV */
    lp_reqlog_opts_init(&o);
    CHECK(lp_reqlog_opts_columns(&o, "request=rid,host=machine,time=at,event=what,task=thread", &err) == LP_OK);
    CHECK(lp_reqlog_opts_unit(&o, "ms", &err) == LP_OK);
    lp_diags ds;
    lp_reqlog *rl = ld_mem("rid\tmachine\tat\twhat\tthread\n"
                           "a\th\t1.5\te1\tt\n"
                           "a\th\t2.25\te2\tt\n",
                           &o, &ds);
    CHECK(rl && rl->nrows == 2);
    if (rl) {
        CHECK_EQ_I(rl->rows[0].time, 1500000);
        CHECK_EQ_I(rl->rows[1].time, 2250000);
        lp_reqlog_free(rl);
    }
    lp_diags_release(&ds);
    /* numbers, no header */
    lp_reqlog_opts_init(&o);
    CHECK(lp_reqlog_opts_columns(&o, "request=2,host=1,time=5,event=3,task=4", &err) == LP_OK);
    rl = ld_mem("h,a,e1,t,10\nh,a,e2,t,20\n", &o, &ds);
    CHECK(rl && rl->nrows == 2 && rl->nreqs == 1 && rl->nsegs == 1);
    if (rl) {
        CHECK_STR(lp_reqlog_str(rl, rl->host_name[0]), "h");
        CHECK_EQ_I(rl->rows[1].time, 20);
        lp_reqlog_free(rl);
    }
    lp_diags_release(&ds);
    /* unit from the header's suffix; seconds with a fraction; quoted fields */
    lp_reqlog_opts_init(&o);
    rl = ld_mem("request,host,time_us,event,task\n\"r,1\",h,7,\"e \"\"x\"\"\",t\nr,h,8,e,t\n", &o, &ds);
    CHECK(rl && rl->nreqs == 2);
    if (rl) {
        CHECK_EQ_I(rl->rows[0].time, 7000);
        CHECK_STR(lp_reqlog_str(rl, rl->req_name[0]), "r,1");
        CHECK_STR(lp_reqlog_str(rl, rl->event_name[0]), "e \"x\"");
        lp_reqlog_free(rl);
    }
    lp_diags_release(&ds);
    lp_reqlog_opts_init(&o);
    CHECK(lp_reqlog_opts_unit(&o, "s", &err) == LP_OK);
    rl = ld_mem("request,host,time,event,task\nr,h,1690000000.123456789,e,t\nr,h,-0.5,f,t2\n", &o, &ds);
    CHECK(rl && rl->nrows == 2);
    if (rl) {
        CHECK_EQ_I(rl->rows[0].time, 1690000000123456789LL);
        CHECK_EQ_I(rl->rows[1].time, -500000000);
        lp_reqlog_free(rl);
    }
    lp_diags_release(&ds);
    /* ISO */
    lp_reqlog_opts_init(&o);
    CHECK(lp_reqlog_opts_unit(&o, "iso", &err) == LP_OK);
    rl = ld_mem("request,host,time,event,task\n"
                "r,h,2013-07-21T10:00:00.5Z,e,t\n"
                "r,h,2013-07-21T12:00:00.75+02:00,f,t\n"
                "r,h,1970-01-01T00:00:01Z,g,t2\n",
                &o, &ds);
    CHECK(rl && rl->nrows == 3);
    if (rl) {
        CHECK_EQ_I(rl->rows[0].time, 1374400800500000000LL);
        CHECK_EQ_I(rl->rows[1].time, 1374400800750000000LL);
        CHECK_EQ_I(rl->rows[2].time, 1000000000);
        lp_reqlog_free(rl);
    }
    lp_diags_release(&ds);
    /* long integers: the eight-digit fast path against the general one */
    lp_reqlog_opts_init(&o);
    rl = ld_mem("request,host,time,event,task\nr,h,123456789012345678,e,t\nr,h,99999999,f,t\nr,h,+12,g,t\n", &o, &ds);
    CHECK(rl && rl->nrows == 3);
    if (rl) {
        CHECK_EQ_I(rl->rows[0].time, 123456789012345678LL);
        CHECK_EQ_I(rl->rows[1].time, 99999999);
        CHECK_EQ_I(rl->rows[2].time, 12);
        lp_reqlog_free(rl);
    }
    lp_diags_release(&ds);
    /* bad options */
    lp_reqlog_opts_init(&o);
    CHECK(lp_reqlog_opts_columns(&o, "bogus=1", &err) == LP_ERR_ARG);
    CHECK(lp_reqlog_opts_columns(&o, "request", &err) == LP_ERR_ARG);
    CHECK(lp_reqlog_opts_unit(&o, "fortnights", &err) == LP_ERR_ARG);
}

static void test_jsonl(void)
{
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    lp_diags ds;
    lp_reqlog *rl = ld_mem("{\"request\":\"r1\",\"host\":\"h\",\"time_us\":5,\"event\":\"a\",\"task\":\"t\",\"x\":{\"y\":[1,2]}}\n"
                           "{\"task\":\"t\",\"event\":\"b\\u00e9\",\"time_us\":\"6\",\"host\":\"h\",\"request\":\"r1\"}\n"
                           "{\"request\":\"r1\",\"host\":\"h\",\"time_us\":7,\"event\":\"c\"}\n"
                           "{\"request\":\"r1\",\"host\":\"h\",\"time_us\":8,\"event\":\"d\",\"task\":\"t\"} junk\n"
                           "{\"request\":\"r2\",\"host\":\"h\",\"time_us\":1e3,\"event\":\"a\",\"task\":\"t\"}\n",
                           &o, &ds);
    CHECK(rl != NULL);
    if (!rl)
        return;
    CHECK_EQ_I(rl->nreqs, 2);
    CHECK(has_line(&ds, LP_RULE_FIELD, 3, "missing field 'task'"));
    CHECK(has_line(&ds, LP_RULE_SYNTAX, 4, "text after the object"));
    CHECK_EQ_I(rl->rbad[0], 1); /* r1 had malformed lines */
    CHECK_EQ_I(rl->rbad[1], 0);
    uint64_t r2 = lp_reqlog_find(rl, "r2");
    CHECK_EQ_I(rl->rows[rl->rfirst[r2]].time, 1000000);
    CHECK(lp_strtab_find(&rl->names, "b\xc3\xa9", 3) != LP_STR_NONE);
    lp_reqlog_free(rl);
    lp_diags_release(&ds);
}

/* Every kind of malformed line is reported at its line; the other requests are kept. */
static void test_malformed(void)
{
    const char *text = "request,host,time,event,task\n"            /* 1 */
                       "ok,h,1,a,t\n"                                 /* 2 */
                       "ok,h,2,b,t\n"                                 /* 3 */
                       "m1,h,1,a\n"                                   /* 4 missing task */
                       "m1,h,2,b,t\n"                                 /* 5 */
                       "m2,,1,a,t\n"                                  /* 6 empty host */
                       "m3,h,12x,a,t\n"                               /* 7 bad time */
                       "d1,h,1,a,t\n"                                 /* 8 */
                       "d1,h,2,a,t\n"                                 /* 9 duplicate <a, t> */
                       "b1,h,5,a,t\n"                                 /* 10 */
                       "b1,g,1,b,t\n"                                 /* 11 other host: fine */
                       "b1,h,4,c,t\n"                                 /* 12 backwards on h */
                       "q1,h,\"1,a,t\n"                               /* 13 bad quote */
                       ",h,1,a,t\n"                                   /* 14 no request */
                       "ok2,h,3,a,t\n";                               /* 15 */
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    lp_diags ds;
    lp_reqlog *rl = ld_mem(text, &o, &ds);
    CHECK(rl != NULL);
    if (!rl)
        return;
    CHECK(has_line(&ds, LP_RULE_FIELD, 4, "missing field 'task'"));
    CHECK(has_line(&ds, LP_RULE_FIELD, 6, "empty field 'host'"));
    CHECK(has_line(&ds, LP_RULE_FIELD, 7, "time '12x' is not a number"));
    CHECK(has_line(&ds, LP_RULE_IMPORT, 9, "duplicate <event, task> <a, t>"));
    CHECK(has_line(&ds, LP_RULE_ORDER, 12, "time goes backwards on host h"));
    CHECK(has_line(&ds, LP_RULE_SYNTAX, 13, "bad quoting"));
    CHECK(has_line(&ds, LP_RULE_FIELD, 14, "empty field 'request'"));
    CHECK_EQ_I(ds.nerrors, 7);
    /* diagnostics come out in line order */
    for (size_t i = 1; i < ds.nkept; i++)
        CHECK(ds.kept[i - 1].line <= ds.kept[i].line);
    const char *good[] = {"ok", "ok2"};
    const char *bad[] = {"m1", "d1", "b1"};
    for (int i = 0; i < 2; i++) {
        uint64_t r = lp_reqlog_find(rl, good[i]);
        CHECK(r != UINT64_MAX && !rl->rbad[r]);
    }
    for (int i = 0; i < 3; i++) {
        uint64_t r = lp_reqlog_find(rl, bad[i]);
        CHECK(r != UINT64_MAX && rl->rbad[r]);
    }
    /* m2 and m3 had no readable record: their ids exist only through the bad lines */
    CHECK_EQ_I(rl->nbadlines, 5);
    CHECK_EQ_I(rl->nlines, 15);
    /* the good requests have their segments */
    uint64_t r = lp_reqlog_find(rl, "ok");
    CHECK(rl->rows[rl->rfirst[r]].seg != LP_REQLOG_NONE);
    lp_reqlog_free(rl);
    lp_diags_release(&ds);
}

/* The same rows grouped by request, shuffled, split in tiny shards, on 1 or 2 threads,
 * compressed: one store. */
static void test_differential(void)
{
    /* a corpus: 300 requests, tasks interleaved, times per host increasing */
    size_t cap = 1 << 20;
    char *grouped = malloc(cap), *shuffled = malloc(cap);
    size_t ng = 0;
    ng += (size_t)snprintf(grouped + ng, cap - ng, "request,host,time,event,task\n");
    char (*lines)[64] = malloc(300 * 8 * sizeof *lines);
    size_t nl = 0;
    for (int r = 0; r < 300; r++) {
        for (int e = 0; e < 8; e++) {
            int task = e % 3;
            snprintf(lines[nl], 64, "r%d,h%d,%d,e%d,t%d\n", r, (e + r) % 4, 1000 * r + 10 * e, e, task);
            ng += (size_t)snprintf(grouped + ng, cap - ng, "%s", lines[nl]);
            nl++;
        }
    }
    /* shuffle requests' lines across the file, keeping each request's own order */
    size_t ns = (size_t)snprintf(shuffled, cap, "request,host,time,event,task\n");
    int pos[300] = {0};
    unsigned seed = 7;
    for (size_t k = 0; k < nl; k++) {
        int r;
        do {
            seed = seed * 1103515245u + 12345u;
            r = (int)((seed >> 8) % 300);
        } while (pos[r] == 8);
        ns += (size_t)snprintf(shuffled + ns, cap - ns, "%s", lines[r * 8 + pos[r]]);
        pos[r]++;
    }
    write_file(tpath("g.csv"), grouped);
    write_file(tpath("s.csv"), shuffled);
    gzFile gz = gzopen(tpath("g.csv.gz"), "wb");
    gzwrite(gz, grouped, (unsigned)ng);
    gzclose(gz);
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    o.threads = 1;
    lp_diags ds;
    const char *pg[] = {tpath("g.csv")};
    lp_reqlog *a = ld_files(pg, 1, &o, &ds);
    lp_diags_release(&ds);
    char *da = a ? dump(a) : NULL;
    CHECK(a && a->nreqs == 300 && a->nrows == 2400 && a->nbad == 0);
    const char *ps[] = {tpath("s.csv")};
    lp_reqlog *b = ld_files(ps, 1, &o, &ds);
    lp_diags_release(&ds);
    char *db = b ? dump(b) : NULL;
    CHECK(da && db && strcmp(da, db) == 0);
    o.threads = 2;
    o.shard_bytes = 100; /* many shards, lines cut at shard borders */
    lp_reqlog *c = ld_files(ps, 1, &o, &ds);
    lp_diags_release(&ds);
    char *dc = c ? dump(c) : NULL;
    CHECK(da && dc && strcmp(da, dc) == 0);
    /* provenance across shards: every record's line holds its event */
    if (c) {
        int okl = 1;
        for (uint64_t i = 0; i < c->nrows && okl; i++) {
            uint64_t line;
            lp_reqlog_where(c, c->rows[i].src, &line);
            const char *q = shuffled;
            for (uint64_t k = 1; k < line; k++)
                q = strchr(q, '\n') + 1;
            char want[64];
            snprintf(want, sizeof want, ",e%s,", lp_reqlog_str(c, c->event_name[c->pt_event[c->rows[i].point]]) + 1);
            const char *eol = strchr(q, '\n');
            char ln[128];
            snprintf(ln, sizeof ln, "%.*s", (int)(eol - q), q);
            okl = strstr(ln, want) != NULL;
        }
        CHECK(okl);
    }
    const char *pz[] = {tpath("g.csv.gz")};
    lp_reqlog *z = ld_files(pz, 1, &o, &ds);
    lp_diags_release(&ds);
    char *dz = z ? dump(z) : NULL;
    CHECK(da && dz && strcmp(da, dz) == 0);
    /* segment ids do not depend on the input order */
    if (a && b)
        for (uint32_t s = 0; s < a->nsegs; s++) {
            char l1[128], l2[128];
            CHECK_STR(lp_reqlog_seg_label(a, s, l1, sizeof l1), lp_reqlog_seg_label(b, s, l2, sizeof l2));
        }
    free(da), free(db), free(dc), free(dz);
    lp_reqlog_free(a), lp_reqlog_free(b), lp_reqlog_free(c), lp_reqlog_free(z);
    free(grouped), free(shuffled), free(lines);
}

/* One file per host, no host column, a seq column ordering each task's events. */
static void test_per_host(void)
{
    write_file(tpath("client1.csv"), "request,time,event,task,seq\n"
                                     "r1,100,click,page,0\n"
                                     "r1,180,back,page,3\n"
                                     "r2,500,click,page,0\n");
    write_file(tpath("web1.log.csv"), "request,time,event,task,seq\n"
                                      "r1,1120,recv,page,1\n"
                                      "r1,1150,reply,page,2\n"
                                      "r2,1530,recv,page,1\n");
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    o.host_from_name = 1;
    lp_diags ds;
    const char *p[] = {tpath("client1.csv"), tpath("web1.log.csv")};
    lp_reqlog *rl = ld_files(p, 2, &o, &ds);
    CHECK(rl != NULL);
    if (rl) {
        CHECK_EQ_I(ds.nerrors, 0);
        CHECK(rl->has_seq);
        CHECK_EQ_I(rl->nhosts, 2);
        uint64_t r = lp_reqlog_find(rl, "r1");
        const lp_reqrow *w = rl->rows + rl->rfirst[r];
        const char *order[] = {"click", "recv", "reply", "back"};
        for (int i = 0; i < 4; i++)
            CHECK_STR(lp_reqlog_str(rl, rl->event_name[rl->pt_event[w[i].point]]), order[i]);
        CHECK_STR(lp_reqlog_str(rl, rl->host_name[w[1].host]), "web1");
        uint64_t line;
        CHECK_STR(lp_reqlog_where(rl, w[2].src, &line), tpath("web1.log.csv"));
        CHECK_EQ_I(line, 3);
        lp_reqlog_free(rl);
    }
    lp_diags_release(&ds);
}

static void test_attrs(void)
{
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    lp_error err;
    CHECK(lp_reqlog_opts_columns(&o, "attr.net=conn", &err) == LP_OK);
    lp_diags ds;
    lp_reqlog *rl = ld_mem("request,host,time,event,task,conn\n"
                           "a,h,1,x,t,\n"
                           "a,h,2,y,t,wifi\n"
                           "b,h,1,x,t,3g\n"
                           "b,h,2,y,t,dsl\n",
                           &o, &ds);
    CHECK(rl != NULL);
    if (!rl)
        return;
    CHECK_EQ_I(rl->nattrs, 1);
    CHECK(has_line(&ds, LP_RULE_FIELD, 5, "keeping the first"));
    uint32_t at = lp_reqlog_attr_find(rl, "net");
    CHECK_EQ_I(at, 0);
    CHECK_STR(lp_reqlog_str(rl, rl->rattr[lp_reqlog_find(rl, "a")]), "wifi");
    CHECK_STR(lp_reqlog_str(rl, rl->rattr[lp_reqlog_find(rl, "b")]), "3g");
    write_file(tpath("attrs.csv"), "browser,request,os\nchrome,a,linux\nie,b,\nff,zz,mac\n");
    uint64_t unknown;
    CHECK(lp_reqlog_load_attrs(rl, tpath("attrs.csv"), &o, &ds, &unknown, &err) == LP_OK);
    CHECK_EQ_I(unknown, 1);
    CHECK_EQ_I(rl->nattrs, 3);
    uint32_t br = lp_reqlog_attr_find(rl, "browser"), os = lp_reqlog_attr_find(rl, "os");
    CHECK_STR(lp_reqlog_str(rl, rl->rattr[(size_t)br * rl->nreqs + lp_reqlog_find(rl, "b")]), "ie");
    CHECK(rl->rattr[(size_t)os * rl->nreqs + lp_reqlog_find(rl, "b")] == LP_STR_NONE);
    write_file(tpath("attrs.jsonl"), "{\"request\":\"a\",\"tier\":\"gold\",\"n\":3}\n{\"bad\n");
    CHECK(lp_reqlog_load_attrs(rl, tpath("attrs.jsonl"), &o, &ds, &unknown, &err) == LP_OK);
    uint32_t tier = lp_reqlog_attr_find(rl, "tier");
    CHECK(tier != LP_REQLOG_NONE);
    CHECK_STR(lp_reqlog_str(rl, rl->rattr[(size_t)tier * rl->nreqs + lp_reqlog_find(rl, "a")]), "gold");
    CHECK(has_line(&ds, LP_RULE_SYNTAX, 2, NULL));
    lp_reqlog_free(rl);
    lp_diags_release(&ds);
}

static void test_bad_files(void)
{
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    lp_diags ds;
    /* a header without the needed columns: reported at its line, file skipped */
    write_file(tpath("nohdr.csv"), "# log\nfoo,bar\n1,2\n");
    write_file(tpath("fine.csv"), "request,host,time,event,task\nr,h,1,a,t\nr,h,2,b,t\n");
    const char *p[] = {tpath("nohdr.csv"), tpath("fine.csv")};
    lp_reqlog *rl = ld_files(p, 2, &o, &ds);
    CHECK(rl && rl->nreqs == 1 && rl->nsegs == 1);
    CHECK(has_line(&ds, LP_RULE_SYNTAX, 2, "no column"));
    lp_reqlog_free(rl);
    lp_diags_release(&ds);
    /* a file that does not exist is an I/O error */
    const char *q[] = {tpath("missing.csv")};
    lp_error err;
    lp_diags_init(&ds, 10);
    CHECK(lp_reqlog_load(q, 1, &o, &ds, &rl, &err) == LP_ERR_IO);
    lp_diags_release(&ds);
}

static void test_oom(void)
{
    const char *text = "request,host,time,event,task,b\nr1,h,1,a,t,x\nr1,w,2,b,t,x\nr1,h,3,c,t,y\nr2,h,1,a,t,z\n"
                       "r2,h,0,b,t,z\nbad\n";
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    o.threads = 1;
    lp_error err;
    lp_reqlog_opts_columns(&o, "attr.b=b", &err);
    int ok = 0;
    for (long k = 0; k < 400; k++) {
        lp_diags ds;
        lp_diags_init(&ds, 4);
        lp_reqlog *rl = NULL;
        lp_alloc_fail_after(k);
        lp_status st = lp_reqlog_load_mem(text, strlen(text), "oom.csv", &o, &ds, &rl, &err);
        lp_alloc_fail_after(-1);
        CHECK(st == LP_OK || st == LP_ERR_NOMEM);
        CHECK((st == LP_OK) == (rl != NULL));
        if (st == LP_OK) {
            ok++;
            lp_reqlog_free(rl);
        }
        lp_diags_release(&ds);
        if (ok > 3)
            break;
    }
    CHECK(ok > 0);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lp-reqlog-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    test_basic_csv();
    test_columns_units();
    test_jsonl();
    test_malformed();
    test_differential();
    test_per_host();
    test_attrs();
    test_bad_files();
    test_oom();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return t_done("test_reqlog");
}
