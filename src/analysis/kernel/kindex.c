/* kindex.c: the execution graph's index file, .lpkx version 1 (docs/formats/kindex.md).
 *
 * The file is the graph's columns laid end to end (little-endian, each section padded
 * to 8 bytes) after a 128-byte header, with the traces' fingerprint, and an XXH3-64 of
 * every preceding byte as the last 8 bytes. Opening maps the file read-only: the
 * columns and the strings point into the page cache (no copy, no decoding, nothing
 * hashed). Nothing in the file is trusted: the size must match the header, the checksum
 * the bytes, every section its rules and the graph lp_kgraph_validate's invariants (the
 * checksum and the content checks side by side on two threads for large files); a
 * failure names the file, the byte offset of the section and the reason. Then the
 * fingerprint and the clock option are compared with what the caller expects.
 *
 * The verification stamp (kindex.h): INDEX.verified, 72 bytes: magic "LPKXVER\0", the
 * index version, the index file's device, inode, size, mtime and ctime (ns) as fstat
 * gave them before it was mapped and checked (so a change during the checks leaves a
 * stamp that matches nothing), its stored checksum, and an XXH3-64 of those bytes.
 */
#include "longpole/analysis/kernel/kindex.h"
#include "longpole/base/alloc.h"
#include "base/pool.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include "codec/secwrite.h"

#include <xxhash.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the index reader and writer assume a little-endian host"
#endif

#define HDR_SIZE 128
#define NSTATS (sizeof(lp_kgraph_stats) / 8)

typedef struct khdr {
    char magic[8];
    uint32_t version, flags; /* flags bit 0: clocks synchronised */
    uint64_t nstrings, strbytes, nsources, srcbytes, nhosts, nworkers, nv, nlinks, npk, nstats;
    uint64_t reserved[4];
} khdr;

/* One fingerprint entry; its path is at path_off in the source-path section. */
typedef struct ksrc {
    uint64_t size;
    int64_t mtime_ns;
    uint32_t root, is_root;
    uint64_t path_off;
} ksrc;

_Static_assert(sizeof(khdr) == HDR_SIZE, "header layout");
_Static_assert(sizeof(ksrc) == 32, "source layout");
_Static_assert(sizeof(lp_kworker) == 20, "worker layout");
_Static_assert(sizeof(lp_kpktkey) == 56, "packet key layout");
_Static_assert(sizeof(lp_kgraph_stats) % 8 == 0, "stats layout");

/* Section offsets of a file with the header's counts. */
enum { S_STR, S_SRC, S_SRCPATH, S_HOST, S_SLOPE, S_OFFSET, S_WORKER, S_VOFF, S_VT, S_VSTATE, S_VREASON, S_VIN, S_VOUT,
       S_LFROM, S_LTO, S_LKIND, S_PK, S_STATS, S_SUM, S_END, S_COUNT };
static const char *const section_names[S_COUNT] = {
    "strings", "sources", "source paths", "hosts", "clock slopes", "clock offsets", "workers", "vertex offsets",
    "vertex times", "vertex states", "vertex reasons", "incoming links", "outgoing links", "link sources",
    "link targets", "link kinds", "packet keys", "stats", "checksum", "end"};

static uint64_t pad8(uint64_t x) { return (x + 7) & ~(uint64_t)7; }

/* 0, or -1 if the counts are absurd (their sizes would overflow). */
static int layout(const khdr *h, uint64_t off[S_COUNT])
{
    const uint64_t lim = UINT64_C(1) << 40;
    if (h->nstrings > lim || h->strbytes > lim || h->nsources > lim || h->srcbytes > lim || h->nhosts > lim ||
        h->nworkers >= UINT32_MAX || h->nv >= UINT32_MAX || h->nlinks >= UINT32_MAX || h->npk > lim || h->nstats > lim)
        return -1;
    uint64_t size[S_COUNT] = {
        h->strbytes, h->nsources * sizeof(ksrc), h->srcbytes, h->nhosts * 4, h->nhosts * 8, h->nhosts * 8,
        h->nworkers * sizeof(lp_kworker), (h->nworkers + 1) * 4, h->nv * 8, h->nv, h->nv, h->nv * 4, h->nv * 4,
        h->nlinks * 4, h->nlinks * 4, h->nlinks, h->npk * sizeof(lp_kpktkey), h->nstats * 8, 8, 0};
    uint64_t o = HDR_SIZE;
    for (int s = 0; s < S_COUNT; s++) {
        off[s] = o;
        o += s == S_SUM ? size[s] : pad8(size[s]);
    }
    return 0;
}

