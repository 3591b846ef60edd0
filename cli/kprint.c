/* kprint.c: the text output of `cp --thread` (kcli.h). The answer first: the thread,
 * the interval, the path's length and what it is made of (share by state and reason
 * next to the thread's own profile, the threads on it); then the path's elements with
 * their reasons (the first and last --path/2 rows); then the clocks (per host: slope,
 * offset, their bounds, the packets supporting them, quality, applied or not) and every
 * adjustment the readers, the matching, the build and the path made, as counts. */
#include "kcli.h"
#include "base/util.h"

#include <string.h>

static const char *wname(const lp_kgraph *g, uint32_t w) { return w == LP_NONE32 ? "(links)" : lp_kgraph_worker_name(g, w); }

static const char *elem_what(const lp_kcp_elem *e, char *buf, size_t n)
{
    if (e->kind == LP_KCP_GAP)
        snprintf(buf, n, "gap");
    else if (e->kind == LP_KCP_LINK)
        snprintf(buf, n, "link/%s", lp_klink_name(e->reason));
    else if (e->state == LP_KS_BLOCKED)
        snprintf(buf, n, "blocked/%s", lp_kreason_name(e->reason));
    else
        snprintf(buf, n, "%s", lp_kstate_name(e->state));
    return buf;
}

static void header(const cli_kgraph *k, const cli_kquery *q)
{
    const lp_kgraph *g = k->g;
    const lp_kcp *cp = &q->cp;
    char d[32], d2[32], d3[32];
    const lp_kworker *w = &g->w[cp->worker];
    printf("thread %s (tid %d on %s), %s critical path\n", lp_kgraph_worker_name(g, cp->worker), w->tid,
           lp_kgraph_str(g, g->host[w->host]), cp->algo == LP_KCP_UNBOUNDED ? "unbounded" : "bounded");
    printf("interval: [%lld, %lld] ns on %s (%s)%s\n", (long long)cp->start, (long long)cp->end,
           g->synced ? "the reference clock" : "each host's own clock", lp_kgraph_str(g, g->host[0]),
           q->from == LP_KCP_LIFETIME_START && q->to == LP_KCP_LIFETIME_END ? ", the thread's lifetime"
                                                                            : ", as asked, clamped to the thread's lifetime");
    uint64_t n, nnet;
    int64_t ns, netns;
    cli_kcp_unexplained(cp, &n, &nnet, &ns, &netns);
    size_t nthreads = 0; /* rows of by_thread but the links' one */
    for (size_t i = 0; i < q->bd.nthread; i++)
        nthreads += q->bd.by_thread[i].worker != LP_NONE32;
    printf("critical path: %s in %zu elements over %zu threads\n", lp_fmt_dur(cp->end - cp->start, d, sizeof d), cp->n,
           nthreads);
    printf("unexplained: %llu elements, %s (of which %llu network waits, %s: packets from or to a host not traced,\n"
           "  or not matched); gaps: %s\n",
           (unsigned long long)n, lp_fmt_dur(ns, d, sizeof d), (unsigned long long)nnet,
           lp_fmt_dur(netns, d2, sizeof d2), lp_fmt_dur(cp->gap_ns, d3, sizeof d3));
}

static void rows(const lp_kgraph *g, const lp_kcp_breakdown *b, int by_state, size_t top)
{
    const lp_kcp_row *r0 = by_state ? b->by_state : b->by_thread;
    size_t nr = by_state ? b->nstate : b->nthread;
    printf("\n%-36s %12s %7s %8s   %12s %7s\n", by_state ? "by state/reason" : "threads on the path", "on path", "share",
           "elements", by_state ? "thread's own" : "own", "share");
    for (size_t i = 0; i < nr; i++) {
        const lp_kcp_row *r = &r0[i];
        if (top && i >= top) {
            printf("%-36s (%zu more rows; --top 0 shows all)\n", "...", nr - i);
            break;
        }
        char lab[40], d1[32], d2[32];
        const char *label = by_state ? lp_kcp_row_label(r, lab, sizeof lab) : wname(g, r->worker);
        double s1 = b->total ? 100.0 * (double)r->path_ns / (double)b->total : 0;
        double s2 = b->total ? 100.0 * (double)r->own_ns / (double)b->total : 0;
        printf("%-36.36s %12s %6.1f%% %8llu   %12s %6.1f%%\n", label, lp_fmt_dur(r->path_ns, d1, sizeof d1), s1,
               (unsigned long long)r->path_n, lp_fmt_dur(r->own_ns, d2, sizeof d2), s2);
    }
}

