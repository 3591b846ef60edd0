/* ctf_pkt.c: the direct decoder of LTTng's CTF 1.8 data packets (no libbabeltrace2):
 * the metadata subset of ctf_meta.c, the stream files mapped, each packet's header and
 * context, then its event records straight into the host builder (khost.c) under the one
 * event mapping (kev_map.c) the libbabeltrace2 reader (ctf.c) uses, so both readers give
 * the same lp_kev, field for field (tests/unit/import/test_ctfdiff.c checks it on every
 * trace at hand).
 *
 * What babeltrace2 does and this decoder repeats: fields are aligned to their type's
 * alignment from the packet's start, in their byte order (bit fields least significant
 * bit first in little-endian, most significant first in big-endian); the packet's
 * timestamp_begin sets the stream's clock, and each clock-mapped integer of an event of
 * n < 64 bits replaces the clock's low n bits, adding 2^n when they went back (the
 * wrap); the event's time is offset_s + (offset + clock) / freq from the origin; the
 * event class is the last `id` decoded in the event header (compact or extended form);
 * events end at the packet's content_size, the next packet starts at packet_size; the
 * tracer's events_discarded counter is cumulative per stream (its increments are lost
 * events); text arrays and sequences (8-bit UTF8/ASCII integers) are strings up to their
 * first NUL; leading '_' of field names is not part of the name.
 *
 * Only what the mapping needs is kept: each event class is resolved on its first event
 * into capture codes on its payload's members (a per-class copy of the top-level member
 * list), the rest is skipped by size. One stream file is one stream (files in name
 * order, as babeltrace2 numbers its ports for LTTng's channelN_CPU files).
 *
 * Errors: metadata outside the subset returns LP_ERR_UNSUPPORTED (ctf.c then falls back
 * to libbabeltrace2 with a counted note, or, built without it, reports it); malformed
 * metadata or data (a truncated packet, packet_size beyond the file, an unknown event id,
 * a string without its NUL, a variant tag no option matches) is LP_ERR_FORMAT naming the
 * file, the byte offset and the number of events decoded before it.
 */
#include "import/kernel/kint.h"
#include "import/kernel/ctf_meta.h"

#include "longpole/base/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* capture codes (ctmember.cap) */
enum {
    CP_NONE = 0, CP_MAGIC, CP_STREAM_ID, CP_TSBEGIN, CP_TSEND, CP_CONTENT, CP_PSIZE, CP_DISC, CP_CPU, CP_ID,
    CP_CTXTID, CP_TCP_SEQ, CP_TCP_ACK, CP_TCP_FLAGS, CP_ROLE0, CP_N = CP_ROLE0 + KR_N
};

typedef struct dec {
    const unsigned char *b;
    uint64_t pos, end;    /* bits from b */
    int64_t *slot;
    int64_t cv[CP_N];
    uint64_t have;        /* bit per capture code */
    const char *sp[2];    /* KR_NAME, KR_NAME2 */
    size_t sl[2];
    uint64_t clock;
    int clock_on;
    const char *why;      /* the first decoding error */
} dec;

/* one event class, resolved on its first event */
typedef struct kcls {
    const ctevent *ev;
    uint8_t ready, bad, nettcp;
    uint16_t type;
    const kevdef *def;
    lp_str name;
    ctype top;           /* a copy of the payload struct with its own member list */
    ctmember *mem;
} kcls;

/* LTTng's event headers (compact: 5-bit id, 27-bit timestamp; large: 16-bit id, 32-bit
 * timestamp; the id's all-ones value selects the extended form: 32-bit id, 64-bit
 * timestamp), recognised in the metadata and decoded without walking the type tree. */
typedef struct hshape {
    const ctype *id, *cts, *xid, *xts;  /* the four integers; NULL: not this shape */
    uint32_t align, calign, xalign;     /* the header's and its two options' alignments */
    uint64_t ext;                       /* the id that selects the extended form */
    int32_t slot;                       /* the tag's slot */
} hshape;

typedef struct sclass {  /* a stream class: its event classes by id */
    const ctstream *s;
    kcls **byid;
    uint64_t nid;
    hshape hs;
} sclass;

/* ---- bits ------------------------------------------------------------------------------- */

static uint64_t bits_slow(const unsigned char *b, uint64_t pos, unsigned size, int be)
{
    if (size > 32) {
        uint64_t hi, lo;
        if (be) {
            hi = bits_slow(b, pos, size - 32, 1);
            lo = bits_slow(b, pos + size - 32, 32, 1);
        } else {
            lo = bits_slow(b, pos, 32, 0);
            hi = bits_slow(b, pos + 32, size - 32, 0);
        }
        return hi << 32 | lo;
    }
    const unsigned char *p = b + (pos >> 3);
    unsigned sh = (unsigned)(pos & 7), nb = (sh + size + 7) / 8;
    uint64_t v = 0;
    if (!be) {
        for (unsigned i = 0; i < nb; i++)
            v |= (uint64_t)p[i] << (8 * i);
        v >>= sh;
    } else {
        for (unsigned i = 0; i < nb; i++)
            v = v << 8 | p[i];
        v >>= nb * 8 - sh - size;
    }
    return size == 64 ? v : v & ((UINT64_C(1) << size) - 1);
}

