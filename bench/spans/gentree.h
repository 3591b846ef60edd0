/* gentree.h: random but realistic span trees for the span benchmarks (spangen writes
 * them as Jaeger, Zipkin or OTLP JSON; spanbench builds them in memory).
 *
 * A trace is a tree of n spans (span 0 the root, parents before children). Shape:
 * each new span hangs under the previous one with probability 1/2 (depth), else under
 * a random earlier span (fan-out), at most GT_MAXDEPTH deep. Names follow a fixed call
 * graph (each operation calls one of three others), so call paths repeat from trace
 * to trace as in a real system. A CLIENT span's children are SERVER spans of the
 * callee (the RPC pattern); 2% of children follow from their parent (FOLLOWS_FROM), a
 * PRODUCER's children are CONSUMERs. Times, in microseconds, are
 * laid out top-down: a parent's children run one after the other (60%) or overlap
 * at random (40%) inside it; 1% overhang their parent's end and 0.5% start before
 * it (clock skew), so the clipping rules are exercised. Deterministic for a seed
 * (splitmix64), so the C and Python benchmarks see the same traces.
 */
#ifndef LP_BENCH_GENTREE_H
#define LP_BENCH_GENTREE_H

#include <stdint.h>
#include <stdlib.h>

#define GT_NSERVICES 24
#define GT_NOPS 6 /* operations per service */

enum { GT_INTERNAL = 0, GT_SERVER, GT_CLIENT, GT_PRODUCER, GT_CONSUMER };

typedef struct gt_span {
    uint64_t id;       /* span id (non-zero) */
    int parent;        /* index in the trace, -1 for the root */
    int follows;       /* FOLLOWS_FROM its parent */
    int service, op;   /* service index, operation index within the service */
    int kind;          /* GT_* */
    int64_t start, dur; /* microseconds */
} gt_span;

typedef struct gt_trace {
    uint64_t hi, lo;   /* 128-bit trace id */
    int n;
    gt_span *s;        /* n spans (caller-owned buffer of at least n) */
} gt_trace;

static inline uint64_t gt_next(uint64_t *st)
{
    uint64_t z = (*st += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static inline int64_t gt_range(uint64_t *st, int64_t lo, int64_t hi) /* [lo, hi] */
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(gt_next(st) % (uint64_t)(hi - lo + 1));
}
static inline double gt_unit(uint64_t *st) { return (double)(gt_next(st) >> 11) / 9007199254740992.0; }

#define GT_MAXDEPTH 8 /* spans deeper than this get no children */

/* The fixed call graph: operation (service, op) calls one of three callees, so a
 * trace's call paths come from a bounded set, as in a real deployment. */
static inline void gt_callee(int svc, int op, int slot, int *csvc, int *cop)
{
    *csvc = (svc * 7 + op * 3 + slot * 5 + 1) % GT_NSERVICES;
    *cop = (svc + 2 * op + slot) % GT_NOPS;
}

/* Fill t->s[0..n) (t->s must hold n spans). t0: root start (us). */
static inline void gt_make(uint64_t *st, gt_trace *t, int n, int64_t t0)
{
    t->hi = gt_next(st);
    t->lo = gt_next(st) | 1;
    t->n = n;
    gt_span *s = t->s;
    int *depth = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        gt_span *x = &s[i];
        x->id = gt_next(st) | 1;
        x->follows = 0;
        if (i == 0) {
            x->parent = -1;
            x->kind = GT_SERVER;
            x->service = (int)gt_range(st, 0, 3);
            x->op = (int)gt_range(st, 0, GT_NOPS - 1);
            depth[i] = 1;
            continue;
        }
        /* under the previous span (depth) or a random earlier one (fan-out), not too deep */
        int p = gt_unit(st) < 0.5 ? i - 1 : (int)gt_range(st, 0, i - 1);
        while (depth[p] >= GT_MAXDEPTH)
            p = s[p].parent;
        x->parent = p;
        depth[i] = depth[p] + 1;
        const gt_span *q = &s[p];
        int slot = (int)gt_range(st, 0, 2);
        if (q->kind == GT_CLIENT) {
            x->kind = GT_SERVER;
            gt_callee(q->service, q->op, 0, &x->service, &x->op);
        } else if (q->kind == GT_PRODUCER) {
            x->kind = GT_CONSUMER;
            gt_callee(q->service, q->op, 1, &x->service, &x->op);
        } else {
            double u = gt_unit(st);
            x->kind = u < 0.5 ? GT_CLIENT : u < 0.96 ? GT_INTERNAL : GT_PRODUCER;
            x->service = q->service; /* a local span or an outgoing call, in the caller's service */
            int cs;
            gt_callee(q->service, q->op, slot, &cs, &x->op);
            x->follows = gt_unit(st) < 0.02;
        }
    }
    free(depth);
    /* times, top-down: children of each parent in index order */
    s[0].start = t0;
    s[0].dur = gt_range(st, 2000, 200000);
    int *next = malloc(sizeof(int) * (size_t)n), *first = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        first[i] = next[i] = -1;
    for (int i = n - 1; i >= 1; i--) {
        next[i] = first[s[i].parent];
        first[s[i].parent] = i;
    }
    for (int p = 0; p < n; p++) {
        int k = 0;
        for (int c = first[p]; c >= 0; c = next[c])
            k++;
        if (!k)
            continue;
        int64_t S = s[p].start, D = s[p].dur > 0 ? s[p].dur : 1;
        int seq = gt_unit(st) < 0.6;
        int64_t cur = S + gt_range(st, 0, D / (4 * k) + 1);
        for (int c = first[p]; c >= 0; c = next[c]) {
            int64_t a, d;
            if (seq) {
                int64_t slot = (S + D - cur) / (k > 0 ? k : 1);
                a = cur;
                d = gt_range(st, slot / 3, slot > 1 ? slot - 1 : 1);
                cur = a + d + gt_range(st, 0, slot / 8 + 1);
                k--;
            } else {
                a = S + gt_range(st, 0, D * 3 / 4);
                d = gt_range(st, 1, S + D - a);
            }
            double u = gt_unit(st);
            if (u < 0.01)
                d += gt_range(st, 1, D / 10 + 1); /* overhangs the parent's end */
            else if (u < 0.015)
                a -= gt_range(st, 1, D / 10 + 1); /* starts before the parent */
            if (d < 0)
                d = 0;
            s[c].start = a;
            s[c].dur = d;
        }
    }
    free(next);
    free(first);
}

static const char *const gt_kind_upper[] = {"", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"};
static const char *const gt_kind_lower[] = {"internal", "server", "client", "producer", "consumer"};
static const char *const gt_verbs[] = {"GET", "POST", "PUT", "DELETE", "GET", "GET"};

#endif
