/* test_khost.c: the host builder (src/import/kernel/khost.c) against a naive twin on
 * thousands of random hosts: per-CPU streams pushed with stamps that step back, the
 * order counted while pushing (reordered events, runs), each stream sorted stably, the
 * streams merged by (stamp, stream), then in one pass the thread of every event (from
 * the switches, statedump RUN entries and the tracer's own context) with the backward
 * fill of the events before their CPU's next switch limited to the prefix that needs it.
 * The twin does it the plain way: a full stable sort of every event by (stamp, stream,
 * push order), a forward pass and a backward pass over the whole host (what khost.c did
 * before the passes were fused). Hosts are built one after another through one set of
 * spare stream arrays (as lp_ktrace_read does) and again without: same answers. Half the
 * hosts carry no tracer context: there the unused events (LP_KEV_OTHER) that are not the
 * first or last of their stream are not kept, and the twin removes them from its merged
 * list afterwards, giving each switch that follows dropped events of its CPU the last
 * one's stamp (LP_KEVF_PREV). */
#include "ktest.h"
#include "import/kernel/kint.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

typedef struct tev {
    lp_kev e;
    uint32_t stream, seq; /* seq: push order within the host */
} tev;

static int tev_cmp(const void *x, const void *y)
{
    const tev *a = x, *b = y;
    if (a->e.ts != b->e.ts)
        return a->e.ts < b->e.ts ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The twin's ctx_tid of every event, in its merged order. */
static void naive_context(tev *t, size_t n, uint32_t ncpus)
{
    int32_t cur[8];
    for (uint32_t c = 0; c < ncpus; c++)
        cur[c] = -1;
    for (size_t i = 0; i < n; i++) {
        lp_kev *e = &t[i].e;
        if (e->type == LP_KEV_STATEDUMP_PROCESS && e->a == 6 && e->b >= 0 && e->b < ncpus && cur[e->b] < 0)
            cur[e->b] = e->tid;
        if (e->ctx_tid < 0)
            e->ctx_tid = e->type == LP_KEV_SCHED_SWITCH && cur[e->cpu] < 0 ? e->tid : cur[e->cpu];
        cur[e->cpu] = e->type == LP_KEV_SCHED_SWITCH ? e->tid2 : e->ctx_tid;
    }
    for (uint32_t c = 0; c < ncpus; c++)
        cur[c] = -1;
    for (size_t i = n; i-- > 0;) {
        lp_kev *e = &t[i].e;
        if (e->type == LP_KEV_SCHED_SWITCH)
            cur[e->cpu] = e->tid;
        else if (e->ctx_tid < 0)
            e->ctx_tid = cur[e->cpu];
    }
}

static int32_t rtid(void) { return rnd(10) == 0 ? -1 : (int32_t)(1 + rnd(6)); }

/* One random host of n events on ncpus CPUs (one stream each). */
static size_t random_host(tev *t, size_t n, uint32_t ncpus, int withctx)
{
    int64_t clock[8] = {0};
    for (size_t i = 0; i < n; i++) {
        uint32_t cpu = rnd(ncpus);
        int64_t ts = clock[cpu] + (int64_t)rnd(5);
        if (rnd(12) == 0)
            ts -= (int64_t)rnd(20); /* a step back, as at LTTng packet boundaries */
        clock[cpu] = ts > clock[cpu] ? ts : clock[cpu];
        lp_kev e;
        memset(&e, 0, sizeof e);
        e.ts = ts;
        e.cpu = cpu;
        e.ctx_tid = withctx && rnd(6) == 0 ? rtid() : -1; /* sometimes the tracer's own context */
        e.name = e.name2 = LP_STR_NONE;
        uint32_t k = rnd(10);
        if (k < 4) {
            e.type = LP_KEV_SCHED_SWITCH;
            e.tid = rtid();
            e.tid2 = rtid();
        } else if (k == 4) {
            e.type = LP_KEV_STATEDUMP_PROCESS;
            e.tid = rtid();
            e.a = rnd(2) ? 6 : 1;
            e.b = rnd(5) == 0 ? -1 : (int64_t)rnd(ncpus + 1);
        } else if (k == 5 || (!withctx && k >= 8)) {
            e.type = LP_KEV_OTHER;
        } else {
            e.type = LP_KEV_SCHED_WAKEUP;
            e.tid = rtid();
        }
        e.key = i; /* identifies the event in the builder's output */
        t[i] = (tev){e, cpu, (uint32_t)i};
    }
    return n;
}

static int build(lp_ktrace *kt, const tev *t, size_t n, kspare *sp)
{
    khb b;
    khb_init(&b, kt, NULL, "random");
    b.spare = sp;
    lp_error err;
    for (size_t i = 0; i < n; i++)
        if (khb_push(&b, t[i].stream, &t[i].e, &err)) {
            khb_release(&b);
            return -1;
        }
    return khb_finish(&b, &err) ? -1 : 0;
}

/* Every allocation of khb_finish failing in turn, on hosts without context (the drop's
 * arrays among them) of one and of three streams: LP_ERR_NOMEM or success, nothing freed
 * twice or leaked (ASan runs this too). */
static void nomem(void)
{
    static tev t[64];
    for (uint32_t ncpus = 1; ncpus <= 3; ncpus += 2) {
        size_t n = random_host(t, 64, ncpus, 0);
        int ok = 0;
        for (long k = 0; k < 40 && !ok; k++) {
            lp_ktrace *kt;
            lp_error err;
            CHECK(lp_ktrace_new(&kt, &err) == LP_OK);
            khb b;
            khb_init(&b, kt, NULL, "nomem");
            for (size_t i = 0; i < n; i++)
                CHECK(khb_push(&b, t[i].stream, &t[i].e, &err) == LP_OK);
            lp_alloc_fail_after(k);
            lp_status st = khb_finish(&b, &err);
            lp_alloc_fail_after(-1);
            CHECK(st == LP_OK || st == LP_ERR_NOMEM);
            ok = st == LP_OK;
            CHECK(!ok || (kt->nhosts == 1 && kt->host[0].ndropped > 0));
            lp_ktrace_free(kt);
        }
        CHECK(ok); /* enough allocations allowed: it succeeds */
    }
}

int main(void)
{
    nomem();
    enum { HOSTS = 4000, MAXN = 300 };
    static tev t[MAXN], twin[MAXN];
    lp_ktrace *a, *b;
    lp_error err;
    CHECK(lp_ktrace_new(&a, &err) == LP_OK && lp_ktrace_new(&b, &err) == LP_OK);
    kspare *sp = calloc(1, sizeof *sp);
    CHECK(sp != NULL);
    size_t bad_ctx = 0, bad_order = 0, bad_counts = 0, bad_prev = 0;
    uint64_t ndropped_total = 0;
    for (int h = 0; h < HOSTS; h++) {
        uint32_t ncpus = 1 + rnd(4);
        int withctx = h % 2;
        size_t n = random_host(t, rnd(MAXN + 1), ncpus, withctx);
        /* the builder, through the spares (a) and without (b) */
        CHECK(build(a, t, n, sp) == 0);
        CHECK(build(b, t, n, NULL) == 0);
        /* the twin: per-stream out-of-order count, the full stable sort, both passes */
        uint64_t nout = 0, nother = 0;
        int64_t mx[8];
        int seen[8] = {0};
        for (size_t i = 0; i < n; i++) {
            uint32_t s = t[i].stream;
            if (seen[s] && t[i].e.ts < mx[s])
                nout++;
            else
                mx[s] = t[i].e.ts, seen[s] = 1;
            nother += t[i].e.type == LP_KEV_OTHER;
        }
        memcpy(twin, t, n * sizeof *t);
        qsort(twin, n, sizeof *twin, tev_cmp);
        naive_context(twin, n, ncpus);
        /* without a context anywhere: the unused events inside their stream go */
        uint64_t ndrop = 0;
        int any_ctx = 0;
        for (size_t i = 0; i < n; i++)
            any_ctx |= t[i].e.ctx_tid >= 0;
        if (!any_ctx) {
            size_t first[8], last[8], m = 0;
            int64_t pend[8];
            for (uint32_t s = 0; s < 8; s++)
                first[s] = last[s] = SIZE_MAX, pend[s] = INT64_MIN;
            for (size_t i = 0; i < n; i++) {
                uint32_t s = twin[i].stream;
                first[s] = first[s] == SIZE_MAX ? i : first[s];
                last[s] = i;
            }
            for (size_t i = 0; i < n; i++) {
                lp_kev *e = &twin[i].e;
                uint32_t s = twin[i].stream;
                if (e->type == LP_KEV_OTHER && i != first[s] && i != last[s]) {
                    pend[e->cpu] = e->ts;
                    ndrop++;
                    continue;
                }
                if (e->type == LP_KEV_SCHED_SWITCH && pend[e->cpu] != INT64_MIN)
                    e->b = pend[e->cpu], e->kfl |= LP_KEVF_PREV;
                pend[e->cpu] = INT64_MIN;
                twin[m++] = twin[i];
            }
            ndropped_total += ndrop;
        }
        size_t nkept = n - ndrop;
        for (int which = 0; which < 2; which++) {
            const lp_khost *H = which ? &b->host[b->nhosts - 1] : &a->host[a->nhosts - 1];
            if (H->nev != nkept || H->ndropped != ndrop || H->nreordered != nout || H->nother != nother) {
                bad_counts++;
                continue;
            }
            for (size_t i = 0; i < nkept; i++) {
                if (H->ev[i].key != twin[i].e.key)
                    bad_order++;
                else if (H->ev[i].ctx_tid != twin[i].e.ctx_tid)
                    bad_ctx++;
                else if ((H->ev[i].kfl & LP_KEVF_PREV) != (twin[i].e.kfl & LP_KEVF_PREV) ||
                         ((H->ev[i].kfl & LP_KEVF_PREV) && H->ev[i].b != twin[i].e.b))
                    bad_prev++;
            }
        }
        /* keep memory flat: the hosts are checked, free their events */
        lp_free(a->host[a->nhosts - 1].ev), a->host[a->nhosts - 1].ev = NULL;
        lp_free(b->host[b->nhosts - 1].ev), b->host[b->nhosts - 1].ev = NULL;
    }
    CHECK_EQ_I(bad_counts, 0);
    CHECK_EQ_I(bad_order, 0);
    CHECK_EQ_I(bad_ctx, 0);
    CHECK_EQ_I(bad_prev, 0);
    CHECK(ndropped_total > 10000); /* the drop was exercised */
    kspare_release(sp);
    free(sp);
    lp_ktrace_free(a);
    lp_ktrace_free(b);
    return t_done("test_khost");
}
