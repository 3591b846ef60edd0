/* snailtrail.c: SnailTrail's binary log format (snailtrail.h, docs/formats/snailtrail.md):
 * the record decoder and encoder, the importer ("snailtrail": a whole log into a
 * builder) and the writer (a trace as a log, for tests and replays).
 *
 * The decoder is hand-written rather than msgpack-c's unpacker: a record is seven bare
 * integers, so only MessagePack's nine integer markers are valid; decoding them in place
 * costs a few ns per field, keeps exact byte offsets for every error (the unpacker hides
 * them behind its buffer), resumes on a record split across reads, and needs no
 * dependency. Bad bytes are reported with their offset and skipped one at a time until
 * a valid record starts again.
 *
 * Importer semantics (SnailTrail pag-construction/src/lib.rs and input.rs):
 *  - per worker, Start/End are flattened into one activity at a time: a Start while an
 *    activity is open cuts the open one there; an End closes the innermost open activity
 *    of its type (and drops those opened inside it) from the last boundary; an End with
 *    no open activity of its type, and activities still open at the end, are reported
 *    and dropped;
 *  - Sent/Received pair by (sender, receiver, correlator); a Sent without a remote worker
 *    pairs with receives on any worker; one send may have several receives (multicast);
 *    unmatched halves and second sends of one key are reported and dropped;
 *  - workers and operators are named by their numbers; Bogus events are skipped.
 */
#include "longpole/import/snailtrail.h"
#include "longpole/codec/io.h"
#include "longpole/formats/lpt.h"
#include "longpole/import/import.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <stdlib.h>
#include <string.h>

/* ---- names of the enums -------------------------------------------------------------------- */

static const char *const st_types[14] = {
    NULL, "io", "buffer", "scheduling", "processing", "barrier", "serialization", "deserialization",
    "fault_tolerance", "control_message", "data_message", "unknown", "waiting", "busy_waiting",
};
static const char *const st_act_names[14] = {
    NULL, "Input", "Buffer", "Scheduling", "Processing", "BarrierProcessing", "Serialization", "Deserialization",
    "FaultTolerance", "ControlMessage", "DataMessage", "Unknown", "Waiting", "BusyWaiting",
};
static const char *const st_ev_names[6] = {NULL, "Start", "End", "Sent", "Received", "Bogus"};

const char *lp_st_type_name(unsigned a) { return a >= 1 && a <= 13 ? st_types[a] : NULL; }
const char *lp_st_activity_name(unsigned a) { return a >= 1 && a <= 13 ? st_act_names[a] : NULL; }
const char *lp_st_event_name(unsigned e) { return e >= 1 && e <= 5 ? st_ev_names[e] : NULL; }

unsigned lp_st_activity_of(const char *name)
{
    for (unsigned a = 1; a <= 13; a++)
        if (strcmp(st_types[a], name) == 0)
            return a;
    return LP_ST_UNKNOWN;
}

/* ---- decoding ----------------------------------------------------------------------------------- */

static const char *marker_name(unsigned char m)
{
    if (m == 0xc0)
        return "nil";
    if (m == 0xc2 || m == 0xc3)
        return "a boolean";
    if ((m & 0xe0) == 0xa0 || (m >= 0xd9 && m <= 0xdb))
        return "a string";
    if ((m & 0xf0) == 0x90 || m == 0xdc || m == 0xdd)
        return "an array";
    if ((m & 0xf0) == 0x80 || m == 0xde || m == 0xdf)
        return "a map";
    if (m == 0xca || m == 0xcb)
        return "a float";
    if (m >= 0xc4 && m <= 0xc6)
        return "binary data";
    if ((m >= 0xc7 && m <= 0xc9) || (m >= 0xd4 && m <= 0xd8))
        return "an extension";
    return "an unused marker";
}

/* One integer at p[0..n): 1 (value, *len bytes), 0 (incomplete), -1 (not an integer).
 * *big: an unsigned value above INT64_MAX (then *v holds its bits). */
