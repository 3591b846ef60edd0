/* json.h: the JSON reader of longpole, in three forms over one tokenizer
 * (src/codec/json_lex.h): the streaming reader for the importers of foreign trace
 * formats (below), the pull reader over one document in memory (lp_json_pull_*, for
 * request-log lines and model files) and the head scanner for format detection
 * (lp_json_head_*). The streaming reader:
 *
 * Trace exports are large (1 GB files are the design point) and have one of a few
 * shapes: a top-level array of records (`[span, ...]`, Chrome's `[event, ...]`), a
 * top-level object with one big array under a known key (`{"data": [trace, ...]}`,
 * `{"traceEvents": [...]}`, `{"resourceSpans": [...]}`, a bare Jaeger trace's
 * `{"spans": [...]}`), or one object per line (JSON lines: Spark event logs, the
 * OpenTelemetry collector's file exporter). lp_json_reader walks such a stream over an
 * lp_input (so gzip and zstd are transparent) and hands the records one at a time,
 * each as a small tree (lp_json nodes), without ever holding more than the current
 * record in memory: memory is bounded by the largest record, not by the file.
 *
 * Events (lp_json_next):
 *   LP_JSON_EV_BEGIN    a top-level array, or a top-level object that is read member
 *                       by member (opts.stream_keys given), starts;
 *   LP_JSON_EV_ELEMENT  one element of a streamed array: the top-level array, or the
 *                       array value of a top-level member whose key is in
 *                       opts.stream_keys (ev.key names it);
 *   LP_JSON_EV_MEMBER   one member of a streamed top-level object that is not streamed
 *                       itself (its value as a tree; ev.key is the member's key);
 *   LP_JSON_EV_VALUE    a whole top-level value (scalar, or object when no stream_keys);
 *   LP_JSON_EV_END      the top-level array or object ended;
 *   LP_JSON_EV_BAD      a record could not be read: ev.msg says why, ev.off/ev.line
 *                       where. The reader goes on with the next record when it can
 *                       (bad UTF-8, bad escape or bad number inside a record; in lines
 *                       mode also any syntax error, resuming at the next line). When it
 *                       cannot (a syntax error that breaks the structure, truncated
 *                       input, corrupt compression) ev.fatal is set and the next call
 *                       returns LP_END: the records before it were delivered.
 *                       With opts.repair, problems inside strings (bad UTF-8, bad
 *                       escapes, lone surrogates, raw control characters) do not make
 *                       the record BAD: the record is delivered with the offending
 *                       bytes replaced by '?', and ev.repaired counts the strings so
 *                       mended (ev.rmsg, ev.roff, ev.rline describe the first).
 * Several top-level values may follow one another (concatenated JSON, JSON lines).
 * Example, for {"data":[{..},{..}],"total":2}:
 *   BEGIN(object) ELEMENT(key "data", index 0) ELEMENT(index 1) MEMBER("total") END.
 * With opts.nest_min, a huge element is streamed too: for {"data":[{"traceID":..,
 * "spans":[{..},..]}]} with stream key "data", nest key "data" and nest stream key
 * "spans": BEGIN(object, depth 0)
 * BEGIN(object, depth 1, key "data", index 0) MEMBER("traceID", depth 1)
 * ELEMENT(key "spans", index 0, depth 1) ... END(depth 1) END(depth 0).
 *
 * Trees: a record is an array of lp_json nodes in document order. Node 0 is the
 * record itself; a container's first child follows it (n + 1 when len > 0); siblings
 * are linked by `next` (a forward distance in nodes, 0 for the last). Strings are
 * decoded (escapes resolved), valid UTF-8 and NUL-terminated (they may contain NUL
 * themselves when the input had \u0000: use len). Numbers keep their literal text (not
 * NUL-terminated; use the lp_json_*() accessors). Nodes and the strings they point to
 * live in the reader's buffer and stay valid until the next lp_json_next() call.
 *
 * Errors are precise: every node and every event carries the byte offset (in the
 * decompressed stream) and the 1-based line of its first byte; messages say what was
 * expected and what was found ("expected ',' or ']' after an array element, found 'x'",
 * "invalid UTF-8 byte 0xff in a string", "unexpected end of input inside a string
 * (truncated file?)"). Input is checked against RFC 8259: structure, number grammar,
 * string escapes and surrogate pairs, UTF-8 (overlong forms and surrogates rejected),
 * control characters in strings. Nesting deeper than LP_JSON_READ_MAXDEPTH is an error.
 *
 * Speed (src/codec/json.c; bench/RESULTS.md): about 900 MB/s of trace JSON on one core
 * for the reader and its trees; the span importers built on it read Jaeger, Zipkin and
 * OTLP JSON into their table at 400-750 MB/s.
 */
