/* ktrace.c: lp_ktrace_read: kernel traces of one or more hosts into one lp_ktrace.
 *
 * Each path is one of:
 *  - a CTF trace directory (a `metadata` file beside the stream files): one host,
 *    read by ctf.c through libbabeltrace2;
 *  - a directory without `metadata`: the CTF traces found below it (LTTng's session
 *    layout: SESSION/kernel/, or one folder per host), up to 4 levels deep, in name
 *    order; each is a host;
 *  - a `metadata` file: its directory;
 *  - any other file: ftrace text (tracefs `trace` / `trace_pipe`, `trace-cmd report`,
 *    `longpole record`'s kernel.ftrace), plain, gzip or zstd; one host.
 * A host is named by its trace (CTF env hostname; ftrace: the recorder's header line),
 * else by its directory or file name. Hosts keep the order of the paths. Traces of one
 * host name that follow each other in time are pieces of one run (LTTng rotation chunks,
 * split recordings) and are joined into one host (kchunk.c).
 */
#include "import/kernel/kint.h"
#include "longpole/base/alloc.h"
#include "longpole/codec/io.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

lp_status lp_ktrace_new(lp_ktrace **out, lp_error *err)
{
    lp_ktrace *kt = lp_calloc(1, sizeof *kt);
    if (!kt || lp_strtab_init(&kt->strs)) {
        lp_free(kt);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    *out = kt;
    return LP_OK;
}

void lp_ktrace_free(lp_ktrace *kt)
{
    if (!kt)
        return;
    for (uint32_t i = 0; i < kt->nhosts; i++) {
        lp_free(kt->host[i].ev);
        lp_free(kt->host[i].sock);
    }
    lp_free(kt->host);
    lp_strtab_release(&kt->strs);
    lp_free(kt);
}

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int has_metadata(const char *dir)
{
    char p[4096];
    struct stat sb;
    if ((size_t)snprintf(p, sizeof p, "%s/metadata", dir) >= sizeof p)
        return 0;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

lp_kformat lp_ktrace_detect(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return LP_KFORMAT_NONE;
    if (S_ISDIR(sb.st_mode))
        return has_metadata(path) ? LP_KFORMAT_CTF : LP_KFORMAT_NONE;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(base, "metadata") == 0)
        return LP_KFORMAT_CTF;
    return S_ISREG(sb.st_mode) ? LP_KFORMAT_FTRACE : LP_KFORMAT_NONE;
}

/* ---- one host -------------------------------------------------------------------------- */

static lp_status host_default_name(khb *b, const char *path, lp_error *err)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t s = n;
    while (s > 0 && path[s - 1] != '/')
        s--;
    lp_status st = khb_str(b, path, strlen(path), &b->source, err);
    if (!st && b->name == LP_STR_NONE)
        st = khb_str(b, path + s, n - s, &b->name, err);
    return st;
}

static lp_status read_ctf_host(lp_ktrace *kt, const char *dir, lp_diags *diags, const kread *rc, lp_error *err)
{
    khb b;
    khb_init(&b, kt, diags, dir);
    b.spare = rc->spare;
    b.keep_all = (rc->flags & LP_KREAD_ALL) != 0;
    lp_status st = lp_kctf_read(&b, dir, err);
    if (!st)
        st = host_default_name(&b, dir, err);
    if (st) {
        khb_release(&b);
        return st;
    }
    return khb_finish(&b, err);
}

static lp_status read_ftrace_host(lp_ktrace *kt, const char *path, lp_diags *diags, const kread *rc, lp_error *err)
{
    lp_input *in;
    lp_status st = lp_input_open(&in, path, err);
    if (st)
        return st;
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do { /* the text is read whole: the reader keeps pointers into lines only while parsing */
        if (n + 65536 > cap && lp_grow_at(&buf, &cap, n + 65536, 1)) {
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory reading '%s'", path);
            break;
        }
        st = lp_input_read(in, buf + n, cap - n, &got, err);
        n += got;
    } while (!st && got);
    lp_input_close(in);
    if (!st) {
        khb b;
        khb_init(&b, kt, diags, path);
        b.spare = rc->spare;
        b.keep_all = (rc->flags & LP_KREAD_ALL) != 0;
        st = lp_kftrace_read(&b, buf, n, err);
        if (!st)
            st = host_default_name(&b, path, err);
        if (!st)
            st = khb_finish(&b, err);
        else
            khb_release(&b);
    }
    lp_free(buf);
    return st;
}

