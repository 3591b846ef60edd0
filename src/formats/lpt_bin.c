/* lpt_bin.c: the native binary trace form, .lptb version 1 (docs/formats/lptb.md).
 *
 * The file is the finished lp_trace's columns laid end to end (little-endian, each
 * section padded to 8 bytes) after a 128-byte header, and an XXH3-64 checksum of every
 * preceding byte as the last 8 bytes. An uncompressed file is mapped (private, writable:
 * the page cache's pages become the trace's columns, with no copy and no zeroed pages;
 * lp_trace_free unmaps it); anything else is read with a read() per column straight into
 * its final array. Then one validation pass, so it runs at memory speed; nothing in the file
 * is trusted: every id, every ordering and tiling invariant of trace.h, and the
 * checksum are checked, and a violation fails the load with the byte offset of the
 * offending section and the reason.
 */
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/base/alloc.h"
#include "formats/lptb_hdr.h"

#include <string.h>
#include <sys/mman.h>
#define XXH_INLINE_ALL
#include "codec/secwrite.h"

#include <xxhash.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .lptb reader and writer assume a little-endian host"
#endif

#define HDR_SIZE LP_LPTB_HDR_SIZE
typedef lp_lptb_hdr hdr;

/* ---- writer ---------------------------------------------------------------- */

lp_status lp_lptb_write(const lp_trace *t, FILE *out, lp_error *err)
{
    /* the string table is NUL-terminated strings: a name holding a NUL byte cannot be
     * stored (it would read back as two strings); refused before anything is written */
    for (uint32_t i = 0; i < t->strs.n; i++)
        if (memchr(t->strs.ptr[i], '\0', t->strs.len[i]))
            return lp_error_set(err, LP_ERR_UNSUPPORTED,
                                "name %u holds a NUL byte: the binary form cannot store it (write the text form)", i);
    lp_secw w;
    lp_status st = lp_secw_init(&w, out, err);
    if (st)
        return st;
    hdr h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, LP_LPTB_MAGIC, 8);
    h.version = LP_LPTB_VERSION;
    h.nstrings = t->strs.n;
    h.strbytes = t->strs.bytes + t->strs.n;
    h.ntypes = t->ntypes;
    h.nworkers = t->nworkers;
    h.nacts = t->nacts;
    h.nmsgs = t->nmsgs;
    h.napool = t->napool;
    h.ngaps = t->ngaps;
    h.tmin = t->tmin;
    h.tmax = t->tmax;
    h.nskew = t->nskew;
    lp_secw_put(&w, &h, sizeof h);
    for (uint32_t i = 0; i < t->strs.n; i++)
        lp_secw_put(&w, t->strs.ptr[i], (size_t)t->strs.len[i] + 1);
    lp_secw_pad(&w);
    lp_secw_section(&w, t->type_name, 4, t->ntypes);
    lp_secw_section(&w, t->wname, 4, t->nworkers);
    lp_secw_section(&w, t->wattr, 4, t->nworkers);
    lp_secw_section(&w, t->wfirst, 8, (uint64_t)t->nworkers + 1);
    lp_secw_section(&w, t->astart, 8, t->nacts);
    lp_secw_section(&w, t->aend, 8, t->nacts);
    lp_secw_section(&w, t->atype, 2, t->nacts);
    lp_secw_section(&w, t->aop, 4, t->nacts);
    lp_secw_section(&w, t->aattr, 4, t->nacts);
    lp_secw_section(&w, t->aflags, 1, t->nacts);
    lp_secw_section(&w, t->msrc, 4, t->nmsgs);
    lp_secw_section(&w, t->mdst, 4, t->nmsgs);
    lp_secw_section(&w, t->msend, 8, t->nmsgs);
    lp_secw_section(&w, t->mrecv, 8, t->nmsgs);
    lp_secw_section(&w, t->mid, 8, t->nmsgs);
    lp_secw_section(&w, t->mattr, 4, t->nmsgs);
    lp_secw_section(&w, t->mflags, 1, t->nmsgs);
    lp_secw_section(&w, t->apool, 4, t->napool);
    if (lp_secw_finish(&w))
        return lp_error_set(err, LP_ERR_IO, "write failed");
    return LP_OK;
}

