/* test_ctfpkt.c: the direct CTF decoder (ctf_pkt.c) on traces built here bit by bit (a
 * naive writer, one bit at a time, independent of the decoder's reader), in both byte
 * orders: compact event headers (5-bit id, 27-bit timestamps that wrap, the extended
 * form with a 32-bit id and a 64-bit timestamp), 4-bit fields, LTTng 2.9's
 * net_dev_queue network_header (enum-tagged variants down to the TCP header: seq,
 * ack_seq, flags), text arrays, strings, sequences, events_discarded counters; the
 * result checked value by value and, with libbabeltrace2 built in, against it field for
 * field. Bad input, each a clear error with the file and the byte offset: a truncated
 * packet, packet_size beyond the file, content_size beyond packet_size, an unknown event
 * id, a string without its NUL, a metadata syntax error (its line), metadata outside the
 * subset (LP_ERR_UNSUPPORTED, and the fallback's note).
 * `test_ctfpkt --seeds DIR` writes the fuzz seeds of fuzz_ctf (metadata, NUL, stream). */
#include "import/kernel/kint.h"
#include "longpole/base/alloc.h"
#include "t.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a naive bit writer --------------------------------------------------------------- */

typedef struct bw {
    unsigned char b[1 << 16];
    uint64_t pos; /* bits */
    int be;
} bw;

static void put(bw *w, uint64_t v, unsigned size, unsigned align)
{
    while (w->pos % align)
        w->pos++;
    for (unsigned i = 0; i < size; i++) {
        unsigned bit = w->be ? size - 1 - i : i; /* be: most significant first */
        uint64_t at = w->pos + i;
        unsigned char mask = (unsigned char)(w->be ? 0x80 >> (at % 8) : 1 << (at % 8));
        if (v >> bit & 1)
            w->b[at / 8] |= mask;
        else
            w->b[at / 8] &= (unsigned char)~mask;
    }
    w->pos += size;
}

static void put_text(bw *w, const char *s, size_t n) /* n 0: a string with its NUL */
{
    size_t len = strlen(s);
    for (size_t i = 0; i < (n ? n : len + 1); i++)
        put(w, i < len ? (unsigned char)s[i] : 0, 8, 8);
}

static const char META[] =
    "/* CTF 1.8 */\n"
    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
    "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
    "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
    "typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"
    "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
    "typealias integer { size = 4; align = 1; signed = false; } := uint4_t;\n"
    "typealias integer { size = 16; align = 8; signed = false; byte_order = be; } := be16_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; byte_order = be; } := be32_t;\n"
    "trace { major = 1; minor = 8; byte_order = %s;\n"
    "  packet.header := struct { uint32_t magic; uint32_t stream_id; }; };\n"
    "env { hostname = \"bits\"; domain = \"kernel\"; };\n"
    "clock { name = \"monotonic\"; freq = 1000000000; offset_s = 10; offset = 500; };\n"
    "typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; } := uint27_clock_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_t;\n"
    "struct packet_context { uint64_clock_t timestamp_begin; uint64_clock_t timestamp_end; uint64_t content_size;\n"
    "  uint64_t packet_size; uint64_t events_discarded; uint32_t cpu_id; };\n"
    "struct event_header_compact {\n"
    "  enum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
    "  variant <id> { struct { uint27_clock_t timestamp; } compact;\n"
    "    struct { uint32_t id; uint64_clock_t timestamp; } extended; } v;\n"
    "} align(8);\n"
    "stream { id = 0; event.header := struct event_header_compact; packet.context := struct packet_context;\n"
    "  event.context := struct { int32_t _tid; }; };\n"
    "event { name = \"sched_switch\"; id = 1; stream_id = 0; fields := struct {\n"
    "  integer { size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; } _prev_comm[16];\n"
    "  int32_t _prev_tid; int32_t _prev_prio; int64_t _prev_state;\n"
    "  integer { size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; } _next_comm[16];\n"
    "  int32_t _next_tid; int32_t _next_prio; }; };\n"
    "event { name = \"net_dev_queue\"; id = 2; stream_id = 0; fields := struct {\n"
    "  uint64_t _skbaddr; uint32_t _len; string _name;\n"
    "  enum : uint8_t { _unknown = 0, _ipv4 = 4, _ipv6 = 6 } _network_header_type;\n"
    "  variant <_network_header_type> {\n"
    "    struct { } _unknown;\n"
    "    struct { uint4_t _version; uint4_t _ihl; uint8_t _tos; be16_t _tot_len;\n"
    "      enum : uint8_t { _unknown = 0 ... 5, _tcp = 6, _udp = 17 } _protocol;\n"
    "      uint8_t _saddr[4]; uint8_t _daddr[4];\n"
    "      variant <_protocol> { struct { } _unknown; struct { be16_t _source; be32_t _len; } _udp;\n"
    "        struct { be16_t _source_port; be16_t _dest_port; be32_t _seq; be32_t _ack_seq;\n"
    "          uint4_t _data_offset; uint4_t _reserved; uint8_t _flags; be16_t _window_size; } _tcp;\n"
    "      } _transport_header; } _ipv4;\n"
    "    struct { uint8_t _x; } _ipv6;\n"
    "  } _network_header; }; };\n"
    "event { name = \"syscall_entry_read\"; id = 3; stream_id = 0; fields := struct {\n"
    "  uint32_t __n_length; uint16_t _n[ __n_length ]; string _filename; }; };\n"
    "event { name = \"sched_process_exec\"; id = 40; stream_id = 0; fields := struct {\n"
    "  string _filename; int32_t _tid; int32_t _old_tid; }; };\n";