static inline int read_int(const unsigned char *p, size_t n, int64_t *v, int *big, size_t *len)
{
    if (n == 0)
        return 0;
    unsigned m = p[0];
    *big = 0;
    if (m <= 0x7f || m >= 0xe0) { /* positive or negative fixint: the common case */
        *v = (int8_t)(unsigned char)m;
        *len = 1;
        return 1;
    }
    size_t k;
    int sign;
    switch (m) {
    case 0xcc: k = 1, sign = 0; break;
    case 0xcd: k = 2, sign = 0; break;
    case 0xce: k = 4, sign = 0; break;
    case 0xcf: k = 8, sign = 0; break;
    case 0xd0: k = 1, sign = 1; break;
    case 0xd1: k = 2, sign = 1; break;
    case 0xd2: k = 4, sign = 1; break;
    case 0xd3: k = 8, sign = 1; break;
    default: return -1;
    }
    if (n < 1 + k)
        return 0;
    uint64_t u = 0;
    for (size_t i = 0; i < k; i++)
        u = u << 8 | p[1 + i];
    if (sign) {
        unsigned bits = (unsigned)(8 * k);
        *v = bits == 64 ? (int64_t)u : (int64_t)(u ^ (UINT64_C(1) << (bits - 1))) - (INT64_C(1) << (bits - 1));
    } else {
        *v = (int64_t)u;
        *big = u > INT64_MAX;
    }
    *len = 1 + k;
    return 1;
}

static const char *const field_names[7] = {"timestamp", "local_worker", "activity_type", "event_type",
                                           "correlator_id", "remote_worker", "operator_id"};

int lp_st_decode(const unsigned char *p, size_t n, lp_st_record *r, size_t *used, char *why, size_t whyn)
{
    size_t off = 0;
    if (n && p[0] == 0x97) /* a record wrapped in an array of 7 */
        off = 1;
    int64_t f[7];
    for (int i = 0; i < 7; i++) {
        size_t len;
        int big;
        int rc = read_int(p + off, n - off, &f[i], &big, &len);
        if (rc == 0)
            return 0;
        if (rc < 0) {
            snprintf(why, whyn, "field %d (%s): expected a MessagePack integer, found %s (0x%02x)", i + 1,
                     field_names[i], marker_name(p[off]), p[off]);
            *used = off;
            return -1;
        }
        int64_t x = f[i];
        const char *bad = NULL;
        switch (i) {
        case 0: bad = big || x < 0 ? "not a time in 0..2^63-1 ns" : NULL; break;
        case 1: bad = big || x < 0 || x > UINT32_MAX ? "not a worker number (0..2^32-1)" : NULL; break;
        case 2: bad = big || x < 1 || x > 13 ? "not an ActivityType (1..13)" : NULL; break;
        case 3: bad = big || x < 1 || x > 5 ? "not an EventType (1..5)" : NULL; break;
        case 4: break; /* any 64 bits (SnailTrail writes its u64 as i64; -1 = none) */
        default: bad = big || x < -1 || x > UINT32_MAX ? "neither -1 nor a number 0..2^32-1" : NULL; break;
        }
        if (bad) {
            char num[32];
            if (big)
                snprintf(num, sizeof num, "%llu", (unsigned long long)(uint64_t)x);
            else
                snprintf(num, sizeof num, "%lld", (long long)x);
            snprintf(why, whyn, "field %d (%s): %s is %s", i + 1, field_names[i], num, bad);
            *used = off;
            return -1;
        }
        off += len;
    }
    r->timestamp = (uint64_t)f[0];
    r->local_worker = (uint32_t)f[1];
    r->activity = (uint8_t)f[2];
    r->event = (uint8_t)f[3];
    r->correlator = f[4];
    r->remote_worker = f[5];
    r->operator_id = f[6];
    *used = off;
    return 1;
}

static size_t put_uint(unsigned char *o, uint64_t v)
{
    if (v <= 0x7f) {
        o[0] = (unsigned char)v;
        return 1;
    }
    int k = v <= 0xff ? 1 : v <= 0xffff ? 2 : v <= 0xffffffffu ? 4 : 8;
    o[0] = (unsigned char)(k == 1 ? 0xcc : k == 2 ? 0xcd : k == 4 ? 0xce : 0xcf);
    for (int i = 0; i < k; i++)
        o[1 + i] = (unsigned char)(v >> (8 * (k - 1 - i)));
    return 1 + (size_t)k;
}