/* ---- reader ---------------------------------------------------------------- */

typedef struct br {
    lp_input *in;
    XXH3_state_t *h;
    uint64_t off;
    const char *name;
    lp_error *err;
    const unsigned char *map; /* the mapped file, or NULL: read from `in` */
    uint64_t maplen;
} br;

static lp_status truncated(br *r, uint64_t off, size_t more)
{
    return lp_error_set(r->err, LP_ERR_FORMAT, "%s: byte %llu: file truncated (%zu more bytes expected)", r->name,
                        (unsigned long long)off, more);
}

/* Copy the next n bytes to p (hashed unless hash is 0; a mapped file is hashed whole). */
static lp_status rd(br *r, void *p, size_t n, int hash)
{
    if (r->map) {
        if (n > r->maplen - r->off)
            return truncated(r, r->maplen, (size_t)(n - (r->maplen - r->off)));
        memcpy(p, r->map + r->off, n);
        r->off += n;
        return LP_OK;
    }
    size_t done = 0;
    while (done < n) {
        size_t got;
        lp_status st = lp_input_read(r->in, (char *)p + done, n - done, &got, r->err);
        if (st)
            return st;
        if (!got)
            return truncated(r, r->off + done, n - done);
        done += got;
    }
    if (hash)
        XXH3_64bits_update(r->h, p, n);
    r->off += n;
    return LP_OK;
}

static lp_status rpad(br *r)
{
    char z[8];
    size_t k = (size_t)((8 - (r->off & 7)) & 7);
    return k ? rd(r, z, k, 1) : LP_OK;
}

/* Allocate and read a column of n elements; in a mapped file, point at it. */
static lp_status rcol(br *r, void **dst, size_t elem, uint64_t n)
{
    if (n > (UINT64_MAX / 2) / (elem ? elem : 1))
        return lp_error_set(r->err, LP_ERR_FORMAT, "%s: byte %llu: section size overflows", r->name,
                            (unsigned long long)r->off);
    if (r->map) {
        if (n * elem > r->maplen - r->off)
            return truncated(r, r->maplen, (size_t)(n * elem - (r->maplen - r->off)));
        *dst = (void *)(r->map + r->off);
        r->off += n * elem;
        return rpad(r);
    }
    *dst = lp_malloc(n ? (size_t)(n * elem) : 1);
    if (!*dst)
        return lp_error_set(r->err, LP_ERR_NOMEM, "%s: out of memory for a section of %llu bytes", r->name,
                            (unsigned long long)(n * elem));
    lp_status st = rd(r, *dst, (size_t)(n * elem), 1);
    return st ? st : rpad(r);
}

#define BAD(...) (lp_error_set(err, LP_ERR_FORMAT, __VA_ARGS__))

/* Where each section starts in the file (for messages). */
typedef struct lptb_offs {
    uint64_t types, workers, acts, msgs, pool;
} lptb_offs;

/* A plain file is mapped (reading falls back to `in` where mapping fails): populated
 * read-only, so the page cache's pages are mapped as they are (a writable mapping would
 * be populated with private copies); made writable afterwards, so only the pages later
 * written (the derived flags) are copied. */
static void map_file(br *r, lp_input *in, lp_trace *t)
{
    int fd = lp_input_file_fd(in);
    if (fd < 0 || lp_input_size(in) < HDR_SIZE + 8 || lp_input_size(in) > SIZE_MAX)
        return;
    size_t len = (size_t)lp_input_size(in);
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m != MAP_FAILED && mprotect(m, len, PROT_READ | PROT_WRITE) != 0) {
        munmap(m, len);
        m = MAP_FAILED;
    }
    if (m != MAP_FAILED) {
        r->map = m;
        r->maplen = lp_input_size(in);
        t->map = m;
        t->maplen = (size_t)r->maplen;
    }
}

/* The header: magic, version, flags, counts in range, and (a plain file) the size the
 * counts imply. */
