/* span.c: the span table of span.h: adding spans as importers read them, and
 * lp_spans_finish(), which groups them by trace and resolves each trace's tree.
 *
 * Tuned for millions of traces of tens of spans: spans are appended to columns;
 * finishing groups them with a counting sort by trace and then works trace by trace
 * with a map of span ids (the library's hash table, base/hashmap.h, reset to each
 * trace's size) that stays in cache, so each step is O(n) overall. Trace ids are
 * found through another. Temporary memory: about 13 bytes per span, plus the id map
 * of the largest trace.
 *
 * The rules (span.h, docs/formats/spans.md): spans that share an id in a trace are
 * resolved as a group, ordered as Zipkin orders them (not shared before shared, clients
 * first): parts of one span are merged (formats that send spans in parts: the same
 * shared flag and compatible service and kind, zipkin2.internal.Trace.merge); then
 * the SERVER half of a shared RPC span (kind SERVER or flag shared) becomes the child
 * of its CLIENT half and takes over the id for the children; any other span of the
 * group is a duplicate, dropped and reported. A
 * parent id not found in the trace makes the span an orphan (a root of its own); a
 * parent link that closes a cycle is dropped; spans without a timestamp or duration
 * get them from their children (a span without any time and without timed children is
 * dropped); the root of a trace is a span without parent reference (the earliest, the
 * longest on ties, then the smaller id), else the earliest orphan (same ties).
 */
#include "longpole/model/span.h"
#include "longpole/base/alloc.h"
#include "base/hashmap.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

static lp_status nomem(lp_error *err) { return lp_error_set(err, LP_ERR_NOMEM, "out of memory"); }

void lp_spans_init(lp_spans *sp, lp_diags *diags)
{
    memset(sp, 0, sizeof *sp);
    sp->diags = diags;
    lp_strtab_init(&sp->strs);
}

void lp_spans_release(lp_spans *sp)
{
    lp_strtab_release(&sp->strs);
    lp_free(sp->trace);
    lp_free(sp->id);
    lp_free(sp->pid);
    lp_free(sp->idtext);
    lp_free(sp->service);
    lp_free(sp->op);
    lp_free(sp->start);
    lp_free(sp->dur);
    lp_free(sp->kind);
    lp_free(sp->flags);
    lp_free(sp->off);
    lp_free(sp->line);
    lp_free(sp->src);
    lp_free(sp->trace_id);
    lp_free(sp->trace_text);
    if (sp->tmap)
        lp_hmap32_release(sp->tmap);
    lp_free(sp->tmap);
    lp_free(sp->refs);
    for (uint16_t i = 0; i < sp->nfiles; i++)
        lp_free(sp->files[i]);
    lp_free(sp->files);
    lp_free(sp->order);
    lp_free(sp->tfirst);
    lp_free(sp->root);
    lp_free(sp->parent);
    lp_free(sp->kfirst);
    lp_free(sp->kids);
    memset(sp, 0, sizeof *sp);
}

lp_status lp_spans_source(lp_spans *sp, const char *name, lp_error *err)
{
    for (uint16_t i = 0; i < sp->nfiles; i++)
        if (strcmp(sp->files[i], name) == 0) {
            sp->cursrc = i;
            return LP_OK;
        }
    if (sp->nfiles == UINT16_MAX)
        return lp_error_set(err, LP_ERR_LIMIT, "too many input files (at most %u)", UINT16_MAX);
    char **f = lp_reallocarray(sp->files, (size_t)sp->nfiles + 1, sizeof *f);
    if (!f)
        return nomem(err);
    sp->files = f;
    if (!(f[sp->nfiles] = lp_strndup(name, strlen(name))))
        return nomem(err);
    sp->cursrc = sp->nfiles++;
    return LP_OK;
}

const char *lp_spans_file(const lp_spans *sp, uint32_t span)
{
    return sp->nfiles ? sp->files[sp->src[span]] : NULL;
}

void lp_spans_report(lp_spans *sp, lp_severity sev, uint64_t off, uint64_t line, const char *fmt, ...)
{
    if (!sp->diags)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lp_diags_report(sp->diags, sev, LP_RULE_IMPORT, sp->nfiles ? sp->files[sp->cursrc] : NULL, line, "byte %llu: %s",
                    (unsigned long long)off, msg);
}

