/* lpt_text.c: the native text format, .lpt version 1 (MODEL.md), reader and writer.
 *
 * Reader: the input is read in 4 MiB blocks and cut into lines with memchr; each line
 * is split into at most LPT_MAXTOK tokens in place (no copies) by the shared tokenizer
 * (lpt_tok.h: SSE2 masks of the delimiters 16 bytes at a time), and handed to the builder, which enforces the model's
 * rules. A bad line is reported with file, line, field and reason and skipped; the
 * reader never stops early for bad data. Lines longer than LPT_MAXLINE are reported
 * and skipped. Tuned for >= 10 M records/s on one core: names (workers, types,
 * operators) and whole attribute lists are looked up in small direct-mapped caches
 * keyed by their raw bytes before any hashing or interning, and integers are parsed
 * eight digits at a time. The caches are caches, not tables: a slot is overwritten by
 * the next name that maps to it, a miss falls through to the builder's tables (string
 * table, the library's hash map base/hashmap.h), and a hit costs one load and a
 * 16-byte compare, which a general table with its hashing and probing could not match
 * on this path.
 *
 * Writer: halves (S/R) are written back as halves, one S per (sender, receiver, id),
 * found in the library's hash table.
 *
 * Escapes (an extension of MODEL.md, see docs/formats/lpt.md): inside a token, %XX
 * (two hex digits) stands for that byte; the writer escapes whitespace, '%', '=' in
 * names and keys, '#' at the start of a line and control bytes, so any name survives a
 * round trip. Lines without '%' never pay for decoding.
 */
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "base/pool.h"
#include "base/util.h"
#include "formats/lpt_tok.h"

#include <string.h>

#define LPT_BLOCK ((size_t)4 << 20)
#define LPT_SMALL ((size_t)256 << 10) /* smallest chunk of a pipelined read */
#define LPT_NCHUNKS 64                 /* chunks of a mid-sized file */
#define LPT_MAXLINE ((size_t)16 << 20)
#define LPT_MAXTOK LP_LPT_MAXTOK
#define LPT_PAD 64            /* readable bytes past the end of the data in the buffer */
#define NCACHE 256            /* entries of each name cache (power of two) */
#define NACACHE 64            /* entries of the attribute-list cache */
#define ACACHE_MAXKEY 240     /* longest attribute text cached */

/* A token (lpt_tok.h) in a chunk buffer, which is ours to rewrite (decoding escapes);
 * eq: the first unescaped '=' (key=value tokens), or NULL, on lines with escapes. */
typedef lp_lpt_tok tok;

/* A name seen before: its bytes as given (stable: interned), and what it maps to;
 * names of at most 16 bytes are compared by their key (tok_key) alone. */
typedef struct cslot {
    const char *p;
    uint32_t n;
    uint32_t id;
    uint64_t k0, k1;
} cslot;

/* An attribute text seen before ("bytes=4096 kind=data"), and its list id. */
typedef struct aslot {
    uint16_t n;
    uint32_t list;
    char key[ACACHE_MAXKEY];
} aslot;

typedef struct reader {
    lp_builder *b;
    lp_diags *d;
    const char *name;
    uint64_t line;
    int seen_header;
    int seen_record;
    int eq_known;             /* this line's tokens have their '=' found (escaped lines) */
    cslot cworker[NCACHE], ctype[NCACHE], cop[NCACHE];
    aslot *cattr;             /* NACACHE entries, allocated with the reader */
    lp_str kvbuf[2 * LPT_MAXTOK];
} reader;

/* ---- tokens ------------------------------------------------------------------- */

/* The first 16 bytes of p[0..n), zero past n. Reads p[0..16): tokens lie in a chunk
 * buffer with LPT_PAD readable bytes after the data, so fixed 8-byte loads beat a
 * variable-length copy. */
static inline void tok_key(const char *p, size_t n, uint64_t *k0, uint64_t *k1)
{
    uint64_t a, b;
    memcpy(&a, p, 8);
    memcpy(&b, p + 8, 8);
    if (n < 8) {
        a &= (UINT64_C(1) << (8 * n)) - 1;
        b = 0;
    } else if (n < 16) {
        b &= (UINT64_C(1) << (8 * (n - 8))) - 1;
    }
    *k0 = a;
    *k1 = b;
}

/* The name caches' slot of a name (direct-mapped caches in front of the builder's
 * tables, not tables of their own: see the header; converting them to the library's
 * hash map would slow the reader down). */
static inline uint32_t key_hash(uint64_t k0, uint64_t k1, const char *p, size_t n)
{
    uint64_t z = 0;
    if (n > 16)
        memcpy(&z, p + n - 8, 8);
    uint64_t h = (k0 ^ ((k1 ^ z) * 0x9E3779B97F4A7C15ULL) ^ n) * 0xBF58476D1CE4E5B9ULL;
    return (uint32_t)(h >> 40);
}

static inline uint32_t tok_hash(const char *p, size_t n)
{
    uint64_t k0, k1;
    tok_key(p, n, &k0, &k1);
    return key_hash(k0, k1, p, n);
}

static inline cslot *cache_get(cslot *c, const tok *t)
{
    uint64_t k0, k1;
    tok_key(t->p, t->n, &k0, &k1);
    cslot *e = &c[key_hash(k0, k1, t->p, t->n) & (NCACHE - 1)];
    if (!e->p || e->n != t->n || e->k0 != k0 || e->k1 != k1)
        return NULL;
    return t->n <= 16 || memcmp(e->p + 16, t->p + 16, t->n - 16) == 0 ? e : NULL;
}

static inline void cache_put(cslot *c, const tok *t, const char *stable, uint32_t id)
{
    uint64_t k0, k1;
    tok_key(t->p, t->n, &k0, &k1);
    cslot *e = &c[key_hash(k0, k1, t->p, t->n) & (NCACHE - 1)];
    e->p = stable;
    e->n = (uint32_t)t->n;
    e->id = id;
    e->k0 = k0;
    e->k1 = k1;
}

