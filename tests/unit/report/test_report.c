/* test_report.c: the HTML report library (report.h):
 *  - escaping: HTML text/attributes and JSON-in-script against naive twins and
 *    properties on random bytes (the output is valid UTF-8 without markup characters; JSON
 *    parses back, with the project's reader, to the input for valid text); base64 against
 *    a naive encoder;
 *  - golden section presence for each kind of input: a dataflow trace, request logs
 *    (generated), span traces (a small Zipkin file), and their mix; the document's
 *    structure (one section element each, every <script> a data block or the nonce'd
 *    script, balanced section tags);
 *  - hostile names (script tags, attribute breakers, invalid UTF-8) never reach the
 *    output unescaped;
 *  - the section API (pages, fragments, unknown names) and determinism;
 *  - allocation failures at every point of a small report: an error or success, never a
 *    crash or a leak (run under ASan in the sanitizer build). */
#include "t.h"
#include "tutil.h"
#include "longpole/report/report.h"
#include "longpole/gen/genreq.h"
#include "longpole/codec/json.h"
#include "base/util.h"

#include <stdint.h>
#include <unistd.h>

static uint64_t rng = 99;
static uint64_t rnd(void) { return t_splitmix(&rng); }

static char *esc_html(const char *s, size_t n)
{
    size_t need = lp_html_escape(s, n, NULL, 0);
    char *o = malloc(need + 1);
    CHECK(lp_html_escape(s, n, o, need + 1) == need);
    return o;
}

static char *esc_json(const char *s, size_t n)
{
    size_t need = lp_html_json_escape(s, n, NULL, 0);
    char *o = malloc(need + 1);
    CHECK(lp_html_json_escape(s, n, o, need + 1) == need);
    return o;
}

/* Naive twin for printable ASCII: one entity per special byte. */
static char *naive_html(const char *s)
{
    char *o = malloc(strlen(s) * 6 + 1), *p = o;
    for (; *s; s++) {
        const char *r = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '"' ? "&quot;"
                        : *s == '\'' ? "&#39;" : NULL;
        if (r) {
            strcpy(p, r);
            p += strlen(r);
        } else {
            *p++ = *s;
        }
    }
    *p = 0;
    return o;
}

static int valid_utf8(const char *s, size_t n) { return lp_utf8_valid(s, n); }

