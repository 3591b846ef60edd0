/* test_io.c: compressed input, the binary form (round trip, corruption, truncation),
 * and loading through lp_trace_load. */
#include "t.h"
#include "tutil.h"

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

static const char *text =
    "longpole-trace 1\n"
    "W w1 host=a\n"
    "A w1 0 40 processing map k=v\n"
    "M w1 40 w2 55 id=7 bytes=4096\n"
    "A w1 40 100 serialization map\n"
    "A w2 0 30 processing count\n"
    "A w2 55 110 processing count\n"
    "S w2 110 w1 x1\nR w1 120 w2 x1\n";

static lp_trace *load_mem(const void *p, size_t n, lp_diags *ds)
{
    lp_diags_init(ds, 10);
    lp_error err;
    lp_builder *b;
    if (lp_builder_new(&b, ds, NULL, &err))
        return NULL;
    lp_input *in;
    if (lp_input_open_mem(&in, p, n, "mem", &err)) {
        lp_builder_free(b);
        return NULL;
    }
    lp_status st = lp_lpt_read(b, in, NULL, &err);
    lp_input_close(in);
    lp_trace *t = NULL;
    if (st) {
        lp_builder_free(b);
        return NULL;
    }
    if (lp_builder_finish(b, &t, &err))
        return NULL;
    return t;
}

static void test_compressed(void)
{
    size_t n = strlen(text);
    /* gzip, twice concatenated (multi-member) */
    unsigned char gz[4096];
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    zs.next_in = (unsigned char *)(uintptr_t)text;
    zs.avail_in = (uInt)n;
    zs.next_out = gz;
    zs.avail_out = sizeof gz;
    CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    size_t gzn = sizeof gz - zs.avail_out;
    deflateEnd(&zs);
    lp_diags ds;
    lp_trace *t = load_mem(gz, gzn, &ds);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_I(t->nmsgs, 2);
        CHECK_EQ_I(ds.nerrors, 0);
    }
    lp_trace_free(t);
    lp_diags_release(&ds);
    /* truncated gzip: an error, not a silent short read */
    t = load_mem(gz, gzn / 2, &ds);
    CHECK(t == NULL);
    lp_diags_release(&ds);
    /* zstd */
    unsigned char zb[4096];
    size_t zn = ZSTD_compress(zb, sizeof zb, text, n, 3);
    CHECK(!ZSTD_isError(zn));
    t = load_mem(zb, zn, &ds);
    CHECK(t != NULL);
    if (t)
        CHECK_EQ_I(t->nacts, 4 + 2);
    lp_trace_free(t);
    lp_diags_release(&ds);
    t = load_mem(zb, zn - 3, &ds);
    CHECK(t == NULL);
    lp_diags_release(&ds);
}

static char *to_binary(const lp_trace *t, size_t *n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, n);
    lp_error err;
    if (!f || lp_lptb_write(t, f, &err)) {
        if (f)
            fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    return buf;
}

static lp_status from_binary(const void *p, size_t n, lp_trace **out, lp_error *err)
{
    lp_input *in;
    lp_status st = lp_input_open_mem(&in, p, n, "mem.lptb", err);
    if (st)
        return st;
    st = lp_lptb_read(in, out, NULL, NULL, err);
    lp_input_close(in);
    return st;
}

