/* jsonw.h: a streaming JSON writer for results (RFC 8259 output).
 *
 * Values are written as they come (no tree is built), so a path of ten million
 * elements costs no memory. The writer tracks nesting and commas; strings are escaped
 * and invalid UTF-8 is replaced by U+FFFD so the output is always valid JSON; doubles
 * that are not finite are written as null. Output goes to a FILE, buffered by stdio.
 * Hand-written rather than taken from a JSON library: emitting is ~150 lines and the
 * libraries packaged in Debian (jansson, json-c) build trees first.
 */
#ifndef LONGPOLE_JSONW_H
#define LONGPOLE_JSONW_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#define LP_JSON_MAXDEPTH 64

typedef struct lp_jsonw {
    FILE *f;
    int depth;
    int pretty;                       /* indent with two spaces */
    unsigned char first[LP_JSON_MAXDEPTH]; /* no element written yet at this depth */
    int after_key;                    /* a key was just written */
} lp_jsonw;

void lp_jsonw_init(lp_jsonw *j, FILE *f, int pretty);
void lp_jsonw_obj(lp_jsonw *j);      /* { */
void lp_jsonw_obj_end(lp_jsonw *j);  /* } */
void lp_jsonw_arr(lp_jsonw *j);      /* [ */
void lp_jsonw_arr_end(lp_jsonw *j);  /* ] */
void lp_jsonw_key(lp_jsonw *j, const char *k);
void lp_jsonw_str(lp_jsonw *j, const char *s);
void lp_jsonw_strn(lp_jsonw *j, const char *s, size_t n);
void lp_jsonw_i64(lp_jsonw *j, int64_t v);
void lp_jsonw_u64(lp_jsonw *j, uint64_t v);
void lp_jsonw_dbl(lp_jsonw *j, double v);
void lp_jsonw_bool(lp_jsonw *j, int v);
void lp_jsonw_null(lp_jsonw *j);
/* A value already formatted as JSON (a number literal such as "12.345"); the caller
 * vouches for its syntax. */
void lp_jsonw_raw(lp_jsonw *j, const char *text);
/* Convenience: key + value. */
void lp_jsonw_kstr(lp_jsonw *j, const char *k, const char *v);
void lp_jsonw_ki64(lp_jsonw *j, const char *k, int64_t v);
void lp_jsonw_ku64(lp_jsonw *j, const char *k, uint64_t v);
void lp_jsonw_kdbl(lp_jsonw *j, const char *k, double v);
void lp_jsonw_kbool(lp_jsonw *j, const char *k, int v);
/* Finish the document with a newline. */
void lp_jsonw_end(lp_jsonw *j);

#endif