static void test_escape_fixed(void)
{
    char *o = esc_html("a<b>&\"'c", 8);
    CHECK_STR(o, "a&lt;b&gt;&amp;&quot;&#39;c");
    free(o);
    o = esc_html("</script><script>alert(1)</script>", 34);
    CHECK(strchr(o, '<') == NULL);
    free(o);
    o = esc_html("a\xff" "b\xc3\xa9\x01\x7f\xc2\x85", 9); /* bad byte, é, C0, DEL, C1 */
    CHECK_STR(o, "a\xEF\xBF\xBD" "b\xc3\xa9\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    free(o);
    o = esc_html("\xe2\x80\xa8\xef\xb7\x90\xf0\x9f\x98\x80", 10); /* U+2028 ok in text, noncharacter, emoji */
    CHECK_STR(o, "\xe2\x80\xa8\xEF\xBF\xBD\xf0\x9f\x98\x80");
    free(o);
    o = esc_html("\xc0\xaf\xed\xa0\x80", 5); /* overlong '/', surrogate */
    CHECK_STR(o, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    free(o);
    o = esc_json("</script>\"\\\n\x01\xe2\x80\xa8&", 17);
    CHECK_STR(o, "\"\\u003c/script\\u003e\\\"\\\\\\n\\u0001\\u2028\\u0026\"");
    free(o);
    o = esc_json("\xff", 1);
    CHECK_STR(o, "\"\\ufffd\"");
    free(o);
    o = esc_json("\xf4\x8f\xbf\xbf", 4); /* U+10FFFF, a noncharacter: a surrogate pair */
    CHECK_STR(o, "\"\\udbff\\udfff\"");
    free(o);
    /* truncation: the length needed is returned, the buffer is NUL-terminated */
    char small[4];
    CHECK(lp_html_escape("<<<", 3, small, sizeof small) == 12);
    CHECK(strlen(small) == 3);
}

/* Parse a JSON string literal with the project's reader; returns the decoded bytes. */
static char *json_decode(const char *lit, size_t *n)
{
    lp_input *in;
    lp_error err;
    if (lp_input_open_mem(&in, lit, strlen(lit), "lit", &err))
        return NULL;
    lp_json_reader *r;
    char *out = NULL;
    if (!lp_json_reader_new(&r, in, NULL, &err)) {
        lp_json_ev ev;
        if (lp_json_next(r, &ev, &err) == LP_OK && ev.kind == LP_JSON_EV_VALUE && ev.tree &&
            ev.tree->type == LP_JSON_STRING) {
            *n = ev.tree->len;
            out = malloc(*n + 1);
            memcpy(out, ev.tree->s, *n + 1);
        }
        lp_json_reader_free(r);
    }
    lp_input_close(in);
    return out;
}

static void test_escape_random(void)
{
    int bad = 0;
    for (int it = 0; it < 3000; it++) {
        size_t n = rnd() % 40;
        char s[48];
        int ascii = it % 3 == 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t x = rnd();
            if (ascii)
                s[i] = (char)(0x20 + x % 95);
            else if (x % 4 == 0)
                s[i] = "<>&\"'\\/"[x % 7];
            else
                s[i] = (char)(1 + x % 255); /* any byte but NUL */
        }
        s[n] = 0;
        char *h = esc_html(s, n), *j = esc_json(s, n);
        size_t hl = strlen(h), jl = strlen(j);
        /* both are valid UTF-8 and carry no markup character */
        if (!valid_utf8(h, hl) || !valid_utf8(j, jl) || strpbrk(h, "<>\"'") || strpbrk(j, "<>&"))
            bad++;
        for (const char *p = h; (p = strchr(p, '&')); p++) /* every & starts an entity */
            if (strncmp(p, "&amp;", 5) && strncmp(p, "&lt;", 4) && strncmp(p, "&gt;", 4) && strncmp(p, "&quot;", 6) &&
                strncmp(p, "&#39;", 5))
                bad++;
        if (ascii) {
            char *nv = naive_html(s);
            if (strcmp(nv, h) != 0)
                bad++;
            free(nv);
        }
        /* the JSON parses back to the input when the input is valid text */
        size_t dn;
        char *d = json_decode(j, &dn);
        if (!d)
            bad++;
        else if (valid_utf8(s, n) && (dn != n || memcmp(d, s, n) != 0))
            bad++;
        free(d);
        free(h);
        free(j);
    }
    CHECK_EQ_I(bad, 0);
}

static void test_base64(void)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int it = 0; it < 200; it++) {
        size_t n = it < 10 ? (size_t)it : rnd() % 10000;
        unsigned char *p = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
            p[i] = (unsigned char)rnd();
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        lp_html h;
        lp_html_init(&h, f);
        lp_html_base64(&h, p, n);
        fclose(f);
        /* naive: bit by bit */
        size_t nb = (n + 2) / 3 * 4;
        char *want = malloc(nb + 1);
        for (size_t k = 0; k < nb; k++) {
            size_t bit = k * 6;
            if (bit >= n * 8) {
                want[k] = '=';
                continue;
            }
            unsigned v = 0;
            for (int b = 0; b < 6; b++) {
                size_t q = bit + (size_t)b;
                v = v << 1 | (q < n * 8 ? (p[q / 8] >> (7 - q % 8)) & 1u : 0u);
            }
            want[k] = tab[v];
        }
        want[nb] = 0;
        CHECK(len == nb && strcmp(buf, want) == 0);
        CHECK_EQ_I(h.bytes, nb);
        free(want);
        free(buf);
        free(p);
    }
}

/* ---- reports ------------------------------------------------------------------------ */