static inline uint64_t bits(const unsigned char *b, uint64_t pos, unsigned size, int be)
{
    if (!(pos & 7)) {
        const unsigned char *p = b + (pos >> 3);
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        switch (size) {
        case 8: memcpy(&u8, p, 1); return u8;
        case 16: memcpy(&u16, p, 2); return be ? __builtin_bswap16(u16) : u16;
        case 32: memcpy(&u32, p, 4); return be ? __builtin_bswap32(u32) : u32;
        case 64: memcpy(&u64, p, 8); return be ? __builtin_bswap64(u64) : u64;
        default: break;
        }
    }
    return bits_slow(b, pos, size, be);
}

static inline int align_to(dec *d, uint32_t a)
{
    if (a > 1)
        d->pos = (d->pos + a - 1) & ~(uint64_t)(a - 1);
    return d->pos <= d->end;
}

/* ---- fields ------------------------------------------------------------------------------ */

static void clock_update(dec *d, uint64_t v, unsigned size)
{
    if (size >= 64) {
        d->clock = v;
        return;
    }
    uint64_t mask = (UINT64_C(1) << size) - 1;
    if (v < (d->clock & mask))
        d->clock += mask + 1;
    d->clock = (d->clock & ~mask) | v;
}

static int decode(dec *d, const ctype *t, int cap, int32_t slot);

static inline int dec_int(dec *d, const ctype *t, int cap, int32_t slot)
{
    if (!align_to(d, t->align) || t->size > d->end - d->pos) {
        d->why = "an integer beyond the packet's content";
        return -1;
    }
    uint64_t u = bits(d->b, d->pos, t->size, t->bo == CT_BE);
    d->pos += t->size;
    int64_t v = (int64_t)u;
    if (t->sign && t->size < 64 && (u >> (t->size - 1) & 1))
        v = (int64_t)(u | ~((UINT64_C(1) << t->size) - 1));
    if (slot >= 0)
        d->slot[slot] = v;
    if (cap) {
        d->cv[cap] = v;
        d->have |= UINT64_C(1) << cap;
    }
    if (t->clock >= 0 && d->clock_on)
        clock_update(d, u, t->size);
    return 0;
}

static void keep_str(dec *d, int cap, const char *s, size_t n)
{
    if (cap == CP_ROLE0 + KR_NAME || cap == CP_ROLE0 + KR_NAME2) {
        int k = cap - CP_ROLE0 - KR_NAME;
        d->sp[k] = s;
        d->sl[k] = n;
        d->have |= UINT64_C(1) << cap;
    }
}

static int dec_string(dec *d, int cap)
{
    if (!align_to(d, 8)) {
        d->why = "a string beyond the packet's content";
        return -1;
    }
    const char *s = (const char *)d->b + d->pos / 8;
    size_t room = (size_t)((d->end - d->pos) / 8);
    const char *z = memchr(s, 0, room);
    if (!z) {
        d->why = "a string without its terminating NUL in the packet's content";
        return -1;
    }
    keep_str(d, cap, s, (size_t)(z - s));
    d->pos += (uint64_t)(z - s + 1) * 8;
    return 0;
}

static int dec_array(dec *d, const ctype *t, uint64_t n, int cap)
{
    const ctype *e = t->elem;
    if (!align_to(d, t->align)) {
        d->why = "an array beyond the packet's content";
        return -1;
    }
    if (e->kind == CT_INT && e->clock < 0 && e->size % e->align == 0) { /* contiguous, skipped */
        if (n > (d->end - d->pos) / e->size) {
            d->why = "an array or sequence beyond the packet's content";
            return -1;
        }
        if (t->text && cap) {
            const char *s = (const char *)d->b + d->pos / 8;
            const char *z = memchr(s, 0, (size_t)n);
            keep_str(d, cap, s, z ? (size_t)(z - s) : (size_t)n);
        }
        d->pos += n * e->size;
        return 0;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t at = d->pos;
        if (decode(d, e, 0, -1))
            return -1;
        if (d->pos == at) /* zero-sized elements: the rest are too */
            break;
    }
    return 0;
}

static int dec_variant(dec *d, const ctype *t)
{
    int64_t v = d->slot[t->refslot];
    const ctype *tg = t->tagt;
    for (uint32_t i = 0; i < tg->nen; i++) {
        const ctenum *en = &tg->en[i];
        int in = tg->sign ? v >= en->lo && v <= en->hi : (uint64_t)v >= (uint64_t)en->lo && (uint64_t)v <= (uint64_t)en->hi;
        if (in) {
            if (t->opt[i] < 0)
                break;
            const ctmember *o = &t->m[t->opt[i]];
            return decode(d, o->t, o->cap, o->slot);
        }
    }
    d->why = "a variant tag that selects no option";
    return -1;
}

