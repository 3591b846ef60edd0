/* dkcp_index.c: `dist kcp --index DIR` (dkcp.h, docs/distributed.md "Index reuse"):
 * each rank keeps the graph of its own hosts where its traces are, as `cp --thread
 * --index` keeps the graph of all of them, so that a later query neither reads nor
 * re-builds them (the paper's precomputed graphs and "subsequent queries", §III-C).
 *
 * Rank R of K keeps DIR/rankR-of-K.lpkx, an ordinary index (docs/formats/kindex.md) of
 * its partial graph with the fingerprint of its traces, and beside it the sidecar
 * DIR/rankR-of-K.lpkx.dk (dkidx.h): its hosts' ECIs, the vertices of the matched
 * packets' ends, the diagnostics counts and the digest of the match the graph was built
 * with. A later query maps the index after the checks of `cp --thread --index` (stale or
 * foreign: refused, exit 8; corrupt: exit 5; absent: built and written), sends the
 * sidecar's ECIs instead of reading the traces, and uses the graph if the match rank 0
 * sends back has the same digest; if not (another host's trace changed), the rank reads
 * and builds its hosts again and rewrites both files. Either way the answer is the one
 * without --index, byte for byte.
 */
#include "dkcp.h"
#include "longpole/base/alloc.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

const char *dk_idx_name(int idx)
{
    static const char *const n[] = {"none", "used", "written", "rebuilt", "opened"};
    return idx >= 0 && idx <= DK_IDX_OPEN ? n[idx] : "?";
}

static int nomem(dkcp *k)
{
    cli_dist_err(k->D, "out of memory");
    return LP_EXIT_NOMEM;
}

/* This rank's trace paths, in host order (NULL and *n = 0 if it owns none). */
static char **own_paths(dkcp *k, size_t *n)
{
    *n = 0;
    char **p = lp_malloc((k->nh ? k->nh : 1) * sizeof *p);
    for (uint32_t h = 0; p && h < k->nh; h++)
        if (dk_host_is_mine(k, h))
            p[(*n)++] = k->paths[h];
    return p;
}

static int refused(dkcp *k, const char *file, const char *verdict, int rc)
{
    cli_dist_err(k->D, "the index '%s' is %s and was not used; remove it (the next run with --index builds it again)",
                 file, verdict);
    return rc;
}

/* The sidecar, checked against its index and this job. */
static int open_side(dkcp *k)
{
    lp_error err;
    lp_error_clear(&err);
    char side[4200];
    snprintf(side, sizeof side, "%s%s", k->idx_path, LP_DKIDX_SUFFIX);
    lp_status st = lp_dkidx_read(side, &k->side, &err);
    if (st) {
        cli_dist_err(k->D, "%s", err.msg);
        return refused(k, k->idx_path, "corrupt (its sidecar cannot be used)", LP_EXIT_FORMAT);
    }
    uint64_t sum;
    memcpy(&sum, (const uint8_t *)k->idx_g->map + k->idx_g->maplen - 8, 8);
    if (k->side.lpkx_sum != sum || k->side.rank != (uint32_t)k->D->rank || k->side.nranks != (uint32_t)k->D->size ||
        k->side.nhosts != k->nh) {
        cli_dist_err(k->D, "%s: belongs to another index or job (rank %u of %u, %u hosts)", side, k->side.rank,
                     k->side.nranks, k->side.nhosts);
        return refused(k, k->idx_path, "foreign", LP_EXIT_INDEX);
    }
    return 0;
}