static char *render(lp_report *r, const char *const *names, size_t n, lp_status *st)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    lp_error err;
    *st = names ? lp_report_write_page(r, names, n, f, &err) : lp_report_write(r, f, &err);
    fclose(f);
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int k = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        k++;
    return k;
}

/* Every <script is a data block or the one script with the nonce; sections balanced. */
static void check_structure(const char *doc, const lp_report *r)
{
    int scripts = count(doc, "<script"), json = count(doc, "<script type=\"application/json\""),
        bin = count(doc, "<script type=\"application/x-longpole\"");
    char nonce[80];
    snprintf(nonce, sizeof nonce, "<script nonce=\"%s\">", lp_report_nonce(r));
    CHECK_EQ_I(count(doc, nonce), 1);
    CHECK_EQ_I(scripts, json + bin + 1);
    CHECK_EQ_I(count(doc, "</script>"), scripts);
    CHECK_EQ_I(count(doc, "<section "), count(doc, "</section>"));
    CHECK(strncmp(doc, "<!DOCTYPE html>", 15) == 0);
    CHECK(strstr(doc, "Content-Security-Policy") != NULL);
    CHECK(strstr(doc, "http://") == NULL || strstr(doc, "http://www.w3.org/2000/svg") != NULL);
    CHECK(valid_utf8(doc, strlen(doc)));
}

static const char *const ALL[] = {"overview", "timeline", "breakdown", "summaries", "requests", "spans"};

/* Which sections a document holds, as a bit set over ALL. */
static unsigned sections_of(const char *doc)
{
    unsigned b = 0;
    for (unsigned k = 0; k < 6; k++) {
        char id[64];
        snprintf(id, sizeof id, "<section class=\"lp-sec\" id=\"lp-s-%s\"", ALL[k]);
        if (strstr(doc, id))
            b |= 1u << k;
    }
    return b;
}

static lp_trace *small_dataflow(void)
{
    lp_gen_dataflow g;
    lp_gen_dataflow_defaults(&g);
    g.duration_ns = 40000000;
    g.rate = 200000;
    g.seed = 7;
    lp_trace *t = NULL;
    lp_error err;
    CHECK(lp_gen_dataflow_run(&g, &t, &err) == LP_OK);
    return t;
}