static int decode(dec *d, const ctype *t, int cap, int32_t slot)
{
    switch (t->kind) {
    case CT_INT: return dec_int(d, t, cap, slot);
    case CT_STRING: return dec_string(d, cap);
    case CT_STRUCT:
        if (!align_to(d, t->align)) {
            d->why = "a structure beyond the packet's content";
            return -1;
        }
        for (uint32_t i = 0; i < t->nm; i++) {
            const ctmember *m = &t->m[i];
            const ctype *mt = m->t;
            if (mt->kind == CT_INT) {
                if (!m->cap && m->slot < 0 && mt->clock < 0) { /* not needed: skipped by size */
                    if (!align_to(d, mt->align) || mt->size > d->end - d->pos) {
                        d->why = "an integer beyond the packet's content";
                        return -1;
                    }
                    d->pos += mt->size;
                } else if (dec_int(d, mt, m->cap, m->slot))
                    return -1;
            } else if (decode(d, mt, m->cap, m->slot))
                return -1;
        }
        return 0;
    case CT_VARIANT: return dec_variant(d, t);
    case CT_ARRAY: return dec_array(d, t, t->len, cap);
    case CT_SEQ: {
        int64_t n = d->slot[t->refslot];
        if (n < 0) {
            d->why = "a sequence of negative length";
            return -1;
        }
        return dec_array(d, t, (uint64_t)n, cap);
    }
    default: d->why = "an unknown type"; return -1;
    }
}

/* The header of LTTng's shape (hshape): what decode() would do on it, unrolled. */
static int dec_hdr_fast(dec *d, const hshape *h)
{
    if (!align_to(d, h->align) || dec_int(d, h->id, CP_ID, h->slot))
        return -1;
    if ((uint64_t)d->cv[CP_ID] != h->ext)
        return align_to(d, h->calign) ? dec_int(d, h->cts, 0, -1) : (d->why = "a header beyond the packet's content", -1);
    if (!align_to(d, h->xalign) || dec_int(d, h->xid, CP_ID, -1) || dec_int(d, h->xts, 0, -1))
        return -1;
    return 0;
}

static int is_int(const ctmember *m, uint32_t size, int clock)
{
    return m->t->kind == CT_INT && !m->t->nen && (!size || m->t->size == size) && (m->t->clock >= 0) == clock &&
           m->slot < 0;
}

/* Is the event header LTTng's compact or large one? Fills *h (h->id NULL if not). */
static void hdr_shape(const ctype *t, hshape *h)
{
    memset(h, 0, sizeof *h);
    if (!t || t->kind != CT_STRUCT || t->nm != 2)
        return;
    const ctmember *id = &t->m[0], *v = &t->m[1];
    const ctype *it = id->t, *vt = v->t;
    if (it->kind != CT_INT || it->clock >= 0 || it->nen != 2 || it->sign || it->size > 32 || id->cap != CP_ID ||
        vt->kind != CT_VARIANT || vt->refslot != id->slot || vt->tagt != it || vt->nm != 2 || v->cap || v->slot >= 0)
        return;
    uint64_t ext = ((uint64_t)1 << it->size) - 1;
    if (it->en[0].lo != 0 || (uint64_t)it->en[0].hi != ext - 1 || (uint64_t)it->en[1].lo != ext ||
        (uint64_t)it->en[1].hi != ext || vt->opt[0] < 0 || vt->opt[1] < 0)
        return;
    const ctmember *c = &vt->m[vt->opt[0]], *x = &vt->m[vt->opt[1]];
    const ctype *ct = c->t, *xt = x->t;
    if (c->cap || c->slot >= 0 || x->cap || x->slot >= 0 || ct->kind != CT_STRUCT || ct->nm != 1 ||
        !is_int(&ct->m[0], 0, 1) || ct->m[0].cap || xt->kind != CT_STRUCT || xt->nm != 2 ||
        !is_int(&xt->m[0], 32, 0) || xt->m[0].cap != CP_ID || !is_int(&xt->m[1], 64, 1) || xt->m[1].cap)
        return;
    *h = (hshape){.id = it, .cts = ct->m[0].t, .xid = xt->m[0].t, .xts = xt->m[1].t, .align = t->align,
                  .calign = ct->align, .xalign = xt->align, .ext = ext, .slot = id->slot};
}

/* ---- captures on the metadata ------------------------------------------------------------- */

static ctmember *member_named(ctype *t, const char *names)
{
    if (!t || t->kind != CT_STRUCT)
        return NULL;
    for (const char *p = names; *p;) {
        const char *q = strchr(p, '|');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        for (uint32_t i = 0; i < t->nm; i++) {
            const char *m = ctf_name(t->m[i].name);
            if (strlen(m) == len && memcmp(m, p, len) == 0)
                return &t->m[i];
        }
        p += len + (q != NULL);
    }
    return NULL;
}