/* A problem of span i found while finishing (its own file and position). */
static void report_span(lp_spans *sp, uint32_t i, lp_severity sev, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report_span(lp_spans *sp, uint32_t i, lp_severity sev, const char *fmt, ...)
{
    if (!sp->diags)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lp_diags_report(sp->diags, sev, LP_RULE_IMPORT, lp_spans_file(sp, i), sp->line[i], "byte %llu: %s",
                    (unsigned long long)sp->off[i], msg);
}

/* ---- names and ids ---------------------------------------------------------------- */

static const int8_t hexv[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
    ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static int all_hex(const char *s, size_t n)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!hexv[(unsigned char)s[i]])
            return 0;
    return 1;
}

lp_str lp_spans_name(lp_spans *sp, const char *s, size_t n)
{
    lp_str id;
    if (lp_strtab_intern(&sp->strs, s, n, &id))
        return LP_STR_NONE;
    return id;
}

lp_status lp_spans_trace(lp_spans *sp, const char *s, size_t n, uint32_t *trace, lp_error *err)
{
    char norm[64];
    const char *orig = s;
    size_t norig = n;
    if (all_hex(s, n) && n <= sizeof norm) {
        size_t i = 0;
        while (i + 1 < n && s[i] == '0')
            i++;
        size_t k = 0;
        for (; i < n; i++)
            norm[k++] = (char)(s[i] | 0x20);
        s = norm;
        n = k;
    }
    lp_str id;
    if (lp_strtab_intern(&sp->strs, s, n, &id))
        return nomem(err);
    if (!sp->tmap && !(sp->tmap = lp_calloc(1, sizeof *sp->tmap))) /* zeroed: an empty table */
        return nomem(err);
    if (lp_hmap32_get(sp->tmap, id, trace))
        return LP_OK;
    if (sp->ntraces >= LP_SPAN_NONE - 1)
        return lp_error_set(err, LP_ERR_LIMIT, "more than %u traces", LP_SPAN_NONE - 2);
    if (lp_hmap32_reserve(sp->tmap, sp->ntraces + 1, NULL))
        return nomem(err);
    lp_str text = id;
    if ((orig != s || norig != n) && lp_strtab_intern(&sp->strs, orig, norig, &text))
        return nomem(err);
    if (sp->ntraces == sp->captraces) {
        size_t ncap = sp->captraces < 64 ? 64 : sp->captraces * 2;
        lp_str *a = lp_reallocarray(sp->trace_id, ncap, sizeof *a);
        if (!a)
            return nomem(err);
        sp->trace_id = a;
        lp_str *b = lp_reallocarray(sp->trace_text, ncap, sizeof *b);
        if (!b)
            return nomem(err);
        sp->trace_text = b;
        sp->captraces = ncap;
    }
    uint32_t t = (uint32_t)sp->ntraces++;
    sp->trace_id[t] = id;
    sp->trace_text[t] = text;
    lp_hmap32_put(sp->tmap, id, t, NULL); /* cannot fail: room was reserved */
    *trace = t;
    return LP_OK;
}

int lp_spans_id(lp_spans *sp, const char *s, size_t n, uint64_t *id, lp_str *text)
{
    if (!n)
        return -1;
    size_t i = 0;
    while (i + 1 < n && s[i] == '0')
        i++;
    if (n - i <= 16) {
        uint64_t v = 0;
        size_t k = i;
        for (; k < n; k++) {
            int d = hexv[(unsigned char)s[k]];
            if (!d)
                break;
            v = v << 4 | (uint64_t)(d - 1);
        }
        if (k == n) {
            *id = v;
            *text = LP_STR_NONE;
            return 0;
        }
    }
    *id = XXH3_64bits(s, n);
    if (lp_strtab_intern(&sp->strs, s, n, text))
        *text = LP_STR_EMPTY; /* out of memory: the id still works, only its text is lost */
    return 0;
}

/* ---- adding ------------------------------------------------------------------------- */

static int grow(lp_spans *sp)
{
    size_t ncap = sp->cap < 1024 ? 1024 : sp->cap + sp->cap / 2;
#define G(col)                                                      \
    do {                                                            \
        void *p_ = lp_reallocarray(col, ncap, sizeof *(col));       \
        if (!p_)                                                    \
            return -1;                                              \
        col = p_;                                                   \
    } while (0)
    G(sp->trace);
    G(sp->id);
    G(sp->pid);
    G(sp->service);
    G(sp->op);
    G(sp->start);
    G(sp->dur);
    G(sp->kind);
    G(sp->flags);
    G(sp->off);
    G(sp->line);
    G(sp->src);
    if (sp->idtext)
        G(sp->idtext);
#undef G
    sp->cap = ncap;
    return 0;
}