static void test_dataflow(void)
{
    lp_trace *t = small_dataflow();
    if (!t)
        return;
    lp_report_data d;
    memset(&d, 0, sizeof d);
    d.trace = t;
    const char *in[] = {"gen.lpt"};
    d.inputs = in;
    d.ninputs = 1;
    lp_report_opts o;
    lp_report_opts_init(&o);
    o.threads = 1;
    o.no_nonce = 1;
    lp_report *r;
    lp_error err;
    CHECK(lp_report_new(&r, &d, &o, &err) == LP_OK);
    CHECK(lp_report_applies(r, "timeline") && !lp_report_applies(r, "requests") && !lp_report_applies(r, "spans"));
    CHECK(!lp_report_applies(r, "nonsense"));
    CHECK(lp_report_prepare(r, NULL, 0, &err) == LP_OK);
    const lp_report_graph *g = lp_report_graph_peek(r);
    CHECK(g && g->cp.n > 0);
    lp_status st;
    char *doc = render(r, NULL, 0, &st);
    CHECK(st == LP_OK);
    CHECK_EQ_I(sections_of(doc), 0xF); /* overview, timeline, breakdown, summaries */
    check_structure(doc, r);
    /* the timeline's metadata names every worker and the path's length */
    char want[64];
    snprintf(want, sizeof want, "\"ncp\":%zu,", g->cp.n);
    CHECK(strstr(doc, want) != NULL);
    CHECK(strstr(doc, "id=\"lp-tl-L0\"") && strstr(doc, "id=\"lp-tl-A\"") && strstr(doc, "id=\"lp-tl-C\""));
    /* determinism with the fixed nonce */
    char *doc2 = render(r, NULL, 0, &st);
    CHECK(strcmp(doc, doc2) == 0);
    free(doc2);
    /* a page with some sections; a fragment; the parts */
    const char *two[] = {"breakdown", "timeline"};
    char *page = render(r, two, 2, &st);
    CHECK(st == LP_OK && sections_of(page) == 0x6);
    check_structure(page, r);
    free(page);
    const char *bad[] = {"timeline", "nope"};
    page = render(r, bad, 2, &st);
    CHECK(st == LP_ERR_ARG);
    free(page);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(lp_report_write_head(r, f, &err) == LP_OK);
    CHECK(lp_report_write_section(r, "breakdown", f, &err) == LP_OK);
    CHECK(lp_report_write_section(r, "requests", f, &err) == LP_OK); /* does not apply: nothing */
    CHECK(lp_report_write_section(r, "nope", f, &err) == LP_ERR_ARG);
    CHECK(lp_report_write_tail(r, f, &err) == LP_OK);
    fclose(f);
    CHECK_EQ_I(sections_of(buf), 0x4);
    check_structure(buf, r);
    free(buf);
    /* limits: nothing embedded one by one, one level of bins: said in the section */
    lp_report *r2;
    o.exact_acts = o.exact_msgs = o.exact_cp = 0;
    o.max_bytes = 1;
    CHECK(lp_report_new(&r2, &d, &o, &err) == LP_OK);
    const char *tl[] = {"timeline"};
    char *d2 = render(r2, tl, 1, &st);
    CHECK(st == LP_OK);
    CHECK(strstr(d2, "\"acts\":null") && strstr(d2, "\"msgs\":null") && strstr(d2, "\"cp\":null"));
    CHECK(strstr(d2, "exceed the limit") != NULL);
    CHECK(strstr(d2, "id=\"lp-tl-L0\"") && !strstr(d2, "id=\"lp-tl-L1\""));
    free(d2);
    lp_report_free(r2);
    /* explicit window sizes: one tab each; a size giving too many windows is refused */
    int64_t wins[] = {10000000, 20000000};
    lp_report_opts_init(&o);
    o.threads = 1;
    o.windows = wins;
    o.nwindows = 2;
    CHECK(lp_report_new(&r2, &d, &o, &err) == LP_OK);
    const char *su[] = {"summaries"};
    d2 = render(r2, su, 1, &st);
    CHECK(st == LP_OK);
    CHECK_EQ_I(count(d2, "data-pane=\"lp-sum-"), 2);
    CHECK(strstr(d2, "data-size-ns=\"10000000\"") && strstr(d2, "data-size-ns=\"20000000\""));
    free(d2);
    lp_report_free(r2);
    /* a size with too many windows is left out, and said so; the others are drawn */
    wins[0] = 1;
    CHECK(lp_report_new(&r2, &d, &o, &err) == LP_OK);
    d2 = render(r2, su, 1, &st);
    CHECK(st == LP_OK);
    CHECK_EQ_I(count(d2, "data-pane=\"lp-sum-"), 1);
    CHECK(d2 && strstr(d2, "Left out: ") && strstr(d2, "data-size-ns=\"20000000\""));
    free(d2);
    lp_report_free(r2);
    free(doc);
    lp_report_free(r);
    /* nothing to show */
    memset(&d, 0, sizeof d);
    CHECK(lp_report_new(&r, &d, NULL, &err) == LP_ERR_ARG);
    lp_trace_free(t);
}

