/* kload.c: the execution graph of kernel traces for the CLI (kcli.h): read every trace
 * (lp_ktrace_read), match packets and synchronise the hosts' clocks (lp_kmatch_run),
 * build the graph (lp_kgraph_build), keeping what the readers and the build adjusted for
 * the output; or, with --index, map the persisted graph after checking it against the
 * traces as they are now (lp_kindex_open with their fingerprint). An index that is
 * stale or foreign is refused (exit 8), a corrupt one too (exit 5); one that does not
 * exist is built and written. */
#include "kcli.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static char *dup_str(const char *s) { return lp_strndup(s ? s : "", s ? strlen(s) : 0); }

void cli_kgraph_release(cli_kgraph *k)
{
    for (uint32_t h = 0; h < k->nhosts_read; h++) {
        lp_free(k->host[h].name_own);
        lp_free(k->host[h].source_own);
    }
    lp_free(k->host);
    if (k->have_match)
        lp_kmatch_release(&k->m);
    lp_kgraph_free(k->g);
    memset(k, 0, sizeof *k);
}

static int keep_hosts(cli_kgraph *k, const lp_ktrace *kt)
{
    k->host = lp_calloc(kt->nhosts ? kt->nhosts : 1, sizeof *k->host);
    if (!k->host)
        return -1;
    for (uint32_t h = 0; h < kt->nhosts; h++, k->nhosts_read++) {
        const lp_khost *s = &kt->host[h];
        cli_khost *d = &k->host[h];
        d->name = d->name_own = dup_str(lp_strtab_get(&kt->strs, s->name));
        d->source = d->source_own = dup_str(s->source == LP_STR_NONE ? NULL : lp_strtab_get(&kt->strs, s->source));
        if (!d->name_own || !d->source_own)
            return -1;
        d->nev = s->nev + s->ndropped, d->nreordered = s->nreordered, d->nlost = s->nlost, d->nbad = s->nbad;
        d->nother = s->nother, d->nsock = s->nsock, d->bytes = s->bytes, d->ncpus = s->ncpus;
        d->nstreams = s->nstreams;
        d->nchunks = s->nchunks;
    }
    return 0;
}

/* read, match, build */
static int build(const char *cmd, const cli_kload *o, char **paths, int npaths, lp_diags *ds, cli_kgraph *k)
{
    lp_error err;
    lp_error_clear(&err);
    lp_ktrace *kt = NULL;
    lp_status st = lp_ktrace_read((const char *const *)paths, (size_t)npaths, ds, &kt, &err);
    if (st)
        return cli_fail(cmd, &err);
    if (keep_hosts(k, kt)) {
        lp_ktrace_free(kt);
        fprintf(stderr, "longpole %s: out of memory\n", cmd);
        return LP_EXIT_NOMEM;
    }
    if ((st = lp_kmatch_run(kt, &k->m, &err))) {
        lp_ktrace_free(kt);
        return cli_fail(cmd, &err);
    }
    k->have_match = 1;
    lp_kgraph_opts go = {.threads = 0, .no_sync = o->no_sync};
    st = lp_kgraph_build(kt, &k->m, &go, ds, &k->g, &err);
    lp_ktrace_free(kt);
    if (st)
        return cli_fail(cmd, &err);
    if (!k->g->nworkers) { /* never an index or a path of nothing (docs/trust.md) */
        fprintf(stderr, "longpole %s: the kernel trace holds no thread (no scheduling events): there is nothing to "
                        "analyse\n", cmd);
        return LP_EXIT_EMPTY;
    }
    return 0;
}

int cli_kindex_exit(lp_kindex_verdict v, lp_status st)
{
    if (v == LP_KINDEX_STALE || v == LP_KINDEX_FOREIGN)
        return LP_EXIT_INDEX;
    if (v == LP_KINDEX_CORRUPT)
        return LP_EXIT_FORMAT;
    return cli_exit_for(st);
}

/* --index F: map it if it is the index of these traces with this clock option. Returns
 * 0 with k->g set, -1 if F does not exist (build it), or an exit status. */
