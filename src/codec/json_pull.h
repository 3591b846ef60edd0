/* reqlog_json.h: a small pull reader for JSON text in memory, used by the request-log
 * reader (one flat object per line) and by the causal-model file reader. Internal.
 *
 * No tree is built: the caller walks the document (objects, arrays, keys, scalars) and
 * skips what it does not need. Strings are returned as a pointer into the input when
 * they have no escapes, else unescaped into a caller buffer (\uXXXX and surrogate pairs
 * become UTF-8). Nesting is limited (LP_RJ_MAXDEPTH) so hostile input cannot exhaust
 * the stack. Every function returns 0 on success and -1 on a syntax error, leaving a
 * reason in j->why and the offset of the problem in j->p.
 */
#ifndef LP_REQLOG_JSON_H
#define LP_REQLOG_JSON_H

#include <stddef.h>
#include <stdint.h>

#define LP_RJ_MAXDEPTH 64

typedef struct lp_rj {
    const char *p;    /* next byte to read */
    const char *end;  /* end of the input */
    const char *start;/* start of the input (for offsets) */
    const char *why;  /* reason of the last error (static string) */
} lp_rj;

void lp_rj_init(lp_rj *j, const char *s, size_t n);
/* Next non-space byte without consuming it; -1 at the end. */
int lp_rj_peek(lp_rj *j);
/* Consume `c` (after spaces) or fail. */
int lp_rj_expect(lp_rj *j, char c);
/* Inside an object or array after its first element: consume ',' and return 1, or
 * consume the closing `close` and return 0; -1 on anything else. */
int lp_rj_next(lp_rj *j, char close);
/* A string: (*s, *n) point into the input when it has no escapes, else into buf (cap
 * bytes; -1 if too long). */
int lp_rj_string(lp_rj *j, const char **s, size_t *n, char *buf, size_t cap);
/* A number token (JSON grammar); (*s, *n) is its text. */
int lp_rj_number(lp_rj *j, const char **s, size_t *n);
/* A scalar as text: string (unescaped) or number or true/false/null (*kind: 's', 'n',
 * 't', 'f', 'z'). */
int lp_rj_scalar(lp_rj *j, const char **s, size_t *n, char *buf, size_t cap, int *kind);
/* Skip one value of any kind. */
int lp_rj_skip(lp_rj *j);
/* Begin an object: consume '{'; returns 1 if it has members, 0 if empty ('}' consumed). */
int lp_rj_obj(lp_rj *j);
/* Begin an array: consume '['; returns 1 if it has elements, 0 if empty. */
int lp_rj_arr(lp_rj *j);
/* A key and its ':' (pointer semantics as lp_rj_string). */
int lp_rj_key(lp_rj *j, const char **s, size_t *n, char *buf, size_t cap);
/* Integer value (must be an integer JSON number within int64). */
int lp_rj_i64(lp_rj *j, int64_t *v);
/* Only spaces left? */
int lp_rj_at_end(lp_rj *j);

#endif
