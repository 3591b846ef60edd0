/* test_kindex.c: the execution graph's index file (kindex.h, docs/formats/kindex.md):
 * a round trip keeps every column and every path; the traces' fingerprint makes a
 * changed, added or removed trace file STALE and other traces or another clock option
 * FOREIGN; a bit flipped at every byte (header, each section, checksum) and a
 * truncation at every length are refused as CORRUPT (or FOREIGN for the magic and
 * version); wrong contents under a valid checksum are refused by validation, section by
 * section; and a byte set to 0xFF anywhere with the checksum fixed is either refused or
 * yields a graph that validates and whose paths compute (no crash, no hang). The
 * verification stamp vouches only for the very file it was made for: a write (even with
 * the mtime put back), a replacement, a foreign or malformed stamp, or --verify mean the
 * full checks; a file found corrupt loses its stamp. */
#include "kscen.h"
#include "longpole/analysis/kernel/kindex.h"
#include "base/hashmap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static void path_in(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", tmpdir, name); }

/* Remove an index and its verification stamp. */
static void rm_index(const char *path)
{
    char sp[1024];
    unlink(path);
    if ((size_t)snprintf(sp, sizeof sp, "%s%s", path, LP_KINDEX_STAMP_SUFFIX) < sizeof sp)
        unlink(sp);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

/* The simple network exchange (two hosts, matched packets) and the wifi trace alone
 * (unmatched packet keys). */
static lp_kgraph *scenario(int alone)
{
    lp_ktrace kt;
    kt_init(&kt);
    lp_kmatch m, *mp = NULL;
    lp_kpacket pk[2];
    lp_kclock clk[2];
    if (alone) {
        wifi_events(&kt, kt_host(&kt, "wifi", 1));
    } else {
        uint32_t s = kt_host(&kt, "server", 2), c = kt_host(&kt, "client", 1);
        server_events(&kt, s);
        client_events(&kt, c);
        match(&kt, c, s, &m, pk, clk);
        mp = &m;
    }
    lp_kgraph *g = NULL;
    lp_error err;
    CHECK(lp_kgraph_build(&kt, mp, NULL, NULL, &g, &err) == LP_OK);
    kt_release(&kt);
    return g;
}

static int same_graph(const lp_kgraph *a, const lp_kgraph *b)
{
    if (a->nhosts != b->nhosts || a->nworkers != b->nworkers || a->nv != b->nv || a->nlinks != b->nlinks ||
        a->npk != b->npk || a->synced != b->synced || a->strs.n != b->strs.n)
        return 0;
    for (uint32_t i = 0; i < a->strs.n; i++)
        if (strcmp(lp_kgraph_str(a, i), lp_kgraph_str(b, i)) != 0)
            return 0;
    return !memcmp(a->host, b->host, a->nhosts * 4) && !memcmp(a->clock_slope, b->clock_slope, a->nhosts * 8) &&
           !memcmp(a->clock_offset, b->clock_offset, a->nhosts * 8) &&
           !memcmp(a->w, b->w, a->nworkers * sizeof *a->w) && !memcmp(a->voff, b->voff, (a->nworkers + 1) * 4) &&
           !memcmp(a->vt, b->vt, a->nv * 8) && !memcmp(a->vstate, b->vstate, a->nv) &&
           !memcmp(a->vreason, b->vreason, a->nv) && !memcmp(a->vin, b->vin, a->nv * 4) &&
           !memcmp(a->vout, b->vout, a->nv * 4) && !memcmp(a->lfrom, b->lfrom, a->nlinks * 4) &&
           !memcmp(a->lto, b->lto, a->nlinks * 4) && !memcmp(a->lkind, b->lkind, a->nlinks) &&
           !memcmp(a->pk, b->pk, a->npk * sizeof *a->pk) && !memcmp(&a->st, &b->st, sizeof a->st);
}

static int same_paths(const lp_kgraph *a, const lp_kgraph *b)
{
    for (uint32_t w = 0; w < a->nworkers; w++)
        for (int algo = 0; algo < 2; algo++) {
            lp_kcp x, y;
            lp_error err;
            if (lp_kcp_compute(a, w, LP_KCP_LIFETIME_START, LP_KCP_LIFETIME_END, (lp_kcp_algo)algo, &x, &err))
                return 0;
            int ok = lp_kcp_compute(b, w, LP_KCP_LIFETIME_START, LP_KCP_LIFETIME_END, (lp_kcp_algo)algo, &y, &err) == 0;
            ok = ok && x.n == y.n && !memcmp(x.e, y.e, x.n * sizeof *x.e);
            lp_kcp_release(&x);
            if (ok)
                lp_kcp_release(&y);
            if (!ok)
                return 0;
        }
    return 1;
}

static void round_trip(void)
{
    for (int alone = 0; alone < 2; alone++) {
        lp_kgraph *g = scenario(alone);
        if (!g)
            continue;
        char path[512];
        path_in(path, sizeof path, "g.lpkx");
        lp_error err;
        CHECK(lp_kindex_write(g, NULL, path, &err) == LP_OK);
        lp_kgraph *h = NULL;
        lp_kindex_verdict v;
        CHECK(lp_kindex_open(path, NULL, &h, &v, &err) == LP_OK);
        CHECK(v == LP_KINDEX_OK);
        if (h) {
            CHECK(same_graph(g, h));
            CHECK(same_paths(g, h));
            CHECK(h->map != NULL);
            CHECK(lp_kgraph_footprint(h) < lp_kgraph_footprint(g)); /* the columns are in the mapping */
            CHECK_EQ_I(h->npk, alone ? 2 : 0);
            uint32_t w;
            CHECK(lp_kgraph_find_thread(h, "client", NULL, &w, &err) == LP_OK);
        }
        lp_kgraph_free(h);
        lp_kgraph_free(g);
        rm_index(path);
    }
}

/* ---- the verification stamp --------------------------------------------------------- */

/* Open path; *stamped, *written from lp_kindex_info; the status. */
static lp_status open_stamped(const char *path, unsigned verify, int *stamped, int *written, lp_kindex_verdict *v)
{
    lp_kindex_expect ex = {NULL, -1, 0, verify};
    lp_kindex_info info;
    lp_kgraph *g = NULL;
    lp_error err;
    lp_status st = lp_kindex_open_info(path, &ex, &g, v, &info, &err);
    *stamped = info.stamped;
    *written = info.stamp_written;
    lp_kgraph_free(g);
    return st;
}

static int exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

static void stamps(void)
{
    lp_kgraph *g = scenario(0);
    if (!g)
        return;
    char path[512], stamp[600], other[512], ostamp[600];
    path_in(path, sizeof path, "s.lpkx");
    path_in(other, sizeof other, "o.lpkx");
    snprintf(stamp, sizeof stamp, "%s" LP_KINDEX_STAMP_SUFFIX, path);
    snprintf(ostamp, sizeof ostamp, "%s" LP_KINDEX_STAMP_SUFFIX, other);
    lp_error err;
    lp_kindex_verdict v;
    int stamped, written;
    CHECK(lp_kindex_write(g, NULL, path, &err) == LP_OK);
    CHECK(exists(stamp)); /* the writer stamps what it wrote */
    CHECK(open_stamped(path, 0, &stamped, &written, &v) == LP_OK && stamped == 1 && written == 0);
    CHECK(open_stamped(path, 1, &stamped, &written, &v) == LP_OK && stamped == 0 && written == 1); /* --verify */
    CHECK(open_stamped(path, 0, &stamped, &written, &v) == LP_OK && stamped == 1);

    /* a byte changed in place, the mtime put back: ctime differs, full checks, refused */
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
    int fd = open(path, O_WRONLY);
    CHECK(fd >= 0);
    unsigned char x = 0x5a;
    CHECK(pwrite(fd, &x, 1, 200) == 1);
    close(fd);
    struct timespec t[2] = {sb.st_atim, sb.st_mtim};
    CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
    CHECK(open_stamped(path, 0, &stamped, &written, &v) != LP_OK && stamped == 0 && v == LP_KINDEX_CORRUPT);
    CHECK(!exists(stamp)); /* a corrupt file loses its stamp */

    /* rewritten; only touched: the full checks pass and stamp it again */
    CHECK(lp_kindex_write(g, NULL, path, &err) == LP_OK);
    CHECK(utimensat(AT_FDCWD, path, NULL, 0) == 0);
    CHECK(open_stamped(path, 0, &stamped, &written, &v) == LP_OK && stamped == 0 && written == 1);
    CHECK(open_stamped(path, 0, &stamped, &written, &v) == LP_OK && stamped == 1);

    /* another file's stamp (another inode and times) vouches for nothing */
    CHECK(lp_kindex_write(g, NULL, other, &err) == LP_OK);
    size_t n;
    unsigned char *b = slurp(ostamp, &n);
    CHECK(b != NULL && n == 72);
    FILE *f = fopen(stamp, "wb");
    CHECK(f != NULL);
    if (f && b) {
        fwrite(b, 1, n, f);
        fclose(f);
    }
    CHECK(open_stamped(path, 0, &stamped, &written, &v) == LP_OK && stamped == 0 && written == 1);
    /* a stamp bit flipped, or one byte longer, is not a stamp */
    unsigned char *own = slurp(stamp, &n);
    for (size_t i = 0; own && i <= n; i++) {
        f = fopen(stamp, "wb");
        if (!f)
            break;
        if (i < n) {
            own[i] ^= 1;
            fwrite(own, 1, n, f);
            own[i] ^= 1;
        } else {
            fwrite(own, 1, n, f);
            fputc(0, f);
        }
        fclose(f);
        CHECK(open_stamped(path, 0, &stamped, &written, &v) == LP_OK && stamped == 0);
    }
    free(own);
    free(b);
    /* the same file replaced by a copy (a new inode) with a copied stamp: not vouched */
    CHECK(open_stamped(path, 0, &stamped, &written, &v) == LP_OK && stamped == 1);
    b = slurp(path, &n);
    unsigned char *sb2 = NULL;
    size_t n2;
    sb2 = slurp(stamp, &n2);
    rm_index(path);
    f = fopen(path, "wb");
    if (f && b) {
        fwrite(b, 1, n, f);
        fclose(f);
    }
    f = fopen(stamp, "wb");
    if (f && sb2) {
        fwrite(sb2, 1, n2, f);
        fclose(f);
    }
    CHECK(open_stamped(path, 0, &stamped, &written, &v) == LP_OK && stamped == 0);
    free(b);
    free(sb2);
    rm_index(path);
    unlink(stamp);
    unlink(other);
    unlink(ostamp);
    lp_kgraph_free(g);
}

/* ---- fingerprints ------------------------------------------------------------------- */

static lp_status open_expect(const char *idx, const char *const *paths, size_t n, int synced, lp_kindex_verdict *v,
                             lp_error *err)
{
    lp_kindex_fp fp;
    lp_status st = lp_kindex_fingerprint(paths, n, &fp, err);
    if (st)
        return st;
    lp_kindex_expect ex = {&fp, synced, 0, 0};
    lp_kgraph *g = NULL;
    st = lp_kindex_open(idx, &ex, &g, v, err);
    lp_kgraph_free(g);
    lp_kindex_fp_release(&fp);
    return st;
}

static void fingerprints(void)
{
    char t1[512], t2[512], f[700], idx[600];
    path_in(t1, sizeof t1, "trace1");
    path_in(t2, sizeof t2, "trace2");
    mkdir(t1, 0700);
    mkdir(t2, 0700);
    snprintf(f, sizeof f, "%s/sub", t1);
    mkdir(f, 0700);
    snprintf(f, sizeof f, "%s/metadata", t1);
    write_file(f, "metadata");
    snprintf(f, sizeof f, "%s/sub/channel0_0", t1);
    write_file(f, "stream bytes");
    snprintf(f, sizeof f, "%s/metadata", t2);
    write_file(f, "other");
    snprintf(idx, sizeof idx, "%s/graph.lpkx", t1); /* written inside the trace: not part of it */
    const char *one[] = {t1}, *two[] = {t1, t2}, *other[] = {t2};
    lp_kindex_fp fp;
    lp_error err;
    CHECK(lp_kindex_fingerprint(one, 1, &fp, &err) == LP_OK);
    CHECK_EQ_I(fp.nroots, 1);
    CHECK_EQ_I(fp.n, 3); /* the root, metadata, sub/channel0_0 */
    lp_kgraph *g = scenario(0);
    if (!g)
        return;
    CHECK(lp_kindex_write(g, &fp, idx, &err) == LP_OK);
    lp_kindex_fp_release(&fp);
    lp_kindex_verdict v;
    CHECK(open_expect(idx, one, 1, -1, &v, &err) == LP_OK && v == LP_KINDEX_OK);
    CHECK(open_expect(idx, one, 1, 1, &v, &err) == LP_OK);
    CHECK(open_expect(idx, one, 1, 0, &v, &err) == LP_ERR_DATA && v == LP_KINDEX_FOREIGN); /* clock option */
    CHECK(strstr(err.msg, "synchronisation") != NULL);
    CHECK(open_expect(idx, other, 1, -1, &v, &err) == LP_ERR_DATA && v == LP_KINDEX_FOREIGN);
    CHECK(strstr(err.msg, "trace2") != NULL);
    CHECK(open_expect(idx, two, 2, -1, &v, &err) == LP_ERR_DATA && v == LP_KINDEX_FOREIGN);
    /* a trace file grows: stale, named */
    snprintf(f, sizeof f, "%s/sub/channel0_0", t1);
    write_file(f, "stream bytes, more of them");
    CHECK(open_expect(idx, one, 1, -1, &v, &err) == LP_ERR_DATA && v == LP_KINDEX_STALE);
    CHECK(strstr(err.msg, "channel0_0") != NULL && strstr(err.msg, "changed") != NULL);
    /* rebuilt: fine again; then a file appears, then one disappears */
    CHECK(lp_kindex_fingerprint(one, 1, &fp, &err) == LP_OK);
    CHECK(lp_kindex_write(g, &fp, idx, &err) == LP_OK);
    lp_kindex_fp_release(&fp);
    CHECK(open_expect(idx, one, 1, -1, &v, &err) == LP_OK);
    snprintf(f, sizeof f, "%s/sub/channel0_1", t1);
    write_file(f, "x");
    CHECK(open_expect(idx, one, 1, -1, &v, &err) == LP_ERR_DATA && v == LP_KINDEX_STALE);
    CHECK(strstr(err.msg, "appeared") != NULL);
    unlink(f);
    CHECK(open_expect(idx, one, 1, -1, &v, &err) == LP_OK);
    snprintf(f, sizeof f, "%s/metadata", t1);
    unlink(f);
    CHECK(open_expect(idx, one, 1, -1, &v, &err) == LP_ERR_DATA && v == LP_KINDEX_STALE);
    CHECK(strstr(err.msg, "disappeared") != NULL);
    const char *missing[] = {"/nonexistent/trace"};
    CHECK(lp_kindex_fingerprint(missing, 1, &fp, &err) == LP_ERR_IO);
    CHECK(lp_kindex_write(g, NULL, "/nonexistent/dir/x.lpkx", &err) == LP_ERR_IO);
    lp_kgraph *none = NULL;
    CHECK(lp_kindex_open("/nonexistent/x.lpkx", NULL, &none, &v, &err) == LP_ERR_IO && none == NULL);
    lp_kgraph_free(g);
    /* not an index at all */
    snprintf(f, sizeof f, "%s/metadata", t2);
    CHECK(lp_kindex_open(f, NULL, &g, &v, &err) == LP_ERR_FORMAT && v == LP_KINDEX_FOREIGN);
    rm_index(idx);
    snprintf(f, sizeof f, "%s/sub/channel0_0", t1);
    unlink(f);
    snprintf(f, sizeof f, "%s/sub", t1);
    rmdir(f);
    snprintf(f, sizeof f, "%s/metadata", t2);
    unlink(f);
    rmdir(t1);
    rmdir(t2);
}

/* ---- corruption ---------------------------------------------------------------------- */

static void fix_sum(unsigned char *b, size_t n)
{
    uint64_t s = lp_hash_bytes(b, n - 8);
    memcpy(b + n - 8, &s, 8);
}

/* The checks one after the other (1) or side by side on two threads (2), as large files
 * are opened: every corruption case runs both ways. */
static unsigned open_threads = 1;

static lp_status open_bytes(const unsigned char *b, size_t n, lp_kindex_verdict *v, lp_kgraph **g, lp_error *err)
{
    *g = NULL;
    lp_kindex_expect ex = {NULL, -1, open_threads, 1};
    return lp_kindex_open_mem(b, n, "idx", &ex, g, v, err);
}

/* An opened graph must validate and answer every path query. */
static void exercise(const lp_kgraph *g)
{
    lp_error err;
    CHECK(lp_kgraph_validate(g, &err) == LP_OK);
    for (uint32_t w = 0; w < g->nworkers; w++)
        for (int algo = 0; algo < 2; algo++) {
            lp_kcp cp;
            if (lp_kcp_compute(g, w, LP_KCP_LIFETIME_START, LP_KCP_LIFETIME_END, (lp_kcp_algo)algo, &cp, &err) == 0) {
                CHECK(kcp_contiguous(&cp));
                lp_kcp_release(&cp);
            }
        }
}

static void corruption(void)
{
    lp_kgraph *g = scenario(1);
    if (!g)
        return;
    char path[512];
    path_in(path, sizeof path, "c.lpkx");
    lp_error err;
    const char *roots[] = {tmpdir};
    lp_kindex_fp fp;
    CHECK(lp_kindex_fingerprint(roots, 1, &fp, &err) == LP_OK);
    CHECK(lp_kindex_write(g, &fp, path, &err) == LP_OK);
    lp_kindex_fp_release(&fp);
    lp_kgraph_free(g);
    size_t n = 0;
    unsigned char *orig = slurp(path, &n);
    rm_index(path);
    CHECK(orig != NULL && n > 200);
    if (!orig)
        return;
    unsigned char *b = malloc(n);
    lp_kindex_verdict v;
    lp_kgraph *h;
    /* a bit flipped anywhere */
    int refused = 0, foreign = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(b, orig, n);
        b[i] ^= (unsigned char)(1u << (i % 8));
        lp_status st = open_bytes(b, n, &v, &h, &err);
        refused += st != LP_OK && (v == LP_KINDEX_CORRUPT || v == LP_KINDEX_FOREIGN);
        foreign += v == LP_KINDEX_FOREIGN;
        CHECK(st != LP_OK);
        lp_kgraph_free(h);
    }
    CHECK_EQ_I(refused, n);
    CHECK(foreign >= 12); /* the magic and the version */
    /* truncated at every length */
    int trunc = 0;
    for (size_t len = 0; len < n; len++) {
        lp_status st = open_bytes(orig, len, &v, &h, &err);
        trunc += st != LP_OK && (v == LP_KINDEX_CORRUPT || (len < 8 && v == LP_KINDEX_FOREIGN));
        lp_kgraph_free(h);
    }
    CHECK_EQ_I(trunc, n);
    CHECK(open_bytes(orig, n - 8, &v, &h, &err) != LP_OK && strstr(err.msg, "truncated") != NULL);
    /* trailing bytes */
    unsigned char *longer = malloc(n + 8);
    memcpy(longer, orig, n);
    memset(longer + n, 0, 8);
    CHECK(open_bytes(longer, n + 8, &v, &h, &err) != LP_OK && v == LP_KINDEX_CORRUPT);
    free(longer);
    /* any byte set to 0xFF under a valid checksum: refused, or a graph that holds */
    int accepted = 0;
    for (size_t i = 0; i + 8 < n; i++) {
        memcpy(b, orig, n);
        if (b[i] == 0xFF)
            continue;
        b[i] = 0xFF;
        fix_sum(b, n);
        if (open_bytes(b, n, &v, &h, &err) == LP_OK) {
            accepted++;
            exercise(h);
        } else {
            CHECK(v == LP_KINDEX_CORRUPT || v == LP_KINDEX_FOREIGN);
        }
        lp_kgraph_free(h);
    }
    fprintf(stderr, "index of %zu bytes: %d single-byte changes under a valid checksum still validate\n", n, accepted);
    free(b);
    free(orig);
}

