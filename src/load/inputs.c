/* inputs.c: expanding directories among the inputs of lp_trace_load() (inputs.h).
 * Invariant: the items come in the order of the paths given, each directory's entries
 * in byte order of their names, depth first; a rolling Spark event-log directory is
 * never entered (the Spark importer reads it whole, its files in index order); a CTF
 * kernel trace directory is refused with a message naming the command that reads it.
 */
#include "longpole/load/inputs.h"
#include "longpole/import/spark.h"
#include "longpole/import/kernel.h"
#include "longpole/base/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct vec {
    lp_input_item *v;
    size_t n, cap;
} vec;

static int push(vec *x, const char *path, lp_input_kind kind)
{
    if (x->n == x->cap) {
        void *p = x->v;
        if (lp_grow(&p, &x->cap, x->n + 1, sizeof *x->v))
            return -1;
        x->v = p;
    }
    if (!(x->v[x->n].path = lp_strndup(path, strlen(path))))
        return -1;
    x->v[x->n++].kind = kind;
    return 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static lp_status expand(vec *x, const char *path, int depth, lp_error *err)
{
    struct stat sb;
    if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return push(x, path, LP_INPUT_FILE) ? lp_error_set(err, LP_ERR_NOMEM, "out of memory") : LP_OK;
    if (lp_spark_is_log_dir(path))
        return push(x, path, LP_INPUT_SPARK_DIR) ? lp_error_set(err, LP_ERR_NOMEM, "out of memory") : LP_OK;
    if (lp_ktrace_detect(path) == LP_KFORMAT_CTF) /* read whole by the kernel-trace commands only */
        return lp_error_set(err, LP_ERR_FORMAT,
                            "%s: a CTF (LTTng) kernel trace: this command reads activity traces; the critical path "
                            "of a thread of kernel traces is `longpole cp --thread TID|NAME %s` (and `longpole index`)",
                            path, path);
    if (depth > 32)
        return lp_error_set(err, LP_ERR_LIMIT, "directories nested deeper than 32 at '%s'", path);
    DIR *d = opendir(path);
    if (!d)
        return lp_error_set(err, LP_ERR_IO, "cannot read directory '%s': %s", path, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    lp_status st = LP_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            void *p = names;
            if (lp_grow(&p, &cap, n + 1, sizeof *names)) {
                st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
                break;
            }
            names = p;
        }
        if (!(names[n] = lp_strndup(e->d_name, strlen(e->d_name)))) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_name);
    size_t plen = strlen(path);
    int slash = plen && path[plen - 1] == '/';
    for (size_t i = 0; i < n && !st; i++) {
        size_t k = plen + strlen(names[i]) + 2;
        char *full = lp_malloc(k);
        if (!full) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        snprintf(full, k, "%s%s%s", path, slash ? "" : "/", names[i]);
        if (stat(full, &sb) == 0 && (S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode)))
            st = expand(x, full, depth + 1, err);
        lp_free(full);
    }
    for (size_t i = 0; i < n; i++)
        lp_free(names[i]);
    lp_free(names);
    return st;
}

lp_status lp_inputs_expand(const char *const *paths, size_t npaths, lp_input_item **items, size_t *nitems,
                           lp_error *err)
{
    vec x = {0};
    lp_status st = LP_OK;
    for (size_t i = 0; i < npaths && !st; i++)
        st = expand(&x, paths[i], 0, err);
    if (st) {
        lp_inputs_free(x.v, x.n);
        *items = NULL;
        *nitems = 0;
        return st;
    }
    *items = x.v;
    *nitems = x.n;
    return LP_OK;
}

void lp_inputs_free(lp_input_item *items, size_t nitems)
{
    for (size_t i = 0; i < nitems; i++)
        lp_free(items[i].path);
    lp_free(items);
}