lp_status lp_spans_add(lp_spans *sp, const lp_span_rec *r, lp_error *err)
{
    if (sp->finished)
        return lp_error_set(err, LP_ERR_ARG, "span table already finished");
    if (sp->n >= LP_SPAN_NONE - 1)
        return lp_error_set(err, LP_ERR_LIMIT, "more than %u spans", LP_SPAN_NONE - 2);
    if (sp->n == sp->cap && grow(sp))
        return nomem(err);
    if (r->idtext != LP_STR_NONE && !sp->idtext) {
        sp->idtext = lp_malloc(sp->cap * sizeof *sp->idtext);
        if (!sp->idtext)
            return nomem(err);
        for (size_t k = 0; k < sp->n; k++)
            sp->idtext[k] = LP_STR_NONE;
    }
    size_t i = sp->n++;
    sp->trace[i] = r->trace;
    sp->id[i] = r->id;
    sp->pid[i] = r->pid;
    sp->service[i] = r->service;
    sp->op[i] = r->op;
    sp->start[i] = r->start;
    sp->dur[i] = r->dur;
    sp->kind[i] = r->kind;
    sp->flags[i] = (uint16_t)((r->flags & ~(LP_SPAN_DROPPED | LP_SPAN_ORPHAN | LP_SPAN_IDTEXT | LP_SPAN_MERGED)) |
                              (r->idtext != LP_STR_NONE ? LP_SPAN_IDTEXT : 0));
    sp->off[i] = r->off;
    sp->line[i] = r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line;
    sp->src[i] = sp->cursrc;
    if (sp->idtext)
        sp->idtext[i] = r->idtext;
    return LP_OK;
}

lp_status lp_spans_add_ref(lp_spans *sp, uint32_t trace, uint64_t id, lp_span_ref_type type, lp_error *err)
{
    if (!sp->n)
        return lp_error_set(err, LP_ERR_ARG, "a reference before any span");
    if (sp->nrefs == sp->caprefs) {
        void *p = sp->refs;
        if (lp_grow(&p, &sp->caprefs, sp->nrefs + 1, sizeof(lp_span_ref)))
            return nomem(err);
        sp->refs = p;
    }
    sp->refs[sp->nrefs++] = (lp_span_ref){(uint32_t)sp->n - 1, trace, id, LP_SPAN_NONE, (uint8_t)type};
    return LP_OK;
}

/* ---- names for output ----------------------------------------------------------------- */

static const char *const kind_names[] = {"unspecified", "internal", "server", "client", "producer", "consumer"};

const char *lp_spans_kind_name(lp_span_kind k) { return (unsigned)k <= LP_SPAN_CONSUMER ? kind_names[k] : "?"; }

const char *lp_spans_idstr(const lp_spans *sp, uint32_t i, char *buf, size_t size)
{
    const char *suffix = (sp->flags[i] & LP_SPAN_SHARED) ? ":server" : "";
    if ((sp->flags[i] & LP_SPAN_IDTEXT) && sp->idtext && sp->idtext[i] != LP_STR_NONE)
        snprintf(buf, size, "%s%s", lp_strtab_get(&sp->strs, sp->idtext[i]), suffix);
    else
        snprintf(buf, size, "%016llx%s", (unsigned long long)sp->id[i], suffix);
    return buf;
}

/* ---- finishing ---------------------------------------------------------------------------- */

/* The per-trace id map (span id -> the span the id stands for) is the library's hash
 * table, reset to the size of each trace. */
static uint32_t map_find(const lp_hmap *m, uint64_t id)
{
    uint64_t v;
    return lp_hmap_get(m, id, &v) ? (uint32_t)v : LP_SPAN_NONE;
}

static const char *tid(const lp_spans *sp, uint32_t i) { return lp_spans_trace_text(sp, sp->trace[i]); }

/* A "pure part": a span part that carries no kind and no time, only names (Zipkin
 * reporters send such parts late). */
static int pure_part(const lp_spans *sp, uint32_t i)
{
    return !sp->kind[i] && (sp->flags[i] & LP_SPAN_NO_START);
}

/* Zipkin's rule for a span sent in parts (zipkin2 Trace.merge): the same id, the same
 * shared flag, and services that agree or are unknown in one of them; kinds must
 * agree too, and a pure part merges whatever its shared flag. The part that carries
 * the times survives, filled with what only the other had; the other is dropped.
 * Returns the survivor, or LP_SPAN_NONE if x and y are not parts of one span. */