static lp_status read_header(br *r, lp_input *in, hdr *hp)
{
    lp_error *err = r->err;
    lp_status st;
    if ((st = rd(r, hp, sizeof *hp, 1)))
        return st;
    hdr h = *hp;
    if (memcmp(h.magic, LP_LPTB_MAGIC, 8) != 0)
        return BAD("%s: byte 0: not a longpole binary trace (bad magic)", r->name);
    if (h.version != LP_LPTB_VERSION)
        return lp_error_set(err, LP_ERR_UNSUPPORTED, "%s: byte 8: binary trace version %u (this build reads version %u)",
                            r->name, h.version, LP_LPTB_VERSION);
    if (h.flags)
        return BAD("%s: byte 12: unknown flags 0x%x", r->name, h.flags);
    if (h.nstrings < 1 || h.nstrings >= LP_NONE32 || h.strbytes < h.nstrings || h.ntypes < LP_TYPE_NBUILTIN ||
        h.ntypes > LP_TYPE_MAX || h.nworkers >= LP_NONE32 || h.nacts >= LP_NONE32 || h.nmsgs >= LP_NONE32 ||
        h.napool < 1 || h.napool >= LP_NONE32 || h.strbytes > ((uint64_t)1 << 40))
        return BAD("%s: byte 16: header counts out of range", r->name);
    /* a plain file's size must match the header exactly */
    if (lp_input_compression(in) == LP_COMP_NONE && lp_input_size(in)) {
        uint64_t sz = HDR_SIZE, p8;
#define SEC(bytes) (p8 = (bytes), sz += (p8 + 7) & ~(uint64_t)7)
        SEC(h.strbytes);
        SEC(4 * h.ntypes);
        SEC(4 * h.nworkers);
        SEC(4 * h.nworkers);
        SEC(8 * (h.nworkers + 1));
        SEC(8 * h.nacts);
        SEC(8 * h.nacts);
        SEC(2 * h.nacts);
        SEC(4 * h.nacts);
        SEC(4 * h.nacts);
        SEC(1 * h.nacts);
        SEC(4 * h.nmsgs);
        SEC(4 * h.nmsgs);
        SEC(8 * h.nmsgs);
        SEC(8 * h.nmsgs);
        SEC(8 * h.nmsgs);
        SEC(4 * h.nmsgs);
        SEC(1 * h.nmsgs);
        SEC(4 * h.napool);
#undef SEC
        sz += 8;
        if (sz != lp_input_size(in)) {
            return BAD("%s: byte 16: header describes %llu bytes but the file has %llu (truncated or corrupt)", r->name,
                       (unsigned long long)sz, (unsigned long long)lp_input_size(in));
        }
    }
    return LP_OK;
}

/* The string table: h.nstrings NUL-terminated strings, each new, nothing after them. */
static lp_status read_strings(br *r, const hdr *hp, lp_trace *t, char **sbytesp)
{
    lp_error *err = r->err;
    hdr h = *hp;
    lp_status st;
    uint64_t soff = r->off;
    if ((st = rcol(r, (void **)sbytesp, 1, h.strbytes)))
        return st;
    char *sbytes = *sbytesp;
    if (lp_strtab_init(&t->strs))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    uint64_t pos = 0;
    for (uint64_t i = 0; i < h.nstrings; i++) {
        char *z = pos < h.strbytes ? memchr(sbytes + pos, '\0', h.strbytes - pos) : NULL;
        if (!z)
            return BAD("%s: byte %llu: string table ends inside string %llu", r->name, (unsigned long long)(soff + pos),
                       (unsigned long long)i);
        size_t len = (size_t)(z - (sbytes + pos));
        lp_str id;
        if (lp_strtab_intern(&t->strs, sbytes + pos, len, &id))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        if (id != i)
            return BAD("%s: byte %llu: string %llu is a duplicate of string %u", r->name,
                       (unsigned long long)(soff + pos), (unsigned long long)i, id);
        pos += len + 1;
    }
    if (pos != h.strbytes)
        return BAD("%s: byte %llu: %llu stray bytes after the string table", r->name, (unsigned long long)(soff + pos),
                   (unsigned long long)(h.strbytes - pos));
    return LP_OK;
}

