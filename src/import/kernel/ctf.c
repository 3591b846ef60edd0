/* ctf.c: LTTng kernel traces in CTF (one host per trace): the choice of decoder, and the
 * reader through libbabeltrace2.
 *
 * The choice (lp_kctf_read): the direct decoder (ctf_pkt.c) by default; the environment
 * variable LONGPOLE_CTF=babeltrace forces libbabeltrace2, LONGPOLE_CTF=direct forbids
 * the fallback. When the direct decoder cannot use the metadata (outside its subset, or
 * text it does not parse) and libbabeltrace2 is built in, the trace is read through it
 * and a note says why (rule import); errors in the data are errors of the trace, never a
 * reason to fall back. docs/formats/ctf.md.
 *
 * The graph: babeltrace2's `src.ctf.fs` source on the trace directory, and one simple
 * sink of our own per output port, i.e. per data stream (a CPU's stream files). There
 * is NO muxer: babeltrace2's muxer refuses a stream whose timestamps step back at a
 * packet boundary and ends the whole graph there (`babeltrace2 scp_src` prints 11,682
 * of 110,771 events); each sink instead hands its events, in stream order, to the host
 * builder (khost.c), which sorts, counts what was out of order and merges.
 *
 * Per event class the mapping (kev_map.c) is resolved once into member indices of the
 * payload structure (and of the common context for LTTng's `tid` context), so an event
 * costs a hash lookup of its class and one borrow per field. A class that lacks a field
 * its mapping requires is reported once; its events are counted in nbad and skipped.
 * The CPU of an event is its packet's `cpu_id`. Discarded-event counts (packets'
 * events_discarded) add to nlost. The host's name is the trace's env `hostname`.
 *
 * Without libbabeltrace2 (LP_HAVE_BABELTRACE2 undefined) lp_kctf_read fails with
 * LP_ERR_UNSUPPORTED.
 */
#include "import/kernel/kint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(LP_HAVE_BABELTRACE2)

#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <babeltrace2/babeltrace.h>
#include <dirent.h>
#include <sys/stat.h>

/* one event class, resolved */
typedef struct cmap {
    const kevdef *def;  /* NULL: LP_KEV_OTHER */
    uint16_t type;
    uint8_t bad;        /* a required field is missing: skip its events */
    uint8_t tcp;        /* KS_NET_DEV with a network_header member */
    lp_str name;        /* event name (LP_KEV_OTHER) or syscall name */
    int64_t fi[KR_N];   /* member index in the payload, -1: absent */
    int64_t ctx_tid;    /* member index of `tid` in the common context, -1: none */
    int64_t nh;         /* member index of network_header */
} cmap;

typedef struct ctfread ctfread;

typedef struct cstream {
    ctfread *r;
    uint32_t id;        /* stream number in the host builder */
    uint32_t cpu;       /* the current packet's cpu_id */
    uint64_t nev;       /* events read so far (the position in diagnostics) */
    int64_t last;       /* the last event's timestamp */
    const char *port;   /* the port's name: trace | stream class | file */
    int failed;         /* babeltrace2 could not decode this stream further */
} cstream;

struct ctfread {
    khb *b;
    const char *dir;
    lp_hmap classes;    /* const bt_event_class * -> index in maps */
    cmap *maps;
    size_t nmaps, capmaps;
    lp_status st;       /* the first error (stops the graph) */
    lp_error *err;
    int named;
};

/* ---- babeltrace2 errors ------------------------------------------------------------------ */

/* The current thread's babeltrace2 error, its first causes joined (each cut before its
 * "addr=" details), into err; released. */
