/* ftrace.c: the text ftrace prints, read into normalised kernel events (one host).
 *
 * Accepted (docs/formats/ftrace.md): tracefs `trace` and `trace_pipe` (with or without
 * the irq-info flags column, with or without record-tgid's "(tgid)"), `trace-cmd
 * report` (µs, or ns with -t; "cpus=N" first line), and `longpole record`'s
 * kernel.ftrace (tracefs text after a "# longpole-kernel: ..." header). An event line is
 *
 *     COMM-PID [(TGID)] [CPU] [FLAGS] SECONDS.FRACTION: EVENT: FIELDS
 *
 * where COMM may hold spaces and dashes (the pid is the digits after the last '-'
 * before the CPU bracket), FIELDS are `key=value` pairs (a value runs to the next
 * ` key=`, so "comm=Web Content" stays whole), block_rq_* print theirs positionally.
 * The line's PID is the thread running on the CPU: it is the event's ctx_tid.
 *
 * Counted, with file and line, never fatal: lines that are not events (LP_RULE_SYNTAX),
 * events lacking a field their mapping requires (LP_RULE_FIELD; lp_khost.nbad), "CPU:N
 * [LOST M EVENTS]" (nlost += M). Out-of-order stamps are put in place by the host
 * builder (nreordered); equal stamps keep file order (the kernel merged the CPUs by
 * their ns clock before printing µs).
 */
#include "import/kernel/kint.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <string.h>

typedef struct span {
    const char *p;
    size_t n;
} span;

#define MAXKV 32

typedef struct kv {
    span k, v;
} kv;

/* one distinct event name, resolved */
typedef struct ftname {
    char *name;
    size_t n;
    const kevdef *def;
    lp_str id;      /* name (LP_KEV_OTHER) or syscall name */
} ftname;

typedef struct ftread {
    khb *b;
    lp_error *err;
    uint64_t line;
    lp_hmap names;  /* hash of an event name -> index in nm */
    ftname *nm;
    size_t nnm, capnm;
    int warned_int_ts;
} ftread;

static int is_sp(char c) { return c == ' ' || c == '\t'; }
static int is_dig(char c) { return c >= '0' && c <= '9'; }
static int is_idc(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || is_dig(c); }

static span trim(const char *p, const char *e)
{
    while (p < e && is_sp(*p))
        p++;
    while (e > p && is_sp(e[-1]))
        e--;
    return (span){p, (size_t)(e - p)};
}

static int span_eq(span s, const char *z)
{
    size_t n = strlen(z);
    return s.n == n && memcmp(s.p, z, n) == 0;
}

/* Leading integer of s (decimal, "-" allowed, "0x" hex); 0 if none. */
static int parse_int(span s, int64_t *v)
{
    const char *p = s.p, *e = s.p + s.n;
    int neg = 0;
    if (p < e && *p == '-') {
        neg = 1;
        p++;
    }
    if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        span h = {p + 2, (size_t)(e - p - 2)};
        uint64_t u = 0;
        size_t i = 0;
        for (; i < h.n && i < 16; i++) {
            char c = h.p[i];
            int d = is_dig(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
            if (d < 0)
                break;
            u = u << 4 | (uint64_t)d;
        }
        *v = neg ? -(int64_t)u : (int64_t)u;
        return i > 0;
    }
    uint64_t u = 0;
    const char *q = p;
    while (q < e && is_dig(*q) && q - p < 19)
        u = u * 10 + (uint64_t)(*q++ - '0');
    if (q == p)
        return 0;
    *v = neg ? -(int64_t)u : (int64_t)u;
    return 1;
}

