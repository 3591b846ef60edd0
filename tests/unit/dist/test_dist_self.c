/* test_dist_self.c: the communicator (dist.h) over the one-rank transport: point to
 * point to itself in FIFO order with tag selection, a receive that would block is an
 * error (not a hang), collectives of one rank, the counters' rules, argument checks,
 * and allocation failures. */
#include "t.h"
#include "longpole/dist/dist.h"
#include "longpole/base/alloc.h"

static void test_p2p(void)
{
    lp_dist *d;
    lp_error err;
    CHECK_EQ_I(lp_dist_open_self(&d, &err), LP_OK);
    CHECK_EQ_I(lp_dist_rank(d), 0);
    CHECK_EQ_I(lp_dist_size(d), 1);
    CHECK_STR(lp_dist_name(d), "self");
    CHECK_EQ_I(lp_dist_send(d, 0, 5, "hello", 5, &err), LP_OK);
    CHECK_EQ_I(lp_dist_send(d, 0, 7, "x", 1, &err), LP_OK);
    CHECK_EQ_I(lp_dist_send(d, 0, 5, "", 0, &err), LP_OK);
    void *buf;
    size_t n;
    int from = -2, tag = -2;
    CHECK_EQ_I(lp_dist_recv(d, LP_DIST_ANY, 7, &buf, &n, &from, &tag, &err), LP_OK); /* by tag, out of order */
    CHECK_EQ_I(n, 1);
    CHECK_EQ_I(tag, 7);
    CHECK_EQ_I(from, 0);
    lp_free(buf);
    CHECK_EQ_I(lp_dist_recv(d, 0, LP_DIST_ANY, &buf, &n, &from, &tag, &err), LP_OK);
    CHECK_EQ_I(n, 5);
    CHECK(memcmp(buf, "hello", 5) == 0);
    CHECK_EQ_I(tag, 5);
    lp_free(buf);
    CHECK_EQ_I(lp_dist_recv(d, LP_DIST_ANY, LP_DIST_ANY, &buf, &n, NULL, NULL, &err), LP_OK);
    CHECK_EQ_I(n, 0);
    lp_free(buf);
    CHECK_EQ_I(lp_dist_recv(d, LP_DIST_ANY, LP_DIST_ANY, &buf, &n, NULL, NULL, &err), LP_ERR_ARG); /* would block */
    CHECK(strstr(err.msg, "would block") != NULL);
    lp_dist_counters c = lp_dist_counters_get(d);
    CHECK_EQ_I(c.msgs_sent, 3);
    CHECK_EQ_I(c.bytes_sent, 6);
    CHECK_EQ_I(c.msgs_recv, 3);
    CHECK_EQ_I(c.bytes_recv, 6);
    /* bad arguments */
    CHECK_EQ_I(lp_dist_send(d, 1, 0, "x", 1, &err), LP_ERR_ARG);
    CHECK_EQ_I(lp_dist_send(d, -1, 0, "x", 1, &err), LP_ERR_ARG);
    CHECK_EQ_I(lp_dist_send(d, 0, LP_DIST_TAG_MAX + 1, "x", 1, &err), LP_ERR_ARG);
    CHECK_EQ_I(lp_dist_recv(d, 3, 0, &buf, &n, NULL, NULL, &err), LP_ERR_ARG);
    CHECK_EQ_I(lp_dist_allreduce_u64(d, NULL, 0, (lp_dist_op)99, &err), LP_ERR_ARG);
    c = lp_dist_counters_get(d);
    CHECK_EQ_I(c.msgs_sent, 3); /* failures count nothing */
    lp_dist_counters_reset(d);
    c = lp_dist_counters_get(d);
    CHECK_EQ_I(c.msgs_sent + c.msgs_recv + c.bytes_sent + c.bytes_recv, 0);
    /* unreceived messages are freed by close */
    CHECK_EQ_I(lp_dist_send(d, 0, 1, "left", 4, &err), LP_OK);
    lp_dist_close(d);
}

static void test_collectives(void)
{
    lp_dist *d;
    lp_error err;
    CHECK_EQ_I(lp_dist_open(&d, &err), LP_OK); /* not under mpirun in ctest: self */
    CHECK_EQ_I(lp_dist_size(d), 1);
    char data[] = "abc";
    void *buf = data;
    size_t n = 3;
    CHECK_EQ_I(lp_dist_bcast(d, 0, &buf, &n, &err), LP_OK);
    CHECK(buf == data && n == 3);
    CHECK_EQ_I(lp_dist_bcast(d, 1, &buf, &n, &err), LP_ERR_ARG);
    void *all = NULL;
    size_t lens[1] = {99};
    CHECK_EQ_I(lp_dist_gather(d, 0, "wxyz", 4, &all, lens, &err), LP_OK);
    CHECK_EQ_I(lens[0], 4);
    CHECK(all && memcmp(all, "wxyz", 4) == 0);
    lp_free(all);
    uint64_t w[2] = {0xf0f0, 7};
    CHECK_EQ_I(lp_dist_allreduce_u64(d, w, 2, LP_DIST_BAND, &err), LP_OK);
    CHECK_EQ_I(w[0], 0xf0f0);
    CHECK_EQ_I(lp_dist_allreduce_u64(d, w, 2, LP_DIST_SUM, &err), LP_OK);
    CHECK_EQ_I(w[1], 7);
    CHECK_EQ_I(lp_dist_barrier(d, &err), LP_OK);
    lp_dist_counters c = lp_dist_counters_get(d);
    CHECK_EQ_I(c.msgs_sent + c.msgs_recv, 0); /* one rank: nothing moves between ranks */
    lp_dist_counters allc[1];
    CHECK_EQ_I(lp_dist_counters_gather(d, 0, allc, &err), LP_OK);
    CHECK_EQ_I(allc[0].bytes_sent, 0);
    CHECK_EQ_I(lp_dist_owner(5, 3), 2);
    CHECK_EQ_I(lp_dist_owner(5, 0), 0);
    CHECK(lp_dist_cpu_seconds() >= 0);
    lp_dist_close(d);
    lp_dist_close(NULL);
}

static void test_nomem(void)
{
    for (long k = 0; k < 6; k++) {
        lp_dist *d = NULL;
        lp_error err;
        lp_alloc_fail_after(k);
        lp_status st = lp_dist_open_self(&d, &err);
        if (!st) {
            st = lp_dist_send(d, 0, 1, "abc", 3, &err);
            void *all = NULL;
            size_t lens[1];
            if (!st)
                st = lp_dist_gather(d, 0, "q", 1, &all, lens, &err);
            lp_free(all);
            lp_dist_close(d);
        }
        lp_alloc_fail_after(-1);
        CHECK(st == LP_OK || st == LP_ERR_NOMEM);
    }
}

static void test_mpi_absent(void)
{
    if (lp_dist_have_mpi())
        return;
    lp_dist *d = (lp_dist *)1;
    lp_error err;
    CHECK_EQ_I(lp_dist_open_mpi(&d, &err), LP_ERR_UNSUPPORTED);
    CHECK(d == NULL);
    CHECK(strstr(err.msg, "without MPI") != NULL);
}

int main(void)
{
    test_p2p();
    test_collectives();
    test_nomem();
    test_mpi_absent();
    return t_done("dist_self");
}
