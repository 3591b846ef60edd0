/* perfscript.c: the `perf script` text reader (stacks.h; docs/formats/perf-script.md).
 *
 * Input: what `perf script` prints for a recording of cpu-clock samples and
 * sched:sched_switch tracepoints with call chains (`perf record -g`), optionally with
 * switch records (`--switch-events`, printed with `--show-switch-events`). A record is a
 * header line, "COMM [PID/]TID [CPU] SECS.FRAC: [PERIOD] EVENT: [FIELDS]" or
 * "COMM [PID/]TID SECS.FRAC: PERF_RECORD_SWITCH[_CPU_WIDE] IN|OUT [preempt]", then its
 * frames, one per tab-indented line "ADDR SYM[+0xOFF] (DSO)", leaf first, then a blank line.
 * COMM may hold spaces: the time (the first "digits.digits:" token) anchors the parse.
 *
 * Two passes. (1) Records are parsed into a list (time, thread, kind, state, stack).
 * (2) Each thread's records, in input order (perf prints them in time order), become
 * wall-clock intervals:
 *  - with switch records the on- and off-CPU times are exact: on-CPU time from a
 *    switch-in is cut at every cpu-clock sample (each piece takes the sample's stack) and
 *    at the switch-out (the last piece takes the switch's stack); off-CPU time runs from
 *    the switch-out to the next switch-in, with the stack and state of the
 *    sched_switch record just before it (state R = preempted or throttled: runnable;
 *    D = blocked; S, I, T = sleeping; X, Z = the thread ended);
 *  - without them, a cpu-clock sample stands for its period of on-CPU time before it,
 *    a sched_switch opens off-CPU time that the thread's next sample closes (at the
 *    sample minus its period), and the time between a sample and the next
 *    sched_switch was on-CPU (any switch-out in between would have been recorded).
 * Off-CPU time still open at the end (a thread blocked when the recording stopped) is
 * dropped and counted; a record earlier than its thread's previous one is dropped and
 * counted; malformed lines are counted and reported with their line numbers.
 */
#include "longpole/import/stacks.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"
#include "import/stacks/stacks_int.h"

#include <string.h>

enum { K_CPU = 0, K_SW, K_OUT, K_OUTP, K_IN, K_OTHER };

typedef struct prec {
    int64_t t, period;      /* ns; period: cpu-clock's (ns), 0 when unknown */
    uint32_t tid, pid, stack;
    uint8_t kind, state;    /* K_*; for K_SW the prev_state as lp_sstate (LP_SS_N: thread ended) */
    uint32_t line;
} prec;

typedef struct pctx {
    lp_stacks *s;
    lp_diags *ds;
    const char *name;
    lp_error *err;
    prec *r;
    size_t n, cap;
    uint32_t fr[STK_MAXDEPTH];
    uint32_t nfr;
    int in_rec, truncated;
    uint64_t nreported;
} pctx;

static void bad(pctx *c, uint64_t line, const char *why, const char *what, size_t n)
{
    c->s->nbad++;
    if (c->ds)
        lp_diags_report(c->ds, LP_SEV_WARNING, LP_RULE_IMPORT, c->name, line, "%s: '%.*s'", why,
                        (int)(n > 60 ? 60 : n), what);
}

static int is_space(char ch) { return ch == ' ' || ch == '\t'; }

/* Next token of p[*i..n) into [*ts, *te); 0 when none. */
static int tok(const char *p, size_t n, size_t *i, size_t *ts, size_t *te)
{
    while (*i < n && is_space(p[*i]))
        (*i)++;
    if (*i >= n)
        return 0;
    *ts = *i;
    while (*i < n && !is_space(p[*i]))
        (*i)++;
    *te = *i;
    return 1;
}

/* "digits.digits:" */
static int is_time_tok(const char *p, size_t a, size_t b)
{
    if (b - a < 4 || p[b - 1] != ':')
        return 0;
    int dot = 0, dig = 0;
    for (size_t k = a; k < b - 1; k++) {
        if (p[k] == '.' && !dot && dig)
            dot = 1;
        else if (p[k] >= '0' && p[k] <= '9')
            dig++;
        else
            return 0;
    }
    return dot && p[b - 2] != '.';
}

static uint8_t prev_state(const char *p, size_t n)
{
    const char *k = NULL;
    for (size_t i = 0; i + 11 <= n; i++)
        if (!memcmp(p + i, "prev_state=", 11)) {
            k = p + i + 11;
            break;
        }
    if (!k || k >= p + n)
        return LP_SS_UNKNOWN;
    switch (*k) {
    case 'R': return LP_SS_RUNNABLE;
    case 'D': return LP_SS_BLOCKED;
    case 'S': case 'I': case 'T': case 't': case 'P': return LP_SS_SLEEP;
    case 'X': case 'Z': return LP_SS_N; /* dead */
    default: return LP_SS_UNKNOWN;
    }
}