static int parse_hex(span s, int64_t *v)
{
    if (s.n > 2 && s.p[0] == '0' && (s.p[1] == 'x' || s.p[1] == 'X'))
        return parse_int(s, v);
    uint64_t u = 0;
    size_t i = 0;
    for (; i < s.n && i < 16; i++) {
        char c = s.p[i];
        int d = is_dig(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
        if (d < 0)
            break;
        u = u << 4 | (uint64_t)d;
    }
    *v = (int64_t)u;
    return i > 0;
}

/* ---- key=value fields ----------------------------------------------------------------- */

/* Split "a=1 b=x y c=[2]" into pairs; a value runs to the next " key=". */
static size_t split_fields(span f, kv *out)
{
    size_t n = 0;
    const char *p = f.p, *e = f.p + f.n;
    for (const char *q = p; q < e; q++) {
        if (q != p && !is_sp(q[-1]))
            continue;
        const char *k = q;
        while (k < e && is_idc(*k))
            k++;
        if (k == q || k >= e || *k != '=' || is_dig(*q))
            continue;
        if (n > 0) { /* the previous value ends here */
            span v = trim(out[n - 1].v.p, q);
            if (v.n >= 3 && memcmp(v.p + v.n - 3, "==>", 3) == 0)
                v = trim(v.p, v.p + v.n - 3);
            out[n - 1].v = v;
        }
        if (n == MAXKV)
            return n;
        out[n].k = (span){q, (size_t)(k - q)};
        out[n].v = (span){k + 1, (size_t)(e - k - 1)};
        n++;
        q = k;
    }
    if (n > 0)
        out[n - 1].v = trim(out[n - 1].v.p, e);
    return n;
}

static const span *find_kv(const kv *f, size_t n, const char *names)
{
    for (const char *p = names; *p;) {
        const char *q = strchr(p, '|');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        for (size_t i = 0; i < n; i++)
            if (f[i].k.n == len && memcmp(f[i].k.p, p, len) == 0)
                return &f[i].v;
        p += len + (q != NULL);
    }
    return NULL;
}

/* ---- event names ------------------------------------------------------------------------- */

typedef struct name_key {
    const ftread *r;
    span ev;
} name_key;

static int name_eq(const void *ctx, uint64_t v)
{
    const name_key *k = ctx;
    return k->r->nm[v].n == k->ev.n && memcmp(k->r->nm[v].name, k->ev.p, k->ev.n) == 0;
}

static lp_status name_get(ftread *r, span ev, const ftname **out)
{
    uint64_t h = lp_hash_bytes(ev.p, ev.n);
    name_key k = {r, ev};
    uint64_t v = lp_hmap_find(&r->names, h, name_eq, &k, NULL);
    if (v != LP_HMAP_EMPTY) {
        *out = &r->nm[v];
        return LP_OK;
    }
    if (lp_grow_at(&r->nm, &r->capnm, r->nnm + 1, sizeof *r->nm))
        return lp_error_set(r->err, LP_ERR_NOMEM, "out of memory");
    ftname *f = &r->nm[r->nnm];
    size_t sysoff = 0;
    f->def = lp_kevdef_find(ev.p, ev.n, &sysoff);
    f->n = ev.n;
    f->name = lp_strndup(ev.p, ev.n);
    if (!f->name)
        return lp_error_set(r->err, LP_ERR_NOMEM, "out of memory");
    lp_status st = LP_OK;
    f->id = LP_STR_NONE;
    if (!f->def)
        st = khb_str(r->b, ev.p, ev.n, &f->id, r->err);
    else if (f->def->special == KS_SYSCALL_ENTRY || f->def->special == KS_SYSCALL_EXIT)
        st = khb_str(r->b, ev.p + sysoff, ev.n - sysoff, &f->id, r->err);
    if (!st)
        st = lp_hmap_add(&r->names, h, r->nnm, r->err);
    if (st) {
        lp_free(f->name);
        return st;
    }
    *out = &r->nm[r->nnm++];
    return LP_OK;
}

/* ---- one event ----------------------------------------------------------------------------- */

static const char *last_of(const char *p, size_t n, char c)
{
    for (size_t i = n; i-- > 0;)
        if (p[i] == c)
            return p + i;
    return NULL;
}

static int contains(const char *p, size_t n, const char *z)
{
    size_t k = strlen(z);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(p + i, z, k) == 0)
            return 1;
    return 0;
}