#ifndef LONGPOLE_JSON_H
#define LONGPOLE_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "longpole/base/status.h"
#include "longpole/codec/io.h"

#define LP_JSON_READ_MAXDEPTH 512

typedef enum lp_json_type {
    LP_JSON_NULL = 0,
    LP_JSON_FALSE,
    LP_JSON_TRUE,
    LP_JSON_NUMBER,
    LP_JSON_STRING,
    LP_JSON_ARRAY,
    LP_JSON_OBJECT
} lp_json_type;

/* node flags */
#define LP_JSON_F_INT 0x01u   /* number: integer syntax (no fraction, no exponent) */

/* One value of a record's tree. */
typedef struct lp_json {
    uint8_t type;        /* lp_json_type */
    uint8_t flags;       /* LP_JSON_F_* */
    uint16_t reserved;   /* (internal use while parsing) */
    uint32_t klen;       /* byte length of key */
    uint32_t len;        /* string: decoded byte length; number: literal length; array/object: children */
    uint32_t next;       /* distance (in nodes) to the next sibling; 0 for the last one */
    const char *key;     /* member name for object members (decoded, NUL-terminated), else NULL */
    const char *s;       /* string: decoded, NUL-terminated; number: the literal text; else NULL */
    uint64_t off;        /* byte offset of the value's first byte in the (decompressed) input */
    uint64_t line;       /* 1-based line of that byte */
} lp_json;

typedef enum lp_json_event {
    LP_JSON_EV_BEGIN = 0,
    LP_JSON_EV_ELEMENT,
    LP_JSON_EV_MEMBER,
    LP_JSON_EV_VALUE,
    LP_JSON_EV_END,
    LP_JSON_EV_BAD
} lp_json_event;

/* Why a value could not be read (BAD events, the pull reader): a reason code to decide
 * on, beside the message for people. */
typedef enum lp_json_err {
    LP_JSON_E_NONE = 0,
    LP_JSON_E_SYNTAX,    /* a byte the grammar does not allow there ("expected ..., found ...") */
    LP_JSON_E_STRING,    /* inside a string: a control character, a bad escape or \u, a lone
                            surrogate, a line break */
    LP_JSON_E_UTF8,      /* invalid UTF-8 in a string */
    LP_JSON_E_NUMBER,    /* a malformed number; an integer expected or out of range (pull) */
    LP_JSON_E_DEPTH,     /* nesting deeper than the limit */
    LP_JSON_E_SIZE,      /* larger than a limit: a record, a string (4 GiB; pull: the caller's
                            buffer), a count of elements */
    LP_JSON_E_TRUNCATED, /* the input ends inside a value (a truncated file?) */
    LP_JSON_E_UNCLOSED,  /* the input ends between the elements (members) of a streamed array
                            (object) that is not closed: every record before was delivered */
    LP_JSON_E_INPUT      /* the input failed (corrupt compressed data) */
} lp_json_err;

typedef struct lp_json_ev {
    lp_json_event kind;
    lp_json_type type;   /* BEGIN and END: LP_JSON_ARRAY or LP_JSON_OBJECT */
    const lp_json *tree; /* ELEMENT, MEMBER, VALUE: the record (node 0); NULL otherwise */
    const char *key;     /* ELEMENT: key of the streamed array (NULL for a top-level array);
                            MEMBER: the member's key; NUL-terminated; else NULL */
    uint64_t index;      /* ELEMENT: 0-based index in its array; VALUE: index of the top-level value */
    uint64_t off, line;  /* where the event's value (or the problem) starts */
    int fatal;           /* BAD: the reader cannot go on; the next call returns LP_END */
    lp_json_err code;    /* BAD: why (decide on this, not on msg) */
    char msg[240];       /* BAD: what is wrong, without the position */
    unsigned repaired;   /* repair mode: strings of this record that were mended */
    uint64_t roff, rline;/* where the first mended problem is */
    char rmsg[200];      /* what it was */
    unsigned depth;      /* BEGIN, END: 0 for the top-level array or object, 1 and more for
                            an element object streamed member by member (opts.nest_min);
                            ELEMENT, MEMBER: the depth of the object they belong to */
} lp_json_ev;

