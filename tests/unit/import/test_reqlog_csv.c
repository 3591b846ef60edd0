/* test_reqlog_csv.c: the request-log CSV reader against naive twins.
 *
 * 1. Field splitting: rl_csv_split (every case) against a naive byte-at-a-time
 *    splitter written here from the format's definition (docs/formats/request-log.md:
 *    spaces around unquoted fields trimmed unless the delimiter is a space, "quoted"
 *    fields with "" for a quote, only spaces between the closing quote and the next
 *    delimiter), and the fast rl_csv_split_plain against rl_csv_split: whenever the fast
 *    one accepts a line, both give the same count and the same fields; it declines
 *    (-2) only lines with a field that begins with a quote or a space or ends with a
 *    space. Thousands of random lines over an alphabet rich in delimiters, quotes and
 *    spaces, lengths 0 to 300, every field limit 1..8, three delimiters.
 * 2. Whole files: thousands of random logs (quoted fields with embedded delimiters and
 *    doubled quotes, spaces, CRLF, blank and comment lines, missing and empty fields,
 *    bad numbers, bad quotes, quotes opened on one line and closed on the next, long
 *    lines) are loaded with one thread and one shard (the reference) and again with
 *    1-4 threads and shards of 40 bytes to 8 KiB: the store (dump) and the diagnostics
 *    (file, line, rule, message, in order) must be identical; and every record must
 *    be what a naive parse of its own line gives (request, host, time, event, task),
 *    every line the naive parse accepts must have a record, and every line it rejects
 *    an error diagnostic at that line.
 */
#include "t.h"
#include "tutil.h"
#include "import/reqlog/reqlog_int.h"
#include "longpole/import/reqlog.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- naive twin of the field splitter ---------------------------------------------- */

typedef struct nfield {
    char s[512];
    size_t n;
} nfield;