/* ---- directories of traces ------------------------------------------------------------- */

static int name_cmp(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Read every CTF trace below `dir` (depth <= 4) in name order; *found counts them. */
static lp_status read_tree(lp_ktrace *kt, const char *dir, int depth, lp_diags *diags, int *found, const kread *rc,
                           lp_error *err)
{
    if (has_metadata(dir)) {
        ++*found;
        return read_ctf_host(kt, dir, diags, rc, err);
    }
    if (depth >= 4)
        return LP_OK;
    DIR *d = opendir(dir);
    if (!d)
        return lp_error_set(err, LP_ERR_IO, "cannot open directory '%s': %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    lp_status st = LP_OK;
    struct dirent *e;
    while (!st && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = lp_malloc(len);
        if (!p || lp_grow_at(&names, &cap, n + 1, sizeof *names)) {
            lp_free(p);
            st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        snprintf(p, len, "%s/%s", dir, e->d_name);
        names[n++] = p;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n && !st; i++)
        if (is_dir(names[i]))
            st = read_tree(kt, names[i], depth + 1, diags, found, rc, err);
    for (size_t i = 0; i < n; i++)
        lp_free(names[i]);
    lp_free(names);
    return st;
}

static lp_status read_path(lp_ktrace *kt, const char *path, lp_diags *diags, const kread *rc, lp_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return lp_error_set(err, LP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) {
        int found = 0;
        lp_status st = read_tree(kt, path, 0, diags, &found, rc, err);
        if (!st && !found)
            st = lp_error_set(err, LP_ERR_FORMAT,
                              "'%s' is not a CTF trace: no 'metadata' file in it or in its subdirectories", path);
        return st;
    }
    const char *base = strrchr(path, '/');
    if (strcmp(base ? base + 1 : path, "metadata") == 0) {
        char dir[4096];
        size_t n = base ? (size_t)(base - path) : 1;
        if (n >= sizeof dir)
            return lp_error_set(err, LP_ERR_ARG, "path too long: '%s'", path);
        memcpy(dir, base ? path : ".", n);
        dir[n] = '\0';
        return read_ctf_host(kt, dir, diags, rc, err);
    }
    return read_ftrace_host(kt, path, diags, rc, err);
}

lp_status lp_ktrace_read(const char *const *paths, size_t npaths, lp_diags *diags, lp_ktrace **out,
                         lp_error *err)
{
    return lp_ktrace_read_flags(paths, npaths, 0, diags, out, err);
}

lp_status lp_ktrace_read_flags(const char *const *paths, size_t npaths, unsigned flags, lp_diags *diags,
                               lp_ktrace **out, lp_error *err)
{
    *out = NULL;
    if (npaths == 0)
        return lp_error_set(err, LP_ERR_ARG, "no kernel trace given");
    lp_ktrace *kt;
    lp_status st = lp_ktrace_new(&kt, err);
    kspare *sp = st ? NULL : lp_calloc(1, sizeof *sp); /* NULL: no reuse (nothing else changes) */
    kread rc = {sp, flags};
    for (size_t i = 0; i < npaths && !st; i++) {
        st = read_path(kt, paths[i], diags, &rc, err);
        if (st)
            lp_error_push(err, "reading kernel trace '%s'", paths[i]);
    }
    if (sp)
        kspare_release(sp);
    lp_free(sp);
    if (!st)
        st = khost_join_chunks(kt, diags, err);
    if (st) {
        lp_ktrace_free(kt);
        return st;
    }
    *out = kt;
    return LP_OK;
}

lp_status lp_ktrace_read_ftrace_mem(const void *data, size_t n, const char *name, lp_diags *diags,
                                    lp_ktrace **out, lp_error *err)
{
    *out = NULL;
    lp_ktrace *kt;
    lp_status st = lp_ktrace_new(&kt, err);
    if (st)
        return st;
    khb b;
    khb_init(&b, kt, diags, name);
    st = lp_kftrace_read(&b, data, n, err);
    if (!st)
        st = host_default_name(&b, name, err);
    if (!st)
        st = khb_finish(&b, err);
    else
        khb_release(&b);
    if (st) {
        lp_ktrace_free(kt);
        return st;
    }
    *out = kt;
    return LP_OK;
}