static void elem_row(const lp_kgraph *g, const lp_kcp *cp, size_t i)
{
    const lp_kcp_elem *e = &cp->e[i];
    char what[40], d[32], who[200];
    if (e->kind == LP_KCP_LINK)
        snprintf(who, sizeof who, "%s -> %s", wname(g, e->from), wname(g, e->worker));
    else
        snprintf(who, sizeof who, "%s", wname(g, e->worker));
    printf("%6zu %14lld %14lld %12s  %-22s %s%s%s\n", i + 1, (long long)(e->start - cp->start),
           (long long)(e->end - cp->start), lp_fmt_dur(e->end - e->start, d, sizeof d), elem_what(e, what, sizeof what),
           who, (e->flags & LP_KCP_UNEXPLAINED) ? "  [unexplained]" : "", (e->flags & LP_KCP_CLIPPED) ? "  (part)" : "");
}

static void path(const lp_kgraph *g, const lp_kcp *cp, uint64_t limit)
{
    size_t n = cp->n, head = n, tail = 0;
    if (limit && n > limit) {
        head = (size_t)(limit - limit / 2);
        tail = (size_t)(limit / 2);
    }
    printf("\npath (%zu elements%s; ns after the interval start):\n", n,
           head < n ? "; --path all shows all" : "");
    printf("%6s %14s %14s %12s  %-22s %s\n", "#", "start", "end", "duration", "what", "thread");
    for (size_t i = 0; i < head; i++)
        elem_row(g, cp, i);
    if (head < n) {
        printf("%6s (%zu rows not shown)\n", "...", n - head - tail);
        for (size_t i = n - tail; i < n; i++)
            elem_row(g, cp, i);
    }
}

static void clocks(const cli_kgraph *k)
{
    const lp_kgraph *g = k->g;
    printf("\nclocks (%s; reference host %s):\n",
           g->synced ? "synchronised from matched packets, convex hull" : "not synchronised: each host's own clock",
           lp_kgraph_str(g, g->host[0]));
    for (uint32_t h = 0; h < g->nhosts; h++) {
        const char *name = lp_kgraph_str(g, g->host[h]);
        if (!k->have_match || h >= k->nhosts_read) { /* from an index: the map applied only */
            printf("  %-16s slope %.17g offset %.3f ns (from the index: bounds and packets not kept)\n", name,
                   g->clock_slope[h], g->clock_offset[h]);
            continue;
        }
        const lp_kclock *c = &k->m.clock[h];
        if (c->quality == LP_KCLOCK_REFERENCE) {
            printf("  %-16s reference\n", name);
            continue;
        }
        printf("  %-16s %s: slope %.17g offset %.3f ns; slope in [%.17g, %.17g], offset in [%.3f, %.3f] ns;\n"
               "  %-16s %llu packets (%llu on the hull), against %s; %s\n",
               name, cli_kclock_quality(c->quality), c->slope, c->offset, c->slope_lo, c->slope_hi, c->offset_lo,
               c->offset_hi, "", (unsigned long long)c->npackets, (unsigned long long)c->nhull,
               c->via < g->nhosts ? lp_kgraph_str(g, g->host[c->via]) : "?",
               g->synced ? "applied" : "not applied (--no-sync)");
    }
}