#define MAGIC 0xC1FC1FC1u

typedef struct built {
    char meta[8192];
    bw s;
} built;

static void pkt_begin(bw *w, uint64_t *start, uint64_t tsb, uint64_t disc, uint32_t cpu)
{
    *start = w->pos;
    put(w, MAGIC, 32, 8);
    put(w, 0, 32, 8);
    put(w, tsb, 64, 8);
    put(w, tsb + 1000000000, 64, 8);
    put(w, 0, 64, 8); /* content_size, patched */
    put(w, 0, 64, 8); /* packet_size, patched */
    put(w, disc, 64, 8);
    put(w, cpu, 32, 8);
}

static void pkt_end(bw *w, uint64_t start, unsigned pad_bytes)
{
    uint64_t content = w->pos - start;
    while (w->pos % 8)
        w->pos++;
    uint64_t end = w->pos + (uint64_t)pad_bytes * 8, save = end;
    memset(w->b + w->pos / 8, 0, pad_bytes);
    w->pos = start + 64 + 128;
    put(w, content, 64, 8);
    put(w, end - start, 64, 8);
    w->pos = save;
}

/* event header: compact (ts low 27 bits) unless id > 30 or `ext` */
static void hdr(bw *w, unsigned id, uint64_t ts, int ext, int32_t tid)
{
    while (w->pos % 8)
        w->pos++;
    if (id <= 30 && !ext) {
        put(w, id, 5, 1);
        put(w, ts & ((1u << 27) - 1), 27, 1);
    } else {
        put(w, 31, 5, 1);
        put(w, id, 32, 8);
        put(w, ts, 64, 8);
    }
    put(w, (uint32_t)tid, 32, 8);
}

static void ev_switch(bw *w, uint64_t ts, int ext, int32_t prev, int32_t next, int64_t state)
{
    hdr(w, 1, ts, ext, prev);
    put_text(w, "prev-comm", 16);
    put(w, (uint32_t)prev, 32, 8);
    put(w, 120, 32, 8);
    put(w, (uint64_t)state, 64, 8);
    put_text(w, "next-comm-that-is-long", 16); /* no NUL in the array: 16 bytes */
    put(w, (uint32_t)next, 32, 8);
    put(w, 120, 32, 8);
}

