/* stream_text.c: .lpt text records for the streaming engine (stream.h): lines cut from
 * each connection's bytes as they arrive (a partial last line waits for the next read),
 * parsed with the native format's rules (MODEL.md, docs/formats/lpt.md: W/A/M/S/R
 * records, `#` comments, the `longpole-trace 1` header, %XX escapes in tokens) and
 * applied to the engine; and the writer of replay files in stream order.
 *
 * The reader of files (src/formats/lpt_text.c) feeds a builder a whole input at once; a
 * stream needs records one at a time, from many connections, with lines bounded in
 * length (max_line: a longer line is reported and skipped up to its newline, so a
 * hostile sender cannot make the engine buffer without bound). Bad lines are reported
 * with the connection's name and line number and skipped. Attributes (key=value) are
 * checked and not kept: no analysis of a window uses them.
 */
#include "stream_int.h"
#include "base/util.h"
#include "formats/lpt_tok.h"

#include <string.h>
#include <stdlib.h>

#define MAXTOK LP_LPT_MAXTOK

typedef lp_lpt_tok tok; /* the file reader's tokens (formats/lpt_tok.h) */

/* A printable excerpt of bytes (at most 40; control bytes as '?', non-ASCII as \xNN). */
static const char *excerpt(char ex[200], const char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = n < 40 ? n : 40, o = 0;
    for (size_t i = 0; i < k; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 0x20 && c < 0x7f) {
            ex[o++] = (char)c;
        } else if (c < 0x80) {
            ex[o++] = '?';
        } else {
            ex[o++] = '\\';
            ex[o++] = 'x';
            ex[o++] = hex[c >> 4];
            ex[o++] = hex[c & 15];
        }
    }
    if (n > k) {
        memcpy(ex + o, "...", 3);
        o += 3;
    }
    ex[o] = '\0';
    return ex;
}

#define BAD(s, c, rule, ...)                                                                            \
    ((s)->st.malformed++, (c)->bad++,                                                                   \
     lp_diags_report((s)->diags, LP_SEV_ERROR, (rule), (c)->name, (c)->line, __VA_ARGS__))

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

/* A name token, %XX escapes decoded into buf (at least n bytes) when it has any. */
static tok decode(tok t, char *buf)
{
    if (!memchr(t.p, '%', t.n))
        return t;
    size_t o = 0;
    for (size_t i = 0; i < t.n;) {
        int h, l;
        if (t.p[i] == '%' && t.n - i >= 3 && (h = hexval(t.p[i + 1])) >= 0 && (l = hexval(t.p[i + 2])) >= 0) {
            buf[o++] = (char)(h * 16 + l);
            i += 3;
        } else {
            buf[o++] = t.p[i++];
        }
    }
    return (tok){buf, o, NULL};
}

static int valid_name(const tok *t)
{
    for (size_t i = 0; i < t->n; i++)
        if ((unsigned char)t->p[i] >= 0x80)
            return lp_utf8_valid(t->p, t->n);
    return 1;
}

/* Parse a time token (formats/lpt_tok.h). */
static inline int parse_time(const tok *t, int64_t *out) { return lp_lpt_parse_time(t->p, t->n, out); }

typedef struct pctx {
    lp_stream *s;
    sconn *c;
    uint32_t ci;
    char *scratch;          /* decoding buffer of a line's length */
    int pct;                /* the line has a '%': tokens may need decoding */
} pctx;

/* Resolve a worker, type or operator token: 1 ok, 0 bad (reported), -1 resource error. */
static int name(pctx *x, int kind, tok t, const char *what, size_t field, uint32_t *id, lp_error *err)
{
    char ex[200];
    /* seen before (the caches hold only valid, decoded names: a token with escapes
     * takes the long way) */
    if (!x->pct && lp_stream_cached(x->s, kind, t.p, t.n, id))
        return 1;
    t = decode(t, x->scratch);
    if (!t.n || !valid_name(&t)) {
        BAD(x->s, x->c, t.n ? LP_RULE_ENCODING : LP_RULE_FIELD, "field %zu (%s): %s: '%s'", field, what,
            t.n ? "not valid UTF-8" : "empty name", excerpt(ex, t.p, t.n));
        return 0;
    }
    lp_status st;
    if (kind == 1) {
        uint16_t ty;
        st = lp_stream_type(x->s, t.p, t.n, &ty, err);
        *id = ty;
    } else {
        st = kind == 0 ? lp_stream_worker(x->s, t.p, t.n, id, err) : lp_stream_op(x->s, t.p, t.n, id, err);
    }
    return st ? -1 : 1;
}