static uint32_t merge_parts(lp_spans *sp, uint32_t x, uint32_t y)
{
    uint16_t fx = sp->flags[x], fy = sp->flags[y];
    if (!(fx & fy & LP_SPAN_PARTS))
        return LP_SPAN_NONE;
    if (((fx ^ fy) & LP_SPAN_SHARED) && !pure_part(sp, x) && !pure_part(sp, y))
        return LP_SPAN_NONE;
    if (sp->service[x] != sp->service[y] && sp->service[x] != LP_STR_EMPTY && sp->service[y] != LP_STR_EMPTY)
        return LP_SPAN_NONE;
    if (sp->kind[x] != sp->kind[y] && sp->kind[x] && sp->kind[y])
        return LP_SPAN_NONE;
    uint32_t keep = x, drop = y;
    if (pure_part(sp, x) && !pure_part(sp, y)) {
        keep = y;
        drop = x;
    }
    uint16_t fk = sp->flags[keep], fd = sp->flags[drop];
    if ((fk & LP_SPAN_NO_START) && !(fd & LP_SPAN_NO_START)) {
        sp->start[keep] = sp->start[drop];
        sp->flags[keep] &= (uint16_t)~LP_SPAN_NO_START;
    }
    if ((sp->flags[keep] & LP_SPAN_NO_DURATION) && !(fd & LP_SPAN_NO_DURATION)) {
        sp->dur[keep] = sp->dur[drop];
        sp->flags[keep] &= (uint16_t)~LP_SPAN_NO_DURATION;
    }
    if (sp->op[keep] == LP_STR_EMPTY || strcmp(lp_strtab_get(&sp->strs, sp->op[keep]), "unknown") == 0)
        sp->op[keep] = sp->op[drop];
    if (!sp->kind[keep])
        sp->kind[keep] = sp->kind[drop];
    if (sp->service[keep] == LP_STR_EMPTY)
        sp->service[keep] = sp->service[drop];
    if (!(sp->flags[keep] & LP_SPAN_HAS_PARENT) && (fd & LP_SPAN_HAS_PARENT)) {
        sp->pid[keep] = sp->pid[drop];
        sp->flags[keep] |= LP_SPAN_HAS_PARENT;
    }
    sp->flags[drop] |= LP_SPAN_DROPPED | LP_SPAN_MERGED;
    sp->nmerged++;
    return keep;
}

/* Order within a group of spans with one id, as Zipkin's: not shared before shared,
 * clients first among those; then input order. */
static int group_key(const lp_spans *sp, uint32_t i)
{
    if (sp->flags[i] & LP_SPAN_SHARED)
        return 2;
    return sp->kind[i] == LP_SPAN_CLIENT ? 0 : 1;
}

/* Resolve a group of spans sharing one id (g[0..n), input order): merge parts, pair
 * the two halves of a shared RPC span, drop the rest as duplicates. Returns the span
 * the id stands for (the server half when paired). */
static uint32_t resolve_group(lp_spans *sp, uint32_t *g, size_t n)
{
    char b1[80];
    for (size_t i = 1; i < n; i++) /* stable insertion sort by group_key */
        for (size_t j = i; j > 0 && group_key(sp, g[j]) < group_key(sp, g[j - 1]); j--) {
            uint32_t t = g[j];
            g[j] = g[j - 1];
            g[j - 1] = t;
        }
    size_t k = 0; /* kept: g[0..k) */
    for (size_t i = 0; i < n; i++) {
        uint32_t s = LP_SPAN_NONE;
        size_t j = 0;
        for (; j < k && s == LP_SPAN_NONE; j++)
            s = merge_parts(sp, g[j], g[i]);
        if (s != LP_SPAN_NONE)
            g[j - 1] = s;
        else
            g[k++] = g[i];
    }
    uint32_t client = LP_SPAN_NONE, server = LP_SPAN_NONE;
    for (size_t i = 0; i < k && (client == LP_SPAN_NONE || server == LP_SPAN_NONE); i++) {
        uint32_t x = g[i];
        int srv = (sp->flags[x] & LP_SPAN_SHARED) || sp->kind[x] == LP_SPAN_SERVER;
        if (srv && server == LP_SPAN_NONE && client != LP_SPAN_NONE)
            server = x;
        else if (!srv && client == LP_SPAN_NONE)
            client = x;
    }
    uint32_t head = k ? g[0] : LP_SPAN_NONE;
    if (client != LP_SPAN_NONE && server != LP_SPAN_NONE) {
        sp->flags[server] |= LP_SPAN_SHARED;
        sp->parent[server] = client;
        sp->nshared++;
        head = server; /* children of the id hang under the server half */
    }
    uint32_t first = client != LP_SPAN_NONE ? client : head;
    for (size_t i = 0; i < k; i++) {
        uint32_t x = g[i];
        if (x == client || x == server || x == head)
            continue;
        sp->flags[x] |= LP_SPAN_DROPPED;
        sp->ndup++;
        if (sp->src[x] == sp->src[first])
            report_span(sp, x, LP_SEV_ERROR, "duplicate span id %s in trace %s (first at line %u); span dropped",
                        lp_spans_idstr(sp, x, b1, sizeof b1), tid(sp, x), sp->line[first]);
        else
            report_span(sp, x, LP_SEV_ERROR, "duplicate span id %s in trace %s (first in %s, line %u); span dropped",
                        lp_spans_idstr(sp, x, b1, sizeof b1), tid(sp, x), lp_spans_file(sp, first), sp->line[first]);
    }
    return head;
}