/* Wrong values under a valid checksum, one per section: each refused by name. */
typedef struct khdr_view {
    char magic[8];
    uint32_t version, flags;
    uint64_t nstrings, strbytes, nsources, srcbytes, nhosts, nworkers, nv, nlinks, npk, nstats;
} khdr_view;

static void invalid_contents(void)
{
    lp_kgraph *g = scenario(0);
    if (!g)
        return;
    char path[512];
    path_in(path, sizeof path, "v.lpkx");
    lp_error err;
    CHECK(lp_kindex_write(g, NULL, path, &err) == LP_OK);
    size_t n = 0;
    unsigned char *orig = slurp(path, &n);
    rm_index(path);
    if (!orig)
        return;
    khdr_view hv;
    memcpy(&hv, orig, sizeof hv);
    /* section offsets, as the format lays them out */
    uint64_t o = 128;
#define NEXT(bytes) (o = (o + (bytes) + 7) & ~(uint64_t)7)
    uint64_t o_str = o;
    NEXT(hv.strbytes);
    NEXT(hv.nsources * 32);
    NEXT(hv.srcbytes);
    NEXT(hv.nhosts * 4);
    NEXT(hv.nhosts * 8);
    NEXT(hv.nhosts * 8);
    uint64_t o_w = o;
    NEXT(hv.nworkers * 20);
    uint64_t o_voff = o;
    NEXT((hv.nworkers + 1) * 4);
    uint64_t o_vt = o;
    NEXT(hv.nv * 8);
    uint64_t o_vst = o;
    NEXT(hv.nv);
    uint64_t o_vrs = o;
    NEXT(hv.nv);
    uint64_t o_vin = o;
    NEXT(hv.nv * 4);
    NEXT(hv.nv * 4);
    uint64_t o_lfrom = o;
    NEXT(hv.nlinks * 4);
    NEXT(hv.nlinks * 4);
    uint64_t o_lkind = o;
    struct {
        const char *what;
        uint64_t at;
        uint32_t value;
        int width;
    } cases[] = {
        {"flags", 12, 4, 4},
        {"reserved", 100, 1, 1},
        {"string terminator", o_str, 'x', 1},             /* "" no longer terminated where expected */
        {"worker host", o_w, 99, 4},
        {"worker name", o_w + 16, 100000, 4},             /* a name id beyond the strings */
        {"vertex offsets", o_voff + 4, 1000000, 4},
        {"vertex time", o_vt + 8, 0, 4},                  /* low half of the second vertex's time: goes back */
        {"vertex state", o_vst, 9, 1},
        {"vertex reason", o_vrs, 3, 1},                   /* a reason on a non-blocked edge */
        {"incoming link", o_vin, 7, 4},
        {"link source", o_lfrom, 0xFFFFFF, 4},
        {"link kind", o_lkind, 9, 1},
    };
    unsigned char *b = malloc(n);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memcpy(b, orig, n);
        memcpy(b + cases[k].at, &cases[k].value, (size_t)cases[k].width);
        fix_sum(b, n);
        lp_kindex_verdict v;
        lp_kgraph *h = NULL;
        lp_status st = open_bytes(b, n, &v, &h, &err);
        if (st == LP_OK || v != LP_KINDEX_CORRUPT)
            fprintf(stderr, "case '%s' was not refused as corrupt (%s)\n", cases[k].what, st ? err.msg : "accepted");
        CHECK(st != LP_OK && v == LP_KINDEX_CORRUPT);
        CHECK(strstr(err.msg, "idx: byte ") == err.msg);
        lp_kgraph_free(h);
    }
    free(b);
    free(orig);
    lp_kgraph_free(g);
}