static int time_field(pctx *x, const tok *tk, size_t i, const char *what, int64_t *out)
{
    if (parse_time(&tk[i], out))
        return 1;
    char ex[200];
    BAD(x->s, x->c, LP_RULE_FIELD, "field %zu (%s): not a 64-bit integer number of nanoseconds: '%s'", i + 1, what,
        excerpt(ex, tk[i].p, tk[i].n));
    return 0;
}

/* key=value tokens from `from` on; bytes= must be a non-negative integer on messages. */
static int attrs(pctx *x, const tok *tk, size_t from, size_t ntok, int msg)
{
    char ex[200];
    for (size_t i = from; i < ntok; i++) {
        const char *eq = memchr(tk[i].p, '=', tk[i].n);
        if (!eq || eq == tk[i].p) {
            BAD(x->s, x->c, LP_RULE_FIELD, "field %zu: expected key=value, got '%s'", i + 1,
                excerpt(ex, tk[i].p, tk[i].n));
            return 0;
        }
        if (msg && eq - tk[i].p == 5 && memcmp(tk[i].p, "bytes", 5) == 0) {
            tok v = {eq + 1, tk[i].n - 6, NULL};
            int64_t nb;
            if (!parse_time(&v, &nb) || nb < 0) {
                BAD(x->s, x->c, LP_RULE_FIELD, "field %zu (bytes): not a non-negative integer: '%s'", i + 1,
                    excerpt(ex, v.p, v.n));
                return 0;
            }
        }
    }
    return 1;
}

static int need(pctx *x, size_t ntok, size_t min, const char *rec, const char *usage)
{
    if (ntok >= min)
        return 1;
    BAD(x->s, x->c, LP_RULE_FIELD, "%s record needs at least %zu fields, has %zu (usage: %s)", rec, min - 1, ntok - 1,
        usage);
    return 0;
}