/* ---- verification stamp ------------------------------------------------------------ */

typedef struct kstamp {
    char magic[8];
    uint32_t version, zero;
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
    uint64_t sum;  /* the index's stored checksum (its last 8 bytes) */
    uint64_t self; /* XXH3-64 of the bytes before it */
} kstamp;
_Static_assert(sizeof(kstamp) == 72, "stamp layout");

#define STAMP_MAGIC "LPKXVER"

static int stamp_path(const char *path, char *out, size_t n)
{
    return (size_t)snprintf(out, n, "%s%s", path, LP_KINDEX_STAMP_SUFFIX) < n ? 0 : -1;
}

/* The stamp an index file with this identity and checksum has (0), or -1 if its stored
 * checksum cannot be read. */
static int stamp_of(int fd, const struct stat *sb, kstamp *k)
{
    memset(k, 0, sizeof *k);
    memcpy(k->magic, STAMP_MAGIC, 8);
    k->version = LP_KINDEX_VERSION;
    k->dev = (uint64_t)sb->st_dev;
    k->ino = (uint64_t)sb->st_ino;
    k->size = (uint64_t)sb->st_size;
    k->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
    k->ctime_ns = (int64_t)sb->st_ctim.tv_sec * 1000000000 + sb->st_ctim.tv_nsec;
    if (sb->st_size < 8 || pread(fd, &k->sum, 8, sb->st_size - 8) != 8)
        return -1;
    k->self = XXH3_64bits(k, offsetof(kstamp, self));
    return 0;
}

/* Write the stamp of the index `path` (open as fd, identified by sb): 1 if written, 0
 * if not (an unwritable directory only costs the next open its full checks). */
static int stamp_write(const char *path, int fd, const struct stat *sb)
{
    char sp[4096], tmp[4200];
    kstamp k;
    if (stamp_path(path, sp, sizeof sp) || stamp_of(fd, sb, &k) ||
        (size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", sp, (long)getpid()) >= sizeof tmp)
        return 0;
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return 0;
    int ok = fwrite(&k, sizeof k, 1, f) == 1;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, sp) != 0) {
        unlink(tmp);
        return 0;
    }
    return 1;
}

/* 1 if the stamp beside `path` vouches for the file open as fd with identity sb. */
static int stamp_matches(const char *path, int fd, const struct stat *sb)
{
    char sp[4096];
    kstamp want, have;
    if (stamp_path(path, sp, sizeof sp) || stamp_of(fd, sb, &want))
        return 0;
    FILE *f = fopen(sp, "rb");
    if (!f)
        return 0;
    char extra;
    int ok = fread(&have, sizeof have, 1, f) == 1 && fread(&extra, 1, 1, f) == 0;
    fclose(f);
    return ok && memcmp(&have, &want, sizeof have) == 0;
}

/* Remove a stamp that no longer vouches for its index (best effort). */
static void stamp_remove(const char *path)
{
    char sp[4096];
    if (!stamp_path(path, sp, sizeof sp))
        (void)unlink(sp);
}

/* ---- writer ------------------------------------------------------------------------ */

static void put_sources(lp_secw *w, const lp_kindex_fp *fp)
{
    uint64_t poff = 0;
    for (size_t i = 0; i < fp->n; i++) {
        ksrc s = {fp->f[i].size, fp->f[i].mtime_ns, fp->f[i].root, fp->f[i].is_root, poff};
        lp_secw_put(w, &s, sizeof s);
        poff += strlen(fp->f[i].path) + 1;
    }
    lp_secw_pad(w);
    for (size_t i = 0; i < fp->n; i++)
        lp_secw_put(w, fp->f[i].path, strlen(fp->f[i].path) + 1);
    lp_secw_pad(w);
}