typedef struct lp_json_opts {
    /* Keys of top-level object members whose array values are streamed element by
     * element (NULL-terminated list, or NULL: top-level objects are read whole). */
    const char *const *stream_keys;
    /* JSON lines: after a syntax error, resume at the next line (a BAD event, not fatal). */
    int lines;
    /* Largest record accepted, in bytes (0: 2 GiB). A bigger one is a fatal BAD event. */
    size_t max_record;
    /* Initial buffer size in bytes (0: 4 MiB). It grows to the largest record; tests
     * use a few bytes to make every record cross refills. */
    size_t bufsize;
    /* Mend bad strings instead of rejecting their record (see LP_JSON_EV_BAD). */
    int repair;
    /* Nested streaming (nest_min 0: off; never in lines mode). An element of a streamed
     * array named in nest_keys ("" names a top-level array) that is an object larger
     * than nest_min bytes, with a member whose key is in nest_stream and whose value is
     * an array, is not read whole: it is streamed like a top-level object (BEGIN with
     * depth >= 1 and the key and index it has in its array; MEMBER for its other
     * members; ELEMENT for the elements of its nest_stream arrays; END), and so on
     * inside it (an element of one of its arrays that is in nest_keys), up to
     * LP_JSON_NEST_MAX levels. Memory is then bounded by the largest record that is not
     * streamed, not by a huge element (a Jaeger trace of a million spans in
     * {"data":[...]}). Whether an element is streamed is decided on its first bytes
     * (at least nest_min of them): its end is not among them and a nest_stream array
     * starts among them (keys are compared as written, without escapes). */
    size_t nest_min;
    const char *const *nest_keys;
    const char *const *nest_stream;
} lp_json_opts;

#define LP_JSON_NEST_MAX 4

typedef struct lp_json_reader lp_json_reader;

/* Start reading `in` (not owned; must outlive the reader). opts may be NULL. */
lp_status lp_json_reader_new(lp_json_reader **out, lp_input *in, const lp_json_opts *opts, lp_error *err);
void lp_json_reader_free(lp_json_reader *r);

/* The next event. LP_OK with *ev filled; LP_END at the end of the input (after a
 * fatal BAD event too); LP_ERR_NOMEM or LP_ERR_IO on resource failures (err set). */
lp_status lp_json_next(lp_json_reader *r, lp_json_ev *ev, lp_error *err);

/* Bytes of decompressed input consumed so far, and the current line. */
uint64_t lp_json_reader_offset(const lp_json_reader *r);
uint64_t lp_json_reader_line(const lp_json_reader *r);

/* ---- trees -------------------------------------------------------------------------- */

static inline const lp_json *lp_json_first(const lp_json *n)
{
    return (n->type == LP_JSON_ARRAY || n->type == LP_JSON_OBJECT) && n->len ? n + 1 : NULL;
}
static inline const lp_json *lp_json_next_sibling(const lp_json *n) { return n->next ? n + n->next : NULL; }

/* The member of an object with this key (the last one if repeated), or NULL (also when
 * obj is not an object). */
const lp_json *lp_json_get(const lp_json *obj, const char *key);
/* Does the key of member m equal k? Is the string node n equal to s? */
int lp_json_key_is(const lp_json *m, const char *k);
/* Does the key of member m equal the n bytes at k? LP_JSON_KEY(m, "lit") for a literal
 * (its length known at compile time: the importers' hot paths). */
static inline int lp_json_key_eq(const lp_json *m, const char *k, size_t n)
{
    return m->klen == n && memcmp(m->key, k, n) == 0;
}
#define LP_JSON_KEY(m, lit) lp_json_key_eq(m, lit, sizeof lit - 1)
int lp_json_str_is(const lp_json *n, const char *s);

/* Number accessors: 0 on success, -1 if n is not a number of that kind or out of range.
 * lp_json_i64/u64 take integers only (no fraction or exponent); lp_json_double takes
 * any number. lp_json_i64_lenient also takes a string holding an integer (the protobuf
 * JSON mapping of int64, as OTLP writes timestamps) and a number whose fraction is zero
 * ("1.0", "1e3"). */
int lp_json_i64(const lp_json *n, int64_t *v);
int lp_json_u64(const lp_json *n, uint64_t *v);
int lp_json_double(const lp_json *n, double *v);
int lp_json_i64_lenient(const lp_json *n, int64_t *v);

/* "null", "false", "true", "number", "string", "array", "object". */
const char *lp_json_type_name(lp_json_type t);

/* A short printable excerpt of a node for messages: the string (quoted, at most ~40
 * bytes), the number's text, or the type name. Returns buf. */
const char *lp_json_excerpt(const lp_json *n, char *buf, size_t size);

/* "a string \"abc\"", "a number 12", "an object", "nothing" (n NULL), ... for messages
 * about a value of the wrong kind. Returns buf. */
const char *lp_json_what(const lp_json *n, char *buf, size_t size);

/* ---- the pull reader: one JSON text in memory ---------------------------------------- */