static size_t put_sint(unsigned char *o, int64_t v)
{
    if (v >= 0)
        return put_uint(o, (uint64_t)v);
    if (v >= -32) {
        o[0] = (unsigned char)(int8_t)v;
        return 1;
    }
    int k = v >= INT8_MIN ? 1 : v >= INT16_MIN ? 2 : v >= INT32_MIN ? 4 : 8;
    o[0] = (unsigned char)(k == 1 ? 0xd0 : k == 2 ? 0xd1 : k == 4 ? 0xd2 : 0xd3);
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < k; i++)
        o[1 + i] = (unsigned char)(u >> (8 * (k - 1 - i)));
    return 1 + (size_t)k;
}

size_t lp_st_encode(const lp_st_record *r, unsigned char out[64])
{
    size_t n = put_uint(out, r->timestamp);
    n += put_uint(out + n, r->local_worker);
    n += put_uint(out + n, r->activity);
    n += put_uint(out + n, r->event);
    n += put_sint(out + n, r->correlator);
    n += put_sint(out + n, r->remote_worker);
    n += put_sint(out + n, r->operator_id);
    return n;
}

/* ---- the importer --------------------------------------------------------------------------------- */

/* Worker and operator numbers to ids: the library's hash table. */
static uint32_t nmap_get(const lp_hmap32 *m, uint32_t key)
{
    uint32_t v;
    return lp_hmap32_get(m, key, &v) ? v : UINT32_MAX;
}

static int nmap_put(lp_hmap32 *m, uint32_t key, uint32_t id) { return lp_hmap32_put(m, key, id, NULL) ? -1 : 0; }

typedef struct iopen {
    int64_t t;
    uint16_t type;
    lp_str op;
    uint64_t off;
} iopen;

typedef struct iworker {
    iopen *stk;
    uint32_t nstk, capstk;
    int64_t last;            /* last activity boundary */
    int64_t prev;            /* time of the previous event (order check) */
} iworker;

typedef struct ihalf {
    int64_t t;
    uint32_t w, peer;        /* peer UINT32_MAX: any receiver */
    uint64_t corr;
    uint64_t off;            /* byte offset, for diagnostics */
    uint8_t control;
    uint8_t used;
} ihalf;

typedef struct ictx {
    lp_builder *b;
    lp_diags *d;
    const char *name;
    lp_hmap32 wmap, omap;    /* worker number -> builder id; operator number -> lp_str */
    iworker *wk;             /* by builder worker id */
    uint32_t capwk;
    uint16_t types[14];      /* builder type of each activity type (0 = not yet) */
    int have_type[14];
    ihalf *sends, *recvs;
    size_t nsends, capsends, nrecvs, caprecvs;
    uint32_t kind_data, kind_control; /* attribute lists */
    uint64_t nbogus;
} ictx;

#define IBAD(c, off, ...) lp_diags_report_at((c)->d, LP_SEV_ERROR, LP_RULE_IMPORT, (c)->name, (off), __VA_ARGS__)

static lp_status worker_of(ictx *c, uint32_t num, uint32_t *w, lp_error *err)
{
    uint32_t id = nmap_get(&c->wmap, num);
    if (id != UINT32_MAX) {
        *w = id;
        return LP_OK;
    }
    char nm[16];
    int n = snprintf(nm, sizeof nm, "%u", num);
    lp_status st = lp_builder_worker(c->b, nm, (size_t)n, &id, err);
    if (st)
        return st;
    if (nmap_put(&c->wmap, num, id))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    if (id >= c->capwk) {
        size_t cap = c->capwk ? 2 * (size_t)c->capwk : 64;
        while (cap <= id)
            cap *= 2;
        iworker *nw = lp_reallocarray(c->wk, cap, sizeof *nw);
        if (!nw)
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        memset(nw + c->capwk, 0, (cap - c->capwk) * sizeof *nw);
        for (size_t i = c->capwk; i < cap; i++)
            nw[i].last = nw[i].prev = INT64_MIN;
        c->wk = nw;
        c->capwk = (uint32_t)cap;
    }
    *w = id;
    return LP_OK;
}