static lp_status bt_err(lp_error *err, lp_status st, const char *what)
{
    const bt_error *e = bt_current_thread_take_error();
    char msg[512] = "";
    size_t o = 0;
    if (e) {
        uint64_t n = bt_error_get_cause_count(e);
        for (uint64_t i = 0; i < n && i < 3 && o + 8 < sizeof msg; i++) {
            const char *m = bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, i));
            if (!m || strncmp(m, "Component", 9) == 0)
                continue;
            size_t len = strlen(m);
            const char *a = strstr(m, "addr=");
            if (a) { /* "Reason: msg-it-addr=..., ..." -> "Reason" */
                len = (size_t)(a - m);
                while (len > 0 && m[len - 1] != ':')
                    len--;
                len = len ? len - 1 : (size_t)(a - m);
            }
            while (len > 0 && (m[len - 1] == '.' || m[len - 1] == ' '))
                len--;
            int k = snprintf(msg + o, sizeof msg - o, "%s%.*s", o ? "; " : "", (int)len, m);
            if (k < 0)
                break;
            o += (size_t)k < sizeof msg - o ? (size_t)k : sizeof msg - o - 1;
        }
        bt_error_release(e);
    }
    return lp_error_set(err, st, "%s%s%s", what, o ? ": " : "", msg);
}

/* ---- fields ---------------------------------------------------------------------------- */

static int64_t member_index(const bt_field_class *sc, const char *names)
{
    if (!sc || !names || !bt_field_class_type_is(bt_field_class_get_type(sc), BT_FIELD_CLASS_TYPE_STRUCTURE))
        return -1;
    uint64_t n = bt_field_class_structure_get_member_count(sc);
    for (const char *p = names; *p;) { /* alternatives separated by '|', first present wins */
        const char *q = strchr(p, '|');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        for (uint64_t i = 0; i < n; i++) {
            const char *m = bt_field_class_structure_member_get_name(
                bt_field_class_structure_borrow_member_by_index_const(sc, i));
            if (strlen(m) == len && memcmp(m, p, len) == 0)
                return (int64_t)i;
        }
        p += len + (q != NULL);
    }
    return -1;
}

static const bt_field_class *member_class(const bt_field_class *sc, int64_t i)
{
    return bt_field_class_structure_member_borrow_field_class_const(
        bt_field_class_structure_borrow_member_by_index_const(sc, (uint64_t)i));
}

static int is_int_class(const bt_field_class *fc)
{
    bt_field_class_type t = bt_field_class_get_type(fc);
    return bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_INTEGER) || t == BT_FIELD_CLASS_TYPE_BOOL;
}