static void put_graph(lp_secw *w, const lp_kgraph *g)
{
    for (uint32_t i = 0; i < g->strs.n; i++)
        lp_secw_put(w, g->strs.ptr[i], (size_t)g->strs.len[i] + 1);
    lp_secw_pad(w);
}

static void put_columns(lp_secw *w, const lp_kgraph *g)
{
    lp_kgraph_stats st = g->st;
    lp_secw_section(w, g->host, 4, g->nhosts);
    lp_secw_section(w, g->clock_slope, 8, g->nhosts);
    lp_secw_section(w, g->clock_offset, 8, g->nhosts);
    lp_secw_section(w, g->w, sizeof(lp_kworker), g->nworkers);
    lp_secw_section(w, g->voff, 4, (uint64_t)g->nworkers + 1);
    lp_secw_section(w, g->vt, 8, g->nv);
    lp_secw_section(w, g->vstate, 1, g->nv);
    lp_secw_section(w, g->vreason, 1, g->nv);
    lp_secw_section(w, g->vin, 4, g->nv);
    lp_secw_section(w, g->vout, 4, g->nv);
    lp_secw_section(w, g->lfrom, 4, g->nlinks);
    lp_secw_section(w, g->lto, 4, g->nlinks);
    lp_secw_section(w, g->lkind, 1, g->nlinks);
    lp_secw_section(w, g->pk, sizeof(lp_kpktkey), g->npk);
    lp_secw_section(w, &st, 8, NSTATS);
}

lp_status lp_kindex_write(const lp_kgraph *g, const lp_kindex_fp *fp, const char *path, lp_error *err)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp)
        return lp_error_set(err, LP_ERR_ARG, "index path too long");
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return lp_error_set(err, LP_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
    lp_secw w;
    lp_status st = lp_secw_init(&w, f, err);
    if (st) {
        fclose(f);
        unlink(tmp);
        return st;
    }
    khdr h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, LP_KINDEX_MAGIC, 8);
    h.version = LP_KINDEX_VERSION;
    h.flags = g->synced ? 1 : 0;
    h.nstrings = g->strs.n;
    h.strbytes = g->strs.bytes + g->strs.n;
    h.nsources = fp ? fp->n : 0;
    for (size_t i = 0; fp && i < fp->n; i++)
        h.srcbytes += strlen(fp->f[i].path) + 1;
    h.nhosts = g->nhosts;
    h.nworkers = g->nworkers;
    h.nv = g->nv;
    h.nlinks = g->nlinks;
    h.npk = g->npk;
    h.nstats = NSTATS;
    lp_secw_put(&w, &h, sizeof h);
    put_graph(&w, g);
    if (fp)
        put_sources(&w, fp);
    else
        lp_secw_pad(&w), lp_secw_pad(&w);
    put_columns(&w, g);
    lp_secw_finish(&w);
    if (fclose(f) != 0)
        w.failed = 1;
    if (w.failed || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return lp_error_set(err, LP_ERR_IO, "cannot write index '%s': %s", path, strerror(e));
    }
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0) /* this library wrote every byte: stamp it as checked */
        (void)stamp_write(path, fd, &sb);
    if (fd >= 0)
        close(fd);
    return LP_OK;
}

/* ---- reader ------------------------------------------------------------------------ */

typedef struct kr {
    const unsigned char *b;
    uint64_t n;
    const char *name;
    khdr h;
    uint64_t off[S_COUNT];
    lp_error *err;
    lp_kindex_verdict v;
} kr;

