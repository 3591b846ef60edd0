/* cptrace.c: the whole-trace critical path straight from the trace's columns
 * (lp_cpath_trace, cpath.h): the same path, element for element, as lp_cpath_compute
 * over the program activity graph, without building the graph.
 *
 * The PAG's vertices of worker w are the distinct instants of three sorted streams:
 * its activity boundaries, its send times and its receive times (pag.c). Here they
 * are visited without being stored: each worker keeps a cursor into its three streams
 * (wcur). The longest-path step (graph/lpath.h) keeps origin vertices, but every
 * choice it makes compares their times, so here a path's origin is its time.
 *  - Pass 1 visits every instant in the dependency order of graph/topo.h, with the same
 *    discipline: workers run as far as they can, lowest first; a receive whose send
 *    instant is not yet visited suspends its worker and pushes the sender's with that
 *    instant as target; a sender already on the stack closes a (zero-time) cycle and
 *    the message is ignored and counted. A send instant is visited once its worker's
 *    last visited instant is at or after it, so the walk is the PAG walk step for step
 *    and ignores the same messages. Per worker it keeps the origin time of the instant
 *    last visited; per message it writes sorg[m], the origin at m's send instant.
 *  - Pass 2 walks back from the last instant. Along a run of live worker edges (none
 *    `waiting` or uncovered) the origin is the minimum of the run start's time and the
 *    sorg of the messages received since, so the walk back from instant T with origin o
 *    follows the worker's activities back to the first instant where that minimum
 *    reaches o: the first receive with sorg == o (its first in message order), or the
 *    run start when o is its time (then the first message received there with sorg == o,
 *    or nothing: the path starts). Every instant on the path has the path's origin o,
 *    and a run's instants before the one left are all later than o, so the path never
 *    re-enters a run it left: pass 2 reads each run at most once. The stretches (worker,
 *    from, to, message taken) are kept, the per-message arrays freed, and the elements
 *    written once, in time order, into an array of their exact size.
 * Memory: 16 bytes per message in pass 1 (send and receive lists, sorg), 12 in pass 2,
 * 32 per path element after; 40 per worker; nothing per activity or instant.
 * Big traces use two threads (base/pool.h): the send and receive lists are built at
 * once, and lp_cpath_analyse (what `cp` runs) computes the breakdowns' profile, which
 * does not depend on the path, beside the walk; the results are the same.
 */
#include "longpole/analysis/critical-path/breakdown.h"
#include "longpole/base/alloc.h"
#include "base/pool.h"

#include <string.h>

/* A worker's place in its three streams. */
typedef struct wcur {
    uint64_t b;      /* activity boundaries passed: boundary k is activity wfirst+k/2's start (k even) or end */
    uint64_t si, ri; /* next send, next receive (indices into the endpoint lists) */
    int64_t last;    /* the last instant visited (when started) */
    int64_t org;     /* origin time of the longest path into it */
    uint8_t started, onstk;
} wcur;

typedef struct cpw {
    const lp_trace *t;
    lp_endpoints snd, rcv; /* message indices only: times are read from the trace */
    int64_t *sorg;         /* [nmsgs] origin time at each message's send instant */
    wcur *wc;              /* [nworkers] */
    uint32_t *stk;         /* [nworkers] workers waiting, the running one on top */
    int64_t *target;       /* [nworkers] instant each must reach */
    uint8_t *ign;          /* [nmsgs] messages ignored to break cycles, NULL until the first */
    uint64_t ncycles;
} cpw;

/* Is message m a link of the graph (not skewed, not ignored)? */
static inline int is_link(const cpw *f, uint32_t m)
{
    return !(f->t->mflags[m] & LP_MSG_SKEW) && !(f->ign && f->ign[m]);
}

/* Before visiting instant tv of worker w, whose receives there are rcv.msg[r0 .. r1):
 * is every send instant they need visited? If not, the first sender needed is pushed
 * (returns 1) or, when it is on the stack already, that message is ignored (a cycle)
 * and the others looked at again. -1: out of memory. */