/* A printable excerpt of a token: at most 40 bytes of it, control bytes as '?' and
 * bytes that are not valid UTF-8 as \xNN, so messages are always valid UTF-8. */
static const char *excerpt(char ex[200], const char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = n < 40 ? n : 40, o = 0;
    for (size_t i = 0; p && i < k;) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x80) {
            ex[o++] = c < 0x20 ? '?' : (char)c;
            i++;
            continue;
        }
        size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
        if (len > 1 && i + len <= n && lp_utf8_valid(p + i, len)) {
            memcpy(ex + o, p + i, len);
            o += len;
            i += len;
        } else {
            ex[o++] = '\\';
            ex[o++] = 'x';
            ex[o++] = hex[c >> 4];
            ex[o++] = hex[c & 15];
            i++;
        }
    }
    ex[o] = '\0';
    return ex;
}

#define BAD(r, rule, ...) lp_diags_report((r)->d, LP_SEV_ERROR, (rule), (r)->name, (r)->line, __VA_ARGS__)

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decode %XX escapes in place in p[0..n); returns the new length. */
static size_t unescape_span(char *p0, size_t n)
{
    char *p = p0, *q = p0, *e = p0 + n;
    while (p < e) {
        int h, l;
        if (*p == '%' && e - p >= 3 && (h = hexval(p[1])) >= 0 && (l = hexval(p[2])) >= 0) {
            *q++ = (char)(h * 16 + l);
            p += 3;
        } else {
            *q++ = *p++;
        }
    }
    return (size_t)(q - p0);
}

/* Decode a token; a key=value token is decoded as key and value separately, so an
 * escaped '=' (%3D) never splits it. The value is moved to follow the key's '='. */
static void unescape(tok *t)
{
    char *p = (char *)t->p; /* in a chunk buffer: writable */
    if (!t->eq) {
        t->n = unescape_span(p, t->n);
        return;
    }
    size_t kn = unescape_span(p, (size_t)(t->eq - p));
    char *v = t->eq + 1;
    size_t vn = unescape_span(v, t->n - (size_t)(v - p));
    p[kn] = '=';
    memmove(p + kn + 1, v, vn);
    t->eq = p + kn;
    t->n = kn + 1 + vn;
}

/* The first '=' of a token that came unescaped: found when the line was decoded, else
 * searched now (most tokens never need it). */
static inline char *tok_eq(const reader *r, const tok *t)
{
    return r->eq_known ? t->eq : memchr(t->p, '=', t->n);
}

/* ---- names ----------------------------------------------------------------------- */

/* A name just added to the string table (the table grew past `before`) must be UTF-8;
 * names seen before were checked then. Returns 1 (reported) if it is not. */
static int check_new(reader *r, uint32_t before, const tok *t, const char *what)
{
    if (lp_builder_strtab(r->b)->n == before || lp_utf8_valid(t->p, t->n))
        return 0;
    char ex[200];
    BAD(r, LP_RULE_ENCODING, "%s is not valid UTF-8: '%s'", what, excerpt(ex, t->p, t->n));
    return 1;
}

static int intern(reader *r, const tok *t, lp_str *out, lp_error *err)
{
    lp_strtab *st = lp_builder_strtab(r->b);
    uint32_t before = st->n;
    if (lp_strtab_intern(st, t->p, t->n, out)) {
        lp_error_set(err, LP_ERR_NOMEM, "out of memory interning a name");
        return -1;
    }
    return check_new(r, before, t, "name");
}

static int worker(reader *r, const tok *t, uint32_t *w, lp_error *err)
{
    cslot *c = cache_get(r->cworker, t);
    if (c) {
        *w = c->id;
        return 0;
    }
    uint32_t before = lp_builder_strtab(r->b)->n;
    if (lp_builder_worker(r->b, t->p, t->n, w, err))
        return -1;
    if (check_new(r, before, t, "worker name"))
        return 1;
    cache_put(r->cworker, t, lp_trace_worker_name(lp_builder_trace(r->b), *w), *w);
    return 0;
}

static int type(reader *r, const tok *t, uint16_t *ty, lp_error *err)
{
    cslot *c = cache_get(r->ctype, t);
    if (c) {
        *ty = (uint16_t)c->id;
        return 0;
    }
    uint32_t before = lp_builder_strtab(r->b)->n;
    if (lp_builder_type(r->b, t->p, t->n, ty, err))
        return -1;
    if (check_new(r, before, t, "type"))
        return 1;
    cache_put(r->ctype, t, lp_trace_type_name(lp_builder_trace(r->b), *ty), *ty);
    return 0;
}

static int op(reader *r, const tok *t, lp_str *o, lp_error *err)
{
    cslot *c = cache_get(r->cop, t);
    if (c) {
        *o = c->id;
        return 0;
    }
    int rc = intern(r, t, o, err);
    if (rc)
        return rc;
    cache_put(r->cop, t, lp_strtab_get(lp_builder_strtab(r->b), *o), *o);
    return 0;
}

/* ---- attributes ------------------------------------------------------------------- */

/* Parse key=value tokens tk[from..ntok); for messages, id= is the message id (not an
 * attribute) and bytes= must be a non-negative integer. Returns 0, 1 (bad, reported)
 * or -1 (resource error). Lists are cached by their text: repeated attribute texts
 * (the common case) cost one hash and one memcmp. */