static void test_hostile(void)
{
    lp_diags ds;
    /* lpt escapes: %20 space, %3D '=' */
    const char *text = "longpole-trace 1\n"
                       "A </script><script>window.pwned%3D1</script> 0 10 <img%20src%3Dx%20onerror%3Dalert(1)> "
                       "op\"'&<b>\n"
                       "A w2 0 5 processing\n"
                       "M w2 5 </script><script>window.pwned%3D1</script> 8\n"
                       "A w2 5 12 <svg%20onload%3Dalert(2)>\n";
    lp_trace *t = load_text(text, &ds);
    CHECK(t != NULL);
    CHECK_EQ_I(ds.nerrors, 0);
    lp_diags_release(&ds);
    if (!t)
        return;
    CHECK_EQ_I(t->nworkers, 2);
    CHECK_STR(lp_trace_worker_name(t, 0), "</script><script>window.pwned=1</script>");
    lp_report_data d;
    memset(&d, 0, sizeof d);
    d.trace = t;
    const char *in[] = {"<script>alert(3)</script>.lpt"};
    d.inputs = in;
    d.ninputs = 1;
    lp_report_opts o;
    lp_report_opts_init(&o);
    o.threads = 1;
    lp_report *r;
    lp_error err;
    CHECK(lp_report_new(&r, &d, &o, &err) == LP_OK);
    lp_status st;
    char *doc = render(r, NULL, 0, &st);
    CHECK(st == LP_OK);
    CHECK(strstr(doc, "window.pwned") != NULL); /* the names are there ... */
    CHECK(strstr(doc, "<script>window.pwned") == NULL); /* ... but never as markup */
    CHECK(strstr(doc, "<script>alert") == NULL);
    CHECK(strstr(doc, "<img") == NULL);
    CHECK(strstr(doc, "<svg onload") == NULL);
    CHECK(strstr(doc, "<b>") == NULL);
    check_structure(doc, r);
    free(doc);
    lp_report_free(r);
    lp_trace_free(t);
}

static char tmpdir[64];

static void test_requests_and_spans(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lp-test-report-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        CHECK(0);
        return;
    }
    char prefix[128], logp[160], zip[160];
    snprintf(prefix, sizeof prefix, "%s/req", tmpdir);
    lp_genreq g;
    lp_genreq_defaults(&g);
    g.requests = 300;
    g.threads = 1;
    lp_genreq_out go;
    lp_error err;
    CHECK(lp_genreq_write(&g, prefix, &go, &err) == LP_OK);
    snprintf(logp, sizeof logp, "%s.csv", prefix);
    /* a small Zipkin trace: a root, two children, one of them with a child */
    snprintf(zip, sizeof zip, "%s/spans.json", tmpdir);
    FILE *f = fopen(zip, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("[{\"traceId\":\"a1\",\"id\":\"1\",\"name\":\"get /\",\"timestamp\":1000,\"duration\":100,"
          "\"localEndpoint\":{\"serviceName\":\"front<script>\"}},"
          "{\"traceId\":\"a1\",\"parentId\":\"1\",\"id\":\"2\",\"name\":\"query\",\"timestamp\":1010,\"duration\":50,"
          "\"localEndpoint\":{\"serviceName\":\"db\"}},"
          "{\"traceId\":\"a1\",\"parentId\":\"1\",\"id\":\"3\",\"name\":\"render\",\"timestamp\":1070,\"duration\":20,"
          "\"localEndpoint\":{\"serviceName\":\"front<script>\"}},"
          "{\"traceId\":\"a1\",\"parentId\":\"2\",\"id\":\"4\",\"name\":\"disk\",\"timestamp\":1020,\"duration\":10,"
          "\"localEndpoint\":{\"serviceName\":\"db\"}}]\n",
          f);
    fclose(f);
    struct {
        const char *paths[2];
        size_t n;
        unsigned want;     /* sections */
        lp_report_kind k0; /* kind of the first input */
    } cases[] = {
        {{logp}, 1, 0x11, LP_RK_REQLOG},
        {{zip}, 1, 0x2F, LP_RK_SPANS},
        {{logp, zip}, 2, 0x3F, LP_RK_REQLOG},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        lp_report_kind k;
        CHECK(lp_report_detect(cases[c].paths[0], &k, &err) == LP_OK);
        CHECK_EQ_I(k, cases[c].k0);
        lp_diags ds;
        lp_diags_init(&ds, 5);
        lp_report_inputs in;
        lp_report_load_opts lo;
        memset(&lo, 0, sizeof lo);
        lo.threads = 1;
        lp_status st = lp_report_load(&in, cases[c].paths, cases[c].n, &lo, &ds, &err);
        CHECK(st == LP_OK);
        if (st) {
            fprintf(stderr, "load: %s\n", err.msg);
            lp_diags_release(&ds);
            continue;
        }
        lp_report_opts o;
        lp_report_opts_init(&o);
        o.threads = 1;
        lp_report *r;
        CHECK(lp_report_new(&r, &in.data, &o, &err) == LP_OK);
        char *doc = render(r, NULL, 0, &st);
        CHECK(st == LP_OK);
        if (sections_of(doc) != cases[c].want)
            fprintf(stderr, "case %zu: sections %#x, expected %#x\n", c, sections_of(doc), cases[c].want);
        CHECK_EQ_I(sections_of(doc), cases[c].want);
        check_structure(doc, r);
        CHECK(strstr(doc, "front<script>") == NULL);
        if (cases[c].want & 0x10) /* the figures */
            CHECK(strstr(doc, "Figure 5") && strstr(doc, "Figure 6") && strstr(doc, "Figure 8") &&
                  strstr(doc, "Figure 10") && strstr(doc, "Outliers"));
        if (cases[c].want & 0x20)
            CHECK(strstr(doc, "lp-flame") && strstr(doc, "[db] query"));
        free(doc);
        lp_report_free(r);
        lp_report_inputs_release(&in);
        lp_diags_release(&ds);
    }
    /* detection: a native trace, a directory */
    char lpt[160];
    snprintf(lpt, sizeof lpt, "%s/t.lpt", tmpdir);
    f = fopen(lpt, "w");
    fputs("longpole-trace 1\nA w 0 1 processing\n", f);
    fclose(f);
    lp_report_kind k;
    CHECK(lp_report_detect(lpt, &k, &err) == LP_OK && k == LP_RK_TRACE);
    CHECK(lp_report_detect(tmpdir, &k, &err) == LP_OK && k == LP_RK_TRACE);
    CHECK(lp_report_detect("/nonexistent/x", &k, &err) == LP_ERR_IO);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0);
}