static void ev_net(bw *w, uint64_t ts, int proto, uint32_t seq, uint32_t ack, unsigned flags)
{
    hdr(w, 2, ts, 0, 77);
    put(w, 0xffff8800deadbeefull, 64, 8);
    put(w, 1500, 32, 8);
    put_text(w, "eth0", 0);
    put(w, 4, 8, 8);
    put(w, 4, 4, 1); /* version, ihl: 4-bit fields */
    put(w, 5, 4, 1);
    put(w, 0, 8, 8);
    int be = w->be;
    w->be = 1;
    put(w, 60, 16, 8);
    w->be = be;
    put(w, (unsigned)proto, 8, 8);
    for (int i = 0; i < 8; i++)
        put(w, 10 + (unsigned)i, 8, 8);
    w->be = 1;
    if (proto == 6) {
        put(w, 22, 16, 8);
        put(w, 40000, 16, 8);
        put(w, seq, 32, 8);
        put(w, ack, 32, 8);
        w->be = be; /* native: the trace's bit order */
        put(w, 5, 4, 1);
        put(w, 0, 4, 1);
        put(w, flags, 8, 8);
        w->be = 1;
        put(w, 512, 16, 8);
    } else if (proto == 17) {
        put(w, 53, 16, 8);
        put(w, 8, 32, 8);
    }
    w->be = be;
}

static void ev_read(bw *w, uint64_t ts, unsigned n)
{
    hdr(w, 3, ts, 0, 78);
    put(w, n, 32, 8);
    for (unsigned i = 0; i < n; i++)
        put(w, i, 16, 8);
    put_text(w, "/tmp/x", 0);
}

static void ev_exec(bw *w, uint64_t ts)
{
    hdr(w, 40, ts, 0, 79);
    put_text(w, "/usr/bin/scp", 0);
    put(w, 79, 32, 8);
    put(w, 79, 32, 8);
}

/* Two packets on CPU 3: timestamps crossing 2^27 boundaries (compact headers wrap),
 * the extended form, every event kind; the second packet's discarded counter 5. */
static void build(built *t, int be)
{
    memset(t, 0, sizeof *t);
    snprintf(t->meta, sizeof t->meta, META, be ? "be" : "le");
    t->s.be = be;
    uint64_t st, ts = (UINT64_C(1) << 27) * 3 - 1000;
    pkt_begin(&t->s, &st, ts - 10, 0, 3);
    ev_switch(&t->s, ts, 0, 100, 200, 1);
    ts += 2000; /* crosses 2^27*3: the low bits go back */
    ev_net(&t->s, ts, 6, 0x11223344u, 0x55667788u, 0x18);
    ts += (UINT64_C(1) << 27) + 5; /* more than one wrap: the extended form */
    ev_switch(&t->s, ts, 1, 200, 100, 2048);
    ts += 10;
    ev_net(&t->s, ts, 17, 0, 0, 0);
    ts += 10;
    ev_read(&t->s, ts, 3);
    ts += 10;
    ev_exec(&t->s, ts);
    pkt_end(&t->s, st, 13);
    ts += 1000;
    pkt_begin(&t->s, &st, ts, 5, 3);
    ev_net(&t->s, ts + 1, 4, 0, 0, 0); /* protocol 4: the enum's _unknown range */
    ev_read(&t->s, ts + 2, 0);
    pkt_end(&t->s, st, 0);
}

static uint64_t T0(void) { return (UINT64_C(1) << 27) * 3 - 1000; }

/* ---- reading ------------------------------------------------------------------------------ */

static lp_diags DS;

static lp_status rd_mem(const built *t, size_t cut, lp_ktrace **out, lp_error *err)
{
    lp_diags_release(&DS);
    lp_diags_init(&DS, 10);
    lp_ktrace *kt;
    lp_status st = lp_ktrace_new(&kt, err);
    if (st)
        return st;
    khb b;
    khb_init(&b, kt, &DS, "mem");
    st = lp_kctf_direct_mem(&b, t->meta, strlen(t->meta), t->s.b, cut ? cut : t->s.pos / 8, err);
    if (!st)
        st = khb_finish(&b, err);
    else
        khb_release(&b);
    if (st) {
        lp_ktrace_free(kt);
        kt = NULL;
    }
    *out = kt;
    return st;
}

