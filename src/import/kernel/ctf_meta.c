/* ctf_meta.c: the TSDL (CTF 1.8 metadata) subset LTTng writes, into the type trees of
 * ctf_meta.h, for the direct packet decoder (ctf_pkt.c).
 *
 * Subset: typealias / typedef; integer {size, align, signed, encoding, base, byte_order,
 * map = clock.NAME.value}; enum [: int] {LABEL [= v | = lo ... hi], ...}; string; struct
 * [NAME] {...} [align(N)]; variant [NAME] <tag> {...}; arrays NAME[N] and sequences
 * NAME[len] (several dimensions); blocks trace {byte_order, packet.header, ...}, env
 * {hostname, ...}, clock {name, freq, offset_s, offset, ...}, stream {id, packet.context,
 * event.header, event.context}, event {name, id, stream_id, context, fields}; callsite
 * blocks are skipped. Anything else is "outside the subset" (the caller falls back to
 * libbabeltrace2); text that is not TSDL at all is "malformed". Both name the line.
 *
 * Invariants: every node is on m->all (freed by ctf_meta_release, whatever failed); a
 * sequence length or variant tag is resolved when it is declared, against the members
 * already declared in the enclosing structs (innermost first, by the last component of a
 * dotted path), so the decoder reads them from a slot; a variant's tag must be an enum
 * and each of the enum's labels selects the option of that name (or none).
 */
#include "import/kernel/ctf_meta.h"

#include "longpole/base/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ctfnamed {
    char *name;  /* "struct x", "enum x", "variant x", or an alias ("unsigned long") */
    ctype *t;
} ctfnamed;

enum { TK_EOF = 0, TK_ID, TK_NUM, TK_STR, TK_P };

typedef struct scope {
    ctmember *m;
    uint32_t n;
} scope;

typedef struct lexst {
    const char *s;     /* what is left after the current token */
    uint64_t line;
    int tk;            /* current token */
    const char *tp;    /* its text */
    size_t tn;
    uint64_t num;
} lexst;

typedef struct parser {
    ctfmeta *m;
    const char *end;
    union { /* the lexer's state, saved and restored as a whole (type_spec's lookahead) */
        lexst lx;
        struct {
            const char *s;
            uint64_t line;
            int tk;
            const char *tp;
            size_t tn;
            uint64_t num;
        };
    };
    char *msg;
    size_t msgn;
    int failed, unsupported;
    scope sc[32];      /* structs being declared */
    int nsc;
    int depth;         /* type specifiers being parsed (enum : enum : ... is bounded) */
} parser;

/* ---- errors and lexing ------------------------------------------------------------------ */

static int fail(parser *p, int unsupported, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(parser *p, int unsupported, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    p->failed = 1;
    p->unsupported = unsupported;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg, p->msgn, fmt, ap);
    va_end(ap);
    return -1;
}

