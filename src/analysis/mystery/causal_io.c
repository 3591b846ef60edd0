/* causal_io.c: the causal-model file (docs/formats/mystery-model.md): JSON, one segment
 * per line with its three bit rows in hexadecimal (the state refinement needs), then
 * the derived relationships for readers (direct happens-before edges, exclusive pairs,
 * pipelines), which a reader ignores: they are recomputed from the bits.
 * Hex rows: digit k (0-based, left to right) holds bits 4k..4k+3, bit 4k in its lowest
 * position; the row has ceil(segments / 4) digits.
 */
#include "longpole/analysis/mystery/causal.h"
#include "longpole/base/alloc.h"
#include "longpole/codec/io.h"
#include "longpole/codec/json.h"
#include "base/util.h"

#include <errno.h>
#include <string.h>

#define MODEL_FORMAT "longpole-causal-model"

static void jstr(FILE *f, const char *s)
{
    size_t n = strlen(s);
    int valid = lp_utf8_valid(s, n);
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned c = *p;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", (int)c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else if (c >= 0x80 && !valid)
            fputs("\xEF\xBF\xBD", f);
        else
            fputc((int)c, f);
    }
    fputc('"', f);
}

static void hexrow(FILE *f, const uint64_t *row, uint32_t nbits)
{
    static const char hx[] = "0123456789abcdef";
    fputc('"', f);
    for (uint32_t k = 0; k * 4 < nbits; k++) {
        unsigned v = (unsigned)((row[(k * 4) >> 6] >> ((k * 4) & 63)) & 0xF);
        /* bits past the last segment are written as 0 */
        uint32_t left = nbits - k * 4;
        if (left < 4)
            v &= (1u << left) - 1;
        fputc(hx[v], f);
    }
    fputc('"', f);
}

