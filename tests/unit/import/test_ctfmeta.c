/* test_ctfmeta.c: the TSDL subset parser of the direct CTF decoder (ctf_meta.c): LTTng's
 * header forms (compact and large event headers, their enum tags and variants), typealias
 * of several words, struct align(), arrays, sequences resolved to the slot of their
 * length, enums with ranges, native byte order resolved to the trace's, clocks, env;
 * packetized metadata (0x75D11D57 packets) turned into text; the real traces' metadata
 * when ../shared/data/ctf is present; syntax errors (malformed, with the line) and
 * constructs outside the subset (flagged as such, for the fallback). */
#include "import/kernel/ctf_meta.h"
#include "longpole/base/alloc.h"
#include "t.h"

#include <stdint.h>
#include <string.h>

#define DATA LP_SOURCE_DIR "/../shared/data/ctf"

static const char HDR[] =
    "/* CTF 1.8 */\n"
    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
    "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := unsigned long;\n"
    "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
    "trace { major = 1; minor = 8; byte_order = be; packet.header := struct { uint32_t magic; uint32_t stream_id; }; };\n"
    "env { hostname = \"h1\"; tracer_major = 2; };\n"
    "clock { name = monotonic; freq = 1000000000; offset_s = 5; offset = 7; };\n"
    "typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; } := uint27_clock_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_t;\n"
    "struct event_header_compact {\n"
    "  enum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
    "  variant <id> { struct { uint27_clock_t timestamp; } compact;\n"
    "                 struct { uint32_t id; uint64_clock_t timestamp; } extended; } v;\n"
    "} align(8);\n"
    "struct packet_context { uint64_clock_t timestamp_begin; unsigned long events_discarded; uint32_t cpu_id; };\n"
    "stream { id = 0; event.header := struct event_header_compact; packet.context := struct packet_context; };\n";

static int parse(ctfmeta *m, const char *text, uint64_t *line, int *unsup, char *msg)
{
    return ctf_meta_parse(m, text, strlen(text), msg, 300, line, unsup);
}

static void test_subset(void)
{
    char text[8192], msg[300];
    snprintf(text, sizeof text, "%s%s", HDR,
             "event { name = \"ev\"; id = 3; stream_id = 0; fields := struct {\n"
             "  integer { size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; } _comm[16];\n"
             "  uint32_t __n_length; integer { size = 16; align = 8; signed = 1; byte_order = le; } _n[ __n_length ];\n"
             "  enum : uint8_t { a, b = 5, c = 7 ... 9, } _e; string _s; };\n};\n");
    ctfmeta m;
    uint64_t line;
    int un;
    CHECK(parse(&m, text, &line, &un, msg) == 0);
    CHECK_EQ_I(m.bo, CT_BE);
    CHECK_EQ_I(m.nclk, 1);
    CHECK_EQ_I(m.clk[0].offset_s, 5);
    CHECK_EQ_I(m.clk[0].offset, 7);
    CHECK_STR(m.hostname, "h1");
    CHECK_EQ_I(m.nst, 1);
    CHECK_EQ_I(m.nev, 1);
    if (m.nev == 1 && m.nst == 1) {
        const ctype *h = m.st[0].ehdr;
        CHECK_EQ_I(h->kind, CT_STRUCT);
        CHECK_EQ_I(h->align, 8);
        CHECK_EQ_I(h->nm, 2);
        CHECK_EQ_I(h->m[0].t->size, 5);
        CHECK_EQ_I(h->m[0].t->nen, 2);
        CHECK_EQ_I(h->m[0].t->en[0].hi, 30);
        CHECK(h->m[0].slot >= 0);
        const ctype *v = h->m[1].t;
        CHECK_EQ_I(v->kind, CT_VARIANT);
        CHECK_EQ_I(v->refslot, h->m[0].slot);
        CHECK_EQ_I(v->opt[0], 0);
        CHECK_EQ_I(v->opt[1], 1);
        CHECK_EQ_I(v->m[0].t->m[0].t->clock, 0);
        CHECK_EQ_I(v->m[0].t->m[0].t->bo, CT_BE); /* native -> the trace's */
        CHECK_EQ_I(m.st[0].pctx->m[1].t->size, 64); /* unsigned long */
        const ctevent *e = &m.ev[0];
        CHECK_STR(e->name, "ev");
        CHECK_EQ_I(e->id, 3);
        const ctype *f = e->fields;
        CHECK_EQ_I(f->nm, 5);
        CHECK_EQ_I(f->m[0].t->kind, CT_ARRAY);
        CHECK_EQ_I(f->m[0].t->len, 16);
        CHECK_EQ_I(f->m[0].t->text, 1);
        CHECK_EQ_I(f->m[2].t->kind, CT_SEQ);
        CHECK_EQ_I(f->m[2].t->refslot, f->m[1].slot);
        CHECK_EQ_I(f->m[2].t->elem->bo, CT_LE);
        CHECK_EQ_I(f->m[2].t->elem->sign, 1);
        CHECK_EQ_I(f->m[3].t->en[1].lo, 5);
        CHECK_EQ_I(f->m[3].t->en[2].lo, 7);
        CHECK_EQ_I(f->m[3].t->en[2].hi, 9);
        CHECK_EQ_I(f->m[4].t->kind, CT_STRING);
        CHECK_STR(ctf_name(f->m[0].name), "comm");
    }
    ctf_meta_release(&m);

    /* malformed: the line of the error */
    snprintf(text, sizeof text, "%s%s", HDR, "event { name = x; id = 1;\n fields := struct { uint32_t a b; }; };\n");
    CHECK(parse(&m, text, &line, &un, msg) == -1);
    CHECK_EQ_I(un, 0);
    CHECK_EQ_I(line, 21); /* the "fields" line after the 19 of HDR and one more */
    CHECK(strstr(msg, "expected ';'") != NULL);
    ctf_meta_release(&m);
    snprintf(text, sizeof text, "%s%s", HDR, "event { name = x; id = 1; fields := struct { nosuch_t a; }; };\n");
    CHECK(parse(&m, text, &line, &un, msg) == -1);
    CHECK(strstr(msg, "unknown type 'nosuch_t'") != NULL);
    ctf_meta_release(&m);
    CHECK(parse(&m, "this is not TSDL {", &line, &un, msg) == -1);
    ctf_meta_release(&m);
    /* outside the subset: flagged for the fallback */
    snprintf(text, sizeof text, "%s%s", HDR,
             "event { name = x; id = 1; fields := struct { floating_point { exp_dig = 8; mant_dig = 24; } f; }; };\n");
    CHECK(parse(&m, text, &line, &un, msg) == -1);
    CHECK_EQ_I(un, 1);
    ctf_meta_release(&m);
    snprintf(text, sizeof text, "%s%s", HDR, "event { name = x; id = 1; fields := struct { uint32_t a[ nolen ]; }; };\n");
    CHECK(parse(&m, text, &line, &un, msg) == -1);
    CHECK_EQ_I(un, 1);
    ctf_meta_release(&m);
}