/* The columns (types, workers, activities, messages, attribute pool), then the
 * checksum and nothing after it. */
static lp_status read_columns(br *r, lp_input *in, const hdr *hp, lp_trace *t, lptb_offs *off)
{
    lp_error *err = r->err;
    hdr h = *hp;
    lp_status st;
    t->ntypes = (uint32_t)h.ntypes;
    t->nworkers = (uint32_t)h.nworkers;
    t->nacts = h.nacts;
    t->nmsgs = h.nmsgs;
    t->napool = h.napool;
    off->types = r->off;
    if ((st = rcol(r, (void **)&t->type_name, 4, h.ntypes)))
        return st;
    off->workers = r->off;
    if ((st = rcol(r, (void **)&t->wname, 4, h.nworkers)) || (st = rcol(r, (void **)&t->wattr, 4, h.nworkers)) ||
        (st = rcol(r, (void **)&t->wfirst, 8, h.nworkers + 1)))
        return st;
    off->acts = r->off;
    if ((st = rcol(r, (void **)&t->astart, 8, h.nacts)) || (st = rcol(r, (void **)&t->aend, 8, h.nacts)) ||
        (st = rcol(r, (void **)&t->atype, 2, h.nacts)) || (st = rcol(r, (void **)&t->aop, 4, h.nacts)) ||
        (st = rcol(r, (void **)&t->aattr, 4, h.nacts)) || (st = rcol(r, (void **)&t->aflags, 1, h.nacts)))
        return st;
    off->msgs = r->off;
    if ((st = rcol(r, (void **)&t->msrc, 4, h.nmsgs)) || (st = rcol(r, (void **)&t->mdst, 4, h.nmsgs)) ||
        (st = rcol(r, (void **)&t->msend, 8, h.nmsgs)) || (st = rcol(r, (void **)&t->mrecv, 8, h.nmsgs)) ||
        (st = rcol(r, (void **)&t->mid, 8, h.nmsgs)) || (st = rcol(r, (void **)&t->mattr, 4, h.nmsgs)) ||
        (st = rcol(r, (void **)&t->mflags, 1, h.nmsgs)))
        return st;
    off->pool = r->off;
    if ((st = rcol(r, (void **)&t->apool, 4, h.napool)))
        return st;
    uint64_t stored, sum = r->map ? XXH3_64bits(r->map, (size_t)r->off) : XXH3_64bits_digest(r->h);
    if ((st = rd(r, &stored, 8, 0)))
        return st;
    if (r->map && r->off != r->maplen)
        return BAD("%s: byte %llu: trailing data after the checksum", r->name, (unsigned long long)r->off);
    if (!r->map) {
        char extra;
        size_t got;
        if ((st = lp_input_read(in, &extra, 1, &got, err)))
            return st;
        if (got)
            return BAD("%s: byte %llu: trailing data after the checksum", r->name, (unsigned long long)r->off);
    }
#ifdef LP_FUZZING
    (void)sum; /* fuzzing builds check everything but the checksum, so mutations reach the validation */
#else
    if (stored != sum)
        return lp_error_set(err, LP_ERR_CHECKSUM,
                            "%s: byte %llu: checksum mismatch (stored %016llx, computed %016llx): the file is corrupt",
                            r->name, (unsigned long long)(r->off - 8), (unsigned long long)stored,
                            (unsigned long long)sum);
#endif
    return LP_OK;
}

/* Validation of the attribute pool: where lists start (valid[o]), each inside the pool
 * with string ids in range; list 0 empty. */