static const char *KS(const lp_ktrace *kt, lp_str s) { return s == LP_STR_NONE ? "(none)" : lp_strtab_get(&kt->strs, s); }

static void check_values(const lp_ktrace *kt, int be)
{
    CHECK_EQ_I(kt->nhosts, 1);
    const lp_khost *h = &kt->host[0];
    CHECK_EQ_I(h->nev, 8);
    CHECK_EQ_I(h->nlost, 5);
    if (h->nev != 8)
        return;
    int64_t base = 10 * INT64_C(1000000000) + 500;
    const lp_kev *e = h->ev;
    CHECK_EQ_I(e[0].type, LP_KEV_SCHED_SWITCH);
    CHECK_EQ_I(e[0].ts, base + (int64_t)T0());
    CHECK_EQ_I(e[0].cpu, 3);
    CHECK_EQ_I(e[0].tid, 100);
    CHECK_EQ_I(e[0].tid2, 200);
    CHECK_EQ_I(e[0].ctx_tid, 100);
    CHECK_STR(KS(kt, e[0].name2), "prev-comm");
    CHECK_STR(KS(kt, e[0].name), "next-comm-that-i");
    CHECK_EQ_I(e[1].type, LP_KEV_NET_SEND);
    CHECK_EQ_I(e[1].ts, base + (int64_t)T0() + 2000); /* the wrap */
    CHECK_EQ_I(e[1].key, 0xffff8800deadbeefull);
    CHECK_EQ_I(e[1].a, 0x11223344);
    CHECK_EQ_I(e[1].b, 0x55667788);
    CHECK_EQ_I(e[1].flags, LP_KNET_DEV | LP_KNET_TCP | 0x18);
    CHECK_EQ_I(e[2].ts, base + (int64_t)T0() + 2000 + (INT64_C(1) << 27) + 5);
    CHECK_EQ_I(e[2].a, 2048);
    CHECK_EQ_I(e[3].flags, LP_KNET_DEV); /* udp: no TCP header */
    CHECK_EQ_I(e[3].a, 1500);
    CHECK_EQ_I(e[4].type, LP_KEV_SYSCALL_ENTRY);
    CHECK_STR(KS(kt, e[4].name), "read");
    CHECK_EQ_I(e[5].type, LP_KEV_PROCESS_EXEC);
    CHECK_STR(KS(kt, e[5].name), "scp");
    CHECK_EQ_I(e[6].flags, LP_KNET_DEV);
    CHECK_EQ_I(e[7].ctx_tid, 78);
    CHECK_STR(KS(kt, h->name), "bits");
    (void)be;
}

static char tmpd[64];

static const char *write_dir(const built *t, const char *name, size_t cut)
{
    static char d[200];
    char p[300];
    snprintf(d, sizeof d, "%s/%s", tmpd, name);
    mkdir(d, 0755);
    snprintf(p, sizeof p, "%s/metadata", d);
    FILE *f = fopen(p, "wb");
    if (f) {
        fputs(t->meta, f);
        fclose(f);
    }
    snprintf(p, sizeof p, "%s/channel0_3", d);
    f = fopen(p, "wb");
    if (f) {
        fwrite(t->s.b, 1, cut ? cut : t->s.pos / 8, f);
        fclose(f);
    }
    return d;
}

static void rm_dir(const char *d)
{
    char p[300];
    snprintf(p, sizeof p, "%s/metadata", d);
    unlink(p);
    snprintf(p, sizeof p, "%s/channel0_3", d);
    unlink(p);
    rmdir(d);
}

