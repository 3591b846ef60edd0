/* json.c: the streaming JSON reader of json.h: records of a big array (or of JSON
 * lines) handed one at a time as small trees, over a decompressing lp_input.
 *
 * Why not a library. Debian 12 packages three JSON parsers in C made for the job:
 * jansson 2.14, json-c 0.16 and yajl 2.1. Measured on this machine (2-core Xeon) in
 * the streaming shape the importers need (elements of {"data":[...]} one at a time,
 * each walked as a tree; bench/spans/jsonlibs.c, run by bench/spans/run.sh) on a
 * 200 MB generated Jaeger file held in memory, one core, best of 3, MB/s (bench/
 * RESULTS.md has the last run; three runs on 2026-11-21 gave these ranges):
 *   jansson (json_loadb per element, JSON_DISABLE_EOF_CHECK)         65 -  70
 *   json-c  (json_tokener_parse_ex per element)                      113 - 128
 *   yajl    (callbacks over the stream, counting events: no tree)    504 - 554
 *   yajl    (callbacks, building each element's tree)                437 - 444
 *   this reader (element trees, through lp_input)                    877 - 967
 * jansson and json-c are below the 200 MB/s per core the importers need before any
 * importer work. yajl is fast enough, but only as callbacks: it gives no position
 * for a value (the byte offset of an error only, no line), so the importers could not
 * say where a bad span is; it cannot resume after a bad line (Spark's JSON lines);
 * and a tree over it still needs a hand-written state machine for the record
 * boundaries. Written here instead (~1,300 lines), it is twice as fast as yajl with
 * trees, gives the offset and line of every value, streams the shapes of trace files
 * directly, and is tested against RFC 8259, a naive twin parser and a fuzzer.
 *
 * Design. The input is read into one buffer (4 MiB, grown to hold the largest record,
 * with 64 zero bytes of padding after the data so scans need no bounds checks: a zero
 * byte stops every scan, then `p == end` tells the end of data from a real NUL). A
 * record is parsed in one go, by recursive descent, into nodes that point into the
 * buffer; if the data ends inside the record, the parse is abandoned, the buffer is
 * refilled (moving the partial record to the front, doubling the buffer when the
 * record fills more than half of it, so re-parsing stays amortised linear) and the
 * record is parsed again. Only once a record is complete are its strings decoded in
 * place (escapes only shrink) and NUL-terminated, so an abandoned parse leaves the
 * buffer intact. The tokens (whitespace, strings, numbers, literals) come from the one
 * tokenizer, json_lex.h, in its padded strict form; it is shared with the pull reader
 * (json_pull.c) and the head scanner (json_head.c). String scanning looks at 16 bytes at
 * a time (SSE2, or 8 with SWAR elsewhere) for a quote, a backslash, a control byte or a
 * non-ASCII byte; a plain string is taken without leaving the caller, anything else
 * (escapes, UTF-8, problems) goes through the tokenizer's full string lexer.
 *
 * Nested streaming (opts.nest_min): when an element of a streamed array does not end
 * within the buffered data, is an object, and a member array under a nest_stream key
 * starts there (nest_here: the members are skipped with the pull reader, the one
 * tokenizer), the abandoned parse is dropped and the element is streamed like a
 * top-level object: the array's state (key, index, where it opened) is pushed on a
 * small stack (LP_JSON_NEST_MAX) and popped at the element's '}' (nest_begin,
 * nest_end); BEGIN and END events carry the depth.
 *
 * Invariants: the committed state (pos, line, state machine) only moves when a whole
 * step (a record, a separator, a member key) succeeded; nodes and strings handed out
 * stay valid until the next lp_json_next(); memory is O(largest record).
 */
#include "longpole/codec/json.h"
#include "longpole/base/alloc.h"
#include "codec/json_lex.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_INIT ((size_t)4 << 20)
#define MAX_RECORD_DEFAULT ((size_t)2 << 30)

/* internal node flags kept in lp_json.reserved while parsing */
#define R_ESC 0x01u     /* the string value has escapes */
#define R_KESC 0x02u    /* the key has escapes */
#define R_FIX 0x04u     /* repair mode: the string value needs mending */
#define R_KFIX 0x08u    /* repair mode: the key needs mending */

enum { S_TOP, S_ARR_FIRST, S_ARR_NEXT, S_OBJ_FIRST, S_OBJ_NEXT, S_DONE };
enum { P_OK = 0, P_MORE, P_SYNTAX };

/* The streamed array around an element object that is streamed itself (nested
 * streaming), saved while that object is read. */
typedef struct nest {
    int arr_in_obj;
    char *akey;
    size_t akeycap;
    uint64_t index;               /* index of the element after the object */
    uint64_t cont_off, cont_line;
} nest;

struct lp_json_reader {
    lp_input *in;                 /* the byte source (not owned) */
    const char *const *keys;      /* stream keys (caller's list) */
    int lines;                    /* JSON lines mode */
    int repair;                   /* mend bad strings */
    size_t max_record;            /* largest record accepted */
    unsigned char *buf;           /* data, then PAD zero bytes */
    size_t cap;                   /* bytes of buf usable for data */
    size_t pos, len;              /* unconsumed data is buf[pos, len) */
    uint64_t base;                /* stream offset of buf[0] */
    uint64_t line;                /* line at buf[pos] */
    int eof;                      /* the input has no more bytes */
    int state;                    /* S_* */
    int arr_in_obj;               /* the streamed array is a member of a streamed object */
    int bom_checked;              /* a leading UTF-8 byte order mark was looked for */
    char *akey;                   /* key of the streamed array (NUL-terminated copy) */
    size_t akeycap;
    uint64_t index;               /* next element index in the streamed array */
    uint64_t cont_off, cont_line; /* where the streamed array or object opened */
    uint64_t nvalues;             /* top-level values seen */
    lp_json *nodes;               /* the current record's tree */
    size_t nnodes, capnodes;
    lp_error ierr;                /* error of the input (corrupt compression) */
    size_t nest_min;              /* nested streaming: smallest element streamed (0: off) */
    const char *const *nest_keys; /* arrays whose elements may be streamed ("": top level) */
    const char *const *nest_stream; /* arrays streamed inside a streamed element */
    nest nest[LP_JSON_NEST_MAX];  /* the arrays around the element objects being streamed */
    unsigned nnest;
};