static lp_status check_pool(br *r, const hdr *h, const lp_trace *t, uint8_t *valid, uint64_t off_pool)
{
    lp_error *err = r->err;
    uint32_t ns = t->strs.n;
    for (uint64_t o = 0; o < h->napool;) {
        uint64_t np = t->apool[o];
        if (o == 0 && np != 0)
            return BAD("%s: byte %llu: attribute list 0 must be empty", r->name, (unsigned long long)off_pool);
        if (np > (h->napool - o - 1) / 2)
            return BAD("%s: byte %llu: attribute list runs past the pool", r->name,
                       (unsigned long long)(off_pool + 4 * o));
        for (uint64_t k = 0; k < 2 * np; k++)
            if (t->apool[o + 1 + k] >= ns)
                return BAD("%s: byte %llu: attribute string id %u out of range", r->name,
                           (unsigned long long)(off_pool + 4 * (o + 1 + k)), t->apool[o + 1 + k]);
        valid[o] = 1;
        o += 1 + 2 * np;
    }
    return LP_OK;
}

#define LISTOK(l) ((uint64_t)(l) < h->napool && valid[(l)])

/* Validation of the types (built-ins first, each once) and workers (names once,
 * attribute lists valid, activity ranges covering the activities). */
static lp_status check_types_workers(br *r, const hdr *h, const lp_trace *t, const uint8_t *valid, const lptb_offs *off)
{
    lp_error *err = r->err;
    uint32_t ns = t->strs.n;
    for (uint32_t i = 0; i < t->ntypes; i++) {
        if (t->type_name[i] >= ns || (i < LP_TYPE_NBUILTIN && strcmp(lp_strtab_get(&t->strs, t->type_name[i]),
                                                                     lp_type_builtin_name(i)) != 0))
            return BAD("%s: byte %llu: bad activity type %u", r->name, (unsigned long long)(off->types + 4 * i), i);
        for (uint32_t j = 0; j < i; j++)
            if (t->type_name[j] == t->type_name[i])
                return BAD("%s: byte %llu: activity type %u repeated", r->name, (unsigned long long)(off->types + 4 * i),
                           i);
    }
    uint8_t *seen = lp_calloc(ns, 1);
    if (!seen)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < t->nworkers; k++) {
        if (t->wname[k] >= ns || seen[t->wname[k]] || !LISTOK(t->wattr[k])) {
            lp_free(seen);
            return BAD("%s: byte %llu: bad or repeated worker %u", r->name, (unsigned long long)(off->workers + 4 * k),
                       k);
        }
        seen[t->wname[k]] = 1;
    }
    lp_free(seen);
    if (t->wfirst[0] != 0 || t->wfirst[t->nworkers] != t->nacts)
        return BAD("%s: byte %llu: worker activity ranges do not cover the activities", r->name,
                   (unsigned long long)off->workers);
    return LP_OK;
}

/* Validation of the activities (per worker: in order, not overlapping, ids and flags
 * valid) and messages (workers, ids, attributes, flags; the skew flag derived, not
 * trusted); the trace's gaps, skewed messages and time range are counted. */