/* Build the map of trace t and resolve its parents (and the references into it). */
static lp_status resolve_trace(lp_spans *sp, uint32_t t, lp_hmap *m, uint32_t *dnext, uint32_t *dtail,
                               const uint32_t *refs, size_t nrefs, lp_error *err)
{
    uint64_t lo = sp->tfirst[t], hi = sp->tfirst[t + 1];
    if (lp_hmap_reset(m, hi - lo, NULL)) /* room for every span: insertions below cannot fail */
        return nomem(err);
    char b1[80], b2[80];
    /* the map holds the first span of each id; later ones are chained behind it
     * (dnext, dtail: written only for ids seen twice) and resolved group by group */
    uint32_t *heads = NULL;
    size_t nheads = 0, capheads = 0;
    for (uint64_t k = lo; k < hi; k++) {
        uint32_t i = sp->order[k];
        if (sp->flags[i] & LP_SPAN_DROPPED)
            continue;
        int added;
        uint32_t h = (uint32_t)lp_hmap_get_or_put(m, sp->id[i], i, &added);
        if (added)
            continue;
        {
            /* first repeat of this id: start its chain */
            int started = 0;
            for (size_t q = 0; q < nheads; q++)
                if (heads[q] == h) {
                    started = 1;
                    break;
                }
            if (!started) {
                void *p = heads;
                if (lp_grow(&p, &capheads, nheads + 1, sizeof *heads)) {
                    lp_free(heads);
                    return nomem(err);
                }
                heads = p;
                heads[nheads++] = h;
                dnext[h] = LP_SPAN_NONE;
                dtail[h] = h;
            }
        }
        dnext[i] = LP_SPAN_NONE;
        dnext[dtail[h]] = i;
        dtail[h] = i;
    }
    if (nheads) {
        uint32_t *g = NULL;
        size_t capg = 0;
        for (size_t q = 0; q < nheads; q++) {
            uint32_t h0 = heads[q];
            size_t ng = 0;
            for (uint32_t x = h0; x != LP_SPAN_NONE; x = dnext[x]) {
                if (ng == capg) {
                    void *p = g;
                    if (lp_grow(&p, &capg, ng + 1, sizeof *g)) {
                        lp_free(g);
                        lp_free(heads);
                        return nomem(err);
                    }
                    g = p;
                }
                g[ng++] = x;
            }
            for (size_t a2 = 1; a2 < ng; a2++) /* input order */
                for (size_t r = a2; r > 0 && g[r] < g[r - 1]; r--) {
                    uint32_t t2 = g[r];
                    g[r] = g[r - 1];
                    g[r - 1] = t2;
                }
            uint32_t h = resolve_group(sp, g, ng);
            lp_hmap_put(m, sp->id[h0], h, NULL); /* replaces h0's entry */
        }
        lp_free(g);
        lp_free(heads);
    }
    for (uint64_t k = lo; k < hi; k++) {
        uint32_t i = sp->order[k];
        if ((sp->flags[i] & LP_SPAN_DROPPED) || sp->parent[i] != LP_SPAN_NONE || !(sp->flags[i] & LP_SPAN_HAS_PARENT))
            continue;
        uint32_t p = map_find(m, sp->pid[i]);
        if (p == LP_SPAN_NONE) {
            sp->flags[i] |= LP_SPAN_ORPHAN;
            sp->norphan++;
            snprintf(b2, sizeof b2, "%016llx", (unsigned long long)sp->pid[i]);
            report_span(sp, i, LP_SEV_WARNING,
                        "span %s (%s %s): its parent %s is not in trace %s; the span is taken as a root",
                        lp_spans_idstr(sp, i, b1, sizeof b1), lp_spans_str(sp, sp->service[i]),
                        lp_spans_str(sp, sp->op[i]), b2, tid(sp, i));
        } else if (p == i) {
            sp->flags[i] |= LP_SPAN_ORPHAN;
            sp->ncycle++;
            report_span(sp, i, LP_SEV_ERROR, "span %s is its own parent; the link is dropped",
                        lp_spans_idstr(sp, i, b1, sizeof b1));
        } else {
            sp->parent[i] = p;
        }
    }
    /* references whose target is in this trace */
    for (size_t k = 0; k < nrefs; k++) {
        lp_span_ref *r = &sp->refs[refs[k]];
        uint32_t x = map_find(m, r->id);
        r->target = x != r->span ? x : LP_SPAN_NONE;
    }
    return LP_OK;
}