static void cap_int(ctype *t, const char *name, int cap)
{
    ctmember *m = member_named(t, name);
    if (m && m->t->kind == CT_INT)
        m->cap = (int16_t)cap;
}

/* the event header: every integer member named `id`, through structs and variants */
static void cap_ids(ctype *t, int depth)
{
    if (!t || depth > 8 || (t->kind != CT_STRUCT && t->kind != CT_VARIANT))
        return;
    for (uint32_t i = 0; i < t->nm; i++) {
        if (t->m[i].t->kind == CT_INT && strcmp(ctf_name(t->m[i].name), "id") == 0)
            t->m[i].cap = CP_ID;
        cap_ids(t->m[i].t, depth + 1);
    }
}

/* LTTng >= 2.9 network_header: OPTION(ipv4|ipv6).transport_header -> tcp {seq, ack_seq,
 * flags}: returns whether a tcp option was found */
static int cap_tcp(ctype *nh)
{
    int found = 0;
    if (!nh || nh->kind != CT_VARIANT)
        return 0;
    for (uint32_t i = 0; i < nh->nm; i++) {
        ctmember *th = member_named(nh->m[i].t, "transport_header");
        if (!th || th->t->kind != CT_VARIANT)
            continue;
        for (uint32_t j = 0; j < th->t->nm; j++)
            if (strcmp(ctf_name(th->t->m[j].name), "tcp") == 0 && th->t->m[j].t->kind == CT_STRUCT) {
                ctype *tcp = th->t->m[j].t;
                if (member_named(tcp, "seq") && member_named(tcp, "ack_seq") && member_named(tcp, "flags")) {
                    cap_int(tcp, "seq", CP_TCP_SEQ);
                    cap_int(tcp, "ack_seq", CP_TCP_ACK);
                    cap_int(tcp, "flags", CP_TCP_FLAGS);
                    found = 1;
                }
            }
    }
    return found;
}

static void caps_static(ctfmeta *m)
{
    cap_int(m->phdr, "magic", CP_MAGIC);
    cap_int(m->phdr, "stream_id", CP_STREAM_ID);
    for (uint32_t i = 0; i < m->nst; i++) {
        ctype *pc = m->st[i].pctx;
        cap_int(pc, "timestamp_begin", CP_TSBEGIN);
        cap_int(pc, "timestamp_end", CP_TSEND);
        cap_int(pc, "content_size", CP_CONTENT);
        cap_int(pc, "packet_size", CP_PSIZE);
        cap_int(pc, "events_discarded", CP_DISC);
        cap_int(pc, "cpu_id", CP_CPU);
        cap_ids(m->st[i].ehdr, 0);
        cap_int(m->st[i].ectx, "tid|vtid", CP_CTXTID);
    }
}

/* ---- the reader ------------------------------------------------------------------------------ */

typedef struct dread {
    khb *b;
    const char *dir;
    lp_error *err;
    ctfmeta meta;
    sclass *sc;
    kcls *cls;           /* [meta.nev] */
    int64_t *slots;
    const ctclock *clk;
    int64_t base_ns;     /* offset_s and offset, in ns */
} dread;

static int64_t cycles_ns(uint64_t freq, uint64_t c)
{
    if (freq == 1000000000)
        return (int64_t)c; /* >= 2^63: negative, refused by the caller */
    double ns = (1e9 * (double)c) / (double)freq;
    return ns < 9.2e18 ? (int64_t)ns : -1;
}

static lp_status class_resolve(dread *r, kcls *k)
{
    const ctevent *ev = k->ev;
    const char *name = ev->name;
    size_t nlen = strlen(name), sysoff = 0;
    k->ready = 1;
    k->def = lp_kevdef_find(name, nlen, &sysoff);
    k->type = k->def ? k->def->type : LP_KEV_OTHER;
    lp_status st = LP_OK;
    if (!k->def || k->def->special == KS_SYSCALL_ENTRY || k->def->special == KS_SYSCALL_EXIT)
        st = k->def && sysoff < nlen ? khb_str(r->b, name + sysoff, nlen - sysoff, &k->name, r->err)
                                     : khb_str(r->b, name, nlen, &k->name, r->err);
    else
        k->name = LP_STR_NONE;
    if (st || !ev->fields)
        return st;
    k->top = *ev->fields;
    k->mem = lp_malloc((ev->fields->nm ? ev->fields->nm : 1) * sizeof *k->mem);
    if (!k->mem)
        return lp_error_set(r->err, LP_ERR_NOMEM, "out of memory");
    if (ev->fields->nm) /* an event without fields has no member array */
        memcpy(k->mem, ev->fields->m, ev->fields->nm * sizeof *k->mem);
    for (uint32_t i = 0; i < ev->fields->nm; i++)
        k->mem[i].cap = 0;
    k->top.m = k->mem;
    if (!k->def)
        return LP_OK;
    for (int f = 0; f < KR_N; f++) {
        const kfield *kf = &k->def->f[f];
        if (!kf->ctf)
            continue;
        ctmember *m = member_named(&k->top, kf->ctf);
        int want_str = kf->kind == KF_STR || kf->kind == KF_BASENAME;
        int ok = m && (want_str ? m->t->kind == CT_STRING || ((m->t->kind == CT_ARRAY || m->t->kind == CT_SEQ) && m->t->text)
                                : m->t->kind == CT_INT);
        if (ok)
            m->cap = (int16_t)(CP_ROLE0 + f);
        else if (!kf->optional && !k->bad) {
            k->bad = 1;
            lp_diags_report(r->b->diags, LP_SEV_WARNING, LP_RULE_FIELD, r->dir, 0,
                            "event '%s' has no integer%s field '%s' (its events are skipped)", name,
                            want_str ? "/string" : "", kf->ctf);
        }
    }
    if (k->def->special == KS_NET_DEV) {
        ctmember *nh = member_named(&k->top, "network_header");
        k->nettcp = nh && cap_tcp(nh->t);
    }
    return LP_OK;
}