/* Parse context of one step. */
typedef struct pctx {
    lp_json_reader *r;
    const unsigned char *p, *end; /* cursor and end of data */
    const unsigned char *start;   /* where the step began */
    uint64_t line;                /* line at p */
    int final;                    /* no data will follow end */
    int depth;
    int nomem;                    /* an allocation failed */
    const unsigned char *rec;     /* first byte of the step after blanks (lines mode resyncs from it) */
    uint64_t recline;
    /* the first error: structural (returned as P_SYNTAX) or within a record (bad) */
    int bad;
    lp_json_err code;             /* its reason */
    uint64_t eoff, eline;
    char msg[200];
    /* repair mode: problems mended (the first is described) */
    int repair;
    unsigned nfix;                /* strings mended in the current record */
    int strfix;                   /* the string being parsed needs mending */
    uint64_t foff, fline;
    char fmsg[200];
} pctx;

static const char *const type_names[] = {"null", "false", "true", "number", "string", "array", "object"};

const char *lp_json_type_name(lp_json_type t)
{
    return (unsigned)t <= LP_JSON_OBJECT ? type_names[t] : "?";
}

static uint64_t offset_of(const pctx *c, const unsigned char *p)
{
    return c->r->base + (uint64_t)(p - c->r->buf);
}

/* Describe the byte at p for messages: 'x', 0xNN, or "end of input". */
static const char *found(const pctx *c, const unsigned char *p, char buf[24])
{
    if (p >= c->end)
        return "end of input";
    if (*p >= 0x20 && *p < 0x7f)
        snprintf(buf, 24, "'%c'", *p);
    else
        snprintf(buf, 24, "byte 0x%02x", *p);
    return buf;
}