static lp_status rd_dir(const char *d, const char *mode, lp_ktrace **kt, lp_error *err)
{
    setenv("LONGPOLE_CTF", mode, 1);
    lp_diags_release(&DS);
    lp_diags_init(&DS, 10);
    const char *paths[] = {d};
    lp_status st = lp_ktrace_read(paths, 1, &DS, kt, err);
    unsetenv("LONGPOLE_CTF");
    return st;
}

static void test_good(void)
{
    static built t;
    for (int be = 0; be < 2; be++) {
        build(&t, be);
        lp_ktrace *kt;
        lp_error err;
        lp_status st = rd_mem(&t, 0, &kt, &err);
        if (st)
            fprintf(stderr, "%s\n", err.msg);
        CHECK(st == LP_OK);
        if (kt) {
            check_values(kt, be);
            lp_ktrace_free(kt);
        }
        /* the same through libbabeltrace2, field for field */
        if (!lp_ktrace_have_babeltrace())
            continue;
        const char *d = write_dir(&t, be ? "be" : "le", 0);
        lp_ktrace *x = NULL, *y = NULL;
        st = rd_dir(d, "babeltrace", &x, &err);
        if (st)
            fprintf(stderr, "babeltrace: %s\n", err.msg);
        CHECK(st == LP_OK);
        CHECK(rd_dir(d, "direct", &y, &err) == LP_OK);
        if (x && y) {
            check_values(x, be);
            CHECK_EQ_I(x->host[0].nev, y->host[0].nev);
            for (uint64_t i = 0; i < x->host[0].nev && i < y->host[0].nev; i++) {
                const lp_kev *a = &x->host[0].ev[i], *b = &y->host[0].ev[i];
                CHECK(a->ts == b->ts && a->cpu == b->cpu && a->type == b->type && a->tid == b->tid &&
                      a->tid2 == b->tid2 && a->ctx_tid == b->ctx_tid && a->flags == b->flags && a->a == b->a &&
                      a->b == b->b && a->key == b->key && !strcmp(KS(x, a->name), KS(y, b->name)) &&
                      !strcmp(KS(x, a->name2), KS(y, b->name2)));
            }
        }
        lp_ktrace_free(x);
        lp_ktrace_free(y);
        rm_dir(d);
    }
}

static void expect_err(const built *t, size_t cut, const char *want1, const char *want2)
{
    lp_ktrace *kt;
    lp_error err;
    lp_status st = rd_mem(t, cut, &kt, &err);
    CHECK(st == LP_ERR_FORMAT);
    CHECK(kt == NULL);
    if (st == LP_ERR_FORMAT && (!strstr(err.msg, want1) || !strstr(err.msg, want2))) {
        fprintf(stderr, "got: %s\nwant: %s ... %s\n", err.msg, want1, want2);
        CHECK(0);
    }
}