static int64_t field_int(const bt_field *f)
{
    bt_field_class_type t = bt_field_get_class_type(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        return (int64_t)bt_field_integer_unsigned_get_value(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        return bt_field_integer_signed_get_value(f);
    if (t == BT_FIELD_CLASS_TYPE_BOOL)
        return bt_field_bool_get_value(f);
    return -1;
}

static const bt_field *member(const bt_field *s, int64_t i)
{
    return bt_field_structure_borrow_member_field_by_index_const(s, (uint64_t)i);
}

/* ---- event classes --------------------------------------------------------------------- */

static lp_status class_resolve(ctfread *r, const bt_event_class *ec, cmap *m)
{
    memset(m, 0, sizeof *m);
    const char *name = bt_event_class_get_name(ec);
    if (!name)
        name = "";
    size_t nlen = strlen(name), sysoff = 0;
    m->def = lp_kevdef_find(name, nlen, &sysoff);
    m->type = m->def ? m->def->type : LP_KEV_OTHER;
    m->ctx_tid = m->nh = -1;
    for (int k = 0; k < KR_N; k++)
        m->fi[k] = -1;
    const bt_field_class *cc =
        bt_stream_class_borrow_event_common_context_field_class_const(bt_event_class_borrow_stream_class_const(ec));
    m->ctx_tid = member_index(cc, "tid|vtid");
    if (m->ctx_tid >= 0 && !is_int_class(member_class(cc, m->ctx_tid)))
        m->ctx_tid = -1;
    lp_status st = LP_OK;
    if (!m->def || m->def->special == KS_SYSCALL_ENTRY || m->def->special == KS_SYSCALL_EXIT)
        st = m->def && sysoff < nlen ? khb_str(r->b, name + sysoff, nlen - sysoff, &m->name, r->err)
                                     : khb_str(r->b, name, nlen, &m->name, r->err);
    else
        m->name = LP_STR_NONE;
    if (st || !m->def)
        return st;
    const bt_field_class *pc = bt_event_class_borrow_payload_field_class_const(ec);
    for (int k = 0; k < KR_N; k++) {
        const kfield *f = &m->def->f[k];
        if (!f->ctf)
            continue;
        m->fi[k] = member_index(pc, f->ctf);
        int ok = m->fi[k] >= 0;
        if (ok) { /* the type must fit the member */
            int want_str = f->kind == KF_STR || f->kind == KF_BASENAME;
            const bt_field_class *fc = member_class(pc, m->fi[k]);
            ok = want_str ? bt_field_class_get_type(fc) == BT_FIELD_CLASS_TYPE_STRING : is_int_class(fc);
            if (!ok)
                m->fi[k] = -1;
        }
        if (!ok && !f->optional && !m->bad) {
            m->bad = 1;
            lp_diags_report(r->b->diags, LP_SEV_WARNING, LP_RULE_FIELD, r->dir, 0,
                            "event '%s' has no integer%s field '%s' (its events are skipped)", name,
                            f->kind == KF_STR || f->kind == KF_BASENAME ? "/string" : "", f->ctf);
        }
    }
    if (m->def->special == KS_NET_DEV)
        m->nh = member_index(pc, "network_header");
    return LP_OK;
}

static lp_status class_get(ctfread *r, const bt_event_class *ec, const cmap **out)
{
    uint64_t key = (uint64_t)(uintptr_t)ec, v;
    if (lp_hmap_get(&r->classes, key, &v)) {
        *out = &r->maps[v];
        return LP_OK;
    }
    if (lp_grow_at(&r->maps, &r->capmaps, r->nmaps + 1, sizeof *r->maps))
        return lp_error_set(r->err, LP_ERR_NOMEM, "out of memory");
    lp_status st = class_resolve(r, ec, &r->maps[r->nmaps]);
    if (!st)
        st = lp_hmap_put(&r->classes, key, r->nmaps, r->err);
    if (st)
        return st;
    *out = &r->maps[r->nmaps++];
    return LP_OK;
}

/* ---- events ---------------------------------------------------------------------------- */

static const bt_field *variant_selected(const bt_field *f, const char **optname)
{
    if (!f || !bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_VARIANT))
        return NULL;
    if (optname)
        *optname = bt_field_class_variant_option_get_name(bt_field_variant_borrow_selected_option_class_const(f));
    return bt_field_variant_borrow_selected_option_field_const(f);
}

static const bt_field *struct_member(const bt_field *f, const char *name)
{
    if (!f || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRUCTURE)
        return NULL;
    return bt_field_structure_borrow_member_field_by_name_const(f, name);
}

/* LTTng >= 2.9: network_header -> ipv4|ipv6 -> transport_header -> tcp -> seq/ack_seq/flags */
static void net_tcp(const bt_field *nh, lp_kev *e)
{
    const char *opt = NULL;
    const bt_field *th = struct_member(variant_selected(nh, NULL), "transport_header");
    const bt_field *tcp = variant_selected(th, &opt);
    if (!tcp || !opt || strcmp(opt, "tcp") != 0)
        return;
    const bt_field *seq = struct_member(tcp, "seq"), *ack = struct_member(tcp, "ack_seq"),
                   *fl = struct_member(tcp, "flags");
    if (!seq || !ack || !fl)
        return;
    e->a = field_int(seq);
    e->b = field_int(ack);
    e->flags = LP_KNET_DEV | LP_KNET_TCP | ((uint32_t)field_int(fl) & 0xffff);
}

static lp_status event_strings(ctfread *r, const cmap *m, const bt_field *p, lp_kev *e)
{
    for (int k = KR_NAME; k <= KR_NAME2; k++) {
        if (m->fi[k] < 0)
            continue;
        const bt_field *f = member(p, m->fi[k]);
        lp_str id;
        lp_status st = khb_name(r->b, m->def->f[k].kind, bt_field_string_get_value(f),
                                (size_t)bt_field_string_get_length(f), &id, r->err);
        if (st)
            return st;
        if (k == KR_NAME)
            e->name = id;
        else
            e->name2 = id;
    }
    return LP_OK;
}

static lp_status on_event(cstream *cs, const bt_message *msg)
{
    ctfread *r = cs->r;
    const bt_event *ev = bt_message_event_borrow_event_const(msg);
    const cmap *m = NULL;
    lp_status st = class_get(r, bt_event_borrow_class_const(ev), &m);
    if (st)
        return st;
    cs->nev++;
    if (m->bad) {
        r->b->nbad++;
        return LP_OK;
    }
    int64_t ns;
    if (bt_clock_snapshot_get_ns_from_origin(bt_message_event_borrow_default_clock_snapshot_const(msg), &ns) !=
        BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
        r->b->nbad++;
        lp_diags_report(r->b->diags, LP_SEV_WARNING, LP_RULE_FIELD, r->dir, 0,
                        "%s: event %llu: timestamp does not fit in 64-bit ns (skipped)", cs->port,
                        (unsigned long long)cs->nev);
        return LP_OK;
    }
    lp_kev e = {.ts = ns, .cpu = cs->cpu, .type = m->type, .tid = -1, .tid2 = -1, .ctx_tid = -1,
                .a = -1, .b = -1, .name = m->name, .name2 = LP_STR_NONE};
    if (m->ctx_tid >= 0) {
        const bt_field *c = bt_event_borrow_common_context_field_const(ev);
        if (c)
            e.ctx_tid = (int32_t)field_int(member(c, m->ctx_tid));
    }
    if (m->def) {
        const bt_field *p = bt_event_borrow_payload_field_const(ev);
        int64_t v[KR_N];
        for (int k = 0; k < KR_N; k++)
            v[k] = m->fi[k] >= 0 && k != KR_NAME && k != KR_NAME2 ? field_int(member(p, m->fi[k])) : -1;
        e.tid = (int32_t)v[KR_TID];
        e.tid2 = (int32_t)v[KR_TID2];
        e.a = v[KR_A];
        e.b = v[KR_B];
        e.key = m->fi[KR_KEY] >= 0 ? (uint64_t)v[KR_KEY] : 0;
        e.flags = m->fi[KR_FLAGS] >= 0 ? (uint32_t)v[KR_FLAGS] : 0;
        switch (m->def->special) {
        case KS_SOCK_ADDR: e.flags = (uint32_t)(v[KR_FLAGS] & 0xffff) << 16 | (uint32_t)(v[KR_X] & 0xffff); break;
        case KS_SOCK_CLONE: e.kfl = KPAD_CLONE; break;
        case KS_NET_DEV:
            e.flags = LP_KNET_DEV;
            if (m->nh >= 0)
                net_tcp(member(p, m->nh), &e);
            break;
        default: break;
        }
        st = event_strings(r, m, p, &e);
        if (st)
            return st;
    }
    cs->last = ns;
    return khb_push(r->b, cs->id, &e, r->err);
}

/* ---- the other messages ------------------------------------------------------------------ */

static lp_status on_stream_begin(cstream *cs, const bt_message *msg)
{
    ctfread *r = cs->r;
    const bt_stream *s = bt_message_stream_beginning_borrow_stream_const(msg);
    if (!bt_stream_class_borrow_default_clock_class_const(bt_stream_borrow_class_const(s)))
        return lp_error_set(r->err, LP_ERR_FORMAT, "%s: its events have no clock (not a kernel trace?)", cs->port);
    if (r->named)
        return LP_OK;
    r->named = 1;
    const bt_value *h = bt_trace_borrow_environment_entry_value_by_name_const(bt_stream_borrow_trace_const(s), "hostname");
    if (h && bt_value_is_string(h)) {
        const char *name = bt_value_string_get(h);
        return khb_str(r->b, name, strlen(name), &r->b->name, r->err);
    }
    return LP_OK;
}

static void on_packet_begin(cstream *cs, const bt_message *msg)
{
    const bt_field *c = bt_packet_borrow_context_field_const(bt_message_packet_beginning_borrow_packet_const(msg));
    const bt_field *cpu = struct_member(c, "cpu_id");
    if (cpu) {
        int64_t v = field_int(cpu);
        cs->cpu = v >= 0 && v < 65536 ? (uint32_t)v : 0;
    }
}

static void on_discarded(cstream *cs, const bt_message *msg)
{
    uint64_t n = 0;
    if (bt_message_discarded_events_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
        cs->r->b->nlost += n;
}

static lp_status on_message(cstream *cs, const bt_message *msg)
{
    switch (bt_message_get_type(msg)) {
    case BT_MESSAGE_TYPE_EVENT: return on_event(cs, msg);
    case BT_MESSAGE_TYPE_STREAM_BEGINNING: return on_stream_begin(cs, msg);
    case BT_MESSAGE_TYPE_PACKET_BEGINNING: on_packet_begin(cs, msg); return LP_OK;
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS: on_discarded(cs, msg); return LP_OK;
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
        lp_diags_report(cs->r->b->diags, LP_SEV_WARNING, LP_RULE_IMPORT, cs->r->dir, 0,
                        "%s: the tracer discarded packets after event %llu (their events are not counted)",
                        cs->port, (unsigned long long)cs->nev);
        return LP_OK;
    default: return LP_OK;
    }
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it, void *ud)
{
    cstream *cs = ud;
    bt_message_array_const msgs;
    uint64_t count;
    switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default: cs->failed = 1; return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    for (uint64_t i = 0; i < count; i++) {
        if (!cs->r->st)
            cs->r->st = on_message(cs, msgs[i]);
        bt_message_put_ref(msgs[i]);
    }
    return cs->r->st ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR
                     : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* ---- the graph --------------------------------------------------------------------------- */

/* Does dir/metadata start as CTF metadata does (TSDL text, or a packet's magic)? */
static int metadata_looks_ok(const char *dir)
{
    char p[4096];
    unsigned char head[8] = {0};
    if ((size_t)snprintf(p, sizeof p, "%s/metadata", dir) >= sizeof p)
        return 0;
    FILE *f = fopen(p, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    static const unsigned char le[4] = {0x57, 0x1d, 0xd1, 0x75}, be[4] = {0x75, 0xd1, 0x1d, 0x57};
    return n >= 4 && (memcmp(head, "/* CTF", n < 6 ? n : 6) == 0 || memcmp(head, le, 4) == 0 || memcmp(head, be, 4) == 0);
}

/* The source component on `dir` (LP_ERR_FORMAT with babeltrace2's reason if it refuses). */
static lp_status add_source(bt_graph *g, const char *dir, const bt_component_source **src, lp_error *err)
{
    const bt_plugin *plugin = NULL;
    if (bt_plugin_find("ctf", BT_FALSE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &plugin) != BT_PLUGIN_FIND_STATUS_OK) {
        bt_current_thread_clear_error();
        return lp_error_set(err, LP_ERR_UNSUPPORTED,
                            "babeltrace2's 'ctf' plugin is not installed (Debian: libbabeltrace2-0)");
    }
    const bt_component_class_source *cls = bt_plugin_borrow_source_component_class_by_name_const(plugin, "fs");
    bt_value *params = bt_value_map_create(), *inputs = NULL;
    lp_status st = LP_OK;
    if (!cls || !params || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) ||
        bt_value_array_append_string_element(inputs, dir))
        st = lp_error_set(err, LP_ERR_NOMEM, "babeltrace2: cannot set up the source");
    else if (bt_graph_add_source_component(g, cls, "src", params, BT_LOGGING_LEVEL_NONE, src) !=
             BT_GRAPH_ADD_COMPONENT_STATUS_OK)
        st = bt_err(err, LP_ERR_FORMAT, metadata_looks_ok(dir) ? "babeltrace2 cannot open it as CTF"
                                                                : "its 'metadata' is neither CTF text "
                                                                  "('/* CTF 1.8') nor metadata packets");
    bt_value_put_ref(params);
    bt_plugin_put_ref(plugin);
    return st;
}

static lp_status run_graph(ctfread *r, lp_error *err)
{
    bt_graph *g = bt_graph_create(0);
    if (!g)
        return lp_error_set(err, LP_ERR_NOMEM, "babeltrace2: cannot create a graph");
    const bt_component_source *src = NULL;
    cstream *cs = NULL;
    lp_status st = add_source(g, r->dir, &src, err);
    uint64_t nports = st ? 0 : bt_component_source_get_output_port_count(src);
    if (!st && nports == 0)
        st = lp_error_set(err, LP_ERR_FORMAT, "no data stream in it");
    if (!st && !(cs = lp_calloc(nports, sizeof *cs)))
        st = lp_error_set(err, LP_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; i < nports && !st; i++) {
        const bt_port_output *op = bt_component_source_borrow_output_port_by_index_const(src, i);
        cs[i] = (cstream){.r = r, .id = (uint32_t)i, .port = bt_port_get_name(bt_port_output_as_port_const(op))};
        char name[32];
        snprintf(name, sizeof name, "sink%llu", (unsigned long long)i);
        const bt_component_sink *sink;
        if (bt_graph_add_simple_sink_component(g, name, NULL, consume, NULL, &cs[i], &sink) !=
                BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
            bt_graph_connect_ports(g, op, bt_component_sink_borrow_input_port_by_index_const(sink, 0), NULL) !=
                BT_GRAPH_CONNECT_PORTS_STATUS_OK)
            st = bt_err(err, LP_ERR_NOMEM, "babeltrace2: cannot connect a stream");
    }
    if (!st) {
        bt_graph_run_status rs;
        while ((rs = bt_graph_run(g)) == BT_GRAPH_RUN_STATUS_AGAIN)
            ;
        if (r->st) { /* ours: already in err */
            st = r->st;
            bt_current_thread_clear_error();
        } else if (rs != BT_GRAPH_RUN_STATUS_OK) {
            char what[600];
            snprintf(what, sizeof what, "babeltrace2 could not decode it");
            for (uint64_t i = 0; i < nports; i++)
                if (cs[i].failed) {
                    const char *file = strrchr(cs[i].port, '|'); /* "uuid | class | /path/file" */
                    snprintf(what, sizeof what, "stream file '%s': decoding stopped after its event %llu (at %lld ns)",
                             file ? file + 2 : cs[i].port, (unsigned long long)cs[i].nev, (long long)cs[i].last);
                    break;
                }
            st = bt_err(err, LP_ERR_FORMAT, what);
        }
    }
    bt_graph_put_ref(g);
    lp_free(cs);
    return st;
}

/* Sum of the sizes of the trace's files (for MB/s). */
static uint64_t dir_bytes(const char *dir)
{
    uint64_t n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char p[4096];
        struct stat sb;
        if (e->d_name[0] != '.' && (size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < sizeof p &&
            stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
            n += (uint64_t)sb.st_size;
    }
    closedir(d);
    return n;
}

static lp_status bt_read(khb *b, const char *dir, lp_error *err)
{
    ctfread r;
    memset(&r, 0, sizeof r);
    r.b = b;
    r.dir = dir;
    r.err = err;
    lp_status st = lp_hmap_init(&r.classes, 64, err);
    if (!st)
        st = run_graph(&r, err);
    lp_hmap_release(&r.classes);
    lp_free(r.maps);
    if (!st && b->nlost)
        lp_diags_report(b->diags, LP_SEV_WARNING, LP_RULE_IMPORT, dir, 0,
                        "the tracer discarded %llu events (ring buffer full)", (unsigned long long)b->nlost);
    b->bytes = dir_bytes(dir);
    return st;
}

#define HAVE_BT 1

#else /* no libbabeltrace2 */

static lp_status bt_read(khb *b, const char *dir, lp_error *err)
{
    (void)b;
    return lp_error_set(err, LP_ERR_UNSUPPORTED,
                        "'%s': built without libbabeltrace2 (libbabeltrace2-dev): LONGPOLE_CTF=babeltrace is not "
                        "available", dir);
}

#define HAVE_BT 0

#endif

int lp_ktrace_have_ctf(void) { return 1; }
int lp_ktrace_have_babeltrace(void) { return HAVE_BT; }

lp_status lp_kctf_read(khb *b, const char *dir, lp_error *err)
{
    const char *mode = getenv("LONGPOLE_CTF");
    if (mode && strcmp(mode, "babeltrace") == 0)
        return bt_read(b, dir, err);
    int at_meta = 0;
    lp_status st = lp_kctf_direct_read(b, dir, &at_meta, err);
    if (!st || !at_meta || !HAVE_BT || (mode && strcmp(mode, "direct") == 0) || st == LP_ERR_NOMEM)
        return st;
    lp_diags_report(b->diags, LP_SEV_NOTE, LP_RULE_IMPORT, dir, 0,
                    "the direct CTF decoder cannot read this metadata (%s): read through libbabeltrace2", err->msg);
    lp_error_clear(err);
    b->name = LP_STR_NONE;
    return bt_read(b, dir, err);
}