static int wait_senders(cpw *f, uint64_t r0, uint64_t r1, size_t *sp)
{
    const lp_trace *t = f->t;
    for (uint64_t k = r0; k < r1; k++) {
        uint32_t m = f->rcv.msg[k];
        if (!is_link(f, m))
            continue;
        const wcur *x = &f->wc[t->msrc[m]];
        if (x->started && t->msend[m] <= x->last)
            continue;
        if (x->onstk) { /* a cycle: ignore this message, look again */
            if (!f->ign && !(f->ign = lp_calloc(t->nmsgs, 1)))
                return -1;
            f->ign[m] = 1;
            f->ncycles++;
            k = r0 - 1; /* (unsigned: the loop's k++ brings it back to r0) */
            continue;
        }
        f->stk[*sp] = t->msrc[m];
        f->target[(*sp)++] = t->msend[m];
        f->wc[t->msrc[m]].onstk = 1;
        return 1;
    }
    return 0;
}

/* Worker w (on top of the stack) runs until its next instant is after tgt or needs
 * a sender pushed (returns 1; -1: out of memory). The next boundary, send and receive
 * times are kept in registers (INT64_MAX past the end: the indices decide). */
static int advance(cpw *f, uint32_t w, int64_t tgt, size_t *sp)
{
    const lp_trace *t = f->t;
    const uint32_t *smsg = f->snd.msg, *rmsg = f->rcv.msg;
    const int64_t *msend = t->msend, *mrecv = t->mrecv, *astart = t->astart, *aend = t->aend;
    int64_t *sorg = f->sorg;
    wcur c = f->wc[w];
    const uint64_t a0 = t->wfirst[w], nb = 2 * (t->wfirst[w + 1] - a0);
    const uint64_t se = f->snd.off[w + 1], re = f->rcv.off[w + 1];
#define BT(k) ((k) < nb ? (((k) & 1) ? aend[a0 + (k) / 2] : astart[a0 + (k) / 2]) : INT64_MAX)
    int64_t nbt = BT(c.b), nst = c.si < se ? msend[smsg[c.si]] : INT64_MAX;
    int64_t nrt = c.ri < re ? mrecv[rmsg[c.ri]] : INT64_MAX;
    int rc = 0;
    while (c.b < nb || c.si < se || c.ri < re) {
        int64_t tv = nbt < nst ? nbt : nst;
        tv = nrt < tv ? nrt : tv;
        if (tv > tgt)
            break;
        /* the worker edge into tv is live when tv is inside a non-waiting activity (its
         * start passed, not its end) */
        int live = c.started && (c.b & 1) && t->atype[a0 + c.b / 2] != LP_TYPE_WAITING;
        int64_t o = live ? c.org : tv;
        if (c.ri < re && nrt == tv) { /* messages received here: wait for their senders */
            uint64_t r1 = c.ri + 1;
            while (r1 < re && mrecv[rmsg[r1]] == tv)
                r1++;
            f->wc[w] = c;
            if ((rc = wait_senders(f, c.ri, r1, sp)))
                break;
            int64_t bt = live ? c.org : INT64_MAX; /* the longest-path step (graph/lpath.h) */
            int picked = live;
            for (uint64_t k = c.ri; k < r1; k++) {
                uint32_t m = rmsg[k];
                if (is_link(f, m) && sorg[m] < bt)
                    bt = sorg[m], picked = 1;
            }
            o = picked ? bt : tv;
            c.ri = r1;
            nrt = c.ri < re ? mrecv[rmsg[c.ri]] : INT64_MAX;
#if defined(__GNUC__)
            if (c.ri + 16 < re) { /* the messages' columns are read in message order, scattered */
                uint32_t m = rmsg[c.ri + 16];
                __builtin_prefetch(&mrecv[m]);
                __builtin_prefetch(&msend[m]);
                __builtin_prefetch(&sorg[m]);
                __builtin_prefetch(&t->mflags[m]);
                __builtin_prefetch(&t->msrc[m]);
            }
#endif
        }
        while (c.b < nb && nbt == tv) {
            c.b++;
            nbt = BT(c.b);
#if defined(__GNUC__)
            /* the columns are often the mapped file's pages, where the hardware's stream
             * prefetch stops at every 4 KiB page: ask for them ahead */
            if (!(c.b & 15) && c.b + 128 < nb) {
                __builtin_prefetch(&astart[a0 + c.b / 2 + 64]);
                __builtin_prefetch(&aend[a0 + c.b / 2 + 64]);
                __builtin_prefetch(&t->atype[a0 + c.b / 2 + 64]);
            }
#endif
        }
        while (c.si < se && nst == tv) {
            sorg[smsg[c.si++]] = o;
            nst = c.si < se ? msend[smsg[c.si]] : INT64_MAX;
#if defined(__GNUC__)
            if (c.si + 16 < se) {
                __builtin_prefetch(&msend[smsg[c.si + 16]]);
                __builtin_prefetch(&sorg[smsg[c.si + 16]], 1);
            }
#endif
        }
        c.last = tv;
        c.org = o;
        c.started = 1;
    }
#undef BT
    if (rc == 0)
        c.onstk = 0;
    f->wc[w] = c;
    return rc;
}