static int attrs(reader *r, tok *tk, size_t from, size_t ntok, int msg, uint64_t *mid, uint32_t *list,
                 lp_error *err)
{
    /* the message id first (it is unique per message, so never part of the cache key) */
    size_t first = from;
    if (msg && tk[from].n > 3 && memcmp(tk[from].p, "id=", 3) == 0) {
        if (lp_builder_msgid(r->b, tk[from].p + 3, tk[from].n - 3, mid, err))
            return -1;
        first++;
    }
    if (first == ntok) {
        *list = 0;
        return 0;
    }
    const char *kp = tk[first].p;
    size_t kn = (size_t)(tk[ntok - 1].p + tk[ntok - 1].n - kp);
    aslot *slot = NULL;
    if (kn <= ACACHE_MAXKEY) {
        slot = &r->cattr[tok_hash(kp, kn) & (NACACHE - 1)];
        if (slot->n == kn && memcmp(slot->key, kp, kn) == 0 && (slot->list || kn == 0)) {
            *list = slot->list;
            return 0;
        }
    }
    uint32_t np = 0;
    for (size_t i = first; i < ntok; i++) {
        char *eq = tok_eq(r, &tk[i]);
        if (!eq || eq == tk[i].p) {
            char ex[200];
            BAD(r, LP_RULE_FIELD, "field %zu: expected key=value, got '%s'", i + 1, excerpt(ex, tk[i].p, tk[i].n));
            return 1;
        }
        tok k = {tk[i].p, (size_t)(eq - tk[i].p), NULL}, v = {eq + 1, tk[i].n - (size_t)(eq - tk[i].p) - 1, NULL};
        if (msg && k.n == 2 && memcmp(k.p, "id", 2) == 0) {
            if (lp_builder_msgid(r->b, v.p, v.n, mid, err))
                return -1;
            slot = NULL; /* an id in the middle: not cacheable */
            continue;
        }
        if (msg && k.n == 5 && memcmp(k.p, "bytes", 5) == 0) {
            int64_t nb;
            if (!lp_lpt_parse_time(v.p, v.n, &nb) || nb < 0) {
                char ex[200];
                BAD(r, LP_RULE_FIELD, "field %zu (bytes): not a non-negative integer: '%s'", i + 1,
                    excerpt(ex, v.p, v.n));
                return 1;
            }
        }
        int rc = intern(r, &k, &r->kvbuf[2 * np], err);
        if (rc)
            return rc;
        rc = intern(r, &v, &r->kvbuf[2 * np + 1], err);
        if (rc)
            return rc;
        np++;
    }
    if (lp_builder_attrs(r->b, r->kvbuf, np, list, err))
        return -1;
    if (slot && *list) {
        slot->n = (uint16_t)kn;
        memcpy(slot->key, kp, kn);
        slot->list = *list;
    }
    return 0;
}

static int need(reader *r, size_t ntok, size_t min, const char *rec, const char *usage)
{
    if (ntok >= min)
        return 0;
    lp_diags_report(r->d, LP_SEV_ERROR, LP_RULE_FIELD, r->name, r->line,
                    "%s record needs at least %zu fields, has %zu (usage: %s)", rec, min - 1, ntok - 1, usage);
    return 1;
}

/* ---- records ---------------------------------------------------------------------- */

/* A line prepared by the reading stage: tokens split (and decoded), times parsed. */
typedef struct pline {
    uint64_t line;     /* 1-based line number */
    uint32_t tok0;     /* first token in the chunk's token array */
    uint16_t ntok;     /* 0: blank or comment; LPT_MAXTOK + 1: too many fields; LONGLINE: too long */
    uint8_t eq_known;  /* tokens had their '=' found before decoding */
    uint8_t badtok;    /* 0, or the index of a time token that did not parse */
    int64_t t0, t1;    /* the record's times (A: start, end; M: send, recv; S/R: time) */
} pline;

#define LONGLINE (LPT_MAXTOK + 2)

/* The name of time field i of a record (for messages). */
static const char *time_name(char kind, unsigned i)
{
    switch (kind) {
    case 'A': return i == 2 ? "start" : "end";
    case 'M': return i == 2 ? "send" : "recv";
    default: return "time";
    }
}

