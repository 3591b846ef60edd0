/* collapsed.c: timestamped collapsed stacks (stacks.h; docs/formats/collapsed-stacks.md):
 * one sample per line,
 *
 *     TS TID[:STATE] FRAME;FRAME;...;FRAME WEIGHT
 *
 * TS the start of the interval (integer ns, or seconds with a fraction), TID the thread
 * (optionally "PID/TID"), STATE one of R (on CPU), P (preempted: runnable), D (blocked),
 * S (sleeping), absent = unknown; the frames root first, leaf last, as flame-graph tools
 * write them (a frame "sym_[k]" is a kernel frame, "sym [lib]" or "lib`sym" names its
 * library); WEIGHT the interval's length in ns. Frames may hold spaces: the first two
 * tokens and the last one are the fixed fields. '#' starts a comment line.
 * Malformed lines are counted and reported with their line numbers and skipped.
 */
#include "longpole/import/stacks.h"
#include "import/stacks/stacks_int.h"

#include <string.h>

typedef struct cctx {
    lp_stacks *s;
    lp_diags *ds;
    const char *name;
    lp_error *err;
    uint32_t fr[STK_MAXDEPTH];
} cctx;

static void bad(cctx *c, uint64_t line, const char *why, const char *p, size_t n)
{
    c->s->nbad++;
    if (c->ds)
        lp_diags_report(c->ds, LP_SEV_WARNING, LP_RULE_IMPORT, c->name, line, "%s: '%.*s'", why,
                        (int)(n > 60 ? 60 : n), p);
}

/* One frame "sym", "sym_[k]", "sym [lib]" or "lib`sym". */
static int frame(cctx *c, const char *p, size_t n, uint32_t *id)
{
    int kern = 0;
    const char *dso = "";
    size_t ndso = 0;
    if (n >= 4 && !memcmp(p + n - 4, "_[k]", 4))
        kern = 1, n -= 4;
    else if (n >= 3 && p[n - 1] == ']') {
        const char *o = NULL;
        for (size_t k = n - 1; k > 0; k--)
            if (p[k - 1] == '[' && k >= 2 && p[k - 2] == ' ') {
                o = p + k;
                break;
            }
        if (o) {
            dso = o, ndso = (size_t)(p + n - 1 - o);
            n = (size_t)(o - 2 - p);
        }
    } else {
        const char *bt = memchr(p, '`', n);
        if (bt) {
            dso = p, ndso = (size_t)(bt - p);
            n -= ndso + 1, p = bt + 1;
        }
    }
    if (n == 0 || (n == 9 && !memcmp(p, "[unknown]", 9))) {
        n = 0;
        c->s->nnosym++;
    }
    for (size_t k = ndso; k > 0; k--)
        if (dso[k - 1] == '/') {
            dso += k, ndso -= k;
            break;
        }
    return lp_stacks_frame_add(c->s, p, n, dso, ndso, kern, id, c->err) ? -1 : 0;
}

static lp_status line(cctx *c, const char *p, size_t n, uint64_t ln)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    if (i == n || p[i] == '#')
        return LP_OK;
    /* TS */
    size_t a = i;
    while (i < n && p[i] != ' ' && p[i] != '\t')
        i++;
    int64_t ts, w;
    if (stk_parse_time(p + a, i - a, &ts)) {
        bad(c, ln, "bad timestamp", p, n);
        return LP_OK;
    }
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    /* TID[:STATE] or PID/TID[:STATE] */
    a = i;
    while (i < n && p[i] != ' ' && p[i] != '\t')
        i++;
    size_t b = i;
    lp_sstate stt = LP_SS_UNKNOWN;
    const char *colon = memchr(p + a, ':', b - a);
    if (colon) {
        size_t k = (size_t)(colon - p);
        if (b - k != 2 || !strchr("RPDS", p[k + 1])) {
            bad(c, ln, "bad thread state (R, P, D or S)", p, n);
            return LP_OK;
        }
        stt = p[k + 1] == 'R' ? LP_SS_ONCPU : p[k + 1] == 'P' ? LP_SS_RUNNABLE : p[k + 1] == 'D' ? LP_SS_BLOCKED
                                                                                                  : LP_SS_SLEEP;
        b = k;
    }
    uint32_t tid, pid;
    const char *slash = memchr(p + a, '/', b - a);
    if (slash ? (stk_parse_u32(p + a, (size_t)(slash - p) - a, &pid) ||
                 stk_parse_u32(slash + 1, b - (size_t)(slash - p) - 1, &tid))
              : stk_parse_u32(p + a, b - a, &tid)) {
        bad(c, ln, "bad thread id", p, n);
        return LP_OK;
    }
    if (!slash)
        pid = tid;
    /* WEIGHT: the last token */
    size_t e = n;
    while (e > i && (p[e - 1] == ' ' || p[e - 1] == '\t'))
        e--;
    size_t wa = e;
    while (wa > i && p[wa - 1] != ' ' && p[wa - 1] != '\t')
        wa--;
    if (wa <= i || stk_parse_time(p + wa, e - wa, &w) || memchr(p + wa, '.', e - wa)) {
        bad(c, ln, "missing or bad weight (ns) at the end", p, n);
        return LP_OK;
    }
    if (ts > INT64_MAX - w) {
        bad(c, ln, "timestamp plus weight overflows", p, n);
        return LP_OK;
    }
    /* frames, root first: store leaf first */
    while (i < wa && (p[i] == ' ' || p[i] == '\t'))
        i++;
    size_t fe = wa;
    while (fe > i && (p[fe - 1] == ' ' || p[fe - 1] == '\t'))
        fe--;
    uint32_t nf = 0, tmp[STK_MAXDEPTH];
    size_t fs = i;
    for (size_t k = i; k <= fe; k++) {
        if (k < fe && p[k] != ';')
            continue;
        if (k > fs || k < fe) { /* empty frame between ';;' counts as no symbol */
            uint32_t id;
            if (frame(c, p + fs, k - fs, &id))
                return lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
            if (nf < STK_MAXDEPTH)
                tmp[nf++] = id;
            else
                memmove(tmp, tmp + 1, (STK_MAXDEPTH - 1) * sizeof *tmp), tmp[STK_MAXDEPTH - 1] = id;
        }
        fs = k + 1;
    }
    for (uint32_t k = 0; k < nf; k++)
        c->fr[k] = tmp[nf - 1 - k];
    uint32_t stack;
    lp_status st = lp_stacks_stack_add(c->s, c->fr, nf, &stack, c->err);
    if (!st)
        st = lp_stacks_push(c->s, ts, ts + w, tid, pid, stt, stack, c->err);
    return st;
}

lp_status lp_stacks_read_collapsed(lp_stacks *s, lp_input *in, const char *name, lp_diags *ds, lp_error *err)
{
    cctx c = {s, ds, name, err, {0}};
    lp_lines L;
    lp_lines_init(&L, in, STK_MAXLINE, 1);
    lp_status st;
    const char *p;
    size_t n;
    int cut;
    while ((st = lp_lines_next(&L, &p, &n, &cut, err)) == LP_OK) {
        s->nlines++;
        if (cut) {
            bad(&c, L.line, "line longer than 8 KiB", p, n);
            continue;
        }
        if ((st = line(&c, p, n, L.line)))
            break;
    }
    lp_lines_release(&L);
    if (st == LP_END)
        st = lp_stacks_sort(s, err);
    return st;
}