/* Every allocation of a small report failing in turn: an error or success, no crash,
 * no leak (ASan). */
static void test_alloc_failures(void)
{
    lp_diags ds;
    lp_trace *t = load_text("longpole-trace 1\nA a 0 10 processing op1\nM a 10 b 14\nA b 0 3 io\nA b 14 30 processing op2\n"
                            "A a 10 40 serialization op1\nM b 30 a 40\nA a 40 50 processing op1\n",
                            &ds);
    lp_diags_release(&ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_report_data d;
    memset(&d, 0, sizeof d);
    d.trace = t;
    lp_report_opts o;
    lp_report_opts_init(&o);
    o.threads = 1;
    int ok = 0, failed = 0;
    for (long n = 0; n < 4000 && !ok; n++) {
        lp_alloc_fail_after(n);
        lp_report *r = NULL;
        lp_error err;
        lp_status st = lp_report_new(&r, &d, &o, &err);
        if (!st)
            st = lp_report_prepare(r, NULL, 0, &err);
        lp_alloc_fail_after(-1);
        if (!st) {
            char *buf = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&buf, &len);
            st = lp_report_write(r, f, &err);
            fclose(f);
            free(buf);
            ok = st == LP_OK;
        } else {
            failed++;
            CHECK(st == LP_ERR_NOMEM || st == LP_ERR_ARG);
        }
        lp_report_free(r);
    }
    fprintf(stderr, "allocation failures: %d points failed cleanly before the report succeeded\n", failed);
    CHECK(ok);
    CHECK(failed > 20);
    lp_trace_free(t);
}

int main(void)
{
    test_escape_fixed();
    test_escape_random();
    test_base64();
    test_dataflow();
    test_hostile();
    test_requests_and_spans();
    test_alloc_failures();
    return t_done("test_report");
}