/* One record; returns -1 only on resource errors. */
static int record(reader *r, tok *tk, size_t ntok, const pline *pl, lp_error *err)
{
    char ex[200];
    lp_builder *b = r->b;
    if (tk[0].n != 1) {
        if (!r->seen_record && !r->seen_header && tk[0].n == 14 && memcmp(tk[0].p, "longpole-trace", 14) == 0) {
            r->seen_header = 1;
            if (ntok != 2 || tk[1].n != 1 || tk[1].p[0] != '1')
                BAD(r, LP_RULE_SYNTAX, "header: unsupported version '%s' (this reader knows version 1)",
                    excerpt(ex, ntok > 1 ? tk[1].p : "", ntok > 1 ? tk[1].n : 0));
            return 0;
        }
        BAD(r, LP_RULE_SYNTAX, "unknown record '%s' (expected W, A, M, S or R)", excerpt(ex, tk[0].p, tk[0].n));
        return 0;
    }
    r->seen_record = 1;
    char kind = tk[0].p[0];
    size_t need_n = kind == 'W' ? 2 : 5;
    if (pl->badtok && ntok >= need_n && strchr("AMSR", kind)) {
        unsigned i = pl->badtok;
        BAD(r, LP_RULE_FIELD, "field %u (%s): not a 64-bit integer number of nanoseconds: '%s'", i + 1,
            time_name(kind, i), excerpt(ex, tk[i].p, tk[i].n));
        return 0;
    }
    uint32_t w, peer, list = 0;
    int64_t t0, t1;
    int rc;
    switch (tk[0].p[0]) {
    case 'A': {
        if (need(r, ntok, 5, "A", "A <worker> <start> <end> <type> [<operator>|-] [key=value ...]"))
            return 0;
        t0 = pl->t0;
        t1 = pl->t1;
        uint16_t ty;
        if ((rc = type(r, &tk[4], &ty, err)))
            return rc < 0 ? -1 : 0;
        lp_str o = LP_STR_NONE;
        size_t attr_from = 5;
        if (ntok > 5 && !tok_eq(r, &tk[5])) {
            attr_from = 6;
            if (!(tk[5].n == 1 && tk[5].p[0] == '-') && (rc = op(r, &tk[5], &o, err)))
                return rc < 0 ? -1 : 0;
        }
        if (ntok > attr_from && (rc = attrs(r, tk, attr_from, ntok, 0, NULL, &list, err)))
            return rc < 0 ? -1 : 0;
        if ((rc = worker(r, &tk[1], &w, err)))
            return rc < 0 ? -1 : 0;
        return lp_builder_activity(b, w, t0, t1, ty, o, list, r->line, err) ? -1 : 0;
    }
    case 'M': {
        if (need(r, ntok, 5, "M", "M <sender> <send> <receiver> <recv> [id=<id>] [bytes=<n>] [key=value ...]"))
            return 0;
        t0 = pl->t0;
        t1 = pl->t1;
        uint64_t mid = LP_MSGID_NONE;
        if (ntok > 5 && (rc = attrs(r, tk, 5, ntok, 1, &mid, &list, err)))
            return rc < 0 ? -1 : 0;
        if ((rc = worker(r, &tk[1], &w, err)) || (rc = worker(r, &tk[3], &peer, err)))
            return rc < 0 ? -1 : 0;
        return lp_builder_message(b, w, t0, peer, t1, mid, list, r->line, err) ? -1 : 0;
    }
    case 'S':
    case 'R': {
        int is_send = tk[0].p[0] == 'S';
        if (need(r, ntok, 5, is_send ? "S" : "R",
                 is_send ? "S <worker> <time> <receiver> <message-id> [key=value ...]"
                         : "R <worker> <time> <sender> <message-id> [key=value ...]"))
            return 0;
        t0 = pl->t0;
        uint64_t mid;
        if (lp_builder_msgid(b, tk[4].p, tk[4].n, &mid, err))
            return -1;
        if (ntok > 5 && (rc = attrs(r, tk, 5, ntok, 0, NULL, &list, err)))
            return rc < 0 ? -1 : 0;
        if ((rc = worker(r, &tk[1], &w, err)) || (rc = worker(r, &tk[3], &peer, err)))
            return rc < 0 ? -1 : 0;
        if (is_send)
            return lp_builder_send(b, w, t0, peer, mid, list, r->line, err) ? -1 : 0;
        return lp_builder_recv(b, w, t0, peer, mid, list, r->line, err) ? -1 : 0;
    }
    case 'W': {
        if (need(r, ntok, 2, "W", "W <worker> [key=value ...]"))
            return 0;
        if (ntok > 2 && (rc = attrs(r, tk, 2, ntok, 0, NULL, &list, err)))
            return rc < 0 ? -1 : 0;
        if ((rc = worker(r, &tk[1], &w, err)))
            return rc < 0 ? -1 : 0;
        return lp_builder_worker_attrs(b, w, list, r->line, err) ? -1 : 0;
    }
    default:
        BAD(r, LP_RULE_SYNTAX, "unknown record '%s' (expected W, A, M, S or R)", excerpt(ex, tk[0].p, tk[0].n));
        return 0;
    }
}

/* ---- reading: two stages ---------------------------------------------------------
 * Stage 1 reads (and decompresses) the input in chunks, cuts lines, splits tokens,
 * decodes escapes and parses the times; stage 2 resolves names and feeds the builder,
 * in input order. On a large input stage 1 runs on its own thread, one chunk ahead, so
 * the two halves of the work overlap on two cores: its fills are the jobs of a queue on
 * a pool of one worker (base/pool.h; one worker runs them one at a time, in order), with
 * two slots (the chunk being read, the chunk being consumed), and stage 2 is their
 * delivery. A small input (one chunk) is read inline. Chunks hold whole lines; a
 * partial last line moves to the next chunk. */

typedef struct chunk {
    char *buf;          /* text; lines and tokens point into it */
    size_t cap, have;   /* capacity (plus LPT_PAD readable bytes) and bytes used */
    tok *tk;            /* tokens of all lines */
    size_t ntk, captk;
    pline *ln;          /* prepared lines */
    size_t nln, capln;
    uint64_t consumed;  /* input bytes consumed when the chunk was cut (progress) */
    int last;           /* no more input after this chunk */
    lp_status st;       /* a stage-1 failure (I/O, corrupt compression, memory) */
    lp_error err;
} chunk;

typedef struct stage1 {
    lp_input *in;
    uint64_t lineno;    /* lines cut so far */
    int eof, skipping;  /* input ended; inside an over-long line */
    char *carry;        /* partial line carried to the next chunk */
    size_t ncarry, capcarry;
    int over;           /* the last chunk was filled (pipelined: later fills are empty) */
} stage1;

static void chunk_free(chunk *c)
{
    if (!c)
        return;
    lp_free(c->buf);
    lp_free(c->tk);
    lp_free(c->ln);
    lp_free(c);
}

/* A chunk for an input of about `hint` bytes (0: unknown): small inputs get small
 * buffers (the reader then costs little to start), large ones LPT_BLOCK. */
static chunk *chunk_new(uint64_t hint)
{
    chunk *c = lp_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cap = LPT_BLOCK;
    if (hint) {
        /* a file below LPT_SMALL in one chunk (read inline); larger ones in about
         * LPT_NCHUNKS chunks of LPT_SMALL to LPT_BLOCK bytes, so that the pipeline's
         * start (the first chunk parsed alone) and end (the last consumed alone) are short */
        size_t cap = (size_t)1 << 16, want = hint < LPT_SMALL ? hint + 1 : hint / LPT_NCHUNKS;
        while (cap < want && cap < LPT_BLOCK)
            cap *= 2;
        c->cap = hint >= LPT_SMALL && cap < LPT_SMALL ? LPT_SMALL : cap;
    }
    c->buf = lp_malloc(c->cap + LPT_PAD);
    c->captk = c->cap / 64 > LPT_MAXTOK ? c->cap / 64 : LPT_MAXTOK;
    c->tk = lp_malloc(c->captk * sizeof *c->tk);
    c->capln = c->cap / 256 > 64 ? c->cap / 256 : 64;
    c->ln = lp_malloc(c->capln * sizeof *c->ln);
    if (!c->buf || !c->tk || !c->ln) {
        chunk_free(c);
        return NULL;
    }
    return c;
}