const char *lp_kindex_verdict_name(lp_kindex_verdict v)
{
    static const char *const names[] = {"ok", "corrupt", "foreign", "stale", "unreadable"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "?";
}

static lp_status refuse(kr *r, lp_kindex_verdict v, lp_status st, uint64_t at, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static lp_status refuse(kr *r, lp_kindex_verdict v, lp_status st, uint64_t at, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->v = v;
    return lp_error_set(r->err, st, "%s: byte %llu: %s (index %s)", r->name, (unsigned long long)at, msg,
                        lp_kindex_verdict_name(v));
}

/* Magic, version, flags, sizes (the checksum is check_sum). */
static lp_status check_frame(kr *r)
{
    if (r->n < 8 || memcmp(r->b, LP_KINDEX_MAGIC, 8) != 0)
        return refuse(r, LP_KINDEX_FOREIGN, LP_ERR_FORMAT, 0, "not a longpole kernel index (bad magic)");
    if (r->n < HDR_SIZE + 8)
        return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, r->n, "file truncated inside the header");
    memcpy(&r->h, r->b, HDR_SIZE);
    if (r->h.version != LP_KINDEX_VERSION)
        return refuse(r, LP_KINDEX_FOREIGN, LP_ERR_FORMAT, 8, "index version %u, this build reads version %u",
                      r->h.version, LP_KINDEX_VERSION);
    if (r->h.flags > 1)
        return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, 12, "unknown flags 0x%x", r->h.flags);
    for (int i = 0; i < 4; i++)
        if (r->h.reserved[i])
            return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, 96, "reserved header bytes are not zero");
    if (layout(&r->h, r->off) || r->h.nstats != NSTATS)
        return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, 16, "impossible section counts");
    if (r->off[S_END] != r->n) {
        int s = 0; /* the section the file ends in */
        while (s + 1 < S_COUNT && r->off[s + 1] <= r->n)
            s++;
        if (r->off[S_END] < r->n)
            return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, r->off[S_END], "file is %llu bytes, its header says "
                          "%llu (trailing bytes)", (unsigned long long)r->n, (unsigned long long)r->off[S_END]);
        return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, r->n, "file is %llu bytes, its header says %llu "
                      "(truncated in section '%s')", (unsigned long long)r->n, (unsigned long long)r->off[S_END],
                      section_names[s]);
    }
    return LP_OK;
}

/* The checksum of every byte before it. */
static lp_status check_sum(kr *r)
{
    uint64_t stored;
    memcpy(&stored, r->b + r->n - 8, 8);
#ifndef LP_FUZZING
    if (XXH3_64bits(r->b, (size_t)(r->n - 8)) != stored)
        return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_CHECKSUM, r->n - 8, "checksum mismatch");
#else
    (void)stored;
#endif
    return LP_OK;
}

/* The string section as the graph's table, read-only and without copying: ptr[]/len[]
 * point into the mapping (no bytes copied, nothing hashed: rebuilding the interning
 * table was half the cost of opening a large index). Checked: every string terminated
 * within the section, "" first, the section holds exactly nstrings. Not checked here:
 * that the strings are distinct (the writer writes each once); a table made this way has
 * no hash index (lp_strtab_find finds nothing, nothing may be interned into it), and
 * what would go wrong with equal strings is caught where it matters: two workers of one
 * name are refused by lp_kgraph_feed, and lp_kgraph_find_thread reports them ambiguous. */
static lp_status read_strings(kr *r, lp_kgraph *g)
{
    const char *p = (const char *)r->b + r->off[S_STR], *end = p + r->h.strbytes;
    if (r->h.nstrings == 0 || r->h.nstrings >= UINT32_MAX - 2 || r->h.nstrings > r->h.strbytes)
        return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, r->off[S_STR], "string section size disagrees with its strings");
    lp_strtab_release(&g->strs);
    lp_strtab *t = &g->strs;
    t->ptr = lp_malloc((size_t)r->h.nstrings * sizeof *t->ptr);
    t->len = lp_malloc((size_t)r->h.nstrings * sizeof *t->len);
    if (!t->ptr || !t->len)
        return lp_error_set(r->err, LP_ERR_NOMEM, "out of memory");
    t->cap = (uint32_t)r->h.nstrings;
    for (uint64_t i = 0; i < r->h.nstrings; i++) {
        const char *z = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
        if (!z)
            return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, (uint64_t)(p - (const char *)r->b),
                          "string %llu is not terminated", (unsigned long long)i);
        if (i == 0 && z != p)
            return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, r->off[S_STR], "string 0 is not empty");
        if ((uint64_t)(z - p) >= UINT32_MAX)
            return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, (uint64_t)(p - (const char *)r->b),
                          "string %llu is too long", (unsigned long long)i);
        t->ptr[i] = p;
        t->len[i] = (uint32_t)(z - p);
        t->bytes += (size_t)(z - p);
        t->n = (uint32_t)i + 1;
        p = z + 1;
    }
    if (p != end)
        return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, r->off[S_STR], "string section size disagrees with its strings");
    return LP_OK;
}