lp_status lp_causal_write(const lp_causal *m, FILE *f, lp_error *err)
{
    uint32_t W = m->words;
    fprintf(f, "{\n  \"format\": \"" MODEL_FORMAT "\",\n  \"version\": 1,\n  \"requests\": %llu,\n  \"filter\": ",
            (unsigned long long)m->nreq);
    if (m->filter)
        jstr(f, m->filter);
    else
        fputs("null", f);
    fputs(",\n  \"segments\": [", f);
    for (uint32_t s = 0; s < m->nseg; s++) {
        fprintf(f, "%s\n    {\"id\": %u, \"task\": ", s ? "," : "", s);
        jstr(f, lp_strtab_get(&m->names, m->seg_task[s]));
        fputs(", \"start\": ", f);
        jstr(f, lp_strtab_get(&m->names, m->seg_from[s]));
        fputs(", \"end\": ", f);
        jstr(f, lp_strtab_get(&m->names, m->seg_to[s]));
        fprintf(f, ", \"requests\": %llu, \"network\": %s, \"dropped\": %s, \"hb\": ",
                (unsigned long long)m->seg_count[s], m->seg_cross[s] ? "true" : "false",
                m->seg_dropped[s] ? "true" : "false");
        hexrow(f, m->hb + (size_t)s * W, m->nseg);
        fputs(", \"mx\": ", f);
        hexrow(f, m->mx + (size_t)s * W, m->nseg);
        fputs(", \"seen\": ", f);
        hexrow(f, m->seen + (size_t)s * W, m->nseg);
        fputc('}', f);
    }
    fputs("\n  ],\n  \"rejected_pipelines\": [", f);
    for (uint32_t i = 0; i < m->npipe_rej; i++) {
        fputs(i ? ", [" : "[", f);
        jstr(f, lp_strtab_get(&m->names, m->pipe_rej[2 * i]));
        fputs(", ", f);
        jstr(f, lp_strtab_get(&m->names, m->pipe_rej[2 * i + 1]));
        fputc(']', f);
    }
    fputs("],\n", f);
    /* derived */
    uint64_t hb, hbd, mx, un;
    lp_causal_counts(m, &hb, &hbd, &mx, &un);
    fprintf(f,
            "  \"counts\": {\"segments\": %u, \"happens_before\": %llu, \"happens_before_direct\": %llu, "
            "\"mutual_exclusion\": %llu, \"pipelines\": %u, \"unobserved_pairs\": %llu},\n",
            m->nseg, (unsigned long long)hb, (unsigned long long)hbd, (unsigned long long)mx, m->npipes,
            (unsigned long long)un);
    uint64_t *d = NULL;
    lp_status st = lp_causal_direct(m, &d, err);
    if (st)
        return st;
    fputs("  \"happens_before\": [", f);
    int first = 1, col = 0;
    for (uint32_t a = 0; a < m->nseg; a++)
        for (uint32_t b = 0; b < m->nseg; b++)
            if (lp_causal_bit(d, W, a, b)) {
                fprintf(f, "%s%s[%u, %u]", first ? "" : ",", col % 8 == 0 ? "\n    " : " ", a, b);
                first = 0;
                col++;
            }
    lp_free(d);
    fputs(first ? "],\n" : "\n  ],\n", f);
    fputs("  \"mutual_exclusion\": [", f);
    first = 1, col = 0;
    for (uint32_t a = 0; a < m->nseg; a++)
        for (uint32_t b = a + 1; b < m->nseg; b++)
            if (lp_causal_rel(m, a, b) == LP_REL_EXCLUSIVE) {
                fprintf(f, "%s%s[%u, %u]", first ? "" : ",", col % 8 == 0 ? "\n    " : " ", a, b);
                first = 0;
                col++;
            }
    fputs(first ? "],\n" : "\n  ],\n", f);
    fputs("  \"pipelines\": [", f);
    for (uint32_t p = 0; p < m->npipes; p++) {
        const lp_causal_pipe *pp = &m->pipes[p];
        fputs(p ? ",\n    {\"from\": " : "\n    {\"from\": ", f);
        jstr(f, lp_strtab_get(&m->names, pp->t1));
        fputs(", \"to\": ", f);
        jstr(f, lp_strtab_get(&m->names, pp->t2));
        fputs(", \"pairs\": [", f);
        for (uint32_t i = 0; i < pp->npairs; i++)
            fprintf(f, "%s[%u, %u]", i ? ", " : "", pp->a[i], pp->b[i]);
        fputs("]}", f);
    }
    fputs(m->npipes ? "\n  ]\n}\n" : "]\n}\n", f);
    if (ferror(f))
        return lp_error_set(err, LP_ERR_IO, "writing the model: %s", strerror(errno));
    return LP_OK;
}

lp_status lp_causal_save(const lp_causal *m, const char *path, lp_error *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f)
        return lp_error_set(err, LP_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    lp_status st = lp_causal_write(m, f, err);
    if (f != stdout) {
        if (fclose(f) && st == LP_OK)
            st = lp_error_set(err, LP_ERR_IO, "writing '%s': %s", path, strerror(errno));
    } else {
        fflush(f);
    }
    return st;
}

/* ---- reading ---------------------------------------------------------------------------- */

typedef struct segin {
    char *task, *from, *to;
    uint64_t count;
    int cross, dropped;
    const char *hex[3];
    size_t hexn[3];
} segin;

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static char *dupn(const char *s, size_t n) { return lp_strndup(s, n); }

/* The state of reading one model file (lp_causal_load). */
typedef struct mload {
    lp_causal *m;
    const char *path;
    lp_error *err;
    lp_json_pull j;
    char sb[4096];           /* decoded strings */
    segin *segs;             /* the segments as read, applied once all is read */
    size_t nsegs, capsegs;
    int version, have_format;
} mload;

/* A syntax or content error at the reader's place. */
static lp_status jfail(mload *L, const char *msg)
{
    return lp_error_set(L->err, LP_ERR_FORMAT, "%s: byte %zu: %s", L->path, (size_t)(L->j.p - L->j.start) + 1,
                        msg ? msg : "syntax error");
}

#define JFAIL(msg) return jfail(L, (msg))
#define NOMEM() return lp_error_set(L->err, LP_ERR_NOMEM, "out of memory")