/* Prepare one line (without its newline) of chunk c; p[n .. n+16) is readable. */
static int prepare(chunk *c, char *p, size_t n, uint64_t lineno)
{
    if (n && p[n - 1] == '\r')
        n--;
    if (c->nln == c->capln) {
        void *q = c->ln;
        if (lp_grow(&q, &c->capln, c->nln + 1, sizeof(pline)))
            return -1;
        c->ln = q;
    }
    if (c->captk - c->ntk < LPT_MAXTOK) {
        void *q = c->tk;
        if (lp_grow(&q, &c->captk, c->ntk + LPT_MAXTOK, sizeof(tok)))
            return -1;
        c->tk = q;
    }
    pline *pl = &c->ln[c->nln++];
    memset(pl, 0, sizeof *pl);
    pl->line = lineno;
    pl->tok0 = (uint32_t)c->ntk;
    tok *tk = c->tk + c->ntk;
    int pct;
    size_t ntok = lp_lpt_tokenize(p, n, 1, tk, &pct); /* the chunk is padded */
    if (!ntok || tk[0].p[0] == '#')
        return 0;
    if (ntok > LPT_MAXTOK) {
        pl->ntok = LPT_MAXTOK + 1;
        return 0;
    }
    if (pct) { /* rare: escapes; '=' must be found before decoding */
        pl->eq_known = 1;
        for (size_t i = 0; i < ntok; i++) {
            tk[i].eq = memchr(tk[i].p, '=', tk[i].n);
            if (memchr(tk[i].p, '%', tk[i].n))
                unescape(&tk[i]);
        }
    }
    pl->ntok = (uint16_t)ntok;
    c->ntk += ntok;
    /* the times, by record kind; a token that does not parse is reported by stage 2 */
    if (tk[0].n == 1) {
        char k = tk[0].p[0];
        unsigned i0 = 2, i1 = k == 'A' ? 3 : k == 'M' ? 4 : 0;
        if ((k == 'A' || k == 'M' || k == 'S' || k == 'R') && ntok >= 5) {
            if (!lp_lpt_parse_time(tk[i0].p, tk[i0].n, &pl->t0))
                pl->badtok = (uint8_t)i0;
            else if (i1 && !lp_lpt_parse_time(tk[i1].p, tk[i1].n, &pl->t1))
                pl->badtok = (uint8_t)i1;
        }
    }
    return 0;
}

static void fail_chunk(chunk *c, lp_status st)
{
    if (st == LP_ERR_NOMEM)
        lp_error_set(&c->err, LP_ERR_NOMEM, "out of memory");
    c->st = st;
    c->last = 1;
}

/* Stage 1: fill chunk c with the next whole lines of the input: read until the buffer
 * is full (or the input ends), then carry the partial last line to the next chunk. */
static void fill(stage1 *s, chunk *c)
{
    c->ntk = c->nln = 0;
    c->st = LP_OK;
    lp_error_clear(&c->err);
    /* the partial line left over from the previous chunk */
    if (s->ncarry > c->cap) {
        char *nb = lp_realloc(c->buf, s->ncarry * 2 + LPT_PAD);
        if (!nb)
            return fail_chunk(c, LP_ERR_NOMEM);
        c->buf = nb;
        c->cap = s->ncarry * 2;
    }
    if (s->ncarry)
        memcpy(c->buf, s->carry, s->ncarry);
    c->have = s->ncarry;
    s->ncarry = 0;
    size_t scan = 0; /* first byte not yet cut into lines */
    for (;;) {
        if (!s->eof && c->have < c->cap) {
            size_t got;
            lp_status st = lp_input_read(s->in, c->buf + c->have, c->cap - c->have, &got, &c->err);
            if (st)
                return fail_chunk(c, st);
            if (!got)
                s->eof = 1;
            c->have += got;
        }
        memset(c->buf + c->have, 0, LPT_PAD);
        char *p = c->buf + scan, *end = c->buf + c->have;
        for (;;) {
            char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl)
                break;
            s->lineno++;
            if (s->skipping)
                s->skipping = 0;
            else if (prepare(c, p, (size_t)(nl - p), s->lineno))
                return fail_chunk(c, LP_ERR_NOMEM);
            p = nl + 1;
        }
        scan = (size_t)(p - c->buf);
        size_t rest = c->have - scan;
        if (s->eof) {
            if (rest) { /* the last line has no newline */
                s->lineno++;
                if (!s->skipping && prepare(c, p, rest, s->lineno))
                    return fail_chunk(c, LP_ERR_NOMEM);
            }
            c->last = 1;
            break;
        }
        if (c->have < c->cap)
            continue; /* room left: read more into this chunk */
        if (scan > 0) { /* full: carry the partial line to the next chunk */
            if (rest > s->capcarry) {
                char *nc = lp_realloc(s->carry, rest);
                if (!nc)
                    return fail_chunk(c, LP_ERR_NOMEM);
                s->carry = nc;
                s->capcarry = rest;
            }
            if (rest)
                memcpy(s->carry, p, rest);
            s->ncarry = rest;
            break;
        }
        /* one line fills the whole buffer: grow it, or give up on the line */
        if (s->skipping || c->cap >= LPT_MAXLINE) {
            if (!s->skipping) {
                if (c->nln == c->capln) {
                    void *q = c->ln;
                    if (lp_grow(&q, &c->capln, c->nln + 1, sizeof(pline)))
                        return fail_chunk(c, LP_ERR_NOMEM);
                    c->ln = q;
                }
                pline *pl = &c->ln[c->nln++];
                memset(pl, 0, sizeof *pl);
                pl->line = s->lineno + 1;
                pl->ntok = LONGLINE;
            }
            s->skipping = 1;
            c->have = scan = 0;
            if (c->nln)
                break;
            continue;
        }
        char *nb = lp_realloc(c->buf, c->cap * 2 + LPT_PAD);
        if (!nb)
            return fail_chunk(c, LP_ERR_NOMEM);
        c->buf = nb;
        c->cap *= 2;
    }
    c->consumed = lp_input_consumed(s->in);
}