/* Pass 1 from worker w0 (to its end), in dependency order. */
static lp_status run(cpw *f, uint32_t w0, lp_error *err)
{
    size_t sp = 0;
    f->stk[sp] = w0;
    f->target[sp++] = INT64_MAX;
    f->wc[w0].onstk = 1;
    while (sp) {
        uint32_t w = f->stk[sp - 1];
        size_t top = sp;
        int rc = advance(f, w, f->target[sp - 1], &sp);
        if (rc < 0)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory breaking a cycle");
        if (rc == 0) { /* w reached its target: off the stack (a pushed sender sits above it) */
            sp = top - 1;
        }
    }
    return LP_OK;
}

/* The latest instant <= T of worker w whose worker edge in is not live (waiting,
 * uncovered, or none: the worker's first instant); T is an instant of w. */
static int64_t run_start(const lp_trace *t, uint32_t w, int64_t T)
{
    uint64_t lo = t->wfirst[w], hi = t->wfirst[w + 1], a = lo, b = hi;
    while (a < b) { /* the first activity starting at or after T */
        uint64_t mid = a + (b - a) / 2;
        if (t->astart[mid] < T)
            a = mid + 1;
        else
            b = mid;
    }
    if (a == lo)
        return T;
    uint64_t k = a - 1;
    if (t->aend[k] < T || t->atype[k] == LP_TYPE_WAITING)
        return T; /* uncovered, or waiting, just before T */
    for (;;) {    /* k's edges are live: is the edge into its start? */
        uint64_t j = k;
        while (j > lo && t->aend[j - 1] == t->astart[j - 1])
            j--; /* zero-length activities make no edge */
        if (j == lo || t->aend[j - 1] != t->astart[k] || t->atype[j - 1] == LP_TYPE_WAITING)
            return t->astart[k];
        k = j - 1;
    }
}

/* Where the path that reaches instant T of worker w with origin o entered it: *from,
 * and the message taken there (LP_NONE32: the path starts there). -1 if there is no
 * such instant (cannot happen when pass 1 is right). */
static int entry(const cpw *f, uint32_t w, int64_t T, int64_t o, int64_t *from, uint32_t *msg)
{
    const lp_trace *t = f->t;
    int64_t s = run_start(t, w, T);
    uint64_t a = f->rcv.off[w], b = f->rcv.off[w + 1], hi = b;
    while (a < b) { /* the first receive at or after s */
        uint64_t mid = a + (b - a) / 2;
        if (t->mrecv[f->rcv.msg[mid]] < s)
            a = mid + 1;
        else
            b = mid;
    }
    int64_t until = o == s ? s : T; /* o == s: the path enters at s */
    for (; a < hi && t->mrecv[f->rcv.msg[a]] <= until; a++) {
        uint32_t m = f->rcv.msg[a];
        if (is_link(f, m) && f->sorg[m] == o) {
            *from = t->mrecv[m];
            *msg = m;
            return 0;
        }
    }
    *from = s;
    *msg = LP_NONE32;
    return o == s ? 0 : -1;
}

typedef struct stretch {
    uint32_t w, msg; /* the worker; the message taken at `from` (LP_NONE32: the path's start) */
    int64_t from, to;
} stretch;