/* One line (without its newline). Returns non-zero only on resource errors. */
static lp_status line(pctx *x, const char *p, size_t n, lp_error *err)
{
    lp_stream *s = x->s;
    sconn *c = x->c;
    c->line++;
    s->st.lines++;
    if (n && p[n - 1] == '\r')
        n--;
    tok tk[MAXTOK];
    int pct;
    size_t ntok = lp_lpt_tokenize(p, n, 0, tk, &pct); /* the bytes as they came: not padded */
    x->pct = pct;
    char ex[200];
    if (!ntok || tk[0].p[0] == '#')
        return LP_OK;
    if (ntok > MAXTOK) {
        BAD(s, c, LP_RULE_SYNTAX, "more than %d fields", MAXTOK);
        return LP_OK;
    }
    if (tk[0].n != 1) {
        if (!c->seen_record && !c->seen_header && tk[0].n == 14 && memcmp(tk[0].p, "longpole-trace", 14) == 0) {
            c->seen_header = 1;
            if (ntok != 2 || tk[1].n != 1 || tk[1].p[0] != '1')
                BAD(s, c, LP_RULE_SYNTAX, "header: unsupported version '%s' (this reader knows version 1)",
                    excerpt(ex, ntok > 1 ? tk[1].p : "", ntok > 1 ? tk[1].n : 0));
            return LP_OK;
        }
        BAD(s, c, LP_RULE_SYNTAX, "unknown record '%s' (expected W, A, M, S or R)", excerpt(ex, tk[0].p, tk[0].n));
        return LP_OK;
    }
    c->seen_record = 1;
    uint32_t w, peer, op = LP_NONE32, ty;
    int64_t t0, t1;
    int rc;
    switch (tk[0].p[0]) {
    case 'A': {
        if (!need(x, ntok, 5, "A", "A <worker> <start> <end> <type> [<operator>|-] [key=value ...]"))
            return LP_OK;
        if (!time_field(x, tk, 2, "start", &t0) || !time_field(x, tk, 3, "end", &t1))
            return LP_OK;
        size_t attr_from = 5;
        if (ntok > 5 && !memchr(tk[5].p, '=', tk[5].n)) {
            attr_from = 6;
            if (!(tk[5].n == 1 && tk[5].p[0] == '-') && (rc = name(x, 2, tk[5], "operator", 6, &op, err)) <= 0)
                return rc < 0 ? LP_ERR_NOMEM : LP_OK;
        }
        if (!attrs(x, tk, attr_from, ntok, 0))
            return LP_OK;
        if ((rc = name(x, 1, tk[4], "type", 5, &ty, err)) <= 0 || (rc = name(x, 0, tk[1], "worker", 2, &w, err)) <= 0)
            return rc < 0 ? LP_ERR_NOMEM : LP_OK;
        c->records++;
        return lp_stream_activity(s, x->ci, c->line, w, t0, t1, (uint16_t)ty, op, err);
    }
    case 'M': {
        if (!need(x, ntok, 5, "M", "M <sender> <send> <receiver> <recv> [id=<id>] [bytes=<n>] [key=value ...]"))
            return LP_OK;
        if (!time_field(x, tk, 2, "send", &t0) || !time_field(x, tk, 4, "recv", &t1) || !attrs(x, tk, 5, ntok, 1))
            return LP_OK;
        if ((rc = name(x, 0, tk[1], "sender", 2, &w, err)) <= 0 ||
            (rc = name(x, 0, tk[3], "receiver", 4, &peer, err)) <= 0)
            return rc < 0 ? LP_ERR_NOMEM : LP_OK;
        c->records++;
        return lp_stream_message(s, x->ci, c->line, w, t0, peer, t1, err);
    }
    case 'S':
    case 'R': {
        int is_send = tk[0].p[0] == 'S';
        if (!need(x, ntok, 5, is_send ? "S" : "R",
                  is_send ? "S <worker> <time> <receiver> <message-id> [key=value ...]"
                          : "R <worker> <time> <sender> <message-id> [key=value ...]"))
            return LP_OK;
        if (!time_field(x, tk, 2, "time", &t0) || !attrs(x, tk, 5, ntok, 0))
            return LP_OK;
        if ((rc = name(x, 0, tk[1], "worker", 2, &w, err)) <= 0 ||
            (rc = name(x, 0, tk[3], is_send ? "receiver" : "sender", 4, &peer, err)) <= 0)
            return rc < 0 ? LP_ERR_NOMEM : LP_OK;
        tok id = decode(tk[4], x->scratch);
        uint64_t mid = lp_stream_msgid(id.p, id.n);
        c->records++;
        if (is_send)
            return lp_stream_send(s, x->ci, c->line, w, t0, peer, mid, err);
        return lp_stream_recv(s, x->ci, c->line, w, t0, peer, mid, err);
    }
    case 'W': {
        if (!need(x, ntok, 2, "W", "W <worker> [key=value ...]") || !attrs(x, tk, 2, ntok, 0))
            return LP_OK;
        if ((rc = name(x, 0, tk[1], "worker", 2, &w, err)) <= 0)
            return rc < 0 ? LP_ERR_NOMEM : LP_OK;
        c->records++;
        return lp_stream_declare(s, x->ci, w, err);
    }
    default:
        BAD(s, c, LP_RULE_SYNTAX, "unknown record '%s' (expected W, A, M, S or R)", excerpt(ex, tk[0].p, tk[0].n));
        return LP_OK;
    }
}

static lp_status too_long(lp_stream *s, sconn *c)
{
    c->line++;
    s->st.lines++;
    BAD(s, c, LP_RULE_SYNTAX, "line longer than %zu bytes; skipped", s->o.max_line);
    c->skipping = 1;
    c->npart = 0;
    return LP_OK;
}

lp_status lp_stream_feed_lpt(lp_stream *s, uint32_t ci, const char *buf, size_t n, lp_error *err)
{
    sconn *c = &s->conns[ci];
    lp_status st = LP_OK;
    pctx x = {s, c, ci, s->lscratch, 0};
    const char *p = buf, *end = buf + n;
    if (c->skipping || c->npart) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)((nl ? nl : end) - p);
        if (c->skipping) {
            if (nl)
                c->skipping = 0;
        } else if (c->npart + len > s->o.max_line) {
            too_long(s, c);
            if (nl)
                c->skipping = 0;
        } else {
            void *q = c->part;
            if (lp_grow(&q, &c->cappart, c->npart + len, 1))
                return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            c->part = q;
            memcpy(c->part + c->npart, p, len);
            c->npart += len;
            if (nl) {
                st = line(&x, c->part, c->npart, err);
                c->npart = 0;
            }
        }
        p = nl ? nl + 1 : end;
    }
    while (!st && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            size_t len = (size_t)(end - p);
            if (len > s->o.max_line) {
                too_long(s, c);
            } else {
                void *q = c->part;
                if (lp_grow(&q, &c->cappart, len, 1)) {
                    st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                    break;
                }
                c->part = q;
                memcpy(c->part, p, len);
                c->npart = len;
            }
            break;
        }
        size_t len = (size_t)(nl - p);
        if (len > s->o.max_line) {
            too_long(s, c);
            c->skipping = 0;
        } else {
            st = line(&x, p, len, err);
        }
        p = nl + 1;
    }
    return st;
}