static void adjustments(const cli_kgraph *k)
{
    const lp_kgraph *g = k->g;
    const lp_kgraph_stats *s = &g->st;
    printf("\nadjustments:\n");
    for (uint32_t h = 0; h < k->nhosts_read; h++) {
        const cli_khost *x = &k->host[h];
        printf("  read %-12s %llu events, %u CPUs, %u streams, %llu bytes: %llu reordered (put in time order), %llu lost "
               "(tracer), %llu bad (skipped), %llu not used\n",
               x->name, (unsigned long long)x->nev, x->ncpus, x->nstreams, (unsigned long long)x->bytes,
               (unsigned long long)x->nreordered, (unsigned long long)x->nlost, (unsigned long long)x->nbad,
               (unsigned long long)x->nother);
        if (x->nchunks > 1)
            printf("  %-17s joined from %u traces that follow each other in time (pieces of one run)\n", x->name,
                   x->nchunks);
    }
    if (k->from_index)
        printf("  graph mapped from its index (built from %llu events; %llu reordered, %llu lost); %s\n",
               (unsigned long long)s->nevents, (unsigned long long)s->nreordered, (unsigned long long)s->nlost,
               k->index_stamped ? "its checksum and invariants vouched for by its verification stamp (--verify "
                                  "checks every byte)"
                                : "every byte checked");
    if (k->have_match)
        printf("  packets: %llu matched across hosts; unmatched: %llu sends, %llu receives\n",
               (unsigned long long)k->m.npk, (unsigned long long)k->m.nunmatched_send,
               (unsigned long long)k->m.nunmatched_recv);
    printf("  network links: %llu made; dropped: %llu received before sent (clock skew), %llu without an endpoint, "
           "%llu duplicated, %llu not a send and a receive\n",
           (unsigned long long)s->npk_linked, (unsigned long long)s->npk_skew, (unsigned long long)s->npk_noendpoint,
           (unsigned long long)s->npk_dup, (unsigned long long)s->npk_bad);
    printf("  TCP events left unmatched in the graph: %llu sends, %llu receives (keys kept: %llu)\n",
           (unsigned long long)s->nunmatched_send, (unsigned long long)s->nunmatched_recv, (unsigned long long)g->npk);
    printf("  wake-ups: %llu ended a wait, %llu spurious (ignored); interrupt exits without their entry: %llu; nesting "
           "overflows: %llu; events on unknown CPUs: %llu; packet events without context: %llu; renamed workers: "
           "%llu\n",
           (unsigned long long)s->nwakeups, (unsigned long long)s->nspurious, (unsigned long long)s->nctx_mismatch,
           (unsigned long long)s->nctx_overflow, (unsigned long long)s->nbadcpu, (unsigned long long)s->nnoctx,
           (unsigned long long)s->nrenamed);
    if (s->nswitch_inferred)
        printf("  context switches the trace lost: %llu, inferred from the thread each later event names (see "
               "docs/analyses/kernel-critical-path.md)\n",
               (unsigned long long)s->nswitch_inferred);
    if (k->diag_errors || k->diag_warnings)
        printf("  input diagnostics: %llu errors, %llu warnings (on standard error)\n",
               (unsigned long long)k->diag_errors, (unsigned long long)k->diag_warnings);
}

void cli_kcp_text(const cli_kgraph *k, const cli_kquery *q, const cli_kout *o)
{
    header(k, q);
    rows(k->g, &q->bd, 1, (size_t)o->top);
    rows(k->g, &q->bd, 0, (size_t)o->top);
    path(k->g, &q->cp, o->path_limit);
    clocks(k);
    adjustments(k);
    printf("\ngraph: %u hosts, %u workers, %u vertices, %u links%s\n", k->g->nhosts, k->g->nworkers, k->g->nv,
           k->g->nlinks, k->from_index ? " (mapped from the index)" : "");
}