static lp_status emit(dread *r, const kcls *k, dec *d, uint32_t cpu, uint32_t sid, int64_t ns)
{
    lp_kev e = {.ts = ns, .cpu = cpu, .type = k->type, .tid = -1, .tid2 = -1, .ctx_tid = -1,
                .a = -1, .b = -1, .name = k->name, .name2 = LP_STR_NONE};
    if (d->have & (UINT64_C(1) << CP_CTXTID))
        e.ctx_tid = (int32_t)d->cv[CP_CTXTID];
    if (k->def) {
        int64_t v[KR_N];
        for (int f = 0; f < KR_N; f++)
            v[f] = f != KR_NAME && f != KR_NAME2 && (d->have & (UINT64_C(1) << (CP_ROLE0 + f))) ? d->cv[CP_ROLE0 + f] : -1;
        e.tid = (int32_t)v[KR_TID];
        e.tid2 = (int32_t)v[KR_TID2];
        e.a = v[KR_A];
        e.b = v[KR_B];
        e.key = d->have & (UINT64_C(1) << (CP_ROLE0 + KR_KEY)) ? (uint64_t)v[KR_KEY] : 0;
        e.flags = d->have & (UINT64_C(1) << (CP_ROLE0 + KR_FLAGS)) ? (uint32_t)v[KR_FLAGS] : 0;
        switch (k->def->special) {
        case KS_SOCK_ADDR: e.flags = (uint32_t)(v[KR_FLAGS] & 0xffff) << 16 | (uint32_t)(v[KR_X] & 0xffff); break;
        case KS_SOCK_CLONE: e.kfl = KPAD_CLONE; break;
        case KS_NET_DEV: {
            e.flags = LP_KNET_DEV;
            uint64_t tcp = UINT64_C(1) << CP_TCP_SEQ | UINT64_C(1) << CP_TCP_ACK | UINT64_C(1) << CP_TCP_FLAGS;
            if (k->nettcp && (d->have & tcp) == tcp) {
                e.a = d->cv[CP_TCP_SEQ];
                e.b = d->cv[CP_TCP_ACK];
                e.flags = LP_KNET_DEV | LP_KNET_TCP | ((uint32_t)d->cv[CP_TCP_FLAGS] & 0xffff);
            }
            break;
        }
        default: break;
        }
        for (int f = KR_NAME; f <= KR_NAME2; f++) {
            if (!(d->have & (UINT64_C(1) << (CP_ROLE0 + f))))
                continue;
            lp_str id;
            lp_status st = khb_name(r->b, k->def->f[f].kind, d->sp[f - KR_NAME], d->sl[f - KR_NAME], &id, r->err);
            if (st)
                return st;
            if (f == KR_NAME)
                e.name = id;
            else
                e.name2 = id;
        }
    }
    return khb_push(r->b, sid, &e, r->err);
}

typedef struct sfile {
    const char *name;    /* base name */
    const unsigned char *p;
    uint64_t n;
    uint32_t sid;
    uint64_t nev;        /* events decoded */
    uint64_t prev_disc;
    int have_disc;
    uint32_t cpu;
} sfile;

static lp_status data_error(dread *r, sfile *f, uint64_t bitpos, const char *why)
{
    return lp_error_set(r->err, LP_ERR_FORMAT,
                        "stream file '%s': decoding stopped after its event %llu: %s (at byte %llu)", f->name,
                        (unsigned long long)f->nev, why, (unsigned long long)(bitpos / 8));
}