int dk_idx_open(dkcp *k)
{
    size_t n;
    char **paths = own_paths(k, &n);
    if (!paths)
        return nomem(k);
    if (!n) { /* no hosts here: nothing to read, nothing to keep */
        lp_free(paths);
        return -2;
    }
    size_t len = strlen(k->index_dir) + 64;
    if (!(k->idx_path = lp_malloc(len))) {
        lp_free(paths);
        return nomem(k);
    }
    snprintf(k->idx_path, len, "%s/rank%d-of-%d%s", k->index_dir, k->D->rank, k->D->size, LP_KINDEX_EXT);
    struct stat sb;
    if (stat(k->idx_path, &sb) != 0 && errno == ENOENT) {
        lp_free(paths);
        if (mkdir(k->index_dir, 0777) != 0 && errno != EEXIST) { /* DIR itself, on this node */
            cli_dist_err(k->D, "cannot create the index directory '%s': %s", k->index_dir, strerror(errno));
            return LP_EXIT_IO;
        }
        return -1;
    }
    lp_error err;
    lp_error_clear(&err);
    lp_kindex_verdict v = LP_KINDEX_OK;
    lp_status st = cli_kindex_map(k->idx_path, paths, n, k->no_sync, k->verify, &k->idx_g, &v, NULL, &err);
    lp_free(paths);
    if (st) {
        if (v != LP_KINDEX_STALE && v != LP_KINDEX_FOREIGN && v != LP_KINDEX_CORRUPT)
            return cli_dist_fail(k->D, &err); /* the traces or the file could not be read */
        cli_dist_err(k->D, "%s", err.msg[0] ? err.msg : lp_status_str(st));
        return refused(k, k->idx_path, lp_kindex_verdict_name(v), cli_kindex_exit(v, st));
    }
    int rc = open_side(k);
    if (!rc)
        k->idx = DK_IDX_OPEN;
    return rc;
}

int dk_idx_own(dkcp *k)
{
    lp_error err;
    lp_error_clear(&err);
    lp_ktrace *sk = NULL;
    if (lp_keci_ktrace_new(k->nh, &sk, &err))
        return cli_dist_fail(k->D, &err);
    lp_drd r = lp_drd_init(k->side.eci, k->side.neci);
    int rc = 0;
    while (!rc && r.off < r.n) {
        uint32_t h;
        if (lp_keci_unpack_host(&r, sk, &h, NULL, NULL, &err)) {
            rc = cli_dist_fail(k->D, &err);
        } else if (!dk_host_is_mine(k, h)) {
            cli_dist_err(k->D, "%s%s: holds host %u, not this rank's", k->idx_path, LP_DKIDX_SUFFIX, h);
            rc = LP_EXIT_FORMAT;
        } else {
            const char *s = lp_strtab_get(&sk->strs, sk->host[h].name);
            if (lp_strtab_intern(&k->own->strs, s, strlen(s), &k->own->host[h].name))
                rc = nomem(k);
        }
    }
    if (!rc)
        rc = dk_index_keys(k, sk);
    lp_ktrace_free(sk);
    k->read_errors = k->side.fig[0], k->read_warnings = k->side.fig[1];
    return rc;
}

int dk_idx_write(dkcp *k, const lp_kgraph *g, const uint32_t *sv, const uint32_t *tv)
{
    size_t n;
    char **paths = own_paths(k, &n);
    if (!paths)
        return nomem(k);
    lp_error err;
    lp_error_clear(&err);
    lp_kindex_fp fp;
    lp_status st = lp_kindex_fingerprint((const char *const *)paths, n, &fp, &err);
    lp_free(paths);
    if (!st) {
        st = lp_kindex_write(g, &fp, k->idx_path, &err);
        lp_kindex_fp_release(&fp);
    }
    lp_dkidx x;
    memset(&x, 0, sizeof x);
    if (!st)
        st = lp_dkidx_lpkx_sum(k->idx_path, &x.lpkx_sum, &err);
    if (!st) {
        x.digest = k->digest;
        x.rank = (uint32_t)k->D->rank, x.nranks = (uint32_t)k->D->size, x.nhosts = k->nh;
        x.fig[0] = k->read_errors, x.fig[1] = k->read_warnings;
        x.fig[2] = k->build_errors, x.fig[3] = k->build_warnings;
        x.npk = k->m.npk;
        x.sv = (uint32_t *)sv, x.tv = (uint32_t *)tv;
        x.eci = k->eci.p, x.neci = k->eci.n;
        char side[4200];
        snprintf(side, sizeof side, "%s%s", k->idx_path, LP_DKIDX_SUFFIX);
        st = lp_dkidx_write(side, &x, &err);
    }
    if (st)
        return cli_dist_fail(k->D, &err);
    cli_dist_err(k->D, "%s the index %s (later queries with --index map it)",
                 k->idx == DK_IDX_REBUILT ? "rewrote" : "wrote", k->idx_path);
    return 0;
}