static lp_status check_acts_msgs(br *r, const hdr *h, lp_trace *t, const uint8_t *valid, const lptb_offs *off)
{
    lp_error *err = r->err;
    uint32_t ns = t->strs.n;
    uint64_t ngaps = 0, nskew = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t k = 0; k < t->nworkers; k++) {
        uint64_t a = t->wfirst[k], z = t->wfirst[k + 1];
        if (z < a || z > t->nacts) {
            return BAD("%s: byte %llu: worker %u's activity range is invalid", r->name,
                       (unsigned long long)(off->workers + 8 * (2 * h->nworkers + k)), k);
        }
        for (uint64_t i = a; i < z; i++) {
            if (t->astart[i] > t->aend[i] || (i > a && t->astart[i] < t->aend[i - 1]) || t->atype[i] >= t->ntypes ||
                (t->aop[i] != LP_STR_NONE && t->aop[i] >= ns) || !LISTOK(t->aattr[i]) ||
                (t->aflags[i] & ~LP_ACT_GAP)) {
                return BAD("%s: byte %llu: activity %llu of worker %u breaks an invariant (order, overlap, ids or flags)",
                           r->name, (unsigned long long)(off->acts + 8 * i), (unsigned long long)i, k);
            }
            ngaps += t->aflags[i] & LP_ACT_GAP;
        }
        if (a < z) {
            lo = t->astart[a] < lo ? t->astart[a] : lo;
            hi = t->aend[z - 1] > hi ? t->aend[z - 1] : hi;
        }
    }
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        uint64_t id = t->mid[m];
        int idok = id == LP_MSGID_NONE || !(id & LP_MSGID_STR) || ((id & ~LP_MSGID_STR) < ns);
        if (t->msrc[m] >= t->nworkers || t->mdst[m] >= t->nworkers || !idok || !LISTOK(t->mattr[m]) ||
            (t->mflags[m] & ~(LP_MSG_SKEW | LP_MSG_HALVES))) {
            return BAD("%s: byte %llu: message %llu has an invalid worker, id, attribute list or flag", r->name,
                       (unsigned long long)(off->msgs + 4 * m), (unsigned long long)m);
        }
        /* the skew flag is derived, not trusted */
        if (t->mrecv[m] < t->msend[m]) {
            t->mflags[m] |= LP_MSG_SKEW;
            nskew++;
        } else {
            t->mflags[m] &= (uint8_t)~LP_MSG_SKEW;
        }
        int64_t a = t->msend[m] < t->mrecv[m] ? t->msend[m] : t->mrecv[m];
        int64_t z = t->msend[m] < t->mrecv[m] ? t->mrecv[m] : t->msend[m];
        lo = a < lo ? a : lo;
        hi = z > hi ? z : hi;
    }
    if (lo > hi)
        lo = hi = 0;
    t->ngaps = ngaps;
    t->nskew = nskew;
    t->tmin = lo;
    t->tmax = hi;
    return LP_OK;
}

#undef LISTOK

/* Progress by phase (issue 12: nothing on the screen for seconds): bytes read, then
 * the validation's three steps. */
static void phase(const lp_load_opts *opts, const char *what, uint64_t done, uint64_t total)
{
    if (opts && opts->progress)
        opts->progress(opts->progress_ctx, what, done, total);
}

lp_status lp_lptb_read(lp_input *in, lp_trace **out, lp_diags *diags, const lp_load_opts *opts, lp_error *err)
{
    (void)diags;
    *out = NULL;
    br r = {in, XXH3_createState(), 0, lp_input_name(in), err, NULL, 0};
    if (!r.h)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    XXH3_64bits_reset(r.h);
    lp_trace *t = lp_calloc(1, sizeof *t);
    char *sbytes = NULL;
    uint8_t *valid = NULL;
    lp_status st;
    hdr h;
    lptb_offs off;
    if (!t) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto fail;
    }
    uint64_t size = lp_input_size(in);
    phase(opts, "loading", 0, size);
    map_file(&r, in, t);
    if ((st = read_header(&r, in, &h)) || (st = read_strings(&r, &h, t, &sbytes)))
        goto fail;
    phase(opts, "loading", r.off, size);
    if (!r.map)
        lp_free(sbytes);
    sbytes = NULL;
    if ((st = read_columns(&r, in, &h, t, &off)))
        goto fail;
    phase(opts, "loading", size ? size : r.off, size ? size : r.off);
    phase(opts, "checking", 0, 3);
    /* ---- validation: nothing read is trusted ---- */
    valid = lp_calloc(h.napool, 1);
    if (!valid) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((st = check_pool(&r, &h, t, valid, off.pool)))
        goto fail;
    phase(opts, "checking", 1, 3);
    if ((st = check_types_workers(&r, &h, t, valid, &off)))
        goto fail;
    phase(opts, "checking", 2, 3);
    if ((st = check_acts_msgs(&r, &h, t, valid, &off)))
        goto fail;
    phase(opts, "checking", 3, 3);
    lp_free(valid);
    XXH3_freeState(r.h);
    *out = t;
    return LP_OK;
fail:
    lp_free(valid);
    if (!r.map)
        lp_free(sbytes);
    XXH3_freeState(r.h);
    if (t)
        lp_trace_free(t); /* unmaps */
    else if (r.map)
        munmap((void *)r.map, (size_t)r.maplen);
    return st;
}