/* Event records from d->pos to d->end (the packet's content). */
static lp_status events(dread *r, sfile *f, const sclass *sc, dec *d)
{
    while (d->pos < d->end) {
        uint64_t at = d->pos;
        d->have = 0;
        if (sc->hs.id ? dec_hdr_fast(d, &sc->hs) : sc->s->ehdr && decode(d, sc->s->ehdr, 0, -1))
            return data_error(r, f, at, d->why);
        uint64_t id = d->have & (UINT64_C(1) << CP_ID) ? (uint64_t)d->cv[CP_ID] : 0;
        if (id >= sc->nid || !sc->byid[id])
            return data_error(r, f, at, id >= sc->nid || sc->nid == 0 ? "an unknown event id" : "an unknown event id");
        kcls *k = sc->byid[id];
        if (!k->ready) {
            lp_status st = class_resolve(r, k);
            if (st)
                return st;
        }
        if ((sc->s->ectx && decode(d, sc->s->ectx, 0, -1)) || (k->ev->context && decode(d, k->ev->context, 0, -1)) ||
            (k->ev->fields && decode(d, &k->top, 0, -1)))
            return data_error(r, f, at, d->why);
        if (d->pos == at)
            return data_error(r, f, at, "an event record of no size");
        f->nev++;
        if (k->bad) {
            r->b->nbad++;
            continue;
        }
        int64_t vns = cycles_ns(r->clk->freq, d->clock), ns;
        if (__builtin_add_overflow(r->base_ns, vns, &ns) || vns < 0) {
            r->b->nbad++;
            lp_diags_report(r->b->diags, LP_SEV_WARNING, LP_RULE_FIELD, r->dir, 0,
                            "%s: event %llu: timestamp does not fit in 64-bit ns (skipped)", f->name,
                            (unsigned long long)f->nev);
            continue;
        }
        lp_status st = emit(r, k, d, f->cpu, f->sid, ns);
        if (st)
            return st;
    }
    return LP_OK;
}

static lp_status packets(dread *r, sfile *f)
{
    dec d;
    memset(&d, 0, sizeof d);
    d.b = f->p;
    d.slot = r->slots;
    uint64_t off = 0; /* bytes */
    while (off < f->n) {
        d.pos = off * 8;
        d.end = f->n * 8;
        d.have = 0;
        d.clock_on = 0;
        if (r->meta.phdr && decode(&d, r->meta.phdr, 0, -1))
            return data_error(r, f, d.pos, "a packet header cut short");
        if ((d.have & (UINT64_C(1) << CP_MAGIC)) && (uint32_t)d.cv[CP_MAGIC] != 0xC1FC1FC1u)
            return data_error(r, f, off * 8, "a packet without the CTF magic 0xC1FC1FC1");
        uint64_t sid = d.have & (UINT64_C(1) << CP_STREAM_ID) ? (uint64_t)d.cv[CP_STREAM_ID] : 0;
        const sclass *sc = NULL;
        for (uint32_t i = 0; i < r->meta.nst; i++)
            if (r->sc[i].s->id == sid)
                sc = &r->sc[i];
        if (!sc)
            return data_error(r, f, off * 8, "a packet of an undeclared stream id");
        if (sc->s->pctx && decode(&d, sc->s->pctx, 0, -1))
            return data_error(r, f, d.pos, "a packet context cut short");
        uint64_t psize = d.have & (UINT64_C(1) << CP_PSIZE) ? (uint64_t)d.cv[CP_PSIZE] : (f->n - off) * 8;
        uint64_t csize = d.have & (UINT64_C(1) << CP_CONTENT) ? (uint64_t)d.cv[CP_CONTENT] : psize;
        if (psize % 8 || psize == 0 || psize / 8 > f->n - off)
            return data_error(r, f, off * 8, psize / 8 > f->n - off ? "packet_size beyond the end of the file"
                                                                    : "a packet_size that is not a positive number of bytes");
        if (csize > psize || csize < d.pos - off * 8)
            return data_error(r, f, off * 8, "a content_size larger than packet_size or smaller than its header");
        if (d.have & (UINT64_C(1) << CP_CPU))
            f->cpu = d.cv[CP_CPU] >= 0 && d.cv[CP_CPU] < 65536 ? (uint32_t)d.cv[CP_CPU] : 0;
        if (d.have & (UINT64_C(1) << CP_DISC)) {
            uint64_t disc = (uint64_t)d.cv[CP_DISC];
            if (disc > f->prev_disc || (!f->have_disc && disc))
                r->b->nlost += disc - f->prev_disc;
            f->prev_disc = disc;
            f->have_disc = 1;
        }
        if (d.have & (UINT64_C(1) << CP_TSBEGIN))
            d.clock = (uint64_t)d.cv[CP_TSBEGIN];
        d.end = off * 8 + csize;
        d.clock_on = 1;
        lp_status st = events(r, f, sc, &d);
        if (st)
            return st;
        off += psize / 8;
    }
    return LP_OK;
}

/* ---- setting up -------------------------------------------------------------------------------- */

static int has_clock(const ctype *t, int depth)
{
    if (!t || depth > 8)
        return 0;
    if (t->kind == CT_INT)
        return t->clock >= 0;
    for (uint32_t i = 0; i < t->nm; i++)
        if ((t->kind == CT_STRUCT || t->kind == CT_VARIANT) && has_clock(t->m[i].t, depth + 1))
            return 1;
    return 0;
}