static const void *at(const kr *r, int s) { return r->b + r->off[s]; }

static void point_columns(kr *r, lp_kgraph *g)
{
    g->nhosts = (uint32_t)r->h.nhosts;
    g->nworkers = (uint32_t)r->h.nworkers;
    g->nv = (uint32_t)r->h.nv;
    g->nlinks = (uint32_t)r->h.nlinks;
    g->npk = r->h.npk;
    g->synced = (int)(r->h.flags & 1);
    g->host = (lp_str *)at(r, S_HOST);
    g->clock_slope = (double *)at(r, S_SLOPE);
    g->clock_offset = (double *)at(r, S_OFFSET);
    g->w = (lp_kworker *)at(r, S_WORKER);
    g->voff = (uint32_t *)at(r, S_VOFF);
    g->vt = (int64_t *)at(r, S_VT);
    g->vstate = (uint8_t *)at(r, S_VSTATE);
    g->vreason = (uint8_t *)at(r, S_VREASON);
    g->vin = (uint32_t *)at(r, S_VIN);
    g->vout = (uint32_t *)at(r, S_VOUT);
    g->lfrom = (uint32_t *)at(r, S_LFROM);
    g->lto = (uint32_t *)at(r, S_LTO);
    g->lkind = (uint8_t *)at(r, S_LKIND);
    g->pk = (lp_kpktkey *)at(r, S_PK);
    memcpy(&g->st, at(r, S_STATS), sizeof g->st);
}

/* The stored fingerprint's entry i: its record and path (checked). */
static lp_status source(kr *r, uint64_t i, ksrc *s, const char **path)
{
    memcpy(s, (const unsigned char *)at(r, S_SRC) + i * sizeof *s, sizeof *s);
    const char *base = at(r, S_SRCPATH);
    if (s->path_off >= r->h.srcbytes || !memchr(base + s->path_off, 0, (size_t)(r->h.srcbytes - s->path_off)))
        return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, r->off[S_SRC] + i * sizeof *s,
                      "source %llu: path outside its section", (unsigned long long)i);
    *path = base + s->path_off;
    return LP_OK;
}

/* Compare the stored fingerprint with the traces as they are now. */
static lp_status compare_fp(kr *r, const lp_kindex_fp *fp)
{
    uint64_t ns = r->h.nsources, nroots = 0;
    ksrc s;
    const char *p;
    lp_status st;
    while (nroots < ns && !(st = source(r, nroots, &s, &p)) && s.is_root)
        nroots++;
    if (nroots < ns && st)
        return st;
    if (nroots != fp->nroots)
        return refuse(r, LP_KINDEX_FOREIGN, LP_ERR_DATA, r->off[S_SRC], "built from %llu traces, not these %u",
                      (unsigned long long)nroots, fp->nroots);
    for (uint64_t i = 0; i < ns || i < fp->n; i++) {
        if (i >= ns || i >= fp->n) {
            const char *what = i >= ns ? fp->f[i].path : (source(r, i, &s, &p) ? "?" : p);
            return refuse(r, LP_KINDEX_STALE, LP_ERR_DATA, r->off[S_SRC], "trace file '%s' %s since the index was built",
                          what, i >= ns ? "appeared" : "disappeared");
        }
        if ((st = source(r, i, &s, &p)))
            return st;
        const lp_kindex_file *f = &fp->f[i];
        if (i < nroots && strcmp(p, f->path) != 0)
            return refuse(r, LP_KINDEX_FOREIGN, LP_ERR_DATA, r->off[S_SRC], "built from trace '%s', not '%s'", p, f->path);
        int c = strcmp(p, f->path);
        if (c)
            return refuse(r, LP_KINDEX_STALE, LP_ERR_DATA, r->off[S_SRC], "trace file '%s' %s since the index was built",
                          c < 0 ? p : f->path, c < 0 ? "disappeared" : "appeared");
        if (s.size != f->size || s.mtime_ns != f->mtime_ns)
            return refuse(r, LP_KINDEX_STALE, LP_ERR_DATA, r->off[S_SRC],
                          "trace file '%s' changed since the index was built (size %llu -> %llu, mtime %lld -> %lld ns)",
                          p, (unsigned long long)s.size, (unsigned long long)f->size, (long long)s.mtime_ns,
                          (long long)f->mtime_ns);
    }
    return LP_OK;
}