/* Break parent cycles of trace t: walk up from every span; a walk that comes back to
 * a span of the current walk has found a cycle, and the link that closes it goes. */
static void break_cycles(lp_spans *sp, uint32_t t, uint8_t *color, uint32_t *stack)
{
    char b1[80], b2[80];
    for (uint64_t k = sp->tfirst[t]; k < sp->tfirst[t + 1]; k++) {
        uint32_t x = sp->order[k];
        size_t top = 0;
        while (x != LP_SPAN_NONE && color[x] == 0) {
            color[x] = 1;
            stack[top++] = x;
            x = sp->parent[x];
        }
        if (x != LP_SPAN_NONE && color[x] == 1) {
            uint32_t last = stack[top - 1];
            sp->ncycle++;
            report_span(sp, last, LP_SEV_ERROR, "parent cycle in trace %s: span %s's parent %s is its descendant; the link is dropped",
                        tid(sp, last), lp_spans_idstr(sp, last, b1, sizeof b1), lp_spans_idstr(sp, x, b2, sizeof b2));
            sp->parent[last] = LP_SPAN_NONE;
            sp->flags[last] |= LP_SPAN_ORPHAN;
        }
        while (top)
            color[stack[--top]] = 2;
    }
}

static lp_status build_kids(lp_spans *sp, lp_error *err)
{
    size_t n = sp->n;
    lp_free(sp->kfirst);
    lp_free(sp->kids);
    sp->kfirst = lp_calloc(n + 1, sizeof *sp->kfirst);
    sp->kids = lp_malloc((n ? n : 1) * sizeof *sp->kids);
    if (!sp->kfirst || !sp->kids)
        return nomem(err);
    for (size_t i = 0; i < n; i++)
        if (sp->parent[i] != LP_SPAN_NONE && !(sp->flags[i] & LP_SPAN_DROPPED))
            sp->kfirst[sp->parent[i] + 1]++;
    for (size_t i = 0; i < n; i++)
        sp->kfirst[i + 1] += sp->kfirst[i];
    uint32_t *pos = lp_malloc((n ? n : 1) * sizeof *pos);
    if (!pos)
        return nomem(err);
    memcpy(pos, sp->kfirst, n * sizeof *pos);
    /* input order within a parent: visit spans by trace in input order */
    for (size_t k = 0; k < n; k++) {
        uint32_t i = sp->order[k];
        if (sp->parent[i] != LP_SPAN_NONE && !(sp->flags[i] & LP_SPAN_DROPPED))
            sp->kids[pos[sp->parent[i]]++] = i;
    }
    lp_free(pos);
    return LP_OK;
}

/* Spans without start or duration get them from their children, bottom-up. Returns
 * the number of spans dropped because nothing places them. */