lp_status lp_stream_close_lpt(lp_stream *s, uint32_t ci, lp_error *err)
{
    sconn *c = &s->conns[ci];
    lp_status st = LP_OK;
    if (c->npart) { /* a last line without its newline */
        s->st.truncated++;
        pctx x = {s, c, ci, s->lscratch, 0};
        uint64_t bad = c->bad;
        st = line(&x, c->part, c->npart, err);
        if (!st && c->bad != bad)
            lp_diags_report(s->diags, LP_SEV_WARNING, LP_RULE_SYNTAX, c->name, c->line,
                            "the connection ended inside this line (no newline)");
        c->npart = 0;
    } else if (c->skipping) {
        s->st.truncated++;
    }
    c->skipping = 0;
    return st;
}

/* ---- replay files ------------------------------------------------------------------------ */

typedef struct orec {
    int64_t t;               /* stream time */
    uint32_t w;              /* its worker */
    uint8_t kind;            /* 0 A, 1 M, 2 S, 3 R */
    uint64_t i;              /* activity or message index */
} orec;

static int cmp_orec(const void *pa, const void *pb)
{
    const orec *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->w != b->w)
        return a->w < b->w ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* A name with the writer's escapes (whitespace, '%', '=', control bytes, a leading '#'). */
static void put_name(FILE *f, const char *p)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; p[i]; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch <= 0x20 || ch == 0x7f || ch == '%' || ch == '=' || (i == 0 && ch == '#')) {
            fputc('%', f);
            fputc(hex[ch >> 4], f);
            fputc(hex[ch & 15], f);
        } else {
            fputc(ch, f);
        }
    }
}

lp_status lp_stream_write_lpt(const lp_trace *t, FILE *f, int halves, lp_error *err)
{
    uint64_t n = t->nacts - t->ngaps + t->nmsgs * (halves ? 2 : 1);
    orec *o = lp_malloc((n ? n : 1) * sizeof *o);
    if (!o)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    uint64_t k = 0;
    for (uint32_t w = 0; w < t->nworkers; w++)
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++)
            if (!(t->aflags[i] & LP_ACT_GAP))
                o[k++] = (orec){t->astart[i], w, 0, i};
    for (uint64_t m = 0; m < t->nmsgs; m++) {
        if (halves) {
            o[k++] = (orec){t->msend[m], t->msrc[m], 2, m};
            o[k++] = (orec){t->mrecv[m], t->mdst[m], 3, m};
        } else {
            o[k++] = (orec){t->msend[m], t->msrc[m], 1, m};
        }
    }
    qsort(o, k, sizeof *o, cmp_orec);
    fprintf(f, "longpole-trace 1\n");
    for (uint32_t w = 0; w < t->nworkers; w++) {
        fputs("W ", f);
        put_name(f, lp_trace_worker_name(t, w));
        fputc('\n', f);
    }
    for (uint64_t j = 0; j < k; j++) {
        const orec *r = &o[j];
        uint64_t i = r->i;
        switch (r->kind) {
        case 0:
            fputs("A ", f);
            put_name(f, lp_trace_worker_name(t, r->w));
            fprintf(f, " %lld %lld ", (long long)t->astart[i], (long long)t->aend[i]);
            put_name(f, lp_trace_type_name(t, t->atype[i]));
            if (t->aop[i] != LP_STR_NONE) {
                fputc(' ', f);
                put_name(f, lp_trace_str(t, t->aop[i]));
            }
            fputc('\n', f);
            break;
        case 1:
            fputs("M ", f);
            put_name(f, lp_trace_worker_name(t, t->msrc[i]));
            fprintf(f, " %lld ", (long long)t->msend[i]);
            put_name(f, lp_trace_worker_name(t, t->mdst[i]));
            fprintf(f, " %lld\n", (long long)t->mrecv[i]);
            break;
        default:
            fputs(r->kind == 2 ? "S " : "R ", f);
            put_name(f, lp_trace_worker_name(t, r->w));
            fprintf(f, " %lld ", (long long)(r->kind == 2 ? t->msend[i] : t->mrecv[i]));
            put_name(f, lp_trace_worker_name(t, r->kind == 2 ? t->mdst[i] : t->msrc[i]));
            /* the id: the message index, unique (a multicast send becomes one pair per receive) */
            fprintf(f, " m%llu\n", (unsigned long long)i);
            break;
        }
    }
    lp_free(o);
    if (ferror(f))
        return lp_error_set(err, LP_ERR_IO, "write error");
    return LP_OK;
}