static void dread_release(dread *r)
{
    for (uint32_t i = 0; r->cls && i < r->meta.nev; i++)
        lp_free(r->cls[i].mem);
    for (uint32_t i = 0; r->sc && i < r->meta.nst; i++)
        lp_free(r->sc[i].byid);
    lp_free(r->cls);
    lp_free(r->sc);
    lp_free(r->slots);
    ctf_meta_release(&r->meta);
}

/* Parse the metadata and index its event classes. LP_ERR_UNSUPPORTED: outside the subset. */
static lp_status dread_open(dread *r, const char *mfile, const unsigned char *md, size_t mn)
{
    char msg[300], *text = NULL;
    size_t tlen = 0;
    uint64_t off = 0, line = 0;
    int unsup = 0;
    if (!ctf_meta_is_packetized(md, mn) && (mn < 6 || memcmp(md, "/* CTF", 6) != 0))
        return lp_error_set(r->err, LP_ERR_FORMAT, "'%s' at byte 0: its 'metadata' is neither CTF text ('/* CTF 1.8') "
                            "nor metadata packets", mfile);
    if (ctf_meta_text(md, mn, &text, &tlen, msg, sizeof msg, &off))
        return lp_error_set(r->err, LP_ERR_FORMAT, "'%s' at byte %llu: %s", mfile, (unsigned long long)off, msg);
    int bad = ctf_meta_parse(&r->meta, text, tlen, msg, sizeof msg, &line, &unsup);
    lp_free(text);
    if (bad)
        return lp_error_set(r->err, unsup ? LP_ERR_UNSUPPORTED : LP_ERR_FORMAT, "'%s': TSDL line %llu: %s%s", mfile,
                            (unsigned long long)line, unsup ? "outside the subset the direct decoder reads: " : "", msg);
    ctfmeta *m = &r->meta;
    if (m->nclk != 1)
        return lp_error_set(r->err, LP_ERR_UNSUPPORTED, "'%s': %u clocks (the direct decoder reads traces of one clock)",
                            mfile, m->nclk);
    r->clk = &m->clk[0];
    int64_t os = r->clk->offset_s + r->clk->offset / (int64_t)r->clk->freq, oc = r->clk->offset % (int64_t)r->clk->freq;
    if (oc < 0) {
        oc += (int64_t)r->clk->freq;
        os--;
    }
    if (__builtin_mul_overflow(os, (int64_t)1000000000, &r->base_ns) ||
        __builtin_add_overflow(r->base_ns, cycles_ns(r->clk->freq, (uint64_t)oc), &r->base_ns))
        return lp_error_set(r->err, LP_ERR_FORMAT, "'%s': the clock's offset does not fit in 64-bit ns", mfile);
    if (!(r->slots = lp_calloc((size_t)m->nslots + 1, sizeof *r->slots)) || !(r->sc = lp_calloc(m->nst, sizeof *r->sc)) ||
        !(r->cls = lp_calloc(m->nev, sizeof *r->cls)))
        return lp_error_set(r->err, LP_ERR_NOMEM, "out of memory");
    caps_static(m);
    for (uint32_t i = 0; i < m->nst; i++) {
        r->sc[i].s = &m->st[i];
        hdr_shape(m->st[i].ehdr, &r->sc[i].hs);
        if (!has_clock(m->st[i].ehdr, 0))
            return lp_error_set(r->err, LP_ERR_UNSUPPORTED, "'%s': stream %llu: its event header has no timestamp",
                                mfile, (unsigned long long)m->st[i].id);
    }
    for (uint32_t i = 0; i < m->nev; i++) {
        ctevent *e = &m->ev[i];
        sclass *sc = NULL;
        for (uint32_t j = 0; j < m->nst; j++)
            if (m->st[j].id == e->stream_id)
                sc = &r->sc[j];
        if (!sc)
            return lp_error_set(r->err, LP_ERR_FORMAT, "'%s': TSDL line %llu: event '%s' of an undeclared stream %llu",
                                mfile, (unsigned long long)e->line, e->name, (unsigned long long)e->stream_id);
        if (e->id >= (1u << 20))
            return lp_error_set(r->err, LP_ERR_UNSUPPORTED, "'%s': event id %llu (the direct decoder reads ids below 2^20)",
                                mfile, (unsigned long long)e->id);
        if (e->id >= sc->nid) {
            size_t cap = sc->nid;
            if (lp_grow_at(&sc->byid, &cap, e->id + 1, sizeof *sc->byid))
                return lp_error_set(r->err, LP_ERR_NOMEM, "out of memory");
            memset(sc->byid + sc->nid, 0, (cap - sc->nid) * sizeof *sc->byid);
            sc->nid = cap;
        }
        if (sc->byid[e->id])
            return lp_error_set(r->err, LP_ERR_FORMAT, "'%s': TSDL line %llu: event id %llu declared twice", mfile,
                                (unsigned long long)e->line, (unsigned long long)e->id);
        r->cls[i].ev = e;
        sc->byid[e->id] = &r->cls[i];
    }
    return LP_OK;
}

