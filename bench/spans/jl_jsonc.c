/* jl_jsonc.c: the json-c part of the jsonlibs harness (see jsonlibs.c). */
#include "jsonlibs.h"
#include <json-c/json.h>
#include <stdio.h>

/* ---- json-c ---- */
static void walk_jsonc(struct json_object *v, sums *s)
{
    s->nodes++;
    switch (json_object_get_type(v)) {
    case json_type_object: {
        json_object_object_foreach(v, k, x) {
            s->bytes += strlen(k);
            walk_jsonc(x, s);
        }
        break;
    }
    case json_type_array: {
        size_t m = json_object_array_length(v);
        for (size_t i = 0; i < m; i++)
            walk_jsonc(json_object_array_get_idx(v, i), s);
        break;
    }
    case json_type_string: s->bytes += (uint64_t)json_object_get_string_len(v); break;
    default: break;
    }
}
sums run_jsonc(const char *b, size_t n)
{
    sums s = {0, 0};
    size_t i = data_start(b, n);
    struct json_tokener *tok = json_tokener_new();
    while (i < n && b[i] != ']') {
        size_t left = n - i;
        int chunk = left > (size_t)1 << 30 ? 1 << 30 : (int)left;
        struct json_object *v = json_tokener_parse_ex(tok, b + i, chunk);
        if (!v) {
            fprintf(stderr, "json-c: %s at %zu\n", json_tokener_error_desc(json_tokener_get_error(tok)), i);
            break;
        }
        size_t used = json_tokener_get_parse_end(tok);
        walk_jsonc(v, &s);
        json_object_put(v);
        json_tokener_reset(tok);
        i = skip_sep(b, n, i + used);
    }
    json_tokener_free(tok);
    return s;
}