static void test_binary(void)
{
    lp_diags ds;
    lp_trace *t = load_mem(text, strlen(text), &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    size_t n;
    char *bin = to_binary(t, &n);
    CHECK(bin != NULL && n > 128);
    lp_trace *t2 = NULL;
    lp_error err;
    CHECK(from_binary(bin, n, &t2, &err) == LP_OK);
    if (t2) {
        char *a = write_text(t), *b = write_text(t2);
        CHECK(a && b && strcmp(a, b) == 0);
        free(a);
        free(b);
        CHECK_EQ_I(t2->ngaps, t->ngaps);
        CHECK_EQ_I(t2->tmin, t->tmin);
        CHECK_EQ_I(t2->tmax, t->tmax);
        lp_trace_free(t2);
    }
    /* every single-byte corruption is detected (checksum or validation) */
    int undetected = 0;
    for (size_t i = 0; i < n; i++) {
        bin[i] ^= 0x5a;
        lp_trace *t3 = NULL;
        if (from_binary(bin, n, &t3, &err) == LP_OK) {
            undetected++;
            lp_trace_free(t3);
        }
        bin[i] ^= 0x5a;
    }
    CHECK_EQ_I(undetected, 0);
    /* truncation at every length is an error naming a byte offset */
    int bad_msg = 0;
    for (size_t k = 0; k < n; k += 7) {
        lp_trace *t3 = NULL;
        lp_status st = from_binary(bin, k, &t3, &err);
        CHECK(st != LP_OK);
        if (st == LP_OK)
            lp_trace_free(t3);
        else if (!strstr(err.msg, "byte"))
            bad_msg++;
    }
    CHECK_EQ_I(bad_msg, 0);
    free(bin);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* A name holding a NUL byte (the text form writes it as %00) cannot be stored in the
 * binary form's NUL-terminated string table: the writer refuses it, before writing. */
static void test_binary_nul_name(void)
{
    static const char t0[] = "A w%00x 0 10 processing\nA w2 0 5 io\n";
    lp_diags ds;
    lp_trace *t = load_mem(t0, sizeof t0 - 1, &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    int has_nul = 0;
    for (uint32_t w = 0; w < t->nworkers; w++)
        has_nul |= memchr(lp_trace_worker_name(t, w), 0, lp_strtab_len(&t->strs, t->wname[w])) != NULL;
    CHECK(has_nul);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    lp_error err;
    CHECK(f && lp_lptb_write(t, f, &err) == LP_ERR_UNSUPPORTED);
    if (f)
        fclose(f);
    CHECK(n == 0);
    CHECK(strstr(err.msg, "NUL") != NULL);
    free(buf);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

/* The same checks through a plain file: the reader maps it (lpt_bin.c). */
static lp_status from_file(const char *path, const void *p, size_t n, lp_trace **out, lp_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return lp_error_set(err, LP_ERR_IO, "cannot write %s", path);
    fwrite(p, 1, n, f);
    fclose(f);
    lp_input *in;
    lp_status st = lp_input_open(&in, path, err);
    if (st)
        return st;
    st = lp_lptb_read(in, out, NULL, NULL, err);
    lp_input_close(in);
    return st;
}

static void test_binary_mapped(void)
{
    lp_diags ds;
    lp_trace *t = load_mem(text, strlen(text), &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    size_t n;
    char *bin = to_binary(t, &n);
    char dir[] = "/tmp/lp_test_map_XXXXXX";
    CHECK(bin != NULL && mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/m.lptb", dir);
    lp_trace *t2 = NULL;
    lp_error err;
    CHECK(from_file(path, bin, n, &t2, &err) == LP_OK);
    if (t2) {
        CHECK(t2->map != NULL); /* mapped, not read */
        char *a = write_text(t), *b = write_text(t2);
        CHECK(a && b && strcmp(a, b) == 0);
        free(a);
        free(b);
        /* writes to the columns stay in the process: the file is unchanged */
        if (t2->nacts)
            t2->astart[0] ^= 1;
        lp_trace_free(t2);
        FILE *f = fopen(path, "rb");
        char *back = malloc(n + 1);
        CHECK(f && back && fread(back, 1, n + 1, f) == n && memcmp(back, bin, n) == 0);
        if (f)
            fclose(f);
        free(back);
    }
    int undetected = 0, bad_msg = 0;
    for (size_t i = 0; i < n; i += 3) {
        bin[i] ^= 0x5a;
        lp_trace *t3 = NULL;
        if (from_file(path, bin, n, &t3, &err) == LP_OK) {
            undetected++;
            lp_trace_free(t3);
        }
        bin[i] ^= 0x5a;
    }
    CHECK_EQ_I(undetected, 0);
    for (size_t k = 1; k < n + 9; k += 11) { /* shorter and longer files */
        lp_trace *t3 = NULL;
        char *buf = calloc(1, n + 9);
        if (!buf)
            break;
        memcpy(buf, bin, n);
        lp_status st = k == n ? LP_OK : from_file(path, buf, k, &t3, &err);
        if (k != n) {
            CHECK(st != LP_OK);
            if (st == LP_OK)
                lp_trace_free(t3);
            else if (!strstr(err.msg, "byte"))
                bad_msg++;
        }
        free(buf);
    }
    CHECK_EQ_I(bad_msg, 0);
    remove(path);
    rmdir(dir);
    free(bin);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

static void test_load_files(void)
{
    char dir[] = "/tmp/lp_test_io_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p1[256], p2[256], pb[256];
    snprintf(p1, sizeof p1, "%s/a.lpt", dir);
    snprintf(p2, sizeof p2, "%s/b.lpt", dir);
    snprintf(pb, sizeof pb, "%s/c.lptb", dir);
    FILE *f = fopen(p1, "w");
    fputs("A x 0 10 processing\nM x 10 y 12 id=1\n", f);
    fclose(f);
    f = fopen(p2, "w");
    fputs("A y 12 20 processing\nA y 30\n", f);
    fclose(f);
    const char *paths[] = {p1, p2};
    lp_diags ds;
    lp_diags_init(&ds, 10);
    lp_error err;
    lp_trace *t = NULL;
    CHECK(lp_trace_load(paths, 2, NULL, &ds, &t, &err) == LP_OK);
    CHECK_EQ_I(ds.nerrors, 1);
    CHECK(ds.nkept >= 1 && strcmp(ds.kept[0].file, p2) == 0 && ds.kept[0].line == 2);
    if (t) {
        CHECK_EQ_I(t->nworkers, 2);
        CHECK(lp_trace_save(t, pb, 1, LP_COMP_ZSTD, &err) == LP_OK);
        lp_trace *t2 = NULL;
        const char *pp[] = {pb};
        lp_diags ds2;
        lp_diags_init(&ds2, 10);
        CHECK(lp_trace_load(pp, 1, NULL, &ds2, &t2, &err) == LP_OK);
        if (t2) {
            CHECK_EQ_I(t2->nacts, t->nacts);
            lp_trace_free(t2);
        }
        lp_diags_release(&ds2);
        lp_trace_free(t);
    }
    lp_diags_release(&ds);
    /* missing file: an I/O error naming it */
    const char *missing[] = {"/nonexistent/x.lpt"};
    lp_diags_init(&ds, 10);
    CHECK(lp_trace_load(missing, 1, NULL, &ds, &t, &err) == LP_ERR_IO);
    CHECK(strstr(err.msg, "/nonexistent/x.lpt") != NULL);
    lp_diags_release(&ds);
    unlink(p1);
    unlink(p2);
    unlink(pb);
    rmdir(dir);
}

static void test_window(void)
{
    lp_diags ds;
    lp_trace *t = load_mem(text, strlen(text), &ds);
    CHECK(t != NULL);
    if (!t)
        return;
    lp_trace *w = NULL;
    lp_error err;
    CHECK(lp_trace_window(t, 20, 60, &w, &err) == LP_OK);
    if (w) {
        /* w1: [0,40] cut to [20,40], [40,100] cut to [40,60]; w2: [0,30]->[20,30], wait [30,55], [55,110]->[55,60] */
        CHECK_EQ_I(w->nacts, 5);
        CHECK_EQ_I(w->astart[0], 20);
        CHECK_EQ_I(w->aend[1], 60);
        CHECK_EQ_I(w->nmsgs, 1);
        lp_pag g;
        lp_cpath cp;
        CHECK(lp_pag_build(w, &g, &err) == LP_OK);
        CHECK(lp_cpath_compute(&g, &cp, &err) == LP_OK);
        CHECK_EQ_I(cp.total, 40);
        lp_cpath_release(&cp);
        lp_pag_release(&g);
        lp_trace_free(w);
    }
    CHECK(lp_trace_window(t, 60, 20, &w, &err) == LP_ERR_ARG);
    lp_trace_free(t);
    lp_diags_release(&ds);
}

int main(void)
{
    test_compressed();
    test_binary();
    test_binary_nul_name();
    test_binary_mapped();
    test_load_files();
    test_window();
    return t_done("test_io");
}
