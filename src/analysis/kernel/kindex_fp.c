/* kindex_fp.c: the fingerprint of a set of kernel traces (kindex.h): what an index file
 * records so that a later query can tell whether the traces it was built from are
 * still the ones on disk.
 *
 * Each path given is a root, recorded by its canonical absolute path (so "./t" and
 * "/home/u/t" are the same trace); a directory root is walked (16 levels at most,
 * symbolic links not followed, index files skipped) and every regular file under it
 * recorded with its size and modification time in nanoseconds, sorted by path. Stat
 * calls only: no file is read, so fingerprinting a 10 GB trace costs a directory walk.
 */
#include "longpole/analysis/kernel/kindex.h"
#include "longpole/base/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DEPTH 16
#define MAX_FILES 1000000u

typedef struct walker {
    lp_kindex_fp *fp;
    size_t cap;
    lp_error *err;
} walker;

static lp_status add(walker *k, const char *path, const struct stat *st, uint32_t root, int is_root)
{
    if (k->fp->n >= MAX_FILES)
        return lp_error_set(k->err, LP_ERR_LIMIT, "more than %u trace files under '%s'", MAX_FILES,
                            k->fp->f[root].path);
    if (lp_grow((void **)&k->fp->f, &k->cap, k->fp->n + 1, sizeof *k->fp->f))
        return lp_error_set(k->err, LP_ERR_NOMEM, "out of memory");
    lp_kindex_file *f = &k->fp->f[k->fp->n];
    f->path = lp_strndup(path, strlen(path));
    if (!f->path)
        return lp_error_set(k->err, LP_ERR_NOMEM, "out of memory");
    /* a directory's own size and time change when an index is written into it: its
     * files, listed one by one, are what identifies it */
    int dir = is_root && S_ISDIR(st->st_mode);
    f->size = dir ? 0 : (uint64_t)st->st_size;
    f->mtime_ns = dir ? 0 : (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    f->root = root;
    f->is_root = (uint32_t)is_root;
    k->fp->n++;
    return LP_OK;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static lp_status walk(walker *k, const char *dir, uint32_t root, int depth)
{
    if (depth > MAX_DEPTH)
        return lp_error_set(k->err, LP_ERR_LIMIT, "'%s': directories nested deeper than %d", dir, MAX_DEPTH);
    DIR *d = opendir(dir);
    if (!d)
        return lp_error_set(k->err, LP_ERR_IO, "cannot read directory '%s': %s", dir, strerror(errno));
    lp_status st = LP_OK;
    struct dirent *de;
    char path[PATH_MAX];
    while (!st && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || ends_with(de->d_name, LP_KINDEX_EXT) ||
            ends_with(de->d_name, LP_KINDEX_EXT LP_KINDEX_STAMP_SUFFIX) ||
            ends_with(de->d_name, LP_KINDEX_EXT LP_KINDEX_DIST_SUFFIX))
            continue;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= sizeof path) {
            st = lp_error_set(k->err, LP_ERR_LIMIT, "path too long under '%s'", dir);
            break;
        }
        struct stat sb;
        if (lstat(path, &sb) != 0)
            st = lp_error_set(k->err, LP_ERR_IO, "cannot stat '%s': %s", path, strerror(errno));
        else if (S_ISDIR(sb.st_mode))
            st = walk(k, path, root, depth + 1);
        else if (S_ISREG(sb.st_mode))
            st = add(k, path, &sb, root, 0);
    }
    closedir(d);
    return st;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const lp_kindex_file *)a)->path, ((const lp_kindex_file *)b)->path);
}

void lp_kindex_fp_release(lp_kindex_fp *fp)
{
    for (size_t i = 0; i < fp->n; i++)
        lp_free(fp->f[i].path);
    lp_free(fp->f);
    memset(fp, 0, sizeof *fp);
}

lp_status lp_kindex_fingerprint(const char *const *paths, size_t npaths, lp_kindex_fp *fp, lp_error *err)
{
    memset(fp, 0, sizeof *fp);
    walker k = {fp, 0, err};
    lp_status st = LP_OK;
    /* the roots first, in the order given */
    for (size_t i = 0; !st && i < npaths; i++) {
        char canon[PATH_MAX];
        struct stat sb;
        if (!realpath(paths[i], canon) || stat(canon, &sb) != 0)
            st = lp_error_set(err, LP_ERR_IO, "cannot read trace '%s': %s", paths[i], strerror(errno));
        else
            st = add(&k, canon, &sb, (uint32_t)i, 1);
    }
    fp->nroots = (uint32_t)fp->n;
    for (uint32_t r = 0; !st && r < fp->nroots; r++) {
        struct stat sb;
        if (stat(fp->f[r].path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            size_t from = fp->n;
            char root[PATH_MAX];
            snprintf(root, sizeof root, "%s", fp->f[r].path);
            st = walk(&k, root, r, 0);
            if (!st)
                qsort(fp->f + from, fp->n - from, sizeof *fp->f, by_path);
        }
    }
    if (st)
        lp_kindex_fp_release(fp);
    return st;
}