/* Every stored source well formed (roots first, root indices in range). */
static lp_status check_sources(kr *r)
{
    uint64_t nroots = 0;
    for (uint64_t i = 0; i < r->h.nsources; i++) {
        ksrc s;
        const char *p;
        lp_status st = source(r, i, &s, &p);
        if (st)
            return st;
        if (s.is_root > 1 || (s.is_root && nroots != i) || (s.is_root ? s.root != i : s.root >= nroots))
            return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, r->off[S_SRC] + i * sizeof s,
                          "source %llu: bad root", (unsigned long long)i);
        nroots += s.is_root;
    }
    return LP_OK;
}

/* Strings and sources, the graph's columns pointed at: everything but the checksum and
 * the graph's invariants (what a verification stamp vouches for). */
static lp_status check_trusted(kr *r, lp_kgraph *g)
{
    lp_status st = read_strings(r, g);
    if (st || (st = check_sources(r)))
        return st;
    point_columns(r, g);
    return LP_OK;
}

/* Strings, sources and every invariant of the graph. */
static lp_status check_contents(kr *r, lp_kgraph *g)
{
    lp_status st = check_trusted(r, g);
    if (st)
        return st;
    lp_error inner;
    if (lp_kgraph_validate(g, &inner))
        return refuse(r, LP_KINDEX_CORRUPT, LP_ERR_FORMAT, r->off[S_HOST], "graph sections: %s", inner.msg);
    return LP_OK;
}

/* The checksum (task 0) and the contents (task 1) at once: both only read the mapping
 * (the content checks are safe on any bytes: the fuzz target runs them without the
 * checksum), each task with its own reader state; the graph is used only if both pass,
 * and a checksum failure is the one reported. */
typedef struct both {
    kr r[2];
    lp_kgraph *g;
} both;

static lp_status both_task(void *ctx, size_t t, size_t nt, lp_error *err)
{
    both *b = ctx;
    (void)nt;
    b->r[t].err = err;
    return t == 0 ? check_sum(&b->r[0]) : check_contents(&b->r[1], b->g);
}

#define PAR_BYTES ((uint64_t)16 << 20) /* smaller files: both checks on this thread */

static lp_status check_all(kr *r, lp_kgraph *g, unsigned threads)
{
    lp_pool *pool = NULL;
    lp_error perr;
    int par = threads == 2 || (threads == 0 && r->n >= PAR_BYTES && lp_pool_threads(0, 2) >= 2);
    if (!par || lp_pool_new(&pool, 1, &perr) != LP_OK || !pool) {
        lp_status st = check_sum(r);
        return st ? st : check_contents(r, g);
    }
    both b = {{*r, *r}, g};
    lp_status st = lp_pool_run(pool, 2, both_task, &b, r->err);
    lp_pool_free(pool);
    if (st) /* the lowest failing task's error is in r->err; its verdict: */
        r->v = b.r[0].v != LP_KINDEX_OK ? b.r[0].v : b.r[1].v;
    return st;
}

static lp_status parse(kr *r, const lp_kindex_expect *ex, lp_kgraph *g, int trusted)
{
    lp_status st = check_frame(r);
    if (st || (st = trusted ? check_trusted(r, g) : check_all(r, g, ex ? ex->threads : 0)))
        return st;
    if (ex && ex->fp && (st = compare_fp(r, ex->fp)))
        return st;
    if (ex && ex->synced >= 0 && ex->synced != g->synced)
        return refuse(r, LP_KINDEX_FOREIGN, LP_ERR_DATA, 12, "built %s clock synchronisation, asked %s",
                      g->synced ? "with" : "without", ex->synced ? "with" : "without");
    return LP_OK;
}