/* A line that is not an event: counted and reported with its start. */
static void bad_line(ftread *r, span l, const char *why)
{
    r->b->nbad++;
    lp_diags_report(r->b->diags, LP_SEV_WARNING, LP_RULE_SYNTAX, r->b->file, r->line, "%s: '%.*s'", why,
                    (int)(l.n > 60 ? 60 : l.n), l.p);
}

static void bad_field(ftread *r, const ftname *nm, const char *field, const char *why)
{
    r->b->nbad++;
    lp_diags_report(r->b->diags, LP_SEV_WARNING, LP_RULE_FIELD, r->b->file, r->line, "%.*s: %s '%s' (event skipped)",
                    (int)nm->n, nm->name, why, field);
}

/* block_rq_*: "8,0 WS 4096 () 123456 + 8 [comm]" / "8,0 WS () 123456 + 8 [0]" */
static int block_fields(span f, lp_kev *e)
{
    int64_t maj, mn;
    const char *p = f.p, *end = f.p + f.n, *c = memchr(p, ',', f.n);
    if (!c || !parse_int((span){p, (size_t)(c - p)}, &maj) || !parse_int((span){c + 1, (size_t)(end - c - 1)}, &mn))
        return 0;
    e->a = (int64_t)((uint64_t)maj << 20 | ((uint64_t)mn & 0xfffff));
    for (const char *q = c; q + 2 < end; q++) {
        if (!(q[0] == ' ' && q[1] == '+' && q[2] == ' '))
            continue;
        const char *s = q; /* the number before " + " */
        while (s > f.p && is_dig(s[-1]))
            s--;
        int64_t nr;
        uint64_t sec = 0;
        if (s == q || !parse_int((span){q + 3, (size_t)(end - q - 3)}, &nr))
            return 0;
        for (const char *d = s; d < q; d++)
            sec = sec * 10 + (uint64_t)(*d - '0');
        e->b = (int64_t)sec;
        e->flags = (uint32_t)nr;
        return 1;
    }
    return 0;
}

static int role_value(const kfield *f, const span *v, ftread *r, lp_kev *e, int k, lp_status *st)
{
    int64_t x = -1;
    int ok = 1;
    switch (f->kind) {
    case KF_HEX: ok = parse_hex(*v, &x); break;
    case KF_STATE: {
        span s = *v;
        size_t i = 0;
        while (i < s.n && !is_sp(s.p[i]))
            i++;
        x = lp_kstate_from_letters(s.p, i);
        ok = x >= 0;
        break;
    }
    case KF_IRQRET:
        if (span_eq(*v, "handled"))
            x = 1;
        else if (span_eq(*v, "unhandled"))
            x = 0;
        else
            ok = parse_int(*v, &x);
        break;
    case KF_STR:
    case KF_BASENAME: {
        lp_str id;
        *st = khb_name(r->b, f->kind, v->p, v->n, &id, r->err);
        if (k == KR_NAME)
            e->name = id;
        else
            e->name2 = id;
        return !*st;
    }
    default: ok = parse_int(*v, &x); break;
    }
    if (!ok)
        return 0;
    switch (k) {
    case KR_TID: e->tid = (int32_t)x; break;
    case KR_TID2: e->tid2 = (int32_t)x; break;
    case KR_A: e->a = x; break;
    case KR_B: e->b = x; break;
    case KR_KEY: e->key = (uint64_t)x; break;
    case KR_FLAGS: e->flags = (uint32_t)x; break;
    default: break;
    }
    return 1;
}

/* "COMM:PID" (comm may hold ':'), optionally followed by " [PRIO]". */
static int comm_pid(span s, span *comm, int64_t *pid)
{
    if (s.n && s.p[s.n - 1] == ']') { /* drop " [PRIO]" */
        const char *o = last_of(s.p, s.n, '[');
        if (!o)
            return 0;
        s = trim(s.p, o);
    }
    const char *c = last_of(s.p, s.n, ':');
    if (!c || !parse_int((span){c + 1, (size_t)(s.p + s.n - c - 1)}, pid))
        return 0;
    *comm = trim(s.p, c);
    return 1;
}