/* A header line into a record (frames follow). 0 if good. */
static int parse_header(pctx *c, const char *p, size_t n, uint64_t line, prec *r)
{
    size_t i = 0, a, b, pa = 0, pb = 0, ca = 0, cb = 0;
    int have_prev = 0, have_cpu = 0;
    size_t prev_a = 0, prev_b = 0;
    /* find the time; remember the two tokens before it */
    for (;;) {
        if (!tok(p, n, &i, &a, &b))
            return -1;
        if (is_time_tok(p, a, b) && have_prev)
            break;
        if (have_prev) {
            pa = prev_a, pb = prev_b;
        }
        prev_a = a, prev_b = b, have_prev = 1;
    }
    /* the token before the time: [cpu] or the thread */
    size_t ta = prev_a, tb = prev_b;
    if (p[ta] == '[' && p[tb - 1] == ']') {
        have_cpu = 1;
        ca = ta, cb = tb;
        ta = pa, tb = pb;
        if (tb <= ta)
            return -1;
    }
    (void)ca, (void)cb, (void)have_cpu;
    const char *slash = memchr(p + ta, '/', tb - ta);
    if (slash) {
        size_t sp = (size_t)(slash - p);
        if (stk_parse_u32(p + ta, sp - ta, &r->pid) || stk_parse_u32(p + sp + 1, tb - sp - 1, &r->tid))
            return -1;
    } else {
        if (stk_parse_u32(p + ta, tb - ta, &r->tid))
            return -1;
        r->pid = r->tid;
    }
    if (stk_parse_time(p + a, b - a - 1, &r->t))
        return -1;
    r->period = 0, r->state = LP_SS_UNKNOWN, r->stack = LP_NONE32_STK, r->line = (uint32_t)(line > UINT32_MAX ? UINT32_MAX : line);
    /* what follows the time */
    if (!tok(p, n, &i, &a, &b))
        return -1;
    if (b - a >= 18 && !memcmp(p + a, "PERF_RECORD_SWITCH", 18)) {
        size_t xa, xb;
        if (!tok(p, n, &i, &xa, &xb))
            return -1;
        if (xb - xa == 2 && !memcmp(p + xa, "IN", 2))
            r->kind = K_IN;
        else if (xb - xa == 3 && !memcmp(p + xa, "OUT", 3)) {
            size_t ya, yb;
            r->kind = K_OUT;
            if (tok(p, n, &i, &ya, &yb) && yb - ya == 7 && !memcmp(p + ya, "preempt", 7))
                r->kind = K_OUTP;
        } else
            return -1;
        return 0;
    }
    if (p[b - 1] != ':') { /* a period before the event */
        int64_t per;
        if (stk_parse_time(p + a, b - a, &per) || memchr(p + a, '.', b - a))
            return -1;
        r->period = per;
        if (!tok(p, n, &i, &a, &b) || p[b - 1] != ':')
            return -1;
    }
    size_t en = b - a - 1;
    if (en >= 18 && !memcmp(p + a, "sched:sched_switch", 18)) {
        r->kind = K_SW;
        r->state = prev_state(p + b, n - b);
    } else if ((en >= 9 && !memcmp(p + a, "cpu-clock", 9)) || (en >= 10 && !memcmp(p + a, "task-clock", 10))) {
        r->kind = K_CPU;
    } else {
        r->kind = K_OTHER; /* another sampling event: its period is not time */
        r->period = 0;
    }
    return 0;
}

/* A frame line "ADDR SYM[+0xOFF] (DSO)". */
static int parse_frame(pctx *c, const char *p, size_t n, uint32_t *id)
{
    size_t i = 0, a, b;
    if (!tok(p, n, &i, &a, &b))
        return -1;
    int hex = 1;
    for (size_t k = a; k < b; k++)
        if (!((p[k] >= '0' && p[k] <= '9') || (p[k] >= 'a' && p[k] <= 'f') || (p[k] >= 'A' && p[k] <= 'F')))
            hex = 0;
    if (!hex)
        return -1;
    int kaddr = b - a == 16 && (p[a] == 'f' || p[a] == 'F');
    size_t e = n;
    while (e > i && is_space(p[e - 1]))
        e--;
    const char *dso = "";
    size_t ndso = 0;
    if (e > i && p[e - 1] == ')') { /* the last balanced "(...)" */
        size_t k = e - 1;
        int depth = 0;
        for (;; k--) {
            if (p[k] == ')')
                depth++;
            else if (p[k] == '(' && --depth == 0)
                break;
            if (k == i)
                return -1;
        }
        dso = p + k + 1, ndso = e - 1 - (k + 1);
        e = k;
    }
    while (i < e && is_space(p[i]))
        i++;
    while (e > i && is_space(p[e - 1]))
        e--;
    /* strip "+0xOFF" */
    for (size_t k = e; k > i + 1; k--)
        if (p[k - 1] == '+' && k + 1 < e && p[k] == '0' && p[k + 1] == 'x') {
            e = k - 1;
            break;
        }
    const char *sym = p + i;
    size_t nsym = e - i;
    if ((nsym == 9 && !memcmp(sym, "[unknown]", 9)) || nsym == 0) {
        nsym = 0;
        c->s->nnosym++;
    }
    int kern = kaddr || (ndso >= 7 && !memcmp(dso, "[kernel", 7));
    if (ndso == 9 && !memcmp(dso, "[unknown]", 9))
        ndso = 0;
    for (size_t k = ndso; k > 0; k--) /* basename */
        if (dso[k - 1] == '/') {
            dso += k, ndso -= k;
            break;
        }
    return lp_stacks_frame_add(c->s, sym, nsym, dso, ndso, kern, id, c->err) ? -2 : 0;
}

