/* jl_jansson.c: the jansson part of the jsonlibs harness (see jsonlibs.c). */
#include "jsonlibs.h"
#include <jansson.h>
#include <stdio.h>

/* ---- jansson ---- */
static void walk_jansson(json_t *v, sums *s)
{
    s->nodes++;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            s->bytes += strlen(k);
            walk_jansson(x, s);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) walk_jansson(x, s);
    } else if (json_is_string(v)) {
        s->bytes += json_string_length(v);
    }
}
sums run_jansson(const char *b, size_t n)
{
    sums s = {0, 0};
    size_t i = data_start(b, n);
    while (i < n && b[i] != ']') {
        json_error_t e;
        json_t *v = json_loadb(b + i, n - i, JSON_DISABLE_EOF_CHECK, &e);
        if (!v) {
            fprintf(stderr, "jansson: %s at %zu\n", e.text, i + (size_t)e.position);
            break;
        }
        walk_jansson(v, &s);
        json_decref(v);
        i = skip_sep(b, n, i + (size_t)e.position);
    }
    return s;
}