/* Pass 2: the stretches from the last instant back to the path's start (latest first). */
static lp_status walk_back(const cpw *f, stretch **out, size_t *n, lp_error *err)
{
    const lp_trace *t = f->t;
    uint32_t w = LP_NONE32;
    for (uint32_t x = 0; x < t->nworkers; x++) { /* latest, then reaching furthest back, then lowest */
        const wcur *c = &f->wc[x];
        if (c->started && (w == LP_NONE32 || c->last > f->wc[w].last ||
                           (c->last == f->wc[w].last && c->org < f->wc[w].org)))
            w = x;
    }
    int64_t T = f->wc[w].last, o = f->wc[w].org;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    for (;;) {
        if (*n > t->nmsgs)
            return lp_error_set(err, LP_ERR_DATA, "critical path: the walk back does not end (the trace breaks the model's invariants)");
        int64_t from;
        uint32_t m;
        if (entry(f, w, T, o, &from, &m))
            return lp_error_set(err, LP_ERR_DATA, "critical path: no instant of worker %u reaches origin %lld",
                                w, (long long)o);
        void *p = *out;
        if (lp_grow(&p, &cap, *n + 1, sizeof **out))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        *out = p;
        (*out)[(*n)++] = (stretch){w, m, from, T};
        if (m == LP_NONE32)
            return LP_OK;
        T = t->msend[m];
        w = t->msrc[m];
    }
}

/* The activities of stretch s on the path: [*k0, *k1) (zero-length ones make no element). */
static void stretch_acts(const lp_trace *t, const stretch *s, uint64_t *k0, uint64_t *k1)
{
    uint64_t lo = t->wfirst[s->w], hi = t->wfirst[s->w + 1], a = lo, b = hi;
    while (a < b) { /* first ending after from */
        uint64_t mid = a + (b - a) / 2;
        if (t->aend[mid] <= s->from)
            a = mid + 1;
        else
            b = mid;
    }
    *k0 = a;
    b = hi;
    while (a < b) { /* first starting at or after to */
        uint64_t mid = a + (b - a) / 2;
        if (t->astart[mid] < s->to)
            a = mid + 1;
        else
            b = mid;
    }
    *k1 = a;
}

/* The elements of the stretches, in time order, into out->e (exact size). */
static lp_status emit(const lp_trace *t, const stretch *st, size_t ns, lp_cpath *out, lp_error *err)
{
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = ns; i-- > 0;) {
            const stretch *s = &st[i];
            uint64_t k0, k1;
            if (i + 1 < ns) { /* the message from the earlier stretch into this one */
                uint32_t m = st[i].msg;
                if (pass)
                    out->e[n] = (lp_cp_elem){LP_CP_MESSAGE, t->mdst[m], m, t->msend[m], t->mrecv[m]};
                n++;
            }
            stretch_acts(t, s, &k0, &k1);
            if (s->from == s->to) /* entered and left at one instant */
                k1 = k0;
            for (uint64_t k = k0; k < k1; k++) {
                if (t->aend[k] == t->astart[k])
                    continue;
                if (pass)
                    out->e[n] = (lp_cp_elem){LP_CP_ACTIVITY, s->w, k, t->astart[k] > s->from ? t->astart[k] : s->from,
                                             t->aend[k] < s->to ? t->aend[k] : s->to};
                n++;
            }
        }
        if (!pass) {
            if (!(out->e = lp_malloc((n ? n : 1) * sizeof *out->e)))
                return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
            out->n = n;
            n = 0;
        }
    }
    return LP_OK;
}

static void cpw_release(cpw *f)
{
    lp_endpoints_release(&f->snd);
    lp_endpoints_release(&f->rcv);
    lp_free(f->sorg);
    lp_free(f->wc);
    lp_free(f->stk);
    lp_free(f->target);
    lp_free(f->ign);
    memset(f, 0, sizeof *f);
}

uint64_t lp_cpath_parallel_min = 200000;

/* Task 0: the send lists, task 1: the receive lists (message indices only). */
static lp_status lists_task(void *ctx, size_t which, size_t n, lp_error *err)
{
    cpw *f = ctx;
    return lp_endpoints_build(f->t, (int)which | LP_EP_NOTIME, which ? &f->rcv : &f->snd, err);
}