/* Returns the number of fields (storing up to maxf) or -1 on a bad quote. */
static int naive_split(const char *s, size_t n, char delim, nfield *f, int maxf)
{
    int k = 0, trim = delim != ' ';
    size_t i = 0;
    for (;;) {
        char buf[512];
        size_t m = 0;
        if (trim)
            while (i < n && s[i] == ' ')
                i++;
        if (i < n && s[i] == '"') {
            i++;
            for (;;) {
                if (i >= n)
                    return -1; /* unterminated */
                if (s[i] == '"') {
                    if (i + 1 < n && s[i + 1] == '"') {
                        buf[m++] = '"';
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                buf[m++] = s[i++];
            }
            if (trim)
                while (i < n && s[i] == ' ')
                    i++;
            if (i < n && s[i] != delim)
                return -1;
        } else {
            while (i < n && s[i] != delim)
                buf[m++] = s[i++];
            if (trim)
                while (m && buf[m - 1] == ' ')
                    m--;
        }
        if (k < maxf) {
            memcpy(f[k].s, buf, m);
            f[k].n = m;
        }
        k++;
        if (i >= n)
            return k;
        i++; /* the delimiter */
        if (i == n) {
            if (k < maxf)
                f[k].n = 0;
            return k + 1;
        }
    }
}

static void test_split(void)
{
    static const char alpha[] = "ab1,,\"\"  \t;.x";
    static const char delims[] = {',', '\t', ' '};
    uint64_t st = 42;
    char line[320], scratch[320];
    const char *f[8], *g[8];
    size_t fl[8], gl[8];
    nfield nf[8];
    int bad = 0, plain = 0, declined = 0;
    for (int it = 0; it < 60000 && bad < 5; it++) {
        size_t n = (size_t)(t_splitmix(&st) % (it % 10 == 0 ? 300 : 40));
        for (size_t i = 0; i < n; i++)
            line[i] = alpha[t_splitmix(&st) % (sizeof alpha - 1)];
        char delim = delims[it % 3];
        int maxf = 1 + (int)(t_splitmix(&st) % 8);
        int a = rl_csv_split(line, n, delim, f, fl, maxf, scratch, sizeof scratch);
        int b = naive_split(line, n, delim, nf, maxf);
        int same = a == b;
        for (int k = 0; same && k < a && k < maxf; k++)
            same = fl[k] == nf[k].n && memcmp(f[k], nf[k].s, fl[k]) == 0;
        int c = rl_csv_split_plain(line, n, delim, g, gl, maxf);
        if (c == -2) {
            declined++;
            /* only for a field that begins with a quote or a space or ends with a space */
            int need = 0;
            for (size_t i = 0, a0 = 0; i <= n && !need; i++)
                if (i == n || line[i] == delim) {
                    need = i > a0 && (line[a0] == '"' || line[a0] == ' ' || line[i - 1] == ' ');
                    a0 = i + 1;
                }
            same = same && need;
        } else {
            plain++;
            same = same && c == a;
            for (int k = 0; same && k < c && k < maxf; k++)
                same = gl[k] == fl[k] && memcmp(g[k], f[k], gl[k]) == 0;
        }
        if (!same) {
            bad++;
            fprintf(stderr, "split differs (delim %d, maxf %d): [%.*s] split %d naive %d plain %d\n", delim, maxf,
                    (int)n, line, a, b, c);
        }
    }
    CHECK(bad == 0);
    CHECK(plain > 10000 && declined > 10000); /* both paths were exercised */
}

/* ---- naive twin of a record line --------------------------------------------------- */

typedef struct nrec {
    int ok;               /* a record (1), a skipped line (blank, comment, header: 2), bad (0) */
    char req[512], host[512], ev[512], task[512];
    long long time;
} nrec;

static void naive_line(const char *s, size_t n, int header, nrec *r)
{
    memset(r, 0, sizeof *r);
    if (n && s[n - 1] == '\r')
        n--;
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i == n || s[i] == '#' || header) {
        r->ok = 2;
        return;
    }
    nfield f[5];
    int k = naive_split(s, n, ',', f, 5);
    if (k < 5)
        return;
    for (int x = 0; x < 5; x++)
        if (f[x].n == 0)
            return;
    long long t = 0;
    if (f[2].n > 18)
        return;
    for (size_t x = 0; x < f[2].n; x++) {
        if (f[2].s[x] < '0' || f[2].s[x] > '9')
            return;
        t = t * 10 + (f[2].s[x] - '0');
    }
    memcpy(r->req, f[0].s, f[0].n);
    memcpy(r->host, f[1].s, f[1].n);
    memcpy(r->ev, f[3].s, f[3].n);
    memcpy(r->task, f[4].s, f[4].n);
    r->time = t;
    r->ok = 1;
}

/* ---- random logs ------------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

/* A name field: plain, spaced, quoted (maybe with a delimiter or a doubled quote). */
static void put_name(sbuf *b, uint64_t *st, const char *base)
{
    unsigned k = (unsigned)(t_splitmix(st) % 16);
    char buf[128];
    if (k < 10)
        snprintf(buf, sizeof buf, "%s", base);
    else if (k == 10)
        snprintf(buf, sizeof buf, "  %s ", base);
    else if (k == 11)
        snprintf(buf, sizeof buf, "\"%s\"", base);
    else if (k == 12)
        snprintf(buf, sizeof buf, " \"%s,x\" ", base);
    else if (k == 13)
        snprintf(buf, sizeof buf, "\"%s\"\"q\"", base);
    else if (k == 14)
        snprintf(buf, sizeof buf, "%s\"mid", base);
    else
        snprintf(buf, sizeof buf, "%s x", base);
    puts_(b, buf);
}

static void random_log(sbuf *b, uint64_t *st, int nlines)
{
    b->n = 0;
    puts_(b, "request,host,time,event,task\n");
    for (int l = 2; l <= nlines; l++) {
        unsigned k = (unsigned)(t_splitmix(st) % 100);
        char nm[64];
        const char *eol = t_splitmix(st) % 5 == 0 ? "\r\n" : "\n";
        if (k < 3) {
            puts_(b, k == 0 ? "" : k == 1 ? "   \t" : "# a comment, with \"quotes");
            puts_(b, eol);
            continue;
        }
        snprintf(nm, sizeof nm, "r%u", (unsigned)(t_splitmix(st) % 12));
        put_name(b, st, nm);
        puts_(b, ",");
        snprintf(nm, sizeof nm, "h%u", (unsigned)(t_splitmix(st) % 4));
        if (k == 3)
            puts_(b, ""); /* an empty host */
        else
            put_name(b, st, nm);
        puts_(b, ",");
        /* times grow with the line: no rule problems within a task */
        if (k == 4)
            puts_(b, "12x");
        else if (k == 5)
            puts_(b, "abc");
        else {
            snprintf(nm, sizeof nm, "%d", l * 10);
            puts_(b, nm);
        }
        if (k == 6) { /* too few fields */
            puts_(b, eol);
            continue;
        }
        puts_(b, ",");
        snprintf(nm, sizeof nm, "e%d", l); /* events unique per line */
        put_name(b, st, nm);
        puts_(b, ",");
        if (k == 7)
            puts_(b, "\"t0"); /* an open quote: bad, and so may be the next line */
        else if (k == 8)
            puts_(b, "t1\" ,");
        else {
            snprintf(nm, sizeof nm, "t%u", (unsigned)(t_splitmix(st) % 3));
            put_name(b, st, nm);
        }
        if (k == 9) { /* a long line: an extra column of 2-6 KiB */
            puts_(b, ",");
            size_t m = 2048 + (size_t)(t_splitmix(st) % 4096);
            for (size_t x = 0; x < m; x++)
                put(b, "abcdefgh," + (x % 9), 1);
        } else if (k == 10) {
            puts_(b, ",\"extra\"\"\",ok");
        } else if (k == 11) {
            puts_(b, ",\"bad\"x");
        }
        puts_(b, eol);
    }
}

/* The diagnostics as text, one per line, in order. */
static char *diag_text(const lp_diags *ds)
{
    sbuf b = {0};
    puts_(&b, "");
    for (size_t i = 0; i < ds->nkept; i++) {
        char buf[800];
        snprintf(buf, sizeof buf, "%s:%llu: %d %d %s\n", ds->kept[i].file, (unsigned long long)ds->kept[i].line,
                 (int)ds->kept[i].sev, (int)ds->kept[i].rule, ds->kept[i].msg);
        puts_(&b, buf);
    }
    char tail[64];
    snprintf(tail, sizeof tail, "errors %llu warnings %llu\n", (unsigned long long)ds->nerrors,
             (unsigned long long)ds->nwarnings);
    puts_(&b, tail);
    return b.p;
}

/* The store as text: every record in input order (its line, request, host, time,
 * event, task), then every request (name, records, excluded). */
static char *store_text(const lp_reqlog *rl)
{
    sbuf b = {0};
    puts_(&b, "");
    uint64_t *rowof = calloc(rl->nrows ? rl->nrows : 1, sizeof *rowof), *reqof = calloc(rl->nrows ? rl->nrows : 1, sizeof *reqof);
    for (uint64_t q = 0; q < rl->nreqs; q++)
        for (uint64_t i = rl->rfirst[q]; i < rl->rfirst[q + 1]; i++) {
            rowof[rl->rows[i].src] = i;
            reqof[rl->rows[i].src] = q;
        }
    for (uint64_t k = 0; k < rl->nrows; k++) {
        const lp_reqrow *w = &rl->rows[rowof[k]];
        uint64_t line;
        lp_reqlog_where(rl, w->src, &line);
        char buf[2200];
        snprintf(buf, sizeof buf, "%llu %s|%s|%lld|%s|%s\n", (unsigned long long)line,
                 lp_reqlog_str(rl, rl->req_name[reqof[k]]), lp_reqlog_str(rl, rl->host_name[w->host]),
                 (long long)w->time, lp_reqlog_str(rl, rl->event_name[rl->pt_event[w->point]]),
                 lp_reqlog_str(rl, rl->task_name[rl->pt_task[w->point]]));
        puts_(&b, buf);
    }
    for (uint64_t q = 0; q < rl->nreqs; q++) {
        char buf[700];
        snprintf(buf, sizeof buf, "req %s %llu %d\n", lp_reqlog_str(rl, rl->req_name[q]),
                 (unsigned long long)(rl->rfirst[q + 1] - rl->rfirst[q]), rl->rbad[q]);
        puts_(&b, buf);
    }
    free(rowof), free(reqof);
    return b.p;
}

/* Each record is its line's naive parse; each accepted line has a record; each rejected
 * line has an error at that line. Returns the number of disagreements. */
static int check_naive(const lp_reqlog *rl, const lp_diags *ds, const char *text, size_t len)
{
    /* line starts */
    size_t nl = 1;
    for (size_t i = 0; i < len; i++)
        nl += text[i] == '\n';
    size_t *at = malloc((nl + 1) * sizeof *at);
    size_t k = 0;
    at[k++] = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n')
            at[k++] = i + 1;
    if (len && text[len - 1] == '\n')
        k--; /* no line after the last newline */
    uint8_t *has = calloc(k + 2, 1), *err = calloc(k + 2, 1);
    nrec *nr = malloc(sizeof *nr);
    int bad = 0;
    /* the request of each record: rows are grouped by request */
    for (uint64_t q = 0; q < rl->nreqs; q++)
        for (uint64_t i = rl->rfirst[q]; i < rl->rfirst[q + 1]; i++) {
            const lp_reqrow *w = &rl->rows[i];
            uint64_t line;
            lp_reqlog_where(rl, w->src, &line);
            if (line < 1 || line > k) {
                bad++;
                continue;
            }
            has[line] = 1;
            size_t e = line < k ? at[line] - 1 : len - (len && text[len - 1] == '\n');
            naive_line(text + at[line - 1], e - at[line - 1], line == 1, nr);
            if (nr->ok != 1 || strcmp(nr->req, lp_reqlog_str(rl, rl->req_name[q])) ||
                strcmp(nr->host, lp_reqlog_str(rl, rl->host_name[w->host])) || nr->time != w->time ||
                strcmp(nr->ev, lp_reqlog_str(rl, rl->event_name[rl->pt_event[w->point]])) ||
                strcmp(nr->task, lp_reqlog_str(rl, rl->task_name[rl->pt_task[w->point]]))) {
                if (bad++ < 3)
                    fprintf(stderr, "line %llu: record differs from the naive parse (ok %d): %s|%s|%lld|%s|%s vs %s|%s|%lld|%s|%s\n",
                            (unsigned long long)line, nr->ok, nr->req, nr->host, nr->time, nr->ev, nr->task,
                            lp_reqlog_str(rl, rl->req_name[q]), lp_reqlog_str(rl, rl->host_name[w->host]),
                            (long long)w->time, lp_reqlog_str(rl, rl->event_name[rl->pt_event[w->point]]),
                            lp_reqlog_str(rl, rl->task_name[rl->pt_task[w->point]]));
            }
        }
    for (size_t i = 0; i < ds->nkept; i++)
        if (ds->kept[i].sev == LP_SEV_ERROR && ds->kept[i].line >= 1 && ds->kept[i].line <= k)
            err[ds->kept[i].line] = 1;
    for (size_t line = 1; line <= k; line++) {
        size_t e = line < k ? at[line] - 1 : len - (len && text[len - 1] == '\n');
        naive_line(text + at[line - 1], e - at[line - 1], line == 1, nr);
        if ((nr->ok == 1 && !has[line]) || (nr->ok == 0 && (has[line] || !err[line])) ||
            (nr->ok == 2 && (has[line] || err[line]))) {
            if (bad++ < 3)
                fprintf(stderr, "line %zu: naive %d, record %d, error %d: [%.*s]\n", line, nr->ok, has[line],
                        err[line], (int)(e - at[line - 1] > 80 ? 80 : e - at[line - 1]), text + at[line - 1]);
        }
    }
    free(at), free(has), free(err), free(nr);
    return bad;
}

static lp_reqlog *load_file(const char *path, unsigned threads, size_t shard, lp_diags *ds)
{
    lp_reqlog_opts o;
    lp_reqlog_opts_init(&o);
    o.threads = threads;
    o.shard_bytes = shard;
    lp_diags_init(ds, 100000);
    lp_error err;
    lp_error_clear(&err);
    lp_reqlog *rl = NULL;
    const char *paths[] = {path};
    if (lp_reqlog_load(paths, 1, &o, ds, &rl, &err) != LP_OK) {
        fprintf(stderr, "load failed: %s\n", err.msg);
        return NULL;
    }
    return rl;
}

static void test_files(void)
{
    char dir[] = "/tmp/lp_reqlog_csv_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "%s/log.csv", dir);
    uint64_t st = 7;
    sbuf b = {0};
    int differ = 0, naive = 0, runs = 0;
    for (int it = 0; it < 1500 && differ + naive < 5; it++) {
        random_log(&b, &st, 2 + (int)(t_splitmix(&st) % 60));
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(b.p, 1, b.n, f) != b.n || fclose(f)) {
            CHECK(0);
            break;
        }
        lp_diags d0;
        lp_reqlog *ref = load_file(path, 1, 0, &d0);
        CHECK(ref != NULL);
        if (!ref) {
            lp_diags_release(&d0);
            break;
        }
        naive += check_naive(ref, &d0, b.p, b.n) != 0;
        char *s0 = store_text(ref), *t0 = diag_text(&d0);
        /* the same file in memory (one stream: the reader's other path) */
        lp_diags dm;
        lp_diags_init(&dm, 100000);
        lp_reqlog_opts om;
        lp_reqlog_opts_init(&om);
        lp_reqlog *mem = NULL;
        lp_error err;
        if (lp_reqlog_load_mem(b.p, b.n, path, &om, &dm, &mem, &err) == LP_OK) {
            char *s1 = store_text(mem), *t1 = diag_text(&dm);
            differ += strcmp(s0, s1) != 0 || strcmp(t0, t1) != 0;
            free(s1), free(t1);
            lp_reqlog_free(mem);
        } else {
            differ++;
        }
        lp_diags_release(&dm);
        for (int v = 0; v < 2; v++) {
            unsigned threads = 1 + (unsigned)(t_splitmix(&st) % 4);
            size_t shard = 40 + (size_t)(t_splitmix(&st) % (v ? 8192 : 400));
            lp_diags d1;
            lp_reqlog *x = load_file(path, threads, shard, &d1);
            runs++;
            if (x) {
                char *s1 = store_text(x), *t1 = diag_text(&d1);
                if (strcmp(s0, s1) != 0 || strcmp(t0, t1) != 0) {
                    if (differ++ < 2)
                        fprintf(stderr, "threads %u shard %zu: store or diagnostics differ\n--\n%s%s--\n%s%s", threads,
                                shard, s0, t0, s1, t1);
                }
                free(s1), free(t1);
                lp_reqlog_free(x);
            } else {
                differ++;
            }
            lp_diags_release(&d1);
        }
        free(s0), free(t0);
        lp_reqlog_free(ref);
        lp_diags_release(&d0);
    }
    CHECK(differ == 0);
    CHECK(naive == 0);
    CHECK(runs >= 2000);
    free(b.p);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    test_split();
    test_files();
    return t_done("test_reqlog_csv");
}
