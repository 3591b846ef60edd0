/* dist_mpi.c: the Open MPI transport (dist.h) over MPI_COMM_WORLD, compiled only when
 * CMake found MPI (LP_HAVE_MPI); without it, lp_dist_open_mpi says the build has no MPI.
 *
 * Errors are returned (MPI_ERRORS_RETURN on the world communicator) with MPI's own
 * message. Variable-size collectives send the lengths first (a broadcast of one word,
 * a gather of one word per rank), then the bytes (MPI_Bcast, MPI_Gatherv).
 *
 * Invariants: MPI is initialised by the first lp_dist_open_mpi of the process and
 * finalised by the close of that communicator (`owner`); later ones share it.
 */
#include "longpole/dist/dist.h"
#include "longpole/base/alloc.h"

#ifdef LP_HAVE_MPI
#include <mpi.h>
#include <string.h>

typedef struct mpi_impl {
    int owner; /* this communicator initialised MPI: finalise it on close */
} mpi_impl;

int lp_dist_have_mpi(void) { return 1; }

static lp_status mpi_fail(lp_error *err, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        len = 0;
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = 0;
    return lp_error_set(err, LP_ERR_IO, "MPI %s: %s", what, len ? msg : "failed");
}

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static lp_status m_send(void *impl, int dest, int tag, const void *buf, size_t n, lp_error *err)
{
    (void)impl;
    int rc = MPI_Send(buf, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? LP_OK : mpi_fail(err, rc, "send");
}

static lp_status m_recv(void *impl, int src, int tag, void **buf, size_t *n, int *from, int *got_tag, lp_error *err)
{
    (void)impl;
    MPI_Status s;
    int count = 0;
    int rc = MPI_Probe(src == LP_DIST_ANY ? MPI_ANY_SOURCE : src, tag == LP_DIST_ANY ? MPI_ANY_TAG : tag,
                       MPI_COMM_WORLD, &s);
    if (rc != MPI_SUCCESS)
        return mpi_fail(err, rc, "probe");
    if ((rc = MPI_Get_count(&s, MPI_BYTE, &count)) != MPI_SUCCESS || count < 0)
        return mpi_fail(err, rc, "message length");
    void *p = lp_malloc(count ? (size_t)count : 1);
    if (!p)
        return nomem(err);
    if ((rc = MPI_Recv(p, count, MPI_BYTE, s.MPI_SOURCE, s.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
        lp_free(p);
        return mpi_fail(err, rc, "receive");
    }
    *buf = p, *n = (size_t)count, *from = s.MPI_SOURCE, *got_tag = s.MPI_TAG;
    return LP_OK;
}

static lp_status m_bcast(void *impl, int root, void **buf, size_t *n, lp_error *err)
{
    (void)impl;
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    unsigned long long len = me == root ? (unsigned long long)*n : 0;
    int rc = MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        return mpi_fail(err, rc, "broadcast");
    if (me != root) {
        if (!(*buf = lp_malloc(len ? (size_t)len : 1)))
            return nomem(err); /* the other ranks are now stuck in the next MPI_Bcast: MPI aborts on exit */
        *n = (size_t)len;
    }
    if (len && (rc = MPI_Bcast(*buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD)) != MPI_SUCCESS) {
        if (me != root) {
            lp_free(*buf);
            *buf = NULL, *n = 0;
        }
        return mpi_fail(err, rc, "broadcast");
    }
    return LP_OK;
}

static lp_status m_gather(void *impl, int root, const void *buf, size_t n, void **all, size_t *lens, lp_error *err)
{
    (void)impl;
    int me = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int len = (int)n, *cnt = NULL, *disp = NULL;
    char *out = NULL;
    lp_status st = LP_OK;
    if (me == root && (!(cnt = lp_calloc((size_t)size, sizeof *cnt)) || !(disp = lp_calloc((size_t)size, sizeof *disp)))) {
        st = nomem(err);
        goto done;
    }
    int rc = MPI_Gather(&len, 1, MPI_INT, cnt, 1, MPI_INT, root, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        st = mpi_fail(err, rc, "gather");
        goto done;
    }
    size_t total = 0;
    if (me == root) {
        for (int r = 0; r < size; r++) {
            if (total + (size_t)cnt[r] > LP_DIST_MAX_BYTES) {
                st = lp_error_set(err, LP_ERR_LIMIT, "gather: more than %u bytes in all", LP_DIST_MAX_BYTES);
                goto done; /* the others are past the gather of lengths and stuck in Gatherv: MPI aborts on exit */
            }
            disp[r] = (int)total;
            lens[r] = (size_t)cnt[r];
            total += (size_t)cnt[r];
        }
        if (!(out = lp_malloc(total ? total : 1))) {
            st = nomem(err);
            goto done;
        }
    }
    if ((rc = MPI_Gatherv(buf, len, MPI_BYTE, out, cnt, disp, MPI_BYTE, root, MPI_COMM_WORLD)) != MPI_SUCCESS) {
        st = mpi_fail(err, rc, "gather");
        goto done;
    }
    if (me == root)
        *all = out, out = NULL;
done:
    lp_free(out);
    lp_free(cnt);
    lp_free(disp);
    return st;
}

static lp_status m_allreduce(void *impl, uint64_t *words, size_t n, lp_dist_op op, lp_error *err)
{
    (void)impl;
    MPI_Op o = op == LP_DIST_BAND ? MPI_BAND : op == LP_DIST_SUM ? MPI_SUM : op == LP_DIST_MAX ? MPI_MAX
               : op == LP_DIST_MIN ? MPI_MIN : MPI_BOR;
    int rc = MPI_Allreduce(MPI_IN_PLACE, words, (int)n, MPI_UINT64_T, o, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? LP_OK : mpi_fail(err, rc, "allreduce");
}

static lp_status m_barrier(void *impl, lp_error *err)
{
    (void)impl;
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? LP_OK : mpi_fail(err, rc, "barrier");
}

static void m_close(void *impl)
{
    mpi_impl *m = impl;
    int fin = 0;
    if (m && m->owner && MPI_Finalized(&fin) == MPI_SUCCESS && !fin)
        MPI_Finalize();
    lp_free(m);
}

static const lp_dist_ops mpi_ops = {"mpi", m_send, m_recv, m_bcast, m_gather, m_allreduce, m_barrier, m_close};

lp_status lp_dist_open_mpi(lp_dist **out, lp_error *err)
{
    *out = NULL;
    mpi_impl *m = lp_calloc(1, sizeof *m);
    if (!m)
        return nomem(err);
    int init = 0, rc;
    MPI_Initialized(&init);
    if (!init) {
        if ((rc = MPI_Init(NULL, NULL)) != MPI_SUCCESS) {
            lp_free(m);
            return mpi_fail(err, rc, "init");
        }
        m->owner = 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return lp_dist_new(&mpi_ops, m, rank, size, out, err);
}

#else /* built without MPI */

int lp_dist_have_mpi(void) { return 0; }

lp_status lp_dist_open_mpi(lp_dist **out, lp_error *err)
{
    *out = NULL;
    return lp_error_set(err, LP_ERR_UNSUPPORTED, "built without MPI (install libopenmpi-dev and rebuild)");
}

#endif