static lp_status op_of(ictx *c, int64_t num, lp_str *op, lp_error *err)
{
    if (num < 0) {
        *op = LP_STR_NONE;
        return LP_OK;
    }
    uint32_t id = nmap_get(&c->omap, (uint32_t)num);
    if (id == UINT32_MAX) {
        char nm[16];
        int n = snprintf(nm, sizeof nm, "%u", (uint32_t)num);
        if (lp_strtab_intern(lp_builder_strtab(c->b), nm, (size_t)n, &id) || nmap_put(&c->omap, (uint32_t)num, id))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    *op = id;
    return LP_OK;
}

static lp_status type_of(ictx *c, unsigned act, uint16_t *ty, lp_error *err)
{
    if (!c->have_type[act]) {
        const char *nm = st_types[act];
        lp_status st = lp_builder_type(c->b, nm, strlen(nm), &c->types[act], err);
        if (st)
            return st;
        c->have_type[act] = 1;
    }
    *ty = c->types[act];
    return LP_OK;
}

static lp_status add_half(ihalf **arr, size_t *n, size_t *cap, const ihalf *h, lp_error *err)
{
    void *q = *arr;
    if (lp_grow(&q, cap, *n + 1, sizeof(ihalf)))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    *arr = q;
    (*arr)[(*n)++] = *h;
    return LP_OK;
}

static lp_status apply(ictx *c, const lp_st_record *r, uint64_t off, lp_error *err)
{
    lp_status st;
    if (r->event == LP_ST_BOGUS) {
        if (!c->nbogus++)
            lp_diags_report_at(c->d, LP_SEV_WARNING, LP_RULE_IMPORT, c->name, off,
                               "Bogus event (SnailTrail-internal) skipped; later ones are skipped silently");
        return LP_OK;
    }
    uint32_t w;
    if ((st = worker_of(c, r->local_worker, &w, err)))
        return st;
    int64_t t = (int64_t)r->timestamp;
    iworker *wk = &c->wk[w];
    if (r->event == LP_ST_SENT || r->event == LP_ST_RECEIVED) {
        if (r->correlator == -1) {
            IBAD(c, off, "%s event without a correlator id on worker %u: cannot be paired; dropped",
                 st_ev_names[r->event], r->local_worker);
            return LP_OK;
        }
        ihalf h = {t, w, UINT32_MAX, (uint64_t)r->correlator, off, r->activity == LP_ST_CONTROL_MESSAGE, 0};
        if (r->remote_worker >= 0 && (st = worker_of(c, (uint32_t)r->remote_worker, &h.peer, err)))
            return st;
        if (r->event == LP_ST_SENT)
            return add_half(&c->sends, &c->nsends, &c->capsends, &h, err);
        if (h.peer == UINT32_MAX) {
            IBAD(c, off, "Received event without a remote worker on worker %u: cannot be paired; dropped",
                 r->local_worker);
            return LP_OK;
        }
        return add_half(&c->recvs, &c->nrecvs, &c->caprecvs, &h, err);
    }
    /* Start / End */
    if (t < wk->prev) {
        IBAD(c, off, "%s event on worker %u at %lld, before the worker's previous one (%lld): a worker's events must "
                     "come in time order; dropped",
             st_ev_names[r->event], r->local_worker, (long long)t, (long long)wk->prev);
        return LP_OK;
    }
    wk->prev = t;
    uint16_t ty = 0;
    lp_str op = LP_STR_NONE;
    if ((st = type_of(c, r->activity, &ty, err)) || (st = op_of(c, r->operator_id, &op, err)))
        return st;
    if (r->event == LP_ST_START) {
        if (wk->nstk && t > wk->last) {
            const iopen *top = &wk->stk[wk->nstk - 1];
            if ((st = lp_builder_activity(c->b, w, wk->last, t, top->type, top->op, 0, off, err)))
                return st;
        }
        void *q = wk->stk;
        size_t cap = wk->capstk;
        if (lp_grow(&q, &cap, (size_t)wk->nstk + 1, sizeof(iopen)))
            return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
        wk->stk = q;
        wk->capstk = (uint32_t)cap;
        wk->stk[wk->nstk++] = (iopen){t, ty, op, off};
        wk->last = t;
        return LP_OK;
    }
    uint32_t i = wk->nstk;
    while (i > 0 && wk->stk[i - 1].type != ty)
        i--;
    if (i == 0) {
        IBAD(c, off, "End of a %s activity on worker %u at %lld without a Start; dropped", st_act_names[r->activity],
             r->local_worker, (long long)t);
        return LP_OK;
    }
    const iopen *so = &wk->stk[i - 1];
    int whole = i == wk->nstk && so->t == wk->last;
    if (t > wk->last || whole)
        if ((st = lp_builder_activity(c->b, w, wk->last, t, ty, op != LP_STR_NONE ? op : so->op, 0, off, err)))
            return st;
    wk->nstk = i - 1;
    wk->last = t;
    return LP_OK;
}

/* A send's (sender, receiver, correlator), for the table of sends. */
typedef struct hkey {
    const ihalf *sends;
    uint32_t from, to;
    uint64_t corr;
} hkey;

static inline uint32_t hkey_hash(const hkey *k)
{
    return (uint32_t)lp_hash_mix(k->corr, (uint64_t)k->from << 32 | k->to);
}

static inline int same_send(const void *ctx, uint64_t i)
{
    const hkey *k = ctx;
    const ihalf *o = &k->sends[i];
    return o->w == k->from && o->peer == k->to && o->corr == k->corr;
}

/* Pair the halves (after the whole input: a receive may come before its send). */
static lp_status pair(ictx *c, lp_error *err)
{
    lp_status st = LP_OK;
    lp_hmap32 tab; /* send index; room for every send, so no insertion fails */
    if (lp_hmap32_init(&tab, c->nsends, NULL))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    const lp_trace *t = lp_builder_trace(c->b);
    for (size_t i = 0; i < c->nsends; i++) {
        ihalf *s = &c->sends[i];
        hkey k = {c->sends, s->w, s->peer, s->corr};
        int added;
        uint32_t first = lp_hmap32_find_or_add(&tab, hkey_hash(&k), same_send, &k, (uint32_t)i, &added);
        if (!added) {
            const ihalf *o = &c->sends[first];
            IBAD(c, s->off, "second Sent event from worker %s with correlator %llu (first at byte %llu); dropped",
                 lp_trace_worker_name(t, s->w), (unsigned long long)s->corr, (unsigned long long)o->off);
            s->used = 1;
        }
    }
    for (size_t i = 0; i < c->nrecvs && !st; i++) {
        const ihalf *r = &c->recvs[i];
        ihalf *s = NULL;
        for (int any = 0; any < 2 && !s; any++) {
            hkey k = {c->sends, r->peer, any ? UINT32_MAX : r->w, r->corr};
            uint32_t si = lp_hmap32_find(&tab, hkey_hash(&k), same_send, &k, NULL);
            if (si != LP_HMAP32_EMPTY)
                s = &c->sends[si];
        }
        if (!s) {
            IBAD(c, r->off, "Received event on worker %s from %s with correlator %llu has no Sent event; dropped",
                 lp_trace_worker_name(t, r->w), lp_trace_worker_name(t, r->peer), (unsigned long long)r->corr);
            continue;
        }
        s->used = 1;
        st = lp_builder_message(c->b, s->w, s->t, r->w, r->t, s->corr & ~LP_MSGID_STR,
                                s->control || r->control ? c->kind_control : c->kind_data, r->off, err);
    }
    for (size_t i = 0; i < c->nsends && !st; i++)
        if (!c->sends[i].used)
            IBAD(c, c->sends[i].off, "Sent event from worker %s with correlator %llu was never received; dropped",
                 lp_trace_worker_name(t, c->sends[i].w), (unsigned long long)c->sends[i].corr);
    lp_hmap32_release(&tab);
    return st;
}

static void ictx_release(ictx *c)
{
    lp_hmap32_release(&c->wmap);
    lp_hmap32_release(&c->omap);
    for (uint32_t i = 0; i < c->capwk; i++)
        lp_free(c->wk[i].stk);
    lp_free(c->wk);
    lp_free(c->sends);
    lp_free(c->recvs);
}

static lp_status kind_list(lp_builder *b, const char *v, uint32_t *list, lp_error *err)
{
    lp_str kv[2];
    if (lp_strtab_intern(lp_builder_strtab(b), "kind", 4, &kv[0]) ||
        lp_strtab_intern(lp_builder_strtab(b), v, strlen(v), &kv[1]))
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    return lp_builder_attrs(b, kv, 1, list, err);
}

static lp_status st_read(lp_builder *b, lp_input *in, const lp_load_opts *opts, lp_error *err)
{
    (void)opts;
    ictx c;
    memset(&c, 0, sizeof c);
    c.b = b;
    c.d = lp_builder_diags(b);
    c.name = lp_input_name(in);
    lp_status st = lp_builder_source(b, c.name, err);
    if (!st)
        st = kind_list(b, "data", &c.kind_data, err);
    if (!st)
        st = kind_list(b, "control", &c.kind_control, err);
    size_t cap = (size_t)1 << 20;
    unsigned char *buf = lp_malloc(cap);
    if (!buf && !st)
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    size_t have = 0;      /* bytes in buf */
    uint64_t base = 0;    /* input offset of buf[0] */
    int eof = 0, bad = 0; /* bad: inside a run of bytes that do not decode */
    uint64_t bad_from = 0;
    while (!st) {
        if (!eof) {
            size_t got;
            if ((st = lp_input_read(in, buf + have, cap - have, &got, err)))
                break;
            if (!got)
                eof = 1;
            have += got;
        }
        size_t pos = 0;
        while (!st && pos < have) {
            lp_st_record r;
            size_t used;
            char why[200];
            int rc = lp_st_decode(buf + pos, have - pos, &r, &used, why, sizeof why);
            if (rc == 0)
                break;
            if (rc < 0) {
                if (!bad) {
                    IBAD(&c, base + pos + used, "not a SnailTrail record: %s; skipping to the next valid record", why);
                    bad = 1;
                    bad_from = base + pos;
                }
                pos++;
                continue;
            }
            if (bad) {
                lp_diags_report_at(c.d, LP_SEV_NOTE, LP_RULE_IMPORT, c.name, base + pos,
                                   "records resume here after %llu bytes skipped",
                                   (unsigned long long)(base + pos - bad_from));
                bad = 0;
            }
            st = apply(&c, &r, base + pos, err);
            pos += used;
        }
        if (st)
            break;
        memmove(buf, buf + pos, have - pos);
        have -= pos;
        base += pos;
        if (eof) {
            if (have)
                IBAD(&c, base, "the input ends inside a record (%zu byte%s of it); dropped", have,
                     have == 1 ? "" : "s");
            break;
        }
    }
    lp_free(buf);
    if (!st)
        st = pair(&c, err);
    for (uint32_t i = 0; !st && i < c.capwk; i++)
        for (uint32_t k = 0; k < c.wk[i].nstk; k++)
            IBAD(&c, c.wk[i].stk[k].off, "Start event on worker %s at %lld never ended; dropped",
                 lp_trace_worker_name(lp_builder_trace(b), i), (long long)c.wk[i].stk[k].t);
    ictx_release(&c);
    return st;
}

static int st_detect(const unsigned char *head, size_t n, const char *path)
{
    size_t pos = 0, good = 0;
    while (pos < n) {
        lp_st_record r;
        size_t used;
        char why[8];
        int rc = lp_st_decode(head + pos, n - pos, &r, &used, why, sizeof why);
        if (rc < 0)
            return 0;
        if (rc == 0)
            break;
        good++;
        pos += used;
    }
    if (!good)
        return 0;
    int score = 40;
    if (path) {
        const char *dot = strrchr(path, '.');
        if (dot && (strcmp(dot, ".msgpack") == 0 || strcmp(dot, ".mpk") == 0 || strcmp(dot, ".snailtrail") == 0 ||
                    strcmp(dot, ".st") == 0))
            score = 80;
    }
    return score;
}

const lp_importer lp_import_snailtrail = {
    "snailtrail",
    "SnailTrail log (strymon-system/snailtrail logformat: MessagePack records of 7 integers, Start/End/Sent/Received "
    "events; docs/formats/snailtrail.md)",
    st_detect,
    st_read,
};

/* ---- the writer ----------------------------------------------------------------------------------- */

typedef struct wev {
    int64_t t;
    uint32_t w;
    uint8_t slot;            /* order at one instant on one worker (see lp_st_write) */
    uint64_t seq;
    lp_st_record r;
} wev;

static int cmp_wev(const void *pa, const void *pb)
{
    const wev *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->w != b->w)
        return a->w < b->w ? -1 : 1;
    if (a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

lp_status lp_st_write(const lp_trace *t, FILE *out, lp_error *err)
{
    uint64_t n = 2 * (t->nacts - t->ngaps) + 2 * t->nmsgs, k = 0;
    wev *ev = lp_malloc((n ? n : 1) * sizeof *ev);
    uint32_t *opnum = lp_malloc((t->strs.n ? t->strs.n : 1) * sizeof *opnum);
    unsigned *tymap = lp_malloc((t->ntypes ? t->ntypes : 1) * sizeof *tymap);
    if (!ev || !opnum || !tymap) {
        lp_free(ev);
        lp_free(opnum);
        lp_free(tymap);
        return lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    }
    memset(opnum, 0xff, (t->strs.n ? t->strs.n : 1) * sizeof *opnum);
    for (uint32_t i = 0; i < t->ntypes; i++)
        tymap[i] = lp_st_activity_of(lp_trace_type_name(t, i));
    uint32_t nops = 0;
    lp_status st = LP_OK;
    lp_str kind = lp_strtab_find(&t->strs, "kind", 4);
    for (uint32_t w = 0; w < t->nworkers && !st; w++)
        for (uint64_t i = t->wfirst[w]; i < t->wfirst[w + 1]; i++) {
            if (t->aflags[i] & LP_ACT_GAP)
                continue;
            if (t->astart[i] < 0) {
                st = lp_error_set(err, LP_ERR_ARG, "SnailTrail logs have no negative times (activity at %lld)",
                                  (long long)t->astart[i]);
                break;
            }
            int64_t op = -1;
            if (t->aop[i] != LP_STR_NONE) {
                if (opnum[t->aop[i]] == UINT32_MAX)
                    opnum[t->aop[i]] = nops++;
                op = opnum[t->aop[i]];
            }
            lp_st_record r = {(uint64_t)t->astart[i], w, (uint8_t)tymap[t->atype[i]], LP_ST_START, -1, -1, op};
            int zero = t->astart[i] == t->aend[i];
            ev[k] = (wev){t->astart[i], w, (uint8_t)(zero ? 1 : 3), k, r};
            k++;
            r.timestamp = (uint64_t)t->aend[i];
            r.event = LP_ST_END;
            ev[k] = (wev){t->aend[i], w, (uint8_t)(zero ? 1 : 0), k, r};
            k++;
        }
    for (uint64_t m = 0; m < t->nmsgs && !st; m++) {
        if (t->msend[m] < 0 || t->mrecv[m] < 0) {
            st = lp_error_set(err, LP_ERR_ARG, "SnailTrail logs have no negative times (message at %lld)",
                              (long long)t->msend[m]);
            break;
        }
        lp_str v = kind != LP_STR_NONE ? lp_trace_attr(t, t->mattr[m], "kind") : LP_STR_NONE;
        uint8_t act = v != LP_STR_NONE && strcmp(lp_trace_str(t, v), "control") == 0 ? LP_ST_CONTROL_MESSAGE
                                                                                      : LP_ST_DATA_MESSAGE;
        lp_st_record r = {(uint64_t)t->msend[m], t->msrc[m], act, LP_ST_SENT, (int64_t)m, t->mdst[m], -1};
        ev[k] = (wev){t->msend[m], t->msrc[m], 2, k, r};
        k++;
        r = (lp_st_record){(uint64_t)t->mrecv[m], t->mdst[m], act, LP_ST_RECEIVED, (int64_t)m, t->msrc[m], -1};
        ev[k] = (wev){t->mrecv[m], t->mdst[m], 2, k, r};
        k++;
    }
    if (!st) {
        qsort(ev, k, sizeof *ev, cmp_wev);
        unsigned char b[64];
        for (uint64_t i = 0; i < k; i++) {
            size_t len = lp_st_encode(&ev[i].r, b);
            if (fwrite(b, 1, len, out) != len) {
                st = lp_error_set(err, LP_ERR_IO, "write error");
                break;
            }
        }
    }
    lp_free(ev);
    lp_free(opnum);
    lp_free(tymap);
    return st;
}