static int open_index(const char *cmd, const cli_kload *o, char **paths, int npaths, cli_kgraph *k)
{
    struct stat sb;
    if (stat(o->index, &sb) != 0 && errno == ENOENT)
        return -1;
    lp_error err;
    lp_error_clear(&err);
    lp_kindex_verdict v = LP_KINDEX_OK;
    lp_kindex_info info;
    lp_status st = cli_kindex_map(o->index, paths, (size_t)npaths, o->no_sync, o->verify, &k->g, &v, &info, &err);
    if (!st) {
        k->from_index = 1;
        k->index_stamped = info.stamped;
        return 0;
    }
    cli_progress_done();
    fprintf(stderr, "longpole %s: %s\n", cmd, err.msg[0] ? err.msg : lp_status_str(st));
    if (v == LP_KINDEX_STALE || v == LP_KINDEX_FOREIGN || v == LP_KINDEX_CORRUPT)
        fprintf(stderr, "longpole %s: the index '%s' is %s and was not used; rebuild it with `longpole index%s TRACE... "
                        "-o %s` (or remove it)\n",
                cmd, o->index, lp_kindex_verdict_name(v), o->no_sync ? " --no-sync" : "", o->index);
    return cli_kindex_exit(v, st);
}

lp_status cli_kindex_map(const char *file, char *const *paths, size_t npaths, int no_sync, int verify, lp_kgraph **g,
                         lp_kindex_verdict *v, lp_kindex_info *info, lp_error *err)
{
    lp_kindex_fp fp;
    lp_status st = lp_kindex_fingerprint((const char *const *)paths, npaths, &fp, err);
    if (st)
        return st;
    lp_kindex_expect ex = {&fp, no_sync ? 0 : 1, 0, (unsigned)verify};
    st = lp_kindex_open_info(file, &ex, g, v, info, err);
    lp_kindex_fp_release(&fp);
    return st;
}

int cli_kindex_write(const char *cmd, const cli_kgraph *k, char **paths, int npaths, const char *file)
{
    lp_error err;
    lp_error_clear(&err);
    lp_kindex_fp fp;
    lp_status st = lp_kindex_fingerprint((const char *const *)paths, (size_t)npaths, &fp, &err);
    if (!st) {
        st = lp_kindex_write(k->g, &fp, file, &err);
        lp_kindex_fp_release(&fp);
    }
    return st ? cli_fail(cmd, &err) : 0;
}

int cli_kgraph_load(const char *cmd, const cli_kload *o, char **paths, int npaths, cli_kgraph *k)
{
    memset(k, 0, sizeof *k);
    k->no_sync = o->no_sync;
    if (o->index) {
        int rc = open_index(cmd, o, paths, npaths, k);
        if (rc >= 0)
            return rc;
    }
    lp_diags ds;
    size_t max = o->max_diags ? o->max_diags : 20;
    lp_diags_init(&ds, o->quiet ? 0 : max);
    int rc = build(cmd, o, paths, npaths, &ds, k);
    cli_print_diags(&ds, o->quiet ? 0 : max);
    k->diag_errors = ds.nerrors;
    k->diag_warnings = ds.nwarnings;
    lp_diags_release(&ds);
    if (!rc && o->index) {
        if (!(rc = cli_kindex_write(cmd, k, paths, npaths, o->index))) {
            k->wrote_index = 1;
            fprintf(stderr, "longpole %s: wrote the index %s (later queries with --index map it)\n", cmd, o->index);
        }
    }
    if (rc)
        cli_kgraph_release(k);
    return rc;
}

const char *cli_kclock_quality(unsigned q)
{
    static const char *const names[] = {"reference", "accurate", "approximate", "fail", "absent"};
    return q < sizeof names / sizeof *names ? names[q] : "?";
}

void cli_kcp_unexplained(const lp_kcp *cp, uint64_t *n, uint64_t *nnet, int64_t *ns, int64_t *netns)
{
    *n = *nnet = 0;
    *ns = *netns = 0;
    for (size_t i = 0; i < cp->n; i++) {
        const lp_kcp_elem *e = &cp->e[i];
        if (!(e->flags & LP_KCP_UNEXPLAINED))
            continue;
        (*n)++;
        *ns += e->end - e->start;
        if (e->kind == LP_KCP_STATE && e->reason == LP_KR_NETWORK) {
            (*nnet)++;
            *netns += e->end - e->start;
        }
    }
}