static void test_bad(void)
{
    static built t, u;
    build(&t, 0);
    size_t n = t.s.pos / 8;
    /* the second packet starts after the first's 13 bytes of padding */
    uint64_t p2 = 0;
    for (size_t i = 8; i + 4 <= n && !p2; i++)
        if (t.s.b[i] == 0xc1 && t.s.b[i + 1] == 0x1f && t.s.b[i + 2] == 0xfc && t.s.b[i + 3] == 0xc1)
            p2 = i;
    CHECK(p2 > 0);
    expect_err(&t, n - 3, "packet_size beyond the end of the file", "at byte ");
    char want[64];
    snprintf(want, sizeof want, "(at byte %llu)", (unsigned long long)p2);
    expect_err(&t, n - 3, "stream file 'stream'", want);
    expect_err(&t, p2 + 20, "a packet context cut short", "decoding stopped after its event 6");
    /* content_size beyond packet_size */
    u = t;
    u.s.pos = 64 + 128;
    put(&u.s, 1u << 30, 64, 8);
    u.s.pos = t.s.pos;
    expect_err(&u, 0, "content_size larger than packet_size", "(at byte 0)");
    /* an unknown event id: the first event's 5-bit id set to 9 */
    u = t;
    u.s.pos = 8 * 52;
    put(&u.s, 9, 5, 1);
    u.s.pos = t.s.pos;
    expect_err(&u, 0, "an unknown event id", "after its event 0: an unknown event id (at byte 52)");
    /* the magic */
    u = t;
    u.s.b[0] ^= 1;
    expect_err(&u, 0, "without the CTF magic", "(at byte 0)");
    /* a string without its NUL: the exec's filename runs into the padding's end */
    u = t;
    for (size_t i = 0; i + 12 <= n; i++)
        if (memcmp(u.s.b + i, "/usr/bin/scp", 12) == 0)
            memset(u.s.b + i, 'x', p2 - i);
    expect_err(&u, 0, "a string without its terminating NUL", "after its event 5");
    /* metadata: a syntax error names its line; outside the subset: unsupported */
    u = t;
    char *x = strstr(u.meta, "int32_t _prev_prio;");
    if (x)
        x[18] = ' ';
    expect_err(&u, 0, "TSDL line 29", "expected ';', found 'int64_t'");
    u = t;
    x = strstr(u.meta, "uint64_t _skbaddr;");
    if (x)
        memcpy(x, "floating_point { exp_dig = 8; mant_dig = 24; } _f;", 51);
    lp_ktrace *kt;
    lp_error err;
    CHECK(rd_mem(&u, 0, &kt, &err) == LP_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "outside the subset") != NULL);
    /* not CTF metadata at all */
    u = t;
    memcpy(u.meta, "hello", 5);
    expect_err(&u, 0, "neither CTF text", "at byte 0");

    /* through a directory: the file's name; the fallback to libbabeltrace2 with a note */
    const char *d = write_dir(&t, "cut", n - 3);
    CHECK(rd_dir(d, "direct", &kt, &err) == LP_ERR_FORMAT);
    CHECK(strstr(err.msg, "stream file 'channel0_3'") && strstr(err.msg, want));
    rm_dir(d);
    if (lp_ktrace_have_babeltrace()) {
        u = t; /* a second clock: outside the subset, valid for babeltrace2 */
        static const char clk2[] = "clock { name = \"other\"; freq = 1000; };\n";
        char *y = strstr(u.meta, "clock { name");
        if (y) {
            memmove(y + strlen(clk2), y, strlen(y) + 1);
            memcpy(y, clk2, strlen(clk2));
        }
        d = write_dir(&u, "twoclocks", 0);
        lp_status st = rd_dir(d, "auto", &kt, &err);
        if (st)
            fprintf(stderr, "fallback: %s\n", err.msg);
        CHECK(st == LP_OK);
        CHECK_EQ_I(DS.count[LP_RULE_IMPORT] >= 1, 1);
        CHECK(DS.nkept >= 1 && strstr(DS.kept[0].msg, "read through libbabeltrace2"));
        if (kt)
            CHECK_EQ_I(kt->host[0].nev, 8);
        lp_ktrace_free(kt);
        CHECK(rd_dir(d, "direct", &kt, &err) == LP_ERR_UNSUPPORTED);
        rm_dir(d);
    }
}

static int seeds(const char *dir)
{
    static built t;
    mkdir(dir, 0755);
    for (int be = 0; be < 2; be++) {
        build(&t, be);
        char p[600];
        snprintf(p, sizeof p, "%s/bits-%s", dir, be ? "be" : "le");
        FILE *f = fopen(p, "wb");
        if (!f)
            return 1;
        fwrite(t.meta, 1, strlen(t.meta) + 1, f);
        fwrite(t.s.b, 1, t.s.pos / 8, f);
        fclose(f);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--seeds") == 0)
        return seeds(argv[2]);
    lp_diags_init(&DS, 10);
    snprintf(tmpd, sizeof tmpd, "/tmp/lp-ctfpkt-XXXXXX");
    if (!mkdtemp(tmpd)) {
        CHECK(0);
        return t_done("test_ctfpkt");
    }
    test_good();
    test_bad();
    rmdir(tmpd);
    lp_diags_release(&DS);
    return t_done("test_ctfpkt");
}