/* For a small document in memory (a request-log line, a causal-model file) that the
 * caller walks itself: objects, arrays, keys and scalars in order, skipping what it does
 * not need; no tree is built. Strings are returned as a pointer into the input when they
 * have no escapes, else decoded into a caller buffer (\uXXXX and surrogate pairs become
 * UTF-8, a lone surrogate U+FFFD). Bytes >= 0x80 pass through unchecked (names are
 * bytes). Nesting of skipped values is limited (LP_JSON_PULL_MAXDEPTH) so hostile input
 * cannot exhaust anything. The tokens are those of the streaming reader (one tokenizer,
 * src/codec/json_lex.h). Every function returns -1 on an error, leaving its reason in
 * j->code, a message in j->why (a static string) and the place of the problem in j->p. */
#define LP_JSON_PULL_MAXDEPTH 64

typedef struct lp_json_pull {
    const char *p;     /* next byte to read */
    const char *end;   /* end of the input */
    const char *start; /* start of the input (for offsets) */
    const char *why;   /* message of the last error (static string) */
    lp_json_err code;  /* reason of the last error */
} lp_json_pull;

void lp_json_pull_init(lp_json_pull *j, const char *s, size_t n);
/* Next non-space byte without consuming it; -1 at the end. */
int lp_json_pull_peek(lp_json_pull *j);
/* Consume `c` (after spaces) or fail. */
int lp_json_pull_expect(lp_json_pull *j, char c);
/* Inside an object or array after its first element: consume ',' and return 1, or
 * consume the closing `close` and return 0; -1 on anything else. */
int lp_json_pull_next(lp_json_pull *j, char close);
/* A string: (*s, *n) point into the input when it has no escapes, else into buf (cap
 * bytes; -1 if it does not fit). */
int lp_json_pull_string(lp_json_pull *j, const char **s, size_t *n, char *buf, size_t cap);
/* A number token (JSON grammar); (*s, *n) is its text. */
int lp_json_pull_number(lp_json_pull *j, const char **s, size_t *n);
/* A scalar as text: string (decoded) or number or true/false/null (*kind: 's', 'n',
 * 't', 'f', 'z'). */
int lp_json_pull_scalar(lp_json_pull *j, const char **s, size_t *n, char *buf, size_t cap, int *kind);
/* Skip one value of any kind. */
int lp_json_pull_skip(lp_json_pull *j);
/* Begin an object: consume '{'; returns 1 if it has members, 0 if empty ('}' consumed). */
int lp_json_pull_obj(lp_json_pull *j);
/* Begin an array: consume '['; returns 1 if it has elements, 0 if empty. */
int lp_json_pull_arr(lp_json_pull *j);
/* A key and its ':' (pointer semantics as lp_json_pull_string). */
int lp_json_pull_key(lp_json_pull *j, const char **s, size_t *n, char *buf, size_t cap);
/* Integer value (must be an integer JSON number within int64). */
int lp_json_pull_i64(lp_json_pull *j, int64_t *v);
/* Only spaces left? */
int lp_json_pull_at_end(lp_json_pull *j);

/* ---- the head scanner: the first bytes of a file, for format detection ----------------- */

/* The tokens of a JSON head (a file's first bytes, cut anywhere), one at a time, without
 * checking anything but what a token needs: detectors look at the first structural
 * tokens and keys. A leading UTF-8 byte order mark is skipped. */
typedef struct lp_json_head {
    const unsigned char *p, *end;
    /* the last token: '{', '}', '[', ']', ':', ',', '"' (a string), '0' (a number), 'l'
     * (true, false or null), '?' (a byte that starts no token; it is consumed), or 0 at
     * the end of the head */
    int tok;
    const char *s;     /* its text; a string's raw bytes between the quotes (escapes kept) */
    size_t n;
    int esc;           /* a string: it holds escapes */
    int closed;        /* a string: its closing quote is in the head */
    int newline;       /* a line break came between the previous token and this one */
} lp_json_head;

void lp_json_head_init(lp_json_head *h, const void *p, size_t n);
/* The next token (also in h->tok). */
int lp_json_head_next(lp_json_head *h);
/* Is the token a whole string without escapes equal to s? */
int lp_json_head_is(const lp_json_head *h, const char *s);

/* The first structural tokens of a JSON head: "{", "[", or a member key (a string of
 * less than LP_JSON_HEAD_TOK bytes without escapes, followed by ':'), as many as fit in
 * max; stops at anything else (a scalar, a long key, the end of the head). Returns the
 * number of tokens. */
#define LP_JSON_HEAD_TOK 24
int lp_json_head_tokens(const void *p, size_t n, char tok[][LP_JSON_HEAD_TOK], int max);

#endif
