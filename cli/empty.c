/* empty.c: refusing an analysis of nothing (cli.h, docs/trust.md): an input with no
 * activity (an empty file, /dev/null, a trace of headers only) or a window that holds
 * none (past the end, before the start, or only on filled gaps) is an error with its
 * own exit status (LP_EXIT_EMPTY), never "critical path: 0 ns". Times in messages are
 * after the trace start, as in every text output. */
#include "cli.h"
#include "base/util.h"

#include <stdio.h>

int cli_refuse_empty(const char *cmd, const lp_trace *t)
{
    if (t->nacts > t->ngaps)
        return 0;
    fprintf(stderr, "longpole %s: the input holds no activity (%u workers, %llu messages): there is nothing to "
                    "analyse\n", cmd, t->nworkers, (unsigned long long)t->nmsgs);
    return LP_EXIT_EMPTY;
}

/* t - base as a duration, with its sign. */
static void rel(int64_t t, int64_t base, char *buf, size_t n)
{
    char d[32];
    lp_fmt_dur(t < base ? base - t : t - base, d, sizeof d);
    snprintf(buf, n, "%s%s", t < base ? "-" : "", d);
}

int cli_refuse_window(const char *cmd, const lp_trace *t, const lp_trace *w, int64_t from, int64_t to)
{
    int outside = from >= t->tmax || to <= t->tmin;
    if (!outside && (!w || w->nacts > w->ngaps))
        return 0;
    char a[40], b[40], e[32];
    rel(from, t->tmin, a, sizeof a);
    rel(to, t->tmin, b, sizeof b);
    lp_fmt_dur(t->tmax - t->tmin, e, sizeof e);
    char win[160];
    if (to < from && from >= t->tmax) /* --from alone, past the end */
        snprintf(win, sizeof win, "from %s after the trace start on", a);
    else if (to < from) /* --to alone, before the start */
        snprintf(win, sizeof win, "up to %s after the trace start", b);
    else
        snprintf(win, sizeof win, "from %s to %s after the trace start", a, b);
    fprintf(stderr, "longpole %s: the window %s holds no activity%s (the trace runs from 0 to %s): there is "
                    "nothing to analyse\n", cmd, win, outside ? ": it lies outside the trace" : "", e);
    return LP_EXIT_EMPTY;
}