/* Stage 2: the records of a chunk, in order. Returns -1 on resource errors. */
static int consume(reader *r, chunk *c, lp_error *err)
{
    for (size_t i = 0; i < c->nln; i++) {
        const pline *pl = &c->ln[i];
        r->line = pl->line;
        if (!pl->ntok)
            continue;
        if (pl->ntok == LPT_MAXTOK + 1) {
            lp_diags_report(r->d, LP_SEV_ERROR, LP_RULE_SYNTAX, r->name, r->line,
                            "more than %d fields on one line; record dropped", LPT_MAXTOK);
            continue;
        }
        if (pl->ntok == LONGLINE) {
            lp_diags_report(r->d, LP_SEV_ERROR, LP_RULE_SYNTAX, r->name, r->line,
                            "line longer than %zu bytes; record dropped", LPT_MAXLINE);
            continue;
        }
        r->eq_known = pl->eq_known;
        if (record(r, c->tk + pl->tok0, pl->ntok, pl, err) < 0)
            return -1;
    }
    return 0;
}

static int progress(reader *r, const lp_load_opts *opts, lp_input *in, uint64_t consumed, uint64_t *next)
{
    if (!opts || !opts->progress || consumed < *next)
        return 0;
    *next = consumed + (64u << 20);
    return opts->progress(opts->progress_ctx, "loading", consumed, lp_input_size(in));
}

/* The pipelined read: slot i of the queue is read into c[i]; c[0] holds the first chunk
 * already, so the first job has nothing to do. */
typedef struct rpipe {
    reader *r;
    stage1 *s;
    chunk *c[2];
    const lp_load_opts *opts;
    lp_input *in;
    uint64_t *next_progress;
    int first;          /* the first job is still to come (stage 1's state) */
    int done;           /* the last chunk was consumed (stage 2's state) */
} rpipe;

/* Stage 1 (the worker): fill the slot's chunk. */
static lp_status fill_job(void *ctx, size_t slot, unsigned thread, lp_error *err)
{
    rpipe *x = ctx;
    chunk *c = x->c[slot];
    if (x->first) {
        x->first = 0;
        return LP_OK;
    }
    if (x->s->over) { /* submitted before the last chunk was seen: nothing more to read */
        c->ntk = c->nln = 0;
        c->last = 1;
        return LP_OK;
    }
    fill(x->s, c);
    x->s->over = c->last;
    return LP_OK;
}

/* Stage 2 (the calling thread, in order): a stage-1 failure, or the chunk's records. */
static lp_status consume_chunk(void *ctx, size_t slot, lp_error *err)
{
    rpipe *x = ctx;
    chunk *c = x->c[slot];
    if (x->done) /* read after the last chunk: empty */
        return LP_OK;
    x->done = c->last;
    if (c->st) {
        *err = c->err;
        return c->st;
    }
    if (consume(x->r, c, err) < 0)
        return err->status;
    if (progress(x->r, x->opts, x->in, c->consumed, x->next_progress))
        return lp_error_set(err, LP_ERR_ARG, "cancelled");
    return LP_OK;
}

/* Read the rest of the input through the pipeline; a (filled, not consumed) and b are the
 * two chunks. */
static lp_status read_pipelined(reader *r, stage1 *s, chunk *a, chunk *b, const lp_load_opts *opts, lp_input *in,
                                uint64_t *next_progress, lp_error *err)
{
    rpipe x = {r, s, {a, b}, opts, in, next_progress, 1, 0};
    lp_pool *pool = NULL;
    lp_poolq *q = NULL;
    lp_status st = lp_pool_new(&pool, 1, err);
    if (!st)
        st = lp_poolq_new(&q, pool, 2, fill_job, consume_chunk, &x, err);
    while (!st && !x.done) {
        size_t i;
        if (!(st = lp_poolq_reserve(q, &i, err)))
            st = lp_poolq_submit(q, err);
    }
    if (!st)
        st = lp_poolq_finish(q, err);
    lp_poolq_free(q);
    lp_pool_free(pool);
    return st;
}

lp_status lp_lpt_read(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    reader *r = lp_calloc(1, sizeof *r);
    if (!r)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    stage1 s = {in, 0, 0, 0, NULL, 0, 0, 0};
    chunk *a = NULL, *c2 = NULL;
    int threaded = 0;
    uint64_t next_progress = 0;
    lp_status st = LP_OK;
    r->cattr = lp_calloc(NACACHE, sizeof *r->cattr);
    r->b = b;
    r->name = lp_input_name(in);
    r->d = lp_builder_diags(b);
    uint64_t hint = lp_input_compression(in) == LP_COMP_NONE ? lp_input_size(in) : 0;
    if (!r->cattr || !(a = chunk_new(hint))) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((st = lp_builder_source(b, r->name, err)))
        goto out;
    fill(&s, a);
    if (!a->last && (c2 = chunk_new(hint))) {
        /* a large input: stage 1 continues on its own thread, into the other chunk */
        threaded = 1;
        st = read_pipelined(r, &s, a, c2, opts, in, &next_progress, err);
    }
    if (!threaded) { /* small input, or no second chunk: inline, the stages in turn */
        rpipe x = {r, &s, {a, NULL}, opts, in, &next_progress, 0, 0};
        lp_error e;
        while (!(st = consume_chunk(&x, 0, err ? err : &e)) && !x.done)
            fill(&s, a);
    }
out:
    if (st && err)
        lp_error_push(err, "%s:%llu", r->name ? r->name : "?", (unsigned long long)r->line);
    chunk_free(a);
    chunk_free(c2);
    lp_free(s.carry);
    lp_free(r->cattr);
    lp_free(r);
    return st;
}