static void next(parser *p)
{
    const char *s = p->s;
    for (;;) { /* blanks and comments */
        while (s < p->end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v' || *s == '\0')) {
            p->line += *s == '\n';
            s++;
        }
        if (s + 1 < p->end && s[0] == '/' && s[1] == '*') {
            s += 2;
            while (s + 1 < p->end && !(s[0] == '*' && s[1] == '/'))
                p->line += *s++ == '\n';
            s = s + 1 < p->end ? s + 2 : p->end;
        } else if (s + 1 < p->end && s[0] == '/' && s[1] == '/') {
            while (s < p->end && *s != '\n')
                s++;
        } else
            break;
    }
    p->tp = s;
    if (s >= p->end) {
        p->tk = TK_EOF;
        p->tn = 0;
        p->s = s;
        return;
    }
    char c = *s;
    if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        while (s < p->end && (*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
            s++;
        p->tk = TK_ID;
    } else if (c >= '0' && c <= '9') {
        char *e;
        p->num = strtoull(s, &e, 0); /* decimal, 0x hex, 0 octal */
        s = e > s ? e : s + 1;
        while (s < p->end && (*s == 'u' || *s == 'U' || *s == 'l' || *s == 'L'))
            s++;
        p->tk = TK_NUM;
    } else if (c == '"') {
        s++;
        while (s < p->end && *s != '"' && *s != '\n')
            s += *s == '\\' && s + 1 < p->end ? 2 : 1;
        if (s >= p->end || *s != '"') {
            fail(p, 0, "unterminated string");
            p->tk = TK_EOF;
            p->s = p->end;
            return;
        }
        p->tp++;
        p->tk = TK_STR;
        p->tn = (size_t)(s - p->tp);
        p->s = s + 1;
        return;
    } else {
        p->tk = TK_P;
        if (s + 1 < p->end && s[0] == ':' && s[1] == '=')
            s += 2;
        else if (s + 2 < p->end && s[0] == '.' && s[1] == '.' && s[2] == '.')
            s += 3;
        else
            s++;
    }
    p->tn = (size_t)(s - p->tp);
    p->s = s;
}

static int is(parser *p, const char *w)
{
    return (p->tk == TK_ID || p->tk == TK_P) && strlen(w) == p->tn && memcmp(p->tp, w, p->tn) == 0;
}

static int expect(parser *p, const char *w)
{
    if (!is(p, w))
        return fail(p, 0, "expected '%s', found '%.*s'", w, (int)(p->tn > 40 ? 40 : p->tn), p->tp);
    next(p);
    return 0;
}

static char *tok_dup(parser *p)
{
    char *s = lp_malloc(p->tn + 1);
    if (!s) {
        fail(p, 0, "out of memory");
        return NULL;
    }
    memcpy(s, p->tp, p->tn);
    s[p->tn] = '\0';
    return s;
}

/* A signed number (an optional '-' before it). */
static int number(parser *p, int64_t *v)
{
    int neg = 0;
    if (is(p, "-")) {
        neg = 1;
        next(p);
    }
    if (p->tk != TK_NUM)
        return fail(p, 0, "expected a number, found '%.*s'", (int)(p->tn > 40 ? 40 : p->tn), p->tp);
    *v = (int64_t)(neg ? 0 - p->num : p->num);
    next(p);
    return 0;
}

/* ---- nodes ---------------------------------------------------------------------------- */

static ctype *node(parser *p, int kind)
{
    ctype *t = lp_calloc(1, sizeof *t);
    if (!t) {
        fail(p, 0, "out of memory");
        return NULL;
    }
    t->kind = (uint8_t)kind;
    t->bo = CT_NATIVE;
    t->align = 8;
    t->clock = -1;
    t->refslot = -1;
    t->next = p->m->all;
    p->m->all = t;
    return t;
}

static ctype *named_get(parser *p, const char *name)
{
    for (size_t i = p->m->nnamed; i-- > 0;)
        if (strcmp(p->m->named[i].name, name) == 0)
            return p->m->named[i].t;
    return NULL;
}

static int named_put(parser *p, const char *kw, const char *name, size_t n, ctype *t)
{
    size_t kl = kw ? strlen(kw) + 1 : 0;
    char *s = lp_malloc(kl + n + 1);
    if (!s || lp_grow_at(&p->m->named, &p->m->capnamed, p->m->nnamed + 1, sizeof *p->m->named)) {
        lp_free(s);
        return fail(p, 0, "out of memory");
    }
    if (kw)
        snprintf(s, kl + 1, "%s ", kw);
    memcpy(s + kl, name, n);
    s[kl + n] = '\0';
    p->m->named[p->m->nnamed++] = (ctfnamed){s, t};
    return 0;
}

static ctype *type_spec(parser *p);
static int declarator(parser *p, ctype *base, ctmember *out);

/* ---- integer, enum, string ------------------------------------------------------------- */

static int clock_index(parser *p, const char *name, size_t n)
{
    for (uint32_t i = 0; i < p->m->nclk; i++)
        if (strlen(p->m->clk[i].name) == n && memcmp(p->m->clk[i].name, name, n) == 0)
            return (int)i;
    return fail(p, 0, "map to an undeclared clock '%.*s'", (int)n, name);
}

static int int_attr(parser *p, ctype *t)
{
    char key[32];
    snprintf(key, sizeof key, "%.*s", (int)(p->tn < 31 ? p->tn : 31), p->tp);
    next(p);
    if (expect(p, "="))
        return -1;
    int64_t v = 0;
    if (!strcmp(key, "size") || !strcmp(key, "align")) {
        if (number(p, &v))
            return -1;
        if (v < 1 || v > 64 || (!strcmp(key, "align") && (v & (v - 1))))
            return fail(p, !strcmp(key, "size") && v > 64, "integer %s = %lld is not supported", key, (long long)v);
        if (key[0] == 's')
            t->size = (uint32_t)v;
        else
            t->align = (uint32_t)v;
    } else if (!strcmp(key, "signed")) {
        if (p->tk == TK_NUM)
            t->sign = p->num != 0;
        else if (is(p, "true") || is(p, "false"))
            t->sign = is(p, "true");
        else
            return fail(p, 0, "signed = '%.*s'?", (int)p->tn, p->tp);
        next(p);
    } else if (!strcmp(key, "byte_order")) {
        if (is(p, "le"))
            t->bo = CT_LE;
        else if (is(p, "be") || is(p, "network"))
            t->bo = CT_BE;
        else if (is(p, "native"))
            t->bo = CT_NATIVE;
        else
            return fail(p, 0, "byte_order = '%.*s'?", (int)p->tn, p->tp);
        next(p);
    } else if (!strcmp(key, "encoding")) {
        t->text = is(p, "UTF8") || is(p, "ASCII") || is(p, "utf8") || is(p, "ascii");
        next(p);
    } else if (!strcmp(key, "base")) {
        next(p); /* 2, 8, 10, 16, x, X, d, i, u, o, p, hexadecimal...: display only */
    } else if (!strcmp(key, "map")) {
        /* clock.NAME.value */
        if (!is(p, "clock"))
            return fail(p, 1, "integer map to something other than a clock");
        next(p);
        if (expect(p, "."))
            return -1;
        const char *cn = p->tp;
        size_t cl = p->tn;
        next(p);
        if (expect(p, ".") || !is(p, "value"))
            return fail(p, 1, "integer map = clock.%.*s.<not value>", (int)cl, cn);
        next(p);
        int c = clock_index(p, cn, cl);
        if (c < 0)
            return -1;
        t->clock = c;
    } else
        return fail(p, 1, "integer attribute '%s'", key);
    return expect(p, ";");
}

static ctype *integer(parser *p)
{
    ctype *t = node(p, CT_INT);
    if (!t || expect(p, "{"))
        return NULL;
    t->align = 0;
    while (!p->failed && !is(p, "}")) {
        if (p->tk != TK_ID)
            return fail(p, 0, "integer attribute expected"), NULL;
        if (int_attr(p, t))
            return NULL;
    }
    if (expect(p, "}"))
        return NULL;
    if (!t->size)
        return fail(p, 0, "integer without a size"), NULL;
    if (!t->align)
        t->align = t->size % 8 ? 1 : 8;
    return t;
}

/* enum [NAME] : INT { LABEL [= v [... w]], ... } */
static ctype *enumeration(parser *p)
{
    char *name = NULL;
    ctype *base = NULL;
    if (p->tk == TK_ID) {
        name = tok_dup(p);
        next(p);
        if (!name)
            return NULL;
    }
    if (!is(p, ":") && !is(p, "{")) { /* a reference to a named enum */
        ctype *t = NULL;
        char key[300];
        snprintf(key, sizeof key, "enum %s", name ? name : "");
        if (!(t = named_get(p, key)))
            fail(p, 0, "unknown enum '%s'", name ? name : "");
        lp_free(name);
        return t;
    }
    if (is(p, ":")) {
        next(p);
        base = type_spec(p);
    } else
        base = named_get(p, "int");
    if (!base || base->kind != CT_INT || base->nen) {
        lp_free(name);
        return fail(p, 0, "an enum's base must be an integer"), NULL;
    }
    ctype *t = node(p, CT_INT);
    if (!t || expect(p, "{")) {
        lp_free(name);
        return NULL;
    }
    *t = (ctype){.kind = CT_INT, .bo = base->bo, .sign = base->sign, .size = base->size, .align = base->align,
                 .clock = base->clock, .refslot = -1, .next = t->next};
    int64_t cur = 0;
    size_t cap = 0;
    while (!p->failed && !is(p, "}")) {
        if (p->tk != TK_ID && p->tk != TK_STR)
            break;
        if (lp_grow_at(&t->en, &cap, t->nen + 1, sizeof *t->en)) {
            fail(p, 0, "out of memory");
            break;
        }
        ctenum *e = &t->en[t->nen++];
        e->label = tok_dup(p);
        next(p);
        if (is(p, "=")) {
            next(p);
            if (number(p, &e->lo))
                break;
            e->hi = e->lo;
            if (is(p, "...")) {
                next(p);
                if (number(p, &e->hi))
                    break;
            }
        } else
            e->lo = e->hi = cur;
        cur = e->hi < INT64_MAX ? e->hi + 1 : e->hi;
        if (is(p, ","))
            next(p);
    }
    if (!p->failed && expect(p, "}") == 0 && name)
        named_put(p, "enum", name, strlen(name), t);
    lp_free(name);
    return p->failed ? NULL : t;
}

static ctype *string_type(parser *p)
{
    ctype *t = node(p, CT_STRING);
    if (!t)
        return NULL;
    if (is(p, "{")) { /* string { encoding = UTF8; } */
        next(p);
        while (!p->failed && !is(p, "}") && p->tk != TK_EOF)
            next(p);
        if (expect(p, "}"))
            return NULL;
    }
    return t;
}

/* ---- struct and variant ------------------------------------------------------------------ */

/* Members (struct fields or variant options) up to the closing brace. */
static int members(parser *p, ctype *t, int is_struct)
{
    size_t cap = 0;
    if (p->nsc >= (int)(sizeof p->sc / sizeof p->sc[0]))
        return fail(p, 1, "structures nested too deeply");
    int me = p->nsc++;
    p->sc[me] = (scope){NULL, 0};
    while (!p->failed && !is(p, "}")) {
        if (p->tk == TK_EOF)
            return fail(p, 0, "unexpected end of the metadata in a %s", is_struct ? "struct" : "variant");
        if (is(p, "typealias") || is(p, "typedef"))
            return fail(p, 1, "a type declared inside a struct or variant");
        ctype *base = type_spec(p);
        if (!base)
            return -1;
        for (;;) {
            if (lp_grow_at(&t->m, &cap, t->nm + 1, sizeof *t->m))
                return fail(p, 0, "out of memory");
            p->sc[me].m = t->m;
            ctmember *mb = &t->m[t->nm];
            memset(mb, 0, sizeof *mb);
            mb->slot = -1;
            if (declarator(p, base, mb)) { /* not counted in nm: its name is freed here */
                lp_free(mb->name);
                mb->name = NULL;
                return -1;
            }
            t->nm++;
            p->sc[me] = (scope){t->m, t->nm};
            if (is_struct && mb->t->align > t->align)
                t->align = mb->t->align;
            if (!is(p, ","))
                break;
            next(p);
        }
        if (expect(p, ";"))
            return -1;
    }
    p->nsc--;
    return expect(p, "}");
}

/* the member named `ref` (its last dotted component) among the enclosing structs */
static ctmember *resolve(parser *p, const char *ref)
{
    const char *last = strrchr(ref, '.');
    last = last ? last + 1 : ref;
    for (int i = p->nsc; i-- > 0;)
        for (uint32_t j = p->sc[i].n; j-- > 0;)
            if (strcmp(p->sc[i].m[j].name, last) == 0)
                return &p->sc[i].m[j];
    return NULL;
}

static int take_slot(parser *p, ctmember *mb)
{
    if (mb->slot < 0)
        mb->slot = p->m->nslots++;
    return mb->slot;
}

static int variant_bind(parser *p, ctype *t)
{
    ctmember *tag = resolve(p, t->ref);
    if (!tag)
        return fail(p, 1, "variant tag '%s' is not a field declared before it in an enclosing struct", t->ref);
    if (tag->t->kind != CT_INT || !tag->t->nen)
        return fail(p, 0, "variant tag '%s' is not an enum", t->ref);
    t->refslot = take_slot(p, tag);
    t->tagt = tag->t;
    t->opt = lp_malloc(tag->t->nen * sizeof *t->opt);
    if (!t->opt)
        return fail(p, 0, "out of memory");
    for (uint32_t i = 0; i < tag->t->nen; i++) {
        t->opt[i] = -1;
        for (uint32_t j = 0; j < t->nm; j++)
            if (strcmp(ctf_name(t->m[j].name), ctf_name(tag->t->en[i].label)) == 0)
                t->opt[i] = (int32_t)j;
    }
    return 0;
}

/* struct / variant: [NAME] [<tag>] [{ ... }] [align(N)] */
static ctype *compound(parser *p, int is_struct)
{
    const char *kw = is_struct ? "struct" : "variant";
    char *name = NULL, *tag = NULL;
    if (p->tk == TK_ID) {
        name = tok_dup(p);
        next(p);
    }
    if (!is_struct && is(p, "<")) {
        next(p);
        char buf[256];
        size_t o = 0;
        while (!p->failed && !is(p, ">") && p->tk != TK_EOF) {
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%.*s", (int)p->tn, p->tp);
            if (o >= sizeof buf - 1)
                break;
            next(p);
        }
        if (expect(p, ">") == 0 && !(tag = lp_malloc(o + 1)))
            fail(p, 0, "out of memory");
        if (tag)
            memcpy(tag, buf, o + 1);
    }
    ctype *t = NULL;
    if (!p->failed && !is(p, "{")) { /* a reference */
        char key[300];
        snprintf(key, sizeof key, "%s %s", kw, name ? name : "");
        t = named_get(p, key);
        if (!t)
            fail(p, 0, "unknown %s '%s'", kw, name ? name : "");
        else if (tag || (!is_struct && t->refslot < 0))
            fail(p, 1, "a variant whose tag is given where it is used");
    } else if (!p->failed && (t = node(p, is_struct ? CT_STRUCT : CT_VARIANT))) {
        t->align = 1;
        t->ref = tag;
        tag = NULL;
        next(p);
        if (members(p, t, is_struct) == 0 && !is_struct) {
            if (!t->ref)
                fail(p, 1, "a variant without a tag");
            else
                variant_bind(p, t);
        }
        if (!p->failed && name)
            named_put(p, kw, name, strlen(name), t);
    }
    lp_free(name);
    lp_free(tag);
    if (!p->failed && t && is(p, "align")) {
        int64_t a;
        next(p);
        if (expect(p, "(") || number(p, &a) || expect(p, ")"))
            return NULL;
        if (a < 1 || (a & (a - 1)) || a > 4096) /* bits, as every CTF alignment */
            return fail(p, 0, "align(%lld)?", (long long)a), NULL;
        if ((uint32_t)a > t->align)
            t->align = (uint32_t)a;
    }
    return p->failed ? NULL : t;
}

/* ---- type specifiers and declarators ------------------------------------------------------ */

static ctype *type_spec_in(parser *p);

static ctype *type_spec(parser *p)
{
    if (p->depth >= 64)
        return fail(p, 1, "types nested too deeply"), NULL;
    p->depth++;
    ctype *t = type_spec_in(p);
    p->depth--;
    return t;
}

static ctype *type_spec_in(parser *p)
{
    if (p->tk != TK_ID)
        return fail(p, 0, "a type expected, found '%.*s'", (int)(p->tn > 40 ? 40 : p->tn), p->tp), NULL;
    if (is(p, "integer")) {
        next(p);
        return integer(p);
    }
    if (is(p, "enum")) {
        next(p);
        return enumeration(p);
    }
    if (is(p, "string")) {
        next(p);
        return string_type(p);
    }
    if (is(p, "struct") || is(p, "variant")) {
        int s = is(p, "struct");
        next(p);
        return compound(p, s);
    }
    if (is(p, "floating_point"))
        return fail(p, 1, "floating_point fields"), NULL;
    /* an alias name, possibly of several words ("unsigned long"): the longest known */
    char name[256];
    size_t o = 0;
    ctype *t = NULL;
    lexst start = p->lx, best = p->lx;
    while (p->tk == TK_ID && o + p->tn + 2 < sizeof name) {
        o += (size_t)snprintf(name + o, sizeof name - o, "%s%.*s", o ? " " : "", (int)p->tn, p->tp);
        ctype *x = named_get(p, name);
        next(p);
        if (x) {
            t = x;
            best = p->lx;
        }
    }
    if (!t) {
        p->lx = start;
        return fail(p, 0, "unknown type '%.*s'", (int)(p->tn > 40 ? 40 : p->tn), p->tp), NULL;
    }
    p->lx = best;
    return t;
}

/* NAME followed by any [N] / [ref] dimensions (outermost first). */
static int declarator(parser *p, ctype *base, ctmember *out)
{
    if (p->tk != TK_ID)
        return fail(p, 0, "a field name expected, found '%.*s'", (int)(p->tn > 40 ? 40 : p->tn), p->tp);
    out->name = tok_dup(p);
    if (!out->name)
        return -1;
    next(p);
    ctype *dims[8];
    int nd = 0;
    while (is(p, "[")) {
        next(p);
        if (nd == 8)
            return fail(p, 1, "more than 8 array dimensions");
        ctype *a;
        if (p->tk == TK_NUM) {
            if (!(a = node(p, CT_ARRAY)))
                return -1;
            a->len = p->num;
            next(p);
        } else {
            char buf[256];
            size_t o = 0;
            while (!p->failed && !is(p, "]") && p->tk != TK_EOF && o < sizeof buf - 1) {
                o += (size_t)snprintf(buf + o, sizeof buf - o, "%.*s", (int)p->tn, p->tp);
                next(p);
            }
            if (o >= sizeof buf - 1 || !(a = node(p, CT_SEQ)))
                return fail(p, 0, "sequence length too long");
            ctmember *len = resolve(p, buf);
            if (!len)
                return fail(p, 1, "sequence length '%s' is not a field declared before it in an enclosing struct", buf);
            if (len->t->kind != CT_INT)
                return fail(p, 0, "sequence length '%s' is not an integer", buf);
            a->refslot = take_slot(p, len);
        }
        if (expect(p, "]"))
            return -1;
        dims[nd++] = a;
    }
    ctype *t = base;
    while (nd-- > 0) { /* x[a][b]: an array a of arrays b */
        dims[nd]->elem = t;
        dims[nd]->align = t->align;
        dims[nd]->text = t->kind == CT_INT && t->text && t->size == 8;
        t = dims[nd];
    }
    out->t = t;
    return 0;
}

/* ---- blocks --------------------------------------------------------------------------------- */

/* key [. key...] = value; or key := type; inside a block: calls `f` with the key. */
typedef int (*attr_fn)(parser *p, const char *key, int is_type, void *ud);

static int block(parser *p, attr_fn f, void *ud)
{
    if (expect(p, "{"))
        return -1;
    while (!p->failed && !is(p, "}")) {
        char key[64];
        size_t o = 0;
        while (!p->failed && (p->tk == TK_ID || is(p, ".")) && o + p->tn + 1 < sizeof key) {
            o += (size_t)snprintf(key + o, sizeof key - o, "%.*s", (int)p->tn, p->tp);
            next(p);
        }
        if (!o)
            return fail(p, 0, "an attribute expected, found '%.*s'", (int)(p->tn > 40 ? 40 : p->tn), p->tp);
        int is_type = is(p, ":=");
        if (!is_type && !is(p, "="))
            return fail(p, 0, "'=' or ':=' expected after '%s'", key);
        next(p);
        if (f(p, key, is_type, ud))
            return -1;
        if (expect(p, ";"))
            return -1;
    }
    if (expect(p, "}"))
        return -1;
    return expect(p, ";");
}

static int skip_value(parser *p)
{
    while (!p->failed && !is(p, ";") && !is(p, "}") && p->tk != TK_EOF)
        next(p);
    return p->failed ? -1 : 0;
}

static int struct_value(parser *p, ctype **out, const char *what)
{
    ctype *t = type_spec(p);
    if (!t)
        return -1;
    if (t->kind != CT_STRUCT)
        return fail(p, 1, "%s is not a struct", what);
    *out = t;
    return 0;
}

static int trace_attr(parser *p, const char *key, int is_type, void *ud)
{
    (void)ud;
    if (is_type && !strcmp(key, "packet.header"))
        return struct_value(p, &p->m->phdr, key);
    if (is_type)
        return fail(p, 1, "trace %s := ...", key);
    if (!strcmp(key, "byte_order")) {
        if (is(p, "le"))
            p->m->bo = CT_LE;
        else if (is(p, "be") || is(p, "network"))
            p->m->bo = CT_BE;
        else
            return fail(p, 0, "trace byte_order = '%.*s'?", (int)p->tn, p->tp);
        next(p);
        return 0;
    }
    return skip_value(p); /* major, minor, uuid */
}

static int env_attr(parser *p, const char *key, int is_type, void *ud)
{
    (void)ud;
    if (is_type)
        return fail(p, 0, "env %s := ...", key);
    if (!strcmp(key, "hostname") && p->tk == TK_STR && !p->m->hostname) {
        p->m->hostname = tok_dup(p);
        next(p);
        return p->failed ? -1 : 0;
    }
    return skip_value(p);
}

static int clock_attr(parser *p, const char *key, int is_type, void *ud)
{
    ctclock *c = ud;
    if (is_type)
        return fail(p, 0, "clock %s := ...", key);
    if (!strcmp(key, "name")) {
        if (p->tk != TK_STR && p->tk != TK_ID)
            return fail(p, 0, "clock name?");
        lp_free(c->name);
        c->name = tok_dup(p);
        next(p);
        return p->failed ? -1 : 0;
    }
    int64_t v;
    if (!strcmp(key, "freq") || !strcmp(key, "offset_s") || !strcmp(key, "offset")) {
        if (number(p, &v))
            return -1;
        if (key[0] == 'f') {
            if (v <= 0)
                return fail(p, 0, "clock freq = %lld", (long long)v);
            c->freq = (uint64_t)v;
        } else if (!strcmp(key, "offset_s"))
            c->offset_s = v;
        else
            c->offset = v;
        return 0;
    }
    if (!strcmp(key, "absolute") || !strcmp(key, "precision") || !strcmp(key, "uuid") || !strcmp(key, "description"))
        return skip_value(p);
    return fail(p, 1, "clock attribute '%s'", key);
}

static int stream_attr(parser *p, const char *key, int is_type, void *ud)
{
    ctstream *s = ud;
    if (is_type) {
        if (!strcmp(key, "packet.context"))
            return struct_value(p, &s->pctx, key);
        if (!strcmp(key, "event.header"))
            return struct_value(p, &s->ehdr, key);
        if (!strcmp(key, "event.context"))
            return struct_value(p, &s->ectx, key);
        return fail(p, 1, "stream %s := ...", key);
    }
    if (!strcmp(key, "id")) {
        int64_t v;
        if (number(p, &v))
            return -1;
        s->id = (uint64_t)v;
        return 0;
    }
    return fail(p, 1, "stream attribute '%s'", key);
}

static int event_attr(parser *p, const char *key, int is_type, void *ud)
{
    ctevent *e = ud;
    if (is_type) {
        if (!strcmp(key, "fields"))
            return struct_value(p, &e->fields, key);
        if (!strcmp(key, "context"))
            return struct_value(p, &e->context, key);
        return fail(p, 1, "event %s := ...", key);
    }
    int64_t v;
    if (!strcmp(key, "name")) {
        if (p->tk != TK_STR && p->tk != TK_ID)
            return fail(p, 0, "event name?");
        lp_free(e->name);
        e->name = tok_dup(p);
        next(p);
        return p->failed ? -1 : 0;
    }
    if (!strcmp(key, "id") || !strcmp(key, "stream_id")) {
        if (number(p, &v))
            return -1;
        if (key[0] == 'i')
            e->id = (uint64_t)v;
        else
            e->stream_id = (uint64_t)v;
        return 0;
    }
    if (!strcmp(key, "loglevel") || !strcmp(key, "model.emf.uri"))
        return skip_value(p);
    return fail(p, 1, "event attribute '%s'", key);
}

/* typealias TYPE := NAME...; / typedef TYPE NAME; */
static int alias(parser *p, int is_typedef)
{
    ctype *t = type_spec(p);
    if (!t)
        return -1;
    if (!is_typedef && expect(p, ":="))
        return -1;
    char name[256];
    size_t o = 0;
    while (p->tk == TK_ID && o + p->tn + 2 < sizeof name) {
        o += (size_t)snprintf(name + o, sizeof name - o, "%s%.*s", o ? " " : "", (int)p->tn, p->tp);
        next(p);
    }
    if (!o)
        return fail(p, 0, "a type name expected");
    if (is(p, "["))
        return fail(p, 1, "an alias of an array type");
    if (named_put(p, NULL, name, o, t))
        return -1;
    return expect(p, ";");
}

static int top(parser *p)
{
    ctfmeta *m = p->m;
    if (is(p, "typealias") || is(p, "typedef")) {
        int td = is(p, "typedef");
        next(p);
        return alias(p, td);
    }
    if (is(p, "trace")) {
        next(p);
        return block(p, trace_attr, NULL);
    }
    if (is(p, "env")) {
        next(p);
        return block(p, env_attr, NULL);
    }
    if (is(p, "clock")) {
        next(p);
        if (lp_grow_at(&m->clk, &m->capclk, m->nclk + 1, sizeof *m->clk))
            return fail(p, 0, "out of memory");
        ctclock *c = &m->clk[m->nclk++];
        *c = (ctclock){.freq = 1000000000};
        if (block(p, clock_attr, c))
            return -1;
        if (!c->name)
            return fail(p, 0, "a clock without a name");
        return 0;
    }
    if (is(p, "stream")) {
        next(p);
        if (lp_grow_at(&m->st, &m->capst, m->nst + 1, sizeof *m->st))
            return fail(p, 0, "out of memory");
        ctstream *s = &m->st[m->nst++];
        memset(s, 0, sizeof *s);
        return block(p, stream_attr, s);
    }
    if (is(p, "event")) {
        next(p);
        if (lp_grow_at(&m->ev, &m->capev, m->nev + 1, sizeof *m->ev))
            return fail(p, 0, "out of memory");
        ctevent *e = &m->ev[m->nev++];
        memset(e, 0, sizeof *e);
        e->line = p->line;
        if (block(p, event_attr, e))
            return -1;
        if (!e->name)
            return fail(p, 0, "an event without a name");
        return 0;
    }
    if (is(p, "callsite")) { /* LTTng-UST: source locations, not needed */
        next(p);
        return block(p, env_attr, NULL) ? -1 : 0;
    }
    if (is(p, "struct") || is(p, "variant") || is(p, "enum")) {
        if (!type_spec(p))
            return -1;
        return expect(p, ";");
    }
    return fail(p, p->tk == TK_ID, "'%.*s' at the top level", (int)(p->tn > 40 ? 40 : p->tn), p->tp);
}

/* ---- entry points ----------------------------------------------------------------------------- */

const char *ctf_name(const char *s) { return s[0] == '_' ? s + 1 : s; }

static void fix_order(ctfmeta *m)
{
    for (ctype *t = m->all; t; t = t->next)
        if (t->bo == CT_NATIVE)
            t->bo = m->bo;
}

int ctf_meta_parse(ctfmeta *m, const char *text, size_t n, char *msg, size_t msgn, uint64_t *line, int *unsupported)
{
    memset(m, 0, sizeof *m);
    parser p = {.m = m, .s = text, .end = text + n, .line = 1, .msg = msg, .msgn = msgn};
    msg[0] = '\0';
    next(&p);
    while (!p.failed && p.tk != TK_EOF)
        top(&p);
    if (!p.failed && m->nst == 0 && m->nev > 0) { /* no stream block: one implicit stream 0 */
        if (!(m->st = lp_calloc(1, sizeof *m->st)))
            fail(&p, 0, "out of memory");
        else
            m->nst = 1;
    }
    if (!p.failed && m->nev == 0)
        fail(&p, 0, "no event declared");
    *line = p.line;
    *unsupported = p.unsupported;
    fix_order(m);
    return p.failed ? -1 : 0;
}

void ctf_meta_release(ctfmeta *m)
{
    for (ctype *t = m->all, *nx; t; t = nx) {
        nx = t->next;
        for (uint32_t i = 0; i < t->nm; i++)
            lp_free(t->m[i].name);
        for (uint32_t i = 0; i < t->nen; i++)
            lp_free(t->en[i].label);
        lp_free(t->m);
        lp_free(t->en);
        lp_free(t->ref);
        lp_free(t->opt);
        lp_free(t);
    }
    for (size_t i = 0; i < m->nnamed; i++)
        lp_free(m->named[i].name);
    for (uint32_t i = 0; i < m->nev; i++)
        lp_free(m->ev[i].name);
    for (uint32_t i = 0; i < m->nclk; i++)
        lp_free(m->clk[i].name);
    lp_free(m->named);
    lp_free(m->ev);
    lp_free(m->st);
    lp_free(m->clk);
    lp_free(m->hostname);
    memset(m, 0, sizeof *m);
}

int ctf_meta_is_packetized(const unsigned char *d, size_t n)
{
    return n >= 4 && ((d[0] == 0x57 && d[1] == 0x1d && d[2] == 0xd1 && d[3] == 0x75) ||
                      (d[0] == 0x75 && d[1] == 0xd1 && d[2] == 0x1d && d[3] == 0x57));
}

/* Metadata packet header (CTF 1.8 7.1): magic u32, uuid[16], checksum u32, content_size
 * u32 (bits), packet_size u32 (bits), compression, encryption, checksum scheme, major,
 * minor (u8 each): 37 bytes, in the byte order its magic shows. */
int ctf_meta_text(const unsigned char *d, size_t n, char **text, size_t *tlen, char *msg, size_t msgn, uint64_t *off)
{
    char *t = lp_malloc(n + 1);
    size_t o = 0;
    *off = 0;
    if (!t) {
        snprintf(msg, msgn, "out of memory");
        return -1;
    }
    if (!ctf_meta_is_packetized(d, n)) {
        memcpy(t, d, n);
        o = n;
    } else
        for (size_t pos = 0; pos < n;) {
            const unsigned char *h = d + pos;
            int be = h[0] == 0x75;
            uint32_t csz = 0, psz = 0;
            if (n - pos < 37 || !ctf_meta_is_packetized(h, n - pos)) {
                snprintf(msg, msgn, n - pos < 37 ? "a metadata packet cut short" : "a metadata packet without its magic");
                *off = pos;
                lp_free(t);
                return -1;
            }
            for (int i = 0; i < 4; i++) {
                csz |= (uint32_t)h[24 + (be ? 3 - i : i)] << (8 * i);
                psz |= (uint32_t)h[28 + (be ? 3 - i : i)] << (8 * i);
            }
            if (h[32] || h[33] || h[34]) {
                snprintf(msg, msgn, "compressed, encrypted or checksummed metadata packets are not supported");
                *off = pos;
                lp_free(t);
                return -1;
            }
            if (csz % 8 || psz % 8 || csz < 37 * 8 || csz > psz || psz / 8 > n - pos) {
                snprintf(msg, msgn, "metadata packet sizes (content %u, packet %u bits) do not fit the file", csz, psz);
                *off = pos;
                lp_free(t);
                return -1;
            }
            memcpy(t + o, h + 37, csz / 8 - 37);
            o += csz / 8 - 37;
            pos += psz / 8;
        }
    t[o] = '\0';
    *text = t;
    *tlen = o;
    return 0;
}