/* The whole file in memory. */
static lp_status read_all(const char *path, char **bufp, size_t *lenp, lp_error *err)
{
    lp_input *in;
    lp_status st;
    if ((st = lp_input_open(&in, path, err)) != LP_OK)
        return st;
    size_t cap = 1 << 16, len = 0;
    char *buf = lp_malloc(cap);
    for (;;) {
        if (!buf) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        size_t got;
        if ((st = lp_input_read(in, buf + len, cap - len, &got, err)) != LP_OK)
            break;
        len += got;
        if (!got)
            break;
        if (len == cap) {
            char *nb = lp_realloc(buf, cap * 2);
            if (!nb)
                lp_free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    lp_input_close(in);
    *bufp = buf;
    *lenp = len;
    return st;
}

/* One member of a segment object into s (*id: its "id"). */
static lp_status segment_member(mload *L, segin *s, int64_t *id)
{
    lp_json_pull *j = &L->j;
    char *sb = L->sb;
    const char *k2;
    size_t k2n;
    if (lp_json_pull_key(j, &k2, &k2n, sb, sizeof L->sb))
        JFAIL(j->why);
    char **name = NULL;
    int hx = -1;
    if (k2n == 4 && memcmp(k2, "task", 4) == 0)
        name = &s->task;
    else if (k2n == 5 && memcmp(k2, "start", 5) == 0)
        name = &s->from;
    else if (k2n == 3 && memcmp(k2, "end", 3) == 0)
        name = &s->to;
    else if (k2n == 2 && memcmp(k2, "hb", 2) == 0)
        hx = 0;
    else if (k2n == 2 && memcmp(k2, "mx", 2) == 0)
        hx = 1;
    else if (k2n == 4 && memcmp(k2, "seen", 4) == 0)
        hx = 2;
    if (name) {
        const char *v;
        size_t vn;
        if (lp_json_pull_string(j, &v, &vn, sb, sizeof L->sb))
            JFAIL(j->why);
        lp_free(*name);
        *name = dupn(v, vn);
        if (!*name)
            NOMEM();
    } else if (hx >= 0) {
        /* hex rows have no escapes: they point into the buffer */
        if (lp_json_pull_string(j, &s->hex[hx], &s->hexn[hx], sb, 0))
            JFAIL("bad bit row");
    } else if (k2n == 2 && memcmp(k2, "id", 2) == 0) {
        if (lp_json_pull_i64(j, id))
            JFAIL(j->why);
    } else if (k2n == 8 && memcmp(k2, "requests", 8) == 0) {
        int64_t v;
        if (lp_json_pull_i64(j, &v) || v < 0)
            JFAIL(j->why ? j->why : "bad count");
        s->count = (uint64_t)v;
    } else if ((k2n == 7 && memcmp(k2, "network", 7) == 0) || (k2n == 7 && memcmp(k2, "dropped", 7) == 0)) {
        const char *v;
        size_t vn;
        int kind;
        if (lp_json_pull_scalar(j, &v, &vn, sb, sizeof L->sb, &kind))
            JFAIL(j->why);
        if (k2[0] == 'n')
            s->cross = kind == 't';
        else
            s->dropped = kind == 't';
    } else if (lp_json_pull_skip(j)) {
        JFAIL(j->why);
    }
    return LP_OK;
}

/* "segments": an array of segment objects, ids 0, 1, 2, ... in order. */
static lp_status read_segments(mload *L)
{
    lp_json_pull *j = &L->j;
    lp_status st;
    int more = lp_json_pull_arr(j);
    if (more < 0)
        JFAIL(j->why);
    while (more) {
        if (L->nsegs == L->capsegs) {
            void *p = L->segs;
            size_t c = L->capsegs;
            if (lp_grow(&p, &c, L->nsegs + 1, sizeof *L->segs))
                NOMEM();
            L->segs = p;
            L->capsegs = c;
        }
        segin *s = &L->segs[L->nsegs++];
        memset(s, 0, sizeof *s);
        int64_t id = -1;
        int h2 = lp_json_pull_obj(j);
        if (h2 < 0)
            JFAIL(j->why);
        while (h2) {
            if ((st = segment_member(L, s, &id)))
                return st;
            h2 = lp_json_pull_next(j, '}');
            if (h2 < 0)
                JFAIL(j->why);
        }
        if (id != (int64_t)(L->nsegs - 1))
            JFAIL("segment ids must be 0, 1, 2, ... in order");
        if (!s->task || !s->from || !s->to || !s->hex[0] || !s->hex[1] || !s->hex[2])
            JFAIL("a segment lacks task, start, end, hb, mx or seen");
        more = lp_json_pull_next(j, ']');
        if (more < 0)
            JFAIL(j->why);
    }
    return LP_OK;
}

/* "rejected_pipelines": an array of [task, task] pairs. */
static lp_status read_pipelines(mload *L)
{
    lp_json_pull *j = &L->j;
    lp_causal *m = L->m;
    int more = lp_json_pull_arr(j);
    if (more < 0)
        JFAIL(j->why);
    while (more) {
        lp_str t[2];
        if (lp_json_pull_expect(j, '['))
            JFAIL(j->why);
        for (int x = 0; x < 2; x++) {
            const char *v;
            size_t vn;
            if ((x && lp_json_pull_expect(j, ',')) || lp_json_pull_string(j, &v, &vn, L->sb, sizeof L->sb))
                JFAIL(j->why);
            if (lp_strtab_intern(&m->names, v, vn, &t[x]))
                NOMEM();
        }
        if (lp_json_pull_expect(j, ']'))
            JFAIL(j->why);
        lp_str *pr = lp_reallocarray(m->pipe_rej, 2 * (m->npipe_rej + 1), sizeof *pr);
        if (!pr)
            NOMEM();
        m->pipe_rej = pr;
        pr[2 * m->npipe_rej] = t[0];
        pr[2 * m->npipe_rej + 1] = t[1];
        m->npipe_rej++;
        more = lp_json_pull_next(j, ']');
        if (more < 0)
            JFAIL(j->why);
    }
    return LP_OK;
}

/* One member of the top-level object (its key k read). */
static lp_status model_member(mload *L, const char *k, size_t kn)
{
    lp_json_pull *j = &L->j;
    lp_causal *m = L->m;
    char *sb = L->sb;
    lp_status st;
    if (kn == 6 && memcmp(k, "format", 6) == 0) {
        const char *v;
        size_t vn;
        if (lp_json_pull_string(j, &v, &vn, sb, sizeof L->sb))
            JFAIL(j->why);
        if (vn != strlen(MODEL_FORMAT) || memcmp(v, MODEL_FORMAT, vn) != 0)
            JFAIL("not a longpole causal model (format is not \"" MODEL_FORMAT "\")");
        L->have_format = 1;
    } else if (kn == 7 && memcmp(k, "version", 7) == 0) {
        int64_t v;
        if (lp_json_pull_i64(j, &v))
            JFAIL(j->why);
        if (v != 1)
            return lp_error_set(L->err, LP_ERR_UNSUPPORTED, "%s: model version %lld is not supported (1 is)", L->path,
                                (long long)v);
        L->version = 1;
    } else if (kn == 8 && memcmp(k, "requests", 8) == 0) {
        int64_t v;
        if (lp_json_pull_i64(j, &v) || v < 0)
            JFAIL(j->why ? j->why : "bad request count");
        m->nreq = (uint64_t)v;
    } else if (kn == 6 && memcmp(k, "filter", 6) == 0) {
        if (lp_json_pull_peek(j) == 'n') {
            if (lp_json_pull_skip(j))
                JFAIL(j->why);
        } else {
            const char *v;
            size_t vn;
            if (lp_json_pull_string(j, &v, &vn, sb, sizeof L->sb))
                JFAIL(j->why);
            char *re = dupn(v, vn);
            if (!re)
                NOMEM();
            st = lp_causal_set_filter(m, re, L->err);
            lp_free(re);
            if (st) {
                lp_error_push(L->err, "%s", L->path);
                return st;
            }
        }
    } else if (kn == 8 && memcmp(k, "segments", 8) == 0) {
        return read_segments(L);
    } else if (kn == 18 && memcmp(k, "rejected_pipelines", 18) == 0) {
        return read_pipelines(L);
    } else if (lp_json_pull_skip(j)) {
        JFAIL(j->why);
    }
    return LP_OK;
}

/* The segments read into the model, with their bit rows (hex digits, 4 segments each). */
static lp_status apply_segments(mload *L)
{
    lp_causal *m = L->m;
    const segin *segs = L->segs;
    size_t nsegs = L->nsegs;
    lp_status st;
    for (size_t i = 0; i < nsegs; i++) {
        uint32_t id;
        if ((st = lp_causal_segment(m, segs[i].task, segs[i].from, segs[i].to, &id, L->err)) != LP_OK)
            return st;
        if (id != i)
            JFAIL("two segments have the same task, start and end");
        m->seg_count[id] = segs[i].count;
        m->seg_cross[id] = (uint8_t)segs[i].cross;
        if (!m->filter)
            m->seg_dropped[id] = (uint8_t)segs[i].dropped;
    }
    uint32_t S = m->nseg, W = m->words;
    size_t want = (S + 3) / 4;
    for (size_t i = 0; i < nsegs; i++) {
        uint64_t *rows[3] = {m->hb + i * W, m->mx + i * W, m->seen + i * W};
        for (int x = 0; x < 3; x++) {
            if (segs[i].hexn[x] != want)
                return lp_error_set(L->err, LP_ERR_FORMAT, "%s: segment %zu: bit row has %zu digits, expected %zu",
                                    L->path, i, segs[i].hexn[x], want);
            for (size_t k = 0; k < want; k++) {
                int v = hexval(segs[i].hex[x][k]);
                if (v < 0)
                    return lp_error_set(L->err, LP_ERR_FORMAT, "%s: segment %zu: bad hex digit in a bit row", L->path,
                                        i);
                for (int bit = 0; bit < 4; bit++) {
                    uint32_t b = (uint32_t)(k * 4 + (size_t)bit);
                    if (b >= S)
                        break;
                    uint64_t mask = 1ULL << (b & 63);
                    if ((v >> bit) & 1)
                        rows[x][b >> 6] |= mask;
                    else
                        rows[x][b >> 6] &= ~mask;
                }
            }
        }
    }
    return LP_OK;
}

/* The model file: one JSON object (docs/formats/mystery-model.md), read whole, its
 * members checked as read, then applied to the model. */
static lp_status read_model(mload *L)
{
    lp_json_pull *j = &L->j;
    lp_status st;
    int has = lp_json_pull_obj(j);
    if (has < 0)
        JFAIL(j->why);
    while (has) {
        const char *k;
        size_t kn;
        if (lp_json_pull_key(j, &k, &kn, L->sb, sizeof L->sb))
            JFAIL(j->why);
        if ((st = model_member(L, k, kn)))
            return st;
        has = lp_json_pull_next(j, '}');
        if (has < 0)
            JFAIL(j->why);
    }
    if (!lp_json_pull_at_end(j))
        JFAIL("text after the model");
    if (!L->have_format || !L->version)
        JFAIL("missing \"format\" or \"version\"");
    if ((st = apply_segments(L)))
        return st;
    return lp_causal_finish(L->m, NULL, NULL, L->err);
}

#undef JFAIL
#undef NOMEM

lp_status lp_causal_load(lp_causal *m, const char *path, lp_error *err)
{
    lp_status st = lp_causal_init(m, err);
    if (st)
        return st;
    char *buf = NULL;
    size_t len = 0;
    if ((st = read_all(path, &buf, &len, err)) != LP_OK) {
        lp_free(buf);
        lp_causal_release(m);
        return st;
    }
    mload ld;
    memset(&ld, 0, sizeof ld);
    mload *L = &ld;
    L->m = m;
    L->path = path;
    L->err = err;
    lp_json_pull_init(&L->j, buf, len);
    st = read_model(L);
    for (size_t i = 0; i < L->nsegs; i++) {
        lp_free(L->segs[i].task);
        lp_free(L->segs[i].from);
        lp_free(L->segs[i].to);
    }
    lp_free(L->segs);
    lp_free(buf);
    if (st)
        lp_causal_release(m);
    return st;
}