/* ---- writer ------------------------------------------------------------------ */

/* Names are written escaped (wname); the escaped forms of the first WCACHE string ids
 * (worker names, types and operators are interned first, and are most of what a trace
 * repeats) are made once and copied after. */
#define WCACHE 4096
#define WCACHE_MAXLEN 255
typedef struct wcent {
    uint32_t off;   /* in wbuf.cbuf */
    uint8_t len;
    uint8_t set;    /* 0: not made yet; 1: made; 2: not cacheable (too long) */
} wcent;

typedef struct wbuf {
    FILE *f;
    char *p;
    size_t n, cap;
    int failed;
    wcent *cache;   /* [2][WCACHE]: escaped as a value, as a key ('=' escaped); NULL = none */
    char *cbuf;     /* the escaped forms, each followed by 16 readable bytes */
    size_t clen, ccap;
} wbuf;

static void wflush(wbuf *w)
{
    if (w->n && fwrite(w->p, 1, w->n, w->f) != w->n)
        w->failed = 1;
    w->n = 0;
}

static inline char *wreserve(wbuf *w, size_t k)
{
    if (w->n + k > w->cap)
        wflush(w);
    return w->p + w->n;
}

static inline void wput(wbuf *w, const char *s, size_t k)
{
    if (k > w->cap / 2) {
        wflush(w);
        if (fwrite(s, 1, k, w->f) != k)
            w->failed = 1;
        return;
    }
    memcpy(wreserve(w, k), s, k);
    w->n += k;
}

static inline void wc(wbuf *w, char c)
{
    *wreserve(w, 1) = c;
    w->n++;
}

static inline void wi64(wbuf *w, int64_t v)
{
    char *p = wreserve(w, 24);
    w->n += lp_fmt_i64(p, v);
}

/* Write a name escaping what the reader would split or misread. `key` also escapes '='. */
static void wname(wbuf *w, const char *s, size_t n, int esc_eq)
{
    int plain = n > 0;
    for (size_t i = 0; i < n && plain; i++) {
        unsigned char c = (unsigned char)s[i];
        plain = c > 0x20 && c != 0x7f && c != '%' && !(esc_eq && c == '=');
    }
    if (plain && s[0] == '#')
        plain = 0;
    if (plain) {
        wput(w, s, n);
        return;
    }
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c == 0x7f || c == '%' || (esc_eq && c == '=') || (i == 0 && c == '#')) {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            wput(w, e, 3);
        } else {
            wc(w, (char)c);
        }
    }
}

/* Make the cached escaped form of string s (see WCACHE); 0 if it cannot be cached. */
static int wcache_make(wbuf *w, const lp_trace *t, lp_str s, int esc_eq, wcent *e)
{
    size_t n = lp_strtab_len(&t->strs, s);
    e->set = 2;
    if (3 * n > WCACHE_MAXLEN)
        return 0;
    if (w->clen + WCACHE_MAXLEN + 16 > w->ccap) {
        size_t cap = w->ccap ? 2 * w->ccap : 16384;
        char *nb = lp_realloc(w->cbuf, cap);
        if (!nb)
            return 0;
        w->cbuf = nb;
        w->ccap = cap;
    }
    /* escape into the output buffer (room reserved, so no flush in between), copy out */
    wreserve(w, 3 * n + 1);
    size_t mark = w->n;
    wname(w, lp_strtab_get(&t->strs, s), n, esc_eq);
    size_t len = w->n - mark;
    w->n = mark;
    if (len > WCACHE_MAXLEN)
        return 0;
    memcpy(w->cbuf + w->clen, w->p + mark, len);
    memset(w->cbuf + w->clen + len, 0, 16);
    e->off = (uint32_t)w->clen;
    e->len = (uint8_t)len;
    e->set = 1;
    w->clen += len;
    return 1;
}

static void wstr(wbuf *w, const lp_trace *t, lp_str s, int esc_eq)
{
    if (w->cache && s < WCACHE) {
        wcent *e = &w->cache[esc_eq ? WCACHE + s : s];
        if (e->set == 1 || (!e->set && wcache_make(w, t, s, esc_eq, e))) {
            const char *src = w->cbuf + e->off;
            if (e->len <= 16) { /* one fixed-size copy (the 16 bytes after each form are readable) */
                memcpy(wreserve(w, 16), src, 16);
                w->n += e->len;
            } else {
                wput(w, src, e->len);
            }
            return;
        }
    }
    wname(w, lp_strtab_get(&t->strs, s), lp_strtab_len(&t->strs, s), esc_eq);
}

static void wattrs(wbuf *w, const lp_trace *t, uint32_t list)
{
    if (!list)
        return;
    uint32_t n = t->apool[list];
    for (uint32_t i = 0; i < n; i++) {
        wc(w, ' ');
        wstr(w, t, t->apool[list + 1 + 2 * i], 1);
        wc(w, '=');
        /* values: whitespace and '%' escaped, '=' allowed */
        lp_str v = t->apool[list + 2 + 2 * i];
        if (lp_strtab_len(&t->strs, v))
            wstr(w, t, v, 0);
    }
}