static void note(pctx *c, const unsigned char *p, lp_json_err code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void note(pctx *c, const unsigned char *p, lp_json_err code, const char *fmt, ...)
{
    if (c->bad)
        return;
    c->bad = 1;
    c->code = code;
    c->eoff = offset_of(c, p);
    c->eline = c->line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
}

/* A problem inside a string: in repair mode the string is mended (and the first such
 * problem described), otherwise the record is bad. */
static void fixable(pctx *c, const unsigned char *p, lp_json_err code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fixable(pctx *c, const unsigned char *p, lp_json_err code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (c->repair) {
        if (!c->strfix)
            c->nfix++;
        c->strfix = 1;
        if (c->nfix == 1 && !c->fmsg[0]) {
            c->foff = offset_of(c, p);
            c->fline = c->line;
            vsnprintf(c->fmsg, sizeof c->fmsg, fmt, ap);
        }
    } else if (!c->bad) {
        c->bad = 1;
        c->code = code;
        c->eoff = offset_of(c, p);
        c->eline = c->line;
        vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    }
    va_end(ap);
}

/* A structural error: recorded (replacing a record-level note) and returned. */
static int syntax(pctx *c, const unsigned char *p, lp_json_err code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int syntax(pctx *c, const unsigned char *p, lp_json_err code, const char *fmt, ...)
{
    c->bad = 1;
    c->code = code;
    c->eoff = offset_of(c, p);
    c->eline = c->line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    return P_SYNTAX;
}

static inline const unsigned char *skip_ws(pctx *c, const unsigned char *p)
{
    return jl_ws(p, c->end, &c->line, 1);
}

/* ---- strings ------------------------------------------------------------------------ */

/* The string at c->p (its opening quote) past its first byte that is not plain (q):
 * escapes, control bytes, non-ASCII, or the end of the data. */
static __attribute__((noinline)) int parse_string_rest(pctx *c, const unsigned char *q, const unsigned char **s,
                                                       uint32_t *n, int *esc)
{
    const unsigned char *s0 = c->p + 1;
    jl_str r;
    switch (jl_string(q, c->end, NULL, c->final, JL_STRICT, 1, &r)) {
    case JL_MORE: return P_MORE;
    case JL_BREAK: return syntax(c, r.at, LP_JSON_E_STRING, "line break inside a string (unterminated string?)");
    default: break;
    }
    c->strfix = 0;
    if (r.prob) {
        char fb[24];
        switch (r.prob) {
        case JL_P_UHEX: fixable(c, r.at, LP_JSON_E_STRING, "bad escape: \\u must be followed by four hex digits"); break;
        case JL_P_HIGH:
            fixable(c, r.at, LP_JSON_E_STRING, "bad escape: high surrogate \\u%04X without a low surrogate after it", r.val);
            break;
        case JL_P_LOW: fixable(c, r.at, LP_JSON_E_STRING, "bad escape: lone low surrogate \\u%04X", r.val); break;
        case JL_P_ESC:
            fixable(c, r.at, LP_JSON_E_STRING, "bad escape '\\' followed by %s", found(c, r.at + 1, fb));
            break;
        case JL_P_CTRL:
            fixable(c, r.at, LP_JSON_E_STRING, "control character 0x%02x inside a string (must be escaped)", r.val);
            break;
        default: fixable(c, r.at, LP_JSON_E_UTF8, "invalid UTF-8 byte 0x%02x in a string", r.val); break;
        }
    }
    if (r.q - s0 > (ptrdiff_t)UINT32_MAX)
        return syntax(c, s0, LP_JSON_E_SIZE, "string longer than 4 GiB");
    *s = s0;
    *n = (uint32_t)(r.q - s0);
    *esc = (r.esc ? 1 : 0) | (c->strfix ? 2 : 0);
    c->p = r.q + 1;
    return P_OK;
}

/* p at the opening quote. On success *s, *n are the raw bytes between the quotes,
 * *esc tells whether they hold escapes (1) and need mending (2), and c->p is past the
 * closing quote. The first problem inside the string is noted (record-level); a line
 * break is structural. */
static inline int parse_string(pctx *c, const unsigned char **s, uint32_t *n, int *esc)
{
    const unsigned char *s0 = c->p + 1, *q = jl_scan_plain(s0, c->end, NULL, 1);
    if (*q != '"' || q - s0 > (ptrdiff_t)UINT32_MAX) /* (the zero padding is not a quote) */
        return parse_string_rest(c, q, s, n, esc);
    *s = s0;
    *n = (uint32_t)(q - s0);
    *esc = 0;
    c->p = q + 1;
    return P_OK;
}

/* Decode the (checked) escaped string at s[0..n) in place; returns the new length. */
static uint32_t unescape(char *s, uint32_t n)
{
    unsigned char *r = (unsigned char *)s, *w = (unsigned char *)s, *end = r + n;
    while (r < end) {
        if (*r != '\\') {
            *w++ = *r++;
            continue;
        }
        size_t k;
        r += jl_escape(r, end, w, &k);
        w += k;
    }
    return (uint32_t)(w - (unsigned char *)s);
}

/* Mend a string with problems in place (repair mode): escapes decoded where valid,
 * a bad escape keeps its letter, a bad \u or lone surrogate and every byte that is not
 * part of valid UTF-8 become '?', raw control characters are kept. Never longer than
 * the input. */
static uint32_t mend(char *s, uint32_t n)
{
    unsigned char *r = (unsigned char *)s, *w = r, *end = r + n;
    while (r < end) {
        unsigned c = *r;
        if (c == '\\') {
            if (r + 1 >= end) {
                r++;
                continue;
            }
            unsigned x = r[1];
            if (x && strchr("\"\\/bfnrt", (int)x)) {
                size_t k;
                r += jl_escape(r, end, w, &k);
                w += k;
                continue;
            }
            if (x == 'u' && end - r >= 6 && jl_hex4(r + 2) >= 0) {
                /* the strict decoder on the escape (and its pair) when valid */
                int v = jl_hex4(r + 2);
                if (v >= 0xD800 && v <= 0xDBFF) {
                    int lo = end - r >= 12 && r[6] == '\\' && r[7] == 'u' ? jl_hex4(r + 8) : -1;
                    if (lo < 0xDC00 || lo > 0xDFFF) {
                        *w++ = '?';
                        r += 6;
                        continue;
                    }
                } else if (v >= 0xDC00 && v <= 0xDFFF) {
                    *w++ = '?';
                    r += 6;
                    continue;
                }
                unsigned char tmp[4];
                size_t k;
                r += jl_escape(r, end, tmp, &k);
                memcpy(w, tmp, k);
                w += k;
                continue;
            }
            *w++ = x >= 0x20 && x < 0x7f && x != 'u' ? (unsigned char)x : '?';
            r += 2;
            continue;
        }
        if (c < 0x80) {
            *w++ = (unsigned char)c;
            r++;
            continue;
        }
        int k = jl_utf8_seq(r, end);
        if (k <= 0) {
            *w++ = '?';
            r++;
            continue;
        }
        memmove(w, r, (size_t)k);
        w += k;
        r += k;
    }
    return (uint32_t)(w - (unsigned char *)s);
}

/* ---- values ------------------------------------------------------------------------- */

static int push_node(pctx *c, size_t *idx)
{
    lp_json_reader *r = c->r;
    if (r->nnodes == r->capnodes) {
        if (r->nnodes >= UINT32_MAX - 1) {
            c->nomem = 1;
            return -1;
        }
        void *p = r->nodes;
        if (lp_grow(&p, &r->capnodes, r->nnodes + 1, sizeof(lp_json))) {
            c->nomem = 1;
            return -1;
        }
        r->nodes = p;
    }
    *idx = r->nnodes++;
    return 0;
}

static inline int is_delim(unsigned ch)
{
    return ch == ',' || ch == ']' || ch == '}' || ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t' || ch == 0;
}

static int parse_number(pctx *c, lp_json *nd)
{
    const unsigned char *end = c->end, *s = c->p, *bad;
    int isint;
    const unsigned char *p = jl_number(s, end, 1, &bad, &isint);
    if (p >= end && !c->final)
        return P_MORE; /* the number may go on in the next block */
    if (bad || !is_delim(*p) || (p < end && *p == 0)) {
        /* skip the rest of the malformed token */
        const unsigned char *q = p;
        while (q < end && !is_delim(*q))
            q++;
        if (q >= end && !c->final)
            return P_MORE;
        char fb[24];
        note(c, s, LP_JSON_E_NUMBER, "malformed number (%s after '%.*s')", found(c, p, fb),
             (int)(p - s > 30 ? 30 : p - s), (const char *)s);
        p = q;
        isint = 0;
    }
    if (p - s > (ptrdiff_t)UINT32_MAX)
        return syntax(c, s, LP_JSON_E_SIZE, "number longer than 4 GiB");
    nd->type = LP_JSON_NUMBER;
    nd->flags = isint ? LP_JSON_F_INT : 0;
    nd->s = (const char *)s;
    nd->len = (uint32_t)(p - s);
    c->p = p;
    return P_OK;
}

static int parse_value(pctx *c, const unsigned char *key, uint32_t klen, int kesc);

static int parse_container(pctx *c, size_t idx, int isobj)
{
    lp_json_reader *r = c->r;
    const unsigned char *open = c->p;
    if (++c->depth > LP_JSON_READ_MAXDEPTH)
        return syntax(c, open, LP_JSON_E_DEPTH, "nesting deeper than %d arrays/objects", LP_JSON_READ_MAXDEPTH);
    c->p = skip_ws(c, c->p + 1);
    uint32_t count = 0;
    size_t last = 0;
    char fb[24];
    if (*c->p == (isobj ? '}' : ']')) {
        c->p++;
    } else {
        for (;;) {
            if (c->p >= c->end)
                return P_MORE;
            size_t cidx = r->nnodes;
            int rc;
            if (isobj) {
                if (*c->p != '"')
                    return syntax(c, c->p, LP_JSON_E_SYNTAX, "expected a member name (a string) in an object, found %s",
                                  found(c, c->p, fb));
                const unsigned char *k;
                uint32_t kn;
                int kesc;
                if ((rc = parse_string(c, &k, &kn, &kesc)))
                    return rc;
                c->p = skip_ws(c, c->p);
                if (*c->p != ':') {
                    if (c->p >= c->end)
                        return P_MORE;
                    return syntax(c, c->p, LP_JSON_E_SYNTAX, "expected ':' after a member name, found %s", found(c, c->p, fb));
                }
                c->p = skip_ws(c, c->p + 1);
                rc = parse_value(c, k, kn, kesc);
            } else {
                rc = parse_value(c, NULL, 0, 0);
            }
            if (rc)
                return rc;
            if (last)
                r->nodes[last].next = (uint32_t)(cidx - last);
            last = cidx;
            if (count == UINT32_MAX)
                return syntax(c, open, LP_JSON_E_SIZE, "more than 4 billion elements in one array/object");
            count++;
            c->p = skip_ws(c, c->p);
            unsigned ch = *c->p;
            if (ch == ',') {
                c->p = skip_ws(c, c->p + 1);
                if (*c->p == (isobj ? '}' : ']'))
                    return syntax(c, c->p, LP_JSON_E_SYNTAX, "trailing comma before '%c'", *c->p);
                continue;
            }
            if (ch == (isobj ? '}' : ']')) {
                c->p++;
                break;
            }
            if (c->p >= c->end)
                return P_MORE;
            return syntax(c, c->p, LP_JSON_E_SYNTAX, "expected ',' or '%c' after %s, found %s", isobj ? '}' : ']',
                          isobj ? "an object member" : "an array element", found(c, c->p, fb));
        }
    }
    c->depth--;
    r->nodes[idx].len = count;
    return P_OK;
}

static int literal(pctx *c, const char *word, size_t n)
{
    int m = jl_literal(c->p, c->end, word, n);
    if (m > 0) {
        c->p += n;
        return P_OK;
    }
    if (m < 0)
        return P_MORE; /* (at the end of input: reported as a cut) */
    char fb[24];
    return syntax(c, c->p, LP_JSON_E_SYNTAX, "expected a value, found %s", found(c, c->p, fb));
}

/* Parse one value at c->p (which is not whitespace); appends its nodes. */
static int parse_value(pctx *c, const unsigned char *key, uint32_t klen, int kesc)
{
    size_t idx;
    if (push_node(c, &idx))
        return P_SYNTAX;
    lp_json *nd = &c->r->nodes[idx];
    memset(nd, 0, sizeof *nd);
    nd->key = (const char *)key;
    nd->klen = klen;
    nd->reserved = (uint16_t)(((kesc & 1) ? R_KESC : 0) | ((kesc & 2) ? R_KFIX : 0));
    nd->off = offset_of(c, c->p);
    nd->line = c->line;
    unsigned ch = *c->p;
    int rc;
    switch (ch) {
    case '"': {
        const unsigned char *s;
        uint32_t n;
        int esc;
        if ((rc = parse_string(c, &s, &n, &esc)))
            return rc;
        nd = &c->r->nodes[idx];
        nd->type = LP_JSON_STRING;
        nd->s = (const char *)s;
        nd->len = n;
        if (esc & 1)
            nd->reserved |= R_ESC;
        if (esc & 2)
            nd->reserved |= R_FIX;
        return P_OK;
    }
    case '{':
        nd->type = LP_JSON_OBJECT;
        return parse_container(c, idx, 1);
    case '[':
        nd->type = LP_JSON_ARRAY;
        return parse_container(c, idx, 0);
    case 't':
        nd->type = LP_JSON_TRUE;
        return literal(c, "true", 4);
    case 'f':
        nd->type = LP_JSON_FALSE;
        return literal(c, "false", 5);
    case 'n':
        nd->type = LP_JSON_NULL;
        return literal(c, "null", 4);
    default:
        if (ch == '-' || (ch >= '0' && ch <= '9'))
            return parse_number(c, nd);
        if (c->p >= c->end)
            return P_MORE;
        char fb[24];
        return syntax(c, c->p, LP_JSON_E_SYNTAX, "expected a value, found %s", found(c, c->p, fb));
    }
}

/* Decode strings in place and NUL-terminate them, once the record is complete. */
static void finalize(lp_json_reader *r)
{
    for (size_t i = 0; i < r->nnodes; i++) {
        lp_json *n = &r->nodes[i];
        if (n->key) {
            char *k = (char *)(uintptr_t)n->key;
            if (n->reserved & R_KFIX)
                n->klen = mend(k, n->klen);
            else if (n->reserved & R_KESC)
                n->klen = unescape(k, n->klen);
            k[n->klen] = '\0';
        }
        if (n->type == LP_JSON_STRING) {
            char *s = (char *)(uintptr_t)n->s;
            if (n->reserved & R_FIX)
                n->len = mend(s, n->len);
            else if (n->reserved & R_ESC)
                n->len = unescape(s, n->len);
            s[n->len] = '\0';
        }
        n->reserved = 0;
    }
}

/* ---- buffer --------------------------------------------------------------------------- */

lp_status lp_json_reader_new(lp_json_reader **out, lp_input *in, const lp_json_opts *opts, lp_error *err)
{
    *out = NULL;
    lp_json_reader *r = lp_calloc(1, sizeof *r);
    if (!r)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    r->in = in;
    r->line = 1;
    r->max_record = MAX_RECORD_DEFAULT;
    if (opts) {
        r->keys = opts->stream_keys;
        r->lines = opts->lines;
        if (opts->max_record)
            r->max_record = opts->max_record;
        r->repair = opts->repair;
        r->nest_min = opts->lines || !opts->nest_keys || !opts->nest_stream ? 0 : opts->nest_min;
        r->nest_keys = opts->nest_keys;
        r->nest_stream = opts->nest_stream;
    }
    r->cap = opts && opts->bufsize ? opts->bufsize : BUF_INIT;
    r->buf = lp_malloc(r->cap + JL_PAD);
    if (!r->buf) {
        lp_free(r);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    memset(r->buf, 0, JL_PAD);
    *out = r;
    return LP_OK;
}

void lp_json_reader_free(lp_json_reader *r)
{
    if (!r)
        return;
    lp_free(r->buf);
    lp_free(r->nodes);
    lp_free(r->akey);
    for (unsigned i = 0; i < r->nnest; i++)
        lp_free(r->nest[i].akey);
    lp_free(r);
}

uint64_t lp_json_reader_offset(const lp_json_reader *r) { return r->base + r->pos; }
uint64_t lp_json_reader_line(const lp_json_reader *r) { return r->line; }

/* Make room and read more. Returns LP_OK (r->eof set at the end), LP_ERR_LIMIT when
 * the record would exceed max_record, LP_ERR_FORMAT for corrupt compressed input
 * (r->ierr set), or a resource error. */
static lp_status refill(lp_json_reader *r, lp_error *err)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->base += r->pos;
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->cap - r->len < r->len || r->cap == r->len) {
        if (r->len >= r->max_record)
            return LP_ERR_LIMIT;
        size_t ncap = r->cap * 2;
        unsigned char *nb = lp_realloc(r->buf, ncap + JL_PAD);
        if (!nb)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory (a JSON record of more than %zu MB)",
                                r->cap >> 20);
        r->buf = nb;
        r->cap = ncap;
    }
    while (r->len < r->cap && !r->eof) {
        size_t got = 0;
        lp_status st = lp_input_read(r->in, r->buf + r->len, r->cap - r->len, &got, &r->ierr);
        if (st == LP_ERR_FORMAT) {
            r->eof = 1;
            memset(r->buf + r->len, 0, JL_PAD);
            return LP_ERR_FORMAT;
        }
        if (st) {
            if (err)
                *err = r->ierr;
            return st;
        }
        if (!got)
            r->eof = 1;
        r->len += got;
    }
    memset(r->buf + r->len, 0, JL_PAD);
    return LP_OK;
}

/* ---- the state machine ----------------------------------------------------------------- */

static int key_in(const char *const *keys, const unsigned char *k, size_t n)
{
    if (!keys)
        return 0;
    for (size_t i = 0; keys[i]; i++)
        if (strlen(keys[i]) == n && memcmp(keys[i], k, n) == 0)
            return 1;
    return 0;
}

/* Is an array under this key streamed (in the top-level object, or in an element object
 * that is streamed itself)? */
static int is_stream_key(const lp_json_reader *r, const unsigned char *k, uint32_t n)
{
    return key_in(r->nnest ? r->nest_stream : r->keys, k, n);
}

static int set_akey(lp_json_reader *r, const unsigned char *k, uint32_t n, int esc)
{
    if ((size_t)n + 1 > r->akeycap) {
        char *p = lp_realloc(r->akey, (size_t)n + 1);
        if (!p)
            return -1;
        r->akey = p;
        r->akeycap = (size_t)n + 1;
    }
    memcpy(r->akey, k, n);
    uint32_t m = (esc & 2) ? mend(r->akey, n) : (esc & 1) ? unescape(r->akey, n) : n;
    r->akey[m] = '\0';
    return 0;
}

/* Parse one record (a value) at c->p into the tree; fills the event. */
static int record(pctx *c, lp_json_ev *ev, lp_json_event kind, const unsigned char *key, uint32_t klen, int kesc)
{
    lp_json_reader *r = c->r;
    r->nnodes = 0;
    c->depth = 0;
    c->bad = 0;
    const unsigned char *at = c->p;
    uint64_t atline = c->line;
    int rc = parse_value(c, key, klen, kesc);
    if (rc)
        return rc;
    ev->off = offset_of(c, at);
    ev->line = atline;
    if (c->bad) {
        ev->kind = LP_JSON_EV_BAD;
        ev->off = c->eoff;
        ev->line = c->eline;
        ev->code = c->code;
        memcpy(ev->msg, c->msg, sizeof c->msg);
        ev->tree = NULL;
        return P_OK;
    }
    ev->kind = kind;
    ev->tree = r->nodes;
    return P_OK;
}

/* A BEGIN or END event of the top-level container at the byte before c->p; the state
 * machine moves to `state`. */
static int container_event(pctx *c, lp_json_ev *ev, int *have, lp_json_event kind, lp_json_type type, int state)
{
    lp_json_reader *r = c->r;
    ev->kind = kind;
    ev->type = type;
    ev->off = offset_of(c, c->p - 1);
    ev->line = c->line;
    r->state = state;
    if (kind == LP_JSON_EV_BEGIN) {
        r->cont_off = ev->off;
        r->cont_line = ev->line;
    }
    *have = 1;
    return P_OK;
}

/* Between top-level values: a streamed array or object begins, or a whole value. */
static int step_top(pctx *c, lp_json_ev *ev, int *have, unsigned ch)
{
    lp_json_reader *r = c->r;
    if (ch == '[') {
        c->p++;
        r->arr_in_obj = 0;
        r->index = 0;
        return container_event(c, ev, have, LP_JSON_EV_BEGIN, LP_JSON_ARRAY, S_ARR_FIRST);
    }
    if (ch == '{' && r->keys) {
        c->p++;
        return container_event(c, ev, have, LP_JSON_EV_BEGIN, LP_JSON_OBJECT, S_OBJ_FIRST);
    }
    int rc = record(c, ev, LP_JSON_EV_VALUE, NULL, 0, 0);
    if (rc)
        return rc;
    ev->index = r->nvalues++;
    *have = 1;
    return P_OK;
}

/* Nested streaming: is the element object at `at` (which did not end within the data
 * buffered) to be streamed member by member? Yes when it is an element of a nest_keys
 * array, more than nest_min of its bytes are buffered and one of its members there
 * has a nest_stream key (without escapes, as
 * step_object matches them) and an array value. The members are skipped with the pull
 * reader over the buffered bytes (one tokenizer); anything it cannot read there (a
 * member cut by the end of the data, a syntax error, deep nesting) answers no: the
 * element is then read whole as before, and a real error is reported from there. */
static int nest_here(const pctx *c, const unsigned char *at)
{
    const lp_json_reader *r = c->r;
    if (r->nnest >= LP_JSON_NEST_MAX || (size_t)(c->end - at) <= r->nest_min)
        return 0;
    const char *ak = r->arr_in_obj ? r->akey : "";
    if (!key_in(r->nest_keys, (const unsigned char *)ak, strlen(ak)))
        return 0;
    lp_json_pull j;
    lp_json_pull_init(&j, (const char *)at, (size_t)(c->end - at));
    if (lp_json_pull_obj(&j) != 1)
        return 0;
    for (;;) {
        const char *k;
        size_t kn;
        char kb[64];
        if (lp_json_pull_key(&j, &k, &kn, kb, sizeof kb))
            return 0;
        if (k != kb && key_in(r->nest_stream, (const unsigned char *)k, kn) &&
            lp_json_pull_peek(&j) == '[')
            return 1;
        if (lp_json_pull_skip(&j) || lp_json_pull_next(&j, '}') != 1)
            return 0;
    }
}

/* Nested streaming: the element object at `at` begins (BEGIN with its depth, the key
 * and index it has in its array); the array's state is saved until its END. */
static int nest_begin(pctx *c, lp_json_ev *ev, int *have, const unsigned char *at, uint64_t atline)
{
    lp_json_reader *r = c->r;
    nest *f = &r->nest[r->nnest++];
    f->arr_in_obj = r->arr_in_obj;
    f->akey = r->akey;
    f->akeycap = r->akeycap;
    f->index = r->index + 1;
    f->cont_off = r->cont_off;
    f->cont_line = r->cont_line;
    r->akey = NULL;
    r->akeycap = 0;
    r->arr_in_obj = 0;
    r->nnodes = 0;
    c->bad = 0;
    c->p = at + 1;
    c->line = atline;
    ev->kind = LP_JSON_EV_BEGIN;
    ev->type = LP_JSON_OBJECT;
    ev->key = f->arr_in_obj ? f->akey : NULL;
    ev->index = r->index;
    ev->depth = r->nnest;
    ev->off = offset_of(c, at);
    ev->line = atline;
    r->cont_off = ev->off;
    r->cont_line = atline;
    r->state = S_OBJ_FIRST;
    *have = 1;
    return P_OK;
}

/* Nested streaming: the element object being streamed ends (c->p past its '}'); back
 * in its array. */
static int nest_end(pctx *c, lp_json_ev *ev, int *have)
{
    lp_json_reader *r = c->r;
    nest *f = &r->nest[--r->nnest];
    lp_free(r->akey);
    r->akey = f->akey;
    r->akeycap = f->akeycap;
    r->arr_in_obj = f->arr_in_obj;
    r->index = f->index;
    r->cont_off = f->cont_off;
    r->cont_line = f->cont_line;
    r->state = S_ARR_NEXT;
    ev->kind = LP_JSON_EV_END;
    ev->type = LP_JSON_OBJECT;
    ev->key = r->arr_in_obj ? r->akey : NULL;
    ev->index = f->index - 1;
    ev->depth = r->nnest + 1;
    ev->off = offset_of(c, c->p - 1);
    ev->line = c->line;
    *have = 1;
    return P_OK;
}

/* In a streamed array: its end, or the next element. */
static int step_array(pctx *c, lp_json_ev *ev, int *have, unsigned ch)
{
    lp_json_reader *r = c->r;
    char fb[24];
    if (ch == ']') {
        c->p++;
        if (r->arr_in_obj) {
            r->state = S_OBJ_NEXT;
            return P_OK;
        }
        return container_event(c, ev, have, LP_JSON_EV_END, LP_JSON_ARRAY, S_TOP);
    }
    if (r->state == S_ARR_NEXT) {
        if (ch != ',')
            return syntax(c, c->p, LP_JSON_E_SYNTAX, "expected ',' or ']' after an array element, found %s",
                          found(c, c->p, fb));
        c->p = skip_ws(c, c->p + 1);
        if (c->p >= c->end)
            return P_MORE;
        if (*c->p == ']')
            return syntax(c, c->p, LP_JSON_E_SYNTAX, "trailing comma before ']'");
    }
    const unsigned char *at = c->p;
    uint64_t atline = c->line;
    int rc = record(c, ev, LP_JSON_EV_ELEMENT, NULL, 0, 0);
    if (rc == P_MORE && r->nest_min && *at == '{' && nest_here(c, at))
        return nest_begin(c, ev, have, at, atline);
    if (rc)
        return rc;
    ev->key = r->arr_in_obj ? r->akey : NULL;
    ev->depth = r->nnest;
    ev->index = r->index++;
    r->state = S_ARR_NEXT;
    *have = 1;
    return P_OK;
}

/* In a streamed object: its end, or the next member (a streamed array begins, or the
 * member is read whole). */
static int step_object(pctx *c, lp_json_ev *ev, int *have, unsigned ch)
{
    lp_json_reader *r = c->r;
    char fb[24];
    if (ch == '}') {
        c->p++;
        if (r->nnest)
            return nest_end(c, ev, have);
        return container_event(c, ev, have, LP_JSON_EV_END, LP_JSON_OBJECT, S_TOP);
    }
    if (r->state == S_OBJ_NEXT) {
        if (ch != ',')
            return syntax(c, c->p, LP_JSON_E_SYNTAX, "expected ',' or '}' after an object member, found %s",
                          found(c, c->p, fb));
        c->p = skip_ws(c, c->p + 1);
        if (c->p >= c->end)
            return P_MORE;
    }
    if (*c->p != '"')
        return syntax(c, c->p, LP_JSON_E_SYNTAX, "expected a member name (a string) in an object, found %s",
                      found(c, c->p, fb));
    const unsigned char *k;
    uint32_t kn;
    int kesc, rc;
    c->bad = 0;
    if ((rc = parse_string(c, &k, &kn, &kesc)))
        return rc;
    if (c->bad) /* a bad key: structural, we cannot tell which member it was */
        return P_SYNTAX;
    c->p = skip_ws(c, c->p);
    if (*c->p != ':') {
        if (c->p >= c->end)
            return P_MORE;
        return syntax(c, c->p, LP_JSON_E_SYNTAX, "expected ':' after a member name, found %s", found(c, c->p, fb));
    }
    c->p = skip_ws(c, c->p + 1);
    if (c->p >= c->end)
        return P_MORE;
    if (*c->p == '[' && is_stream_key(r, k, kn)) {
        if (set_akey(r, k, kn, kesc)) {
            c->nomem = 1;
            return P_SYNTAX;
        }
        r->cont_off = offset_of(c, c->p);
        r->cont_line = c->line;
        c->p++;
        r->state = S_ARR_FIRST;
        r->arr_in_obj = 1;
        r->index = 0;
        return P_OK;
    }
    rc = record(c, ev, LP_JSON_EV_MEMBER, k, kn, kesc);
    if (rc)
        return rc;
    ev->depth = r->nnest;
    r->state = S_OBJ_NEXT;
    *have = 1;
    return P_OK;
}

/* One step of the state machine from the committed position. Returns P_OK with an
 * event (ev->kind set) or with no event (*have = 0, state moved), P_MORE, P_SYNTAX. */
static int step(pctx *c, lp_json_ev *ev, int *have)
{
    lp_json_reader *r = c->r;
    *have = 0;
    c->p = skip_ws(c, c->p);
    c->rec = c->p;
    c->recline = c->line;
    unsigned ch = *c->p;
    int atend = c->p >= c->end;
    switch (r->state) {
    case S_TOP:
        if (atend)
            return c->final ? P_OK : P_MORE; /* P_OK without event at the very end */
        return step_top(c, ev, have, ch);
    case S_ARR_FIRST:
    case S_ARR_NEXT:
        return atend ? P_MORE : step_array(c, ev, have, ch);
    case S_OBJ_FIRST:
    case S_OBJ_NEXT:
        return atend ? P_MORE : step_object(c, ev, have, ch);
    default:
        return P_OK;
    }
}

/* In lines mode: skip to just after the next line break at or after byte `from` of the
 * buffer. Returns LP_OK (possibly at end of input) or a resource error. */
static lp_status skip_line(lp_json_reader *r, size_t from, lp_error *err)
{
    r->pos = from;
    for (;;) {
        const unsigned char *nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
        if (nl) {
            r->pos = (size_t)(nl - r->buf) + 1;
            r->line++;
            return LP_OK;
        }
        r->pos = r->len;
        if (r->eof)
            return LP_OK;
        lp_status st = refill(r, err);
        if (st == LP_ERR_FORMAT || st == LP_ERR_LIMIT)
            return LP_OK;
        if (st)
            return st;
    }
}

static void bad_event(lp_json_ev *ev, uint64_t off, uint64_t line, int fatal, lp_json_err code, const char *msg)
{
    memset(ev, 0, sizeof *ev);
    ev->kind = LP_JSON_EV_BAD;
    ev->code = code;
    ev->off = off;
    ev->line = line;
    ev->fatal = fatal;
    size_t n = strlen(msg);
    if (n >= sizeof ev->msg)
        n = sizeof ev->msg - 1;
    memcpy(ev->msg, msg, n);
    ev->msg[n] = '\0';
}

/* The data ended inside a step (P_MORE at the end of the input): the BAD event that
 * says where (the input's own error, a value cut short, or the streamed container not
 * closed); the reader is done. */
static void cut_event(lp_json_reader *r, const pctx *cp, lp_json_ev *ev)
{
    pctx c = *cp;
    char msg[200];
    if (r->ierr.msg[0]) {
        bad_event(ev, r->base + r->len, c.line, !r->lines, LP_JSON_E_INPUT, r->ierr.msg);
        r->state = S_DONE;
        return;
    }
    /* where the unfinished value starts: after the separator, if any */
    const unsigned char *q = c.rec;
    uint64_t ql = c.recline;
    if (q < c.end && *q == ',' && (r->state == S_ARR_NEXT || r->state == S_OBJ_NEXT)) {
        pctx t = c;
        t.line = c.recline;
        q = skip_ws(&t, q + 1);
        ql = t.line;
    }
    lp_json_err code = q < c.end ? LP_JSON_E_TRUNCATED : LP_JSON_E_UNCLOSED;
    if (q < c.end)
        snprintf(msg, sizeof msg, "unexpected end of input (truncated file?) in the value that starts at byte %llu, line %llu",
                 (unsigned long long)offset_of(&c, q), (unsigned long long)ql);
    else
        snprintf(msg, sizeof msg, "unexpected end of input (truncated file?): the %s that starts at byte %llu, line %llu is not closed",
                 r->state == S_OBJ_FIRST || r->state == S_OBJ_NEXT ? "object" : "array",
                 (unsigned long long)r->cont_off, (unsigned long long)r->cont_line);
    bad_event(ev, r->base + r->len, c.line, !r->lines, code, msg);
    r->state = S_DONE;
}

lp_status lp_json_next(lp_json_reader *r, lp_json_ev *ev, lp_error *err)
{
    memset(ev, 0, sizeof *ev);
    if (r->state == S_DONE)
        return LP_END;
    if (!r->bom_checked) {
        /* look at the first bytes once, skipping a UTF-8 byte order mark */
        while (r->len - r->pos < 3 && !r->eof) {
            lp_status st = refill(r, err);
            if (st == LP_ERR_FORMAT)
                break;
            if (st)
                return st;
        }
        if (r->len - r->pos >= 3 && memcmp(r->buf + r->pos, "\xEF\xBB\xBF", 3) == 0)
            r->pos += 3;
        r->bom_checked = 1;
    }
    for (;;) {
        pctx c;
        memset(&c, 0, sizeof c);
        c.r = r;
        c.start = c.p = r->buf + r->pos;
        c.end = r->buf + r->len;
        c.line = r->line;
        c.final = r->eof;
        c.repair = r->repair;
        int have = 0;
        int rc = step(&c, ev, &have);
        if (c.nomem)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory reading JSON");
        if (rc == P_OK) {
            r->pos = (size_t)(c.p - r->buf);
            r->line = c.line;
            if (have) {
                if (ev->kind != LP_JSON_EV_BAD && r->nnodes && ev->tree) {
                    finalize(r);
                    if (c.nfix) {
                        ev->repaired = c.nfix;
                        ev->roff = c.foff;
                        ev->rline = c.fline;
                        memcpy(ev->rmsg, c.fmsg, sizeof ev->rmsg);
                    }
                }
                if (ev->kind == LP_JSON_EV_MEMBER && ev->tree)
                    ev->key = ev->tree->key;
                return LP_OK;
            }
            if (r->state == S_TOP && c.final && r->pos >= r->len) {
                r->state = S_DONE;
                return LP_END;
            }
            continue;
        }
        if (rc == P_SYNTAX) {
            if (r->lines) {
                /* a record is one line: resume at the line after the one it started on */
                bad_event(ev, c.eoff, c.eline, 0, c.code, c.msg);
                size_t from = (size_t)(c.rec - r->buf);
                r->line = c.recline;
                r->state = S_TOP;
                r->nnodes = 0;
                lp_status st = skip_line(r, from, err);
                if (st)
                    return st;
                return LP_OK;
            }
            bad_event(ev, c.eoff, c.eline, 1, c.code, c.msg);
            r->state = S_DONE;
            return LP_OK;
        }
        /* P_MORE */
        if (r->eof) {
            cut_event(r, &c, ev);
            return LP_OK;
        }
        lp_status st = refill(r, err);
        if (st == LP_ERR_LIMIT) {
            char msg[200];
            snprintf(msg, sizeof msg, "a JSON value larger than %zu bytes (the limit)", r->max_record);
            bad_event(ev, r->base + r->pos, r->line, 1, LP_JSON_E_SIZE, msg);
            r->state = S_DONE;
            return LP_OK;
        }
        if (st == LP_ERR_FORMAT)
            continue; /* r->eof is set; the next round reports the cut with the input's message */
        if (st)
            return st;
    }
}

/* ---- tree helpers ------------------------------------------------------------------------ */

const lp_json *lp_json_get(const lp_json *obj, const char *key)
{
    if (!obj || obj->type != LP_JSON_OBJECT)
        return NULL;
    size_t n = strlen(key);
    const lp_json *hit = NULL;
    for (const lp_json *m = lp_json_first(obj); m; m = lp_json_next_sibling(m))
        if (m->klen == n && memcmp(m->key, key, n) == 0)
            hit = m;
    return hit;
}

int lp_json_key_is(const lp_json *m, const char *k)
{
    size_t n = strlen(k);
    return m->key && m->klen == n && memcmp(m->key, k, n) == 0;
}

int lp_json_str_is(const lp_json *n, const char *s)
{
    size_t k = strlen(s);
    return n && n->type == LP_JSON_STRING && n->len == k && memcmp(n->s, s, k) == 0;
}

int lp_json_i64(const lp_json *n, int64_t *v)
{
    if (!n || n->type != LP_JSON_NUMBER || !(n->flags & LP_JSON_F_INT))
        return -1;
    return jl_int_text(n->s, n->len, v) ? -1 : 0;
}

int lp_json_u64(const lp_json *n, uint64_t *v)
{
    if (!n || n->type != LP_JSON_NUMBER || !(n->flags & LP_JSON_F_INT) || n->s[0] == '-')
        return -1;
    uint64_t acc = 0;
    for (uint32_t i = 0; i < n->len; i++) {
        unsigned d = (unsigned char)n->s[i] - '0';
        if (acc > (UINT64_MAX - d) / 10)
            return -1;
        acc = acc * 10 + d;
    }
    *v = acc;
    return 0;
}

static const double pow10tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

int lp_json_double(const lp_json *n, double *v)
{
    if (!n || n->type != LP_JSON_NUMBER)
        return -1;
    /* exact fast path (Clinger): at most 19 significant digits giving a mantissa below
     * 2^53 and a decimal exponent within +-22 */
    const char *s = n->s, *end = s + n->len;
    int neg = *s == '-';
    if (neg)
        s++;
    uint64_t m = 0;
    int digits = 0, exp10 = 0;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        if (digits < 19) {
            m = m * 10 + (uint64_t)(*s - '0');
            if (m)
                digits++;
        } else {
            exp10++;
        }
    }
    if (s < end && *s == '.') {
        for (s++; s < end && *s >= '0' && *s <= '9'; s++) {
            if (digits < 19) {
                m = m * 10 + (uint64_t)(*s - '0');
                if (m)
                    digits++;
                exp10--;
            }
        }
    }
    int ok = 1;
    if (s < end && (*s == 'e' || *s == 'E')) {
        s++;
        int eneg = 0, e = 0;
        if (s < end && (*s == '+' || *s == '-'))
            eneg = *s++ == '-';
        for (; s < end && *s >= '0' && *s <= '9'; s++)
            if (e < 100000)
                e = e * 10 + (*s - '0');
        exp10 += eneg ? -e : e;
    }
    if (digits < 19 && m < (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22 && ok) {
        double d = (double)m;
        d = exp10 < 0 ? d / pow10tab[-exp10] : d * pow10tab[exp10];
        *v = neg ? -d : d;
        return 0;
    }
    char tmp[128];
    char *buf = tmp;
    if (n->len >= sizeof tmp) {
        buf = lp_malloc((size_t)n->len + 1);
        if (!buf)
            return -1;
    }
    memcpy(buf, n->s, n->len);
    buf[n->len] = '\0';
    *v = strtod(buf, NULL);
    if (buf != tmp)
        lp_free(buf);
    return 0;
}

int lp_json_i64_lenient(const lp_json *n, int64_t *v)
{
    if (!n)
        return -1;
    if (n->type == LP_JSON_STRING)
        return jl_int_text(n->s, n->len, v) ? -1 : 0;
    if (n->type != LP_JSON_NUMBER)
        return -1;
    if (n->flags & LP_JSON_F_INT)
        return jl_int_text(n->s, n->len, v) ? -1 : 0;
    double d;
    if (lp_json_double(n, &d) || d != floor(d) || d < -9.2233720368547758e18 || d >= 9.2233720368547758e18)
        return -1;
    *v = (int64_t)d;
    return 0;
}

const char *lp_json_excerpt(const lp_json *n, char *buf, size_t size)
{
    if (!size)
        return buf;
    if (!n) {
        snprintf(buf, size, "nothing");
        return buf;
    }
    if (n->type == LP_JSON_STRING) {
        /* whole UTF-8 sequences only (the string is valid UTF-8), control bytes as '?' */
        size_t o = 0, i = 0;
        if (o + 1 < size)
            buf[o++] = '"';
        while (i < n->len && i < 40) {
            unsigned char ch = (unsigned char)n->s[i];
            size_t k = ch < 0x80 ? 1 : ch < 0xE0 ? 2 : ch < 0xF0 ? 3 : 4;
            if (i + k > n->len || o + k + 5 > size)
                break;
            if (ch < 0x20)
                buf[o] = '?';
            else
                memcpy(buf + o, n->s + i, k);
            o += k;
            i += k;
        }
        if (i < n->len && o + 5 <= size) {
            memcpy(buf + o, "...", 3);
            o += 3;
        }
        if (o + 1 < size)
            buf[o++] = '"';
        buf[o] = '\0';
        return buf;
    }
    if (n->type == LP_JSON_NUMBER) {
        int k = (int)(n->len < 40 ? n->len : 40);
        snprintf(buf, size, "%.*s", k, n->s);
        return buf;
    }
    snprintf(buf, size, "%s", lp_json_type_name((lp_json_type)n->type));
    return buf;
}

const char *lp_json_what(const lp_json *n, char *buf, size_t size)
{
    if (!n) {
        snprintf(buf, size, "nothing");
        return buf;
    }
    char ex[64];
    switch (n->type) {
    case LP_JSON_STRING: snprintf(buf, size, "a string %s", lp_json_excerpt(n, ex, sizeof ex)); break;
    case LP_JSON_NUMBER: snprintf(buf, size, "a number %s", lp_json_excerpt(n, ex, sizeof ex)); break;
    case LP_JSON_ARRAY: snprintf(buf, size, "an array"); break;
    case LP_JSON_OBJECT: snprintf(buf, size, "an object"); break;
    default: snprintf(buf, size, "%s", lp_json_type_name((lp_json_type)n->type)); break;
    }
    return buf;
}