static size_t infer_times(lp_spans *sp, uint32_t *stack, uint8_t *state)
{
    size_t dropped = 0;
    char b1[80];
    memset(state, 0, sp->n);
    for (size_t r = 0; r < sp->n; r++) {
        if (!(sp->flags[r] & (LP_SPAN_NO_START | LP_SPAN_NO_DURATION)) || (sp->flags[r] & LP_SPAN_DROPPED) || state[r])
            continue;
        /* post-order over the subtree of r (iterative) */
        size_t top = 0;
        stack[top++] = (uint32_t)r;
        while (top) {
            uint32_t x = stack[top - 1];
            if (state[x] == 0) {
                state[x] = 1;
                for (uint32_t c = sp->kfirst[x]; c < sp->kfirst[x + 1]; c++)
                    if (!state[sp->kids[c]])
                        stack[top++] = sp->kids[c];
                continue;
            }
            top--;
            if (state[x] == 2)
                continue;
            state[x] = 2;
            uint16_t f = sp->flags[x];
            if (!(f & (LP_SPAN_NO_START | LP_SPAN_NO_DURATION)) || (f & LP_SPAN_DROPPED))
                continue;
            int64_t lo = INT64_MAX, hi = INT64_MIN;
            for (uint32_t c = sp->kfirst[x]; c < sp->kfirst[x + 1]; c++) {
                uint32_t y = sp->kids[c];
                if (sp->flags[y] & (LP_SPAN_DROPPED | LP_SPAN_NO_START))
                    continue;
                lo = sp->start[y] < lo ? sp->start[y] : lo;
                hi = lp_spans_end(sp, y) > hi ? lp_spans_end(sp, y) : hi;
            }
            if (f & LP_SPAN_NO_START) {
                if (lo > hi) {
                    sp->flags[x] |= LP_SPAN_DROPPED;
                    dropped++;
                    report_span(sp, x, LP_SEV_WARNING,
                                "span %s (%s %s) has no timestamp and no timed children; span dropped",
                                lp_spans_idstr(sp, x, b1, sizeof b1), lp_spans_str(sp, sp->service[x]),
                                lp_spans_str(sp, sp->op[x]));
                    continue;
                }
                sp->start[x] = lo;
                sp->dur[x] = hi - lo;
            } else {
                int64_t end = sp->start[x];
                if (hi > end)
                    end = hi;
                sp->dur[x] = end - sp->start[x];
            }
            sp->flags[x] &= (uint16_t)~LP_SPAN_NO_START;
            sp->nnotime++;
        }
    }
    return dropped;
}

/* The spans grouped by trace (stable counting sort: order, tfirst); no parents yet. */
static lp_status group_by_trace(lp_spans *sp, lp_error *err)
{
    size_t n = sp->n, T = sp->ntraces;
    for (size_t i = 0; i < n; i++)
        sp->tfirst[sp->trace[i] + 1]++;
    for (size_t t = 0; t < T; t++)
        sp->tfirst[t + 1] += sp->tfirst[t];
    uint64_t *pos = lp_malloc((T ? T : 1) * sizeof *pos);
    if (!pos)
        return nomem(err);
    memcpy(pos, sp->tfirst, T * sizeof *pos);
    for (size_t i = 0; i < n; i++)
        sp->order[pos[sp->trace[i]]++] = (uint32_t)i;
    lp_free(pos);
    for (size_t i = 0; i < n; i++)
        sp->parent[i] = LP_SPAN_NONE;
    return LP_OK;
}

/* The references grouped by the trace of their target (rorder[rfirst[t] ..
 * rfirst[t + 1]), to free even on error); their targets unresolved. */
static lp_status group_refs(lp_spans *sp, size_t **prfirst, uint32_t **prorder, lp_error *err)
{
    size_t T = sp->ntraces;
    size_t *rfirst = *prfirst = lp_calloc(T + 1, sizeof *rfirst);
    uint32_t *rorder = *prorder = lp_malloc((sp->nrefs ? sp->nrefs : 1) * sizeof *rorder);
    if (!rfirst || !rorder)
        return nomem(err);
    for (size_t k = 0; k < sp->nrefs; k++) {
        sp->refs[k].target = LP_SPAN_NONE;
        if (sp->refs[k].trace < T)
            rfirst[sp->refs[k].trace + 1]++;
    }
    for (size_t t = 0; t < T; t++)
        rfirst[t + 1] += rfirst[t];
    size_t *pos = lp_malloc((T ? T : 1) * sizeof *pos);
    if (!pos)
        return nomem(err);
    memcpy(pos, rfirst, T * sizeof *pos);
    for (size_t k = 0; k < sp->nrefs; k++)
        if (sp->refs[k].trace < T)
            rorder[pos[sp->refs[k].trace]++] = (uint32_t)k;
    lp_free(pos);
    return LP_OK;
}

/* Spans without a start or a duration placed from their children (children lists
 * rebuilt if some had to be dropped). */
static lp_status place_untimed(lp_spans *sp, uint32_t *stack, uint8_t *color, lp_error *err)
{
    size_t n = sp->n;
    lp_status st = LP_OK;
    int any = 0;
    for (size_t i = 0; i < n && !any; i++)
        any = (sp->flags[i] & (LP_SPAN_NO_START | LP_SPAN_NO_DURATION)) && !(sp->flags[i] & LP_SPAN_DROPPED);
    if (any) {
        size_t dropped = infer_times(sp, stack, color);
        if (dropped && (st = build_kids(sp, err)))
            return st;
        if (sp->nnotime && sp->diags)
            lp_diags_report(sp->diags, LP_SEV_NOTE, LP_RULE_IMPORT, sp->nfiles == 1 ? sp->files[0] : NULL, 0,
                            "%llu span(s) without a timestamp or duration were placed from their children",
                            (unsigned long long)sp->nnotime);
    }
    return st;
}

