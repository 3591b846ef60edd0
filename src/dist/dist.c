/* dist.c: the communicator of the distributed analyses (include/longpole/dist/dist.h):
 * argument checks and the per-rank counters around a transport's operations, and the
 * choice of transport.
 *
 * Invariants: d->ops and d->impl are set for the communicator's whole life; the
 * counters grow only by what an operation that succeeded moved (dist.h's rules).
 */
#include "longpole/dist/dist.h"
#include "longpole/base/alloc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

struct lp_dist {
    const lp_dist_ops *ops;
    void *impl;
    int rank, size;
    lp_dist_counters c;
};

lp_status lp_dist_new(const lp_dist_ops *ops, void *impl, int rank, int size, lp_dist **out, lp_error *err)
{
    *out = NULL;
    if (!ops || size < 1 || rank < 0 || rank >= size) {
        if (ops && ops->close)
            ops->close(impl);
        return lp_error_set(err, LP_ERR_ARG, "communicator: rank %d of %d", rank, size);
    }
    lp_dist *d = lp_calloc(1, sizeof *d);
    if (!d) {
        if (ops->close)
            ops->close(impl);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    d->ops = ops, d->impl = impl, d->rank = rank, d->size = size;
    *out = d;
    return LP_OK;
}

void lp_dist_close(lp_dist *d)
{
    if (!d)
        return;
    if (d->ops->close)
        d->ops->close(d->impl);
    lp_free(d);
}

int lp_dist_rank(const lp_dist *d) { return d->rank; }
int lp_dist_size(const lp_dist *d) { return d->size; }
const char *lp_dist_name(const lp_dist *d) { return d->ops->name; }
lp_dist_counters lp_dist_counters_get(const lp_dist *d) { return d->c; }
void lp_dist_counters_reset(lp_dist *d) { memset(&d->c, 0, sizeof d->c); }

int lp_dist_launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

lp_status lp_dist_open(lp_dist **out, lp_error *err)
{
    if (lp_dist_have_mpi() && lp_dist_launched())
        return lp_dist_open_mpi(out, err);
    return lp_dist_open_self(out, err);
}

static lp_status check_rank(const lp_dist *d, int r, int any, const char *what, lp_error *err)
{
    if ((any && r == LP_DIST_ANY) || (r >= 0 && r < d->size))
        return LP_OK;
    return lp_error_set(err, LP_ERR_ARG, "%s: rank %d is not in 0..%d", what, r, d->size - 1);
}

static lp_status check_tag(int tag, int any, lp_error *err)
{
    if ((any && tag == LP_DIST_ANY) || (tag >= 0 && tag <= LP_DIST_TAG_MAX))
        return LP_OK;
    return lp_error_set(err, LP_ERR_ARG, "tag %d is not in 0..%d", tag, LP_DIST_TAG_MAX);
}

static lp_status check_len(size_t n, lp_error *err)
{
    if (n <= LP_DIST_MAX_BYTES)
        return LP_OK;
    return lp_error_set(err, LP_ERR_LIMIT, "a message of %zu bytes (at most %u)", n, LP_DIST_MAX_BYTES);
}

lp_status lp_dist_send(lp_dist *d, int dest, int tag, const void *buf, size_t n, lp_error *err)
{
    lp_status st;
    if ((st = check_rank(d, dest, 0, "send", err)) || (st = check_tag(tag, 0, err)) || (st = check_len(n, err)))
        return st;
    if ((st = d->ops->send(d->impl, dest, tag, buf, n, err)))
        return st;
    d->c.msgs_sent++, d->c.bytes_sent += n;
    return LP_OK;
}

lp_status lp_dist_recv(lp_dist *d, int src, int tag, void **buf, size_t *n, int *from, int *got_tag, lp_error *err)
{
    *buf = NULL, *n = 0;
    int f = -1, t = -1;
    lp_status st;
    if ((st = check_rank(d, src, 1, "receive", err)) || (st = check_tag(tag, 1, err)))
        return st;
    if ((st = d->ops->recv(d->impl, src, tag, buf, n, &f, &t, err)))
        return st;
    if (from)
        *from = f;
    if (got_tag)
        *got_tag = t;
    d->c.msgs_recv++, d->c.bytes_recv += *n;
    return LP_OK;
}

lp_status lp_dist_bcast(lp_dist *d, int root, void **buf, size_t *n, lp_error *err)
{
    lp_status st;
    if ((st = check_rank(d, root, 0, "broadcast", err)) || (d->rank == root && (st = check_len(*n, err))))
        return st;
    if (d->rank != root)
        *buf = NULL, *n = 0;
    if ((st = d->ops->bcast(d->impl, root, buf, n, err)))
        return st;
    if (d->rank == root) {
        d->c.msgs_sent += (uint64_t)(d->size - 1);
        d->c.bytes_sent += (uint64_t)(d->size - 1) * *n;
    } else {
        d->c.msgs_recv++, d->c.bytes_recv += *n;
    }
    return LP_OK;
}

lp_status lp_dist_gather(lp_dist *d, int root, const void *buf, size_t n, void **all, size_t *lens, lp_error *err)
{
    *all = NULL;
    lp_status st;
    if ((st = check_rank(d, root, 0, "gather", err)) || (st = check_len(n, err)))
        return st;
    if ((st = d->ops->gather(d->impl, root, buf, n, all, lens, err)))
        return st;
    if (d->rank == root) {
        for (int r = 0; r < d->size; r++)
            if (r != root)
                d->c.msgs_recv++, d->c.bytes_recv += lens[r];
    } else {
        d->c.msgs_sent++, d->c.bytes_sent += n;
    }
    return LP_OK;
}

lp_status lp_dist_allreduce_u64(lp_dist *d, uint64_t *words, size_t n, lp_dist_op op, lp_error *err)
{
    lp_status st;
    if (op > LP_DIST_BOR)
        return lp_error_set(err, LP_ERR_ARG, "allreduce: unknown operation %d", (int)op);
    if ((st = check_len(n * 8, err)))
        return st;
    if ((st = d->ops->allreduce_u64(d->impl, words, n, op, err)))
        return st;
    if (d->size > 1) {
        d->c.msgs_sent++, d->c.bytes_sent += n * 8;
        d->c.msgs_recv++, d->c.bytes_recv += n * 8;
    }
    return LP_OK;
}

lp_status lp_dist_barrier(lp_dist *d, lp_error *err) { return d->ops->barrier(d->impl, err); }

lp_status lp_dist_counters_gather(lp_dist *d, int root, lp_dist_counters *all, lp_error *err)
{
    lp_dist_counters mine = d->c;
    void *buf = NULL;
    size_t *lens = lp_calloc((size_t)d->size, sizeof *lens);
    if (!lens)
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    lp_status st = check_rank(d, root, 0, "gather", err);
    if (!st)
        st = d->ops->gather(d->impl, root, &mine, sizeof mine, &buf, lens, err);
    if (!st && d->rank == root) {
        for (int r = 0; r < d->size; r++)
            if (lens[r] != sizeof mine)
                st = lp_error_set(err, LP_ERR_FORMAT, "rank %d sent %zu bytes of counters", r, lens[r]);
        if (!st)
            memcpy(all, buf, sizeof mine * (size_t)d->size);
    }
    lp_free(buf);
    lp_free(lens);
    return st;
}

double lp_dist_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}