/* trace-cmd report (libtraceevent's sched plugin) prints sched_switch as
 * "PREV_COMM:PREV_PID [PRIO] STATE ==> NEXT_COMM:NEXT_PID [PRIO]" and the wake-ups as
 * "COMM:PID [PRIO] [success=1] CPU:NNN". */
static int plugin_sched(ftread *r, const kevdef *d, span f, lp_kev *e, lp_status *st)
{
    span comm, comm2 = {NULL, 0};
    int64_t pid, pid2 = -1, x = -1;
    if (d->type == LP_KEV_SCHED_SWITCH) {
        const char *arrow = NULL;
        for (size_t i = 0; i + 5 <= f.n && !arrow; i++)
            if (memcmp(f.p + i, " ==> ", 5) == 0)
                arrow = f.p + i;
        if (!arrow)
            return 0;
        span left = trim(f.p, arrow), right = trim(arrow + 5, f.p + f.n);
        const char *sp = last_of(left.p, left.n, ' ');
        if (!sp || left.p[left.n - 1] == ']')
            return 0;
        x = lp_kstate_from_letters(sp + 1, (size_t)(left.p + left.n - sp - 1));
        if (x < 0 || !comm_pid(trim(left.p, sp), &comm2, &pid2) || !comm_pid(right, &comm, &pid))
            return 0;
        e->tid = (int32_t)pid2;
        e->tid2 = (int32_t)pid;
    } else {
        const char *br = NULL; /* the first " [" ends COMM:PID */
        for (size_t i = 0; i + 2 <= f.n && !br; i++)
            if (f.p[i] == ' ' && f.p[i + 1] == '[')
                br = f.p + i;
        if (!comm_pid(trim(f.p, br ? br : f.p + f.n), &comm, &pid))
            return 0;
        for (size_t i = 0; i + 4 <= f.n; i++)
            if (memcmp(f.p + i, "CPU:", 4) == 0)
                parse_int((span){f.p + i + 4, f.n - i - 4}, &x);
        e->tid = (int32_t)pid;
    }
    e->a = x;
    *st = khb_str(r->b, comm.p, comm.n, &e->name, r->err);
    if (!*st && comm2.p)
        *st = khb_str(r->b, comm2.p, comm2.n, &e->name2, r->err);
    return !*st;
}

/* Fill e from the fields; 0 (reported) if a required one is missing or unreadable. */
static int event_fields(ftread *r, const ftname *nm, span f, lp_kev *e, lp_status *st)
{
    const kevdef *d = nm->def;
    if (d->special == KS_BLOCK) {
        if (block_fields(f, e))
            return 1;
        bad_field(r, nm, "MAJ,MIN ... SECTOR + NR", "cannot read the fields");
        return 0;
    }
    if (d->special == KS_SYSCALL_EXIT) { /* sys_exit_read: "0x5" */
        parse_int(f, &e->a);
        return 1;
    }
    kv pairs[MAXKV];
    size_t np = split_fields(f, pairs);
    int sched = d->type == LP_KEV_SCHED_SWITCH || d->type == LP_KEV_SCHED_WAKING ||
                d->type == LP_KEV_SCHED_WAKEUP || d->type == LP_KEV_SCHED_WAKEUP_NEW;
    if (sched && !find_kv(pairs, np, d->f[KR_TID].ft) && plugin_sched(r, d, f, e, st))
        return 1;
    if (*st)
        return 0;
    for (int k = 0; k < KR_N; k++) {
        const kfield *fd = &d->f[k];
        if (!fd->ft)
            continue;
        const span *v = find_kv(pairs, np, fd->ft);
        if (v && role_value(fd, v, r, e, k, st))
            continue;
        if (*st)
            return 0;
        if (!fd->optional) {
            bad_field(r, nm, fd->ft, v ? "unreadable field" : "no field");
            return 0;
        }
    }
    if (d->special == KS_NET_DEV)
        e->flags = LP_KNET_DEV;
    return 1;
}

/* ---- lines ------------------------------------------------------------------------------- */