/* Each trace's root: a span without a parent reference before an orphan, then the
 * earliest, the longest, the lowest id; the other parentless spans counted. */
static void pick_roots(lp_spans *sp)
{
    size_t T = sp->ntraces;
    for (uint32_t t = 0; t < T; t++) {
        uint32_t best = LP_SPAN_NONE;
        int bestkind = 0; /* 2: no parent reference, 1: orphan */
        uint32_t roots = 0;
        for (uint64_t k = sp->tfirst[t]; k < sp->tfirst[t + 1]; k++) {
            uint32_t i = sp->order[k];
            if ((sp->flags[i] & LP_SPAN_DROPPED) || sp->parent[i] != LP_SPAN_NONE)
                continue;
            roots++;
            int kind = (sp->flags[i] & (LP_SPAN_ORPHAN | LP_SPAN_HAS_PARENT)) ? 1 : 2;
            if (best == LP_SPAN_NONE || kind > bestkind ||
                (kind == bestkind &&
                 (sp->start[i] < sp->start[best] ||
                  (sp->start[i] == sp->start[best] &&
                   (sp->dur[i] > sp->dur[best] || (sp->dur[i] == sp->dur[best] && sp->id[i] < sp->id[best])))))) {
                best = i;
                bestkind = kind;
            }
        }
        sp->root[t] = best;
        if (roots > 1)
            sp->nroots_extra += roots - 1;
    }
}

lp_status lp_spans_finish(lp_spans *sp, lp_error *err)
{
    if (sp->finished)
        return LP_OK;
    size_t n = sp->n, T = sp->ntraces;
    lp_status st = LP_OK;
    uint32_t *stack = NULL, *rorder = NULL, *dnext = NULL, *dtail = NULL;
    size_t *rfirst = NULL;
    uint8_t *color = NULL;
    lp_hmap m;
    lp_hmap_init(&m, 0, NULL);
    /* (a finish that failed for memory may be retried: start afresh) */
    lp_free(sp->order);
    lp_free(sp->tfirst);
    lp_free(sp->root);
    lp_free(sp->parent);
    lp_free(sp->kfirst);
    lp_free(sp->kids);
    sp->kfirst = NULL;
    sp->kids = NULL;
    sp->order = lp_malloc((n ? n : 1) * sizeof *sp->order);
    sp->tfirst = lp_calloc(T + 1, sizeof *sp->tfirst);
    sp->root = lp_malloc((T ? T : 1) * sizeof *sp->root);
    sp->parent = lp_malloc((n ? n : 1) * sizeof *sp->parent);
    stack = lp_malloc((n ? n : 1) * sizeof *stack);
    color = lp_calloc(n ? n : 1, 1);
    dnext = lp_malloc((n ? n : 1) * sizeof *dnext);
    dtail = lp_malloc((n ? n : 1) * sizeof *dtail);
    if (!sp->order || !sp->tfirst || !sp->root || !sp->parent || !stack || !color || !dnext || !dtail) {
        st = nomem(err);
        goto out;
    }
    if ((st = group_by_trace(sp, err)) || (st = group_refs(sp, &rfirst, &rorder, err)))
        goto out;
    for (uint32_t t = 0; t < T; t++) {
        if ((st = resolve_trace(sp, t, &m, dnext, dtail, rorder + rfirst[t], rfirst[t + 1] - rfirst[t], err)))
            goto out;
        break_cycles(sp, t, color, stack);
    }
    if ((st = build_kids(sp, err)))
        goto out;
    if ((st = place_untimed(sp, stack, color, err)))
        goto out;
    pick_roots(sp);
    if (sp->nmerged && sp->diags)
        lp_diags_report(sp->diags, LP_SEV_NOTE, LP_RULE_IMPORT, sp->nfiles == 1 ? sp->files[0] : NULL, 0,
                        "%llu span part(s) with the id of an earlier span were merged into it (Zipkin spans sent in parts)",
                        (unsigned long long)sp->nmerged);
    sp->nkept = 0;
    for (size_t i = 0; i < n; i++)
        if (!(sp->flags[i] & LP_SPAN_DROPPED))
            sp->nkept++;
    sp->finished = 1;
out:
    lp_hmap_release(&m);
    lp_free(rfirst);
    lp_free(rorder);
    lp_free(dnext);
    lp_free(dtail);
    lp_free(stack);
    lp_free(color);
    return st;
}