static void test_packets(void)
{
    /* two metadata packets (little-endian) around "event {" ... "}" */
    static const char part1[] = "/* CTF 1.8 */ typealias integer { size = 8; } := u8;", part2[] = " clock { name = c; };";
    unsigned char buf[512];
    size_t o = 0;
    const char *parts[2] = {part1, part2};
    for (int i = 0; i < 2; i++) {
        size_t len = strlen(parts[i]), content = (37 + len) * 8, packet = (37 + len + 3) * 8;
        unsigned char *h = buf + o;
        memset(h, 0, 37 + len + 3);
        h[0] = 0x57, h[1] = 0x1d, h[2] = 0xd1, h[3] = 0x75;
        for (int k = 0; k < 4; k++) {
            h[24 + k] = (unsigned char)(content >> (8 * k));
            h[28 + k] = (unsigned char)(packet >> (8 * k));
        }
        memcpy(h + 37, parts[i], len);
        o += 37 + len + 3;
    }
    char *text, msg[300];
    size_t n;
    uint64_t off;
    CHECK(ctf_meta_is_packetized(buf, o));
    CHECK(ctf_meta_text(buf, o, &text, &n, msg, sizeof msg, &off) == 0);
    if (n == strlen(part1) + strlen(part2)) {
        CHECK(memcmp(text, part1, strlen(part1)) == 0);
        CHECK_STR(text + strlen(part1), part2);
    } else
        CHECK_EQ_I(n, strlen(part1) + strlen(part2));
    lp_free(text);
    /* cut short: the byte offset of the packet */
    CHECK(ctf_meta_text(buf, o - 10, &text, &n, msg, sizeof msg, &off) == -1);
    CHECK_EQ_I(off, 37 + strlen(part1) + 3);
}

static void test_real(void)
{
    const char *traces[] = {"scp_src", "scp_dest", "many-threads"};
    for (size_t i = 0; i < 3; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s/metadata", DATA, traces[i]);
        FILE *f = fopen(p, "rb");
        if (!f) {
            printf("skip real metadata: %s absent\n", p);
            continue;
        }
        static unsigned char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        char *text, msg[300];
        size_t tn;
        uint64_t off, line;
        int un;
        CHECK(ctf_meta_text(buf, n, &text, &tn, msg, sizeof msg, &off) == 0);
        ctfmeta m;
        int rc = ctf_meta_parse(&m, text, tn, msg, sizeof msg, &line, &un);
        if (rc)
            fprintf(stderr, "%s: line %llu: %s\n", traces[i], (unsigned long long)line, msg);
        CHECK(rc == 0);
        CHECK(m.nev > 80);
        CHECK(m.hostname != NULL);
        ctf_meta_release(&m);
        lp_free(text);
    }
}

int main(void)
{
    test_subset();
    test_packets();
    test_real();
    return t_done("test_ctfmeta");
}