static int name_cmp(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The stream files of dir: regular files other than metadata and hidden ones, by name. */
static lp_status list_streams(dread *r, char ***out, size_t *nout)
{
    DIR *dd = opendir(r->dir);
    if (!dd)
        return lp_error_set(r->err, LP_ERR_IO, "cannot open directory '%s': %s", r->dir, strerror(errno));
    char **v = NULL;
    size_t n = 0, cap = 0;
    lp_status st = LP_OK;
    struct dirent *e;
    while (!st && (e = readdir(dd))) {
        char p[4096];
        struct stat sb;
        if (e->d_name[0] == '.' || strcmp(e->d_name, "metadata") == 0 ||
            (size_t)snprintf(p, sizeof p, "%s/%s", r->dir, e->d_name) >= sizeof p || stat(p, &sb) != 0 ||
            !S_ISREG(sb.st_mode))
            continue;
        size_t len = strlen(e->d_name) + 1;
        char *s = lp_malloc(len);
        if (!s || lp_grow_at(&v, &cap, n + 1, sizeof *v)) {
            lp_free(s);
            st = lp_error_set(r->err, LP_ERR_NOMEM, "out of memory");
            break;
        }
        memcpy(s, e->d_name, len);
        v[n++] = s;
    }
    closedir(dd);
    if (n > 1)
        qsort(v, n, sizeof *v, name_cmp);
    *out = v;
    *nout = n;
    return st;
}

/* Map a whole file (NULL, 0 for an empty one). */
static lp_status map_file(const char *path, const unsigned char **p, uint64_t *n, lp_error *err)
{
    *p = NULL;
    *n = 0;
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        lp_status st = lp_error_set(err, LP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return st;
    }
    if (sb.st_size > 0) {
        void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (m == MAP_FAILED) {
            close(fd);
            return lp_error_set(err, LP_ERR_IO, "cannot map '%s': %s", path, strerror(errno));
        }
        madvise(m, (size_t)sb.st_size, MADV_SEQUENTIAL);
        *p = m;
        *n = (uint64_t)sb.st_size;
    }
    close(fd);
    return LP_OK;
}

static void finish(dread *r, const char *where)
{
    if (r->b->nlost)
        lp_diags_report(r->b->diags, LP_SEV_WARNING, LP_RULE_IMPORT, where, 0,
                        "the tracer discarded %llu events (ring buffer full)", (unsigned long long)r->b->nlost);
}

lp_status lp_kctf_direct_read(khb *b, const char *dir, int *at_metadata, lp_error *err)
{
    *at_metadata = 0;
    dread r;
    memset(&r, 0, sizeof r);
    r.b = b;
    r.dir = dir;
    r.err = err;
    char mp[4096];
    if ((size_t)snprintf(mp, sizeof mp, "%s/metadata", dir) >= sizeof mp)
        return lp_error_set(err, LP_ERR_ARG, "path too long: '%s'", dir);
    const unsigned char *md;
    uint64_t mn;
    lp_status st = map_file(mp, &md, &mn, err);
    if (st)
        return st;
    st = dread_open(&r, mp, md, (size_t)mn);
    *at_metadata = st != LP_OK;
    if (md)
        munmap((void *)(uintptr_t)md, (size_t)mn);
    if (!st && r.meta.hostname)
        st = khb_str(b, r.meta.hostname, strlen(r.meta.hostname), &b->name, err);
    char **files = NULL;
    size_t nf = 0;
    if (!st)
        st = list_streams(&r, &files, &nf);
    if (!st && nf == 0)
        st = lp_error_set(err, LP_ERR_FORMAT, "no data stream in it");
    uint64_t bytes = mn;
    for (size_t i = 0; i < nf && !st; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        sfile f = {.name = files[i], .sid = (uint32_t)i};
        st = map_file(p, &f.p, &f.n, err);
        if (!st)
            st = packets(&r, &f);
        bytes += f.n;
        if (f.p)
            munmap((void *)(uintptr_t)f.p, (size_t)f.n);
    }
    for (size_t i = 0; i < nf; i++)
        lp_free(files[i]);
    lp_free(files);
    if (!st)
        finish(&r, dir);
    b->bytes = bytes;
    dread_release(&r);
    return st;
}

lp_status lp_kctf_direct_mem(khb *b, const char *meta, size_t nmeta, const unsigned char *data, size_t ndata,
                             lp_error *err)
{
    dread r;
    memset(&r, 0, sizeof r);
    r.b = b;
    r.dir = "(memory)";
    r.err = err;
    lp_status st = dread_open(&r, "metadata", (const unsigned char *)meta, nmeta);
    if (!st && r.meta.hostname)
        st = khb_str(b, r.meta.hostname, strlen(r.meta.hostname), &b->name, err);
    if (!st) {
        sfile f = {.name = "stream", .p = data, .n = ndata};
        st = packets(&r, &f);
    }
    if (!st)
        finish(&r, r.dir);
    dread_release(&r);
    return st;
}