/* Parse a mapping (owned: the graph unmaps it, or this function does on failure). */
static lp_status open_map(void *map, size_t n, const char *name, const lp_kindex_expect *ex, int trusted,
                          lp_kgraph **out, lp_kindex_verdict *verdict, lp_error *err)
{
    kr r;
    memset(&r, 0, sizeof r);
    r.b = map;
    r.n = n;
    r.name = name;
    r.err = err;
    lp_kgraph *g = lp_calloc(1, sizeof *g);
    lp_status st = LP_OK;
    if (!g || lp_strtab_init(&g->strs)) {
        lp_free(g);
        munmap(map, n);
        if (verdict)
            *verdict = LP_KINDEX_UNREADABLE;
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    g->map = map;
    g->maplen = n;
    st = parse(&r, ex, g, trusted);
    if (verdict)
        *verdict = st ? (r.v == LP_KINDEX_OK ? LP_KINDEX_UNREADABLE : r.v) : LP_KINDEX_OK;
    if (st) {
        lp_kgraph_free(g);
        return st;
    }
    *out = g;
    return LP_OK;
}

lp_status lp_kindex_open_info(const char *path, const lp_kindex_expect *expect, lp_kgraph **out,
                              lp_kindex_verdict *verdict, lp_kindex_info *info, lp_error *err)
{
    *out = NULL;
    if (verdict)
        *verdict = LP_KINDEX_UNREADABLE;
    if (info)
        memset(info, 0, sizeof *info);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return lp_error_set(err, LP_ERR_IO, "cannot open index '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return lp_error_set(err, LP_ERR_IO, "'%s' is not a regular file", path);
    }
    size_t n = (size_t)sb.st_size;
    if (n < 8) {
        close(fd);
        if (verdict)
            *verdict = LP_KINDEX_FOREIGN;
        return lp_error_set(err, LP_ERR_FORMAT, "%s: byte 0: not a longpole kernel index (%zu bytes) (index foreign)",
                            path, n);
    }
    int trusted = !(expect && expect->verify) && stamp_matches(path, fd, &sb);
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    if (!trusted)
        flags |= MAP_POPULATE; /* read whole: the checksum does */
#endif
    void *map = mmap(NULL, n, PROT_READ, flags, fd, 0);
    int e = errno;
    if (map == MAP_FAILED) {
        close(fd);
        return lp_error_set(err, LP_ERR_IO, "cannot map index '%s': %s", path, strerror(e));
    }
    lp_kindex_verdict v = LP_KINDEX_UNREADABLE;
    lp_status st = open_map(map, n, path, expect, trusted, out, &v, err);
    if (verdict)
        *verdict = v;
    if (info)
        info->stamped = trusted && !st;
    if (!st && !trusted) { /* every check passed: stamp the file as it was before the checks */
        int w = stamp_write(path, fd, &sb);
        if (info)
            info->stamp_written = w;
    } else if (v == LP_KINDEX_CORRUPT)
        stamp_remove(path); /* a stamp never vouches for a file found corrupt */
    close(fd);
    return st;
}

lp_status lp_kindex_open(const char *path, const lp_kindex_expect *expect, lp_kgraph **out, lp_kindex_verdict *verdict,
                         lp_error *err)
{
    return lp_kindex_open_info(path, expect, out, verdict, NULL, err);
}

lp_status lp_kindex_open_mem(const void *buf, size_t n, const char *name, const lp_kindex_expect *expect,
                             lp_kgraph **out, lp_kindex_verdict *verdict, lp_error *err)
{
    *out = NULL;
    if (verdict)
        *verdict = n < 8 ? LP_KINDEX_FOREIGN : LP_KINDEX_UNREADABLE;
    if (n < 8)
        return lp_error_set(err, LP_ERR_FORMAT, "%s: byte 0: not a longpole kernel index (%zu bytes) (index foreign)",
                            name, n);
    void *map = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory for %zu bytes", n);
    memcpy(map, buf, n);
    return open_map(map, n, name, expect, 0, out, verdict, err);
}
