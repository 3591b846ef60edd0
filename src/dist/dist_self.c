/* dist_self.c: the one-rank transport (dist.h): a process alone, or a unit test. A
 * message sent to itself waits in a FIFO queue until received; collectives are
 * copies. Receiving when no queued message matches is LP_ERR_ARG ("would block"):
 * with one rank nothing else could ever send it, so waiting would be a hang.
 *
 * Invariants: the queue holds messages in the order sent; each owns its buffer.
 */
#include "longpole/dist/dist.h"
#include "longpole/base/alloc.h"

#include <string.h>

typedef struct self_msg {
    struct self_msg *next;
    int tag;
    size_t n;
    void *buf;
} self_msg;

typedef struct self_impl {
    self_msg *head, *tail;
} self_impl;

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

static void *dup_buf(const void *buf, size_t n)
{
    void *p = lp_malloc(n ? n : 1);
    if (p && n)
        memcpy(p, buf, n);
    return p;
}

static lp_status self_send(void *impl, int dest, int tag, const void *buf, size_t n, lp_error *err)
{
    (void)dest;
    self_impl *s = impl;
    self_msg *m = lp_calloc(1, sizeof *m);
    if (!m || !(m->buf = dup_buf(buf, n))) {
        lp_free(m);
        return nomem(err);
    }
    m->tag = tag, m->n = n;
    if (s->tail)
        s->tail->next = m;
    else
        s->head = m;
    s->tail = m;
    return LP_OK;
}

static lp_status self_recv(void *impl, int src, int tag, void **buf, size_t *n, int *from, int *got_tag, lp_error *err)
{
    (void)src;
    self_impl *s = impl;
    self_msg *prev = NULL, *m = s->head;
    while (m && tag != LP_DIST_ANY && m->tag != tag)
        prev = m, m = m->next;
    if (!m)
        return lp_error_set(err, LP_ERR_ARG, "receive on the one-rank transport: no message with tag %d was sent "
                                             "(would block forever)", tag);
    if (prev)
        prev->next = m->next;
    else
        s->head = m->next;
    if (s->tail == m)
        s->tail = prev;
    *buf = m->buf, *n = m->n, *from = 0, *got_tag = m->tag;
    lp_free(m);
    return LP_OK;
}

static lp_status self_bcast(void *impl, int root, void **buf, size_t *n, lp_error *err)
{
    (void)impl, (void)root, (void)buf, (void)n, (void)err;
    return LP_OK; /* the root is the only rank: its buffer stays its own */
}

static lp_status self_gather(void *impl, int root, const void *buf, size_t n, void **all, size_t *lens, lp_error *err)
{
    (void)impl, (void)root;
    if (!(*all = dup_buf(buf, n)))
        return nomem(err);
    lens[0] = n;
    return LP_OK;
}

static lp_status self_allreduce(void *impl, uint64_t *words, size_t n, lp_dist_op op, lp_error *err)
{
    (void)impl, (void)words, (void)n, (void)op, (void)err;
    return LP_OK; /* the reduction of one value is itself */
}

static lp_status self_barrier(void *impl, lp_error *err)
{
    (void)impl, (void)err;
    return LP_OK;
}

static void self_close(void *impl)
{
    self_impl *s = impl;
    while (s && s->head) {
        self_msg *m = s->head;
        s->head = m->next;
        lp_free(m->buf);
        lp_free(m);
    }
    lp_free(s);
}

static const lp_dist_ops self_ops = {"self", self_send, self_recv, self_bcast, self_gather, self_allreduce,
                                     self_barrier, self_close};

lp_status lp_dist_open_self(lp_dist **out, lp_error *err)
{
    *out = NULL;
    self_impl *s = lp_calloc(1, sizeof *s);
    if (!s)
        return nomem(err);
    return lp_dist_new(&self_ops, s, 0, 1, out, err);
}