static lp_status end_record(pctx *c)
{
    if (!c->in_rec)
        return LP_OK;
    c->in_rec = 0;
    prec *r = &c->r[c->n - 1];
    return lp_stacks_stack_add(c->s, c->fr, c->nfr, &r->stack, c->err);
}

static lp_status parse_all(pctx *c, lp_input *in)
{
    lp_lines L;
    lp_lines_init(&L, in, STK_MAXLINE, 1);
    lp_status st = LP_OK;
    const char *p;
    size_t n;
    int cut;
    while (!st && (st = lp_lines_next(&L, &p, &n, &cut, c->err)) == LP_OK) {
        c->s->nlines++;
        if (cut)
            bad(c, L.line, "line longer than 8 KiB cut", p, n);
        if (n == 0) {
            st = end_record(c);
            continue;
        }
        if (p[0] == '#' && !c->in_rec)
            continue;
        if (is_space(p[0])) { /* a frame */
            if (!c->in_rec) {
                bad(c, L.line, "frame outside a record", p, n);
                continue;
            }
            uint32_t id;
            int rc = parse_frame(c, p, n, &id);
            if (rc == -2)
                st = LP_ERR_NOMEM;
            else if (rc)
                bad(c, L.line, "malformed frame", p, n);
            else if (c->nfr < STK_MAXDEPTH)
                c->fr[c->nfr++] = id;
            continue;
        }
        if ((st = end_record(c)))
            break;
        prec r;
        if (parse_header(c, p, n, L.line, &r)) {
            bad(c, L.line, "not a perf script record", p, n);
            continue;
        }
        if (lp_grow_at(&c->r, &c->cap, c->n + 1, sizeof *c->r)) {
            st = lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        c->r[c->n++] = r;
        c->in_rec = 1, c->nfr = 0;
    }
    if (st == LP_END)
        st = end_record(c);
    lp_lines_release(&L);
    return st;
}

/* ---- pass 2: intervals ------------------------------------------------------------------ */

#define T_NONE INT64_MIN

typedef struct thr {
    int64_t last;      /* time up to which this thread's time has been emitted (T_NONE: none yet) */
    int64_t off;       /* start of open off-CPU time, T_NONE if on CPU */
    uint32_t off_stack, sw_stack, cpu_stack;
    int64_t sw_time;
    uint8_t off_state, sw_state;
    uint8_t in_seg;    /* on CPU since a switch-in */
    int64_t last_t;    /* time of its last record (order check) */
} thr;

static lp_status emit(pctx *c, const prec *r, int64_t a, int64_t b, lp_sstate stt, uint32_t stack)
{
    if (b <= a)
        return LP_OK;
    return lp_stacks_push(c->s, a, b, r->tid, r->pid, stt, stack, c->err);
}

static lp_status step(pctx *c, thr *h, const prec *r, int has_switch)
{
    lp_status st = LP_OK;
    if (h->last_t != T_NONE && r->t < h->last_t) {
        c->s->nunordered++;
        if (c->ds)
            lp_diags_report(c->ds, LP_SEV_WARNING, LP_RULE_ORDER, c->name, r->line,
                            "record of thread %u earlier than its previous one; dropped", r->tid);
        return LP_OK;
    }
    h->last_t = r->t;
    switch (r->kind) {
    case K_CPU:
    case K_OTHER: {
        int64_t from = r->t - r->period;
        if (h->off != T_NONE) { /* no switch-in seen: back on CPU at most a period ago */
            int64_t back = from > h->off ? from : h->off;
            if ((st = emit(c, r, h->off, back, h->off_state, h->off_stack)))
                return st;
            h->off = T_NONE;
            h->last = back;
        }
        if (h->in_seg || (h->last != T_NONE && h->last > from))
            from = h->last;
        if (!r->period && !h->in_seg)
            from = r->t;
        h->cpu_stack = r->stack;
        st = emit(c, r, from, r->t, LP_SS_ONCPU, r->stack);
        h->last = r->t;
        return st;
    }
    case K_SW:
        h->sw_stack = r->stack, h->sw_state = r->state, h->sw_time = r->t;
        if (has_switch)
            return LP_OK; /* the switch-out record follows */
        if (h->off != T_NONE) { /* two switch-outs, no sample between: back at the second */
            if ((st = emit(c, r, h->off, r->t, h->off_state, h->off_stack)))
                return st;
        } else if (h->last != T_NONE && (st = emit(c, r, h->last, r->t, LP_SS_ONCPU, r->stack)))
            return st;
        h->last = r->t;
        if (r->state != LP_SS_N)
            h->off = r->t, h->off_state = r->state, h->off_stack = r->stack;
        else
            h->off = T_NONE;
        return LP_OK;
    case K_OUT:
    case K_OUTP: {
        int fresh = h->sw_time != T_NONE && (h->last == T_NONE || h->sw_time >= h->last);
        if (h->last != T_NONE && h->off == T_NONE &&
            (st = emit(c, r, h->last, r->t, LP_SS_ONCPU, fresh ? h->sw_stack : h->cpu_stack)))
            return st;
        h->in_seg = 0;
        h->last = r->t;
        if (fresh && h->sw_state == LP_SS_N) {
            h->off = T_NONE;
            return LP_OK;
        }
        h->off = r->t;
        h->off_state = fresh && h->sw_state != LP_SS_UNKNOWN ? h->sw_state
                                                             : (r->kind == K_OUTP ? LP_SS_RUNNABLE : LP_SS_SLEEP);
        h->off_stack = fresh ? h->sw_stack : LP_NONE32_STK;
        h->sw_time = T_NONE;
        return LP_OK;
    }
    case K_IN:
        if (h->off != T_NONE && (st = emit(c, r, h->off, r->t, h->off_state, h->off_stack)))
            return st;
        h->off = T_NONE;
        h->in_seg = 1;
        h->last = r->t;
        return LP_OK;
    }
    return LP_OK;
}

static lp_status intervals(pctx *c)
{
    int has_switch = 0;
    for (size_t i = 0; i < c->n && !has_switch; i++)
        has_switch = c->r[i].kind == K_IN || c->r[i].kind == K_OUT || c->r[i].kind == K_OUTP;
    c->s->has_switch |= has_switch;
    lp_hmap tids;
    lp_status st = lp_hmap_init(&tids, 64, c->err);
    if (st)
        return st;
    thr *th = NULL;
    size_t nth = 0, capth = 0;
    for (size_t i = 0; i < c->n && !st; i++) {
        const prec *r = &c->r[i];
        uint64_t v;
        if (!lp_hmap_get(&tids, r->tid, &v)) {
            if (lp_grow_at(&th, &capth, nth + 1, sizeof *th) || lp_hmap_put(&tids, r->tid, nth, c->err)) {
                st = lp_error_set(c->err, LP_ERR_NOMEM, "out of memory");
                break;
            }
            thr z = {T_NONE, T_NONE, LP_NONE32_STK, LP_NONE32_STK, LP_NONE32_STK, T_NONE, 0, 0, 0, T_NONE};
            th[nth] = z;
            v = nth++;
        }
        st = step(c, &th[v], r, has_switch);
    }
    for (size_t k = 0; k < nth && !st; k++)
        if (th[k].off != T_NONE)
            c->s->nopen++;
    if (!st && c->ds && c->s->nopen)
        lp_diags_report(c->ds, LP_SEV_NOTE, LP_RULE_IMPORT, c->name, 0,
                        "%llu thread(s) were off the CPU when the recording ended: that last interval is dropped",
                        (unsigned long long)c->s->nopen);
    lp_free(th);
    lp_hmap_release(&tids);
    return st;
}

lp_status lp_stacks_read_perf(lp_stacks *s, lp_input *in, const char *name, lp_diags *ds, lp_error *err)
{
    pctx c;
    memset(&c, 0, sizeof c);
    c.s = s, c.ds = ds, c.name = name, c.err = err;
    lp_status st = parse_all(&c, in);
    if (!st)
        st = intervals(&c);
    if (!st && ds && s->nnosym)
        lp_diags_report(ds, LP_SEV_NOTE, LP_RULE_IMPORT, name, 0,
                        "%llu frame(s) have no symbol ([unknown]): a sample's resource then comes from its other "
                        "frames, or is unknown",
                        (unsigned long long)s->nnosym);
    lp_free(c.r);
    if (!st)
        st = lp_stacks_sort(s, err);
    return st;
}