/* "SECONDS.FRACTION" into ns */
static int parse_ts(ftread *r, span s, int64_t *ts)
{
    const char *p = s.p, *e = s.p + s.n;
    uint64_t sec = 0, frac = 0;
    const char *q = p;
    while (q < e && is_dig(*q)) {
        if (q - p >= 18)
            return 0;
        sec = sec * 10 + (uint64_t)(*q++ - '0');
    }
    if (q == p)
        return 0;
    if (q == e) { /* counter / x86-tsc clocks print integers */
        if (!r->warned_int_ts) {
            r->warned_int_ts = 1;
            lp_diags_report(r->b->diags, LP_SEV_NOTE, LP_RULE_IMPORT, r->b->file, r->line,
                            "integer timestamps (trace_clock counter or x86-tsc?): taken as ns");
        }
        *ts = (int64_t)sec;
        return 1;
    }
    if (*q != '.' || sec > 9000000000ull)
        return 0;
    int digits = 0;
    for (q++; q < e && is_dig(*q); q++)
        if (digits < 9) {
            frac = frac * 10 + (uint64_t)(*q - '0');
            digits++;
        }
    if (q != e || digits == 0)
        return 0;
    while (digits++ < 9)
        frac *= 10;
    *ts = (int64_t)(sec * 1000000000ull + frac);
    return 1;
}

/* The "[CPU]" bracket: '[' digits ']' after a blank, followed by a blank or the end. */
static const char *find_cpu(const char *p, const char *e, uint32_t *cpu)
{
    for (const char *q = p + 1; q < e; q++) {
        if (*q != '[' || !is_sp(q[-1]))
            continue;
        const char *d = q + 1;
        uint64_t c = 0;
        while (d < e && is_dig(*d) && d - q < 8)
            c = c * 10 + (uint64_t)(*d++ - '0');
        if (d == q + 1 || d >= e || *d != ']' || (d + 1 < e && !is_sp(d[1])))
            continue;
        *cpu = (uint32_t)c;
        return q;
    }
    return NULL;
}

static lp_status header_line(ftread *r, span l)
{
    const char *p = l.p, *e = l.p + l.n;
    for (const char *q = p; q + 3 < e; q++) /* tracefs `trace`: "... #P:2" */
        if (q[0] == '#' && q[1] == 'P' && q[2] == ':') {
            int64_t n;
            if (parse_int((span){q + 3, (size_t)(e - q - 3)}, &n) && n > 0 && n < 65536 && (uint32_t)n > r->b->ncpus)
                r->b->ncpus = (uint32_t)n;
        }
    static const char tag[] = "# longpole-kernel:";
    if (l.n > sizeof tag && memcmp(p, tag, sizeof tag - 1) == 0) {
        kv f[MAXKV];
        size_t n = split_fields(trim(p + sizeof tag - 1, e), f);
        const span *h = find_kv(f, n, "hostname");
        if (h && h->n)
            return khb_str(r->b, h->p, h->n, &r->b->name, r->err);
    }
    return LP_OK;
}

/* "CPU:1 [LOST 123 EVENTS]" (trace_pipe), "CPU:1 [123 EVENTS DROPPED]" (trace-cmd) */
static int lost_line(ftread *r, span l)
{
    if (l.n < 4 || memcmp(l.p, "CPU", 3) != 0)
        return 0;
    const char *p = l.p, *e = l.p + l.n;
    for (const char *q = p; q < e; q++) {
        int64_t n;
        if (e - q > 5 && memcmp(q, "LOST ", 5) == 0 && parse_int((span){q + 5, (size_t)(e - q - 5)}, &n)) {
            r->b->nlost += (uint64_t)n;
            goto report;
        }
        if (*q == '[' && parse_int((span){q + 1, (size_t)(e - q - 1)}, &n) && contains(q, (size_t)(e - q), "DROPPED")) {
            r->b->nlost += (uint64_t)n;
            goto report;
        }
        continue;
    report:
        lp_diags_report(r->b->diags, LP_SEV_WARNING, LP_RULE_IMPORT, r->b->file, r->line,
                        "the kernel lost %lld events here (ring buffer full)", (long long)n);
        return 1;
    }
    return contains(p, l.n, "is empty"); /* trace-cmd: "CPU 1 is empty" */
}

