/* chrome_keys.c: the values of a trace event (chrome_int.h): times in microseconds to
 * exact nanoseconds, ids as text, names interned, and the threads and processes that
 * "pid" and "tid" name (one lookup cached: consecutive events repeat their thread).
 *
 * Invariants: a time converts exactly or is refused (never rounded silently beyond the
 * documented half-to-even below 1 ns); each (pid, tid) names one thread for the file.
 */
#include "import/chrome/chrome_int.h"
#include "longpole/base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers ------------------------------------------------------------------------ */

static const uint64_t pow10u[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
                                    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
                                    1000000000000ull, 10000000000000ull, 100000000000000ull,
                                    1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
                                    1000000000000000000ull, 10000000000000000000ull};

/* Decimal text (JSON number grammar) of a number of microseconds to integer
 * nanoseconds, exactly: rounded half to even only where the text has digits below
 * 1 ns. 0 on success, -1 on bad syntax or overflow. */
static int us_to_ns(const char *p, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && (p[i] == '-' || p[i] == '+')) {
        neg = p[i] == '-';
        i++;
    }
    uint64_t m = 0;
    int nd = 0, exp10 = 0, sticky = 0, digits = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        digits++;
        if (nd < 19) {
            m = m * 10 + d;
            if (m)
                nd++;
        } else {
            exp10++;
            sticky |= d != 0;
        }
    }
    if (i < n && p[i] == '.') {
        i++;
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
            unsigned d = (unsigned)(p[i] - '0');
            digits++;
            if (nd < 19) {
                m = m * 10 + d;
                if (m)
                    nd++;
                exp10--;
            } else {
                sticky |= d != 0;
            }
        }
    }
    if (!digits)
        return -1;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        int eneg = 0, e = 0, ed = 0;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            eneg = p[i++] == '-';
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, ed++)
            if (e < 100000)
                e = e * 10 + (p[i] - '0');
        if (!ed)
            return -1;
        exp10 += eneg ? -e : e;
    }
    if (i != n)
        return -1;
    uint64_t q;
    int E = exp10 + 3;
    if (m == 0) {
        q = 0;
    } else if (E >= 0) {
        if (E > 19)
            return -1;
        if (m > UINT64_MAX / pow10u[E])
            return -1;
        q = m * pow10u[E];
    } else {
        int k = -E;
        if (k > 19) {
            q = 0;
        } else {
            uint64_t P = pow10u[k];
            q = m / P;
            uint64_t r = m % P;
            if (r > P - r || (r == P - r && (sticky || (q & 1))))
                q++;
        }
    }
    if (q > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? -(int64_t)q : (int64_t)q;
    return 0;
}

/* A timestamp or duration node (a number, or a number in a string) in ns. */
int ch_node_ns(const lp_json *v, int64_t *out)
{
    if (!v || (v->type != LP_JSON_NUMBER && v->type != LP_JSON_STRING))
        return -1;
    return us_to_ns(v->s, v->len, out);
}

/* The text of an id-like node (pid, tid, id): a number's literal or a string's
 * content; NULL for other types. */
const char *ch_id_text(const lp_json *v, size_t *n)
{
    if (!v || (v->type != LP_JSON_NUMBER && v->type != LP_JSON_STRING))
        return NULL;
    *n = v->len;
    return v->s;
}

/* ---- strings and keys ------------------------------------------------------------------ */

lp_str ch_node_str(cctx *c, const lp_json *v, int *oom)
{
    lp_str s = LP_STR_NONE;
    if (v && v->type == LP_JSON_STRING && intern(c, v->s, v->len, &s))
        *oom = 1;
    return s;
}

/* Key id in the private table; keyval grows along, new entries NONE. */
int ch_key_id(cctx *c, const char *k, size_t n, uint32_t *id)
{
    lp_str s;
    if (lp_strtab_intern(&c->keys, k, n, &s))
        return -1;
    if (s >= c->capkeyval) {
        size_t old = c->capkeyval;
        if (lp_grow_at(&c->keyval, &c->capkeyval, (size_t)s + 1, sizeof *c->keyval))
            return -1;
        for (size_t i = old; i < c->capkeyval; i++)
            c->keyval[i] = NONE;
    }
    *id = s;
    return 0;
}

/* Build "a\x1fb\x1fc..." into buf (cut at cap). */
size_t ch_join_key(char *buf, size_t cap, const char *const *parts, const size_t *lens, int n)
{
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        if (i && o < cap)
            buf[o++] = '\x1f';
        size_t k = lens[i] < cap - o ? lens[i] : cap - o;
        memcpy(buf + o, parts[i], k);
        o += k;
    }
    return o;
}

lp_status ch_get_proc(cctx *c, const char *pid, size_t pn, uint32_t *out)
{
    char buf[160];
    const char *parts[2] = {"P", pid};
    size_t lens[2] = {1, pn};
    size_t kn = ch_join_key(buf, sizeof buf, parts, lens, 2);
    uint32_t k;
    if (ch_key_id(c, buf, kn, &k))
        return nomem(c);
    if (c->keyval[k] == NONE) {
        if (lp_grow_at(&c->pr, &c->cappr, c->npr + 1, sizeof *c->pr))
            return nomem(c);
        cproc *p = &c->pr[c->npr];
        p->name = p->labels = p->sort = LP_STR_NONE;
        if (intern(c, pid, pn, &p->pid))
            return nomem(c);
        c->keyval[k] = (uint32_t)c->npr++;
    }
    *out = c->keyval[k];
    return LP_OK;
}

lp_status ch_new_thread(cctx *c, uint32_t *out)
{
    if (lp_grow_at(&c->th, &c->capth, c->nth + 1, sizeof *c->th))
        return nomem(c);
    cthread *t = &c->th[c->nth];
    memset(t, 0, sizeof *t);
    t->pid = t->tid = t->tname = t->tsort = t->akey = LP_STR_NONE;
    t->stream = -1;
    t->worker = NONE;
    t->proc = NONE;
    *out = (uint32_t)c->nth++;
    return LP_OK;
}

/* The thread of (pid, tid) nodes: pid missing is "0", tid missing is the pid. */
lp_status ch_get_thread(cctx *c, const lp_json *pidn, const lp_json *tidn, uint32_t *out)
{
    size_t pn = 1, tn;
    const char *ps = ch_id_text(pidn, &pn);
    if (!ps) {
        ps = "0";
        pn = 1;
    }
    const char *ts = ch_id_text(tidn, &tn);
    if (!ts) {
        ts = ps;
        tn = pn;
    }
    char buf[128];
    const char *parts[3] = {"T", ps, ts};
    size_t lens[3] = {1, pn, tn};
    size_t kn = ch_join_key(buf, sizeof buf, parts, lens, 3);
    if (c->lastthread != NONE && kn == c->lastkeylen && memcmp(buf, c->lastkey, kn) == 0) {
        *out = c->lastthread;
        return LP_OK;
    }
    uint32_t k;
    if (ch_key_id(c, buf, kn, &k))
        return nomem(c);
    if (c->keyval[k] == NONE) {
        uint32_t t, p;
        lp_status st;
        if ((st = ch_get_proc(c, ps, pn, &p)) || (st = ch_new_thread(c, &t)))
            return st;
        cthread *th = &c->th[t];
        th->proc = p;
        if (intern(c, ps, pn, &th->pid) || intern(c, ts, tn, &th->tid))
            return nomem(c);
        c->keyval[k] = t;
    }
    *out = c->keyval[k];
    memcpy(c->lastkey, buf, kn);
    c->lastkeylen = kn;
    c->lastthread = *out;
    return LP_OK;
}