/* Two worker names made equal under a valid checksum: opening does not hash strings,
 * so the file opens; the equal names are caught where they would matter (the model's
 * workers, finding a thread by name), never merged silently. */
static void equal_names(void)
{
    lp_kgraph *g = scenario(0);
    if (!g)
        return;
    char path[512];
    path_in(path, sizeof path, "e.lpkx");
    lp_error err;
    CHECK(lp_kindex_write(g, NULL, path, &err) == LP_OK);
    size_t n = 0;
    unsigned char *b = slurp(path, &n);
    rm_index(path);
    uint32_t a = LP_NONE32, z = LP_NONE32; /* two threads whose names have one length */
    for (uint32_t i = 0; i < g->nworkers && z == LP_NONE32; i++)
        for (uint32_t j = i + 1; j < g->nworkers && z == LP_NONE32; j++)
            if (g->w[i].tid > 0 && g->w[j].tid > 0 &&
                strlen(lp_kgraph_worker_name(g, i)) == strlen(lp_kgraph_worker_name(g, j)))
                a = i, z = j;
    CHECK(b != NULL && z != LP_NONE32);
    if (b && z != LP_NONE32) {
        const char *na = lp_kgraph_worker_name(g, a), *nz = lp_kgraph_worker_name(g, z);
        size_t len = strlen(nz) + 1;
        unsigned char *at = NULL; /* the name in the string section (which starts at byte 128) */
        for (size_t i = 128; !at && i + len <= n - 8; i++)
            if (b[i - 1] == 0 && memcmp(b + i, nz, len) == 0)
                at = b + i;
        CHECK(at != NULL);
        if (at) {
            memcpy(at, na, len);
            fix_sum(b, n);
            lp_kgraph *h = NULL;
            lp_kindex_verdict v;
            CHECK(open_bytes(b, n, &v, &h, &err) == LP_OK);
            if (h) {
                lp_trace *t = NULL;
                CHECK(lp_kgraph_to_trace(h, NULL, &t, &err) == LP_ERR_FORMAT && strstr(err.msg, "share the name"));
                lp_trace_free(t);
                uint32_t w;
                CHECK(lp_kgraph_find_thread(h, na, NULL, &w, &err) == LP_ERR_ARG && strstr(err.msg, "ambiguous"));
                lp_kgraph_free(h);
            }
        }
    }
    free(b);
    lp_kgraph_free(g);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/lpkx.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "cannot make a temporary directory\n");
        return 1;
    }
    round_trip();
    stamps();
    fingerprints();
    corruption();
    invalid_contents();
    open_threads = 2;
    corruption();
    invalid_contents();
    equal_names();
    rmdir(tmpdir);
    return t_done("test_kindex");
}