static void wmsgid(wbuf *w, const lp_trace *t, uint64_t id)
{
    if (id & LP_MSGID_STR) {
        wstr(w, t, (lp_str)(id & 0xFFFFFFFFu), 0);
    } else {
        char *p = wreserve(w, 24);
        w->n += lp_fmt_u64(p, id);
    }
}

/* Message m's (sender, receiver, id), for the table of the S halves written. */
typedef struct halfkey {
    const lp_trace *t;
    uint64_t m;
} halfkey;

static inline uint32_t half_hash(const lp_trace *t, uint64_t m)
{
    return (uint32_t)lp_hash_mix(t->mid[m], (uint64_t)t->msrc[m] << 32 | t->mdst[m]);
}

static inline int same_half(const void *ctx, uint64_t o)
{
    const halfkey *k = ctx;
    const lp_trace *t = k->t;
    return t->msrc[o] == t->msrc[k->m] && t->mdst[o] == t->mdst[k->m] && t->mid[o] == t->mid[k->m];
}

lp_status lp_lpt_write(const lp_trace *t, FILE *out, lp_error *err)
{
    wbuf w = {out, NULL, 0, (size_t)1 << 20, 0, NULL, NULL, 0, 0};
    w.p = lp_malloc(w.cap);
    if (!w.p)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    w.cache = lp_calloc(2 * WCACHE, sizeof *w.cache); /* optional: without it, names are escaped each time */
    wput(&w, "longpole-trace 1\n", 17);
    for (uint32_t k = 0; k < t->nworkers; k++) {
        wput(&w, "W ", 2);
        wstr(&w, t, t->wname[k], 0);
        wattrs(&w, t, t->wattr[k]);
        wc(&w, '\n');
    }
    for (uint32_t k = 0; k < t->nworkers; k++) {
        /* the worker name, escaped once */
        size_t mark = w.n;
        wname(&w, lp_trace_worker_name(t, k), lp_strtab_len(&t->strs, t->wname[k]), 0);
        char wn[512];
        size_t wl = w.n - mark;
        int fits = wl < sizeof wn;
        if (fits)
            memcpy(wn, w.p + mark, wl);
        w.n = mark;
        for (uint64_t i = t->wfirst[k]; i < t->wfirst[k + 1]; i++) {
            if (t->aflags[i] & LP_ACT_GAP)
                continue;
            wput(&w, "A ", 2);
            if (fits)
                wput(&w, wn, wl);
            else
                wstr(&w, t, t->wname[k], 0);
            wc(&w, ' ');
            wi64(&w, t->astart[i]);
            wc(&w, ' ');
            wi64(&w, t->aend[i]);
            wc(&w, ' ');
            wstr(&w, t, t->type_name[t->atype[i]], 1);
            if (t->aop[i] != LP_STR_NONE) {
                wc(&w, ' ');
                wstr(&w, t, t->aop[i], 1);
            } else if (t->aattr[i]) {
                wput(&w, " -", 2);
            }
            wattrs(&w, t, t->aattr[i]);
            wc(&w, '\n');
        }
    }
    /* messages: whole ones as M; those that came as S/R halves as halves again (one S
     * per (sender, receiver, id), then every R), so their form survives a round trip */
    uint64_t nhalf = 0;
    for (uint64_t m = 0; m < t->nmsgs; m++)
        nhalf += (t->mflags[m] & LP_MSG_HALVES) && t->mid[m] != LP_MSGID_NONE;
    lp_hmap32 sent; /* (sender, receiver, id) -> the message whose S was written */
    if (lp_hmap32_init(&sent, nhalf, NULL)) {
        lp_free(w.p);
        lp_free(w.cache);
        lp_free(w.cbuf);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        int half = (t->mflags[m] & LP_MSG_HALVES) && t->mid[m] != LP_MSGID_NONE;
        if (half) {
            halfkey k = {t, m};
            int added; /* room for every half was reserved: this cannot fail */
            lp_hmap32_find_or_add(&sent, half_hash(t, m), same_half, &k, (uint32_t)m, &added);
            if (added) {
                wput(&w, "S ", 2);
                wstr(&w, t, t->wname[t->msrc[m]], 0);
                wc(&w, ' ');
                wi64(&w, t->msend[m]);
                wc(&w, ' ');
                wstr(&w, t, t->wname[t->mdst[m]], 0);
                wc(&w, ' ');
                wmsgid(&w, t, t->mid[m]);
                wattrs(&w, t, t->mattr[m]);
                wc(&w, '\n');
            }
            wput(&w, "R ", 2);
            wstr(&w, t, t->wname[t->mdst[m]], 0);
            wc(&w, ' ');
            wi64(&w, t->mrecv[m]);
            wc(&w, ' ');
            wstr(&w, t, t->wname[t->msrc[m]], 0);
            wc(&w, ' ');
            wmsgid(&w, t, t->mid[m]);
            wc(&w, '\n');
            continue;
        }
        wput(&w, "M ", 2);
        wstr(&w, t, t->wname[t->msrc[m]], 0);
        wc(&w, ' ');
        wi64(&w, t->msend[m]);
        wc(&w, ' ');
        wstr(&w, t, t->wname[t->mdst[m]], 0);
        wc(&w, ' ');
        wi64(&w, t->mrecv[m]);
        if (t->mid[m] != LP_MSGID_NONE) {
            wput(&w, " id=", 4);
            wmsgid(&w, t, t->mid[m]);
        }
        wattrs(&w, t, t->mattr[m]);
        wc(&w, '\n');
    }
    lp_hmap32_release(&sent);
    wflush(&w);
    lp_free(w.p);
    lp_free(w.cache);
    lp_free(w.cbuf);
    if (w.failed || fflush(out) != 0 || ferror(out))
        return lp_error_set(err, LP_ERR_IO, "write failed");
    return LP_OK;
}