/* The path, once the lists are built; f is released (out is left empty on failure). */
static lp_status path(cpw *f, lp_cpath *out, lp_error *err)
{
    const lp_trace *t = f->t;
    lp_status st = LP_OK;
    size_t nw = t->nworkers ? t->nworkers : 1, nm = t->nmsgs ? t->nmsgs : 1;
    f->sorg = lp_malloc(nm * sizeof *f->sorg); /* each written at its send instant before it is read */
    f->wc = lp_calloc(nw, sizeof *f->wc);
    f->stk = lp_malloc(nw * sizeof *f->stk);
    f->target = lp_malloc(nw * sizeof *f->target);
    if (!f->sorg || !f->wc || !f->stk || !f->target) {
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint32_t w = 0; w < t->nworkers; w++) {
        f->wc[w].si = f->snd.off[w];
        f->wc[w].ri = f->rcv.off[w];
    }
    int any = 0;
    for (uint32_t w = 0; w < t->nworkers; w++) {
        if ((st = run(f, w, err)))
            goto done;
        any |= f->wc[w].started;
    }
    if (!any) /* no instant at all: the empty path */
        goto done;
    lp_endpoints_release(&f->snd); /* pass 2 reads only the receives */
    stretch *sv = NULL;
    size_t ns = 0;
    if ((st = walk_back(f, &sv, &ns, err))) {
        lp_free(sv);
        goto done;
    }
    out->ncycles = f->ncycles;
    out->end = sv[0].to;
    out->start = sv[ns - 1].from;
    out->total = out->end - out->start;
    cpw_release(f); /* before the elements are written: only the stretches are left */
    st = emit(t, sv, ns, out, err);
    lp_free(sv);
done:
    cpw_release(f);
    if (st) {
        lp_free(out->e);
        memset(out, 0, sizeof *out);
    }
    return st;
}

/* Set up f and out, and the pool for a big trace (NULL: everything on this thread). */
static lp_status begin(const lp_trace *t, cpw *f, lp_cpath *out, lp_pool **pool, lp_error *err)
{
    memset(out, 0, sizeof *out);
    out->nskew = t->nskew;
    memset(f, 0, sizeof *f);
    f->t = t;
    *pool = NULL;
    if (t->nmsgs >= UINT32_MAX)
        return lp_error_set(err, LP_ERR_LIMIT, "the trace has %llu messages; at most %u are supported",
                            (unsigned long long)t->nmsgs, UINT32_MAX - 1);
    if (t->nacts + t->nmsgs >= lp_cpath_parallel_min)
        lp_pool_new(pool, 1, NULL); /* without it (or its thread), both halves run here */
    lp_status st = lp_pool_run(*pool, 2, lists_task, f, err);
    if (st) {
        cpw_release(f);
        lp_pool_free(*pool);
        *pool = NULL;
    }
    return st;
}

lp_status lp_cpath_trace(const lp_trace *t, lp_cpath *out, lp_error *err)
{
    cpw f;
    lp_pool *pool;
    lp_status st = begin(t, &f, out, &pool, err);
    lp_pool_free(pool);
    return st ? st : path(&f, out, err);
}

/* lp_cpath_analyse's second step: task 0 the path, task 1 the profile. */
typedef struct analyse_job {
    const lp_trace *t;
    cpw *f;
    lp_cpath *out;
    lp_bprofile prof;
} analyse_job;

static lp_status analyse_task(void *ctx, size_t i, size_t n, lp_error *err)
{
    analyse_job *j = ctx;
    static const int all[3] = {1, 1, 1};
    return i == 0 ? path(j->f, j->out, err) : lp_bprofile_compute(j->t, all, &j->prof, err);
}

lp_status lp_cpath_analyse(const lp_trace *t, lp_cpath *cp, lp_breakdown bd[3], lp_error *err)
{
    cpw f;
    lp_pool *pool;
    for (int g = 0; g < 3; g++) {
        memset(&bd[g], 0, sizeof bd[g]);
        bd[g].by = (lp_group)g;
    }
    lp_status st = begin(t, &f, cp, &pool, err);
    if (st)
        return st;
    analyse_job j = {t, &f, cp, {{NULL, NULL, NULL}, {0, 0, 0}, 0, 0}};
    st = lp_pool_run(pool, 2, analyse_task, &j, err);
    lp_pool_free(pool);
    cpw_release(&f); /* (when the path's task did not run) */
    if (!st)
        st = lp_breakdown_finish(t, cp, &j.prof, bd, err);
    else
        lp_bprofile_release(&j.prof);
    if (st)
        lp_cpath_release(cp);
    return st;
}