static lp_status event_line(ftread *r, span l)
{
    const char *p = l.p, *e = l.p + l.n;
    uint32_t cpu;
    const char *br = find_cpu(p, e, &cpu);
    if (!br) {
        bad_line(r, l, "not an ftrace event line (no [CPU])");
        return LP_OK;
    }
    span task = trim(p, br);
    if (task.n && task.p[task.n - 1] == ')') { /* record-tgid: "comm-pid (tgid)" */
        const char *o = last_of(task.p, task.n, '(');
        if (o)
            task = trim(task.p, o);
    }
    const char *dash = last_of(task.p, task.n, '-');
    int64_t pid;
    if (!dash || !parse_int((span){dash + 1, (size_t)(task.p + task.n - dash - 1)}, &pid) || pid < 0 ||
        pid > INT32_MAX) {
        bad_line(r, l, "no COMM-PID before the CPU");
        return LP_OK;
    }
    /* after the bracket: [FLAGS] TIMESTAMP: EVENT: FIELDS */
    const char *q = (const char *)memchr(br, ']', (size_t)(e - br)) + 1;
    span tok[2];
    int nt = 0;
    while (q < e && nt < 2) {
        while (q < e && is_sp(*q))
            q++;
        const char *s = q;
        while (q < e && !is_sp(*q))
            q++;
        tok[nt++] = (span){s, (size_t)(q - s)};
        if (q > s && q[-1] == ':')
            break;
    }
    int64_t ts;
    span t = nt ? tok[nt - 1] : (span){q, 0};
    if (t.n < 2 || t.p[t.n - 1] != ':' || !parse_ts(r, (span){t.p, t.n - 1}, &ts)) {
        bad_line(r, l, "no 'SECONDS.FRACTION:' timestamp");
        return LP_OK;
    }
    while (q < e && is_sp(*q))
        q++;
    const char *c = memchr(q, ':', (size_t)(e - q));
    span ev = c ? trim(q, c) : (span){q, 0};
    if (!ev.n || memchr(ev.p, ' ', ev.n)) {
        bad_line(r, l, "no 'EVENT:' after the timestamp");
        return LP_OK;
    }
    const ftname *nm = NULL;
    lp_status st = name_get(r, ev, &nm);
    if (st)
        return st;
    lp_kev k = {.ts = ts, .cpu = cpu, .type = nm->def ? nm->def->type : LP_KEV_OTHER, .tid = -1, .tid2 = -1,
                .ctx_tid = (int32_t)pid, .a = -1, .b = -1, .name = nm->id, .name2 = LP_STR_NONE};
    if (nm->def && !event_fields(r, nm, trim(c + 1, e), &k, &st))
        return st;
    return khb_push(r->b, 0, &k, r->err);
}

lp_status lp_kftrace_read(khb *b, const char *data, size_t n, lp_error *err)
{
    ftread r;
    memset(&r, 0, sizeof r);
    r.b = b;
    r.err = err;
    b->bytes = n;
    lp_status st = lp_hmap_init(&r.names, 64, err);
    const char *p = data, *end = data + n;
    while (!st && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        r.line++;
        span l = trim(p, le > p && le[-1] == '\r' ? le - 1 : le);
        p = nl ? nl + 1 : end;
        if (!l.n)
            continue;
        if (l.p[0] == '#')
            st = header_line(&r, l);
        else if (l.n > 5 && memcmp(l.p, "cpus=", 5) == 0) {
            int64_t c;
            if (parse_int((span){l.p + 5, l.n - 5}, &c) && c > 0 && c < 65536 && (uint32_t)c > b->ncpus)
                b->ncpus = (uint32_t)c;
        } else if (l.n > 7 && memcmp(l.p, "version", 7) == 0)
            continue;
        else if (!lost_line(&r, l))
            st = event_line(&r, l);
    }
    for (size_t i = 0; i < r.nnm; i++)
        lp_free(r.nm[i].name);
    lp_free(r.nm);
    lp_hmap_release(&r.names);
    return st;
}
